"""Figures of Chapter 5 drawn from small synthetic arrays: panels, plotted data, width."""

from __future__ import annotations

import numpy as np

from layerwise import labatie, plotting
from layerwise.chapter import MAX_FIGURE_WIDTH_IN
from layerwise.figures import ch05 as figures


def _panels(n=4, R=20, seed=0):
    rng = np.random.default_rng(seed)
    Q = {
        k: rng.uniform(0.5, 3.0, (n, R))
        for k in ("dff", "dbn", "dphi", "reff_x", "reff_dx", "kurt_z", "nu1_z")
    }
    d = np.arange(1, R + 1)
    Q["chi"] = d**0.3 * rng.uniform(1, 2, (n, 1))
    return d, Q


def test_fig5_panels_fit_and_overlay():
    d, Q = _panels()
    pf = labatie.power_fit(d, Q["chi"], l_min=2)
    ov = labatie.power_overlay(d, Q["chi"], Q["dff"], 2, l_min=2, n_boot=20)
    fig = figures.fig5(d, Q, "title", pf, ov)
    assert fig.get_size_inches()[0] <= MAX_FIGURE_WIDTH_IN
    axes = fig.axes
    assert len(axes) == 4 and [a.get_title(loc="left") for a in axes] == [
        "(a)",
        "(b)",
        "(c)",
        "(d)",
    ]
    lines = {ln.get_label(): ln for ln in axes[1].get_lines()}
    assert np.allclose(lines["free fit"].get_ydata(), np.exp(pf["intercept"]) * d ** pf["tau"])
    assert np.allclose(lines["Eq. 15 exponent"].get_ydata(), np.exp(ov["log_c"]) * d ** ov["tau"])
    assert np.allclose(lines["geometric mean"].get_ydata(), np.exp(np.log(Q["chi"]).mean(0)))
    assert axes[1].get_xscale() == "log" and axes[1].get_yscale() == "log"
    assert np.allclose(axes[0].get_lines()[0].get_ydata(), Q["dff"].mean(0))


def test_resnet_vs_ff_axes_and_data():
    d, Q = _panels()
    dF, QF = _panels(R=30, seed=1)
    fig = figures.resnet_vs_ff(dF, QF["chi"], QF["reff_x"], d, Q["chi"], Q["reff_x"])
    assert fig.get_size_inches()[0] <= MAX_FIGURE_WIDTH_IN
    assert len(fig.axes) == 3  # (a) feedforward against l, (b) ResNet against log l, (c) ranks
    ff = fig.axes[0].get_lines()[0]
    assert np.allclose(ff.get_xdata(), dF) and np.allclose(
        ff.get_ydata(), np.log(QF["chi"]).mean(0)
    )
    res = fig.axes[1].get_lines()[0]
    assert np.allclose(res.get_xdata(), d) and np.allclose(
        res.get_ydata(), np.log(Q["chi"]).mean(0)
    )
    assert fig.axes[0].get_xscale() == "linear" and fig.axes[1].get_xscale() == "log"
    right = fig.axes[2].get_lines()
    assert np.allclose(right[0].get_ydata(), QF["reff_x"].mean(0)) and np.allclose(
        right[1].get_ydata(), Q["reff_x"].mean(0)
    )
    assert plotting.legend_overlap(fig.axes[2]) == 0


def test_datasets_geometric_means():
    runs = {ds: _panels(seed=i) for i, ds in enumerate(["patches", "digits", "gaussian"])}
    fig = figures.datasets(runs)
    assert fig.get_size_inches()[0] <= MAX_FIGURE_WIDTH_IN and len(fig.axes) == 1
    lines = fig.axes[0].get_lines()
    assert [ln.get_label() for ln in lines] == list(runs)
    assert np.allclose(lines[0].get_ydata(), np.exp(np.log(runs["patches"][1]["chi"]).mean(0)))
