# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,-all
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Chapter 7 — Mean-field signal propagation and transient chaos
#
# A deep network with random weights is a random dynamical system in which the layer index plays
# the role of time. {cite}`poole2016exponential` showed that when the layers are wide, two
# deterministic maps describe how the *length* of a signal and the *correlation* between two
# signals evolve with depth, and that these maps have an order-to-chaos phase transition:
# on one side nearby inputs are pulled together, on the other they are torn apart at an
# exponential rate, which lets a deep network bend a simple input curve into one of
# exponentially growing length. {cite}`schoenholz2017deep` turned the same maps into *depth
# scales* — how many layers information about an input survives — which diverge at the
# transition.
#
# This chapter re-derives the maps for φ = tanh, computes them by quadrature, checks them layer
# by layer against wide random networks, draws the phase diagram, repeats the circle experiment
# of Poole et al. (their Figs. 3–4) and computes the depth scales.
#
# **Set-up.** Fully-connected layers of width $N$, weights $W^l_{ij} \sim \mathcal N(0, \sigma_w^2/N)$,
# biases $b^l_i \sim \mathcal N(0, \sigma_b^2)$, pre-activations $z^l = W^l \phi(z^{l-1}) + b^l$.

# %% tags=["parameters", "remove-cell"]
scale = "ci"  # ci | default | paper
seed = 0
device = "auto"  # auto | cpu | cuda
width = None  # width N of the simulated networks
n_nets = None  # independent networks per simulated setting
n_layers = None  # depth of the layer-by-layer comparison
circle_width = None  # width of the circle experiment's networks
circle_points = None  # points on the input circle
circle_nets = None  # independent networks for the circle's growth rate
circle_layers = None  # depth of the circle experiment
grid = None  # resolution of the phase diagram (grid × grid)
train_depths = None  # depths of the trainability grid
train_sigmas = None  # number of σ_w² values in the trainability grid
train_steps = None  # SGD steps per network
train_width = None  # width of the trained networks

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from layerwise import meanfield as mf
from layerwise.chapter import Chapter
from layerwise.params import resolve
from layerwise.stats import jackknife_se, linear_fit, mean_se, z_family

SCALES = {
    "ci": dict(width=400, n_nets=12, n_layers=12, circle_width=400, circle_points=200, circle_nets=4, circle_layers=16, grid=40,
               train_depths=(6, 12, 24), train_sigmas=4, train_steps=100, train_width=32),
    "default": dict(width=1000, n_nets=40, n_layers=20, circle_width=1000, circle_points=500, circle_nets=12, circle_layers=20, grid=100,
                    train_depths=(8, 11, 16, 23, 32, 45, 64, 90), train_sigmas=10, train_steps=300, train_width=64),
    "paper": dict(width=1000, n_nets=200, n_layers=30, circle_width=1000, circle_points=500, circle_nets=50, circle_layers=30, grid=200,
                  train_depths=(8, 11, 16, 23, 32, 45, 64, 90, 128, 180, 256), train_sigmas=16, train_steps=3000, train_width=300),
}
P = resolve(SCALES, scale, width=width, n_nets=n_nets, n_layers=n_layers, circle_width=circle_width,
            circle_points=circle_points, circle_nets=circle_nets, circle_layers=circle_layers, grid=grid,
            train_depths=train_depths, train_sigmas=train_sigmas, train_steps=train_steps, train_width=train_width)
ch = Chapter("07_meanfield_chaos", scale=scale, seed=seed, device=device, params=P)
SIGMA_B2 = 0.3**2  # Poole et al.'s circle experiment uses σ_b = 0.3
SIGMA_WS = (1.3, 2.5, 4.0)  # … and σ_w ∈ {1.3, 2.5, 4.0}
pd.DataFrame(SCALES).T

# %% [markdown]
# ## The length map
#
# For a wide layer, each pre-activation $z^l_i$ is a sum of $N$ independent terms and is close to
# Gaussian with variance $q^l = \frac1N\sum_i (z^l_i)^2$. Averaging over the weights gives the
# **length map** {cite}`poole2016exponential` (their Eq. 3)
#
# $$
# q^l = \mathcal V(q^{l-1}) = \sigma_w^2 \int \mathcal Dz\, \phi\!\left(\sqrt{q^{l-1}}\,z\right)^2 + \sigma_b^2,
# \qquad \mathcal Dz = \frac{e^{-z^2/2}}{\sqrt{2\pi}}\,dz .
# $$
#
# For tanh, $\mathcal V$ is increasing and bounded by $\sigma_w^2 + \sigma_b^2$, so with
# $\sigma_b > 0$ it has a single stable fixed point $q^*$. All Gaussian integrals in this chapter
# are computed by composite Gauss–Legendre quadrature with panels narrower than the scale
# $1/\sqrt q$ on which $\tanh(\sqrt q z)$ varies: tanh has poles at $\pm i\pi/2$, so plain
# Gauss–Hermite converges slowly once $q$ is large (we measured an error of $3\times10^{-4}$ at
# $q=20$ with 201 nodes), while this rule is accurate to $10^{-12}$ (tested in
# `tests/test_meanfield.py` against adaptive quadrature and the closed-form erf kernel
# {cite}`williams1997computing`).

# %%
qgrid = np.linspace(0, 20, 201)
vmaps = {sw: np.array([mf.length_map(q, sw**2, SIGMA_B2) for q in qgrid]) for sw in SIGMA_WS}
qstars = {sw: mf.q_star(sw**2, SIGMA_B2) for sw in SIGMA_WS}
starts = np.array([0.1, 1.0, 5.0, 10.0, 20.0])
iters = {sw: np.array([mf.iterate_length_map(q0, 12, sw**2, SIGMA_B2) for q0 in starts]) for sw in SIGMA_WS}
layers_to_1pct = {sw: [int(np.argmax(np.abs(it - qstars[sw]) / qstars[sw] < 1e-2)) for it in iters[sw]] for sw in SIGMA_WS}

