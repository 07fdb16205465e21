"""Unit tests of layerwise.infogeo against closed forms, brute force and invariances (Chapter 8)."""

from __future__ import annotations

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
    assert (
        abs(ig.fisher_rao_identity(p, x, y, activation, labels=labels) - r["direct"])
        < 1e-12 * r["direct"]
    )


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
    assert ig.fisher_rao_identity(p, x, None, activation, labels="model") == pytest.approx(
        quad, rel=1e-11
    )
    assert ig.fisher_rao(p, x, np.zeros(len(x), int), activation, labels="model")[
        "direct"
    ] == pytest.approx(quad, rel=1e-11)


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
    n0, na, nu = (
        ig.weight_norms(p),
        ig.weight_norms(ig.alpha_scale(p, alpha)),
        ig.weight_norms(ig.unit_scale(p, alpha)),
    )
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
    assert m == pytest.approx(d0.mean(), rel=1e-14) and se == pytest.approx(
        d0.std(ddof=1) / np.sqrt(6), rel=1e-12
    )
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
    t = torch.cat(
        [torch.full_like(p["W1"].reshape(-1), a), torch.full_like(p["W2"].reshape(-1), 1 / a)]
    )
    Hq = torch.autograd.functional.hessian(lambda v: ig.loss_fn(unflat(v), x, yoh), nw.flatten(q))
    assert torch.allclose(Hq, H / t[:, None] / t[None, :], rtol=1e-9, atol=1e-12)


def test_top_hessian_eigenvalue_scales_as_alpha_squared_at_both_ends():
    # Dinh et al. 2017, §4: λ_max(T_α θ) = λ_max(T⁻¹HT⁻¹) → α² λ_max(H₂₂) for α → ∞ and
    # α⁻² λ_max(H₁₁) for α → 0, so its log-log slope tends to ±2 (formerly Chapter 8's claims
    # hessian_slope_{large,small}_alpha, which held by construction); through Lanczos on the
    # transformed net, against the dense limit
    x, y = data(n=16, d=5, c=3, seed=2)
    p = nw.init_mlp([5, 4, 3], seed=7)
    yoh = ig.one_hot(y, 3)
    n = nw.flatten(p).numel()

    def lam(a):
        return ig.hessian_top_eigenvalue(ig.alpha_scale(p, a), x, yoh, n_iter=n)

    for lo, hi, slope in ((1e3, 1e4, 2.0), (1e-4, 1e-3, -2.0)):
        assert np.log(lam(hi) / lam(lo)) / np.log(hi / lo) == pytest.approx(slope, abs=1e-3)
    # a limit, not an identity: one decade from α = 1 the slope is not yet 2
    assert abs(np.log(lam(10.0) / lam(1.0)) / np.log(10.0) - 2.0) > 1e-3


