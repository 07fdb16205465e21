"""Mean-field maps against adaptive quadrature, closed forms (erf, linear) and random networks."""

import numpy as np
import pytest
from scipy.integrate import quad

from layerwise import gaussian, trainability
from layerwise import meanfield as mf
from layerwise.data import standardise_digits
from layerwise.params import ParameterError
from layerwise.stats import max_deviation_interval
from layerwise.studies import ch07 as study


def gauss_quad(f):
    """E_{z~N(0,1)} f(z) by adaptive quadrature, split at 0 and ±1 where tanh(√q z) turns."""
    g = lambda z: f(z) * np.exp(-z * z / 2) / np.sqrt(2 * np.pi)  # noqa: E731
    return sum(
        quad(g, a, b, epsabs=1e-15, epsrel=1e-13, limit=500)[0]
        for a, b in [(-12, -1), (-1, 0), (0, 1), (1, 12)]
    )


@pytest.mark.parametrize("q", [1e-3, 0.3, 2.0, 15.0, 80.0])
def test_length_map_and_chi1_against_adaptive_quadrature(q):
    sw2, sb2 = 2.3, 0.2
    ref_v = sw2 * gauss_quad(lambda z: np.tanh(np.sqrt(q) * z) ** 2) + sb2
    ref_c = sw2 * gauss_quad(lambda z: (1 - np.tanh(np.sqrt(q) * z) ** 2) ** 2)
    assert abs(mf.length_map(q, sw2, sb2) - ref_v) < 1e-10
    assert abs(mf.chi1(sw2, sb2, q=q) - ref_c) < 1e-10


def erf_V(q, sw2, sb2):
    """Closed form for φ = erf: E[erf(u)²] = (2/π) arcsin(2q/(1+2q)) (Williams 1997)."""
    return sw2 * 2 / np.pi * np.arcsin(2 * q / (1 + 2 * q)) + sb2


@pytest.mark.parametrize("sw2, sb2", [(1.5, 0.1), (4.0, 0.5), (2.0, 0.0)])
def test_erf_fixed_point_and_correlation_map_closed_forms(sw2, sb2):
    qs = mf.q_star(sw2, sb2, "erf")
    assert abs(erf_V(qs, sw2, sb2) - qs) < 1e-12
    for c in (0.0, 0.4, 0.95):
        ref = (sw2 * 2 / np.pi * np.arcsin(2 * c * qs / (1 + 2 * qs)) + sb2) / qs
        assert abs(mf.correlation_map(c, sw2, sb2, "erf") - ref) < 1e-12
    # χ1 for erf: E[φ'(u)²] = (4/π) / √(1 + 4q)
    assert abs(mf.chi1(sw2, sb2, "erf") - sw2 * 4 / np.pi / np.sqrt(1 + 4 * qs)) < 1e-12


def test_linear_closed_forms():
    assert mf.q_star(0.5, 0.2, "linear") == pytest.approx(0.4, abs=1e-15)
    assert mf.correlation_map(0.3, 0.5, 0.2, "linear") == pytest.approx(
        (0.5 * 0.3 * 0.4 + 0.2) / 0.4, abs=1e-12
    )
    with pytest.raises(ParameterError, match="sigma_w2"):
        mf.q_star(1.5, 0.2, "linear")


def test_fixed_point_properties():
    for sw2, sb2 in [(1.69, 0.09), (6.25, 0.09), (16.0, 0.09), (3.0, 0.0)]:
        qs = mf.q_star(sw2, sb2)
        assert abs(mf.length_map(qs, sw2, sb2) - qs) < 1e-12 * max(1, qs)
        assert mf.length_map_slope(qs, sw2, sb2) < 1  # stable
        assert abs(mf.correlation_map(1.0, sw2, sb2) - 1.0) < 1e-12 if qs > 0 else True
    assert mf.q_star(0.8, 0.0) == 0.0  # ordered, bias-free: zero is the stable fixed point


def test_slopes_match_finite_differences():
    sw2, sb2 = 5.0, 0.3
    qs = mf.q_star(sw2, sb2)
    h = 1e-5
    fd = (mf.length_map(qs + h, sw2, sb2) - mf.length_map(qs - h, sw2, sb2)) / (2 * h)
    assert abs(fd - mf.length_map_slope(qs, sw2, sb2)) < 1e-8
    for c in (0.2, 0.7):
        fd = (mf.correlation_map(c + h, sw2, sb2) - mf.correlation_map(c - h, sw2, sb2)) / (2 * h)
        assert abs(fd - mf.correlation_map_slope(c, sw2, sb2)) < 1e-8
    fd1 = (1 - mf.correlation_map(1 - h, sw2, sb2)) / h
    assert abs(fd1 - mf.chi1(sw2, sb2)) < 1e-3


def test_critical_line():
    assert mf.critical_sigma_w2(0.0) == 1.0
    for sb2 in (0.05, 0.3, 1.0):
        s = mf.critical_sigma_w2(sb2)
        assert abs(mf.chi1(s, sb2) - 1.0) < 1e-9
        assert mf.chi1(s * 0.98, sb2) < 1 < mf.chi1(s * 1.02, sb2)
    # monotone: more bias needs more weight variance to become chaotic
    assert mf.critical_sigma_w2(0.05) < mf.critical_sigma_w2(0.3) < mf.critical_sigma_w2(1.0)


