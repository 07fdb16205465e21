"""The book's statistics, one home each (on scipy): means with standard errors, Student-t
intervals, family-wise thresholds, pooled (inverse-variance) means, least-squares fits with
errors (ordinary, weighted, through the origin), bootstrap and jackknife.

Conventions: every standard error is over *independent replicates* along one axis (networks,
environments, batches); NaNs in a sample (e.g. a collapsed network) are left out; a standard
error is called ``se`` and the error of a named quantity ``<name>_se`` (``slope_se``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
from scipy import stats as _st

from .params import ParameterError, check_positive_int


# ---------------------------------------------------------------------------------------------
# Means, standard errors, t intervals
# ---------------------------------------------------------------------------------------------
def mean_se(x: Any, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Mean and its standard error s/√n along ``axis`` (s the sample standard deviation, ddof = 1).

    NaNs are left out: n counts the finite values, and the standard error is NaN where fewer
    than two remain (a single replicate has no standard error)."""
    x = np.asarray(x, dtype=np.float64)
    n = np.sum(np.isfinite(x), axis=axis)
    with warnings.catch_warnings():  # an all-NaN slice or a single value: NaN, as documented
        warnings.simplefilter("ignore", RuntimeWarning)
        m = np.nanmean(x, axis=axis)
        sd = np.nanstd(x, axis=axis, ddof=1) if x.shape[axis] > 1 else np.full_like(m, np.nan)
    return m, sd / np.sqrt(np.maximum(n, 1))


class Estimate(NamedTuple):
    """One measured quantity with its uncertainty — the book's one estimate type, from
    :mod:`layerwise.stats` through the studies to ``ch.claim(measured=e)``.

    * a mean over ``n`` independent replicates: ``se`` its standard error, ``dof`` the degrees of
      freedom of Student's t (:func:`estimate`);
    * a value with a confidence ``interval`` (lo, hi) from elsewhere — a bootstrap, a fit's
      profile, an isotonic fit (:func:`interval_estimate`); ``se`` and ``dof`` are then None;
    * an exact value (a quadrature, a closed form): ``se``, ``dof`` and ``interval`` None
      (:func:`exact`)."""

    mean: float
    se: float | None = None
    dof: float | None = None
    n: int | None = None
    interval: tuple[float, float] | None = None

    def bounds(self, confidence: float = 0.99) -> tuple[float, float]:
        """The two-sided ``confidence`` interval: ``interval`` if given, else mean ± t·se, else
        (mean, mean) for an exact value."""
        if self.interval is not None:
            return self.interval
        if self.se is None:
            return (self.mean, self.mean)
        return t_interval(self.mean, self.se, self.dof, confidence)


def estimate(x: Any) -> Estimate:
    """Mean of the independent replicates ``x`` (e.g. one value per random network), its
    standard error s/√n (ddof = 1) and n − 1 degrees of freedom for Student's t."""
    x = np.asarray(x, dtype=float).ravel()
    if x.size < 2:
        raise ParameterError(f"a standard error needs at least 2 samples, got {x.size}")
    m, se = mean_se(x)
    return Estimate(float(m), float(se), len(x) - 1, len(x))


def interval_estimate(value: float, lo: float, hi: float, *, n: int | None = None) -> Estimate:
    """A value with a confidence interval (lo, hi) formed elsewhere (bootstrap, profile, …)."""
    value, lo, hi = float(value), float(lo), float(hi)
    if not lo <= hi:
        raise ParameterError(f"interval ({lo}, {hi}) must have lo <= hi")
    return Estimate(value, None, None, n, (lo, hi))


def exact(value: float) -> Estimate:
    """A value with no sampling uncertainty (a quadrature, a closed form, a fixed construction)."""
    return Estimate(float(value))


def mean_se_dof(x: Any) -> tuple[float, float | None, int | None]:
    """``(mean, se, dof)`` of independent replicates for a claim's ``measured``/``se``/``dof``; a
    single replicate has no standard error: ``(value, None, None)`` (graded as a point)."""
    x = np.asarray(x, dtype=float).ravel()
    if x.size < 2:
        return float(x.mean()), None, None
    e = estimate(x)
    return e.mean, e.se, e.dof


def t_quantile(confidence: float, dof: float | None = None) -> float:
    """Two-sided critical value of a ``confidence`` interval: the (1 + c)/2 quantile of Student's
    t with ``dof`` degrees of freedom (of the normal law when ``dof`` is None)."""
    if not 0 < confidence < 1:
        raise ParameterError(f"confidence={confidence!r} must lie strictly between 0 and 1")
    p = 0.5 + confidence / 2
    if dof is None:
        return float(_st.norm.ppf(p))
    if not dof > 0:
        raise ParameterError(f"dof={dof!r} must be a positive number of degrees of freedom")
    return float(_st.t.ppf(p, dof))