def test_multiplicative_noise_sharpness_is_invariant():
    x, y = data()
    p = nw.init_mlp([7, 8, 8, 4], seed=6)
    yoh = ig.one_hot(y, 4)
    m0, _ = ig.expected_sharpness(p, x, yoh, sigma=0.1, n_draws=8, mode="multiplicative")
    m1, _ = ig.expected_sharpness(
        ig.alpha_scale(p, 50.0), x, yoh, sigma=0.1, n_draws=8, mode="multiplicative"
    )
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
            assert torch.allclose(
                blk, F[off[a] : off[a + 1], off[b] : off[b + 1]], rtol=1e-10, atol=1e-13
            )
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
    assert torch.allclose(
        torch.linalg.inv(K), torch.kron(torch.linalg.inv(G), torch.linalg.inv(A)), rtol=1e-9
    )
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
        assert float(torch.trace(torch.kron(G, A))) == pytest.approx(
            float(torch.trace(G) * torch.trace(A)), rel=1e-12
        )
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
        assert r == pytest.approx(
            float(torch.trace(G) * torch.trace(A) / torch.trace(F)), rel=1e-12
        )
        # delete-one jackknife by recomputing the statistics without input m
        loo = []
        for m in range(len(x)):
            keep = [j for j in range(len(x)) if j != m]
            s_m = ig.layer_statistics(p, x[keep])
            G_m, A_m = ig.kfac_factors(s_m, i)
            loo.append(
                float(
                    torch.trace(G_m) * torch.trace(A_m) / torch.trace(ig.exact_fisher_block(s_m, i))
                )
            )
        loo = np.array(loo)
        n = len(x)
        assert se == pytest.approx(np.sqrt((n - 1) / n * ((loo - loo.mean()) ** 2).sum()), rel=1e-9)
    # the whole Fisher (fisher_subset keeping every unit) against block-diagonal K-FAC
    sub = ig.fisher_subset(p, x, units=10)
    Fw, K = sub["exact"], sub["kfac"]
    edges = np.concatenate([[0], np.cumsum(sub["block_sizes"])])
    mask = np.zeros_like(Fw, dtype=bool)
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        mask[a:b, a:b] = True
    r = ig.kfac_analysis(p, x)
    nF = np.linalg.norm(Fw)
    assert float(r["cross_layer_error"]) == pytest.approx(np.linalg.norm(Fw[~mask]) / nF, rel=1e-10)
    assert float(r["within_block_error"]) == pytest.approx(
        np.linalg.norm((Fw - K)[mask]) / nF, rel=1e-10
    )
    assert np.hypot(r["cross_layer_error"], r["within_block_error"]) == pytest.approx(
        np.linalg.norm(Fw - K) / nF, rel=1e-10
    )


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


def test_train_two_protocols_snapshots():
    """Both read-offs equal separate :func:`train_mlp` runs of that many steps; the fixed-loss one
    is the first step with loss ≤ target *and* every label fitted (checked at every step), and
    here the loss reaches the target well before the last label is fitted, so a read-off at the
    first loss ≤ target alone fails this test."""
    x, y = data(n=30, d=6, c=4)
    run = ig.train_two_protocols(
        x, y, [6, 10, 4], budget=200, max_steps=400, lr=1e-2, seed=3, target_loss=0.5
    )
    h, t = run["hist"], run["target_step"]
    first = next(k for k, v in enumerate(h) if v <= 0.5)
    assert first + 20 < t < 200 and len(h) == 201  # reached first, then trained on to the budget

    def fitted(p):
        return bool((ig.margins(ig.forward(p, x), y) > 0).all())

    params, due = nw.init_mlp([6, 10, 4], seed=3, dtype=D), []  # train_mlp's run, every step seen
    nw.train(
        params,
        lambda idx: ig.loss_fn(params, x, ig.one_hot(y, 4)),
        lr=1e-2,
        optimizer="adam",
        sampling="full",
        steps=t + 1,
        callback=lambda k, v: due.append(v is not None and v <= 0.5 and fitted(params)),
    )
    assert due.index(True) == t
    p_k, _ = ig.train_mlp(x, y, [6, 10, 4], steps=t, lr=1e-2, seed=3)
    assert all(torch.allclose(run["loss"][k], p_k[k], rtol=1e-12, atol=0) for k in p_k)
    p_b, _ = ig.train_mlp(x, y, [6, 10, 4], steps=200, lr=1e-2, seed=3)
    assert all(torch.allclose(run["budget"][k], p_b[k], rtol=1e-12, atol=0) for k in p_b)
    assert float(ig.loss_fn(run["budget"], x, ig.one_hot(y, 4))) == pytest.approx(
        run["hist"][200], rel=1e-12
    )
    with pytest.raises(ParameterError, match="budget"):
        ig.train_two_protocols(
            x, y, [6, 10, 4], budget=50, max_steps=10, lr=1e-2, seed=3, target_loss=0.5
        )


