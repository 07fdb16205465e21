"""The vendored reference data of Labatie (2019): checksum, loader, and the numbers the chapters quote."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from layerwise import published as pub
from layerwise.params import ParameterError

SHARED = Path(__file__).resolve().parents[2] / "shared" / "reference" / "labatie2019_published_arrays.json"


def test_ten_experiments_with_their_configurations():
    assert len(pub.experiments()) == 10
    c = pub.config("bn_ff_mnist")
    assert (c["kernel_size"], c["num_channels"], c["batch_size"], c["boundary"], c["dataset"]) == (3, 512, 64, "periodic", "mnist")
    assert pub.config("vanilla_histo")["num_channels"] == 128 and pub.config("vanilla_histo")["num_sims"] == 10000


@pytest.mark.skipif(not SHARED.exists(), reason="the shared reference folder is not on this machine")
def test_vendored_copy_is_the_shared_reference():
    vendored = json.loads((Path(pub.__file__).parent / "reference_data" / pub.FILE).read_text())
    assert vendored == json.loads(SHARED.read_text())


def test_moment_statistics_are_consistent():
    """Quantiles are ordered, means of positive arrays are positive, log10 stats exist only for positive arrays."""
    for e in pub.experiments():
        for name in pub.moments(e):
            m = pub.moment(e, name)
            assert m.mean.shape == m.depth.shape == m.q50.shape
            assert np.all(m.q10 <= m.q50 + 1e-12) and np.all(m.q50 <= m.q90 + 1e-12)
            assert np.all(m.std >= 0)
            if m.mean_log10 is not None:
                assert np.all(m.q10 > 0)
                # Jensen: the mean of log10 is at most log10 of the mean
                assert np.all(m.mean_log10 <= np.log10(m.mean) + 1e-6)


def test_histogram_percentiles_match_the_log_statistics():
    m = pub.moment("vanilla_histo", "nu2_signal_loc3")
    assert m.percentiles_ln.shape == (4, 99)
    assert np.all(np.diff(m.percentiles_ln, axis=1) >= 0)
    # the median of ln equals ln of the median (q50), up to the interpolation of an even sample
    assert np.allclose(m.percentiles_ln[:, 49], np.log(m.q50), atol=0.02)


def test_fig4_numbers_the_paper_states():
    """The conv BN-feedforward arrays end where the paper's Fig. 4 ends (r_eff(dx) ≈ 200, r_eff(x) ≈ 2, μ₄ ≈ 10²)."""
    e = pub.bn_ff_endpoints("bn_ff_mnist")
    assert 150 < e["reff_dx"][0] < 250 and 1.5 < e["reff_x"][0] < 2.5
    assert 50 < e["kurtosis"][0] < 200 and e["nu1"][0] < 0.4
    assert 13 < e["log10_chi"][0] < 15
    m, se = pub.moment("bn_ff_mnist", "reff_noise_loc4").mean_se(200)
    assert se == pytest.approx(pub.moment("bn_ff_mnist", "reff_noise_loc4").std[-1] / math.sqrt(200))


def test_fc_batch_study_trends():
    s = pub.bn_ff_fc_batch_study()
    assert s["B"] == [128.0, 256.0, 512.0]
    assert np.all(np.diff(s["reff_x"]) < 0) and np.all(np.diff(s["reff_dx"]) > 0)
    assert np.all(np.diff(s["kurtosis"]) > 0) and np.all(np.diff(s["log10_chi"]) < 0)
    assert s["reff_x"][0] == pytest.approx(4.574, abs=1e-3) and s["reff_dx"][-1] == pytest.approx(17.018, abs=1e-3)


def test_bad_names_are_refused_with_the_allowed_values():
    with pytest.raises(ParameterError, match="experiment='nope'.*bn_ff_mnist"):
        pub.config("nope")
    with pytest.raises(ParameterError, match="moment='chi_loc9'.*chi_loc1"):
        pub.moment("bn_ff_mnist", "chi_loc9")
    with pytest.raises(ParameterError, match="depth=3"):
        pub.moment("bn_ff_mnist", "chi_loc1").index(3)


def _synthetic_bn_ff(n=5, depth=np.arange(2, 201, 2), rate=0.06, seed=0):
    rng = np.random.default_rng(seed)
    c0 = rng.uniform(1, 3, (n, 1))
    chi4 = c0 * 10 ** (rate * depth[None, :])
    return depth, {
        "chi_loc1": chi4 / 10**rate, "chi_loc3": chi4 / 10 ** (rate / 3), "chi_loc4": chi4,
        "reff_signal_loc4": np.broadcast_to(rng.uniform(1, 3, (n, 1)), (n, depth.size)).copy(),
        "reff_noise_loc4": np.full((n, depth.size), 200.0), "mu4_signal_loc3": np.full((n, depth.size), 100.0),
        "nu1_abs_signal_loc3": np.full((n, depth.size), 0.3),
    }


