"""Benchmark of the exact region counter (issue #7, chapter 6).

Counts the activation regions of He-initialised [32,32,32] and [64,64,64] ReLU networks with
784 inputs on the plane through three i.i.d. Gaussian 784-dimensional points (square of half-width
1.25 × circumradius), with

* ``naive``: the per-polygon, per-neuron Python loop (``regions.activation_regions_naive``);
* ``polygons``: the vectorised splitter building every region (``method="polygons"``);
* ``arrangement``: the vectorised splitter for all but the last hidden layer, whose pieces are
  counted by the chord formula (``method="arrangement"``, the default of ``count_regions``).

Timings are best-of-``--repeats`` per network (the machine is shared), summed over the networks
as medians.  Writes ``results/bench/regions.json`` and ``results/bench/regions.png``.

    .venv/bin/python benchmarks/bench_regions.py [--nets 3] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
import torch

from layerwise import regions as R
from layerwise.store import versions

TARGETS = {"32x3": 0.2, "64x3": 0.8}  # seconds, issue #7
NAIVE_REFERENCE = {"32x3": 1.0, "64x3": 3.8}  # the timings of a naive loop


def best_of(f, repeats):
    best, out = np.inf, None
    for _ in range(repeats):
        t = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nets", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "results" / "bench"))
    args = ap.parse_args()
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    rows = []
    for name, widths in (("32x3", [32, 32, 32]), ("64x3", [64, 64, 64])):
        for s in range(args.nets):
            net = R.he_mlp(784, widths, 1, seed=100 + s)
            w = R.as_weights(net)
            plane = R.plane_through(np.random.default_rng(s).standard_normal((3, 784)))
            rec = {"arch": name, "net": s}
            for method in ("arrangement", "polygons"):
                # the lambda is called at once, inside this iteration
                t, n = best_of(lambda: R.count_regions(w, plane, method=method), args.repeats)  # noqa: B023
                rec[f"{method}_s"], rec[f"{method}_count"] = t, n
            t, n = best_of(lambda: R.activation_regions_naive(w, plane),  # noqa: B023 (called at once)
                           max(1, args.repeats // 2))
            rec["naive_s"], rec["naive_count"] = t, n
            assert rec["naive_count"] == rec["polygons_count"] == rec["arrangement_count"]
            rows.append(rec)
            print(rec, flush=True)
    summary = {}
    for name in TARGETS:
        rs = [r for r in rows if r["arch"] == name]
        summary[name] = {
            "regions_median": float(np.median([r["polygons_count"] for r in rs])),
            **{
                f"{m}_s_median": float(np.median([r[f"{m}_s"] for r in rs]))
                for m in ("naive", "polygons", "arrangement")
            },
            "target_s": TARGETS[name],
            "issue_naive_s": NAIVE_REFERENCE[name],
        }
        s = summary[name]
        s["speedup_vs_naive"] = s["naive_s_median"] / s["arrangement_s_median"]
        s["meets_target"] = s["arrangement_s_median"] <= s["target_s"]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "regions.json").write_text(
        json.dumps(
            {
                "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
                "torch_threads": torch.get_num_threads(),
                "versions": versions(),
                "repeats": args.repeats,
                "rows": rows,
                "summary": summary,
            },
            indent=1,
        )
    )

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from layerwise.plotting import set_style

    set_style()
    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    names = list(TARGETS)
    x = np.arange(len(names))
    for k, (m, lab) in enumerate(
        [
            ("naive", "naive loop"),
            ("polygons", "vectorised, all polygons"),
            ("arrangement", "vectorised + chord count"),
        ]
    ):
        ax.bar(x + (k - 1) * 0.26, [summary[n][f"{m}_s_median"] for n in names], 0.26, label=lab)
    ax.scatter(
        x + 0.26, [TARGETS[n] for n in names], marker="_", s=400, c="k", label="target", zorder=3
    )
    ax.set_yscale("log")
    ax.set_xticks(
        x, [f"[{n.split('x')[0]}]×3\n≈{summary[n]['regions_median']:.0f} regions" for n in names]
    )
    ax.set_ylabel("seconds per network (best of repeats)")
    ax.legend(fontsize=8)
    fig.savefig(out / "regions.png")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
