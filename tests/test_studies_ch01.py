"""Chapter 1's study (layerwise.studies.ch01): its runs reproduce the science functions they loop
over, and its summaries return the numbers and Estimates the chapter grades."""

from __future__ import annotations

import math

import numpy as np
import pytest

from layerwise import capacity as cap
from layerwise import layer as lay
from layerwise.chapter import Chapter
from layerwise.params import ParameterError
from layerwise.stats import Estimate, mean_se
from layerwise.studies import ch01 as study


def test_stream_draws_what_the_chapter_draws(tmp_path):
    ch = Chapter("42_demo", scale="ci", seed=3, device="cpu", results=tmp_path)
    for keys in [("nu", 2), ("emp", 1, 0), ("pseudo_random_layer",), ("fixed_P", "iid", 3, 0)]:
        assert np.array_equal(study.stream(3, *keys).random(5), ch.rng(*keys).random(5))
    assert not np.array_equal(
        study.stream(3, "nu", 1).random(3), study.stream(3, "nu", 2).random(3)
    )


def test_nu_table_rows_are_the_monte_carlo_of_each_case_and_eq13():
    cases = [["relu", None], ["leaky_relu", 0.5], ["abs", None]]
    kw = dict(cases=cases, n=16, m=4, n_samples=4000, seed=1)
    T = np.concatenate([study.nu_table_unit(k, **kw)["table"] for k in range(len(cases))])
    assert T.shape == (3, 5)
    for k, (name, slope) in enumerate(cases):
        r = cap.nu_monte_carlo(
            name, n=16, m=4, n_samples=4000, rng=study.stream(1, "nu", k), slope=slope
        )
        assert T[k, :4].tolist() == [r["nu"].mean, r["nu"].se, r["diag"].mean, r["diag"].se]
        assert T[k, 4] == cap.nu_closed_form(name, slope)
        assert (
            abs(T[k, 0] - T[k, 4]) < 5 * T[k, 1] + 1e-12
        )  # the idealised setting: Eq. 13 is exact


def test_footnote3_pooled_ratio_is_the_inverse_variance_mean():
    ns = np.array([8.0, 16.0, 32.0])
    closed = 1.0 / ns
    ratios, ses = np.array([1.1, 0.9, 1.0]), np.array([0.1, 0.2, 0.05])
    rows = np.column_stack([ns, ratios * closed, ses * closed, closed])
    e = study.footnote3_pooled_ratio(rows)
    w = 1 / ses**2
    assert e.mean == pytest.approx((w * ratios).sum() / w.sum(), rel=1e-12)
    assert e.se == pytest.approx(w.sum() ** -0.5, rel=1e-12)
    assert e.dof > 9  # pooled over three n with 9 d.o.f. each
    ones = np.column_stack([ns, closed, ses * closed, closed])
    assert study.footnote3_pooled_ratio(ones).mean == pytest.approx(1.0)


def test_pseudo_random_layer_capacities_conserve_the_total():
    R = study.pseudo_random_layer_capacities(n=4, m=6, p=3, sizes=[200, 800], reps=2, seed=0)
    assert R["kappa"].shape == (2, 2, 4)
    np.testing.assert_allclose(R["kappa"].sum(-1), 3.0, atol=1e-9)  # trace of a rank-p projector
    assert R["kappa_eq25"].sum() == pytest.approx(3.0, abs=1e-9)
    np.testing.assert_allclose(
        R["kappa_eq25"], cap.pseudo_random_capacities(R["P"], cap.feature_capacities(R["J"]))
    )


def test_capacity_convergence_recovers_a_known_rate():
    sizes = [100, 400, 1600, 6400]
    ref = np.array([1.0, 2.0, 2.0])
    direction = np.array([[0.6, 0.8, 0.0], [0.0, 0.6, -0.8]])  # unit norm per replicate
    kappa = ref + np.array([[3.0 * N**-0.5 * d for d in direction] for N in sizes])
    R = study.capacity_convergence(kappa, ref, sizes)
    np.testing.assert_allclose(
        R["errors"], 3.0 * np.array(sizes, float)[:, None] ** -0.5 * np.ones((1, 2))
    )
    assert R["fit"]["slope"] == pytest.approx(-0.5, abs=1e-12)
    assert R["slope"].dof == 4 * 2 - 2  # every replicate is a point of the fit
    assert (R["slope"].mean, R["slope"].se) == (R["fit"]["slope"], R["fit"]["slope_se"])
    assert R["error_last"].mean == pytest.approx(3.0 / 80) and R["error_last"].dof == 1
    np.testing.assert_allclose([e.mean for e in R["kappa_last"]], kappa[-1].mean(0))
    np.testing.assert_allclose([e.se for e in R["kappa_last"]], mean_se(kappa[-1])[1])


