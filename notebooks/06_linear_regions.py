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
# # Linear regions of ReLU networks
#
# A network built from affine layers and ReLUs computes a continuous, piecewise-linear function.
# Each pattern of active and inactive neurons carves out a convex *activation region* of input
# space on which the network is one affine map; neighbouring activation regions that happen to
# share the same map glue together into a *linear region*, which need not be convex. How many
# pieces does a network actually use? {cite:t}`montufar2014number` showed that the *maximum*
# grows exponentially with depth. {cite:t}`hanin2019deep` argued that this maximum is irrelevant
# in practice: at initialisation, and after training, the number of regions met on a typical
# 2-D slice of input space grows like the square of the number of neurons, hardly depends on
# depth, and rises only modestly during training — a little more when the network memorises
# random labels (along 1-D lines, {cite:t}`hanin2019complexity` find counts linear in the number
# of neurons). The lecture slides of {cite:t}`daroczy2020information`
# (§3) retell this story and add a remark we verify too: the *tangent sample sensitivity*
# ∂²f/∂θ∂x is constant on each activation region.
#
# ## Set-up
#
# Everything here is counted exactly: `layerwise.regions` cuts a square of the slice into
# convex polygons, layer by layer and neuron by neuron, in float64. The inputs are the 1 797
# handwritten digits shipped with scikit-learn (8×8, each pixel standardised over the data set),
# standing in for MNIST. The parameters below set the numbers of neurons and depths compared at
# initialisation, the number of random networks per architecture, and the length and number of
# the training runs; the scorecard says which claims each scale can decide.

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
import numpy as np
import torch

from layerwise import regions as R
from layerwise.chapter import Chapter
from layerwise.claims import accepted_set, grade, quantile
from layerwise.figures import ch06 as F
from layerwise.params import resolve_from
from layerwise.stats import estimate

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
P = resolve_from(SCALES, scale, globals())
ARCHS = R.check_chapter_params(P)  # validates (divisibility, fractions, sizes), before any work
ch = Chapter("06_linear_regions", scale=scale, seed=seed, device=device, params=P)

# %%
X, y = R.standardized_digits()
SHOW = [[96], [32, 32, 32], [16] * 6]  # architectures drawn in the first figure
CONF = 0.99  # confidence level of the claims' intervals (the ledger's default)


def outcome(measured, se, dof, comparison, reference, tol=0.0):
    """The outcome the ledger will give a claim (to write its note before recording it)."""
    half = 0.0 if se is None else quantile(CONF, dof) * se
    return grade((measured - half, measured + half), accepted_set(comparison, reference, tol))

# %% [markdown]
# ## The slice and the exact counter
#
# Following {cite:t}`hanin2019deep`, we look at the plane through three inputs — here three
# digits — and at the square in that plane centred on the three points' circumcentre, of
# half-width 1.25 times their circumradius, so that the whole circle through the points is
# inside. Restricted to the plane, the first layer's pre-activations are affine functions of two
# coordinates; on every region already cut by earlier layers, so are all pre-activations of the
# next layer. Each neuron therefore cuts each current convex polygon along one straight line,
# and the polygons are split all at once, neuron after neuron. A vertex closer than 10⁻⁹ of the
# square's diagonal to a cutting line is treated as lying on it, so lines through vertices,
# along edges or skimming slivers never make empty or duplicated pieces. (That the pieces tile
# the square, that merging never adds pieces, and that hand-built networks give their known
# counts are unit tests of the package, not claims of this chapter.)
#
# Before trusting the counts we compare them with the crude alternative: evaluate the
# activation pattern at the cell centres of an n×n grid (n growing by factors of 3, so the grids
# are nested) and count distinct patterns. A grid can only miss regions, never invent them, and
# must creep up to the exact count as it refines.

# %%
t_show = ch.rng("show").choice(len(X), 3, replace=False)
show = ch.cached_call(R.slice_demo, points=X[t_show], archs=SHOW, grid_sizes=P["grid_sizes"],
                      seeds=[ch.torch_seed("show", k) for k in range(len(SHOW))])
