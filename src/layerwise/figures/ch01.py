"""Figures of Chapter 1, layer decoupling (Donier 2019, §2): one function per figure, each taking
the arrays the chapter computed (:mod:`layerwise.capacity`) and returning the Figure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from ..capacity import activation_label, eta_levels, nu_closed_form
from ..plotting import CMAP, clear_legends, legend_in_headroom
from ..stats import Estimate


def nu_scale(
    table: np.ndarray, cases: Sequence[Sequence[Any]], fixed: Mapping[str, np.ndarray] | None = None
) -> Any:
    """ν per activation: the idealised Monte-Carlo ± 3 SE (columns 0, 1 of ``table``; a check of Eq.
    13), Eq. 13 (column 4), and for each entry of ``fixed`` (label → (cases, layers·pairs)
    off-diagonal ratios of fixed layers) their mean with the ± 1 SD spread over layers and unit
    pairs."""
    fig, ax = plt.subplots(figsize=(5.0, 3.8))
    x = np.arange(len(cases))
    fixed = fixed or {}
    off = np.linspace(-0.22, 0.22, len(fixed) + 1)
    ax.errorbar(
        x + off[0],
        table[:, 0],
        yerr=3 * table[:, 1],
        fmt="o",
        ms=5,
        capsize=4,
        color="C0",
        label="idealised: fresh P (± 3 SE)",
    )
    for k, (label, R) in enumerate(fixed.items()):
        ax.errorbar(
            x + off[k + 1],
            R.mean(1),
            yerr=R.std(1),
            fmt="s",
            ms=5,
            capsize=4,
            color=f"C{k + 2}",
            label=label,
        )
    ax.scatter(x, table[:, 4], marker="_", s=700, color="C1", zorder=3, label="Eq. 13")
    ax.set_xticks(x, [activation_label(*c) for c in cases], rotation=20, ha="right")
    ax.set_ylabel("off-diagonal block ratio (ν)")
    ax.legend(loc="lower left")
    return fig


def augmented_covariance(
    heat: Mapping[str, np.ndarray], cases: Sequence[Sequence[Any]], n: int, m: int
) -> Any:
    """Heat-maps of Σ̃ (``S_k``) of one fixed layer per case in a 2 × 3 grid, block lines every n,
    the last panel a colour bar (Donier's Fig. 3); sequential colour map on [0, 1] (entries below 0
    drawn as 0, marked on the colour bar); titles give ν of Eq. 13 and the range of the fitted
    off-diagonal ratios (``r_k``)."""
    fig, axes = plt.subplots(2, 3, figsize=(7.5, 5.8))
    for k, ((name, slope), ax) in enumerate(zip(cases, axes.flat, strict=False)):
        im = ax.imshow(heat[f"S_{k}"], cmap=CMAP, vmin=0, vmax=1)
        r = heat[f"r_{k}"]
        ax.set_title(
            f"{activation_label(name, slope)}\nν = {nu_closed_form(name, slope):.2f}; "
            f"ratios {r.min():.2f}…{r.max():.2f}"
        )
        ax.set_xticks([]), ax.set_yticks([])
        ax.grid(False)
        for b in range(1, m):
            ax.axhline(b * n - 0.5, color="w", lw=0.5), ax.axvline(b * n - 0.5, color="w", lw=0.5)
    axes.flat[-1].axis("off")
    fig.colorbar(im, ax=axes.flat[-1], fraction=0.6, shrink=0.9, extend="min", label="Σ̃ entry")
    return fig


def fixed_layer_deviation(
    ns: np.ndarray, rms: Mapping[str, Mapping[str, Any]], amplitude: Mapping[str, float]
) -> Any:
    """RMS deviation of the off-diagonal ratios from ν against n, log-log, one panel per input kind
    (``rms``: input label → activation label → (len(ns), layers), or the
    :func:`layerwise.studies.ch01.ratio_deviation_fit` dict holding it as ``rms``); points the mean
    over layers ± their SD, faint dots the layers, lines the i.i.d. prediction
    ``amplitude[activation]``/√n (left panel only)."""
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.6), sharey=True)
    nf = np.geomspace(ns.min(), ns.max(), 60)
    for ax, (inp, by_act) in zip(axes, rms.items(), strict=False):
        for k, (act, R) in enumerate(by_act.items()):
            R = np.asarray(R["rms"] if isinstance(R, Mapping) else R)
            ax.plot(np.repeat(ns, R.shape[1]), R.ravel(), ".", color=f"C{k}", alpha=0.3, ms=3)
            ax.errorbar(ns, R.mean(1), yerr=R.std(1), fmt="o", color=f"C{k}", capsize=3, label=act)
            if ax is axes[0]:
                ax.plot(nf, amplitude[act] / np.sqrt(nf), color=f"C{k}", lw=1, ls="--")
        ax.set_xscale("log", base=2), ax.set_yscale("log")
        ax.set_xlabel("input dimension n"), ax.set_title(inp)
    axes[0].set_ylabel(r"RMS of $r_{ij} - \nu$ over unit pairs")
    axes[0].plot([], [], "k--", lw=1, label="(β−α)²/(2π√n)")
    axes[0].legend()
    return fig


def footnote3_error(rows: Sequence[np.ndarray], cases: Sequence[Sequence[Any]]) -> Any:
    """Footnote 3 in two norms, log-log against n: left the relative Frobenius error, right the
    error along p_j; Monte-Carlo ± 3 SE (from the squared errors and their SEs, columns 1–2 and 4–5
    of each ``rows`` array) and the closed forms √2(β−α)²/(2π√n) and (β−α)²/(2π) (lines, smooth
    in n); the legend sits under the right panel's constant errors."""
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.6), sharey=True)
    for k, ((name, slope), R) in enumerate(zip(cases, rows, strict=False)):
        al, be = eta_levels(name, slope)
        ns = np.geomspace(R[0, 0], R[-1, 0], 60)
        for ax, col, curve in (
            (axes[0], 1, np.sqrt(2) * (be - al) ** 2 / (2 * np.pi * np.sqrt(ns))),
            (axes[1], 4, np.full_like(ns, (be - al) ** 2 / (2 * np.pi))),
        ):
            err = np.sqrt(np.clip(R[:, col], 1e-12, None))
            ax.errorbar(
                R[:, 0],
                err,
                yerr=3 * R[:, col + 1] / (2 * err),
                fmt="o",
                color=f"C{k}",
                capsize=3,
                label=f"{activation_label(name, slope)} (MC ± 3 SE)",
            )
            ax.plot(ns, curve, color=f"C{k}", lw=1)
    for ax, title in zip(
        axes,
        (
            r"Frobenius: $\|E[\eta_i\eta_j YY^\top] - \nu I\|_F\,/\,\|I\|_F$",
            r"along $p_j$: $\|(E[\eta_i\eta_j YY^\top] - \nu I)\,p_j\|$",
        ),
        strict=False,
    ):
        ax.set_xscale("log", base=2), ax.set_yscale("log")
        ax.set_xlabel("input dimension n"), ax.set_title(title)
    axes[0].set_ylabel("error of Eq. 13 for a fixed layer")
    # below the right panel's constant errors, ≥ (β−α)²/(2π) ≈ 0.2 for every activation shown,
    # the panel is empty down to the smallest Frobenius error
    axes[1].legend(*axes[0].get_legend_handles_labels(), loc="lower center")
    return fig