def test_smooth_nu_table_against_the_gelu_closed_form():
    qs = np.array([0.1, 1.0])
    kw = dict(names=["gelu"], qs=qs, n=500, m=4, n_samples=20000, seed=0)
    rows = np.concatenate([study.smooth_nu_unit(u, **kw)["rows"] for u in range(len(qs))])
    T = study.assemble_smooth_nu(rows, ["gelu"])["gelu"]
    assert np.array_equal(T[:, 0], qs)
    for q, nu, se in T:
        assert abs(nu - cap.nu_gelu_closed_form(q)) < 5 * se + 0.01


def test_ratios_at_stacks_each_case_at_one_input_size():
    fix = {f"ratios_{k}": np.arange(24.0).reshape(2, 3, 4) + 100 * k for k in range(3)}
    R = study.ratios_at(fix, 3, 1)
    assert R.shape == (3, 12)
    np.testing.assert_array_equal(R[2], np.arange(12.0, 24.0) + 200)
    with pytest.raises(ParameterError, match="n_cases"):
        study.ratios_at(fix, 0, 1)


def test_layer_mean_ratio_is_the_estimate_over_layer_means():
    # layer means 0, 1, 2, 3 (each layer's pairs scatter symmetrically about its mean)
    ratios = np.array([[m - 0.5, m + 0.5] for m in range(4)], float)
    e = study.layer_mean_ratio(ratios)
    assert e.mean == pytest.approx(1.5)
    assert e.se == pytest.approx(math.sqrt(5 / 3) / 2)  # sample SD of 0..3 over √4
    assert e.dof == 3
    with pytest.raises(ParameterError, match="layers, pairs"):
        study.layer_mean_ratio(np.ones(5))


def test_ratio_spread_closed_form():
    s = study.ratio_spread(np.array([[1.0, 2.0], [3.0, 4.0]]))
    assert s == pytest.approx({"lo": 1.0, "hi": 4.0, "sd": math.sqrt(1.25)})
    with pytest.raises(ParameterError):
        study.ratio_spread(np.array([]))


def test_deviation_fits_recover_the_one_over_root_n_law():
    ns = np.array([4.0, 16.0, 64.0, 256.0])
    nu = cap.nu_closed_form("relu")
    dev = 0.3 / np.sqrt(ns)[:, None, None] * np.array([1.0, -1.0])  # r_ij − ν = ±0.3/√n exactly
    fix = {"ns": ns, "ratios_0": nu + np.broadcast_to(dev, (4, 3, 2)), "noise_0": np.zeros((4, 3))}
    out = study.deviation_fits(fix, [["relu", None]], {0: "relu"}, n_min=9)
    np.testing.assert_allclose(
        out["relu"]["rms"], np.broadcast_to(0.3 / np.sqrt(ns)[:, None], (4, 3))
    )
    assert out["relu"]["fit"]["slope"] == pytest.approx(-0.5)
    assert out["relu"]["slope"].dof == 3 * 3 - 2  # n ≥ 9: three sizes × three layers
    slope = out["relu"]["slope"]
    assert (slope.mean, slope.se, slope.dof) == (
        out["relu"]["fit"]["slope"],
        out["relu"]["fit"]["slope_se"],
        7,
    )


def test_footnote3_pooled_recovers_a_constant_ratio_per_norm():
    ns = np.array([8.0, 16.0, 32.0])
    form = 1.0 / ns
    rows = np.column_stack(
        [ns, 1.1 * form, 0.01 * form, form, 0.9 * np.ones(3), 0.02 * np.ones(3), np.ones(3)]
    )
    out = study.footnote3_pooled({"rows_0": rows, "rows_1": rows}, 2)
    assert len(out) == 2 and all(set(o) == {"frobenius", "direction"} for o in out)
    assert isinstance(out[0]["frobenius"], Estimate)
    assert out[0]["frobenius"].mean == pytest.approx(1.1)
    assert out[1]["direction"].mean == pytest.approx(0.9)
    assert out[0]["direction"].se == pytest.approx(0.02 / math.sqrt(3))  # three equal SEs pooled


