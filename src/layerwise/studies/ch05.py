"""Chapter 5's study (Labatie 2019, §7: batch-normalised ResNets): what the chapter derives from the
moments engine's runs with the science of :mod:`layerwise.labatie` — the power law of χ and the
Eq. 15 exponent, the exponents over windows of units, the last unit's conditioning and tails, the
kurtosis against data and batch, ResNets against feedforward nets and the data sets.  Numbers,
arrays and estimates only: the chapter words its conclusions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..labatie import power_fit, power_overlay, r2_bootstrap, r2_pair, tau_prediction
from ..params import check_positive_int
from ..stats import Estimate, estimate, estimate_or_point, exact, interval_estimate, summary


def fig5_summary(
    depth: Any, panels: Mapping[str, np.ndarray], res_depth: int, l_min: int, *, seed: int = 0
) -> dict[str, Any]:
    """Labatie's Fig. 5 statistics of one BN ResNet run (``panels`` of
    :func:`~layerwise.labatie.bn_res_panels` at the units ``depth``) over units ≥ ``l_min``: the
    Eq. 15 exponent ``tau_eq15`` (:func:`~layerwise.labatie.tau_prediction`, (τ, SE)), the free
    ``power_fit``, the ``overlay`` (:func:`~layerwise.labatie.power_overlay`, ``seed``), ``r2``
    (:func:`~layerwise.labatie.r2_pair` of the mean log χ), ``tau_distance`` = |τ_fit − τ_Eq.15| in
    combined standard errors, and estimates over networks of the feedforward increment inside the
    units (``dff``) and, at the last unit, of r_eff of signal and noise (``reff_x``, ``reff_dx``)
    and of the kurtosis after the first BN (``kurtosis``)."""
    d = np.asarray(depth)
    sel = d >= l_min
    tau, tau_se = tau_prediction(panels["dff"][:, sel], res_depth)
    fit = power_fit(d, panels["chi"], l_min=l_min)
    return {
        "tau_eq15": (tau, tau_se),
        "power_fit": fit,
        "overlay": power_overlay(
            d, panels["chi"], panels["dff"][:, sel], res_depth, l_min=l_min, seed=seed
        ),
        "r2": r2_pair(d, np.log(panels["chi"]).mean(0), l_min=l_min),
        "tau_distance": abs(fit["tau"] - tau) / float(np.hypot(fit["se_tau"], tau_se)),
        "dff": estimate_or_point(panels["dff"][:, sel].mean(1)),
        "reff_x": estimate_or_point(panels["reff_x"][:, -1]),
        "reff_dx": estimate_or_point(panels["reff_dx"][:, -1]),
        "kurtosis": estimate_or_point(panels["kurt_z"][:, -1]),
    }


def overlay_deviation(overlay: Mapping[str, Any], n_networks: int) -> Estimate:
    """The largest relative deviation of the Eq. 15 overlay
    (:func:`~layerwise.labatie.power_overlay`) with its network-bootstrap interval; one network
    has none: the value, graded as a point."""
    if n_networks > 1:
        return interval_estimate(overlay["max_dev"], *overlay["interval"], n=n_networks)
    return exact(overlay["max_dev"])


def growth_law_fits(depth: Any, chi: Any, l_min: float, *, seed: int = 0) -> dict[str, Estimate]:
    """R² of the network-averaged log χ against l (``r2_l``) and against log l (``r2_log``) and
    their difference ``diff`` = R²(log l) − R²(l), each with its network-bootstrap interval
    (:func:`~layerwise.labatie.r2_bootstrap`; one network: the values, graded as points)."""
    boot = r2_bootstrap(depth, chi, l_min=l_min, seed=seed)
    n = int(np.asarray(chi).shape[0])
    pairs = (("r2_l", "ci_l"), ("r2_log", "ci_log"), ("diff", "ci_diff"))
    return {k: exact(boot[k]) if boot[ci] is None else interval_estimate(boot[k], *boot[ci], n=n)
            for k, ci in pairs}


def exponent_windows(
    depth: Any, chi: Any, delta: Any, res_depth: int, l_min: int, l_max: int, n_windows: int = 4
) -> pd.DataFrame:
    """The free power-law exponent and the Eq. 15 exponent over successive windows of units: the
    window edges are ``n_windows + 1`` integers spaced evenly from ``l_min`` to ``l_max``
    (duplicates dropped); in each window [a, b] :func:`~layerwise.labatie.power_fit` of ``chi``
    and :func:`~layerwise.labatie.tau_prediction` from ``delta`` (both networks × len(depth)), and
    their difference in combined standard errors. Returns a DataFrame indexed by ``units``
    ("a–b")."""
    depth = np.asarray(depth)
    chi = np.asarray(chi, dtype=np.float64)
    delta = np.asarray(delta, dtype=np.float64)
    n_windows = check_positive_int("n_windows", n_windows)
    edges = np.unique(np.linspace(l_min, l_max, n_windows + 1).astype(int))
    rows = []
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        w = (depth >= a) & (depth <= b)
        pw = power_fit(depth[w], chi[:, w], l_min=a)
        tw, twse = tau_prediction(delta[:, w], res_depth)
        rows.append(
            {
                "units": f"{a}–{b}",
                "free τ": pw["tau"],
                "s.e. (free)": pw["se_tau"],
                "Eq. 15 τ": tw,
                "s.e. (Eq. 15)": twse,
                "difference / combined s.e.": (pw["tau"] - tw) / np.hypot(pw["se_tau"], twse),
            }
        )
    return pd.DataFrame(rows).set_index("units")


def power_rate_table(
    runs: Mapping[str, tuple[Any, Mapping[str, np.ndarray]]], res_depth: int, l_min: float
) -> pd.DataFrame:
    """One row per data set of BN ResNets: the free exponent (:func:`~layerwise.labatie.power_fit`)
    and the Eq. 15 exponent (:func:`~layerwise.labatie.tau_prediction`) over units ≥ ``l_min``,
    and log χ and r_eff(x) at the last record (means over networks, log χ with its error). ``runs``
    maps a data set to ``(depth, panels)`` with panels from
    :func:`~layerwise.labatie.bn_res_panels`. Returns a DataFrame indexed by ``data``."""
    rows = []
    for ds, (d, Q) in runs.items():
        p = power_fit(d, Q["chi"], l_min=l_min)
        t, tse = tau_prediction(Q["dff"][:, np.asarray(d) >= l_min], res_depth)
        c = summary(np.log(Q["chi"][:, -1]))
        rows.append(
            {
                "data": ds,
                "free τ": p["tau"],
                "s.e. (free)": p["se_tau"],
                "Eq. 15 τ": t,
                "s.e. (Eq. 15)": tse,
                "log χ^L": c["mean"],
                "s.e. (log χ^L)": c["se"],
                "r_eff(x^L)": summary(Q["reff_x"][:, -1])["mean"],
            }
        )
    return pd.DataFrame(rows).set_index("data")


def log_chi_ratio(
    table: pd.DataFrame, numerator: str = "patches", denominator: str = "gaussian", *, n: int
) -> Estimate:
    """log(χ^L of ``numerator`` / χ^L of ``denominator``) from :func:`power_rate_table`, with the
    combined standard error of the two means and ``n`` − 1 d.o.f. (``n`` networks per data set)."""
    diff = table.loc[numerator, "log χ^L"] - table.loc[denominator, "log χ^L"]
    se = float(
        np.hypot(table.loc[numerator, "s.e. (log χ^L)"], table.loc[denominator, "s.e. (log χ^L)"])
    )
    return Estimate(float(diff), se, n - 1, n)


def kurtosis_table(entries: Iterable[tuple[str, int, Mapping[str, np.ndarray]]]) -> pd.DataFrame:
    """Kurtosis μ₄/μ₂² after the first BN of BN ResNets at the last record, one row per
    ``(input label, batch, engine arrays)``: its mean over networks with standard error, the low
    bias 3(B − 1)/(B + 1) of the kurtosis of B Gaussian values, and the number of networks.
    Returns a DataFrame indexed by (input, batch)."""
    rows = []
    for label, bsz, A in entries:
        e = estimate(A["mu4_signal_loc2"][:, -1] / A["mu2_signal_loc2"][:, -1] ** 2)
        rows.append(
            {
                "input": label,
                "batch": bsz,
                "kurtosis at the last unit": e.mean,
                "± s.e.": e.se,
                "Gaussian-data bias 3(B−1)/(B+1)": 3 * (bsz - 1) / (bsz + 1),
                "networks": e.n,
            }
        )
    return pd.DataFrame(rows).set_index(["input", "batch"])


def kurtosis_findings(table: pd.DataFrame) -> dict[str, Any]:
    """The numbers of the kurtosis table (:func:`kurtosis_table`, rows: photo patches at B, i.i.d.
    Gaussian at B, photo patches at 4B): the three kurtoses (``patches``, ``gaussian``,
    ``patches_4b``, each (mean, SE)), the differences the input makes (rows 0 − 1, ``by_input``)
    and the batch (rows 0 − 2, ``by_batch``) as estimates (combined SE, d.o.f. the smaller n − 1 of
    the two rows) and the largest kurtosis ``largest``."""

    def difference(i: int, j: int) -> Estimate:
        se = float(np.hypot(table.iloc[i, 1], table.iloc[j, 1]))
        n = int(min(table["networks"].iloc[[i, j]]))
        return Estimate(float(table.iloc[i, 0] - table.iloc[j, 0]), se, n - 1, n)

    return {
        "patches": (table.iloc[0, 0], table.iloc[0, 1]),
        "gaussian": (table.iloc[1, 0], table.iloc[1, 1]),
        "patches_4b": (table.iloc[2, 0], table.iloc[2, 1]),
        "by_input": difference(0, 1),
        "by_batch": difference(0, 2),
        "largest": float(table.iloc[:, 0].max()),
    }
