"""Chapter 5's study (Labatie 2019, §7: batch-normalised ResNets): what the chapter derives from the
moments engine's runs with the science of :mod:`layerwise.labatie` — the power law of χ and the
Eq. 15 exponent, the exponents over windows of units, the last unit's conditioning and tails, the
kurtosis against data and batch, ResNets against feedforward nets and the data sets, and our
fully-connected nets against the authors' (``bn_res_fc`` of :mod:`layerwise.published`: width 512,
B = 64, CIFAR-10, 500 units of 2 layers, 200 networks).  Numbers, arrays and estimates only: the
chapter words its conclusions."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from .. import published
from ..claims import Control, accepted_set, grade
from ..controls import (  # noqa: F401  (the input and the controls, shared with Chapter 4)
    authors_configuration,
    compared_inputs,
    conditions_control,
    configuration,
    estimator_control,
    input_difference,
    input_words,
    reference_control,
    side_by_side,
)
from ..labatie import (
    power_fit,
    power_overlay,
    r2_bootstrap,
    r2_pair,
    tau_prediction,
)
from ..params import ParameterError, check_positive_int
from ..stats import (
    Estimate,
    estimate,
    estimate_or_point,
    exact,
    interval_estimate,
    versus_reference,
)
from ..tables import cell

AUTHORS_FC = "bn_res_fc"
"""The authors' fully-connected BN ResNets (:mod:`layerwise.published`)."""
FC_LEVELS: dict[str, str] = {
    "reff_x": "reff_signal_loc3",
    "reff_dx": "reff_noise_loc3",
    "kurtosis": "mu4_signal_loc2",
}
"""Levels of Labatie's Fig. 5 (c, d) at one unit: our key → the engine's and the authors' array.
The authors' ResNet locations are ours (their ``models.py``): loc1 unit input → BN → loc2 → ReLU →
loc3 → weights → loc4 → … → loc5 after the addition; Fig. 5(c) plots r_eff at loc3 (the only
location where their code computes it), Fig. 5(d) μ₄ at loc2."""


def authors_fig5_reference() -> dict[str, Any]:
    """The authors' fully-connected curves of Labatie's Fig. 5 (:data:`AUTHORS_FC`) in the layout of
    :func:`layerwise.figures.moments.four_panels` (key → (centre, 10 % quantile, 90 % quantile)):
    ``dbn`` = 10^(E log10 χ(loc2) − E log10 χ(loc1)) (no band: the file has no per-network
    ratios), ``chi`` after the addition as geometric mean with its band, r_eff of signal and noise
    after the first ReLU, the kurtosis ``kurt_z`` and ``nu1_z`` after the first BN as means with
    their bands.  (The file has no χ after the first ReLU, so no ``dphi``.)"""
    c1, c2, c5 = (published.moment(AUTHORS_FC, f"chi_loc{k}") for k in (1, 2, 5))
    out: dict[str, Any] = {
        "depth": c1.depth,
        "dbn": (10 ** (c2.mean_log10 - c1.mean_log10), None, None),
        "chi": (10**c5.mean_log10, c5.q10, c5.q90),
    }
    for key, name in [*FC_LEVELS.items(), ("nu1_z", "nu1_abs_signal_loc2")]:
        m = published.moment(AUTHORS_FC, name)
        out["kurt_z" if key == "kurtosis" else key] = (m.mean, m.q10, m.q90)
    return out


def _at(depth: np.ndarray, unit: int, what: str) -> int:
    hits = np.flatnonzero(np.asarray(depth) == unit)
    if hits.size != 1:
        raise ParameterError(f"unit={unit!r} is not a record of {what}; records: {depth[0]}…")
    return int(hits[0])