exact, gv = show["counts"], R.grid_vs_exact(show["counts"], show["grid_counts"])
plane0 = R.plane_through(X[t_show])
fig = F.slice_regions([(show[f"V{k}"], show[f"n{k}"]) for k in range(len(SHOW))], SHOW, plane0.half_width,
                      plane0.to_plane(X[t_show]), P["grid_sizes"], gv["found"],
                      [ch.rng("colors", k) for k in range(len(SHOW))])
ch.figure(fig, "slice_regions",
          "Activation regions at initialisation on the plane through three standardised digits "
          "(white dots), one colour per region, for three architectures with 96 neurons each, and "
          "the fraction of them that an n×n grid of activation patterns finds (bottom right) "
          "(compare Hanin & Rolnick 2019, Fig. 1).",
          arrays={"grid_sizes": P["grid_sizes"], "triple": t_show, **show})
ch.glue("grid_finest", int(P["grid_sizes"][-1]))
ch.glue("show_counts", f"{', '.join(str(int(c)) for c in exact[:-1])} and {int(exact[-1])}")
ch.glue("grid_found_finest", float(gv["found"][:, -1].min()))

# %%
ch.claim("grid_below_exact", "No brute-force grid finds more activation patterns than the exact count",
         kind="checks", measured=gv["below"], comparison="true",
         why="two independent computations: the polygon splitter and patterns evaluated pointwise; a grid "
             "point lies in one region, so distinct grid patterns ≤ regions — a grid count above the exact "
             "one would expose a region the splitter missed; exact test, no margin",
         source="ours: definition of the count (consistency of two computations)")
ch.claim("grid_converges", "Each 3× refinement of the grid finds strictly more patterns, until it finds all "
         "(all three architectures)",
         kind="checks", measured=gv["refines"], comparison="true",
         why="nested grids cannot lose patterns (unit-tested); a strict rise at every step while regions are "
             "still missed is what convergence from below to the exact count needs — a grid stalling below it "
             "would point to regions the exact counter invented; exact test, no margin",
         source="ours: nested grids against the exact count")

# %% [markdown]
# The three pictures look alike: the shallow network's lines are straight across the square,
# the deeper networks' later neurons bend at earlier boundaries, but the numbers of pieces are
# comparable ({glue}`show_counts`). The finest grid ({glue}`grid_finest` cells per side) finds at least
# {glue}`grid_found_finest` of the exact count for every architecture; what it misses are regions
# that contain none of its points, slivers and small pieces ({numref}`fig-06-slice-regions`, bottom right). The next experiment
# quantifies how the count depends on the number of neurons and on depth.

# %% [markdown]
# ## How many regions at initialisation?
#
# Weights are He-normal, N(0, 2/fan-in); biases are N(0, 10⁻⁶) — tiny, but not zero, so that
# no two boundaries coincide ({cite:t}`hanin2019deep`, §5 and Appendix D). For several total
# numbers of neurons N we compare depths at equal N ([N], [N/2, N/2], …), each on `n_nets`
# independent networks and slices (the k-th slice is shared by all architectures, which makes the
# depth comparison paired). Their Theorem 5, as the slides restate it, bounds the expected number
# of regions *per unit volume* of any cube $C$ of side larger than some $\delta_0$:
#
# $$\frac{\mathbb E\,\#\{\text{regions in } C\}}{\mathrm{vol}(C)} \;\le\; \frac{(T\,N)^{n_{\rm in}}}{n_{\rm in}!}, \qquad n_{\rm in} = 2,$$
#
# where $T$ depends on a bound $C_{\rm grad}$ on the neurons' gradients and a bound $C_{\rm bias}$ on
# the density of the biases, and is not given as a number.
#
# We therefore do **not** grade the constant. A count in our square is not a count per unit area
# (the square's size, in input units, is set by the three digits and changes from slice to
# slice); $T$ is unknown, and with biases of variance 10⁻⁶ their density bound $C_{\rm bias}$ is
# about 400, far from any "$T = 1$"; and the slides' (#neurons)²/2 is only the leading term of
# the one-layer count — N lines in general position that all cross a region cut it into up to
# 1 + N + N(N − 1)/2 pieces, which is already above N²/2. What the theorem does fix, and what
# Hanin & Rolnick's experiments show to be tight, is the *exponent*: the count grows like
# $N^{n_{\rm in}} = N^2$, at every depth. That is what we grade, depth by depth.

