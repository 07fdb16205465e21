"""The book's page machinery without executing chapters: how an executed notebook is shaped for the
page (figures, glue, code toggles, stderr, header), the dashboard's totals against the ledgers, the
tracked evidence, and the landing page's cards."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import nbformat
import pytest

from layerwise import chapter, dashboard, pages, render
from layerwise.claims import Ledger, tally, undiscriminated
from layerwise.scorecard import summary_of

GLUE = "application/papermill.record/"


def _ledger_json(scale: str = "ci") -> list[dict]:
    led = Ledger(scale)
    led.claim(
        "r1",
        "paper value",
        kind="reproduces",
        measured=1.0,
        se=0.01,
        reference=1.0,
        tol=0.1,
        why="w",
        source="Fig. 1",
    )
    led.claim(
        "r2",
        "paper value at width",
        kind="reproduces",
        measured=1.0,
        reference=1.0,
        tol=0.1,
        why="w",
        source="Fig. 2",
        min_scale="paper",
    )
    led.claim(
        "p1",
        "prediction",
        kind="predicts",
        measured=0.9,
        se=0.1,
        reference=1.0,
        comparison="le",
        why="w",
        source="Eq. 3",
    )
    led.claim(
        "c1",
        "consistency",
        kind="checks",
        measured=2.0,
        reference=1.0,
        comparison="le",
        why="w",
        source="ours",
    )
    return [c.to_json() for c in led.claims]


def _results(claims, scale="ci", figures=()):
    return {
        "chapter": "42_demo",
        "scale": scale,
        "seed": 0,
        "device": "cpu",
        "wall_time_s": 1.5,
        "versions": {"machine": "x86_64", "layerwise": "0.1.0", "torch": "2.13.0"},
        "params": {"width": 3},
        "claims": claims,
        "figures": list(figures),
        "glued": {},
        "store": {"hits": 1, "computed": 2},
    }


def _captured_outputs(monkeypatch, ch_fn):
    """The display_data outputs a Chapter call emits, as nbformat outputs."""
    outs = []
    monkeypatch.setattr(
        chapter,
        "_display_raw",
        lambda data, meta: outs.append(
            nbformat.v4.new_output("display_data", data=dict(data), metadata=dict(meta))
        ),
    )
    ch_fn()
    return outs


def test_decorate_shapes_the_page(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    ch = chapter.Chapter("42_demo", scale="ci", seed=0, device="cpu", results=tmp_path / "results")

    def draw():
        fig, ax = plt.subplots(figsize=(5, 3))
        ax.plot([0, 1])
        ch.figure(fig, "rise", "A line rises from 0 to 1. It is straight.", arrays={"y": [0, 1]})

    fig_outs = _captured_outputs(monkeypatch, draw)
    glue_outs = _captured_outputs(monkeypatch, lambda: ch.glue("slope", 0.987654, se=0.012))
    code = nbformat.v4.new_code_cell
    cells = [
        nbformat.v4.new_markdown_cell("# Chapter 42 — Demo\n\nThe slope is {glue}`slope`."),
        code("scale = 'ci'", metadata={"tags": ["parameters"]}),
        code(
            "draw()",
            outputs=[
                nbformat.v4.new_output("stream", name="stderr", text="TqdmWarning: /home/x\n"),
                *fig_outs,
            ],
        ),
        code("glue()", outputs=glue_outs),
        code(
            "x = 1",
            outputs=[nbformat.v4.new_output("stream", name="stderr", text="UserWarning: x\n")],
        ),
        code(
            "df",
            outputs=[
                nbformat.v4.new_output(
                    "execute_result", data={"text/plain": "table"}, execution_count=1
                )
            ],
        ),
    ]
    nb = nbformat.v4.new_notebook(cells=cells)
    path = tmp_path / "42_demo.ipynb"
    nbformat.write(nb, path)
    res = tmp_path / "42_demo.json"
    res.write_text(json.dumps(_results(_ledger_json())))
    pages.decorate(path, res, "ci")
    out = nbformat.read(path, as_version=4)
    kinds = [(c.cell_type, c.metadata.get("tags", [])) for c in out.cells]
    # title, header, parameters (removed), figure cell (code collapsed), its figure, glue cell and
    # a cell that wrote only to stderr (removed), the table cell (code collapsed)
    assert kinds[0][0] == "markdown" and "lw-execution-header" in kinds[1][1]
    assert "remove-cell" in kinds[2][1]
    assert "hide-input" in kinds[3][1] and kinds[4] == ("markdown", ["lw-figure"])
    assert (
        "remove-cell" in kinds[5][1]
        and "remove-cell" in kinds[6][1]
        and "hide-input" in kinds[7][1]
    )
    # stderr stays in the downloadable notebook; myst-nb keeps it off the page (one setting)
    assert [o.get("name") for o in out.cells[6].outputs] == ["stderr"]
    conf = (Path(__file__).resolve().parents[1] / "_config.yml").read_text()
    assert re.search(r"^\s*nb_output_stderr: remove\b", conf, re.M), "stderr on the page"
    fig_md = out.cells[4].source
    assert fig_md.startswith(
        "```{glue:figure} fig-42-rise\n:name: fig-42-rise\n:alt: A line rises from 0 to 1."
    )
    assert "It is straight." in fig_md
    # the figure is kept only as a glue record (shown once, by the numbered figure)
    (fig_out,) = [o for o in out.cells[3].outputs if o.get("name") != "stderr"]
    assert set(fig_out.data) == {GLUE + "image/png", GLUE + "text/plain"}
    png = base64.b64decode(fig_out.data[GLUE + "image/png"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    # the header carries the scorecard's one-line summary and the download links
    header = out.cells[1].source
    assert summary_of(_ledger_json(), "`ci`") in header
    assert "{download}`the source (.py) <../../notebooks/42_demo.py>`" in header
    assert out.metadata["layerwise"]["scale"] == "ci"
    # decorating twice gives the same notebook (re-rendering after `make html`)
    pages.decorate(path, res, "ci")
    again = nbformat.read(path, as_version=4)
    assert [c.source for c in again.cells] == [c.source for c in out.cells]


def test_glued_numbers_are_what_myst_nb_reads(monkeypatch, tmp_path):
    """The glue records of Chapter.glue and Chapter.figure are the ones myst-nb's glue extracts: the
    rendered page shows the formatted text (checked in a real build by test_book)."""
    from myst_nb.ext.glue import extract_glue_data

    ch = chapter.Chapter("42_demo", scale="ci", seed=0, device="cpu", results=tmp_path)
    outs = _captured_outputs(
        monkeypatch, lambda: (ch.glue("a", 1.5e14), ch.glue("b", "at this scale it holds"))
    )
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("", outputs=outs)])

    class Log:
        def warning(self, *a, **k):
            raise AssertionError(a)

    data = extract_glue_data(nb, [0], Log())
    assert dict(data["a"]["data"]) == {"text/plain": "1.50×10¹⁴"}
    assert dict(data["b"]["data"]) == {"text/plain": "at this scale it holds"}


def _repo(tmp_path: Path, monkeypatch) -> Path:
    root = tmp_path / "repo"
    (root / "notebooks").mkdir(parents=True)
    (root / "_toc.yml").write_text("root: book/intro\n")
    for stem, title in [("01_first", "Chapter 1 — First"), ("02_second", "Chapter 2 — Second")]:
        (root / "notebooks" / f"{stem}.py").write_text(f"# %% [markdown]\n# # {title}\n")
    monkeypatch.setenv("LAYERWISE_RESULTS", str(root / "results"))
    return root


def test_dashboard_totals_agree_with_the_ledgers_and_show_evidence(tmp_path, monkeypatch):
    root = _repo(tmp_path, monkeypatch)
    ci = root / "results" / "ci"
    ci.mkdir(parents=True)
    claims = _ledger_json()
    (ci / "01_first.json").write_text(json.dumps(_results(claims)))
    (ci / "02_second.json").write_text(json.dumps(_results(claims[:2])))
    with pytest.raises(Exception, match="no chapter results"):
        dashboard.save_evidence("paper", root=root)
    (root / "results" / "default").mkdir()
    (root / "results" / "default" / "01_first.json").write_text(
        json.dumps(_results(_ledger_json("default"), "default"))
    )
    ev = dashboard.save_evidence(
        "default", "default-cpu-test", root=root, command="make book SCALE=default"
    )
    meta = json.loads((ev / "META.json").read_text())
    assert (
        meta["scale"] == "default"
        and meta["command"] == "make book SCALE=default"
        and meta["chapters"] == ["01_first"]
    )
    assert {"machine", "device", "date", "git_commit", "versions"} <= set(meta)
    text = dashboard.write_dashboard(root).read_text()
    # one column for this build's ci run, one for the evidence (default); the whole-book row sums
    # both chapters
    assert (
        "ci (this build)" in text
        and "default (cpu," in text
        and "evidence/default-cpu-test/" in text
    )
    whole = tally(claims + claims[:2])
    cell = dashboard._kind_cell(claims + claims[:2])
    weak = undiscriminated(claims + claims[:2])[
        "reproduces"
    ]  # passes that rule out no alternative do not count
    assert weak > 0 and f"{weak} not discriminating" in cell
    assert (
        f"reproduces {whole['reproduces']['pass'] - weak}/"
        f"{sum(whole['reproduces'].values()) - whole['reproduces']['skipped']}" in cell
    )
    assert f"<b>{cell}</b>" in text
    assert '<a href="chapters/01_first.html#claim-r1">paper value</a>' in text
    assert '<a href="chapters/01_first.html">1. First</a>' in text
    # a chapter missing from a run says so instead of leaving an empty cell
    assert "not run" in text
    # every table scrolls inside the column (a phone shows many runs' columns without widening
    # the page)
    assert (
        text.count('<table class="lw-dash">')
        == text.count(f'{dashboard.SCROLL}<table class="lw-dash">')
        > 1
    )


def test_evidence_of_one_scale_is_one_column_newest_claim_first(tmp_path, monkeypatch):
    """Two tracked parts at ``paper`` (and one whole run) read as one dashboard column: each
    claim from the newest folder that graded it, the folders it comes from named in the cell,
    every folder listed."""
    import time

    root = _repo(tmp_path, monkeypatch)
    paper = root / "results" / "paper"
    paper.mkdir(parents=True)
    claims = _ledger_json("paper")
    for name, measured in [("paper-cpu-old", 1.0), ("paper-gpu-new", 1.04)]:
        got = [dict(c, measured=measured) if c["id"] == "r1" else c for c in claims]
        (paper / "01_first.json").write_text(json.dumps(_results(got, "paper")))
        dashboard.save_evidence("paper", name, root=root, claims=["r1"], note=f"part {name}")
        time.sleep(1.1)  # the dates order the folders
    (paper / "02_second.json").write_text(json.dumps(_results(claims, "paper")))
    (paper / "01_first.json").unlink()
    dashboard.save_evidence("paper", "paper-cpu-whole", root=root)
    runs = dashboard.load_runs(root)
    (merged,) = [r for r in runs if r["scale"] == "paper" and r["where"] != "build"]
    assert merged["label"] == "paper (tracked: 3 runs and parts)"
    first = merged["chapters"]["01_first"]
    assert [c["measured"] for c in first["claims"]] == [1.04]  # the newest part's value
    # the old part's only claim is re-graded by the new one: the cell does not name it
    assert first["sources"] == ["paper-gpu-new"]
    text = dashboard.write_dashboard(root).read_text()
    assert text.count("paper (tracked: 3 runs and parts)") == 3  # summary and both chapters
    assert "evidence/paper-gpu-new/" in text and "evidence/paper-cpu-old/<br>" not in text
    for name in ("paper-cpu-old", "paper-gpu-new", "paper-cpu-whole"):
        assert f"(`evidence/{name}/`)" in text  # each folder still listed with its META


def test_landing_cards_follow_the_executed_scale(tmp_path, monkeypatch):
    root = _repo(tmp_path, monkeypatch)
    (root / "book" / "chapters").mkdir(parents=True)
    fig = root / "results" / "ci" / "figures" / "01_first"
    fig.mkdir(parents=True)
    (fig / "a.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    claims = _ledger_json()
    (root / "results" / "ci" / "01_first.json").write_text(
        json.dumps(_results(claims, figures=["ci/figures/01_first/a.png"]))
    )
    nb = nbformat.v4.new_notebook()
    nb.metadata["layerwise"] = {"scale": "ci"}
    nbformat.write(nb, root / "book" / "chapters" / "01_first.ipynb")
    text = dashboard.write_summary(root).read_text()
    assert "This build shows the chapters executed at scale `ci`" in text
    assert ":link: chapters/01_first" in text and ":img-top: _generated/thumbs/01_first.png" in text
    assert summary_of(claims, None) in text
    # the book's totals, counted here by hand from the records: one row per kind present
    rows = {r.split("|")[1].strip(): r for r in text.splitlines() if r.startswith("| ")}
    for kind, name in dashboard.TOTAL_ROWS.items():
        mine = [c for c in claims if c.get("kind", "checks") == kind]
        if not mine:
            assert name not in rows
            continue
        cells = [x.strip() for x in rows[name].split("|")[2:-1]]
        passed = sum(c["status"] == "pass" for c in mine)
        weak = passed - sum(
            c["status"] == "pass" and (kind == "checks" or c.get("discriminates")) for c in mine
        )
        fails = sum(c["status"] == "fail" for c in mine)
        found = sum(c["status"] == "fail" and c.get("finding") for c in mine)
        counts = [len(mine), passed - weak, weak, found, fails - found,
                  *(sum(c["status"] == s for c in mine) for s in ("inconclusive", "skipped"))]
        assert cells == [str(n) if n else "—" for n in counts]
    # every column is explained; the failures are listed, none of them a finding here
    assert all(f"**{k}**" in text for k in dashboard.TOTAL_COLUMNS)
    failing = [c for c in claims if c["status"] == "fail"]
    assert failing and "**Failures that are not findings**" in text and "**Findings**" not in text
    for c in failing:
        assert f'href="chapters/01_first.html#claim-{c["id"]}"' in text
    assert "No run at `default` or `paper` is tracked yet" in text
    # which chapters ran on other inputs than their paper's, from the claims' conditions
    from layerwise.dashboard import inputs_list

    recs = [("01_first", "1. First", {"conditions": {"input": ["patches", "CIFAR-10"]}}),
            ("01_first", "1. First", {"conditions": {"input": ["patches", "CIFAR-10"]}}),
            ("02_second", "2. Second", {"conditions": {"width": [1, 2]}})]
    said = inputs_list(recs)
    assert "- 1. First: patches (paper: CIFAR-10).\n" in said and "Second" not in said
    assert inputs_list(recs[2:]) == ""
    # the printed book's title block: the scale, the code and the date a reader cites
    title = (root / "book" / "_generated" / "titlepage.md").read_text()
    assert "Chapters executed at scale <b>ci</b>" in title and "built 20" in title
    assert '<a href="../pdf/layerwise-ci.pdf">' in title
    assert "02_second" not in text  # not executed: no card
    assert (root / "book" / "_generated" / "thumbs" / "01_first.png").exists()


def test_pdf_page_count(tmp_path):
    pdf = tmp_path / "x.pdf"
    pdf.write_bytes(
        b"%PDF-1.4\n1 0 obj << /Type /Pages /Count 2 >>\n2 0 obj << /Type /Page >>\n3 "
        b"0 obj <</Type/Page/Parent 1 0 R>>\n"
    )
    assert render.pdf_pages(pdf) == 2


def test_glue_prefix_is_the_one_chapter_writes():
    """The page shaper reads glued outputs under the prefix ``Chapter`` writes them with."""
    from layerwise import pages

    assert pages.GLUE_PREFIX == chapter.GLUE_PREFIX == GLUE


def test_figure_directive_is_a_numbered_glue_figure():
    """Alt text on one line, backticks (which would end the MyST role) replaced, caption
    stripped."""
    from layerwise import pages

    md = pages.figure_directive("fig-42-rise", "  Rise.  It is straight.\n", "A `line`\n  rises.")
    assert (
        md == "```{glue:figure} fig-42-rise\n:name: fig-42-rise\n:alt: A 'line' rises.\n\n"
        "Rise.  It is straight.\n```"
    )
    # a figure whose text needs more than a phone's column carries its minimum width as a class
    md = pages.figure_directive("fig-42-rise", "Rise.", "A line.", phone_px=460)
    assert ":alt: A line.\n:figclass: lw-phone-460\n\nRise." in md


def test_phone_width_keeps_every_figure_text_at_9_px_or_scrolls():
    """D ≥ 72·W·9/f_min: a 7.2 in figure at 10 pt needs 467 → 480 px; at 4 in, 260 px fits the
    342 px column (0); the CSS has a rule for every width the figures can ask for."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from layerwise.chapter import PHONE_COLUMN_PX, phone_width

    fig, ax = plt.subplots(figsize=(7.2, 3))
    ax.set_xlabel("depth", fontsize=10)
    ax.tick_params(labelsize=12)
    assert phone_width(fig) == 480  # 72·7.2·9/10 = 466.6, rounded up to 20
    ax.set_xlabel("depth", fontsize=14)
    assert phone_width(fig) == 400  # now the ticks at 12 pt are the smallest: 388.8 → 400
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(4.0, 3))
    ax.tick_params(labelsize=10)
    ax.set_xlabel("depth", fontsize=10)
    assert PHONE_COLUMN_PX >= 72 * 4.0 * 9 / 10 and phone_width(fig) == 0
    plt.close(fig)
    css = (Path(__file__).resolve().parents[1] / "book" / "_css" / "layerwise.css").read_text()
    for w in range(360, 1001, 20):
        assert f"figure.lw-phone-{w} img {{ min-width: {w}px; }}" in css


