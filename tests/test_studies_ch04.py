"""Chapter 4's study (layerwise.studies.ch04) on synthetic engine arrays with known answers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from layerwise import labatie, published, stats
from layerwise.params import ParameterError
from layerwise.stats import Estimate
from layerwise.studies import ch04


def _bn_ff_arrays(log10_rates, depth, *, end=None):
    """Engine-like arrays of BN feedforward nets whose log10 χ grows by ``log10_rates`` (one per
    network) per layer, 2:1 between the BN and ReLU steps; ``end``: overrides of the last record
    (panel name → values)."""
    r = np.asarray(log10_rates, float)[:, None]
    chi4 = 10 ** (r * depth[None, :])
    ones = np.ones_like(chi4)
    A = {
        "chi_loc1": chi4 / 10**r,
        "chi_loc3": chi4 / 10 ** (r / 3),
        "chi_loc4": chi4,
        "reff_signal_loc4": 3.0 * ones,
        "reff_noise_loc4": 2.0 * ones,
        "mu4_signal_loc3": 3.0 * ones,
        "mu2_signal_loc3": ones.copy(),
        "nu1_abs_signal_loc3": 0.7 * ones,
        "nu2_signal_loc3": ones.copy(),
    }
    name = {"kurt_z": "mu4_signal_loc3", "reff_x": "reff_signal_loc4", "reff_dx": "reff_noise_loc4"}
    for k, v in (end or {}).items():
        if k == "log10_chi":
            A["chi_loc4"][:, -1] = 10.0 ** np.asarray(v)
        else:
            A[name[k]][:, -1] = v
    return A


RECORDS = np.arange(2, 201, 2)  # every other layer up to the paper's depth


def _synthetic_bn_ff(n=5, depth=RECORDS, rate=0.06, seed=0):
    rng = np.random.default_rng(seed)
    c0 = rng.uniform(1, 3, (n, 1))
    chi4 = c0 * 10 ** (rate * depth[None, :])
    return depth, {
        "chi_loc1": chi4 / 10**rate,
        "chi_loc3": chi4 / 10 ** (rate / 3),
        "chi_loc4": chi4,
        "reff_signal_loc4": np.broadcast_to(rng.uniform(1, 3, (n, 1)), (n, depth.size)).copy(),
        "reff_noise_loc4": np.full((n, depth.size), 200.0),
        "mu4_signal_loc3": np.full((n, depth.size), 100.0),
        "nu1_abs_signal_loc3": np.full((n, depth.size), 0.3),
    }


def test_monotone_trend_slope_and_significance():
    t = ch04.monotone_trend([64, 128, 256, 512], [1.0, 2.0, 3.0, 4.0], [0.1] * 4)
    assert t["slope"] == pytest.approx(1.0) and t["z"] > 10


def test_exp_rate_table_recovers_rates():
    d = np.arange(1.0, 41.0)
    runs = {}
    for ds, r in [("a", 0.1), ("b", 0.2)]:
        rates = r + np.array([-0.01, 0.0, 0.01])
        chi = np.exp(rates[:, None] * d)
        runs[ds] = (
            d,
            {"chi": chi, "reff_x": np.full((3, 40), 2.0), "kurt_z": np.full((3, 40), 5.0)},
        )
    T = ch04.exp_rate_table(runs, l_min=10)
    assert list(T.index) == ["a", "b"]
    rate, se, log10chi, reff, kurt = ch04.RATE_COLUMNS
    assert list(T.columns) == list(ch04.RATE_COLUMNS)
    ln10 = math.log(10)  # decades per layer: the natural-log rate over ln 10
    assert T.loc["a", rate] == pytest.approx(0.1 / ln10) and T.loc["b", rate] == pytest.approx(
        0.2 / ln10
    )
    assert T.loc["a", se] == pytest.approx(0.01 / math.sqrt(3) / ln10)
    assert T.loc["b", log10chi] == pytest.approx(0.2 * 40 / ln10)
    assert T.loc["a", reff] == 2.0 and T.loc["a", kurt] == 5.0


def test_batch_endpoints_means_and_errors():
    rng = np.random.default_rng(4)
    runs = {
        B: {k: rng.uniform(1, 9, (6, 3)) for k in ("chi", "kurt_z", "reff_x", "reff_dx")}
        for B in (16, 32)
    }
    T = ch04.batch_endpoints(runs)
    assert list(T.columns) == [
        "B",
        "log10_chi",
        "se_log10_chi",
        "kurtosis",
        "se_kurtosis",
        "reff_x",
        "se_reff_x",
        "reff_dx",
        "se_reff_dx",
    ]
    assert list(T["B"]) == [16, 32]
    v = np.log10(runs[32]["chi"][:, -1])
    assert T["log10_chi"].iloc[1] == pytest.approx(v.mean())
    assert T["se_log10_chi"].iloc[1] == pytest.approx(v.std(ddof=1) / math.sqrt(6))
    assert T["reff_dx"].iloc[0] == pytest.approx(runs[16]["reff_dx"][:, -1].mean())


def test_batch_findings_reads_ratios_and_trends():
    def table(rx, rdx):
        B = np.array([16, 64, 256])
        cols = {
            "B": B,
            "log10_chi": [16.0, 15.0, 14.0],
            "kurtosis": [2.5, 2.8, 2.9],
            "reff_x": rx,
            "reff_dx": rdx,
        }
        return pd.DataFrame({**cols, **{f"se_{k}": [0.1, 0.1, 0.1] for k in ch04.BATCH_ENDPOINTS}})

    F = ch04.batch_findings(table([4.0, 3.0, 1.0], [2.0, 2.0, 2.0]))
    assert np.allclose(F["ratio"], [2.0, 1.5, 0.5])
    assert (F["b_small"], F["b_large"]) == (16, 256) and F["ratio_large"] == 0.5
    assert F["ratio_small"] == 2.0
    t = ch04.monotone_trend([16, 64, 256], [16.0, 15.0, 14.0], [0.1, 0.1, 0.1])
    assert F["trend"]["log10_chi"]["slope"] == t["slope"] and set(F["trend"]) == set(
        ch04.BATCH_ENDPOINTS
    )


def test_last_layer_findings_estimates_against_closed_form_statistics():
    nets = 6
    rng = np.random.default_rng(5)
    Q = {
        "reff_x": np.ones((nets, 3)),
        "reff_dx": np.ones((nets, 3)),
        "kurt_z": np.ones((nets, 3)),
        "nu1_z": np.ones((nets, 3)),
    }
    Q["reff_x"][:, -1] = 5 + 0.1 * rng.standard_normal(nets)
    Q["reff_dx"][:, -1] = 1 + 0.1 * rng.standard_normal(nets)
    Q["kurt_z"][:, -1] = 10 + rng.standard_normal(nets)
    Q["nu1_z"][:, -1] = 0.7 + 0.01 * rng.standard_normal(nets)
    F = ch04.last_layer_findings(Q)
    x = Q["kurt_z"][:, -1]
    assert F["kurtosis"].mean == pytest.approx(x.mean()) and F["kurtosis"].dof == nets - 1
    assert F["kurtosis"].se == pytest.approx(x.std(ddof=1) / np.sqrt(nets))
    assert F["reff_gap"] == stats.estimate(Q["reff_x"][:, -1] - Q["reff_dx"][:, -1])
    assert F["reff_gap"].bounds()[0] > 0  # the signal keeps more directions, resolved
    assert F["nu1"].mean == pytest.approx(Q["nu1_z"][:, -1].mean())


def test_bn_ff_fc_findings_average_late_layers():
    depth = np.arange(1, 31)
    c = np.array([1.1, 1.2, 1.3, 1.4])
    late = depth >= 10
    Q = {
        k: np.where(late, f * c[:, None], 5.0)
        for k, f in (("dchi", 1.0), ("dbn", 0.5), ("dphi", 2.0))
    }
    Q["chi"] = np.ones((4, depth.size))
    Q["chi"][:, -1] = 10.0 ** (15.0 + np.array([-0.1, 0.0, 0.1, 0.0]))
    F = ch04.bn_ff_fc_findings(depth, Q, l_min=10)
    d = F["increments"]["dchi"]
    assert F["n"] == 4
    assert (
        d.mean == pytest.approx(c.mean())
        and d.se == pytest.approx(c.std(ddof=1) / 2)
        and d.dof == 3
    )
    assert F["increments"]["dbn"].mean == pytest.approx(
        0.5 * c.mean()
    )  # the transient (5.0) is left out
    assert F["log10chi"].mean == pytest.approx(15.0)
    with pytest.raises(ParameterError, match="l_min=40"):
        ch04.bn_ff_fc_findings(depth, Q, l_min=40)


def test_dbn_conditioning_pooled_and_within_depth_rank_correlations():
    rng = np.random.default_rng(3)
    depth = np.arange(1, 21)
    rin = rng.uniform(1, 50, (5, depth.size))
    A = {"reff_signal_loc1": rin, "chi_loc1": np.ones_like(rin)}
    C = ch04.dbn_conditioning(
        depth, A, {"dbn": 1 + 1 / rin}, l_min=10, seed=0
    )  # δ_BN falls with r_eff
    late = depth >= 10
    assert (
        C["rho"].mean == pytest.approx(-1.0)
        and C["rho"].se == pytest.approx(0.0)
        and C["rho"].dof == 4
    )
    assert np.allclose(C["arrays"]["within"], -1.0) and np.array_equal(
        C["arrays"]["depth"], depth[late]
    )
    assert np.array_equal(C["arrays"]["reff_in"], rin[:, late])
    assert C["rho_within"].mean == pytest.approx(-1.0)
    noise = rng.uniform(1, 2, rin.shape)
    R = ch04.dbn_conditioning(depth, A, {"dbn": noise}, l_min=10, seed=0)
    assert R["rho"].mean == pytest.approx(
        sps.spearmanr(rin[:, late].ravel(), noise[:, late].ravel())[0]
    )
    assert R["rho"].se > 0
    with pytest.raises(ParameterError, match="l_min=30"):
        ch04.dbn_conditioning(depth, A, {"dbn": noise}, l_min=30)


def test_bn_ff_dataset_study_spread_of_known_rates():
    depth = np.arange(1, 41)
    wiggle = np.array([-1e-3, 0.0, 1e-3, 0.0])
    rates = {"patches": 0.10, "digits": 0.11, "gaussian": 0.12}
    D = ch04.bn_ff_dataset_study(
        {ds: (depth, _bn_ff_arrays(m + wiggle, depth)) for ds, m in rates.items()}, l_min=10, seed=0
    )
    assert D["spread"].mean == pytest.approx(0.02 / 0.11)  # (max − min)/mean
    rate, se = ch04.RATE_COLUMNS[:2]
    assert np.allclose(D["table"][rate], list(rates.values()))  # decades per layer
    ref = stats.relative_spread(  # the spread of the natural-log rates, networks − 1 d.o.f.
        D["table"][rate] * math.log(10), D["table"][se] * math.log(10), dof=3, seed=0
    )
    assert D["spread"].interval[0] < D["spread"].interval[1] and D["spread"] == ref
    assert set(D["arrays"]) == {f"{ds}_{k}" for ds in rates for k in ("chi", "reff_x")}
    assert np.allclose(D["arrays"]["digits_chi"], D["runs"]["digits"][1]["chi"].mean(0))
    with pytest.raises(ParameterError, match="same number of networks"):
        ch04.bn_ff_dataset_study(
            {
                "a": (depth, _bn_ff_arrays([0.1, 0.1], depth)),
                "b": (depth, _bn_ff_arrays([0.1, 0.1, 0.1], depth)),
            },
            l_min=10,
        )


def test_bn_ff_batch_study_slopes_and_the_large_batch_gap():
    depth = np.arange(1, 11)
    Bs = (16, 32, 64, 128)
    tiny, wide = 0.01 * np.array([1, -1, 1, -1, 1, -1.0]), np.array([1, -1, 1, -1, 1, -1.0])
    runs = {
        B: (
            depth,
            _bn_ff_arrays(
                np.full(6, 0.1),
                depth,
                end={
                    "kurt_z": 3 + 0.5 * np.log2(B) + tiny,
                    "reff_x": 10 - np.log2(B) + tiny,
                    "reff_dx": 5 + wide,
                    "log10_chi": 20 - np.log2(B) + tiny,
                },
            ),
        )
        for B in Bs
    }
    S = ch04.bn_ff_batch_study(runs)  # r_eff(dx): no trend, wide scatter → its interval holds 0
    assert S["b_max"] == 128 and list(S["table"]["B"]) == list(Bs)
    assert set(S["arrays"]) == set(S["table"].columns)
    assert S["slope"]["kurtosis"].mean == pytest.approx(0.5) and S["slope"]["kurtosis"].dof == 5
    assert S["slope"]["reff_x"].mean == pytest.approx(-1.0)
    assert S["slope"]["log10_chi"].mean == pytest.approx(-1.0)
    low, high = S["slope"]["reff_dx"].bounds()
    assert low < 0 < high
    gap = 5 + wide - (10 - 7 + tiny)  # r_eff(dx) − r_eff(x) at B = 128
    assert S["large_batch_gap"].mean == pytest.approx(gap.mean())
    assert S["large_batch_gap"].se == pytest.approx(gap.std(ddof=1) / math.sqrt(6))
    assert S["slope"]["reff_x"].se == S["trend"]["reff_x"]["slope_se"] and S["b_small"] == 16


def test_late_ours_recovers_known_levels_and_rate():
    depth, A = _synthetic_bn_ff()
    out = ch04.late_ours(depth, A, 150, 200)
    assert np.allclose(out["log10_dchi"], 0.06)
    assert np.allclose(out["reff_x"], A["reff_signal_loc4"][:, 0]) and np.allclose(
        out["reff_dx"], 200
    )
    with pytest.raises(ParameterError, match="l_min=300"):
        ch04.late_ours(depth, A, 300, 400)


def test_versus_combines_both_standard_errors():
    v = stats.versus_reference([1.0, 2.0, 3.0], (2.5, 0.3))
    assert v.mean == 2.0 and v.dof == 2
    assert v.se == pytest.approx(math.hypot(1.0 / math.sqrt(3), 0.3))
    assert v.reference_se == 0.3 and v.own_se == pytest.approx(1.0 / math.sqrt(3))
    assert stats.estimate([1.0, 2.0, 3.0]).own_se == pytest.approx(1.0 / math.sqrt(3))
    assert stats.versus_reference([4.0], (2.5, 0.3)).se == pytest.approx(0.3)
    with pytest.raises(ParameterError, match="ours"):
        stats.versus_reference([], (1.0, 0.1))


def _conv_summary(n=5, max_depth=200):
    depth, A = _synthetic_bn_ff(n=n)
    keep = depth <= max_depth
    depth, A = depth[keep], {k: v[:, keep] for k, v in A.items()}
    A = {
        **A,
        "mu2_signal_loc3": np.ones_like(A["chi_loc4"]),
        "nu2_signal_loc3": np.ones_like(A["chi_loc4"]),
    }
    Q = labatie.bn_ff_panels(A, depth)
    S = ch04.fig4_conv_summary(
        depth, Q, A, "bn_ff_mnist", conv_depth=max_depth, interval=2, l_min=10
    )
    return depth, A, S


def test_fig4_conv_summary_grades_known_increments_and_levels():
    depth, A, S = _conv_summary()
    assert (S["late_lmin"], S["early_lmax"]) == (150, 20)  # the last quarter, 20 layers
    # χ grows by 10^0.06 per layer in every network, split 2:1 between the BN and ReLU steps
    assert S["dchi"].mean == pytest.approx(10**0.06) and S["dchi"].dof == 4
    assert S["log10_dchi"].mean == pytest.approx(0.06)
    theirs = published.late_published("bn_ff_mnist", 150, 200)
    assert S["authors"]["log10_dchi"] == pytest.approx(theirs["log10_dchi"][0])
    assert S["dbn_late"].mean == pytest.approx(10**0.04) and S["dphi_late"].mean == pytest.approx(
        10**0.02
    )
    assert S["late_gap"].mean == pytest.approx(10**0.04 - 10**0.02)
    assert S["early_gap"].mean == pytest.approx(10**0.02 - 10**0.04)
    assert S["dchi_late"].mean == pytest.approx(10**0.06)
    rx = A["reff_signal_loc4"][:, 0]
    assert S["reff_ratio"].mean == pytest.approx(np.mean(200 / rx))
    assert S["levels"]["reff_dx"].mean == 200.0 and S["ours_levels"]["reff_dx"].se == 0.0
    assert S["authors"]["levels"]["kurtosis"] == pytest.approx(theirs["kurtosis"][0])
    end = np.log10(A["chi_loc4"][:, -1])
    assert S["log10_chi_end"].mean == pytest.approx(end.mean())
    assert S["log10_chi_end"].se == pytest.approx(end.std(ddof=1) / np.sqrt(5))
    inc = published.increments_published("bn_ff_mnist")
    w = (inc["depth"] >= 150) & (inc["depth"] <= 200)
    assert S["authors"]["dbn_late"] == pytest.approx(inc["dbn"][w].mean())
    levels = [
        published.late_published(v, 150, 200)["kurtosis"][0] for v in published.BN_FF_CONV_VARIANTS
    ]
    assert S["spread"]["kurtosis"] == pytest.approx(
        (max(levels) - min(levels)) / abs(np.mean(levels))
    )
    assert len(S["log10_chi_variants"]) == 3 and all(13 < x < 14 for x in S["log10_chi_variants"])


def test_fig4_conv_summary_of_reduced_nets_and_one_network_as_a_point():
    _, _, S = _conv_summary(max_depth=40)
    assert (S["late_lmin"], S["early_lmax"]) == (30, 4)  # max(2 · interval, 40 // 10)
    one = _conv_summary(n=1)[2]
    assert one["dchi"].se is None and one["dchi"].dof is None
    assert one["levels"]["reff_x"].se > 0 and one["levels"]["reff_x"].dof is None
    assert (
        isinstance(one["reff_ratio"], Estimate)
        and one["reff_ratio"].bounds()[0] == one["reff_ratio"].mean
    )


def test_fc_batch_table_is_the_authors_study_by_batch_size():
    T = ch04.fc_batch_table(200)
    authors = published.bn_ff_fc_batch_study(200)
    assert list(T.index) == [64, 128, 256, 512] and T.index.name == "B"
    assert list(T.columns) == [
        "effective rank r(x)",
        "effective rank r(dx)",
        "kurtosis μ₄",
        "log₁₀ χ",
    ]
    for k, title in zip(("reff_x", "reff_dx", "kurtosis", "log10_chi"), T.columns, strict=True):
        assert np.allclose(T[title], authors[k])


# ----------------------------------------------------------------------------------------------
# Like with like: the authors' fully-connected nets (issue #28)
# ----------------------------------------------------------------------------------------------
def test_nearest_half_gap_and_the_published_batch():
    levels = {64: 10.0, 128: 4.0, 256: 3.0, 512: 2.5}
    assert ch04.nearest_half_gap(levels, 64) == pytest.approx(3.0)
    assert ch04.nearest_half_gap(levels, 128) == pytest.approx(0.5)
    assert ch04.nearest_half_gap(levels, 512) == pytest.approx(0.25)
    with pytest.raises(ParameterError, match="key=32"):
        ch04.nearest_half_gap(levels, 32)
    assert [ch04.published_batch(b) for b in (16, 32, 64, 100, 300, 4096)] == [
        64,
        64,
        64,
        128,
        256,
        512,
    ]


def _authors_fc_arrays(experiment, shift=0.0, n=4, seed=0):
    """Networks whose log10 χ (loc4) is the authors' mean curve plus ``shift`` and a per-network
    constant of mean zero: their mean growth over any window is the authors' exactly."""
    c = published.moment(experiment, "chi_loc4")
    noise = np.random.default_rng(seed).normal(size=(n, 1))
    noise -= noise.mean()
    lc = c.mean_log10[None, :] + shift + 0.05 * noise
    ones = np.ones_like(lc)
    return c.depth, {
        "chi_loc4": 10**lc,
        "reff_signal_loc4": ones,
        "reff_noise_loc4": ones,
        "mu4_signal_loc3": ones,
        "nu1_abs_signal_loc3": ones,
    }


