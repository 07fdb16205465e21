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


# -- Chapter 6 as calls --------------------------------------------------------------------------
CH6 = dict(neurons=[24, 48], depths=[1, 2, 3], n_nets=2, epochs=3, label_noise=[0.0, 1.0], n_train_seeds=1,
           grid_sizes=[4, 12], n_line_nets=3, n_check_nets=4, preprocessings=["raw", "pixel"], lrs=[1e-3])


def test_check_chapter_params():
    assert R.check_chapter_params(CH6) == [[24], [12, 12], [8, 8, 8], [48], [24, 24], [16, 16, 16]]
    for bad, match in [(dict(neurons=[25]), "divisible"), (dict(n_nets=0), "n_nets"), (dict(epochs=1.5), "epochs"),
                       (dict(label_noise=[]), "non-empty"), (dict(grid_sizes=[]), "non-empty"),
                       (dict(label_noise=[0.0, 1.2]), r"\[0, 1\]"), (dict(grid_sizes=[4, 0]), "grid_sizes"),
                       (dict(preprocessings=["zca"]), "preprocessings"), (dict(lrs=[0.0]), "lrs"),
                       (dict(label_noise=[0.5, 1.0]), "start with 0"), (dict(neurons=[24, 24]), "distinct"),
                       (dict(n_line_nets=0), "n_line_nets")]:
        with pytest.raises(ParameterError, match=match):
            R.check_chapter_params({**CH6, **bad})


def test_slice_demo_against_direct_counts():
    rng = np.random.default_rng(4)
    pts = rng.standard_normal((3, 5))
    archs, seeds = [[6], [3, 3]], [11, 12]
    out = R.slice_demo(pts, archs, seeds, [3, 9, 27])
    plane = R.plane_through(pts)
    for k, (w, s) in enumerate(zip(archs, seeds)):
        net = R.he_mlp(5, w, 1, seed=s)
        assert out["counts"][k] == R.count_regions(net, plane) == len(out[f"n{k}"])
        assert out[f"area{k}"] == pytest.approx((2 * plane.half_width) ** 2, rel=1e-12)  # the pieces tile the square
        assert list(out["grid_counts"][k]) == [R.grid_count(net, plane, n=g) for g in (3, 9, 27)]
    assert out["grid_counts"].shape == (2, 3) and np.all(out["grid_counts"] <= out["counts"][:, None])
    with pytest.raises(ParameterError, match="one seed"):
        R.slice_demo(pts, archs, seeds[:1], [3])


def test_grid_vs_exact():
    exact = np.array([10, 5])
    g = R.grid_vs_exact(exact, np.array([[3, 7, 10, 10], [2, 4, 5, 5]]))
    assert g["below"] and g["refines"]
    assert np.array_equal(g["found"], np.array([[0.3, 0.7, 1.0, 1.0], [0.4, 0.8, 1.0, 1.0]]))
    stall = R.grid_vs_exact(exact, np.array([[3, 3, 10, 10], [2, 4, 5, 5]]))  # no rise while regions are missed
    assert stall["below"] and not stall["refines"]
    above = R.grid_vs_exact(exact, np.array([[3, 7, 11, 11], [2, 4, 5, 5]]))  # a grid finds a region too many
    assert not above["below"]
    with pytest.raises(ParameterError, match="shape"):
        R.grid_vs_exact(exact, np.array([3, 7]))


def test_init_count_table_layout():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((40, 4))
    t = R.init_count_table(X, [6, 12], [1, 2, 3], n_nets=2, seed=9)["counts"]
    flat = R.init_counts(X, R.architectures([6, 12], [1, 2, 3]), 2, 9)
    assert t.shape == (2, 3, 2) and np.array_equal(t.reshape(6, 2), flat)
    # one hidden layer of N neurons: N lines cut the square into at most 1 + N + N(N - 1)/2 pieces
    for n_i, N in enumerate([6, 12]):
        assert np.all((t[n_i, 0] >= 1) & (t[n_i, 0] <= 1 + N + comb(N, 2)))


def test_count_summary():
    c = np.array([[[1.0, 3.0, 8.0], [2.0, 2.0, 2.0]]])
    m, s = R.count_summary(c)
    assert np.allclose(m, [[4.0, 2.0]]) and np.allclose(s, [[np.sqrt(13.0 / 3), 0.0]])
    m1, s1 = R.count_summary(c[..., :1])
    assert np.array_equal(m1, c[..., 0]) and np.array_equal(s1, np.zeros((1, 2)))


