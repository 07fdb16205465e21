"""Chapter 6's study (linear regions of ReLU networks, Hanin & Rolnick 2019): the experiment
drivers and the summaries that turn the exact counter of :mod:`layerwise.regions` into the
numbers, arrays and estimates (:class:`~layerwise.stats.Estimate`) the chapter grades and plots.

The data (the 1 797 scikit-learn digits, three preprocessings), the architectures compared, the
random slices, segments and networks at initialisation, the training sweeps over preprocessings,
learning rates and label noise, the bottleneck search for a non-convex linear region and the
tangent sensitivity on a trained network's slice.  No sentences and no claim ids: the chapter
words its conclusions from the claims' outcomes.  Functions named without a module
(:func:`he_mlp`, :func:`count_regions`, …) are the science of :mod:`layerwise.regions`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import torch

from ..data import (
    DIGIT_PREPROCESSINGS,
    RUNG_DATASETS,
    off_data_points,
    parse_rung,
    rung_images,
    shifted_copies,
    standardise_digits,
    upsampled_digits,
)
from ..networks import forward as net_forward
from ..networks import from_pairs, train
from ..networks import tangent_sensitivity as net_tangent_sensitivity
from ..params import (
    ParameterError,
    check_choice,
    check_fraction,
    check_positive,
    check_positive_int,
)
from ..regions import (
    activation_regions,
    as_weights,
    boundary_distance,
    count_regions,
    density_by_depth,
    grid_count,
    growth_exponent,
    he_mlp,
    largest_linear_region,
    line_breakpoints,
    linear_regions,
    montufar_max,
    one_layer_distance,
    one_layer_expected_count,
    one_layer_line_crossings,
    pair_exponent,
    plane_through,
    sensitivity_by_region,
    slice_angles,
    unflatten,
)
from ..stats import Estimate, estimate, mean_se
from ..tables import cell


def architectures(neurons: Sequence[int], depths: Sequence[int]) -> list[list[int]]:
    """Equal-width architectures [N/d]*d; every N must be divisible by every depth."""
    out = []
    for N in neurons:
        N = check_positive_int("neurons", N)
        for d in depths:
            d = check_positive_int("depths", d)
            if N % d:
                raise ParameterError(
                    f"neurons={N} is not divisible by depth {d}; allowed: multiples of "
                    f"lcm(depths) (e.g. {int(np.lcm.reduce([int(x) for x in depths]))})"
                )
            out.append([N // d] * d)
    return out


def init_triples(n_rows: int, n_nets: int, rng: np.random.Generator | int) -> list[np.ndarray]:
    """The ``n_nets`` triples of row indices whose planes :func:`init_counts` uses (``rng`` a
    generator, advanced, or the seed of :func:`init_counts`)."""
    rng = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
    n_nets = check_positive_int("n_nets", n_nets)
    return [rng.choice(n_rows, 3, replace=False) for _ in range(n_nets)]


def init_counts(X: np.ndarray, archs: Sequence[Sequence[int]], n_nets: int, seed: int,
                bias_var: float = 1e-6) -> np.ndarray:
    """Region counts (len(archs), n_nets) at He-normal initialisation on the slices through
    ``n_nets`` random triples of rows of X (triple i shared by all architectures)."""
    n_nets = check_positive_int("n_nets", n_nets)
    rng = np.random.default_rng(seed)
    triples = init_triples(len(X), n_nets, rng)
    seeds = rng.integers(2**31, size=(len(archs), n_nets))
    out = np.zeros((len(archs), n_nets), dtype=np.int64)
    for a, widths in enumerate(archs):
        for i, t in enumerate(triples):
            net = he_mlp(X.shape[1], widths, 1, seed=int(seeds[a, i]), bias_var=bias_var)
            out[a, i] = count_regions(net, plane_through(X[t]))
    return out


def train_counts(X: np.ndarray, y: np.ndarray, widths: Sequence[int], *, epochs: int,
                 n_checkpoints: int, label_noise: float, seed: int, lr: float = 1e-3,
                 batch: int = 64, bias_var: float = 1e-6,
                 n_lines: int = 0) -> dict[str, np.ndarray]:
    """Train a He-initialised ReLU MLP (:func:`he_mlp`) on (X, y) with Adam and cross-entropy
    (:func:`layerwise.networks.train`, mini-batches of a fresh permutation each epoch), a fraction
    ``label_noise`` of the labels replaced by uniformly random ones, and count its activation
    regions on the plane through three training inputs at ``n_checkpoints`` + 1 epochs
    (Hanin & Rolnick 2019, §5).  Returns epochs, counts, train accuracy (on the noisy labels),
    loss, and the final weights flattened with their plane points.  With ``n_lines`` > 0 it also
    records, at every checkpoint, the boundary crossings of ``n_lines`` segments between pairs of
    training inputs (``crossings`` (T, n_lines), :func:`line_breakpoints`) and the distance of
    their 2·``n_lines`` end points to the nearest region boundary (``dist`` (T, 2 n_lines),
    :func:`boundary_distance`); the pairs come from their own stream, so the other draws are
    those of a run without them."""
    label_noise = check_fraction("label_noise", label_noise)
    epochs = check_positive_int("epochs", epochs)
    n_checkpoints = check_positive_int("n_checkpoints", n_checkpoints)
    # slice, initial network and batch order depend on ``seed`` only, so runs with different
    # label noise and the same seed are paired; the noisy labels use their own stream
    rng = np.random.default_rng(seed)
    n_cls = int(y.max()) + 1
    triple = rng.choice(len(X), 3, replace=False)
    plane = plane_through(X[triple])
    net = he_mlp(X.shape[1], widths, n_cls, seed=int(rng.integers(2**31)), bias_var=bias_var)
    g = torch.Generator().manual_seed(int(rng.integers(2**31)))
    lrng = np.random.default_rng([seed, 1])
    y = y.copy()
    noisy = lrng.random(len(y)) < label_noise
    y[noisy] = lrng.integers(0, n_cls, noisy.sum())
    Xt = torch.tensor(X, dtype=torch.float32)
    yt = torch.tensor(y)
    ck = np.unique(np.round(np.linspace(0, epochs, n_checkpoints + 1)).astype(int))
    rec: dict[str, list] = {"epoch": [], "count": [], "acc": [], "loss": []}
    n_lines = int(n_lines)
    if n_lines < 0:
        raise ParameterError(f"n_lines={n_lines!r} must be >= 0")
    if n_lines:
        pairs = np.random.default_rng([seed, 2]).choice(len(X), (n_lines, 2), replace=True)
        pairs = pairs[pairs[:, 0] != pairs[:, 1]]
        rec["crossings"], rec["dist"] = [], []

    def record(ep):
        with torch.no_grad():
            out = net_forward(net, Xt)
            rec["loss"].append(float(torch.nn.functional.cross_entropy(out, yt)))
            rec["acc"].append(float((out.argmax(1) == yt).float().mean()))
        rec["epoch"].append(ep)
        rec["count"].append(count_regions(net, plane))
        if n_lines:
            w = as_weights(net)
            rec["crossings"].append([len(line_breakpoints(w, X[i], X[j])) for i, j in pairs])
            rec["dist"].append(boundary_distance(w, X[pairs.ravel()]))

    per_epoch = -(-len(Xt) // batch)  # steps per pass

    def at_step(t: int, _loss: Any) -> None:
        if t % per_epoch == 0 and t // per_epoch in ck:
            record(t // per_epoch)

    train(net, lambda idx: torch.nn.functional.cross_entropy(net_forward(net, Xt[idx]), yt[idx]),
          lr=lr, optimizer="adam", sampling="epochs", epochs=epochs, n=len(Xt), batch=batch,
          generator=g, callback=at_step)
    flat = np.concatenate([a.ravel() for W, b in as_weights(net) for a in (W, b)])
    return {**{k: np.asarray(v) for k, v in rec.items()}, "weights": flat, "triple": triple}


def check_chapter_params(params: Mapping[str, Any]) -> list[list[int]]:
    """Validate Chapter 6's parameters before any work: ``neurons`` (≥ 2 distinct) divisible by
    every ``depths``, positive ``n_nets``/``n_line_nets``/``n_check_nets``/``epochs``/
    ``n_train_seeds``, non-empty ``label_noise`` (fractions, the first 0), ``preprocessings``
    (of :data:`DIGIT_PREPROCESSINGS`), ``lrs`` (positive), ``grid_sizes`` (positive integers), the
    step-by-step run's ``step_nets``, ``steps`` (increasing), ``early_step`` (one of them) and
    ``n_held``, the ladder's rungs (:func:`parse_rung`, with ``dataset`` when given:
    :func:`ladder_rungs`), ``ladder_nets`` and ``ladder_steps``, and ``line_neurons`` (the N
    compared along lines, divisible by every depth).  Returns the architectures compared at
    initialisation (:func:`architectures`)."""
    archs = architectures(params["neurons"], params["depths"])
    for name in ("n_nets", "epochs", "n_train_seeds", "n_line_nets", "n_check_nets"):
        check_positive_int(name, params[name])
    if len(set(params["neurons"])) < 2:
        raise ParameterError("neurons must hold at least two distinct numbers of neurons")
    if not params["preprocessings"] or not params["lrs"]:
        raise ParameterError("preprocessings and lrs must be non-empty lists")
    for p in params["preprocessings"]:
        check_choice("preprocessings", p, DIGIT_PREPROCESSINGS)
    for lr in params["lrs"]:
        check_positive("lrs", lr)

    if not params["label_noise"] or not params["grid_sizes"]:
        raise ParameterError("label_noise and grid_sizes must be non-empty lists")
    for f in params["label_noise"]:
        check_fraction("label_noise", f)
    for g in params["grid_sizes"]:
        check_positive_int("grid_sizes", g)
    if params["label_noise"][0] != 0:
        raise ParameterError("label_noise must start with 0.0 (the true labels, paired with the "
                             "noisy runs)")
    for name in ("step_nets", "ladder_nets", "n_held"):
        check_positive_int(name, params[name])
    for name in ("steps", "ladder_steps"):
        values = [check_positive_int(name, v) for v in params[name]]
        if not values or values != sorted(set(values)):
            raise ParameterError(f"{name}={params[name]!r} must be a non-empty increasing list of "
                                 "positive steps")
    if params["early_step"] not in params["steps"]:
        raise ParameterError(f"early_step={params['early_step']!r} must be one of steps="
                             f"{params['steps']!r}")
    if not 3 <= params["n_held"] <= 1797 - 3:
        raise ParameterError(f"n_held={params['n_held']!r} must be in 3..1794")
    if not params["ladder"]:
        raise ParameterError("ladder must hold at least one rung 'side:n:shift' or a data set "
                             f"of {RUNG_DATASETS}")
    architectures(params["line_neurons"], params["depths"])
    if len(set(params["line_neurons"])) < 2:
        raise ParameterError("line_neurons must hold at least two distinct numbers of neurons")
    for rung in ladder_rungs(params):
        parse_rung(rung)
    return archs


def ladder_rungs(params: Mapping[str, Any]) -> list[str]:
    """The ladder's rungs: ``ladder``, and the data set ``dataset`` (``"none"`` or None: none) as
    its last rung (a data set of :data:`RUNG_DATASETS`, validated by
    :func:`layerwise.data.check_source` through :func:`parse_rung`)."""
    extra = [] if params.get("dataset") in (None, "none") else [str(params["dataset"])]
    return list(params["ladder"]) + extra


def slice_demo(points: np.ndarray, archs: Sequence[Sequence[int]], seeds: Sequence[int],
               grid_sizes: Sequence[int], bias_var: float = 1e-6) -> dict[str, np.ndarray]:
    """One He-initialised network per architecture (:func:`he_mlp`, ``seeds[k]``, one output) on
    the plane through the three ``points``: its activation regions (``V{k}``, ``n{k}``, total
    area ``area{k}``), the distinct grid patterns for each of ``grid_sizes`` (``grid{k}``,
    :func:`grid_count`), and the exact counts and grid counts of all architectures stacked
    (``counts`` (A,), ``grid_counts`` (A, len(grid_sizes)))."""
    points = np.asarray(points, dtype=np.float64)
    if len(seeds) != len(archs):
        raise ParameterError(f"one seed per architecture: {len(seeds)} seeds for {len(archs)} "
                             "architectures")
    plane = plane_through(points)
    out: dict[str, np.ndarray] = {}
    for k, (w, s) in enumerate(zip(archs, seeds, strict=True)):
        net = he_mlp(points.shape[1], w, 1, seed=int(s), bias_var=bias_var)
        regs = activation_regions(net, plane)
        out[f"V{k}"], out[f"n{k}"] = regs.vertices, regs.n_vertices
        out[f"grid{k}"] = np.array([grid_count(net, plane, n=g) for g in grid_sizes])
        out[f"area{k}"] = regs.areas.sum()
    out["counts"] = np.array([len(out[f"n{k}"]) for k in range(len(archs))])
    out["grid_counts"] = np.array([out[f"grid{k}"] for k in range(len(archs))])
    return out


def grid_vs_exact(counts: np.ndarray, grid_counts: np.ndarray) -> dict[str, Any]:
    """The brute-force grids against the exact counts (A,) for nested grids (A, G), coarse to
    fine: ``found`` (A, G), the fraction of the exact count each grid finds; ``below``, no grid
    above the exact count; ``refines``, every refinement finds strictly more patterns until a
    grid finds them all."""
    exact = np.asarray(counts)
    grids = np.asarray(grid_counts)
    if grids.ndim != 2 or grids.shape[0] != exact.shape[0]:
        raise ParameterError(f"grid_counts must have shape (len(counts), n_grids), "
                             f"got {grids.shape}")
    refines = (np.diff(grids, axis=1) > 0) | (grids[:, :-1] == exact[:, None])
    return {"found": grids / exact[:, None], "below": bool(np.all(grids <= exact[:, None])),
            "refines": bool(np.all(refines))}


def init_count_table(X: np.ndarray, neurons: Sequence[int], depths: Sequence[int], n_nets: int,
                     seed: int, bias_var: float = 1e-6) -> dict[str, np.ndarray]:
    """:func:`init_counts` for the architectures [N/d]*d of every N in ``neurons`` and d in
    ``depths`` (slice i shared by all), as ``counts`` of shape (len(neurons), len(depths), n_nets),
    with each slice's ``omega``, ``perimeter`` (:func:`slice_angles`) and ``area`` (n_nets,)."""
    counts = init_counts(X, architectures(neurons, depths), n_nets, seed, bias_var)
    planes = [plane_through(X[t]) for t in init_triples(len(X), n_nets, seed)]
    ang = np.array([slice_angles(p) for p in planes])
    return {"counts": counts.reshape(len(neurons), len(depths), n_nets), "omega": ang[:, 0],
            "perimeter": ang[:, 1], "area": np.array([(2 * p.half_width) ** 2 for p in planes])}


