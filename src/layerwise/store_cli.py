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
    """The entry folders (``<name>/<key>/`` with a ``meta.json``) of the store at ``root``."""
    return sorted(p.parent for p in root.glob("*/*/meta.json"))


def main(argv: list[str] | None = None) -> int:
    """List the store's entries, or verify them (or those of ``import``'s source, copying the
    sound ones in): 1 when one is corrupt, 2 when the source is not a results-store folder."""
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
            print(f"{m['name']:<50} {m['key'][:12]}  {m.get('device', '?'):<6} "
                  f"{m.get('wall_time_s', 0):9.1f} s  {m['created']}")
        return 0
    src = root if a.cmd == "verify" else a.source
    if not src.is_dir():
        expected = "expected <name>/<key>/meta.json"
        print(f"error: source={src} is not a results-store folder ({expected})", file=sys.stderr)
        return 2
    bad = 0
    for d in _entries(src):
        key = json.loads((d / "meta.json").read_text()).get("key", "")
        problem = ResultsStore._validate(d, key)
        if problem is not None or d.name != key:
            print(f"corrupt: {d} ({problem or 'folder name is not its key'})", file=sys.stderr)
            bad += 1
        elif a.cmd == "import" and not (root / d.parent.name / d.name).exists():
            shutil.copytree(d, root / d.parent.name / d.name)
            print(f"imported {d.parent.name}/{d.name[:12]}")
    print(f"{len(_entries(src))} entries, {bad} corrupt")
    return 1 if bad else 0
