"""Results store: a hash-keyed on-disk cache of expensive simulations (SPEC §1 "Results store").

An entry is a folder ``<root>/<name>/<key>/`` holding ``arrays.npz`` and ``meta.json``.  The key
is the SHA-256 of the canonical JSON of ``{name, config, code_version}``: the full configuration
(seed included) and the code that produced it — for the book, the fingerprint of
:mod:`layerwise.provenance` (the source of the called module and of every ``layerwise`` module it
imports), recorded in ``meta.json`` with the list of modules hashed — *not* the device or the
book's prose, so a rebuild after a prose edit re-uses the entry and a result computed elsewhere (a
GPU) can be dropped in.  ``meta.json`` is written last and records
the SHA-256 of ``arrays.npz``; an entry whose metadata is missing, unreadable, for another key, or
whose arrays do not match the checksum is reported and recomputed, never used.  Long runs are split
into blocks, each its own entry, so an interrupted run resumes losing at most the unfinished block.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .params import ParameterError, check_positive_int

ArrayDict = dict[str, np.ndarray]


def _canonical(obj: Any) -> Any:
    """Convert a configuration into plain JSON types with a stable form."""
    if isinstance(obj, Mapping):
        return {str(k): _canonical(v) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))}
    if isinstance(obj, (list, tuple)):
        return [_canonical(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _canonical(obj.tolist())
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"configuration value {obj!r} of type {type(obj).__name__} is not JSON-able")


def block_config(config: Mapping[str, Any], n_blocks: int, index: int) -> dict[str, Any]:
    """The store key of block ``index`` of ``n_blocks`` of a run keyed by ``config``: the run's
    key plus the block's place in the split. Both are needed: what block i holds depends on how
    the work was split (block i of 2 is not block i of 4), and ``config`` may hold a field of its
    own named ``block`` (the block size of :meth:`layerwise.chapter.Chapter.simulate_moments`)
    that the index must not overwrite."""
    if "block_index" in config or "n_blocks" in config:
        raise ParameterError(
            "config must not hold 'block_index' or 'n_blocks': the store adds them"
        )
    return {**config, "n_blocks": n_blocks, "block_index": index}


class ProgressFile:
    """Progress of block runs for whoever executes the notebook (the book runner's terminal).

    The runner sets ``$LAYERWISE_PROGRESS`` to a file; the kernel appends one tab-separated line per
    event (``start NAME N``, ``block NAME I`` when block I starts, ``end NAME N``) and the runner
    shows them as a progress bar with an estimate of the time left.  Without the variable nothing is
    written."""

    def __init__(self, path: str | None):
        self.path = path

    @classmethod
    def from_env(cls) -> "ProgressFile":
        return cls(os.environ.get("LAYERWISE_PROGRESS") or None)

    def write(self, event: str, name: str, n: int) -> None:
        if self.path:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(f"{event}\t{name}\t{int(n)}\n")

    def write_units(self, name: str, counts: Any) -> None:
        """``units NAME COUNTS``: where a block run on a Dask cluster stands
        (:class:`layerwise.executor.UnitCounts`, encoded)."""
        if self.path:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(f"units\t{name}\t{counts.encode()}\n")


#: Seconds between two reports of a Dask block run's units done / running / queued.
CLUSTER_PROGRESS_S = 2.0


def _bar(it: Any, progress: bool, name: str, **kw: Any) -> Any:
    """A tqdm bar over ``it`` named ``name`` when ``progress`` (else ``it`` itself, or ``None``
    for a bar without an iterable)."""
    if not progress:
        return it
    from tqdm.auto import tqdm

    return tqdm(it, desc=name, leave=False, **kw)


def config_key(name: str, config: Mapping[str, Any], code_version: str) -> str:
    """SHA-256 over the canonical JSON of the entry's name, configuration and code version."""
    payload = json.dumps(
        {"name": name, "config": _canonical(config), "code_version": code_version},
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode()).hexdigest()


def versions() -> dict[str, str]:
    """Versions of the interpreter and the numerical stack, for metadata."""
    from . import __version__

    out = {"layerwise": __version__, "python": platform.python_version(), "numpy": np.__version__}
    for mod in ("torch", "scipy"):
        with contextlib.suppress(ImportError):  # both are hard dependencies
            out[mod] = __import__(mod).__version__
    out["machine"] = f"{platform.machine()} {platform.system()}, {os.cpu_count()} cores"
    return out


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@dataclass
class Entry:
    """A loaded, validated store entry."""

    arrays: ArrayDict
    meta: dict[str, Any]


class ResultsStore:
    """Hash-keyed on-disk cache of array results with metadata."""

    def __init__(self, root: str | os.PathLike[str]):
        self.root = Path(root)
        self.events: list[tuple[str, str, str]] = []  # (event, name, key): hit/miss/corrupt

    def entry_dir(self, name: str, key: str) -> Path:
        if not name or any(c in name for c in "/\\") or name.startswith("."):
            raise ParameterError(f"store entry name={name!r} must be a plain, non-empty name")
        return self.root / name / key

    # -- reading -----------------------------------------------------------------------------
    def load(self, name: str, config: Mapping[str, Any], code_version: str) -> Entry | None:
        """Return the valid entry for this configuration, or ``None`` (absent or corrupt)."""
        key = config_key(name, config, code_version)
        d = self.entry_dir(name, key)
        if not d.exists():
            return None
        problem = self._validate(d, key)
        if problem is None:
            try:
                with np.load(d / "arrays.npz", allow_pickle=False) as z:
                    arrays = {k: z[k] for k in z.files}
                meta = json.loads((d / "meta.json").read_text())
                self.events.append(("hit", name, key))
                return Entry(arrays, meta)
            except Exception as exc:  # checksum matched yet unreadable: still corrupt
                problem = f"arrays unreadable ({exc})"
        warnings.warn(
            f"results store: entry {name}/{key[:12]} is corrupt or partial ({problem}); "
            "recomputing",
            stacklevel=3,
        )
        self.events.append(("corrupt", name, key))
        shutil.rmtree(d, ignore_errors=True)
        return None

    @staticmethod
    def _validate(d: Path, key: str) -> str | None:
        meta_path, arr_path = d / "meta.json", d / "arrays.npz"
        if not meta_path.exists():
            return "no meta.json (interrupted write)"
        if not arr_path.exists():
            return "no arrays.npz"
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, ValueError) as exc:
            return f"meta.json unreadable ({exc})"
        if meta.get("key") != key:
            return "meta.json belongs to another configuration"
        if meta.get("sha256") != _sha256_file(arr_path):
            return "arrays.npz does not match its checksum"
        return None

    # -- writing -----------------------------------------------------------------------------
    def save(
        self,
        name: str,
        config: Mapping[str, Any],
        code_version: str,
        arrays: Mapping[str, Any],
        **meta: Any,
    ) -> Entry:
        """Write an entry atomically: arrays first, metadata (with their checksum) last."""
        key = config_key(name, config, code_version)
        d = self.entry_dir(name, key)
        arrays = {k: np.asarray(v) for k, v in arrays.items()}
        if any(a.dtype == object for a in arrays.values()):
            raise TypeError("store arrays must be numeric or string arrays, not objects")
        d.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{key[:12]}-", dir=d.parent))
        try:
            np.savez(tmp / "arrays.npz", **arrays)
            record = {
                "name": name,
                "key": key,
                "config": _canonical(config),
                "code_version": code_version,
                "sha256": _sha256_file(tmp / "arrays.npz"),
                "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "versions": versions(),
                **_canonical(meta),
            }
            (tmp / "meta.json").write_text(json.dumps(record, indent=1))
            if d.exists():
                shutil.rmtree(d)
            os.replace(tmp, d)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return Entry(arrays, record)

    # -- the two ways chapters use it --------------------------------------------------------
    def get_or_compute(
        self,
        name: str,
        config: Mapping[str, Any],
        compute: Callable[[], Mapping[str, Any]],
        *,
        code_version: str,
        code_modules: Sequence[str] = (),
        device: str = "cpu",
    ) -> Entry:
        """Load the entry for ``config`` or run ``compute()`` and store its
        arrays (``code_modules``, the modules whose source ``code_version`` fingerprints, only goes
        into the metadata)."""
        entry = self.load(name, config, code_version)
        if entry is not None:
            return entry
        self.events.append(("miss", name, config_key(name, config, code_version)))
        t0 = time.perf_counter()
        arrays = compute()
        wall = time.perf_counter() - t0
        return self.save(
            name,
            config,
            code_version,
            arrays,
            device=device,
            wall_time_s=wall,
            code_modules=list(code_modules),
        )

    def get_or_compute_blocks(
        self,
        name: str,
        config: Mapping[str, Any],
        n_blocks: int,
        compute_block: Callable[[int], Mapping[str, Any]],
        *,
        code_version: str,
        code_modules: Sequence[str] = (),
        device: str = "cpu",
        progress: bool = False,
        shared: tuple[str, ...] = (),
        executor: Any = None,
        code: str | Sequence[str] | None = None,
    ) -> Entry:
        """Compute ``n_blocks`` independent blocks (each cached) and concatenate them on axis 0.

        Block ``i`` is keyed by ``config`` plus its place in the split (:func:`block_config`:
        ``n_blocks`` and ``block_index=i``), so an interrupted run resumes from the blocks already
        on disk and a different split never reads another split's blocks; the assembled result
        is cached as its own entry. Arrays named in ``shared`` (e.g. the layer index of each
        record) are the same in every block: they are checked to be identical and kept once
        instead of concatenated.

        ``executor`` (:func:`layerwise.executor.resolve_executor`): ``None`` computes the blocks
        here, one after the other; a ``distributed.Client`` (or a function returning one, called
        only when a block is missing: a fully cached run connects to nothing) gets every block not
        yet in the store as a task (``compute_block`` travels with it, pickled; ``code`` names the
        modules whose source the worker must share with this process, default the whole package) and
        each block is stored as it arrives.  Either way the blocks are assembled in order, so the
        result is the same.
        """
        n_blocks = check_positive_int("n_blocks", n_blocks)
        full_cfg = {**config, "n_blocks": n_blocks}
        entry = self.load(name, full_cfg, code_version)
        if entry is not None:
            return entry
        self.events.append(("miss", name, config_key(name, full_cfg, code_version)))
        report = ProgressFile.from_env()
        report.write("start", name, n_blocks)
        saved = {"code_version": code_version, "code_modules": code_modules, "device": device}
        if executor is None:
            blocks = []
            for i in _bar(range(n_blocks), progress, name):
                if i:
                    report.write("block", name, i)
                cfg_i, compute = block_config(config, n_blocks, i), lambda i=i: compute_block(i)
                blocks.append(self.get_or_compute(f"{name}.block", cfg_i, compute, **saved))
        else:
            blocks = self._blocks_on(
                executor, name, config, n_blocks, compute_block, report, progress, code, **saved
            )
        report.write("end", name, n_blocks)
        return self._assemble(name, full_cfg, blocks, shared=shared, **saved)

    def _blocks_on(
        self,
        client: Any,
        name: str,
        config: Mapping[str, Any],
        n_blocks: int,
        compute_block: Callable[[int], Mapping[str, Any]],
        report: ProgressFile,
        progress: bool,
        code: str | Sequence[str] | None,
        *,
        code_version: str,
        code_modules: Sequence[str],
        device: str,
    ) -> list[Entry]:
        """The blocks of :meth:`get_or_compute_blocks` through a ``distributed.Client``: the ones in
        the store are loaded, the others mapped onto the cluster at once (``Client.map``) and each
        saved as soon as it completes (``as_completed``: an interrupted run loses only the blocks
        still in flight, which are cancelled).  After each block and every
        :data:`CLUSTER_PROGRESS_S` seconds, the units done / running / queued and the time left
        (:func:`layerwise.executor.unit_counts`) go to ``report`` and the bar."""
        import functools
        import uuid

        from distributed import as_completed

        from . import executor as ex

        done: dict[int, Entry] = {}
        for i in range(n_blocks):
            e = self.load(f"{name}.block", block_config(config, n_blocks, i), code_version)
            if e is not None:
                done[i] = e
        todo = [i for i in range(n_blocks) if i not in done]
        bar = _bar(None, progress, name, total=n_blocks, initial=len(done), unit="block")
        futures: dict[Any, int] = {}
        try:
            if todo:
                if not hasattr(client, "submit"):
                    client = client()  # the factory: connect now that there is work
                unit = functools.partial(
                    ex.run_unit, compute_block, code=code, expected=ex.client_fingerprint(code)
                )
                run = uuid.uuid4().hex[:8]
                keys = [f"{name}.block-{i}-{run}" for i in todo]
                futures = dict(zip(client.map(unit, todo, key=keys, pure=False, retries=2), todo))
                pending = as_completed(list(futures), loop=client.loop)
            cached, t0, next_report = len(done), time.perf_counter(), 0.0
            while futures:
                fut = next(pending) if pending.has_ready() else None
                if fut is not None:
                    i = futures.pop(fut)
                    arrays, info = fut.result()
                    fut.release()
                    cfg_i = block_config(config, n_blocks, i)
                    key = config_key(f"{name}.block", cfg_i, code_version)
                    self.events.append(("miss", f"{name}.block", key))
                    done[i] = self.save(
                        f"{name}.block",
                        cfg_i,
                        code_version,
                        arrays,
                        device=device,
                        wall_time_s=info["wall_time_s"],
                        worker=info["worker"],
                        code_modules=list(code_modules),
                    )
                    if bar is not None:
                        bar.update(1)
                if futures and (fut is not None or time.perf_counter() >= next_report):
                    with contextlib.suppress(Exception):  # the cluster gone: .result() says why
                        mine = {
                            w: sum(k in keys for k in ks) for w, ks in client.processing().items()
                        }
                        c = ex.unit_counts(
                            n_blocks,
                            len(done),
                            0,
                            mine,
                            client.nthreads(),
                            finished_here=len(done) - cached,
                            elapsed_s=time.perf_counter() - t0,
                        )
                        report.write_units(name, c)
                        if bar is not None:
                            bar.set_postfix_str(ex.format_counts(c))
                    next_report = time.perf_counter() + CLUSTER_PROGRESS_S
                    if fut is not None:
                        report.write("block", name, len(done))
                elif fut is None:
                    time.sleep(0.05)
        finally:
            if futures:  # an error (or an interrupt): withdraw what is still queued
                client.cancel(list(futures))
            if bar is not None:
                bar.close()
        return [done[i] for i in range(n_blocks)]

    def _assemble(
        self,
        name: str,
        full_cfg: Mapping[str, Any],
        blocks: Sequence[Entry],
        *,
        code_version: str,
        code_modules: Sequence[str],
        device: str,
        shared: tuple[str, ...],
    ) -> Entry:
        """Concatenate ``blocks`` (in order) on axis 0, arrays in ``shared`` kept once, and store
        it."""
        keys = blocks[0].arrays.keys()
        missing = [k for k in shared if k not in keys]
        if missing:
            raise ParameterError(
                f"shared={missing} are not arrays of the blocks; they have: {sorted(keys)}"
            )
        for k in shared:
            if not all(np.array_equal(b.arrays[k], blocks[0].arrays[k]) for b in blocks):
                raise ValueError(f"array {k!r} declared shared differs between blocks of {name}")
        arrays = {
            k: blocks[0].arrays[k]
            if k in shared
            else np.concatenate([b.arrays[k] for b in blocks], axis=0)
            for k in keys
        }
        wall = sum(float(b.meta.get("wall_time_s", 0.0)) for b in blocks)
        devices = sorted({str(b.meta.get("device", device)) for b in blocks})
        return self.save(
            name,
            full_cfg,
            code_version,
            arrays,
            device=",".join(devices),
            wall_time_s=wall,
            code_modules=list(code_modules),
        )
