"""Chapter 4's study (Labatie 2019, §6: batch-normalised feedforward nets): what the chapter
derives from the moments engine's runs with the science of :mod:`layerwise.labatie` — Fig. 4 in
the paper's convolutional nets against the authors' published arrays (:mod:`layerwise.published`),
Fig. 4 in fully-connected nets, the last layer's conditioning and tails, δ_BN χ against the
signal's conditioning, the data sets and the batch size.  Numbers, arrays and estimates keyed by
quantity only: the chapter declares the claims and words its conclusions."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from .. import published
from ..claims import Control, outcome
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
from ..tables import cell


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
    recorded every ``interval`` layers.

    The late window is the last quarter, ``late_lmin`` = ⌊0.75·conv_depth⌋ ≤ l ≤ conv_depth; the
    early one l ≤ ``early_lmax`` = max(2·interval, conv_depth // 10) (at least two records).
    Estimates over our networks: ``dchi`` the mean increment δχ over layers ≥ ``l_min``
    (Theorem 3: ≥ 1), ``log10_chi_end`` log10 χ at the last record, ``late_gap`` = δ_BN − δ_φ
    over the late window and ``early_gap`` = δ_φ − δ_BN over the early one (``gap_values``: the
    per-network values of both), ``reff_ratio`` =
    r_eff(dx)/r_eff(x) over the late window, ``dbn_late``/``dphi_late`` the two increments there;
    against the authors' (our mean, the combined error, :func:`versus`): ``log10_dchi`` the late
    growth of log10 χ per layer, ``dchi_late`` its geometric-mean increment and ``levels`` each
    :data:`layerwise.published.FIG4_LATE` level.  ``ours_levels`` the levels with our own error
    only; ``authors`` their means (``levels``, ``log10_dchi``, ``dchi_late``, ``dbn_late``,
    ``dphi_late``, ``late_gap``, ``early_gap`` from their geometric-mean increments) and
    ``authors_se`` the levels' SEs; ``log10_chi_variants`` log10 χ at the end
    of each of :data:`layerwise.published.BN_FF_CONV_VARIANTS` and ``spread`` the relative spread
    (max − min)/|mean| of each late-depth level across those variants."""
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
        "authors_se": {k: theirs[k][1] for k in published.FIG4_LATE},
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


#: The rows of :func:`conv_comparison_table`: label → the Fig. 4 quantity (Labatie 2019, §6).
CONV_ROWS = {
    "dchi_late": "δχ per layer, late",
    "dbn_late": "δχ (BN step), late",
    "dphi_late": "δχ (ReLU step), late",
    "early_gap": "δχ (ReLU step) − δχ (BN step), early",
    "log10_chi_end": "log₁₀ χ at the last layer",
    "reff_dx": "effective rank r(dx), late",
    "reff_x": "effective rank r(x), late",
    "kurtosis": "kurtosis μ₄ of the BN output, late",
    "nu1": "ν₁(|y|) of the BN output, late",
}


def conv_comparison_table(
    summary: Mapping[str, Any], authors_end: Mapping[str, Any]
) -> pd.DataFrame:
    """Our convolutional nets against the authors' (Labatie 2019, Fig. 4) in one table, from
    :func:`fig4_conv_summary`'s ``summary``: per quantity of :data:`CONV_ROWS` our mean and its
    standard error over networks, and the authors' mean with its standard error over their
    networks where they publish one (NaN where they do not); ``authors_end`` holds their
    (mean, SE) of log₁₀ χ at the last layer (:func:`layerwise.published.bn_ff_endpoints`)."""
    ours = {
        **{k: summary[k] for k in ("dbn_late", "dphi_late", "early_gap", "log10_chi_end")},
        **summary["ours_levels"],
    }
    a = summary["authors"]
    theirs = {
        "dchi_late": (a["dchi_late"], summary["dchi_late"].reference_se),
        "dbn_late": (a["dbn_late"], math.nan),
        "dphi_late": (a["dphi_late"], math.nan),
        "early_gap": (math.nan, math.nan),
        "log10_chi_end": tuple(authors_end["log10_chi"]),
        **{k: (a["levels"][k], summary["authors_se"][k]) for k in published.FIG4_LATE},
    }
    dchi = summary["dchi_late"]
    ours["dchi_late"] = Estimate(dchi.mean, dchi.own_se, dchi.dof, dchi.n)
    rows = []
    for key, label in CONV_ROWS.items():
        mean, se = cell(ours[key])
        rows.append(
            {
                "quantity": label,
                "ours": mean,
                "± s.e.": se,
                "authors": theirs[key][0],
                "± s.e. (authors)": theirs[key][1],
            }
        )
    return pd.DataFrame(rows).set_index("quantity")


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


