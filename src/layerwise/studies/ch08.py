"""Chapter 8's study (Liang et al. 2019; Dinh et al. 2017; Martens & Grosse 2015; Daróczy 2020):
what the chapter derives from the science of :mod:`layerwise.infogeo` — the Fisher–Rao identity
on random networks, the rescalings of a trained MLP, K-FAC's error over trained nets, the
label-randomisation runs and the tangent-sensitivity check. Numbers, arrays and estimates only:
the chapter words its conclusions."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import torch
from scipy.stats import spearmanr

from ..infogeo import (
    FISHER_LABELS,
    HOMOGENEOUS,
    PROTOCOLS,
    activation_pattern,
    alpha_scale,
    block_shares,
    capacity_measures,
    euler_residual,
    fisher_rao,
    fisher_rao_factors,
    fisher_subset,
    haar_rotation,
    hessian_top_eigenvalue,
    inverse_structure,
    kfac_analysis,
    loss_fn,
    natural_gradient_comparison,
    one_hot,
    randomize_labels,
    sharpness_draws,
    sharpness_ratio,
    train_mlp,
    train_two_protocols,
    unit_scale,
    weight_norms,
)
from ..networks import (
    Params,
    flatten,
    forward,
    has_bias,
    init_mlp,
    n_weight_layers,
    tangent_sensitivity,
)
from ..params import (
    ParameterError,
    check_choice,
    check_fraction,
    check_nonnegative,
    check_positive,
    check_positive_int,
)
from ..seeds import torch_seed
from ..stats import Estimate, estimate, jackknife_se
from ..tables import estimates_frame

# --------------------------------------------------------------------------------------------
# Chapter parameters and data
# --------------------------------------------------------------------------------------------
_POS_INT = (
    "fr_n",
    "hidden",
    "n_train",
    "train_steps",
    "lanczos_iter",
    "sharp_draws",
    "kfac_n",
    "kfac_units",
    "kfac_seeds",
    "ng_nets",
    "rand_seeds",
    "rand_hidden",
    "rand_steps",
    "rand_budget",
    "tangent_pairs",
)
_POS_INT_LISTS = ("fr_depths", "fr_widths")
#: parameters that count independent nets, over which a standard error needs at least two
_REPLICATES = ("kfac_seeds", "ng_nets", "rand_seeds")


def check_params(P: dict[str, Any]) -> dict[str, Any]:
    """Validate Chapter 8's parameter table (raises :class:`ParameterError` naming the
    parameter)."""
    for k in _POS_INT:
        if k in P:
            check_positive_int(k, P[k])
    for k in _REPLICATES:
        if k in P and P[k] < 2:
            raise ParameterError(
                f"{k}={P[k]!r} must be >= 2 (a standard error over nets needs two)"
            )
    for k in _POS_INT_LISTS:
        if k in P:
            if isinstance(P[k], (str, bytes)) or not isinstance(P[k], Sequence) or not P[k]:
                raise ParameterError(f"{k}={P[k]!r} must be a non-empty list of positive integers")
            for v in P[k]:
                check_positive_int(k, v)
    if "alphas" in P:
        al = P["alphas"]
        if isinstance(al, (str, bytes)) or not isinstance(al, Sequence) or len(al) < 3:
            raise ParameterError(
                f"alphas={al!r} must be a list of >= 3 positive numbers including 1"
            )
        for a in al:
            check_positive("alphas", a)
        if 1 not in [float(a) for a in al]:
            raise ParameterError(f"alphas={al!r} must include 1 (the trained parametrisation)")
    if "rand_fractions" in P:
        fr = P["rand_fractions"]
        if isinstance(fr, (str, bytes)) or not isinstance(fr, Sequence) or len(fr) < 2:
            raise ParameterError(
                f"rand_fractions={fr!r} must be a list of >= 2 fractions in [0, 1] incl. 0 and 1"
            )
        for v in fr:
            check_fraction("rand_fractions", v)
        if 0 not in [float(v) for v in fr] or 1 not in [float(v) for v in fr]:
            raise ParameterError(f"rand_fractions={fr!r} must include 0 and 1")
    for k in ("lr", "sharp_sigma"):
        if k in P:
            check_positive(k, P[k])
    if "target_loss" in P:
        check_nonnegative("target_loss", P["target_loss"])
    if "rand_budget" in P and "rand_steps" in P and P["rand_budget"] > P["rand_steps"]:
        raise ParameterError(
            f"rand_budget={P['rand_budget']} must be <= rand_steps={P['rand_steps']} (the step cap)"
        )
    if P.get("ng_nets", 0) > P.get("kfac_seeds", float("inf")):
        raise ParameterError(
            f"ng_nets={P['ng_nets']} must be <= kfac_seeds={P['kfac_seeds']} (the natural-gradient "
            "nets are the first of the K-FAC nets)"
        )
    if "n_train" in P and P["n_train"] > 1500:
        raise ParameterError(
            f"n_train={P['n_train']} must be <= 1500 (the rest of the 1797 digits is the test set)"
        )
    return P


def split_digits(
    x: np.ndarray, y: np.ndarray, rng: np.random.Generator, n_train: int, n_test: int = 297
) -> tuple[torch.Tensor, np.ndarray, torch.Tensor, np.ndarray]:
    """The digits shuffled once by ``rng``, flattened to float64 rows: the first ``n_train`` for
    training, the last ``n_test`` for testing (disjoint while n_train + n_test ≤ n)."""
    n_train, n_test = check_positive_int("n_train", n_train), check_positive_int("n_test", n_test)
    if n_train + n_test > len(x):
        raise ParameterError(f"n_train={n_train} + n_test={n_test} exceed the {len(x)} examples")
    perm = rng.permutation(len(x))
    X = torch.tensor(x.reshape(len(x), -1)[perm], dtype=torch.float64)
    Y = y[perm]
    return X[:n_train], Y[:n_train], X[-n_test:], Y[-n_test:]


def params_to_arrays(params: Params) -> dict[str, np.ndarray]:
    """A network as numpy arrays (what the results store keeps)."""
    return {k: v.numpy() for k, v in params.items()}


def arrays_to_params(arrays: Mapping[str, Any]) -> Params:
    """Inverse of :func:`params_to_arrays`; keys other than ``W…``/``b…`` (a loss history) are
    skipped."""
    return {k: torch.tensor(v) for k, v in arrays.items() if k[:1] in "Wb"}


def trained_mlp(
    x: torch.Tensor,
    y: np.ndarray,
    widths: Sequence[int],
    *,
    steps: int,
    lr: float,
    seed: int,
    target_loss: float,
) -> dict[str, np.ndarray]:
    """:func:`~layerwise.infogeo.train_mlp` (bias-free ReLU, float64) as arrays: the weights and
    ``loss`` (the history)."""
    p, hist = train_mlp(x, y, widths, steps=steps, lr=lr, seed=seed, target_loss=target_loss)
    return {**params_to_arrays(p), "loss": hist}


# --------------------------------------------------------------------------------------------
# The Fisher–Rao identity on random networks (Liang et al., Theorem 3.1)
# --------------------------------------------------------------------------------------------
#: (activation, biases) of the Fisher–Rao table: the two homogeneous cases, then the two that
#: break it.
FR_CASES = (("relu", False), ("leaky_relu", False), ("relu", True), ("tanh", False))
_EPS = float(np.finfo(np.float64).eps)


def fisher_rao_table(
    x: torch.Tensor,
    y: np.ndarray,
    depths: Sequence[int],
    widths: Sequence[int],
    seed_of: Callable[..., int],
    *,
    n_classes: int = 10,
    cases: Sequence[tuple[str, bool]] = FR_CASES,
) -> list[dict[str, Any]]:
    """Both sides of Liang et al.'s Eq. (3.1) and Euler's residuals for random networks, one row per
    (case, depth L, width, Fisher labels). The network of (activation, bias, L, width) is
    :func:`layerwise.networks.init_mlp` ``[d] + [width]·L + [n_classes]`` (biases of standard
    deviation 0.1) with seed ``seed_of(activation, bias, L, width)``."""
    rows = []
    for activation, bias in cases:
        for L in depths:
            for w in widths:
                p = init_mlp(
                    [x.shape[1]] + [w] * L + [n_classes],
                    seed=seed_of(activation, bias, L, w),
                    bias=bias,
                    bias_std=0.1,
                )
                for labels in FISHER_LABELS:
                    r = fisher_rao(p, x, y, activation, labels=labels)
                    rows.append(
                        dict(
                            case=f"{activation}{' + bias' if bias else ''}",
                            activation=activation,
                            bias=bias,
                            L=L,
                            width=w,
                            labels=labels,
                            n_params=int(flatten(p).numel()),
                            direct=r["direct"],
                            identity=r["identity"],
                            rel_diff=r["rel_diff"],
                            euler=euler_residual(p, x, activation),
                            euler_weighted=euler_residual(p, x, activation, weighted=True),
                        )
                    )
    return rows


def fisher_rao_summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, float | int]:
    """What the chapter's prose reads off :func:`fisher_rao_table`: the largest relative difference
    of the two sides (and in units of the float64 ε) and Euler's residual over the homogeneous
    bias-free networks (``fr_homog_max``, ``fr_homog_eps``, ``euler_homog_max``); the range of the
    relative difference with tanh and with biases (``fr_tanh_min/max``, ``fr_bias_min/max``); the
    largest weighted-Euler residual with biases (``euler_weighted_max``); the number of networks
    (``fr_n_nets``, each appears once per kind of Fisher labels)."""
    col = {
        k: np.array([r[k] for r in rows])
        for k in ("activation", "bias", "rel_diff", "euler", "euler_weighted")
    }
    homog = np.isin(col["activation"], HOMOGENEOUS) & ~col["bias"].astype(bool)
    tanh, bias = col["activation"] == "tanh", col["bias"].astype(bool)
    rel = col["rel_diff"]
    return {
        "fr_homog_max": float(rel[homog].max()),
        "fr_homog_eps": float(rel[homog].max() / _EPS),
        "euler_homog_max": float(col["euler"][homog].max()),
        "fr_tanh_min": float(rel[tanh].min()),
        "fr_tanh_max": float(rel[tanh].max()),
        "fr_bias_min": float(rel[bias].min()),
        "fr_bias_max": float(rel[bias].max()),
        "euler_weighted_max": float(col["euler_weighted"][bias].max()),
        "fr_n_nets": int(len(rows) // 2),
    }


# --------------------------------------------------------------------------------------------
# Flatness under reparametrisation (Dinh et al., Definition 5)
# --------------------------------------------------------------------------------------------
def reparam_sweep(
    params: Params,
    x: torch.Tensor,
    y: np.ndarray,
    *,
    alphas: Sequence[float],
    lanczos_iter: int,
    sharp_draws: int,
    sharp_sigma: float,
    seed_lanczos: int,
    seed_lanczos2: int,
    seed_noise: int,
    n_classes: int = 10,
) -> dict[str, np.ndarray]:
    """Dinh et al.'s T_α (row 0) and the unit-wise rescaling (row 1) of the first two layers, for
    every α: ``dfun`` (max |Δf| / max |f|), ``fr`` (⟨θ, Iθ⟩ relative to α = 1's network), the norms
    ``l2``, ``spec`` (spectral product), ``fro`` (Frobenius product), the Hessian's top eigenvalue
    by Lanczos with ``lanczos_iter`` (``lam``) and twice as many iterations (``lam2``), and the
    expected sharpness with isotropic (``iso``, its draws ``iso_draws``) and weight-proportional
    noise (``mult``), with their Monte-Carlo standard errors (the same noise draws at every α)."""
    al = np.asarray(alphas, dtype=float)
    yoh = one_hot(y, n_classes)
    f0 = forward(params, x)
    fr0 = fisher_rao(params, x, y)["direct"]
    out = {
        k: np.zeros((2, len(al)))
        for k in (
            "dfun",
            "fr",
            "l2",
            "spec",
            "fro",
            "lam",
            "lam2",
            "iso",
            "iso_se",
            "mult",
            "mult_se",
        )
    }
    out["iso_draws"] = np.zeros((2, len(al), sharp_draws))
    for t, tf in enumerate((alpha_scale, unit_scale)):
        for i, a in enumerate(al):
            q = tf(params, float(a))
            out["dfun"][t, i] = float((forward(q, x) - f0).abs().max() / f0.abs().max())
            out["fr"][t, i] = fisher_rao(q, x, y)["direct"] / fr0
            w = weight_norms(q)
            out["l2"][t, i] = w["l2"]
            out["spec"][t, i] = w["spectral_product"]
            out["fro"][t, i] = w["frobenius_product"]
            out["lam"][t, i] = hessian_top_eigenvalue(
                q, x, yoh, n_iter=lanczos_iter, seed=seed_lanczos
            )
            out["lam2"][t, i] = hessian_top_eigenvalue(
                q, x, yoh, n_iter=2 * lanczos_iter, seed=seed_lanczos2
            )
            for mode, key in (("isotropic", "iso"), ("multiplicative", "mult")):
                d = sharpness_draws(
                    q, x, yoh, sigma=sharp_sigma, n_draws=sharp_draws, mode=mode, seed=seed_noise
                )
                e = estimate(d)
                out[key][t, i], out[key + "_se"][t, i] = e.mean, e.se
                if key == "iso":
                    out["iso_draws"][t, i] = d
    return {"alphas": al, **out}


def reparam_summary(R: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """The numbers the reparametrisation claims decide, from :func:`reparam_sweep`'s arrays:
    ``lam_ratio`` = max_α λ_max / λ_max(α = 1) under T_α; the log-log slopes of λ_max between the
    two largest (``slope_hi``) and the two smallest α (``slope_lo``); ``lam_conv`` = the largest
    relative difference of Lanczos with n and 2n iterations; ``iso_ratio`` = the smaller of the
    isotropic expected sharpnesses at the grid's ends over α = 1, an :class:`Estimate` (ratio of
    means over the same noise draws, jackknife standard error over the paired draws, n − 1 d.o.f.);
    ``mult_dev``, ``spec_t_dev``, ``inv_dev`` = largest relative deviations of the multiplicative
    sharpness (both rescalings), the spectral product under T_α and the function/Fisher–Rao norm;
    ``l2_range``, ``spec_unit_range`` = max/min of ‖θ‖₂ under T_α and of the spectral product under
    the unit-wise rescaling; ``alpha_second`` = the second-largest α."""
    al = np.asarray(R["alphas"], dtype=float)
    i1 = int(np.argmin(np.abs(al - 1)))
    k_hi = len(al) - 1
    lam = R["lam"]
    iso_ratio = [sharpness_ratio(R["iso_draws"][0, e], R["iso_draws"][0, i1]) for e in (0, k_hi)]
    iso_r, iso_se = min(iso_ratio)
    n_draws = R["iso_draws"].shape[-1]
    mult = R["mult"]
    return {
        "i1": i1,
        "lam_ratio": float(lam[0].max() / lam[0, i1]),
        "slope_hi": float(
            np.log(lam[0, k_hi] / lam[0, k_hi - 1]) / np.log(al[k_hi] / al[k_hi - 1])
        ),
        "slope_lo": float(np.log(lam[0, 1] / lam[0, 0]) / np.log(al[1] / al[0])),
        "lam_conv": float(np.max(np.abs(R["lam"] - R["lam2"]) / R["lam2"])),
        "iso_ratio": Estimate(float(iso_r), float(iso_se), n_draws - 1, n_draws),
        "mult_dev": float(np.max(np.abs(mult - mult[0, i1]) / abs(mult[0, i1]))),
        "spec_t_dev": float(np.max(np.abs(R["spec"][0] / R["spec"][0, i1] - 1))),
        "inv_dev": float(max(R["dfun"].max(), np.abs(R["fr"] - 1).max())),
        "l2_range": float(R["l2"][0].max() / R["l2"][0].min()),
        "spec_unit_range": float(R["spec"][1].max() / R["spec"][1].min()),
        "alpha_second": float(al[k_hi - 1]),
    }


# --------------------------------------------------------------------------------------------
# K-FAC over independently trained nets (Martens & Grosse 2015)
# --------------------------------------------------------------------------------------------
KFAC_STATES = ("init", "trained")


def kfac_study(
    trained: Params, init_seed: int, x: torch.Tensor, *, units: int | None = None
) -> dict[str, np.ndarray]:
    """:func:`~layerwise.infogeo.kfac_analysis` of a trained network (``trained_…``) and of its He
    initialisation from ``init_seed`` (``init_…``); with ``units``, also
    :func:`~layerwise.infogeo.fisher_subset` (``…_sub_…``)."""
    widths = [trained["W1"].shape[1]] + [
        trained[f"W{l}"].shape[0] for l in range(1, n_weight_layers(trained) + 1)
    ]
    p_0 = init_mlp(widths, seed=init_seed)
    out = {}
    for tag, p in (("init", p_0), ("trained", trained)):
        r = kfac_analysis(p, x)
        out.update({f"{tag}_{k}": v for k, v in r.items()})
        if units is not None:
            sub = fisher_subset(p, x, units)
            out.update({f"{tag}_sub_{k}": v for k, v in sub.items()})
    return out


def kfac_subset(
    trained: Params, init_seed: int, x: torch.Tensor, units: int
) -> dict[str, np.ndarray]:
    """The ``units`` part of :func:`kfac_study` alone: :func:`~layerwise.infogeo.fisher_subset` of
    a trained network and of its He initialisation from ``init_seed`` (``{state}_sub_…``)."""
    widths = [trained["W1"].shape[1]] + [
        trained[f"W{l}"].shape[0] for l in range(1, n_weight_layers(trained) + 1)
    ]
    out = {}
    for tag, p in (("init", init_mlp(widths, seed=init_seed)), ("trained", trained)):
        out.update({f"{tag}_sub_{k}": v for k, v in fisher_subset(p, x, units).items()})
    return out


def kfac_unit(
    s: int,
    *,
    x: torch.Tensor,
    y: np.ndarray,
    widths: Sequence[int],
    steps: int,
    lr: float,
    target_loss: float,
    seed: int,
    kfac_n: int,
) -> dict[str, np.ndarray]:
    """Net ``s`` of Chapter 8, one independent unit of work: :func:`trained_mlp` from the He
    initialisation of seed ``torch_seed(seed, "mlp", s)`` (:func:`layerwise.seeds.torch_seed`,
    the chapter's stream for net s) and :func:`kfac_study` of it on ``x[:kfac_n]``.  Arrays with a
    leading axis of length 1: the K-FAC outputs under their own names, the weights as ``mlp_W…``
    and the loss history as ``mlp_loss`` (padded with NaN to ``steps``) and ``mlp_n_loss``;
    :func:`unit_net` and :func:`unit_kfac` read net s back."""
    s = int(s)
    if s < 0:
        raise ParameterError(f"unit index s={s!r} must be >= 0")
    init_seed = torch_seed(seed, "mlp", s)
    arrays = trained_mlp(x, y, widths, steps=steps, lr=lr, seed=init_seed, target_loss=target_loss)
    trained = arrays_to_params(arrays)
    kfac = kfac_study(trained, init_seed, x[: check_positive_int("kfac_n", kfac_n)])
    loss = np.full(check_positive_int("steps", steps), np.nan)
    loss[: len(arrays["loss"])] = arrays["loss"]
    out = {k: np.asarray(v)[None] for k, v in kfac.items()}
    out.update({f"mlp_{k}": np.asarray(v)[None] for k, v in arrays.items() if k != "loss"})
    return out | {"mlp_loss": loss[None], "mlp_n_loss": np.array([len(arrays["loss"])])}


def unit_net(units: Mapping[str, np.ndarray], s: int) -> tuple[Params, np.ndarray]:
    """Net ``s`` of the :func:`kfac_unit` units (concatenated on axis 0): its parameters and
    loss history, as :func:`trained_mlp` and :func:`arrays_to_params` give them."""
    params = arrays_to_params(
        {k[4:]: np.asarray(v[s]) for k, v in units.items() if k.startswith("mlp_W")}
    )
    return params, np.asarray(units["mlp_loss"][s][: int(units["mlp_n_loss"][s])])


def unit_kfac(units: Mapping[str, np.ndarray], s: int) -> dict[str, np.ndarray]:
    """Net ``s``'s :func:`kfac_study` outputs of the :func:`kfac_unit` units."""
    return {k: np.asarray(v[s]) for k, v in units.items() if not k.startswith("mlp_")}


def kfac_summary(K: Sequence[Mapping[str, np.ndarray]]) -> dict[str, Any]:
    """Per-layer errors of :func:`kfac_study` over (≥ 2) nets, by state: ``err`` (K-FAC), ``best``
    (best Kronecker product), ``diag`` (diagonal), each ``{state: (nets, layers)}``; ``cross`` and
    ``within`` (``{state: (nets,)}``) and ``cross_share`` = cross²/(cross² + within²), the share of
    K-FAC's squared error ‖F − F̂‖_F² in the blocks between layers it drops; ``gap`` =
    layer-averaged K-FAC error trained − init per net; ``trace_worst``/``trace_worst_se`` =
    tr(G⊗A)/tr(F) at initialisation furthest from 1 over layers and nets, with its jackknife
    standard error; ``trace_worst_trained`` = the same after training (no error); ``trace_mean`` =
    the :class:`Estimate` over nets of the ratio in the layer (``trace_layer``) whose mean is
    furthest from 1, and ``trace_mean_trained`` the same mean after training; ``diag_ratio`` = per
    net, the largest K-FAC error / diagonal error over layers and states."""
    if len(K) < 2:
        raise ParameterError(f"kfac_summary needs >= 2 nets for its standard errors, got {len(K)}")
    S = KFAC_STATES
    out: dict[str, Any] = {
        "err": {t: np.array([k[f"{t}_kfac_error"] for k in K]) for t in S},
        "best": {t: np.array([k[f"{t}_best_kron_error"] for k in K]) for t in S},
        "diag": {t: np.array([k[f"{t}_diag_error"] for k in K]) for t in S},
        "cross": {t: np.array([float(k[f"{t}_cross_layer_error"]) for k in K]) for t in S},
        "within": {t: np.array([float(k[f"{t}_within_block_error"]) for k in K]) for t in S},
    }
    out["gap"] = out["err"]["trained"].mean(1) - out["err"]["init"].mean(1)
    # ‖F − K‖² = ‖dropped blocks‖² + Σ_i ‖F_ii − G_i⊗A_{i−1}‖²: the dropped blocks' share
    out["cross_share"] = {
        t: out["cross"][t] ** 2 / (out["cross"][t] ** 2 + out["within"][t] ** 2) for t in S
    }
    tr_ratio = np.array([k["init_trace_ratio"] for k in K])
    tr_se = np.array([k["init_trace_ratio_se"] for k in K])
    w_net, w_layer = np.unravel_index(np.argmax(np.abs(tr_ratio - 1)), tr_ratio.shape)
    out["trace_worst"] = float(tr_ratio[w_net, w_layer])
    out["trace_worst_se"] = float(tr_se[w_net, w_layer])
    tr_trained = np.array([k["trained_trace_ratio"] for k in K])
    out["trace_worst_trained"] = float(tr_trained.flat[np.argmax(np.abs(tr_trained - 1))])
    # averaged over nets (the expectation over the initialisation), the layer furthest from 1
    layer = int(np.argmax(np.abs(tr_ratio.mean(0) - 1)))
    out["trace_mean"] = estimate(tr_ratio[:, layer])
    out["trace_layer"] = layer + 1
    trained_mean = tr_trained.mean(0)
    out["trace_mean_trained"] = float(trained_mean[np.argmax(np.abs(trained_mean - 1))])
    out["trace_ratio"] = {"init": tr_ratio, "trained": tr_trained}
    # per net, K-FAC's error over the diagonal's in the layer and state where K-FAC does worst
    out["diag_ratio"] = np.array(
        [max(float((k[f"{t}_kfac_error"] / k[f"{t}_diag_error"]).max()) for t in S) for k in K]
    )
    return out


def kfac_findings(KS: Mapping[str, Any]) -> dict[str, Any]:
    """What Chapter 8's K-FAC claims and prose read off :func:`kfac_summary`: ``diag_margin`` (the
    smallest diagonal − K-FAC error over layers, states and nets), and as :class:`Estimate` s over
    nets ``gap``, ``cross_share[state]`` and ``diag_ratio`` (per net, the largest K-FAC / diagonal
    error); ``cross_mean``/``within_mean`` (``{state: mean over nets}``, which part of the error
    dominates); the glued numbers (``glue``, two significant digits; ``glue_3``, three)."""
    S = KFAC_STATES
    err, best, diag, cross, within = (KS[k] for k in ("err", "best", "diag", "cross", "within"))
    gap = estimate(KS["gap"])
    share = {t: estimate(KS["cross_share"][t]) for t in S}
    glue: dict[str, Any] = {
        "kfac_err_max": float(max(err[t].mean(0).max() for t in S)),
        "diag_err_min": float(min(diag[t].mean(0).min() for t in S)),
    }
    for t in S:
        glue.update(
            {
                f"kfac_err_{t}": float(err[t].mean()),
                f"best_err_{t}": float(best[t].mean()),
                f"cross_{t}": float(cross[t].mean()),
                f"within_{t}": float(within[t].mean()),
                f"cross_share_{t}": share[t],
            }
        )
    glue["kfac_nets"] = int(len(KS["gap"]))
    return {
        "diag_margin": float(min((diag[t] - err[t]).min() for t in S)),
        "gap": gap,
        "cross_share": share,
        "diag_ratio": estimate(KS["diag_ratio"]) if "diag_ratio" in KS else None,
        "cross_mean": {t: float(cross[t].mean()) for t in S},
        "within_mean": {t: float(within[t].mean()) for t in S},
        "glue": glue,
        "glue_3": {"kfac_trace_worst": Estimate(KS["trace_worst"], KS["trace_worst_se"])},
    }


KFAC_TABLE_ROWS = {
    "kfac": "K-FAC, within the diagonal blocks (layer mean)",
    "best": "best Kronecker product (layer mean)",
    "cross": "blocks between layers (dropped)",
    "within": "diagonal blocks (Kronecker error)",
    "cross_share": "dropped blocks' share of the squared error",
    "trace": "tr(G⊗A)/tr(F)",
}
"""Rows of :func:`kfac_state_table` (the labels the chapter's table prints)."""


def kfac_state_table(KS: Mapping[str, Any]) -> pd.DataFrame:
    """K-FAC's error at initialisation and after training (Martens & Grosse 2015, §3, Eq. (1) of
    their K-FAC: F_i ≈ G_i ⊗ A_{i−1}), from :func:`kfac_summary`'s ``KS``: per quantity the mean
    over nets with its standard error in each state, and the paired change trained − init per net.
    Rows (:data:`KFAC_TABLE_ROWS`): the layer-averaged relative Frobenius errors of K-FAC and of
    the best Kronecker product within the diagonal blocks; the relative norms of the dropped
    blocks between layers and of the within-block error against the whole Fisher, and the dropped
    blocks' share of the squared error; tr(G⊗A)/tr(F) in the layer ``trace_layer`` (the one
    furthest from 1 at initialisation, named in the row)."""
    per_net = {
        "kfac": {t: KS["err"][t].mean(1) for t in KFAC_STATES},
        "best": {t: KS["best"][t].mean(1) for t in KFAC_STATES},
        "cross": KS["cross"],
        "within": KS["within"],
        "cross_share": KS["cross_share"],
        "trace": {t: KS["trace_ratio"][t][:, KS["trace_layer"] - 1] for t in KFAC_STATES},
    }
    rows = {}
    for key, label in KFAC_TABLE_ROWS.items():
        v = {t: np.asarray(per_net[key][t], float) for t in KFAC_STATES}
        if key == "trace":
            label = f"{label}, layer {KS['trace_layer']}"
        rows[label] = {
            "initialisation": estimate(v["init"]),
            "after training": estimate(v["trained"]),
            "trained − init": estimate(v["trained"] - v["init"]),
        }
    return estimates_frame(rows, "quantity")


NATURAL_GRADIENTS = ("kfac", "blocks", "diagonal", "gradient")
"""The approximate natural gradients of :func:`~layerwise.infogeo.natural_gradient_comparison`."""


def natural_gradient_study(
    trained: Params,
    init_seed: int,
    x: torch.Tensor,
    y: np.ndarray,
    *,
    dampings: Sequence[float],
    structure_damping: float,
) -> dict[str, np.ndarray]:
    """:func:`~layerwise.infogeo.natural_gradient_comparison` of a trained network (``trained_…``)
    and of its He initialisation from ``init_seed`` (``init_…``), on (``x``, ``y``)."""
    widths = [trained["W1"].shape[1]] + [
        trained[f"W{l}"].shape[0] for l in range(1, n_weight_layers(trained) + 1)
    ]
    out = {}
    for tag, p in (("init", init_mlp(widths, seed=init_seed)), ("trained", trained)):
        r = natural_gradient_comparison(
            p, x, y, dampings=dampings, structure_damping=structure_damping
        )
        out.update({f"{tag}_{k}": v for k, v in r.items()})
    return out


def natural_gradient_unit(
    s: int,
    *,
    nets: Mapping[str, np.ndarray],
    seed: int,
    x: torch.Tensor,
    y: np.ndarray,
    dampings: Sequence[float],
    structure_damping: float,
) -> dict[str, np.ndarray]:
    """Net ``s`` of :func:`natural_gradient_study`, one independent unit of work: the trained
    network ``s`` of ``nets`` (the :func:`kfac_unit` units, stacked) and its He initialisation
    from ``torch_seed(seed, "mlp", s)``; the outputs with a leading axis of length 1."""
    if not 0 <= int(s) < len(nets["mlp_n_loss"]):
        raise ParameterError(f"unit index s={s!r} must lie in [0, {len(nets['mlp_n_loss'])})")
    run = natural_gradient_study(
        unit_net(nets, int(s))[0],
        torch_seed(seed, "mlp", int(s)),
        x,
        y,
        dampings=dampings,
        structure_damping=structure_damping,
    )
    return {k: np.asarray(v)[None] for k, v in run.items()}


def natural_gradient_summary(runs: Sequence[Mapping[str, np.ndarray]], at: int) -> dict[str, Any]:
    """:func:`natural_gradient_study` over (≥ 2) nets. ``cos[state][name]``: (nets, dampings)
    cosines with the exact damped natural gradient of each of :data:`NATURAL_GRADIENTS`. As
    :class:`Estimate` s over nets, with the worse of the two states per net: ``inverse_block``
    = inverse_off_diagonal / fisher_off_diagonal (how much nearer block-diagonal the damped
    inverse is than F; Martens & Grosse 2015, §4) and ``inverse_block_rotated``, the same ratio
    for a random rotation of F (same spectrum, no layer structure); ``inverse_tridiagonal`` = the
    share of the far blocks in the off-diagonal norm, inverse over F (nearer block-tridiagonal);
    ``factorisation_cost`` = cos_blocks − cos_kfac at the damping index ``at`` (the direction lost
    to the Kronecker factorisation beyond what dropping the blocks between layers loses); and
    ``blocks_cost`` = 1 − cos_blocks there (what dropping the blocks between layers loses). Per
    state (``[state]``), over nets: ``inverse_top`` = inverse_top_off_diagonal /
    fisher_off_diagonal (the ratio on the eigen-directions of F above the damping),
    ``inverse_top_rotated`` (the same for the rotated F) and ``inverse_top_excess`` =
    ``inverse_top`` − ``inverse_top_rotated``, paired net by net (< 0: nearer block-diagonal
    than the spectrum alone makes it). ``shares[state]``: means over nets of the structure shares
    and of ``below_damping_fraction`` / ``below_damping_inverse_share``."""
    if len(runs) < 2:
        raise ParameterError(f"natural_gradient_summary needs >= 2 nets, got {len(runs)}")
    S = KFAC_STATES

    def per_net(f: Callable[[Mapping[str, np.ndarray], str], float], worst: Callable) -> Estimate:
        return estimate([worst(f(r, t) for t in S) for r in runs])

    def per_state(f: Callable[[Mapping[str, np.ndarray], str], float]) -> dict[str, Estimate]:
        return {t: estimate([f(r, t) for r in runs]) for t in S}

    def ratio(num: str, den: str) -> Callable[[Mapping[str, np.ndarray], str], float]:
        return lambda r, t: float(r[f"{t}_{num}_off_diagonal"] / r[f"{t}_{den}_off_diagonal"])

    block, block_rotated = ratio("inverse", "fisher"), ratio("rotated_inverse", "rotated_fisher")
    top, top_rotated = (
        ratio("inverse_top", "fisher"),
        ratio("rotated_inverse_top", "rotated_fisher"),
    )

    def tridiagonal(r: Mapping[str, np.ndarray], t: str) -> float:
        inv = r[f"{t}_inverse_off_tridiagonal"] / r[f"{t}_inverse_off_diagonal"]
        fis = r[f"{t}_fisher_off_tridiagonal"] / r[f"{t}_fisher_off_diagonal"]
        return float(inv / fis)

    def cost(r: Mapping[str, np.ndarray], t: str) -> float:
        return float(r[f"{t}_cos_blocks"][at] - r[f"{t}_cos_kfac"][at])

    shares = [  # the structure shares and the damping's reach: every per-state scalar
        k[len("init_") :]
        for k in runs[0]
        if k.startswith("init_") and not k.startswith(("init_cos_", "init_lambda"))
    ]
    return {
        "cos": {
            t: {k: np.array([r[f"{t}_cos_{k}"] for r in runs]) for k in NATURAL_GRADIENTS}
            for t in S
        },
        "inverse_block": per_net(block, max),
        "inverse_block_rotated": per_net(block_rotated, max),
        "inverse_top": per_state(top),
        "inverse_top_rotated": per_state(top_rotated),
        "inverse_top_excess": per_state(lambda r, t: top(r, t) - top_rotated(r, t)),
        "inverse_tridiagonal": per_net(tridiagonal, max),
        "factorisation_cost": per_net(cost, min),
        "blocks_cost": per_state(lambda r, t: float(1 - r[f"{t}_cos_blocks"][at])),
        "shares": {
            t: {k: float(np.mean([r[f"{t}_{k}"] for r in runs])) for k in shares} for t in S
        },
    }


def inverse_structure_truth(
    sizes: Sequence[int],
    damping: float,
    seed: int,
    above: float = 0.3,
    mixed: int = 10,
    rotated_tol: float = 0.05,
) -> dict[str, float]:
    """Estimator control of the inverse-structure claims on synthetic truth with the chapter's
    layer ``sizes`` and relative damping: F = Σ w qqᵀ (tr F = P, so λ = ``damping``) whose
    eigenvectors are layer-local except ``mixed`` per layer, which are mixed across the layers
    by a random rotation and carry most of F's norm (eigenvalues log-spaced over one decade, the
    rest of the trace); a fraction ``above`` of the local ones lie above λ (log-spaced over
    [2λ, 100λ]) and the others are 0. The inverse's part above λ is then block-diagonal but for
    the weak mixed terms, and F is not. Returns ``structured_excess`` (the claim's quantity,
    :func:`~layerwise.infogeo.inverse_structure`'s ratio on the directions above λ minus its
    rotated control's), ``structured_exact`` (the same from the construction itself),
    ``rotated_excess`` (the claim's quantity for a Haar rotation of the same F: ≈ 0) and
    ``passed``: 1.0 when the first agrees with the construction to 10⁻⁶ and the last lies within
    ±``rotated_tol``, else 0.0."""
    sizes = [check_positive_int("sizes", v) for v in sizes]
    check_positive("damping", damping)
    check_fraction("above", above)
    mixed = check_positive_int("mixed", mixed)
    if mixed > min(sizes):
        raise ParameterError(f"mixed={mixed} must be <= the smallest layer size {min(sizes)}")
    gen = torch.Generator().manual_seed(int(seed))
    P = sum(sizes)
    basis = torch.block_diag(*[haar_rotation(n, gen) for n in sizes])
    starts = np.cumsum([0, *sizes[:-1]])
    cross = [int(a + k) for a in starts for k in range(mixed)]
    basis[:, cross] = basis[:, cross] @ haar_rotation(
        len(cross), gen
    )  # directions across the layers
    local = [i for i in range(P) if i not in set(cross)][: int(above * P)]
    lam = damping  # tr F = P below, so λ = damping · tr F / P = damping
    w = torch.zeros(P, dtype=torch.float64)
    w[local] = torch.logspace(
        float(np.log10(2 * lam)), float(np.log10(100 * lam)), len(local), dtype=torch.float64
    )
    spread = torch.logspace(0, 1, len(cross), dtype=torch.float64)
    w[cross] = spread * (P - float(w[local].sum())) / float(spread.sum())
    if not float(w[cross].min()) > 100 * lam:
        raise ParameterError(f"damping={damping!r} is too large for this construction (≤ 0.02)")
    F = (basis * w) @ basis.T

    def excess(r: Mapping[str, float]) -> float:
        return (
            r["inverse_top_off_diagonal"] / r["fisher_off_diagonal"]
            - r["rotated_inverse_top_off_diagonal"] / r["rotated_fisher_off_diagonal"]
        )

    structured = inverse_structure(F, lam, sizes)
    keep = [*cross, *local]
    top = (basis[:, keep] / (w[keep] + lam)) @ basis[:, keep].T
    exact = block_shares(top, sizes)["off_diagonal"] / block_shares(F, sizes)["off_diagonal"]
    R = haar_rotation(P, gen)
    rotated = inverse_structure(R @ F @ R.T, lam, sizes)
    control = (
        structured["rotated_inverse_top_off_diagonal"] / structured["rotated_fisher_off_diagonal"]
    )
    out = {
        "structured_excess": excess(structured),
        "structured_exact": exact - control,
        "rotated_excess": excess(rotated),
    }
    # the control passes when the construction is recovered to round-off and the rotation
    # scores its control's value within ``rotated_tol``
    out["passed"] = float(
        abs(out["structured_excess"] - out["structured_exact"]) < 1e-6
        and abs(out["rotated_excess"]) < rotated_tol
    )
    return out


# --------------------------------------------------------------------------------------------
# Capacity measures under label randomisation (Liang et al. 2019; Zhang et al. 2017)
# --------------------------------------------------------------------------------------------
def label_randomisation_run(
    x: torch.Tensor,
    y: np.ndarray,
    x_test: torch.Tensor,
    y_test: np.ndarray,
    widths: Sequence[int],
    *,
    fraction: float,
    budget: int,
    steps: int,
    lr: float,
    target_loss: float,
    label_seed: int,
    init_seed: int,
) -> dict[str, np.ndarray]:
    """One run of the label-randomisation experiment (Liang et al. 2019; Zhang et al. 2017): a
    ``fraction`` of the training labels randomised, one
    :func:`~layerwise.infogeo.train_two_protocols` run (at most ``steps`` steps), and for each
    protocol ``q`` in :data:`~layerwise.infogeo.PROTOCOLS` (``budget``: after ``budget`` steps;
    ``loss``: at the first loss ≤ ``target_loss``): :func:`~layerwise.infogeo.capacity_measures`
    and :func:`~layerwise.infogeo.fisher_rao_factors` on the training set, the test accuracy and
    the training loss, as keys ``{q}_{name}``; also ``target_step`` (−1 if the target was not
    reached: then the ``loss_…`` entries are NaN)."""
    yr = randomize_labels(y, fraction, widths[-1], seed=label_seed)
    run = train_two_protocols(
        x,
        yr,
        widths,
        budget=budget,
        max_steps=steps,
        lr=lr,
        seed=init_seed,
        target_loss=target_loss,
    )
    yoh = one_hot(yr, widths[-1])
    target = -1 if run["target_step"] is None else run["target_step"]
    out: dict[str, np.ndarray] = {"target_step": np.array(target)}
    for q in PROTOCOLS:
        p = run[q]
        if p is None:  # the target loss was not reached within ``steps``
            p_nan = run["budget"]
            keys = list(capacity_measures(p_nan, x, yr)) + list(fisher_rao_factors(p_nan, x, yr))
            out.update(
                {f"{q}_{k}": np.array(np.nan) for k in keys + ["test_accuracy", "final_loss"]}
            )
            continue
        m = {**capacity_measures(p, x, yr), **fisher_rao_factors(p, x, yr)}
        with torch.no_grad():
            m["final_loss"] = float(loss_fn(p, x, yoh))
        m["test_accuracy"] = float((forward(p, x_test).argmax(1).numpy() == y_test).mean())
        out.update({f"{q}_{k}": np.array(v) for k, v in m.items()})
    return out


def label_randomisation_unit(
    s: int,
    *,
    fractions: Sequence[float],
    seed: int,
    **run: Any,
) -> dict[str, np.ndarray]:
    """Net ``s`` of the label-randomisation experiment at every fraction of ``fractions``, one
    independent unit of work: :func:`label_randomisation_run` with the labels of
    ``torch_seed(seed, "labels", s, ‰)`` (‰ the fraction in per mille) and the initialisation
    of ``torch_seed(seed, "randnet", s)``; each output as an array (1, len(fractions)).
    ``run``: the other arguments of :func:`label_randomisation_run`.
    :func:`label_randomisation_rows` turns the units into the table's rows."""
    s = int(s)
    if s < 0 or not fractions:
        raise ParameterError(f"unit index s={s!r} must be >= 0 and fractions non-empty")
    runs = []
    for f in fractions:
        permille = int(round(check_fraction("fractions", f) * 1000))
        runs.append(
            label_randomisation_run(
                fraction=float(f),
                label_seed=torch_seed(seed, "labels", s, permille),
                init_seed=torch_seed(seed, "randnet", s),
                **run,
            )
        )
    return {k: np.array([r[k] for r in runs])[None] for k in runs[0]}


def label_randomisation_rows(
    units: Mapping[str, np.ndarray], fractions: Sequence[float]
) -> pd.DataFrame:
    """The :func:`label_randomisation_unit` units (nets, fractions) as the runs' table: one row
    per (fraction, net), fraction-major, with ``fraction``, ``net`` and every output."""
    n_nets = len(next(iter(units.values())))
    return pd.DataFrame(
        [
            {"fraction": float(f), "net": s, **{k: float(v[s, j]) for k, v in units.items()}}
            for j, f in enumerate(fractions)
            for s in range(n_nets)
        ]
    )


def loss_share(R: Any, fr_over_margin: Any) -> Estimate:
    """Share of the change of log(‖θ‖_fr/γ) between two label conditions carried by the loss factor
    R of :func:`~layerwise.infogeo.fisher_rao_factors`: mean Δlog R / mean Δlog(‖θ‖_fr/γ), where Δ
    is random − clean for each pair of networks with the same initialisation (arrays of shape
    (nets, 2), columns clean and random); since log(‖θ‖_fr/γ) = log(L+1) + log R + log(M/γ),
    1 − share is carried by M/γ. Returns the share with its delete-one jackknife standard error
    over the pairs and n − 1 d.o.f."""
    R, F = np.log(np.asarray(R, float)), np.log(np.asarray(fr_over_margin, float))
    if R.shape != F.shape or R.ndim != 2 or R.shape[1] != 2 or R.shape[0] < 2:
        raise ParameterError(
            f"loss_share needs two arrays of shape (nets >= 2, 2); got {R.shape} and {F.shape}"
        )
    d = np.stack([R[:, 1] - R[:, 0], F[:, 1] - F[:, 0]], 1)
    share, se = jackknife_se(lambda s: s[:, 0].mean() / s[:, 1].mean(), d)
    return Estimate(float(share), float(se), len(d) - 1, len(d))


def welch_log_ratio(lo: Any, hi: Any) -> Estimate:
    """mean log(hi) − mean log(lo) of two independent samples of positive values, its standard
    error and Welch–Satterthwaite degrees of freedom (the sum of the two n − 1 when both spreads
    are 0)."""
    a, b = estimate(np.log(np.asarray(lo, float))), estimate(np.log(np.asarray(hi, float)))
    se = float(np.hypot(b.se, a.se))
    dof = se**4 / (b.se**4 / b.dof + a.se**4 / a.dof) if se > 0 else float(b.dof + a.dof)
    return Estimate(b.mean - a.mean, se, float(dof), a.n + b.n)


RAND_MEASURES = (
    "l2",
    "frobenius_product",
    "spectral_product",
    "path_norm",
    "fisher_rao_model",
    "fisher_rao_empirical",
)
#: the four norm-based measures of :data:`RAND_MEASURES` (the rest are the Fisher–Rao norms)
RAND_NORMS = RAND_MEASURES[:4]
RAND_LABELS = {
    "l2": "ℓ₂ norm",
    "frobenius_product": "Frobenius product",
    "spectral_product": "spectral product",
    "path_norm": "ℓ₂ path norm",
    "fisher_rao_model": "Fisher–Rao (model)",
    "fisher_rao_empirical": "Fisher–Rao (empirical)",
}
PROTOCOL_NAMES = {"budget": "fixed budget", "loss": "fixed loss"}


def protocol_table(runs: Any, q: str) -> Any:
    """One protocol's columns of the label-randomisation runs (:func:`label_randomisation_run` rows
    with ``fraction`` and ``net``), the prefix ``{q}_`` dropped, and each measure (and effective
    margin M) divided by the margin γ as ``'<measure>/γ'``."""
    check_choice("q", q, PROTOCOLS)
    own = runs.filter(regex=f"^{q}_").rename(columns=lambda c: c[len(q) + 1 :])
    T = runs[["fraction", "net", "target_step"]].join(own)
    for m in [*RAND_MEASURES, "M_model", "M_empirical"]:
        T[m + "/γ"] = T[m] / T["margin"]
    return T


def label_randomisation_summary(runs: pd.DataFrame) -> dict[str, Any]:
    """Everything Chapter 8 reads off the label-randomisation runs (a DataFrame of
    :func:`label_randomisation_run` outputs with ``fraction`` and ``net``; fractions 0 and 1
    present, the same nets at both): per protocol the :func:`protocol_table` (``tables``); the
    Spearman ρ of each margin-normalised measure with the fraction at a fixed loss (``rho``); the
    Welch mean log-ratio (random / clean) of each measure over γ, of the effective margins and of
    the loss factors R (``log_ratio[q, name]``, an :class:`Estimate`; :func:`welch_log_ratio`); the
    loss factor's share of the Fisher–Rao rise (``loss_share[q, k]``, :func:`loss_share`); the
    test accuracy at 100 % random labels (``chance``); the smallest training accuracy over every
    run and both protocols, a fixed-loss run that did not reach its target counting as 0
    (``min_train_accuracy``); and the numbers the prose quotes (``glue``, two significant digits;
    ``glue_3``, three)."""
    meas = list(RAND_MEASURES)
    RT = {q: protocol_table(runs, q) for q in PROTOCOLS}
    rho = {m: float(spearmanr(RT["loss"].fraction, RT["loss"][m + "/γ"]).statistic) for m in meas}
    clean = {q: RT[q][RT[q].fraction == 0].sort_values("net") for q in PROTOCOLS}
    rand = {q: RT[q][RT[q].fraction == 1].sort_values("net") for q in PROTOCOLS}
    LR = {
        (q, m): welch_log_ratio(clean[q][m + "/γ"].values, rand[q][m + "/γ"].values)
        for q in PROTOCOLS
        for m in meas + ["M_model", "M_empirical"]
    }
    LR.update(
        {
            (q, f"R_{k}"): welch_log_ratio(clean[q][f"R_{k}"].values, rand[q][f"R_{k}"].values)
            for q in PROTOCOLS
            for k in ("model", "empirical")
        }
    )
    SHARE = {
        (q, k): loss_share(
            np.stack([clean[q][f"R_{k}"], rand[q][f"R_{k}"]], 1),
            np.stack([clean[q][f"fisher_rao_{k}/γ"], rand[q][f"fisher_rao_{k}/γ"]], 1),
        )
        for q in PROTOCOLS
        for k in ("model", "empirical")
    }
    chance = estimate(rand["loss"].test_accuracy.values)
    # a fixed-loss run that never reached its target loss has fitted nothing at that loss: 0
    min_acc = float(
        min(
            RT[q]
            .train_accuracy.where((RT[q].target_step >= 0) | (q != "loss"), 0.0)
            .fillna(0.0)
            .min()
            for q in PROTOCOLS
        )
    )

    glue: dict[str, Any] = {}
    for q in PROTOCOLS:
        glue[f"rand_loss_clean_{q}"] = float(clean[q].final_loss.mean())
        glue[f"rand_loss_random_{q}"] = float(rand[q].final_loss.mean())
    for k in ("model", "empirical"):
        glue[f"share_{k}_budget"] = SHARE["budget", k]
    glue["rand_unreached"] = int((runs.target_step < 0).sum())
    glue_3 = {
        "rand_acc1": float(chance.mean),
        "rand_steps_clean": float(clean["loss"].target_step.mean()),
        "rand_steps_random": float(rand["loss"].target_step.mean()),
    }
    return {
        "tables": RT,
        "rho": rho,
        "log_ratio": LR,
        "loss_share": SHARE,
        "chance": chance,
        "min_train_accuracy": min_acc,
        "glue": glue,
        "glue_3": glue_3,
    }


RAND_TABLE_COLUMNS = {
    "fisher_rao": "‖θ‖fr / γ",
    "R": "loss factor R",
    "M": "margin factor M / γ",
}
"""Column groups of :func:`label_randomisation_table`: the log-ratios it prints."""


def label_randomisation_table(
    log_ratio: Mapping[tuple[str, str], Estimate], share: Mapping[tuple[str, str], Estimate]
) -> pd.DataFrame:
    """The Fisher–Rao norms under label randomisation, one row per protocol and Fisher (model,
    empirical), from :func:`label_randomisation_summary`'s ``log_ratio`` and ``loss_share``: the
    mean natural log-ratio (100 % / 0 % random labels) of the norm over γ, of its loss factor R and
    of its effective margin over γ (‖θ‖_fr = (L+1)·R·M, Liang et al. 2019, Eq. (3.1) split by
    :func:`~layerwise.infogeo.fisher_rao_factors`), each with its Welch standard error, and the
    loss factor's share of the change of the norm over γ (:func:`loss_share`) under the fixed
    budget (none under the fixed loss, where the norms barely move)."""
    rows: dict[Any, dict[str, Estimate | None]] = {}
    for q in PROTOCOLS:
        for k in ("model", "empirical"):
            key = {"fisher_rao": f"fisher_rao_{k}", "R": f"R_{k}", "M": f"M_{k}"}
            row: dict[str, Estimate | None] = {
                RAND_TABLE_COLUMNS[c]: log_ratio[q, name] for c, name in key.items()
            }
            row["share of R"] = share[q, k] if q == "budget" else None
            rows[PROTOCOL_NAMES[q], f"{k} Fisher"] = row
    return estimates_frame(rows, ["protocol", "Fisher–Rao norm"])


# --------------------------------------------------------------------------------------------
# Tangent sample sensitivity on activation regions (Daróczy, Lemma 3.1)
# --------------------------------------------------------------------------------------------
def tangent_check(
    params: Params, x: torch.Tensor, n_pairs: int, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """Daróczy's Lemma 3.1 seen on data: relative Frobenius change ‖S(x′) − S(x)‖/‖S(x)‖ of the
    tangent sample sensitivity (:func:`layerwise.networks.tangent_sensitivity`) between points of
    one activation region (``same``: c·x for a random c in [0.2, 5], and x plus the first of
    perturbations of size 10⁻³, 10⁻⁴, 10⁻⁵ that keeps the pattern) and between two inputs with
    different patterns (``different``), for ``n_pairs`` disjoint pairs of rows of ``x``.
    Bias-free networks only (c·x is in x's region)."""
    if has_bias(params):
        raise ParameterError(
            "tangent_check needs a bias-free network (c·x lies in x's region only then)"
        )
    n_pairs = check_positive_int("n_pairs", n_pairs)
    same, diff = [], []
    idx = rng.choice(len(x), size=2 * n_pairs, replace=False)
    for j in range(n_pairs):
        x0, x1 = x[idx[2 * j]], x[idx[2 * j + 1]]
        S0 = tangent_sensitivity(params, x0)
        pat0 = activation_pattern(params, x0)

        def rel(x_: torch.Tensor, S0: torch.Tensor = S0) -> float:
            return float((tangent_sensitivity(params, x_) - S0).norm() / S0.norm())

        x_c = float(rng.uniform(0.2, 5.0)) * x0
        if not torch.equal(activation_pattern(params, x_c), pat0):
            raise AssertionError("c·x left x's activation region: the network has biases?")
        same.append(rel(x_c))
        for scale in (1e-3, 1e-4, 1e-5):  # a small perturbation that keeps the pattern
            x_p = x0 + scale * torch.tensor(rng.standard_normal(x.shape[1]))
            if torch.equal(activation_pattern(params, x_p), pat0):
                same.append(rel(x_p))
                break
        if not torch.equal(activation_pattern(params, x1), pat0):
            diff.append(rel(x1))
    return {"same": np.array(same), "different": np.array(diff)}
