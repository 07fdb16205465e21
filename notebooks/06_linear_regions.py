# ---
# jupyter:
#   jupytext:
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
# # Chapter 6 — Linear regions of ReLU networks
#
# A network built from affine layers and ReLUs computes a continuous, piecewise-linear function.
# Each pattern of active and inactive neurons carves out a convex *activation region* of input
# space on which the network is one affine map; neighbouring activation regions that happen to
# share the same map glue together into a *linear region*, which need not be convex. How many
# pieces does a network actually use? Montúfar et al. (2014) showed that the *maximum* grows
# exponentially with depth. Hanin & Rolnick (2019) argued that this maximum is irrelevant in
# practice: at initialisation, and after training, the number of regions met on a typical 2-D
# slice of input space grows like the square of the number of neurons, hardly depends on depth,
# and rises only modestly during training — a little more when the network memorises random
# labels. The lecture slides of Daróczy (§3) retell this story and add a remark we verify too:
# the *tangent sample sensitivity* ∂²f/∂θ∂x is constant on each activation region.
#
# Everything here is counted exactly: `layerwise.regions` cuts a square of the slice into
# convex polygons, layer by layer and neuron by neuron, in float64.

# %% tags=["parameters", "remove-cell"]
scale = "ci"          # ci | default | paper
seed = 0
device = "auto"       # auto | cpu | cuda  (the counter runs on the CPU in float64)
neurons = None        # total hidden neurons compared at init
depths = None         # depths compared at each number of neurons
n_nets = None         # random networks (and slices) per architecture at init
epochs = None         # training epochs on digits
label_noise = None    # fractions of randomised labels
n_train_seeds = None  # training runs per label-noise fraction
grid_sizes = None     # brute-force grids compared with the exact count

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.collections import PolyCollection

from layerwise import regions as R
from layerwise.chapter import Chapter
from layerwise.params import ParameterError, check_fraction, check_positive_int, resolve

torch.set_num_threads(1)  # tiny matrices: one thread is faster than two on a shared 2-core box

SCALES = {
    "ci": dict(neurons=[24, 48, 96], depths=[1, 2, 3, 6], n_nets=3, epochs=6,
               label_noise=[0.0, 1.0], n_train_seeds=1, grid_sizes=[12, 36, 108, 324]),
    "default": dict(neurons=[48, 96, 192], depths=[1, 2, 3, 4, 6], n_nets=8, epochs=80,
                    label_noise=[0.0, 0.25, 0.5, 1.0], n_train_seeds=2,
                    grid_sizes=[12, 36, 108, 324, 972]),
    "paper": dict(neurons=[48, 96, 192, 384], depths=[1, 2, 3, 4, 6], n_nets=40, epochs=300,
                  label_noise=[0.0, 0.2, 0.4, 0.6, 0.8, 1.0], n_train_seeds=5,
                  grid_sizes=[12, 36, 108, 324, 972, 2916]),
}
P = resolve(SCALES, scale, neurons=neurons, depths=depths, n_nets=n_nets, epochs=epochs,
            label_noise=label_noise, n_train_seeds=n_train_seeds, grid_sizes=grid_sizes)
ARCHS = R.architectures(P["neurons"], P["depths"])  # validates divisibility, before any work
check_positive_int("n_nets", P["n_nets"])
check_positive_int("epochs", P["epochs"])
check_positive_int("n_train_seeds", P["n_train_seeds"])
if not P["label_noise"] or not P["grid_sizes"]:
    raise ParameterError("label_noise and grid_sizes must be non-empty lists")
for f in P["label_noise"]:
    check_fraction("label_noise", f)
for g in P["grid_sizes"]:
    check_positive_int("grid_sizes", g)
ch = Chapter("06_linear_regions", scale=scale, seed=seed, device=device, params=P)
X, y = R.standardized_digits()
SHOW = [[96], [32, 32, 32], [16] * 6]  # architectures drawn in Figure 6.1

