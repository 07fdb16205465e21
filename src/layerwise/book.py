"""The book's execution pipeline: papermill runs chapters, the dashboard is written, Sphinx builds.

``python -m layerwise book run --scale ci [--chapters 07 03] [-p width=2000 ...]``
    executes ``notebooks/NN_topic.ipynb`` into ``book/chapters/NN_topic.ipynb`` (the copies that
    ``_toc.yml`` points to), hides the parameter cells and adds the execution header;
``python -m layerwise book build``
    writes the reproduction dashboard and renders ``_build/html`` with ``-W -n --keep-going``;
``python -m layerwise book all --scale ci`` does both; ``list`` shows the chapters;
``check-pairs`` verifies that every ``.py``/``.ipynb`` pair is in sync.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .claims import tally_outcomes
from .dashboard import save_evidence, write_dashboard, write_summary
from .params import SCALES, ParameterError, check_choice, check_scale, resolve_device
from .paths import repo_root, results_root

#: Per-chapter time limits in seconds by scale (SPEC budgets with margin); ``paper`` is unbounded.
TIMEOUTS = {"ci": 600, "default": 1800, "paper": None}


class ChapterFailed(RuntimeError):
    """A chapter's execution failed; the message names the chapter and shows the cell traceback."""


def chapters(root: Path | None = None) -> dict[str, Path]:
    """``{"07": notebooks/07_meanfield_chaos.ipynb, …}`` for every paired chapter notebook."""
    nb_dir = (root or repo_root()) / "notebooks"
    out = {}
    for p in sorted(nb_dir.glob("[0-9][0-9]_*.ipynb")):
        out[p.name[:2]] = p
    return out


def select(requested: list[str] | None, root: Path | None = None) -> dict[str, Path]:
    """The chapters named by number (``7``, ``07``) or full name; all when ``requested`` is empty."""
    avail = chapters(root)
    if not requested:
        return avail
    out = {}
    for r in requested:
        key = r.split("_")[0].zfill(2) if r.split("_")[0].isdigit() else r
        if key not in avail:
            raise ParameterError(
                f"chapter={r!r} is not allowed; choose one of: {', '.join(f'{k} ({v.stem})' for k, v in avail.items())}"
            )
        out[key] = avail[key]
    return out


def parse_overrides(items: list[str] | None) -> dict[str, Any]:
    """``["width=2000", "phi='tanh'"]`` → ``{"width": 2000, "phi": "tanh"}`` (Python literals, else strings)."""
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise ParameterError(f"override {item!r} is malformed; expected NAME=VALUE, e.g. width=2000")
        try:
            out[key] = ast.literal_eval(raw.strip())
        except (ValueError, SyntaxError):
            out[key] = raw.strip()
    return out


def status_counts(results: dict[str, Any]) -> dict[str, int]:
    """``{"pass": n, "fail": n, "inconclusive": n, "skipped": n}`` over a chapter's results JSON."""
    return tally_outcomes(results.get("claims", []))


def check_overrides(nb_path: Path, overrides: dict[str, Any]) -> None:
    """Raise :class:`ParameterError` unless every override names a variable of the notebook's
    parameters cell."""
    allowed = notebook_parameters(nb_path)
    unknown = sorted(set(overrides) - set(allowed))
    if unknown:
        raise ParameterError(f"chapter {nb_path.stem}: unknown parameter(s) {unknown}; allowed: {', '.join(allowed)}")


def notebook_parameters(nb_path: Path) -> list[str]:
    """Names of the notebook's ``parameters`` cell (papermill's own inspection)."""
    import papermill as pm

    params = pm.inspect_notebook(str(nb_path))
    if not params:
        raise ChapterFailed(f"{nb_path.name} has no cell tagged 'parameters'")
    return list(params)


GLUE_PREFIX = "application/papermill.record/"


