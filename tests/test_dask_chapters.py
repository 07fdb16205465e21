"""Whole ``ci`` chapters on a Dask cluster give the local run's results (issue #31, item 2).

``python -m layerwise book run --executor dask`` with no scheduler starts one ``LocalCluster`` of
two worker processes for the run; the chapters' heavy units (Chapter 5's moments-engine blocks,
Chapter 1's Monte-Carlo units) then run there.  Each chapter is run twice, locally and on Dask,
each into its own empty results store, and everything the book shows must be the same bit for bit:
every claim of the ledger (measured, interval, se, status, and the rest of the record), every glued
value, every figure's saved arrays (``<results>/ci/figures/<chapter>/*.npz``) and every entry of
the store.

The CLI writes the executed notebooks into ``<root>/book/chapters``; so that the test leaves the
shared ``book/chapters`` alone, it runs from a temporary root holding links to the repository's
``_toc.yml`` and ``notebooks/`` (the kernels still import this checkout's ``layerwise``).

Chapter 7 (trainability cells through the same seam) is left out: one cold local run at ``ci``
takes ≈ 90 s on this 2-core machine, the pair more than the whole test's budget; its cells are
compared with the local run in ``tests/test_executor.py``.

A chapter's own computations (outside the units) run in its kernel with the torch/BLAS threads of
a local run only if the kernel does not inherit the worker settings (``OMP_NUM_THREADS=1``, ...)
that each ``distributed`` nanny writes into the environment of the process that starts the
``LocalCluster`` (``distributed.nanny.pre-spawn-environ``): the last test checks that directly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ("05_resnet_power_laws", "01_layer_decoupling")
EXECUTORS = ("local", "dask")


def _book_run(root: Path, results: Path, executor: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "LAYERWISE_RESULTS": str(results)}
    for var in ("LAYERWISE_EXECUTOR", "LAYERWISE_SCHEDULER"):
        env.pop(var, None)  # only the --executor option decides
    args = ["book", "run", "--chapters", *(c[:2] for c in CHAPTERS), "--scale", "ci"]
    return subprocess.run(
        [sys.executable, "-m", "layerwise", *args, "--seed", "0", "--device", "cpu"]
        + ["--executor", executor],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, tuple[Path, subprocess.CompletedProcess]]:
    """The two chapters run locally and on Dask, each into an empty results store of its own:
    ``{executor: (results folder, finished CLI process)}``."""
    root = tmp_path_factory.mktemp("root")
    for name in ("_toc.yml", "notebooks"):
        (root / name).symlink_to(ROOT / name)
    out = {}
    for executor in EXECUTORS:
        results = tmp_path_factory.mktemp(f"results-{executor}")
        assert not any(results.iterdir())
        t0 = time.perf_counter()
        p = _book_run(root, results, executor)
        print(f"{executor}: {time.perf_counter() - t0:.0f} s\n{p.stdout}{p.stderr[-3000:]}")
        assert p.returncode == 0, f"{executor} run failed:\n{p.stdout}\n{p.stderr[-6000:]}"
        out[executor] = (results, p)
    assert {p.name for p in (root / "book" / "chapters").iterdir()} >= {
        f"{c}.ipynb" for c in CHAPTERS
    }  # the executed copies went to the temporary root
    return out


def _ledger(results: Path, chapter: str) -> dict:
    return json.loads((results / "ci" / f"{chapter}.json").read_text())


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Same dtype, shape and bytes (NaNs included, and 0.0 is not -0.0)."""
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _differing_arrays(a_path: Path, b_path: Path) -> list[str]:
    with np.load(a_path, allow_pickle=False) as a, np.load(b_path, allow_pickle=False) as b:
        if sorted(a.files) != sorted(b.files):
            return [f"keys {sorted(a.files)} != {sorted(b.files)}"]
        return [k for k in a.files if not _same_bits(a[k], b[k])]


