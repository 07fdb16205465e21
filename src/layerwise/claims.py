"""Claims ledger and scorecard (SPEC §1 "Claims ledger and scorecard").

A claim is a quantitative statement a chapter makes, in code: what was measured, what it is
compared with (a paper's value, a closed form, a bound), how, with which tolerance and why that
tolerance is honest at the scale the chapter ran at.  A claim whose ``min_scale`` is larger than
the run's scale is recorded as *skipped* (visibly), never silently dropped.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from .params import ParameterError, check_choice, check_scale, scale_rank

#: How ``measured`` is compared with ``reference`` and ``tolerance``.
COMPARISONS: dict[str, str] = {
    "abs": "|measured − reference| ≤ tol",
    "rel": "|measured − reference| ≤ tol·|reference|",
    "le": "measured ≤ reference + tol",
    "ge": "measured ≥ reference − tol",
    "between": "reference[0] ≤ measured ≤ reference[1]",
    "true": "measured is true",
}


def _num(x: Any) -> Any:
    """Plain-Python form of a measured/reference value for JSON."""
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, (list, tuple)):
        return [_num(v) for v in x]
    try:
        import numpy as np

        if isinstance(x, np.bool_):
            return bool(x)
        return float(x)
    except (TypeError, ValueError):
        return str(x)


@dataclass
class Claim:
    """One entry of the ledger; field names follow the results JSON schema."""

    id: str
    statement: str
    measured: Any
    reference: Any
    tolerance: float | None
    comparison: str
    justification: str
    source: str
    min_scale: str
    scale: str
    passed: bool | None = field(default=None)

    def __post_init__(self) -> None:
        check_choice("comparison", self.comparison, COMPARISONS)
        check_scale(self.min_scale)
        if self.comparison in ("abs", "rel") and (self.tolerance is None or self.tolerance < 0):
            raise ParameterError(f"claim {self.id}: comparison={self.comparison!r} needs tolerance >= 0")
        if self.comparison == "between" and (
            not isinstance(self.reference, (list, tuple)) or len(self.reference) != 2
        ):
            raise ParameterError(f"claim {self.id}: comparison='between' needs reference=(lo, hi)")
        if not self.justification.strip():
            raise ParameterError(f"claim {self.id}: every tolerance needs a justification")
        self.measured, self.reference = _num(self.measured), _num(self.reference)
        self.tolerance = None if self.tolerance is None else float(self.tolerance)
        self.passed = None if self.skipped else bool(self.evaluate())

    @property
    def skipped(self) -> bool:
        return scale_rank(self.scale) < scale_rank(self.min_scale)

    @property
    def status(self) -> str:
        return "skipped" if self.skipped else ("pass" if self.passed else "fail")

    def evaluate(self) -> bool:
        m, r, tol = self.measured, self.reference, self.tolerance or 0.0
        if self.comparison == "true":
            return bool(m)
        if m is None or (isinstance(m, float) and math.isnan(m)):
            return False
        if self.comparison == "abs":
            return abs(m - r) <= tol
        if self.comparison == "rel":
            return abs(m - r) <= tol * abs(r)
        if self.comparison == "le":
            return m <= r + tol
        if self.comparison == "ge":
            return m >= r - tol
        lo, hi = r
        return lo <= m <= hi

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("scale")
        d["status"] = self.status
        d["rule"] = COMPARISONS[self.comparison]
        return d


class Ledger:
    """The claims of one chapter run at one scale."""

    def __init__(self, scale: str):
        self.scale = check_scale(scale)
        self.claims: list[Claim] = []

    def claim(
        self,
        id: str,
        statement: str,
        *,
        measured: Any,
        reference: Any = None,
        tol: float | None = None,
        comparison: str = "abs",
        why: str,
        source: str,
        min_scale: str = "ci",
    ) -> Claim:
        """Record and grade one claim; ``why`` justifies the tolerance at this scale."""
        if any(c.id == id for c in self.claims):
            raise ParameterError(f"claim id {id!r} is used twice")
        c = Claim(id, statement, measured, reference, tol, comparison, why, source, min_scale, self.scale)
        self.claims.append(c)
        return c

    @property
    def failed(self) -> list[Claim]:
        return [c for c in self.claims if c.status == "fail"]

    def counts(self) -> dict[str, int]:
        out = {"pass": 0, "fail": 0, "skipped": 0}
        for c in self.claims:
            out[c.status] += 1
        return out

    def to_frame(self):
        """The scorecard as a pandas DataFrame."""
        import pandas as pd

        rows = []
        for c in self.claims:
            rows.append(
                {
                    "claim": c.id,
                    "statement": c.statement,
                    "measured": fmt(c.measured),
                    "reference": fmt(c.reference),
                    "test": COMPARISONS[c.comparison].replace("tol", fmt(c.tolerance)),
                    "why this tolerance": c.justification,
                    "source": c.source,
                    "checked from": c.min_scale,
                    "result": {"pass": "✓ pass", "fail": "✗ FAIL", "skipped": "– skipped"}[c.status],
                }
            )
        return pd.DataFrame(rows)

    def to_html(self) -> str:
        """A self-contained HTML scorecard: result, claim (with why its tolerance is honest),
        measured, reference and test, source."""
        import html

        n = self.counts()
        label = {"pass": "✓ pass", "fail": "✗ FAIL", "skipped": "– skipped"}
        rows = []
        for c in self.claims:
            skipped = f"<br><small>checked from scale <code>{c.min_scale}</code></small>" if c.skipped else ""
            test = COMPARISONS[c.comparison].replace("tol", fmt(c.tolerance))
            rows.append(
                f'<tr class="lw-{c.status}"><td>{label[c.status]}{skipped}</td>'
                f"<td><code>{html.escape(c.id)}</code><br>{html.escape(c.statement)}"
                f'<br><small class="lw-why">Tolerance: {html.escape(c.justification)}</small></td>'
                f"<td>{html.escape(fmt(c.measured))}</td>"
                f"<td>{html.escape(fmt(c.reference))}<br><small>{html.escape(test)}</small></td>"
                f"<td><small>{html.escape(c.source)}</small></td></tr>"
            )
        head = "".join(f"<th>{h}</th>" for h in ("result", "claim", "measured", "reference / test", "source"))
        return (
            f'<p class="lw-score"><b>{n["pass"]} passed, {n["fail"]} failed, {n["skipped"]} skipped</b>'
            f" at scale <code>{self.scale}</code>.</p>"
            f'<table class="lw-scorecard"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
        )


def fmt(x: Any) -> str:
    """Short human form of a number, pair or flag."""
    if x is None:
        return "—"
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(fmt(v) for v in x) + "]"
    if isinstance(x, str):
        return x
    x = float(x)
    if x == 0 or 1e-3 <= abs(x) < 1e5:
        return f"{x:.4g}"
    return f"{x:.3e}"