def fc_values(
    depth: Any, arrays: Mapping[str, np.ndarray], l_min: int, l_max: int
) -> dict[str, np.ndarray]:
    """Per-network values of BN ResNet engine ``arrays`` (networks × records at units ``depth``)
    compared with the authors': the exponent over units ``l_min``–``l_max`` as the slope between
    the two ends, ``tau`` = log10(χ^{l_max}/χ^{l_min}) / log10(l_max/l_min) (χ after the addition,
    loc5); ``log10_chi`` = log10 χ^{l_max}; ``dff`` = 10^(mean over the window's records of
    log10 χ(loc4)/χ(loc1)), the feedforward increment inside the units; and at ``l_max`` the
    levels of :data:`FC_LEVELS` (the kurtosis as μ₄/μ₂²)."""
    d = np.asarray(depth)
    i, j = _at(d, l_min, "our run"), _at(d, l_max, "our run")
    lc = np.log10(arrays["chi_loc5"])
    window = (d >= l_min) & (d <= l_max)
    ratio = np.log10(arrays["chi_loc4"][:, window] / arrays["chi_loc1"][:, window])
    return {
        "dff": 10 ** ratio.mean(1),
        "tau": (lc[:, j] - lc[:, i]) / math.log10(l_max / l_min),
        "log10_chi": lc[:, j],
        "reff_x": arrays["reff_signal_loc3"][:, j],
        "reff_dx": arrays["reff_noise_loc3"][:, j],
        "kurtosis": arrays["mu4_signal_loc2"][:, j] / arrays["mu2_signal_loc2"][:, j] ** 2,
    }


def authors_fc(l_min: int, l_max: int) -> dict[str, Any]:
    """The statistics of :func:`fc_values` for the authors' ``bn_res_fc`` nets, each (mean, SE) over
    their networks, and ``band``: the half-width of their 10–90 % band of single networks relative
    to the mean, for each level of :data:`FC_LEVELS`.

    The mean over networks of ``tau`` and ``log10_chi`` is exact (the file holds E log10 χ per
    unit); the file has no covariance between units, so the SE of ``tau`` is bounded above as in
    :func:`layerwise.published.late_published` (std of a difference ≤ sum of the stds).  ``dff``
    is 10^(window mean of E log10 χ(loc4) − E log10 χ(loc1)), without SE (NaN): the file has no
    per-network ratios."""
    c1, c4, c5 = (published.moment(AUTHORS_FC, f"chi_loc{k}") for k in (1, 4, 5))
    i, j = c5.index(l_min), c5.index(l_max)
    span = math.log10(l_max / l_min)
    window = (c5.depth >= l_min) & (c5.depth <= l_max)
    out: dict[str, Any] = {
        "dff": (float(10 ** (c4.mean_log10 - c1.mean_log10)[window].mean()), math.nan),
        "tau": (
            float(c5.mean_log10[j] - c5.mean_log10[i]) / span,
            float(c5.std_log10[j] + c5.std_log10[i]) / span / math.sqrt(c5.n),
        ),
        "log10_chi": c5.mean_se(l_max, log10=True),
        "band": {},
    }
    for key, name in FC_LEVELS.items():
        m = published.moment(AUTHORS_FC, name)
        out[key] = m.mean_se(l_max)
        k = m.index(l_max)
        out["band"][key] = float((m.q90[k] - m.q10[k]) / 2 / m.mean[k])
    return out


def versus_authors(
    ours: Mapping[str, np.ndarray], authors: Mapping[str, Any]
) -> dict[str, Estimate]:
    """Our per-network values (:func:`fc_values`) against the authors' (:func:`authors_fc`): for
    every key with an authors' SE, :func:`~layerwise.stats.versus_reference` (our mean, the
    combined SE of the difference, our d.o.f.)."""
    return {
        k: versus_reference(v, authors[k])
        for k, v in ours.items()
        if k in authors and math.isfinite(authors[k][1])
    }


def authors_table(
    runs: Mapping[str, Mapping[str, np.ndarray]], authors: Mapping[str, Any], label: str
) -> pd.DataFrame:
    """One row per quantity of :func:`fc_values`, two columns (mean, s.e.) per input of ``runs``
    (input → per-network values) and for the authors' nets (``label``); each column group is
    named ``"<input> (<networks>)"``."""
    cols: dict[tuple[str, str], list[float]] = {}
    keys = list(next(iter(runs.values())))
    for name, values in runs.items():
        es = [estimate_or_point(values[k]) for k in keys]
        head = f"{name} ({es[0].n})"
        cells = [cell(e) for e in es]
        cols[(head, "mean")] = [m for m, _ in cells]
        cols[(head, "s.e.")] = [se for _, se in cells]
    head = f"{label} ({published.moment(AUTHORS_FC, 'chi_loc5').n})"
    cols[(head, "mean")] = [authors[k][0] for k in keys]
    cols[(head, "s.e.")] = [authors[k][1] for k in keys]
    return pd.DataFrame(cols, index=keys)


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
    return {
        k: exact(boot[k]) if boot[ci] is None else interval_estimate(boot[k], *boot[ci], n=n)
        for k, ci in pairs
    }


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


