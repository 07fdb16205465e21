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
# # Chapter 5 — Batch-normalised ResNets: power laws instead of exponentials
#
# Chapter 4 showed that a batch-normalised feedforward net multiplies its sensitivity χ by a
# roughly constant factor per layer. Labatie (2019, §7, Theorem 4) shows that skip connections
# break this multiplicativity. In a pre-activation residual unit the branch still amplifies χ as
# a feedforward net would, but its output is *diluted* into the skip path, whose signal variance
# grows linearly with the number of units: unit l contributes a fraction ~1/l of the signal.
# The result is a power law, χ^l ∝ l^τ, with an exponent fixed by the feedforward increment
# inside the units, τ = ((E δχ)^{2·res_depth} − 1)/2 (Eq. 15) — the ResNet's evolution is the
# logarithmic version of the feedforward one. And the signal stays healthy: many directions, a
# nearly Gaussian distribution. This chapter reproduces his Fig. 5 and checks Eq. 15.

# %% tags=["parameters", "remove-cell"]
scale = "ci"          # ci | default | paper
seed = 0
device = "auto"       # auto | cpu | cuda
width = None          # fully-connected width N
batch = None          # batch size B
depth = None          # number of residual units
res_depth = None      # layers per residual unit
n_nets = None         # networks (fully-connected)
records = None        # number of recorded units
ff_depth = None       # depth of the feedforward comparison nets
conv_width = None     # convolutional variant (3×3 periodic), reduced on CPU
conv_batch = None
conv_depth = None
conv_nets = None
data_nets = None      # networks per data set
block = None          # networks per cached block

# %%
import time
from dataclasses import replace

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from layerwise import labatie as lb
from layerwise.chapter import Chapter
from layerwise.moments import MomentsConfig
from layerwise.params import resolve

SCALES = {
    "ci": dict(width=64, batch=16, depth=100, res_depth=2, n_nets=6, records=50, ff_depth=100,
               conv_width=8, conv_batch=4, conv_depth=20, conv_nets=1, data_nets=3, block=8),
    "default": dict(width=512, batch=64, depth=500, res_depth=2, n_nets=48, records=100, ff_depth=200,
                    conv_width=32, conv_batch=8, conv_depth=500, conv_nets=4, data_nets=12, block=16),
    "paper": dict(width=512, batch=64, depth=500, res_depth=2, n_nets=200, records=500, ff_depth=200,
                  conv_width=512, conv_batch=64, conv_depth=500, conv_nets=1000, data_nets=200, block=50),
}
P = resolve(SCALES, scale, width=width, batch=batch, depth=depth, res_depth=res_depth, n_nets=n_nets,
            records=records, ff_depth=ff_depth, conv_width=conv_width, conv_batch=conv_batch,
            conv_depth=conv_depth, conv_nets=conv_nets, data_nets=data_nets, block=block)
