"""Figures of Chapter 3 drawn from small synthetic arrays: panels, plotted data, width."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_fits_column
from scipy import stats

from layerwise import published
from layerwise.figures import ch03 as F
from layerwise.plotting import legends_over_data
from layerwise.stats import Estimate, mean_se


def _logs(n=30, L=8, seed=0):
    rng = np.random.default_rng(seed)
    return {k: np.cumsum(rng.normal(-0.05, 0.2, (n, L)), axis=1) for k in ("nu2", "mu2dx")}


def test_log_moment_histograms_draws_one_gaussian_and_one_histogram_per_depth():
    logs, quarters = _logs(), [2, 4, 6, 8]
    fits = {  # the study's Gaussian fits: estimates of the mean and the variance
        k: [
            {"mean": Estimate(float(a[:, q - 1].mean())), "variance": Estimate(a[:, q - 1].var())}
            for q in quarters
        ]
        for k, a in logs.items()
    }
    fig = F.log_moment_histograms(logs, quarters, fits)
    assert_fits_column(fig)
    assert len(fig.axes) == 2
    for ax, key in zip(fig.axes, ("nu2", "mu2dx"), strict=False):
        lines = ax.get_lines()
        assert [ln.get_label() for ln in lines] == [f"l = {q}" for q in quarters]
        # each curve is the fitted Gaussian density
        for ln, f in zip(lines, fits[key], strict=False):
            x = ln.get_xdata()
            sigma = np.sqrt(f["variance"].mean)
            np.testing.assert_allclose(ln.get_ydata(), stats.norm.pdf(x, f["mean"].mean, sigma))
        assert len(ax.patches) == 4 * 14  # 15 bin edges below 500 networks, one histogram per depth
        # the densities integrate to 1 over the bins
        heights = np.array([p.get_height() for p in ax.patches[:14]])
        widths = np.array([p.get_width() for p in ax.patches[:14]])
        assert float(heights @ widths) == pytest.approx(1.0, abs=0.05)


def test_drift_diffusion_plots_mean_minus_half_variance_and_the_fit():
    logs = _logs()
    d = np.arange(1, 9)
    lme = {k: np.stack([a.mean(0) + 0.1, np.full(8, 0.01)], axis=1) for k, a in logs.items()}
    fig = F.drift_diffusion(d, logs, lme, {"nu2": 0.03, "mu2dx": 0.04})
    assert_fits_column(fig)
    ax0, ax1 = fig.axes
    for j, (key, b) in enumerate([("nu2", 0.03), ("mu2dx", 0.04)]):
        mean, dashed, dotted = ax0.get_lines()[3 * j : 3 * j + 3]
        v = np.var(logs[key], axis=0, ddof=1)
        np.testing.assert_array_equal(mean.get_ydata(), mean_se(logs[key])[0])
        np.testing.assert_array_equal(dashed.get_ydata(), -v / 2)
        np.testing.assert_array_equal(dotted.get_ydata(), lme[key][:, 0])
        var, fit = ax1.get_lines()[2 * j : 2 * j + 2]
        np.testing.assert_array_equal(var.get_ydata(), v)
        np.testing.assert_allclose(fit.get_ydata(), b * d)


def test_width_dependence_plots_n_times_diffusion_against_the_single_input_value():
    W, D, se = [32, 64, 128], np.array([0.1, 0.06, 0.035]), np.array([0.01, 0.005, 0.002])
    fig = F.width_dependence(W, [Estimate(m, e) for m, e in zip(D, se, strict=True)])
    assert_fits_column(fig)
    (ax,) = fig.axes
    lines = ax.get_lines()
    np.testing.assert_allclose(lines[0].get_ydata(), D * np.array(W))
    assert list(lines[-1].get_ydata()) == [5.0, 5.0]  # the single-input reference 5/N
    assert ax.get_xscale() == "log"
    assert legends_over_data(fig) == {}  # the legend sits in headroom above the error bars


def test_width_dependence_keeps_the_legend_off_a_zigzag():
    # points in every corner of the panel (a noisy small-sample run): a legend placed in the
    # "best" corner covered two of them; in the headroom above the data it covers none
    W = np.array([32, 64, 128, 256])
    D = np.array([8.0, 2.0, 8.0, 2.0]) / W
    assert legends_over_data(F.width_dependence(W, [Estimate(m, 0.05 * m) for m in D])) == {}


@pytest.mark.parametrize("n", [3, 6])
def test_sensitivity_draws_three_panels_of_means(n):
    rng = np.random.default_rng(n)
    d = np.arange(1, 13)
    dchi, chi, reff = (
        rng.uniform(1, 1.1, (n, 12)),
        rng.uniform(1, 5, (n, 12)),
        rng.uniform(1, 8, (n, 12)),
    )
    fig = F.sensitivity(d, dchi, chi, reff)
    assert_fits_column(fig)
    assert len(fig.axes) == 3
    for ax, arr in zip(fig.axes, (dchi, chi, reff), strict=False):
        mean = [ln for ln in ax.get_lines() if ln.get_label() == "mean"]
        assert len(mean) == 1
        np.testing.assert_array_equal(mean[0].get_ydata(), arr.mean(0))
        np.testing.assert_array_equal(mean[0].get_xdata(), d)
    assert fig.axes[1].get_yscale() == "log" and fig.axes[2].get_yscale() == "linear"


def test_sensitivity_overlays_the_authors_published_curves():
    rng = np.random.default_rng(0)
    d = np.arange(2, 41, 2)
    dchi, chi, reff = (
        rng.uniform(1, 1.1, (3, 20)),
        rng.uniform(1, 5, (3, 20)),
        rng.uniform(1, 8, (3, 20)),
    )
    ref = published.fig3_reference("vanilla_symmetric", max_depth=40)
    fig = F.sensitivity(d, dchi, chi, reff, references={"authors": ref})
    for ax, key in zip(fig.axes, ("dchi", "chi", "reff_x"), strict=False):
        line = [ln for ln in ax.get_lines() if ln.get_label() == "authors"]
        assert len(line) == 1
        np.testing.assert_allclose(line[0].get_ydata(), ref[key][0])
        assert line[0].get_xdata()[-1] == 40


def test_coactivation_plots_the_mean_over_networks_in_the_unit_range():
    rng = np.random.default_rng(1)
    CA = {
        "depth": np.arange(0, 25, 5),
        "coactive": rng.uniform(0, 1, (4, 5)),
        "linearity": rng.uniform(0, 1, (4, 5)),
    }
    fig = F.coactivation(CA)
    assert_fits_column(fig)
    assert len(fig.axes) == 2
    for ax, key in zip(fig.axes, ("coactive", "linearity"), strict=False):
        (ln,) = ax.get_lines()
        np.testing.assert_array_equal(ln.get_ydata(), CA[key].mean(0))
        assert ax.get_ylim() == pytest.approx((0, 1.02))


def test_datasets_draws_one_curve_per_data_set_in_each_panel():
    rng = np.random.default_rng(2)
    d = np.arange(1, 7)
    runs = {}
    for ds in ("patches", "digits", "gaussian"):
        runs[ds] = (
            d,
            {
                "chi_loc3": rng.uniform(1, 3, (3, 6)),
                "reff_signal_loc3": rng.uniform(1, 9, (3, 6)),
                "nu2_signal_loc3": rng.uniform(0.5, 2, (3, 6)),
                "nu2_signal_loc1": rng.uniform(0.5, 2, (3, 6)),
            },
        )
    fig = F.datasets(runs)
    assert_fits_column(fig)
    assert len(fig.axes) == 3
    for j, (ds, (_, A)) in enumerate(runs.items()):
        chi, reff, drift = (ax.get_lines()[j] for ax in fig.axes)
        assert chi.get_label() == ds
        np.testing.assert_array_equal(chi.get_ydata(), A["chi_loc3"].mean(0))
        np.testing.assert_array_equal(reff.get_ydata(), A["reff_signal_loc3"].mean(0))
        np.testing.assert_allclose(
            drift.get_ydata(), np.log(A["nu2_signal_loc3"] / A["nu2_signal_loc1"][:, :1]).mean(0)
        )
    assert fig.axes[1].get_yscale() == "log"
    assert legends_over_data(fig) == {}  # the legend covers none of the curves


def test_log_moment_cdfs_draw_ours_and_the_authors_at_each_depth():
    rng = np.random.default_rng(3)
    logs = {"nu2": rng.normal(size=(20, 4)), "mu2dx": rng.normal(size=(20, 4))}
    pubp = {k: np.tile(np.linspace(-2, 2, 99), (4, 1)) for k in logs}
    fig = F.log_moment_cdfs(logs, [50, 100, 150, 200], pubp)
    assert_fits_column(fig)
    for ax, key in zip(fig.axes, ("nu2", "mu2dx"), strict=False):
        lines = ax.get_lines()
        assert len(lines) == 8
        np.testing.assert_array_equal(lines[0].get_xdata(), np.sort(logs[key][:, 0]))
        np.testing.assert_allclose(lines[1].get_ydata(), np.arange(1, 100) / 100)