def test_capacity_gap_and_prose_numbers_closed_forms():
    draws, n = 3, 4
    d14 = np.zeros((2, 2, draws))
    d14[0, 1] = [3.0, 4.0, 5.0]
    dist = {"d_eq14": d14, "d_exact": np.ones((2, 2, draws)), "span": np.full((2, 2, draws), 2.0)}
    g = study.capacity_gap(dist, 0, 1)
    assert (g.mean, g.dof) == (pytest.approx(3.0), 2) and g.se == pytest.approx(1 / math.sqrt(3))
    # a curve κ(ν) on 5 grid points that runs ¼ of its length between ν = 0 and ½ (index 2)
    curve = np.zeros((2, draws, 5, n))
    curve[:, :, :, 0] = np.array([0.0, 0.5, 1.0, 2.0, 4.0])
    res = {
        "nus": np.linspace(0.0, 1.0, 5),
        "curve": curve,
        "emp": np.zeros((2, 2, draws, n)),
        "eq25": np.zeros((2, draws, n)),
    }
    res["eq25"][..., 1] = 0.5  # ‖(0, ½, 0, 0)‖ = ½ from the ν = 0 end
    out = study.capacity_prose_numbers(res, dist)
    assert out["d14"][0, 1] == pytest.approx(2.0)  # mean of (3, 4, 5)/2
    assert out["dex"][0, 0] == pytest.approx(0.5)
    assert out["dlin"][1, 0] == pytest.approx(2.0)  # ‖κ(1)‖ = 4, span 2
    assert out["arc_half"][0] == pytest.approx(0.25)
    assert out["eq25_patch_gap"] == pytest.approx(0.25)
    one_kind = {k: np.asarray(v)[:1] for k, v in res.items() if k != "nus"} | {"nus": res["nus"]}
    with pytest.raises(ParameterError, match="two"):
        study.capacity_prose_numbers(one_kind, dist)


def test_redundancy_counts_of_appendix_a():
    cases = [["linear", None], ["relu", None], ["leaky_relu", 0.2], ["abs", None], ["tanh", None]]
    table = np.array([[12, 12], [4, 4], [4, 4], [4, 4], [0, 4]])
    r = lay.redundancy_counts(table, cases, 4)
    assert (r["relu_type_mismatch"], r["tanh_excess"], r["linear_true"], r["tanh_aug"]) == (
        0,
        4,
        12,
        4,
    )
    table[2] = [4, 6]  # a leaky ReLU mismatch of 2
    assert lay.redundancy_counts(table, cases, 4)["relu_type_mismatch"] == 2
    with pytest.raises(ParameterError, match="tanh"):
        lay.redundancy_counts(table[:4], cases[:4], 4)


def test_paired_ratio_closed_form_and_delta_method():
    b = np.array([1.0, 2.0, 3.0, 4.0])
    r = study.paired_ratio(3 * b, b)
    assert (r.mean, r.se, r.dof, r.n) == (pytest.approx(3.0), pytest.approx(0.0), 3, 4)
    rng = np.random.default_rng(0)
    a, b = 2 + rng.standard_normal(20000), 4 + rng.standard_normal(20000)
    r = study.paired_ratio(a, b)  # independent: SE ≈ R·√(1/4 + 1/16)/√N
    assert r.mean == pytest.approx(0.5, abs=0.01)
    assert r.se == pytest.approx(0.5 * math.sqrt(1 / 4 + 1 / 16) / math.sqrt(20000), rel=0.05)
    with pytest.raises(ParameterError, match="paired"):
        study.paired_ratio(a[:3], b[:4])


def _fake_fix(ratios, law, nu_shift=0.0):
    ratios = np.asarray(ratios, float)
    return {
        "ns": np.array([16.0, 64.0]),
        "ratios_0": ratios + nu_shift,
        "law_0": np.asarray(law, float),
        "noise_0": np.zeros(ratios.shape[:2]),
    }


