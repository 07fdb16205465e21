"""Measured robustness of the scorecard (SPEC §1 "Robustness"): the book run for many seeds and
under both torch CPU kernel sets, every claim's outcomes tabulated.

``python -m layerwise book robustness --seeds 0-19 --kernels native avx2`` (``make robustness``)
runs the chosen chapters at a scale (``ci`` by default) once per (kernel set, seed), each run into
its own results folder ``results/robustness/<scale>/<kernel>-s<seed>/`` (its own store: every run
is cold), and writes ``table.md`` and ``table.json`` beside them (:func:`tabulate`). A verdict must
not depend on the seed or the CPU's kernels: the flags are what to fix, at their cause.

``native`` leaves torch to pick the machine's own kernels (AVX-512 where the CPU has it);
``avx2`` sets ``ATEN_CPU_CAPABILITY=avx2``, the set a CPU without AVX-512 gets.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .claims import OUTCOMES
from .params import ParameterError, check_choice, check_scale
from .provenance import git_commit

#: Kernel sets: name → the value of ``ATEN_CPU_CAPABILITY`` (None: the machine's own choice).
KERNELS: dict[str, str | None] = {"native": None, "avx2": "avx2"}

#: The columns of the table of claims whose outcome varied or failed.
COLUMNS = ("claim", "kind", *OUTCOMES, "failed in", "flag")


def parse_seeds(text: str) -> list[int]:
    """``"0-19"``, ``"3"`` or ``"0,4,7-9"`` as a sorted list of distinct non-negative seeds."""
    out: set[int] = set()
    try:
        for part in str(text).split(","):
            a, dash, b = part.strip().partition("-")
            lo, hi = int(a), int(b if dash else a)
            if lo > hi:
                raise ValueError
            out.update(range(lo, hi + 1))
    except ValueError:
        raise ParameterError(
            f"seeds={text!r} is not allowed; expected seeds like '0-19' or '0,3,5-7'"
        ) from None
    return sorted(out)


@contextmanager
def _environment(**values: str | None) -> Iterator[None]:
    """Set (or, for None, remove) environment variables for the duration of the block."""
    old = {k: os.environ.pop(k, None) for k in values}
    try:
        os.environ.update({k: v for k, v in values.items() if v is not None})
        yield
    finally:
        for k in values:
            os.environ.pop(k, None)
        os.environ.update({k: v for k, v in old.items() if v is not None})


def run_all(
    seeds: Sequence[int], kernels: Sequence[str], *, scale: str = "ci",
    chapters: Sequence[str] | None = None, out: Path | None = None, root: Path | None = None,
) -> Path:
    """Run the chapters once per (kernel set, seed), each into ``out/<kernel>-s<seed>/``, and
    write the table; returns its folder.

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
            run_dir = out / f"{kernel}-s{seed}"
            crashes_file = run_dir / "crashes.json"
            crashes = json.loads(crashes_file.read_text()) if crashes_file.exists() else {}
            pending = [nb for nb in todo.values() if nb.stem not in crashes
                       and not (run_dir / scale / f"{nb.stem}.json").exists()]
            if not pending and crashes_file.exists():
                continue
            run_dir.mkdir(parents=True, exist_ok=True)
            with open(run_dir / "commits.txt", "a") as f:  # which code ran which chapters
                numbers = " ".join(nb.stem[:2] for nb in pending)
                f.write(f"{git_commit(root, short=True)} {numbers}\n")
            t0 = time.perf_counter()
            with _environment(LAYERWISE_RESULTS=str(run_dir), ATEN_CPU_CAPABILITY=KERNELS[kernel]):
                for nb in pending:
                    try:
                        run_chapter(nb, scale=scale, seed=seed, device="cpu", root=root,
                                    executed_dir=run_dir / "executed")
                    except ChapterFailed as exc:
                        crashes[nb.stem] = str(exc)[-2000:]
                    crashes_file.write_text(json.dumps(crashes, indent=1))  # resumable
            crashes_file.write_text(json.dumps(crashes, indent=1))
            print(f"[layerwise] robustness {run_dir.name}: {len(pending)} chapters in "
                  f"{time.perf_counter() - t0:.0f} s, {len(crashes)} crashed", flush=True)
    table = tabulate(load_runs(out, scale))
    (out / "table.json").write_text(json.dumps(table, indent=1))
    (out / "table.md").write_text(table_markdown(table))
    return out


