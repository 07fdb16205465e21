"""Chapter 4's study (Labatie 2019, §6: batch-normalised feedforward nets): what the chapter
derives from the moments engine's runs with the science of :mod:`layerwise.labatie` — Fig. 4 in
the paper's convolutional nets against the authors' published arrays (:mod:`layerwise.published`),
Fig. 4 in fully-connected nets, the last layer's conditioning and tails, δ_BN χ against the
signal's conditioning, the data sets and the batch size.  Numbers, arrays and estimates keyed by
quantity only: the chapter declares the claims, lays out its tables and words its conclusions;
the inputs, configurations and controls of its claims are :mod:`layerwise.controls`."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from .. import published
from ..labatie import bn_ff_panels, exp_fit
from ..params import ParameterError
from ..stats import (
    Estimate,
    estimate_or_point,
    interval_estimate,
    linear_fit,
    max_deviation_interval,
    rank_correlation,
    relative_spread,
    spearman_by_column,
    summary,
    versus_reference,
)


def _networks(panels: Iterable[Mapping[str, np.ndarray]]) -> int:
    n = {int(Q["chi"].shape[0]) for Q in panels}
    if len(n) != 1:
        raise ParameterError(f"every run needs the same number of networks, got {sorted(n)}")
    return n.pop()


# ----------------------------------------------------------------------------------------------
# Fig. 4 in the paper's convolutional nets, against the authors' arrays
# ----------------------------------------------------------------------------------------------
def late_ours(
    depth: Any, arrays: Mapping[str, np.ndarray], l_min: int, l_max: int
) -> dict[str, np.ndarray]:
    """Per-network late-depth statistics of a BN feedforward run (engine arrays, networks ×
    records).

    For each key of :data:`layerwise.published.FIG4_LATE`, the network's mean over the records
    ``l_min ≤ l ≤ l_max``; ``log10_dchi``: the network's mean growth of log10 χ (after the ReLU) per
    layer between the first and last record of the window, (log10 χ^{l_max} − log10 χ^{l_first}) /
    (l_max − l_first), i.e. log10 of the geometric-mean increment δχ over those layers (Labatie
    2019, Fig. 4(a–b)).
    """
    depth = np.asarray(depth)
    sel = published.depth_window(depth, l_min, l_max)
    out = {
        k: np.asarray(arrays[name])[:, sel].mean(axis=1)
        for k, (name, _) in published.FIG4_LATE.items()
    }
    i, j = np.flatnonzero(sel)[[0, -1]]
    if j == i:
        raise ParameterError("the window needs at least two records for the growth of χ")
    lc = np.log10(np.asarray(arrays["chi_loc4"], dtype=float))
    out["log10_dchi"] = (lc[:, j] - lc[:, i]) / float(depth[j] - depth[i])
    return out


def fig4_conv_summary(
    depth: Any,
    panels: Mapping[str, np.ndarray],
    arrays: Mapping[str, np.ndarray],
    experiment: str,
    *,
    conv_depth: int,
    interval: int,
    l_min: int,
) -> dict[str, Any]:
    """Our convolutional BN feedforward nets against the authors' ``experiment`` (Labatie 2019, §6
    and Fig. 4 (a–d)), from our run's record ``depth``, ``panels``
    (:func:`layerwise.labatie.bn_ff_panels`) and engine ``arrays`` of nets ``conv_depth`` deep,
    recorded every ``interval`` layers. The late window is the last quarter, ``late_lmin`` =
    ⌊0.75·conv_depth⌋ ≤ l ≤ conv_depth; the early one l ≤ ``early_lmax`` = max(2·interval,
    conv_depth // 10) (at least two records). Estimates over our networks: ``dchi`` the mean
    increment δχ over layers ≥ ``l_min`` (Theorem 3: ≥ 1), ``log10_chi_end`` log10 χ at the last
    record, ``late_gap`` = δ_BN − δ_φ over the late window and ``early_gap`` = δ_φ − δ_BN over the
    early one (``gap_values``: the per-network values of both), ``reff_ratio`` = r_eff(dx)/r_eff(x)
    over the late window, ``dbn_late``/``dphi_late`` the two increments there; against the authors'
    (our mean, the combined error, :func:`versus`): ``log10_dchi`` the late growth of log10 χ per
    layer, ``dchi_late`` its geometric-mean increment and ``levels`` each
    :data:`layerwise.published.FIG4_LATE` level. ``ours_levels`` the levels with our own error only;
    ``authors`` their means (``levels``, ``log10_dchi``, ``dchi_late``, ``dbn_late``, ``dphi_late``,
    ``late_gap``, ``early_gap`` from their geometric-mean increments) and ``authors_levels`` the
    levels as estimates (their mean and SE); ``log10_chi_variants`` log10 χ at the end of each of
    :data:`layerwise.published.BN_FF_CONV_VARIANTS` and ``spread`` the relative spread (max −
    min)/|mean| of each late-depth level across those variants."""
    d = np.asarray(depth)
    late_lmin, early_lmax = int(0.75 * conv_depth), max(2 * interval, conv_depth // 10)
    ours = late_ours(d, arrays, late_lmin, conv_depth)
    theirs = published.late_published(experiment, late_lmin, conv_depth)
    inc = published.increments_published(experiment)
    their_late = published.depth_window(inc["depth"], late_lmin, conv_depth)
    win, early = published.depth_window(d, late_lmin, conv_depth), d <= early_lmax
    if not early.any():
        raise ParameterError(f"early_lmax={early_lmax} is below the first record ({d[0]})")
    m, s = theirs["log10_dchi"]
    variants = {
        v: published.late_published(v, late_lmin, conv_depth) for v in published.BN_FF_CONV_VARIANTS
    }
    return {
        "late_lmin": late_lmin,
        "early_lmax": early_lmax,
        "dchi": estimate_or_point(panels["dchi"][:, d >= l_min].mean(1)),
        "log10_chi_end": estimate_or_point(np.log10(panels["chi"][:, -1])),
        "late_gap": estimate_or_point((panels["dbn"] - panels["dphi"])[:, win].mean(1)),
        "early_gap": estimate_or_point((panels["dphi"] - panels["dbn"])[:, early].mean(1)),
        "gap_values": {
            "late": (panels["dbn"] - panels["dphi"])[:, win].mean(1),
            "early": (panels["dphi"] - panels["dbn"])[:, early].mean(1),
        },
        "reff_ratio": estimate_or_point(ours["reff_dx"] / ours["reff_x"]),
        "dbn_late": estimate_or_point(panels["dbn"][:, win].mean(1)),
        "dphi_late": estimate_or_point(panels["dphi"][:, win].mean(1)),
        "log10_dchi": versus_reference(ours["log10_dchi"], theirs["log10_dchi"]),
        "dchi_late": versus_reference(10 ** ours["log10_dchi"], (10**m, 10**m * math.log(10) * s)),
        "levels": {k: versus_reference(ours[k], theirs[k]) for k in published.FIG4_LATE},
        "ours_levels": {k: estimate_or_point(ours[k]) for k in published.FIG4_LATE},
        "authors": {
            "levels": {k: theirs[k][0] for k in published.FIG4_LATE},
            "log10_dchi": float(m),
            "dchi_late": float(10**m),
            "dbn_late": float(inc["dbn"][their_late].mean()),
            "dphi_late": float(inc["dphi"][their_late].mean()),
            "late_gap": float((inc["dbn"] - inc["dphi"])[their_late].mean()),
            "early_gap": float((inc["dphi"] - inc["dbn"])[inc["depth"] <= early_lmax].mean()),
        },
        "authors_levels": {k: Estimate(*theirs[k]) for k in published.FIG4_LATE},
        "log10_chi_variants": [
            published.bn_ff_endpoints(v)["log10_chi"][0] for v in published.BN_FF_CONV_VARIANTS
        ],
        "spread": {
            k: float(
                np.ptp([variants[v][k][0] for v in variants])
                / abs(np.mean([variants[v][k][0] for v in variants]))
            )
            for k in variants[experiment]
        },
    }


# ----------------------------------------------------------------------------------------------
# Fig. 4 in fully-connected nets; the last layer; δ_BN χ against the signal's conditioning
# ----------------------------------------------------------------------------------------------
def bn_ff_fc_findings(depth: Any, panels: Mapping[str, np.ndarray], l_min: float) -> dict[str, Any]:
    """Fully-connected BN nets (Labatie 2019, Theorem 3 and Fig. 4(a–b)): estimates over networks
    of the per-network averages over the records ``depth ≥ l_min`` of the increments
    (``increments``: ``dchi``, ``dbn``, ``dphi``, panels of :func:`~layerwise.labatie.bn_ff_panels`;
    Theorem 3: each ≥ 1) and of log10 χ at the last record (``log10chi``); ``n`` the networks."""
    late = np.asarray(depth) >= l_min
    if not late.any():
        raise ParameterError(f"l_min={l_min} lies beyond the last record")
    return {
        "n": int(panels["chi"].shape[0]),
        "increments": {
            k: estimate_or_point(panels[k][:, late].mean(axis=1)) for k in ("dchi", "dbn", "dphi")
        },
        "log10chi": estimate_or_point(np.log10(panels["chi"][:, -1])),
    }


def last_layer_findings(panels: Mapping[str, np.ndarray]) -> dict[str, Estimate]:
    """Fully-connected BN nets at their last record (Labatie 2019, §6 and Fig. 4(c–d)): estimates
    over networks of ``reff_x``, ``reff_dx``, their difference ``reff_gap`` = r_eff(x) − r_eff(dx),
    the kurtosis ``kurtosis`` and ``nu1`` = ν₁(|y|)/√ν₂ of the batch-normalised pre-activations
    (panels of :func:`~layerwise.labatie.bn_ff_panels`)."""
    last = {k: panels[k][:, -1] for k in ("reff_x", "reff_dx", "kurt_z", "nu1_z")}
    return {
        "reff_x": estimate_or_point(last["reff_x"]),
        "reff_dx": estimate_or_point(last["reff_dx"]),
        "reff_gap": estimate_or_point(last["reff_x"] - last["reff_dx"]),
        "kurtosis": estimate_or_point(last["kurt_z"]),
        "nu1": estimate_or_point(last["nu1_z"]),
    }


def dbn_conditioning(
    depth: Any,
    arrays: Mapping[str, np.ndarray],
    panels: Mapping[str, np.ndarray],
    l_min: float,
    *,
    seed: int = 0,
) -> dict[str, Any]:
    """Labatie 2019, §6 'Experimental verification' (ii): δ_BN χ^l (``panels`` of
    :func:`~layerwise.labatie.bn_ff_panels`) against the effective rank r_eff(x^{l−1}) of the
    signal entering the layer (engine ``arrays``, loc1) over the records ``depth ≥ l_min``: the
    pooled Spearman ``rho`` with its network-bootstrap error
    (:func:`layerwise.stats.rank_correlation`, ``seed``; networks − 1 d.o.f.), the correlation
    across networks at each depth (:func:`layerwise.stats.spearman_by_column`) and its mean over
    depths ``rho_within``, and the figure's ``arrays``."""
    d = np.asarray(depth)
    late = d >= l_min
    if not late.any():
        raise ParameterError(f"l_min={l_min} lies beyond the last record")
    rin, dbn = arrays["reff_signal_loc1"][:, late], panels["dbn"][:, late]
    rho, rho_se = rank_correlation(rin, dbn, seed=seed)
    within = spearman_by_column(rin, dbn)
    n = int(arrays["chi_loc1"].shape[0])
    return {
        "arrays": {"reff_in": rin, "dbn": dbn, "depth": d[late], "within": within},
        "rho": Estimate(rho, rho_se, n - 1, n),
        "rho_within": estimate_or_point(within),
    }


# ----------------------------------------------------------------------------------------------
# Data sets and batch size (Labatie 2019, App. A)
# ----------------------------------------------------------------------------------------------
def bn_ff_dataset_study(
    runs: Mapping[str, tuple[Any, Mapping[str, np.ndarray]]], l_min: float, *, seed: int = 0
) -> dict[str, Any]:
    """The data sets (Labatie 2019, App. A: 'equivalent behaviour' on MNIST): ``runs`` maps a data
    set to the engine's ``(depth, arrays)`` of equally many networks. Returns ``runs`` with their
    panels (:func:`~layerwise.labatie.bn_ff_panels`), per data set the exponential growth of χ in
    decades per layer (``decades``: log₁₀ δχ = rate / ln 10 with the natural-log rate of
    :func:`~layerwise.labatie.exp_fit` over depth ≥ ``l_min``, an estimate over networks) and the
    means over networks at the last record (``last``: ``log10_chi``, ``reff_x``, ``kurtosis``), the
    figure's ``arrays`` (mean χ and r(x) per data set) and the relative ``spread`` of the
    exponential rates with its parametric-bootstrap interval
    (:func:`layerwise.stats.relative_spread`, t with networks − 1 d.o.f., ``seed``)."""
    dsq = {ds: (d, bn_ff_panels(A)) for ds, (d, A) in runs.items()}
    n = _networks(Q for _, Q in dsq.values())
    fits = {ds: exp_fit(d, Q["chi"], l_min=l_min) for ds, (d, Q) in dsq.items()}
    rates = pd.Series({ds: f["rate"] for ds, f in fits.items()})
    ses = pd.Series({ds: f["se_rate"] for ds, f in fits.items()})
    ln10 = math.log(10)
    return {
        "runs": dsq,
        "decades": {
            ds: Estimate(f["rate"] / ln10, f["se_rate"] / ln10, n - 1, n) for ds, f in fits.items()
        },
        "last": {
            ds: {
                "log10_chi": summary(np.log10(Q["chi"][:, -1]))["mean"],
                "reff_x": summary(Q["reff_x"][:, -1])["mean"],
                "kurtosis": summary(Q["kurt_z"][:, -1])["mean"],
            }
            for ds, (_, Q) in dsq.items()
        },
        "arrays": {f"{ds}_{k}": dsq[ds][1][k].mean(0) for ds in dsq for k in ("chi", "reff_x")},
        "spread": relative_spread(rates, ses, dof=n - 1, seed=seed),
    }


#: The last-record quantities of the batch-size study, as functions of the panels.
BATCH_ENDPOINTS = {
    "log10_chi": lambda Q: np.log10(Q["chi"][:, -1]),
    "kurtosis": lambda Q: Q["kurt_z"][:, -1],
    "reff_x": lambda Q: Q["reff_x"][:, -1],
    "reff_dx": lambda Q: Q["reff_dx"][:, -1],
}


def monotone_trend(x: Any, means: Any, ses: Any) -> dict[str, float]:
    """Weighted slope of ``means`` against log2 ``x`` (e.g. batch size) and its significance z."""
    x = np.log2(np.asarray(x, dtype=np.float64))
    f = linear_fit(x, means, sigma=np.maximum(np.asarray(ses, dtype=np.float64), 1e-300))
    f["z"] = f["slope"] / f["slope_se"] if f["slope_se"] > 0 else float("inf")
    return f


def batch_endpoints(runs: Mapping[int, Mapping[str, np.ndarray]]) -> dict[str, dict[int, Estimate]]:
    """Per quantity of :data:`BATCH_ENDPOINTS` at the last record and per batch size B (Labatie
    App. A; in the order of ``runs``, which maps B to panels from
    :func:`~layerwise.labatie.bn_ff_panels`): the mean over networks with its standard error, as
    an estimate."""
    out: dict[str, dict[int, Estimate]] = {k: {} for k in BATCH_ENDPOINTS}
    for B, Q in runs.items():
        for k, f in BATCH_ENDPOINTS.items():
            v = f(Q)
            s = summary(v)
            out[k][B] = Estimate(s["mean"], s["se"], v.size - 1, v.size)
    return out


def batch_findings(levels: Mapping[str, Mapping[int, Estimate]]) -> dict[str, Any]:
    """What the batch-size study's levels (:func:`batch_endpoints`, batches in increasing order)
    say: ``trend[name]`` (:func:`monotone_trend` of each :data:`BATCH_ENDPOINTS` quantity against
    B), ``ratio`` = r_eff(x)/r_eff(dx) per batch, the smallest and largest batch (``b_small``,
    ``b_large``) and the ratio there (``ratio_small``, ``ratio_large``)."""
    B = list(levels["reff_x"])
    trend = {
        k: monotone_trend(B, [levels[k][b].mean for b in B], [levels[k][b].se for b in B])
        for k in BATCH_ENDPOINTS
    }
    ratio = np.array([levels["reff_x"][b].mean for b in B]) / np.array(
        [levels["reff_dx"][b].mean for b in B]
    )
    return {
        "trend": trend,
        "ratio": ratio,
        "b_small": int(B[0]),
        "b_large": int(B[-1]),
        "ratio_small": ratio[0],
        "ratio_large": ratio[-1],
    }


def bn_ff_batch_study(runs: Mapping[int, tuple[Any, Mapping[str, np.ndarray]]]) -> dict[str, Any]:
    """The batch-size study (Labatie 2019, App. A): ``runs`` maps B (increasing) to the engine's
    ``(depth, arrays)`` of equally many networks. Returns their ``panels``, the ``levels`` of
    :func:`batch_endpoints`, the figure's ``arrays`` (B, each level's means and, as
    ``se_<name>``, their standard errors), the numbers of :func:`batch_findings`, each quantity's
    ``slope`` against log2 B as an estimate (weighted least squares, networks − 1 d.o.f.), and at
    the largest batch ``b_max`` the estimate ``large_batch_gap`` of r_eff(dx) − r_eff(x) at the
    last record; ``ratio_estimates``: at the smallest and largest batch, the mean over networks of
    r_eff(x)/r_eff(dx) at the last record as an estimate."""
    panels = {B: bn_ff_panels(A) for B, (_, A) in runs.items()}
    n = _networks(panels.values())
    levels = batch_endpoints(panels)
    findings = batch_findings(levels)
    b_max = max(panels)
    arrays: dict[str, np.ndarray] = {"B": np.array(list(panels))}
    for k, by_batch in levels.items():
        arrays[k] = np.array([e.mean for e in by_batch.values()])
        arrays[f"se_{k}"] = np.array([e.se for e in by_batch.values()])
    return {
        "panels": panels,
        "levels": levels,
        "arrays": arrays,
        **findings,
        "b_max": b_max,
        "slope": {
            k: Estimate(t["slope"], t["slope_se"], n - 1, n) for k, t in findings["trend"].items()
        },
        "large_batch_gap": estimate_or_point(
            panels[b_max]["reff_dx"][:, -1] - panels[b_max]["reff_x"][:, -1]
        ),
        "ratio_estimates": {
            B: estimate_or_point(panels[B]["reff_x"][:, -1] / panels[B]["reff_dx"][:, -1])
            for B in (findings["b_small"], findings["b_large"])
        },
    }


def authors_batch_slopes(depth: int = 200) -> dict[str, Estimate]:
    """The fit of :func:`bn_ff_batch_study`'s ``slope`` (:func:`monotone_trend`) applied to the
    authors' fully-connected means at ``depth`` for B = 64 … 512 (Labatie 2019, App. A), weighted
    by their standard errors over their networks (:func:`layerwise.published.bn_ff_endpoints`):
    per quantity of :data:`BATCH_ENDPOINTS`, the slope against log₂ B with its standard error."""
    ends = {B: published.bn_ff_endpoints(f"bn_ff_fc_{B}", depth) for B in published.FC_BATCHES}
    out = {}
    for key in BATCH_ENDPOINTS:
        means, ses = zip(*(ends[B][key] for B in published.FC_BATCHES), strict=True)
        theirs = monotone_trend(published.FC_BATCHES, means, ses)
        out[key] = Estimate(theirs["slope"], theirs["slope_se"])
    return out


def nearest_half_gap(levels: Mapping[int, float], key: int) -> float:
    """Half the distance from ``levels[key]`` to the nearest other value of ``levels``: how far a
    level may stray before it lies nearer another batch's level than its own."""
    if key not in levels or len(levels) < 2:
        raise ParameterError(
            f"key={key!r} must be one of at least two levels; got {sorted(levels)}"
        )
    gap = min(abs(levels[key] - v) for k, v in levels.items() if k != key)
    if not gap > 0:
        raise ParameterError(f"the level at {key} equals another level: no gap")
    return 0.5 * gap


def published_batch(batch: int) -> int:
    """The batch size of the authors' fully-connected study nearest to ``batch`` (in log₂)."""
    return min(published.FC_BATCHES, key=lambda b: (abs(math.log2(b / batch)), b))


def fc_rate_versus_authors(
    depth: Any, arrays: Mapping[str, np.ndarray], *, batch: int, l_min: int, l_max: int
) -> dict[str, Any]:
    """Our fully-connected BN nets' growth of log₁₀ χ per layer over the records
    ``l_min ≤ l ≤ l_max`` (:func:`late_ours`) against the authors' fully-connected nets at the
    published batch nearest to ``batch`` (:func:`published_batch`; Labatie 2019, App. A,
    ``bn_ff_fc_<B>``): ``rate`` our mean with the combined error
    (:func:`layerwise.stats.versus_reference`), ``authors`` theirs, ``batch`` the authors' batch,
    ``by_batch`` their rate at every published batch and ``margin`` the relative half-gap to the
    nearest other batch's rate (:func:`nearest_half_gap`), with that batch (``neighbour``) and its
    rate (``neighbour_rate``); ``end_offset`` our mean log₁₀ χ at the last record ≤ ``l_max`` minus
    theirs (``authors_end``), with the combined error; ``values`` our per-network rates and
    ``reference`` the authors' rate as an estimate (their mean and SE)."""
    ours = late_ours(depth, arrays, l_min, l_max)["log10_dchi"]
    d = np.asarray(depth)
    end = np.log10(np.asarray(arrays["chi_loc4"], dtype=float)[:, d <= l_max][:, -1])
    theirs = {
        b: published.late_published(f"bn_ff_fc_{b}", l_min, l_max)["log10_dchi"]
        for b in published.FC_BATCHES
    }
    ref = published_batch(batch)
    by_batch = {b: v[0] for b, v in theirs.items()}
    neighbour = min(
        (b for b in by_batch if b != ref), key=lambda b: abs(by_batch[b] - by_batch[ref])
    )
    c = published.moment(f"bn_ff_fc_{ref}", "chi_loc4")
    m_end, se_end = c.mean_se(int(d[d <= l_max][-1]), log10=True)
    e = versus_reference(end, (m_end, se_end))
    return {
        "rate": versus_reference(ours, theirs[ref]),
        "values": ours,
        "reference": Estimate(*theirs[ref]),
        "end_offset": Estimate(e.mean - m_end, e.se, e.dof, e.n),
        "authors_end": m_end,
        "authors": by_batch[ref],
        "batch": ref,
        "by_batch": by_batch,
        "margin": nearest_half_gap(by_batch, ref) / abs(by_batch[ref]),
        "neighbour": neighbour,
        "neighbour_rate": by_batch[neighbour],
    }


def batch_levels_versus_authors(
    levels: Mapping[str, Mapping[int, Estimate]],
    n: int,
    depth: int = 200,
    confidence: float = 0.99,
    bound: float = 1.0,
) -> dict[str, dict[str, Any]]:
    """The batch-size study's levels (:func:`batch_endpoints`, ``n`` networks per batch) against
    the authors' fully-connected nets at the same batch sizes (Labatie 2019, App. A,
    ``bn_ff_fc_<B>`` at l = ``depth``), for each quantity of :data:`BATCH_ENDPOINTS`.

    At each batch B both have published: the deviation d_B = (ours_B − authors_B) / h_B in units
    of the half-gap h_B from the authors' level at B to their nearest level at another batch
    (:func:`nearest_half_gap`: |d_B| < 1 means ours lies nearer the authors' level at its own
    batch than at any other), with the error √(SE_ours² + SE_authors²)/h_B. ``deviation`` is
    max_B |d_B| with its simultaneous interval (:func:`layerwise.stats.max_deviation_interval`,
    Bonferroni over the batches, networks − 1 d.o.f.); ``no_batch_effect`` the same maximum for
    levels that do not depend on the batch (our level at the smallest batch, at every batch);
    ``upper_theirs_alone`` the interval's upper end with our levels known exactly (the authors'
    errors alone, with their 200 networks' d.o.f.); ``ours_cannot_decide`` whether that interval
    still holds the claim's ``bound`` (then no number of our networks decides the rule at this
    mean);
    ``d`` and ``batches`` the per-batch deviations."""
    ours_b = list(levels["reff_x"])
    batches = sorted(int(b) for b in ours_b if b in published.FC_BATCHES)
    if not batches:
        raise ParameterError(
            f"none of the batches {ours_b} is published; "
            f"the authors' are {list(published.FC_BATCHES)}"
        )
    authors = {b: published.bn_ff_endpoints(f"bn_ff_fc_{b}", depth) for b in published.FC_BATCHES}
    out: dict[str, dict[str, Any]] = {}
    for k in BATCH_ENDPOINTS:
        theirs = {b: authors[b][k][0] for b in published.FC_BATCHES}
        half = np.array([nearest_half_gap(theirs, b) for b in batches])
        ref = np.array([theirs[b] for b in batches])
        ours = np.array([levels[k][b].mean for b in batches], dtype=float)
        se = np.array([levels[k][b].se for b in batches], dtype=float)
        theirs_se = np.array([authors[b][k][1] for b in batches], dtype=float) / half
        se = np.hypot(se / half, theirs_se)
        d = (ours - ref) / half
        dev, (lo, hi) = max_deviation_interval(
            d, se, np.zeros_like(d), dof=max(n - 1, 1), confidence=confidence
        )
        # the same interval with our levels known exactly: the authors' networks alone
        _, (lo_theirs, hi_theirs) = max_deviation_interval(
            d, theirs_se, np.zeros_like(d), dof=published.FC_BATCH_NETS - 1,
            confidence=confidence,
        )
        out[k] = {
            "deviation": interval_estimate(dev, lo, hi, n=n),
            "upper_theirs_alone": hi_theirs,
            "ours_cannot_decide": bool(lo_theirs <= bound < hi_theirs),
            "no_batch_effect": float(np.max(np.abs(ours[0] - ref) / half)),
            "d": d,
            "batches": batches,
        }
    return out


def chi_levels(
    runs: Mapping[str, tuple[Any, Mapping[str, np.ndarray]]],
    experiment: str,
    l_early: int,
    l_end: int,
) -> dict[str, np.ndarray]:
    """Where the inputs' offset in χ comes from: per data set (``runs`` maps it to ``(depth,
    panels)``, :func:`~layerwise.labatie.bn_ff_panels`) the mean over networks of log₁₀ χ at the
    records ``l_early`` and ``l_end``, and under ``"authors"`` the same pair for the authors'
    ``experiment`` (their CIFAR-10 nets, means of log₁₀ χ after the ReLU)."""
    c = published.moment(experiment, "chi_loc4")
    out = {}
    for ds, (d, Q) in runs.items():
        d = list(np.asarray(d))
        if l_early not in d or l_end not in d:
            raise ParameterError(f"l_early={l_early} and l_end={l_end} must be records of {ds}")
        lc = np.log10(Q["chi"])
        out[ds] = np.array([lc[:, d.index(l_early)].mean(), lc[:, d.index(l_end)].mean()])
    out["authors"] = np.array(
        [float(c.mean_log10[c.index(l_early)]), float(c.mean_log10[c.index(l_end)])]
    )
    return out


# ----------------------------------------------------------------------------------------------
# Which of the authors' convolutional variants is the like-for-like reference, quantity by quantity
# ----------------------------------------------------------------------------------------------
CONV_REFERENCE = "bn_ff_mnist"
"""The authors' convolutional variant our convolutional nets are graded against: of the three
(:data:`layerwise.published.BN_FF_CONV_VARIANTS`) the one with our boundary (periodic) and our
BN ε (10⁻³); its input is MNIST."""
VARIANT_KEYS = ("log10_dchi", "reff_x", "reff_dx", "kurtosis", "nu1", "log10_chi_end")
"""The quantities on which our convolutional nets are set beside the authors' three variants."""


def conv_late_values(
    depth: Any, arrays: Mapping[str, np.ndarray], l_min: int, l_max: int
) -> dict[str, np.ndarray]:
    """Per-network values of :data:`VARIANT_KEYS` for a convolutional run: :func:`late_ours` over
    layers ``l_min``–``l_max`` and log₁₀ χ (after the ReLU) at the last record."""
    out = late_ours(depth, arrays, l_min, l_max)
    out["log10_chi_end"] = np.log10(np.asarray(arrays["chi_loc4"], dtype=float)[:, -1])
    return out


def conv_variant_values(l_min: int, l_max: int) -> dict[str, dict[str, Estimate]]:
    """The authors' three convolutional variants, per variant each quantity of
    :data:`VARIANT_KEYS` over layers ``l_min``–``l_max`` (log₁₀ χ at ``l_max``) as an estimate
    (their mean and SE over their networks)."""
    out = {}
    for v in published.BN_FF_CONV_VARIANTS:
        late = published.late_published(v, l_min, l_max)
        late["log10_chi_end"] = published.bn_ff_endpoints(v, l_max)["log10_chi"]
        out[v] = {k: Estimate(*ms) for k, ms in late.items()}
    return out
