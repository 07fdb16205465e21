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
# # Information geometry: the Fisher–Rao norm, flatness and K-FAC
#
# A ReLU network has many parametrisations of one and the same function: multiply the weights
# entering a layer by α and divide the weights leaving it by α, and nothing the network computes
# changes. A capacity measure that is supposed to explain generalisation should not notice such a
# move. This chapter follows the second part of the lecture on information geometry and
# generalisation by {cite:t}`daroczy2020information` and re-computes, from scratch and on the
# scikit-learn digits, four results it collects: the analytic form of the Fisher–Rao norm of
# rectifier networks ({cite:t}`liang2019fisher`, Theorem 3.1); the observation that flatness of the
# loss is *not* invariant under these rescalings ({cite:t}`dinh2017sharp`); the Kronecker-factored
# approximation of the Fisher information ({cite:t}`martens2015optimizing`); and how capacity
# measures respond when the labels are progressively randomised (Liang et al.). A short last
# section checks the slides' Lemma 3.1 on tangent sample sensitivity, which
# {doc}`06_linear_regions` treats in depth.
#
# Identities that hold to round-off (Theorem 3.1 itself, Euler's identity, the invariance of the
# function and of the Fisher–Rao norm under the rescalings) are verified in the package's unit
# tests against brute-force computations; the chapter shows them in figures. So are the
# consequences of the rescalings' transformation law for norms, the Hessian and sharpness. The
# claims graded in the scorecard are the statements that can come out otherwise: how good K-FAC
# is, how its damped inverse is structured, and how capacity measures respond to random labels.
# Statistical claims carry confidence intervals from the spread over independently trained
# networks, noise draws or inputs at the scale that ran.

# %% tags=["parameters", "remove-cell"]
scale = "ci"          # ci | default | paper
seed = 0
device = "auto"       # auto | cpu | cuda (this chapter computes on the CPU in float64)
fr_depths = None      # hidden-layer counts L for the Fisher–Rao identity
fr_widths = None      # hidden widths for the Fisher–Rao identity
fr_n = None           # inputs used for the Fisher–Rao identity
hidden = None         # hidden width of the trained MLP (reparametrisation, K-FAC, tangents)
n_train = None        # training digits (the last 297 digits are never trained on)
train_steps = None    # maximum full-batch Adam steps
lr = None             # Adam learning rate
target_loss = None    # training stops at this cross-entropy
alphas = None         # α grid of the reparametrisations (must include 1)
lanczos_iter = None   # Lanczos iterations for the top Hessian eigenvalue
sharp_draws = None    # weight-noise draws for the expected sharpness
sharp_sigma = None    # weight-noise scale for the expected sharpness
kfac_n = None         # inputs over which the Fisher is averaged
kfac_units = None     # units per layer shown in the Fisher heat-maps
kfac_seeds = None     # independently trained MLPs for the K-FAC statistics (≥ 2)
ng_nets = None        # of those, the nets whose whole damped Fisher is inverted (≥ 2)
rand_fractions = None  # fractions of randomised labels
rand_seeds = None     # MLPs trained per fraction (≥ 2)
rand_hidden = None    # hidden width of the label-randomisation MLPs
rand_steps = None     # maximum Adam steps of the label-randomisation runs (cap for the target loss)
rand_budget = None    # the fixed training budget (Adam steps) of the label-randomisation runs
tangent_pairs = None  # pairs of inputs for the tangent-sensitivity check

# %% [markdown]
# ## Set-up
#
# Everything runs on the CPU in float64. The digits (8×8, flattened to 64 inputs) are shuffled
# once by the chapter seed; the first `n_train` are the training set and the last 297 the test
# set. The trained network of the reparametrisation, K-FAC and tangent sections is a bias-free
# ReLU MLP 64-h-h-10 trained with full-batch Adam on the cross-entropy until the training loss
# reaches `target_loss` (cached on disk, keyed by its configuration).

# %%
import numpy as np
import pandas as pd

from layerwise import infogeo, networks, stats
from layerwise.chapter import Chapter, format_value, join_words
from layerwise.claims import Control, significant
from layerwise.data import digits
from layerwise.figures import ch08 as figures
from layerwise.params import resolve_from
from layerwise.studies import ch08 as study
from layerwise.tables import estimate_formats, estimates_frame

# %%
SCALES = {
    "ci": {"fr_depths": [1, 2, 3], "fr_widths": [8, 16], "fr_n": 32, "hidden": 12, "n_train": 200,
        "train_steps": 600, "lr": 0.01, "target_loss": 0.001, "alphas": [0.01, 0.1, 1, 10, 100],
        "lanczos_iter": 20, "sharp_draws": 8, "sharp_sigma": 0.05, "kfac_n": 150, "kfac_units": 5,
        "kfac_seeds": 5, "ng_nets": 5, "rand_fractions": [0.0, 1.0], "rand_seeds": 2,
        "rand_hidden": 32, "rand_steps": 1500, "rand_budget": 500, "tangent_pairs": 4
    },
    "default": {"fr_depths": [1, 2, 3, 4, 5], "fr_widths": [8, 32, 64], "fr_n": 64, "hidden": 32,
        "n_train": 500, "train_steps": 2000, "lr": 0.01, "target_loss": 0.001,
        "alphas": [0.01, 0.0316, 0.1, 0.316, 1, 3.16, 10, 31.6, 100], "lanczos_iter": 30,
        "sharp_draws": 32, "sharp_sigma": 0.05, "kfac_n": 300, "kfac_units": 6, "kfac_seeds": 6,
        "ng_nets": 6, "rand_fractions": [0.0, 0.2, 0.4, 0.6, 0.8, 1.0], "rand_seeds": 8,
        "rand_hidden": 64, "rand_steps": 4000, "rand_budget": 500, "tangent_pairs": 16
    },
    "paper": {"fr_depths": [1, 2, 3, 4, 5, 6], "fr_widths": [8, 32, 64, 128], "fr_n": 128,
        "hidden": 64, "n_train": 1500, "train_steps": 5000, "lr": 0.01, "target_loss": 0.001,
        "alphas": [0.01, 0.0316, 0.1, 0.316, 1, 3.16, 10, 31.6, 100], "lanczos_iter": 50,
        "sharp_draws": 128, "sharp_sigma": 0.05, "kfac_n": 1000, "kfac_units": 8, "kfac_seeds": 8,
        "ng_nets": 8, "rand_fractions": [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0],
        "rand_seeds": 10, "rand_hidden": 128, "rand_steps": 10_000, "rand_budget": 2000,
        "tangent_pairs": 64
    },
}
params = study.check_params(resolve_from(SCALES, scale, globals()))  # validated before any work
ch = Chapter("08_information_geometry", scale=scale, seed=seed, device=device, params=params)

# %%
# The digits, shuffled once by the chapter seed: the first n_train train, the last 297 test.
train_x, train_y, test_x, test_y = study.split_digits(*digits(), ch.rng("split"), params["n_train"])
WIDTHS = [64, params["hidden"], params["hidden"], 10]


# the bias-free ReLU MLPs 64-h-h-10 trained on the digits, one stored unit of work per net (its
# training and its K-FAC analysis): here, or on a cluster, with the same numbers
nets = ch.cached_units(study.kfac_unit, params["kfac_seeds"], x=train_x, y=train_y, widths=WIDTHS,
                       steps=params["train_steps"], lr=params["lr"],
                       target_loss=params["target_loss"], seed=ch.seed, kfac_n=params["kfac_n"])


def trained_mlp(s):
    """Net ``s``: its weights, loss history and initialisation seed."""
    return (*study.unit_net(nets, s), ch.torch_seed("mlp", s))

# %% [markdown]
# ## The Fisher–Rao norm of a rectifier network
#
# Let $f_\theta(x)$ be a feed-forward network with L hidden layers, no biases and an activation with
# σ(z) = σ'(z)·z: ReLU and leaky ReLU qualify, tanh does not. Each layer is then positively
# homogeneous, and scaling all L+1 weight matrices by c scales the output by cᴸ⁺¹.
# Differentiating in c at c = 1 gives Euler's identity for the network,
#
# $$
# \Big\langle \theta, \frac{\partial f_\theta(x)}{\partial \theta} \Big\rangle = (L+1)\,
# f_\theta(x).
# $$ (eq-08-euler)
#
# {cite:t}`liang2019fisher` build their capacity measure on it. With the Fisher information
# $I(\theta) = \mathbb E[\nabla_\theta \ell \otimes \nabla_\theta \ell]$ and the chain rule
# $\nabla_\theta \ell = (\partial f/\partial\theta)^\top \partial \ell/\partial f$, the quadratic
# form in the direction of θ itself collapses to a statement about outputs (Liang et al., Theorem
# 3.1):
#
# $$
# \|\theta\|_{\rm fr}^2 := \langle \theta, I(\theta)\,\theta\rangle = \mathbb E\,\langle \theta,
# \nabla_\theta \ell\rangle^2 = (L+1)^2\, \mathbb E \Big\langle \frac{\partial \ell}{\partial f},
# f_\theta(x) \Big\rangle^2 .
# $$ (eq-08-fisher-rao)
#
# We compute both sides of {eq}`eq-08-fisher-rao` independently: the left side from exact
# per-example gradients (`torch.func.vmap(grad)`), with no use of homogeneity, and the right side
# from the outputs alone. We do this for the empirical Fisher (the training labels) and for the
# Fisher proper (labels drawn from the model's own softmax, the expectation taken exactly by summing
# over the ten classes), on random He-initialised networks of several depths and widths, in float64.
# Then we break the assumptions: add biases, or swap ReLU for tanh.

