"""The book's execution pipeline: papermill runs chapters, the dashboard is written, Sphinx builds.

``run`` executes ``notebooks/NN_topic.ipynb`` into ``book/chapters/NN_topic.ipynb`` (the copies
``_toc.yml`` points to); ``build`` writes the dashboard and renders ``_build/html``; ``all`` does
both. ``--executor dask`` sends the simulation blocks to a Dask cluster (:mod:`layerwise.executor`;
without ``--scheduler``, one ``LocalCluster`` serves every chapter of the run). ``--help`` lists
every sub-command (one ``cmd_*`` function each).

The machinery, one module per job: :mod:`layerwise.runner` (which chapters, their parameters,
papermill execution, progress, :class:`ChapterFailed`), :mod:`layerwise.pages` (shaping executed
notebooks for the page), :mod:`layerwise.render` (MathJax, HTML and PDF builds) and
:mod:`layerwise.dashboard`; this module is the command line.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from pathlib import Path
from typing import Any

from .chapter import ONE_TORCH_THREAD
from .claims import tally_outcomes
from .dashboard import EVIDENCE_DIR, save_evidence, write_dashboard
from .executor import check_executor, shared_scheduler
from .params import SCALES, ParameterError, check_choice, check_scale, resolve_device
from .paths import repo_root, results_root
from .render import build_html, build_pdf, built_scale, chromium, pdf_path
from .robustness import KERNELS, parse_seeds, run_all
from .runner import (
    LIVE,
    TIMEOUTS,
    ChapterFailed,
    chapters,
    check_overrides,
    check_pairs,
    parse_overrides,
    run_chapter,
    select,
)
from .shape import KINDS, shape_table

#: What Ctrl-C prints (exit status 130, the shell's for SIGINT): every finished simulation block
#: is in the results store, so the same command picks up from there.
INTERRUPTED = "interrupted — re-run the same command to resume from the store"


def _number(
    name: str, cast: Callable[[str], Any], ok: Callable[[Any], bool], expected: str
) -> Callable[[str], Any]:
    """An argparse ``type``: the option's text as ``cast`` of it when ``ok``, else a message
    naming the option and what it expects."""

    def parse(text: str) -> Any:
        with suppress(ValueError):  # not a number at all: the same message
            if ok(value := cast(text)):
                return value
        raise argparse.ArgumentTypeError(f"{name}={text!r} is not allowed; expected {expected}")

    return parse


_jobs = _number("jobs", int, lambda v: v >= 1, "a positive integer (1: one chapter at a time)")
_seed = _number("seed", int, lambda v: v >= 0, "a non-negative integer, e.g. 0")
#: ``--timeout``: a positive number of seconds (``inf``: no limit).
_timeout = _number("timeout", float, lambda v: v > 0, "a positive number of seconds")


PAPER_ON_CPU = """\
[layerwise] WARNING: the paper scale on a CPU is very long. Chapters 3–5 simulate up to 10 000
[layerwise] random networks of the papers' size (a width-512 conv network alone takes ≈ 2 min on
[layerwise] 2 cores), i.e. days of computing; each simulation shows its progress and the time left.
[layerwise] On a machine with a CUDA GPU use DEVICE=cuda (measured on one H200: ≈ 5.5 h for
[layerwise] Chapter 3, ≈ 0.4 h for Chapter 4, ≈ 1.5 h for Chapter 5; the README's `paper` table), or
[layerwise] compute there and bring the results here: `python -m layerwise store import DIR` (see
[layerwise] How to reproduce; benchmarks/gpu_paper_part.py computes a chapter's conv nets there)."""


def cmd_list(a: argparse.Namespace, root: Path) -> None:
    """``list``: each chapter's number and name."""
    for k, v in chapters(root).items():
        print(k, v.stem)


def cmd_check_pairs(a: argparse.Namespace, root: Path) -> int:
    """``check-pairs``: every ``.py``/``.ipynb`` pair in sync (exit 1 when one is not)."""
    bad = check_pairs(root)
    for b in bad:
        print("out of sync:", b, file=sys.stderr)
    print(f"{len(chapters(root))} notebooks, {len(bad)} out of sync")
    return 1 if bad else 0


def cmd_shape(a: argparse.Namespace, root: Path) -> None:
    """``shape``: each chapter's code lines by kind, and the totals."""
    rows = shape_table(root)
    cols = ["chapter", *KINDS, "code", "cells", "longest"]
    total = {"chapter": "total", **{c: sum(int(r[c]) for r in rows) for c in cols[1:-1]},
             "longest": max(int(r["longest"]) for r in rows)}
    for r in [dict(zip(cols, cols)), *rows, total]:
        print(" ".join(f"{r[c]:>11}" if i else f"{r[c]:<28}" for i, c in enumerate(cols)))


def cmd_dashboard(a: argparse.Namespace, root: Path) -> None:
    """``dashboard``: write ``book/dashboard.md``."""
    print(write_dashboard(root))


def cmd_build(a: argparse.Namespace, root: Path) -> None:
    """``build``: the dashboard and the HTML."""
    print("built", build_html(root))


def cmd_pdf(a: argparse.Namespace, root: Path) -> None:
    """``pdf``: the whole book printed to one PDF."""
    print(f"printed {build_pdf(root)} (the {built_scale(root)} build)")


def cmd_robustness(a: argparse.Namespace, root: Path) -> None:
    """``robustness``: the chapters per seed and kernel set, every claim tabulated."""
    out = run_all(parse_seeds(a.seeds), a.kernels, scale=a.scale, chapters=a.chapters, root=root)
    print((out / "table.md").read_text())


def cmd_evidence(a: argparse.Namespace, root: Path) -> None:
    """``evidence``: this machine's ledgers at a scale copied into ``evidence/``."""
    print("saved", save_evidence(a.scale, a.name, root, a.command, a.chapters, a.claims, a.note,
                                     a.figures))


def cmd_run(a: argparse.Namespace, root: Path) -> int:
    """``run`` and ``all``: every option checked for every chosen chapter before any runs, then
    the chapters one after the other (on one shared LocalCluster when ``--executor dask`` has no
    ``--scheduler``); ``all`` then builds the HTML and prints the PDF."""
    check_scale(a.scale)
    check_choice("device", a.device, ("auto", "cpu", "cuda"))
    overrides = parse_overrides(a.param)
    todo = select(a.chapters, root)
    for nb in todo.values():  # the gate: every override of every selected chapter, before any runs
        check_overrides(nb, overrides)
    device = resolve_device(a.device)  # device='cuda' without a GPU stops here
    executor, scheduler = check_executor(a.executor, a.scheduler)  # so does a silent scheduler
    if executor != "local":
        where = scheduler or "a LocalCluster on this machine"
        print(f"[layerwise] simulation blocks go to Dask: {where}", flush=True)
    timeout = a.timeout if a.timeout is not None else TIMEOUTS[a.scale]
    if a.scale == "paper" and device == "cpu":
        print(PAPER_ON_CPU, file=sys.stderr, flush=True)
    with shared_scheduler(executor, scheduler) as address:
        if address is not None and scheduler is None:
            print(f"[layerwise] one LocalCluster for every chapter: {address}", flush=True)
        failures = _run_chapters(a, todo, overrides, timeout, root, executor, address)
    if failures:
        print(f"[layerwise] chapters failed: {', '.join(failures)}", file=sys.stderr)
        return 1
    if a.cmd == "all":
        cmd_build(a, root)
        if chromium() is not None:  # the PDF the landing page links, of the same build
            cmd_pdf(a, root)
        else:
            older = " — the one there is older than this build" if pdf_path(root).exists() else ""
            print(f"the PDF of this {built_scale(root)} build: `make pdf` prints it to "
                  f"{pdf_path(root)} (needs headless Chromium: `make browser`){older}")
    return 0


def parser() -> argparse.ArgumentParser:
    """The command line: one sub-command per ``cmd_*`` function above (``a.handler``); ``run``
    and ``all`` share their options (``parents=``)."""
    p = argparse.ArgumentParser(prog="python -m layerwise book",
                                description=__doc__.split("\n\n")[0])
    runs = argparse.ArgumentParser(add_help=False)  # the options of run and all
    opt = runs.add_argument
    opt("--scale", default="default", help=f"one of {', '.join(SCALES)} (default: default)")
    opt("--chapters", nargs="*", default=[], help="chapter numbers, e.g. 07 3 (default: all)")
    opt("--seed", type=_seed, default=0, help="a non-negative integer (default: 0)")
    opt("--device", default="auto", help="auto | cpu | cuda")
    opt("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
        help="override a chapter parameter")
    opt("--jobs", type=_jobs, default=min(2, os.cpu_count() or 1),
        help="how many one-core chapters run side by side (default: 2, or 1 on one core)")
    opt("--timeout", type=_timeout, help="per-chapter limit in seconds (default by scale)")
    opt("--executor", help="where simulation blocks run: local (default) | dask (a Dask cluster; "
        "needs '.[dask]')")
    opt("--scheduler", metavar="ADDR", help="with --executor dask: the scheduler, e.g. "
        "tcp://host:8786 (default: a LocalCluster here)")
    sub = p.add_subparsers(dest="cmd", required=True)
    cmd = {}
    for name, handler, help in [
        ("run", cmd_run, "execute chapters"),
        ("all", cmd_run, "execute chapters and build the HTML"),
        ("build", cmd_build, "write the dashboard and render _build/html"),
        ("list", cmd_list, "list the chapters"),
        ("check-pairs", cmd_check_pairs, "check every .py/.ipynb pair is in sync"),
        ("shape", cmd_shape, "each chapter's code lines by kind and its longest code cell"),
        ("dashboard", cmd_dashboard, "write book/dashboard.md from results/ and evidence/"),
        ("pdf", cmd_pdf, "print the whole book to _build/pdf/layerwise-<scale>.pdf, named by the "
         "scale of the executed chapters (offline, headless Chromium)"),
        ("robustness", cmd_robustness,
         "run the book for many seeds and both CPU kernel sets; tabulate every claim"),
        ("evidence", cmd_evidence,
         "copy this machine's ledgers at a scale into the tracked evidence/ folder"),
    ]:
        cmd[name] = sub.add_parser(name, help=help, parents=[runs] if handler is cmd_run else [])
        cmd[name].set_defaults(handler=handler)
    opt = cmd["robustness"].add_argument
    opt("--seeds", default="0-19", help="seeds, e.g. 0-19 or 0,3,5-7 (default: 0-19)")
    opt("--kernels", nargs="*", default=list(KERNELS), help="native and/or avx2 (default: both)")
    opt("--scale", default="ci", help=f"one of {', '.join(SCALES)} (default: ci)")
    opt("--chapters", nargs="*", default=[], help="chapter numbers (default: all)")
    opt = cmd["evidence"].add_argument
    opt("--scale", required=True, help=f"one of {', '.join(SCALES)}")
    opt("--name", help="folder name under evidence/ (default: <scale>-<device>-<date>)")
    opt("--command", default="",
        help="the command that produced the results (recorded in META.json)")
    opt("--chapters", nargs="*", default=[], help="chapter numbers (default: all)")
    opt("--claims", nargs="*", default=[],
        help="keep only these claim ids: the evidence is a part of the run, for them only")
    opt("--note", default="", help="what the part is (with --claims)")
    opt("--figures", nargs="*",
        help="keep only these figures (names without .png; default: all, none with --claims)")
    return p


class Terminated(KeyboardInterrupt):
    """A plain ``kill`` (SIGTERM) of the command: stopped as Ctrl-C stops it."""


def _terminate(signum: int, frame: Any) -> None:
    """The SIGTERM handler: :class:`Terminated` raised where the command is."""
    raise Terminated


def main(argv: list[str] | None = None) -> int:
    """``python -m layerwise book COMMAND``: the command's exit status (0 when its ``cmd_*``
    returns None); 2 with one line for a bad option or a failed chapter's gate, 130 with one line
    for Ctrl-C and 143 for SIGTERM (each stops the running chapters first)."""
    a = parser().parse_args(argv)
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return a.handler(a, repo_root()) or 0
    except (ParameterError, ChapterFailed) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:  # one line, not a traceback; the store keeps what finished
        print(INTERRUPTED, file=sys.stderr)
        return 143 if isinstance(exc, Terminated) else 130
    finally:
        signal.signal(signal.SIGTERM, previous)


def _last_wall_time(nb: Path, scale: str, root: Path) -> float:
    """How long chapter ``nb`` took at ``scale`` last time: its ledger here, else the newest
    tracked evidence at that scale (0 when neither has it)."""
    found = [results_root(root) / scale / f"{nb.stem}.json",
             *sorted((root / EVIDENCE_DIR).glob(f"{scale}-*/{nb.stem}.json"), reverse=True)]
    ledger = next((f for f in found if f.exists()), None)
    return float(json.loads(ledger.read_text()).get("wall_time_s") or 0.0) if ledger else 0.0


def _run_chapters(
    a: argparse.Namespace, todo: dict[str, Path], overrides: dict[str, Any],
    timeout: float | None, root: Path, executor: str, scheduler: str | None,
) -> list[str]:
    """Run the chapters of ``todo``; the names of those that failed. The one-core chapters
    (:data:`layerwise.chapter.ONE_TORCH_THREAD`) run ``a.jobs`` at a time, the longest last time
    first, without progress bars; then every other chapter alone, in book order (each uses every
    core). On Dask (``executor`` not local) all run one after the other."""

    def run(nb: Path, quiet: bool = False) -> bool:
        t0 = time.perf_counter()
        print(f"[layerwise] chapter {nb.stem} at scale {a.scale} ...", flush=True)
        try:
            run_chapter(nb, scale=a.scale, seed=a.seed, device=a.device, overrides=overrides,
                        timeout=timeout, root=root, executor=executor, scheduler=scheduler,
                        quiet=quiet)
        except ChapterFailed as exc:
            print(f"[layerwise] FAILED: {exc}", file=sys.stderr, flush=True)
            return False
        res = json.loads((results_root(root) / a.scale / f"{nb.stem}.json").read_text())
        n = tally_outcomes(res.get("claims", []))
        print(f"[layerwise]   {nb.stem} done in {time.perf_counter() - t0:.1f} s: {n['pass']} "
              f"claims passed, {n['fail']} failed, {n['inconclusive']} inconclusive, "
              f"{n['skipped']} skipped", flush=True)
        return True

    jobs = a.jobs if executor == "local" else 1
    beside = [nb for nb in todo.values() if jobs > 1 and nb.stem in ONE_TORCH_THREAD]
    beside.sort(key=lambda nb: -_last_wall_time(nb, a.scale, root))
    beside, failures = beside if len(beside) > 1 else [], []
    if beside:
        print(f"[layerwise] {len(beside)} one-core chapters, {jobs} at a time (no progress "
              "bars):", ", ".join(nb.stem for nb in beside), flush=True)
        with ThreadPoolExecutor(jobs) as pool:
            try:
                ok = list(pool.map(lambda nb: run(nb, quiet=True), beside))
            except KeyboardInterrupt:  # stop every chapter running beside this one
                for proc in list(LIVE):
                    proc.kill()
                raise
        failures += [nb.stem for nb, good in zip(beside, ok) if not good]
    return failures + [nb.stem for nb in todo.values() if nb not in beside and not run(nb)]


if __name__ == "__main__":
    sys.exit(main())
