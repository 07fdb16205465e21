"""Chapter 7's study (Poole et al. 2016; Schoenholz et al. 2017): what the chapter derives from the
mean-field maps and the simulations of :mod:`layerwise.meanfield` — the length map's convergence,
networks against the maps, the circle's growth, the phase diagram, the depth scales measured on
networks across the transition and the trainability of deep tanh networks against ξ_c. Numbers,
arrays and estimates only: the chapter words its conclusions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..meanfield import (
    chi1,
    circle_experiment,
    correlation_map,
    critical_sigma_w2,
    depth_scales,
    iterate_length_map,
    length_map,
    q_star,
)
from ..params import ParameterError, check_nonnegative, check_positive, check_positive_int
from ..stats import (
    Estimate,
    estimate,
    interval_estimate,
    linear_fit,
    max_deviation_interval,
    mean_se,
)


# ----------------------------------------------------------------------------------------------
# Trainability against the correlation depth scale (Schoenholz et al. 2017, §5 and Fig. 5)
# ----------------------------------------------------------------------------------------------
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
    from ..networks import init_mlp

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

    from ..networks import forward, train

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


# ----------------------------------------------------------------------------------------------
# Chapter 7's studies: what the chapter derives from the maps and the simulations
# ----------------------------------------------------------------------------------------------
def length_map_convergence(
    sigma_ws: tuple[float, ...],
    sigma_b2: float,
    q_grid: np.ndarray,
    starts: np.ndarray,
    n_layers: int,
    rel_tol: float = 1e-2,
) -> dict[float, dict[str, Any]]:
    """For each σ_w (not squared) of ``sigma_ws``: the length map V on ``q_grid``, its fixed
    point q*, the iterates [q^0..q^L] from each of ``starts`` (rows) and, per start, the first layer
    at which
    |q^l − q*|/q* < ``rel_tol`` (0 if no layer gets there; Poole et al. 2016 §2: "often with
    only four iterations")."""
    out: dict[float, dict[str, Any]] = {}
    for sw in sigma_ws:
        qs = q_star(sw**2, sigma_b2)
        it = np.array([iterate_length_map(q0, n_layers, sw**2, sigma_b2) for q0 in starts])
        out[sw] = dict(
            V=np.array([length_map(q, sw**2, sigma_b2) for q in q_grid]),
            q_star=qs,
            iterates=it,
            layers=[int(np.argmax(np.abs(row - qs) / qs < rel_tol)) for row in it],
        )
    return out


def maps_vs_networks(
    sims: list[dict[str, np.ndarray]],
    maps: list[tuple[np.ndarray, np.ndarray]],
    confidence: float = 0.99,
    alternative: list[tuple[np.ndarray, np.ndarray]] | None = None,
) -> dict[str, Any]:
    """Networks against the maps, layer by layer, over a family of settings.

    ``sims[k]``: :func:`simulate_pairs`'s ``q`` (nets, L+1, 2) and ``c`` (nets, L+1); ``maps[k]``:
    :func:`iterate_maps`'s (q^l, c^l) for the same setting. Returns per setting the mean over
    networks and its standard error (``q_mean``, ``q_se``, ``c_mean``, ``c_se``; the two inputs'
    lengths averaged first), a table row each (``rows``: largest deviations and standard errors over
    all layers), and the largest deviation over layers 1..L of all settings — relative for q,
    absolute for c — with its simultaneous interval (:func:`max_deviation_interval`, Bonferroni over
    the ``m`` comparisons, Student t with n_nets − 1 d.o.f.): ``dev_q``, ``interval_q``, ``dev_c``,
    ``interval_c``, ``m``, ``dof``, and the same as Estimates ``dev_q_est``, ``dev_c_est``. With
    ``alternative`` (other maps' (q^l, c^l) per setting, e.g. those of a
    linear network), the largest deviation the networks would show if they
    followed it: ``alt_dev_q``, ``alt_dev_c``. Layer 0 is the input, exact by construction, and is
    left out of the family."""

    out: dict[str, Any] = {k: [] for k in ("q_mean", "q_se", "c_mean", "c_se", "rows")}
    fam_q, fam_c = [], []
    for s, (qt, ct) in zip(sims, maps, strict=True):
        qm, qse = mean_se(s["q"].mean(axis=2))  # both inputs have the same length: average them
        cm, cse = mean_se(s["c"])
        fam_q.append((qm[1:], qse[1:], qt[1:]))
        fam_c.append((cm[1:], cse[1:], ct[1:]))
        out["rows"].append(
            {
                "max |q − map|/map": np.max(np.abs(qm - qt) / qt),
                "largest s.e. (q, relative)": np.max(qse / qt),
                "max |c − map|": np.max(np.abs(cm - ct)),
                "largest s.e. (c)": np.max(cse),
            }
        )
        for k, v in zip(("q_mean", "q_se", "c_mean", "c_se"), (qm, qse, cm, cse)):
            out[k].append(v)
    dof = sims[0]["c"].shape[0] - 1
    out["dev_q"], out["interval_q"] = max_deviation_interval(
        *(np.concatenate(v) for v in zip(*fam_q)), dof=dof, confidence=confidence, relative=True
    )
    out["dev_c"], out["interval_c"] = max_deviation_interval(
        *(np.concatenate(v) for v in zip(*fam_c)), dof=dof, confidence=confidence
    )
    out["m"], out["dof"] = sum(len(f[0]) for f in fam_q), dof
    if alternative is not None:
        out["alt_dev_q"] = max(
            float(np.max(np.abs(qa[1:] - qt[1:]) / qt[1:]))
            for (qa, _), (qt, _) in zip(alternative, maps, strict=True)
        )
        out["alt_dev_c"] = max(
            float(np.max(np.abs(ca[1:] - ct[1:])))
            for (_, ca), (_, ct) in zip(alternative, maps, strict=True)
        )
    n_nets = dof + 1
    out["dev_q_est"] = interval_estimate(out["dev_q"], *out["interval_q"], n=n_nets)
    out["dev_c_est"] = interval_estimate(out["dev_c"], *out["interval_c"], n=n_nets)
    return out


def phase_diagram(grid: int) -> dict[str, np.ndarray]:
    """χ₁ of tanh networks on a ``grid`` × ``grid`` lattice of σ_w² ∈ [0.5, 5], σ_b² ∈ [0, 1]
    (``chi1[i, j]`` at σ_b²_i, σ_w²_j; Poole et al. 2016, Fig. 2), and the root-finder's critical
    σ_w² (:func:`critical_sigma_w2`) at the lattice's own σ_b² rows, to compare row by row."""
    grid = check_positive_int("grid", grid)
    sw2 = np.linspace(0.5, 5.0, grid)
    sb2 = np.linspace(0.0, 1.0, grid)
    chi = np.array([[chi1(a, b) for a in sw2] for b in sb2])
    crit = np.array([critical_sigma_w2(b) for b in sb2])
    return dict(sigma_w2=sw2, sigma_b2=sb2, chi1=chi, sigma_b2_line=sb2, critical_sigma_w2=crit)


def circle_growth(length_tangent: np.ndarray, chi_1: float) -> dict[str, Any]:
    """Growth of the circle's exact length (Poole et al. 2016, Fig. 4) from ``length_tangent``
    (nets, L+1): one least-squares slope of ln ℓ^l against l over layers 1..L per network, their
    mean, standard error and n − 1 d.o.f. (``measured``, ``se``, ``dof``), against the prediction
    ½ ln χ₁ (``predicted``, from ``chi_1``); and log10 ℓ^L/ℓ^0 per network, mean and
    s.e. (``decades``, ``decades_se``); the two as Estimates ``slope_est``, ``decades_est``."""

    lt = np.asarray(length_tangent, dtype=float)
    layers = np.arange(lt.shape[1])
    slopes = estimate([linear_fit(layers[1:], np.log(v[1:]))["slope"] for v in lt])
    decades = estimate(np.log10(lt[:, -1] / lt[:, 0]))
    return dict(
        chi1=chi_1,
        predicted=0.5 * np.log(chi_1),
        measured=slopes.mean,
        se=slopes.se,
        dof=slopes.dof,
        decades=decades.mean,
        decades_se=decades.se,
        slope_est=slopes,
        decades_est=decades,
    )


def circle_ensemble(
    *,
    sigma_w2: float,
    sigma_b2: float,
    width: int,
    n_layers: int,
    n_points: int,
    seeds: tuple[int, ...],
    record_layers: tuple[int, ...] = (),
    n_pca: int = 3,
    device: str = "cpu",
) -> dict[str, np.ndarray]:
    """:func:`circle_experiment` for one network per seed of ``seeds`` (Poole et
    al. 2016, Figs. 3–4): the first network records the
    projections ``proj_<l>`` for ``record_layers``, the first ``n_pca`` networks their principal
    components. Returns ``length_tangent``, ``length_chord`` and ``q`` stacked
    (nets, L+1), ``pca_var`` (min(n_pca, nets), L+1, 3), ``theta`` and the projections."""
    if len(seeds) == 0:
        raise ParameterError("circle_ensemble needs at least one seed")
    runs = [
        circle_experiment(
            sigma_w2=sigma_w2,
            sigma_b2=sigma_b2,
            width=width,
            n_layers=n_layers,
            n_points=n_points,
            seed=seed,
            record_layers=record_layers if k == 0 else (),
            device=device,
            pca=k < n_pca,
        )
        for k, seed in enumerate(seeds)
    ]
    out = {
        k: np.array([r[k] for r in runs if k in r])
        for k in ("length_tangent", "length_chord", "q", "pca_var")
    }
    return (
        out
        | {"theta": runs[0]["theta"]}
        | {f"proj_{l}": runs[0][f"proj_{l}"] for l in record_layers}
    )


def depth_scale_curve(sigma_b2: float, n: int) -> dict[str, np.ndarray]:
    """:func:`depth_scales` at ``n`` values of σ_w² evenly spaced in [1, 4] (Schoenholz et al.
    2017, Fig. 2) — arrays ``xi_q``, ``xi_c``, ``chi1``, ``c_star``, ``chi_c`` — and the critical
    σ_w² at this σ_b² (``critical``)."""
    sw2 = np.linspace(1.0, 4.0, check_positive_int("n", n))
    rows = [depth_scales(a, sigma_b2) for a in sw2]
    return {
        "sigma_w2": sw2,
        **{k: np.array([r[k] for r in rows]) for k in ("xi_q", "xi_c", "chi1", "c_star", "chi_c")},
        "critical": np.array(critical_sigma_w2(sigma_b2)),
    }


def standardised_digits() -> tuple[np.ndarray, np.ndarray]:
    """The digits data set (:func:`layerwise.data.digits`) flattened, standardised per pixel and
    scaled to unit mean square per example (an input of per-unit length q⁰ = 1), and its labels."""
    from ..data import digits

    x, y = digits()
    x = x.reshape(len(x), -1)
    x = (x - x.mean(0)) / (x.std(0) + 1e-8)
    return x / np.sqrt((x**2).mean(1, keepdims=True)), y


def trainability_cell(
    index: int,
    x: np.ndarray,
    y: np.ndarray,
    *,
    sigma_w2s: np.ndarray,
    depths: tuple[int, ...],
    seeds: Any,
    **train: Any,
) -> dict[str, np.ndarray]:
    """One independent unit of :func:`trainability_grid`: the training of replicate
    ``index // len(depths)`` at depth ``depths[index % len(depths)]`` (all σ_w² at once, seed
    ``seeds[r][j]``), as arrays (1, σ_w²) — ``accuracy`` and, with ``early_steps`` in ``train``,
    ``accuracy_early``. ``train``: the other arguments of :func:`train_depth_grid`."""
    seeds = np.asarray(seeds, dtype=np.int64)
    if seeds.ndim != 2 or seeds.shape[1] != len(depths) or seeds.shape[0] < 1:
        raise ParameterError(
            f"seeds must be (replicates, depths) with one seed per depth: got shape {seeds.shape} "
            f"for {len(depths)} depths"
        )
    r, j = divmod(int(index), len(depths))
    if not 0 <= r < len(seeds):
        raise ParameterError(f"index={index} must lie in [0, {seeds.size})")
    run = train_depth_grid(
        x, y, sigma_w2s=sigma_w2s, depth=int(depths[j]), seed=int(seeds[r, j]), **train
    )
    return {k: run[k][None] for k in ("accuracy", "accuracy_early") if k in run}


def assemble_trainability(
    cells: Mapping[str, np.ndarray], sigma_w2s: Any, depths: tuple[int, ...]
) -> dict[str, np.ndarray]:
    """The units of :func:`trainability_cell` (concatenated on axis 0, replicate-major) as
    :func:`trainability_grid` returns them: accuracies (replicates, σ_w², depths)."""
    out = {
        k: np.asarray(v).reshape(-1, len(depths), len(sigma_w2s)).transpose(0, 2, 1)
        for k, v in cells.items()
        if k in ("accuracy", "accuracy_early")
    }
    return out | {"sigma_w2": np.asarray(sigma_w2s), "depths": np.array(depths)}


def trainability_grid(
    x: np.ndarray,
    y: np.ndarray,
    *,
    sigma_w2s: np.ndarray,
    depths: tuple[int, ...],
    seeds: Any,
    **train: Any,
) -> dict[str, np.ndarray]:
    """Training accuracy over a (σ_w², depth) grid (Schoenholz et al. 2017, Fig. 5), replicated:
    ``seeds`` is (replicates, depths) — one independent :func:`train_depth_grid` (all σ_w² at once)
    per replicate and depth (:func:`trainability_cell`), with ``seeds[r][j]`` for ``depths[j]``.
    Returns ``accuracy`` (replicates, σ_w², depth), ``sigma_w2`` and ``depths``; with
    ``early_steps`` in ``train`` (the other arguments of :func:`train_depth_grid`), also
    ``accuracy_early``, the same trainings' accuracy at that checkpoint."""
    n = np.asarray(seeds).size
    cells = [
        trainability_cell(i, x, y, sigma_w2s=sigma_w2s, depths=depths, seeds=seeds, **train)
        for i in range(n if n else 1)
    ]
    joined = {k: np.concatenate([c[k] for c in cells]) for k in cells[0]}
    return assemble_trainability(joined, sigma_w2s, depths)


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
    """The trainability boundary of a replicated :func:`trainability_grid` (accuracy (replicates,
    σ_w², depths)) against ξ_c (Schoenholz et al. 2017, §5: trainable for L ≲ 6 ξ_c).

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
    when its mean slope lies within ``tol`` of 1, with a ``note``. Conditions: the ceiling at the
    early checkpoint (``ceiling_early``) against the final one, per replicate — ``ceiling_moves``
    is the sign of the shift of ln(ceiling) by its 99 % interval (+1: the training length moves
    the ceiling, so our short training is a condition that matters; ``conditions_pass`` is then
    False), with a ``ceiling_note``. Also ``grid_step``, the depth grid's largest ratio."""
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
        "note": (
            f"synthetic trainings with L₅₀ = min({k:.2f} ξc, {ceiling:.0f}) on the run's ξc, depth "
            f"grid and {len(acc)} replicates, noise {noise:.3f}: over {n_sim} experiments the "
            f"estimator recovers a slope of {sim['mean']:.3f} (true 1; {tol:g} allowed); without "
            f"the ceiling's censoring it gives {sim['naive_mean']:.2f}"
        ),
    }
    if "accuracy_early" in trainings:
        early, _ = trainable_depth(trainings["accuracy_early"], depths)
        top_early = np.max(early, axis=1)
        out["ceiling_early"] = float(np.exp(np.mean(top_early)))
        moves = estimate(top - top_early) if len(top) > 1 else None
        out["ceiling_moves"] = moves.sign() if moves is not None else 0
        out["ceiling_note"] = (
            f"the training's ceiling moves from {out['ceiling_early']:.0f} to {ceiling:.0f} layers "
            f"between the checkpoints (sign by the 99 % interval over replicates: "
            f"{out['ceiling_moves']:+d}): the training length, far shorter than Schoenholz et "
            "al.'s, sets the ceiling that censors the settings nearest the transition"
        )
    else:
        out |= {"ceiling_early": float("nan"), "ceiling_moves": 0,
                "ceiling_note": "no early checkpoint: the ceiling's dependence on training "
                                "length is not measured"}
    out["conditions_pass"] = out["ceiling_moves"] != 1
    return out


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