# %%
fr_n = params["fr_n"]
fr_rows = infogeo.fisher_rao_table(train_x[:fr_n], train_y[:fr_n], params["fr_depths"],
                                 params["fr_widths"], lambda *k: ch.torch_seed("fr", *k))
fr_table = pd.DataFrame(fr_rows)
FR_COLUMNS = {"rel_diff": "identity, relative error", "euler": "Euler residual",
              "euler_weighted": "weighted Euler residual"}
ch.table(fr_table.groupby("case")[list(FR_COLUMNS)].agg(["min", "max"]).rename(
    columns=FR_COLUMNS).rename(index=lambda c: c.replace("_", " ")).rename_axis("network"),
    "The Fisher–Rao identity and Euler's relation on each kind of network: smallest and largest "
    "relative error over the networks checked.", formatter=lambda v: significant(v, 2))

# %%
fig = figures.fisher_rao_identity(fr_table.case.values, fr_table.identity.values,
                                  fr_table.direct.values, fr_table.n_params.values,
                                  fr_table.rel_diff.values)
ch.figure(fig, "fisher_rao_identity",
          "The two sides of Liang et al. (2019), Theorem 3.1, for random networks: ⟨θ, I(θ)θ⟩ "
          "from exact per-example gradients against (L+1)²E⟨∂ℓ/∂f, f⟩² from the outputs, for "
          "every depth and width of the table, empirical and model Fisher. Bias-free ReLU and "
          "leaky ReLU sit on the diagonal to round-off (right: relative difference, floored at "
          "ε/10); biases or tanh break the identity.",
          arrays=dict(direct=fr_table.direct.values, identity=fr_table.identity.values,
                      rel_diff=fr_table.rel_diff.values, n_params=fr_table.n_params.values,
                      L=fr_table.L.values, width=fr_table.width.values,
                      case=np.array(fr_table.case.values, dtype=str),
                      labels=np.array(fr_table.labels.values, dtype=str)),
          alt="Scatter of the two sides of the Fisher–Rao identity for random networks, and their "
              "relative difference against the number of parameters: bias-free ReLU and leaky-ReLU "
              "networks agree to round-off, networks with biases or tanh do not.")

# %%
ch.glue_all(study.fisher_rao_summary(fr_rows), digits=2)

# %% [markdown]
# {numref}`fig-08-fisher-rao-identity` shows both sides of {eq}`eq-08-fisher-rao` for
# {glue}`fr_n_nets` random networks. On the homogeneous networks the two sides agree to a relative
# difference of at most {glue}`fr_homog_max` ({glue}`fr_homog_eps` times the float64 machine
# epsilon, the size of the round-off in sums of a few thousand products), and Euler's identity
# {eq}`eq-08-euler` holds to {glue}`euler_homog_max`. With tanh the two sides differ by between
# {glue}`fr_tanh_min` and {glue}`fr_tanh_max` (relative), and with small biases (standard deviation
# 0.1) by between {glue}`fr_bias_min` and {glue}`fr_bias_max` — small, but many orders of magnitude
# above round-off. That the identity holds to round-off is a property of the code, not a finding, so
# it is verified where such things belong: the unit tests of `layerwise.infogeo` compare the
# outputs-only form with the quadratic form θᵀIθ of a Fisher matrix summed explicitly from
# per-example (and, for the model Fisher, per-class) autograd gradients, and check that biases and
# tanh break it.
#
# The failure with biases is not arbitrary: a bias in layer l scales like cˡ when the weights
# scale like c, so Euler's identity survives in the weighted form
#
# $$
# \sum_l \Big\langle W_l, \frac{\partial f}{\partial W_l}\Big\rangle + \sum_l l\,\Big\langle b_l,
# \frac{\partial f}{\partial b_l}\Big\rangle = (L+1)\, f,
# $$ (eq-08-euler-weighted)
#
# which holds here to {glue}`euler_weighted_max` (column “weighted Euler residual” of the table;
# also a unit test). Euler's identity {eq}`eq-08-euler`, on which the Fisher–Rao identity of Liang
# et al. rests, is the special case in which every parameter has weight one. No such repair exists
# for tanh, which is not homogeneous.

# %% [markdown]
# ## Flatness is not invariant under reparametrisation
#
# {cite:t}`dinh2017sharp` point out that for a rectifier network the α-scale transformation
# $T_\alpha(\theta_1, \theta_2) = (\alpha\theta_1, \theta_2/\alpha)$ of two consecutive layers
# (their Definition 5) is a symmetry: the function, hence the loss, is unchanged. Its Hessian is
# not: since $T_\alpha$ is linear and diagonal,
#
# $$
# H(T_\alpha\theta) = T_\alpha^{-1}\, H(\theta)\, T_\alpha^{-1},
# $$ (eq-08-hessian)
#
# so the curvature along the second layer grows like α² and along the
# first like α⁻². Any minimum can be made as sharp as one wishes without changing a single
# prediction. The Fisher–Rao norm is immune by construction:
# $\langle T_\alpha\theta, \nabla\ell(T_\alpha\theta)\rangle$ = ⟨θ, ∇ℓ(θ)⟩ (Liang et al., Corollary
# 3.1).
#
# We train a bias-free ReLU MLP 64-h-h-10 on the digits with full-batch Adam and apply $T_\alpha$ to
# its first two layers for α from 10⁻² to 10². Alongside we apply the finer *unit-wise* rescaling
# (unit j of the first hidden layer gets $\alpha^{s_j}$ on its incoming and $\alpha^{-s_j}$ on its
# outgoing weights, sⱼ = ±1 alternating), which is equally a symmetry. At each α we measure: the
# change of the function; ⟨θ, I(θ)θ⟩ from per-example gradients; the ℓ₂ norm of θ; the product of
# the layers' spectral norms; the largest Hessian eigenvalue of the training loss by Lanczos on
# exact Hessian-vector products; and the expected sharpness
# $\mathbb E_\nu L(\theta+\nu) - L(\theta)$ of
# {cite:t}`neyshabur2017exploring`, once with isotropic noise ν ~ N(0, σ²I) and once with noise
# proportional to each weight, ν = σ ε ⊙ θ (both with the same noise draws at every α).

# %%
net, loss_history, _ = trained_mlp(0)
ch.glue("mlp_widths", "-".join(str(w) for w in WIDTHS))
ch.glue("mlp_steps", int(len(loss_history)))
ch.glue("mlp_loss", float(loss_history[-1]), digits=2)
for split, x, y in (("train", train_x, train_y), ("test", test_x, test_y)):
    ch.glue(f"mlp_{split}_acc", float((networks.forward(net, x).argmax(1).numpy() == y).mean()))
sweep = ch.cached_call(infogeo.reparam_sweep, name="reparam", params=net, x=train_x, y=train_y,
                       alphas=params["alphas"], lanczos_iter=params["lanczos_iter"],
                       sharp_draws=params["sharp_draws"], sharp_sigma=params["sharp_sigma"],
                       seed_lanczos=ch.torch_seed("lanczos"),
                       seed_lanczos2=ch.torch_seed("lanczos2"), seed_noise=ch.torch_seed("noise"))
reparam = infogeo.reparam_summary(sweep)

# %% [markdown]
# The trained MLP {glue}`mlp_widths` reached a training loss of {glue}`mlp_loss` after
# {glue}`mlp_steps` Adam steps (train accuracy {glue}`mlp_train_acc`, test accuracy
# {glue}`mlp_test_acc`); {numref}`fig-08-reparametrisation` shows what the two rescalings do to it.

# %%
ch.figure(figures.reparametrisation(sweep, params["sharp_sigma"]), "reparametrisation",
          "A trained bias-free ReLU MLP on the digits under Dinh et al.'s (2017) α-scale "
          "transformation T(α) of its first two layers (Definition 5, solid) and the unit-wise "
          "rescaling (dashed). The function and the Fisher–Rao norm do not move (round-off, "
          "floored at ε/10); the ℓ₂ norm, the top Hessian eigenvalue and the isotropic expected "
          "sharpness change by orders of magnitude. The spectral-norm product is invariant under "
          "T(α) but not under the unit-wise rescaling; expected sharpness with noise ∝ |θ| is "
          "invariant under both (error bars ±2 standard errors over the noise draws).",
          arrays=dict(sweep),
          alt="Four log-log panels against the rescaling factor α: the function and Fisher–Rao "
              "norm stay at round-off, while norms, the top Hessian eigenvalue and the isotropic "
              "expected sharpness grow away from α = 1.")