def test_law_summary_is_zero_on_the_law_and_one_at_the_idealisation():
    rng = np.random.default_rng(1)
    law = 0.5 + 0.1 * rng.standard_normal((2, 5, 6))
    cases = [["relu", None]]
    on_law = study.law_summary(_fake_fix(law, law), cases, [0])
    assert on_law["0"].mean == pytest.approx(0.0) and on_law["pooled"].mean == pytest.approx(0.0)
    # ratios at ν + the deviation the law predicts with the opposite sign: residual 4× ideal
    flipped = study.law_summary(_fake_fix(1.0 - law, law), cases, [0])
    assert flipped["0"].mean == pytest.approx(4.0)
    # ratios exactly ν: the law's residual equals the idealisation's deviation of the law itself
    ideal = study.law_residuals(_fake_fix(np.full_like(law, 0.5), law), 0, 0.5)
    assert np.allclose(ideal["ideal"], 0.0)


def test_spread_against_exact_is_one_for_ratios_with_the_exact_spread():
    cases = [["relu", None]]
    ns = [16, 64]
    sd = [
        math.sqrt(lay_spread) for lay_spread in (study.layer.pair_law_spread(n, "relu") for n in ns)
    ]
    # six pairs at ν ± sd: mean square sd² exactly
    r = np.stack([np.tile(0.5 + s * np.array([1, -1, 1, -1, 1, -1.0]), (5, 1)) for s in sd])
    e = study.spread_against_exact(_fake_fix(r, r), cases, 0)
    assert e.mean == pytest.approx(1.0) and e.n == 10
    assert study.spread_against_exact(_fake_fix(r, r), cases, 0, n_min=32).n == 5


def test_capacity_gap_vs_width_is_zero_for_a_linear_layer_and_positive_for_relu():
    out = study.capacity_gap_vs_width(
        cases=[["linear", None], ["relu", None]], ns=[9, 16], m=4, p=3, draws=2, seed=0
    )
    assert out["gap"].shape == (2, 2, 2)
    assert np.allclose(out["gap"][0], 0.0, atol=1e-9)  # exact Σ̃ of a linear layer is Eq. 10
    assert np.all(out["gap"][1] > 1e-3)
    with pytest.raises(ParameterError, match="m="):
        study.capacity_gap_vs_width(cases=[["relu", None]], ns=[9], m=1, p=3, draws=2, seed=0)


def test_width_trend_recovers_a_known_exponent():
    ns = np.array([16.0, 64.0, 256.0])
    rng = np.random.default_rng(2)
    gap = 0.3 * ns[:, None] ** -0.5 * np.exp(0.01 * rng.standard_normal((3, 8)))
    t = study.width_trend(gap, ns)
    assert t["slope"].mean == pytest.approx(-0.5, abs=0.02) and t["slope"].dof == 22
    assert np.allclose(t["mean"], gap.mean(1))
    last = gap[-1]  # the gap at the largest n over the 8 draws, by hand
    assert t["last"].mean == pytest.approx(last.sum() / 8)
    assert t["last"].se == pytest.approx(math.sqrt(((last - last.mean()) ** 2).sum() / 7 / 8))


def test_appendix_a_trees_and_their_summary():
    cases = [["linear", None], ["relu", None], ["leaky_relu", 0.2], ["abs", None], ["tanh", None]]
    table = study.appendix_a_trees(
        cases=cases, architectures=[[2, 2], [3, 2]], n_inputs=200, seed=0
    )["table"]
    assert table[:, 0, 0].tolist() == [6, 12] and table[:, 0, 1].tolist() == [2, 3]
    s = study.tree_summary(table, cases)
    assert s["expected"] == [4, 9]
    assert s["leaky_relu_true"] == s["leaky_relu_aug"] == s["abs_true"] == [4, 9]
    assert s["tanh_true"] == [6, 12] and s["tanh_aug"] == [4, 9]
    assert (s["pl_match"], s["pl_cases"]) == (6, 6)


