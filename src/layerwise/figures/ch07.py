"""Figures of Chapter 7 (mean-field signal propagation and transient chaos): one function per
figure, each taking the arrays the chapter computed and returning the matplotlib Figure.

Poole et al. 2016 (Figs. 1–4) and Schoenholz et al. 2017 (Figs. 1, 2, 5); nothing here decides a
claim."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..plotting import clear_legends, legend_in_headroom, tight_layout


def length_map(q: np.ndarray, curves: Mapping[float, Mapping[str, Any]]) -> Any:
    """Left: V(q) per σ_w with its fixed point q* and the identity; right: the iterates from each
    start (log scale). ``curves[σ_w]`` holds ``V`` (on ``q``), ``q_star`` and ``iterates``
    (starts × layers), as :func:`layerwise.studies.ch07.length_map_convergence` returns them."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.5))
    for (sw, cv), color in zip(curves.items(), sns.color_palette()):
        axes[0].plot(q, cv["V"], color=color, label=rf"$\sigma_w={sw}$, $q^*={cv['q_star']:.2f}$")
        axes[0].plot(cv["q_star"], cv["q_star"], "o", color=color)
        for it in cv["iterates"]:
            axes[1].plot(np.arange(len(it)), it, "-o", ms=3, color=color, alpha=0.8)
    axes[0].plot(q, q, "k--", lw=1, label="identity")
    axes[0].set(
        xlabel=r"$q^{l-1}$",
        ylabel=r"$q^l = \mathcal{V}(q^{l-1})$",
        title=r"length map, "
        r"$\sigma_b = "
        r"0.3$",
    )
    legend_in_headroom(axes[0])
    axes[1].set(
        xlabel="layer $l$", ylabel="$q^l$", yscale="log", title="iterates from several $q^0$"
    )
    tight_layout(fig)
    clear_legends(fig)
    return fig


def maps_vs_networks(
    layers: np.ndarray,
    labels: Sequence[str],
    q_map: Sequence[np.ndarray],
    c_map: Sequence[np.ndarray],
    q_mean: Sequence[np.ndarray],
    q_se: Sequence[np.ndarray],
    c_mean: Sequence[np.ndarray],
    c_se: Sequence[np.ndarray],
) -> Any:
    """Per setting k (``labels[k]``): the maps' q^l and c^l (lines) and the networks' means ± 2 s.e.
    (dots); left the length (log scale), right the correlation, one legend below."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.8))
    for k, color in enumerate(sns.color_palette(n_colors=len(labels))):
        axes[0].plot(layers, q_map[k], color=color, lw=1)
        axes[0].errorbar(
            layers, q_mean[k], yerr=2 * q_se[k], fmt="o", ms=3, color=color, label=labels[k]
        )
        axes[1].plot(layers, c_map[k], color=color, lw=1)
        axes[1].errorbar(layers, c_mean[k], yerr=2 * c_se[k], fmt="o", ms=3, color=color)
    axes[0].set(xlabel="layer $l$", ylabel="$q^l$", yscale="log", title="length")
    axes[1].set(xlabel="layer $l$", ylabel="$c^l$", title="correlation")
    fig.legend(
        *axes[0].get_legend_handles_labels(),
        ncol=3,
        loc="lower center",
        bbox_to_anchor=(0.5, -0.02),
    )
    tight_layout(fig, rect=(0, 0.12, 1, 1))
    return fig


def correlation_map(
    c: np.ndarray,
    curves: Mapping[float, np.ndarray],
    chi1: Mapping[float, float],
    c_star: Mapping[float, float],
) -> Any:
    """The correlation map ``curves[σ_w]`` on ``c`` with its stable fixed point c* (dot), the
    identity dashed; the legend gives χ₁ and c* per σ_w."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    fig, ax = plt.subplots(figsize=(5, 4))
    for (sw, C), color in zip(curves.items(), sns.color_palette()):
        ax.plot(
            c,
            C,
            color=color,
            label=rf"$\sigma_w={sw}$: $\chi_1={chi1[sw]:.3f}$, "
            rf"$c^*={c_star[sw]:.3f}$",
        )
        ax.plot(c_star[sw], c_star[sw], "o", color=color)
    ax.plot(c, c, "k--", lw=1)
    ax.set(xlabel="$c^{l-1}$", ylabel="$c^l$", title=r"correlation map, $\sigma_b=0.3$")
    ax.legend()
    return fig