def test_worst_slope_cases():
    sl = lambda *b: {d: {"slope": v, "se": d / 8} for d, v in zip([1, 2, 6], b)}  # noqa: E731
    mean = np.array([[300.0, 250.0, 120.0], [1200.0, 1100.0, 1000.0]])
    w = R.worst_slope(sl(2.0, 2.1, 2.9), [24, 48], [1, 2, 6], mean, all_pass=False)
    assert (w["depth"], w["case"], w["w_small"], w["c_w"], w["c_1"], w["se"]) == (6, "narrow", 4, 120.0, 300.0, 0.75)
    assert R.worst_slope(sl(2.0, 2.1, 2.9), [24, 48], [1, 2, 6], mean, all_pass=True)["case"] == "all_pass"
    assert R.worst_slope(sl(1.4, 2.1, 2.2), [24, 48], [1, 2, 6], mean, all_pass=False)["case"] == "below"
    # steep, but the deep network is not depressed at small N: no small-width explanation
    up = mean.copy()
    up[0, 2] = 400.0
    assert R.worst_slope(sl(2.0, 2.1, 2.9), [24, 48], [1, 2, 6], up, all_pass=False)["case"] == "above"
    assert R.worst_slope(sl(2.0, 2.1, 2.9), [96, 192], [1, 2, 6], mean, all_pass=False)["case"] == "above"


def test_largest_linear_region_closed_form():
    # the L-shaped zero set of relu(1/4 - relu(x) - relu(y)) on [-1, 1]²: area 4 − 49/32 = 79/32, its
    # hull cuts the corner (−1, −1) along the line through (1/4, −1) and (−1, 1/4): area 4 − 1.25²/2
    net = [(np.eye(2), np.zeros(2)), (np.array([[-1.0, -1.0]]), np.array([0.25])), (np.ones((1, 1)), np.zeros(1))]
    regs = R.activation_regions(net, None, SQUARE)
    members, deficit = R.largest_linear_region(regs, R.linear_regions(regs))
    assert np.all(np.abs(regs.maps[members, 0]) < 1e-12) and len(members) == 3
    assert regs.areas[members].sum() == pytest.approx(79 / 32, rel=1e-12)
    assert deficit == pytest.approx(1 - (79 / 32) / (4 - 1.25**2 / 2), abs=1e-12)
    with pytest.raises(ParameterError, match="more than one"):
        R.largest_linear_region(regs, np.arange(len(regs)))


def test_bottleneck_demo():
    rng = np.random.default_rng(7)
    pts = rng.standard_normal((3, 6))
    b = R.bottleneck_demo(pts, [8, 2, 8], seeds=[3])
    regs = R.activation_regions(R.he_mlp(6, [8, 2, 8], 1, seed=3), R.plane_through(pts))
    assert np.array_equal(b["n"], regs.n_vertices) and np.array_equal(b["labels"], R.linear_regions(regs))
    assert b["labels"].max() + 1 < len(b["n"])  # the bottleneck merges regions
    assert np.all(b["labels"][b["members"]] == b["labels"][b["members"][0]]) and len(b["members"]) > 1
    assert b["deficit"] == R.convex_deficit(regs, b["members"])
    assert bool(b["found"]) == (b["deficit"] >= 0.01) and int(b["tries"]) == 1 and int(b["seed"]) == 3


def test_bottleneck_demo_searches_and_never_crashes():
    rng = np.random.default_rng(7)
    pts = rng.standard_normal((3, 6))
    # a wide network with no bottleneck: no two activation regions share a map, so no seed is "found" —
    # the search returns the last network, says so, and does not raise
    b = R.bottleneck_demo(pts, [8], seeds=[0, 1, 2])
    assert not bool(b["found"]) and int(b["tries"]) == 3 and int(b["seed"]) == 2
    assert len(b["members"]) == 0 and np.isnan(b["deficit"]) and b["labels"].max() + 1 == len(b["n"])
    assert "None of the 3 networks tried" in R.bottleneck_glue(b)["bn_sentence"]
    # the search stops at the first network with a visible notch, and skips those without
    seeds = list(range(40))
    hit = R.bottleneck_demo(pts, [8, 2, 8], seeds=seeds)
    assert bool(hit["found"]) and hit["deficit"] >= 0.01
    k = int(hit["tries"])
    assert int(hit["seed"]) == seeds[k - 1]
    for s_ in seeds[: k - 1]:
        assert not bool(R.bottleneck_demo(pts, [8, 2, 8], seeds=[s_])["found"])
    g = R.bottleneck_glue(hit)
    assert g["bn_tries"] == k and g["bn_activation"] == len(hit["n"]) and "convex hull" in g["bn_sentence"]
    assert ("the first network tried" in g["bn_sentence"]) == (k == 1)
    with pytest.raises(ParameterError, match="at least one seed"):
        R.bottleneck_demo(pts, [8, 2, 8], seeds=[])


