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
# # Capacity diffusion through depth
#
# {doc}`01_layer_decoupling` showed that a fully decoupling (pseudo-random) layer passes capacity
# from its outputs to its inputs by a fixed linear rule, $\kappa = (P\circ P)\kappa^\varphi$.
# {cite:t}`donier2019capacity` (§3–4) chains this rule through a deep network: the capacities of
# every layer are obtained from those of the layer above by a column-stochastic matrix
# $D_l = P_l\circ P_l$ (his Eqs. 27–28),
#
# $$
# \kappa^{l-1} = D_l\,\kappa^l, \qquad \kappa^0 = D_1\cdots D_L\,\kappa^L ,
# $$ (eq-02-chain)
#
# a linear *capacity network* that runs backwards through the layers. In the residual limit
# $D_l = I + \varepsilon\Delta_l$ with $L = 1/\varepsilon$, this chain becomes a diffusion equation
# (his Eqs. 29–33), and a Dirac placed at the output spreads into a Gaussian whose variance grows
# linearly with the number of layers traversed {eq}`eq-02-dirac`. Donier reads this as the
# effective receptive field of
# {cite:t}`luo2016understanding`, and reads the weight of the straight path through the network
# (Eqs. 35–36) as the shattering of {cite:t}`balduzzi2017shattered`.
#
# This chapter re-computes the capacity network and its diffusion limit — with random layers, with a
# drift {eq}`eq-02-drift`, and as $\varepsilon \to 0$ {eq}`eq-02-kolmogorov` — then tests the two
# readings against *real* random convolutional networks in torch: residual networks whose per-layer
# step scales as $1/L$, as in the paper's limit, whose receptive field depends only on
# $t = (L - l)/L$; the mean squared input-gradient of one output unit against the capacity network
# (exactly, for pseudo-random activations; approximately, for ReLU), the $\sqrt{\text{depth}}$
# growth of the receptive field, and the correlation of input-gradients at nearby inputs, plain vs
# residual. Identities (conservation of the total capacity, the straight-path weight of uniform
# layers, the exact moments of the network-averaged walk) are unit tests in
# `tests/test_diffusion.py`, not claims.
#
# ## Set-up
#
# Every size below is a parameter of the chapter, chosen per scale.

# %% tags=["parameters", "remove-cell"]
scale = "ci"          # ci | default | paper
seed = 0
device = "auto"       # auto | cpu | cuda
ring = None           # ring size of the residual diffusion
res_layers = None     # number of layers L (ε is 1/L) of the residual diffusion
envs = None           # independent random networks (Δ_l draws)
erf_depths = None     # depths of the conv nets for the receptive field
erf_channels = None   # channels of the conv nets
erf_inputs = None     # inputs per network (Monte-Carlo over inputs)
erf_nets = None       # networks per depth
pr_depth = None       # depth for the pseudo-random gradient test
pr_inputs = None      # inputs per network in that test
pr_nets = None        # networks in that test
sh_depths = None      # depths for the gradient-correlation (shattering) experiment
sh_width = None       # width of those fully-connected nets
sh_nets = None        # networks per depth
drift_layers = None   # depths (1/ε) of the drifting, layer-independent diffusion (ε → 0, Eq. 30)
tau = None            # scale τ of Δ in the 1/L-residual nets (s² over 1 + s² is τ/L per layer)
tc_depths = None      # depths of the 1/L-residual conv nets
tc_nets = None        # networks per depth
tc_inputs = None      # inputs per network
erf_pr_nets = None    # networks of the pseudo-random ERF run (inputs: a quarter of erf_inputs)
df_paths = None       # Brownian paths per group (24 groups) of the differential-layer SDE
ch_samples = None     # inputs per network for the capacities through real layers
ch_nets = None        # networks per depth in that test

# %%
import numpy as np

from layerwise import differential, diffusion, tables
from layerwise.chapter import Chapter
from layerwise.claims import DEFAULT_CONFIDENCE, Control
from layerwise.figures import ch02 as figures
from layerwise.params import resolve_from
from layerwise.stats import estimate
from layerwise.studies import ch02 as study

# %%
SCALES = {
    "ci": {"ring": 129, "res_layers": 100, "envs": 20, "erf_depths": [2, 4, 8], "erf_channels": 16,
        "erf_inputs": 256, "erf_nets": 4, "pr_depth": 4, "pr_inputs": 512, "pr_nets": 2,
        "sh_depths": [2, 10, 50], "sh_width": 128, "sh_nets": 8,
        "drift_layers": [50, 100, 200, 400, 800, 1600], "tau": 4.0, "tc_depths": [8, 16, 32],
        "tc_nets": 4, "tc_inputs": 256, "erf_pr_nets": 4, "df_paths": 150, "ch_samples": 8000,
        "ch_nets": 4
    },
    "default": {"ring": 129, "res_layers": 400, "envs": 100, "erf_depths": [2, 4, 8, 16],
        "erf_channels": 16, "erf_inputs": 512, "erf_nets": 32, "pr_depth": 6, "pr_inputs": 2048,
        "pr_nets": 3, "sh_depths": [2, 10, 24, 50], "sh_width": 200, "sh_nets": 16,
        "drift_layers": [50, 100, 200, 400, 800, 1600], "tau": 4.0, "tc_depths": [8, 16, 32, 64],
        "tc_nets": 12, "tc_inputs": 512, "erf_pr_nets": 8, "df_paths": 250, "ch_samples": 12_000,
        "ch_nets": 10
    },
    "paper": {"ring": 257, "res_layers": 1000, "envs": 500, "erf_depths": [2, 4, 8, 16, 32, 64],
        "erf_channels": 64, "erf_inputs": 4096, "erf_nets": 20, "pr_depth": 16, "pr_inputs": 16_384,
        "pr_nets": 10, "sh_depths": [2, 10, 24, 50], "sh_width": 200, "sh_nets": 50,
        "drift_layers": [50, 100, 200, 400, 800, 1600, 3200], "tau": 4.0,
        "tc_depths": [8, 16, 32, 64, 128], "tc_nets": 20, "tc_inputs": 2048, "erf_pr_nets": 20,
        "df_paths": 1000, "ch_samples": 20_000, "ch_nets": 20
    },
}
params = resolve_from(SCALES, scale, globals())
ch = Chapter("02_capacity_diffusion", scale=scale, seed=seed, device=device, params=params)

# %% [markdown]
# ## The residual limit: a Dirac diffuses into a Gaussian (Eqs. 27–34)
#
# Whatever the widths, {eq}`eq-02-chain` conserves the total capacity, because every $D_l$ is
# column-stochastic (an identity; the unit tests check it through 20 dense layers of
# widths 8–40).
#
# Here: a ring of $n$ units, $L = 1/\varepsilon$ layers, $D_l = I + \varepsilon\Delta_l$ with
# $\Delta_l$ local: at every layer and position, column $i$ sends $a_{l,i}$ to $i-1$ and $b_{l,i}$
# to $i+1$, with $a$, $b$ i.i.d. uniform on $[10, 30]$. The network is random, layer by layer and
# position by position, with no preferred direction, so the drift $v$ of {eq}`eq-02-pde` should
# vanish (his Eq. 33), and the diffusion constant is $\mathcal D = \mathbb E[a] = 20$ in units of
# $\text{sites}^2$ per unit $t$. (Such a large $\mathcal D$ keeps the Gaussian many sites wide, so
# the lattice does not blur the comparison; the shattering section uses $\Delta$ of order one, as in
# the paper.) At $t = (L - l)/L$, a Dirac placed at $x_0$ on the output has become (his Eq. 34)
#
# $$
# \kappa^l(x) = \frac{1}{\sqrt{4\pi\mathcal D t}}\,e^{-(x-x_0)^2/(4\mathcal D t)}\,\kappa^L ,
# $$ (eq-02-dirac)
#
# a Gaussian of variance $2\mathcal D t$.
#
# Averaged over random networks, the capacity profile is *exactly* the lattice walk
# $(I + \varepsilon\,\mathbb E[\Delta])^k\delta$: each path visits each layer once and layers are
# independent. Its mean position is therefore exactly 0 and its second moment exactly
# $2\mathcal D k/L$ after $k$ layers — facts about our construction, unit-tested. What is not exact
# is {eq}`eq-02-dirac` itself: the continuum limit replaces the discrete walk by a Gaussian, and we
# measure how close the walk after $L$ layers comes to it.