# ----------------------------------------------------------------------------------------------
# Depth scales measured on networks across the transition (Schoenholz et al. 2017, Figs. 2–3)
# ----------------------------------------------------------------------------------------------
def sweep_starts(c_star: float, delta: float, ordered_gap: float) -> tuple[float, float]:
    """Starting correlations of the two pairs used to measure ξ_c at one setting: in the chaotic
    phase c* ± d with d = min(δ, (1 − c*)/2), on both sides of the fixed point (the map's curvature
    and a finite-width shift of c* then cancel to first order in the averaged log slope); in the
    ordered phase (c* = 1) both pairs start at 1 − ``ordered_gap`` (two replicates of the
    one side)."""
    if c_star >= 1.0:
        return 1.0 - ordered_gap, 1.0 - ordered_gap
    d = min(delta, (1.0 - c_star) / 2)
    return c_star + d, c_star - d


def depth_scale_sweep(
    *,
    sigma_w2s: Any,
    sigma_b2s: Any,
    width: int,
    n_layers: int,
    n_nets: int,
    seed: int,
    delta: float = 0.2,
    ordered_gap: float = 0.02,
    device: str = "cpu",
) -> dict[str, np.ndarray]:
    """Correlations and back-propagated gradients of random tanh nets over a (σ_b², σ_w²) grid
    (Schoenholz et al. 2017, Figs. 2–3: depth scales measured on networks).

    Every network is one draw of standard-normal weights G^l (N×N) and biases β^l, shared by all
    settings (common random numbers): z^l = σ_w G^l φ(z^{l-1})/√N + σ_b β^l. Per setting
    (σ_b²_i, σ_w²_j) three inputs of per-unit length q* are built as pre-activations: x₁, and two
    partners with correlations :func:`sweep_starts` to x₁ (exactly, by orthonormal directions).
    Forward: the correlations c^l of the two pairs, ``c`` (B, W, nets, 2, L+1). Backward, for x₁:
    δ^L = r ~ N(0, I) and δ^{l-1} = φ'(z^{l-1}) ⊙ σ_w G^lᵀ δ^l/√N (the error signal
    of ∂(r·z^L)/∂z^l); ``grad`` (B, W, nets, L+1) = |δ^l|²/N, whose mean contracts by χ₁ per layer
    toward the input (Schoenholz et al. 2017, Eq. 14: ξ_∇⁻¹ = −ln χ₁). Also returned: ``sigma_w2``,
    ``sigma_b2``, ``starts`` (B, W, 2) and the mean-field ``q_star``, ``c_star``, ``chi1``,
    ``chi_c``, ``xi_c`` (B, W). Float32 propagation, float64 reductions."""
    import torch

    sw2 = np.asarray(sigma_w2s, dtype=float).ravel()
    sb2 = np.asarray(sigma_b2s, dtype=float).ravel()
    if sw2.size == 0 or np.any(sw2 <= 0):
        raise ParameterError(
            f"sigma_w2s={sigma_w2s!r} must be a non-empty list of positive numbers"
        )
    if sb2.size == 0 or np.any(sb2 <= 0):
        raise ParameterError(
            f"sigma_b2s={sigma_b2s!r} must be a non-empty list of positive "
            "numbers (σ_b² = 0 has q* = 0 in the ordered phase)"
        )
    width, n_layers, n_nets = (
        check_positive_int(k, v)
        for k, v in (("width", width), ("n_layers", n_layers), ("n_nets", n_nets))
    )
    if not 0 < delta < 1 or not 0 < ordered_gap < 1:
        raise ParameterError(f"delta={delta} and ordered_gap={ordered_gap} must lie in (0, 1)")
    B, W, N = len(sb2), len(sw2), width
    th = {k: np.empty((B, W)) for k in ("q_star", "c_star", "chi1", "chi_c", "xi_c")}
    starts = np.empty((B, W, 2))
    for i, b in enumerate(sb2):
        for j, a in enumerate(sw2):
            d = depth_scales(a, b)
            for k in th:
                th[k][i, j] = d[k]
            starts[i, j] = sweep_starts(d["c_star"], delta, ordered_gap)
    K = B * W
    qs = torch.tensor(th["q_star"].ravel())
    c_pair = torch.tensor(starts.reshape(K, 2))
    s_w = torch.tensor(np.sqrt(np.tile(sw2, B) / N), dtype=torch.float32).to(device)  # (K,)
    s_b = torch.tensor(np.sqrt(np.repeat(sb2, W)), dtype=torch.float32).to(device)
    s_w3, s_b3 = s_w.repeat(3), s_b.repeat(3)  # columns: x₁ (K), partner 1 (K), partner 2 (K)
    g = torch.Generator().manual_seed(int(seed))
    c_out = np.empty((n_nets, 2, K, n_layers + 1))
    grad_out = np.empty((n_nets, K, n_layers + 1))

    def corr(z: Any) -> np.ndarray:
        zz = z.double()
        x1, p = zz[:, :K], zz[:, K:].reshape(N, 2, K)
        num = (x1[:, None, :] * p).sum(0)
        return (num / torch.sqrt((x1**2).sum(0)[None] * (p**2).sum(0))).cpu().numpy()  # (2, K)

    for net in range(n_nets):
        basis, _ = torch.linalg.qr(torch.randn(N, 3, generator=g, dtype=torch.float64))
        u, v = basis[:, :1], basis[:, 1:]  # (N, 1), (N, 2)
        r = torch.sqrt(N * qs)  # (K,)
        x1 = r * u
        # chaotic phase (two starts c* ± d): one direction v for both partners, so that their
        # sampling noise is shared while they stay close; ordered phase (one start): two replicates
        vk = [v[:, :1], torch.where(c_pair[:, 0] == c_pair[:, 1], v[:, 1:], v[:, :1])]
        parts = [r * (c_pair[:, k] * u + torch.sqrt(1 - c_pair[:, k] ** 2) * vk[k]) for k in (0, 1)]
        z = torch.cat([x1, *parts], dim=1)  # (N, 3K)
        c_out[net, :, :, 0] = corr(z)
        z = z.to(device=device, dtype=torch.float32)
        Gs, dphis = [], []
        for l in range(1, n_layers + 1):
            G = torch.randn(N, N, generator=g, dtype=torch.float32).to(device)
            beta = torch.randn(N, 1, generator=g, dtype=torch.float32).to(device)
            h = torch.tanh(z)
            dphis.append(1 - h[:, :K] ** 2)
            z = s_w3 * (G @ h) + s_b3 * beta
            Gs.append(G)
            c_out[net, :, :, l] = corr(z)
        delta_l = torch.randn(N, 1, generator=g, dtype=torch.float32).to(device).expand(N, K)
        grad_out[net, :, n_layers] = (delta_l.double() ** 2).mean(0).cpu().numpy()
        for l in range(n_layers, 0, -1):
            delta_l = dphis[l - 1] * (s_w * (Gs[l - 1].T @ delta_l))
            grad_out[net, :, l - 1] = (delta_l.double() ** 2).mean(0).cpu().numpy()
        del Gs, dphis
    c = c_out.transpose(2, 0, 1, 3).reshape(B, W, n_nets, 2, n_layers + 1)
    grad = grad_out.transpose(1, 0, 2).reshape(B, W, n_nets, n_layers + 1)
    return {"sigma_w2": sw2, "sigma_b2": sb2, "c": c, "grad": grad, "starts": starts} | th


