"""Chapter 7's figures drawn from small synthetic arrays: panels, plotted data, width."""

import matplotlib.colors
import matplotlib.pyplot as plt
import numpy as np
import pytest

from layerwise.chapter import MAX_FIGURE_WIDTH_IN
from layerwise.figures import ch07 as F


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _main_axes(fig):
    return [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]


def _fits(fig):
    assert fig.get_size_inches()[0] <= MAX_FIGURE_WIDTH_IN + 1e-9


def _has_line(ax, x, y):
    return any(
        np.array_equal(ln.get_xdata(), x) and np.array_equal(ln.get_ydata(), y)
        for ln in ax.get_lines()
    )


def test_length_map():
    q = np.linspace(0, 4, 9)
    curves = {
        1.3: dict(
            V=0.5 * q + 0.1, q_star=0.2, iterates=np.array([[0.1, 0.15, 0.19], [4.0, 2.1, 1.0]])
        ),
        4.0: dict(V=0.8 * q + 0.1, q_star=0.5, iterates=np.array([[0.1, 0.3, 0.45]])),
    }
    fig = F.length_map(q, curves)
    _fits(fig)
    left, right = fig.axes
    assert _has_line(left, q, curves[4.0]["V"]) and _has_line(left, q, q)  # map and identity
    assert _has_line(right, np.arange(3), curves[1.3]["iterates"][1])
    assert len(right.get_lines()) == 3 and right.get_yscale() == "log"


def test_maps_vs_networks():
    L = np.arange(4)
    qm, cm = (
        [np.array([1.0, 2, 3, 4]), np.array([4.0, 3, 2, 1])],
        [np.array([0.2, 0.4, 0.5, 0.6]), np.array([0.9, 0.8, 0.7, 0.7])],
    )
    se = [np.full(4, 0.01)] * 2
    fig = F.maps_vs_networks(
        L, ["a", "b"], qm, cm, [m * 1.01 for m in qm], se, [m + 0.01 for m in cm], se
    )
    _fits(fig)
    qax, cax = fig.axes
    assert _has_line(qax, L, qm[1]) and _has_line(cax, L, cm[0])
    assert len(qax.containers) == 2 and len(cax.containers) == 2  # one error-bar series per setting
    np.testing.assert_array_equal(qax.containers[0].lines[0].get_ydata(), qm[0] * 1.01)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["a", "b"]


def test_correlation_map():
    c = np.linspace(0, 1, 11)
    fig = F.correlation_map(
        c, {1.3: 0.5 + 0.5 * c, 2.5: 0.3 + 0.4 * c}, {1.3: 0.9, 2.5: 1.6}, {1.3: 1.0, 2.5: 0.5}
    )
    _fits(fig)
    (ax,) = fig.axes
    assert _has_line(ax, c, 0.3 + 0.4 * c) and _has_line(ax, c, c)
    assert _has_line(ax, [0.5], [0.5])  # the fixed point
    assert "chi_1=1.600" in ax.get_legend().get_texts()[1].get_text()


def test_phase_diagram():
    sw2, sb2 = np.linspace(0.5, 5, 8), np.linspace(0, 1, 8)
    chi = np.exp(np.log(sw2)[None] - sb2[:, None])
    pdg = dict(
        sigma_w2=sw2, sigma_b2=sb2, chi1=chi, sigma_b2_line=sb2, critical_sigma_w2=np.exp(sb2)
    )
    fig = F.phase_diagram(pdg, [(1.69, 0.09), (16.0, 0.09)])
    _fits(fig)
    (ax,) = _main_axes(fig)
    np.testing.assert_allclose(ax.collections[0].get_array().reshape(8, 8), np.log(chi))
    assert _has_line(ax, np.exp(sb2)[::4], sb2[::4])
    assert sum(ln.get_marker() == "*" for ln in ax.get_lines()) == 2


def test_phase_diagram_legend_clear_of_the_critical_line():
    """The chapter's layout: a grid over σw² ∈ [0.5, 5], a critical line rising from σw² = 1 to
    ≈ 3.4 at σb² = 1, and the circle settings (σw = 1.3, 2.5, 4) out to σw² = 16: the legend
    covers none of the line's dots."""
    from layerwise import plotting

    sw2, sb2 = np.linspace(0.5, 5, 40), np.linspace(0, 1, 40)
    line_b2 = np.linspace(0, 1, 81)
    pdg = dict(
        sigma_w2=sw2,
        sigma_b2=sb2,
        chi1=np.exp(np.log(sw2)[None] - sb2[:, None]),
        sigma_b2_line=line_b2,
        critical_sigma_w2=1 + 2.4 * np.sqrt(line_b2),
    )
    fig = F.phase_diagram(pdg, [(1.69, 0.09), (6.25, 0.09), (16.0, 0.09)])
    assert plotting.legends_over_data(fig) == {}


