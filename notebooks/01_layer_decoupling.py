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
# # Layer decoupling: how much does a non-linearity separate its outputs?
#
# {cite:t}`donier2019capacity` asks where a network spends its modelling *capacity*: for a model
# that is linear in some features, the capacity allocated to a subspace of the inputs is a number
# between 0 and the number of free parameters, and the total is exactly that number. To carry this
# notion through a non-linear layer φ(Y) = f(PᵀY), he writes f(z) = η_z·z and moves the
# non-linearity into an *augmented input* Ỹ = (η₁Y, …, η_mY) ∈ ℝ^{nm}: the layer becomes linear in
# Ỹ, and capacity analysis applies there, with the augmented covariance Σ̃ = E[ỸỸᵀ] in place of Σ
# (his Eqs. 4–9).
#
# How far a layer *decouples* its outputs is then measured by a single number, the **decoupling
# scale** ν: the off-diagonal blocks of Σ̃ are ν times the diagonal ones. Linear layers (ν = 1)
# only repeat their input; pseudo-random activations (ν = 0) make the m blocks independent;
# ReLU sits half-way (Eq. 15). This chapter re-computes Donier's Section 2:
#
# 1. ν = (α+β)²/4 (Eq. 13) for linear, leaky-ReLU, ReLU, absolute-value and pseudo-random layers,
#    and the heat-maps of Σ̃ (his Fig. 3), in the idealised setting where Eq. 13 is exact;
# 2. the size of the approximation in Eq. 13 when P is held fixed (his footnote 3), as a function
#    of the input dimension n;
# 3. capacities: in the linear case the augmented space gives back the input-space capacity
#    exactly (Eq. 18); in the pseudo-random case κ = (P∘P)κ^φ (Eq. 25), which we recover from an
#    *empirical* augmented covariance of a real pseudo-random activation;
# 4. beyond the paper, ν(f; q) for smooth activations (tanh, GELU, SiLU, ELU) as a function of the
#    pre-activation variance q.
#
# All computation is in `layerwise.capacity`; this notebook holds parameters, plots and claims.
# Statements that hold exactly by construction (identities, and Monte-Carlo estimators whose
# expectation is the formula) are unit tests in `tests/test_capacity.py`, not claims.
#
# ## Set-up
#
# Every size below is a parameter of the chapter, chosen per scale.

# %% tags=["parameters", "remove-cell"]
scale = "ci"          # ci | default | paper
seed = 0
device = "auto"       # auto | cpu | cuda
nu_samples = None     # Monte-Carlo samples per activation for ν
nu_n = None           # input dimension n of the random layer
nu_m = None           # number of units m of the random layer
heat_samples = None   # samples for the Fig. 3 heat-maps
fn3_ns = None         # input dimensions n for footnote 3
fn3_samples = None    # samples per n for footnote 3
cap_trials = None     # random subspaces for Eq. 18 (checked in the unit tests; kept for parameter compatibility)
emp_sizes = None      # sample sizes for the empirical pseudo-random capacities
emp_reps = None       # independent replicates per sample size
smooth_qs = None      # number of q values for ν(f; q)
smooth_samples = None # Monte-Carlo samples per (activation, q)

# %%
import math

import matplotlib.pyplot as plt
import numpy as np
from scipy.optimize import brentq

from layerwise import capacity as cap
from layerwise import stats as lst
from layerwise.chapter import Chapter
from layerwise.claims import DEFAULT_CONFIDENCE, accepted_set, grade
from layerwise.params import resolve
from layerwise.plotting import CMAP_DIVERGING

SCALES = {
    "ci": dict(nu_samples=20_000, nu_n=64, nu_m=16, heat_samples=20_000, fn3_ns=[8, 16, 32, 64],
               fn3_samples=20_000, cap_trials=50, emp_sizes=[300, 1000, 3000, 10000], emp_reps=4,
               smooth_qs=6, smooth_samples=20_000),
    "default": dict(nu_samples=400_000, nu_n=64, nu_m=16, heat_samples=200_000,
                    fn3_ns=[8, 16, 32, 64, 128, 256], fn3_samples=100_000, cap_trials=500,
                    emp_sizes=[300, 1000, 3000, 10000, 30000, 100000], emp_reps=12,
                    smooth_qs=12, smooth_samples=200_000),
    "paper": dict(nu_samples=4_000_000, nu_n=256, nu_m=64, heat_samples=2_000_000,
                  fn3_ns=[8, 16, 32, 64, 128, 256, 512], fn3_samples=400_000, cap_trials=2000,
                  emp_sizes=[300, 1000, 3000, 10000, 30000, 100000, 300000], emp_reps=20,
                  smooth_qs=20, smooth_samples=1_000_000),
}
P = resolve(SCALES, scale, nu_samples=nu_samples, nu_n=nu_n, nu_m=nu_m, heat_samples=heat_samples,
            fn3_ns=fn3_ns, fn3_samples=fn3_samples, cap_trials=cap_trials, emp_sizes=emp_sizes,
            emp_reps=emp_reps, smooth_qs=smooth_qs, smooth_samples=smooth_samples)