fig, axes = plt.subplots(1, 2, figsize=(10, 4))
for sw, color in zip(SIGMA_WS, sns.color_palette()):
    axes[0].plot(qgrid, vmaps[sw], color=color, label=fr"$\sigma_w={sw}$, $q^*={qstars[sw]:.3f}$")
    axes[0].plot(qstars[sw], qstars[sw], "o", color=color)
    for it in iters[sw]:
        axes[1].plot(np.arange(13), it, "-o", ms=3, color=color, alpha=0.8)
axes[0].plot(qgrid, qgrid, "k--", lw=1, label="identity")
axes[0].set(xlabel=r"$q^{l-1}$", ylabel=r"$q^l = \mathcal{V}(q^{l-1})$", title=r"length map, $\sigma_b = 0.3$")
axes[0].legend()
axes[1].set(xlabel="layer $l$", ylabel="$q^l$", yscale="log", title="iterates from several $q^0$")
ch.figure(fig, "length_map",
          "The length map and its iterates for tanh nets with σ_b = 0.3 (Poole et al. 2016, Fig. 1, with σ_w = 1.3, 2.5, 4.0): "
          "from any starting length the iterates reach the fixed point q* within a few layers.",
          arrays=dict(q=qgrid, **{f"V_sw{sw}": vmaps[sw] for sw in SIGMA_WS}, starts=starts,
                      **{f"iterates_sw{sw}": iters[sw] for sw in SIGMA_WS}))
pd.DataFrame(layers_to_1pct, index=[f"q0={q}" for q in starts]).rename(columns=lambda s: f"σ_w={s}")

# %%
median_layers = float(np.median(np.concatenate([layers_to_1pct[sw] for sw in SIGMA_WS])))
ch.claim("length_map_converges_fast",
         "The length map reaches 1% of q* in a handful of layers (median over σ_w ∈ {1.3, 2.5, 4.0}, q⁰ ∈ [0.1, 20]).",
         measured=median_layers, reference=4, tol=2,
         why="deterministic quadrature; the source says convergence happens 'often with only four iterations', "
             "a typical count rather than a bound, so we accept 2–6",
         source="Poole et al. 2016 §2 (reading note, papers/003)")
# %% [markdown]
# ## Random networks against the length map, layer by layer
#
# We now simulate real networks: `n_nets` independent networks of width `width` for each
# $\sigma_w$, with two inputs of squared length $q^0 = 0.1$ per unit and correlation $c^0 = 0.2$
# (far from the fixed point, so the transient is tested too), and record the empirical $q^l$ and
# $c^l$ at every layer.

# %%
def simulate(sw: float, q0: float, c0: float):
    cfg = dict(sigma_w2=sw**2, sigma_b2=SIGMA_B2, width=P["width"], n_layers=P["n_layers"], n_nets=P["n_nets"], q0=q0, c0=c0, phi="tanh")
    return ch.cached("pairs", cfg,
                     lambda: mf.simulate_pairs(q0, c0, sigma_w2=sw**2, sigma_b2=SIGMA_B2, width=P["width"], n_layers=P["n_layers"],
                                               n_nets=P["n_nets"], seed=ch.torch_seed("pairs", sw, q0, c0), device=ch.device),
                     code_version=mf.CODE_VERSION)

RUNS = [(0.1, 0.2), (10.0, 0.95)]
sims = {(sw, q0, c0): simulate(sw, q0, c0) for sw in SIGMA_WS for q0, c0 in RUNS}
theory = {(sw, q0, c0): mf.iterate_maps(q0, c0, P["n_layers"], sw**2, SIGMA_B2) for sw in SIGMA_WS for q0, c0 in RUNS}

rows, zq, zc = [], [], []
for key, s in sims.items():
    q_emp = s["q"].mean(axis=2)  # both inputs have the same length: average them
    qm, qse = mean_se(q_emp)
    cm, cse = mean_se(s["c"])
    qt, ct = theory[key]
    zq.append(np.abs(qm[1:] - qt[1:]) / qse[1:])
    zc.append(np.abs(cm[1:] - ct[1:]) / cse[1:])
    rows.append(dict(sigma_w=key[0], q0=key[1], c0=key[2], max_rel_err_q=np.max(np.abs(qm - qt) / qt),
                     max_abs_err_c=np.max(np.abs(cm - ct)), max_z_q=zq[-1].max(), max_z_c=zc[-1].max()))
agreement = pd.DataFrame(rows)
agreement

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 4))
L = np.arange(P["n_layers"] + 1)
for (key, s), color in zip(sims.items(), sns.color_palette(n_colors=len(sims))):
    qt, ct = theory[key]
    qm, qse = mean_se(s["q"].mean(axis=2))
    cm, cse = mean_se(s["c"])
    lab = fr"$\sigma_w={key[0]}$, $q^0={key[1]}$, $c^0={key[2]}$"
    axes[0].plot(L, qt, color=color, lw=1)
    axes[0].errorbar(L, qm, yerr=2 * qse, fmt="o", ms=3, color=color, label=lab)
    axes[1].plot(L, ct, color=color, lw=1)
    axes[1].errorbar(L, cm, yerr=2 * cse, fmt="o", ms=3, color=color)
axes[0].set(xlabel="layer $l$", ylabel="$q^l$", yscale="log", title="length: map (lines) vs networks (dots ± 2 s.e.)")
axes[1].set(xlabel="layer $l$", ylabel="$c^l$", title="correlation: map vs networks")
axes[0].legend(fontsize=7, ncol=2)
ch.figure(fig, "maps_vs_networks",
          f"Length and correlation maps (lines) against {P['n_nets']} random tanh networks of width {P['width']} per setting "
          "(dots: mean ± 2 standard errors), σ_b = 0.3 — the empirical check of Poole et al. 2016, Eqs. 3 and 5, layer by layer.",
          arrays=dict(layers=L, **{f"q_sim_{i}": s["q"] for i, s in enumerate(sims.values())},
                      **{f"c_sim_{i}": s["c"] for i, s in enumerate(sims.values())},
                      **{f"q_map_{i}": t[0] for i, t in enumerate(theory.values())},
                      **{f"c_map_{i}": t[1] for i, t in enumerate(theory.values())}))