def test_c_star_and_depth_scales():
    d = mf.depth_scales(1.5, 0.05)  # ordered
    assert d["c_star"] == 1.0 and d["xi_c"] == pytest.approx(-1 / np.log(d["chi1"]))
    d = mf.depth_scales(3.0, 0.05)  # chaotic
    assert 0 < d["c_star"] < 1
    assert abs(mf.correlation_map(d["c_star"], 3.0, 0.05) - d["c_star"]) < 1e-10
    assert d["chi_c"] < 1 < d["chi1"]
    assert mf.depth_scales(mf.critical_sigma_w2(0.05) * 1.001, 0.05)["xi_c"] > 50 * d["xi_c"] / 10


def test_iterate_maps_reduces_to_fixed_point_maps():
    qs = mf.q_star(4.0, 0.1)
    q, c = mf.iterate_maps(qs, 0.3, 5, 4.0, 0.1)
    np.testing.assert_allclose(q, qs, rtol=1e-12)
    np.testing.assert_allclose(c, mf.iterate_correlation_map(0.3, 5, 4.0, 0.1), atol=1e-12)


def test_random_networks_follow_the_maps():
    sw2, sb2, n_nets, width = 4.0, 0.1, 16, 500
    s = mf.simulate_pairs(
        0.5, 0.3, sigma_w2=sw2, sigma_b2=sb2, width=width, n_layers=6, n_nets=n_nets, seed=1
    )
    q, c = mf.iterate_maps(0.5, 0.3, 6, sw2, sb2)
    assert np.allclose(s["q"][:, 0], 0.5) and np.allclose(s["c"][:, 0], 0.3)  # exact inputs
    qm = s["q"].mean(axis=(0, 2))
    qse = s["q"].mean(2).std(0, ddof=1) / np.sqrt(n_nets)
    cse = s["c"].std(0, ddof=1) / np.sqrt(n_nets)
    assert np.all(np.abs(qm[1:] - q[1:]) < 5 * qse[1:])
    assert np.all(np.abs(s["c"].mean(0)[1:] - c[1:]) < 5 * cse[1:])


def test_circle_lengths():
    sw2, sb2, N = 6.25, 0.09, 300
    r = mf.circle_experiment(
        sigma_w2=sw2, sigma_b2=sb2, width=N, n_layers=3, n_points=2000, seed=0, record_layers=(2,)
    )
    exact0 = 2 * np.pi * np.sqrt(N * mf.q_star(sw2, sb2))  # circumference of the input circle
    assert r["length_tangent"][0] == pytest.approx(exact0, rel=1e-12)
    assert r["length_chord"][0] == pytest.approx(exact0, rel=1e-5)  # 2000-gon: error π²/(6·2000²)
    # with fine sampling the polygon converges to the exact length after a few layers too
    assert r["length_chord"][2] == pytest.approx(r["length_tangent"][2], rel=0.05)
    assert r["proj_2"].shape == (2000, 3)
    assert np.all(np.diff(r["pca_var"][0]) <= 1e-12)


@pytest.mark.parametrize(
    "call",
    [
        lambda: mf.q_star(-1.0, 0.1),
        lambda: mf.q_star(1.0, -0.1),
        lambda: mf.chi1(1.0, 0.1, phi="relu6"),
        lambda: mf.simulate_pairs(
            1.0, 0.1, sigma_w2=1.0, sigma_b2=0.1, width=0, n_layers=2, n_nets=2, seed=0
        ),
        lambda: mf.circle_experiment(
            sigma_w2=1.0, sigma_b2=0.1, width=10, n_layers=2, n_points=5, seed=0, record_layers=(7,)
        ),
    ],
)
def test_bad_input_is_refused(call):
    with pytest.raises(ParameterError):
        call()


def _digits_unit():
    from layerwise.data import digits

    x, y = digits()
    x = x.reshape(len(x), -1)
    x = (x - x.mean(0)) / (x.std(0) + 1e-8)
    return x / np.sqrt((x**2).mean(1, keepdims=True)), y


def test_training_learns_and_is_deterministic():
    x, y = _digits_unit()
    kw = dict(depth=2, sigma_b2=0.05, width=32, steps=150, lr=0.05, batch=64, seed=3)
    a = trainability.train_depth_grid(x, y, sigma_w2s=np.array([1.0, 1.5]), **kw)
    b = trainability.train_depth_grid(x, y, sigma_w2s=np.array([1.0, 1.5]), **kw)
    assert np.all(a["accuracy"] > 0.8) and np.all(
        a["accuracy_init"] < 0.4
    )  # learned, from near chance
    np.testing.assert_array_equal(a["accuracy"], b["accuracy"])
    assert a["loss"].shape == (150, 2) and a["loss"][-20:].mean() < a["loss"][:20].mean()


