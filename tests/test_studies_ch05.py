"""Chapter 5's study (layerwise.studies.ch05) on synthetic engine arrays with known answers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from layerwise import published
from layerwise.params import ParameterError
from layerwise.studies import ch05


def test_exponent_windows_exact_power_law():
    delta, L = 1.1, 2
    tau = (delta ** (2 * L) - 1) / 2
    d = np.arange(1, 101)
    chi = np.tile(2.0 * d.astype(float) ** tau, (4, 1))
    dff = delta + np.array([-0.01, 0.01, -0.02, 0.02])[:, None] * np.ones(
        100
    )  # mean over networks: δ
    T = ch05.exponent_windows(d, chi, dff, L, 10, 100, n_windows=4)
    assert list(T.index) == ["10–32", "32–55", "55–77", "77–100"]
    assert np.allclose(T["free τ"], tau) and np.allclose(T["Eq. 15 τ"], tau)
    se = (
        L * delta ** (2 * L - 1) * np.std([-0.01, 0.01, -0.02, 0.02], ddof=1) / 2
    )  # delta method, √4 = 2
    assert np.allclose(T["s.e. (Eq. 15)"], se) and np.allclose(T["difference / combined s.e."], 0.0)


def test_kurtosis_table_values_and_gaussian_bias():
    rng = np.random.default_rng(5)
    A = {
        "mu4_signal_loc2": rng.uniform(2, 4, (5, 3)),
        "mu2_signal_loc2": rng.uniform(0.5, 1.5, (5, 3)),
    }
    T = ch05.kurtosis_table([("x", 16, A), ("y", 64, A)])
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


def test_kurtosis_findings_estimate_the_differences_with_their_t_interval():
    def table(means, ses, nets=(8, 8, 8)):
        return pd.DataFrame(
            {
                "kurtosis at the last unit": means,
                "± s.e.": ses,
                "bias": [2.6, 2.6, 2.9],
                "networks": list(nets),
            }
        )

    # difference 1.0 with se √2·0.1 = 0.141 on 7 d.o.f.: t(0.995, 7) = 3.50, half-width 0.495 < 1
    F = ch05.kurtosis_findings(table([4.0, 3.0, 4.2], [0.1, 0.1, 0.1]))
    assert F["patches"] == (4.0, 0.1) and F["patches_4b"] == (4.2, 0.1) and F["largest"] == 4.2
    assert F["by_input"].mean == pytest.approx(1.0) and F["by_input"].dof == 7
    assert F["by_input"].bounds()[0] > 0
    low, high = F["by_batch"].bounds()
    assert low < 0 < high
    # the same difference with 3 networks (2 d.o.f., t = 9.92, half-width 1.40) is not resolved
    G = ch05.kurtosis_findings(table([4.0, 3.0, 40.0], [0.1, 0.1, 0.1], nets=(3, 8, 8)))
    assert G["by_input"].dof == 2 and G["by_input"].bounds()[0] < 0 < G["by_input"].bounds()[1]


def test_fig5_summary_of_an_exact_power_law():
    delta, L = 1.05, 2
    tau = (delta ** (2 * L) - 1) / 2
    d = np.arange(1, 51).astype(float)
    rng = np.random.default_rng(0)
    Q = {
        "chi": np.tile(d**tau, (4, 1)),
        "dff": delta + 0.001 * rng.standard_normal((4, 50)),
        "reff_x": np.full((4, 50), 7.0),
        "reff_dx": np.full((4, 50), 9.0),
        "kurt_z": np.full((4, 50), 3.5),
    }
    S = ch05.fig5_summary(d, Q, L, 5, seed=0)
    assert S["power_fit"]["tau"] == pytest.approx(tau) and S["tau_eq15"][0] == pytest.approx(
        tau, rel=1e-2
    )
    assert S["r2"]["r2_linear_in_log_l"] == pytest.approx(1.0)
    assert S["reff_x"].mean == 7.0 and S["kurtosis"].mean == 3.5 and S["dff"].dof == 3
    assert S["overlay"]["max_dev"] < 0.05


def test_overlay_deviation_and_growth_law_fits_carry_the_bootstrap_interval():
    overlay = {"max_dev": 0.07, "interval": (0.03, 0.12)}
    e = ch05.overlay_deviation(overlay, 5)
    assert e.mean == 0.07 and e.interval == (0.03, 0.12) and e.se is None and e.n == 5
    assert ch05.overlay_deviation(overlay, 1).interval is None  # one network: a point
    d = np.arange(1, 41).astype(float)
    rng = np.random.default_rng(2)
    chi = np.exp(0.1 * d[None, :] + 0.01 * rng.standard_normal((6, 40)))  # exponential growth
    fits = ch05.growth_law_fits(d, chi, 5, seed=0)
    assert fits["r2_l"].mean == pytest.approx(1.0, abs=1e-3) and fits["diff"].mean < 0
    low, high = fits["r2_log"].interval
    assert low <= fits["r2_log"].mean <= high
    assert ch05.growth_law_fits(d, chi[:1], 5)["r2_l"].interval is None


def _engine(tau=0.6, n=5, units=(5, 10, 50, 100), seed=3):
    """Synthetic BN ResNet engine arrays: χ(loc5) = c·l^τ per network, known ratios and levels."""
    rng = np.random.default_rng(seed)
    d = np.asarray(units)
    c = rng.uniform(1, 2, (n, 1))
    chi5 = c * d[None, :].astype(float) ** tau
    chi1 = rng.uniform(1, 3, (n, d.size))
    return d, {
        "chi_loc5": chi5,
        "chi_loc1": chi1,
        "chi_loc4": 1.25 * chi1,
        "reff_signal_loc3": np.full((n, d.size), 11.0),
        "reff_noise_loc3": np.full((n, d.size), 17.0),
        "reff_signal_loc5": np.full((n, d.size), np.nan),
        "reff_noise_loc5": np.full((n, d.size), np.nan),
        "mu4_signal_loc2": np.full((n, d.size), 12.0),
        "mu2_signal_loc2": np.full((n, d.size), 2.0),
        "nu1_abs_signal_loc2": np.ones((n, d.size)),
        "nu2_signal_loc2": np.ones((n, d.size)),
        "chi_loc2": chi1,
        "chi_loc3": chi1,
    }


def test_fc_values_of_an_exact_power_law():
    d, A = _engine(tau=0.6)
    v = ch05.fc_values(d, A, 10, 100)
    assert np.allclose(v["tau"], 0.6) and np.allclose(v["dff"], 1.25)
    assert np.allclose(v["log10_chi"], np.log10(A["chi_loc5"][:, -1]))
    assert np.allclose(v["reff_x"], 11.0) and np.allclose(v["reff_dx"], 17.0)
    assert np.allclose(v["kurtosis"], 3.0)  # 12 / 2²
    with pytest.raises(ParameterError, match="unit=20"):
        ch05.fc_values(d, A, 20, 100)


def test_authors_fc_against_the_published_arrays():
    a = ch05.authors_fc(50, 500)
    c5 = published.moment("bn_res_fc", "chi_loc5")
    lo, hi = c5.mean_se(50, log10=True), c5.mean_se(500, log10=True)
    # one decade: the exponent is the rise of E log10 χ, and its SE bound is at least each end's SE
    assert a["tau"][0] == pytest.approx(hi[0] - lo[0])
    assert a["tau"][1] >= max(lo[1], hi[1]) and a["tau"][1] <= lo[1] + hi[1] + 1e-12
    assert a["log10_chi"] == hi
    mu4 = published.moment("bn_res_fc", "mu4_signal_loc2")
    k = mu4.index(500)
    assert a["kurtosis"] == mu4.mean_se(500)
    assert a["band"]["kurtosis"] == pytest.approx((mu4.q90[k] - mu4.q10[k]) / 2 / mu4.mean[k])
    assert 1.0 < a["dff"][0] < 1.5 and math.isnan(a["dff"][1])


def test_versus_authors_combines_both_errors_and_skips_keys_without_one():
    ours = {"tau": np.array([0.6, 0.7, 0.8]), "dff": np.array([1.2, 1.3, 1.4])}
    authors = {"tau": (0.65, 0.04), "dff": (1.25, math.nan)}
    v = ch05.versus_authors(ours, authors)
    assert set(v) == {"tau"}
    assert v["tau"].mean == pytest.approx(0.7)
    assert v["tau"].se == pytest.approx(math.hypot(0.1 / math.sqrt(3), 0.04)) and v["tau"].dof == 2


def test_input_difference_between_inputs_and_the_authors_configuration():
    e = ch05.input_difference([1.0, 2.0, 3.0, 4.0], [0.0, 1.0])
    assert e.mean == pytest.approx(2.0) and e.dof == 1  # 2.5 − 0.5, d.o.f. of the smaller run
    se_a, se_b = np.std([1, 2, 3, 4], ddof=1) / 2, np.std([0, 1], ddof=1) / math.sqrt(2)
    assert e.se == pytest.approx(math.hypot(se_a, se_b))
    runs = {"a": {"k": np.array([1.0, 1.2])}, "b": {"k": np.array([3.0, 3.2])},
            "c": {"k": np.array([2.0, 2.2])}}
    eff = ch05.input_effect(runs, "k")  # largest minus smallest mean: b − a
    assert eff.mean == pytest.approx(2.0)
    many = {k: {"k": v["k"].mean() + 0.01 * np.arange(-5, 5)} for k, v in runs.items()}
    side = ch05.versus_authors_by_input(many, {"k": (2.1, 0.001)}, "k")
    assert [side[k].sign() for k in "abc"] == [-1, 1, 0]
    assert ch05.matches_authors(dict(width=512, batch=64, depth=500, res_depth=2))
    assert not ch05.matches_authors(dict(width=64, batch=16, depth=100, res_depth=2))


def test_authors_table_layout():
    ours = {"x": {"tau": np.array([0.6, 0.8]), "kurtosis": np.array([3.0, 3.2])}}
    T = ch05.authors_table(ours, {"tau": (0.63, 0.01), "kurtosis": (3.4, 0.02)}, "them")
    assert T.loc["tau", ("x (2)", "mean")] == pytest.approx(0.7)
    assert T.loc["kurtosis", ("them (200)", "s.e.")] == 0.02
    assert list(T.index) == ["tau", "kurtosis"]


def test_authors_fig5_reference_layout():
    R = ch05.authors_fig5_reference()
    n = R["depth"].size
    assert R["depth"][0] == 5 and R["depth"][-1] == 500
    for key in ("dbn", "chi", "reff_x", "reff_dx", "kurt_z", "nu1_z"):
        centre, lo, hi = R[key]
        assert centre.shape == (n,)
        if lo is not None:
            assert np.all(lo <= centre + 1e-9) and np.all(centre <= hi + 1e-9)
    assert R["kurt_z"][0][-1] == published.moment("bn_res_fc", "mu4_signal_loc2").mean[-1]


def test_authors_reff_ratio_is_the_fully_connected_arrays_ratio():
    r = ch05.authors_reff_ratio()
    assert r["res"] == pytest.approx(12.7702) and r["ff"] == pytest.approx(10.1651)
    assert r["ratio"] == pytest.approx(1.2563, abs=1e-4)  # the paper's direction, not 0.81


def test_ratio_estimate_delta_method():
    from layerwise.stats import Estimate

    e = ch05.ratio_estimate(Estimate(8.0, 0.4, 9, 10), Estimate(10.0, 0.5, 4, 5))
    assert e.mean == pytest.approx(0.8)
    assert e.se == pytest.approx(0.8 * math.hypot(0.05, 0.05)) and e.dof == 4


def test_authors_overlay_and_the_overlay_estimator_control():
    # the authors' own fully-connected ResNets satisfy the overlay rule on the default's window
    assert ch05.authors_overlay(50, 500, 2)["max_dev"] < 0.10
    d = np.arange(5, 505, 5)
    rng = np.random.default_rng(0)
    chi = np.exp(0.65 * np.log(d) + 0.01 * rng.standard_normal((12, d.size)))
    c = ch05.overlay_estimator_control(d, chi, 2, 0.65, 50, 0.10)
    assert c.kind == "estimator" and c.passed  # a power law passes, an exponential does not
    assert "exponential with the same end points: fail" in c.note


def test_gap_carried_reads_the_first_common_unit():
    d = np.arange(5, 505, 5)
    m = published.moment("bn_res_fc", "reff_signal_loc3")
    arrays = {"reff_signal_loc3": np.tile(0.5 * np.interp(d, m.depth, m.mean), (3, 1))}
    g = ch05.gap_carried(d, arrays, "reff_x")
    assert g["first"] == 5 and g["last"] == 500
    assert g["gap_first"] == pytest.approx(-0.5) and g["gap_last"] == pytest.approx(-0.5)