# %%
# The ℓ₂ range, the unit-wise spectral range, max_α λ_max / λ_max(1), the slopes ±2 of λ_max at
# the ends of the grid and the growth of the isotropic expected sharpness follow from the α grid
# and H ↦ T_α⁻¹HT_α⁻¹ alone (closed forms and their limits; with the same noise the sharpness is
# the transformed quadratic form to third order): unit tests, shown in the figure and the text,
# not claims.
ch.glue_all({name: reparam[name] for name in ("inv_dev", "lam_conv", "spec_t_dev", "mult_dev")},
            digits=2)
for name in ("lam_ratio", "l2_range", "spec_unit_range", "iso_ratio"):
    ch.glue_all({name: reparam[name]}, digits=2)
ch.glue("slope_hi", reparam["slope_hi"])
ch.glue("slope_lo", reparam["slope_lo"])
ch.glue("lanczos_iter", int(params["lanczos_iter"]))

# %% [markdown]
# The function and the Fisher–Rao norm move by at most {glue}`inv_dev` (relative) over the whole
# grid, both rescalings included — round-off, and a unit test. Every quantity that depends on the
# parametrisation and not only on the function moves. The ℓ₂ norm changes by a factor
# {glue}`l2_range` across the grid. The Hessian's largest eigenvalue follows the prediction
# {eq}`eq-08-hessian`: its log-log slope is {glue}`slope_hi` between the two largest α and
# {glue}`slope_lo` between the two smallest (the limits ±2, a consequence of the transformation
# law that the unit tests check on its own), and the trained minimum is made
# sharper by a factor {glue}`lam_ratio` while predicting exactly as before. (Lanczos with
# {glue}`lanczos_iter` iterations agrees with twice as many to {glue}`lam_conv`.) The isotropic
# expected sharpness behaves the same way — at the ends of the grid it is {glue}`iso_ratio` times
# its value at α = 1 (the smaller of the two ends): noise that is harmless for weights of size one
# destroys a layer whose weights were divided by 100. This too follows from
# {eq}`eq-08-hessian`: with the same noise ν, the sharpness of $T_\alpha\theta$ is
# $(T_\alpha^{-1}\nabla L)^\top\nu + \tfrac12\nu^\top T_\alpha^{-1}HT_\alpha^{-1}\nu$ to third
# order in ν, which grows like α² at one end and α⁻² at the other (a unit test); the run
# shows how large the factor is, not whether there is one.
#
# Two refinements of Dinh et al.'s picture, both exact. First, the *product* of spectral norms (and
# of Frobenius norms, and the path norm) is invariant under $T_\alpha$ — here to {glue}`spec_t_dev`
# — since the two factors α and 1/α cancel. The capacity bounds built on products of layer norms
# (Neyshabur et al.) are therefore immune to Dinh et al.'s layer-wise move; they are not immune to
# the unit-wise rescaling, which changes the spectral product by a factor {glue}`spec_unit_range`
# (dashed curve). Secondly, the expected sharpness with noise proportional to each weight,
# ν = σε ⊙ θ, is invariant under both rescalings (here to {glue}`mult_dev`, round-off with the
# same noise draws; a unit test): rescaled noise on rescaled weights is the original noise
# rescaled. This is why Neyshabur et al. scale their perturbations with |wᵢ| — their bound
# α(|wᵢ| + 1), as the slides quote it, only loses the invariance through the "+1".

# %% [markdown]
# ## K-FAC: how Kronecker-factored is the Fisher?
#
# For a layer with input activations aᵢ₋₁ and pre-activation gradients gᵢ, the weight gradient
# is gᵢ aᵢ₋₁ᵀ, whose row-major vectorisation is gᵢ ⊗ aᵢ₋₁. The Fisher block of the layer is
# therefore
#
# $$
# F_i = \mathbb E\big[(g_i g_i^\top) \otimes (a_{i-1} a_{i-1}^\top)\big],
# $$ (eq-08-fisher-block)
#
# expectations over the inputs and over targets drawn from the model's predictive distribution.
# K-FAC {cite:p}`martens2015optimizing` replaces the expectation of the Kronecker product by the
# Kronecker product of the expectations,
#
# $$
# F_i \approx G_i \otimes A_{i-1}, \qquad G_i = \mathbb E[g_i g_i^\top],\quad A_{i-1} = \mathbb
# E[a_{i-1} a_{i-1}^\top],
# $$ (eq-08-kfac)
#
# exact if g and a are independent, an approximation otherwise. It also drops the blocks between
# layers.
#
# We build every Fᵢ exactly (a sum over inputs and the ten classes of pₖ-weighted outer products;
# the unit tests check it against a brute-force sum of per-example, per-class gradients) and compare
# with Gᵢ ⊗ Aᵢ₋₁ {eq}`eq-08-kfac`, at He initialisation and after training, for `kfac_seeds`
# independently trained nets. Two baselines frame the error: the diagonal of Fᵢ (what diagonal
# preconditioners keep) and the *best* Kronecker product, found by the rearrangement of
# {cite:t}`vanloan1993approximation`, which no Kronecker factorisation can beat. Because the
# Frobenius norm splits over blocks, the error of block-diagonal K-FAC against the whole Fisher
# splits exactly into the part it drops (the blocks between layers) and the part it gets wrong
# inside the blocks (Gᵢ ⊗ Aᵢ₋₁ ≠ Fᵢ); we measure both.

# %%
kfac_runs = [study.unit_kfac(nets, s) for s in range(params["kfac_seeds"])]
kfac_runs[0] |= ch.cached_call(study.kfac_subset, trained=trained_mlp(0)[0],  # net 0's blocks
                               init_seed=ch.torch_seed("mlp", 0), x=train_x[: params["kfac_n"]],
                               units=params["kfac_units"])
kfac = infogeo.kfac_summary(kfac_runs)
kfac_found = study.kfac_findings(kfac)
STATES = study.KFAC_STATES
errors = {"K-FAC": kfac["err"], "best Kronecker": kfac["best"], "diagonal": kfac["diag"]}
ch.table(pd.DataFrame({f"{name}, {t}": error[t].mean(0) for name, error in errors.items()
                       for t in STATES},
                      index=pd.Index([f"layer {i}" for i in range(1, 4)], name="‖F − F̂‖/‖F‖")),
         "Relative error of each approximation of the Fisher's diagonal blocks, per layer, at "
         "initialisation and after training (mean over networks).")

# %%
ch.figure(figures.kfac_heatmaps(kfac_runs[0]), "kfac_heatmaps",
          "The exact Fisher of all three layers of the MLP, after Martens & Grosse (2015), Fig. 2 "
          f"(weights between the first {params['kfac_units']} inputs and outputs of each layer; "
          "white lines separate layers), its block-diagonal Kronecker-factored approximation and "
          "the absolute difference, at He initialisation (top) and after training on the digits "
          "(bottom). Same colour scale within a row.",
          arrays={k: v for k, v in kfac_runs[0].items() if "_sub_" in k},
          alt="Heat-maps of the exact Fisher, its block-diagonal K-FAC approximation and their "
              "difference, at initialisation and after training.")

# %%
n_nets = len(kfac_runs)
ch.figure(figures.kfac_spectra(kfac_runs[0], kfac["err"], kfac["best"], kfac["diag"]),
          "kfac_spectra",
          "Eigenvalues of each exact Fisher block Fᵢ and of Gᵢ ⊗ Aᵢ₋₁ (products of the "
          "factors' eigenvalues), at initialisation (dotted) and after training (solid), after "
          "Martens & Grosse (2015), §3; last panel: relative Frobenius errors of K-FAC, of the "
          f"best Kronecker product and of the diagonal (mean ± sd over {n_nets} trained nets).",
          alt="Eigenvalue spectra of the exact and K-FAC Fisher blocks of three layers, and the "
              "per-layer relative errors of K-FAC, the best Kronecker product and the diagonal.",
          arrays=dict(**{k: v for k, v in kfac_runs[0].items() if "_eig_" in k},
                      **{f"{short}_{t}": kfac[key][t]
                         for short, key in (("kfac", "err"), ("best", "best"), ("diag", "diag"),
                                            ("cross", "cross"), ("within", "within"))
                         for t in STATES}))

# %%
KFAC_TABLE_ROWS = {"kfac": "K-FAC, within the diagonal blocks (layer mean)",
                   "best": "best Kronecker product (layer mean)",
                   "cross": "blocks between layers (dropped)",
                   "within": "diagonal blocks (Kronecker error)",
                   "cross_share": "dropped blocks' share of the squared error",
                   "trace": f"tr(G⊗A)/tr(F), layer {kfac['trace_layer']}"}
kfac_table = estimates_frame(
    {KFAC_TABLE_ROWS[key]: {"initialisation": stats.estimate(v["init"]),
                            "after training": stats.estimate(v["trained"]),
                            "trained − init": stats.estimate(v["trained"] - v["init"])}
     for key, v in study.kfac_per_net(kfac).items()}, "quantity")
