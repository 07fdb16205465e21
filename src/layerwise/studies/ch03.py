"""Chapter 3's study (Labatie 2019, §5: vanilla nets): what the chapter derives from the moments
engine's runs with the science of :mod:`layerwise.labatie` — the log-moments of Fig. 2 (Gaussian
fits, drift, diffusion, conservation of the expectation, log-normal balance), the distributions of
the paper's convolutional nets against the authors' published percentiles and spreads (widths 128
and 512), the diffusion against the width, the increments and effective ranks of Fig. 3,
co-activation and the data sets.
Numbers, arrays and estimates only: the chapter words its conclusions."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import published
from ..claims import replicates_to_decide
from ..labatie import (
    drift_diffusion,
    gaussian_fit,
    layer_increments,
    lognormal_balance,
    lognormal_skewness,
    one_layer_conservation,
    variance_curvature,
)
from ..params import ParameterError
from ..stats import (
    Estimate,
    bootstrap,
    estimate,
    interval_estimate,
    ks_gaussian_interval,
    linear_fit,
    log_mean_exp,
    ratio_of_means,
    skewness_se,
)

#: The two log-moments of Fig. 2: key → the engine's arrays at the layer input (loc1) and output.
LOG_MOMENTS = {
    "nu2": ("nu2_signal_loc1", "nu2_signal_loc3"),
    "mu2dx": ("mu2_noise_loc1", "mu2_noise_loc3"),
}


# ----------------------------------------------------------------------------------------------
# Fig. 2: log-moments across networks, drift, diffusion, conservation (Labatie §5, Theorem 1)
# ----------------------------------------------------------------------------------------------
def vanilla_log_moments(
    depth: Any, arrays: Mapping[str, np.ndarray], n_layers: int, *, seed: int = 0
) -> dict[str, Any]:
    """Labatie's Fig. 2 and §5 drift/diffusion study from one engine run recording every layer.

    ``arrays`` holds the engine's ``nu2_signal_loc1/loc3`` and ``mu2_noise_loc1/loc3``
    (networks × layers 1..L; loc1 of layer 1 is x⁰).  Returns, for ``"nu2"`` (signal ν₂) and
    ``"mu2dx"`` (noise μ₂): ``moments`` (networks × (L + 1), layers 0..L), ``logs`` = log m^l/m⁰
    (l = 1..L), at the ``quarters`` L/4, L/2, 3L/4, L (column indices ``qi``) the Gaussian
    fits ``gauss`` (:func:`~layerwise.labatie.gaussian_fit` as estimates: ``mean``, ``variance``,
    ``skewness``, ``excess_kurtosis``) and the KS distances ``ks`` with their guaranteed
    intervals; the estimates over the networks of the drift-diffusion slopes over the quarters
    (``drift``, ``diffusion``, ``curvature``: the quadratic term of the variance relative to the
    line, whose value for ballistic spreading is ``ballistic``), of the ``conservation`` of the
    expectation one layer at a time, of the log-normal ``balance`` and of the ``skew`` at l = L;
    ``lme`` (L × 2: log of the sample mean of m^l/m⁰ and its error, the figure's curve) and
    ``lme_last``, its value at l = L as an estimate.  ``n`` is the number of networks.  The
    alternatives of the Fig. 2 claims, at l = L: ``raw_ks``, the KS distance to a Gaussian of the
    moment ratio itself (not its log), and ``lognormal_skew``, the skewness of a log-normal with
    the measured variance."""
    d = np.asarray(depth)
    L = int(n_layers)
    if not np.array_equal(d, np.arange(1, L + 1)):
        raise ParameterError("the Fig. 2 run must record every layer (loc1 of layer 1 is x^0)")
    moments = {  # (networks, L + 1): the moment at layers 0, 1, …, L
        k: np.concatenate([arrays[first][:, :1], arrays[out]], axis=1)
        for k, (first, out) in LOG_MOMENTS.items()
    }
    logs = {k: np.log(m[:, 1:] / m[:, :1]) for k, m in moments.items()}  # log m^l/m^0, l = 1..L
    quarters = [L // 4, L // 2, 3 * L // 4, L]
    qi = [q - 1 for q in quarters]
    n = int(logs["nu2"].shape[0])
    dd = {
        k: drift_diffusion(np.array(quarters, float), a[:, qi], seed=seed) for k, a in logs.items()
    }

    def over_networks(value: float, se: float) -> Estimate:
        return Estimate(float(value), float(se), n - 1, n)

    def gauss(f: Mapping[str, float]) -> dict[str, Estimate]:
        dof, m = f["n"] - 1, f["n"]
        return {
            "mean": Estimate(f["mu"], f["se_mu"], dof, m),
            "variance": Estimate(f["var"], f["se_var"], dof, m),
            "skewness": Estimate(f["skew"], f["se_skew"], dof, m),
            "excess_kurtosis": Estimate(f["excess_kurtosis"], f["se_kurtosis"], dof, m),
        }

    def ks(x: np.ndarray) -> Estimate:
        r = ks_gaussian_interval(x)
        return interval_estimate(r["ks"], r["lo"], r["hi"], n=r["n"])

    conservation = {k: one_layer_conservation(m) for k, m in moments.items()}
    lme = {k: np.array([log_mean_exp(a[:, i]) for i in range(L)]) for k, a in logs.items()}
    return {
        "depth": d,
        "moments": moments,
        "logs": logs,
        "quarters": quarters,
        "qi": qi,
        "n": n,
        "gauss": {k: [gauss(gaussian_fit(a[:, i])) for i in qi] for k, a in logs.items()},
        "ks": {k: [ks(a[:, i]) for i in qi] for k, a in logs.items()},
        "ballistic": {k: r["ballistic"] for k, r in dd.items()},
        "drift": {k: over_networks(r["drift"], r["se_drift"]) for k, r in dd.items()},
        "diffusion": {k: over_networks(r["diffusion"], r["se_diffusion"]) for k, r in dd.items()},
        "curvature": {
            k: over_networks(r["curvature_var"], r["se_curvature_var"]) for k, r in dd.items()
        },
        "conservation": {
            k: Estimate(c["log_mean"], c["se"], c["dof"], c["n"]) for k, c in conservation.items()
        },
        "balance": {
            k: over_networks(*lognormal_balance(a[:, -1], seed=seed)) for k, a in logs.items()
        },
        "skew": {k: over_networks(*skewness_se(a[:, -1], seed=seed)) for k, a in logs.items()},
        "lme": lme,
        "lme_last": {k: over_networks(*v[-1]) for k, v in lme.items()},
        "raw_ks": {
            k: ks_gaussian_interval(np.exp(a[:, -1] - a[:, -1].max()))["ks"]
            for k, a in logs.items()
        },
        "lognormal_skew": {
            k: lognormal_skewness(np.var(a[:, -1], ddof=1)) for k, a in logs.items()
        },
    }


# ----------------------------------------------------------------------------------------------
# Fig. 2 of the paper's convolutional nets against the authors' 10 000 networks
# ----------------------------------------------------------------------------------------------
def ks_versus_published(
    sample: Any, percentiles: Any, n_reference: int, alpha: float = 0.01
) -> dict[str, float]:
    """Two-sample Kolmogorov–Smirnov comparison of our ``sample`` (one value per network) with the
    authors' distribution over their ``n_reference`` networks, known through its percentiles.

    ``ks``: sup |F_ours − F_authors| over our sample points (both one-sided gaps of the step
    function); ``critical``: the asymptotic two-sample critical value at level ``alpha``,
    √(−ln(α/2)/2)·√((n + m)/(n m)), which the statistic exceeds with probability ≤ α when both
    samples come from one distribution, plus :data:`layerwise.published.PERCENTILE_GRID_ERROR` for
    the rebuilt distribution function; ``n``, ``m`` the two sample sizes.
    """
    x = np.sort(np.asarray(sample, dtype=float).ravel())
    n, m = x.size, int(n_reference)
    if n < 2 or m < 2:
        raise ParameterError(f"need at least 2 networks on each side, got n={n}, n_reference={m}")
    cdf = published.published_cdf(x, percentiles)
    i = np.arange(1, n + 1)
    ks = float(max(np.max(i / n - cdf), np.max(cdf - (i - 1) / n)))
    crit = ks_critical(n, m, alpha)
    return {"ks": ks, "critical": crit + published.PERCENTILE_GRID_ERROR, "n": n, "m": m}


def ks_critical(n: int, m: int, alpha: float = 0.01) -> float:
    """The asymptotic two-sample Kolmogorov–Smirnov critical value at level ``alpha`` for samples
    of ``n`` and ``m``: √(−ln(α/2)/2)·√((n + m)/(n m))."""
    if n < 1 or m < 1 or not 0 < alpha < 1:
        raise ParameterError(f"need n, m >= 1 and 0 < alpha < 1, got n={n}, m={m}, alpha={alpha}")
    return math.sqrt(-math.log(alpha / 2) / 2) * math.sqrt((n + m) / (n * m))


def published_ks_distance(percentiles_a: Any, percentiles_b: Any) -> float:
    """Kolmogorov–Smirnov distance sup |F_a − F_b| between two of the authors' distributions, each
    rebuilt from its percentiles 1…99 (:func:`layerwise.published.published_cdf`): both are
    piecewise linear, so the supremum is attained at one of their breakpoints."""
    a, b = np.asarray(percentiles_a, dtype=float), np.asarray(percentiles_b, dtype=float)
    x = np.concatenate([a, b])
    return float(np.max(np.abs(published.published_cdf(x, a) - published.published_cdf(x, b))))


def fig2_versus_authors(
    study: Mapping[str, Any], experiment: str = "vanilla_histo"
) -> dict[str, Any]:
    """Our Fig. 2 distributions (``study`` of :func:`vanilla_log_moments`) against the authors'
    10 000 networks of ``experiment`` (``vanilla_histo``: the paper's convolutional nets;
    ``vanilla_histo_fc``: their fully-connected counterpart): ``authors``
    (their percentiles 1…99 of each log-moment at the four depths), ``ours`` (our log-moments at
    those depths, networks × 4), ``ks`` (:func:`ks_versus_published` at l = L) and
    ``infinite_width``: the KS distance of a distribution concentrated at the mean-field log
    ratio 0 (no diffusion) from theirs, max(F(0), 1 − F(0))."""
    authors = {
        k: published.moment(experiment, out).percentiles_ln for k, (_, out) in LOG_MOMENTS.items()
    }
    ours = {k: study["logs"][k][:, study["qi"]] for k in authors}
    n_authors = published.moment(experiment, LOG_MOMENTS["nu2"][1]).n
    at_zero = {k: float(published.published_cdf(0.0, authors[k][-1])) for k in authors}
    return {
        "authors": authors,
        "ours": ours,
        "ks": {k: ks_versus_published(ours[k][:, -1], authors[k][-1], n_authors) for k in authors},
        "infinite_width": {k: max(f, 1 - f) for k, f in at_zero.items()},
    }


def log_spread_versus_published(
    values: Any, reference_sd: float, n_reference: int, *, seed: int = 0
) -> Estimate:
    """The spread of our ``values`` (one per network) against a published standard deviation
    ``reference_sd`` over the authors' ``n_reference`` networks, as ln(s/σ_ref) with s the sample
    standard deviation (ddof = 1).  Its standard error combines both sample sizes: ours is the
    larger of a bootstrap over the networks (400 resamples) and the Gaussian-sample value
    1/√(2(n − 1)) (so a light-tailed sample cannot make it look surer than a Gaussian one), theirs
    1/√(2(m − 1)); n − 1 degrees of freedom (ours, the smaller sample)."""
    x = np.asarray(values, dtype=float).ravel()
    n, m = x.size, int(n_reference)
    if n < 3 or m < 3:
        raise ParameterError(f"need at least 3 networks on each side, got n={n}, n_reference={m}")
    if not (np.all(np.isfinite(x)) and reference_sd > 0):
        raise ParameterError("values must be finite and reference_sd > 0")
    s, se_boot = bootstrap(lambda a: np.log(np.std(a, ddof=1)), [x], seed=seed)
    se_ours = max(float(se_boot), 1 / math.sqrt(2 * (n - 1)))
    se_theirs = 1 / math.sqrt(2 * (m - 1))
    se = math.hypot(se_ours, se_theirs)
    # reference_se: the authors' part of se, so the scorecard can say which ± is whose
    return Estimate(float(s) - math.log(reference_sd), se, n - 1, n, reference_se=se_theirs)


def spread_separation(n: int, n_reference: int, sd_a: float, sd_b: float) -> float:
    """How many standard errors of ln(s/σ_ref) (Gaussian samples of ``n`` networks against
    ``n_reference``) separate two spreads ``sd_a`` and ``sd_b``: |ln(sd_a/sd_b)| over
    √(1/(2(n − 1)) + 1/(2(m − 1)))."""
    if n < 2 or n_reference < 2 or not (sd_a > 0 and sd_b > 0):
        raise ParameterError("need n, n_reference >= 2 and positive spreads")
    se = math.sqrt(1 / (2 * (n - 1)) + 1 / (2 * (n_reference - 1)))
    return abs(math.log(sd_a / sd_b)) / se


def fig2_spread(study: Mapping[str, Any], *, seed: int = 0) -> dict[str, Any]:
    """The spread over networks of Fig. 2's log-moments (``study`` of :func:`vanilla_log_moments`
    on the paper's convolutional nets of width 128) against the authors' two published widths:
    their standard deviation over networks of log10 at each depth (``vanilla_histo``, width 128,
    and ``vanilla_histo_512``, width 512; 10 000 networks each), in natural-log units.  Per key
    of :data:`LOG_MOMENTS`: ``ours`` (our SDs at the quarters, as estimates with the
    Gaussian-sample standard error s/√(2(n − 1))), ``w128``, ``w512`` (the authors'), ``estimate``
    (:func:`log_spread_versus_published` at l = L against width 128), ``alternative``
    ln(σ₅₁₂/σ₁₂₈) at l = L (≈ −ln 2: σ ∝ 1/√N), ``distance`` its size, ``separation``
    (:func:`spread_separation` of the two widths at our ``n``) and
    ``ks_widths``, the KS distance between the authors' two widths at l = L
    (:func:`published_ks_distance`); ``n``, ``m`` the sample sizes."""
    quarters, n = study["quarters"], int(study["n"])
    ln10 = math.log(10.0)
    out: dict[str, Any] = {"n": n}
    for k, (_, moment) in LOG_MOMENTS.items():
        w128 = published.moment("vanilla_histo", moment)
        w512 = published.moment("vanilla_histo_512", moment)
        i = [w128.index(q) for q in quarters]
        j = [w512.index(q) for q in quarters]
        s128, s512 = w128.std_log10[i] * ln10, w512.std_log10[j] * ln10
        ours = study["logs"][k][:, study["qi"]]
        sd = np.std(ours, axis=0, ddof=1)
        alt = math.log(s512[-1] / s128[-1])
        out["m"] = w128.n
        out[k] = {
            "ours": [Estimate(float(s), float(s) / math.sqrt(2 * (n - 1)), n - 1, n) for s in sd],
            "w128": s128,
            "w512": s512,
            "estimate": log_spread_versus_published(ours[:, -1], s128[-1], w128.n, seed=seed),
            "alternative": alt,
            "distance": abs(alt),
            "separation": spread_separation(n, w128.n, s128[-1], s512[-1]),
            "ks_widths": published_ks_distance(
                w128.percentiles_ln[i[-1]], w512.percentiles_ln[j[-1]]
            ),
        }
    return out


def networks_to_decide(e: Estimate, edges: Any, confidence: float = 0.99) -> int | None:
    """The number of networks k ≥ 2 at which a mean ``e`` over n networks, with the same mean and
    spread, would put its whole t interval on one side of the nearest of ``edges`` (one value, or
    the ends of a bracket): :func:`layerwise.claims.replicates_to_decide`, the scorecard's own
    count, searched from 2 networks up."""
    return replicates_to_decide(
        e.mean, e.se, e.n, np.atleast_1d(edges).astype(float), confidence, start=2
    )


# ----------------------------------------------------------------------------------------------
# The diffusion against the width (Labatie §5, App. A)
# ----------------------------------------------------------------------------------------------
def width_diffusion(
    runs: Mapping[int, tuple[np.ndarray, Mapping[str, np.ndarray]]], quarters: Any, *, seed: int = 0
) -> dict[str, Any]:
    """Diffusion of log ν₂(x) against the width (Labatie §5, App. A): for each width ``w`` of
    ``runs`` ({w: (depth, arrays)} of engine runs of equally many networks), the per-layer
    diffusion over the depths ``quarters`` (:func:`~layerwise.labatie.drift_diffusion`, bootstrap
    SEs), and a weighted fit of log diffusion against log N (``fit``: slope ≈ −1 when diffusion ∝
    1/N).  Returns ``widths`` and, as estimates with networks − 1 d.o.f., the ``diffusion`` at each
    width, the fitted ``exponent`` and the difference ``slowing`` of the diffusions at the smallest
    and the largest width."""
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
    n = {int(A["nu2_signal_loc3"].shape[0]) for _, A in runs.values()}
    if len(n) != 1:
        raise ParameterError(f"every width needs the same number of networks, got {sorted(n)}")
    n = n.pop()
    return {
        "widths": np.array(widths),
        "diffusion": [Estimate(float(m), float(e), n - 1, n) for m, e in zip(D, Dse, strict=True)],
        "exponent": Estimate(fit["slope"], fit["slope_se"], n - 1, n),
        "slowing": Estimate(float(D[0] - D[-1]), float(np.hypot(Dse[0], Dse[-1])), n - 1, n),
    }


# ----------------------------------------------------------------------------------------------
# Fig. 3: increments of χ, effective rank, growth of χ (Labatie §5, Theorem 2)
# ----------------------------------------------------------------------------------------------
def sensitivity_study(
    depth: Any, arrays: Mapping[str, np.ndarray], n_layers: int
) -> dict[str, Any]:
    """Labatie's Fig. 3 statistics of one engine run: the per-layer increments ``dchi`` of χ at the
    records (from χ⁰ = ``chi_loc1`` of the first record; geometric means over gaps between
    records), and estimates over networks of the mean increment over layers ≤ 10 (``early``) and
    over the last quarter l > 3L/4 (``late``), of the paired ``drop`` (late − 1) − (early − 1)/2
    (≤ 0 when the excess at least halves), of r_eff(x^L) (``reff``), of r_eff at the first record
    (``reff_first``: x⁰ when r_eff was recorded at loc1, else the first record's output) and of
    log10 χ^L (``log10chi``); ``n`` networks."""
    d = np.asarray(depth)
    chi = arrays["chi_loc3"]
    dchi = layer_increments(arrays["chi_loc1"][:, :1], chi, d)
    early = dchi[:, d <= 10].mean(axis=1)
    late = dchi[:, d > 3 * n_layers // 4].mean(axis=1)
    loc1 = arrays.get("reff_signal_loc1")
    recorded_x0 = loc1 is not None and np.isfinite(loc1).all(axis=0).any()
    first = _first_recorded(loc1 if recorded_x0 else arrays["reff_signal_loc3"])
    return {
        "dchi": dchi,
        "n": int(dchi.shape[0]),
        "early": estimate(early),
        "late": estimate(late),
        "drop": estimate((late - 1) - 0.5 * (early - 1)),
        "reff": estimate(arrays["reff_signal_loc3"][:, -1]),
        "reff_first": estimate(first),
        "log10chi": estimate(np.log10(chi[:, -1])),
    }


def _first_recorded(a: Any) -> np.ndarray:
    """The first column of ``a`` (networks × records) that every network recorded (r_eff may be
    recorded at a subset of the records only, NaN elsewhere)."""
    a = np.asarray(a, dtype=np.float64)
    ok = np.flatnonzero(np.isfinite(a).all(axis=0))
    return a[:, ok[0] if ok.size else 0]


def authors_fig3_ends(
    variants: tuple[str, ...] = ("vanilla_symmetric", "vanilla_zero_padding"),
) -> dict[str, dict[str, Any]]:
    """The authors' convolutional vanilla nets (Fig. 3 variants) at their last record, per
    variant: estimates over their networks of log10 χ (``log10chi``) and of the effective rank of
    the signal (``reff``), and the spread of log10 χ between networks (``log10chi_std``)."""
    out = {}
    for v in variants:
        chi = published.moment(v, "chi_loc3")
        reff = published.moment(v, "reff_signal_loc3")
        sd, n, n_reff = float(chi.std_log10[-1]), int(chi.n), int(reff.n)
        out[v] = {
            "log10chi": Estimate(float(chi.mean_log10[-1]), sd / math.sqrt(n), n - 1, n),
            "log10chi_std": sd,
            "reff": Estimate(
                float(reff.mean[-1]), float(reff.std[-1]) / math.sqrt(n_reff), n_reff - 1, n_reff
            ),
        }
    return out


# ----------------------------------------------------------------------------------------------
# Co-activation and the data sets
# ----------------------------------------------------------------------------------------------
def coactivation_trend(coact: Mapping[str, np.ndarray], early: int = 10) -> dict[str, Any]:
    """Estimates over networks from :func:`layerwise.labatie.vanilla_coactivation`: the
    always-on/off fraction at the first record ≥ ``early`` (``early``) and at the last record
    (``late``), their paired difference (``growth``) and the linearity index at the last record
    (``linearity``) and at the first (``linearity_first``)."""
    i = int(np.searchsorted(coact["depth"], early))
    c = coact["coactive"]
    return {
        "early": estimate(c[:, i]),
        "late": estimate(c[:, -1]),
        "growth": estimate(c[:, -1] - c[:, i]),
        "linearity": estimate(coact["linearity"][:, -1]),
        "linearity_first": estimate(coact["linearity"][:, 0]),
    }


def dataset_estimates(
    runs: Mapping[str, tuple[np.ndarray, Mapping[str, np.ndarray]]],
) -> dict[str, dict[str, Estimate]]:
    """For each data set of ``runs`` ({name: (depth, arrays)}), estimates over networks of the
    effective rank of the signal entering layer 1 (``reff_input``), of log10 of the sensitivity at
    the last recorded layer (``log10chi_last``, the form of :func:`sensitivity_study`) and of the
    signal's effective rank there (``reff_last``); the chapter names them for the reader (Labatie
    2019, Eq. 3–4 for χ, §5 for the effective rank)."""
    return {
        ds: {
            "reff_input": estimate(A["reff_signal_loc1"][:, 0]),
            "log10chi_last": estimate(np.log10(A["chi_loc3"][:, -1])),
            "reff_last": estimate(A["reff_signal_loc3"][:, -1]),
        }
        for ds, (_, A) in runs.items()
    }


def input_conditioning_ratio(
    runs: Mapping[str, tuple[np.ndarray, Mapping[str, np.ndarray]]],
    numerator: str = "gaussian",
    denominator: str = "patches",
) -> Estimate:
    """The ratio of the mean effective rank of the signal entering layer 1 between two data sets
    of ``runs`` ({name: (depth, arrays)}), with its delta-method error
    (:func:`layerwise.stats.ratio_of_means`)."""
    return ratio_of_means(
        runs[numerator][1]["reff_signal_loc1"][:, 0], runs[denominator][1]["reff_signal_loc1"][:, 0]
    )


# ----------------------------------------------------------------------------------------------
# The authors' fully-connected arrays (vanilla_histo_fc, vanilla_fc): the chapter's rules applied
# to their networks (reference controls) and the estimators run on synthetic truth (estimator
# controls)
# ----------------------------------------------------------------------------------------------
def _gauss_cdf(z: Any) -> np.ndarray:
    from scipy.special import ndtr

    return ndtr(np.asarray(z, dtype=float))


def percentile_ks_gaussian(
    percentiles: Any, mean: float, sd: float, n: int, confidence: float = 0.99
) -> Estimate:
    """KS distance of a distribution known through its percentiles 1…99 (and the mean ``mean``
    and standard deviation ``sd`` over its ``n`` networks) to the Gaussian of that mean and SD.

    D̂ = max_k |k/100 − Φ((q_k − mean)/sd)| at the percentiles; the population distance lies
    within D̂ ± (ε_DKW + ε_fit + :data:`layerwise.published.PERCENTILE_GRID_ERROR`), with
    ε_DKW = √(ln(4/α)/(2n)) and ε_fit the largest gap sup|Φ(z) − Φ((z − a)/b)| over the mean's and
    SD's own 1 − α/4 intervals (Student's t for the mean, a Gaussian sample's error for the
    variance) — the interval of
    :func:`layerwise.stats.ks_gaussian_interval` for a sample summarised by its percentiles."""
    from scipy.stats import norm
    from scipy.stats import t as t_dist

    from ..stats import _gauss_cdf_gap

    q = np.asarray(percentiles, dtype=float)
    if q.shape != (99,) or not (sd > 0 and n >= 4):
        raise ParameterError("need the 99 percentiles, sd > 0 and n >= 4 networks")
    alpha = 1.0 - confidence
    d = float(np.max(np.abs(np.arange(1, 100) / 100.0 - _gauss_cdf((q - mean) / sd))))
    eps_dkw = math.sqrt(math.log(4.0 / alpha) / (2.0 * n))
    # the grid of ks_gaussian_interval, with a Gaussian sample's fourth moment (3σ⁴)
    a_max = float(t_dist.ppf(1.0 - alpha / 8.0, n - 1)) / math.sqrt(n)
    dv = float(norm.ppf(1.0 - alpha / 8.0)) * math.sqrt(2.0 / n)
    a, b = np.meshgrid(
        np.linspace(0.0, a_max, 5),
        np.linspace(math.sqrt(max(1.0 - dv, 1e-12)), math.sqrt(1.0 + dv), 9),
    )
    eps_fit = float(np.max(_gauss_cdf_gap(a, b)))
    half = eps_dkw + eps_fit + published.PERCENTILE_GRID_ERROR
    return interval_estimate(d, max(0.0, d - half), d + half, n=n)


def published_ks_gaussian(experiment: str, moment: str, depth: int) -> dict[str, Any]:
    """The Fig. 2 rule "nearly Gaussian" applied to the authors' networks: ``log`` the KS
    distance of ln m at ``depth`` to its Gaussian (:func:`percentile_ks_gaussian`, an Estimate
    with its guaranteed 99 % interval) and ``raw`` the same distance for the moment itself (not
    its log; the alternative the rule rules out), from its published quantiles."""
    m = published.moment(experiment, moment)
    i = m.index(depth)
    if m.percentiles_ln is None or m.mean_ln is None:
        raise ParameterError(f"{experiment}/{moment} has no percentiles of its log")
    log = percentile_ks_gaussian(m.percentiles_ln[i], m.mean_ln[i], m.std_ln[i], m.n)
    raw = percentile_ks_gaussian(np.exp(m.percentiles_ln[i]), m.mean[i], m.std[i], m.n)
    return {"log": log, "raw": raw.mean, "n": m.n}


def published_balance(experiment: str, moment: str, depth: int) -> Estimate:
    """−2·mean/variance of ln m at ``depth`` over the authors' networks (the log-normal balance,
    1 for a log-normal ratio with conserved expectation), its standard error by the delta method
    for a Gaussian sample: se² = b²·(σ²/(n·μ²) + 2/(n − 1))."""
    m = published.moment(experiment, moment)
    i = m.index(depth)
    mu, sd, n = float(m.mean_ln[i]), float(m.std_ln[i]), m.n
    b = -2.0 * mu / sd**2
    se = abs(b) * math.sqrt(sd**2 / (n * mu**2) + 2.0 / (n - 1))
    return Estimate(b, se, n - 1, n)


def published_curvature(experiment: str, moment: str) -> Estimate:
    """:func:`~layerwise.labatie.variance_curvature` of the variance of ln m over the authors'
    networks at their recorded depths, with a delta-method standard error that treats the depths'
    variances as independent, each with the Gaussian-sample error var·√(2/(n − 1)) (an
    approximation: the published file holds no covariances between depths)."""
    m = published.moment(experiment, moment)
    var = np.asarray(m.std_ln, dtype=float) ** 2
    c0 = variance_curvature(m.depth, var)
    se_v = var * math.sqrt(2.0 / (m.n - 1))
    grad = []
    for k in range(var.size):
        h = 1e-6 * var[k]
        v = var.copy()
        v[k] += h
        grad.append((variance_curvature(m.depth, v) - c0) / h)
    return Estimate(c0, float(np.sqrt(np.sum((np.array(grad) * se_v) ** 2))), m.n - 1, m.n)


def theorem1_rates(experiment: str, moment: str) -> dict[str, Any]:
    """Theorem 1's statement on the authors' variance of ln m: v_min·l ≤ Var ≤ v_max·l, i.e. the
    rates Var(l)/l at the recorded depths are positive and bounded.  ``rates`` (Var/l at each
    depth), ``spread`` (their max/min), ``ballistic_spread`` (l_max/l_min: the spread of Var ∝ l²
    over the same depths) and ``between_lines`` (every rate positive and the spread below the
    ballistic one: nearer two lines through the origin than ballistic spreading)."""
    m = published.moment(experiment, moment)
    d = np.asarray(m.depth, dtype=float)
    rates = np.asarray(m.std_ln, dtype=float) ** 2 / d
    spread = float(rates.max() / rates.min())
    ballistic = float(d.max() / d.min())
    return {
        "rates": rates,
        "spread": spread,
        "ballistic_spread": ballistic,
        "between_lines": bool(np.all(rates > 0) and spread < ballistic),
    }


def linear_diffusion_control(
    n: int, depth: int, quarters: Any, rate: float, drift: float = 0.0, *, seed: int = 0
) -> dict[str, Any]:
    """The estimator control of the diffusion's shape: ``n`` Gaussian random walks of ``depth``
    steps with per-layer variance ``rate`` (so Var = rate·l exactly, a known linear law) and mean
    step ``drift``, read at ``quarters`` and passed through
    :func:`layerwise.labatie.drift_diffusion` as the chapter does.  Returns ``curvature`` (an
    Estimate: the truth is 0), ``ballistic`` and ``balance`` (−2·mean/var at the last depth with
    its bootstrap error; the truth is −2·drift/rate)."""
    if n < 4 or rate <= 0:
        raise ParameterError(f"need n >= 4 walks and rate > 0, got n={n}, rate={rate}")
    rng = np.random.default_rng(seed)
    walks = np.cumsum(drift + math.sqrt(rate) * rng.standard_normal((n, depth)), axis=1)
    q = np.asarray(quarters, dtype=int)
    r = drift_diffusion(q.astype(float), walks[:, q - 1], seed=seed)
    return {
        "curvature": Estimate(r["curvature_var"], r["se_curvature_var"], n - 1, n),
        "ballistic": r["ballistic"],
        "balance": Estimate(*lognormal_balance(walks[:, -1], seed=seed), n - 1, n),
    }


def ks_control(percentiles: Any, n: int, n_reference: int, *, seed: int = 0) -> dict[str, float]:
    """The estimator control of :func:`ks_versus_published`: ``n`` networks drawn from the
    authors' own distribution (inverse of its percentile-rebuilt distribution function) against
    it — the truth is "same distribution"; returns the comparison's ``ks`` and ``critical`` and
    ``passed`` (the test accepts the truth: ks ≤ critical)."""
    u = np.random.default_rng(seed).uniform(0.01, 0.99, size=n)
    sample = np.interp(u, np.arange(1, 100) / 100.0, np.asarray(percentiles, dtype=float))
    out: dict[str, Any] = ks_versus_published(sample, percentiles, n_reference)
    out["passed"] = bool(out["ks"] <= out["critical"])
    return out


def chi_versus_authors(
    sensitivity: Mapping[str, Any], experiment: str = "vanilla_fc", depth: int = 200
) -> Estimate:
    """Our mean log10 χᴸ (``sensitivity`` of :func:`sensitivity_study`) minus the authors' at
    ``depth`` (their mean of log10 χ at loc3 over their networks), the standard errors combined
    (``reference_se`` theirs)."""
    ours = sensitivity["log10chi"]
    m, se = published.moment(experiment, "chi_loc3").mean_se(depth, log10=True)
    return Estimate(ours.mean - m, math.hypot(ours.se, se), ours.dof, ours.n, reference_se=se)
