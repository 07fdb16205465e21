"""Tests of the exact region counter (layerwise.regions) against closed forms, a brute-force
grid, a naive reference loop and invariants over random networks (hypothesis)."""

from math import comb

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from layerwise import networks as nw
from layerwise import regions as R
from layerwise.params import ParameterError

SQUARE = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])


def lines_net(A, c):
    """One hidden layer whose neurons are the lines a·p + c = 0; the output sums them."""
    A, c = np.asarray(A, float), np.asarray(c, float)
    return [(A, c), (np.ones((1, len(c))), np.zeros(1))]


def random_net(rng, widths, d_in=2, bias=0.3):
    dims = [d_in, *widths, 1]
    return [(rng.standard_normal((b, a)) * np.sqrt(2 / a), rng.standard_normal(b) * bias)
            for a, b in zip(dims[:-1], dims[1:])]


# -- hand-built networks with known counts ------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 5, 12])
def test_lines_in_general_position(n):
    # lines with evenly spread directions through points near the centre: every pairwise
    # intersection lies inside the square (checked below), no three are concurrent
    rng = np.random.default_rng(n)
    th = np.pi * (np.arange(n) + 0.37) / n
    A = np.stack([np.cos(th), np.sin(th)], 1)
    c = -(A * rng.uniform(-0.05, 0.05, (n, 2))).sum(1)
    for i in range(n):
        for j in range(i):
            q = np.linalg.solve(A[[i, j]], -c[[i, j]])
            assert np.all(np.abs(q) < 0.95)
    net = lines_net(A, c)
    expected = 1 + n + comb(n, 2)
    regs = R.activation_regions(net, None, SQUARE)
    assert len(regs) == expected
    assert R.count_regions(net, None, SQUARE, method="arrangement") == expected
    assert R.activation_regions_naive(net, None, SQUARE) == expected
    assert regs.areas.sum() == pytest.approx(4.0, rel=1e-12)


def test_degenerate_lines():
    # a line through a vertex, one along an edge, two parallel lines, three concurrent lines,
    # a duplicated line and a constant (dead) neuron
    A = [[1, -1], [0, 1], [1, 0], [1, 0], [1, 1], [1, -1], [0, 1], [0, 0], [1, 1]]
    c = [0, -1, 0.5, -0.5, 0, 0, 0, 1.0, 0]
    net = lines_net(A, c)
    # distinct lines cutting the interior: y=x (diagonal through two vertices), x=-0.5, x=0.5,
    # x+y=0, y=0 -- the diagonal y=x, x+y=0 and y=0 meet at the origin (one point).
    # chords added in order: y=x (+1), x=-0.5 (+1+1), x=0.5 (+1+1), x+y=0 (+1+1+2 at ±0.5,
    # origin), y=0 (+1 + points (−0.5,0),(0.5,0),(0,0) = +4) -> 1+1+2+2+4+4 = 14
    expected = 14
    regs = R.activation_regions(net, None, SQUARE)
    assert len(regs) == expected
    assert R.count_regions(net, None, SQUARE) == expected
    assert R.grid_count(net, None, SQUARE, n=301) == expected
    assert regs.areas.sum() == pytest.approx(4.0, rel=1e-12)
    assert np.all(regs.areas > 0)


def test_two_layers_known():
    # layer 1: x > 0 and y > 0 (quadrants); layer 2: a neuron x + y - 1, on only in the quadrant
    # where both are on -> it splits that quadrant only.
    net = [(np.eye(2), np.zeros(2)), (np.array([[1.0, 1.0]]), np.array([-1.0])),
           (np.ones((1, 1)), np.zeros(1))]
    assert len(R.activation_regions(net, None, SQUARE)) == 5
    assert R.count_regions(net, None, SQUARE) == 5
    # a second-layer neuron that is a bent line: relu(x) - relu(-x)… here relu(x)+relu(y)-0.5
    net2 = [(np.array([[1.0, 0], [0, 1], [-1, 0]]), np.zeros(3)),
            (np.array([[1.0, 1.0, 1.0]]), np.array([-0.5])), (np.ones((1, 1)), np.zeros(1))]
    # pieces: x>0,y>0 (split by x+y=.5), x>0,y<0 (split by x=.5), x<0,y>0 (split by y-x=.5),
    # x<0,y<0 (split by -x=.5)
    assert R.count_regions(net2, None, SQUARE) == 8


