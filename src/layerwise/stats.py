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
from scipy.special import ndtr as _ndtr

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
      (:func:`exact`).

    ``reference_se`` is set when ``se`` is the standard error of a difference from a published
    mean (:func:`versus_reference`): the reference's part of it, so that a page can say which
    ± is ours alone and which combines the authors' error."""

    mean: float
    se: float | None = None
    dof: float | None = None
    n: int | None = None
    interval: tuple[float, float] | None = None
    reference_se: float | None = None

    @property
    def own_se(self) -> float | None:
        """The standard error of our mean alone, √(se² − reference_se²) (``se`` when no
        reference error is folded in)."""
        if self.se is None or self.reference_se is None:
            return self.se
        return math.sqrt(max(self.se**2 - self.reference_se**2, 0.0))

    def bounds(self, confidence: float = 0.99) -> tuple[float, float]:
        """The two-sided ``confidence`` interval: ``interval`` if given, else mean ± t·se, else
        (mean, mean) for an exact value."""
        if self.interval is not None:
            return self.interval
        if self.se is None:
            return (self.mean, self.mean)
        return t_interval(self.mean, self.se, self.dof, confidence)

    def side(self, threshold: float, confidence: float = 0.99) -> int:
        """Where the whole ``confidence`` interval lies against ``threshold``: +1 above it, −1
        below it, 0 when it contains the threshold (undecided) — the ledger's interval rule, for a
        sentence whose direction depends on the run and that no claim grades."""
        lo, hi = self.bounds(confidence)
        if lo > threshold:
            return 1
        if hi < threshold:
            return -1
        return 0

    def sign(self, confidence: float = 0.99) -> int:
        """The sign of the estimate decided by its ``confidence`` interval: +1, −1, or 0 when the
        interval contains 0 (:meth:`side` against 0)."""
        return self.side(0.0, confidence)


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


def estimate_or_point(x: Any) -> Estimate:
    """The :class:`Estimate` of independent replicates ``x`` (:func:`estimate`: mean, SE, n − 1
    d.o.f.); a single replicate has no standard error: its value, graded as a point (``n`` = 1)."""
    x = np.asarray(x, dtype=float).ravel()
    return estimate(x) if x.size > 1 else Estimate(float(x.mean()), n=int(x.size))


def versus_reference(ours: Any, reference: tuple[float, float]) -> Estimate:
    """Our per-network values against a published ``reference`` = (mean, SE) over another set of
    networks (the authors'): our mean with the combined standard error √(SE_ours² + SE_ref²) of
    the difference and the degrees of freedom of ours (n − 1: fewer than Welch–Satterthwaite would
    give, so the t interval errs wide), for a claim whose ``reference`` is the published mean.
    One network of ours has no SE: then only the reference's error counts and the interval is
    normal (``dof`` None)."""
    x = np.asarray(ours, dtype=float).ravel()
    if x.size == 0:
        raise ParameterError("ours must hold at least one network's value")
    e = estimate_or_point(x)
    ref_se = float(reference[1])
    return Estimate(e.mean, math.hypot(e.se or 0.0, ref_se), e.dof, e.n, reference_se=ref_se)


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


def t_interval(
    mean: float, se: float, dof: float | None, confidence: float = 0.99
) -> tuple[float, float]:
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
        return {
            "slope": float(r.slope),
            "slope_se": float(r.stderr),
            "intercept": float(r.intercept),
            "intercept_se": float(r.intercept_stderr),
            "r2": r2,
        }
    cov = np.linalg.inv(Xw.T @ Xw)
    if sigma is None:
        resid = yw - Xw @ beta
        cov = cov * float(resid @ resid) / (x.size - k)
    se = np.sqrt(np.diag(cov))
    if through_origin:
        return {
            "slope": float(beta[0]),
            "slope_se": float(se[0]),
            "intercept": 0.0,
            "intercept_se": 0.0,
            "r2": r2,
        }
    return {
        "slope": float(beta[1]),
        "slope_se": float(se[1]),
        "intercept": float(beta[0]),
        "intercept_se": float(se[0]),
        "r2": r2,
    }