# %%
init = ch.cached_call(R.init_count_table, X=X, neurons=P["neurons"], depths=P["depths"], n_nets=P["n_nets"],
                      seed=ch.torch_seed("init"))
counts = init["counts"].astype(float)  # (neurons, depths, networks)
mean, se = R.count_summary(counts)
Ns = np.array(P["neurons"], float)
fig = F.counts_vs_neurons(Ns, P["depths"], mean, se)
ch.figure(fig, "counts_vs_neurons",
          "Activation regions at initialisation against the number of neurons N (left, log–log, "
          "with N²/2 for scale) and against depth at a fixed N (right, divided by N²); mean ± "
          "standard error over random networks and slices (Hanin & Rolnick 2019, Fig. 3).",
          arrays={"neurons": Ns, "depths": P["depths"], "counts": counts})

# %%
# growth exponent per depth: least squares of log(count) on log N over every network
slopes = {d: R.growth_exponent(P["neurons"], counts[:, d_i]) for d_i, d in enumerate(P["depths"])}
for d, g in slopes.items():
    status = outcome(g["slope"], g["se"], g["dof"], "abs", 2.0, 0.5)
    w_small = int(Ns[0]) // d
    ch.claim(f"quadratic_growth_d{d}",
             f"Depth {d}: regions grow like N² (log–log slope of the count against the number of neurons, "
             f"N = {', '.join(str(int(n)) for n in Ns)})",
             kind="reproduces", measured=g["slope"], se=g["se"], dof=g["dof"],
             reference=2.0, tol=0.5, comparison="abs",
             why="Hanin & Rolnick's exponent is n_in = 2; the margin ±0.5 is the set of slopes closer to 2 than "
                 "to the neighbouring integer exponents 1 (a count set by the lines alone) and 3 — finite-N "
                 "corrections (the linear term of 1 + αN + βN², narrow layers at small N) must stay inside it. "
                 f"Standard error of the slope from the scatter of the {g['points']} networks about the fit, "
                 f"dof = points − 2 = {g['dof']} (slices are shared across N, which leaves the slope's error "
                 "about as is: a common per-slice offset cancels in a slope)",
             source="Hanin & Rolnick 2019 (NeurIPS), Thm. 5, Eq. (5), and its tightness in their 2-D "
                    "cross-section experiments (Fig. 3); Daróczy, slides §3",
             note="" if status == "pass" else
                  f"the interval is too wide to decide at {P['n_nets']} networks per architecture"
                  + (f"; at N = {int(Ns[0])} this depth has only {w_small} neurons per layer, whose counts "
                     "scatter widely and drag the small-N end down" if w_small <= 8 else ""))

# %%
ch.glue("slopes_by_depth", "; ".join(f"{s['slope']:.2f} ± {s['se']:.2f} at depth {d}" for d, s in slopes.items()))
ws = R.worst_slope(slopes, P["neurons"], P["depths"], mean,
                   all(c.status == "pass" for c in ch.ledger.claims if c.id.startswith("quadratic_growth_d")))
comment = {
    "all_pass": "like every depth, its whole 99 % interval lies within 2 ± 0.5",
    "narrow": f"at N = {int(Ns[0])} it has only {ws['w_small']} neurons per layer, and such narrow layers can "
              f"switch a whole layer off over much of the square, so its mean count there ({ws['c_w']:.0f}, against "
              f"{ws['c_1']:.0f} for one layer of {int(Ns[0])} neurons) is depressed and the slope from that end is "
              "steep — a small-width effect that the wider layers at larger N leave behind, not growth beyond N²",
    "below": "its slope is below 2, as the linear term of 1 + αN + βN² (lines, plus their crossings) makes a "
             "finite-range slope",
    "above": "its slope is above 2, but its interval is too wide to decide at this scale",
}[ws["case"]]
ch.glue("slope_worst_depth", int(ws["depth"]))
ch.glue("slope_worst", ws["slope"], se=ws["se"], digits=3)
ch.glue("slope_comment", comment)

