"""End to end: every chapter executes at `ci` with all claims passing, writes its figures and
results, the HTML book builds, and every rendered chapter displays offline in headless Chromium."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from layerwise import book, render, runner
from layerwise.params import ParameterError
from layerwise.plotting import is_blank

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))

#: Figures each chapter must write (checked independently of what the notebook says it wrote).
EXPECTED_FIGURES: dict[str, set[str]] = {
    "01_layer_decoupling": {
        "nu_scale",
        "augmented_covariance",
        "fixed_layer_deviation",
        "footnote3_error",
        "intermediate_capacities",
        "pseudo_random_capacities",
        "redundancy",
        "smooth_nu",
    },
    "02_capacity_diffusion": {
        "residual_diffusion",
        "drift_limit",
        "t_collapse",
        "effective_receptive_field",
        "gradients_vs_capacity",
        "shattering",
    },
    "03_vanilla_pathologies": {
        "fig2_log_moments",
        "fig2_conv",
        "fig2_drift_diffusion",
        "width_dependence",
        "fig3_fc",
        "fig3_conv",
        "coactivation",
        "datasets",
    },
    "04_bn_exploding_sensitivity": {
        "fig4_conv",
        "fig4_fc",
        "dbn_vs_conditioning",
        "datasets",
        "batch_size",
    },
    "05_resnet_power_laws": {"fig5_fc", "resnet_vs_ff", "datasets", "fig5_conv"},
    "06_linear_regions": {
        "slice_regions",
        "counts_vs_neurons",
        "lines_vs_neurons",
        "counts_training",
        "activation_vs_linear",
        "tangent_sensitivity",
    },
    "07_meanfield_chaos": {
        "length_map",
        "maps_vs_networks",
        "correlation_map",
        "phase_diagram",
        "circle_pca",
        "circle_length",
        "depth_scale_sweep",
        "trainability",
    },
    "08_information_geometry": {
        "fisher_rao_identity",
        "reparametrisation",
        "kfac_heatmaps",
        "kfac_spectra",
        "label_randomisation",
        "label_randomisation_protocols",
        "tangent_sensitivity",
    },
}


# -------------------------------------------------------------------------------------------
# Fast checks of the pipeline's plumbing
# -------------------------------------------------------------------------------------------
def test_every_notebook_pair_is_in_sync():
    assert runner.check_pairs(ROOT) == []


def test_every_chapter_is_in_the_table_of_contents():
    toc = set(render.toc_files(ROOT))
    assert {f"book/chapters/{c}" for c in CHAPTERS} <= toc
    assert {t for t in toc if t.startswith("book/chapters/")} <= {
        f"book/chapters/{c}" for c in CHAPTERS
    }


def test_every_chapter_has_a_parameters_cell_with_scale_seed_device():
    for name in CHAPTERS:
        params = runner.notebook_parameters(ROOT / "notebooks" / f"{name}.ipynb")
        assert {"scale", "seed", "device"} <= set(params), name


def test_overrides_are_parsed_as_literals():
    assert runner.parse_overrides(
        ["width=2000", "phi='tanh'", "eps=1e-3", "name=abc", "xs=[1, 2]"]
    ) == {"width": 2000, "phi": "tanh", "eps": 1e-3, "name": "abc", "xs": [1, 2]}
    for bad in (["width"], ["=3"], ["2x=3"]):
        with pytest.raises(ParameterError, match="malformed"):
            runner.parse_overrides(bad)


def test_unknown_chapter_names_the_available_ones():
    with pytest.raises(ParameterError, match="chapter='99' is not allowed; choose one of: .*07"):
        runner.select(["99"], ROOT)
    assert list(runner.select(["7"], ROOT)) == ["07"]


def _tiny_repo(tmp_path: Path, body: str) -> Path:
    """A repository with one chapter notebook: a parameters cell and ``body``."""
    import nbformat

    root = tmp_path / "repo"
    (root / "notebooks").mkdir(parents=True)
    params = nbformat.v4.new_code_cell('scale = "ci"\nseed = 0\ndevice = "auto"\nwidth = None')
    params.metadata["tags"] = ["parameters"]
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_markdown_cell("# Tiny"), params, nbformat.v4.new_code_cell(body)]
    )
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, root / "notebooks" / "01_tiny.ipynb")
    return root


def test_run_chapter_executes_in_a_child_and_decorates(tmp_path, monkeypatch, capfd):
    """papermill runs the notebook in a child process with the parameters injected and
    ``$LAYERWISE_RESULTS`` set; the executed copy gets the execution header; the terminal shows
    papermill's bar over the chapter's cells and what the kernel writes to stderr (the bar of a
    block run)."""
    import nbformat

    from layerwise import runner

    write = (
        "import json, os, pathlib\n"
        "from layerwise.store import ResultsStore\n"
        "d = pathlib.Path(os.environ['LAYERWISE_RESULTS']) / scale\n"
        "d.mkdir(parents=True, exist_ok=True)\n"
        "ResultsStore(d / 'store').get_or_compute_blocks('01_tiny.sims', {}, 3, lambda i: "
        "{'v': [i]}, code_version='t', progress=True)\n"
        "(d / '01_tiny.json').write_text(json.dumps({'claims': [], 'params': {'width': "
        "width}, 'seed': seed}))\n"
        "print(width * 2)"
    )
    root = _tiny_repo(tmp_path, write)
    monkeypatch.setenv("LAYERWISE_RESULTS", str(tmp_path / "results"))
    nb = runner.select(["1"], root)["01"]
    out = runner.run_chapter(
        nb,
        scale="ci",
        seed=4,
        overrides={"width": 21},
        root=root,
        executed_dir=tmp_path / "ex",
    )
    got = nbformat.read(out, as_version=4)
    assert (
        got.cells[1].metadata["tags"] == ["lw-execution-header"]
        and "Parameters: `width=21`" in got.cells[1].source
    )
    assert "seed 4" in got.cells[1].source
    err = capfd.readouterr().err
    assert re.search(r"01_tiny: .*\| [0-4]/4 ", err), err  # the cells, papermill's injected too
    assert re.search(r"sims: .*\| [0-3]/3 ", err), err  # the kernel's block bar
    assert any(
        o.get("text", "").strip() == "42"
        for c in got.cells
        if c.cell_type == "code"
        for o in c.outputs
    )
    with pytest.raises(ParameterError, match=r"unknown parameter\(s\) \['depth'\]"):
        runner.run_chapter(nb, scale="ci", overrides={"depth": 3}, root=root)


def test_run_chapter_names_the_failing_cell(tmp_path, monkeypatch):
    from layerwise import runner

    root = _tiny_repo(tmp_path, "raise ValueError('width must be given')")
    monkeypatch.setenv("LAYERWISE_RESULTS", str(tmp_path / "results"))
    nb = root / "notebooks" / "01_tiny.ipynb"
    # execution count 3: the parameters cell, papermill's injected one, then the failing cell
    with pytest.raises(
        runner.ChapterFailed, match="chapter 01_tiny failed at scale ci in cell 3"
    ) as err:
        runner.run_chapter(nb, scale="ci", root=root, executed_dir=tmp_path / "ex")
    assert "ValueError" in str(err.value) and "width must be given" in str(err.value)


def test_run_chapter_stops_a_chapter_past_its_time_limit(tmp_path, monkeypatch):
    import time

    root = _tiny_repo(tmp_path, "import time\ntime.sleep(120)")
    monkeypatch.setenv("LAYERWISE_RESULTS", str(tmp_path / "results"))
    t0 = time.perf_counter()
    with pytest.raises(runner.ChapterFailed, match="at scale ci exceeded its time limit of 3 s"):
        runner.run_chapter(
            root / "notebooks" / "01_tiny.ipynb", scale="ci", timeout=3, root=root,
            executed_dir=tmp_path / "ex",
        )
    assert time.perf_counter() - t0 < 60


@pytest.mark.parametrize("executor, how", [("local", "ctrl-c"), ("dask", "ctrl-c"),
                                           ("local", "kill")])
def test_ctrl_c_ends_with_one_line_and_status_130(tmp_path, executor, how):
    """Ctrl-C during ``make chapter`` (SIGINT to the terminal's whole process group, here while
    the chapter's kernel is in a cell): one line saying how to resume, exit status 130, no
    traceback (with ``--executor dask``, none from the LocalCluster's workers either), and the
    chapter's kernel gone. A plain ``kill`` of the command alone (SIGTERM) stops it the same
    way, with status 143."""
    import signal
    import time

    if executor == "dask":
        pytest.importorskip("distributed")

    started = tmp_path / "started"
    root = _tiny_repo(
        tmp_path,
        f"import os, pathlib, time\npathlib.Path({str(started)!r}).write_text(str(os.getpid()))\n"
        "time.sleep(300)",
    )
    env = {**os.environ, "LAYERWISE_RESULTS": str(tmp_path / "results")}
    cmd = [sys.executable, "-m", "layerwise", "book", "run", "--scale", "ci", "--chapters", "01"]
    cmd += ["--executor", executor]
    p = subprocess.Popen(
        cmd,
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # as from a terminal: a test run started in the background (CI, nohup) inherits SIGINT
        # ignored, and Python then installs no KeyboardInterrupt handler at all
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 180
        while not started.exists() or not started.read_text():
            assert p.poll() is None and time.monotonic() < deadline, p.communicate()
            time.sleep(0.2)
        if how == "ctrl-c":
            os.killpg(p.pid, signal.SIGINT)
        else:  # a plain `kill` of the command alone: its chapter must not run on
            os.kill(p.pid, signal.SIGTERM)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    assert p.returncode == (130 if how == "ctrl-c" else 143), err
    assert "Traceback" not in err and err.strip().splitlines()[-1] == book.INTERRUPTED, err
    kernel = int(started.read_text())
    deadline = time.monotonic() + 30  # the kernel polls its parent and leaves when it is gone
    while time.monotonic() < deadline:
        try:
            os.kill(kernel, 0)
        except ProcessLookupError:
            break
        time.sleep(0.5)
    else:
        os.kill(kernel, signal.SIGKILL)
        raise AssertionError(f"the chapter's kernel {kernel} outlived the interrupted run")


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "LAYERWISE_RESULTS": str(ROOT / "results")}
    return subprocess.run(
        [sys.executable, "-m", "layerwise", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["book", "run", "--scale", "huge", "--chapters", "07"],
            "scale='huge' is not allowed; choose one of: 'ci', 'default', 'paper'",
        ),
        (["book", "run", "--scale", "ci", "--chapters", "99"], "chapter='99' is not allowed"),
        (
            ["book", "run", "--scale", "ci", "--chapters", "07", "-p", "widht=3"],
            "unknown parameter(s) ['widht']",
        ),
        (
            ["book", "run", "--scale", "ci", "--chapters", "07", "-p", "width"],
            "is malformed; expected NAME=VALUE",
        ),
        (
            ["book", "run", "--scale", "ci", "--chapters", "07", "--device", "tpu"],
            "device='tpu' is not allowed",
        ),
        (["frobnicate"], "command='frobnicate' is not allowed"),
        (
            ["book", "run", "--scale", "ci", "--chapters", "07", "--jobs", "0"],
            "jobs='0' is not allowed; expected a positive integer",
        ),
    ],
)
def test_bad_command_lines_fail_fast_with_a_clear_message(args, message):
    p = run_cli(*args, timeout=60)
    assert p.returncode == 2 and message in p.stderr, p.stderr


def _fake_chapters(tmp_path, monkeypatch, fail=(), interrupt=()):
    """``book._run_chapters`` over stand-in chapters: a fake ``run_chapter`` that records when each
    ran, writes its ledger and fails (or is interrupted) where asked."""
    import threading
    import types

    spans, lock = {}, threading.Lock()
    monkeypatch.setenv("LAYERWISE_RESULTS", str(tmp_path / "results"))
    (tmp_path / "results" / "ci").mkdir(parents=True)

    def fake(nb, *, scale, quiet=False, **_):
        t0 = time.monotonic()
        if nb.stem in interrupt:
            raise KeyboardInterrupt
        time.sleep(0.3)
        with lock:
            spans[nb.stem] = (t0, time.monotonic(), quiet)
        if nb.stem in fail:
            raise runner.ChapterFailed(f"chapter {nb.stem} failed")
        (tmp_path / "results" / scale / f"{nb.stem}.json").write_text('{"claims": []}')

    monkeypatch.setattr(book, "run_chapter", fake)
    names = ["01_layer_decoupling", "02_capacity_diffusion", "03_vanilla_pathologies",
             "06_linear_regions", "07_meanfield_chaos", "08_information_geometry"]
    todo = {n[:2]: tmp_path / f"{n}.ipynb" for n in names}
    # the last recorded wall times decide which one-core chapter starts first: the longest
    for n, wall in [("08_information_geometry", 200), ("06_linear_regions", 60)]:
        (tmp_path / "results" / "ci" / f"{n}.json").write_text(json.dumps({"wall_time_s": wall}))

    def run(jobs):
        a = types.SimpleNamespace(scale="ci", seed=0, device="cpu", jobs=jobs)
        return book._run_chapters(a, todo, {}, None, tmp_path, "local", None)

    return spans, run


def test_one_core_chapters_run_side_by_side_and_the_others_alone(tmp_path, monkeypatch, capsys):
    spans, run = _fake_chapters(tmp_path, monkeypatch, fail=("02_capacity_diffusion",))
    assert run(2) == ["02_capacity_diffusion"]  # a failure is reported, the others still run
    one_core = ["01_layer_decoupling", "02_capacity_diffusion", "06_linear_regions",
                "08_information_geometry"]
    assert sorted(spans) == sorted([*one_core, "03_vanilla_pathologies", "07_meanfield_chaos"])
    overlap = lambda a, b: spans[a][0] < spans[b][1] and spans[b][0] < spans[a][1]  # noqa: E731
    assert any(overlap(a, b) for a in one_core for b in one_core if a < b)  # side by side
    for alone in ("03_vanilla_pathologies", "07_meanfield_chaos"):  # never beside another
        assert not any(overlap(alone, b) for b in spans if b != alone)
        assert spans[alone][2] is False  # with its progress bars
    assert all(spans[n][2] for n in one_core)  # side by side: no bars
    first = min(one_core, key=lambda n: spans[n][0])
    assert first == "08_information_geometry"  # the longest last time starts first
    out = capsys.readouterr().out
    assert "4 one-core chapters, 2 at a time" in out and "08_information_geometry done in" in out


def test_jobs_1_runs_every_chapter_alone_in_book_order(tmp_path, monkeypatch):
    spans, run = _fake_chapters(tmp_path, monkeypatch)
    assert run(1) == []
    order = sorted(spans, key=lambda n: spans[n][0])
    assert order == sorted(spans)  # book order
    assert all(spans[a][1] <= spans[b][0] for a, b in zip(order, order[1:]))
    assert not any(q for *_, q in spans.values())


def test_an_interrupt_beside_other_chapters_stops_them_all(tmp_path, monkeypatch):
    class Proc:
        killed = False

        def kill(self):
            self.killed = True

    proc = Proc()
    runner.LIVE.add(proc)
    try:
        spans, run = _fake_chapters(tmp_path, monkeypatch, interrupt=("06_linear_regions",))
        with pytest.raises(KeyboardInterrupt):
            run(2)
        assert proc.killed  # every chapter process still running is stopped
        assert "03_vanilla_pathologies" not in spans  # and nothing after starts
    finally:
        runner.LIVE.discard(proc)


# -------------------------------------------------------------------------------------------
# The whole book at ci scale
# -------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def ci_book():
    """Execute every chapter at ci scale and build the HTML (once per test session)."""
    p = run_cli("book", "all", "--scale", "ci", "--seed", "0", timeout=1800)
    print(p.stdout[-3000:], p.stderr[-3000:])
    return p


@pytest.mark.slow
def test_the_ci_book_runs_and_builds(ci_book):
    assert ci_book.returncode == 0, ci_book.stderr[-6000:]
    assert (ROOT / "_build" / "html" / "index.html").exists()
    assert (ROOT / "_build" / "html" / "book" / "dashboard.html").exists()


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_claims_do_not_fail_at_ci(ci_book, chapter):
    """No claim fails at ci (inconclusive is allowed and shown as such; it never counts as
    a pass)."""
    from layerwise.claims import KINDS, OUTCOMES

    res = json.loads((ROOT / "results" / "ci" / f"{chapter}.json").read_text())
    assert res["chapter"] == chapter and res["scale"] == "ci" and res["seed"] == 0
    assert res["claims"], f"{chapter} states no claims"
    for c in res["claims"]:
        assert {
            "id",
            "kind",
            "statement",
            "measured",
            "se",
            "interval",
            "reference",
            "tolerance",
            "rule",
            "status",
            "source",
            "min_scale",
            "justification",
        } <= set(c)
        assert c["kind"] in KINDS and c["status"] in OUTCOMES
    failed = [
        f"{c['id']}: measured {c['measured']} (interval {c['interval']}) vs rule {c['rule']}"
        for c in res["claims"]
        if c["status"] == "fail"
    ]
    assert not failed, f"{chapter}: failed claims:\n" + "\n".join(failed)


def second_kernel_set() -> str:
    """The torch CPU kernels this machine does not use by itself: ``avx2`` where torch
    picks AVX-512, else ``default`` (the plain kernels), so the chapters are always checked under
    two sets."""
    import torch

    return "default" if torch.backends.cpu.get_cpu_capability().upper() == "AVX2" else "avx2"


@pytest.mark.slow
@pytest.mark.parametrize("chapter", [c for c in CHAPTERS if c[:2] in ("06", "07", "08")])
def test_training_chapters_do_not_fail_under_the_other_kernel_set(chapter, tmp_path, monkeypatch):
    """Chapters 6–8 train networks, where rounding can take a chaotic training elsewhere: they
    are also run under the other CPU kernel set (an empty store of their own), and no claim may fail
    there either."""
    monkeypatch.setenv("LAYERWISE_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", second_kernel_set())
    runner.run_chapter(
        ROOT / "notebooks" / f"{chapter}.ipynb",
        scale="ci",
        device="cpu",
        root=ROOT,
        executed_dir=tmp_path / "executed",
    )
    res = json.loads((tmp_path / "results" / "ci" / f"{chapter}.json").read_text())
    failed = [
        f"{c['id']}: {c['measured']} vs {c['rule']}" for c in res["claims"] if c["status"] == "fail"
    ]
    assert res["claims"] and not failed, (
        f"{chapter} under ATEN_CPU_CAPABILITY={second_kernel_set()}: {failed}"
    )


SMART_QUOTES = str.maketrans("‘’“”", "''\"\"")


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_what_we_found_says_what_the_scorecard_says(ci_book, chapter):
    """Every chapter's "What we found" ends with the ledger's own sentence
    (scorecard.outcomes_sentence: the scorecard's summary, then every claim of any kind that does
    not pass), computed after the last claim — so no summary counts fewer failures than its
    scorecard — and the page shows it."""
    import html as html_lib

    from layerwise.scorecard import outcomes_sentence

    res = json.loads((ROOT / "results" / "ci" / f"{chapter}.json").read_text())
    glued = [v for k, v in res["glued"].items() if k in ("found_outcomes", "found_summary")]
    assert glued == [outcomes_sentence(res["claims"], "ci")], chapter
    page = (ROOT / "_build" / "html" / "book" / "chapters" / f"{chapter}.html").read_text()
    found = page[page.index('id="what-we-found"') : page.index('id="scorecard"')]
    plain = html_lib.unescape(re.sub(r"<[^>]+>", "", found))
    text = " ".join(plain.translate(SMART_QUOTES).split())  # Sphinx typesets ' and " as ’ and ”
    assert " ".join(glued[0].translate(SMART_QUOTES).split()) in text, chapter


@pytest.mark.slow
def test_dashboard_and_headers_agree_with_the_ledgers(ci_book):
    import nbformat

    from layerwise.dashboard import _kind_cell
    from layerwise.scorecard import summary_of

    all_claims = []
    for chapter in CHAPTERS:
        res = json.loads((ROOT / "results" / "ci" / f"{chapter}.json").read_text())
        all_claims += res["claims"]
        nb = nbformat.read(ROOT / "book" / "chapters" / f"{chapter}.ipynb", as_version=4)
        (header,) = [c for c in nb.cells if "lw-execution-header" in c.metadata.get("tags", [])]
        assert summary_of(res["claims"], "`ci`") in header.source, chapter
    dash = (ROOT / "book" / "dashboard.md").read_text()
    assert f"<b>{_kind_cell(all_claims)}</b>" in dash


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_figures_are_written_and_not_blank(ci_book, chapter):
    assert chapter in EXPECTED_FIGURES, (
        f"add the figures {chapter} must produce to EXPECTED_FIGURES"
    )
    fig_dir = ROOT / "results" / "ci" / "figures" / chapter
    for name in EXPECTED_FIGURES[chapter]:
        for ext in (".png", ".svg", ".npz"):
            assert (fig_dir / f"{name}{ext}").exists(), f"{chapter}: missing {name}{ext}"
        assert not is_blank(fig_dir / f"{name}.png"), f"{chapter}: {name}.png is blank"


@pytest.mark.slow
def test_executed_chapters_hide_parameters_and_show_the_execution_header(ci_book):
    import nbformat

    for chapter in CHAPTERS:
        nb = nbformat.read(ROOT / "book" / "chapters" / f"{chapter}.ipynb", as_version=4)
        for cell in nb.cells:
            tags = cell.metadata.get("tags", [])
            if "parameters" in tags or "injected-parameters" in tags:
                assert "remove-cell" in tags, chapter
        header = [c for c in nb.cells if "lw-execution-header" in c.metadata.get("tags", [])]
        assert (
            len(header) == 1
            and "scale **`ci`**" in header[0].source
            and "wall time" in header[0].source
        )


# -------------------------------------------------------------------------------------------
# The rendered pages, in a real browser with no network
# -------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def browser():
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver):
        pytest.fail(
            "headless Chromium is required: `make browser` installs chromium and chromium-driver"
        )
    os.environ["SE_OFFLINE"] = "true"  # never let Selenium Manager reach the network
    from selenium import webdriver

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in (*render.CHROMIUM_FLAGS, "--disable-dev-shm-usage", "--window-size=1280,1600"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    drv = webdriver.Chrome(options=opts, service=webdriver.ChromeService(executable_path=driver))
    drv.set_script_timeout(60)
    yield drv
    drv.quit()


LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:", "chrome:", "chrome-extension:", "devtools:")
#: Elements of the article that reach past the viewport's right edge, outside the containers that
#: scroll on their own (code, outputs, typeset math, tables with a scroll wrapper).
WIDER_THAN_VIEWPORT_JS = (
    "const w = document.documentElement.clientWidth;"
    "return Array.from(document.querySelectorAll('article *')).filter(e => "
    "e.getBoundingClientRect().right > w + 1"
    " && !e.closest('pre, .highlight, .cell_output, mjx-container, .MathJax, "
    "details:not([open]), .table-wrapper, .pst-scrollable-table-container, "
    "figure[class*=\"lw-phone-\"]'))"
    ".slice(0, 5).map(e => e.tagName + '.' + e.className)"
)
#: WCAG contrast of every text-bearing element of the scorecards, the dashboard and the landing
#: totals against its effective background (the colours as rendered, alpha composited up the
#: ancestors): the elements under 4.5:1, as [element, colour, background, ratio, text].
LOW_CONTRAST_JS = r"""
function rgba(c) { const m = (c.match(/[\d.]+/g) || []).map(Number);
  return [m[0] || 0, m[1] || 0, m[2] || 0, m.length > 3 ? m[3] : 1]; }
function lum(c) { const v = c.slice(0, 3).map(x => { x /= 255;
  return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); });
  return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; }
function over(top, base) { const a = top[3];
  return [0, 1, 2].map(i => top[i] * a + base[i] * (1 - a)).concat([1]); }
function background(e) { const layers = [];
  for (; e; e = e.parentElement) { const c = rgba(getComputedStyle(e).backgroundColor);
    if (c[3] > 0) { layers.push(c); if (c[3] >= 1) break; } }
  let base = layers.length && layers[layers.length - 1][3] >= 1 ? layers.pop() : [255, 255, 255, 1];
  while (layers.length) base = over(layers.pop(), base);
  return base; }
const low = [];
for (const e of document.querySelectorAll('.lw-card *, table.lw-dash *, article table *')) {
  if (!e.getClientRects().length) continue;
  if (![...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
  const b = background(e), f = over(rgba(getComputedStyle(e).color), b);
  const l1 = lum(f), l2 = lum(b), r = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
  if (r < 4.5) low.push([e.tagName + '.' + e.className, getComputedStyle(e).color,
                         b.map(Math.round).join(','), +r.toFixed(2),
                         e.textContent.trim().slice(0, 30)]);
}
return low;
"""

#: Raw sub/superscript notation a reader sees (issue #30): text of the article and of the
#: sidebars' navigation links, outside code, typeset math and collapsed inputs, where a letter (any
#: script), ``)``, ``]``, ``‖``, ``|`` or ``∇`` is followed by ``_`` or ``^`` and then a letter, a
#: digit, ``{`` or ``(`` (``χ^l``, ``δ_BN χ``, ``r_eff(x^{l−1})``): [count, first snippets].  The
#: same pattern as ``RAW_NOTATION`` in tests/test_notation.py (the sources, without a browser).
RAW_NOTATION_JS = r"""
const raw = /[\p{L}\p{M})\]‖|∇][_^][\p{L}\p{N}{(]/gu;
const skip = 'code, pre, .highlight, mjx-container, .MathJax, script, style, .cell_input';
const roots = [...document.querySelectorAll('article, .bd-sidebar-primary nav a, '
                                            + '.bd-sidebar-secondary nav a')];
const found = [];
for (const root of roots) {
  const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    if (n.parentElement && n.parentElement.closest(skip)) continue;
    const t = n.textContent;
    for (const m of t.matchAll(raw))
      found.push(t.slice(Math.max(m.index - 15, 0), m.index + 15).trim());
  }
}
return [found.length, found.slice(0, 8)];
"""


@pytest.mark.browser
def test_the_raw_notation_check_flags_raw_text_and_skips_math_and_code(browser, tmp_path):
    """RAW_NOTATION_JS can fail: raw forms in prose and in a sidebar link are found, typeset math,
    code and Unicode scripts are not."""
    page = tmp_path / "raw.html"
    page.write_text(
        '<html><body><div class="bd-sidebar-primary"><nav><a href="#">The δ_BN χ step</a></nav>'
        "</div><article><p>the sensitivity χ^l grows; r_eff(x^{l−1}) is small</p>"
        "<code>n_nets</code><pre>x_l = 1</pre><mjx-container>χ_l</mjx-container>"
        "<p>χᴸ, log₁₀ χᴸ, effective rank r(xˡ⁻¹), a claim such as train_grows</p>"
        "<p>slopes 1.0 ± 0.1, 2.0 ± 0.1, 3.0 ± 0.2, 4.0 ± 0.1 and 5.0 ± 0.3</p>"
        "<p>four: 1 ± 1, 2 ± 1, 3 ± 1, 4 ± 1</p></article>"
        "</body></html>",
        encoding="utf-8",
    )
    browser.get(page.as_uri())
    uncaptioned = browser.execute_script(UNCAPTIONED_TABLES_JS)
    assert uncaptioned == [], f"{page}: tables without a 'Table N.k:' caption: {uncaptioned}"
    unlinked = browser.execute_script(UNLINKED_FIGURES_JS)
    assert unlinked == [], f"{page}: figures not linked to their full-size image: {unlinked}"
    n_raw, raw = browser.execute_script(RAW_NOTATION_JS)
    assert n_raw == 5, raw
    assert [any(f in r for r in raw) for f in ("χ^l", "r_eff", "x^{", "δ_BN", "n_grows")] == [
        True
    ] * 5, raw
    dense = browser.execute_script(DENSE_PARAGRAPHS_JS)
    assert [n for n, _ in dense] == [5] and dense[0][1].startswith("slopes"), dense


#: Captions of tables that run past the right edge of the screen or of the table's scroll
#: container (a wide table scrolls in its container; its caption must stay readable without
#: scrolling, on a phone and on a desktop).
CUT_CAPTIONS_JS = (
    "const w = document.documentElement.clientWidth;"
    "return [...document.querySelectorAll('article table caption')]"
    ".filter(c => { const box = c.closest('.pst-scrollable-table-container, .table-wrapper');"
    " const edge = box ? Math.min(w, box.getBoundingClientRect().right) : w;"
    " return c.getBoundingClientRect().right > edge + 1; })"
    ".map(c => c.textContent.trim().slice(0, 40))"
)
#: Paragraphs of the article that carry more than four "x ± y" values (issue #30: a sentence
#: with six to eighteen uncertainties reads better as a numbered table, ``Chapter.table``):
#: [count, start].
MAX_UNCERTAINTIES_PER_PARAGRAPH = 4
DENSE_PARAGRAPHS_JS = (
    "return [...document.querySelectorAll('article p')]"
    ".filter(p => !p.closest('.lw-card, table, figure, .cell_input'))"
    ".map(p => [(p.innerText.match(/±/g) || []).length, p.innerText.slice(0, 60)])"
    f".filter(x => x[0] > {MAX_UNCERTAINTIES_PER_PARAGRAPH})"
)


#: Data tables of the article (cell outputs, not the scorecards or the dashboard) without a
#: "Table N.k: …" caption (issue #30: numbered, captioned tables; ``Chapter.table``).
UNCAPTIONED_TABLES_JS = (
    "return [...document.querySelectorAll('article div.cell_output table')]"
    ".filter(t => !t.closest('.lw-card, table.lw-dash'))"
    ".filter(t => !(t.caption && /^Table \\d+\\.\\d+: \\S/.test(t.caption.textContent.trim())))"
    ".map(t => t.textContent.trim().slice(0, 40))"
)
#: Figures whose image is not a link to itself (the full-size image a phone reader opens; at
#: 390 px a 7.5-inch figure is shown at a quarter of its pixels).
UNLINKED_FIGURES_JS = (
    "return [...document.querySelectorAll('article figure img')].filter(i => {"
    " const a = i.closest('a'); return !a || a.href.split('/').pop() !== "
    "i.src.split('/').pop(); }).map(i => i.src.split('/').pop())"
)


#: On a phone: figure images shown narrower than the width their class asks for (text under 9 px,
#: chapter.phone_width), scorecard outcome words not shown, and scroll containers hiding columns
#: without the edge shadows that say so.
PHONE_JS = (
    "const figs = [...document.querySelectorAll('article figure[class*=\"lw-phone-\"] img')]"
    ".filter(i => { const w = +[...i.closest('figure').classList].find(c => "
    "c.startsWith('lw-phone-')).slice(9); return i.getBoundingClientRect().width < w - 1; })"
    ".map(i => i.src.split('/').pop());"
    "const words = [...document.querySelectorAll('table.lw-scorecard .lw-word')]"
    ".filter(e => !e.getClientRects().length).length;"
    "const bare = [...document.querySelectorAll('.pst-scrollable-table-container')]"
    ".filter(c => c.scrollWidth > c.clientWidth + 1 && "
    "!getComputedStyle(c).backgroundImage.includes('gradient'))"
    ".map(c => c.textContent.trim().slice(0, 40));"
    "return [figs, words, bare];"
)


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize(
    "page",
    [f"book/chapters/{c}" for c in CHAPTERS] + ["book/intro", "book/dashboard", "book/reproduce"],
)
def test_rendered_page_displays_offline(ci_book, browser, page):
    html = ROOT / "_build" / "html" / f"{page}.html"
    assert html.exists(), html
    browser.get_log("performance")  # drop earlier pages' events
    browser.get(html.as_uri())
    typeset = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "if (!window.MathJax || !MathJax.startup) { done('no MathJax'); return; }"
        "MathJax.startup.promise.then(() => done('ok')).catch(e => done('error: ' + e));"
    )
    text = browser.execute_script("return document.querySelector('article, main, body').innerText")
    n_math = browser.execute_script("return document.querySelectorAll('mjx-container').length")
    if page.startswith("book/chapters/"):  # every chapter states its equations
        assert typeset == "ok", f"{page}: MathJax did not typeset ({typeset})"
        assert n_math > 0, f"{page}: no typeset equation"
    else:  # Sphinx loads MathJax only on pages with math; then it must have typeset
        assert typeset in ("ok", "no MathJax"), f"{page}: MathJax failed ({typeset})"
        assert typeset == "ok" or not browser.find_elements("css selector", ".math"), (
            f"{page}: math left untypeset"
        )
    assert "$$" not in text and "\\[" not in text and "\\begin{" not in text, (
        f"{page}: raw TeX left on the page"
    )
    broken = browser.execute_script(
        "return Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i "
        "=> i.src)"
    )
    assert broken == [], f"{page}: images that did not load: {broken}"
    if page.startswith("book/chapters/"):
        assert browser.execute_script("return document.images.length") >= len(
            EXPECTED_FIGURES.get(page.split("/")[-1], ())
        )
    urls = []
    for entry in browser.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg.get("method") == "Network.requestWillBeSent":
            urls.append(msg["params"]["request"]["url"])
    external = [u for u in urls if not u.startswith(LOCAL_SCHEMES)]
    assert urls and not external, f"{page}: requests left the machine: {external}"
    # what a reader sees: no warnings or progress bars, no reprs or paths, code collapsed, real
    # alt text
    for noise in ("Warning:", "Traceback", "PosixPath(", "Claim(id=", "it/s]", "/root/", "/home/"):
        assert noise not in text, f"{page}: {noise!r} on the page"
    alts = browser.execute_script(
        "return Array.from(document.querySelectorAll('article img')).map(i => i.alt)"
    )
    bad_alt = [
        a
        for a in alts
        if not a.strip() or re.search(r"(^/|results/|_build/|\.(png|svg|jpe?g)$)", a)
    ]
    assert not bad_alt, f"{page}: images without real alt text: {bad_alt[:5]}"
    open_code = browser.execute_script(
        "return document.querySelectorAll('div.cell:not(.tag_hide-input):not(.tag_remove-input) "
        "div.cell_input').length"
    )
    assert open_code == 0, f"{page}: {open_code} code cells shown uncollapsed"
    wide = browser.execute_script(WIDER_THAN_VIEWPORT_JS)
    assert wide == [], f"{page}: elements wider than the 1280 px viewport: {wide}"
    uncaptioned = browser.execute_script(UNCAPTIONED_TABLES_JS)
    assert uncaptioned == [], f"{page}: tables without a 'Table N.k:' caption: {uncaptioned}"
    cut = browser.execute_script(CUT_CAPTIONS_JS)
    assert cut == [], f"{page}: table captions cut by their scroll container at 1280 px: {cut}"
    unlinked = browser.execute_script(UNLINKED_FIGURES_JS)
    assert unlinked == [], f"{page}: figures not linked to their full-size image: {unlinked}"
    n_raw, raw = browser.execute_script(RAW_NOTATION_JS)
    assert n_raw == 0, f"{page}: {n_raw} raw _/^ notation outside math (typeset it): {raw}"
    dense = browser.execute_script(DENSE_PARAGRAPHS_JS)
    assert dense == [], f"{page}: paragraphs with more than four ± values (make a table): {dense}"
    if page.startswith("book/chapters/"):
        res = json.loads((ROOT / "results" / "ci" / f"{page.split('/')[-1]}.json").read_text())
        plain = (
            text.replace("\u2019", "'").replace("\u201c", '"').replace("\u201d", '"')
        )  # Sphinx's smart quotes
        missing = [k for k, v in res.get("glued", {}).items() if v not in plain and len(v) < 200]
        md = (ROOT / "notebooks" / f"{page.split('/')[-1]}.py").read_text()
        missing = [k for k in missing if f"{{glue}}`{k}`" in md]
        assert not missing, f"{page}: glued numbers not shown: {missing}"
        assert "Scorecard" in browser.execute_script(
            "return Array.from(document.querySelectorAll('h2')).map(h => h.innerText).join('|')"
        )
    # no stray text/plain output or stream is shown (reprs, prints)
    plain = browser.execute_script(
        "return Array.from(document.querySelectorAll('div.cell_output .text_plain, "
        "div.cell_output .output.stream')).filter(e => e.getClientRects().length)"
        ".map(e => e.innerText.slice(0, 60))"
    )
    assert plain == [], f"{page}: plain-text outputs shown: {plain[:3]}"
    # every scorecard, dashboard and table element reads at ≥ 4.5:1 in light and in dark mode
    for mode in ("light", "dark"):
        browser.execute_script(
            f"document.documentElement.setAttribute('data-theme', '{mode}');"
            f"document.documentElement.setAttribute('data-mode', '{mode}');"
        )
        low = browser.execute_script(LOW_CONTRAST_JS)
        assert low == [], f"{page}: {len(low)} elements under 4.5:1 in {mode} mode: {low[:4]}"
    # a phone (390 px wide): nothing widens the page
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True},
    )
    try:
        browser.get(html.as_uri())
        narrow = browser.execute_script(WIDER_THAN_VIEWPORT_JS)
        cut = browser.execute_script(CUT_CAPTIONS_JS)
        small_figures, hidden_words, bare = browser.execute_script(PHONE_JS)
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert narrow == [], f"{page}: elements wider than a 390 px phone: {narrow}"
    assert cut == [], f"{page}: table captions running past a 390 px phone: {cut}"
    assert small_figures == [], f"{page}: figures shown with text under 9 px: {small_figures}"
    assert hidden_words == 0, f"{page}: {hidden_words} scorecard outcome words hidden on a phone"
    assert bare == [], f"{page}: tables scrolling with no visible affordance: {bare}"
    # glued prose reads as written: no phrase said twice, no dangling count, every paragraph ends
    from prose_checks import page_problems

    problems = page_problems(html.read_text(encoding="utf-8"))
    assert problems == [], f"{page}: {len(problems)} prose problems: {problems[:4]}"
    links = browser.execute_script(
        "return Array.from(document.querySelectorAll('article a.reference.internal')).map(a => "
        "a.href)"
    )
    for href in links:
        target = Path(href.split("#")[0].replace("file://", ""))
        assert target.exists(), f"{page}: link to a missing page {href}"


@pytest.mark.slow
@pytest.mark.browser
def test_printed_scorecards_and_tables_break_between_rows(ci_book, browser):
    """In print (make pdf) a scorecard or data table may break between rows, a row and a figure
    may not: the book theme keeps every table whole (``.bd-main .bd-content table``), which pushed
    a scorecard longer than the room left to the next page and left its heading alone on a page
    (13 of 146 pages of the ci PDF ended above half height)."""
    page = ROOT / "_build" / "html" / "book" / "chapters" / f"{CHAPTERS[5]}.html"
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        browser.get(page.as_uri())
        got = browser.execute_script(
            "const b = s => [...document.querySelectorAll(s)].map(e => "
            "getComputedStyle(e).breakInside);"
            "return [b('table.lw-scorecard'), b('table.lw-scorecard tbody tr'), b('figure')];"
        )
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
    tables, rows, figures = got
    assert tables and set(tables) == {"auto"}, tables
    assert rows and set(rows) == {"avoid"} and figures and set(figures) == {"avoid"}


@pytest.mark.slow
def test_the_whole_book_prints_to_a_pdf(ci_book):
    """`book all` (make book) prints the PDF of its build, the one the landing page links."""
    assert ci_book.returncode == 0, ci_book.stderr[-3000:]
    pdf = ROOT / "_build" / "pdf" / "layerwise-ci.pdf"  # named by the scale it prints
    assert f"printed {pdf} (the ci build)" in ci_book.stdout
    assert pdf.exists() and pdf.stat().st_size > 500_000
    assert render.pdf_pages(pdf) >= 40  # eight chapters with their figures and scorecards
    if shutil.which("pdftotext"):  # poppler-utils: read the pages back
        text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True,
                              text=True, check=True).stdout
        pages = text.split("\f")[:-1]
        n = len(pages)
        assert "Chapters executed at scale ci" in pages[0]  # the title page: scale, commit, date
        numbered = [i for i, p in enumerate(pages) if re.search(rf"\b{i + 1} / {n}\s*$", p)]
        assert len(numbered) == n - 1, f"pages without their number: {n - 1 - len(numbered)}"
        firsts = [next((line for line in p.splitlines() if line.strip()), "") for p in pages]
        starts = {int(m[1]) for line in firsts if (m := re.match(r"(\d)\. \S", line))}
        assert starts == set(range(1, len(CHAPTERS) + 1)), "each chapter starts on a new page"
