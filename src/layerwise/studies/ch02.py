"""Chapter 2's study (Donier 2019, §3–4; Luo et al. 2016; Balduzzi et al. 2017): what the chapter
derives from the capacity network, its diffusion limit and the random networks of
:mod:`layerwise.diffusion` — random residual diffusion against Eq. 34, the drifting limit ε → 0
(Eqs. 30–32), effective receptive fields of real conv nets, nets with 1/L residual steps, gradients
against the capacity network, the straight-path weight and shattered gradients. Numbers, arrays and
estimates only: the chapter words its conclusions."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy.linalg import expm

from ..capacity import feature_capacities, stochastic_matrix
from ..differential import (
    differential_coefficients,
    differential_sensitivities,
    expected_profiles,
    profile_moments,
)
from ..diffusion import (
    ARCHS,
    capacity_network,
    chain_capacities,
    chain_network,
    circular_moments,
    conv_net_gradients,
    edgeworth_l1,
    heat_kernel,
    local_delta,
    residual_layer,
    residual_layer_profiles,
    residual_step,
    shattering_gradients,
    straight_path_weight,
    walk_excess_kurtosis,
)
from ..params import ParameterError, check_positive, check_positive_int
from ..seeds import stream
from ..seeds import torch_seed as stream_seed
from ..stats import (
    Estimate,
    estimate,
    interval_estimate,
    inverse_variance_mean,
    jackknife_se,
    linear_fit,
    t_quantile,
)

# the page's tables of estimates are built as Chapter 1's are


# ------------------------------------------------------------------------------------------------
# The residual limit: a Dirac diffuses into a Gaussian (Eqs. 27–34)
# ------------------------------------------------------------------------------------------------
def residual_diffusion_profiles(
    *,
    ring: int,
    layers: int,
    a_lo: float,
    a_hi: float,
    envs: int,
    seed: int,
    frozen: bool = False,
) -> dict[str, np.ndarray]:
    """Capacity profiles of a Dirac at the centre of a ring of ``ring`` units through ``layers``
    random residual layers D_l = I + Δ_l/L (:func:`layerwise.diffusion.residual_layer`, a, b ~
    U(a_lo, a_hi) per layer and position, stream ("env", e)), all networks at once; with
    ``frozen`` every layer repeats the top layer's draws (a static random medium: random per
    position, the same at every depth). Returns ``profiles`` (envs, layers + 1, ring) in
    float32."""
    ring, layers, envs = (
        check_positive_int(k, v) for k, v in (("ring", ring), ("layers", layers), ("envs", envs))
    )
    eps = 1.0 / layers
    residual_layer(ring, eps, a_hi, a_hi)  # refuses a negative diagonal, 1 − 2ε·a_hi < 0
    # the draws of residual_layer's a, b per layer, in the same order: (envs, layers, 2, ring)
    ab = np.stack(
        [stream(seed, "env", e).uniform(a_lo, a_hi, (layers, 2, ring)) for e in range(envs)]
    )
    prof = np.zeros((envs, layers + 1, ring))
    k = np.zeros((envs, ring))
    k[:, ring // 2] = 1.0
    prof[:, 0] = k
    for i, l in enumerate(range(layers - 1, -1, -1)):  # κ^{l−1} = (I + εΔ_l)κ^l, top layer first
        a, b = ab[:, layers - 1 if frozen else l, 0], ab[:, layers - 1 if frozen else l, 1]
        k = k + eps * (np.roll(a * k, -1, 1) + np.roll(b * k, 1, 1) - (a + b) * k)
        prof[:, i + 1] = k
    return {"profiles": prof.astype(np.float32)}


def residual_diffusion_summary(profiles: np.ndarray, diffusion: float) -> dict[str, Any]:
    """What chapter 2 reads from the profiles (envs, L + 1, ring) of
    :func:`residual_diffusion_profiles`.

    ``mu``, ``var``, ``m2`` (envs, L + 1): circular mean, variance and second moment about the
    source; ``mean_profile``; ``k_avg``: the exact profile of the network-averaged walk (Δ ≡ 𝒟)
    after L layers; ``l1``: its L1 distance to the Gaussian of Eq. 34 at t = 1; ``edge``: the
    Edgeworth size of :func:`layerwise.diffusion.edgeworth_l1`; ``slope_net`` per network the
    fitted slope of m2 over 2𝒟ε per layer; ``drift_rel`` the rms final mean position over the
    final width; ``noise_l1`` the L1 distance of the mean final profile to ``k_avg``;
    ``l1_per_net`` the mean over networks of each one's L1 distance to Eq. 34."""
    envs, L1, ring = profiles.shape
    L, c0 = L1 - 1, ring // 2
    eps = 1.0 / L
    _, mu, var = circular_moments(profiles, c0)
    m2 = var + mu**2
    k_layers = np.arange(L + 1)
    mean_prof = profiles.mean(0)
    x = np.arange(ring)
    k_avg = capacity_network(
        [residual_layer(ring, eps, diffusion, diffusion)] * L, np.eye(ring)[c0]
    )[-1]
    gauss = heat_kernel(x, c0, diffusion, 1.0)
    l1 = float(np.abs(k_avg - gauss).sum())
    edge = edgeworth_l1(walk_excess_kurtosis(eps * diffusion, L))
    slope_net = np.array([linear_fit(k_layers, m2[e])["slope"] for e in range(envs)])
    slope_net = slope_net / (2 * diffusion * eps)
    return {
        "mu": mu,
        "var": var,
        "m2": m2,
        "mean_profile": mean_prof,
        "k_avg": k_avg,
        "l1": l1,
        "edge": edge,
        "slope_net": slope_net,
        "drift_rel": float(np.sqrt(np.mean(mu[:, -1] ** 2) / np.mean(var[:, -1]))),
        "noise_l1": float(np.abs(mean_prof[-1] - k_avg).sum()),
        "l1_per_net": float(np.abs(profiles[:, -1] - gauss).sum(1).mean()),
    }