# %% [markdown]
# ## The slice and the exact counter
#
# Following Hanin & Rolnick (2019), we look at the plane through three inputs — here three
# handwritten digits (8×8, each pixel standardised over the data set, standing in for MNIST) —
# and at the square in that plane centred on the three points' circumcentre, of half-width
# 1.25 times their circumradius, so that the whole circle through the points is inside.
# Restricted to the plane, the first layer's pre-activations are affine functions of two
# coordinates; on every region already cut by earlier layers, so are all pre-activations of the
# next layer. Each neuron therefore cuts each current convex polygon along one straight line,
# and the polygons are split all at once, neuron after neuron. A vertex closer than 10⁻⁹ of the
# square's diagonal to a cutting line is treated as lying on it, so lines through vertices,
# along edges or skimming slivers never make empty or duplicated pieces.
#
# Before trusting the counts we compare them with the crude alternative: evaluate the
# activation pattern at the cell centres of an n×n grid (n = 12, 36, 108, …, nested) and count
# distinct patterns. A grid can only miss regions,
# never invent them, and must creep up to the exact count as it refines.

# %%
def region_colors(n, rng):
    return plt.cm.tab20(rng.permutation(n) % 20)


def draw_regions(ax, regs, plane, pts=None, colors=None, rng=None):
    polys = [regs.polygon(i) for i in range(len(regs))]
    cols = colors if colors is not None else region_colors(len(regs), rng)
    ax.add_collection(PolyCollection(polys, facecolors=cols, edgecolors="k", linewidths=0.08))
    h = plane.half_width
    ax.set_xlim(-h, h)
    ax.set_ylim(-h, h)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    if pts is not None:
        uv = plane.to_plane(pts)
        ax.plot(uv[:, 0], uv[:, 1], "o", mfc="w", mec="k", ms=5)


def compute_show():
    rng = ch.rng("show")
    t = rng.choice(len(X), 3, replace=False)
    out = {"triple": t}
    for k, w in enumerate(SHOW):
        net = R.he_mlp(64, w, 1, seed=ch.torch_seed("show", k))
        regs = R.activation_regions(net, R.plane_through(X[t]))
        out[f"V{k}"], out[f"n{k}"] = regs.vertices, regs.n_vertices
        out[f"grid{k}"] = np.array([R.grid_count(net, R.plane_through(X[t]), n=g)
                                    for g in P["grid_sizes"]])
        out[f"area{k}"] = regs.areas.sum()
    return out


show = ch.cached("show", {"archs": SHOW, "grid_sizes": P["grid_sizes"]}, compute_show,
                 code_version=R.CODE_VERSION)
plane0 = R.plane_through(X[show["triple"]])
fig, axes = plt.subplots(1, len(SHOW), figsize=(3.2 * len(SHOW), 3.3))
counts_show = []
for k, (w, ax) in enumerate(zip(SHOW, axes)):
    regs = R.Regions(show[f"V{k}"], show[f"n{k}"], np.zeros((len(show[f"n{k}"]), 0), bool),
                     np.zeros((len(show[f"n{k}"]), 1, 3)), tuple(w))
    counts_show.append(len(regs))
    draw_regions(ax, regs, plane0, X[show["triple"]], rng=ch.rng("colors", k))
    ax.set_title(f"{w if len(w) < 4 else f'[{w[0]}]×{len(w)}'}: {len(regs)} regions", fontsize=10)
ch.figure(fig, "slice_regions",
          "Activation regions at initialisation on the plane through three standardised digits "
          "(white dots), one colour per region, for three architectures with 96 neurons each "
          "(compare Hanin & Rolnick 2019, Fig. 1).",
          arrays={"counts": counts_show, **{k: v for k, v in show.items()}})

# %%
grids = np.array([show[f"grid{k}"] for k in range(len(SHOW))])
exact = np.array(counts_show)
ch.claim("grid_below_exact", "No brute-force grid finds more patterns than the exact count",
         measured=bool(np.all(grids <= exact[:, None])), comparison="true",
         why="a grid point lies in one region, so distinct grid patterns ≤ regions exactly; no tolerance",
         source="closed form (definition of the count)")
