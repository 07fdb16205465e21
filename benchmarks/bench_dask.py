"""The Dask path on one machine, and the book's heavy chapters at ``paper`` on k workers (issue #31)
— not a timed test.

Two workloads go through the executor seam twice, each time into a fresh temporary results
folder (nothing is read from a store): locally (``$LAYERWISE_EXECUTOR=local``, one torch thread,
as one Dask worker has) and on a ``LocalCluster`` of 1 and of 2 single-threaded worker processes:

* ``ch07_cells``: Chapter 7's trainability cells (``studies.ch07.trainability_cell`` through
  ``Chapter.cached_units``) at a reduced size (``--quick`` smaller still);
* ``ch04_blocks``: the moments engine's blocks of Chapter 4's ``ci`` base configuration
  (``Chapter.simulate_moments``), split into blocks of 2 networks.

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

    .venv/bin/python benchmarks/bench_dask.py [--quick]

Writes ``results/bench/dask.json``, ``results/bench/dask.png`` and ``results/bench/dask.md`` (the
README's table).  The machine's load average is recorded: on a shared machine the timings are
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


def _ch07(quick: bool) -> tuple[dict, int, list[float]]:
    """Arguments of Chapter 7's trainability cells at the bench size, their number, and each
    unit's size (σ_w² · steps · depth · width²)."""
    from layerwise.studies import ch07

    x, y = ch07.standardised_digits()
    depths = (4, 8) if quick else (4, 8, 16)
    args = dict(
        x=x[:256],
        y=y[:256],
        sigma_w2s=np.linspace(1.0, 4.0, 3),
        depths=depths,
        seeds=np.arange(2 * len(depths)).reshape(2, len(depths)) + 11,
        sigma_b2=0.05,
        width=32 if quick else 64,
        steps=20 if quick else 60,
        early_steps=10 if quick else 15,
        lr=0.01,
        batch=64,
    )
    n = 2 * len(depths)
    size = [3 * args["steps"] * depths[i % len(depths)] * args["width"] ** 2 for i in range(n)]
    return args, n, size


def _ch04_cfg(quick: bool):
    from layerwise.moments import MomentsConfig
    from layerwise.runner import notebook_presets, select

    ci = notebook_presets(select(["04"], ROOT)["04"])["ci"]
    return MomentsConfig(
        arch="bn_ff",
        kernel_size=1,
        width=ci["width"],
        batch=ci["batch"],
        depth=ci["depth"] // (2 if quick else 1),
        dataset="patches",
        n_sims=4 if quick else 8,
        records=ci["depth"] // (2 if quick else 1),
        seed=0,
        device="cpu",
        reff_locations=("loc1", "loc4"),
    )


def _run(kind: str, workload: str, quick: bool, client=None) -> dict:
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
            device="cpu",
            results=Path(tmp),
        )
        if workload == "ch07_cells":
            from layerwise.studies import ch07

            args, n, _ = _ch07(quick)
        t0 = time.perf_counter()
        if workload == "ch07_cells":
            ch.cached_units(ch07.trainability_cell, n, **args)
        else:
            cfg = _ch04_cfg(quick)
            ch.simulate_moments("bench", cfg, block=2)
        wall = time.perf_counter() - t0
        units = sorted(
            json.loads(m.read_text()).get("wall_time_s", 0.0)
            for m in Path(tmp).rglob("meta.json")
            if ".block" in str(m.parent.parent.name)
        )
    return {"wall_s": wall, "unit_s": units}


def _warm() -> None:
    """Import what the units need (torch, the engine, Chapter 7's study) and load the digits."""
    import layerwise.moments  # noqa: F401
    from layerwise.studies import ch07

    ch07.standardised_digits()


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


