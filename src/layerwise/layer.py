"""A single layer with ONE projection P: how far its augmented covariance is from Donier's Eq. 14,
what that does to capacities, and Appendix A's redundancy test (Chapter 1).

Donier 2019 ("Capacity allocation through neural network layers"), §2 and Appendix A:

* the exact augmented covariance of a *fixed* layer for Gaussian inputs, Y ~ N(0, Σ):
  conditioning Y on (z_i, z_j) = (p_iᵀY, p_jᵀY) gives each block E[η_iη_j YYᵀ] in closed form from
  the bivariate-normal orthant moments (the general form of footnote 3; Eq. 14 is its limit
  when p_iᵀΣp_j = 0 and the rank-2 term is neglected);
* the off-diagonal block ratios r_ij = ⟨Σ̃_ij, Σ⟩/⟨Σ, Σ⟩ of a fixed layer measured from samples
  (Gaussian or photo patches), which Eq. 14 sets to ν;
* capacities κ_i [Eqs. 9, 23] from an augmented covariance (empirical, exact, or Eq. 14's
  (ν11ᵀ + (1−ν)I)⊗Σ, which interpolates between Eq. 18 at ν = 1 and Eq. 25 at ν = 0);
* Appendix A: the Jacobian of φ(Y) = Aᵀf(PᵀY) in (P, A), true and with η frozen (Eqs. 5–6 applied
  to the lower layer), and its number of redundant directions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import capacity
from .data import natural_patches
from .params import ParameterError, check_choice, check_positive_int

#: Inputs of the fixed-layer experiments.
#: Inputs of a fixed layer: i.i.d. Gaussian, photo patches (crops of the shipped photographs), and
#: the two controls of the patches: a Gaussian with the patches' own covariance, and the patches
#: symmetrised (each patch Y beside −Y, so that every pre-activation is symmetric, as Eq. 13
#: assumes).
INPUTS: tuple[str, ...] = ("iid", "patches", "patches_gaussian", "patches_symmetric")
#: Activations of the redundancy test (Appendix A).
JACOBIAN_ACTIVATIONS: tuple[str, ...] = ("linear", "relu", "leaky_relu", "abs", "tanh")


# ------------------------------------------------------------------------------------------------
# Exact augmented covariance of a fixed layer, Gaussian inputs
# ------------------------------------------------------------------------------------------------
def orthant_moments(rho: float, alpha: float, beta: float) -> tuple[float, np.ndarray]:
    """E[η(u₁)η(u₂)] and E[η(u₁)η(u₂) uuᵀ] for (u₁, u₂) standard bivariate normal, correlation ρ,
    η = α·1{u≤0} + β·1{u>0} [Eq. 12].

    Orthant moments: P(++) = ¼ + arcsin ρ/(2π), E[u₁² 1{++}] = P(++) + ρ√(1−ρ²)/(2π),
    E[u₁u₂ 1{++}] = ρP(++) + √(1−ρ²)/(2π); the other quadrants follow by u → −u and from
    E[u₁² 1{u₁>0}] = ½, E[u₁u₂ 1{u₁>0}] = ρ/2.  Hence E[ηη] = ν + (β−α)² arcsin ρ/(2π).
    """
    if not -1.0 <= rho <= 1.0:
        raise ParameterError(f"rho={rho!r} must lie in [-1, 1]")
    a = math.asin(rho) / (2 * math.pi)
    s = math.sqrt(max(1.0 - rho * rho, 0.0)) / (2 * math.pi)
    p_same, p_diff = 0.25 + a, 0.25 - a
    x_same, c_same = p_same + rho * s, rho * p_same + s  # ++ (and −− by symmetry)
    x_diff, c_diff = 0.5 - x_same, rho / 2 - c_same  # +− (and −+)
    same, diff = alpha * alpha + beta * beta, 2 * alpha * beta
    e = same * p_same + diff * p_diff
    x, c = same * x_same + diff * x_diff, same * c_same + diff * c_diff
    return e, np.array([[x, c], [c, x]])


def gaussian_block(
    Sigma: np.ndarray, p: np.ndarray, q: np.ndarray, alpha: float, beta: float
) -> np.ndarray:
    """E[η(pᵀY)η(qᵀY) YYᵀ] exactly for Y ~ N(0, Σ) and η of Eq. 12 (p, q not parallel).

    With z = (pᵀY, qᵀY), C = Cov z, B = ΣP₂C⁻¹: Y = Bz + r, r ⟂ z, so the block is
    E[ηη](Σ − BCBᵀ) + B·S·E[ηη uuᵀ]·S·Bᵀ, u = z/s, S = diag(s), s² = diag C.
    """
    Sigma = np.asarray(Sigma, dtype=np.float64)
    P2 = np.stack([np.asarray(p, float), np.asarray(q, float)], axis=1)
    C = P2.T @ Sigma @ P2
    s = np.sqrt(np.diag(C))
    rho = float(np.clip(C[0, 1] / (s[0] * s[1]), -1.0, 1.0))
    e, M = orthant_moments(rho, alpha, beta)
    B = Sigma @ P2 @ np.linalg.inv(C)
    return e * (Sigma - B @ C @ B.T) + B @ (M * np.outer(s, s)) @ B.T


def gaussian_augmented_covariance(
    Sigma: np.ndarray, P: np.ndarray, name: str, slope: float | None = None
) -> np.ndarray:
    """Exact Σ̃ (nm × nm) of the fixed layer P for Y ~ N(0, Σ) [Eqs. 6, 12]: diagonal blocks Σ
    (E[η²] = E[η²z²] = 1), off-diagonal blocks :func:`gaussian_block`."""
    capacity.check_activation(name, ("linear", "leaky_relu", "relu", "abs"))
    al, be = capacity.eta_levels(name, slope)
    Sigma, P = np.asarray(Sigma, float), np.asarray(P, float)
    n, m = P.shape
    St = np.zeros((n * m, n * m))
    for i in range(m):
        St[i * n : (i + 1) * n, i * n : (i + 1) * n] = Sigma
        for j in range(i + 1, m):
            b = gaussian_block(Sigma, P[:, i], P[:, j], al, be)
            St[i * n : (i + 1) * n, j * n : (j + 1) * n] = b
            St[j * n : (j + 1) * n, i * n : (i + 1) * n] = b.T
    return St


def model_augmented_covariance(Sigma: np.ndarray, m: int, nu: float) -> np.ndarray:
    """Eq. 14: Σ̃ = (ν 11ᵀ + (1−ν) I_m) ⊗ Σ (Eq. 10 at ν = 1, Eq. 11 at ν = 0)."""
    m = check_positive_int("m", m)
    if not 0.0 <= nu <= 1.0:
        raise ParameterError(f"nu={nu!r} must lie in [0, 1]")
    return np.kron(nu * np.ones((m, m)) + (1.0 - nu) * np.eye(m), np.asarray(Sigma, float))


# ------------------------------------------------------------------------------------------------
# Capacities from an augmented covariance [Eqs. 9, 21, 23]
# ------------------------------------------------------------------------------------------------
def augmented_capacities(St: np.ndarray, P: np.ndarray, J: np.ndarray) -> np.ndarray:
    """κ_i [Eq. 23] from Σ̃: an orthonormal basis (Euclidean) of col(Σ̃·P̃·J) [Eqs. 9, 21], its
    squared rows summed over the m blocks of input i."""
    n = np.asarray(P).shape[0]
    return capacity.input_capacities(
        np.asarray(St, float) @ capacity.augment_P(P) @ np.asarray(J, float), n
    )


def empirical_capacities(Y: np.ndarray, E: np.ndarray, P: np.ndarray, J: np.ndarray) -> np.ndarray:
    """κ_i from the empirical Σ̂̃ = mean_s Ỹ_sỸ_sᵀ without forming it: Σ̂̃P̃J = Ỹᵀ(η ⊙ PᵀY)J / N
    (same as :func:`layerwise.capacity.empirical_augmented_capacities`, by matrix products)."""
    Y, E, P, J = (np.asarray(a, dtype=np.float64) for a in (Y, E, P, J))
    N, n = Y.shape
    m = P.shape[1]
    V = (E * (Y @ P)) @ J
    Yt = (E[:, :, None] * Y[:, None, :]).reshape(N, m * n)
    return capacity.input_capacities(Yt.T @ V / N, n)


def fixed_layer_capacities(
    Y: np.ndarray, Sigma: np.ndarray, P: np.ndarray, J: np.ndarray, cases: Sequence[Sequence[Any]]
) -> tuple[np.ndarray, np.ndarray]:
    """Input capacities of a fixed layer P with read-out J, per (activation, slope) of ``cases``:
    from the empirical Σ̃ of the inputs Y (:func:`empirical_capacities`) and from the exact Gaussian
    Σ̃ for inputs of covariance ``Sigma`` (:func:`gaussian_augmented_covariance`). Returns both,
    each (cases, n)."""
    Z = Y @ P
    emp = [
        empirical_capacities(Y, capacity.eta(name, Z, slope=slope), P, J) for name, slope in cases
    ]
    exact = [
        augmented_capacities(gaussian_augmented_covariance(Sigma, P, name, slope), P, J)
        for name, slope in cases
    ]
    return np.array(emp), np.array(exact)


def interpolation_capacities(
    Sigma: np.ndarray, P: np.ndarray, J: np.ndarray, nus: Sequence[float]
) -> np.ndarray:
    """κ of Eq. 14's Σ̃ = (ν11ᵀ + (1−ν)I)⊗Σ at every ν of ``nus`` (len(nus), n): ν = 1 is Eq. 18,
    ν = 0 (Σ = I) Eq. 25. Block by block, without forming any nm × nm matrix: Σ̃P̃J = ν·(1 ⊗ ΣPJ)
    + (1−ν)·(blocks Σp_iJ_i) (Eq. 14 is linear in ν)."""
    Sigma, P, J = (np.asarray(a, float) for a in (Sigma, P, J))
    n, m = P.shape
    SP = Sigma @ P
    full = np.tile(SP @ J, (m, 1))
    diag = (SP.T[:, :, None] * J[:, None, :]).reshape(m * n, J.shape[1])
    return np.array(
        [capacity.input_capacities(float(v) * full + (1.0 - float(v)) * diag, n) for v in nus]
    )


def effective_nu(kappa: np.ndarray, curve: np.ndarray, nus: np.ndarray) -> float:
    """The ν at which Eq. 14's capacities (``curve``, on the grid ``nus``) are closest (Euclidean)
    to
    ``kappa``; refined by a parabola through the best grid point and its neighbours."""
    d = np.linalg.norm(np.asarray(curve) - np.asarray(kappa), axis=1)
    k = int(np.argmin(d))
    if 0 < k < len(nus) - 1:
        y0, y1, y2 = d[k - 1] ** 2, d[k] ** 2, d[k + 1] ** 2
        den = y0 - 2 * y1 + y2
        if den > 0:
            return float(nus[k] + 0.5 * (y0 - y2) / den * (nus[k + 1] - nus[k]))
    return float(nus[k])


# ------------------------------------------------------------------------------------------------
# Inputs
# ------------------------------------------------------------------------------------------------
def photo_patch_inputs(side: int, n_samples: int, seed: int) -> np.ndarray:
    """``n_samples`` grey-level side×side photo patches (:func:`layerwise.data.natural_patches`, the
    channel mean), centred per pixel and scaled to unit mean variance: (n_samples, side²)."""
    side, n_samples = check_positive_int("side", side), check_positive_int("n_samples", n_samples)
    X = (
        natural_patches(n_samples, seed=seed, size=side)
        .mean(1)
        .reshape(n_samples, -1)
        .astype(np.float64)
    )
    X -= X.mean(0)
    return X / math.sqrt(np.mean(np.sum(X * X, axis=1)) / X.shape[1])


def layer_inputs(kind: str, side: int, n_samples: int, seed: int) -> np.ndarray:
    """Inputs of dimension n = side²: ``iid`` (Y ~ N(0, I)), ``patches``
    (:func:`photo_patch_inputs`), ``patches_gaussian`` (Y = G Lᵀ with G ~ N(0, I) and L Lᵀ the
    empirical covariance of ``n_samples`` photo patches of the same seed: Gaussian, with the
    patches' covariance) or ``patches_symmetric`` (the first ⌈n_samples/2⌉ photo patches followed
    by their negatives −Y: a symmetric law, so that every z = pᵀY is symmetric about 0)."""
    check_choice("inputs", kind, INPUTS)
    if kind == "iid":
        return np.random.default_rng(seed).standard_normal((n_samples, side * side))
    if kind == "patches_symmetric":
        Y = photo_patch_inputs(side, (n_samples + 1) // 2, seed)
        return np.concatenate([Y, -Y])[:n_samples]
    Y = photo_patch_inputs(side, n_samples, seed)
    if kind == "patches":
        return Y
    Lc = np.linalg.cholesky(Y.T @ Y / len(Y) + 1e-12 * np.eye(Y.shape[1]))
    G = np.random.default_rng([seed, 1]).standard_normal(Y.shape)
    return G @ Lc.T


def skewness(Z: np.ndarray) -> np.ndarray:
    """Sample skewness E[(z − z̄)³]/E[(z − z̄)²]^{3/2} of every column of Z (N, m)."""
    Z = np.asarray(Z, float) - np.mean(Z, axis=0)
    return np.mean(Z**3, axis=0) / np.mean(Z**2, axis=0) ** 1.5


# ------------------------------------------------------------------------------------------------
# Block ratios of a fixed layer, measured [Eq. 14]
# ------------------------------------------------------------------------------------------------
def gram_quadratic_forms(Y: np.ndarray) -> np.ndarray:
    """q_s = Y_sᵀΣ̂Y_s with Σ̂ = YᵀY/N, for every sample (the weights of
    :func:`block_ratios_sampled`)."""
    Y = np.asarray(Y, float)
    return np.sum((Y @ (Y.T @ Y / Y.shape[0])) * Y, axis=1)


def block_ratios_sampled(
    Y: np.ndarray, E: np.ndarray, q: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """Least-squares ratios r_ij = ⟨Σ̂̃_ij, Σ̂⟩/⟨Σ̂, Σ̂⟩ of every block of the empirical Σ̃ to the
    empirical Σ̂ = YᵀY/N [Eq. 14], from samples Y (N, n) and η (N, m), without forming Σ̃:
    ⟨Σ̂̃_ij, Σ̂⟩ = mean_s η_siη_sj q_s with q_s = Y_sᵀΣ̂Y_s, and ⟨Σ̂, Σ̂⟩ = mean_s q_s.

    ``q`` (optional): :func:`gram_quadratic_forms` of Y, when several η share the inputs.
    Returns ``r`` (m, m) and ``se`` (m, m), the delta-method standard error of a ratio of means."""
    E = np.asarray(E, float)
    N = E.shape[0]
    q = gram_quadratic_forms(Y) if q is None else np.asarray(q, float)
    qm = q.mean()
    q2 = q * q
    r = (E * q[:, None]).T @ E / (N * qm)
    # variance of q_s(η_siη_sj − r_ij) over s, from its moments (all matrix products)
    var = (
        (E * E * q2[:, None]).T @ (E * E) - 2 * r * ((E * q2[:, None]).T @ E) + r * r * q2.sum()
    ) / N
    se = np.sqrt(np.maximum(var, 0.0) * N / (N - 1) / N) / qm
    return {"r": r, "se": se}


def fixed_layer_pairs(
    Y: np.ndarray,
    P: np.ndarray,
    cases: Sequence[Sequence[Any]],
    *,
    Sigma: np.ndarray,
    q: np.ndarray | None = None,
    unit_seed: int = 0,
) -> dict[str, np.ndarray]:
    """One fixed layer P (n × m) on the inputs Y (N, n), for every (activation, slope) of ``cases``
    (pseudo-random units seeded ``unit_seed`` + 0..m−1): ``ratios`` (cases, m(m−1)/2) the
    off-diagonal block ratios r_ij, i < j, of :func:`block_ratios_sampled` [Eq. 14], ``noise``
    (cases,) their mean squared standard error (the sampling noise floor), ``diag`` (cases,) the
    mean diagonal ratio (1 in Eq. 14), ``law`` (cases, m(m−1)/2) :func:`pair_law` at the
    pre-activations' correlations under ``Sigma``, and ``skew`` (m,) the sample skewness of every
    pre-activation z_i = p_iᵀY. ``q``: :func:`gram_quadratic_forms` of Y, when layers share Y."""
    m = P.shape[1]
    iu = np.triu_indices(m, 1)
    q = gram_quadratic_forms(Y) if q is None else q
    Z = Y @ P
    rho = pair_correlations(Sigma, P)[iu]
    out: dict[str, list[Any]] = {"ratios": [], "diag": [], "noise": [], "law": []}
    for name, slope in cases:
        E = capacity.eta(name, Z, slope=slope, unit_seed=(np.arange(m) + unit_seed)[None, :])
        br = block_ratios_sampled(Y, E, q)
        out["ratios"].append(br["r"][iu])
        out["diag"].append(np.diag(br["r"]).mean())
        out["noise"].append(np.mean(br["se"][iu] ** 2))
        out["law"].append(pair_law(rho, name, slope))
    return {"skew": skewness(Z), **{k: np.array(v) for k, v in out.items()}}


# ------------------------------------------------------------------------------------------------
# Appendix A: parameter redundancy of a two-layer model
# ------------------------------------------------------------------------------------------------
def _f_and_slope(
    name: str, z: np.ndarray, slope: float | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(f(z), f'(z), η(z) = f(z)/z) for the activations of :data:`JACOBIAN_ACTIVATIONS`."""
    if name == "tanh":
        t = np.tanh(z)
        return t, 1.0 - t * t, capacity.eta("tanh", z)
    e = capacity.eta(name, z, slope=slope)
    return e * z, e, e  # piecewise linear: f' = η (Eq. 37)