# -- agreement with brute force ------------------------------------------------------------------
def test_grid_converges_from_below():
    rng = np.random.default_rng(3)
    net = random_net(rng, [6, 6])
    exact = R.count_regions(net, None, SQUARE)
    grids = [R.grid_count(net, None, SQUARE, n=k) for k in (10, 40, 160, 640)]
    assert all(g <= exact for g in grids)
    assert grids == sorted(grids)
    assert grids[-1] >= exact - 2  # only slivers thinner than 1/640 of the side may be missed


def test_nested_grids_never_lose_patterns():
    # grids of n, 3n, 9n cells per side are nested (every cell centre of the coarse grid is a
    # cell centre of the fine one), so their pattern counts can only rise, up to the exact count
    rng = np.random.default_rng(5)
    net = R.he_mlp(20, [10, 10], 1, seed=7)
    plane = R.plane_through(rng.standard_normal((3, 20)))
    exact = R.count_regions(net, plane)
    grids = [R.grid_count(net, plane, n=k) for k in (12, 36, 108, 324)]
    assert grids == sorted(grids) and grids[-1] <= exact
    assert grids[0] < exact  # the coarse grid misses regions, so the test has something to see
    g = (np.arange(12) + 0.5) / 12
    G = (np.arange(36) + 0.5) / 36
    assert np.allclose(g, G[1::3])


def test_matches_naive_in_high_dimension():
    rng = np.random.default_rng(0)
    net = R.he_mlp(50, [12, 10, 8], 1, seed=4)
    plane = R.plane_through(rng.standard_normal((3, 50)))
    regs = R.activation_regions(net, plane)
    # the regions tile the square of the slice (the snapping tolerance is 1e-9 of its diagonal)
    assert regs.areas.sum() == pytest.approx((2 * plane.half_width) ** 2, rel=1e-9)
    naive = R.activation_regions_naive(net, plane, count_only=False)
    assert len(regs) == len(naive) == R.count_regions(net, plane)
    a = {p.tobytes() for p in np.packbits(regs.patterns, axis=1)}
    b = {p.tobytes() for p in np.packbits(np.array([q for _, q in naive]), axis=1)}
    assert a == b


def test_plane_through():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((3, 7))
    pl = R.plane_through(X)
    uv = pl.to_plane(X)
    assert np.allclose(pl.to_input(uv), X)
    r = np.linalg.norm(uv, axis=1)
    assert np.allclose(r, r[0]) and pl.half_width == pytest.approx(1.25 * r[0])
    assert np.allclose(pl.basis.T @ pl.basis, np.eye(2))


# -- property-based ------------------------------------------------------------------------------
nets = st.tuples(
    st.integers(0, 2**31 - 1),
    st.lists(st.integers(1, 5), min_size=1, max_size=3),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nets)