#: The rows of :func:`fc_comparison_table`: key → label (Labatie 2019, Fig. 4 and App. A).
FC_ROWS = {
    "dchi": "δχ per layer, layer mean",
    "dbn": "δχ (BN step), layer mean",
    "dphi": "δχ (ReLU step), layer mean",
    "log10_chi": "log₁₀ χ at the last layer",
    "reff_x": "effective rank r(x) at the last layer",
    "reff_dx": "effective rank r(dx) at the last layer",
    "kurtosis": "kurtosis μ₄ of the BN output at the last layer",
    "nu1": "ν₁(|y|) of the BN output at the last layer",
}

#: The Gaussian values of the tails (Labatie 2019, Fig. 4(d)): kurtosis 3, ν₁(|y|) = √(2/π).
GAUSSIAN_TAILS = {"kurtosis": 3.0, "nu1": math.sqrt(2 / math.pi)}


def fc_comparison_table(
    increments: Mapping[str, Estimate],
    log10chi: Estimate,
    last: Mapping[str, Estimate],
    authors_end: Mapping[str, tuple[float, float]],
) -> pd.DataFrame:
    """Our fully-connected nets against the authors' at the same batch (Labatie 2019, Fig. 4 and
    App. A) in one table, a row per quantity of :data:`FC_ROWS`: our mean and its standard error
    over networks (``increments`` of :func:`bn_ff_fc_findings` — δχ = δ_BN χ · δ_φ χ, Eq. (14) of
    the paper's §6 —, ``log10chi`` at the last layer and :func:`last_layer_findings`'s ``last``),
    the authors' (mean, SE) at the last layer from ``authors_end``
    (:func:`layerwise.published.bn_ff_endpoints`; NaN for the increments, which their arrays give
    without a spread over networks) and the Gaussian value of the tails (NaN elsewhere)."""
    ours = {**increments, "log10_chi": log10chi, **last}
    rows = []
    for key, label in FC_ROWS.items():
        mean, se = cell(ours[key])
        theirs = authors_end.get(key, (math.nan, math.nan))
        rows.append(
            {
                "quantity": label,
                "ours": mean,
                "± s.e.": se,
                "authors": theirs[0],
                "± s.e. (authors)": theirs[1],
                "Gaussian": GAUSSIAN_TAILS.get(key, math.nan),
            }
        )
    return pd.DataFrame(rows).set_index("quantity")


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
#: The data-set table's columns, named as the page shows them (Labatie 2019, App. A).
RATE_COLUMNS = (
    "log₁₀ δχ (decades per layer)",
    "± s.e.",
    "log₁₀ χᴸ",
    "effective rank r(xᴸ)",
    "kurtosis at L",
)


def _rate_fits(
    runs: Mapping[str, tuple[Any, Mapping[str, np.ndarray]]], l_min: float
) -> dict[str, dict[str, float]]:
    """:func:`~layerwise.labatie.exp_fit` of log χ over depth ≥ ``l_min`` for each data set."""
    return {ds: exp_fit(d, Q["chi"], l_min=l_min) for ds, (d, Q) in runs.items()}


