"""Tests of the exact region counter (layerwise.regions) against closed forms, a brute-force
grid, a naive reference loop and invariants over random networks (hypothesis)."""

from math import comb

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from layerwise import networks, regions
from layerwise.params import ParameterError

SQUARE = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])


def lines_net(A, c):
    """One hidden layer whose neurons are the lines a·p + c = 0; the output sums them."""
    A, c = np.asarray(A, float), np.asarray(c, float)
    return [(A, c), (np.ones((1, len(c))), np.zeros(1))]


def random_net(rng, widths, d_in=2, bias=0.3):
    dims = [d_in, *widths, 1]
    return [
        (rng.standard_normal((b, a)) * np.sqrt(2 / a), rng.standard_normal(b) * bias)
        for a, b in zip(dims[:-1], dims[1:], strict=True)
    ]


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
    regs = regions.activation_regions(net, None, SQUARE)
    assert len(regs) == expected
    assert regions.count_regions(net, None, SQUARE, method="arrangement") == expected
    assert regions.activation_regions_naive(net, None, SQUARE) == expected
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
    regs = regions.activation_regions(net, None, SQUARE)
    assert len(regs) == expected
    assert regions.count_regions(net, None, SQUARE) == expected
    assert regions.grid_count(net, None, SQUARE, n=301) == expected
    assert regs.areas.sum() == pytest.approx(4.0, rel=1e-12)
    assert np.all(regs.areas > 0)


def test_two_layers_known():
    # layer 1: x > 0 and y > 0 (quadrants); layer 2: a neuron x + y - 1, on only in the quadrant
    # where both are on -> it splits that quadrant only.
    net = [
        (np.eye(2), np.zeros(2)),
        (np.array([[1.0, 1.0]]), np.array([-1.0])),
        (np.ones((1, 1)), np.zeros(1)),
    ]
    assert len(regions.activation_regions(net, None, SQUARE)) == 5
    assert regions.count_regions(net, None, SQUARE) == 5
    # a second-layer neuron that is a bent line: relu(x) - relu(-x)… here relu(x)+relu(y)-0.5
    net2 = [
        (np.array([[1.0, 0], [0, 1], [-1, 0]]), np.zeros(3)),
        (np.array([[1.0, 1.0, 1.0]]), np.array([-0.5])),
        (np.ones((1, 1)), np.zeros(1)),
    ]
    # pieces: x>0,y>0 (split by x+y=.5), x>0,y<0 (split by x=.5), x<0,y>0 (split by y-x=.5),
    # x<0,y<0 (split by -x=.5)
    assert regions.count_regions(net2, None, SQUARE) == 8


# -- agreement with brute force ------------------------------------------------------------------
def test_grid_converges_from_below():
    rng = np.random.default_rng(3)
    net = random_net(rng, [6, 6])
    exact = regions.count_regions(net, None, SQUARE)
    grids = [regions.grid_count(net, None, SQUARE, n=k) for k in (10, 40, 160, 640)]
    assert all(g <= exact for g in grids)
    assert grids == sorted(grids)
    assert grids[-1] >= exact - 2  # only slivers thinner than 1/640 of the side may be missed


def test_nested_grids_never_lose_patterns():
    # grids of n, 3n, 9n cells per side are nested (every cell centre of the coarse grid is a
    # cell centre of the fine one), so their pattern counts can only rise, up to the exact count
    rng = np.random.default_rng(5)
    net = regions.he_mlp(20, [10, 10], 1, seed=7)
    plane = regions.plane_through(rng.standard_normal((3, 20)))
    exact = regions.count_regions(net, plane)
    grids = [regions.grid_count(net, plane, n=k) for k in (12, 36, 108, 324)]
    assert grids == sorted(grids) and grids[-1] <= exact
    assert grids[0] < exact  # the coarse grid misses regions, so the test has something to see
    g = (np.arange(12) + 0.5) / 12
    G = (np.arange(36) + 0.5) / 36
    assert np.allclose(g, G[1::3])


def test_matches_naive_in_high_dimension():
    rng = np.random.default_rng(0)
    net = regions.he_mlp(50, [12, 10, 8], 1, seed=4)
    plane = regions.plane_through(rng.standard_normal((3, 50)))
    regs = regions.activation_regions(net, plane)
    # the regions tile the square of the slice (the snapping tolerance is 1e-9 of its diagonal)
    assert regs.areas.sum() == pytest.approx((2 * plane.half_width) ** 2, rel=1e-9)
    naive = regions.activation_regions_naive(net, plane, count_only=False)
    assert len(regs) == len(naive) == regions.count_regions(net, plane)
    a = {p.tobytes() for p in np.packbits(regs.patterns, axis=1)}
    b = {p.tobytes() for p in np.packbits(np.array([q for _, q in naive]), axis=1)}
    assert a == b


