"""Claims ledger and scorecard (SPEC §1 "Claims ledger and scorecard").

A claim is a quantitative statement a chapter makes, in code: what was measured (with its
uncertainty, when it has one), what it is compared with (a paper's value, a prediction, a bound),
by which rule, with which margin and why that margin is honest at the scale the chapter ran at.

**Kinds.** ``reproduces``: a number, curve, panel or statement of a paper or of its authors'
published data (the source names the figure, equation, table or array); ``predicts``: a
theoretical prediction — the paper's or one derived in the chapter — against our measurement;
``checks``: an identity, conservation law or consistency of two computations of ours, kept in the
book only when a reader learns from it (round-off identities are unit tests, not claims).

**Outcomes.** The rule (``comparison`` with ``reference`` and the margin ``tol``) defines an
accepted set A of values, an interval.  A measurement with a standard error ``se`` (and ``dof``
degrees of freedom, when the error is estimated from few samples) or with an explicit
``interval`` (e.g. a bootstrap's) is the confidence interval I at level ``confidence``; a
measurement without uncertainty is the point I = [m, m].  The claim

* **passes** when I ⊆ A (the whole interval satisfies the rule),
* **fails** when I ∩ A = ∅ (the whole interval violates it),
* is **inconclusive** otherwise — never counted as a pass,
* is **skipped** when the run's scale is below the claim's ``min_scale`` (shown, never dropped).

**Alternatives.** A ``reproduces`` or ``predicts`` claim names the credible alternative its
measurement must rule out — the idealisation, the naive prediction, another paper's law, the other
architecture or data set — as ``alternative=(value, "what it is")``, computed for the same set-up
(SPEC §1 "Alternatives").  The claim *discriminates* when the alternative value lies outside the
interior of the accepted set A, so that a pass (I ⊆ A) excludes it; a
directional claim's alternative is "no effect" at its boundary.  A passing claim that does not
discriminate — no alternative named, or one inside A — is shown as such and not counted as a
reproduction or a confirmed prediction.  For a ``comparison="true"`` claim the alternative is the
outcome the measurement could have shown instead (its value may be None).

The margin ``tol`` is part of the rule (what "agrees", "nearly" or "≈" means), never a noise
allowance: the noise enters through ``se``/``interval``.  An agreement claim with ``tol = 0`` can
therefore only fail or stay inconclusive: it needs a declared margin to be able to pass.
"""

from __future__ import annotations

import html
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from .params import ParameterError, check_choice, check_scale, scale_rank

#: How ``measured`` is compared with ``reference`` and the margin ``tol`` (the accepted set A).
COMPARISONS: dict[str, str] = {
    "abs": "|x − ref| ≤ tol",
    "rel": "|x − ref| ≤ tol·|ref|",
    "le": "x ≤ ref + tol",
    "ge": "x ≥ ref − tol",
    "between": "lo ≤ x ≤ hi",
    "true": "x is true",
}

#: Claim kinds, in the order scorecards list them.
KINDS: dict[str, str] = {
    "reproduces": "a number, curve, panel or statement of a paper or of its authors' published "
    "data",
    "predicts": "a theoretical prediction (the paper's or derived in the chapter) against a "
    "measurement",
    "checks": "an identity, conservation law or consistency between two computations of ours",
}

#: Outcomes, in the order tallies list them.
OUTCOMES: tuple[str, ...] = ("pass", "fail", "inconclusive", "skipped")

#: The three controls a disagreement must survive before it is a finding (SPEC §1 "Findings and
#: their controls"), in the order scorecards list them.
CONTROL_KINDS: dict[str, str] = {
    "reference": "the claim's own rule applied to the authors' data or the paper's stated numbers",
    "estimator": "the estimator recovers a known answer from synthetic data under the same design",
    "conditions": "our conditions (input, width, batch, depth, training) beside the paper's",
}


class Control(NamedTuple):
    """The outcome of one control of a claim: ``kind`` one of :data:`CONTROL_KINDS`, ``passed``
    computed by the chapter's code (never typed), ``note`` what was done and what came out.

    * ``reference`` passes when the authors' own data (or the paper's stated number) satisfy the
      claim's rule — a shape the authors' arrays fail is a misreading of the paper, not a finding;
    * ``estimator`` passes when the estimator behind the claim recovers a known answer from
      synthetic data under the same design (grid and its ceiling, fit window, replicates);
    * ``conditions`` passes when our conditions match the paper's in every respect the chapter
      measured to matter — otherwise the claim is the paper's result carried to our conditions."""

    kind: str
    passed: bool
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "passed": bool(self.passed), "note": self.note}


def _controls(claim_id: str, controls: Iterable[Any] | None) -> tuple[Control, ...]:
    """Validated :class:`Control` entries from Controls, ``{kind, passed, note}`` dicts or
    ``(kind, passed, note)`` tuples; each kind at most once."""
    out: list[Control] = []
    for c in controls or ():
        if isinstance(c, Mapping):
            c = Control(c.get("kind"), c.get("passed"), c.get("note", ""))
        elif not isinstance(c, Control):
            c = Control(*c)
        if c.kind not in CONTROL_KINDS:
            raise ParameterError(
                f"claim {claim_id}: control kind={c.kind!r} is not allowed; choose one of: "
                + ", ".join(map(repr, CONTROL_KINDS))
            )
        if not isinstance(c.passed, (bool, np.bool_)):
            raise ParameterError(
                f"claim {claim_id}: control {c.kind!r} needs passed=True or False (computed), "
                f"got {c.passed!r}"
            )
        if any(o.kind == c.kind for o in out):
            raise ParameterError(f"claim {claim_id}: control {c.kind!r} is given twice")
        out.append(Control(c.kind, bool(c.passed), str(c.note or "").strip()))
    return tuple(sorted(out, key=lambda c: list(CONTROL_KINDS).index(c.kind)))


