"""``python -m layerwise moments ...``: run the moments engine and write an ``.npz`` (SPEC §2, Ch. 3–5).

Arguments are validated (through :class:`layerwise.moments.MomentsConfig`) before any
computation; an invalid one exits with status 2 and a message naming the parameter and the
allowed values.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from .data import check_source
from .moments import ARCHS, BOUNDARIES, CONV_ALGORITHMS, SAMPLINGS, MomentsConfig, simulate
from .params import ParameterError, resolve_device
from .provenance import code_fingerprint, module_closure


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # exit status 2 with the usage, as argparse does
        self.print_usage(sys.stderr)
        raise ParameterError(message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m layerwise moments",
                description="Propagate signal and first-order noise through random networks (Labatie 2019) "
                            "and record their moments at every location of every recorded layer.")
    p.add_argument("--arch", required=True, help=f"one of {', '.join(ARCHS)}")
    p.add_argument("--kernel-size", type=int, required=True, help="1 = fully-connected, else odd k >= 3")
    p.add_argument("--width", type=int, required=True, help="channels / units N")
    p.add_argument("--batch", type=int, required=True, help="images per network B")
    p.add_argument("--depth", type=int, required=True, help="layers (bn_res: residual units) L")
    p.add_argument("--res-depth", type=int, default=2, help="layers per residual unit (bn_res)")
    p.add_argument("--boundary", default="periodic", help=f"one of {', '.join(BOUNDARIES)}")
    p.add_argument("--dataset", default="patches", help="patches | digits | gaussian | cifar10:DIR | mnist:DIR")
    p.add_argument("--sims", type=int, default=1, help="number of independent networks S")
    p.add_argument("--records", type=int, default=None, help="number of records R (divides depth; default depth)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", help="auto | cpu | cuda")
    p.add_argument("--epsilon", type=float, default=1e-3, help="BN epsilon")
    p.add_argument("--no-reff-signal", action="store_true", help="skip r_eff of the signal")
    p.add_argument("--no-reff-noise", action="store_true", help="skip r_eff of the noise")
    p.add_argument("--reff-locations", default=None,
                   help="comma-separated locations where r_eff is computed, e.g. loc4 (default: all of the arch's)")
    p.add_argument("--sampling", default="auto",
                   help=f"one of {', '.join(SAMPLINGS)} (default auto: projected for fully-connected nets with "
                        "2*batch < width, else explicit; conv nets are always explicit)")
    p.add_argument("--conv", default="auto",
                   help=f"one of {', '.join(CONV_ALGORITHMS)}: how k×k layers after the first are computed "
                        "(default auto: fft for periodic boundaries, else direct)")
    p.add_argument("--block", type=int, default=None, help="networks propagated together (default: automatic)")
    p.add_argument("--out", required=True, help="output .npz file")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def _check_writable(out: Path) -> None:
    """Raise unless ``out`` can be written: its folder is made (if missing) and a file can be created there."""
    import tempfile

    try:
        if out.is_dir():
            raise IsADirectoryError(f"{out} is a folder")
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out.parent):
            pass
    except OSError as exc:
        raise ParameterError(f"out={str(out)!r} cannot be written ({exc})") from None


def main(argv: list[str]) -> int:
    """Parse ``argv``, validate, simulate, write ``--out`` (+ ``.json`` metadata). Returns exit status."""
    try:
        a = build_parser().parse_args(argv)
        cfg = MomentsConfig(
            arch=a.arch, kernel_size=a.kernel_size, width=a.width, batch=a.batch, depth=a.depth,
            res_depth=a.res_depth, boundary=a.boundary, dataset=a.dataset, n_sims=a.sims,
            records=a.records, seed=a.seed, device=a.device, epsilon=a.epsilon,
            reff_signal=not a.no_reff_signal, reff_noise=not a.no_reff_noise,
            reff_locations=None if a.reff_locations is None else tuple(a.reff_locations.split(",")),
            sampling=a.sampling, conv=a.conv,
        )
        check_source(cfg.dataset, cfg.batch)  # a missing or malformed data folder stops here, before any work
        if a.block is not None and a.block <= 0:
            raise ParameterError(f"block={a.block} must be a positive integer")
        out = Path(a.out)
        if out.suffix != ".npz":
            raise ParameterError(f"out={a.out!r} must end in .npz")
        _check_writable(out)
        device = resolve_device(cfg.device)
    except ParameterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    arrays = simulate(cfg, progress=not a.quiet, block=a.block)
    wall = time.perf_counter() - t0
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, **arrays)
    meta = {"config": cfg.to_dict(), "code_version": code_fingerprint("layerwise.moments"),
            "code_modules": list(module_closure("layerwise.moments")), "device": device, "wall_s": wall,
            "s_per_network": wall / cfg.n_sims}
    out.with_suffix(".json").write_text(json.dumps(meta, indent=2))
    print(f"wrote {out} ({cfg.n_sims} networks, {wall:.2f} s, {wall / cfg.n_sims:.3f} s/network on {device})",
          file=sys.stderr)
    return 0
