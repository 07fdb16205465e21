"""Figures of Chapter 4 (batch-normalised feedforward nets, Labatie 2019 §6, Fig. 4 and App. A)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..plotting import tight_layout
from . import moments as P


def fig4(
    d: np.ndarray,
    Q: Mapping[str, np.ndarray],
    title: str,
    fit: Mapping[str, Any] | None = None,
    reference: Mapping[str, Any] | None = None,
) -> Any:
    """Labatie's Fig. 4 (a–d): (a) increments δχ, δ_BN χ, δ_φ χ; (b) χˡ on a log axis with the
    exponential fit ``fit`` (from :func:`layerwise.labatie.exp_fit`); (c) effective ranks of signal
    and noise; (d) kurtosis and ν₁(|y|) of the BN output. ``Q`` holds the panels of
    :func:`layerwise.labatie.bn_ff_panels` at the record depths ``d``; ``reference`` the authors'
    published
    curves (:func:`layerwise.published.fig4_reference`), drawn dashed over ours."""
    lines = (
        []
        if fit is None
        else [
            (
                np.exp(fit["intercept"] + fit["rate"] * d),
                "k:",
                dict(lw=1.2, label="exponential fit"),
            )
        ]
    )
    return P.four_panels(
        d,
        Q,
        increment="dchi",
        increment_label=r"$\delta\chi$",
        increment_ylabel="increment",
        kurt_label=r"$\mu_4(y^l)/\mu_2(y^l)^2$",
        xlabel="layer l",
        title=title,
        chi_lines=lines,
        reference=reference,
    )


def dbn_vs_conditioning(
    reff_in: np.ndarray, dbn: np.ndarray, depth: np.ndarray, within: np.ndarray
) -> Any:
    """Left: δ_BN χ against r_eff of the incoming signal for every (network, layer) pair, coloured
    by depth with a colour bar (``reff_in``, ``dbn`` networks × len(depth)); right: the rank
    correlation across networks at each depth (``within``). The arguments are the ``arrays`` of
    :func:`layerwise.labatie.dbn_conditioning`."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.2), layout="constrained")
    points = axes[0].scatter(
        reff_in.ravel(),
        dbn.ravel(),
        s=3,
        alpha=0.3,
        c=np.broadcast_to(depth, reff_in.shape).ravel(),
        cmap="rocket",
    )
    bar = fig.colorbar(points, ax=axes[0], pad=0.02)  # the colour's meaning, on the figure itself
    bar.set_label("layer l")
    bar.solids.set_alpha(1)
    fig.get_layout_engine().set(wspace=0.12)  # room between the bar's label and the right panel
    axes[0].set_xscale("log")
    axes[0].set_xlabel(r"$r(x^{l-1})$")
    axes[0].set_ylabel(r"$\delta_\mathrm{BN}\chi^l$")
    axes[1].plot(depth, within)
    axes[1].axhline(0, color="k", lw=0.8)
    axes[1].set_xlabel("layer l")
    axes[1].set_ylabel("Spearman ρ across networks")
    return fig


def datasets(runs: Mapping[str, tuple[np.ndarray, Mapping[str, np.ndarray]]]) -> Any:
    """Mean log₁₀ χ (left) and mean r_eff(x) (right, log axis) against depth, one curve per data
    set; ``runs`` maps a data set to ``(depth, panels)``."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.2))
    for ds, (dd_, Qd) in runs.items():
        axes[0].plot(dd_, np.log10(Qd["chi"]).mean(0), label=ds)
        axes[1].plot(dd_, Qd["reff_x"].mean(0), label=ds)
    axes[0].set_ylabel(r"mean $\log_{10}\chi^l$")
    axes[1].set_ylabel(r"$r(x^l)$")
    axes[1].set_yscale("log")
    for ax in axes:
        ax.set_xlabel("layer l")
    axes[0].legend()
    tight_layout(fig)
    return fig


def batch_size(levels: Any, authors: Any, depth: int) -> Any:
    """log₁₀ χ, kurtosis, r_eff(x) and r_eff(dx) at layer ``depth`` against the batch size: ours
    (``levels``: quantity → batch size → estimate, :func:`layerwise.studies.ch04.batch_endpoints`)
    with ±2 SE, the authors' (``authors``: ``B`` and the same names, e.g.
    :func:`layerwise.published.bn_ff_fc_batch_study`) as crosses."""
    import matplotlib.pyplot as plt

    L = depth
    fig, ax = plt.subplots(2, 2, figsize=(7.5, 5.4))
    labels = {
        "log10_chi": rf"$\log_{{10}}\chi^{{{L}}}$",
        "kurtosis": rf"kurtosis $\mu_4(y^{{{L}}})$",
        "reff_x": rf"$r(x^{{{L}}})$",
        "reff_dx": rf"$r(dx^{{{L}}})$",
    }
    for a, k in zip(ax.ravel(), labels, strict=False):
        B, ours = list(levels[k]), list(levels[k].values())
        means, ses = np.array([e.mean for e in ours]), np.array([e.se for e in ours])
        a.errorbar(B, means, yerr=2 * ses, marker="o", capsize=3, label="ours")
        a.plot(authors["B"], authors[k], "kx", ms=7, label="authors (N = 512)")
        a.set_xscale("log", base=2)
        a.set_xlabel("batch size B")
        a.set_ylabel(labels[k])
    ax[0, 0].legend()
    tight_layout(fig)
    return fig
