"""Figures of Chapter 8 (information geometry): one function per figure, taking the arrays the
chapter computed (:mod:`layerwise.studies.ch08`) and returning the matplotlib Figure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..plotting import CMAP, depth_colors, legend_in_headroom, plain_log_labels, tight_layout
from ..studies.ch08 import KFAC_STATES, NATURAL_GRADIENTS

#: the label-randomisation protocols (:data:`layerwise.infogeo.PROTOCOLS`) as the legends name them
PROTOCOL_NAMES = {"budget": "fixed budget", "loss": "fixed loss"}

#: float64 machine epsilon; exact zeros are drawn at ε/10 on log axes.
EPS = float(np.finfo(np.float64).eps)


def fisher_rao_identity(
    case: Any, identity: Any, direct: Any, n_params: Any, rel_diff: Any
) -> Figure:
    """Left: the two sides of Liang et al.'s Eq. (3.1), one point per network and kind of labels,
    coloured by ``case``; right: their relative difference against the number of parameters."""
    case, identity, direct = (
        np.asarray(case),
        np.asarray(identity, float),
        np.asarray(direct, float),
    )
    n_params, rel_diff = np.asarray(n_params), np.asarray(rel_diff, float)
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.6))
    cases = list(dict.fromkeys(case))
    colors = dict(zip(cases, plt.rcParams["axes.prop_cycle"].by_key()["color"], strict=False))
    for c in cases:
        d = case == c
        axes[0].scatter(
            identity[d], direct[d], s=14, label=str(c).replace("_", " "), color=colors[c], alpha=0.8
        )
        axes[1].scatter(
            n_params[d], np.maximum(rel_diff[d], EPS / 10), s=14, color=colors[c], alpha=0.8
        )
    lim = [min(direct.min(), identity.min()) / 2, max(direct.max(), identity.max()) * 2]
    axes[0].plot(lim, lim, "k:", lw=1)
    axes[0].set(
        xscale="log",
        yscale="log",
        xlabel="(L+1)² E⟨∂ℓ/∂f, f⟩²  (outputs)",
        ylabel="⟨θ, I(θ) θ⟩  (per-example grads)",
        title="two sides of Eq. (3.1)",
    )
    axes[0].legend()
    axes[1].axhline(EPS, color="k", ls="--", lw=1)
    axes[1].text(n_params.min(), 2 * EPS, "machine ε")
    axes[1].set(
        xscale="log",
        yscale="log",
        xlabel="number of parameters P",
        ylabel="relative difference (floor ε/10)",
        title="round-off vs. broken assumptions",
    )
    tight_layout(fig)
    return fig


def reparametrisation(R: Mapping[str, np.ndarray], sigma: float) -> Figure:
    """Four panels against α for :func:`layerwise.infogeo.reparam_sweep`'s arrays, T_α solid
    and unit-wise dashed (one legend above the panels): invariants, norms, λ_max of the Hessian,
    expected sharpness (noise scale ``sigma``); each panel's quantities keep one colour and marker,
    named in a legend in the panel's headroom."""
    al = R["alphas"]
    i1 = int(np.argmin(np.abs(al - 1)))
    fig, axes = plt.subplots(2, 2, figsize=(7.5, 6.6))
    axes = axes.ravel()
    names = [r"$T_\alpha$", "unit-wise"]
    ls = ["-", "--"]
    c0, c1 = plt.rcParams["axes.prop_cycle"].by_key()["color"][:2]
    for t in range(2):
        first = t == 0  # the quantities are named once; the line style names the rescaling

        def lab(text: str, first: bool = first) -> str | None:
            return text if first else None

        axes[0].plot(
            al, np.maximum(R["dfun"][t], EPS / 10), "o" + ls[t], color=c0, label=lab("function")
        )
        axes[0].plot(
            al,
            np.maximum(np.abs(R["fr"][t] - 1), EPS / 10),
            "s" + ls[t],
            color=c1,
            label=lab(r"$\|\theta\|^2_{\mathrm{fr}}$"),
        )
        axes[1].plot(al, R["l2"][t] / R["l2"][t, i1], "o" + ls[t], color=c0, label=lab("‖θ‖₂"))
        axes[1].plot(
            al,
            R["spec"][t] / R["spec"][t, i1],
            "s" + ls[t],
            color=c1,
            label=lab(r"$\prod_l \|W_l\|_2$"),
        )
        axes[2].plot(al, R["lam"][t], "o" + ls[t], color=c0)
        for key, marker, colour, name in (
            ("iso", "o", c0, "isotropic"),
            ("mult", "s", c1, "∝ |θ|"),
        ):
            axes[3].errorbar(
                al,
                R[key][t],
                yerr=2 * R[f"{key}_se"][t],
                fmt=marker + ls[t],
                color=colour,
                label=lab(name),
            )
    axes[0].set(
        xscale="log",
        yscale="log",
        xlabel="α",
        ylabel="relative change (floor ε/10)",
        title="invariant",
    )
    axes[1].set(xscale="log", yscale="log", xlabel="α", ylabel="relative to α = 1", title="norms")
    axes[2].set(
        xscale="log",
        yscale="log",
        xlabel="α",
        ylabel=r"$\lambda_{\max}$ of the Hessian",
        title="sharpness (Hessian)",
    )
    axes[3].set(
        xscale="log",
        yscale="log",
        xlabel="α",
        ylabel="E L(θ+ν) − L(θ)",
        title=f"expected sharpness, σ = {sigma}",
    )
    styles = [
        plt.Line2D([], [], color="k", ls=s_, label=n) for s_, n in zip(ls, names, strict=True)
    ]
    fig.legend(handles=styles, loc="upper center", ncols=2, bbox_to_anchor=(0.5, 1.0))
    tight_layout(fig, rect=(0, 0, 1, 0.95))
    # the legends go in after the layout, which no longer changes the panels: their headroom
    # holds no data by construction (no plotting.clear_legends pass, a draw of the figure, needed)
    for a in (axes[0], axes[1], axes[3]):
        legend_in_headroom(a)
    return fig


