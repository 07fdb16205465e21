"""Figures of Chapter 1 drawn from small synthetic arrays: panels, plotted data, width."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest
from conftest import assert_fits_column

from layerwise import capacity as cap
from layerwise.figures import ch01 as F
from layerwise.plotting import legends_over_data
from layerwise.stats import Estimate


def test_nu_scale_plots_the_table_the_fixed_layers_and_one_tick_per_case():
    cases = [["linear", None], ["leaky_relu", 0.2], ["relu", None]]
    table = np.array([[1.0, 0.01, 1, 0, 1.0], [0.7, 0.02, 1, 0, 0.72], [0.5, 0.01, 1, 0, 0.5]])
    fixed = {"fixed P, iid": np.array([[1.0, 1.0], [0.6, 0.8], [0.4, 0.6]])}
    fig = F.nu_scale(table, cases, fixed)
    assert_fits_column(fig)
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_xticklabels()] == ["linear", "leaky ReLU a=0.2", "relu"]
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), table[:, 0])  # the idealised points
    np.testing.assert_allclose(
        [ln for ln in ax.lines if ln.get_marker() == "s"][0].get_ydata(), [1.0, 0.7, 0.5]
    )
    np.testing.assert_array_equal(
        ax.collections[-1].get_offsets()[:, 1], table[:, 4]
    )  # Eq. 13 markers


def test_augmented_covariance_has_five_sequential_heatmaps_and_a_colour_bar():
    cases = [
        ["linear", None],
        ["leaky_relu", 0.2],
        ["relu", None],
        ["abs", None],
        ["pseudo_random", None],
    ]
    rng = np.random.default_rng(0)
    heat = {
        **{f"S_{k}": rng.uniform(0, 1, (8, 8)) for k in range(5)},
        **{f"r_{k}": np.array([0.25, 0.4]) for k in range(5)},
    }
    fig = F.augmented_covariance(heat, cases, n=4, m=2)
    assert_fits_column(fig)
    images = [ax.images[0] for ax in fig.axes if ax.images]
    assert len(images) == 5
    for k, im in enumerate(images):
        np.testing.assert_array_equal(im.get_array(), heat[f"S_{k}"])
        assert im.get_clim() == (0, 1) and im.get_cmap().name.startswith(
            "rocket"
        )  # sequential, positive data
    assert "0.25…0.40" in fig.axes[0].get_title() and "ν = 1.00" in fig.axes[0].get_title()
    assert len(fig.axes) == 7  # 2 × 3 grid (last one blank) + the colour bar


def test_footnote3_error_two_norms_with_smooth_closed_forms():
    ns = np.array([8.0, 16.0, 32.0])
    c2 = (1 / np.pi) ** 2
    rows = [
        np.column_stack(
            [ns, 0.1 / ns, 0.001 / ns, 0.1 / ns, np.full(3, c2), np.full(3, 0.001), np.full(3, c2)]
        )
    ]
    fig = F.footnote3_error(rows, [["relu", None]])
    assert_fits_column(fig)
    left, right = fig.axes
    pts = [ln for ln in left.lines if ln.get_marker() == "o"]
    np.testing.assert_allclose(pts[0].get_ydata(), np.sqrt(0.1 / ns))
    curve = [ln for ln in left.lines if len(ln.get_xdata()) == 60][0]
    x, y = curve.get_xdata(), curve.get_ydata()
    assert np.all(np.diff(x) > 0) and np.all(np.diff(y) < 0)  # smooth, no staircase
    np.testing.assert_allclose(
        y, [cap.footnote3_error_closed_form("relu", 8) * np.sqrt(8 / v) for v in x]
    )
    flat = [ln for ln in right.lines if len(ln.get_xdata()) == 60][0]
    np.testing.assert_allclose(flat.get_ydata(), 1 / np.pi)


def test_fixed_layer_deviation_panels_points_and_prediction():
    ns = np.array([9.0, 16.0, 64.0])
    rms = {
        "iid": {"relu": np.array([[0.1, 0.12], [0.08, 0.08], [0.04, 0.04]])},
        "patches": {"relu": np.full((3, 2), 0.4)},
    }
    fig = F.fixed_layer_deviation(ns, rms, {"relu": 1 / np.pi})
    assert_fits_column(fig)
    left, right = fig.axes
    pts = [ln for ln in left.lines if ln.get_marker() == "o"]
    np.testing.assert_allclose(pts[0].get_ydata(), [0.11, 0.08, 0.04])
    pred = [ln for ln in left.lines if ln.get_linestyle() == "--" and len(ln.get_xdata()) == 60][0]
    np.testing.assert_allclose(pred.get_ydata(), 1 / np.pi / np.sqrt(pred.get_xdata()))
    assert not [ln for ln in right.lines if ln.get_linestyle() == "--"]


def test_intermediate_capacities_distance_curves_and_bars():
    nus = np.linspace(0, 1, 11)
    curve = np.stack([np.outer(1 - nus, [1.0, 0.0]) + np.outer(nus, [0.0, 1.0])] * 2)[
        :, None
    ].repeat(2, 1)
    emp = np.zeros((2, 1, 2, 2)) + np.array([0.5, 0.5])
    res = {
        "nus": nus,
        "curve": curve,
        "emp": emp,
        "exact": emp.copy(),
        "eq25": curve[:, :, 0],
    }
    fig = F.intermediate_capacities(res, [["relu", None]], ["iid", "patches"], [0.5])
    assert_fits_column(fig)
    left, right = fig.axes
    d = left.lines[0].get_ydata()
    assert np.argmin(d) == 5 and d[5] == pytest.approx(0.0)
    assert len(right.patches) == 5 * 2
    assert [p.get_height() for p in right.patches[:2]] == [0.0, 1.0]  # Eq. 18 = the ν = 1 end


def test_redundancy_spectra_one_panel_per_activation():
    sv = {
        "ReLU": {"true": np.array([1.0, 0.5, 1e-17]), "aug": np.array([1.0, 0.4, 1e-16])},
        "tanh": {"true": np.array([1.0, 0.5, 0.1]), "aug": np.array([1.0, 0.4, 1e-16])},
    }
    fig = F.redundancy(sv)
    assert_fits_column(fig)
    assert len(fig.axes) == 2
    np.testing.assert_allclose(fig.axes[1].lines[0].get_ydata(), [1.0, 0.5, 0.1])
    assert fig.axes[0].get_yscale() == "log"


def test_pseudo_random_capacities_bars_and_convergence():
    k25, k_mean = np.array([1.0, 2.0, 2.0]), np.array([1.1, 1.9, 2.0])
    kappa_last = [Estimate(k, 0.01, 4, 5) for k in k_mean]
    sizes = np.array([100.0, 1000.0])
    errors = np.array([[0.3, 0.2], [0.1, 0.08]])
    fig = F.pseudo_random_capacities(
        k25, kappa_last, sizes, errors, {"slope": -0.5, "slope_se": 0.02}
    )
    assert_fits_column(fig)
    assert len(fig.axes) == 2
    left, right = fig.axes
    assert [p.get_height() for p in left.patches[:3]] == k25.tolist()
    assert [p.get_height() for p in left.patches[3:6]] == pytest.approx(k_mean.tolist())
    np.testing.assert_array_equal(right.lines[1].get_ydata(), errors.mean(1))
    assert "slope −0.50 ± 0.02" in right.lines[1].get_label()
    assert not legends_over_data(fig)  # both legends in headroom above the bars and points


def test_smooth_nu_one_curve_and_one_point_set_per_activation():
    qf = np.geomspace(0.01, 100, 20)
    quad = {"tanh": np.linspace(1, 0.3, 20), "gelu": np.linspace(1, 0.5, 20)}
    mc = {
        "tanh": np.array([[0.1, 0.98, 0.01], [1.0, 0.8, 0.01]]),
        "gelu": np.array([[0.1, 0.97, 0.01], [1.0, 0.75, 0.02]]),
    }
    fig = F.smooth_nu(qf, quad, mc)
    assert_fits_column(fig)
    (ax,) = fig.axes
    labelled = {ln.get_label(): ln for ln in ax.lines}
    np.testing.assert_array_equal(labelled["gelu (quadrature)"].get_ydata(), quad["gelu"])
    pts = [ln for ln in ax.lines if ln.get_marker() == "o"]
    assert len(pts) == 2
    np.testing.assert_array_equal(pts[1].get_ydata(), mc["gelu"][:, 1])
    assert ax.get_ylim() == (0, 1.05)


def test_fixed_layer_deviation_takes_the_deviation_fits_as_they_come():
    ns = np.array([9.0, 16.0, 64.0])
    R = np.array([[0.1, 0.12], [0.08, 0.08], [0.04, 0.04]])
    fig = F.fixed_layer_deviation(
        ns,
        {"iid": {"relu": {"rms": R, "fit": {}}}, "patches": {"relu": {"rms": 2 * R}}},
        {"relu": 1 / np.pi},
    )
    left, right = fig.axes
    np.testing.assert_allclose(
        [ln for ln in left.lines if ln.get_marker() == "o"][0].get_ydata(), [0.11, 0.08, 0.04]
    )
    np.testing.assert_allclose(
        [ln for ln in right.lines if ln.get_marker() == "o"][0].get_ydata(), [0.22, 0.16, 0.08]
    )
    plt.close(fig)


def test_pair_law_scatter_and_scores():
    law = np.array([0.3, 0.5, 0.7])
    pairs = {"iid": (law, law + 0.01), "patches": (law, np.array([0.1, 0.6, 1.2]))}
    ratios = {"iid": {0.5: (0.01, 0.005), 0.0: (0.02, 0.01)}, "patches": {0.5: (0.3, 0.02)}}
    fig = F.pair_law(pairs, ratios)
    assert_fits_column(fig)
    left, right = fig.axes
    np.testing.assert_allclose(left.lines[1].get_ydata(), [0.1, 0.6, 1.2])
    ident = [ln for ln in left.lines if ln.get_linestyle() == "--"][0]
    np.testing.assert_allclose(ident.get_xdata(), ident.get_ydata())
    iid = [ln for ln in right.lines if ln.get_marker() == "o"][0]
    np.testing.assert_allclose(iid.get_xdata(), [0.0, 0.5])  # sorted by ν
    np.testing.assert_allclose(iid.get_ydata(), [0.02, 0.01])


def test_width_gap_means_on_log_axes():
    ns = np.array([16.0, 64.0, 256.0])
    gaps = {"relu": np.array([[0.3, 0.5], [0.3, 0.3], [0.2, 0.4]])}
    fig = F.width_gap(ns, gaps)
    assert_fits_column(fig)
    (ax,) = fig.axes
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [0.4, 0.3, 0.3])
