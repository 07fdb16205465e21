"""Fixed-layer augmented covariance, footnote 3 in two norms, capacities at intermediate ν and the
Appendix-A Jacobians (layerwise.layer) against closed forms, brute force and invariants."""

from __future__ import annotations

import math

import numpy as np
import pytest

from layerwise import capacity as cap
from layerwise import layer as lay
from layerwise.params import ParameterError
from layerwise.studies import ch01 as study


@pytest.mark.parametrize("rho", [-0.7, 0.0, 0.4, 0.95])
@pytest.mark.parametrize("name,slope", [("relu", None), ("leaky_relu", 0.3), ("abs", None)])
def test_orthant_moments_against_monte_carlo(rho, name, slope):
    al, be = cap.eta_levels(name, slope)
    rng = np.random.default_rng(1)
    u1 = rng.standard_normal(2_000_000)
    u2 = rho * u1 + math.sqrt(1 - rho * rho) * rng.standard_normal(u1.size)
    w = cap.eta(name, u1, slope=slope) * cap.eta(name, u2, slope=slope)
    e, M = lay.orthant_moments(rho, al, be)
    assert e == pytest.approx(w.mean(), abs=4e-3)
    assert M[0, 0] == pytest.approx((w * u1 * u1).mean(), abs=1e-2)
    assert M[0, 1] == pytest.approx((w * u1 * u2).mean(), abs=1e-2)
    # the arcsin law: E[ηη] = ν + (β−α)² arcsin ρ / (2π)
    assert e == pytest.approx(
        cap.nu_closed_form(name, slope) + (be - al) ** 2 * math.asin(rho) / (2 * math.pi), abs=1e-12
    )


def test_gaussian_block_against_monte_carlo_with_correlated_inputs():
    rng = np.random.default_rng(0)
    n = 6
    Sigma = cap.banded_covariance(n, 0.6)
    P = cap.random_unit_columns(n, 2, rng)
    al, be = cap.eta_levels("leaky_relu", 0.2)
    exact = lay.gaussian_block(Sigma, P[:, 0], P[:, 1], al, be)
    Y = rng.standard_normal((1_000_000, n)) @ np.linalg.cholesky(Sigma).T
    E = cap.eta("leaky_relu", Y @ P, slope=0.2)
    mc = (Y * (E[:, 0] * E[:, 1])[:, None]).T @ Y / len(Y)
    np.testing.assert_allclose(exact, mc, atol=5e-3)


def test_gaussian_augmented_covariance_reduces_to_eq14_and_footnote3():
    # linear: Eq. 10 exactly; orthonormal P with Σ = I: νI + (Eηz)²(p_ip_jᵀ + p_jp_iᵀ) (footnote 3)
    rng = np.random.default_rng(2)
    n, m = 7, 3
    Q, _ = np.linalg.qr(rng.standard_normal((n, m)))
    np.testing.assert_allclose(
        lay.gaussian_augmented_covariance(np.eye(n), Q, "linear"),
        lay.model_augmented_covariance(np.eye(n), m, 1.0),
        atol=1e-12,
    )
    St = lay.gaussian_augmented_covariance(np.eye(n), Q, "relu")
    b = St[:n, n : 2 * n]
    expected = 0.5 * np.eye(n) + (np.outer(Q[:, 0], Q[:, 1]) + np.outer(Q[:, 1], Q[:, 0])) / math.pi
    np.testing.assert_allclose(b, expected, atol=1e-12)
    # along p_j the error is (β−α)²/(2π) whatever n (the operator-norm statement)
    assert np.linalg.norm((b - 0.5 * np.eye(n)) @ Q[:, 1]) == pytest.approx(
        cap.footnote3_direction_closed_form("relu")
    )
    assert np.linalg.eigvalsh(St).min() > -1e-10  # a covariance


