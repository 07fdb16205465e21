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

from ..capacity import feature_capacities, stochastic_matrix
from ..differential import differential_sensitivities
from ..diffusion import (
    ARCHS,
    capacity_network,
    chain_capacities,
    chain_network,
    circular_moments,
    conv_net_gradients,
    edgeworth_l1,
    harmonic_mean_rate,
    heat_kernel,
    random_residual_profiles,
    residual_layer,
    residual_layer_profiles,
    residual_step,
    shattering_gradients,
    walk_excess_kurtosis,
)
from ..diffusion import straight_path_curves as straight_path_curves_of
from ..params import ParameterError, check_positive, check_positive_int
from ..seeds import stream
from ..seeds import torch_seed as stream_seed
from ..stats import (
    Estimate,
    estimate,
    interval_estimate,
    inverse_variance_mean,
    linear_fit,
    t_quantile,
)


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
    residual_layer(ring, 1.0 / layers, a_hi, a_hi)  # refuses a negative diagonal, 1 − 2ε·a_hi < 0
    rates = [stream(seed, "env", e).uniform(a_lo, a_hi, (layers, 2, ring)) for e in range(envs)]
    prof = random_residual_profiles(np.stack(rates), frozen=frozen)
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
def conv_gradients(
    arch: str,
    activation: str,
    depth: int,
    keys: Sequence[Any],
    *,
    seed: int,
    channels: int,
    length: int,
    inputs: int,
    nets: int,
    res_scale: float,
    device: str = "cpu",
) -> dict[str, np.ndarray]:
    """:func:`layerwise.diffusion.conv_net_gradients` of ``nets`` networks of ``arch`` and
    ``activation`` at ``depth``, torch seed of stream (``*keys``) — the chapter's one way to run
    them (``inputs`` inputs per network, ``channels`` × ``length`` units per layer)."""
    return conv_net_gradients(
        arch=arch,
        activation=activation,
        depth=depth,
        channels=channels,
        length=length,
        n_inputs=inputs,
        n_nets=nets,
        seed=stream_seed(seed, *keys),
        res_scale=res_scale,
        device=device,
    )


def erf_unit(u: int, *, depths: Sequence[int], seed: int, **net: Any) -> dict[str, np.ndarray]:
    """Unit ``u = a · len(depths) + i`` of the chapter's ERF runs: :func:`conv_gradients` of ReLU
    nets of architecture ``ARCHS[a]`` at depth ``depths[i]``, stream ("erf", arch, depth); ``net``
    the sizes of :func:`conv_gradients`. Returns ``g2`` and ``pred`` with a leading unit axis of
    1."""
    a, i = divmod(u, len(depths))
    arch, d = ARCHS[a], depths[i]
    r = conv_gradients(arch, "relu", d, ("erf", arch, d), seed=seed, **net)
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
def pseudo_random_gradients(*, depth: int, seed: int, **net: Any) -> dict[str, np.ndarray]:
    """:func:`conv_gradients` of the same plain and residual networks (stream ("pr", arch)) with
    pseudo-random and with ReLU activations; keys ``{arch}_{activation}_{key}``."""
    out = {}
    for arch in ARCHS:
        for act in ("pseudo_random", "relu"):
            r = conv_gradients(arch, act, depth, ("pr", arch), seed=seed, **net)
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
    """:func:`layerwise.diffusion.straight_path_curves` at every depth L of ``depths``, the rates
    a, b ~ U(0.25, 0.75) of its residual layers from stream ("wmax", L)."""
    return straight_path_curves_of(
        [stream(seed, "wmax", int(L)).uniform(0.25, 0.75, size=(L, 2)) for L in depths]
    )


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


def erf_pseudo_random(*, depth: int, seed: int, **net: Any) -> dict[str, np.ndarray]:
    """:func:`conv_gradients` of residual nets with pseudo-random units at one depth (stream
    ("erf_pr", depth)): the test of whether the ReLU nets' ERF departs from the capacity network
    because ReLU units are not fully decoupling. Returns ``g2`` (nets, length) and ``pred``."""
    r = conv_gradients("residual", "pseudo_random", depth, ("erf_pr", depth), seed=seed, **net)
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
