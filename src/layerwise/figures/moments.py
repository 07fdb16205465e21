"""Panels shared by the figures of Chapters 3–5 (Labatie 2019, Figs. 3–5): a quantity's centre and
10–90 % band over random networks against depth, the increments of χ, the signal's effective rank
and kurtosis."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..labatie import GAUSS_ABS_MEAN, GAUSS_KURTOSIS
from ..plotting import clear_legends, legend_in_headroom, tight_layout


def plot_band(
    ax: Any, d: np.ndarray, arr: np.ndarray, label: str, color: Any = None, log: bool = False
) -> None:
    """Centre (mean, or geometric mean when ``log``) and 10–90 % band over networks of ``arr``
    (networks × records) against the record depths ``d``."""
    m = np.exp(np.mean(np.log(arr), 0)) if log else arr.mean(0)
    lo, hi = np.quantile(arr, [0.1, 0.9], axis=0)
    ax.fill_between(d, lo, hi, alpha=0.2, color=color)
    ax.plot(d, m, label=label, color=color)


REFERENCE_STYLE = dict(ls="--", lw=1.2)
"""How the authors' published curves are drawn over ours: dashed, in the colour of our curve of the
same quantity, over a light grey 10–90 % band."""


def plot_reference(
    ax: Any, ref: Mapping[str, Any] | None, key: str, color: Any = "0.25", label: str | None = None
) -> None:
    """The authors' published curve ``ref[key]`` = (centre, 10 % quantile, 90 % quantile) —
    quantiles may be ``None`` — at the depths ``ref["depth"]``, dashed in ``color`` over a light
    grey 10–90 % band."""
    if ref is None or key not in ref:
        return
    centre, lo, hi = ref[key]
    if lo is not None and hi is not None:
        ax.fill_between(ref["depth"], lo, hi, color="0.5", alpha=0.15, lw=0)
    ax.plot(ref["depth"], centre, label=label, color=color, **REFERENCE_STYLE)


def plot_increment_panel(
    ax: Any,
    d: np.ndarray,
    Q: Mapping[str, np.ndarray],
    key: str,
    label: str,
    ylabel: str,
    reference: Mapping[str, Any] | None = None,
) -> None:
    """Panel (a) of Labatie's Figs. 4–5: the increment ``Q[key]`` of χ (per layer or unit) and
    its BN and activation factors ``Q["dbn"]``, ``Q["dphi"]``, against the neutral value 1."""
    plot_band(ax, d, Q[key], label, "C0")
    plot_band(ax, d, Q["dbn"], r"$\delta_\mathrm{BN}\chi$", "C1")
    plot_band(ax, d, Q["dphi"], r"$\delta_\varphi\chi$", "C2")
    plot_reference(ax, reference, "dbn", "C1", "authors (dashed)")
    plot_reference(ax, reference, "dphi", "C2")
    ax.axhline(1, color="k", lw=0.8)
    ax.set_ylabel(ylabel)
    legend_in_headroom(ax)


def plot_signal_panels(
    ax_reff: Any,
    ax_kurt: Any,
    d: np.ndarray,
    Q: Mapping[str, np.ndarray],
    kurt_label: str,
    reference: Mapping[str, Any] | None = None,
) -> None:
    """Panels (c) and (d) of Labatie's Figs. 4–5: effective ranks of signal and noise; kurtosis
    and ν₁(|y|)/√ν₂ of the normalised pre-activation, with their Gaussian values dotted."""
    plot_band(ax_reff, d, Q["reff_x"], r"signal $r(x^l)$", "C0")
    plot_band(ax_reff, d, Q["reff_dx"], r"noise $r(dx^l)$", "C1")
    plot_reference(ax_reff, reference, "reff_x", "C0", "authors (dashed)")
    plot_reference(ax_reff, reference, "reff_dx", "C1")
    ax_reff.set_yscale("log")
    legend_in_headroom(ax_reff)
    plot_band(ax_kurt, d, Q["kurt_z"], kurt_label, "C0")
    ax_kurt.axhline(GAUSS_KURTOSIS, color="C0", ls=":", lw=1)
    plot_reference(ax_kurt, reference, "kurt_z", "C0")
    plot_band(ax_kurt, d, Q["nu1_z"], r"$\nu_1(|y|)/\sqrt{\nu_2}$", "C3")
    plot_reference(ax_kurt, reference, "nu1_z", "C3")
    ax_kurt.axhline(GAUSS_ABS_MEAN, color="C3", ls=":", lw=1)
    # one axis for both, as in the paper's Figs. 4(d)/5(d): logarithmic when the tails grow by
    # more than a decade over the smaller quantity (Fig. 4), linear otherwise (Fig. 5)
    lo, hi = ax_kurt.dataLim.intervaly
    if hi > 10 * lo > 0:
        ax_kurt.set_yscale("log")
    else:
        ax_kurt.set_ylim(0, None)
    ax_kurt.set_ylabel(r"kurtosis $\mu_4$ and $\nu_1(|y|)$")
    legend_in_headroom(ax_kurt)


def four_panels(
    d: np.ndarray,
    Q: Mapping[str, np.ndarray],
    *,
    increment: str,
    increment_label: str,
    increment_ylabel: str,
    kurt_label: str,
    xlabel: str,
    title: str,
    chi_lines: list[tuple[np.ndarray, str, dict[str, Any]]] = (),
    log_x: bool = False,
    reference: Mapping[str, Any] | None = None,
) -> Any:
    """The layout of Labatie's Figs. 4 and 5 (a–d): (a) the increment ``Q[increment]`` of χ with its
    BN and activation factors; (b) χˡ (geometric mean and band) on a log axis with the extra curves
    ``chi_lines`` — (values at ``d``, matplotlib format, keyword arguments) —; (c) effective ranks
    of signal and noise; (d) kurtosis and ν₁(|y|) of the BN output.  ``reference`` (optional) holds
    the authors' published curves drawn over ours (see :func:`plot_reference`; keys ``depth``,
    ``dbn``, ``dphi``, ``chi``, ``reff_x``, ``reff_dx``, ``kurt_z``, ``nu1_z``)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(2, 2, figsize=(7.5, 5.6))
    axes = ax.ravel()
    plot_increment_panel(axes[0], d, Q, increment, increment_label, increment_ylabel, reference)
    plot_band(axes[1], d, Q["chi"], "geometric mean", "C0", log=True)
    plot_reference(axes[1], reference, "chi", "C0", "authors (dashed)")
    for y, fmt, kw in chi_lines:
        axes[1].plot(d, y, fmt, **kw)
    if log_x:
        axes[1].set_xscale("log")
    axes[1].set_yscale("log")
    axes[1].set_ylabel(r"$\chi^l$")
    legend_in_headroom(axes[1])
    plot_signal_panels(axes[2], axes[3], d, Q, kurt_label, reference)
    for a, letter in zip(axes, "abcd"):
        a.set_xlabel(xlabel)
        a.set_title(f"({letter})", loc="left")
    fig.suptitle(title)
    tight_layout(fig)
    clear_legends(fig)
    return fig