ch.table(kfac_table, f"K-FAC's error at He initialisation and after training (mean over {n_nets} "
         "nets with its standard error; the change paired net by net): relative Frobenius errors "
         "within the diagonal blocks (layer means), the dropped blocks between layers and the "
         "within-block error against the whole Fisher, the dropped blocks' share of the squared "
         "error, and tr(G⊗A)/tr(F) in the layer furthest from 1 at initialisation.",
         formatter=estimate_formats(kfac_table))

# %%
# Martens & Grosse's own networks are not in our sources: no K-FAC claim compares like for like
KFAC_CONDITIONS = {"network": (f"bias-free ReLU MLP {'-'.join(map(str, WIDTHS))} on "
                               f"{params['n_train']} 8×8 digits", "not in our sources")}
ch.claim("kfac_beats_diagonal", "K-FAC is closer to the exact Fisher block than the diagonal: "
         "K-FAC error / diagonal error where it is largest (layer, state; mean over nets)",
         kind="reproduces", measured=kfac_found["diag_ratio"], reference=1, tol=0,
         comparison="le", why="1 is the diagonal's own error: any improvement on it counts",
         source="Martens & Grosse 2015, §3 and Fig. 2 (the Kronecker product keeps the "
                "within-layer structure a diagonal drops)",
         alternative=(1.0, "the diagonal approximation's error (ratio 1)"),
         conditions=KFAC_CONDITIONS)
ch.claim("kfac_worse_after_training", "training increases the K-FAC error (layer-averaged, "
         "trained − init, mean over nets)", kind="predicts", measured=kfac_found["gap"],
         reference=0, tol=0, comparison="ge", why="the direction is the prediction",
         source="this chapter: g and a decouple at random initialisation and correlate after "
                "training (Martens & Grosse 2015, §3)", alternative=(0.0, "no effect of training"))

# %%
ch.claim("kfac_trace_at_init", "at initialisation tr(G⊗A)/tr(F) ≈ 1 (the sizes of g and a nearly "
         "uncorrelated): mean over nets in the layer furthest from 1", kind="predicts",
         measured=kfac["trace_mean"], reference=1, tol=0.1, comparison="abs",
         why="the ratio is 1 − Cov(|g|², |a|²)/E[|g|²|a|²]; margin 0.1 is what '≈ 1' means here "
             "(a covariance term of at most 10 %)",
         source="Martens & Grosse 2015, §3 (E[ggᵀ ⊗ aaᵀ] ≈ E[ggᵀ] ⊗ E[aaᵀ])",
         alternative=(kfac["trace_mean_trained"], "the ratio after training, where g, a correlate"))
for t, when in (("init", "at He initialisation"), ("trained", "after training")):
    ch.claim(f"kfac_cross_share_{t}", "the blocks between layers that K-FAC drops are the larger "
             "part of its error against the whole Fisher: their share of the squared Frobenius "
             "norm of F − F̂ (mean over nets)", case=when, kind="predicts",
             measured=kfac_found["cross_share"][t], reference=0.5,
             tol=0, comparison="ge", why="'the larger part' = more than half of the squared error, "
             "which splits exactly into the dropped blocks and the within-block Kronecker error",
             alternative=(0.5, "the dropped blocks and the Kronecker error equal (share ½)"),
             min_scale="default" if t == "init" else "ci",
             note="" if t == "trained" else "graded from default on: at initialisation the "
                  "share varies too widely from net to net for ci's few nets",
             source="this chapter; Martens & Grosse 2015, §3–4 (F is not block-diagonal)")

# %%
ch.glue_all({"kfac_err_max": kfac_found["err_max"], "diag_err_min": kfac_found["diag_err_min"],
             "kfac_nets": kfac_found["nets"]}
            | {f"{name}_{t}": kfac_found[f"{key}_mean"][t] for t in STATES
               for name, key in (("kfac_err", "err"), ("best_err", "best"), ("cross", "cross"),
                                 ("within", "within"))}
            | {f"cross_share_{t}": kfac_found["cross_share"][t] for t in STATES}, digits=2)
ch.glue_all({"kfac_trace_worst": kfac_found["trace_worst"]})
ch.glue("kfac_block_rows", int(max(a * b for a, b in zip(WIDTHS[:-1], WIDTHS[1:], strict=True))))
# which part of K-FAC's error dominates, by state: as the claims kfac_cross_share_* grade it
cross_words = {t: ch.verdict([f"kfac_cross_share_{t}"], "the dropped blocks between layers carry "
                             "more of its error than the Kronecker factorisation of the diagonal "
                             "blocks", "the Kronecker factorisation of the diagonal blocks "
                             "carries more of its error than the dropped blocks between layers",
                             "which of the two carries more of its error is not decided")
               for t in STATES}
ch.glue("cross_verdict", ch.verdict(
    [f"kfac_cross_share_{t}" for t in STATES], "the dropped blocks between layers carry more of "
    "its error than the Kronecker factorisation of the diagonal blocks, in both states",
    f"{cross_words['init']} at initialisation, and {cross_words['trained']} after training",
    f"{cross_words['init']} at initialisation, and {cross_words['trained']} after training"))

# %% [markdown]
# The Kronecker factorisation reproduces a Fisher block with up to {glue}`kfac_block_rows` rows
# from two small factors with a relative Frobenius error of at most {glue}`kfac_err_max` (layer
# means), against at least {glue}`diag_err_min` for the diagonal approximation. The heat-maps
# ({numref}`fig-08-kfac-heatmaps`) show why: the exact Fisher has strong off-diagonal structure — a
# regular pattern of blocks repeating across units — which the diagonal misses and the Kronecker
# product captures. The spectra ({numref}`fig-08-kfac-spectra`) agree over the leading eigenvalues
# and part ways in the tail, where G ⊗ A has many tiny products of small factor eigenvalues.
#
# K-FAC is exact when the backward signal g and the forward signal a are independent, which random
# weights make nearly so at initialisation. The traces measure how nearly: tr(G⊗A)/tr(F) = 1 −
# Cov(|g|², |a|²)/E[|g|²|a|²], which at initialisation lies at worst at {glue}`kfac_trace_worst`
# over layers and nets (± its jackknife standard error over inputs). The table after
# {numref}`fig-08-kfac-spectra` gives the rest over {glue}`kfac_nets` nets, each with its standard
# error: this ratio averaged over the nets, and the errors of K-FAC and of the best Kronecker
# product in both states with their change in training. The mean K-FAC error goes from
# {glue}`kfac_err_init` at initialisation to {glue}`kfac_err_trained` after training, while the
# best Kronecker product goes from {glue}`best_err_init` to {glue}`best_err_trained`: the part of
# the error above the best Kronecker product is the independence assumption itself rather than the
# Kronecker form.
#
# Against the whole Fisher, block-diagonal K-FAC drops blocks between layers worth
# {glue}`cross_init` of the Frobenius norm of F at initialisation and {glue}`cross_trained` after
# training, and gets the diagonal blocks wrong by {glue}`within_init` and {glue}`within_trained`
# (relative Frobenius norms). The squared error splits exactly into the two parts, and the dropped
# blocks carry a share {glue}`cross_share_init` of it at initialisation and
# {glue}`cross_share_trained` after training (both graded in the scorecard): at this scale,
# {glue}`cross_verdict`. This is the error of K-FAC as an approximation of F. A preconditioner
# applies the *inverse*, and that is what the next section measures.

# %% [markdown]
# ### The inverse: structure and the natural-gradient direction

# %%
DAMPINGS = [1e-3, 1e-2, 1e-1, 1.0]   # relative Tikhonov dampings δ of the comparison
AT = 1                              # the claims' damping, δ = 0.01: DAMPINGS[AT]
ch.glue("ng_structure_damping", f"{DAMPINGS[AT]:g}")

# %% [markdown]
# Martens & Grosse justify dropping the blocks between layers by the *inverse* of the Fisher: the
# approximation is made of F, but used through F⁻¹, which they find much closer to block-diagonal
# than F and closer still to block-tridiagonal (their §4). We build the whole Fisher (all three
# layers, cross-layer blocks included) of the same nets, damp it as every practical natural
# gradient does, F + λI with λ = δ · tr(F)/P (δ relative to the mean eigenvalue), and measure two
# things at δ = {glue}`ng_structure_damping`: how much of $\|(F + \lambda I)^{-1}\|_F^2$ lies
# outside the diagonal blocks, against the same share of F; and how much of the off-diagonal part
# lies in the blocks between layers 1 and 3, which a block-tridiagonal inverse drops. Then the
# direction: the cosine between the exact damped natural gradient $(F + \lambda I)^{-1}\nabla L$
# on the training inputs and four stand-ins — K-FAC's
# $\bigoplus_l (G_l \otimes A_{l-1} + \lambda I)^{-1}\nabla_l L$, the exact diagonal blocks
# inverted alone, $\bigoplus_l (F_{ll} + \lambda I)^{-1}\nabla_l L$ (what dropping the
# cross-layer blocks costs without the Kronecker factorisation), the diagonal
# $(\mathrm{diag}\,F + \lambda)^{-1}\nabla L$, and the gradient itself.

