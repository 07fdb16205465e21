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


# ---------------------------------------------------------------------------------------------
# The studies behind Chapter 3's figures and claims
# ---------------------------------------------------------------------------------------------
def _random_walk(n, L, s2, rng, m0=None):
    """Moments at layers 0..L of n networks whose one-layer log-ratios are N(−s²/2, s²): the
    expectation is conserved, the log drifts by −s²/2 and diffuses by s² per layer."""
    m0 = rng.uniform(0.5, 2.0, (n, 1)) if m0 is None else m0
    steps = rng.normal(-s2 / 2, math.sqrt(s2), (n, L))
    return m0 * np.exp(np.concatenate([np.zeros((n, 1)), np.cumsum(steps, axis=1)], axis=1))


def _engine_arrays(nu2, mu2, rng):
    """Engine-shaped arrays: loc1 of layer l holds the moment entering it (loc1 of layer 1 is x⁰),
    loc3 the moment leaving it."""
    return {"nu2_signal_loc1": nu2[:, :-1], "nu2_signal_loc3": nu2[:, 1:],
            "mu2_noise_loc1": mu2[:, :-1], "mu2_noise_loc3": mu2[:, 1:]}


def test_skewness_se_is_scipys_skewness_with_at_least_the_gaussian_error():
    rng = np.random.default_rng(0)
    x = rng.normal(size=60)
    skew, se = lb.skewness_se(x, seed=1)
    n = 60
    assert skew == pytest.approx(float(stats.skew(x)))
    assert se >= math.sqrt(6 * (n - 2) / ((n + 1) * (n + 3))) - 1e-15
    # an exponential sample has skewness 2, and a bootstrap error above the Gaussian floor
    e = rng.exponential(size=4000)
    skew, se = lb.skewness_se(e, seed=1)
    assert skew == pytest.approx(2.0, abs=5 * se)
    assert se > math.sqrt(6 * 3998 / (4001 * 4003))
    with pytest.raises(ParameterError):
        lb.skewness_se([1.0, 2.0, 3.0])


def test_vanilla_log_moments_recovers_drift_diffusion_conservation_and_balance():
    rng = np.random.default_rng(11)
    n, L, s2 = 400, 40, 0.01
    nu2, mu2 = _random_walk(n, L, s2, rng), _random_walk(n, L, 2 * s2, rng)
    G = lb.vanilla_log_moments(np.arange(1, L + 1), _engine_arrays(nu2, mu2, rng), L, seed=0)
    assert G["quarters"] == [10, 20, 30, 40] and G["qi"] == [9, 19, 29, 39] and G["n"] == n
    np.testing.assert_array_equal(G["moments"]["nu2"], nu2)                    # layers 0..L reassembled
    np.testing.assert_allclose(G["logs"]["mu2dx"], np.log(mu2[:, 1:] / mu2[:, :1]))
    assert G["fits"]["nu2"][1]["mu"] == pytest.approx(G["logs"]["nu2"][:, 19].mean())
    y = G["logs"]["nu2"][:, -1]   # the alternatives: the ratio itself is skewed and far from Gaussian
    assert G["lognormal_skew"]["nu2"] == pytest.approx(lb.lognormal_skewness(np.var(y, ddof=1)))
    assert G["raw_ks"]["nu2"] == pytest.approx(lb.ks_gaussian_interval(np.exp(y - y.max()))["ks"])
    for key, v in (("nu2", s2), ("mu2dx", 2 * s2)):
        r = G["drift_diffusion"][key]
        assert r["drift"] == pytest.approx(-v / 2, abs=4 * r["se_drift"])
        assert r["diffusion"] == pytest.approx(v, abs=4 * r["se_diffusion"])
        c = G["conservation"][key]
        assert abs(c["log_mean"]) <= 4 * c["se"]                                  # E[m^l/m^(l−1)] = 1
        bal, se_bal = G["balance"][key]
        assert bal == pytest.approx(1.0, abs=4 * se_bal)                          # log-normal: mean = −var/2
        assert abs(G["skew"][key][0]) <= 4 * G["skew"][key][1]
        assert G["ks"][key][-1]["lo"] == 0.0                                      # Gaussian logs
        assert G["lme"][key].shape == (L, 2)
        assert G["lme"][key][0, 0] == pytest.approx(lb.log_mean_exp(G["logs"][key][:, 0])[0])
    with pytest.raises(ParameterError):   # the run must record every layer
        lb.vanilla_log_moments(np.arange(0, L), _engine_arrays(nu2, mu2, rng), L)


def test_log_moment_table_has_one_row_per_quantity_and_quarter():
    rng = np.random.default_rng(2)
    nu2, mu2 = _random_walk(30, 8, 0.02, rng), _random_walk(30, 8, 0.02, rng)
    G = lb.vanilla_log_moments(np.arange(1, 9), _engine_arrays(nu2, mu2, rng), 8)
    T = lb.log_moment_table(G)
    assert T.shape == (8, 5) and T.index.names == ["quantity", "l"]
    f = G["fits"]["mu2dx"][3]
    assert T.loc[("log μ₂(dx)", 8), "mean"] == f"{f['mu']:.3f} ± {f['se_mu']:.3f}"


