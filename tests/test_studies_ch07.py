"""Chapter 7's estimators against synthetic truth under the chapter's design: the trainable-depth
slope under a training ceiling (issue 40: the ceiling made a slope of 1 read as ½) and the chaotic
depth scale's fitting window (fixed in advance, not set by the sample's standard errors)."""

from __future__ import annotations

import numpy as np
import pytest

from layerwise import meanfield as mf
from layerwise import trainability
from layerwise.params import ParameterError

# the default scale's design: σ_w² grid, σ_b² = 0.05, depth grid, replicates
SW2 = np.linspace(1.0, 4.0, 10)
XI = np.array([mf.depth_scales(s, 0.05)["xi_c"] for s in SW2])
DEPTHS = np.array([8, 11, 16, 23, 32, 45, 64, 90])


def test_ceiling_capped_censors_the_last_grid_step_below_the_deepest_boundary():
    log_l50 = np.log([[20.0, 50.0, 60.0, 78.0, 40.0]])
    cens = np.array([[0, 0, 0, 0, 0]])
    capped = trainability.ceiling_capped(log_l50, cens, [8, 16, 32, 64])  # step: a factor 2
    # within a factor 2 of the ceiling 78 (> 39): 50, 60, 78 and 40
    assert capped.tolist() == [[False, True, True, True, True]]
    cens = np.array([[0, 0, 0, 0, -1]])  # a censored boundary is never a point
    assert trainability.ceiling_capped(np.log([[20.0, 21, 22, 23, 8]]), cens, [8, 16, 32, 64])[0, 4]


def test_the_slope_estimator_recovers_one_under_the_training_ceiling_and_the_naive_one_does_not():
    """L₅₀ = min(k ξ_c, ceiling) with the default's ξ_c, depth grid, replicates and noise: the
    estimator with the ceiling's censoring recovers slope 1; the one that censors only at the
    grid's top reads about ½ — the artefact the default run reported as 'L ∝ √ξc'."""
    out = trainability.boundary_estimator_control(
        XI, DEPTHS, k=5.3, ceiling=77.0, replicates=5, noise=0.02, n_sim=40, seed=3
    )
    assert out["identified"] == 1.0
    assert out["mean"] == pytest.approx(1.0, abs=0.05)
    assert out["naive_mean"] < 0.7
    # without a ceiling below the grid's top the two agree: the censoring costs nothing
    free = trainability.boundary_estimator_control(
        XI[[0, 1, 4, 5, 6, 7, 8, 9]], DEPTHS, k=5.3, ceiling=1e6, replicates=5, noise=0.02,
        n_sim=20, seed=4,
    )
    assert free["naive_mean"] == pytest.approx(1.0, abs=0.08)
    assert free["mean"] == pytest.approx(1.0, abs=0.08)


def test_trainability_boundary_fits_only_points_below_the_ceiling():
    rng = np.random.default_rng(0)
    acc = trainability.synthetic_trainability(
        XI, DEPTHS, k=5.0, ceiling=70.0, replicates=3, noise=0.01, rng=rng
    )
    b = trainability.trainability_boundary(acc, SW2, DEPTHS, 0.05)
    # the two settings nearest the transition (ξ_c ≈ 48 and 25) sit at the ceiling: never points
    assert not b["used"][:, [2, 3]].any()
    assert b["slope_est"].mean == pytest.approx(1.0, abs=0.1)
    assert b["k_est"].mean == pytest.approx(5.0, rel=0.1)


def test_trainability_control_reports_a_moving_ceiling_as_a_condition_that_matters():
    rng = np.random.default_rng(1)
    late = trainability.synthetic_trainability(
        XI, DEPTHS, k=5.0, ceiling=75.0, replicates=4, noise=0.01, rng=rng
    )
    early = trainability.synthetic_trainability(
        XI, DEPTHS, k=2.5, ceiling=45.0, replicates=4, noise=0.01, rng=rng
    )
    trainings = {"accuracy": late, "accuracy_early": early, "depths": DEPTHS}
    b = trainability.trainability_boundary(late, SW2, DEPTHS, 0.05)
    c = trainability.trainability_control(b, trainings, tol=0.125, n_sim=10, seed=0)
    assert c["recovers"] and c["ceiling_moves"] == 1 and not c["conditions_pass"]
    assert c["ceiling"] == pytest.approx(75.0, rel=0.1)
    assert c["ceiling_early"] == pytest.approx(45.0, rel=0.1)


def _sweep(n: int, seed: int = 0) -> dict[str, np.ndarray]:
    """A chaotic setting's correlations as the map's iterates plus per-network noise."""
    sw2, sb2, L = np.array([3.0]), np.array([0.05]), 30
    th = {
        k: np.array([[mf.depth_scales(a, 0.05)[k] for a in sw2]])
        for k in ("q_star", "c_star", "chi1", "chi_c", "xi_c")
    }
    starts = np.array([[mf.sweep_starts(th["c_star"][0, 0], 0.1, 0.02)]])
    maps = np.array([[[mf.iterate_correlation_map(c0, L, 3.0, 0.05) for c0 in starts[0, 0]]]])
    rng = np.random.default_rng(seed)
    c = maps[:, :, None] + 1e-3 * rng.standard_normal((1, 1, n, 2, L + 1))
    grad = np.ones((1, 1, n, L + 1))
    return dict(sigma_w2=sw2, sigma_b2=sb2, c=c, grad=grad, starts=starts, **th)


def test_chaotic_fit_window_is_fixed_by_the_map_not_by_the_number_of_networks():
    few, many = (mf.sweep_rates(_sweep(n), n_boot=2) for n in (8, 200))
    assert few["window"][0, 0, 0] == many["window"][0, 0, 0]
    # about one depth scale: the layers where the maps' difference is above 1/e of its start
    xi = float(_sweep(2)["xi_c"][0, 0])
    assert abs(few["window"][0, 0, 0] - xi) <= 2
    # more networks, the same estimator: the map-only rate is the same, and it recovers 1/ξ_c
    assert few["rate_c_map"][0, 0] == many["rate_c_map"][0, 0]
    assert many["rate_c_map"][0, 0] * xi == pytest.approx(1.0, abs=0.05)
    with pytest.raises(ParameterError, match="efolds"):
        mf.sweep_rates(_sweep(4), n_boot=2, efolds=0.0)