def _figure_directive(label: str, caption: str, alt: str) -> str:
    """The MyST markdown of a numbered, linkable figure pasted from a glued image."""
    alt = " ".join(alt.split()).replace("`", "'")
    return f"```{{glue:figure}} {label}\n:name: {label}\n:alt: {alt}\n\n{caption.strip()}\n```"


def _decorate(executed: Path, results: Path, scale: str) -> None:
    """Shape the executed notebook for the page: parameter cells removed, code collapsed behind a
    toggle (``hide-input``), cells that show nothing removed (``remove-cell``; they stay in the
    downloadable notebook), stderr dropped, each figure of ``Chapter.figure`` turned into a
    numbered ``{glue:figure}`` right after the cell that drew it, and the execution header (with
    the scorecard's one-line summary) added after the title."""
    import nbformat

    from .claims import summary_sentence, tally

    nb = nbformat.read(executed, as_version=4)
    cells = []
    for cell in nb.cells:
        if "lw-execution-header" in cell.metadata.get("tags", []) or "lw-figure" in cell.metadata.get("tags", []):
            continue
        tags = cell.metadata.setdefault("tags", [])
        cells.append(cell)
        if cell.cell_type != "code":
            continue
        if "parameters" in tags or "injected-parameters" in tags:
            if "remove-cell" not in tags:
                tags.append("remove-cell")
            continue
        figures, outputs, visible = [], [], False
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                continue  # warnings and progress bars belong to the terminal, not the page
            meta = out.get("metadata", {})
            lw = meta.get("layerwise", {})
            if "figure" in lw:
                out["data"] = {(k if k.startswith(GLUE_PREFIX) else GLUE_PREFIX + k): v for k, v in out["data"].items()}
                meta["scrapbook"]["mime_prefix"] = GLUE_PREFIX
                md = nbformat.v4.new_markdown_cell(_figure_directive(lw["figure"], lw["caption"], lw["alt"]))
                md.metadata["tags"] = ["lw-figure"]
                figures.append(md)
            elif not meta.get("scrapbook", {}).get("mime_prefix"):
                visible = True
            outputs.append(out)
        cell["outputs"] = outputs
        for t in ("hide-input", "remove-cell", "remove-input"):
            if t in tags:
                break
        else:
            tags.append("hide-input" if (visible or figures) else "remove-cell")
        cells.extend(figures)
    nb.cells = cells

    duration = nb.metadata.get("papermill", {}).get("duration")
    info: dict[str, Any] = json.loads(results.read_text()) if results.exists() else {}
    store = info.get("store", {})
    versions = info.get("versions", {})
    params = ", ".join(f"`{k}={v}`" for k, v in info.get("params", {}).items())
    wall = f"{duration:.1f} s" if duration is not None else "unknown"
    stem = executed.stem
    header = (
        "```{admonition} Scorecard and run\n:class: note lw-run\n"
        f"**{summary_sentence(tally(info.get('claims', [])), '`' + scale + '`')}** "
        '<a href="#scorecard">Go to the scorecard.</a>\n\n'
        f"Executed at scale **`{scale}`** on **{info.get('device', '?')}** ({versions.get('machine', '?')}) "
        f"in **{wall}** of wall time with layerwise **{versions.get('layerwise', '?')}**, "
        f"torch {versions.get('torch', '?')}, seed {info.get('seed', '?')}; "
        f"{store.get('hits', 0)} cached and {store.get('computed', 0)} freshly computed simulation results.\n\n"
        f"Parameters: {params or '—'}. "
        f"Re-run this chapter with `make chapter CH={stem[:2]} SCALE=<ci|default|paper>` (see {{doc}}`../reproduce`). "
        f"Download: {{download}}`the source (.py) <../../notebooks/{stem}.py>` · "
        f"{{download}}`the executed notebook (.ipynb) <{stem}.ipynb>`.\n```"
    )
    nb.metadata["layerwise"] = {"scale": scale, "chapter": stem}
    cell = nbformat.v4.new_markdown_cell(header)
    cell.metadata["tags"] = ["lw-execution-header"]
    first_md = next((i for i, c in enumerate(nb.cells) if c.cell_type == "markdown"), -1)
    nb.cells.insert(first_md + 1, cell)
    nbformat.write(nb, executed)