def _log_slope(layers: np.ndarray, values: np.ndarray) -> float:
    """Least-squares slope of ln|values| against ``layers`` (NaN with fewer than 3 layers)."""
    if len(layers) < 3:
        return float("nan")
    return float(np.polyfit(layers, np.log(np.abs(values)), 1)[0])


def _map_until(
    c0: float, c_star: float, floor: float, n_layers: int, sigma_w2: float, sigma_b2: float
) -> np.ndarray:
    """[c^0, …] under the correlation map, stopped (padded with c*) once |c^l − c*| < ``floor``."""
    q = q_star(sigma_w2, sigma_b2)
    out = [float(c0)]
    while len(out) <= n_layers and abs(out[-1] - c_star) >= floor:
        out.append(correlation_map(out[-1], sigma_w2, sigma_b2, "tanh", q))
    return np.array(out + [c_star] * (n_layers + 1 - len(out)))


def sweep_rates(
    sweep: dict[str, np.ndarray],
    n_se: float = 4.0,
    n_boot: int = 200,
    seed: int = 0,
    efolds: float = 1.0,
) -> dict[str, Any]:
    """Decay rates 1/ξ measured on the networks of :func:`depth_scale_sweep`, per setting (B, W),
    against the mean-field rates (Schoenholz et al. 2017, Eqs. 9 and 14), and where they peak.

    * Correlation, chaotic phase (pairs started at c* ± d, :func:`sweep_starts`): the mean over
      networks of the two pairs' difference, D^l = c̄₁^l − c̄₂^l ≈ 2d χ_c^l, is fitted by a line in
      ln D^l against l, over a window fixed in advance by the map alone — the layers where the
      maps' difference is still above e^(−``efolds``) of its start, about the first efolds·ξ_c
      layers — so that the window does not lengthen as networks are added (a window set by the
      sample's standard errors couples the estimate to the sample size). The fixed point c* (and
      its O(1/N) finite-width shift) and the map's
      even-order curvature cancel in D; the shared input direction makes the two pairs' sampling
      noise cancel too while they stay close. Ordered phase (c* = 1): ln(1 − c̄^l) of each
      replicate pair over the layers where the map's 1 − c^l exceeds ``n_se`` standard errors,
      the two slopes averaged. ``rate_c`` = −slope; ``window`` (B, W, 2): the layers fitted;
      ``rate_c_map``: the same estimator on the map's iterates (what the finite window does to
      1/ξ_c at N = ∞). Theory: ``rate_c_theory`` = 1/ξ_c = −ln χ_c.
    * Gradient: slope of ln of the mean |δ^l|²/N over networks against l, over all layers:
      ``rate_grad`` = 1/ξ_∇ (positive: gradients vanish toward the input; negative: they explode).
      Theory: ``rate_grad_theory`` = −ln χ₁.
    * ``rate_q_theory`` = 1/ξ_q, the length map's rate at each setting (Schoenholz et al. Eq. 4).
    Uncertainty: leave-one-network-out values ``rate_c_loo``, ``rate_grad_loo`` (B, W, n) and the
    jackknife standard errors ``rate_c_se``, ``rate_grad_se`` (``dof`` = n − 1). Peaks: per σ_b²,
    the σ_w² where |rate| is smallest (the depth scale largest), ``peak_c`` and ``peak_grad`` (B,),
    with bootstrap percentile intervals over networks (``n_boot`` resamples, 99 %),
    ``peak_c_interval``, ``peak_grad_interval`` (B, 2)."""

    check_positive("efolds", efolds)
    c, grad = sweep["c"], sweep["grad"]
    B, W, n, _, L1 = c.shape
    layers = np.arange(L1)
    window = np.zeros((B, W, 2), dtype=int)
    wins: dict[tuple[int, int], list[np.ndarray]] = {}
    chaotic = sweep["starts"][..., 0] != sweep["starts"][..., 1]
    rate_c_map = np.full((B, W), np.nan)

    def corr_rate(i: int, j: int, cm: np.ndarray) -> float:
        """1/ξ from mean correlations ``cm`` (2, L+1) of one setting."""
        w = wins[i, j]
        if chaotic[i, j]:  # the two pairs' difference: c* and the map's even-order curvature cancel
            return -_log_slope(w[0], cm[0, w[0]] - cm[1, w[0]])
        return -0.5 * sum(_log_slope(w[k], cm[k, w[k]] - 1.0) for k in range(2))

    for i in range(B):
        for j in range(W):
            cs = float(sweep["c_star"][i, j])
            a, b = float(sweep["sigma_w2"][j]), float(sweep["sigma_b2"][i])
            s0, s1 = sweep["starts"][i, j]
            if chaotic[i, j]:
                # fixed in advance by the map alone: the layers where the maps' difference is
                # still above e^(−efolds) of its start (the first ≈ efolds·ξ_c layers)
                maps = [_map_until(s, cs, 0.0, L1 - 1, a, b) for s in (s0, s1)]
                diff = maps[0] - maps[1]
                w = layers[1:][diff[1:] >= np.exp(-efolds) * diff[0]]
                wins[i, j] = [w, w]
            else:
                ses = [mean_se(c[i, j, :, k])[1] for k in range(2)]
                m0 = _map_until(s0, cs, n_se * min(float(np.min(v[1:])) for v in ses), L1 - 1, a, b)
                maps = [m0, m0]
                wins[i, j] = [layers[1:][np.abs(m0[1:] - cs) > n_se * ses[k][1:]] for k in range(2)]
            window[i, j] = [len(w) for w in wins[i, j]]
            rate_c_map[i, j] = corr_rate(i, j, np.stack(maps))

    def rates(idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Both rates on the networks ``idx`` (with repetition for the bootstrap)."""
        cm, gm = c[:, :, idx].mean(2), grad[:, :, idx].mean(2)  # (B, W, 2, L+1), (B, W, L+1)
        rc = np.array([[corr_rate(i, j, cm[i, j]) for j in range(W)] for i in range(B)])
        rg = np.polyfit(layers, np.log(gm.reshape(B * W, L1)).T, 1)[0].reshape(B, W)
        return rc, rg

    rate_c, rate_grad = rates(np.arange(n))
    loo = [rates(np.delete(np.arange(n), m)) for m in range(n)]
    rate_c_loo, rate_grad_loo = (np.moveaxis(np.array([r[k] for r in loo]), 0, -1) for k in (0, 1))
    jk = lambda v: np.sqrt((n - 1) / n * np.sum((v - v.mean(-1, keepdims=True)) ** 2, axis=-1))  # noqa: E731
    rng = np.random.default_rng(seed)
    boots = [rates(rng.integers(0, n, n)) for _ in range(check_positive_int("n_boot", n_boot))]
    sw2 = sweep["sigma_w2"]

    def peak(r: np.ndarray) -> np.ndarray:  # (B, W) -> σ_w² of the smallest |rate| per σ_b²
        return sw2[np.argmin(np.abs(np.nan_to_num(r, nan=np.inf)), axis=1)]

    pc, pg = (np.array([peak(b[k]) for b in boots]) for k in (0, 1))
    ci = lambda p: np.quantile(p, [0.005, 0.995], axis=0, method="inverted_cdf").T  # noqa: E731
    return dict(
        rate_c=rate_c,
        rate_c_se=jk(rate_c_loo),
        rate_c_loo=rate_c_loo,
        rate_c_map=rate_c_map,
        rate_c_theory=-np.log(sweep["chi_c"]),
        rate_grad=rate_grad,
        rate_grad_se=jk(rate_grad_loo),
        rate_grad_loo=rate_grad_loo,
        rate_grad_theory=-np.log(sweep["chi1"]),
        window=window,
        dof=n - 1,
        rate_q_theory=np.array(
            [
                [1.0 / depth_scales(float(a), float(b))["xi_q"] for a in sw2]
                for b in sweep["sigma_b2"]
            ]
        ),
        peak_c=peak(rate_c),
        peak_c_interval=ci(pc),
        peak_grad=peak(rate_grad),
        peak_grad_interval=ci(pg),
    )


def mean_rate_ratio(
    measured: np.ndarray,
    theory: np.ndarray,
    loo: np.ndarray,
    se: np.ndarray,
    keep: np.ndarray,
    alternative: np.ndarray | None = None,
) -> dict[str, Any]:
    """Precision-weighted mean of measured/theory rates over the settings ``keep``, i.e. of
    ξ_theory/ξ_measured, with weights (theory/se)² fixed by the full sample, and its jackknife
    standard error from the leave-one-network-out rates ``loo`` (…, n): ``est``, an
    :class:`~layerwise.stats.Estimate` (n − 1 d.o.f. over networks; ``n`` the settings kept), and
    ``alternative``, the same weighted mean of ``alternative``/theory — what the ratio would be if
    the rates were ``alternative`` instead (NaN without one). NaN when no setting is kept."""
    keep = np.asarray(keep, bool) & np.isfinite(measured) & (np.asarray(se) > 0)
    n_nets = np.asarray(loo).shape[-1]
    if not keep.any():
        return {
            "est": Estimate(float("nan"), float("nan"), n_nets - 1, 0),
            "alternative": float("nan"),
        }
    w = (theory[keep] / se[keep]) ** 2
    w = w / w.sum()
    full = float(w @ (measured[keep] / theory[keep]))
    v = w @ (loo[keep] / theory[keep][:, None])
    se_jack = float(np.sqrt((n_nets - 1) / n_nets * np.sum((v - v.mean()) ** 2)))
    alt = float("nan") if alternative is None else float(w @ (alternative[keep] / theory[keep]))
    return {"est": Estimate(full, se_jack, n_nets - 1, int(keep.sum())), "alternative": alt}


def sweep_rate_ratios(
    R: Mapping[str, np.ndarray],
    phase: np.ndarray,
    n_layers: int,
    map_bias: float = 0.05,
    margin: float = 0.10,
) -> tuple[dict[str, dict[str, Any]], float]:
    """Measured/mean-field decay rates over a σ_w² sweep (Schoenholz et al. 2017, Eqs. 9 and 14),
    for the settings the sweep resolves: a depth scale at most a third of the ``n_layers``
    recorded, and for correlations a fitting window whose bias on the map's own iterates is at most
    ``map_bias``. ``R`` holds ``rate_c``/``rate_grad`` (networks), ``*_theory`` (−1/ξ),
    ``rate_c_map`` (the same fit on the map), ``*_loo`` and ``*_se`` per setting; ``phase`` is
    "ordered"/"chaotic" per setting.

    Returns ({"ordered", "chaotic", "grad"} → :func:`mean_rate_ratio`, the largest relative window
    bias |rate_c_map/rate_c_theory − 1| among the resolved correlation settings). The alternatives:
    ordered correlations decaying at the length map's rate 1/ξ_q (``rate_q_theory``), chaotic ones
    at |ln χ₁|, the gradient's rate (the depth scale read off χ₁ alone), gradients not decaying
    at all (rate 0). Each entry also holds ``map_bias``, the largest |rate_map/theory − 1| of the
    estimator on the map's own iterates (N = ∞, the same windows) over its resolved settings (0
    for the gradient, whose decay the map makes exactly geometric), and ``recovers``: that bias
    is at most half the ``margin`` (the estimator control)."""
    n_layers = check_positive_int("n_layers", n_layers)
    phase = np.asarray(phase)
    bias = np.abs(np.asarray(R["rate_c_map"]) / R["rate_c_theory"] - 1)
    resolved_c = (1 / R["rate_c_theory"] <= n_layers / 3) & (bias <= map_bias)
    resolved_g = np.abs(1 / R["rate_grad_theory"]) <= n_layers / 3
    if not resolved_c.any():
        raise ParameterError(
            f"no correlation setting is resolved with n_layers={n_layers}: record more layers"
        )
    c = (R["rate_c"], R["rate_c_theory"], R["rate_c_loo"], R["rate_c_se"])
    grad = (R["rate_grad"], R["rate_grad_theory"], R["rate_grad_loo"], R["rate_grad_se"])
    ratios = {
        "ordered": mean_rate_ratio(*c, resolved_c & (phase == "ordered"), R["rate_q_theory"]),
        "chaotic": mean_rate_ratio(
            *c, resolved_c & (phase == "chaotic"), np.abs(R["rate_grad_theory"])
        ),
        "grad": mean_rate_ratio(*grad, resolved_g, np.zeros_like(R["rate_grad_theory"])),
    }
    for key, keep in (
        ("ordered", resolved_c & (phase == "ordered")),
        ("chaotic", resolved_c & (phase == "chaotic")),
    ):
        ratios[key]["map_bias"] = float(np.max(bias[keep])) if keep.any() else float("nan")
    ratios["grad"]["map_bias"] = 0.0
    for r in ratios.values():
        r["recovers"] = bool(r["map_bias"] <= margin / 2)
    return ratios, float(np.max(bias[resolved_c]))