# %%
dr = R.depth_ratio(counts, P["neurons"], P["depths"])  # paired by slice; jackknife over slices
N_big, d_deep, mont = dr["n_big"], dr["d_deep"], dr["montufar"]
r_kw = dict(se=dr["se"], dof=dr["dof"]) if dr["se"] is not None else {}
status = outcome(dr["ratio"], dr["se"], dr["dof"], "between", (0.5, 2.0))
ch.claim("depth_flat", f"At N = {N_big}, depth {d_deep} has about as many regions as depth 1 (ratio of mean counts)",
         kind="reproduces", measured=dr["ratio"], reference=(0.5, 2.0), comparison="between", **r_kw,
         why=f"the question is polynomial vs exponential in depth: Montúfar et al.'s maximal counts for these "
             f"two architectures differ by a factor {mont:.2g}; 'about as many' is declared as within a factor 2 "
             f"either way. Jackknife standard error over the {P['n_nets']} slices (paired: both architectures "
             f"see the same slice), dof = {P['n_nets'] - 1}",
         source="Hanin & Rolnick 2019 (NeurIPS), Fig. 3; Montúfar et al. 2014, Thm. 4",
         note="" if status == "pass" else f"{P['n_nets']} slices leave the ratio's interval wider than the window")
ch.glue("n_big", N_big)
ch.glue("d_deep", int(d_deep))
ch.glue("depth_ratio", dr["ratio"], se=r_kw.get("se"), digits=3)
ch.glue("montufar_factor", float(mont), digits=2)
ch.glue("frac_n2", f"{(mean[-1] / (Ns[-1] ** 2 / 2)).min():.2f}–{(mean[-1] / (Ns[-1] ** 2 / 2)).max():.2f}")

# %% [markdown]
# The fitted exponents (slope ± standard error) are {glue}`slopes_by_depth`. The depth farthest
# from 2 is depth {glue}`slope_worst_depth`, at {glue}`slope_worst`: {glue}`slope_comment`.
# In general two finite-size effects pull in opposite directions: the quadratic law is the
# large-N behaviour of 1 + αN + βN², whose linear term lowers a slope fitted over a finite range,
# while narrow deep layers lower the small-N counts and raise it.
#
# At N = {glue}`n_big`, depth {glue}`d_deep` has {glue}`depth_ratio` times as many regions as
# depth 1, where the *maximum* possible counts of the two architectures differ by a factor
# {glue}`montufar_factor`; the mean counts at that N are {glue}`frac_n2` times N²/2 across the
# depths. The count is not scale-free — it depends on how large the square is in units of the
# network's own length scale, here set by the spread of standardised digits — so that fraction
# describes this slice family, not a constant of the theory.

# %% [markdown]
# ## Through training
#
# We train a [32, 32, 32] network on the 1 797 digits (Adam, learning rate 10⁻³, batches of 64,
# cross-entropy), with the true labels and with a fraction of labels replaced by random ones,
# and count the regions on the plane through three training digits along the way. Runs with the
# same seed share the slice, the initial network and the batch order, so the label noise is the
# only difference between them.

# %%
L, S = len(P["label_noise"]), P["n_train_seeds"]
train = ch.cached_call(R.train_runs, X=X, y=y, widths=[32, 32, 32], epochs=P["epochs"], label_noise=P["label_noise"],
                       seeds=[ch.torch_seed("train", s) for s in range(S)], n_checkpoints=8, lr=1e-3, batch=64)
