"""The claims ledger rendered (:mod:`layerwise.claims` is the model): each chapter's scorecard,
the one-line summaries of the headers, landing page and dashboard, the sentence a chapter's "What
we found" ends with, and the rules, intervals and outcomes in words — all from the ledger's JSON
records, so that every page counts and words a claim alike."""

from __future__ import annotations

import html
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from .claims import (
    CONTROL_KINDS,
    KINDS,
    count_failures,
    is_carried,
    is_finding,
    replicates_now,
    tally,
    undiscriminated,
)
from .formatting import as_sentence, fmt, fmt_se, sentence_case
from .htmltable import Cell, Row, markup, table_html

#: Each outcome as the scorecard and dashboard show it: its symbol and word.
LABELS = {"pass": "✓ pass", "fail": "✗ fail", "inconclusive": "? inconclusive",
          "skipped": "○ skipped"}

#: Per kind: the title of its scorecard table, and the noun and verb its summary counts passes by.
KIND_WORDS = {"reproduces": ("Paper results reproduced", "paper results", "reproduces"),
              "predicts": ("Predictions tested", "predictions", "confirms"),
              "checks": ("Checks", "checks", "passes")}

#: How a skipped claim's numbers at this scale would be graded (its ``lean``), in words.
LEAN = {"pass": "would pass", "fail": "leans to fail", "inconclusive": "is undecided"}


def join_and(words: Iterable[str], last: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    words = list(words)
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} {last} {words[-1]}"


# A claim in words
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
    if is_carried(c):
        return ("the paper's result carried to our conditions, which the run measured to matter, "
                "not a failed reproduction")
    return "a suspected artefact of our own set-up until its controls pass"


def rules_out(c: Mapping[str, Any]) -> str:
    """What a claim record's pass rules out, in words ('' when it does not pass, or rules
    out nothing)."""
    alt = c.get("alternative")
    if c.get("kind") == "checks" or c.get("status") != "pass" or not alt or not c.get(
            "discriminates"):
        return ""
    v = alt.get("value")
    return f"rules out {alt['label']}" + (
        "" if v is None or isinstance(v, bool) else f" ({fmt(v)})")


def rule_words(c: Mapping[str, Any]) -> str:
    """A claim record's rule in words: "within 0.5 of −1", "within 5 % of 2", "at most 0",
    "at least 1", "between 0.5 and 3", "equal to 1", "true" (the formula when the record has no
    comparison)."""
    comparison = c.get("comparison")
    r, t = c.get("reference"), float(c.get("tolerance") or 0.0)
    words = {
        "abs": lambda: f"within {fmt(t)} of {fmt(r)}" if t else f"equal to {fmt(r)}",
        "rel": lambda: f"within {fmt(100 * t)} % of {fmt(r)}" if t else f"equal to {fmt(r)}",
        "le": lambda: f"at most {fmt(r + t)}",
        "ge": lambda: f"at least {fmt(r - t)}",
        "between": lambda: f"between {fmt(r[0])} and {fmt(r[1])}",
        "true": lambda: "true",
    }
    return words[comparison]() if comparison in words else c.get("rule", "")


def se_split(c: Mapping[str, Any]) -> str:
    """For a claim record whose SE combines ours with a published one (``reference_se``, see
    :func:`layerwise.stats.versus_reference`): the two parts, √(ours² + theirs²), in words;
    '' otherwise."""
    ref, se = c.get("reference_se"), c.get("se")
    if ref is None or se is None:
        return ""
    ours = math.sqrt(max(float(se) ** 2 - float(ref) ** 2, 0.0))
    return f"ours {fmt_se(ours)} and the authors' {fmt_se(ref)}, combined"


def lean_words(c: Mapping[str, Any]) -> str:
    """How a skipped claim's numbers at this scale would be graded (:data:`LEAN`), in words."""
    word = LEAN.get(c.get("lean"), "")
    return f"At this scale it {word}." if word else ""


