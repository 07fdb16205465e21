"""Figures of Chapter 8 drawn from small synthetic arrays: panels, plotted data, width."""

from __future__ import annotations

import numpy as np
import pandas as pd

from layerwise import plotting
from layerwise.chapter import MAX_FIGURE_WIDTH_IN
from layerwise.figures import ch08 as figures


def _narrow(fig, n_axes):
    assert fig.get_size_inches()[0] <= MAX_FIGURE_WIDTH_IN
    assert len(fig.axes) == n_axes


def test_fisher_rao_identity_scatters_each_case():
    case = np.array(["relu", "relu", "tanh", "relu + bias"])
    ident, direct = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 2.0, 3.3, 4.4])
    n_params, rel = np.array([10, 20, 30, 40]), np.array([0.0, 1e-16, 0.1, 0.1])
    fig = figures.fisher_rao_identity(case, ident, direct, n_params, rel)
    _narrow(fig, 2)
    left, right = fig.axes
    assert [t.get_text() for t in left.get_legend().get_texts()] == ["relu", "tanh", "relu + bias"]
    assert np.array_equal(left.collections[0].get_offsets(), [[1.0, 1.0], [2.0, 2.0]])
    assert np.array_equal(
        right.collections[0].get_offsets()[:, 1], [figures.EPS / 10, 1e-16]
    )  # zeros floored at ε/10
    assert np.allclose(left.lines[0].get_xdata(), [0.5, 8.8])  # the diagonal spans all points


def _sweep(al):
    rng = np.random.default_rng(0)
    R = {
        k: rng.uniform(0.5, 2, (2, len(al)))
        for k in ("dfun", "fr", "l2", "spec", "lam", "iso", "iso_se", "mult", "mult_se")
    }
    return {"alphas": al, **R}


def test_reparametrisation_panels_and_data():
    al = np.array([0.1, 1.0, 10.0])
    R = _sweep(al)
    fig = figures.reparametrisation(R, 0.05)
    _narrow(fig, 4)
    ax0, ax1, ax2, ax3 = fig.axes
    assert all(np.array_equal(ax2.lines[t].get_ydata(), R["lam"][t]) for t in range(2))
    assert np.allclose(ax1.lines[0].get_ydata(), R["l2"][0] / R["l2"][0, 1])  # relative to α = 1
    assert np.array_equal(ax0.lines[0].get_xdata(), al)
    assert "σ = 0.05" in ax3.get_title() and len(ax3.get_legend().get_texts()) == 2
    # the rescaling is named once, by line style, above the panels; no legend covers a point
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [r"$T_\alpha$", "unit-wise"]
    assert [line.get_linestyle() for line in fig.legends[0].get_lines()] == ["-", "--"]
    assert plotting.legends_over_data(fig) == {}


def _kfac(units=2, layers=3, seed=0):
    rng = np.random.default_rng(seed)
    n = units * units * layers
    K0 = {}
    for t in figures.KFAC_STATES:
        K0[f"{t}_sub_exact"] = rng.normal(size=(n, n))
        K0[f"{t}_sub_kfac"] = rng.normal(size=(n, n))
        K0[f"{t}_sub_block_sizes"] = np.full(layers, units * units)
        for i in range(1, layers + 1):
            K0[f"{t}_eig_exact_{i}"] = np.sort(rng.uniform(1e-3, 1, 6))[::-1]
            K0[f"{t}_eig_kfac_{i}"] = np.sort(rng.uniform(1e-3, 1, 6))[::-1]
    return K0


def test_kfac_heatmaps_show_the_matrices():
    K0 = _kfac()
    fig = figures.kfac_heatmaps(K0)
    _narrow(fig, 6 + 2)  # six heat-maps and one colour bar per row
    im = fig.axes[2].images[0].get_array()
    assert np.array_equal(im, np.abs(K0["init_sub_exact"] - K0["init_sub_kfac"]))
    assert np.array_equal(fig.axes[3].images[0].get_array(), np.abs(K0["trained_sub_exact"]))
    assert len(fig.axes[0].lines) == 2 * 2  # two layer boundaries, horizontal and vertical


def test_kfac_spectra_and_errors():
    K0 = _kfac()
    rng = np.random.default_rng(1)
    states = figures.KFAC_STATES
    err, best, diag = ({t: rng.uniform(0, 1, (2, 3)) for t in states} for _ in range(3))
    fig = figures.kfac_spectra(K0, err, best, diag)
    _narrow(fig, 4)
    assert np.array_equal(fig.axes[1].lines[0].get_ydata(), K0["init_eig_exact_2"])
    assert np.array_equal(fig.axes[3].lines[1].get_ydata(), best["init"].mean(0))
    assert np.allclose(fig.axes[3].lines[0].get_ydata(), err["init"].mean(0))
    # one legend for the three spectra, above them; the errors' legend in their panel's headroom
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "exact, init",
        "K-FAC, init",
        "exact, trained",
        "K-FAC, trained",
    ]
    assert all(ax.get_legend() is None for ax in fig.axes[:3])
    assert len(fig.axes[3].get_legend().get_texts()) == 5
    assert plotting.legends_over_data(fig) == {}


