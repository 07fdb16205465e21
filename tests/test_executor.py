"""The executor seam (issue #31, SPEC §4 "Beyond one machine"): the moments engine's blocks
through a Dask cluster give the local run's arrays bit for bit, resume from the store, survive a
killed worker, refuse a worker with other code, and bad settings fail before any work.

One two-process ``LocalCluster`` serves the module (started by the first test that needs it, closed
at the end); its workers are spawned processes of this interpreter and import ``layerwise`` from the
same checkout.  Compute functions are defined inside the tests: cloudpickle sends them by value.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from layerwise import executor as ex
from layerwise.chapter import Chapter
from layerwise.params import ParameterError

distributed = pytest.importorskip("distributed")

from layerwise.moments import MomentsConfig, simulate  # noqa: E402

CFG = dict(
    arch="vanilla", kernel_size=1, width=16, batch=8, depth=8, n_sims=6, records=4, device="cpu"
)


@pytest.fixture(scope="module")
def client():
    """A ``distributed.Client`` to a two-worker LocalCluster, as ``resolve_executor('dask')`` makes
    it (and caches it, so chapters that resolve the executor from the environment get this one)."""
    c = ex.resolve_executor("dask")
    c.wait_for_workers(2, timeout=60)
    yield c
    ex.close_all()


@pytest.fixture
def on_dask(client, monkeypatch):
    """Chapters in this test send their blocks to the module's cluster
    (``$LAYERWISE_EXECUTOR=dask``)."""
    monkeypatch.setenv(ex.ENV_EXECUTOR, "dask")
    monkeypatch.delenv(ex.ENV_SCHEDULER, raising=False)
    assert ex.resolve_executor() is client
    return client


def _chapter(root: Path) -> Chapter:
    return Chapter("03_executor_test", scale="ci", seed=0, device="cpu", results=root)


def _local_run(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    with monkeypatch.context() as m:
        m.setenv(ex.ENV_EXECUTOR, "local")
        assert ex.resolve_executor() is None
        return _chapter(root).simulate_moments("moments", MomentsConfig(**CFG), block=2)


def _block_computations(store) -> list[str]:
    return [key for event, name, key in store.events if event == "miss" and name.endswith(".block")]


def _same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    return sorted(a) == sorted(b) and all(
        np.array_equal(a[k], b[k]) and a[k].dtype == b[k].dtype for k in a
    )


def test_engine_blocks_on_a_local_cluster_equal_the_local_run_bit_for_bit(
    tmp_path, monkeypatch, on_dask
):
    depth0, local = _local_run(tmp_path / "local", monkeypatch)
    ch = _chapter(tmp_path / "dask")
    depth1, remote = ch.simulate_moments("moments", MomentsConfig(**CFG), block=2)
    assert np.array_equal(depth0, depth1) and _same(local, remote)
    assert len(_block_computations(ch.store)) == 3  # 6 networks in blocks of 2, each computed once
    metas = sorted(
        (tmp_path / "dask" / "store" / "03_executor_test.moments.block").glob("*/meta.json")
    )
    assert len(metas) == 3 and all(
        '"worker"' in m.read_text() for m in metas
    )  # who computed it is recorded
    # the assembled entry is the local run's: a second chapter on the dask store loads it,
    # computing nothing
    ch2 = _chapter(tmp_path / "dask")
    assert _same(ch2.simulate_moments("moments", MomentsConfig(**CFG), block=2)[1], local)
    assert [e[0] for e in ch2.store.events] == ["hit"]


def test_a_resumed_run_computes_only_the_missing_blocks(tmp_path, monkeypatch, on_dask):
    cfg = MomentsConfig(**CFG)
    _, local = _local_run(tmp_path / "local", monkeypatch)

    def interrupted(i: int) -> dict[str, np.ndarray]:  # the local run that stops at block 2
        if i == 2:
            raise KeyboardInterrupt
        return simulate(cfg, sims=range(2 * i, 2 * i + 2))

    key = {**{k: v for k, v in cfg.to_dict().items() if k != "device"}, "block": 2}
    with monkeypatch.context() as m:
        m.setenv(ex.ENV_EXECUTOR, "local")
        with pytest.raises(KeyboardInterrupt):
            _chapter(tmp_path / "dask").cached_blocks(
                "moments", key, 3, interrupted, code="layerwise.moments", shared=("depth",)
            )
    ch = _chapter(tmp_path / "dask")
    _, resumed = ch.simulate_moments("moments", cfg, block=2)
    assert _same(resumed, local)
    assert (
        len(_block_computations(ch.store)) == 1
    )  # blocks 0 and 1 came from the store, only block 2 ran
    assert [e[0] for e in ch.store.events].count("hit") == 2


def test_a_killed_worker_is_survived_and_stored_blocks_are_not_recomputed(
    tmp_path, monkeypatch, on_dask
):
    cfg = MomentsConfig(**CFG)
    calls, store_dir = (
        tmp_path / "calls",
        tmp_path / "dask" / "store" / "03_executor_test.moments.block",
    )
    calls.mkdir()

    def compute(i: int) -> dict[str, np.ndarray]:
        """Block i, slowly; block 1's first attempt waits until another block is stored, notes which
        are, and kills its worker process."""
        import os as _os
        import time as _time

        with open(calls / str(i), "a") as f:
            f.write("x")
        if i == 1 and not (calls / "killed").exists():
            t0 = _time.time()
            while not list(store_dir.glob("*/meta.json")) and _time.time() - t0 < 30:
                _time.sleep(0.05)
            stored = sorted(p.parent.name for p in store_dir.glob("*/meta.json"))
            (calls / "killed").write_text("\n".join(stored))
            _os._exit(1)
        _time.sleep(0.5)
        return simulate(cfg, sims=range(2 * i, 2 * i + 2))

    key = {**{k: v for k, v in cfg.to_dict().items() if k != "device"}, "block": 2}
    ch = _chapter(tmp_path / "dask")
    t0 = time.perf_counter()
    got = ch.cached_blocks("moments", key, 3, compute, code="layerwise.moments", shared=("depth",))
    assert time.perf_counter() - t0 < 60
    _, local = _local_run(tmp_path / "local", monkeypatch)
    assert _same({k: v for k, v in got.items() if k != "depth"}, local)
    assert (calls / "killed").exists()  # the worker did die mid-run
    stored_before_kill = (calls / "killed").read_text().split()
    assert stored_before_kill, "a block was stored before the kill"
    counts = {int(p.name): len(p.read_text()) for p in calls.iterdir() if p.name.isdigit()}
    assert counts[1] == 2  # the killed block ran again elsewhere
    assert len(_block_computations(ch.store)) == 3  # every block stored exactly once
    for (
        key_dir
    ) in stored_before_kill:  # what was in the store when the worker died was not computed again
        i = json.loads((store_dir / key_dir / "meta.json").read_text())["config"]["block"]
        assert i != 1 and counts[i] == 1
    on_dask.wait_for_workers(
        2, timeout=60
    )  # the nanny restarts the worker: the cluster is whole again


def test_a_worker_with_other_code_is_refused(tmp_path, monkeypatch, on_dask):
    monkeypatch.setattr(
        ex, "client_fingerprint", lambda code: "0" * 64
    )  # the client claims other code
    ch = _chapter(tmp_path)
    with pytest.raises(
        ex.CodeMismatch,
        match=r"worker .* runs layerwise code [0-9a-f]{12}, the "
        r"client 000000000000: "
        r"refusing to mix results from different code — "
        r"install the same "
        r"commit on the workers",
    ):
        ch.simulate_moments("moments", MomentsConfig(**CFG), block=2)
    assert not list((tmp_path / "store").glob("*/*/meta.json"))  # nothing computed, nothing stored


def test_run_unit_checks_the_fingerprint_before_computing():
    ran = []
    with pytest.raises(ex.CodeMismatch, match="refusing to mix results"):
        ex.run_unit(lambda i: ran.append(i) or {}, 0, "layerwise.moments", "f" * 64)
    assert ran == []
    arrays, info = ex.run_unit(
        lambda i: {"x": [i]}, 3, "layerwise.moments", ex.client_fingerprint("layerwise.moments")
    )
    assert arrays["x"].tolist() == [3] and set(info) == {"wall_time_s", "worker"}
    _, local = ex.timed(lambda i: {"x": [i]}, 3)  # a unit computed here records no worker
    assert set(local) == {"wall_time_s"}


def test_an_unreachable_scheduler_fails_fast_naming_it():
    t0 = time.perf_counter()
    with pytest.raises(
        ParameterError,
        match=r"no Dask scheduler reachable at tcp://127\.0\.0\.1:9 "
        r".*dask scheduler",
    ):
        ex.resolve_executor("dask", "tcp://127.0.0.1:9")
    assert time.perf_counter() - t0 < 15
    with pytest.raises(ParameterError, match="not an address"):
        ex.check_executor("dask", "tcp://")


def test_the_book_runner_checks_the_scheduler_before_any_chapter(tmp_path, monkeypatch, capsys):
    import papermill

    from layerwise import book, runner

    def started(*args, **kwargs):
        raise AssertionError("work started")

    monkeypatch.setattr(papermill, "execute_notebook", started)
    monkeypatch.setattr(runner.subprocess, "Popen", started)
    monkeypatch.setattr(book, "run_chapter", started)
    monkeypatch.setenv("LAYERWISE_RESULTS", str(tmp_path / "results"))
    t0 = time.perf_counter()
    args = "run --chapters 03 --scale ci --device cpu --executor dask --scheduler tcp://127.0.0.1:9"
    rc = book.main(args.split())
    assert rc == 2 and time.perf_counter() - t0 < 15
    assert "tcp://127.0.0.1:9" in capsys.readouterr().err
    assert book.main(["run", "--chapters", "03", "--scale", "ci", "--executor", "spark"]) == 2
    assert (
        "executor='spark' is not allowed; choose one of: 'local', 'dask'" in capsys.readouterr().err
    )


def test_the_moments_cli_refuses_an_unreachable_scheduler_before_any_work(tmp_path):
    from layerwise.moments_cli import main

    out = tmp_path / "m.npz"
    args = "--arch vanilla --kernel-size 1 --width 8 --batch 4 --depth 4 --executor dask --quiet"
    assert main([*args.split(), "--scheduler", "tcp://127.0.0.1:9", "--out", str(out)]) == 2
    assert not out.exists()


def test_the_moments_cli_on_a_cluster_writes_the_local_arrays(tmp_path, monkeypatch, on_dask):
    from layerwise.moments_cli import main

    monkeypatch.setenv("LAYERWISE_RESULTS", str(tmp_path / "results"))
    args = "--arch vanilla --kernel-size 1 --width 16 --batch 8 --depth 8 --records 4 --sims 5"
    args = [*args.split(), "--device", "cpu", "--quiet"]
    assert main([*args, "--executor", "local", "--out", str(tmp_path / "local.npz")]) == 0
    assert (
        main([*args, "--executor", "dask", "--block", "2", "--out", str(tmp_path / "dask.npz")])
        == 0
    )
    with np.load(tmp_path / "local.npz") as a, np.load(tmp_path / "dask.npz") as b:
        assert _same(dict(a), dict(b))
    assert (
        len(list((tmp_path / "results" / "store" / "moments_cli.block").glob("*/meta.json"))) == 3
    )


@pytest.mark.parametrize("kind", ["spark", "", "threads"])
def test_a_bad_executor_is_refused_naming_the_allowed_ones(kind):
    with pytest.raises(
        ParameterError,
        match=r"executor=.* is not allowed; choose one of: 'local', "
        r"'dask'",
    ):
        ex.resolve_executor(kind)


def test_local_is_the_default_and_a_scheduler_needs_dask(monkeypatch):
    monkeypatch.delenv(ex.ENV_EXECUTOR, raising=False)
    monkeypatch.delenv(ex.ENV_SCHEDULER, raising=False)
    assert ex.resolve_executor() is None and ex.settings() == ("local", None)
    monkeypatch.setenv(ex.ENV_EXECUTOR, "DASK")
    assert ex.settings() == ("dask", None)
    with pytest.raises(ParameterError, match="only used with executor='dask'"):
        ex.settings("local", "tcp://h:8786")


def test_without_distributed_the_message_says_how_to_install(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_distributed(name, *args, **kwargs):
        if name == "distributed" or name.startswith("distributed."):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_distributed)
    with pytest.raises(ParameterError, match=r"pip install -e '\.\[dask\]'"):
        ex.check_executor("dask")


def test_a_fully_stored_run_connects_to_no_cluster(tmp_path, monkeypatch):
    _, local = _local_run(tmp_path, monkeypatch)
    monkeypatch.setenv(ex.ENV_EXECUTOR, "dask")
    monkeypatch.setenv(
        ex.ENV_SCHEDULER, "tcp://127.0.0.1:9"
    )  # nothing listens there: connecting would fail
    ch = _chapter(tmp_path)
    assert _same(ch.simulate_moments("moments", MomentsConfig(**CFG), block=2)[1], local)
    assert [e[0] for e in ch.store.events] == ["hit"]


def test_a_scheduler_address_is_connected_to(client):
    address = (
        client.scheduler.address
    )  # the module's LocalCluster, as a remote scheduler would be given
    assert ex.check_executor("dask", address) == ("dask", address)
    remote = ex.resolve_executor("dask", address)
    assert remote is not client and remote is ex.resolve_executor(
        "dask", address
    )  # cached per process
    assert remote.submit(
        ex.client_fingerprint, "layerwise.moments", pure=False
    ).result() == ex.client_fingerprint("layerwise.moments")


# ----------------------------------------------------------------------------------------------
# Chapter 7's trainability cells through the same seam (Chapter.cached_units)
# ----------------------------------------------------------------------------------------------
def _train_args() -> dict:
    from layerwise.data import standardise_digits

    x, y = standardise_digits("pixel", eps=1e-8, unit_length=True, dtype=np.float32)  # Chapter 7's
    return dict(
        x=x[:120],
        y=y[:120],
        sigma_w2s=np.array([1.0, 2.5]),
        depths=(2, 3),
        seeds=np.array([[5, 6], [7, 8]]),
        sigma_b2=0.05,
        width=8,
        steps=4,
        early_steps=2,
        lr=0.01,
        batch=16,
    )


def test_trainability_units_locally_and_on_dask_equal_the_direct_grid(
    tmp_path, monkeypatch, on_dask
):
    from layerwise.studies import ch07

    args = _train_args()
    direct = ch07.trainability_grid(**args)
    runs = {}
    for kind in ("local", "dask"):
        with monkeypatch.context() as m:
            m.setenv(ex.ENV_EXECUTOR, kind)
            ch = _chapter(tmp_path / kind)
            cells = ch.cached_units(ch07.trainability_cell, 4, **args)
            runs[kind] = ch07.assemble_trainability(cells, args["sigma_w2s"], args["depths"])
            again = _chapter(tmp_path / kind).cached_units(ch07.trainability_cell, 4, **args)
            assert all(np.array_equal(again[k], cells[k]) for k in cells)
    for run in runs.values():
        for k in ("accuracy", "accuracy_early"):
            assert run[k].shape == (2, 2, 2)
            np.testing.assert_array_equal(run[k], direct[k])


def test_cached_units_refuses_a_function_workers_cannot_import(tmp_path):
    def local_unit(i: int) -> dict:
        return {"v": np.array([i])}

    with pytest.raises(ParameterError, match="func="):
        _chapter(tmp_path).cached_units(local_unit, 2)


# ----------------------------------------------------------------------------------------------
# One LocalCluster for a whole book run; progress of a block run on the cluster
# ----------------------------------------------------------------------------------------------
def _reachable(address: str) -> bool:
    import socket

    from distributed.comm.addressing import parse_host_port

    host, port = parse_host_port(address.split("://", 1)[1])
    try:
        with socket.create_connection((host, int(port)), timeout=2):
            return True
    except OSError:
        return False


def _fake_chapters(tmp_path, monkeypatch, fail_at: str | None = None) -> list[str | None]:
    """``book.run_chapter`` replaced by one that records the scheduler each chapter gets, checks a
    cluster with two workers answers there, and writes an empty ledger (or raises at
    ``fail_at``)."""
    from layerwise import book

    seen: list[str | None] = []

    def fake(nb, *, scale, scheduler=None, executor=None, **kw):
        seen.append(scheduler)
        if nb.stem[:2] == fail_at:
            raise KeyboardInterrupt
        with distributed.Client(scheduler, timeout=20, set_as_default=False) as c:
            assert len(c.nthreads()) == ex.LOCAL_WORKERS and executor == "dask"
        out = tmp_path / "results" / scale / f"{nb.stem}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"claims": []}))
        return out

    monkeypatch.setattr(book, "run_chapter", fake)
    monkeypatch.setenv("LAYERWISE_RESULTS", str(tmp_path / "results"))
    monkeypatch.delenv(ex.ENV_SCHEDULER, raising=False)
    return seen


BOOK_ARGS = ["run", "--chapters", "03", "04", "--scale", "ci", "--device", "cpu"]


def test_a_book_run_on_dask_shares_one_local_cluster_and_closes_it(tmp_path, monkeypatch, capsys):
    from layerwise import book

    seen = _fake_chapters(tmp_path, monkeypatch)
    assert book.main([*BOOK_ARGS, "--executor", "dask"]) == 0
    assert len(seen) == 2 and seen[0] is not None and seen[0] == seen[1]
    assert seen[0].startswith("tcp://") and f"LocalCluster for every chapter: {seen[0]}" in (
        capsys.readouterr().out
    )
    assert not _reachable(seen[0])  # closed at the end of the run


def test_the_shared_cluster_is_closed_when_the_run_is_interrupted(tmp_path, monkeypatch, capsys):
    from layerwise import book

    seen = _fake_chapters(tmp_path, monkeypatch, fail_at="04")
    assert book.main([*BOOK_ARGS, "--executor", "dask"]) == 130  # Ctrl-C: 130 and one line
    assert capsys.readouterr().err.strip().splitlines()[-1] == book.INTERRUPTED
    assert len(seen) == 2 and seen[0] == seen[1] and not _reachable(seen[0])


def test_a_given_scheduler_or_the_local_executor_starts_no_cluster(monkeypatch):
    def no_cluster(*a, **k):
        raise AssertionError("a LocalCluster was started")

    monkeypatch.setattr(ex, "local_cluster", no_cluster)
    with ex.shared_scheduler("dask", "tcp://10.0.0.1:8786") as address:
        assert address == "tcp://10.0.0.1:8786"
    with ex.shared_scheduler("local", None) as address:
        assert address is None


def test_a_dask_block_run_shows_one_bar_of_its_units_and_resumes(tmp_path, capsys, on_dask):
    """A block run on the cluster shows one tqdm bar of the units done, starting from those found
    in the store, which are not sent again."""
    from layerwise import store as st

    def slow(i: int) -> dict:
        import time as t

        t.sleep(0.3)
        return {"v": np.full(2, i)}

    s = st.ResultsStore(tmp_path / "store")
    s.get_or_compute(
        "05.slow.block", st.block_config({"n": 1}, 6, 0), lambda: slow(0), code_version="t"
    )  # one unit already stored
    capsys.readouterr()
    s.events.clear()
    entry = s.get_or_compute_blocks(
        "05.slow", {"n": 1}, 6, slow, code_version="t", executor=on_dask, progress=True
    )
    np.testing.assert_array_equal(entry.arrays["v"], np.repeat(np.arange(6), 2))
    err = capsys.readouterr().err
    assert "slow:  17%|" in err and "| 1/6 " in err, err  # the bar starts at the stored unit
    assert len(_block_computations(s)) == 5


def test_local_cluster_workers_keep_glibc_heap_trimming_and_leave_our_environment_alone(client):
    """The nanny's default MALLOC_TRIM_THRESHOLD_ (64 KiB) doubled a trainability cell's time in a
    worker (measured): the LocalCluster unsets it for its workers, keeps them single-threaded,
    and gives this process's environment back as it was."""
    import os

    seen = client.run(
        lambda: {k: os.environ.get(k) for k in ("MALLOC_TRIM_THRESHOLD_", "OMP_NUM_THREADS")}
    )
    assert seen and all(
        env == {"MALLOC_TRIM_THRESHOLD_": None, "OMP_NUM_THREADS": "1"} for env in seen.values()
    )
    for key in ex._nanny_keys():
        assert os.environ.get(key) == (ex._ENV_BEFORE_CLUSTER or {}).get(key), key
    # and no statistical profiler walking the computing thread's stack every 10 ms
    import dask

    profiling = client.run(lambda: dask.config.get(ex.WORKER_PROFILER_KEY))
    assert profiling and not any(profiling.values())
