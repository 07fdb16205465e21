"""Tables of estimates for the page: each mean beside its standard error, printed with the
scorecard's digits (four significant for a value, two for an error, :func:`layerwise.claims.fmt`
and :func:`layerwise.claims.fmt_se`), so a table and the scorecard row of the same quantity agree.
Shown with :meth:`layerwise.chapter.Chapter.table`."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .claims import significant
from .params import ParameterError
from .stats import Estimate

MEAN, SE = "mean", "± s.e."
"""The two sub-columns :func:`estimates_frame` gives each quantity; :func:`cell` gives a
table cell's pair."""


def cell(value: Estimate | float | None) -> tuple[float, float]:
    """``(mean, standard error)`` of a table cell: an :class:`Estimate`'s, a number's (no error:
    NaN) or a missing value's (NaN, NaN)."""
    if value is None:
        return math.nan, math.nan
    if isinstance(value, Estimate):
        return float(value.mean), math.nan if value.se is None else float(value.se)
    if isinstance(value, (bool, str)) or not isinstance(value, (int, float, np.number)):
        raise ParameterError(
            f"a table cell must be an Estimate, a number or None, not {type(value).__name__}"
        )
    return float(value), math.nan


def estimates_frame(
    rows: Mapping[Any, Mapping[str, Estimate | float | None]], index_name: str | Sequence[str]
) -> pd.DataFrame:
    """A table of estimates: one row per key of ``rows`` (tuples of as many labels as
    ``index_name`` names make a MultiIndex) and, for each quantity of its values (in the order
    they first appear), two columns ``(quantity, "mean")`` and ``(quantity, "± s.e.")`` —
    see :func:`cell`; NaN where a row lacks the quantity."""
    quantities = list(dict.fromkeys(q for row in rows.values() for q in row))
    data: dict[tuple[str, str], list[float]] = {}
    for q in quantities:
        cells = [cell(row.get(q)) for row in rows.values()]
        data[q, MEAN] = [m for m, _ in cells]
        data[q, SE] = [s for _, s in cells]
    if isinstance(index_name, str):
        index = pd.Index(list(rows), name=index_name, tupleize_cols=False)
    else:
        index = pd.MultiIndex.from_tuples(list(rows), names=list(index_name))
    return pd.DataFrame(data, index=index, columns=pd.MultiIndex.from_tuples(list(data)))


def estimate_columns(
    rows: Mapping[str, str],
    columns: Sequence[tuple[str, str | None, Mapping[str, Any]]],
    index: str,
) -> pd.DataFrame:
    """A table of estimates with one column per quantity and its own header for each standard
    error (:func:`estimates_frame` groups them under the quantity instead): one row per key of
    ``rows`` (key → row label, the index named ``index``); per entry ``(header, se_header,
    values)`` of ``columns``, each key's value under ``header`` (:func:`cell`: an Estimate's
    mean, or a number) and, when ``se_header`` is given, its standard error under it (NaN where
    ``values`` lacks the key or the value has no standard error)."""
    headers = [h for h, s, _ in columns] + [s for _, s, _ in columns if s]
    if len(set(headers)) != len(headers):
        raise ParameterError(f"columns: headers {headers} must differ from one another")
    table: dict[str, list[float]] = {}
    for header, se_header, values in columns:
        cells = [cell(values.get(key)) for key in rows]
        table[header] = [m for m, _ in cells]
        if se_header:
            table[se_header] = [e for _, e in cells]
    return pd.DataFrame(table, index=pd.Index(list(rows.values()), name=index))


def estimate_formats(
    table: pd.DataFrame, *, digits: int = 4, se_digits: int = 2, missing: str = "–"
) -> dict[Any, Callable[[Any], str]]:
    """Per column of ``table``, the cell format for :meth:`~layerwise.chapter.Chapter.table`:
    a standard error (a column whose label, or its last level, contains "s.e.") to ``se_digits``
    significant digits, any other number to ``digits``, words as they are, ``missing`` where a
    value is missing (NaN)."""
    for name, d in (("digits", digits), ("se_digits", se_digits)):
        if not isinstance(d, int) or d < 1:
            raise ParameterError(f"{name}={d!r} must be an integer >= 1")

    def printer(d: int) -> Callable[[Any], str]:
        def show(v: Any) -> str:
            if isinstance(v, str):
                return v
            return significant(float(v), d) if np.isfinite(v) else missing

        return show

    def is_se(col: Any) -> bool:
        return "s.e." in str(col[-1] if isinstance(col, tuple) else col)

    return {col: printer(se_digits if is_se(col) else digits) for col in table.columns}


def grouped_frame(
    rows: Mapping[Any, Sequence[Estimate | float | None]],
    columns: Mapping[str, Sequence[str]],
    index_name: str | Sequence[str],
) -> pd.DataFrame:
    """A table whose columns come in groups (``columns``: each group's header → its
    sub-columns, left to right) and whose rows (``rows``: label → cells, left to right) hold
    Estimates, each filling two sub-columns (its mean and its standard error, :func:`cell`; None:
    a missing one, two NaN) and plain numbers, filling one.  Tuple labels with a sequence of
    ``index_name`` make a MultiIndex."""
    cols = pd.MultiIndex.from_tuples([(g, sub) for g, subs in columns.items() for sub in subs])
    data = []
    for label, cells in rows.items():
        row = [v for c in cells for v in (cell(c) if c is None or isinstance(c, Estimate)
                                          else (float(c),))]
        if len(row) != len(cols):
            raise ParameterError(
                f"row {label!r} fills {len(row)} columns, the table has {len(cols)}"
            )
        data.append(row)
    if isinstance(index_name, str):
        index = pd.Index(list(rows), name=index_name, tupleize_cols=False)
    else:
        index = pd.MultiIndex.from_tuples(list(rows), names=list(index_name))
    return pd.DataFrame(data, index=index, columns=cols)