def test_interpolation_ends_are_eq18_and_eq25():
    rng = np.random.default_rng(3)
    n, m, p = 6, 9, 4
    P, J = cap.random_unit_columns(n, m, rng), rng.standard_normal((m, p))
    curve = lay.interpolation_capacities(np.eye(n), P, J, [0.0, 0.37, 1.0])
    np.testing.assert_allclose(
        curve[0], cap.pseudo_random_capacities(P, cap.feature_capacities(J)), atol=1e-10
    )
    np.testing.assert_allclose(
        curve[2], cap.capacity(cap.capacity_matrix(np.eye(n), P @ J)), atol=1e-10
    )
    np.testing.assert_allclose(curve.sum(1), p, atol=1e-9)  # total capacity = parameters
    A = rng.standard_normal((n, n))
    S = A @ A.T
    brute = lay.augmented_capacities(lay.model_augmented_covariance(S, m, 0.37), P, J)
    np.testing.assert_allclose(lay.interpolation_capacities(S, P, J, [0.37])[0], brute, atol=1e-10)


def test_empirical_capacities_match_the_einsum_version_and_effective_nu_recovers_a_grid_point():
    rng = np.random.default_rng(4)
    n, m, p = 5, 7, 3
    P, J = cap.random_unit_columns(n, m, rng), rng.standard_normal((m, p))
    Y = rng.standard_normal((3000, n))
    E = cap.eta("relu", Y @ P)
    np.testing.assert_allclose(
        lay.empirical_capacities(Y, E, P, J),
        cap.empirical_augmented_capacities(Y, E, P, J),
        atol=1e-10,
    )
    nus = np.linspace(0, 1, 21)
    curve = lay.interpolation_capacities(np.eye(n), P, J, nus)
    assert lay.effective_nu(curve[7], curve, nus) == pytest.approx(nus[7], abs=0.02)


def test_block_ratios_sampled_against_the_full_augmented_covariance():
    rng = np.random.default_rng(5)
    Y = rng.standard_normal((4000, 5)) @ rng.standard_normal((5, 5))
    E = cap.eta("leaky_relu", Y @ cap.random_unit_columns(5, 3, rng), slope=0.2)
    Sig = Y.T @ Y / len(Y)
    St = cap.augmented_covariance(Y, E)
    d, off = cap.block_ratios(St, Sig)
    r = lay.block_ratios_sampled(Y, E)
    np.testing.assert_allclose(np.diag(r["r"]), d, atol=1e-12)
    np.testing.assert_allclose(r["r"][~np.eye(3, dtype=bool)], off, atol=1e-12)
    assert np.all(r["se"] > 0)


def test_fixed_layer_ratio_deviation_decays_like_one_over_root_n_for_iid_inputs():
    R = study.fixed_layer_ratios(
        cases=[["relu", None], ["linear", None]],
        inputs="iid",
        sides=[3, 6, 12],
        m=4,
        draws=8,
        n_samples=20000,
        seed=1,
    )
    np.testing.assert_allclose(R["ratios_1"], 1.0, atol=1e-12)  # linear: every block is Σ
    np.testing.assert_allclose(R["diag_0"], 1.0, atol=0.03)
    d = study.ratio_deviation_fit(R["ratios_0"], R["ns"], 0.5, R["noise_0"])
    assert -0.75 < d["fit"]["slope"] < -0.3
    amp = cap.footnote3_direction_closed_form("relu")  # (β−α)²/(2π) = 1/π
    assert d["rms"].mean(1)[1] == pytest.approx(amp / 6, rel=0.35)


def test_footnote3_two_norms_against_closed_forms():
    out = study.footnote3_two_norms(cases=[["abs", None]], ns=[8, 32], n_samples=40000, seed=0)[
        "rows_0"
    ]
    assert out[:, 1] / out[:, 3] == pytest.approx([1, 1], abs=0.15)  # Frobenius², ∝ 1/n
    assert out[:, 4] / out[:, 6] == pytest.approx([1, 1], abs=0.15)  # along p_j, constant
    assert out[0, 6] == pytest.approx((2 / math.pi) ** 2)