def test_plane_through():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((3, 7))
    pl = regions.plane_through(X)
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
    regs = regions.activation_regions(net, None, SQUARE)
    # the regions tile the square
    assert regs.areas.sum() == pytest.approx(4.0, rel=1e-9)
    assert np.all(regs.areas > 0)
    # one region per pattern; both counters agree; the grid never over-counts
    packed = np.packbits(regs.patterns, axis=1)
    assert len(np.unique(packed, axis=0)) == len(regs)
    assert regions.count_regions(net, None, SQUARE) == len(regs)
    assert regions.grid_count(net, None, SQUARE, n=60) <= len(regs)
    # random points: their pattern is that of the region containing them, and the region's
    # affine map reproduces the network there
    U = rng.uniform(-1, 1, (20, 2))
    where = regs.locate(U, tol=1e-12)
    assert np.all(where >= 0)
    pats = regions.patterns_at(net, U)
    fx = regions.forward(net, U)[:, 0]
    m = regs.maps[where, 0]
    assert np.allclose(m[:, 0] * U[:, 0] + m[:, 1] * U[:, 1] + m[:, 2], fx, atol=1e-9)
    z = regions.patterns_at(net, regs.centroids())
    assert np.array_equal(z, regs.patterns)
    assert np.array_equal(pats, regs.patterns[where])
    # merging into linear regions never adds pieces, and merges only equal affine maps
    labels = regions.linear_regions(regs)
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
    assert regions.count_regions(net, None, SQUARE, method="polygons") == 1 + n + inner
    assert regions.count_regions(net, None, SQUARE, method="arrangement") == 1 + n + inner


# -- linear regions, sensitivity -----------------------------------------------------------------
def test_linear_regions_merge_nonconvex():
    # f = relu(1/4 - relu(x) - relu(y)) vanishes on the L-shaped set relu(x) + relu(y) >= 1/4,
    # made of three convex activation regions (the slides' C-shaped linear region)
    net = [
        (np.eye(2), np.zeros(2)),
        (np.array([[-1.0, -1.0]]), np.array([0.25])),
        (np.ones((1, 1)), np.zeros(1)),
    ]
    regs = regions.activation_regions(net, None, SQUARE)
    assert len(regs) == 7
    labels = regions.linear_regions(regs)
    assert labels.max() + 1 == 5
    zero = np.flatnonzero(np.all(np.abs(regs.maps[:, 0]) < 1e-12, axis=1))
    assert len(zero) == 3 and len(np.unique(labels[zero])) == 1
    assert regions.convex_deficit(regs, zero) > 0.01
    for lab in np.unique(labels):
        if lab != labels[zero[0]]:
            assert regions.convex_deficit(regs, np.flatnonzero(labels == lab)) < 1e-9


def sens(net, X, directions):
    """Tangent sample sensitivity of a regions network (float64), as numpy."""
    return networks.tangent_sensitivity(
        networks.from_pairs(regions.as_weights(net)), X, directions=directions
    ).numpy()


def test_tangent_sensitivity_constant_on_regions():
    net = regions.he_mlp(5, [6, 6], 1, seed=2)
    rng = np.random.default_rng(0)
    plane = regions.plane_through(rng.standard_normal((3, 5)))
    regs = regions.activation_regions(net, plane)
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
    net = regions.he_mlp(6, [8, 8], 1, seed=3)
    rng = np.random.default_rng(2)
    plane = regions.plane_through(rng.standard_normal((3, 6)))
    regs = regions.activation_regions(net, plane)
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
    g = regions.growth_exponent(N, exact)
    assert g.mean == pytest.approx(2.0, abs=1e-12) and g.se < 1e-6
    assert g.dof == 10 and g.n == 12
    rng = np.random.default_rng(0)
    c = np.round(exact * np.exp(0.3 * rng.standard_normal(exact.shape))) + 1
    g = regions.growth_exponent(N, c)
    x, yv = np.repeat(np.log(N), 4), np.log(c).ravel()
    b, a = np.polyfit(x, yv, 1)
    res = yv - (a + b * x)
    se = np.sqrt(res @ res / (len(x) - 2) / ((x - x.mean()) @ (x - x.mean())))
    assert g.mean == pytest.approx(b, rel=1e-10) and g.se == pytest.approx(se, rel=1e-10)
    with pytest.raises(ParameterError, match="shape"):
        regions.growth_exponent(N, c[:2])
    with pytest.raises(ParameterError, match=">= 1"):
        regions.growth_exponent(N, c * 0)
    with pytest.raises(ParameterError, match="distinct"):
        regions.growth_exponent([24], c[:1, :3])