def test_training_checkpoint_changes_nothing_that_follows():
    # plain SGD has no state and batches are drawn step by step: stopping at a checkpoint to
    # measure must leave the final trainings bit-identical, and the checkpoint must equal a
    # training that stops there
    x, y = _digits_unit()
    kw = dict(
        sigma_w2s=np.array([1.0, 2.5]), depth=3, sigma_b2=0.05, width=16, lr=0.05, batch=32, seed=11
    )
    whole = trainability.train_depth_grid(x, y, steps=40, **kw)
    split = trainability.train_depth_grid(x, y, steps=40, early_steps=15, **kw)
    short = trainability.train_depth_grid(x, y, steps=15, **kw)
    np.testing.assert_array_equal(split["accuracy"], whole["accuracy"])
    np.testing.assert_array_equal(split["loss"], whole["loss"])
    np.testing.assert_array_equal(split["accuracy_early"], short["accuracy"])
    assert "accuracy_early" not in whole
    for bad in (0, 40, 41, 2.5):
        with pytest.raises(ParameterError, match="early_steps"):
            trainability.train_depth_grid(x, y, steps=40, early_steps=bad, **kw)


def test_training_bad_input():
    x, y = _digits_unit()
    for kw in (
        dict(sigma_w2s=np.array([])),
        dict(sigma_w2s=np.array([-1.0])),
        dict(sigma_w2s=np.array([1.0]), depth=0),
    ):
        args = dict(depth=2, sigma_b2=0.05, width=8, steps=1, lr=0.1, batch=8, seed=0) | kw
        with pytest.raises(ParameterError):
            trainability.train_depth_grid(x, y, **args)


# ----------------------------------------------------------------------------------------------
# Independent quadrature: scipy's adaptive rules, a different parametrisation of the Gaussian pair
# ----------------------------------------------------------------------------------------------
def _q_star_adaptive(sw2, sb2):
    from scipy.optimize import brentq

    V = lambda q: sw2 * gauss_quad(lambda z: np.tanh(np.sqrt(q) * z) ** 2) + sb2  # noqa: E731
    return brentq(lambda q: V(q) - q, max(sb2, 1e-12), sw2 + sb2 + 1, xtol=1e-15, rtol=1e-15)


def _chi1_adaptive(sw2, sb2):
    q = _q_star_adaptive(sw2, sb2) if (sb2 > 0 or sw2 > 1) else 0.0
    return sw2 * gauss_quad(lambda z: (1 - np.tanh(np.sqrt(q) * z) ** 2) ** 2)


def _pair_tanh_adaptive(q, c):
    """E[tanh(u1) tanh(u2)], (u1, u2) ~ N(0, q [[1, c], [c, 1]]), written with the symmetric
    decomposition u1,2 = √q (a x ± b y), a = √((1+c)/2), b = √((1−c)/2), x, y ~ N(0, 1) i.i.d.,
    integrated by nested adaptive quadrature — independent of the module's rule."""
    a, b = np.sqrt((1 + c) / 2), np.sqrt((1 - c) / 2)
    s = np.sqrt(q)

    def inner(x):
        return gauss_quad(lambda y: np.tanh(s * (a * x + b * y)) * np.tanh(s * (a * x - b * y)))

    return gauss_quad(np.vectorize(inner))


def test_chi1_is_the_slope_of_an_independently_computed_correlation_map():
    sw2, sb2 = 2.5**2, 0.3**2
    q = _q_star_adaptive(sw2, sb2)
    assert abs(q - mf.q_star(sw2, sb2)) < 1e-10
    C = lambda c: (sw2 * _pair_tanh_adaptive(q, c) + sb2) / q  # noqa: E731
    assert abs(C(1.0) - 1.0) < 1e-10
    h = 2e-3
    d1, d2 = (1 - C(1 - h)) / h, (1 - C(1 - 2 * h)) / (2 * h)
    slope = 2 * d1 - d2  # Richardson: the O(h) term of the one-sided difference cancels
    assert abs(slope - mf.chi1(sw2, sb2)) < 1e-4 * mf.chi1(sw2, sb2)
    # and a point inside: the module's map against the independent one
    assert abs(C(0.4) - mf.correlation_map(0.4, sw2, sb2)) < 1e-9


@pytest.mark.parametrize("sb2", [0.05, 0.3])
def test_critical_line_against_independent_root(sb2):
    from scipy.optimize import brentq

    ref = brentq(lambda s: _chi1_adaptive(s, sb2) - 1.0, 1.0 + 1e-9, 5.0, xtol=1e-12)
    assert abs(mf.critical_sigma_w2(sb2) - ref) < 1e-8


def test_critical_line_at_zero_bias_is_the_limit_of_the_line():
    # σ_b² = 0: below σ_w² = 1 the only fixed point is q* = 0 and χ₁ = σ_w² < 1; just above, q* > 0
    # and χ₁ > 1 (independent quadrature and root-finding), so the transition is at σ_w² = 1 …
    assert _chi1_adaptive(0.999, 0.0) == pytest.approx(0.999, abs=1e-12)
    assert _chi1_adaptive(1.01, 0.0) > 1.0
    # … and the root-finder's line for σ_b² > 0 (not the σ_b² = 0 branch) tends to it monotonically
    line = [mf.critical_sigma_w2(b) for b in (1e-3, 1e-6, 1e-9, 1e-12)]
    assert np.all(np.diff(line) < 0) and 1.0 < line[-1] < 1.001