# %%
A_LO, A_HI = 10.0, 30.0
DIFFUSION = (A_LO + A_HI) / 2          # the diffusion constant 𝒟 = E[a]
profiles = ch.cached_call(study.residual_diffusion_profiles, ring=params["ring"],
                          layers=params["res_layers"], a_lo=A_LO, a_hi=A_HI, envs=params["envs"],
                          seed=ch.seed)["profiles"].astype(np.float64)
walk = study.residual_diffusion_summary(profiles, DIFFUSION)
ch.figure(figures.residual_diffusion(walk["mean_profile"], profiles[0], walk["m2"], walk["mu"],
                                     DIFFUSION, [0.1, 0.25, 0.5, 1.0]), "residual_diffusion",
          f"Capacity of one output unit diffusing through L = {params['res_layers']} random "
          "residual layers Dₗ = I + εΔₗ (Donier, Eqs. 29–34): profiles at t = k/L, mean over "
          "networks (dots), one network (thin lines) and the Gaussian of Eq. 34 (black), left; "
          "second moment and mean position against the number of layers traversed, right.",
          arrays={"mean_profile": walk["mean_profile"], "profile_net0": profiles[0],
                  "m2": walk["m2"], "mu": walk["mu"]})

# %%
ch.claim("residual_gaussian_profile", f"After L = {params['res_layers']} residual layers the "
         "network-averaged walk is Eq. 34's Gaussian up to its leading (kurtosis) "
         "correction (L1 distance)", kind="checks", measured=walk["l1"], tol=0.0,
         reference=1.5 * walk["edge"], comparison="le", source="Donier 2019, Eq. 34",
         why="the Edgeworth term |γ₂|·E|He₄|/24 of the walk; 1.5× leaves room for the next order",
         alternative=(walk["l1_per_net"], "Eq. 34 per network (mean L1 of one network's profile)"))

# %%
sampled = study.sampled_walk_summary(profiles, DIFFUSION, A_LO, A_HI, DEFAULT_CONFIDENCE)
# the same construction with the medium frozen: each network's top layer repeated at every depth
frozen = study.sampled_walk_summary(ch.cached_call(
    study.residual_diffusion_profiles, ring=params["ring"], layers=params["res_layers"],
    a_lo=A_LO, a_hi=A_HI, envs=params["envs"], seed=ch.seed, frozen=True)["profiles"].astype(
    np.float64), DIFFUSION, A_LO, A_HI, DEFAULT_CONFIDENCE)
ch.claim("sampled_variance_eq34", f"The {params['envs']} sampled random networks: second moment "
         "of the capacity profile at t = 1 over Eq. 34's 2𝒟t, 𝒟 = E[a] (mean over networks; 1 "
         "by construction, the profile's moments being linear in the layers)",
         kind="checks", measured=sampled["m2_ratio"], reference=1.0, tol=0.045,
         comparison="abs", source="Donier 2019, Eqs. 33–34",
         why="a Monte-Carlo of the network-averaged walk, whose second moment is exactly 2𝒟t")

# %%
ch.claim("sampled_spread_eq34", "Random Dₗ redrawn at every depth: each sampled network diffuses "
         "with Eq. 34's 𝒟 — the spread over networks of the variance at t = 1 over 2𝒟 (its "
         "standard deviation) is small", kind="predicts", measured=sampled["var_spread"],
         reference=0.0, tol=frozen["var_spread"].mean / 2, comparison="le",
         source="Donier 2019, Eqs. 33–34 (a 𝒟 per network, not per ensemble)",
         why="half the spread of a frozen medium of the same construction",
         alternative=(frozen["var_spread"].mean, "a frozen medium: each network's random Δ "
                      "repeated at every depth (same draws, same ring and L)"))
ch.claim("sampled_drift_eq33", "Random Dₗ: each sampled network's drift is small, rms final mean "
         "position over the width √(2𝒟)", kind="predicts", measured=sampled["drift_rms"],
         reference=0.0, tol=sampled["drift_rms_alt"] / 2, comparison="le",
         source="Donier 2019, Eq. 33 (v = 0 for random Dₗ)",
         why="half the drift of the paper's random translation-invariant Δₗ (one (a, b) per "
             "layer); interval from the mean of μ²",
         alternative=(sampled["drift_rms_alt"], "random translation-invariant Δₗ, one (a, b) per "
                      "layer: rms Σₗ ε(bₗ − aₗ)"))

# %%
# claims' values to the scorecard's four significant digits, with the same ± or interval
drift_lo, drift_hi = sampled["drift_rms"].interval
ch.glue_all({"sampled_m2": sampled["m2_ratio"], "sampled_drift_rms": sampled["drift_rms"].mean,
             "sampled_drift_lo": drift_lo, "sampled_drift_hi": drift_hi,
             "diff_l1": walk["l1"]}, digits=4)
ch.glue_all({"sampled_drift": sampled["drift"], "sampled_m2_alt": sampled["m2_alt"],
             "sampled_drift_alt": sampled["drift_rms_alt"],
             "sampled_drift_identical": sampled["drift_rms_identical"],
             "sampled_spread": sampled["var_spread"], "frozen_spread": frozen["var_spread"],
             "identical_spread": (A_HI - A_LO) / np.sqrt(24.0) / DIFFUSION}, digits=2)
ch.glue("spread_verdict", ch.verdict(["sampled_spread_eq34"], "well below", "not below half of",
                                     "not decidedly below half of"))
for name in ("edge", "noise_l1"):
    ch.glue(f"diff_{name}", walk[name], digits=2)
ch.glue("diff_slope_spread", 100 * walk["slope_net"].std(ddof=1), digits=2, unit="%")
ch.glue("diff_envs", params["envs"])

# %% [markdown]
# After $L$ layers the averaged walk is {glue}`diff_l1` away from the Gaussian {eq}`eq-02-dirac` in
# L1 distance, against a leading Edgeworth correction of {glue}`diff_edge` — a check of the
# continuum approximation, not a measurement. The {glue}`diff_envs` *sampled* networks (thin lines)
# have, on average, a second moment at $t = 1$ of {glue}`sampled_m2` times the $2\mathcal D$ of
# {eq}`eq-02-dirac` — but that mean is 1 by construction (the moments are linear in the layers, and
# the layers' mean is the averaged walk): a check. What is not true by construction is that each
# network diffuses with that $\mathcal D$. The variance of each network's profile at $t = 1$, over
# $2\mathcal D$, spreads over networks with a standard deviation of {glue}`sampled_spread`,
# {glue}`spread_verdict` the {glue}`frozen_spread` of a frozen medium of the same construction
# (each network's top layer repeated at every depth) — and identical layers of one $(a, b)$ draw
# would spread by {glue}`identical_spread`. The slopes of their second moments spread by
# {glue}`diff_slope_spread` around $2\mathcal D\varepsilon$. Their final mean position, the drift
# accumulated over all $L$ layers, is {glue}`sampled_drift_rms` of the width $\sqrt{2\mathcal D}$
# (root mean square over networks, with the scorecard's 99 % interval {glue}`sampled_drift_lo` to
# {glue}`sampled_drift_hi`; the mean position itself is {glue}`sampled_drift` sites), against
# {glue}`sampled_drift_alt` for the paper's own random case — a translation-invariant $\Delta_l$
# drawn afresh per layer, whose drifts cancel only on average — and {glue}`sampled_drift_identical`
# for identical layers of one draw of $(a, b)$. The claim holds the drift below half the former. The
# mean profile over those networks is
# {glue}`diff_noise_l1` from the averaged walk in L1 distance, the size of its sampling noise.
#
# ## A drift, and the limit ε → 0 (Eqs. 30–32)
#
# His Eq. 29 takes all layers equal, $D_l = I + \varepsilon\Delta$, with $L = 1/\varepsilon$. Then
# $\kappa^0 = (I + \varepsilon\Delta)^{1/\varepsilon}\kappa^L$ is one Euler step after another of
# the Kolmogorov equation (his Eq. 30)
#
# $$
# \pi'(t) = \Delta\,\pi(t), \qquad \pi(1) = e^{\Delta}\pi(0) :
# $$ (eq-02-kolmogorov)
#
# as $\varepsilon \to 0$ the capacity network should converge to it, at the rate $\varepsilon$ of a
# first-order scheme. For a local, translation-invariant $\Delta$ the paper then approximates
# {eq}`eq-02-kolmogorov` by the drift–diffusion PDE (his Eq. 31)
#
# $$
# \pi'(t) = -v\,\frac{\partial\pi}{\partial x} + \mathcal D\,\frac{\partial^2\pi}{\partial x^2} ,
# $$ (eq-02-pde)
#
# solved, for a Dirac at $x_0$, by the drifting Gaussian (his Eq. 32)
#
# $$
# \pi(t, x) = \frac{1}{\sqrt{4\pi\mathcal D t}}\,e^{-(x - x_0 - vt)^2/(4\mathcal D t)} .
# $$ (eq-02-drift)
#
# Here $\Delta$ is *not* symmetric: every column sends $a = 10$ to its left neighbour and $b = 30$
# to its right one, so $v = b - a = 20$ sites per unit $t$ and $\mathcal D = (a + b)/2 = 20$.
# Everything below is exact arithmetic on the ring (no sampling): the only questions are how fast
# the limit is reached, and how far the lattice solution $e^{\Delta}\delta$ is from the Gaussian
# {eq}`eq-02-drift`. The latter has a size we can predict: $e^{\Delta}\delta$ is a continuous-time
# walk with cumulants $\kappa_n = b + (-1)^n a$, so its leading departure from a Gaussian is the
# Edgeworth term of skewness $v/(2\mathcal D)^{3/2}$ and excess kurtosis $1/(2\mathcal D)$.

