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
# # Batch-normalised ResNets: power laws instead of exponentials
#
# {doc}`04_bn_exploding_sensitivity` showed that a batch-normalised feedforward net multiplies its
# sensitivity χ by a roughly constant factor per layer. {cite:t}`labatie2019characterizing`
# (§7, Theorem 4) shows that skip connections break this multiplicativity. In a pre-activation
# residual unit the branch still amplifies χ as a feedforward net would, but its output is
# *diluted* into the skip path, whose signal variance grows linearly with the number of units:
# unit l contributes a fraction ~1/l of the signal. The result is a power law with an exponent
# fixed by the feedforward increment inside the units,
#
# $$
# \chi^l \propto l^{\tau}, \qquad \tau = \frac{(\mathbb{E}\,\delta\chi)^{2d} - 1}{2},
# $$ (eq-05-power-law)
#
# with $\mathbb{E}\,\delta\chi$ the mean increment of χ per layer inside the units and $d$ the
# number of layers per residual unit (the paper's Eq. 15) — the ResNet's evolution is the
# logarithmic version of the feedforward one. And the signal stays healthy: many directions, a
# distribution close to Gaussian. This chapter reproduces the paper's Fig. 5 and its overlay of Eq.
# 15 on the measured χ, and grades its fully-connected ResNets against the authors' own
# fully-connected ResNets of the same width, batch and depth.

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

# %% tags=["remove-cell"]
from dataclasses import replace

import numpy as np

from layerwise import labatie, stats
from layerwise.chapter import Chapter
from layerwise.figures import ch05 as figures
from layerwise.moments import MomentsConfig
from layerwise.params import resolve_from
from layerwise.studies import ch05 as study
from layerwise.tables import estimate_formats

SCALES = {
    "ci": dict(width=64, batch=16, depth=100, res_depth=2, n_nets=6, records=50, ff_depth=100,
               conv_width=8, conv_batch=4, conv_depth=20, conv_nets=1, data_nets=3, block=8),
    "default": dict(width=512, batch=64, depth=500, res_depth=2, n_nets=48, records=100,
                    ff_depth=200, conv_width=32, conv_batch=8, conv_depth=500, conv_nets=4,
                    data_nets=12, block=16),
    "paper": dict(width=512, batch=64, depth=500, res_depth=2, n_nets=200, records=500,
                  ff_depth=200, conv_width=512, conv_batch=64, conv_depth=500, conv_nets=1000,
                  data_nets=200, block=50),
}
params = resolve_from(SCALES, scale, globals())
ch = Chapter("05_resnet_power_laws", scale=scale, seed=seed, device=device, params=params)

