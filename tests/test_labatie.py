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


# --------------------------------------------------------------------------------------------
# Chapters 4–5: panels, tables and resolved directions
# --------------------------------------------------------------------------------------------
def _engine_arrays(n=5, R=12, seed=0, locs=5):
    rng = np.random.default_rng(seed)
    A = {}
    for k in range(1, locs + 1):
        A[f"chi_loc{k}"] = np.exp(rng.normal(0.1 * k, 0.2, (n, R)))
        for q in ("reff_signal", "reff_noise", "mu2_signal", "mu4_signal", "nu2_signal", "nu1_abs_signal"):
            A[f"{q}_loc{k}"] = rng.uniform(0.5, 4.0, (n, R))
    return A


def test_bn_ff_panels_factorise_the_layer_increment():
    A = _engine_arrays(locs=4)
    Q = lb.bn_ff_panels(A)
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
    Q = lb.bn_res_panels(A)
    assert np.allclose(Q["dbn"] * Q["dphi"], A["chi_loc3"] / A["chi_loc1"])
    assert np.allclose(Q["dff"], A["chi_loc4"] / A["chi_loc1"])
    assert Q["chi"] is A["chi_loc5"] and Q["chi_in"].shape == (5, 1)
    assert np.array_equal(Q["kurt_z"], A["mu4_signal_loc2"] / A["mu2_signal_loc2"] ** 2)
    # Gaussian values: μ₄/μ₂² = 3 and ν₁/√ν₂ = √(2/π) for a standard normal sample
    g = np.random.default_rng(1).standard_normal(400_000)
    G = {**A, "mu4_signal_loc2": np.full((5, 12), np.mean(g**4)), "mu2_signal_loc2": np.full((5, 12), np.mean(g**2)),
         "nu1_abs_signal_loc2": np.full((5, 12), np.mean(np.abs(g))), "nu2_signal_loc2": np.full((5, 12), np.mean(g**2))}
    Qg = lb.bn_res_panels(G)
    assert np.allclose(Qg["kurt_z"], lb.GAUSS_KURTOSIS, atol=0.03)
    assert np.allclose(Qg["nu1_z"], lb.GAUSS_ABS_MEAN, atol=0.003)


def test_spearman_by_column_is_pearson_of_ranks():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(30, 4)), rng.normal(size=(30, 4))
    y[:, 0] = x[:, 0] ** 3            # monotone: ρ = 1
    y[:, 1] = -np.exp(x[:, 1])        # anti-monotone: ρ = −1
    rho = lb.spearman_by_column(x, y)
    assert rho.shape == (4,) and rho[0] == pytest.approx(1.0) and rho[1] == pytest.approx(-1.0)
    rank = lambda v: np.argsort(np.argsort(v)).astype(float)  # noqa: E731 (no ties in continuous data)
    for j in (2, 3):
        assert rho[j] == pytest.approx(np.corrcoef(rank(x[:, j]), rank(y[:, j]))[0, 1])
    # invariant under monotone transforms of either variable
    assert np.allclose(lb.spearman_by_column(np.exp(x), y ** 3), rho)
    with pytest.raises(ParameterError):
        lb.spearman_by_column(x, y[:, :3])


def test_resolved_sign_closed_form():
    z = 2.5758293035489004  # normal 99.5 % quantile
    assert lb.resolved_sign(z + 1e-6, 1.0, None) == 1
    assert lb.resolved_sign(z - 1e-6, 1.0, None) == 0
    assert lb.resolved_sign(-z - 1e-6, 1.0, None) == -1
    assert lb.resolved_sign(3.0 + z + 1e-6, 1.0, None, reference=3.0) == 1
    # Student's t with 3 d.o.f.: 99 % two-sided quantile 5.8409
    assert lb.resolved_sign(5.84, 1.0, 3) == 0 and lb.resolved_sign(5.85, 1.0, 3) == 1
    assert lb.resolved_sign(1.0, 1.0, 3, confidence=0.5) == 1  # t(0.75; 3) = 0.765