@pytest.mark.parametrize("scale", [1.0, 8.0])
def test_fisher_rao_factors_multiply_to_the_norm(scale):
    """(L+1)·R·M equals both Fisher–Rao norms of Eq. (3.1); the empirical M is computed from the
    residual-weighted margins on their own, so this checks ⟨∂ℓ/∂f, f⟩ = −(1 − p_y)·m̄ per example."""
    x, y = data()
    p = nw.init_mlp([7, 6, 6, 4], seed=5)
    p["W3"] = p["W3"] * scale  # sharper softmax
    fac = ig.fisher_rao_factors(p, x, y)
    for lab in ("empirical", "model"):
        fr = np.sqrt(
            ig.fisher_rao(p, x, y, labels=lab)["direct"]
        )  # per-example gradients, no identity used
        assert 3 * fac[f"R_{lab}"] * fac[f"M_{lab}"] == pytest.approx(fr, rel=1e-10)


def test_fisher_rao_factors_two_classes_closed_form():
    """Two classes, logits (0, s): r = 1 − p_y and m̄ = ±s exactly, Var_p(f) = p(1 − p)s², so
    R_model² = E[min p], M_model² = E[p(1−p)s²]/E[min p]; R_empirical = √E[(1−p_y)²],
    M_empirical = |s|."""
    x = torch.tensor([[1.0], [2.0], [0.5]], dtype=D)
    p = {"W1": torch.tensor([[1.0]], dtype=D), "W2": torch.tensor([[0.0], [1.5]], dtype=D)}
    y = np.array([1, 1, 1])
    s = 1.5 * x[:, 0].numpy()
    q = 1 / (1 + np.exp(-s))  # p_1
    fac = ig.fisher_rao_factors(p, x, y)
    assert fac["R_empirical"] == pytest.approx(np.sqrt(np.mean((1 - q) ** 2)), rel=1e-12)
    assert fac["M_empirical"] == pytest.approx(
        np.sqrt(np.mean((1 - q) ** 2 * s**2) / np.mean((1 - q) ** 2)), rel=1e-12
    )
    assert fac["R_model"] == pytest.approx(np.sqrt(np.mean(1 - q)), rel=1e-12)
    assert fac["M_model"] == pytest.approx(
        np.sqrt(np.mean(q * (1 - q) * s**2) / np.mean(1 - q)), rel=1e-12
    )


# ----------------------------------------------------------------------------------------------
# K-FAC's inverse against the exact damped inverse (Martens & Grosse 2015, §§4–6)
# ----------------------------------------------------------------------------------------------
def _small_net(seed=0, widths=(5, 4, 3, 3), n=40):
    p = nw.init_mlp(list(widths), seed=seed, dtype=torch.float64)
    g = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(n, widths[0], generator=g, dtype=torch.float64)
    y = torch.randint(0, widths[-1], (n,), generator=g).numpy()
    return p, x, y


def test_fisher_scores_and_loss_gradient_against_autograd():
    p, x, y = _small_net()
    stats = ig.layer_statistics(p, x)
    U = ig.fisher_scores(stats)
    F = U.T @ U / x.shape[0]
    # the diagonal blocks are exact_fisher_block's, the (1, 2) block too
    s1, s2 = 5 * 4, 4 * 3
    assert torch.allclose(F[:s1, :s1], ig.exact_fisher_block(stats, 1))
    assert torch.allclose(F[:s1, s1 : s1 + s2], ig.exact_fisher_block(stats, 1, 2))
    # the loss gradient is autograd's gradient of the mean cross-entropy (bias-free weights)
    params = {k: v.clone().requires_grad_(True) for k, v in p.items()}
    loss = ig.loss_fn(params, x, ig.one_hot(y, 3, torch.float64))
    loss.backward()
    auto = torch.cat([params[f"W{l}"].grad.reshape(-1) for l in (1, 2, 3)])
    assert torch.allclose(ig.loss_gradient(stats, y), auto, atol=1e-12)
    with pytest.raises(ParameterError, match="one label per input"):
        ig.loss_gradient(stats, y[:-1])


def test_block_shares_closed_form():
    M = torch.ones(6, 6, dtype=torch.float64)
    s = ig.block_shares(M, [2, 2, 2])
    # 9 blocks of 4 entries each: 6 off-diagonal, 2 of them between layers 1 and 3
    assert s["off_diagonal"] == pytest.approx(6 / 9) and s["off_tridiagonal"] == pytest.approx(
        2 / 9
    )
    assert ig.block_shares(torch.eye(6, dtype=torch.float64), [2, 2, 2])["off_diagonal"] == 0.0
    with pytest.raises(ParameterError, match="sizes"):
        ig.block_shares(M, [2, 2])


