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
# # Vanilla networks: log-normal moments, one-dimensional signal, pseudo-linearity
#
# {cite:t}`labatie2019characterizing` follows a random input batch *and* an infinitesimal noise on
# it through a deep network at initialisation, and asks how statistical moments of both evolve
# with depth, network by network. This chapter reproduces his Section 5 on *vanilla* networks —
# ReLU layers with He initialisation {cite:p}`he2015delving`, no batch normalisation, no skip
# connections. Three results: the second moments of signal and noise perform a slow,
# finite-width random walk in log-space, so that across random networks they are nearly
# log-normal with mean log drifting down and variance growing linearly in depth, while their
# expectation stays put (his Fig. 2, Theorem 1); the normalised sensitivity χ grows only slowly,
# its increments tending to one, while the signal collapses onto a single direction (Fig. 3,
# Theorem 2); and the network becomes *pseudo-linear*: almost every unit is either always on or
# always off on the data (the co-activation phenomenon of {cite:t}`balduzzi2017shattered`).
#
# Everything is computed by the book's moments engine (`layerwise.moments`); the statistics are
# in `layerwise.labatie`. Error bars and intervals are over independent random networks.

# %% tags=["parameters", "remove-cell"]
scale = "ci"          # ci | default | paper
seed = 0
device = "auto"       # auto | cpu | cuda
width = None          # Fig. 3 / co-activation: width of the fully-connected nets
batch = None          # batch size B
depth = None          # number of layers after the first random layer
n_nets = None         # networks for Fig. 3 (fully-connected)
hist_width = None     # Fig. 2: width
hist_batch = None     # Fig. 2: batch
hist_nets = None      # Fig. 2: networks
hist_conv_width = None  # Fig. 2, convolutional (the paper's): width, batch, networks
hist_conv_batch = None
hist_conv_nets = None
widths = None         # width study (diffusion vs N)
width_nets = None     # networks per width in the width study
conv_width = None     # the paper's convolutional nets (3×3, periodic; width 512 from `default` on)
conv_batch = None
conv_nets = None
data_nets = None      # networks per data set in the data-set comparison
coact_nets = None     # networks for the co-activation forward pass
block = None          # networks per cached block

# %%
from dataclasses import replace

import numpy as np
import pandas as pd

from layerwise import labatie as lb
from layerwise import published as pub
from layerwise.chapter import Chapter
from layerwise.figures import ch03 as F
from layerwise.moments import MomentsConfig
from layerwise.params import resolve_from

# %%
SCALES = {
    "ci": dict(width=128, batch=32, depth=200, n_nets=8, hist_width=64, hist_batch=32, hist_nets=48,
               hist_conv_width=16, hist_conv_batch=4, hist_conv_nets=8,
               widths=[32, 64, 128], width_nets=48, conv_width=16, conv_batch=8, conv_nets=2,
               data_nets=4, coact_nets=2, block=8),
    "default": dict(width=512, batch=64, depth=200, n_nets=64, hist_width=128, hist_batch=256, hist_nets=400,
                    hist_conv_width=128, hist_conv_batch=16, hist_conv_nets=32,
                    widths=[64, 128, 256, 512], width_nets=100, conv_width=512, conv_batch=64, conv_nets=4,
                    data_nets=24, coact_nets=16, block=32),
    "paper": dict(width=512, batch=64, depth=200, n_nets=200, hist_width=128, hist_batch=1024, hist_nets=10000,
                  hist_conv_width=128, hist_conv_batch=1024, hist_conv_nets=10000,
                  widths=[64, 128, 256, 512], width_nets=1000, conv_width=512, conv_batch=64, conv_nets=1000,
                  data_nets=200, coact_nets=200, block=50),
}
P = resolve_from(SCALES, scale, globals())
ch = Chapter("03_vanilla_pathologies", scale=scale, seed=seed, device=device, params=P)

# %%
L = P["depth"]
base = MomentsConfig(arch="vanilla", kernel_size=1, width=P["width"], batch=P["batch"], depth=L,
                     dataset="patches", n_sims=P["n_nets"], records=L, seed=seed, device=ch.device,
                     reff_locations=("loc1", "loc3"))   # r_eff only where the chapter reads it (layer input, output)


def run(name, cfg):
    # a paper-width conv net takes minutes: blocks of two (one per core), so an interrupted run resumes
    return lb.simulate_cached(ch, name, cfg, block=2 if cfg.kernel_size > 1 and cfg.width >= 256 else P["block"])


for k in [k for k in SCALES["ci"] if k not in ("depth", "widths", "block")]:
    ch.glue(f"p_{k}", int(P[k]))
ch.glue("p_depth", int(L))
ch.glue("p_widths", ", ".join(str(w) for w in P["widths"]))

# %% [markdown]
# ## Set-up
#
# A batch of $B$ natural-image patches (32×32×3 crops of the photographs shipped with scikit-learn
# and matplotlib, standing in for CIFAR-10), each colour channel standardised over batch and
# positions, and an input noise $dx^0$ of i.i.d. $\mathcal N(0,1)$ entries. A first random layer
# ($\mathcal N(0, 1/\text{fan-in})$ weights) maps the image to $N$ channels — a dense layer for the
# fully-connected nets, a 3×3 stride-2 convolution for the convolutional ones — and then $L$ =
# {glue}`p_depth` layers $z^l = W^l x^{l-1}$, $x^l = \mathrm{relu}(z^l)$ with He weights $\mathcal
# N(0, 2/\text{fan-in})$ and no bias carry the signal; the noise follows the linearised map $dz^l =
# W^l dx^{l-1}$, $dx^l = \mathbf 1\{z^l>0\}\odot dz^l$. Moments average over batch, positions and
# channels; the *normalised sensitivity* is $\chi^l =
# \sqrt{\mu_2(dx^l)/\mu_2(x^l)}\,/\,\sqrt{\mu_2(dx^0)/\mu_2(x^0)}$, the factor by which the network
# degrades the signal-to-noise ratio ({cite:t}`labatie2019characterizing`, Eq. 3–4).
#
# **What is reduced at this scale.** The paper's Fig. 2 uses *convolutional* nets of width 128
# with B = 1024 and 10 000 networks, Fig. 3 convolutional width 512, B = 64, 1000 networks. Here
# Fig. 2 uses {glue}`p_hist_nets` fully-connected nets of width {glue}`p_hist_width` with
# B = {glue}`p_hist_batch`; Fig. 3 uses {glue}`p_n_nets` fully-connected nets of width
# {glue}`p_width` with B = {glue}`p_batch`, and {glue}`p_conv_nets` convolutional nets of width
# {glue}`p_conv_width` with B = {glue}`p_conv_batch`. The `paper` scale restores the paper's
# settings (it needs a GPU to finish in reasonable time). The fully-connected case is the $k = 1$
# instance of the same theory ({cite:t}`labatie2019characterizing`, §2).