def test_late_ours_recovers_known_levels_and_rate():
    depth, A = _synthetic_bn_ff()
    out = pub.late_ours(depth, A, 150, 200)
    assert np.allclose(out["log10_dchi"], 0.06)
    assert np.allclose(out["reff_x"], A["reff_signal_loc4"][:, 0]) and np.allclose(out["reff_dx"], 200)
    with pytest.raises(ParameterError, match="l_min=300"):
        pub.late_ours(depth, A, 300, 400)


def test_late_published_is_the_window_average_of_the_published_means():
    m = pub.moment("bn_ff_mnist", "reff_noise_loc4")
    sel = (m.depth >= 150) & (m.depth <= 200)
    late = pub.late_published("bn_ff_mnist", 150, 200)
    assert late["reff_dx"][0] == pytest.approx(m.mean[sel].mean())
    # the SE bound is at least the SE at any single depth of the window, times the smallest std's share
    assert late["reff_dx"][1] >= m.std[sel].min() / math.sqrt(m.n)
    c = pub.moment("bn_ff_mnist", "chi_loc4")
    assert late["log10_dchi"][0] == pytest.approx((c.mean_log10[-1] - c.mean_log10[sel][0]) / (200 - c.depth[sel][0]))


def test_published_increments_multiply_to_the_layer_increment():
    inc = pub.increments_published("bn_ff_epsilon")
    l1, l4 = pub.moment("bn_ff_epsilon", "chi_loc1"), pub.moment("bn_ff_epsilon", "chi_loc4")
    assert np.allclose(np.log10(inc["dchi"]), l4.mean_log10 - l1.mean_log10)
    assert np.all(inc["dbn"][-10:] > inc["dphi"][-10:])     # the paper's late ordering, BN step dominant
    assert np.all(inc["dphi"][:3] > inc["dbn"][:3])         # and the early one, ReLU step dominant
    ref = pub.fig4_reference("bn_ff_epsilon")
    assert set(ref) == {"depth", "dbn", "dphi", "chi", "reff_x", "reff_dx", "kurt_z", "nu1_z"}
    assert np.all(ref["chi"][1] <= ref["chi"][2])


def test_bn_ff_panels_per_layer_increments_with_gapped_records():
    from layerwise import labatie as lb
    depth, A = _synthetic_bn_ff()
    A = {**A, "mu2_signal_loc3": np.ones_like(A["chi_loc4"]), "nu2_signal_loc3": np.ones_like(A["chi_loc4"])}
    Q = lb.bn_ff_panels(A, depth)
    assert np.allclose(Q["dchi"], 10**0.06)
    assert np.allclose(lb.bn_ff_panels(A)["dchi"][:, 1:], 10**0.12)  # without depth: ratio of consecutive records


def test_versus_combines_both_standard_errors():
    v = pub.versus([1.0, 2.0, 3.0], (2.5, 0.3))
    assert v["mean"] == 2.0 and v["dof"] == 2 and v["reference"] == 2.5
    assert v["se"] == pytest.approx(math.hypot(1.0 / math.sqrt(3), 0.3))
    assert pub.versus([4.0], (2.5, 0.3))["se"] == pytest.approx(0.3)
    with pytest.raises(ParameterError, match="ours"):
        pub.versus([], (1.0, 0.1))


def test_ks_versus_published_accepts_the_same_law_and_rejects_a_shifted_one():
    from scipy import stats
    pct = stats.norm.ppf(np.arange(1, 100) / 100)          # a standard normal "published" distribution
    rng = np.random.default_rng(0)
    same = [pub.ks_versus_published(rng.standard_normal(200), pct, 10000) for _ in range(200)]
    assert np.mean([r["ks"] > r["critical"] for r in same]) <= 0.02     # level 1 % (plus grid allowance)
    shifted = pub.ks_versus_published(rng.standard_normal(200) + 0.5, pct, 10000)
    assert shifted["ks"] > shifted["critical"]
    # the statistic equals scipy's one-sample KS against the exact normal to within the grid error
    x = rng.standard_normal(300)
    assert abs(pub.ks_versus_published(x, pct, 10**9)["ks"] - stats.kstest(x, "norm").statistic) <= 0.01
    with pytest.raises(ParameterError, match="percentiles"):
        pub.published_cdf([0.0], pct[::-1])


def test_fig2_percentiles_are_published_for_both_moments():
    for name in ("nu2_signal_loc3", "mu2_noise_loc3"):
        m = pub.moment("vanilla_histo", name)
        assert m.n == 10000 and list(m.depth) == [50, 100, 150, 200] and m.percentiles_ln.shape == (4, 99)


