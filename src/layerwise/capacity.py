"""Layer decoupling and capacity allocation through layers (Donier 2019, "Capacity allocation
through neural network layers"; chapter 1 of the book; chapter 2 builds on it in
:mod:`layerwise.diffusion`).

What is implemented, with the paper's equation numbers:

* the rewriting f(z) = η_z z [Eq. 4] and the augmented input Ỹ = (η_1 Y, …, η_m Y) with its
  covariance Σ̃ = E[ỸỸᵀ] [Eqs. 5–6, 8];
* the decoupling scale ν = (α+β)²/4 for η = α·1{z≤0} + β·1{z>0}, α²+β² = 2 [Eqs. 12–13, 15],
  its Monte-Carlo estimator, and the generalisation ν(f; q) = (E η)²/E[η²], z ~ N(0, q), for
  smooth activations computed by quadrature (:mod:`layerwise.gaussian`; beyond the paper);
* the exact finite-n correction to Eq. 13 for orthonormal projections (footnote 3) in two norms,
  Frobenius and along p_j, and the Monte-Carlo of one fixed layer that measures both;
* capacities: the capacity matrix K = Σ·∂A/∂W, orthonormalised (an orthonormal basis of its
  column space, Euclidean inner product), κ(S) = ‖KᵀS‖_F² [Eqs. 9, 16–18]; the pseudo-random rule
  κ = (P∘P) κ^φ [Eqs. 22–25]; capacities from an *empirical* augmented covariance;
* chapter 2's capacity network, its diffusion limit and the real-network experiments are in
  :mod:`layerwise.diffusion`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit, ndtr

from . import gaussian
from .params import ParameterError, check_choice, check_positive, check_positive_int
from .stats import Estimate, mean_se

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


def odd_weight(name: str, slope: float | None = None) -> float:
    """(β+α)/(β−α) for η of Donier's Eq. 12: the weight with which an asymmetric pre-activation law
    enters E[η_iη_j] through η's odd part — η = (β+α)/2 + (β−α)/2·sign z, so
    E[η_iη_j] = ((β+α)/2)² + (β²−α²)/4·(E sign z_i + E sign z_j) + ((β−α)/2)² E[sign z_i sign z_j],
    whose middle term over the arcsin term's scale is (β+α)/(β−α): 0 for the absolute value, 1 for
    ReLU, (1+a)/(1−a) for a leaky ReLU of slope a."""
    alpha, beta = eta_levels(name, slope)
    return float((beta + alpha) / (beta - alpha))


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
    distinct ``unit_seed``) are given by a hash: drawn once, deterministic, zero-mean, unit
    variance. Works on numpy arrays and on torch tensors (``unit_seed`` broadcast against ``z``).
    """
    try:
        import torch  # optional and heavy: only needed when z is a tensor

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
        return ndtr(z)
    if name == "silu":
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
) -> dict[str, Estimate]:
    """Monte-Carlo estimate of ν with its standard error, from samples of a random layer.

    Y ~ N(0, q·I_n) and a fresh P (m unit-norm columns, uniform on the sphere) per sample; z = PᵀY.
    The estimator is the ratio of the off-diagonal to the diagonal blocks of Σ̃ traced over k:

        ν̂ = mean_s[Σ_{i≠j} η_i η_j |Y|²/(m(m−1))] / mean_s[Σ_i η_i² |Y|²/m],

    with a delta-method standard error.  Since p_i is uniform and independent of Y, z_i has the law
    |Y|·u_i with u_i the first coordinate of a uniform unit vector of ℝⁿ (u_i² ~ Beta(1/2, (n−1)/2),
    random sign); this is sampled directly, which is exact and costs O(m) per sample instead of
    O(nm) (``nu_monte_carlo_bruteforce`` draws P explicitly; the tests check they agree).
    For piecewise-constant η this estimator is unbiased for Eq. 13 at every n (E[η_i | Y] is the
    same for every Y); for smooth η it carries an O(1/n) bias.
    Returns Estimates (samples − 1 d.o.f.): ``nu`` and ``diag`` (mean of Σ_i η_i²|Y|²/(m n q), 1 for
    Eq. 12's normalisation).
    """
    check_activation(name)
    n, m, n_samples = (
        check_positive_int(k, v) for k, v in (("n", n), ("m", m), ("n_samples", n_samples))
    )
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
        u = np.sqrt(rng.beta(0.5, (n - 1) / 2.0, size=(b, m))) * rng.choice(
            [-1.0, 1.0], size=(b, m)
        )
        z = np.sqrt(r2)[:, None] * u
        e = eta(name, z, slope=slope, unit_seed=seeds[None, :])
        s1, s2 = e.sum(1), (e * e).sum(1)
        T.append((s1 * s1 - s2) / (m * (m - 1)) * r2 / (n * q))
        Dg.append(s2 / m * r2 / (n * q))
        done += b
    t, d = np.concatenate(T), np.concatenate(Dg)
    return _ratio_stats(t, d)