ch = Chapter("01_layer_decoupling", scale=scale, seed=seed, device=device, params=P)
CV = cap.CODE_VERSION


def outcome(measured, se, dof, reference, tol, comparison):
    """The outcome a claim with these numbers gets (to word the prose and notes before recording it)."""
    return grade(lst.t_interval(measured, se, dof, DEFAULT_CONFIDENCE), accepted_set(comparison, reference, tol))

# %% [markdown]
# ## The decoupling scale ν
#
# For a piecewise-constant η = α·1{z≤0} + β·1{z>0}, normalised so that α² + β² = 2, Donier shows
# (Eq. 13) that E[η_i² y_k y_l] = E[y_k y_l] and E[η_iη_j y_k y_l] ≈ ν E[y_k y_l], with
# ν = (α+β)²/4, provided z_i and z_j are independent and symmetric. A leaky ReLU of slope a has
# ν = (1+a)²/(2(1+a²)), ReLU ½, the absolute value 0. The pseudo-random activation is η(z) = a
# fixed ±1 function of z, drawn once per unit: we build it from an integer hash of z quantised to
# bins of width 2⁻²⁴, with a different hash key per unit, so it is deterministic (the same input
# always gives the same output) yet nowhere continuous.
#
# **The idealised setting.** We draw Y ~ N(0, I_n) and, for every sample, a *fresh* P with m
# unit-norm columns uniform on the sphere, and estimate ν as the ratio of the off-diagonal to the
# diagonal blocks of Σ̃, traced over k. Drawing P afresh makes z_i = p_iᵀY symmetric given Y, so
# E[η_i | Y] = (α+β)/2 whatever Y: η is a coin independent of Y and Eq. 13 holds *exactly*. The
# Monte-Carlo below therefore cannot disagree with the formula except through a bug; it is a test
# of our code (run in `tests/test_capacity.py`, with P also drawn explicitly), and the figure only
# illustrates the scale of Eq. 15. The question of how good Eq. 13 is for an actual layer, with P
# fixed, is the subject of the footnote-3 section.

# %%
NU_CASES = [("linear", None), ("leaky_relu", 0.05), ("leaky_relu", 0.2), ("leaky_relu", 0.5),
            ("leaky_relu", 0.8), ("relu", None), ("abs", None), ("pseudo_random", None)]


def label(name, slope):
    return f"leaky ReLU a={slope}" if name == "leaky_relu" else name.replace("_", "-")


def compute_nu():
    rows = []
    for k, (name, slope) in enumerate(NU_CASES):
        r = cap.nu_monte_carlo(name, n=P["nu_n"], m=P["nu_m"], n_samples=P["nu_samples"],
                               rng=ch.rng("nu", k), slope=slope)
        rows.append([r["nu"], r["se"], r["diag"], r["diag_se"], cap.nu_closed_form(name, slope)])
    return {"table": np.array(rows)}


nu_cfg = dict(cases=[[n, s] for n, s in NU_CASES], n=P["nu_n"], m=P["nu_m"], n_samples=P["nu_samples"])
NU = ch.cached("nu_mc", nu_cfg, compute_nu, code_version=CV)["table"]

fig, ax = plt.subplots(figsize=(7.5, 3.6))
x = np.arange(len(NU_CASES))
ax.errorbar(x, NU[:, 0], yerr=3 * NU[:, 1], fmt="o", ms=5, capsize=4, label="Monte-Carlo ± 3 SE")
ax.scatter(x, NU[:, 4], marker="_", s=500, color="C1", zorder=3, label="ν = (α+β)²/4 (Eq. 13)")
ax.set_xticks(x, [label(*c) for c in NU_CASES], rotation=30, ha="right")
ax.set_ylabel("decoupling scale ν")
ax.legend(loc="upper right")
ch.figure(fig, "nu_scale", "The decoupling scale ν from linear (ν = 1) to pseudo-random (ν = 0) layers, "
          "Monte-Carlo against the closed form (Donier, Eqs. 13 and 15). "
          f"{P['nu_samples']:,} samples, n = {P['nu_n']}, m = {P['nu_m']}, a fresh random P per sample: the idealised "
          "setting in which Eq. 13 is exact, so the agreement illustrates the scale rather than testing it.",
          arrays={"nu": NU[:, 0], "se": NU[:, 1], "nu_formula": NU[:, 4]})