def test_fc_rate_versus_authors_recovers_their_rate_and_an_offset():
    depth, arrays = _authors_fc_arrays("bn_ff_fc_64", shift=0.2)
    r = ch04.fc_rate_versus_authors(depth, arrays, batch=64, l_min=10, l_max=200)
    c = published.moment("bn_ff_fc_64", "chi_loc4")
    rate = (c.mean_log10[c.index(200)] - c.mean_log10[c.index(10)]) / 190
    assert r["batch"] == 64 and r["rate"].mean == pytest.approx(rate, rel=1e-9)
    assert r["end_offset"].mean == pytest.approx(0.2, abs=1e-9)
    # the margin: half the relative gap to the nearest other batch's rate (B = 128 here)
    rates = {
        b: published.late_published(f"bn_ff_fc_{b}", 10, 200)["log10_dchi"][0]
        for b in published.FC_BATCHES
    }
    assert r["neighbour"] == 128
    assert r["margin"] == pytest.approx(abs(rates[64] - rates[128]) / 2 / rates[64])
    # a batch of 32 is compared with the nearest published one
    assert ch04.fc_rate_versus_authors(depth, arrays, batch=32, l_min=10, l_max=200)["batch"] == 64


def _authors_batch_table(n_se=1e-6, **shift):
    rows = []
    for b in published.FC_BATCHES:
        e = published.bn_ff_endpoints(f"bn_ff_fc_{b}", 200)
        row = {"B": b}
        for k in ch04.BATCH_ENDPOINTS:
            row[k] = e[k][0] + shift.get(f"{k}_{b}", 0.0)
            row[f"se_{k}"] = n_se
        rows.append(row)
    return pd.DataFrame(rows)