def phase_diagram(pdg: Mapping[str, np.ndarray], settings: Sequence[tuple[float, float]]) -> Any:
    """ln χ₁ over (σ_w², σ_b²) with the χ₁ = 1 contour, every fourth point of the root-finder's
    critical line, and stars at ``settings`` ((σ_w², σ_b²) pairs); ``pdg`` as
    :func:`layerwise.studies.ch07.phase_diagram` returns it."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 4.2))
    im = ax.pcolormesh(
        pdg["sigma_w2"],
        pdg["sigma_b2"],
        np.log(pdg["chi1"]),
        cmap="vlag",
        vmin=-1,
        vmax=1,
        shading="auto",
    )
    ax.contour(
        pdg["sigma_w2"], pdg["sigma_b2"], pdg["chi1"], levels=[1.0], colors="k", linewidths=1
    )
    ax.plot(
        pdg["critical_sigma_w2"][::4],
        pdg["sigma_b2_line"][::4],
        "o",
        color="k",
        ms=3,
        label=r"root of $\chi_1 = 1$",
    )
    for sw2, sb2 in settings:
        ax.plot(sw2, sb2, "*", ms=10, color="gold", mec="k")
    fig.colorbar(im, ax=ax, label=r"$\ln \chi_1$")
    ax.set(xlabel=r"$\sigma_w^2$", ylabel=r"$\sigma_b^2$", title="ordered (blue) vs chaotic (red)")
    # upper right: beyond the grid, where only the chaotic settings' stars lie (low σ_b²), so the
    # legend covers neither the critical line nor the map
    ax.legend(loc="upper right")
    return fig


def circle_pca(runs: Mapping[float, Mapping[str, np.ndarray]], layers: Sequence[int]) -> Any:
    """A grid of 3-D panels, one row per σ_w and one column per layer of ``layers``: the circle's
    image projected on its top three principal components (``runs[σ_w]["proj_<l>"]``), coloured by
    the input angle ``runs[σ_w]["theta"]``."""
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(7.5, 7.5))
    for i, (sw, r) in enumerate(runs.items()):
        for j, l in enumerate(layers):
            ax = fig.add_subplot(len(runs), len(layers), len(layers) * i + j + 1, projection="3d")
            pr = r[f"proj_{l}"]
            ax.scatter(pr[:, 0], pr[:, 1], pr[:, 2], c=r["theta"], cmap="twilight", s=4)
            ax.plot(*np.vstack([pr, pr[:1]]).T[:3], lw=0.5, color="0.3")
            ax.set_title(rf"$\sigma_w={sw}$, layer {l}")
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_zticks([])  # noqa: E702
    return fig


def circle_length(
    layers: np.ndarray,
    length_tangent: Mapping[float, np.ndarray],
    length_chord: Mapping[float, np.ndarray],
    chi1: Mapping[float, float],
    pca_var: Mapping[float, np.ndarray],
) -> Any:
    """Left: per σ_w the mean exact (tangent) length over networks (solid), the polygon's (dotted)
    and ℓ⁰·√χ₁^l (dashed), log scale; right: the mean share of variance in the top two principal
    components. Lengths are (nets, layers); ``pca_var[σ_w]`` is (nets, layers, components)."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.6))
    for sw, color in zip(length_tangent, sns.color_palette()):
        lt, lc = length_tangent[sw], length_chord[sw]
        axes[0].plot(
            layers,
            lt.mean(0),
            "-o",
            ms=3,
            color=color,
            label=rf"$\sigma_w={sw}$ exact "
            r"(tangent)",
        )
        axes[0].plot(layers, lc.mean(0), ":", color=color, label=rf"$\sigma_w={sw}$ polygon")
        axes[0].plot(layers, lt.mean(0)[0] * np.sqrt(chi1[sw]) ** layers, "--", lw=1, color=color)
        pv = pca_var[sw].mean(0)
        axes[1].plot(layers, pv[:, :2].sum(1), "-o", ms=3, color=color, label=rf"$\sigma_w={sw}$")
    axes[0].set(
        yscale="log", xlabel="layer $l$", ylabel="length of the curve", title="length vs depth"
    )
    legend_in_headroom(axes[0])
    axes[1].set(
        xlabel="layer $l$",
        ylabel="variance in top 2 PCs",
        ylim=(0, 1.02),
        title="how flat the curve stays",
    )
    legend_in_headroom(axes[1])
    tight_layout(fig)
    clear_legends(fig)
    return fig