def test_fig4_versus_on_synthetic_nets_with_known_increments():
    from layerwise import labatie as lb
    depth, A = _synthetic_bn_ff()
    A = {**A, "mu2_signal_loc3": np.ones_like(A["chi_loc4"]), "nu2_signal_loc3": np.ones_like(A["chi_loc4"])}
    Q = lb.bn_ff_panels(A, depth)
    V = pub.fig4_versus(depth, Q, A, "bn_ff_mnist", 150, 20, 200)
    # χ(loc3)/χ(loc1) = 10^(2·rate/3), χ(loc4)/χ(loc3) = 10^(rate/3) at every record, every network
    assert V["dbn_late"][0] == pytest.approx(10 ** 0.04) and V["dphi_late"][0] == pytest.approx(10 ** 0.02)
    assert V["late_gap"][0] == pytest.approx(10 ** 0.04 - 10 ** 0.02) and V["early_gap"][0] == pytest.approx(
        10 ** 0.02 - 10 ** 0.04)
    assert V["late_gap"][2] == 4 and V["dchi_late"]["mean"] == pytest.approx(10 ** 0.06)
    assert V["log10_chi_end"][0] == pytest.approx(np.mean(np.log10(A["chi_loc4"][:, -1])))
    # the authors' side, brute force from the loader
    inc = pub.increments_published("bn_ff_mnist")
    w = (inc["depth"] >= 150) & (inc["depth"] <= 200)
    assert V["pub_dbn_late"] == pytest.approx(inc["dbn"][w].mean())
    levels = [pub.late_published(v, 150, 200)["kurtosis"][0] for v in pub.BN_FF_CONV_VARIANTS]
    assert V["spread"]["kurtosis"] == pytest.approx((max(levels) - min(levels)) / abs(np.mean(levels)))
    assert len(V["log10_chi_variants"]) == 3 and all(13 < x < 14 for x in V["log10_chi_variants"])
    with pytest.raises(ParameterError, match="early_lmax=1"):
        pub.fig4_versus(depth, Q, A, "bn_ff_mnist", 150, 1, 200)


def _versus_dict(reff_dx, reff_x, spread):
    n = len(reff_x)
    ours = {"reff_dx": np.array(reff_dx, float), "reff_x": np.array(reff_x, float), "kurtosis": np.full(n, 50.0),
            "nu1": np.full(n, 0.6), "log10_dchi": np.full(n, 0.06)}
    theirs = {"reff_dx": (200.0, 5.0), "reff_x": (2.0, 0.1), "kurtosis": (60.0, 3.0), "nu1": (0.55, 0.01),
              "log10_dchi": (0.062, 0.001)}
    one = n == 1
    est = (1.14, None if one else 0.01, None if one else n - 1)
    return {"ours": ours, "theirs": theirs, "spread": {k: spread for k in pub.FIG4_LATE},
            "dchi_late": {"mean": 1.15, "se": 0.02}, "dbn_late": est, "dphi_late": est, "early_gap": est,
            "pub_dbn_late": 1.14, "pub_dphi_late": 1.02}


def test_fig4_findings_grade_the_ordering_and_the_variants():
    F = pub.fig4_findings(_versus_dict([200, 210, 190, 205], [2.0, 2.1, 1.9, 2.05], spread=0.05))
    assert F["ratio"][0] == pytest.approx(100.0) and F["ratio"][2] == 3          # r_eff(dx)/r_eff(x) = 100 per net
    assert F["glue"]["conv_conditioning_verdict"].startswith("The noise keeps far more directions")
    assert F["glue"]["variant_verdict"].startswith("the data set barely moves them")
    assert F["glue"]["pub_variant_spread"] == "5 %" and F["glue"]["pub_reff_dx"] == (200.0, 5.0)
    assert F["versus"]["kurtosis"]["reference"] == 60.0 and F["glue"]["conv_kurt"][0] == 50.0
    assert F["glue_4"]["conv_dchi_late"] == (1.15, 0.02) and F["glue_4"]["pub_dchi_late"] == pytest.approx(10 ** 0.062)
    G = pub.fig4_findings(_versus_dict([2.0, 2.1, 1.9, 2.05], [200, 210, 190, 205], spread=0.3))
    assert G["glue"]["conv_conditioning_verdict"].startswith("The signal keeps more directions")
    assert G["glue"]["variant_verdict"].startswith("at these depths the levels still depend on the variant")
    H = pub.fig4_findings(_versus_dict([20.0], [2.0], spread=0.05))                 # one network: no errors
    assert H["ratio"] == (10.0, None, None) and H["glue_4"]["conv_dchi_late"] == (1.15, None)
    assert H["glue"]["conv_conditioning_verdict"].startswith("The noise keeps far more directions")