ch = Chapter("05_resnet_power_laws", scale=scale, seed=seed, device=device, params=P)
L = P["depth"]
RD = P["res_depth"]
L_MIN = max(2, L // 10)   # power-law fits start after the input-dependent transient
base = MomentsConfig(arch="bn_res", kernel_size=1, width=P["width"], batch=P["batch"], depth=L, res_depth=RD,
                     dataset="patches", n_sims=P["n_nets"], records=P["records"], seed=seed, device=ch.device)
timings = {}


def run(name, cfg):
    return lb.simulate_cached(ch, name, cfg, block=P["block"], timings=timings)


print(f"scale={scale}, device={ch.device}; parameters: {P}")

# %% [markdown]
# ## Set-up
#
# Inputs, first random layer and initialisation as in Chapters 3–4. Each of the L residual units
# is a pre-activation unit (He et al. 2016): $h \leftarrow x$, then `res_depth` times
# $h \leftarrow W\,\mathrm{relu}(\mathrm{BN}(h))$, and $x' = x + h$ (noise likewise, to first
# order). Moments are taken at the unit input (loc1), after the first BN (loc2), after the first
# ReLU (loc3), after the first weights (loc4) and after the addition (loc5). The *feedforward
# increment* of one layer inside a unit is $\delta\chi = \chi(\text{loc4})/\chi(\text{loc1})$: the
# same BN → ReLU → weights step as a layer of Chapter 4, seen from its pre-activation side.
#
# **Reduced at this scale:** the paper's nets are convolutional (3×3, width 512, B = 64, 500 units
# of 2 layers, 1000 networks); the fully-connected nets run at full width, batch and depth, the
# convolutional variant at the reduced size in its caption.

# %%
d, A = run("fig5_fc", base)


def panels(A):
    chi0 = A["chi_loc1"][:, :1]
    return {
        "dff": A["chi_loc4"] / A["chi_loc1"],
        "dbn": A["chi_loc2"] / A["chi_loc1"],
        "dphi": A["chi_loc3"] / A["chi_loc2"],
        "chi": A["chi_loc5"],
        "chi_in": chi0,
        "reff_x": A["reff_signal_loc5"],
        "reff_dx": A["reff_noise_loc5"],
        "kurt_z": A["mu4_signal_loc2"] / A["mu2_signal_loc2"] ** 2,
        "nu1_z": A["nu1_abs_signal_loc2"] / np.sqrt(A["nu2_signal_loc2"]),
    }


def fig5(d, Q, title, pfit=None, tau_pred=None):
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.6))
    lb.plot_increment_panel(axes[0], d, Q, "dff", r"$\delta\chi$ (one layer)", "increment inside units")
    lb.plot_band(axes[1], d, Q["chi"], "geometric mean", "C0", log=True)
    if pfit is not None:
        axes[1].plot(d, np.exp(pfit["intercept"]) * d ** pfit["tau"], "k--", lw=1, label=f"fit l^{pfit['tau']:.3f}")
    if tau_pred is not None:
        sel = d >= L_MIN
        c = np.exp(np.mean(np.log(Q["chi"][:, sel]) - tau_pred * np.log(d[sel])))
        axes[1].plot(d, c * d**tau_pred, "r:", lw=1.5, label=f"Eq. 15: τ = {tau_pred:.3f}")
    axes[1].set_xscale("log")
    axes[1].set_yscale("log")
    axes[1].set_ylabel(r"$\chi^l$")
    axes[1].legend(fontsize=8)
    lb.plot_signal_panels(axes[2], axes[3], d, Q, r"kurtosis after BN")
    for ax in axes:
        ax.set_xlabel("residual unit l")
    fig.suptitle(title)
    return fig


Q = panels(A)
sel = d >= L_MIN
tau_pred, tau_pred_se = lb.tau_prediction(Q["dff"][:, sel], RD)
pf = lb.power_fit(d, Q["chi"], l_min=L_MIN)
fig = fig5(d, Q, f"BN ResNet, fully-connected, N = {P['width']}, B = {P['batch']}, {RD} layers per unit", pf, tau_pred)
ch.figure(fig, "fig5_fc",
          f"Labatie, Fig. 5 (a–d), fully-connected variant, {Q['chi'].shape[0]} networks: (a) increments of χ inside the "
          "first layer of each unit; (b) χ^l on log-log axes with the free power-law fit (dashed) and the exponent "
          "predicted by Theorem 4 / Eq. 15 (dotted); (c) effective ranks; (d) kurtosis and ν₁(|y|) after the first BN.",
          arrays={"depth": d, **{k: v for k, v in Q.items()}})

# %% [markdown]
# ## The power law and its predicted exponent
#
# Theorem 4 predicts τ from the *mean* feedforward increment of one layer inside the units,
# averaged over the evolution (units l ≥ L/10 here) and over networks. The free fit regresses
# log χ^l on log l per network over the same range. Both come with standard errors over networks.

# %%
ch.claim("tau_matches_eq15", "the free log-log exponent of χ^l agrees with τ = ((E δχ)^{2·res_depth} − 1)/2 (Eq. 15)",
      measured=pf["tau"], reference=tau_pred, tol=3 * float(np.hypot(pf["se_tau"], tau_pred_se)), comparison="abs",
      why=f"3 combined standard errors over {Q['chi'].shape[0]} networks: fit {pf['tau']:.4f} ± {pf['se_tau']:.4f}, "
          f"prediction {tau_pred:.4f} ± {tau_pred_se:.4f}",
      source="Labatie 2019, Theorem 4 / Eq. 15 and Fig. 5(b)")
