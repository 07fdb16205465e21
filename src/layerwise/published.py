"""The authors' published moment arrays of Labatie (ICML 2019), the reference Chapters 3–5 are graded against.

One reader of ``reference_data/labatie2019_published_arrays.json`` (provenance and the MIT licence
of the authors' repository in ``reference_data/NOTICE.md``): ten experiments of
github.com/alabatie/moments-dnns (commit 351be490), each with its configuration, its recorded depths
and, per moment array, statistics over the authors' networks at every recorded depth.  The file's
checksum is verified on first use, so a reader knows the numbers are the vendored ones.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from collections.abc import Mapping
from typing import Any

import numpy as np

from .params import ParameterError

FILE = "labatie2019_published_arrays.json"
SHA256 = "464ded5029121ce8d383ba280c55874c7948c8d87118477f2ff2fe1051b8579b"
SOURCE = "github.com/alabatie/moments-dnns (npz/, commit 351be490; MIT licence, © Antoine Labatie)"
FC_BATCHES: tuple[int, ...] = (128, 256, 512)
"""Batch sizes of the authors' fully-connected BN feedforward study (experiments ``bn_ff_fc_<B>``)."""


@dataclass(frozen=True)
class Published:
    """Statistics over the authors' ``n`` networks of one moment array, at each recorded depth."""

    experiment: str
    moment: str
    n: int
    depth: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    q10: np.ndarray
    q50: np.ndarray
    q90: np.ndarray
    mean_log10: np.ndarray | None
    std_log10: np.ndarray | None
    percentiles_ln: np.ndarray | None
    """(D, 99): percentiles 1…99 of the natural log at each depth (histogram experiments only)."""

    def index(self, depth: int) -> int:
        """Position of ``depth`` among the recorded depths (a clear error if it was not recorded)."""
        hits = np.flatnonzero(self.depth == depth)
        if hits.size != 1:
            raise ParameterError(
                f"depth={depth!r} is not recorded in {self.experiment}/{self.moment}; recorded: "
                f"{self.depth[0]}, {self.depth[1] if self.depth.size > 1 else ''}… {self.depth[-1]}"
            )
        return int(hits[0])

    def mean_se(self, depth: int, log10: bool = False) -> tuple[float, float]:
        """Mean over the authors' networks at ``depth`` (of log10 if asked) and its standard error std/√n."""
        i = self.index(depth)
        if log10:
            if self.mean_log10 is None or self.std_log10 is None:
                raise ParameterError(f"{self.experiment}/{self.moment} has no log10 statistics (not a positive array)")
            return float(self.mean_log10[i]), float(self.std_log10[i]) / math.sqrt(self.n)
        return float(self.mean[i]), float(self.std[i]) / math.sqrt(self.n)


@lru_cache(maxsize=1)
def _raw() -> dict[str, Any]:
    data = resources.files("layerwise").joinpath("reference_data", FILE).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256:
        raise RuntimeError(f"{FILE}: checksum {digest} differs from the vendored {SHA256}; the reference data changed")
    return json.loads(data)


def experiments() -> tuple[str, ...]:
    """Names of the published experiments, in the file's order."""
    return tuple(_raw()["experiments"])


def _experiment(name: str) -> dict[str, Any]:
    exps = _raw()["experiments"]
    if name not in exps:
        raise ParameterError(f"experiment={name!r} is not allowed; choose one of: {', '.join(exps)}")
    return exps[name]


def config(experiment: str) -> dict[str, Any]:
    """The authors' configuration of ``experiment`` (kernel size, width, batch, boundary, data set, ε, …)."""
    return dict(_experiment(experiment)["config"])


def moments(experiment: str) -> tuple[str, ...]:
    """Names of the moment arrays published for ``experiment``."""
    return tuple(_experiment(experiment)["moments"])