# %% [markdown]
# ## Fig. 2 — are the log-moments nearly Gaussian?
#
# For each network we take the log-ratios $\log\nu_2(x^l) - \log\nu_2(x^0)$ and
# $\log\mu_2(dx^l) - \log\mu_2(dx^0)$ at $l = L/4, L/2, 3L/4, L$ (here $x^0$ is the output of the
# first random layer, i.e. the input of layer 1). Theorem 1 writes each as a sum over layers of
# small, nearly independent increments, so across networks they should be nearly Gaussian, with a
# mean falling linearly with depth (the drift) and a variance growing linearly (the diffusion).

# %%
hist_cfg = replace(base, width=P["hist_width"], batch=P["hist_batch"], n_sims=P["hist_nets"],
                   reff_signal=False, reff_noise=False)
d2, A2 = run("fig2_hist", hist_cfg)
G = lb.vanilla_log_moments(d2, A2, L, seed=seed)   # Fig. 2, drift, diffusion, conservation, balance
logs, quarters, qi, n2 = G["logs"], G["quarters"], G["qi"], G["n"]
fig = F.log_moment_histograms(logs, quarters, G["fits"])
ch.figure(fig, "fig2_log_moments",
          f"Histograms over {n2} random fully-connected vanilla nets of the log second moments of signal (left) and "
          f"noise (right) at four depths, with Gaussian fits (curves); Labatie, Fig. 2 (width {P['hist_width']}, "
          f"B = {P['hist_batch']}, natural-image patches).",
          arrays={"depth": np.array(quarters), "log_nu2": logs["nu2"][:, qi], "log_mu2dx": logs["mu2dx"][:, qi]})

# %%
lb.log_moment_table(G)

# %% [markdown]
# The table reports, for each depth, mean ± standard error over networks, the spread (variance),
# and two measures of non-Gaussianity. "Nearly Gaussian" is the paper's qualitative word; we make
# it a rule: the largest gap between the distribution function of the log-moment and the Gaussian
# of the same mean and variance (the Kolmogorov–Smirnov distance) is at most 0.05, i.e.
# probabilities read off the Gaussian are right to within five percentage points, and the
# skewness is at most 0.5 in magnitude (a common threshold for "approximately symmetric").
#
# Both rules are about the population of networks, and the sample of {glue}`p_hist_nets` networks
# only brackets it. The sample KS distance is biased upwards (a truly Gaussian population gives
# about $0.6/\sqrt n$ on average), so its interval is not a bootstrap's but a guaranteed one: the
# Dvoretzky–Kiefer–Wolfowitz bound on the sample's distribution function plus the uncertainty of
# the fitted mean and variance (`layerwise.labatie.ks_gaussian_interval`). At l = L the KS
# distances of signal and noise are {glue}`ks_nu2` and {glue}`ks_mu2dx`, with 99 % intervals
# reaching up to {glue}`ks_nu2_hi` and {glue}`ks_mu2dx_hi`: the bound's width alone exceeds 0.05
# below about 1200 networks, so only the `paper` scale can decide "nearly Gaussian". The
# skewnesses are {glue}`skew_nu2` and {glue}`skew_mu2dx` (standard error: the larger of a
# bootstrap over networks and the exact value for a Gaussian sample).

# %%
for key, name in [("nu2", "signal ν₂"), ("mu2dx", "noise μ₂")]:
    k = G["ks"][key][-1]
    ch.glue(f"ks_{key}", k["ks"], digits=2)
    ch.glue(f"ks_{key}_hi", k["hi"], digits=2)
    ch.claim(f"fig2_{key}_nearly_gaussian",
             f"log {name} ratio at l = {L} is nearly Gaussian across networks: KS distance to the Gaussian of the "
             "same mean and variance ≤ 0.05",
             kind="reproduces", measured=k["ks"], interval=(k["lo"], k["hi"]), reference=0.05, tol=0.0,
             comparison="le",
             why="0.05 is the declared meaning of 'nearly' (probabilities read off the Gaussian right to 5 points); the "
                 "interval is a guaranteed 99 % one (DKW bound + fitted mean/variance intervals), since the sample KS "
                 "distance is biased upwards by ≈ 0.6/√n",
             source="Labatie 2019, §5 and Fig. 2 ('nearly Gaussian')",
             alternative=(G["raw_ks"][key], f"the ratio {name} itself (not its log) Gaussian: its KS distance"),
             note=f"the DKW half-width √(ln 400/(2n)) alone is {k['eps_dkw']:.3f} at n = {k['n']} networks; it drops "
                  "below 0.05 only for n ≳ 1200, so the claim is decidable at the `paper` scale (10 000 networks)")

# %%
for key, name in [("nu2", "signal ν₂"), ("mu2dx", "noise μ₂")]:
    skew, se_skew = G["skew"][key]
    ch.glue(f"skew_{key}", skew, se=se_skew, digits=2)
    ch.claim(f"fig2_{key}_skew_small",
             f"log {name} ratio at l = {L} is nearly symmetric across networks: |skewness| ≤ 0.5",
             kind="reproduces", measured=skew, se=se_skew, dof=n2 - 1, reference=0.0, tol=0.5,
             comparison="abs",
             why="0.5 is the declared threshold for approximate symmetry; the standard error is the larger of a "
                 f"bootstrap over the {n2} networks and the exact Gaussian-sample value √(6(n−2)/((n+1)(n+3)))",
             source="Labatie 2019, §5 and Fig. 2 ('nearly Gaussian')",
             alternative=(G["lognormal_skew"][key], "the skewness of the ratio itself (log-normal, measured variance)"),
             note=f"the 99 % interval of a skewness from n = {n2} networks is about ±2.6·√(6/n) = "
                  f"±{2.6 * np.sqrt(6 / n2):.2f} wide; the rule becomes decidable from a few hundred networks")