# %%
ng_units = ch.cached_units(  # per net: the whole F inverted, its eigenpairs above λ
    study.natural_gradient_unit, params["ng_nets"], seed=ch.seed,
    nets={k: v for k, v in nets.items() if k.startswith("mlp_")},
    x=train_x[: params["kfac_n"]], y=train_y[: params["kfac_n"]], dampings=DAMPINGS,
    structure_damping=DAMPINGS[AT])
ng_runs = [{k: v[s] for k, v in ng_units.items()} for s in range(params["ng_nets"])]
natgrad = study.natural_gradient_summary(ng_runs, at=AT)
ch.figure(figures.natural_gradient(natgrad["cos"], DAMPINGS), "natural_gradient",
          "Cosine between the exact damped natural gradient (F + λI)⁻¹∇L and four stand-ins, "
          "against the relative damping δ = λP/tr F, at He initialisation (left) and after "
          f"training (right), mean ± sd over {params['ng_nets']} nets: K-FAC (block-diagonal "
          "Kronecker factors), the exact diagonal blocks inverted alone, the diagonal, and the "
          "gradient itself (Martens & Grosse 2015, §§4–6).",
          arrays={f"{t}_{k}": v for t, c in natgrad["cos"].items() for k, v in c.items()},
          alt="Two panels of cosine against damping: the exact diagonal blocks stay close to the "
              "exact natural gradient, K-FAC, the diagonal and the plain gradient less so, and all "
              "approach 1 as the damping grows.")
ch.table(pd.DataFrame({t: {k: f"{v[:, AT].mean():.3f} ± {v[:, AT].std(ddof=1):.3f}"
                           for k, v in natgrad["cos"][t].items()} for t in STATES}
                      ).rename_axis(f"cosine at δ = {DAMPINGS[AT]:g} (mean ± sd)"),
         "Cosine between each approximate natural-gradient direction and the exact one, at "
         "initialisation and after training (mean ± standard deviation over networks).")

# %% tags=["remove-cell"]
M_G = "Martens & Grosse 2015, §4 (the inverse Fisher is nearly block-diagonal, nearer still "
M_G += "block-tridiagonal)"
truth = ch.cached_call(infogeo.inverse_structure_truth, name="inverse_truth",
                       sizes=[a * b for a, b in zip(WIDTHS[:-1], WIDTHS[1:], strict=True)],
                       damping=DAMPINGS[AT], seed=ch.torch_seed("inverse_truth"))
TRUTH = Control("estimator", bool(truth["passed"]), "on a synthetic F of the chapter's layer "
                "sizes whose eigenvectors above λ are layer-local but for ten per layer mixed "
                "across the layers (carrying most of F's norm), the estimator gives "
                f"{truth['structured_excess']:.3f} (construction {truth['structured_exact']:.3f}); "
                f"on a random rotation of the same F {truth['rotated_excess']:+.3f} (pass: "
                "construction to 10⁻⁶, rotation within ±0.05)")

# %%
for t, when in (("init", "at He initialisation"), ("trained", "after training")):
    ch.claim(f"kfac_inverse_nearer_block_diagonal_{t}", "on F's eigen-directions above the "
             "damping, the damped inverse is nearer block-diagonal than F by more than a random "
             "rotation of F (same spectrum, no layer structure) is: its off-diagonal share over "
             "F's, minus the same ratio for the rotated F (paired per net, mean over nets)",
             case=when, kind="reproduces", measured=natgrad["inverse_top_excess"][t],
             reference=0.0, tol=0, comparison="le", controls=[TRUTH],
             why="the sign against the rotated control decides; on all directions the inverse "
                 "is ≈ λ⁻¹I and a rotated F passes any such rule",
             source=M_G, alternative=(0.0, "a random rotation of F, which has F's spectrum and "
                                           "no layer structure"),
             note=f"the ratios themselves: {natgrad['inverse_top'][t].mean:.2f} for F, "
                  f"{natgrad['inverse_top_rotated'][t].mean:.2f} for the rotated F",
             conditions=KFAC_CONDITIONS)

# %%
ch.claim("kfac_inverse_nearer_block_tridiagonal", "the far blocks (layers 1 and 3) hold a smaller "
         "part of the damped inverse's off-diagonal norm than of F's (ratio < 1; per net the "
         "larger of the two states)", kind="reproduces", measured=natgrad["inverse_tridiagonal"],
         reference=1.0, tol=0, comparison="le", why="the direction of 'nearer block-tridiagonal'",
         source=M_G, alternative=(1.0, "far blocks as large a part of the inverse as of F (a "
                                        "rotated F's ratio, exactly on average)"),
         min_scale="default", note="graded from default on: ci's hidden width of 12 units is "
                                   "too narrow for the layer structure this claim is about",
         conditions=KFAC_CONDITIONS)
ch.claim("kfac_factorisation_costs_direction", "the exact diagonal blocks, inverted alone, "
         "point nearer the exact damped natural gradient than K-FAC does: the cosine gain over "
         "K-FAC > 0 (per net the smaller of the two states)", kind="predicts",
         measured=natgrad["factorisation_cost"], reference=0.0, tol=0, comparison="ge",
         why="the sign is the prediction; it says the Kronecker factorisation costs direction "
             "beyond the dropped blocks, not which of the two costs more",
         alternative=(0.0, "a factorisation that costs nothing beyond dropping the blocks "
                           "between layers"),
         source="this chapter, from Martens & Grosse 2015, §§4–5 (K-FAC = block-diagonal inverse "
                "+ Kronecker factorisation)")

# %% tags=["remove-cell"]
ch.glue_all({f"ng_{m}_off_{t}": natgrad["shares"][t][f"{n}_off_diagonal"]
             for t in STATES for m, n in (("inv", "inverse"), ("fis", "fisher"))}, digits=2)
ch.glue_all({f"ng_{k}": natgrad[k] for k in ("inverse_block", "inverse_block_rotated",
                                             "inverse_tridiagonal", "factorisation_cost")},
            digits=2)
ch.glue_all({f"ng_{name}_{t}": natgrad[key][t] for t in STATES
             for name, key in (("top", "inverse_top"), ("top_rotated", "inverse_top_rotated"),
                               ("blocks_cost", "blocks_cost"))}, digits=2)
ch.glue_all({f"ng_{name}_{t}": natgrad["shares"][t][key] for t in STATES
             for name, key in (("below", "below_damping_fraction"),
                               ("below_share", "below_damping_inverse_share"))}, digits=3)
ch.glue_all({"ng_truth_structured": truth["structured_excess"],
             "ng_truth_rotated": truth["rotated_excess"]}, digits=2)

# %%
top_table = estimates_frame({t: {"our nets": natgrad["inverse_top"][t],
                                 "rotated F": natgrad["inverse_top_rotated"][t]} for t in STATES},
                            "state")
ch.table(top_table, "The damped inverse read on F's eigen-directions above λ "
         f"(δ = {DAMPINGS[AT]:g}): the share of the norm of J₊ outside the diagonal blocks over "
         "the same share of F, for our nets and for a random rotation of F (same eigenvalues, no "
         "layer structure; mean over nets, with its standard error).",
         formatter=estimate_formats(top_table), name="tab_ng_top")

# %%
ch.glue("ng_structure_verdict", ch.verdict(
    [f"kfac_inverse_nearer_block_diagonal_{t}" for t in STATES],
    "in both states the inverse is nearer block-diagonal than its spectrum alone makes it, as "
    "Martens & Grosse found — by far less than the ratio on all directions suggests.",
    "in at least one state the inverse is not nearer block-diagonal than a matrix of the same "
    "spectrum without layers (see the scorecard).",
    "whether the inverse is nearer block-diagonal than its spectrum alone makes it is not decided "
    "in both states at this scale (see the scorecard)."))
ch.glue("ng_tridiagonal_verdict", ch.verdict(
    ["kfac_inverse_nearer_block_tridiagonal"], "nearer block-tridiagonal, as Martens & Grosse "
    "found.", "not nearer block-tridiagonal (see the scorecard).",
    "whether it is nearer block-tridiagonal is not decided at this scale (see the scorecard)."))
ch.glue("ng_direction_verdict", ch.verdict(
    ["kfac_factorisation_costs_direction"],
    "the exact diagonal blocks, inverted alone, point nearer the exact damped natural gradient "
    "than K-FAC in both states: the Kronecker factorisation costs something beyond the blocks "
    "between layers (the test does not say which of the two costs more; the table above gives "
    "the cosines of all four).",
    "the exact diagonal blocks do not point nearer the exact natural gradient than K-FAC in both "
    "states: the test shows no cost of the factorisation beyond the blocks between layers.",
    "whether the Kronecker factorisation costs direction beyond the dropped blocks is not decided "
    "at this scale."))