def test_circle_pca():
    theta = np.linspace(0, 2 * np.pi, 20, endpoint=False)
    pr = np.stack([np.cos(theta), np.sin(theta), 0 * theta], 1)
    runs = {sw: {"theta": theta, "proj_2": pr * sw, "proj_4": pr} for sw in (1.3, 4.0)}
    fig = F.circle_pca(runs, (2, 4))
    _fits(fig)
    assert len(fig.axes) == 4  # 2 settings × 2 layers
    np.testing.assert_allclose(fig.axes[1].get_lines()[0].get_data_3d()[0][:20], np.cos(theta))
    assert fig.axes[2].get_title() == r"$\sigma_w=4.0$, layer 2"


def test_circle_length():
    L = np.arange(5)
    lt = {
        1.3: np.array([np.exp(-0.1 * L), np.exp(-0.12 * L)]),
        4.0: np.array([np.exp(0.4 * L), np.exp(0.42 * L)]),
    }
    lc = {sw: v * 0.9 for sw, v in lt.items()}
    pv = {sw: np.full((1, 5, 3), 0.3) for sw in lt}
    fig = F.circle_length(L, lt, lc, {1.3: 0.8, 4.0: 2.3}, pv)
    _fits(fig)
    left, right = fig.axes
    assert _has_line(left, L, lt[4.0].mean(0)) and _has_line(left, L, lc[1.3].mean(0))
    assert _has_line(left, L, lt[4.0].mean(0)[0] * np.sqrt(2.3) ** L)  # the prediction
    assert _has_line(right, L, np.full(5, 0.6))  # top two of three components
    assert left.get_yscale() == "log"


def test_depth_scale_sweep():
    x = np.linspace(1, 4, 8)
    chi1 = 0.5 + x / 4  # crosses 1 at σ_w² = 2
    chi_c = np.where(chi1 < 1, chi1, 1 / chi1)
    curves = [dict(sigma_w2=x, chi1=chi1, chi_c=chi_c, critical=np.array(2.0))] * 2
    sw = np.array([1.0, 2.0, 3.0])
    sweep = dict(sigma_w2=sw, sigma_b2=np.array([0.05, 0.3]))
    rc = np.array([[0.3, 0.01, 0.2], [0.4, 0.1, 0.3]])
    rates = dict(
        rate_c=rc,
        rate_c_se=np.full((2, 3), 0.02),
        rate_grad=-rc,
        rate_grad_se=np.full((2, 3), 0.02),
    )
    fig = F.depth_scale_sweep(curves, sweep, rates)
    _fits(fig)
    assert len(fig.axes) == 4  # 2 × 2: one row per σ_b²
    left, right = fig.axes[2], fig.axes[3]
    assert _has_line(left, x, 1 / -np.log(chi_c)) and _has_line(right, x, -np.log(chi1))
    assert left.get_yscale() == "log" and right.get_title() == "rates, $\\sigma_b^2 = 0.3$"
    # measured rates with ± 2 s.e. on the right; on the left only the depths resolved from
    # zero (2 of 3 at σ_b² = 0.05)
    np.testing.assert_array_equal(right.containers[0].lines[0].get_ydata(), rc[1])
    assert _has_line(fig.axes[0], sw[[0, 2]], 1 / rc[0, [0, 2]])


@pytest.mark.parametrize("k_found", [2.0, None])
def test_trainability(k_found):
    sw2, depths = np.linspace(1, 4, 4), np.array([6, 12, 24])
    acc = np.linspace(0.1, 1, 12).reshape(4, 3)
    sw_fine, xi_fine = np.linspace(1, 4, 7), np.arange(1.0, 8.0)
    l_max = np.array([0, 12, 24, 6])
    fig = F.trainability(sw2, depths, acc, sw_fine, xi_fine, l_max, k_found, 100)
    _fits(fig)
    (ax,) = _main_axes(fig)
    np.testing.assert_allclose(ax.collections[0].get_array().reshape(3, 4), acc.T)
    assert _has_line(ax, sw_fine, 6 * xi_fine) and _has_line(ax, sw2[1:], l_max[1:])
    assert _has_line(ax, sw_fine, 2.0 * xi_fine) == (k_found is not None)
    assert ax.get_title() == "training accuracy after 100 SGD steps"
    leg = ax.get_legend()  # legible over any cell: white text and samples in a dark box
    face = leg.get_frame().get_facecolor()
    assert leg.get_frame_on() and max(face[:3]) < 0.3 and face[3] >= 0.8
    assert all(matplotlib.colors.to_rgb(t.get_color()) == (1, 1, 1) for t in leg.get_texts())
