"""Measured robustness of the scorecard (SPEC §1 "Robustness"): the book run for many seeds and
under both torch CPU kernel sets, every claim's outcomes tabulated.

``python -m layerwise book robustness --seeds 0-19 --kernels native avx2`` (``make robustness``)
runs the chosen chapters at a scale (``ci`` by default) once per (kernel set, seed), each run into
its own results folder ``results/robustness/<scale>/<kernel>-s<seed>/`` (its own store: every run
is cold), and writes ``table.md`` and ``table.json`` beside them: per claim, how often it passed,
failed, was inconclusive or skipped, flagged when it failed anywhere or flipped between pass and
fail, and every chapter that crashed. A verdict must not depend on the seed or the CPU's kernels:
the flags are what to fix, at their cause.

``native`` leaves torch to pick the machine's own kernels (AVX-512 where the CPU has it);
``avx2`` sets ``ATEN_CPU_CAPABILITY=avx2``, the set a CPU without AVX-512 gets.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .claims import OUTCOMES
from .htmltable import Cell, Row, table_html
from .params import ParameterError, check_choice, check_scale
from .provenance import git_commit

#: Kernel sets: name → the value of ``ATEN_CPU_CAPABILITY`` (None: the machine's own choice).
KERNELS: dict[str, str | None] = {"native": None, "avx2": "avx2"}

#: The columns of the table of claims whose outcome varied or failed.
COLUMNS = ("claim", "kind", *OUTCOMES, "failed in", "flag")


def parse_seeds(text: str) -> list[int]:
    """``"0-19"``, ``"3"`` or ``"0,4,7-9"`` as a sorted list of distinct non-negative seeds."""
    out: set[int] = set()
    for part in str(text).split(","):
        part = part.strip()
        try:
            if "-" in part:
                a, b = (int(v) for v in part.split("-", 1))
                if a > b:
                    raise ValueError
                out.update(range(a, b + 1))
            else:
                out.add(int(part))
        except ValueError:
            raise ParameterError(
                f"seeds={text!r} is not allowed; expected seeds like '0-19' or '0,3,5-7'"
            ) from None
    if not out or min(out) < 0:
        raise ParameterError(
            f"seeds={text!r} is not allowed; expected non-negative seeds like '0-19'"
        )
    return sorted(out)


def _apply_environment(values: dict[str, str | None]) -> None:
    """Set each variable of ``values``, removing those whose value is None."""
    for k, v in values.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@contextmanager
def _environment(**values: str | None):
    """Set (or, for None, remove) environment variables for the duration of the block."""
    old = {k: os.environ.get(k) for k in values}
    try:
        _apply_environment(values)
        yield
    finally:
        _apply_environment(old)


def run_label(kernel: str, seed: int) -> str:
    """The folder name of one run: ``<kernel>-s<seed>``."""
    return f"{kernel}-s{seed}"


def run_all(
    seeds: Sequence[int],
    kernels: Sequence[str],
    *,
    scale: str = "ci",
    chapters: Sequence[str] | None = None,
    out: Path | None = None,
    root: Path | None = None,
) -> Path:
    """Run the chapters once per (kernel set, seed) and write the table; returns its folder.

    A chapter whose ledger (or crash) is already recorded for a run in ``out`` is not run again,
    so an interrupted sweep resumes, and chapters can be added to a sweep later."""
    from .paths import repo_root, results_root
    from .runner import ChapterFailed, run_chapter, select

    check_scale(scale)
    for k in kernels:
        check_choice("kernel", k, KERNELS)
    if not seeds:
        raise ParameterError("seeds is empty; expected at least one seed, e.g. 0-19")
    root = root or repo_root()
    todo = select(list(chapters or []), root)
    out = Path(out) if out is not None else results_root(root) / "robustness" / scale
    out.mkdir(parents=True, exist_ok=True)
    for seed in seeds:  # seed by seed, both kernel sets each: a sweep cut short still compares them
        for kernel in kernels:
            run_dir = out / run_label(kernel, seed)
            crashes_file = run_dir / "crashes.json"
            crashes: dict[str, str] = (
                json.loads(crashes_file.read_text()) if crashes_file.exists() else {}
            )
            pending = {
                k: nb
                for k, nb in todo.items()
                if nb.stem not in crashes and not (run_dir / scale / f"{nb.stem}.json").exists()
            }
            if not pending and crashes_file.exists():
                continue
            run_dir.mkdir(parents=True, exist_ok=True)
            with open(run_dir / "commits.txt", "a") as f:  # which code ran which chapters
                numbers = " ".join(nb.stem[:2] for nb in pending.values())
                f.write(f"{git_commit(root, short=True)} {numbers}\n")
            t0 = time.perf_counter()
            with _environment(LAYERWISE_RESULTS=str(run_dir), ATEN_CPU_CAPABILITY=KERNELS[kernel]):
                for nb in pending.values():
                    try:
                        run_chapter(
                            nb,
                            scale=scale,
                            seed=seed,
                            device="cpu",
                            root=root,
                            executed_dir=run_dir / "executed",
                        )
                    except ChapterFailed as exc:
                        crashes[nb.stem] = str(exc)[-2000:]
                    crashes_file.write_text(
                        json.dumps(crashes, indent=1)
                    )  # a chapter at a time: resumable
            crashes_file.write_text(json.dumps(crashes, indent=1))
            print(
                f"[layerwise] robustness {run_label(kernel, seed)}: {len(pending)} chapters in "
                f"{time.perf_counter() - t0:.0f} s, {len(crashes)} crashed",
                flush=True,
            )
    runs = load_runs(out, scale)
    table = tabulate(runs)
    (out / "table.json").write_text(json.dumps(table, indent=1))
    (out / "table.md").write_text(table_markdown(table))
    return out


def load_runs(out: Path, scale: str) -> dict[str, dict[str, Any]]:
    """Every run folder under ``out``:
    ``{label: {"claims": {chapter: [claim records]}, "crashes": {…}}}``."""
    runs: dict[str, dict[str, Any]] = {}
    for run_dir in sorted(p for p in Path(out).iterdir() if (p / "crashes.json").exists()):
        claims = {
            f.stem: json.loads(f.read_text()).get("claims", [])
            for f in sorted((run_dir / scale).glob("*.json"))
        }
        lines = (
            (run_dir / "commits.txt").read_text().splitlines()
            if (run_dir / "commits.txt").exists()
            else []
        )
        runs[run_dir.name] = {
            "claims": claims,
            "crashes": json.loads((run_dir / "crashes.json").read_text()),
            "commits": sorted({ln.split()[0] for ln in lines if ln.strip()}),
        }
    return runs


def tabulate(runs: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Per claim (``chapter/id``) its outcome counts over the runs and the runs where it failed;
    ``flagged``: the claims that failed in any run or went missing from a run whose chapter did not
    crash; ``flips``: those that passed in one run and failed in another; ``crashes``:
    ``{chapter: [run labels]}``."""
    rows: dict[str, dict[str, Any]] = {}
    crashes: dict[str, list[str]] = {}
    labels = list(runs)
    for label, run in runs.items():
        for chapter in run.get("crashes", {}):
            crashes.setdefault(chapter, []).append(label)
        for chapter, claims in run["claims"].items():
            if chapter in run.get("crashes", {}):
                continue
            for c in claims:
                row = rows.setdefault(
                    f"{chapter}/{c['id']}",
                    {"kind": c.get("kind", "checks"), "counts": {}, "failed_in": [], "seen_in": []},
                )
                row["counts"][c["status"]] = row["counts"].get(c["status"], 0) + 1
                row["seen_in"].append(label)
                if c["status"] == "fail":
                    row["failed_in"].append(label)
    for key, row in rows.items():
        chapter = key.split("/", 1)[0]
        expected = [
            lb
            for lb in labels
            if chapter in runs[lb]["claims"] and chapter not in runs[lb].get("crashes", {})
        ]
        row["missing_in"] = [lb for lb in expected if lb not in row["seen_in"]]
        del row["seen_in"]
    flagged = sorted(k for k, r in rows.items() if r["failed_in"] or r["missing_in"])
    flips = sorted(
        k for k, r in rows.items() if r["counts"].get("pass") and r["counts"].get("fail")
    )
    totals = {s: sum(r["counts"].get(s, 0) for r in rows.values()) for s in OUTCOMES}
    varying = sorted(k for k, r in rows.items() if len(r["counts"]) > 1)
    commits = sorted({c for run in runs.values() for c in run.get("commits", [])})
    return {
        "runs": labels,
        "commits": commits,
        "claims": rows,
        "flagged": flagged,
        "flips": flips,
        "varying": varying,
        "crashes": crashes,
        "totals": totals,
    }