def test_properties_random_networks(spec):
    seed, widths = spec
    rng = np.random.default_rng(seed)
    net = random_net(rng, widths)
    regs = R.activation_regions(net, None, SQUARE)
    # the regions tile the square
    assert regs.areas.sum() == pytest.approx(4.0, rel=1e-9)
    assert np.all(regs.areas > 0)
    # one region per pattern; both counters agree; the grid never over-counts
    packed = np.packbits(regs.patterns, axis=1)
    assert len(np.unique(packed, axis=0)) == len(regs)
    assert R.count_regions(net, None, SQUARE) == len(regs)
    assert R.grid_count(net, None, SQUARE, n=60) <= len(regs)
    # random points: their pattern is that of the region containing them, and the region's
    # affine map reproduces the network there
    U = rng.uniform(-1, 1, (20, 2))
    where = regs.locate(U, tol=1e-12)
    assert np.all(where >= 0)
    pats = R.patterns_at(net, U)
    fx = R.forward(net, U)[:, 0]
    m = regs.maps[where, 0]
    assert np.allclose(m[:, 0] * U[:, 0] + m[:, 1] * U[:, 1] + m[:, 2], fx, atol=1e-9)
    z = R.patterns_at(net, regs.centroids())
    assert np.array_equal(z, regs.patterns)
    assert np.array_equal(pats, regs.patterns[where])
    # merging into linear regions never adds pieces, and merges only equal affine maps
    labels = R.linear_regions(regs)
    assert labels.max() + 1 <= len(regs)
    for lab in np.unique(labels):
        m = regs.maps[labels == lab, 0]
        assert np.allclose(m, m[0], rtol=1e-7, atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 9))
def test_lines_count_formula_random(seed, n):
    # random lines through points of the inner square: count = 1 + m + (#interior crossings)
    rng = np.random.default_rng(seed)
    th = rng.uniform(0, np.pi, n)
    A = np.stack([np.cos(th), np.sin(th)], 1)
    p = rng.uniform(-0.5, 0.5, (n, 2))
    c = -(A * p).sum(1)
    net = lines_net(A, c)
    inner = 0
    for i in range(n):
        for j in range(i):
            M = np.array([A[i], A[j]])
            if abs(np.linalg.det(M)) < 1e-9:
                continue
            q = np.linalg.solve(M, -np.array([c[i], c[j]]))
            inner += bool(np.all(np.abs(q) < 1))
    assert R.count_regions(net, None, SQUARE, method="polygons") == 1 + n + inner
    assert R.count_regions(net, None, SQUARE, method="arrangement") == 1 + n + inner


# -- linear regions, sensitivity -----------------------------------------------------------------
def test_linear_regions_merge_nonconvex():
    # f = relu(1/4 - relu(x) - relu(y)) vanishes on the L-shaped set relu(x) + relu(y) >= 1/4,
    # made of three convex activation regions (the slides' C-shaped linear region)
    net = [(np.eye(2), np.zeros(2)), (np.array([[-1.0, -1.0]]), np.array([0.25])),
           (np.ones((1, 1)), np.zeros(1))]
    regs = R.activation_regions(net, None, SQUARE)
    assert len(regs) == 7
    labels = R.linear_regions(regs)
    assert labels.max() + 1 == 5
    zero = np.flatnonzero(np.all(np.abs(regs.maps[:, 0]) < 1e-12, axis=1))
    assert len(zero) == 3 and len(np.unique(labels[zero])) == 1
    assert R.convex_deficit(regs, zero) > 0.01
    for lab in np.unique(labels):
        if lab != labels[zero[0]]:
            assert R.convex_deficit(regs, np.flatnonzero(labels == lab)) < 1e-9


def sens(net, X, directions):
    """Tangent sample sensitivity of a regions network (float64), as numpy."""
    return nw.tangent_sensitivity(nw.from_pairs(R.as_weights(net)), X, directions=directions).numpy()


def test_tangent_sensitivity_constant_on_regions():
    net = R.he_mlp(5, [6, 6], 1, seed=2)
    rng = np.random.default_rng(0)
    plane = R.plane_through(rng.standard_normal((3, 5)))
    regs = R.activation_regions(net, plane)
    big = np.argsort(regs.areas)[-3:]
    for i in big:
        P = regs.polygon(i)
        w = rng.dirichlet(np.ones(len(P)), size=4)
        X = plane.to_input(w @ P)
        S = sens(net, X, plane.basis)
        assert np.allclose(S, S[0], atol=1e-12)
    S2 = sens(net, plane.to_input(regs.centroids()[big]), plane.basis)
    assert not np.allclose(S2[0], S2[1])


