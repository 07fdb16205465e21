"""Tests of the Chapters 3–5 analysis module against synthetic data with known parameters."""

from __future__ import annotations

import math

import numpy as np
import pytest

from layerwise import labatie as lb
from layerwise.params import ParameterError
from layerwise.stats import mean_se


def test_mean_se_and_summary():
    rng = np.random.default_rng(0)
    a = rng.normal(2.0, 3.0, size=(4000, 3))
    m, se = mean_se(a)
    assert np.allclose(m, 2.0, atol=5 * 3 / math.sqrt(4000))
    assert np.allclose(se, 3 / math.sqrt(4000), rtol=0.05)
    s = lb.summary(a[:, 0])
    assert s["n"] == 4000 and abs(s["std"] - 3.0) < 0.15 and s["q05"] < s["mean"] < s["q95"]
    with pytest.raises(ParameterError):
        lb.summary([np.nan, np.inf])


def test_gaussian_fit_recovers_parameters_and_detects_skew():
    rng = np.random.default_rng(1)
    x = rng.normal(-1.5, 0.7, 5000)
    f = lb.gaussian_fit(x)
    assert abs(f["mu"] + 1.5) < 4 * f["se_mu"]
    assert abs(f["var"] - 0.49) < 4 * f["se_var"]
    assert abs(f["skew"]) < 4 * f["se_skew"] and abs(f["excess_kurtosis"]) < 4 * f["se_kurtosis"]
    assert f["ks_p"] > 1e-3
    e = lb.gaussian_fit(rng.exponential(1.0, 5000))
    assert e["skew"] > 10 * e["se_skew"] and e["ks_p"] < 1e-6


def test_conservation_defect_zero_for_lognormal_with_unit_mean():
    # log m ~ N(-s²/2, s²)  <=>  E[m] = 1 : defect mean + var/2 = 0 within its standard error
    rng = np.random.default_rng(2)
    s2 = 0.8
    defects, ses = [], []
    for _ in range(200):
        d, se = lb.conservation_defect(rng.normal(-s2 / 2, math.sqrt(s2), 400))
        defects.append(d)
        ses.append(se)
    defects = np.array(defects)
    # the delta-method error matches the actual scatter of the estimator
    assert abs(defects.std() / np.mean(ses) - 1) < 0.15
    assert abs(defects.mean()) < 4 * defects.std() / math.sqrt(200)
    # and a biased mean is detected
    d, se = lb.conservation_defect(rng.normal(0.0, math.sqrt(s2), 4000))
    assert d > 5 * se
    lme, lse = lb.log_mean_exp(rng.normal(-s2 / 2, math.sqrt(s2), 20000))
    assert abs(lme) < 4 * lse


def test_drift_diffusion_of_a_gaussian_random_walk():
    # log-moment as a random walk: steps N(-D/2, D) => mean = -D l / 2, var = D l (linear)
    rng = np.random.default_rng(4)
    D, n, L = 0.02, 800, 200
    walk = np.cumsum(rng.normal(-D / 2, math.sqrt(D), size=(n, L)), axis=1)
    depth = np.array([50, 100, 150, 200])
    r = lb.drift_diffusion(depth, walk[:, depth - 1], n_boot=100)
    assert abs(r["drift"] + D / 2) < 4 * r["se_drift"]
    assert abs(r["diffusion"] - D) < 4 * r["se_diffusion"]
    assert abs(r["curvature_var"]) < 4 * r["se_curvature_var"] + 0.05
    d, se = lb.conservation_defect(walk[:, -1])
    assert abs(d) < 4 * se


def test_exp_and_power_fits_recover_known_rates():
    rng = np.random.default_rng(5)
    depth = np.arange(1, 201)
    rates = rng.normal(0.17, 0.01, 30)
    chi = np.exp(rates[:, None] * depth + rng.normal(0, 0.05, (30, 200)))
    f = lb.exp_fit(depth, chi, l_min=10)
    assert abs(f["rate"] - 0.17) < 4 * f["se_rate"] + 1e-3
    assert f["increment"] == pytest.approx(math.exp(f["rate"]))
    assert f["r2"] > 0.999
    tau = rng.normal(0.7, 0.02, 30)
    chi2 = np.exp(0.3 + tau[:, None] * np.log(depth) + rng.normal(0, 0.01, (30, 200)))
    p = lb.power_fit(depth, chi2, l_min=5)
    assert abs(p["tau"] - 0.7) < 4 * p["se_tau"] + 1e-3
    r2 = lb.r2_pair(depth, np.log(chi2).mean(0), l_min=5)
    assert r2["r2_linear_in_log_l"] > 0.999 > r2["r2_linear_in_l"]
    with pytest.raises(ParameterError):
        lb.power_fit(depth, chi2, l_min=0)


def test_increments_and_tau_prediction_closed_form():
    chi = np.array([[1.0, 2.0, 6.0]])
    assert np.allclose(lb.increments(chi), [[2.0, 3.0]])
    delta = np.full((10, 50), 1.2)
    tau, se = lb.tau_prediction(delta, res_depth=2)
    assert tau == pytest.approx((1.2**4 - 1) / 2) and se == pytest.approx(0.0)
    # the delta-method error against the scatter of the estimator
    rng = np.random.default_rng(6)
    taus, ses = [], []
    for _ in range(300):
        t, s = lb.tau_prediction(rng.normal(1.2, 0.05, (40, 5)), res_depth=2)
        taus.append(t)
        ses.append(s)
    assert abs(np.std(taus) / np.mean(ses) - 1) < 0.15


