"""A single layer with ONE projection P: how far its augmented covariance is from Donier's Eq. 14,
what that does to capacities, and Appendix A's redundancy test (Chapter 1).

Donier 2019 ("Capacity allocation through neural network layers"), §2 and Appendix A:

* the exact augmented covariance of a *fixed* layer for Gaussian inputs, Y ~ N(0, Σ):
  conditioning Y on (z_i, z_j) = (p_iᵀY, p_jᵀY) gives each block E[η_iη_j YYᵀ] in closed form from
  the bivariate-normal orthant moments (the general form of footnote 3; Eq. 14 is its limit
  when p_iᵀΣp_j = 0 and the rank-2 term is neglected);
* the off-diagonal block ratios r_ij = ⟨Σ̃_ij, Σ⟩/⟨Σ, Σ⟩ of a fixed layer measured from samples
  (Gaussian or photo patches), which Eq. 14 sets to ν;
* footnote 3 in two norms: the Frobenius error √2(β−α)²/(2π√n) and the error along p_j,
  ‖(E[η_iη_jYYᵀ] − νI)p_j‖ = (β−α)²/(2π), the same at every n;
* capacities κ_i [Eqs. 9, 23] from an augmented covariance (empirical, exact, or Eq. 14's
  (ν11ᵀ + (1−ν)I)⊗Σ, which interpolates between Eq. 18 at ν = 1 and Eq. 25 at ν = 0);
* Appendix A: the Jacobian of φ(Y) = Aᵀf(PᵀY) in (P, A), true and with η frozen (Eqs. 5–6 applied
  to the lower layer), and its number of redundant directions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from . import capacity
from .data import natural_patches
from .params import ParameterError, check_choice, check_positive_int

#: Inputs of the fixed-layer experiments.
INPUTS: tuple[str, ...] = ("iid", "patches")
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
    n, m = np.asarray(P).shape
    Q = capacity.orthonormal_basis(
        np.asarray(St, float) @ capacity.augment_P(P) @ np.asarray(J, float)
    )
    return capacity.capacity(Q).reshape(m, n).sum(0)


def empirical_capacities(Y: np.ndarray, E: np.ndarray, P: np.ndarray, J: np.ndarray) -> np.ndarray:
    """κ_i from the empirical Σ̂̃ = mean_s Ỹ_sỸ_sᵀ without forming it: Σ̂̃P̃J = Ỹᵀ(η ⊙ PᵀY)J / N
    (same as :func:`layerwise.capacity.empirical_augmented_capacities`, by matrix products)."""
    Y, E, P, J = (np.asarray(a, dtype=np.float64) for a in (Y, E, P, J))
    N, n = Y.shape
    m = P.shape[1]
    V = (E * (Y @ P)) @ J
    Yt = (E[:, :, None] * Y[:, None, :]).reshape(N, m * n)
    Q = capacity.orthonormal_basis(Yt.T @ V / N)
    return capacity.capacity(Q).reshape(m, n).sum(0)


def interpolation_capacities(
    Sigma: np.ndarray, P: np.ndarray, J: np.ndarray, nus: Sequence[float]
) -> np.ndarray:
    """κ of Eq. 14's Σ̃ at every ν of ``nus`` (len(nus), n): ν = 1 is Eq. 18, ν = 0 (Σ = I) Eq.
    25."""
    P, J, Sigma = (np.asarray(a, float) for a in (P, J, Sigma))
    n, m = P.shape
    # Σ̃P̃J = ν·(1 ⊗ ΣPJ) + (1−ν)·(I ⊗ Σ)P̃J, block by block (Eq. 14 is linear in ν)
    full = np.tile(Sigma @ P @ J, (m, 1))
    diag = (np.kron(np.eye(m), Sigma) @ capacity.augment_P(P)) @ J
    out = []
    for v in nus:
        Q = capacity.orthonormal_basis(float(v) * full + (1.0 - float(v)) * diag)
        out.append(capacity.capacity(Q).reshape(m, n).sum(0))
    return np.array(out)


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
    """Inputs of dimension n = side²: ``iid`` (Y ~ N(0, I)) or ``patches``
    (:func:`photo_patch_inputs`)."""
    check_choice("inputs", kind, INPUTS)
    if kind == "patches":
        return photo_patch_inputs(side, n_samples, seed)
    return np.random.default_rng(seed).standard_normal((n_samples, side * side))


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


# ------------------------------------------------------------------------------------------------
# Footnote 3 in two norms
# ------------------------------------------------------------------------------------------------
def footnote3_direction_closed_form(name: str, slope: float | None = None) -> float:
    """‖(E[η_iη_j YYᵀ] − νI) p_j‖ = (E ηz)² = (β−α)²/(2π) for Y ~ N(0, I_n), p_i ⟂ p_j unit,
    at every n: the deviation (E ηz)²(p_ip_jᵀ + p_jp_iᵀ) maps p_j to (E ηz)² p_i."""
    if name == "pseudo_random":
        return 0.0
    al, be = capacity.eta_levels(name, slope)
    return (be - al) ** 2 / (2.0 * math.pi)


def footnote3_mc(
    name: str,
    *,
    n: int,
    n_samples: int,
    rng: np.random.Generator,
    slope: float | None = None,
    n_batches: int = 10,
    chunk: int = 8192,
) -> dict[str, np.ndarray]:
    """Monte-Carlo of one fixed layer with two orthonormal columns p_1 ⟂ p_2, Y ~ N(0, I_n): per
    batch, unbiased estimates (the noise floor Σ var̂/N_b subtracted) of the squared relative
    Frobenius error ‖Ê − νI‖²_F/n and of the squared error along p_2, ‖(Ê − νI)p_2‖², Ê = mean
    η_1η_2 YYᵀ.

    Returns ``frob2`` and ``dir2`` (n_batches,)."""
    n, n_samples = check_positive_int("n", n), check_positive_int("n_samples", n_samples)
    if n < 2:
        raise ParameterError(f"n={n} must be >= 2 (two orthonormal columns)")
    nu = capacity.nu_closed_form(name, slope)
    Q, _ = np.linalg.qr(rng.standard_normal((n, 2)))
    seeds = np.array([11, 12]) + 1000 * int(rng.integers(1 << 20))
    nb = n_samples // n_batches
    if nb < 2:
        raise ParameterError(f"n_samples={n_samples} must be >= 2·n_batches={2 * n_batches}")
    frob, dirs = [], []
    for _ in range(n_batches):
        S1, S2 = np.zeros((n, n)), np.zeros((n, n))
        v1, v2 = np.zeros(n), np.zeros(n)
        done = 0
        while done < nb:
            b = min(chunk, nb - done)
            Y = rng.standard_normal((b, n))
            Z = Y @ Q
            e = capacity.eta(name, Z, slope=slope, unit_seed=seeds[None, :])
            Yw = Y * (e[:, 0] * e[:, 1])[:, None]
            S1 += Yw.T @ Y
            S2 += (Yw * Yw).T @ (Y * Y)
            u = Yw * Z[:, 1:2]  # η_1η_2 Y z_2: its mean is Ê p_2
            v1 += u.sum(0)
            v2 += (u * u).sum(0)
            done += b
        M = S1 / nb
        var = (S2 / nb - M * M) * nb / (nb - 1)
        dev = M - nu * np.eye(n)
        frob.append((np.sum(dev * dev) - var.sum() / nb) / n)
        vm = v1 / nb
        vvar = (v2 / nb - vm * vm) * nb / (nb - 1)
        dv = vm - nu * Q[:, 1]
        dirs.append(float(dv @ dv - vvar.sum() / nb))
    return {"frob2": np.array(frob), "dir2": np.array(dirs)}


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