# %% tags=["remove-cell"]
L = params["depth"]
RD = params["res_depth"]
L_MIN = max(2, L // 10)   # power-law fits start after the input-dependent transient
base = MomentsConfig(arch="bn_res", kernel_size=1, width=params["width"], batch=params["batch"],
                     depth=L, res_depth=RD, dataset="patches", n_sims=params["n_nets"],
                     records=params["records"], seed=seed, device=ch.device,
                     reff_locations=("loc3",))   # r_eff where Fig. 5(c) reads it


def run(name, cfg):
    """The engine for ``cfg`` through the store: ``(depth, arrays)``."""
    return ch.simulate_moments(name, cfg, block=params["block"])


#: Kurtosis μ₄ of the BN output in the first layer of unit l, read off the paper's Fig. 5(d)
#: (centre of the dotted curve, axis calibrated on its grid lines: 29 px per unit of μ₄, so ±0.05
#: per 1.5 px).
FIG5D_MU4 = {10: 3.57, 20: 3.60, 50: 3.67, 100: 3.73, 200: 3.81, 300: 3.87, 400: 3.91, 500: 3.96}
#: Fig. 5(b): the overlay coincides with χ within a line width, ≤ 8 % of χ from l = 50.
OVERLAY_MARGIN = 0.10
#: The exponent's margin against the authors' nets (5 %): see the claim's `why`.
TAU_MARGIN = 0.05
CONV_REDUCED = (params["conv_width"], params["conv_batch"]) != (512, 64)


# %% [markdown]
# ## Set-up
#
# Inputs, first random layer and initialisation as in {doc}`03_vanilla_pathologies` and
# {doc}`04_bn_exploding_sensitivity`. Each of the L residual units
# is a pre-activation unit {cite:p}`he2016identity`: $h \leftarrow x$, then `res_depth` times
# $h \leftarrow W\,\mathrm{relu}(\mathrm{BN}(h))$, and $x' = x + h$ (noise likewise, to first
# order). Moments are taken at the unit input (loc1), after the first BN (loc2), after the first
# ReLU (loc3), after the first weights (loc4) and after the addition (loc5) — the authors'
# locations (their `models.py`); as in their Fig. 5, χ is read after the addition, the effective
# ranks after the first ReLU and the kurtosis after the first BN. The *feedforward
# increment* of one layer inside a unit is $\delta\chi = \chi(\text{loc4})/\chi(\text{loc1})$: the
# same BN → ReLU → weights step as a layer of {doc}`04_bn_exploding_sensitivity`, seen from its
# pre-activation side.
#
# The paper's Fig. 5 shows convolutional nets (3×3, width 512, B = 64, 500 units of 2 layers, 1000
# networks, CIFAR-10). The authors also published the same experiment with *fully-connected* nets
# (width 512, B = 64, 500 units of 2 layers, 200 networks, CIFAR-10; array `bn_res_fc` of their
# repository): the reference our fully-connected nets are graded against. Ours run at width
# {glue}`res_width`, batch {glue}`res_batch` and {glue}`res_units` units (the authors' 512, 64 and
# 500 from the `default` scale on) on photo patches, as CIFAR-10 is not available offline; the
# convolutional variant is {glue}`conv_size_words`. Every error below is a standard error over
# independent random networks.

# %% tags=["remove-cell"]
ch.glue_all({"res_width": params["width"], "res_batch": params["batch"], "res_units": L})
ch.glue("conv_size_words", "reduced for the CPU (see its section)" if CONV_REDUCED else
        "at the paper's width and batch")

# %% [markdown]
# ## The power law and Eq. 15
#
# {numref}`fig-05-fig5-fc` is the paper's Fig. 5 for fully-connected ResNets. The paper's panel (b)
# overlays $l^\tau$, with τ from the paper's Eq. 15 (our {eq}`eq-05-power-law`) and the feedforward
# increment "averaged over the whole evolution", on the measured χˡ and concludes that "Eq. (15)
# very well describes the evolution of χ in practice" (§7). Theorem 4 itself bounds χ between two
# power laws with unspecified constants; it does not claim that a free fit of the exponent equals τ.
# We therefore grade the overlay as the paper draws it: over units l ≥ {glue}`res_lmin`, $c\,l^\tau$
# with the Eq. 15 exponent τ = {glue}`tau_eq15` and a fitted constant c stays within
# {glue}`overlay_max_dev` of the geometric mean of χˡ at its worst unit (the paper's overlay
# coincides within a line width, which is at most about 8 % of χ from l = 50 on; we declare 10 % as
# "describes"). {glue}`overlay_verdict`
#
# As a measurement, the free log-log exponent fitted network by network over the same units is
# $\tau_\mathrm{fit}$ = {glue}`tau_fit`, {glue}`tau_distance` combined standard errors from the Eq.
# 15 value; log χ is linear in log l with R² = {glue}`res_r2`. The feedforward increment inside the
# units is δχ = {glue}`dff_mean` (the paper's Fig. 5(a): about 1.2): the branch alone would explode.

# %%
fc_depth, fc_arrays = run("fig5_fc", base)
fc_panels = labatie.bn_res_panels(fc_arrays)
fig5 = study.fig5_summary(fc_depth, fc_panels, RD, L_MIN, seed=seed)
overlay = fig5["overlay"]
like = study.matches_authors(params)   # then the authors' fully-connected nets are drawn too
fig = figures.fig5(fc_depth, fc_panels, f"BN ResNet, fully-connected, N = {params['width']}, "
                   f"B = {params['batch']}, {RD} layers per unit", fig5["power_fit"], overlay,
                   reference=study.authors_fig5_reference() if like else None)
ch.figure(fig, "fig5_fc",
          "Increments, power-law growth, conditioning and tails in fully-connected BN ResNets "
          f"(Labatie, Fig. 5 (a–d), fully-connected variant), {fc_panels['chi'].shape[0]} "
          "networks: (a) increments of χ inside the first layer of each unit; (b) χˡ on log-log "
          "axes with the free power-law fit (dashed) and c·l to the power τ, with τ from Eq. 15 "
          "and a fitted constant (dotted), as in the paper's panel; (c) effective ranks after the "
          "first ReLU; (d) kurtosis and ν₁(|y|) after the first BN."
          + (" Dashed over grey 10–90 % bands: the authors' fully-connected nets (same N, B and "
             "depth, CIFAR-10, 200 networks)." if like else ""),
          arrays={"depth": fc_depth, **fc_panels, "overlay_depth": overlay["depth"],
                  "overlay_rel_dev": overlay["rel_dev"]},
          alt="Four panels against the residual unit for fully-connected BN ResNets: increments of "
              "χ inside the units above 1, χ on log-log axes with the free fit and the Eq. 15 "
              "overlay, effective ranks of signal and noise, and kurtosis and mean absolute value "
              "after the first BN.")

# %% tags=["remove-cell"]
low, high = (100 * x for x in overlay["interval"])
ch.glue_all({"res_lmin": L_MIN, "tau_eq15": fig5["tau_eq15"],
             "tau_fit": (fig5["power_fit"]["tau"], fig5["power_fit"]["se_tau"])})
ch.glue("overlay_max_dev",
        f"{100 * overlay['max_dev']:.1f} % (99 % bootstrap interval {low:.1f}–{high:.1f} %)")
ch.glue("tau_distance", fig5["tau_distance"], digits=2)
ch.glue("res_r2", fig5["r2"]["r2_linear_in_log_l"], digits=4)
ch.glue_all({"dff_mean": fig5["dff"]}, digits=4)

# %% tags=["remove-cell"]
EXPONENTIAL = "the best exponential c·exp(r·l) (the feedforward law)"
OVERLAY = ("c·l to the power τ, with τ from Eq. 15 and a fitted constant, describes χˡ: largest "
           "relative deviation ≤ 10 %")   # the statement of the fully-connected and conv nets
ch.claim("eq15_overlay", OVERLAY, case=f"fully-connected ResNets, units {L_MIN}–{L}",
         kind="reproduces", measured=study.overlay_deviation(overlay, fc_panels["chi"].shape[0]),
         reference=OVERLAY_MARGIN, tol=0.0, comparison="le",
         alternative=(overlay["exp_max_dev"], EXPONENTIAL),
         why="the paper's overlay coincides with χ within a line width (≤ 8 % of χ from l = 50); "
             "τ, the constant and the curve are refitted in each bootstrap resample",
         source="Labatie 2019, §7 'Experimental verification' and Fig. 5(b)", min_scale="default",
         note="the ci nets (N = 64, B = 16, 100 units) are not in Eq. 15's regime: 60 of them "
              "deviate by 25 % (15–35 %; τ of Eq. 15 = 1.14 ± 0.02, free 1.00 ± 0.01)",
         caveat=f"{fc_panels['chi'].shape[0]} networks leave a wide interval, and the increment "
                f"inside the units still drifts over {L} units (next section)")

# %% tags=["remove-cell"]
ch.glue("overlay_verdict", "The claim is graded from the `default` scale on: the reduced nets here "
        "are not in Eq. 15's regime (scorecard note)."
        if ch.status("eq15_overlay") == "skipped" else
        ch.verdict(["eq15_overlay"],
                   "The whole interval lies within the 10 %: the overlay describes χ as in the "
                   "paper.",
                   "The whole interval lies beyond the 10 %: at this scale the overlay does not "
                   "describe χ as well as in the paper.",
                   "The interval straddles the 10 %, so at this scale the comparison is "
                   "inconclusive: too few networks to pin the worst deviation down, and an "
                   "increment inside the units that still drifts (next section)."))

# %% tags=["remove-cell"]
ch.claim("dff_gt_1", "the feedforward increment inside the units is at least 1: the branch alone "
         "would explode", kind="predicts", measured=fig5["dff"], reference=1.0, tol=0.0,
         comparison="ge", alternative=(1.0, "δχ = 1: a branch that would not explode"),
         why="Theorem 3's bound applied inside the units", source="Labatie 2019, §7 and App. F.1")

# %% [markdown]
# ### Where the exponents are measured matters
#
# Theorem 4 is a statement about the asymptotic regime. At the depths we can simulate the
# feedforward increment inside the units may still drift, so the exponent Eq. 15 gives depends on
# the window of units over which δχ is averaged. The table after {numref}`fig-05-fig5-fc` computes
# the Eq. 15 exponent over successive windows, beside the free exponent (the local slope of log χ
# against log l) and their difference in combined standard errors. From the first window to the
# last, the Eq. 15 exponent goes from {glue}`win_eq15_first` to {glue}`win_eq15_last`. A
# `paper`-scale run narrows the error bars; only more depth removes a drift. The script
# `benchmarks/labatie_spot_checks.py` runs deeper ResNets and the convolutional ones at the paper's
# settings on a GPU, for a reader who wants to follow the windows further.

# %%
windows = study.exponent_windows(fc_depth, fc_panels["chi"], fc_panels["dff"], RD, L_MIN, L,
                                 n_windows=4)
ch.table(windows, "The power-law exponent of χ fitted freely over successive windows of units, "
         "against the exponent predicted from the measured increments (Eq. 15; Labatie 2019, "
         "§7), and their difference in combined standard errors; standard errors over networks.",
         formatter=estimate_formats(windows))

# %% tags=["remove-cell"]
for end, row in [("first", 0), ("last", -1)]:
    ch.glue_all({f"win_eq15_{end}": (windows["Eq. 15 τ"].iloc[row],
                                     windows["s.e. (Eq. 15)"].iloc[row])}, digits=4)

# %% [markdown]
# ## Against the authors' fully-connected ResNets, input by input
#
# The authors' fully-connected ResNets have our width, batch and depth but are fed CIFAR-10; ours
# are fed photo patches (32 × 32 crops of two photographs, so that a batch is nearly rank one) and,
# to measure what the input does rather than guess it, handwritten digits and i.i.d. Gaussian images
# ({numref}`fig-05-datasets`). The table after {numref}`fig-05-datasets` sets each quantity next to
# the authors' value: the feedforward increment inside the units and the exponent of χ over units
# {glue}`res_lmin`–{glue}`res_units` (the slope of log χ between the two ends, computed the same way
# for both), and at unit {glue}`res_units` log₁₀ χ, the effective ranks after the first ReLU and the
# kurtosis after the first BN; standard errors are over networks (the authors' error of the exponent
# is an upper bound: their file has no covariances between units).
# {glue}`authors_scale_words`
#
# The **exponent** (the table's row τ) {glue}`tau_input_words`: τ = {glue}`tau_patches` on
# patches against the authors' {glue}`tau_authors`, and our three inputs move it by
# {glue}`tau_input_spread` of the authors' value. The difference between ours and theirs is the
# trace of a feedforward increment inside the units that differs from theirs by {glue}`dff_gap` (the
# row δχ; τ grows as the fourth power of it). {glue}`tau_verdict` The **levels** at the last unit
# (the rows log₁₀ χ, the effective ranks and μ₄) do depend on it. {glue}`bracket_verdict` The
# exponent is set by the increment inside the units, which forgets the input; the levels carry the
# first units' transient (the curves of {numref}`fig-05-datasets` are parallel but offset), where a
# badly conditioned input batch raises χ (the paper's App. A makes the same remark about CIFAR-10's
# three channels). So the levels are graded against the authors' nets — for our photo patches
# {glue}`level_verdict` — but a disagreement there measures our input, not the theory.

# %%
data_arrays = {"patches": (fc_depth, fc_arrays),
               **{ds: run(f"data_{ds}", replace(base, dataset=ds, n_sims=params["data_nets"]))
                  for ds in ["digits", "gaussian"]}}
data_runs = {ds: (d, labatie.bn_res_panels(A)) for ds, (d, A) in data_arrays.items()}
ch.figure(figures.datasets(data_runs), "datasets",
          "χˡ of BN ResNets fed photo patches, digits or i.i.d. Gaussian images (the authors "
          "use CIFAR-10).",
          arrays={f"{ds}_chi": data_runs[ds][1]["chi"].mean(0) for ds in data_runs},
          alt="Geometric mean of χ against the residual unit on log-log axes for photo patches, "
              "digits and Gaussian images.")
authors = study.authors_fc(L_MIN, L)
values = {ds: study.fc_values(d, A, L_MIN, L) for ds, (d, A) in data_arrays.items()}
ROWS = {"dff": "δχ inside the units", "tau": f"τ over units {L_MIN}–{L}",
        "log10_chi": f"log₁₀ χ at unit {L}", "reff_x": f"effective rank r(x) at unit {L}",
        "reff_dx": f"effective rank r(dx) at unit {L}", "kurtosis": f"μ₄ at unit {L}"}
table = study.authors_table(values, authors, "authors, CIFAR-10").rename(index=ROWS)
ch.table(table, f"BN ResNets at unit {L}: our fully-connected nets per input against the "
         "authors' fully-connected nets on CIFAR-10 (their published arrays; Labatie 2019, §7 and "
         "Fig. 5): mean and standard error over networks, their number in parentheses; – where a "
         "quantity is not in their arrays.", formatter=estimate_formats(table))

# %% tags=["remove-cell"]
wide_batch = 4 * params["batch"]   # the batch alternative of the exponent, and the kurtosis table
b4_depth, b4_arrays = run(f"kurtosis_patches_b{wide_batch}", replace(
    base, batch=wide_batch, n_sims=params["data_nets"], reff_signal=False, reff_noise=False))
tau_4b = stats.estimate(study.fc_values(b4_depth, b4_arrays, L_MIN, L)["tau"])
versus = study.versus_authors(values["patches"], authors)
drift = abs(windows["Eq. 15 τ"].iloc[-1] / windows["Eq. 15 τ"].iloc[0] - 1)
spread = np.ptp([values[ds]["tau"].mean() for ds in values]) / authors["tau"][0]
mu4_conv = float(np.interp(L, list(FIG5D_MU4), list(FIG5D_MU4.values())))
SRC_FC = "Labatie 2019, §7 and Fig. 5; the authors' fully-connected ResNet arrays"
WITH_AUTHORS = "the error combines ours with the authors' (200 networks)"
ch.claim("tau_matches_authors", f"the exponent of χ over units {L_MIN}–{L} agrees with the "
         "authors' fully-connected nets within 5 %", kind="reproduces", measured=versus["tau"],
         reference=authors["tau"][0], tol=TAU_MARGIN, comparison="rel",
         alternative=(tau_4b.mean, f"the same nets at batch {wide_batch}"),
         why=f"5 %: Eq. 15's exponent moves by {100 * drift:.0f} % from the first to the last "
             f"window of units, so an exponent is not defined more finely at {L} units; our three "
             f"inputs move it by {100 * spread:.1f} %; {WITH_AUTHORS} (theirs bounded)",
         source=SRC_FC, min_scale="default",
         note="the authors' configuration (N = 512, B = 64, 500 units of 2 layers) from the "
              "default scale on; their input is CIFAR-10, ours photo patches")

# %% tags=["remove-cell"]
ALT_LEVEL = {"reff_x": (authors["reff_dx"][0], "a signal as well conditioned as the noise "
                        "(the authors' effective rank r(dx))"),
             "kurtosis": (mu4_conv, "Fig. 5(d)'s convolutional level at that unit")}
for key, words in [("reff_x", "effective rank r(x) after the first ReLU"),
                   ("kurtosis", "kurtosis μ₄ after the first BN")]:
    band = authors["band"][key]
    ch.claim(f"{key}_matches_authors", f"the level at unit {L} agrees with the authors' "
             "fully-connected nets within their spread of single networks",
             case=f"{words} (±{100 * band:.0f} %)", kind="reproduces", measured=versus[key],
             reference=authors[key][0], tol=band, comparison="rel", alternative=ALT_LEVEL[key],
             source=SRC_FC, min_scale="default",
             why="the half-width of the authors' 10–90 % band of single networks at that unit, "
                 f"relative to their mean; {WITH_AUTHORS}",
             caveat="the authors feed CIFAR-10, we feed photo patches: the table shows how far "
                    "the input moves this level")

# %% tags=["remove-cell"]
lchi_diff = study.input_difference(values["patches"]["log10_chi"],
                                   values["gaussian"]["log10_chi"])
ch.glue("chi_ratio_data", float(10 ** lchi_diff.mean), digits=2)
ch.claim("data_chi_patches_larger", "photo patches end with a larger χ than i.i.d. Gaussian "
         "images: log ratio > 0", kind="checks", measured=lchi_diff, reference=0.0, tol=0.0,
         comparison="ge", alternative=(0.0, "no effect of the input on χ"),
         why="a direction; both runs' errors combined", min_scale="default",
         source="ours: the book's input data (Set-up: photo patches, whose first layers raise "
                "χ above i.i.d. Gaussian images); Labatie 2019 App. A")

# %% tags=["remove-cell"]
ch.glue_all({"tau_patches": stats.estimate_or_point(values["patches"]["tau"]),
             "tau_authors": authors["tau"],
             **{f"mu4_{ds}": stats.estimate_or_point(values[ds]["kurtosis"])
                for ds in ("patches", "gaussian")}, "mu4_authors": authors["kurtosis"]})
ch.glue("tau_input_spread", f"{100 * spread:.1f} %")
ch.glue("tau_input_words", "barely depends on the input" if spread <= TAU_MARGIN else
        "depends on the input at this scale")   # "barely": within the margin of the comparison
outside = [ROWS[k] for k, inside in study.between_inputs(
    values, authors, ["log10_chi", "reff_x", "kurtosis"]).items() if not inside]
ch.glue("bracket_verdict", "" if not study.matches_authors(params) else "For each of these levels "
        "the authors' CIFAR-10 value lies between the means of two of our inputs." if not outside
        else f"The authors' value lies outside the range of our inputs' means for "
        f"{', '.join(outside)}.")
ch.glue("authors_scale_words", "" if study.matches_authors(params) else "At this scale our nets "
        "are smaller than the authors', so the comparisons are graded from the `default` scale on.")

# %% tags=["remove-cell"]
ch.glue("dff_gap", f"{100 * (values['patches']['dff'].mean() / authors['dff'][0] - 1):+.2f} %")
ch.glue("tau_verdict", ch.verdict(
    ["tau_matches_authors"], "The two agree within the 5 % margin.",
    "The two differ beyond the 5 % margin.",
    "The comparison with the 5 % margin is not decided at this scale."))
ch.glue("level_verdict", ch.verdict(
    ["reff_x_matches_authors", "kurtosis_matches_authors"],
    "they agree with the authors' within their spread of single networks",
    "they differ from the authors' beyond their spread of single networks",
    "they are not decided at this scale"))

# %% [markdown]
# ## No pathology: many directions, close to Gaussian
#
# The paper's §7 contrasts the ResNet's signal with the feedforward net's: "(i) many directions of
# signal variance preserved" — in its Fig. 5(c) $r_\mathrm{eff}(x^l)$ stays near 15 while
# $r_\mathrm{eff}(dx^l)$ is near 300, against $r_\mathrm{eff}(x)$ ≈ 2 in the convolutional
# feedforward nets of its Fig. 4(c) — and "(ii) close to Gaussian data distribution, as indicated
# e.g. by μ₄ close to the Gaussian kurtosis of 3". In our fully-connected ResNets, at unit
# {glue}`res_units` the signal keeps $r_\mathrm{eff}(x)$ = {glue}`res_reff_x` directions after the
# first ReLU (the noise:
# {glue}`res_reff_dx`; in a fully-connected net both are at most B = {glue}`res_batch`), and the
# kurtosis after the first BN is {glue}`res_kurt`.
#
# **What Fig. 5(d) shows and what it does not.** Fig. 5(d) plots *convolutional* nets on CIFAR-10:
# μ₄ rises slowly from about 3.6 to about 4.0 over 500 units ({glue}`fig5d_ref` at unit
# {glue}`res_units`, read off the figure), against about 10² in the feedforward nets of its
# Fig. 4(d). It establishes that skip connections keep the tails close to Gaussian in those nets.
# It does not fix a level for fully-connected nets, nor one that holds for every input: the
# authors' own fully-connected CIFAR-10 nets at our N, B and depth end at {glue}`mu4_authors`, and
# ours on patches at {glue}`mu4_patches` (the other inputs: the row μ₄ of the table after
# {numref}`fig-05-datasets`) — the comparison we can grade is the fully-connected one above, and
# the level it compares depends on the input. The table below separates the input and the batch: a
# fully-connected channel's kurtosis is estimated from the B inputs alone, and even for Gaussian
# data that estimate is biased low, to 3(B − 1)/(B + 1) = {glue}`gauss_bias` at this batch.

# %%
kurtosis_table = study.kurtosis_table(
    [("photo patches", params["batch"], fc_arrays),
     ("i.i.d. Gaussian", params["batch"], data_arrays["gaussian"][1]),
     ("photo patches", wide_batch, b4_arrays),
     ("digits", params["batch"], data_arrays["digits"][1])])
ch.table(kurtosis_table, "Kurtosis after the first BN of the last unit, per input and batch "
         "size: mean over networks with its standard error, against the low bias 3(B − 1)/(B + 1) "
         "of the kurtosis of B Gaussian values.", formatter=estimate_formats(kurtosis_table))

# %% tags=["remove-cell"]
kurt = study.kurtosis_findings(kurtosis_table)   # the kurtoses and what separates them


def resolved(difference):
    """Whether the 99 % t interval of ``difference`` (an Estimate) excludes 0."""
    low, high = difference.bounds()
    return low > 0 or high < 0


ch.glue_all({"res_reff_x": fig5["reff_x"], "res_reff_dx": fig5["reff_dx"],
             "res_kurt": fig5["kurtosis"], "fig5d_ref": mu4_conv,
             "gauss_bias": 3 * (params["batch"] - 1) / (params["batch"] + 1),
             "kurt_patches_4b": kurt["patches_4b"], "batch_4b": wide_batch})
ch.glue("kurt_data_verdict", "The input changes it beyond its statistical error."
        if resolved(kurt["by_input"]) else
        "Patches and Gaussian images cannot be told apart at this scale.")
ch.glue("kurt_batch_verdict", "The larger batch changes it beyond its statistical error."
        if resolved(kurt["by_batch"]) else
        "The larger batch does not change it beyond its statistical error here.")
ch.glue("kurt_ff_verdict", "All stay an order of magnitude below the ≈ 10² of the paper's "
        "convolutional feedforward nets (its Fig. 4(d))." if kurt["largest"] < 10 else
        "The largest approaches the fat tails of the paper's feedforward nets (its Fig. 4(d)).")

# %% [markdown]
# From photo patches to Gaussian images at B = {glue}`res_batch` the kurtosis goes from
# {glue}`mu4_patches` to {glue}`mu4_gaussian`. {glue}`kurt_data_verdict` With {glue}`batch_4b`
# patches per batch it is {glue}`kurt_patches_4b`. {glue}`kurt_batch_verdict`
# {glue}`kurt_ff_verdict`


# %% [markdown]
# ## ResNet against feedforward: logarithmic against exponential
#
# We run BN *feedforward* nets of the same width and batch (depth as in
# {doc}`04_bn_exploding_sensitivity`) and plot both on one figure
# ({numref}`fig-05-resnet-vs-ff`): log χ against l for the feedforward nets, against log l for the
# ResNets. Both are straight lines — the ResNet's evolution is the feedforward one with depth
# replaced by its logarithm {cite:p}`labatie2019characterizing` (§7). The feedforward fit has R² =
# {glue}`ff_r2` in l (against
# {glue}`ff_r2_log` in log l).
#
# **Conditioning: the paper's contrast and ours.** In the paper's convolutional nets the contrast
# is stark: the BN feedforward signal collapses to $r_\mathrm{eff}$ ≈ 2 (its Fig. 4(c)) while the
# ResNet keeps ≈ 15 (its Fig. 5(c)); in both, the noise stays well-conditioned (≈ 200–300).
# {doc}`04_bn_exploding_sensitivity` reproduces the feedforward half of this contrast in the
# paper's convolutional nets at its width and batch, against the authors' published arrays. In our
# fully-connected nets at B = {glue}`res_batch` the ratio of the signal's effective rank in the
# ResNet to that in the feedforward net is {glue}`reff_ratio` (feedforward: {glue}`ff_reff_x`). As
# {doc}`04_bn_exploding_sensitivity` shows, a fully-connected net samples each channel at the B
# inputs only ($r_\mathrm{eff}$ ≤ B), and at small batch its feedforward signal does not collapse as
# far as in the paper's convolutional nets — a property of the fully-connected architecture at small
# batch, not a contradiction of the paper. We therefore grade only the statement the paper makes
# about ResNets (several directions preserved) and report the ratio.

# %%
ff_depth, ff_arrays = run("ff_compare", replace(base, arch="bn_ff", depth=params["ff_depth"],
                                               records=params["ff_depth"],
                                               reff_locations=("loc4",)))
ff_chi = ff_arrays["chi_loc4"]
ff_r2 = labatie.r2_pair(ff_depth, np.log(ff_chi).mean(0), l_min=10)
ch.figure(figures.resnet_vs_ff(ff_depth, ff_chi, ff_arrays["reff_signal_loc4"], fc_depth,
                               fc_panels["chi"], fc_panels["reff_x"]), "resnet_vs_ff",
          "Mean log χ of BN feedforward nets against depth (a) and of BN ResNets against the "
          "residual unit on a log axis (b), and the signal's effective rank in both (c): the "
          "ResNet evolution is the logarithmic version of the feedforward one (Labatie §7).",
          arrays={"ff_depth": ff_depth, "ff_logchi": np.log(ff_chi).mean(0), "res_depth": fc_depth,
                  "res_logchi": np.log(fc_panels["chi"]).mean(0),
                  "ff_reff": ff_arrays["reff_signal_loc4"].mean(0),
                  "res_reff": fc_panels["reff_x"].mean(0)},
          alt="Three panels: mean log χ of feedforward nets against depth and of ResNets against "
              "the residual unit on a log axis, both straight lines; the signal's effective rank "
              "against depth in both.")

# %% tags=["remove-cell"]
ff_reff = stats.estimate_or_point(ff_arrays["reff_signal_loc4"][:, -1])
ch.glue("ff_r2", ff_r2["r2_linear_in_l"], digits=4)
ch.glue("ff_r2_log", ff_r2["r2_linear_in_log_l"], digits=4)
ch.glue_all({"ff_reff_x": ff_reff})
ch.glue("reff_ratio", fig5["reff_x"].mean / ff_reff.mean, digits=2)
res_fits = study.growth_law_fits(fc_depth, fc_panels["chi"], L_MIN, seed=seed)
ff_fits = study.growth_law_fits(ff_depth, ff_chi, 10, seed=seed)
ch.claim("ff_exponential_res_power", "feedforward: log χ linear in l (R² ≥ 0.99), unlike the "
         "ResNet's power law", kind="predicts", measured=ff_fits["r2_l"], reference=0.99, tol=0.0,
         comparison="ge", alternative=(res_fits["r2_l"].mean, "the ResNets' power law, R² in l"),
         why="the R² criterion of the ResNet power law", source="Labatie 2019, Theorems 3–4 (§6–7)")

# %% tags=["remove-cell"]
ch.claim("reff_resnet_large", "the ResNet signal keeps several directions: effective rank r(x) ≥ "
                              f"3 at unit {L}",
         kind="reproduces", measured=fig5["reff_x"], reference=3.0, tol=0.0, comparison="ge",
         alternative=(2.0, "the collapsed signal of the paper's BN feedforward nets (its Fig. "
                           "4(c): effective rank r ≈ 2)"),
         why="3: against the collapse of vanilla nets (Chapter 3) and the effective rank r ≈ 2 of "
             "the paper's BN feedforward nets; r ≤ B in fully-connected nets, whose feedforward "
             f"nets at small B do not collapse (r = {ff_reff.mean:.1f} here): it does not exclude "
             "them",
         source="Labatie 2019, §7 (i) and Fig. 5(c)")

# %% tags=["remove-cell"]
FF_ALTERNATIVE = "the BN feedforward nets (exponential growth), same N and B"
ch.claim("power_law_r2", "log χˡ is linear in log l (R² ≥ 0.99)", kind="reproduces",
         measured=res_fits["r2_log"], reference=0.99, tol=0.0, comparison="ge",
         alternative=(ff_fits["r2_log"].mean, FF_ALTERNATIVE),
         why="'power law': a straight line on log-log axes, for the network-averaged log χ",
         source="Labatie 2019, Theorem 4 and Fig. 5(b)")
ch.claim("power_not_exponential", "a power law describes χ better than an exponential: "
         "R²(log l) ≥ R²(l)", kind="predicts", measured=res_fits["diff"], reference=0.0, tol=0.0,
         comparison="ge", alternative=(ff_fits["diff"].mean, FF_ALTERNATIVE),
         why="the two fits on the same data", source="Labatie 2019, Theorem 4 / Eq. 15")


# %% [markdown]
# ## The convolutional variant (reduced)
#
# {numref}`fig-05-fig5-conv` repeats Fig. 5 with 3×3 periodic convolutions, the paper's
# architecture. {glue}`conv_reduced_words` Its Eq. 15 overlay deviates from χ by at most
# {glue}`conv_overlay_dev` over units ≥ {glue}`conv_lmin`; at the last unit the noise keeps
# $r_\mathrm{eff}(dx)$ = {glue}`conv_reff_dx` directions and the kurtosis is {glue}`conv_kurt`.

# %%
conv_depth, conv_arrays = run("fig5_conv", replace(
    base, kernel_size=3, width=params["conv_width"], batch=params["conv_batch"],
    depth=params["conv_depth"], records=min(params["records"], params["conv_depth"]),
    n_sims=params["conv_nets"]))
conv_panels = labatie.bn_res_panels(conv_arrays)
conv_lmin = max(2, params["conv_depth"] // 10)
conv_fit = labatie.power_fit(conv_depth, conv_panels["chi"], l_min=conv_lmin)
conv_overlay = labatie.power_overlay(conv_depth, conv_panels["chi"],
                                     conv_panels["dff"][:, conv_depth >= conv_lmin], RD,
                                     l_min=conv_lmin, seed=seed)
reduced = "reduced, " if CONV_REDUCED else ""
fig = figures.fig5(conv_depth, conv_panels,
                   f"BN ResNet, conv 3×3 periodic, {reduced}N = {params['conv_width']}, "
                   f"B = {params['conv_batch']}", conv_fit, conv_overlay)
ch.figure(fig, "fig5_conv",
          "Increments, power-law growth, conditioning and tails in convolutional (3×3 periodic) BN "
          f"ResNets (Labatie, Fig. 5 (a–d)), {reduced}N = {params['conv_width']}, B = "
          f"{params['conv_batch']}, {params['conv_depth']} units, {conv_panels['chi'].shape[0]} "
          "network(s)" + (" — an illustration, not the paper's nets (N = 512, B = 64)."
                          if CONV_REDUCED else "."),
          arrays={"depth": conv_depth, **conv_panels},
          alt="The four panels of the paper's Fig. 5 for convolutional BN ResNets: "
              "increments, power-law growth of χ with the Eq. 15 overlay, effective ranks, "
              "kurtosis and mean absolute value.")

# %% tags=["remove-cell"]
ch.glue("conv_lmin", conv_lmin)
ch.glue("conv_overlay_dev", f"{100 * conv_overlay['max_dev']:.1f} %")
ch.glue_all({"conv_reff_dx": stats.estimate_or_point(conv_panels["reff_dx"][:, -1]),
             "conv_kurt": stats.estimate_or_point(conv_panels["kurt_z"][:, -1])})
ch.glue("conv_reduced_words", (
    f"Here it is reduced to N = {params['conv_width']} channels and B = {params['conv_batch']} "
    "images, an illustration only: a paper-width convolutional ResNet (N = 512, B = 64, 500 units "
    "of 2 layers) costs minutes per network on a CPU, beyond the budget of this scale; at the "
    f"reduced width the noise's effective rank cannot exceed N = {params['conv_width']} (the "
    "paper's ≈ 300) and the tails are those of a narrow net (the paper's μ₄: 3.6–4.0), so its "
    "claim is graded at the `paper` scale only.") if CONV_REDUCED else
    "It runs at the paper's width and batch.")
ch.claim("conv_eq15_overlay", OVERLAY,
         case=f"convolutional ResNets, units {conv_lmin}–{params['conv_depth']}", kind="reproduces",
         measured=study.overlay_deviation(conv_overlay, conv_panels["chi"].shape[0]),
         reference=OVERLAY_MARGIN, tol=0.0, comparison="le",
         alternative=(conv_overlay["exp_max_dev"], EXPONENTIAL),
         why="the read-off margin of the fully-connected nets",
         source="Labatie 2019, §7 and Fig. 5(b)", min_scale="paper",
         note="graded at the paper scale only: below it the convolutional nets are reduced "
              "(N = 32, B = 8 at default) because a paper-width one costs minutes per network on "
              "a CPU; the reduced width caps the noise's effective rank r(dx) at N and leaves the "
              "nets outside the paper's regime")

# %% [markdown]
# ## What we found
#
# - **Reproduced at this scale:** χ grows as a power law in the number of units (R² =
#   {glue}`res_r2` in log l) while the same layers without skip connections grow exponentially
#   (R² = {glue}`ff_r2` in l), with a feedforward increment δχ = {glue}`dff_mean` > 1 inside the
#   units; the ResNet's signal keeps $r_\mathrm{eff}(x)$ = {glue}`res_reff_x` directions.
# - **The paper's Eq. 15 overlay** (its Fig. 5(b)) deviates from our χ by at most
#   {glue}`overlay_max_dev`, against the 10 % that the paper's figure can certify. The free
#   exponent, $\tau_\mathrm{fit}$ = {glue}`tau_fit`, is {glue}`tau_distance` combined standard
#   errors from the Eq. 15 value {glue}`tau_eq15` — a measurement, not a claim of the paper.
# - **Against the authors' fully-connected ResNets** (same N, B and depth, CIFAR-10): the exponent
#   of χ, {glue}`tau_patches` against {glue}`tau_authors`, {glue}`tau_input_words`.
#   {glue}`tau_verdict` The levels — χ, $r_\mathrm{eff}(x)$, μ₄ — depend on the input.
#   {glue}`bracket_verdict` Graded for our photo patches, {glue}`level_verdict`: the claims
#   compare our input with theirs as much as our nets with theirs.
# - **Fig. 5(d)'s kurtosis** is a property of convolutional nets on CIFAR-10; it is not graded
#   against our fully-connected nets, whose μ₄ ({glue}`mu4_patches` on patches,
#   {glue}`mu4_gaussian` on Gaussian images) is compared with the authors' fully-connected value
#   ({glue}`mu4_authors`) instead.
# - **Differs from the paper's narrative, for a known reason:** the feedforward signal of our
#   fully-connected nets is not collapsed at small batch ($r_\mathrm{eff}$ ≤ B), so the
#   ResNet/feedforward contrast in conditioning is smaller than in the paper's convolutional nets.
# - **Not graded below the `paper` scale:** the convolutional variant, reduced for the CPU.

# %% [markdown]
# ## Scorecard

# %%
ch.finish()