# %% [markdown]
# Each comparison is a mean over `n_nets` independent networks, so its error is judged in units
# of its own standard error, estimated from the same `n_nets` networks: the ratio follows
# Student's $t$ law with `n_nets` − 1 degrees of freedom. With $m$ layers × settings compared at
# once, the threshold $t_m = t_{n-1}^{-1}(1 - 0.01/2m)$ keeps the chance of a false alarm below
# 1 % if the maps are exact (Bonferroni; conservative, since successive layers are correlated). The maps are exact only for $N \to \infty$: the finite-width bias of the mean
# is $O(1/N)$, while the standard error is $O(1/\sqrt{N\,n_{\rm nets}})$, so the bias is a
# fraction $\sqrt{n_{\rm nets}/N}$ of the standard error and the test stays fair as long as
# `n_nets` ≪ `width` (true at every scale here).

# %%
m = sum(len(z) for z in zq)
zthr = z_family(m, dof=P["n_nets"] - 1)
ch.claim("length_map_matches_networks",
         "Empirical q^l of random tanh nets matches the length map at every layer (max |z| over layers and settings).",
         measured=float(np.max(np.concatenate(zq))), reference=zthr, comparison="le",
         why=f"|mean − map| / s.e. over {P['n_nets']} nets follows Student's t ({P['n_nets'] - 1} dof); Bonferroni threshold for {m} comparisons at 1% "
             f"family-wise level; finite-width bias O(1/N) is ≈ √(n_nets/N) = {np.sqrt(P['n_nets'] / P['width']):.2f} s.e.",
         source="Poole et al. 2016, Eq. 3")
ch.claim("correlation_map_matches_networks",
         "Empirical c^l of random tanh nets matches the correlation map at every layer (max |z| over layers and settings).",
         measured=float(np.max(np.concatenate(zc))), reference=zthr, comparison="le",
         why=f"as above: Student's t with {P['n_nets'] - 1} dof, Bonferroni threshold for {m} comparisons at 1% family-wise level",
         source="Poole et al. 2016, Eq. 5")
# %% [markdown]
# ## The correlation map and χ₁
#
# Two inputs at the fixed length $q^*$ with correlation $c$ have pre-activations
# $u_1 = \sqrt{q^*} z_1$, $u_2 = \sqrt{q^*}(c z_1 + \sqrt{1-c^2} z_2)$ and the **correlation map**
#
# $$
# c^l = \frac{1}{q^*}\Big(\sigma_w^2 \int \mathcal Dz_1 \mathcal Dz_2\, \phi(u_1)\phi(u_2) + \sigma_b^2\Big).
# $$
#
# $c = 1$ is always a fixed point; its stability is set by the slope
#
# $$
# \chi_1 = \frac{\partial c^l}{\partial c^{l-1}}\Big|_{c=1} = \sigma_w^2 \int \mathcal Dz\, \phi'\!\left(\sqrt{q^*} z\right)^2 .
# $$
#
# For $\chi_1 < 1$ (ordered phase) nearby inputs converge; for $\chi_1 > 1$ (chaotic phase)
# $c = 1$ is unstable and a second fixed point $c^* < 1$ appears. $\chi_1$ is also the mean
# squared singular value of the layer's Jacobian, the factor by which a small perturbation's
# squared length grows per layer.

# %%
cgrid = np.linspace(0, 1, 101)
cmaps = {sw: np.array([mf.correlation_map(c, sw**2, SIGMA_B2) for c in cgrid]) for sw in SIGMA_WS}
summary = pd.DataFrame({sw: mf.depth_scales(sw**2, SIGMA_B2) for sw in SIGMA_WS}).T
summary.index.name = "σ_w"
fig, ax = plt.subplots(figsize=(5, 4))
for sw, color in zip(SIGMA_WS, sns.color_palette()):
    ax.plot(cgrid, cmaps[sw], color=color, label=fr"$\sigma_w={sw}$: $\chi_1={summary.loc[sw, 'chi1']:.3f}$, $c^*={summary.loc[sw, 'c_star']:.3f}$")
    ax.plot(summary.loc[sw, "c_star"], summary.loc[sw, "c_star"], "o", color=color)
ax.plot(cgrid, cgrid, "k--", lw=1)
ax.set(xlabel="$c^{l-1}$", ylabel="$c^l$", title=r"correlation map, $\sigma_b=0.3$")
ax.legend(fontsize=8)
ch.figure(fig, "correlation_map",
          "The correlation map at the length fixed point for σ_b = 0.3 (Poole et al. 2016, Fig. 2): σ_w = 1.3 is ordered (c* = 1), "
          "σ_w = 2.5 and 4.0 are chaotic with a stable fixed point c* < 1.",
          arrays=dict(c=cgrid, **{f"C_sw{sw}": cmaps[sw] for sw in SIGMA_WS}, chi1=summary["chi1"].to_numpy(), c_star=summary["c_star"].to_numpy()))
summary

# %%
ch.claim("phases_of_circle_settings",
         "σ_w = 1.3 is in the ordered phase (χ₁ < 1) and σ_w = 2.5, 4.0 in the chaotic phase (χ₁ > 1), σ_b = 0.3.",
         measured=bool(summary.loc[1.3, "chi1"] < 1 < summary.loc[2.5, "chi1"] < summary.loc[4.0, "chi1"]), comparison="true",
         why="deterministic quadrature accurate to 1e-12; the smallest margin |χ₁ − 1| is "
             f"{np.min(np.abs(summary['chi1'] - 1)):.3f}",
         source="Poole et al. 2016, Figs. 3–4 (ordered vs chaotic circle)")