def test_sensitivity_area_weighted_mean():
    # Sens is a function of the region, so its mean square over uniform points of the square
    # is the area-weighted mean over regions (Daróczy, slides §3): Monte-Carlo within 4 s.e.
    net = R.he_mlp(6, [8, 8], 1, seed=3)
    rng = np.random.default_rng(2)
    plane = R.plane_through(rng.standard_normal((3, 6)))
    regs = R.activation_regions(net, plane)
    S = sens(net, plane.to_input(regs.centroids()), plane.basis)
    sq = (S**2).sum((1, 2))
    by_region = float((regs.areas * sq).sum() / regs.areas.sum())
    h = plane.half_width
    U = rng.uniform(-h, h, (3000, 2))
    mc = (sens(net, plane.to_input(U), plane.basis) ** 2).sum((1, 2))
    assert abs(mc.mean() - by_region) <= 4 * mc.std(ddof=1) / np.sqrt(len(mc))
    # and point by point: the value at x is the value of the region containing x
    where = regs.locate(U, tol=1e-9)
    assert np.all(where >= 0)
    assert np.allclose(mc, sq[where], rtol=1e-9)
    assert np.std(sq) > 0.01 * np.mean(sq)  # not constant across regions: the test can fail


def test_growth_exponent():
    N = [24, 48, 96]
    exact = 0.5 * np.array(N, float)[:, None] ** 2 * np.ones((1, 4))
    g = R.growth_exponent(N, exact)
    assert g["slope"] == pytest.approx(2.0, abs=1e-12) and g["se"] < 1e-6
    assert g["dof"] == 10 and g["points"] == 12
    rng = np.random.default_rng(0)
    c = np.round(exact * np.exp(0.3 * rng.standard_normal(exact.shape))) + 1
    g = R.growth_exponent(N, c)
    x, yv = np.repeat(np.log(N), 4), np.log(c).ravel()
    b, a = np.polyfit(x, yv, 1)
    res = yv - (a + b * x)
    se = np.sqrt(res @ res / (len(x) - 2) / ((x - x.mean()) @ (x - x.mean())))
    assert g["slope"] == pytest.approx(b, rel=1e-10) and g["se"] == pytest.approx(se, rel=1e-10)
    with pytest.raises(ParameterError, match="shape"):
        R.growth_exponent(N, c[:2])
    with pytest.raises(ParameterError, match=">= 1"):
        R.growth_exponent(N, c * 0)
    with pytest.raises(ParameterError, match="distinct"):
        R.growth_exponent([24], c[:1, :3])


def test_bad_input():
    with pytest.raises(ParameterError, match="method"):
        R.count_regions(lines_net([[1, 0]], [0]), None, SQUARE, method="grid")
    with pytest.raises(ParameterError, match="widths"):
        R.he_mlp(4, [], 1)
    with pytest.raises(ParameterError, match="widths"):
        R.he_mlp(4, [3, 0], 1)
    with pytest.raises(ParameterError, match="polygon"):
        R.activation_regions(lines_net([[1, 0]], [0]), None, np.array([[0, 0], [1, 1], [2, 2.0]]))
    with pytest.raises(ParameterError, match="convex"):
        R.activation_regions(lines_net([[1, 0]], [0]), None,
                             np.array([[0, 0], [2, 0], [1, 0.2], [2, 2], [0, 2.0]]))
    with pytest.raises(ParameterError, match="points"):
        R.plane_through(np.zeros((3, 4)))
    with pytest.raises(ParameterError, match="plane"):
        R.activation_regions(R.he_mlp(4, [3], 1), None, SQUARE)
    with pytest.raises(ParameterError, match="tol"):
        R.activation_regions(lines_net([[1, 0]], [0]), None, SQUARE, tol=0)