# %% [markdown]
# ### The paper's convolutional Fig. 2 against the authors' 10 000 networks
#
# The paper's Fig. 2 is drawn from 10 000 *convolutional* nets of width 128 (B = 1024), and the
# authors published the percentiles of both log-moments at its four depths. We run
# {glue}`p_hist_conv_nets` convolutional nets of width {glue}`p_hist_conv_width` with
# B = {glue}`p_hist_conv_batch` photo patches (a channel is still sampled at B × 16 × 16
# positions, so the batch hardly enters the moments; the randomness across networks is that of the
# weights) and compare the two distributions over networks with a two-sample Kolmogorov–Smirnov
# test at the 1 % level: its threshold follows from both sample sizes,
# √(ln(200)/2)·√((n + m)/(nm)), plus 0.01 for rebuilding the authors' distribution function from
# its percentiles ({numref}`fig-03-fig2-conv`). At l = L the distance is {glue}`ks2_nu2` for the
# signal and {glue}`ks2_mu2dx` for the noise, against a threshold of {glue}`ks2_crit`:
# {glue}`ks2_verdict`

# %%
conv2 = replace(base, kernel_size=3, width=P["hist_conv_width"], batch=P["hist_conv_batch"],
                n_sims=P["hist_conv_nets"], reff_signal=False, reff_noise=False)
G2 = lb.vanilla_log_moments(*run("fig2_conv", conv2), L, seed=seed)
pub2 = {k: pub.moment("vanilla_histo", name).percentiles_ln for k, name in
        [("nu2", "nu2_signal_loc3"), ("mu2dx", "mu2_noise_loc3")]}
ours2 = {k: G2["logs"][k][:, G2["qi"]] for k in pub2}
ch.figure(F.log_moment_cdfs(ours2, G2["quarters"], pub2), "fig2_conv",
          f"Distribution over {G2['n']} convolutional vanilla nets (3×3 periodic, width {P['hist_conv_width']}, "
          f"B = {P['hist_conv_batch']}) of the log second moments of signal (left) and noise (right) at four depths, "
          "solid, against the authors' 10 000 networks (width 128, B = 1024, CIFAR-10; their published percentiles), "
          "dashed; Labatie, Fig. 2.",
          arrays={"depth": np.array(G2["quarters"]), **{f"log_{k}": v for k, v in ours2.items()},
                  **{f"authors_percentiles_{k}": v for k, v in pub2.items()}},
          alt="Distribution functions of the log-moments of signal and noise at four depths, ours as steps and the "
              "authors' as dashed curves of the same colour.")

# %% tags=["remove-cell"]
n_pub = pub.moment("vanilla_histo", "nu2_signal_loc3").n
ks2 = {k: pub.ks_versus_published(ours2[k][:, -1], pub2[k][-1], n_pub) for k in pub2}
for k, name in [("nu2", "signal ν₂"), ("mu2dx", "noise μ₂")]:
    ch.glue(f"ks2_{k}", ks2[k]["ks"], digits=3)
    f0 = float(pub.published_cdf(0.0, pub2[k][-1]))   # no diffusion: every network at the mean-field log ratio 0
    ch.claim(f"fig2_conv_{k}_matches_authors",
             f"the distribution over networks of log {name} at l = {L} is that of the authors' 10 000 networks: "
             "two-sample KS distance below its 1 % critical value",
             kind="reproduces", measured=ks2[k]["ks"], reference=ks2[k]["critical"], tol=0.0, comparison="le",
             why=f"a two-sample Kolmogorov–Smirnov test at level 1 % between our n = {ks2[k]['n']} and the authors' "
                 f"m = {ks2[k]['m']} networks, threshold √(ln(2/α)/2)·√((n+m)/(nm)) plus 0.01 for the distribution "
                 "function rebuilt from the published percentiles; the sampling noise of both sides is in the threshold",
             alternative=(max(f0, 1 - f0), "infinite width (no diffusion): all networks at log ratio 0"),
             source="Labatie 2019, Fig. 2; the authors' published arrays (vanilla_histo: conv 3×3, width 128, "
                    "B = 1024, 10 000 networks)", min_scale="default")
ch.glue("ks2_crit", ks2["nu2"]["critical"], digits=3)
_ok = [ks2[k]["ks"] <= ks2[k]["critical"] for k in ks2]
ch.glue("ks2_verdict", "both distributions are indistinguishable from the authors' at this sample size." if all(_ok)
        else ("the noise's matches the authors', the signal's does not." if _ok[1] else
              "the signal's matches the authors', the noise's does not." if _ok[0] else
              "neither distribution matches the authors' at this sample size.")
        + ("" if P["hist_conv_width"] == 128 else " (At this scale the width is reduced, so the comparison is "
           "graded from the default scale on.)"))

# %% [markdown]
# ## Drift, diffusion, and the conservation of the expectation
#
# Because the increments are multiplicative, the expectation $\mathbb E[\nu_2(x^l)]$ can stay
# fixed while its logarithm drifts downwards. He initialisation is designed for exactly that:
# conditionally on layer $l-1$, $\mathbb E\,\nu_2(x^l) = \nu_2(x^{l-1})$ and
# $\mathbb E\,\mu_2(dx^l) = \mu_2(dx^{l-1})$ (the pair $(z, dz)$ is symmetric, so the ReLU keeps
# half of each second moment and the factor 2 of He restores it). By the tower property
# $\mathbb E[\nu_2(x^l)/\nu_2(x^0)] = 1$ at every depth. We measure this conservation where it is
# measurable — one layer at a time, averaging each network's one-layer ratios, whose spread is
# small — and not as the sample mean of $\nu_2(x^L)/\nu_2(x^0)$ over networks: that ratio becomes
# so fat-tailed that a sample of $n$ networks misses its expectation once the variance of its log
# exceeds $\log n$ or so. The dotted curves in {numref}`fig-03-fig2-drift-diffusion` show the log
# of the sample mean of the ratio: at l = L it is {glue}`lme_nu2` for the signal, which
# {glue}`v_lme`. The one-layer measurement gives $\log\mathbb E[m^l/m^{l-1}]$ =
# {glue}`cons_nu2` (signal) and {glue}`cons_mu2dx` (noise): {glue}`v_cons`.
#
# For a log-normal variable, $\mathbb E[e^{Y}] = e^{\mathbb E Y + \mathrm{Var}\,Y/2}$, so
# conservation *and* log-normality together mean **mean of the log = −variance/2**: the decreasing
# mean and increasing variance are "opposing forces" ({cite:t}`labatie2019characterizing`, §5). We
# test that balance as the ratio $-2\,\overline{Y}/s^2_Y$ at l = L, which is 1 for a log-normal law:
# it is {glue}`bal_nu2` (signal) and {glue}`bal_mu2dx` (noise). The drifts are {glue}`drift_nu2` and
# {glue}`drift_mu2dx` per layer and the diffusions {glue}`diff_nu2` and {glue}`diff_mu2dx` per layer
# (slopes through the origin of the mean and variance against l; their errors come from a bootstrap
# over networks, since the depths share their networks).

