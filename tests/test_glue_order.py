"""Chapters read top to bottom (issue #45 item 3): every {glue} hole in a markdown cell is glued
by a code cell above it, so a reader of the notebook's source meets each number after the cell
that computes it. Where each name is glued is read statically (tests/glue_order.py); the checks
below show that each way of gluing a name is recognised and that a late or missing name is found.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from glue_order import late_glues, notebook_cells

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted(p for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py"))


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.name[:2] for p in CHAPTERS])
def test_every_glued_name_is_glued_above_the_prose_that_quotes_it(path):
    assert late_glues(notebook_cells(path)) == []


def md(text):
    return ("markdown", text)


def code(text):
    return ("code", text)


def test_a_name_glued_below_its_prose_is_found():
    cells = [md("The slope is {glue}`slope`."), code('ch.glue("slope", 0.5)')]
    assert late_glues(cells) == ["cell 0 quotes 'slope' glued only in cell 1 (below)"]
    assert late_glues(cells[::-1]) == []


def test_a_name_no_cell_glues_is_found():
    cells = [code('ch.glue("slope", 0.5)'), md("The slope is {glue}`slop`.")]
    assert late_glues(cells) == ["cell 1 quotes 'slop', which no cell glues"]


@pytest.mark.parametrize(
    "source, name",
    [
        ('ch.glue("a", 1)', "a"),
        ('ch.glue_math("a", "$x$")', "a"),
        ('ch.glue_all({"b": 1, "a": 2})', "a"),
        ('ch.glue_all({"b": 1} | {f"a_{t}": 2 for t in T})', "a_init"),
        ('ch.glue_all({"b": 1, **{f"{k}_p": 2 for k in ("a", "c")}})', "a_p"),
        ('ch.glue_all({k: v for k, v in {"a": 1, "b": 2}.items()})', "a"),
        ('for name in ("a", "b"):\n    ch.glue(name, 1)', "a"),
        ('for split, x in (("a", 1), ("b", 2)):\n    ch.glue(f"mlp_{split}_acc", x)', "mlp_a_acc"),
        ('ch.table(frame, "A caption.", name="a")', "a"),
        ("ch.glue_outcomes()", "found_outcomes"),
        ('ch.glue_outcomes("a")', "a"),
        ('def show(frame, name):\n    return ch.table(frame, "c", name=name)\nshow(df, "a")', "a"),
        ('def claims(tag, x):\n    ch.glue_all({f"{tag}_late": x})\nclaims("fc", 1)', "fc_late"),
        # a study function that returns a dict display, or a dict filled key by key
        ("ch.glue_all(study.fisher_rao_summary(rows))", "fr_homog_max"),
        ("ch.glue_all(study.capacity_prose_numbers(res, dist, I, T))", "eq25_patch_gap"),
    ],
)
def test_each_way_of_gluing_a_name_is_read(source, name):
    quote = md(f"{{glue}}`{name}` and {{glue:md}}`{name}:myst`")
    assert late_glues([code(source), quote]) == []
    assert late_glues([quote, code(source)]) == [
        f"cell 0 quotes {name!r} glued only in cell 1 (below)"
    ] * 2


def test_a_literal_glue_is_not_hidden_by_a_pattern_or_wildcard_above():
    """A name glued literally below its prose is late even when an f-string or a computed name
    above could match it: the most specific match decides where the name is glued."""
    cells = [
        code('for k in KEYS:\n    ch.glue(f"fix_{k}", 1)\nch.glue_all(values)'),
        md("{glue}`fix_relu`"),
        code('ch.glue("fix_relu", 2)'),
    ]
    assert late_glues(cells) == ["cell 1 quotes 'fix_relu' glued only in cell 2 (below)"]
    defined_above = [
        code('def claims(tag, x):\n    ch.glue(f"{tag}_late", x)\nclaims("fc", 1)'),
        md("{glue}`fc_late` and {glue}`conv_late`"),
        code('claims("conv", 2)'),
    ]
    assert late_glues(defined_above) == ["cell 1 quotes 'conv_late' glued only in cell 2 (below)"]
    wildcard_only = [md("{glue}`anything`"), code("ch.glue_all(values)")]
    assert late_glues(wildcard_only) == ["cell 0 quotes 'anything' glued only in cell 1 (below)"]


def test_a_jupytext_notebook_is_read_in_order(tmp_path):
    path = tmp_path / "09_synthetic.py"
    path.write_text(
        "# %% [markdown]\n# # A chapter\n#\n# The rate is {glue}`rate`.\n\n"
        '# %%\nch.glue("rate", 0.1)\n\n'
        '# %% tags=["remove-cell"]\nch.glue("n", 3)\n\n'
        "# %% [markdown]\n# Over {glue}`n` networks.\n"
    )
    assert late_glues(notebook_cells(path)) == [
        "cell 0 quotes 'rate' glued only in cell 1 (below)"
    ]