# %%
A_LEFT, A_RIGHT = 10.0, 30.0
drift = ch.cached_call(diffusion.drift_limit, ring=params["ring"], left=A_LEFT, right=A_RIGHT,
                       layers=params["drift_layers"])
ch.figure(figures.drift_limit(drift, show=[50, 200, 1600]), "drift_limit",
          "A Dirac through L = 1/ε identical drifting layers I + εΔ (a = 10 to the left, b = 30 "
          "to the right): the capacity network against the solution exp(Δ)δ of Eq. 30 and the "
          "drifting Gaussian of Eq. 32 (v = 20, 𝒟 = 20), left; the L1 distance to exp(Δ)δ against "
          "ε, with the first-order rate ε, right (Donier, Eqs. 29–32).",
          arrays={k: drift[k] for k in ("layers", "profiles", "profile_expm", "gauss", "l1_expm")})

# %%
rate = study.convergence_rate(drift["layers"], drift["l1_expm"], skip=1)
rate_gauss = study.convergence_rate(drift["layers"],
                                    np.abs(drift["profiles"] - drift["gauss"]).sum(1), skip=1)
no_drift = diffusion.heat_kernel(np.arange(params["ring"]), params["ring"] // 2,
                                 drift["diffusion"], 1.0)
ch.claim("eq30_first_order", "As ε = 1/L → 0, (I + εΔ) to the power 1/ε, applied to δ, converges "
                             "to the solution exp(Δ)δ of Eq. 30 at rate ε (log-log slope of the L1 "
         "distance against L)", kind="checks",
         measured=rate["slope"], reference=-1.0, tol=0.05, comparison="abs",
         why="an explicit Euler scheme, first order in ε; ±0.05 covers the O(ε²) curvature",
         source="Donier 2019, Eqs. 29–30", alternative=(rate_gauss["slope"], "convergence to "
                                                        "Eq. 32's Gaussian instead of exp(Δ)δ"))

# %%
ch.claim("drift_gaussian_eq32", "With a drifting Δ (v = 20, 𝒟 = 20) the solution of Eq. 30 is "
         "Eq. 32's Gaussian centred at vt up to its leading Edgeworth (skewness) correction (L1 "
         "distance)", kind="checks", measured=drift["l1_eq32"], comparison="le", tol=0.0,
         reference=1.5 * drift["edge"], source="Donier 2019, Eqs. 31–32",
         why="Eq. 31 drops the walk's higher cumulants, led by this Edgeworth term; 1.5× as above",
         alternative=(float(np.abs(drift["profile_expm"] - no_drift).sum()), "no drift (v = 0)"))
ch.glue_all({"eq30_slope": rate["slope"], "drift_l1_eq32": drift["l1_eq32"]}, digits=4)
ch.glue_all({"drift_edge": drift["edge"],
             "drift_l1_first": float(drift["l1_expm"][0]),
             "drift_l1_last": float(drift["l1_expm"][-1])}, digits=2)
ch.glue("drift_depth_first", int(drift["layers"][0]))
ch.glue("drift_depth_last", int(drift["layers"][-1]))


# %% [markdown]
# The distance of the capacity network to $e^{\Delta}\delta$ falls from {glue}`drift_l1_first` at
# $L$ = {glue}`drift_depth_first` to {glue}`drift_l1_last` at $L$ = {glue}`drift_depth_last`, with a
# log-log slope of {glue}`eq30_slope`: {eq}`eq-02-kolmogorov` is the $\varepsilon \to 0$ limit,
# reached at first order. Its solution is {glue}`drift_l1_eq32` from the drifting Gaussian
# {eq}`eq-02-drift` in L1 distance, the size of the predicted skewness correction
# ({glue}`drift_edge`): with $\mathcal D = 20\ \text{sites}^2$ per unit $t$, the lattice is fine
# enough for the PDE.
#
# ## Differential layers: the capacity PDE of a forward SDE (§3.3 and Appendix B)
#
# **What the seeds contain.** The copy with equations (`001`) has no §3.3 and no Appendix B. The
# second copy (`000`, the longer version) has both in prose, but every displayed equation of that
# copy — Eqs. 1–47, not only the appendix's — is blank. Its §3.3 adds a variant of residual layers
# that applies the non-linearity to the residual only, $x_l = x_{l-1} + f(P_l^\top x_{l-1})$ — a
# *differential* layer; Appendix B says that "a deep network with differential layers and
# pseudo-random weights can be seen as a non-linear SDE applied to its inputs" (its Eq. 36), that
# its capacity obeys a PDE like {eq}`eq-02-pde` (Eqs. 46–47, with no drift when the kernel
# "fluctuates randomly from layer to layer"), and that "one can check that [blank], where [blank]
# is the diffusion coefficient of the stochastic process implemented by the forward neural network
# (see Eq. (36))". The link itself is lost, so there is no statement of the paper here that a
# measurement could contradict. What follows is our reconstruction from the prose (the docstring
# of `layerwise.differential` has the derivation), and its claims are `checks` of our code: the
# Monte-Carlo of a network against the exact expectation of the same network. On a ring, unit $i$
# reads its input $i + k$ with coupling $p_k$, $k \in \{-1, 0, +1\}$:
#
# $$
# dx_i = \sum_k p_k\,x_{i+k}\,dW_{i,k},\qquad v = p_{+1}^2 - p_{-1}^2,\qquad
# \mathcal D = \tfrac12\big(p_{-1}^2 + p_{+1}^2\big) .
# $$ (eq-02-sde)
#
# The SDE's diffusion coefficient $\sum_k p_k^2 x_{i+k}^2$ averages to $\sum_k p_k^2$ over i.i.d.
# unit inputs; in our reconstruction the capacity's $\mathcal D$ is half its *neighbour* part only,
# because the self-coupling $p_0$ keeps capacity where it is. The drift goes the way capacity flows,
# from a unit to the inputs it reads (the capacity PDE runs backwards in layers), and vanishes when
# the kernel is mirrored at random from layer to layer (Eq. 47).

# %%
DF_TAPS2 = (0.5, 1.0, 1.5)     # c_{−1}, c_0, c_{+1}: v = 1, 𝒟 = 1 site² per unit t
DF_STEPS, DF_GROUPS, DF_RING = 100, 24, 31  # layers (ε = 1/100), groups of paths, ring size
ch.glue_all({"df_steps": DF_STEPS, "df_groups": DF_GROUPS, "df_paths": params["df_paths"],
             "df_ring": DF_RING})