slope_fd = (1 - mf.correlation_map(1 - 1e-5, 2.5**2, SIGMA_B2)) / 1e-5
ch.claim("chi1_is_slope_at_c1",
         "χ₁ equals the slope of the correlation map at c = 1 (finite difference, σ_w = 2.5).",
         measured=slope_fd, reference=float(summary.loc[2.5, "chi1"]), tol=1e-3, comparison="rel",
         why="one-sided finite difference with step 1e-5: truncation error ≈ ½·C''·h ≲ 1e-4 relative, plus quadrature error 1e-12",
         source="Poole et al. 2016, Eq. 7")

# %% [markdown]
# ## The phase diagram
#
# Sweeping $(\sigma_w^2, \sigma_b^2)$ gives the phase diagram of Poole et al.'s Fig. 2 (and
# Schoenholz et al.'s Fig. 1): χ₁ = 1 separates order from chaos. The line is computed twice:
# as a contour of χ₁ on a grid, and point by point with `critical_sigma_w2(σ_b²)`, which solves
# χ₁ = 1 by Brent's method. At $\sigma_b = 0$ the transition sits exactly at $\sigma_w^2 = 1$,
# since then $q^* = 0$ and $\chi_1 = \sigma_w^2 \phi'(0)^2$.

# %%
def phase_diagram():
    sw2 = np.linspace(0.5, 5.0, P["grid"])
    sb2 = np.linspace(0.0, 1.0, P["grid"])
    chi = np.array([[mf.chi1(a, b) for a in sw2] for b in sb2])
    sb2_line = sb2  # the root-finder at the grid's own rows, to compare row by row
    crit = np.array([mf.critical_sigma_w2(b) for b in sb2_line])
    return dict(sigma_w2=sw2, sigma_b2=sb2, chi1=chi, sigma_b2_line=sb2_line, critical_sigma_w2=crit)

pdg = ch.cached("phase_diagram", dict(grid=P["grid"], phi="tanh", line="grid rows"), phase_diagram, code_version=mf.CODE_VERSION)
fig, ax = plt.subplots(figsize=(5.5, 4.2))
im = ax.pcolormesh(pdg["sigma_w2"], pdg["sigma_b2"], np.log(pdg["chi1"]), cmap="vlag", vmin=-1, vmax=1, shading="auto")
ax.contour(pdg["sigma_w2"], pdg["sigma_b2"], pdg["chi1"], levels=[1.0], colors="k", linewidths=1)
ax.plot(pdg["critical_sigma_w2"][::4], pdg["sigma_b2_line"][::4], "o", color="k", ms=3, label=r"critical_sigma_w2($\sigma_b^2$)")
for sw in SIGMA_WS:
    ax.plot(sw**2, SIGMA_B2, "*", ms=10, color="gold", mec="k")
fig.colorbar(im, ax=ax, label=r"$\ln \chi_1$")
ax.set(xlabel=r"$\sigma_w^2$", ylabel=r"$\sigma_b^2$", title="ordered (blue) vs chaotic (red)")
ax.legend(loc="upper left", fontsize=8)
ch.figure(fig, "phase_diagram",
          "Phase diagram of random tanh networks (Poole et al. 2016, Fig. 2; Schoenholz et al. 2017, Fig. 1): ln χ₁ over (σ_w², σ_b²), "
          "the χ₁ = 1 contour (line) and the root-finder's critical line (dots); stars mark the circle experiment's settings.",
          arrays=pdg)

# %%
ch.claim("critical_line_at_zero_bias",
         "At σ_b² = 0 the order-to-chaos transition is at σ_w² = 1.",
         measured=float(pdg["critical_sigma_w2"][0]), reference=1.0, tol=1e-9,
         why="closed form: with q* = 0, χ₁ = σ_w² tanh'(0)² = σ_w²; root-finder tolerance 1e-14",
         source="Poole et al. 2016 §2; closed form")
crit_grid = pdg["sigma_w2"][np.argmin(np.abs(np.log(pdg["chi1"])), axis=1)]
spacing = pdg["sigma_w2"][1] - pdg["sigma_w2"][0]
ch.claim("critical_line_matches_grid",
         "The root-finder's critical line and the grid's χ₁ = 1 crossing agree on every row of the grid (max difference over σ_b²).",
         measured=float(np.max(np.abs(pdg["critical_sigma_w2"] - crit_grid))), reference=0.0, tol=float(spacing),
         why=f"χ₁ is monotone in σ_w² along a row, so the grid point closest to χ₁ = 1 lies within one grid step ({spacing:.3f}) of the root",
         source="internal consistency of Poole et al. 2016, Fig. 2")
# %% [markdown]
# ## The circle experiment
#
# Poole et al. feed a great circle through a random network, $x(\theta) = \sqrt{N q^*}\,(u_0\cos\theta + u_1 \sin\theta)$,
# and look at the image of the circle at increasing depth through its first three principal
# components (their Fig. 3). In the ordered phase the circle contracts towards a point; in the
# chaotic phase it is folded into an ever more convoluted curve. Its length (their Fig. 4) grows
# exponentially with depth: a small arc of length $d\ell$ is stretched by the layer's Jacobian,
# whose mean squared singular value is $\chi_1$, so the length is multiplied by $\sqrt{\chi_1}$ per
# layer.
#
# We measure the length in two ways: as the closed polygon through the `circle_points` images of
# the points (what one gets from the points alone; it saturates once neighbouring points decorrelate,
# because a polygon cannot resolve wiggles finer than its spacing), and exactly, by propagating the
# circle's tangent vectors with the network's Jacobian (forward mode) and integrating their
# length: $\ell^l = \oint \lVert \partial z^l / \partial \theta \rVert\, d\theta$.

