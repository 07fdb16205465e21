"""cProfile of one network of the moments engine (issue #47 item 4) — not a timed test.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/profile_moments.py [--depth 20] [--width 512]
        [--batch 64] [--kernel 3] [--arch bn_ff] [--records R] [--reff-locations loc1 loc4]

Runs ``propagate`` (what ``simulate``'s worker thread runs) on one network, one thread, of the
configuration (default: the paper-width convolutional row of bench_moments.py, on ``--depth``
layers so a profile takes seconds) and prints the 30 most expensive functions by their own
time and by cumulative time.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

import torch

from layerwise.moments import MomentsConfig, propagate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="bn_ff")
    ap.add_argument("--depth", type=int, default=20)
    ap.add_argument("--width", type=int, default=512)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--kernel", type=int, default=3)
    ap.add_argument("--records", type=int, default=None, help="records (default: every layer)")
    ap.add_argument("--reff-locations", nargs="*", default=None,
                    help="locations with r_eff (default: the engine's)")
    a = ap.parse_args()
    torch.set_num_threads(1)
    cfg = MomentsConfig(arch=a.arch, kernel_size=a.kernel, width=a.width, batch=a.batch,
                        depth=a.depth, n_sims=1, records=a.records,
                        **({} if a.reff_locations is None else
                           {"reff_locations": tuple(a.reff_locations)}))
    prof = cProfile.Profile()
    t0 = time.process_time()
    prof.enable()
    with torch.inference_mode():  # as simulate's worker runs it, here in the profiled thread
        propagate(cfg, [0], "cpu", None, None, None, lambda: None)
    prof.disable()
    print(f"{cfg.conv_used} conv, {a.depth} layers: {time.process_time() - t0:.2f} CPU s")
    for key in ("tottime", "cumulative"):
        pstats.Stats(prof).sort_stats(key).print_stats(30)


if __name__ == "__main__":
    main()
