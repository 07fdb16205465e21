"""The Dask path on one machine, and the book's heavy chapters at ``paper`` on k workers (issue #31)
— not a timed test.

Two workloads go through the executor seam twice, each time into a fresh temporary results
folder (nothing is read from a store): locally (``$LAYERWISE_EXECUTOR=local``, one torch thread,
as one Dask worker has) and on a ``LocalCluster`` of 1 and of 2 single-threaded worker processes:

* ``ch07_cells``: Chapter 7's trainability cells (``studies.ch07.trainability_cell`` through
  ``Chapter.cached_units``) at a reduced size, or with ``--size default`` at the chapter's own
  default parameters (two depths, two replicates);
* ``ch04_blocks``: the moments engine's blocks of Chapter 4's ``ci`` base configuration
  (``Chapter.simulate_moments``) in blocks of 2 networks, or with ``--size default`` two of the
  default scale's blocks (32 networks of width 512, B = 64, 200 layers each).

Reported per workload: the wall times, the cluster's start-up (apart: starting the worker processes
and importing torch and the package in each, paid once per book run), and the Dask path's overhead
on one machine, ``(T_dask,1 worker − T_local) / T_local`` and per unit. Then, per chapter, the
projected wall time at ``paper`` on k = 1, 8, 64 CPU workers: the units of the ``paper`` row of the
chapter's scale table (engine blocks for Chapters 3–5: one simulation per ``*_nets`` parameter, per
entry of ``widths``/``batches`` where the chapter sweeps them — a lower bound on what the notebook
runs; trainability cells for Chapter 7), each costed from the measured per-unit time scaled by its
size (engine: width² · batch · depth · networks, the dense products' count — a proxy that
underestimates convolutional networks; Chapter 7: σ_w² values · steps · depth · width²), plus the
measured Dask overhead per unit, scheduled greedily in submission order on k workers. These are
extrapolations from seconds-long runs, to order of magnitude only.

    .venv/bin/python benchmarks/bench_dask.py [--size quick|reduced|default] [--device cpu|cuda]

Writes ``results/bench/dask-<size>-<device>.json``, ``.png`` and ``.md`` (the README's table is
the ``default`` CPU one; a GPU machine gives the GPU workers' row with ``--device cuda``).
The machine's load average is recorded: on a shared machine the timings are
noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
OUT = ROOT / "results" / "bench"
WORKERS = (1, 8, 64)
SIZES = ("quick", "reduced", "default")


def _ch07(size: str) -> tuple[dict, int, list[float]]:
    """Arguments of Chapter 7's trainability cells at the bench ``size`` (``quick``, ``reduced``,
    or ``default``: the chapter's own default parameters for two depths of its grid and two
    replicates), their number, and each unit's size (σ_w² · steps · depth · width²)."""
    from layerwise.runner import notebook_presets, select
    from layerwise.studies import ch07

    x, y = ch07.standardised_digits()
    if size == "default":
        p = notebook_presets(select(["07"], ROOT)["07"])["default"]
        depths = (p["train_depths"][0], p["train_depths"][len(p["train_depths"]) // 2])
        args = dict(
            x=x,
            y=y,
            sigma_w2s=np.linspace(1.0, 4.0, p["train_sigmas"]),
            width=p["train_width"],
            steps=p["train_steps"],
            early_steps=p["train_early_steps"],
        )
    else:
        quick = size == "quick"
        depths = (4, 8) if quick else (4, 8, 16)
        args = dict(
            x=x[:256],
            y=y[:256],
            sigma_w2s=np.linspace(1.0, 4.0, 3),
            width=32 if quick else 64,
            steps=20 if quick else 60,
            early_steps=10 if quick else 15,
        )
    args.update(
        depths=tuple(int(d) for d in depths),
        seeds=np.arange(2 * len(depths)).reshape(2, len(depths)) + 11,
        sigma_b2=0.05,
        lr=0.01,
        batch=64,
    )
    n = 2 * len(depths)
    cost = len(args["sigma_w2s"]) * args["steps"] * args["width"] ** 2
    return args, n, [cost * depths[i % len(depths)] for i in range(n)]


def _ch04_cfg(size: str, device: str = "cpu"):
    """Chapter 4's fully-connected engine run at the bench ``size``: its ``ci`` configuration
    (``quick``: half the depth) in blocks of 2 networks, or at ``default`` two of the default
    scale's blocks of networks (width 512, B = 64, 200 layers). Returns (config, block)."""
    from layerwise.moments import MomentsConfig
    from layerwise.runner import notebook_presets, select

    presets = notebook_presets(select(["04"], ROOT)["04"])
    p = presets["default" if size == "default" else "ci"]
    depth = p["depth"] // (2 if size == "quick" else 1)
    block = p["block"] if size == "default" else 2
    cfg = MomentsConfig(
        arch="bn_ff",
        kernel_size=1,
        width=p["width"],
        batch=p["batch"],
        depth=depth,
        dataset="patches",
        n_sims={"quick": 4, "reduced": 8}.get(size, 2 * block),
        records=depth,
        seed=0,
        device=device,
        reff_locations=("loc1", "loc4"),
    )
    return cfg, block


def _run(kind: str, workload: str, size: str, device: str, client=None) -> dict:
    """One workload through the seam into a fresh results folder; wall time and unit times."""
    from layerwise import executor as ex
    from layerwise.chapter import Chapter

    with tempfile.TemporaryDirectory() as tmp:
        os.environ[ex.ENV_EXECUTOR] = kind
        os.environ.pop(ex.ENV_SCHEDULER, None)
        if client is not None:
            ex._CLIENTS[("dask", None)] = client  # the cluster of this measurement
        ch = Chapter(
            "04_bench" if workload == "ch04_blocks" else "07_bench",
            scale="ci",
            seed=0,
            device=device,
            results=Path(tmp),
        )
        if workload == "ch07_cells":
            from layerwise.studies import ch07

            args, n, _ = _ch07(size)
        t0 = time.perf_counter()
        if workload == "ch07_cells":
            ch.cached_units(ch07.trainability_cell, n, **args, device=device)
        else:
            cfg, block = _ch04_cfg(size, device)
            ch.simulate_moments("bench", cfg, block=block)
        wall = time.perf_counter() - t0
        units = sorted(
            json.loads(m.read_text()).get("wall_time_s", 0.0)
            for m in Path(tmp).rglob("meta.json")
            if ".block" in str(m.parent.parent.name)
        )
    return {"wall_s": wall, "unit_s": units}


def _warm() -> None:
    """What a book run's first unit on each worker pays once: import what the units need (torch,
    the engine, Chapter 7's study), load the digits and fingerprint the code a unit checks (the
    fingerprint is cached per process), so that the per-unit overhead counts per-unit costs only."""
    import layerwise.moments  # noqa: F401
    from layerwise import executor as ex
    from layerwise.studies import ch07

    ch07.standardised_digits()
    for code in ("layerwise.moments", "layerwise.studies.ch07"):
        ex.client_fingerprint(code)


def _cluster(n_workers: int):
    import distributed

    from layerwise import executor as ex

    t0 = time.perf_counter()
    cluster = ex.local_cluster(n_workers)
    client = distributed.Client(cluster, set_as_default=False)
    client.wait_for_workers(n_workers, timeout=120)
    client.run(_warm)  # what a book run's first unit on each worker pays once
    return cluster, client, time.perf_counter() - t0


def makespan(costs: list[float], k: int) -> float:
    """Wall time of units with ``costs`` taken in order by the first free of ``k`` workers."""
    free = [0.0] * min(k, max(len(costs), 1))
    for c in costs:
        i = int(np.argmin(free))
        free[i] += c
    return max(free)


def _engine_units(stem: str) -> list[tuple[int, int, int, int, bool]]:
    """``(networks, width, batch, depth, conv)`` of each engine block at ``paper``: one simulation
    per ``*_nets`` parameter of the scale table (per width/batch of a sweep), in blocks."""
    from layerwise.runner import notebook_presets, select

    p = notebook_presets(select([stem[:2]], ROOT)[stem[:2]])["paper"]
    out = []
    for key, n in p.items():
        if not key.endswith("_nets") and key != "n_nets":
            continue
        pre = key[: -len("nets")]  # "" for n_nets, "hist_", "conv_", ...
        pre = "" if pre == "n_" else pre
        width = p.get(f"{pre}width", p["width"])
        batch = p.get(f"{pre}batch", p["batch"])
        depth = p.get(f"{pre}depth", p["depth"])
        sweep = [(w, batch) for w in p["widths"]] if pre == "width_" else [(width, batch)]
        if pre == "batch_":
            sweep = [(width, b) for b in p["batches"]]
        for w, b in sweep:
            for start in range(0, n, p["block"]):
                out.append((min(p["block"], n - start), w, b, depth, "conv" in pre))
    return out


#: Seconds per network of the moments engine on one NVIDIA H100 (``moments-5``, measured with
#: ``benchmarks/bench_moments.py --wall-only`` in a development session that was lent a GPU; the
#: README's "Moments engine" table): (arch, convolutional) → (s, width, batch, layers).
GPU_PER_NETWORK = {
    ("vanilla", False): (0.053, 512, 64, 200),
    ("bn_ff", False): (0.069, 512, 64, 200),
    ("bn_res", False): (0.24, 512, 64, 1000),
    ("bn_ff", True): (1.2, 512, 64, 200),
}
#: Each engine chapter's architecture and layers per unit of its ``depth`` parameter.
ENGINE_ARCH = {"03": ("vanilla", 1), "04": ("bn_ff", 1), "05": ("bn_res", 2)}


def gpu_network_seconds(chapter: str, width: int, batch: int, depth: int, conv: bool) -> float:
    """Projected seconds per network on one H100: the measured :data:`GPU_PER_NETWORK` row of the
    chapter's architecture (convolutional nets: the measured BN feedforward convolutional row,
    the only one), scaled by width² · batch · layers."""
    arch, per_unit = ENGINE_ARCH[chapter]
    s, w0, b0, l0 = GPU_PER_NETWORK[("bn_ff", True) if conv else (arch, False)]
    return s * (width / w0) ** 2 * (batch / b0) * (depth * per_unit / l0)


#: Seconds per paper-scale convolutional network (BN feedforward, 3×3, N = 512, B = 64, 200
#: layers) on ONE core of this machine: twice the 112.8 s per network of a whole run with two
#: workers on its two cores (``benchmarks/bench_moments.py``; the README's engine table).
CPU_CONV_PER_NETWORK = (2 * 112.8, 512, 64, 200)


def cpu_network_seconds(
    chapter: str, width: int, batch: int, depth: int, conv: bool, dense_per_size: float
) -> float:
    """Projected seconds per network on one CPU core: a fully-connected network costs
    ``dense_per_size`` (this run's measured seconds per width² · batch · layer) times its size; a
    convolutional one :data:`CPU_CONV_PER_NETWORK` scaled by width² · batch · layers (the dense
    model would put a paper conv network at a fraction of a second instead of minutes)."""
    _, per_unit = ENGINE_ARCH[chapter]
    layers = depth * per_unit
    if conv:
        s, w0, b0, l0 = CPU_CONV_PER_NETWORK
        return s * (width / w0) ** 2 * (batch / b0) * (layers / l0)
    return dense_per_size * width**2 * batch * layers


def project_gpu(measured: dict) -> dict:
    """Projected wall time of Chapters 3–5's engine blocks at ``paper`` on k GPU workers, from the
    per-network times measured on one H100 (:func:`gpu_network_seconds`) plus this machine's
    measured Dask overhead per unit; Chapter 7's trainings were not measured on a GPU."""
    from layerwise.runner import chapters

    names = {k: v.stem for k, v in chapters(ROOT).items()}
    extra = max(measured["ch04_blocks"]["overhead_per_unit_s"], 0.0)
    out = {}
    for key in ENGINE_ARCH:
        costs = [
            n * gpu_network_seconds(key, w, b, d, conv) + extra
            for n, w, b, d, conv in _engine_units(names[key])
        ]
        out[names[key]] = {
            "units": len(costs),
            "kind": "engine blocks",
            "hours": {str(k): makespan(costs, k) / 3600 for k in WORKERS},
        }
    return out


def project(measured: dict, size_name: str) -> dict:
    """Projected wall time (s) of each chapter's units at ``paper`` on k workers."""
    from layerwise.runner import chapters

    names = {k: v.stem for k, v in chapters(ROOT).items()}
    cfg, block = _ch04_cfg(size_name)
    eng = measured["ch04_blocks"]
    # costs from the local run's wall time over its units' total size (each unit's stored
    # wall_time_s is not used: units computed together in one group share their time)
    per_net = eng["local"]["wall_s"] / (cfg.n_sims * cfg.width**2 * cfg.batch * cfg.depth)
    _, _, size = _ch07(size_name)
    cells = measured["ch07_cells"]
    per_size = cells["local"]["wall_s"] / float(np.sum(size))
    out = {}
    for key in ENGINE_ARCH:
        units = _engine_units(names[key])
        extra = max(eng["overhead_per_unit_s"], 0.0)  # a negative measured overhead is noise
        costs = [
            n * cpu_network_seconds(key, w, b, d, conv, per_net) + extra
            for n, w, b, d, conv in units
        ]
        out[names[key]] = {"units": len(units), "kind": "engine blocks", "costs": costs}
    from layerwise.runner import notebook_presets, select

    p = notebook_presets(select(["07"], ROOT)["07"])["paper"]
    depths = list(p["train_depths"]) * p["train_replicates"]
    costs = [
        per_size * p["train_sigmas"] * p["train_steps"] * d * p["train_width"] ** 2
        + max(cells["overhead_per_unit_s"], 0.0)
        for d in depths
    ]
    out[names["07"]] = {"units": len(costs), "kind": "trainability cells", "costs": costs}
    for row in out.values():
        costs = row.pop("costs")
        row["hours"] = {str(k): makespan(costs, k) / 3600 for k in WORKERS}
    return out


def _figure(proj: dict, path: Path, device: str = "cpu") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 10})
    fig, ax = plt.subplots(figsize=(7.0, 3.4), layout="constrained")
    x = np.arange(len(proj))
    for j, k in enumerate(WORKERS):
        ax.bar(
            x + (j - 1) * 0.27,
            [r["hours"][str(k)] for r in proj.values()],
            0.27,
            label=f"{k} worker{'s' if k > 1 else ''}",
        )
    ax.set_yscale("log")
    ax.set_xticks(x, [n[:2] + " " + r["kind"] for n, r in proj.items()], fontsize=10)
    ax.set_ylabel("projected wall time (h)")
    ax.set_title(
        f"paper scale on k {device.upper()} workers (extrapolated from {platform.node()})",
        fontsize=10,
    )
    top = max(r["hours"][str(WORKERS[0])] for r in proj.values())
    ax.set_ylim(top=top * 30)  # room for the legend above the bars (log axis)
    ax.legend(fontsize=10, loc="upper left", ncol=3)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _projection_rows(proj: dict, workers: str) -> list[str]:
    """A markdown table of projected hours at ``paper`` on 1, 8 and 64 ``workers``."""
    rows = [
        "",
        f"| chapter at `paper`, {workers} | units | "
        + " | ".join(f"{k} worker{'s' if k > 1 else ''} (h)" for k in WORKERS)
        + " |",
        "|---|---:|" + "---:|" * len(WORKERS),
    ]
    for name, r in proj.items():
        hours = " | ".join(f"{r['hours'][str(k)]:.2g}" for k in WORKERS)
        rows.append(f"| `{name}` ({r['kind']}) | {r['units']} | {hours} |")
    return rows