def matches_authors(params: Mapping[str, Any]) -> bool:
    """Whether ``params`` (``width``, ``batch``, ``depth``, ``res_depth``) are the configuration of
    the authors' fully-connected ResNets (:data:`AUTHORS_FC`)."""
    c = published.config(AUTHORS_FC)
    want = {
        "width": c["num_channels"],
        "batch": c["batch_size"],
        "depth": c["total_depth"],
        "res_depth": c["res_depth"],
    }
    return all(params[k] == v for k, v in want.items())


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


def input_effect(runs: Mapping[str, Mapping[str, np.ndarray]], key: str) -> Estimate:
    """What the input does to quantity ``key`` (``runs``: input → per-network values of
    :func:`fc_values`): the difference between the inputs with the largest and the smallest mean
    (:func:`input_difference`, both runs' errors combined)."""
    means = {ds: float(np.mean(v[key])) for ds, v in runs.items()}
    hi, lo = max(means, key=means.__getitem__), min(means, key=means.__getitem__)
    return input_difference(runs[hi][key], runs[lo][key])


def versus_authors_by_input(
    runs: Mapping[str, Mapping[str, np.ndarray]], authors: Mapping[str, Any], key: str
) -> dict[str, Estimate]:
    """Per input, our mean of ``key`` minus the authors' (:func:`authors_fc`), with our and their
    errors combined (:func:`~layerwise.stats.versus_reference`): where each input's level lies
    against the authors' CIFAR-10 level."""
    out = {}
    for ds, v in runs.items():
        e = versus_reference(v[key], authors[key])
        out[ds] = Estimate(e.mean - authors[key][0], e.se, e.dof, e.n, reference_se=e.reference_se)
    return out


LEVELS_AT = {
    "reff_x": ("reff_signal_loc3", None),
    "reff_dx": ("reff_noise_loc3", None),
    "kurtosis": ("mu4_signal_loc2", "mu2_signal_loc2"),
}
"""The levels of :data:`FC_LEVELS` as (array, its square's normaliser): μ₄/μ₂² for the kurtosis."""


def gap_carried(depth: Any, arrays: Mapping[str, np.ndarray], key: str) -> dict[str, Any]:
    """Where our gap to the authors' level of ``key`` (:data:`LEVELS_AT`) is set: the relative
    gap ours/authors − 1 of the means over networks at the first unit both record (``first``,
    ``gap_first``) and at our last record (``last``, ``gap_last``)."""
    d = np.asarray(depth)
    name, norm = LEVELS_AT[key]
    m = published.moment(AUTHORS_FC, FC_LEVELS[key])
    common = [int(u) for u in d if int(u) in set(int(x) for x in m.depth)]
    if not common:
        raise ParameterError("our records and the authors' share no unit")

    def ours(unit: int) -> float:
        j = _at(d, unit, "our run")
        x = arrays[name][:, j]
        if norm is not None:
            x = x / arrays[norm][:, j] ** 2
        return float(np.mean(x))

    first, last = common[0], int(d[-1])
    return {
        "first": first,
        "gap_first": ours(first) / float(m.mean[m.index(first)]) - 1,
        "last": last,
        "gap_last": ours(last) / float(m.mean[m.index(last)]) - 1,
    }


def authors_overlay(l_min: int, l_max: int, res_depth: int) -> dict[str, float]:
    """The Eq. 15 overlay rule (:func:`~layerwise.labatie.power_overlay`'s centre statistic)
    applied to the authors' fully-connected ResNets (:data:`AUTHORS_FC`): τ from the mean
    increment 10^(E log10 χ(loc4) − E log10 χ(loc1)) over units ``l_min``–``l_max`` (our window),
    c fitted in log to their geometric-mean χ after the addition, and ``max_dev`` =
    max |χ̄/(c l^τ) − 1| there."""
    c1, c4, c5 = (published.moment(AUTHORS_FC, f"chi_loc{k}") for k in (1, 4, 5))
    d = c5.depth.astype(float)
    sel = (d >= l_min) & (d <= l_max)
    m = float(np.mean(10 ** (c4.mean_log10 - c1.mean_log10)[sel]))
    tau = (m ** (2 * res_depth) - 1.0) / 2.0
    log_chi = c5.mean_log10[sel] * math.log(10)
    log_c = float(np.mean(log_chi - tau * np.log(d[sel])))
    dev = np.exp(log_chi - log_c - tau * np.log(d[sel])) - 1
    return {"tau": tau, "max_dev": float(np.max(np.abs(dev)))}


