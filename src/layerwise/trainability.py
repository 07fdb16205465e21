"""Trainability of deep tanh networks against the correlation depth scale (Schoenholz et al. 2017,
§5 and Fig. 5): the trainings over a (σ_w², depth) grid, the trainable depth L₅₀ read off them,
where it peaks, how it grows with ξ_c (the ceiling of a short training censored) and the
estimator's control on synthetic trainings with a known boundary. Chapter 7 runs it
(:mod:`layerwise.studies.ch07`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .meanfield import depth_scales
from .params import ParameterError, check_nonnegative, check_positive, check_positive_int
from .stats import Estimate, estimate


def check_checkpoint(early_steps: Any, steps: int, name: str = "early_steps") -> None:
    """Refuse a checkpoint that is not None or an integer strictly between 0 and ``steps``."""
    if early_steps is not None and not (
        isinstance(early_steps, int | np.integer)
        and not isinstance(early_steps, bool)
        and 0 < early_steps < steps
    ):
        raise ParameterError(
            f"{name}={early_steps!r} must be None or an integer with 0 < {name} < steps = {steps}"
        )


def train_depth_grid(
    x: np.ndarray,
    y: np.ndarray,
    *,
    sigma_w2s: np.ndarray,
    depth: int,
    sigma_b2: float,
    width: int,
    steps: int,
    lr: float,
    batch: int,
    seed: int,
    early_steps: int | None = None,
    device: str = "cpu",
) -> dict[str, np.ndarray]:
    """Train one deep tanh network per σ_w² (all at once, one batched product per layer) with
    plain minibatch SGD on cross-entropy, from the random initialisation of Chapter 7
    (W ~ N(0, σ_w²/fan_in), b ~ N(0, σ_b²), linear read-out), and return the training accuracy on
    the whole set after ``steps`` steps, plus the accuracy at initialisation and, with
    ``early_steps`` (< ``steps``), the accuracy of the same trainings at that checkpoint
    (``accuracy_early``: plain SGD keeps no state and the mini-batches are drawn step by step from
    one generator, so stopping to measure changes nothing that follows).

    Built by :func:`layerwise.networks.init_mlp` (stacked networks) and trained by
    :func:`layerwise.networks.train` (mini-batches drawn with replacement).
    Schoenholz et al. 2017 train such networks and find them trainable only for depths below a
    small multiple of ξ_c (about 6 ξ_c after long training); this is the experiment behind
    their Fig. 5, at the size of the digits data set.
    """
    import torch

    sig = np.asarray(sigma_w2s, dtype=float)
    if sig.ndim != 1 or len(sig) == 0 or np.any(sig <= 0):
        raise ParameterError(
            f"sigma_w2s={sigma_w2s!r} must be a non-empty 1-D array of positive numbers"
        )
    depth, width, steps, batch = (
        check_positive_int(k, v)
        for k, v in (("depth", depth), ("width", width), ("steps", steps), ("batch", batch))
    )
    check_positive("lr", lr)
    sigma_b2 = check_nonnegative("sigma_b2", sigma_b2)
    check_checkpoint(early_steps, steps)
    from .networks import init_mlp

    g = torch.Generator().manual_seed(int(seed))
    X = torch.as_tensor(x, dtype=torch.float32).reshape(len(x), -1).to(device)
    Y = torch.as_tensor(y, dtype=torch.long).to(device)
    K, d_in, n_cls = len(sig), X.shape[1], int(Y.max()) + 1
    # K stacked networks, one per σ_w²; draws: hidden weights, hidden biases, read-out (no bias),
    # each weight drawn as (fan_in, fan_out) for the batched products h W
    params = init_mlp(
        [d_in, *[width] * depth, n_cls],
        generator=g,
        sigma_w2=sig,
        bias="hidden",
        bias_std=np.sqrt(sigma_b2),
        n_nets=K,
        order="weights_first",
        fan_in_first=True,
        dtype=torch.float32,
    )
    params = {k: v.to(device) for k, v in params.items()}
    # (checkpoint name, steps): the early checkpoint, then the rest of the same trainings
    stages = [("accuracy_early", early_steps)] if early_steps else []
    stages.append(("accuracy", steps - (early_steps or 0)))
    # the K networks are independent (each gets its own gradient, all see the same mini-batches):
    # on CPU they train in groups, one per torch thread, each group on one intra-op thread —
    # tiny products (K × 64 × 64) gain little from a second intra-op thread, which spins and
    # stalls when another process takes a core; the numbers do not depend on the grouping
    # (products and reductions are per network: tested bit for bit)
    parts = 1 if str(device) != "cpu" else max(1, min(K, torch.get_num_threads()))
    if parts == 1:
        res = [_train_group(params, X, Y, n_cls, g, stages, lr, batch, device)]
    else:
        from concurrent.futures import ThreadPoolExecutor

        bounds = np.linspace(0, K, parts + 1).round().astype(int)

        def group(i: int) -> dict[str, np.ndarray]:
            lo, hi = int(bounds[i]), int(bounds[i + 1])
            sub = {k: v[lo:hi].clone() for k, v in params.items()}
            gi = torch.Generator().set_state(g.get_state())  # the same mini-batches for all
            prev = torch.get_num_threads()
            torch.set_num_threads(1)
            try:
                return _train_group(sub, X, Y, n_cls, gi, stages, lr, batch, device)
            finally:
                torch.set_num_threads(prev)

        with ThreadPoolExecutor(max_workers=parts) as pool:
            res = list(pool.map(group, range(parts)))
    return {k: np.concatenate([r[k] for r in res], axis=-1) for k in res[0]}


def _train_group(
    params: dict[str, Any],
    X: Any,
    Y: Any,
    n_cls: int,
    g: Any,
    stages: list[tuple[str, int]],
    lr: float,
    batch: int,
    device: str,
) -> dict[str, np.ndarray]:
    """Train a group of stacked tanh networks ``params`` (K' of them) in place with plain SGD on
    mini-batches of ``batch`` drawn with replacement from generator ``g`` (:func:`train_depth_grid`,
    Schoenholz et al. 2017 §5): ``accuracy_init`` and one accuracy per stage (name, steps) on the
    whole set, each (K',), and ``loss`` (steps, K')."""
    import torch

    from .networks import forward, train

    K = params["W1"].shape[0]

    def accuracy():
        with torch.no_grad():
            return (forward(params, X, "tanh").argmax(-1) == Y).float().mean(1).cpu().numpy()

    def loss(idx):  # one mean cross-entropy per network, (K,)
        logits = forward(params, X[idx], "tanh")  # (K, batch, classes)
        return (
            torch.nn.functional.cross_entropy(
                logits.reshape(-1, n_cls), Y[idx].repeat(K), reduction="none"
            )
            .reshape(K, -1)
            .mean(1)
        )

    out: dict[str, np.ndarray] = {"accuracy_init": accuracy()}
    # the K networks are independent: the gradient of the summed loss is each one's own
    losses = []
    for stage, stage_steps in stages:
        losses.append(
            train(
                params,
                loss,
                lr=lr,
                optimizer="sgd",
                sampling="replacement",
                steps=stage_steps,
                n=len(X),
                batch=batch,
                generator=g,
                device=device,
            )
        )
        out[stage] = accuracy()
    return out | {"loss": np.concatenate(losses)}


def trainable_depth(
    accuracy: Any, depths: Any, threshold: float = 0.5
) -> tuple[np.ndarray, np.ndarray]:
    """The depth L₅₀ at which training accuracy falls through ``threshold``, per row of ``accuracy``
    (…, depths): the row's least-squares non-increasing fit in log L (isotonic regression, so a
    lucky deep network or an unlucky shallow one cannot make the boundary jump), interpolated
    linearly in log L where it crosses. Returns ``(log_l50, censored)``: ``censored`` is +1 where
    the fit stays at or above the threshold at every depth (L₅₀ ≥ the deepest depth, returned
    as it), −1 where it is below at every depth (L₅₀ ≤ the shallowest), 0 where the boundary lies
    inside."""
    from sklearn.isotonic import IsotonicRegression

    depths = np.asarray(depths, dtype=float)
    if depths.ndim != 1 or len(depths) < 2 or np.any(np.diff(depths) <= 0) or depths[0] <= 0:
        raise ParameterError(
            f"depths={depths.tolist()!r} must be at least two increasing positive depths"
        )
    acc = np.asarray(accuracy, dtype=float)
    if acc.shape[-1] != len(depths):
        raise ParameterError(
            f"accuracy has {acc.shape[-1]} depths on its last axis, depths has {len(depths)}"
        )
    log_l = np.log(depths)
    flat = acc.reshape(-1, len(depths))
    out, cens = np.empty(len(flat)), np.zeros(len(flat), dtype=int)
    for i, row in enumerate(flat):
        fit = IsotonicRegression(increasing=False).fit_transform(log_l, row)
        if fit[-1] >= threshold:
            out[i], cens[i] = log_l[-1], 1
        elif fit[0] < threshold:
            out[i], cens[i] = log_l[0], -1
        else:
            j = int(np.nonzero(fit < threshold)[0][0])
            t = (fit[j - 1] - threshold) / (fit[j - 1] - fit[j])
            out[i] = log_l[j - 1] + t * (log_l[j] - log_l[j - 1])
    return out.reshape(acc.shape[:-1]), cens.reshape(acc.shape[:-1])


def peak_location(values: Any, grid: Any, censored: Any | None = None) -> float:
    """Where ``values`` over an evenly spaced ``grid`` peak: the vertex of the parabola through the
    largest value and its two neighbours (clipped to them). NaN — *not identified* — when the
    largest value sits at an end of the grid, is tied with another, or is censored (its true value
    lies beyond what was measured)."""
    v, g = np.asarray(values, dtype=float), np.asarray(grid, dtype=float)
    k = int(np.argmax(v))
    if (
        k in (0, len(v) - 1)
        or np.sum(v == v[k]) > 1
        or (censored is not None and np.asarray(censored)[k] != 0)
    ):
        return float("nan")
    y0, y1, y2 = v[k - 1 : k + 2]
    curvature = y0 - 2 * y1 + y2
    offset = 0.5 * (y0 - y2) / curvature if curvature < 0 else 0.0
    return float(g[k] + float(np.clip(offset, -1.0, 1.0)) * (g[k + 1] - g[k]))


def ceiling_capped(log_l50: Any, censored: Any, depths: Any) -> np.ndarray:
    """Which trainable depths (replicates, σ_w²) lie within reach of the experiment's ceiling.

    The ceiling of a replicate is the deepest L₅₀ it reaches at any σ_w² (the grid's deepest
    depth where a boundary is censored above it): near the transition ξ_c diverges and the
    trainable depth is set by how deep a network the training can train at all, not by ξ_c. An
    L₅₀ within one step of the depth grid (its largest ratio, √2 on a grid doubling every two
    depths) of that ceiling cannot be told from it, so it is capped — censored, like a boundary
    beyond the grid's deepest depth. Returns a boolean array, True where capped (the censored ones
    included)."""
    log_l50, censored = np.asarray(log_l50, dtype=float), np.asarray(censored)
    d = np.asarray(depths, dtype=float)
    step = float(np.max(np.log(d[1:] / d[:-1])))
    ceiling = np.max(log_l50, axis=-1, keepdims=True)
    return (censored != 0) | (log_l50 > ceiling - step + 1e-12)


def boundary_fit(
    log_l50: Any, censored: Any, xi: Any, depths: Any, cap: bool = True, keep: Any = None
) -> dict[str, np.ndarray]:
    """Per replicate, the log-log slope of L₅₀ against ξ_c and the geometric-mean ratio
    k = L₅₀/ξ_c over the σ_w² whose boundary is a point: inside the grid and, with ``cap``,
    not within reach of the ceiling (:func:`ceiling_capped`). ``slope`` NaN with fewer than
    three points (or no spread in ξ_c), ``k`` NaN with none; ``used`` (replicates, σ_w²) the
    points that entered. With ``cap=False``, only the grid's own censoring applies (the estimator
    the book used before the ceiling was found: the ceiling then flattens the slope). ``keep``
    (replicates, σ_w²), if given, restricts the points further (e.g. to those used at two
    checkpoints, to compare slopes on the same σ_w²)."""
    log_l50, censored = np.atleast_2d(log_l50), np.atleast_2d(censored)
    log_xi = np.log(np.asarray(xi, dtype=float))
    used = ceiling_capped(log_l50, censored, depths) if cap else censored != 0
    used = ~used if keep is None else ~used & np.asarray(keep, dtype=bool)
    slope, k = np.full(len(log_l50), np.nan), np.full(len(log_l50), np.nan)
    for r in range(len(log_l50)):
        u = used[r]
        if u.sum() >= 1:
            k[r] = float(np.exp(np.mean(log_l50[r, u] - log_xi[u])))
        if u.sum() >= 3 and np.ptp(log_xi[u]) > 0:
            slope[r] = float(np.polyfit(log_xi[u], log_l50[r, u], 1)[0])
    return {"slope": slope, "k": k, "used": used}


def trainability_boundary(
    accuracy: np.ndarray,
    sigma_w2: np.ndarray,
    depths: np.ndarray,
    sigma_b2: float,
    threshold: float = 0.5,
) -> dict[str, Any]:
    """The trainability boundary of a replicated
    :func:`~layerwise.studies.ch07.trainability_grid` (accuracy (replicates, σ_w², depths)) against
    ξ_c (Schoenholz et al. 2017, §5: trainable for L ≲ 6 ξ_c).

    Per replicate r and σ_w²: ``log_l50``/``censored`` (:func:`trainable_depth`) and ``capped``
    (:func:`ceiling_capped`). Per replicate: ``peak`` (:func:`peak_location` of log L₅₀ over σ_w²,
    NaN where not identified), ``slope`` and ``k`` (:func:`boundary_fit`: log-log slope of L₅₀
    against ξ_c and geometric mean of L₅₀/ξ_c over the σ_w² whose boundary lies inside the grid and
    below the ceiling; ``used``). Each of the three as an :class:`~layerwise.stats.Estimate` over
    replicates (``peak_est``, ``slope_est``, ``k_est``; None unless every replicate gives a value
    and there are at least two), plus ``xi_c`` per σ_w², ``l50`` = exp of the replicates' mean
    log L₅₀ and ``inside`` (no replicate censored) per σ_w²."""

    acc = np.asarray(accuracy, dtype=float)
    if acc.ndim != 3:
        raise ParameterError(f"accuracy must be (replicates, σ_w², depths), got shape {acc.shape}")
    sig = np.asarray(sigma_w2, dtype=float)
    xi = np.array([depth_scales(s, sigma_b2)["xi_c"] for s in sig])
    log_l50, cens = trainable_depth(acc, depths, threshold)
    peak = np.array([peak_location(log_l50[r], sig, cens[r]) for r in range(len(acc))])
    fit = boundary_fit(log_l50, cens, xi, depths)

    def est(x: np.ndarray) -> Any:
        return estimate(x) if len(x) >= 2 and np.all(np.isfinite(x)) else None

    return dict(
        xi_c=xi,
        log_l50=log_l50,
        censored=cens,
        capped=~fit["used"],
        used=fit["used"],
        l50=np.exp(log_l50.mean(0)),
        inside=np.all(cens == 0, axis=0),
        peak=peak,
        slope=fit["slope"],
        k=fit["k"],
        peak_est=est(peak),
        slope_est=est(fit["slope"]),
        k_est=est(fit["k"]),
    )


def synthetic_trainability(
    xi: Any,
    depths: Any,
    *,
    k: float,
    ceiling: float,
    replicates: int,
    noise: float,
    width: float = 0.25,
    floor: float = 0.1,
    top: float = 0.95,
    rng: np.random.Generator,
) -> np.ndarray:
    """Training accuracies (replicates, σ_w², depths) with a known boundary: accuracy falls from
    ``top`` to ``floor`` (chance) as a logistic in ln L of ``width`` centred on
    L₅₀ = min(k ξ_c, ``ceiling``) — Schoenholz et al.'s L ∝ ξ_c, capped by the deepest network the
    training can train — plus independent Gaussian ``noise`` per cell (the trainings' spread)."""
    log_l = np.log(np.asarray(depths, dtype=float))
    mid = np.log(np.minimum(k * np.asarray(xi, dtype=float), ceiling))
    clean = floor + (top - floor) / (1 + np.exp((log_l[None, :] - mid[:, None]) / width))
    return clean[None] + noise * rng.standard_normal((replicates, *clean.shape))


def boundary_estimator_control(
    xi: Any,
    depths: Any,
    *,
    k: float,
    ceiling: float,
    replicates: int,
    noise: float,
    n_sim: int = 200,
    seed: int = 0,
    width: float = 0.25,
) -> dict[str, Any]:
    """The slope estimator of :func:`trainability_boundary` on :func:`synthetic_trainability` with
    a known L₅₀ = min(k ξ_c, ceiling) — true slope 1 where the ceiling does not cap — under the
    run's design (its ξ_c, depth grid, replicates and noise): ``n_sim`` synthetic experiments, each
    graded like the run (mean over replicates of the per-replicate slopes). Returns ``slope``
    (n_sim,) and its mean ``mean``, the same for the estimator without the ceiling's censoring
    (``naive``, ``naive_mean``: only the grid's own censoring) and ``identified``, the share of
    experiments whose slope was identified in every replicate."""
    rng = np.random.default_rng(seed)
    depths = np.asarray(depths, dtype=float)
    out: dict[str, list[float]] = {"slope": [], "naive": []}
    identified = 0
    for _ in range(check_positive_int("n_sim", n_sim)):
        acc = synthetic_trainability(
            xi, depths, k=k, ceiling=ceiling, replicates=replicates, noise=noise, width=width,
            rng=rng,
        )
        log_l50, cens = trainable_depth(acc, depths)
        capped = boundary_fit(log_l50, cens, xi, depths)["slope"]
        naive = boundary_fit(log_l50, cens, xi, depths, cap=False)["slope"]
        if np.all(np.isfinite(capped)):
            identified += 1
            out["slope"].append(float(np.mean(capped)))
        out["naive"].append(float(np.nanmean(naive)))
    slope, naive_s = np.array(out["slope"]), np.array(out["naive"])
    return {
        "slope": slope,
        "mean": float(np.mean(slope)) if slope.size else float("nan"),
        "naive": naive_s,
        "naive_mean": float(np.nanmean(naive_s)),
        "identified": identified / n_sim,
    }


def slope_change(
    bound: Mapping[str, Any], bound_early: Mapping[str, Any], depths: Any, keep: Any
) -> Estimate | None:
    """Per replicate, the slope of :func:`boundary_fit` after the whole training minus the slope at
    the earlier checkpoint, both over the same σ_w² (``keep``, replicates × σ_w²), as an
    Estimate over replicates — None unless every replicate gives both slopes and there are at
    least two."""
    fits = [
        boundary_fit(b["log_l50"], b["censored"], b["xi_c"], depths, keep=keep)["slope"]
        for b in (bound, bound_early)
    ]
    diff = fits[0] - fits[1]
    return estimate(diff) if len(diff) >= 2 and np.all(np.isfinite(diff)) else None


def boundary_shift(
    accuracy_early: Any, accuracy: Any, depths: Any, threshold: float = 0.5
) -> dict[str, Any]:
    """How far the trainability boundary moves between two checkpoints of the same trainings
    (accuracy (replicates, σ_w², depths) at each): per replicate, the mean over σ_w² of
    log L₅₀(later) − log L₅₀(earlier) (:func:`trainable_depth`), over the σ_w² where neither
    boundary is censored (its true value would lie beyond the grid). Returns ``shift`` per
    replicate (NaN where no σ_w² qualifies), ``pairs`` (how many σ_w² entered each) and
    ``shift_est``, an :class:`~layerwise.stats.Estimate` over replicates (None unless every
    replicate gives a value and there are at least two). Schoenholz et al. 2017, §5: the
    trainable depth is a multiple of ξ_c that grows with training time."""
    early, late = np.asarray(accuracy_early, dtype=float), np.asarray(accuracy, dtype=float)
    if early.shape != late.shape or early.ndim != 3:
        raise ParameterError(
            "accuracy_early and accuracy must both be (replicates, σ_w², depths): got shapes "
            f"{early.shape} and {late.shape}"
        )
    log_early, cens_early = trainable_depth(early, depths, threshold)
    log_late, cens_late = trainable_depth(late, depths, threshold)
    inside = (cens_early == 0) & (cens_late == 0)
    pairs = inside.sum(1)
    diff = np.where(inside, log_late - log_early, 0.0)
    shift = np.where(pairs > 0, diff.sum(1) / np.maximum(pairs, 1), np.nan)
    ok = len(shift) >= 2 and np.all(np.isfinite(shift))
    return {"shift": shift, "pairs": pairs, "shift_est": estimate(shift) if ok else None}


def trainability_control(
    bound: Mapping[str, Any],
    trainings: Mapping[str, Any],
    *,
    tol: float,
    n_sim: int = 100,
    seed: int = 0,
    default_k: float = 6.0,
) -> dict[str, Any]:
    """The estimator and conditions controls of the trainable-depth slope (Schoenholz et al. 2017,
    Fig. 5), under the run's design.

    Estimator: :func:`boundary_estimator_control` with the run's ξ_c (``bound["xi_c"]``), depth
    grid, replicates, k (``bound["k_est"]``, else ``default_k``, Schoenholz et al.'s 6), ceiling
    (``ceiling``: geometric mean over replicates of each one's deepest L₅₀) and noise (``noise``:
    median over cells of the replicates' standard deviation of the final accuracy); ``recovers``
    when its mean slope (``mean``; ``naive_mean`` without the ceiling's censoring) lies within
    ``tol`` of 1. Conditions: the ceiling at the early checkpoint (``ceiling_early``) against the
    final one, per replicate — ``ceiling_moves`` is the sign of the shift of ln(ceiling) by its
    99 % interval (+1: the training length moves the ceiling, so our short training is a condition
    that matters; ``conditions_pass`` is then False; 0, and ``ceiling_early`` NaN, without an early
    checkpoint). Also ``grid_step``, the depth grid's largest ratio, and ``replicates``."""
    depths = np.asarray(trainings["depths"], dtype=float)
    acc = np.asarray(trainings["accuracy"], dtype=float)
    k = bound["k_est"].mean if bound.get("k_est") is not None else default_k
    top = np.max(bound["log_l50"], axis=1)
    ceiling = float(np.exp(np.mean(top)))
    noise = float(np.median(acc.std(0, ddof=1))) if len(acc) > 1 else 0.02
    sim = boundary_estimator_control(
        bound["xi_c"], depths, k=k, ceiling=ceiling, replicates=len(acc), noise=noise,
        n_sim=n_sim, seed=seed,
    )
    recovers = bool(abs(sim["mean"] - 1.0) <= tol)
    out = {
        "k": float(k), "ceiling": ceiling, "noise": noise, "n_sim": n_sim,
        "grid_step": float(np.max(depths[1:] / depths[:-1])),
        "mean": sim["mean"], "naive_mean": sim["naive_mean"], "recovers": recovers,
        "replicates": len(acc),
    }
    if "accuracy_early" in trainings:
        early, _ = trainable_depth(trainings["accuracy_early"], depths)
        top_early = np.max(early, axis=1)
        out["ceiling_early"] = float(np.exp(np.mean(top_early)))
        moves = estimate(top - top_early) if len(top) > 1 else None
        out["ceiling_moves"] = moves.sign() if moves is not None else 0
    else:
        out |= {"ceiling_early": float("nan"), "ceiling_moves": 0}
    out["conditions_pass"] = out["ceiling_moves"] != 1
    return out

