"""Figures of Chapter 2, capacity diffusion through depth (Donier 2019, §3–4; Luo et al. 2016;
Balduzzi et al. 2017): one function per figure, each taking the arrays the chapter computed
(:mod:`layerwise.diffusion`) and returning the Figure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from ..diffusion import heat_kernel
from ..plotting import clear_legends, depth_colors, legend_above, legend_in_headroom
from ..stats import mean_se

ARCHS = ("plain", "residual")


def residual_diffusion(
    mean_profile: np.ndarray,
    profile0: np.ndarray,
    m2: np.ndarray,
    mu: np.ndarray,
    diffusion: float,
    ts: Sequence[float],
) -> Any:
    """Left: capacity profiles (layers + 1, ring) at t = k/L around the source (the ring's centre),
    mean over networks (dots), network 0 (thin lines) and Eq. 34 (black). Right: second moment
    (mean ± 3 SE over networks), 2𝒟t and the mean position against the number of layers
    traversed."""
    L, ring = mean_profile.shape[0] - 1, mean_profile.shape[1]
    c0, x, k_layers = ring // 2, np.arange(ring), np.arange(L + 1)
    xf = np.linspace(-35, 35, 701)
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.6))
    ax = axes[0]
    for c, t in zip(depth_colors(len(ts) + 1), ts, strict=False):
        k = int(round(t * L))
        ax.plot(x - c0, mean_profile[k], "o", ms=2.5, color=c, label=f"t = {t}")
        ax.plot(x - c0, profile0[k], "-", lw=0.6, color=c, alpha=0.6)
        ax.plot(xf, heat_kernel(xf, 0, diffusion, t), "k-", lw=0.8)
    (
        ax.set_xlim(-35, 35),
        ax.set_xlabel("position − output unit"),
        ax.set_ylabel(r"capacity $\kappa^l(x)$"),
    )
    ax.legend()
    ax = axes[1]
    m2_mean, m2_se = mean_se(m2)
    ax.fill_between(
        k_layers, m2_mean - 3 * m2_se, m2_mean + 3 * m2_se, alpha=0.3, label="mean ± 3 SE"
    )
    ax.plot(k_layers, m2_mean, label="second moment")
    ax.plot(k_layers, 2 * diffusion * k_layers / L, "k--", lw=1, label=r"$2\mathcal{D}t$, Eq. 34")
    ax.plot(k_layers, mu.mean(0), label="mean position")
    ax.set_xlabel("layers traversed L − l"), ax.set_ylabel("sites²  /  sites"), ax.legend()
    return fig


def effective_receptive_field(
    g2: Mapping[str, Sequence[np.ndarray]],
    depths: Sequence[int],
    var: Mapping[str, np.ndarray],
    fits: Mapping[str, Any],
    var_per_layer: Mapping[str, float],
) -> Any:
    """Top: normalised mean squared gradient profiles (``g2[arch]``: one (nets, length) array per
    depth) for plain and residual nets (dots) against the capacity network's Gaussian (lines).
    Bottom: ERF width √variance (``var[arch]``, (depths, nets)) ± 3 SE against depth, log-log,
    with the fitted exponent (``fits[arch]``, an Estimate) and √(variance per layer · depth)."""
    depths_f = np.array(depths, float)
    fig, axd = plt.subplot_mosaic([["plain", "residual"], ["width", "width"]], figsize=(7.5, 6.2))
    for j, arch in enumerate(ARCHS):
        ax, vpl, f = axd[arch], var_per_layer[arch], fits[arch]
        for c, d, g in zip(depth_colors(len(depths) + 1), depths, g2[arch], strict=False):
            prof = g.mean(0) / g.mean(0).sum()
            xs = np.arange(g.shape[-1]) - g.shape[-1] // 2
            ax.plot(xs, prof, "o", ms=2.5, color=c, label=f"depth {d}")
            xf = np.linspace(xs[0], xs[-1], 20 * len(xs))
            ax.plot(xf, heat_kernel(xf, 0, vpl / 2, d), "-", lw=0.8, color=c)
        ax.set_xlim(-20, 20), ax.set_title(f"{arch}")
        ax.set_xlabel("input position"), ax.legend()
        vm, vse = mean_se(var[arch], axis=1)
        axd["width"].errorbar(
            depths_f,
            np.sqrt(vm),
            yerr=3 * vse / (2 * np.sqrt(vm)),
            fmt="o",
            color=f"C{j}",
            capsize=3,
            label=rf"{arch}: width $\propto$ depth$^{{{f.mean:.3f} \pm {f.se:.3f}}}$",
        )
        axd["width"].plot(
            depths_f,
            np.sqrt(vpl * depths_f),
            "--",
            color=f"C{j}",
            lw=1,
            label=f"{arch}: capacity √({vpl:.3g}·depth)",
        )
    axd["plain"].set_ylabel("normalised mean squared gradient")
    axd["width"].set_xscale("log", base=2), axd["width"].set_yscale("log", base=2)
    axd["width"].set_xlabel("depth"), axd["width"].set_ylabel("ERF width (std, positions)")
    axd["width"].legend()
    return fig


def gradients_vs_capacity(pr: Mapping[str, np.ndarray], depth: int) -> Any:
    """Per architecture, network 0's mean squared input-gradient per position with pseudo-random
    (``{arch}_pseudo_random_g2``) and ReLU (``{arch}_relu_g2``) activations against the capacity
    network D₁⋯D_L(a∘a) (``{arch}_pseudo_random_pred``), log scale; one legend below the panels."""
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.5))
    for ax, arch in zip(axes, ARCHS, strict=False):
        pred = pr[f"{arch}_pseudo_random_pred"]
        xs = np.arange(pred.shape[-1]) - pred.shape[-1] // 2
        for act, mk in (("pseudo_random", "o"), ("relu", "x")):
            ax.plot(xs, pr[f"{arch}_{act}_g2"][0], mk, ms=3.5, label=f"{act.replace('_', '-')}")
        ax.plot(xs, pred[0], "k-", lw=1, label=r"$D_1\cdots D_L\,(a\circ a)$")
        ax.set_yscale("log"), ax.set_ylim(pred[0][pred[0] > 0].min() / 10, None)
        ax.set_title(f"{arch}, depth {depth} (network 1)"), ax.set_xlabel("input position")
    axes[0].set_ylabel("mean squared input-gradient")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=3)
    return fig


def shattering(
    Ls: np.ndarray,
    w: Mapping[str, np.ndarray],
    corr: Mapping[str, np.ndarray],
    grad0: Mapping[str, np.ndarray],
    depths: Sequence[int],
) -> Any:
    """Top left: straight-path weights against depth (``w``: w_res, w_res_pred, w_plain3, w_plain5).
    Top right: lag-1 gradient correlation (``corr[arch]``, (depths, nets)) ± 3 SE against depth.
    Bottom: one network's standardised gradient on [−2, 2] at the largest depth
    (``grad0[arch]``). The straight-path legend sits above its panel, the others in headroom
    above the data."""
    fig, axd = plt.subplot_mosaic([["wmax", "corr"], ["grads", "grads"]], figsize=(7.5, 6.2))
    ax = axd["wmax"]
    ax.semilogy(Ls, w["w_res"], "o-", ms=3, label="residual")
    ax.semilogy(Ls, w["w_res_pred"], "k:", lw=1, label="Eq. 36")
    ax.semilogy(Ls, w["w_plain3"], "s-", ms=3, label="plain, r = 3")
    ax.semilogy(Ls, w["w_plain5"], "^-", ms=3, label="plain, r = 5")
    (
        ax.set_ylim(1e-30, 2),
        ax.set_xscale("log"),
        ax.set_xlabel("depth L"),
        ax.set_ylabel(r"straight-path weight $w_{\max}$"),
    )
    legend_above(ax, ncols=2)  # weights above 1 mean nothing: no headroom on this axis
    ax = axd["corr"]
    for j, arch in enumerate(ARCHS):
        cm, cse = mean_se(corr[arch], axis=1)
        ax.errorbar(
            depths, cm, yerr=3 * cse, fmt="o-", capsize=3, color=f"C{j}", label=f"{arch} (± 3 SE)"
        )
    ax.set_xlabel("depth"), ax.set_ylabel(r"corr$(g(x_k), g(x_{k+1}))$")
    legend_in_headroom(ax)
    ax = axd["grads"]
    for j, arch in enumerate(ARCHS):
        g = grad0[arch]
        xg = np.linspace(-2, 2, len(g))
        ax.plot(
            xg,
            (g - g.mean()) / g.std() + 4 * j,
            lw=0.8,
            color=f"C{j}",
            label=f"{arch}, depth {depths[-1]}",
        )
    ax.set_xlabel("input x"), ax.set_ylabel("standardised df/dx (offset)")
    legend_in_headroom(ax)
    clear_legends(fig)
    return fig


def drift_limit(dl: Mapping[str, Any], show: Sequence[int]) -> Any:
    """Left: the profiles (I + Δ/L)^L δ for the depths ``show`` (dots), exp(Δ)δ (Eq. 30, crosses)
    and the drifting Gaussian of Eq. 32 (smooth black line), around the ring's centre. Right: the L1
    distance to exp(Δ)δ against ε = 1/L (log-log) with the line of slope 1 through the last
    point."""
    layers, profs = np.asarray(dl["layers"]), np.asarray(dl["profiles"])
    ring = profs.shape[1]
    xs = np.arange(ring) - ring // 2
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.4))
    ax = axes[0]
    for c, L in zip(depth_colors(len(show) + 1), show, strict=False):
        ax.plot(xs, profs[list(layers).index(L)], "o", ms=2.5, color=c, label=f"L = {L}")
    ax.plot(xs, dl["profile_expm"], "x", ms=3.5, color="0.4", label="exp(Δ)δ, Eq. 30")
    xf = np.linspace(xs[0], xs[-1], 20 * ring)
    ax.plot(
        xf,
        heat_kernel(xf, 0, float(dl["diffusion"]), 1.0, drift=float(dl["drift"])),
        "k-",
        lw=0.9,
        label="Gaussian, Eq. 32",
    )
    ax.axvline(0, color="0.7", lw=0.6)
    (
        ax.set_xlim(-10, float(dl["drift"]) + 30),
        ax.set_xlabel("position − output unit"),
        ax.set_ylabel("capacity κ⁰(x)"),
    )
    legend_in_headroom(ax)
    ax = axes[1]
    eps = 1.0 / layers
    order = np.argsort(eps)
    ax.loglog(
        eps[order],
        np.asarray(dl["l1_expm"])[order],
        "o-",
        ms=4,
        label=r"$\|(I + \varepsilon\Delta)^{1/\varepsilon}\delta - \exp(\Delta)\,\delta\|_1$",
    )
    ax.loglog(
        eps[order], dl["l1_expm"][order][0] * eps[order] / eps[order][0], "k--", lw=1, label="∝ ε"
    )
    ax.set_xlabel("ε = 1/L"), ax.set_ylabel("L1 distance")
    legend_in_headroom(ax, ncols=1)
    clear_legends(fig)
    return fig


def t_collapse(tc: Mapping[str, np.ndarray], depths: Sequence[int], tau: float) -> Any:
    """Left: ERF variance (``var_{L}``, (nets, L + 1), index l) against t = (L − l)/L, mean ± 3 SE
    over networks, one colour per depth, with the capacity network's (2/3)τt. Right: the normalised
    input-layer profiles (``g2_{L}``, (nets, length)) against the Gaussian of variance (2/3)τ."""
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.4))
    cols = depth_colors(len(depths) + 1)
    for c, L in zip(cols, depths, strict=False):
        v = np.asarray(tc[f"var_{L}"])
        t = (L - np.arange(L + 1)) / L
        vm, vse = mean_se(v)
        order = np.argsort(t)
        axes[0].errorbar(
            t[order],
            vm[order],
            yerr=3 * vse[order],
            fmt="o-",
            ms=2.5,
            lw=0.8,
            capsize=2,
            color=c,
            label=f"L = {L}",
        )
        g = np.asarray(tc[f"g2_{L}"]).mean(0)
        xs = np.arange(len(g)) - len(g) // 2
        axes[1].plot(xs, g / g.sum(), "o", ms=3, color=c, label=f"L = {L}")
    tf = np.linspace(0, 1, 101)
    axes[0].plot(tf, 2 / 3 * tau * tf, "k--", lw=1, label="(2/3)τt, capacity")
    (
        axes[0].set_xlabel("t = (L − l)/L"),
        axes[0].set_ylabel("ERF variance (positions²)"),
        legend_in_headroom(axes[0]),
    )
    xf = np.linspace(-8, 8, 401)
    axes[1].plot(xf, heat_kernel(xf, 0, tau / 3, 1.0), "k-", lw=0.9, label="Eq. 34, t = 1")
    (
        axes[1].set_xlim(-8, 8),
        axes[1].set_xlabel("input position"),
        axes[1].set_ylabel("normalised mean squared gradient"),
    )
    legend_in_headroom(axes[1])
    clear_legends(fig)
    return fig


def differential_layers(summary: Mapping[str, Any]) -> Any:
    """Left: variance of the mean squared sensitivity profile of the forward SDE against t (mean ±
    3 SE over groups of paths), fixed and randomly mirrored kernels, against 2𝒟t (Eqs. 46–47) and
    the whole SDE coefficient Σc_k·t. Right: the mean position against vt and 0."""
    t = summary["t"]
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.4))
    for name, c in zip(("fixed", "mirrored"), ("C0", "C1"), strict=True):
        for ax, key in zip(axes, ("var", "mu"), strict=True):
            m, se = mean_se(summary[f"{name}_{key}"])
            ax.fill_between(t, m - 3 * se, m + 3 * se, color=c, alpha=0.3)
            ax.plot(t, m, "o-", ms=3, color=c, label=f"{name} kernel")
    axes[0].plot(t, 2 * summary["diffusion"] * t, "k--", lw=1, label=r"$2\mathcal{D}t$")
    axes[0].plot(t, summary["sde_total"] * t, "k:", lw=1, label=r"$\Sigma_k c_k\,t$")
    axes[1].plot(t, summary["drift"] * t, "k--", lw=1, label="vt")
    axes[1].axhline(0.0, color="k", lw=0.6)
    axes[0].set_ylabel("variance (sites²)")
    axes[1].set_ylabel("mean position (sites)")
    for ax in axes:
        ax.set_xlabel("t = (L − l)/L")
        ax.legend(loc="upper left")
    return fig


def chain_capacities(table: Mapping[str, np.ndarray], widths: Mapping[str, Any]) -> Any:
    """Per depth (one panel each): the directly computed input capacities of every network and
    activation (``{act}_{name}_kappa``) against the capacity network's (``{name}_pred``), with
    the diagonal; one legend below the panels."""
    fig, axes = plt.subplots(1, len(widths), figsize=(7.5, 3.4))
    markers = {"pseudo_random": "o", "relu": "s", "linear": "^"}
    for ax, name in zip(np.atleast_1d(axes), widths, strict=True):
        pred = table[f"{name}_pred"]
        for act, mk in markers.items():
            key = f"{act}_{name}_kappa"
            if key in table:
                label = act.replace("_", "-")
                ax.plot(pred.ravel(), table[key].ravel(), mk, ms=3, alpha=0.6, label=label)
        top = max(float(pred.max()), max(float(table[k].max()) for k in table if name in k))
        ax.plot([0, top], [0, top], "k-", lw=0.8)
        ax.set_xlabel(r"$D_1\cdots D_L\,\kappa^\varphi$")
        ax.set_title(f"{len(widths[name])} layers")
    np.atleast_1d(axes)[0].set_ylabel(r"input capacity $\kappa_i$")
    handles = np.atleast_1d(axes)[0].get_legend_handles_labels()
    fig.legend(*handles, loc="outside lower center", ncols=len(markers))
    return fig