def test_two_layer_jacobians_against_finite_differences_and_redundancy_counts():
    n, m = 4, 3
    for name in ("tanh", "leaky_relu"):
        slope = 0.2 if name == "leaky_relu" else None
        J = lay.two_layer_jacobians(
            name, n=n, m=m, n_inputs=5, rng=np.random.default_rng(7), slope=slope
        )
        P, A, Y = J["P"], J["A"], J["Y"]
        f = (lambda z: np.tanh(z)) if name == "tanh" else (lambda z: np.where(z > 0, z, 0.2 * z))

        def phi(P_, A_, f=f, Y=Y):
            return f(Y @ P_) @ A_

        h = 1e-6
        for k in range(n * m):
            i, j = divmod(k, n)
            dP = np.zeros_like(P)
            dP[j, i] = h
            np.testing.assert_allclose(
                J["true"][:, k] / math.sqrt(2 / (1 + 0.04))
                if name == "leaky_relu"
                else J["true"][:, k],
                (phi(P + dP, A) - phi(P - dP, A)) / (2 * h),
                atol=1e-6,
            )
    tab = study.redundancy_table(
        cases=[["relu", None], ["tanh", None], ["linear", None]], n=5, m=3, n_inputs=60, seed=0
    )
    assert tab["table"].tolist() == [[3, 3], [0, 3], [15 + 3 - 5, 15 + 3 - 5]]


def test_bad_inputs_raise_parameter_error():
    with pytest.raises(ParameterError, match="inputs"):
        lay.layer_inputs("cifar", 4, 10, 0)
    with pytest.raises(ParameterError, match="rho"):
        lay.orthant_moments(1.5, 0.0, 1.0)
    with pytest.raises(ParameterError, match="nu"):
        lay.model_augmented_covariance(np.eye(2), 2, 1.5)
    with pytest.raises(ParameterError, match="activation"):
        lay.two_layer_jacobians("gelu", n=3, m=2, n_inputs=4, rng=np.random.default_rng(0))
    with pytest.raises(ParameterError, match="m="):
        study.fixed_layer_ratios(
            cases=[["relu", None]], inputs="iid", sides=[2], m=1, draws=1, n_samples=10, seed=0
        )


def test_photo_patch_inputs_are_centred_unit_variance_and_correlated():
    Y = lay.photo_patch_inputs(3, 2000, seed=0)
    assert Y.shape == (2000, 9)
    np.testing.assert_allclose(Y.mean(0), 0, atol=1e-10)
    assert np.mean(np.sum(Y * Y, axis=1)) / 9 == pytest.approx(1.0)
    ev = np.linalg.eigvalsh(Y.T @ Y / len(Y))
    assert ev[-1] / ev.sum() > 0.5  # mean brightness dominates natural patches