class _Progress:
    """Shows, on the runner's terminal, the block progress a chapter's kernel reports through
    ``$LAYERWISE_PROGRESS`` (see :class:`layerwise.store.ProgressFile`): a tqdm bar with the time
    left on a terminal, a line per block otherwise."""

    def __init__(self, path: Path, chapter: str):
        self.path, self.chapter, self.pos, self.bar, self.tty = path, chapter, 0, None, sys.stderr.isatty()
        self.t0 = 0.0

    def poll(self) -> None:
        if not self.path.exists():
            return
        with open(self.path, encoding="utf-8") as f:
            f.seek(self.pos)
            lines = f.readlines()
            self.pos = f.tell()
        for line in lines:
            try:
                event, name, n = line.rstrip("\n").split("\t")
            except ValueError:
                continue
            self._event(event, name.split(".", 1)[-1], int(n))

    def _event(self, event: str, name: str, n: int) -> None:
        if event == "start":
            self.close()
            self.t0, self.total = time.perf_counter(), n
            if self.tty:
                from tqdm import tqdm

                self.bar = tqdm(total=n, desc=f"[layerwise]   {name}", unit="block", file=sys.stderr, leave=False)
            else:
                print(f"[layerwise]   {name}: {n} simulation block(s)", file=sys.stderr, flush=True)
        elif event == "block":
            if self.bar is not None:
                self.bar.update(n - self.bar.n)
            else:
                el = time.perf_counter() - self.t0
                left = el / n * (self.total - n)
                print(f"[layerwise]   {name}: block {n + 1}/{self.total}, {el:.0f} s so far, ≈ {left:.0f} s left", file=sys.stderr, flush=True)
        elif event == "end":
            self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def run_chapter(
    key: str,
    nb: Path,
    *,
    scale: str,
    seed: int = 0,
    device: str = "auto",
    overrides: dict[str, Any] | None = None,
    timeout: float | None = None,
    root: Path | None = None,
    executed_dir: Path | None = None,
) -> Path:
    """Execute one chapter with papermill in a subprocess; raise :class:`ChapterFailed` on error.

    The executed copy goes to ``executed_dir`` (default ``book/chapters/``), results to
    ``$LAYERWISE_RESULTS`` (default ``results/``); simulation blocks are reported on stderr."""
    import tempfile

    root = root or repo_root()
    overrides = overrides or {}
    check_overrides(nb, overrides)
    params = {"scale": scale, "seed": seed, "device": device, **overrides}
    out = (executed_dir or root / "book" / "chapters") / nb.name
    out.parent.mkdir(parents=True, exist_ok=True)
    results_dir = results_root(root)
    with tempfile.TemporaryDirectory(prefix="layerwise-") as tmp:
        progress_file = Path(tmp) / "progress"
        env = {**os.environ, "LAYERWISE_RESULTS": str(results_dir), "PYTHONHASHSEED": "0", "LAYERWISE_PROGRESS": str(progress_file)}
        code = (
            "import json, sys, papermill as pm\n"
            "from papermill.exceptions import PapermillExecutionError\n"
            "a = json.loads(sys.argv[1])\n"
            "try:\n"
            "    pm.execute_notebook(a['nb'], a['out'], parameters=a['params'], cwd=a['cwd'],\n"
            "                        kernel_name='python3', progress_bar=False, log_output=False)\n"
            "except PapermillExecutionError as e:\n"
            "    print('CELL', e.exec_count, e.ename, e.evalue, sep='\\t', file=sys.stderr)\n"
            "    print('\\n'.join(e.traceback), file=sys.stderr)\n"
            "    sys.exit(3)\n"
        )
        arg = json.dumps({"nb": str(nb), "out": str(out), "params": params, "cwd": str(nb.parent)})
        started = time.time()
        errlog = Path(tmp) / "stderr"
        progress = _Progress(progress_file, nb.stem)
        with open(errlog, "w") as err:
            proc = subprocess.Popen([sys.executable, "-c", code, arg], env=env, stdout=subprocess.DEVNULL, stderr=err, text=True)
            try:
                while proc.poll() is None:
                    progress.poll()
                    if timeout is not None and time.time() - started > timeout:
                        proc.kill()
                        proc.wait()
                        raise ChapterFailed(f"chapter {nb.stem} at scale {scale} exceeded its time limit of {timeout:.0f} s")
                    time.sleep(0.25)
            except KeyboardInterrupt:
                proc.kill()
                raise
            finally:
                progress.poll()
                progress.close()
        detail = errlog.read_text()
    if proc.returncode != 0:
        import re

        detail = re.sub(r"\x1b\[[0-9;]*m", "", detail.strip())  # strip ANSI colours from tracebacks
        head = next((ln for ln in detail.splitlines() if ln.startswith("CELL\t")), "")
        where = f" in cell {head.split(chr(9))[1]}" if head else ""
        if head:
            detail = detail[detail.index(head):]
        raise ChapterFailed(
            f"chapter {nb.stem} failed at scale {scale}{where} (executed copy: {out}):\n{detail[-6000:]}"
        )
    results = results_dir / scale / f"{nb.stem}.json"
    if not results.exists() or results.stat().st_mtime < started - 1:
        raise ChapterFailed(f"chapter {nb.stem} ran but did not write {results} (missing ch.finish()?)")
    _decorate(out, results, scale)
    return out