def max_deviation_interval(
    mean: np.ndarray,
    se: np.ndarray,
    reference: np.ndarray,
    *,
    dof: float,
    confidence: float = 0.99,
    relative: bool = False,
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
        raise ParameterError(
            f"confidence={confidence} must lie in (0, 1) and dof={dof} be positive"
        )
    scale = np.abs(reference) if relative else np.ones_like(reference)
    d, h = (
        (mean - reference) / scale,
        se / scale * stats.t.isf((1 - confidence) / (2 * len(mean)), dof),
    )
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


# ---------------------------------------------------------------------------------------------
# Samples of networks: summaries, log-means, correlations, distances to a Gaussian, spreads
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


def log_mean_exp(samples: Any) -> tuple[float, float]:
    """log E[exp(x)] of a sample (log of the mean moment ratio) and its delta-method error."""
    x = np.asarray(samples, dtype=np.float64).ravel()
    x = x[np.isfinite(x)]
    mx = x.max()
    e = np.exp(x - mx)
    m, se = mean_se(e)
    return float(mx + math.log(m)), float(se / m)


def ratio_of_means(a: Any, b: Any) -> Estimate:
    """mean(a)/mean(b) of two independent samples and its delta-method standard error,
    R·√((se_a/m_a)² + (se_b/m_b)²); d.o.f. those of the smaller sample (n − 1)."""
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    ma, sa = (float(v) for v in mean_se(a))
    mb, sb = (float(v) for v in mean_se(b))
    if mb == 0:
        raise ParameterError("ratio_of_means: the denominator sample has mean 0")
    r = ma / mb
    n = min(a.size, b.size)
    return Estimate(r, abs(r) * math.hypot(sa / ma, sb / mb), n - 1, n)


def rank_correlation(x: Any, y: Any, *, n_boot: int = 200, seed: int = 0) -> tuple[float, float]:
    """Spearman correlation of paired (networks × layers) arrays, with a network-bootstrap error.

    ``x`` and ``y`` are (n_networks, n_layers); all pairs are pooled, and the bootstrap resamples
    whole networks so that the error respects the correlation between layers of one network.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape:
        raise ParameterError("rank_correlation: x and y need the same shape")

    def rho(a: np.ndarray, b: np.ndarray) -> float:
        a, b = a.ravel(), b.ravel()
        ok = np.isfinite(a) & np.isfinite(b)
        return float(_st.spearmanr(a[ok], b[ok]).statistic)

    v, se = bootstrap(rho, [x, y], n_boot=n_boot, seed=seed)
    return float(v), float(se)


def spearman_by_column(x: Any, y: Any) -> np.ndarray:
    """Spearman rank correlation of ``x[:, j]`` and ``y[:, j]`` for every column j (e.g. the
    correlation across networks at each fixed depth)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 2 or x.shape != y.shape:
        raise ParameterError("spearman_by_column: x and y must be 2-D arrays of the same shape")
    return np.array([_st.spearmanr(x[:, j], y[:, j]).statistic for j in range(x.shape[1])])


def skewness_se(samples: Any, *, seed: int = 0) -> tuple[float, float]:
    """Sample skewness (scipy's, biased) of a 1-d sample of replicates and its standard error:
    the larger of a bootstrap over the replicates (400 resamples) and the exact standard error of
    the skewness of a Gaussian sample of the same size, √(6(n−2)/((n+1)(n+3)))."""
    x = np.asarray(samples, dtype=np.float64)
    n = x.shape[0]
    if x.ndim != 1 or n < 4:
        raise ParameterError(
            f"skewness_se needs a 1-d sample of at least 4 values, got shape {x.shape}"
        )
    skew, se_boot = bootstrap(lambda a: _st.skew(a), [x], seed=seed)
    se = max(float(se_boot), np.sqrt(6 * (n - 2) / ((n + 1) * (n + 3))))
    return float(skew), float(se)


def _gauss_cdf_gap(a: Any, b: Any) -> Any:
    """sup_u |Φ(u) − Φ((u + a)/b)|: the Kolmogorov distance between N(0, 1) and N(−a, b²)
    (element-wise over broadcast arrays ``a``, ``b``; on a grid of u with step 0.004)."""
    u = np.linspace(-8.0, 8.0, 4001)
    a, b = np.asarray(a, dtype=np.float64)[..., None], np.asarray(b, dtype=np.float64)[..., None]
    return np.max(np.abs(_ndtr(u) - _ndtr((u + a) / b)), axis=-1)


def ks_gaussian_interval(samples: Any, confidence: float = 0.99) -> dict[str, float]:
    """Kolmogorov–Smirnov distance of a sample to its fitted Gaussian, with a confidence interval
    for the distance D of the *population* to the Gaussian of the same mean and variance.

    The sample distance D̂ = sup|F_n − Φ((x − x̄)/s)| is biased upward: a Gaussian population
    (D = 0) gives D̂ ≈ 0.6/√n on average, and a bootstrap over the sample reproduces the bias
    instead of correcting it.  By the triangle inequality |D̂ − D| ≤ sup|F_n − F| + sup|Φ̂ − Φ|,
    so D lies within D̂ ± (ε_DKW + ε_fit), where, splitting α = 1 − confidence in halves
    (Bonferroni):

    * ε_DKW = √(ln(4/α)/(2n)) bounds sup|F_n − F| with probability ≥ 1 − α/2 (Dvoretzky–Kiefer–
      Wolfowitz inequality with Massart's constant, exact at finite n);
    * ε_fit is the largest Kolmogorov distance between the fitted Gaussian and a Gaussian whose
      mean and variance lie in their own 1 − α/4 intervals (Student's t for the mean; for the
      variance a normal interval with the standard error from the sample fourth moment).

    The interval is conservative (a union bound): it can exclude a threshold only when the sample
    says so beyond doubt.  Returns ``ks`` (D̂), ``lo``, ``hi``, ``eps_dkw``, ``eps_fit``, ``n``.
    """
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
    ks = float(_st.kstest(x, "norm", args=(mu, s)).statistic)
    eps_dkw = math.sqrt(math.log(4.0 / alpha) / (2.0 * n))
    a_max = float(_st.t.ppf(1.0 - alpha / 8.0, n - 1)) / math.sqrt(n)  # |μ − x̄|/s
    m4 = float(np.mean((x - mu) ** 4))
    # |σ²/s² − 1|
    dv = float(_st.norm.ppf(1.0 - alpha / 8.0)) * math.sqrt(max(m4 - s2**2, 0.0) / n) / s2
    b_lo, b_hi = math.sqrt(max(1.0 - dv, 1e-12)), math.sqrt(1.0 + dv)
    a_grid, b_grid = np.meshgrid(np.linspace(0.0, a_max, 5), np.linspace(b_lo, b_hi, 9))
    eps_fit = float(np.max(_gauss_cdf_gap(a_grid, b_grid)))
    half = eps_dkw + eps_fit
    return {
        "ks": ks,
        "lo": max(0.0, ks - half),
        "hi": min(1.0, ks + half),
        "eps_dkw": eps_dkw,
        "eps_fit": eps_fit,
        "n": n,
    }


def relative_spread(
    values: Any,
    ses: Any,
    *,
    dof: int | None = None,
    confidence: float = 0.99,
    n_draw: int = 20000,
    seed: int = 0,
) -> Estimate:
    """Relative spread (max − min)/mean of a few estimates and a confidence interval for it.

    ``values`` are independent estimates (e.g. one growth rate per data set) with standard errors
    ``ses``.  The interval is a parametric bootstrap: each value is redrawn as value + se·T (T
    Student's t with ``dof`` degrees of freedom, normal when ``dof`` is None) and the spread
    recomputed; the interval is the central ``confidence`` quantile range of the redrawn spreads.
    It includes the upward bias of a max − min of noisy values, which a delta-method error misses.
    Returns an :class:`Estimate` with that ``interval``.
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    s = np.asarray(ses, dtype=np.float64).ravel()
    if v.size < 2 or v.shape != s.shape:
        raise ParameterError(
            "relative_spread needs at least 2 values and one standard error per value"
        )
    if not 0 < confidence < 1:
        raise ParameterError(f"confidence={confidence!r} must lie strictly between 0 and 1")
    n_draw = check_positive_int("n_draw", n_draw)
    rng = np.random.default_rng(seed)
    shape = (n_draw, v.size)
    noise = rng.standard_t(dof, size=shape) if dof else rng.standard_normal(shape)
    draws = v + s * noise

    def spread(x: np.ndarray) -> np.ndarray:
        return (x.max(axis=-1) - x.min(axis=-1)) / np.abs(x.mean(axis=-1))

    a = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(spread(draws), [a, 1.0 - a])
    return interval_estimate(float(spread(v)), float(lo), float(hi))
