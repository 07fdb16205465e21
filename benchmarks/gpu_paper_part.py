"""One prepared run for a lent GPU (issue #47 item 3): the CUDA tests, then Chapter 5's paper-width
convolutional ResNets (Fig. 5: 3×3 periodic, N = 512, B = 64, 500 units of 2 layers) — as many
networks as the time left allows — into a results store that a CPU run of the chapter reads.

The networks go through :meth:`layerwise.chapter.Chapter.simulate_moments` with the configuration
Chapter 5 builds (``fig5_conv``) from the chapter's own ``SCALES`` table (read as data, as the
runner reads it) and the overrides ``--set``, so the store key is the one the notebook computes
(the device is not part of the key).  Afterwards, on the CPU::

    mkdir -p /tmp/gpu && tar -xf store.tar -C /tmp/gpu
    python -m layerwise store import /tmp/gpu/store        # verified against their checksums
    make chapter CH=05 SCALE=paper DEVICE=cpu P='… conv_nets=N …'   # the same overrides

reads those blocks from the store and computes the rest of the chapter on the CPU (``P`` must
give every value the run used: the default scale's, with ``--set``'s and ``conv_nets`` as the
summary reports them).

    python benchmarks/gpu_paper_part.py --out DIR --budget SECONDS [--patches-sha256 HEX]
        [--set key=value ...] [--tests]

The number of networks is chosen, in multiples of the cached block, from a pilot (a few networks
through 50 units, timed after a warm-up) so that the run ends inside ``--budget`` seconds
counted from the script's start; the pilot's numbers, the choice and the measured time per network
go to ``DIR/summary.json``.  ``--patches-sha256`` stops the run before any network if this
machine's photographs give other input patches than the CPU's (the key names the data set, not its
bytes).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import platform
import subprocess
import sys
import tarfile
import time
import traceback
from dataclasses import replace
from pathlib import Path

T0 = time.perf_counter()
ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = {"04": "04_bn_exploding_sensitivity", "05": "05_resnet_power_laws"}


def scales(name: str) -> dict:
    """A chapter's ``SCALES`` table, read as data (as :mod:`layerwise.runner` reads it)."""
    notebook = ROOT / "notebooks" / f"{name}.py"
    tree = ast.parse(notebook.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "SCALES":
            return ast.literal_eval(node.value)
    raise SystemExit(f"no SCALES table in {notebook}")


def parse_set(items: list[str], table: dict) -> dict:
    """``key=value`` overrides, each key one of the paper scale's and its value a literal."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or key not in table:
            raise SystemExit(f"--set {item!r}: expected key=value with key one of {sorted(table)}")
        out[key] = ast.literal_eval(value)
    return out


def chapter_plan(chapter: str, params: dict, device: str) -> list:
    """The runs of ``chapter``'s paper-width convolutional nets as its notebook builds them:
    ``(name, MomentsConfig, block, share of the networks)``, the main run first."""
    from layerwise.controls import compared_inputs
    from layerwise.moments import MomentsConfig

    if chapter == "05":
        base = MomentsConfig(arch="bn_res", kernel_size=1, width=params["width"],
                             batch=params["batch"], depth=params["depth"],
                             res_depth=params["res_depth"], dataset=params["dataset"],
                             n_sims=params["n_nets"], records=params["records"], seed=0,
                             device=device, reff_locations=("loc3",))
        conv = replace(base, kernel_size=3, width=params["conv_width"],
                       batch=params["conv_batch"], depth=params["conv_depth"],
                       records=min(params["records"], params["conv_depth"]),
                       n_sims=params["conv_nets"])
        return [("fig5_conv", conv, params["block"], 1.0)]
    base = MomentsConfig(arch="bn_ff", kernel_size=1, width=params["width"],
                         batch=params["batch"], depth=params["depth"],
                         dataset=params["dataset"], n_sims=params["n_nets"],
                         records=params["depth"], seed=0, device=device,
                         reff_locations=("loc1", "loc4"))
    conv = replace(base, kernel_size=3, width=params["conv_width"], batch=params["conv_batch"],
                   n_sims=params["conv_nets"], depth=params["conv_depth"],
                   records=params["conv_depth"] // 8, reff_locations=("loc1", "loc4"))
    other = compared_inputs(params["dataset"])[1]
    return [("fig4_conv", conv, 2, 1.0),
            (f"fig4_conv_{other}", replace(conv, dataset=other), 2, 0.5)]


def sync() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def log(out: Path, msg: str) -> None:
    line = f"[{time.perf_counter() - T0:7.1f} s] {msg}"
    print(line, flush=True)
    with open(out / "run.log", "a") as f:
        f.write(line + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--budget", type=float, required=True, help="seconds for the whole script")
    ap.add_argument("--results", type=Path, default=Path("/tmp/gpu-results"))
    ap.add_argument("--patches-sha256", default=None)
    ap.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE")
    ap.add_argument("--tests", action="store_true", help="run the engine's CUDA tests first")
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--chapter", choices=sorted(NOTEBOOKS), default="05")
    ap.add_argument("--max-nets", type=int, default=96)
    ap.add_argument("--pilot-units", type=int, default=50)
    args = ap.parse_args()
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    summary: dict = {"argv": sys.argv[1:], "machine": platform.platform()}

    import numpy as np
    import torch

    summary["versions"] = {"python": platform.python_version(), "torch": torch.__version__,
                           "numpy": np.__version__}
    if torch.cuda.is_available():
        summary["gpu"] = torch.cuda.get_device_name(0)
    log(out, f"torch {torch.__version__}, cuda {torch.cuda.is_available()}, "
             f"{summary.get('gpu', 'no GPU')}")

    if args.tests:
        t = time.perf_counter()
        with open(out / "cuda_tests.log", "w") as f:
            try:
                rc = subprocess.run(
                    [sys.executable, "-m", "pytest", "tests/test_moments.py", "-k", "cuda", "-q",
                     "-p", "no:cacheprovider", "-rs"],
                    cwd=ROOT, stdout=f, stderr=subprocess.STDOUT,
                    timeout=max(30.0, 0.3 * args.budget)).returncode
            except subprocess.TimeoutExpired:
                rc = "timeout"
        summary["cuda_tests"] = {"returncode": rc, "seconds": round(time.perf_counter() - t, 1)}
        log(out, f"CUDA tests: rc {rc} in {time.perf_counter() - t:.0f} s "
                 f"(tail: {(out / 'cuda_tests.log').read_text().strip().splitlines()[-1:]})")

    from layerwise import data
    from layerwise.chapter import Chapter
    from layerwise.moments import simulate

    sha = hashlib.sha256(data.natural_patches(256, seed=0).tobytes()).hexdigest()
    summary["patches_sha256"] = sha
    if args.patches_sha256 and sha != args.patches_sha256:
        log(out, f"input patches differ from the CPU's ({sha} ≠ {args.patches_sha256}): stop")
        (out / "summary.json").write_text(json.dumps(summary, indent=1))
        return 2

    name = NOTEBOOKS[args.chapter]
    table = scales(name)
    params = {**table["default"], **parse_set(args.set, table["paper"])}
    summary["params"] = params
    ch = Chapter(name, scale="paper", seed=0, device=args.device, params=params,
                 results=args.results)
    plan = chapter_plan(args.chapter, params, ch.device)
    # pilot: one block of the main run through a few layers (warm-up first), extrapolated
    main_name, conv, block, share = plan[0]
    pilot_units = min(args.pilot_units, conv.depth)
    pilot = replace(conv, depth=pilot_units, records=max(1, conv.records * pilot_units
                                                          // conv.depth), seed=12345)
    simulate(replace(pilot, depth=2, records=1), sims=range(2), progress=False)
    sync()
    t = time.perf_counter()
    simulate(pilot, sims=range(block), progress=False)
    sync()
    t_net = (time.perf_counter() - t) * conv.depth / pilot_units / block
    left = args.budget - (time.perf_counter() - T0) - 30.0   # 30 s for packing up
    # networks of the main run: a multiple of `step`, the others following by their share
    step = max(block, *(round(b / f) for _, _, b, f in plan))
    per_step = step * sum(f for *_, f in plan) * t_net
    n = step * min(int(left // (1.15 * per_step)), args.max_nets // step)
    summary["pilot"] = {"layers": pilot_units, "networks": block,
                        "projected_s_per_network": round(t_net, 3), "seconds_left": round(left)}
    log(out, f"pilot: {main_name} ≈ {t_net:.2f} s per network at {conv.depth} layers; "
             f"{left:.0f} s left → {n} networks")
    if n < 1:
        (out / "summary.json").write_text(json.dumps(summary, indent=1))
        return 3
    summary["conv_nets"] = n
    for run_name, cfg, b, f in plan:
        cfg = replace(cfg, n_sims=max(2, round(n * f)))
        t = time.perf_counter()
        ch.simulate_moments(run_name, cfg, block=b)
        dt = time.perf_counter() - t
        summary[run_name] = {"networks": cfg.n_sims, "block": b, "seconds": round(dt, 1),
                             "s_per_network": round(dt / cfg.n_sims, 3),
                             "config": cfg.to_dict()}
        log(out, f"{run_name}: {cfg.n_sims} networks in {dt:.0f} s "
                 f"({dt / cfg.n_sims:.2f} s each)")
    with tarfile.open(out / "store.tar", "w") as tar:
        tar.add(args.results / "store", arcname="store")
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
    log(out, f"store packed ({(out / 'store.tar').stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:
        traceback.print_exc()
        sys.exit(1)
