"""Tests of the Chapters 3–5 analysis module against synthetic data with known parameters."""

from __future__ import annotations

import math

import numpy as np
import pytest

from layerwise import labatie, stats
from layerwise.params import ParameterError


def test_gaussian_fit_recovers_parameters_and_detects_skew():
    rng = np.random.default_rng(1)
    x = rng.normal(-1.5, 0.7, 5000)
    f = labatie.gaussian_fit(x)
    assert abs(f["mu"] + 1.5) < 4 * f["se_mu"]
    assert abs(f["var"] - 0.49) < 4 * f["se_var"]
    assert abs(f["skew"]) < 4 * f["se_skew"] and abs(f["excess_kurtosis"]) < 4 * f["se_kurtosis"]
    assert f["ks_p"] > 1e-3
    e = labatie.gaussian_fit(rng.exponential(1.0, 5000))
    assert e["skew"] > 10 * e["se_skew"] and e["ks_p"] < 1e-6


def test_conservation_defect_zero_for_lognormal_with_unit_mean():
    # log m ~ N(-s²/2, s²)  <=>  E[m] = 1 : defect mean + var/2 = 0 within its standard error
    rng = np.random.default_rng(2)
    s2 = 0.8
    defects, ses = [], []
    for _ in range(200):
        d, se = labatie.conservation_defect(rng.normal(-s2 / 2, math.sqrt(s2), 400))
        defects.append(d)
        ses.append(se)
    defects = np.array(defects)
    # the delta-method error matches the actual scatter of the estimator
    assert abs(defects.std() / np.mean(ses) - 1) < 0.15
    assert abs(defects.mean()) < 4 * defects.std() / math.sqrt(200)
    # and a biased mean is detected
    d, se = labatie.conservation_defect(rng.normal(0.0, math.sqrt(s2), 4000))
    assert d > 5 * se
    lme, lse = stats.log_mean_exp(rng.normal(-s2 / 2, math.sqrt(s2), 20000))
    assert abs(lme) < 4 * lse


def test_drift_diffusion_of_a_gaussian_random_walk():
    # log-moment as a random walk: steps N(-D/2, D) => mean = -D l / 2, var = D l (linear)
    rng = np.random.default_rng(4)
    D, n, L = 0.02, 800, 200
    walk = np.cumsum(rng.normal(-D / 2, math.sqrt(D), size=(n, L)), axis=1)
    depth = np.array([50, 100, 150, 200])
    r = labatie.drift_diffusion(depth, walk[:, depth - 1], n_boot=100)
    assert abs(r["drift"] + D / 2) < 4 * r["se_drift"]
    assert abs(r["diffusion"] - D) < 4 * r["se_diffusion"]
    assert abs(r["curvature_var"]) < 4 * r["se_curvature_var"] + 0.05
    d, se = labatie.conservation_defect(walk[:, -1])
    assert abs(d) < 4 * se


def test_exp_and_power_fits_recover_known_rates():
    rng = np.random.default_rng(5)
    depth = np.arange(1, 201)
    rates = rng.normal(0.17, 0.01, 30)
    chi = np.exp(rates[:, None] * depth + rng.normal(0, 0.05, (30, 200)))
    f = labatie.exp_fit(depth, chi, l_min=10)
    assert abs(f["rate"] - 0.17) < 4 * f["se_rate"] + 1e-3
    assert f["increment"] == pytest.approx(math.exp(f["rate"]))
    assert f["r2"] > 0.999
    tau = rng.normal(0.7, 0.02, 30)
    chi2 = np.exp(0.3 + tau[:, None] * np.log(depth) + rng.normal(0, 0.01, (30, 200)))
    p = labatie.power_fit(depth, chi2, l_min=5)
    assert abs(p["tau"] - 0.7) < 4 * p["se_tau"] + 1e-3
    r2 = labatie.r2_pair(depth, np.log(chi2).mean(0), l_min=5)
    assert r2["r2_linear_in_log_l"] > 0.999 > r2["r2_linear_in_l"]
    with pytest.raises(ParameterError):
        labatie.power_fit(depth, chi2, l_min=0)


def test_increments_and_tau_prediction_closed_form():
    chi = np.array([[1.0, 2.0, 6.0]])
    assert np.allclose(labatie.increments(chi), [[2.0, 3.0]])
    delta = np.full((10, 50), 1.2)
    tau, se = labatie.tau_prediction(delta, res_depth=2)
    assert tau == pytest.approx((1.2**4 - 1) / 2) and se == pytest.approx(0.0)
    # the delta-method error against the scatter of the estimator
    rng = np.random.default_rng(6)
    taus, ses = [], []
    for _ in range(300):
        t, s = labatie.tau_prediction(rng.normal(1.2, 0.05, (40, 5)), res_depth=2)
        taus.append(t)
        ses.append(s)
    assert abs(np.std(taus) / np.mean(ses) - 1) < 0.15


