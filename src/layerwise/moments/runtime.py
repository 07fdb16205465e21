"""Runtime of the moments engine: blocks of networks on worker threads, memory, progress.

:func:`simulate` splits the networks into blocks (:func:`_auto_block`: bounded by the memory of
their activations and weights), runs them on worker threads with single-threaded torch operations
on CPU (one block at a time on CUDA, deterministic cuDNN without TF32), keeps freed memory in the
heap while it runs (:func:`reuse_freed_memory`, bounded by a :class:`HeapGuard`) and reports
progress.  The numbers are those of :func:`layerwise.moments.layers.propagate`; row i depends only
on ``(cfg, sims[i])`` (on CPU, not on the blocking or the number of workers).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
import torch

from ..params import ParameterError, check_positive_int, resolve_device
from .config import MOMENTS, MomentsConfig
from .layers import Observer, WeightFn, propagate


def resident_bytes() -> int | None:
    """Resident memory of this process in bytes (``/proc/self/statm``), or None where unreadable."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


class HeapGuard:
    """Bounds the resident memory of a run whose freed memory stays in the heap.

    Kept-but-free heap memory fragments (two worker threads allocate tensors of many sizes in turn),
    so it can grow layer after layer: ≈ 0.15 GB per layer at paper scale, 16 GB after 200 layers
    (measured).  :meth:`after_layer` is called by every worker after each layer: the first call sets
    the limit to 2 × the resident memory then + 512 MiB; a call that finds more than the limit
    returns the free heap pages to the system (``malloc_trim``) and raises the limit to 2 × what is
    left + 512 MiB if that is higher.  Trimming every layer instead would cost a quarter of a
    dense network's time (its pages are page-faulted in again; measured), so it is done only when
    needed.  ``trim`` None (no glibc, or CUDA) makes this a no-op; ``rss`` is the memory probe.
    """

    SLACK = 512 << 20

    def __init__(
        self, trim: Callable[[int], Any] | None, rss: Callable[[], int | None] = resident_bytes
    ):
        self._trim, self._rss = trim, rss
        self.limit: int | None = None
        self.trims = 0
        self._lock = threading.Lock()

    def after_layer(self) -> None:
        if self._trim is None:
            return
        now = self._rss()
        if now is None:
            return
        with self._lock:
            if self.limit is None:
                self.limit = 2 * now + self.SLACK
            elif now > self.limit:
                self._trim(0)
                self.trims += 1
                left = self._rss()
                self.limit = max(self.limit, 2 * (now if left is None else left) + self.SLACK)


@contextlib.contextmanager
def reuse_freed_memory() -> Iterator[HeapGuard]:
    """Keep freed memory in the process heap while the engine runs (glibc only; else a no-op).

    PyTorch's CPU allocator takes every tensor from ``malloc``; glibc serves large blocks by
    ``mmap`` and unmaps them on free, so each layer's fresh tensors (tens to hundreds of MB at
    paper scale) are page-faulted in again, which costs more than the arithmetic on them
    (measured: ``x*x`` on a 64 MB tensor 44 ms → 6.5 ms).  Inside this context ``mallopt`` serves
    all blocks from the heap (M_MMAP_MAX = 0) and does not trim it (M_TRIM_THRESHOLD), so the next
    layer reuses the pages; the :class:`HeapGuard` it yields keeps the heap from growing without
    bound (the engine calls it after every layer).  On exit glibc's defaults are restored and the
    heap is trimmed (``malloc_trim``).  The number of arenas is left alone (one arena shared by
    the workers, M_ARENA_MAX = 1, fragmented fastest: measured).
    """
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt, trim = libc.mallopt, libc.malloc_trim
    except (OSError, AttributeError):
        yield HeapGuard(None)
        return
    m_trim, m_mmap_threshold, m_mmap_max = -1, -3, -4
    ok = mallopt(m_mmap_max, 0) and mallopt(m_trim, 2**31 - 1)
    try:
        yield HeapGuard(trim if ok else None)
    finally:
        if ok:
            # glibc defaults: 128 KiB trim / mmap thresholds, 65536 mmaps
            mallopt(m_mmap_max, 65536)
            mallopt(m_mmap_threshold, 128 * 1024)
            mallopt(m_trim, 128 * 1024)
            trim(0)