ch.claim("grid_monotone", "Refining the grid never loses patterns (nested counts rise towards the exact one)",
         measured=bool(np.all(np.diff(grids, axis=1) >= 0)), comparison="true",
         why="the grids are nested (sizes grow by 3×, so every cell centre stays a cell centre): a "
             "finer grid sees every pattern a coarser one saw; exact test",
         source="closed form")
missed = 1 - grids / exact[:, None]
print("fraction of regions the grids miss (rows: architectures, columns: grids):\n", np.round(missed, 4))
ch.claim("grid_converges", "Each refinement of the grid misses strictly fewer regions (all architectures)",
         measured=bool(np.all(np.diff(missed, axis=1) < 0)), comparison="true",
         why="the grids are nested (each 3× finer, cell centres kept), so counts cannot fall; a strict "
             "rise is what convergence from below needs while regions are still missed; exact test",
         source="closed form (nested grids)")
areas = np.array([show[f"area{k}"] for k in range(len(SHOW))])
sq = (2 * plane0.half_width) ** 2
ch.claim("areas_tile", "The regions' areas add up to the square's area",
         measured=float(np.abs(areas / sq - 1).max()), reference=0.0, tol=1e-9, comparison="abs",
         why="float64 shoelace sums over ≤ 10⁴ polygons: rounding ~10⁻¹³, tolerance 10⁻⁹ leaves room "
             "for vertices moved by the 10⁻⁹ snapping tolerance",
         source="closed form")

# %% [markdown]
# The three pictures look alike: the shallow network's lines are straight across the square,
# the deeper networks' later neurons bend at earlier boundaries, but the density of pieces is
# about the same. The next experiment quantifies it.
#
# ## How many regions at initialisation?
#
# Weights are He-normal, N(0, 2/fan-in); biases are N(0, 10⁻⁶) — tiny, but not zero, so that
# no two boundaries coincide (Hanin & Rolnick 2019, §5 and Appendix D). For several total
# numbers of neurons N we compare depths at equal N ([N], [N/2, N/2], …), each on
# `n_nets` independent networks and slices (the k-th slice is shared by all architectures,
# which makes the depth comparison paired). Their Theorem 5 bounds the expected number of
# regions in a 2-D cube by
#
# $$\mathbb E\,\#\{\text{regions}\} \;\lesssim\; \frac{(T\,N)^{n_{\rm in}}}{n_{\rm in}!}, \qquad n_{\rm in} = 2,$$
#
# for a constant $T$; for $N = 96$ with $T = 1$ that is $96^2/2 = 4608$ {cite}`hanin2019complexity`.

# %%
cfg = {"archs": ARCHS, "n_nets": P["n_nets"], "data": "digits-standardised", "bias_var": 1e-6}
t0 = time.perf_counter()
init = ch.cached("init_counts", cfg, lambda: {"counts": R.init_counts(X, ARCHS, P["n_nets"], ch.torch_seed("init"))},
                 code_version=R.CODE_VERSION)
counts = init["counts"].reshape(len(P["neurons"]), len(P["depths"]), P["n_nets"]).astype(float)
mean = counts.mean(-1)
se = counts.std(-1, ddof=1) / np.sqrt(P["n_nets"]) if P["n_nets"] > 1 else np.zeros_like(mean)
Ns = np.array(P["neurons"], float)

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.5, 3.6))
for d_i, d in enumerate(P["depths"]):
    ax1.errorbar(Ns, mean[:, d_i], yerr=se[:, d_i], marker="o", capsize=2, label=f"depth {d}")
ax1.plot(Ns, Ns**2 / 2, "k--", lw=1, label="N²/2")
ax1.set_xscale("log")
ax1.set_yscale("log")
ax1.set_xlabel("hidden neurons N")
ax1.set_ylabel("activation regions in the square")
ax1.legend(fontsize=8)
for n_i, N in enumerate(P["neurons"]):
    ax2.errorbar(P["depths"], mean[n_i] / N**2, yerr=se[n_i] / N**2, marker="o", capsize=2, label=f"N = {N}")