def test_xi_c_diverges_at_the_transition_from_both_sides():
    crit = mf.critical_sigma_w2(0.05)
    for side in (-1, 1):
        xi = [mf.depth_scales(crit * (1 + side * e), 0.05)["xi_c"] for e in (1e-2, 1e-3)]
        assert xi[1] > 5 * xi[0] > 5 * 10  # ξ_c ~ 1/|σ_w² − σ_w²_crit|: ×10 closer, ≳ ×5 deeper
    grid = np.linspace(1.0, 4.0, 31)
    xi = [mf.depth_scales(s, 0.05)["xi_c"] for s in grid]
    assert abs(grid[int(np.argmax(xi))] - crit) <= grid[1] - grid[0]


@pytest.mark.parametrize("sw2", [1.5, 3.0])
def test_iterated_correlation_map_contracts_by_chi_c(sw2):
    """Deep in the iteration the map (E[φφ]) contracts by χ_c (E[φ'φ'] at c*): Price's theorem."""
    d = mf.depth_scales(sw2, 0.05)
    c = mf.iterate_correlation_map(d["c_star"] - 0.3 if d["c_star"] < 1 else 0.99, 60, sw2, 0.05)
    ratio = abs(c[-1] - d["c_star"]) / abs(c[-2] - d["c_star"])
    assert ratio == pytest.approx(np.exp(-1 / d["xi_c"]), rel=1e-4)


def test_max_deviation_interval():
    from scipy import stats

    mean, se, ref = (
        np.array([1.0, 2.1, 2.95]),
        np.array([0.01, 0.02, 0.01]),
        np.array([1.0, 2.0, 3.0]),
    )
    m, (lo, hi) = max_deviation_interval(mean, se, ref, dof=9, confidence=0.99)
    t = stats.t.isf(0.01 / 6, 9)
    assert (
        m == pytest.approx(0.1)
        and lo == pytest.approx(0.1 - 0.02 * t)
        and hi == pytest.approx(0.1 + 0.02 * t)
    )
    m, (lo, hi) = max_deviation_interval(mean, se, ref, dof=9, relative=True)
    assert m == pytest.approx(0.05) and hi == pytest.approx(
        max(0.05 + 0.01 * t, (0.05 + 0.01 * t / 3))
    )
    m, (lo, hi) = max_deviation_interval(
        ref, se, ref, dof=9
    )  # exact agreement: interval starts at 0
    assert m == 0.0 and lo == 0.0
    with pytest.raises(ParameterError):
        max_deviation_interval(mean, se[:2], ref, dof=9)


def test_gauss_hermite_is_poor_for_tanh_at_large_q():
    f = lambda z: np.tanh(np.sqrt(20.0) * z) ** 2  # noqa: E731
    ref = gauss_quad(f)
    assert abs(gaussian.expectation(lambda x: np.tanh(x) ** 2, 20.0) - ref) < 1e-12
    assert (
        abs(gaussian.gauss_hermite_expectation(f, 201) - ref) > 1e-5
    )  # poles at ±iπ/(2√q): slow convergence


# ----------------------------------------------------------------------------------------------
# Chapter 7's studies
# ----------------------------------------------------------------------------------------------
def test_length_map_convergence_against_brute_force():
    q, starts = np.linspace(0, 5, 11), np.array([0.1, 3.0])
    r = study.length_map_convergence((1.3, 4.0), 0.09, q, starts, n_layers=10, rel_tol=1e-2)
    for sw, cv in r.items():
        assert cv["V"][3] == mf.length_map(q[3], sw**2, 0.09)
        assert cv["iterates"].shape == (2, 11) and np.array_equal(cv["iterates"][:, 0], starts)
        for it, first in zip(cv["iterates"], cv["layers"]):
            close = [abs(x - cv["q_star"]) / cv["q_star"] < 1e-2 for x in it]
            assert close[first] and not any(close[:first])  # the first layer within 1 %
        assert abs(mf.length_map(cv["q_star"], sw**2, 0.09) - cv["q_star"]) < 1e-12


def _fake_sims(rng, maps, n_nets, noise):
    return [
        {
            "q": q[None, :, None] * (1 + noise * rng.standard_normal((n_nets, len(q), 2))),
            "c": c[None] + noise * rng.standard_normal((n_nets, len(c))),
        }
        for q, c in maps
    ]


def test_maps_vs_networks_against_brute_force():
    rng = np.random.default_rng(0)
    maps = [mf.iterate_maps(0.5, 0.3, 5, sw2, 0.1) for sw2 in (1.5, 4.0)]
    sims = _fake_sims(rng, maps, 8, 0.02)
    r = study.maps_vs_networks(sims, maps)
    assert r["m"] == 2 * 5 and r["dof"] == 7
    # brute force over layers 1..L of both settings
    qm = [s["q"].mean(2).mean(0) for s in sims]
    dq = max(abs(m[l] - q[l]) / q[l] for m, (q, _) in zip(qm, maps) for l in range(1, 6))
    dc = max(abs(s["c"].mean(0)[l] - c[l]) for s, (_, c) in zip(sims, maps) for l in range(1, 6))
    assert r["dev_q"].mean == pytest.approx(dq, rel=1e-12)
    assert r["dev_c"].mean == pytest.approx(dc, rel=1e-12)
    for e in (r["dev_q"], r["dev_c"]):
        assert e.interval[0] <= e.mean <= e.interval[1] and e.n == 8
    # per setting, over all layers (the input included): the largest deviation and s.e.
    assert r["setting_dev_c"][1] == pytest.approx(np.max(np.abs(sims[1]["c"].mean(0) - maps[1][1])))
    assert r["setting_se_q"][0] == pytest.approx(
        np.max(sims[0]["q"].mean(2).std(0, ddof=1) / np.sqrt(8) / maps[0][0])
    )
    np.testing.assert_allclose(r["c_se"][1], sims[1]["c"].std(0, ddof=1) / np.sqrt(8), rtol=1e-12)
    # networks exactly on the maps: no deviation; the table's rows include the (exact) input layer
    exact = [
        {"q": np.repeat(q[None, :, None], 3, 0).repeat(2, 2), "c": np.repeat(c[None], 3, 0)}
        for q, c in maps
    ]
    r0 = study.maps_vs_networks(exact, maps)
    assert r0["dev_q"].mean < 1e-15 and r0["dev_c"].mean < 1e-15
    assert r0["setting_dev_c"].shape == (2,) and np.all(r0["setting_dev_c"] < 1e-15)