def _ratio_stats(t: np.ndarray, d: np.ndarray) -> dict[str, Estimate]:
    N = len(t)
    nu = float(t.mean() / d.mean())
    se = float(mean_se(t - nu * d)[1] / abs(d.mean()))  # delta method for a ratio of means
    d_mean, d_se = mean_se(d)
    return {
        "nu": Estimate(nu, se, N - 1, N),
        "diag": Estimate(float(d_mean), float(d_se), N - 1, N),
    }


def random_unit_columns(n: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """P ∈ ℝ^{n×m} with independent columns uniform on the unit sphere."""
    P = rng.standard_normal((n, m))
    return P / np.linalg.norm(P, axis=0, keepdims=True)


def nu_monte_carlo_bruteforce(
    name: str,
    *,
    n: int,
    m: int,
    n_samples: int,
    rng: np.random.Generator,
    slope: float | None = None,
    q: float = 1.0,
) -> dict[str, Estimate]:
    """The estimator of :func:`nu_monte_carlo` with P drawn explicitly per sample (slow; for
    tests)."""
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
    """ν(f; q) = (E η)² / E[η²], z ~ N(0, q): Eq. 13 with η rescaled to E η² = 1 (beyond the
    paper)."""
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
    name: str,
    Sigma: np.ndarray,
    *,
    m: int,
    n_samples: int,
    rng: np.random.Generator,
    slope: float | None = None,
    n_batches: int = 10,
    unit_seeds: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Empirical Σ̃ of a layer with a *fresh* random P (m unit-norm columns) per sample, Y ~ N(0, Σ)
    — the idealised setting of Eq. 14, in which z_i is symmetric given Y — in ``n_batches`` batches.

    Returns ``S`` (nm × nm, the mean over batches), and per batch the mean diagonal and mean
    off-diagonal block ratios to Σ (:func:`block_ratios`), ``diag`` and ``off`` (n_batches,).
    """
    check_activation(name, PIECEWISE)
    Sigma = np.asarray(Sigma, dtype=np.float64)
    n = Sigma.shape[0]
    m, n_samples, n_batches = (
        check_positive_int(k, v)
        for k, v in (("m", m), ("n_samples", n_samples), ("n_batches", n_batches))
    )
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


def footnote3_direction_closed_form(name: str, slope: float | None = None) -> float:
    """‖(E[η_iη_j YYᵀ] − νI) p_j‖ = (E ηz)² = (β−α)²/(2π) for Y ~ N(0, I_n), p_i ⟂ p_j unit,
    at every n: the deviation (E ηz)²(p_ip_jᵀ + p_jp_iᵀ) maps p_j to (E ηz)² p_i, and this is its
    operator norm."""
    if name == "pseudo_random":
        return 0.0
    al, be = eta_levels(name, slope)
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
    nu = nu_closed_form(name, slope)
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
            e = eta(name, Z, slope=slope, unit_seed=seeds[None, :])
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
    """Orthonormalised capacity matrix of a model linear in its inputs: basis of col(Σ·∂A/∂W) [Eq.
    9]."""
    return orthonormal_basis(np.asarray(Sigma) @ np.asarray(dAdW))


def augment_P(P: np.ndarray) -> np.ndarray:
    """P̃ ∈ ℝ^{nm×m}, block-diagonal with the columns p_i [Eq. 6]."""
    n, m = P.shape
    Pt = np.zeros((n * m, m))
    for i in range(m):
        Pt[i * n : (i + 1) * n, i] = P[:, i]
    return Pt


def augment_subspace(S: np.ndarray, m: int) -> np.ndarray:
    """S̃ = diag(S, …, S) (m blocks) [Eq. 17]; with S = e_i this is S̃_i of Eq. 23."""
    return np.kron(np.eye(m), np.asarray(S, dtype=np.float64))


def linear_layer_capacities(
    Sigma: np.ndarray, P: np.ndarray, J: np.ndarray, S: np.ndarray
) -> tuple[float, float]:
    """(κ̃(S̃), κ(S)) for a linear layer (η ≡ 1) [Eqs. 16–18].

    κ(S) from K = Σ·P·∂A/∂W in the input space; κ̃(S̃) from K̃ = Σ̃·P̃·∂A/∂W with Σ̃ = 11ᵀ⊗Σ [Eq.
    10] in the augmented space.  ``J`` = ∂A/∂W ∈ ℝ^{m×p}.
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


def input_capacities(K: np.ndarray, n: int) -> np.ndarray:
    """κ_i [Eq. 23] of the n inputs from a capacity matrix K̃ (nm × p, or (m_L⋯m_1·n) × p for a
    chain of layers): an orthonormal basis of its columns (Eq. 21), squared rows summed over the
    blocks of input i."""
    return capacity(orthonormal_basis(K)).reshape(-1, n).sum(0)


def empirical_augmented_capacities(
    Y: np.ndarray, E: np.ndarray, P: np.ndarray, J: np.ndarray
) -> np.ndarray:
    """κ_i [Eq. 23] from the *empirical* augmented covariance of samples (Y, η).

    K̃ = Σ̂̃·P̃·J with Σ̂̃ = mean_s Ỹ_sỸ_sᵀ is formed without Σ̂̃ itself: Ỹ_sᵀP̃ = (η_s ⊙ PᵀY_s)ᵀ,
    so K̃ = mean_s Ỹ_s (η_s ⊙ PᵀY_s)ᵀJ, whose block i is mean_s η_{si} Y_s v_sᵀ.  K̃ is
    orthonormalised (Euclidean basis of its column space) and κ_i sums the squared rows (j, i) over
    blocks j.
    """
    Y, E, P, J = (np.asarray(a, dtype=np.float64) for a in (Y, E, P, J))
    N, n = Y.shape
    m = P.shape[1]
    V = (E * (Y @ P)) @ J  # (N, p)
    Kt = np.einsum("sj,sk,sp->jkp", E, Y, V, optimize=True).reshape(m * n, -1) / N
    return input_capacities(Kt, n)


def activation_label(name: str, slope: float | None = None) -> str:
    """How the figures name an activation ("leaky ReLU a=0.2", "pseudo-random", …)."""
    return f"leaky ReLU a={slope}" if name == "leaky_relu" else name.replace("_", "-")


def banded_covariance(n: int, rho: float) -> np.ndarray:
    """Σ_kl = ρ^|k−l| (the correlated inputs of the Fig. 3 heat-maps)."""
    return rho ** np.abs(np.subtract.outer(np.arange(n), np.arange(n)))


def nu_smooth_curve(name: str, qs: Sequence[float]) -> np.ndarray:
    """ν(f; q) of :func:`nu_smooth` on a grid of q."""
    return np.array([nu_smooth(name, q) for q in qs])


def q_at_nu(name: str, target: float, log10_lo: float = 0.0, log10_hi: float = 4.0) -> float:
    """The pre-activation variance q at which ν(f; q) = ``target`` (root in log₁₀ q, Brent)."""
    return 10.0 ** brentq(lambda lq: nu_smooth(name, 10.0**lq) - target, log10_lo, log10_hi)