r2 = lb.r2_pair(d, np.log(Q["chi"]).mean(0), l_min=L_MIN)
print(f"τ fit {pf['tau']:.4f} ± {pf['se_tau']:.4f} (spread {pf['std_tau']:.4f}); Eq. 15: {tau_pred:.4f} ± {tau_pred_se:.4f}; "
      f"mean δχ inside units {lb.summary(Q['dff'][:, sel].mean(1))}; R² {r2}")
ch.claim("power_law_r2", "log χ^l is linear in log l (R² ≥ 0.99)",
      measured=r2["r2_linear_in_log_l"], reference=0.99, tol=0.0, comparison="ge",
      why="declared meaning of 'power law', computed on the network-averaged log χ",
      source="Labatie 2019, Theorem 4 and Fig. 5(b)")
ch.claim("power_not_exponential", "the power law describes χ better than an exponential: R²(log l) > R²(l)",
      measured=r2["r2_linear_in_log_l"] - r2["r2_linear_in_l"], reference=0.0, tol=0.0, comparison="ge",
      why="direct comparison of the two fits on the same data", source="Labatie 2019, §7")
ch.claim("dff_gt_1", "the feedforward increment inside the units exceeds 1 (z-score ≥ 3): the branch alone would explode",
      measured=(lb.summary(Q["dff"][:, sel].mean(1))["mean"] - 1) / lb.summary(Q["dff"][:, sel].mean(1))["se"],
      reference=3.0, tol=0.0, comparison="ge", why="significance over networks", source="Labatie 2019, §7 and F.1")

# %% [markdown]
# ### Where the two exponents are measured matters
#
# Theorem 4 is a statement about the asymptotic regime. At the depths we can simulate the
# feedforward increment inside the units is still drifting slowly downwards, so the exponent
# Eq. 15 predicts depends on the window of units over which δχ is averaged, while the free
# log-log exponent hardly does. The table computes both over successive windows of units. At
# `default` scale the free fit is stable from window to window while the Eq. 15 prediction falls
# from the first window to the last, ending within about two combined standard errors of the fit;
# over the whole range used by the claim above the gap exceeds three, which is why that claim
# fails at `default` (the scorecard gives the numbers). We read this as the
# prediction approaching the fit as the units' increment settles — the theorem's asymptotics not
# yet reached at 500 units — rather than as a disagreement with Labatie's result; a `paper`-scale
# run (1 000 networks) would narrow both error bars but not the drift, which only more depth
# removes. The GPU spot check `benchmarks/labatie_spot_checks.py` (written to
# `results/bench/labatie_spot_checks.json`) does both: for these fully-connected ResNets run to
# 4 000 units the gap shrinks window by window to well within one combined standard error, and
# convolutional ResNets at the paper's settings (width 512, B = 64, 500 units) agree with Eq. 15
# within one standard error already over the claim's range.

# %%
edges = np.unique(np.linspace(L_MIN, L, 5).astype(int))
rows = []
for a, b in zip(edges[:-1], edges[1:]):
    w = (d >= a) & (d <= b)
    pw = lb.power_fit(d[w], Q["chi"][:, w], l_min=a)
    tw, twse = lb.tau_prediction(Q["dff"][:, w], RD)
    rows.append({"units": f"{a}–{b}", "free τ": pw["tau"], "± s.e.": pw["se_tau"], "Eq. 15 τ": tw, "± s.e. ": twse,
                 "difference / combined s.e.": (pw["tau"] - tw) / np.hypot(pw["se_tau"], twse)})
pd.DataFrame(rows).round(4)

# %% [markdown]
# ## No pathology: many directions, nearly Gaussian

# %%
rx = lb.summary(Q["reff_x"][:, -1])
ku = lb.summary(Q["kurt_z"][:, -1])
print(f"unit {L}: r_eff(x) = {rx['mean']:.2f} ± {rx['se']:.2f} (spread {rx['std']:.2f}); kurtosis after BN "
      f"{ku['mean']:.3f} ± {ku['se']:.3f}")
