"""Results store: a hash-keyed on-disk cache of expensive simulations (SPEC §1 "Results store").

An entry is a folder ``<root>/<name>/<key>/`` holding ``arrays.npz`` and ``meta.json``.  The key
is the SHA-256 of the canonical JSON of ``{name, config, code_version}``: the full configuration
(seed included) and the fingerprint of the code that produced it (:mod:`layerwise.provenance`) —
not the device or the book's prose, so a rebuild after a prose edit re-uses the entry and a result
computed elsewhere (a GPU) can be dropped in.  ``meta.json`` is written last and records the
SHA-256 of ``arrays.npz``; an entry whose metadata is missing, unreadable, for another key, or
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
from tqdm import tqdm

from .executor import map_units, timed
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


def config_key(name: str, config: Mapping[str, Any], code_version: str) -> str:
    """SHA-256 over the canonical JSON of the entry's name, configuration and code version."""
    record = {"name": name, "config": _canonical(config), "code_version": code_version}
    payload = json.dumps(record, sort_keys=True, separators=(",", ":"))
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
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


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
        """Load the entry for ``config`` or run ``compute()`` and store its arrays
        (``code_modules``, the modules whose source ``code_version`` fingerprints, only goes into
        the metadata)."""
        entry = self.load(name, config, code_version)
        if entry is not None:
            return entry
        self.events.append(("miss", name, config_key(name, config, code_version)))
        arrays, info = timed(lambda _: compute(), 0)
        meta = {"device": device, **info, "code_modules": list(code_modules)}
        return self.save(name, config, code_version, arrays, **meta)

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

        Block ``i`` is keyed by ``config`` plus its place in the split (:func:`block_config`), so an
        interrupted run resumes from the blocks already on disk and a different split never reads
        another split's blocks; the assembled result is cached as its own entry. Arrays named in
        ``shared`` (e.g. the layer index of each record) are the same in every block: they are
        checked to be identical and kept once instead of concatenated.

        ``executor`` (:func:`layerwise.executor.resolve_executor`): ``None`` computes the missing
        blocks here, one after the other; a ``distributed.Client`` (or a function returning one,
        called only when a block is missing: a fully cached run connects to nothing) gets them as
        tasks (:func:`layerwise.executor.map_units`).  Either way each block is stored as it
        arrives and the blocks are assembled in order, so the result is the same.  ``progress``: a
        tqdm bar of the blocks on stderr (on a cluster, of the units done there).
        """
        n_blocks = check_positive_int("n_blocks", n_blocks)
        full_cfg = {**config, "n_blocks": n_blocks}
        entry = self.load(name, full_cfg, code_version)
        if entry is not None:
            return entry
        self.events.append(("miss", name, config_key(name, full_cfg, code_version)))
        block, meta = f"{name}.block", {"device": device, "code_modules": list(code_modules)}
        cfgs = [block_config(config, n_blocks, i) for i in range(n_blocks)]
        blocks = [self.load(block, c, code_version) for c in cfgs]
        todo = [i for i, e in enumerate(blocks) if e is None]
        if executor is None or not todo:
            units = ((i, *timed(compute_block, i)) for i in todo)
        else:
            units = map_units(executor, compute_block, todo, name=name, code=code)
        bar = tqdm(
            total=n_blocks,
            initial=n_blocks - len(todo),
            desc=name.split(".", 1)[-1],
            unit="block",
            leave=False,
            disable=not progress or os.environ.get("TQDM_DISABLE") == "1",  # chapters side by side
        )
        with bar, contextlib.closing(units):  # an error or Ctrl-C withdraws queued units
            for i, arrays, info in units:
                self.events.append(("miss", block, config_key(block, cfgs[i], code_version)))
                blocks[i] = self.save(block, cfgs[i], code_version, arrays, **meta, **info)
                bar.update()
        keys = blocks[0].arrays.keys()
        if missing := [k for k in shared if k not in keys]:
            raise ParameterError(
                f"shared={missing} are not arrays of the blocks; they have: {sorted(keys)}"
            )
        for k in shared:
            if not all(np.array_equal(b.arrays[k], blocks[0].arrays[k]) for b in blocks):
                raise ValueError(f"array {k!r} declared shared differs between blocks of {name}")
        arrays = {
            k: blocks[0].arrays[k] if k in shared else np.concatenate([b.arrays[k] for b in blocks])
            for k in keys
        }
        meta["device"] = ",".join(sorted({str(b.meta.get("device", device)) for b in blocks}))
        wall = sum(float(b.meta.get("wall_time_s", 0.0)) for b in blocks)
        return self.save(name, full_cfg, code_version, arrays, **meta, wall_time_s=wall)
