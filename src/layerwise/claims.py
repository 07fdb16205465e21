"""Claims ledger: the model (SPEC §1 "Claims ledger and scorecard"). Its rendering — the
scorecard, the summary sentences, the rules in words — is :mod:`layerwise.scorecard`.

A claim is a quantitative statement a chapter makes, in code: what was measured (with its
uncertainty, when it has one), what it is compared with (a paper's value, a prediction, a bound),
by which rule, with which margin and why that margin is honest at the scale the chapter ran at.

**Kinds** (:data:`KINDS`): a ``reproduces`` claim's source names the figure, equation, table or
array; a ``checks`` claim is kept only when a reader learns from it (round-off identities are unit
tests, not claims).

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

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from .formatting import fmt, fmt_se, join_sentences, significant  # noqa: F401 (importable here)
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
#: their controls"), in the order scorecards list them, and when each passes.
CONTROL_KINDS: dict[str, str] = {
    "reference": "the authors' own data (or the paper's stated number) satisfy the claim's rule — "
    "a shape the authors' arrays fail is a misreading of the paper, not a finding",
    "estimator": "the estimator behind the claim recovers a known answer from synthetic data under "
    "the same design (grid and its ceiling, fit window, replicates)",
    "conditions": "our conditions (input, width, batch, depth, training) match the paper's in "
    "every respect the chapter measured to matter — else the paper's result is carried to ours",
}


class Control(NamedTuple):
    """The outcome of one control of a claim: ``kind`` one of :data:`CONTROL_KINDS` (when each
    passes), ``passed`` computed by the chapter's code (never typed), ``note`` what was done and
    what came out."""

    kind: str
    passed: bool
    note: str = ""


def _refuse(claim_id: str, bad: Any, message: str) -> None:
    """Refuse claim ``claim_id`` with ``message`` when ``bad`` holds."""
    if bad:
        raise ParameterError(f"claim {claim_id}: {message}")


def _controls(claim_id: str, controls: Iterable[Any] | None) -> tuple[Control, ...]:
    """Validated :class:`Control` entries from Controls, ``{kind, passed, note}`` dicts or
    ``(kind, passed, note)`` tuples; each kind at most once."""
    out: list[Control] = []
    for c in controls or ():
        if isinstance(c, Mapping):
            c = Control(c.get("kind"), c.get("passed"), c.get("note", ""))
        elif not isinstance(c, Control):
            c = Control(*c)
        _refuse(claim_id, c.kind not in CONTROL_KINDS, f"control kind={c.kind!r} is not allowed; "
                "choose one of: " + ", ".join(map(repr, CONTROL_KINDS)))
        _refuse(claim_id, not isinstance(c.passed, (bool, np.bool_)),
                f"control {c.kind!r} needs passed=True or False (computed), got {c.passed!r}")
        _refuse(claim_id, any(o.kind == c.kind for o in out), f"control {c.kind!r} is given twice")
        out.append(Control(c.kind, bool(c.passed), str(c.note or "").strip()))
    return tuple(sorted(out, key=lambda c: list(CONTROL_KINDS).index(c.kind)))


def replicates_now(c: Mapping[str, Any]) -> int | None:
    """The replicates behind a claim record's standard error: its ``n``, else dof + 1 (records
    written before claims carried ``n``), else None."""
    if c.get("n") is not None:
        return int(c["n"])
    return None if c.get("dof") is None else int(c["dof"]) + 1


def is_finding(c: Mapping[str, Any]) -> bool:
    """A claim record is a *finding* when it fails and all three controls passed."""
    if c.get("status") != "fail":
        return False
    passed = {x.get("kind"): x.get("passed") for x in c.get("controls") or ()}
    return all(passed.get(k) is True for k in CONTROL_KINDS)


def is_carried(c: Mapping[str, Any]) -> bool:
    """A claim record whose *conditions* control failed: the paper's result carried to conditions
    the run measured to matter (its failure is not a failed reproduction)."""
    return any(x.get("kind") == "conditions" and x.get("passed") is False
               for x in c.get("controls") or ())


#: Why a ``reproduces`` claim is graded as a prediction: its conditions control failed, or our
#: conditions differ from the paper's and no conditions control showed the difference harmless.
CARRIED = {
    "measured": "Graded as a prediction: the paper's result carried to our conditions, which this "
    "run measured to differ from the paper's in a way that matters.",
    "unshown": "Graded as a prediction: the paper's result carried to our conditions, which differ "
    "from the paper's ({names}) in ways this run did not show harmless.",
}


def carried_note(kind: str, controls: Iterable[Any], conditions: Mapping[str, Any] | None) -> str:
    """The sentence that grades a claim as the paper's result carried to our conditions (SPEC §1
    "Findings and their controls"; a reproduction counts only like for like), or "" when it is
    not carried: a ``reproduces`` claim whose *conditions* control failed, or whose ``conditions``
    (``{name: (ours, paper's)}``) differ in some respect while no conditions control passed.
    ``controls`` are :class:`Control` entries or their JSON records."""
    if kind != "reproduces":
        return ""
    records = (c._asdict() if isinstance(c, Control) else c for c in controls or ())
    passed = {c.get("kind"): c.get("passed") for c in records}
    if passed.get("conditions") is False:
        return CARRIED["measured"]
    names = [k for k, (ours, theirs) in (conditions or {}).items() if ours != theirs]
    if not names or passed.get("conditions"):
        return ""
    return CARRIED["unshown"].format(names=", ".join(names))


def regraded(record: Mapping[str, Any]) -> dict[str, Any]:
    """A claim record (JSON) graded by :func:`carried_note` — tracked evidence written before a
    rule of it existed is read as today's ledger would record it: ``kind`` predicts and the
    sentence added to its ``note``. Records already graded come back unchanged."""
    out = dict(record)
    if sentence := carried_note(out.get("kind", "checks"), out.get("controls"),
                                out.get("conditions")):
        out.update(kind="predicts", note=join_sentences(out.get("note") or "", sentence))
    return out


#: Confidence level of the intervals when a claim does not state its own.
DEFAULT_CONFIDENCE = 0.99


def _num(x: Any) -> Any:
    """Plain-Python form of a measured/reference value for JSON."""
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, (list, tuple)):
        return [_num(v) for v in x]
    try:
        return bool(x) if isinstance(x, np.bool_) else float(x)
    except (TypeError, ValueError):
        return str(x)


def quantile(confidence: float, dof: float | None = None) -> float:
    """Two-sided critical value of a claim's ``confidence`` interval
    (:func:`layerwise.stats.t_quantile`: normal, or Student's t with ``dof`` degrees of freedom)."""
    from .stats import t_quantile

    return t_quantile(confidence, dof)


def replicates_to_decide(mean: float, se: float | None, n: int | None, edges: Iterable[float],
                         confidence: float = 0.99, *, start: int | None = None) -> int | None:
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
    if comparison == "between":
        return float(reference[0]), float(reference[1])
    if comparison not in ("abs", "rel", "le", "ge"):
        raise ParameterError(f"comparison={comparison!r} has no accepted interval")
    half = (tol or 0.0) * (abs(reference) if comparison == "rel" else 1)  # ref ± half
    return (-math.inf if comparison == "le" else reference - half,
            math.inf if comparison == "ge" else reference + half)


def grade(interval: tuple[float, float], accepted: tuple[float, float]) -> str:
    """``pass`` if ``interval`` ⊆ ``accepted``, ``fail`` if they are disjoint,
    else ``inconclusive``."""
    lo, hi = interval
    a, b = accepted
    if any(isinstance(v, float) and math.isnan(v) for v in (lo, hi)):
        return "fail"
    if a <= lo and hi <= b:
        return "pass"
    return "fail" if hi < a or lo > b else "inconclusive"


def outcome(measured: float, comparison: str, reference: Any, tol: float | None = 0.0, *,
            se: float | None = None, dof: float | None = None,
            confidence: float = DEFAULT_CONFIDENCE) -> str:
    """The outcome the ledger gives a claim with these numbers — ``pass``, ``fail`` or
    ``inconclusive`` (its t interval measured ± t·se against the rule's accepted set; a point
    without ``se``), for a chapter that words its prose or a claim's note before recording it."""
    half = 0.0 if se is None else quantile(confidence, dof) * se
    return grade((measured - half, measured + half), accepted_set(comparison, reference, tol))


#: The fields of a claim's JSON record, in the order the results files write them.
RECORD = ("id", "kind", "statement", "case", "measured", "se", "reference_se", "dof", "n",
          "interval", "confidence", "reference", "tolerance", "comparison", "rule", "justification",
          "source", "min_scale", "note", "alternative", "discriminates", "replicates_to_decide",
          "replicates", "controls", "conditions", "lean", "status", "finding", "passed")


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
    n: int | None = None
    replicates: dict[str, int] = field(default_factory=dict)
    status: str = field(default="", init=False)

    def __post_init__(self) -> None:
        """Check the claim (each refusal names the claim and the keyword to fix), bring its
        numbers to plain floats, derive the interval from ``se`` and grade it."""
        refuse = partial(_refuse, self.id)
        check_choice("kind", self.kind, KINDS)
        check_choice("comparison", self.comparison, COMPARISONS)
        check_scale(self.min_scale)
        comp, ref, tol, se = self.comparison, self.reference, self.tolerance, self.se
        refuse(comp in ("abs", "rel") and tol is None,
               f"comparison={comp!r} needs a margin tol >= 0 (0 allowed)")
        refuse(tol is not None and not tol >= 0,
               f"tol={tol!r} must be >= 0; the margin is part of the rule — put the measurement's "
               "uncertainty in se= or interval=")
        refuse(comp == "between" and (not isinstance(ref, (list, tuple)) or len(ref) != 2
                                      or ref[0] > ref[1]),
               "comparison='between' needs reference=(lo, hi) with lo <= hi")
        refuse(comp not in ("between", "true") and not isinstance(_num(ref), float),
               f"comparison={comp!r} needs a numeric reference")
        refuse(not self.justification.strip(),
               "every claim needs a justification of its rule and margin (why=)")
        refuse(not self.source.strip(),
               "every claim needs a source (paper and figure/equation/table, or 'ours: …')")
        refuse(se is not None and self.interval is not None,
               "give the uncertainty as se= or as interval=, not both")
        refuse(comp == "true" and (se is not None or self.interval is not None),
               "comparison='true' takes no uncertainty")
        refuse(se is not None and not float(se) >= 0, f"se={se!r} must be a non-negative number")
        refuse(self.dof is not None and se is None, "dof= qualifies a standard error; give se= too")
        refuse(self.reference_se is not None
               and (se is None or not 0 <= float(self.reference_se) <= float(se)),
               f"reference_se={self.reference_se!r} is the published part of se= and must lie "
               "between 0 and se")
        self.confidence = float(self.confidence)
        quantile(self.confidence, self.dof)  # validates confidence and dof
        self.measured, self.reference = _num(self.measured), _num(self.reference)
        self.tolerance, self.se, self.dof = (
            None if v is None else float(v) for v in (tol, se, self.dof))
        if self.interval is not None:
            lo, hi = (float(v) for v in self.interval)
            refuse(not lo <= hi, f"interval={self.interval!r} must be (lo, hi) with lo <= hi")
            self.interval = (lo, hi)
        elif self.se is not None and isinstance(self.measured, float):
            q = quantile(self.confidence, self.dof)
            self.interval = (self.measured - q * self.se, self.measured + q * self.se)
        alt = self.alternative
        if alt is not None:
            refuse(not (isinstance(alt, (list, tuple)) and len(alt) == 2
                        and isinstance(alt[1], str) and alt[1].strip()),
                   f"alternative= must be (value, 'what the value is'), got {alt!r}")
            value = _num(alt[0])
            refuse(comp != "true" and not isinstance(value, float),
                   f"alternative value {alt[0]!r} must be a number for comparison={comp!r}")
            self.alternative = (value, alt[1].strip())
        self.controls = _controls(self.id, self.controls)
        conditions = dict(self.conditions or {})  # {name: (ours, paper's)}
        for name, pair in conditions.items():
            refuse(not (isinstance(pair, (list, tuple)) and len(pair) == 2),
                   f"conditions[{name!r}] must be (ours, paper's), got {pair!r}")
        self.conditions = {str(k): [v if isinstance(v, str) else _num(v) for v in pair]
                           for k, pair in conditions.items()}
        if self.n is None and self.dof is not None:
            self.n = int(self.dof) + 1  # a mean's t: n − 1 degrees of freedom
        replicates = dict(self.replicates or {})  # {scale: replicates it runs}
        for scale, k in replicates.items():
            check_scale(scale)
            refuse(isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1,
                   f"replicates[{scale!r}]={k!r} must be a whole number >= 1")
        self.replicates = {scale: int(k) for scale, k in replicates.items()}
        skipped = scale_rank(self.scale) < scale_rank(self.min_scale)
        self.status = "skipped" if skipped else self.evaluate()

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
        a, b = accepted_set(self.comparison, self.reference, self.tolerance)
        return not (a < v < b or (isinstance(v, float) and math.isnan(v)))  # NaN excludes nothing

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
        """For an inconclusive claim whose uncertainty is the standard error of a mean over ``n``
        replicates: the smallest n′ > n at which the same mean and spread would decide it
        (:func:`replicates_to_decide` against the accepted set's edges; None otherwise). A claim
        skipped here gets it when its numbers, graded as if not skipped, are inconclusive."""
        outcome = self.evaluate() if self.status == "skipped" else self.status
        if (outcome != "inconclusive" or self.se is None or self.dof is None
                or not isinstance(self.measured, float)):
            return None
        edges = accepted_set(self.comparison, self.reference, self.tolerance)
        # inconclusive with n replicates (whatever the t's d.o.f.): the search starts above n
        return replicates_to_decide(self.measured, self.se, self.n, edges, self.confidence,
                                    start=self.n + 1)

    def rule(self) -> str:
        """The rule as a formula, with the reference and margin filled in (a negative value in
        parentheses: ``|x − (−1)| ≤ 0.5``); :func:`layerwise.scorecard.rule_words` says it in
        words."""
        r, t, comp = self.reference, self.tolerance or 0.0, self.comparison
        if comp in ("le", "ge"):
            return f"x ≤ {fmt(r + t)}" if comp == "le" else f"x ≥ {fmt(r - t)}"
        if comp == "between":
            return f"{fmt(r[0])} ≤ x ≤ {fmt(r[1])}"
        if comp not in ("abs", "rel"):
            return "x is true"
        if comp == "abs" and not self.tolerance:
            return f"x = {fmt(r)}"
        near = f"|x − {f'({fmt(r)})' if r < 0 else fmt(r)}| ≤ {fmt(t)}"
        return near + (f"·|{fmt(r)}|" if comp == "rel" else "")

    def to_json(self) -> dict[str, Any]:
        """The claim's JSON record (:data:`RECORD`): its fields as they are, and the derived ones —
        the rule as a formula, whether it discriminates, the replicates that would decide it, the
        outcome its numbers lean to when skipped, whether its failure is a finding."""
        controls, alt = [c._asdict() for c in self.controls], self.alternative  # checked Controls
        derived = {
            "interval": None if self.interval is None else list(self.interval),
            "confidence": self.confidence if self.interval is not None else None,
            "rule": self.rule(),
            "alternative": None if alt is None else {"value": alt[0], "label": alt[1]},
            "replicates_to_decide": self.replicates_to_decide(),
            "controls": controls,
            "lean": self.evaluate() if self.status == "skipped" else None,
            "finding": is_finding({"status": self.status, "controls": controls}),
        }
        return {k: derived[k] if k in derived else getattr(self, k) for k in RECORD}


#: The keywords a claim must give, and all :meth:`Ledger.claim` reads (sorted, as refusals list).
REQUIRED = ("kind", "measured", "why", "source")
KEYWORDS = sorted(REQUIRED + (
    "reference", "tol", "comparison", "se", "dof", "n", "interval", "confidence", "min_scale",
    "note", "caveat", "alternative", "case", "controls", "conditions", "replicates"))


class Ledger:
    """The claims of one chapter run at one scale."""

    def __init__(self, scale: str, confidence: float = DEFAULT_CONFIDENCE):
        self.scale = check_scale(scale)
        quantile(confidence)
        self.confidence = float(confidence)
        self.claims: list[Claim] = []

    def claim(self, id: str, statement: str, **options: Any) -> Claim:
        """Record and grade one claim; unknown or missing keywords are refused by name.

        ``kind`` is one of :data:`KINDS`; ``measured`` the value (or a
        :class:`layerwise.stats.Estimate`, which carries its se, dof, n and interval: no se=,
        dof=, n= or interval= beside it); ``reference``, ``comparison`` (:data:`COMPARISONS`,
        default ``abs``) and ``tol`` the rule and its margin (what "agrees" means); ``se``/``dof``
        or ``interval`` the measurement's uncertainty at level ``confidence`` (default the
        ledger's); ``why`` justifies both at this scale; ``source`` the paper and figure, equation
        or table (or "ours: …"); ``min_scale`` the smallest scale that grades it (default ``ci``).
        ``note`` says why a claim that is not expected to pass at this scale does not; ``caveat``
        is a note recorded only when the numbers do not pass the rule (graded as if the claim were
        not skipped). ``alternative`` is ``(value, "what it is")``: the credible alternative the
        rule must exclude (see the module docstring). ``case`` names the case of a claim made of
        several (``"depth 2"``): its statement is then the part the cases share, recorded as
        ``"<case>: <statement>"`` (:func:`layerwise.scorecard.claim_families`). ``controls``
        (:class:`Control` entries: reference, estimator, conditions) record what a disagreement
        survived — a fail is a *finding* only when all three passed; ``conditions`` maps a
        condition to ``(ours, paper's)``. ``replicates`` maps a scale to the replicates it runs
        (``{"paper": 64}``), so that a claim graded only at a larger scale says whether that scale
        can decide it; ``n`` is the number of replicates behind ``se`` (an Estimate's own)."""
        if any(c.id == id for c in self.claims):
            raise ParameterError(f"claim id {id!r} is used twice")
        refuse = partial(_refuse, id)
        unknown = sorted(set(options) - set(KEYWORDS))
        refuse(unknown, f"{', '.join(unknown)} is not a claim keyword; choose from: "
               + ", ".join(KEYWORDS))
        missing = [k for k in REQUIRED if k not in options]
        refuse(missing, f"give {', '.join(k + '=' for k in missing)}")
        kw = {"reference": None, "tol": None, "comparison": "abs", "min_scale": "ci", **options}
        from .stats import Estimate

        if isinstance(e := kw["measured"], Estimate):  # one estimate type from stats to ledger
            refuse(any(kw.get(k) is not None for k in ("se", "dof", "n", "interval")),
                   "measured= is an Estimate, which carries its own se and dof; give no se=, "
                   "dof=, n= or interval=")
            kw.update(measured=e.mean, se=e.se, dof=e.dof, n=e.n, interval=e.interval,
                      reference_se=e.reference_se)
        case, caveat, confidence = (kw.pop(k, d) for k, d in
                                    (("case", ""), ("caveat", ""), ("confidence", None)))
        refuse(case and (not isinstance(case, str) or ": " in case),
               f"case={case!r} must be a short label without ': '")
        c = Claim(id, f"{case}: {statement}" if case else statement, scale=self.scale, case=case,
                  confidence=self.confidence if confidence is None else confidence,
                  tolerance=kw.pop("tol"), justification=kw.pop("why"), **kw)
        if caveat and c.evaluate() != "pass":  # two phrases of a chapter: two sentences
            c.note = join_sentences(c.note, caveat)
        self.claims.append(c)
        return c

    def records(self) -> list[dict[str, Any]]:
        """The claims as JSON records (what the results file, the scorecard and the dashboard
        read)."""
        return [c.to_json() for c in self.claims]


# Tallies of the JSON records (so dashboard, headers and scorecards count alike); records from
# before claims had kinds count as ``checks``.
def tally_outcomes(claims: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """``{"pass": n, "fail": n, "inconclusive": n, "skipped": n}`` over claim records."""
    out = dict.fromkeys(OUTCOMES, 0)
    for c in claims:
        out[c["status"]] += 1
    return out


def tally(claims: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Outcome counts per kind: ``{"reproduces": {"pass": …, …}, "predicts": …, "checks": …}``."""
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


#: What a failing claim is, in the order summaries name them: a finding (all three controls
#: passed), the paper's result carried to our conditions (its conditions control failed), or
#: unconfirmed (a control missing or failed: a suspected artefact of ours until they pass).
FAILURES = ("finding", "carried", "unconfirmed")


def count_failures(claims: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Per kind, the failing claims by :data:`FAILURES`."""
    out = {k: dict.fromkeys(FAILURES, 0) for k in KINDS}
    for c in claims:
        if c.get("status") == "fail":
            what = "finding" if is_finding(c) else ("carried" if is_carried(c) else "unconfirmed")
            out[c.get("kind", "checks")][what] += 1
    return out


def count_findings(claims: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Per kind, the failing claims that are findings (:func:`is_finding`)."""
    return {k: n["finding"] for k, n in count_failures(claims).items()}