ch.glue("df_taps", ", ".join(f"{c:g}" for c in DF_TAPS2))

# %% [markdown]
# As Appendix B says, the weights are
# pseudo-random: every weight of every layer is $\pm\sqrt{\varepsilon\,c_k}$ with an independent
# sign ($c_k = p_k^2$), {glue}`df_steps` layers ($\varepsilon$ = 1/{glue}`df_steps`), on a ring of
# {glue}`df_ring` units, $(c_{-1}, c_0, c_{+1})$ = ({glue}`df_taps`). We propagate the pathwise
# sensitivity of the central unit at $t = 1$ to the state at earlier $t$; its mean square over
# paths is the capacity, whose exact expectation is the recursion
# $\mathbb E[r'^2_j] = r_j^2 + \varepsilon\sum_k c_k r_{j-k}^2$. The replicates are
# {glue}`df_groups` independent groups of {glue}`df_paths` paths; the moments are those of the
# profile pooled over every path (the capacity is a ratio of means), with jackknife errors over
# groups.

# %%
df_runs = ch.cached_call(study.differential_runs, ring=DF_RING, taps2=DF_TAPS2, steps=DF_STEPS,
                         paths=params["df_paths"], groups=DF_GROUPS, seed=ch.seed,
                         increments="sign", noise="weight")
df = differential.differential_summary(df_runs, DF_TAPS2, steps=DF_STEPS)
ch.figure(figures.differential_layers(df), "differential_layers",
          "Differential layers with pseudo-random weights: the variance (left) and mean position "
          "(right) of the mean squared sensitivity of one unit at t = 1 to the state at t, fixed "
          "and randomly mirrored kernels (mean ± 3 SE over groups of paths), against the "
          "continuum's 2𝒟t and vt and the SDE's whole coefficient Σcₖ·t (Donier, longer version, "
          "§3.3 and Appendix B, Eqs. 36 and 46–47, as reconstructed here: the seed's equations "
          "are blank).",
          arrays={k: df[k] for k in ("t", "fixed_var", "fixed_mu", "mirrored_var",
                                     "mirrored_mu")})

# %%
RECON = "Donier 2019 (longer version), §3.3 and App. B, Eqs. 36, 46–47 (equations blank; " \
        "reconstructed here)"
ch.claim("differential_diffusion", "Differential layers, pseudo-random weights: the Monte-Carlo "
         "capacity's variance at t = 1 equals that of the exact recursion (ratio)",
         kind="checks", measured=df["var_ratio"], reference=1.0, tol=0.25, comparison="abs",
         source=RECON, why="a Monte-Carlo of the chapter's own recursion; ±25 % resolves the "
         "self-coupling's share of the SDE coefficient")
ch.claim("differential_drift", "Fixed asymmetric kernel: the Monte-Carlo capacity's mean position "
         "at t = 1 equals the exact recursion's (ratio), towards the inputs a unit reads",
         kind="checks", measured=df["drift_ratio"], reference=1.0, tol=0.5, comparison="abs",
         source=RECON, why="a Monte-Carlo of the chapter's own recursion; half the distance to "
         "no drift")
ch.claim("differential_no_drift", "Kernel mirrored at random from layer to layer: no drift (mean "
         "position at t = 1 over v)", kind="checks", measured=df["mirror_drift"],
         reference=0.0, tol=0.5, comparison="abs", why="half the distance to the fixed kernel's",
         source=RECON)

# %%
v_df = df["drift"]
ring11 = differential.profile_moments(differential.expected_profiles(
    11, DF_TAPS2, DF_STEPS, DF_STEPS)[-1])[0] / v_df
per_group = estimate(df["fixed_mu"][:, -1] / (df["recursion_drift"] * v_df))
ch.glue_all({"df_var": df["var_ratio"], "df_drift": df["drift_ratio"],
             "df_mirror": df["mirror_drift"]}, digits=4)
# the same, digits only, for "What we found" (checks of our code; their errors are in the scorecard)
ch.glue_all({f"found_{name}": df[key].mean for name, key in (
    ("df_var", "var_ratio"), ("df_drift", "drift_ratio"), ("df_mirror", "mirror_drift"))}, digits=4)
ch.glue_all({"df_alt": df["var_alt"], "df_rec_var": df["recursion_var"],
             "df_rec_drift": df["recursion_drift"], "df_ring11": float(ring11),
             "df_per_group": per_group}, digits=3)

# %% [markdown]
# The pooled variance of the sensitivity profile at $t = 1$ is {glue}`df_var` times the exact
# recursion's, against {glue}`df_alt` if the whole diffusion coefficient of the SDE spread
# capacity; its mean position is {glue}`df_drift` times the recursion's for a fixed kernel, and
# {glue}`df_mirror` times $v$ for kernels mirrored at random. The recursion itself sits at
# {glue}`df_rec_var` of the continuum's $2\mathcal D$ and {glue}`df_rec_drift` of its $v$ — the
# $O(\varepsilon)$ of the discrete step, $1/(1 + \varepsilon\sum_k c_k)$ for the drift.
#
# *The drift deficit of an earlier version.* On a ring of 11 units, with one Gaussian increment per
# unit, an earlier version measured the drift about 2.3 standard errors below
# $1/(1 + \varepsilon\sum_k c_k)$ = {glue}`df_rec_drift`, the value on an unbounded line. Two
# things were wrong with that comparison. Its reference: on a ring of 11 the profile's tail wraps
# round, and the exact expectation of that scheme is {glue}`df_ring11` of $v$, which leaves a
# deficit of about 1.6 of those standard errors. And its errors: the squared sensitivity of a path
# is a product of per-step factors, heavy-tailed, so the scatter of a few hundred paths per group
# understates the error of each group's ratio of means. The chapter now uses a ring of
# {glue}`df_ring` (where the exact expectation is the step's $O(\varepsilon)$ alone), the moments of
# the profile pooled over every path with jackknife errors over groups, and grades against the
# exact recursion at the same step. On this run's paths, the group-by-group estimator gives
# {glue}`df_per_group` of the recursion's drift and the pooled one {glue}`df_drift`.
#
# ## The effective receptive field of real networks
#
# {cite:t}`luo2016understanding` define the effective receptive field of an output unit as the mean
# squared gradient of that unit with respect to the input, and find it Gaussian with a width growing
# like $\sqrt{\text{depth}}$. Here: random 1-D convolutional networks on a ring of 64 positions,
# kernel 3, circular padding, weights $\mathcal N(0, 1/(3C))$, activation $\sqrt2\,\mathrm{ReLU}$
# (so that $\alpha^2 + \beta^2 = 2$, Eq. 12), inputs i.i.d. $\mathcal N(0, 1)$. *Plain*:
# $x_l = f(W_l * x_{l-1})$, with a linear last layer (a deep ReLU unit can be dead on every input,
# and its gradient is then zero); *residual* (pre-activation): $x_l = x_{l-1} + s\,W_l * f(x_{l-1})$
# with $s = 1$. The capacity network of these architectures, averaged over weights, is a lattice
# walk: plain layers spread evenly over the three taps (variance 2/3 per layer), residual layers
# stay put with probability $1/(1+s^2)$ (variance $\tfrac23\,s^2/(1+s^2) = \tfrac13$ per layer).
# Both predict a Gaussian of width $\propto \sqrt{\text{depth}}$.

# %%
ERF_LENGTH, RES_SCALE = 64, 1.0
erf = study.assemble_erf(ch.cached_units(
    study.erf_unit, len(diffusion.ARCHS) * len(params["erf_depths"]), depths=params["erf_depths"],
    channels=params["erf_channels"], length=ERF_LENGTH, inputs=params["erf_inputs"],
    nets=params["erf_nets"], res_scale=RES_SCALE, seed=ch.seed, device=ch.device),
    params["erf_depths"])
depths = np.array(params["erf_depths"], float)
g2 = {a: [erf[f"{a}_{d}_g2"] for d in params["erf_depths"]] for a in diffusion.ARCHS}
# per architecture: the variances (depths, nets) and the exponent γ of width ∝ depth^γ
variances, exponents = {}, {}
for arch in diffusion.ARCHS:
    variances[arch], exponents[arch] = study.erf_width_fit(g2[arch], depths)