def two_layer_jacobians(
    name: str,
    *,
    n: int,
    m: int,
    n_inputs: int,
    rng: np.random.Generator,
    slope: float | None = None,
) -> dict[str, np.ndarray]:
    """Jacobians of φ(Y) = Aᵀf(PᵀY) on ``n_inputs`` inputs Y ~ N(0, I_n) in the nm + m parameters
    (P, A) (P with unit columns, A ~ N(0, 1)), rows = inputs:

    ``true``: ∂φ/∂p_i = a_i f'(z_i) Y, ∂φ/∂a_i = f(z_i);  ``augmented``: Eqs. 5–6 with η frozen,
    ∂φ/∂p_i = a_i η_i Y, ∂φ/∂a_i = η_i z_i (Appendix A: the two agree when f' = η, Eq. 37)."""
    check_choice("activation", name, JACOBIAN_ACTIVATIONS)
    n, m, n_inputs = (
        check_positive_int(k, v) for k, v in (("n", n), ("m", m), ("n_inputs", n_inputs))
    )
    P = capacity.random_unit_columns(n, m, rng)
    A = rng.standard_normal(m)
    Y = rng.standard_normal((n_inputs, n))
    Z = Y @ P
    f, fp, e = _f_and_slope(name, Z, slope)
    jt = np.concatenate(
        [((A * fp)[:, :, None] * Y[:, None, :]).reshape(n_inputs, m * n), f], axis=1
    )
    ja = np.concatenate(
        [((A * e)[:, :, None] * Y[:, None, :]).reshape(n_inputs, m * n), e * Z], axis=1
    )
    return {"true": jt, "augmented": ja, "P": P, "A": A, "Y": Y}


