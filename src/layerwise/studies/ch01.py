"""Chapter 1's study (Donier 2019, §2 and Appendix A): what the chapter derives from the science of
:mod:`layerwise.capacity` and :mod:`layerwise.layer` — the idealised ν table, the block ratios of
fixed layers and their deviation from Eq. 14, footnote 3 in two norms, capacities at intermediate ν,
the empirical capacities of a pseudo-random layer, Appendix A's redundancy counts and ν(f; q) of
smooth activations by Monte-Carlo. Numbers, arrays and estimates only: the chapter words its
conclusions."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .. import capacity, layer
from ..params import ParameterError, check_positive_int
from ..seeds import stream
from ..stats import Estimate, estimate, inverse_variance_mean, linear_fit, mean_se

#: Columns of a :func:`footnote3_two_norms` row for each norm: n, measured, its SE, closed form.
FOOTNOTE3_COLUMNS: dict[str, list[int]] = {"frobenius": [0, 1, 2, 3], "direction": [0, 4, 5, 6]}


# ------------------------------------------------------------------------------------------------
# The decoupling scale ν (Eqs. 13–15): the idealisation and fixed layers
# ------------------------------------------------------------------------------------------------
def nu_table_unit(
    k: int, *, cases: Sequence[Sequence[Any]], n: int, m: int, n_samples: int, seed: int
) -> dict[str, np.ndarray]:
    """:func:`layerwise.capacity.nu_monte_carlo` of case ``k`` of ``cases`` (activation, slope),
    stream ("nu", k), one unit of work (a chapter maps it over the cases through
    ``Chapter.cached_units``, here or on a cluster). Returns ``table`` (1, 5): ν, its SE, the
    diagonal ratio, its SE, and ν of Eq. 13."""
    name, slope = cases[k]
    r = capacity.nu_monte_carlo(
        name, n=n, m=m, n_samples=n_samples, rng=stream(seed, "nu", k), slope=slope
    )
    nu, dg = r["nu"], r["diag"]
    row = [nu.mean, nu.se, dg.mean, dg.se, capacity.nu_closed_form(name, slope)]
    return {"table": np.array([row])}


def fixed_layer_ratios(
    *,
    cases: Sequence[Sequence[Any]],
    inputs: str,
    sides: Sequence[int],
    m: int,
    draws: int,
    n_samples: int,
    seed: int,
) -> dict[str, np.ndarray]:
    """Off-diagonal block ratios of fixed layers: for every input side (n = side²), ``draws``
    layers P (m unit columns, stream ("fixed_P", side, d)) on the same ``n_samples`` inputs of
    ``inputs``, every activation of ``cases`` (pseudo-random units keyed by the draw).

    Returns ``ns``, ``skew`` (len(sides), draws, m) the sample skewness of every pre-activation
    z_i = p_iᵀY, and per case k ``ratios_k`` (len(sides), draws, m(m−1)/2), the ratios r_ij,
    i < j, ``noise_k`` (len(sides), draws) the mean squared standard error of those ratios (their
    sampling noise floor), and ``diag_k`` (len(sides), draws), the mean diagonal ratio (1 in
    Eq. 14)."""
    m, draws = check_positive_int("m", m), check_positive_int("draws", draws)
    if m < 2:
        raise ParameterError(f"m={m} must be >= 2 (off-diagonal blocks need two units)")
    out: dict[str, np.ndarray] = {"ns": np.array([s * s for s in sides], float)}
    R = np.zeros((len(cases), len(sides), draws, m * (m - 1) // 2))
    LAW = np.zeros_like(R)
    D = np.zeros((len(cases), len(sides), draws))
    NZ = np.zeros((len(cases), len(sides), draws))
    SK = np.zeros((len(sides), draws, m))
    for a, side in enumerate(sides):
        Y = layer.layer_inputs(inputs, side, n_samples, seed + 7919 * side)
        q = layer.gram_quadratic_forms(Y)
        Sigma = np.eye(side * side) if inputs == "iid" else Y.T @ Y / len(Y)
        for d in range(draws):
            P = capacity.random_unit_columns(
                side * side, m, stream(seed, "fixed_P", inputs, side, d)
            )
            f = layer.fixed_layer_pairs(Y, P, cases, Sigma=Sigma, q=q, unit_seed=1000 * (d + 1))
            SK[a, d] = f["skew"]
            R[:, a, d], D[:, a, d], NZ[:, a, d], LAW[:, a, d] = (
                f[k] for k in ("ratios", "diag", "noise", "law")
            )
    out["skew"] = SK
    for k in range(len(cases)):
        out[f"ratios_{k}"], out[f"diag_{k}"], out[f"noise_{k}"] = R[k], D[k], NZ[k]
        out[f"law_{k}"] = LAW[k]
    return out


def paired_ratio(a: np.ndarray, b: np.ndarray) -> Estimate:
    """mean(a)/mean(b) of paired replicates (a_k, b_k) with the delta-method standard error
    sd(a − R·b)/(√K·mean b), K − 1 d.o.f."""
    a, b = (np.asarray(v, dtype=np.float64).ravel() for v in (a, b))
    if a.size != b.size or a.size < 2:
        raise ParameterError(f"a and b must be paired samples of size >= 2, got {a.size}, {b.size}")
    mb = float(b.mean())
    if mb == 0:
        raise ParameterError("b must not have mean 0")
    r = float(a.mean()) / mb
    se = float(np.std(a - r * b, ddof=1)) / (math.sqrt(a.size) * abs(mb))
    return Estimate(r, se, a.size - 1, a.size)


def law_residuals(fix: Mapping[str, np.ndarray], k: int, nu: float) -> dict[str, np.ndarray]:
    """Per layer (len(sides)·draws,) of a :func:`fixed_layer_ratios` run, case k: ``law``, the mean
    square over unit pairs of r_ij − E[η_iη_j] (the arcsin law), and ``ideal``, of r_ij − ``nu``
    (Eq. 13's idealisation: every pair = ν), each less the ratios' sampling noise floor."""
    r, law, noise = (np.asarray(fix[f"{key}_{k}"]) for key in ("ratios", "law", "noise"))
    return {
        "law": (np.mean((r - law) ** 2, axis=-1) - noise).ravel(),
        "ideal": (np.mean((r - nu) ** 2, axis=-1) - noise).ravel(),
    }


def law_summary(
    fix: Mapping[str, np.ndarray], cases: Sequence[Sequence[Any]], indices: Sequence[int]
) -> dict[str, Estimate]:
    """How much of a fixed layer's departure from Eq. 14 the arcsin law leaves: per case k of
    ``indices`` (key ``str(k)``) and pooled over them (``pooled``: the cases' mean squares summed
    per layer), the :func:`paired_ratio` over layers of the law's residual mean square to the
    idealisation's (0: the law explains every pair; 1: it does no better than ν)."""
    per = {k: law_residuals(fix, k, capacity.nu_closed_form(*cases[k])) for k in indices}
    out = {str(k): paired_ratio(v["law"], v["ideal"]) for k, v in per.items()}
    out["pooled"] = paired_ratio(
        sum(v["law"] for v in per.values()), sum(v["ideal"] for v in per.values())
    )
    return out


def difference(a: Estimate, b: Estimate) -> Estimate:
    """a − b of two independent estimates, standard errors in quadrature, Welch–Satterthwaite
    degrees of freedom."""
    va, vb = a.se**2, b.se**2
    dof = (va + vb) ** 2 / (va**2 / max(a.dof, 1) + vb**2 / max(b.dof, 1)) if va + vb > 0 else 1
    return Estimate(a.mean - b.mean, math.sqrt(va + vb), float(dof), a.n + b.n)


def spread_against_exact(
    fix: Mapping[str, np.ndarray], cases: Sequence[Sequence[Any]], k: int, n_min: float = 1.0
) -> Estimate:
    """Each layer's mean square of r_ij − ν (noise floor subtracted) over its exact expectation for
    columns uniform on the sphere and i.i.d. Gaussian inputs
    (:func:`layerwise.layer.pair_law_spread` at its n), estimated over the layers with n ≥
    ``n_min``: 1 when the spread across layers is the arcsin law's, 0 when every pair sits at ν."""
    ns = np.asarray(fix["ns"], float)
    use = ns >= n_min
    ideal = law_residuals(fix, k, capacity.nu_closed_form(*cases[k]))["ideal"]
    ideal = ideal.reshape(len(ns), -1)[use]
    exact_ms = np.array([layer.pair_law_spread(int(n), *cases[k]) for n in ns[use]])
    return estimate((ideal / exact_ms[:, None]).ravel())


def ratios_at(fix: Mapping[str, np.ndarray], n_cases: int, index: int) -> np.ndarray:
    """The off-diagonal ratios r_ij (Donier, Eq. 14) of every layer and unit pair at input-size
    ``index`` of a :func:`fixed_layer_ratios` run, one row per case: (n_cases, draws·pairs)."""
    n_cases = check_positive_int("n_cases", n_cases)
    return np.array([np.asarray(fix[f"ratios_{k}"])[index].ravel() for k in range(n_cases)])


def layer_mean_ratio(ratios: np.ndarray) -> Estimate:
    """Each layer's mean off-diagonal ratio (``ratios``: (layers, pairs)), estimated over the
    layers as independent replicates: the mean that Eq. 15 sets to ν = (α+β)²/4, its SE,
    layers − 1 d.o.f."""
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


def fixed_layer_heatmaps(
    *, cases: Sequence[Sequence[Any]], n: int, m: int, rho: float, n_samples: int, seed: int
) -> dict[str, np.ndarray]:
    """Empirical Σ̃ of ONE fixed layer (P from stream ("heat_P")) for Y ~ N(0, Σ), Σ_kl = ρ^|k−l|,
    for every case (Donier's Fig. 3, for an actual layer); ``S_k``, ``r_k`` (the m × m block
    ratios), ``Sigma``, ``P``."""
    Sigma = capacity.banded_covariance(n, rho)
    P = capacity.random_unit_columns(n, m, stream(seed, "heat_P"))
    Y = stream(seed, "heat_Y").standard_normal((n_samples, n)) @ np.linalg.cholesky(Sigma).T
    out = {"Sigma": Sigma, "P": P}
    for k, (name, slope) in enumerate(cases):
        E = capacity.eta(name, Y @ P, slope=slope, unit_seed=(np.arange(m) + 100 * k)[None, :])
        out[f"S_{k}"] = capacity.augmented_covariance(Y, E)
        out[f"r_{k}"] = capacity.block_ratios(out[f"S_{k}"], Sigma)[1]
    return out


# ------------------------------------------------------------------------------------------------
# How a fixed layer approaches Eq. 14 as n grows
# ------------------------------------------------------------------------------------------------
def ratio_deviation_fit(
    ratios: np.ndarray,
    ns: np.ndarray,
    nu: float,
    noise: np.ndarray | None = None,
    n_min: float = 1.0,
) -> dict[str, Any]:
    """Root-mean-square deviation of the off-diagonal ratios from ν per layer (``rms``: (len(ns),
    draws)), its sampling noise floor ``noise`` (mean squared SE) subtracted from the mean square,
    and the log-log least-squares fit of rms on n over every layer with n ≥ ``n_min``
    (:func:`loglog_slope`: ``fit`` and ``slope``, the exponent as an Estimate)."""
    ms = np.mean((np.asarray(ratios) - nu) ** 2, axis=-1)
    if noise is not None:
        ms = ms - np.asarray(noise)
    rms = np.sqrt(np.clip(ms, 1e-12, None))
    ns = np.asarray(ns, float)
    use = ns >= n_min
    fit, slope = loglog_slope(ns[use], rms[use])
    return {"rms": rms, "fit": fit, "slope": slope}


def loglog_slope(x: np.ndarray, y: np.ndarray) -> tuple[dict[str, float], Estimate]:
    """The least-squares line of log y on log x (:func:`layerwise.stats.linear_fit`) with every
    replicate a point (``y``: (len(x), replicates)): the fit and its slope as an Estimate with
    points − 2 d.o.f."""
    y = np.asarray(y, float)
    fit = linear_fit(np.repeat(np.log(np.asarray(x, float)), y.shape[1]), np.log(y).ravel())
    return fit, Estimate(fit["slope"], fit["slope_se"], int(y.size - 2), y.size)


def deviation_fits(
    fix: Mapping[str, np.ndarray],
    cases: Sequence[Sequence[Any]],
    labels: Mapping[int, str],
    n_min: float = 1.0,
) -> dict[str, dict[str, Any]]:
    """:func:`ratio_deviation_fit` of a :func:`fixed_layer_ratios` run for the cases ``labels``
    names (case index → label), each against its ν of Eq. 13, with the ratios' own noise floor
    subtracted."""
    return {
        lab: ratio_deviation_fit(
            fix[f"ratios_{k}"],
            fix["ns"],
            capacity.nu_closed_form(*cases[k]),
            fix[f"noise_{k}"],
            n_min=n_min,
        )
        for k, lab in labels.items()
    }


# ------------------------------------------------------------------------------------------------
# Footnote 3 in two norms
# ------------------------------------------------------------------------------------------------
def footnote3_two_norms(
    *, cases: Sequence[Sequence[Any]], ns: Sequence[int], n_samples: int, seed: int
) -> dict[str, np.ndarray]:
    """:func:`layerwise.capacity.footnote3_mc` for every case and n (stream ("fn3", k, j)). Returns
    per case ``rows_k`` (len(ns), 7): n, the squared Frobenius error, its SE, its closed form²,
    the squared error along p_j, its SE, its closed form² — SEs over the batches."""
    out = {}
    for k, (name, slope) in enumerate(cases):
        rows = []
        for j, n in enumerate(ns):
            r = capacity.footnote3_mc(
                name, n=n, n_samples=n_samples, rng=stream(seed, "fn3", k, j), slope=slope
            )
            f, fse = mean_se(r["frob2"])
            d, dse = mean_se(r["dir2"])
            rows.append(
                [
                    n,
                    f,
                    fse,
                    capacity.footnote3_error_closed_form(name, n, slope) ** 2,
                    d,
                    dse,
                    capacity.footnote3_direction_closed_form(name, slope) ** 2,
                ]
            )
        out[f"rows_{k}"] = np.array(rows, dtype=np.float64)
    return out


def footnote3_pooled_ratio(rows: np.ndarray, n_batches: int = 10) -> Estimate:
    """Measured/closed-form ratio of the squared footnote-3 error pooled over n (``rows``: columns
    n, measured, its SE, closed form, as :func:`footnote3_two_norms` gives for each norm): the
    inverse-variance mean with its SE and Welch–Satterthwaite d.o.f., each n with ``n_batches`` − 1
    d.o.f."""
    rows = np.asarray(rows, dtype=np.float64)
    mean, se, dof = inverse_variance_mean(
        rows[:, 1] / rows[:, 3], rows[:, 2] / rows[:, 3], n_batches - 1
    )
    return Estimate(mean, se, dof, len(rows))


def footnote3_pooled(
    run: Mapping[str, np.ndarray], n_cases: int, n_batches: int = 10
) -> list[dict[str, Estimate]]:
    """Per case of a :func:`footnote3_two_norms` run (in its order), per norm ("frobenius",
    "direction"): the ratio measured/closed form of the squared footnote-3 error pooled over n
    (:func:`footnote3_pooled_ratio`)."""
    n_cases = check_positive_int("n_cases", n_cases)
    return [
        {
            norm: footnote3_pooled_ratio(np.asarray(run[f"rows_{k}"])[:, cols], n_batches)
            for norm, cols in FOOTNOTE3_COLUMNS.items()
        }
        for k in range(n_cases)
    ]


# ------------------------------------------------------------------------------------------------
# Capacities at intermediate ν
# ------------------------------------------------------------------------------------------------
def intermediate_capacities(
    *,
    cases: Sequence[Sequence[Any]],
    inputs: Sequence[str],
    side: int,
    m: int,
    p: int,
    draws: int,
    n_samples: int,
    seed: int,
    n_grid: int = 101,
) -> dict[str, np.ndarray]:
    """Capacities of fixed layers (n = side², m units, A = J·W with a random J ∈ ℝ^{m×p}) at
    intermediate ν, for each input kind and activation, over ``draws`` draws of (P, J):

    ``emp`` from the empirical Σ̃ of ``n_samples`` inputs; ``exact`` from the exact Gaussian Σ̃ of
    the layer with the inputs' covariance (:func:`layerwise.layer.gaussian_augmented_covariance`);
    ``curve`` the Eq. 14 interpolation on a grid of ν (``nus``), whose ends are Eq. 18 (ν = 1)
    and, for Σ = I, Eq. 25 (ν = 0); ``eq25`` = (P∘P)κ^φ.  Arrays indexed [input, case, draw,
    ...]."""
    nus = np.linspace(0.0, 1.0, n_grid)
    n = side * side
    I_, C_, D_ = len(inputs), len(cases), check_positive_int("draws", draws)
    emp, exact_ = np.zeros((I_, C_, D_, n)), np.zeros((I_, C_, D_, n))
    curve, eq25 = np.zeros((I_, D_, n_grid, n)), np.zeros((I_, D_, n))
    for a, kind in enumerate(inputs):
        Y = layer.layer_inputs(kind, side, n_samples, seed + 104729 + 17 * a)
        Sigma = Y.T @ Y / len(Y) if kind == "patches" else np.eye(n)
        for d in range(D_):
            rng = stream(seed, "capacity_layer", kind, d)
            P = capacity.random_unit_columns(n, m, rng)
            J = rng.standard_normal((m, p))
            curve[a, d] = layer.interpolation_capacities(Sigma, P, J, nus)
            eq25[a, d] = capacity.pseudo_random_capacities(P, capacity.feature_capacities(J))
            emp[a, :, d], exact_[a, :, d] = layer.fixed_layer_capacities(Y, Sigma, P, J, cases)
    return {"nus": nus, "emp": emp, "exact": exact_, "curve": curve, "eq25": eq25}


def capacity_distances(
    res: dict[str, np.ndarray], nu_eq13: Sequence[float]
) -> dict[str, np.ndarray]:
    """Per [input, case, draw]: ``d_eq14`` = ‖κ_emp − κ_Eq14(ν of Eq. 13)‖, ``d_exact`` =
    ‖κ_emp − κ_exact‖, ``span`` = ‖κ(ν=1) − κ(ν=0)‖ (the distance between the two limits)."""
    nus, curve, emp = res["nus"], res["curve"], res["emp"]
    idx = [int(np.argmin(np.abs(nus - v))) for v in nu_eq13]
    k14 = np.stack([curve[:, :, i] for i in idx], axis=1)  # (inputs, cases, draws, n)
    span = np.linalg.norm(curve[:, :, -1] - curve[:, :, 0], axis=-1)  # (inputs, draws)
    return {
        "d_eq14": np.linalg.norm(emp - k14, axis=-1),
        "d_exact": np.linalg.norm(emp - res["exact"], axis=-1),
        "span": np.broadcast_to(span[:, None], emp.shape[:3]).copy(),
    }


def capacity_gap(dist: Mapping[str, np.ndarray], input_index: int, case_index: int) -> Estimate:
    """‖κ_emp − κ_Eq14(ν)‖ − ‖κ_emp − κ_exact‖ per layer (:func:`capacity_distances`), estimated
    over the layers: > 0 when the empirical capacities are closer to the exact fixed-layer Σ̃ than
    to Eq. 14."""
    return estimate(
        np.asarray(dist["d_eq14"])[input_index, case_index]
        - np.asarray(dist["d_exact"])[input_index, case_index]
    )


def capacity_prose_numbers(
    res: Mapping[str, np.ndarray], dist: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Means over the layers of an :func:`intermediate_capacities` run, for the prose: ``d14``,
    ``dex`` and ``dlin`` (inputs, cases), the distance of the empirical capacities to Eq. 14 at
    Eq. 13's ν, to the exact Σ̃'s and to the linear limit (Eq. 18), in units of the span between
    the limits; ``arc_half`` (inputs,), the fraction of the length of the curve κ(ν) run between
    ν = 0 and ½; ``eq25_patch_gap`` (for the second input kind), the distance of the ν = 0 end of
    Eq. 14 to (P∘P)κ^φ (Eq. 25) in span units."""
    nus, curve, emp = (np.asarray(res[k]) for k in ("nus", "curve", "emp"))
    n_inputs, n_cases = emp.shape[:2]
    if n_inputs < 2:
        raise ParameterError(f"res holds {n_inputs} input kind(s); it needs two (i.i.d., patches)")
    out = {key: np.zeros((n_inputs, n_cases)) for key in ("d14", "dex", "dlin")}
    out["arc_half"] = np.zeros(n_inputs)
    half = int(np.argmin(np.abs(nus - 0.5)))
    for a in range(n_inputs):
        span = dist["span"][a, 0]
        for c in range(n_cases):
            out["d14"][a, c] = np.mean(dist["d_eq14"][a, c] / dist["span"][a, c])
            out["dex"][a, c] = np.mean(dist["d_exact"][a, c] / dist["span"][a, c])
            dlin = np.linalg.norm(emp[a, c] - curve[a][:, -1], axis=-1)
            out["dlin"][a, c] = np.mean(dlin / span)
        seg = np.linalg.norm(np.diff(curve[a], axis=1), axis=-1)  # (draws, grid − 1)
        out["arc_half"][a] = np.mean(seg[:, :half].sum(1) / seg.sum(1))
    ends = np.asarray(res["eq25"])[1] - np.asarray(res["curve"])[1][:, 0]
    out["eq25_patch_gap"] = np.mean(np.linalg.norm(ends, axis=-1) / dist["span"][1, 0])
    return out


def capacity_gap_vs_width(
    *, cases: Sequence[Sequence[Any]], ns: Sequence[int], m: int, p: int, draws: int, seed: int
) -> dict[str, np.ndarray]:
    """The intermediate-ν gap of fixed layers against the input dimension n: for every n and draw
    d, a layer P (n × m unit columns) and J ∈ ℝ^{m×p} (stream ("width_layer", n, d)) and its
    :func:`layerwise.layer.eq14_capacity_gaps` (i.i.d. Gaussian inputs).

    Returns ``ns`` and ``gap`` (cases, len(ns), draws)."""
    m, p, draws = (check_positive_int(k, v) for k, v in (("m", m), ("p", p), ("draws", draws)))
    if m < 2:
        raise ParameterError(f"m={m} must be >= 2")
    gap = np.zeros((len(cases), len(ns), draws))
    for a, n in enumerate(ns):
        n = check_positive_int("ns", n)
        for d in range(draws):
            rng = stream(seed, "width_layer", n, d)
            P = capacity.random_unit_columns(n, m, rng)
            gap[:, a, d] = layer.eq14_capacity_gaps(P, rng.standard_normal((m, p)), cases)
    return {"ns": np.array(ns, float), "gap": gap}


def capacity_gap_vs_units(
    *, cases: Sequence[Sequence[Any]], n: int, ms: Sequence[int], p: int, draws: int, seed: int
) -> dict[str, np.ndarray]:
    """:func:`capacity_gap_vs_width` at one input dimension ``n`` for every number of units m of
    ``ms`` (footnote 3's "m ≫ 1"). Returns ``ms`` and ``gap`` (cases, len(ms), draws)."""
    if len(ms) < 2:
        raise ParameterError(f"ms={list(ms)!r} must hold at least two numbers of units")
    gap = np.concatenate(
        [
            capacity_gap_vs_width(cases=cases, ns=[n], m=m, p=p, draws=draws, seed=seed)["gap"]
            for m in ms
        ],
        axis=1,
    )
    return {"ms": np.array(ms, float), "gap": gap}


def width_trend(gap: np.ndarray, ns: np.ndarray) -> dict[str, Any]:
    """Log-log least-squares fit of a (len(ns), draws) gap on n over every layer
    (:func:`loglog_slope`: ``fit`` and ``slope``), ``mean`` (len(ns),), the gap's mean over draws,
    and ``last``, the gap at the largest n as an Estimate over draws."""
    gap = np.asarray(gap, float)
    fit, slope = loglog_slope(ns, gap)
    return {"fit": fit, "slope": slope, "mean": gap.mean(1), "last": estimate(gap[-1])}


# ------------------------------------------------------------------------------------------------
# The empirical capacities of a pseudo-random layer (Eq. 25)
# ------------------------------------------------------------------------------------------------
def pseudo_random_layer_capacities(
    *, n: int, m: int, p: int, sizes: Sequence[int], reps: int, seed: int
) -> dict[str, np.ndarray]:
    """Capacities of a pseudo-random layer: Eq. 25 and from empirical augmented covariances.

    P (n × m unit columns) and J (m × p) from stream ("pseudo_random_layer"); κ^φ of J;
    κ = (P∘P)κ^φ (``kappa_eq25``); for every sample size N and replicate b, Y ~ N(0, I) from
    stream ("emp", a, b), the hashed η with unit seeds 1000(100a + b + 1) + (0..m−1), and
    :func:`layerwise.capacity.empirical_augmented_capacities` (``kappa``, (sizes, reps, n))."""
    rng = stream(seed, "pseudo_random_layer")
    P = capacity.random_unit_columns(n, m, rng)
    J = rng.standard_normal((m, p))
    kphi = capacity.feature_capacities(J)
    out = np.zeros((len(sizes), reps, n))
    for a, N in enumerate(sizes):
        for b in range(reps):
            r = stream(seed, "emp", a, b)
            Y = r.standard_normal((N, n))
            seeds = np.arange(m) + 1000 * (a * 100 + b + 1)
            E = capacity.eta("pseudo_random", Y @ P, unit_seed=seeds[None, :])
            out[a, b] = capacity.empirical_augmented_capacities(Y, E, P, J)
    return {
        "P": P,
        "J": J,
        "kappa_phi": kphi,
        "kappa_eq25": capacity.pseudo_random_capacities(P, kphi),
        "kappa": out,
    }


def capacity_convergence(
    kappa: np.ndarray, kappa_ref: np.ndarray, sizes: Sequence[int]
) -> dict[str, Any]:
    """Distance of empirical capacities (sizes, reps, n) to a reference (n,): ``errors`` (sizes,
    reps), the log-log fit of error on N over all replicates (:func:`loglog_slope`: ``fit`` and
    ``slope``), ``error_last`` the error at the largest N and ``kappa_last`` each input's capacity
    there, as Estimates over the replicates."""
    errs = np.linalg.norm(np.asarray(kappa) - kappa_ref, axis=-1)
    sizes = np.array(sizes, float)
    fit, slope = loglog_slope(sizes, errs)
    return {
        "errors": errs,
        "sizes": sizes,
        "fit": fit,
        "slope": slope,
        "error_last": estimate(errs[-1]),
        "kappa_last": [estimate(k) for k in np.asarray(kappa)[-1].T],
    }


# ------------------------------------------------------------------------------------------------
# Appendix A: parameter redundancy of a two-layer model
# ------------------------------------------------------------------------------------------------
def redundancy_table(
    *, cases: Sequence[Sequence[Any]], n: int, m: int, n_inputs: int, seed: int
) -> dict[str, np.ndarray]:
    """:func:`layerwise.layer.redundancy_table` of ``cases``, case k on stream ("jac", k)."""
    rngs = [stream(seed, "jac", k) for k in range(len(cases))]
    return layer.redundancy_table(cases, n=n, m=m, n_inputs=n_inputs, rngs=rngs)


def appendix_a_trees(
    *,
    cases: Sequence[Sequence[Any]],
    architectures: Sequence[Sequence[int]],
    n_inputs: int,
    seed: int,
) -> dict[str, np.ndarray]:
    """:func:`layerwise.layer.tree_capacity_table` of ``architectures`` × ``cases``, (a, k) on
    stream ("tree", a, k): ``table`` (architectures, cases, 4)."""
    rngs = [
        [stream(seed, "tree", a, k) for k in range(len(cases))] for a, _ in enumerate(architectures)
    ]
    return {"table": layer.tree_capacity_table(cases, architectures, n_inputs=n_inputs, rngs=rngs)}


def tree_summary(table: np.ndarray, cases: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """Columns of an :func:`appendix_a_trees` table per architecture: ``params``, ``hidden``,
    ``expected`` (parameters − hidden units: one scale redundancy per hidden unit), per case name
    ``<name>_true`` and ``<name>_aug`` (the two totals), and ``pl_match`` / ``pl_cases``: how many
    (architecture, ReLU-type case) pairs have equal totals, out of how many."""
    t = np.asarray(table)
    names = [c[0] for c in cases]
    out: dict[str, Any] = {
        "params": t[:, 0, 0].tolist(),
        "hidden": t[:, 0, 1].tolist(),
        "expected": (t[:, 0, 0] - t[:, 0, 1]).tolist(),
    }
    for k, name in enumerate(names):
        out[f"{name}_true"], out[f"{name}_aug"] = t[:, k, 2].tolist(), t[:, k, 3].tolist()
    pl = [k for k, name in enumerate(names) if name in ("relu", "leaky_relu", "abs")]
    out["pl_match"] = int(np.sum(t[:, pl, 2] == t[:, pl, 3]))
    out["pl_cases"] = int(t.shape[0] * len(pl))
    return out


# ------------------------------------------------------------------------------------------------
# Beyond the paper: ν(f; q) of smooth activations by Monte-Carlo
# ------------------------------------------------------------------------------------------------
def smooth_nu_unit(
    u: int, *, names: Sequence[str], qs: np.ndarray, n: int, m: int, n_samples: int, seed: int
) -> dict[str, np.ndarray]:
    """:func:`layerwise.capacity.nu_monte_carlo` of a smooth activation at a pre-activation
    variance, unit ``u = k · len(qs) + j``: ``names[k]`` at ``qs[j]``, stream ("smooth", k, j).
    Returns ``rows`` (1, 3): q, ν, SE."""
    k, j = divmod(u, len(qs))
    q = float(qs[j])
    r = capacity.nu_monte_carlo(
        names[k], n=n, m=m, n_samples=n_samples, q=q, rng=stream(seed, "smooth", k, j)
    )
    return {"rows": np.array([[q, r["nu"].mean, r["nu"].se]])}


def assemble_smooth_nu(rows: np.ndarray, names: Sequence[str]) -> dict[str, np.ndarray]:
    """The (len(names) · len(qs), 3) rows of the :func:`smooth_nu_unit` units in order, per name:
    an array (len(qs), 3) of q, ν, SE."""
    per = np.asarray(rows).reshape(len(names), -1, 3)
    return {name: per[k] for k, name in enumerate(names)}