def exp_rate_table(
    runs: Mapping[str, tuple[Any, Mapping[str, np.ndarray]]], l_min: float
) -> pd.DataFrame:
    """One row per data set of BN feedforward nets (Labatie App. A): the exponential growth of χ
    in decades per layer, log₁₀ δχ = rate / ln 10 with the natural-log ``rate`` of
    :func:`~layerwise.labatie.exp_fit` over depth ≥ ``l_min``, with its error over networks, and
    the mean over networks of log₁₀ χ, the effective rank r(x) and the kurtosis at the last record
    (columns :data:`RATE_COLUMNS`). ``runs`` maps a data set to ``(depth, panels)`` with panels
    from :func:`~layerwise.labatie.bn_ff_panels`. Returns a DataFrame indexed by ``data``."""
    fits = _rate_fits(runs, l_min)
    rows = []
    for ds, (_, Q) in runs.items():
        values = (
            fits[ds]["rate"] / math.log(10),
            fits[ds]["se_rate"] / math.log(10),
            summary(np.log10(Q["chi"][:, -1]))["mean"],
            summary(Q["reff_x"][:, -1])["mean"],
            summary(Q["kurt_z"][:, -1])["mean"],
        )
        rows.append({"data": ds, **dict(zip(RATE_COLUMNS, values))})
    return pd.DataFrame(rows).set_index("data")


