"""Figures of Chapter 4 drawn from small synthetic arrays: panels, plotted data, width."""

from __future__ import annotations

import numpy as np

from layerwise import labatie, plotting, published
from layerwise.chapter import MAX_FIGURE_WIDTH_IN
from layerwise.figures import ch04 as figures
from layerwise.studies import ch04 as study


def _panels(n=4, R=15, seed=0):
    rng = np.random.default_rng(seed)
    Q = {
        k: rng.uniform(0.5, 3.0, (n, R))
        for k in ("dchi", "dbn", "dphi", "reff_x", "reff_dx", "kurt_z", "nu1_z")
    }
    Q["chi"] = np.exp(np.cumsum(rng.uniform(0.1, 0.2, (n, R)), axis=1))
    return np.arange(1, R + 1), Q


def _width(fig):
    return fig.get_size_inches()[0]


def test_fig4_panels_and_fit_line():
    d, Q = _panels()
    fit = labatie.exp_fit(d, Q["chi"], l_min=2)
    fig = figures.fig4(d, Q, "title", fit)
    assert _width(fig) <= MAX_FIGURE_WIDTH_IN
    axes = fig.axes
    assert len(axes) == 4  # 2×2 panels; (d) holds μ₄ and ν₁ on one axis, as in the paper
    assert [a.get_title(loc="left") for a in axes] == ["(a)", "(b)", "(c)", "(d)"]
    assert all(plotting.legend_overlap(a) == 0 for a in axes)  # no legend over a curve
    kurt, nu1 = [ln.get_ydata() for ln in axes[3].get_lines() if len(ln.get_xydata()) > 2][:2]
    assert np.allclose(kurt, Q["kurt_z"].mean(0)) and np.allclose(nu1, Q["nu1_z"].mean(0))
    # panel (b): the geometric mean of χ and the exponential fit
    lines = {ln.get_label(): ln for ln in axes[1].get_lines()}
    assert np.allclose(lines["geometric mean"].get_ydata(), np.exp(np.log(Q["chi"]).mean(0)))
    assert np.allclose(
        lines["exponential fit"].get_ydata(), np.exp(fit["intercept"] + fit["rate"] * d)
    )
    assert axes[1].get_yscale() == "log"
    # panel (a): the mean increment
    assert np.allclose(axes[0].get_lines()[0].get_ydata(), Q["dchi"].mean(0))
    assert len(figures.fig4(d, Q, "no fit").axes[1].get_lines()) == 1


def test_dbn_vs_conditioning_scatter_and_within():
    rng = np.random.default_rng(1)
    rin, dbn = rng.uniform(1, 10, (3, 6)), rng.uniform(1, 2, (3, 6))
    depth, within = np.arange(10, 16), rng.uniform(-1, 1, 6)
    fig = figures.dbn_vs_conditioning(rin, dbn, depth, within)
    assert _width(fig) <= MAX_FIGURE_WIDTH_IN and len(fig.axes) == 3  # two panels, the colour bar
    bar = fig.axes[2]
    assert bar.get_ylabel() == "layer l" and bar.get_ylim() == (10, 15)  # the colour says depth
    pts = fig.axes[0].collections[0].get_offsets()
    assert np.allclose(pts[:, 0], rin.ravel()) and np.allclose(pts[:, 1], dbn.ravel())
    assert np.allclose(fig.axes[1].get_lines()[0].get_ydata(), within)


def test_datasets_one_curve_per_data_set():
    runs = {ds: _panels(seed=i) for i, ds in enumerate(["patches", "digits", "gaussian"])}
    fig = figures.datasets(runs)
    assert _width(fig) <= MAX_FIGURE_WIDTH_IN and len(fig.axes) == 2
    left = fig.axes[0].get_lines()
    assert [ln.get_label() for ln in left] == list(runs)
    assert np.allclose(left[1].get_ydata(), np.log10(runs["digits"][1]["chi"]).mean(0))
    assert np.allclose(
        fig.axes[1].get_lines()[2].get_ydata(), runs["gaussian"][1]["reff_x"].mean(0)
    )


def test_batch_size_ours_and_authors():
    rng = np.random.default_rng(2)
    BT = study.batch_endpoints(
        {
            B: {k: rng.uniform(1, 9, (4, 3)) for k in ("chi", "kurt_z", "reff_x", "reff_dx")}
            for B in (16, 32, 64)
        }
    )
    fig = figures.batch_size(BT, published.bn_ff_fc_batch_study(), 200)
    assert _width(fig) <= MAX_FIGURE_WIDTH_IN and len(fig.axes) == 4
    for a, k in zip(fig.axes, ("log10_chi", "kurtosis", "reff_x", "reff_dx"), strict=False):
        ours, authors = a.get_lines()[0], a.get_lines()[-1]
        means = [e.mean for e in BT[k].values()]
        assert np.allclose(ours.get_xdata(), [16, 32, 64]) and np.allclose(ours.get_ydata(), means)
        assert np.allclose(authors.get_ydata(), published.bn_ff_fc_batch_study()[k])
        assert a.get_xscale() == "log"


