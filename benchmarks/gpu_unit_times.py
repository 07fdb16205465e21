"""Seconds per network of the largest `paper`-scale engine runs of Chapters 3–5, on this machine's
device — what the README's `paper` cost table projects from (issue #47 item 1). Not a timed test.

Each row builds the run's configuration from its chapter's ``paper`` scale (as the notebook does),
runs a warm-up, then one block of networks through ``--layers`` layers (units for the ResNets),
and extrapolates linearly to the run's depth::

    python benchmarks/gpu_unit_times.py [--layers 20] [--block 4] \
        [--out results/bench/gpu_units.json]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

import torch

from layerwise.moments import MomentsConfig, simulate

P3 = {"arch": "vanilla", "width": 512, "batch": 64, "depth": 200, "dataset": "patches"}
#: name → (configuration at the paper scale, networks the paper scale runs)
ROWS = {
    "03 fig2_conv (vanilla conv, N = 128, B = 1024)": (MomentsConfig(
        **{**P3, "width": 128, "batch": 1024}, kernel_size=3, records=200, reff_signal=False,
        reff_noise=False), 10_000),
    "03 fig3_conv (vanilla conv, N = 512, B = 64)": (MomentsConfig(
        **P3, kernel_size=3, records=25, reff_noise=False, reff_locations=("loc3",)), 1000),
    "03 fig2_hist (vanilla FC, N = 128, B = 1024)": (MomentsConfig(
        **{**P3, "width": 128, "batch": 1024}, kernel_size=1, records=200, reff_signal=False,
        reff_noise=False), 10_000),
    "04 fig4_conv (BN conv, N = 512, B = 64)": (MomentsConfig(
        **{**P3, "arch": "bn_ff"}, kernel_size=3, records=25,
        reff_locations=("loc1", "loc4")), 1000),
    "05 fig5_conv (BN ResNet conv, N = 512, B = 64, 500 units)": (MomentsConfig(
        arch="bn_res", width=512, batch=64, depth=500, res_depth=2, dataset="patches",
        kernel_size=3, records=500, reff_locations=("loc3",)), 1000),
    "05 fig5_fc (BN ResNet FC, N = 512, B = 64, 500 units)": (MomentsConfig(
        arch="bn_res", width=512, batch=64, depth=500, res_depth=2, dataset="patches",
        kernel_size=1, records=500, reff_locations=("loc3",)), 200),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layers", type=int, default=20)
    ap.add_argument("--block", type=int, default=4)
    ap.add_argument("--out", type=Path, default=Path("results/bench/gpu_units.json"))
    a = ap.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    rows = {"device": torch.cuda.get_device_name(0) if device == "cuda" else "cpu",
            "torch": torch.__version__, "layers": a.layers, "block": a.block, "rows": {}}
    for name, (cfg, nets) in ROWS.items():
        short = replace(cfg, depth=a.layers, records=max(1, cfg.records * a.layers // cfg.depth),
                        device=device, n_sims=a.block)
        simulate(replace(short, depth=2, records=1), sims=range(1), progress=False)
        if device == "cuda":
            torch.cuda.synchronize()
        t = time.perf_counter()
        simulate(short, sims=range(a.block), progress=False)
        if device == "cuda":
            torch.cuda.synchronize()
        per_net = (time.perf_counter() - t) / a.block * cfg.depth / a.layers
        rows["rows"][name] = {"s_per_network": round(per_net, 3), "paper_networks": nets,
                              "paper_hours": round(per_net * nets / 3600, 2)}
        print(f"{name}: {per_net:.2f} s per network, {nets} networks ≈ "
              f"{per_net * nets / 3600:.2f} h", flush=True)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
