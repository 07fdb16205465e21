"""Chapter 5's study (layerwise.studies.ch05) on synthetic engine arrays with known answers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

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


def test_power_rate_table_exact_power_law():
    delta, L = 1.05, 2
    tau = (delta ** (2 * L) - 1) / 2
    d = np.arange(1, 51).astype(float)
    Q = {
        "chi": np.tile(d**tau, (3, 1)),
        "dff": np.full((3, 50), delta),
        "reff_x": np.full((3, 50), 7.0),
    }
    T = ch05.power_rate_table({"g": (d, Q)}, L, l_min=5)
    assert T.loc["g", "free τ"] == pytest.approx(tau) and T.loc["g", "Eq. 15 τ"] == pytest.approx(
        tau
    )
    assert (
        T.loc["g", "log χ^L"] == pytest.approx(tau * math.log(50))
        and T.loc["g", "r_eff(x^L)"] == 7.0
    )


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


def test_log_chi_ratio_combines_the_two_errors():
    T = pd.DataFrame(
        {"log χ^L": [2.0, 1.5], "s.e. (log χ^L)": [0.3, 0.4]}, index=["patches", "gaussian"]
    )
    r = ch05.log_chi_ratio(T, "patches", "gaussian", n=5)
    assert r.mean == pytest.approx(0.5) and r.se == pytest.approx(0.5) and r.dof == 4


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
    assert ch05.overlay_deviation(overlay, 1).interval is None   # one network: a point
    d = np.arange(1, 41).astype(float)
    rng = np.random.default_rng(2)
    chi = np.exp(0.1 * d[None, :] + 0.01 * rng.standard_normal((6, 40)))   # exponential growth
    fits = ch05.growth_law_fits(d, chi, 5, seed=0)
    assert fits["r2_l"].mean == pytest.approx(1.0, abs=1e-3) and fits["diff"].mean < 0
    low, high = fits["r2_log"].interval
    assert low <= fits["r2_log"].mean <= high
    assert ch05.growth_law_fits(d, chi[:1], 5)["r2_l"].interval is None