def test_tau_prediction_matches_a_simulated_dilution_chain():
    """Theorem 4's mechanism: a residual branch adds δ^{2L}-amplified noise with signal variance
    growing like l, so χ_l² ≈ Π_k (1 + (δ^{2L} − 1)/k) ∝ l^{δ^{2L} − 1}: exponent τ = (δ^{2L}−1)/2."""
    delta, L = 1.15, 2
    a = delta ** (2 * L)
    depth = np.arange(1, 5001)
    chi2 = np.cumprod(1 + (a - 1) / depth)
    p = lb.power_fit(depth, np.sqrt(chi2)[None].repeat(2, 0), l_min=500)
    tau, _ = lb.tau_prediction(np.full((2, 3), delta), res_depth=L)
    assert p["tau"] == pytest.approx(tau, rel=0.01)


def test_rank_correlation_and_trend():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(40, 20))
    y = -x + 0.3 * rng.normal(size=(40, 20))
    rho, se = lb.rank_correlation(x, y, n_boot=100)
    assert rho < -0.8 and 0 < se < 0.05
    t = lb.monotone_trend([64, 128, 256, 512], [1.0, 2.0, 3.0, 4.0], [0.1] * 4)
    assert t["slope"] == pytest.approx(1.0) and t["z"] > 10


def test_coactivation_measures():
    z = np.array([[1.0, -1.0, 1.0], [2.0, -3.0, -1.0]])  # samples x units
    p = lb.activation_rates(z)
    assert np.allclose(p, [1.0, 0.0, 0.5])
    assert lb.coactivation_fraction(p) == pytest.approx(2 / 3)
    assert lb.linearity_index(p) == pytest.approx(1 - 4 * 0.25 / 3)


def test_vanilla_coactivation_grows_with_depth():
    out = lb.vanilla_coactivation(kernel_size=1, width=32, batch=16, depth=60, n_nets=3, record_every=20)
    assert out["coactive"].shape == (3, 3) and list(out["depth"]) == [20, 40, 60]
    assert np.all((out["coactive"] >= 0) & (out["coactive"] <= 1))
    assert out["linearity"][:, -1].mean() > out["linearity"][:, 0].mean() - 0.05
    conv = lb.vanilla_coactivation(kernel_size=3, width=8, batch=4, depth=4, n_nets=1, record_every=2,
                                   dataset="gaussian")
    assert conv["coactive"].shape == (1, 2)
    with pytest.raises(ParameterError):
        lb.vanilla_coactivation(kernel_size=1, width=8, batch=4, depth=5, n_nets=1, record_every=2)
    with pytest.raises(ParameterError):
        lb.input_batch("cifar", 4, 0)




def test_relative_spread_point_and_coverage():
    v, (lo, hi) = lb.relative_spread([1.0, 1.1, 0.9], [1e-9] * 3)
    assert v == pytest.approx(0.2) and lo == pytest.approx(0.2, abs=1e-6) and hi == pytest.approx(0.2, abs=1e-6)
    # coverage of the interval for well-separated true values (max/min do not swap)
    rng = np.random.default_rng(8)
    truth = np.array([1.0, 1.2, 1.5])
    true_spread = (truth.max() - truth.min()) / truth.mean()
    se = np.full(3, 0.02)
    hits = 0
    for k in range(200):
        _, (lo, hi) = lb.relative_spread(truth + se * rng.normal(size=3), se, confidence=0.9, n_draw=2000, seed=k)
        hits += lo <= true_spread <= hi
    assert 0.82 <= hits / 200 <= 0.97
    with pytest.raises(ParameterError):
        lb.relative_spread([1.0], [0.1])


def test_power_overlay_closed_form():
    depth = np.arange(1, 201, dtype=float)
    delta, L = 1.1, 2
    tau = (delta ** (2 * L) - 1) / 2
    # chi exactly 3·l^tau on every network: the overlay fits c = 3 and deviates nowhere
    chi = np.tile(3.0 * depth**tau, (5, 1))
    d = np.full((5, 7), delta)
    o = lb.power_overlay(depth, chi, d, L, l_min=20, n_boot=50)
    assert o["tau"] == pytest.approx(tau) and math.exp(o["log_c"]) == pytest.approx(3.0)
    assert o["max_dev"] < 1e-12 and o["interval"][1] < 1e-12
    # an exponent off by eps: with c fitted in log, the deviation is eps·(log l − mean log l)
    eps = 0.05
    o = lb.power_overlay(depth, np.tile(depth ** (tau + eps), (5, 1)), d, L, l_min=20, n_boot=50)
    ll = np.log(depth[depth >= 20])
    assert o["max_dev"] == pytest.approx(np.max(np.abs(np.expm1(eps * (ll - ll.mean())))))
    with pytest.raises(ParameterError):
        lb.power_overlay(depth, chi, d, L, l_min=0)