ax2.set_xlabel("depth (N/depth neurons per layer)")
ax2.set_ylabel("regions / N²")
ax2.set_ylim(bottom=0)
ax2.legend(fontsize=8)
ch.figure(fig, "counts_vs_neurons",
          "Activation regions at initialisation against the number of neurons (left, log–log, "
          "with N²/2) and against depth at a fixed number of neurons (right, normalised by N²); "
          "mean ± s.e. over random networks and slices (Hanin & Rolnick 2019, Fig. 3).",
          arrays={"neurons": Ns, "depths": P["depths"], "counts": counts})

# %%
# growth exponent: slope of log(mean count) against log N, per depth, then averaged
logc = np.log(counts)
slopes = np.array([np.polyfit(np.log(Ns), logc[:, d_i].mean(-1), 1)[0] for d_i in range(len(P["depths"]))])
boot = ch.rng("boot")
bs = []
for _ in range(400):
    idx = boot.integers(0, P["n_nets"], P["n_nets"])
    bs.append(np.mean([np.polyfit(np.log(Ns), logc[:, d_i][:, idx].mean(-1), 1)[0]
                       for d_i in range(len(P["depths"]))]))
slope_se = float(np.std(bs))
ch.claim("quadratic_growth", "Regions grow like N²: log–log slope against the number of neurons (mean over depths)",
         measured=float(slopes.mean()), reference=(1.5, 2 + 3 * slope_se), comparison="between",
         why=f"Hanin & Rolnick predict exponent n_in = 2; a linear term (~N lines crossing) lowers a "
             f"finite-range slope, so we test the window between 1.5 (half-way to linear growth) and "
             f"2 + 3·s.e., s.e. = {slope_se:.3f} by bootstrap over the {P['n_nets']} networks",
         source="Hanin & Rolnick 2019, Thm. 5 / Eq. (5)")
