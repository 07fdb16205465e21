"""Unit tests of layerwise.networks (build, initialisation, forward, tangent sample sensitivity,
trainer) against closed forms, brute force and invariants."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from layerwise import networks as nw
from layerwise.params import ParameterError

D = torch.float64


pytestmark = pytest.mark.usefixtures("one_torch_thread")


# -- build and initialisation -----------------------------------------------------------------
def test_check_widths():
    assert nw.check_widths([3, 4, 2]) == [3, 4, 2]
    assert nw.check_widths([5], min_len=1) == [5]
    for bad in ([7], [], 3, "34", [3, 0, 2], [3, -1]):
        with pytest.raises(ParameterError, match="widths"):
            nw.check_widths(bad)
    with pytest.raises(ParameterError, match="widths"):
        nw.check_widths([], min_len=1)


def test_init_variances():
    # W_l ~ N(0, σ_w²/fan_in), b ~ N(0, bias_std²): sample variances of 10⁵ draws within 2 %
    p = nw.init_mlp([400, 250, 300], seed=1, sigma_w2=1.7, bias=True, bias_std=0.3)
    assert (
        list(p) == ["W1", "b1", "W2", "b2"] and p["W1"].shape == (250, 400) and p["W1"].dtype == D
    )
    assert float(p["W1"].var()) * 400 / 1.7 == pytest.approx(1, rel=0.02)
    assert float(p["W2"].var()) * 250 / 1.7 == pytest.approx(1, rel=0.02)
    assert float(torch.cat([p["b1"], p["b2"]]).std()) == pytest.approx(0.3, rel=0.1)


def test_init_layer_order_is_the_documented_draw_sequence():
    g = torch.Generator().manual_seed(7)
    W1 = torch.randn(4, 3, generator=g, dtype=torch.float32) * math.sqrt(2.0 / 3)
    b1 = torch.randn(4, generator=g, dtype=torch.float32) * 0.5
    W2 = torch.randn(2, 4, generator=g, dtype=torch.float32) * math.sqrt(2.0 / 4)
    b2 = torch.randn(2, generator=g, dtype=torch.float32) * 0.5
    p = nw.init_mlp([3, 4, 2], seed=7, bias=True, bias_std=0.5, dtype=torch.float32)
    for k, v in dict(W1=W1, b1=b1, W2=W2, b2=b2).items():
        assert torch.equal(p[k], v)
    q = nw.init_mlp([3, 4, 2], seed=7)  # no biases: only the weights are drawn
    g = torch.Generator().manual_seed(7)
    assert torch.equal(q["W1"], torch.randn(4, 3, generator=g, dtype=D) * math.sqrt(2.0 / 3))
    assert torch.equal(q["W2"], torch.randn(2, 4, generator=g, dtype=D) * math.sqrt(2.0 / 4))


def test_init_stacked_weights_first_is_the_documented_draw_sequence():
    sig = np.array([1.0, 2.5])
    g = torch.Generator().manual_seed(3)
    sw = torch.as_tensor(np.sqrt(sig), dtype=torch.float32)[:, None, None]
    W1 = torch.randn(2, 5, 6, generator=g) * sw / np.sqrt(5)
    W2 = torch.randn(2, 6, 6, generator=g) * sw / np.sqrt(6)
    b1 = torch.randn(2, 1, 6, generator=g) * np.sqrt(0.05)
    b2 = torch.randn(2, 1, 6, generator=g) * np.sqrt(0.05)
    W3 = torch.randn(2, 6, 3, generator=g) * sw / np.sqrt(6)
    after = torch.randn(4, generator=g)
    g2 = torch.Generator().manual_seed(3)
    p = nw.init_mlp(
        [5, 6, 6, 3],
        generator=g2,
        sigma_w2=sig,
        bias="hidden",
        bias_std=np.sqrt(0.05),
        n_nets=2,
        order="weights_first",
        fan_in_first=True,
        dtype=torch.float32,
    )
    assert list(p) == ["W1", "b1", "W2", "b2", "W3"]
    for k, v in dict(W1=W1, W2=W2, W3=W3).items():
        assert p[k].shape == v.transpose(1, 2).shape and torch.equal(p[k].transpose(1, 2), v)
    assert torch.equal(p["b1"], b1[:, 0]) and torch.equal(p["b2"], b2[:, 0])
    assert torch.equal(
        torch.randn(4, generator=g2), after
    )  # the generator was advanced by exactly these draws


def test_init_bad_input():
    with pytest.raises(ParameterError, match="sigma_w2"):
        nw.init_mlp([3, 2], sigma_w2=[1.0, 2.0])  # per-network values need n_nets
    with pytest.raises(ParameterError, match="sigma_w2"):
        nw.init_mlp([3, 2], sigma_w2=-1.0)
    with pytest.raises(ParameterError, match="bias"):
        nw.init_mlp([3, 2], bias="output")
    with pytest.raises(ParameterError, match="order"):
        nw.init_mlp([3, 2], order="random")


# -- forward ----------------------------------------------------------------------------------
def _numpy_forward(p, x, phi):
    n = nw.n_weight_layers(p)
    h = x
    for l in range(1, n + 1):
        h = h @ p[f"W{l}"].numpy().T + (p[f"b{l}"].numpy() if f"b{l}" in p else 0)
        if l < n:
            h = phi(h)
    return h


@pytest.mark.parametrize(
    "activation,phi",
    [
        ("relu", lambda z: np.maximum(z, 0)),
        ("tanh", np.tanh),
        ("leaky_relu", lambda z: np.where(z > 0, z, 0.1 * z)),
    ],
)
def test_forward_against_numpy(activation, phi):
    p = nw.init_mlp([5, 7, 6, 3], seed=2, bias=True, bias_std=0.4)
    x = torch.randn(11, 5, generator=torch.Generator().manual_seed(0), dtype=D)
    f = nw.forward(p, x, activation)
    np.testing.assert_allclose(f.numpy(), _numpy_forward(p, x.numpy(), phi), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(
        nw.forward(p, x[3], activation).numpy(), f[3].numpy(), rtol=1e-13, atol=1e-14
    )


def test_stacked_forward_is_each_network():
    p = nw.init_mlp(
        [5, 6, 6, 3],
        seed=4,
        sigma_w2=np.array([1.0, 2.0, 3.0]),
        bias="hidden",
        bias_std=0.2,
        n_nets=3,
        order="weights_first",
        fan_in_first=True,
    )
    x = torch.randn(9, 5, generator=torch.Generator().manual_seed(1), dtype=D)
    f = nw.forward(p, x, "tanh")
    assert f.shape == (3, 9, 3)
    for k in range(3):
        pk = {name: v[k] for name, v in p.items()}
        np.testing.assert_allclose(
            f[k].numpy(), _numpy_forward(pk, x.numpy(), np.tanh), rtol=1e-12, atol=1e-13
        )


# -- tangent sample sensitivity ---------------------------------------------------------------
def test_tangent_sensitivity_closed_form_one_hidden_layer():
    # f = v·relu(Wx + b) + c: ∂f/∂W_jk = v_j a_j x_k, ∂f/∂b_j = v_j a_j, ∂f/∂v_j = relu(w_j·x +
    # b_j), ∂f/∂c = 1 (a_j = 1[w_j·x + b_j > 0]); their x-derivatives in closed form
    p = nw.init_mlp([4, 6, 1], seed=5, bias=True, bias_std=0.5)
    x = torch.randn(4, generator=torch.Generator().manual_seed(2), dtype=D)
    W, b, v = p["W1"].numpy(), p["b1"].numpy(), p["W2"].numpy()[0]
    a = (W @ x.numpy() + b > 0).astype(float)
    dW = np.einsum("j,km->jkm", v * a, np.eye(4)).reshape(-1, 4)
    db = np.zeros((6, 4))
    dv = a[:, None] * W
    dc = np.zeros((1, 4))
    S = nw.tangent_sensitivity(p, x)
    assert S.shape == (6 * 4 + 6 + 6 + 1, 4)
    np.testing.assert_allclose(S.numpy(), np.vstack([dW, db, dv, dc]), rtol=1e-14, atol=1e-15)


def test_tangent_sensitivity_finite_differences_and_directions():
    p = nw.init_mlp([3, 5, 4, 2], seed=6, bias=True, bias_std=0.3)
    X = torch.randn(4, 3, generator=torch.Generator().manual_seed(3), dtype=D)

    def grad_theta(x):
        q = {k: v.clone().requires_grad_(True) for k, v in p.items()}
        nw.forward(q, x, "tanh")[1].backward()
        return torch.cat([q[k].grad.reshape(-1) for k in q])

    S = nw.tangent_sensitivity(p, X, output=1, activation="tanh")
    assert S.shape == (4, nw.flatten(p).numel(), 3)
    h = 1e-5
    for i in range(4):
        fd = torch.stack(
            [
                (grad_theta(X[i] + h * e) - grad_theta(X[i] - h * e)) / (2 * h)
                for e in torch.eye(3, dtype=D)
            ],
            1,
        )
        np.testing.assert_allclose(S[i].numpy(), fd.numpy(), rtol=1e-6, atol=1e-8)
    Dm = torch.randn(3, 2, generator=torch.Generator().manual_seed(4), dtype=D)
    np.testing.assert_allclose(
        nw.tangent_sensitivity(p, X, directions=Dm, output=1, activation="tanh").numpy(),
        (S @ Dm).numpy(),
        rtol=1e-12,
        atol=1e-14,
    )
    with pytest.raises(ParameterError, match="output"):
        nw.tangent_sensitivity(p, X, output=2)
    with pytest.raises(ParameterError, match="directions"):
        nw.tangent_sensitivity(p, X, directions=np.eye(2))


def test_tangent_sensitivity_constant_on_activation_region():
    # Daróczy, Lemma 3.1: bias-free ReLU, x and c·x (c > 0) share the activation region
    from layerwise import infogeo as ig

    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 5, generator=g, dtype=D)
    p = nw.init_mlp([5, 6, 6, 3], seed=10)
    S = nw.tangent_sensitivity(p, x[0])
    assert torch.equal(ig.activation_pattern(p, x[0]), ig.activation_pattern(p, 2.5 * x[0]))
    assert torch.allclose(nw.tangent_sensitivity(p, 2.5 * x[0]), S, rtol=1e-12, atol=1e-12)
    other = next(
        i
        for i in range(1, 4)
        if not torch.equal(ig.activation_pattern(p, x[i]), ig.activation_pattern(p, x[0]))
    )
    assert float((nw.tangent_sensitivity(p, x[other]) - S).norm() / S.norm()) > 1e-2


# -- the trainer ------------------------------------------------------------------------------
def _regression(n=20, d=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, d, generator=g, dtype=D), torch.randn(n, 2, generator=g, dtype=D)


def test_full_batch_sgd_is_gradient_descent():
    # one linear layer, mean squared error: θ ← θ − lr ∇L with ∇_W L = 2/n (XWᵀ + b − Y)ᵀX
    X, Y = _regression()
    p = nw.init_mlp([3, 2], seed=1, bias=True)
    W, b = p["W1"].numpy().copy(), p["b1"].numpy().copy()
    hist = nw.train(
        p,
        lambda idx: ((nw.forward(p, X) - Y) ** 2).sum(1).mean(),
        lr=0.05,
        optimizer="sgd",
        steps=25,
    )
    Xn, Yn = X.numpy(), Y.numpy()
    losses = []
    for _ in range(25):
        r = Xn @ W.T + b - Yn
        losses.append((r**2).sum(1).mean())
        W, b = W - 0.05 * 2 / len(Xn) * r.T @ Xn, b - 0.05 * 2 / len(Xn) * r.sum(0)
    np.testing.assert_allclose(hist, losses, rtol=1e-12)
    np.testing.assert_allclose(p["W1"].numpy(), W, rtol=1e-11, atol=1e-13)
    assert not p["W1"].requires_grad


def test_first_adam_step_is_lr_times_sign():
    # Adam's first step: m̂ = g, v̂ = g², so Δθ = −lr g/(|g| + ε) = −lr sign(g) up to ε/|g|
    X, Y = _regression(seed=1)
    p = nw.init_mlp([3, 2], seed=2)
    W0 = p["W1"].clone()
    q = {"W1": W0.clone().requires_grad_(True)}
    ((nw.forward(q, X) - Y) ** 2).mean().backward()
    nw.train(
        p, lambda idx: ((nw.forward(p, X) - Y) ** 2).mean(), lr=1e-3, optimizer="adam", steps=1
    )
    np.testing.assert_allclose(
        (p["W1"] - W0).numpy(), -1e-3 * torch.sign(q["W1"].grad).numpy(), rtol=1e-6
    )


def test_target_loss_stops_before_the_step():
    X, Y = _regression()
    p = nw.init_mlp([3, 2], seed=1)
    r = {k: v.clone() for k, v in p.items()}
    full = nw.train(
        r, lambda idx: ((nw.forward(r, X) - Y) ** 2).mean(), lr=0.05, optimizer="sgd", steps=40
    )
    target = float(full[10])
    q = {k: v.clone() for k, v in p.items()}
    hist = nw.train(
        q,
        lambda idx: ((nw.forward(q, X) - Y) ** 2).mean(),
        lr=0.05,
        optimizer="sgd",
        steps=40,
        target_loss=target,
    )
    k = int(np.argmax(full <= target))
    assert len(hist) == k + 1 and hist[-1] <= target and np.all(hist[:-1] > target)
    np.testing.assert_array_equal(hist, full[: k + 1])


def test_epoch_sampling_sees_every_example_once_per_epoch():
    seen, epochs = [], []
    p = nw.init_mlp([3, 2], seed=0)
    X, Y = _regression(n=23)

    def loss(idx):
        seen.append(idx.clone())
        return ((nw.forward(p, X[idx]) - Y[idx]) ** 2).mean()

    g = torch.Generator().manual_seed(5)
    hist = nw.train(
        p,
        loss,
        lr=0.01,
        optimizer="adam",
        sampling="epochs",
        epochs=3,
        n=23,
        batch=5,
        generator=g,
        callback=lambda t, _loss: epochs.append(t // 5) if t % 5 == 0 else None,
    )
    assert (
        epochs == [0, 1, 2, 3]
        and len(hist) == 3 * 5
        and [len(s) for s in seen[:5]] == [5, 5, 5, 5, 3]
    )
    ref = torch.Generator().manual_seed(5)
    for e in range(3):
        ep = torch.cat(seen[5 * e : 5 * e + 5])
        assert torch.equal(ep, torch.randperm(23, generator=ref)) and sorted(ep.tolist()) == list(
            range(23)
        )


def test_callback_sees_every_state_and_can_stop():
    # callback(t, loss) after t updates: the recorded loss, then None after the last update
    X, Y = _regression(n=10)

    def fit(steps, callback=None):
        p = nw.init_mlp([3, 2], seed=1)
        hist = nw.train(
            p,
            lambda idx: ((nw.forward(p, X) - Y) ** 2).mean(),
            lr=0.01,
            steps=steps,
            callback=callback,
        )
        return p, hist

    seen = []
    _, hist = fit(4, lambda t, loss: seen.append((t, loss)))
    assert [t for t, _ in seen] == [0, 1, 2, 3, 4] and seen[-1][1] is None
    assert [loss for _, loss in seen[:-1]] == hist.tolist()
    # stopping at t = 2: three losses recorded, two updates, no final call
    calls = []
    q, h = fit(4, lambda t, loss: calls.append(t) or t == 2)
    assert calls == [0, 1, 2] and len(h) == 3
    r, _ = fit(2)
    for k in q:
        assert torch.equal(q[k], r[k])


def test_permutation_sampling_walks_each_networks_own_permutation():
    n, batch, K = 11, 4, 3
    p = nw.init_mlp([3, 2], seed=0, n_nets=K)
    X, Y = _regression(n=n)
    seen = []

    def loss(idx):
        seen.append(idx.clone())
        return ((nw.forward(p, X[idx]) - Y[idx]) ** 2).sum()

    g = torch.Generator().manual_seed(9)
    nw.train(
        p, loss, lr=0.01, sampling="permutations", steps=5, n=n, batch=batch, n_nets=K, generator=g
    )
    assert all(s.shape == (K, batch) for s in seen)
    ref = torch.Generator().manual_seed(9)
    for start in (0, 2, 4):  # two full batches per pass, the remainder of 3 dropped
        perm = torch.argsort(torch.rand(K, n, generator=ref), dim=1)
        got = torch.cat(seen[start : start + 2], dim=1)
        assert torch.equal(got, perm[:, : got.shape[1]])
        assert all(len(set(row.tolist())) == got.shape[1] for row in got)


def test_stacked_networks_train_independently():
    # the summed loss of K stacked networks gives each its own SGD trajectory
    X, Y = _regression(n=30, seed=2)
    sig = np.array([1.0, 3.0])
    p = nw.init_mlp(
        [3, 4, 2],
        seed=3,
        sigma_w2=sig,
        bias="hidden",
        bias_std=0.1,
        n_nets=2,
        order="weights_first",
        fan_in_first=True,
    )
    singles = [{k: v[i].clone() for k, v in p.items()} for i in range(2)]
    g = torch.Generator().manual_seed(1)
    hist = nw.train(
        p,
        lambda idx: ((nw.forward(p, X[idx], "tanh") - Y[idx]) ** 2).mean((1, 2)),
        lr=0.1,
        optimizer="sgd",
        sampling="replacement",
        steps=15,
        n=30,
        batch=8,
        generator=g,
    )
    assert hist.shape == (15, 2)
    for i, q in enumerate(singles):
        g = torch.Generator().manual_seed(1)
        h = nw.train(
            q,
            lambda idx, q=q: ((nw.forward(q, X[idx], "tanh") - Y[idx]) ** 2).mean(),
            lr=0.1,
            optimizer="sgd",
            sampling="replacement",
            steps=15,
            n=30,
            batch=8,
            generator=g,
        )
        np.testing.assert_allclose(hist[:, i], h, rtol=1e-12)
        for k in q:
            np.testing.assert_allclose(p[k][i].numpy(), q[k].numpy(), rtol=1e-10, atol=1e-12)


def test_train_bad_input():
    p = nw.init_mlp([3, 2])
    loss = lambda idx: nw.forward(p, torch.ones(1, 3, dtype=D)).sum()  # noqa: E731
    with pytest.raises(ParameterError, match="optimizer"):
        nw.train(p, loss, lr=0.1, optimizer="lbfgs", steps=1)
    with pytest.raises(ParameterError, match="sampling"):
        nw.train(p, loss, lr=0.1, sampling="stratified", steps=1)
    with pytest.raises(ParameterError, match="Generator"):
        nw.train(p, loss, lr=0.1, sampling="replacement", steps=1, n=3, batch=2)
    with pytest.raises(ParameterError, match="steps"):
        nw.train(p, loss, lr=0.1, steps=0)
    with pytest.raises(ParameterError, match="lr"):
        nw.train(p, loss, lr=0.0, steps=1)