@pytest.mark.slow
def test_the_dask_run_used_the_local_cluster(runs):
    """The Dask run started one LocalCluster and its blocks were computed by its workers (the
    store records a worker for each unit that went through the cluster; local units record none)."""
    _, p = runs["dask"]
    assert "simulation blocks go to Dask: a LocalCluster on this machine" in p.stdout
    assert "[layerwise] one LocalCluster for every chapter: tcp://" in p.stdout
    for executor, (results, _) in runs.items():
        for chapter in CHAPTERS:
            metas = [
                json.loads(m.read_text())
                for m in (results / "store").glob(f"{chapter}.*.block/*/meta.json")
            ]
            assert metas, f"{chapter}: no unit went through the seam ({executor})"
            on_worker = ["worker" in m for m in metas]
            assert all(on_worker) if executor == "dask" else not any(on_worker), (
                f"{chapter} ({executor}): {sum(on_worker)} of {len(metas)} units on a worker"
            )


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_ledgers_on_dask_equal_the_local_run(runs, chapter):
    """Every claim record (measured, interval, se, status, ...) and every glued value."""
    local, dask = (_ledger(runs[e][0], chapter) for e in EXECUTORS)
    assert local["claims"], f"{chapter} states no claims"
    assert [c["id"] for c in dask["claims"]] == [c["id"] for c in local["claims"]]
    differ = [
        f"{a['id']}.{field}: local {a.get(field)!r}, dask {b.get(field)!r}"
        for a, b in zip(local["claims"], dask["claims"])
        for field in sorted(set(a) | set(b))
        if json.dumps(a.get(field)) != json.dumps(b.get(field))  # exact, NaN == NaN
    ]
    assert not differ, f"{chapter}: claims differ:\n" + "\n".join(differ)
    assert local["glued"] and sorted(dask["glued"]) == sorted(local["glued"])
    differ = [
        f"{k}: local {v!r}, dask {dask['glued'][k]!r}"
        for k, v in local["glued"].items()
        if dask["glued"][k] != v
    ]
    assert not differ, f"{chapter}: glued values differ:\n" + "\n".join(differ)
    for key in ("params", "figures", "figure_labels"):
        assert dask[key] == local[key], key


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_figure_arrays_on_dask_equal_the_local_run_bit_for_bit(runs, chapter):
    local, dask = (runs[e][0] / "ci" / "figures" / chapter for e in EXECUTORS)
    names = sorted(p.name for p in local.glob("*.npz"))
    assert names and names == sorted(p.name for p in dask.glob("*.npz"))
    assert len(names) == len(_ledger(runs["local"][0], chapter)["figures"])
    differ = {n: d for n in names if (d := _differing_arrays(local / n, dask / n))}
    assert not differ, f"{chapter}: figure arrays differ: {differ}"


@pytest.mark.slow
def test_every_store_entry_on_dask_equals_the_local_one(runs):
    """The stores hold the same entries (same keys: same configurations and code), with the same
    arrays: each unit, and each assembled result, bit for bit."""

    def entries(results: Path) -> dict[str, Path]:
        return {
            str(m.parent.relative_to(results / "store")): m.parent
            for m in (results / "store").glob("*/*/meta.json")
        }

    local, dask = (entries(runs[e][0]) for e in EXECUTORS)
    assert local and sorted(dask) == sorted(local)
    differ = {
        k: d
        for k, p in local.items()
        if (d := _differing_arrays(p / "arrays.npz", dask[k] / "arrays.npz"))
    }
    assert not differ, f"store entries differ: {differ}"


#: The thread settings a ``distributed`` nanny sets for its workers (and, in passing, in the
#: environment of the process that starts it).
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


@pytest.mark.slow
def test_chapter_kernels_of_a_dask_run_keep_the_threads_of_a_local_run(
    tmp_path, monkeypatch, request
):
    """The kernels of ``book run --executor dask`` (LocalCluster) start with the caller's thread
    settings, not the workers' (else a chapter's own torch reductions run on one thread and differ
    from the local run's in the last bits)."""
    from layerwise import book, runner

    seen: list[dict[str, str | None]] = []

    class NoKernel:
        """Stands for the kernel's process: records its environment and fails at once."""

        returncode = 1

        def __init__(self, args, env, **kwargs):
            seen.append({k: env.get(k) for k in THREAD_VARS})

        def poll(self):
            return self.returncode

        def kill(self):
            pass

        def wait(self, timeout=None):
            return self.returncode

    saved = dict(os.environ)  # the nannies write into it: put it back afterwards
    request.addfinalizer(lambda: (os.environ.clear(), os.environ.update(saved)))
    for var in THREAD_VARS:  # unset, as usual (a set value is kept by the nanny)
        monkeypatch.delenv(var, raising=False)
    # the runner's own subprocess module only: the cluster's worker processes start as usual
    monkeypatch.setattr(
        runner, "subprocess", types.SimpleNamespace(
            Popen=NoKernel, DEVNULL=subprocess.DEVNULL, TimeoutExpired=subprocess.TimeoutExpired
        )
    )
    monkeypatch.setenv("LAYERWISE_RESULTS", str(tmp_path / "results"))
    monkeypatch.delenv("LAYERWISE_SCHEDULER", raising=False)
    args = ["run", "--chapters", "05", "--scale", "ci", "--device", "cpu", "--executor"]
    assert book.main([*args, "local"]) == 1  # the stand-in kernel failed, as it should
    assert book.main([*args, "dask"]) == 1
    local, dask = seen
    assert local == dict.fromkeys(THREAD_VARS)  # a local run's kernel: torch picks its threads
    assert dask == local, f"the dask run's kernel gets {dask}, a local run's {local}"