@pytest.mark.parametrize(
    "name,slope", [["relu", None], ["leaky_relu", 0.2], ["abs", None], ["linear", None]]
)
@pytest.mark.parametrize("inputs", ["iid", "patches"])
def test_fixed_layer_mean_ratio_is_nu_by_construction(name, slope, inputs):
    """Eq. 15 on average over layers holds by construction, for any inputs: columns uniform on the
    sphere are invariant under sign flips, and flipping p_i turns η(z_i) into its mirror, so the
    average of r_ij over the 2^m sign patterns of P's columns is exactly ν (brute force); hence
    E_P[r_ij | Y] = ν."""
    Y = lay.layer_inputs(inputs, 3, 400, seed=5)
    nu, m, rng = cap.nu_closed_form(name, slope), 3, np.random.default_rng(11)
    iu = np.triu_indices(m, 1)
    for _ in range(3):
        P = cap.random_unit_columns(9, m, rng)
        flips = [np.array(s) for s in np.ndindex(*(2,) * m)]
        r = np.mean(
            [
                lay.block_ratios_sampled(Y, cap.eta(name, Y @ (P * (1 - 2 * f)), slope=slope))["r"][
                    iu
                ]
                for f in flips
            ],
            axis=0,
        )
        np.testing.assert_allclose(r, nu, atol=1e-12)
    # and the brute-force average over independent layers (no flips) agrees within its standard
    # error
    draws = np.array(
        [
            lay.block_ratios_sampled(
                Y, cap.eta(name, Y @ cap.random_unit_columns(9, m, rng), slope=slope)
            )["r"][iu].mean()
            for _ in range(400)
        ]
    )
    assert abs(draws.mean() - nu) <= 5 * draws.std(ddof=1) / math.sqrt(draws.size) + 1e-12


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_appendix_a_redundancy_counts_hold_for_every_draw(seed):
    """Appendix A in the chapter's set-up (n = 8, m = 4, 200 inputs): for ReLU-type units f' = η
    (Eq. 37), so the true and frozen-η Jacobians are the same matrix with the m scale redundancies;
    the frozen-η model is bilinear in (P, A), so it has them for tanh too, where the true Jacobian
    is full rank."""
    cases = [["linear", None], ["relu", None], ["leaky_relu", 0.2], ["abs", None], ["tanh", None]]
    for name, slope in cases[1:4]:
        J = lay.two_layer_jacobians(
            name, n=8, m=4, n_inputs=200, rng=np.random.default_rng(seed), slope=slope
        )
        assert np.array_equal(J["true"], J["augmented"])
    red = lay.redundancy_counts(
        study.redundancy_table(cases=cases, n=8, m=4, n_inputs=200, seed=seed)["table"], cases, 4
    )
    assert (red["relu_type_mismatch"], red["tanh_excess"], red["tanh_true"], red["tanh_aug"]) == (
        0,
        4,
        0,
        4,
    )
    assert red["linear_true"] == 8 * 4 + 4 - 8  # the linear model only sees the n-vector PA


@pytest.mark.parametrize("name,slope", [("relu", None), ("leaky_relu", 0.1), ("abs", None)])
def test_pair_law_is_the_orthant_moment_and_a_monte_carlo(name, slope):
    rhos = np.array([-0.9, -0.3, 0.0, 0.5, 0.99])
    law = lay.pair_law(rhos, name, slope)
    al, be = cap.eta_levels(name, slope)
    assert np.allclose(law, [lay.orthant_moments(float(r), al, be)[0] for r in rhos], atol=1e-14)
    assert lay.pair_law(0.0, name, slope) == pytest.approx(cap.nu_closed_form(name, slope))
    rng = np.random.default_rng(3)
    u = rng.standard_normal((400_000, 2))
    for r in (-0.6, 0.7):
        z2 = r * u[:, 0] + math.sqrt(1 - r * r) * u[:, 1]
        e = cap.eta(name, u[:, 0], slope=slope) * cap.eta(name, z2, slope=slope)
        assert abs(e.mean() - lay.pair_law(r, name, slope)) < 4 * e.std() / math.sqrt(len(e))
    with pytest.raises(ParameterError, match="rho"):
        lay.pair_law(1.5, name, slope)


def test_pair_law_of_pseudo_random_units_is_zero_at_every_correlation():
    rhos = np.array([-0.9, 0.0, 0.7])
    assert np.array_equal(lay.pair_law(rhos, "pseudo_random"), np.zeros(3))
    u = np.random.default_rng(4).standard_normal((200_000, 2))
    z2 = 0.9 * u[:, 0] + math.sqrt(1 - 0.81) * u[:, 1]  # strongly correlated pre-activations
    e = cap.eta("pseudo_random", u[:, 0], unit_seed=1) * cap.eta("pseudo_random", z2, unit_seed=2)
    assert abs(e.mean()) < 4 * e.std() / math.sqrt(len(e))
    with pytest.raises(ParameterError, match="activation"):
        lay.pair_law(rhos, "tanh")


