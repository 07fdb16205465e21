"""Unit tests of Chapter 8's study (layerwise.studies.ch08): its drivers and summaries against
their parts, closed forms and synthetic runs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats as st
from scipy.stats import spearmanr

from layerwise import infogeo, networks
from layerwise.params import ParameterError
from layerwise.stats import Estimate
from layerwise.studies import ch08 as study

D = torch.float64


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def data(n: int = 24, d: int = 7, c: int = 4, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g, dtype=D)
    y = torch.randint(0, c, (n,), generator=g).numpy()
    return x, y


# -- Chapter 8's studies -----------------------------------------------------------------------
def test_fisher_rao_table_and_summary():
    x, y = data(n=12, d=6, c=10)
    keys = []

    def seed_of(*k):
        keys.append(k)
        return len(keys)

    rows = infogeo.fisher_rao_table(x, y, [1, 2], [4, 5], seed_of)
    assert len(rows) == len(infogeo.FR_CASES) * 2 * 2 * len(infogeo.FISHER_LABELS)
    assert keys[0] == ("relu", False, 1, 4) and len(set(keys)) == len(keys) == len(rows) // 2
    for r in rows:
        assert r["n_params"] == 6 * r["width"] + (r["L"] - 1) * r["width"] ** 2 + r[
            "width"
        ] * 10 + (r["L"] * r["width"] + 10 if r["bias"] else 0)
        if r["activation"] in infogeo.HOMOGENEOUS and not r["bias"]:
            assert r["rel_diff"] < 1e-12 and r["euler"] < 1e-12
        else:
            assert r["rel_diff"] > 1e-8
        if r["bias"]:
            assert r["euler_weighted"] < 1e-12 < r["euler"]
    s = study.fisher_rao_summary(rows)
    homog = [r for r in rows if r["activation"] in infogeo.HOMOGENEOUS and not r["bias"]]
    assert s["fr_homog_max"] == max(r["rel_diff"] for r in homog)
    assert s["fr_homog_eps"] == pytest.approx(s["fr_homog_max"] / np.finfo(float).eps, rel=1e-15)
    assert s["fr_tanh_min"] == min(r["rel_diff"] for r in rows if r["activation"] == "tanh")
    assert s["fr_bias_max"] == max(r["rel_diff"] for r in rows if r["bias"])
    assert s["euler_weighted_max"] == max(r["euler_weighted"] for r in rows if r["bias"])
    assert s["fr_n_nets"] == 16


def test_trained_mlp_arrays_round_trip():
    x, y = data(n=30, d=6, c=3)
    a = study.trained_mlp(x, y, [6, 8, 3], steps=50, lr=1e-2, seed=4, target_loss=0.0)
    p, hist = infogeo.train_mlp(x, y, [6, 8, 3], steps=50, lr=1e-2, seed=4)
    assert np.array_equal(a["loss"], hist) and set(a) == {"W1", "W2", "loss"}
    q = study.arrays_to_params(a)
    assert set(q) == {"W1", "W2"} and all(torch.equal(q[k], p[k]) for k in p)
    assert all(np.array_equal(v, p[k].numpy()) for k, v in study.params_to_arrays(p).items())


def test_reparam_sweep_invariants_and_closed_forms():
    x, y = data(n=20, d=5, c=10)
    p = networks.init_mlp([5, 6, 6, 10], seed=2)
    al = [0.1, 1.0, 10.0]
    R = infogeo.reparam_sweep(
        p,
        x,
        y,
        alphas=al,
        lanczos_iter=8,
        sharp_draws=3,
        sharp_sigma=0.05,
        seed_lanczos=1,
        seed_lanczos2=2,
        seed_noise=3,
    )
    assert R["dfun"].max() < 1e-12 and np.abs(R["fr"] - 1).max() < 1e-10
    w = [float(p[f"W{l}"].norm() ** 2) for l in (1, 2, 3)]
    assert np.allclose(R["l2"][0] ** 2, [a**2 * w[0] + w[1] / a**2 + w[2] for a in al], rtol=1e-12)
    for k in ("l2", "spec", "lam", "iso", "mult"):  # both rescalings are the identity at α = 1
        assert R[k][0, 1] == pytest.approx(R[k][1, 1], rel=1e-12)
    assert np.allclose(R["iso_draws"].mean(-1), R["iso"]) and R["iso_draws"].shape == (2, 3, 3)
    assert np.allclose(
        R["mult"], R["mult"][0, 1], rtol=1e-10
    )  # weight-proportional noise is invariant
    d = infogeo.sharpness_draws(
        infogeo.unit_scale(p, 10.0), x, infogeo.one_hot(y, 10), sigma=0.05, n_draws=3, seed=3
    )
    assert np.array_equal(d, R["iso_draws"][1, 2])


def test_dinh_ranges_follow_from_the_alpha_grid():
    # the ℓ₂ range, the unit-wise spectral range and the Hessian's sharpening under T_α are set by
    # the α grid (closed forms, formerly claims of Chapter 8): on a random net and the chapter's
    # four decades they exceed
    # an order of magnitude, two and two orders respectively
    x, y = data(n=20, d=5, c=10)
    p = networks.init_mlp([5, 6, 6, 10], seed=4)
    R = infogeo.reparam_sweep(
        p,
        x,
        y,
        alphas=[0.01, 1.0, 100.0],
        lanczos_iter=10,
        sharp_draws=2,
        sharp_sigma=0.05,
        seed_lanczos=1,
        seed_lanczos2=2,
        seed_noise=3,
    )
    s = infogeo.reparam_summary(R)
    assert s["l2_range"] >= 10 and s["spec_unit_range"] >= 100 and s["lam_ratio"] >= 100


def test_reparam_summary_on_closed_form_sweep():
    al = np.array([0.01, 0.1, 1.0, 10.0, 100.0])
    lam = np.vstack([3 * np.maximum(al, 1 / al) ** 2, np.full(5, 3.0)])
    draws = np.ones((2, 5, 4)) * np.arange(1, 5)
    draws[0, 0] *= 200
    draws[0, 4] *= 50
    R = dict(
        alphas=al,
        lam=lam,
        lam2=lam * (1 + 1e-3),
        iso_draws=draws,
        mult=np.full((2, 5), 0.5),
        spec=np.vstack([np.full(5, 2.0), 2.0 * al**2]),
        dfun=np.full((2, 5), 1e-16),
        fr=np.full((2, 5), 1 + 1e-15),
        l2=np.vstack([al + 1 / al, np.ones(5)]),
    )
    s = infogeo.reparam_summary(R)
    assert s["i1"] == 2 and s["lam_ratio"] == pytest.approx(1e4)
    assert s["slope_hi"] == pytest.approx(2) and s["slope_lo"] == pytest.approx(-2)
    assert s["lam_conv"] == pytest.approx(1e-3 / (1 + 1e-3))
    assert s["iso_ratio"].mean == pytest.approx(50) and s["iso_ratio"].se == pytest.approx(
        0, abs=1e-12
    )
    assert s["iso_ratio"].dof == 3 and s["iso_ratio"].n == 4  # the paired noise draws
    assert (
        s["mult_dev"] == 0
        and s["spec_t_dev"] == 0
        and s["inv_dev"] == pytest.approx(1e-15, rel=0.2)
    )
    assert s["l2_range"] == pytest.approx((100.01) / 2) and s["spec_unit_range"] == pytest.approx(
        1e8
    )
    assert s["alpha_second"] == 10.0


def test_kfac_study_and_summary():
    x, _ = data(n=15, d=5, c=4)
    trained = networks.init_mlp([5, 4, 4, 4], seed=9)
    K0 = study.kfac_study(trained, 3, x) | study.kfac_subset(trained, 3, x, 2)
    ref = infogeo.kfac_analysis(networks.init_mlp([5, 4, 4, 4], seed=3), x)
    assert all(np.array_equal(K0[f"init_{k}"], v) for k, v in ref.items())
    assert np.array_equal(K0["trained_kfac_error"], infogeo.kfac_analysis(trained, x)["kfac_error"])
    assert K0["init_sub_exact"].shape == (3 * 4, 3 * 4) and list(K0["trained_sub_block_sizes"]) == [
        4,
        4,
        4,
    ]
    K1 = study.kfac_study(trained, 5, x)
    assert not any("_sub_" in k for k in K1)
    S = infogeo.kfac_summary([K0, K1])
    assert S["err"]["init"].shape == (2, 3)
    assert np.array_equal(S["gap"], S["err"]["trained"].mean(1) - S["err"]["init"].mean(1))
    tr = np.array([K0["init_trace_ratio"], K1["init_trace_ratio"]])
    assert S["trace_worst"] == tr.flat[np.argmax(np.abs(tr - 1))]
    trt = np.array([K0["trained_trace_ratio"], K1["trained_trace_ratio"]])
    assert S["trace_worst_trained"] == trt.flat[np.argmax(np.abs(trt - 1))]
    lay = int(np.argmax(np.abs(tr.mean(0) - 1)))
    trace = S["trace_mean"]
    assert S["trace_layer"] == lay + 1 and trace.mean == pytest.approx(tr[:, lay].mean())
    assert trace.se == pytest.approx(tr[:, lay].std(ddof=1) / np.sqrt(2)) and trace.dof == 1
    assert S["trace_mean_trained"] == trt.mean(0)[np.argmax(np.abs(trt.mean(0) - 1))]
    assert np.array_equal(S["trace_ratio"]["init"], tr)
    assert np.array_equal(S["trace_ratio"]["trained"], trt)
    with pytest.raises(ParameterError, match="2 nets"):  # a standard error over nets needs two
        infogeo.kfac_summary([K0])
    worst = [
        max((K[f"{t}_kfac_error"] / K[f"{t}_diag_error"]).max() for t in study.KFAC_STATES)
        for K in (K0, K1)
    ]
    assert np.allclose(S["diag_ratio"], worst) and S["diag_ratio"].shape == (2,)
    assert study.kfac_findings(S)["diag_ratio"].mean == pytest.approx(np.mean(worst))
    assert S["cross"]["trained"][0] == float(K0["trained_cross_layer_error"])
    # the share of the squared K-FAC error in the dropped blocks, against the whole Fisher built
    # explicitly
    stats = infogeo.layer_statistics(trained, x)
    Fw = torch.cat(
        [
            torch.cat([infogeo.exact_fisher_block(stats, i, j) for j in (1, 2, 3)], 1)
            for i in (1, 2, 3)
        ],
        0,
    )
    Kb = torch.block_diag(*[torch.kron(*infogeo.kfac_factors(stats, i)) for i in (1, 2, 3)])
    diag_mask = torch.block_diag(*[torch.ones(4 * d, 4 * d) for d in (5, 4, 4)]).bool()
    E = Fw - Kb
    assert S["cross_share"]["trained"][0] == pytest.approx(
        float(E[~diag_mask].norm() ** 2 / E.norm() ** 2), rel=1e-10
    )


def test_check_params_names_the_parameter():
    assert study.check_params({"rand_budget": 400, "rand_steps": 400, "kfac_seeds": 2}) is not None
    with pytest.raises(ParameterError, match="rand_budget"):
        study.check_params({"rand_budget": 500, "rand_steps": 400})
    for name in ("kfac_seeds", "rand_seeds"):  # a standard error over nets needs two
        with pytest.raises(ParameterError, match=name):
            study.check_params({name: 1})
    with pytest.raises(ParameterError, match="alphas"):
        study.check_params({"alphas": [0.1, 10, 100]})


def test_label_randomisation_run_matches_its_parts():
    x, y = data(n=30, d=6, c=4)
    xt, yt = data(n=10, d=6, c=4, seed=1)
    r = infogeo.label_randomisation_run(
        x,
        y,
        xt,
        yt,
        [6, 12, 4],
        fraction=0.0,
        budget=60,
        steps=200,
        lr=1e-2,
        target_loss=0.3,
        label_seed=1,
        init_seed=2,
    )
    # fixed loss: train_mlp run for the read-off's steps (at or after its first loss ≤ target:
    # every label fitted too, test_infogeo checks the rule step by step); fixed budget: train_mlp
    # run for exactly `budget` steps
    t = int(r["target_step"])
    _, h_first = infogeo.train_mlp(x, y, [6, 12, 4], steps=200, lr=1e-2, seed=2, target_loss=0.3)
    p_loss, _ = infogeo.train_mlp(x, y, [6, 12, 4], steps=t, lr=1e-2, seed=2)
    p_budget, h_budget = infogeo.train_mlp(x, y, [6, 12, 4], steps=60, lr=1e-2, seed=2)
    assert len(h_first) - 1 <= t != 60 and float(r["loss_train_accuracy"]) == 1.0
    for q, p in (("loss", p_loss), ("budget", p_budget)):
        m = {**infogeo.capacity_measures(p, x, y), **infogeo.fisher_rao_factors(p, x, y)}
        assert all(float(r[f"{q}_{k}"]) == pytest.approx(v, rel=1e-10) for k, v in m.items())
        assert float(r[f"{q}_test_accuracy"]) == float(
            (networks.forward(p, xt).argmax(1).numpy() == yt).mean()
        )
    final = float(infogeo.loss_fn(p_loss, x, infogeo.one_hot(y, 4)))
    assert float(r["loss_final_loss"]) == pytest.approx(final, rel=1e-12) and final <= 0.3
    assert float(r["budget_final_loss"]) == pytest.approx(
        float(infogeo.loss_fn(p_budget, x, infogeo.one_hot(y, 4))), rel=1e-12
    )
    # a target that is never reached: the fixed-loss entries are NaN, the budget ones are not
    r2 = infogeo.label_randomisation_run(
        x,
        y,
        xt,
        yt,
        [6, 12, 4],
        fraction=1.0,
        budget=20,
        steps=30,
        lr=1e-2,
        target_loss=0.0,
        label_seed=1,
        init_seed=2,
    )
    assert (
        int(r2["target_step"]) == -1
        and np.isnan(float(r2["loss_l2"]))
        and np.isfinite(float(r2["budget_l2"]))
    )


def test_loss_share_closed_forms():
    R = np.array([[1e-3, 1e-2], [2e-3, 2e-2], [1e-3, 1e-2]])
    # M/γ unchanged: the loss factor carries all of the change
    share = infogeo.loss_share(R, 5 * R)
    assert share.mean == pytest.approx(1.0) and share.se == pytest.approx(0.0, abs=1e-12)
    assert share.dof == 2 and share.n == 3
    # M/γ doubles as well: share = log 10 / (log 10 + log 2), exactly, for every pair
    share = infogeo.loss_share(R, 5 * R * np.array([1.0, 2.0]))
    assert share.mean == pytest.approx(np.log(10) / np.log(20))
    assert share.se == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ParameterError, match="shape"):
        infogeo.loss_share(R[:1], R[:1])


def test_welch_log_ratio_matches_scipy():
    rng = np.random.default_rng(0)
    lo, hi = np.exp(rng.normal(0, 0.3, 5)), np.exp(rng.normal(1, 0.8, 7))
    w = study.welch_log_ratio(lo, hi)
    diff, se, dof, n = w.mean, w.se, w.dof, w.n
    assert n == 12
    t = st.ttest_ind(np.log(hi), np.log(lo), equal_var=False)
    assert diff / se == pytest.approx(t.statistic, rel=1e-12) and dof == pytest.approx(
        t.df, rel=1e-12
    )
    assert diff == pytest.approx(np.log(hi).mean() - np.log(lo).mean(), rel=1e-14)
    flat = study.welch_log_ratio([1.0, 1.0], [1.0, 1.0, 1.0])
    assert (flat.mean, flat.se, flat.dof) == (0.0, 0.0, 3.0)  # no spread: the d.o.f. add up


def test_tangent_check_constant_within_regions():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(40, 6, generator=g, dtype=D)
    p = networks.init_mlp([6, 10, 10, 1], seed=5)
    ts = infogeo.tangent_check(p, x, 6, np.random.default_rng(1))
    assert 6 <= len(ts["same"]) <= 12 and len(ts["different"]) <= 6
    assert ts["same"].max() < 1e-12
    assert len(ts["different"]) > 0 and ts["different"].min() > 1e-6
    again = infogeo.tangent_check(p, x, 6, np.random.default_rng(1))
    assert all(np.array_equal(ts[k], again[k]) for k in ts)
    with pytest.raises(ParameterError, match="bias-free"):
        infogeo.tangent_check(
            networks.init_mlp([6, 10, 1], bias=True), x, 2, np.random.default_rng(0)
        )


def test_split_digits():
    x = np.arange(50 * 2 * 2, dtype=float).reshape(50, 2, 2)
    y = np.arange(50)
    Xtr, Ytr, Xte, Yte = study.split_digits(x, y, np.random.default_rng(3), 20, n_test=10)
    assert Xtr.shape == (20, 4) and Xte.shape == (10, 4) and Xtr.dtype == torch.float64
    assert not set(Ytr) & set(Yte)
    assert torch.equal(Xtr[:, 0], torch.tensor(Ytr * 4, dtype=D))  # rows stay with their labels
    with pytest.raises(ParameterError):
        study.split_digits(x, y, np.random.default_rng(3), 45, n_test=10)


def _synthetic_runs(norm_factor: float, r_factor: float, fr_factor: float) -> Any:
    """Label-randomisation runs whose random-label nets are their clean twins with every norm
    over γ scaled by ``norm_factor``, the loss factors R by ``r_factor`` and the Fisher–Rao norms
    over γ by ``fr_factor`` (per net, exactly)."""
    rng = np.random.default_rng(3)
    rows = []
    base = {s: rng.uniform(1.0, 2.0, size=12) for s in range(4)}
    for frac in (0.0, 1.0):
        for s in range(4):
            b = base[s]
            row = {"fraction": frac, "net": s, "target_step": float(100 + 50 * frac if s else -1)}
            for q in infogeo.PROTOCOLS:
                margin = 0.5 + 0.1 * s
                scale = lambda f, frac=frac: f if frac else 1.0  # noqa: E731
                vals = {
                    m: b[i] * margin * scale(norm_factor)
                    for i, m in enumerate(study.RAND_MEASURES[:4])
                }
                vals.update(
                    {
                        f"fisher_rao_{k}": b[4 + i] * margin * scale(fr_factor)
                        for i, k in enumerate(("model", "empirical"))
                    }
                )
                vals.update(
                    {f"M_{k}": b[6 + i] * margin for i, k in enumerate(("model", "empirical"))}
                )
                vals.update(
                    {
                        f"R_{k}": b[8 + i] * scale(r_factor)
                        for i, k in enumerate(("model", "empirical"))
                    }
                )
                vals.update(
                    margin=margin,
                    train_accuracy=1.0,
                    test_accuracy=0.1 + 0.01 * s if frac else 0.9,
                    final_loss=b[10] * (10 if frac else 1),
                )
                row.update({f"{q}_{k}": v for k, v in vals.items()})
            rows.append(row)
    return pd.DataFrame(rows)


def test_label_randomisation_summary_against_exact_ratios():
    S = study.label_randomisation_summary(
        _synthetic_runs(norm_factor=4.0, r_factor=3.0, fr_factor=9.0)
    )
    for q in infogeo.PROTOCOLS:
        for m in study.RAND_MEASURES[:4]:
            ratio = S["log_ratio"][q, m]
            assert ratio.mean == pytest.approx(np.log(4.0), abs=1e-12)
            assert ratio.se > 0 and ratio.dof > 0 and ratio.n == 8
        assert S["log_ratio"][q, "M_model"][0] == pytest.approx(0.0, abs=1e-12)
        for k in ("model", "empirical"):
            share, se = S["loss_share"][q, k][
                :2
            ]  # Δlog R / Δlog(‖θ‖_fr/γ) = log 3 / log 9 per pair
            assert share == pytest.approx(0.5, abs=1e-12) and se == pytest.approx(0.0, abs=1e-12)
        assert list(S["tables"][q].columns[:3]) == ["fraction", "net", "target_step"]
    assert S["chance"].mean == pytest.approx(0.115) and S["chance"].n == 4
    separated = spearmanr(
        [0] * 4 + [1] * 4, np.arange(8)
    ).statistic  # every random net above every clean one
    assert all(r == pytest.approx(separated) for r in S["rho"].values())
    # net 0 never reached its target loss: it counts as not fitted (the check can fail)
    assert S["min_train_accuracy"] == 0.0
    reached = _synthetic_runs(norm_factor=4.0, r_factor=3.0, fr_factor=9.0).assign(target_step=7)
    assert study.label_randomisation_summary(reached)["min_train_accuracy"] == 1.0
    reached.loc[3, "budget_train_accuracy"] = 0.93  # one budget run short of its labels
    assert study.label_randomisation_summary(reached)["min_train_accuracy"] == 0.93
    assert S["unreached"] == 2
    assert S["final_loss"]["budget", "random"] == pytest.approx(
        10 * S["final_loss"]["budget", "clean"]
    )
    assert S["target_steps"]["random"] == pytest.approx((-1 + 3 * 150) / 4)
    shrink = study.label_randomisation_summary(
        _synthetic_runs(norm_factor=0.25, r_factor=3.0, fr_factor=9.0)
    )
    assert all(
        shrink["log_ratio"]["budget", m].mean == pytest.approx(np.log(0.25), abs=1e-12)
        for m in study.RAND_NORMS
    )
    assert not any(
        isinstance(v, str) for v in {**shrink["final_loss"], **shrink["target_steps"]}.values()
    )  # no sentences


def test_protocol_table_names_the_protocols():
    with pytest.raises(ParameterError, match="q"):
        study.protocol_table(_synthetic_runs(2.0, 2.0, 2.0), "epochs")


def test_kfac_findings_reads_margins_errors_and_the_dominant_part():
    err = {
        "init": np.array([[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]]),
        "trained": np.array([[0.2, 0.3, 0.4], [0.5, 0.4, 0.3]]),
    }
    KS = {
        "err": err,
        "best": {t: err[t] / 2 for t in err},
        "diag": {t: err[t] + 0.5 for t in err},
        "cross": {"init": np.array([0.3, 0.5]), "trained": np.array([0.1, 0.1])},
        "within": {"init": np.array([0.1, 0.1]), "trained": np.array([0.4, 0.2])},
        "gap": np.array([0.1, 0.2]),
        "cross_share": {"init": np.array([0.9, 0.96]), "trained": np.array([0.06, 0.2])},
        "trace_worst": 0.97,
        "trace_worst_se": 0.01,
        "diag_ratio": np.array([0.4, 0.6, 0.5]),
    }
    F = study.kfac_findings(KS)
    assert F["diag_ratio"][0] == pytest.approx(0.5) and F["diag_ratio"][1] == pytest.approx(
        0.1 / np.sqrt(3)
    )
    assert F["diag_ratio"][2] == 2
    assert F["diag_margin"] == pytest.approx(0.5)
    assert (
        F["gap"][0] == pytest.approx(0.15)
        and F["gap"][1] == pytest.approx(0.05)
        and F["gap"][2] == 1
    )
    assert F["err_max"] == pytest.approx(0.35) and F["diag_err_min"] == pytest.approx(0.7)
    assert F["nets"] == 2 and F["trace_worst"] == Estimate(0.97, 0.01)
    assert F["err_mean"]["init"] == pytest.approx(0.2)
    assert F["best_mean"]["trained"] == pytest.approx(0.175)
    # the dropped blocks dominate at initialisation, the Kronecker factorisation after training
    assert F["cross_mean"] == pytest.approx({"init": 0.4, "trained": 0.1})
    assert F["within_mean"] == pytest.approx({"init": 0.1, "trained": 0.3})
    assert not any(isinstance(v, str) for v in F.values())  # numbers only: no sentences
    with pytest.raises(ParameterError, match="2 samples"):  # one net: no standard error
        study.kfac_findings(
            {**KS, "gap": np.array([0.1]), "cross_share": {t: np.array([0.9]) for t in err}}
        )


def _ng_run(block_init, block_trained, cost_init, cost_trained, top=(0.6, 0.5)):
    """A synthetic natural_gradient_study result with chosen structure ratios and costs; the
    rotated F scores 0.8 (off-diagonal share 0.5 → 0.4) and ``top`` per state on the
    eigen-directions above the damping."""
    r = {}
    for t, b, c, u in (
        ("init", block_init, cost_init, top[0]),
        ("trained", block_trained, cost_trained, top[1]),
    ):
        r.update(
            {
                f"{t}_fisher_off_diagonal": np.asarray(0.5),
                f"{t}_inverse_off_diagonal": np.asarray(0.5 * b),
                f"{t}_inverse_top_off_diagonal": np.asarray(0.5 * u),
                f"{t}_rotated_fisher_off_diagonal": np.asarray(0.5),
                f"{t}_rotated_inverse_off_diagonal": np.asarray(0.25),
                f"{t}_rotated_inverse_top_off_diagonal": np.asarray(0.4),
                f"{t}_below_damping_fraction": np.asarray(0.9),
                f"{t}_lambda": np.array([1e-3, 1e-2]),
                f"{t}_fisher_off_tridiagonal": np.asarray(0.1),  # far share of F's: 0.2
                f"{t}_inverse_off_tridiagonal": np.asarray(0.5 * b * 0.1),  # of the inverse's: 0.1
                f"{t}_cos_kfac": np.array([0.1, 0.2]),
                f"{t}_cos_blocks": np.array([0.1, 0.2 + c]),
                f"{t}_cos_diagonal": np.array([0.3, 0.3]),
                f"{t}_cos_gradient": np.array([0.4, 0.4]),
            }
        )
    return r


def test_natural_gradient_summary_takes_the_worse_state_per_net():
    runs = [_ng_run(0.2, 0.4, 0.5, 0.3), _ng_run(0.3, 0.1, 0.2, 0.6, top=(1.0, 0.2))]
    s = study.natural_gradient_summary(runs, at=1)
    # per net the larger ratio (worse for "nearer block-diagonal"): 0.4 and 0.3
    assert s["inverse_block"].mean == pytest.approx(0.35) and s["inverse_block"].n == 2
    assert s["inverse_block_rotated"].mean == pytest.approx(0.5)
    # above the damping, per state and paired against the rotated F's 0.8
    assert s["inverse_top"]["init"].mean == pytest.approx(0.8)
    assert s["inverse_top_rotated"]["trained"].mean == pytest.approx(0.8)
    assert s["inverse_top_excess"]["init"].mean == pytest.approx(0.0)
    assert s["inverse_top_excess"]["init"].se == pytest.approx(0.2)
    assert s["inverse_top_excess"]["trained"].mean == pytest.approx(-0.45)
    assert s["blocks_cost"]["init"].mean == pytest.approx(1 - (0.2 + 0.35))
    assert s["shares"]["trained"]["below_damping_fraction"] == pytest.approx(0.9)
    assert "lambda" not in s["shares"]["init"]
    # far share of the inverse's off-diagonal norm 0.1 against F's 0.2, in every state
    assert s["inverse_tridiagonal"].mean == pytest.approx(0.5)
    # per net the smaller direction cost: 0.3 and 0.2
    assert s["factorisation_cost"].mean == pytest.approx(0.25)
    assert s["cos"]["trained"]["gradient"].shape == (2, 2)
    with pytest.raises(ParameterError, match=">= 2 nets"):
        study.natural_gradient_summary(runs[:1], at=0)


# -- independent units of work (issue #31: Chapter.cached_units, here or on a Dask cluster) -----
def _concat(units: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {k: np.concatenate([u[k] for u in units]) for k in units[0]}


UNIT_KW = dict(widths=[7, 6, 6, 4], steps=40, lr=1e-2, target_loss=1.0)  # stops both early


def test_kfac_units_give_the_trained_nets_and_their_kfac_study(tmp_path):
    """Net s of the units is :func:`trained_mlp` from seed ``torch_seed(seed, "mlp", s)`` (its
    loss history back to its own length), and its K-FAC outputs (with :func:`kfac_subset` for the
    blocks) are :func:`kfac_study`'s; through the chapter's seam or unit by unit, the same."""
    from layerwise.chapter import Chapter
    from layerwise.seeds import torch_seed

    x, y = data(n=24, d=7, c=4)
    kw = dict(x=x, y=y, seed=3, kfac_n=15, **UNIT_KW)
    ch = Chapter("08_information_geometry", scale="ci", seed=3, results=tmp_path)
    units = ch.cached_units(study.kfac_unit, 2, **kw)
    assert all(
        np.array_equal(units[k], v, equal_nan=True)
        for k, v in _concat([study.kfac_unit(s, **kw) for s in (0, 1)]).items()
    )
    for s in (0, 1):
        a = study.trained_mlp(x, y, seed=torch_seed(3, "mlp", s), **UNIT_KW)
        net, loss = study.unit_net(units, s)
        assert np.array_equal(loss, a["loss"]) and set(net) == {"W1", "W2", "W3"}
        assert all(np.array_equal(net[k].numpy(), a[k]) for k in net)
        one = study.kfac_study(study.arrays_to_params(a), torch_seed(3, "mlp", s), x[:15])
        if s == 0:
            one |= study.kfac_subset(study.arrays_to_params(a), torch_seed(3, "mlp", 0), x[:15], 2)
        got = study.unit_kfac(units, s)
        if s == 0:
            got |= study.kfac_subset(net, torch_seed(3, "mlp", 0), x[:15], 2)
        assert sorted(got) == sorted(one) and all(np.array_equal(got[k], one[k]) for k in one)
    # the two nets differ (their own seeds) and the target loss stops one early
    assert not np.array_equal(units["mlp_W1"][0], units["mlp_W1"][1])
    assert units["mlp_loss"].shape == (2, 40) and np.all(units["mlp_n_loss"] < 40)
    assert np.isnan(units["mlp_loss"][0, units["mlp_n_loss"][0] :]).all()
    with pytest.raises(ParameterError, match="kfac_n"):
        study.kfac_unit(0, **{**kw, "kfac_n": 0})


def test_natural_gradient_units_are_the_per_net_study():
    from layerwise.seeds import torch_seed

    x, y = data(n=24, d=7, c=4)
    nets = _concat([study.kfac_unit(s, x=x, y=y, seed=1, kfac_n=10, **UNIT_KW) for s in (0, 1)])
    nets = {k: v for k, v in nets.items() if k.startswith("mlp_")}
    kw = dict(dampings=[1e-2, 1.0], structure_damping=1e-2)
    for s in (1, 0):
        u = study.natural_gradient_unit(s, nets=nets, seed=1, x=x[:12], y=y[:12], **kw)
        one = study.natural_gradient_study(
            study.unit_net(nets, s)[0], torch_seed(1, "mlp", s), x[:12], y[:12], **kw
        )
        assert sorted(u) == sorted(one)
        assert all(
            u[k].shape == (1, *np.shape(v)) and np.array_equal(u[k][0], v) for k, v in one.items()
        )
    with pytest.raises(ParameterError, match="index"):
        study.natural_gradient_unit(2, nets=nets, seed=1, x=x, y=y, **kw)


def test_label_randomisation_units_give_the_runs_table():
    """One unit per net (all fractions): the rows are those of the single runs with the chapter's
    seeds, fraction-major, with the same columns."""
    from layerwise.seeds import torch_seed

    x, y = data(n=30, d=6, c=4)
    xt, yt = data(n=10, d=6, c=4, seed=1)
    run = dict(
        x=x,
        y=y,
        x_test=xt,
        y_test=yt,
        widths=[6, 12, 4],
        budget=30,
        steps=80,
        lr=1e-2,
        target_loss=0.3,
    )
    fr = [0.0, 0.5, 1.0]
    units = _concat(
        [study.label_randomisation_unit(s, fractions=fr, seed=2, **run) for s in (0, 1)]
    )
    rows = study.label_randomisation_rows(units, fr)
    one = pd.DataFrame(
        [
            {
                "fraction": f,
                "net": s,
                **{
                    k: float(v)
                    for k, v in infogeo.label_randomisation_run(
                        fraction=f,
                        label_seed=torch_seed(2, "labels", s, int(round(f * 1000))),
                        init_seed=torch_seed(2, "randnet", s),
                        **run,
                    ).items()
                },
            }
            for f in fr
            for s in (0, 1)
        ]
    )
    pd.testing.assert_frame_equal(rows, one, check_exact=True)
    with pytest.raises(ParameterError, match="fractions"):
        study.label_randomisation_unit(0, fractions=[1.5], seed=2, **run)


def test_check_params_keeps_the_natural_gradient_nets_among_the_kfac_nets():
    assert study.check_params({"kfac_seeds": 3, "ng_nets": 3}) is not None
    with pytest.raises(ParameterError, match="ng_nets"):
        study.check_params({"kfac_seeds": 2, "ng_nets": 3})


def test_kfac_per_net_reads_each_quantity_per_net():
    err = {"init": np.array([[0.1, 0.2, 0.3], [0.3, 0.2, 0.4]]), "trained": np.full((2, 3), 0.5)}
    tr = {"init": np.array([[1.0, 1.1, 1.0], [1.0, 1.3, 1.0]]), "trained": np.ones((2, 3))}
    KS = {
        "err": err,
        "best": {t: err[t] / 2 for t in err},
        "cross": {"init": np.array([0.3, 0.5]), "trained": np.array([0.1, 0.1])},
        "within": {"init": np.array([0.1, 0.1]), "trained": np.array([0.4, 0.2])},
        "cross_share": {"init": np.array([0.9, 0.96]), "trained": np.array([0.06, 0.2])},
        "trace_ratio": tr,
        "trace_layer": 2,
    }
    T = study.kfac_per_net(KS)
    assert list(T) == ["kfac", "best", "cross", "within", "cross_share", "trace"]
    np.testing.assert_allclose(T["kfac"]["init"], [0.2, 0.3])  # layer means of each net
    assert np.all(T["kfac"]["trained"] == 0.5)
    np.testing.assert_allclose(T["trace"]["init"], tr["init"][:, 1])  # the trace_layer's column
    np.testing.assert_allclose(T["best"]["init"], [0.1, 0.15])
    assert T["cross_share"]["trained"].mean() == pytest.approx(0.13)


def test_inverse_structure_truth_tells_layers_from_a_rotation():
    r = infogeo.inverse_structure_truth([120, 60, 40], 0.01, seed=2)
    assert r["structured_excess"] == pytest.approx(r["structured_exact"], rel=1e-8)
    assert r["structured_excess"] < -0.5  # block-diagonal above λ but for one weak term
    assert abs(r["rotated_excess"]) < 0.1  # no layer structure: the rotated control's value
    assert r["passed"] == float(abs(r["rotated_excess"]) < 0.05)
    strict = infogeo.inverse_structure_truth([120, 60, 40], 0.01, seed=2, rotated_tol=1e-9)
    assert strict["passed"] == 0
    with pytest.raises(ParameterError, match="damping"):
        infogeo.inverse_structure_truth([12, 6, 4], 0.5, seed=2, mixed=2)
    with pytest.raises(ParameterError, match="mixed"):
        infogeo.inverse_structure_truth([12, 6, 4], 0.01, seed=2)
