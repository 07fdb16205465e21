"""Unit tests of layerwise.infogeo against closed forms, brute force and invariances (Chapter 8)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from layerwise import infogeo as ig
from layerwise import networks as nw
from layerwise.params import ParameterError

D = torch.float64


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def data(n: int = 24, d: int = 7, c: int = 4, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g, dtype=D)
    y = torch.randint(0, c, (n,), generator=g).numpy()
    return x, y


# -- Fisher–Rao identity (Liang et al., Theorem 3.1) ------------------------------------------
@pytest.mark.parametrize("activation", ["relu", "leaky_relu"])
@pytest.mark.parametrize("hidden", [[5], [6, 4], [5, 5, 5, 5]])
@pytest.mark.parametrize("labels", ["empirical", "model"])
def test_fisher_rao_identity_holds(activation, hidden, labels):
    x, y = data()
    p = nw.init_mlp([7, *hidden, 4], seed=len(hidden))
    r = ig.fisher_rao(p, x, y, activation, labels=labels)
    assert r["rel_diff"] < 1e-12
    assert ig.euler_residual(p, x, activation) < 1e-12
    # the cheap outputs-only form agrees with the per-example-gradient form
    assert abs(ig.fisher_rao_identity(p, x, y, activation, labels=labels) - r["direct"]) < 1e-12 * r["direct"]


def test_fisher_matrix_quadratic_form_matches():
    x, y = data()
    p = nw.init_mlp([7, 5, 5, 4], seed=3)
    I = ig.fisher_matrix(p, x, y)
    th = nw.flatten(p)
    # brute force: explicit sum of per-example outer products, gradients by autograd one by one
    brute = torch.zeros_like(I)
    for i in range(len(x)):
        q = {k: v.clone().requires_grad_(True) for k, v in p.items()}
        loss = ig.loss_fn(q, x[i : i + 1], ig.one_hot(y[i : i + 1], 4))
        gi = torch.cat([t.reshape(-1) for t in torch.autograd.grad(loss, list(q.values()))])
        brute += torch.outer(gi, gi) / len(x)
    assert torch.allclose(I, brute, rtol=1e-12, atol=1e-14)
    fr = ig.fisher_rao(p, x, y)
    assert abs(float(th @ I @ th) - fr["identity"]) < 1e-12 * fr["identity"]


@pytest.mark.parametrize("activation", ["relu", "leaky_relu"])
def test_model_fisher_rao_norm_matches_brute_force_fisher(activation):
    """Liang et al. Eq. (3.1) for the Fisher proper (y ~ model): θᵀIθ with I summed explicitly from
    per-example, per-class autograd gradients equals (L+1)² E Var_{y~p}(f_y) from the outputs."""
    x, _ = data(n=12)
    p = nw.init_mlp([7, 6, 5, 5, 4], seed=11)
    th = nw.flatten(p)
    prob = torch.softmax(nw.forward(p, x, activation), -1)
    I = torch.zeros(th.numel(), th.numel(), dtype=D)
    for i in range(len(x)):
        for k in range(4):
            q = {kk: v.clone().requires_grad_(True) for kk, v in p.items()}
            loss = -torch.log_softmax(nw.forward(q, x[i], activation), -1)[k]
            gi = torch.cat([t.reshape(-1) for t in torch.autograd.grad(loss, list(q.values()))])
            I += prob[i, k] * torch.outer(gi, gi) / len(x)
    quad = float(th @ I @ th)
    assert ig.fisher_rao_identity(p, x, None, activation, labels="model") == pytest.approx(quad, rel=1e-11)
    assert ig.fisher_rao(p, x, np.zeros(len(x), int), activation, labels="model")["direct"] == pytest.approx(quad, rel=1e-11)


@pytest.mark.parametrize("case", ["bias", "tanh"])
def test_fisher_rao_identity_fails_when_assumptions_fail(case):
    x, y = data()
    p = nw.init_mlp([7, 6, 6, 4], seed=1, bias=(case == "bias"), bias_std=0.5)
    act = "tanh" if case == "tanh" else "relu"
    assert ig.fisher_rao(p, x, y, act)["rel_diff"] > 1e-3
    assert ig.euler_residual(p, x, act) > 1e-3


def test_weighted_euler_identity_with_biases():
    x, _ = data()
    p = nw.init_mlp([7, 6, 6, 4], seed=2, bias=True, bias_std=0.5)
    assert ig.euler_residual(p, x, weighted=True) < 1e-12


# -- reparametrisations (Dinh et al.) -------------------------------------------------------
@pytest.mark.parametrize("alpha", [1e-2, 0.3, 7.0, 1e2])
def test_scalings_preserve_function_and_fisher_rao(alpha):
    x, y = data()
    p = nw.init_mlp([7, 8, 8, 4], seed=4)
    f0 = nw.forward(p, x)
    fr0 = ig.fisher_rao(p, x, y)["direct"]
    for q in (ig.alpha_scale(p, alpha), ig.unit_scale(p, alpha)):
        assert torch.allclose(nw.forward(q, x), f0, rtol=1e-12, atol=1e-12)
        assert abs(ig.fisher_rao(q, x, y)["direct"] - fr0) < 1e-10 * fr0
    n0, na, nu = ig.weight_norms(p), ig.weight_norms(ig.alpha_scale(p, alpha)), ig.weight_norms(ig.unit_scale(p, alpha))
    # T_alpha keeps products of layer norms and the path norm, changes the l2 norm
    for k in ("frobenius_product", "spectral_product", "path_norm"):
        assert na[k] == pytest.approx(n0[k], rel=1e-12)
    assert nu["path_norm"] == pytest.approx(n0["path_norm"], rel=1e-12)
    assert abs(np.log(na["l2"] / n0["l2"])) > 0.1
    assert abs(np.log(nu["spectral_product"] / n0["spectral_product"])) > 0.1


def test_alpha_scale_l2_norm_closed_form():
    p = nw.init_mlp([7, 8, 8, 4], seed=12)
    n1, n2, n3 = (float(p[k].norm()) for k in ("W1", "W2", "W3"))
    for a in (1e-2, 0.5, 3.0, 1e2):
        l2 = ig.weight_norms(ig.alpha_scale(p, a))["l2"]
        assert l2 == pytest.approx(np.sqrt((a * n1) ** 2 + (n2 / a) ** 2 + n3**2), rel=1e-13)


def test_sharpness_ratio_jackknife_matches_brute_force():
    x, y = data()
    p = nw.init_mlp([7, 8, 8, 4], seed=13)
    yoh = ig.one_hot(y, 4)
    d1 = ig.sharpness_draws(ig.alpha_scale(p, 30.0), x, yoh, sigma=0.05, n_draws=6, seed=3)
    d0 = ig.sharpness_draws(p, x, yoh, sigma=0.05, n_draws=6, seed=3)
    m, se = ig.expected_sharpness(p, x, yoh, sigma=0.05, n_draws=6, seed=3)
    assert m == pytest.approx(d0.mean(), rel=1e-14) and se == pytest.approx(d0.std(ddof=1) / np.sqrt(6), rel=1e-12)
    r, r_se = ig.sharpness_ratio(d1, d0)
    assert r == pytest.approx(d1.mean() / d0.mean(), rel=1e-14)
    loo = np.array([np.delete(d1, i).mean() / np.delete(d0, i).mean() for i in range(6)])
    assert r_se == pytest.approx(np.sqrt(5 / 6 * ((loo - loo.mean()) ** 2).sum()), rel=1e-12)
    with pytest.raises(ParameterError, match="paired"):
        ig.sharpness_ratio(d1, d0[:3])


def test_hessian_lanczos_matches_dense_and_transforms():
    x, y = data(n=16, d=5, c=3)
    p = nw.init_mlp([5, 4, 3], seed=5)
    yoh = ig.one_hot(y, 3)
    th = nw.flatten(p)
    unflat = ig.unflattener(p)
    H = torch.autograd.functional.hessian(lambda v: ig.loss_fn(unflat(v), x, yoh), th)
    lam = float(torch.linalg.eigvalsh(H)[-1])
    assert ig.hessian_top_eigenvalue(p, x, yoh, n_iter=th.numel()) == pytest.approx(lam, rel=1e-9)
    # H(T θ) = T^{-1} H(θ) T^{-1} for the linear reparametrisation T_alpha
    a = 3.0
    q = ig.alpha_scale(p, a)
    t = torch.cat([torch.full_like(p["W1"].reshape(-1), a), torch.full_like(p["W2"].reshape(-1), 1 / a)])
    Hq = torch.autograd.functional.hessian(lambda v: ig.loss_fn(unflat(v), x, yoh), nw.flatten(q))
    assert torch.allclose(Hq, H / t[:, None] / t[None, :], rtol=1e-9, atol=1e-12)


def test_multiplicative_noise_sharpness_is_invariant():
    x, y = data()
    p = nw.init_mlp([7, 8, 8, 4], seed=6)
    yoh = ig.one_hot(y, 4)
    m0, _ = ig.expected_sharpness(p, x, yoh, sigma=0.1, n_draws=8, mode="multiplicative")
    m1, _ = ig.expected_sharpness(ig.alpha_scale(p, 50.0), x, yoh, sigma=0.1, n_draws=8, mode="multiplicative")
    assert m1 == pytest.approx(m0, rel=1e-9)
    i0, _ = ig.expected_sharpness(p, x, yoh, sigma=0.1, n_draws=8)
    i1, _ = ig.expected_sharpness(ig.alpha_scale(p, 50.0), x, yoh, sigma=0.1, n_draws=8)
    assert i1 > 10 * abs(i0)


# -- K-FAC algebra (Martens & Grosse) ---------------------------------------------------------
def test_exact_fisher_blocks_match_brute_force():
    x, _ = data(n=10, d=5, c=3)
    p = nw.init_mlp([5, 4, 6, 3], seed=7)
    stats = ig.layer_statistics(p, x)
    # brute force: per-example, per-class gradients of the log-likelihood, weighted outer products
    th_keys = list(p)
    f = nw.forward(p, x)
    prob = torch.softmax(f, -1)
    rows, weights = [], []
    for i in range(len(x)):
        for k in range(3):
            q = {kk: v.clone().requires_grad_(True) for kk, v in p.items()}
            loss = -torch.log_softmax(nw.forward(q, x[i]), -1)[k]
            gr = torch.autograd.grad(loss, [q[kk] for kk in th_keys])
            rows.append(torch.cat([t.reshape(-1) for t in gr]))
            weights.append(prob[i, k])
    U = torch.stack(rows)
    w = torch.stack(weights)
    F = (U * w[:, None]).T @ U / len(x)
    sizes = [p[k].numel() for k in th_keys]
    off = np.concatenate([[0], np.cumsum(sizes)])
    for a in range(3):
        for b in range(3):
            blk = ig.exact_fisher_block(stats, a + 1, b + 1)
            assert torch.allclose(blk, F[off[a] : off[a + 1], off[b] : off[b + 1]], rtol=1e-10, atol=1e-13)
    # the cross-layer subset with every unit kept is the whole Fisher
    sub = ig.fisher_subset(p, x, units=10)
    assert np.allclose(sub["exact"], F.numpy(), rtol=1e-10, atol=1e-13)


def test_kronecker_algebra():
    g = torch.Generator().manual_seed(8)
    G = torch.randn(3, 3, generator=g, dtype=D)
    A = torch.randn(4, 4, generator=g, dtype=D)
    G, A = G @ G.T + torch.eye(3, dtype=D), A @ A.T + torch.eye(4, dtype=D)
    K = torch.kron(G, A)
    explicit = torch.empty(12, 12, dtype=D)
    for i in range(3):
        for j in range(3):
            for k in range(4):
                for l in range(4):
                    explicit[i * 4 + k, j * 4 + l] = G[i, j] * A[k, l]
    assert torch.equal(K, explicit)
    # row-major vec(g a^T) = kron(g, a), and E[(g⊗a)(g⊗a)^T] = G⊗A when g ⟂ a (all pairs)
    gs, as_ = torch.randn(5, 3, generator=g, dtype=D), torch.randn(6, 4, generator=g, dtype=D)
    assert torch.equal(torch.outer(gs[0], as_[0]).reshape(-1), torch.kron(gs[0], as_[0]))
    V = torch.stack([torch.kron(u, v) for u in gs for v in as_])
    assert torch.allclose(V.T @ V / 30, torch.kron(gs.T @ gs / 5, as_.T @ as_ / 6), rtol=1e-12)
    # inverse and spectrum of a Kronecker product
    assert torch.allclose(torch.linalg.inv(K), torch.kron(torch.linalg.inv(G), torch.linalg.inv(A)), rtol=1e-9)
    ev = np.sort(np.outer(torch.linalg.eigvalsh(G), torch.linalg.eigvalsh(A)).ravel())
    assert np.allclose(torch.linalg.eigvalsh(K).numpy(), ev, rtol=1e-10)
    # nearest Kronecker product recovers an exact one, and never loses to G⊗A
    B, C = ig.nearest_kronecker(K, 3, 4)
    assert torch.allclose(torch.kron(B, C), K, rtol=1e-10)
    noisy = K + 0.3 * torch.randn(12, 12, generator=g, dtype=D)
    B, C = ig.nearest_kronecker(noisy, 3, 4)
    assert ig.relative_error(noisy, torch.kron(B, C)) <= ig.relative_error(noisy, K) + 1e-12


def test_kfac_factors_and_analysis():
    x, _ = data(n=30, d=6, c=3)
    p = nw.init_mlp([6, 5, 3], seed=9)
    stats = ig.layer_statistics(p, x)
    for i in (1, 2):
        F = ig.exact_fisher_block(stats, i)
        G, A = ig.kfac_factors(stats, i)
        d_out, d_in = G.shape[0], A.shape[0]
        # traces factorise exactly: tr F = E[|g|^2 |a|^2] while tr(G⊗A) = E|g|^2 E|a|^2
        assert F.shape == (d_out * d_in, d_out * d_in)
        assert float(torch.trace(torch.kron(G, A))) == pytest.approx(float(torch.trace(G) * torch.trace(A)), rel=1e-12)
    r = ig.kfac_analysis(p, x)
    assert np.all(r["best_kron_error"] <= r["kfac_error"] + 1e-12)
    assert np.all(r["kfac_error"] >= 0)
    assert r["eig_exact_1"].shape == r["eig_kfac_1"].shape == (30,)


def test_trace_ratio_and_cross_layer_split_match_brute_force():
    x, _ = data(n=20, d=5, c=3)
    p = nw.init_mlp([5, 4, 6, 3], seed=14)
    stats = ig.layer_statistics(p, x)
    for i in (1, 2, 3):
        G, A = ig.kfac_factors(stats, i)
        F = ig.exact_fisher_block(stats, i)
        r, se = ig.trace_ratio(stats, i)
        assert r == pytest.approx(float(torch.trace(G) * torch.trace(A) / torch.trace(F)), rel=1e-12)
        # delete-one jackknife by recomputing the statistics without input m
        loo = []
        for m in range(len(x)):
            keep = [j for j in range(len(x)) if j != m]
            s_m = ig.layer_statistics(p, x[keep])
            G_m, A_m = ig.kfac_factors(s_m, i)
            loo.append(float(torch.trace(G_m) * torch.trace(A_m) / torch.trace(ig.exact_fisher_block(s_m, i))))
        loo = np.array(loo)
        n = len(x)
        assert se == pytest.approx(np.sqrt((n - 1) / n * ((loo - loo.mean()) ** 2).sum()), rel=1e-9)
    # the whole Fisher (fisher_subset keeping every unit) against block-diagonal K-FAC
    sub = ig.fisher_subset(p, x, units=10)
    Fw, K = sub["exact"], sub["kfac"]
    edges = np.concatenate([[0], np.cumsum(sub["block_sizes"])])
    mask = np.zeros_like(Fw, dtype=bool)
    for a, b in zip(edges[:-1], edges[1:]):
        mask[a:b, a:b] = True
    r = ig.kfac_analysis(p, x)
    nF = np.linalg.norm(Fw)
    assert float(r["cross_layer_error"]) == pytest.approx(np.linalg.norm(Fw[~mask]) / nF, rel=1e-10)
    assert float(r["within_block_error"]) == pytest.approx(np.linalg.norm((Fw - K)[mask]) / nF, rel=1e-10)
    assert np.hypot(r["cross_layer_error"], r["within_block_error"]) == pytest.approx(np.linalg.norm(Fw - K) / nF, rel=1e-10)


# -- training and validation ----------------------------------------------------------------
def test_randomize_labels_and_train():
    y = np.arange(100) % 10
    assert np.array_equal(ig.randomize_labels(y, 0.0, 10), y)
    yr = ig.randomize_labels(y, 1.0, 10, seed=1)
    assert 0.6 < (yr != y).mean() < 1.0  # random labels coincide with the true one 1/10 of the time
    x, yy = data(n=40, d=6, c=3)
    p, hist = ig.train_mlp(x, yy, [6, 16, 3], steps=300, lr=1e-2, seed=0, target_loss=0.05)
    assert hist[-1] < hist[0]
    m = ig.capacity_measures(p, x, yy)
    assert m["margin"] > 0 and m["fisher_rao_model"] > 0


def test_bad_input_raises_parameter_error():
    x, y = data()
    p = nw.init_mlp([7, 5, 4])
    with pytest.raises(ParameterError, match="activation"):
        ig.fisher_rao(p, x, y, "gelu")
    with pytest.raises(ParameterError, match="labels"):
        ig.fisher_rao(p, x, y, labels="true")
    with pytest.raises(ParameterError, match="alpha"):
        ig.alpha_scale(p, -1.0)
    with pytest.raises(ParameterError, match="layer"):
        ig.alpha_scale(p, 2.0, layer=2)
    with pytest.raises(ParameterError, match="fraction"):
        ig.randomize_labels(y, 1.5, 4)
    with pytest.raises(ParameterError, match="widths"):
        nw.init_mlp([7])
    with pytest.raises(ParameterError, match="mode"):
        ig.expected_sharpness(p, x, ig.one_hot(y, 4), mode="uniform")
    with pytest.raises(ParameterError, match="bias-free"):
        ig.layer_statistics(nw.init_mlp([7, 5, 4], bias=True), x)


# -- Chapter 8's studies -----------------------------------------------------------------------
def test_fisher_rao_table_and_summary():
    x, y = data(n=12, d=6, c=10)
    keys = []

    def seed_of(*k):
        keys.append(k)
        return len(keys)

    rows = ig.fisher_rao_table(x, y, [1, 2], [4, 5], seed_of)
    assert len(rows) == len(ig.FR_CASES) * 2 * 2 * len(ig.FISHER_LABELS)
    assert keys[0] == ("relu", False, 1, 4) and len(set(keys)) == len(keys) == len(rows) // 2
    for r in rows:
        assert r["n_params"] == 6 * r["width"] + (r["L"] - 1) * r["width"] ** 2 + r["width"] * 10 + (
            r["L"] * r["width"] + 10 if r["bias"] else 0)
        if r["activation"] in ig.HOMOGENEOUS and not r["bias"]:
            assert r["rel_diff"] < 1e-12 and r["euler"] < 1e-12
        else:
            assert r["rel_diff"] > 1e-8
        if r["bias"]:
            assert r["euler_weighted"] < 1e-12 < r["euler"]
    s = ig.fisher_rao_summary(rows)
    homog = [r for r in rows if r["activation"] in ig.HOMOGENEOUS and not r["bias"]]
    assert s["fr_homog_max"] == max(r["rel_diff"] for r in homog)
    assert s["fr_homog_eps"] == pytest.approx(s["fr_homog_max"] / np.finfo(float).eps, rel=1e-15)
    assert s["fr_tanh_min"] == min(r["rel_diff"] for r in rows if r["activation"] == "tanh")
    assert s["fr_bias_max"] == max(r["rel_diff"] for r in rows if r["bias"])
    assert s["euler_weighted_max"] == max(r["euler_weighted"] for r in rows if r["bias"])
    assert s["fr_n_nets"] == 16


def test_trained_mlp_arrays_round_trip():
    x, y = data(n=30, d=6, c=3)
    a = ig.trained_mlp(x, y, [6, 8, 3], steps=50, lr=1e-2, seed=4, target_loss=0.0)
    p, hist = ig.train_mlp(x, y, [6, 8, 3], steps=50, lr=1e-2, seed=4)
    assert np.array_equal(a["loss"], hist) and set(a) == {"W1", "W2", "loss"}
    q = ig.arrays_to_params(a)
    assert set(q) == {"W1", "W2"} and all(torch.equal(q[k], p[k]) for k in p)
    assert all(np.array_equal(v, p[k].numpy()) for k, v in ig.params_to_arrays(p).items())


def test_reparam_sweep_invariants_and_closed_forms():
    x, y = data(n=20, d=5, c=10)
    p = nw.init_mlp([5, 6, 6, 10], seed=2)
    al = [0.1, 1.0, 10.0]
    R = ig.reparam_sweep(p, x, y, alphas=al, lanczos_iter=8, sharp_draws=3, sharp_sigma=0.05,
                         seed_lanczos=1, seed_lanczos2=2, seed_noise=3)
    assert R["dfun"].max() < 1e-12 and np.abs(R["fr"] - 1).max() < 1e-10
    w = [float(p[f"W{l}"].norm() ** 2) for l in (1, 2, 3)]
    assert np.allclose(R["l2"][0] ** 2, [a**2 * w[0] + w[1] / a**2 + w[2] for a in al], rtol=1e-12)
    for k in ("l2", "spec", "lam", "iso", "mult"):  # both rescalings are the identity at α = 1
        assert R[k][0, 1] == pytest.approx(R[k][1, 1], rel=1e-12)
    assert np.allclose(R["iso_draws"].mean(-1), R["iso"]) and R["iso_draws"].shape == (2, 3, 3)
    assert np.allclose(R["mult"], R["mult"][0, 1], rtol=1e-10)  # weight-proportional noise is invariant
    d = ig.sharpness_draws(ig.unit_scale(p, 10.0), x, ig.one_hot(y, 10), sigma=0.05, n_draws=3, seed=3)
    assert np.array_equal(d, R["iso_draws"][1, 2])


def test_dinh_ranges_follow_from_the_alpha_grid():
    # the ℓ₂ range, the unit-wise spectral range and the Hessian's sharpening under T_α are set by the α grid
    # (closed forms, formerly claims of Chapter 8): on a random net and the chapter's four decades they exceed
    # an order of magnitude, two and two orders respectively
    x, y = data(n=20, d=5, c=10)
    p = nw.init_mlp([5, 6, 6, 10], seed=4)
    R = ig.reparam_sweep(p, x, y, alphas=[0.01, 1.0, 100.0], lanczos_iter=10, sharp_draws=2, sharp_sigma=0.05,
                         seed_lanczos=1, seed_lanczos2=2, seed_noise=3)
    s = ig.reparam_summary(R)
    assert s["l2_range"] >= 10 and s["spec_unit_range"] >= 100 and s["lam_ratio"] >= 100


def test_reparam_summary_on_closed_form_sweep():
    al = np.array([0.01, 0.1, 1.0, 10.0, 100.0])
    lam = np.vstack([3 * np.maximum(al, 1 / al) ** 2, np.full(5, 3.0)])
    draws = np.ones((2, 5, 4)) * np.arange(1, 5)
    draws[0, 0] *= 200
    draws[0, 4] *= 50
    R = dict(alphas=al, lam=lam, lam2=lam * (1 + 1e-3), iso_draws=draws, mult=np.full((2, 5), 0.5),
             spec=np.vstack([np.full(5, 2.0), 2.0 * al**2]), dfun=np.full((2, 5), 1e-16),
             fr=np.full((2, 5), 1 + 1e-15), l2=np.vstack([al + 1 / al, np.ones(5)]))
    s = ig.reparam_summary(R)
    assert s["i1"] == 2 and s["lam_ratio"] == pytest.approx(1e4)
    assert s["slope_hi"] == pytest.approx(2) and s["slope_lo"] == pytest.approx(-2)
    assert s["lam_conv"] == pytest.approx(1e-3 / (1 + 1e-3))
    assert s["iso_ratio"] == pytest.approx(50) and s["iso_se"] == pytest.approx(0, abs=1e-12)
    assert s["mult_dev"] == 0 and s["spec_t_dev"] == 0 and s["inv_dev"] == pytest.approx(1e-15, rel=0.2)
    assert s["l2_range"] == pytest.approx((100.01) / 2) and s["spec_unit_range"] == pytest.approx(1e8)
    assert s["alpha_second"] == 10.0


def test_kfac_study_and_summary():
    x, _ = data(n=15, d=5, c=4)
    trained = nw.init_mlp([5, 4, 4, 4], seed=9)
    K0 = ig.kfac_study(trained, 3, x, units=2)
    ref = ig.kfac_analysis(nw.init_mlp([5, 4, 4, 4], seed=3), x)
    assert all(np.array_equal(K0[f"init_{k}"], v) for k, v in ref.items())
    assert np.array_equal(K0["trained_kfac_error"], ig.kfac_analysis(trained, x)["kfac_error"])
    assert K0["init_sub_exact"].shape == (3 * 4, 3 * 4) and list(K0["trained_sub_block_sizes"]) == [4, 4, 4]
    K1 = ig.kfac_study(trained, 5, x)
    assert not any("_sub_" in k for k in K1)
    S = ig.kfac_summary([K0, K1])
    assert S["err"]["init"].shape == (2, 3)
    assert np.array_equal(S["gap"], S["err"]["trained"].mean(1) - S["err"]["init"].mean(1))
    tr = np.array([K0["init_trace_ratio"], K1["init_trace_ratio"]])
    assert S["trace_worst"] == tr.flat[np.argmax(np.abs(tr - 1))]
    trt = np.array([K0["trained_trace_ratio"], K1["trained_trace_ratio"]])
    assert S["trace_worst_trained"] == trt.flat[np.argmax(np.abs(trt - 1))]
    lay = int(np.argmax(np.abs(tr.mean(0) - 1)))
    assert S["trace_layer"] == lay + 1 and S["trace_mean"][0] == pytest.approx(tr[:, lay].mean())
    assert S["trace_mean"][1] == pytest.approx(tr[:, lay].std(ddof=1) / np.sqrt(2)) and S["trace_mean"][2] == 1
    assert S["trace_mean_trained"] == trt.mean(0)[np.argmax(np.abs(trt.mean(0) - 1))]
    one = ig.kfac_summary([K0])  # one net: the jackknife error over inputs, no d.o.f.
    assert one["trace_mean"][1] == K0["init_trace_ratio_se"][one["trace_layer"] - 1] and one["trace_mean"][2] is None
    worst = [max((K[f"{t}_kfac_error"] / K[f"{t}_diag_error"]).max() for t in ig.KFAC_STATES) for K in (K0, K1)]
    assert np.allclose(S["diag_ratio"], worst) and S["diag_ratio"].shape == (2,)
    assert ig.kfac_findings(S)["diag_ratio"][0] == pytest.approx(np.mean(worst))
    assert S["cross"]["trained"][0] == float(K0["trained_cross_layer_error"])
    # the share of the squared K-FAC error in the dropped blocks, against the whole Fisher built explicitly
    stats = ig.layer_statistics(trained, x)
    Fw = torch.cat([torch.cat([ig.exact_fisher_block(stats, i, j) for j in (1, 2, 3)], 1) for i in (1, 2, 3)], 0)
    Kb = torch.block_diag(*[torch.kron(*ig.kfac_factors(stats, i)) for i in (1, 2, 3)])
    diag_mask = torch.block_diag(*[torch.ones(4 * d, 4 * d) for d in (5, 4, 4)]).bool()
    E = Fw - Kb
    assert S["cross_share"]["trained"][0] == pytest.approx(float(E[~diag_mask].norm() ** 2 / E.norm() ** 2), rel=1e-10)


def test_label_randomisation_run_matches_its_parts():
    x, y = data(n=30, d=6, c=4)
    xt, yt = data(n=10, d=6, c=4, seed=1)
    r = ig.label_randomisation_run(x, y, xt, yt, [6, 12, 4], fraction=0.0, budget=60, steps=200, lr=1e-2,
                                   target_loss=0.3, label_seed=1, init_seed=2)
    # fixed loss: the network train_mlp returns; fixed budget: train_mlp run for exactly `budget` steps
    p_loss, h_loss = ig.train_mlp(x, y, [6, 12, 4], steps=200, lr=1e-2, seed=2, target_loss=0.3)
    p_budget, h_budget = ig.train_mlp(x, y, [6, 12, 4], steps=60, lr=1e-2, seed=2)
    assert int(r["target_step"]) == len(h_loss) - 1 != 60
    for q, p in (("loss", p_loss), ("budget", p_budget)):
        m = {**ig.capacity_measures(p, x, y), **ig.fisher_rao_factors(p, x, y)}
        assert all(float(r[f"{q}_{k}"]) == pytest.approx(v, rel=1e-10) for k, v in m.items())
        assert float(r[f"{q}_test_accuracy"]) == float((nw.forward(p, xt).argmax(1).numpy() == yt).mean())
    assert float(r["loss_final_loss"]) == pytest.approx(h_loss[-1], rel=1e-12) and h_loss[-1] <= 0.3
    assert float(r["budget_final_loss"]) == pytest.approx(float(ig.loss_fn(p_budget, x, ig.one_hot(y, 4))), rel=1e-12)
    # a target that is never reached: the fixed-loss entries are NaN, the budget ones are not
    r2 = ig.label_randomisation_run(x, y, xt, yt, [6, 12, 4], fraction=1.0, budget=20, steps=30, lr=1e-2,
                                    target_loss=0.0, label_seed=1, init_seed=2)
    assert int(r2["target_step"]) == -1 and np.isnan(float(r2["loss_l2"])) and np.isfinite(float(r2["budget_l2"]))


def test_train_two_protocols_snapshots():
    x, y = data(n=30, d=6, c=4)
    run = ig.train_two_protocols(x, y, [6, 10, 4], budget=200, max_steps=400, lr=1e-2, seed=3, target_loss=0.5)
    p_loss, h_loss = ig.train_mlp(x, y, [6, 10, 4], steps=400, lr=1e-2, seed=3, target_loss=0.5)
    assert run["target_step"] == len(h_loss) - 1 < 200  # reached first, then trained on to the budget
    assert len(run["hist"]) == 201 and run["hist"][run["target_step"]] <= 0.5 < run["hist"][run["target_step"] - 1]
    assert all(torch.allclose(run["loss"][k], p_loss[k], rtol=1e-12, atol=0) for k in p_loss)
    p_b, _ = ig.train_mlp(x, y, [6, 10, 4], steps=200, lr=1e-2, seed=3)
    assert all(torch.allclose(run["budget"][k], p_b[k], rtol=1e-12, atol=0) for k in p_b)
    assert float(ig.loss_fn(run["budget"], x, ig.one_hot(y, 4))) == pytest.approx(run["hist"][200], rel=1e-12)
    with pytest.raises(ParameterError, match="rand_budget"):
        ig.check_params({"rand_budget": 500, "rand_steps": 400})
    with pytest.raises(ParameterError, match="budget"):
        ig.train_two_protocols(x, y, [6, 10, 4], budget=50, max_steps=10, lr=1e-2, seed=3, target_loss=0.5)


@pytest.mark.parametrize("scale", [1.0, 8.0])
def test_fisher_rao_factors_multiply_to_the_norm(scale):
    """(L+1)·R·M equals both Fisher–Rao norms of Eq. (3.1); the empirical M is computed from the
    residual-weighted margins on their own, so this checks ⟨∂ℓ/∂f, f⟩ = −(1 − p_y)·m̄ per example."""
    x, y = data()
    p = nw.init_mlp([7, 6, 6, 4], seed=5)
    p["W3"] = p["W3"] * scale  # sharper softmax
    fac = ig.fisher_rao_factors(p, x, y)
    for lab in ("empirical", "model"):
        fr = np.sqrt(ig.fisher_rao(p, x, y, labels=lab)["direct"])  # per-example gradients, no identity used
        assert 3 * fac[f"R_{lab}"] * fac[f"M_{lab}"] == pytest.approx(fr, rel=1e-10)


def test_fisher_rao_factors_two_classes_closed_form():
    """Two classes, logits (0, s): r = 1 − p_y and m̄ = ±s exactly, Var_p(f) = p(1 − p)s², so
    R_model² = E[min p], M_model² = E[p(1−p)s²]/E[min p]; R_empirical = √E[(1−p_y)²], M_empirical = |s|."""
    x = torch.tensor([[1.0], [2.0], [0.5]], dtype=D)
    p = {"W1": torch.tensor([[1.0]], dtype=D), "W2": torch.tensor([[0.0], [1.5]], dtype=D)}
    y = np.array([1, 1, 1])
    s = 1.5 * x[:, 0].numpy()
    q = 1 / (1 + np.exp(-s))  # p_1
    fac = ig.fisher_rao_factors(p, x, y)
    assert fac["R_empirical"] == pytest.approx(np.sqrt(np.mean((1 - q) ** 2)), rel=1e-12)
    assert fac["M_empirical"] == pytest.approx(np.sqrt(np.mean((1 - q) ** 2 * s**2) / np.mean((1 - q) ** 2)), rel=1e-12)
    assert fac["R_model"] == pytest.approx(np.sqrt(np.mean(1 - q)), rel=1e-12)
    assert fac["M_model"] == pytest.approx(np.sqrt(np.mean(q * (1 - q) * s**2) / np.mean(1 - q)), rel=1e-12)


def test_loss_share_closed_forms():
    R = np.array([[1e-3, 1e-2], [2e-3, 2e-2], [1e-3, 1e-2]])
    # M/γ unchanged: the loss factor carries all of the change
    share, se = ig.loss_share(R, 5 * R)
    assert share == pytest.approx(1.0) and se == pytest.approx(0.0, abs=1e-12)
    # M/γ doubles as well: share = log 10 / (log 10 + log 2), exactly, for every pair
    share, se = ig.loss_share(R, 5 * R * np.array([1.0, 2.0]))
    assert share == pytest.approx(np.log(10) / np.log(20)) and se == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ParameterError, match="shape"):
        ig.loss_share(R[:1], R[:1])


def test_welch_log_ratio_matches_scipy():
    from scipy import stats as st

    rng = np.random.default_rng(0)
    lo, hi = np.exp(rng.normal(0, 0.3, 5)), np.exp(rng.normal(1, 0.8, 7))
    diff, se, dof = ig.welch_log_ratio(lo, hi)
    t = st.ttest_ind(np.log(hi), np.log(lo), equal_var=False)
    assert diff / se == pytest.approx(t.statistic, rel=1e-12) and dof == pytest.approx(t.df, rel=1e-12)
    assert diff == pytest.approx(np.log(hi).mean() - np.log(lo).mean(), rel=1e-14)
    assert ig.welch_log_ratio([1.0, 1.0], [1.0, 1.0, 1.0]) == (0.0, 0.0, 3.0)  # no spread: the d.o.f. add up


def test_change_verdict_follows_the_t_interval():
    from layerwise.claims import quantile

    q = quantile(0.99, 4)
    assert ig.change_verdict(1.01 * q, 1.0, 4) == "grows"
    assert ig.change_verdict(0.99 * q, 1.0, 4) == "does not change measurably"
    assert ig.change_verdict(-1.01 * q, 1.0, 4) == "shrinks"
    assert ig.change_verdict(-1e-9, 0.0, 4) == "shrinks" and ig.change_verdict(0.0, 0.0, 4) != "grows"


def test_tangent_check_constant_within_regions():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(40, 6, generator=g, dtype=D)
    p = nw.init_mlp([6, 10, 10, 1], seed=5)
    ts = ig.tangent_check(p, x, 6, np.random.default_rng(1))
    assert 6 <= len(ts["same"]) <= 12 and len(ts["different"]) <= 6
    assert ts["same"].max() < 1e-12
    assert len(ts["different"]) > 0 and ts["different"].min() > 1e-6
    again = ig.tangent_check(p, x, 6, np.random.default_rng(1))
    assert all(np.array_equal(ts[k], again[k]) for k in ts)
    with pytest.raises(ParameterError, match="bias-free"):
        ig.tangent_check(nw.init_mlp([6, 10, 1], bias=True), x, 2, np.random.default_rng(0))


def test_split_digits_and_prose_helpers():
    x = np.arange(50 * 2 * 2, dtype=float).reshape(50, 2, 2)
    y = np.arange(50)
    Xtr, Ytr, Xte, Yte = ig.split_digits(x, y, np.random.default_rng(3), 20, n_test=10)
    assert Xtr.shape == (20, 4) and Xte.shape == (10, 4) and Xtr.dtype == torch.float64
    assert not set(Ytr) & set(Yte)
    assert torch.equal(Xtr[:, 0], torch.tensor(Ytr * 4, dtype=D))  # rows stay with their labels
    with pytest.raises(ParameterError):
        ig.split_digits(x, y, np.random.default_rng(3), 45, n_test=10)
    assert ig.ratio_text(12345.6) == "12\u2009346" and ig.ratio_text(3.14159, 0.0271) == "3.1 ± 0.027"
    assert ig.join_words(["a"]) == "a" and ig.join_words(["a", "b", "c"]) == "a, b and c"


def _synthetic_runs(norm_factor: float, r_factor: float, fr_factor: float) -> Any:
    """Label-randomisation runs whose random-label nets are their clean twins with every norm
    over γ scaled by ``norm_factor``, the loss factors R by ``r_factor`` and the Fisher–Rao norms
    over γ by ``fr_factor`` (per net, exactly)."""
    import pandas as pd

    rng = np.random.default_rng(3)
    rows = []
    base = {s: rng.uniform(1.0, 2.0, size=12) for s in range(4)}
    for frac in (0.0, 1.0):
        for s in range(4):
            b = base[s]
            row = {"fraction": frac, "net": s, "target_step": float(100 + 50 * frac if s else -1)}
            for q in ig.PROTOCOLS:
                margin = 0.5 + 0.1 * s
                scale = lambda f: f if frac else 1.0  # noqa: E731
                vals = {m: b[i] * margin * scale(norm_factor) for i, m in enumerate(ig.RAND_MEASURES[:4])}
                vals.update({f"fisher_rao_{k}": b[4 + i] * margin * scale(fr_factor)
                             for i, k in enumerate(("model", "empirical"))})
                vals.update({f"M_{k}": b[6 + i] * margin for i, k in enumerate(("model", "empirical"))})
                vals.update({f"R_{k}": b[8 + i] * scale(r_factor) for i, k in enumerate(("model", "empirical"))})
                vals.update(margin=margin, train_accuracy=1.0, test_accuracy=0.1 + 0.01 * s if frac else 0.9,
                            final_loss=b[10] * (10 if frac else 1))
                row.update({f"{q}_{k}": v for k, v in vals.items()})
            rows.append(row)
    return pd.DataFrame(rows)


def test_label_randomisation_summary_against_exact_ratios():
    S = ig.label_randomisation_summary(_synthetic_runs(norm_factor=4.0, r_factor=3.0, fr_factor=9.0))
    for q in ig.PROTOCOLS:
        for m in ig.RAND_MEASURES[:4]:
            diff, se, dof = S["log_ratio"][q, m]
            assert diff == pytest.approx(np.log(4.0), abs=1e-12) and se > 0 and dof > 0
            assert S["verdict"][q, m] == "grows"
        assert S["log_ratio"][q, "M_model"][0] == pytest.approx(0.0, abs=1e-12)
        for k in ("model", "empirical"):
            share, se = S["loss_share"][q, k]   # Δlog R / Δlog(‖θ‖_fr/γ) = log 3 / log 9 for every pair
            assert share == pytest.approx(0.5, abs=1e-12) and se == pytest.approx(0.0, abs=1e-12)
        assert list(S["tables"][q].columns[:3]) == ["fraction", "net", "target_step"]
    assert S["chance"].mean == pytest.approx(0.115) and S["chance"].n == 4
    from scipy.stats import spearmanr

    separated = spearmanr([0] * 4 + [1] * 4, np.arange(8)).statistic  # every random net above every clean one
    assert S["min_train_accuracy"] == 1.0 and all(r == pytest.approx(separated) for r in S["rho"].values())
    g = S["glue"]
    assert g["rand_norms_verdict_loss"] == "all four rise" and g["rand_unreached"] == 2
    assert g["rand_fit_reading"] == "every network fits its training labels"
    assert g["share_model_budget"] == S["loss_share"]["budget", "model"]
    assert S["glue_3"]["rand_steps_random"] == pytest.approx((-1 + 3 * 150) / 4)
    shrink = ig.label_randomisation_summary(_synthetic_runs(norm_factor=0.25, r_factor=3.0, fr_factor=9.0))
    assert shrink["glue"]["rand_norms_verdict_budget"] == (
        "a fall for the ℓ₂ norm, Frobenius product, spectral product and ℓ₂ path norm")


def test_protocol_table_names_the_protocols():
    with pytest.raises(ParameterError, match="q"):
        ig.protocol_table(_synthetic_runs(2.0, 2.0, 2.0), "epochs")


def test_kfac_findings_reads_margins_errors_and_the_dominant_part():
    err = {"init": np.array([[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]]), "trained": np.array([[0.2, 0.3, 0.4], [0.5, 0.4, 0.3]])}
    KS = {"err": err, "best": {t: err[t] / 2 for t in err}, "diag": {t: err[t] + 0.5 for t in err},
          "cross": {"init": np.array([0.3, 0.5]), "trained": np.array([0.1, 0.1])},
          "within": {"init": np.array([0.1, 0.1]), "trained": np.array([0.4, 0.2])},
          "gap": np.array([0.1, 0.2]), "cross_share": {"init": np.array([0.9, 0.96]), "trained": np.array([0.06, 0.2])},
          "trace_worst": 0.97, "trace_worst_se": 0.01, "diag_ratio": np.array([0.4, 0.6, 0.5])}
    F = ig.kfac_findings(KS)
    assert F["diag_ratio"][0] == pytest.approx(0.5) and F["diag_ratio"][1] == pytest.approx(0.1 / np.sqrt(3))
    assert F["diag_ratio"][2] == 2
    assert F["diag_margin"] == pytest.approx(0.5)
    assert F["gap"][0] == pytest.approx(0.15) and F["gap"][1] == pytest.approx(0.05) and F["gap"][2] == 1
    assert F["glue"]["kfac_err_max"] == pytest.approx(0.35) and F["glue"]["diag_err_min"] == pytest.approx(0.7)
    assert F["glue"]["kfac_nets"] == 2 and F["glue_3"] == {"kfac_trace_worst": (0.97, 0.01)}
    assert F["glue"]["cross_verdict"].endswith("error at initialisation, the Kronecker factorisation of the diagonal "
                                               "blocks more after training")
    one = ig.kfac_findings({**KS, "gap": np.array([0.1]), "cross": {t: np.array([0.5]) for t in err},
                            "within": {t: np.array([0.1]) for t in err},
                            "cross_share": {t: np.array([0.9]) for t in err}})
    assert one["gap"] == (pytest.approx(0.1), None, None) and one["glue"]["kfac_nets"] == 1
    assert one["glue"]["cross_verdict"].startswith("the blocks between layers that K-FAC drops carry more")
