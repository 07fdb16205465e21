"""Layer decoupling and capacity allocation through layers (Donier 2019, "Capacity allocation
through neural network layers"; chapters 1 and 2 of the book).

What is implemented, with the paper's equation numbers:

* the rewriting f(z) = η_z z [Eq. 4] and the augmented input Ỹ = (η_1 Y, …, η_m Y) with its
  covariance Σ̃ = E[ỸỸᵀ] [Eqs. 5–6, 8];
* the decoupling scale ν = (α+β)²/4 for η = α·1{z≤0} + β·1{z>0}, α²+β² = 2 [Eqs. 12–13, 15],
  its Monte-Carlo estimator, and the generalisation ν(f; q) = (E η)²/E[η²], z ~ N(0, q), for
  smooth activations computed by quadrature (:mod:`layerwise.gaussian`; beyond the paper);
* the exact finite-n correction to Eq. 13 for orthonormal projections (footnote 3);
* capacities: the capacity matrix K = Σ·∂A/∂W, orthonormalised (an orthonormal basis of its
  column space, Euclidean inner product), κ(S) = ‖KᵀS‖_F² [Eqs. 9, 16–18]; the pseudo-random rule
  κ = (P∘P) κ^φ [Eqs. 22–25]; capacities from an *empirical* augmented covariance;
* the capacity network κ⁰ = D_1⋯D_L κ^L [Eqs. 27–28]; its residual limit D = I + εΔ and the
  Gaussian heat kernel [Eqs. 29–34]; the straight-path weight w_max = Π_l (D_l)_ii [Eqs. 35–36];
* random deep 1-D convolutional networks (torch) whose mean squared input-gradient is compared
  with the capacity network (Luo et al. 2016), and gradient correlations at nearby inputs for
  plain vs residual networks (Balduzzi et al. 2017).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import gaussian
from . import seeds as _seeds
from .params import ParameterError, check_choice, check_positive, check_positive_int
from .stats import mean_se

#: Bump when numerics change (part of every results-store key of chapters 1–2).
CODE_VERSION = "2"

#: Activations whose η is piecewise constant, η = α·1{z≤0} + β·1{z>0} (or pseudo-random).
PIECEWISE: tuple[str, ...] = ("linear", "leaky_relu", "relu", "abs", "pseudo_random")
#: Smooth activations for the generalised ν(f; q) (beyond the paper).
SMOOTH: tuple[str, ...] = ("tanh", "gelu", "silu", "elu")
ACTIVATIONS: tuple[str, ...] = PIECEWISE + SMOOTH

#: Width of the bins on which the pseudo-random sign function is constant.
PSEUDO_RANDOM_BIN = 2.0**-24


def check_activation(name: str, allowed: Sequence[str] = ACTIVATIONS) -> str:
    """Validate an activation name (``ParameterError`` naming the allowed values)."""
    return check_choice("activation", name, allowed)


def _check_slope(name: str, slope: float | None) -> float:
    if name != "leaky_relu":
        return 0.0
    if slope is None:
        raise ParameterError("activation='leaky_relu' needs slope (a number in [0, 1))")
    s = float(slope)
    if not (0.0 <= s < 1.0):
        raise ParameterError(f"slope={slope!r} must lie in [0, 1) for leaky_relu")
    return s


# ------------------------------------------------------------------------------------------------
# Decoupling scale ν  [Eqs. 12–15]
# ------------------------------------------------------------------------------------------------
def eta_levels(name: str, slope: float | None = None) -> tuple[float, float]:
    """(α, β) of η = α·1{z≤0} + β·1{z>0}, normalised to α² + β² = 2 [Eq. 12].

    linear (1, 1); leaky ReLU of slope a: √(2/(1+a²))·(a, 1); ReLU (0, √2); abs (−1, 1).
    """
    check_activation(name, ("linear", "leaky_relu", "relu", "abs"))
    a = _check_slope(name, slope)
    if name == "linear":
        return 1.0, 1.0
    if name == "abs":
        return -1.0, 1.0
    c = math.sqrt(2.0 / (1.0 + a * a))
    return a * c, c


def nu_closed_form(name: str, slope: float | None = None) -> float:
    """ν = (α+β)²/4 [Eq. 13]; 0 for pseudo-random activations [Eq. 15]."""
    check_activation(name, PIECEWISE)
    if name == "pseudo_random":
        return 0.0
    al, be = eta_levels(name, slope)
    return (al + be) ** 2 / 4.0


def _mix32(k: Any) -> Any:
    """A 32-bit integer mixing hash (same ops on numpy int64 arrays and torch int64 tensors)."""
    m = 0xFFFFFFFF
    k = k & m
    k = ((k ^ (k >> 16)) * 0x45D9F3B) & m
    k = ((k ^ (k >> 16)) * 0x45D9F3B) & m
    k = k ^ (k >> 16)
    return k


def pseudo_random_sign(z: Any, unit_seed: Any) -> Any:
    """A fixed pseudo-random ±1 function of z, one per unit [Eqs. 11, 19].

    η(z) is constant on bins of width ``PSEUDO_RANDOM_BIN`` and the signs of distinct bins (and of
    distinct ``unit_seed``) are given by a hash: drawn once, deterministic, zero-mean, unit variance.
    Works on numpy arrays and on torch tensors (``unit_seed`` broadcast against ``z``).
    """
    try:
        import torch

        if isinstance(z, torch.Tensor):
            k = torch.floor(z.detach().double() / PSEUDO_RANDOM_BIN).long()
            s = torch.as_tensor(unit_seed, dtype=torch.long, device=z.device)
            h = _mix32(_mix32(k) ^ _mix32(s * 0x9E3779B1 + 0x7F4A7C15))
            return ((h & 1) * 2 - 1).to(z.dtype)
    except ImportError:  # pragma: no cover
        pass
    k = np.floor(np.asarray(z, dtype=np.float64) / PSEUDO_RANDOM_BIN).astype(np.int64)
    s = np.asarray(unit_seed, dtype=np.int64)
    h = _mix32(_mix32(k) ^ _mix32(s * 0x9E3779B1 + 0x7F4A7C15))
    return ((h & 1) * 2 - 1).astype(np.float64)


def eta(name: str, z: np.ndarray, *, slope: float | None = None, unit_seed: Any = 0) -> np.ndarray:
    """η(z) = f(z)/z [Eq. 4] for every activation (normalised as in Eq. 12 for the piecewise ones).

    Smooth ones: tanh → tanh(z)/z; GELU → Φ(z); SiLU → sigmoid(z); ELU → 1 (z>0), expm1(z)/z (z≤0).
    """
    check_activation(name)
    z = np.asarray(z, dtype=np.float64)
    if name == "pseudo_random":
        return pseudo_random_sign(z, unit_seed)
    if name in ("linear", "leaky_relu", "relu", "abs"):
        al, be = eta_levels(name, slope)
        return np.where(z > 0, be, al)
    if name == "gelu":
        from scipy.special import ndtr

        return ndtr(z)
    if name == "silu":
        from scipy.special import expit

        return expit(z)
    small = np.abs(z) < 1e-6
    zs = np.where(small, 1.0, z)
    if name == "tanh":
        return np.where(small, 1.0 - z * z / 3.0, np.tanh(zs) / zs)
    # elu
    return np.where(z > 0, 1.0, np.where(small, 1.0 + z / 2.0, np.expm1(np.minimum(zs, 0.0)) / zs))


def nu_monte_carlo(
    name: str,
    *,
    n: int,
    m: int,
    n_samples: int,
    rng: np.random.Generator,
    slope: float | None = None,
    q: float = 1.0,
    batch: int = 20000,
) -> dict[str, float]:
    """Monte-Carlo estimate of ν with its standard error, from samples of a random layer.

    Y ~ N(0, q·I_n) and a fresh P (m unit-norm columns, uniform on the sphere) per sample; z = PᵀY.
    The estimator is the ratio of the off-diagonal to the diagonal blocks of Σ̃ traced over k:

        ν̂ = mean_s[Σ_{i≠j} η_i η_j |Y|²/(m(m−1))] / mean_s[Σ_i η_i² |Y|²/m],

    with a delta-method standard error.  Since p_i is uniform and independent of Y, z_i has the law
    |Y|·u_i with u_i the first coordinate of a uniform unit vector of ℝⁿ (u_i² ~ Beta(1/2, (n−1)/2),
    random sign); this is sampled directly, which is exact and costs O(m) per sample instead of O(nm)
    (``nu_monte_carlo_bruteforce`` draws P explicitly; the tests check they agree).
    For piecewise-constant η this estimator is unbiased for Eq. 13 at every n (E[η_i | Y] is the same
    for every Y); for smooth η it carries an O(1/n) bias.
    Returns ``nu``, ``se``, ``diag`` (mean of Σ_i η_i²|Y|²/(m n q), 1 for Eq. 12's normalisation).
    """
    check_activation(name)
    n, m, n_samples = (check_positive_int(k, v) for k, v in (("n", n), ("m", m), ("n_samples", n_samples)))
    if m < 2:
        raise ParameterError(f"m={m} must be >= 2 (ν needs two distinct units)")
    q = check_positive("q", q)
    _check_slope(name, slope)
    seeds = np.arange(m, dtype=np.int64) + 1000 * int(rng.integers(1 << 20))
    T, Dg = [], []
    done = 0
    while done < n_samples:
        b = min(batch, n_samples - done)
        r2 = q * rng.chisquare(n, size=b)
        u = np.sqrt(rng.beta(0.5, (n - 1) / 2.0, size=(b, m))) * rng.choice([-1.0, 1.0], size=(b, m))
        z = np.sqrt(r2)[:, None] * u
        e = eta(name, z, slope=slope, unit_seed=seeds[None, :])
        s1, s2 = e.sum(1), (e * e).sum(1)
        T.append((s1 * s1 - s2) / (m * (m - 1)) * r2 / (n * q))
        Dg.append(s2 / m * r2 / (n * q))
        done += b
    t, d = np.concatenate(T), np.concatenate(Dg)
    return _ratio_stats(t, d)


def _ratio_stats(t: np.ndarray, d: np.ndarray) -> dict[str, float]:
    N = len(t)
    nu = float(t.mean() / d.mean())
    se = float(mean_se(t - nu * d)[1] / abs(d.mean()))  # delta method for a ratio of means
    d_mean, d_se = mean_se(d)
    return {"nu": nu, "se": se, "diag": float(d_mean), "diag_se": float(d_se), "n_samples": N}


def random_unit_columns(n: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """P ∈ ℝ^{n×m} with independent columns uniform on the unit sphere."""
    P = rng.standard_normal((n, m))
    return P / np.linalg.norm(P, axis=0, keepdims=True)


def nu_monte_carlo_bruteforce(
    name: str, *, n: int, m: int, n_samples: int, rng: np.random.Generator,
    slope: float | None = None, q: float = 1.0,
) -> dict[str, float]:
    """The estimator of :func:`nu_monte_carlo` with P drawn explicitly per sample (slow; for tests)."""
    check_activation(name)
    seeds = np.arange(m, dtype=np.int64) + 1000 * int(rng.integers(1 << 20))
    Y = math.sqrt(q) * rng.standard_normal((n_samples, n))
    P = rng.standard_normal((n_samples, n, m))
    P /= np.linalg.norm(P, axis=1, keepdims=True)
    z = np.einsum("sn,snm->sm", Y, P)
    e = eta(name, z, slope=slope, unit_seed=seeds[None, :])
    r2 = (Y * Y).sum(1)
    s1, s2 = e.sum(1), (e * e).sum(1)
    return _ratio_stats((s1 * s1 - s2) / (m * (m - 1)) * r2 / (n * q), s2 / m * r2 / (n * q))


# ------------------------------------------------------------------------------------------------
# Generalised ν(f; q) by quadrature (beyond the paper)
# ------------------------------------------------------------------------------------------------
def eta_moments(name: str, q: float) -> tuple[float, float]:
    """(E η, E η²) for z ~ N(0, q) by :func:`layerwise.gaussian.expectation` (z = 0 is a panel edge,
    so ELU's kink there costs no accuracy; the peak of tanh z / z at the unit scale is resolved
    whatever q), for the smooth activations of :data:`SMOOTH`."""
    check_activation(name, SMOOTH + ("linear", "relu", "abs", "leaky_relu"))
    q = check_positive("q", q)
    if name in ("linear", "relu", "abs", "leaky_relu"):
        raise ParameterError(f"activation={name!r}: use nu_closed_form for piecewise-constant η")
    g = lambda z: eta(name, z)  # noqa: E731
    return gaussian.expectation(g, q), gaussian.expectation(lambda z: g(z) ** 2, q)


def nu_smooth(name: str, q: float) -> float:
    """ν(f; q) = (E η)² / E[η²], z ~ N(0, q): Eq. 13 with η rescaled to E η² = 1 (beyond the paper)."""
    m1, m2 = eta_moments(name, q)
    return m1 * m1 / m2


def nu_gelu_closed_form(q: float) -> float:
    """ν(GELU; q) = π / (π + 2 arcsin(q/(1+q))): E Φ(z) = ½ and E Φ(z)² = ¼ + arcsin(q/(1+q))/(2π)
    (the orthant probability of two standard normals of correlation q/(1+q))."""
    q = check_positive("q", q)
    return math.pi / (math.pi + 2.0 * math.asin(q / (1.0 + q)))


# ------------------------------------------------------------------------------------------------
# Augmented covariance [Eqs. 5–6, 8, 14] and footnote 3
# ------------------------------------------------------------------------------------------------
def augmented_covariance(Y: np.ndarray, E: np.ndarray) -> np.ndarray:
    """Empirical Σ̃ = mean_s Ỹ_sỸ_sᵀ with Ỹ_s = (η_{s1}Y_s, …, η_{sm}Y_s) [Eq. 6]; shape (nm, nm).

    ``Y``: (N, n) inputs; ``E``: (N, m) the η_i of each sample.  Block (i, j) is E[η_i η_j Y Yᵀ].
    """
    Y, E = np.asarray(Y, float), np.asarray(E, float)
    N, n = Y.shape
    m = E.shape[1]
    Yt = (E[:, :, None] * Y[:, None, :]).reshape(N, n * m)
    return Yt.T @ Yt / N


def block_ratios(St: np.ndarray, Sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares ratios r_ij = ⟨Σ̃_ij, Σ⟩_F / ⟨Σ, Σ⟩_F of every block to Σ [Eq. 14].

    Returns (diagonal ratios (m,), off-diagonal ratios (m(m−1),)).
    """
    n = Sigma.shape[0]
    m = St.shape[0] // n
    B = St.reshape(m, n, m, n).transpose(0, 2, 1, 3)
    r = np.einsum("ijkl,kl->ij", B, Sigma) / np.sum(Sigma * Sigma)
    off = ~np.eye(m, dtype=bool)
    return np.diag(r).copy(), r[off]


def augmented_covariance_mc(
    name: str, Sigma: np.ndarray, *, m: int, n_samples: int, rng: np.random.Generator,
    slope: float | None = None, n_batches: int = 10, unit_seeds: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Empirical Σ̃ of a layer with a *fresh* random P (m unit-norm columns) per sample, Y ~ N(0, Σ)
    — the idealised setting of Eq. 14, in which z_i is symmetric given Y — in ``n_batches`` batches.

    Returns ``S`` (nm × nm, the mean over batches), and per batch the mean diagonal and mean
    off-diagonal block ratios to Σ (:func:`block_ratios`), ``diag`` and ``off`` (n_batches,).
    """
    check_activation(name, PIECEWISE)
    Sigma = np.asarray(Sigma, dtype=np.float64)
    n = Sigma.shape[0]
    m, n_samples, n_batches = (check_positive_int(k, v) for k, v in
                               (("m", m), ("n_samples", n_samples), ("n_batches", n_batches)))
    seeds = np.arange(m) if unit_seeds is None else np.asarray(unit_seeds)
    Lc = np.linalg.cholesky(Sigma)
    N = n_samples // n_batches
    if N < 1:
        raise ParameterError(f"n_samples={n_samples} must be >= n_batches={n_batches}")
    acc, offs, diags = np.zeros((n * m, n * m)), [], []
    for _ in range(n_batches):
        Y = rng.standard_normal((N, n)) @ Lc.T
        Pm = rng.standard_normal((N, n, m))
        Pm /= np.linalg.norm(Pm, axis=1, keepdims=True)
        E = eta(name, np.einsum("sn,snm->sm", Y, Pm), slope=slope, unit_seed=seeds[None, :])
        St = augmented_covariance(Y, E)
        acc += St / n_batches
        d, o = block_ratios(St, Sigma)
        diags.append(d.mean())
        offs.append(o.mean())
    return {"S": acc, "diag": np.array(diags), "off": np.array(offs)}


def footnote3_error_closed_form(name: str, n: int, slope: float | None = None) -> float:
    """‖E[η_iη_j YYᵀ] − νΣ‖_F / ‖Σ‖_F for Y ~ N(0, I_n) and orthonormal p_i ⟂ p_j (footnote 3).

    Conditioning the Gaussian Y on (z_i, z_j) gives exactly E[η_iη_j YYᵀ] = νI + (E[ηz])²(p_ip_jᵀ +
    p_jp_iᵀ), E[ηz] = (β−α)/√(2π); the relative Frobenius error is √2 (β−α)²/(2π√n).
    """
    n = check_positive_int("n", n)
    if name == "pseudo_random":
        return 0.0
    al, be = eta_levels(name, slope)
    return math.sqrt(2.0) * (be - al) ** 2 / (2.0 * math.pi * math.sqrt(n))


def footnote3_error_mc(
    name: str, *, n: int, n_samples: int, rng: np.random.Generator, slope: float | None = None,
    n_batches: int = 10, chunk: int = 4096,
) -> dict[str, float]:
    """Monte-Carlo ‖E[η_1η_2 YYᵀ] − νΣ‖_F/‖Σ‖_F for a *fixed* P with two orthonormal columns.

    The squared Frobenius norm is estimated without its noise floor: in each of ``n_batches``
    batches, ‖Ê − νI‖² − Σ_kl var̂(η_1η_2 y_k y_l)/N_b (unbiased for ‖bias‖²); the batches give the
    standard error.  Returns ``err2`` (squared relative error), ``err2_se`` and ``err`` (= √max(err2, 0)).
    """
    n, n_samples = check_positive_int("n", n), check_positive_int("n_samples", n_samples)
    if n < 2:
        raise ParameterError(f"n={n} must be >= 2 (two orthonormal columns)")
    nu = nu_closed_form(name, slope)
    Q, _ = np.linalg.qr(rng.standard_normal((n, 2)))
    seeds = np.array([11, 12]) + 1000 * int(rng.integers(1 << 20))
    nb = n_samples // n_batches
    ests = []
    for _ in range(n_batches):
        S1 = np.zeros((n, n))
        S2 = np.zeros((n, n))
        done = 0
        while done < nb:
            b = min(chunk, nb - done)
            Y = rng.standard_normal((b, n))
            e = eta(name, Y @ Q, slope=slope, unit_seed=seeds[None, :])
            w = e[:, 0] * e[:, 1]
            Yw = Y * w[:, None]
            S1 += Yw.T @ Y
            S2 += (Yw * Yw).T @ (Y * Y)
            done += b
        M = S1 / nb
        var = (S2 / nb - M * M) * nb / (nb - 1)
        dev = M - nu * np.eye(n)
        ests.append((np.sum(dev * dev) - var.sum() / nb) / n)
    ests = np.array(ests)
    err2 = float(ests.mean())
    return {"err2": err2, "err2_se": float(mean_se(ests)[1]),
            "err": math.sqrt(max(err2, 0.0))}


# ------------------------------------------------------------------------------------------------
# Capacities [Eqs. 9, 16–18, 21–25]
# ------------------------------------------------------------------------------------------------
def orthonormal_basis(K: np.ndarray, rtol: float = 1e-10) -> np.ndarray:
    """An orthonormal basis (Euclidean) of the column space of K, from its SVD.

    This is the orthonormalisation used throughout: the capacity matrix's columns are replaced by
    an orthonormal basis of the subspace they span (the constraint KᵀX = 0 of Eq. 9 only depends
    on that subspace), whatever Σ or Σ̃ is.
    """
    K = np.asarray(K, dtype=np.float64)
    U, s, _ = np.linalg.svd(K, full_matrices=False)
    if s.size == 0 or s[0] == 0:
        return U[:, :0]
    return U[:, s > rtol * s[0]]


def capacity(Q: np.ndarray, S: np.ndarray | None = None) -> np.ndarray | float:
    """κ(S) = ‖QᵀS‖_F² for an orthonormal basis S of a subspace; with S=None the canonical
    capacities κ_i = ‖Qᵀe_i‖² (the diagonal of the projector QQᵀ)."""
    Q = np.asarray(Q, dtype=np.float64)
    if S is None:
        return np.sum(Q * Q, axis=1)
    return float(np.sum((Q.T @ np.asarray(S, dtype=np.float64)) ** 2))


def capacity_matrix(Sigma: np.ndarray, dAdW: np.ndarray) -> np.ndarray:
    """Orthonormalised capacity matrix of a model linear in its inputs: basis of col(Σ·∂A/∂W) [Eq. 9]."""
    return orthonormal_basis(np.asarray(Sigma) @ np.asarray(dAdW))


def augment_P(P: np.ndarray) -> np.ndarray:
    """P̃ ∈ ℝ^{nm×m}, block-diagonal with the columns p_i [Eq. 6]."""
    n, m = P.shape
    Pt = np.zeros((n * m, m))
    for i in range(m):
        Pt[i * n:(i + 1) * n, i] = P[:, i]
    return Pt


def augment_subspace(S: np.ndarray, m: int) -> np.ndarray:
    """S̃ = diag(S, …, S) (m blocks) [Eq. 17]; with S = e_i this is S̃_i of Eq. 23."""
    return np.kron(np.eye(m), np.asarray(S, dtype=np.float64))


def linear_layer_capacities(
    Sigma: np.ndarray, P: np.ndarray, J: np.ndarray, S: np.ndarray
) -> tuple[float, float]:
    """(κ̃(S̃), κ(S)) for a linear layer (η ≡ 1) [Eqs. 16–18].

    κ(S) from K = Σ·P·∂A/∂W in the input space; κ̃(S̃) from K̃ = Σ̃·P̃·∂A/∂W with Σ̃ = 11ᵀ⊗Σ [Eq. 10]
    in the augmented space.  ``J`` = ∂A/∂W ∈ ℝ^{m×p}.
    """
    n, m = P.shape
    K = capacity_matrix(Sigma, P @ J)
    St = np.kron(np.ones((m, m)), Sigma)
    Kt = capacity_matrix(St, augment_P(P) @ J)
    return capacity(Kt, augment_subspace(S, m)), capacity(K, S)


def stochastic_matrix(P: np.ndarray) -> np.ndarray:
    """D = P∘P with the columns of P normalised to unit norm (footnote 4): column-stochastic."""
    P = np.asarray(P, dtype=np.float64)
    norms = np.linalg.norm(P, axis=0, keepdims=True)
    if np.any(norms == 0):
        raise ParameterError("P has a zero column; every unit needs a non-zero projection")
    return (P / norms) ** 2


def feature_capacities(J: np.ndarray) -> np.ndarray:
    """κ^φ: canonical capacities in the feature space for i.i.d. unit features (Σ = I): diag of the
    projector on col(∂A/∂W)."""
    return capacity(orthonormal_basis(J))


def pseudo_random_capacities(P: np.ndarray, kappa_phi: np.ndarray) -> np.ndarray:
    """κ = (P∘P) κ^φ [Eq. 25] (columns of P normalised)."""
    return stochastic_matrix(P) @ np.asarray(kappa_phi, dtype=np.float64)


def empirical_augmented_capacities(Y: np.ndarray, E: np.ndarray, P: np.ndarray, J: np.ndarray) -> np.ndarray:
    """κ_i [Eq. 23] from the *empirical* augmented covariance of samples (Y, η).

    K̃ = Σ̂̃·P̃·J with Σ̂̃ = mean_s Ỹ_sỸ_sᵀ is formed without Σ̂̃ itself: Ỹ_sᵀP̃ = (η_s ⊙ PᵀY_s)ᵀ, so
    K̃ = mean_s Ỹ_s (η_s ⊙ PᵀY_s)ᵀJ, whose block i is mean_s η_{si} Y_s v_sᵀ.  K̃ is orthonormalised
    (Euclidean basis of its column space) and κ_i sums the squared rows (j, i) over blocks j.
    """
    Y, E, P, J = (np.asarray(a, dtype=np.float64) for a in (Y, E, P, J))
    N, n = Y.shape
    m = P.shape[1]
    V = (E * (Y @ P)) @ J  # (N, p)
    Kt = np.einsum("sj,sk,sp->jkp", E, Y, V, optimize=True).reshape(m * n, -1) / N
    Q = orthonormal_basis(Kt)
    return capacity(Q).reshape(m, n).sum(0)


# ------------------------------------------------------------------------------------------------
# Capacity network and its residual limit [Eqs. 27–36]
# ------------------------------------------------------------------------------------------------
def capacity_network(Ds: Sequence[np.ndarray], kappa_L: np.ndarray) -> np.ndarray:
    """κ^{l−1} = D_l κ^l down to κ⁰ = D_1⋯D_L κ^L [Eqs. 27–28].

    ``Ds`` = [D_1, …, D_L] (D_l ∈ ℝ^{n_{l−1}×n_l}); returns the list [κ^L, κ^{L−1}, …, κ^0] as an
    array (L+1, n) when all widths agree, else a list.
    """
    out = [np.asarray(kappa_L, dtype=np.float64)]
    for D in reversed(list(Ds)):
        out.append(np.asarray(D) @ out[-1])
    try:
        return np.stack(out)
    except ValueError:
        return out  # type: ignore[return-value]


def local_delta(n: int, left: np.ndarray | float, right: np.ndarray | float) -> np.ndarray:
    """Circular local generator Δ (n×n): column i sends ``left[i]`` to i−1 and ``right[i]`` to i+1,
    Δ_ii = −(left+right), so columns sum to 0 and I + εΔ is column-stochastic [Eqs. 29, 31]."""
    n = check_positive_int("n", n)
    if n < 3:
        raise ParameterError(f"n={n} must be >= 3 for a nearest-neighbour operator")
    left = np.broadcast_to(np.asarray(left, dtype=np.float64), (n,))
    right = np.broadcast_to(np.asarray(right, dtype=np.float64), (n,))
    idx = np.arange(n)
    Dl = np.zeros((n, n))
    Dl[(idx - 1) % n, idx] += left
    Dl[(idx + 1) % n, idx] += right
    Dl[idx, idx] -= left + right
    return Dl


def residual_layer(n: int, eps: float, left: np.ndarray | float, right: np.ndarray | float) -> np.ndarray:
    """D = I + εΔ with Δ = :func:`local_delta` (n, left, right) [Eq. 29], checked to be a capacity
    matrix: its diagonal 1 − ε(left + right) must be ≥ 0 (else D has negative entries, is not a
    diffusion step, and the straight-path weight Π D_ii can turn negative — e.g. ε = 1, L = 1)."""
    eps = check_positive("eps", eps)
    Dl = local_delta(n, left, right)
    if np.any(np.asarray(left) < 0) or np.any(np.asarray(right) < 0):
        raise ParameterError("left and right rates of a diffusion step must be >= 0")
    worst = float(np.max(-np.diag(Dl))) * eps
    if worst > 1.0:
        raise ParameterError(f"eps·(left+right) reaches {worst:.3g} > 1: I + εΔ has a negative diagonal; "
                             "use more layers (smaller ε = 1/L) or smaller rates")
    return np.eye(n) + eps * Dl


def heat_kernel(x: np.ndarray, x0: float, diffusion: float, t: float, drift: float = 0.0) -> np.ndarray:
    """Eq. 34 (with drift, Eq. 32): exp(−(x−x0−vt)²/(4𝒟t)) / √(4π𝒟t)."""
    diffusion, t = check_positive("diffusion", diffusion), check_positive("t", t)
    x = np.asarray(x, dtype=np.float64)
    return np.exp(-((x - x0 - drift * t) ** 2) / (4 * diffusion * t)) / math.sqrt(4 * math.pi * diffusion * t)


def circular_moments(kappa: np.ndarray, center: int) -> tuple[float, float, float]:
    """(total, mean offset, variance) of a profile on a ring, offsets taken in (−n/2, n/2] from
    ``center``; works on the last axis (returns arrays for stacked profiles)."""
    kappa = np.asarray(kappa, dtype=np.float64)
    n = kappa.shape[-1]
    off = (np.arange(n) - center + n // 2) % n - n // 2
    tot = kappa.sum(-1)
    mu = (kappa * off).sum(-1) / tot
    var = (kappa * off**2).sum(-1) / tot - mu**2
    return tot, mu, var


def straight_path_weight(Ds: Sequence[np.ndarray], i: int) -> np.ndarray:
    """w_max after k layers, Π_{l>L−k} (D_l)_ii for k = 0..L [Eqs. 35–36] (cumulative from the top)."""
    d = np.array([np.asarray(D)[i, i] for D in reversed(list(Ds))])
    return np.concatenate([[1.0], np.cumprod(d)])


# ------------------------------------------------------------------------------------------------
# Random deep 1-D convolutional networks (torch): input gradients vs the capacity network
# ------------------------------------------------------------------------------------------------
NET_ACTIVATIONS: tuple[str, ...] = ("relu", "pseudo_random", "linear")
ARCHS: tuple[str, ...] = ("plain", "residual")


def _act_torch(name: str, z: Any, unit_seed: Any) -> Any:
    import torch

    if name == "relu":
        return math.sqrt(2.0) * torch.relu(z)  # η ∈ {0, √2}: α² + β² = 2 (Eq. 12)
    if name == "linear":
        return z
    with torch.no_grad():
        e = pseudo_random_sign(z, unit_seed)
    return e * z  # f(z) = η(z)·z, gradient η(z) (η piecewise constant)


def _circ_conv(x: Any, W: Any) -> Any:
    import torch.nn.functional as F

    k = W.shape[-1]
    return F.conv1d(F.pad(x, (k // 2, k // 2), mode="circular"), W)


def conv_net_gradients(
    *,
    arch: str,
    activation: str,
    depth: int,
    channels: int,
    length: int,
    n_inputs: int,
    n_nets: int,
    seed: int,
    res_scale: float = 1.0,
    kernel: int = 3,
    batch: int = 256,
    device: str = "cpu",
) -> dict[str, np.ndarray]:
    """Mean squared input-gradient of one output unit of random 1-D conv nets, and its prediction.

    Networks (circular padding, no bias, weights N(0, 1/(kernel·channels))):
    plain  x_l = f(W_l * x_{l−1}) for l < L and x_L = W_L * x_{L−1} (linear read-out);
    residual  x_l = x_{l−1} + s·W_l * f(x_{l−1}) (s = ``res_scale``).
    f is √2·ReLU, the pseudo-random f(z) = η(z)z (±1 hash per unit) or linear. Inputs x_0 ~ N(0, I).
    The output is channel 0 at the central position; its gradient g = ∂y/∂x_0 is taken by autograd.

    Returns per network (axis 0): ``g2`` mean over inputs of Σ_c g², per position; ``g2_se`` its
    standard error; ``pred`` the capacity network D_1⋯D_L(a∘a) summed over channels, with
    D_l = W_l∘W_l (plain) or I + s²·W_l∘W_l (residual), acting backwards like the gradient
    [Eq. 28; "capacities and gradients, two sides of the same coin"]; ``g2_batches`` the per-batch
    means; ``g2_total`` (n_nets, inputs) the total squared gradient Σ_{c,x} g² of every input (i.i.d.
    over inputs for a fixed network: the standard error of its mean has inputs − 1 d.o.f.).
    """
    import torch

    check_choice("arch", arch, ARCHS)
    check_choice("activation", activation, NET_ACTIVATIONS)
    depth, channels, length, n_inputs, n_nets, kernel, batch = (
        check_positive_int(k, v) for k, v in (("depth", depth), ("channels", channels), ("length", length),
                                              ("n_inputs", n_inputs), ("n_nets", n_nets), ("kernel", kernel),
                                              ("batch", batch)))
    s = check_positive("res_scale", res_scale) if arch == "residual" else 0.0
    dev = torch.device(device)
    gen = torch.Generator().manual_seed(int(seed))
    center = length // 2
    nb = max(1, n_inputs // batch)
    G2, SE, PRED, GB, TOT = [], [], [], [], []
    pos = torch.arange(length, device=dev)
    for _ in range(n_nets):
        Ws = [torch.randn(channels, channels, kernel, generator=gen, dtype=torch.float64).to(dev)
              / math.sqrt(kernel * channels) for _ in range(depth)]
        seeds = [((l + 1) * 7919 + torch.arange(channels, device=dev)[:, None] * length + pos[None, :]
                  + int(torch.randint(1 << 30, (1,), generator=gen))) for l in range(depth)]
        sums = torch.zeros(length, dtype=torch.float64, device=dev)
        sq = torch.zeros(length, dtype=torch.float64, device=dev)
        per_batch, per_input = [], []
        for _b in range(nb):
            x0 = torch.randn(batch, channels, length, generator=gen, dtype=torch.float64).to(dev)
            x0.requires_grad_(True)
            x = x0
            for l, W in enumerate(Ws):
                if arch == "plain":
                    x = _circ_conv(x, W)
                    if l < depth - 1:  # linear read-out layer: a deep ReLU unit can be dead on all inputs
                        x = _act_torch(activation, x, seeds[l])
                else:
                    x = x + s * _circ_conv(_act_torch(activation, x, seeds[l]), W)
            (g,) = torch.autograd.grad(x[:, 0, center].sum(), x0)
            v = (g * g).sum(1)  # (batch, length)
            sums += v.sum(0)
            sq += (v * v).sum(0)
            per_batch.append((v.mean(0)).cpu().numpy())
            per_input.append(v.sum(1).detach().cpu().numpy())
        N = nb * batch
        mean = sums / N
        var = (sq / N - mean * mean) * N / (N - 1)
        G2.append(mean.cpu().numpy())
        SE.append((var.clamp(min=0) / N).sqrt().cpu().numpy())
        GB.append(np.stack(per_batch))
        TOT.append(np.concatenate(per_input))
        # capacity network, backwards with squared weights
        v = torch.zeros(1, channels, length, dtype=torch.float64, device=dev)
        v[0, 0, center] = 1.0
        for W in reversed(Ws):
            back = _circ_conv_transpose(v, W * W)
            v = back if arch == "plain" else v + s * s * back
        PRED.append(v[0].sum(0).cpu().numpy())
    return {"g2": np.stack(G2), "g2_se": np.stack(SE), "pred": np.stack(PRED), "g2_batches": np.stack(GB),
            "g2_total": np.stack(TOT)}


def _circ_conv_transpose(v: Any, W: Any) -> Any:
    """Adjoint of :func:`_circ_conv` (the backward map of a circular convolution)."""
    import torch.nn.functional as F

    k = W.shape[-1]
    p = k // 2
    # adjoint of circular conv = circular correlation with flipped, transposed kernel
    return F.conv1d(F.pad(v, (p, p), mode="circular"), W.flip(-1).transpose(0, 1))


def expected_conv_variance_per_layer(arch: str, res_scale: float = 1.0, kernel: int = 3) -> float:
    """Variance added per layer to the normalised expected capacity/gradient profile.

    Expected D = E[W∘W] spreads uniformly over the kernel's taps (variance (k²−1)/12 per layer for
    odd k); residual D = I + s²·E[W∘W] stays with probability 1/(1+s²)."""
    base = (kernel * kernel - 1) / 12.0
    if arch == "plain":
        return base
    s2 = res_scale**2
    return base * s2 / (1 + s2)


def shattering_gradients(
    *,
    arch: str,
    depth: int,
    width: int,
    n_points: int,
    n_nets: int,
    seed: int,
    res_scale: float = 1.0,
    bias_std: float = 0.1,
    x_range: float = 2.0,
) -> dict[str, np.ndarray]:
    """Gradients df/dx of random fully-connected √2·ReLU nets of a scalar input on a grid of
    ``n_points`` in [−x_range, x_range] (Balduzzi et al. 2017), and their lag-1 correlation.

    Layer 1: h = √2·relu(w x + b), w, b ~ N(0, 1).  Then ``depth`` layers, W ~ N(0, 1/width),
    b ~ N(0, bias_std²): plain h ← √2·relu(W h + b); residual h ← h + s·(W √2·relu(h) + b).
    Output f = aᵀh/√width.  Returns ``grads`` (n_nets, n_points) and ``corr`` (n_nets,) the
    correlation between g(x_k) and g(x_{k+1}) over k.
    """
    import torch

    check_choice("arch", arch, ARCHS)
    depth, width, n_points, n_nets = (check_positive_int(k, v) for k, v in
                                       (("depth", depth), ("width", width), ("n_points", n_points), ("n_nets", n_nets)))
    s = check_positive("res_scale", res_scale)
    gen = torch.Generator().manual_seed(int(seed))
    xs = torch.linspace(-x_range, x_range, n_points, dtype=torch.float64)
    G, C = [], []
    r2 = math.sqrt(2.0)
    for _ in range(n_nets):
        x = xs.clone().requires_grad_(True)
        w1 = torch.randn(width, generator=gen, dtype=torch.float64)
        b1 = torch.randn(width, generator=gen, dtype=torch.float64)
        h = r2 * torch.relu(x[:, None] * w1 + b1)
        for _l in range(depth):
            W = torch.randn(width, width, generator=gen, dtype=torch.float64) / math.sqrt(width)
            b = bias_std * torch.randn(width, generator=gen, dtype=torch.float64)
            if arch == "plain":
                h = r2 * torch.relu(h @ W.T + b)
            else:
                h = h + s * (r2 * torch.relu(h) @ W.T + b)
        a = torch.randn(width, generator=gen, dtype=torch.float64)
        (g,) = torch.autograd.grad((h @ a).sum() / math.sqrt(width), x)
        g = g.numpy()
        G.append(g)
        C.append(np.corrcoef(g[:-1], g[1:])[0, 1] if g.std() > 0 else 1.0)
    return {"grads": np.stack(G), "corr": np.array(C)}


# ------------------------------------------------------------------------------------------------
# The runs of chapters 1–2: each loop behind a figure or a claim, called through Chapter.cached_call
# ------------------------------------------------------------------------------------------------
# The chapter's random streams (one derivation for the whole book: layerwise.seeds).
stream = _seeds.stream
stream_seed = _seeds.torch_seed


def activation_label(name: str, slope: float | None = None) -> str:
    """How the figures name an activation ("leaky ReLU a=0.2", "pseudo-random", …)."""
    return f"leaky ReLU a={slope}" if name == "leaky_relu" else name.replace("_", "-")


def nu_table(*, cases: Sequence[Sequence[Any]], n: int, m: int, n_samples: int, seed: int) -> dict[str, np.ndarray]:
    """:func:`nu_monte_carlo` for every (activation, slope) of ``cases``, stream ("nu", k).

    Returns ``table`` (cases, 5): ν, its SE, the diagonal ratio, its SE, and ν of Eq. 13."""
    rows = []
    for k, (name, slope) in enumerate(cases):
        r = nu_monte_carlo(name, n=n, m=m, n_samples=n_samples, rng=stream(seed, "nu", k), slope=slope)
        rows.append([r["nu"], r["se"], r["diag"], r["diag_se"], nu_closed_form(name, slope)])
    return {"table": np.array(rows)}


def banded_covariance(n: int, rho: float) -> np.ndarray:
    """Σ_kl = ρ^|k−l| (the correlated inputs of the Fig. 3 heat-maps)."""
    return rho ** np.abs(np.subtract.outer(np.arange(n), np.arange(n)))


def augmented_covariance_heatmaps(
    *, cases: Sequence[Sequence[Any]], n: int, m: int, rho: float, n_samples: int, seed: int
) -> dict[str, np.ndarray]:
    """:func:`augmented_covariance_mc` of Σ = :func:`banded_covariance` (n, ρ) for every case,
    stream ("heat", k), unit seeds 100k + (0..m−1). Returns ``S_k``, ``off_k`` and ``Sigma``."""
    Sigma = banded_covariance(n, rho)
    out = {}
    for k, (name, slope) in enumerate(cases):
        r = augmented_covariance_mc(name, Sigma, m=m, n_samples=n_samples, rng=stream(seed, "heat", k),
                                    slope=slope, unit_seeds=np.arange(m) + 100 * k)
        out[f"S_{k}"] = r["S"]
        out[f"off_{k}"] = r["off"]
    out["Sigma"] = Sigma
    return out


def footnote3_table(*, cases: Sequence[Sequence[Any]], ns: Sequence[int], n_samples: int, seed: int) -> dict[str, np.ndarray]:
    """:func:`footnote3_error_mc` for every case and input dimension, stream ("fn3", k, j).

    Returns ``rows_k`` (len(ns), 4): n, the squared error, its SE, and the squared closed form."""
    out = {}
    for k, (name, slope) in enumerate(cases):
        rows = []
        for j, n in enumerate(ns):
            r = footnote3_error_mc(name, n=n, n_samples=n_samples, rng=stream(seed, "fn3", k, j), slope=slope)
            rows.append([n, r["err2"], r["err2_se"], footnote3_error_closed_form(name, n, slope) ** 2])
        out[f"rows_{k}"] = np.array(rows)
    return out


def footnote3_pooled_ratio(rows: np.ndarray, n_batches: int = 10) -> tuple[float, float, float]:
    """Measured/closed-form ratio of the squared footnote-3 error pooled over n (rows of
    :func:`footnote3_table`): inverse-variance mean, its SE and Welch–Satterthwaite d.o.f., each n
    with ``n_batches`` − 1 d.o.f."""
    from .stats import inverse_variance_mean

    rows = np.asarray(rows, dtype=np.float64)
    return inverse_variance_mean(rows[:, 1] / rows[:, 3], rows[:, 2] / rows[:, 3], n_batches - 1)


def footnote3_opnorm(name: str, slope: float | None = None) -> float:
    """Operator norm (β−α)²/(2π) of the footnote-3 deviation (E ηz)²(p_ip_jᵀ + p_jp_iᵀ), at every n."""
    a, b = eta_levels(name, slope)
    return (b - a) ** 2 / (2 * math.pi)


def pseudo_random_layer_capacities(
    *, n: int, m: int, p: int, sizes: Sequence[int], reps: int, seed: int
) -> dict[str, np.ndarray]:
    """Capacities of a pseudo-random layer: Eq. 25 and from empirical augmented covariances.

    P (n × m unit columns) and J (m × p) from stream ("pseudo_random_layer"); κ^φ of J; κ = (P∘P)κ^φ
    (``kappa_eq25``); for every sample size N and replicate b, Y ~ N(0, I) from stream ("emp", a, b),
    the hashed η with unit seeds 1000(100a + b + 1) + (0..m−1), and
    :func:`empirical_augmented_capacities` (``kappa``, (sizes, reps, n))."""
    rng = stream(seed, "pseudo_random_layer")
    P = random_unit_columns(n, m, rng)
    J = rng.standard_normal((m, p))
    kphi = feature_capacities(J)
    out = np.zeros((len(sizes), reps, n))
    for a, N in enumerate(sizes):
        for b in range(reps):
            r = stream(seed, "emp", a, b)
            Y = r.standard_normal((N, n))
            seeds = np.arange(m) + 1000 * (a * 100 + b + 1)
            E = eta("pseudo_random", Y @ P, unit_seed=seeds[None, :])
            out[a, b] = empirical_augmented_capacities(Y, E, P, J)
    return {"P": P, "J": J, "kappa_phi": kphi, "kappa_eq25": pseudo_random_capacities(P, kphi), "kappa": out}


def capacity_convergence(kappa: np.ndarray, kappa_ref: np.ndarray, sizes: Sequence[int]) -> dict[str, Any]:
    """Distance of empirical capacities (sizes, reps, n) to a reference (n,): ``errors`` (sizes,
    reps), the log-log ``fit`` of error on N over all replicates (:func:`layerwise.stats.linear_fit`),
    and the mean and SE over replicates of the capacities at the largest N (``k_mean``, ``k_se``)."""
    from .stats import linear_fit

    errs = np.linalg.norm(np.asarray(kappa) - kappa_ref, axis=-1)
    sizes = np.array(sizes, float)
    fit = linear_fit(np.repeat(np.log(sizes), errs.shape[1]), np.log(errs).ravel())
    k_mean, k_se = mean_se(np.asarray(kappa)[-1])
    return {"errors": errs, "sizes": sizes, "fit": fit, "k_mean": k_mean, "k_se": k_se}


def smooth_nu_table(
    *, names: Sequence[str], qs: np.ndarray, n: int, m: int, n_samples: int, seed: int
) -> dict[str, np.ndarray]:
    """:func:`nu_monte_carlo` of smooth activations at pre-activation variances ``qs``, stream
    ("smooth", k, j). Returns per name an array (len(qs), 3): q, ν, SE."""
    out = {}
    for k, name in enumerate(names):
        rows = []
        for j, q in enumerate(qs):
            r = nu_monte_carlo(name, n=n, m=m, n_samples=n_samples, q=float(q), rng=stream(seed, "smooth", k, j))
            rows.append([q, r["nu"], r["se"]])
        out[name] = np.array(rows)
    return out


def nu_smooth_curve(name: str, qs: Sequence[float]) -> np.ndarray:
    """ν(f; q) of :func:`nu_smooth` on a grid of q."""
    return np.array([nu_smooth(name, q) for q in qs])


def q_at_nu(name: str, target: float, log10_lo: float = 0.0, log10_hi: float = 4.0) -> float:
    """The pre-activation variance q at which ν(f; q) = ``target`` (root in log₁₀ q, Brent)."""
    from scipy.optimize import brentq

    return 10.0 ** brentq(lambda lq: nu_smooth(name, 10.0**lq) - target, log10_lo, log10_hi)


# -- chapter 2 ------------------------------------------------------------------------------------
def residual_diffusion_profiles(
    *, ring: int, layers: int, a_lo: float, a_hi: float, envs: int, seed: int
) -> dict[str, np.ndarray]:
    """Capacity profiles of a Dirac at the centre of a ring of ``ring`` units through ``layers``
    random residual layers D_l = I + Δ_l/L (:func:`residual_layer`, a, b ~ U(a_lo, a_hi) per layer
    and position, stream ("env", e)). Returns ``profiles`` (envs, layers + 1, ring) in float32."""
    eps = 1.0 / layers
    prof = np.zeros((envs, layers + 1, ring))
    for e in range(envs):
        r = stream(seed, "env", e)
        Dl = [residual_layer(ring, eps, r.uniform(a_lo, a_hi, ring), r.uniform(a_lo, a_hi, ring))
              for _ in range(layers)]
        prof[e] = capacity_network(Dl, np.eye(ring)[ring // 2])
    return {"profiles": prof.astype(np.float32)}


def walk_excess_kurtosis(p_step: float, steps: int) -> float:
    """Excess kurtosis γ₂ of a lazy lattice walk of ``steps`` steps ±1 with probability ``p_step``
    each: (1/(2p) − 3)/steps."""
    return (2 * p_step - 12 * p_step**2) / (2 * p_step * steps) / (2 * p_step)


def edgeworth_l1(gamma2: float) -> float:
    """L1 size |γ₂|·E|He₄(u)|/24, u ~ N(0, 1), of the leading (kurtosis) Edgeworth correction."""
    from scipy import stats as sps

    return abs(gamma2) / 24 * sps.norm.expect(lambda u: abs(u**4 - 6 * u**2 + 3))


def residual_diffusion_summary(profiles: np.ndarray, diffusion: float) -> dict[str, Any]:
    """What chapter 2 reads from the profiles (envs, L + 1, ring) of :func:`residual_diffusion_profiles`.

    ``mu``, ``var``, ``m2`` (envs, L + 1): circular mean, variance and second moment about the source;
    ``mean_profile``; ``k_avg``: the exact profile of the network-averaged walk (Δ ≡ 𝒟) after L
    layers; ``l1``: its L1 distance to the Gaussian of Eq. 34 at t = 1; ``edge``: the Edgeworth size
    of :func:`edgeworth_l1`; ``slope_net`` per network the fitted slope of m2 over 2𝒟ε per layer;
    ``drift_rel`` the rms final mean position over the final width; ``noise_l1`` the L1 distance of
    the mean final profile to ``k_avg``."""
    from .stats import linear_fit

    envs, L1, ring = profiles.shape
    L, c0 = L1 - 1, ring // 2
    eps = 1.0 / L
    _, mu, var = circular_moments(profiles, c0)
    m2 = var + mu**2
    k_layers = np.arange(L + 1)
    mean_prof = profiles.mean(0)
    x = np.arange(ring)
    k_avg = capacity_network([residual_layer(ring, eps, diffusion, diffusion)] * L, np.eye(ring)[c0])[-1]
    l1 = float(np.abs(k_avg - heat_kernel(x, c0, diffusion, 1.0)).sum())
    edge = edgeworth_l1(walk_excess_kurtosis(eps * diffusion, L))
    slope_net = np.array([linear_fit(k_layers, m2[e])["slope"] for e in range(envs)]) / (2 * diffusion * eps)
    return {"mu": mu, "var": var, "m2": m2, "mean_profile": mean_prof, "k_avg": k_avg, "l1": l1, "edge": edge,
            "slope_net": slope_net, "drift_rel": float(np.sqrt(np.mean(mu[:, -1] ** 2) / np.mean(var[:, -1]))),
            "noise_l1": float(np.abs(mean_prof[-1] - k_avg).sum())}


def erf_gradients(
    *, depths: Sequence[int], channels: int, length: int, inputs: int, nets: int, res_scale: float, seed: int,
    device: str = "cpu",
) -> dict[str, np.ndarray]:
    """:func:`conv_net_gradients` of plain and residual ReLU nets at every depth, torch seed of
    stream ("erf", arch, depth). Returns ``{arch}_{depth}_g2`` and ``{arch}_{depth}_pred``."""
    out = {}
    for arch in ARCHS:
        for d in depths:
            r = conv_net_gradients(arch=arch, activation="relu", depth=d, channels=channels, length=length,
                                   n_inputs=inputs, n_nets=nets, seed=stream_seed(seed, "erf", arch, d),
                                   res_scale=res_scale, device=device)
            out[f"{arch}_{d}_g2"] = r["g2"]
            out[f"{arch}_{d}_pred"] = r["pred"]
    return out


def erf_width_fit(g2_by_depth: Sequence[np.ndarray], depths: Sequence[float]) -> tuple[np.ndarray, Any]:
    """Variances of the mean-squared-gradient profiles (one (nets, length) array per depth, centred
    at length // 2) and the exponent γ of width ∝ depth^γ: one log-log fit of ½ log variance on
    log depth per network, mean and SE over networks. Returns (V (depths, nets), Estimate)."""
    from .stats import estimate, linear_fit

    V = np.array([circular_moments(g, np.shape(g)[-1] // 2)[2] for g in g2_by_depth])
    logd = np.log(np.asarray(depths, float))
    return V, estimate([linear_fit(logd, 0.5 * np.log(V[:, i]))["slope"] for i in range(V.shape[1])])


def pseudo_random_gradients(
    *, depth: int, channels: int, length: int, inputs: int, nets: int, res_scale: float, seed: int,
    device: str = "cpu",
) -> dict[str, np.ndarray]:
    """:func:`conv_net_gradients` of the same plain and residual networks (torch seed of stream
    ("pr", arch)) with pseudo-random and with ReLU activations; keys ``{arch}_{activation}_{key}``."""
    out = {}
    for arch in ARCHS:
        for act in ("pseudo_random", "relu"):
            r = conv_net_gradients(arch=arch, activation=act, depth=depth, channels=channels, length=length,
                                   n_inputs=inputs, n_nets=nets, seed=stream_seed(seed, "pr", arch),
                                   res_scale=res_scale, device=device)
            for k, v in r.items():
                out[f"{arch}_{act}_{k}"] = v
    return out


def gradient_total_ratios(g2_total: np.ndarray, pred: np.ndarray) -> list[Any]:
    """Per network, the mean over inputs (and its SE, inputs − 1 d.o.f.) of the total squared
    gradient over the total of the capacity network, Σ D₁⋯D_L(a∘a)."""
    from .stats import estimate

    return [estimate(g2_total[i] / pred[i].sum()) for i in range(len(pred))]


def largest_deviation_interval(estimates: Sequence[Any], confidence: float) -> tuple[float, float, float]:
    """Interval for max_i |r_i − 1| over networks from per-network estimates r_i (mean, se, dof):
    the hull of the folded intervals |[r_i − 1 ± q·se_i]|, simultaneous at ``confidence`` over the
    networks (Bonferroni, the t quantile of the first estimate's d.o.f.). Returns (lo, hi, max |mean − 1|)."""
    from .claims import quantile

    q = quantile(1 - (1 - confidence) / len(estimates), estimates[0].dof)
    folded = []
    for e in estimates:
        lo, hi = e.mean - 1 - q * e.se, e.mean - 1 + q * e.se
        folded.append((0.0 if lo <= 0 <= hi else min(abs(lo), abs(hi)), max(abs(lo), abs(hi)), abs(e.mean - 1)))
    folded = np.array(folded)
    return float(folded[:, 0].max()), float(folded[:, 1].max()), float(folded[:, 2].max())


def straight_path_curves(depths: Sequence[int], seed: int) -> dict[str, np.ndarray]:
    """w_max after L layers for residual layers I + Δ/L on 5 units (a, b ~ U(0.25, 0.75), stream
    ("wmax", L)) with the exp(Σ εΔ_ii) of Eq. 36, and for uniform plain layers of receptive field 3 and 5."""
    w_res, w_res_pred, w_plain3, w_plain5 = [], [], [], []
    for Lk in depths:
        r = stream(seed, "wmax", int(Lk))
        ab = r.uniform(0.25, 0.75, size=(Lk, 2))
        Dl = [residual_layer(5, 1.0 / Lk, a, b) for a, b in ab]
        w_res.append(straight_path_weight(Dl, 2)[-1])
        w_res_pred.append(math.exp(-(ab.sum(1) / Lk).sum()))
        w_plain3.append(straight_path_weight([stochastic_matrix(np.ones((3, 3)))] * Lk, 1)[-1])
        w_plain5.append(straight_path_weight([stochastic_matrix(np.ones((5, 5)))] * Lk, 2)[-1])
    return {k: np.array(v) for k, v in
            (("w_res", w_res), ("w_res_pred", w_res_pred), ("w_plain3", w_plain3), ("w_plain5", w_plain5))}


def shattering_table(
    *, depths: Sequence[int], width: int, points: int, nets: int, res_scale: float, seed: int
) -> dict[str, np.ndarray]:
    """:func:`shattering_gradients` of plain and residual nets at every depth (torch seed of stream
    ("shatter", arch, depth)). Returns ``{arch}_{depth}_corr`` and the first net's ``{arch}_{depth}_grad0``."""
    out = {}
    for arch in ARCHS:
        for d in depths:
            r = shattering_gradients(arch=arch, depth=d, width=width, n_points=points, n_nets=nets,
                                     seed=stream_seed(seed, "shatter", arch, d), res_scale=res_scale)
            out[f"{arch}_{d}_corr"] = r["corr"]
            out[f"{arch}_{d}_grad0"] = r["grads"][0]
    return out


def welch_difference(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float]:
    """Difference of the means of two independent samples, its standard error and the
    Welch–Satterthwaite degrees of freedom."""
    from .stats import estimate

    ea, eb = estimate(a), estimate(b)
    va, vb = ea.se**2, eb.se**2
    return ea.mean - eb.mean, math.sqrt(va + vb), (va + vb) ** 2 / (va**2 / ea.dof + vb**2 / eb.dof)
