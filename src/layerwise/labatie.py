"""Analysis of the moments of deep networks at initialisation (Labatie 2019, Chapters 3–5).

The moments engine (:mod:`layerwise.moments`) propagates a signal and its first-order noise
through many random networks and records, for each network and each recorded layer, moments of
signal and noise at several locations inside the layer.  This module turns those arrays
(shape ``(n_networks, n_records)``) into the statistics the chapters report:

* Gaussian fits of log-moments and the log-normal bookkeeping of Labatie §5 / Fig. 2
  (:func:`gaussian_fit`, :func:`conservation_defect`);
* drift and diffusion of the log-moments, linear in depth, and the curvature of a variance
  curve (:func:`drift_diffusion`, :func:`variance_curvature`);
* exponential and power-law fits of the normalised sensitivity χ^l (:func:`exp_fit`,
  :func:`power_fit`) and the exponent predicted by Theorem 4 / Eq. 15 (:func:`tau_prediction`);
* co-activation (pseudo-linearity, §5): the fraction of units that are always on or always off
  over the data (:func:`coactivation_fraction`, :func:`vanilla_coactivation`, the latter a small
  torch forward pass of its own, since the engine records moments, not activation patterns);
* the curves of Labatie's Figs. 4–5 as functions of the moments (:func:`bn_ff_panels`,
  :func:`bn_res_panels`).

General statistics (means with standard errors, the bootstrap, rank correlations, distances to a
Gaussian, least-squares fits) live in :mod:`layerwise.stats`; the engine runs through the store
with :meth:`layerwise.chapter.Chapter.simulate_moments`; the chapters' studies (drivers, summaries,
comparisons with the authors' arrays) in :mod:`layerwise.studies.ch03`, ``ch04`` and ``ch05``.

Every error bar is a standard error over *independent random networks* (axis 0): the layers of
one network are strongly correlated, the networks are not.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import stats

from . import data
from .params import ParameterError, check_positive_int
from .stats import bootstrap, estimate, line_r2_rows, linear_fit, mean_se, summary

#: Gaussian reference values used in Chapters 4–5: kurtosis μ₄/μ₂² and E|z| for z ~ N(0, 1).
GAUSS_KURTOSIS = 3.0
GAUSS_ABS_MEAN = math.sqrt(2.0 / math.pi)

#: Var[log ν₂] gained per layer by a single input through a fully-connected ReLU layer with He
#: weights, to first order in 1/N:  ν₂' / ν₂ = (2/N) Σ_i relu(g_i)², g_i ~ N(0, 1) i.i.d., whose
#: variance is 4/N · Var[relu(g)²] = 4/N · (3/2 − 1/4) = 5/N (Hanin & Rolnick 2018).
SINGLE_INPUT_DIFFUSION_TIMES_N = 5.0


# ---------------------------------------------------------------------------------------------
# Gaussian fits of log-moments (Labatie §5, Fig. 2)
# ---------------------------------------------------------------------------------------------
def gaussian_fit(samples: Any) -> dict[str, float]:
    """Fit N(μ, σ²) to a 1-D sample and measure how Gaussian it is.

    Returns the maximum-likelihood-style moments ``mu``, ``var`` (ddof=1), ``sigma``, their
    standard errors (``se_mu`` = σ/√n, ``se_var`` from the sample fourth moment), the skewness and
    excess kurtosis with their large-sample Gaussian standard errors √(6/n) and √(24/n), and the
    Kolmogorov–Smirnov distance to the fitted Gaussian with its p-value (approximate, since the
    parameters were fitted).
    """
    x = np.asarray(samples, dtype=np.float64).ravel()
    x = x[np.isfinite(x)]
    n = x.size
    if n < 4:
        raise ParameterError(f"gaussian_fit needs at least 4 finite samples, got {n}")
    mu = float(x.mean())
    var = float(x.var(ddof=1))
    c = x - mu
    m4 = float(np.mean(c**4))
    sigma = math.sqrt(var)
    ks = stats.kstest(x, "norm", args=(mu, sigma)) if sigma > 0 else None
    return {
        "mu": mu,
        "var": var,
        "sigma": sigma,
        "se_mu": sigma / math.sqrt(n),
        "se_var": math.sqrt(max(m4 - var**2, 0.0) / n),
        "skew": float(stats.skew(x)),
        "excess_kurtosis": float(stats.kurtosis(x)),
        "se_skew": math.sqrt(6.0 / n),
        "se_kurtosis": math.sqrt(24.0 / n),
        "ks": float(ks.statistic) if ks else float("nan"),
        "ks_p": float(ks.pvalue) if ks else float("nan"),
        "n": n,
    }


def conservation_defect(samples: Any) -> tuple[float, float]:
    """``mean + var/2`` of a log-moment sample and its standard error (delta method).

    If ``log(ν/ν⁰)`` is Gaussian and ``E[ν] = ν⁰`` (conservation, Labatie §5), then
    E[log] = −Var[log]/2, so the returned defect is 0.  With central moments m₂, m₃, m₄ of the
    sample, Var[mean] = m₂/n, Var[s²] ≈ (m₄ − m₂²)/n, Cov[mean, s²] ≈ m₃/n, hence
    Var[mean + s²/2] ≈ (m₂ + m₃ + (m₄ − m₂²)/4)/n.
    """
    x = np.asarray(samples, dtype=np.float64).ravel()
    x = x[np.isfinite(x)]
    n = x.size
    if n < 4:
        raise ParameterError(f"conservation_defect needs at least 4 finite samples, got {n}")
    c = x - x.mean()
    m2, m3, m4 = (float(np.mean(c**k)) for k in (2, 3, 4))
    d = float(x.mean() + x.var(ddof=1) / 2)
    v = (m2 + m3 + (m4 - m2**2) / 4) / n
    return d, math.sqrt(max(v, 0.0))


def drift_diffusion(depth: Any, logs: Any, *, n_boot: int = 200, seed: int = 0) -> dict[str, Any]:
    """Drift and diffusion of a log-moment across networks (Labatie §5, Theorem 1).

    ``logs[i, r]`` is log(m^l / m⁰) of network i at depth ``depth[r]`` (l > 0).  Across networks,
    the mean should fall linearly in depth (the drift, a slope through the origin since the log
    ratio is 0 at l = 0) and the variance should grow linearly (the diffusion).  Also returned:
    the curvature test and bootstrap-over-networks standard errors of every slope.

    The curvature is the quadratic term c of a fit b·l + c·l², taken at the deepest depth relative
    to the straight line through the origin: c·l_max² / (D·l_max) = c·l_max/D, with D the slope
    through the origin (the drift or the diffusion itself).  It is 0 for a straight line and
    ``ballistic`` (returned) for a variance ∝ l² (a fixed rate per network).  Dividing by D, not by
    the fitted b: with a few depths b and c are strongly anti-correlated, and a resample where b
    crosses 0 makes c/b explode (−238 with an interval −445…−31 from 48 networks), while D is the
    well-determined diffusion itself.
    """
    depth = np.asarray(depth, dtype=np.float64)
    logs = np.asarray(logs, dtype=np.float64)
    if logs.ndim != 2 or logs.shape[1] != depth.size:
        raise ParameterError("drift_diffusion: logs must be (n_networks, len(depth))")

    def slopes(L: np.ndarray) -> np.ndarray:
        m = np.nanmean(L, axis=0)
        v = np.nanvar(L, axis=0, ddof=1)
        b_m = float(depth @ m / (depth @ depth))
        b_v = float(depth @ v / (depth @ depth))
        # curvature: fit v = b l + c l² ; report c·l_max / b (0 for a straight line)
        X = np.stack([depth, depth**2], axis=1)
        (_, c1), *_ = np.linalg.lstsq(X, v, rcond=None)
        (_, c2), *_ = np.linalg.lstsq(X, m, rcond=None)
        return np.array([b_m, b_v, c1 * lmax / b_v, c2 * lmax / b_m])

    lmax = depth.max()
    # a pure l² law, v = a·l²: c = a and D = a·Σl³/Σl², so c·l_max/D = l_max·Σl²/Σl³
    ballistic = float(lmax * (depth @ depth) / np.sum(depth**3))

    val, se = bootstrap(slopes, [logs], n_boot=n_boot, seed=seed)
    m, se_m = mean_se(logs)
    return {
        "depth": depth,
        "mean": m,
        "se_mean": se_m,
        "var": np.nanvar(logs, axis=0, ddof=1),
        "drift": float(val[0]),
        "se_drift": float(se[0]),
        "diffusion": float(val[1]),
        "se_diffusion": float(se[1]),
        "curvature_var": float(val[2]),
        "se_curvature_var": float(se[2]),
        "curvature_mean": float(val[3]),
        "se_curvature_mean": float(se[3]),
        "ballistic": ballistic,
    }


def variance_curvature(depth: Any, var: Any) -> float:
    """The curvature of :func:`drift_diffusion` for a variance curve ``var`` at ``depth``: the
    quadratic term c of a fit b·l + c·l², times l_max, over the slope D through the origin (0 for a
    line, l_max·Σl²/Σl³ for var ∝ l²)."""
    d, v = np.asarray(depth, dtype=float), np.asarray(var, dtype=float)
    (_, c), *_ = np.linalg.lstsq(np.stack([d, d**2], axis=1), v, rcond=None)
    return float(c * d.max() / (d @ v / (d @ d)))


# ---------------------------------------------------------------------------------------------
# Normalised sensitivity χ: increments, exponential and power-law fits, Theorem 4
# ---------------------------------------------------------------------------------------------
def increments(chi: Any) -> np.ndarray:
    """Geometric increments δχ^l = χ^l / χ^{l−1} along the last axis."""
    chi = np.asarray(chi, dtype=np.float64)
    return chi[..., 1:] / chi[..., :-1]


def layer_increments(chi_in: Any, chi: Any, depth: Any = None) -> np.ndarray:
    """Per-layer increments of χ at each record: ``chi_in`` (networks × 1) is χ entering the first
    recorded layer, ``chi`` (networks × R) χ at the records.  With records g > 1 layers apart
    (``depth`` given), the geometric mean over the gap, (χ^l/χ^{l−g})^{1/g}; the first record's gap
    is one layer (χ entering layer l₀ is χ after layer l₀ − 1)."""
    inc = increments(
        np.concatenate(
            [np.asarray(chi_in, dtype=np.float64), np.asarray(chi, dtype=np.float64)], axis=1
        )
    )
    if depth is None:
        return inc
    d = np.asarray(depth)
    gaps = np.diff(np.concatenate([[d[0] - 1], d])).astype(float)
    return inc ** (1.0 / gaps)


def _per_network_fit(x: np.ndarray, Y: np.ndarray) -> np.ndarray:
    X = np.stack([np.ones_like(x), x], axis=1)
    beta, *_ = np.linalg.lstsq(X, Y.T, rcond=None)
    return beta  # (2, n_networks)


def exp_fit(depth: Any, chi: Any, l_min: float = 0.0) -> dict[str, Any]:
    """Fit log χ^l = a + r·l per network over depth ≥ ``l_min`` (exponential growth, Labatie §6).

    Returns the mean rate ``rate`` with its standard error over networks, the implied mean
    per-layer increment exp(rate), the R² of the fit to the network-averaged log χ, and the
    per-network rates.
    """
    depth = np.asarray(depth, dtype=np.float64)
    logc = np.log(np.asarray(chi, dtype=np.float64))
    sel = depth >= l_min
    beta = _per_network_fit(depth[sel], logc[:, sel])
    rate = summary(beta[1])
    fit = linear_fit(depth[sel], np.nanmean(logc[:, sel], axis=0))
    return {
        "rate": rate["mean"],
        "se_rate": rate["se"],
        "std_rate": rate["std"],
        "increment": math.exp(rate["mean"]),
        "intercept": float(np.mean(beta[0])),
        "r2": fit["r2"],
        "rates": beta[1],
    }


def growth_law_r2(depth: Any, chi: Any, l_min: float = 1.0) -> dict[str, Any]:
    """How well each growth law describes each network's log χ^l over depth ≥ ``l_min``: the R² of a
    line in l (exponential growth, Labatie §6 Theorem 3) and in log l (a power law, §7 Theorem 4),
    each as an :class:`~layerwise.stats.Estimate` over networks (``exponential``, ``power``)."""
    depth = np.asarray(depth, dtype=np.float64)
    sel = depth >= max(float(l_min), np.finfo(float).tiny)
    logc = np.log(np.asarray(chi, dtype=np.float64))[:, sel]
    return {
        "exponential": estimate(line_r2_rows(depth[sel], logc)),
        "power": estimate(line_r2_rows(np.log(depth[sel]), logc)),
    }


def power_fit(depth: Any, chi: Any, l_min: float = 1.0) -> dict[str, Any]:
    """Fit log χ^l = a + τ·log l per network over depth ≥ ``l_min`` (power law, Labatie §7)."""
    depth = np.asarray(depth, dtype=np.float64)
    if l_min <= 0:
        raise ParameterError(f"l_min={l_min} must be > 0 for a log-log fit")
    logc = np.log(np.asarray(chi, dtype=np.float64))
    sel = depth >= l_min
    beta = _per_network_fit(np.log(depth[sel]), logc[:, sel])
    tau = summary(beta[1])
    fit = linear_fit(np.log(depth[sel]), np.nanmean(logc[:, sel], axis=0))
    return {
        "tau": tau["mean"],
        "se_tau": tau["se"],
        "std_tau": tau["std"],
        "intercept": float(np.mean(beta[0])),
        "r2": fit["r2"],
        "taus": beta[1],
    }


def tau_prediction(delta: Any, res_depth: int) -> tuple[float, float]:
    """Power-law exponent of Theorem 4 / Eq. 15 from the feedforward increment inside units.

    τ = ((E δχ)^{2·res_depth} − 1) / 2, where E δχ is the mean per-layer increment of χ inside
    residual units (averaged over units and networks).  ``delta`` is (n_networks, n_units); the
    standard error propagates the error of the mean over networks by the delta method,
    dτ/dm = res_depth · m^{2·res_depth − 1}.
    """
    res_depth = check_positive_int("res_depth", res_depth)
    d = np.asarray(delta, dtype=np.float64)
    per_net = np.nanmean(d.reshape(d.shape[0], -1), axis=1)
    m, se = mean_se(per_net)
    m, se = float(m), float(se)
    tau = (m ** (2 * res_depth) - 1.0) / 2.0
    return tau, res_depth * m ** (2 * res_depth - 1) * se


def r2_pair(depth: Any, logchi_mean: Any, l_min: float = 1.0) -> dict[str, float]:
    """R² of log χ against l (exponential law) and against log l (power law), over l ≥ l_min."""
    depth = np.asarray(depth, dtype=np.float64)
    y = np.asarray(logchi_mean, dtype=np.float64)
    sel = depth >= l_min
    return {
        "r2_linear_in_l": linear_fit(depth[sel], y[sel])["r2"],
        "r2_linear_in_log_l": linear_fit(np.log(depth[sel]), y[sel])["r2"],
    }


def r2_bootstrap(
    depth: Any,
    chi: Any,
    l_min: float = 1.0,
    *,
    n_boot: int = 400,
    confidence: float = 0.99,
    seed: int = 0,
) -> dict[str, Any]:
    """:func:`r2_pair` of the network-averaged log χ (``chi``: networks × records) with
    network-bootstrap
    percentile intervals at ``confidence``: ``r2_l``, ``r2_log`` (values) and ``ci_l``, ``ci_log``,
    ``diff`` = r2_log − r2_l with ``ci_diff``.  One network: point values, intervals None."""
    logc = np.log(np.asarray(chi, dtype=np.float64))
    n_boot = check_positive_int("n_boot", n_boot)

    def pair(lc: np.ndarray) -> np.ndarray:
        r = r2_pair(depth, lc.mean(0), l_min=l_min)
        return np.array([r["r2_linear_in_l"], r["r2_linear_in_log_l"]])

    val = pair(logc)
    out: dict[str, Any] = {
        "r2_l": float(val[0]),
        "r2_log": float(val[1]),
        "diff": float(val[1] - val[0]),
        "ci_l": None,
        "ci_log": None,
        "ci_diff": None,
    }
    n = logc.shape[0]
    if n < 2:
        return out
    rng = np.random.default_rng(seed)
    reps = np.array([pair(logc[rng.integers(0, n, n)]) for _ in range(n_boot)])
    a = (1.0 - confidence) / 2.0
    for key, r in (
        ("ci_l", reps[:, 0]),
        ("ci_log", reps[:, 1]),
        ("ci_diff", reps[:, 1] - reps[:, 0]),
    ):
        lo, hi = np.quantile(r, [a, 1.0 - a])
        out[key] = (float(lo), float(hi))
    return out


# ---------------------------------------------------------------------------------------------
# Co-activation / pseudo-linearity (Labatie §5)
# ---------------------------------------------------------------------------------------------
def activation_rates(z: Any) -> np.ndarray:
    """Fraction of data points (batch × positions) on which each unit is active (z > 0).

    ``z`` is (..., samples, units): the rates have shape (..., units).
    """
    z = np.asarray(z)
    return (z > 0).mean(axis=-2)


def coactivation_fraction(rates: Any, tol: float = 0.0) -> np.ndarray:
    """Fraction of units whose activation rate is ≤ tol or ≥ 1 − tol (always off or always on)."""
    p = np.asarray(rates, dtype=np.float64)
    return ((p <= tol) | (p >= 1.0 - tol)).mean(axis=-1)


def linearity_index(rates: Any) -> np.ndarray:
    """1 − 4·mean p(1 − p): 1 when every unit is always on/off (the layer is linear on the data),
    0 when every unit is active on exactly half the data (the ReLU is maximally non-linear)."""
    p = np.asarray(rates, dtype=np.float64)
    return 1.0 - 4.0 * (p * (1.0 - p)).mean(axis=-1)


def input_batch(dataset: str, batch: int, seed: int) -> np.ndarray:
    """A standardised input batch (B, C, H, W) as in Labatie App. A, from :mod:`layerwise.data`."""
    if dataset == "patches":
        x = data.natural_patches(batch, seed=seed)
    elif dataset == "digits":
        x, _ = data.digits(batch, seed=seed)
    elif dataset == "gaussian":
        x = data.gaussian_images(batch, seed=seed)
    else:
        raise ParameterError(
            f"dataset={dataset!r} is not allowed; choose 'patches', 'digits' or 'gaussian'"
        )
    return data.standardize_per_channel(x)


def vanilla_coactivation(
    *,
    kernel_size: int,
    width: int,
    batch: int,
    depth: int,
    n_nets: int,
    dataset: str = "patches",
    record_every: int = 1,
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """Activation rates of every unit of random vanilla ReLU nets (Labatie §5, co-activation).

    The set-up is the engine's (SPEC §2 / Labatie App. A): a standardised input batch, a first
    random layer N(0, 1/fan_in) to ``width`` channels (dense for ``kernel_size=1``, otherwise a
    k×k stride-2 convolution, periodic), then ``depth`` He-initialised layers z = W*x, x' = relu(z)
    (k×k periodic convolutions or dense).  A unit is a channel; its rate is the fraction of
    (image, position) pairs where z > 0.  Returns ``depth`` (recorded layers), ``coactive``
    (n_nets, R) fraction of always-on/off units, ``linearity`` (n_nets, R) :func:`linearity_index`.
    """
    # torch is imported here, not at the top: the rest of this module is numpy only
    import torch
    import torch.nn.functional as F

    for name, v in (
        ("kernel_size", kernel_size),
        ("width", width),
        ("batch", batch),
        ("depth", depth),
        ("n_nets", n_nets),
        ("record_every", record_every),
    ):
        check_positive_int(name, v)
    if depth % record_every:
        raise ParameterError(f"depth={depth} must be divisible by record_every={record_every}")
    k = kernel_size
    rec = np.arange(record_every, depth + 1, record_every)
    coact = np.zeros((n_nets, rec.size))
    lin = np.zeros((n_nets, rec.size))
    for i in range(n_nets):
        g = torch.Generator().manual_seed(int(seed) * 1_000_003 + i)
        x = torch.from_numpy(input_batch(dataset, batch, seed * 1_000_003 + i)).double()
        if k == 1:
            x = x.reshape(batch, -1)
            W = torch.randn(x.shape[1], width, generator=g, dtype=torch.float64) / math.sqrt(
                x.shape[1]
            )
            h = x @ W
        else:
            c0 = x.shape[1]
            W = torch.randn(width, c0, k, k, generator=g, dtype=torch.float64) / math.sqrt(
                c0 * k * k
            )
            p = k // 2
            h = F.conv2d(F.pad(x, (p, p, p, p), mode="circular"), W, stride=2)
        j = 0
        for l in range(1, depth + 1):
            if k == 1:
                W = torch.randn(width, width, generator=g, dtype=torch.float64) * math.sqrt(
                    2.0 / width
                )
                z = h @ W
                zs = z
            else:
                W = torch.randn(width, width, k, k, generator=g, dtype=torch.float64) * math.sqrt(
                    2.0 / (width * k * k)
                )
                p = k // 2
                z = F.conv2d(F.pad(h, (p, p, p, p), mode="circular"), W)
                zs = z.permute(0, 2, 3, 1).reshape(-1, width)
            h = torch.relu(z)
            if l == rec[j]:
                rates = (zs > 0).double().mean(dim=0).numpy()
                coact[i, j] = coactivation_fraction(rates)
                lin[i, j] = linearity_index(rates)
                j += 1
    return {"depth": rec, "coactive": coact, "linearity": lin}


def power_overlay(
    depth: Any,
    chi: Any,
    delta: Any,
    res_depth: int,
    *,
    l_min: float = 1.0,
    n_boot: int = 400,
    confidence: float = 0.99,
    seed: int = 0,
) -> dict[str, Any]:
    """How well c·l^τ with τ from Eq. 15 describes χ^l — the overlay of Labatie's Fig. 5(b).

    ``chi`` is (n_networks, n_records) at ``depth``; ``delta`` (n_networks, n_units) the feedforward
    increment inside the units, from which :func:`tau_prediction` gives τ.  The centre curve is the
    geometric mean of χ over networks; over depth ≥ ``l_min`` the constant c is fitted by least
    squares in log (the mean of log χ̄ − τ log l), and the relative deviation of the curve from the
    overlay is χ̄ / (c l^τ) − 1.  Returns ``tau``, ``log_c``, ``rel_dev`` (per depth ≥ l_min),
    ``max_dev`` = max |rel_dev| and its network-bootstrap percentile ``interval`` at ``confidence``
    (networks resampled jointly in ``chi`` and ``delta``; τ, c and the curve all refitted), and
    ``exp_max_dev``, the same largest deviation for the best exponential c·e^{r·l} (both constants
    fitted in log): the feedforward law the overlay must beat.
    """
    depth = np.asarray(depth, dtype=np.float64)
    chi = np.asarray(chi, dtype=np.float64)
    delta = np.asarray(delta, dtype=np.float64)
    if chi.ndim != 2 or chi.shape[1] != depth.size or delta.shape[0] != chi.shape[0]:
        raise ParameterError(
            "power_overlay: chi must be (n_networks, len(depth)) and delta (n_networks, …)"
        )
    if l_min <= 0:
        raise ParameterError(f"l_min={l_min} must be > 0 for a power law")
    n_boot = check_positive_int("n_boot", n_boot)
    sel = depth >= l_min
    logl = np.log(depth[sel])

    def fit(c: np.ndarray, dl: np.ndarray) -> tuple[float, float, np.ndarray]:
        m = float(np.mean(dl.reshape(dl.shape[0], -1)))
        tau = (m ** (2 * res_depth) - 1.0) / 2.0
        y = np.mean(np.log(c[:, sel]), axis=0)
        log_c = float(np.mean(y - tau * logl))
        return tau, log_c, np.exp(y - log_c - tau * logl) - 1.0

    tau, log_c, dev = fit(chi, delta)
    y = np.mean(np.log(chi[:, sel]), axis=0)  # the alternative: c·e^{r l}, both fitted in log
    exp_dev = np.exp(y - np.polyval(np.polyfit(depth[sel], y, 1), depth[sel])) - 1.0
    rng = np.random.default_rng(seed)
    n = chi.shape[0]
    reps = np.empty(n_boot)
    for b in range(n_boot):
        idx = rng.integers(0, n, n)
        reps[b] = np.max(np.abs(fit(chi[idx], delta[idx])[2]))
    a = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(reps, [a, 1.0 - a])
    return {
        "tau": tau,
        "log_c": log_c,
        "depth": depth[sel],
        "rel_dev": dev,
        "max_dev": float(np.max(np.abs(dev))),
        "interval": (float(lo), float(hi)),
        "exp_max_dev": float(np.max(np.abs(exp_dev))),
    }


def one_layer_conservation(moment: Any) -> dict[str, float]:
    """Conservation of a second moment in expectation, one layer at a time (Labatie §5, He init).

    ``moment`` is (n_networks, L + 1): a positive moment of every network at layers 0, 1, …, L.
    He initialisation makes E[m^l | layer l − 1] = m^{l−1}, hence E[m^l / m^{l−1}] = 1 at every
    layer and, by the tower property, E[m^l / m^0] = 1 at every depth.  The one-layer ratios have
    small variance (≈ 5/N), so their expectation is measurable from a few networks, whereas the
    sample mean of m^l / m^0 over networks misses the expectation once Var log(m^l/m^0) ≫ log n
    (the fat tail of a log-normal, not visible in a sample of n).

    Returns ``log_mean`` = log of the mean over networks of each network's mean one-layer ratio
    (0 when the expectation is conserved), its delta-method standard error ``se`` over networks
    (the per-network means are independent), ``dof`` = n − 1, and ``n``.
    """
    m = np.asarray(moment, dtype=np.float64)
    if m.ndim != 2 or m.shape[1] < 2:
        raise ParameterError(
            "one_layer_conservation: moment must be (n_networks, L + 1) with L >= 1"
        )
    per_net = np.nanmean(m[:, 1:] / m[:, :-1], axis=1)
    per_net = per_net[np.isfinite(per_net)]
    if per_net.size < 2:
        raise ParameterError("one_layer_conservation needs at least 2 networks with finite ratios")
    mean, se = mean_se(per_net)
    return {
        "log_mean": float(math.log(mean)),
        "se": float(se / mean),
        "dof": int(per_net.size - 1),
        "n": int(per_net.size),
    }


def lognormal_balance(samples: Any, *, n_boot: int = 400, seed: int = 0) -> tuple[float, float]:
    """−2·mean/variance of a log-moment sample and its bootstrap standard error over networks.

    For a log-normal moment ratio with conserved expectation, E[log] = −Var[log]/2 (Labatie §5:
    the downward drift of the mean and the growth of the variance are "opposing forces"), so the
    balance is 1; it is 2 when the mean falls as fast as the whole variance, 0 without drift.
    """
    x = np.asarray(samples, dtype=np.float64).ravel()
    x = x[np.isfinite(x)]
    if x.size < 4:
        raise ParameterError(f"lognormal_balance needs at least 4 finite samples, got {x.size}")

    def bal(a: np.ndarray) -> float:
        return -2.0 * float(a.mean()) / float(a.var(ddof=1))

    v, se = bootstrap(bal, [x], n_boot=n_boot, seed=seed)
    return float(v), float(se)


# --------------------------------------------------------------------------------------------
# The curves of Labatie's Figs. 4–5 as functions of the engine's moments
# --------------------------------------------------------------------------------------------
def bn_ff_panels(A: Mapping[str, np.ndarray], depth: Any = None) -> dict[str, np.ndarray]:
    """Per-network curves (networks × records) of Labatie's Fig. 4 from the engine arrays of a
    batch-normalised feedforward net (``arch="bn_ff"``; loc1 before the weights, loc3 after BN,
    loc4 after the ReLU).

    ``dchi``: δχ^l = χ^l/χ^{l−1} with χ⁰ = χ(loc1) of the first record; ``dbn`` = χ(loc3)/χ(loc1)
    (convolution + BN step) and ``dphi`` = χ(loc4)/χ(loc3) (ReLU step), whose product is the
    layer's increment; ``chi`` = χ(loc4); ``reff_x``/``reff_dx`` the effective ranks of signal and
    noise after the ReLU; ``kurt_z`` = μ₄/μ₂² and ``nu1_z`` = ν₁(|y|)/√ν₂ of the BN output.
    With the record ``depth`` given and records g > 1 layers apart, ``dchi`` is the per-layer
    geometric mean (χ^l/χ^{l−g})^{1/g} (the first record's gap is one layer: χ(loc1) there is the
    input of that layer).
    """
    chi = A["chi_loc4"]
    return {
        "dchi": layer_increments(A["chi_loc1"][:, :1], chi, depth),
        "dbn": A["chi_loc3"] / A["chi_loc1"],
        "dphi": A["chi_loc4"] / A["chi_loc3"],
        "chi": chi,
        "reff_x": A["reff_signal_loc4"],
        "reff_dx": A["reff_noise_loc4"],
        "kurt_z": A["mu4_signal_loc3"] / A["mu2_signal_loc3"] ** 2,
        "nu1_z": A["nu1_abs_signal_loc3"] / np.sqrt(A["nu2_signal_loc3"]),
    }


def bn_res_panels(A: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Per-network curves of Labatie's Fig. 5 from the engine arrays of a batch-normalised
    pre-activation ResNet (``arch="bn_res"``; loc1 unit input, loc2 first BN, loc3 first ReLU,
    loc4 first weights, loc5 after the addition — the authors' locations, their ``models.py``).

    ``dff`` = χ(loc4)/χ(loc1), the feedforward increment of one layer inside the unit, = ``dbn`` ·
    ``dphi`` · (weights step); ``chi`` = χ(loc5); ``chi_in`` = χ(loc1) at the first record;
    effective ranks after the first ReLU of the unit (loc3, where Fig. 5(c) reads them and the
    only location where the authors' code computes them); kurtosis and ν₁(|y|)/√ν₂ after the
    first BN (loc2, Fig. 5(d)).
    """
    return {
        "dff": A["chi_loc4"] / A["chi_loc1"],
        "dbn": A["chi_loc2"] / A["chi_loc1"],
        "dphi": A["chi_loc3"] / A["chi_loc2"],
        "chi": A["chi_loc5"],
        "chi_in": A["chi_loc1"][:, :1],
        "reff_x": A["reff_signal_loc3"],
        "reff_dx": A["reff_noise_loc3"],
        "kurt_z": A["mu4_signal_loc2"] / A["mu2_signal_loc2"] ** 2,
        "nu1_z": A["nu1_abs_signal_loc2"] / np.sqrt(A["nu2_signal_loc2"]),
    }


def lognormal_skewness(var_log: float) -> float:
    """Skewness of a log-normal variable whose log has variance ``var_log``: (e^{s²} + 2)·√(e^{s²}
    − 1)."""
    e = math.exp(min(float(var_log), 700.0))
    return float((e + 2.0) * math.sqrt(e - 1.0))