N_big = int(Ns[-1])
ratio = mean[-1, -1] / mean[-1, 0]
r_samples = counts[-1, -1] / counts[-1, 0]
r_se = float(r_samples.std(ddof=1) / np.sqrt(len(r_samples))) if P["n_nets"] > 1 else 0.0
mont = R.montufar_max([N_big // P["depths"][-1]] * P["depths"][-1]) / R.montufar_max([N_big])
ch.claim("depth_flat", f"At N = {N_big}, depth {P['depths'][-1]} has about as many regions as depth 1 (ratio of means)",
         measured=float(ratio), reference=(0.5, 2.0), comparison="between",
         why=f"the question is polynomial vs exponential in depth: Montúfar et al.'s maximal counts for "
             f"these two architectures differ by a factor {mont:.2g}; a factor-2 window separates the two "
             f"and is wider than 3× the paired s.e. of the ratio ({r_se:.3f}) at this scale",
         source="Hanin & Rolnick 2019, Fig. 3; Montúfar et al. 2014, Thm. 4", min_scale="default")
i96 = [i for i, w in enumerate(ARCHS) if w == [32, 32, 32]]
if i96:
    c96 = init["counts"][i96[0]].astype(float)
    se96 = c96.std(ddof=1) / np.sqrt(len(c96)) if len(c96) > 1 else 0.0
    ch.claim("bound_32x3", "[32, 32, 32] at init: mean count below (T·N)²/2 with T = 1, i.e. 96²/2 = 4608",
             measured=float(c96.mean()), reference=4608.0, tol=3 * se96, comparison="le",
             why=f"3 standard errors of the mean over {len(c96)} networks/slices ({se96:.0f}); T = 1 is the "
                 "slides' '(#neurons)²/2', the theorem only asserts some constant T",
             source="Hanin & Rolnick 2019, Thm. 5 (n_in = 2); Daróczy, slides §3")
print("mean counts (rows N, columns depth):\n", np.round(mean).astype(int))
print("T_eff = sqrt(2·count)/N:\n", np.round(np.sqrt(2 * mean) / Ns[:, None], 3))

# %% [markdown]
# Two caveats colour the comparison with N²/2. First, the count is not scale-free: it depends
# on how large the square is in units of the network's own length scale, here set by the
# spread of standardised digits. Second, the quadratic law is the large-N behaviour of
# 1 + αN + βN² (lines, plus their crossings); at N of a few dozen the linear term still shows,
# which is why the fitted exponent sits a little below 2. Neither caveat touches the main point:
# depth at a fixed budget of neurons changes the count by tens of percent, where the
# *maximum* possible count changes by many orders of magnitude.
#
# ## Through training
#
# We train a [32, 32, 32] network on the 1 797 digits (Adam, learning rate 10⁻³, batches of 64,
# cross-entropy), with the true labels and with a fraction of labels replaced by random ones,
# and count the regions on the plane through three training digits along the way. Runs with the
# same seed share the slice, the initial network and the batch order, so the label noise is the
# only difference between them.

# %%
tcfg = {"widths": [32, 32, 32], "epochs": P["epochs"], "label_noise": P["label_noise"],
        "seeds": P["n_train_seeds"], "lr": 1e-3, "batch": 64, "checkpoints": 8}


def compute_train():
    out = {}
    for a, f in enumerate(P["label_noise"]):
        for s in range(P["n_train_seeds"]):
            r = R.train_counts(X, y, [32, 32, 32], epochs=P["epochs"], n_checkpoints=8,
                               label_noise=f, seed=ch.torch_seed("train", s), batch=64)
            for k, v in r.items():
                out[f"{k}_{a}_{s}"] = v
    return out


train = ch.cached("training", tcfg, compute_train, code_version=R.CODE_VERSION)
L, S = len(P["label_noise"]), P["n_train_seeds"]
ep = train["epoch_0_0"]
tc = np.array([[train[f"count_{a}_{s}"] for s in range(S)] for a in range(L)], float)  # (L, S, T)
acc = np.array([[train[f"acc_{a}_{s}"] for s in range(S)] for a in range(L)])
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.5, 3.5))
cols = plt.cm.viridis(np.linspace(0, 0.9, L))
for a, f in enumerate(P["label_noise"]):
    ax1.plot(ep, (tc[a] / tc[a, :, :1]).mean(0), "o-", color=cols[a], label=f"{f:.0%} random labels")
    ax2.plot(ep, acc[a].mean(0), "o-", color=cols[a])
ax1.axhline(1, color="k", lw=0.8)
ax1.set_xlabel("epoch")
ax1.set_ylabel("regions / regions at init")
ax1.legend(fontsize=8)
ax2.set_xlabel("epoch")
ax2.set_ylabel("training accuracy (on the labels used)")
ch.figure(fig, "counts_training",
          "Activation regions of a [32, 32, 32] network on a digits slice during training with "
          "Adam, relative to initialisation, for several fractions of randomised labels (left), "
          "and the training accuracy (right) (Hanin & Rolnick 2019, Figs. 5–6; Daróczy, slides §3).",
          arrays={"epoch": ep, "counts": tc, "acc": acc, "label_noise": P["label_noise"]})

# %%
growth = tc[:, :, -1] / tc[:, :, 0]
g0 = growth[0]
print("final/initial counts per label-noise fraction:", dict(zip(P["label_noise"], np.round(growth.mean(1), 3))))
ch.claim("train_far_from_max", "After training, the count is far below Montúfar et al.'s maximum for [32,32,32] "
         "(ratio final count / maximal count, largest over runs)",
         measured=float((tc[:, :, -1] / R.montufar_max([32, 32, 32])).max()), reference=0.01, comparison="le",
         why="'far' is taken as two orders of magnitude; the maximum (≈3.5·10⁷ for the whole plane) exceeds "
             "the measured counts by more than that at every scale, so the verdict does not hinge on noise",
         source="Montúfar et al. 2014, Thm. 4; Hanin & Rolnick 2019, §5")