def test_batch_levels_versus_authors_in_units_of_the_half_gap():
    same = ch04.batch_levels_versus_authors(_authors_batch_table(), n=200)
    for k in ch04.BATCH_ENDPOINTS:
        assert same[k]["deviation"].mean == pytest.approx(0.0, abs=1e-9)
        assert same[k]["batches"] == list(published.FC_BATCHES)
    # moving the kurtosis at B = 128 by exactly its half-gap gives a deviation of exactly 1
    kurt = {
        b: published.bn_ff_endpoints(f"bn_ff_fc_{b}", 200)["kurtosis"][0]
        for b in published.FC_BATCHES
    }
    half = ch04.nearest_half_gap(kurt, 128)
    moved = ch04.batch_levels_versus_authors(_authors_batch_table(kurtosis_128=half), n=200)
    assert moved["kurtosis"]["deviation"].mean == pytest.approx(1.0)
    lo, hi = moved["kurtosis"]["deviation"].interval
    # the simultaneous interval: ± t(1 − 0.01/8, 199) × (the authors' SE at B = 128) / half-gap
    se_128 = published.bn_ff_endpoints("bn_ff_fc_128", 200)["kurtosis"][1]
    width = sps.t.isf(0.01 / 8, 199) * math.hypot(se_128, 1e-6) / half
    assert (lo, hi) == pytest.approx((1.0 - width, 1.0 + width))
    # the no-batch-effect alternative: the B = 64 level at every batch, by hand
    expect = max(abs(kurt[64] - kurt[b]) / ch04.nearest_half_gap(kurt, b) for b in kurt)
    assert same["kurtosis"]["no_batch_effect"] == pytest.approx(expect)
    assert expect > 1.0  # the alternative is ruled out by the claim's margin
    with pytest.raises(ParameterError, match="none of the batches"):
        ch04.batch_levels_versus_authors(
            pd.DataFrame(
                {"B": [8], **{c: [1.0] for k in ch04.BATCH_ENDPOINTS for c in (k, f"se_{k}")}}
            ),
            n=4,
        )