# ------------------------------------------------------------------------------------------------
# A drift, and the limit ε → 0 (Eqs. 30–32)
# ------------------------------------------------------------------------------------------------
def drift_limit(*, ring: int, left: float, right: float, layers: Sequence[int]) -> dict[str, Any]:
    """The deep limit of Eq. 29 with a layer-independent, translation-invariant Δ that drifts
    (column i sends ``left`` to i−1 and ``right`` to i+1): a Dirac at the ring's centre through L
    layers I + Δ/L, for every L of ``layers``, against the two limits of the paper.

    * Eq. 30: π(1) = exp(Δ)π(0) (scipy's expm); ``l1_expm`` (len(layers),) the L1 distance of
      (I + Δ/L)^L δ to it — the Euler step of Eq. 30, first order in ε = 1/L;
    * Eq. 32: the Gaussian of drift v = right − left and 𝒟 = (left + right)/2 at t = 1 (the
      continuum limit of Eq. 30, Eq. 31); ``l1_eq32`` the L1 distance of exp(Δ)δ to it, and
      ``edge`` the leading Edgeworth term of exp(Δ)δ, a continuous-time walk whose cumulants are
      κ_n = right + (−1)^n left: skewness v/(2𝒟)^{3/2}, excess kurtosis 1/(2𝒟).

    Returns also ``profile_expm``, ``profiles`` (len(layers), ring) and ``gauss`` (ring,)."""
    ring = check_positive_int("ring", ring)
    Ls = [check_positive_int("layers", L) for L in layers]
    c0 = ring // 2
    Dl = local_delta(ring, left, right)
    delta = np.eye(ring)[c0]
    pi1 = expm(Dl) @ delta
    profs = []
    for L in Ls:
        D = residual_layer(ring, 1.0 / L, left, right)
        k = delta.copy()
        for _ in range(L):
            k = D @ k
        profs.append(k)
    profs = np.array(profs)
    v, diff = right - left, (left + right) / 2
    gauss = heat_kernel(np.arange(ring), c0, diff, 1.0, drift=v)
    return {
        "layers": np.array(Ls),
        "profiles": profs,
        "profile_expm": pi1,
        "gauss": gauss,
        "l1_expm": np.abs(profs - pi1).sum(1),
        "l1_eq32": float(np.abs(pi1 - gauss).sum()),
        "edge": edgeworth_l1(1.0 / (2 * diff), v / (2 * diff) ** 1.5),
        "drift": v,
        "diffusion": diff,
    }


def convergence_rate(
    layers: Sequence[float], l1: Sequence[float], skip: int = 1
) -> dict[str, float]:
    """Log-log least-squares slope of the L1 distance against the depth L = 1/ε (``linear_fit`` of
    log l1 on log L, the first ``skip`` depths left out): −1 for the explicit Euler scheme
    (I + εΔ)^{1/ε} of Donier's Eq. 30, whose error is first order in ε."""
    layers, l1 = np.asarray(layers, float), np.asarray(l1, float)
    if layers.shape != l1.shape or layers.size - skip < 2:
        raise ParameterError(f"layers and l1 must match with at least skip + 2 = {skip + 2} points")
    return linear_fit(np.log(layers[skip:]), np.log(l1[skip:]))


