"""tables.grouped_frame: Estimates fill a mean and a standard-error column, numbers one."""

import math

import numpy as np
import pytest

from layerwise.params import ParameterError
from layerwise.stats import Estimate
from layerwise.tables import grouped_frame


def test_estimates_fill_two_columns_and_numbers_one():
    T = grouped_frame(
        {1: [Estimate(1.02, 0.018, 7, 8), 1.0, Estimate(1.98, 0.047, 22, 24), 2.0],
         3: [Estimate(0.95, None, None, 1), 51.5, None, 2.0]},
        {"density": ("ours", "± s.e.", "Montúfar max."), "growth": ("ours", "± s.e.", "H&R")},
        "depth",
    )
    assert list(T.index) == [1, 3] and T.index.name == "depth"
    assert list(T.columns) == [("density", "ours"), ("density", "± s.e."),
                               ("density", "Montúfar max."), ("growth", "ours"),
                               ("growth", "± s.e."), ("growth", "H&R")]
    assert list(T.loc[1, "density"]) == [1.02, 0.018, 1.0]
    assert T.loc[3, ("density", "ours")] == 0.95 and math.isnan(T.loc[3, ("density", "± s.e.")])
    assert np.isnan(T.loc[3, ("growth", "ours")]) and T.loc[3, ("growth", "H&R")] == 2.0


def test_tuple_labels_make_a_multiindex_and_a_short_row_is_refused():
    T = grouped_frame({(2, "96–384"): [Estimate(1.0, 0.1, 9, 10)]}, {"a": ("ours", "± s.e.")},
                      ["depth", "N graded"])
    assert list(T.index) == [(2, "96–384")] and list(T.index.names) == ["depth", "N graded"]
    with pytest.raises(ParameterError, match="fills 1 columns, the table has 2"):
        grouped_frame({1: [1.0]}, {"a": ("ours", "± s.e.")}, "depth")
