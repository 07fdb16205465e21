"""Chapter 2's science (layerwise.diffusion) against closed forms, brute force and invariants:
the capacity network [Donier 2019, Eqs. 27–28], its residual/diffusion limit [Eqs. 29–34], the
straight-path weight [Eqs. 35–36] and the real-network gradient experiments."""

from __future__ import annotations

import math

import numpy as np
import pytest

from layerwise import diffusion as C
from layerwise.capacity import stochastic_matrix
from layerwise.params import ParameterError
from layerwise.stats import mean_se


def test_capacity_network_conserves_total():
    rng = np.random.default_rng(9)
    Ds = [stochastic_matrix(rng.standard_normal((6, 6))) for _ in range(10)]
    k = C.capacity_network(Ds, rng.random(6))
    assert np.allclose(k.sum(1), k[0].sum(), rtol=1e-13)
    assert np.allclose(k[-1], np.linalg.multi_dot(Ds) @ k[0])


def test_capacity_network_varying_widths_conserves_total():
    # Eq. 28 through 20 dense layers of widths 8–40 (Chapter 2's former eq28_conservation claim)
    rng = np.random.default_rng(14)
    widths = [int(w) for w in rng.integers(8, 40, size=21)]
    Ds = [stochastic_matrix(rng.standard_normal((widths[l], widths[l + 1]))) for l in range(20)]
    ks = C.capacity_network(Ds, rng.random(widths[-1]) * 3)
    totals = np.array([k.sum() for k in ks])
    assert np.allclose(totals, totals[0], rtol=1e-12)
    assert [len(k) for k in ks] == widths[::-1]


def test_random_residual_network_moments_in_expectation():
    # Chapter 2's former residual_variance_slope / residual_zero_drift claims: averaged over random
    # networks, the profile is exactly (I + εE[Δ])^k δ, so E[mean] = 0 and E[second moment] = 2𝒟εk
    n, L, lo, hi, envs = 61, 80, 10.0, 30.0, 60
    eps, c = 1.0 / L, n // 2
    m2s, mus, tots = [], [], []
    for e in range(envs):
        r = np.random.default_rng([15, e])
        Ds = [
            C.residual_layer(n, eps, r.uniform(lo, hi, n), r.uniform(lo, hi, n)) for _ in range(L)
        ]
        tot, mu, var = C.circular_moments(C.capacity_network(Ds, np.eye(n)[c]), c)
        m2s.append(var + mu**2), mus.append(mu), tots.append(tot)
    m2s, mus = np.array(m2s), np.array(mus)
    assert np.allclose(tots, 1, atol=1e-12)
    k = np.arange(L + 1)
    m2, se = mean_se(m2s)
    assert np.all(np.abs(m2 - 2 * (lo + hi) / 2 * eps * k) <= 4.5 * se + 1e-12)
    mu, se_mu = mean_se(mus[:, -1])
    assert abs(mu) < 4 * se_mu


def test_residual_layer_refuses_negative_diagonal_and_wmax_stays_positive():
    # D = I + εΔ with ε(a+b) > 1 has a negative diagonal: L = 1 with a + b up to 1.5 gave w_max < 0
    with pytest.raises(ParameterError, match="negative diagonal"):
        C.residual_layer(5, 1.0, 0.75, 0.75)
    with pytest.raises(ParameterError, match=">= 0"):
        C.residual_layer(5, 0.1, -1.0, 0.5)
    rng = np.random.default_rng(16)
    for L in (2, 3, 10, 400):
        ab = rng.uniform(0.25, 0.75, size=(L, 2))
        Ds = [C.residual_layer(5, 1.0 / L, a, b) for a, b in ab]
        assert np.allclose(sum(Ds[0]), 1)  # column-stochastic
        w = C.straight_path_weight(Ds, 2)
        assert np.all(w > 0) and np.all(np.diff(w) <= 0)
        # Eq. 36: w_max = exp(Σ_l ε(Δ_l)_ii) up to |log(1−x) + x| ≤ x² per layer, x = ε(a+b) ≤ 1.5/L
        if L >= 3:
            pred = math.exp(-(ab.sum(1) / L).sum())
            assert abs(w[-1] / pred - 1) <= math.expm1(2.25 / L)


def test_residual_walk_moments_and_heat_kernel():
    n, L, a = 101, 200, 20.0
    eps = 1.0 / L
    D = np.eye(n) + eps * C.local_delta(n, a, a)
    assert np.allclose(D.sum(0), 1)
    k = C.capacity_network([D] * L, np.eye(n)[50])
    tot, mu, var = C.circular_moments(k, 50)
    assert np.allclose(tot, 1) and np.allclose(mu, 0, atol=1e-12)
    assert np.allclose(
        var, np.arange(L + 1) * 2 * a * eps, rtol=1e-10
    )  # exact lattice-walk variance
    x = np.arange(n)
    g = C.heat_kernel(x, 50, a, 1.0)  # 𝒟 = a, t = 1 → variance 2a = 40
    assert abs(g.sum() - 1) < 1e-6
    assert np.abs(k[-1] - g).sum() < 0.01