def next_scale_words(c: Mapping[str, Any], code: str = "`") -> str:
    """For a claim graded only at a larger scale whose replicates there are recorded
    (``replicates=``) and whose numbers here are undecided: whether that scale can decide it at
    this mean and spread — "decided at `paper` if this mean and spread hold: needs ≈ 30
    replicates, `paper` runs 64" or "may stay undecided at `paper`: …" ('' otherwise)."""
    need = c.get("replicates_to_decide")
    runs = (c.get("replicates") or {}).get(c.get("min_scale", ""))
    if c.get("status") != "skipped" or not need or runs is None:
        return ""
    at = f"{code}{c['min_scale']}{code}"
    head = f"decided at {at} if this mean and spread hold" if need <= runs else (
        f"may stay undecided at {at}")
    return f"{head}: needs ≈ {need} replicates, {at} runs {runs}"


def deciding_words(c: Mapping[str, Any]) -> str:
    """For an undecided claim: whether the scale that grades it can decide it
    (:func:`next_scale_words`), else how many replicates would decide it at this mean and spread,
    beside those behind its standard error (``n``, else dof + 1): "≈ 59 replicates would decide it
    (now 36)." ('' when nothing would be said)."""
    nxt = next_scale_words(c)
    if nxt:
        return sentence_case(nxt) + "."
    need = c.get("replicates_to_decide")
    return f"≈ {need} replicates would decide it (now {replicates_now(c)})." if need else ""


# Summaries
#: How a summary names the failures of each kind (:data:`layerwise.claims.FAILURES`): one, many.
FAILURE_WORDS = {
    "finding": ("a finding", "findings"),
    "carried": ("a result carried from the paper to our conditions",
                "results carried from the paper to our conditions"),
    "unconfirmed": ("not a finding until its controls pass",
                    "not findings until their controls pass"),
}


def failure_words(fails: Mapping[str, int]) -> str:
    """The failures of one kind of claim by what they are: "2 are findings, 1 is a result carried
    from the paper to our conditions"; one group alone needs no count ("results carried from the
    paper to our conditions")."""
    groups = [(k, fails[k]) for k in FAILURE_WORDS if fails.get(k)]
    if len(groups) == 1:
        k, n = groups[0]
        return FAILURE_WORDS[k][n > 1]
    return ", ".join(f"{n} {'are' if n > 1 else 'is'} {FAILURE_WORDS[k][n > 1]}"
                     for k, n in groups)


def _part(n: Mapping[str, int], noun: str, verb: str, weak: int = 0,
          fails: Mapping[str, int] | None = None) -> str:
    """One kind's part of :func:`summary_of`: passes of the graded, then what else."""
    graded = sum(n.values()) - n["skipped"]
    text = f"{verb} {n['pass'] - weak} of {graded} {noun}" if graded else f"no {noun} graded"
    extra = [words for count, words in (
        (weak, f"{weak} {'passes' if weak == 1 else 'pass'} without ruling out an alternative"),
        (n["inconclusive"], f"{n['inconclusive']} inconclusive"),
        (n["fail"], f"{n['fail']} failed" + (f": {failure_words(fails)}" if fails else "")),
        (n["skipped"], f"{n['skipped']} not run at this scale"),
    ) if count]
    return text + (f" ({', '.join(extra)})" if extra else "")


def summary_of(claims: Iterable[Mapping[str, Any]], scale: str | None = None) -> str:
    """The one line of claim records a reader scans in seconds, reproductions first, e.g.
    "Reproduces 9 of 11 paper results (2 not run at this scale); confirms 5 of 6 predictions (1
    inconclusive); passes 3 of 3 checks — at scale ci." Passes that rule out no alternative
    (:func:`layerwise.claims.undiscriminated`) are not counted as reproduced or confirmed;
    failures are said for what they are (:func:`layerwise.claims.count_failures`)."""
    claims = list(claims)
    t, weak, failures = tally(claims), undiscriminated(claims), count_failures(claims)
    parts = []
    for k, (_, noun, verb) in KIND_WORDS.items():
        if not sum(t[k].values()):
            continue
        if k == "checks":  # a check's pass needs no alternative; a failed check is no finding
            parts.append(_part(t[k], noun, verb))
        else:
            parts.append(_part(t[k], noun, verb, weak.get(k, 0), failures.get(k)))
    if not parts:
        return "No claims."
    s = "; ".join(parts)
    return s[0].upper() + s[1:] + (f" — at scale {scale}." if scale else ".")


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
            lean, nxt = LEAN.get(c.get("lean"), ""), next_scale_words(c, code="")
            return "; ".join([f"graded at {c['min_scale']}"] + (
                [f"here it {lean}"] if lean else []) + ([nxt] if nxt else []))
        return ""

    said: dict[str, list[tuple[str, list[str], str]]] = {}  # outcome → [(statement, cases, remark)]
    for shared, members in claim_families(claims):
        for case, c in members:
            if c["status"] == "pass":
                continue
            statement, rem = (shared or c["statement"]).rstrip("."), remark(c)
            rows = said.setdefault(c["status"], [])
            same = next((r for r in rows if r[0] == statement and r[2] == rem), None)
            if same and case:  # a case joins its family's row with the same outcome and remark
                same[1].append(case)
            else:
                rows.append((statement, [case] if case else [], rem))
    for status, head in (("fail", "Failed"), ("inconclusive", "Inconclusive"),
                         ("skipped", "Not run at this scale")):
        items = [
            st + "".join(f" ({x})" for x in (", ".join(cases), rem) if x)
            for st, cases, rem in said.get(status, [])
        ]
        if items:
            text += f" {head}: " + "; ".join(items) + "."
    return text


