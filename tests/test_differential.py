"""Differential layers (layerwise.differential): the capacity PDE's coefficients, the capacity
matrix of one layer, and the simulated SDE's mean squared sensitivities against exact moments."""

from __future__ import annotations

import math

import numpy as np
import pytest

from layerwise import differential as df
from layerwise import diffusion
from layerwise.params import ParameterError


def test_coefficients_closed_form():
    c = df.differential_coefficients((0.5, 1.0, 1.5))
    assert c == {"drift": 1.0, "diffusion": 1.0, "sde_total": 3.0}
    assert df.differential_coefficients((2.0, 0.0, 2.0))["drift"] == 0.0


@pytest.mark.parametrize("bad", [(1.0, 1.0), (-1.0, 1.0, 1.0), (0.0, 0.0, 0.0), (1, math.inf, 1)])
def test_coefficients_refuse_bad_taps(bad):
    with pytest.raises(ParameterError, match="taps2"):
        df.differential_coefficients(bad)


def test_capacity_layer_is_stochastic_and_first_order_in_eps():
    ring, taps = 11, (0.5, 1.0, 1.5)
    delta = diffusion.local_delta(ring, 0.5, 1.5)
    errs = []
    for eps in (1e-2, 1e-3):
        D = df.differential_capacity_layer(ring, taps, eps)
        np.testing.assert_allclose(D.sum(0), 1.0, atol=1e-14)
        assert np.all(D >= 0)
        errs.append(np.abs(D - (np.eye(ring) + eps * delta)).max())
    assert errs[1] / errs[0] == pytest.approx(1e-2, rel=0.05)  # O(ε²): a 10× smaller ε, 100×


def test_one_step_sends_capacity_to_the_inputs_a_unit_reads():
    ring, c = 9, (0.5, 1.0, 1.5)
    P = df.differential_sensitivities(
        ring=ring, taps2=c, steps=4, paths=50, groups=2, record_every=1, increments="sign", seed=3
    )
    eps, mid = 0.25, ring // 2
    assert P.shape == (2, 5, ring)
    np.testing.assert_array_equal(P[:, 0, mid], 1.0)
    # after one step r = δ_c + √ε p_k η_c at c + k, η = ±1: exact squares off the centre
    np.testing.assert_allclose(P[:, 1, mid - 1], eps * c[0], rtol=1e-12)
    np.testing.assert_allclose(P[:, 1, mid + 1], eps * c[2], rtol=1e-12)


def test_mirrored_kernel_swaps_the_neighbours_per_group():
    c = (0.5, 1.0, 1.5)
    P = df.differential_sensitivities(
        ring=7,
        taps2=c,
        steps=1,
        paths=3,
        groups=40,
        record_every=1,
        increments="sign",
        mirror=True,
        seed=0,
    )
    pairs = {(round(a, 12), round(b, 12)) for a, b in P[:, 1, [2, 4]]}
    assert pairs == {(0.5, 1.5), (1.5, 0.5)}  # both orientations occur, one per group


def test_mean_square_matches_the_exact_moment_recursion():
    ring, c, steps = 9, (0.3, 0.6, 0.9), 20
    P = df.differential_sensitivities(
        ring=ring, taps2=c, steps=steps, paths=4000, groups=5, record_every=steps, seed=1
    )
    C = diffusion.local_delta(ring, c[0], c[2]) + np.eye(ring) * sum(c)
    exact = np.linalg.matrix_power(np.eye(ring) + C / steps, steps)[:, ring // 2]
    mean, se = P[:, -1].mean(0), P[:, -1].std(0, ddof=1) / math.sqrt(5)
    assert np.all(np.abs(mean - exact) < 5 * se + 1e-12)
    assert exact.sum() == pytest.approx((1 + sum(c) / steps) ** steps)


def test_sensitivities_refuse_bad_input():
    kw = dict(ring=9, taps2=(1, 1, 1), steps=10, paths=2, groups=2, record_every=1, seed=0)
    with pytest.raises(ParameterError, match="increments"):
        df.differential_sensitivities(**{**kw, "increments": "uniform"})
    with pytest.raises(ParameterError, match="ring"):
        df.differential_sensitivities(**{**kw, "ring": 2})
    with pytest.raises(ParameterError, match="paths"):
        df.differential_sensitivities(**{**kw, "paths": 0})


def test_profile_moments_of_a_shifted_gaussian():
    x = np.arange(41)
    prof = diffusion.heat_kernel(x, 21.0, 2.0, 1.0)
    mu, var = df.profile_moments(prof)
    assert mu == pytest.approx(1.0, abs=1e-9) and var == pytest.approx(4.0, rel=1e-6)


def test_expected_profiles_is_the_moment_recursion():
    ring, c, steps = 9, (0.3, 0.6, 0.9), 20
    C = diffusion.local_delta(ring, c[0], c[2]) + np.eye(ring) * sum(c)
    exact = np.linalg.matrix_power(np.eye(ring) + C / steps, steps)[:, ring // 2]
    E = df.expected_profiles(ring, c, steps, 5)
    assert E.shape == (5, ring)
    np.testing.assert_allclose(E[-1], exact, rtol=1e-12)
    M = df.expected_profiles(ring, c, steps, steps, mirror=True)[-1]
    np.testing.assert_allclose(M, M[::-1], rtol=1e-12)  # mirrored kernels: symmetric


@pytest.mark.parametrize("increments", ["gaussian", "sign"])
def test_weight_noise_has_the_same_mean_capacity(increments):
    """Pseudo-random weights (one increment per weight) and units (one per unit) share the exact
    moment recursion; the Monte-Carlo of either agrees with it."""
    ring, c, steps = 9, (0.3, 0.6, 0.9), 20
    P = df.differential_sensitivities(
        ring=ring,
        taps2=c,
        steps=steps,
        paths=4000,
        groups=5,
        record_every=steps,
        increments=increments,
        noise="weight",
        seed=2,
    )
    exact = df.expected_profiles(ring, c, steps, steps)[-1]
    mean, se = P[:, -1].mean(0), P[:, -1].std(0, ddof=1) / math.sqrt(5)
    assert np.all(np.abs(mean - exact) < 5 * se + 1e-12)


def test_one_weight_step_with_signs_is_exact():
    ring, c = 9, (0.5, 1.0, 1.5)
    P = df.differential_sensitivities(
        ring=ring,
        taps2=c,
        steps=4,
        paths=50,
        groups=2,
        record_every=1,
        increments="sign",
        noise="weight",
        seed=3,
    )
    mid = ring // 2
    np.testing.assert_allclose(P[:, 1, mid - 1], 0.25 * c[0], rtol=1e-12)
    np.testing.assert_allclose(P[:, 1, mid + 1], 0.25 * c[2], rtol=1e-12)


def test_sensitivities_refuse_an_unknown_noise():
    with pytest.raises(ParameterError, match="noise"):
        df.differential_sensitivities(
            ring=9,
            taps2=(1, 1, 1),
            steps=10,
            paths=2,
            groups=2,
            record_every=1,
            noise="tap",
            seed=0,
        )
