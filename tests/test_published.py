"""The vendored reference data of Labatie (2019): checksum, loader, and the numbers the chapters
quote."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from layerwise import labatie, published
from layerwise.params import ParameterError

SHARED = Path(__file__).resolve().parents[2] / "shared" / "reference"


def test_fourteen_experiments_with_their_configurations():
    assert len(published.experiments()) == 14
    assert published.config("bn_ff_fc_64")["batch_size"] == 64
    assert published.config("bn_res_fc")["architecture"] == "bn_res"
    c = published.config("bn_ff_mnist")
    assert (c["kernel_size"], c["num_channels"], c["batch_size"], c["boundary"], c["dataset"]) == (
        3,
        512,
        64,
        "periodic",
        "mnist",
    )
    assert (
        published.config("vanilla_histo")["num_channels"] == 128
        and published.config("vanilla_histo")["num_sims"] == 10000
    )
    fc = published.config("vanilla_fc")
    assert (fc["kernel_size"], fc["num_channels"], fc["batch_size"], fc["num_sims"]) == (
        1, 512, 64, 200
    )
    h = published.config("vanilla_histo_fc")
    assert (h["kernel_size"], h["num_channels"], h["batch_size"], h["num_sims"]) == (
        1, 128, 1024, 10000
    )


def test_fc_vanilla_arrays_the_chapter_grades_against():
    """The numbers the reviews quote (issue 42): log10 χ at layer 200 of the authors'
    fully-connected nets, and the variance of ln μ₂(dx) at depths 50–200 (growing increments)."""
    chi = published.moment("vanilla_fc", "chi_loc3")
    m, se = chi.mean_se(200, log10=True)
    assert m == pytest.approx(0.677, abs=5e-4) and se == pytest.approx(0.0146, abs=5e-4)
    assert published.moment("vanilla_fc", "reff_signal_loc3").n == 200
    noise = published.moment("vanilla_histo_fc", "mu2_noise_loc3")
    assert np.allclose(noise.std_ln**2, [0.526, 1.420, 2.509, 3.687], atol=2e-3)
    assert np.all(np.diff(np.diff(noise.std_ln**2)) > 0)  # the curvature the chapter grades
    # ln and log10 statistics of one array agree; the percentiles straddle the mean of the log
    assert np.allclose(noise.mean_ln, noise.mean_log10 * math.log(10), rtol=1e-4)
    assert np.allclose(noise.std_ln, noise.std_log10 * math.log(10), rtol=1e-4)
    assert np.all(noise.percentiles_ln[:, 0] < noise.mean_ln)
    assert np.all(noise.percentiles_ln[:, -1] > noise.mean_ln)
    # an older experiment without the ln columns still loads (backward compatible)
    assert published.moment("bn_ff_fc_64", "chi_loc4").mean_ln is None


@pytest.mark.skipif(
    not SHARED.exists(), reason="the shared reference folder is not on this machine"
)
@pytest.mark.parametrize("name", sorted(published.FILES))
def test_vendored_copy_is_the_shared_reference(name):
    vendored = json.loads((Path(published.__file__).parent / "reference_data" / name).read_text())
    assert vendored == json.loads((SHARED / name).read_text())


def test_moment_statistics_are_consistent():
    """Quantiles are ordered, means of positive arrays are positive, log10 stats exist only for
    positive arrays."""
    for e in published.experiments():
        for name in published.moments(e):
            m = published.moment(e, name)
            assert m.mean.shape == m.depth.shape == m.q50.shape
            assert np.all(m.q10 <= m.q50 + 1e-12) and np.all(m.q50 <= m.q90 + 1e-12)
            assert np.all(m.std >= 0)
            if m.mean_log10 is not None:
                assert np.all(m.q10 > 0)
                # Jensen: the mean of log10 is at most log10 of the mean
                assert np.all(m.mean_log10 <= np.log10(m.mean) + 1e-6)


def test_histogram_percentiles_match_the_log_statistics():
    m = published.moment("vanilla_histo", "nu2_signal_loc3")
    assert m.percentiles_ln.shape == (4, 99)
    assert np.all(np.diff(m.percentiles_ln, axis=1) >= 0)
    # the median of ln equals ln of the median (q50), up to the interpolation of an even sample
    assert np.allclose(m.percentiles_ln[:, 49], np.log(m.q50), atol=0.02)


def test_fig4_numbers_the_paper_states():
    """The conv BN-feedforward arrays end where the paper's Fig. 4 ends (r_eff(dx) ≈ 200, r_eff(x)
    ≈ 2, μ₄ ≈ 10²)."""
    e = published.bn_ff_endpoints("bn_ff_mnist")
    assert 150 < e["reff_dx"][0] < 250 and 1.5 < e["reff_x"][0] < 2.5
    assert 50 < e["kurtosis"][0] < 200 and e["nu1"][0] < 0.4
    assert 13 < e["log10_chi"][0] < 15
    m, se = published.moment("bn_ff_mnist", "reff_noise_loc4").mean_se(200)
    assert se == pytest.approx(
        published.moment("bn_ff_mnist", "reff_noise_loc4").std[-1] / math.sqrt(200)
    )


def test_fc_batch_study_trends():
    s = published.bn_ff_fc_batch_study()
    assert s["B"] == [64.0, 128.0, 256.0, 512.0]
    # from B = 64 on: fatter tails, a better-conditioned noise and a smaller χ as B grows
    assert np.all(np.diff(s["reff_dx"]) > 0)
    assert np.all(np.diff(s["kurtosis"]) > 0) and np.all(np.diff(s["log10_chi"]) < 0)
    # the signal's r_eff falls from B = 128 on (the batch-size study's three batches)
    assert np.all(np.diff(s["reff_x"][1:]) < 0)
    assert s["reff_x"][1] == pytest.approx(4.574, abs=1e-3) and s["reff_dx"][-1] == pytest.approx(
        17.018, abs=1e-3
    )
    # the authors' B = 64 nets end at log10 χ ≈ 17.99 (the and Fig. 4's fc level)
    assert s["log10_chi"][0] == pytest.approx(17.988, abs=1e-3)


def test_bad_names_are_refused_with_the_allowed_values():
    with pytest.raises(ParameterError, match="experiment='nope'.*bn_ff_mnist"):
        published.config("nope")
    with pytest.raises(ParameterError, match="moment='chi_loc9'.*chi_loc1"):
        published.moment("bn_ff_mnist", "chi_loc9")
    with pytest.raises(ParameterError, match="depth=3"):
        published.moment("bn_ff_mnist", "chi_loc1").index(3)


RECORDS = np.arange(2, 201, 2)   # every other layer up to the paper's depth


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


def test_late_published_is_the_window_average_of_the_published_means():
    m = published.moment("bn_ff_mnist", "reff_noise_loc4")
    sel = (m.depth >= 150) & (m.depth <= 200)
    late = published.late_published("bn_ff_mnist", 150, 200)
    assert late["reff_dx"][0] == pytest.approx(m.mean[sel].mean())
    # the SE bound is at least the SE at any single depth of the window, times the smallest std's
    # share
    assert late["reff_dx"][1] >= m.std[sel].min() / math.sqrt(m.n)
    c = published.moment("bn_ff_mnist", "chi_loc4")
    assert late["log10_dchi"][0] == pytest.approx(
        (c.mean_log10[-1] - c.mean_log10[sel][0]) / (200 - c.depth[sel][0])
    )


def test_published_increments_multiply_to_the_layer_increment():
    inc = published.increments_published("bn_ff_epsilon")
    l1, l4 = (
        published.moment("bn_ff_epsilon", "chi_loc1"),
        published.moment("bn_ff_epsilon", "chi_loc4"),
    )
    assert np.allclose(np.log10(inc["dchi"]), l4.mean_log10 - l1.mean_log10)
    assert np.all(
        inc["dbn"][-10:] > inc["dphi"][-10:]
    )  # the paper's late ordering, BN step dominant
    assert np.all(inc["dphi"][:3] > inc["dbn"][:3])  # and the early one, ReLU step dominant
    ref = published.fig4_reference("bn_ff_epsilon")
    assert set(ref) == {"depth", "dbn", "dphi", "chi", "reff_x", "reff_dx", "kurt_z", "nu1_z"}
    assert np.all(ref["chi"][1] <= ref["chi"][2])


def test_bn_ff_panels_per_layer_increments_with_gapped_records():
    depth, A = _synthetic_bn_ff()
    A = {
        **A,
        "mu2_signal_loc3": np.ones_like(A["chi_loc4"]),
        "nu2_signal_loc3": np.ones_like(A["chi_loc4"]),
    }
    Q = labatie.bn_ff_panels(A, depth)
    assert np.allclose(Q["dchi"], 10**0.06)
    assert np.allclose(
        labatie.bn_ff_panels(A)["dchi"][:, 1:], 10**0.12
    )  # without depth: ratio of consecutive records


def test_fig2_percentiles_are_published_for_both_moments():
    for name in ("nu2_signal_loc3", "mu2_noise_loc3"):
        m = published.moment("vanilla_histo", name)
        assert (
            m.n == 10000
            and list(m.depth) == [50, 100, 150, 200]
            and m.percentiles_ln.shape == (4, 99)
        )