def claim_families(
    claims: list[Mapping[str, Any]],
) -> list[tuple[str | None, list[tuple[str, Mapping[str, Any]]]]]:
    """Claims made of several cases (``case=`` of :meth:`layerwise.claims.Ledger.claim`,
    statement ``"<case>: <shared>"``), grouped: the cases of one shared statement make one family,
    in the order of its first case. Returns ``[(shared or None, [(case, claim)])]``; a claim
    without a case, or the only case of its statement, is its own group (``None``), so every
    claim appears exactly once and in a family only beside another case of the same statement."""

    def shared(c: Mapping[str, Any]) -> str | None:
        case = c.get("case") or ""
        prefix = f"{case}: "
        return c["statement"][len(prefix) :] if case and c["statement"].startswith(prefix) else None

    rests = [shared(c) for c in claims]
    count = Counter(r for r in rests if r is not None)
    groups: dict[str | int, tuple[str | None, list[tuple[str, Mapping[str, Any]]]]] = {}
    for i, (c, rest) in enumerate(zip(claims, rests)):
        if rest is None or count[rest] < 2:  # its own group, keyed by its place
            groups[i] = (None, [("", c)])
        else:  # a family, keyed by its shared statement, placed at its first case
            groups.setdefault(rest, (rest, []))[1].append((c["case"], c))
    return list(groups.values())


# The scorecard
def _span(cls: str, text: str) -> str:
    return f'<span class="{cls}">{html.escape(text)}</span>'


def _measured_html(c: Mapping[str, Any]) -> str:
    """The measured cell of a scorecard row: the value, its ± , its confidence interval, and the
    rule it is held to in words."""
    meas = html.escape(fmt(c["measured"]))
    if c.get("se") is not None:
        meas += " " + _span("lw-se", f"± {fmt_se(c['se'])}")
    if split := se_split(c):  # '' without an se
        meas += "<br>" + _span("lw-se", f"({split})")
    if c.get("interval") is not None:
        lo, hi = c["interval"]
        level = f"{100 * c['confidence']:g}\u00a0%"  # "99 %" kept on one line
        meas += "<br>" + _span("lw-ci", f"{level} [{fmt(lo)}, {fmt(hi)}]")
    here = c.get("_here")
    if here is not None:  # the tracked evidence's value decides; this scale's shown small
        scale = html.escape(c["_evidence_scale"])
        meas = (f'<span class="lw-min">at <code>{scale}</code>:</span> {meas}<br>'
                + _span("lw-se", f"at this scale: {fmt(here['measured'])}"
                        + (f" ± {fmt_se(here['se'])}" if here.get("se") is not None else "")))
    elif c["status"] == "skipped":  # a value at a scale too small to decide is not a result
        meas = f'<span class="lw-se">at this scale: {meas}</span>'
    return meas + "<br>" + _span("lw-rule", f"expected {rule_words(c)}")


#: The fields of a tracked evidence record a skipped claim's row shows instead of this run's.
EVIDENCE_FIELDS = ("statement", "case", "measured", "se", "dof", "n", "interval", "confidence",
                   "controls", "conditions", "note", "comparison", "reference", "tolerance",
                   "rule", "justification")