def _conditions(claim_id: str, conditions: Mapping[str, Any] | None) -> dict[str, list[Any]]:
    """``{name: [ours, paper's]}`` from ``{name: (ours, paper's)}``, values as JSON plain types."""
    out: dict[str, list[Any]] = {}
    for name, pair in (conditions or {}).items():
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2):
            raise ParameterError(
                f"claim {claim_id}: conditions[{name!r}] must be (ours, paper's), got {pair!r}"
            )
        out[str(name)] = [v if isinstance(v, str) else _num(v) for v in pair]
    return out


def is_finding(c: Mapping[str, Any]) -> bool:
    """A claim record is a *finding* when it fails and all three controls passed."""
    if c.get("status") != "fail":
        return False
    passed = {x.get("kind"): x.get("passed") for x in c.get("controls") or ()}
    return all(passed.get(k) is True for k in CONTROL_KINDS)


def unconfirmed_reason(c: Mapping[str, Any]) -> str:
    """Why a failing claim record is not a finding: the controls missing or failed, in words
    ('' for a finding or a claim that does not fail)."""
    if c.get("status") != "fail" or is_finding(c):
        return ""
    passed = {x.get("kind"): x.get("passed") for x in c.get("controls") or ()}
    failed = [k for k in CONTROL_KINDS if passed.get(k) is False]
    missing = [k for k in CONTROL_KINDS if k not in passed]
    parts = []
    if failed:
        parts.append(f"the {join_and(failed)} control{'s' if len(failed) > 1 else ''} failed")
    if missing:
        parts.append(f"no {join_and(missing, 'or')} control")
    return "; ".join(parts)


def not_a_finding_means(c: Mapping[str, Any]) -> str:
    """What a failing claim that is not a finding stands for: the paper's result carried to
    conditions measured to differ (its conditions control failed), or a suspected artefact of our
    own set-up until its controls pass."""
    passed = {x.get("kind"): x.get("passed") for x in c.get("controls") or ()}
    if passed.get("conditions") is False:
        return ("the paper's result carried to our conditions, which the run measured to matter, "
                "not a failed reproduction")
    return "a suspected artefact of our own set-up until its controls pass"


def join_and(words: Iterable[str], last: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    words = list(words)
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} {last} {words[-1]}"


#: Confidence level of the intervals when a claim does not state its own.
DEFAULT_CONFIDENCE = 0.99