# %%
dd, cons, bal, lme = G["drift_diffusion"], G["conservation"], G["balance"], G["lme"]
fig = F.drift_diffusion(d2, logs, lme, {k: r["diffusion"] for k, r in dd.items()})
ch.figure(fig, "fig2_drift_diffusion",
          "Mean (±2 SE band) and variance over networks of the log-moments against depth, with −variance/2 (dashed) "
          "and the log of the sample mean of the moment ratio (dotted, left) and the linear diffusion fit (dotted, "
          "right); Labatie, §5 and Fig. 2. Conservation of E[ν₂] under a log-normal law means mean = −variance/2.",
          arrays={"depth": d2, "log_nu2_mean": logs["nu2"].mean(0), "log_nu2_var": logs["nu2"].var(0, ddof=1),
                  "log_mu2dx_mean": logs["mu2dx"].mean(0), "log_mu2dx_var": logs["mu2dx"].var(0, ddof=1),
                  "log_sample_mean_nu2": lme["nu2"][:, 0], "log_sample_mean_mu2dx": lme["mu2dx"][:, 0]})

# %%
ch.glue("lme_nu2", float(lme["nu2"][-1, 0]), digits=2)
for key in ("nu2", "mu2dx"):
    r, cn = dd[key], cons[key]
    ch.glue(f"drift_{key}", r["drift"], se=r["se_drift"])
    ch.glue(f"diff_{key}", r["diffusion"], se=r["se_diffusion"])
    ch.glue(f"cons_{key}", cn["log_mean"], se=cn["se"], digits=2)
    ch.glue(f"bal_{key}", bal[key][0], se=bal[key][1], digits=2)

# %%
for key, name in [("nu2", "signal ν₂"), ("mu2dx", "noise μ₂")]:
    r = dd[key]
    ch.claim(f"drift_{key}_negative", f"the mean of log {name} drifts downwards with depth (drift < 0)",
             kind="reproduces", measured=r["drift"], se=r["se_drift"], dof=n2 - 1, reference=0.0, tol=0.0,
             comparison="le",
             why="a sign: the slope through the origin of the mean log against l, bootstrap SE over networks",
             source="Labatie 2019, Theorem 1 and Fig. 2 ('slowly decreasing negative expectation')",
             alternative=(0.0, "no drift (infinite-width limit)"))
    ch.claim(f"diffusion_{key}_positive", f"the variance of log {name} across networks grows with depth (diffusion > 0)",
             kind="reproduces", measured=r["diffusion"], se=r["se_diffusion"], dof=n2 - 1, reference=0.0, tol=0.0,
             comparison="ge",
             why="a sign: the slope through the origin of the variance against l, bootstrap SE over networks",
             source="Labatie 2019, Theorem 1 and Fig. 2 ('slowly increasing variance')",
             alternative=(0.0, "no diffusion (infinite-width limit: variance 0)"))

# %%
for key, name in [("nu2", "signal ν₂"), ("mu2dx", "noise μ₂")]:
    r = dd[key]
    ch.claim(f"diffusion_{key}_linear",
             f"the variance of log {name} grows linearly in depth: quadratic term at L relative to the line, "
             "|c·L/D| ≤ 0.25",
             kind="predicts", measured=r["curvature_var"], se=r["se_curvature_var"], dof=n2 - 1, reference=0.0,
             tol=0.25, comparison="abs",
             why="0.25 declares 'linear': the quadratic term c of a fit b·l + c·l² adds < 25 % of the line D·l at "
                 "l = L (D the diffusion); a pure l² law gives the ballistic value; bootstrap SE over networks",
             alternative=(r["ballistic"], "ballistic spreading, variance ∝ l² (a fixed rate per network)"),
             source="Labatie 2019, Theorem 1 (constant per-layer diffusion term)",
             note="the quadratic term of a variance measured at four depths on the same networks is poorly "
                  "determined from a few dozen networks")

# %% tags=["remove-cell"]
for key, name in [("nu2", "signal ν₂"), ("mu2dx", "noise μ₂")]:
    cn = cons[key]
    ch.claim(f"conservation_{key}",
             f"E[{name}] is conserved by He initialisation: log of the mean one-layer ratio E[m^l/m^(l−1)] = 0, "
             f"hence E[m^l/m^0] = 1 at every depth",
             kind="checks", measured=cn["log_mean"], se=cn["se"], dof=cn["dof"], reference=0.0, tol=0.01,
             comparison="abs",
             why="He initialisation conserves the expectation exactly; the margin, 1 % per layer, is half the "
                 "typical-value drift of log ν₂ at width 128 (Labatie's Fig. 2: mean ≈ −4 at l = 200, i.e. −2 % per "
                 "layer), so a pass separates the conserved expectation from the drifting typical value; delta-method "
                 "SE over networks of each network's mean one-layer ratio",
             source="Labatie 2019, §5 (He initialisation stabilises ν₂, μ₂ in expectation); He et al. 2015")
    ch.claim(f"lognormal_balance_{key}",
             f"log {name} at l = {L} balances as for a log-normal law with conserved expectation: "
             "−2·mean/variance = 1 (within 10 %)",
             kind="predicts", measured=bal[key][0], se=bal[key][1], dof=n2 - 1, reference=1.0, tol=0.1,
             comparison="rel",
             why="10 % is the declared meaning of 'balance' (the two opposing forces cancel to one digit); "
                 "bootstrap SE over networks",
             source="Labatie 2019, §5 (log-normal expectation e^{μ+σ²/2}; 'opposing forces')",
             alternative=(0.0, "typical value conserved (mean log 0), as at infinite width"),
             note="the variance of a log-moment from a few dozen networks is uncertain by ≳ 20 %, so the balance "
                  "is decidable only from several hundred networks")