def test_exp_rate_table_recovers_rates():
    d = np.arange(1.0, 41.0)
    runs = {}
    for ds, r in [("a", 0.1), ("b", 0.2)]:
        rates = r + np.array([-0.01, 0.0, 0.01])
        chi = np.exp(rates[:, None] * d)
        runs[ds] = (d, {"chi": chi, "reff_x": np.full((3, 40), 2.0), "kurt_z": np.full((3, 40), 5.0)})
    T = lb.exp_rate_table(runs, l_min=10)
    assert list(T.index) == ["a", "b"]
    assert T.loc["a", "rate"] == pytest.approx(0.1) and T.loc["b", "rate"] == pytest.approx(0.2)
    assert T.loc["a", "± s.e."] == pytest.approx(0.01 / math.sqrt(3))
    assert T.loc["b", "log10 χ^L"] == pytest.approx(0.2 * 40 / math.log(10))
    assert T.loc["a", "r_eff(x^L)"] == 2.0 and T.loc["a", "kurtosis at L"] == 5.0


def test_batch_endpoints_means_and_errors():
    rng = np.random.default_rng(4)
    runs = {B: {k: rng.uniform(1, 9, (6, 3)) for k in ("chi", "kurt_z", "reff_x", "reff_dx")} for B in (16, 32)}
    T = lb.batch_endpoints(runs)
    assert list(T.columns) == ["B", "log10_chi", "se_log10_chi", "kurtosis", "se_kurtosis", "reff_x", "se_reff_x",
                               "reff_dx", "se_reff_dx"]
    assert list(T["B"]) == [16, 32]
    v = np.log10(runs[32]["chi"][:, -1])
    assert T["log10_chi"].iloc[1] == pytest.approx(v.mean())
    assert T["se_log10_chi"].iloc[1] == pytest.approx(v.std(ddof=1) / math.sqrt(6))
    assert T["reff_dx"].iloc[0] == pytest.approx(runs[16]["reff_dx"][:, -1].mean())


def test_exponent_windows_exact_power_law():
    delta, L = 1.1, 2
    tau = (delta ** (2 * L) - 1) / 2
    d = np.arange(1, 101)
    chi = np.tile(2.0 * d.astype(float) ** tau, (4, 1))
    dff = delta + np.array([-0.01, 0.01, -0.02, 0.02])[:, None] * np.ones(100)  # mean over networks: δ
    T = lb.exponent_windows(d, chi, dff, L, 10, 100, n_windows=4)
    assert list(T.index) == ["10–32", "32–55", "55–77", "77–100"]
    assert np.allclose(T["free τ"], tau) and np.allclose(T["Eq. 15 τ"], tau)
    se = L * delta ** (2 * L - 1) * np.std([-0.01, 0.01, -0.02, 0.02], ddof=1) / 2  # delta method, √4 = 2
    assert np.allclose(T["s.e. (Eq. 15)"], se) and np.allclose(T["difference / combined s.e."], 0.0)


def test_power_rate_table_exact_power_law():
    delta, L = 1.05, 2
    tau = (delta ** (2 * L) - 1) / 2
    d = np.arange(1, 51).astype(float)
    Q = {"chi": np.tile(d**tau, (3, 1)), "dff": np.full((3, 50), delta), "reff_x": np.full((3, 50), 7.0)}
    T = lb.power_rate_table({"g": (d, Q)}, L, l_min=5)
    assert T.loc["g", "free τ"] == pytest.approx(tau) and T.loc["g", "Eq. 15 τ"] == pytest.approx(tau)
    assert T.loc["g", "log χ^L"] == pytest.approx(tau * math.log(50)) and T.loc["g", "r_eff(x^L)"] == 7.0


def test_kurtosis_table_values_and_gaussian_bias():
    rng = np.random.default_rng(5)
    A = {"mu4_signal_loc2": rng.uniform(2, 4, (5, 3)), "mu2_signal_loc2": rng.uniform(0.5, 1.5, (5, 3))}
    T = lb.kurtosis_table([("x", 16, A), ("y", 64, A)])
    k = A["mu4_signal_loc2"][:, -1] / A["mu2_signal_loc2"][:, -1] ** 2
    assert T.loc[("x", 16), "kurtosis at the last unit"] == pytest.approx(k.mean())
    assert T.loc[("x", 16), "± s.e."] == pytest.approx(k.std(ddof=1) / math.sqrt(5))
    assert T.loc[("y", 64), "Gaussian-data bias 3(B−1)/(B+1)"] == pytest.approx(3 * 63 / 65)
    assert T.loc[("x", 16), "networks"] == 5
    # the bias is the mean kurtosis (moments over the batch, ddof = 0) of B Gaussian values
    g = rng.standard_normal((40000, 16))
    c = g - g.mean(1, keepdims=True)
    emp = np.mean(np.mean(c**4, 1) / np.mean(c**2, 1) ** 2)
    assert emp == pytest.approx(3 * 15 / 17, abs=0.02)