def test_phase_diagram_matches_chi1_and_its_critical_line():
    r = study.phase_diagram(6)
    assert r["chi1"].shape == (6, 6)
    assert r["chi1"][2, 4] == mf.chi1(r["sigma_w2"][4], r["sigma_b2"][2])
    for row, crit in zip(
        r["chi1"], r["critical_sigma_w2"]
    ):  # χ₁ < 1 left of the root, > 1 right of it
        assert np.all(row[r["sigma_w2"] < crit * (1 - 1e-9)] < 1) and np.all(
            row[r["sigma_w2"] > crit * (1 + 1e-9)] > 1
        )


def test_circle_growth_recovers_exact_exponential_rates():
    layers = np.arange(9)
    rates = np.array([0.40, 0.42, 0.44])
    lt = 3.0 * np.exp(rates[:, None] * layers[None])
    g = study.circle_growth(lt, np.exp(2 * 0.42))
    assert g["predicted"] == pytest.approx(0.42, rel=1e-14)
    assert g["slope"].mean == pytest.approx(0.42, rel=1e-12)
    assert g["slope"].se == pytest.approx(0.02 / np.sqrt(3), rel=1e-9) and g["slope"].dof == 2
    assert g["decades"].mean == pytest.approx(8 * 0.42 / np.log(10), rel=1e-12)


def test_depth_scale_curve_is_depth_scales_pointwise():
    r = study.depth_scale_curve(0.05, 4)
    assert r["sigma_w2"][0] == 1.0 and r["sigma_w2"][-1] == 4.0
    assert r["xi_c"][2] == mf.depth_scales(3.0, 0.05)["xi_c"] and float(
        r["critical"]
    ) == mf.critical_sigma_w2(0.05)


def test_standardised_digits_have_unit_length():
    x, y = standardise_digits("pixel", eps=1e-8, unit_length=True, dtype=np.float32)
    assert x.ndim == 2 and len(x) == len(y)
    np.testing.assert_allclose((x**2).mean(1), 1.0, rtol=1e-6)  # float32 pixels


def test_trainable_depth_interpolates_the_monotone_fit_in_log_depth_and_censors_the_ends():
    depths = np.array([4, 8, 16, 32])
    acc = np.array(
        [
            [0.9, 0.7, 0.3, 0.1],  # crosses between 8 and 16: 0.7 → 0.3, half-way in log L
            [0.9, 0.9, 0.8, 0.6],  # trainable at every depth: censored above
            [0.3, 0.2, 0.1, 0.1],  # at none: censored below
            [0.9, 0.2, 0.6, 0.1],
        ]
    )  # not monotone: the fit pools 0.2 and 0.6 to 0.4 < 0.5
    log_l50, cens = trainability.trainable_depth(acc, depths)
    assert np.exp(log_l50[0]) == pytest.approx(np.sqrt(8 * 16), rel=1e-12)
    assert list(cens) == [0, 1, -1, 0] and np.exp(log_l50[1]) == 32 and np.exp(log_l50[2]) == 4
    # pooled (0.4, 0.4) below 0.5 from depth 8: crossing
    # between 4 (0.9) and 8 (0.4) at (0.9 − 0.5)/(0.9 − 0.4)
    assert log_l50[3] == pytest.approx(np.log(4) + 0.8 * np.log(2), rel=1e-12)
    with pytest.raises(ParameterError):
        trainability.trainable_depth(acc, depths[::-1])


def test_peak_location_is_the_parabola_vertex_and_not_identified_at_edges_ties_or_censoring():
    grid = np.array([1.0, 1.5, 2.0, 2.5, 3.0])
    values = -((grid - 1.8) ** 2)  # an exact parabola: its vertex
    assert trainability.peak_location(values, grid) == pytest.approx(1.8, rel=1e-12)
    assert np.isnan(trainability.peak_location(-grid, grid))  # the largest value at the grid's edge
    assert np.isnan(trainability.peak_location([0, 1, 2, 2, 0], grid))  # a tie
    assert np.isnan(
        trainability.peak_location(values, grid, censored=[0, 0, 1, 0, 0])
    )  # the maximum is censored