# %%
N_PCA = 3  # principal components (an eigen-decomposition per layer) for the first networks only

def circle(sw: float, net: int, record: tuple[int, ...]):
    pca = net < N_PCA
    cfg = dict(sigma_w2=sw**2, sigma_b2=SIGMA_B2, width=P["circle_width"], n_layers=P["circle_layers"], n_points=P["circle_points"],
               net=net, record=record, pca=pca)
    return ch.cached("circle", cfg, lambda: mf.circle_experiment(sigma_w2=sw**2, sigma_b2=SIGMA_B2, width=P["circle_width"],
                                                                   n_layers=P["circle_layers"], n_points=P["circle_points"],
                                                                   seed=ch.torch_seed("circle", sw, net), record_layers=record,
                                                                   device=ch.device, pca=pca),
                     code_version=mf.CODE_VERSION)

SHOW = (5, 10, 15)
circles = {sw: [circle(sw, k, SHOW if k == 0 else ()) for k in range(P["circle_nets"])] for sw in SIGMA_WS}

fig = plt.figure(figsize=(11, 10))
for i, sw in enumerate(SIGMA_WS):
    r = circles[sw][0]
    for j, l in enumerate(SHOW):
        ax = fig.add_subplot(3, 3, 3 * i + j + 1, projection="3d")
        pr = r[f"proj_{l}"]
        ax.scatter(pr[:, 0], pr[:, 1], pr[:, 2], c=r["theta"], cmap="twilight", s=4)
        ax.plot(*np.vstack([pr, pr[:1]]).T[:3], lw=0.5, color="0.3")
        ax.set_title(fr"$\sigma_w={sw}$, layer {l}", fontsize=9)
        ax.set_xticks([]); ax.set_yticks([]); ax.set_zticks([])
ch.figure(fig, "circle_pca",
          "A great circle propagated through random tanh networks of width "
          f"{P['circle_width']} with σ_b = 0.3, projected on its top three principal components at layers 5, 10, 15 "
          "(Poole et al. 2016, Fig. 3; colour: angle θ on the input circle). Ordered σ_w = 1.3: the circle shrinks and stays simple; "
          "chaotic σ_w = 2.5, 4.0: it folds into a space-filling curve.",
          arrays={f"proj_sw{sw}_l{l}": circles[sw][0][f"proj_{l}"] for sw in SIGMA_WS for l in SHOW} | {"theta": circles[1.3][0]["theta"]})

# %%
Lc = np.arange(P["circle_layers"] + 1)
growth = {}
fig, axes = plt.subplots(1, 2, figsize=(10, 4))
for sw, color in zip(SIGMA_WS, sns.color_palette()):
    lt = np.array([r["length_tangent"] for r in circles[sw]])
    lc = np.array([r["length_chord"] for r in circles[sw]])
    x1 = summary.loc[sw, "chi1"]
    slopes = np.array([linear_fit(Lc[1:], np.log(v[1:]))["slope"] for v in lt])
    growth[sw] = dict(chi1=x1, predicted=0.5 * np.log(x1), measured=slopes.mean(), se=slopes.std(ddof=1) / np.sqrt(len(slopes)), sd=slopes.std(ddof=1))
    axes[0].plot(Lc, lt.mean(0), "-o", ms=3, color=color, label=fr"$\sigma_w={sw}$ exact (tangent)")
    axes[0].plot(Lc, lc.mean(0), ":", color=color, label=fr"$\sigma_w={sw}$ polygon")
    axes[0].plot(Lc, lt.mean(0)[0] * np.sqrt(x1) ** Lc, "--", lw=1, color=color)
    pv = np.array([r["pca_var"] for r in circles[sw] if "pca_var" in r]).mean(0)
    axes[1].plot(Lc, pv[:, :2].sum(1), "-o", ms=3, color=color, label=fr"$\sigma_w={sw}$")
axes[0].set(yscale="log", xlabel="layer $l$", ylabel="length of the curve", title=r"length vs depth (dashed: $\ell^0\sqrt{\chi_1}^{\,l}$)")
axes[0].legend(fontsize=7)
axes[1].set(xlabel="layer $l$", ylabel="variance in top 2 PCs", ylim=(0, 1.02), title="how flat the curve stays")
axes[1].legend(fontsize=8)
ch.figure(fig, "circle_length",
          "Length of the propagated circle against depth (Poole et al. 2016, Fig. 4): exact length from propagated tangents (solid), "
          "polygon through the points (dotted; saturates when neighbours decorrelate), and the mean-field prediction ℓ⁰·√χ₁^l (dashed). "
          f"Right: fraction of the curve's variance in its top two principal components (mean of the first {N_PCA} networks).",
          arrays={f"length_tangent_sw{sw}": np.array([r["length_tangent"] for r in circles[sw]]) for sw in SIGMA_WS}
          | {f"length_chord_sw{sw}": np.array([r["length_chord"] for r in circles[sw]]) for sw in SIGMA_WS}
          | {f"pca_var_sw{sw}": np.array([r["pca_var"] for r in circles[sw] if "pca_var" in r]) for sw in SIGMA_WS} | {"layers": Lc})
growth_df = pd.DataFrame(growth).T
growth_df

# %% [markdown]
# The measured growth rate is the least-squares slope of $\ln \ell^l$ against $l$, one slope per
# network, averaged over `circle_nets` networks. Its tolerance combines the standard error over
# networks with the finite-width correction: for a layer of width $N$, the log of a Jacobian's
# stretch factor has mean $\tfrac12\ln\chi_1 - O(1/N)$ (the gap between the growth of the mean
# and the mean of the log, which is of the order of the per-layer variance of the log-stretch,
# ≈ 1/N for a curve of many points).