def test_label_randomisation_panels():
    meas = ["l2", "fisher_rao_model"]
    t = pd.DataFrame(
        {
            "fraction": [0.0, 0.0, 1.0, 1.0],
            "l2/γ": [1.0, 3.0, 4.0, 8.0],
            "fisher_rao_model/γ": [2.0, 2.0, 1.0, 1.0],
            "train_accuracy": [1.0] * 4,
            "test_accuracy": [0.9, 0.8, 0.1, 0.12],
            "margin": [1.0, 2.0, 0.5, 0.7],
        }
    )
    fig = figures.label_randomisation(t, meas, {"l2": "ℓ₂", "fisher_rao_model": "FR"})
    _narrow(fig, 4)
    assert np.allclose(
        fig.axes[0].lines[0].get_ydata(), [1.0, 3.0]
    )  # mean / clean-label mean (= 2)
    assert np.allclose(fig.axes[1].lines[0].get_ydata(), [1.0, 0.5])
    assert np.allclose(fig.axes[2].lines[0].get_ydata(), [0.85, 0.11])
    assert np.allclose(fig.axes[3].lines[0].get_ydata(), [1.5, 0.6])
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["ℓ₂"]
    assert plotting.legends_over_data(fig) == {}  # the measures' legends sit above their curves
    # the accuracy panel: the chance line named on it, and the legend clear of it and of the
    # whole falling test-accuracy line (not only its points)
    ax = fig.axes[2]
    assert [t.get_text() for t in ax.texts] == ["chance (10 classes)"]
    box = ax.get_legend().get_window_extent()
    assert box.y0 > ax.transData.transform((0.5, 0.1))[1]
    x = np.linspace(0.0, 1.0, 201)
    line = ax.transData.transform(np.c_[x, np.interp(x, [0.0, 1.0], [0.85, 0.11])])
    assert not any(box.contains(*xy) for xy in line)
    fig.canvas.draw()  # log axes' labels plain: the margin axis spans 0.5–1.5, less than a decade
    labels = {i: [t.get_text() for t in fig.axes[i].get_yticklabels(minor=True)] for i in (1, 3)}
    assert "0.6" in labels[3] and not any("10^" in s or "e-" in s for s in sum(labels.values(), []))


def test_label_randomisation_protocols_panels():
    t = {"fraction": [0.0, 0.0, 1.0, 1.0]}
    for q, k in (("budget", 1.0), ("loss", 2.0)):
        t.update(
            {
                f"{q}_margin": [2.0, 2.0, 4.0, 4.0],
                f"{q}_final_loss": [k * 1e-3, k * 3e-3, 1e-2, 1e-2],
                f"{q}_fisher_rao_model": [k, k, 8.0, 8.0],
                f"{q}_fisher_rao_empirical": [1.0, 3.0, k, k],
                f"{q}_M_model": [2.0, 4.0, 4.0, 4.0],
                f"{q}_M_empirical": [2.0, 2.0, 2.0, 6.0],
            }
        )
    fig = figures.label_randomisation_protocols(t)
    _narrow(fig, 4)
    ax = fig.axes

    def y(a, i):  # the data line of the i-th error-bar curve
        return a.containers[i].lines[0].get_ydata()

    assert np.allclose(y(ax[0], 0), [0.5, 2.0]) and np.allclose(y(ax[0], 1), [1.0, 2.0])
    assert np.allclose(y(ax[1], 0), [1.0, 0.25])  # mean of FR / γ per fraction
    assert np.allclose(y(ax[2], 1), [4e-3, 1e-2])
    assert np.allclose(y(ax[3], 0), [1.5, 1.0]) and np.allclose(y(ax[3], 1), [1.0, 1.0])
    assert np.allclose(
        ax[3].containers[1].lines[2][0].get_segments()[1][:, 1],
        1 + np.array([-1, 1]) * np.std([0.5, 1.5], ddof=1),
    )  # ± sd at 100 %
    assert [t.get_text() for t in ax[3].get_legend().get_texts()] == ["model", "empirical"]


def test_tangent_sensitivity_rows():
    fig = figures.tangent_sensitivity(np.array([0.0, 1e-15]), np.array([0.3, 1.2, 0.5]))
    _narrow(fig, 1)
    ax = fig.axes[0]
    same, diff = (c.get_offsets() for c in ax.collections)
    assert np.array_equal(same[:, 0], [figures.EPS / 10, 1e-15]) and np.all(same[:, 1] == 0)
    assert np.array_equal(diff[:, 0], [0.3, 1.2, 0.5]) and np.all(diff[:, 1] == 1)