def count_summary(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error over the last axis (networks) of region counts; a single network
    has standard error 0 (drawn without an error bar)."""
    c = np.asarray(counts, dtype=float)
    if c.shape[-1] > 1:
        return mean_se(c, axis=-1)
    return c.mean(-1), np.zeros(c.shape[:-1])


def worst_slope(slopes: Mapping[int, Estimate], neurons: Sequence[int], depths: Sequence[int],
                mean: np.ndarray) -> dict[str, Any]:
    """The depth whose growth exponent (``slopes[d]``, :func:`~layerwise.regions.growth_exponent`)
    is farthest from 2, and what shapes it, each direction decided by the slope's 99 % interval
    (:meth:`Estimate.side`): ``case`` is ``"narrow"`` (whole interval above 2.5 at a depth > 1
    whose smallest network has ≤ 8 neurons per layer and fewer regions than one layer of the same
    N — a small-width effect), ``"below"`` (whole interval under 2, as the linear term of
    1 + αN + βN² makes it), ``"above"`` (whole interval above 2) or ``"undecided"``. ``mean`` is
    the mean count (len(neurons), len(depths)). Also returns ``depth``, its ``slope`` (the
    Estimate), ``w_small`` (neurons per layer at the smallest N), ``c_w`` and ``c_1`` (mean counts
    at the smallest N at that depth and at depth 1)."""
    worst = max(slopes, key=lambda d: abs(slopes[d].mean - 2))
    slope, w_small = slopes[worst], int(neurons[0]) // worst
    c_w, c_1 = mean[0, list(depths).index(worst)], mean[0, 0]
    side = {1: "above", -1: "below", 0: "undecided"}[slope.side(2.0)]
    narrow = slope.side(2.5) == 1 and worst > 1 and w_small <= 8 and c_w < c_1
    case = "narrow" if narrow else side
    return {"depth": worst, "slope": slopes[worst], "w_small": w_small, "c_w": float(c_w),
            "c_1": float(c_1), "case": case}


def train_runs(X: np.ndarray, y: np.ndarray, widths: Sequence[int], *, epochs: int,
               label_noise: Sequence[float], seeds: Sequence[int], n_checkpoints: int = 8,
               lr: float = 1e-3, batch: int = 64, n_lines: int = 0) -> dict[str, np.ndarray]:
    """:func:`train_counts` for every label-noise fraction and seed (runs with the same seed are
    paired), each output stacked to shape (len(label_noise), len(seeds), …): ``epoch``,
    ``count``, ``acc``, ``loss``, ``weights`` (flattened) and ``triple``."""
    runs = [[train_counts(X, y, widths, epochs=epochs, n_checkpoints=n_checkpoints, label_noise=f,
                          seed=int(s), lr=lr, batch=batch, n_lines=n_lines) for s in seeds]
            for f in label_noise]
    return {k: np.stack([np.stack([r[k] for r in row]) for row in runs]) for k in runs[0][0]}


def bottleneck_demo(points: np.ndarray, widths: Sequence[int], seeds: Sequence[int],
                    min_deficit: float = 0.01) -> dict[str, Any]:
    """A He-initialised network with hidden ``widths`` (one output) on the plane through the three
    ``points`` whose largest merged linear region (:func:`largest_linear_region`) is visibly not
    convex (convex ``deficit`` ≥ ``min_deficit``): the networks from ``seeds`` are tried in order,
    a deterministic search for an event that a single draw can miss (no linear region made of
    several activation regions, or a convex one).  Returns the activation regions (``V``, ``n``,
    ``areas``, ``patterns``, ``maps``), their linear-region ``labels`` (:func:`linear_regions`),
    ``members`` and ``deficit`` of the largest merged linear region, ``found`` (bool), ``tries``
    (networks tried) and ``seed`` (the one shown).  With none found among ``seeds``, the last
    network is returned with ``found`` False, ``members`` empty and ``deficit`` NaN when none of its
    linear regions merges."""
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ParameterError("seeds must hold at least one seed")
    points = np.asarray(points, dtype=np.float64)
    plane = plane_through(points)
    for tries, seed in enumerate(seeds, start=1):  # noqa: B007 - tries is returned
        regs = activation_regions(he_mlp(points.shape[1], widths, 1, seed=seed), plane)
        lab = linear_regions(regs)
        members, deficit = (largest_linear_region(regs, lab) if np.any(np.bincount(lab) > 1)
                            else (np.zeros(0, dtype=np.int64), float("nan")))
        found = bool(deficit >= min_deficit)
        if found:
            break
    return {"V": regs.vertices, "n": regs.n_vertices, "areas": regs.areas, "labels": lab,
            "patterns": regs.patterns, "maps": regs.maps, "members": members, "deficit": deficit,
            "found": np.array(found), "tries": np.array(tries), "seed": np.array(seed)}


def bottleneck_numbers(bn: Mapping[str, Any]) -> dict[str, Any]:
    """The numbers Chapter 6 quotes from its bottleneck search (:func:`bottleneck_demo`): activation
    regions (``bn_activation``), linear regions (``bn_linear``), networks tried (``bn_tries``), the
    activation regions of the largest merged linear region (``bn_members``) and its convex-hull
    deficit (``bn_deficit``)."""
    return {"bn_activation": len(bn["n"]), "bn_linear": int(np.max(bn["labels"]) + 1),
            "bn_tries": int(bn["tries"]), "bn_members": len(bn["members"]),
            "bn_deficit": float(bn["deficit"])}


def sensitivity_on_slice(weights: np.ndarray, dims: Sequence[int], points: np.ndarray, *,
                         output: int,
                         check: int, seed: int, mc_unit: np.ndarray) -> dict[str, np.ndarray]:
    """Tangent sample sensitivity of the network ``unflatten(weights, dims)`` on the plane through
    the three ``points``: :func:`sensitivity_by_region` on its activation regions (``norm``,
    ``checked``, ``within``, ``between``), the regions (``V``, ``n``, ``areas``), and
    ``mc_sq``, ‖Sens‖²_F at uniform points of the square, ``mc_unit`` (n, 2) being uniform draws
    on [0, 1) mapped to [−h, h) exactly as ``Generator.uniform(−h, h)`` maps them."""
    w = unflatten(np.asarray(weights, dtype=np.float64), dims)
    plane = plane_through(points)
    regs = activation_regions(w, plane)
    out = sensitivity_by_region(w, plane, regs, output=output, check=check, seed=seed)
    h = plane.half_width
    u = -h + (h - -h) * np.asarray(mc_unit, dtype=np.float64)
    S = net_tangent_sensitivity(from_pairs(w), plane.to_input(u), directions=plane.basis,
                                output=output).numpy()
    return {**out, "areas": regs.areas, "mc_sq": (S**2).sum((1, 2)), "V": regs.vertices,
            "n": regs.n_vertices}


def exact_check_depth1(X: np.ndarray, n: int, n_nets: int, n_slices: int, seed: int,
                       bias_var: float = 1e-6) -> dict[str, np.ndarray]:
    """``n_nets`` one-layer networks of ``n`` ReLUs (:func:`he_mlp`) on each of ``n_slices`` slices
    through random triples of rows of X: exact counts (``counts`` (slices, nets)) and the closed
    form (:func:`one_layer_expected_count`, ``expected`` (slices,)) — an independent check of the
    counter on random networks."""
    rng = np.random.default_rng(seed)
    planes = [plane_through(X[t]) for t in init_triples(len(X), n_slices, rng)]
    n_nets = check_positive_int("n_nets", n_nets)
    counts = np.array([[count_regions(he_mlp(X.shape[1], [n], 1, seed=int(s), bias_var=bias_var), p)
                        for s in rng.integers(2**31, size=n_nets)] for p in planes])
    ang = np.array([slice_angles(p) for p in planes])
    return {"counts": counts, "expected": one_layer_expected_count(n, ang[:, 0], ang[:, 1])}


def line_table(X: np.ndarray, neurons: Sequence[int], depths: Sequence[int], n_nets: int, seed: int,
               bias_var: float = 1e-6) -> dict[str, np.ndarray]:
    """At initialisation (:func:`he_mlp`), for each architecture [N/d]*d and ``n_nets`` networks:
    the boundary crossings of the segment between two random rows of X (``crossings``) and the
    mean distance of its two end points to the nearest boundary (``dist``), both (len(neurons),
    len(depths), n_nets); segment k is shared by all architectures.  Also the one-layer closed
    forms per segment: ``cross_per_neuron`` = θ/π and ``dist_n1`` (len(neurons), n_nets), the mean
    of :func:`one_layer_distance` over the two end points, and the end points' ``norms``
    (n_nets, 2)."""
    n_nets = check_positive_int("n_nets", n_nets)
    rng = np.random.default_rng(seed)
    pairs = np.array([rng.choice(len(X), 2, replace=False) for _ in range(n_nets)])
    archs = architectures(neurons, depths)
    seeds = rng.integers(2**31, size=(len(archs), n_nets))
    cr = np.zeros((len(archs), n_nets))
    di = np.zeros((len(archs), n_nets))
    for k, widths in enumerate(archs):
        for i, (p, q) in enumerate(pairs):
            w = as_weights(he_mlp(X.shape[1], widths, 1, seed=int(seeds[k, i]), bias_var=bias_var))
            cr[k, i] = len(line_breakpoints(w, X[p], X[q]))
            di[k, i] = boundary_distance(w, X[[p, q]]).mean()
    norms = np.linalg.norm(X[pairs], axis=2)  # (nets, 2)
    dist_n1 = np.array([[one_layer_distance(int(N), norms[i], X.shape[1]).mean()
                         for i in range(n_nets)]
                        for N in neurons])
    shape = (len(neurons), len(depths), n_nets)
    return {"crossings": cr.reshape(shape), "dist": di.reshape(shape), "norms": norms,
            "cross_per_neuron": one_layer_line_crossings(1, X[pairs[:, 0]], X[pairs[:, 1]]),
            "dist_n1": dist_n1}


# --------------------------------------------------------------------------------------------
# Independent units of work (``Chapter.cached_units``: stored one by one, here or on a cluster)
# --------------------------------------------------------------------------------------------
def _unit_range(i: int, n: int, per_unit: int) -> range:
    """Items ``i·per_unit … min(n, (i + 1)·per_unit) − 1`` of ``n``: unit ``i`` of a fixed
    grouping."""
    per_unit = check_positive_int("per_unit", per_unit)
    n_units = -(-n // per_unit)
    if not 0 <= int(i) < n_units:
        raise ParameterError(f"unit index={i!r} must lie in [0, {n_units})")
    return range(int(i) * per_unit, min(n, (int(i) + 1) * per_unit))


def init_count_unit(i: int, *, X: np.ndarray, neurons: Sequence[int], depths: Sequence[int],
                    n_nets: int, seed: int, bias_var: float = 1e-6) -> dict[str, np.ndarray]:
    """Slice ``i`` of :func:`init_count_table`: the counts of the networks of every architecture
    [N/d]*d on the plane through triple ``i`` (``counts`` (1, len(neurons), len(depths))) and the
    slice's ``omega``, ``perimeter`` and ``area`` (1,). The triples and the networks' seeds are
    those :func:`init_counts` draws from ``seed`` (re-drawn here, cheap), so the units in any
    split and order give the table's numbers; :func:`assemble_init_counts` puts them together."""
    n_nets = check_positive_int("n_nets", n_nets)
    archs = architectures(neurons, depths)
    (i,) = _unit_range(i, n_nets, 1)
    rng = np.random.default_rng(seed)
    triple = init_triples(len(X), n_nets, rng)[i]
    seeds = rng.integers(2**31, size=(len(archs), n_nets))[:, i]
    plane = plane_through(X[triple])
    counts = [count_regions(he_mlp(X.shape[1], w, 1, seed=int(s), bias_var=bias_var), plane)
              for w, s in zip(archs, seeds, strict=True)]
    omega, perimeter = slice_angles(plane)
    return {"counts": np.array(counts, dtype=np.int64).reshape(1, len(neurons), len(depths)),
            "omega": np.array([omega]), "perimeter": np.array([perimeter]),
            "area": np.array([(2 * plane.half_width) ** 2])}


def assemble_init_counts(units: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The :func:`init_count_unit` units (concatenated on axis 0, slice-major) as
    :func:`init_count_table` returns them: ``counts`` (len(neurons), len(depths), n_nets)."""
    return {**{k: np.asarray(units[k]) for k in ("omega", "perimeter", "area")},
            "counts": np.moveaxis(np.asarray(units["counts"]), 0, -1)}


def line_unit(i: int, *, X: np.ndarray, neurons: Sequence[int], depths: Sequence[int],
              n_nets: int, seed: int, per_unit: int,
              bias_var: float = 1e-6) -> dict[str, np.ndarray]:
    """Segments ``i·per_unit …`` (at most ``per_unit`` of them) of :func:`line_table`, with the
    pairs and network seeds :func:`line_table` draws from ``seed`` (re-drawn here), as arrays
    with the segments first: ``crossings``/``dist`` (k, len(neurons), len(depths)), ``norms``
    (k, 2), ``cross_per_neuron`` (k,) and ``dist_n1`` (k, len(neurons));
    :func:`assemble_lines` puts the units together."""
    n_nets = check_positive_int("n_nets", n_nets)
    archs = architectures(neurons, depths)
    idx = _unit_range(i, n_nets, per_unit)
    rng = np.random.default_rng(seed)
    pairs = np.array([rng.choice(len(X), 2, replace=False) for _ in range(n_nets)])[idx]
    seeds = rng.integers(2**31, size=(len(archs), n_nets))[:, idx]
    cr = np.zeros((len(idx), len(archs)))
    di = np.zeros((len(idx), len(archs)))
    for k, widths in enumerate(archs):
        for j, (p, q) in enumerate(pairs):
            w = as_weights(he_mlp(X.shape[1], widths, 1, seed=int(seeds[k, j]), bias_var=bias_var))
            cr[j, k] = len(line_breakpoints(w, X[p], X[q]))
            di[j, k] = boundary_distance(w, X[[p, q]]).mean()
    norms = np.linalg.norm(X[pairs], axis=2)
    dist_n1 = np.array([[one_layer_distance(int(N), norms[j], X.shape[1]).mean() for N in neurons]
                        for j in range(len(idx))])
    shape = (len(idx), len(neurons), len(depths))
    return {"crossings": cr.reshape(shape), "dist": di.reshape(shape), "norms": norms,
            "cross_per_neuron": one_layer_line_crossings(1, X[pairs[:, 0]], X[pairs[:, 1]]),
            "dist_n1": dist_n1}


def assemble_lines(units: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The :func:`line_unit` units (concatenated on axis 0, segment-major) as :func:`line_table`
    returns them."""
    out = {k: np.asarray(units[k]) for k in ("norms", "cross_per_neuron")}
    return out | {"crossings": np.moveaxis(np.asarray(units["crossings"]), 0, -1),
                  "dist": np.moveaxis(np.asarray(units["dist"]), 0, -1),
                  "dist_n1": np.asarray(units["dist_n1"]).T}


def train_sweep(widths: Sequence[int], *, epochs: int, preprocessings: Sequence[str],
                lrs: Sequence[float], label_noise: Sequence[float], seeds: Sequence[int],
                n_checkpoints: int = 8, batch: int = 64, n_lines: int = 0) -> dict[str, np.ndarray]:
    """:func:`train_runs` on the digits (:func:`digits_inputs`) for every preprocessing and learning
    rate with true labels (``sweep_*`` of shape (P, R, S, …)), and for the first preprocessing and
    learning rate at every label-noise fraction (``noise_*``, (L, S, …)).  Runs with the same seed
    share the slice's triple, the initial network and the batch order."""
    for p in preprocessings:
        check_choice("preprocessings", p, DIGIT_PREPROCESSINGS)
    for lr in lrs:
        check_positive("lrs", lr)
    kw = dict(epochs=epochs, seeds=seeds, n_checkpoints=n_checkpoints, batch=batch, n_lines=n_lines)
    out: dict[str, Any] = {}
    for p_i, p in enumerate(preprocessings):
        X, y = standardise_digits(p)
        rows = [train_runs(X, y, widths, label_noise=[0.0], lr=float(lr), **kw) for lr in lrs]
        for k in rows[0]:
            out.setdefault(f"sweep_{k}", []).append(np.stack([r[k][0] for r in rows]))
        if p_i == 0:
            noisy = train_runs(X, y, widths, label_noise=[f for f in label_noise if f > 0],
                               lr=float(lrs[0]), **kw)
            for k in noisy:
                out[f"noise_{k}"] = np.concatenate([rows[0][k], noisy[k]])
    return {k: (np.stack(v) if isinstance(v, list) else v) for k, v in out.items()}


def train_sweep_unit(j: int, *, widths: Sequence[int], epochs: int,
                     preprocessings: Sequence[str], lrs: Sequence[float],
                     label_noise: Sequence[float], seeds: Sequence[int], n_checkpoints: int = 8,
                     batch: int = 64, n_lines: int = 0) -> dict[str, np.ndarray]:
    """The runs of :func:`train_sweep` with seed ``seeds[j]``, one independent unit (every
    preprocessing and learning rate with true labels, and the first of each at every non-zero
    label-noise fraction: :func:`train_counts`, whose draws depend on the seed only): each output
    with a leading axis of length 1, ``sweep_*`` (1, P, R, …) and ``noise_*`` (1, L, …);
    :func:`assemble_train_sweep` puts the units together."""
    for p in preprocessings:
        check_choice("preprocessings", p, DIGIT_PREPROCESSINGS)
    for lr in lrs:
        check_positive("lrs", lr)
    (j,) = _unit_range(j, len(seeds), 1)
    kw = dict(epochs=epochs, n_checkpoints=n_checkpoints, batch=batch, n_lines=n_lines,
              seed=int(seeds[j]))
    sweep, noisy = [], []
    for p_i, p in enumerate(preprocessings):
        X, y = standardise_digits(p)
        sweep.append([train_counts(X, y, widths, label_noise=0.0, lr=float(lr), **kw)
                      for lr in lrs])
        if p_i == 0:
            noisy = [sweep[0][0]] + [train_counts(X, y, widths, label_noise=f, lr=float(lrs[0]),
                                                  **kw) for f in label_noise if f > 0]
    out = {f"sweep_{k}": np.stack([np.stack([r[k] for r in row]) for row in sweep])[None]
           for k in sweep[0][0]}
    return out | {f"noise_{k}": np.stack([r[k] for r in noisy])[None] for k in noisy[0]}


def assemble_train_sweep(units: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The :func:`train_sweep_unit` units (concatenated on axis 0, one per seed) as
    :func:`train_sweep` returns them: ``sweep_*`` (P, R, S, …), ``noise_*`` (L, S, …)."""
    return {k: np.moveaxis(np.asarray(v), 0, 2 if k.startswith("sweep_") else 1)
            for k, v in units.items()}


def ratio_estimate(values: np.ndarray) -> Estimate:
    """Mean of per-run ratios ``values`` (n,): :func:`layerwise.stats.estimate` (standard error,
    n − 1 d.o.f.), or the single value with no standard error for one run (graded as a point)."""
    v = np.asarray(values, dtype=float).ravel()
    if len(v) < 2:
        return Estimate(float(v.mean()), n=len(v))
    return estimate(v)


def slice_view(points: np.ndarray) -> tuple[float, np.ndarray]:
    """The square of the plane through three ``points`` (:func:`plane_through`) as the figures
    draw it: its half-width and the points in slice coordinates (3, 2)."""
    plane = plane_through(points)
    return plane.half_width, plane.to_plane(np.asarray(points, dtype=np.float64))


def closed_form_ratio(check: Mapping[str, np.ndarray]) -> Any:
    """Exact one-layer counts over their closed form (:func:`exact_check_depth1`'s ``counts``
    (slices, nets) over ``expected`` (slices,)), as a :func:`layerwise.stats.estimate` over all
    networks — unbiased at 1 if the counter is right (Crofton + Euler, zero-bias limit)."""
    counts, expected = np.asarray(check["counts"]), np.asarray(check["expected"])
    if counts.ndim != 2 or expected.shape != (counts.shape[0],):
        raise ParameterError(f"counts must be (slices, nets) and expected (slices,), "
                             f"got {counts.shape}, "
                             f"{expected.shape}")
    return estimate((counts / expected[:, None]).ravel())


def init_summary(init: Mapping[str, np.ndarray], neurons: Sequence[int], depths: Sequence[int],
                 n_curve: int = 60) -> dict[str, Any]:
    """Everything Chapter 6 reads off :func:`init_count_table`: ``counts`` (float), their ``mean``
    and ``se`` over networks (:func:`count_summary`), the ``density`` over the one-layer closed
    form (:func:`~layerwise.regions.density_by_depth`) and, at the largest N = ``n_big``, as an
    Estimate per depth (``density_at_big``: ratio of means, jackknife standard error over the
    slices), the closed form averaged over the slices on ``n_curve`` log-spaced N (``curve``
    (2, n_curve)), the growth exponent per depth (``slopes``, Estimates of
    :func:`~layerwise.regions.growth_exponent`), ``montufar_factor`` per depth (Montúfar et al.'s
    maximum for [N/d]*d over that of one layer, at N = ``n_big``), the figure's ``arrays`` and the
    ``glue`` numbers (``n_big``, the ranges of T_K = √(Ω/(2π·area)) and of Ω/2π over the
    slices)."""
    counts = np.asarray(init["counts"]).astype(float)  # (neurons, depths, networks)
    omega, perimeter, area = init["omega"], init["perimeter"], init["area"]
    mean, se = count_summary(counts)
    Ns = np.array(neurons, float)
    dens = density_by_depth(counts, omega, perimeter, neurons)
    grid = np.geomspace(Ns[0], Ns[-1], check_positive_int("n_curve", n_curve))
    curve = np.array([grid, one_layer_expected_count(grid[:, None], omega, perimeter).mean(1)])
    slopes = {d: growth_exponent(neurons, counts[:, d_i]) for d_i, d in enumerate(depths)}
    density_at_big = {d: Estimate(float(dens["mean"][-1, i]), float(dens["se"][-1, i]), dens["dof"],
                                  counts.shape[2]) for i, d in enumerate(depths)}
    n_big = int(Ns[-1])
    t_k, frac = np.sqrt(omega / (2 * np.pi * area)), omega / (2 * np.pi)
    glue = {"n_big": n_big, "t_k": f"{t_k.min():.3f}–{t_k.max():.3f}",
            "omega_frac": f"{frac.min():.2f}–{frac.max():.2f}"}
    factor = {d: montufar_max([n_big // d] * d) / montufar_max([n_big]) for d in depths}
    arrays = {"neurons": Ns, "depths": list(depths), "counts": counts, "omega": omega,
              "perimeter": perimeter, "area": area, "ratio": dens["ratio"]}
    return {"Ns": Ns, "counts": counts, "mean": mean, "se": se, "density": dens,
            "density_at_big": density_at_big, "curve": curve, "slopes": slopes, "n_big": n_big,
            "montufar_factor": factor, "arrays": arrays, "glue": glue}


def line_summary(lines: Mapping[str, np.ndarray], neurons: Sequence[int], depths: Sequence[int],
                 n_in: int,
                 n_curve: int = 60) -> dict[str, Any]:
    """Everything Chapter 6 reads off :func:`line_table`: crossings per unit of θ/π (mean ± SE over
    segments, ``cross_mean``/``cross_se`` (N, depths)), distances to the nearest boundary
    (``dist_mean``/``dist_se``), the one-layer distance closed form (:func:`one_layer_distance`)
    averaged over the end points on ``n_curve`` log-spaced N (``dist_curve`` (2, n_curve)), the
    exponents of crossings (``lx``) and distances (``dx``) per depth between the smallest and the
    largest N (Estimates of :func:`~layerwise.regions.pair_exponent`), the figure's ``arrays``
    and the ``glue`` numbers (the ranges over depths, at the largest N, of the crossings per
    Nθ/π and of the distance over the one-layer closed form)."""
    Ns = np.array(neurons, float)
    cm, cse = count_summary(lines["crossings"] / lines["cross_per_neuron"])
    dm, dse = count_summary(lines["dist"])
    grid = np.geomspace(Ns[0], Ns[-1], check_positive_int("n_curve", n_curve))
    dist_curve = np.array([grid, [one_layer_distance(int(round(n)), lines["norms"], n_in).mean()
                                  for n in grid]])
    lx = {d: pair_exponent(neurons, lines["crossings"][:, d_i]) for d_i, d in enumerate(depths)}
    dx = {d: pair_exponent(neurons, lines["dist"][:, d_i]) for d_i, d in enumerate(depths)}
    per_theta, vs_closed = cm[-1] / Ns[-1], dm[-1] / dist_curve[1, -1]
    glue = {"line_per_theta": f"{per_theta.min():.2f}–{per_theta.max():.2f}",
            "dist_vs_closed": f"{vs_closed.min():.2f}–{vs_closed.max():.2f}"}
    arrays = {"neurons": Ns, "depths": list(depths), "crossings": lines["crossings"],
              "dist": lines["dist"],
              "cross_per_neuron": lines["cross_per_neuron"], "norms": lines["norms"]}
    return {"cross_mean": cm, "cross_se": cse, "dist_mean": dm, "dist_se": dse,
            "dist_curve": dist_curve,
            "lx": lx, "dx": dx, "arrays": arrays, "glue": glue}


def wide_window(neurons: Sequence[int], depth: int, min_width: int) -> list[int]:
    """Indices of the ``neurons`` (total N, split evenly over ``depth`` layers) whose every layer
    has at least ``min_width`` units, N/depth ≥ min_width: the window on which a law stated for
    wide layers is graded."""
    depth = check_positive_int("depth", depth)
    min_width = check_positive_int("min_width", min_width)
    return [k for k, n in enumerate(neurons) if int(n) // depth >= min_width]


def local_exponents(neurons: Sequence[int], values: np.ndarray) -> list[Estimate]:
    """The exponent b of ``value ∝ N^b`` between each pair of consecutive ``neurons``
    (:func:`~layerwise.regions.pair_exponent` on ``values[k:k+2]``, (len(neurons), n) paired
    along the last axis): how the exponent drifts as the layers widen."""
    v = np.asarray(values, dtype=float)
    return [pair_exponent(neurons[k:k + 2], v[k:k + 2]) for k in range(len(neurons) - 1)]


def window_exponents(lines: Mapping[str, np.ndarray], neurons: Sequence[int],
                     depths: Sequence[int], min_width: int) -> dict[str, Any]:
    """The two 1-D laws' exponents per depth (:func:`~layerwise.regions.pair_exponent`) on the
    wide window (:func:`wide_window`: N/d ≥ ``min_width``; the two largest N when fewer than two
    are that wide, ``wide`` {depth: False}) — ``lx``/``dx`` {depth: Estimate}, ``window`` {depth:
    [indices of the N used]} — and the narrow-width drift: ``local_lx``/``local_dx`` {depth:
    [Estimate per consecutive pair of N]} and ``full_dx`` {depth: Estimate over the whole
    range}."""
    out: dict[str, Any] = {"lx": {}, "dx": {}, "window": {}, "wide": {}, "local_lx": {},
                           "local_dx": {}, "full_dx": {}}
    for d_i, d in enumerate(depths):
        keep = wide_window(neurons, d, min_width)
        out["wide"][d] = len(keep) >= 2
        keep = keep if len(keep) >= 2 else [len(neurons) - 2, len(neurons) - 1]
        out["window"][d] = keep
        for key, name in (("lx", "crossings"), ("dx", "dist")):
            v = np.asarray(lines[name])[:, d_i]
            out[key][d] = pair_exponent([neurons[k] for k in keep], v[keep])
            out[f"local_{key}"][d] = local_exponents(neurons, v)
        out["full_dx"][d] = pair_exponent(neurons, np.asarray(lines["dist"])[:, d_i])
    return out


def exponent_control(neurons: Sequence[int], values: np.ndarray, exponent: float, *, tol: float,
                     n_draws: int, seed: int, confidence: float = 0.99) -> dict[str, Any]:
    """Estimator control of :func:`~layerwise.regions.pair_exponent` under the claim's own design
    (the same two end N, the same number of paired segments): ``n_draws`` synthetic data sets
    log v[k, i] = log v[0, i] + b·log(N_k/N_0) + e_{k,i} with the known ``exponent`` b, each
    segment's level taken from ``values`` (len(neurons), n) at the smallest N and e ~ N(0, s²),
    s² = var(log v[−1] − log v[0]) / 2 from the measured values.  Returns the ``coverage`` of the
    ``confidence`` t intervals, the ``bias`` of the mean estimate, and ``recovers``: coverage at
    least ``confidence`` − 0.04 and |bias| ≤ ``tol``/5 (a fifth of the claim's margin)."""
    from ..stats import t_interval

    N = np.asarray(neurons, dtype=float)[[0, -1]]
    v = np.asarray(values, dtype=float)[[0, -1]]
    n_draws = check_positive_int("n_draws", n_draws)
    sd = float(np.sqrt(np.var(np.log(v[1] / v[0]), ddof=1) / 2))
    rng = np.random.default_rng(seed)
    level = np.log(v[0])
    hits, got = 0, []
    for _ in range(n_draws):
        logv = level + np.array([[0.0], [exponent * np.log(N[1] / N[0])]])
        e = pair_exponent([int(N[0]), int(N[1])], np.exp(logv + rng.normal(0, sd, logv.shape)))
        lo, hi = t_interval(e.mean, e.se, e.dof, confidence)
        hits += int(lo <= exponent <= hi)
        got.append(e.mean)
    coverage, bias = hits / n_draws, float(np.mean(got) - exponent)
    return {"coverage": coverage, "bias": bias, "sd": sd,
            "recovers": bool(coverage >= confidence - 0.04 and abs(bias) <= tol / 5)}


#: The second level of a table's columns: our mean, its standard error, the value to compare.
OURS, SE = "ours", "± s.e."


def _columns(groups: Mapping[str, Sequence[str]]) -> pd.MultiIndex:
    return pd.MultiIndex.from_tuples([(g, sub) for g, subs in groups.items() for sub in subs])


def init_table(at_init: Mapping[str, Any]) -> pd.DataFrame:
    """The counts at initialisation, one row per depth, from :func:`init_summary`: the regions
    per unit area at N = ``n_big`` over the one-layer closed form of the same slice
    (``density_at_big``; Hanin & Rolnick 2019, Thm. 5 with its constant made explicit, 1 for one
    layer) with its standard error, beside Montúfar et al.'s maximum over that of one layer
    (``montufar_factor``; Montúfar et al. 2014, Thm. 4); and the growth exponent b of
    count ∝ Nᵇ (``slopes``) with its standard error, beside Hanin & Rolnick's nᵢₙ = 2 (Thm. 5)."""
    density = f"regions per area ÷ one layer, N = {int(at_init['n_big'])}"
    growth = "growth exponent b, count ∝ Nᵇ"
    cols = _columns({density: (OURS, SE, "Montúfar max."), growth: (OURS, SE, "Hanin & Rolnick")})
    depths = list(at_init["slopes"])
    rows = [[*cell(at_init["density_at_big"][d]), float(at_init["montufar_factor"][d]),
             *cell(at_init["slopes"][d]), 2.0] for d in depths]
    return pd.DataFrame(rows, index=pd.Index(depths, name="depth"), columns=cols)


def line_exponent_table(wide: Mapping[str, Any], neurons: Sequence[int]) -> pd.DataFrame:
    """The one-dimensional laws, one row per depth, from :func:`window_exponents`: the graded
    window of N, the exponent a of crossings ∝ Nᵃ along a segment (``lx``) and of the distance of
    a data point to the nearest boundary (``dx``) on it, each with its standard error beside
    Hanin & Rolnick's (2019, ICML) +1 and −1, and the distance exponent over every N (``full_dx``,
    narrow layers included)."""
    cross, dist = "crossings along a segment ∝ Nᵃ: a", "distance to the nearest boundary ∝ Nᵃ: a"
    full = f"distance, N = {int(neurons[0])}–{int(neurons[-1])}"
    cols = _columns({cross: (OURS, SE, "Hanin & Rolnick"), dist: (OURS, SE, "Hanin & Rolnick"),
                     full: (OURS, SE)})
    depths = list(wide["lx"])
    rows = [[*cell(wide["lx"][d]), 1.0, *cell(wide["dx"][d]), -1.0, *cell(wide["full_dx"][d])]
            for d in depths]
    index = pd.MultiIndex.from_tuples(
        [(d, f"{int(neurons[wide['window'][d][0]])}–{int(neurons[wide['window'][d][-1]])}")
         for d in depths], names=["depth", "N graded"])
    return pd.DataFrame(rows, index=index, columns=cols)


def drift_table(wide: Mapping[str, Any], neurons: Sequence[int]) -> pd.DataFrame:
    """The narrow-width drift of the distance law, one row per depth, from
    :func:`window_exponents`: the exponent between each pair of neighbouring N (``local_dx``)
    with its standard error; Hanin & Rolnick's law is −1 for wide layers."""
    pairs = [f"N {int(a)}→{int(b)}" for a, b in zip(neurons[:-1], neurons[1:], strict=True)]
    cols = _columns({p: (OURS, SE) for p in pairs})
    depths = list(wide["local_dx"])
    rows = [[v for e in wide["local_dx"][d] for v in cell(e)] for d in depths]
    return pd.DataFrame(rows, index=pd.Index(depths, name="depth"), columns=cols)


def training_summary(sweep: Mapping[str, np.ndarray], preprocessings: Sequence[str],
                     lrs: Sequence[float], label_noise: Sequence[float],
                     widths: Sequence[int] = (32, 32, 32)) -> dict[str, Any]:
    """Everything Chapter 6 reads off :func:`train_sweep`: every curve over its value at
    initialisation (``ratio``: ``count`` (P, R, S, T), ``noise`` (L, S, T), summed boundary
    ``crossings`` and mean ``dist`` (P, R, S, T)); the final ratios as :func:`ratio_estimate` —
    ``grows`` (first preprocessing and learning rate), ``lines`` (crossings), ``dist`` (distance
    of the segments' end points to the nearest boundary), ``grows_lr`` (second learning rate,
    None without one), ``memorisation`` (paired difference between the last label-noise fraction
    and true labels, None without one), and one per setting: ``by_prep`` (first learning rate),
    ``by_lr`` (first preprocessing) and ``by_noise`` (first preprocessing and learning rate);
    ``acc``, the smallest final training accuracy at the first learning rate; ``max_frac``, the
    largest final count over Montúfar et al.'s maximum for ``widths``; ``alt``, the growth factors
    the architecture allows (``count``: that maximum over the initial count; ``lines``: the
    maximal boundaries along a segment, Π widths·(1 + n_L) − 1 pieces' edges, over the initial
    crossings; first setting, mean over runs), the alternatives of the training claims;
    ``by_setting``, the final count ratio of every preprocessing and learning rate (true labels;
    preprocessing-major, the rows of :func:`training_table`); ``n_runs``, the runs per setting."""
    def rel(a: np.ndarray) -> np.ndarray:  # ratio to initialisation along the checkpoint axis
        return a / a[..., :1]

    rc, rn = rel(sweep["sweep_count"].astype(float)), rel(sweep["noise_count"].astype(float))
    rx, rd = rel(sweep["sweep_crossings"].sum(-1).astype(float)), rel(sweep["sweep_dist"].mean(-1))
    if rc.shape[:2] != (len(preprocessings), len(lrs)) or rn.shape[0] != len(label_noise):
        raise ParameterError(f"the sweep's shape {rc.shape[:2]}, {rn.shape[:1]} does not match "
                             f"preprocessings={list(preprocessings)}, lrs={list(lrs)}, "
                             f"label_noise={list(label_noise)}")
    final = np.concatenate([sweep["sweep_count"][..., -1].ravel(),
                            sweep["noise_count"][..., -1].ravel()])
    max_frac = float((final / montufar_max(list(widths))).max())
    # the growth the architecture allows: Montúfar et al.'s maximum over the initial count
    # (plane), and the maximal number of boundaries along each segment (n_in = 1) over the
    # initial crossings
    c0 = sweep["sweep_count"][0, 0, :, 0].astype(float)
    x0 = sweep["sweep_crossings"][0, 0, :, 0].astype(float)
    n_seg = x0.shape[-1] if x0.ndim > 1 else 1
    x0_total = np.maximum(x0.reshape(len(c0), -1).sum(-1), 1)
    alt = {"count": float(np.mean(montufar_max(list(widths)) / c0)),
           "lines": float(np.mean(n_seg * (montufar_max(list(widths), n_in=1) - 1) / x0_total))}
    return {"ratio": {"count": rc, "noise": rn, "crossings": rx, "dist": rd},
            "grows": ratio_estimate(rc[0, 0, :, -1]), "lines": ratio_estimate(rx[0, 0, :, -1]),
            "dist": ratio_estimate(rd[0, 0, :, -1]),
            "grows_lr": ratio_estimate(rc[0, 1, :, -1]) if len(lrs) > 1 else None,
            "memorisation": (ratio_estimate(rn[-1, :, -1] - rn[0, :, -1])
                             if len(label_noise) > 1 else None),
            "by_prep": [ratio_estimate(rc[i, 0, :, -1]) for i in range(len(preprocessings))],
            "by_lr": [ratio_estimate(rc[0, j, :, -1]) for j in range(len(lrs))],
            "by_noise": [ratio_estimate(rn[i, :, -1]) for i in range(len(label_noise))],
            "acc": float(sweep["sweep_acc"][:, 0, :, -1].min()),
            "by_setting": [ratio_estimate(rc[i, j, :, -1]) for i in range(len(preprocessings))
                           for j in range(len(lrs))],
            "max_frac": max_frac, "alt": alt, "n_runs": int(rc.shape[2])}


def training_table(training: Mapping[str, Any], preprocessings: Sequence[str],
                   lrs: Sequence[float], label_noise: Sequence[float]) -> pd.DataFrame:
    """The training sweep's final ratios to initialisation, from :func:`training_summary`'s
    ``ratio`` (mean over runs, :func:`ratio_estimate`, with its standard error): one row per
    preprocessing and learning rate (every true-label setting the sweep ran), and per further
    fraction of random labels with the first preprocessing and
    learning rate; columns the region count on the slice and, where the sweep records them (true
    labels), the boundary crossings along the segments and the distance of their end points to
    the nearest boundary (Hanin & Rolnick 2019, NeurIPS Figs. 5–6 and ICML §3)."""
    r = training["ratio"]
    if r["count"].shape[:2] != (len(preprocessings), len(lrs)) or len(r["noise"]) != len(
            label_noise):
        raise ParameterError("preprocessings, lrs and label_noise must be those of the sweep")
    cols = _columns({q: (OURS, SE) for q in ("regions", "crossings", "distance")})
    settings = ([(i, j, 0) for i in range(len(preprocessings)) for j in range(len(lrs))]
                + [(0, 0, k) for k in range(1, len(label_noise))])
    rows, index = [], []
    for i, j, k in settings:
        if k:
            row = [*cell(ratio_estimate(r["noise"][k, :, -1]))] + [float("nan")] * 4
        else:
            row = [v for q in ("count", "crossings", "dist")
                   for v in cell(ratio_estimate(r[q][i, j, :, -1]))]
        rows.append(row)
        index.append((preprocessings[i], float(lrs[j]), f"{100 * float(label_noise[k]):g} %"))
    names = ["inputs", "learning rate", "random labels"]
    return pd.DataFrame(rows, index=pd.MultiIndex.from_tuples(index, names=names), columns=cols)


def sensitivity_summary(sens: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """The numbers Chapter 6 reads off :func:`sensitivity_on_slice`: the largest relative
    difference of Sens within a checked region (``within``), the median over checked regions of the
    smallest relative difference to another region (``between``), and the two sides of the slides'
    identity E_x‖Sens(x)‖² = E_A‖Sens(A)‖² (Daróczy, slides §3): the area-weighted mean of ‖Sens‖²
    over regions (``by_region``, from ``norm`` and ``areas``) and the
    :func:`layerwise.stats.estimate` of ``mc_sq`` at uniform points of the square (``mc``)."""
    areas, norm = np.asarray(sens["areas"], dtype=float), np.asarray(sens["norm"], dtype=float)
    if areas.shape != norm.shape or np.any(areas < 0) or areas.sum() <= 0:
        raise ParameterError("areas must be non-negative, not all zero, one per region of norm")
    return {"within": float(np.max(sens["within"])), "between": float(np.median(sens["between"])),
            "by_region": float((areas / areas.sum() * norm ** 2).sum()),
            "mc": estimate(sens["mc_sq"])}




# --------------------------------------------------------------------------------------------
# Training, step by step: counts on slices through training, held-out and off-data points, and
# the ladder on data-set size and input dimension
# --------------------------------------------------------------------------------------------
SLICES = ("train", "held_out", "off_data")


def _stacked_he(d_in: int, widths: Sequence[int], d_out: int, seeds: Sequence[int],
                bias_var: float) -> dict[str, torch.Tensor]:
    nets = [he_mlp(d_in, widths, d_out, seed=int(s), bias_var=bias_var) for s in seeds]
    return {k: torch.stack([net[k] for net in nets]) for k in nets[0]}


def train_step_counts(X: np.ndarray, y: np.ndarray, widths: Sequence[int], *,
                      slice_points: np.ndarray, steps: Sequence[int], seed: int,
                      lr: float = 1e-3, batch: int = 64,
                      bias_var: float = 1e-6) -> dict[str, np.ndarray]:
    """K = len(slice_points) He-initialised ReLU MLPs (:func:`he_mlp`, ``widths`` hidden, one
    output per class) trained at once and independently with Adam (Kingma & Ba 2015, per
    coordinate, so the networks do not interact) on the mean cross-entropy of mini-batches of
    ``batch`` rows of (X, y), each network on its own fresh random permutation per pass; the
    activation regions of network k on the planes through each triple ``slice_points[k, s]``
    (:func:`plane_through`, shape (K, S, 3, d)) are counted after every step in ``steps``
    (step 0, the initialisation, is always counted).  Returns ``steps`` (T,), ``count``
    (K, S, T) and the final training accuracy ``acc`` (K,)."""
    pts = np.asarray(slice_points, dtype=np.float64)
    if pts.ndim != 4 or pts.shape[2:] != (3, X.shape[1]):
        raise ParameterError(f"slice_points must have shape (nets, slices, 3, {X.shape[1]}), "
                             f"got {pts.shape}")
    ck = np.unique(np.concatenate([[0], [check_positive_int("steps", s) for s in steps]]))
    batch, lr = check_positive_int("batch", batch), check_positive("lr", lr)
    K, n_cls = len(pts), int(y.max()) + 1
    rng = np.random.default_rng(seed)  # the batch order's seed, then one per network
    gen = torch.Generator().manual_seed(int(rng.integers(2**31)))
    net = _stacked_he(X.shape[1], widths, n_cls, rng.integers(2**31, size=K), bias_var)
    planes = [[plane_through(p) for p in row] for row in pts]
    Xt, yt = torch.tensor(X, dtype=torch.float32), torch.tensor(y)
    counts = np.zeros((K, pts.shape[1], len(ck)), dtype=np.int64)

    def record(t: int) -> None:
        layers = [(net[f"W{l}"].detach().double().numpy(), net[f"b{l}"].detach().double().numpy())
                  for l in range(1, len(widths) + 2)]
        for k in range(K):
            w = [(W[k], b[k]) for W, b in layers]
            counts[k, :, t] = [count_regions(w, p) for p in planes[k]]

    def loss(idx: torch.Tensor) -> torch.Tensor:  # idx (K, batch): each network its own rows
        out = net_forward(net, Xt[idx])  # (K, batch, classes)
        return torch.nn.functional.cross_entropy(out.reshape(-1, n_cls), yt[idx].reshape(-1),
                                                 reduction="sum") / batch

    train(net, loss, lr=lr, optimizer="adam", sampling="permutations", steps=int(ck[-1]),
          n=len(X), batch=batch, n_nets=K, generator=gen,
          callback=lambda t, _loss: record(int(np.searchsorted(ck, t))) if t in ck else None)
    with torch.no_grad():
        acc = (net_forward(net, Xt).argmax(-1) == yt).double().mean(1).numpy()
    return {"steps": ck, "count": counts, "acc": acc}


def step_experiment(widths: Sequence[int], *, n_nets: int, steps: Sequence[int], n_held: int,
                    seed: int, lr: float = 1e-3, batch: int = 64) -> dict[str, np.ndarray]:
    """:func:`train_step_counts` on the raw 8 × 8 digits less ``n_held`` held-out ones (a random
    split), ``n_nets`` networks, each counted on three slices (:data:`SLICES`): through three of
    its training digits, three held-out digits and three off-data points
    (:func:`off_data_points` of the training digits).  Returns ``steps``, ``count``
    (nets, 3, T), ``acc`` (nets,), the slices' ``points`` (nets, 3, 3, 64) and the indices of
    the ``held`` digits."""
    n_nets = check_positive_int("n_nets", n_nets)
    X, y = upsampled_digits(8)
    n_held = check_positive_int("n_held", n_held)
    if not 3 <= n_held <= len(X) - 3:
        raise ParameterError(f"n_held={n_held} must leave at least 3 digits on each side")
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(X))
    held, kept = order[:n_held], order[n_held:]
    off = off_data_points(X[kept], 3 * n_nets, rng).reshape(n_nets, 3, -1)
    pts = np.stack([np.stack([X[rng.choice(kept, 3, replace=False)],
                              X[rng.choice(held, 3, replace=False)], off[k]])
                    for k in range(n_nets)])
    run = train_step_counts(X[kept], y[kept], widths, slice_points=pts, steps=steps,
                            seed=int(rng.integers(2**31)), lr=lr, batch=batch)
    return {**run, "points": pts, "held": np.sort(held)}


def ladder_unit(i: int, *, widths: Sequence[int], rungs: Sequence[str], n_nets: int,
                steps: Sequence[int], seed: int, lr: float = 1e-3,
                batch: int = 64) -> dict[str, np.ndarray]:
    """Network ``i`` of the ladder (rung ``i // n_nets``, network ``i % n_nets``), one independent
    unit of work (``Chapter.cached_units``: a long rung runs in parts, resumed from the store):
    :func:`train_step_counts` of one network on the rung's training set (:func:`rung_images`
    with its translations, :func:`shifted_copies`), counted on the plane through three of the
    rung's untranslated images.  Its draws depend on (``seed``, rung, network) only.  Returns
    ``count`` (1, T), ``acc`` (1,), ``n_train`` (1,) and the checkpoints ``steps`` (T,), the
    same in every unit; :func:`assemble_ladder` puts the units together."""
    n_nets = check_positive_int("n_nets", n_nets)
    (i,) = _unit_range(i, n_nets * len(rungs), 1)
    r, k = divmod(i, n_nets)
    X, y, shift = rung_images(rungs[r], seed)
    rng = np.random.default_rng([seed, r, k])
    pts = X[rng.choice(len(X), 3, replace=False)][None, None]
    Xs, ys = shifted_copies(X, y, shift)
    run = train_step_counts(Xs, ys, widths, slice_points=pts, steps=steps,
                            seed=int(rng.integers(2**31)), lr=lr, batch=batch)
    return {"count": run["count"][:, 0], "acc": run["acc"], "n_train": np.array([len(Xs)]),
            "steps": run["steps"]}


def assemble_ladder(units: Mapping[str, np.ndarray], n_rungs: int) -> dict[str, np.ndarray]:
    """The :func:`ladder_unit` units (concatenated on axis 0, rung-major; ``steps`` once) as
    ``count`` (rungs, nets, T), ``acc`` (rungs, nets), ``n_train`` (rungs,) and ``steps``."""
    count = np.asarray(units["count"])
    n_rungs = check_positive_int("n_rungs", n_rungs)
    if len(count) % n_rungs:
        raise ParameterError(f"{len(count)} units do not split into {n_rungs} rungs")
    return {"count": count.reshape(n_rungs, -1, count.shape[-1]),
            "acc": np.asarray(units["acc"]).reshape(n_rungs, -1),
            "n_train": np.asarray(units["n_train"]).reshape(n_rungs, -1)[:, 0],
            "steps": np.asarray(units["steps"])}


def ladder_experiment(widths: Sequence[int], *, rungs: Sequence[str], n_nets: int,
                      steps: Sequence[int], seed: int, lr: float = 1e-3,
                      batch: int = 64) -> dict[str, np.ndarray]:
    """Every :func:`ladder_unit` of the ladder (``n_nets`` networks per rung of
    :func:`parse_rung`), here and in order, put together by :func:`assemble_ladder`: ``count``
    (rungs, nets, T), ``acc`` (rungs, nets), ``n_train`` (rungs,) and ``steps``."""
    for r in rungs:
        parse_rung(r)
    n_nets = check_positive_int("n_nets", n_nets)
    units = [ladder_unit(i, widths=widths, rungs=rungs, n_nets=n_nets, steps=steps, seed=seed,
                         lr=lr, batch=batch) for i in range(n_nets * len(rungs))]
    joined = {k: np.concatenate([u[k] for u in units]) for k in ("count", "acc", "n_train")}
    return assemble_ladder({**joined, "steps": units[0]["steps"]}, len(rungs))


def log_ratio_summary(count: np.ndarray, steps: np.ndarray) -> dict[str, Any]:
    """Log-ratios log(count_t / count_0) of region counts ``count`` (groups, nets, T) at the
    checkpoints ``steps`` (T,): ``log_ratio`` (groups, nets, T), their ``mean`` and standard
    error ``se`` over the networks (groups, T), and ``at`` (groups, T), an Estimate of the mean
    (:func:`ratio_estimate`) per group and checkpoint."""
    c = np.asarray(count, dtype=float)
    if c.ndim != 3 or c.shape[-1] != len(steps) or np.any(c[..., 0] <= 0):
        raise ParameterError(f"count must be (groups, nets, {len(steps)}) with positive initial "
                             f"counts, got shape {c.shape}")
    lr = np.log(c / c[..., :1])
    mean, se = count_summary(np.moveaxis(lr, -1, -2))
    at = [[ratio_estimate(lr[g, :, t]) for t in range(lr.shape[-1])] for g in range(len(lr))]
    return {"log_ratio": lr, "mean": mean, "se": se, "at": at}


def step_summary(run: Mapping[str, np.ndarray], early_step: int) -> dict[str, Any]:
    """What Chapter 6 reads off :func:`step_experiment`: the log-ratios per slice
    (:func:`log_ratio_summary`, groups = :data:`SLICES`), their Estimates at ``early_step``
    (``early``) and at the last checkpoint (``late``), one per slice, the Estimate over networks
    of each network's log-ratio at ``early_step`` averaged over its slices (``early_all``: the
    slices of one network are independent draws, so their mean varies less; ``late_all`` the same
    at the last checkpoint; ``steps_effect`` the paired change of that average from ``early_step``
    to the last checkpoint: whether the length of training matters), the count ratios
    they stand for (``ratio_early``, ``ratio_late``: exp of the mean), the checkpoint where the
    mean log-ratio through training digits peaks (``peak_step``), the smallest final training
    accuracy (``acc``) and the number of networks (``n_nets``)."""
    steps = np.asarray(run["steps"])
    if early_step not in steps:
        raise ParameterError(f"early_step={early_step} is not a checkpoint; choose one of "
                             f"{[int(s) for s in steps]}")
    t = list(steps).index(early_step)
    summary = log_ratio_summary(np.moveaxis(run["count"], 1, 0), steps)
    early, late = [row[t] for row in summary["at"]], [row[-1] for row in summary["at"]]
    per_net = summary["log_ratio"].mean(0)  # (nets, T): each network's slices averaged
    return {**summary, "steps": steps, "early": early, "late": late,
            "steps_effect": ratio_estimate(per_net[:, -1] - per_net[:, t]),
            "early_all": ratio_estimate(summary["log_ratio"][:, :, t].mean(0)),
            "late_all": ratio_estimate(summary["log_ratio"][:, :, -1].mean(0)),
            "ratio_early": [float(np.exp(e.mean)) for e in early],
            "ratio_late": [float(np.exp(e.mean)) for e in late],
            "peak_step": int(steps[np.argmax(summary["mean"][0])]),
            "acc": float(np.min(run["acc"])), "n_nets": int(run["count"].shape[0])}


def step_table(stepwise: Mapping[str, Any], slice_names: Sequence[str], average: str,
               early_step: int) -> pd.DataFrame:
    """The counts step by step, from :func:`step_summary`: one row per slice (``slice_names``, in
    the order of :data:`SLICES`) and a last row, ``average``, for each network's log-ratio averaged
    over its slices (``early_all``, ``late_all``); at ``early_step`` and at the last checkpoint,
    the mean over networks of log(count / count at initialisation), its standard error and the
    count ratio it stands for (exp of the mean)."""
    if len(slice_names) != len(stepwise["early"]):
        raise ParameterError(f"slice_names must name the {len(stepwise['early'])} slices, got "
                             f"{len(slice_names)}")
    last = int(stepwise["steps"][-1])
    groups = {f"after {int(early_step)} steps": ("early", "early_all"),
              f"after {last} steps": ("late", "late_all")}
    cols = _columns({g: ("mean log-ratio", SE, "count ratio") for g in groups})
    rows = []
    for k in range(len(slice_names) + 1):
        row = []
        for per_slice, pooled in groups.values():
            e = stepwise[per_slice][k] if k < len(slice_names) else stepwise[pooled]
            row += [*cell(e), float(np.exp(e.mean))]
        rows.append(row)
    return pd.DataFrame(rows, index=pd.Index([*slice_names, average], name="slice"), columns=cols)


def ladder_summary(ladder: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """What Chapter 6 reads off :func:`ladder_experiment`: the log-ratios per rung
    (:func:`log_ratio_summary`), their Estimates at the last checkpoint (``late``) and the count
    ratios they stand for (``ratio_late``, exp of the mean), the sign each
    decides at 99 % (``sign``, :meth:`~layerwise.stats.Estimate.sign`), ``size_effect``: the last
    rung's final mean log-ratio less the first's (independent networks: standard errors added in
    quadrature, the smaller rung's d.o.f.; None with one rung or one network), the lowest point
    of each rung's mean curve (``low``), the training-set sizes ``n_train``, the smallest final
    training accuracy per rung (``acc``) and the networks per rung (``n_nets``)."""
    summary = log_ratio_summary(ladder["count"], np.asarray(ladder["steps"]))
    late = [row[-1] for row in summary["at"]]
    first, last = late[0], late[-1]
    size = (Estimate(last.mean - first.mean, float(np.hypot(first.se, last.se)),
                     min(first.dof, last.dof), min(first.n, last.n))
            if len(late) > 1 and first.se and last.se else None)
    return {**summary, "steps": np.asarray(ladder["steps"]), "late": late, "size_effect": size,
            "ratio_late": [float(np.exp(e.mean)) for e in late],
            "sign": [e.sign() for e in late], "low": summary["mean"].min(1),
            "n_train": np.asarray(ladder["n_train"]), "acc": np.asarray(ladder["acc"]).min(1),
            "n_nets": int(ladder["count"].shape[1])}