def kfac_heatmaps(K0: Mapping[str, np.ndarray]) -> Figure:
    """|exact Fisher|, |K-FAC| and |difference| on a unit subset (``{state}_sub_exact``,
    ``{state}_sub_kfac``, ``{state}_sub_block_sizes`` of
    :func:`layerwise.studies.ch08.kfac_study`), one row per state; white lines separate layers."""
    fig, axes = plt.subplots(2, 3, figsize=(7.5, 5.4))
    for r_, t in enumerate(KFAC_STATES):
        Fx, Fk = np.abs(K0[f"{t}_sub_exact"]), np.abs(K0[f"{t}_sub_kfac"])
        vmax = np.quantile(Fx, 0.995)
        for c_, (M, title) in enumerate(
            (
                (Fx, "|F| exact"),
                (Fk, "|F̃| K-FAC"),
                (np.abs(K0[f"{t}_sub_exact"] - K0[f"{t}_sub_kfac"]), "|F − F̃|"),
            )
        ):
            im = axes[r_, c_].imshow(
                M, cmap=CMAP + "_r", vmin=0, vmax=vmax, interpolation="nearest"
            )
            edges = np.cumsum(K0[f"{t}_sub_block_sizes"])[:-1] - 0.5
            for e in edges:
                axes[r_, c_].axhline(e, color="w", lw=0.6)
                axes[r_, c_].axvline(e, color="w", lw=0.6)
            axes[r_, c_].set(
                title=f"{title}, {'init' if t == 'init' else 'trained'}", xticks=[], yticks=[]
            )
            axes[r_, c_].grid(False)
        fig.colorbar(im, ax=axes[r_, :], shrink=0.8)
    return fig


def kfac_spectra(
    K0: Mapping[str, np.ndarray],
    err: Mapping[str, np.ndarray],
    best: Mapping[str, np.ndarray],
    diag: Mapping[str, np.ndarray],
    n_layers: int = 3,
) -> Figure:
    """Spectra of each exact Fisher block and of G⊗A (``{state}_eig_exact_i``,
    ``{state}_eig_kfac_i`` of one net), and the per-layer relative errors
    ``{state: (nets, layers)}`` of K-FAC, the best Kronecker product and the diagonal (mean ± sd
    over nets)."""
    fig, axes = plt.subplots(2, 2, figsize=(7.5, 6.2))
    axes = axes.ravel()
    cols = depth_colors(3)
    for i in range(1, n_layers + 1):
        for t, st in (("init", ":"), ("trained", "-")):
            ev, ek = K0[f"{t}_eig_exact_{i}"], K0[f"{t}_eig_kfac_{i}"]
            rank = np.arange(1, len(ev) + 1)
            axes[i - 1].plot(rank, np.maximum(ev, 1e-14), st, color="k", label=f"exact, {t}")
            axes[i - 1].plot(rank, np.maximum(ek, 1e-14), st, color=cols[1], label=f"K-FAC, {t}")
        axes[i - 1].set(
            xscale="log",
            yscale="log",
            xlabel="rank",
            ylabel="eigenvalue",
            title=f"layer {i} spectrum",
            ylim=(max(1e-12, K0["trained_eig_exact_%d" % i][0] * 1e-10), None),
        )
    x_ = np.arange(1, n_layers + 1)
    n_nets = len(err["init"])
    # colour and line: the approximation; marker: the state (named once, in the legend)
    c0 = plt.rcParams["axes.prop_cycle"].by_key()["color"][0]
    for j, (t, mk) in enumerate((("init", "o"), ("trained", "s"))):
        axes[3].errorbar(
            x_ + 0.1 * j,
            err[t].mean(0),
            yerr=err[t].std(0, ddof=1) if n_nets > 1 else None,
            fmt=mk + "-",
            color=c0,
        )
        axes[3].plot(x_ + 0.1 * j, best[t].mean(0), mk + ":", color="gray")
        axes[3].plot(x_ + 0.1 * j, diag[t].mean(0), mk + "--", color=cols[2])
    keys = [
        plt.Line2D([], [], color=c, ls=ls_, label=name)
        for c, ls_, name in (
            (c0, "-", "K-FAC"),
            ("gray", ":", "best Kronecker"),
            (cols[2], "--", "diagonal"),
        )
    ] + [
        plt.Line2D([], [], color="k", marker=mk, ls="none", label=t)
        for t, mk in (("init", "o"), ("trained", "s"))
    ]
    axes[3].set(
        xticks=x_,
        xlabel="layer",
        ylabel=r"$\|F - \hat F\|_F\,/\,\|F\|_F$",
        ylim=(0, 1.05),
        title="relative error",
    )
    # one legend for the three spectra (the same four curves in each), below the figure's title
    fig.legend(
        *axes[0].get_legend_handles_labels(),
        loc="upper center",
        ncols=4,
        bbox_to_anchor=(0.5, 1.0),
        handlelength=1.6,
        columnspacing=1.0,
    )
    tight_layout(fig, rect=(0, 0, 1, 0.95))
    legend_in_headroom(axes[3], ncols=3, handles=keys)
    return fig