def t_interval(mean: float, se: float, dof: float | None, confidence: float = 0.99) -> tuple[float, float]:
    """Two-sided Student-t confidence interval mean ± t_{(1+c)/2, dof}·se (normal when ``dof`` is
    None); it covers the true mean with probability ``confidence`` for Gaussian replicates."""
    h = t_quantile(confidence, dof) * se
    return mean - h, mean + h


def z_family(m: int, alpha: float = 0.01, dof: int | None = None) -> float:
    """Two-sided threshold keeping the family-wise false-alarm rate ≤ ``alpha`` over ``m``
    comparisons (Bonferroni): the 1 − α/(2m) quantile of the normal law, or of Student's t with
    ``dof`` degrees of freedom when each z-score divides by a standard error estimated from
    ``dof + 1`` samples."""
    if m < 1 or not 0 < alpha < 1:
        raise ParameterError(f"m={m} must be >= 1 and alpha={alpha} in (0, 1)")
    if dof is None:
        return float(_st.norm.isf(alpha / (2 * m)))
    if dof < 1:
        raise ParameterError(f"dof={dof} must be >= 1")
    return float(_st.t.isf(alpha / (2 * m), dof))


def inverse_variance_mean(x: Any, se: Any, dof: Any) -> tuple[float, float, float]:
    """Inverse-variance weighted mean of independent estimates ``x`` with standard errors ``se`` and
    ``dof`` degrees of freedom each: (mean, its standard error, Welch–Satterthwaite d.o.f.).

    x̄ = Σ w_i x_i / Σ w_i with w_i = 1/se_i²; Var x̄ = Σ a_i, a_i = (w_i/Σw)² se_i²;
    ν = (Σ a_i)² / Σ (a_i²/ν_i)."""
    x, se = np.asarray(x, dtype=np.float64), np.asarray(se, dtype=np.float64)
    dof = np.broadcast_to(np.asarray(dof, dtype=np.float64), x.shape)
    if x.shape != se.shape or x.size < 1 or np.any(se <= 0) or np.any(dof <= 0):
        raise ParameterError("inverse_variance_mean needs matching x, se > 0 and dof > 0")
    w = 1.0 / se**2
    mean = float(np.sum(w * x) / np.sum(w))
    a = (w / w.sum()) ** 2 * se**2  # each estimate's contribution to the variance of the mean
    return mean, float(math.sqrt(a.sum())), float(a.sum() ** 2 / np.sum(a**2 / dof))


# ---------------------------------------------------------------------------------------------
# Least-squares lines
# ---------------------------------------------------------------------------------------------
def linear_fit(x: Any, y: Any, sigma: Any = None, through_origin: bool = False) -> dict[str, float]:
    """Least-squares line y = a + b·x (or y = b·x) with the standard errors of a and b and R².

    Keys: ``slope``, ``slope_se``, ``intercept``, ``intercept_se`` (0 through the origin), ``r2``.
    Pairs with a non-finite x or y are left out.

    * Ordinary fit (no ``sigma``, with intercept): ``scipy.stats.linregress`` — b = S_xy/S_xx,
      a = ȳ − b x̄, SE(b)² = SS_res/((n − 2) S_xx), SE(a) = SE(b)·√(Σx²/n).
    * Weighted (``sigma``: standard errors of the y's) or through the origin: the normal equations
      (XᵀWX) β = XᵀWy, W = diag(1/σ²), solved by least squares on the rows scaled by 1/σ; the
      covariance of β is (XᵀWX)⁻¹ with ``sigma`` (absolute errors) and (XᵀX)⁻¹ SS_res/(n − k)
      without (k parameters).

    R² = 1 − SS_res/SS_tot of the unweighted residuals of the least-squares solution.  The errors
    assume independent y's: for curves measured on the same networks at several depths use
    :func:`bootstrap` over networks instead.
    """
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if x.shape != y.shape:
        raise ParameterError(f"linear_fit needs x and y of one size, got {x.size} and {y.size}")
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    k = 1 if through_origin else 2
    if x.size < k + 1:
        raise ParameterError(f"linear_fit needs at least {k + 1} points, got {x.size}")
    X = x[:, None] if through_origin else np.stack([np.ones_like(x), x], axis=1)
    w = np.ones_like(x) if sigma is None else 1.0 / np.asarray(sigma, dtype=np.float64).ravel()[ok]
    Xw, yw = X * w[:, None], y * w
    beta, *_ = np.linalg.lstsq(Xw, yw, rcond=None)
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - float(np.sum((y - X @ beta) ** 2)) / ss_tot if ss_tot > 0 else float("nan")
    if sigma is None and not through_origin:
        r = _st.linregress(x, y)
        return {"slope": float(r.slope), "slope_se": float(r.stderr), "intercept": float(r.intercept),
                "intercept_se": float(r.intercept_stderr), "r2": r2}
    cov = np.linalg.inv(Xw.T @ Xw)
    if sigma is None:
        resid = yw - Xw @ beta
        cov = cov * float(resid @ resid) / (x.size - k)
    se = np.sqrt(np.diag(cov))
    if through_origin:
        return {"slope": float(beta[0]), "slope_se": float(se[0]), "intercept": 0.0, "intercept_se": 0.0, "r2": r2}
    return {"slope": float(beta[1]), "slope_se": float(se[1]), "intercept": float(beta[0]),
            "intercept_se": float(se[0]), "r2": r2}


