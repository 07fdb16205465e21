"""``python -m layerwise moments ...``: run the moments engine and write
an ``.npz`` (SPEC §2, Ch. 3–5).

Arguments are validated (through :class:`layerwise.moments.MomentsConfig`) before any
computation; an invalid one exits with status 2 and a message naming the parameter and the
allowed values.

``--executor dask [--scheduler tcp://host:8786]`` (:mod:`layerwise.executor`) splits the
networks into units of ``--block`` networks (default :data:`DASK_UNIT`), sends them to a Dask
cluster and keeps each unit in the results store (``results/store/moments_cli.block``) as
it arrives: the same command run again resumes.  Row i of every array depends only on network i, so
on CPU the ``.npz`` is the same, bit for bit, as the local run's (which computes all networks in one
call, without the store).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from .data import DataFormatError, check_source, load_images
from .executor import resolve_executor, settings
from .moments import ARCHS, BOUNDARIES, CONV_ALGORITHMS, SAMPLINGS, MomentsConfig, simulate
from .params import ParameterError, resolve_device
from .paths import store_root
from .provenance import code_fingerprint, fingerprint_of, module_closure
from .store import ResultsStore

#: The module whose source the results depend on (the engine and what it imports).
CODE = "layerwise.moments"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # exit status 2 with the usage, as argparse does
        self.print_usage(sys.stderr)
        raise ParameterError(message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="python -m layerwise moments",
        description="Propagate signal and first-order noise through random networks "
        "(Labatie 2019) "
        "and record their moments at every location of every recorded layer.",
    )
    p.add_argument("--arch", required=True, help=f"one of {', '.join(ARCHS)}")
    p.add_argument(
        "--kernel-size", type=int, required=True, help="1 = fully-connected, else odd k >= 3"
    )
    p.add_argument("--width", type=int, required=True, help="channels / units N")
    p.add_argument("--batch", type=int, required=True, help="images per network B")
    p.add_argument("--depth", type=int, required=True, help="layers (bn_res: residual units) L")
    p.add_argument("--res-depth", type=int, default=2, help="layers per residual unit (bn_res)")
    p.add_argument("--boundary", default="periodic", help=f"one of {', '.join(BOUNDARIES)}")
    p.add_argument(
        "--dataset",
        default="patches",
        help="patches | digits | gaussian | cifar10 | mnist | mnist5k (cifar10 and mnist are "
        "downloaded once into $LAYERWISE_DATA or the user's cache) | cifar10:DIR | mnist:DIR",
    )
    p.add_argument("--sims", type=int, default=1, help="number of independent networks S")
    p.add_argument(
        "--records",
        type=int,
        default=None,
        help="number of records R (divides depth; default depth)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", help="auto | cpu | cuda")
    p.add_argument("--epsilon", type=float, default=1e-3, help="BN epsilon")
    p.add_argument("--no-reff-signal", action="store_true", help="skip r_eff of the signal")
    p.add_argument("--no-reff-noise", action="store_true", help="skip r_eff of the noise")
    p.add_argument(
        "--reff-locations",
        default=None,
        help="comma-separated locations where r_eff is computed, e.g. loc4 (default: "
        "all of the arch's)",
    )
    p.add_argument(
        "--sampling",
        default="auto",
        help=f"one of {', '.join(SAMPLINGS)} (default auto: projected for "
        "fully-connected nets with "
        "2*batch < width, else explicit; conv nets are always explicit)",
    )
    p.add_argument(
        "--conv",
        default="auto",
        help=f"one of {', '.join(CONV_ALGORITHMS)}: how k×k layers after the first are "
        "computed "
        "(default auto: fft for periodic boundaries, else direct)",
    )
    p.add_argument(
        "--block", type=int, default=None, help="networks propagated together (default: automatic)"
    )
    p.add_argument(
        "--executor",
        default=None,
        help="where the networks are computed: local (default, this process) | dask (a "
        "Dask cluster, "
        "in resumable units of --block networks; needs '.[dask]')",
    )
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDR",
        help="with --executor dask: the scheduler, e.g. tcp://host:8786 (default: a "
        "LocalCluster here)",
    )
    p.add_argument("--out", required=True, help="output .npz file")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def _check_writable(out: Path) -> None:
    """Raise unless ``out`` can be written: its folder is made (if missing) and a file can be
    created there."""
    import tempfile

    try:
        if out.is_dir():
            raise IsADirectoryError(f"{out} is a folder")
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out.parent):
            pass
    except OSError as exc:
        raise ParameterError(f"out={str(out)!r} cannot be written ({exc})") from None


#: Networks per unit of work sent to a Dask worker when ``--block`` is not given (the engine's own
#: largest automatic block on CPU).
DASK_UNIT = 16


def simulate_units(
    cfg: MomentsConfig, client: Any, *, unit: int, progress: bool = False
) -> dict[str, np.ndarray]:
    """``simulate(cfg)`` as units of ``unit`` networks on the Dask ``client``, each kept in
    the results store as it arrives (:meth:`layerwise.store.ResultsStore.get_or_compute_blocks`)."""
    n = cfg.n_sims
    unit = min(n, unit)

    def compute(i: int) -> dict[str, np.ndarray]:
        return simulate(
            cfg, sims=range(i * unit, min(n, (i + 1) * unit)), progress=False, block=unit
        )

    key = {**{k: v for k, v in cfg.to_dict().items() if k != "device"}, "unit": unit}
    fingerprint, modules = fingerprint_of(CODE)
    entry = ResultsStore(store_root()).get_or_compute_blocks(
        "moments_cli",
        key,
        -(-n // unit),
        compute,
        code_version=fingerprint,
        code_modules=modules,
        device=resolve_device(cfg.device),
        progress=progress,
        shared=("depth",),
        executor=client,
        code=CODE,
    )
    return dict(entry.arrays)


def main(argv: list[str]) -> int:
    """Parse ``argv``, validate, simulate, write ``--out`` (+ ``.json`` metadata). Returns exit
    status."""
    try:
        a = build_parser().parse_args(argv)
        as_given = ("arch", "kernel_size", "width", "batch", "depth", "res_depth", "boundary")
        as_given += ("dataset", "records", "seed", "device", "epsilon", "sampling", "conv")
        cfg = MomentsConfig(
            **{k: getattr(a, k) for k in as_given},
            n_sims=a.sims,
            reff_signal=not a.no_reff_signal,
            reff_noise=not a.no_reff_noise,
            reff_locations=None if a.reff_locations is None else tuple(a.reff_locations.split(",")),
        )
        # a missing or malformed data folder, or a data set that cannot be fetched, stops here
        check_source(cfg.dataset, cfg.batch)
        try:  # and so do files there that do not read (they are read once, and cached)
            load_images(cfg.dataset, cfg.batch)
        except DataFormatError as exc:
            raise ParameterError(f"dataset={cfg.dataset!r}: {exc}") from None
        if a.block is not None and a.block <= 0:
            raise ParameterError(f"block={a.block} must be a positive integer")
        out = Path(a.out)
        if out.suffix != ".npz":
            raise ParameterError(f"out={a.out!r} must end in .npz")
        _check_writable(out)
        device = resolve_device(cfg.device)
        kind, scheduler = settings(a.executor, a.scheduler)
        client = resolve_executor(
            kind, scheduler
        )  # an unreachable scheduler stops here, before any work
    except ParameterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    if client is None:
        arrays = simulate(cfg, progress=not a.quiet, block=a.block)
    else:
        arrays = simulate_units(cfg, client, unit=a.block or DASK_UNIT, progress=not a.quiet)
    wall = time.perf_counter() - t0
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, **arrays)
    meta = {
        "config": cfg.to_dict(),
        "code_version": code_fingerprint(CODE),
        "code_modules": list(module_closure(CODE)),
        "device": device,
        "wall_s": wall,
        "s_per_network": wall / cfg.n_sims,
        "executor": kind,
    }
    out.with_suffix(".json").write_text(json.dumps(meta, indent=2))
    print(
        f"wrote {out} ({cfg.n_sims} networks, {wall:.2f} s, {wall / cfg.n_sims:.3f} s/network on "
        f"{device})",
        file=sys.stderr,
    )
    return 0
