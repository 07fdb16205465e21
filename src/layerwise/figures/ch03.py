"""Figures of Chapter 3 (vanilla networks; Labatie 2019, §5, Figs. 2–3), one function per figure.

Each takes the arrays the chapter computed (:mod:`layerwise.labatie`) and returns the Figure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter, ScalarFormatter
from scipy import stats

from ..labatie import SINGLE_INPUT_DIFFUSION_TIMES_N
from ..plotting import clear_legends, legend_in_headroom, tight_layout
from ..stats import mean_se

#: (key, axis label) of the two log-moments of Fig. 2: signal ν₂(x) and noise μ₂(dx).
LOG_MOMENTS = [
    ("nu2", r"$\log\nu_2(x^l)-\log\nu_2(x^0)$"),
    ("mu2dx", r"$\log\mu_2(dx^l)-\log\mu_2(dx^0)$"),
]


def log_moment_histograms(
    logs: Mapping[str, np.ndarray],
    quarters: Sequence[int],
    fits: Mapping[str, Sequence[Mapping[str, Any]]],
) -> Figure:
    """Labatie's Fig. 2: histograms over networks of the log-moments ``logs[key]`` (networks ×
    layers 1..L) at the depths ``quarters``, with the Gaussian ``fits`` (estimates of its
    ``mean`` and ``variance``, ``gauss`` of :func:`layerwise.studies.ch03.vanilla_log_moments`)
    as curves; signal left, noise right."""
    qi = [q - 1 for q in quarters]
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.2))
    colors = plt.get_cmap("rocket")(np.linspace(0.15, 0.75, 4))
    for ax, (key, lab) in zip(axes, LOG_MOMENTS, strict=False):
        arr = logs[key]
        lo, hi = np.quantile(arr[:, qi], [0.002, 0.998])
        grid = np.linspace(lo, hi, 300)
        bins = np.linspace(lo, hi, 40 if arr.shape[0] >= 500 else 15)
        for c, q, i, f in zip(colors, quarters, qi, fits[key], strict=False):
            ax.hist(arr[:, i], bins=bins, density=True, color=c, alpha=0.35)
            ax.plot(
                grid,
                stats.norm.pdf(grid, f["mean"].mean, np.sqrt(f["variance"].mean)),
                color=c,
                lw=2,
                label=f"l = {q}",
            )
        ax.set_xlabel(lab)
        ax.set_ylabel("density over networks")
        legend_in_headroom(ax)
    tight_layout(fig)
    clear_legends(fig)
    return fig


def drift_diffusion(
    depth: np.ndarray,
    logs: Mapping[str, np.ndarray],
    lme: Mapping[str, np.ndarray],
    diffusion: Mapping[str, float],
) -> Figure:
    """Mean (±2 SE) of the log-moments against depth with −variance/2 (dashed) and the log of the
    sample mean of the ratio ``lme[key][:, 0]`` (dotted), left; their variance with the linear
    ``diffusion[key]`` fit (dotted), right (Labatie §5 and Fig. 2)."""
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.4))
    for key, lab, c in [("nu2", r"signal $\nu_2$", "C0"), ("mu2dx", r"noise $\mu_2(dx)$", "C1")]:
        arr = logs[key]
        m, se = mean_se(arr)
        v = np.var(arr, axis=0, ddof=1)
        axes[0].plot(depth, m, color=c, label=f"mean of log, {lab}")
        axes[0].fill_between(depth, m - 2 * se, m + 2 * se, color=c, alpha=0.3)
        axes[0].plot(depth, -v / 2, color=c, ls="--", label="−variance/2")
        axes[0].plot(depth, lme[key][:, 0], color=c, ls=":", label="log of sample mean of ratio")
        axes[1].plot(depth, v, color=c, label=lab)
        axes[1].plot(depth, diffusion[key] * depth, color=c, ls=":", lw=1)
    axes[0].axhline(0, color="k", lw=0.8)
    axes[0].set_xlabel("layer l")
    axes[0].set_ylabel("log ratio to layer 0")
    legend_in_headroom(axes[0])
    axes[1].set_xlabel("layer l")
    axes[1].set_ylabel("variance over networks")
    legend_in_headroom(axes[1])
    tight_layout(fig)
    clear_legends(fig)
    return fig


def width_dependence(widths: Sequence[int], diffusion: Sequence[Any]) -> Figure:
    """N × the per-layer diffusion of log ν₂ (``diffusion``: an estimate per width) against the
    width N (±2 SE), with the single-input value 5 dashed (Labatie, App. A)."""
    W = np.array(widths)
    se = np.array([e.se for e in diffusion])
    diffusion = np.array([e.mean for e in diffusion])
    fig, ax = plt.subplots(figsize=(5, 3.6))
    ax.errorbar(
        list(widths),
        diffusion * W,
        yerr=2 * se * W,
        marker="o",
        capsize=3,
        label="measured N · diffusion (±2 SE)",
    )
    ax.axhline(SINGLE_INPUT_DIFFUSION_TIMES_N, color="k", ls="--", label="single input: 5")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("width N")
    ax.set_ylabel("N × (variance of log ν₂ per layer)")
    legend_in_headroom(ax)  # the error bars of any seed stay clear of the legend
    tight_layout(fig)
    clear_legends(fig)
    return fig


def sensitivity(
    depth: np.ndarray,
    dchi: np.ndarray,
    chi: np.ndarray,
    reff: np.ndarray,
    references: Mapping[str, Mapping[str, Any]] | None = None,
) -> Figure:
    """Labatie's Fig. 3: increments δχ, sensitivity χ and effective rank r_eff(x) against depth,
    mean and 10–90 % band over networks (rows of each array); ``references`` maps a label to the
    authors' published curves (:func:`layerwise.published.fig3_reference`), drawn dashed/dotted."""
    fig, axes = plt.subplots(1, 3, figsize=(7.5, 2.8))
    for ax, arr, lab, key in [
        (axes[0], dchi, r"$\delta\chi^l$", "dchi"),
        (axes[1], chi, r"$\chi^l$", "chi"),
        (axes[2], reff, r"$r(x^l)$", "reff_x"),
    ]:
        m = arr.mean(0)
        lo, hi = np.quantile(arr, [0.1, 0.9], axis=0)
        ax.fill_between(depth, lo, hi, alpha=0.25, label="10–90 %")
        ax.plot(depth, m, label="mean")
        for (name, ref), ls in zip((references or {}).items(), ("--", ":"), strict=False):
            centre, rlo, rhi = ref[key]
            if rlo is not None:
                ax.fill_between(ref["depth"], rlo, rhi, color="0.5", alpha=0.12, lw=0)
            ax.plot(ref["depth"], centre, color="0.25", ls=ls, lw=1.0, label=name)
        ax.set_xlabel("layer l")
        ax.set_ylabel(lab)
    axes[1].set_yscale("log")
    axes[0].axhline(1, color="k", lw=0.8)
    axes[2].axhline(1, color="k", lw=0.8)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False)
    tight_layout(fig, rect=(0, 0.1, 1, 1))
    return fig