def redundant_directions(J: np.ndarray, rtol: float = 1e-9) -> tuple[int, np.ndarray]:
    """Number of parameter directions the Jacobian J (inputs × parameters) does not see — parameters
    minus numerical rank (singular values ≤ rtol·σ_max) — and the singular values, descending."""
    s = np.linalg.svd(np.asarray(J, float), compute_uv=False)
    rank = int(np.sum(s > rtol * s[0])) if s.size and s[0] > 0 else 0
    return J.shape[1] - rank, s


# ------------------------------------------------------------------------------------------------
# The per-pair law of a fixed layer, and capacities without forming Σ̃
# ------------------------------------------------------------------------------------------------
def pair_correlations(Sigma: np.ndarray, P: np.ndarray) -> np.ndarray:
    """ρ_ij = p_iᵀΣp_j / √(p_iᵀΣp_i · p_jᵀΣp_j), the correlations of a fixed layer's
    pre-activations z = PᵀY for inputs of covariance Σ (m × m)."""
    P = np.asarray(P, float)
    C = P.T @ np.asarray(Sigma, float) @ P
    s = np.sqrt(np.diag(C))
    return np.clip(C / np.outer(s, s), -1.0, 1.0)


def pair_law(rho: np.ndarray, name: str, slope: float | None = None) -> np.ndarray:
    """E[η_iη_j] = ν + (β−α)² arcsin ρ_ij / (2π) for (z_i, z_j) bivariate normal of correlation
    ρ_ij and η of Donier's Eq. 12 (ν = (α+β)²/4, Eq. 13, at ρ = 0); 0 at every ρ for the
    pseudo-random activation, whose units draw independent signs (Eq. 11)."""
    capacity.check_activation(name, ("linear", "leaky_relu", "relu", "abs", "pseudo_random"))
    rho = np.asarray(rho, float)
    if np.any(np.abs(rho) > 1.0):
        raise ParameterError("rho must lie in [-1, 1]")
    if name == "pseudo_random":
        return np.zeros_like(rho)
    al, be = capacity.eta_levels(name, slope)
    return (al + be) ** 2 / 4.0 + (be - al) ** 2 * np.arcsin(rho) / (2.0 * math.pi)