per_layer = {a: diffusion.expected_conv_variance_per_layer(a, RES_SCALE) for a in diffusion.ARCHS}
ch.figure(figures.effective_receptive_field(g2, params["erf_depths"], variances, exponents,
                                            per_layer), "effective_receptive_field",
          "Effective receptive field (mean squared input-gradient, Luo et al. 2016) of random 1-D "
          "convolutional ReLU nets, plain and residual (top; dots), against the capacity "
          "network's Gaussian (lines; Donier, Eq. 34 and §4.1), and the ERF width against depth "
          "(bottom).",
          arrays={**{k: erf[k] for k in erf}, "depths": depths})

# %%
for arch in diffusion.ARCHS:
    # the estimator on synthetic truth: walks of variance ∝ depth on the same ring, depths and
    # networks, with the measured scatter
    synth = study.erf_exponent_control(g2[arch], depths, per_layer[arch], seed=ch.seed)
    ch.claim(f"erf_sqrt_depth_{arch}", "the ERF width of conv ReLU nets grows as depthᵞ with "
             "γ = ½ (fitted exponent)", case=f"{arch} nets", kind="reproduces",
             controls=[Control("estimator", synth.side(0.5) == 0,
                               f"the fit on synthetic lattice walks of variance ∝ depth (same ring "
                               f"of {ERF_LENGTH}, depths and networks, the measured scatter) "
                               f"gives {synth.mean:.3f} ± {synth.se:.3f} for the truth ½")],
             conditions={"network": (f"1-D conv, ring of {ERF_LENGTH}, {params['erf_channels']} "
                                     "channels, random weights and inputs", "2-D convolutional "
                                     "nets (Luo et al. 2016)")},
             measured=exponents[arch], reference=0.5, tol=0.05, comparison="abs",
             alternative=(1.0, "the theoretical (linear) field"),
             why="±0.05, a tenth of the exponent, separates diffusive growth from e.g. depth⁰ᐧ⁶",
             source="Luo et al. 2016, §2 (ERF ∝ √depth); Donier 2019, Eq. 34 and §4.1",
             caveat=f"{params['erf_nets']} networks per depth are too few for ±0.05")

# %%
# ERF variance over the capacity network's, at the largest depth
erf_ratio = {a: study.variance_ratio(variances[a][-1], per_layer[a] * depths[-1])
             for a in diffusion.ARCHS}
ch.glue_all({f"erf_ratio_{arch}": erf_ratio[arch] for arch in diffusion.ARCHS})
# digits only, for "What we found" (their standard errors are in the ERF table, tab_erf)
ch.glue_all({f"found_erf_ratio_{arch}": erf_ratio[arch].mean for arch in diffusion.ARCHS})
ch.glue("erf_depth_max", int(depths[-1]))
# which side of the capacity network's variance each ERF lies on (99 % interval of the ratio)
SIDE = {-1: "narrower than the capacity network's (the ratio's 99 % interval lies below 1)",
        0: "not resolved from the capacity network's (the ratio's 99 % interval contains 1)",
        1: "wider than the capacity network's (the ratio's 99 % interval lies above 1)"}
for arch in diffusion.ARCHS:
    ch.glue(f"erf_side_{arch}", SIDE[erf_ratio[arch].side(1.0)])
ch.glue("erf_verdict", ch.verdict(["erf_sqrt_depth_plain", "erf_sqrt_depth_residual"],
        "agrees with ½ within ±0.05",
        "departs from ½ by more than 0.05 for at least one architecture",
        f"is consistent with ½, but {params['erf_nets']} networks per depth cannot pin it to "
        "±0.05"))
ch.glue("erf_pr_nets", params["erf_pr_nets"])


# %% [markdown]
# At depth {glue}`erf_depth_max` the ERF variance of the plain nets is {glue}`erf_ratio_plain` times
# the capacity network's, that of the residual nets {glue}`erf_ratio_residual` times
# — the plain nets' field is {glue}`erf_side_plain`, the residual nets' {glue}`erf_side_residual`.
# Where a field falls short, two causes are possible. If the walk itself, the
# discretisation or the finite depth and width were at fault, nets of the *same law* with
# pseudo-random units, which decouple fully, would fall short too; if ReLU's correlated $\eta$
# ($\nu = \tfrac12$) is the cause, they would not. We run them (residual, depth
# {glue}`erf_depth_max`, {glue}`erf_pr_nets` networks, on a ring of half the length, ample for this
# field) and compare each network's field with its own capacity network.

# %%
erf_pr = ch.cached_call(study.erf_pseudo_random, depth=params["erf_depths"][-1],
                        channels=params["erf_channels"], length=ERF_LENGTH // 2,
                        inputs=params["erf_inputs"] // 4, nets=params["erf_pr_nets"],
                        res_scale=RES_SCALE, seed=ch.seed, device=ch.device)
pr_ratio = study.own_capacity_ratio(erf_pr["g2"], erf_pr["pred"])
relu_own = study.own_capacity_ratio(erf[f"residual_{params['erf_depths'][-1]}_g2"],
                                    erf[f"residual_{params['erf_depths'][-1]}_pred"])
ch.claim("erf_pseudo_random_residual", "Residual conv nets with pseudo-random units: ERF variance "
         "at the largest depth = that of each net's own capacity network (ratio, mean over nets)",
         kind="checks", measured=pr_ratio, reference=1.0, tol=0.035, comparison="abs",
         source="Donier 2019, Eq. 28 (exact for pseudo-random units); derived here",
         why="±0.035, about half the ReLU nets' deficit: a pass puts the deficit on ReLU's η",
         alternative=(relu_own.mean, "the ReLU nets' ratio (same law of weights)"))
ch.glue_all({"erf_pr_ratio": pr_ratio}, digits=4)
ch.glue_all({"erf_relu_own": relu_own}, digits=2)
ch.glue("tc_depths", ", ".join(str(L) for L in params["tc_depths"]))
ch.glue("tc_tau", params["tau"], digits=2)
ch.glue("erf_cause", ch.verdict(["erf_pseudo_random_residual"],
        "the deficit is ReLU's: its units do not decouple, and the cross terms of the gradient "
        "narrow the field",
        "the deficit is not ReLU's alone: the pseudo-random nets fall short too",
        "this run cannot tell the two causes apart"))

# %% [markdown]
# Against each network's own capacity network, the ERF variance is {glue}`erf_pr_ratio` of it with
# pseudo-random units and {glue}`erf_relu_own` with ReLU: {glue}`erf_cause`. How ReLU's correlated
# $\eta$ would act differently on residual and plain nets is not measured here.
#
# ## Residual networks in the paper's regime: ε = 1/L
#
# The residual networks above have $s = 1$ whatever their depth, so every layer is a step of order
# one and the receptive field keeps growing like $\sqrt L$. His Eq. 29 is a different limit:
# $L = 1/\varepsilon$ layers that each apply a step of order $\varepsilon$, so that depth plays the
# role of *time* and the receptive field at layer $l$ depends only on $t = (L - l)/L$
# {eq}`eq-02-dirac`. A residual layer $x_l = x_{l-1} + s\,W_l * f(x_{l-1})$ has the expected
# normalised capacity matrix $(I + s^2\,\mathbb E[W\circ W])/(1 + s^2)$; choosing
# $s^2 = \tau/(L - \tau)$ makes it exactly $I + \varepsilon\Delta$ with $\varepsilon = 1/L$ and
# $\Delta = \tau\big(\mathbb E[W\circ W]/\sum\mathbb E[W\circ W] - I\big)$ of order one. The
# capacity network then predicts an ERF variance $\tfrac23\tau t$ at every depth: nets of different
# depths should collapse on one curve in $t$. We measure the mean squared gradient of one output
# unit with respect to *every* layer $x_l$, in nets of depths {glue}`tc_depths` with $\tau$ =
# {glue}`tc_tau`.

# %%
t_collapse = ch.cached_call(study.residual_t_collapse, depths=params["tc_depths"],
                            tau=params["tau"], channels=16, length=32, inputs=params["tc_inputs"],
                            nets=params["tc_nets"], seed=ch.seed, device=ch.device)