def test_input_offset_table_separates_the_early_offset_from_the_growth():
    depth, arrays = _authors_fc_arrays("bn_ff_fc_64", shift=0.3)
    panels = {"chi": arrays["chi_loc4"]}
    t = ch04.input_offset_table({"patches": (depth, panels)}, "bn_ff_fc_64", l_early=12, l_end=200)
    assert list(t.index) == ["patches", "authors (CIFAR-10)"]
    assert t.loc["patches", "offset at l = 12"] == pytest.approx(0.3)
    assert t.loc["patches", "offset at l = 200"] == pytest.approx(0.3)
    assert t.loc["patches", "growth"] == pytest.approx(t.loc["authors (CIFAR-10)", "growth"])
    with pytest.raises(ParameterError, match="depth=11"):
        ch04.input_offset_table({"patches": (depth, panels)}, "bn_ff_fc_64", l_early=11, l_end=200)


def test_conv_comparison_table_sets_ours_beside_the_authors_with_their_own_errors():
    _, _, S = _conv_summary()
    end = published.bn_ff_endpoints("bn_ff_mnist")
    T = ch04.conv_comparison_table(S, end)
    assert list(T.index) == list(ch04.CONV_ROWS.values())
    row = T.loc[ch04.CONV_ROWS["dchi_late"]]
    # ours with our own error only; the authors' with theirs (the scorecard combines the two)
    assert row["ours"] == pytest.approx(S["dchi_late"].mean)
    assert row["± s.e."] == pytest.approx(S["dchi_late"].own_se)
    assert math.hypot(row["± s.e."], row["± s.e. (authors)"]) == pytest.approx(S["dchi_late"].se)
    kurt = T.loc[ch04.CONV_ROWS["kurtosis"]]
    assert kurt["authors"] == S["authors"]["levels"]["kurtosis"]
    assert kurt["± s.e. (authors)"] == S["authors_se"]["kurtosis"]
    assert (
        tuple(T.loc[ch04.CONV_ROWS["log10_chi_end"], ["authors", "± s.e. (authors)"]])
        == end["log10_chi"]
    )
    assert math.isnan(T.loc[ch04.CONV_ROWS["dbn_late"], "± s.e. (authors)"])  # not published