def project(measured: dict, quick: bool) -> dict:
    """Projected wall time (s) of each chapter's units at ``paper`` on k workers."""
    from layerwise.runner import chapters

    names = {k: v.stem for k, v in chapters(ROOT).items()}
    cfg = _ch04_cfg(quick)
    eng = measured["ch04_blocks"]
    per_net = np.median(eng["local"]["unit_s"]) / (2 * cfg.width**2 * cfg.batch * cfg.depth)
    _, _, size = _ch07(quick)
    cells = measured["ch07_cells"]
    per_size = float(np.median(np.array(cells["local"]["unit_s"]) / np.sort(size)))
    out = {}
    for key in ("03", "04", "05"):
        units = _engine_units(names[key])
        costs = [per_net * n * w**2 * b * d + eng["overhead_per_unit_s"] for n, w, b, d, _ in units]
        out[names[key]] = {"units": len(units), "kind": "engine blocks", "costs": costs}
    from layerwise.runner import notebook_presets, select

    p = notebook_presets(select(["07"], ROOT)["07"])["paper"]
    depths = list(p["train_depths"]) * p["train_replicates"]
    costs = [
        per_size * p["train_sigmas"] * p["train_steps"] * d * p["train_width"] ** 2
        + cells["overhead_per_unit_s"]
        for d in depths
    ]
    out[names["07"]] = {"units": len(costs), "kind": "trainability cells", "costs": costs}
    for row in out.values():
        costs = row.pop("costs")
        row["hours"] = {str(k): makespan(costs, k) / 3600 for k in WORKERS}
    return out


def _figure(proj: dict, path: Path) -> None:
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
    ax.set_title("paper scale on k CPU workers (extrapolated; loaded 2-core machine)", fontsize=10)
    top = max(r["hours"][str(WORKERS[0])] for r in proj.values())
    ax.set_ylim(top=top * 30)  # room for the legend above the bars (log axis)
    ax.legend(fontsize=10, loc="upper left", ncol=3)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _table(measured: dict, proj: dict, load: tuple) -> str:
    rows = [
        "| workload | units | local (s) | Dask, 1 worker (s) | Dask, 2 workers (s) | overhead | "
        "workers' start-up (s) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, m in measured.items():
        rows.append(
            f"| `{name}` | {m['units']} | {m['local']['wall_s']:.1f} | "
            f"{m['dask1']['wall_s']:.1f} | {m['dask2']['wall_s']:.1f} | "
            f"{100 * m['overhead']:+.0f} % "
            f"({m['overhead_per_unit_s']:+.2f} s/unit) | {m['start_s']:.1f} |"
        )
    rows += [
        "",
        "| chapter at `paper` | units | 1 worker (h) | 8 workers (h) | 64 workers (h) |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, r in proj.items():
        h = r["hours"]
        rows.append(
            f"| `{name}` ({r['kind']}) | {r['units']} | {h['1']:.2g} | {h['8']:.2g} | "
            f"{h['64']:.2g} |"
        )
    rows.append(
        f"\nMeasured on {platform.node()} ({os.cpu_count()} cores, load average "
        f"{load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f}, shared): noisy, not final."
    )
    return "\n".join(rows) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller workloads")
    a = ap.parse_args()
    import torch

    from layerwise import executor as ex

    torch.set_num_threads(1)  # as one single-threaded Dask worker
    _warm()
    measured = {}
    for workload in ("ch07_cells", "ch04_blocks"):
        m = {"local": _run("local", workload, a.quick)}
        for n in (1, 2):
            cluster, client, start = _cluster(n)
            try:
                m[f"dask{n}"] = _run("dask", workload, a.quick, client)
            finally:
                ex._CLIENTS.clear()
                client.close()
                cluster.close()
            m["start_s"] = start if n == 1 else m["start_s"]
        m["units"] = len(m["local"]["unit_s"])
        m["overhead"] = m["dask1"]["wall_s"] / m["local"]["wall_s"] - 1
        m["overhead_per_unit_s"] = (m["dask1"]["wall_s"] - m["local"]["wall_s"]) / m["units"]
        measured[workload] = m
        print(workload, {k: v for k, v in m.items() if k not in ("local", "dask1", "dask2")})
    proj = project(measured, a.quick)
    load = os.getloadavg()
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "dask.json").write_text(
        json.dumps(
            {
                "machine": platform.node(),
                "cores": os.cpu_count(),
                "load_average": load,
                "quick": a.quick,
                "measured": measured,
                "projected_paper": proj,
                "model": "engine: cost per network x width^2*batch*depth; ch07: per "
                "sigma*steps*depth*width^2; + Dask overhead per unit; greedy in order on k workers",
            },
            indent=1,
        )
    )
    _figure(proj, OUT / "dask.png")
    (OUT / "dask.md").write_text(_table(measured, proj, load))
    print((OUT / "dask.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