def moment(experiment: str, name: str) -> Published:
    """One published moment array (``<moment>_<loc>``, the engine's names) of ``experiment``."""
    exp = _experiment(experiment)
    if name not in exp["moments"]:
        raise ParameterError(f"moment={name!r} is not published for {experiment}; choose one of: {', '.join(exp['moments'])}")
    m = exp["moments"][name]

    def arr(key: str) -> np.ndarray | None:
        return None if m.get(key) is None else np.asarray(m[key], dtype=float)

    return Published(experiment=experiment, moment=name, n=int(m["n"]), depth=np.asarray(exp["depth"], dtype=int),
                     mean=arr("mean"), std=arr("std"), q10=arr("q10"), q50=arr("q50"), q90=arr("q90"),
                     mean_log10=arr("mean_log10"), std_log10=arr("std_log10"), percentiles_ln=arr("percentiles_ln"))


def bn_ff_endpoints(experiment: str, depth: int = 200) -> dict[str, tuple[float, float]]:
    """Fig. 4 quantities of a BN feedforward experiment at ``depth``, each as (mean, SE) over the authors' networks.

    Keys as :data:`layerwise.labatie.BATCH_ENDPOINTS`: ``reff_x`` / ``reff_dx`` (r_eff of signal and
    noise after the ReLU, loc4), ``kurtosis`` (μ₄ of the BN output, loc3), ``nu1`` (ν₁(|y|) of the BN
    output), ``log10_chi`` (mean log10 χ after the ReLU).
    """
    get = {"reff_x": ("reff_signal_loc4", False), "reff_dx": ("reff_noise_loc4", False),
           "kurtosis": ("mu4_signal_loc3", False), "nu1": ("nu1_abs_signal_loc3", False),
           "log10_chi": ("chi_loc4", True)}
    return {k: moment(experiment, name).mean_se(depth, log10=lg) for k, (name, lg) in get.items()}


def bn_ff_fc_batch_study(depth: int = 200) -> dict[str, list[float]]:
    """The authors' fully-connected batch-size study (width 512, CIFAR-10, 200 networks per B) at ``depth``.

    ``{"B": [128, 256, 512], "reff_x": [...], "reff_dx": [...], "kurtosis": [...], "log10_chi": [...]}``:
    means over networks (Labatie 2019, App. A; experiments ``bn_ff_fc_<B>``).
    """
    out: dict[str, list[float]] = {"B": [float(b) for b in FC_BATCHES]}
    for B in FC_BATCHES:
        for k, (m, _) in bn_ff_endpoints(f"bn_ff_fc_{B}", depth).items():
            out.setdefault(k, []).append(m)
    return out


# ---------------------------------------------------------------------------------------------
# The same late-depth statistics on our networks and on the authors' (Chapter 4, Fig. 4)
# ---------------------------------------------------------------------------------------------
FIG4_LATE: dict[str, tuple[str, str]] = {
    "reff_x": ("reff_signal_loc4", "r_eff(x^l) of the signal after the ReLU"),
    "reff_dx": ("reff_noise_loc4", "r_eff(dx^l) of the noise after the ReLU"),
    "kurtosis": ("mu4_signal_loc3", "kurtosis μ₄ of the BN output"),
    "nu1": ("nu1_abs_signal_loc3", "ν₁(|y^l|) of the BN output"),
}
"""Level quantities of Labatie's Fig. 4 (c, d): our key → (engine/authors' array, words)."""


def _window(depth: np.ndarray, l_min: int, l_max: int) -> np.ndarray:
    sel = (depth >= l_min) & (depth <= l_max)
    if sel.sum() < 1:
        raise ParameterError(f"no record between l_min={l_min} and l_max={l_max}; records: {depth[0]}…{depth[-1]}")
    return sel