def test_montufar_exponent():
    # one layer: 1 + N + N(N−1)/2 regions, slope → 2; two layers of N/2: (N/4)²·(1 + N/2 + C(N/2, 2))
    N = [24, 48]
    one = [R.montufar_max([n]) for n in N]
    assert R.montufar_exponent(N, 1) == pytest.approx(np.log(one[1] / one[0]) / np.log(2))
    two = [(n // 4) ** 2 * (1 + n // 2 + (n // 2) * (n // 2 - 1) / 2) for n in N]
    assert R.montufar_exponent(N, 2) == pytest.approx(np.log(two[1] / two[0]) / np.log(2))
    assert R.montufar_exponent(N, 2, n_in=1) == pytest.approx(np.log(24 * 25 / (12 * 13)) / np.log(2))
    with pytest.raises(ParameterError, match="two distinct"):
        R.montufar_exponent([24, 24], 1)


def test_sensitivity_on_slice_matches_uniform_draws():
    rng = np.random.default_rng(8)
    pts = rng.standard_normal((3, 5))
    w = R.as_weights(R.he_mlp(5, [6, 6], 3, seed=1))
    flat = np.concatenate([a.ravel() for W, b in w for a in (W, b)])
    out = R.sensitivity_on_slice(flat, [5, 6, 6, 3], pts, output=2, check=4, seed=0,
                                 mc_unit=np.random.default_rng(9).random((50, 2)))
    plane = R.plane_through(pts)
    U = np.random.default_rng(9).uniform(-plane.half_width, plane.half_width, (50, 2))  # the same points, bit for bit
    S = nw.tangent_sensitivity(nw.from_pairs(w), plane.to_input(U), directions=plane.basis, output=2).numpy()
    assert np.array_equal(out["mc_sq"], (S**2).sum((1, 2)))
    regs = R.activation_regions(w, plane)
    assert np.array_equal(out["n"], regs.n_vertices) and np.array_equal(out["areas"], regs.areas)
    assert len(out["within"]) == 4 and out["within"].max() < 1e-10 and len(out["norm"]) == len(regs)


def test_train_runs_paired_and_stacked():
    rng = np.random.default_rng(10)
    X, y = rng.standard_normal((48, 5)), rng.integers(0, 3, 48)
    kw = dict(epochs=2, n_checkpoints=2, lr=1e-2, batch=16)
    t = R.train_runs(X, y, [4, 4], label_noise=[0.0, 1.0], seeds=[3, 4], **kw)
    assert t["count"].shape == (2, 2, 3) and t["triple"].shape == (2, 2, 3)
    one = R.train_counts(X, y, [4, 4], label_noise=1.0, seed=4, **kw)
    assert all(np.array_equal(t[k][1, 1], one[k]) for k in one)
    # same seed, different label noise: same slice and same initial network (paired runs)
    assert np.array_equal(t["triple"][0], t["triple"][1]) and np.array_equal(t["count"][0, :, 0], t["count"][1, :, 0])


# ---------------------------------------------------------------------------------------------
# Closed forms at initialisation, lines and distances
# ---------------------------------------------------------------------------------------------
def zero_bias_layer(rng, n, d_in):
    """One hidden layer of n ReLUs, isotropic Gaussian weights, zero biases (and a read-out)."""
    return [(rng.standard_normal((n, d_in)), np.zeros(n)), (rng.standard_normal((1, n)), np.zeros(1))]


def test_slice_angles_closed_form():
    # square of half-width a centred on the foot of the perpendicular from the origin, at distance d
    a, d = 1.3, 0.7
    plane = R.Plane(np.array([0.0, 0.0, d]), np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]), a)
    om, phi = R.slice_angles(plane)
    assert np.isclose(om, 4 * np.arcsin(a * a / (a * a + d * d)), rtol=1e-12)
    assert np.isclose(phi, 8 * np.arctan(a / np.hypot(d, a)), rtol=1e-12)
    with pytest.raises(ParameterError, match="origin"):
        R.slice_angles(R.Plane(np.zeros(3), plane.basis, a))