ch.claim("kurtosis_near_3", f"kurtosis of the BN output at unit {L} close to the Gaussian 3: |μ₄ − 3| ≤ 0.5",
      measured=abs(ku["mean"] - 3), reference=0.5, tol=3 * ku["se"], comparison="le",
      why="0.5 declared ('close to Gaussian', against ≫ 3 for fat tails); tol = 3 SE over networks",
      source="Labatie 2019, §7 and Fig. 5(d)")

# %% [markdown]
# Labatie describes the BN output of ResNets as staying close to Gaussian (his Fig. 5(d)), in
# contrast with the fat tails that build up in BN feedforward nets (Chapter 4). We declared
# "close" as a kurtosis within 0.5 of the Gaussian 3 before running anything. Our networks stay
# far from the feedforward pathology, but at `default` scale the kurtosis at the last unit
# (printed above) lies outside that declared band, so the claim fails and we leave it failing. Two differences
# from the paper could contribute and are not separated here: our inputs are patches of three
# photographs, whose batches are nearly rank one (SPEC, *Data*), instead of CIFAR-10 images; and
# our batch of 64 such patches bounds how Gaussian the per-channel statistics can look. The
# data-set comparison below shows how much the input changes the deep moments.
#
# To separate the two we rerun the ResNets with i.i.d. Gaussian inputs and with a four times
# larger batch of patches (`data_nets` networks each, signal moments only) and compare the
# kurtosis at the last unit.

# %%
kurt_rows = []
for label, ds, bsz in [("photo patches", "patches", P["batch"]), ("i.i.d. Gaussian", "gaussian", P["batch"]),
                       ("photo patches", "patches", 4 * P["batch"])]:
    _, Ak = run(f"kurtosis_{ds}_b{bsz}", replace(base, dataset=ds, batch=bsz, n_sims=P["data_nets"], records=P["records"],
                                                  reff_signal=False, reff_noise=False))
    kk = Ak["mu4_signal_loc2"][:, -1] / Ak["mu2_signal_loc2"][:, -1] ** 2
    kurt_rows.append({"input": label, "batch": bsz, "kurtosis at the last unit": kk.mean(),
                      "± s.e.": kk.std(ddof=1) / np.sqrt(len(kk)), "networks": len(kk)})
kurt_table = pd.DataFrame(kurt_rows)
kurt_table.round(3)

# %% [markdown]
# With i.i.d. Gaussian inputs the BN output of the deep ResNet is as Gaussian as Labatie
# describes; with photo patches it is not, and more so for larger batches. The excess kurtosis
# comes from our stand-in data — batches of patches from three photographs are dominated by
# their brightness and nearly rank one — not from the ResNet; the `kurtosis_near_3` claim
# above stays failing because it is stated for the chapter's main data, and the claim below
# grades the architecture on data-free inputs.

# %%
kg = kurt_rows[1]
ch.claim("kurtosis_near_3_gaussian_inputs",
         f"with i.i.d. Gaussian inputs, the kurtosis of the BN output at unit {L} is close to the Gaussian 3: |μ₄ − 3| ≤ 0.5",
         measured=abs(kg["kurtosis at the last unit"] - 3), reference=0.5, tol=3 * kg["± s.e."], comparison="le",
         why="the same declared 0.5 band as for patches; tol = 3 SE over networks",
         source="Labatie 2019, §7 and Fig. 5(d)")

# %% [markdown]
# ## ResNet against feedforward: logarithmic against exponential
#
# We run BN *feedforward* nets of the same width and batch (depth as in Chapter 4) and plot both
# on one figure: log χ against l for the feedforward nets, against log l for the ResNets. Both are
# straight lines — the ResNet's evolution is the feedforward one with depth replaced by its
# logarithm (Labatie §7). We also compare the signal's effective rank at the end of each.