def with_evidence(c: Mapping[str, Any],
                  tracked: Mapping[str, tuple[str, Mapping[str, Any]]] | None) -> Mapping[str, Any]:
    """A claim's record as its row shows it: a claim skipped at this scale that tracked evidence
    decides is shown, labelled with the evidence's scale, with the evidence's value, interval,
    note, controls and conditions (what the decision rests on), this run's value kept as
    ``_here``; else the record itself."""
    found = (tracked or {}).get(c["id"]) if c["status"] == "skipped" else None
    if not found:
        return c
    where, rec = found
    return {**c, **{k: rec[k] for k in EVIDENCE_FIELDS if k in rec}, "_here": c,
            "_evidence": where, "_evidence_status": rec["status"], "lean": None,
            "_evidence_scale": rec.get("scale", c["min_scale"])}


def _notes_html(c: Mapping[str, Any], kind: str, *, own_note: bool = True) -> str:
    """A row's notes: the chapter's note (unless ``own_note`` is False: a family says it once), what
    would decide an undecided claim, whether a failure is a finding, the conditions that differ
    from the paper's, the controls (✓/✗ with their notes), what a pass rules out (or why it is not
    counted)."""
    note = "<br>" + _span("lw-note", as_sentence(c["note"])) if own_note and c.get("note") else ""
    if c.get("_evidence"):
        at, there = c["_evidence_scale"], f"the tracked evidence in evidence/{c['_evidence']}"
        said = (f"Decided at {at} by {there}" if c["_evidence_status"] in ("pass", "fail")
                else f"Run at {at} in {there} and undecided there too")
        note += "<br>" + _span("lw-note lw-decide", f"{said}: {LABELS[c['_evidence_status']]}; "
                               "the value, note and controls shown are that run's.")
    if c["status"] == "skipped" and c.get("lean"):
        note += "<br>" + _span("lw-note", lean_words(c))
    deciding = "" if c.get("_evidence") else deciding_words(c)
    if deciding:  # a scale's name as code
        note += "<br>" + re.sub(r"`([^`]+)`", r"<code>\1</code>",
                                _span("lw-note lw-decide", deciding))
    if c["status"] == "fail":
        why = unconfirmed_reason(c)
        note += "<br>" + (_span("lw-note lw-unconfirmed",
                                f"Not a finding: {why} — {not_a_finding_means(c)}.") if why else
                          _span("lw-note lw-finding", "A finding: it survived all three controls."))
    differ = "; ".join(f"{k} {fmt(v[0])} (paper: {fmt(v[1])})"
                       for k, v in (c.get("conditions") or {}).items() if v[0] != v[1])
    if differ:
        note += "<br>" + _span("lw-cond", f"Our conditions differ: {differ}.")
    for x in c.get("controls") or ():
        mark, cls = ("✓", "pass") if x.get("passed") else ("✗", "fail")
        said = f": {x['note']}" if x.get("note") else ""
        note += "<br>" + _span(f"lw-control lw-control-{cls}", f"{mark} {x['kind']} control{said}")
    ruled = rules_out(c)
    if ruled:
        note += "<br>" + _span("lw-alt", f"{ruled[0].upper() + ruled[1:]}.")
    elif kind != "checks" and c["status"] == "pass":
        alt = c.get("alternative")
        why_not = (f"{alt['label']} ({fmt(alt['value'])}) lies inside the accepted range" if alt
                   else "no alternative named")
        counted = "a reproduction" if kind == "reproduces" else "a confirmed prediction"
        note += "<br>" + _span("lw-alt lw-weak",
                               f"Not discriminating: {why_not}; not counted as {counted}.")
    return note


def _rule_details(c: Mapping[str, Any], summary: str) -> str:
    """The folded rule and margin of a row, opened by ``summary`` (HTML): the rule in words (and
    as a formula), the justification, the confidence interval's level, law and bounds."""
    words = ""
    if c.get("interval") is not None:
        lo, hi = c["interval"]
        law = ("as computed" if c.get("se") is None
               else "normal" if c.get("dof") is None else f"t with {c['dof']:g} d.o.f.")
        words = f"{100 * c['confidence']:g} % interval ({law}): [{fmt(lo)}, {fmt(hi)}]"
    level = f"<br>{html.escape(words[0].upper() + words[1:])}." if words else ""
    rule = rule_words(c)
    formula = f" ({c['rule']})" if c.get("rule") and c["rule"] != rule else ""
    return (
        f"<details><summary>{summary}</summary>"
        f"Claim <code>{html.escape(c['id'])}</code>. Rule: {html.escape(rule + formula)}. "
        f"{html.escape(c['justification'])}{level}</details>"
    )