def test_batch_findings_reads_ratios_trends_and_whether_the_ordering_turns_over():
    import pandas as pd

    def table(rx, rdx):
        B = np.array([16, 64, 256])
        cols = {"B": B, "log10_chi": [16.0, 15.0, 14.0], "kurtosis": [2.5, 2.8, 2.9], "reff_x": rx, "reff_dx": rdx}
        return pd.DataFrame({**cols, **{f"se_{k}": [0.1, 0.1, 0.1] for k in lb.BATCH_ENDPOINTS}})

    F = lb.batch_findings(table([4.0, 3.0, 1.0], [2.0, 2.0, 2.0]))
    assert np.allclose(F["ratio"], [2.0, 1.5, 0.5])
    assert F["glue"]["flip_verdict"] == "the ordering of signal and noise turns over within the batches studied here"
    assert (F["glue"]["b_small"], F["glue"]["b_large"]) == (16, 256) and F["glue"]["ratio_large"] == 0.5
    t = lb.monotone_trend([16, 64, 256], [16.0, 15.0, 14.0], [0.1, 0.1, 0.1])
    assert F["glue_3"]["slope_log10_chi"] == (t["slope"], t["slope_se"]) and set(F["trend"]) == set(lb.BATCH_ENDPOINTS)
    closing = lb.batch_findings(table([6.0, 5.0, 3.0], [2.0, 2.0, 2.0]))["glue"]["flip_verdict"]
    assert closing.startswith("the signal stays the better conditioned")
    below = lb.batch_findings(table([1.0, 1.2, 1.5], [2.0, 2.0, 2.0]))["glue"]["flip_verdict"]
    assert below == "the ratio moves as listed, without crossing 1 here"


def test_last_layer_findings_estimates_and_resolves_against_closed_form_statistics():
    nets = 6
    rng = np.random.default_rng(5)
    Q = {"reff_x": np.ones((nets, 3)), "reff_dx": np.ones((nets, 3)), "kurt_z": np.ones((nets, 3)),
         "nu1_z": np.ones((nets, 3))}
    Q["reff_x"][:, -1] = 5 + 0.1 * rng.standard_normal(nets)
    Q["reff_dx"][:, -1] = 1 + 0.1 * rng.standard_normal(nets)
    Q["kurt_z"][:, -1] = 10 + rng.standard_normal(nets)
    Q["nu1_z"][:, -1] = 0.7 + 0.01 * rng.standard_normal(nets)
    F = lb.last_layer_findings(Q)
    x = Q["kurt_z"][:, -1]
    assert F["kurtosis"][0] == pytest.approx(x.mean()) and F["kurtosis"][2] == nets - 1
    assert F["kurtosis"][1] == pytest.approx(x.std(ddof=1) / np.sqrt(nets))
    assert F["glue"]["kurt_l"] == F["kurtosis"][:2]
    assert F["glue"]["reff_order"].startswith("the signal keeps more directions")
    assert F["glue"]["fat_verdict"].startswith("fat tails")
    Q["kurt_z"][:, -1] = 3 + rng.standard_normal(nets)   # around the Gaussian value: not resolved
    Q["reff_dx"][:, -1] = Q["reff_x"][:, -1] + 10
    G = lb.last_layer_findings(Q)["glue"]
    assert G["fat_verdict"].startswith("at this batch the tails are not resolved")
    assert G["reff_order"].startswith("the noise keeps more directions")