# ------------------------------------------------------------------------------------------------
# The effective receptive field of real networks
# ------------------------------------------------------------------------------------------------
def erf_unit(
    u: int,
    *,
    depths: Sequence[int],
    channels: int,
    length: int,
    inputs: int,
    nets: int,
    res_scale: float,
    seed: int,
    device: str = "cpu",
) -> dict[str, np.ndarray]:
    """Unit ``u = a · len(depths) + i`` of :func:`erf_gradients`: architecture ``ARCHS[a]`` at
    depth ``depths[i]``, torch seed of stream ("erf", arch, depth). Returns ``g2`` and ``pred``
    with a leading unit axis of 1."""
    a, i = divmod(u, len(depths))
    arch, d = ARCHS[a], depths[i]
    r = conv_net_gradients(
        arch=arch,
        activation="relu",
        depth=d,
        channels=channels,
        length=length,
        n_inputs=inputs,
        n_nets=nets,
        seed=stream_seed(seed, "erf", arch, d),
        res_scale=res_scale,
        device=device,
    )
    return {"g2": np.asarray(r["g2"])[None], "pred": np.asarray(r["pred"])[None]}


def assemble_erf(units: Mapping[str, np.ndarray], depths: Sequence[int]) -> dict[str, np.ndarray]:
    """The :func:`erf_unit` results (concatenated on the unit axis) under the names
    ``{arch}_{depth}_g2`` and ``{arch}_{depth}_pred``."""
    out = {}
    for u in range(len(ARCHS) * len(depths)):
        a, i = divmod(u, len(depths))
        for key in ("g2", "pred"):
            out[f"{ARCHS[a]}_{depths[i]}_{key}"] = units[key][u]
    return out


def erf_gradients(
    *,
    depths: Sequence[int],
    channels: int,
    length: int,
    inputs: int,
    nets: int,
    res_scale: float,
    seed: int,
    device: str = "cpu",
) -> dict[str, np.ndarray]:
    """:func:`layerwise.diffusion.conv_net_gradients` of plain and residual ReLU nets at every
    depth, torch seed of stream ("erf", arch, depth): the units :func:`erf_unit` in order.
    Returns ``{arch}_{depth}_g2`` and ``{arch}_{depth}_pred``."""
    kw = dict(
        depths=depths,
        channels=channels,
        length=length,
        inputs=inputs,
        nets=nets,
        res_scale=res_scale,
        seed=seed,
        device=device,
    )
    units = [erf_unit(u, **kw) for u in range(len(ARCHS) * len(depths))]
    return assemble_erf({k: np.concatenate([u[k] for u in units]) for k in ("g2", "pred")}, depths)


