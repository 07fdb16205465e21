"""The figures of Chapter 6 drawn from small synthetic arrays: panels, the data on them, width."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest
from conftest import assert_layout_stable
from matplotlib.collections import PolyCollection

from layerwise import plotting
from layerwise.chapter import MAX_FIGURE_WIDTH_IN, small_texts
from layerwise.figures import ch06 as figures


def quads(k: int, h: float = 1.0):
    """The square [-h, h]² cut into k vertical strips, padded to 5 vertices (P, M, 2), (P,)."""
    x = np.linspace(-h, h, k + 1)
    V = np.zeros((k, 5, 2))
    for i in range(k):
        V[i, :4] = [[x[i], -h], [x[i + 1], -h], [x[i + 1], h], [x[i], h]]
    return V, np.full(k, 4)


def polys(ax):
    cols = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(cols) == 1
    return cols[0]


def narrow(fig):
    assert fig.get_size_inches()[0] <= MAX_FIGURE_WIDTH_IN + 1e-9
    assert not small_texts(fig)  # every text readable at the column width
    plt.close(fig)


def test_arch_name():
    assert (
        figures.arch_name([16] * 6) == "[16]×6"
        and figures.arch_name([32, 32, 32]) == "[32, 32, 32]"
    )


def test_slice_regions():
    regs = [quads(k) for k in (2, 3, 5)]
    archs = [[6], [3, 3], [1] * 6]
    found = np.array([[0.5, 1.0], [0.3, 0.9], [0.2, 0.6]])
    uv = np.array([[0.1, 0.2], [-0.3, 0.4], [0.5, -0.6]])
    fig = figures.slice_regions(
        regs, archs, 1.0, uv, [3, 9], found, [np.random.default_rng(k) for k in range(3)]
    )
    axes = fig.axes
    assert len(axes) == 4
    for ax, (_, n), w in zip(axes[:3], regs, archs, strict=True):
        pc = polys(ax)
        assert len(pc.get_paths()) == len(n)
        assert ax.get_title() == f"{figures.arch_name(w)}: {len(n)} regions"
        assert ax.get_xlim() == (-1.0, 1.0)
        dots = ax.lines[0]
        assert np.array_equal(dots.get_xdata(), uv[:, 0]) and np.array_equal(
            dots.get_ydata(), uv[:, 1]
        )
    lines = [ln for ln in axes[3].lines if not ln.get_label().startswith("_")]
    assert [ln.get_label() for ln in lines] == [figures.arch_name(w) for w in archs]
    for ln, f in zip(lines, found, strict=True):
        assert np.array_equal(ln.get_xdata(), [3, 9]) and np.array_equal(ln.get_ydata(), f)
    narrow(fig)


def _errorbar_data(ax):
    """(x, y) of the data lines of errorbar containers, in drawing order."""
    return [(c.lines[0].get_xdata(), c.lines[0].get_ydata(), c.get_label()) for c in ax.containers]


def test_counts_vs_neurons():
    Ns = np.array([24.0, 48.0, 96.0])
    mean = np.array([[100.0, 90.0], [400.0, 380.0], [1600.0, 1500.0]])
    se = np.full_like(mean, 5.0)
    curve = np.array([[24.0, 60.0, 96.0], [120.0, 700.0, 1700.0]])
    ratio = np.array([[1.0, 0.9], [1.1, 1.05], [0.98, 1.2]])
    fig = figures.counts_vs_neurons(Ns, [1, 2], mean, se, curve, ratio, np.full_like(ratio, 0.05))
    assert_layout_stable(fig)  # legends above both panels
    ax1, ax2 = fig.axes
    data = _errorbar_data(ax1)
    assert [d[2] for d in data] == ["depth 1", "depth 2"]
    for d_i, (x, y, _) in enumerate(data):
        assert np.array_equal(x, Ns) and np.array_equal(y, mean[:, d_i])
    ref = [ln for ln in ax1.lines if ln.get_label() == "one layer, closed form"][0]
    assert np.array_equal(ref.get_xdata(), curve[0]) and np.array_equal(ref.get_ydata(), curve[1])
    per_n = _errorbar_data(ax2)
    assert [d[2] for d in per_n] == ["N = 24", "N = 48", "N = 96"]
    for n_i, (x, y, _) in enumerate(per_n):
        assert np.array_equal(y, ratio[n_i]) and np.allclose(np.round(x), [1, 2])
    # both legends sit above their panels, off the data (inside, six entries covered the N = 96
    # points at the default scale)
    fig.canvas.draw()
    for ax in fig.axes:
        assert ax.get_legend().get_window_extent().y0 >= ax.get_window_extent().y1
    narrow(fig)


def test_lines_vs_neurons():
    Ns = np.array([24.0, 48.0, 96.0])
    cross = np.array([[20.0, 25.0], [50.0, 45.0], [95.0, 100.0]])
    dist = 1.0 / cross
    curve = np.array([[24.0, 96.0], [0.05, 0.0125]])
    fig = figures.lines_vs_neurons(Ns, [1, 3], cross, 0.1 * cross, dist, 0.1 * dist, curve)
    ax1, ax2 = fig.axes
    for ax, v in ((ax1, cross), (ax2, dist)):
        data = _errorbar_data(ax)
        assert [d[2] for d in data] == ["depth 1", "depth 3"]
        for d_i, (x, y, _) in enumerate(data):
            assert np.array_equal(x, Ns) and np.array_equal(y, v[:, d_i])
        assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    line_n = [ln for ln in ax1.lines if ln.get_label() == "N (one layer)"][0]
    assert np.allclose(line_n.get_xdata(), line_n.get_ydata())
    ref = [ln for ln in ax2.lines if ln.get_label() == "one layer, closed form"][0]
    assert np.array_equal(ref.get_ydata(), curve[1])
    # the depths' colours once (left), the closed form alone on the right; no legend over data
    assert [t.get_text() for t in ax2.get_legend().get_texts()] == ["one layer, closed form"]
    assert len(ax1.get_legend().get_texts()) == 3
    assert plotting.legends_over_data(fig) == {}
    narrow(fig)


def test_training_sweep():
    ep = np.array([0, 3, 6])
    a = np.array([[1.0, 1.2, 1.5], [1.0, 0.8, 0.9]])
    b = np.array([[1.0, 2.0, 3.0]])
    fig = figures.training_sweep(
        ep,
        [
            ("raw", "regions / init", {"lr 1e-3": a, "lr 1e-4": b}),
            ("noise", "regions / init", {"0%": b}),
        ],
    )
    axes = fig.axes
    assert len(axes) == 4 and axes[0].get_title() == "raw" and not axes[2].get_visible()
    data = _errorbar_data(axes[0])
    assert [d[2] for d in data] == ["lr 1e-3", "lr 1e-4"]
    assert np.allclose(data[0][1], a.mean(0)) and np.array_equal(data[1][1], b[0])
    bars = (
        axes[0].containers[0].lines[2][0].get_segments()
    )  # error bar of the first curve, SE over 2 runs
    assert np.isclose(bars[1][1, 1] - bars[1][0, 1], 2 * np.std([1.2, 0.8], ddof=1) / np.sqrt(2))
    assert plotting.legends_over_data(fig) == {}
    for ax in axes[:2]:  # each legend in a band above every point of its panel
        y = np.concatenate([ax.transData.transform(ln.get_xydata())[:, 1] for ln in ax.lines])
        assert ax.get_legend().get_window_extent().y0 >= y.max()
    narrow(fig)


def test_activation_vs_linear():
    V, n = quads(6)
    labels = np.array([0, 1, 1, 1, 2, 3])
    members = np.array([1, 2, 3])
    uv = np.zeros((3, 2))
    fig = figures.activation_vs_linear(
        V, n, labels, members, 1.0, uv, np.random.default_rng(0), np.random.default_rng(1)
    )
    ax1, ax2 = fig.axes
    assert ax1.get_title() == "6 activation regions"
    assert ax2.get_title() == "4 linear regions (dark: 3 pieces)"
    fc = polys(ax2).get_facecolor()
    assert np.allclose(fc[members], (0.1, 0.1, 0.1, 1.0))
    assert not np.allclose(fc[[0, 4, 5]], (0.1, 0.1, 0.1, 1.0))
    assert len(np.unique(fc[members], axis=0)) == 1 and len(polys(ax1).get_paths()) == 6
    narrow(fig)
    # no non-convex linear region found: nothing dark, no "pieces" in the title
    fig = figures.activation_vs_linear(
        V,
        n,
        np.arange(6),
        np.zeros(0, dtype=int),
        1.0,
        uv,
        np.random.default_rng(0),
        np.random.default_rng(1),
    )
    assert fig.axes[1].get_title() == "6 linear regions"
    assert not np.any(
        np.all(np.isclose(polys(fig.axes[1]).get_facecolor(), (0.1, 0.1, 0.1, 1.0)), axis=1)
    )


def test_tangent_sensitivity():
    V, n = quads(4)
    norm = np.array([1.0, 2.0, 3.0, 4.0])
    areas = np.array([1.0, 1.0, 1.0, 5.0])
    fig = figures.tangent_sensitivity(V, n, norm, areas, 1.0, np.zeros((3, 2)))
    assert len(fig.axes) == 3  # two panels and the colour bar
    ax1, ax2 = fig.axes[0], fig.axes[1]
    fc = polys(ax1).get_facecolor()
    assert np.allclose(fc[0], plt.cm.magma(0.0)) and np.allclose(fc[-1], plt.cm.magma(1.0))
    heights = [
        p.get_height()
        for p in ax2.patches
        if p.get_label() != "each region once" and p.get_height() > 0
    ]
    assert sum(heights) == pytest.approx(1.0) and max(heights) == pytest.approx(5 / 8)
    narrow(fig)


def test_counts_training():
    # ratios to init: P = 2 preprocessings, R = 2 learning rates, S = 2 runs, T = 3 checkpoints;
    # L = 2
    rng = np.random.default_rng(0)
    ratio = {
        "count": 1 + rng.random((2, 2, 2, 3)),
        "noise": 1 + rng.random((2, 2, 3)),
        "crossings": 1 + rng.random((2, 2, 2, 3)),
        "dist": 1 + rng.random((2, 2, 2, 3)),
    }
    epoch = np.array([0, 2, 4])
    fig = figures.counts_training(epoch, ratio, ["raw", "pixel"], [1e-3, 1e-4], [0.0, 1.0])
    axes = fig.axes
    assert [ax.get_title() for ax in axes] == [
        "regions, true labels, lr 0.001",
        "regions, raw inputs, true labels",
        "regions, raw inputs, lr 0.001",
        "along lines, raw inputs, lr 0.001",
    ]
    want = [
        [ratio["count"][0, 0], ratio["count"][1, 0]],
        [ratio["count"][0, 0], ratio["count"][0, 1]],
        [ratio["noise"][0], ratio["noise"][1]],
        [ratio["crossings"][0, 0], ratio["dist"][0, 0]],
    ]
    labels = [
        ["raw", "pixel"],
        ["lr 0.001", "lr 0.0001"],
        ["0% random labels", "100% random labels"],
        ["boundary crossings", "distance to boundary"],
    ]
    for ax, curves, labs in zip(axes, want, labels, strict=True):
        data = _errorbar_data(ax)
        assert [d[2] for d in data] == labs
        for (x, y, _), v in zip(data, curves, strict=True):  # each curve: the mean over runs
            assert np.array_equal(x, epoch) and np.allclose(y, v.mean(0))
    narrow(fig)


def test_counts_by_step():
    steps = np.array([0, 1, 10, 100])
    mean = np.array([[0.0, 0.1, -0.2, -0.5], [0.0, 0.05, 0.0, 0.3]])
    se = np.full_like(mean, 0.05)
    fig = figures.counts_by_step(
        [("a", steps, mean, se, ["x", "y"]), ("b", steps[:3], mean[:1, :3], se[:1, :3], ["z"])]
    )
    left, right = fig.axes
    assert left.get_xscale() == "log" and len(left.get_legend().get_texts()) == 2
    # step 0 (log-ratio 0 by definition) is left out; the curves are the means after it
    line = left.get_lines()[0]
    np.testing.assert_allclose(line.get_xdata(), steps[1:])
    np.testing.assert_allclose(line.get_ydata(), mean[0, 1:])
    assert right.get_title() == "b"
    narrow(fig)