def load_runs(out: Path, scale: str) -> dict[str, dict[str, Any]]:
    """Every run folder under ``out``:
    ``{label: {"claims": {chapter: [claim records]}, "crashes": {…}, "commits": [...]}}``."""
    runs: dict[str, dict[str, Any]] = {}
    for run_dir in sorted(p for p in Path(out).iterdir() if (p / "crashes.json").exists()):
        commits = run_dir / "commits.txt"
        lines = commits.read_text().splitlines() if commits.exists() else []
        runs[run_dir.name] = {
            "claims": {f.stem: json.loads(f.read_text()).get("claims", [])
                       for f in sorted((run_dir / scale).glob("*.json"))},
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
    ran = {lb: [ch for ch in run["claims"] if ch not in run.get("crashes", {})]
           for lb, run in runs.items()}  # the chapters each run has claims of
    for label, run in runs.items():
        for chapter in run.get("crashes", {}):
            crashes.setdefault(chapter, []).append(label)
        for chapter in ran[label]:
            for c in run["claims"][chapter]:
                row = rows.setdefault(f"{chapter}/{c['id']}", {
                    "kind": c.get("kind", "checks"), "counts": {}, "failed_in": [], "seen_in": []})
                row["counts"][c["status"]] = row["counts"].get(c["status"], 0) + 1
                row["seen_in"].append(label)
                if c["status"] == "fail":
                    row["failed_in"].append(label)
    for key, row in rows.items():
        seen, chapter = row.pop("seen_in"), key.split("/", 1)[0]
        row["missing_in"] = [lb for lb in runs if chapter in ran[lb] and lb not in seen]
    return {
        "runs": list(runs),
        "commits": sorted({c for run in runs.values() for c in run.get("commits", [])}),
        "claims": rows,
        "flagged": sorted(k for k, r in rows.items() if r["failed_in"] or r["missing_in"]),
        "flips": sorted(k for k, r in rows.items()
                        if r["counts"].get("pass") and r["counts"].get("fail")),
        "varying": sorted(k for k, r in rows.items() if len(r["counts"]) > 1),
        "crashes": crashes,
        "totals": {s: sum(r["counts"].get(s, 0) for r in rows.values()) for s in OUTCOMES},
    }


def table_markdown(table: Mapping[str, Any]) -> str:
    """The table as Markdown, readable as printed and as rendered: one sentence (runs, claims, and
    what failed, flipped or crashed), then a pipe table with one row per claim whose outcome varied
    or failed."""
    crashed = sum(len(v) for v in table["crashes"].values())
    lines = [
        "# Robustness of the scorecard", "",
        f"{len(table['runs'])} runs, {len(table['claims'])} claims: {len(table['flagged'])} failed "
        f"in some run, {len(table['flips'])} flipped between pass and fail, "
        f"{len(table['varying'])} changed outcome at all; {crashed} chapter runs crashed.", "",
        "Runs: " + ", ".join(table["runs"]), "",
        "Code: " + (", ".join(table.get("commits", [])) or "unknown"), "",
    ]
    if table["crashes"]:
        lines += ["## Crashes", "",
                  *[f"- {ch}: {', '.join(v)}" for ch, v in sorted(table["crashes"].items())], ""]
    shown = sorted(set(table["varying"]) | set(table["flagged"]))
    rows = [COLUMNS, ("---",) * len(COLUMNS)]
    for key in shown:
        r = table["claims"][key]
        flag = "flip" if key in table["flips"] else ("fail" if key in table["flagged"] else "")
        failed = ", ".join(r["failed_in"][:6]) + (" …" if len(r["failed_in"]) > 6 else "")
        rows.append((key, r["kind"], *(str(r["counts"].get(s, 0)) for s in OUTCOMES), failed, flag))
    pipes = ["| " + " | ".join(row) + " |" for row in rows]
    if not shown:
        pipes.append("| (none) " + "| " * (len(COLUMNS) - 1) + "|")
    totals = ", ".join(f"{v} {k}" for k, v in table["totals"].items())
    return "\n".join([
        *lines, "## Claims whose outcome varied or failed", "",
        *pipes, "",
        f"Every other claim had the same outcome in every run (totals over all runs: {totals}).",
    ]) + "\n"