def test_one_layer_expected_count_monte_carlo():
    rng = np.random.default_rng(0)
    plane = R.Plane(np.array([0.2, -0.1, 0.8]), np.array([[1.0, 0.0], [0.0, 0.6], [0.0, 0.8]]), 1.1)
    om, phi = R.slice_angles(plane)
    n = 12
    c = np.array([R.count_regions(zero_bias_layer(rng, n, 3), plane) for _ in range(600)], dtype=float)
    expected = R.one_layer_expected_count(n, om, phi)
    assert abs(c.mean() - expected) < 4 * c.std(ddof=1) / np.sqrt(len(c))
    # the whole plane: every line and every pair meets it (Ω = 2π, Φ = 2π): 1 + n + n(n − 1)/2
    assert R.one_layer_expected_count(n, 2 * np.pi, 2 * np.pi) == 1 + n + n * (n - 1) / 2


def test_line_breakpoints_brute_force():
    rng = np.random.default_rng(1)
    for widths in ([5], [6, 4], [4, 4, 4]):
        net = random_net(rng, widths, d_in=3)
        a, b = rng.standard_normal(3), rng.standard_normal(3)
        t = R.line_breakpoints(net, a, b)
        assert np.all(np.diff(t) > 0) and np.all((t > 0) & (t < 1))
        s = np.linspace(0, 1, 200001)
        pats = R.patterns_at(net, a + s[:, None] * (b - a))
        changes = s[1:][np.any(pats[1:] != pats[:-1], axis=1)]
        assert len(changes) == len(t) and np.allclose(changes, t, atol=2e-5)
    # one layer: a neuron's boundary is crossed iff its pre-activation changes sign between the ends
    (W, c), _ = net_l = zero_bias_layer(rng, 20, 4)
    a, b = rng.standard_normal(4), rng.standard_normal(4)
    assert len(R.line_breakpoints(net_l, a, b)) == int(np.sum(np.sign(W @ a) != np.sign(W @ b)))
    with pytest.raises(ParameterError, match="dimension"):
        R.line_breakpoints(net_l, a[:3], b)


def test_boundary_distance_brute_force():
    rng = np.random.default_rng(2)
    net = random_net(rng, [6, 5, 4], d_in=3)
    X = rng.standard_normal((5, 3))
    dist = R.boundary_distance(net, X)
    for x, d in zip(X, dist):
        p0 = R.patterns_at(net, x[None])
        u = rng.standard_normal((4000, 3))
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        assert np.all(R.patterns_at(net, x + (1 - 1e-6) * d * u) == p0)  # the open ball keeps the pattern
        # beyond the nearest facet's hyperplane (a cap of ~2.4 % of directions at 1.05 d) the region is left
        assert np.any(R.patterns_at(net, x + 1.05 * d * u) != p0)


def test_one_layer_line_and_distance_monte_carlo():
    rng = np.random.default_rng(3)
    n, d_in = 10, 5
    a, b = rng.standard_normal(d_in), rng.standard_normal(d_in)
    nets = [zero_bias_layer(rng, n, d_in) for _ in range(3000)]
    cr = np.array([len(R.line_breakpoints(w, a, b)) for w in nets], dtype=float)
    assert abs(cr.mean() - R.one_layer_line_crossings(n, a, b)) < 4 * cr.std(ddof=1) / np.sqrt(len(cr))
    di = np.array([R.boundary_distance(w, a[None])[0] for w in nets])
    assert abs(di.mean() - R.one_layer_distance(n, np.linalg.norm(a), d_in)) < 4 * di.std(ddof=1) / np.sqrt(len(di))
    # large n: |x| sqrt(pi / (2 n_in)) / n
    assert np.isclose(R.one_layer_distance(2000, 1.0, 64) * 2000, np.sqrt(np.pi / 128), rtol=0.02)


def test_pair_exponent_and_density_by_depth():
    N = [10, 20, 40]
    v = np.array([[1.0, 3.0], [4.0, 12.0], [16.0, 48.0]])  # exactly N^2 up to a per-pair constant
    e = R.pair_exponent(N, v)
    assert np.isclose(e["slope"], 2.0) and e["se"] < 1e-12 and e["dof"] == 1
    with pytest.raises(ParameterError, match="shape"):
        R.pair_exponent(N, v[:2])
    om, phi = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    E = R.one_layer_expected_count(np.array(N)[:, None], om, phi)
    counts = np.stack([E, 2 * E], axis=1)  # depth 1 at the closed form, depth 2 at twice it
    d = R.density_by_depth(counts, om, phi, N)
    assert np.allclose(d["mean"][:, 0], 1) and np.allclose(d["mean"][:, 1], 2) and np.allclose(d["se"], 0)
    assert d["dof"] == 1 and np.allclose(d["ratio"][:, 1], 2)