def pair_law_spread(n: int, name: str, slope: float | None = None) -> float:
    """E_P[(E[η_iη_j] − ν)²] over two independent columns uniform on the unit sphere of ℝⁿ
    (ρ = p_iᵀp_j, density ∝ (1−ρ²)^((n−3)/2)): ((β−α)²/2π)² E[arcsin² ρ], by quadrature — the
    spread of a fixed layer's block ratios around Eq. 13's ν for i.i.d. Gaussian inputs."""
    from scipy import integrate, special

    n = check_positive_int("n", n)
    if n < 2:
        raise ParameterError(f"n={n} must be >= 2")
    al, be = capacity.eta_levels(name, slope)
    k = (n - 3) / 2.0
    norm = special.beta(0.5, (n - 1) / 2.0)  # ∫(1−ρ²)^k dρ over [−1, 1]
    val, _ = integrate.quad(
        lambda r: np.arcsin(r) ** 2 * (1 - r * r) ** k,
        -1.0,
        1.0,
        epsabs=1e-13,
        epsrel=1e-11,
        limit=200,
    )
    return ((be - al) ** 2 / (2.0 * math.pi)) ** 2 * val / norm


def gaussian_capacity_matrix(
    Sigma: np.ndarray, P: np.ndarray, J: np.ndarray, name: str, slope: float | None = None
) -> np.ndarray:
    """Σ̃P̃J of the fixed layer P for Y ~ N(0, Σ) [Eqs. 6, 9, 12] without forming Σ̃ (nm × p):
    block i is Σ_j Σ̃_ij p_j J_j, with Σ̃_ii p_i = Σp_i and, for i ≠ j, Σ̃_ij p_j = ΣP₂C⁻¹(M∘ssᵀ)e₂
    (:func:`gaussian_block` applied to p_j: its E[ηη](Σ − BCBᵀ) part vanishes on p_j), every pair
    at once."""
    capacity.check_activation(name, ("linear", "leaky_relu", "relu", "abs"))
    al, be = capacity.eta_levels(name, slope)
    Sigma, P, J = (np.asarray(a, float) for a in (Sigma, P, J))
    n, m = P.shape
    SP = Sigma @ P
    C = P.T @ SP
    d = np.diag(C)
    s = np.sqrt(d)
    rho = np.clip(C / np.outer(s, s), -1.0, 1.0)
    # orthant moments of :func:`orthant_moments`, for every pair (i, j) at once
    a = np.arcsin(rho) / (2 * math.pi)
    r = np.sqrt(np.maximum(1.0 - rho * rho, 0.0)) / (2 * math.pi)
    p_same = 0.25 + a
    x_same, c_same = p_same + rho * r, rho * p_same + r
    same, diff = al * al + be * be, 2 * al * be
    x = same * x_same + diff * (0.5 - x_same)
    c = same * c_same + diff * (rho / 2 - c_same)
    # (M∘ssᵀ)e₂ = (c s_i s_j, x s_j²), then C₂⁻¹ of the pair in closed form
    v1, v2 = c * np.outer(s, s), x * d[None, :]
    det = np.outer(d, d) - C * C
    np.fill_diagonal(det, 1.0)
    coef_i = (d[None, :] * v1 - C * v2) / det
    coef_j = (d[:, None] * v2 - C * v1) / det
    # cols[i, j] = Σ̃_ij p_j = Σp_i·coef_i + Σp_j·coef_j (i ≠ j); Σp_i on the diagonal
    np.fill_diagonal(coef_i, 1.0)
    np.fill_diagonal(coef_j, 0.0)
    K = np.einsum("ni,ij,jp->inp", SP, coef_i, J) + np.einsum("nj,ij,jp->inp", SP, coef_j, J)
    return K.reshape(m * n, J.shape[1])