ch.claim("train_grows", "Training with true labels increases the count (final/initial, mean over runs)",
         measured=float(g0.mean()), reference=1.0, tol=0.0, comparison="ge",
         why="the paper's statement is a direction; graded as a sign test on the mean over runs, spread "
             f"{(g0.std(ddof=1) if len(g0) > 1 else 0):.2f} reported to judge it",
         source="Hanin & Rolnick 2019, Fig. 5; Daróczy, slides §3", min_scale="default")
ch.claim("train_modest", "Training with true labels changes the count modestly (final/initial, mean over runs)",
         measured=float(g0.mean()), reference=(0.5, 3.0), comparison="between",
         why="'modest' = within a factor 2–3 either way of the initial count, against a possible growth "
             "factor ~10⁴ (maximum/initial); run-to-run spread "
             f"{(g0.std(ddof=1) if len(g0) > 1 else 0):.2f} is far inside the window",
         source="Hanin & Rolnick 2019, Fig. 5", min_scale="default")
if L > 1:
    # paired: runs with the same seed share slice, initial network and batch order
    dg = growth[-1] - growth[0]
    dse = float(dg.std(ddof=1) / np.sqrt(S)) if S > 1 else float("nan")
    ch.claim("memorisation_more", f"Memorising ({P['label_noise'][-1]:.0%} random labels) raises the count more than "
             "learning the true labels (difference of final/initial ratios, paired runs, mean)",
             measured=float(dg.mean()), reference=0.0, tol=0.0, comparison="ge",
             why=f"a sign test on the paired difference; its standard error over {S} pairs is {dse:.3f}, "
                 "reported to judge the margin",
             source="Hanin & Rolnick 2019, Fig. 6; Daróczy, slides §3", min_scale="default")

# %% [markdown]
# ## Activation regions versus linear regions
#
# Distinct activation patterns usually mean distinct affine maps, so on random networks the
# two counts coincide. They part when a whole layer switches off: every activation region on
# which a layer is silent computes the same constant, whatever the earlier layers do, and they
# all fuse into one linear region (Daróczy, slides §3). A network with a narrow bottleneck
# makes this visible. We merge activation regions that share an edge and have the same affine
# map (relative tolerance 10⁻⁹) and measure how far the largest linear region is from convex:
# one minus its area over the area of its convex hull.

# %%
def compute_bottleneck():
    t = ch.rng("bottleneck").choice(len(X), 3, replace=False)
    net = R.he_mlp(64, [24, 2, 24], 1, seed=ch.torch_seed("bottleneck"))
    regs = R.activation_regions(net, R.plane_through(X[t]))
    lab = R.linear_regions(regs)
    return {"triple": t, "V": regs.vertices, "n": regs.n_vertices, "labels": lab,
            "patterns": regs.patterns, "maps": regs.maps}


bn = ch.cached("bottleneck", {"widths": [24, 2, 24]}, compute_bottleneck, code_version=R.CODE_VERSION)
bregs = R.Regions(bn["V"], bn["n"], bn["patterns"], bn["maps"], (24, 2, 24))
lab = bn["labels"]
sizes = np.bincount(lab)
big = int(np.argmax(np.bincount(lab, weights=bregs.areas) * (sizes > 1)))
members = np.flatnonzero(lab == big)
deficit = R.convex_deficit(bregs, members)
planeb = R.plane_through(X[bn["triple"]])
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(8, 3.9))
draw_regions(ax1, bregs, planeb, X[bn["triple"]], rng=ch.rng("colors", "bn"))
ax1.set_title(f"{len(bregs)} activation regions", fontsize=10)
lc = region_colors(lab.max() + 1, ch.rng("colors", "lin"))[lab]
lc[members] = (0.1, 0.1, 0.1, 1.0)
draw_regions(ax2, bregs, planeb, X[bn["triple"]], colors=lc)
ax2.set_title(f"{lab.max() + 1} linear regions (largest, dark: {len(members)} pieces)", fontsize=10)
ch.figure(fig, "activation_vs_linear",
          "A [24, 2, 24] network at initialisation: activation regions (left) and the linear "
          "regions they merge into (right); the dark linear region, made of many convex activation "
          "regions, is not convex (Daróczy, slides §3; Hanin & Rolnick 2019, §2).",
          arrays={"labels": lab, "members": members, "areas": bregs.areas})