LABELS = {
    "pass": "✓ pass",
    "fail": "✗ fail",
    "inconclusive": "? inconclusive",
    "skipped": "○ skipped",
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


def quantile(confidence: float, dof: float | None = None) -> float:
    """Two-sided critical value of a claim's ``confidence`` interval
    (:func:`layerwise.stats.t_quantile`: normal, or Student's t with ``dof`` degrees of freedom)."""
    from .stats import t_quantile

    return t_quantile(confidence, dof)


def replicates_to_decide(
    mean: float,
    se: float | None,
    n: int | None,
    edges: Iterable[float],
    confidence: float = 0.99,
    *,
    start: int | None = None,
) -> int | None:
    """The smallest number of replicates k ≥ ``start`` (default ``n``, at least 2) at which a mean
    over ``n`` replicates with the same value and spread (se·√n) would put its whole t interval
    (``confidence``, k − 1 d.o.f.) on one side of the nearest finite of ``edges``: the smallest k
    with t·sd/√k < |mean − edge| (t·sd/√k falls with k, so a bisection finds it). None without a
    standard error, with the mean on an edge, or beyond 10⁹ replicates."""
    near = [abs(mean - float(e)) for e in edges if math.isfinite(float(e))]
    if se is None or n is None or not se > 0 or not near or not min(near) > 0:
        return None
    sd, gap = se * math.sqrt(n), min(near)

    def decides(k: int) -> bool:
        return quantile(confidence, k - 1) * sd / math.sqrt(k) < gap

    lo = max(int(n if start is None else start), 2)
    if decides(lo):
        return lo
    hi = lo + 1  # decides(lo) is false
    while not decides(hi):
        lo, hi = hi, hi * 2
        if hi > 10**9:
            return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if decides(mid) else (mid, hi)
    return hi


def accepted_set(comparison: str, reference: Any, tol: float | None) -> tuple[float, float]:
    """The interval A of values that satisfy the rule (``-inf``/``inf`` for one-sided rules)."""
    t = tol or 0.0
    if comparison == "abs":
        return reference - t, reference + t
    if comparison == "rel":
        return reference - t * abs(reference), reference + t * abs(reference)
    if comparison == "le":
        return -math.inf, reference + t
    if comparison == "ge":
        return reference - t, math.inf
    if comparison == "between":
        return float(reference[0]), float(reference[1])
    raise ParameterError(f"comparison={comparison!r} has no accepted interval")


def grade(interval: tuple[float, float], accepted: tuple[float, float]) -> str:
    """``pass`` if ``interval`` ⊆ ``accepted``, ``fail`` if they are disjoint,
    else ``inconclusive``."""
    lo, hi = interval
    a, b = accepted
    if any(isinstance(v, float) and math.isnan(v) for v in (lo, hi)):
        return "fail"
    if a <= lo and hi <= b:
        return "pass"
    if hi < a or lo > b:
        return "fail"
    return "inconclusive"


def outcome(
    measured: float,
    comparison: str,
    reference: Any,
    tol: float | None = 0.0,
    *,
    se: float | None = None,
    dof: float | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
) -> str:
    """The outcome the ledger gives a claim with these
    numbers — ``pass``, ``fail`` or ``inconclusive`` (its t interval measured ± t·se against
    the rule's accepted set; a point without ``se``), for a chapter that words its prose or
    a claim's note before recording the claim."""
    half = 0.0 if se is None else quantile(confidence, dof) * se
    return grade((measured - half, measured + half), accepted_set(comparison, reference, tol))


@dataclass
class Claim:
    """One entry of the ledger; field names follow the results JSON schema."""

    id: str
    statement: str
    kind: str
    measured: Any
    reference: Any
    tolerance: float | None
    comparison: str
    justification: str
    source: str
    min_scale: str
    scale: str
    se: float | None = None
    dof: float | None = None
    interval: tuple[float, float] | None = None
    confidence: float = DEFAULT_CONFIDENCE
    note: str = ""
    alternative: tuple[Any, str] | None = None
    reference_se: float | None = None
    case: str = ""
    controls: tuple[Control, ...] = ()
    conditions: dict[str, list[Any]] = field(default_factory=dict)
    status: str = field(default="", init=False)

    def __post_init__(self) -> None:
        check_choice("kind", self.kind, KINDS)
        check_choice("comparison", self.comparison, COMPARISONS)
        check_scale(self.min_scale)
        if self.comparison in ("abs", "rel") and self.tolerance is None:
            raise ParameterError(
                f"claim {self.id}: comparison={self.comparison!r} needs a margin "
                "tol >= 0 (0 allowed)"
            )
        if self.tolerance is not None and not self.tolerance >= 0:
            raise ParameterError(
                f"claim {self.id}: tol={self.tolerance!r} must be >= 0; the margin is part of the "
                "rule — "
                "put the measurement's uncertainty in se= or interval="
            )
        if self.comparison == "between" and (
            not isinstance(self.reference, (list, tuple))
            or len(self.reference) != 2
            or self.reference[0] > self.reference[1]
        ):
            raise ParameterError(
                f"claim {self.id}: comparison='between' needs reference=(lo, hi) with lo <= hi"
            )
        if self.comparison not in ("between", "true") and not isinstance(
            _num(self.reference), float
        ):
            raise ParameterError(
                f"claim {self.id}: comparison={self.comparison!r} needs a numeric reference"
            )
        if not self.justification.strip():
            raise ParameterError(
                f"claim {self.id}: every claim needs a justification of its rule and margin (why=)"
            )
        if not self.source.strip():
            raise ParameterError(
                f"claim {self.id}: every claim needs a source (paper and "
                "figure/equation/table, or 'ours: …')"
            )
        if self.se is not None and self.interval is not None:
            raise ParameterError(
                f"claim {self.id}: give the uncertainty as se= or as interval=, not both"
            )
        if self.comparison == "true" and (self.se is not None or self.interval is not None):
            raise ParameterError(f"claim {self.id}: comparison='true' takes no uncertainty")
        if self.se is not None and not float(self.se) >= 0:
            raise ParameterError(f"claim {self.id}: se={self.se!r} must be a non-negative number")
        if self.dof is not None and self.se is None:
            raise ParameterError(f"claim {self.id}: dof= qualifies a standard error; give se= too")
        if self.reference_se is not None and (
            self.se is None or not 0 <= float(self.reference_se) <= float(self.se)
        ):
            raise ParameterError(
                f"claim {self.id}: reference_se={self.reference_se!r} is the published part of "
                "se= and must lie between 0 and se"
            )
        self.confidence = float(self.confidence)
        quantile(self.confidence, self.dof)  # validates confidence and dof
        self.measured, self.reference = _num(self.measured), _num(self.reference)
        self.tolerance = None if self.tolerance is None else float(self.tolerance)
        self.se = None if self.se is None else float(self.se)
        self.dof = None if self.dof is None else float(self.dof)
        if self.interval is not None:
            lo, hi = (float(v) for v in self.interval)
            if not lo <= hi:
                raise ParameterError(
                    f"claim {self.id}: interval={self.interval!r} must be (lo, hi) with lo <= hi"
                )
            self.interval = (lo, hi)
        elif self.se is not None and isinstance(self.measured, float):
            q = quantile(self.confidence, self.dof)
            self.interval = (self.measured - q * self.se, self.measured + q * self.se)
        if self.alternative is not None:
            if not (
                isinstance(self.alternative, (list, tuple))
                and len(self.alternative) == 2
                and isinstance(self.alternative[1], str)
                and self.alternative[1].strip()
            ):
                raise ParameterError(
                    f"claim {self.id}: alternative= must be (value, 'what the "
                    "value is'), "
                    f"got {self.alternative!r}"
                )
            value = _num(self.alternative[0])
            if self.comparison != "true" and not isinstance(value, float):
                raise ParameterError(
                    f"claim {self.id}: alternative value {self.alternative[0]!r} "
                    "must be a number "
                    f"for comparison={self.comparison!r}"
                )
            self.alternative = (value, self.alternative[1].strip())
        self.controls = _controls(self.id, self.controls)
        self.conditions = _conditions(self.id, self.conditions)
        self.status = "skipped" if self.skipped else self.evaluate()

    @property
    def discriminates(self) -> bool | None:
        """Whether a pass rules out the named alternative: its value lies outside the interior
        of the accepted set (None for ``checks``, which need none; False without an alternative)."""
        if self.kind == "checks":
            return None
        if self.alternative is None:
            return False
        if self.comparison == "true":
            return True
        v = self.alternative[0]
        if isinstance(v, float) and math.isnan(v):
            return False
        a, b = accepted_set(self.comparison, self.reference, self.tolerance)
        return not (a < v < b)

    @property
    def skipped(self) -> bool:
        return scale_rank(self.scale) < scale_rank(self.min_scale)

    @property
    def passed(self) -> bool | None:
        """True on pass, False on fail or inconclusive, None when skipped."""
        return None if self.status == "skipped" else self.status == "pass"

    def evaluate(self) -> str:
        """The outcome: ``pass``, ``fail`` or ``inconclusive`` (see the module docstring)."""
        m = self.measured
        if self.comparison == "true":
            return "pass" if bool(m) else "fail"
        if isinstance(m, float) and math.isnan(m) and self.interval == (-math.inf, math.inf):
            # declared not identified at this scale: an unbounded interval, no value
            return "inconclusive"
        if m is None or isinstance(m, str) or (isinstance(m, float) and math.isnan(m)):
            return "fail"
        interval = self.interval if self.interval is not None else (m, m)
        return grade(interval, accepted_set(self.comparison, self.reference, self.tolerance))

    def replicates_to_decide(self) -> int | None:
        """For an inconclusive claim whose uncertainty is a standard error of a mean over
        n = dof + 1 replicates: the n′ at which the same mean and spread (se·√(n/n′)) would put the
        whole t interval on one side of the nearest edge of the accepted set — the sample size
        that would decide it (None otherwise, or when the mean sits on an edge). A claim skipped
        at this scale (graded from a larger one) gets it too when its numbers here, graded as if
        it were not skipped, are inconclusive: what this scale would need to decide it."""
        outcome = self.evaluate() if self.status == "skipped" else self.status
        if (
            outcome != "inconclusive"
            or self.se is None
            or self.dof is None
            or not isinstance(self.measured, float)
        ):
            return None
        edges = accepted_set(self.comparison, self.reference, self.tolerance)
        # inconclusive now: n itself does not decide, so the search starts above it
        return replicates_to_decide(
            self.measured, self.se, int(self.dof) + 1, edges, self.confidence
        )

    def rule(self) -> str:
        """The rule in words, with the reference and margin filled in."""
        r, t = self.reference, fmt(self.tolerance or 0.0)
        if self.comparison == "abs":
            return f"|x − {fmt(r)}| ≤ {t}" if self.tolerance else f"x = {fmt(r)}"
        if self.comparison == "rel":
            return f"|x − {fmt(r)}| ≤ {t}·|{fmt(r)}|"
        if self.comparison == "le":
            return f"x ≤ {fmt(r + (self.tolerance or 0.0))}" if self.tolerance else f"x ≤ {fmt(r)}"
        if self.comparison == "ge":
            return f"x ≥ {fmt(r - (self.tolerance or 0.0))}" if self.tolerance else f"x ≥ {fmt(r)}"
        if self.comparison == "between":
            return f"{fmt(r[0])} ≤ x ≤ {fmt(r[1])}"
        return "x is true"

    def uncertainty(self) -> str:
        """How the interval was formed, in words ('' when the measurement is exact)."""
        c = self.to_json()
        words = interval_words(c)
        if self.se is None:
            return words
        split = se_split(c)
        return f"± {fmt_se(self.se)} SE" + (f" ({split})" if split else "") + f"; {words}"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "statement": self.statement,
            "case": self.case,
            "measured": self.measured,
            "se": self.se,
            "reference_se": self.reference_se,
            "dof": self.dof,
            "interval": None if self.interval is None else list(self.interval),
            "confidence": self.confidence if self.interval is not None else None,
            "reference": self.reference,
            "tolerance": self.tolerance,
            "comparison": self.comparison,
            "rule": self.rule(),
            "justification": self.justification,
            "source": self.source,
            "min_scale": self.min_scale,
            "note": self.note,
            "alternative": None
            if self.alternative is None
            else {"value": self.alternative[0], "label": self.alternative[1]},
            "discriminates": self.discriminates,
            "replicates_to_decide": self.replicates_to_decide(),
            "controls": [c.to_json() for c in self.controls],
            "conditions": self.conditions,
            "lean": self.evaluate() if self.status == "skipped" else None,
            "status": self.status,
            "finding": is_finding(
                {"status": self.status, "controls": [c.to_json() for c in self.controls]}
            ),
            "passed": self.passed,
        }