def test_straight_path_weight():
    r = 3
    D = stochastic_matrix(np.ones((r, r)))
    w = C.straight_path_weight([D] * 5, 0)
    assert np.allclose(w, (1 / r) ** np.arange(6))
    # Chapter 2's former wmax_plain claim: (1/r)^L to rounding up to L = 400
    w = C.straight_path_weight([D] * 400, 1)
    assert np.allclose(w / (1 / r) ** np.arange(401), 1, rtol=1e-12, atol=0)


def test_conv_net_pseudo_random_gradients_match_capacity_network():
    r = C.conv_net_gradients(
        arch="plain",
        activation="pseudo_random",
        depth=3,
        channels=4,
        length=12,
        n_inputs=512,
        n_nets=1,
        seed=0,
        batch=256,
    )
    g, se, p = r["g2"][0], r["g2_se"][0], r["pred"][0]
    assert np.array_equal(g > 0, p > 0)
    assert r["g2_total"].shape == (1, 512)
    assert r["g2_total"].mean() == pytest.approx(g.sum(), rel=1e-12)
    m = se > 0
    assert np.mean(((g[m] - p[m]) / se[m]) ** 2) < 3.0
    lin = C.conv_net_gradients(
        arch="residual",
        activation="linear",
        depth=2,
        channels=3,
        length=9,
        n_inputs=256,
        n_nets=1,
        seed=0,
        res_scale=0.5,
    )
    assert np.all(
        lin["g2_se"] <= 1e-8 * lin["g2"].max()
    )  # linear net: gradient independent of the input