ep, tc, acc = train["epoch"][0, 0], train["count"].astype(float), train["acc"]  # (L, S, checkpoints)
fig = F.counts_training(ep, tc, acc, P["label_noise"])
ch.figure(fig, "counts_training",
          "Activation regions of a [32, 32, 32] network on a digits slice during training with "
          "Adam, relative to initialisation, for several fractions of randomised labels (left), "
          "and the training accuracy (right) (Hanin & Rolnick 2019, Figs. 5–6; Daróczy, slides §3).",
          arrays={"epoch": ep, "counts": tc, "acc": acc, "label_noise": P["label_noise"]})

# %%
gs = R.growth_summary(tc)  # final / initial count; runs with the same seed are paired
g0, gm, kw0 = gs["true"], gs["mem"], gs["kw_true"]
runs = f"{S} run{'s' if S > 1 else ''} per label-noise level"
max_frac = float((tc[:, :, -1] / R.montufar_max([32, 32, 32])).max())
ch.claim("train_far_from_max", "After training, the count is far below Montúfar et al.'s maximum for [32, 32, 32] "
         "(final count / maximal count, largest over runs)",
         kind="reproduces", measured=max_frac, reference=0.01, comparison="le",
         why="'far' is declared as two orders of magnitude; the maximum (≈3.5·10⁷ for the whole plane) is a "
             "count this architecture can reach, and the largest count over all runs is compared with it",
         source="Hanin & Rolnick 2019 (NeurIPS), §5; Montúfar et al. 2014, Thm. 4")
ch.claim("train_grows", "Training with true labels increases the count (final / initial, mean over runs)",
         kind="reproduces", measured=g0, reference=1.0, tol=0.0, comparison="ge", **kw0,
         why=f"the paper's statement is a direction: the whole interval of the mean ratio over {runs} must lie "
             "at or above 1; no margin",
         source="Hanin & Rolnick 2019 (NeurIPS), Fig. 5; Daróczy, slides §3", min_scale="default",
         note="" if outcome(g0, kw0.get("se"), kw0.get("dof"), "ge", 1.0) == "pass" else
              f"with {runs} the mean ratio is {g0:.2f}; see 'Where we disagree'")
ch.claim("train_modest", "Training with true labels changes the count modestly (final / initial, mean over runs)",
         kind="reproduces", measured=g0, reference=(0.5, 3.0), comparison="between", **kw0,
         why="'modest' is declared as within a factor 2–3 either way of the initial count, against a possible "
             f"growth factor ~10⁴ (maximum / initial); interval of the mean over {runs}",
         source="Hanin & Rolnick 2019 (NeurIPS), Fig. 5", min_scale="default",
         note="" if outcome(g0, kw0.get("se"), kw0.get("dof"), "between", (0.5, 3.0)) == "pass" else
              f"{S} run(s) leave the interval wider than the window")

# %%
if L > 1:
    dkw = gs["kw_diff"]  # paired: runs with the same seed share slice, initial network and batch order
    ch.claim("memorisation_more", f"Memorising ({P['label_noise'][-1]:.0%} random labels) raises the count more than "
             "learning the true labels (difference of final / initial ratios, paired runs, mean)",
             kind="reproduces", measured=gs["diff"], reference=0.0, tol=0.0, comparison="ge", **dkw,
             why=f"a direction: the whole interval of the mean paired difference over {S} pair(s) must lie at or "
                 "above 0; no margin",
             source="Hanin & Rolnick 2019 (NeurIPS), Fig. 6; Daróczy, slides §3", min_scale="default",
             note="" if outcome(gs["diff"], dkw.get("se"), dkw.get("dof"), "ge", 0.0) == "pass" else
                  f"{S} pair(s) of runs do not decide the sign")