def intermediate_capacities(
    res: Mapping[str, np.ndarray],
    cases: Sequence[Sequence[Any]],
    inputs: Sequence[str],
    nu_eq13: Sequence[float],
) -> Any:
    """Left: distance ‖κ_Eq14(ν) − κ_emp‖ against ν (mean over layers) for each input kind and
    activation, and Eq. 13's ν as a dotted line. Right: κ_i of the first i.i.d. ReLU layer: Eq. 18
    (ν = 1), Eq. 14 at Eq. 13's ν, exact fixed layer, empirical, Eq. 25 (ν = 0)."""
    nus, curve, emp = res["nus"], res["curve"], res["emp"]
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.6))
    ax = axes[0]
    for a, inp in enumerate(inputs):
        for c, case in enumerate(cases):
            d = np.linalg.norm(curve[a] - emp[a, c][:, None, :], axis=-1).mean(
                0
            )  # (draws, grid) → grid
            col, ls = f"C{c}", "-" if a == 0 else "--"
            ax.plot(nus, d, color=col, ls=ls, lw=1.2, label=f"{activation_label(*case)}, {inp}")
    for c, v in enumerate(nu_eq13):
        ax.axvline(v, color=f"C{c}", ls=":", lw=1)
    (
        ax.set_xlabel("ν in Eq. 14"),
        ax.set_ylabel(r"$\|\kappa_{\mathrm{Eq.\,14}}(\nu) - \kappa_{\mathrm{emp}}\|_2$"),
    )
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2))
    ax = axes[1]
    n = emp.shape[-1]
    i13 = int(np.argmin(np.abs(nus - nu_eq13[0])))
    bars = [
        ("Eq. 18 (ν = 1)", curve[0, 0, -1]),
        (f"Eq. 14, ν = {nu_eq13[0]:.2f}", curve[0, 0, i13]),
        ("exact fixed layer", res["exact"][0, 0, 0]),
        ("empirical", emp[0, 0, 0]),
        ("Eq. 25 (ν = 0)", res["eq25"][0, 0]),
    ]
    w = 0.8 / len(bars)
    for k, (label, v) in enumerate(bars):
        ax.bar(np.arange(n) + (k - 2) * w, v, w, label=label, color=f"C{k}")
    top = max(float(np.max(v)) for _, v in bars)
    ax.set_ylim(0, 1.15 * top), ax.set_xticks(np.arange(0, n, max(1, n // 8)))
    ax.set_xlabel("input i"), ax.set_ylabel(r"capacity $\kappa_i$")
    ax.legend(ncol=2, loc="upper center", bbox_to_anchor=(0.4, -0.2))
    return fig


def redundancy(sv: Mapping[str, Mapping[str, np.ndarray]]) -> Any:
    """Singular values (normalised by the largest) of the two-layer Jacobians, one panel per
    activation (``sv``: activation label → {"true": …, "augmented (η frozen)": …}), log scale, index
    sorted."""
    fig, axes = plt.subplots(1, len(sv), figsize=(7.5, 3.4), sharey=True)
    for ax, (act, d) in zip(np.atleast_1d(axes), sv.items(), strict=False):
        for k, (label, s) in enumerate(d.items()):
            ax.semilogy(
                np.arange(1, len(s) + 1),
                np.clip(s, 1e-18, None),
                "o" if k == 0 else "x",
                ms=4,
                color=f"C{k}",
                label=label,
            )
        ax.axhline(1e-9, color="gray", lw=0.8, ls=":")
        ax.set_title(act), ax.set_xlabel("index of singular value")
    np.atleast_1d(axes)[0].set_ylabel(r"$\sigma_k\,/\,\sigma_1$"), np.atleast_1d(axes)[0].legend()
    return fig


def pseudo_random_capacities(
    kappa_eq25: np.ndarray,
    kappa_last: Sequence[Estimate],
    sizes: np.ndarray,
    errors: np.ndarray,
    fit: Mapping[str, float],
) -> Any:
    """Left: κ_i of Eq. 25 against the empirical capacities at the largest N (``kappa_last``, one
    Estimate per input; ± 3 SE), as bars.
    Right: the distance to Eq. 25 against N per replicate, their mean, and the N^{-1/2} guide.
    Each legend sits in headroom above the data."""
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.4))
    ax = axes[0]
    n, w = len(kappa_eq25), 0.38
    ax.bar(np.arange(n) - w / 2, kappa_eq25, w, label=r"Eq. 25: $(P\circ P)\,\kappa^\varphi$")
    ax.bar(
        np.arange(n) + w / 2,
        [e.mean for e in kappa_last],
        w,
        yerr=[3 * e.se for e in kappa_last],
        capsize=3,
        label=f"empirical, N = {int(sizes[-1]):,} (± 3 SE)",
    )
    ax.set_xlabel("input i"), ax.set_ylabel(r"capacity $\kappa_i$")
    legend_in_headroom(ax, ncols=1)
    ax = axes[1]
    ax.loglog(np.repeat(sizes, errors.shape[1]), errors.ravel(), ".", alpha=0.5, label="replicates")
    ax.loglog(
        sizes,
        errors.mean(1),
        "o-",
        label=f"mean; slope {fit['slope']:.2f} ± {fit['slope_se']:.2f}".replace("-", "−"),
    )
    ax.loglog(
        sizes,
        errors.mean(1)[0] * (sizes / sizes[0]) ** -0.5,
        "k--",
        lw=1,
        label=r"$\propto N^{-1/2}$",
    )
    (
        ax.set_xlabel("samples N"),
        ax.set_ylabel(r"$\|\kappa_{\mathrm{emp}} - (P\circ P)\,\kappa^\varphi\|_2$"),
    )
    legend_in_headroom(ax, ncols=1)
    clear_legends(fig)
    return fig


def smooth_nu(
    q_fine: np.ndarray, quad: Mapping[str, np.ndarray], mc: Mapping[str, np.ndarray]
) -> Any:
    """ν(f; q) of smooth activations: quadrature on ``q_fine`` (lines) and Monte-Carlo rows (q, ν,
    SE) ± 3 SE (points), one colour per activation in the order of ``quad``; ReLU's ½ and 1
    dotted."""
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for k, name in enumerate(quad):
        ax.plot(q_fine, quad[name], color=f"C{k}", label=f"{name} (quadrature)")
        R = mc[name]
        ax.errorbar(R[:, 0], R[:, 1], yerr=3 * R[:, 2], fmt="o", ms=3.5, color=f"C{k}", capsize=2)
    ax.axhline(1, color="gray", lw=0.8, ls=":"), ax.axhline(0.5, color="gray", lw=0.8, ls=":")
    ax.text(0.011, 0.46, "ReLU, ν = ½", color="gray")
    (
        ax.set_xscale("log"),
        ax.set_xlabel("pre-activation variance q"),
        ax.set_ylabel("ν(f; q) = (E η)² / E η²"),
    )
    ax.set_ylim(0, 1.05)
    ax.legend()
    return fig


def pair_law(
    pairs: Mapping[str, tuple[np.ndarray, np.ndarray]],
    ratios: Mapping[str, Mapping[float, tuple[float, float]]],
) -> Any:
    """Left: measured block ratios r_ij against the arcsin law E[η_iη_j] for every layer and pair
    (``pairs``: input label → (law, r)), with the identity. Right: the law's residual mean square
    over the idealisation's against ν (``ratios``: input label → {ν: (ratio, se)}), ± 3 SE."""
    fig, axes = plt.subplots(1, 2, figsize=(6.9, 3.6))
    ax = axes[0]
    for k, (label, (law, r)) in enumerate(pairs.items()):
        ax.plot(law, r, ".", ms=3, alpha=0.5, color=f"C{k}", label=label)
    lo = min(float(np.min(v)) for pr in pairs.values() for v in pr)
    hi = max(float(np.max(v)) for pr in pairs.values() for v in pr)
    ax.plot([lo, hi], [lo, hi], "k--", lw=1, label="r = law")
    (
        ax.set_xlabel(r"law $\nu + (\beta-\alpha)^2 \arcsin\rho_{ij}\,/\,2\pi$"),
        ax.set_ylabel(r"measured $r_{ij}$"),
    )
    legend_in_headroom(ax, ncols=1)
    ax = axes[1]
    for k, (label, d) in enumerate(ratios.items()):
        nus = np.array(sorted(d))
        v = np.array([d[x] for x in nus])
        ax.errorbar(nus, v[:, 0], yerr=3 * v[:, 1], fmt="o-", color=f"C{k}", capsize=3, label=label)
    ax.axhline(1.0, color="0.5", ls=":", lw=1, label="idealisation (every pair = ν)")
    ax.set_xlabel("ν of Eq. 13"), ax.set_ylabel("residual, law / ideal")
    ax.set_ylim(-0.05, 1.6), ax.legend(loc="upper left")
    clear_legends(fig)
    return fig


def width_gap(ns: np.ndarray, gaps: Mapping[str, np.ndarray]) -> Any:
    """Intermediate-ν gap ‖κ_exact − κ_Eq14(ν)‖/span of fixed layers against the input dimension n
    (``gaps``: activation label → (len(ns), draws)), mean ± SD over layers, log-log axes."""
    fig, ax = plt.subplots(figsize=(5.0, 3.8))
    for k, (label, g) in enumerate(gaps.items()):
        g = np.asarray(g)
        ax.errorbar(
            ns * (1 + 0.03 * (k - 2)),
            g.mean(1),
            yerr=g.std(1),
            fmt="o-",
            capsize=3,
            color=f"C{k}",
            label=label,
        )
    ax.plot(ns, 0.3 * np.sqrt(ns[0] / ns), "k:", lw=1, label=r"$\propto n^{-1/2}$")
    ax.set_xscale("log"), ax.set_yscale("log")
    ax.set_xticks(ns, [f"{int(v)}" for v in ns]), ax.minorticks_off()
    ax.set_xlabel("input dimension n"), ax.set_ylabel("gap / span")
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))
    return fig