def test_bad_input():
    with pytest.raises(ParameterError, match="method"):
        regions.count_regions(lines_net([[1, 0]], [0]), None, SQUARE, method="grid")
    with pytest.raises(ParameterError, match="widths"):
        regions.he_mlp(4, [], 1)
    with pytest.raises(ParameterError, match="widths"):
        regions.he_mlp(4, [3, 0], 1)
    with pytest.raises(ParameterError, match="polygon"):
        regions.activation_regions(
            lines_net([[1, 0]], [0]), None, np.array([[0, 0], [1, 1], [2, 2.0]])
        )
    with pytest.raises(ParameterError, match="convex"):
        regions.activation_regions(
            lines_net([[1, 0]], [0]), None, np.array([[0, 0], [2, 0], [1, 0.2], [2, 2], [0, 2.0]])
        )
    with pytest.raises(ParameterError, match="points"):
        regions.plane_through(np.zeros((3, 4)))
    with pytest.raises(ParameterError, match="plane"):
        regions.activation_regions(regions.he_mlp(4, [3], 1), None, SQUARE)
    with pytest.raises(ParameterError, match="tol"):
        regions.activation_regions(lines_net([[1, 0]], [0]), None, SQUARE, tol=0)


def test_largest_linear_region_closed_form():
    # the L-shaped zero set of relu(1/4 - relu(x) - relu(y)) on [-1, 1]²: area 4 − 49/32 = 79/32,
    # its hull cuts the corner (−1, −1) along the line through (1/4, −1) and (−1, 1/4):
    # area 4 − 1.25²/2
    net = [
        (np.eye(2), np.zeros(2)),
        (np.array([[-1.0, -1.0]]), np.array([0.25])),
        (np.ones((1, 1)), np.zeros(1)),
    ]
    regs = regions.activation_regions(net, None, SQUARE)
    members, deficit = regions.largest_linear_region(regs, regions.linear_regions(regs))
    assert np.all(np.abs(regs.maps[members, 0]) < 1e-12) and len(members) == 3
    assert regs.areas[members].sum() == pytest.approx(79 / 32, rel=1e-12)
    assert deficit == pytest.approx(1 - (79 / 32) / (4 - 1.25**2 / 2), abs=1e-12)
    with pytest.raises(ParameterError, match="more than one"):
        regions.largest_linear_region(regs, np.arange(len(regs)))


def test_montufar_exponent():
    # one layer: 1 + N + N(N−1)/2 regions, slope → 2; two layers of N/2:
    # (N/4)²·(1 + N/2 + C(N/2, 2))
    N = [24, 48]
    one = [regions.montufar_max([n]) for n in N]
    assert regions.montufar_exponent(N, 1) == pytest.approx(np.log(one[1] / one[0]) / np.log(2))
    two = [(n // 4) ** 2 * (1 + n // 2 + (n // 2) * (n // 2 - 1) / 2) for n in N]
    assert regions.montufar_exponent(N, 2) == pytest.approx(np.log(two[1] / two[0]) / np.log(2))
    assert regions.montufar_exponent(N, 2, n_in=1) == pytest.approx(
        np.log(24 * 25 / (12 * 13)) / np.log(2)
    )
    with pytest.raises(ParameterError, match="two distinct"):
        regions.montufar_exponent([24, 24], 1)


# ---------------------------------------------------------------------------------------------
# Closed forms at initialisation, lines and distances
# ---------------------------------------------------------------------------------------------
def zero_bias_layer(rng, n, d_in):
    """One hidden layer of n ReLUs, isotropic Gaussian weights, zero biases (and a read-out)."""
    return [
        (rng.standard_normal((n, d_in)), np.zeros(n)),
        (rng.standard_normal((1, n)), np.zeros(1)),
    ]


def test_slice_angles_closed_form():
    # square of half-width a centred on the foot of the perpendicular from the origin, at distance d
    a, d = 1.3, 0.7
    plane = regions.Plane(
        np.array([0.0, 0.0, d]), np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]), a
    )
    om, phi = regions.slice_angles(plane)
    assert np.isclose(om, 4 * np.arcsin(a * a / (a * a + d * d)), rtol=1e-12)
    assert np.isclose(phi, 8 * np.arctan(a / np.hypot(d, a)), rtol=1e-12)
    with pytest.raises(ParameterError, match="origin"):
        regions.slice_angles(regions.Plane(np.zeros(3), plane.basis, a))


