"""Figures of Chapter 6 (linear regions of ReLU networks), one function per figure.

Regions are drawn from the exact counter's padded polygons ``V`` (P, M, 2) with ``n`` (P,)
vertices each (:class:`layerwise.regions.Regions`), in slice coordinates; ``half_width`` is the
square's half-width and ``uv`` the three slice points in slice coordinates
(:meth:`layerwise.regions.Plane.to_plane`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.collections import PolyCollection

from ..plotting import clear_legends, legend_above, legend_in_headroom
from ..stats import mean_se


def arch_name(w: Sequence[int]) -> str:
    """``[16]×6`` for deep equal-width architectures, ``[32, 32, 32]`` otherwise."""
    return f"[{w[0]}]×{len(w)}" if len(w) > 3 else str(list(w))


def region_colors(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` RGBA colours of tab20 in a random order (neighbours rarely share one)."""
    return plt.cm.tab20(rng.permutation(n) % 20)


def draw_regions(
    ax: Any,
    V: np.ndarray,
    n: np.ndarray,
    half_width: float,
    uv: np.ndarray | None = None,
    colors: Any = None,
    rng: np.random.Generator | None = None,
) -> None:
    """The polygons as one PolyCollection (colours given, or :func:`region_colors` from ``rng``)
    on the square, with the slice points ``uv`` as white dots."""
    polys = [V[i, : n[i]] for i in range(len(n))]
    cols = colors if colors is not None else region_colors(len(n), rng)
    ax.add_collection(PolyCollection(polys, facecolors=cols, edgecolors="k", linewidths=0.08))
    h = half_width
    ax.set_xlim(-h, h)
    ax.set_ylim(-h, h)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    if uv is not None:
        ax.plot(uv[:, 0], uv[:, 1], "o", mfc="w", mec="k", ms=5)


def slice_regions(
    regions: Sequence[tuple[np.ndarray, np.ndarray]],
    archs: Sequence[Sequence[int]],
    half_width: float,
    uv: np.ndarray,
    grid_sizes: Sequence[int],
    found: np.ndarray,
    rngs: Sequence[np.random.Generator],
) -> Any:
    """2×2: the activation regions ``(V, n)`` of three architectures (colours from ``rngs``), and
    the fraction ``found`` (A, G) of each exact count that the n×n grids find (bottom right)."""
    fig, axes = plt.subplots(2, 2, figsize=(7.0, 7.0))
    for (V, n), w, ax, rng in zip(regions, archs, axes.flat, rngs, strict=False):  # 3 of 4 axes
        draw_regions(ax, V, n, half_width, uv, rng=rng)
        ax.set_title(f"{arch_name(w)}: {len(n)} regions")
    ax = axes[1, 1]
    for k, w in enumerate(archs):
        ax.plot(grid_sizes, found[k], "o-", label=arch_name(w))
    ax.axhline(1, color="k", lw=0.8)
    ax.set_xscale("log")
    ax.minorticks_off()
    ax.set_xticks(grid_sizes, [str(g) for g in grid_sizes])
    ax.set_xlabel("grid cells per side, n")
    ax.set_ylabel("grid patterns / exact count")
    ax.set_ylim(0, 1.05)
    ax.legend()
    return fig