def test_tau_prediction_matches_a_simulated_dilution_chain():
    """Theorem 4's mechanism: a residual branch adds δ^{2L}-amplified noise with signal variance
    growing like l, so χ_l² ≈ Π_k (1 + (δ^{2L} − 1)/k) ∝ l^{δ^{2L} − 1}: exponent τ =
    (δ^{2L}−1)/2."""
    delta, L = 1.15, 2
    a = delta ** (2 * L)
    depth = np.arange(1, 5001)
    chi2 = np.cumprod(1 + (a - 1) / depth)
    p = labatie.power_fit(depth, np.sqrt(chi2)[None].repeat(2, 0), l_min=500)
    tau, _ = labatie.tau_prediction(np.full((2, 3), delta), res_depth=L)
    assert p["tau"] == pytest.approx(tau, rel=0.01)


def test_coactivation_measures():
    z = np.array([[1.0, -1.0, 1.0], [2.0, -3.0, -1.0]])  # samples x units
    p = labatie.activation_rates(z)
    assert np.allclose(p, [1.0, 0.0, 0.5])
    assert labatie.coactivation_fraction(p) == pytest.approx(2 / 3)
    assert labatie.linearity_index(p) == pytest.approx(1 - 4 * 0.25 / 3)


def test_vanilla_coactivation_grows_with_depth():
    out = labatie.vanilla_coactivation(
        kernel_size=1, width=32, batch=16, depth=60, n_nets=3, record_every=20
    )
    assert out["coactive"].shape == (3, 3) and list(out["depth"]) == [20, 40, 60]
    assert np.all((out["coactive"] >= 0) & (out["coactive"] <= 1))
    assert out["linearity"][:, -1].mean() > out["linearity"][:, 0].mean() - 0.05
    conv = labatie.vanilla_coactivation(
        kernel_size=3, width=8, batch=4, depth=4, n_nets=1, record_every=2, dataset="gaussian"
    )
    assert conv["coactive"].shape == (1, 2)
    with pytest.raises(ParameterError):
        labatie.vanilla_coactivation(
            kernel_size=1, width=8, batch=4, depth=5, n_nets=1, record_every=2
        )
    with pytest.raises(ParameterError):
        labatie.input_batch("cifar", 4, 0)


def test_power_overlay_closed_form():
    depth = np.arange(1, 201, dtype=float)
    delta, L = 1.1, 2
    tau = (delta ** (2 * L) - 1) / 2
    # chi exactly 3·l^tau on every network: the overlay fits c = 3 and deviates nowhere
    chi = np.tile(3.0 * depth**tau, (5, 1))
    d = np.full((5, 7), delta)
    o = labatie.power_overlay(depth, chi, d, L, l_min=20, n_boot=50)
    assert o["tau"] == pytest.approx(tau) and math.exp(o["log_c"]) == pytest.approx(3.0)
    assert o["max_dev"] < 1e-12 and o["interval"][1] < 1e-12
    # an exponent off by eps: with c fitted in log, the deviation is eps·(log l − mean log l)
    eps = 0.05
    o = labatie.power_overlay(
        depth, np.tile(depth ** (tau + eps), (5, 1)), d, L, l_min=20, n_boot=50
    )
    ll = np.log(depth[depth >= 20])
    assert o["max_dev"] == pytest.approx(np.max(np.abs(np.expm1(eps * (ll - ll.mean())))))
    with pytest.raises(ParameterError):
        labatie.power_overlay(depth, chi, d, L, l_min=0)


def _engine_arrays(n=5, R=12, seed=0, locs=5):
    rng = np.random.default_rng(seed)
    A = {}
    for k in range(1, locs + 1):
        A[f"chi_loc{k}"] = np.exp(rng.normal(0.1 * k, 0.2, (n, R)))
        for q in (
            "reff_signal",
            "reff_noise",
            "mu2_signal",
            "mu4_signal",
            "nu2_signal",
            "nu1_abs_signal",
        ):
            A[f"{q}_loc{k}"] = rng.uniform(0.5, 4.0, (n, R))
    return A


def test_bn_ff_panels_factorise_the_layer_increment():
    A = _engine_arrays(locs=4)
    Q = labatie.bn_ff_panels(A)
    assert all(v.shape == (5, 12) for v in Q.values())
    # the two steps of a layer multiply to χ(loc4)/χ(loc1)
    assert np.allclose(Q["dbn"] * Q["dphi"], A["chi_loc4"] / A["chi_loc1"])
    # the increments telescope from χ⁰ = χ(loc1) of the first record to the last χ
    assert np.allclose(np.prod(Q["dchi"], axis=1), A["chi_loc4"][:, -1] / A["chi_loc1"][:, 0])
    assert np.allclose(Q["dchi"][:, 1:], A["chi_loc4"][:, 1:] / A["chi_loc4"][:, :-1])
    assert np.array_equal(Q["kurt_z"], A["mu4_signal_loc3"] / A["mu2_signal_loc3"] ** 2)
    assert np.array_equal(Q["nu1_z"], A["nu1_abs_signal_loc3"] / np.sqrt(A["nu2_signal_loc3"]))
    assert Q["reff_x"] is A["reff_signal_loc4"] and Q["reff_dx"] is A["reff_noise_loc4"]