# %% [markdown]
# ## The heat-maps of Σ̃ (Donier, Fig. 3)
#
# Donier's Fig. 3 is a schematic of the decoupling scale. To draw it from data, we take a small
# layer (n = 8 inputs, m = 4 units) and *correlated* inputs, Σ_kl = 0.6^|k−l|, so that each block
# visibly reproduces Σ's banded structure, and accumulate the empirical Σ̃ (32 × 32) in the same
# idealised setting (a fresh P per sample). Each panel title gives ν and the least-squares ratio
# of the off-diagonal blocks to Σ, r_ij = ⟨Σ̃_ij, Σ⟩/⟨Σ, Σ⟩, which Eq. 14 sets to ν (and the
# diagonal ratios to 1); that agreement is again exact by construction and unit-tested.

# %%
HEAT = [("linear", None), ("leaky_relu", 0.2), ("relu", None), ("abs", None), ("pseudo_random", None)]
HN, HM, RHO = 8, 4, 0.6
SIG = RHO ** np.abs(np.subtract.outer(np.arange(HN), np.arange(HN)))


def compute_heat():
    out = {}
    for k, (name, slope) in enumerate(HEAT):
        r = cap.augmented_covariance_mc(name, SIG, m=HM, n_samples=P["heat_samples"], rng=ch.rng("heat", k),
                                        slope=slope, unit_seeds=np.arange(HM) + 100 * k)
        out[f"S_{k}"] = r["S"]
        out[f"off_{k}"] = r["off"]
    return out


HEATR = ch.cached("heatmaps", dict(cases=[[n, s] for n, s in HEAT], n=HN, m=HM, rho=RHO,
                                    n_samples=P["heat_samples"], v=2), compute_heat, code_version=CV)

fig, axes = plt.subplots(2, 3, figsize=(7.5, 5.6))
for k, ((name, slope), ax) in enumerate(zip(HEAT, axes.flat)):
    im = ax.imshow(HEATR[f"S_{k}"], cmap=CMAP_DIVERGING, vmin=-1, vmax=1)
    ax.set_title(f"{label(name, slope)}\nν = {cap.nu_closed_form(name, slope):.3f}, fit {HEATR[f'off_{k}'].mean():.3f}",
                 fontsize=9)
    ax.set_xticks([]), ax.set_yticks([])
    ax.grid(False)
    for b in range(1, HM):
        ax.axhline(b * HN - 0.5, color="k", lw=0.4), ax.axvline(b * HN - 0.5, color="k", lw=0.4)
axes.flat[-1].axis("off")
fig.colorbar(im, ax=axes.flat[-1], fraction=0.6, shrink=0.9, label="Σ̃ entry")
ch.figure(fig, "augmented_covariance", "Empirical augmented covariance Σ̃ of a layer with n = 8 inputs and m = 4 "
          "units for five activations, drawn as Donier's Fig. 3: diagonal blocks ≈ Σ, off-diagonal blocks ≈ νΣ "
          f"(Eq. 14). Σ_kl = 0.6^|k−l|, {P['heat_samples']:,} samples, a fresh random P per sample.",
          arrays={**{f"S_{k}": HEATR[f"S_{k}"] for k in range(len(HEAT))}, "Sigma": SIG})

# %% [markdown]
# ## How good is Eq. 13 for a fixed layer? (footnote 3)
#
# Donier notes that Eq. 13 is exact when the y's are independent of the z's, and only approximate
# otherwise. For a *fixed* P and Gaussian Y the error can be computed exactly. Take two orthonormal
# columns p_i ⟂ p_j and condition Y on (z_i, z_j): Y = p_i z_i + p_j z_j + r with r independent of
# both. Then, using E[ηz²] = E[η] = (α+β)/2 for z ~ N(0, 1),
#
# $$\mathbb{E}[\eta_i\eta_j\,YY^\top] = \nu I + \big(\mathbb{E}[\eta z]\big)^2\,(p_ip_j^\top + p_jp_i^\top),
# \qquad \mathbb{E}[\eta z] = \frac{\beta-\alpha}{\sqrt{2\pi}},$$
#
# so the relative Frobenius error of a block is √2(β−α)²/(2π√n). It vanishes for linear and
# pseudo-random layers, and is largest for the absolute value, whose η is odd. We estimate the
# squared error by Monte-Carlo for a fixed random P, subtracting the estimator's own noise floor
# (Σ var̂/N), so that the estimate is unbiased, in 10 independent batches per n. The claim pools
# the ratio measured/closed form over n (inverse-variance weights; Welch–Satterthwaite degrees of
# freedom).