ch.glue("train_growth_true", g0, se=kw0.get("se"), digits=3)
ch.glue("train_growth_mem", gm, se=gs["kw_mem"].get("se"), digits=3)
ch.glue("montufar_32x3", float(R.montufar_max([32, 32, 32])), digits=2)
ch.glue("train_max_frac", max_frac, digits=2)
ch.glue("train_noise_max", f"{P['label_noise'][-1]:.0%}")
ch.glue("train_verdict",
        f"at this scale ({P['epochs']} epochs, {runs}) the count {'grows' if g0 > 1 else 'falls'} during training "
        f"with true labels, to {g0:.2f} times its initial value, and {'ends higher' if gm > g0 else 'ends no higher'} "
        f"with {P['label_noise'][-1]:.0%} random labels ({gm:.2f} times its initial value)")

# %% [markdown]
# In these runs, {glue}`train_verdict`. Whatever its direction, the change is tiny next to what
# the architecture allows: Montúfar et al.'s construction for [32, 32, 32] has
# {glue}`montufar_32x3` regions in the plane, and the largest count after training is
# {glue}`train_max_frac` of that. Whether the count
# *rises*, and rises more when memorising, is graded only from the `default` scale on, where
# training is long enough to fit the digits; at `ci` those claims are skipped.

# %% [markdown]
# ## Activation regions versus linear regions
#
# Distinct activation patterns usually mean distinct affine maps, so on random networks the
# two counts coincide. They part when a whole layer switches off: every activation region on
# which a layer is silent computes the same constant, whatever the earlier layers do, and they
# all fuse into one linear region ({cite:t}`daroczy2020information`, §3). A network with a narrow
# bottleneck makes this visible. We merge activation regions that share an edge and have the same
# affine map (relative tolerance 10⁻⁹) and measure how far the largest linear region is from
# convex: one minus its area over the area of its convex hull.

# %%
t_bn = ch.rng("bottleneck").choice(len(X), 3, replace=False)
bn = ch.cached_call(R.bottleneck_demo, points=X[t_bn], widths=[24, 2, 24], seed=ch.torch_seed("bottleneck"))
lab, members = bn["labels"], bn["members"]
planeb = R.plane_through(X[t_bn])
fig = F.activation_vs_linear(bn["V"], bn["n"], lab, members, planeb.half_width, planeb.to_plane(X[t_bn]),
                             ch.rng("colors", "bn"), ch.rng("colors", "lin"))
ch.figure(fig, "activation_vs_linear",
          "Activation regions (left) of a [24, 2, 24] network at initialisation and the linear "
          "regions they merge into (right); the dark linear region, made of many convex activation "
          "regions, is not convex (Daróczy, slides §3; Hanin & Rolnick 2019, §2).",
          arrays={"labels": lab, "members": members, "areas": bn["areas"]})
ch.claim("nonconvex_linear_region", "A linear region need not be convex: the largest merged linear region of the "
         "bottleneck network is not (1 − area / hull area)",
         kind="reproduces", measured=float(bn["deficit"]), reference=0.01, comparison="ge",
         why="a convex union has deficit 0 up to rounding (~10⁻¹²); 0.01 is declared as a visible notch, far above "
             "rounding; one network, an exact geometric quantity (no sampling error)",
         source="Daróczy, slides §3 ('Are linear regions convex? No, they are not!'); Hanin & Rolnick 2019, §2")
ch.glue("bn_activation", len(bn["n"]))
ch.glue("bn_linear", int(lab.max() + 1))
ch.glue("bn_members", len(members))
ch.glue("bn_deficit", float(bn["deficit"]), digits=2)