def test_bn_res_panels_locations():
    A = _engine_arrays(locs=5)
    Q = labatie.bn_res_panels(A)
    assert np.allclose(Q["dbn"] * Q["dphi"], A["chi_loc3"] / A["chi_loc1"])
    assert np.allclose(Q["dff"], A["chi_loc4"] / A["chi_loc1"])
    assert Q["chi"] is A["chi_loc5"] and Q["chi_in"].shape == (5, 1)
    # Fig. 5(c): the ranks after the unit's first ReLU (loc3), not after the addition
    assert Q["reff_x"] is A["reff_signal_loc3"] and Q["reff_dx"] is A["reff_noise_loc3"]
    assert np.array_equal(Q["kurt_z"], A["mu4_signal_loc2"] / A["mu2_signal_loc2"] ** 2)
    # Gaussian values: μ₄/μ₂² = 3 and ν₁/√ν₂ = √(2/π) for a standard normal sample
    g = np.random.default_rng(1).standard_normal(400_000)
    G = {
        **A,
        "mu4_signal_loc2": np.full((5, 12), np.mean(g**4)),
        "mu2_signal_loc2": np.full((5, 12), np.mean(g**2)),
        "nu1_abs_signal_loc2": np.full((5, 12), np.mean(np.abs(g))),
        "nu2_signal_loc2": np.full((5, 12), np.mean(g**2)),
    }
    Qg = labatie.bn_res_panels(G)
    assert np.allclose(Qg["kurt_z"], labatie.GAUSS_KURTOSIS, atol=0.03)
    assert np.allclose(Qg["nu1_z"], labatie.GAUSS_ABS_MEAN, atol=0.003)


def test_growth_law_r2_tells_an_exponential_from_a_power_law():
    depth = np.arange(0, 201, 8, dtype=float)
    rng = np.random.default_rng(0)
    noise = 1 + 0.001 * rng.standard_normal((6, depth.size))
    expo = labatie.growth_law_r2(depth, np.exp(0.15 * depth)[None, :] * noise, l_min=10)
    power = labatie.growth_law_r2(depth, (np.maximum(depth, 1) ** 2.5)[None, :] * noise, l_min=10)
    assert expo["exponential"].mean > 0.999 > expo["power"].mean and expo["exponential"].n == 6
    assert power["power"].mean > 0.999 > power["exponential"].mean


def test_curvature_is_relative_to_the_diffusion_and_stays_bounded_when_the_fitted_line_vanishes():
    depth = np.array([50.0, 100.0, 150.0, 200.0])
    # variance exactly ∝ l² on every resample: the curvature is the ballistic value L·Σl²/Σl³ (1.2
    # here)
    rng = np.random.default_rng(0)
    rates = rng.normal(0.0, 0.1, size=(400, 1))
    r = labatie.drift_diffusion(depth, rates * depth, n_boot=50)
    assert r["ballistic"] == pytest.approx(200 * 75000 / 12.5e6)
    assert r["curvature_var"] == pytest.approx(r["ballistic"], rel=1e-9)
    # a noisy random walk from few networks: the fitted linear coefficient b crosses 0 in some
    # resamples, c/b would explode; c·L/D stays of order one
    walk = np.cumsum(rng.normal(0.0, 0.1, size=(12, 200)), axis=1)
    r = labatie.drift_diffusion(depth, walk[:, depth.astype(int) - 1], n_boot=400, seed=3)
    assert abs(r["curvature_var"]) < 3 and r["se_curvature_var"] < 3


def test_r2_bootstrap_brackets_the_point_values_and_overlay_names_the_exponential_alternative():
    rng = np.random.default_rng(1)
    depth = np.arange(1, 101, dtype=float)
    chi = depth**0.8 * np.exp(rng.normal(0, 0.05, size=(8, 100)))
    b = labatie.r2_bootstrap(depth, chi, l_min=10, n_boot=100)
    r = labatie.r2_pair(depth, np.log(chi).mean(0), l_min=10)
    assert b["r2_log"] == pytest.approx(r["r2_linear_in_log_l"]) and b["r2_l"] == pytest.approx(
        r["r2_linear_in_l"]
    )
    assert b["ci_log"][0] <= b["r2_log"] + 1e-9 and b["ci_diff"][0] > 0
    assert labatie.r2_bootstrap(depth, chi[:1], l_min=10)["ci_l"] is None
    o = labatie.power_overlay(depth, chi, np.full((8, 5), 1.1), 2, l_min=10, n_boot=20)
    assert o["exp_max_dev"] > 0.1  # a power law over a decade is no exponential
    o = labatie.power_overlay(
        depth, np.tile(np.exp(0.02 * depth), (3, 1)), np.full((3, 5), 1.1), 2, l_min=10, n_boot=20
    )
    assert o["exp_max_dev"] < 1e-9


def test_lognormal_skewness_closed_form():
    assert labatie.lognormal_skewness(0.0) == 0.0
    s2 = 0.5
    assert labatie.lognormal_skewness(s2) == pytest.approx(
        (math.exp(s2) + 2) * math.sqrt(math.exp(s2) - 1)
    )