def late_ours(depth: Any, arrays: Mapping[str, np.ndarray], l_min: int, l_max: int) -> dict[str, np.ndarray]:
    """Per-network late-depth statistics of a BN feedforward run (engine arrays, networks × records).

    For each key of :data:`FIG4_LATE`, the network's mean over the records ``l_min ≤ l ≤ l_max``;
    ``log10_dchi``: the network's mean growth of log10 χ (after the ReLU) per layer between the
    first and last record of the window, (log10 χ^{l_max} − log10 χ^{l_first}) / (l_max − l_first),
    i.e. log10 of the geometric-mean increment δχ over those layers (Labatie 2019, Fig. 4(a–b)).
    """
    depth = np.asarray(depth)
    sel = _window(depth, l_min, l_max)
    out = {k: np.asarray(arrays[name])[:, sel].mean(axis=1) for k, (name, _) in FIG4_LATE.items()}
    i, j = np.flatnonzero(sel)[[0, -1]]
    if j == i:
        raise ParameterError("the window needs at least two records for the growth of χ")
    lc = np.log10(np.asarray(arrays["chi_loc4"], dtype=float))
    out["log10_dchi"] = (lc[:, j] - lc[:, i]) / float(depth[j] - depth[i])
    return out


def late_published(experiment: str, l_min: int, l_max: int) -> dict[str, tuple[float, float]]:
    """The statistics of :func:`late_ours` for the authors' networks: (mean, SE) over their networks.

    The mean over networks of a per-network window average is the window average of the published
    means, exactly.  The published file holds each depth's standard deviation over networks but not
    the covariances between depths, so the SE is bounded above (Minkowski: the standard deviation of
    a sum is at most the sum of the standard deviations): std ≤ mean of the window's stds, SE = std/√n.
    For ``log10_dchi`` the same bound uses the stds of log10 χ at the window's two ends.
    """
    out: dict[str, tuple[float, float]] = {}
    for k, (name, _) in FIG4_LATE.items():
        m = moment(experiment, name)
        sel = _window(m.depth, l_min, l_max)
        out[k] = (float(m.mean[sel].mean()), float(m.std[sel].mean()) / math.sqrt(m.n))
    c = moment(experiment, "chi_loc4")
    sel = _window(c.depth, l_min, l_max)
    i, j = np.flatnonzero(sel)[[0, -1]]
    span = float(c.depth[j] - c.depth[i])
    out["log10_dchi"] = (float(c.mean_log10[j] - c.mean_log10[i]) / span,
                         float(c.std_log10[j] + c.std_log10[i]) / span / math.sqrt(c.n))
    return out


def increments_published(experiment: str) -> dict[str, np.ndarray]:
    """Per-layer geometric-mean increments of the authors' networks at each record (Fig. 4(a)):
    ``dbn`` = 10^(E log10 χ(loc3) − E log10 χ(loc1)), ``dphi`` = 10^(E log10 χ(loc4) − E log10 χ(loc3)),
    ``dchi`` = their product; ``depth`` the records.  Means over networks of the logs are exact."""
    l1, l3, l4 = (moment(experiment, f"chi_loc{k}") for k in (1, 3, 4))
    dbn = 10 ** (l3.mean_log10 - l1.mean_log10)
    dphi = 10 ** (l4.mean_log10 - l3.mean_log10)
    return {"depth": l1.depth, "dbn": dbn, "dphi": dphi, "dchi": dbn * dphi}


def fig4_reference(experiment: str, max_depth: int | None = None) -> dict[str, Any]:
    """The authors' curves of Labatie's Fig. 4 for ``experiment``, in the layout of
    :func:`layerwise.figures.moments.four_panels` (key → (centre, 10 % quantile, 90 % quantile)):
    increments ``dbn``/``dphi`` as geometric means (no band: the file has no per-network ratios),
    ``chi`` (after the ReLU) as geometric mean with its band, r_eff of signal and noise, the
    kurtosis ``kurt_z`` and ``nu1_z`` of the BN output as means with their bands; only the records up
    to ``max_depth`` when given (to overlay a shallower run)."""
    inc = increments_published(experiment)
    out: dict[str, Any] = {"depth": inc["depth"], "dbn": (inc["dbn"], None, None), "dphi": (inc["dphi"], None, None)}
    c = moment(experiment, "chi_loc4")
    out["chi"] = (10 ** c.mean_log10, c.q10, c.q90)
    for key, name in [("reff_x", "reff_signal_loc4"), ("reff_dx", "reff_noise_loc4"), ("kurt_z", "mu4_signal_loc3"),
                      ("nu1_z", "nu1_abs_signal_loc3")]:
        m = moment(experiment, name)
        out[key] = (m.mean, m.q10, m.q90)
    if max_depth is not None:
        keep = out["depth"] <= max_depth
        out = {k: (v[keep] if k == "depth" else tuple(None if a is None else a[keep] for a in v)) for k, v in out.items()}
    return out