# %%
FN3 = [("relu", None), ("abs", None)] + ([("leaky_relu", 0.2)] if scale != "ci" else [])


def compute_fn3():
    out = {}
    for k, (name, slope) in enumerate(FN3):
        rows = []
        for j, n in enumerate(P["fn3_ns"]):
            r = cap.footnote3_error_mc(name, n=n, n_samples=P["fn3_samples"], rng=ch.rng("fn3", k, j), slope=slope)
            rows.append([n, r["err2"], r["err2_se"], cap.footnote3_error_closed_form(name, n, slope) ** 2])
        out[f"rows_{k}"] = np.array(rows)
    return out


FN3R = ch.cached("footnote3", dict(cases=[[n, s] for n, s in FN3], ns=P["fn3_ns"], n_samples=P["fn3_samples"]),
                 compute_fn3, code_version=CV)
fig, ax = plt.subplots(figsize=(5.5, 3.8))
for k, (name, slope) in enumerate(FN3):
    R = FN3R[f"rows_{k}"]
    err = np.sqrt(np.clip(R[:, 1], 1e-12, None))
    derr = R[:, 2] / (2 * err)
    ax.errorbar(R[:, 0], err, yerr=3 * derr, fmt="o", color=f"C{k}", capsize=3, label=f"{label(name, slope)} (MC ± 3 SE)")
    ns = np.geomspace(R[0, 0], R[-1, 0], 50)
    ax.plot(ns, [cap.footnote3_error_closed_form(name, int(v), slope) for v in ns], color=f"C{k}", lw=1)
ax.set_xscale("log", base=2), ax.set_yscale("log")
ax.set_xlabel("input dimension n"), ax.set_ylabel("‖E[η_iη_j YYᵀ] − νΣ‖_F / ‖Σ‖_F")
ax.legend(fontsize=8)
ch.figure(fig, "footnote3_error", "Relative Frobenius error of the approximation E[η_iη_j y_k y_l] ≈ ν E[y_k y_l] "
          "for a fixed layer, against the input dimension n (Donier, Eq. 13 and footnote 3): Monte-Carlo (points) "
          "against the exact Gaussian result √2(β−α)²/(2π√n) (lines).",
          arrays={f"rows_{k}": FN3R[f"rows_{k}"] for k in range(len(FN3))})
fn3_pooled = {}
for k, (name, slope) in enumerate(FN3):
    R = FN3R[f"rows_{k}"]
    ratio, ratio_se, ratio_dof = lst.inverse_variance_mean(R[:, 1] / R[:, 3], R[:, 2] / R[:, 3], 9)
    fn3_pooled[name] = (ratio, ratio_se, outcome(ratio, ratio_se, ratio_dof, 1.0, 0.1, "rel"))
    tag = name if slope is None else f"{name}_{slope}"
    ch.claim(f"footnote3_{tag}", f"Footnote 3, {label(name, slope)}: the measured squared block error of a fixed layer "
             "equals the closed form 2(β−α)⁴/(4π²n) (ratio measured/closed form, pooled over n)",
             kind="predicts", measured=ratio, se=ratio_se, dof=ratio_dof, reference=1.0, tol=0.1, comparison="rel",
             why="the closed form is exact for Gaussian inputs, so the margin is only the declared meaning of "
                 "'agrees': 10 % on the squared error (5 % on the error), below what the log-scale figure resolves and "
                 "far below the factor 2 by which the squared error changes between successive n; the noise enters "
                 "through the batch standard errors (10 batches per n, t quantiles)",
             source="Donier 2019, Eq. 13 and footnote 3; closed form derived in this chapter",
             note="" if fn3_pooled[name][2] == "pass" else "the pooled ratio's 99 % interval is not inside ±10 %: "
             "too few samples at the largest n, or a real departure — see the figure")
c_relu = (lambda a, b: (b - a) ** 2 / (2 * math.pi))(*cap.eta_levels("relu"))
c_abs = (lambda a, b: (b - a) ** 2 / (2 * math.pi))(*cap.eta_levels("abs"))
ch.glue("fn3_ratio_relu", fn3_pooled["relu"][0], se=fn3_pooled["relu"][1])
ch.glue("fn3_ratio_abs", fn3_pooled["abs"][0], se=fn3_pooled["abs"][1])
ch.glue("fn3_opnorm_relu", c_relu)
ch.glue("fn3_opnorm_abs", c_abs)

