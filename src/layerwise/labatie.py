"""Analysis of the moments of deep networks at initialisation (Labatie 2019, Chapters 3–5).

The moments engine (:mod:`layerwise.moments`) propagates a signal and its first-order noise
through many random networks and records, for each network and each recorded layer, moments of
signal and noise at several locations inside the layer.  This module turns those arrays
(shape ``(n_networks, n_records)``) into the statistics the chapters report:

* Gaussian fits of log-moments and the log-normal bookkeeping of Labatie §5 / Fig. 2
  (:func:`gaussian_fit`, :func:`conservation_defect`);
* drift and diffusion of the log-moments, linear in depth (:func:`drift_diffusion`);
* exponential and power-law fits of the normalised sensitivity χ^l (:func:`exp_fit`,
  :func:`power_fit`) and the exponent predicted by Theorem 4 / Eq. 15 (:func:`tau_prediction`);
* co-activation (pseudo-linearity, §5): the fraction of units that are always on or always off
  over the data (:func:`coactivation_fraction`, :func:`vanilla_coactivation`, the latter a small
  torch forward pass of its own, since the engine records moments, not activation patterns);
* rank correlations with network-bootstrap errors (means with standard errors, the bootstrap and
  least-squares fits themselves live in :mod:`layerwise.stats`).

Every error bar is a standard error over *independent random networks* (axis 0): the layers of
one network are strongly correlated, the networks are not.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .params import ParameterError, check_positive_int
from .stats import bootstrap, linear_fit, mean_se

#: Gaussian reference values used in Chapters 4–5: kurtosis μ₄/μ₂² and E|z| for z ~ N(0, 1).
GAUSS_KURTOSIS = 3.0
GAUSS_ABS_MEAN = math.sqrt(2.0 / math.pi)

#: Var[log ν₂] gained per layer by a single input through a fully-connected ReLU layer with He
#: weights, to first order in 1/N:  ν₂' / ν₂ = (2/N) Σ_i relu(g_i)², g_i ~ N(0, 1) i.i.d., whose
#: variance is 4/N · Var[relu(g)²] = 4/N · (3/2 − 1/4) = 5/N (Hanin & Rolnick 2018).
SINGLE_INPUT_DIFFUSION_TIMES_N = 5.0


# ---------------------------------------------------------------------------------------------
# Summary of a sample of networks (means, standard errors, bootstrap and fits: layerwise.stats)
# ---------------------------------------------------------------------------------------------
def summary(a: Any) -> dict[str, float]:
    """Mean, standard error, spread (std) and 5 %/95 % quantiles of a 1-D sample of networks."""
    a = np.asarray(a, dtype=np.float64).ravel()
    a = a[np.isfinite(a)]
    if a.size == 0:
        raise ParameterError("summary of an empty sample (every value is NaN or inf)")
    m, se = mean_se(a)
    return {
        "mean": float(m),
        "se": float(se),
        "std": float(a.std(ddof=1)) if a.size > 1 else float("nan"),
        "q05": float(np.quantile(a, 0.05)),
        "q95": float(np.quantile(a, 0.95)),
        "n": int(a.size),
    }


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
    from scipy import stats

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


def log_mean_exp(samples: Any) -> tuple[float, float]:
    """log E[exp(x)] of a sample (log of the mean moment ratio) and its delta-method error."""
    x = np.asarray(samples, dtype=np.float64).ravel()
    x = x[np.isfinite(x)]
    mx = x.max()
    e = np.exp(x - mx)
    m, se = mean_se(e)
    return float(mx + math.log(m)), float(se / m)


def drift_diffusion(
    depth: Any, logs: Any, *, n_boot: int = 200, seed: int = 0
) -> dict[str, Any]:
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
    inc = increments(np.concatenate([np.asarray(chi_in, dtype=np.float64), np.asarray(chi, dtype=np.float64)], axis=1))
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
    from .stats import estimate, line_r2_rows

    depth = np.asarray(depth, dtype=np.float64)
    sel = depth >= max(float(l_min), np.finfo(float).tiny)
    logc = np.log(np.asarray(chi, dtype=np.float64))[:, sel]
    return {"exponential": estimate(line_r2_rows(depth[sel], logc)),
            "power": estimate(line_r2_rows(np.log(depth[sel]), logc))}


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


def r2_bootstrap(depth: Any, chi: Any, l_min: float = 1.0, *, n_boot: int = 400, confidence: float = 0.99,
                 seed: int = 0) -> dict[str, Any]:
    """:func:`r2_pair` of the network-averaged log χ (``chi``: networks × records) with network-bootstrap
    percentile intervals at ``confidence``: ``r2_l``, ``r2_log`` (values) and ``ci_l``, ``ci_log``,
    ``diff`` = r2_log − r2_l with ``ci_diff``.  One network: point values, intervals None."""
    logc = np.log(np.asarray(chi, dtype=np.float64))
    n_boot = check_positive_int("n_boot", n_boot)

    def pair(lc: np.ndarray) -> np.ndarray:
        r = r2_pair(depth, lc.mean(0), l_min=l_min)
        return np.array([r["r2_linear_in_l"], r["r2_linear_in_log_l"]])

    val = pair(logc)
    out: dict[str, Any] = {"r2_l": float(val[0]), "r2_log": float(val[1]), "diff": float(val[1] - val[0]),
                           "ci_l": None, "ci_log": None, "ci_diff": None}
    n = logc.shape[0]
    if n < 2:
        return out
    rng = np.random.default_rng(seed)
    reps = np.array([pair(logc[rng.integers(0, n, n)]) for _ in range(n_boot)])
    a = (1.0 - confidence) / 2.0
    for key, r in (("ci_l", reps[:, 0]), ("ci_log", reps[:, 1]), ("ci_diff", reps[:, 1] - reps[:, 0])):
        lo, hi = np.quantile(r, [a, 1.0 - a])
        out[key] = (float(lo), float(hi))
    return out


# ---------------------------------------------------------------------------------------------
# Correlations
# ---------------------------------------------------------------------------------------------
def rank_correlation(x: Any, y: Any, *, n_boot: int = 200, seed: int = 0) -> tuple[float, float]:
    """Spearman correlation of paired (networks × layers) arrays, with a network-bootstrap error.

    ``x`` and ``y`` are (n_networks, n_layers); all pairs are pooled, and the bootstrap resamples
    whole networks so that the error respects the correlation between layers of one network.
    """
    from scipy import stats

    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape:
        raise ParameterError("rank_correlation: x and y need the same shape")

    def rho(a: np.ndarray, b: np.ndarray) -> float:
        a, b = a.ravel(), b.ravel()
        ok = np.isfinite(a) & np.isfinite(b)
        return float(stats.spearmanr(a[ok], b[ok]).statistic)

    v, se = bootstrap(rho, [x, y], n_boot=n_boot, seed=seed)
    return float(v), float(se)


def monotone_trend(x: Any, means: Any, ses: Any) -> dict[str, float]:
    """Weighted slope of ``means`` against log2 ``x`` (e.g. batch size) and its significance z."""
    x = np.log2(np.asarray(x, dtype=np.float64))
    f = linear_fit(x, means, sigma=np.maximum(np.asarray(ses, dtype=np.float64), 1e-300))
    f["z"] = f["slope"] / f["slope_se"] if f["slope_se"] > 0 else float("inf")
    return f


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
    from . import data

    if dataset == "patches":
        x = data.natural_patches(batch, seed=seed)
    elif dataset == "digits":
        x, _ = data.digits(batch, seed=seed)
    elif dataset == "gaussian":
        x = data.gaussian_images(batch, seed=seed)
    else:
        raise ParameterError(f"dataset={dataset!r} is not allowed; choose 'patches', 'digits' or 'gaussian'")
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
    import torch
    import torch.nn.functional as F

    for name, v in (("kernel_size", kernel_size), ("width", width), ("batch", batch), ("depth", depth),
                    ("n_nets", n_nets), ("record_every", record_every)):
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
            W = torch.randn(x.shape[1], width, generator=g, dtype=torch.float64) / math.sqrt(x.shape[1])
            h = x @ W
        else:
            c0 = x.shape[1]
            W = torch.randn(width, c0, k, k, generator=g, dtype=torch.float64) / math.sqrt(c0 * k * k)
            p = k // 2
            h = F.conv2d(F.pad(x, (p, p, p, p), mode="circular"), W, stride=2)
        j = 0
        for l in range(1, depth + 1):
            if k == 1:
                W = torch.randn(width, width, generator=g, dtype=torch.float64) * math.sqrt(2.0 / width)
                z = h @ W
                zs = z
            else:
                W = torch.randn(width, width, k, k, generator=g, dtype=torch.float64) * math.sqrt(2.0 / (width * k * k))
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


# ---------------------------------------------------------------------------------------------
# Helpers for engine output
# ---------------------------------------------------------------------------------------------
def simulate_cached(
    ch: Any, name: str, cfg: Any, *, block: int | None = None, timings: dict[str, float] | None = None
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Run the moments engine for ``cfg`` through the chapter's results store, in resumable blocks.

    ``cfg`` is a :class:`layerwise.moments.MomentsConfig`; networks ``0 .. cfg.n_sims − 1`` are
    simulated in blocks of ``block`` networks (each block cached on its own, so an interrupted run
    resumes).  The device is not part of the cache key: results computed on a GPU can be dropped
    into the store and re-used on a CPU (they are another realisation of the same networks' law,
    not the CPU's numbers: ``"auto"`` picks other exact algorithms there, see ``MomentsConfig``;
    the store's metadata records the device).  The code part of the key is the source of this module
    and of every ``layerwise`` module it imports, the engine :mod:`layerwise.moments` included
    (:func:`layerwise.provenance.code_fingerprint`).  Returns ``(depth, arrays)`` with arrays (n_sims, R);
    the wall time (computing or loading) is recorded in ``timings[name]`` when given.
    """
    import time

    from .moments import simulate

    n = check_positive_int("n_sims", cfg.n_sims)
    block = min(n, check_positive_int("block", block or n))
    n_blocks = -(-n // block)

    def compute(i: int) -> dict[str, np.ndarray]:
        sims = range(i * block, min(n, (i + 1) * block))
        return simulate(cfg, sims=sims, progress=False)

    key = {k: v for k, v in cfg.to_dict().items() if k != "device"}
    key["block"] = block
    t0 = time.perf_counter()
    arrays = ch.cached_blocks(name, key, n_blocks, compute, code=__name__, shared=("depth",))
    if timings is not None:
        timings[name] = time.perf_counter() - t0
    return arrays["depth"], {k: v for k, v in arrays.items() if k != "depth"}


# --------------------------------------------------------------------------------------------
# Statistics that decide claims of Chapters 4–5
# --------------------------------------------------------------------------------------------
def relative_spread(
    values: Any, ses: Any, *, dof: int | None = None, confidence: float = 0.99, n_draw: int = 20000, seed: int = 0
) -> tuple[float, tuple[float, float]]:
    """Relative spread (max − min)/mean of a few estimates and a confidence interval for it.

    ``values`` are independent estimates (e.g. one growth rate per data set) with standard errors
    ``ses``.  The interval is a parametric bootstrap: each value is redrawn as value + se·T (T
    Student's t with ``dof`` degrees of freedom, normal when ``dof`` is None) and the spread
    recomputed; the interval is the central ``confidence`` quantile range of the redrawn spreads.
    It includes the upward bias of a max − min of noisy values, which a delta-method error misses.
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    s = np.asarray(ses, dtype=np.float64).ravel()
    if v.size < 2 or v.shape != s.shape:
        raise ParameterError("relative_spread needs at least 2 values and one standard error per value")
    if not 0 < confidence < 1:
        raise ParameterError(f"confidence={confidence!r} must lie strictly between 0 and 1")
    n_draw = check_positive_int("n_draw", n_draw)
    rng = np.random.default_rng(seed)
    noise = rng.standard_t(dof, size=(n_draw, v.size)) if dof else rng.standard_normal((n_draw, v.size))
    draws = v + s * noise

    def spread(x: np.ndarray) -> np.ndarray:
        return (x.max(axis=-1) - x.min(axis=-1)) / np.abs(x.mean(axis=-1))

    a = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(spread(draws), [a, 1.0 - a])
    return float(spread(v)), (float(lo), float(hi))


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
        raise ParameterError("power_overlay: chi must be (n_networks, len(depth)) and delta (n_networks, …)")
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
    y = np.mean(np.log(chi[:, sel]), axis=0)          # the alternative: c·e^{r l}, both fitted in log
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


# --------------------------------------------------------------------------------------------
# Statistics that decide claims of Chapter 3
# --------------------------------------------------------------------------------------------
def _gauss_cdf_gap(a: Any, b: Any) -> Any:
    """sup_u |Φ(u) − Φ((u + a)/b)|: the Kolmogorov distance between N(0, 1) and N(−a, b²)
    (element-wise over broadcast arrays ``a``, ``b``; on a grid of u with step 0.004)."""
    from scipy.special import ndtr

    u = np.linspace(-8.0, 8.0, 4001)
    a, b = np.asarray(a, dtype=np.float64)[..., None], np.asarray(b, dtype=np.float64)[..., None]
    return np.max(np.abs(ndtr(u) - ndtr((u + a) / b)), axis=-1)


def ks_gaussian_interval(samples: Any, confidence: float = 0.99) -> dict[str, float]:
    """Kolmogorov–Smirnov distance of a sample to its fitted Gaussian, with a confidence interval
    for the distance D of the *population* to the Gaussian of the same mean and variance.

    The sample distance D̂ = sup|F_n − Φ((x − x̄)/s)| is biased upward: a Gaussian population
    (D = 0) gives D̂ ≈ 0.6/√n on average, and a bootstrap over the sample reproduces the bias
    instead of correcting it.  By the triangle inequality |D̂ − D| ≤ sup|F_n − F| + sup|Φ̂ − Φ|, so D lies
    within D̂ ± (ε_DKW + ε_fit), where, splitting α = 1 − confidence in halves (Bonferroni):

    * ε_DKW = √(ln(4/α)/(2n)) bounds sup|F_n − F| with probability ≥ 1 − α/2 (Dvoretzky–Kiefer–
      Wolfowitz inequality with Massart's constant, exact at finite n);
    * ε_fit is the largest Kolmogorov distance between the fitted Gaussian and a Gaussian whose
      mean and variance lie in their own 1 − α/4 intervals (Student's t for the mean; for the
      variance a normal interval with the standard error from the sample fourth moment).

    The interval is conservative (a union bound): it can exclude a threshold only when the sample
    says so beyond doubt.  Returns ``ks`` (D̂), ``lo``, ``hi``, ``eps_dkw``, ``eps_fit``, ``n``.
    """
    from scipy import stats

    x = np.asarray(samples, dtype=np.float64).ravel()
    x = x[np.isfinite(x)]
    n = x.size
    if n < 4:
        raise ParameterError(f"ks_gaussian_interval needs at least 4 finite samples, got {n}")
    if not 0 < confidence < 1:
        raise ParameterError(f"confidence={confidence!r} must lie strictly between 0 and 1")
    alpha = 1.0 - confidence
    mu, s2 = float(x.mean()), float(x.var(ddof=1))
    if not s2 > 0:
        raise ParameterError("ks_gaussian_interval: the sample has zero variance")
    s = math.sqrt(s2)
    ks = float(stats.kstest(x, "norm", args=(mu, s)).statistic)
    eps_dkw = math.sqrt(math.log(4.0 / alpha) / (2.0 * n))
    a_max = float(stats.t.ppf(1.0 - alpha / 8.0, n - 1)) / math.sqrt(n)  # |μ − x̄|/s
    m4 = float(np.mean((x - mu) ** 4))
    dv = float(stats.norm.ppf(1.0 - alpha / 8.0)) * math.sqrt(max(m4 - s2**2, 0.0) / n) / s2  # |σ²/s² − 1|
    b_lo, b_hi = math.sqrt(max(1.0 - dv, 1e-12)), math.sqrt(1.0 + dv)
    a_grid, b_grid = np.meshgrid(np.linspace(0.0, a_max, 5), np.linspace(b_lo, b_hi, 9))
    eps_fit = float(np.max(_gauss_cdf_gap(a_grid, b_grid)))
    half = eps_dkw + eps_fit
    return {"ks": ks, "lo": max(0.0, ks - half), "hi": min(1.0, ks + half), "eps_dkw": eps_dkw,
            "eps_fit": eps_fit, "n": n}


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
        raise ParameterError("one_layer_conservation: moment must be (n_networks, L + 1) with L >= 1")
    per_net = np.nanmean(m[:, 1:] / m[:, :-1], axis=1)
    per_net = per_net[np.isfinite(per_net)]
    if per_net.size < 2:
        raise ParameterError("one_layer_conservation needs at least 2 networks with finite ratios")
    mean, se = mean_se(per_net)
    return {"log_mean": float(math.log(mean)), "se": float(se / mean), "dof": int(per_net.size - 1),
            "n": int(per_net.size)}


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


def ratio_of_means(a: Any, b: Any) -> tuple[float, float]:
    """mean(a)/mean(b) of two independent samples and its delta-method standard error,
    R·√((se_a/m_a)² + (se_b/m_b)²)."""
    ma, sa = (float(v) for v in mean_se(np.asarray(a, dtype=np.float64).ravel()))
    mb, sb = (float(v) for v in mean_se(np.asarray(b, dtype=np.float64).ravel()))
    if mb == 0:
        raise ParameterError("ratio_of_means: the denominator sample has mean 0")
    r = ma / mb
    return r, abs(r) * math.hypot(sa / ma, sb / mb)


# --------------------------------------------------------------------------------------------
# Chapters 4–5: the curves of Labatie's Figs. 4–5, their tables and resolved directions
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
    loc4 first weights, loc5 after the addition).

    ``dff`` = χ(loc4)/χ(loc1), the feedforward increment of one layer inside the unit, = ``dbn`` ·
    ``dphi`` · (weights step); ``chi`` = χ(loc5); ``chi_in`` = χ(loc1) at the first record;
    effective ranks after the addition; kurtosis and ν₁(|y|)/√ν₂ after the first BN.
    """
    return {
        "dff": A["chi_loc4"] / A["chi_loc1"],
        "dbn": A["chi_loc2"] / A["chi_loc1"],
        "dphi": A["chi_loc3"] / A["chi_loc2"],
        "chi": A["chi_loc5"],
        "chi_in": A["chi_loc1"][:, :1],
        "reff_x": A["reff_signal_loc5"],
        "reff_dx": A["reff_noise_loc5"],
        "kurt_z": A["mu4_signal_loc2"] / A["mu2_signal_loc2"] ** 2,
        "nu1_z": A["nu1_abs_signal_loc2"] / np.sqrt(A["nu2_signal_loc2"]),
    }


def spearman_by_column(x: Any, y: Any) -> np.ndarray:
    """Spearman rank correlation of ``x[:, j]`` and ``y[:, j]`` for every column j: the correlation
    across networks at each fixed depth (Chapter 4, δ_BN χ against the signal's conditioning)."""
    from scipy import stats

    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 2 or x.shape != y.shape:
        raise ParameterError("spearman_by_column: x and y must be 2-D arrays of the same shape")
    return np.array([stats.spearmanr(x[:, j], y[:, j]).statistic for j in range(x.shape[1])])


def resolved_sign(
    mean: float, se: float, dof: float | None, *, reference: float = 0.0, confidence: float = 0.99
) -> int:
    """+1 when the two-sided ``confidence`` t interval mean ± t·se (normal when ``dof`` is None)
    lies above ``reference``, −1 when it lies below, 0 when it contains it (unresolved)."""
    from .stats import t_quantile

    q = t_quantile(confidence, dof)
    if mean - q * se > reference:
        return 1
    if mean + q * se < reference:
        return -1
    return 0


def exp_rate_table(runs: Mapping[str, tuple[Any, Mapping[str, np.ndarray]]], l_min: float) -> Any:
    """One row per data set of BN feedforward nets (Chapter 4, Labatie App. A): the exponential
    rate of χ (:func:`exp_fit` over depth ≥ ``l_min``) with its error over networks, and the mean
    over networks of log₁₀ χ, r_eff(x) and the kurtosis at the last record. ``runs`` maps a data
    set to ``(depth, panels)`` with panels from :func:`bn_ff_panels`. Returns a DataFrame indexed
    by ``data``."""
    import pandas as pd

    rows = []
    for ds, (d, Q) in runs.items():
        f = exp_fit(d, Q["chi"], l_min=l_min)
        rows.append({"data": ds, "rate": f["rate"], "± s.e.": f["se_rate"],
                     "log10 χ^L": summary(np.log10(Q["chi"][:, -1]))["mean"],
                     "r_eff(x^L)": summary(Q["reff_x"][:, -1])["mean"],
                     "kurtosis at L": summary(Q["kurt_z"][:, -1])["mean"]})
    return pd.DataFrame(rows).set_index("data")


#: The last-record quantities of the batch-size study (Chapter 4), as functions of the panels.
BATCH_ENDPOINTS = {
    "log10_chi": lambda Q: np.log10(Q["chi"][:, -1]),
    "kurtosis": lambda Q: Q["kurt_z"][:, -1],
    "reff_x": lambda Q: Q["reff_x"][:, -1],
    "reff_dx": lambda Q: Q["reff_dx"][:, -1],
}


def batch_endpoints(runs: Mapping[int, Mapping[str, np.ndarray]]) -> Any:
    """One row per batch size B (Chapter 4, Labatie App. A): the mean over networks and its
    standard error (``se_<name>``) of each quantity of :data:`BATCH_ENDPOINTS` at the last record.
    ``runs`` maps B to panels from :func:`bn_ff_panels`. Returns a DataFrame with a column ``B``."""
    import pandas as pd

    rows = []
    for B, Q in runs.items():
        r: dict[str, Any] = {"B": B}
        for k, f in BATCH_ENDPOINTS.items():
            s = summary(f(Q))
            r[k], r[f"se_{k}"] = s["mean"], s["se"]
        rows.append(r)
    return pd.DataFrame(rows)


def batch_findings(table: Any) -> dict[str, Any]:
    """What Chapter 4's prose reads off the batch-size table (:func:`batch_endpoints`, rows in
    increasing B): ``trend[name]`` (:func:`monotone_trend` of each :data:`BATCH_ENDPOINTS` quantity
    against B), ``ratio`` = r_eff(x)/r_eff(dx) per batch, and the glued numbers (``glue``, two
    significant digits; ``glue_3``, the trend slopes with their errors, three) with the sentence
    saying whether the signal/noise ordering turns over between the smallest and largest batch."""
    trend = {k: monotone_trend(table["B"], table[k], table[f"se_{k}"]) for k in BATCH_ENDPOINTS}
    ratio = (table["reff_x"] / table["reff_dx"]).to_numpy()
    glue = {"b_small": int(table["B"].iloc[0]), "b_large": int(table["B"].iloc[-1]), "ratio_small": ratio[0],
            "ratio_large": ratio[-1],
            "flip_verdict": "the ordering of signal and noise turns over within the batches studied here"
            if (ratio[0] - 1) * (ratio[-1] - 1) < 0 else
            ("the signal stays the better conditioned over the batches studied here, while the gap closes"
             if ratio[0] > ratio[-1] > 1 else "the ratio moves as listed, without crossing 1 here")}
    return {"trend": trend, "ratio": ratio, "glue": glue,
            "glue_3": {f"slope_{k}": (t["slope"], t["slope_se"]) for k, t in trend.items()}}


def last_layer_findings(Q: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """Chapter 4's fully-connected BN nets at their last record (Labatie 2019, §6 and Fig. 4(c–d)):
    (mean, se, dof) over networks of ``reff_x``, ``reff_dx``, the kurtosis ``kurtosis`` and
    ``nu1`` = ν₁(|y|)/√ν₂ of the batch-normalised pre-activations (panels of :func:`bn_ff_panels`),
    and the glued numbers and sentences (``glue``): which effective rank is larger, resolved at 99 %,
    and whether the tails are resolved above the Gaussian kurtosis 3; ``claims``: the claim numbers
    (:func:`claim_numbers`) of ``kurtosis_fat`` and ``nu1_small``."""
    from .stats import mean_se_dof as est

    rx, rdx = est(Q["reff_x"][:, -1]), est(Q["reff_dx"][:, -1])
    ku, n1 = est(Q["kurt_z"][:, -1]), est(Q["nu1_z"][:, -1])
    glue = {"reff_x_l": rx[:2], "reff_dx_l": rdx[:2], "reff_order": {
        1: "the signal keeps more directions than the noise, the reverse of the paper's convolutional nets",
        -1: "the noise keeps more directions than the signal, the paper's ordering, though far below its 200",
        0: "the two effective ranks cannot be told apart at this scale",
    }[resolved_sign(*est(Q["reff_x"][:, -1] - Q["reff_dx"][:, -1]))], "kurt_l": ku[:2], "nu1_l": n1[:2],
        "fat_verdict": "fat tails, as in the paper, though far from its ≈ 10², which a batch of this size cannot reach "
        "(App. A: the kurtosis is bounded by about B)" if resolved_sign(*ku, reference=GAUSS_KURTOSIS) > 0
        else "at this batch the tails are not resolved from the Gaussian's (App. A: the kurtosis is bounded by about B)"}
    return {"reff_x": rx, "reff_dx": rdx, "kurtosis": ku, "nu1": n1, "glue": glue,
            "claims": {"kurtosis_fat": claim_numbers(ku), "nu1_small": claim_numbers(n1)}}


def exponent_windows(depth: Any, chi: Any, delta: Any, res_depth: int, l_min: int, l_max: int,
                     n_windows: int = 4) -> Any:
    """The free power-law exponent and the Eq. 15 exponent over successive windows of units
    (Chapter 5): the window edges are ``n_windows + 1`` integers spaced evenly from ``l_min`` to
    ``l_max`` (duplicates dropped); in each window [a, b] :func:`power_fit` of ``chi`` and
    :func:`tau_prediction` from ``delta`` (both networks × len(depth)), and their difference in
    combined standard errors. Returns a DataFrame indexed by ``units`` ("a–b")."""
    import pandas as pd

    depth = np.asarray(depth)
    chi = np.asarray(chi, dtype=np.float64)
    delta = np.asarray(delta, dtype=np.float64)
    edges = np.unique(np.linspace(l_min, l_max, check_positive_int("n_windows", n_windows) + 1).astype(int))
    rows = []
    for a, b in zip(edges[:-1], edges[1:]):
        w = (depth >= a) & (depth <= b)
        pw = power_fit(depth[w], chi[:, w], l_min=a)
        tw, twse = tau_prediction(delta[:, w], res_depth)
        rows.append({"units": f"{a}–{b}", "free τ": pw["tau"], "s.e. (free)": pw["se_tau"], "Eq. 15 τ": tw,
                     "s.e. (Eq. 15)": twse, "difference / combined s.e.": (pw["tau"] - tw) / np.hypot(pw["se_tau"], twse)})
    return pd.DataFrame(rows).set_index("units")


def power_rate_table(runs: Mapping[str, tuple[Any, Mapping[str, np.ndarray]]], res_depth: int, l_min: float) -> Any:
    """One row per data set of BN ResNets (Chapter 5): the free exponent (:func:`power_fit`) and the
    Eq. 15 exponent (:func:`tau_prediction`) over units ≥ ``l_min``, and log χ and r_eff(x) at the
    last record (means over networks, log χ with its error). ``runs`` maps a data set to
    ``(depth, panels)`` with panels from :func:`bn_res_panels`. Returns a DataFrame indexed by
    ``data``."""
    import pandas as pd

    rows = []
    for ds, (d, Q) in runs.items():
        p = power_fit(d, Q["chi"], l_min=l_min)
        t, tse = tau_prediction(Q["dff"][:, np.asarray(d) >= l_min], res_depth)
        c = summary(np.log(Q["chi"][:, -1]))
        rows.append({"data": ds, "free τ": p["tau"], "s.e. (free)": p["se_tau"], "Eq. 15 τ": t, "s.e. (Eq. 15)": tse,
                     "log χ^L": c["mean"], "s.e. (log χ^L)": c["se"], "r_eff(x^L)": summary(Q["reff_x"][:, -1])["mean"]})
    return pd.DataFrame(rows).set_index("data")


def kurtosis_table(entries: Any) -> Any:
    """Kurtosis μ₄/μ₂² after the first BN of BN ResNets at the last record (Chapter 5), one row per
    ``(input label, batch, engine arrays)``: its mean over networks with standard error, the
    low bias 3(B − 1)/(B + 1) of the kurtosis of B Gaussian values, and the number of networks.
    Returns a DataFrame indexed by (input, batch)."""
    import pandas as pd

    from .stats import estimate

    rows = []
    for label, bsz, A in entries:
        e = estimate(A["mu4_signal_loc2"][:, -1] / A["mu2_signal_loc2"][:, -1] ** 2)
        rows.append({"input": label, "batch": bsz, "kurtosis at the last unit": e.mean, "± s.e.": e.se,
                     "Gaussian-data bias 3(B−1)/(B+1)": 3 * (bsz - 1) / (bsz + 1), "networks": e.n})
    return pd.DataFrame(rows).set_index(["input", "batch"])


def kurtosis_findings(table: Any) -> dict[str, Any]:
    """The glued numbers and sentences of Chapter 5's kurtosis table (:func:`kurtosis_table`, rows:
    photo patches at B, i.i.d. Gaussian at B, photo patches at 4B): the three kurtoses with their
    standard errors, whether the input (rows 0, 1) and the batch (rows 0, 2) change it beyond the
    99 % t interval of the difference (d.o.f.: the smaller n − 1 of the two rows), and whether all stay
    an order of magnitude below the ≈ 10² of the paper's feedforward nets."""
    def separated(i: int, j: int) -> bool:
        se = float(np.hypot(table.iloc[i, 1], table.iloc[j, 1]))
        return resolved_sign(table.iloc[i, 0] - table.iloc[j, 0], se, int(min(table["networks"].iloc[[i, j]])) - 1) != 0

    return {
        "kurt_patches": (table.iloc[0, 0], table.iloc[0, 1]), "kurt_gauss": (table.iloc[1, 0], table.iloc[1, 1]),
        "kurt_patches_4b": (table.iloc[2, 0], table.iloc[2, 1]),
        "kurt_data_verdict": "The input changes it beyond its statistical error." if separated(0, 1)
        else "Patches and Gaussian images cannot be told apart at this scale.",
        "kurt_batch_verdict": "The larger batch changes it beyond its statistical error." if separated(0, 2)
        else "The larger batch does not change it beyond its statistical error here.",
        "kurt_ff_verdict": "All stay an order of magnitude below the ≈ 10² of the paper's feedforward nets (its Fig. 4(d))."
        if table.iloc[:, 0].max() < 10 else "The largest approaches the fat tails of the paper's feedforward nets (its Fig. 4(d)).",
    }


# --------------------------------------------------------------------------------------------
# Chapter 3 (vanilla nets): the studies behind its figures and claims
# --------------------------------------------------------------------------------------------
def skewness_se(samples: Any, *, seed: int = 0) -> tuple[float, float]:
    """Sample skewness (scipy's, biased) of a log-moment over networks and its standard error:
    the larger of a bootstrap over networks (400 resamples) and the exact standard error of the
    skewness of a Gaussian sample of the same size, √(6(n−2)/((n+1)(n+3)))."""
    from scipy import stats as sps

    x = np.asarray(samples, dtype=np.float64)
    n = x.shape[0]
    if x.ndim != 1 or n < 4:
        raise ParameterError(f"skewness_se needs a 1-d sample of at least 4 values, got shape {x.shape}")
    skew, se_boot = bootstrap(lambda a: sps.skew(a), [x], seed=seed)
    se = max(float(se_boot), np.sqrt(6 * (n - 2) / ((n + 1) * (n + 3))))
    return float(skew), float(se)


def vanilla_log_moments(depth: Any, arrays: Mapping[str, np.ndarray], n_layers: int, *, seed: int = 0) -> dict[str, Any]:
    """Labatie's Fig. 2 and §5 drift/diffusion study from one engine run recording every layer.

    ``arrays`` holds the engine's ``nu2_signal_loc1/loc3`` and ``mu2_noise_loc1/loc3``
    (networks × layers 1..L; loc1 of layer 1 is x⁰).  Returns, for ``"nu2"`` (signal ν₂) and
    ``"mu2dx"`` (noise μ₂): ``moments`` (networks × (L + 1), layers 0..L), ``logs`` = log m^l/m⁰
    (l = 1..L), at the ``quarters`` L/4, L/2, 3L/4, L (column indices ``qi``) the Gaussian
    fits ``fits`` and guaranteed KS intervals ``ks``; the ``drift_diffusion`` slopes over the
    quarters, the ``conservation`` of the expectation one layer at a time, the log-normal
    ``balance`` and the ``skew`` (with its error) at l = L, and ``lme`` (L × 2: log of the sample
    mean of m^l/m⁰ and its error).  ``n`` is the number of networks.  The alternatives of the
    Fig. 2 claims, at l = L: ``raw_ks``, the KS distance to a Gaussian of the moment ratio itself
    (not its log), and ``lognormal_skew``, the skewness of a log-normal with the measured variance."""
    d = np.asarray(depth)
    L = int(n_layers)
    if not np.array_equal(d, np.arange(1, L + 1)):
        raise ParameterError("the Fig. 2 run must record every layer (loc1 of layer 1 is x^0)")
    moments = {  # (networks, L + 1): the moment at layers 0, 1, …, L
        "nu2": np.concatenate([arrays["nu2_signal_loc1"][:, :1], arrays["nu2_signal_loc3"]], axis=1),
        "mu2dx": np.concatenate([arrays["mu2_noise_loc1"][:, :1], arrays["mu2_noise_loc3"]], axis=1),
    }
    logs = {k: np.log(m[:, 1:] / m[:, :1]) for k, m in moments.items()}   # log m^l/m^0, l = 1..L
    quarters = [L // 4, L // 2, 3 * L // 4, L]
    qi = [q - 1 for q in quarters]
    return {
        "depth": d, "moments": moments, "logs": logs, "quarters": quarters, "qi": qi,
        "n": int(logs["nu2"].shape[0]),
        "fits": {k: [gaussian_fit(a[:, i]) for i in qi] for k, a in logs.items()},
        "ks": {k: [ks_gaussian_interval(a[:, i]) for i in qi] for k, a in logs.items()},
        "drift_diffusion": {k: drift_diffusion(np.array(quarters, float), a[:, qi], seed=seed) for k, a in logs.items()},
        "conservation": {k: one_layer_conservation(m) for k, m in moments.items()},
        "balance": {k: lognormal_balance(a[:, -1], seed=seed) for k, a in logs.items()},
        "skew": {k: skewness_se(a[:, -1], seed=seed) for k, a in logs.items()},
        "lme": {k: np.array([log_mean_exp(a[:, i]) for i in range(L)]) for k, a in logs.items()},
        "raw_ks": {k: ks_gaussian_interval(np.exp(a[:, -1] - a[:, -1].max()))["ks"] for k, a in logs.items()},
        "lognormal_skew": {k: lognormal_skewness(np.var(a[:, -1], ddof=1)) for k, a in logs.items()},
    }


def lognormal_skewness(var_log: float) -> float:
    """Skewness of a log-normal variable whose log has variance ``var_log``: (e^{s²} + 2)·√(e^{s²} − 1)."""
    e = math.exp(min(float(var_log), 700.0))
    return float((e + 2.0) * math.sqrt(e - 1.0))


def log_moment_table(study: Mapping[str, Any]) -> Any:
    """The table under Labatie's Fig. 2: for signal and noise at each quarter of depth, mean,
    variance, skewness and excess kurtosis (± standard errors) and the KS distance with its 99 %
    interval, as a pandas DataFrame indexed by (quantity, l)."""
    import pandas as pd

    rows = []
    for key, name in [("nu2", "log ν₂(x)"), ("mu2dx", "log μ₂(dx)")]:
        for q, f, k in zip(study["quarters"], study["fits"][key], study["ks"][key]):
            rows.append({"quantity": name, "l": q, "mean": f"{f['mu']:.3f} ± {f['se_mu']:.3f}",
                         "variance": f"{f['var']:.3f} ± {f['se_var']:.3f}",
                         "skewness": f"{f['skew']:.2f} ± {f['se_skew']:.2f}",
                         "excess kurtosis": f"{f['excess_kurtosis']:.2f} ± {f['se_kurtosis']:.2f}",
                         "KS distance [99 % interval]": f"{k['ks']:.3f} [{k['lo']:.2f}, {k['hi']:.2f}]"})
    return pd.DataFrame(rows).set_index(["quantity", "l"])


def width_diffusion(runs: Mapping[int, tuple[np.ndarray, Mapping[str, np.ndarray]]], quarters: Any, *,
                    seed: int = 0) -> dict[str, Any]:
    """Diffusion of log ν₂(x) against the width (Labatie §5, App. A): for each width ``w`` of
    ``runs`` ({w: (depth, arrays)} of engine runs), the per-layer diffusion over the depths
    ``quarters`` (:func:`drift_diffusion`, bootstrap SEs), and a weighted fit of log diffusion
    against log N (``fit``: slope ≈ −1 when diffusion ∝ 1/N).  Returns ``widths``,
    ``diffusion``, ``se`` (arrays over widths) and ``fit``."""
    widths = list(runs)
    diff = []
    for w in widths:
        dw, Aw = runs[w]
        f0 = int(np.searchsorted(dw, 1))
        lg = np.log(Aw["nu2_signal_loc3"]) - np.log(Aw["nu2_signal_loc1"][:, [f0]])
        qiw = [int(np.searchsorted(dw, q)) for q in quarters]
        diff.append(drift_diffusion(np.array(quarters, float), lg[:, qiw], seed=seed))
    D = np.array([r["diffusion"] for r in diff])
    Dse = np.array([r["se_diffusion"] for r in diff])
    fit = linear_fit(np.log(widths), np.log(D), sigma=Dse / D)
    return {"widths": np.array(widths), "diffusion": D, "se": Dse, "fit": fit}


def sensitivity_study(depth: Any, arrays: Mapping[str, np.ndarray], n_layers: int) -> dict[str, Any]:
    """Labatie's Fig. 3 statistics of one engine run: the per-layer increments ``dchi`` of χ at the
    records (from χ⁰ = ``chi_loc1`` of the first record; geometric means over gaps between records), and estimates over networks (mean, SE, dof) of the
    mean increment over layers ≤ 10 (``early``) and over the last quarter l > 3L/4 (``late``),
    of the paired ``drop`` (late − 1) − (early − 1)/2 (≤ 0 when the excess at least halves),
    of r_eff(x^L) (``reff``), of r_eff at the first record (``reff_first``: x⁰ when loc1 was recorded,
    else the first record's output) and of log10 χ^L (``log10chi``); ``n`` networks."""
    from .stats import estimate

    d = np.asarray(depth)
    chi = arrays["chi_loc3"]
    dchi = layer_increments(arrays["chi_loc1"][:, :1], chi, d)
    early = dchi[:, d <= 10].mean(axis=1)
    late = dchi[:, d > 3 * n_layers // 4].mean(axis=1)
    return {"dchi": dchi, "n": int(dchi.shape[0]), "early": estimate(early), "late": estimate(late),
            "drop": estimate((late - 1) - 0.5 * (early - 1)),
            "reff": estimate(arrays["reff_signal_loc3"][:, -1]),
            "reff_first": estimate(_first_recorded(arrays.get("reff_signal_loc1", arrays["reff_signal_loc3"]))),
            "log10chi": estimate(np.log10(chi[:, -1]))}


def _first_recorded(a: Any) -> np.ndarray:
    """The first column of ``a`` (networks × records) that every network recorded (r_eff may be
    recorded at a subset of the records only, NaN elsewhere)."""
    a = np.asarray(a, dtype=np.float64)
    ok = np.flatnonzero(np.isfinite(a).all(axis=0))
    return a[:, ok[0] if ok.size else 0]


def coactivation_trend(coact: Mapping[str, np.ndarray], early: int = 10) -> dict[str, Any]:
    """Estimates over networks from :func:`vanilla_coactivation`: the always-on/off fraction at
    the first record ≥ ``early`` (``early``) and at the last record (``late``), their paired
    difference (``growth``) and the linearity index at the last record (``linearity``) and at the
    first (``linearity_first``)."""
    from .stats import estimate

    i = int(np.searchsorted(coact["depth"], early))
    c = coact["coactive"]
    return {"early": estimate(c[:, i]), "late": estimate(c[:, -1]), "growth": estimate(c[:, -1] - c[:, i]),
            "linearity": estimate(coact["linearity"][:, -1]), "linearity_first": estimate(coact["linearity"][:, 0])}


def dataset_estimates(runs: Mapping[str, tuple[np.ndarray, Mapping[str, np.ndarray]]], n_layers: int) -> dict[str, dict[str, Any]]:
    """For each data set of ``runs`` ({name: (depth, arrays)}), estimates over networks of the
    effective rank of the signal entering layer 1, of χ^L and of r_eff(x^L), keyed as in the
    chapter's table."""
    from .stats import estimate

    L = n_layers
    return {ds: {"r_eff(x⁰)": estimate(A["reff_signal_loc1"][:, 0]), f"χ^{L}": estimate(A["chi_loc3"][:, -1]),
                 f"r_eff(x^{L})": estimate(A["reff_signal_loc3"][:, -1])} for ds, (_, A) in runs.items()}


# -- Chapter 4: summaries for the chapter's glue and claims --
def claim_numbers(e: Any) -> dict[str, Any]:
    """The keyword arguments ``measured``/``se``/``dof`` of a claim from an estimate: a
    :class:`layerwise.stats.Estimate`, a ``(mean, se, dof)`` triple (:func:`layerwise.stats.mean_se_dof`)
    or a dict of :func:`layerwise.published.versus` (then also ``reference``, the authors' mean)."""
    from .stats import Estimate

    if isinstance(e, Estimate):
        return {"measured": e.mean, "se": e.se, "dof": e.dof}
    if isinstance(e, Mapping) and {"mean", "se", "dof"} <= set(e):
        out = {"measured": e["mean"], "se": e["se"], "dof": e["dof"]}
        return {**out, "reference": e["reference"]} if "reference" in e else out
    if isinstance(e, (tuple, list)) and len(e) == 3:
        return {"measured": e[0], "se": e[1], "dof": e[2]}
    raise ParameterError(f"e={e!r} must be an Estimate, a (mean, se, dof) triple or a dict with mean, se and dof")


#: Chapter 4's glued sizes: glue name → parameter of the chapter's scale table.
BN_FF_SIZES = {"fc_width": "width", "fc_batch": "batch", "fc_depth": "depth", "conv_width_p": "conv_width",
               "conv_batch_p": "conv_batch", "conv_depth_p": "conv_depth", "conv_nets_p": "conv_nets"}


def bn_ff_sizes(params: Mapping[str, Any]) -> dict[str, Any]:
    """The network sizes Chapter 4's set-up quotes, glue name → value (:data:`BN_FF_SIZES`)."""
    missing = [p for p in BN_FF_SIZES.values() if p not in params]
    if missing:
        raise ParameterError(f"params lacks {', '.join(missing)}; it needs {', '.join(BN_FF_SIZES.values())}")
    return {name: params[p] for name, p in BN_FF_SIZES.items()}


def bn_ff_fc_findings(depth: Any, panels: Mapping[str, np.ndarray], fit: Mapping[str, Any], l_min: float, *,
                      bracket: tuple[float, float] = (13.0, 18.0)) -> dict[str, Any]:
    """Chapter 4's fully-connected BN nets (Labatie 2019, Theorem 3 and Fig. 4(a–b)): per-network
    averages over the records ``depth ≥ l_min`` of the increments δχ, δ_BN χ and δ_φ χ (panels of
    :func:`bn_ff_panels`; Theorem 3: each ≥ 1) and log10 χ at the last record, each as claim numbers
    (``claims``: ``dchi_gt_1``, ``dbn_gt_1``, ``dphi_gt_1``, ``chi_200_range``); ``inside`` whether the mean
    log10 χ lies in ``bracket`` (SPEC §2: 13–18); ``late`` the record mask; ``n`` the networks; glued
    numbers with four significant digits (``glue_4``: increments, R² of ``fit`` from :func:`exp_fit`) and
    three (``glue``: rate of the fit, log10 χ at the end, and where it lies: inside, above or below)."""
    from .stats import mean_se_dof as est

    lo, hi = bracket
    if not lo < hi:
        raise ParameterError(f"bracket={bracket!r} must be (low, high) with low < high")
    late = np.asarray(depth) >= l_min
    if not late.any():
        raise ParameterError(f"l_min={l_min} lies beyond the last record")
    inc = {k: est(panels[k][:, late].mean(axis=1)) for k in ("dchi", "dbn", "dphi")}
    log10chi = est(np.log10(panels["chi"][:, -1]))
    inside = lo <= log10chi[0] <= hi
    return {"late": late, "n": int(panels["chi"].shape[0]), "inside": inside,
            "claims": {**{f"{k}_gt_1": claim_numbers(e) for k, e in inc.items()},
                       "chi_200_range": claim_numbers(log10chi)},
            "glue_4": {**{f"inc_{k}": e[:2] for k, e in inc.items()}, "fc_r2": fit["r2"]},
            "glue": {"fc_rate": (fit["rate"], fit["se_rate"]), "fc_log10chi_l": log10chi[:2],
                     "chi200_verdict": "inside" if inside else ("above" if log10chi[0] > hi else "below")}}


def dbn_conditioning(depth: Any, arrays: Mapping[str, np.ndarray], panels: Mapping[str, np.ndarray], l_min: float, *,
                     seed: int = 0) -> dict[str, Any]:
    """Labatie 2019, §6 'Experimental verification' (ii): δ_BN χ^l (``panels`` of :func:`bn_ff_panels`)
    against the effective rank r_eff(x^{l−1}) of the signal entering the layer (engine ``arrays``,
    loc1) over the records ``depth ≥ l_min``: the pooled Spearman ρ with its network-bootstrap error
    (:func:`rank_correlation`, ``seed``) as the claim numbers of ``dbn_inverse_conditioning``
    (networks − 1 d.o.f.), the correlation across networks at each depth (:func:`spearman_by_column`),
    the figure's ``arrays`` and the glued ρ's (``glue``, pooled and mean within-depth, with errors)."""
    from .stats import mean_se_dof as est

    d = np.asarray(depth)
    late = d >= l_min
    if not late.any():
        raise ParameterError(f"l_min={l_min} lies beyond the last record")
    rin, dbn = arrays["reff_signal_loc1"][:, late], panels["dbn"][:, late]
    rho, rho_se = rank_correlation(rin, dbn, seed=seed)
    within = spearman_by_column(rin, dbn)
    return {"arrays": {"reff_in": rin, "dbn": dbn, "depth": d[late], "within": within},
            "claims": {"dbn_inverse_conditioning": {"measured": rho, "se": rho_se, "dof": arrays["chi_loc1"].shape[0] - 1}},
            "glue": {"rho_pooled": (rho, rho_se), "rho_within": est(within)[:2]}}


def _networks(panels: Any) -> int:
    n = {int(Q["chi"].shape[0]) for Q in panels}
    if len(n) != 1:
        raise ParameterError(f"every run needs the same number of networks, got {sorted(n)}")
    return n.pop()


def bn_ff_dataset_study(runs: Mapping[str, tuple[Any, Mapping[str, np.ndarray]]], l_min: float, *,
                        seed: int = 0) -> dict[str, Any]:
    """Chapter 4's data sets (Labatie 2019, App. A: 'equivalent behaviour' on MNIST): ``runs`` maps a
    data set to the engine's ``(depth, arrays)`` of equally many networks. Returns ``runs`` with their
    panels (:func:`bn_ff_panels`), the ``table`` of :func:`exp_rate_table`, the figure's ``arrays``
    (mean χ and r_eff(x) per data set), the relative spread of the exponential rates with its
    parametric-bootstrap interval (:func:`relative_spread`, t with networks − 1 d.o.f., ``seed``) as
    the claim numbers of ``rate_data_independent`` and the glued spread."""
    dsq = {ds: (d, bn_ff_panels(A)) for ds, (d, A) in runs.items()}
    n = _networks(Q for _, Q in dsq.values())
    table = exp_rate_table(dsq, l_min=l_min)
    spread, interval = relative_spread(table["rate"], table["± s.e."], dof=n - 1, seed=seed)
    return {"runs": dsq, "table": table,
            "arrays": {f"{ds}_{k}": dsq[ds][1][k].mean(0) for ds in dsq for k in ("chi", "reff_x")},
            "claims": {"rate_data_independent": {"measured": spread, "interval": interval}},
            "glue": {"rate_spread": spread}}


#: Words for the batch-size study's quantities, in the order Chapter 4's prose lists them.
BATCH_NAMES = {"kurtosis": "the kurtosis", "reff_x": "r_eff(x)", "reff_dx": "r_eff(dx)", "log10_chi": "log₁₀ χ"}


def bn_ff_batch_study(runs: Mapping[int, tuple[Any, Mapping[str, np.ndarray]]]) -> dict[str, Any]:
    """Chapter 4's batch-size study (Labatie 2019, App. A): ``runs`` maps B (increasing) to the engine's
    ``(depth, arrays)`` of equally many networks. Returns their ``panels``, the ``table`` of
    :func:`batch_endpoints` and the figure's ``arrays`` (its columns); ``trend`` (:func:`batch_findings`)
    and the quantities whose slope against log2 B is ``unresolved`` (its 99 % t interval, networks − 1
    d.o.f., contains 0); ``claims``: each slope (``batch_<name>``) and, at the largest batch ``b_max``,
    r_eff(dx) − r_eff(x) at the last record (``fc_large_batch_paper_ordering``); the glued slopes
    (``glue_3``) and ratios and sentences (``glue``), one naming the unresolved trends."""
    from .stats import mean_se_dof as est

    BQ = {B: bn_ff_panels(A) for B, (_, A) in runs.items()}
    dof = _networks(BQ.values()) - 1
    table = batch_endpoints(BQ)
    BF = batch_findings(table)
    trend = BF["trend"]
    unresolved = [k for k in trend if resolved_sign(trend[k]["slope"], trend[k]["slope_se"], dof) == 0]
    b_max = max(BQ)
    claims = {f"batch_{k}": {"measured": t["slope"], "se": t["slope_se"], "dof": dof} for k, t in trend.items()}
    claims["fc_large_batch_paper_ordering"] = claim_numbers(est(BQ[b_max]["reff_dx"][:, -1] - BQ[b_max]["reff_x"][:, -1]))
    names = [BATCH_NAMES[k] for k in BATCH_NAMES if k in unresolved]
    sentence = ("All four trends are resolved at this scale." if not names else
                f"At this scale the trend of {' and '.join(names)} is not resolved: its 99 % interval includes 0, "
                "as the values scatter widely between networks.")
    return {"panels": BQ, "table": table, "arrays": {k: table[k].to_numpy() for k in table.columns}, "trend": trend,
            "unresolved": unresolved, "b_max": b_max, "claims": claims, "glue_3": BF["glue_3"],
            "glue": {**BF["glue"], "batch_unresolved": sentence}}


def graded_list(claims: Any, prefix: str, otherwise: str, *, kind: str = "reproduces") -> str:
    """'id status; id status; …' for the ledger's ``claims`` of ``kind`` whose id starts with ``prefix``,
    in ledger order, or ``otherwise`` when every one of them is skipped at this scale (or there is none)."""
    sel = [c for c in claims if c.id.startswith(prefix) and c.kind == kind]
    return "; ".join(f"{c.id} {c.status}" for c in sel) if any(c.status != "skipped" for c in sel) else otherwise