def counts_vs_neurons(
    Ns: np.ndarray,
    depths: Sequence[int],
    mean: np.ndarray,
    se: np.ndarray,
    closed_form: np.ndarray,
    ratio: np.ndarray,
    ratio_se: np.ndarray,
) -> Any:
    """Left: mean ± SE region counts (len(Ns), len(depths)) against N (log–log) with the one-layer
    closed form ``closed_form`` evaluated on a fine grid of N (a (2, k) array: N, count).  Right:
    counts over the closed form of the same slice and N (``ratio`` ± ``ratio_se``) against depth."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(7.5, 4.2))
    for d_i, d in enumerate(depths):
        ax1.errorbar(
            Ns, mean[:, d_i], yerr=se[:, d_i], marker="o", ls="none", capsize=2, label=f"depth {d}"
        )
    ax1.plot(closed_form[0], closed_form[1], "k-", lw=1, label="one layer, closed form")
    ax1.set_xscale("log")
    ax1.set_yscale("log")
    ax1.set_xticks(Ns, [str(int(n)) for n in Ns])
    ax1.minorticks_off()
    ax1.set_xlabel("hidden neurons N")
    ax1.set_ylabel("activation regions in the square")
    # above the panel: six entries leave no free corner inside it at every scale
    legend_above(ax1, ncols=2)
    cols = plt.cm.viridis(np.linspace(0, 0.85, len(Ns)))
    for n_i, N in enumerate(Ns):
        ax2.errorbar(
            np.asarray(depths) + 0.06 * (n_i - 1),
            ratio[n_i],
            yerr=ratio_se[n_i],
            marker="o",
            capsize=2,
            color=cols[n_i],
            label=f"N = {int(N)}",
        )
    ax2.axhline(1, color="k", lw=0.8)
    ax2.axhspan(0.5, 2.0, color="0.9", zorder=0)
    ax2.set_xticks(list(depths))
    ax2.set_xlabel("depth (N/depth neurons per layer)")
    ax2.set_ylabel("count / one-layer closed form")
    ax2.set_ylim(bottom=0)
    legend_above(ax2, ncols=3)
    return fig


def lines_vs_neurons(
    Ns: np.ndarray,
    depths: Sequence[int],
    cross: np.ndarray,
    cross_se: np.ndarray,
    dist: np.ndarray,
    dist_se: np.ndarray,
    dist_curve: np.ndarray,
) -> Any:
    """Left: boundary crossings of a segment per unit of θ/π (mean ± SE, (len(Ns), len(depths)))
    against N, with the line N.  Right: distance of data points to the nearest boundary (mean ±
    SE) against N, with the one-layer closed form ``dist_curve`` ((2, k): N, distance)."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(7.5, 3.5))
    for d_i, d in enumerate(depths):
        for ax, y, se in ((ax1, cross, cross_se), (ax2, dist, dist_se)):
            ax.errorbar(
                Ns,
                y[:, d_i],
                yerr=se[:, d_i],
                marker="o",
                ls="none",
                capsize=2,
                label=f"depth {d}",
            )
    grid = np.geomspace(Ns.min(), Ns.max(), 50)
    ax1.plot(grid, grid, "k-", lw=1, label="N (one layer)")
    (ref,) = ax2.plot(dist_curve[0], dist_curve[1], "k-", lw=1, label="one layer, closed form")
    for ax in (ax1, ax2):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(Ns, [str(int(n)) for n in Ns])
        ax.minorticks_off()
        ax.set_xlabel("hidden neurons N")
    # legends in a band above the points, none over data; the depths' colours once, on the left
    legend_in_headroom(ax1, ncols=2)
    legend_in_headroom(ax2, ncols=1, handles=[ref])
    ax1.set_ylabel("boundary crossings / (θ/π)")
    ax2.set_ylabel("distance to nearest boundary")
    clear_legends(fig)
    return fig


def training_sweep(
    epoch: np.ndarray, panels: Sequence[tuple[str, str, dict[str, np.ndarray]]]
) -> Any:
    """2×2 panels of ratios to initialisation against the epoch: each panel is (title, y label,
    {label: (S, T) array}), drawn as the mean over the S runs ± its SE, with the line 1."""
    fig, axes = plt.subplots(2, 2, figsize=(7.5, 6.4), sharex=True)
    for ax, (title, ylabel, curves) in zip(axes.flat, panels, strict=False):  # up to 4 panels
        for k, (label, v) in enumerate(curves.items()):
            v = np.asarray(v, dtype=float)
            _, se = mean_se(v, axis=0)  # NaN with a single run: no error bar
            ax.errorbar(
                epoch,
                v.mean(0),
                yerr=np.nan_to_num(se),
                marker="o",
                ms=3,
                capsize=2,
                label=label,
                color=f"C{k}",
            )
        ax.axhline(1, color="k", lw=0.8)
        ax.set_title(title)
        ax.set_ylabel(ylabel)
        legend_in_headroom(ax, ncols=2)  # a band above the curves: no legend over data
    for ax in axes[1]:
        ax.set_xlabel("epoch")
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    clear_legends(fig)
    return fig