def test_exact_check_and_line_table_layout():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((30, 4)) + 0.5
    chk = R.exact_check_depth1(X, 6, n_nets=3, n_slices=2, seed=1)
    assert chk["counts"].shape == (2, 3) and chk["expected"].shape == (2,)
    lt = R.line_table(X, [4, 8], [1, 2], n_nets=3, seed=2)
    assert lt["crossings"].shape == (2, 2, 3) and lt["dist"].shape == (2, 2, 3) and lt["norms"].shape == (3, 2)
    assert np.all(lt["dist"] > 0) and lt["dist_n1"].shape == (2, 3)


def test_digits_inputs():
    raw, y = R.digits_inputs("raw")
    c, _ = R.digits_inputs("centred")
    p, _ = R.digits_inputs("pixel")
    assert raw.shape == c.shape == p.shape == (1797, 64) and raw.min() >= 0 and raw.max() <= 1
    assert np.allclose(c.mean(0), 0) and np.allclose(c * raw.std() + raw.mean(0), raw)  # one global scale
    assert np.abs(c).max() < np.abs(p).max()
    with pytest.raises(ParameterError, match="preprocessing"):
        R.digits_inputs("zca")


def test_train_sweep_layout_and_pairing():
    kw = dict(epochs=1, preprocessings=["raw", "centred"], lrs=[1e-2, 1e-3], label_noise=[0.0, 1.0], seeds=[5],
              n_checkpoints=1, batch=256, n_lines=2)
    s = R.train_sweep([4, 4], **kw)
    assert s["sweep_count"].shape == (2, 2, 1, 2) and s["noise_count"].shape == (2, 1, 2)
    assert s["sweep_crossings"].shape[:4] == (2, 2, 1, 2) and s["noise_dist"].shape[:3] == (2, 1, 2)
    # the true-label run of the noise study is the sweep's first run; same seed → same slice and initial count
    assert np.array_equal(s["noise_count"][0], s["sweep_count"][0, 0])
    assert np.array_equal(s["sweep_count"][0, 0, :, 0], s["sweep_count"][0, 1, :, 0])
    with pytest.raises(ParameterError, match="preprocessings"):
        R.train_sweep([4], **{**kw, "preprocessings": ["zca"]})


# ---------------------------------------------------------------------------------------------
# Chapter 6's summaries: the numbers behind its claims and glued sentences
# ---------------------------------------------------------------------------------------------
def test_slice_view_isometric_on_the_circumcircle():
    # three points on a circle of radius 3 in a plane of R⁴, shifted off the origin
    t = np.array([0.2, 2.0, 4.1])
    pts = np.zeros((3, 4))
    pts[:, 1], pts[:, 3] = 3 * np.cos(t), 3 * np.sin(t)
    pts += [1.0, -2.0, 0.5, 4.0]
    h, uv = R.slice_view(pts)
    assert h == pytest.approx(1.25 * 3) and np.allclose(np.linalg.norm(uv, axis=1), 3)
    d = lambda a: np.linalg.norm(a[:, None] - a[None], axis=2)  # noqa: E731
    assert np.allclose(d(uv), d(pts))  # the slice coordinates are an isometry of the three points
    with pytest.raises(ParameterError, match="collinear"):
        R.slice_view(np.array([[0.0, 0], [1, 1], [2, 2]]))


def test_closed_form_ratio():
    e = R.closed_form_ratio({"counts": np.array([[2.0, 4.0], [3.0, 3.0]]), "expected": np.array([2.0, 3.0])})
    # ratios 1, 2, 1, 1: mean 5/4, s = 1/2, se = s/√4
    assert (e.mean, e.n, e.dof) == (1.25, 4, 3) and e.se == pytest.approx(0.25)
    with pytest.raises(ParameterError, match="expected"):
        R.closed_form_ratio({"counts": np.ones((2, 3)), "expected": np.ones(3)})


def _init_table(counts, t_k):
    area = np.array([4.0, 9.0])
    return {"counts": counts, "omega": 2 * np.pi * area * np.asarray(t_k) ** 2, "perimeter": np.array([1.0, 2.0]),
            "area": area}