ch.claim("linear_le_activation", "Linear regions never outnumber activation regions (bottleneck net)",
         measured=bool(lab.max() + 1 <= len(bregs)), comparison="true",
         why="merging can only reduce the count; exact", source="Hanin & Rolnick 2019, §2")
ch.claim("nonconvex_linear_region", "The largest merged linear region is not convex (1 − area/hull area)",
         measured=float(deficit), reference=0.01, comparison="ge",
         why="a convex union has deficit 0 up to rounding (~10⁻¹²); 0.01 is a visible notch, far above rounding",
         source="Daróczy, slides §3 ('No, they are not!')")

# %% [markdown]
# ## Tangent sample sensitivity is constant on activation regions
#
# Daróczy's Definition 3.1 {cite}`daroczy2020information` calls
#
# $$\mathrm{Sens}_{\tan}(x;\theta) = \frac{\partial^2 f(x;\theta)}{\partial\theta\,\partial x}$$
#
# the tangent sample sensitivity:
# how the gradient with respect to the parameters turns as the input moves. Lemma 3.1 states that
# it is the same at every point of an activation region. The reason is short: with the pattern
# fixed, ∂f/∂θ is an affine function of x (for a weight of layer l it is the product of the
# backward signal, constant on the region, and the layer's input, affine in x), so its
# x-derivative is constant. We check it on the trained network (true labels), for the output of
# the first point's class, restricted to the two directions of the slice: several random points
# inside each of the largest regions against the region's centroid, and different regions
# against each other. Then, since Sens is a function of the region, its distribution over the
# square is the distribution over regions weighted by area (the slides' identity
# $\mathbb E_x \|\mathrm{Sens}(x)\|^2 = \mathbb E_A \|\mathrm{Sens}(A)\|^2$, $A$ a region drawn with
# probability proportional to its area), which we compare with a Monte-Carlo average over uniform points.

# %%
dims = [64, 32, 32, 32, 10]


def compute_sens():
    w = R.unflatten(train["weights_0_0"], dims)
    t = train["triple_0_0"]
    plane = R.plane_through(X[t])
    regs = R.activation_regions(w, plane)
    out = R.sensitivity_by_region(w, plane, regs, output=int(y[t[0]]), check=30, seed=ch.torch_seed("sens"))
    u = ch.rng("mc").uniform(-plane.half_width, plane.half_width, (400, 2))
    S = R.tangent_sensitivity(w, plane.to_input(u), directions=plane.basis, output=int(y[t[0]]))
    return {**out, "areas": regs.areas, "mc_sq": (S**2).sum((1, 2)), "V": regs.vertices, "n": regs.n_vertices}


sens = ch.cached("sensitivity", {"train": tcfg, "check": 30, "mc": 400}, compute_sens, code_version=R.CODE_VERSION)
wts = sens["areas"] / sens["areas"].sum()
by_region = float((wts * sens["norm"] ** 2).sum())
mc = sens["mc_sq"]
mc_mean, mc_se = float(mc.mean()), float(mc.std(ddof=1) / np.sqrt(len(mc)))
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.5, 3.7))
sregs = R.Regions(sens["V"], sens["n"], np.zeros((len(sens["n"]), 0), bool), np.zeros((len(sens["n"]), 1, 3)), ())
nrm = plt.Normalize(sens["norm"].min(), sens["norm"].max())
planes = R.plane_through(X[train["triple_0_0"]])
draw_regions(ax1, sregs, planes, X[train["triple_0_0"]], colors=plt.cm.magma(nrm(sens["norm"])))
fig.colorbar(plt.cm.ScalarMappable(nrm, "magma"), ax=ax1, label="‖Sens_tan‖_F on the region")
ax2.hist(sens["norm"], bins=40, weights=wts, color="C0", alpha=0.8, label="area-weighted (= uniform x)")
ax2.hist(sens["norm"], bins=40, weights=np.full(len(wts), 1 / len(wts)), histtype="step", color="C1", lw=1.5,
         label="each region once")
