"""Tables of estimates (layerwise.tables): each mean beside its standard error, the scorecard's
digits."""

import math

import numpy as np
import pandas as pd
import pytest

from layerwise import claims, tables
from layerwise.params import ParameterError
from layerwise.stats import Estimate, estimate


def test_estimates_frame_puts_each_mean_beside_its_standard_error():
    x = np.array([1.0, 2.0, 4.0, 9.0])
    e = estimate(x)
    rows = {
        "patches": {"rank": e, "log₁₀ χ": Estimate(-2.0, 0.5, 3, 4)},
        "digits": {"rank": Estimate(3.0, None, 0, 1), "Gaussian value": 3.0},
    }
    T = tables.estimates_frame(rows, "data")
    assert list(T.index) == ["patches", "digits"] and T.index.name == "data"
    assert list(T.columns) == [
        ("rank", "mean"),
        ("rank", "± s.e."),
        ("log₁₀ χ", "mean"),
        ("log₁₀ χ", "± s.e."),
        ("Gaussian value", "mean"),
        ("Gaussian value", "± s.e."),
    ]
    assert T.loc["patches", ("rank", "mean")] == pytest.approx(x.mean())
    assert T.loc["patches", ("rank", "± s.e.")] == pytest.approx(x.std(ddof=1) / 2)
    assert math.isnan(T.loc["digits", ("rank", "± s.e.")])  # one network: no error
    assert math.isnan(T.loc["patches", ("Gaussian value", "mean")])  # not in that row
    assert T.loc["digits", ("Gaussian value", "mean")] == 3.0
    multi = tables.estimates_frame({("a", 1): {"q": 1.0}, ("b", 2): {"q": 2.0}}, ["x", "y"])
    assert multi.index.names == ["x", "y"] and multi.loc[("b", 2), ("q", "mean")] == 2.0
    with pytest.raises(ParameterError, match="Estimate, a number or None"):
        tables.estimates_frame({"r": {"q": "1.0"}}, "row")


def test_estimate_formats_print_the_scorecards_digits():
    T = tables.estimates_frame(
        {"a": {"q": Estimate(0.123456, 0.0012345, 9, 10)}, "b": {"q": None}}, "row"
    )
    T[("note", "")] = ["words", "more"]
    f = tables.estimate_formats(T)
    mean, se = f[("q", "mean")], f[("q", "± s.e.")]
    assert mean(0.123456) == claims.fmt(0.123456) == "0.1235"
    assert se(0.0012345) == claims.fmt_se(0.0012345) == "0.0012"
    assert (
        mean(-2.5) == "−2.5" and mean(float("nan")) == "–" and f[("note", "")]("words") == "words"
    )
    flat = pd.DataFrame({"ours": [1.0], "± s.e. (authors)": [0.123]})
    g = tables.estimate_formats(flat)
    assert g["ours"](1.23456) == "1.235" and g["± s.e. (authors)"](0.123) == "0.12"
    with pytest.raises(ParameterError, match="se_digits"):
        tables.estimate_formats(flat, se_digits=0)


@pytest.mark.parametrize(
    "x, four, two",
    [
        (0.0, "0", "0"),
        (-2.5, "−2.5", "−2.5"),
        (0.123456, "0.1235", "0.12"),
        (12345.6, "12350", "12000"),
        (2.3e-5, "2.3×10⁻⁵", "2.3×10⁻⁵"),
        (-7.77e7, "−7.77×10⁷", "−7.8×10⁷"),
        (0.000999, "9.99×10⁻⁴", "1×10⁻³"),
        (99.99, "99.99", "100"),
    ],
)
def test_significant_digits_as_the_book_prints_them(x, four, two):
    """Rounded and written out in [1e-3, 1e5), m×10ⁿ outside (the prose's form, not 1.7e−04),
    true minus signs, no trailing zeros; the scorecard's fmt/fmt_se are the same function."""
    assert claims.significant(x, 4) == four and claims.fmt(x) == four
    assert claims.significant(x, 2) == two


def test_estimate_columns_put_each_mean_and_standard_error_in_its_row_and_column():
    e = Estimate(0.34971, 0.015963, 23, 24)
    t = tables.estimate_columns(
        {"a": "ReLU", "b": "absolute value", "c": "pooled"},
        [("ν", None, {"a": 0.5, "b": 0.0}), ("ratio", "± s.e.", {"a": e, "c": 0.25})],
        "activation",
    )
    assert list(t.columns) == ["ν", "ratio", "± s.e."] and t.index.name == "activation"
    assert list(t.index) == ["ReLU", "absolute value", "pooled"]
    assert t.loc["ReLU", "ratio"] == e.mean and t.loc["ReLU", "± s.e."] == e.se
    assert t.loc["pooled", "ratio"] == 0.25 and math.isnan(t.loc["pooled", "± s.e."])  # no SE
    assert math.isnan(t.loc["absolute value", "ratio"]) and math.isnan(t.loc["pooled", "ν"])
    # printed as the scorecard prints them: 4 significant digits, the SE to 2, "–" for none
    fmt = tables.estimate_formats(t)
    assert fmt["ratio"](e.mean) == "0.3497" and fmt["± s.e."](e.se) == "0.016"
    assert fmt["ratio"](math.nan) == "–" and fmt["ν"](-1.142e-5) == "−1.142×10⁻⁵"
    with pytest.raises(ParameterError, match="headers"):
        tables.estimate_columns({"a": "x"}, [("v", "v", {"a": e})], "row")


def test_estimates_frame_with_a_two_level_index():
    rows = {
        ("a", "x"): {"g": Estimate(1.5, 0.25, 3, 4), "h": None},
        ("b", "y"): {"g": Estimate(-2.0, None), "h": Estimate(7.0, 1.0, 9, 10)},
    }
    T = tables.estimates_frame(rows, ["first", "second"])
    assert list(T.index.names) == ["first", "second"] and list(T.index) == list(rows)
    assert list(T.columns) == [("g", "mean"), ("g", "± s.e."), ("h", "mean"), ("h", "± s.e.")]
    assert T.loc[("a", "x"), ("g", "mean")] == 1.5 and T.loc[("a", "x"), ("g", "± s.e.")] == 0.25
    assert np.isnan(T.loc[("a", "x"), ("h", "mean")]) and np.isnan(
        T.loc[("b", "y"), ("g", "± s.e.")]
    )
    flat = tables.estimates_frame({"only": {"g": Estimate(3.0, 0.5)}}, "row")
    assert flat.index.name == "row" and list(flat.index) == ["only"]
    fmt = tables.estimate_formats(T)
    assert fmt["g", "mean"](1.234567) == "1.235" and fmt["g", "± s.e."](0.0123456) == "0.012"