def test_execution_header_without_a_ledger_says_unknown():
    """A chapter whose results JSON is missing still gets a header (question marks, no crash)."""
    from layerwise import pages

    header = pages.execution_header({}, "ci", "42_demo", None)
    assert "in **unknown** of wall time" in header and "on **?**" in header
    assert "`make chapter CH=42 SCALE=<ci|default|paper>`" in header and "Parameters: —." in header


def test_header_goes_between_the_introduction_and_the_first_section(tmp_path):
    cells = [
        nbformat.v4.new_markdown_cell("# Title\n\nIntro.\n\n## Set-up\n\nSizes."),
        nbformat.v4.new_code_cell("x = 1"),
    ]
    path = tmp_path / "42_demo.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    res = tmp_path / "42_demo.json"
    res.write_text(json.dumps(_results(_ledger_json())))
    for _ in range(2):  # decorating again changes nothing
        pages.decorate(path, res, "ci")
        out = nbformat.read(path, as_version=4)
        assert [c.source.split("\n")[0] for c in out.cells[:3]] == [
            "# Title",
            "```{admonition} Scorecard and run",
            "## Set-up",
        ]
        assert out.cells[0].source.strip().endswith("Intro.") and len(out.cells) == 4


def test_the_pdf_is_named_by_the_scale_of_the_build_it_prints(tmp_path):
    root = tmp_path / "repo"
    (root / "book" / "chapters").mkdir(parents=True)
    (root / "_toc.yml").write_text(
        "root: book/intro\nchapters:\n- file: book/chapters/01_a\n- file: book/chapters/02_b\n"
    )
    assert render.built_scale(root) == "unexecuted"
    for stem, scale in (("01_a", "default"), ("02_b", "default")):
        nb = nbformat.v4.new_notebook()
        nb.metadata["layerwise"] = {"scale": scale}
        nbformat.write(nb, root / "book" / "chapters" / f"{stem}.ipynb")
    assert render.built_scale(root) == "default"
    assert render.pdf_path(root).name == "layerwise-default.pdf"
    nb = nbformat.v4.new_notebook()
    nb.metadata["layerwise"] = {"scale": "ci"}
    nbformat.write(nb, root / "book" / "chapters" / "02_b.ipynb")
    assert render.built_scale(root) == "mixed"  # never printed as if it were one scale
    assert render.pdf_path(root).name == "layerwise-mixed.pdf"