ax2.set_xlabel("‖∂²f/∂θ∂x‖_F (slice directions)")
ax2.set_ylabel("fraction")
ax2.legend(fontsize=8)
ch.figure(fig, "tangent_sensitivity",
          "Tangent sample sensitivity of the trained [32, 32, 32] network on the slice: one value per "
          "activation region (left) and its distribution over regions, by area and by count (right) "
          "(Daróczy, slides §3, Lemma 3.1).",
          arrays={"norm": sens["norm"], "areas": sens["areas"], "within": sens["within"], "between": sens["between"]})
ch.claim("sens_constant", "Sens_tan is identical at random points of the same activation region (largest relative difference, 30 largest regions)",
         measured=float(sens["within"].max()), reference=1e-10, comparison="le",
         why="float64 forward-mode derivatives of the same products: differences can only come from rounding "
             "(~10⁻¹⁵ relative); 10⁻¹⁰ leaves 5 orders of magnitude",
         source="Daróczy, slides §3, Lemma 3.1")
ch.claim("sens_varies", "…but differs between regions (smallest relative difference to another checked region, median)",
         measured=float(np.median(sens["between"])), reference=1e-3, comparison="ge",
         why="if Sens were the same everywhere the lemma would be empty; a change of 10⁻³ is ≥ 10⁷× the rounding level",
         source="Daróczy, slides §3")
ch.claim("sens_identity", "E_x‖Sens‖² over uniform points equals the area-weighted average over regions",
         measured=mc_mean, reference=by_region, tol=3 * mc_se, comparison="abs",
         why=f"the Monte-Carlo mean over {len(mc)} uniform points has standard error {mc_se:.3g}; 3 s.e.",
         source="Daróczy, slides §3, consequence of Lemma 3.1")

# %% [markdown]
# ## What we find, and where we differ
#
# The exact counter agrees with brute force wherever brute force can see, and tiles the square
# to rounding error. At initialisation the number of regions on a data slice grows close to
# quadratically in the number of neurons and moves only by tens of percent when the same
# neurons are spread over one to six layers, as Hanin & Rolnick (2019) report; the exponential
# maximum of Montúfar et al. (2014) is nowhere near. Two points deserve care. The constant in
# front of N² is a property of the slice as much as of the network: with pixels standardised
# over the data set, our [32, 32, 32] networks show a few thousand regions, below the slides'
# (#neurons)²/2 = 4608; on raw, unstandardised digits (all pixels ≥ 0, so the plane passes
# far from the origin through which all near-bias-free first-layer hyperplanes pass) the count
# falls several-fold. And the training results are given with the number of runs we could
# afford: where the scorecard marks a claim as skipped at `ci`, it needs the longer training of
# `default` to mean anything.
#
# **Where we disagree.** Hanin & Rolnick (2019) and the slides report that the count *increases*
# during training, a little more with memorisation. In our runs (digits, [32, 32, 32], Adam
# 10⁻³, 80 epochs at `default`) memorisation does raise the count relative to the true-label
# runs, and the change stays modest in every case — but with true labels the count ends
# slightly *below* its initial value (ratio ≈ 0.9), so the `train_grows` claim fails at `default`.
# We have not pinned down why. Candidates we could not test in this chapter's budget: the
# much smaller data set (1 797 8×8 digits instead of 60 000 MNIST images, so the network fits
# it within a few epochs and then stops reshaping the slice), our per-pixel standardisation,
# and training length (the paper trains longer). The `paper` scale trains for 300 epochs with
# five seeds per noise level to settle it.

# %%
ch.finish()