@pytest.mark.parametrize("n", [4, 16, 64])
def test_pair_law_spread_against_random_unit_vectors(n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((200_000, n))
    b = rng.standard_normal((200_000, n))
    rho = np.sum(a * b, 1) / np.sqrt(np.sum(a * a, 1) * np.sum(b * b, 1))
    dev2 = (lay.pair_law(rho, "relu") - 0.5) ** 2
    se = dev2.std() / math.sqrt(len(dev2))
    assert abs(dev2.mean() - lay.pair_law_spread(n, "relu")) < 4 * se
    # large n: E[arcsin² ρ] → E[ρ²] = 1/n
    assert lay.pair_law_spread(4096, "abs") == pytest.approx((2 / math.pi) ** 2 / 4096, rel=2e-3)


def test_pair_correlations_of_identity_inputs_are_the_column_gram():
    P = cap.random_unit_columns(10, 4, np.random.default_rng(0))
    assert np.allclose(lay.pair_correlations(np.eye(10), P), P.T @ P)
    S = cap.banded_covariance(10, 0.5)
    C = P.T @ S @ P
    assert lay.pair_correlations(S, P)[0, 1] == pytest.approx(
        C[0, 1] / math.sqrt(C[0, 0] * C[1, 1])
    )


@pytest.mark.parametrize(
    "name,slope", [("linear", None), ("relu", None), ("leaky_relu", 0.2), ("abs", None)]
)
def test_capacity_matrix_without_forming_the_augmented_covariance(name, slope):
    rng = np.random.default_rng(5)
    n, m, p = 7, 4, 3
    G = rng.standard_normal((n, 2 * n))
    S = G @ G.T / (2 * n)  # Wishart Σ
    P = cap.random_unit_columns(n, m, rng)
    J = rng.standard_normal((m, p))
    St = lay.gaussian_augmented_covariance(S, P, name, slope)
    K = lay.gaussian_capacity_matrix(S, P, J, name, slope)
    assert np.allclose(K, St @ cap.augment_P(P) @ J, atol=1e-12)
    assert np.allclose(cap.input_capacities(K, n), lay.augmented_capacities(St, P, J))
    nus = [0.0, 0.3, 1.0]
    assert np.allclose(
        lay.interpolation_capacities(S, P, J, nus),
        [lay.augmented_capacities(lay.model_augmented_covariance(S, m, v), P, J) for v in nus],
        atol=1e-12,
    )


def test_tree_jacobians_finite_differences_and_appendix_a_totals():
    rng = np.random.default_rng(0)
    J = lay.tree_jacobians("tanh", fan_in=2, levels=3, n_inputs=50, rng=rng)
    assert J["true"].shape == (50, 14) and int(J["hidden"]) == 6
    # finite differences of the true tanh tree, rebuilt by hand at the same weights
    rng = np.random.default_rng(0)
    w = rng.standard_normal(14) / math.sqrt(2)
    Y = rng.standard_normal((50, 8))

    def phi(w):
        h1 = np.tanh((Y.reshape(50, 4, 2) * w[:8].reshape(4, 2)).sum(-1))
        h2 = np.tanh((h1.reshape(50, 2, 2) * w[8:12].reshape(2, 2)).sum(-1))
        return (h2 * w[12:]).sum(-1)

    eps = 1e-6
    fd = np.stack([(phi(w + eps * e) - phi(w - eps * e)) / (2 * eps) for e in np.eye(14)], 1)
    assert np.allclose(fd, J["true"], atol=1e-7)
    for name, slope in [("linear", None), ("leaky_relu", 0.2), ("abs", None)]:
        Jt = lay.tree_jacobians(
            name, fan_in=2, levels=3, n_inputs=200, rng=np.random.default_rng(1), slope=slope
        )
        assert np.array_equal(Jt["true"], Jt["augmented"])  # f′ = η (Eq. 37)
        assert lay.redundant_directions(Jt["true"])[0] == 6  # one scale per hidden unit
    Jt = lay.tree_jacobians("tanh", fan_in=2, levels=3, n_inputs=200, rng=np.random.default_rng(1))
    assert lay.redundant_directions(Jt["true"])[0] == 0
    assert lay.redundant_directions(Jt["augmented"])[0] == 6
    with pytest.raises(ParameterError, match="fan_in"):
        lay.tree_jacobians("relu", fan_in=1, levels=3, n_inputs=10, rng=rng)


def test_patch_controls_share_the_patches_covariance_or_are_symmetric():
    Y = lay.layer_inputs("patches", 3, 4000, seed=2)
    G = lay.layer_inputs("patches_gaussian", 3, 4000, seed=2)
    S = lay.layer_inputs("patches_symmetric", 3, 4000, seed=2)
    C = Y.T @ Y / len(Y)
    assert np.abs(G.T @ G / len(G) - C).max() < 0.1 * np.abs(C).max()
    np.testing.assert_array_equal(S[:2000], -S[2000:])  # each patch beside its negative
    z = S @ np.random.default_rng(0).standard_normal(9)
    assert abs(lay.skewness(z[:, None])[0]) < 1e-12
    assert lay.layer_inputs("patches_symmetric", 3, 5, seed=2).shape == (5, 9)


def test_skewness_against_scipy():
    from scipy import stats as st

    Z = np.random.default_rng(3).exponential(size=(500, 3))
    np.testing.assert_allclose(lay.skewness(Z), st.skew(Z, axis=0), rtol=1e-12)


def test_fixed_layer_pairs_linear_blocks_and_pseudo_random_law():
    rng = np.random.default_rng(6)
    Y = rng.standard_normal((500, 9))
    P = cap.random_unit_columns(9, 4, rng)
    f = lay.fixed_layer_pairs(Y, P, [["linear", None], ["pseudo_random", None]], Sigma=np.eye(9))
    assert f["ratios"].shape == (2, 6) and f["skew"].shape == (4,)
    np.testing.assert_allclose(f["ratios"][0], 1.0, atol=1e-12)  # linear: every block is Σ̂
    np.testing.assert_allclose(f["diag"], 1.0, atol=1e-12)  # η² = 1 for both
    assert f["noise"][0] == pytest.approx(0.0, abs=1e-20)
    np.testing.assert_array_equal(f["law"][1], np.zeros(6))
    np.testing.assert_allclose(f["law"][0], 1.0)


def test_eq14_capacity_gaps_vanish_for_the_linear_layer_and_not_for_relu():
    rng = np.random.default_rng(8)
    P, J = cap.random_unit_columns(6, 3, rng), rng.standard_normal((3, 2))
    gaps = lay.eq14_capacity_gaps(P, J, [["linear", None], ["relu", None]])
    assert gaps[0] == pytest.approx(0.0, abs=1e-9)  # linear: Eq. 14 at ν = 1 is exact
    assert gaps[1] > 1e-3


def test_fixed_layer_capacities_sum_to_the_read_out_rank():
    rng = np.random.default_rng(9)
    Y = rng.standard_normal((4000, 5))
    P, J = cap.random_unit_columns(5, 4, rng), rng.standard_normal((4, 2))
    emp, exact = lay.fixed_layer_capacities(Y, np.eye(5), P, J, [["relu", None], ["abs", None]])
    assert emp.shape == exact.shape == (2, 5)
    np.testing.assert_allclose(emp.sum(1), 2.0, rtol=1e-9)  # the trace of a rank-p projector
    np.testing.assert_allclose(exact.sum(1), 2.0, rtol=1e-9)
    np.testing.assert_allclose(emp, exact, atol=0.1)  # 4000 inputs: near their expectation


def test_redundancy_and_tree_tables_refuse_a_generator_count_that_does_not_match():
    cases = [["relu", None], ["tanh", None]]
    with pytest.raises(ParameterError, match="rngs"):
        lay.redundancy_table(cases, n=3, m=2, n_inputs=20, rngs=[np.random.default_rng(0)])
    with pytest.raises(ParameterError, match="rngs"):
        lay.tree_capacity_table(cases, [[2, 2]], n_inputs=20, rngs=[[np.random.default_rng(0)]])
