"""Chapter 2's study (layerwise.studies.ch02): its runs reproduce the simulations of
layerwise.diffusion they loop over, and its summaries return the numbers and Estimates the chapter
grades."""

from __future__ import annotations

import math

import numpy as np
import pytest

from layerwise import differential, diffusion
from layerwise.claims import quantile
from layerwise.params import ParameterError
from layerwise.stats import Estimate
from layerwise.studies import ch02 as study


def _walk(ring, L, D):
    return diffusion.capacity_network(
        [diffusion.residual_layer(ring, 1.0 / L, D, D)] * L, np.eye(ring)[ring // 2]
    )


def test_residual_diffusion_profiles_conserve_capacity():
    R = study.residual_diffusion_profiles(ring=21, layers=10, a_lo=0.2, a_hi=0.6, envs=3, seed=0)[
        "profiles"
    ]
    assert R.shape == (3, 11, 21) and R.dtype == np.float32
    np.testing.assert_allclose(R.sum(-1), 1.0, atol=1e-5)
    assert R[0, 0, 10] == 1.0


def test_residual_diffusion_summary_of_the_averaged_walk_itself():
    ring, L, D = 101, 40, 3.0
    prof = np.stack([_walk(ring, L, D)] * 3)
    S = study.residual_diffusion_summary(prof, D)
    np.testing.assert_allclose(S["k_avg"], prof[0, -1], atol=1e-15)
    assert S["noise_l1"] == pytest.approx(0.0, abs=1e-14)
    assert S["drift_rel"] == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(S["slope_net"], 1.0, rtol=1e-10)  # m2 = 2𝒟εk exactly
    np.testing.assert_allclose(S["m2"][0], 2 * D * np.arange(L + 1) / L, rtol=1e-10, atol=1e-13)
    assert 0 < S["l1"] < 2 * S["edge"]


def test_erf_width_fit_of_three_tap_walks_has_exponent_one_half():
    depths, length = [2, 4, 8], 64
    g2 = []
    for d in depths:
        p = np.zeros(length)
        p[length // 2] = 1.0
        for _ in range(d):
            p = (np.roll(p, -1) + p + np.roll(p, 1)) / 3
        g2.append(np.stack([p, 2 * p]))  # two "networks"
    V, fit = study.erf_width_fit(g2, depths)
    np.testing.assert_allclose(
        V, np.array(depths, float)[:, None] * 2 / 3 * np.ones((1, 2)), rtol=1e-12
    )
    assert fit.mean == pytest.approx(0.5, abs=1e-12) and fit.se == pytest.approx(0.0, abs=1e-12)


def test_chapter2_gradient_runs_are_the_conv_net_runs_of_their_streams():
    kw = dict(depths=[2], channels=2, length=8, inputs=8, nets=1, res_scale=1.0, seed=0)
    units = [study.erf_unit(u, **kw) for u in range(2)]
    E = study.assemble_erf({k: np.concatenate([u[k] for u in units]) for k in ("g2", "pred")}, [2])
    r = diffusion.conv_net_gradients(
        arch="residual",
        activation="relu",
        depth=2,
        channels=2,
        length=8,
        n_inputs=8,
        n_nets=1,
        seed=study.stream_seed(0, "erf", "residual", 2),
    )
    assert set(E) == {"plain_2_g2", "plain_2_pred", "residual_2_g2", "residual_2_pred"}
    np.testing.assert_array_equal(E["residual_2_g2"], r["g2"])
    R = study.pseudo_random_gradients(
        depth=2, channels=2, length=8, inputs=8, nets=1, res_scale=1.0, seed=0
    )
    # the same networks for both activations: the capacity network does not depend on η
    np.testing.assert_array_equal(R["plain_pseudo_random_pred"], R["plain_relu_pred"])


def test_gradient_total_ratios():
    tot = np.array([[1.0, 3.0], [2.0, 2.0]])
    pred = np.array([[0.5, 1.5], [1.0, 3.0]])
    est = study.gradient_total_ratios(tot, pred)
    assert [e.mean for e in est] == pytest.approx([1.0, 0.5])
    assert est[0].se == pytest.approx(0.5) and est[1].se == 0.0


def test_largest_deviation_interval_is_the_hull_of_folded_intervals():
    ests = [Estimate(1.2, 0.01, 10, 11), Estimate(0.9, 0.01, 10, 11)]
    q = quantile(1 - 0.01 / 2, 10)
    e = study.largest_deviation_interval(ests, 0.99)
    assert (*e.interval, e.mean) == pytest.approx((0.2 - q * 0.01, 0.2 + q * 0.01, 0.2))
    assert e.se is None and e.n == 2
    # straddles 0: lower end 0
    e = study.largest_deviation_interval([Estimate(1.0, 0.01, 10, 11)], 0.99)
    assert e.interval[0] == 0.0 and e.interval[1] == pytest.approx(quantile(0.99, 10) * 0.01)
    assert e.mean == 0.0


def test_straight_path_curves_laws():
    Ls = np.array([2, 5, 20, 100])
    W = study.straight_path_curves(Ls, seed=0)
    np.testing.assert_allclose(W["w_plain3"], 3.0**-Ls, rtol=1e-12)
    np.testing.assert_allclose(W["w_plain5"], 5.0**-Ls, rtol=1e-12)
    assert np.all(np.abs(W["w_res"] / W["w_res_pred"] - 1) <= np.exp(2.25 / Ls) - 1)


def test_shattering_table_is_the_shattering_run_of_its_stream():
    S = study.shattering_table(depths=[1, 3], width=8, points=16, nets=2, res_scale=0.5, seed=0)
    r = diffusion.shattering_gradients(
        arch="plain",
        depth=3,
        width=8,
        n_points=16,
        n_nets=2,
        seed=study.stream_seed(0, "shatter", "plain", 3),
        res_scale=0.5,
    )
    np.testing.assert_array_equal(S["plain_3_corr"], r["corr"])
    np.testing.assert_array_equal(S["plain_3_grad0"], r["grads"][0])
    assert len(S) == 8


def test_welch_difference_against_scipy():
    from scipy import stats as sps

    a, b = np.array([1.0, 2.0, 4.0, 3.5]), np.array([0.5, 0.1, 0.9, 0.2, 0.4, 0.3])
    e = study.welch_difference(a, b)
    d, se, dof, n = e.mean, e.se, e.dof, e.n
    assert n == 10
    res = sps.ttest_ind(a, b, equal_var=False)
    assert d == pytest.approx(a.mean() - b.mean())
    assert d / se == pytest.approx(res.statistic, rel=1e-12)
    assert dof == pytest.approx(res.df, rel=1e-12)


def test_drift_limit_walk_moments_are_exact():
    ring, a, b = 201, 3.0, 7.0
    R = diffusion.drift_limit(ring=ring, left=a, right=b, layers=[20, 80])
    c0 = ring // 2
    for L, prof in zip(R["layers"], R["profiles"], strict=False):
        tot, mu, var = diffusion.circular_moments(prof, c0)
        # L steps of +1 w.p. b/L, −1 w.p. a/L: mean (b − a), variance (a + b) − (b − a)²/L, exactly
        assert tot == pytest.approx(1.0, abs=1e-12) and mu == pytest.approx(b - a, rel=1e-10)
        assert var == pytest.approx((a + b) - (b - a) ** 2 / L, rel=1e-10)
    # exp(Δ)δ: a continuous-time walk, Poisson(b) − Poisson(a): mean b − a, variance a + b
    tot, mu, var = diffusion.circular_moments(R["profile_expm"], c0)
    assert mu == pytest.approx(b - a, rel=1e-9) and var == pytest.approx(a + b, rel=1e-9)
    from scipy.stats import skellam

    k = np.arange(ring) - c0
    np.testing.assert_allclose(R["profile_expm"], skellam.pmf(k, b, a), atol=1e-12)
    assert np.all(np.diff(R["l1_expm"]) < 0)
    assert R["drift"] == b - a and R["diffusion"] == (a + b) / 2


def test_residual_layer_profiles_top_layer_is_a_dirac_and_runs_follow_their_stream():
    P = diffusion.residual_layer_profiles(
        depth=3, res_scale=0.5, channels=2, length=9, n_inputs=4, n_nets=2, seed=1, batch=4
    )
    assert P.shape == (2, 4, 9)
    np.testing.assert_allclose(
        P[:, -1], np.eye(9)[4] * np.ones((2, 1)), atol=1e-6
    )  # ∂y/∂x_L = e_centre
    assert np.all(P[:, 0].sum(-1) > 0)
    T = study.residual_t_collapse(
        depths=[6], tau=2.0, channels=2, length=9, inputs=4, nets=2, seed=0
    )
    r = diffusion.residual_layer_profiles(
        depth=6,
        res_scale=diffusion.residual_step(2.0, 6),
        channels=2,
        length=9,
        n_inputs=4,
        n_nets=2,
        seed=study.stream_seed(0, "t_collapse", 6),
    )
    np.testing.assert_array_equal(T["g2_6"], r[:, 0])
    np.testing.assert_allclose(T["var_6"], diffusion.circular_moments(r, 4)[2])


def test_convergence_rate_is_first_order_for_an_error_proportional_to_eps():
    layers = np.array([50, 100, 200, 400, 800])
    l1 = 3.0 / layers
    l1[0] = 1.0  # an off-trend first depth, left out (skip=1)
    assert study.convergence_rate(layers, l1, skip=1)["slope"] == pytest.approx(-1.0, abs=1e-12)
    assert study.convergence_rate(layers, l1, skip=0)["slope"] < -1.1  # steeper with it
    with pytest.raises(ParameterError, match="skip"):
        study.convergence_rate(layers[:2], l1[:2], skip=1)


def test_variance_ratio_closed_form_and_bad_prediction():
    e = study.variance_ratio(np.array([[2.0, 4.0], [6.0, 8.0]]), 2.0)  # ratios 1, 2, 3, 4
    assert (e.mean, e.dof) == (pytest.approx(2.5), 3) and e.se == pytest.approx(
        math.sqrt(5 / 3) / 2
    )
    with pytest.raises(ParameterError, match="predicted"):
        study.variance_ratio(np.ones(3), 0.0)


def test_pooled_ratio_and_ratio_means():
    ests = [Estimate(0.9, 0.1, 9, 10), Estimate(1.1, 0.1, 9, 10)]
    e = study.pooled_ratio(ests)
    assert e.mean == pytest.approx(1.0) and e.se == pytest.approx(0.1 / math.sqrt(2))
    assert e.dof == pytest.approx(18.0) and e.n == 2
    e = study.pooled_ratio([Estimate(0.0, 1.0, 9, 10), Estimate(1.0, 0.5, 9, 10)])
    assert e.mean == pytest.approx(0.8)  # weights 1 and 4
    with pytest.raises(ParameterError):
        study.pooled_ratio([])
    summary = {("plain", "relu"): ests, ("residual", "relu"): [Estimate(2.0, 0.1, 9, 10)]}
    np.testing.assert_array_equal(study.ratio_means(summary, "relu"), [0.9, 1.1, 2.0])


def test_gradient_ratio_summary_pairs_each_activation_with_the_capacity_network():
    tot = np.array([[1.0, 3.0], [2.0, 2.0]])
    run = {
        f"{arch}_{act}_g2_total": tot * (2 if act == "relu" else 1)
        for arch in ("plain", "residual")
        for act in ("pseudo_random", "relu")
    }
    run |= {
        f"{arch}_pseudo_random_pred": np.array([[0.5, 1.5], [1.0, 3.0]])
        for arch in ("plain", "residual")
    }
    out = study.gradient_ratio_summary(run)
    assert set(out) == {(a, b) for a in ("plain", "residual") for b in ("pseudo_random", "relu")}
    assert [e.mean for e in out[("residual", "relu")]] == pytest.approx([2.0, 1.0])


def test_residual_diffusion_summary_per_network_distance_to_eq34():
    ring, L, D = 101, 40, 3.0
    prof = np.stack([_walk(ring, L, D)] * 2)
    S = study.residual_diffusion_summary(prof, D)
    assert S["l1_per_net"] == pytest.approx(
        S["l1"], rel=1e-12
    )  # identical networks: the walk itself


def test_harmonic_mean_rate_against_quadrature():
    from scipy import integrate

    inv, _ = integrate.quad(lambda a: 1 / a / 20.0, 10.0, 30.0)
    assert diffusion.harmonic_mean_rate(10.0, 30.0) == pytest.approx(1 / inv, rel=1e-10)
    assert diffusion.harmonic_mean_rate(5.0, 5.0) == 5.0
    with pytest.raises(ParameterError):
        diffusion.harmonic_mean_rate(0.0, 1.0)


def test_sampled_walk_summary_of_exact_and_shifted_walks():
    ring, L, D = 101, 40, 3.0
    walk = _walk(ring, L, D)
    S = study.sampled_walk_summary(np.stack([walk] * 3), D, 2.0, 4.0, 0.99)
    assert S["m2_ratio"].mean == pytest.approx(1.0, abs=1e-12)
    assert S["drift"].mean == pytest.approx(0.0, abs=1e-12)
    # the paper's random translation-invariant layers: rms Σₗ ε(bₗ − aₗ) = (a_hi − a_lo)/√(6L)
    assert S["drift_rms_alt"] == pytest.approx(2.0 / math.sqrt(6 * L) / math.sqrt(6.0))
    assert S["drift_rms_identical"] == pytest.approx(2.0 / math.sqrt(6) / math.sqrt(6.0))
    assert S["var_spread"].mean == pytest.approx(0.0, abs=1e-12)  # identical networks
    shifted = np.stack([np.roll(walk, s, axis=-1) for s in (1, -1, 1, -1)])
    T = study.sampled_walk_summary(shifted, D, 2.0, 4.0, 0.99)
    assert T["drift"].mean == pytest.approx(0.0, abs=1e-12)
    assert T["drift_rms"].mean == pytest.approx(1 / math.sqrt(6.0), rel=1e-9)  # |μ| = 1 site
    assert T["m2_ratio"].mean == pytest.approx((6.0 + 1.0) / 6.0, rel=1e-9)


def test_differential_summary_reads_moments_of_gaussian_profiles():
    x = np.arange(31)

    def gauss(mu, var):
        return diffusion.heat_kernel(x, 15 + mu, var / 2, 1.0)

    times = np.linspace(0, 1, 3)
    fixed = np.array([[gauss(t * 2.0, 4.0 * t + 1e-9) for t in times]] * 2)
    mirrored = np.array([[gauss(0.0, 4.0 * t + 1e-9) for t in times]] * 2)
    taps = (1.0, 5.0, 3.0)  # v = 2, 𝒟 = 2
    S = differential.differential_summary({"fixed": fixed, "mirrored": mirrored}, taps)
    assert S["var_ratio"].mean == pytest.approx(1.0, rel=1e-6)
    assert S["drift_ratio"].mean == pytest.approx(1.0, rel=1e-6)
    assert S["mirror_drift"].mean == pytest.approx(0.0, abs=1e-9)
    assert S["var_alt"] == pytest.approx(9.0 / 4.0)
    np.testing.assert_allclose(S["t"], times)
    with pytest.raises(ParameterError, match="asymmetric"):
        differential.differential_summary({"fixed": fixed, "mirrored": mirrored}, (1.0, 1.0, 1.0))


def test_differential_runs_refuses_steps_off_the_grid():
    with pytest.raises(ParameterError, match="multiple of 10"):
        study.differential_runs(ring=9, taps2=(1, 1, 1), steps=15, paths=2, groups=2, seed=0)


def test_own_capacity_ratio_is_one_when_gradients_equal_the_capacity_network():
    rng = np.random.default_rng(0)
    pred = rng.random((4, 16)) + np.exp(-((np.arange(16) - 8.0) ** 2))
    assert study.own_capacity_ratio(pred, pred).mean == pytest.approx(1.0)
    assert study.own_capacity_ratio(np.roll(pred, 0, -1) * 3.0, pred).mean == pytest.approx(1.0)


def test_residual_diffusion_profiles_equal_the_dense_capacity_network():
    from layerwise.seeds import stream

    ring, L, lo, hi = 17, 12, 0.2, 0.6
    R = study.residual_diffusion_profiles(ring=ring, layers=L, a_lo=lo, a_hi=hi, envs=2, seed=5)
    for e in range(2):
        r = stream(5, "env", e)
        Ds = [
            diffusion.residual_layer(ring, 1 / L, r.uniform(lo, hi, ring), r.uniform(lo, hi, ring))
            for _ in range(L)
        ]
        dense = diffusion.capacity_network(Ds, np.eye(ring)[ring // 2])
        np.testing.assert_allclose(R["profiles"][e], dense, rtol=1e-6, atol=1e-7)
    with pytest.raises(ParameterError):
        study.residual_diffusion_profiles(ring=ring, layers=2, a_lo=lo, a_hi=2.0, envs=1, seed=0)


def test_chain_table_same_weights_across_activations_and_departure():
    T = study.chain_capacity_table(
        n=4,
        widths={"two": [4, 3]},
        activations=["pseudo_random", "linear"],
        samples=3000,
        nets=2,
        readout=2,
        seed=0,
    )
    assert T["pseudo_random_two_kappa"].shape == (2, 4) and T["two_pred"].shape == (2, 4)
    np.testing.assert_allclose(T["two_pred"].sum(1), 2.0)  # column-stochastic chain of κ^φ
    d = study.chain_departure(T, "pseudo_random", "two")
    expect = np.abs(T["pseudo_random_two_kappa"] - T["two_pred"]).sum(1) / 2.0
    assert d.mean == pytest.approx(expect.mean())


def test_erf_units_through_the_chapter_seam_give_the_runs(tmp_path):
    """Chapter 2's gradient runs as independent units through ``Chapter.cached_units``: the
    assembled runs are those of the units called in order, named by architecture and depth."""
    from layerwise.chapter import Chapter

    kw = dict(depths=[2, 3], channels=2, length=8, inputs=8, nets=1, res_scale=1.0, seed=0)
    run = [study.erf_unit(u, **kw) for u in range(4)]
    direct = study.assemble_erf(
        {k: np.concatenate([u[k] for u in run]) for k in ("g2", "pred")}, kw["depths"]
    )
    ch = Chapter("02_capacity_diffusion", scale="ci", seed=0, results=tmp_path)
    units = ch.cached_units(study.erf_unit, 4, **kw)
    seam = study.assemble_erf(units, kw["depths"])
    assert set(seam) == set(direct)
    for k in direct:
        np.testing.assert_array_equal(seam[k], direct[k])


def test_translation_invariant_drift_rms_against_simulation():
    """drift_rms_alt is the rms of Σₗ ε(bₗ − aₗ) for one (a, b) per layer: brute force."""
    rng, L, lo, hi = np.random.default_rng(0), 50, 10.0, 30.0
    ab = rng.uniform(lo, hi, (20000, L, 2))
    rms = np.sqrt(np.mean(((ab[..., 1] - ab[..., 0]).sum(1) / L) ** 2))
    walk = np.zeros((3, L + 1, 11))
    walk[:, :, 5] = 1.0
    S = study.sampled_walk_summary(walk, 20.0, lo, hi, 0.99)
    assert S["drift_rms_alt"] * math.sqrt(40.0) == pytest.approx(rms, rel=0.02)


def test_frozen_medium_repeats_the_first_layer_and_spreads_more():
    kw = dict(ring=65, layers=100, a_lo=10.0, a_hi=30.0, envs=12, seed=3)
    moving = study.residual_diffusion_profiles(**kw)["profiles"].astype(float)
    frozen = study.residual_diffusion_profiles(**kw, frozen=True)["profiles"].astype(float)
    np.testing.assert_allclose(moving[:, 1], frozen[:, 1])  # the same first (top) layer
    a = study.sampled_walk_summary(moving, 20.0, 10.0, 30.0, 0.99)["var_spread"]
    b = study.sampled_walk_summary(frozen, 20.0, 10.0, 30.0, 0.99)["var_spread"]
    assert b.mean > 2 * a.mean  # a static medium does not average over depth


def test_spread_estimate_of_normal_samples():
    x = np.random.default_rng(1).normal(0.0, 2.0, 5000)
    e = study.spread_estimate(x)
    assert e.mean == pytest.approx(2.0, abs=3 * e.se)
    assert e.se == pytest.approx(e.mean / math.sqrt(2 * 4999))
    with pytest.raises(ParameterError, match="at least 3"):
        study.spread_estimate([1.0, 2.0])


def test_differential_summary_against_the_exact_recursion():
    """With ``steps`` the ratios are to the exact scheme's moments: its own expectation gives 1,
    whatever the ring's wrap-around and the step's O(ε)."""
    from layerwise import differential

    taps, steps = (0.5, 1.0, 1.5), 50
    exact = differential.expected_profiles(11, taps, steps, steps // 10)
    mirrored = differential.expected_profiles(11, taps, steps, steps // 10, mirror=True)
    S = differential.differential_summary(
        {"fixed": np.stack([exact] * 3), "mirrored": np.stack([mirrored] * 3)}, taps, steps=steps
    )
    assert S["var_ratio"].mean == pytest.approx(1.0, rel=1e-12)
    assert S["drift_ratio"].mean == pytest.approx(1.0, rel=1e-12)
    assert S["mirror_drift"].mean == pytest.approx(0.0, abs=1e-12)
    # the ring of 11 wraps the tail round: below the unbounded line's 1/(1 + εΣc)
    assert S["recursion_drift"] < 1 / (1 + 3.0 / steps) - 0.01
    big = differential.expected_profiles(101, taps, steps, steps)[-1]
    assert differential.profile_moments(big)[0] == pytest.approx(1 / (1 + 3.0 / steps), rel=1e-9)


def test_pooled_moment_ratio_is_the_ratio_of_means_over_all_paths():
    """Two groups, one heavy: the pooled mean position weights each path's mass, the average of
    the groups' own means does not."""
    g = np.zeros((2, 9))
    g[0, 4], g[0, 5] = 1.0, 1.0  # mean position +0.5, mass 2
    g[1, 4], g[1, 3] = 9.0, 9.0  # mean position −0.5, mass 18
    e = differential.pooled_moment_ratio(g, 0, 1.0)
    assert e.mean == pytest.approx((2 * 0.5 - 18 * 0.5) / 20)
    with pytest.raises(ParameterError, match="reference"):
        differential.pooled_moment_ratio(g, 0, 0.0)


def test_erf_exponent_control_recovers_one_half_and_would_see_a_ring_too_small():
    depths = [2, 4, 8, 16]
    g2 = [
        np.ones((6, 64)) + 0.1 * np.random.default_rng(d).standard_normal((6, 64)) for d in depths
    ]
    e = study.erf_exponent_control(g2, depths, 2 / 3, seed=0)
    assert e.mean == pytest.approx(0.5, abs=3 * e.se + 0.01)
    # on a ring of 8 the walk wraps round by depth 16: the fitted exponent falls well short of ½
    small = [np.ones((6, 8)) for _ in depths]
    assert study.erf_exponent_control(small, depths, 2 / 3, seed=0).mean < 0.4
    with pytest.raises(ParameterError, match="per_layer"):
        study.erf_exponent_control(g2, depths, 1.5, seed=0)
