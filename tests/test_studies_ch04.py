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


def test_batch_endpoints_means_and_errors():
    rng = np.random.default_rng(4)
    runs = {
        B: {k: rng.uniform(1, 9, (6, 3)) for k in ("chi", "kurt_z", "reff_x", "reff_dx")}
        for B in (16, 32)
    }
    T = ch04.batch_endpoints(runs)
    assert list(T) == ["log10_chi", "kurtosis", "reff_x", "reff_dx"]
    assert all(list(by_batch) == [16, 32] for by_batch in T.values())
    v = np.log10(runs[32]["chi"][:, -1])
    assert T["log10_chi"][32].mean == pytest.approx(v.mean())
    assert T["log10_chi"][32].se == pytest.approx(v.std(ddof=1) / math.sqrt(6))
    assert (T["log10_chi"][32].dof, T["log10_chi"][32].n) == (5, 6)
    assert T["reff_dx"][16].mean == pytest.approx(runs[16]["reff_dx"][:, -1].mean())


def test_batch_findings_reads_ratios_and_trends():
    def table(rx, rdx):
        means = {
            "log10_chi": [16.0, 15.0, 14.0],
            "kurtosis": [2.5, 2.8, 2.9],
            "reff_x": rx,
            "reff_dx": rdx,
        }
        return {
            k: {b: Estimate(m, 0.1) for b, m in zip((16, 64, 256), v, strict=True)}
            for k, v in means.items()
        }

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
    decades = D["decades"]  # log₁₀ δχ per layer, an estimate over the 4 networks
    assert [decades[ds].mean for ds in rates] == pytest.approx(list(rates.values()))
    assert decades["digits"].se == pytest.approx(np.std(wiggle, ddof=1) / 2)
    assert decades["digits"].dof == 3
    ref = stats.relative_spread(  # the spread of the natural-log rates, networks − 1 d.o.f.
        pd.Series({ds: e.mean * math.log(10) for ds, e in decades.items()}),
        pd.Series({ds: e.se * math.log(10) for ds, e in decades.items()}),
        dof=3,
        seed=0,
    )
    assert D["spread"].interval[0] < D["spread"].interval[1] and D["spread"] == ref
    assert set(D["arrays"]) == {f"{ds}_{k}" for ds in rates for k in ("chi", "reff_x")}
    assert np.allclose(D["arrays"]["digits_chi"], D["runs"]["digits"][1]["chi"].mean(0))
    last = D["last"]["gaussian"]  # means over networks at the last record
    assert last["log10_chi"] == pytest.approx(0.12 * 40)
    assert (last["reff_x"], last["kurtosis"]) == (3.0, 3.0)
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
    assert S["b_max"] == 128 and list(S["levels"]["kurtosis"]) == list(Bs)
    assert list(S["arrays"]) == ["B"] + [
        c for k in ch04.BATCH_ENDPOINTS for c in (k, f"se_{k}")
    ]  # the figure's data: each level's means and standard errors by batch
    assert list(S["arrays"]["B"]) == list(Bs)
    assert list(S["arrays"]["se_reff_x"]) == [S["levels"]["reff_x"][b].se for b in Bs]
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
    ends = {b: published.bn_ff_endpoints(f"bn_ff_fc_{b}", 200) for b in published.FC_BATCHES}
    return {
        k: {
            b: Estimate(e[k][0] + shift.get(f"{k}_{b}", 0.0), n_se, 199, 200)
            for b, e in ends.items()
        }
        for k in ch04.BATCH_ENDPOINTS
    }


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
    # with our levels exact, the upper end the authors' errors alone leave
    alone = sps.t.isf(0.01 / 8, published.FC_BATCH_NETS - 1) * se_128 / half
    assert moved["kurtosis"]["upper_theirs_alone"] == pytest.approx(1.0 + alone)
    few = ch04.batch_levels_versus_authors(_authors_batch_table(kurtosis_128=half), n=8)
    assert few["kurtosis"]["upper_theirs_alone"] == pytest.approx(1.0 + alone)  # their d.o.f.
    # a level exactly on the bound: the authors' errors alone straddle it, whatever ours
    assert moved["kurtosis"]["ours_cannot_decide"] and few["kurtosis"]["ours_cannot_decide"]
    assert not same["kurtosis"]["ours_cannot_decide"]  # on their level: decidable
    far = ch04.batch_levels_versus_authors(_authors_batch_table(kurtosis_128=3 * half), n=200)
    assert not far["kurtosis"]["ours_cannot_decide"]  # three half-gaps off: decidable (a fail)
    for k in ch04.BATCH_ENDPOINTS:  # never above the interval that adds our errors
        assert same[k]["upper_theirs_alone"] <= same[k]["deviation"].interval[1]
    # the no-batch-effect alternative: the B = 64 level at every batch, by hand
    expect = max(abs(kurt[64] - kurt[b]) / ch04.nearest_half_gap(kurt, b) for b in kurt)
    assert same["kurtosis"]["no_batch_effect"] == pytest.approx(expect)
    assert expect > 1.0  # the alternative is ruled out by the claim's margin
    with pytest.raises(ParameterError, match="none of the batches"):
        ch04.batch_levels_versus_authors(
            {k: {8: Estimate(1.0, 1.0)} for k in ch04.BATCH_ENDPOINTS}, n=4
        )