def activation_vs_linear(
    V: np.ndarray,
    n: np.ndarray,
    labels: np.ndarray,
    members: np.ndarray,
    half_width: float,
    uv: np.ndarray,
    rng_activation: np.random.Generator,
    rng_linear: np.random.Generator,
) -> Any:
    """Activation regions (left) and the linear regions ``labels`` they merge into (right), the
    linear region made of ``members`` dark (none when ``members`` is empty: the search found
    none)."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(7.4, 3.8))
    draw_regions(ax1, V, n, half_width, uv, rng=rng_activation)
    ax1.set_title(f"{len(n)} activation regions")
    lc = region_colors(labels.max() + 1, rng_linear)[labels]
    lc[members] = (0.1, 0.1, 0.1, 1.0)
    draw_regions(ax2, V, n, half_width, uv, colors=lc)
    ax2.set_title(
        f"{labels.max() + 1} linear regions"
        + (f" (dark: {len(members)} pieces)" if len(members) else "")
    )
    return fig


def tangent_sensitivity(
    V: np.ndarray,
    n: np.ndarray,
    norm: np.ndarray,
    areas: np.ndarray,
    half_width: float,
    uv: np.ndarray,
) -> Any:
    """‖Sens_tan‖ on each activation region (left, magma) and its distribution over regions
    weighted by area and by count (right)."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(7.5, 3.5))
    wts = areas / areas.sum()
    nrm = plt.Normalize(norm.min(), norm.max())
    draw_regions(ax1, V, n, half_width, uv, colors=plt.cm.magma(nrm(norm)))
    fig.colorbar(
        plt.cm.ScalarMappable(nrm, "magma"),
        ax=ax1,
        label=r"$\|\mathrm{Sens}_{\tan}\|_F$ on the region",
    )
    ax2.hist(norm, bins=40, weights=wts, color="C0", alpha=0.8, label="by area (= uniform x)")
    ax2.hist(
        norm,
        bins=40,
        weights=np.full(len(wts), 1 / len(wts)),
        histtype="step",
        color="C1",
        lw=1.5,
        label="each region once",
    )
    ax2.set_xlabel(r"$\|\partial^2 f/\partial\theta\,\partial x\|_F$ (slice directions)")
    ax2.set_ylabel("fraction")
    ax2.legend()
    return fig


def counts_training(
    epoch: np.ndarray,
    ratio: dict[str, np.ndarray],
    preprocessings: Sequence[str],
    lrs: Sequence[float],
    label_noise: Sequence[float],
) -> Any:
    """The 2×2 :func:`training_sweep` of Chapter 6 from the ratios to initialisation of
    :func:`layerwise.studies.ch06.training_summary` (``count`` (P, R, S, T), ``noise`` (L, S, T),
    ``crossings`` and ``dist`` (P, R, S, T)): regions by preprocessing (first learning rate), by
    learning rate (first preprocessing), by label-noise fraction, and the crossings and distances
    along lines (first preprocessing and learning rate)."""
    rc, rn = ratio["count"], ratio["noise"]
    p0, lr0 = preprocessings[0], lrs[0]
    return training_sweep(
        epoch,
        [
            (
                f"regions, true labels, lr {lr0:g}",
                "regions / at init",
                {p: rc[i, 0] for i, p in enumerate(preprocessings)},
            ),
            (
                f"regions, {p0} inputs, true labels",
                "regions / at init",
                {f"lr {lr:g}": rc[0, j] for j, lr in enumerate(lrs)},
            ),
            (
                f"regions, {p0} inputs, lr {lr0:g}",
                "regions / at init",
                {f"{f:.0%} random labels": rn[i] for i, f in enumerate(label_noise)},
            ),
            (
                f"along lines, {p0} inputs, lr {lr0:g}",
                "ratio to init",
                {
                    "boundary crossings": ratio["crossings"][0, 0],
                    "distance to boundary": ratio["dist"][0, 0],
                },
            ),
        ],
    )


def counts_by_step(
    panels: Sequence[tuple[str, np.ndarray, np.ndarray, np.ndarray, Sequence[str]]],
) -> Any:
    """1×2: mean ± SE log-ratio log(count_t / count_0) against the training step (log axis,
    step 0 left out), one curve per group: each panel is ``(title, steps (T,), mean (G, T),
    se (G, T), labels (G,))`` (the ``curve`` Estimate of
    :func:`layerwise.studies.ch06.log_ratio_summary`)."""
    fig, axes = plt.subplots(1, len(panels), figsize=(7.5, 3.6), sharey=True, squeeze=False)
    for ax, (title, steps, mean, se, labels) in zip(axes[0], panels, strict=True):
        s = np.asarray(steps)[1:]
        for g, label in enumerate(labels):
            ax.errorbar(s, mean[g, 1:], yerr=se[g, 1:], marker="o", ms=3, capsize=2, label=label)
        ax.axhline(0, color="k", lw=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("training step (Adam)")
        ax.set_title(title)
        ax.legend(loc="lower left")
    axes[0, 0].set_ylabel("log(regions / at init)")
    return fig