def test_fig4_overlays_the_authors_curves_in_every_panel():
    d, Q = _panels()
    ref = published.fig4_reference("bn_ff_mnist", max_depth=int(d[-1]) if d[-1] >= 2 else 2)
    fig = figures.fig4(d, Q, "title", reference=ref)
    axes = fig.axes
    authors = [ln for ln in axes[1].get_lines() if ln.get_label() == "authors (dashed)"]
    assert len(authors) == 1 and np.allclose(authors[0].get_ydata(), ref["chi"][0])
    dashed = {
        k: [ln for ln in a.get_lines() if ln.get_linestyle() == "--"]
        for k, a in zip("abcd", axes[:4], strict=False)
    }
    assert (
        len(dashed["a"]) == 2 and len(dashed["c"]) == 2 and len(dashed["d"]) == 2
    )  # δ_BN, δ_φ; r_eff ×2; μ₄ and ν₁ on one axis
    assert np.allclose(dashed["c"][1].get_ydata(), ref["reff_dx"][0])
    # panel (d): linear while μ₄ and ν₁ stay within a decade (Fig. 5(d)), logarithmic once the
    # tails grow to ≈ 10² beside ν₁ < 1 (Fig. 4(d))
    assert axes[3].get_yscale() == "linear"
    fat = figures.fig4(d, {**Q, "kurt_z": 100 * Q["kurt_z"]}, "title", reference=ref)
    assert fat.axes[3].get_yscale() == "log" and plotting.legend_overlap(fat.axes[3]) == 0


def test_dbn_vs_conditioning_draws_the_arrays_of_the_summary():
    rng = np.random.default_rng(4)
    depth = np.arange(1, 16)
    rin = rng.uniform(1, 10, (3, depth.size))
    C = study.dbn_conditioning(
        depth, {"reff_signal_loc1": rin, "chi_loc1": np.ones_like(rin)}, {"dbn": 1 / rin}, l_min=10
    )
    fig = figures.dbn_vs_conditioning(
        **C["arrays"]
    )  # the figure draws exactly what the chapter saves
    pts = fig.axes[0].collections[0].get_offsets()
    assert np.allclose(pts[:, 0], rin[:, depth >= 10].ravel()) and np.allclose(
        pts[:, 1], 1 / rin[:, depth >= 10].ravel()
    )
    assert np.allclose(fig.axes[1].get_lines()[0].get_xdata(), depth[depth >= 10])
    assert np.allclose(fig.axes[1].get_lines()[0].get_ydata(), -1.0)


def test_datasets_draws_the_runs_of_the_study_and_their_saved_means():
    depth = np.arange(1, 21)
    runs = {}
    for i, ds in enumerate(["patches", "digits"]):
        chi4 = 10 ** (np.outer([0.1 + 0.01 * i, 0.12 + 0.01 * i], depth))
        ones = np.ones_like(chi4)
        runs[ds] = (
            depth,
            {
                "chi_loc1": chi4 / 10,
                "chi_loc3": chi4,
                "chi_loc4": chi4,
                "reff_signal_loc4": (2 + i) * ones,
                "reff_noise_loc4": ones,
                "mu4_signal_loc3": 3 * ones,
                "mu2_signal_loc3": ones,
                "nu1_abs_signal_loc3": ones,
                "nu2_signal_loc3": ones,
            },
        )
    D = study.bn_ff_dataset_study(runs, l_min=5)
    fig = figures.datasets(D["runs"])
    left = fig.axes[0].get_lines()
    assert [ln.get_label() for ln in left] == ["patches", "digits"]
    assert np.allclose(
        left[1].get_ydata(), np.log10(runs["digits"][1]["chi_loc4"]).mean(0)
    )  # mean log10 χ
    assert np.allclose(fig.axes[1].get_lines()[0].get_ydata(), D["arrays"]["patches_reff_x"])


def test_legend_overlap_sees_a_legend_over_a_curve_and_headroom_clears_it():
    import matplotlib.pyplot as plt

    x = np.linspace(0, 1, 200)
    for log in (False, True):
        fig, ax = plt.subplots(figsize=(4, 3))
        ax.plot(x, 1 + x * (1 - x) * 4, label="a hump")  # its top runs through the middle
        ax.plot(x, 1 + 0 * x + 0.5, label="a flat line")
        if log:
            ax.set_yscale("log")
        ax.legend(loc="upper center")
        assert plotting.legend_overlap(ax) > 0  # the default place covers the hump
        plotting.legend_in_headroom(ax)
        assert plotting.legend_overlap(ax) == 0
        plt.close(fig)


def test_clear_legends_makes_room_after_a_layout_shrinks_the_panel():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 4), layout="none")  # the layout is the test's own
    x = np.linspace(0, 1, 200)
    ax.plot(x, 1 - 4 * (x - 0.5) ** 2, label="a hump peaking mid-panel")
    ax.plot(x, 0 * x, label="a floor")
    plotting.legend_in_headroom(ax, pad=0.0, ncols=1)
    fig.subplots_adjust(top=0.45)  # a layout that halves the panel: the legend now covers data
    assert plotting.legends_over_data(fig)
    assert plotting.clear_legends(fig) == {} and plotting.legend_overlap(ax) == 0
    plt.close(fig)