def check_pairs(root: Path | None = None) -> list[str]:
    """Names of notebooks whose ``.ipynb`` differs from its ``.py`` source (cells and metadata)."""
    import jupytext

    root = root or repo_root()
    bad = []
    for py in sorted((root / "notebooks").glob("[0-9][0-9]_*.py")):
        ipynb = py.with_suffix(".ipynb")
        if not ipynb.exists():
            bad.append(f"{py.name}: no paired {ipynb.name}")
            continue
        a = jupytext.read(py)
        b = jupytext.read(ipynb)
        src_a = [(c.cell_type, c.source.strip(), sorted(c.metadata.get("tags", []))) for c in a.cells]
        src_b = [(c.cell_type, c.source.strip(), sorted(c.metadata.get("tags", []))) for c in b.cells]
        if src_a != src_b:
            bad.append(f"{py.name} and {ipynb.name} differ: run `jupytext --sync {py}`")
        elif b.metadata.get("kernelspec", {}).get("name") != "python3":
            bad.append(f"{ipynb.name}: kernelspec is not python3 (`jupytext --set-kernel python3`)")
    for ipynb in sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        if not ipynb.with_suffix(".py").exists():
            bad.append(f"{ipynb.name}: no paired .py source")
    return bad


# ----------------------------------------------------------------------------------------------
# Dashboard and build
# ----------------------------------------------------------------------------------------------
def install_mathjax(root: Path | None = None) -> Path:
    """Copy MathJax 3 (from the ``django-static-mathjax`` wheel) into the book's static folder."""
    root = root or repo_root()
    dest = root / "book" / "_static_mathjax" / "mathjax"
    if (dest / "tex-mml-chtml.js").exists():
        return dest
    import importlib.util

    spec = importlib.util.find_spec("mathjax")
    if spec is None or spec.origin is None:
        raise RuntimeError("MathJax is not installed: pip install django-static-mathjax==3.2.2.1")
    src = Path(spec.origin).parent / "static" / "mathjax" / "es5"
    if not (src / "tex-mml-chtml.js").exists():
        raise RuntimeError(f"MathJax files not found under {src}")
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src / "tex-mml-chtml.js", dest / "tex-mml-chtml.js")
    for sub in ("output", "input", "ui", "a11y", "adaptors", "sre"):
        if (src / sub).exists():
            shutil.copytree(src / sub, dest / sub, dirs_exist_ok=True)
    return dest


