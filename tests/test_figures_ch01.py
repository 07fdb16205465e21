"""Figures of Chapter 1 drawn from small synthetic arrays: panels, plotted data, width."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest

from conftest import assert_fits_column
from layerwise import capacity as cap
from layerwise.figures import ch01 as F


def test_nu_scale_plots_the_table_with_one_tick_per_case():
    cases = [["linear", None], ["leaky_relu", 0.2], ["relu", None]]
    table = np.array([[1.0, 0.01, 1, 0, 1.0], [0.7, 0.02, 1, 0, 0.72], [0.5, 0.01, 1, 0, 0.5]])
    fig = F.nu_scale(table, cases)
    assert_fits_column(fig)
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_xticklabels()] == ["linear", "leaky ReLU a=0.2", "relu"]
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), table[:, 0])           # the Monte-Carlo points
    np.testing.assert_array_equal(ax.collections[-1].get_offsets()[:, 1], table[:, 4])  # Eq. 13 markers


def test_augmented_covariance_has_five_heatmaps_and_a_colour_bar():
    cases = [["linear", None], ["leaky_relu", 0.2], ["relu", None], ["abs", None], ["pseudo_random", None]]
    rng = np.random.default_rng(0)
    heat = {**{f"S_{k}": rng.uniform(-1, 1, (8, 8)) for k in range(5)}, **{f"off_{k}": np.full(3, 0.25) for k in range(5)}}
    fig = F.augmented_covariance(heat, cases, n=4, m=2)
    assert_fits_column(fig)
    images = [ax.images[0] for ax in fig.axes if ax.images]
    assert len(images) == 5
    for k, im in enumerate(images):
        np.testing.assert_array_equal(im.get_array(), heat[f"S_{k}"])
    assert "fit 0.250" in fig.axes[0].get_title() and "ν = 1.000" in fig.axes[0].get_title()
    assert len(fig.axes) == 7  # 2 × 3 grid (last one blank) + the colour bar


def test_footnote3_error_points_are_the_square_root_of_the_squared_errors():
    ns = np.array([8.0, 16.0, 32.0])
    rows = [np.column_stack([ns, 0.1 / ns, 0.001 / ns, 0.1 / ns]), np.column_stack([ns, 0.4 / ns, 0.002 / ns, 0.4 / ns])]
    fig = F.footnote3_error(rows, [["relu", None], ["abs", None]])
    assert_fits_column(fig)
    (ax,) = fig.axes
    pts = [ln for ln in ax.lines if ln.get_marker() == "o"]
    assert len(pts) == 2
    np.testing.assert_allclose(pts[1].get_ydata(), np.sqrt(0.4 / ns))
    curve = [ln for ln in ax.lines if ln.get_marker() != "o" and len(ln.get_xdata()) == 50][0]
    assert curve.get_ydata()[0] == pytest.approx(cap.footnote3_error_closed_form("relu", 8))


def test_pseudo_random_capacities_bars_and_convergence():
    k25, k_mean, k_se = np.array([1.0, 2.0, 2.0]), np.array([1.1, 1.9, 2.0]), np.full(3, 0.01)
    sizes = np.array([100.0, 1000.0])
    errors = np.array([[0.3, 0.2], [0.1, 0.08]])
    fig = F.pseudo_random_capacities(k25, k_mean, k_se, sizes, errors, {"slope": -0.5, "slope_se": 0.02})
    assert_fits_column(fig)
    assert len(fig.axes) == 2
    left, right = fig.axes
    assert [p.get_height() for p in left.patches[:3]] == k25.tolist()
    assert [p.get_height() for p in left.patches[3:6]] == pytest.approx(k_mean.tolist())
    np.testing.assert_array_equal(right.lines[1].get_ydata(), errors.mean(1))
    assert "slope -0.50 ± 0.02" in right.lines[1].get_label()


def test_smooth_nu_one_curve_and_one_point_set_per_activation():
    qf = np.geomspace(0.01, 100, 20)
    quad = {"tanh": np.linspace(1, 0.3, 20), "gelu": np.linspace(1, 0.5, 20)}
    mc = {"tanh": np.array([[0.1, 0.98, 0.01], [1.0, 0.8, 0.01]]), "gelu": np.array([[0.1, 0.97, 0.01], [1.0, 0.75, 0.02]])}
    fig = F.smooth_nu(qf, quad, mc)
    assert_fits_column(fig)
    (ax,) = fig.axes
    labelled = {ln.get_label(): ln for ln in ax.lines}
    np.testing.assert_array_equal(labelled["gelu (quadrature)"].get_ydata(), quad["gelu"])
    pts = [ln for ln in ax.lines if ln.get_marker() == "o"]
    assert len(pts) == 2
    np.testing.assert_array_equal(pts[1].get_ydata(), mc["gelu"][:, 1])
    assert ax.get_ylim() == (0, 1.05)