def test_init_summary_density_closed_forms():
    N, depths = [10, 20, 40], [1, 2]
    init = _init_table(None, [0.1, 0.2])
    E = R.one_layer_expected_count(np.array(N, float)[:, None], init["omega"], init["perimeter"])  # (N, slices)
    init["counts"] = np.stack([E, 2 * E], axis=1)  # depth 1 at the closed form, depth 2 at twice it
    s = R.init_summary(init, N, depths, n_curve=5)
    assert np.allclose(s["density"]["mean"], [[1, 2]] * 3) and np.allclose(s["density"]["se"], 0)
    assert np.allclose(s["curve"][0], [10, 10 * 2**0.5, 20, 20 * 2**0.5, 40])
    assert np.allclose(s["curve"][1, [0, 2, 4]], E.mean(1))
    assert s["n_big"] == 40 and s["glue"]["n_big"] == 40
    # T_K = √(Ω / (2π area)) = 0.1 and 0.2; Ω/2π = area·T_K² = 0.04 and 0.36
    assert s["glue"]["t_k"] == "0.100–0.200" and s["glue"]["omega_frac"] == "0.04–0.36"
    assert s["glue"]["density_by_depth"] == "1.00 ± 0.00 at depth 1; 2.00 ± 0.00 at depth 2"
    # Montúfar et al.: [20, 20] has (20/2)²·(1 + 20 + 190) regions, [40] has 1 + 40 + 780
    assert s["montufar_factor"][2] == pytest.approx(100 * 211 / 821) and s["montufar_factor"][1] == 1
    assert set(s["arrays"]) == {"neurons", "depths", "counts", "omega", "perimeter", "area", "ratio"}


def test_init_summary_growth_exponents():
    N = np.array([10.0, 20.0, 40.0])
    jitter = np.array([1.0, 1.3])  # per network: a constant factor, so the log–log slope is exactly 2
    counts = N[:, None, None] ** 2 * np.array([1.0, 3.0])[None, :, None] * jitter[None, None, :]
    s = R.init_summary(_init_table(counts, [0.1, 0.2]), [10, 20, 40], [1, 3])
    assert all(np.isclose(g["slope"], 2) and g["dof"] == 4 for g in s["slopes"].values())
    # residuals ±log(1.3)/2 at every N: s² = 6 a² / 4 over Σ(log N − mean)² = 2 · 2 (log 2)²
    a = np.log(1.3) / 2
    assert all(g["se"] == pytest.approx(a * np.sqrt(1.5 / 4) / np.log(2)) for g in s["slopes"].values())
    assert s["glue"]["slopes_by_depth"] == "2.00 ± 0.12 at depth 1; 2.00 ± 0.12 at depth 3"
    assert np.allclose(s["mean"], N[:, None] ** 2 * [1.0, 3.0] * 1.15)


def test_slope_comment_cases():
    ws = {"case": "narrow", "w_small": 4, "c_w": 41.2, "c_1": 160.4}
    text = R.slope_comment(ws, 24.0)
    assert text.startswith("at N = 24 it has only 4 neurons per layer") and "(41, against 160 for one layer of 24" in text
    texts = {R.slope_comment({**ws, "case": c}, 24) for c in ("all_pass", "narrow", "below", "above")}
    assert len(texts) == 4 and any("below 2" in t for t in texts)
    with pytest.raises(ParameterError, match="case"):
        R.slope_comment({**ws, "case": "odd"}, 24)


def test_line_summary_exponents_and_closed_forms():
    N, depths, n_in = [8, 16, 32], [1, 2], 6
    Nf = np.array(N, float)
    theta = np.array([0.3, 0.5, 0.9])  # θ/π per segment
    norms = np.array([[1.0, 2.0], [1.5, 1.5], [2.0, 3.0]])
    cross = Nf[:, None, None] * theta * np.array([1.0, 2.0])[None, :, None]  # depth 2: twice one layer
    closed = np.array([R.one_layer_distance(n, norms, n_in).mean() for n in N])
    dist = np.broadcast_to(closed[:, None, None], (3, 2, 3)).copy()
    lines = {"crossings": cross, "dist": dist, "cross_per_neuron": theta, "norms": norms}
    s = R.line_summary(lines, N, depths, n_in, n_curve=3)
    assert np.allclose(s["cross_mean"], Nf[:, None] * [1.0, 2.0]) and np.allclose(s["cross_se"], 0)
    assert np.allclose(s["dist_curve"][1], closed) and np.allclose(s["dist_curve"][0], Nf)
    assert all(np.isclose(s["lx"][d]["slope"], 1) for d in depths)
    # the closed form tends to ∝ 1/N: its exponent between 8 and 32 neurons is close to −1
    assert all(-1.2 < s["dx"][d]["slope"] < -0.8 for d in depths)
    assert s["glue"]["line_per_theta"] == "1.00–2.00" and s["glue"]["dist_vs_closed"] == "1.00–1.00"
    assert s["glue"]["line_exponents"] == "1.00 ± 0.00 at depth 1; 1.00 ± 0.00 at depth 2"


def test_ratio_text():
    assert R.ratio_text(np.array([2.0])) == "2.00"
    assert R.ratio_text(np.array([1.0, 3.0])) == "2.00 ± 1.00"  # s = √2, se = s/√2