def bn_ff_dataset_study(
    runs: Mapping[str, tuple[Any, Mapping[str, np.ndarray]]], l_min: float, *, seed: int = 0
) -> dict[str, Any]:
    """The data sets (Labatie 2019, App. A: 'equivalent behaviour' on MNIST): ``runs`` maps a data
    set to the engine's ``(depth, arrays)`` of equally many networks. Returns ``runs`` with their
    panels (:func:`~layerwise.labatie.bn_ff_panels`), the ``table`` of :func:`exp_rate_table`, the
    figure's ``arrays`` (mean χ and r(x) per data set) and the relative ``spread`` of the
    exponential rates with its parametric-bootstrap interval
    (:func:`layerwise.stats.relative_spread`, t with networks − 1 d.o.f., ``seed``)."""
    dsq = {ds: (d, bn_ff_panels(A)) for ds, (d, A) in runs.items()}
    n = _networks(Q for _, Q in dsq.values())
    fits = _rate_fits(dsq, l_min)
    rates = pd.Series({ds: f["rate"] for ds, f in fits.items()})
    ses = pd.Series({ds: f["se_rate"] for ds, f in fits.items()})
    return {
        "runs": dsq,
        "table": exp_rate_table(dsq, l_min=l_min),
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


def batch_endpoints(runs: Mapping[int, Mapping[str, np.ndarray]]) -> pd.DataFrame:
    """One row per batch size B (Labatie App. A): the mean over networks and its standard error
    (``se_<name>``) of each quantity of :data:`BATCH_ENDPOINTS` at the last record. ``runs`` maps B
    to panels from :func:`~layerwise.labatie.bn_ff_panels`. Returns a DataFrame with a column
    ``B``."""
    rows = []
    for B, Q in runs.items():
        r: dict[str, Any] = {"B": B}
        for k, f in BATCH_ENDPOINTS.items():
            s = summary(f(Q))
            r[k], r[f"se_{k}"] = s["mean"], s["se"]
        rows.append(r)
    return pd.DataFrame(rows)


def batch_findings(table: pd.DataFrame) -> dict[str, Any]:
    """What the batch-size table (:func:`batch_endpoints`, rows in increasing B) says:
    ``trend[name]`` (:func:`monotone_trend` of each :data:`BATCH_ENDPOINTS` quantity against B),
    ``ratio`` = r_eff(x)/r_eff(dx) per batch, the smallest and largest batch (``b_small``,
    ``b_large``) and the ratio there (``ratio_small``, ``ratio_large``)."""
    trend = {k: monotone_trend(table["B"], table[k], table[f"se_{k}"]) for k in BATCH_ENDPOINTS}
    ratio = (table["reff_x"] / table["reff_dx"]).to_numpy()
    return {
        "trend": trend,
        "ratio": ratio,
        "b_small": int(table["B"].iloc[0]),
        "b_large": int(table["B"].iloc[-1]),
        "ratio_small": ratio[0],
        "ratio_large": ratio[-1],
    }


def bn_ff_batch_study(runs: Mapping[int, tuple[Any, Mapping[str, np.ndarray]]]) -> dict[str, Any]:
    """The batch-size study (Labatie 2019, App. A): ``runs`` maps B (increasing) to the engine's
    ``(depth, arrays)`` of equally many networks. Returns their ``panels``, the ``table`` of
    :func:`batch_endpoints`, the figure's ``arrays`` (its columns), the numbers of
    :func:`batch_findings`, each quantity's ``slope`` against log2 B as an estimate (weighted
    least squares, networks − 1 d.o.f.), and at the largest batch ``b_max`` the estimate
    ``large_batch_gap`` of r_eff(dx) − r_eff(x) at the last record; ``ratio_estimates``: at the
    smallest and largest batch, the mean over networks of r_eff(x)/r_eff(dx) at the last record as
    an estimate."""
    panels = {B: bn_ff_panels(A) for B, (_, A) in runs.items()}
    n = _networks(panels.values())
    table = batch_endpoints(panels)
    findings = batch_findings(table)
    b_max = max(panels)
    return {
        "panels": panels,
        "table": table,
        "arrays": {k: table[k].to_numpy() for k in table.columns},
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


#: The rows of :func:`batch_slope_table`: key of :data:`BATCH_ENDPOINTS` → label.
BATCH_ROWS = {
    "log10_chi": "log₁₀ χ at the last layer",
    "kurtosis": "kurtosis μ₄ of the BN output",
    "reff_x": "effective rank r(x)",
    "reff_dx": "effective rank r(dx)",
}


def batch_slope_table(slope: Mapping[str, Estimate], depth: int = 200) -> pd.DataFrame:
    """What a doubling of the batch does (Labatie 2019, App. A), ours beside the authors': per
    quantity of :data:`BATCH_ROWS`, our weighted least-squares slope against log₂ B with its
    standard error (``slope`` of :func:`bn_ff_batch_study`), and the same fit
    (:func:`monotone_trend`) of the authors' fully-connected means at ``depth`` for B = 64 … 512,
    weighted by their standard errors over their networks
    (:func:`layerwise.published.bn_ff_endpoints`)."""
    ends = {B: published.bn_ff_endpoints(f"bn_ff_fc_{B}", depth) for B in published.FC_BATCHES}
    rows = []
    for key, label in BATCH_ROWS.items():
        means, ses = zip(*(ends[B][key] for B in published.FC_BATCHES), strict=True)
        theirs = monotone_trend(published.FC_BATCHES, means, ses)
        mean, se = cell(slope[key])
        rows.append(
            {
                "quantity": label,
                "ours": mean,
                "± s.e.": se,
                "authors": theirs["slope"],
                "± s.e. (authors)": theirs["slope_se"],
            }
        )
    return pd.DataFrame(rows).set_index("quantity")


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
    ``authors_se`` the authors' (mean, SE)."""
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
        "authors_se": theirs[ref],
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
    table: pd.DataFrame, n: int, depth: int = 200, confidence: float = 0.99
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
    ``d`` and ``batches`` the per-batch deviations."""
    rows = table[table["B"].isin(published.FC_BATCHES)].sort_values("B")
    if len(rows) < 1:
        raise ParameterError(
            f"none of the batches {list(table['B'])} is published; "
            f"the authors' are {list(published.FC_BATCHES)}"
        )
    authors = {b: published.bn_ff_endpoints(f"bn_ff_fc_{b}", depth) for b in published.FC_BATCHES}
    batches = [int(b) for b in rows["B"]]
    out: dict[str, dict[str, Any]] = {}
    for k in BATCH_ENDPOINTS:
        levels = {b: authors[b][k][0] for b in published.FC_BATCHES}
        half = np.array([nearest_half_gap(levels, b) for b in batches])
        ref = np.array([levels[b] for b in batches])
        ours, se = rows[k].to_numpy(float), rows[f"se_{k}"].to_numpy(float)
        se = np.hypot(se, [authors[b][k][1] for b in batches]) / half
        d = (ours - ref) / half
        dev, (lo, hi) = max_deviation_interval(
            d, se, np.zeros_like(d), dof=max(n - 1, 1), confidence=confidence
        )
        out[k] = {
            "deviation": interval_estimate(dev, lo, hi, n=n),
            "no_batch_effect": float(np.max(np.abs(ours[0] - ref) / half)),
            "d": d,
            "batches": batches,
        }
    return out


def input_offset_table(
    runs: Mapping[str, tuple[Any, Mapping[str, np.ndarray]]],
    experiment: str,
    l_early: int,
    l_end: int,
) -> pd.DataFrame:
    """Where the inputs' offset in χ comes from: per data set (``runs`` maps it to ``(depth,
    panels)``, :func:`~layerwise.labatie.bn_ff_panels`) the mean over networks of log₁₀ χ at the
    records ``l_early`` and ``l_end`` and of the growth between them, with the authors'
    ``experiment`` (their CIFAR-10 nets, means of log₁₀ χ after the ReLU) as the last row, and
    each row's offset from the authors at both depths."""
    c = published.moment(experiment, "chi_loc4")
    ia, ja = c.index(l_early), c.index(l_end)
    rows = [("authors (CIFAR-10)", float(c.mean_log10[ia]), float(c.mean_log10[ja]))]
    for ds, (d, Q) in runs.items():
        d = list(np.asarray(d))
        if l_early not in d or l_end not in d:
            raise ParameterError(f"l_early={l_early} and l_end={l_end} must be records of {ds}")
        lc = np.log10(Q["chi"])
        rows.insert(
            -1, (ds, float(lc[:, d.index(l_early)].mean()), float(lc[:, d.index(l_end)].mean()))
        )
    t = pd.DataFrame(rows, columns=["data", f"log₁₀ χ at l = {l_early}", f"log₁₀ χ at l = {l_end}"])
    t = t.set_index("data")
    early, end = t.columns
    t["growth"] = t[end] - t[early]
    t[f"offset at l = {l_early}"] = t[early] - t.loc["authors (CIFAR-10)", early]
    t[f"offset at l = {l_end}"] = t[end] - t.loc["authors (CIFAR-10)", end]
    return t


