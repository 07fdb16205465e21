"""Running chapters: which there are, their parameters, and executing them with papermill.

:func:`run_chapter` executes ``notebooks/NN_topic.ipynb`` with papermill in a child process (so
that a time limit can stop it) into ``book/chapters/NN_topic.ipynb``, raises :class:`ChapterFailed`
with the failing cell's traceback, and hands the executed copy to :func:`layerwise.pages.decorate`.
:func:`check_pairs` verifies that every ``.ipynb`` matches its jupytext ``.py`` source.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .executor import ENV_EXECUTOR, ENV_SCHEDULER, kernel_environ
from .params import ParameterError, check_like
from .paths import repo_root, results_root

#: Per-chapter time limits in seconds by scale (SPEC budgets with margin); ``paper`` is unbounded.
TIMEOUTS = {"ci": 600, "default": 1800, "paper": None}

#: Exit status of the child process when a cell raised (its first stderr line then
# starts ``CELL\t``).
CELL_FAILED = 3


class ChapterFailed(RuntimeError):
    """A chapter's execution failed; the message names the chapter and shows the cell traceback."""


def chapters(root: Path | None = None) -> dict[str, Path]:
    """``{"07": notebooks/07_meanfield_chaos.ipynb, …}`` for every paired chapter notebook."""
    return {
        p.name[:2]: p for p in sorted((root or repo_root()).glob("notebooks/[0-9][0-9]_*.ipynb"))
    }


def select(requested: list[str] | None, root: Path | None = None) -> dict[str, Path]:
    """The chapters named by number (``7``, ``07``) or full name; all when ``requested`` is
    empty."""
    avail = chapters(root)
    if not requested:
        return avail
    out = {}
    for r in requested:
        key = r.split("_")[0].zfill(2) if r.split("_")[0].isdigit() else r
        if key not in avail:
            raise ParameterError(
                f"chapter={r!r} is not allowed; choose one of: "
                f"{', '.join(f'{k} ({v.stem})' for k, v in avail.items())}"
            )
        out[key] = avail[key]
    return out


