"""The shape of a chapter notebook: its code lines by kind and its longest code cell.

A chapter reads narrative → parameters → one call → one figure → claims (``CONTRIBUTING.md``).
Claim declarations and figure calls with their captions are chapter text; what should stay small is
everything else — the computation, tables and glue a chapter still does itself.  The counts are
lines of code by the kind of statement they belong to (:func:`statement_kind`), nothing more:
``python -m layerwise book shape`` prints the table; ``tests/test_shape.py`` holds every code cell
to :data:`MAX_CELL_LINES`.
"""

from __future__ import annotations

import ast
from collections import Counter
from contextlib import suppress
from pathlib import Path

KINDS = ("claims", "figures", "glue", "parameters", "imports", "computation")
#: The longest code cell a chapter may have (issue #16: "no code cell over ~25 lines").
MAX_CELL_LINES = 25
#: The kind of a statement that calls a function or method of this name (``ch.claim(...)``).
CALLED = {"claim": "claims", "figure": "figures", "glue": "glue", "glue_all": "glue"}


def statement_kind(node: ast.stmt) -> str:
    """The kind (one of :data:`KINDS`) of one simple statement of a code cell: ``ch.claim(...)`` is
    a claim, ``ch.figure(...)`` a figure, ``ch.glue``/``ch.glue_all`` glue; the ``SCALES`` table and
    the lines that resolve the parameters or open the ``Chapter`` are parameters."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if called in CALLED:
            return CALLED[called]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return "imports"
    if isinstance(node, ast.Assign):
        text = ast.unparse(node.value)
        if any(isinstance(t, ast.Name) and t.id == "SCALES" for t in node.targets) or (
            "resolve_from(" in text or text.startswith("Chapter(")
        ):
            return "parameters"
    return "computation"


def _block_shape(body: list[ast.stmt], start: int, out: Counter) -> None:
    """Add the lines ``start``… of the statements ``body`` to ``out`` by kind. A loop, ``if``,
    ``with`` or function the chapter defines is split: its header lines are computation, its body
    counted statement by statement (a loop of claims counts as claims). Comment lines count with
    the statement that follows them."""
    for node in body:
        blocks = [b for b in (getattr(node, "body", None), getattr(node, "orelse", None)) if b]
        if isinstance(node, (ast.For, ast.While, ast.If, ast.With, ast.FunctionDef)) and blocks:
            out["computation"] += blocks[0][0].lineno - start
            _block_shape(blocks[0], blocks[0][0].lineno, out)
            for b in blocks[1:]:  # after the ``else:`` line
                out["computation"] += 1
                _block_shape(b, b[0].lineno, out)
        else:
            out[statement_kind(node)] += (node.end_lineno or node.lineno) - start + 1
        start = (node.end_lineno or node.lineno) + 1


def cell_shape(source: str) -> Counter:
    """Lines of one code cell by kind (a cell that does not parse counts as computation)."""
    out: Counter = Counter()
    with suppress(SyntaxError):  # then every line is computation
        _block_shape(ast.parse(source).body, 1, out)
    out["computation"] += len(source.splitlines()) - sum(out.values())  # trailing comments
    return out


def notebook_shape(path: Path) -> dict[str, int]:
    """Code lines of a jupytext ``.py`` chapter by kind (:data:`KINDS`; the cell tagged
    ``parameters`` counts as parameters), plus ``cells``, ``code`` (all code lines) and ``longest``
    (lines of the longest cell, not counting the scale table and the lines that resolve the
    parameters: data, not computation)."""
    import jupytext

    cells = [c for c in jupytext.read(path).cells if c.cell_type == "code"]
    total: Counter = Counter()
    sizes = []  # a cell's length for the limit: less the scale table's (data, not code)
    for cell in cells:
        n, shape = len(cell.source.splitlines()), cell_shape(cell.source)
        papermill = "parameters" in cell.metadata.get("tags", [])  # that cell, whatever it holds
        total.update(Counter(parameters=n) if papermill else shape)
        sizes.append(n - shape["parameters"])
    return {**{k: int(total[k]) for k in KINDS}, "cells": len(cells), "code": sum(
        len(c.source.splitlines()) for c in cells), "longest": max(sizes, default=0)}


def shape_table(root: Path) -> list[dict[str, object]]:
    """:func:`notebook_shape` of every chapter under ``root/notebooks``, with its ``chapter``."""
    chapters = sorted((root / "notebooks").glob("[0-9][0-9]_*.py"))
    return [{"chapter": p.stem, **notebook_shape(p)} for p in chapters]