def label_randomisation(
    table: Mapping[str, Any], measures: Sequence[str], labels: Mapping[str, str]
) -> Figure:
    """Capacity measures / γ relative to clean labels (norm-based and Fisher–Rao panels; mean ± sd
    over nets), train/test accuracy and the margin against the fraction of random labels. ``table``
    has one entry per run: ``fraction``, ``{measure}/γ``, ``train_accuracy``, ``test_accuracy``,
    ``margin``."""
    RD = pd.DataFrame(dict(table))
    fig, axes = plt.subplots(2, 2, figsize=(7.5, 6.2))
    axes = axes.ravel()
    g0 = RD[RD.fraction == 0]
    for m in measures:
        rel = RD[m + "/γ"] / g0[m + "/γ"].mean()
        d = pd.DataFrame({"fraction": RD.fraction, "rel": rel}).groupby("fraction").rel
        ax = axes[1] if m.startswith("fisher") else axes[0]
        ax.errorbar(
            d.mean().index,
            d.mean().values,
            yerr=d.std().fillna(0).values,
            fmt="o-",
            label=labels[m],
        )
    for a, title in ((axes[0], "norm-based measures"), (axes[1], "Fisher–Rao norms")):
        a.set(
            yscale="log",
            xlabel="fraction of random labels",
            ylabel="measure / γ, relative to 0 %",
            title=title,
        )
    d = RD.groupby("fraction")
    axes[2].errorbar(
        d.test_accuracy.mean().index,
        d.test_accuracy.mean(),
        yerr=d.test_accuracy.std().fillna(0),
        fmt="o-",
        label="test accuracy",
    )
    axes[2].plot(
        d.train_accuracy.mean().index, d.train_accuracy.mean(), "s--", label="train accuracy"
    )
    axes[2].axhline(0.1, color="gray", ls=":", lw=1)
    axes[2].text(0.02, 0.1, "chance (10 classes)", transform=axes[2].get_yaxis_transform(),
                 va="bottom", color="gray")  # at the left, below the test accuracy
    axes[2].set(
        xlabel="fraction of random labels",
        ylabel="accuracy",
        ylim=(0, 1.05),
        title="generalisation",
    )
    # under the train accuracy, right of the falling test accuracy, clear of the chance line
    axes[2].legend(loc="upper right", bbox_to_anchor=(1.0, 0.93))
    axes[3].errorbar(
        d.margin.mean().index, d.margin.mean(), yerr=d.margin.std().fillna(0), fmt="o-"
    )
    axes[3].set(
        yscale="log",
        xlabel="fraction of random labels",
        ylabel="margin γ",
        title="margin (10th percentile)",
    )
    plain_log_labels(fig)  # before the layout: "0.9", not "9×10⁻¹"
    tight_layout(fig)
    for a in axes[:2]:  # the measures' legends above their curves
        legend_in_headroom(a)
    return fig