def test_kurtosis_findings_separate_rows_by_their_t_interval():
    import pandas as pd

    def table(means, ses, nets=(8, 8, 8)):
        return pd.DataFrame({"kurtosis at the last unit": means, "± s.e.": ses, "bias": [2.6, 2.6, 2.9],
                             "networks": list(nets)})

    # difference 1.0 with se √2·0.1 = 0.141 on 7 d.o.f.: t(0.995, 7) = 3.50, half-width 0.495 < 1 → separated
    F = lb.kurtosis_findings(table([4.0, 3.0, 4.2], [0.1, 0.1, 0.1]))
    assert F["kurt_patches"] == (4.0, 0.1) and F["kurt_patches_4b"] == (4.2, 0.1)
    assert F["kurt_data_verdict"] == "The input changes it beyond its statistical error."
    assert F["kurt_batch_verdict"] == "The larger batch does not change it beyond its statistical error here."
    assert F["kurt_ff_verdict"].startswith("All stay an order of magnitude below")
    # the same difference with 3 networks (2 d.o.f., t = 9.92, half-width 1.40) is not resolved
    G = lb.kurtosis_findings(table([4.0, 3.0, 40.0], [0.1, 0.1, 0.1], nets=(3, 8, 8)))
    assert G["kurt_data_verdict"] == "Patches and Gaussian images cannot be told apart at this scale."
    assert G["kurt_ff_verdict"].startswith("The largest approaches the fat tails")


# -- Chapter 4: summaries for the chapter's glue and claims --
def test_claim_numbers_from_every_kind_of_estimate():
    from layerwise import published as pub
    from layerwise.stats import estimate

    e = estimate([1.0, 2.0, 3.0])
    assert lb.claim_numbers(e) == {"measured": 2.0, "se": e.se, "dof": 2}
    assert lb.claim_numbers((1.5, None, None)) == {"measured": 1.5, "se": None, "dof": None}
    v = pub.versus([1.0, 2.0, 3.0], (2.5, 0.3))
    assert lb.claim_numbers(v) == {"measured": 2.0, "se": v["se"], "dof": 2, "reference": 2.5}
    assert "reference" not in lb.claim_numbers({"mean": 1.0, "se": 0.1, "dof": 3})
    for bad in ("x", (1.0, 0.1), {"mean": 1.0}):
        with pytest.raises(ParameterError, match="e="):
            lb.claim_numbers(bad)


def test_bn_ff_sizes_names_the_missing_parameter():
    P = {"width": 128, "batch": 32, "depth": 200, "conv_width": 16, "conv_batch": 8, "conv_depth": 40, "conv_nets": 2}
    S = lb.bn_ff_sizes(P)
    assert S == {"fc_width": 128, "fc_batch": 32, "fc_depth": 200, "conv_width_p": 16, "conv_batch_p": 8,
                 "conv_depth_p": 40, "conv_nets_p": 2}
    with pytest.raises(ParameterError, match="conv_nets"):
        lb.bn_ff_sizes({k: v for k, v in P.items() if k != "conv_nets"})


def test_bn_ff_fc_findings_average_late_layers_and_place_the_end_in_the_bracket():
    depth = np.arange(1, 31)
    c = np.array([1.1, 1.2, 1.3, 1.4])
    late = depth >= 10

    def panels(log10_end):
        Q = {k: np.where(late, f * c[:, None], 5.0) for k, f in (("dchi", 1.0), ("dbn", 0.5), ("dphi", 2.0))}
        Q["chi"] = np.ones((4, depth.size))
        Q["chi"][:, -1] = 10.0 ** (log10_end + np.array([-0.1, 0.0, 0.1, 0.0]))
        return Q

    fit = {"r2": 0.99, "rate": 0.2, "se_rate": 0.01}
    F = lb.bn_ff_fc_findings(depth, panels(15.0), fit, l_min=10)
    assert F["n"] == 4 and np.array_equal(F["late"], late) and F["inside"]
    d = F["claims"]["dchi_gt_1"]
    assert d["measured"] == pytest.approx(c.mean()) and d["se"] == pytest.approx(c.std(ddof=1) / 2) and d["dof"] == 3
    assert F["claims"]["dbn_gt_1"]["measured"] == pytest.approx(0.5 * c.mean())   # the transient (5.0) is left out
    assert F["claims"]["chi_200_range"]["measured"] == pytest.approx(15.0)
    assert F["glue_4"]["inc_dphi"] == pytest.approx((2 * c.mean(), 2 * c.std(ddof=1) / 2))
    assert F["glue_4"]["fc_r2"] == 0.99 and F["glue"]["fc_rate"] == (0.2, 0.01)
    assert F["glue"]["chi200_verdict"] == "inside"
    above = lb.bn_ff_fc_findings(depth, panels(19.0), fit, l_min=10)
    assert not above["inside"] and above["glue"]["chi200_verdict"] == "above"
    assert lb.bn_ff_fc_findings(depth, panels(12.0), fit, l_min=10)["glue"]["chi200_verdict"] == "below"
    assert lb.bn_ff_fc_findings(depth, panels(12.0), fit, l_min=10, bracket=(11.0, 13.0))["inside"]
    with pytest.raises(ParameterError, match="bracket"):
        lb.bn_ff_fc_findings(depth, panels(15.0), fit, l_min=10, bracket=(18.0, 13.0))
    with pytest.raises(ParameterError, match="l_min=40"):
        lb.bn_ff_fc_findings(depth, panels(15.0), fit, l_min=40)


