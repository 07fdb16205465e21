"""Benchmark of Chapter 8's units at a chosen scale (issue #47 item 4) — not a timed test.

Builds the inputs the chapter builds (the digits split by the chapter seed, net 0 trained as
:func:`layerwise.studies.ch08.kfac_unit` trains it) and times, in CPU seconds of one thread
(``time.process_time``; set ``OMP_NUM_THREADS=1``), the chapter's heavy units on that net:

* ``kfac``: :func:`~layerwise.studies.ch08.kfac_unit` (training and the K-FAC analysis);
* ``ng``: :func:`~layerwise.studies.ch08.natural_gradient_unit` (both states);
* ``reparam``: :func:`~layerwise.infogeo.reparam_sweep`.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_ch08.py [--scale default] \
        [--parts ng kfac reparam] [--profile]

``--profile`` prints the 25 most expensive functions (cumulative) of each part. On a shared
machine compare versions by running them alternately, back to back.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import pstats
import time
from pathlib import Path

import numpy as np
import torch

from layerwise import infogeo
from layerwise.data import digits
from layerwise.seeds import torch_seed
from layerwise.studies import ch08 as study

ROOT = Path(__file__).resolve().parents[1]


def scales() -> dict:
    """The notebook's SCALES table and DAMPINGS, read from its source (no execution of cells)."""
    src = (ROOT / "notebooks" / "08_information_geometry.py").read_text()
    ns: dict = {}
    start = src.index("SCALES = {")
    end = src.index("\nparams = ", start)
    exec(src[start:end], ns)  # a literal dict
    line = next(ln for ln in src.splitlines() if ln.startswith("DAMPINGS = "))
    exec(line.split("#")[0], ns)
    return ns


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", default="default", choices=("ci", "default", "paper"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--parts", nargs="+", default=["ng", "kfac", "reparam"],
                    choices=("ng", "kfac", "reparam"))
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(1)
    ns = scales()
    P = study.check_params(dict(ns["SCALES"][a.scale]))
    rng = np.random.default_rng([a.seed, 8])  # any fixed split: the cost does not depend on it
    train_x, train_y, _, _ = study.split_digits(*digits(), rng, P["n_train"])
    widths = [64, P["hidden"], P["hidden"], 10]
    kw = dict(x=train_x, y=train_y, widths=widths, steps=P["train_steps"], lr=P["lr"],
              target_loss=P["target_loss"], seed=a.seed, kfac_n=P["kfac_n"])
    t0 = time.process_time()
    unit = study.kfac_unit(0, **kw)
    print(f"kfac_unit (setup) {time.process_time() - t0:.2f} s")
    nets = {k: v for k, v in unit.items() if k.startswith("mlp_")}
    net = study.unit_net(nets, 0)[0]
    n = P["kfac_n"]
    jobs = {
        "kfac": lambda: study.kfac_unit(0, **kw),
        "ng": lambda: study.natural_gradient_unit(
            0, nets=nets, seed=a.seed, x=train_x[:n], y=train_y[:n], dampings=ns["DAMPINGS"],
            structure_damping=ns["DAMPINGS"][1]),
        "reparam": lambda: infogeo.reparam_sweep(
            net, train_x, train_y, alphas=P["alphas"], lanczos_iter=P["lanczos_iter"],
            sharp_draws=P["sharp_draws"], sharp_sigma=P["sharp_sigma"],
            seed_lanczos=torch_seed(a.seed, "lanczos"), seed_lanczos2=torch_seed(a.seed, "l2"),
            seed_noise=torch_seed(a.seed, "noise")),
    }
    for part in a.parts:
        prof = cProfile.Profile() if a.profile else None
        t0 = time.process_time()
        w0 = time.perf_counter()
        if prof:
            prof.enable()
        jobs[part]()
        if prof:
            prof.disable()
        cpu, wall = time.process_time() - t0, time.perf_counter() - w0
        print(f"{part}: {cpu:.2f} CPU s, {wall:.2f} wall s")
        if prof:
            pstats.Stats(prof).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    if importlib.util.find_spec("layerwise") is None:
        raise SystemExit("run with the project's environment: .venv/bin/python")
    main()
