"""One verdict rule (SPEC §1): only the ledger grades an interval or a sign.

A chapter must not compare a measured value with a threshold (or with another measured value) to
choose its words or an outcome: sentences whose direction depends on the run are worded from the
ledger (``ch.verdict``) or from :meth:`layerwise.stats.Estimate.side`/``sign`` (the ledger's
interval rule). Every ordering comparison (<, >, <=, >=) in a notebook's code is therefore
refused unless its line says why it is not a verdict — ``# not a verdict: <reason>`` (a loop's
geometry, a parameter's range, a plotting choice)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MARK = re.compile(r"#\s*not a verdict:\s*\S")
ORDERING = (ast.Lt, ast.Gt, ast.LtE, ast.GtE)


def ordering_comparisons(source: str) -> list[tuple[int, str]]:
    """``[(line, code)]`` of every ordering comparison in ``source`` whose lines carry no
    ``# not a verdict: <reason>`` mark."""
    lines = source.splitlines()
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and any(isinstance(op, ORDERING) for op in node.ops):
            span = lines[node.lineno - 1 : (node.end_lineno or node.lineno)]
            if not any(MARK.search(line) for line in span):
                out.append((node.lineno, ast.unparse(node)))
    return sorted(out)


def test_the_scan_finds_a_threshold_verdict_and_accepts_a_marked_loop():
    src = (
        "lo, hi = e.bounds()\n"
        "ch.glue('v', 'grows' if lo > 0 else 'does not grow')\n"
        "words = 'rises' if (\n    slope.mean\n    > 1) else 'falls'\n"
        "for d in range(9):\n    if d > 1:  # not a verdict: the grid's geometry\n        pass\n"
        "x = a < b  # not a verdict\n"  # a mark needs its reason
    )
    found = ordering_comparisons(src)
    assert [line for line, _ in found] == [2, 4, 9]
    assert found[0][1] == "lo > 0"


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py")),
                         ids=lambda p: p.stem)
def test_no_chapter_grades_an_estimate_itself(path):
    found = ordering_comparisons(path.read_text(encoding="utf-8"))
    assert not found, (
        f"{path.name} compares values itself (only the ledger grades; word the sentence with "
        "ch.verdict or Estimate.side/sign, or mark a comparison that is no verdict with "
        "'# not a verdict: <reason>'):\n" + "\n".join(f"  line {n}: {c}" for n, c in found)
    )


def test_studies_keep_no_verdict_helpers():
    """Studies return numbers; the words of a verdict come from the ledger."""
    names = []
    for path in sorted((ROOT / "src" / "layerwise" / "studies").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and (
                node.name.endswith("_verdict") or node.name == "sign_of"
            ):
                names.append(f"{path.stem}.{node.name}")
    assert not names, f"verdicts decided in studies: {names}"