def max_deviation_interval(
    mean: np.ndarray, se: np.ndarray, reference: np.ndarray, *, dof: float, confidence: float = 0.99, relative: bool = False
) -> tuple[float, tuple[float, float]]:
    """max_k |mean_k − reference_k| (divided by |reference_k| when ``relative``) over a family of
    m comparisons, with a simultaneous confidence interval for that maximum.

    Each difference gets a Student-t interval at level 1 − (1 − confidence)/m (Bonferroni), so
    that all m hold together with probability ≥ ``confidence``; on that event the maximum lies
    between max_k min|I_k| and max_k max|I_k|."""
    from scipy import stats

    mean, se, reference = (np.asarray(v, float).ravel() for v in (mean, se, reference))
    if not mean.shape == se.shape == reference.shape or len(mean) == 0:
        raise ParameterError("mean, se and reference must be non-empty arrays of the same size")
    if not 0 < confidence < 1 or not dof > 0:
        raise ParameterError(f"confidence={confidence} must lie in (0, 1) and dof={dof} be positive")
    scale = np.abs(reference) if relative else np.ones_like(reference)
    d, h = (mean - reference) / scale, se / scale * stats.t.isf((1 - confidence) / (2 * len(mean)), dof)
    lo = np.maximum(0.0, np.abs(d) - h)
    return float(np.max(np.abs(d))), (float(lo.max()), float((np.abs(d) + h).max()))


def line_r2_rows(x: Any, Y: Any) -> np.ndarray:
    """R² = 1 − SS_res/SS_tot of the least-squares line y = a + b·x fitted to each row of ``Y``
    separately (rows: independent replicates, e.g. networks), one value per row."""
    x = np.asarray(x, dtype=np.float64).ravel()
    Y = np.atleast_2d(np.asarray(Y, dtype=np.float64))
    if Y.shape[1] != x.size or x.size < 3:
        raise ParameterError(f"line_r2_rows needs rows of {x.size} ≥ 3 values, got shape {Y.shape}")
    X = np.stack([np.ones_like(x), x], axis=1)
    beta, *_ = np.linalg.lstsq(X, Y.T, rcond=None)
    ss_res = np.sum((Y - (X @ beta).T) ** 2, axis=1)
    ss_tot = np.sum((Y - Y.mean(1, keepdims=True)) ** 2, axis=1)
    return 1.0 - ss_res / ss_tot


# ---------------------------------------------------------------------------------------------
# Resampling
# ---------------------------------------------------------------------------------------------
def bootstrap(
    stat: Callable[..., Any],
    arrays: Sequence[np.ndarray],
    n_boot: int = 400,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Value of ``stat(*arrays)`` and its bootstrap standard error: the standard deviation
    (ddof = 1) of ``stat`` over ``n_boot`` resamples with replacement of axis 0 (the independent
    replicates, e.g. networks), drawn from ``numpy.random.default_rng(seed)``.

    All ``arrays`` share axis 0 and are resampled together (paired)."""
    n_boot = check_positive_int("n_boot", n_boot)
    arrays = [np.asarray(a) for a in arrays]
    n = arrays[0].shape[0]
    if any(a.shape[0] != n for a in arrays):
        raise ParameterError("bootstrap: all arrays need the same number of networks (axis 0)")
    value = np.asarray(stat(*arrays), dtype=np.float64)
    rng = np.random.default_rng(seed)
    reps = np.empty((n_boot,) + value.shape)
    for b in range(n_boot):
        idx = rng.integers(0, n, n)
        reps[b] = stat(*[a[idx] for a in arrays])
    return value, reps.std(axis=0, ddof=1)


def jackknife_se(estimator: Callable[[np.ndarray], Any], samples: Any) -> tuple[float, float]:
    """Estimate and jackknife standard error of ``estimator(samples)`` over the first axis:
    SE² = (n−1)/n Σ_i (θ_(i) − θ̄_(·))², θ_(i) the estimate without sample i."""
    samples = np.asarray(samples)
    n = len(samples)
    if n < 2:
        raise ParameterError(f"a jackknife needs at least 2 samples, got {n}")
    full = float(estimator(samples))
    loo = np.array([estimator(np.delete(samples, i, axis=0)) for i in range(n)])
    return full, float(np.sqrt((n - 1) / n * np.sum((loo - loo.mean()) ** 2)))