# %% [markdown]
# Pooled over n, the measured squared error is {glue}`fn3_ratio_relu` times the closed form for
# ReLU and {glue}`fn3_ratio_abs` times for the absolute value.
#
# How should "the approximation is good for wide layers" be read? **In Frobenius norm** the block
# error decays like 1/√n: each of the n² entries is off by O(1/n). But the deviation
# (E ηz)²(p_ip_jᵀ + p_jp_iᵀ) is concentrated on the two directions p_i and p_j, and there it does
# not decay at all: its operator norm is (β−α)²/(2π) at every n — {glue}`fn3_opnorm_relu` for ReLU
# (against an off-diagonal block νΣ of norm ½) and {glue}`fn3_opnorm_abs` for the absolute value
# (whose predicted block is 0). So Eq. 14 is a good description of Σ̃ on average over directions,
# but not along the very directions p_i, p_j that the layer's own units read, and it is exact only
# once the layer is averaged over its random directions. Note also that the error is controlled by
# the *input* dimension n (each y_k overlaps with z_i by a fraction 1/√n), not by the number of
# units m that the footnote mentions.
#
# ## Capacities in the augmented space
#
# **Definition used here.** For a model linear in its inputs with coefficient map A_W and L2 loss,
# the optimality condition is KᵀX = 0 with K = Σ·∂A/∂W (Eq. 9). Only the subspace spanned by K's
# columns matters for that condition, so we replace K by an orthonormal basis of its column space
# (Euclidean inner product, from an SVD; rank threshold 10⁻¹⁰ of the largest singular value). The
# capacity of a subspace with orthonormal basis S is κ(S) = ‖KᵀS‖_F², along the canonical axes
# κ_i = (KKᵀ)_ii, and the total is the rank of K, the number of independent parameters. **When
# Σ̃ ≠ I** (correlated inputs, empirical covariances) we use the same rule: an orthonormal basis,
# in the Euclidean metric, of col(Σ̃·P̃·∂A/∂W) — not a Σ̃-weighted orthonormalisation.
#
# **Linear layers (Eqs. 16–18).** With η ≡ 1, Σ̃ = 11ᵀ⊗Σ and the augmented capacity matrix is
# K̃ = (K, …, K)/√m, so κ̃(S̃) = κ(S): capacity computed entirely in the nm-dimensional augmented
# space equals capacity in the input space. This is an identity; `tests/test_capacity.py` checks it
# to 10⁻¹⁰ for random Wishart Σ, random P, random ∂A/∂W and random subspaces S of random dimension.
#
# **Pseudo-random layers (Eqs. 22–25).** With Σ = I and a fully decoupling activation, Σ̃ = I and
# K̃ = P̃K^φ, and the capacity of input i gathers the capacities of the units it feeds, weighted by
# the squared weights: κ = (P∘P)κ^φ. D = P∘P is column-stochastic when the columns of P have unit
# norm, so the total is conserved (an identity, unit-tested). Below: n = 8 inputs, m = 16 units,
# p = 5 parameters (A = J·W with a random J).
#
# The formula assumes the idealised Σ̃ = I. To see whether a *real* pseudo-random activation gets
# there, we draw N samples Y ~ N(0, I), pass them through our hashed η, form the empirical
# augmented capacity matrix K̃ = Σ̂̃·P̃·J (without ever storing the 128 × 128 Σ̂̃: its product with P̃
# only needs φ(Y) = η ⊙ PᵀY), orthonormalise, and read off κ_i. The empirical capacities sum to p
# exactly, whatever N (the trace of a rank-p projector). As N grows they should converge to Eq. 25
# at the Monte-Carlo rate N^{-1/2}.

# %%
EN, EM, EP = 8, 16, 5
rng_pr = ch.rng("pseudo_random_layer")
P_pr = cap.random_unit_columns(EN, EM, rng_pr)
J_pr = rng_pr.standard_normal((EM, EP))
kphi = cap.feature_capacities(J_pr)
k_eq25 = cap.pseudo_random_capacities(P_pr, kphi)