tc_variances, tc_exponent = study.erf_width_fit(
    [t_collapse[f"g2_{L}"] for L in params["tc_depths"]], np.array(params["tc_depths"], float))
ch.figure(figures.t_collapse(t_collapse, params["tc_depths"], params["tau"]), "t_collapse",
          "Effective receptive field of random residual ReLU conv nets whose per-layer step "
          "scales as 1/L (s² = τ/(L − τ), τ = 4): its variance against t = (L − l)/L for every "
          "depth, mean ± 3 SE over networks, against the capacity network's (2/3)τt (left); the "
          "input-layer profiles (t = 1) against the Gaussian of Eq. 34 (right) (Donier, Eqs. 29 "
          "and 34).",
          arrays={k: t_collapse[k] for k in t_collapse})

# %%
ch.claim("t_collapse_exponent", "Residual ReLU nets with per-layer step ∝ 1/L: the input ERF "
         "width does not grow with depth (width ∝ Lᵞ, γ = 0): it depends on t only",
         kind="reproduces", measured=tc_exponent, reference=0.0, tol=0.1, comparison="abs",
         why="±0.1, a fifth of the fixed-s nets' exponent ½, separates t-only from √depth",
         source="Donier 2019, Eq. 29 (L = 1/ε) and Eq. 34 (t = (L − l)/L)",
         alternative=(0.5, "√depth growth, as for the s = 1 residual nets above"),
         caveat=f"{params['tc_nets']} networks per depth are too few for ±0.1")
# input-layer ERF variance over the capacity network's (2/3)τ
tc_ratio = study.variance_ratio(tc_variances, 2 / 3 * params["tau"])
ch.glue_all({"tc_ratio": tc_ratio})
ch.glue_all({"tc_gamma": tc_exponent}, digits=4)
ch.glue("tc_words", ch.verdict(["t_collapse_exponent"], "the receptive field is a function of t, "
        "as Eq. 34 has it", "the receptive field is not a function of t alone",
        "the receptive field is consistent with a function of t, not yet pinned to ±0.1 by this "
        "many networks"))

# %%
ERF_ROWS = {"plain": "plain, s = 1", "residual": "residual, s = 1",
            "t": "residual, s² = τ/(L − τ)", "pr": "residual, s = 1, pseudo-random units"}
erf_table = tables.estimate_columns(ERF_ROWS, [
    ("exponent γ", "± s.e. (γ)", {**exponents, "t": tc_exponent}),
    ("γ predicted", None, {"plain": 0.5, "residual": 0.5, "t": 0.0}),
    ("variance / capacity network's", "± s.e. (variance)", {**erf_ratio, "t": tc_ratio}),
    ("variance / own capacity network's", "± s.e. (own)", {"residual": relu_own, "pr": pr_ratio})],
    "nets")
ch.table(erf_table, "Effective receptive fields of random 1-D conv nets (ReLU units unless said) "
         "against the capacity network: the fitted exponent γ of the ERF width against depth, "
         "beside its prediction (½: Luo et al. 2016, §2, and Donier's Eq. 34; 0 for steps that "
         "shrink as 1/L: Donier, Eqs. 29 and 34), and the input ERF variance over the capacity "
         f"network's, of the expected weights (at depth {int(depths[-1])}; for the 1/L nets, mean "
         "over all depths) and of each network's own weights (at the same depth); each with its "
         "standard error.", formatter=tables.estimate_formats(erf_table), name="tab_erf")


# %% [markdown]
# The fitted exponent of the input ERF width against depth is {glue}`tc_gamma`, against ½ for the
# $s = 1$ nets: {glue}`tc_words`. Its size is
# {glue}`tc_ratio` times the capacity network's $\tfrac23\tau$ (mean over all nets and depths): ReLU
# units ($\nu = \tfrac12$) are not fully decoupling, so the capacity network is an approximation of
# their gradients (next section).
#
# ## Capacities and gradients: two sides of the same coin
#
# Donier closes with the remark that capacities and gradients "may be two sides of the same coin in
# the pseudo-random case". That can be made exact. With $f(z) = \eta(z)\,z$ and $\eta$ a
# pseudo-random ±1 function per unit, the input-gradient is a product of Jacobians
# $\operatorname{diag}(\eta)\,W$, and, over inputs, the $\eta$'s behave as independent random signs.
# All cross terms then average out, and for a *fixed* network
#
# $$
# \mathbb{E}_x\big[(\partial y/\partial x)^{\circ 2}\big] = D_1\cdots D_L\,(a\circ a),\qquad
# D_l = W_l\circ W_l \ \ (\text{plain}),\quad D_l = I + s^2\,W_l\circ W_l\ \ (\text{residual}),
# $$ (eq-02-gradients)
#
# the capacity network {eq}`eq-02-chain` (with the network's actual, unnormalised weights). For ReLU
# ($\eta \in \{0, \sqrt2\}$, $\nu = \tfrac12$) the signs are not independent and the cross terms
# survive. We test both on the *same* networks (same weights, same inputs): 16 channels, 48
# positions, depth `pr_depth`. The claims compare the total squared gradient, summed over positions
# and channels and averaged over the inputs, with the sum of the entries of {eq}`eq-02-gradients`'s
# right-hand side; its standard error comes from the scatter of the per-input totals (i.i.d. over
# inputs for a fixed network). We declare agreement at 5 %: the size of effect the comparison is
# about is the factor-of-two departure of ReLU networks.

# %%
gradients = ch.cached_call(study.pseudo_random_gradients, depth=params["pr_depth"], channels=16,
                           length=48, inputs=params["pr_inputs"], nets=params["pr_nets"],
                           res_scale=RES_SCALE, seed=ch.seed, device=ch.device)
ratios = study.gradient_ratio_summary(gradients)   # (arch, activation) → Estimate per network
ch.figure(figures.gradients_vs_capacity(gradients, params["pr_depth"]), "gradients_vs_capacity",
          "Mean squared input-gradient of one output unit (Monte-Carlo over inputs) against the "
          "capacity network ∏ₗDₗ (a∘a) of the same network (Donier, Eq. 28 and the closing "
          "remark 'two sides of the same coin'): exact for pseudo-random activations, approximate "
          "for ReLU.",
          arrays={k: gradients[k] for k in gradients if not k.endswith(("batches", "total"))})

# %%
for arch in diffusion.ARCHS:
    ch.claim(f"pr_grad_total_{arch}", "with pseudo-random units the total mean squared input-"
             "gradient = Σ ∏ₗDₗ (a∘a) of the same network (ratio, pooled over networks)",
             case=f"{arch} nets",
             kind="checks", measured=study.pooled_ratio(ratios[(arch, "pseudo_random")]),
             reference=1.0, tol=0.05, comparison="rel", caveat="too few inputs per network",
             why="5 % is small against ReLU's departures (which may cancel when pooled)",
             source="Donier 2019, Eq. 28 and §5 (capacities vs gradients); derived here: a "
                    "Monte-Carlo of the chapter's exact identity",
             alternative=(study.pooled_ratio(ratios[(arch, "relu")]).mean, "ReLU, same nets"))

# %%
for arch in diffusion.ARCHS:
    ch.claim(f"relu_deviates_{arch}", "with ReLU units single networks' total squared gradient "
             "departs from their capacity network by more than 5 % (largest |ratio − 1|)",
             case=f"{arch} nets",
             kind="predicts", reference=0.05, tol=0.0, comparison="ge",
             measured=study.largest_deviation_interval(ratios[(arch, "relu")], DEFAULT_CONFIDENCE),
             why="correlated η (ν = ½) keep the cross terms; 5 % as for pseudo-random units; "
                 "interval: hull of the per-network intervals, Bonferroni over networks",

             source="Donier 2019, Eq. 15 (ReLU is not fully decoupling); derived here",
             alternative=(0.0, "no departure, as for pseudo-random units"),
             caveat="a few per cent at this depth (the cross terms grow with depth)")

