"""Spot checks at the paper's width of what Chapters 3–5 can only grade at larger scales (SPEC §2
"Chapters 3–5") — a GPU job, not part of the book or of CI.

Each check runs the moments engine (photo patches, seed 0, r_eff off) and writes what it measured
to ``results/bench/labatie_spot_checks.json`` (untracked: the book cites none of it; results
that the book shows come from chapter runs, tracked as ``evidence/`` with ``make evidence``):

* ``conv_width``: log10 χ²⁰⁰ (mean ± s.e. over networks) of vanilla 3×3 periodic conv nets at
  widths 128, 256, 512 (B = 64) and of BN feedforward conv nets at width 512 — Chapter 3's
  ``conv_chi_slow`` (paper, Fig. 3: χ²⁰⁰ between 1 and 10) and Chapter 4's ``conv_chi_200_range``
  (Fig. 4(b): 10¹³–10¹⁸, the paper's nets being convolutional);
* ``tau``: the free log-log exponent of χ^l against Eq. 15's τ = ((E δχ)^{2·res_depth} − 1)/2
  (``labatie.power_fit`` / ``labatie.tau_prediction``) over several windows of units, for
  fully-connected BN ResNets 8× deeper than the paper's (4 000 units) and for convolutional ones at
  the paper's settings (width 512, B = 64, 500 units) — Chapter 5 reports the free exponent next to
  Eq. 15 and grades the paper's overlay (``eq15_overlay``); with each row the kurtosis μ₄/μ₂² after
  the first BN of the last unit (Fig. 5(d)).

    python benchmarks/labatie_spot_checks.py [--device auto] [--only conv_width tau] [--out FILE]

On one H100 the whole script takes ≈ 3 minutes; on two CPU cores, about a day.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from layerwise import labatie, stats
from layerwise.moments import MomentsConfig, simulate
from layerwise.provenance import code_fingerprint

ROOT = Path(__file__).resolve().parents[1]
COMMON = dict(batch=64, dataset="patches", seed=0, reff_signal=False, reff_noise=False)


def _run(cfg: MomentsConfig) -> tuple[dict[str, np.ndarray], float]:
    t0 = time.perf_counter()
    a = simulate(cfg, progress=True)
    return a, (time.perf_counter() - t0) / cfg.n_sims


def conv_width(device: str) -> list[dict]:
    rows = []
    for arch, width, nets in [
        ("vanilla", 128, 32),
        ("vanilla", 256, 32),
        ("vanilla", 512, 32),
        ("bn_ff", 512, 48),
    ]:
        cfg = MomentsConfig(
            arch=arch,
            kernel_size=3,
            width=width,
            depth=200,
            records=20,
            boundary="periodic",
            n_sims=nets,
            device=device,
            **COMMON,
        )
        a, s = _run(cfg)
        lc = stats.summary(np.log10(a[f"chi_{cfg.locations[-1]}"][:, -1]))
        rows.append(
            dict(
                arch=arch,
                width=width,
                networks=nets,
                s_per_network=s,
                log10_chi_200=lc["mean"],
                se=lc["se"],
                spread=lc["std"],
            )
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def tau(device: str) -> list[dict]:
    rows = []
    runs = [
        (
            "fc",
            dict(kernel_size=1, depth=4000, records=400, n_sims=64),
            [(50, 500), (300, 500), (400, 4000), (1000, 4000), (2000, 4000), (3000, 4000)],
        ),
        ("conv", dict(kernel_size=3, depth=500, records=100, n_sims=16), [(50, 500), (300, 500)]),
    ]
    for tag, kw, windows in runs:
        cfg = MomentsConfig(arch="bn_res", width=512, res_depth=2, device=device, **kw, **COMMON)
        a, s = _run(cfg)
        d, chi, dff = a["depth"], a["chi_loc5"], a["chi_loc4"] / a["chi_loc1"]
        kurt = stats.summary(
            a["mu4_signal_loc2"][:, -1] / a["mu2_signal_loc2"][:, -1] ** 2
        )  # after the first BN, last unit
        for lo, hi in windows:
            sel = (d >= lo) & (d <= hi)
            pred, pred_se = labatie.tau_prediction(dff[:, sel], cfg.res_depth)
            fit = labatie.power_fit(d[sel], chi[:, sel], l_min=lo)
            rows.append(
                dict(
                    net=tag,
                    units=cfg.depth,
                    networks=cfg.n_sims,
                    s_per_network=s,
                    window=[lo, hi],
                    tau_fit=fit["tau"],
                    se_fit=fit["se_tau"],
                    tau_eq15=pred,
                    se_eq15=pred_se,
                    z=(fit["tau"] - pred) / float(np.hypot(fit["se_tau"], pred_se)),
                    kurtosis_last_unit=kurt["mean"],
                    kurtosis_se=kurt["se"],
                )
            )
            print(json.dumps(rows[-1]), flush=True)
    return rows


CHECKS = {"conv_width": conv_width, "tau": tau}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    ap.add_argument("--only", nargs="*", choices=sorted(CHECKS), default=sorted(CHECKS))
    ap.add_argument("--out", default=str(ROOT / "results" / "bench" / "labatie_spot_checks.json"))
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    res = {"code_version": code_fingerprint("layerwise.moments"), "device": a.device}
    for name in a.only:
        res[name] = CHECKS[name](a.device)
    out.write_text(json.dumps(res, indent=1))
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
