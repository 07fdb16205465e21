"""Whole-book build time per scale (SPEC §3): every chapter executed cold (empty results store),
then again warm (every simulation from the store, as after a prose edit), then the HTML build.

    .venv/bin/python benchmarks/bench_book.py [--scales ci default]

Writes results/bench/book.json and results/bench/book.png. The executed notebooks and results
of the benchmark go to a temporary folder, so the book's own results are left alone.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scales", nargs="+", default=["ci"], choices=["ci", "default", "paper"])
    ap.add_argument("--chapters", nargs="*", default=[])
    a = ap.parse_args()
    from layerwise.render import build_html
    from layerwise.runner import run_chapter, select
    from layerwise.store import versions

    out = {
        "machine": versions()["machine"],
        "processor": platform.processor() or platform.machine(),
        "versions": versions(),
        "scales": {},
    }
    for scale in a.scales:
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["LAYERWISE_RESULTS"] = str(Path(tmp) / "results")
            rows = {}
            for key, nb in select(a.chapters, ROOT).items():
                t = {}
                for phase in ("cold", "warm"):
                    t0 = time.perf_counter()
                    run_chapter(
                        key,
                        nb,
                        scale=scale,
                        root=ROOT,
                        executed_dir=Path(tmp) / "executed",
                        timeout=None,
                    )
                    t[phase] = time.perf_counter() - t0
                rows[nb.stem] = t
                print(
                    f"{scale:8s} {nb.stem:32s} cold {t['cold']:7.1f} s   warm {t['warm']:6.1f} s",
                    flush=True,
                )
            del os.environ["LAYERWISE_RESULTS"]
        t0 = time.perf_counter()
        build_html(ROOT)
        html = time.perf_counter() - t0
        out["scales"][scale] = {
            "chapters": rows,
            "cold_total_s": sum(r["cold"] for r in rows.values()),
            "warm_total_s": sum(r["warm"] for r in rows.values()),
            "html_build_s": html,
        }
        print(
            f"{scale}: cold {out['scales'][scale]['cold_total_s']:.0f} s, warm "
            f"{out['scales'][scale]['warm_total_s']:.0f} s, html {html:.0f} s"
        )
    dest = ROOT / "results" / "bench"
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "book.json").write_text(json.dumps(out, indent=1))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from layerwise.plotting import set_style

    set_style()
    fig, axes = plt.subplots(
        1, len(out["scales"]), figsize=(6 * len(out["scales"]), 4), squeeze=False
    )
    for ax, (scale, res) in zip(axes[0], out["scales"].items()):
        names = list(res["chapters"])
        x = np.arange(len(names))
        ax.bar(
            x - 0.2, [res["chapters"][n]["cold"] for n in names], 0.4, label="cold (empty store)"
        )
        ax.bar(
            x + 0.2, [res["chapters"][n]["warm"] for n in names], 0.4, label="warm (from the store)"
        )
        ax.set_xticks(x, [n[:2] for n in names])
        ax.set(
            xlabel="chapter",
            ylabel="wall time (s)",
            title=f"{scale}: cold {res['cold_total_s']:.0f} s, warm {res['warm_total_s']:.0f} "
            f"s, HTML {res['html_build_s']:.0f} s",
        )
        ax.legend()
    fig.suptitle(f"Book build time per chapter — {out['machine']}")
    fig.savefig(dest / "book.png")
    print("wrote", dest / "book.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
