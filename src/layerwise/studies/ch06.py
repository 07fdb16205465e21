"""Chapter 6's study (linear regions of ReLU networks, Hanin & Rolnick 2019): the experiments
that run the exact counter of :mod:`layerwise.regions` on the digits (:mod:`layerwise.data`),
one stored unit of work at a time (``Chapter.cached_units``), and the summaries that turn their
arrays into the numbers and :class:`~layerwise.stats.Estimate`\\ s the chapter grades and plots.

At initialisation: random slices and segments through the digits, and an independent check of
the counter against the one-layer closed form.  Through training: sweeps over preprocessings,
learning rates and label noise, counts step by step, and the ladder on data-set size and input
dimension.  Geometry: the bottleneck search for a non-convex linear region and the tangent
sensitivity on a trained network's slice.  No sentences, tables or claim ids: the chapter words
its conclusions from the claims' outcomes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

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
from ..params import (
    ParameterError,
    check_choice,
    check_fraction,
    check_positive,
    check_positive_int,
)
from ..regions import (
    as_weights,
    boundary_distance,
    count_regions,
    density_by_depth,
    growth_exponent,
    he_mlp,
    line_breakpoints,
    local_exponents,
    montufar_max,
    one_layer_distance,
    one_layer_expected_count,
    one_layer_line_crossings,
    pair_exponent,
    plane_through,
    slice_angles,
    train_counts,
    train_step_counts,
    wide_window,
)
from ..stats import Estimate, estimate, mean_se

SLICES = ("train", "held_out", "off_data")
"""The planes of the step-by-step run: through training digits, held-out digits, off-data
points (:func:`step_experiment`)."""


# --------------------------------------------------------------------------------------------
# Parameters
# --------------------------------------------------------------------------------------------
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


def _nonempty(params: Mapping[str, Any], *names: str) -> None:
    for name in names:
        if not params[name]:
            raise ParameterError(f"{name} must be a non-empty list")


def check_chapter_params(params: Mapping[str, Any]) -> list[list[int]]:
    """Validate Chapter 6's parameters before any work: ``neurons`` and ``line_neurons`` (≥ 2
    distinct, divisible by every ``depths``), positive counts of networks, runs, epochs and
    steps, ``label_noise`` (fractions, the first 0), ``preprocessings`` (of
    :data:`~layerwise.data.DIGIT_PREPROCESSINGS`), ``lrs``, ``grid_sizes``, increasing ``steps``
    (``early_step`` one of them) and ``ladder_steps``, ``n_held`` and the ladder's rungs
    (:func:`~layerwise.data.parse_rung`, :func:`ladder_rungs`).  Returns the architectures
    compared at initialisation (:func:`architectures`)."""
    archs = architectures(params["neurons"], params["depths"])
    architectures(params["line_neurons"], params["depths"])
    for name in ("neurons", "line_neurons"):
        if len(set(params[name])) < 2:
            raise ParameterError(f"{name} must hold at least two distinct numbers of neurons")
    for name in ("n_nets", "epochs", "n_train_seeds", "n_line_nets", "n_check_nets", "step_nets",
                 "ladder_nets", "n_held"):
        check_positive_int(name, params[name])
    _nonempty(params, "preprocessings", "lrs", "label_noise", "grid_sizes")
    for p in params["preprocessings"]:
        check_choice("preprocessings", p, DIGIT_PREPROCESSINGS)
    for lr in params["lrs"]:
        check_positive("lrs", lr)
    for f in params["label_noise"]:
        check_fraction("label_noise", f)
    for g in params["grid_sizes"]:
        check_positive_int("grid_sizes", g)
    if params["label_noise"][0] != 0:
        raise ParameterError("label_noise must start with 0.0 (the true labels, paired with the "
                             "noisy runs)")
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
    for rung in ladder_rungs(params):
        parse_rung(rung)
    return archs


def ladder_rungs(params: Mapping[str, Any]) -> list[str]:
    """The ladder's rungs: ``ladder``, and the data set ``dataset`` (``"none"`` or None: none) as
    its last rung (validated by :func:`~layerwise.data.parse_rung`)."""
    extra = [] if params.get("dataset") in (None, "none") else [str(params["dataset"])]
    return list(params["ladder"]) + extra


def _unit_range(i: int, n: int, per_unit: int) -> range:
    """Items ``i·per_unit … min(n, (i + 1)·per_unit) − 1`` of ``n``: unit ``i`` of a fixed
    grouping."""
    per_unit = check_positive_int("per_unit", per_unit)
    n_units = -(-n // per_unit)
    if not 0 <= int(i) < n_units:
        raise ParameterError(f"unit index={i!r} must lie in [0, {n_units})")
    return range(int(i) * per_unit, min(n, (int(i) + 1) * per_unit))


def over_nets(values: np.ndarray) -> Estimate:
    """Mean and standard error over the last axis (networks) of ``values``, as an Estimate of
    arrays (for the figures' error bars); a single network has standard error 0 (drawn without
    an error bar)."""
    c = np.asarray(values, dtype=float)
    mean, se = mean_se(c, axis=-1) if c.shape[-1] > 1 else (c.mean(-1), np.zeros(c.shape[:-1]))
    return Estimate(mean, se, c.shape[-1] - 1, c.shape[-1])


def ratio_estimate(values: np.ndarray) -> Estimate:
    """Mean of per-run ratios ``values`` (n,): :func:`layerwise.stats.estimate` (standard error,
    n − 1 d.o.f.), or the single value with no standard error for one run (graded as a point)."""
    v = np.asarray(values, dtype=float).ravel()
    if len(v) < 2:
        return Estimate(float(v.mean()), n=len(v))
    return estimate(v)


# --------------------------------------------------------------------------------------------
# At initialisation: slices and segments through the digits
# --------------------------------------------------------------------------------------------
def init_triples(n_rows: int, n_nets: int, rng: np.random.Generator | int) -> list[np.ndarray]:
    """The ``n_nets`` triples of row indices whose planes the counts at initialisation use
    (``rng`` a generator, advanced, or a seed)."""
    rng = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
    n_nets = check_positive_int("n_nets", n_nets)
    return [rng.choice(n_rows, 3, replace=False) for _ in range(n_nets)]


def init_count_unit(i: int, *, X: np.ndarray, neurons: Sequence[int], depths: Sequence[int],
                    n_nets: int, seed: int, bias_var: float = 1e-6) -> dict[str, np.ndarray]:
    """Slice ``i`` of ``n_nets`` at He-normal initialisation (:func:`he_mlp`): the counts of
    one network of every architecture [N/d]*d on the plane through triple ``i`` of rows of X
    (``counts`` (1, len(neurons), len(depths))) and the slice's ``omega``, ``perimeter``
    (:func:`slice_angles`) and ``area`` (1,).  The triples (:func:`init_triples`) and then the
    networks' seeds (len(archs), n_nets) are drawn from ``seed``, the same in every unit, so any
    split of the units gives the same numbers."""
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


def init_summary(units: Mapping[str, np.ndarray], neurons: Sequence[int], depths: Sequence[int],
                 n_curve: int = 60) -> dict[str, Any]:
    """What Chapter 6 reads off the :func:`init_count_unit` units (concatenated, one per slice):
    ``count`` (mean ± s.e. over networks, :func:`over_nets`, (len(neurons), len(depths))), the
    ``density`` over the one-layer closed form (:func:`~layerwise.regions.density_by_depth`) and,
    at the largest N = ``n_big``, as an Estimate per depth (``density_at_big``: ratio of means,
    jackknife standard error over the slices), the closed form averaged over the slices on
    ``n_curve`` log-spaced N (``curve`` (2, n_curve)), the growth exponent per depth
    (``slopes``, :func:`~layerwise.regions.growth_exponent`), ``montufar_factor`` per depth
    (Montúfar et al.'s maximum for [N/d]*d over that of one layer at ``n_big``), each slice's
    ``t_k`` = √(Ω/(2π·area)) and ``omega_frac`` = Ω/2π, and the figure's ``arrays``."""
    counts = np.asarray(np.moveaxis(np.asarray(units["counts"]), 0, -1)).astype(float)
    omega, perimeter, area = (np.asarray(units[k]) for k in ("omega", "perimeter", "area"))
    Ns = np.array(neurons, float)
    dens = density_by_depth(counts, omega, perimeter, neurons)
    grid = np.geomspace(Ns[0], Ns[-1], check_positive_int("n_curve", n_curve))
    curve = np.array([grid, one_layer_expected_count(grid[:, None], omega, perimeter).mean(1)])
    slopes = {d: growth_exponent(neurons, counts[:, d_i]) for d_i, d in enumerate(depths)}
    density_at_big = {d: Estimate(float(dens["mean"][-1, i]), float(dens["se"][-1, i]), dens["dof"],
                                  counts.shape[2]) for i, d in enumerate(depths)}
    n_big = int(Ns[-1])
    factor = {d: montufar_max([n_big // d] * d) / montufar_max([n_big]) for d in depths}
    arrays = {"neurons": Ns, "depths": list(depths), "counts": counts, "omega": omega,
              "perimeter": perimeter, "area": area, "ratio": dens["ratio"]}
    return {"Ns": Ns, "count": over_nets(counts), "density": dens,
            "density_at_big": density_at_big, "curve": curve, "slopes": slopes, "n_big": n_big,
            "montufar_factor": factor, "t_k": np.sqrt(omega / (2 * np.pi * area)),
            "omega_frac": omega / (2 * np.pi), "arrays": arrays}


def worst_slope(slopes: Mapping[int, Estimate], neurons: Sequence[int], depths: Sequence[int],
                mean: np.ndarray) -> dict[str, Any]:
    """The depth whose growth exponent (``slopes[d]``) is farthest from 2, and what shapes it,
    each direction decided by the slope's 99 % interval (:meth:`Estimate.side`): ``case`` is
    ``"narrow"`` (whole interval above 2.5 at a depth > 1 whose smallest network has ≤ 8 neurons
    per layer and fewer regions than one layer of the same N — a small-width effect), ``"below"``
    (whole interval under 2, as the linear term of 1 + αN + βN² makes it), ``"above"`` (whole
    interval above 2) or ``"undecided"``. ``mean`` is the mean count (len(neurons),
    len(depths)). Also returns ``depth``, its ``slope``, ``w_small`` (neurons per layer at the
    smallest N), ``c_w`` and ``c_1`` (mean counts at the smallest N at that depth and at
    depth 1)."""
    worst = max(slopes, key=lambda d: abs(slopes[d].mean - 2))
    slope, w_small = slopes[worst], int(neurons[0]) // worst
    c_w, c_1 = mean[0, list(depths).index(worst)], mean[0, 0]
    side = {1: "above", -1: "below", 0: "undecided"}[slope.side(2.0)]
    narrow = slope.side(2.5) == 1 and worst > 1 and w_small <= 8 and c_w < c_1
    case = "narrow" if narrow else side
    return {"depth": worst, "slope": slopes[worst], "w_small": w_small, "c_w": float(c_w),
            "c_1": float(c_1), "case": case}


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


def closed_form_ratio(check: Mapping[str, np.ndarray]) -> Estimate:
    """Exact one-layer counts over their closed form (:func:`exact_check_depth1`'s ``counts``
    (slices, nets) over ``expected`` (slices,)), as a :func:`layerwise.stats.estimate` over all
    networks — unbiased at 1 if the counter is right (Crofton + Euler, zero-bias limit)."""
    counts, expected = np.asarray(check["counts"]), np.asarray(check["expected"])
    if counts.ndim != 2 or expected.shape != (counts.shape[0],):
        raise ParameterError(f"counts must be (slices, nets) and expected (slices,), "
                             f"got {counts.shape}, {expected.shape}")
    return estimate((counts / expected[:, None]).ravel())


def line_unit(i: int, *, X: np.ndarray, neurons: Sequence[int], depths: Sequence[int],
              n_nets: int, seed: int, per_unit: int,
              bias_var: float = 1e-6) -> dict[str, np.ndarray]:
    """Segments ``i·per_unit …`` (at most ``per_unit``) of ``n_nets`` segments between two random
    rows of X, at He-normal initialisation, one network of every architecture [N/d]*d per
    segment: the boundary crossings of the segment (``crossings``) and the mean distance of its
    two end points to the nearest boundary (``dist``), both (k, len(neurons), len(depths)); the
    end points' ``norms`` (k, 2), the one-layer closed forms ``cross_per_neuron`` = θ/π (k,) and
    ``dist_n1`` (k, len(neurons)), the mean of :func:`one_layer_distance` over the two end
    points.  The pairs and then the networks' seeds are drawn from ``seed``, the same in every
    unit."""
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


def line_summary(units: Mapping[str, np.ndarray], neurons: Sequence[int], depths: Sequence[int],
                 n_in: int, n_curve: int = 60) -> dict[str, Any]:
    """What Chapter 6 reads off the :func:`line_unit` units (concatenated, segment-major): the
    ``crossings`` and ``dist`` (len(neurons), len(depths), segments), the crossings per unit of
    θ/π (``cross``) and the distances to the nearest boundary (``distance``), mean ± s.e. over
    segments (:func:`over_nets`, (N, depths)), the one-layer distance closed form averaged over
    the end points on ``n_curve`` log-spaced N (``dist_curve`` (2, n_curve)), and at the largest
    N per depth the crossings per Nθ/π (``per_theta``) and the distance over the one-layer closed
    form (``vs_closed``), and the figure's ``arrays``."""
    crossings = np.moveaxis(np.asarray(units["crossings"]), 0, -1)
    dist = np.moveaxis(np.asarray(units["dist"]), 0, -1)
    norms, per_neuron = np.asarray(units["norms"]), np.asarray(units["cross_per_neuron"])
    Ns = np.array(neurons, float)
    cross, distance = over_nets(crossings / per_neuron), over_nets(dist)
    grid = np.geomspace(Ns[0], Ns[-1], check_positive_int("n_curve", n_curve))
    dist_curve = np.array([grid, [one_layer_distance(int(round(n)), norms, n_in).mean()
                                  for n in grid]])
    arrays = {"neurons": Ns, "depths": list(depths), "crossings": crossings, "dist": dist,
              "cross_per_neuron": per_neuron, "norms": norms}
    return {"crossings": crossings, "dist": dist, "cross": cross, "distance": distance,
            "dist_curve": dist_curve, "per_theta": cross.mean[-1] / Ns[-1],
            "vs_closed": distance.mean[-1] / dist_curve[1, -1], "arrays": arrays}


def window_exponents(lines: Mapping[str, np.ndarray], neurons: Sequence[int],
                     depths: Sequence[int], min_width: int) -> dict[str, Any]:
    """The two 1-D laws' exponents per depth (:func:`~layerwise.regions.pair_exponent`) on the
    wide window (:func:`~layerwise.regions.wide_window`: N/d ≥ ``min_width``; the two largest N
    when fewer than two are that wide, ``wide`` {depth: False}) — ``lx``/``dx`` {depth:
    Estimate}, ``window`` {depth: [indices of the N used]} — and the narrow-width drift:
    ``local_lx``/``local_dx`` {depth: [Estimate per consecutive pair of N]} and ``full_dx``
    {depth: Estimate over the whole range}; ``lines`` holds ``crossings`` and ``dist``
    (len(neurons), len(depths), segments), as :func:`line_summary` returns them."""
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


# --------------------------------------------------------------------------------------------
# Through training: sweeps over preprocessings, learning rates and label noise
# --------------------------------------------------------------------------------------------
def train_sweep_unit(j: int, *, widths: Sequence[int], epochs: int,
                     preprocessings: Sequence[str], lrs: Sequence[float],
                     label_noise: Sequence[float], seeds: Sequence[int], n_checkpoints: int = 8,
                     batch: int = 64, n_lines: int = 0) -> dict[str, np.ndarray]:
    """The training runs with seed ``seeds[j]`` (:func:`train_counts` on the digits,
    :func:`~layerwise.data.standardise_digits`), one independent unit: every preprocessing and
    learning rate with true labels (``sweep_*`` (1, P, R, …)), and the first of each at every
    label-noise fraction (``noise_*`` (1, L, …), the first being the true-label run).  Runs
    with the same seed share the slice's triple, the initial network and the batch order."""
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


def training_summary(units: Mapping[str, np.ndarray], preprocessings: Sequence[str],
                     lrs: Sequence[float], label_noise: Sequence[float],
                     widths: Sequence[int] = (32, 32, 32)) -> dict[str, Any]:
    """What Chapter 6 reads off the :func:`train_sweep_unit` units (concatenated, one per seed):
    ``sweep``, the runs as ``sweep_*`` (P, R, S, …) and ``noise_*`` (L, S, …); every curve over
    its value at initialisation (``ratio``: ``count`` (P, R, S, T), ``noise`` (L, S, T), summed
    boundary ``crossings`` and mean ``dist`` (P, R, S, T)); the final ratios as
    :func:`ratio_estimate` — ``grows`` (first preprocessing and learning rate), ``lines``,
    ``dist``, ``grows_lr`` (second learning rate, None without one), ``memorisation`` (paired
    difference between the last label-noise fraction and true labels, None without one),
    ``by_prep`` (first learning rate), ``by_lr`` (first preprocessing), ``by_noise`` and
    ``by_setting`` (every preprocessing and learning rate, preprocessing-major), ``noise_rows``
    (every non-zero label-noise fraction); ``acc``, the smallest final training accuracy at the
    first learning rate; ``max_frac``, the largest final count over Montúfar et al.'s maximum for
    ``widths``; ``alt``, the growth factors the architecture allows (``count``: that maximum over
    the initial count; ``lines``: the maximal boundaries along a segment over the initial
    crossings; first setting, mean over runs); ``n_runs``, the runs per setting."""
    sweep = {k: np.moveaxis(np.asarray(v), 0, 2 if k.startswith("sweep_") else 1)
             for k, v in units.items()}

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
    final_of = {q: [[ratio_estimate(r[i, j, :, -1]) for j in range(len(lrs))]
                    for i in range(len(preprocessings))]
                for q, r in (("count", rc), ("crossings", rx), ("dist", rd))}
    return {"sweep": sweep, "ratio": {"count": rc, "noise": rn, "crossings": rx, "dist": rd},
            "grows": ratio_estimate(rc[0, 0, :, -1]), "lines": ratio_estimate(rx[0, 0, :, -1]),
            "dist": ratio_estimate(rd[0, 0, :, -1]),
            "grows_lr": ratio_estimate(rc[0, 1, :, -1]) if len(lrs) > 1 else None,
            "memorisation": (ratio_estimate(rn[-1, :, -1] - rn[0, :, -1])
                             if len(label_noise) > 1 else None),
            "by_prep": [ratio_estimate(rc[i, 0, :, -1]) for i in range(len(preprocessings))],
            "by_lr": [ratio_estimate(rc[0, j, :, -1]) for j in range(len(lrs))],
            "by_noise": [ratio_estimate(rn[i, :, -1]) for i in range(len(label_noise))],
            "final": final_of,
            "acc": float(sweep["sweep_acc"][:, 0, :, -1].min()),
            "by_setting": [ratio_estimate(rc[i, j, :, -1]) for i in range(len(preprocessings))
                           for j in range(len(lrs))],
            "max_frac": max_frac, "alt": alt, "n_runs": int(rc.shape[2])}


# --------------------------------------------------------------------------------------------
# Through training, step by step: slices through training, held-out and off-data points, and the
# ladder on data-set size and input dimension
# --------------------------------------------------------------------------------------------
def step_experiment(widths: Sequence[int], *, n_nets: int, steps: Sequence[int], n_held: int,
                    seed: int, lr: float = 1e-3, batch: int = 64) -> dict[str, np.ndarray]:
    """:func:`train_step_counts` on the raw 8 × 8 digits less ``n_held`` held-out ones (a random
    split), ``n_nets`` networks, each counted on three slices (:data:`SLICES`): through three of
    its training digits, three held-out digits and three off-data points
    (:func:`~layerwise.data.off_data_points` of the training digits).  Returns ``steps``,
    ``count`` (nets, 3, T), ``acc`` (nets,), the slices' ``points`` (nets, 3, 3, 64) and the
    indices of the ``held`` digits."""
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
    unit of work (a long rung runs in parts, resumed from the store): :func:`train_step_counts`
    of one network on the rung's training set (:func:`~layerwise.data.rung_images` with its
    translations, :func:`~layerwise.data.shifted_copies`), counted on the plane through three of
    the rung's untranslated images.  Its draws depend on (``seed``, rung, network) only.
    Returns ``count`` (1, T), ``acc`` (1,), ``n_train`` (1,) and the checkpoints ``steps`` (T,),
    the same in every unit."""
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


def log_ratio_summary(count: np.ndarray, steps: np.ndarray) -> dict[str, Any]:
    """Log-ratios log(count_t / count_0) of region counts ``count`` (groups, nets, T) at the
    checkpoints ``steps`` (T,): ``log_ratio`` (groups, nets, T), their ``curve``, mean ± s.e. over
    the networks (:func:`over_nets`, (groups, T)), and ``at`` (groups, T), an Estimate of the
    mean (:func:`ratio_estimate`) per group and checkpoint."""
    c = np.asarray(count, dtype=float)
    if c.ndim != 3 or c.shape[-1] != len(steps) or np.any(c[..., 0] <= 0):
        raise ParameterError(f"count must be (groups, nets, {len(steps)}) with positive initial "
                             f"counts, got shape {c.shape}")
    lr = np.log(c / c[..., :1])
    at = [[ratio_estimate(lr[g, :, t]) for t in range(lr.shape[-1])] for g in range(len(lr))]
    return {"log_ratio": lr, "curve": over_nets(np.moveaxis(lr, -1, -2)), "at": at}


def step_summary(run: Mapping[str, np.ndarray], early_step: int) -> dict[str, Any]:
    """What Chapter 6 reads off :func:`step_experiment`: the log-ratios per slice
    (:func:`log_ratio_summary`, groups = :data:`SLICES`), their Estimates at ``early_step``
    (``early``) and at the last checkpoint (``late``), one per slice; the Estimate over networks
    of each network's log-ratio averaged over its slices at ``early_step`` (``early_all``: the
    slices of one network are independent draws, so their mean varies less) and at the last
    checkpoint (``late_all``), and the paired change of that average in between
    (``steps_effect``: whether the length of training matters); the checkpoint where the mean
    log-ratio through training digits peaks (``peak_step``), the smallest final training
    accuracy (``acc``) and the number of networks (``n_nets``)."""
    steps = np.asarray(run["steps"])
    if early_step not in steps:
        raise ParameterError(f"early_step={early_step} is not a checkpoint; choose one of "
                             f"{[int(s) for s in steps]}")
    t = list(steps).index(early_step)
    summary = log_ratio_summary(np.moveaxis(run["count"], 1, 0), steps)
    per_net = summary["log_ratio"].mean(0)  # (nets, T): each network's slices averaged
    return {**summary, "steps": steps, "early": [row[t] for row in summary["at"]],
            "late": [row[-1] for row in summary["at"]],
            "steps_effect": ratio_estimate(per_net[:, -1] - per_net[:, t]),
            "early_all": ratio_estimate(summary["log_ratio"][:, :, t].mean(0)),
            "late_all": ratio_estimate(summary["log_ratio"][:, :, -1].mean(0)),
            "peak_step": int(steps[np.argmax(summary["curve"].mean[0])]),
            "acc": float(np.min(run["acc"])), "n_nets": int(run["count"].shape[0])}


def ladder_summary(units: Mapping[str, np.ndarray], n_rungs: int) -> dict[str, Any]:
    """What Chapter 6 reads off the :func:`ladder_unit` units (concatenated, rung-major;
    ``steps`` once): ``count`` (rungs, nets, T), the log-ratios per rung
    (:func:`log_ratio_summary`), their Estimates at the last checkpoint (``late``) and the sign
    each decides at 99 % (``sign``, :meth:`~layerwise.stats.Estimate.sign`), ``size_effect``: the
    last rung's final mean log-ratio less the first's (independent networks: standard errors
    added in quadrature, the smaller rung's d.o.f.; None with one rung or one network), the
    training-set sizes ``n_train``, the checkpoints ``steps`` and the networks per rung
    (``n_nets``)."""
    count = np.asarray(units["count"])
    n_rungs = check_positive_int("n_rungs", n_rungs)
    if len(count) % n_rungs:
        raise ParameterError(f"{len(count)} units do not split into {n_rungs} rungs")
    count = count.reshape(n_rungs, -1, count.shape[-1])
    steps = np.asarray(units["steps"])
    summary = log_ratio_summary(count, steps)
    late = [row[-1] for row in summary["at"]]
    first, last = late[0], late[-1]
    size = (Estimate(last.mean - first.mean, float(np.hypot(first.se, last.se)),
                     min(first.dof, last.dof), min(first.n, last.n))
            if len(late) > 1 and first.se and last.se else None)
    return {**summary, "count": count, "steps": steps, "late": late, "size_effect": size,
            "sign": [e.sign() for e in late],
            "n_train": np.asarray(units["n_train"]).reshape(n_rungs, -1)[:, 0],
            "n_nets": int(count.shape[1])}