def test_trainability_boundary_gives_replicate_estimates():
    sw2 = np.array([1.0, 1.5, 2.0, 2.5, 3.0])
    depths = np.array([4, 6, 8, 11, 16, 23, 32, 45, 64])  # steps of about √2
    xi = np.array([mf.depth_scales(s, 0.05)["xi_c"] for s in sw2])
    rng = np.random.default_rng(0)
    reps = []
    for k in (
        1.5,
        2.0,
        2.5,
    ):  # accuracy falling through 0.5 at L = k ξ_c (clipped to the grid) in log L
        mid = np.clip(np.log(k * xi), np.log(5), np.log(50))
        reps.append(
            1 / (1 + np.exp(4 * (np.log(depths)[None, :] - mid[:, None])))
            + 1e-3 * rng.random((5, 9))
        )
    b = trainability.trainability_boundary(np.array(reps), sw2, depths, 0.05)
    np.testing.assert_allclose(b["xi_c"], xi)
    assert b["log_l50"].shape == (3, 5) and np.all(b["censored"] == 0)
    assert b["k_est"].n == 3 and b["k_est"].mean == pytest.approx(2.0, rel=0.1)
    # L₅₀ ∝ ξ_c where the clip (a ceiling at 50) leaves it: the points near it are censored
    assert b["slope_est"].mean == pytest.approx(1.0, abs=0.1)
    assert b["used"][:, int(np.argmax(xi))].sum() == 0
    # the peak is where ξ_c is largest on this grid, located within the grid's neighbours
    k = int(np.argmax(xi))
    assert np.all((b["peak"] >= sw2[k - 1]) & (b["peak"] <= sw2[k + 1]))
    one = trainability.trainability_boundary(np.array(reps[:1]), sw2, depths, 0.05)
    assert one["peak_est"] is None and one["k_est"] is None  # one replicate: no interval
    with pytest.raises(ParameterError):
        trainability.trainability_boundary(reps[0], sw2, depths, 0.05)


def test_boundary_shift_against_hand_built_boundaries():
    depths = np.array([4.0, 8.0, 16.0, 32.0])

    # accuracy falling linearly in log2 L: crosses 0.5 at log2 L = b exactly
    def grid(bounds):
        return np.array(
            [[[0.5 + 0.1 * (b - k) for k in (2, 3, 4, 5)] for b in row] for row in bounds]
        )

    early = grid([[3.0, 4.0, 6.0], [2.5, 3.5, 6.0]])  # third σ_w²: censored (above the grid)
    late = grid([[3.5, 4.2, 6.5], [3.0, 4.5, 6.5]])
    r = trainability.boundary_shift(early, late, depths)
    np.testing.assert_allclose(r["shift"], np.log(2) * np.array([0.35, 0.75]), rtol=1e-12)
    assert list(r["pairs"]) == [2, 2]
    assert r["shift_est"].n == 2 and r["shift_est"].mean == pytest.approx(np.log(2) * 0.55)
    # no shift when nothing changes; None with one replicate; bad shapes refused
    assert trainability.boundary_shift(early, early, depths)["shift_est"].mean == 0.0
    assert trainability.boundary_shift(early[:1], late[:1], depths)["shift_est"] is None
    with pytest.raises(ParameterError, match="accuracy_early"):
        trainability.boundary_shift(early[0], late[0], depths)


def test_trainability_grid_is_one_training_per_replicate_and_depth():
    x, y = standardise_digits("pixel", eps=1e-8, unit_length=True, dtype=np.float32)
    x, y = x[:200], y[:200]
    kw = dict(sigma_b2=0.05, width=8, steps=3, lr=0.01, batch=16)
    r = study.trainability_grid(
        x, y, sigma_w2s=np.array([1.0, 2.0]), depths=(2, 3), seeds=[[5, 6], [7, 8]], **kw
    )
    assert r["accuracy"].shape == (2, 2, 2) and list(r["depths"]) == [2, 3]
    one = trainability.train_depth_grid(x, y, sigma_w2s=np.array([1.0, 2.0]), depth=3, seed=8, **kw)
    np.testing.assert_array_equal(r["accuracy"][1, :, 1], one["accuracy"])
    early = study.trainability_grid(
        x, y, sigma_w2s=np.array([1.0, 2.0]), depths=(2, 3), seeds=[[5, 6]], early_steps=1, **kw
    )
    np.testing.assert_array_equal(early["accuracy"][0], r["accuracy"][0])
    assert early["accuracy_early"].shape == (1, 2, 2)
    with pytest.raises(ParameterError):
        study.trainability_grid(x, y, sigma_w2s=np.array([1.0]), depths=(2, 3), seeds=[[5]], **kw)


def test_circle_ensemble_is_one_circle_experiment_per_seed():
    kw = dict(sigma_w2=6.25, sigma_b2=0.09, width=30, n_layers=3, n_points=16)
    e = study.circle_ensemble(**kw, seeds=(4, 9, 2), record_layers=(2,), n_pca=2)
    for k, seed in enumerate((4, 9, 2)):
        r = mf.circle_experiment(**kw, seed=seed, record_layers=(2,) if k == 0 else (), pca=k < 2)
        np.testing.assert_array_equal(e["length_tangent"][k], r["length_tangent"])
        np.testing.assert_array_equal(e["length_chord"][k], r["length_chord"])
        if k < 2:
            np.testing.assert_array_equal(e["pca_var"][k], r["pca_var"])
        if k == 0:
            np.testing.assert_array_equal(e["proj_2"], r["proj_2"])
    assert e["pca_var"].shape == (2, 4, 3) and not np.array_equal(
        e["length_tangent"][0], e["length_tangent"][1]
    )
    with pytest.raises(ParameterError):
        study.circle_ensemble(**kw, seeds=())