def _verdict(status: str) -> str:
    symbol, word = LABELS[status].split(" ", 1)
    return f'{symbol}<span class="lw-word"> {word}</span>'


def _verdict_cell(c: Mapping[str, Any]) -> Cell:
    """The outcome cell; a claim skipped at this scale shows the outcome of the tracked evidence
    of its scale when its row carries it (:func:`with_evidence`), or says it was not run there."""
    skipped = ""
    if c["status"] == "skipped":
        at = f"<code>{html.escape(c.get('_evidence_scale', c['min_scale']))}</code>"
        where = (f"at {at} (evidence/{html.escape(c['_evidence'])}): "
                 f"{_verdict(c['_evidence_status'])}" if c.get("_evidence") else f"not run at {at}")
        skipped = f'<br><span class="lw-min">{where}</span>'
    return Cell(markup(_verdict(c["status"]) + skipped), "lw-verdict", c["status"])


def _rows(claims: list[Mapping[str, Any]], kind: str, anchor_prefix: str,
          tracked: Mapping[str, tuple[str, Mapping[str, Any]]] | None) -> list[Row]:
    """The scorecard rows of one kind: a row per claim; a family's shared statement, then a short
    row per case."""
    more = ' <span class="lw-more">· rule and margin</span>'

    def row(c: Mapping[str, Any], claim: str, cls: str) -> Row:
        return Row([_verdict_cell(c), Cell(markup(claim), "lw-claim"),
                    Cell(markup(_measured_html(c)), "lw-num")], f"{anchor_prefix}{c['id']}", cls)

    rows = []
    for shared, members in claim_families(claims):
        if shared is None:
            c = with_evidence(members[0][1], tracked)
            rows.append(row(c, html.escape(c["statement"]) + _notes_html(c, kind)
                            + _rule_details(c, _span("lw-src", c["source"]) + more),
                            f"lw-{c['status']}"))
            continue
        sources = list(dict.fromkeys(c["source"] for _, c in members))
        one_source = len(sources) == 1
        head = html.escape(sentence_case(shared))
        notes = {c.get("note", "") for _, c in members}
        shared_note = notes.pop() if len(notes) == 1 else ""  # said once, not per case
        if shared_note:
            head += "<br>" + _span("lw-note", as_sentence(shared_note))
        if one_source:
            head += "<br>" + _span("lw-src", sources[0])
        rows.append(Row([Cell("", "lw-verdict"), Cell(markup(head), "lw-claim", colspan=2)],
                        cls="lw-family"))
        for label, c in members:
            c = with_evidence(c, tracked)
            summary = _span("lw-case", label) + (
                more if one_source else " " + _span("lw-src", f"· {c['source']}") + more
            )
            notes_html = _notes_html(c, kind, own_note=not shared_note).removeprefix("<br>")
            rows.append(row(c, _rule_details(c, summary) + notes_html,
                            f"lw-{c['status']} lw-member"))
    return rows


def scorecard_html(claims: list[Mapping[str, Any]], scale: str, *, anchor_prefix: str = "claim-",
                   tracked: Mapping[str, tuple[str, Mapping[str, Any]]] | None = None) -> str:
    """A compact scorecard, grouped by kind: one row per claim (outcome; statement with its
    notes, the source opening the folded rule and justification; measured with its uncertainty,
    its interval and the rule it is held to in words). Claims that state one thing of several
    cases (:func:`claim_families`) share one statement row, each case a short row of its own."""
    parts = [f'<p class="lw-score"><b>{html.escape(summary_of(claims, scale))}</b></p>']
    for kind in KINDS:
        rows = _rows([c for c in claims if c.get("kind", "checks") == kind], kind, anchor_prefix,
                     tracked)
        if rows:
            parts.append(f'<p class="lw-kind"><b>{KIND_WORDS[kind][0]}</b> <small>('
                         f"{html.escape(KINDS[kind])})</small></p>"
                         + table_html(("outcome", "claim", "measured"), rows, cls="lw-scorecard"))
    return '<div class="lw-card">' + "".join(parts) + "</div>"
