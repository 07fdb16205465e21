"""Tests of the statistics that decide Chapter 3's claims (layerwise.labatie, Chapter 3 section),
against closed forms and Monte-Carlo coverage on synthetic data with known answers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from layerwise import labatie as lb
from layerwise.params import ParameterError


def test_gauss_cdf_gap_closed_form_for_a_shift_and_a_scale():
    # N(0,1) vs N(-a,1): the largest gap is at u = -a/2, 2Φ(a/2) − 1
    for a in (0.1, 0.5, 2.0):
        assert float(lb._gauss_cdf_gap(a, 1.0)) == pytest.approx(2 * stats.norm.cdf(a / 2) - 1, abs=1e-5)
    # N(0,1) vs N(0,b²): gap at u² = 2 ln b · b²/(b² − 1)
    b = 1.5
    u = math.sqrt(2 * math.log(b) * b**2 / (b**2 - 1))
    assert float(lb._gauss_cdf_gap(0.0, b)) == pytest.approx(stats.norm.cdf(u) - stats.norm.cdf(u / b), abs=1e-5)


@pytest.mark.parametrize("n", [50, 400])
def test_ks_interval_covers_zero_for_gaussian_samples(n):
    rng = np.random.default_rng(n)
    res = [lb.ks_gaussian_interval(rng.normal(3.0, 2.0, n)) for _ in range(200)]
    assert np.mean([r["lo"] == 0.0 for r in res]) >= 0.99
    # the sample distance itself is biased upwards (≈ 0.6/√n): a plain interval around it would not cover 0
    assert np.mean([r["ks"] for r in res]) * math.sqrt(n) == pytest.approx(0.62, abs=0.08)


def test_ks_interval_covers_the_true_distance_and_excludes_a_small_threshold_at_large_n():
    # exponential(1) vs N(1, 1): D = Φ(−1) ≈ 0.1587 (attained at x = 0)
    D = stats.norm.cdf(-1.0)
    rng = np.random.default_rng(7)
    res = [lb.ks_gaussian_interval(rng.exponential(1.0, 200)) for _ in range(150)]
    assert np.mean([r["lo"] <= D <= r["hi"] for r in res]) >= 0.99
    big = lb.ks_gaussian_interval(rng.exponential(1.0, 20000))
    assert big["lo"] > 0.05 and big["lo"] <= D <= big["hi"]
    # the half-width is DKW's √(ln(4/α)/2n) plus the fit term, and shrinks like 1/√n
    assert big["eps_dkw"] == pytest.approx(math.sqrt(math.log(400) / 40000))
    assert 0 < big["eps_fit"] < 0.05
    with pytest.raises(ParameterError):
        lb.ks_gaussian_interval([1.0, 2.0, 3.0])
    with pytest.raises(ParameterError):
        lb.ks_gaussian_interval(np.ones(10))


def test_one_layer_conservation_closed_form_and_coverage():
    # constant one-layer ratio c: log c exactly, no scatter
    m = np.cumprod(np.full((5, 11), 1.03), axis=1)
    r = lb.one_layer_conservation(m)
    assert r["log_mean"] == pytest.approx(math.log(1.03)) and r["se"] == pytest.approx(0.0, abs=1e-15)
    assert r["dof"] == 4 and r["n"] == 5
    # log-normal one-layer ratios with unit mean (a chain that conserves the expectation)
    rng = np.random.default_rng(3)
    s2 = 0.08
    vals, ses = [], []
    for _ in range(300):
        steps = np.exp(rng.normal(-s2 / 2, math.sqrt(s2), (20, 50)))
        chain = np.concatenate([np.ones((20, 1)), np.cumprod(steps, axis=1)], axis=1)
        c = lb.one_layer_conservation(chain)
        vals.append(c["log_mean"])
        ses.append(c["se"])
    vals = np.array(vals)
    assert abs(vals.mean()) < 4 * vals.std() / math.sqrt(len(vals))
    assert vals.std() / np.mean(ses) == pytest.approx(1.0, abs=0.15)
    # while the typical value drifts: log of the end-to-end ratio has mean −L·s²/2
    assert np.log(chain[:, -1]).mean() == pytest.approx(-50 * s2 / 2, abs=4 * math.sqrt(50 * s2 / 20))
    # a 5 % excess per layer is detected
    steps = 1.05 * np.exp(rng.normal(-s2 / 2, math.sqrt(s2), (40, 50)))
    c = lb.one_layer_conservation(np.cumprod(steps, axis=1))
    assert abs(c["log_mean"] - math.log(1.05)) < 4 * c["se"] and c["log_mean"] > 5 * c["se"]
    with pytest.raises(ParameterError):
        lb.one_layer_conservation(np.ones(5))


def test_lognormal_balance_is_one_for_a_conserved_lognormal_and_two_for_double_drift():
    rng = np.random.default_rng(5)
    s2 = 4.0
    v, se = lb.lognormal_balance(rng.normal(-s2 / 2, math.sqrt(s2), 4000), seed=1)
    assert abs(v - 1.0) < 4 * se and se < 0.05
    v2, se2 = lb.lognormal_balance(rng.normal(-s2, math.sqrt(s2), 4000), seed=1)
    assert abs(v2 - 2.0) < 4 * se2
    # the bootstrap error matches the scatter of the estimator
    reps = [lb.lognormal_balance(rng.normal(-s2 / 2, math.sqrt(s2), 200), n_boot=200, seed=i) for i in range(100)]
    vals, ses = np.array([r[0] for r in reps]), np.array([r[1] for r in reps])
    assert vals.std() / ses.mean() == pytest.approx(1.0, abs=0.2)


def test_ratio_of_means_closed_form_and_coverage():
    r, se = lb.ratio_of_means([1.0, 2.0, 3.0], [2.0, 2.0, 2.0])
    assert r == pytest.approx(1.0) and se == pytest.approx((1 / math.sqrt(3)) / 2)
    rng = np.random.default_rng(11)
    hits = 0
    for _ in range(400):
        r, se = lb.ratio_of_means(rng.normal(10.0, 1.0, 30), rng.normal(2.0, 0.2, 30))
        hits += abs(r - 5.0) <= 2.576 * se
    assert hits / 400 >= 0.97
    with pytest.raises(ParameterError):
        lb.ratio_of_means([1.0, 2.0], [1.0, -1.0])