# %% [markdown]
# ## How the diffusion depends on the width
#
# The drift and diffusion are finite-width effects ({cite:t}`labatie2019characterizing`, §5: they
# vanish as $N\to\infty$). For a single input through a fully-connected ReLU layer, $\nu_2' / \nu_2
# = (2/N)\sum_i \mathrm{relu}(g_i)^2$ with $g_i$ i.i.d. standard Gaussians, whose variance is
# $(4/N)\,\mathrm{Var}[\mathrm{relu}(g)^2] = (4/N)(3/2 - 1/4) = 5/N$: the diffusion per layer should
# scale like $1/N$. For a batch the constant is smaller while the batch still spans several
# directions, and tends to the single-input value as the signal collapses onto one direction. Over
# widths {glue}`p_widths` ({glue}`p_width_nets` networks each) the measured diffusion scales as
# $N^{\tau}$ with $\tau$ = {glue}`width_exponent`, and $N$ × diffusion is {glue}`width_nd`
# ({numref}`fig-03-width-dependence`).

# %%
runs = {w: run(f"width_{w}", replace(base, width=w, n_sims=P["width_nets"], reff_signal=False, reff_noise=False))
        for w in P["widths"]}
WD = lb.width_diffusion(runs, quarters, seed=seed)
D, Dse, wfit = WD["diffusion"], WD["se"], WD["fit"]
ch.glue("width_exponent", wfit["slope"], se=wfit["slope_se"])
ch.glue("width_nd", ", ".join(f"{x:.2f}" for x in D * np.array(P["widths"])))
fig = F.width_dependence(P["widths"], D, Dse)
ch.figure(fig, "width_dependence",
          "Width times the per-layer diffusion of log ν₂(x) for fully-connected vanilla nets against the width; a "
          "constant means diffusion ∝ 1/N (Labatie, App. A: 'the diffusion gets slower with larger N').",
          arrays={"width": np.array(P["widths"]), "diffusion": D, "se": Dse})

# %%
ch.claim("diffusion_width_exponent", "the diffusion of log ν₂ scales as N^(−1): log-log slope −1 ± 0.25",
         kind="predicts", measured=wfit["slope"], se=wfit["slope_se"], dof=P["width_nets"] - 1, reference=-1.0,
         tol=0.25, comparison="abs",
         why="the margin 0.25 declares which simple power law holds: a pass puts the exponent nearer −1 than −1/2 or "
             "−3/2; SE of the weighted log-log slope from bootstrap SEs (over networks) of each diffusion",
         source="Labatie 2019, §5 ('finite-width effect') and App. A; single-input variance 5/N derived above",
         alternative=(-0.5, "diffusion ∝ N^(−1/2), the next simple power law"),
         note="three widths with a few dozen networks each leave the slope uncertain by about ±0.5 at 99 %")
ch.claim("diffusion_slower_wider", "the diffusion is slower at the largest width than at the smallest",
         kind="reproduces", measured=D[0] - D[-1], se=float(np.hypot(Dse[0], Dse[-1])), dof=P["width_nets"] - 1,
         reference=0.0, tol=0.0, comparison="ge",
         why="a sign: the difference of two independent diffusions with bootstrap SEs over networks",
         source="Labatie 2019, App. A ('the diffusion getting slower with larger N')",
         alternative=(0.0, "width-independent diffusion"))

# %% [markdown]
# ## Fig. 3 — $\delta\chi \to 1$, $r_\mathrm{eff}(x) \to 1$, χ grows slowly
#
# Theorem 2 says the increments $\delta\chi^l = \chi^l/\chi^{l-1}$ of a vanilla net are always
# ≥ 1, and two evolutions are possible: either χ explodes (and then the signal must collapse to a
# point), or the increments tend to one and the signal collapses onto a *line* — its effective
# rank $r_\mathrm{eff}(x^l) = \operatorname{Tr} C / \lambda_{\max}(C)$ (C the channel covariance)
# tends to 1. Labatie observes the second case. In the fully-connected nets
# ({numref}`fig-03-fig3-fc`) the mean increment is {glue}`fc_dchi_early` over the first 10 layers
# and {glue}`fc_dchi_late` over the last quarter, $r_\mathrm{eff}(x^L)$ =
# {glue}`fc_reff_late` and $\log_{10}\chi^L$ = {glue}`fc_log10chi`.

# %%
d3, A3 = run("fig3_fc", base)
S3 = lb.sensitivity_study(d3, A3, L)
fig = F.sensitivity(d3, S3["dchi"], A3["chi_loc3"], A3["reff_signal_loc3"])
ch.figure(fig, "fig3_fc",
          f"Increments δχ, sensitivity χ and effective rank of the signal against depth for {A3['chi_loc3'].shape[0]} "
          f"fully-connected vanilla nets (N = {P['width']}, B = {P['batch']}; mean and 10–90 % band over networks); "
          "Labatie, Fig. 3 (fully-connected variant).",
          arrays={"depth": d3, "dchi": S3["dchi"], "chi": A3["chi_loc3"], "reff_x": A3["reff_signal_loc3"]})