def test_fc_comparison_table_sets_ours_beside_the_authors_and_the_gaussian():
    inc = {
        k: Estimate(1.0 + i / 10, 0.01 * (i + 1), 7, 8)
        for i, k in enumerate(("dchi", "dbn", "dphi"))
    }
    last = {
        "reff_x": Estimate(10.0, 0.5, 7, 8),
        "reff_dx": Estimate(6.0, 0.25, 7, 8),
        "reff_gap": Estimate(4.0, 0.5, 7, 8),  # not a row of the table
        "kurtosis": Estimate(3.5, 0.125, 7, 8),
        "nu1": Estimate(0.78, None),
    }
    end = published.bn_ff_endpoints("bn_ff_fc_64")
    T = ch04.fc_comparison_table(inc, Estimate(18.0, 0.01, 7, 8), last, end)
    assert list(T.index) == list(ch04.FC_ROWS.values())
    assert list(T.columns) == ["ours", "± s.e.", "authors", "± s.e. (authors)", "Gaussian"]
    row = T.loc[ch04.FC_ROWS["dbn"]]
    assert (row["ours"], row["± s.e."]) == (1.1, 0.02) and math.isnan(row["authors"])
    for k in ("reff_x", "reff_dx", "kurtosis", "nu1", "log10_chi"):
        assert tuple(T.loc[ch04.FC_ROWS[k], ["authors", "± s.e. (authors)"]]) == end[k]
    assert T.loc[ch04.FC_ROWS["log10_chi"], "ours"] == 18.0
    assert math.isnan(T.loc[ch04.FC_ROWS["nu1"], "± s.e."])  # a single network: no error
    assert T.loc[ch04.FC_ROWS["kurtosis"], "Gaussian"] == labatie.GAUSS_KURTOSIS
    assert T.loc[ch04.FC_ROWS["nu1"], "Gaussian"] == pytest.approx(labatie.GAUSS_ABS_MEAN)
    assert T["Gaussian"].notna().sum() == 2


