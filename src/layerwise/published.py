"""The authors' published moment arrays of Labatie (ICML 2019), the reference Chapters 3–5 are
graded against.

One reader of ``reference_data/labatie2019_published_arrays.json``,
``reference_data/labatie2019_published_arrays_fc.json`` and
``reference_data/labatie2019_published_arrays_fc_vanilla.json`` (provenance and the MIT licence of
the authors' repository in ``reference_data/NOTICE.md``): fourteen experiments of
github.com/alabatie/moments-dnns (commit 351be490), each with its configuration, its recorded depths
and, per moment array, statistics over the authors' networks at every recorded depth.  Each file's
checksum is verified on first use, so a reader knows the numbers are the vendored ones.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

from .params import ParameterError

FILES: dict[str, str] = {
    "labatie2019_published_arrays.json": (
        "464ded5029121ce8d383ba280c55874c7948c8d87118477f2ff2fe1051b8579b"
    ),
    "labatie2019_published_arrays_fc.json": (
        "624c32d37c1ce3a1b4cc235619915e097402c9d4651243c50b7b5f6329f83834"
    ),
    "labatie2019_published_arrays_fc_vanilla.json": (
        "737bc41c8caab1e69c71474ea8490207a279c6c7b04262f7ff6db7242913ae08"
    ),
}
"""The vendored files and their SHA-256: the first holds ten experiments (conv vanilla, conv BN
feedforward variants, the fully-connected batch study at B = 128–512), the second the
fully-connected BN nets at B = 64 (``bn_ff_fc_64``, ``bn_res_fc``), the third the
fully-connected vanilla nets (``vanilla_fc``: width 512, B = 64, 200 networks, the counterpart of
Fig. 3; ``vanilla_histo_fc``: width 128, B = 1024, 10 000 networks, the counterpart of Fig. 2)."""
SOURCE = "github.com/alabatie/moments-dnns (npz/, commit 351be490; MIT licence, © Antoine Labatie)"
FC_BATCHES: tuple[int, ...] = (64, 128, 256, 512)
"""Batch sizes of the authors' fully-connected BN feedforward study (experiments
``bn_ff_fc_<B>``)."""


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
    mean_ln: np.ndarray | None = None
    """Mean over networks of the natural log at each depth (where the file holds it)."""
    std_ln: np.ndarray | None = None
    """Standard deviation over networks of the natural log (ddof as the authors' ``np.std``)."""

    def index(self, depth: int) -> int:
        """Position of ``depth`` among the recorded depths (a clear error if it was not
        recorded)."""
        hits = np.flatnonzero(self.depth == depth)
        if hits.size != 1:
            raise ParameterError(
                f"depth={depth!r} is not recorded in {self.experiment}/{self.moment}; recorded: "
                f"{self.depth[0]}, {self.depth[1] if self.depth.size > 1 else ''}… {self.depth[-1]}"
            )
        return int(hits[0])

    def mean_se(self, depth: int, log10: bool = False) -> tuple[float, float]:
        """Mean over the authors' networks at ``depth`` (of log10 if asked) and its standard error
        std/√n."""
        i = self.index(depth)
        if log10:
            if self.mean_log10 is None or self.std_log10 is None:
                raise ParameterError(
                    f"{self.experiment}/{self.moment} has no log10 statistics "
                    "(not a positive array)"
                )
            return float(self.mean_log10[i]), float(self.std_log10[i]) / math.sqrt(self.n)
        return float(self.mean[i]), float(self.std[i]) / math.sqrt(self.n)


def _read(name: str, sha256: str) -> dict[str, Any]:
    data = resources.files("layerwise").joinpath("reference_data", name).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != sha256:
        raise RuntimeError(
            f"{name}: checksum {digest} differs from the vendored {sha256}; "
            "the reference data changed"
        )
    return json.loads(data)


@lru_cache(maxsize=1)
def _raw() -> dict[str, Any]:
    """The experiments of every vendored file, in the files' order (names are unique)."""
    exps: dict[str, Any] = {}
    for name, sha in FILES.items():
        for key, value in _read(name, sha)["experiments"].items():
            if key in exps:
                raise RuntimeError(f"{name}: experiment {key!r} is also in another vendored file")
            exps[key] = value
    return {"experiments": exps}


def experiments() -> tuple[str, ...]:
    """Names of the published experiments, in the file's order."""
    return tuple(_raw()["experiments"])


def _experiment(name: str) -> dict[str, Any]:
    exps = _raw()["experiments"]
    if name not in exps:
        raise ParameterError(
            f"experiment={name!r} is not allowed; choose one of: {', '.join(exps)}"
        )
    return exps[name]


def config(experiment: str) -> dict[str, Any]:
    """The authors' configuration of ``experiment`` (kernel size, width, batch, boundary, data set,
    ε, …)."""
    return dict(_experiment(experiment)["config"])


def moments(experiment: str) -> tuple[str, ...]:
    """Names of the moment arrays published for ``experiment``."""
    return tuple(_experiment(experiment)["moments"])


def moment(experiment: str, name: str) -> Published:
    """One published moment array (``<moment>_<loc>``, the engine's names) of ``experiment``."""
    exp = _experiment(experiment)
    if name not in exp["moments"]:
        raise ParameterError(
            f"moment={name!r} is not published for {experiment}; "
            f"choose one of: {', '.join(exp['moments'])}"
        )
    m = exp["moments"][name]

    def arr(key: str) -> np.ndarray | None:
        return None if m.get(key) is None else np.asarray(m[key], dtype=float)

    return Published(
        experiment=experiment,
        moment=name,
        n=int(m["n"]),
        depth=np.asarray(exp["depth"], dtype=int),
        mean=arr("mean"),
        std=arr("std"),
        q10=arr("q10"),
        q50=arr("q50"),
        q90=arr("q90"),
        mean_log10=arr("mean_log10"),
        std_log10=arr("std_log10"),
        percentiles_ln=arr("percentiles_ln"),
        mean_ln=arr("mean_ln"),
        std_ln=arr("std_ln"),
    )


def bn_ff_endpoints(experiment: str, depth: int = 200) -> dict[str, tuple[float, float]]:
    """Fig. 4 quantities of a BN feedforward experiment at ``depth``, each as (mean, SE) over the
    authors' networks.

    Keys as :data:`layerwise.studies.ch04.BATCH_ENDPOINTS`: ``reff_x`` / ``reff_dx`` (r_eff of
    signal and noise after the ReLU, loc4), ``kurtosis`` (μ₄ of the BN output, loc3), ``nu1``
    (ν₁(|y|) of the BN output), ``log10_chi`` (mean log10 χ after the ReLU).
    """
    get = {
        "reff_x": ("reff_signal_loc4", False),
        "reff_dx": ("reff_noise_loc4", False),
        "kurtosis": ("mu4_signal_loc3", False),
        "nu1": ("nu1_abs_signal_loc3", False),
        "log10_chi": ("chi_loc4", True),
    }
    return {k: moment(experiment, name).mean_se(depth, log10=lg) for k, (name, lg) in get.items()}


#: Networks per batch size in the authors' fully-connected batch-size study (``bn_ff_fc_<B>``).
FC_BATCH_NETS = 200


def bn_ff_fc_batch_study(depth: int = 200) -> dict[str, list[float]]:
    """The authors' fully-connected batch-size study (width 512, CIFAR-10, 200 networks per B) at
    ``depth``.

    ``{"B": [64, 128, 256, 512], "reff_x": [...], "reff_dx": [...], "kurtosis": [...], "log10_chi":
    [...]}``:
    means over networks (Labatie 2019, App. A; experiments ``bn_ff_fc_<B>``).
    """
    out: dict[str, list[float]] = {"B": [float(b) for b in FC_BATCHES]}
    for B in FC_BATCHES:
        for k, (m, _) in bn_ff_endpoints(f"bn_ff_fc_{B}", depth).items():
            out.setdefault(k, []).append(m)
    return out


# ---------------------------------------------------------------------------------------------
# Late-depth statistics of the authors' networks (Fig. 4)
# ---------------------------------------------------------------------------------------------
FIG4_LATE: dict[str, tuple[str, str]] = {
    "reff_x": ("reff_signal_loc4", "effective rank r(xˡ) of the signal after the ReLU"),
    "reff_dx": ("reff_noise_loc4", "effective rank r(dxˡ) of the noise after the ReLU"),
    "kurtosis": ("mu4_signal_loc3", "kurtosis μ₄ of the BN output"),
    "nu1": ("nu1_abs_signal_loc3", "ν₁(|yˡ|) of the BN output"),
}
"""Level quantities of Labatie's Fig. 4 (c, d): our key → (engine/authors' array, words)."""


def depth_window(depth: np.ndarray, l_min: int, l_max: int) -> np.ndarray:
    """The records ``l_min ≤ l ≤ l_max`` of ``depth`` (a boolean mask; at least one)."""
    sel = (depth >= l_min) & (depth <= l_max)
    if sel.sum() < 1:
        raise ParameterError(
            f"no record between l_min={l_min} and l_max={l_max}; records: {depth[0]}…{depth[-1]}"
        )
    return sel


def late_published(experiment: str, l_min: int, l_max: int) -> dict[str, tuple[float, float]]:
    """The statistics of :func:`layerwise.studies.ch04.late_ours` for the authors' networks: (mean,
    SE) over their networks.

    The mean over networks of a per-network window average is the window average of the published
    means, exactly.  The published file holds each depth's standard deviation over networks but not
    the covariances between depths, so the SE is bounded above (Minkowski: the standard deviation of
    a sum is at most the sum of the standard deviations): std ≤ mean of the window's stds, SE =
    std/√n.
    For ``log10_dchi`` the same bound uses the stds of log10 χ at the window's two ends.
    """
    out: dict[str, tuple[float, float]] = {}
    for k, (name, _) in FIG4_LATE.items():
        m = moment(experiment, name)
        sel = depth_window(m.depth, l_min, l_max)
        out[k] = (float(m.mean[sel].mean()), float(m.std[sel].mean()) / math.sqrt(m.n))
    c = moment(experiment, "chi_loc4")
    sel = depth_window(c.depth, l_min, l_max)
    i, j = np.flatnonzero(sel)[[0, -1]]
    span = float(c.depth[j] - c.depth[i])
    out["log10_dchi"] = (
        float(c.mean_log10[j] - c.mean_log10[i]) / span,
        float(c.std_log10[j] + c.std_log10[i]) / span / math.sqrt(c.n),
    )
    return out


def increments_published(experiment: str) -> dict[str, np.ndarray]:
    """Per-layer geometric-mean increments of the authors' networks at each record (Fig. 4(a)):
    ``dbn`` = 10^(E log10 χ(loc3) − E log10 χ(loc1)), ``dphi`` = 10^(E log10 χ(loc4) − E log10
    χ(loc3)),
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
    kurtosis ``kurt_z`` and ``nu1_z`` of the BN output as means with their bands; only the records
    up
    to ``max_depth`` when given (to overlay a shallower run)."""
    inc = increments_published(experiment)
    out: dict[str, Any] = {
        "depth": inc["depth"],
        "dbn": (inc["dbn"], None, None),
        "dphi": (inc["dphi"], None, None),
    }
    c = moment(experiment, "chi_loc4")
    out["chi"] = (10**c.mean_log10, c.q10, c.q90)
    for key, name in [
        ("reff_x", "reff_signal_loc4"),
        ("reff_dx", "reff_noise_loc4"),
        ("kurt_z", "mu4_signal_loc3"),
        ("nu1_z", "nu1_abs_signal_loc3"),
    ]:
        m = moment(experiment, name)
        out[key] = (m.mean, m.q10, m.q90)
    if max_depth is not None:
        keep = out["depth"] <= max_depth
        out = {
            k: (v[keep] if k == "depth" else tuple(None if a is None else a[keep] for a in v))
            for k, v in out.items()
        }
    return out


def fig3_reference(experiment: str, max_depth: int | None = None) -> dict[str, Any]:
    """The authors' curves of Labatie's Fig. 3 (vanilla nets) for ``experiment``: per-layer
    increment
    ``dchi`` = 10^(E log10 χ(loc3) − E log10 χ(loc1)) (geometric mean, no band), ``chi`` (geometric
    mean
    with its 10–90 % band) and ``reff_x`` (mean and band) after the ReLU; records up to
    ``max_depth``."""
    c1, c3, r = (
        moment(experiment, "chi_loc1"),
        moment(experiment, "chi_loc3"),
        moment(experiment, "reff_signal_loc3"),
    )
    keep = np.ones(c1.depth.size, bool) if max_depth is None else c1.depth <= max_depth
    return {
        "depth": c1.depth[keep],
        "dchi": (10 ** (c3.mean_log10 - c1.mean_log10)[keep], None, None),
        "chi": (10 ** c3.mean_log10[keep], c3.q10[keep], c3.q90[keep]),
        "reff_x": (r.mean[keep], r.q10[keep], r.q90[keep]),
    }


# ---------------------------------------------------------------------------------------------
# Fig. 2: the authors' distribution over networks, from its published percentiles
# ---------------------------------------------------------------------------------------------
PERCENTILE_GRID_ERROR = 0.01
"""Largest error of the authors' distribution function rebuilt from its percentiles 1…99: linear
between consecutive percentiles (exact at each, monotone in between) and clamped to 0.01/0.99
beyond."""


def published_cdf(x: Any, percentiles: Any) -> np.ndarray:
    """The authors' distribution function at ``x``, rebuilt from their percentiles 1…99 (within
    :data:`PERCENTILE_GRID_ERROR` of the distribution of their networks)."""
    p = np.asarray(percentiles, dtype=float)
    if p.shape != (99,) or np.any(np.diff(p) < 0):
        raise ParameterError("percentiles must be the 99 non-decreasing percentiles 1…99")
    return np.interp(
        np.asarray(x, dtype=float), p, np.arange(1, 100) / 100.0, left=0.01, right=0.99
    )


BN_FF_CONV_VARIANTS: tuple[str, ...] = ("bn_ff_mnist", "bn_ff_zero_padding", "bn_ff_epsilon")
"""The authors' three convolutional BN feedforward variants (data set, boundary, ε) of Fig. 4."""
