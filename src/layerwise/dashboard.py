"""What the book says about itself: the reproduction dashboard (:func:`write_dashboard`), the
landing page's summary cards (:func:`write_summary`, ``book/_generated/summary.md``, included by
``book/intro.md``) and tracked evidence (SPEC §1 "Claims ledger and scorecard").

Both read this machine's ledgers (``results/<scale>/NN_topic.json``, untracked) and the tracked
ledgers (and figures) of runs made elsewhere or at a scale CI does not run (``evidence/<run>/``,
each with ``META.json``: machine, date, code version, command; :func:`save_evidence`). Totals come
from :func:`layerwise.claims.tally` over the records the scorecards were drawn from, so the
dashboard, the landing page and every scorecard agree; the tables are the scorecard's own template
(:mod:`layerwise.htmltable`).
"""

from __future__ import annotations

import html
import json
import re
import shutil
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .claims import (
    KINDS,
    count_findings,
    is_finding,
    regraded,
    replicates_now,
    tally,
    tally_outcomes,
    undiscriminated,
)
from .formatting import fmt
from .htmltable import SCROLL_CLASS, Cell, Row, markup, table_html
from .params import SCALES, ParameterError, check_scale
from .paths import repo_root, results_root
from .provenance import git_commit
from .scorecard import LABELS, not_a_finding_means, summary_of, unconfirmed_reason

EVIDENCE_DIR = "evidence"
SYMBOLS = {"pass": "✓", "fail": "✗", "inconclusive": "?", "skipped": "○"}
#: The theme's scroll container: a table with many runs scrolls inside the column on a phone
#: instead of widening the page.
SCROLL = f'<div class="{SCROLL_CLASS}">'
NOT_EXECUTED = "No chapter has been executed yet: run `make book`."
#: Claims with where they come from: ``{claim id: (evidence folder, claim record)}``.
Sourced = dict[str, tuple[str, dict[str, Any]]]


def chapter_titles(root: Path) -> dict[str, str]:
    """``{"07_meanfield_chaos": "7. Mean-field …"}``: the chapter's number (as the numbered table of
    contents shows it) and its notebook's first heading."""
    out = {}
    for py in sorted((root / "notebooks").glob("[0-9][0-9]_*.py")):
        heads = [ln[4:] for ln in py.read_text(encoding="utf-8").splitlines() if ln[:4] == "# # "]
        title = re.sub(r"^Chapter \d+\s*[—–-]\s*", "", heads[0].strip()) if heads else py.stem
        out[py.stem] = f"{int(py.stem[:2])}. {title}"
    return out


def _ledgers(folder: Path, wanted: Iterable[str] = ()) -> dict[str, dict[str, Any]]:
    """The chapter ledgers (``NN_topic.json``) in ``folder``, by chapter; with ``wanted`` (chapter
    numbers or names) only those are read."""
    wanted = [str(w) for w in wanted]
    return {f.stem: read_ledger(f) for f in sorted(folder.glob("[0-9][0-9]_*.json"))
            if not wanted or any(f.stem == w or f.stem[:2] == w.zfill(2) for w in wanted)}


def read_ledger(path: Path) -> dict[str, Any]:
    """A chapter ledger (JSON) with each claim graded by today's rule
    (:func:`layerwise.claims.regraded`: tracked evidence may predate it)."""
    ledger = json.loads(Path(path).read_text())
    return dict(ledger, claims=[regraded(c) for c in ledger.get("claims", [])])