# %% [markdown]
# The damping decides most of the first comparison. At δ = {glue}`ng_structure_damping` a
# fraction {glue}`ng_below_init` of F's eigenvalues at initialisation and {glue}`ng_below_trained`
# after training lie below λ, and they carry {glue}`ng_below_share_init` and
# {glue}`ng_below_share_trained` of $\|(F + \lambda I)^{-1}\|_F^2$: on those directions the
# inverse is λ⁻¹ times the identity, which has no off-diagonal part at all. The damped inverse
# keeps a share {glue}`ng_inv_off_init` of its norm outside the diagonal blocks at initialisation
# and {glue}`ng_inv_off_trained` after training, against {glue}`ng_fis_off_init` and
# {glue}`ng_fis_off_trained` for F; per net, the larger of the two ratios is
# {glue}`ng_inverse_block`. But a random rotation of F — the same eigenvalues, no layer structure
# whatever — scores {glue}`ng_inverse_block_rotated` on the same ratio: it says nothing about
# layers, and the book does not grade it. We read the inverse where F acts instead, on F's
# eigen-directions above λ, $J_+ = \sum_{w > \lambda} q q^\top / (w + \lambda)$, and set its
# off-diagonal share over F's beside the same ratio for the rotated F (its mean over random
# rotations is a closed form in the spectrum, `infogeo.rotated_block_shares`). There the ratio at
# initialisation and after training stands beside the rotated F's in {glue}`tab_ng_top`:
# {glue}`ng_structure_verdict` On synthetic Fishers of the chapter's layer sizes the same
# estimator returns the construction's value ({glue}`ng_truth_structured`) and, for a rotation of
# it, {glue}`ng_truth_rotated` (the estimator control in the scorecard). Of the off-diagonal part
# of the whole inverse, the far blocks hold, relative to F's, {glue}`ng_inverse_tridiagonal` (per
# net, the larger ratio of the two states; a rotated F gives 1 exactly, on average):
# {glue}`ng_tridiagonal_verdict`
#
# The directions ({numref}`fig-08-natural-gradient`): {glue}`ng_direction_verdict` At δ =
# {glue}`ng_structure_damping` the exact blocks beat K-FAC's cosine by
# {glue}`ng_factorisation_cost` (per net, the smaller margin of the two states), while dropping the
# blocks between layers already costs {glue}`ng_blocks_cost_init` at initialisation and
# {glue}`ng_blocks_cost_trained` after training (one minus the exact blocks' cosine). The test
# decides that the factorisation costs something beyond the blocks, not which of the two costs
# more.

# %% [markdown]
# ## Capacity measures against label randomisation
#
# {cite:t}`liang2019fisher` follow {cite:t}`zhang2017understanding` and
# {cite:t}`neyshabur2017exploring`: a capacity measure that explains generalisation should be
# larger for a network that memorised random labels than for one that learnt real ones, the two
# having the same (zero) training error — the first of the properties the slides list for "a proper
# complexity measure". Liang et al.'s label-randomisation figure (CIFAR-10; reproduced in the
# slides, §2) compares margin-normalised capacity measures, the Fisher–Rao norms among them, as the
# fraction of random labels grows; the only description of the training the slides give is "after
# opt. with GD". They do not say when training stopped, and Liang et al.'s own experimental section
# is not among the sources this book works from (see its list of papers), so we cannot tell whether
# their runs had a common number of steps or a common training loss. We therefore run both
# protocols, from one and the same training run (full-batch Adam rather than plain gradient
# descent, to fit random labels in a few hundred steps):
#
# * **(a) fixed training budget**: every network gets `rand_budget` full-batch Adam steps, whatever
#   loss it reaches;
# * **(b) fixed training loss**: every network is read off at the first step at which its training
#   cross-entropy is ≤ 10 × `target_loss` *and* every training label is fitted. The comparison is
#   meant "among zero-training error models" (Neyshabur et al., as quoted in the slides), and a
#   small mean loss alone does not guarantee zero error: one misfit example out of n costs at least
#   ln 2 / n.
#
# We train bias-free ReLU MLPs 64-h-h-10 on digits in which a fraction of the labels has been
# replaced by uniformly random ones. For each network and protocol we compute, each divided by the
# margin γ (the 10th percentile of $f(x)_y - \max_{j\neq y} f(x)_j$ over the training set): the ℓ₂
# norm ‖θ‖, the products of Frobenius and of spectral norms, the ℓ₂ path norm, and the Fisher–Rao
# norm {eq}`eq-08-fisher-rao` (Liang et al.'s Eq. 3.1), both with the Fisher proper (labels drawn
# from the model) and with the empirical Fisher (the training labels).
#
# Why the protocol matters for the Fisher–Rao norms and not for the others: with the cross-entropy,
# on each example $\langle \partial\ell/\partial f, f\rangle = \sum_j p_j f_j - f_y = -r\,\bar m$,
# the product of the residual probability $r = 1 - p_y$ (≈ the example's loss once it is fitted)
# and the residual-weighted margin $\bar m = \sum_{j\neq y} p_j (f_y - f_j)/r$. With the model's
# labels, $\mathbb E_{y\sim p}\langle \partial\ell/\partial f, f\rangle^2 =
# \mathrm{Var}_{y\sim p}(f_y)$, which is likewise $r$ (now $1 - \max_j p_j$) times a weighted mean
# of squared margins. Both norms therefore split exactly into
# $\|\theta\|_\mathrm{fr} = (L+1)\,R\,M$: a *loss factor* R (√E[r²] for the
# empirical norm, √E[r] for the model norm) and an *effective margin* M
# (`infogeo.fisher_rao_factors`; the unit tests check the product against the norms computed from
# per-example gradients). Dividing by γ removes the margin only from M; R remains, and R is set by
# the stopping rule. We measure the confound rather than assume it: between clean and random labels,
# $\log(\|\theta\|_\mathrm{fr}/\gamma)$ changes by Δlog R + Δlog(M/γ), and the share
# $\Delta\log R / \Delta\log(\|\theta\|_\mathrm{fr}/\gamma)$ is how much of
# the change is the training loss.

# %%
RAND_WIDTHS = [64, params["rand_hidden"], params["rand_hidden"], 10]
MEASURES, NORMS = study.RAND_MEASURES, study.RAND_NORMS
LABELS = {"l2": "ℓ₂ norm", "frobenius_product": "Frobenius product",
          "spectral_product": "spectral product", "path_norm": "ℓ₂ path norm",
          "fisher_rao_model": "Fisher–Rao (model)",
          "fisher_rao_empirical": "Fisher–Rao (empirical)"}


# one stored unit of work per net: its trainings at every fraction of random labels
runs = study.label_randomisation_rows(ch.cached_units(
    study.label_randomisation_unit, params["rand_seeds"], fractions=params["rand_fractions"],
    seed=ch.seed, x=train_x, y=train_y, x_test=test_x, y_test=test_y, widths=RAND_WIDTHS,
    budget=params["rand_budget"], steps=params["rand_steps"], lr=params["lr"] * 0.3,
    target_loss=10 * params["target_loss"]), params["rand_fractions"])
rand = study.label_randomisation_summary(runs)
tables, log_ratio, loss_share = rand["tables"], rand["log_ratio"], rand["loss_share"]
COLUMNS = {"train_accuracy": "{:.3f}", "test_accuracy": "{:.3f}", "final_loss": "{:.1e}",
           "margin": "{:.3g}"}

# %%
ch.table(pd.concat({figures.PROTOCOL_NAMES[q]: tables[q].groupby("fraction")[list(COLUMNS)].mean()
                    for q in infogeo.PROTOCOLS}, names=["protocol", "fraction random"]
                   ).rename(columns=lambda c: c.replace("_", " ")),
         "Training with a fraction of random labels, per protocol: accuracies, final loss and "
         "margin (mean over seeds).",
         formatter={c.replace("_", " "): f for c, f in COLUMNS.items()})

# %%
n_rand = params["rand_seeds"]
ch.figure(figures.label_randomisation(tables["loss"], MEASURES, LABELS), "label_randomisation",
          "Margin-normalised capacity measures of MLPs trained on digits with a fraction of random "
          "labels, after Liang et al. (2019)'s label-randomisation experiment, at a fixed training "
          f"loss: MLPs {', '.join(map(str, RAND_WIDTHS))} trained on {params['n_train']} digits to "
          "the same training loss, measures relative to the clean-label value (mean ± sd over "
          f"{n_rand} nets), train/test accuracy and the margin γ.",
          arrays={c: tables["loss"][c].values for c in tables["loss"].columns},
          alt="Capacity measures, Fisher–Rao norms, train and test accuracy and the margin against "
              "the fraction of random labels, at a common training loss.")