def parse_overrides(items: list[str] | None) -> dict[str, Any]:
    """``["width=2000", "phi='tanh'"]`` → ``{"width": 2000, "phi": "tanh"}`` (Python literals,
    else strings)."""
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise ParameterError(
                f"override {item!r} is malformed; expected NAME=VALUE, e.g. width=2000"
            )
        try:
            value = ast.literal_eval(raw.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            value = raw.strip()
        if key in out and out[key] != value:
            raise ParameterError(
                f"override {key!r} is given twice ({key}={out[key]!r} and {key}={value!r}); "
                "give it once"
            )
        out[key] = value
    return out


#: Parameters set by the command line's own options, not by ``-p NAME=VALUE``.
RESERVED = {
    "scale": "--scale (make: SCALE=)",
    "seed": "--seed (make: SEED=)",
    "device": "--device (make: DEVICE=)",
}


def check_overrides(nb_path: Path, overrides: dict[str, Any]) -> dict[str, Any]:
    """The gate before papermill: raise :class:`ParameterError` unless every override names a
    variable of the notebook's parameters cell (not ``scale``/``seed``/``device``, which have
    their own options) and has the type of its default there, or, where that is ``None``, of its
    value at every scale (:func:`notebook_presets`, :func:`layerwise.params.check_like`).  Returns
    the overrides normalised (ints given for floats become floats)."""
    allowed = notebook_defaults(nb_path)  # {name: default}
    reserved = sorted(set(overrides) & set(RESERVED))
    if reserved:
        raise ParameterError(
            f"chapter {nb_path.stem}: {reserved[0]} is not a chapter parameter; "
            f"set it with {RESERVED[reserved[0]]}"
        )
    unknown = sorted(set(overrides) - set(allowed))
    if unknown:
        raise ParameterError(
            f"chapter {nb_path.stem}: unknown parameter(s) {unknown}; allowed: {', '.join(allowed)}"
        )
    if not overrides:
        return {}
    presets = notebook_presets(nb_path)
    out = {}
    for name, value in overrides.items():
        try:
            if allowed.get(name) is not None:
                out[name] = check_like(name, value, {"default": allowed[name]}, preset=False)
            else:
                out[name] = check_like(
                    name, value, {s: row[name] for s, row in presets.items() if name in row}
                )
        except ParameterError as exc:
            raise ParameterError(f"chapter {nb_path.stem}: {exc}") from None
    if out.get("dataset") not in (None, "none"):  # a data set is fetched or verified before work
        from .data import check_source

        try:
            check_source(out["dataset"])
        except ParameterError as exc:
            raise ParameterError(f"chapter {nb_path.stem}: {exc}") from None
    return out


def notebook_parameters(nb_path: Path) -> list[str]:
    """Names of the notebook's ``parameters`` cell."""
    return list(notebook_defaults(nb_path))


def notebook_defaults(nb_path: Path) -> dict[str, Any]:
    """``{name: default}`` of the notebook's parameters cell, by papermill's own inspection
    (``None`` where it is not a literal)."""
    import papermill as pm

    params = pm.inspect_notebook(str(nb_path))
    if not params:
        raise ChapterFailed(f"{nb_path.name} has no cell tagged 'parameters'")
    out = {}
    for name, p in params.items():
        try:
            out[name] = ast.literal_eval(p.get("default") or "None")
        except (ValueError, SyntaxError):
            out[name] = None
    return out


def notebook_presets(nb_path: Path) -> dict[str, dict[str, Any]]:
    """The chapter's scale table ``{scale: {name: value}}``: the literal ``SCALES = {...}``
    assignment of the notebook's code, read as data with :func:`ast.literal_eval` (nothing runs).
    ``{}`` when the notebook has no such literal table."""
    for cell in json.loads(Path(nb_path).read_text(encoding="utf-8")).get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        try:
            tree = ast.parse("".join(cell.get("source", "")))
        except SyntaxError:  # a cell with IPython magics holds no scale table
            continue
        for stmt in tree.body:
            names = [getattr(t, "id", None) for t in getattr(stmt, "targets", ())]
            if isinstance(stmt, ast.Assign) and names == ["SCALES"]:
                try:
                    table = ast.literal_eval(stmt.value)
                except ValueError:
                    return {}
                ok = isinstance(table, dict) and all(isinstance(r, dict) for r in table.values())
                return table if ok else {}
    return {}


def check_pairs(root: Path | None = None) -> list[str]:
    """Names of notebooks whose ``.ipynb`` differs from its ``.py`` source (cells and metadata)."""
    import jupytext

    def cells(nb: Any) -> list[tuple[str, str, list[str]]]:
        return [
            (c.cell_type, c.source.strip(), sorted(c.metadata.get("tags", []))) for c in nb.cells
        ]

    root = root or repo_root()
    bad = []
    for py in sorted((root / "notebooks").glob("[0-9][0-9]_*.py")):
        ipynb = py.with_suffix(".ipynb")
        if not ipynb.exists():
            bad.append(f"{py.name}: no paired {ipynb.name}")
            continue
        a, b = jupytext.read(py), jupytext.read(ipynb)
        if cells(a) != cells(b):
            bad.append(f"{py.name} and {ipynb.name} differ: run `jupytext --sync {py}`")
        elif b.metadata.get("kernelspec", {}).get("name") != "python3":
            bad.append(f"{ipynb.name}: kernelspec is not python3 (`jupytext --set-kernel python3`)")
    for ipynb in sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        if not ipynb.with_suffix(".py").exists():
            bad.append(f"{ipynb.name}: no paired .py source")
    return bad


def execute(nb: str, out: str, params: dict[str, Any], cwd: str) -> int:
    """Execute notebook ``nb`` into ``out`` with ``params`` injected (papermill's Python API); what
    the child process of :func:`run_chapter` runs.  papermill's progress bar over the cells and
    the kernel's stderr (its block bars, warnings) go to this process's stdout, which
    :func:`run_chapter` connects to its own stderr.  Returns 0, or :data:`CELL_FAILED` after
    writing ``CELL<TAB>count<TAB>error<TAB>value`` and the cell's traceback to stderr."""
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    try:
        pm.execute_notebook(
            nb,
            out,
            parameters=params,
            cwd=cwd,
            kernel_name="python3",
            progress_bar={"desc": Path(nb).stem, "file": sys.stdout, "leave": False},
            stderr_file=sys.stdout,
        )
    except PapermillExecutionError as e:
        print("CELL", e.exec_count, e.ename, e.evalue, sep="\t", file=sys.stderr)
        print("\n".join(e.traceback), file=sys.stderr)
        return CELL_FAILED
    return 0


#: The chapters' child processes running now (several with ``book run --jobs``): what an
#: interrupted run stops (:mod:`layerwise.book`).
LIVE: set[subprocess.Popen] = set()


def run_chapter(
    nb: Path,
    *,
    scale: str,
    seed: int = 0,
    device: str = "auto",
    overrides: dict[str, Any] | None = None,
    timeout: float | None = None,
    root: Path | None = None,
    executed_dir: Path | None = None,
    executor: str | None = None,
    scheduler: str | None = None,
    quiet: bool = False,
) -> Path:
    """Execute one chapter with papermill in a subprocess; raise :class:`ChapterFailed` on error.

    The executed copy goes to ``executed_dir`` (default ``book/chapters/``), results to
    ``$LAYERWISE_RESULTS`` (default ``results/``); progress bars go to stderr.  The
    executed copy is then shaped for the page (:func:`layerwise.pages.decorate`).  ``executor`` and
    ``scheduler`` (validated by the caller, :func:`layerwise.executor.check_executor`) become the
    kernel's ``$LAYERWISE_EXECUTOR``/``$LAYERWISE_SCHEDULER``; left out, the caller's are
    inherited. ``quiet`` turns the progress bars off (``TQDM_DISABLE``: chapters running side by
    side); warnings and failures are still shown."""
    from .pages import decorate

    root = root or repo_root()
    overrides = check_overrides(nb, overrides or {})
    params = {"scale": scale, "seed": seed, "device": device, **overrides}
    out = (executed_dir or root / "book" / "chapters") / nb.name
    out.parent.mkdir(parents=True, exist_ok=True)
    results_dir = results_root(root)
    # not the single-thread settings a LocalCluster here wrote (kernel_environ)
    env = {**kernel_environ(), "LAYERWISE_RESULTS": str(results_dir), "PYTHONHASHSEED": "0"}
    if quiet:
        env["TQDM_DISABLE"] = "1"
    if executor is not None:
        env[ENV_EXECUTOR] = executor
        env.pop(ENV_SCHEDULER, None)
        if scheduler:
            env[ENV_SCHEDULER] = scheduler
    arg = json.dumps({"nb": str(nb), "out": str(out), "params": params, "cwd": str(nb.parent)})
    started = time.time()
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as err:
        # the child's stdout (progress bars, the kernel's stderr) is this process's stderr
        proc = subprocess.Popen(
            [sys.executable, "-m", "layerwise.runner", arg], env=env, stdout=2, stderr=err
        )
        LIVE.add(proc)
        try:
            proc.wait(timeout=timeout)
        except (subprocess.TimeoutExpired, KeyboardInterrupt) as exc:  # Ctrl-C: stop the chapter
            proc.kill()
            proc.wait()
            print(file=sys.stderr)  # end the progress bar's line
            if isinstance(exc, KeyboardInterrupt):
                raise  # the command line says so in one line
            raise ChapterFailed(
                f"chapter {nb.stem} at scale {scale} exceeded its time limit of {timeout:.0f} s"
            ) from None
        finally:
            LIVE.discard(proc)
        err.seek(0)
        if proc.returncode != 0:
            raise _failure(f"chapter {nb.stem} failed at scale {scale}", err.read(), out)
    results = results_dir / scale / f"{nb.stem}.json"
    if not results.exists() or results.stat().st_mtime < started - 1:
        raise ChapterFailed(
            f"chapter {nb.stem} ran but did not write {results} (missing ch.finish()?)"
        )
    decorate(out, results, scale)
    return out


def _failure(what: str, stderr: str, out: Path) -> ChapterFailed:
    """The error of a failed child: ``what``, the failing cell's number (from its ``CELL`` line)
    and, from there on, its stderr without ANSI colours."""
    detail = re.sub(r"\x1b\[[0-9;]*m", "", stderr.strip())
    head = next((ln for ln in detail.splitlines() if ln.startswith("CELL\t")), "")
    where = f" in cell {head.split(chr(9))[1]}" if head else ""
    detail = detail[detail.index(head) :] if head else detail
    return ChapterFailed(f"{what}{where} (executed copy: {out}):\n{detail[-6000:]}")


if __name__ == "__main__":  # the child process of run_chapter: python -m layerwise.runner '{…}'
    a = json.loads(sys.argv[1])
    sys.exit(execute(a["nb"], a["out"], a["params"], a["cwd"]))