def coactivation(coact: Mapping[str, np.ndarray]) -> Figure:
    """Fraction of always-on/off units and linearity index against depth (mean ± 2 SE over
    networks) from :func:`layerwise.labatie.vanilla_coactivation`."""
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.0))
    for ax, key, lab in [
        (axes[0], "coactive", "fraction of always-on/off units"),
        (axes[1], "linearity", "linearity index"),
    ]:
        m, se = mean_se(coact[key])
        ax.plot(coact["depth"], m)
        ax.fill_between(coact["depth"], m - 2 * se, m + 2 * se, alpha=0.3)
        ax.set_xlabel("layer l")
        ax.set_ylabel(lab)
        ax.set_ylim(0, 1.02)
    tight_layout(fig)
    return fig


def datasets(runs: Mapping[str, tuple[np.ndarray, Mapping[str, np.ndarray]]]) -> Figure:
    """χ, effective rank and mean drift of log ν₂ against depth (means over networks), one curve
    per data set of ``runs`` ({name: (depth, engine arrays)})."""
    fig, axes = plt.subplots(1, 3, figsize=(7.5, 2.8))
    for ds, (d, A) in runs.items():
        for ax, key in zip(axes, ["chi_loc3", "reff_signal_loc3", "nu2_signal_loc3"], strict=False):
            arr = (
                A[key] if key != "nu2_signal_loc3" else np.log(A[key] / A["nu2_signal_loc1"][:, :1])
            )
            ax.plot(d, arr.mean(0), label=ds)
    labels = [r"$\chi^l$", r"$r(x^l)$", r"mean $\log\nu_2(x^l)/\nu_2(x^0)$"]
    for ax, lab in zip(axes, labels, strict=False):
        ax.set_xlabel("layer l")
        ax.set_ylabel(lab)
    axes[1].set_yscale("log")
    axes[1].yaxis.set_major_formatter(ScalarFormatter())
    axes[1].yaxis.set_minor_formatter(NullFormatter())
    legend_in_headroom(axes[0], ncols=len(runs))  # above the curves, whatever the seed
    tight_layout(fig)
    clear_legends(fig)
    return fig