class Ledger:
    """The claims of one chapter run at one scale."""

    def __init__(self, scale: str, confidence: float = DEFAULT_CONFIDENCE):
        self.scale = check_scale(scale)
        quantile(confidence)
        self.confidence = float(confidence)
        self.claims: list[Claim] = []

    def claim(
        self,
        id: str,
        statement: str,
        *,
        kind: str,
        measured: Any,
        reference: Any = None,
        tol: float | None = None,
        comparison: str = "abs",
        se: float | None = None,
        dof: float | None = None,
        interval: tuple[float, float] | None = None,
        confidence: float | None = None,
        why: str,
        source: str,
        min_scale: str = "ci",
        note: str = "",
        caveat: str = "",
        alternative: tuple[Any, str] | None = None,
        case: str = "",
        controls: Iterable[Any] | None = None,
        conditions: Mapping[str, Any] | None = None,
    ) -> Claim:
        """Record and grade one claim.

        ``kind`` is one of :data:`KINDS`; ``tol`` is the rule's margin (what "agrees" means),
        ``se``/``dof`` or ``interval`` the measurement's uncertainty (or ``measured`` is a
        :class:`layerwise.stats.Estimate`, which carries both); ``why`` justifies both at
        this scale; ``note`` says why a claim that is not expected to pass at this scale does not.
        ``caveat`` is a note recorded only when the numbers do not pass the rule (graded as if the
        claim were not skipped): why it can come out inconclusive or failed at this scale.
        ``alternative`` is ``(value, "what it is")``: the credible alternative the rule must exclude
        (see the module docstring; required in spirit for ``reproduces`` and ``predicts``).
        ``case`` names the case of a claim made of several (``"depth 2"``): its statement is
        then the part the cases share, recorded as ``"<case>: <statement>"``, and the scorecard
        prints the shared part once with a short row per case (:func:`claim_families`).
        ``controls`` (:class:`Control` entries: reference, estimator, conditions) record what a
        disagreement survived — a fail is a *finding* only when all three passed; ``conditions``
        maps a condition to ``(ours, paper's)`` (input, width, batch, depth, steps …).
        """
        if any(c.id == id for c in self.claims):
            raise ParameterError(f"claim id {id!r} is used twice")
        from .stats import Estimate

        if isinstance(
            measured, Estimate
        ):  # one estimate type from stats to the ledger: its mean, se and d.o.f.
            if se is not None or dof is not None or interval is not None:
                raise ParameterError(
                    f"claim {id}: measured= is an Estimate, which carries its own "
                    "se and dof; "
                    "give no se=, dof= or interval="
                )
            measured, se, dof, interval, reference_se = (
                measured.mean,
                measured.se,
                measured.dof,
                measured.interval,
                measured.reference_se,
            )
        else:
            reference_se = None
        if case and (not isinstance(case, str) or ": " in case):
            raise ParameterError(f"claim {id}: case={case!r} must be a short label without ': '")
        c = Claim(
            id,
            f"{case}: {statement}" if case else statement,
            kind,
            measured,
            reference,
            tol,
            comparison,
            why,
            source,
            min_scale,
            self.scale,
            se=se,
            dof=dof,
            interval=interval,
            confidence=self.confidence if confidence is None else confidence,
            note=note,
            alternative=alternative,
            reference_se=reference_se,
            case=case,
            controls=tuple(controls or ()),
            conditions=dict(conditions or {}),
        )
        if caveat and c.evaluate() != "pass":
            c.note = f"{note} {caveat}" if note else caveat
        self.claims.append(c)
        return c

    @property
    def failed(self) -> list[Claim]:
        return [c for c in self.claims if c.status == "fail"]

    def counts(self) -> dict[str, int]:
        return tally_outcomes(c.to_json() for c in self.claims)

    def tally(self) -> dict[str, dict[str, int]]:
        return tally(c.to_json() for c in self.claims)

    def summary(self) -> str:
        return summary_of((c.to_json() for c in self.claims), self.scale)

    def to_html(self, tracked: Mapping[str, tuple[str, Mapping[str, Any]]] | None = None) -> str:
        return scorecard_html([c.to_json() for c in self.claims], self.scale, tracked=tracked)