def _evidence(root: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Every tracked evidence folder, by name, with its ``META.json``."""
    metas = sorted((Path(root) / EVIDENCE_DIR).glob("*/META.json"))
    return [(m.parent, json.loads(m.read_text())) for m in metas]


def load_runs(root: Path) -> list[dict[str, Any]]:
    """Every set of chapter ledgers the dashboard shows, in column order: this machine's runs at
    each scale, then the evidence folders (those of one scale merged, :func:`merged_evidence`).
    Each: ``{"label", "scale", "where", "meta", "chapters"}``."""
    runs = [
        {"label": f"{s} (this build)", "scale": s, "where": "build", "meta": {}, "chapters": chs}
        for s in SCALES if (chs := _ledgers(results_root(root) / s))
    ]
    evidence = [
        {"label": f"{m['scale']} ({m.get('device', '?')}, {m.get('date', '?')[:10]})",
         "scale": m["scale"], "where": folder.name, "meta": m, "chapters": chs}
        for folder, m in _evidence(root) if (chs := _ledgers(folder))
    ]
    for scale in dict.fromkeys(r["scale"] for r in evidence):
        group = [r for r in evidence if r["scale"] == scale]
        runs.append(group[0] if len(group) == 1 else merged_evidence(group))
    return runs


def merged_evidence(group: list[dict[str, Any]]) -> dict[str, Any]:
    """Several evidence folders of one scale (a whole run and parts of others) as one column:
    per chapter, each claim as the scorecards read it (:func:`newest_claims`), and the folders its
    claims come from (``sources``: a folder whose every claim a newer one re-graded is not
    named)."""
    by_date = sorted(group, key=lambda r: (str(r["meta"].get("date", "")), r["where"]))
    chapters = {}
    for ch in sorted({ch for r in group for ch in r["chapters"]}):
        have = [r for r in by_date if ch in r["chapters"]]
        newest = newest_claims((str(r["meta"].get("date", "")), r["where"],
                                r["chapters"][ch].get("claims", [])) for r in have)
        used = {folder for folder, _ in newest.values()}
        chapters[ch] = {"claims": [c for _, c in newest.values()],
                        "sources": [r["where"] for r in have if r["where"] in used]}
    scale = group[0]["scale"]
    return {"label": f"{scale} (tracked: {len(group)} runs and parts)", "scale": scale,
            "where": "evidence", "meta": {}, "parts": group, "chapters": chapters}


def newest_claims(dated: Iterable[tuple[str, str, list[dict[str, Any]]]]) -> Sourced:
    """One chapter's claims from several evidence folders, given as ``(date, folder, claims)``:
    ``{claim id: (folder, record)}``, each claim from the newest folder that graded it (a claim
    skipped everywhere: from the first folder that lists it)."""
    out: Sourced = {}
    for _, folder, claims in sorted(dated, key=lambda t: (t[0], t[1])):  # newer overrides
        for c in claims:
            if c.get("status") != "skipped" or c["id"] not in out:
                out[c["id"]] = (folder, c)
    return out


def tracked_claims(root: Path, chapter: str, scales: Iterable[str] = ("paper",)) -> Sourced:
    """The claims of ``chapter`` in the newest tracked evidence at each of ``scales``:
    ``{claim id: (evidence folder, record)}``, each record with the ``scale`` its run was made at —
    what a scorecard shows for a claim graded only at a larger scale (SPEC §1 "Undecided is
    visible")."""
    scales = tuple(scales)
    dated = [
        (str(meta.get("date", "")), folder.name,
         [dict(c, scale=meta["scale"])
          for c in read_ledger(folder / f"{chapter}.json")["claims"]])
        for folder, meta in _evidence(root)
        if meta.get("scale") in scales and (folder / f"{chapter}.json").exists()
    ]
    return {k: v for k, v in newest_claims(dated).items() if v[1].get("status") != "skipped"}


def tracked_record(root: str | Path, chapter: str, claim_id: str) -> dict[str, Any] | None:
    """Claim ``claim_id`` as the newest tracked ``paper`` evidence under ``root``/evidence records
    it (:func:`tracked_claims`), or None when no evidence grades it:
    ``folder`` (the evidence folder's name), ``status`` (the recorded outcome), ``estimate``
    (an :class:`~layerwise.stats.Estimate` with the recorded interval) and the record's
    ``conditions`` {name: (ours, the paper's)}."""
    from .stats import Estimate

    found = tracked_claims(Path(root), chapter).get(claim_id)
    if found is None:
        return None
    folder, rec = found
    interval = tuple(rec["interval"]) if rec.get("interval") else None
    return {"folder": folder, "status": rec["status"],
            "estimate": Estimate(float(rec["measured"]), rec.get("se"), rec.get("dof"),
                                 replicates_now(rec), interval),
            "conditions": {k: tuple(v) for k, v in rec.get("conditions", {}).items()}}


def save_evidence(
    scale: str, name: str | None = None, root: Path | None = None, command: str = "",
    chapters: Iterable[str] = (), claims: Iterable[str] = (), note: str = "",
    figures: Iterable[str] | None = None,
) -> Path:
    """Copy this machine's ledgers at ``scale`` and their figures (not the raw arrays) into
    ``evidence/<name>/`` with ``META.json``: machine, device, date, code version (git commit),
    command. ``chapters`` (numbers or names) keeps only those chapters. ``claims`` makes the
    evidence a *part* of a run: only those claim ids (each graded there) are kept in the copied
    ledgers, so a run made for some claims — e.g. one experiment at ``paper`` with the rest of the
    chapter at smaller settings — is never read as evidence for the others; ``note`` says what the
    part is (META ``part``). ``figures`` (names without extension) keeps only those figures;
    default: every figure of a whole run, none of a part."""
    root = root or repo_root()
    check_scale(scale)
    src = results_root(root) / scale
    wanted = [str(c) for c in chapters]
    ledgers = _ledgers(src, wanted)
    if not ledgers:
        which = f" for chapters {wanted}" if wanted else ""
        raise ParameterError(f"scale={scale!r}: no chapter results under {src}{which}; run "
                             f"`make book SCALE={scale}` first")
    keep = list(claims)
    graded = {c["id"] for data in ledgers.values() for c in data.get("claims", [])
              if c.get("status") != "skipped"}
    unknown = [c for c in keep if c not in graded]
    if unknown:
        raise ParameterError(f"claims={unknown}: not graded in the ledgers under {src}; allowed: "
                             + ", ".join(sorted(graded)))
    first = next(iter(ledgers.values()))
    device = first.get("device", "?")
    dest = root / EVIDENCE_DIR / (name or f"{scale}-{device}-{time.strftime('%Y-%m-%d')}")
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "figures").mkdir(parents=True)
    for ch, data in ledgers.items():
        if keep:
            data = data | {"claims": [c for c in data.get("claims", []) if c["id"] in keep]}
        _write_json(dest / f"{ch}.json", data)
        for rel in data.get("figures", []):
            png = src.parent / rel
            if (png.stem in figures if figures is not None else not keep) and png.exists():
                shutil.copy2(png, dest / "figures" / f"{ch}__{png.name}")
    # the commit the ledgers record having run (the copying checkout's only where they do not)
    ran = {data.get("git_commit") for data in ledgers.values()}
    versions = first.get("versions", {})
    _write_json(dest / "META.json", {
        "scale": scale, "device": device, "machine": versions.get("machine", "?"),
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "git_commit": ran.pop() if len(ran) == 1 and None not in ran else git_commit(root),
        "versions": versions, "command": command or f"make book SCALE={scale}",
        "chapters": list(ledgers),
        **({"part": note or "a part of the run", "claims": keep} if keep else {}),
    })
    return dest


def _write_json(path: Path, data: Any) -> None:
    """``data`` as indented JSON (non-ASCII kept) in ``path``."""
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")



def _kind_cell(claims: list[dict[str, Any]]) -> str:
    """A summary cell: per kind the counted passes of the graded claims, then what failed (with
    the findings among them), was inconclusive or not run."""
    t, weak = tally(claims), undiscriminated(claims)
    parts = []
    for kind, short in zip(KINDS, ("reproduces", "predicts", "checks")):
        graded = sum(t[kind].values()) - t[kind]["skipped"]
        if graded:
            parts.append(f"{short} {t[kind]['pass'] - weak[kind]}/{graded}")
        elif sum(t[kind].values()):
            parts.append(f"{short} none graded")
    o = tally_outcomes(claims)
    words = {"fail": "failed", "inconclusive": "inconclusive", "skipped": "not run"}
    extra = [f"{o[k]} {w}" for k, w in words.items() if o[k]]
    if o["fail"]:
        found = sum(count_findings(claims).values())
        extra[0] += f" ({found} {'finding' if found == 1 else 'findings'})"
    if sum(weak.values()):
        extra.insert(0, f"{sum(weak.values())} not discriminating")
    mark = "✗" if o["fail"] else ("?" if o["inconclusive"] else "✓")
    return f"{mark} " + " · ".join(parts) + (f"<br><small>{', '.join(extra)}</small>" if extra
                                             else "")


def _chapter_cell(data: Mapping[str, Any]) -> str:
    """A chapter's summary cell: :func:`_kind_cell`, then its wall time, or the evidence folders a
    merged column took its claims from."""
    where = ("<br>".join(f"evidence/{html.escape(s)}/" for s in data["sources"])
             if "sources" in data else f"{data['wall_time_s']:.0f} s")
    return f"{_kind_cell(data['claims'])}<br><small>{where}</small>"


DASHBOARD_INTRO = """\
# Reproduction dashboard

Every quantitative claim of the book, graded in every run we have: the runs on this build's machine
(`results/<scale>/`) and the tracked evidence from other machines or larger scales (`evidence/`,
with machine, date, code version and command). Claims are of three kinds: **reproduces** (a result
of a paper or of its authors' published data), **predicts** (a theoretical prediction against our
measurement) and **checks** (a consistency of our own computations). Outcomes: ✓ pass (the whole
confidence interval satisfies the rule), ✗ fail (the whole interval violates it), ? inconclusive
(the interval straddles the rule — never counted as a pass), ○ not run (the claim is graded only at
a larger scale). A failure is a *finding* only after it survives three controls (the rule applied
to the authors' data, the estimator on synthetic truth, our conditions beside the paper's).
"""


def write_dashboard(root: Path | None = None) -> Path:
    """Write ``book/dashboard.md``: per chapter and run, the claims by kind and outcome; then every
    claim with its outcome in each run, linked to its row in the chapter's scorecard."""
    root = root or repo_root()
    runs, titles = load_runs(root), chapter_titles(root)
    lines = [DASHBOARD_INTRO] + ([] if runs else [NOT_EXECUTED])
    chapters = sorted({ch for r in runs for ch in r["chapters"]})
    head = [r["label"] for r in runs]
    rows = []
    for ch in chapters:
        link = f'<a href="chapters/{ch}.html">{html.escape(titles.get(ch, ch))}</a>'
        rows.append(Row([markup(link)] + [
            markup(_chapter_cell(r["chapters"][ch]) if ch in r["chapters"]
                   else "<small>not run</small>") for r in runs
        ]))
    rows.append(Row([markup("<b>whole book</b>")] + [
        markup(f"<b>{_kind_cell([c for d in r['chapters'].values() for c in d['claims']])}</b>")
        for r in runs
    ]))
    if runs:
        lines += ["## Summary", "", table_html(["chapter", *head], rows, cls="lw-dash",
                                               scroll=True), ""]
    evid = [p for r in runs if r["where"] != "build" for p in r.get("parts", [r])]
    if evid:
        lines += ["### Evidence runs", ""]
    for r in evid:
        m = r["meta"]
        part = (f" A part of that run ({m['part']}), evidence for "
                + ", ".join(f"`{c}`" for c in m["claims"]) + " only.") if m.get("claims") else ""
        lines.append(
            f"- **{r['label']}** (`evidence/{r['where']}/`): {m.get('machine', '?')}, device "
            f"{m.get('device', '?')}, {m.get('date', '?')}, code `{m.get('git_commit', '?')}`, "
            f"command `{m.get('command', '?')}`.{part}"
        )
    if evid:
        lines.append("")
    if runs:
        lines += ["## Claims", ""]
    for ch in chapters:
        per_run = [{c["id"]: c for c in r["chapters"].get(ch, {}).get("claims", [])} for r in runs]
        first: dict[str, dict[str, Any]] = {}  # each claim as the first run that has it reads it
        for got in per_run:
            for cid, c in got.items():
                first.setdefault(cid, c)
        body = [Row([markup(
            f'{_claim_link(ch, cid, c["statement"])}<br><small>'
            f"{html.escape(c.get('kind', 'checks'))} · {html.escape(c['source'])}</small>"
        )] + [
            Cell(f"{SYMBOLS[got[cid]['status']]} {fmt(got[cid]['measured'])}",
                 title=LABELS[got[cid]["status"]]) if cid in got else Cell()
            for got in per_run
        ]) for cid, c in first.items()]
        lines += [f"### {titles.get(ch, ch)}", "",
                  table_html(["claim", *head], body, cls="lw-dash", scroll=True), ""]
    out = root / "book" / "dashboard.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    return out


def executed_scale(nb: Path) -> str | None:
    """The scale an executed chapter in ``book/chapters/`` was run at (recorded by the runner)."""
    try:
        return json.loads(nb.read_text())["metadata"].get("layerwise", {}).get("scale")
    except (OSError, ValueError, KeyError):
        return None


#: How the landing page's totals name each kind of claim and its passes.
TOTAL_ROWS = {"reproduces": "Paper results", "predicts": "Predictions", "checks": "Checks"}

#: The totals' columns: a short head (a phone shows all of them) in the words of the summary
#: sentence above the table, and what it counts.
TOTAL_COLUMNS = {
    "claims": "claims of this kind, graded or not",
    "✓ counted": "passed and ruled out a named alternative: the N of \"reproduces N of M\" and "
    "\"confirms N of M\" (M is the claims less those not run)",
    "✓ not counted": "passed without ruling out an alternative",
    "✗ findings": "failed and survived all three controls: a disagreement with the paper",
    "✗ not findings": "failed without all three controls passed: results carried from the paper to "
    "our conditions (their conditions control failed), or suspected artefacts of ours until their "
    "controls pass",
    "? inconclusive": "the interval straddles the rule",
    "○ not run": "graded only at a larger scale, not run in this build",
}


def totals_table(claims: list[dict[str, Any]]) -> str:
    """The book's totals per kind of claim, as a markdown table (:data:`TOTAL_COLUMNS`), then what
    each column counts."""
    t, weak, found = tally(claims), undiscriminated(claims), count_findings(claims)
    head = "| | " + " | ".join(TOTAL_COLUMNS) + " |\n| --- |" + " ---: |" * len(TOTAL_COLUMNS)
    rows = []
    for kind in (k for k in KINDS if sum(t[k].values())):
        n = t[kind]
        cells = (sum(n.values()), n["pass"] - weak[kind], weak[kind], found[kind],
                 n["fail"] - found[kind], n["inconclusive"], n["skipped"])
        rows.append(f"| {TOTAL_ROWS[kind]} | " + " | ".join(str(c or "—") for c in cells) + " |")
    legend = "; ".join(f"**{k}**: {v}" for k, v in TOTAL_COLUMNS.items())
    return head + "\n" + "\n".join(rows) + f"\n\n<small>{legend}.</small>\n"


def _claim_link(ch: str, cid: str, statement: str) -> str:
    """A link reading ``statement`` to claim ``cid``'s row in chapter ``ch``'s scorecard."""
    return f'<a href="chapters/{ch}.html#claim-{html.escape(cid)}">{html.escape(statement)}</a>'


def findings_list(records: list[tuple[str, str, dict[str, Any]]]) -> str:
    """The failing claims of ``records`` (chapter, its title, claim record) as a markdown list: the
    findings (all three controls passed) first, then the failures still awaiting their controls,
    each linked to its scorecard row ('' when nothing fails)."""

    def item(ch: str, title: str, c: dict[str, Any]) -> str:
        why = unconfirmed_reason(c)
        tail = f" — not a finding: {why}: {not_a_finding_means(c)}" if why else ""
        link = _claim_link(ch, c["id"], c["statement"])
        return f"- {link} ({html.escape(title)}){html.escape(tail)}"

    fails = [r for r in records if r[2]["status"] == "fail"]
    out = []
    for finding, heading in [
        (True, "**Findings** — disagreements that survived all three controls:"),
        (False, "**Failures that are not findings** — the papers' results carried to conditions "
         "that differ from theirs, or suspected artefacts of our own set-up until their controls "
         "pass:"),
    ]:
        items = [item(*r) for r in fails if is_finding(r[2]) == finding]
        out += [heading, "", *items, ""] if items else []
    return "\n".join(out)


#: The conditions that name a chapter's input data (claims' ``conditions=``).
INPUT_CONDITIONS = ("input", "data", "data set", "dataset")


def decided_elsewhere(root: Path, records: list[tuple[str, str, dict[str, Any]]]) -> str:
    """The claims this build did not run (graded only at a larger scale) that tracked evidence at
    that scale decides, with its outcomes and a link to each scorecard row ('' when none): so
    the totals' "not run" column is not read as "undecided" where evidence exists."""
    skipped = [(ch, c) for ch, _, c in records if c["status"] == "skipped"]
    tracked = {ch: tracked_claims(root, ch) for ch in {ch for ch, _ in skipped}}
    ran = [(ch, c, *tracked[ch][c["id"]]) for ch, c in skipped if c["id"] in tracked[ch]]
    if not ran:
        return ""

    def listed(group: list) -> str:  # the evidence's own statement: its settings, not ours
        return "; ".join(
            f"{_claim_link(ch, c['id'], rec.get('statement', c['statement']))} "
            f"(`evidence/{folder}/`: {LABELS[rec['status']]})" for ch, c, folder, rec in group
        )

    got = [r for r in ran if r[3]["status"] in ("pass", "fail")]
    open_ = [r for r in ran if r[3]["status"] not in ("pass", "fail")]
    text = f"Of the {len(skipped)} claims not run at this scale, "
    if got:
        outcomes = tally_outcomes([rec for *_, rec in got])
        said = ", ".join(f"{n} {LABELS[k]}" for k, n in outcomes.items() if n and k != "skipped")
        text += (f"{len(got)} {'is' if len(got) == 1 else 'are'} decided by tracked evidence of "
                 f"the larger scale ({said}): {listed(got)}.")
    if open_:
        one = len(open_) == 1
        text += (f"{' ' if got else ''}{len(open_)} {'was' if one else 'were'} run at the larger "
                 f"scale and {'is' if one else 'are'} undecided there too: {listed(open_)}.")
    return text + "\n"


def inputs_list(records: list[tuple[str, str, dict[str, Any]]]) -> str:
    """Which chapters ran on other data than their paper, from the claims' recorded conditions: one
    line per chapter with each distinct (ours, the paper's) input pair ('' when none differs)."""
    pairs: dict[str, dict[tuple[str, str], None]] = {}
    for _, title, c in records:
        for key in INPUT_CONDITIONS:
            ours, paper = (c.get("conditions") or {}).get(key, (None, None))
            if ours is not None and ours != paper:
                pairs.setdefault(title, {})[(str(ours), str(paper))] = None
    if not pairs:
        return ""
    return "\n".join([
        "**Inputs.** Where a chapter's claims record other data than their paper's (stand-ins "
        "offline; `dataset=` runs the papers' own data, see {doc}`reproduce`):",
        "",
        *(f"- {html.escape(title)}: "
          + "; ".join(f"{html.escape(o)} (paper: {html.escape(p)})" for o, p in have) + "."
          for title, have in pairs.items()),
    ]) + "\n"


def evidence_line(root: Path) -> str:
    """What tracked evidence exists, by scale, and what is not run (no page may suggest evidence
    that does not exist)."""
    by_scale: dict[str, list[str]] = {}
    for folder, meta in _evidence(root):
        by_scale.setdefault(meta.get("scale", "?"), []).append(folder.name)
    have = [f"`{s}` ({', '.join(f'`evidence/{w}/`' for w in by_scale[s])})"
            for s in SCALES if s in by_scale]
    missing = [f"`{s}`" for s in SCALES if s not in by_scale and s != "ci"]
    text = "Tracked evidence: " + ("; ".join(have) if have else "none") + "."
    if missing:
        text += (f" No run at {' or '.join(missing)} is tracked yet: a claim graded only there "
                 'says "not run" on its scorecard, with how it leans at the smaller scale.')
    return text


def write_summary(root: Path | None = None) -> Path:
    """Write ``book/_generated/summary.md``: one card per chapter in table-of-contents order,
    with its first figure as a thumbnail and its scorecard's one-line summary at the scale this
    build shows; and the printed title block (:func:`title_page`)."""
    root = root or repo_root()
    gen = root / "book" / "_generated"
    (gen / "thumbs").mkdir(parents=True, exist_ok=True)
    scales_shown, cards, records = set(), [], []
    for ch, title in chapter_titles(root).items():
        scale = executed_scale(root / "book" / "chapters" / f"{ch}.ipynb")  # None: not executed
        res = results_root(root) / (scale or "") / f"{ch}.json"
        if scale is None or not res.exists():
            continue
        scales_shown.add(scale)
        data = read_ledger(res)
        records += [(ch, title, c) for c in data["claims"]]
        img = ""
        thumb = results_root(root) / data["figures"][0] if data.get("figures") else None
        if thumb is not None and thumb.exists():
            shutil.copy2(thumb, gen / "thumbs" / f"{ch}.png")
            img = f":img-top: _generated/thumbs/{ch}.png\n:img-alt: First figure of {title}\n"
        cards.append(f":::{{grid-item-card}} {title}\n:link: chapters/{ch}\n:link-type: "
                     f"doc\n{img}\n{summary_of(data['claims'], None)}\n:::\n")
    scales = sorted(scales_shown, key=SCALES.index)
    every_claim = [c for *_, c in records]
    text = f"{NOT_EXECUTED}\n" if not cards else (
        f"This build shows the chapters executed at scale {', '.join(f'`{s}`' for s in scales)}; "
        f"the {{doc}}`dashboard` has every run. {evidence_line(root)}\n\n"
        f"**The whole book.** {summary_of(every_claim, None)}\n\n{totals_table(every_claim)}\n"
        f"{decided_elsewhere(root, records)}\n{findings_list(records)}\n{inputs_list(records)}\n"
        "::::{grid} 1 2 2 2\n:gutter: 2\n\n" + "\n".join(cards) + "::::\n"
    )
    out = gen / "summary.md"
    out.write_text(text)
    (gen / "titlepage.md").write_text(title_page(root, scales))
    return out


def title_page(root: Path, scales: list[str]) -> str:
    """The printed book's title block (``book/_generated/titlepage.md``, shown only in print): the
    scale the chapters were executed at, the code's commit and the date — what a reader cites.
    Links the PDF of that scale (``_build/pdf/layerwise-<scale>.pdf``) for the HTML reader."""
    shown = ", ".join(scales) or "none (no chapter executed)"
    commit = html.escape(git_commit(root, short=True))
    date = time.strftime("%Y-%m-%d", time.gmtime())
    pdf = "".join(f'<p class="lw-pdf-link">Read or cite <a href="../pdf/layerwise-{s}.pdf">the '
                  f"whole book as a PDF ({s})</a>.</p>\n" for s in scales[-1:])
    return (
        '<div class="lw-titlepage">\n'
        '<p class="lw-tp-sub">How signals, noise, capacity and geometry propagate through the '
        "layers of deep networks — re-derived, re-computed and graded.</p>\n"
        f'<p class="lw-tp-meta">Chapters executed at scale <b>{html.escape(shown)}</b> · code '
        f"<code>{commit}</code> · built {date}.</p>\n"
        f"</div>\n{pdf}"
    )