# %%
dF, AF = run("ff_compare", replace(base, arch="bn_ff", depth=P["ff_depth"], records=P["ff_depth"]))
chiF = AF["chi_loc4"]
fF = lb.exp_fit(dF, chiF, l_min=10)
r2F = lb.r2_pair(dF, np.log(chiF).mean(0), l_min=10)
fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
axes[0].plot(dF, np.log(chiF).mean(0), label="BN feedforward: log χ vs l", color="C3")
axes[0].set_xlabel("layer l (feedforward)")
axes[0].set_ylabel(r"mean $\log\chi$")
ax2 = axes[0].twiny()
ax2.plot(np.log(d), np.log(Q["chi"]).mean(0), label="BN ResNet: log χ vs log l", color="C0")
ax2.set_xlabel("log l (ResNet units)", color="C0")
axes[0].legend(loc="upper left", fontsize=8)
ax2.legend(loc="lower right", fontsize=8)
lb.plot_band(axes[1], dF, AF["reff_signal_loc4"], "BN feedforward", "C3")
lb.plot_band(axes[1], d, Q["reff_x"], "BN ResNet", "C0")
axes[1].set_xscale("log")
axes[1].set_yscale("log")
axes[1].set_xlabel("layer / unit l")
axes[1].set_ylabel(r"$r_\mathrm{eff}(x^l)$")
axes[1].legend(fontsize=8)
ch.figure(fig, "resnet_vs_ff",
          "Labatie §7: the ResNet evolution is the logarithmic version of the feedforward one — log χ of BN feedforward "
          "nets against depth (red, bottom axis) and of BN ResNets against log depth (blue, top axis); right: the "
          "signal's effective rank in both.",
          arrays={"ff_depth": dF, "ff_logchi": np.log(chiF).mean(0), "res_depth": d, "res_logchi": np.log(Q["chi"]).mean(0),
                  "ff_reff": AF["reff_signal_loc4"].mean(0), "res_reff": Q["reff_x"].mean(0)})
rF = lb.summary(AF["reff_signal_loc4"][:, -1])
print(f"feedforward: R² {r2F}; rate {fF['rate']:.4f}; r_eff(x^{P['ff_depth']}) = {rF['mean']:.2f} ± {rF['se']:.2f}")
ch.claim("ff_exponential_res_power", "feedforward: log χ linear in l (R² ≥ 0.99) and better than in log l",
      measured=bool(r2F["r2_linear_in_l"] >= 0.99 and r2F["r2_linear_in_l"] > r2F["r2_linear_in_log_l"]),
      comparison="true", why="same declared R² criterion as for the ResNet power law", source="Labatie 2019, §6–7")
ch.claim("reff_resnet_large", f"the ResNet signal keeps several directions: r_eff(x^{L}) ≥ 3 (vanilla nets collapse to 1, Chapter 3)",
      measured=rx["mean"], reference=3.0, tol=0.0, comparison="ge",
      why=f"declared threshold against the one-dimensional collapse of Chapter 3; measured {rx['mean']:.2f} ± {rx['se']:.2f} "
          f"(SE over networks), bounded above by B − 1 = {P['batch'] - 1}",
      source="Labatie 2019, §7 ('many directions of signal variance preserved') and Fig. 5(c)")
print(f"r_eff(x) ResNet / feedforward = {rx['mean'] / rF['mean']:.2f}")

# %% [markdown]
# **A difference from the paper's narrative.** Labatie contrasts the ResNet's well-conditioned
# signal with the feedforward net's. In our fully-connected runs (printed above) the BN
# feedforward signal is *not* collapsed either — its effective rank is of the same order as the
# ResNet's; what does become ill-conditioned in the feedforward nets is the *noise* (Chapter 4).
# We therefore grade only the statement the paper makes about ResNets (several directions
# preserved) and report the ratio. Candidate reasons, not settled here: fully-connected vs
# convolutional layers (the paper's are 3×3 convolutions, whose channel covariance also
# aggregates positions), and the nearly rank-one photo-patch inputs (the ResNet's skip path
# carries the input's conditioning forward, see the data-set comparison below).

# %% [markdown]
# ## Does the data set matter?
#
# Per-unit rates should barely depend on the input; the early growth of χ does, because a nearly
# rank-one input batch (photo patches) is at first badly conditioned (Labatie App. A makes the same
# remark about CIFAR-10's three channels). We compare the exponent and the final χ.