def erf_width_fit(
    g2_by_depth: Sequence[np.ndarray], depths: Sequence[float]
) -> tuple[np.ndarray, Estimate]:
    """Variances of the mean-squared-gradient profiles (one (nets, length) array per depth,
    centred at length // 2) and the exponent γ of width ∝ depth^γ: one log-log fit of
    ½ log variance on log depth per network, mean and SE over networks. Returns
    (V (depths, nets), Estimate)."""
    V = np.array([circular_moments(g, np.shape(g)[-1] // 2)[2] for g in g2_by_depth])
    logd = np.log(np.asarray(depths, float))
    return V, estimate(
        [linear_fit(logd, 0.5 * np.log(V[:, i]))["slope"] for i in range(V.shape[1])]
    )


def erf_exponent_control(
    g2_by_depth: Sequence[np.ndarray], depths: Sequence[float], per_layer: float, seed: int
) -> Estimate:
    """:func:`erf_width_fit` on synthetic truth under the design of ``g2_by_depth`` (one (nets,
    length) array per depth): per depth d and network, the lattice walk of d layers with kernel
    (v/2, 1 − v, v/2) (v = ``per_layer``: variance v·d, width ∝ d^½) on the same ring, times
    1 + ε with ε Gaussian of the measured per-position relative scatter over networks at that
    depth (stream ("erf_control", k)). Returns the fitted exponent, whose truth is ½ up to the
    ring's wrap-around."""
    v = check_positive("per_layer", per_layer)
    if v > 1:
        raise ParameterError(f"per_layer={per_layer} must be at most 1 (a lattice walk's step)")
    synth = []
    for k, (g, d) in enumerate(zip(g2_by_depth, depths, strict=True)):
        g = np.asarray(g, float)
        nets, length = g.shape
        walk = np.zeros(length)
        walk[length // 2] = 1.0
        for _ in range(int(d)):
            walk = (1 - v) * walk + v / 2 * (np.roll(walk, 1) + np.roll(walk, -1))
        rel = float(np.mean(g.std(0, ddof=1) / np.maximum(np.abs(g.mean(0)), 1e-300)))
        noise = stream(seed, "erf_control", k).standard_normal((nets, length))
        synth.append(walk * np.clip(1 + rel * noise, 0.0, None))
    return erf_width_fit(synth, depths)[1]


def variance_ratio(variances: np.ndarray, predicted: float) -> Estimate:
    """Measured ERF variances (one per network) over the capacity network's prediction, estimated
    over the networks (:func:`layerwise.stats.estimate`): 1 where Eq. 34's walk describes the
    nets."""
    predicted = check_positive("predicted", predicted)
    return estimate(np.asarray(variances, float) / predicted)


# ------------------------------------------------------------------------------------------------
# Residual networks in the paper's regime: ε = 1/L
# ------------------------------------------------------------------------------------------------
def residual_t_collapse(
    *,
    depths: Sequence[int],
    tau: float,
    channels: int,
    length: int,
    inputs: int,
    nets: int,
    seed: int,
    device: str = "cpu",
) -> dict[str, np.ndarray]:
    """:func:`layerwise.diffusion.residual_layer_profiles` at every depth L with
    s = :func:`layerwise.diffusion.residual_step` (τ, L), torch seed of stream ("t_collapse", L).
    Returns ``var_{L}`` (nets, L + 1): the circular variance of the profile at each layer, and
    ``g2_{L}`` (nets, length): the input-layer profile (t = 1)."""
    out = {}
    for L in depths:
        prof = residual_layer_profiles(
            depth=L,
            res_scale=residual_step(tau, L),
            channels=channels,
            length=length,
            n_inputs=inputs,
            n_nets=nets,
            seed=stream_seed(seed, "t_collapse", L),
            device=device,
        )
        out[f"var_{L}"] = circular_moments(prof, length // 2)[2]
        out[f"g2_{L}"] = prof[:, 0]
    return out


# ------------------------------------------------------------------------------------------------
# Capacities and gradients: two sides of the same coin
# ------------------------------------------------------------------------------------------------
def pseudo_random_gradients(
    *,
    depth: int,
    channels: int,
    length: int,
    inputs: int,
    nets: int,
    res_scale: float,
    seed: int,
    device: str = "cpu",
) -> dict[str, np.ndarray]:
    """:func:`layerwise.diffusion.conv_net_gradients` of the same plain and residual networks
    (torch seed of stream ("pr", arch)) with pseudo-random and with ReLU activations; keys
    ``{arch}_{activation}_{key}``."""
    out = {}
    for arch in ARCHS:
        for act in ("pseudo_random", "relu"):
            r = conv_net_gradients(
                arch=arch,
                activation=act,
                depth=depth,
                channels=channels,
                length=length,
                n_inputs=inputs,
                n_nets=nets,
                seed=stream_seed(seed, "pr", arch),
                res_scale=res_scale,
                device=device,
            )
            for k, v in r.items():
                out[f"{arch}_{act}_{k}"] = v
    return out


def gradient_total_ratios(g2_total: np.ndarray, pred: np.ndarray) -> list[Estimate]:
    """Per network, the mean over inputs (and its SE, inputs − 1 d.o.f.) of the total squared
    gradient over the total of the capacity network, Σ D₁⋯D_L(a∘a)."""
    return [estimate(g2_total[i] / pred[i].sum()) for i in range(len(pred))]


def gradient_ratio_summary(run: Mapping[str, np.ndarray]) -> dict[tuple[str, str], list[Estimate]]:
    """:func:`gradient_total_ratios` of a :func:`pseudo_random_gradients` run per (architecture,
    activation), each against the capacity network of the same weights."""
    return {
        (arch, act): gradient_total_ratios(
            run[f"{arch}_{act}_g2_total"], run[f"{arch}_pseudo_random_pred"]
        )
        for arch in ARCHS
        for act in ("pseudo_random", "relu")
    }


def pooled_ratio(estimates: Sequence[Estimate]) -> Estimate:
    """Inverse-variance mean of per-network ratio estimates, its SE and the Welch–Satterthwaite
    d.o.f. (:func:`layerwise.stats.inverse_variance_mean`)."""
    if not estimates:
        raise ParameterError("estimates must not be empty")
    mean, se, dof = inverse_variance_mean(
        [e.mean for e in estimates], [e.se for e in estimates], [e.dof for e in estimates]
    )
    return Estimate(mean, se, dof, len(estimates))


def largest_deviation_interval(estimates: Sequence[Estimate], confidence: float) -> Estimate:
    """max_i |r_i − 1| over networks from per-network estimates r_i (mean, se, dof), with an
    interval: the hull of the folded intervals |[r_i − 1 ± q·se_i]|, simultaneous at
    ``confidence`` over the networks (Bonferroni, the t quantile of the first estimate's d.o.f.)."""
    q = t_quantile(1 - (1 - confidence) / len(estimates), estimates[0].dof)
    folded = []
    for e in estimates:
        lo, hi = e.mean - 1 - q * e.se, e.mean - 1 + q * e.se
        folded.append(
            (
                0.0 if lo <= 0 <= hi else min(abs(lo), abs(hi)),
                max(abs(lo), abs(hi)),
                abs(e.mean - 1),
            )
        )
    folded = np.array(folded)
    return interval_estimate(
        folded[:, 2].max(), folded[:, 0].max(), folded[:, 1].max(), n=len(estimates)
    )


def ratio_means(
    summary: Mapping[tuple[str, str], Sequence[Estimate]], activation: str
) -> np.ndarray:
    """The per-network mean ratios of ``activation`` over both architectures (plain first), from
    ``{(arch, activation): [Estimate per network]}`` of :func:`gradient_ratio_summary`."""
    return np.array([e.mean for a in ARCHS for e in summary[(a, activation)]])


# ------------------------------------------------------------------------------------------------
# Shattering (Eqs. 35–36; Balduzzi et al. 2017)
# ------------------------------------------------------------------------------------------------
def straight_path_curves(depths: Sequence[int], seed: int) -> dict[str, np.ndarray]:
    """w_max after L layers for residual layers I + Δ/L on 5 units (a, b ~ U(0.25, 0.75), stream
    ("wmax", L)) with the exp(Σ εΔ_ii) of Eq. 36, and for uniform plain layers of receptive field
    3 and 5."""
    w_res, w_res_pred, w_plain3, w_plain5 = [], [], [], []
    for Lk in depths:
        r = stream(seed, "wmax", int(Lk))
        ab = r.uniform(0.25, 0.75, size=(Lk, 2))
        Dl = [residual_layer(5, 1.0 / Lk, a, b) for a, b in ab]
        w_res.append(straight_path_weight(Dl, 2)[-1])
        w_res_pred.append(math.exp(-(ab.sum(1) / Lk).sum()))
        w_plain3.append(straight_path_weight([stochastic_matrix(np.ones((3, 3)))] * Lk, 1)[-1])
        w_plain5.append(straight_path_weight([stochastic_matrix(np.ones((5, 5)))] * Lk, 2)[-1])
    return {
        k: np.array(v)
        for k, v in (
            ("w_res", w_res),
            ("w_res_pred", w_res_pred),
            ("w_plain3", w_plain3),
            ("w_plain5", w_plain5),
        )
    }


def shattering_table(
    *, depths: Sequence[int], width: int, points: int, nets: int, res_scale: float, seed: int
) -> dict[str, np.ndarray]:
    """:func:`layerwise.diffusion.shattering_gradients` of plain and residual nets at every depth
    (torch seed of stream ("shatter", arch, depth)). Returns ``{arch}_{depth}_corr`` and the first
    net's ``{arch}_{depth}_grad0``."""
    out = {}
    for arch in ARCHS:
        for d in depths:
            r = shattering_gradients(
                arch=arch,
                depth=d,
                width=width,
                n_points=points,
                n_nets=nets,
                seed=stream_seed(seed, "shatter", arch, d),
                res_scale=res_scale,
            )
            out[f"{arch}_{d}_corr"] = r["corr"]
            out[f"{arch}_{d}_grad0"] = r["grads"][0]
    return out


def welch_difference(a: Sequence[float], b: Sequence[float]) -> Estimate:
    """Difference of the means of two independent samples, its standard error and the
    Welch–Satterthwaite degrees of freedom."""
    ea, eb = estimate(a), estimate(b)
    va, vb = ea.se**2, eb.se**2
    return Estimate(
        ea.mean - eb.mean,
        math.sqrt(va + vb),
        (va + vb) ** 2 / (va**2 / ea.dof + vb**2 / eb.dof),
        ea.n + eb.n,
    )


# ------------------------------------------------------------------------------------------------
# The sampled networks against the walk (Eqs. 33–34)
# ------------------------------------------------------------------------------------------------
def harmonic_mean_rate(a_lo: float, a_hi: float) -> float:
    """Harmonic mean (a_hi − a_lo)/ln(a_hi/a_lo) of a rate uniform on [a_lo, a_hi]: the diffusion
    constant of a *static* one-dimensional random environment (rates frozen across layers), the
    alternative to Eq. 33's arithmetic mean 𝒟 = E[a] for layers redrawn at every depth."""
    a_lo, a_hi = check_positive("a_lo", a_lo), check_positive("a_hi", a_hi)
    if a_hi <= a_lo:
        return a_lo
    return (a_hi - a_lo) / math.log(a_hi / a_lo)


def sampled_walk_summary(
    profiles: np.ndarray, diffusion: float, a_lo: float, a_hi: float, confidence: float
) -> dict[str, Any]:
    """The sampled random networks (profiles (envs, L + 1, ring) of
    :func:`residual_diffusion_profiles`) against Eqs. 33–34 at t = 1, one value per network:

    * ``m2_ratio``: Estimate of the second moment about the source over 2𝒟 (Eq. 34's variance);
      ``m2_alt``: the harmonic-mean ratio :func:`harmonic_mean_rate`/𝒟 of a static environment;
    * ``drift``: Estimate of the final mean position (sites), 0 by symmetry (Eq. 33);
    * ``drift_rms``: root mean square of the final mean position over the width √(2𝒟), with the
      ``confidence`` interval from the t interval of the mean of squares; ``drift_rms_alt``: the
      same for the paper's random translation-invariant Δ_l (one (a, b) per layer, the same at
      every position: the final position Σ_l ε(b_l − a_l), rms (a_hi − a_lo)/√(6L));
      ``drift_rms_identical``: for identical layers of one (a, b) draw (Eq. 32's drift b − a, rms
      (a_hi − a_lo)/√6);
    * ``var_ratio``: per network (envs,), the variance about its own mean position at t = 1 over
      2𝒟; ``var_spread``: their standard deviation over networks as an Estimate (standard error
      sd/√(2(envs − 1)), the normal-theory one).
    """
    diffusion = check_positive("diffusion", diffusion)
    envs, L1, ring = profiles.shape
    _, mu, var = circular_moments(profiles[:, -1], ring // 2)
    width = math.sqrt(2 * diffusion)
    sq = estimate(mu**2)
    lo, hi = sq.bounds(confidence)
    rms = math.sqrt(sq.mean)
    var_ratio = var / (2 * diffusion)
    return {
        "var_ratio": var_ratio,
        "var_spread": spread_estimate(var_ratio),
        "m2_ratio": estimate((var + mu**2) / (2 * diffusion)),
        "m2_alt": harmonic_mean_rate(a_lo, a_hi) / diffusion,
        "drift": estimate(mu),
        "drift_rms": interval_estimate(
            rms / width, math.sqrt(max(lo, 0.0)) / width, math.sqrt(hi) / width, n=envs
        ),
        "drift_rms_alt": (a_hi - a_lo) / math.sqrt(6.0 * (L1 - 1)) / width,
        "drift_rms_identical": (a_hi - a_lo) / math.sqrt(6.0) / width,
    }


def spread_estimate(x: np.ndarray) -> Estimate:
    """The standard deviation of the samples ``x`` (ddof 1) with the normal-theory standard error
    sd/√(2(n − 1)), n − 1 degrees of freedom."""
    x = np.asarray(x, float).ravel()
    if x.size < 3:
        raise ParameterError(f"a spread needs at least 3 samples, got {x.size}")
    sd = float(x.std(ddof=1))
    return Estimate(sd, sd / math.sqrt(2 * (x.size - 1)), x.size - 1, x.size)


def erf_pseudo_random(
    *,
    depth: int,
    channels: int,
    length: int,
    inputs: int,
    nets: int,
    res_scale: float,
    seed: int,
    device: str = "cpu",
) -> dict[str, np.ndarray]:
    """:func:`layerwise.diffusion.conv_net_gradients` of residual nets with pseudo-random units at
    one depth (torch seed of stream ("erf_pr", depth)): the test of whether the ReLU nets' ERF
    departs from the capacity network because ReLU units are not fully decoupling. Returns ``g2``
    (nets, length) and ``pred``."""
    r = conv_net_gradients(
        arch="residual",
        activation="pseudo_random",
        depth=depth,
        channels=channels,
        length=length,
        n_inputs=inputs,
        n_nets=nets,
        seed=stream_seed(seed, "erf_pr", depth),
        res_scale=res_scale,
        device=device,
    )
    return {"g2": r["g2"], "pred": r["pred"]}


def erf_variances(g2: np.ndarray) -> np.ndarray:
    """Circular variance of each network's mean-squared-gradient profile (nets, length), centred
    at length // 2."""
    return circular_moments(np.asarray(g2, float), np.shape(g2)[-1] // 2)[2]


# ------------------------------------------------------------------------------------------------
# Differential layers (§3.3 and Appendix B of the longer version)
# ------------------------------------------------------------------------------------------------
def differential_runs(
    *,
    ring: int,
    taps2: Sequence[float],
    steps: int,
    paths: int,
    groups: int,
    seed: int,
    increments: str = "sign",
    noise: str = "weight",
) -> dict[str, np.ndarray]:
    """:func:`layerwise.differential.differential_sensitivities` of the differential network
    (``increments`` "sign": pseudo-random ±√ε; ``noise`` "weight": one per weight, Appendix B's
    pseudo-random weights), recorded every steps // 10 steps, with a fixed kernel (``fixed``,
    stream ("differential", "fixed")) and with a kernel mirrored at random in each step
    (``mirrored``, Eq. 47). ``steps`` must be a multiple of 10 (the records are at t = 0, 0.1, …,
    1)."""
    if check_positive_int("steps", steps) % 10:
        raise ParameterError(f"steps={steps} must be a multiple of 10")
    every = steps // 10
    return {
        name: differential_sensitivities(
            ring=ring,
            taps2=taps2,
            steps=steps,
            paths=paths,
            groups=groups,
            record_every=every,
            mirror=name == "mirrored",
            increments=increments,
            noise=noise,
            seed=stream_seed(seed, "differential", name),
        )
        for name in ("fixed", "mirrored")
    }


def pooled_moment_ratio(groups: np.ndarray, which: int, reference: float) -> Estimate:
    """Moment ``which`` (0: mean position, 1: variance) of the profile pooled over all groups (the
    mean of the groups' mean r∘r: a ratio of means over every path, the capacity's definition)
    over ``reference``, with the jackknife standard error over groups (len(groups) − 1 d.o.f.).

    Pooling matters: the paths' squared sensitivities are heavy-tailed (their total is a product of
    per-step factors), so the moments of each group's own profile — a ratio of means over a few
    hundred paths — are biased towards the typical path and their scatter understates the error."""
    groups = np.asarray(groups, float)
    if reference == 0:
        raise ParameterError("reference must not be 0")

    def moment(g: np.ndarray) -> float:
        return float(profile_moments(g.mean(0))[which]) / reference

    mean, se = jackknife_se(moment, groups)
    return Estimate(mean, se, len(groups) - 1, len(groups))


def differential_summary(
    runs: Mapping[str, np.ndarray], taps2: Sequence[float], steps: int | None = None
) -> dict[str, Any]:
    """What the chapter grades from :func:`differential_runs` (profiles (groups, times, ring)):

    * ``var_ratio``/``drift_ratio``: Estimates (:func:`pooled_moment_ratio`) of the fixed kernel's
      variance and mean position at t = 1 over those of the exact expectation of the same scheme
      (:func:`layerwise.differential.expected_profiles` with ``steps``, same ring) — 1, a check
      of the Monte-Carlo against the recursion; without ``steps``, over the continuum's 2𝒟 and v
      (Eqs. 46–47 with 𝒟, v of :func:`layerwise.differential.differential_coefficients`);
    * ``mirror_drift``: the mirrored kernels' pooled mean position over v (Eq. 47: 0);
    * ``recursion_var``/``recursion_drift``: the exact scheme's variance over 2𝒟 and mean over v
      (the O(ε) of the step and the ring's wrap-around; 1 without ``steps``);
    * ``var_alt``: Σ_k c_k/(c_{−1} + c_{+1}), the ratio if the SDE's whole coefficient spread
      capacity; ``t`` and per run ``{name}_var``/``{name}_mu`` (groups, times) for the figure."""
    coef = differential_coefficients(taps2)
    v, diff = coef["drift"], coef["diffusion"]
    if v == 0:
        raise ParameterError(f"taps2={taps2!r} must be asymmetric (c_-1 != c_+1) to grade a drift")
    out: dict[str, Any] = dict(coef)
    for name, prof in runs.items():
        mu, var = profile_moments(prof)
        out[f"{name}_mu"], out[f"{name}_var"] = mu, var
    out["t"] = np.linspace(0.0, 1.0, out["fixed_var"].shape[1])
    ring = np.shape(runs["fixed"])[-1]
    if steps is None:
        exact_mu, exact_var = v, 2 * diff
    else:
        exact = expected_profiles(ring, taps2, steps, steps)[-1]
        exact_mu, exact_var = (float(x) for x in profile_moments(exact))
    out["recursion_var"], out["recursion_drift"] = exact_var / (2 * diff), exact_mu / v
    out["var_ratio"] = pooled_moment_ratio(runs["fixed"][:, -1], 1, exact_var)
    out["var_alt"] = coef["sde_total"] / exact_var
    out["drift_ratio"] = pooled_moment_ratio(runs["fixed"][:, -1], 0, exact_mu)
    out["mirror_drift"] = pooled_moment_ratio(runs["mirrored"][:, -1], 0, v)
    out["mirror_var_ratio"] = pooled_moment_ratio(runs["mirrored"][:, -1], 1, exact_var)
    return out


def own_capacity_ratio(g2: np.ndarray, pred: np.ndarray) -> Estimate:
    """Per network, the ERF variance (:func:`erf_variances` of ``g2``) over the variance of that
    network's own capacity network D₁⋯D_L(a∘a) (``pred``, Eq. 28), estimated over the networks:
    1 in expectation over inputs for pseudo-random units."""
    return estimate(erf_variances(g2) / erf_variances(pred))


# ------------------------------------------------------------------------------------------------
# Capacity through real layers (Eq. 28 on 2–3-layer networks)
# ------------------------------------------------------------------------------------------------
def chain_capacity_table(
    *,
    n: int,
    widths: Mapping[str, Sequence[int]],
    activations: Sequence[str],
    samples: int,
    nets: int,
    readout: int,
    seed: int,
) -> dict[str, np.ndarray]:
    """Input capacities of random multi-layer networks (:func:`layerwise.diffusion.chain_network`,
    stream ("chain", name, i) — the same weights, inputs and read-out J (m_L × ``readout``,
    Gaussian) for every activation) from their empirical augmented covariance
    (:func:`layerwise.diffusion.chain_capacities`), and the capacity network D₁⋯D_L κ^φ of the same
    weights [Eq. 28]. ``widths`` maps a name to the layer widths. Returns ``{act}_{name}_kappa``
    and ``{name}_pred``, each (nets, n)."""
    nets = check_positive_int("nets", nets)
    out: dict[str, list[np.ndarray]] = {}
    for name, ws in widths.items():
        for i in range(nets):
            for act in activations:
                r = stream(seed, "chain", name, i)
                net = chain_network(n=n, widths=ws, activation=act, samples=samples, rng=r)
                J = r.standard_normal((ws[-1], readout))
                out.setdefault(f"{act}_{name}_kappa", []).append(
                    chain_capacities(net["Y"], net["etas"], net["Ps"], J)
                )
            Ds = [stochastic_matrix(P) for P in net["Ps"]]
            out.setdefault(f"{name}_pred", []).append(
                capacity_network(Ds, feature_capacities(J))[-1]
            )
    return {k: np.array(v) for k, v in out.items()}


def chain_departure(table: Mapping[str, np.ndarray], activation: str, name: str) -> Estimate:
    """Relative L1 distance Σ_i |κ_i − (D₁⋯D_Lκ^φ)_i| / Σ_i κ^φ between a network's input
    capacities and its capacity network, estimated over the networks: 0 up to sampling for
    pseudo-random units (Eq. 28)."""
    kappa, pred = table[f"{activation}_{name}_kappa"], table[f"{name}_pred"]
    return estimate(np.abs(kappa - pred).sum(1) / pred.sum(1))