def test_one_layer_expected_count_monte_carlo():
    rng = np.random.default_rng(0)
    plane = regions.Plane(
        np.array([0.2, -0.1, 0.8]), np.array([[1.0, 0.0], [0.0, 0.6], [0.0, 0.8]]), 1.1
    )
    om, phi = regions.slice_angles(plane)
    n = 12
    c = np.array(
        [regions.count_regions(zero_bias_layer(rng, n, 3), plane) for _ in range(600)], dtype=float
    )
    expected = regions.one_layer_expected_count(n, om, phi)
    assert abs(c.mean() - expected) < 4 * c.std(ddof=1) / np.sqrt(len(c))
    # the whole plane: every line and every pair meets it (Ω = 2π, Φ = 2π): 1 + n + n(n − 1)/2
    assert regions.one_layer_expected_count(n, 2 * np.pi, 2 * np.pi) == 1 + n + n * (n - 1) / 2


def test_line_breakpoints_brute_force():
    rng = np.random.default_rng(1)
    for widths in ([5], [6, 4], [4, 4, 4]):
        net = random_net(rng, widths, d_in=3)
        a, b = rng.standard_normal(3), rng.standard_normal(3)
        t = regions.line_breakpoints(net, a, b)
        assert np.all(np.diff(t) > 0) and np.all((t > 0) & (t < 1))
        s = np.linspace(0, 1, 200001)
        pats = regions.patterns_at(net, a + s[:, None] * (b - a))
        changes = s[1:][np.any(pats[1:] != pats[:-1], axis=1)]
        assert len(changes) == len(t) and np.allclose(changes, t, atol=2e-5)
    # one layer: a neuron's boundary is crossed iff its pre-activation changes sign between the ends
    (W, c), _ = net_l = zero_bias_layer(rng, 20, 4)
    a, b = rng.standard_normal(4), rng.standard_normal(4)
    assert len(regions.line_breakpoints(net_l, a, b)) == int(
        np.sum(np.sign(W @ a) != np.sign(W @ b))
    )
    with pytest.raises(ParameterError, match="dimension"):
        regions.line_breakpoints(net_l, a[:3], b)


def test_boundary_distance_brute_force():
    rng = np.random.default_rng(2)
    net = random_net(rng, [6, 5, 4], d_in=3)
    X = rng.standard_normal((5, 3))
    dist = regions.boundary_distance(net, X)
    for x, d in zip(X, dist, strict=True):
        p0 = regions.patterns_at(net, x[None])
        u = rng.standard_normal((4000, 3))
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        assert np.all(
            regions.patterns_at(net, x + (1 - 1e-6) * d * u) == p0
        )  # the open ball keeps the pattern
        # beyond the nearest facet's hyperplane (a cap of ~2.4 % of directions at 1.05 d) the
        # region is left
        assert np.any(regions.patterns_at(net, x + 1.05 * d * u) != p0)


def test_one_layer_line_and_distance_monte_carlo():
    rng = np.random.default_rng(3)
    n, d_in = 10, 5
    a, b = rng.standard_normal(d_in), rng.standard_normal(d_in)
    nets = [zero_bias_layer(rng, n, d_in) for _ in range(3000)]
    cr = np.array([len(regions.line_breakpoints(w, a, b)) for w in nets], dtype=float)
    assert abs(cr.mean() - regions.one_layer_line_crossings(n, a, b)) < 4 * cr.std(
        ddof=1
    ) / np.sqrt(len(cr))
    di = np.array([regions.boundary_distance(w, a[None])[0] for w in nets])
    assert abs(di.mean() - regions.one_layer_distance(n, np.linalg.norm(a), d_in)) < 4 * di.std(
        ddof=1
    ) / np.sqrt(len(di))
    # large n: |x| sqrt(pi / (2 n_in)) / n
    assert np.isclose(
        regions.one_layer_distance(2000, 1.0, 64) * 2000, np.sqrt(np.pi / 128), rtol=0.02
    )


def test_pair_exponent_and_density_by_depth():
    N = [10, 20, 40]
    v = np.array([[1.0, 3.0], [4.0, 12.0], [16.0, 48.0]])  # exactly N^2 up to a per-pair constant
    e = regions.pair_exponent(N, v)
    assert np.isclose(e.mean, 2.0) and e.se < 1e-12 and (e.dof, e.n) == (1, 2)
    with pytest.raises(ParameterError, match="shape"):
        regions.pair_exponent(N, v[:2])
    om, phi = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    E = regions.one_layer_expected_count(np.array(N)[:, None], om, phi)
    counts = np.stack([E, 2 * E], axis=1)  # depth 1 at the closed form, depth 2 at twice it
    d = regions.density_by_depth(counts, om, phi, N)
    assert (
        np.allclose(d["mean"][:, 0], 1)
        and np.allclose(d["mean"][:, 1], 2)
        and np.allclose(d["se"], 0)
    )
    assert d["dof"] == 1 and np.allclose(d["ratio"][:, 1], 2)