# %%
for sw in SIGMA_WS:
    g = growth[sw]
    tol = 3 * g["se"] + 2.0 / P["circle_width"]
    phase = "ordered" if g["chi1"] < 1 else "chaotic"
    ch.claim(f"circle_length_rate_sw{str(sw).replace('.', '_')}",
             f"σ_w = {sw} ({phase}): the circle's length changes by √χ₁ per layer (log-length slope vs ½ ln χ₁).",
             measured=g["measured"], reference=g["predicted"], tol=tol,
             why=f"3 standard errors over {P['circle_nets']} nets ({g['se']:.4f}) plus the O(1/N) finite-width shift (2/N)",
             source="Poole et al. 2016, Fig. 4 and §3 (length grows as √χ₁ per layer)")
ch.claim("chaotic_circle_grows_exponentially",
         "In the chaotic phase (σ_w = 4.0) the circle's exact length grows by orders of magnitude over the layers simulated.",
         measured=float(np.log10(np.mean([r["length_tangent"][-1] / r["length_tangent"][0] for r in circles[4.0]]))),
         reference=float(P["circle_layers"] * 0.5 * np.log10(summary.loc[4.0, "chi1"])), tol=0.5,
         why="log10 of the length ratio against the mean-field √χ₁^L; ±0.5 decades covers the rate tolerance above "
             "accumulated over L layers (3 s.e. × L ≲ 0.2 decades) with margin for the first layer's transient",
         source="Poole et al. 2016, Fig. 4")
# %% [markdown]
# ## Depth scales
#
# Near its fixed points each map is linear, so deviations decay geometrically, with
# characteristic depths {cite}`schoenholz2017deep`
#
# $$
# \xi_q^{-1} = -\ln\!\Big[\chi_1 + \sigma_w^2 \int \mathcal Dz\, \phi''(\sqrt{q^*}z)\,\phi(\sqrt{q^*}z)\Big],
# \qquad
# \xi_c^{-1} = -\ln\!\Big[\sigma_w^2 \int \mathcal Dz_1\mathcal Dz_2\, \phi'(u_1)\phi'(u_2)\Big]_{c=c^*} ,
# $$
#
# the bracket in $\xi_q$ being the slope $\mathcal V'(q^*)$ (Gaussian integration by parts) and
# the one in $\xi_c$ the slope $\chi_c$ of the correlation map at its stable fixed point
# ($\chi_c = \chi_1$ in the ordered phase). $\xi_q$ stays of order one layer everywhere; $\xi_c$
# diverges where $\chi_1 = 1$: at criticality, correlations — and so information about how two
# inputs differ — survive arbitrarily deep. Schoenholz et al. show that networks are trainable
# only when their depth is below a small multiple of $\xi_c$.

# %%
SB2_XI = 0.05
def depth_scale_curve():
    sw2 = np.linspace(1.0, 4.0, 31 if scale == "ci" else 61)
    rows = [mf.depth_scales(a, SB2_XI) for a in sw2]
    return {"sigma_w2": sw2, **{k: np.array([r[k] for r in rows]) for k in ("xi_q", "xi_c", "chi1", "c_star", "chi_c")},
            "critical": np.array(mf.critical_sigma_w2(SB2_XI))}

xi = ch.cached("depth_scales", dict(sigma_b2=SB2_XI, n=31 if scale == "ci" else 61), depth_scale_curve, code_version=mf.CODE_VERSION)

# empirical ξ_c: the mean correlation over networks approaching c* geometrically
XI_POINTS = (1.5, 3.0)  # σ_w² on either side of the transition (σ_w²_crit ≈ 1.76 for σ_b² = 0.05)

def fitted_xi(window, c, cs):
    """ξ from the least-squares slope of ln|c^l − c*| over the window's layers."""
    return -1.0 / linear_fit(window, np.log(np.abs(c[window] - cs)))["slope"]

def empirical_xi(sw2: float):
    cs, qs = mf.c_star(sw2, SB2_XI), mf.q_star(sw2, SB2_XI)
    c0 = 0.99 if cs == 1.0 else cs + 0.4  # start close to c*, where the map is nearly linear
    cfg = dict(sigma_w2=sw2, sigma_b2=SB2_XI, width=P["width"], n_layers=P["n_layers"], n_nets=P["n_nets"], q0=qs, c0=c0, phi="tanh")
    s = ch.cached("xi_pairs", cfg, lambda: mf.simulate_pairs(qs, c0, sigma_w2=sw2, sigma_b2=SB2_XI, width=P["width"], n_layers=P["n_layers"],
                                                             n_nets=P["n_nets"], seed=ch.torch_seed("xi", sw2), device=ch.device),
                  code_version=mf.CODE_VERSION)
    _, c_map = mf.iterate_maps(qs, c0, P["n_layers"], sw2, SB2_XI)
    cm, cse = mean_se(s["c"])
    layers = np.arange(1, P["n_layers"] + 1)
    window = layers[np.abs(c_map[1:] - cs) > 4 * cse[1:]]  # deviation well above the noise of the mean
    measured, se = jackknife_se(lambda c: fitted_xi(window, c.mean(0), cs), s["c"])
    return dict(asymptotic=float(mf.depth_scales(sw2, SB2_XI)["xi_c"]), map_fit=float(fitted_xi(window, c_map, cs)),
                measured=measured, se=se, window=(int(window[0]), int(window[-1])), c=s["c"], c_map=c_map)

emp = {sw2: empirical_xi(sw2) for sw2 in XI_POINTS}
fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(xi["sigma_w2"], xi["xi_c"], label=r"$\xi_c$ (theory)")
ax.plot(xi["sigma_w2"], xi["xi_q"], label=r"$\xi_q$ (theory)")
for sw2, e in emp.items():
    ax.errorbar(sw2, e["measured"], yerr=2 * e["se"], fmt="o", color="k", ms=4)
