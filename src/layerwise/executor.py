"""Where the book's heavy units of work run: in this process, or on a Dask cluster (SPEC §4,
issue #31).

Independent units (the moments engine's blocks of networks, Chapters 3–5, and Chapter 7's
trainability cells through ``Chapter.cached_units``) go through one seam,
:meth:`layerwise.store.ResultsStore.get_or_compute_blocks`, which takes an *executor*: ``None``
(``local``, the default: the units run one after the other in this process; no new dependency) or
a ``distributed.Client`` (``dask``: to the scheduler at ``scheduler``, ``tcp://host:8786``, or,
with no address, to a ``LocalCluster`` of two single-threaded worker processes on this machine).

:func:`resolve_executor` reads ``$LAYERWISE_EXECUTOR`` and ``$LAYERWISE_SCHEDULER`` when not given
arguments (the book runner sets them for the chapter kernels; with no scheduler it starts one
:func:`local_cluster` for the whole run, :func:`shared_scheduler`). :func:`map_units` maps the
missing units onto the cluster and yields them as they complete; a worker runs each through
:func:`run_unit`, which refuses to compute (:class:`CodeMismatch`) when the fingerprint of its
``layerwise`` source differs from the client's: results keyed on one version of the code are never
computed by another.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import platform
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from .params import ParameterError, check_choice
from .provenance import all_modules, fingerprint_of

#: The allowed executors.
EXECUTORS = ("local", "dask")
#: Environment variables read by :func:`resolve_executor` when it is given no arguments.
ENV_EXECUTOR = "LAYERWISE_EXECUTOR"
ENV_SCHEDULER = "LAYERWISE_SCHEDULER"
#: Seconds to wait for a scheduler before giving up (before any work is submitted).
CONNECT_TIMEOUT_S = 10.0
#: Worker processes of the LocalCluster started when no scheduler is given.
LOCAL_WORKERS = 2

_CLIENTS: dict[tuple[str, str | None], Any] = {}


class CodeMismatch(RuntimeError):
    """A worker's ``layerwise`` source differs from the client's: its results would be keyed
    wrongly."""


def settings(kind: str | None = None, scheduler: str | None = None) -> tuple[str, str | None]:
    """The executor kind and scheduler address: the arguments, else ``$LAYERWISE_EXECUTOR`` /
    ``$LAYERWISE_SCHEDULER``, else ``("local", None)``; validated (no connection is made)."""
    kind = (os.environ.get(ENV_EXECUTOR) or "local") if kind is None else kind
    kind = check_choice(
        "executor", kind.strip().lower() if isinstance(kind, str) else kind, EXECUTORS
    )
    scheduler = os.environ.get(ENV_SCHEDULER) if scheduler is None else scheduler
    scheduler = (scheduler or "").strip() or None
    if scheduler is not None and kind != "dask":
        raise ParameterError(
            f"scheduler={scheduler!r} is only used with executor='dask' (make: EXECUTOR=dask "
            f"SCHEDULER={scheduler}; book: --executor dask --scheduler {scheduler})"
        )
    return kind, scheduler


def require_distributed() -> Any:
    """The ``distributed`` module, or a :class:`ParameterError` saying how to install it."""
    try:
        import distributed
    except ImportError:
        raise ParameterError(
            "executor='dask' needs the optional packages dask and distributed; install them with "
            "`pip install -e '.[dask]'` (on the client and on every worker), or use "
            "executor='local'"
        ) from None
    return distributed


def _probe(address: str, timeout: float) -> None:
    """Fail fast, naming ``address``, when it is not an address or nothing listens there (a
    refused TCP connection); ``inproc://`` or ``ucx://`` addresses are left to distributed."""
    from distributed.comm import parse_address
    from distributed.comm.addressing import parse_host_port

    try:
        proto, loc = parse_address(address)
        if proto not in ("tcp", "tls"):
            return
        host, port = parse_host_port(loc)
    except ValueError as exc:
        raise ParameterError(
            f"scheduler={address!r} is not an address like tcp://host:8786 ({exc})"
        ) from None
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise ParameterError(
            f"no Dask scheduler reachable at {address} ({exc}); start one with `dask scheduler` "
            "(and `dask worker ADDRESS` on each machine, with the same layerwise commit "
            "installed), or leave the scheduler out for a LocalCluster on this machine"
        ) from None