def test_natural_gradient_comparison_against_direct_solves():
    p, x, y = _small_net(seed=3)
    r = ig.natural_gradient_comparison(p, x, y, dampings=[1e-2, 1.0], structure_damping=1e-2)
    stats = ig.layer_statistics(p, x)
    U = ig.fisher_scores(stats)
    F = U.T @ U / x.shape[0]
    g = ig.loss_gradient(stats, y)
    P = F.shape[0]
    sizes = [20, 12, 9]
    edges = np.cumsum([0, *sizes])

    def cos(u, v):
        return float(u @ v / (u.norm() * v.norm()))

    for k, d in enumerate([1e-2, 1.0]):
        lam = d * float(torch.trace(F)) / P
        assert r["lambda"][k] == pytest.approx(lam)
        exact = torch.linalg.solve(F + lam * torch.eye(P, dtype=F.dtype), g)
        kfac, blocks = torch.empty_like(g), torch.empty_like(g)
        for l in range(3):
            sl = slice(int(edges[l]), int(edges[l + 1]))
            G, A = ig.kfac_factors(stats, l + 1)
            eye = torch.eye(sizes[l], dtype=F.dtype)
            kfac[sl] = torch.linalg.solve(torch.kron(G, A) + lam * eye, g[sl])
            blocks[sl] = torch.linalg.solve(F[sl, sl] + lam * eye, g[sl])
        assert r["cos_kfac"][k] == pytest.approx(cos(kfac, exact), abs=1e-9)
        assert r["cos_blocks"][k] == pytest.approx(cos(blocks, exact), abs=1e-9)
        assert r["cos_diagonal"][k] == pytest.approx(
            cos(g / (torch.diagonal(F) + lam), exact), abs=1e-9
        )
        assert r["cos_gradient"][k] == pytest.approx(cos(g, exact), abs=1e-9)
    inv = torch.linalg.inv(F + r["lambda"][0] * torch.eye(P, dtype=F.dtype))
    shares = ig.block_shares(inv, sizes)
    assert float(r["inverse_off_diagonal"]) == pytest.approx(shares["off_diagonal"], rel=1e-8)
    for key, value in ig.inverse_structure(F, r["lambda"][0], sizes).items():
        assert float(r[key]) == pytest.approx(value, rel=1e-8, abs=1e-14), key
    # a huge damping makes every preconditioner a multiple of the identity: all cosines → 1
    big = ig.natural_gradient_comparison(p, x, y, dampings=[1e8], structure_damping=1.0)
    for key in ("cos_kfac", "cos_blocks", "cos_diagonal", "cos_gradient"):
        assert big[key][0] == pytest.approx(1.0, abs=1e-6)
    with pytest.raises(ParameterError, match="dampings"):
        ig.natural_gradient_comparison(p, x, y, dampings=[0.0], structure_damping=1.0)


def test_rotated_block_shares_match_haar_rotations():
    # the closed form (fourth moments of a Haar matrix) against 3000 random rotations
    g = torch.Generator().manual_seed(4)
    sizes, P = [5, 4, 3], 12
    d = torch.tensor([9.0, 3.0, 1.0, 1.0, 0.5, 0.2, 0.1, 0.0, 0.0, 0.0, 0.0, 0.0], dtype=D)
    draws = []
    for _ in range(3000):
        Q = ig.haar_rotation(P, g)
        s = ig.block_shares((Q * d) @ Q.T, sizes)
        draws.append([s["off_diagonal"], s["off_tridiagonal"]])
    draws = np.asarray(draws)
    assert torch.allclose(Q.T @ Q, torch.eye(P, dtype=D), atol=1e-12)
    want = ig.rotated_block_shares(float(d.sum()), float((d**2).sum()), sizes)
    se = draws.std(0, ddof=1) / np.sqrt(len(draws))
    for k, key in enumerate(("off_diagonal", "off_tridiagonal")):
        assert abs(draws[:, k].mean() - want[key]) < 4 * se[k], key
    # a multiple of the identity has no off-diagonal part however it is rotated
    assert ig.rotated_block_shares(7.0, 7.0**2 / 7, [3, 2, 2])["off_diagonal"] == pytest.approx(
        0.0, abs=1e-15
    )
    with pytest.raises(ParameterError, match="frob2"):
        ig.rotated_block_shares(0.0, 0.0, sizes)