def eq14_capacity_gaps(P: np.ndarray, J: np.ndarray, cases: Sequence[Sequence[Any]]) -> np.ndarray:
    """Per (activation, slope) of ``cases``, the distance ‖κ_exact − κ_Eq14(ν)‖ between the input
    capacities of a fixed layer P (n × m) with read-out J (m × p) on i.i.d. Gaussian inputs (Σ = I)
    from its exact Σ̃ (:func:`gaussian_capacity_matrix`) and from Eq. 14 at Eq. 13's ν, in units of
    the span ‖κ(ν=1) − κ(ν=0)‖ between the two limits (Eqs. 18, 25). Returns (cases,)."""
    n = P.shape[0]
    eye = np.eye(n)
    ends = interpolation_capacities(eye, P, J, [0.0, 1.0])
    span = float(np.linalg.norm(ends[1] - ends[0]))
    gaps = []
    for name, slope in cases:
        k14 = interpolation_capacities(eye, P, J, [capacity.nu_closed_form(name, slope)])[0]
        K = gaussian_capacity_matrix(eye, P, J, name, slope)
        gaps.append(np.linalg.norm(capacity.input_capacities(K, n) - k14) / span)
    return np.array(gaps)


def tree_jacobians(
    name: str,
    *,
    fan_in: int,
    levels: int,
    n_inputs: int,
    rng: np.random.Generator,
    slope: float | None = None,
) -> dict[str, np.ndarray]:
    """Jacobians in all parameters of a hierarchical (tree) network — Donier's Appendix A check on
    "a few handpicked hierarchical architectures": n = fan_in^levels inputs; level l has
    n/fan_in^l units, each reading its own fan_in units of level l − 1 (a Wavenet-like tree, no
    weight sharing), activation f on every level but the last (one linear output).

    ``true``: ∂φ/∂W with f' (autograd); ``augmented``: Eqs. 5–6 applied to every layer, η frozen at
    its value (f(z) = η(z)·z with η held constant, Eq. 37); rows = ``n_inputs`` inputs
    Y ~ N(0, I_n). ``hidden``: the number of hidden units (the scale redundancies of a positively
    homogeneous f)."""
    import torch

    check_choice("activation", name, JACOBIAN_ACTIVATIONS)
    fan_in, levels = check_positive_int("fan_in", fan_in), check_positive_int("levels", levels)
    n_inputs = check_positive_int("n_inputs", n_inputs)
    if fan_in < 2 or levels < 2:
        raise ParameterError(f"fan_in={fan_in} and levels={levels} must both be >= 2")
    n = fan_in**levels
    units = [n // fan_in**lv for lv in range(1, levels + 1)]
    shapes = [(u, fan_in) for u in units]
    sizes = [u * fan_in for u in units]
    w0 = torch.tensor(rng.standard_normal(sum(sizes)) / math.sqrt(fan_in), dtype=torch.float64)
    Y = torch.tensor(rng.standard_normal((n_inputs, n)), dtype=torch.float64)

    def act(z: torch.Tensor, frozen: bool) -> torch.Tensor:
        if name == "tanh":
            return torch.tanh(z).detach() / z.detach() * z if frozen else torch.tanh(z)
        e = torch.from_numpy(capacity.eta(name, z.detach().numpy(), slope=slope))
        return e * z  # η piecewise constant: the same function and derivative, frozen or not

    def forward(w: torch.Tensor, frozen: bool) -> torch.Tensor:
        h, start = Y, 0
        for lv, ((u, f), size) in enumerate(zip(shapes, sizes, strict=True)):
            W = w[start : start + size].reshape(u, f)
            start += size
            z = (h.reshape(n_inputs, u, f) * W).sum(-1)
            h = z if lv == levels - 1 else act(z, frozen)
        return h[:, 0]

    def jac(frozen: bool) -> np.ndarray:
        return torch.autograd.functional.jacobian(
            lambda w: forward(w, frozen), w0, vectorize=True
        ).numpy()

    return {
        "true": jac(False),
        "augmented": jac(True),
        "hidden": np.array(sum(units[:-1])),
    }


def redundancy_table(
    cases: Sequence[Sequence[Any]],
    *,
    n: int,
    m: int,
    n_inputs: int,
    rngs: Sequence[np.random.Generator],
) -> dict[str, np.ndarray]:
    """:func:`two_layer_jacobians` and :func:`redundant_directions` per (activation, slope) of
    ``cases``, case k drawn from ``rngs[k]``: ``table`` (cases, 2) the redundant directions of the
    true and augmented Jacobians, and the normalised singular values ``sv_true_k``, ``sv_aug_k``."""
    if len(rngs) != len(cases):
        raise ParameterError(
            f"rngs must hold one generator per case ({len(cases)}), not {len(rngs)}"
        )
    rows, out = [], {}
    for k, ((name, slope), rng) in enumerate(zip(cases, rngs, strict=True)):
        J = two_layer_jacobians(name, n=n, m=m, n_inputs=n_inputs, rng=rng, slope=slope)
        rt, st = redundant_directions(J["true"])
        ra, sa = redundant_directions(J["augmented"])
        rows.append([rt, ra])
        out[f"sv_true_{k}"], out[f"sv_aug_{k}"] = st / st[0], sa / sa[0]
    out["table"] = np.array(rows, dtype=np.int64)
    return out


def redundancy_counts(table: np.ndarray, cases: Sequence[Sequence[Any]], m: int) -> dict[str, int]:
    """Appendix A's counts from a :func:`redundancy_table` (rows: cases; columns: redundant
    directions of the true and the frozen-η Jacobian): ``relu_type_mismatch``, the largest
    |count − m| over the ReLU-type activations (relu, leaky_relu, abs) and both Jacobians (0 when
    both find the m scale redundancies); ``tanh_excess``, frozen-η minus true count for tanh (m
    when the formula invents them); and ``<name>_true`` / ``<name>_aug`` for every case."""
    t = np.asarray(table)
    red = {c[0]: t[k] for k, c in enumerate(cases)}
    missing = sorted({"relu", "leaky_relu", "abs", "tanh"} - set(red))
    if missing:
        raise ParameterError(
            f"cases must include relu, leaky_relu, abs and tanh; missing {missing}"
        )
    out = {
        "relu_type_mismatch": max(
            abs(int(red[a][0]) - m) + abs(int(red[a][1]) - m) for a in ("relu", "leaky_relu", "abs")
        ),
        "tanh_excess": int(red["tanh"][1]) - int(red["tanh"][0]),
    }
    for name, r in red.items():
        out[f"{name}_true"], out[f"{name}_aug"] = int(r[0]), int(r[1])
    return out


def tree_capacity_table(
    cases: Sequence[Sequence[Any]],
    architectures: Sequence[Sequence[int]],
    *,
    n_inputs: int,
    rngs: Sequence[Sequence[np.random.Generator]],
) -> np.ndarray:
    """Donier's Appendix A check on hierarchical architectures: for every (fan_in, levels) of
    ``architectures`` and every (activation, slope) of ``cases``, :func:`tree_jacobians` (drawn
    from ``rngs[a][k]``) and the total capacity each Jacobian gives — its numerical rank, the
    number of independent parameters (:func:`redundant_directions`).

    Returns (architectures, cases, 4): parameters, hidden units, total capacity from the true
    Jacobian, and from the augmented one (η frozen, Eqs. 5–6 on every layer)."""
    n_inputs = check_positive_int("n_inputs", n_inputs)
    if len(rngs) != len(architectures) or any(len(r) != len(cases) for r in rngs):
        raise ParameterError("rngs must hold one generator per (architecture, case)")
    table = np.zeros((len(architectures), len(cases), 4), dtype=np.int64)
    for a, (fan_in, levels) in enumerate(architectures):
        for k, (name, slope) in enumerate(cases):
            J = tree_jacobians(
                name, fan_in=fan_in, levels=levels, n_inputs=n_inputs, rng=rngs[a][k], slope=slope
            )
            n_par = J["true"].shape[1]
            red_t = redundant_directions(J["true"])[0]
            red_a = redundant_directions(J["augmented"])[0]
            table[a, k] = [n_par, int(J["hidden"]), n_par - red_t, n_par - red_a]
    return table