def summary_line(table: Mapping[str, Any]) -> str:
    """One sentence: runs, claims, and what failed, flipped or crashed."""
    n_runs, n_claims = len(table["runs"]), len(table["claims"])
    crashed = sum(len(v) for v in table["crashes"].values())
    return (
        f"{n_runs} runs, {n_claims} claims: {len(table['flagged'])} failed in some run, "
        f"{len(table['flips'])} flipped between pass and fail, {len(table['varying'])} changed "
        "outcome at all; "
        f"{crashed} chapter runs crashed."
    )


def table_markdown(table: Mapping[str, Any]) -> str:
    """The table as Markdown: the summary, then one row per claim whose outcome varied or failed
    (the book's table template, :mod:`layerwise.htmltable`)."""
    lines = [
        "# Robustness of the scorecard",
        "",
        summary_line(table),
        "",
        "Runs: " + ", ".join(table["runs"]),
        "",
        "Code: " + (", ".join(table.get("commits", [])) or "unknown"),
        "",
    ]
    if table["crashes"]:
        lines += (
            ["## Crashes", ""]
            + [f"- {ch}: {', '.join(v)}" for ch, v in sorted(table["crashes"].items())]
            + [""]
        )
    shown = sorted(set(table["varying"]) | set(table["flagged"]))
    rows = []
    for key in shown:
        r = table["claims"][key]
        flag = "flip" if key in table["flips"] else ("fail" if key in table["flagged"] else "")
        failed = ", ".join(r["failed_in"][:6]) + (" …" if len(r["failed_in"]) > 6 else "")
        counts = [str(r["counts"].get(s, 0)) for s in OUTCOMES]
        rows.append(Row([key, r["kind"], *counts, failed, flag], cls=f"lw-{flag}" if flag else ""))
    if not shown:
        rows.append(Row([Cell("(none)", colspan=len(COLUMNS))]))
    lines += ["## Claims whose outcome varied or failed", "",
              table_html(COLUMNS, rows, cls="lw-dash lw-robustness", scroll=True)]
    lines += [
        "",
        "Every other claim had the same outcome in every run (totals over all runs: "
        + ", ".join(f"{v} {k}" for k, v in table["totals"].items())
        + ").",
    ]
    return "\n".join(lines) + "\n"