def log_moment_cdfs(
    logs: Mapping[str, np.ndarray], quarters: Sequence[int], published: Mapping[str, np.ndarray]
) -> Figure:
    """Labatie's Fig. 2 as distribution functions: for signal (left) and noise (right), our
    empirical
    distribution function over networks of the log-moment at each depth of ``quarters``
    (``logs[key]``:
    networks × len(quarters)), solid, against the authors' rebuilt from their percentiles 1…99
    (``published[key]``: len(quarters) × 99), dashed, same colour."""
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.8))
    colors = plt.get_cmap("rocket")(np.linspace(0.15, 0.75, len(quarters)))
    levels = np.arange(1, 100) / 100.0
    for ax, (key, lab) in zip(axes, LOG_MOMENTS, strict=False):
        for j, (c, q) in enumerate(zip(colors, quarters, strict=False)):
            x = np.sort(logs[key][:, j])
            ax.step(
                x,
                np.arange(1, x.size + 1) / x.size,
                where="post",
                color=c,
                lw=1.5,
                label=f"l = {q}",
            )
            ax.plot(published[key][j], levels, color=c, ls="--", lw=1.0)
        ax.set_xlabel(lab)
        ax.set_ylabel("fraction of networks below")
    handles, labels = axes[0].get_legend_handles_labels()  # below the panels: a CDF fills its axes
    fig.legend(
        handles,
        labels,
        loc="lower center",
        ncol=len(labels),
        frameon=False,
        title="ours solid, authors dashed",
    )
    tight_layout(fig, rect=(0, 0.16, 1, 1))
    return fig


def log_moment_spreads(quarters: Sequence[int], spread: Mapping[str, Mapping[str, Any]]) -> Figure:
    """The spread over networks (standard deviation) of the log-moments of signal (left) and noise
    (right) against depth: ours (estimates) with ±2 SE bars against the authors' widths 128 and
    512 (``spread`` of :func:`layerwise.studies.ch03.fig2_spread`)."""
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.4))
    q = np.asarray(quarters)
    for ax, (key, lab) in zip(axes, LOG_MOMENTS, strict=False):
        r = spread[key]
        ax.plot(q, r["w128"], "o--", color="C0", label="authors, N = 128")
        ax.plot(q, r["w512"], "s:", color="C2", label="authors, N = 512")
        sd, se = np.array([e.mean for e in r["ours"]]), np.array([e.se for e in r["ours"]])
        ax.errorbar(q, sd, yerr=2 * se, fmt="k^-", capsize=3, label="ours")
        ax.set_xlabel("depth l")
        ax.set_ylabel("SD over networks")
        ax.set_title(lab)
        ax.set_ylim(bottom=0)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, frameon=False)
    tight_layout(fig, rect=(0, 0.09, 1, 1))
    return fig