def depth_scale_sweep(
    curves: Sequence[Mapping[str, np.ndarray]],
    sweep: Mapping[str, np.ndarray],
    rates: Mapping[str, np.ndarray],
) -> Any:
    """Depth scales measured on networks across the transition (Schoenholz et al. 2017, Figs. 2–3),
    one row per σ_b². Left: ξ_c and |ξ_∇| (lines, log scale) and the networks' 1/|rate| (dots);
    right: the rates 1/ξ_c and 1/ξ_∇ themselves (lines) against the measured ones (± 2 s.e.).
    ``curves[i]``: :func:`layerwise.studies.ch07.depth_scale_curve` at ``sweep["sigma_b2"][i]``;
    ``rates``: :func:`layerwise.meanfield.sweep_rates`."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    col_c, col_g = sns.color_palette(n_colors=2)
    fig, axes = plt.subplots(len(curves), 2, figsize=(7.5, 3.1 * len(curves)), squeeze=False)
    sw = np.asarray(sweep["sigma_w2"])
    for i, cv in enumerate(curves):
        sb2 = float(sweep["sigma_b2"][i])
        x = np.asarray(cv["sigma_w2"])
        r_c, r_g = -np.log(cv["chi_c"]), -np.log(cv["chi1"])
        ax_l, ax_r = axes[i]
        ax_l.plot(x, 1 / r_c, color=col_c, label=r"$\xi_c$")
        ax_l.plot(x, 1 / np.abs(r_g), color=col_g, ls="--", label=r"$|\xi_\nabla|$")
        ax_r.plot(x, r_c, color=col_c, label=r"$1/\xi_c = -\ln\chi_c$")
        ax_r.plot(x, r_g, color=col_g, ls="--", label=r"$1/\xi_\nabla = -\ln\chi_1$")
        for key, color, mk in (("rate_c", col_c, "o"), ("rate_grad", col_g, "s")):
            m, se = rates[key][i], rates[key + "_se"][i]
            ax_r.errorbar(
                sw, m, yerr=2 * se, fmt=mk, ms=3.5, color=color, mfc="white" if mk == "s" else color
            )
            ok = (
                np.abs(m) > 2 * se
            )  # a depth is drawn where the measured rate is resolved from zero
            ax_l.plot(
                sw[ok],
                1 / np.abs(m[ok]),
                mk,
                ms=3.5,
                color=color,
                mfc="white" if mk == "s" else color,
            )
        for ax in (ax_l, ax_r):
            ax.axvline(float(cv["critical"]), color="0.5", ls=":", lw=1)
        ax_r.axhline(0, color="0.7", lw=0.8)
        ax_l.set(
            yscale="log",
            ylim=(0.8, 400),
            xlabel=r"$\sigma_w^2$",
            ylabel="depth scale (layers)",
            title=rf"$\sigma_b^2 = {sb2:g}$",
        )
        ax_r.set(
            xlabel=r"$\sigma_w^2$",
            ylabel="decay rate per layer",
            title=rf"rates, $\sigma_b^2 = {sb2:g}$",
        )
    axes[0, 0].legend(loc="upper right")
    axes[0, 1].legend(loc="lower left")
    tight_layout(fig)
    return fig


def trainability(
    sigma_w2: np.ndarray,
    depths: np.ndarray,
    accuracy: np.ndarray,
    sw_fine: np.ndarray,
    xi_fine: np.ndarray,
    l_max: np.ndarray,
    k_found: float | None,
    steps: int,
) -> Any:
    """Heat map of training ``accuracy`` (σ_w², depth) on log depth, 6 ξ_c (Schoenholz et al.)
    and, when given, ``k_found`` ξ_c along ``sw_fine``, and the deepest trainable depth per σ_w²
    (dots, where > 0)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    im = ax.pcolormesh(
        sigma_w2, depths, accuracy.T, cmap="rocket", vmin=0.1, vmax=1, shading="nearest"
    )
    ax.plot(sw_fine, 6 * xi_fine, color="w", ls="--", label=r"$6\,\xi_c$ (Schoenholz et al.)")
    if k_found is not None:
        ax.plot(
            sw_fine,
            k_found * xi_fine,
            color="cyan",
            label=rf"${k_found:.1f}\,\xi_c$ (fitted "
            r"here)",
        )
    ax.plot(sigma_w2[l_max > 0], l_max[l_max > 0], "o", color="cyan", ms=4)
    ax.set(
        yscale="log",
        ylim=(depths[0] * 0.8, depths[-1] * 1.25),
        xlabel=r"$\sigma_w^2$",
        ylabel="depth $L$",
        title=f"training accuracy after {steps} SGD steps",
    )
    fig.colorbar(im, ax=ax, label="training accuracy")
    # on the map: white text in a dark box, or the dark text vanishes into the dark cells (and the
    # white 6 ξ_c sample into a light box)
    ax.legend(
        loc="upper right",
        frameon=True,
        facecolor="0.15",
        edgecolor="none",
        framealpha=0.85,
        labelcolor="white",
    )
    return fig


