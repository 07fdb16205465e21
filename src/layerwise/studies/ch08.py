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
    HOMOGENEOUS,
    KFAC_STATES,
    PROTOCOLS,
    fisher_subset,
    kfac_analysis,
    label_randomisation_run,
    loss_share,
    natural_gradient_comparison,
    train_mlp,
)
from ..networks import (
    Params,
    init_mlp,
    n_weight_layers,
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
from ..stats import Estimate, estimate

# --------------------------------------------------------------------------------------------
# Chapter parameters and data
# --------------------------------------------------------------------------------------------
_POS_INT = ("fr_n", "hidden", "n_train", "train_steps", "lanczos_iter", "sharp_draws", "kfac_n")
_POS_INT += ("kfac_units", "kfac_seeds", "ng_nets", "rand_seeds", "rand_hidden", "rand_steps")
_POS_INT += ("rand_budget", "tangent_pairs")
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
    for k, n_min, check, required, what in (
        ("alphas", 3, check_positive, (1,), "positive numbers (1: the trained parametrisation)"),
        ("rand_fractions", 2, check_fraction, (0, 1), "fractions in [0, 1]"),
    ):
        v = P.get(k)
        if v is None:
            continue
        if isinstance(v, (str, bytes)) or not isinstance(v, Sequence) or len(v) < n_min:
            raise ParameterError(f"{k}={v!r} must be a list of >= {n_min} {what}")
        for a in v:
            check(k, a)
        if any(r not in [float(a) for a in v] for r in required):
            raise ParameterError(f"{k}={v!r} must include {' and '.join(map(str, required))}")
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


_EPS = float(np.finfo(np.float64).eps)


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


# --------------------------------------------------------------------------------------------
# K-FAC over independently trained nets (Martens & Grosse 2015)
# --------------------------------------------------------------------------------------------


def both_states(
    trained: Params, init_seed: int, analyse: Callable[[Params], Mapping[str, Any]]
) -> dict[str, Any]:
    """``analyse`` of a trained network's He initialisation from ``init_seed`` (keys
    ``init_…``) and of the trained network itself (``trained_…``): :data:`KFAC_STATES`."""
    widths = [trained["W1"].shape[1]]
    widths += [trained[f"W{l}"].shape[0] for l in range(1, n_weight_layers(trained) + 1)]
    out = {}
    for tag, p in zip(KFAC_STATES, (init_mlp(widths, seed=init_seed), trained), strict=True):
        out.update({f"{tag}_{k}": v for k, v in analyse(p).items()})
    return out


def kfac_study(trained: Params, init_seed: int, x: torch.Tensor) -> dict[str, np.ndarray]:
    """:func:`~layerwise.infogeo.kfac_analysis` of a trained network and of its He initialisation
    from ``init_seed`` (:func:`both_states`)."""
    return both_states(trained, init_seed, lambda p: kfac_analysis(p, x))


def kfac_subset(
    trained: Params, init_seed: int, x: torch.Tensor, units: int
) -> dict[str, np.ndarray]:
    """:func:`~layerwise.infogeo.fisher_subset` of a trained network and of its He initialisation
    from ``init_seed`` (``{state}_sub_…``; :func:`both_states`)."""
    return both_states(trained, init_seed, lambda p: {
        f"sub_{k}": v for k, v in fisher_subset(p, x, units).items()
    })


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


def kfac_findings(KS: Mapping[str, Any]) -> dict[str, Any]:
    """What Chapter 8's K-FAC claims and prose read off :func:`kfac_summary`: ``diag_margin`` (the
    smallest diagonal − K-FAC error over layers, states and nets); as :class:`Estimate` s over
    nets ``gap``, ``cross_share[state]`` and ``diag_ratio`` (per net, the largest K-FAC / diagonal
    error); ``err_max`` (the largest layer mean of K-FAC's error over both states) and
    ``diag_err_min`` (the smallest of the diagonal's); per state the means over nets and layers
    ``err_mean``, ``best_mean``, ``cross_mean``, ``within_mean`` (``{state: mean}``); ``nets``;
    ``trace_worst``, the worst trace ratio at initialisation with its standard error."""
    S = KFAC_STATES
    err, best, diag, cross, within = (KS[k] for k in ("err", "best", "diag", "cross", "within"))
    return {
        "diag_margin": float(min((diag[t] - err[t]).min() for t in S)),
        "gap": estimate(KS["gap"]),
        "cross_share": {t: estimate(KS["cross_share"][t]) for t in S},
        "diag_ratio": estimate(KS["diag_ratio"]) if "diag_ratio" in KS else None,
        "err_max": float(max(err[t].mean(0).max() for t in S)),
        "diag_err_min": float(min(diag[t].mean(0).min() for t in S)),
        **{
            f"{name}_mean": {t: float(v[t].mean()) for t in S}
            for name, v in (("err", err), ("best", best), ("cross", cross), ("within", within))
        },
        "nets": int(len(KS["gap"])),
        "trace_worst": Estimate(KS["trace_worst"], KS["trace_worst_se"]),
    }


def kfac_per_net(KS: Mapping[str, Any]) -> dict[str, dict[str, np.ndarray]]:
    """Per quantity and state, one value per net, from :func:`kfac_summary`'s ``KS`` (Martens &
    Grosse 2015, §3): ``kfac`` and ``best``, the layer-averaged relative Frobenius errors of K-FAC
    and of the best Kronecker product within the diagonal blocks; ``cross`` and ``within``, the
    relative norms of the dropped blocks between layers and of the within-block error against the
    whole Fisher; ``cross_share``, the dropped blocks' share of the squared error; ``trace``,
    tr(G⊗A)/tr(F) in the layer ``KS["trace_layer"]`` (the one furthest from 1 at
    initialisation)."""
    per_net = {
        "kfac": {t: KS["err"][t].mean(1) for t in KFAC_STATES},
        "best": {t: KS["best"][t].mean(1) for t in KFAC_STATES},
        "cross": KS["cross"],
        "within": KS["within"],
        "cross_share": KS["cross_share"],
        "trace": {t: KS["trace_ratio"][t][:, KS["trace_layer"] - 1] for t in KFAC_STATES},
    }
    return {k: {t: np.asarray(v[t], float) for t in KFAC_STATES} for k, v in per_net.items()}


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
    return both_states(trained, init_seed, lambda p: natural_gradient_comparison(
        p, x, y, dampings=dampings, structure_damping=structure_damping
    ))


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


# --------------------------------------------------------------------------------------------
# Capacity measures under label randomisation (Liang et al. 2019; Zhang et al. 2017)
# --------------------------------------------------------------------------------------------


def label_randomisation_unit(
    s: int,
    *,
    fractions: Sequence[float],
    seed: int,
    **run: Any,
) -> dict[str, np.ndarray]:
    """Net ``s`` of the label-randomisation experiment at every fraction of ``fractions``, one
    independent unit of work: :func:`~layerwise.infogeo.label_randomisation_run` with the labels of
    ``torch_seed(seed, "labels", s, ‰)`` (‰ the fraction in per mille) and the initialisation
    of ``torch_seed(seed, "randnet", s)``; each output as an array (1, len(fractions)).
    ``run``: the other arguments of :func:`~layerwise.infogeo.label_randomisation_run`.
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


def welch_log_ratio(lo: Any, hi: Any) -> Estimate:
    """mean log(hi) − mean log(lo) of two independent samples of positive values, its standard
    error and Welch–Satterthwaite degrees of freedom (the sum of the two n − 1 when both spreads
    are 0)."""
    a, b = estimate(np.log(np.asarray(lo, float))), estimate(np.log(np.asarray(hi, float)))
    se = float(np.hypot(b.se, a.se))
    dof = se**4 / (b.se**4 / b.dof + a.se**4 / a.dof) if se > 0 else float(b.dof + a.dof)
    return Estimate(b.mean - a.mean, se, float(dof), a.n + b.n)


RAND_MEASURES = ("l2", "frobenius_product", "spectral_product", "path_norm")
RAND_MEASURES += ("fisher_rao_model", "fisher_rao_empirical")
#: the four norm-based measures of :data:`RAND_MEASURES` (the rest are the Fisher–Rao norms)
RAND_NORMS = RAND_MEASURES[:4]


def protocol_table(runs: Any, q: str) -> Any:
    """One protocol's columns of the label-randomisation runs
    (:func:`~layerwise.infogeo.label_randomisation_run` rows with ``fraction`` and ``net``), the
    prefix ``{q}_`` dropped, and each measure (and effective margin M) divided by the margin γ as
    ``'<measure>/γ'``."""
    check_choice("q", q, PROTOCOLS)
    own = runs.filter(regex=f"^{q}_").rename(columns=lambda c: c[len(q) + 1 :])
    T = runs[["fraction", "net", "target_step"]].join(own)
    for m in [*RAND_MEASURES, "M_model", "M_empirical"]:
        T[m + "/γ"] = T[m] / T["margin"]
    return T


def label_randomisation_summary(runs: pd.DataFrame) -> dict[str, Any]:
    """Everything Chapter 8 reads off the label-randomisation runs (a DataFrame of
    :func:`~layerwise.infogeo.label_randomisation_run` outputs with ``fraction`` and ``net``;
    fractions 0 and 1 present, the same nets at both): per protocol the :func:`protocol_table`
    (``tables``); the Spearman ρ of each margin-normalised measure with the fraction at a fixed loss
    (``rho``); the Welch mean log-ratio (random / clean) of each measure over γ, of the effective
    margins and of the loss factors R (``log_ratio[q, name]``, an :class:`Estimate`;
    :func:`welch_log_ratio`); the loss factor's share of the Fisher–Rao rise (``loss_share[q, k]``,
    :func:`loss_share`); the test accuracy at 100 % random labels (``chance``); the smallest
    training accuracy over every run and both protocols, a fixed-loss run that did not reach its
    target counting as 0 (``min_train_accuracy``); per protocol the mean final loss of the clean and
    random nets (``final_loss[q, "clean" | "random"]``); the mean steps to the target loss at a
    fixed loss (``target_steps["clean" | "random"]``) and the number of runs that never reached it
    (``unreached``)."""
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

    return {
        "tables": RT,
        "rho": rho,
        "log_ratio": LR,
        "loss_share": SHARE,
        "chance": chance,
        "min_train_accuracy": min_acc,
        "final_loss": {
            (q, labels): float(runs_q.final_loss.mean())
            for q in PROTOCOLS
            for labels, runs_q in (("clean", clean[q]), ("random", rand[q]))
        },
        "target_steps": {
            labels: float(runs_q.target_step.mean())
            for labels, runs_q in (("clean", clean["loss"]), ("random", rand["loss"]))
        },
        "unreached": int((runs.target_step < 0).sum()),
    }