def versus(ours: Any, reference: tuple[float, float]) -> dict[str, float | int | None]:
    """Our per-network values against an authors' (mean, SE): our mean, the combined standard error
    √(SE_ours² + SE_authors²) of the difference, and the degrees of freedom of ours (n − 1: fewer than
    Welch–Satterthwaite would give, so the t interval errs wide), for a claim's ``measured``/``se``/``dof``
    with ``reference`` = the authors' mean.  One network of ours has no SE: then only the authors' counts
    and the interval is normal (``dof`` None)."""
    from .stats import mean_se_dof

    x = np.asarray(ours, dtype=float).ravel()
    if x.size == 0:
        raise ParameterError("ours must hold at least one network's value")
    mean, se_ours, dof = mean_se_dof(x)
    return {"mean": mean, "se": math.hypot(se_ours or 0.0, reference[1]), "dof": dof, "reference": float(reference[0])}


def fig3_reference(experiment: str, max_depth: int | None = None) -> dict[str, Any]:
    """The authors' curves of Labatie's Fig. 3 (vanilla nets) for ``experiment``: per-layer increment
    ``dchi`` = 10^(E log10 χ(loc3) − E log10 χ(loc1)) (geometric mean, no band), ``chi`` (geometric mean
    with its 10–90 % band) and ``reff_x`` (mean and band) after the ReLU; records up to ``max_depth``."""
    c1, c3, r = moment(experiment, "chi_loc1"), moment(experiment, "chi_loc3"), moment(experiment, "reff_signal_loc3")
    keep = np.ones(c1.depth.size, bool) if max_depth is None else c1.depth <= max_depth
    return {"depth": c1.depth[keep], "dchi": (10 ** (c3.mean_log10 - c1.mean_log10)[keep], None, None),
            "chi": (10 ** c3.mean_log10[keep], c3.q10[keep], c3.q90[keep]),
            "reff_x": (r.mean[keep], r.q10[keep], r.q90[keep])}


# ---------------------------------------------------------------------------------------------
# Fig. 2: our distribution over networks against the authors' published percentiles
# ---------------------------------------------------------------------------------------------
PERCENTILE_GRID_ERROR = 0.01
"""Largest error of the authors' distribution function rebuilt from its percentiles 1…99: linear
between consecutive percentiles (exact at each, monotone in between) and clamped to 0.01/0.99 beyond."""


def published_cdf(x: Any, percentiles: Any) -> np.ndarray:
    """The authors' distribution function at ``x``, rebuilt from their percentiles 1…99 (within
    :data:`PERCENTILE_GRID_ERROR` of the distribution of their networks)."""
    p = np.asarray(percentiles, dtype=float)
    if p.shape != (99,) or np.any(np.diff(p) < 0):
        raise ParameterError("percentiles must be the 99 non-decreasing percentiles 1…99")
    return np.interp(np.asarray(x, dtype=float), p, np.arange(1, 100) / 100.0, left=0.01, right=0.99)