def build_html(root: Path | None = None) -> Path:
    """Render ``_build/html`` with warnings as errors (all reported)."""
    root = root or repo_root()
    write_dashboard(root)
    write_summary(root)
    missing = [e for e in _toc_files(root) if not (root / e).exists() and not any((root / e).parent.glob((root / e).name + ".*"))]
    if missing:
        raise ChapterFailed(f"the table of contents names files that do not exist yet: {missing}; run `make book` first")
    install_mathjax(root)
    jb = Path(sys.executable).parent / "jupyter-book"
    cmd = [str(jb), "build", str(root), "--builder", "html", "--warningiserror", "--nitpick", "--keep-going"]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    sys.stdout.write(proc.stdout[-4000:])
    if proc.returncode != 0:
        raise ChapterFailed(f"jupyter-book build failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-4000:]}")
    return root / "_build" / "html"


def build_pdf(root: Path | None = None) -> Path:
    """The whole book as one PDF, offline: Sphinx's ``singlehtml`` build printed by headless
    Chromium (math typeset by the local MathJax, figures included) to ``_build/pdf/layerwise.pdf``."""
    root = root or repo_root()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if chromium is None:
        raise ChapterFailed("make pdf needs headless Chromium: `make browser` installs Debian's chromium")
    write_dashboard(root)
    write_summary(root)
    install_mathjax(root)
    jb = Path(sys.executable).parent / "jupyter-book"
    proc = subprocess.run([str(jb), "build", str(root), "--builder", "singlehtml"], cwd=root, capture_output=True, text=True)
    single = root / "_build" / "singlehtml"
    page = single / "book" / "intro.html"
    if proc.returncode != 0 or not page.exists():
        raise ChapterFailed(f"singlehtml build failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}")
    # Sphinx writes the single page where the root document lives (book/) but links its assets from
    # the build's root: the page is printed from the root, where those links resolve.
    index = single / "layerwise-print.html"
    index.write_text(page.read_text(encoding="utf-8"), encoding="utf-8")
    out = root / "_build" / "pdf" / "layerwise.pdf"
    out.parent.mkdir(parents=True, exist_ok=True)
    import tempfile

    with tempfile.TemporaryDirectory() as profile:
        cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={profile}", "--run-all-compositor-stages-before-draw", "--virtual-time-budget=60000",
               "--no-pdf-header-footer", f"--print-to-pdf={out}", index.as_uri()]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if not out.exists() or out.stat().st_size < 10_000:
        raise ChapterFailed(f"Chromium did not print the book to {out}:\n{proc.stderr[-3000:]}")
    return out


def pdf_pages(path: Path) -> int:
    """Number of pages of a PDF (counts its page objects; enough for the PDFs Chromium writes)."""
    import re

    return len(re.findall(rb"/Type\s*/Page(?![s\w])", path.read_bytes()))


