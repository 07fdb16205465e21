"""Tests of layerwise.capacity against closed forms, invariants and brute force (Donier 2019)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad

from layerwise import capacity as C
from layerwise.params import ParameterError
from layerwise.stats import mean_se


# -- ν [Eqs. 12–15] -------------------------------------------------------------------------------
@pytest.mark.parametrize("slope", [0.0, 0.1, 0.3, 0.5, 0.9])
def test_leaky_relu_nu_closed_form(slope):
    al, be = C.eta_levels("leaky_relu", slope)
    assert al * al + be * be == pytest.approx(2.0)
    assert C.nu_closed_form("leaky_relu", slope) == pytest.approx(
        (1 + slope) ** 2 / (2 * (1 + slope**2))
    )


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
    assert abs(np.mean(e * C.pseudo_random_sign(z + 3 * C.PSEUDO_RANDOM_BIN, 3))) < 4 / math.sqrt(
        len(z)
    )


def test_pseudo_random_sign_torch_matches_numpy():
    torch = pytest.importorskip("torch")
    z = np.random.default_rng(1).standard_normal((4, 50))
    seeds = np.arange(50)[None, :]
    a = C.pseudo_random_sign(z, seeds)
    b = C.pseudo_random_sign(torch.tensor(z), torch.tensor(seeds)).numpy()
    assert np.array_equal(a, b)


@pytest.mark.parametrize(
    "name,slope", [("relu", None), ("leaky_relu", 0.2), ("abs", None), ("pseudo_random", None)]
)
def test_nu_monte_carlo_matches_formula_and_bruteforce(name, slope):
    rng = np.random.default_rng(2)
    fast = C.nu_monte_carlo(name, n=12, m=6, n_samples=40_000, rng=rng, slope=slope)
    brute = C.nu_monte_carlo_bruteforce(name, n=12, m=6, n_samples=20_000, rng=rng, slope=slope)
    nu = C.nu_closed_form(name, slope)
    assert abs(fast["nu"].mean - nu) < 4 * fast["nu"].se
    assert abs(brute["nu"].mean - nu) < 4 * brute["nu"].se
    assert (
        abs(fast["diag"].mean - 1) < 4 * fast["diag"].se
    )  # E[η² y y] = E[y y]  (Eq. 13, first line)


@pytest.mark.parametrize("slope", [0.05, 0.5, 0.8])
def test_nu_monte_carlo_leaky_slopes(slope):
    # Chapter 1's Monte-Carlo of Eq. 13 (formerly its nu_* claims): with a fresh P per sample z_i is
    # symmetric given Y, so the estimator is unbiased for (α+β)²/4 and the diagonal is exactly 1
    r = C.nu_monte_carlo(
        "leaky_relu",
        n=64,
        m=16,
        n_samples=40_000,
        rng=np.random.default_rng(int(slope * 100)),
        slope=slope,
    )
    assert abs(r["nu"].mean - C.nu_closed_form("leaky_relu", slope)) < 4 * r["nu"].se
    assert abs(r["diag"].mean - 1) < 4 * r["diag"].se


def test_linear_nu_is_exactly_one():
    r = C.nu_monte_carlo("linear", n=5, m=3, n_samples=1000, rng=np.random.default_rng(0))
    assert r["nu"].mean == pytest.approx(1.0, abs=1e-12)


# -- generalised ν by quadrature ------------------------------------------------------------------
def _adaptive_moment(name, q, k):
    """E[η^k], z ~ N(0, q), by scipy's adaptive quad on [0, 1], [1, 2], [2, 4], … up to 14√q on each
    side (breakpoints at the unit scale of η, so a wide Gaussian cannot hide its peak)."""
    edges = [0.0, min(1.0, math.sqrt(q)) / 4]
    while edges[-1] < 14 * math.sqrt(q):
        edges.append(min(2 * edges[-1], 14 * math.sqrt(q)))

    def f(z):
        density = math.exp(-z * z / (2 * q)) / math.sqrt(2 * math.pi * q)
        return C.eta(name, np.array([z]))[0] ** k * density

    tot = 0.0
    for a, b in zip(edges[:-1], edges[1:], strict=False):
        tot += quad(f, a, b, epsabs=1e-15, epsrel=1e-13, limit=200)[0]
        tot += quad(f, -b, -a, epsabs=1e-15, epsrel=1e-13, limit=200)[0]
    return tot


@pytest.mark.parametrize("name", C.SMOOTH)
@pytest.mark.parametrize("q", [0.01, 0.05, 1.0, 8.0, 100.0, 1e4])
def test_eta_moments_quadrature_against_adaptive_quad(name, q):
    m1, m2 = C.eta_moments(name, q)
    r1, r2 = _adaptive_moment(name, q, 1), _adaptive_moment(name, q, 2)
    assert m1 == pytest.approx(r1, rel=1e-9)
    assert m2 == pytest.approx(r2, rel=1e-9)


@pytest.mark.parametrize("q,ref", [(100.0, 0.50957), (1e4, 0.14166)])
def test_tanh_nu_large_q_against_monte_carlo(q, ref):
    # Gauss–Hermite with 1500 nodes on the whole line gave 0.275 at q = 10⁴ (its nodes, spaced ∝ √q,
    # stepped over the unit-width peak of tanh z / z); a 4M-sample Monte-Carlo gives ≈ 0.142
    z = math.sqrt(q) * np.random.default_rng(11).standard_normal(4_000_000)
    e = C.eta("tanh", z)
    m1, m2 = e.mean(), (e * e).mean()
    nu_mc = m1 * m1 / m2
    # delta-method standard error of m1²/m2
    grad = np.array([2 * m1 / m2, -m1 * m1 / m2**2])
    cov = np.cov(np.stack([e, e * e])) / len(z)
    se = math.sqrt(grad @ cov @ grad)
    nu = C.nu_smooth("tanh", q)
    assert abs(nu - nu_mc) < 4 * se
    assert nu == pytest.approx(ref, abs=5e-6)


def test_gelu_closed_form_against_quadrature():
    for q in np.geomspace(0.01, 1e4, 25):
        assert C.nu_smooth("gelu", q) == pytest.approx(C.nu_gelu_closed_form(q), abs=1e-12)


@pytest.mark.parametrize("name", C.SMOOTH)
def test_smooth_nu_monte_carlo_against_quadrature(name):
    # Chapter 1's former smooth_mc_* claims: the block-ratio estimator (fresh P, n = 4000, so its
    # O(1/n)
    # bias is ≲ 1e-4) against ν(f; q) by quadrature
    for j, q in enumerate((0.03, 1.0, 10.0)):
        r = C.nu_monte_carlo(
            name, n=4000, m=16, n_samples=40_000, q=q, rng=np.random.default_rng(20 + j)
        )
        assert abs(r["nu"].mean - C.nu_smooth(name, q)) < 4 * r["nu"].se + 1e-3


def test_nu_smooth_limits():
    # small scale: every η → η(0) constant → ν → 1; large scale: GELU/SiLU/ELU → ReLU-like 1/2
    for name in C.SMOOTH:
        assert C.nu_smooth(name, 1e-6) == pytest.approx(1.0, abs=1e-4)
    assert C.nu_smooth("gelu", 1e4) == pytest.approx(0.5, abs=0.02)
    assert C.nu_smooth("tanh", 10.0) < C.nu_smooth("tanh", 1.0) < 1.0


# -- augmented covariance and footnote 3 ------------------------------------------------------
def test_augmented_covariance_linear_is_repeated_sigma():
    rng = np.random.default_rng(3)
    Y = rng.standard_normal((500, 4))
    St = C.augmented_covariance(Y, np.ones((500, 3)))
    Sig = Y.T @ Y / 500
    assert np.allclose(St, np.kron(np.ones((3, 3)), Sig))  # Eq. 10
    d, off = C.block_ratios(St, Sig)
    assert np.allclose(d, 1) and np.allclose(off, 1)


@pytest.mark.parametrize(
    "name,slope",
    [("linear", None), ("leaky_relu", 0.2), ("relu", None), ("abs", None), ("pseudo_random", None)],
)
def test_augmented_covariance_blocks_idealised(name, slope):
    # Chapter 1's former fig3_* claims (Eq. 14 with a fresh P per sample): off-diagonal blocks = νΣ,
    # diagonal blocks = Σ, for correlated inputs Σ_kl = 0.6^|k−l|
    Sig = 0.6 ** np.abs(np.subtract.outer(np.arange(6), np.arange(6)))
    r = C.augmented_covariance_mc(
        name, Sig, m=3, n_samples=40_000, rng=np.random.default_rng(12), slope=slope
    )
    for key, ref in (("off", C.nu_closed_form(name, slope)), ("diag", 1.0)):
        x = r[key]
        m, se = mean_se(x)
        assert abs(m - ref) < 5 * se + 1e-12
    assert r["S"].shape == (18, 18)
    if name == "linear":
        assert np.allclose(r["S"], np.kron(np.ones((3, 3)), r["S"][:6, :6]))


def test_footnote3_closed_form_against_monte_carlo():
    rng = np.random.default_rng(4)
    r = C.footnote3_mc("relu", n=8, n_samples=40_000, rng=rng)
    ref = C.footnote3_error_closed_form("relu", 8) ** 2
    m, se = mean_se(r["frob2"])
    assert abs(m - ref) < 4 * se
    assert C.footnote3_error_closed_form("relu", 32) == pytest.approx(
        C.footnote3_error_closed_form("relu", 8) / 2
    )


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
    # Eq. 18 (Chapter 1's former eq18_linear claim): random sizes, Wishart Σ, random subspaces
    rng = np.random.default_rng(6)
    for _ in range(60):
        n, m = rng.integers(3, 9), rng.integers(2, 7)
        p = rng.integers(1, min(n, m) + 1)
        Sig = np.cov(rng.standard_normal((n, 3 * n)))
        P = C.random_unit_columns(n, m, rng)
        J = rng.standard_normal((m, p))
        S, _ = np.linalg.qr(rng.standard_normal((n, rng.integers(1, n + 1))))
        kt, k = C.linear_layer_capacities(Sig, P, J, S)
        assert kt == pytest.approx(k, abs=1e-10)
    # κ of the whole space is the number of independent parameters
    assert C.linear_layer_capacities(
        np.eye(4), C.random_unit_columns(4, 3, rng), np.eye(3)[:, :2], np.eye(4)
    )[1] == pytest.approx(2)


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


def test_empirical_augmented_capacities_conserve_total():
    # the trace of an orthogonal projector of rank p (Chapter 1's former empirical_total_conserved
    # claim)
    rng = np.random.default_rng(13)
    n, m, p = 8, 16, 5
    P = C.random_unit_columns(n, m, rng)
    J = rng.standard_normal((m, p))
    for N in (300, 3000):
        Y = rng.standard_normal((N, n))
        E = C.eta("pseudo_random", Y @ P, unit_seed=np.arange(m)[None, :])
        k = C.empirical_augmented_capacities(Y, E, P, J)
        assert k.sum() == pytest.approx(p, abs=1e-9) and np.all(k >= -1e-12)


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


def test_bad_inputs_raise_parameter_error():
    with pytest.raises(ParameterError, match="activation"):
        C.nu_closed_form("softplus")
    with pytest.raises(ParameterError, match="n="):
        C.nu_monte_carlo("relu", n=0, m=3, n_samples=10, rng=np.random.default_rng(0))
    with pytest.raises(ParameterError, match="slope"):
        C.eta_levels("leaky_relu")


# -- small helpers of chapters 1–2 -----------------------------------------------------------------
def test_activation_label():
    assert C.activation_label("leaky_relu", 0.2) == "leaky ReLU a=0.2"
    assert C.activation_label("pseudo_random") == "pseudo-random"


def test_banded_covariance_brute_force():
    S = C.banded_covariance(5, 0.6)
    assert S.shape == (5, 5)
    for k in range(5):
        for l in range(5):
            assert S[k, l] == pytest.approx(0.6 ** abs(k - l), rel=1e-15)


def test_footnote3_opnorm_closed_forms():
    assert C.footnote3_direction_closed_form("relu") == pytest.approx(1 / math.pi, rel=1e-14)
    assert C.footnote3_direction_closed_form("abs") == pytest.approx(2 / math.pi, rel=1e-14)
    assert C.footnote3_direction_closed_form("linear") == 0.0
    a = 0.3  # leaky ReLU: α = a·c, β = c with c² (1 + a²) = 2
    assert C.footnote3_direction_closed_form("leaky_relu", a) == pytest.approx(
        (1 - a) ** 2 * 2 / (1 + a * a) / (2 * math.pi)
    )


def test_nu_smooth_curve_is_nu_smooth_on_a_grid():
    np.testing.assert_array_equal(
        C.nu_smooth_curve("tanh", [0.5, 2.0]), [C.nu_smooth("tanh", 0.5), C.nu_smooth("tanh", 2.0)]
    )


def test_q_at_nu_against_the_gelu_closed_form():
    # π/(π + 2 arcsin s) = 0.6 ⇔ arcsin s = π/3 ⇔ s = √3/2, with s = q/(1+q)
    s = math.sqrt(3) / 2
    assert C.q_at_nu("gelu", 0.6, -2.0, 4.0) == pytest.approx(s / (1 - s), rel=1e-8)
    q = C.q_at_nu("tanh", 0.5)
    assert C.nu_smooth("tanh", q) == pytest.approx(0.5, abs=1e-10)