def test_dbn_conditioning_pooled_and_within_depth_rank_correlations():
    from scipy import stats

    rng = np.random.default_rng(3)
    depth = np.arange(1, 21)
    rin = rng.uniform(1, 50, (5, depth.size))
    A = {"reff_signal_loc1": rin, "chi_loc1": np.ones_like(rin)}
    C = lb.dbn_conditioning(depth, A, {"dbn": 1 + 1 / rin}, l_min=10, seed=0)   # δ_BN falls as r_eff rises
    late = depth >= 10
    assert C["claims"]["dbn_inverse_conditioning"] == {"measured": pytest.approx(-1.0), "se": pytest.approx(0.0),
                                                       "dof": 4}
    assert np.allclose(C["arrays"]["within"], -1.0) and np.array_equal(C["arrays"]["depth"], depth[late])
    assert np.array_equal(C["arrays"]["reff_in"], rin[:, late]) and C["glue"]["rho_within"] == pytest.approx((-1.0, 0.0))
    noise = rng.uniform(1, 2, rin.shape)
    R = lb.dbn_conditioning(depth, A, {"dbn": noise}, l_min=10, seed=0)
    assert R["glue"]["rho_pooled"][0] == pytest.approx(stats.spearmanr(rin[:, late].ravel(), noise[:, late].ravel())[0])
    assert R["glue"]["rho_pooled"][1] > 0
    with pytest.raises(ParameterError, match="l_min=30"):
        lb.dbn_conditioning(depth, A, {"dbn": noise}, l_min=30)


def _bn_ff_arrays(log10_rates, depth, *, end=None):
    """Engine-like arrays of BN feedforward nets whose log10 χ grows by ``log10_rates`` (one per network)
    per layer, 2:1 between the BN and ReLU steps; ``end``: overrides of the last record (panel name → values)."""
    r = np.asarray(log10_rates, float)[:, None]
    chi4 = 10 ** (r * depth[None, :])
    ones = np.ones_like(chi4)
    A = {"chi_loc1": chi4 / 10 ** r, "chi_loc3": chi4 / 10 ** (r / 3), "chi_loc4": chi4,
         "reff_signal_loc4": 3.0 * ones, "reff_noise_loc4": 2.0 * ones, "mu4_signal_loc3": 3.0 * ones,
         "mu2_signal_loc3": ones.copy(), "nu1_abs_signal_loc3": 0.7 * ones, "nu2_signal_loc3": ones.copy()}
    name = {"kurt_z": "mu4_signal_loc3", "reff_x": "reff_signal_loc4", "reff_dx": "reff_noise_loc4"}
    for k, v in (end or {}).items():
        if k == "log10_chi":
            A["chi_loc4"][:, -1] = 10.0 ** np.asarray(v)
        else:
            A[name[k]][:, -1] = v
    return A