def test_inverse_structure_finds_layer_structure_and_not_a_rotation():
    """Estimator control of the inverse-structure claim (Chapter 8): on synthetic F with a known
    answer, (a) the inverse's part above the damping is exactly as block-diagonal as its
    construction says, and (b) a Haar rotation of the same F scores what its spectrum alone gives
    (the rotated control), so the excess is ≈ 0 there and strongly negative in (a)."""
    sizes = [40, 30, 20]
    P, lam = sum(sizes), 1e-2
    g = torch.Generator().manual_seed(11)
    # (a) layer-local eigenvectors, except one strong direction spread over the three layers
    basis = torch.block_diag(*[ig.haar_rotation(s, g) for s in sizes])
    firsts = [0, sizes[0], sizes[0] + sizes[1]]
    mix = ig.haar_rotation(3, g)
    basis[:, firsts] = basis[:, firsts] @ mix  # three orthonormal cross-layer directions
    w = torch.zeros(P, dtype=D)
    w[firsts[0]] = 1e4  # the cross-layer direction F is dominated by
    local = [i for i in range(P) if i not in firsts][:10]
    w[local] = torch.linspace(0.5, 2.0, len(local), dtype=D)  # 10 local directions above λ
    F = (basis * w) @ basis.T
    r = ig.inverse_structure(F, lam, sizes)
    v = basis[:, firsts[0]]
    top = sum(torch.outer(basis[:, i], basis[:, i]) / (w[i] + lam) for i in [firsts[0], *local])
    assert r["inverse_top_off_diagonal"] == pytest.approx(
        ig.block_shares(top, sizes)["off_diagonal"], rel=1e-8
    )
    assert r["fisher_off_diagonal"] == pytest.approx(
        ig.block_shares(torch.outer(v, v), sizes)["off_diagonal"], rel=1e-3
    )
    assert r["below_damping_fraction"] == pytest.approx((P - 11) / P)
    d = 1 / (w + lam)
    assert r["below_damping_inverse_share"] == pytest.approx(
        float((d[w <= lam] ** 2).sum() / (d**2).sum()), rel=1e-10
    )
    excess_a = (
        r["inverse_top_off_diagonal"] / r["fisher_off_diagonal"]
        - r["rotated_inverse_top_off_diagonal"] / r["rotated_fisher_off_diagonal"]
    )
    # the unrestricted inverse is mostly λ⁻¹ I: a rotated F, with no layer structure at all,
    # passes the former rule "the inverse's off-diagonal share at most ½ of F's"
    assert r["rotated_inverse_off_diagonal"] / r["rotated_fisher_off_diagonal"] < 0.5
    # (b) the same spectrum rotated at random: no layer structure
    R = ig.haar_rotation(P, g)
    rr = ig.inverse_structure(R @ F @ R.T, lam, sizes)
    top_rot = rr["inverse_top_off_diagonal"] / rr["fisher_off_diagonal"]
    want_rot = rr["rotated_inverse_top_off_diagonal"] / rr["rotated_fisher_off_diagonal"]
    assert top_rot == pytest.approx(want_rot, abs=0.05)
    assert excess_a < -0.5
    with pytest.raises(ParameterError, match="lam"):
        ig.inverse_structure(F, 0.0, sizes)