def compute_emp():
    out = np.zeros((len(P["emp_sizes"]), P["emp_reps"], EN))
    for a, N in enumerate(P["emp_sizes"]):
        for b in range(P["emp_reps"]):
            rng = ch.rng("emp", a, b)
            Y = rng.standard_normal((N, EN))
            seeds = np.arange(EM) + 1000 * (a * 100 + b + 1)
            E = cap.eta("pseudo_random", Y @ P_pr, unit_seed=seeds[None, :])
            out[a, b] = cap.empirical_augmented_capacities(Y, E, P_pr, J_pr)
    return {"kappa": out}


EMP = ch.cached("empirical_pr", dict(n=EN, m=EM, p=EP, sizes=P["emp_sizes"], reps=P["emp_reps"]),
                compute_emp, code_version=CV)["kappa"]
errs = np.linalg.norm(EMP - k_eq25, axis=-1)  # (sizes, reps)
sizes = np.array(P["emp_sizes"], float)
slope_fit = lst.linear_fit(np.repeat(np.log(sizes), errs.shape[1]), np.log(errs).ravel())
k_mean, k_se = lst.mean_se(EMP[-1])

fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.4))
ax = axes[0]
w = 0.38
ax.bar(np.arange(EN) - w / 2, k_eq25, w, label="Eq. 25: (P∘P)κ^φ")
ax.bar(np.arange(EN) + w / 2, k_mean, w, yerr=3 * k_se, capsize=3, label=f"empirical, N = {int(sizes[-1]):,} (± 3 SE)")
ax.set_xlabel("input i"), ax.set_ylabel("capacity κ_i"), ax.legend(fontsize=7)
ax = axes[1]
ax.loglog(np.repeat(sizes, errs.shape[1]), errs.ravel(), ".", alpha=0.5, label="replicates")
ax.loglog(sizes, errs.mean(1), "o-", label=f"mean; slope {slope_fit['slope']:.2f} ± {slope_fit['slope_se']:.2f}")
ax.loglog(sizes, errs.mean(1)[0] * (sizes / sizes[0]) ** -0.5, "k--", lw=1, label="∝ N^{-1/2}")
ax.set_xlabel("samples N"), ax.set_ylabel("‖κ_emp − (P∘P)κ^φ‖₂"), ax.legend(fontsize=7)
ch.figure(fig, "pseudo_random_capacities", "Capacities of a pseudo-random layer, input-space capacities κ = (P∘P)κ^φ "
          "of Donier's Eq. 25 against those from an empirical augmented covariance of a hashed pseudo-random "
          "activation (left), and the convergence of the latter as the sample grows (right).",
          arrays={"kappa_eq25": k_eq25, "kappa_emp": EMP, "sizes": sizes, "errors": errs, "kappa_phi": kphi})

e_last = lst.estimate(errs[-1])
ch.claim("empirical_matches_eq25", f"At N = {int(sizes[-1]):,} samples, capacities from the empirical augmented "
         "covariance of a real pseudo-random activation agree with (P∘P)κ^φ (Euclidean distance over the 8 inputs, "
         "mean over replicates)", kind="predicts", measured=e_last.mean, se=e_last.se, dof=e_last.dof,
         reference=0.05, tol=0.0, comparison="le",
         why="the declared agreement is the bar chart's read-off precision, ≈ 0.02 per input or 0.05 in the "
             "Euclidean norm over 8 inputs (1 % of the total capacity p = 5); the replicate scatter gives the "
             "standard error (t quantiles); at ci the replicates are too few for a stable standard error",
         source="Donier 2019, Eq. 25", min_scale="default")
slope_dof = errs.size - 2
slope_outcome = outcome(slope_fit["slope"], slope_fit["slope_se"], slope_dof, -0.5, 0.1, "abs")
ch.claim("empirical_converges", "The error of the empirical capacities decays like N^{-1/2} (fitted log-log slope "
         "over all replicates)", kind="predicts", measured=slope_fit["slope"], se=slope_fit["slope_se"],
         dof=slope_dof, reference=-0.5, tol=0.1, comparison="abs",
         why="a Monte-Carlo error with a finite limit falls as N^{-1/2}; the declared margin ±0.1 separates that rate "
             "from a bias floor (slope → 0) and from the O(1/N) regime (slope −1); least-squares slope standard "
             "error, n − 2 d.o.f.",
         source="Donier 2019, Eq. 25 as the limit; central limit theorem for the rate",
         note="" if slope_outcome == "pass" else f"{P['emp_reps']} replicates per size over N = {int(sizes[0])}–"
         f"{int(sizes[-1]):,}: the slope's 99 % interval is about as wide as the ±0.1 margin itself, so this run "
         "cannot pin the rate (the default scale, 12 replicates up to N = 100,000, is meant to)")