# %%
def fig3_increment_claims(tag, S, min_scale="ci"):
    """Claims and glue on the increments δχ of Fig. 3(a), for the run tagged ``tag``."""
    n, e_early, e_late, e_drop = S["n"], S["early"], S["late"], S["drop"]
    ch.glue(f"{tag}_dchi_early", e_early.mean, se=e_early.se, digits=4)
    ch.glue(f"{tag}_dchi_late", e_late.mean, se=e_late.se, digits=4)
    ch.claim(f"{tag}_dchi_ge_1", "δχ ≥ 1 (Theorem 2) even where it approaches 1: mean increment over the last "
             "quarter of depth ≥ 1",
             kind="predicts", measured=e_late.mean, se=e_late.se, dof=e_late.dof, reference=1.0, tol=0.0,
             comparison="ge", why=f"a bound, no margin; SE over {n} networks",
             source="Labatie 2019, Theorem 2", min_scale=min_scale,
             alternative=(1.0, "δχ = 1, χ constant (the infinite-width value), at the bound"),
             note="δχ tends to 1, so in the last quarter its excess over 1 is small against the spread over a few "
                  "networks; the bound is tested, not confirmed, until the interval is tight")
    ch.claim(f"{tag}_dchi_to_1",
             "δχ → 1: the excess δχ − 1 in the last quarter is below half its value in the first 10 layers",
             kind="reproduces", measured=e_drop.mean, se=e_drop.se, dof=e_drop.dof, reference=0.0, tol=0.0,
             comparison="le",
             why="the rule (the excess at least halves) is declared; paired difference per network, SE over "
                 f"{n} networks",
             source="Labatie 2019, Fig. 3(a) and Theorem 2", min_scale=min_scale,
             alternative=(0.5 * (e_early.mean - 1), "δχ kept at its first-10-layer value (exponential growth)"))


# %%
def fig3_shape_claims(tag, S, min_scale="ci", chi_note=""):
    """Claims and glue on the signal's rank and the growth of χ (Fig. 3(b)); returns log10 χ^L's estimate."""
    n, r, c = S["n"], S["reff"], S["log10chi"]
    ch.glue(f"{tag}_reff_late", r.mean, se=r.se)
    ch.glue(f"{tag}_log10chi", c.mean, se=c.se)
    ch.claim(f"{tag}_reff_to_1", f"r_eff(x^{L}) → 1: one-dimensional signal (mean r_eff ≤ 1.5)",
             kind="reproduces", measured=r.mean, se=r.se, dof=r.dof, reference=1.5, tol=0.0, comparison="le",
             why=f"1.5 declared: less than half a second direction; SE over {n} networks (photo patches enter "
                 "nearly rank one, so 'no collapse' may lie inside the bound: the Gaussian-input claim decides it)",
             source="Labatie 2019, §5 and Fig. 3(b)", min_scale=min_scale,
             alternative=(S["reff_first"].mean, "no collapse: r_eff of the signal at the first record"))
    ch.claim(f"{tag}_chi_slow", f"χ grows slowly: log10 χ^{L} between 0 and 1 (χ^{L} between 1 and 10)",
             kind="reproduces", measured=c.mean, se=c.se, dof=c.dof, reference=(0.0, 1.0), comparison="between",
             why="a bracket read off the paper's Fig. 3 (exponential growth, as in Chapter 4, would give χ ≫ 10); "
                 f"SE of the mean log10 χ over {n} networks",
             source="Labatie 2019, Fig. 3 and §5", min_scale=min_scale, note=chi_note,
             alternative=(L * np.log10(S["early"].mean), f"δχ kept at its first-10-layer value over {L} layers"))
    return c


fig3_increment_claims("fc", S3)
fig3_shape_claims("fc", S3, chi_note="log10 χ^L spreads by several tenths across networks, so a handful of "
                                     "networks cannot place its mean inside the bracket")

# %% [markdown]
# ### The paper's convolutional nets
#
# The paper's own experiment is convolutional: 3×3 kernels with periodic boundary conditions on
# 16×16 feature maps, width 512, B = 64. From the `default` scale on we run exactly that
# ({glue}`p_conv_nets` networks of width {glue}`p_conv_width`, B = {glue}`p_conv_batch`; a record
# every eighth layer, as the effective ranks cost as much as the layers), and overlay the curves the authors published for two variants of it —
# symmetric and zero-padding boundaries, 200 networks each (`layerwise.published`); their periodic
# run was published as a figure only ({numref}`fig-03-fig3-conv`). {glue}`v_conv_graded`
#
# The mean $\log_{10}\chi^L$ of our nets is {glue}`conv_log10chi`, which {glue}`conv_chi_verdict`
# the paper's bracket (χ between 1 and 10); the authors' variants end at {glue}`pub_vanilla_chi`.
# Their effective rank at l = L is {glue}`pub_vanilla_reff` (symmetric and zero padding: a boundary
# that breaks the translation symmetry keeps a second direction alive), ours {glue}`conv_reff_late`.
# At widths below the paper's, χ grows faster: each layer's increment exceeds 1 by a finite-width
# amount that shrinks as N grows, which is why the bracket is graded at the paper's width only.

# %%
dc, Ac = run("fig3_conv", replace(base, kernel_size=3, width=P["conv_width"], batch=P["conv_batch"],
                                  n_sims=P["conv_nets"], records=L // 8, reff_noise=False,
                                  reff_locations=("loc3",)))   # r_eff only where the figure reads it
Sc = lb.sensitivity_study(dc, Ac, L)
vanilla_refs = {"authors, symmetric": pub.fig3_reference("vanilla_symmetric", max_depth=L),
                "authors, zero padding": pub.fig3_reference("vanilla_zero_padding", max_depth=L)}
fig = F.sensitivity(dc, Sc["dchi"], Ac["chi_loc3"], Ac["reff_signal_loc3"], references=vanilla_refs)
ch.figure(fig, "fig3_conv",
          f"Increments δχ, sensitivity χ and effective rank of the signal against depth for {Ac['chi_loc3'].shape[0]} "
          f"convolutional vanilla nets (3×3 periodic, width {P['conv_width']}, B = {P['conv_batch']}; mean and 10–90 % "
          "band), with the authors' published curves for symmetric (dashed) and zero-padding (dotted) boundaries, "
          "200 networks each; Labatie, Fig. 3.",
          arrays={"depth": dc, "dchi": Sc["dchi"], "chi": Ac["chi_loc3"], "reff_x": Ac["reff_signal_loc3"]})
_pv = {v: (pub.moment(v, "chi_loc3").mean_log10[-1], pub.moment(v, "reff_signal_loc3").mean[-1])
       for v in ("vanilla_symmetric", "vanilla_zero_padding")}
