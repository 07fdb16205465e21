"""Benchmark of the moments engine (SPEC §3; issue #6) — not a timed test.

Runs the reference configurations for a few random networks each and writes, per row:

(networks per row: enough that each of 2 workers gets a block of 4–8 networks, as in a chapter's
run — one network per block costs up to a third more per network on the dense rows, measured; on a
GPU at least 16, one block as a chapter's run gets there — 1 instead of 8 networks per block
doubles the paper-scale row's time per network on an H100, measured)

* ``cpu_s_per_network``: single-core CPU seconds per network — ``time.process_time()`` around
  ``simulate(cfg, workers=1)`` with ``torch.set_num_threads(1)`` (best of the repeats);
* ``measured_s_per_network``: wall seconds per network of ``simulate`` with ``--workers``
  workers (default: one per core; networks are split over the workers, so on 2 idle cores this
  is ≈ half the single-core CPU figure), compared with the target;
* the target, the authors' reference, the sampling used (``MomentsConfig.sampling``),
  simulations per second and the achieved GFLOP/s of the matrix products actually done
  (propagation of signal+noise — explicit or projected — and the Gram matrices of r_eff),

to ``results/bench/moments.json``, plus a bar chart ``results/bench/moments.png``.

    .venv/bin/python benchmarks/bench_moments.py [--quick] [--skip-paper-conv] [--repeats 2]
    [--workers W]
                                                 [--only I ...] [--single-core-only | --wall-only]

``--quick`` uses fewer networks and runs the paper-scale conv row on 10 of its 200 layers,
extrapolated ×20 (flagged ``extrapolated`` in the JSON); ``--skip-paper-conv`` leaves that row
out (a full paper-scale conv network takes minutes).  ``--single-core-only`` skips the wall-clock
run with several workers (for a shared machine).  The machine load average is recorded with each
row: on a shared machine, timings are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

from layerwise.moments import MomentsConfig, resident_bytes, simulate
from layerwise.provenance import code_fingerprint

ROOT = Path(__file__).resolve().parents[1]

ROWS = [
    dict(
        name="vanilla FC N=512 B=64 L=200, r_eff(x)",
        ref=1.65,
        floor=0.075,
        target=0.15,
        n=16,
        quick=16,
        mem=4,
        cfg=dict(
            arch="vanilla",
            kernel_size=1,
            width=512,
            batch=64,
            depth=200,
            reff_signal=True,
            reff_noise=False,
        ),
    ),
    dict(
        name="bn_ff FC N=512 B=64 L=200, both r_eff",
        ref=2.2,
        floor=0.075,
        target=0.2,
        n=16,
        quick=16,
        mem=4,
        cfg=dict(arch="bn_ff", kernel_size=1, width=512, batch=64, depth=200),
    ),
    dict(
        name="bn_res FC N=512 B=64 500x2, both r_eff",
        ref=6.5,
        floor=0.37,
        target=0.6,
        n=16,
        quick=8,
        mem=4,
        cfg=dict(arch="bn_res", kernel_size=1, width=512, batch=64, depth=500),
    ),
    dict(
        name="vanilla FC N=128 B=1024 L=200, 4 records, no r_eff",
        ref=0.77,
        floor=0.075,
        target=0.12,
        n=8,
        quick=8,
        mem=4,
        cfg=dict(
            arch="vanilla",
            kernel_size=1,
            width=128,
            batch=1024,
            depth=200,
            records=4,
            reff_signal=False,
            reff_noise=False,
        ),
    ),
    dict(
        name="bn_ff conv3x3 N=128 B=16 L=200, both r_eff",
        ref=10.7,
        floor=1.4,
        target=2.5,
        n=4,
        quick=4,
        mem=8,
        cfg=dict(arch="bn_ff", kernel_size=3, width=128, batch=16, depth=200),
    ),
    dict(
        name="bn_ff conv3x3 N=512 B=64 L=200, both r_eff (paper)",
        ref=218.0,
        floor=97.0,
        target=120.0,
        n=2,
        quick=2,
        mem=8,
        cfg=dict(arch="bn_ff", kernel_size=3, width=512, batch=64, depth=200),
        paper=True,
    ),
]


def matmul_flops(cfg: MomentsConfig) -> float:
    """Floating-point operations of the matrix products of one network (2·m·n·k each).

    Projected dense layers (M = 2B rows < min(fan_in, N)) count the QR (≈ 2·K·M² − 2M³/3) and
    Rᵀ G (2·M²·N); explicit layers 2·M·K·N; FFT conv layers (``MomentsConfig.conv``) the complex
    per-frequency products, direct ones 2·M·k²·C·N.
    """
    B, N, k = cfg.batch, cfg.width, cfg.kernel_size
    if k == 1:
        P, fan0 = 1, 3 * 32 * 32
    else:
        P, fan0 = 16 * 16, 3 * k * k
    kk = k * k
    M2 = 2 * B * P

    def dense(K: int) -> float:
        if cfg.sampling_used == "projected" and min(K, N) > M2:
            return 2.0 * K * M2 * M2 - 2.0 * M2**3 / 3 + 2.0 * M2 * M2 * N
        return 2.0 * M2 * K * N

    flops = dense(fan0) if k == 1 else 2.0 * M2 * fan0 * N  # first layer
    if k == 1:
        layer = dense(N)
    elif cfg.conv_used == "fft":  # Moments engine's fft_conv on a 16×16 map (h = w = 16, 9 columns)
        h, wd, wh, fu = (
            16,
            16,
            9,
            16 * 9 - 2 * 7,
        )  # 130 frequencies multiplied, 14 filled by conjugation
        layer = (
            fu * 3 * 2.0 * 2 * B * N * N  # 3 real products per complex one
            + fu * 3 * 2.0 * (2 * k) * N * N
            + wh * 2.0 * (2 * k) * kk * N * N  # W_f (separable taps)
            + 2.0 * (2 * wh) * wd * (2 * h * B * N)
            + wh * 2 * 2.0 * (2 * h) ** 2 * B * N  # A, B (signal, noise)
            + wh * 2.0 * (2 * h) ** 2 * 2 * B * N
            + 2 * h * 2.0 * wd * (2 * wh) * B * N
        )  # B⁻¹, A⁻¹
    else:
        layer = 2.0 * M2 * kk * N * N
    flops += cfg.n_layers * layer  # every layer
    M = B * P
    gram = 2.0 * M * N * min(M, N)
    n_loc = len(cfg.locations)
    per_record = (n_loc - 1) * (int(cfg.reff_signal) + int(cfg.reff_noise)) * gram
    first = (
        (int(cfg.reff_signal) + int(cfg.reff_noise))
        * gram
        * (cfg.records if cfg.interval > 1 else 1)
    )
    return flops + cfg.records * per_record + first


def _cpu_seconds(cfg: MomentsConfig) -> float:
    c0 = time.process_time()
    simulate(cfg, workers=1)
    return time.process_time() - c0


def _wall_seconds(cfg: MomentsConfig, workers: int) -> float:
    t0 = time.perf_counter()
    simulate(cfg, workers=workers)
    return time.perf_counter() - t0


class PeakRSS:
    """Peak resident memory of this process while the context is open (a thread reading
    :func:`layerwise.moments.resident_bytes` every 5 ms; NaN where it cannot be read)."""

    def __enter__(self) -> "PeakRSS":
        import threading

        self.peak, self._stop = float("nan"), threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def _watch(self) -> None:
        while True:
            rss = resident_bytes()
            if rss is None:
                return
            self.peak = rss if self.peak != self.peak else max(self.peak, rss)
            if self._stop.wait(0.005):
                return

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def run_row(
    row: dict,
    n: int,
    repeats: int,
    depth_frac: int = 1,
    workers: int | None = None,
    single_core_only: bool = False,
    wall_only: bool = False,
) -> dict:
    c = dict(row["cfg"])
    extrap = 1
    if depth_frac > 1:
        c["depth"] = c["depth"] // depth_frac
        extrap = depth_frac
    cfg = MomentsConfig(**c, n_sims=n, dataset="patches", device="auto", seed=0)
    # warm-up (allocator, kernels) on a tiny depth
    simulate(
        MomentsConfig(
            **{
                **cfg.to_dict(),
                "depth": 2,
                "records": 2 if cfg.records >= 2 else 1,
                "n_sims": min(n, 2),
            }
        ),
        workers=1,
    )
    nw = (
        1 if cfg.on_cuda else (workers or (os.cpu_count() or 1))
    )  # simulate runs one block at a time on CUDA
    best_cpu, best = float("nan"), float("nan")
    with PeakRSS() as mem:  # peak memory of the whole process over both runs
        prev = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            if not wall_only:  # single core: one worker, one thread, CPU time of this process
                best_cpu = min(_cpu_seconds(cfg) for _ in range(repeats))
        finally:
            torch.set_num_threads(prev)
        if not single_core_only:
            best = min(_wall_seconds(cfg, nw) for _ in range(repeats))
    cpu_net = best_cpu / n * extrap
    s_net = best / n * extrap
    flops = matmul_flops(cfg) * extrap
    est = cpu_net / nw  # NaN with --wall-only
    return {
        "name": row["name"],
        "config": row["cfg"],
        "sampling": cfg.sampling_used,
        "conv": cfg.conv_used,
        "networks": n,
        "repeats": repeats,
        "reference_s_per_network": row["ref"],
        "floor_s_per_network": row["floor"],
        "target_s_per_network": row["target"],
        "cpu_s_per_network": cpu_net,
        "workers": nw,
        "measured_s_per_network": s_net,
        "estimated_s_per_network_from_cpu": est,
        "simulations_per_s": 1.0 / (s_net if s_net == s_net else est),
        "gflops_per_network": flops / 1e9,
        "single_core_gflop_per_s": flops / cpu_net / 1e9 if cpu_net == cpu_net else float("nan"),
        "meets_target": bool((s_net if s_net == s_net else est) <= row["target"]),
        "meets_target_from": "wall" if s_net == s_net else "single-core cpu / workers (estimate)",
        "extrapolated_from_depth": c["depth"] if extrap > 1 else None,
        "load_average_1min": os.getloadavg()[0],
        "peak_rss_gb": mem.peak / 1e9,
        "memory_limit_gb": row["mem"],
        "meets_memory": bool(mem.peak <= row["mem"] * 1e9),
    }


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    try:
        from layerwise.plotting import set_style

        set_style()
    except Exception:  # pragma: no cover - style is cosmetic
        pass
    fig, ax = plt.subplots(figsize=(10, 4.5), layout="constrained")
    x = np.arange(len(rows))
    keys = [
        ("reference_s_per_network", "reference (authors' TF)"),
        ("target_s_per_network", "target"),
        ("cpu_s_per_network", "single-core CPU s"),
    ]
    if any(r["measured_s_per_network"] == r["measured_s_per_network"] for r in rows):
        keys.append(("measured_s_per_network", f"wall s, {rows[0]['workers']} workers"))
    wd = 0.8 / len(keys)
    for j, (key, label) in enumerate(keys):
        ax.bar(x + (j - (len(keys) - 1) / 2) * wd, [r[key] for r in rows], width=wd, label=label)
    ax.set_yscale("log")
    ax.set_xticks(
        x, [r["name"].replace(", ", "\n", 1) + f"\n[{r['sampling']}]" for r in rows], fontsize=7
    )
    ax.set_ylabel("seconds per network")
    ax.set_title("Moments engine, seconds per network (lower is better)")
    ax.legend()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--quick",
        action="store_true",
        help="fewer networks; paper conv row on 10 layers, extrapolated",
    )
    ap.add_argument(
        "--skip-paper-conv",
        action="store_true",
        help="leave out the paper-scale conv row (minutes per network)",
    )
    ap.add_argument(
        "--repeats", type=int, default=2, help="timed repeats per row (best is reported)"
    )
    ap.add_argument(
        "--workers",
        type=int,
        default=None,
        help="workers of the wall-clock run (default: one per core)",
    )
    ap.add_argument(
        "--single-core-only",
        action="store_true",
        help="only the single-core CPU time (no multi-worker wall-clock run; for a shared machine)",
    )
    ap.add_argument(
        "--wall-only",
        action="store_true",
        help="only the multi-worker wall-clock run (no single-core CPU pass; halves a "
        "full paper-row run)",
    )
    ap.add_argument(
        "--only", type=int, nargs="*", default=None, help="row indices to run (0-based)"
    )
    ap.add_argument("--out", default=str(ROOT / "results" / "bench" / "moments.json"))
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    results = []
    for i, row in enumerate(ROWS):
        if a.only is not None and i not in a.only:
            continue
        if row.get("paper") and a.skip_paper_conv:
            print(f"skipping: {row['name']} (--skip-paper-conv)", file=sys.stderr)
            continue
        n = row["quick"] if a.quick else row["n"]
        if (
            torch.cuda.is_available()
        ):  # one block of 16 networks on a GPU, as a chapter's run gets there
            n = max(n, 16)
        frac = 20 if (row.get("paper") and a.quick) else 1
        reps = 1 if row.get("paper") else a.repeats
        r = run_row(row, n, reps, frac, a.workers, a.single_core_only, a.wall_only)
        results.append(r)
        print(
            f"{r['name']:<55} [{r['sampling']}] {r['cpu_s_per_network']:8.3f} CPU-s/net (1 "
            "core), "
            f"{r['measured_s_per_network']:8.3f} s/net wall ({r['workers']} workers; est. "
            f"{r['estimated_s_per_network_from_cpu']:.3f}), target {r['target_s_per_network']}, "
            f"ref {r['reference_s_per_network']}, {r['single_core_gflop_per_s']:6.1f} "
            "GFLOP/s/core  "
            f"peak RSS {r['peak_rss_gb']:.2f} GB (limit {r['memory_limit_gb']})  load "
            f"{r['load_average_1min']:.1f}",
            flush=True,
        )
    meta = {
        "code_version": code_fingerprint("layerwise.moments"),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "machine": (
            f"{platform.machine()} {platform.processor() or ''} {os.cpu_count()} cores".strip()
        ),
        "device": "cuda" if torch.cuda.is_available() else "cpu",
        "quick": a.quick,
        "note": "cpu_s_per_network = best single-thread process_time of simulate(workers=1) / "
        "networks; "
        "measured_s_per_network = best wall time of simulate(workers=W) / networks (NaN "
        "with "
        "--single-core-only); GFLOP/s counts matrix products only (propagation of "
        "signal+noise as "
        "sampled, r_eff Gram matrices). On a shared machine see load_average_1min.",
        "rows": results,
    }
    out.write_text(json.dumps(meta, indent=2))
    if results:
        plot(results, out.with_suffix(".png"))
    print(f"wrote {out} and {out.with_suffix('.png')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