def fc_batch_table(depth: int = 200) -> pd.DataFrame:
    """The authors' fully-connected batch-size study
    (:func:`layerwise.published.bn_ff_fc_batch_study`)
    at ``depth`` as a table indexed by the batch size B, one column per quantity (Labatie 2019,
    App. A)."""
    columns = {
        "reff_x": "effective rank r(x)",
        "reff_dx": "effective rank r(dx)",
        "kurtosis": "kurtosis μ₄",
        "log10_chi": "log₁₀ χ",
    }
    table = pd.DataFrame(published.bn_ff_fc_batch_study(depth)).astype({"B": int}).set_index("B")
    return table.drop(columns="nu1").rename(columns=columns)


# ----------------------------------------------------------------------------------------------
# The input, the reference configurations and the controls of a comparison (Chapters 4 and 5)
# ----------------------------------------------------------------------------------------------
BUILTIN_INPUTS: tuple[str, ...] = ("patches", "digits", "gaussian")
"""The inputs every run can draw offline; the chapters compare the chosen input with the others."""
INPUT_WORDS: dict[str, str] = {
    "patches": "photo patches",
    "digits": "digits",
    "gaussian": "i.i.d. Gaussian images",
    "cifar10": "CIFAR-10",
    "mnist": "MNIST",
    "mnist5k": "MNIST (5 000 digits)",
}
"""A data-set kind (:func:`layerwise.data.check_source`) in words."""