def _walk(ring, L, D):
    return C.capacity_network([C.residual_layer(ring, 1.0 / L, D, D)] * L, np.eye(ring)[ring // 2])


def test_walk_excess_kurtosis_against_the_exact_walk():
    ring, L, D = 201, 50, 5.0
    k = _walk(ring, L, D)[-1]
    off = np.arange(ring) - ring // 2
    m2, m4 = (k * off**2).sum(), (k * off**4).sum()
    assert C.walk_excess_kurtosis(D / L, L) == pytest.approx(m4 / m2**2 - 3, rel=1e-9)


def test_edgeworth_l1_brute_force():
    u = np.linspace(-12, 12, 400001)
    e = (
        np.sum(np.abs(u**4 - 6 * u**2 + 3) * np.exp(-u * u / 2))
        * (u[1] - u[0])
        / math.sqrt(2 * math.pi)
    )
    assert C.edgeworth_l1(0.3) == pytest.approx(
        0.3 / 24 * e, rel=1e-6
    )  # scipy quad across the kinks
    assert C.edgeworth_l1(-0.3) == C.edgeworth_l1(0.3)


def test_bad_inputs_raise_parameter_error():
    with pytest.raises(ParameterError, match="arch"):
        C.conv_net_gradients(
            arch="dense",
            activation="relu",
            depth=1,
            channels=1,
            length=3,
            n_inputs=1,
            n_nets=1,
            seed=0,
        )
    with pytest.raises(ParameterError, match="depth"):
        C.shattering_gradients(arch="plain", depth=-1, width=3, n_points=4, n_nets=1, seed=0)


def test_local_delta_refuses_negative_rates_before_building():
    # the former L = 1 slip: a negative rate (or ε(a+b) > 1) gives a negative diagonal and w_max < 0
    for bad in (-0.1, np.nan):
        with pytest.raises(ParameterError, match="left and right rates"):
            C.local_delta(7, bad, 0.5)
    with pytest.raises(ParameterError, match="left and right rates"):
        C.local_delta(7, 0.5, np.array([0.1] * 6 + [-1.0]))
    D = C.local_delta(7, 0.2, 0.7)
    assert np.allclose(D.sum(0), 0) and np.allclose(np.diag(D), -0.9)
    assert np.all(D - np.diag(np.diag(D)) >= 0)


def test_edgeworth_l1_with_skewness_brute_force():
    u = np.linspace(-12, 12, 400001)
    g1, g2 = 0.4, 0.1
    f = np.abs(g1 * (u**3 - 3 * u) / 6 + g2 * (u**4 - 6 * u**2 + 3) / 24) * np.exp(-u * u / 2)
    assert C.edgeworth_l1(g2, g1) == pytest.approx(
        f.sum() * (u[1] - u[0]) / math.sqrt(2 * math.pi), rel=1e-6
    )
    # E|He₃(u)| = 2(1 + 4e^{−3/2})/√(2π): −(u² − 1)φ(u) is an antiderivative of He₃φ, zeros at 0,
    # ±√3
    e3 = 2 * (1 + 4 * math.exp(-1.5)) / math.sqrt(2 * math.pi)
    assert C.edgeworth_l1(0.0, -0.3) == pytest.approx(0.3 / 6 * e3, rel=1e-8)


def test_residual_step_makes_a_step_of_one_over_l():
    for tau, L in ((4.0, 8), (4.0, 64), (1.5, 3)):
        s = C.residual_step(tau, L)
        assert s * s / (1 + s * s) == pytest.approx(tau / L, rel=1e-12)
    with pytest.raises(ParameterError, match="depth"):
        C.residual_step(4.0, 4)


def _chain_inputs(act, seed=0, samples=6000, widths=(4, 3)):
    rng = np.random.default_rng(seed)
    net = C.chain_network(n=4, widths=list(widths), activation=act, samples=samples, rng=rng)
    J = rng.standard_normal((widths[-1], 2))
    return net, J


def test_chain_capacities_one_layer_equal_the_chapter_1_estimator():
    from layerwise.capacity import empirical_augmented_capacities

    net, J = _chain_inputs("relu", widths=(3,))
    direct = C.chain_capacities(net["Y"], net["etas"], net["Ps"], J)
    ch1 = empirical_augmented_capacities(net["Y"], net["etas"][0], net["Ps"][0], J)
    np.testing.assert_allclose(direct, ch1, rtol=1e-9, atol=1e-12)


def test_chain_capacities_of_exactly_decoupled_units_are_the_capacity_network():
    # η_l independent of everything with E[η_a η_b] = δ_ab exactly over the sample: every ±1
    # sign pattern once per input row of an orthonormal design, so the empirical Σ̃ is block
    # diagonal and Eq. 28 holds to round-off
    from itertools import product

    from layerwise.capacity import feature_capacities, random_unit_columns, stochastic_matrix

    rng = np.random.default_rng(1)
    n, widths = 2, [2, 2]
    signs = np.array(list(product([-1.0, 1.0], repeat=4)))  # (16, 4): all patterns
    Ybase = np.array([[1.0, 1.0], [1.0, -1.0]])
    Y = np.repeat(Ybase, len(signs), 0)
    E = np.tile(signs, (2, 1))
    Ps = [random_unit_columns(n, widths[0], rng), random_unit_columns(widths[0], widths[1], rng)]
    J = rng.standard_normal((2, 1))
    kappa = C.chain_capacities(Y, [E[:, :2], E[:, 2:]], Ps, J)
    pred = stochastic_matrix(Ps[0]) @ stochastic_matrix(Ps[1]) @ feature_capacities(J)
    np.testing.assert_allclose(kappa, pred, atol=1e-12)


def test_chain_capacities_conserve_the_rank_and_refuse_mismatched_layers():
    net, J = _chain_inputs("pseudo_random")
    kappa = C.chain_capacities(net["Y"], net["etas"], net["Ps"], J)
    assert kappa.sum() == pytest.approx(2.0)  # the rank of K̃: the read-out's 2 outputs
    with pytest.raises(ParameterError, match="one per layer"):
        C.chain_capacities(net["Y"], net["etas"][:1], net["Ps"], J)


def test_chain_network_linear_units_and_refusal():
    net, _ = _chain_inputs("linear", samples=10)
    assert all(np.all(E == 1.0) for E in net["etas"])
    assert [P.shape for P in net["Ps"]] == [(4, 4), (4, 3)]
    np.testing.assert_allclose(np.linalg.norm(net["Ps"][1], axis=0), 1.0)
    with pytest.raises(ParameterError):
        C.chain_network(
            n=4, widths=[2], activation="swish", samples=5, rng=np.random.default_rng(0)
        )


def test_random_residual_profiles_are_the_dense_capacity_network_of_their_rates():
    rng = np.random.default_rng(2)
    ring, L = 9, 4
    rates = rng.uniform(0.1, 0.4, (2, L, 2, ring))
    prof = C.random_residual_profiles(rates)
    assert prof.shape == (2, L + 1, ring)
    np.testing.assert_allclose(prof.sum(-1), 1.0, rtol=1e-12)  # each layer conserves capacity
    for e in range(2):
        Ds = [C.residual_layer(ring, 1.0 / L, rates[e, l, 0], rates[e, l, 1]) for l in range(L)]
        dense = C.capacity_network(Ds, np.eye(ring)[ring // 2])  # [κ^L, …, κ⁰]
        np.testing.assert_allclose(prof[e], dense, atol=1e-14)
    same = np.broadcast_to(rates[:, -1:], rates.shape)  # every layer the top layer's rates
    np.testing.assert_allclose(
        C.random_residual_profiles(rates, frozen=True), C.random_residual_profiles(same), atol=0
    )


def test_straight_path_curves_closed_forms():
    rates = [np.full((L, 2), 0.5) for L in (1, 4, 16)]
    W = C.straight_path_curves(rates)
    # residual: Π_l (1 − 2·0.5/L) = (1 − 1/L)^L; plain uniform layers keep 1/3 and 1/5 per layer
    np.testing.assert_allclose(W["w_res"], [(1 - 1 / L) ** L for L in (1, 4, 16)], atol=1e-15)
    np.testing.assert_allclose(W["w_res_pred"], math.exp(-1.0))
    np.testing.assert_allclose(W["w_plain3"], [3.0**-L for L in (1, 4, 16)], rtol=1e-12)
    np.testing.assert_allclose(W["w_plain5"], [5.0**-L for L in (1, 4, 16)], rtol=1e-12)
