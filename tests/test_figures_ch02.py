"""Figures of Chapter 2 drawn from small synthetic arrays: panels, plotted data, width."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_fits_column, assert_layout_stable

from layerwise import diffusion
from layerwise.figures import ch02 as F
from layerwise.plotting import legends_over_data, save_figure
from layerwise.stats import Estimate


def test_residual_diffusion_profiles_and_moments():
    rng = np.random.default_rng(0)
    L, ring, ts = 20, 31, [0.25, 1.0]
    mean_prof, prof0 = rng.random((L + 1, ring)), rng.random((L + 1, ring))
    m2, mu = rng.random((4, L + 1)), rng.random((4, L + 1))
    fig = F.residual_diffusion(mean_prof, prof0, m2, mu, 2.0, ts)
    assert_fits_column(fig)
    left, right = fig.axes
    assert len(left.lines) == 3 * len(ts)
    np.testing.assert_array_equal(left.lines[0].get_xdata(), np.arange(ring) - ring // 2)
    np.testing.assert_array_equal(left.lines[3].get_ydata(), mean_prof[L])  # t = 1: the last layer
    np.testing.assert_array_equal(left.lines[4].get_ydata(), prof0[L])
    xf = left.lines[
        5
    ].get_xdata()  # Eq. 34 drawn as a smooth curve on a fine grid, not at the sites
    assert len(xf) > 10 * ring and np.all(np.diff(xf) > 0)
    np.testing.assert_allclose(left.lines[5].get_ydata(), diffusion.heat_kernel(xf, 0, 2.0, 1.0))
    lines = {ln.get_label(): ln for ln in right.lines}
    np.testing.assert_allclose(lines["second moment"].get_ydata(), m2.mean(0))
    np.testing.assert_allclose(
        lines[r"$2\mathcal{D}t$, Eq. 34"].get_ydata(), 4.0 * np.arange(L + 1) / L
    )
    np.testing.assert_allclose(lines["mean position"].get_ydata(), mu.mean(0))


def test_effective_receptive_field_three_panels_and_widths():
    depths, length = [2, 4], 16
    rng = np.random.default_rng(1)
    g2 = {a: [rng.random((3, length)) for _ in depths] for a in ("plain", "residual")}
    var = {a: np.array([[1.0, 1.2, 1.1], [2.0, 2.2, 2.1]]) for a in g2}
    fits = {a: Estimate(0.5, 0.01, 2, 3) for a in g2}
    fig = F.effective_receptive_field(g2, depths, var, fits, {"plain": 2 / 3, "residual": 1 / 3})
    assert_fits_column(fig)
    assert len(fig.axes) == 3
    plain = fig.axes[0]
    g = g2["plain"][1]
    np.testing.assert_allclose(plain.lines[2].get_ydata(), g.mean(0) / g.mean(0).sum())
    width = fig.axes[2]
    np.testing.assert_allclose(width.lines[0].get_ydata(), np.sqrt(var["plain"].mean(1)))
    dashed = [ln for ln in width.lines if ln.get_linestyle() == "--"]
    np.testing.assert_allclose(dashed[1].get_ydata(), np.sqrt(np.array(depths) / 3))


def test_gradients_vs_capacity_plots_network_one():
    rng = np.random.default_rng(2)
    pr = {
        f"{a}_{act}_g2": rng.random((2, 12)) + 0.1
        for a in ("plain", "residual")
        for act in ("pseudo_random", "relu")
    }
    pr.update({f"{a}_pseudo_random_pred": rng.random((2, 12)) + 0.1 for a in ("plain", "residual")})
    fig = F.gradients_vs_capacity(pr, depth=4)
    assert_fits_column(fig)
    assert len(fig.axes) == 2
    for ax, a in zip(fig.axes, ("plain", "residual"), strict=False):
        np.testing.assert_array_equal(ax.lines[0].get_ydata(), pr[f"{a}_pseudo_random_g2"][0])
        np.testing.assert_array_equal(ax.lines[1].get_ydata(), pr[f"{a}_relu_g2"][0])
        np.testing.assert_array_equal(ax.lines[2].get_ydata(), pr[f"{a}_pseudo_random_pred"][0])
        np.testing.assert_array_equal(ax.lines[0].get_xdata(), np.arange(12) - 6)
    assert fig.axes[1].get_title() == "residual, depth 4 (network 1)"
    # one legend below the panels, none inside them
    assert [ax.get_legend() for ax in fig.axes] == [None, None] and len(fig.legends) == 1
    assert not legends_over_data(fig)


def shattering_data():
    """Depths (the chapter's), straight-path weights, gradient correlations and gradients."""
    Ls = np.unique(np.geomspace(2, 400, 25).astype(int))
    w = {
        "w_res": np.full(len(Ls), 0.4),
        "w_res_pred": np.full(len(Ls), 0.39),
        "w_plain3": 3.0**-Ls,
        "w_plain5": 5.0**-Ls,
    }
    corr = {
        "plain": np.array([[0.9, 0.8], [0.5, 0.4]]),
        "residual": np.array([[0.95, 0.9], [0.9, 0.85]]),
    }
    grad0 = {a: np.random.default_rng(3).standard_normal(32) for a in corr}
    return Ls, w, corr, grad0


def test_shattering_three_panels():
    Ls, w, corr, grad0 = shattering_data()
    fig = F.shattering(Ls, w, corr, grad0, np.array([2, 10]))
    assert_fits_column(fig)
    assert_layout_stable(fig)  # its legend above the panel once collapsed the SVG
    assert len(fig.axes) == 3
    wmax, c, gr = fig.axes
    np.testing.assert_array_equal(wmax.lines[2].get_ydata(), w["w_plain3"])
    np.testing.assert_allclose(c.lines[0].get_ydata(), corr["plain"].mean(1))
    g = grad0["residual"]
    np.testing.assert_allclose(gr.lines[1].get_ydata(), (g - g.mean()) / g.std() + 4)
    assert gr.lines[1].get_label() == "residual, depth 10"
    assert not legends_over_data(fig)  # above the w_max panel, in headroom on the others


def test_save_figure_refuses_an_svg_laid_out_apart_from_its_png(tmp_path, monkeypatch):
    """The legend above the straight-path panel stretched to the panel's width (``mode="expand"``,
    as it once was) collapses the constrained layout when the SVG is drawn after the PNG."""

    def stretched(ax, ncols):
        return ax.legend(
            loc="lower left",
            bbox_to_anchor=(0, 1.02, 1, 0.2),
            mode="expand",
            ncols=ncols,
            borderaxespad=0,
        )

    monkeypatch.setattr(F, "legend_above", stretched)
    Ls, w, corr, grad0 = shattering_data()
    fig = F.shattering(Ls, w, corr, grad0, np.array([2, 10]))
    with (
        pytest.warns(UserWarning, match="constrained_layout not applied"),
        pytest.raises(ValueError, match="SVG's layout differs from its PNG's"),
    ):
        save_figure(fig, tmp_path / "shattering", {"L": Ls})


def test_drift_limit_profiles_gaussian_and_sorted_rate():
    ring, layers = 41, np.array([200, 50, 100])  # unsorted on purpose: the rate panel sorts by ε
    profs = np.random.default_rng(4).random((3, ring))
    dl = {
        "layers": layers,
        "profiles": profs,
        "profile_expm": profs[0] * 0.9,
        "gauss": profs[1],
        "l1_expm": np.array([0.01, 0.04, 0.02]),
        "drift": 5.0,
        "diffusion": 3.0,
    }
    fig = F.drift_limit(dl, show=[50, 200])
    assert_fits_column(fig)
    left, right = fig.axes
    np.testing.assert_array_equal(left.lines[0].get_ydata(), profs[1])  # L = 50
    np.testing.assert_array_equal(left.lines[1].get_ydata(), profs[0])  # L = 200
    g = left.lines[3]
    assert len(g.get_xdata()) > 10 * ring
    np.testing.assert_allclose(
        g.get_ydata(), diffusion.heat_kernel(g.get_xdata(), 0, 3.0, 1.0, drift=5.0)
    )
    eps = right.lines[0].get_xdata()
    np.testing.assert_allclose(eps, [1 / 200, 1 / 100, 1 / 50])
    np.testing.assert_allclose(right.lines[0].get_ydata(), [0.01, 0.02, 0.04])
    np.testing.assert_allclose(
        right.lines[1].get_ydata(), 0.01 * eps / eps[0]
    )  # slope one through the first


def test_t_collapse_variance_in_t_and_capacity_line():
    rng = np.random.default_rng(5)
    depths, tau, length = [4, 8], 2.0, 15
    tc = {
        **{f"var_{L}": rng.random((3, L + 1)) for L in depths},
        **{f"g2_{L}": rng.random((3, length)) + 0.1 for L in depths},
    }
    fig = F.t_collapse(tc, depths, tau)
    assert_fits_column(fig)
    left, right = fig.axes
    x = left.lines[0].get_xdata()
    assert np.all(np.diff(x) > 0) and x[0] == 0 and x[-1] == 1  # sorted in t
    np.testing.assert_allclose(left.lines[0].get_ydata(), tc["var_4"].mean(0)[::-1])
    assert len(left.containers) == 2  # error bars
    cap_line = [ln for ln in left.lines if ln.get_label().startswith("(2/3)")][0]
    np.testing.assert_allclose(cap_line.get_ydata(), 2 / 3 * tau * cap_line.get_xdata())
    g = tc["g2_8"].mean(0)
    np.testing.assert_allclose(right.lines[1].get_ydata(), g / g.sum())
    np.testing.assert_allclose(
        right.lines[2].get_ydata(),
        diffusion.heat_kernel(right.lines[2].get_xdata(), 0, tau / 3, 1.0),
    )


def test_differential_layers_two_panels_with_predictions():
    t = np.linspace(0, 1, 11)
    rng = np.random.default_rng(2)
    S = {"t": t, "drift": 1.0, "diffusion": 1.0, "sde_total": 3.0}
    for name in ("fixed", "mirrored"):
        S[f"{name}_var"] = 2 * t + 0.01 * rng.random((5, 11))
        S[f"{name}_mu"] = t + 0.01 * rng.random((5, 11))
    fig = F.differential_layers(S)
    assert_fits_column(fig)
    left, right = fig.axes
    lines = {ln.get_label(): ln for ln in left.lines}
    np.testing.assert_allclose(lines[r"$2\mathcal{D}t$"].get_ydata(), 2 * t)
    np.testing.assert_allclose(lines[r"$\Sigma_k c_k\,t$"].get_ydata(), 3 * t)
    np.testing.assert_allclose(lines["fixed kernel"].get_ydata(), S["fixed_var"].mean(0))
    right_lines = {ln.get_label(): ln for ln in right.lines}
    np.testing.assert_allclose(right_lines["vt"].get_ydata(), t)
    np.testing.assert_allclose(right_lines["mirrored kernel"].get_ydata(), S["mirrored_mu"].mean(0))


def test_chain_capacities_one_panel_per_depth():
    rng = np.random.default_rng(3)
    T = {
        "two_pred": rng.random((2, 4)),
        "relu_two_kappa": rng.random((2, 4)),
        "three_pred": rng.random((2, 4)),
        "relu_three_kappa": rng.random((2, 4)),
    }
    fig = F.chain_capacities(T, {"two": [4, 4], "three": [3, 3, 3]})
    assert_fits_column(fig)
    assert len(fig.axes) == 2
    pts = fig.axes[0].lines[0]
    np.testing.assert_array_equal(pts.get_xdata(), T["two_pred"].ravel())
    np.testing.assert_array_equal(pts.get_ydata(), T["relu_two_kappa"].ravel())
    assert [ax.get_legend() for ax in fig.axes] == [None, None] and len(fig.legends) == 1


def test_plain_log_labels_only_on_narrow_axes_with_default_labels():
    """0.8–1.5 gets "0.9", "1"; 10⁻³⁰–2 keeps 10⁻ⁿ; a formatter the figure chose stays; a base-2
    axis is labelled at its powers of 2."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    from layerwise.plotting import plain_log_labels

    fig, axes = plt.subplots(1, 3, figsize=(6, 2))
    for ax, lims in zip(axes, [(0.8, 1.5), (1e-30, 2), (0.8, 1.5)]):
        ax.set(yscale="log", ylim=lims)
    axes[0].set_xscale("log", base=2)  # a base-2 axis labels (some of) its powers of 2: 16, 64, …
    axes[0].set_xlim(6, 300)
    axes[2].yaxis.set_minor_formatter(NullFormatter())
    axes[2].yaxis.set_major_formatter(NullFormatter())
    plain_log_labels(fig)
    fig.canvas.draw()

    def labels(ax):
        ticks = ax.get_yticklabels() + ax.get_yticklabels(minor=True)
        return [t.get_text() for t in ticks if t.get_text()]

    assert {"0.9", "1"} <= set(labels(axes[0])) and not any("$" in s for s in labels(axes[0]))
    assert all("10^" in s for s in labels(axes[1])) and labels(axes[2]) == []  # mathtext 10⁻ⁿ
    ticks = axes[0].get_xticklabels()
    shown = [t.get_text() for t in ticks if 6 <= t.get_position()[0] <= 300 and t.get_text()]
    assert len(shown) >= 3 and set(shown) <= {"8", "16", "32", "64", "128", "256"}