def test_bn_ff_dataset_study_spread_of_known_rates():
    depth = np.arange(1, 41)
    wiggle = np.array([-1e-3, 0.0, 1e-3, 0.0])
    rates = {"patches": 0.10, "digits": 0.11, "gaussian": 0.12}
    D = lb.bn_ff_dataset_study({ds: (depth, _bn_ff_arrays(m + wiggle, depth)) for ds, m in rates.items()}, l_min=10,
                               seed=0)
    assert D["claims"]["rate_data_independent"]["measured"] == pytest.approx(0.02 / 0.11)   # (max − min)/mean
    assert D["glue"]["rate_spread"] == D["claims"]["rate_data_independent"]["measured"]
    assert np.allclose(D["table"]["rate"], [math.log(10) * m for m in rates.values()])      # exp_fit: natural log
    lo, hi = D["claims"]["rate_data_independent"]["interval"]
    ref = lb.relative_spread(D["table"]["rate"], D["table"]["± s.e."], dof=3, seed=0)[1]     # networks − 1 d.o.f.
    assert lo < hi and (lo, hi) == ref
    assert set(D["arrays"]) == {f"{ds}_{k}" for ds in rates for k in ("chi", "reff_x")}
    assert np.allclose(D["arrays"]["digits_chi"], D["runs"]["digits"][1]["chi"].mean(0))
    with pytest.raises(ParameterError, match="same number of networks"):
        lb.bn_ff_dataset_study({"a": (depth, _bn_ff_arrays([0.1, 0.1], depth)),
                                "b": (depth, _bn_ff_arrays([0.1, 0.1, 0.1], depth))}, l_min=10)


def test_bn_ff_batch_study_resolves_trends_and_names_the_unresolved_ones():
    depth = np.arange(1, 11)
    Bs = (16, 32, 64, 128)
    tiny, wide = 0.01 * np.array([1, -1, 1, -1, 1, -1.0]), np.array([1, -1, 1, -1, 1, -1.0])

    def runs(dx_slope, kurt_slope=0.5):
        return {B: (depth, _bn_ff_arrays(np.full(6, 0.1), depth, end={
            "kurt_z": 3 + kurt_slope * np.log2(B) + (tiny if kurt_slope else wide),
            "reff_x": 10 - np.log2(B) + tiny, "reff_dx": 5 + dx_slope * np.log2(B) + (tiny if dx_slope else wide),
            "log10_chi": 20 - np.log2(B) + tiny})) for B in Bs}

    S = lb.bn_ff_batch_study(runs(dx_slope=0.0))   # r_eff(dx): no trend, wide scatter → unresolved
    assert S["b_max"] == 128 and list(S["table"]["B"]) == list(Bs) and set(S["arrays"]) == set(S["table"].columns)
    assert S["claims"]["batch_kurtosis"]["measured"] == pytest.approx(0.5) and S["claims"]["batch_kurtosis"]["dof"] == 5
    assert S["claims"]["batch_reff_x"]["measured"] == pytest.approx(-1.0)
    assert S["claims"]["batch_log10_chi"]["measured"] == pytest.approx(-1.0)
    assert S["unresolved"] == ["reff_dx"]
    assert S["glue"]["batch_unresolved"] == ("At this scale the trend of r_eff(dx) is not resolved: its 99 % interval "
                                             "includes 0, as the values scatter widely between networks.")
    big = S["claims"]["fc_large_batch_paper_ordering"]
    gap = 5 + wide - (10 - 7 + tiny)                                   # r_eff(dx) − r_eff(x) at B = 128
    assert big["measured"] == pytest.approx(gap.mean()) and big["se"] == pytest.approx(gap.std(ddof=1) / math.sqrt(6))
    assert S["glue_3"]["slope_reff_x"] == (S["trend"]["reff_x"]["slope"], S["trend"]["reff_x"]["slope_se"])
    assert S["glue"]["b_small"] == 16 and "flip_verdict" in S["glue"]
    assert lb.bn_ff_batch_study(runs(dx_slope=1.0))["glue"]["batch_unresolved"] == "All four trends are resolved at this scale."
    two = lb.bn_ff_batch_study(runs(dx_slope=0.0, kurt_slope=0.0))
    assert two["unresolved"] == ["kurtosis", "reff_dx"]
    assert two["glue"]["batch_unresolved"].startswith("At this scale the trend of the kurtosis and r_eff(dx) is not")


def test_graded_list_in_ledger_order_or_the_fallback():
    from types import SimpleNamespace as C

    skipped = [C(id="conv_a", kind="reproduces", status="skipped"), C(id="conv_b", kind="reproduces", status="skipped"),
               C(id="conv_c", kind="checks", status="pass"), C(id="fc_d", kind="reproduces", status="pass")]
    assert lb.graded_list(skipped, "conv_", "not graded") == "not graded"
    assert lb.graded_list([], "conv_", "not graded") == "not graded"
    graded = [C(id="conv_a", kind="reproduces", status="pass"), *skipped[1:]]
    assert lb.graded_list(graded, "conv_", "not graded") == "conv_a pass; conv_b skipped"
    assert lb.graded_list(graded, "conv_", "none", kind="checks") == "conv_c pass"