def test_sweep_starts():
    assert mf.sweep_starts(0.3, 0.1, 0.02) == pytest.approx((0.4, 0.2))
    assert mf.sweep_starts(0.9, 0.1, 0.02) == pytest.approx(
        (0.95, 0.85)
    )  # d = (1 − c*)/2 near the transition
    assert mf.sweep_starts(1.0, 0.1, 0.02) == (0.98, 0.98)


def test_depth_scale_sweep_follows_the_maps_and_chi1():
    """Wide nets: layer-0 correlations are the starts exactly; layer-1 mean correlations follow the
    correlation map and the mean squared error signal shrinks by χ₁ per
    layer (Schoenholz Eq. 14)."""
    sw2, sb2 = np.array([1.2, 3.0]), np.array([0.05, 0.3])
    s = mf.depth_scale_sweep(
        sigma_w2s=sw2, sigma_b2s=sb2, width=800, n_layers=3, n_nets=6, seed=3
    )
    assert s["c"].shape == (2, 2, 6, 2, 4) and s["grad"].shape == (2, 2, 6, 4)
    np.testing.assert_allclose(
        s["c"][..., 0], np.broadcast_to(s["starts"][:, :, None, :], (2, 2, 6, 2)), atol=1e-12
    )
    for i, b in enumerate(sb2):
        for j, a in enumerate(sw2):
            for k in range(2):
                ref = mf.correlation_map(s["starts"][i, j, k], a, b)
                assert abs(s["c"][i, j, :, k, 1].mean() - ref) < 0.02
            ratios = (
                s["grad"][i, j, :, :-1] / s["grad"][i, j, :, 1:]
            ).ravel()  # every layer of every net
            se = ratios.std(ddof=1) / np.sqrt(ratios.size)
            assert abs(ratios.mean() - mf.chi1(a, b)) < 4 * se and se < 0.03
    assert s["c_star"][0, 1] < 1 and s["c_star"][0, 0] == 1.0
    with pytest.raises(ParameterError, match="sigma_b2s"):
        mf.depth_scale_sweep(
            sigma_w2s=sw2, sigma_b2s=[0.0], width=8, n_layers=2, n_nets=2, seed=0
        )
    with pytest.raises(ParameterError, match="sigma_w2s"):
        mf.depth_scale_sweep(
            sigma_w2s=[], sigma_b2s=[0.1], width=8, n_layers=2, n_nets=2, seed=0
        )


def test_sweep_rates_recover_exact_decays():
    """Synthetic 'networks' whose mean correlations are the map's iterates (plus a per-network
    offset that averages to zero) and whose error signals shrink by exactly χ₁ per layer: the
    measured rates are the estimator on the map, and −ln χ₁ for the gradient."""
    sw2, sb2, L, n = np.array([1.3, 3.5]), np.array([0.05]), 20, 6
    th = {
        k: np.array([[mf.depth_scales(a, 0.05)[k] for a in sw2]])
        for k in ("q_star", "c_star", "chi1", "chi_c", "xi_c")
    }
    starts = np.array([[mf.sweep_starts(th["c_star"][0, j], 0.1, 0.02) for j in range(2)]])
    maps = np.array(
        [
            [
                [mf.iterate_correlation_map(c0, L, a, 0.05) for c0 in starts[0, j]]
                for j, a in enumerate(sw2)
            ]
        ]
    )
    eps = 1e-5 * np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5])[None, None, :, None, None]
    c = maps[:, :, None] + eps * np.ones((1, 2, n, 2, L + 1))
    layers = np.arange(L + 1)
    grad = np.broadcast_to(th["chi1"][..., None, None] ** (L - layers), (1, 2, n, L + 1)) * (
        1 + 0.01 * eps[..., 0] * 1e5
    )
    sweep = dict(sigma_w2=sw2, sigma_b2=sb2, c=c, grad=grad, starts=starts, **th)
    r = mf.sweep_rates(sweep, n_boot=20)
    np.testing.assert_allclose(r["rate_c"], r["rate_c_map"], rtol=1e-3)
    np.testing.assert_allclose(
        r["rate_c_map"], -np.log(th["chi_c"]), rtol=0.05
    )  # the window's bias is small
    np.testing.assert_allclose(r["rate_grad"], -np.log(th["chi1"]), rtol=1e-6)
    assert (
        r["peak_c"][0] == sw2[np.argmin(np.abs(r["rate_c"][0]))]
        and r["rate_c_loo"].shape == (1, 2, n)
        and r["dof"] == n - 1
    )