def _sweep(final, noise_final, S):
    """A synthetic train_sweep: counts 100 at init and 100·final at the end (P, R, S) and
    (L, S) for the noise study (whose first row is the sweep's first run, as train_sweep makes it)."""
    final, noise_final = np.asarray(final, float), np.asarray(noise_final, float)
    P_, R_ = final.shape[:2]
    count = np.stack([np.full(final.shape, 100.0), 100 * final], axis=-1)
    noise = np.stack([np.full(noise_final.shape, 100.0), 100 * noise_final], axis=-1)
    noise[0] = count[0, 0]
    cross = np.stack([np.full((P_, R_, S, 4), 5.0), np.full((P_, R_, S, 4), 4.0)], axis=3)  # 5 → 4 per line
    dist = np.stack([np.full((P_, R_, S, 4), 0.5), np.full((P_, R_, S, 4), 1.0)], axis=3)  # 0.5 → 1
    acc = np.stack([np.full((P_, R_, S), 0.1), np.full((P_, R_, S), 0.9)], axis=-1)
    return {"sweep_count": count, "noise_count": noise, "sweep_crossings": cross, "sweep_dist": dist,
            "sweep_acc": acc}


def test_training_summary_several_runs():
    # P = 2 preprocessings, R = 2 learning rates, S = 3 runs; L = 2 label-noise fractions
    final = np.array([[[0.5, 0.6, 0.7], [1.1, 1.2, 1.3]], [[0.8, 0.8, 0.8], [0.9, 1.0, 1.1]]])
    sw = _sweep(final, [[0, 0, 0], [1.5, 1.6, 1.7]], S=3)
    s = R.training_summary(sw, ["raw", "pixel"], [1e-3, 1e-4], [0.0, 1.0], epochs=7)
    assert s["runs"] == "3 runs per setting"
    assert s["grows"]["mean"] == pytest.approx(0.6) and s["grows"]["kw"]["dof"] == 2
    assert s["grows"]["kw"]["se"] == pytest.approx(0.1 / np.sqrt(3))
    assert s["grows_lr"]["mean"] == pytest.approx(1.2)
    assert s["memorisation"]["mean"] == pytest.approx(1.0) and s["memorisation"]["kw"]["se"] == pytest.approx(0)
    assert s["lines"]["mean"] == pytest.approx(0.8) and s["best"] == pytest.approx(1.2)
    # the largest final count, 170, over Montúfar et al.'s maximum for [32, 32, 32]: 16²·16²·(1 + 32 + 496)
    assert s["max_frac"] == pytest.approx(170 / (16**4 * 529))
    # the training claims' alternatives: growth to the maximum in the plane (over the initial 100 regions) and
    # to the maximal 32·32·33 pieces along each of the 4 segments (over the initial 4 × 5 crossings)
    assert s["alt"]["count"] == pytest.approx(16**4 * 529 / 100)
    assert s["alt"]["lines"] == pytest.approx(4 * (32 * 32 * 33 - 1) / 20)
    g = s["glue"]
    assert g["train_by_lr"] == "0.60 ± 0.06 at lr 0.001; 1.20 ± 0.06 at lr 0.0001"
    assert g["train_by_noise"].endswith("1.60 ± 0.06 with 100% random labels")
    assert g["train_dist"] == "2.00 ± 0.00" and g["dist_verdict"].startswith("training clears")
    assert g["train_acc"] == "0.900" and g["lrs_text"] == "0.001 and 0.0001"
    assert g["train_verdict"] == ("at this scale (7 epochs, 3 runs per setting) the mean count ends above its "
                                  "initial value in at least one setting (largest mean ratio 1.20)")
    assert s["ratio"]["count"].shape == (2, 2, 3, 2) and np.allclose(s["ratio"]["count"][..., 0], 1)


def test_training_summary_one_run_and_bad_shapes():
    sw = _sweep(np.full((1, 1, 1), 0.5), [[0.0]], S=1)
    s = R.training_summary(sw, ["raw"], [1e-3], [0.0], epochs=2)
    assert s["runs"] == "1 run per setting" and s["grows"] == {"mean": 0.5, "kw": {}}
    assert s["grows_lr"] is None and s["memorisation"] is None
    assert "below its initial value in every preprocessing" in s["glue"]["train_verdict"]
    with pytest.raises(ParameterError, match="does not match"):
        R.training_summary(sw, ["raw", "pixel"], [1e-3], [0.0], epochs=2)