# ----------------------------------------------------------------------------------------------
# Tallies and rendering, from the JSON records (so dashboard, headers and scorecards agree)
# ----------------------------------------------------------------------------------------------
def tally_outcomes(claims: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """``{"pass": n, "fail": n, "inconclusive": n, "skipped": n}`` over claim records."""
    out = dict.fromkeys(OUTCOMES, 0)
    for c in claims:
        out[c["status"]] += 1
    return out


def tally(claims: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Outcome counts per kind: ``{"reproduces": {"pass": …, …}, "predicts": …, "checks": …}``.

    Records from before claims had kinds count as ``checks``."""
    out = {k: dict.fromkeys(OUTCOMES, 0) for k in KINDS}
    for c in claims:
        out[c.get("kind", "checks")][c["status"]] += 1
    return out


def undiscriminated(claims: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Per kind, the passing ``reproduces``/``predicts`` claims that rule out no named alternative
    (records without the field, from before alternatives, count as such)."""
    out = dict.fromkeys(KINDS, 0)
    for c in claims:
        kind = c.get("kind", "checks")
        if kind != "checks" and c["status"] == "pass" and not c.get("discriminates"):
            out[kind] += 1
    return out


def rules_out(c: Mapping[str, Any]) -> str:
    """What a claim record's pass rules out, in words ('' when it does not pass, or rules
    out nothing)."""
    alt = c.get("alternative")
    if (
        c.get("kind") == "checks"
        or c.get("status") != "pass"
        or not alt
        or not c.get("discriminates")
    ):
        return ""
    v = alt.get("value")
    return f"rules out {alt['label']}" + (
        "" if v is None or isinstance(v, bool) else f" ({fmt(v)})"
    )


def _part(
    n: Mapping[str, int], noun: str, verb: str, weak: int = 0, findings: int | None = None
) -> str:
    total = sum(n.values())
    graded = total - n["skipped"]
    text = f"{verb} {n['pass'] - weak} of {graded} {noun}" if graded else f"no {noun} graded"
    extra = [f"{n[o]} {o}" for o in ("inconclusive", "fail") if n[o]]
    extra = [e.replace("fail", "failed") for e in extra]
    if n["fail"] and findings is not None:
        f, other = findings, n["fail"] - findings
        words = [f"{f} {'is a finding' if f == 1 else 'are findings'}"] if f else []
        if other:
            one = other == 1
            noun, own = ("a finding", "its") if one else ("findings", "their")
            words.append(f"{other if f else ''} not {noun} until {own} controls pass".strip())
        extra[-1] += ": " + ", ".join(words)
    if weak:
        extra.insert(
            0, f"{weak} {'passes' if weak == 1 else 'pass'} without ruling out an alternative"
        )
    if n["skipped"]:
        extra.append(f"{n['skipped']} not run at this scale")
    return text + (f" ({', '.join(extra)})" if extra else "")


def summary_sentence(
    t: Mapping[str, Mapping[str, int]],
    scale: str | None = None,
    weak: Mapping[str, int] | None = None,
    findings: Mapping[str, int] | None = None,
) -> str:
    """One line a reader scans in seconds, reproductions first, e.g. "Reproduces 9 of 11 paper
    results (2 need a larger scale); 5 of 6 predictions
    confirmed (1 inconclusive); 3 of 3 checks hold — at
    scale `ci`". ``weak`` (:func:`undiscriminated`): passes that rule out no alternative, not
    counted as reproduced or confirmed. ``findings`` (:func:`count_findings`): failures that
    survived all three controls; the other failures are said to await them."""
    weak = weak or {}
    f = findings or {}
    parts = [
        _part(t["reproduces"], "paper results", "Reproduces", weak.get("reproduces", 0),
              f.get("reproduces") if findings is not None else None),
        _part(t["predicts"], "predictions", "confirms", weak.get("predicts", 0),
              f.get("predicts") if findings is not None else None),
        _part(t["checks"], "checks", "passes"),
    ]
    parts = [p for p, k in zip(parts, KINDS) if sum(t[k].values())]
    if not parts:
        return "No claims."
    s = "; ".join(parts)
    s = s[0].upper() + s[1:]
    return s + (f" — at scale {scale}." if scale else ".")


def summary_of(claims: Iterable[Mapping[str, Any]], scale: str | None = None) -> str:
    """:func:`summary_sentence` of claim records: their :func:`tally`, passes that rule out no
    alternative not counted."""
    claims = list(claims)
    return summary_sentence(tally(claims), scale, undiscriminated(claims), count_findings(claims))


def outcomes_sentence(claims: Iterable[Mapping[str, Any]], scale: str) -> str:
    """What a chapter's "What we found" ends with: the scorecard's summary (:func:`summary_of`),
    then each claim that does not pass, by outcome — so that no summary can count fewer failures
    than its scorecard. Cases of one family (:func:`claim_families`) with the same outcome and
    remark share their statement: "regions grow like N² (Depth 2, Depth 6)"."""
    claims = list(claims)
    text = summary_of(claims, scale)

    def remark(c: Mapping[str, Any]) -> str:
        if c["status"] == "fail":
            why = unconfirmed_reason(c)
            return "a finding" if not why else f"not a finding: {why}"
        if c["status"] == "skipped":
            lean = lean_words(c).removeprefix("At this scale it ").rstrip(".")
            return f"graded at {c['min_scale']}" + (f"; here it {lean}" if lean else "")
        return ""

    said: dict[str, list[tuple[str, list[str], str]]] = {}  # outcome → [(statement, cases, remark)]
    for shared, members in claim_families(claims):
        for case, c in members:
            if c["status"] == "pass":
                continue
            statement = (shared or c["statement"]).rstrip(".")
            rows = said.setdefault(c["status"], [])
            row = next((r for r in rows if r[0] == statement and r[2] == remark(c)), None)
            if row is None or not case:
                rows.append((statement, [case] if case else [], remark(c)))
            else:
                row[1].append(case)
    for status, head in (("fail", "Failed"), ("inconclusive", "Inconclusive"),
                         ("skipped", "Not run at this scale")):
        items = [
            st + "".join(f" ({x})" for x in (", ".join(cases), rem) if x)
            for st, cases, rem in said.get(status, [])
        ]
        if items:
            text += f" {head}: " + "; ".join(items) + "."
    return text


def count_findings(claims: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Per kind, the failing claims that are findings (:func:`is_finding`)."""
    out = dict.fromkeys(KINDS, 0)
    for c in claims:
        if is_finding(c):
            out[c.get("kind", "checks")] += 1
    return out


def claim_families(
    claims: list[Mapping[str, Any]],
) -> list[tuple[str | None, list[tuple[str, Mapping[str, Any]]]]]:
    """Claims made of several cases (``case=`` of :meth:`Ledger.claim`, statement
    ``"<case>: <shared>"``), grouped: the cases of one shared statement make one family, in the
    order of its first case. Returns ``[(shared or None, [(case, claim)])]``; a claim without a
    case, or the only case of its statement, is its own group (``None``), so every claim appears
    exactly once and in a family only beside another case of the same statement."""

    def shared(c: Mapping[str, Any]) -> str | None:
        case = c.get("case") or ""
        prefix = f"{case}: "
        return c["statement"][len(prefix) :] if case and c["statement"].startswith(prefix) else None

    rests = [shared(c) for c in claims]
    count = Counter(r for r in rests if r is not None)
    groups: list[tuple[str | None, list[tuple[str, Mapping[str, Any]]]]] = []
    where: dict[str, int] = {}
    for c, rest in zip(claims, rests):
        if rest is None or count[rest] < 2:
            groups.append((None, [("", c)]))
        elif rest in where:
            groups[where[rest]][1].append((c["case"], c))
        else:
            where[rest] = len(groups)
            groups.append((rest, [(c["case"], c)]))
    return groups


def _measured_html(c: Mapping[str, Any]) -> str:
    """The measured cell of a scorecard row: value, its ± or interval, the rule it is held to."""
    meas = html.escape(fmt(c["measured"]))
    if c.get("se") is not None:
        meas += f' <span class="lw-se">± {html.escape(fmt_se(c["se"]))}</span>'
        split = se_split(c)
        if split:
            meas += f'<br><span class="lw-se">({html.escape(split)})</span>'
    elif c.get("interval") is not None:
        lo, hi = c["interval"]
        meas += f' <span class="lw-se">[{html.escape(fmt(lo))}, {html.escape(fmt(hi))}]</span>'
    if c["status"] == "skipped":  # a value at a scale too small to decide is not a result
        meas = f'<span class="lw-se">at this scale: {meas}</span>'
    return meas + f'<br><span class="lw-rule">expected {html.escape(c.get("rule", ""))}</span>'


def sentence_case(text: str) -> str:
    """``text`` with its first word capitalised when that word is a plain lower-case English word
    ("regions grow …" → "Regions grow …"); a symbol or formula stays as written ("log(mˡ/m⁰) …",
    "δχ ≥ 1 …", "q* …")."""
    first = text.split(" ", 1)[0]
    if first.isascii() and first.isalpha() and first.islower():
        return text[0].upper() + text[1:]
    return text


def _notes_html(c: Mapping[str, Any], kind: str, *, own_note: bool = True) -> str:
    """A row's notes: the chapter's note (unless ``own_note`` is False: a family says it once), what
    would decide an undecided claim, what a pass rules out (or why it is not counted)."""
    note = (
        f'<br><span class="lw-note">{html.escape(c["note"])}</span>'
        if own_note and c.get("note")
        else ""
    )
    if c["status"] == "skipped" and c.get("lean"):
        note += f'<br><span class="lw-note">{html.escape(lean_words(c))}</span>'
    if c.get("replicates_to_decide"):
        note += (
            f'<br><span class="lw-note">≈ {c["replicates_to_decide"]} replicates would '
            f"decide it (now {int(c['dof']) + 1}).</span>"
        )
    if c["status"] == "fail":
        why = unconfirmed_reason(c)
        note += (
            '<br><span class="lw-note lw-finding">A finding: it survived all three controls.</span>'
            if not why
            else f'<br><span class="lw-note lw-unconfirmed">Not a finding: {html.escape(why)} — '
            f"{html.escape(not_a_finding_means(c))}.</span>"
        )
    note += _controls_html(c)
    ruled = rules_out(c)
    if ruled:
        note += f'<br><span class="lw-alt">{html.escape(ruled[0].upper() + ruled[1:])}.</span>'
    elif kind != "checks" and c["status"] == "pass":
        alt = c.get("alternative")
        why_not = (
            f"{alt['label']} ({fmt(alt['value'])}) lies inside the accepted range"
            if alt
            else "no alternative named"
        )
        counted = "a reproduction" if kind == "reproduces" else "a confirmed prediction"
        note += (
            '<br><span class="lw-alt lw-weak">Not discriminating: '
            f"{html.escape(why_not)}; not counted as {counted}.</span>"
        )
    return note


def lean_words(c: Mapping[str, Any]) -> str:
    """How a skipped claim's numbers at this scale would be graded, in words."""
    lean = c.get("lean")
    word = {"pass": "would pass", "fail": "leans to fail", "inconclusive": "is undecided"}.get(
        lean, ""
    )
    return f"At this scale it {word}." if word else ""


def differing_conditions(c: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """A claim record's conditions where ours differ from the paper's: ``[(name, ours, paper)]``."""
    return [(k, v[0], v[1]) for k, v in (c.get("conditions") or {}).items() if v[0] != v[1]]


def _controls_html(c: Mapping[str, Any]) -> str:
    """A row's controls (✓/✗ with their notes) and the conditions that differ from the paper's."""
    out = ""
    diff = differing_conditions(c)
    if diff:
        words = "; ".join(f"{k} {fmt(o)} (paper: {fmt(p)})" for k, o, p in diff)
        out += f'<br><span class="lw-cond">Our conditions differ: {html.escape(words)}.</span>'
    for x in c.get("controls") or ():
        mark = "✓" if x.get("passed") else "✗"
        note = f": {x['note']}" if x.get("note") else ""
        out += (
            f'<br><span class="lw-control lw-control-{"pass" if x.get("passed") else "fail"}">'
            f"{mark} {html.escape(x['kind'])} control{html.escape(note)}</span>"
        )
    return out


def _rule_details(c: Mapping[str, Any], summary: str) -> str:
    """The folded rule and margin of a row, opened by ``summary`` (HTML)."""
    words = interval_words(c)
    level = f"<br>{html.escape(words[0].upper() + words[1:])}." if words else ""
    return (
        f"<details><summary>{summary}</summary>"
        f"Claim <code>{html.escape(c['id'])}</code>. Rule: {html.escape(c.get('rule', ''))}. "
        f"{html.escape(c['justification'])}{level}</details>"
    )


def _verdict_cell(
    c: Mapping[str, Any], tracked: Mapping[str, tuple[str, Mapping[str, Any]]] | None = None
) -> str:
    """The outcome cell; a claim skipped at this scale shows the outcome of the tracked evidence at
    its scale (``tracked``: claim id → (evidence folder, record)), or says it was not run there."""
    skipped = ""
    if c["status"] == "skipped":
        scale = html.escape(c["min_scale"])
        found = (tracked or {}).get(c["id"])
        if found:
            where, rec = found
            skipped = (
                f'<br><span class="lw-min">at <code>{scale}</code> (evidence/'
                f"{html.escape(where)}): {_verdict(rec['status'])}</span>"
            )
        else:
            skipped = f'<br><span class="lw-min">not run at <code>{scale}</code></span>'

    return f'<td class="lw-verdict" title="{c["status"]}">{_verdict(c["status"])}{skipped}</td>'


def scorecard_html(
    claims: list[Mapping[str, Any]],
    scale: str,
    *,
    anchor_prefix: str = "claim-",
    tracked: Mapping[str, tuple[str, Mapping[str, Any]]] | None = None,
) -> str:
    """A compact scorecard, grouped by kind: one row per claim (outcome; statement with its
    notes, the source opening the folded rule and justification; measured with its uncertainty
    and the rule it is held to). Claims that state one thing of several cases
    (:func:`claim_families`) share one statement row, each case a short row of its own."""
    parts = [f'<p class="lw-score"><b>{html.escape(summary_of(claims, scale))}</b></p>']
    more = ' <span class="lw-more">· rule and margin</span>'
    for kind in KINDS:
        rows = [c for c in claims if c.get("kind", "checks") == kind]
        if not rows:
            continue
        title = {
            "reproduces": "Paper results reproduced",
            "predicts": "Predictions tested",
            "checks": "Checks",
        }[kind]
        body = []
        for shared, members in claim_families(rows):
            if shared is None:
                c = members[0][1]
                src = f'<span class="lw-src">{html.escape(c["source"])}</span>'
                body.append(
                    f'<tr id="{anchor_prefix}{html.escape(c["id"])}" class="lw-{c["status"]}">'
                    f"{_verdict_cell(c, tracked)}"
                    f'<td class="lw-claim">{html.escape(c["statement"])}{_notes_html(c, kind)}'
                    f"{_rule_details(c, src + more)}</td>"
                    f'<td class="lw-num">{_measured_html(c)}</td></tr>'
                )
                continue
            sources = list(dict.fromkeys(c["source"] for _, c in members))
            one_source = len(sources) == 1
            head = html.escape(sentence_case(shared))
            notes = {c.get("note", "") for _, c in members}
            shared_note = notes.pop() if len(notes) == 1 else ""  # said once, not per case
            if shared_note:
                head += f'<br><span class="lw-note">{html.escape(shared_note)}</span>'
            if one_source:
                head += f'<br><span class="lw-src">{html.escape(sources[0])}</span>'
            body.append(
                '<tr class="lw-family"><td class="lw-verdict"></td>'
                f'<td class="lw-claim" colspan="2">{head}</td></tr>'
            )
            for label, c in members:
                summary = f'<span class="lw-case">{html.escape(label)}</span>' + (
                    more
                    if one_source
                    else f' <span class="lw-src">· {html.escape(c["source"])}</span>{more}'
                )
                body.append(
                    f'<tr id="{anchor_prefix}{html.escape(c["id"])}" '
                    f'class="lw-{c["status"]} lw-member">{_verdict_cell(c, tracked)}'
                    f'<td class="lw-claim">{_rule_details(c, summary)}'
                    f"{_notes_html(c, kind, own_note=not shared_note).removeprefix('<br>')}</td>"
                    f'<td class="lw-num">{_measured_html(c)}</td></tr>'
                )
        head = "".join(f"<th>{h}</th>" for h in ("outcome", "claim", "measured"))
        parts.append(
            f'<p class="lw-kind"><b>{title}</b> <small>({html.escape(KINDS[kind])})</small></p>'
            f'<table class="lw-scorecard"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>"
        )
    return '<div class="lw-card">' + "".join(parts) + "</div>"


def se_split(c: Mapping[str, Any]) -> str:
    """For a claim record whose SE combines ours with a published one (``reference_se``, see
    :func:`layerwise.stats.versus_reference`): the two parts, √(ours² + theirs²), in words;
    '' otherwise."""
    ref, se = c.get("reference_se"), c.get("se")
    if ref is None or se is None:
        return ""
    ours = math.sqrt(max(float(se) ** 2 - float(ref) ** 2, 0.0))
    return f"ours {fmt_se(ours)} and the authors' {fmt_se(ref)}, combined"


def interval_words(c: Mapping[str, Any]) -> str:
    """A claim record's confidence interval in words — level, law, bounds — or '' without one."""
    if c.get("interval") is None:
        return ""
    lo, hi = c["interval"]
    if c.get("se") is None:
        law = "as computed"
    else:
        law = "normal" if c.get("dof") is None else f"t with {c['dof']:g} d.o.f."
    return f"{100 * c['confidence']:g} % interval ({law}): [{fmt(lo)}, {fmt(hi)}]"


def _verdict(status: str) -> str:
    symbol, word = LABELS[status].split(" ", 1)
    return f'{symbol}<span class="lw-word"> {word}</span>'


def fmt_se(x: Any) -> str:
    """A standard error to two significant digits."""
    if x is None:
        return "—"
    x = float(x)
    if x == 0 or not math.isfinite(x):
        return fmt(x)
    return significant(x, 2)


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
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return significant(x, 4)


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def scientific(x: float, digits: int, *, trim: bool = True) -> str:
    """``x`` as ``m×10ⁿ`` with ``digits`` significant digits in m (trailing zeros dropped when
    ``trim``) and true minus signs: ``scientific(-1.234e-5, 2) == "−1.2×10⁻⁵"``."""
    mant, exp = f"{float(x):.{digits - 1}e}".split("e")
    if trim and "." in mant:
        mant = mant.rstrip("0").rstrip(".")
    return f"{mant}×10{str(int(exp)).translate(_SUPERSCRIPT)}".replace("-", "−")


def significant(x: float, digits: int) -> str:
    """``x`` to ``digits`` significant digits, trailing zeros dropped, as a book prints it:
    plain in [1e-3, 1e5) (and 0), otherwise ``m×10ⁿ`` (:func:`scientific`, as the prose's glued
    values), with a true minus sign."""
    x = float(x)
    if not math.isfinite(x):
        return "nan" if math.isnan(x) else ("∞" if x > 0 else "−∞")
    if x == 0 or 1e-3 <= abs(x) < 1e5:  # rounded, then written out (99.99 to 2 digits: 100)
        return np.format_float_positional(float(f"{x:.{digits}g}"), trim="-").replace("-", "−")
    return scientific(x, digits)