def overlay_estimator_control(
    depth: Any, chi: Any, res_depth: int, tau: float, l_min: int, margin: float, *, seed: int = 0
) -> Control:
    """Estimator control of the Eq. 15 overlay (:func:`~layerwise.labatie.power_overlay`) on the
    same units, networks and fit window as our ``chi`` (networks × records at ``depth``):
    synthetic networks whose χ is exactly c·l^τ times log-normal noise with our own spreads (each
    network's offset and its scatter about its own log-log line over units ≥ ``l_min``), with an
    increment inside the units that gives τ by Eq. 15, must pass (largest deviation ≤ ``margin``);
    the same networks growing exponentially (χ = e^{r·l}, r matching the window's end points) must
    not."""
    d = np.asarray(depth, dtype=float)
    lc = np.log(np.asarray(chi, dtype=float))
    n = lc.shape[0]
    sel = d >= l_min
    x = np.log(d[sel])
    fits = np.polyfit(x, lc[:, sel].T, 1)  # (2, networks): slope and intercept per network
    scatter = float(np.std(lc[:, sel] - (fits[0][:, None] * x + fits[1][:, None])))
    offset = float(np.std(fits[1])) if n > 1 else 0.0
    rng = np.random.default_rng([seed, 0x4F56])
    m = max(n, 2)
    delta = np.full((m, int(sel.sum())), (2 * tau + 1) ** (1 / (2 * res_depth)))
    noise = offset * rng.standard_normal((m, 1)) + scatter * rng.standard_normal((m, d.size))
    r = tau * math.log(d[-1] / l_min) / (d[-1] - l_min)
    got = []
    for law in (tau * np.log(d), r * d):
        o = power_overlay(d, np.exp(law + noise), delta, res_depth, l_min=l_min, seed=seed)
        got.append(grade(o["interval"], accepted_set("le", margin, 0.0)))
    return Control(
        "estimator",
        got[0] == "pass" and got[1] != "pass",
        f"{m} synthetic networks on our units (offset spread {offset:.2g}, scatter {scatter:.2g} "
        f"in log χ, as ours): an exact power law with τ = {tau:.3g}: {got[0]}; an exponential "
        f"with the same end points: {got[1]}",
    )


AUTHORS_FF = "bn_ff_fc_64"
"""The authors' fully-connected BN feedforward nets at the ResNets' width and batch (N = 512,
B = 64, depth 200, CIFAR-10)."""


def authors_reff_ratio() -> dict[str, float]:
    """The signal's effective rank in the authors' fully-connected ResNets at their last unit
    (``res``: r_eff after the first ReLU, :data:`AUTHORS_FC`) and feedforward nets at their last
    layer (``ff``: after the ReLU, :data:`AUTHORS_FF`), and ``ratio`` = res/ff: the paper's
    ResNet-to-feedforward contrast in conditioning, in the authors' fully-connected nets."""
    res = published.moment(AUTHORS_FC, FC_LEVELS["reff_x"])
    ff = published.moment(AUTHORS_FF, "reff_signal_loc4")
    r, f = float(res.mean[-1]), float(ff.mean[-1])
    return {"res": r, "ff": f, "ratio": r / f}


def ratio_estimate(a: Estimate, b: Estimate) -> Estimate:
    """a/b of two independent estimates, its standard error by the delta method
    (a/b)·√((se_a/a)² + (se_b/b)²) and the smaller of their degrees of freedom."""
    r = a.mean / b.mean
    if a.se is None or b.se is None:
        return Estimate(r)
    se = abs(r) * math.hypot(a.se / a.mean, b.se / b.mean)
    dof = min(d for d in (a.dof, b.dof) if d is not None) if (a.dof or b.dof) else None
    return Estimate(r, se, dof, min(a.n or 0, b.n or 0) or None)