def test_input_ranges():
    r = R.input_ranges()
    raw = R.digits_inputs("raw")[0]
    sds = [float(np.std(raw[:, j])) for j in range(raw.shape[1])]  # pixel by pixel
    assert r["pixel_sd_min"] == pytest.approx(min(s for s in sds if s > 0))
    assert 0 < r["pixel_sd_min"] < 0.5 and r["centred_max"] < r["pixel_max"]
    # pixel by pixel: the largest standardised value max |x − mean| / sd over non-constant pixels
    cols = [raw[:, j] for j in range(raw.shape[1]) if sds[j] > 0]
    assert r["pixel_max"] == pytest.approx(max(float(np.abs(c - c.mean()).max()) / c.std() for c in cols))
    assert r["centred_max"] == pytest.approx(float(np.abs(raw - raw.mean(0)).max()) / raw.std())


def test_sensitivity_summary():
    s = R.sensitivity_summary({"norm": np.array([1.0, 2.0]), "areas": np.array([3.0, 1.0]),
                               "within": np.array([0.0, 1e-16]), "between": np.array([0.1, 0.5, 0.2]),
                               "mc_sq": np.array([1.0, 2.0, 3.0])})
    assert s["by_region"] == pytest.approx((3 * 1 + 1 * 4) / 4) and s["within"] == 1e-16 and s["between"] == 0.2
    assert (s["mc"].mean, s["mc"].n) == (2.0, 3) and s["mc"].se == pytest.approx(1 / np.sqrt(3))
    with pytest.raises(ParameterError, match="areas"):
        R.sensitivity_summary({"norm": np.ones(2), "areas": np.array([1.0, -1.0]), "within": [0], "between": [0],
                               "mc_sq": np.ones(2)})


def _claims(**status):
    ids = [("grid_below_exact", "checks"), ("grid_converges", "checks"), ("closed_form_depth1", "checks"),
           ("density_d2", "reproduces"), ("quadratic_growth_d1", "reproduces"), ("quadratic_growth_d2", "reproduces"),
           ("line_exponent_d1", "reproduces"), ("distance_exponent_d1", "reproduces"), ("train_grows", "reproduces"),
           ("sens_varies", "checks")]
    return [(cid, kind, status.get(cid, "pass")) for cid, kind in ids]


def test_findings_counts_and_verdicts():
    tr = {"grows": {"mean": 0.3}, "best": 0.9, "runs": "3 runs per setting"}
    f = R.findings(_claims(quadratic_growth_d2="inconclusive", train_grows="skipped"), [1, 2], "ci", tr,
                   ["raw", "pixel"], [1e-3, 1e-4])
    assert f["found_reproduced"] == "4 of the 5 paper results graded at this scale (1 more skipped until a larger scale)"
    assert f["found_open"] == "quadratic_growth_d2 (inconclusive)"
    assert (f["found_slopes"], f["found_density"], f["found_lines"]) == ("1 of 2 depths", "1 of 1 depths",
                                                                         "1 and 1 of 2 depths")
    assert f["disagree_text"].startswith("At the ci scale") and f["found_grid"].startswith("The exact counter agrees")
    assert f["found_check"].startswith("it also reproduces") and f["found_geometry"].startswith("Linear regions merge")
    # at default: a fall whose interval lies below 1 is a failure, in the best of 2 × 2 settings still below
    f = R.findings(_claims(train_grows="fail", grid_converges="fail", closed_form_depth1="inconclusive",
                           sens_varies="fail"), [1, 2], "default", tr, ["raw", "pixel"], [1e-3, 1e-4])
    assert "ends below its initial value (mean ratio 0.30 over 3 runs per setting)" in f["disagree_text"]
    assert "so the claim fails. It ends below its initial value in the best of the 4 " in f["disagree_text"]
    assert f["found_open"] == "train_grows (fail)" and f["found_grid"].startswith("In this run")
    assert f["found_check"] == "its agreement with the exact one-layer expectation is inconclusive at this scale"
    assert f["found_geometry"].startswith("Linear regions merge") and "is not borne out in this run" in f["found_geometry"]
    f = R.findings(_claims(), [1, 2], "ci", tr, ["raw"], [1e-3], nonconvex_found=False)
    assert f["found_geometry"].startswith("The search for a bottleneck network") and f["found_geometry"].endswith(
        "as the slides state")
    f = R.findings(_claims(), [1, 2], "paper", {**tr, "grows": {"mean": 1.4}}, ["raw"], [1e-3])
    assert "the count rises (mean ratio 1.40 over 3 runs per setting)" in f["disagree_text"]
    with pytest.raises(ParameterError, match="scale"):
        R.findings(_claims(), [1, 2], "huge", tr, ["raw"], [1e-3])