ch.figure(figures.label_randomisation_protocols(runs), "label_randomisation_protocols",
          "The two Fisher–Rao norms divided by the margin γ, the training loss at which each net "
          "was read off, and the norms with their loss factor divided out, against the fraction of "
          f"random labels, for a fixed training budget ({params['rand_budget']} Adam steps) and a "
          f"fixed training loss ({10 * params['target_loss']:g}), from the same runs (mean ± sd "
          f"over {n_rand} nets; last panel: model solid, empirical dashed).",
          arrays={c: runs[c].values for c in runs.columns},
          alt="Four panels against the fraction of random labels: model and empirical Fisher–Rao "
              "norm over the margin for both protocols, the training loss at the read-off, and the "
              "loss-normalised norms.")

# %%
RAND_TABLE_COLUMNS = {"fisher_rao": "‖θ‖fr / γ", "R": "loss factor R", "M": "margin factor M / γ"}
# per protocol and Fisher: the log-ratios (100 % / 0 % random labels) of the norm over γ and of
# its two factors, and the loss factor's share of the norm's change under the fixed budget
rand_table = estimates_frame(
    {(figures.PROTOCOL_NAMES[q], f"{k} Fisher"):
         {RAND_TABLE_COLUMNS[c]: log_ratio[q, f"{c}_{k}"] for c in RAND_TABLE_COLUMNS}
         | {"share of R": loss_share[q, k] if q == "budget" else None}
     for q in infogeo.PROTOCOLS for k in ("model", "empirical")}, ["protocol", "Fisher–Rao norm"])
ch.table(rand_table, "The Fisher–Rao norms over the margin γ between clean and fully random "
         "labels, per protocol: the mean natural log-ratio ln(random / clean) of the norm, of its "
         "loss factor R and of its effective margin M / γ (the first is the sum of the other two), "
         f"each with its standard error over {n_rand} nets per fraction, and the share of the "
         "norm's change carried by R (fixed budget).",
         formatter=estimate_formats(rand_table))

# %%
FR_NOTE = ("if not passing: at a common stopping loss the margin-normalised Fisher–Rao norm "
           "follows the stopping loss and the shape of the margin distribution rather than the "
           "labels (see the text)")
RISE = dict(kind="reproduces", reference=0, tol=0, comparison="ge", min_scale="default",
            why="the figure shows the direction: a rise of any size counts",
            source="Liang et al. 2019, label-randomisation figure (CIFAR-10; Daróczy's slides, "
                   "§2); Neyshabur et al. 2017", alternative=(0.0, "no effect of the labels"))
NOUN = {1: "a rise", -1: "a fall", 0: "no measurable change"}  # by Estimate.sign
VERB = {1: "grows", -1: "shrinks", 0: "does not change measurably"}
RAND_CONDITIONS = {"input": (f"{params['n_train']} 8×8 digits", "CIFAR-10"),
                   "optimiser": ("full-batch Adam", "GD (the slides: 'after opt. with GD')")}
STOP = {"loss": f"a fixed training loss ({10 * params['target_loss']:g})",
        "budget": f"a fixed budget ({params['rand_budget']} Adam steps)"}

# %%
def stopping_control(m):
    """Conditions control of a label-randomisation claim on measure ``m``: the slides do not say
    when training stopped, so the claim's direction must not depend on our stopping rule — both
    rules give the same sign (Estimate.sign, the 99 % interval) or the condition matters."""
    signs = {q: log_ratio[q, m].sign() for q in infogeo.PROTOCOLS}
    return Control("conditions", signs["loss"] == signs["budget"],
                   "the paper's stopping rule is not stated; at 99 % the log-ratio shows "
                   f"{NOUN[signs['loss']]} at a fixed loss and {NOUN[signs['budget']]} after a "
                   "fixed budget")


for m in MEASURES[:5]:
    rho = f"Spearman ρ with the fraction = {rand['rho'][m]:.2f}"
    ch.claim(f"rand_{m}", "at a fixed loss, the measure / γ is larger at 100 % than at 0 % random "
             "labels (mean log-ratio)", case=LABELS[m], measured=log_ratio["loss", m],
             note=f"{rho}; {FR_NOTE}" if m.startswith("fisher") else rho,
             controls=[stopping_control(m)],
             conditions=RAND_CONDITIONS | {"stopping rule": (STOP["loss"], "not stated")}, **RISE)

# %%
ch.claim("rand_fisher_rao_empirical", "disagreement with Liang et al.: at a common stopping loss "
         "the *empirical* Fisher–Rao norm / γ does not increase from 0 % to 100 % random labels "
         "(mean log-ratio ≤ 0)", kind="predicts",
         measured=log_ratio["loss", "fisher_rao_empirical"], reference=0, tol=0, comparison="le",
         why="the prediction is 'no rise': the stopping loss, not the labels, sets R",
         source="this chapter: Fisher–Rao norm = (L+1)·R·M with R fixed by the stopping loss",
         min_scale="default", alternative=(log_ratio["loss", "fisher_rao_model"].mean,
                                           "Liang et al.'s rise, as the model norm / γ shows it"))
for k in ("model", "empirical"):
    ch.claim(f"rand_budget_fisher_rao_{k}", "after a fixed budget, the Fisher–Rao norm / γ is "
             "larger at 100 % than at 0 % random labels (mean log-ratio)", case=f"{k} Fisher",
             measured=log_ratio["budget", f"fisher_rao_{k}"],
             controls=[stopping_control(f"fisher_rao_{k}")],
             conditions=RAND_CONDITIONS | {"stopping rule": (STOP["budget"], "not stated")},
             **RISE)
    ch.claim(f"rand_budget_loss_share_{k}", "after a fixed budget, most of the rise of the "
             "Fisher–Rao norm / γ is the training loss: share Δlog R / Δlog(Fisher–Rao norm/γ) of "
             "the loss factor", case=f"{k} Fisher", kind="predicts",
             measured=loss_share["budget", k], reference=0.5, tol=0, comparison="ge",
             why="'most' = more than half; jackknife error over the pairs of nets "
             "with the same initialisation", min_scale="default",
             source="this chapter: exact split Fisher–Rao norm = (L+1)·R·M of Liang et al.'s Eq. "
                    "(3.1)",
             alternative=(0.0, "the margin-normalised factor alone (no share from the loss)"))

# %%
ch.claim("rand_test_chance", "with 100 % random labels the test accuracy is at chance, 1/10 "
         "(mean over nets, fixed loss)", kind="predicts", measured=rand["chance"], reference=0.1,
         tol=0.05, comparison="abs",
         why="random labels make the expected test accuracy exactly 1/10; margin 0.05 is what "
             "'at chance' means against a clean-label accuracy near 0.9",
         source="Zhang et al. 2017; Liang et al. 2019 (label randomisation)", min_scale="default",
         alternative=(tables["loss"].query("fraction == 0").test_accuracy.mean(),
                      "the clean-label test accuracy"))
ch.claim("rand_all_fit", "every run reaches its target loss with every training label fitted "
         "within the step cap, and the fixed-budget nets fit their labels too, random ones "
         "included (min training accuracy; a run that never reached its target counts as 0)",
         kind="checks",
         measured=rand["min_train_accuracy"], reference=1.0, tol=0, comparison="ge",
         why="capacities compare only at equal (zero) training error",
         source="Liang et al. 2019 / Zhang et al. 2017 protocol (networks memorise random labels)")

# %%
ch.glue_all({f"rand_loss_{labels}_{q}": rand["final_loss"][q, labels]
             for q in infogeo.PROTOCOLS for labels in ("clean", "random")}
            | {f"share_{k}_budget": loss_share["budget", k] for k in ("model", "empirical")}
            | {"rand_unreached": rand["unreached"]}, digits=2)
ch.glue_all({"rand_acc1": rand["chance"].mean, "rand_steps_clean": rand["target_steps"]["clean"],
             "rand_steps_random": rand["target_steps"]["random"]})
ch.glue_all({"rand_seeds": int(params["rand_seeds"]), "rand_budget": int(params["rand_budget"]),
             "rand_target": 10 * params["target_loss"]}, digits=2)


# the direction of each change at the 99 % level (Estimate.sign, the ledger's interval rule) for
# sentences no claim grades at this scale; the claims above grade them from `default` on
KINDS = ("model", "empirical")
for q in infogeo.PROTOCOLS:
    factors = {m: format_value(np.exp(log_ratio[q, m].mean), digits=2) for m in NORMS}
    ch.glue(f"rand_norm_factors_{q}", ", ".join(f"{LABELS[m]} ×{factors[m]}" for m in NORMS))
    by_sign = {g: [LABELS[m] for m in NORMS if log_ratio[q, m].sign() == g] for g in NOUN}
    ch.glue(f"rand_norms_verdict_{q}", "; ".join(f"{NOUN[g]} for the {join_words(names)}"
                                                  for g, names in by_sign.items() if names))
    for k in KINDS:
        ch.glue(f"fr_{k}_{q}_verdict", VERB[log_ratio[q, f"fisher_rao_{k}"].sign()])

# %%
ch.glue("rand_budget_reading", ch.verdict(
    [f"rand_budget_loss_share_{k}" for k in KINDS],
    "So most of the rise under a fixed budget is the training loss: the Fisher–Rao norms mainly "
    "report that random labels are fitted more slowly.",
    "So the training loss does not carry most of the rise for both norms.",
    "Whether the training loss carries most of the rise for both norms is not decided at this "
    "scale (see the scorecard)."))
