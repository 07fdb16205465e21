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
from .params import SCALES, ParameterError, check_choice, check_scale
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
    """Names assigned in the notebook's ``parameters`` cell."""
    import nbformat

    nb = nbformat.read(nb_path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code" and "parameters" in cell.metadata.get("tags", []):
            tree = ast.parse(cell.source)
            return [t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)]
    raise ChapterFailed(f"{nb_path.name} has no cell tagged 'parameters'")


def _decorate(executed: Path, results: Path, scale: str) -> None:
    """Hide parameter cells and add the 'executed at' header after the title cell."""
    import nbformat

    nb = nbformat.read(executed, as_version=4)
    for cell in nb.cells:
        tags = cell.metadata.setdefault("tags", [])
        if ("parameters" in tags or "injected-parameters" in tags) and "remove-cell" not in tags:
            tags.append("remove-cell")
    duration = nb.metadata.get("papermill", {}).get("duration")
    info: dict[str, Any] = {}
    if results.exists():
        info = json.loads(results.read_text())
    counts = status_counts(info)
    store = info.get("store", {})
    params = ", ".join(f"`{k}={v}`" for k, v in info.get("params", {}).items())
    wall = f"{duration:.1f} s" if duration is not None else "unknown"
    header = (
        "```{note}\n"
        f"Executed at scale **`{scale}`** on **{info.get('device', '?')}** "
        f"({info.get('versions', {}).get('machine', '?')}) in **{wall}** of wall time "
        f"with layerwise **{info.get('versions', {}).get('layerwise', '?')}**, "
        f"torch {info.get('versions', {}).get('torch', '?')}, seed {info.get('seed', '?')}; "
        f"{store.get('hits', 0)} cached and {store.get('computed', 0)} freshly computed simulation results. "
        f"Scorecard: {counts['pass']} passed, {counts['fail']} failed, {counts['skipped']} skipped.\n\n"
        f"Parameters: {params or '—'}. "
        "Re-run this chapter with `make chapter CH=" + executed.name[:2] + " SCALE=<ci|default|paper>` "
        "(see *How to reproduce*).\n```"
    )
    cell = nbformat.v4.new_markdown_cell(header)
    cell.metadata["tags"] = ["lw-execution-header"]
    nb.cells = [c for c in nb.cells if "lw-execution-header" not in c.metadata.get("tags", [])]
    first_md = next((i for i, c in enumerate(nb.cells) if c.cell_type == "markdown"), -1)
    nb.cells.insert(first_md + 1, cell)
    nbformat.write(nb, executed)


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
    ``$LAYERWISE_RESULTS`` (default ``results/``)."""
    root = root or repo_root()
    overrides = overrides or {}
    check_overrides(nb, overrides)
    params = {"scale": scale, "seed": seed, "device": device, **overrides}
    out = (executed_dir or root / "book" / "chapters") / nb.name
    out.parent.mkdir(parents=True, exist_ok=True)
    results_dir = results_root(root)
    env = {**os.environ, "LAYERWISE_RESULTS": str(results_dir), "PYTHONHASHSEED": "0"}
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
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code, arg], env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        raise ChapterFailed(f"chapter {nb.stem} at scale {scale} exceeded its time limit of {timeout:.0f} s") from None
    if proc.returncode != 0:
        detail = proc.stderr.strip()
        import re

        detail = re.sub(r"\x1b\[[0-9;]*m", "", detail)  # strip ANSI colours from tracebacks
        head = detail.splitlines()[0] if detail.startswith("CELL") else ""
        where = f" in cell {head.split(chr(9))[1]}" if head else ""
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
def write_dashboard(root: Path | None = None) -> Path:
    """Write ``book/dashboard.md``: every chapter's claims, pass/fail/skipped at every scale run."""
    root = root or repo_root()
    runs: dict[str, dict[str, dict]] = {}
    for scale in SCALES:
        for f in sorted((results_root(root) / scale).glob("[0-9][0-9]_*.json")):
            runs.setdefault(f.stem, {})[scale] = json.loads(f.read_text())
    lines = [
        "# Reproduction dashboard",
        "",
        "Every quantitative claim of the book, graded at every scale it has been executed at on this",
        "build's machine (from `results/<scale>/<chapter>.json`). *skipped* marks a claim that only",
        "becomes testable at a larger scale; a blank cell marks a scale that was not run.",
        "",
    ]
    if not runs:
        lines.append("No chapter has been executed yet: run `make book`.")
    else:
        lines += ["## Summary", "", "| chapter | " + " | ".join(SCALES) + " |", "|---|" + "---|" * len(SCALES)]
        for ch, by_scale in runs.items():
            cells = []
            for s in SCALES:
                if s not in by_scale:
                    cells.append("")
                    continue
                n = status_counts(by_scale[s])
                mark = "✗" if n["fail"] else "✓"
                cells.append(f"{mark} {n['pass']} pass, {n['fail']} fail, {n['skipped']} skipped ({by_scale[s]['wall_time_s']:.0f} s, {by_scale[s]['device']})")
            lines.append(f"| {ch} | " + " | ".join(cells) + " |")
        lines += ["", "## Claims", ""]
        sym = {"pass": "✓", "fail": "✗", "skipped": "–"}
        for ch, by_scale in runs.items():
            lines += [f"### {ch}", "", "| claim | statement | source | " + " | ".join(SCALES) + " |", "|---|---|---|" + "---|" * len(SCALES)]
            ids: dict[str, dict] = {}
            for s in SCALES:
                for c in by_scale.get(s, {}).get("claims", []):
                    ids.setdefault(c["id"], {"c": c})[s] = c
            for cid, d in ids.items():
                c = d["c"]
                cells = [f"{sym[d[s]['status']]} {_short(d[s]['measured'])}" if s in d else "" for s in SCALES]
                stmt = c["statement"].replace("|", "\\|")
                src = c["source"].replace("|", "\\|")
                lines.append(f"| `{cid}` | {stmt} | {src} | " + " | ".join(cells) + " |")
            lines.append("")
    out = root / "book" / "dashboard.md"
    out.write_text("\n".join(lines) + "\n")
    return out


def _short(x: Any) -> str:
    from .claims import fmt

    return fmt(x).replace("|", "\\|")


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
    sub.add_parser("dashboard", help="write book/dashboard.md from results/")
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
