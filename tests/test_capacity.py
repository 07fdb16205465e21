"""Tests of layerwise.capacity against closed forms, invariants and brute force (Donier 2019)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad

from layerwise import capacity as C
from layerwise.params import ParameterError


# -- ν [Eqs. 12–15] -------------------------------------------------------------------------------
@pytest.mark.parametrize("slope", [0.0, 0.1, 0.3, 0.5, 0.9])
def test_leaky_relu_nu_closed_form(slope):
    al, be = C.eta_levels("leaky_relu", slope)
    assert al * al + be * be == pytest.approx(2.0)
    assert C.nu_closed_form("leaky_relu", slope) == pytest.approx((1 + slope) ** 2 / (2 * (1 + slope**2)))


def test_nu_special_values():
    assert C.nu_closed_form("linear") == 1.0
    assert C.nu_closed_form("relu") == pytest.approx(0.5)
    assert C.nu_closed_form("abs") == 0.0
    assert C.nu_closed_form("pseudo_random") == 0.0


def test_pseudo_random_sign_is_fixed_balanced_and_unit_dependent():
    z = np.random.default_rng(0).standard_normal(200_000)
    e = C.pseudo_random_sign(z, 3)
    assert set(np.unique(e)) == {-1.0, 1.0}
    assert np.array_equal(e, C.pseudo_random_sign(z, 3))  # drawn once
    assert abs(e.mean()) < 4 / math.sqrt(len(z))
    assert abs(np.mean(e * C.pseudo_random_sign(z, 4))) < 4 / math.sqrt(len(z))
    # adjacent but distinct inputs decorrelate
    assert abs(np.mean(e * C.pseudo_random_sign(z + 3 * C.PSEUDO_RANDOM_BIN, 3))) < 4 / math.sqrt(len(z))


def test_pseudo_random_sign_torch_matches_numpy():
    torch = pytest.importorskip("torch")
    z = np.random.default_rng(1).standard_normal((4, 50))
    seeds = np.arange(50)[None, :]
    a = C.pseudo_random_sign(z, seeds)
    b = C.pseudo_random_sign(torch.tensor(z), torch.tensor(seeds)).numpy()
    assert np.array_equal(a, b)


@pytest.mark.parametrize("name,slope", [("relu", None), ("leaky_relu", 0.2), ("abs", None), ("pseudo_random", None)])
def test_nu_monte_carlo_matches_formula_and_bruteforce(name, slope):
    rng = np.random.default_rng(2)
    fast = C.nu_monte_carlo(name, n=12, m=6, n_samples=40_000, rng=rng, slope=slope)
    brute = C.nu_monte_carlo_bruteforce(name, n=12, m=6, n_samples=20_000, rng=rng, slope=slope)
    nu = C.nu_closed_form(name, slope)
    assert abs(fast["nu"] - nu) < 4 * fast["se"]
    assert abs(brute["nu"] - nu) < 4 * brute["se"]
    assert abs(fast["diag"] - 1) < 4 * fast["diag_se"]  # E[η² y y] = E[y y]  (Eq. 13, first line)


def test_linear_nu_is_exactly_one():
    r = C.nu_monte_carlo("linear", n=5, m=3, n_samples=1000, rng=np.random.default_rng(0))
    assert r["nu"] == pytest.approx(1.0, abs=1e-12)


# -- generalised ν by quadrature ------------------------------------------------------------------
@pytest.mark.parametrize("name", C.SMOOTH)
@pytest.mark.parametrize("q", [0.05, 1.0, 8.0])
def test_eta_moments_quadrature_against_adaptive_quad(name, q):
    m1, m2 = C.eta_moments(name, q)
    for k, mk in ((1, m1), (2, m2)):
        f = lambda z: C.eta(name, np.array([z]))[0] ** k * math.exp(-z * z / (2 * q)) / math.sqrt(2 * math.pi * q)  # noqa: E731
        ref = quad(f, -np.inf, 0, epsabs=1e-14, epsrel=1e-13, limit=400)[0] + quad(
            f, 0, np.inf, epsabs=1e-14, epsrel=1e-13, limit=400)[0]
        assert mk == pytest.approx(ref, abs=1e-9)


def test_nu_smooth_limits():
    # small scale: every η → η(0) constant → ν → 1; large scale: GELU/SiLU/ELU → ReLU-like 1/2
    for name in C.SMOOTH:
        assert C.nu_smooth(name, 1e-6) == pytest.approx(1.0, abs=1e-4)
    assert C.nu_smooth("gelu", 1e4) == pytest.approx(0.5, abs=0.02)
    assert C.nu_smooth("tanh", 10.0) < C.nu_smooth("tanh", 1.0) < 1.0


def test_gaussian_expectation_polynomials():
    assert C.gaussian_expectation(lambda z: z**2, 3.0, 50) == pytest.approx(3.0, rel=1e-12)
    assert C.gaussian_expectation(lambda z: z**4, 3.0, 50) == pytest.approx(27.0, rel=1e-12)
    assert C.gaussian_expectation_negative_half(lambda z: z * z, 2.0) == pytest.approx(1.0, rel=1e-12)


# -- augmented covariance and footnote 3 ------------------------------------------------------
def test_augmented_covariance_linear_is_repeated_sigma():
    rng = np.random.default_rng(3)
    Y = rng.standard_normal((500, 4))
    St = C.augmented_covariance(Y, np.ones((500, 3)))
    Sig = Y.T @ Y / 500
    assert np.allclose(St, np.kron(np.ones((3, 3)), Sig))  # Eq. 10
    d, off = C.block_ratios(St, Sig)
    assert np.allclose(d, 1) and np.allclose(off, 1)


def test_footnote3_closed_form_against_monte_carlo():
    rng = np.random.default_rng(4)
    r = C.footnote3_error_mc("relu", n=8, n_samples=40_000, rng=rng)
    ref = C.footnote3_error_closed_form("relu", 8) ** 2
    assert abs(r["err2"] - ref) < 4 * r["err2_se"]
    assert C.footnote3_error_closed_form("relu", 32) == pytest.approx(C.footnote3_error_closed_form("relu", 8) / 2)


# -- capacities ----------------------------------------------------------------------------------
def test_projector_properties():
    rng = np.random.default_rng(5)
    n, p = 9, 4
    J = rng.standard_normal((n, p)) @ np.diag([1, 1, 1, 0.0])  # rank 3: 3 independent parameters
    Sig = np.cov(rng.standard_normal((n, 40)))
    K = C.capacity_matrix(Sig, J)
    Pi = K @ K.T
    assert np.allclose(Pi @ Pi, Pi, atol=1e-12)
    assert np.trace(Pi) == pytest.approx(3.0)
    kap = C.capacity(K)
    assert np.allclose(kap, np.diag(Pi)) and kap.sum() == pytest.approx(3.0)
    assert C.capacity(K, np.eye(n)) == pytest.approx(3.0)


def test_linear_layer_capacity_equals_input_space_capacity():
    rng = np.random.default_rng(6)
    for _ in range(5):
        n, m, p = 6, 5, 3
        Sig = np.cov(rng.standard_normal((n, 30)))
        P = C.random_unit_columns(n, m, rng)
        J = rng.standard_normal((m, p))
        S, _ = np.linalg.qr(rng.standard_normal((n, 2)))
        kt, k = C.linear_layer_capacities(Sig, P, J, S)
        assert kt == pytest.approx(k, abs=1e-12)  # Eq. 18


def test_pseudo_random_capacities_bruteforce_and_conservation():
    rng = np.random.default_rng(7)
    n, m, p = 5, 7, 3
    P = C.random_unit_columns(n, m, rng)
    J = rng.standard_normal((m, p))
    kphi = C.feature_capacities(J)
    k = C.pseudo_random_capacities(P, kphi)
    # brute force Eqs. 22–23 with Σ̃ = I: K̃ = P̃ K^φ, κ_i = ‖K̃ᵀ S̃_i‖²
    Kt = C.augment_P(P) @ C.orthonormal_basis(J)
    brute = [C.capacity(Kt, C.augment_subspace(np.eye(n)[:, [i]], m)) for i in range(n)]
    assert np.allclose(k, brute, atol=1e-12)
    assert k.sum() == pytest.approx(p) and kphi.sum() == pytest.approx(p)
    assert np.allclose(C.stochastic_matrix(P).sum(0), 1)


def test_empirical_augmented_capacities_exact_covariance():
    # with η ≡ ±1 independent signs and many samples the empirical capacities approach Eq. 25;
    # with an exactly whitened design they equal it (Σ̂̃ = I)
    rng = np.random.default_rng(8)
    n, m, p = 4, 3, 2
    P = C.random_unit_columns(n, m, rng)
    J = rng.standard_normal((m, p))
    # design: all 2^m sign patterns × a whitened Y set → Σ̂̃ = I exactly
    Y0 = np.linalg.qr(rng.standard_normal((n, n)))[0] * math.sqrt(n)
    Y0 = np.concatenate([Y0, -Y0])
    signs = np.array(np.meshgrid(*[[-1.0, 1.0]] * m)).reshape(m, -1).T
    Y = np.repeat(Y0, len(signs), axis=0)
    E = np.tile(signs, (len(Y0), 1))
    assert np.allclose(C.augmented_covariance(Y, E), np.eye(n * m))
    k = C.empirical_augmented_capacities(Y, E, P, J)
    assert np.allclose(k, C.pseudo_random_capacities(P, C.feature_capacities(J)), atol=1e-12)


# -- capacity network and diffusion [Eqs. 27–36] --------------------------------------------
def test_capacity_network_conserves_total():
    rng = np.random.default_rng(9)
    Ds = [C.stochastic_matrix(rng.standard_normal((6, 6))) for _ in range(10)]
    k = C.capacity_network(Ds, rng.random(6))
    assert np.allclose(k.sum(1), k[0].sum(), rtol=1e-13)
    assert np.allclose(k[-1], np.linalg.multi_dot(Ds) @ k[0])


def test_residual_walk_moments_and_heat_kernel():
    n, L, a = 101, 200, 20.0
    eps = 1.0 / L
    D = np.eye(n) + eps * C.local_delta(n, a, a)
    assert np.allclose(D.sum(0), 1)
    k = C.capacity_network([D] * L, np.eye(n)[50])
    tot, mu, var = C.circular_moments(k, 50)
    assert np.allclose(tot, 1) and np.allclose(mu, 0, atol=1e-12)
    assert np.allclose(var, np.arange(L + 1) * 2 * a * eps, rtol=1e-10)  # exact lattice-walk variance
    x = np.arange(n)
    g = C.heat_kernel(x, 50, a, 1.0)  # 𝒟 = a, t = 1 → variance 2a = 40
    assert abs(g.sum() - 1) < 1e-6
    assert np.abs(k[-1] - g).sum() < 0.01


def test_straight_path_weight():
    r = 3
    D = C.stochastic_matrix(np.ones((r, r)))
    w = C.straight_path_weight([D] * 5, 0)
    assert np.allclose(w, (1 / r) ** np.arange(6))


def test_conv_net_pseudo_random_gradients_match_capacity_network():
    r = C.conv_net_gradients(arch="plain", activation="pseudo_random", depth=3, channels=4, length=12,
                             n_inputs=512, n_nets=1, seed=0, batch=256)
    g, se, p = r["g2"][0], r["g2_se"][0], r["pred"][0]
    assert np.array_equal(g > 0, p > 0)
    m = se > 0
    assert np.mean(((g[m] - p[m]) / se[m]) ** 2) < 3.0
    lin = C.conv_net_gradients(arch="residual", activation="linear", depth=2, channels=3, length=9,
                               n_inputs=256, n_nets=1, seed=0, res_scale=0.5)
    assert np.all(lin["g2_se"] <= 1e-8 * lin["g2"].max())  # linear net: gradient independent of the input


def test_bad_inputs_raise_parameter_error():
    with pytest.raises(ParameterError, match="activation"):
        C.nu_closed_form("softplus")
    with pytest.raises(ParameterError, match="n="):
        C.nu_monte_carlo("relu", n=0, m=3, n_samples=10, rng=np.random.default_rng(0))
    with pytest.raises(ParameterError, match="slope"):
        C.eta_levels("leaky_relu")
    with pytest.raises(ParameterError, match="arch"):
        C.conv_net_gradients(arch="dense", activation="relu", depth=1, channels=1, length=3,
                             n_inputs=1, n_nets=1, seed=0)
    with pytest.raises(ParameterError, match="depth"):
        C.shattering_gradients(arch="plain", depth=-1, width=3, n_points=4, n_nets=1, seed=0)