ch.glue("pub_vanilla_chi", " and ".join(f"log₁₀ χ = {c:.2f}" for c, _ in _pv.values()))
ch.glue("pub_vanilla_reff", " and ".join(f"{r:.2f}" for _, r in _pv.values()))
fig3_increment_claims("conv", Sc, min_scale="default")
cc = fig3_shape_claims("conv", Sc, min_scale="default",
                       chi_note=f"log10 χ^L spreads by {pub.moment('vanilla_symmetric', 'chi_loc3').std_log10[-1]:.2f} "
                          "between networks (the authors' 200 networks, symmetric boundaries), so a few networks "
                          "leave a t interval wider than the bracket")
ch.glue("conv_chi_verdict", "lies inside" if 0 <= cc.mean <= 1 else ("lies above" if cc.mean > 1 else "lies below"))

# %% [markdown]
# ## Pseudo-linearity: co-activation of the units
#
# If δχ → 1 while the moments stay bounded, each additional layer must act on the data almost as a
# *linear* map ({cite:t}`labatie2019characterizing`, §5 and D.9). A ReLU layer is linear on a data
# set exactly when every unit is either active on all of it or inactive on all of it. The engine
# records moments, not activation patterns, so `layerwise.labatie.vanilla_coactivation` repeats the
# same forward pass and records, for each unit (channel), the fraction $p$ of (image, position)
# pairs on which it is active. {numref}`fig-03-coactivation` plots the fraction of units with
# $p\in\{0,1\}$ and the linearity index $1 - 4\,\overline{p(1-p)}$ (1 for a linear layer, 0 when
# every unit splits the data in half). The always-on/off fraction is {glue}`coact_early` at
# l = 10 and {glue}`coact_late` at l = L, and the linearity index at l = L is {glue}`lin_late`
# ({glue}`p_coact_nets` networks).

# %%
CA = ch.cached_call(lb.vanilla_coactivation, name="coact_k1", kernel_size=1, width=P["width"], batch=P["batch"],
                    depth=L, n_nets=P["coact_nets"], dataset="patches", record_every=5, seed=seed)
fig = F.coactivation(CA)
ch.figure(fig, "coactivation",
          "Fraction of units always active or always inactive over the batch, and linearity index, against depth for "
          f"fully-connected vanilla nets (N = {P['width']}, B = {P['batch']}, {CA['coactive'].shape[0]} networks, "
          "±2 SE); Labatie §5 (pseudo-linearity; Balduzzi et al. 2017).",
          arrays=dict(CA))
T = lb.coactivation_trend(CA, early=10)
e_grow, e_lin = T["growth"], T["linearity"]
ch.glue("coact_early", T["early"].mean, se=T["early"].se)
ch.glue("coact_late", T["late"].mean, se=T["late"].se)
ch.glue("lin_late", e_lin.mean, se=e_lin.se)
ch.claim("coactivation_grows", f"the fraction of always-on/off units grows with depth (l = 10 → {L})",
         kind="reproduces", measured=e_grow.mean, se=e_grow.se, dof=e_grow.dof, reference=0.0, tol=0.0,
         comparison="ge", why="a sign: paired difference per network, SE over networks",
         source="Labatie 2019, §5 (co-activation; Balduzzi et al. 2017)", alternative=(0.0, "no growth with depth"),
         note=f"with {e_grow.n} networks the t quantile has {e_grow.dof} degree(s) of freedom")
ch.claim("pseudo_linear", f"pseudo-linearity at l = {L}: linearity index ≥ 0.9",
         kind="reproduces", measured=e_lin.mean, se=e_lin.se, dof=e_lin.dof, reference=0.9, tol=0.0, comparison="ge",
         why="0.9 declared: units split the data on average at most 1/40 of the time, p(1−p) ≤ 0.025; SE over networks",
         source="Labatie 2019, §5 ('convergence to pseudo-linearity'), D.9",
         alternative=(T["linearity_first"].mean, f"the index at the first record, l = {CA['depth'][0]}"),
         note=f"with {e_lin.n} networks the t quantile has {e_lin.dof} degree(s) of freedom")

# %% [markdown]
# ## Does the data set matter?
#
# Photo patches standardised per colour channel are nearly rank one as a batch (their brightness
# dominates), whereas i.i.d. Gaussian pixels span as many directions as there are images. The
# *per-layer* rates should barely care, but quantities accumulated from the input can. We repeat
# the fully-connected Fig. 3 run with handwritten digits (8×8, flattened; the paper tried MNIST)
# and Gaussian images ({glue}`p_data_nets` networks each). The effective rank of the signal
# entering layer 1 is {glue}`data_ratio` times larger with Gaussian images than with patches;
# {glue}`v_data` ({numref}`fig-03-datasets`).

# %%
dsets = {ds: run(f"data_{ds}", replace(base, dataset=ds, n_sims=P["data_nets"])) for ds in ["patches", "digits", "gaussian"]}
rows = lb.dataset_estimates(dsets, L)
fig = F.datasets(dsets)
ch.figure(fig, "datasets",
          "Sensitivity χ, effective rank and drift of log ν₂ against depth for fully-connected vanilla nets fed "
          "natural-image patches, digits or i.i.d. Gaussian images (the paper uses CIFAR-10 and tried MNIST, App. A).",
          arrays={f"{ds}_{k}": dsets[ds][1][k].mean(0) for ds in dsets for k in ["chi_loc3", "reff_signal_loc3"]})
pd.DataFrame({ds: {k: f"{e.mean:.3f} ± {e.se:.3f}" for k, e in r.items()} for ds, r in rows.items()}).T.rename_axis("data")

# %%
ratio, se_ratio = lb.ratio_of_means(dsets["gaussian"][1]["reff_signal_loc1"][:, 0], dsets["patches"][1]["reff_signal_loc1"][:, 0])
ch.glue("data_ratio", ratio, se=se_ratio, digits=2)
ch.claim("data_reff_input_differs",
         "patches enter much less well-conditioned than Gaussian images: r_eff(x⁰) ratio Gaussian/patches ≥ 3",
         kind="checks", measured=ratio, se=se_ratio, dof=P["data_nets"] - 1, reference=3.0, tol=0.0, comparison="ge",
         why="declared factor: the photo batch is dominated by brightness (rank ≈ 1) while i.i.d. pixels span "
             "many directions; delta-method SE of the ratio of two independent means over networks",
         source="ours: the input data of this book (Set-up), a design fact the data-set comparison relies on")