def input_words(dataset: str) -> str:
    """The data set ``dataset`` (a name or ``NAME:DIR``) in words: ``"cifar10:/x"`` → CIFAR-10."""
    kind = str(dataset).partition(":")[0]
    if kind not in INPUT_WORDS:
        raise ParameterError(
            f"dataset={dataset!r} is not allowed; choose one of: {', '.join(INPUT_WORDS)}"
        )
    return INPUT_WORDS[kind]


def compared_inputs(dataset: str) -> list[str]:
    """The chosen input first, then the built-in inputs (:data:`BUILTIN_INPUTS`) it is not: the
    inputs a chapter runs side by side to measure what the input does."""
    return [dataset, *(d for d in BUILTIN_INPUTS if d != dataset)]


def architecture_words(arch: str, kernel_size: int, boundary: str = "periodic") -> str:
    """``"BN feedforward, conv 3×3 periodic"``, ``"BN ResNet, fully-connected"``, …"""
    net = {"bn_ff": "BN feedforward", "bn_res": "BN ResNet", "vanilla": "vanilla"}.get(arch, arch)
    if kernel_size == 1:
        return f"{net}, fully-connected"
    return f"{net}, conv {kernel_size}×{kernel_size} {boundary.replace('_', ' ')}"


def configuration(
    arch: str,
    kernel_size: int,
    width: int,
    batch: int,
    depth: int,
    dataset: str,
    *,
    res_depth: int | None = None,
    boundary: str = "periodic",
    epsilon: float | None = None,
) -> dict[str, Any]:
    """A configuration in the words of a claim's ``conditions``: architecture, width, batch,
    depth (``"500 units of 2 layers"`` for a ResNet), input and, when given, BN's ε."""
    out: dict[str, Any] = {
        "architecture": architecture_words(arch, kernel_size, boundary),
        "width": int(width),
        "batch": int(batch),
        "depth": f"{depth} units of {res_depth} layers" if res_depth else int(depth),
        "input": input_words(dataset),
    }
    if epsilon is not None:
        out["BN ε"] = float(epsilon)
    return out


def authors_configuration(experiment: str, *, epsilon: bool = False) -> dict[str, Any]:
    """:func:`configuration` of the authors' ``experiment`` (:func:`layerwise.published.config`)."""
    c = published.config(experiment)
    return configuration(
        c["architecture"],
        c["kernel_size"],
        c["num_channels"],
        c["batch_size"],
        c["total_depth"],
        c["dataset"],
        res_depth=c.get("res_depth") if c["architecture"] == "bn_res" else None,
        boundary=c.get("boundary", "periodic"),
        epsilon=c.get("epsilon") if epsilon else None,
    )