def ks_versus_published(sample: Any, percentiles: Any, n_reference: int, alpha: float = 0.01) -> dict[str, float]:
    """Two-sample Kolmogorov–Smirnov comparison of our ``sample`` (one value per network) with the
    authors' distribution over their ``n_reference`` networks, known through its percentiles.

    ``ks``: sup |F_ours − F_authors| over our sample points (both one-sided gaps of the step function);
    ``critical``: the asymptotic two-sample critical value at level ``alpha``,
    √(−ln(α/2)/2)·√((n + m)/(n m)), which the statistic exceeds with probability ≤ α when both
    samples come from one distribution, plus :data:`PERCENTILE_GRID_ERROR` for the rebuilt
    distribution function; ``n``, ``m`` the two sample sizes.
    """
    x = np.sort(np.asarray(sample, dtype=float).ravel())
    n, m = x.size, int(n_reference)
    if n < 2 or m < 2:
        raise ParameterError(f"need at least 2 networks on each side, got n={n}, n_reference={m}")
    F = published_cdf(x, percentiles)
    i = np.arange(1, n + 1)
    ks = float(max(np.max(i / n - F), np.max(F - (i - 1) / n)))
    crit = math.sqrt(-math.log(alpha / 2) / 2) * math.sqrt((n + m) / (n * m))
    return {"ks": ks, "critical": crit + PERCENTILE_GRID_ERROR, "n": n, "m": m}


BN_FF_CONV_VARIANTS: tuple[str, ...] = ("bn_ff_mnist", "bn_ff_zero_padding", "bn_ff_epsilon")
"""The authors' three convolutional BN feedforward variants (data set, boundary, ε) of Fig. 4."""


def fig4_versus(depth: Any, panels: Mapping[str, np.ndarray], arrays: Mapping[str, np.ndarray], experiment: str,
                late_lmin: int, early_lmax: int, max_depth: int) -> dict[str, Any]:
    """Everything Chapter 4 compares between our convolutional BN feedforward nets and the authors'
    ``experiment`` (Labatie 2019, Fig. 4 (a–d)); estimates are (mean, SE, d.o.f.) over our networks.

    ``depth``, ``panels`` (:func:`layerwise.labatie.bn_ff_panels`) and ``arrays`` (engine arrays) of our
    run; the late window is ``late_lmin ≤ l ≤ max_depth``, the early one ``l ≤ early_lmax``. Returns
    ``ours``/``theirs`` (:func:`late_ours`, :func:`late_published`); ``dbn_late``, ``dphi_late`` (per-network
    window means of the two increments) and ``late_gap`` = δ_BN − δ_φ over the late window, ``early_gap``
    = δ_φ − δ_BN over the early one; ``log10_chi_end`` (log10 χ at the last record); ``dchi_late`` our
    geometric-mean late increment against theirs (:func:`versus`, their SE by the delta method);
    ``pub_dbn_late``/``pub_dphi_late`` their late increments (:func:`increments_published`);
    ``log10_chi_variants`` the end of log10 χ of each of :data:`BN_FF_CONV_VARIANTS`; ``spread`` the
    relative spread (max − min)/|mean| of each late-depth level across those variants.
    """
    from .stats import mean_se_dof

    d = np.asarray(depth)
    ours = late_ours(d, arrays, late_lmin, max_depth)
    theirs = late_published(experiment, late_lmin, max_depth)
    inc = increments_published(experiment)
    lw = _window(inc["depth"], late_lmin, max_depth)
    win, early = _window(d, late_lmin, max_depth), d <= early_lmax
    if not early.any():
        raise ParameterError(f"early_lmax={early_lmax} is below the first record ({d[0]})")
    m, s = theirs["log10_dchi"]
    vlate = {v: late_published(v, late_lmin, max_depth) for v in BN_FF_CONV_VARIANTS}
    return {
        "ours": ours, "theirs": theirs,
        "dbn_late": mean_se_dof(panels["dbn"][:, win].mean(1)),
        "dphi_late": mean_se_dof(panels["dphi"][:, win].mean(1)),
        "late_gap": mean_se_dof((panels["dbn"] - panels["dphi"])[:, win].mean(1)),
        "early_gap": mean_se_dof((panels["dphi"] - panels["dbn"])[:, early].mean(1)),
        "log10_chi_end": mean_se_dof(np.log10(panels["chi"][:, -1])),
        "dchi_late": versus(10 ** ours["log10_dchi"], (10 ** m, 10 ** m * math.log(10) * s)),
        "pub_dbn_late": float(inc["dbn"][lw].mean()),
        "pub_dphi_late": float(inc["dphi"][lw].mean()),
        "log10_chi_variants": [bn_ff_endpoints(v)["log10_chi"][0] for v in BN_FF_CONV_VARIANTS],
        "spread": {k: float(np.ptp([vlate[v][k][0] for v in BN_FF_CONV_VARIANTS])
                            / abs(np.mean([vlate[v][k][0] for v in BN_FF_CONV_VARIANTS]))) for k in vlate[experiment]},
    }