def _conv_summary(n=5, max_depth=200, width=512):
    from layerwise import labatie as lb
    depth, A = _synthetic_bn_ff(n=n)
    keep = depth <= max_depth
    depth, A = depth[keep], {k: v[:, keep] for k, v in A.items()}
    A = {**A, "mu2_signal_loc3": np.ones_like(A["chi_loc4"]), "nu2_signal_loc3": np.ones_like(A["chi_loc4"])}
    Q = lb.bn_ff_panels(A, depth)
    fit = lb.exp_fit(depth, Q["chi"], l_min=10)
    S = pub.fig4_conv_summary(depth, Q, A, fit, "bn_ff_mnist", conv_depth=max_depth, conv_width=width, interval=2,
                              l_min=10)
    return depth, A, fit, S


def test_fig4_conv_summary_at_the_papers_size_grades_known_increments_and_levels():
    depth, A, fit, S = _conv_summary()
    # the paper's width and depth: the default-scale branch, no note, windows from the last quarter and 20 layers
    assert S["glue"]["conv_scale_note"] == "" and (S["late_lmin"], S["early_lmax"]) == (150, 20)
    assert S["glue_4"]["late_lmin"] == 150 and S["glue_4"]["early_lmax"] == 20 and S["glue_4"]["conv_r2"] == fit["r2"]
    M = S["claims"]
    assert set(M) == {"conv_dchi_gt_1", "conv_rate_matches_authors", "conv_chi_200_range", "conv_bn_step_dominates_late",
                      "conv_relu_step_dominates_early", "conv_noise_well_signal_ill_conditioned",
                      *(f"conv_{k}_matches_authors" for k in pub.FIG4_LATE)}
    # χ grows by 10^0.06 per layer in every network, split 2:1 between the BN and ReLU steps
    assert M["conv_dchi_gt_1"]["measured"] == pytest.approx(10 ** 0.06) and M["conv_dchi_gt_1"]["dof"] == 4
    assert M["conv_rate_matches_authors"]["measured"] == pytest.approx(0.06)
    assert M["conv_rate_matches_authors"]["reference"] == pytest.approx(pub.late_published("bn_ff_mnist", 150, 200)
                                                                        ["log10_dchi"][0])
    assert M["conv_bn_step_dominates_late"]["measured"] == pytest.approx(10 ** 0.04 - 10 ** 0.02)
    assert M["conv_relu_step_dominates_early"]["measured"] == pytest.approx(10 ** 0.02 - 10 ** 0.04)
    rx = A["reff_signal_loc4"][:, 0]
    assert M["conv_noise_well_signal_ill_conditioned"]["measured"] == pytest.approx(np.mean(200 / rx))
    assert M["conv_reff_dx_matches_authors"]["measured"] == 200.0
    assert M["conv_kurtosis_matches_authors"]["reference"] == pytest.approx(
        pub.late_published("bn_ff_mnist", 150, 200)["kurtosis"][0])
    end = np.log10(A["chi_loc4"][:, -1])
    assert M["conv_chi_200_range"]["measured"] == pytest.approx(end.mean())
    assert M["conv_chi_200_range"]["se"] == pytest.approx(end.std(ddof=1) / np.sqrt(5))
    assert S["glue"]["conv_log10chi"] == (M["conv_chi_200_range"]["measured"], M["conv_chi_200_range"]["se"])
    ends = [pub.bn_ff_endpoints(v)["log10_chi"][0] for v in pub.BN_FF_CONV_VARIANTS]
    assert S["glue"]["pub_log10chi_range"] == f"{min(ends):.2f}–{max(ends):.2f}"
    assert S["glue"]["conv_conditioning_verdict"].startswith("The noise keeps far more directions")


def test_fig4_conv_summary_of_reduced_nets_says_so_and_one_network_is_a_point():
    _, _, _, S = _conv_summary(max_depth=40, width=16)
    assert (S["late_lmin"], S["early_lmax"]) == (30, 4)          # max(2 · interval, 40 // 10)
    assert "reduced to width 16 and depth 40" in S["glue"]["conv_scale_note"]
    assert "reduced" in _conv_summary(width=256)[3]["glue"]["conv_scale_note"]   # the paper's depth, not its width
    one = _conv_summary(n=1)[3]["claims"]
    assert one["conv_dchi_gt_1"]["se"] is None and one["conv_dchi_gt_1"]["dof"] is None
    assert one["conv_reff_x_matches_authors"]["se"] > 0 and one["conv_reff_x_matches_authors"]["dof"] is None


def test_fc_batch_table_is_the_authors_study_by_batch_size():
    T = pub.fc_batch_table(200)
    study = pub.bn_ff_fc_batch_study(200)
    assert list(T.index) == [128, 256, 512] and T.index.name == "B"
    assert list(T.columns) == list(pub.FC_BATCH_COLUMNS.values())
    for k, title in pub.FC_BATCH_COLUMNS.items():
        assert np.allclose(T[title], study[k])