def test_batch_slope_table_fits_the_authors_arrays_as_ours():
    ours = {k: Estimate(float(i), 0.1 * (i + 1), 31, 32) for i, k in enumerate(ch04.BATCH_ROWS)}
    T = ch04.batch_slope_table(ours, 200)
    assert list(T.index) == list(ch04.BATCH_ROWS.values())
    assert list(T["ours"]) == [0.0, 1.0, 2.0, 3.0]
    assert list(T["± s.e."]) == pytest.approx([0.1, 0.2, 0.3, 0.4])
    # the authors': a straight line in log₂ B through their means, weighted by their errors
    B = np.array(published.FC_BATCHES, float)
    ends = [
        published.bn_ff_endpoints(f"bn_ff_fc_{b}", 200)["kurtosis"] for b in published.FC_BATCHES
    ]
    m, s = np.array(ends).T
    X = np.stack([np.ones_like(B), np.log2(B)], 1) / s[:, None]
    beta, *_ = np.linalg.lstsq(X, m / s, rcond=None)
    cov = np.linalg.inv(X.T @ X)
    kurt = T.loc[ch04.BATCH_ROWS["kurtosis"]]
    assert kurt["authors"] == pytest.approx(beta[1], rel=1e-10)
    assert kurt["± s.e. (authors)"] == pytest.approx(np.sqrt(cov[1, 1]), rel=1e-10)
    # the paper's direction in the authors' own arrays: fatter tails and a smaller χ with B
    assert kurt["authors"] > 0 and T.loc[ch04.BATCH_ROWS["log10_chi"], "authors"] < 0