# %% [markdown]
# The bottleneck network has {glue}`bn_activation` activation regions but only
# {glue}`bn_linear` linear regions; the largest linear region (dark) is the union of
# {glue}`bn_members` activation regions and misses {glue}`bn_deficit` of its convex hull's area
# ({numref}`fig-06-activation-vs-linear`).
#
# ## Tangent sample sensitivity is constant on activation regions
#
# Daróczy's Definition 3.1 {cite:p}`daroczy2020information` calls
#
# $$\mathrm{Sens}_{\tan}(x;\theta) = \frac{\partial^2 f(x;\theta)}{\partial\theta\,\partial x}$$
#
# the tangent sample sensitivity: how the gradient with respect to the parameters turns as the
# input moves. Lemma 3.1 states that it is the same at every point of an activation region. The
# reason is short: with the pattern fixed, ∂f/∂θ is an affine function of x (for a weight of
# layer l it is the product of the backward signal, constant on the region, and the layer's
# input, affine in x), so its x-derivative is constant. We check it on the trained network (true
# labels), for the output of the first point's class, restricted to the two directions of the
# slice: several random points inside each of the largest regions (taken from the exact
# counter's polygons) against the region's centroid (computed by automatic differentiation
# through the network, which knows nothing of the polygons), and different regions against each
# other. Since Sens is then a function of the region, its distribution over the square is the
# distribution over regions weighted by area — the slides' identity
# $\mathbb E_x \|\mathrm{Sens}(x)\|^2 = \mathbb E_A \|\mathrm{Sens}(A)\|^2$, $A$ a region drawn
# with probability proportional to its area. That identity is exact once the lemma holds; the
# package's unit tests check it by Monte-Carlo, and here we only show both sides.

# %%
t0 = train["triple"][0, 0]  # the first run with true labels: its slice and final weights
sens = ch.cached_call(R.sensitivity_on_slice, weights=train["weights"][0, 0], dims=[64, 32, 32, 32, 10],
                      points=X[t0], output=int(y[t0[0]]), check=30, seed=ch.torch_seed("sens"),
                      mc_unit=ch.rng("mc").random((400, 2)))  # uniform points of the square
by_region = float((sens["areas"] / sens["areas"].sum() * sens["norm"] ** 2).sum())
mc = estimate(sens["mc_sq"])
planes = R.plane_through(X[t0])
fig = F.tangent_sensitivity(sens["V"], sens["n"], sens["norm"], sens["areas"], planes.half_width, planes.to_plane(X[t0]))
ch.figure(fig, "tangent_sensitivity",
          "Tangent sample sensitivity of the trained [32, 32, 32] network on the slice: one value per "
          "activation region (left) and its distribution over regions, by area and by count (right) "
          "(Daróczy, slides §3, Lemma 3.1).",
          arrays={"norm": sens["norm"], "areas": sens["areas"], "within": sens["within"], "between": sens["between"]})

# %%
ch.claim("sens_constant", "Sens_tan is the same at random points of one activation region (largest relative "
         f"difference to the centroid, {len(sens['within'])} largest regions of the trained network)",
         kind="checks", measured=float(sens["within"].max()), reference=1e-10, comparison="le",
         why="the points come from the exact counter's polygons and Sens from autograd through the network, so a "
             "polygon that straddled a true region boundary would show a jump of order one; Sens depends on x only "
             "through the activation pattern, so points of one true region give equal values up to rounding "
             "(≤ 10⁻¹⁵ relative), and 10⁻¹⁰ is declared as 'identical'",
         source="ours: the exact counter's polygons against autograd (Lemma 3.1 of Daróczy's slides holds by construction)")
ch.claim("sens_varies", "…but differs between activation regions (smallest relative difference to another checked "
         "region, median over the checked regions)",
         kind="checks", measured=float(np.median(sens["between"])), reference=1e-3, comparison="ge",
         why="without it the lemma would be empty (a Sens constant everywhere); 10⁻³ is declared as a real "
             "difference, ≥ 10⁷ times the rounding level",
         source="ours: the trained network's Sens across regions")
ch.glue("sens_within", float(sens["within"].max()), digits=2)
ch.glue("sens_between", float(np.median(sens["between"])), digits=2)
ch.glue("sens_mc", mc.mean, se=mc.se, digits=3)
ch.glue("sens_by_region", by_region, digits=4)
ch.glue("sens_n_mc", mc.n)

# %% [markdown]
# Within the largest regions Sens varies by at most {glue}`sens_within` (relative), while
# neighbouring checked regions differ by a median {glue}`sens_between`
# ({numref}`fig-06-tangent-sensitivity`). The mean of ‖Sens‖² over {glue}`sens_n_mc` uniform
# points of the square is {glue}`sens_mc`, and its area-weighted average over regions is
# {glue}`sens_by_region`.