# %%
relu_ratios = study.ratio_means(ratios, "relu")
pseudo_random_ratios = study.ratio_means(ratios, "pseudo_random")
ch.glue("relu_ratio_min", float(relu_ratios.min()), digits=3)
ch.glue("relu_ratio_max", float(relu_ratios.max()), digits=3)
ch.glue("pr_ratio_min", float(pseudo_random_ratios.min()), digits=3)
ch.glue("pr_ratio_max", float(pseudo_random_ratios.max()), digits=3)
ch.glue_all({f"pr_pooled_{arch}": study.pooled_ratio(ratios[(arch, "pseudo_random")])
             for arch in diffusion.ARCHS}, digits=4)
ch.glue("pr_nets_total", len(pseudo_random_ratios))
RELU_IDS = ["relu_deviates_plain", "relu_deviates_residual"]
ch.glue("relu_verdict", ch.verdict(
    RELU_IDS, "they depart from it by more than the 5 % margin",
    "in at least one architecture they stay within 5 % of it",
    "at this depth and number of networks their departure is not resolved against the 5 % margin "
    "in every architecture"))
ch.glue("relu_verdict_found", ch.verdict(RELU_IDS, "a departure beyond the 5 % margin",
                                         "within 5 %", "not resolved against the 5 % margin"))
ch.glue("ch_samples", params["ch_samples"])

# %% [markdown]
# Over the {glue}`pr_nets_total` networks (plain and residual), the pseudo-random total is
# {glue}`pr_ratio_min` to {glue}`pr_ratio_max` times the capacity network's (pooled over networks,
# as the scorecard grades it: {glue}`pr_pooled_plain` plain, {glue}`pr_pooled_residual` residual),
# while the ReLU networks of the same weights give ratios from {glue}`relu_ratio_min` to
# {glue}`relu_ratio_max`: {glue}`relu_verdict` (the scorecard's value is the largest departure,
# $|\mathrm{ratio} - 1|$, with its interval).
#
# ## Capacity through real layers (Eq. 28)
#
# {eq}`eq-02-chain` chains the one-layer rule through the layers. For a network of piecewise-linear
# units the capacity of its inputs can be computed directly, without the chain: the augmented input
# of Eq. 6 gets one block per path of units, $\tilde Y = \eta_L\otimes\cdots\otimes\eta_1\otimes Y$,
# whose empirical covariance gives $\tilde K$ (Eq. 9) and the input capacities (Eq. 23), all layers
# at once. We compute them for random networks of 8 inputs with two layers of 8 units and three
# layers of 5 (columns uniform on the sphere, i.i.d. Gaussian inputs, a linear read-out of 2
# outputs), with pseudo-random, ReLU and linear units on the *same* weights and inputs, and set them
# against $D_1\cdots D_L\kappa^\varphi$. The departure is the L1 distance over the total capacity,
# per network; {glue}`ch_samples` inputs leave a sampling floor of a few hundredths (the augmented
# dimension over the number of inputs).

# %%
CHAIN_WIDTHS = {"two": [8, 8], "three": [5, 5, 5]}
chain = ch.cached_call(study.chain_capacity_table, n=8, widths=CHAIN_WIDTHS,
                       activations=["pseudo_random", "relu", "linear"],
                       samples=params["ch_samples"], nets=params["ch_nets"], readout=2,
                       seed=ch.seed)
departure = {(a, w): study.chain_departure(chain, a, w)
             for a in ("pseudo_random", "relu", "linear") for w in CHAIN_WIDTHS}
ch.figure(figures.chain_capacities(chain, CHAIN_WIDTHS), "chain_capacities",
          "Input capacities of random two- and three-layer networks computed directly from their "
          "augmented covariance (dots: pseudo-random, ReLU and linear units, same weights) "
          "against the capacity network ∏ₗDₗ κᵠ of the same weights (Donier, Eqs. 23 and 28).",
          arrays=chain)

# %%
for w in CHAIN_WIDTHS:
    ch.claim(f"chain_pseudo_random_{w}", "with pseudo-random units the input capacities are ∏ₗDₗ "
             "κᵠ (L1 departure over total, mean over networks)", case=f"{w} layers",
             kind="predicts", measured=departure[("pseudo_random", w)], reference=0.0, tol=0.15,
             comparison="le", source="Donier 2019, Eqs. 27–28 (pseudo-random case)",
             why="0.15: about twice the sampling floor, a third of the linear nets' departure",
             alternative=(departure[("linear", w)].mean, "linear units, same nets"))
    ch.claim(f"chain_relu_departs_{w}", "with ReLU units the input capacities depart from ∏ₗDₗ "
             "κᵠ by more than 0.15, the pseudo-random units' margin", case=f"{w} layers",
             kind="predicts",
             measured=departure[("relu", w)], reference=0.15, tol=0.0, comparison="ge",
             source="Donier 2019, Eq. 15 and footnote 5 (the chain needs decoupling units)",
             why="the pseudo-random margin",
             alternative=(0.0, "the chain holds, as for pseudo-random units"))
ch.glue_all({f"chain_pseudo_random_{w}": departure[("pseudo_random", w)] for w in CHAIN_WIDTHS},
            digits=4)
CHAIN_IDS = [f"chain_{u}_{w}" for u in ("pseudo_random", "relu_departs") for w in CHAIN_WIDTHS]
ch.glue("chain_words", ch.verdict(
    CHAIN_IDS, "the capacity network is the capacity of a real network when its units decouple, "
    "and ReLU units (ν = ½) depart from it by more than the pseudo-random margin",
    "at least one of the two — pseudo-random units within the margin, ReLU units beyond it — "
    "does not hold (the scorecard says which)",
    "the pseudo-random and ReLU departures are not both resolved against the margin by this run"))

# %%
CHAIN_UNITS = {"pseudo_random": "pseudo-random", "relu": "ReLU", "linear": "linear"}
chain_table = tables.estimate_columns(CHAIN_UNITS, [
    (f"{w} layers ({', '.join(map(str, widths))})", f"± s.e. ({w})",
     {a: departure[(a, w)] for a in CHAIN_UNITS}) for w, widths in CHAIN_WIDTHS.items()], "units")
ch.table(chain_table, "Departure of the input capacities of random networks, computed directly "
         "from their augmented covariance (Donier, Eqs. 6, 9 and 23), from the capacity network "
         "∏ₗDₗ κᵠ of the same weights (Eq. 28): L1 distance over the total capacity, mean over "
         f"{params['ch_nets']} networks of 8 inputs (layer widths in the header), with its "
         f"standard error; {params['ch_samples']:,} inputs per network. The claims hold the "
         "pseudo-random rows to at most 0.15 and the ReLU rows above it.",
         formatter=tables.estimate_formats(chain_table), name="tab_chain")

# %% [markdown]
# {glue}`tab_chain` gives the departure for every kind of unit: through two layers it is
# {glue}`chain_pseudo_random_two` for pseudo-random units and through three
# {glue}`chain_pseudo_random_three`, against a sampling floor of a few hundredths:
# {glue}`chain_words`.
#
# ## Shattering (Eqs. 35–36; Balduzzi et al. 2017)
#
# His Eq. 35 splits $\kappa^l$ into paths through the capacity network; the heaviest is the straight
# path, of weight (his Eq. 36)
#
# $$
# w_\mathrm{max} = \prod_l (D_l)_{ii} = \prod_l \big(1 + \varepsilon(\Delta_l)_{ii}\big) \approx
# \exp\Big(\sum_l \varepsilon(\Delta_l)_{ii}\Big) .
# $$ (eq-02-straight)
#
# For residual layers $D_l = I + \varepsilon\Delta_l$ with $\Delta$ of order one and
# $L = 1/\varepsilon$, it stays of order one however deep the network; for uniform plain layers of
# receptive field $r$, $(D_l)_{ii} = 1/r$ and $w_\mathrm{max} = (1/r)^L$ vanishes exponentially.
# Here $\Delta_l$ has $a, b \sim U(0.25, 0.75)$, so $(\Delta_l)_{ii} = -(a+b)$ has mean −1. The
# curves start at $L = 2$: with a single layer, $\varepsilon = 1$ and $\varepsilon(a+b)$ can exceed
# 1, so $I + \varepsilon\Delta$ would have a negative diagonal and not be a capacity matrix
# (`residual_layer` refuses it). Both laws, and the bound
# $\big|w_\mathrm{max}/\exp\big(\sum_l\varepsilon(\Delta_l)_{ii}\big) - 1\big| \le e^{2.25/L} - 1$
# on {eq}`eq-02-straight`, are exact statements about these products and are unit-tested.
#
# The companion measurement is {cite:t}`balduzzi2017shattered`'s: the correlation between the
# input-gradients of a random ReLU network at neighbouring inputs, for plain and residual networks.