ax.axvline(float(xi["critical"]), color="0.5", ls="--", lw=1, label=r"$\chi_1 = 1$")
ax.set(xlabel=r"$\sigma_w^2$", ylabel="depth scale (layers)", yscale="log", title=r"$\sigma_b^2 = 0.05$")
ax.legend()
ch.figure(fig, "depth_scales",
          "Depth scales ξ_q and ξ_c of tanh networks against σ_w² at σ_b² = 0.05 (Schoenholz et al. 2017, Fig. 2): ξ_c diverges at "
          f"the order-to-chaos transition. Dots: the decay depth of the mean correlation of {P['n_nets']} simulated networks of width "
          f"{P['width']} (± 2 jackknife s.e.).",
          arrays={k: v for k, v in xi.items()} | {f"emp_sw2_{sw2}": np.array([e["measured"], e["se"]]) for sw2, e in emp.items()})
pd.DataFrame({sw2: {k: v for k, v in e.items() if k not in ("c", "c_map")} for sw2, e in emp.items()}).T.rename_axis("σ_w²")

# %%
near = xi["sigma_w2"][np.argmax(xi["xi_c"])]
ch.claim("xi_c_diverges_at_transition",
         "ξ_c peaks at the order-to-chaos transition (argmax of ξ_c on the σ_w² grid vs critical_sigma_w2).",
         measured=float(near), reference=float(xi["critical"]), tol=float(xi["sigma_w2"][1] - xi["sigma_w2"][0]),
         why="the peak can only be located to within one grid step",
         source="Schoenholz et al. 2017, Eq. 9 and Fig. 2")
for sw2, e in emp.items():
    ch.claim(f"xi_c_networks_sw2_{str(sw2).replace('.', '_')}",
             f"σ_w² = {sw2}: the mean correlation of random networks approaches c* with the decay depth of the correlation map "
             f"(same fit, layers {e['window'][0]}–{e['window'][1]}, on networks and on the map's iterates).",
             measured=e["measured"], reference=e["map_fit"], tol=3 * e["se"],
             why=f"3 jackknife standard errors over {P['n_nets']} networks; the window keeps layers where |c − c*| exceeds 4 s.e. "
                 "of the mean, and the same estimator is applied to the map so the map's residual curvature cancels",
             source="Schoenholz et al. 2017, Eqs. 7–9")
    c_long = mf.iterate_correlation_map(e["c_map"][0], 60, sw2, SB2_XI)
    cs = mf.c_star(sw2, SB2_XI)
    ratio = abs(c_long[-1] - cs) / abs(c_long[-2] - cs)
    ch.claim(f"xi_c_is_linearisation_sw2_{str(sw2).replace('.', '_')}",
             f"σ_w² = {sw2}: deep in the iteration the correlation map contracts towards c* by χ_c per layer (ratio at layer 60).",
             measured=ratio, reference=float(np.exp(-1 / e["asymptotic"])), tol=1e-4, comparison="rel",
             why="deterministic; after 60 layers |c − c*| is ~1e-5 or less, where the map's quadratic term changes the ratio by "
                 "less than 1e-4, and c* is known to 1e-13",
             source="Schoenholz et al. 2017, Eqs. 7–9 (ξ_c from the linearised map)")

# %% [markdown]
# The table above also shows something the asymptotic formula hides: in the chaotic phase, over
# the first ten or so layers — all that a simulation of finite width can resolve before the
# correlation is lost in the $O(1/\sqrt N)$ noise — correlations decay *more slowly* than
# $\xi_c$ says, because the correlation map is still curved there. Networks and map agree on that
# transient (first claim), and the map reaches its linearised rate $\chi_c$ only deeper
# (second claim). In the ordered phase, starting at $c^0 = 0.99$, the map is linear from the
# start and the fitted and asymptotic depths coincide.

# %% [markdown]
# ## Trainability and the depth scale
#
# Schoenholz et al. argue that a network can only be trained when signals about its inputs
# survive to its output, i.e. when its depth $L$ is at most a small multiple of $\xi_c$; with long
# training on MNIST and CIFAR-10 they find the boundary of the trainable region near
# $L \approx 6\,\xi_c$ (their Fig. 5). We repeat the experiment at the size of the digits data
# set: for every $(\sigma_w^2, L)$ on a grid, a tanh network of width `train_width` initialised as
# above ($\sigma_b^2 = 0.05$) is trained with plain minibatch SGD (learning rate 0.01, batch 64)
# for `train_steps` steps, and we record its training accuracy. A network counts as trainable
# when it reaches 50 % training accuracy — five times chance, a threshold fixed before looking at
# the results. Training here is much shorter than Schoenholz et al.'s, so we expect the
# boundary at a smaller multiple of $\xi_c$; the functional form $L_{\max} \propto \xi_c$ is what
# should carry over.

# %%
from layerwise.data import digits

TRAIN_SB2 = 0.05
xd, yd = digits()
xd = xd.reshape(len(xd), -1)
xd = (xd - xd.mean(0)) / (xd.std(0) + 1e-8)  # per-pixel standardisation …
xd = xd / np.sqrt((xd**2).mean(1, keepdims=True))  # … and unit length per unit, like q⁰ = 1
train_sw2 = np.linspace(1.0, 4.0, P["train_sigmas"])

def trainability():
    acc = np.empty((len(train_sw2), len(P["train_depths"])))
    for j, L in enumerate(P["train_depths"]):
        r = mf.train_depth_grid(xd, yd, sigma_w2s=train_sw2, depth=L, sigma_b2=TRAIN_SB2, width=P["train_width"],
                                steps=P["train_steps"], lr=0.01, batch=64, seed=ch.torch_seed("train", L), device=ch.device)
        acc[:, j] = r["accuracy"]
    return {"accuracy": acc, "sigma_w2": train_sw2, "depths": np.array(P["train_depths"])}

