"""The chapter-shape counter against cells whose lines are counted by hand."""

from __future__ import annotations

from pathlib import Path

from layerwise.shape import KINDS, MAX_CELL_LINES, cell_shape, notebook_shape, shape_table

CELL = '''\
import numpy as np
from layerwise.chapter import Chapter
SCALES = {
    "ci": dict(n=2),
}
P = resolve_from(SCALES, scale, globals())
ch = Chapter("42_demo", scale=scale, seed=seed, params=P)
# an estimate
x = np.arange(P["n"])
ch.claim("a", "statement",
         measured=x.mean(), reference=0.5, tol=0.1)
for t in (1, 2):
    e = x * t
    ch.claim(f"b{t}", "statement", measured=e.mean())
for k in ("u", "v"):
    ch.glue(k, 1.0)
ch.glue_all({"w": 2.0})
if x.size > 1:
    y = 1
else:
    ch.glue("z", 3.0)
ch.figure(fig, "name", "caption",
          arrays={})
def claims(t):
    """Docstring."""
    ch.claim(f"c{t}", "statement", measured=t)
    return t
# trailing comment
'''


def test_cell_lines_are_counted_by_kind():
    got = cell_shape(CELL)
    # imports 2; parameters: SCALES (3) + resolve_from (1) + Chapter (1); computation:
    # comment + x (2), both loop headers (2), e = … (1), the if header, y = 1, else (3), trailing
    # comment (1); claims 2 + 1; glue 1 + 1 + 1; figure 2
    # the function: its header and docstring (2) and return (1) are computation, its claim a claim
    assert dict(got) == {
        "imports": 2,
        "parameters": 5,
        "computation": 12,
        "claims": 4,
        "glue": 3,
        "figures": 2,
    }
    assert sum(got.values()) == len(CELL.splitlines())


def test_a_cell_that_does_not_parse_is_computation():
    assert dict(cell_shape("x = (\n")) == {"computation": 1}


def test_notebook_shape_sums_cells_and_finds_the_longest(tmp_path: Path):
    nb = tmp_path / "notebooks" / "42_demo.py"
    nb.parent.mkdir()
    nb.write_text(
        '# %% [markdown]\n# # Title\n\n# %% tags=["parameters"]\nscale = "ci"\nx = 1 + '
        "1\n\n# %%\n" + CELL + "\n# %%\nch.finish()\n"
    )
    (row,) = shape_table(tmp_path)
    assert row["chapter"] == "42_demo" and row["cells"] == 3
    # the longest cell's length leaves out its scale table and parameter lines (data)
    assert row["code"] == len(CELL.splitlines()) + 3
    assert row["longest"] == len(CELL.splitlines()) - cell_shape(CELL)["parameters"]
    assert (
        row["parameters"] == 5 + 2 and row["computation"] == 12 + 1
    )  # the parameters cell, whatever it holds
    assert sum(row[k] for k in KINDS) == row["code"]
    assert notebook_shape(nb) == {k: v for k, v in row.items() if k != "chapter"}


def test_every_chapter_keeps_its_code_cells_short():
    root = Path(__file__).resolve().parents[1]
    rows = shape_table(root)
    assert len(rows) == 8
    long = {r["chapter"]: r["longest"] for r in rows if int(r["longest"]) > MAX_CELL_LINES}
    assert not long, (
        f"code cells over {MAX_CELL_LINES} lines (move the computation into the package): {long}"
    )


def test_the_book_cli_prints_the_table(capsys):
    from layerwise import book

    assert book.main(["shape"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["chapter", *KINDS, "code", "cells", "longest"]
    assert len(out) == 1 + 8 + 1 and out[-1].startswith("total")
    rows = [line.split() for line in out[1:]]
    assert [int(v) for v in rows[-1][1:-1]] == [
        sum(int(r[i]) for r in rows[:-1]) for i in range(1, len(rows[0]) - 1)
    ]
