"""Chapter 7's study (Poole et al. 2016; Schoenholz et al. 2017): what the chapter derives from the
mean-field maps and the simulations of :mod:`layerwise.meanfield` — the length map's convergence,
networks against the maps, the circle's growth, the phase diagram and the depth-scale curve — and
the trainings of :mod:`layerwise.trainability` as units of work. The depth scales measured on
networks are :mod:`layerwise.meanfield`'s (:func:`~layerwise.meanfield.depth_scale_sweep`), the
trainability boundary :mod:`layerwise.trainability`'s. Numbers, arrays and estimates only: the
chapter words its conclusions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..meanfield import (
    chi1,
    circle_experiment,
    critical_sigma_w2,
    depth_scales,
    iterate_length_map,
    length_map,
    q_star,
)
from ..params import ParameterError, check_positive_int
from ..stats import (
    estimate,
    interval_estimate,
    linear_fit,
    max_deviation_interval,
    mean_se,
)
from ..trainability import train_depth_grid


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
    lengths averaged first); per setting, over all layers, the largest deviation from the map and
    the largest standard error (``setting_dev_q``, ``setting_se_q`` relative to the map;
    ``setting_dev_c``, ``setting_se_c`` absolute); and the largest deviation over layers 1..L of
    all settings — relative for q, absolute for c — as an Estimate with its simultaneous interval
    (:func:`max_deviation_interval`, Bonferroni over the ``m`` comparisons, Student t with
    n_nets − 1 d.o.f.): ``dev_q``, ``dev_c``; also ``m`` and ``dof``. With
    ``alternative`` (other maps' (q^l, c^l) per setting, e.g. those of a
    linear network), the largest deviation the networks would show if they
    followed it: ``alt_dev_q``, ``alt_dev_c``. Layer 0 is the input, exact by construction, and is
    left out of the family."""

    per_setting = ("q_mean", "q_se", "c_mean", "c_se")
    per_setting += ("setting_dev_q", "setting_se_q", "setting_dev_c", "setting_se_c")
    out: dict[str, Any] = {k: [] for k in per_setting}
    fam_q, fam_c = [], []
    for s, (qt, ct) in zip(sims, maps, strict=True):
        qm, qse = mean_se(s["q"].mean(axis=2))  # both inputs have the same length: average them
        cm, cse = mean_se(s["c"])
        fam_q.append((qm[1:], qse[1:], qt[1:]))
        fam_c.append((cm[1:], cse[1:], ct[1:]))
        worst = (np.abs(qm - qt) / qt, qse / qt, np.abs(cm - ct), cse)
        for k, v in zip(per_setting, (qm, qse, cm, cse, *(np.max(w) for w in worst))):
            out[k].append(v)
    dof = sims[0]["c"].shape[0] - 1
    dev_q, interval_q = max_deviation_interval(
        *(np.concatenate(v) for v in zip(*fam_q)), dof=dof, confidence=confidence, relative=True
    )
    dev_c, interval_c = max_deviation_interval(
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
    for k in per_setting[4:]:
        out[k] = np.array(out[k])
    out["dev_q"] = interval_estimate(dev_q, *interval_q, n=dof + 1)
    out["dev_c"] = interval_estimate(dev_c, *interval_c, n=dof + 1)
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
    (nets, L+1): ``slope``, an Estimate over networks of the least-squares slope of ln ℓ^l against
    l over layers 1..L, against the prediction ½ ln χ₁ (``predicted``, from ``chi_1``, also
    returned as ``chi1``); and ``decades``, the Estimate of log10 ℓ^L/ℓ^0 over networks."""

    lt = np.asarray(length_tangent, dtype=float)
    layers = np.arange(lt.shape[1])
    return dict(
        chi1=chi_1,
        predicted=0.5 * np.log(chi_1),
        slope=estimate([linear_fit(layers[1:], np.log(v[1:]))["slope"] for v in lt]),
        decades=estimate(np.log10(lt[:, -1] / lt[:, 0])),
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