# %%
path_depths = np.unique(np.geomspace(2, 400, 25).astype(int))
straight_path = study.straight_path_curves(path_depths, ch.seed)
shattering = ch.cached_call(study.shattering_table, depths=params["sh_depths"],
                            width=params["sh_width"], points=256, nets=params["sh_nets"],
                            res_scale=0.5, seed=ch.seed)
sh_depths = np.array(params["sh_depths"])
correlations = {a: np.array([shattering[f"{a}_{d}_corr"] for d in sh_depths])
                for a in diffusion.ARCHS}
ch.figure(figures.shattering(path_depths, straight_path, correlations,
                             {a: shattering[f"{a}_{sh_depths[-1]}_grad0"] for a in diffusion.ARCHS},
                             sh_depths), "shattering",
          "Shattering: the straight-path weight of the capacity network, residual layers I + Δ/L "
          "against Eq. 36's exp(Σₗ εΔᵢᵢ) (dotted) and plain layers of receptive field r, whose "
          "weight is (1/r) to the power L (Donier, Eqs. 35–36, §4.2; top left), the correlation "
          "of input-gradients at neighbouring inputs of random ReLU nets against depth (top "
          "right), and one network's gradient along the input line (bottom), in the set-up of "
          "Balduzzi et al. 2017, Fig. 1 (256 inputs in [−2, 2]).",
          arrays={"L": path_depths, **straight_path, **shattering})

# %%
plain, residual = correlations["plain"], correlations["residual"]
ch.claim("shatter_residual_vs_plain", f"At depth {sh_depths[-1]}, residual nets keep nearby "
         "gradients more correlated than plain nets (difference of mean lag-1 correlations)",
         kind="reproduces", measured=study.welch_difference(residual[-1], plain[-1]),
         reference=0.0, tol=0.0, comparison="ge", caveat="too few networks",
         why="a sign; large at depth 50 (Balduzzi et al.'s), a few hundredths at depth 10",
         source="Balduzzi et al. 2017, §3 and Fig. 1; Donier 2019, §4.2",
         alternative=(0.0, "no effect: residual and plain nets equally correlated"))
ch.claim("shatter_plain_decays", f"Plain nets: the lag-1 gradient correlation falls from depth "
         f"{sh_depths[0]} to {sh_depths[-1]}", kind="reproduces", comparison="ge",
         measured=study.welch_difference(plain[0], plain[-1]), reference=0.0, tol=0.0,
         why="a sign", source="Balduzzi et al. 2017, §3 and Fig. 1", caveat="too few networks",
         alternative=(0.0, "no decay with depth"))

# %%
ch.glue("sh_depth_max", int(sh_depths[-1]))
ch.glue("sh_verdict", ch.verdict(["shatter_residual_vs_plain", "shatter_plain_decays"],
        "both contrasts resolved at 99 % in this run",
        *2 * ["not resolved at 99 % in this run by every contrast"]))
ch.glue("sh_corr_plain", float(plain[-1].mean()), digits=2)
ch.glue("sh_corr_res", float(residual[-1].mean()), digits=2)
ch.glue("wmax_res_last", float(straight_path["w_res"][-1]), digits=2)
ch.glue("wmax_depth_last", int(path_depths[-1]))
ch.glue("drift_verdict", ch.verdict(["sampled_drift_eq33"], "below half of it, as v = 0 has it "
                                    "network by network", "not below half of it",
                                    "not decidedly below half of it in this run"))
ch.glue_outcomes("found_outcomes")


# %% [markdown]
# ## What we found
#
# *Capacity network.* The chain {eq}`eq-02-chain` conserves capacity exactly, for any widths. In the
# residual limit the network-averaged capacity of one output unit is exactly a lattice random walk,
# {glue}`diff_l1` from the Gaussian {eq}`eq-02-dirac` in L1 distance after $L$ layers (its kurtosis
# correction is {glue}`diff_edge`); the sampled networks' mean second moment is 1 times
# $2\mathcal D$ by construction ({glue}`sampled_m2`, a check). Network by network, the spread of
# their variance over $2\mathcal D$ is {glue}`sampled_spread`, {glue}`spread_verdict` the
# {glue}`frozen_spread` of a frozen medium of the same construction; their drift is
# {glue}`sampled_drift_rms` of the width (rms), against {glue}`sampled_drift_alt` for the paper's
# random translation-invariant layers ({glue}`drift_verdict`). With identical drifting layers, the
# numerics check out: the capacity network
# converges to the solution of {eq}`eq-02-kolmogorov` at first order in $\varepsilon$ (log-log slope
# {glue}`eq30_slope`), and that solution is the drifting Gaussian {eq}`eq-02-drift` up to its
# skewness correction ({glue}`drift_l1_eq32` against {glue}`drift_edge`). Differential layers (the
# longer version's §3.3 and Appendix B, whose equations are blank in our copy) make the network an
# SDE; in our reconstruction, with pseudo-random weights, the Monte-Carlo capacity matches the
# exact recursion (variance {glue}`found_df_var`, drift {glue}`found_df_drift` of the recursion's;
# no drift when the kernel fluctuates, {glue}`found_df_mirror`) — checks of our code; the paper's
# link between $\mathcal D$ and the SDE's coefficient is lost with its equations and is not graded.
# Through two and three real layers, set against the input capacities computed directly from the
# augmented covariance ({glue}`tab_chain`), {glue}`chain_words`.
#
# *Receptive fields.* Real random convolutional ReLU networks, plain and residual, have
# Gaussian-looking effective receptive fields whose width grows with depth, as
# {cite:t}`luo2016understanding` found and as the capacity network predicts: the fitted exponent of
# the width against depth ({glue}`tab_erf`) {glue}`erf_verdict`. In the
# paper's own regime — residual steps that shrink as $1/L$ — {glue}`tc_words` (the exponent of its
# width against depth is {glue}`tc_gamma`, against 0 for a field that stops growing with depth), at
# {glue}`tc_ratio` times the capacity network's size. The capacity network is a *prediction for
# pseudo-random units*: for those, the mean squared input-gradient equals
# {eq}`eq-02-gradients` per network, not just on average, so "capacities and gradients are two sides
# of the same coin" is a theorem there (its Monte-Carlo a check), and the totals are
# {glue}`pr_ratio_min` to {glue}`pr_ratio_max` times the capacity network's in this run. ReLU units
# ($\nu = \tfrac12$) are
# not fully decoupling: the total squared gradient of individual networks is {glue}`relu_ratio_min`
# to {glue}`relu_ratio_max` times the capacity network's (in this run {glue}`relu_verdict_found`),
# although *averaged over networks* the ReLU receptive field keeps the predicted Gaussian shape (its
# variance at depth {glue}`erf_depth_max` is {glue}`found_erf_ratio_plain` times the capacity
# prediction for plain networks, {glue}`erf_side_plain`); for residual networks it is
# {glue}`found_erf_ratio_residual` times, {glue}`erf_side_residual` (standard errors in
# {glue}`tab_erf`); set against pseudo-random units on nets of the same law, each against its own
# capacity network (same table), {glue}`erf_cause`.
#
# *Shattering.* The straight-path weight is $O(1)$ for residual capacity networks
# ({glue}`wmax_res_last` at $L$ = {glue}`wmax_depth_last`) and decays as $(1/r)^L$ for plain ones.
# In real ReLU networks without batch normalisation, the gradient correlation at neighbouring inputs
# at depth {glue}`sh_depth_max` is {glue}`sh_corr_plain` for plain and {glue}`sh_corr_res` for
# residual networks — the contrast {cite:t}`balduzzi2017shattered` describe ({glue}`sh_verdict`).
# Balduzzi et al.'s plain networks at depth 50 have gradients like white noise; ours are compared
# with theirs on the trend (the two contrasts above), not on that extreme.
#
# *The ledger.* {glue}`found_outcomes`
#
# ## Scorecard

# %%
ch.finish()