#: The Dask setting that the LocalCluster unsets for its workers: with the nanny's default
#: MALLOC_TRIM_THRESHOLD_=65536 glibc hands freed memory back at once, a worker pays a page fault
#: for each of torch's re-allocations and a trainability cell took twice as long (measured).
WORKER_MALLOC_KEY = "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_"

#: The worker's statistical profiler, which walks the computing thread's stack every 10 ms under
#: the GIL; the LocalCluster turns it off (units are long and profiled by the benchmark instead).
WORKER_PROFILER_KEY = "distributed.worker.profile.enabled"

#: This process's environment before it first started a LocalCluster: a Dask nanny writes its
#: workers' settings (``distributed.nanny.pre-spawn-environ``: one OpenMP/MKL/OpenBLAS thread …)
#: into the environment of the process that starts it, on every (re)start of a worker, and never
#: takes them back.
_ENV_BEFORE_CLUSTER: dict[str, str] | None = None


def _nanny_keys() -> set[str]:
    """The environment variables a Dask nanny writes into its parent's environment."""
    import dask

    keys = ("distributed.nanny.pre-spawn-environ", "distributed.nanny.environ")
    return {"__DASK_PARENT_PID"}.union(*(dask.config.get(k, default={}) or {} for k in keys))


def restore_environ() -> None:
    """Undo in ``os.environ`` what a LocalCluster's nanny wrote there (:data:`_ENV_BEFORE_CLUSTER`)
    — else a chapter kernel started after the cluster would inherit the workers' single-thread
    settings and compute its own (non-unit) results on one thread instead of the machine's, unlike
    a local run."""
    before = _ENV_BEFORE_CLUSTER
    if before is None:
        return
    for key in _nanny_keys():
        if key in before:
            os.environ[key] = before[key]
        else:
            os.environ.pop(key, None)


def kernel_environ() -> dict[str, str]:
    """The environment a chapter kernel starts with: this process's, without what a LocalCluster
    started here wrote into it (:func:`restore_environ`), so that a chapter run next to a cluster
    computes exactly as a local run."""
    restore_environ()
    return dict(os.environ)


def local_cluster(n_workers: int = LOCAL_WORKERS) -> Any:
    """A new ``distributed.LocalCluster`` on this machine: ``n_workers`` single-threaded worker
    processes, no dashboard (what ``executor='dask'`` with no scheduler uses). This process's
    environment is given back as it was (:func:`restore_environ`) once the workers have started."""
    import logging

    global _ENV_BEFORE_CLUSTER
    distributed = require_distributed()
    import dask

    if _ENV_BEFORE_CLUSTER is None:
        _ENV_BEFORE_CLUSTER = dict(os.environ)
    # for the whole process, not in a context: a worker that dies is replaced by a nanny made later
    dask.config.set({WORKER_MALLOC_KEY: None, WORKER_PROFILER_KEY: False})
    try:
        with _sigint_ignored():
            return distributed.LocalCluster(
                n_workers=n_workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.ERROR,
            )
    finally:
        restore_environ()


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored in this process while the block runs (from the main thread only).  Worker
    processes started inside inherit it, so Ctrl-C at the terminal reaches this process alone —
    which closes them — instead of printing a KeyboardInterrupt traceback from every worker."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


@contextlib.contextmanager
def shared_scheduler(kind: str, scheduler: str | None) -> Iterator[str | None]:
    """The scheduler address for every chapter of a book run: ``scheduler`` itself when given or
    when ``kind`` is ``local`` (then ``None``); with ``kind='dask'`` and no address, the address of
    ONE :func:`local_cluster` started here, which the chapter kernels connect to (instead of each
    starting its own) and which is closed when the block exits, also on an error or interrupt."""
    if kind != "dask" or scheduler is not None:
        yield scheduler
        return
    with contextlib.closing(local_cluster()) as cluster:
        yield cluster.scheduler_address