for ds, kind, src in [("digits", "reproduces", "Labatie 2019, App. A (MNIST: 'an equivalent behaviour')"),
                      ("gaussian", "predicts", "Labatie 2019, Theorem 2 (one-dimensional signal whatever the input)")]:
    r = rows[ds][f"r_eff(x^{L})"]
    ch.claim(f"data_{ds}_reff_to_1", f"with {ds} inputs too the signal becomes one-dimensional: r_eff(x^{L}) ≤ 1.5",
             kind=kind, measured=r.mean, se=r.se, dof=r.dof, reference=1.5, tol=0.0, comparison="le",
             why="same declared threshold as for patches; SE over networks", source=src,
             alternative=(rows[ds]["r_eff(x⁰)"].mean, f"no collapse: r_eff of the {ds} input x⁰"))

# %% [markdown]
# ## What we found
#
# {glue}`found_summary`
#
# - **Fig. 2.** Across {glue}`p_hist_nets` networks the mean log second moments drift by
#   {glue}`drift_nu2` per layer (signal) and {glue}`drift_mu2dx` (noise), and their variance grows
#   by {glue}`diff_nu2` and {glue}`diff_mu2dx` per layer; {glue}`v_cons`. {glue}`v_gauss`
#   {glue}`v_balance`
# - **Width.** {glue}`v_width` The fitted exponent of the diffusion is {glue}`width_exponent`
#   (the single-input theory gives −1).
# - **Fig. 3.** In the fully-connected nets δχ is {glue}`fc_dchi_early` over the first 10 layers
#   and {glue}`fc_dchi_late` over the last quarter, $r_\mathrm{eff}(x^L)$ = {glue}`fc_reff_late`
#   and $\log_{10}\chi^L$ = {glue}`fc_log10chi`: {glue}`v_fig3` The convolutional
#   nets reach $\log_{10}\chi^L$ = {glue}`conv_log10chi`.
# - **Pseudo-linearity.** At depth L a fraction {glue}`coact_late` of the units is always on or
#   always off and the linearity index is {glue}`lin_late`: {glue}`v_coact`
# - **Data.** {glue}`v_data_cap`.
#
# Paper results reproduced at this scale: {glue}`found_repro_pass`. Paper results this scale
# does not decide or reach: {glue}`found_repro_open`.

# %%
verdict = ch.verdict   # a sentence that matches the outcomes of the claims at this scale
ch.glue("v_lme", "is far below 0: the sample misses the fat tail that carries the expectation"
        if lme["nu2"][-1, 0] + 2.6 * lme["nu2"][-1, 1] < 0 else "is still compatible with 0 within its error")
ch.glue("v_cons", verdict(["conservation_nu2", "conservation_mu2dx"],
                          "the expectation is conserved to within 1 % per layer, while the typical value drifts",
                          "the expectation is not conserved to within 1 % per layer",
                          "this run cannot yet decide conservation to within 1 % per layer"))
ch.glue("v_gauss", verdict(["fig2_nu2_nearly_gaussian", "fig2_mu2dx_nearly_gaussian", "fig2_nu2_skew_small",
                            "fig2_mu2dx_skew_small"],
                           "The log-moments are nearly Gaussian by our rule (KS ≤ 0.05, |skewness| ≤ 0.5).",
                           "By our rule (KS ≤ 0.05, |skewness| ≤ 0.5) the log-moments are not nearly Gaussian.",
                           "Whether they are nearly Gaussian (KS ≤ 0.05, |skewness| ≤ 0.5) this number of "
                           "networks cannot decide."))
ch.glue("v_balance", verdict(["lognormal_balance_nu2", "lognormal_balance_mu2dx"],
                             "Mean and variance balance as for a log-normal law (−2·mean/variance within 10 % of 1).",
                             "Mean and variance do not balance as for a log-normal law (−2·mean/variance is not "
                             "within 10 % of 1).",
                             "The log-normal balance −2·mean/variance = 1 (within 10 %) is not decided at this scale."))

# %%
ch.glue("v_width", verdict(["diffusion_slower_wider"], "The diffusion is slower at larger width.",
                           "The diffusion is not slower at larger width.",
                           "Whether the diffusion is slower at larger width is not decided at this scale."))
ch.glue("v_fig3", verdict(["fc_dchi_to_1", "fc_reff_to_1", "fc_chi_slow"],
                          "δχ → 1, a one-dimensional signal and slow growth of χ, as in the paper's Fig. 3.",
                          "not every feature of the paper's Fig. 3 (δχ → 1, effective rank → 1, χ between 1 and 10) holds.",
                          "δχ → 1 and effective rank → 1 hold, and the rest (χ between 1 and 10) is not "
                          "decided at this scale." if ch.status("fc_dchi_to_1") == ch.status("fc_reff_to_1") == "pass"
                          else "not every feature of the paper's Fig. 3 is decided at this scale."))
ch.glue("v_coact", verdict(["coactivation_grows", "pseudo_linear"],
                           "the nets become pseudo-linear, as Labatie predicts.",
                           "the nets do not become pseudo-linear by our rule.",
                           "pseudo-linearity (linearity index ≥ 0.9) is not decided from this number of networks."))
_data = verdict(["data_digits_reff_to_1", "data_gaussian_reff_to_1"],
                "with digits and Gaussian inputs too the signal ends up one-dimensional",
                "with some inputs the signal does not end up one-dimensional",
                "whether the signal ends up one-dimensional with every input is not decided at this scale")
ch.glue("v_data", _data)
ch.glue("v_data_cap", _data[0].upper() + _data[1:])
ch.glue("v_conv_graded", "Its claims are graded at this scale." if ch.status("conv_chi_slow") != "skipped"
        else f"Its claims are graded from the default scale on ({P['conv_nets']} networks are too few here).")
_rep = ch.outcomes("reproduces")
ch.glue("found_repro_pass", ", ".join(_rep["pass"]) or "none")
ch.glue("found_repro_open", ", ".join(f"{i} ({s})" for s in ("fail", "inconclusive", "skipped") for i in _rep[s]) or "none")
ch.glue("found_summary", ch.ledger.summary())

# %% [markdown]
# ## Scorecard

# %%
ch.finish()