def test_width_diffusion_finds_the_inverse_width_law():
    rng = np.random.default_rng(5)
    L, n = 40, 300
    quarters = [10, 20, 30, 40]
    runs = {}
    for w in (32, 64, 128, 256):
        nu2 = _random_walk(n, L, 5.0 / w, rng)        # single-input diffusion 5/N
        runs[w] = (np.arange(1, L + 1), {"nu2_signal_loc1": nu2[:, :-1], "nu2_signal_loc3": nu2[:, 1:]})
    WD = lb.width_diffusion(runs, quarters, seed=0)
    np.testing.assert_array_equal(WD["widths"], [32, 64, 128, 256])
    # each diffusion is drift_diffusion of the brute-force log ratios at the quarters
    d, A = runs[64]
    lg = np.log(A["nu2_signal_loc3"][:, [9, 19, 29, 39]] / A["nu2_signal_loc1"][:, :1])
    ref = lb.drift_diffusion(np.array(quarters, float), lg, seed=0)
    assert WD["diffusion"][1] == pytest.approx(ref["diffusion"], rel=1e-12)
    assert WD["se"][1] == pytest.approx(ref["se_diffusion"], rel=1e-9)
    np.testing.assert_allclose(WD["diffusion"] * WD["widths"], 5.0, atol=4 * (WD["se"] * WD["widths"]).max())
    assert WD["fit"]["slope"] == pytest.approx(-1.0, abs=4 * WD["fit"]["slope_se"])


def test_sensitivity_study_matches_brute_force_increments():
    rng = np.random.default_rng(4)
    n, L = 5, 40
    d = np.arange(1, L + 1)
    steps = np.where(d <= 10, 1.2, 1.01) * rng.uniform(1.0, 1.02, (n, L))
    chi0 = np.ones((n, 1))
    chi = chi0 * np.cumprod(steps, axis=1)
    A = {"chi_loc1": np.concatenate([chi0, chi[:, :-1]], axis=1), "chi_loc3": chi,
         "reff_signal_loc3": rng.uniform(1.0, 1.4, (n, L))}
    S = lb.sensitivity_study(d, A, L)
    np.testing.assert_allclose(S["dchi"], steps)
    early, late = steps[:, :10].mean(1), steps[:, 30:].mean(1)
    assert S["early"].mean == pytest.approx(early.mean()) and S["late"].mean == pytest.approx(late.mean())
    assert S["drop"].mean == pytest.approx(((late - 1) - 0.5 * (early - 1)).mean())
    assert S["drop"].mean < 0 and S["n"] == n and S["late"].dof == n - 1
    assert S["log10chi"].mean == pytest.approx(np.log10(chi[:, -1]).mean())
    assert S["reff"].mean == pytest.approx(A["reff_signal_loc3"][:, -1].mean())
    assert S["reff_first"].mean == pytest.approx(A["reff_signal_loc3"][:, 0].mean())   # no loc1: first record
    A["reff_signal_loc1"] = np.full((n, L), 7.0)
    assert lb.sensitivity_study(d, A, L)["reff_first"].mean == pytest.approx(7.0)       # x⁰ when recorded


def test_coactivation_trend_pairs_the_record_at_depth_10_with_the_last():
    c = np.array([[0.1, 0.2, 0.4, 0.9], [0.0, 0.3, 0.5, 0.7]])
    CA = {"depth": np.array([0, 5, 10, 15]), "coactive": c, "linearity": np.array([[0.5, 0.6, 0.7, 0.95], [0.4, 0.5, 0.6, 0.85]])}
    T = lb.coactivation_trend(CA, early=10)
    assert T["early"].mean == pytest.approx(0.45) and T["late"].mean == pytest.approx(0.8)
    assert T["growth"].mean == pytest.approx(0.35) and T["growth"].se == pytest.approx(0.15)   # paired: (0.5, 0.2)
    assert T["linearity"].mean == pytest.approx(0.9) and T["linearity"].n == 2
    assert T["linearity_first"].mean == pytest.approx(0.45)


def test_dataset_estimates_reads_the_input_and_final_layer():
    A = {"reff_signal_loc1": np.array([[2.0, 9.0], [4.0, 9.0]]), "chi_loc3": np.array([[1.0, 3.0], [1.0, 5.0]]),
         "reff_signal_loc3": np.array([[9.0, 1.2], [9.0, 1.4]])}
    E = lb.dataset_estimates({"x": (np.arange(1, 3), A)}, 2)
    assert list(E["x"]) == ["r_eff(x⁰)", "χ^2", "r_eff(x^2)"]
    assert E["x"]["r_eff(x⁰)"].mean == 3.0 and E["x"]["χ^2"].mean == 4.0 and E["x"]["r_eff(x^2)"].mean == pytest.approx(1.3)
