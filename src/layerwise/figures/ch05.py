"""Figures of Chapter 5 (batch-normalised ResNets, Labatie 2019 §7, Fig. 5)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..plotting import clear_legends, legend_in_headroom, tight_layout
from . import moments as P


def fig5(
    d: np.ndarray,
    Q: Mapping[str, np.ndarray],
    title: str,
    pfit: Mapping[str, Any] | None = None,
    overlay: Mapping[str, Any] | None = None,
    reference: Mapping[str, Any] | None = None,
) -> Any:
    """Labatie's Fig. 5 (a–d): (a) increments of χ inside the first layer of each unit; (b) χˡ on
    log-log axes with the free power-law fit ``pfit`` (:func:`layerwise.labatie.power_fit`, dashed)
    and the Eq. 15 overlay ``overlay`` (:func:`layerwise.labatie.power_overlay`, dotted);
    (c) effective ranks; (d) kurtosis and ν₁(|y|) after the first BN. ``Q`` holds the panels of
    :func:`layerwise.labatie.bn_res_panels` (ranks after the first ReLU, as in the paper) at the
    units ``d``; ``reference`` (optional) the authors' curves drawn dashed over ours
    (:func:`layerwise.studies.ch05.authors_fig5_reference`)."""
    lines = []
    if pfit is not None:
        lines.append(
            (np.exp(pfit["intercept"]) * d ** pfit["tau"], "k--", dict(lw=1, label="free fit"))
        )
    if overlay is not None:
        lines.append(
            (
                np.exp(overlay["log_c"]) * d ** overlay["tau"],
                "r:",
                dict(lw=1.5, label="Eq. 15 exponent"),
            )
        )
    fig = P.four_panels(
        d,
        Q,
        increment="dff",
        increment_label=r"$\delta\chi$ (one layer)",
        increment_ylabel="increment inside units",
        kurt_label=r"kurtosis after BN",
        xlabel="residual unit l",
        title=title,
        chi_lines=lines,
        log_x=True,
        reference=reference,
    )
    return fig


def resnet_vs_ff(
    ff_depth: np.ndarray,
    ff_chi: np.ndarray,
    ff_reff: np.ndarray,
    res_depth: np.ndarray,
    res_chi: np.ndarray,
    res_reff: np.ndarray,
) -> Any:
    """(a) mean log χ of feedforward nets against depth l; (b) mean log χ of ResNets against the
    residual unit l on a log axis — a straight line in each is the exponential growth of Theorem 3
    and the power law of Theorem 4 (Labatie 2019, §7); (c) the signal's effective rank of both (mean
    and 10–90 % band). The χ and r_eff arrays are networks × records."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(7.5, 3.0), layout="constrained")
    axes[0].plot(ff_depth, np.log(ff_chi).mean(0), color="C3")
    axes[0].set_xlabel("layer l")
    axes[0].set_ylabel(r"mean $\log\chi^l$")
    axes[0].set_title("(a) feedforward", loc="left")
    axes[1].plot(res_depth, np.log(res_chi).mean(0), color="C0")
    axes[1].set_xscale("log")
    axes[1].set_xlabel("residual unit l")
    axes[1].set_title("(b) ResNet", loc="left")
    P.plot_band(axes[2], ff_depth, ff_reff, "feedforward", "C3")
    P.plot_band(axes[2], res_depth, res_reff, "ResNet", "C0")
    axes[2].set_xscale("log")
    axes[2].set_yscale("log")
    axes[2].set_xlabel("layer / unit l")
    axes[2].set_ylabel(r"$r(x^l)$")
    axes[2].set_title("(c)", loc="left")
    legend_in_headroom(axes[2], ncols=1)
    clear_legends(fig)
    return fig


def datasets(runs: Mapping[str, tuple[np.ndarray, Mapping[str, np.ndarray]]]) -> Any:
    """Geometric mean of χ against the residual unit on log-log axes, one curve per data set;
    ``runs`` maps a data set to ``(depth, panels)``."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for ds, (dd_, Qd) in runs.items():
        ax.plot(dd_, np.exp(np.log(Qd["chi"]).mean(0)), label=ds)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("residual unit l")
    ax.set_ylabel(r"geometric mean $\chi^l$")
    ax.legend()
    tight_layout(fig)
    return fig