def test_mean_rate_ratio_is_the_precision_weighted_mean():
    m, t, se = np.array([1.1, 0.45, 9.0]), np.array([1.0, 0.5, 1.0]), np.array([0.1, 0.1, 0.1])
    loo = np.stack([m * (1 + 0.01 * k) for k in range(4)], axis=-1)
    alt = np.array([2.0, 1.0, 7.0])
    out = mf.mean_rate_ratio(m, t, loo, se, np.array([True, True, False]), alt)
    est = out["est"]
    w = np.array([100.0, 25.0]) / 125
    assert est.mean == pytest.approx(w @ [1.1, 0.9], rel=1e-12) and est.n == 2 and est.dof == 3
    v = np.array([(w @ [1.1, 0.9]) * (1 + 0.01 * k) for k in range(4)])
    assert est.se == pytest.approx(np.sqrt(3 / 4 * np.sum((v - v.mean()) ** 2)), rel=1e-10)
    # the alternative rates, weighted the same way: 2/1 and 1/0.5
    assert out["alternative"] == pytest.approx(w @ [2.0, 2.0], rel=1e-12)
    assert mf.mean_rate_ratio(m, t, loo, se, np.zeros(3, bool))["est"].n == 0


def test_sweep_rate_ratios_keeps_only_resolved_settings():
    # four settings: ordered & resolved, chaotic & resolved, ξ too long for 30 layers, window bias
    # of 10 %
    theory = np.array([-0.5, -0.25, -0.05, -0.4])
    R = {
        "rate_c_theory": -theory,
        "rate_c_map": -theory * np.array([1.0, 1.02, 1.0, 1.10]),
        "rate_c": -theory * np.array([1.1, 0.9, 5.0, 5.0]),
        "rate_c_se": np.full(4, 0.01),
        "rate_grad_theory": theory,
        "rate_grad": theory * 1.2,
        "rate_grad_se": np.full(4, 0.01),
        "rate_q_theory": np.full(4, 0.8),
    }
    R["rate_c_loo"] = np.repeat(R["rate_c"][:, None], 5, axis=1)
    R["rate_grad_loo"] = np.repeat(R["rate_grad"][:, None], 5, axis=1)
    phase = np.array(["ordered", "chaotic", "ordered", "chaotic"])
    ratios, bias = mf.sweep_rate_ratios(R, phase, 30)
    ordered, chaotic, grad = (ratios[k]["est"] for k in ("ordered", "chaotic", "grad"))
    assert ordered.n == 1 and ordered.mean == pytest.approx(1.1)
    assert chaotic.n == 1 and chaotic.mean == pytest.approx(0.9)
    assert grad.n == 3 and grad.mean == pytest.approx(1.2) and grad.se == 0
    # alternatives: ordered at the length map's rate, chaotic at |ln χ₁|, gradients at rate 0
    assert ratios["ordered"]["alternative"] == pytest.approx(0.8 / 0.5)
    assert ratios["chaotic"]["alternative"] == pytest.approx(1.0)
    assert ratios["grad"]["alternative"] == 0
    assert bias == pytest.approx(0.02)
    with pytest.raises(ParameterError, match="n_layers=3"):
        mf.sweep_rate_ratios(R, phase, 3)


def test_linear_maps_are_the_closed_form_recursion_even_where_lengths_explode():
    q, c = mf.iterate_maps(10.0, 0.95, 12, 16.0, 0.09, phi="linear")
    qq, cc = [10.0], [0.95]
    for _ in range(12):
        qq.append(16.0 * qq[-1] + 0.09)
        cc.append((16.0 * qq[-2] * cc[-1] + 0.09) / qq[-1])
    np.testing.assert_allclose(q, qq, rtol=1e-15)
    np.testing.assert_allclose(c, cc, rtol=1e-15)
    assert q[-1] > 1e15  # lengths a quadrature in √q could not integrate


def test_poole_circle_settings_lie_in_the_phases_the_paper_names():
    """Poole et al. 2016 (Figs. 3–4) run their circle experiment at σ_b = 0.3 with σ_w = 1.3
    (ordered) and σ_w = 2.5, 4.0 (chaotic): χ₁ at the length fixed point says so, with a margin
    far above the quadrature's error (a check, not a claim: the book's Chapter 7 only quotes it)."""
    chi = {sw: mf.chi1(sw**2, 0.3**2) for sw in (1.3, 2.5, 4.0)}
    assert chi[1.3] < 1 < chi[2.5] < chi[4.0]
    assert min(abs(c - 1) for c in chi.values()) > 0.05
    # and the boundary between them lies where the critical line says, at this bias
    crit = mf.critical_sigma_w2(0.3**2)
    assert 1.3**2 < crit < 2.5**2


def test_the_circle_grows_by_orders_of_magnitude_only_in_the_chaotic_phase():
    """Poole et al. 2016, Fig. 4 (formerly the chapter's claim chaotic_circle_grows_exponentially,
    certain by argument once χ₁ > 1): the exact length of the propagated circle grows by about
    ½ log10 χ₁ decades per layer in the chaotic phase, by orders of magnitude over a dozen
    layers, and shrinks in the ordered phase."""
    for sigma_w, grows in ((4.0, True), (1.3, False)):
        r = mf.circle_experiment(sigma_w2=sigma_w**2, sigma_b2=0.09, width=300, n_layers=12,
                                 n_points=100, seed=1, pca=False)
        decades = np.log10(r["length_tangent"][-1] / r["length_tangent"][0])
        expected = 12 * 0.5 * np.log10(mf.chi1(sigma_w**2, 0.09))
        assert decades == pytest.approx(expected, abs=0.15 * abs(expected) + 0.05)
        assert (decades >= 2) if grows else (decades < 0)