def _auto_block(cfg: MomentsConfig, n: int, device: str = "cpu") -> int:
    """Networks per block: at most 16, and bounded by the memory of their activations and weights —
    ~1 GB per block on CPU (one block per worker), a quarter of the GPU's memory on CUDA (one block
    at a time; larger blocks spread the per-layer kernel launches over more networks: at paper
    scale 8 networks per block instead of 1 cut an H100's time per network by ≈ 30 %, measured)."""
    if cfg.kernel_size == 1:
        per = 4 * (cfg.width * cfg.width * 2 + 2 * cfg.batch * cfg.width * 8)
    else:
        side = 16
        per = 4 * (cfg.width**2 * cfg.kernel_size**2 + 2 * cfg.batch * cfg.width * side * side * 8)
    budget = torch.cuda.get_device_properties(device).total_memory / 4 if device == "cuda" else 1e9
    return max(1, min(n, 16, int(budget // per)))


def simulate(
    cfg: MomentsConfig,
    sims: Iterable[int] | None = None,
    progress: bool = False,
    *,
    block: int | None = None,
    workers: int | None = None,
    observer: Observer | None = None,
    weight_fn: WeightFn | None = None,
    inputs: Callable[[int], tuple[torch.Tensor, torch.Tensor]] | None = None,
) -> dict[str, np.ndarray]:
    """Propagate signal and noise through networks ``sims`` (default ``range(cfg.n_sims)``).

    Returns ``depth`` (R,) and one float64 array ``<moment>_<loc>`` of shape (len(sims), R) per
    moment of :data:`MOMENTS` and location of ``LOCATIONS[cfg.arch]``.  Row i only depends on
    ``(cfg, sims[i])``, so blocks of networks can be computed separately and concatenated.

    On CPU, blocks of ``block`` networks run on ``workers`` threads (default: one per core), each
    with single-threaded torch operations: no OpenMP barriers (robust on a loaded machine) and
    numbers that do not depend on the number of cores or on the blocking.  On CUDA one block
    runs at a time (cuDNN deterministic, no TF32): the same call gives the same numbers, but a
    different blocking changes them at the rounding level (cuBLAS chooses kernels by batch size).

    Test hooks: ``observer(depth, loc, signal, noise, logscale)`` is called at every record
    with (S, M, N) feature tensors (true noise = noise·exp(logscale); conv rows ordered (b, h, w),
    or (h, w, b) when ``cfg.conv_used == "fft"``), views of the engine's
    state that later layers overwrite in place (copy what you keep); ``weight_fn(net, layer,
    shape, std)`` and ``inputs(net) -> (x0, dx0)`` replace the random draws.
    """
    from concurrent.futures import ThreadPoolExecutor

    sims = list(range(cfg.n_sims) if sims is None else sims)
    for s in sims:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0:
            raise ParameterError(f"sims must hold non-negative network indices, got {s!r}")
    if block is not None:
        check_positive_int("block", block)
    if workers is not None:
        check_positive_int("workers", workers)
    device = resolve_device(cfg.device)
    locs = cfg.locations
    R = cfg.records
    out = {f"{m}_{loc}": np.full((len(sims), R), np.nan) for m in MOMENTS for loc in locs}
    out_depth = cfg.record_depths
    if not sims:
        return {"depth": out_depth, **out}
    if device == "cuda":
        nw = 1
    else:
        nw = workers or (os.cpu_count() or 1)
        if observer is not None:
            nw = 1
    bs = block or _auto_block(cfg, -(-len(sims) // nw), device)
    starts = list(range(0, len(sims), bs))
    nw = max(1, min(nw, len(starts)))
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(sims) * cfg.depth, desc=f"moments {cfg.arch}", unit="layer")

    def job(b0: int) -> tuple[int, dict[str, np.ndarray]]:
        nets = sims[b0 : b0 + bs]

        def after_layer() -> None:
            guard.after_layer()
            if bar is not None:
                bar.update(len(nets))

        if device == "cpu":
            torch.set_num_threads(1)
        with torch.inference_mode():
            return b0, propagate(cfg, nets, device, weight_fn, inputs, observer, after_layer)

    prev = torch.get_num_threads()
    try:
        with contextlib.ExitStack() as stack:
            if device == "cpu":  # keep freed pages in the heap, bounded by its guard
                guard = stack.enter_context(reuse_freed_memory())
            else:  # deterministic cuDNN without TF32 (float32 means float32 here: TF32's 10-bit
                # mantissa would be a 1e-3 error per convolution); no heap to guard
                stack.enter_context(
                    torch.backends.cudnn.flags(
                        enabled=True, benchmark=False, deterministic=True, allow_tf32=False
                    )
                )
                guard = HeapGuard(None)
            if nw == 1:
                results = [job(b0) for b0 in starts]
            else:
                with ThreadPoolExecutor(max_workers=nw) as pool:
                    results = list(pool.map(job, starts))
    finally:
        torch.set_num_threads(prev)
    for b0, rows in results:
        for name, arr in rows.items():
            out[name][b0 : b0 + arr.shape[0]] = arr
    if bar is not None:
        bar.close()
    return {"depth": out_depth, **out}


def save_npz(path: str, arrays: dict[str, np.ndarray]) -> None:
    """Write the arrays of :func:`simulate` to ``path`` (``.npz``)."""
    np.savez(path, **arrays)