def test_nu_units_through_the_chapter_seam_give_the_table(tmp_path):
    """The units are independent (each its own stream): run through ``Chapter.cached_units`` (here
    or on a cluster), in any order, they give the rows of the one-call table."""
    from layerwise import capacity
    from layerwise.chapter import Chapter
    from layerwise.seeds import stream

    cases = [["relu", None], ["leaky_relu", 0.2], ["abs", None]]
    kw = dict(cases=cases, n=16, m=4, n_samples=500, seed=3)
    table = np.concatenate([study.nu_table_unit(k, **kw)["table"] for k in range(len(cases))])
    ch = Chapter("01_layer_decoupling", scale="ci", seed=3, results=tmp_path)
    via_seam = ch.cached_units(study.nu_table_unit, len(cases), **kw)["table"]
    assert np.array_equal(via_seam, table)
    backwards = [study.nu_table_unit(k, **kw)["table"][0] for k in reversed(range(len(cases)))]
    assert np.array_equal(np.array(backwards[::-1]), table)
    r = capacity.nu_monte_carlo(
        "leaky_relu", n=16, m=4, n_samples=500, rng=stream(3, "nu", 1), slope=0.2
    )  # case 1 by hand
    assert (table[1, 0], table[1, 1]) == (r["nu"].mean, r["nu"].se)


def test_smooth_nu_units_assemble_per_name(tmp_path):
    from layerwise.chapter import Chapter

    qs = np.array([0.1, 1.0])
    kw = dict(names=["gelu", "tanh"], qs=qs, n=200, m=4, n_samples=400, seed=0)
    units = [study.smooth_nu_unit(u, **kw)["rows"] for u in range(4)]
    direct = study.assemble_smooth_nu(np.concatenate(units), kw["names"])
    ch = Chapter("01_layer_decoupling", scale="ci", seed=0, results=tmp_path)
    rows = ch.cached_units(study.smooth_nu_unit, 4, **kw)["rows"]
    seam = study.assemble_smooth_nu(rows, kw["names"])
    for name in kw["names"]:
        assert np.array_equal(seam[name], direct[name])
        assert np.array_equal(seam[name][:, 0], qs)


def test_odd_weight_of_the_activations():
    assert cap.odd_weight("abs") == pytest.approx(0.0, abs=1e-12)
    assert cap.odd_weight("relu") == pytest.approx(1.0)
    assert cap.odd_weight("leaky_relu", 0.5) == pytest.approx(3.0)


def test_odd_part_enters_the_pair_moment_with_that_weight():
    """E[η_iη_j] for independent z_i, z_j with P(z > 0) = p: ν + (β²−α²)/4·2(2p − 1) +
    ((β−α)/2)²(2p − 1)², brute force over the four orthants."""
    for name, slope in (("relu", None), ("leaky_relu", 0.5), ("abs", None)):
        alpha, beta = cap.eta_levels(name, slope)
        for p in (0.5, 0.6):
            brute = sum(
                (beta if a else alpha)
                * (beta if b else alpha)
                * (p if a else 1 - p)
                * (p if b else 1 - p)
                for a in (0, 1)
                for b in (0, 1)
            )
            s = 2 * p - 1
            odd = (beta - alpha) ** 2 / 4 * cap.odd_weight(name, slope) * 2 * s
            want = cap.nu_closed_form(name, slope) + odd + (beta - alpha) ** 2 / 4 * s * s
            assert brute == pytest.approx(want, rel=1e-12)


def test_difference_of_independent_estimates():
    d = study.difference(Estimate(3.0, 0.3, 10, 11), Estimate(1.0, 0.4, 20, 21))
    assert d.mean == 2.0 and d.se == pytest.approx(0.5)


def test_capacity_gap_vs_units_stacks_the_width_runs():
    cases = [["relu", None]]
    U = study.capacity_gap_vs_units(cases=cases, n=16, ms=[4, 8], p=3, draws=2, seed=1)
    assert U["gap"].shape == (1, 2, 2)
    W = study.capacity_gap_vs_width(cases=cases, ns=[16], m=8, p=3, draws=2, seed=1)
    np.testing.assert_allclose(U["gap"][:, 1], W["gap"][:, 0])
    with pytest.raises(ParameterError, match="ms="):
        study.capacity_gap_vs_units(cases=cases, n=16, ms=[4], p=3, draws=2, seed=1)