# %%
st = {c.id: c.status for c in ch.ledger.claims}
graded = [c for c in ch.ledger.claims if c.kind == "reproduces" and c.status != "skipped"]
n_skip = sum(c.kind == "reproduces" for c in ch.ledger.claims) - len(graded)
ch.glue("found_reproduced", f"{sum(c.status == 'pass' for c in graded)} of the {len(graded)} paper results graded "
        "at this scale" + (f" ({n_skip} more skipped until a larger scale)" if n_skip else ""))
open_ = [f"{c.id} ({c.status})" for c in graded if c.status != "pass"]
ch.glue("found_open", ", ".join(open_) if open_ else "none")
ch.glue("found_slopes", f"{sum(st[f'quadratic_growth_d{d}'] == 'pass' for d in slopes)} of {len(slopes)} depths")
if ch.scale == "ci":
    disagree = ("At `ci` the training runs are too short to grade the direction of the change: the claims on it "
                "are skipped")
elif g0 < 1:
    disagree = (f"In our runs with true labels the count ends *below* its initial value (mean ratio {g0:.2f} over "
                f"{runs}), against the rise Hanin & Rolnick report; "
                + ("the whole interval of the mean lies below 1, so the claim fails" if st["train_grows"] == "fail" else
                   f"with {runs} the interval of the mean is too wide to call this a failure"))
else:
    disagree = (f"In our runs with true labels the count rises (mean ratio {g0:.2f} over {runs}), in the direction "
                "Hanin & Rolnick report; the scorecard says whether the interval decides it")
ch.glue("disagree_text", disagree)

# %%
ch.glue("found_grid",
        "The exact counter agrees with brute force wherever brute force can see: no grid finds a pattern it "
        "missed, and each refinement of the nested grids climbs towards its count"
        if st["grid_below_exact"] == st["grid_converges"] == "pass" else
        "In this run the exact counter and the brute-force grids disagree (see the scorecard), so the counts "
        "below are suspect")
ch.glue("found_geometry",
        "Linear regions merge across activation regions and need not be convex, and the tangent sample "
        "sensitivity is constant on each activation region while differing between regions, as the slides state"
        if st["nonconvex_linear_region"] == st["sens_constant"] == st["sens_varies"] == "pass" else
        "The slides' statements on non-convex linear regions and on the tangent sample sensitivity are not all "
        "borne out in this run (see the scorecard)")

# %% [markdown]
# ## What we found
#
# {glue}`found_grid` (the finest grid finds at least {glue}`grid_found_finest` of it). At
# initialisation the count on a data slice grows with fitted exponents {glue}`slopes_by_depth` —
# within ±0.5 of Hanin & Rolnick's 2 at 99 % confidence for {glue}`found_slopes` — and changes
# by a factor {glue}`depth_ratio` when {glue}`n_big` neurons are spread over {glue}`d_deep`
# layers instead of one, where the maxima of {cite:t}`montufar2014number` for the two
# architectures differ by a factor {glue}`montufar_factor`. {glue}`found_geometry`. In all,
# this run reproduces {glue}`found_reproduced`; those not (yet) reproduced here are:
# {glue}`found_open`. An inconclusive outcome means the interval is too wide at this scale's
# number of networks or runs, not that the result disagrees.
#
# We do not grade Theorem 5's constant: it bounds a count per unit volume with an unspecified
# $T$, which a count in a data-dependent square cannot test (see "How many regions at
# initialisation?").
#
# **Training, and where we may disagree.** {glue}`disagree_text`. Where the count does not grow
# with true labels, the candidates we could not test in this chapter's budget are the much
# smaller data set (1 797 8×8 digits instead of 60 000 MNIST images, so the network fits it
# within a few epochs and then stops reshaping the slice), our per-pixel standardisation, and
# training length (the paper trains longer). The `paper` scale trains for 300 epochs with five
# seeds per noise level to settle it.
#
# ## Scorecard

# %%
ch.finish()