# ---------------------------------------------------------------------------------------------
# The input, the reference configurations and the three controls
# ---------------------------------------------------------------------------------------------
def test_input_words_and_compared_inputs():
    assert ch04.input_words("cifar10:/data/x") == "CIFAR-10"
    assert ch04.compared_inputs("patches") == ["patches", "digits", "gaussian"]
    assert ch04.compared_inputs("gaussian") == ["gaussian", "patches", "digits"]
    assert ch04.compared_inputs("cifar10") == ["cifar10", "patches", "digits", "gaussian"]
    with pytest.raises(ParameterError, match="dataset='imagenet'"):
        ch04.input_words("imagenet")


def test_authors_configuration_of_the_conv_reference_and_the_fc_resnets():
    c = ch04.authors_configuration("bn_ff_mnist", epsilon=True)
    assert c == {"architecture": "BN feedforward, conv 3×3 periodic", "width": 512, "batch": 64,
                 "depth": 200, "input": "MNIST", "BN ε": 0.001}
    assert ch04.authors_configuration("bn_res_fc")["depth"] == "500 units of 2 layers"
    ours = ch04.configuration("bn_ff", 3, 512, 64, 200, "patches", epsilon=1e-3)
    pairs = ch04.side_by_side(ours, c)
    assert [k for k, (a, b) in pairs.items() if a != b] == ["input"]