ch.glue("rand_loss_reading", "the log-ratios of the Fisher–Rao norms are "
        + " and ".join(f"{format_value(log_ratio['loss', f'fisher_rao_{k}'].mean, digits=2)} "
                       f"({k})" for k in KINDS)
        + ", those of the norm-based measures "
        + " to ".join(format_value(f(log_ratio["loss", m].mean for m in NORMS), digits=2)
                      for f in (min, max)))
ch.glue("rand_fit_reading", ch.verdict(
    ["rand_all_fit"], "every network reaches its target loss and fits its training labels",
    "not every network reaches its target loss and fits its training labels",
    "not every network reaches its target loss and fits its training labels"))

# %% [markdown]
# Under both protocols {glue}`rand_fit_reading`. The fixed-loss runs reach their target after
# {glue}`rand_steps_clean` steps with clean and {glue}`rand_steps_random` with random labels on
# average ({glue}`rand_unreached` runs did not reach it within the step budget), and with fully
# random labels the test accuracy falls to {glue}`rand_acc1`. With {glue}`rand_seeds` nets per
# fraction, between clean and fully random labels the margin-normalised norm-based measures change
# by factors {glue}`rand_norm_factors_loss` at a fixed loss ({glue}`rand_norms_verdict_loss`, at the
# 99 % level; {numref}`fig-08-label-randomisation`) and by {glue}`rand_norm_factors_budget` after a
# fixed budget ({glue}`rand_norms_verdict_budget`). Liang et al. and
# Neyshabur et al. ask a capacity measure to rise like this: memorising random labels should need
# larger weights at the same margin, whatever the stopping rule. (The claims on these
# comparisons are graded from the `default` scale up.)
#
# The Fisher–Rao norms are another matter ({numref}`fig-08-label-randomisation-protocols`).
#
# The table after {numref}`fig-08-label-randomisation-protocols` splits each change of a Fisher–Rao
# norm over γ, protocol by protocol, into the change of its loss factor R and that of its effective
# margin M/γ (mean log-ratios, random / clean, which add up).
#
# **(a) Fixed budget.** After {glue}`rand_budget` steps the clean-label nets have reached a
# training loss of {glue}`rand_loss_clean_budget` and the random-label nets only
# {glue}`rand_loss_random_budget`. Between clean and random labels the model Fisher–Rao norm / γ
# {glue}`fr_model_budget_verdict` and the empirical one {glue}`fr_empirical_budget_verdict` (first
# two rows of the table); Liang et al.'s figure shows a rise. But the loss factor R moves with the
# training loss, and its share of the change of the norm is {glue}`share_model_budget` for the
# model norm and {glue}`share_empirical_budget` for the empirical norm; with R divided out, what
# is left is the change of the effective margin over γ (third column group).
# {glue}`rand_budget_reading`
#
# **(b) Fixed loss.** When every run stops at the same training loss, {glue}`rand_target` (read off
# at the first step below it: {glue}`rand_loss_clean_loss` with clean and
# {glue}`rand_loss_random_loss` with random labels on average), the model Fisher–Rao norm / γ
# {glue}`fr_model_loss_verdict` and the empirical one {glue}`fr_empirical_loss_verdict` (last two
# rows of the table; the scorecard grades our prediction that the empirical one does not rise). The
# loss factors are not exactly equal even so, since at a common mean loss √E[r²] and √E[r] still
# depend on how the loss is spread over the examples, and what is left is M/γ. M/γ compares a
# residual-weighted margin with the 10th-percentile margin: a statistic of the shape of the margin
# distribution, not of the size of the weights. At a fixed loss the Fisher–Rao norms can only move
# through these two effects; here {glue}`rand_loss_reading` (mean natural log-ratios).
#
# Neither protocol makes the margin-normalised Fisher–Rao norm a capacity measure independent of
# the optimisation: under (a) it carries the training loss, under (b) the spread of the loss and
# the shape of the margin distribution. Which of the two Liang et al.'s figure shows we cannot say
# without their stopping rule.

# %% [markdown]
# ## Tangent sample sensitivity is constant on activation regions
#
# Daróczy defines the tangent sample sensitivity of a network at an input x as the mixed derivative
# ∂²f/∂θ∂x, the rate at which the tangent vector $\nabla_\theta f$ moves when the input moves
# (Definition 3.1). For a bias-free ReLU network it is constant on each activation region (Lemma
# 3.1): inside a region the network is $f(x) = W_{L+1} D_L W_L \cdots D_1 W_1 x$ with fixed 0/1
# diagonals $D_l$, so $\nabla_\theta f$ is linear in x and its x-derivative does not depend on x.
# {doc}`06_linear_regions` maps the regions; here we only look at the lemma with
# `networks.tangent_sensitivity` (forward-mode derivative, `torch.func`, of the parameter gradient)
# on the trained MLP. For a bias-free net x and c·x (c > 0) lie in the same activation region, as do
# x and a small perturbation of it that keeps its activation pattern; two digits with different
# patterns lie in different regions. That the matrix is identical within a region holds to
# round-off, so it is a unit test; the figure shows the contrast.

# %%
tangent = infogeo.tangent_check(net, train_x, params["tangent_pairs"], ch.rng("tangent"))
ch.figure(figures.tangent_sensitivity(tangent["same"], tangent["different"]),
          "tangent_sensitivity",
          "Relative change of the tangent sample sensitivity S(x) = ∂²f₀/∂θ∂x of the trained MLP "
          "between points of one activation region and between regions (Daróczy, Lemma 3.1): "
          "identical to round-off within a region (shown at ε/10 when exactly equal), different "
          "between regions.", arrays=tangent)
same_max = float(tangent["same"].max())
ch.glue("tangent_same_text", "does not change at all (identical to the last bit)" if same_max == 0
        else f"changes by at most {format_value(same_max, digits=2)} (relative)")
ch.glue("tangent_n_same", int(len(tangent["same"])))
different = tangent["different"]
ch.glue("tangent_diff_min", float(different.min()) if len(different) else float("nan"), digits=2)
ch.glue("tangent_n_diff", int(len(different)))

# %% [markdown]
# In {numref}`fig-08-tangent-sensitivity`, over {glue}`tangent_n_same` pairs of points in one
# region the matrix {glue}`tangent_same_text`, while over {glue}`tangent_n_diff` pairs of digits
# in different regions it changes by at least {glue}`tangent_diff_min` (relative): a changed mask
# removes or adds whole paths.

# %%
# "What we found" from the ledger itself: its summary (every kind and outcome, the claims not run
# at this scale counted) and every claim of any kind that fails or is inconclusive here
ch.glue_outcomes("found_outcomes")

# %% [markdown]
# ## What we found
#
# The identity {eq}`eq-08-fisher-rao` at the heart of the Fisher–Rao norm holds to round-off
# ({glue}`fr_homog_max`) whenever its two assumptions hold and visibly fails otherwise; with biases
# the weighted Euler identity {eq}`eq-08-euler-weighted` survives. The rescaling symmetries of ReLU
# networks leave the function and the Fisher–Rao norm untouched while they move the ℓ₂ norm
# (×{glue}`l2_range`), the Hessian's top eigenvalue (×{glue}`lam_ratio`) and the isotropic expected
# sharpness (×{glue}`iso_ratio`) — though not the product of layer norms under the layer-wise move,
# nor sharpness measured with weight-proportional noise. K-FAC's Kronecker factorisation of a
# layer's Fisher is accurate to {glue}`kfac_err_max` in relative Frobenius norm at worst, against at
# least {glue}`diag_err_min` for the diagonal; training moves its error from {glue}`kfac_err_init`
# to {glue}`kfac_err_trained`, and at this scale {glue}`cross_verdict`. Damped as in practice,
# the inverse Fisher keeps {glue}`ng_below_share_init` (initialisation) and
# {glue}`ng_below_share_trained` (trained) of its squared norm on directions where it is λ⁻¹
# times the identity; read on F's eigen-directions above the damping and against a rotated F of
# the same spectrum, {glue}`ng_structure_verdict` For the direction,
# {glue}`ng_direction_verdict` Under label randomisation
# the margin-normalised norm-based measures change by {glue}`rand_norm_factors_loss` at a fixed loss
# and by {glue}`rand_norm_factors_budget` after a fixed budget. The Fisher–Rao norms depend on the
# protocol: after a fixed budget the model norm {glue}`fr_model_budget_verdict` and the empirical
# one {glue}`fr_empirical_budget_verdict` (how much of that is the training loss is in the table
# after {numref}`fig-08-label-randomisation-protocols`); at a fixed loss the model norm
# {glue}`fr_model_loss_verdict` and the empirical one {glue}`fr_empirical_loss_verdict`.
#
# *The ledger.* {glue}`found_outcomes`
#
# ## Scorecard

# %%
ch.finish()