ch.glue("emp_slope", slope_fit["slope"], se=slope_fit["slope_se"])
ch.glue("emp_err_last", e_last.mean, se=e_last.se)
ch.glue("emp_n_last", int(sizes[-1]))

# %% [markdown]
# The distance to Eq. 25 falls with the sample size with a fitted log-log slope of
# {glue}`emp_slope`; at N = {glue}`emp_n_last` it is {glue}`emp_err_last` (Euclidean norm over the
# 8 inputs, mean over replicates).
#
# ## Beyond the paper: the decoupling scale of smooth activations
#
# Eq. 13 only covers piecewise-constant η. The natural extension, which reduces to it for such η,
# is ν(f; q) = (E η)² / E[η²] with z ~ N(0, q): the ratio of off-diagonal to diagonal blocks when η
# is independent of the y's. For smooth f, η = f(z)/z is a smooth function and ν depends on the
# pre-activation scale q. We compute it by quadrature — composite Gauss–Legendre on each half-line,
# on panels graded geometrically away from 0, so that both the unit-width features of η (the peak of
# tanh z / z, ELU's kink at 0) and a Gaussian of any width are resolved — for tanh (η = tanh z / z),
# GELU (η = Φ(z)), SiLU (η = σ(z)) and ELU. The unit tests check it against adaptive quadrature and,
# for tanh at q = 100 and 10⁴, against a 4-million-sample Monte-Carlo; for GELU against the closed
# form ν = π/(π + 2 arcsin(q/(1+q))), which follows from E Φ(z) = ½ and E Φ(z)² = ¼ +
# arcsin(q/(1+q))/(2π). The points are the Monte-Carlo estimator of the first section (a layer of
# n = 4000 inputs, whose O(1/n) bias for smooth η is far below the standard errors), for q ≤ 10.

# %%
QS = np.geomspace(0.01, 10.0, P["smooth_qs"])
QF = np.geomspace(0.01, 1e4, 120)
nu_quad = {name: np.array([cap.nu_smooth(name, q) for q in QF]) for name in cap.SMOOTH}


def compute_smooth():
    out = {}
    for k, name in enumerate(cap.SMOOTH):
        rows = []
        for j, q in enumerate(QS):
            r = cap.nu_monte_carlo(name, n=4000, m=16, n_samples=P["smooth_samples"], q=float(q),
                                   rng=ch.rng("smooth", k, j))
            rows.append([q, r["nu"], r["se"]])
        out[name] = np.array(rows)
    return out


SM = ch.cached("smooth_nu", dict(qs=QS, n=4000, m=16, n_samples=P["smooth_samples"]), compute_smooth, code_version=CV)

fig, ax = plt.subplots(figsize=(6.5, 4))
for k, name in enumerate(cap.SMOOTH):
    ax.plot(QF, nu_quad[name], color=f"C{k}", label=f"{name} (quadrature)")
    R = SM[name]
    ax.errorbar(R[:, 0], R[:, 1], yerr=3 * R[:, 2], fmt="o", ms=3.5, color=f"C{k}", capsize=2)
ax.axhline(1, color="gray", lw=0.8, ls=":"), ax.axhline(0.5, color="gray", lw=0.8, ls=":")
ax.text(0.011, 0.46, "ReLU, ν = ½", fontsize=8, color="gray")
ax.set_xscale("log"), ax.set_xlabel("pre-activation variance q"), ax.set_ylabel("ν(f; q) = (E η)² / E η²")
ax.set_ylim(0, 1.05)
ax.legend(fontsize=8)
ch.figure(fig, "smooth_nu", "Decoupling scale ν(f; q) of smooth activations against the pre-activation variance q, "
          "beyond the paper: quadrature (lines) and Monte-Carlo ± 3 SE (points, q ≤ 10) — extends Donier, Eqs. 13 "
          "and 15.",
          arrays={"q_fine": QF, **{f"quad_{n}": v for n, v in nu_quad.items()}, **{f"mc_{n}": SM[n] for n in cap.SMOOTH}})

q_half = brentq(lambda lq: cap.nu_smooth("tanh", 10.0**lq) - 0.5, 0.0, 4.0)
ch.glue("tanh_nu_q10", cap.nu_smooth("tanh", 10.0), digits=2)
ch.glue("tanh_nu_q100", cap.nu_smooth("tanh", 100.0), digits=2)
ch.glue("tanh_nu_q1e4", cap.nu_smooth("tanh", 1e4), digits=2)
ch.glue("tanh_q_half", float(f"{10.0**q_half:.2g}"), digits=3)
ch.glue("elu_nu_q1e4", cap.nu_smooth("elu", 1e4), digits=2)