def _table(
    measured: dict, proj: dict, load: tuple, size: str, device: str, proj_gpu: dict | None = None
) -> str:
    rows = [
        f"Workloads at size `{size}` on {device.upper()}:",
        "",
        "| workload | units | s per unit | local (s) | Dask, 1 worker (s) | Dask, 2 workers (s) | "
        "overhead | workers' start-up (s) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, m in measured.items():
        rows.append(
            f"| `{name}` | {m['units']} | {m['local']['wall_s'] / m['units']:.2g} | "
            f"{m['local']['wall_s']:.1f} | "
            f"{m['dask1']['wall_s']:.1f} | {m['dask2']['wall_s']:.1f} | "
            f"{100 * m['overhead']:+.0f} % "
            f"({m['overhead_per_unit_s']:+.2f} s/unit) | {m['start_s']:.1f} |"
        )
    rows += _projection_rows(proj, f"{device.upper()} workers")
    if proj_gpu:
        rows += _projection_rows(
            proj_gpu,
            "GPU workers (one H100 each, per-network times measured in a development session)",
        )
    rows.append(
        f"\nMeasured on {platform.node()} ({os.cpu_count()} cores, load average "
        f"{load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f}, shared): noisy, not final."
    )
    return "\n".join(rows) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--size",
        choices=SIZES,
        default="reduced",
        help="workload size: quick (seconds), reduced (a minute) or default (the default "
        "scale's own units: two engine blocks of 32 paper-width networks, four trainability "
        "cells; ≈ 10 minutes on 2 cores)",
    )
    ap.add_argument("--quick", action="store_true", help="same as --size quick")
    ap.add_argument(
        "--reproject",
        action="store_true",
        help="measure nothing: recompute the projections from the saved measurement "
        "(results/bench/dask-<size>-<device>.json)",
    )
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="where the units run")
    a = ap.parse_args()
    size = "quick" if a.quick else a.size
    import torch
    from threadpoolctl import threadpool_limits

    from layerwise import executor as ex

    if a.device == "cuda" and not torch.cuda.is_available():
        ap.error("--device cuda: no CUDA device is visible to torch on this machine")
    stem = OUT / f"dask-{size}-{a.device}"
    if a.reproject:
        if not stem.with_suffix(".json").exists():
            ap.error(f"--reproject: no saved measurement {stem.with_suffix('.json')}")
        saved = json.loads(stem.with_suffix(".json").read_text())
        return _write(stem, saved["measured"], size, a.device, tuple(saved["load_average"]))
    torch.set_num_threads(1)  # as one single-threaded Dask worker
    _warm()
    measured = {}
    for workload in ("ch07_cells", "ch04_blocks"):
        # the local run on one core, as one Dask worker computes: torch's threads (above) and the
        # BLAS/OpenMP pools numpy and torch opened at import (a worker gets OMP_NUM_THREADS=1)
        with threadpool_limits(limits=1):
            m = {"local": _run("local", workload, size, a.device)}
        for n in (1, 2):
            cluster, client, start = _cluster(n)
            try:
                m[f"dask{n}"] = _run("dask", workload, size, a.device, client)
            finally:
                ex._CLIENTS.clear()
                client.close()
                cluster.close()
            m["start_s"] = start if n == 1 else m["start_s"]
        m["units"] = len(m["local"]["unit_s"])
        m["unit_mean_s"] = m["local"]["wall_s"] / m["units"]
        m["overhead"] = m["dask1"]["wall_s"] / m["local"]["wall_s"] - 1
        m["overhead_per_unit_s"] = (m["dask1"]["wall_s"] - m["local"]["wall_s"]) / m["units"]
        measured[workload] = m
        print(workload, {k: v for k, v in m.items() if k not in ("local", "dask1", "dask2")})
    return _write(stem, measured, size, a.device, os.getloadavg())


def _write(stem: Path, measured: dict, size: str, device: str, load: tuple) -> int:
    """The projections from ``measured``, written as ``stem``.json/.png/.md."""
    proj = project(measured, size)
    proj_gpu = project_gpu(measured) if device == "cpu" else None
    OUT.mkdir(parents=True, exist_ok=True)
    stem.with_suffix(".json").write_text(
        json.dumps(
            {
                "machine": platform.node(),
                "cores": os.cpu_count(),
                "load_average": load,
                "size": size,
                "device": device,
                "measured": measured,
                "projected_paper": proj,
                "projected_paper_gpu": proj_gpu,
                "model": "engine: dense nets cost per network x width^2*batch*layers (measured "
                "here), conv nets 225.6 s per paper network per core (README) scaled the same "
                "way, GPU per-network times measured on one H100; ch07: per "
                "sigma*steps*depth*width^2; + Dask overhead per unit; greedy in order on k workers",
            },
            indent=1,
        )
    )
    _figure(proj, stem.with_suffix(".png"), device)
    stem.with_suffix(".md").write_text(_table(measured, proj, load, size, device, proj_gpu))
    print(stem.with_suffix(".md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