def label_randomisation_protocols(table: Mapping[str, Any]) -> Figure:
    """The two Fisher–Rao norms / γ (top), the training loss at which each run was read off and the
    loss-normalised norms ‖θ‖_fr / ((L+1)·R·γ) = M/γ (bottom) against the fraction of random labels,
    under both stopping rules (colour; in the last panel the line style tells the norms apart;
    mean ± sd over nets). ``table`` has one entry per run:
    ``fraction`` and, for q in ``budget``, ``loss``: ``{q}_fisher_rao_{model,empirical}``,
    ``{q}_margin``, ``{q}_final_loss``, ``{q}_M_{model,empirical}``."""
    RD = pd.DataFrame(dict(table))
    fig, axes = plt.subplots(2, 2, figsize=(7.5, 6.2))
    axes = axes.ravel()
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]

    def curve(ax: Any, values: pd.Series, fmt: str, color: str, label: str) -> None:
        d = pd.DataFrame({"fraction": RD.fraction, "v": values}).groupby("fraction").v
        ax.errorbar(
            d.mean().index,
            d.mean().values,
            yerr=d.std().fillna(0).values,
            fmt=fmt,
            color=color,
            capsize=3,
            label=label,
        )

    for c, q in zip(colors, PROTOCOL_NAMES, strict=False):
        for ax, lab in ((axes[0], "model"), (axes[1], "empirical")):
            curve(ax, RD[f"{q}_fisher_rao_{lab}"] / RD[f"{q}_margin"], "o-", c, PROTOCOL_NAMES[q])
        curve(axes[2], RD[f"{q}_final_loss"], "o-", c, PROTOCOL_NAMES[q])
        for lab, fmt in (("model", "o-"), ("empirical", "s--")):
            curve(
                axes[3],
                RD[f"{q}_M_{lab}"] / RD[f"{q}_margin"],
                fmt,
                c,
                lab if q == "budget" else "_nolegend_",
            )
    for ax, lab in ((axes[0], "model"), (axes[1], "empirical")):
        ax.set(
            yscale="log",
            xlabel="fraction of random labels",
            ylabel=r"$\|\theta\|_{\mathrm{fr}}\,/\,\gamma$",
            title=f"Fisher–Rao ({lab})",
        )
    axes[2].set(
        yscale="log",
        xlabel="fraction of random labels",
        ylabel="training loss",
        title="loss when read off",
    )
    axes[3].set(
        xlabel="fraction of random labels",
        ylabel=r"$\|\theta\|_{\mathrm{fr}}\,/\,((L+1)\,R\,\gamma)$",
        title="loss factor divided out",
    )
    for ax in axes:
        ax.legend()
    tight_layout(fig)
    return fig


def tangent_sensitivity(same: Any, different: Any) -> Figure:
    """Relative changes of the tangent sample sensitivity within one activation region (row 0,
    exact zeros at ε/10) and between regions (row 1), on a log axis."""
    same, different = np.asarray(same, float), np.asarray(different, float)
    fig, ax = plt.subplots(figsize=(6, 3.2))
    ax.scatter(np.maximum(same, EPS / 10), np.zeros(len(same)), marker="|", s=300)
    ax.scatter(different, np.ones(len(different)), marker="|", s=300)
    ax.set(
        xscale="log",
        yticks=[0, 1],
        yticklabels=["same region", "different"],
        xlabel=r"$\|S(x^\prime) - S(x)\|_F\,/\,\|S(x)\|_F$  (floored at ε/10)",
        ylim=(-0.5, 1.5),
    )
    tight_layout(fig)
    return fig


NATURAL_GRADIENT_LABELS = {
    "kfac": "K-FAC",
    "blocks": "exact diagonal blocks",
    "diagonal": "diagonal",
    "gradient": "gradient (no preconditioner)",
}


def natural_gradient(
    cos: Mapping[str, Mapping[str, np.ndarray]], dampings: Sequence[float]
) -> Figure:
    """Cosine with the exact damped natural gradient against the relative damping, one panel per
    state of :data:`~layerwise.studies.ch08.KFAC_STATES`: ``cos[state][name]`` (nets, dampings)
    for each of :data:`~layerwise.studies.ch08.NATURAL_GRADIENTS`, mean ± sd over nets."""
    fig, axes = plt.subplots(1, len(KFAC_STATES), figsize=(7.5, 4.2), sharey=True)
    for ax, state in zip(axes, KFAC_STATES):
        for name in NATURAL_GRADIENTS:
            c = np.asarray(cos[state][name])
            ax.errorbar(
                dampings,
                c.mean(0),
                yerr=c.std(0, ddof=1),
                marker="o",
                capsize=3,
                label=NATURAL_GRADIENT_LABELS[name],
            )
        ax.set_xscale("log")
        ax.set_xlabel("relative damping δ")
        ax.set_title("He initialisation" if state == "init" else "after training")
        ax.axhline(1.0, color="0.6", lw=0.8, ls=":")
    axes[0].set_ylabel("cosine with (F + λI)⁻¹∇L")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, frameon=False)
    tight_layout(fig, rect=(0, 0.2, 1, 1))  # the legend below the panels, off the data
    return fig