def _toc_files(root: Path) -> list[str]:
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text())
    out = [toc["root"]]

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "file" in node:
                out.append(node["file"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(toc.get("parts", toc.get("chapters", [])))
    return out


# ----------------------------------------------------------------------------------------------
# Command line
# ----------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m layerwise book", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("run", "all"):
        r = sub.add_parser(name, help="execute chapters" + (" and build the HTML" if name == "all" else ""))
        r.add_argument("--scale", default="default", help=f"one of {', '.join(SCALES)} (default: default)")
        r.add_argument("--chapters", nargs="*", default=[], help="chapter numbers, e.g. 07 3 (default: all)")
        r.add_argument("--seed", type=int, default=0)
        r.add_argument("--device", default="auto", help="auto | cpu | cuda")
        r.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE", help="override a chapter parameter")
        r.add_argument("--timeout", type=float, default=None, help="per-chapter limit in seconds (default by scale)")
    sub.add_parser("build", help="write the dashboard and render _build/html")
    sub.add_parser("list", help="list the chapters")
    sub.add_parser("check-pairs", help="check every .py/.ipynb pair is in sync")
    sub.add_parser("dashboard", help="write book/dashboard.md from results/ and evidence/")
    sub.add_parser("pdf", help="print the whole book to _build/pdf/layerwise.pdf (offline, headless Chromium)")
    e = sub.add_parser("evidence", help="copy this machine's ledgers at a scale into the tracked evidence/ folder")
    e.add_argument("--scale", required=True, help=f"one of {', '.join(SCALES)}")
    e.add_argument("--name", default=None, help="folder name under evidence/ (default: <scale>-<device>-<date>)")
    e.add_argument("--command", default="", help="the command that produced the results (recorded in META.json)")
    a = p.parse_args(argv)
    root = repo_root()
    try:
        if a.cmd == "list":
            for k, v in chapters(root).items():
                print(k, v.stem)
            return 0
        if a.cmd == "check-pairs":
            bad = check_pairs(root)
            for b in bad:
                print("out of sync:", b, file=sys.stderr)
            print(f"{len(chapters(root))} notebooks, {len(bad)} out of sync")
            return 1 if bad else 0
        if a.cmd == "dashboard":
            print(write_dashboard(root))
            return 0
        if a.cmd == "build":
            print("built", build_html(root))
            return 0
        if a.cmd == "pdf":
            print("printed", build_pdf(root))
            return 0
        if a.cmd == "evidence":
            check_scale(a.scale)
            print("saved", save_evidence(a.scale, a.name, root, a.command))
            return 0
        check_scale(a.scale)
        check_choice("device", a.device, ("auto", "cpu", "cuda"))
        if a.seed < 0:
            raise ParameterError(f"seed={a.seed} must be a non-negative integer")
        overrides = parse_overrides(a.param)
        todo = select(a.chapters, root)
        if overrides:  # validate against every selected chapter before running any
            for nb in todo.values():
                check_overrides(nb, overrides)
        timeout = a.timeout if a.timeout is not None else TIMEOUTS[a.scale]
        if a.scale == "paper" and resolve_device(a.device) == "cpu":
            print(
                "[layerwise] WARNING: the paper scale on a CPU is very long. Chapters 3–5 simulate up to 10 000 random\n"
                "[layerwise] networks of the papers' size (a width-512 conv network alone takes ≈ 2 min on 2 cores), i.e.\n"
                "[layerwise] days of computing; each simulation block prints its progress and the time left below.\n"
                "[layerwise] On a machine with a CUDA GPU use DEVICE=cuda (≈ 20–40 min per chapter on one H100), or compute\n"
                "[layerwise] there and bring the results here: `python -m layerwise store import DIR` (see How to reproduce).",
                file=sys.stderr, flush=True,
            )
        failures = []
        for key, nb in todo.items():
            t0 = time.perf_counter()
            print(f"[layerwise] chapter {nb.stem} at scale {a.scale} ...", flush=True)
            try:
                run_chapter(key, nb, scale=a.scale, seed=a.seed, device=a.device, overrides=overrides, timeout=timeout, root=root)
            except ChapterFailed as exc:
                print(f"[layerwise] FAILED: {exc}", file=sys.stderr, flush=True)
                failures.append(nb.stem)
                continue
            res = json.loads((results_root(root) / a.scale / f"{nb.stem}.json").read_text())
            n = status_counts(res)
            print(f"[layerwise]   done in {time.perf_counter() - t0:.1f} s: {n['pass']} claims passed, {n['fail']} failed, "
                  f"{n['inconclusive']} inconclusive, {n['skipped']} skipped", flush=True)
        if failures:
            print(f"[layerwise] chapters failed: {', '.join(failures)}", file=sys.stderr)
            return 1
        if a.cmd == "all":
            print("built", build_html(root))
        return 0
    except (ParameterError, ChapterFailed) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