def fig4_findings(V: Mapping[str, Any]) -> dict[str, Any]:
    """What Chapter 4's prose and level claims read off :func:`fig4_versus` ``V``: ``ratio`` =
    (mean, se, dof) over our networks of r_eff(dx)/r_eff(x) in the late window; ``versus[k]``
    (:func:`versus`) of each :data:`FIG4_LATE` level against the authors'; and the glued numbers and
    sentences: ``glue`` (three significant digits: the levels, ours and theirs, the spread across the
    authors' variants and what it implies, which of signal and noise is better conditioned) and
    ``glue_4`` (four: the late increments, ours and theirs, and the early gap)."""
    from .labatie import resolved_sign
    from .stats import mean_se_dof as est

    lo, lp = V["ours"], V["theirs"]
    ratio = est(lo["reff_dx"] / lo["reff_x"])
    conv_v = {k: versus(lo[k], lp[k]) for k in FIG4_LATE}
    glue: dict[str, Any] = {}
    for k, name in [("reff_dx", "reff_dx"), ("reff_x", "reff_x"), ("kurtosis", "kurt"), ("nu1", "nu1")]:
        glue[f"conv_{name}"] = (conv_v[k]["mean"], est(lo[k])[1])
        glue[f"pub_{name}"] = (lp[k][0], lp[k][1])
    vmax = max(V["spread"][k] for k in FIG4_LATE)
    glue["pub_variant_spread"] = f"{100 * vmax:.0f} %"
    glue["variant_verdict"] = (
        "the data set barely moves them, so our photo patches should not either." if vmax <= 0.1
        else "at these depths the levels still depend on the variant; the comparison needs the late layers of a "
             "depth-200 net (default scale).")
    glue["conv_conditioning_verdict"] = {
        1: "The noise keeps far more directions than the signal: the paper's ordering.",
        -1: "The signal keeps more directions than the noise, the reverse of the paper's ordering.",
        0: "The two effective ranks cannot be told apart at this scale."}[
        resolved_sign(ratio[0], ratio[1], ratio[2], reference=1.0) if ratio[1] is not None else int(np.sign(ratio[0] - 1))]
    vr = V["dchi_late"]
    several = V["dbn_late"][1] is not None   # more than one network: standard errors exist
    glue_4 = {"conv_dchi_late": (vr["mean"], vr["se"] if several else None), "pub_dchi_late": 10 ** lp["log10_dchi"][0],
              "conv_dbn_late": V["dbn_late"][:2], "conv_dphi_late": V["dphi_late"][:2],
              "pub_dbn_late": V["pub_dbn_late"], "pub_dphi_late": V["pub_dphi_late"],
              "conv_early_gap": V["early_gap"][:2]}
    return {"ratio": ratio, "versus": conv_v, "glue": glue, "glue_4": glue_4}