def test_reference_control_applies_the_rule_to_the_authors_data():
    assert ch04.reference_control((10.0, 0.1), "rel", 10.0, 0.1, "x").passed
    # a margin tighter than the authors' own error cannot pass on their own data
    assert not ch04.reference_control((10.0, 0.5), "rel", 10.0, 0.01, "x").passed
    assert not ch04.reference_control((3.2, 0.0), "between", (13.0, 18.0), None, "x").passed


def test_estimator_control_catches_a_rule_that_cannot_fail():
    rng = np.random.default_rng(1)
    values = 10 + rng.standard_normal(24)
    good = ch04.estimator_control(values, "rel", 10.0, 0.1, 10.0, 13.0, reference_se=0.05)
    assert good.kind == "estimator" and good.passed
    # a margin so wide that a 30 % shift still passes: the control fails
    wide = ch04.estimator_control(values, "rel", 10.0, 1.0, 10.0, 13.0, reference_se=0.05)
    assert not wide.passed and "13: pass" in wide.note


def test_conditions_control_passes_only_when_every_difference_is_measured_harmless():
    from layerwise.stats import Estimate

    ours, theirs = {"input": "photo patches", "width": 512}, {"input": "CIFAR-10", "width": 512}
    small = Estimate(0.01, 0.005, 20, 21)
    big = Estimate(1.0, 0.1, 20, 21)
    assert ch04.conditions_control(ours, theirs, {"input": small}, 0.1).passed
    assert not ch04.conditions_control(ours, theirs, {"input": big}, 0.1).passed
    assert not ch04.conditions_control(ours, theirs, {"input": None}, 0.1).passed
    assert ch04.conditions_control(theirs, theirs, {}, 0.1).passed


def test_input_difference_needs_two_networks_each():
    e = ch04.input_difference([1.0, 2.0, 3.0], [0.0, 1.0])
    assert e.mean == pytest.approx(1.5) and e.dof == 1
    assert ch04.input_difference([1.0], [0.0, 1.0]) is None


def test_conv_variant_table_reference_is_the_periodic_mnist_variant():
    v = ch04.conv_variant_values(150, 200)
    ours = {"a": {k: np.array([v["bn_ff_mnist"][k][0]] * 2) for k in ch04.VARIANT_ROWS},
            "b": {k: np.array([v["bn_ff_mnist"][k][0]] * 2) for k in ch04.VARIANT_ROWS}}
    T = ch04.conv_variant_table(ours, v)
    assert np.allclose(T["input (ours)"], 0.0)
    # the authors' periodic pair (MNIST, CIFAR-10 ε = 0) agree on the late rate within 1 %;
    # zero padding moves it by about −4 %
    rate = T.loc[ch04.VARIANT_ROWS["log10_dchi"]]
    assert abs(rate["MNIST − CIFAR-10, periodic"]) < 0.01
    assert rate["zero padding − periodic, CIFAR-10"] == pytest.approx(-0.04, abs=0.01)
    # the variants are named in words on the page, not by their arrays' names
    assert not any("_" in c for c in T.columns)


