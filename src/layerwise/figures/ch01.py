"""Figures of Chapter 1, layer decoupling (Donier 2019, §2): one function per figure, each taking
the arrays the chapter computed (:mod:`layerwise.capacity`) and returning the Figure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from ..capacity import activation_label, footnote3_error_closed_form, nu_closed_form
from ..plotting import CMAP_DIVERGING


def nu_scale(table: np.ndarray, cases: Sequence[Sequence[Any]]) -> Any:
    """ν per activation: Monte-Carlo ± 3 SE (columns 0, 1 of ``table``) and Eq. 13 (column 4)."""
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    x = np.arange(len(cases))
    ax.errorbar(x, table[:, 0], yerr=3 * table[:, 1], fmt="o", ms=5, capsize=4, label="Monte-Carlo ± 3 SE")
    ax.scatter(x, table[:, 4], marker="_", s=500, color="C1", zorder=3, label="ν = (α+β)²/4 (Eq. 13)")
    ax.set_xticks(x, [activation_label(*c) for c in cases], rotation=30, ha="right")
    ax.set_ylabel("decoupling scale ν")
    ax.legend(loc="upper right")
    return fig


def augmented_covariance(heat: Mapping[str, np.ndarray], cases: Sequence[Sequence[Any]], n: int, m: int) -> Any:
    """Heat-maps of Σ̃ (``S_k``) per case in a 2 × 3 grid, block lines every n, the last panel a colour bar
    (Donier's Fig. 3); titles give ν of Eq. 13 and the mean fitted off-diagonal ratio (``off_k``)."""
    fig, axes = plt.subplots(2, 3, figsize=(7.5, 5.6))
    for k, ((name, slope), ax) in enumerate(zip(cases, axes.flat)):
        im = ax.imshow(heat[f"S_{k}"], cmap=CMAP_DIVERGING, vmin=-1, vmax=1)
        ax.set_title(f"{activation_label(name, slope)}\nν = {nu_closed_form(name, slope):.3f}, "
                     f"fit {heat[f'off_{k}'].mean():.3f}")
        ax.set_xticks([]), ax.set_yticks([])
        ax.grid(False)
        for b in range(1, m):
            ax.axhline(b * n - 0.5, color="k", lw=0.4), ax.axvline(b * n - 0.5, color="k", lw=0.4)
    axes.flat[-1].axis("off")
    fig.colorbar(im, ax=axes.flat[-1], fraction=0.6, shrink=0.9, label="Σ̃ entry")
    return fig


def footnote3_error(rows: Sequence[np.ndarray], cases: Sequence[Sequence[Any]]) -> Any:
    """Relative block error against n, log-log: Monte-Carlo ± 3 SE (from the squared error and its
    SE, columns 1–2 of each ``rows`` array) and the closed form of footnote 3 (lines)."""
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for k, ((name, slope), R) in enumerate(zip(cases, rows)):
        err = np.sqrt(np.clip(R[:, 1], 1e-12, None))
        derr = R[:, 2] / (2 * err)
        ax.errorbar(R[:, 0], err, yerr=3 * derr, fmt="o", color=f"C{k}", capsize=3,
                    label=f"{activation_label(name, slope)} (MC ± 3 SE)")
        ns = np.geomspace(R[0, 0], R[-1, 0], 50)
        ax.plot(ns, [footnote3_error_closed_form(name, int(v), slope) for v in ns], color=f"C{k}", lw=1)
    ax.set_xscale("log", base=2), ax.set_yscale("log")
    ax.set_xlabel("input dimension n"), ax.set_ylabel("‖E[η_iη_j YYᵀ] − νΣ‖_F / ‖Σ‖_F")
    ax.legend()
    return fig


def pseudo_random_capacities(kappa_eq25: np.ndarray, k_mean: np.ndarray, k_se: np.ndarray, sizes: np.ndarray,
                             errors: np.ndarray, fit: Mapping[str, float]) -> Any:
    """Left: κ_i of Eq. 25 against the empirical capacities at the largest N (± 3 SE), as bars.
    Right: the distance to Eq. 25 against N per replicate, their mean, and the N^{-1/2} guide."""
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.4))
    ax = axes[0]
    n, w = len(kappa_eq25), 0.38
    ax.bar(np.arange(n) - w / 2, kappa_eq25, w, label="Eq. 25: (P∘P)κ^φ")
    ax.bar(np.arange(n) + w / 2, k_mean, w, yerr=3 * k_se, capsize=3, label=f"empirical, N = {int(sizes[-1]):,} (± 3 SE)")
    ax.set_xlabel("input i"), ax.set_ylabel("capacity κ_i"), ax.legend()
    ax = axes[1]
    ax.loglog(np.repeat(sizes, errors.shape[1]), errors.ravel(), ".", alpha=0.5, label="replicates")
    ax.loglog(sizes, errors.mean(1), "o-", label=f"mean; slope {fit['slope']:.2f} ± {fit['slope_se']:.2f}")
    ax.loglog(sizes, errors.mean(1)[0] * (sizes / sizes[0]) ** -0.5, "k--", lw=1, label="∝ N^{-1/2}")
    ax.set_xlabel("samples N"), ax.set_ylabel("‖κ_emp − (P∘P)κ^φ‖₂"), ax.legend()
    return fig


def smooth_nu(q_fine: np.ndarray, quad: Mapping[str, np.ndarray], mc: Mapping[str, np.ndarray]) -> Any:
    """ν(f; q) of smooth activations: quadrature on ``q_fine`` (lines) and Monte-Carlo rows (q, ν, SE)
    ± 3 SE (points), one colour per activation in the order of ``quad``; ReLU's ½ and 1 dotted."""
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for k, name in enumerate(quad):
        ax.plot(q_fine, quad[name], color=f"C{k}", label=f"{name} (quadrature)")
        R = mc[name]
        ax.errorbar(R[:, 0], R[:, 1], yerr=3 * R[:, 2], fmt="o", ms=3.5, color=f"C{k}", capsize=2)
    ax.axhline(1, color="gray", lw=0.8, ls=":"), ax.axhline(0.5, color="gray", lw=0.8, ls=":")
    ax.text(0.011, 0.46, "ReLU, ν = ½", color="gray")
    ax.set_xscale("log"), ax.set_xlabel("pre-activation variance q"), ax.set_ylabel("ν(f; q) = (E η)² / E η²")
    ax.set_ylim(0, 1.05)
    ax.legend()
    return fig