tr = ch.cached("trainability", dict(depths=list(P["train_depths"]), sigmas=P["train_sigmas"], steps=P["train_steps"],
                                    width=P["train_width"], sigma_b2=TRAIN_SB2, lr=0.01, batch=64, data="digits-standardised"),
               trainability, code_version=mf.CODE_VERSION)
xi_train = np.array([mf.depth_scales(s, TRAIN_SB2)["xi_c"] for s in tr["sigma_w2"]])
trainable = tr["accuracy"] >= 0.5
# deepest trainable depth per σ_w² (0 if none), and whether the boundary lies inside the grid
l_max = np.array([tr["depths"][row].max() if row.any() else 0 for row in trainable])
inside = (l_max > 0) & (l_max < tr["depths"][-1])
ratio = l_max[inside] / xi_train[inside]
k_found = float(np.exp(np.mean(np.log(ratio)))) if inside.any() else float("nan")

fig, ax = plt.subplots(figsize=(6.5, 4.2))
im = ax.pcolormesh(tr["sigma_w2"], tr["depths"], tr["accuracy"].T, cmap="rocket", vmin=0.1, vmax=1, shading="nearest")
assert TRAIN_SB2 == SB2_XI  # the depth-scale curve computed (and cached) above serves here too
sw_fine, xi_fine = xi["sigma_w2"], xi["xi_c"]
ax.plot(sw_fine, 6 * xi_fine, color="w", ls="--", label=r"$6\,\xi_c$ (Schoenholz et al.)")
if inside.any():
    ax.plot(sw_fine, k_found * xi_fine, color="cyan", label=fr"${k_found:.1f}\,\xi_c$ (fitted here)")
ax.plot(tr["sigma_w2"][l_max > 0], l_max[l_max > 0], "o", color="cyan", ms=4)
ax.set(yscale="log", ylim=(tr["depths"][0] * 0.8, tr["depths"][-1] * 1.25), xlabel=r"$\sigma_w^2$", ylabel="depth $L$",
       title=f"training accuracy after {P['train_steps']} SGD steps")
fig.colorbar(im, ax=ax, label="training accuracy")
ax.legend(loc="upper right", fontsize=8)
ch.figure(fig, "trainability",
          f"Training accuracy of tanh networks of width {P['train_width']} on the digits after {P['train_steps']} steps of SGD, over "
          "(σ_w², depth), σ_b² = 0.05 (the experiment of Schoenholz et al. 2017, Fig. 5, on digits instead of MNIST). Dots: deepest "
          "network reaching 50 % accuracy; lines: multiples of the correlation depth scale ξ_c.",
          arrays=dict(tr) | {"xi_c": xi_train, "l_max": l_max})
pd.DataFrame({"σ_w²": tr["sigma_w2"], "ξ_c": xi_train, "deepest trainable": l_max, "L_max/ξ_c": l_max / xi_train})

# %%
crit_train = mf.critical_sigma_w2(TRAIN_SB2)
best = tr["sigma_w2"][np.argmax(l_max)]
ch.claim("trainable_depth_peaks_at_criticality",
         "The deepest trainable networks sit at the order-to-chaos transition (σ_w² maximising the trainable depth vs the critical σ_w²).",
         measured=float(best), reference=float(crit_train), tol=float(tr["sigma_w2"][1] - tr["sigma_w2"][0]),
         why="the σ_w² grid resolves the peak to one step; ties go to the first maximum",
         source="Schoenholz et al. 2017, §5 and Fig. 5", min_scale="default")
if inside.sum() >= 3:
    fit = linear_fit(np.log(xi_train[inside]), np.log(l_max[inside]))
    slope, slope_tol = fit["slope"], 3 * fit["slope_se"] + 0.5
else:
    slope, slope_tol = float("nan"), 0.0
ch.claim("trainable_depth_proportional_to_xi_c",
         "Where the trainability boundary lies inside the depth grid, the deepest trainable depth grows in proportion to ξ_c "
         "(log-log slope of L_max against ξ_c).",
         measured=slope, reference=1.0, tol=slope_tol,
         why="3 standard errors of the regression slope, plus 0.5 because L_max is only known to within a factor 1.4 (the depth "
             "grid's step), which over the range of ξ_c spanned can tilt the slope by up to ≈ 0.5",
         source="Schoenholz et al. 2017, Fig. 5 (L ∝ ξ_c)", min_scale="default")
ch.claim("short_training_gives_smaller_multiple",
         "With short training the trainability boundary lies at a multiple of ξ_c no larger than the ≈ 6 Schoenholz et al. found "
         "with long training (geometric mean of L_max/ξ_c).",
         measured=k_found, reference=6.0, comparison="le",
         why="a bound, not an estimate: the multiple can only grow with training time; no tolerance",
         source="Schoenholz et al. 2017, §5 (L ≈ 6 ξ_c)", min_scale="default")

# %% [markdown]
# ## What we found
#
# The mean-field maps describe random tanh networks of width ~$10^3$ to within the Monte-Carlo
# error of the simulations at every layer, transient included; the order-to-chaos line passes
# through $\sigma_w^2 = 1$ at zero bias and moves to larger weight variance as the bias grows; a
# circle's length is multiplied by $\sqrt{\chi_1}$ per layer, exponentially in the chaotic phase,
# exactly as Poole et al. describe; the correlation depth scale diverges at the transition, and
# the depth at which tanh networks stop being trainable on the digits follows it, peaking at
# criticality (the multiple of ξ_c we find is reported in the table of the trainability section;
# it is smaller than Schoenholz et al.'s 6 because our training is far shorter).
# One practical point the original figures leave implicit: measured from the points alone, the
# length of the propagated curve saturates within a few layers in the chaotic phase, because the
# polygon through a fixed number of points cannot follow the folds; the exponential growth is
# only visible when the tangent vectors are propagated exactly (or the circle is sampled ever
# more finely).
#
# ## Scorecard

# %%
ch.finish()