def test_last_layer_findings_give_the_claim_numbers_of_the_tails():
    Q = {k: np.ones((4, 2)) for k in ("reff_x", "reff_dx", "kurt_z", "nu1_z")}
    Q["kurt_z"][:, -1] = [4.0, 5.0, 6.0, 7.0]
    F = lb.last_layer_findings(Q)
    assert F["claims"]["kurtosis_fat"] == {"measured": 5.5, "se": pytest.approx(np.std([4, 5, 6, 7], ddof=1) / 2),
                                           "dof": 3}
    assert F["claims"]["nu1_small"] == {"measured": 1.0, "se": 0.0, "dof": 3}


def test_growth_law_r2_tells_an_exponential_from_a_power_law():
    depth = np.arange(0, 201, 8, dtype=float)
    rng = np.random.default_rng(0)
    noise = 1 + 0.001 * rng.standard_normal((6, depth.size))
    expo = lb.growth_law_r2(depth, np.exp(0.15 * depth)[None, :] * noise, l_min=10)
    power = lb.growth_law_r2(depth, (np.maximum(depth, 1) ** 2.5)[None, :] * noise, l_min=10)
    assert expo["exponential"].mean > 0.999 > expo["power"].mean and expo["exponential"].n == 6
    assert power["power"].mean > 0.999 > power["exponential"].mean


def test_curvature_is_relative_to_the_diffusion_and_stays_bounded_when_the_fitted_line_vanishes():
    depth = np.array([50.0, 100.0, 150.0, 200.0])
    # variance exactly ∝ l² on every resample: the curvature is the ballistic value L·Σl²/Σl³ (1.2 here)
    rng = np.random.default_rng(0)
    rates = rng.normal(0.0, 0.1, size=(400, 1))
    r = lb.drift_diffusion(depth, rates * depth, n_boot=50)
    assert r["ballistic"] == pytest.approx(200 * 75000 / 12.5e6)
    assert r["curvature_var"] == pytest.approx(r["ballistic"], rel=1e-9)
    # a noisy random walk from few networks: the fitted linear coefficient b crosses 0 in some
    # resamples, c/b would explode; c·L/D stays of order one
    walk = np.cumsum(rng.normal(0.0, 0.1, size=(12, 200)), axis=1)
    r = lb.drift_diffusion(depth, walk[:, depth.astype(int) - 1], n_boot=400, seed=3)
    assert abs(r["curvature_var"]) < 3 and r["se_curvature_var"] < 3


def test_r2_bootstrap_brackets_the_point_values_and_overlay_names_the_exponential_alternative():
    rng = np.random.default_rng(1)
    depth = np.arange(1, 101, dtype=float)
    chi = depth**0.8 * np.exp(rng.normal(0, 0.05, size=(8, 100)))
    b = lb.r2_bootstrap(depth, chi, l_min=10, n_boot=100)
    r = lb.r2_pair(depth, np.log(chi).mean(0), l_min=10)
    assert b["r2_log"] == pytest.approx(r["r2_linear_in_log_l"]) and b["r2_l"] == pytest.approx(r["r2_linear_in_l"])
    assert b["ci_log"][0] <= b["r2_log"] + 1e-9 and b["ci_diff"][0] > 0
    assert lb.r2_bootstrap(depth, chi[:1], l_min=10)["ci_l"] is None
    o = lb.power_overlay(depth, chi, np.full((8, 5), 1.1), 2, l_min=10, n_boot=20)
    assert o["exp_max_dev"] > 0.1      # a power law over a decade is no exponential
    o = lb.power_overlay(depth, np.tile(np.exp(0.02 * depth), (3, 1)), np.full((3, 5), 1.1), 2, l_min=10, n_boot=20)
    assert o["exp_max_dev"] < 1e-9


def test_lognormal_skewness_closed_form():
    assert lb.lognormal_skewness(0.0) == 0.0
    s2 = 0.5
    assert lb.lognormal_skewness(s2) == pytest.approx((math.exp(s2) + 2) * math.sqrt(math.exp(s2) - 1))