def authors_figures(
    differences: Mapping[str, np.ndarray],
    dots: Mapping[str, np.ndarray],
    sigma_b: np.ndarray,
    lines: Mapping[str, np.ndarray],
) -> Any:
    """Left and middle: colour entry read in each cell of the authors' panels minus ours
    (``differences[title]``, 40 × 40, σ_w rows bottom-up, NaN unread); right: the dots of their
    χ₁ = 1 contour (``dots[panel]``, (σ_b, σ_w) rows) over the curves ``lines[label]`` on
    ``sigma_b``."""
    import matplotlib
    import matplotlib.pyplot as plt
    import seaborn as sns

    fig, axes = plt.subplots(
        1, 3, figsize=(7.5, 2.9), gridspec_kw={"width_ratios": [1, 1, 1.15]}, layout="constrained"
    )
    edges_b, edges_w = np.linspace(0, 4, 41), np.linspace(1, 5, 41)
    for ax, (title, diff) in zip(axes[:2], differences.items()):
        cmap = matplotlib.colormaps["RdBu_r"].with_extremes(bad="0.75")  # grey: not read
        im = ax.pcolormesh(edges_b, edges_w, np.ma.masked_invalid(diff), cmap=cmap, vmin=-3, vmax=3)
        ax.set(xlabel=r"$\sigma_b$", ylabel=r"$\sigma_w$", title=title, xticks=[0, 2, 4])
    fig.colorbar(
        im, ax=axes[:2], label="read − ours (colour steps)", ticks=[-3, 0, 3], shrink=0.9, pad=0.03
    )
    ax = axes[2]
    for (label, line), color in zip(lines.items(), ["k", sns.color_palette()[3]]):
        ax.plot(sigma_b, line, color=color, lw=1.2, label=label)
    for (panel, pts), marker in zip(dots.items(), ["o", "s"]):
        ax.plot(
            pts[:, 0],
            pts[:, 1],
            marker,
            ms=3,
            mfc="none",
            label=f"Fig. {panel[3:].upper()}",
            color=sns.color_palette()[0],
        )
    ax.set(
        xlabel=r"$\sigma_b$", ylabel=r"$\sigma_w$", xlim=(0, 4), ylim=(1, 5), title=r"$\chi_1 = 1$"
    )
    legend_in_headroom(ax)
    clear_legends(fig)
    return fig
