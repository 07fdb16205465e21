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
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from . import capacity as cap
from .params import ParameterError, check_choice, check_positive_int
from .seeds import stream
from .stats import Estimate, estimate, linear_fit, mean_se

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
    x_same, c_same = p_same + rho * s, rho * p_same + s          # ++ (and −− by symmetry)
    x_diff, c_diff = 0.5 - x_same, rho / 2 - c_same               # +− (and −+)
    same, diff = alpha * alpha + beta * beta, 2 * alpha * beta
    e = same * p_same + diff * p_diff
    x, c = same * x_same + diff * x_diff, same * c_same + diff * c_diff
    return e, np.array([[x, c], [c, x]])


def gaussian_block(Sigma: np.ndarray, p: np.ndarray, q: np.ndarray, alpha: float, beta: float) -> np.ndarray:
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


def gaussian_augmented_covariance(Sigma: np.ndarray, P: np.ndarray, name: str, slope: float | None = None) -> np.ndarray:
    """Exact Σ̃ (nm × nm) of the fixed layer P for Y ~ N(0, Σ) [Eqs. 6, 12]: diagonal blocks Σ
    (E[η²] = E[η²z²] = 1), off-diagonal blocks :func:`gaussian_block`."""
    cap.check_activation(name, ("linear", "leaky_relu", "relu", "abs"))
    al, be = cap.eta_levels(name, slope)
    Sigma, P = np.asarray(Sigma, float), np.asarray(P, float)
    n, m = P.shape
    St = np.zeros((n * m, n * m))
    for i in range(m):
        St[i * n:(i + 1) * n, i * n:(i + 1) * n] = Sigma
        for j in range(i + 1, m):
            b = gaussian_block(Sigma, P[:, i], P[:, j], al, be)
            St[i * n:(i + 1) * n, j * n:(j + 1) * n] = b
            St[j * n:(j + 1) * n, i * n:(i + 1) * n] = b.T
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
    Q = cap.orthonormal_basis(np.asarray(St, float) @ cap.augment_P(P) @ np.asarray(J, float))
    return cap.capacity(Q).reshape(m, n).sum(0)


def empirical_capacities(Y: np.ndarray, E: np.ndarray, P: np.ndarray, J: np.ndarray) -> np.ndarray:
    """κ_i from the empirical Σ̂̃ = mean_s Ỹ_sỸ_sᵀ without forming it: Σ̂̃P̃J = Ỹᵀ(η ⊙ PᵀY)J / N
    (same as :func:`layerwise.capacity.empirical_augmented_capacities`, by matrix products)."""
    Y, E, P, J = (np.asarray(a, dtype=np.float64) for a in (Y, E, P, J))
    N, n = Y.shape
    m = P.shape[1]
    V = (E * (Y @ P)) @ J
    Yt = (E[:, :, None] * Y[:, None, :]).reshape(N, m * n)
    Q = cap.orthonormal_basis(Yt.T @ V / N)
    return cap.capacity(Q).reshape(m, n).sum(0)


def interpolation_capacities(Sigma: np.ndarray, P: np.ndarray, J: np.ndarray, nus: Sequence[float]) -> np.ndarray:
    """κ of Eq. 14's Σ̃ at every ν of ``nus`` (len(nus), n): ν = 1 is Eq. 18, ν = 0 (Σ = I) Eq. 25."""
    P, J, Sigma = (np.asarray(a, float) for a in (P, J, Sigma))
    n, m = P.shape
    # Σ̃P̃J = ν·(1 ⊗ ΣPJ) + (1−ν)·(I ⊗ Σ)P̃J, block by block (Eq. 14 is linear in ν)
    full = np.tile(Sigma @ P @ J, (m, 1))
    diag = (np.kron(np.eye(m), Sigma) @ cap.augment_P(P)) @ J
    out = []
    for v in nus:
        Q = cap.orthonormal_basis(float(v) * full + (1.0 - float(v)) * diag)
        out.append(cap.capacity(Q).reshape(m, n).sum(0))
    return np.array(out)