def fig4_conv_summary(depth: Any, panels: Mapping[str, np.ndarray], arrays: Mapping[str, np.ndarray],
                      fit: Mapping[str, Any], experiment: str, *, conv_depth: int, conv_width: int, interval: int,
                      l_min: int, paper: tuple[int, int] = (512, 200)) -> dict[str, Any]:
    """Chapter 4's comparison of our convolutional BN feedforward nets with the authors' ``experiment``
    (Labatie 2019, §6 and Fig. 4 (a–d)), from our run's record ``depth``, ``panels``
    (:func:`layerwise.labatie.bn_ff_panels`), engine ``arrays`` and exponential ``fit``
    (:func:`layerwise.labatie.exp_fit`) of nets ``conv_depth`` deep, ``conv_width`` wide, recorded
    every ``interval`` layers.

    The late window is the last quarter, ``late_lmin`` = ⌊0.75·conv_depth⌋ ≤ l ≤ conv_depth; the early
    one l ≤ ``early_lmax`` = max(2·interval, conv_depth // 10) (at least two records).  Returns
    ``late_lmin``, ``early_lmax``, ``spread`` (the authors' variants, :func:`fig4_versus`), ``versus``
    (each :data:`FIG4_LATE` level against theirs, :func:`fig4_findings`); ``claims``: per claim id its
    ``measured``/``se``/``dof`` (and ``reference`` when it is the authors' number) — the mean
    increment δχ over layers ≥ ``l_min`` (Theorem 3: ≥ 1), the late growth log10 δχ against theirs,
    log10 χ at the last record, the late and early gaps between the BN and ReLU steps, the ratio
    r_eff(dx)/r_eff(x) and the four late levels; ``glue_4`` (four significant digits: the windows, R²
    of the fit, the increments) and ``glue`` (three: log10 χ at the end, the range across the authors'
    variants, the note when the nets are smaller than the paper's ``paper`` = (width, depth), and the
    levels and sentences of :func:`fig4_findings`)."""
    from .labatie import claim_numbers
    from .stats import mean_se_dof

    d = np.asarray(depth)
    late_lmin, early_lmax = int(0.75 * conv_depth), max(2 * interval, conv_depth // 10)
    V = fig4_versus(d, panels, arrays, experiment, late_lmin, early_lmax, conv_depth)
    FV = fig4_findings(V)
    lo, lp, c200 = V["ours"], V["theirs"], V["log10_chi_end"]
    claims = {"conv_dchi_gt_1": claim_numbers(mean_se_dof(panels["dchi"][:, d >= l_min].mean(1))),
              "conv_rate_matches_authors": claim_numbers(versus(lo["log10_dchi"], lp["log10_dchi"])),
              "conv_chi_200_range": claim_numbers(c200),
              "conv_bn_step_dominates_late": claim_numbers(V["late_gap"]),
              "conv_relu_step_dominates_early": claim_numbers(V["early_gap"]),
              "conv_noise_well_signal_ill_conditioned": claim_numbers(FV["ratio"]),
              **{f"conv_{k}_matches_authors": claim_numbers(v) for k, v in FV["versus"].items()}}
    reduced = (conv_width, conv_depth) != tuple(paper)
    glue = {"conv_log10chi": c200[:2],
            "pub_log10chi_range": f"{min(V['log10_chi_variants']):.2f}–{max(V['log10_chi_variants']):.2f}",
            "conv_scale_note": "" if not reduced else
            f"(At this scale the nets are reduced to width {conv_width} and depth {conv_depth}, so the "
            "comparisons with the authors' numbers are graded from the default scale on.)", **FV["glue"]}
    return {"late_lmin": late_lmin, "early_lmax": early_lmax, "spread": V["spread"], "versus": FV["versus"],
            "claims": claims, "glue": glue,
            "glue_4": {"late_lmin": late_lmin, "early_lmax": early_lmax, "conv_r2": fit["r2"], **FV["glue_4"]}}


FC_BATCH_COLUMNS = {"reff_x": "r_eff(x)", "reff_dx": "r_eff(dx)", "kurtosis": "kurtosis μ₄", "log10_chi": "log₁₀ χ"}
"""Column titles of :func:`fc_batch_table`."""


def fc_batch_table(depth: int = 200) -> Any:
    """The authors' fully-connected batch-size study (:func:`bn_ff_fc_batch_study`) at ``depth`` as a
    table indexed by the batch size B, with the columns of :data:`FC_BATCH_COLUMNS` (Labatie 2019, App. A)."""
    import pandas as pd

    return pd.DataFrame(bn_ff_fc_batch_study(depth)).astype({"B": int}).set_index("B").drop(columns="nu1").rename(
        columns=FC_BATCH_COLUMNS)