def connect(kind: str, scheduler: str | None, *, timeout: float = CONNECT_TIMEOUT_S) -> Any:
    """A new ``distributed.Client`` for ``kind='dask'``: to ``scheduler``, or to a new two-process
    ``LocalCluster``.  An unreachable scheduler raises :class:`ParameterError` naming it."""
    distributed = require_distributed()
    if scheduler is None:  # the client's ``cluster``, closed with it by close_all
        return distributed.Client(local_cluster(), set_as_default=False)
    _probe(scheduler, timeout)
    try:
        return distributed.Client(scheduler, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise ParameterError(
            f"no Dask scheduler reachable at {scheduler} within {timeout:.0f} s ({exc}); start "
            f"one with `dask scheduler` and workers with `dask worker {scheduler}`"
        ) from None


def resolve_executor(kind: str | None = None, scheduler: str | None = None) -> Any:
    """``None`` for the local executor (units run in this process), else a ``distributed.Client``
    (cached per process: one cluster or connection however many runs use it).  Arguments left out
    are read from ``$LAYERWISE_EXECUTOR`` and ``$LAYERWISE_SCHEDULER``."""
    key = settings(kind, scheduler)
    if key[0] == "local":
        return None
    if (client := _CLIENTS.get(key)) is None or client.status != "running":
        client = _CLIENTS[key] = connect(*key)
    return client


def check_executor(kind: str | None = None, scheduler: str | None = None) -> tuple[str, str | None]:
    """Validate the executor settings before any work (the book runner's gate): the kind, that
    ``distributed`` is installed, and that the scheduler, if given, answers (the test connection is
    closed again).  Returns the resolved ``(kind, scheduler)``."""
    kind, scheduler = settings(kind, scheduler)
    if kind == "dask":
        require_distributed()
        if scheduler is not None:
            connect(kind, scheduler).close()
    return kind, scheduler


@atexit.register
def close_all() -> None:
    """Close every client (and LocalCluster) this process opened."""
    while _CLIENTS:
        _, client = _CLIENTS.popitem()
        with contextlib.suppress(Exception):  # best effort at exit
            client.close()
            if client.cluster is not None:  # the LocalCluster of connect
                client.cluster.close()


def client_fingerprint(code: str | Sequence[str] | None) -> str:
    """The fingerprint of this process's source of ``code``, the module(s) a unit's result depends
    on (``None``: the whole package); sent with every task and checked by :func:`run_unit`."""
    return fingerprint_of(all_modules() if code is None else code)[0]


def timed(
    func: Callable[[int], Mapping[str, Any]], i: int, *, worker: bool = False
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """``func(i)`` as arrays, and ``{"wall_time_s"}`` — with ``"worker"`` (this machine's host
    name) when ``worker``: a unit computed on a cluster's worker says so in its store entry, a
    local one does not."""
    t0 = time.perf_counter()
    arrays = {k: np.asarray(v) for k, v in func(i).items()}
    info: dict[str, Any] = {"wall_time_s": time.perf_counter() - t0}
    return arrays, info | ({"worker": platform.node()} if worker else {})


def run_unit(
    func: Callable[[int], Mapping[str, Any]],
    i: int,
    code: str | Sequence[str] | None,
    expected: str,
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """What a worker runs for unit ``i``: check that its code is the client's, then
    :func:`timed` ``func(i)``.  Raises :class:`CodeMismatch` before computing anything when the
    worker's fingerprint of ``code`` differs from ``expected``, the client's."""
    if (got := client_fingerprint(code)) != expected:
        raise CodeMismatch(
            f"worker {platform.node()} runs layerwise code {got[:12]}, the client {expected[:12]}: "
            "refusing to mix results from different code — install the same commit on the "
            "workers (pip install -e '.[dask]' in a checkout of the client's commit) and restart "
            "them"
        )
    return timed(func, i, worker=True)


def map_units(
    client: Any,
    func: Callable[[int], Mapping[str, Any]],
    todo: Sequence[int],
    *,
    name: str,
    code: str | Sequence[str] | None,
) -> Iterator[tuple[int, dict[str, np.ndarray], dict[str, Any]]]:
    """``(i, arrays, info)`` of :func:`run_unit` for every unit ``i`` of ``todo``, mapped onto the
    cluster at once (``Client.map``) and yielded as they complete (``as_completed``).  ``client``
    may be a function returning one, called now.  Closing the generator early (an error, Ctrl-C)
    cancels the units still queued."""
    import functools
    import uuid

    from distributed import as_completed

    if not hasattr(client, "submit"):
        client = client()  # the factory: connect now that there is work
    unit = functools.partial(run_unit, func, code=code, expected=client_fingerprint(code))
    run = uuid.uuid4().hex[:8]
    keys = [f"{name}.block-{i}-{run}" for i in todo]
    futures = client.map(unit, todo, key=keys, pure=False, retries=2)
    pending = dict(zip(futures, todo))  # the units not yet handed back
    try:
        for fut in as_completed(futures, loop=client.loop):
            arrays, info = fut.result()
            i = pending.pop(fut)
            fut.release()
            yield i, arrays, info
    finally:
        if pending:
            client.cancel(list(pending))