# %%
rows, dq = [], {}
for ds in ["patches", "digits", "gaussian"]:
    dd_, Ad = run(f"data_{ds}", replace(base, dataset=ds, n_sims=P["data_nets"]))
    Qd = panels(Ad)
    dq[ds] = (dd_, Qd)
    p = lb.power_fit(dd_, Qd["chi"], l_min=L_MIN)
    t, tse = lb.tau_prediction(Qd["dff"][:, dd_ >= L_MIN], RD)
    c = lb.summary(np.log(Qd["chi"][:, -1]))
    rows.append({"data": ds, "tau_fit": p["tau"], "se_tau_fit": p["se_tau"], "tau_eq15": t, "se_tau_eq15": tse,
                 "log_chi_L": c["mean"], "se_log_chi_L": c["se"],
                 "r_eff(x^L)": lb.summary(Qd["reff_x"][:, -1])["mean"]})
DT = pd.DataFrame(rows)
fig, ax = plt.subplots(figsize=(5.5, 3.8))
for ds, (dd_, Qd) in dq.items():
    ax.plot(dd_, np.exp(np.log(Qd["chi"]).mean(0)), label=ds)
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("residual unit l")
ax.set_ylabel(r"geometric mean $\chi^l$")
ax.legend()
ch.figure(fig, "datasets",
          "Data dependence (the paper uses CIFAR-10): χ^l of BN ResNets fed photo patches, digits or i.i.d. Gaussian images.",
          arrays={f"{ds}_chi": dq[ds][1]["chi"].mean(0) for ds in dq})
g = DT.set_index("data")
ratio = np.exp(g.loc["patches", "log_chi_L"] - g.loc["gaussian", "log_chi_L"])
ratio_se = ratio * np.hypot(g.loc["patches", "se_log_chi_L"], g.loc["gaussian", "se_log_chi_L"])
print(f"χ^L(patches)/χ^L(gaussian) = {ratio:.2f} ± {ratio_se:.2f}")
ch.claim("data_chi_patches_larger", "photo patches end with a larger χ than i.i.d. Gaussian images (z-score of the log ratio ≥ 3)",
      measured=np.log(ratio) / np.hypot(g.loc["patches", "se_log_chi_L"], g.loc["gaussian", "se_log_chi_L"]),
      reference=3.0, tol=0.0, comparison="ge", why="significance over networks",
      source="SPEC §1 Data (≈2.5× at unit 500, conv); Labatie App. A", min_scale="default")
DT

# %% [markdown]
# ## The convolutional variant

# %%
dc, Ac = run("fig5_conv", replace(base, kernel_size=3, width=P["conv_width"], batch=P["conv_batch"],
                                  depth=P["conv_depth"], records=min(P["records"], P["conv_depth"]),
                                  n_sims=P["conv_nets"]))
Qc = panels(Ac)
lmc = max(2, P["conv_depth"] // 10)
pc = lb.power_fit(dc, Qc["chi"], l_min=lmc)
tc, tcse = lb.tau_prediction(Qc["dff"][:, dc >= lmc], RD)
fig = fig5(dc, Qc, f"BN ResNet, conv 3×3 periodic, N = {P['conv_width']}, B = {P['conv_batch']}", pc, tc)
ch.figure(fig, "fig5_conv",
          f"Labatie, Fig. 5 (a–d), convolutional (3×3 periodic), reduced to N = {P['conv_width']}, B = {P['conv_batch']}, "
          f"{P['conv_depth']} units, {Qc['chi'].shape[0]} networks.",
          arrays={"depth": dc, **Qc})
print(f"conv: τ fit {pc['tau']:.4f} ± {pc['se_tau']:.4f}; Eq. 15 {tc:.4f} ± {tcse:.4f}")
ch.claim("conv_tau_matches_eq15", "convolutional ResNets: free exponent agrees with Eq. 15",
      measured=pc["tau"], reference=tc, tol=3 * float(np.hypot(pc["se_tau"], tcse)), comparison="abs",
      why="3 combined standard errors over networks", source="Labatie 2019, Theorem 4 / Eq. 15", min_scale="default")

# %%
print({k: round(v, 1) for k, v in timings.items()})

# %%
ch.finish()