def test_chi_levels_separate_the_early_offset_from_the_growth():
    depth, arrays = _authors_fc_arrays("bn_ff_fc_64", shift=0.3)
    panels = {"chi": arrays["chi_loc4"]}
    t = ch04.chi_levels({"patches": (depth, panels)}, "bn_ff_fc_64", l_early=12, l_end=200)
    assert list(t) == ["patches", "authors"]
    assert t["patches"] - t["authors"] == pytest.approx([0.3, 0.3])  # the same offset at both
    c = published.moment("bn_ff_fc_64", "chi_loc4")
    assert t["authors"][1] == c.mean_log10[c.index(200)]
    with pytest.raises(ParameterError, match="l_early=11"):
        ch04.chi_levels({"patches": (depth, panels)}, "bn_ff_fc_64", l_early=11, l_end=200)


def test_fig4_conv_summary_gives_the_authors_levels_with_their_own_errors():
    _, _, S = _conv_summary()
    theirs = published.late_published("bn_ff_mnist", 150, 200)
    for k in published.FIG4_LATE:
        assert S["authors_levels"][k] == Estimate(*theirs[k])
        assert S["authors_levels"][k].mean == S["authors"]["levels"][k]
    # our own error and the authors' make the scorecard's combined one
    dchi = S["dchi_late"]
    assert math.hypot(dchi.own_se, dchi.reference_se) == pytest.approx(dchi.se)


def test_authors_batch_slopes_fit_the_authors_arrays_as_ours():
    T = ch04.authors_batch_slopes(200)
    assert list(T) == list(ch04.BATCH_ENDPOINTS)
    # the authors': a straight line in log₂ B through their means, weighted by their errors
    B = np.array(published.FC_BATCHES, float)
    ends = [
        published.bn_ff_endpoints(f"bn_ff_fc_{b}", 200)["kurtosis"] for b in published.FC_BATCHES
    ]
    m, s = np.array(ends).T
    X = np.stack([np.ones_like(B), np.log2(B)], 1) / s[:, None]
    beta, *_ = np.linalg.lstsq(X, m / s, rcond=None)
    cov = np.linalg.inv(X.T @ X)
    assert T["kurtosis"].mean == pytest.approx(beta[1], rel=1e-10)
    assert T["kurtosis"].se == pytest.approx(np.sqrt(cov[1, 1]), rel=1e-10)
    # the paper's direction in the authors' own arrays: fatter tails and a smaller χ with B
    assert T["kurtosis"].mean > 0 and T["log10_chi"].mean < 0


def test_conv_variant_values_reference_is_the_periodic_mnist_variant():
    v = ch04.conv_variant_values(150, 200)
    assert set(v) == set(published.BN_FF_CONV_VARIANTS) and ch04.CONV_REFERENCE in v
    assert set(v[ch04.CONV_REFERENCE]) == set(ch04.VARIANT_KEYS)
    late = published.late_published("bn_ff_zero_padding", 150, 200)
    assert v["bn_ff_zero_padding"]["nu1"] == Estimate(*late["nu1"])
    end = published.bn_ff_endpoints("bn_ff_epsilon", 200)["log10_chi"]
    assert v["bn_ff_epsilon"]["log10_chi_end"] == Estimate(*end)
    # the authors' periodic pair (MNIST, CIFAR-10 ε = 0) agree on the late rate within 1 %;
    # zero padding moves it by about −4 %
    rate = {k: e["log10_dchi"].mean for k, e in v.items()}
    ref = abs(rate["bn_ff_mnist"])
    assert abs(rate["bn_ff_mnist"] - rate["bn_ff_epsilon"]) / ref < 0.01
    assert (rate["bn_ff_zero_padding"] - rate["bn_ff_epsilon"]) / ref == pytest.approx(
        -0.04, abs=0.01
    )
