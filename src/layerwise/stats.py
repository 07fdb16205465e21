"""Small statistics shared by chapters: standard errors, family-wise thresholds, fits with errors."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import stats as _st

from .params import ParameterError


def mean_se(x: np.ndarray, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Mean and its standard error (sample std / √n, ddof = 1) along ``axis``."""
    x = np.asarray(x, dtype=float)
    n = x.shape[axis]
    if n < 2:
        raise ParameterError(f"a standard error needs at least 2 samples along axis {axis}, got {n}")
    return x.mean(axis=axis), x.std(axis=axis, ddof=1) / np.sqrt(n)


class Estimate(NamedTuple):
    """A mean over independent replicates with its standard error and degrees of freedom, ready
    for a claim: ``ch.claim(..., measured=e.mean, se=e.se, dof=e.dof)``."""

    mean: float
    se: float
    dof: int
    n: int


def estimate(x: np.ndarray) -> Estimate:
    """Mean of the independent replicates ``x`` (e.g. one value per random network), its
    standard error s/√n (ddof = 1) and n − 1 degrees of freedom for Student's t."""
    x = np.asarray(x, dtype=float).ravel()
    m, se = mean_se(x)
    return Estimate(float(m), float(se), len(x) - 1, len(x))


def mean_se_dof(x: np.ndarray) -> tuple[float, float | None, int | None]:
    """``(mean, se, dof)`` of independent replicates for a claim's ``measured``/``se``/``dof``; a
    single replicate has no standard error: ``(value, None, None)`` (graded as a point)."""
    x = np.asarray(x, dtype=float).ravel()
    if x.size < 2:
        return float(x.mean()), None, None
    e = estimate(x)
    return e.mean, e.se, e.dof


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


def jackknife_se(estimator, samples: np.ndarray) -> tuple[float, float]:
    """Estimate and jackknife standard error of ``estimator(samples)`` over the first axis:
    SE² = (n−1)/n Σ_i (θ_(i) − θ̄_(·))², θ_(i) the estimate without sample i."""
    samples = np.asarray(samples)
    n = len(samples)
    if n < 2:
        raise ParameterError(f"a jackknife needs at least 2 samples, got {n}")
    full = float(estimator(samples))
    loo = np.array([estimator(np.delete(samples, i, axis=0)) for i in range(n)])
    return full, float(np.sqrt((n - 1) / n * np.sum((loo - loo.mean()) ** 2)))


def linear_fit(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Least-squares y ≈ a + b x with the standard errors of a and b (scipy.stats.linregress)."""
    r = _st.linregress(np.asarray(x, float), np.asarray(y, float))
    return {"intercept": r.intercept, "slope": r.slope, "slope_se": r.stderr, "intercept_se": r.intercept_stderr, "r2": r.rvalue**2}