def side_by_side(ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> dict[str, tuple[Any, Any]]:
    """A claim's ``conditions``: ``{name: (ours, theirs)}`` for every name of ``theirs``."""
    return {k: (ours[k], theirs[k]) for k in theirs}


def rule_outcome(e: Estimate, comparison: str, reference: Any, tol: float | None) -> str:
    """The ledger's outcome (:func:`layerwise.claims.outcome`) for estimate ``e`` under a rule."""
    return outcome(e.mean, comparison, reference, tol, se=e.se, dof=e.dof)


def reference_control(
    authors: tuple[float, float], comparison: str, reference: Any, tol: float | None, label: str
) -> Control:
    """Reference control: the claim's rule applied to the authors' own data, ``authors`` =
    (mean, SE) over their networks, as if they were a second set of networks of theirs (the SE of
    the difference √2·SE, normal interval; SE 0: a value of their mean curves, graded as a point).
    Passes when the rule accepts them."""
    m, se = float(authors[0]), float(authors[1])
    got = outcome(m, comparison, reference, tol, se=math.sqrt(2.0) * se if se > 0 else None)
    error = f" ± {_fmt(se)} over their networks, √2 × their error" if se > 0 else ""
    note = f"the rule applied to {label} ({_fmt(m)}{error}): {got}"
    return Control("reference", got == "pass", note)


def estimator_control(
    values: Any,
    comparison: str,
    reference: Any,
    tol: float | None,
    good: float,
    bad: float,
    *,
    reference_se: float | None = None,
    seed: int = 0,
) -> Control:
    """Estimator control of a claim graded on a mean over networks of per-network ``values``:
    as many synthetic networks, normal with our spread between networks (standard deviation of
    ``values``; 0 for one network), drawn with a true mean ``good`` (one the rule
    accepts) must not fail, and with a true mean ``bad`` (one it rejects) must not pass — graded
    as the claim is (against a published (``reference``, ``reference_se``) with both errors
    combined, :func:`layerwise.stats.versus_reference`, when ``reference_se`` is given)."""
    v = np.asarray(values, dtype=float).ravel()
    n, sd = max(v.size, 2), float(np.std(v, ddof=1)) if v.size > 1 else 0.0
    rng = np.random.default_rng([seed, 0x4C45])
    got = []
    for truth in (good, bad):
        x = float(truth) + sd * rng.standard_normal(n)
        e = (
            versus_reference(x, (float(reference), float(reference_se)))
            if reference_se is not None
            else estimate_or_point(x)
        )
        got.append(rule_outcome(e, comparison, reference, tol))
    return Control(
        "estimator",
        got[0] != "fail" and got[1] != "pass",
        f"{n} synthetic networks (spread {_fmt(sd)} between networks, as ours) with a true "
        f"mean {_fmt(good)}: {got[0]}; with {_fmt(bad)}: {got[1]}",
    )


def conditions_control(
    ours: Mapping[str, Any],
    theirs: Mapping[str, Any],
    effects: Mapping[str, Estimate | None],
    margin: float,
    unit: str = "",
) -> Control:
    """Conditions control: our configuration ``ours`` beside the reference's ``theirs``
    (:func:`configuration`). A condition that differs *matters* unless the chapter measured its
    effect on the claim's quantity (``effects``: condition → an Estimate of the change it makes,
    e.g. the difference between two inputs) and the whole interval of |effect| lies below the
    claim's ``margin`` (absolute: the half-width of the accepted set). Passes when no differing
    condition matters."""
    differ = [k for k in theirs if ours.get(k) != theirs[k]]
    parts, ok = [], True
    for k in differ:
        e = effects.get(k)
        if e is None:
            ok = False
            parts.append(f"{k} {ours.get(k)!s} against {theirs[k]!s}: its effect not measured")
            continue
        lo, hi = e.bounds()
        worst = max(abs(lo), abs(hi))
        harmless = Estimate(worst).side(margin) == -1
        ok = ok and harmless
        parts.append(
            f"{k} {ours.get(k)!s} against {theirs[k]!s}: measured to move it by "
            f"{_fmt(e.mean)}{unit} (99 % bound {_fmt(worst)}{unit}) against the margin "
            f"{_fmt(margin)}{unit}"
            + ("" if harmless else ": not shown to lie within it, so it matters")
        )
    note = "; ".join(parts) if parts else "same conditions as the reference"
    return Control("conditions", ok, note)


def _fmt(x: float) -> str:
    x = float(x)
    return f"{x:.3g}" if math.isfinite(x) else "nan"




# ----------------------------------------------------------------------------------------------
# Which of the authors' convolutional variants is the like-for-like reference, quantity by quantity
# ----------------------------------------------------------------------------------------------
CONV_REFERENCE = "bn_ff_mnist"
#: How the pages name the authors' three convolutional variants (their arrays' names are code).
VARIANT_WORDS = {
    "bn_ff_mnist": "MNIST input, periodic, ε = 10⁻³",
    "bn_ff_zero_padding": "CIFAR-10, zero padding",
    "bn_ff_epsilon": "CIFAR-10, periodic, ε = 0",
}
"""The authors' convolutional variant our convolutional nets are graded against: of the three
(:data:`layerwise.published.BN_FF_CONV_VARIANTS`) the one with our boundary (periodic) and our
BN ε (10⁻³); its input is MNIST (see :func:`conv_variant_table`)."""
VARIANT_ROWS = {
    "log10_dchi": "growth log₁₀ δχ per layer, late",
    "reff_x": "effective rank r(x), late",
    "reff_dx": "effective rank r(dx), late",
    "kurtosis": "kurtosis μ₄ of the BN output, late",
    "nu1": "ν₁(|y|) of the BN output, late",
    "log10_chi_end": "log₁₀ χ at the last layer",
}


def conv_late_values(
    depth: Any, arrays: Mapping[str, np.ndarray], l_min: int, l_max: int
) -> dict[str, np.ndarray]:
    """Per-network values of :data:`VARIANT_ROWS` for a convolutional run: :func:`late_ours` over
    layers ``l_min``–``l_max`` and log₁₀ χ (after the ReLU) at the last record."""
    out = late_ours(depth, arrays, l_min, l_max)
    out["log10_chi_end"] = np.log10(np.asarray(arrays["chi_loc4"], dtype=float)[:, -1])
    return out


def conv_variant_values(l_min: int, l_max: int) -> dict[str, dict[str, tuple[float, float]]]:
    """The authors' three convolutional variants, per variant the (mean, SE) of each quantity of
    :data:`VARIANT_ROWS` over layers ``l_min``–``l_max`` (log₁₀ χ at ``l_max``)."""
    out = {}
    for v in published.BN_FF_CONV_VARIANTS:
        late = published.late_published(v, l_min, l_max)
        late["log10_chi_end"] = published.bn_ff_endpoints(v, l_max)["log10_chi"]
        out[v] = late
    return out


def conv_variant_table(
    ours: Mapping[str, Mapping[str, np.ndarray]],
    variants: Mapping[str, Mapping[str, tuple[float, float]]],
) -> pd.DataFrame:
    """Per quantity of :data:`VARIANT_ROWS`: our mean per input (``ours``: input words →
    :func:`conv_late_values`), the authors' three variants' means, and three relative effects —
    ``input (ours)``: our first input minus our second, over the authors' reference
    (:data:`CONV_REFERENCE`); ``MNIST − CIFAR-10, periodic``: bn_ff_mnist − bn_ff_epsilon (input,
    and ε 10⁻³ against 0); ``zero padding − periodic, CIFAR-10``: bn_ff_zero_padding −
    bn_ff_epsilon (boundary, and ε) — each over the reference's mean (log₁₀ χ: in decades)."""
    names = list(ours)
    rows = []
    for k, label in VARIANT_ROWS.items():
        ref = variants[CONV_REFERENCE][k][0]
        scale = 1.0 if k == "log10_chi_end" else abs(ref)
        r: dict[str, Any] = {"quantity": label}
        for name in names:
            r[f"ours, {name}"] = float(np.mean(ours[name][k]))
        for v in published.BN_FF_CONV_VARIANTS:
            r[f"authors, {VARIANT_WORDS[v]}"] = variants[v][k][0]
        r["input (ours)"] = (r[f"ours, {names[0]}"] - r[f"ours, {names[1]}"]) / scale
        r["MNIST − CIFAR-10, periodic"] = (
            variants["bn_ff_mnist"][k][0] - variants["bn_ff_epsilon"][k][0]
        ) / scale
        r["zero padding − periodic, CIFAR-10"] = (
            variants["bn_ff_zero_padding"][k][0] - variants["bn_ff_epsilon"][k][0]
        ) / scale
        rows.append(r)
    return pd.DataFrame(rows).set_index("quantity")


def input_difference(a: Any, b: Any) -> Estimate | None:
    """Mean of per-network values ``a`` minus mean of ``b`` (two independent runs) with the
    combined standard error and the d.o.f. of the smaller run (n − 1: the t interval errs wide);
    ``None`` when either run has a single network (no error: the effect is not measured)."""
    ea, eb = estimate_or_point(a), estimate_or_point(b)
    if ea.se is None or eb.se is None:
        return None
    n = min(ea.n, eb.n)
    return Estimate(ea.mean - eb.mean, math.hypot(ea.se, eb.se), n - 1, n)