# %% [markdown]
# **What it predicts.** At small q every smooth activation is nearly linear around 0, η ≈ η(0) is
# almost constant, and ν → 1: a layer of tanh, GELU, SiLU or ELU units driven by small
# pre-activations does *not* decouple — capacity analysis reduces to the linear case. As q grows,
# GELU and SiLU approach their piecewise-linear limit, ReLU, and ν decreases towards ½; ELU, whose
# negative branch saturates at −1 (η ~ 1/|z| on the left), also tends to ½ but more slowly
# ({glue}`elu_nu_q1e4` at q = 10⁴). For GELU the curve is exact in closed form. tanh saturates on
# *both* sides, η ~ 1/|z|, so its ν has no ReLU plateau and keeps falling with q — slowly
# ({glue}`tanh_nu_q10` at q = 10, {glue}`tanh_nu_q100` at q = 100, {glue}`tanh_nu_q1e4` at
# q = 10⁴) — towards 0, roughly like (log q)²/√q: beyond q ≈ {glue}`tanh_q_half` a tanh layer
# looks, on this scale, like a stronger decoupler than ReLU.
#
# **Where the paper warns.** Donier's Appendix A gives two reasons why this extension may not
# carry capacity the way it does for ReLU-type units. First, for a general non-linearity η depends
# on Y itself, so separating the augmented space into independent blocks is only approximate — our
# Monte-Carlo agrees with the quadrature precisely because it averages over random directions, which
# removes that dependence. Second, when the layer's own weights are trained, η changes with them,
# and only for piecewise-linear, positively homogeneous f (f(y) = f'(y)·y with f' piecewise
# constant) does an infinitesimal change of the weights leave η unchanged; he reports that applying
# the formulas to tanh- or sigmoid-type layers finds parameter redundancy where there is none.
# So read the tanh curve as a statement about the covariance structure of Σ̃, not as a validated
# capacity propagation rule: the small-ν regime of a saturated tanh layer is exactly where the
# framework is expected to break.

# %%
fn3_out = {v[2] for v in fn3_pooled.values()}
ch.glue("fn3_verdict", "agrees with it within the declared 10 %" if fn3_out == {"pass"} else
        "departs from it by more than the declared 10 % in at least one case" if "fail" in fn3_out else
        "is consistent with it, but this run cannot confirm agreement to 10 % in every case")
ch.glue("emp_verdict", {"pass": "at the rate N^{-1/2} (within the declared ±0.1 on the exponent)",
                        "fail": "but at a rate different from N^{-1/2}",
                        "inconclusive": "(the error falls, but this run's replicates cannot pin the exponent to "
                                        "−½ ± 0.1)"}[slope_outcome])

# %% [markdown]
# ## What we found
#
# *Decoupling scale.* In the idealised setting of Eq. 13 (a fresh random direction per sample) the
# decoupling scale (α+β)²/4 and the block structure of Fig. 3 hold exactly, and our Monte-Carlo
# shows them (its agreement is a unit test of our code, not a reproduction). This chapter
# therefore grades no paper number directly: Donier's Section 2 states formulas, which we re-derive,
# and a schematic figure, which we redraw.
#
# *A fixed layer.* For an actual layer with fixed P the approximation has an error that we computed
# in closed form; the Monte-Carlo of a fixed layer {glue}`fn3_verdict` (pooled ratios
# {glue}`fn3_ratio_relu` for ReLU, {glue}`fn3_ratio_abs` for the absolute value). The error decays as
# 1/√n in Frobenius norm, but not along the directions p_i, p_j of the layer's own units, where it
# stays of order one ({glue}`fn3_opnorm_relu` for ReLU): footnote 3's "good approximation" holds on
# average over directions only.
#
# *Capacities.* Capacities computed in the augmented space equal input-space capacities for linear
# layers (Eq. 18) and the pseudo-random rule κ = (P∘P)κ^φ conserves the total — identities, checked
# in the unit tests. The empirical augmented covariance of a real, hashed pseudo-random activation
# converges to Eq. 25 {glue}`emp_verdict` (fitted slope {glue}`emp_slope`). {doc}`02_capacity_diffusion`
# chains this rule through depth.
#
# *Smooth activations* (beyond the paper): ν(f; q) runs from 1 at small pre-activation scale to the
# ReLU value ½ for GELU, SiLU and ELU, and towards 0 for tanh ({glue}`tanh_nu_q1e4` at q = 10⁴).
#
# ## Scorecard

# %%
ch.finish()
