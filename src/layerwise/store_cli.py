"""``python -m layerwise store {list,verify,import DIR}``: inspect and extend the results store."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from .paths import store_root
from .store import ResultsStore


def _entries(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.glob("*/*/meta.json"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m layerwise store", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="list entries with their device and wall time")
    sub.add_parser("verify", help="check every entry against its checksum")
    imp = sub.add_parser("import", help="copy verified entries from another store (e.g. a GPU run)")
    imp.add_argument("source", type=Path, help="a results/store folder computed elsewhere")
    a = p.parse_args(argv)
    root = store_root()
    if a.cmd == "list":
        for d in _entries(root):
            m = json.loads((d / "meta.json").read_text())
            print(
                f"{m['name']:<50} {m['key'][:12]}  {m.get('device', '?'):<6} "
                f"{m.get('wall_time_s', 0):9.1f} s  {m['created']}"
            )
        return 0
    src = root if a.cmd == "verify" else a.source
    if not src.is_dir():
        print(
            f"error: source={src} is not a results-store folder (expected <name>/<key>/meta.json)",
            file=sys.stderr,
        )
        return 2
    bad = 0
    for d in _entries(src):
        problem = ResultsStore._validate(
            d, json.loads((d / "meta.json").read_text()).get("key", "")
        )
        if problem is not None or d.name != json.loads((d / "meta.json").read_text()).get("key"):
            print(f"corrupt: {d} ({problem or 'folder name is not its key'})", file=sys.stderr)
            bad += 1
            continue
        if a.cmd == "import":
            dest = root / d.parent.name / d.name
            if not dest.exists():
                shutil.copytree(d, dest)
                print(f"imported {d.parent.name}/{d.name[:12]}")
    print(f"{len(_entries(src))} entries, {bad} corrupt")
    return 1 if bad else 0