def effective_nu(kappa: np.ndarray, curve: np.ndarray, nus: np.ndarray) -> float:
    """The ν at which Eq. 14's capacities (``curve``, on the grid ``nus``) are closest (Euclidean) to
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
    from .data import natural_patches

    side, n_samples = check_positive_int("side", side), check_positive_int("n_samples", n_samples)
    X = natural_patches(n_samples, seed=seed, size=side).mean(1).reshape(n_samples, -1).astype(np.float64)
    X -= X.mean(0)
    return X / math.sqrt(np.mean(np.sum(X * X, axis=1)) / X.shape[1])


def layer_inputs(kind: str, side: int, n_samples: int, seed: int) -> np.ndarray:
    """Inputs of dimension n = side²: ``iid`` (Y ~ N(0, I)) or ``patches`` (:func:`photo_patch_inputs`)."""
    check_choice("inputs", kind, INPUTS)
    if kind == "patches":
        return photo_patch_inputs(side, n_samples, seed)
    return np.random.default_rng(seed).standard_normal((n_samples, side * side))


# ------------------------------------------------------------------------------------------------
# Block ratios of a fixed layer, measured [Eq. 14]
# ------------------------------------------------------------------------------------------------
def gram_quadratic_forms(Y: np.ndarray) -> np.ndarray:
    """q_s = Y_sᵀΣ̂Y_s with Σ̂ = YᵀY/N, for every sample (the weights of :func:`block_ratios_sampled`)."""
    Y = np.asarray(Y, float)
    return np.sum((Y @ (Y.T @ Y / Y.shape[0])) * Y, axis=1)


def block_ratios_sampled(Y: np.ndarray, E: np.ndarray, q: np.ndarray | None = None) -> dict[str, np.ndarray]:
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
    var = ((E * E * q2[:, None]).T @ (E * E) - 2 * r * ((E * q2[:, None]).T @ E) + r * r * q2.sum()) / N
    se = np.sqrt(np.maximum(var, 0.0) * N / (N - 1) / N) / qm
    return {"r": r, "se": se}


def fixed_layer_ratios(
    *, cases: Sequence[Sequence[Any]], inputs: str, sides: Sequence[int], m: int, draws: int,
    n_samples: int, seed: int,
) -> dict[str, np.ndarray]:
    """Off-diagonal block ratios of fixed layers: for every input side (n = side²), ``draws`` layers
    P (m unit columns, stream ("fixed_P", side, d)) on the same ``n_samples`` inputs of ``inputs``,
    every activation of ``cases`` (pseudo-random units keyed by the draw).

    Returns ``ns`` and per case k ``ratios_k`` (len(sides), draws, m(m−1)/2), the ratios r_ij, i < j,
    ``noise_k`` (len(sides), draws) the mean squared standard error of those ratios (their sampling
    noise floor), and ``diag_k`` (len(sides), draws), the mean diagonal ratio (1 in Eq. 14)."""
    m, draws = check_positive_int("m", m), check_positive_int("draws", draws)
    if m < 2:
        raise ParameterError(f"m={m} must be >= 2 (off-diagonal blocks need two units)")
    iu = np.triu_indices(m, 1)
    out: dict[str, np.ndarray] = {"ns": np.array([s * s for s in sides], float)}
    R = np.zeros((len(cases), len(sides), draws, len(iu[0])))
    D = np.zeros((len(cases), len(sides), draws))
    NZ = np.zeros((len(cases), len(sides), draws))
    for a, side in enumerate(sides):
        Y = layer_inputs(inputs, side, n_samples, seed + 7919 * side)
        q = gram_quadratic_forms(Y)
        for d in range(draws):
            P = cap.random_unit_columns(side * side, m, stream(seed, "fixed_P", inputs, side, d))
            Z = Y @ P
            for k, (name, slope) in enumerate(cases):
                E = cap.eta(name, Z, slope=slope, unit_seed=(np.arange(m) + 1000 * (d + 1))[None, :])
                br = block_ratios_sampled(Y, E, q)
                r = br["r"]
                R[k, a, d], D[k, a, d], NZ[k, a, d] = r[iu], np.diag(r).mean(), np.mean(br["se"][iu] ** 2)
    for k in range(len(cases)):
        out[f"ratios_{k}"], out[f"diag_{k}"], out[f"noise_{k}"] = R[k], D[k], NZ[k]
    return out


def ratio_deviation_fit(ratios: np.ndarray, ns: np.ndarray, nu: float, noise: np.ndarray | None = None,
                        n_min: float = 1.0) -> dict[str, Any]:
    """Root-mean-square deviation of the off-diagonal ratios from ν per layer (``rms``: (len(ns),
    draws)), its sampling noise floor ``noise`` (mean squared SE) subtracted from the mean square, and
    the log-log least-squares fit of rms on n over every layer with n ≥ ``n_min`` (``fit``; ``dof`` =
    points − 2)."""
    ms = np.mean((np.asarray(ratios) - nu) ** 2, axis=-1)
    if noise is not None:
        ms = ms - np.asarray(noise)
    rms = np.sqrt(np.clip(ms, 1e-12, None))
    ns = np.asarray(ns, float)
    use = ns >= n_min
    fit = linear_fit(np.repeat(np.log(ns[use]), rms.shape[1]), np.log(rms[use]).ravel())
    return {"rms": rms, "fit": fit, "dof": int(use.sum() * rms.shape[1] - 2)}


def fixed_layer_heatmaps(
    *, cases: Sequence[Sequence[Any]], n: int, m: int, rho: float, n_samples: int, seed: int
) -> dict[str, np.ndarray]:
    """Empirical Σ̃ of ONE fixed layer (P from stream ("heat_P")) for Y ~ N(0, Σ), Σ_kl = ρ^|k−l|,
    for every case (Donier's Fig. 3, for an actual layer); ``S_k``, ``r_k`` (the m × m block ratios),
    ``Sigma``, ``P``."""
    Sigma = cap.banded_covariance(n, rho)
    P = cap.random_unit_columns(n, m, stream(seed, "heat_P"))
    Y = stream(seed, "heat_Y").standard_normal((n_samples, n)) @ np.linalg.cholesky(Sigma).T
    out = {"Sigma": Sigma, "P": P}
    for k, (name, slope) in enumerate(cases):
        E = cap.eta(name, Y @ P, slope=slope, unit_seed=(np.arange(m) + 100 * k)[None, :])
        out[f"S_{k}"] = cap.augmented_covariance(Y, E)
        out[f"r_{k}"] = cap.block_ratios(out[f"S_{k}"], Sigma)[1]
    return out


# ------------------------------------------------------------------------------------------------
# Footnote 3 in two norms
# ------------------------------------------------------------------------------------------------
def footnote3_direction_closed_form(name: str, slope: float | None = None) -> float:
    """‖(E[η_iη_j YYᵀ] − νI) p_j‖ = (E ηz)² = (β−α)²/(2π) for Y ~ N(0, I_n), p_i ⟂ p_j unit,
    at every n: the deviation (E ηz)²(p_ip_jᵀ + p_jp_iᵀ) maps p_j to (E ηz)² p_i."""
    if name == "pseudo_random":
        return 0.0
    al, be = cap.eta_levels(name, slope)
    return (be - al) ** 2 / (2.0 * math.pi)


def footnote3_mc(
    name: str, *, n: int, n_samples: int, rng: np.random.Generator, slope: float | None = None,
    n_batches: int = 10, chunk: int = 8192,
) -> dict[str, np.ndarray]:
    """Monte-Carlo of one fixed layer with two orthonormal columns p_1 ⟂ p_2, Y ~ N(0, I_n): per batch,
    unbiased estimates (the noise floor Σ var̂/N_b subtracted) of the squared relative Frobenius
    error ‖Ê − νI‖²_F/n and of the squared error along p_2, ‖(Ê − νI)p_2‖², Ê = mean η_1η_2 YYᵀ.

    Returns ``frob2`` and ``dir2`` (n_batches,)."""
    n, n_samples = check_positive_int("n", n), check_positive_int("n_samples", n_samples)
    if n < 2:
        raise ParameterError(f"n={n} must be >= 2 (two orthonormal columns)")
    nu = cap.nu_closed_form(name, slope)
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
            e = cap.eta(name, Z, slope=slope, unit_seed=seeds[None, :])
            Yw = Y * (e[:, 0] * e[:, 1])[:, None]
            S1 += Yw.T @ Y
            S2 += (Yw * Yw).T @ (Y * Y)
            u = Yw * Z[:, 1:2]                                # η_1η_2 Y z_2: its mean is Ê p_2
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


def footnote3_two_norms(*, cases: Sequence[Sequence[Any]], ns: Sequence[int], n_samples: int, seed: int) -> dict[str, np.ndarray]:
    """:func:`footnote3_mc` for every case and n (stream ("fn3", k, j)). Returns per case ``rows_k``
    (len(ns), 7): n, the squared Frobenius error, its SE, its closed form², the squared error along
    p_j, its SE, its closed form² — SEs over the batches."""
    out = {}
    for k, (name, slope) in enumerate(cases):
        rows = []
        for j, n in enumerate(ns):
            r = footnote3_mc(name, n=n, n_samples=n_samples, rng=stream(seed, "fn3", k, j), slope=slope)
            f, fse = mean_se(r["frob2"])
            d, dse = mean_se(r["dir2"])
            rows.append([n, f, fse, cap.footnote3_error_closed_form(name, n, slope) ** 2,
                         d, dse, footnote3_direction_closed_form(name, slope) ** 2])
        out[f"rows_{k}"] = np.array(rows, dtype=np.float64)
    return out


# ------------------------------------------------------------------------------------------------
# Capacities at intermediate ν
# ------------------------------------------------------------------------------------------------
def intermediate_capacities(
    *, cases: Sequence[Sequence[Any]], inputs: Sequence[str], side: int, m: int, p: int, draws: int,
    n_samples: int, seed: int, n_grid: int = 101,
) -> dict[str, np.ndarray]:
    """Capacities of fixed layers (n = side², m units, A = J·W with a random J ∈ ℝ^{m×p}) at
    intermediate ν, for each input kind and activation, over ``draws`` draws of (P, J):

    ``emp`` from the empirical Σ̃ of ``n_samples`` inputs; ``exact`` from the exact Gaussian Σ̃ of
    the layer with the inputs' covariance (:func:`gaussian_augmented_covariance`); ``curve`` the
    Eq. 14 interpolation on a grid of ν (``nus``), whose ends are Eq. 18 (ν = 1) and, for Σ = I,
    Eq. 25 (ν = 0); ``eq25`` = (P∘P)κ^φ.  Arrays indexed [input, case, draw, ...]; ``nu_hat`` the
    :func:`effective_nu` of ``emp``."""
    nus = np.linspace(0.0, 1.0, n_grid)
    n = side * side
    I_, C_, D_ = len(inputs), len(cases), check_positive_int("draws", draws)
    emp, exact = np.zeros((I_, C_, D_, n)), np.zeros((I_, C_, D_, n))
    curve, eq25 = np.zeros((I_, D_, n_grid, n)), np.zeros((I_, D_, n))
    nu_hat = np.zeros((I_, C_, D_))
    for a, kind in enumerate(inputs):
        Y = layer_inputs(kind, side, n_samples, seed + 104729 + 17 * a)
        Sigma = Y.T @ Y / len(Y) if kind == "patches" else np.eye(n)
        for d in range(D_):
            rng = stream(seed, "capacity_layer", kind, d)
            P = cap.random_unit_columns(n, m, rng)
            J = rng.standard_normal((m, p))
            curve[a, d] = interpolation_capacities(Sigma, P, J, nus)
            eq25[a, d] = cap.pseudo_random_capacities(P, cap.feature_capacities(J))
            Z = Y @ P
            for c, (name, slope) in enumerate(cases):
                emp[a, c, d] = empirical_capacities(Y, cap.eta(name, Z, slope=slope), P, J)
                exact[a, c, d] = augmented_capacities(gaussian_augmented_covariance(Sigma, P, name, slope), P, J)
                nu_hat[a, c, d] = effective_nu(emp[a, c, d], curve[a, d], nus)
    return {"nus": nus, "emp": emp, "exact": exact, "curve": curve, "eq25": eq25, "nu_hat": nu_hat}


def capacity_distances(res: dict[str, np.ndarray], nu_eq13: Sequence[float]) -> dict[str, np.ndarray]:
    """Per [input, case, draw]: ``d_eq14`` = ‖κ_emp − κ_Eq14(ν of Eq. 13)‖, ``d_exact`` = ‖κ_emp −
    κ_exact‖, ``span`` = ‖κ(ν=1) − κ(ν=0)‖ (the distance between the two limits)."""
    nus, curve, emp = res["nus"], res["curve"], res["emp"]
    idx = [int(np.argmin(np.abs(nus - v))) for v in nu_eq13]
    k14 = np.stack([curve[:, :, i] for i in idx], axis=1)            # (inputs, cases, draws, n)
    span = np.linalg.norm(curve[:, :, -1] - curve[:, :, 0], axis=-1)  # (inputs, draws)
    return {"d_eq14": np.linalg.norm(emp - k14, axis=-1), "d_exact": np.linalg.norm(emp - res["exact"], axis=-1),
            "span": np.broadcast_to(span[:, None], emp.shape[:3]).copy()}


# ------------------------------------------------------------------------------------------------
# Appendix A: parameter redundancy of a two-layer model
# ------------------------------------------------------------------------------------------------
def _f_and_slope(name: str, z: np.ndarray, slope: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(f(z), f'(z), η(z) = f(z)/z) for the activations of :data:`JACOBIAN_ACTIVATIONS`."""
    if name == "tanh":
        t = np.tanh(z)
        return t, 1.0 - t * t, cap.eta("tanh", z)
    e = cap.eta(name, z, slope=slope)
    return e * z, e, e   # piecewise linear: f' = η (Eq. 37)


def two_layer_jacobians(
    name: str, *, n: int, m: int, n_inputs: int, rng: np.random.Generator, slope: float | None = None,
) -> dict[str, np.ndarray]:
    """Jacobians of φ(Y) = Aᵀf(PᵀY) on ``n_inputs`` inputs Y ~ N(0, I_n) in the nm + m parameters
    (P, A) (P with unit columns, A ~ N(0, 1)), rows = inputs:

    ``true``: ∂φ/∂p_i = a_i f'(z_i) Y, ∂φ/∂a_i = f(z_i);  ``augmented``: Eqs. 5–6 with η frozen,
    ∂φ/∂p_i = a_i η_i Y, ∂φ/∂a_i = η_i z_i (Appendix A: the two agree when f' = η, Eq. 37)."""
    check_choice("activation", name, JACOBIAN_ACTIVATIONS)
    n, m, n_inputs = (check_positive_int(k, v) for k, v in (("n", n), ("m", m), ("n_inputs", n_inputs)))
    P = cap.random_unit_columns(n, m, rng)
    A = rng.standard_normal(m)
    Y = rng.standard_normal((n_inputs, n))
    Z = Y @ P
    f, fp, e = _f_and_slope(name, Z, slope)
    jt = np.concatenate([((A * fp)[:, :, None] * Y[:, None, :]).reshape(n_inputs, m * n), f], axis=1)
    ja = np.concatenate([((A * e)[:, :, None] * Y[:, None, :]).reshape(n_inputs, m * n), e * Z], axis=1)
    return {"true": jt, "augmented": ja, "P": P, "A": A, "Y": Y}


def redundant_directions(J: np.ndarray, rtol: float = 1e-9) -> tuple[int, np.ndarray]:
    """Number of parameter directions the Jacobian J (inputs × parameters) does not see — parameters
    minus numerical rank (singular values ≤ rtol·σ_max) — and the singular values, descending."""
    s = np.linalg.svd(np.asarray(J, float), compute_uv=False)
    rank = int(np.sum(s > rtol * s[0])) if s.size and s[0] > 0 else 0
    return J.shape[1] - rank, s


def redundancy_table(
    *, cases: Sequence[Sequence[Any]], n: int, m: int, n_inputs: int, seed: int
) -> dict[str, np.ndarray]:
    """:func:`two_layer_jacobians` and :func:`redundant_directions` per case (stream ("jac", k)):
    ``table`` (cases, 2) the redundant directions of the true and augmented Jacobians, and the
    normalised singular values ``sv_true_k``, ``sv_aug_k``."""
    rows, out = [], {}
    for k, (name, slope) in enumerate(cases):
        J = two_layer_jacobians(name, n=n, m=m, n_inputs=n_inputs, rng=stream(seed, "jac", k), slope=slope)
        rt, st = redundant_directions(J["true"])
        ra, sa = redundant_directions(J["augmented"])
        rows.append([rt, ra])
        out[f"sv_true_{k}"], out[f"sv_aug_{k}"] = st / st[0], sa / sa[0]
    out["table"] = np.array(rows, dtype=np.int64)
    return out


# ------------------------------------------------------------------------------------------------
# The numbers Chapter 1's claims and prose read from the runs above
# ------------------------------------------------------------------------------------------------
def ratios_at(fix: Mapping[str, np.ndarray], n_cases: int, index: int) -> np.ndarray:
    """The off-diagonal ratios r_ij (Donier, Eq. 14) of every layer and unit pair at input-size
    ``index`` of a :func:`fixed_layer_ratios` run, one row per case: (n_cases, draws·pairs)."""
    n_cases = check_positive_int("n_cases", n_cases)
    return np.array([np.asarray(fix[f"ratios_{k}"])[index].ravel() for k in range(n_cases)])


def layer_mean_ratio(ratios: np.ndarray) -> Estimate:
    """Each layer's mean off-diagonal ratio (``ratios``: (layers, pairs)), estimated over the layers
    as independent replicates: the mean that Eq. 15 sets to ν = (α+β)²/4, its SE, layers − 1 d.o.f."""
    ratios = np.asarray(ratios, dtype=np.float64)
    if ratios.ndim != 2:
        raise ParameterError(f"ratios must be a (layers, pairs) array, got shape {ratios.shape}")
    return estimate(ratios.mean(1))


def ratio_spread(ratios: np.ndarray) -> dict[str, float]:
    """Range and standard deviation of off-diagonal ratios over layers and unit pairs: ``lo``,
    ``hi``, ``sd`` (the population SD, ddof = 0) — how far single layers stray from Eq. 14."""
    r = np.asarray(ratios, dtype=np.float64)
    if r.size == 0:
        raise ParameterError("ratios must not be empty")
    return {"lo": float(r.min()), "hi": float(r.max()), "sd": float(r.std())}


def deviation_fits(fix: Mapping[str, np.ndarray], cases: Sequence[Sequence[Any]], labels: Mapping[int, str],
                   n_min: float = 1.0) -> dict[str, dict[str, Any]]:
    """:func:`ratio_deviation_fit` of a :func:`fixed_layer_ratios` run for the cases ``labels`` names
    (case index → label), each against its ν of Eq. 13, with the ratios' own noise floor subtracted."""
    return {lab: ratio_deviation_fit(fix[f"ratios_{k}"], fix["ns"], cap.nu_closed_form(*cases[k]),
                                     fix[f"noise_{k}"], n_min=n_min) for k, lab in labels.items()}


#: Columns of a :func:`footnote3_two_norms` row for each norm: n, measured, its SE, closed form.
FOOTNOTE3_COLUMNS: dict[str, list[int]] = {"frobenius": [0, 1, 2, 3], "direction": [0, 4, 5, 6]}


def footnote3_pooled(run: Mapping[str, np.ndarray], cases: Sequence[Sequence[Any]],
                     n_batches: int = 10) -> dict[tuple[str, str], tuple[float, float, float]]:
    """Per (case tag, norm) of a :func:`footnote3_two_norms` run: the ratio measured/closed form of
    the squared footnote-3 error pooled over n (:func:`layerwise.capacity.footnote3_pooled_ratio`:
    inverse-variance mean, SE, Welch–Satterthwaite d.o.f.), norms "frobenius" and "direction"."""
    return {(cap.case_tag(*case), norm): cap.footnote3_pooled_ratio(np.asarray(run[f"rows_{k}"])[:, cols], n_batches)
            for k, case in enumerate(cases) for norm, cols in FOOTNOTE3_COLUMNS.items()}


def capacity_gap(dist: Mapping[str, np.ndarray], input_index: int, case_index: int) -> Estimate:
    """‖κ_emp − κ_Eq14(ν)‖ − ‖κ_emp − κ_exact‖ per layer (:func:`capacity_distances`), estimated over
    the layers: > 0 when the empirical capacities are closer to the exact fixed-layer Σ̃ than to Eq. 14."""
    return estimate(np.asarray(dist["d_eq14"])[input_index, case_index]
                    - np.asarray(dist["d_exact"])[input_index, case_index])


def capacity_prose_numbers(res: Mapping[str, np.ndarray], dist: Mapping[str, np.ndarray],
                           inputs: Sequence[str], tags: Sequence[str]) -> dict[str, tuple[float, float | None]]:
    """(value, SE or None) of :func:`intermediate_capacities` for the prose, per input kind and case tag:
    ``nuhat_<kind>_<tag>`` the effective ν̂ over layers; ``d14_…`` and ``dex_…`` the mean distance of
    the empirical capacities to Eq. 14 at Eq. 13's ν and to the exact Σ̃, in units of the span between
    the limits; ``eq25_patch_gap`` (for the second input kind): the mean distance of the ν = 0 end of
    Eq. 14 to (P∘P)κ^φ (Eq. 25) in those units."""
    if len(inputs) < 2:
        raise ParameterError(f"inputs={list(inputs)!r} must name two input kinds (i.i.d. and patches)")
    out: dict[str, tuple[float, float | None]] = {}
    for a, kind in enumerate(inputs):
        for c, tag in enumerate(tags):
            e = estimate(np.asarray(res["nu_hat"])[a, c])
            out[f"nuhat_{kind}_{tag}"] = (e.mean, e.se)
            out[f"d14_{kind}_{tag}"] = (float(np.mean(dist["d_eq14"][a, c] / dist["span"][a, c])), None)
            out[f"dex_{kind}_{tag}"] = (float(np.mean(dist["d_exact"][a, c] / dist["span"][a, c])), None)
    gap = np.linalg.norm(np.asarray(res["eq25"])[1] - np.asarray(res["curve"])[1][:, 0], axis=-1) / dist["span"][1, 0]
    out["eq25_patch_gap"] = (float(np.mean(gap)), None)
    return out


def redundancy_counts(table: np.ndarray, cases: Sequence[Sequence[Any]], m: int) -> dict[str, int]:
    """Appendix A's counts from a :func:`redundancy_table` (rows: cases; columns: redundant directions
    of the true and the frozen-η Jacobian): ``relu_type_mismatch``, the largest |count − m| over the
    ReLU-type activations (relu, leaky_relu, abs) and both Jacobians (0 when both find the m scale
    redundancies); ``tanh_excess``, frozen-η minus true count for tanh (m when the formula invents them);
    and ``<name>_true`` / ``<name>_aug`` for every case."""
    t = np.asarray(table)
    red = {c[0]: t[k] for k, c in enumerate(cases)}
    missing = sorted({"relu", "leaky_relu", "abs", "tanh"} - set(red))
    if missing:
        raise ParameterError(f"cases must include relu, leaky_relu, abs and tanh; missing {missing}")
    out = {"relu_type_mismatch": max(abs(int(red[a][0]) - m) + abs(int(red[a][1]) - m)
                                     for a in ("relu", "leaky_relu", "abs")),
           "tanh_excess": int(red["tanh"][1]) - int(red["tanh"][0])}
    for name, r in red.items():
        out[f"{name}_true"], out[f"{name}_aug"] = int(r[0]), int(r[1])
    return out