def test_isotropic_sharpness_is_the_transformed_quadratic_form():
    """Dinh et al. (2017) §4 carried to Neyshabur et al.'s isotropic expected sharpness: with the
    same draws ν, L(T_α θ + ν) − L(T_α θ) = (T⁻¹g)ᵀν + ½ νᵀ T⁻¹HT⁻¹ ν + O(|ν|³), so for small
    noise it grows like α² (layer 2) at large α and like α⁻² (layer 1) at small α — why T(α)
    makes it orders of magnitude larger at both ends of Chapter 8's grid (formerly the claim
    sharpness_isotropic, which held by this argument)."""
    x, y = data(n=16, d=5, c=3, seed=5)
    p = nw.init_mlp([5, 4, 4, 3], seed=9)
    yoh = ig.one_hot(y, 3)
    unflat = ig.unflattener(p)
    th = nw.flatten(p)
    H = torch.autograd.functional.hessian(lambda v: ig.loss_fn(unflat(v), x, yoh), th)
    grad = torch.autograd.functional.jacobian(lambda v: ig.loss_fn(unflat(v), x, yoh), th)
    n1, n2 = p["W1"].numel(), p["W2"].numel()
    sigma, n = 1e-5, 64
    gen = torch.Generator().manual_seed(3)
    nu = torch.stack([torch.randn(th.shape, generator=gen, dtype=D) for _ in range(n)]) * sigma

    def predicted(a):
        t = torch.cat(
            [torch.full((n1,), a), torch.full((n2,), 1 / a), torch.ones(len(th) - n1 - n2)]
        )
        lin = nu @ (grad / t)
        quad = 0.5 * torch.einsum("ki,ij,kj->k", nu / t, H, nu / t)
        return float((lin + quad).mean()), float(quad.mean())

    quads = {}
    for a in (1e-1, 1.0, 1e1):
        got = ig.sharpness_draws(ig.alpha_scale(p, a), x, yoh, sigma=sigma, n_draws=n, seed=3)
        want, quads[a] = predicted(a)
        assert got.mean() == pytest.approx(want, rel=2e-2), a
    # the quadratic part: α² tr H₂₂-like growth at both ends, 10⁴ over two decades
    for lo, hi in ((1e2, 1e3), (1e-2, 1e-3)):
        assert predicted(hi)[1] / predicted(lo)[1] == pytest.approx(100.0, rel=0.05)
    assert min(quads[1e-1], quads[1e1]) > 10 * quads[1.0]


def test_damped_eigh_gives_the_damped_inverse_and_refuses_an_indefinite_sum():
    # one eigen-decomposition serves every damping: (F + λI)⁻¹ = Q diag(1/(w + λ)) Qᵀ
    g = torch.Generator().manual_seed(5)
    U = torch.randn(7, 12, generator=g, dtype=D)
    F = U.T @ U / 7  # rank 7 < 12: five zero eigenvalues (± round-off)
    w, q = ig.damped_eigh(F, 1e-3)
    assert np.all(np.diff(w) >= 0)
    for lam in (1e-3, 0.1, 10.0):
        want = torch.linalg.inv(F + lam * torch.eye(12, dtype=D)).numpy()
        assert np.allclose((q / (w + lam)) @ q.T, want, rtol=0, atol=1e-9 * np.abs(want).max())
    # passing the eigenpairs changes nothing but the work
    sizes = [5, 4, 3]
    assert ig.inverse_structure(F, 0.1, sizes, (w, q)) == ig.inverse_structure(F, 0.1, sizes)
    with pytest.raises(ParameterError, match="lam"):
        ig.damped_eigh(-torch.eye(3, dtype=D), 0.5)


def test_gram_is_the_symmetric_product():
    g = torch.Generator().manual_seed(6)
    U = torch.randn(9, 13, generator=g, dtype=D)
    for a in (U.numpy().T, np.ascontiguousarray(U.numpy().T), U.numpy()[:, 2:7]):
        G = ig.gram(a, 0.25)
        assert np.array_equal(G, G.T)  # symmetric to the last bit
        assert np.allclose(G, 0.25 * a @ a.T, rtol=1e-13, atol=1e-13)
    assert np.array_equal(ig.gram(np.zeros((4, 0))), np.zeros((4, 4)))
