"""Information geometry of ReLU networks: Fisher–Rao norm, reparametrisation, K-FAC (Chapter 8).

Sources (Daróczy, *Information geometry and generalization in deep neural networks*, slides §1–2):

* Liang, Poggio, Rakhlin & Stokes (2019), *Fisher–Rao metric, geometry, and complexity of neural
  networks*, Definition 2 and Theorem 3.1 [Eq. 3.1]: for a bias-free feed-forward network with
  ``L`` hidden layers and an activation with σ(z) = σ'(z)·z, the network is homogeneous of degree
  ``L+1`` in its weights, so ⟨θ, ∂f/∂θ⟩ = (L+1)·f(x) (Euler) and
  ‖θ‖²_fr := ⟨θ, I(θ)θ⟩ = (L+1)² E⟨∂ℓ/∂f, f⟩² with I(θ) = E[∇_θℓ ⊗ ∇_θℓ]; Corollary 3.1:
  two parameters computing the same function have the same Fisher–Rao norm.
  (With biases the identity generalises to a *weighted* Euler identity, see :func:`euler_residual`.)
* Dinh, Pascanu, Bengio & Bengio (2017), *Sharp minima can generalize for deep nets*,
  Definition 5: the α-scale transformation T_α(θ₁, θ₂) = (αθ₁, θ₂/α) of two consecutive layers
  leaves a ReLU network's function unchanged while its Hessian (sharpness) changes as
  H ↦ T_α⁻¹ H T_α⁻¹. The same holds for the finer unit-wise rescaling (:func:`unit_scale`).
* Martens & Grosse (2015), *Optimizing neural networks with Kronecker-factored approximate
  curvature*, §3 [Eq. 1–3] and Fig. 2: the Fisher block of layer i is
  F_i = E[(g_i ⊗ a_{i−1})(g_i ⊗ a_{i−1})ᵀ] = E[g_i g_iᵀ ⊗ a_{i−1}a_{i−1}ᵀ] ≈ E[g_i g_iᵀ] ⊗ E[a_{i−1}a_{i−1}ᵀ]
  (expectations over inputs and over targets drawn from the model's predictive distribution).
* Daróczy (2020), tangent sample sensitivity (slides §3, Definition 3.1, Lemma 3.1):
  ∂²f/∂θ∂x is constant on each activation region of a bias-free ReLU network
  (:func:`layerwise.networks.tangent_sensitivity`).

Conventions (those of :mod:`layerwise.networks`, which builds, evaluates and trains the networks).
A network is a dict of float tensors ``W1, b1, W2, …`` (biases optional); layer ``l``
maps ``h ↦ h W_lᵀ + b_l`` and every layer but the last is followed by the activation. ``L`` is the
number of hidden layers, so there are ``L+1`` weight matrices. Vectorisation is row-major
(``W.reshape(-1)``), so the gradient ``g aᵀ`` of a layer flattens to ``kron(g, a)`` and its Fisher
block is compared with ``kron(G, A)``. The loss is the softmax cross-entropy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch.func import grad, jvp, vmap

from .networks import ACTIVATIONS, Params, act, act_deriv, flatten, forward, has_bias, init_mlp, n_weight_layers, train
from .params import (
    ParameterError,
    check_choice,
    check_fraction,
    check_nonnegative,
    check_positive,
    check_positive_int,
)
from .stats import estimate, jackknife_se, mean_se

#: Of :data:`layerwise.networks.ACTIVATIONS`, ``relu`` and ``leaky_relu`` satisfy σ(z) = σ'(z)z, ``tanh`` does not.
HOMOGENEOUS = ("relu", "leaky_relu")
FISHER_LABELS = ("empirical", "model")
NOISE_MODES = ("isotropic", "multiplicative")


# --------------------------------------------------------------------------------------------
# Chapter parameters
# --------------------------------------------------------------------------------------------
_POS_INT = ("fr_n", "hidden", "n_train", "train_steps", "lanczos_iter", "sharp_draws", "kfac_n",
            "kfac_units", "kfac_seeds", "rand_seeds", "rand_hidden", "rand_steps", "rand_budget", "tangent_pairs")
_POS_INT_LISTS = ("fr_depths", "fr_widths")


def check_params(P: dict[str, Any]) -> dict[str, Any]:
    """Validate Chapter 8's parameter table (raises :class:`ParameterError` naming the parameter)."""
    for k in _POS_INT:
        if k in P:
            check_positive_int(k, P[k])
    for k in _POS_INT_LISTS:
        if k in P:
            if isinstance(P[k], (str, bytes)) or not isinstance(P[k], Sequence) or not P[k]:
                raise ParameterError(f"{k}={P[k]!r} must be a non-empty list of positive integers")
            for v in P[k]:
                check_positive_int(k, v)
    if "alphas" in P:
        if isinstance(P["alphas"], (str, bytes)) or not isinstance(P["alphas"], Sequence) or len(P["alphas"]) < 3:
            raise ParameterError(f"alphas={P['alphas']!r} must be a list of >= 3 positive numbers including 1")
        for a in P["alphas"]:
            check_positive("alphas", a)
        if 1 not in [float(a) for a in P["alphas"]]:
            raise ParameterError(f"alphas={P['alphas']!r} must include 1 (the trained parametrisation)")
    if "rand_fractions" in P:
        fr = P["rand_fractions"]
        if isinstance(fr, (str, bytes)) or not isinstance(fr, Sequence) or len(fr) < 2:
            raise ParameterError(f"rand_fractions={fr!r} must be a list of >= 2 fractions in [0, 1] incl. 0 and 1")
        for v in fr:
            check_fraction("rand_fractions", v)
        if 0 not in [float(v) for v in fr] or 1 not in [float(v) for v in fr]:
            raise ParameterError(f"rand_fractions={fr!r} must include 0 and 1")
    for k in ("lr", "sharp_sigma"):
        if k in P:
            check_positive(k, P[k])
    if "target_loss" in P:
        check_nonnegative("target_loss", P["target_loss"])
    if "rand_budget" in P and "rand_steps" in P and P["rand_budget"] > P["rand_steps"]:
        raise ParameterError(f"rand_budget={P['rand_budget']} must be <= rand_steps={P['rand_steps']} (the step cap)")
    if "n_train" in P and P["n_train"] > 1500:
        raise ParameterError(f"n_train={P['n_train']} must be <= 1500 (the rest of the 1797 digits is the test set)")
    return P


# --------------------------------------------------------------------------------------------
# Networks (built and evaluated by layerwise.networks)
# --------------------------------------------------------------------------------------------
def activation_pattern(params: Params, x: torch.Tensor) -> torch.Tensor:
    """Boolean pattern (n, total hidden units) of which pre-activations are positive."""
    n = n_weight_layers(params)
    h, pats = x, []
    for l in range(1, n):
        z = h @ params[f"W{l}"].T
        if f"b{l}" in params:
            z = z + params[f"b{l}"]
        pats.append(z > 0)
        h = torch.relu(z)
    return torch.cat(pats, dim=-1)


def unflattener(params: Params) -> Callable[[torch.Tensor], Params]:
    """Inverse of :func:`flatten` for parameters shaped like ``params``."""
    keys = list(params)
    shapes = [params[k].shape for k in keys]
    sizes = [int(np.prod(s)) for s in shapes]

    def unflat(v: torch.Tensor) -> Params:
        return {k: c.reshape(s) for k, c, s in zip(keys, torch.split(v, sizes), shapes)}

    return unflat


def one_hot(y: torch.Tensor | np.ndarray, n_classes: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    y = torch.as_tensor(np.asarray(y), dtype=torch.long)
    return torch.nn.functional.one_hot(y, n_classes).to(dtype)


def loss_fn(params: Params, x: torch.Tensor, yoh: torch.Tensor, activation: str = "relu") -> torch.Tensor:
    """Mean softmax cross-entropy; ``yoh`` one-hot (or any target distribution) of shape (n, C)."""
    f = forward(params, x, activation)
    return -(torch.log_softmax(f, dim=-1) * yoh).sum(-1).mean()


def _check_activation(activation: str) -> str:
    return check_choice("activation", activation, ACTIVATIONS)


# --------------------------------------------------------------------------------------------
# Fisher–Rao norm (Liang et al., Theorem 3.1)
# --------------------------------------------------------------------------------------------
def per_example_grads(params: Params, x: torch.Tensor, yoh: torch.Tensor, activation: str = "relu") -> torch.Tensor:
    """Exact per-example loss gradients ∇_θ ℓ(f(x_i), y_i), shape (n, P), by ``vmap(grad)``."""
    _check_activation(activation)

    def single(p: Params, xi: torch.Tensor, yi: torch.Tensor) -> torch.Tensor:
        return -(torch.log_softmax(forward(p, xi, activation), dim=-1) * yi).sum()

    g = vmap(grad(single), in_dims=(None, 0, 0))(params, x, yoh)
    return torch.cat([g[k].reshape(x.shape[0], -1) for k in params], dim=1)


def euler_residual(params: Params, x: torch.Tensor, activation: str = "relu", *, weighted: bool = False) -> float:
    """max |⟨θ, ∂f/∂θ⟩ − (L+1) f| / max |f| over a batch (Liang et al., Lemma 2.1).

    ``⟨θ, ∂f/∂θ⟩`` is the directional derivative of θ ↦ f_θ(x) along θ, computed exactly with a
    forward-mode ``jvp``. With ``weighted=True`` the bias of layer ``l`` is weighted by ``l``
    (its degree of homogeneity), the generalisation of Euler's identity that holds with biases:
    Σ_l ⟨W_l, ∂f/∂W_l⟩ + Σ_l l·⟨b_l, ∂f/∂b_l⟩ = (L+1) f.
    """
    _check_activation(activation)
    n = n_weight_layers(params)
    tangent = {k: (v * int(k[1:]) if (weighted and k.startswith("b")) else v) for k, v in params.items()}
    f, df = jvp(lambda p: forward(p, x, activation), (params,), (tangent,))
    return float((df - n * f).abs().max() / f.abs().max())


def fisher_rao(
    params: Params,
    x: torch.Tensor,
    y: torch.Tensor | np.ndarray,
    activation: str = "relu",
    *,
    labels: str = "empirical",
    n_classes: int | None = None,
) -> dict[str, float]:
    """The two sides of Liang et al.'s Eq. (3.1), computed independently.

    ``direct`` = ⟨θ, I(θ)θ⟩ = E⟨θ, ∇_θℓ⟩² from exact per-example gradients (no homogeneity used);
    ``identity`` = (L+1)² E⟨∂ℓ/∂f, f⟩² from the outputs only. ``labels='empirical'`` uses the given
    labels; ``'model'`` takes the expectation over y ~ softmax(f(x)) exactly (sum over classes),
    i.e. the Fisher information proper. Also returns ``rel_diff`` = |direct − identity| / direct.
    """
    _check_activation(activation)
    check_choice("labels", labels, FISHER_LABELS)
    L1 = n_weight_layers(params)
    theta = flatten(params)
    with torch.no_grad():
        f = forward(params, x, activation)
    C = int(n_classes or f.shape[-1])
    p = torch.softmax(f, dim=-1)
    if labels == "empirical":
        yoh = one_hot(y, C, f.dtype)
        g = per_example_grads(params, x, yoh, activation)
        direct = float(((g @ theta) ** 2).mean())
        dldf = p - yoh
        identity = float(L1**2 * ((dldf * f).sum(-1) ** 2).mean())
    else:
        direct_t = torch.zeros((), dtype=f.dtype)
        ident_t = torch.zeros((), dtype=f.dtype)
        for k in range(C):
            yoh = torch.zeros_like(f)
            yoh[:, k] = 1
            g = per_example_grads(params, x, yoh, activation)
            direct_t = direct_t + (p[:, k] * (g @ theta) ** 2).mean()
            ident_t = ident_t + (p[:, k] * ((p - yoh) * f).sum(-1) ** 2).mean()
        direct, identity = float(direct_t), float(L1**2 * ident_t)
    return {"direct": direct, "identity": identity, "rel_diff": abs(direct - identity) / abs(direct)}


def fisher_matrix(params: Params, x: torch.Tensor, y: torch.Tensor | np.ndarray, activation: str = "relu") -> torch.Tensor:
    """Explicit empirical Fisher I(θ) = (1/n) Σ_i ∇ℓ_i ∇ℓ_iᵀ (P × P; for small networks only)."""
    f = forward(params, x, activation)
    g = per_example_grads(params, x, one_hot(y, f.shape[-1], f.dtype), activation)
    return g.T @ g / x.shape[0]


# --------------------------------------------------------------------------------------------
# Reparametrisations (Dinh et al., Definition 5) and norms
# --------------------------------------------------------------------------------------------
def alpha_scale(params: Params, alpha: float, layer: int = 1) -> Params:
    """T_α: multiply layer ``layer`` (weights and bias) by α and divide layer ``layer+1``'s weights by α.

    With a bias in layer ``layer+1`` the function is unchanged too (the bias is not touched).
    """
    alpha = check_positive("alpha", alpha)
    n = n_weight_layers(params)
    if not (1 <= layer < n):
        raise ParameterError(f"layer={layer} must be in 1..{n - 1} (it and the next layer are rescaled)")
    out = dict(params)
    out[f"W{layer}"] = params[f"W{layer}"] * alpha
    if f"b{layer}" in params:
        out[f"b{layer}"] = params[f"b{layer}"] * alpha
    out[f"W{layer + 1}"] = params[f"W{layer + 1}"] / alpha
    return out


def unit_scale(params: Params, alpha: float, layer: int = 1, signs: torch.Tensor | None = None) -> Params:
    """Unit-wise rescaling: hidden unit j of ``layer`` gets incoming weights × α^{s_j} and outgoing × α^{−s_j}.

    ``signs`` (±1 per unit) defaults to alternating +1, −1. Also a symmetry of ReLU networks
    (positive homogeneity per unit), finer than T_α (which is the case s_j = 1 for all j).
    """
    alpha = check_positive("alpha", alpha)
    n = n_weight_layers(params)
    if not (1 <= layer < n):
        raise ParameterError(f"layer={layer} must be in 1..{n - 1}")
    W = params[f"W{layer}"]
    if signs is None:
        signs = torch.tensor([1.0 if j % 2 == 0 else -1.0 for j in range(W.shape[0])], dtype=W.dtype)
    s = torch.as_tensor(signs, dtype=W.dtype)
    if s.shape != (W.shape[0],):
        raise ParameterError(f"signs must have one entry per unit of layer {layer} ({W.shape[0]})")
    scale = torch.as_tensor(alpha, dtype=W.dtype) ** s
    out = dict(params)
    out[f"W{layer}"] = W * scale[:, None]
    if f"b{layer}" in params:
        out[f"b{layer}"] = params[f"b{layer}"] * scale
    out[f"W{layer + 1}"] = params[f"W{layer + 1}"] / scale[None, :]
    return out


def weight_norms(params: Params) -> dict[str, float]:
    """ℓ₂ norm of θ, product of Frobenius norms, product of spectral norms, ℓ₂ path norm.

    The path norm sqrt(Σ_paths Π w²) (Neyshabur et al. 2015) is computed by pushing a vector of
    ones through the squared weights; it ignores biases.
    """
    n = n_weight_layers(params)
    Ws = [params[f"W{l}"] for l in range(1, n + 1)]
    l2 = float(flatten(params).norm())
    fro = float(np.prod([float(W.norm()) for W in Ws]))
    spec = float(np.prod([float(torch.linalg.matrix_norm(W, ord=2)) for W in Ws]))
    v = torch.ones(Ws[0].shape[1], dtype=Ws[0].dtype)
    for W in Ws:
        v = (W**2) @ v
    return {"l2": l2, "frobenius_product": fro, "spectral_product": spec, "path_norm": float(v.sum().sqrt())}


# --------------------------------------------------------------------------------------------
# Sharpness
# --------------------------------------------------------------------------------------------
def hessian_top_eigenvalue(
    params: Params,
    x: torch.Tensor,
    yoh: torch.Tensor,
    activation: str = "relu",
    *,
    n_iter: int = 30,
    seed: int = 0,
) -> float:
    """Largest eigenvalue of the Hessian of the mean loss by Lanczos (full re-orthogonalisation)
    on exact Hessian-vector products (forward-over-reverse, ``jvp(grad)``)."""
    _check_activation(activation)
    n_iter = check_positive_int("n_iter", n_iter)
    theta = flatten(params).detach()
    unflat = unflattener(params)
    P = theta.numel()
    n_iter = min(n_iter, P)

    def lossf(v: torch.Tensor) -> torch.Tensor:
        return loss_fn(unflat(v), x, yoh, activation)

    g = grad(lossf)

    def hvp(u: torch.Tensor) -> torch.Tensor:
        return jvp(g, (theta,), (u,))[1]

    gen = torch.Generator().manual_seed(int(seed))
    q = torch.randn(P, generator=gen, dtype=theta.dtype)
    q = q / q.norm()
    Q = [q]
    alphas, betas = [], []
    for j in range(n_iter):
        w = hvp(Q[-1])
        a = float(w @ Q[-1])
        alphas.append(a)
        Qm = torch.stack(Q, 1)
        w = w - Qm @ (Qm.T @ w)
        w = w - Qm @ (Qm.T @ w)
        b = float(w.norm())
        if j == n_iter - 1 or b < 1e-12 * max(1.0, abs(a)):
            break
        betas.append(b)
        Q.append(w / b)
    T = np.diag(alphas) + np.diag(betas[: len(alphas) - 1], 1) + np.diag(betas[: len(alphas) - 1], -1)
    return float(np.linalg.eigvalsh(T)[-1])


def sharpness_draws(
    params: Params,
    x: torch.Tensor,
    yoh: torch.Tensor,
    activation: str = "relu",
    *,
    sigma: float = 0.01,
    n_draws: int = 32,
    mode: str = "isotropic",
    seed: int = 0,
) -> np.ndarray:
    """The ``n_draws`` Monte-Carlo terms L(θ+ν) − L(θ) of the expected sharpness (Neyshabur et al. 2017).

    ``isotropic``: ν ~ N(0, σ² I); ``multiplicative``: ν = σ ε ⊙ θ with ε ~ N(0, I). The noise
    draws depend only on ``seed`` (common random numbers across reparametrisations), so the terms
    of two parametrisations are paired draw by draw.
    """
    _check_activation(activation)
    check_choice("mode", mode, NOISE_MODES)
    sigma = check_nonnegative("sigma", sigma)
    n_draws = check_positive_int("n_draws", n_draws)
    theta = flatten(params)
    unflat = unflattener(params)
    gen = torch.Generator().manual_seed(int(seed))
    with torch.no_grad():
        base = float(loss_fn(params, x, yoh, activation))
        vals = []
        for _ in range(n_draws):
            eps = torch.randn(theta.shape, generator=gen, dtype=theta.dtype)
            nu = sigma * eps if mode == "isotropic" else sigma * eps * theta
            vals.append(float(loss_fn(unflat(theta + nu), x, yoh, activation)) - base)
    return np.asarray(vals)


def expected_sharpness(
    params: Params,
    x: torch.Tensor,
    yoh: torch.Tensor,
    activation: str = "relu",
    *,
    sigma: float = 0.01,
    n_draws: int = 32,
    mode: str = "isotropic",
    seed: int = 0,
) -> tuple[float, float]:
    """E_ν[L(θ+ν)] − L(θ) and its Monte-Carlo standard error (mean and s/√n of
    :func:`sharpness_draws`; the standard error is NaN for a single draw)."""
    v = sharpness_draws(params, x, yoh, activation, sigma=sigma, n_draws=n_draws, mode=mode, seed=seed)
    m, se = mean_se(v)  # the standard error is NaN for a single draw
    return float(m), float(se)


def sharpness_ratio(draws_num: np.ndarray, draws_den: np.ndarray) -> tuple[float, float]:
    """Ratio of two expected sharpnesses computed with the same noise draws, mean(num)/mean(den),
    and its delete-one jackknife standard error over the (paired) draws."""
    num, den = np.asarray(draws_num, float).ravel(), np.asarray(draws_den, float).ravel()
    if len(num) != len(den) or len(num) < 2:
        raise ParameterError(f"sharpness_ratio needs >= 2 paired draws of equal length, got {len(num)} and {len(den)}")
    d = np.stack([num, den], 1)
    return jackknife_se(lambda s: s[:, 0].mean() / s[:, 1].mean(), d)


# --------------------------------------------------------------------------------------------
# Training and label randomisation
# --------------------------------------------------------------------------------------------
def randomize_labels(y: np.ndarray, fraction: float, n_classes: int, seed: int = 0) -> np.ndarray:
    """Replace a ``fraction`` of the labels (chosen at random) by uniform random classes (Zhang et al. 2017)."""
    fraction = check_fraction("fraction", fraction)
    n_classes = check_positive_int("n_classes", n_classes)
    rng = np.random.default_rng(seed)
    y = np.array(y, copy=True)
    idx = rng.choice(len(y), size=int(round(fraction * len(y))), replace=False)
    y[idx] = rng.integers(0, n_classes, size=len(idx))
    return y


def train_mlp(
    x: torch.Tensor,
    y: np.ndarray,
    widths: Sequence[int],
    *,
    steps: int,
    lr: float = 1e-2,
    seed: int = 0,
    activation: str = "relu",
    bias: bool = False,
    target_loss: float = 0.0,
    dtype: torch.dtype = torch.float64,
) -> tuple[Params, np.ndarray]:
    """Full-batch Adam on the cross-entropy from a He initialisation (:func:`layerwise.networks.init_mlp`,
    trained by :func:`layerwise.networks.train`); stops after ``steps`` steps or once the training
    loss is ≤ ``target_loss``. Returns the parameters and the loss history."""
    _check_activation(activation)
    steps = check_positive_int("steps", steps)
    check_positive("lr", lr)
    check_nonnegative("target_loss", target_loss)
    params = init_mlp(widths, seed=seed, bias=bias, dtype=dtype)
    yoh = one_hot(y, widths[-1], dtype)
    x = x.to(dtype)
    hist = train(params, lambda idx: loss_fn(params, x, yoh, activation), lr=lr, optimizer="adam",
                 sampling="full", steps=steps, target_loss=target_loss)
    return params, hist


PROTOCOLS = ("budget", "loss")


def train_two_protocols(
    x: torch.Tensor,
    y: np.ndarray,
    widths: Sequence[int],
    *,
    budget: int,
    max_steps: int,
    lr: float,
    seed: int,
    target_loss: float,
    dtype: torch.dtype = torch.float64,
) -> dict[str, Any]:
    """One full-batch Adam run of the bias-free ReLU MLP (as :func:`train_mlp`: He initialisation from
    ``seed``, each step: loss, record, backward, step) read off under two stopping rules.

    ``budget``: the parameters after exactly ``budget`` steps (a fixed training budget, whatever the loss);
    ``loss``: the parameters at the first recorded loss ≤ ``target_loss`` (a fixed training loss; the
    network :func:`train_mlp` returns, to round-off). The run goes on until both are taken or
    ``max_steps`` steps are done (then ``loss`` is None). Returns both networks, the loss history and
    ``target_step`` (steps to reach the target; None if not reached)."""
    budget, max_steps = check_positive_int("budget", budget), check_positive_int("max_steps", max_steps)
    if budget > max_steps:
        raise ParameterError(f"budget={budget} must be <= max_steps={max_steps}")
    check_positive("lr", lr)
    check_nonnegative("target_loss", target_loss)
    params = init_mlp(widths, seed=seed, dtype=dtype)
    yoh, x = one_hot(y, widths[-1], dtype), x.to(dtype)
    tensors = list(params.values())
    for t in tensors:
        t.requires_grad_(True)
    opt = torch.optim.Adam(tensors, lr=lr)
    hist: list[float] = []
    out: dict[str, Any] = {"budget": None, "loss": None, "target_step": None}

    def snapshot() -> Params:
        return {k: v.detach().clone() for k, v in params.items()}

    for k in range(max_steps + 1):
        opt.zero_grad()
        value = loss_fn(params, x, yoh)
        hist.append(float(value.detach()))
        if k == budget:
            out["budget"] = snapshot()
        if out["loss"] is None and hist[-1] <= target_loss:
            out["loss"], out["target_step"] = snapshot(), k
        if k == max_steps or (k >= budget and out["loss"] is not None):
            break
        value.backward()
        opt.step()
    for t in tensors:
        t.requires_grad_(False)
    out["hist"] = np.asarray(hist)
    return out


def margins(f: torch.Tensor, y: np.ndarray) -> np.ndarray:
    """f(x)[y] − max_{j≠y} f(x)[j] per example."""
    f = f.detach()
    y = torch.as_tensor(np.asarray(y), dtype=torch.long)
    fy = f.gather(1, y[:, None])[:, 0]
    other = f.clone()
    other.scatter_(1, y[:, None], -float("inf"))
    return (fy - other.max(1).values).numpy()


def capacity_measures(
    params: Params, x: torch.Tensor, y: np.ndarray, activation: str = "relu", *, margin_quantile: float = 0.1
) -> dict[str, float]:
    """Norm-based capacity measures divided by the margin γ (Liang et al. §4; Neyshabur et al. 2017).

    γ is the ``margin_quantile`` quantile of the training margins (a robust stand-in for the
    minimum margin). The products of layer norms and the path norm scale like the output under a
    global rescaling of the weights, so dividing them by γ makes them scale-free; the Fisher–Rao
    norms (cross-entropy) are returned unnormalised and the notebook divides them by γ as well.
    """
    check_fraction("margin_quantile", margin_quantile)
    with torch.no_grad():
        f = forward(params, x, activation)
    m = margins(f, y)
    gamma = float(np.quantile(m, margin_quantile))
    w = weight_norms(params)
    fr_emp = math.sqrt(fisher_rao_identity(params, x, y, activation, labels="empirical"))
    fr_mod = math.sqrt(fisher_rao_identity(params, x, y, activation, labels="model"))
    out = {
        "margin": gamma,
        "train_accuracy": float((m > 0).mean()),
        "l2": w["l2"],
        "frobenius_product": w["frobenius_product"],
        "spectral_product": w["spectral_product"],
        "path_norm": w["path_norm"],
        "fisher_rao_empirical": fr_emp,
        "fisher_rao_model": fr_mod,
    }
    return out


def fisher_rao_identity(
    params: Params, x: torch.Tensor, y: np.ndarray, activation: str = "relu", *, labels: str = "model"
) -> float:
    """(L+1)² E⟨∂ℓ/∂f, f⟩² from the outputs only (right side of Eq. 3.1); cheap for any size."""
    check_choice("labels", labels, FISHER_LABELS)
    L1 = n_weight_layers(params)
    with torch.no_grad():
        f = forward(params, x, activation)
        p = torch.softmax(f, -1)
        if labels == "empirical":
            dldf = p - one_hot(y, f.shape[-1], f.dtype)
            return float(L1**2 * ((dldf * f).sum(-1) ** 2).mean())
        # E_{y~p}⟨p − e_y, f⟩² = Var_{y~p}(f_y)
        mean = (p * f).sum(-1)
        return float(L1**2 * (p * (f - mean[:, None]) ** 2).sum(-1).mean())


def fisher_rao_factors(
    params: Params, x: torch.Tensor, y: np.ndarray, activation: str = "relu"
) -> dict[str, float]:
    """Both Fisher–Rao norms of Liang et al.'s Eq. (3.1) split exactly into (L+1) × a loss factor R × an
    effective margin M, ‖θ‖_fr = (L+1)·R·M.

    Empirical Fisher: per example ⟨∂ℓ/∂f, f⟩ = Σ_j p_j f_j − f_y = −r_i·m̄_i with the residual
    probability r_i = 1 − p_y and the residual-weighted margin m̄_i = Σ_{j≠y} p_j (f_y − f_j) / r_i, so
    ``R_empirical`` = √E[r²] and ``M_empirical`` = √(E[r² m̄²] / E[r²]) (m̄ computed on its own, not as a ratio).
    Model Fisher: E_{y∼p}⟨∂ℓ/∂f, f⟩² = Var_{y∼p}(f_y) = r_i·M_i² with r_i = 1 − max_j p_j, where
    M_i² = Var_p(f)/r_i → Σ_{j≠c} (p_j/r_i)(f_c − f_j)² (c the top class) as r_i → 0; ``R_model`` = √E[r] and
    ``M_model`` = √(E[Var_p f] / E[r]). At a small loss, r ≈ the per-example loss, so R carries the loss at
    which training stopped and M a margin."""
    _check_activation(activation)
    with torch.no_grad():
        f = forward(params, x, activation)
        p = torch.softmax(f, -1)
        yi = torch.as_tensor(np.asarray(y), dtype=torch.long)[:, None]
        fy = f.gather(1, yi)[:, 0]
        p_other = p.scatter(1, yi, 0.0)
        r_e = p_other.sum(-1)  # 1 − p_y without cancellation
        mbar = (p_other * (fy[:, None] - f)).sum(-1) / r_e
        top = p.argmax(-1, keepdim=True)
        r_m = p.scatter(1, top, 0.0).sum(-1)  # 1 − max p
        var = (p * (f - (p * f).sum(-1, keepdim=True)) ** 2).sum(-1)
    R_e, R_m = float((r_e**2).mean().sqrt()), float(r_m.mean().sqrt())
    return {"R_empirical": R_e, "M_empirical": float(((r_e * mbar) ** 2).mean().sqrt()) / R_e,
            "R_model": R_m, "M_model": float(var.mean().sqrt()) / R_m}


# --------------------------------------------------------------------------------------------
# K-FAC (Martens & Grosse 2015)
# --------------------------------------------------------------------------------------------
def layer_statistics(params: Params, x: torch.Tensor, activation: str = "relu") -> dict[str, Any]:
    """Per-layer inputs a_{l−1} (n, d_{l−1}) and back-propagated output gradients g_l (n, C, d_l).

    g_l[i, k] = ∂ℓ(f(x_i), k)/∂s_l is the gradient of the loss with target class k with respect
    to the pre-activation s_l of layer l; the Fisher weights class k by p_k = softmax(f(x_i))_k.
    Bias-free networks only (K-FAC with biases appends a constant 1 to a; not needed here).
    """
    _check_activation(activation)
    if has_bias(params):
        raise ParameterError("layer_statistics needs a bias-free network (params with W1..Wn only)")
    n = n_weight_layers(params)
    a_list, s_list = [x], []
    h = x
    with torch.no_grad():
        for l in range(1, n + 1):
            s = h @ params[f"W{l}"].T
            s_list.append(s)
            h = act(s, activation) if l < n else s
            if l < n:
                a_list.append(h)
        f = s_list[-1]
        p = torch.softmax(f, -1)
        C = f.shape[-1]
        eye = torch.eye(C, dtype=f.dtype)
        g = p[:, None, :] - eye[None]  # (n, k, C): ∂ℓ_k/∂f
        gs = [None] * n
        gs[n - 1] = g
        for l in range(n - 1, 0, -1):
            g = (g @ params[f"W{l + 1}"]) * act_deriv(s_list[l - 1], activation)[:, None, :]
            gs[l - 1] = g
    return {"a": a_list, "g": gs, "p": p}


def exact_fisher_block(stats: dict[str, Any], i: int, j: int | None = None) -> torch.Tensor:
    """Exact Fisher block F_ij = E_x Σ_k p_k vec(g_i aᵀ_{i−1}) vec(g_j aᵀ_{j−1})ᵀ (layers 1-indexed)."""
    j = i if j is None else j
    p = stats["p"]
    n = p.shape[0]

    def scores(l: int) -> torch.Tensor:
        a, g = stats["a"][l - 1], stats["g"][l - 1]
        u = g[:, :, :, None] * a[:, None, None, :]  # (n, C, d_l, d_{l-1})
        return (u * p.sqrt()[:, :, None, None]).reshape(n * p.shape[1], -1)

    Ui = scores(i)
    Uj = Ui if j == i else scores(j)
    return Ui.T @ Uj / n


def kfac_factors(stats: dict[str, Any], i: int) -> tuple[torch.Tensor, torch.Tensor]:
    """K-FAC factors of layer i: G_i = E[g_i g_iᵀ] (over x and y ~ model) and A_{i−1} = E[a aᵀ]."""
    a, g, p = stats["a"][i - 1], stats["g"][i - 1], stats["p"]
    n = a.shape[0]
    A = a.T @ a / n
    G = torch.einsum("nk,nki,nkj->ij", p, g, g) / n
    return G, A


def trace_ratio(stats: dict[str, Any], i: int) -> tuple[float, float]:
    """tr(G_i ⊗ A_{i−1}) / tr(F_i) and its jackknife standard error over the inputs.

    With u_x = Σ_k p_k |g_k(x)|² and v_x = |a(x)|², tr F_i = E[u v] and tr(G⊗A) = tr G · tr A =
    E[u] E[v], so the ratio is E[u]E[v] / E[uv] = 1 − Cov(u, v)/E[uv]: exactly 1 when the sizes of
    the back-propagated and forward signals are uncorrelated over inputs (K-FAC's independence
    assumption, seen through the traces). The standard error is the delete-one jackknife over the
    n inputs (they are i.i.d. draws of the data)."""
    a, g, p = stats["a"][i - 1], stats["g"][i - 1], stats["p"]
    u = (p * (g**2).sum(-1)).sum(-1).numpy()
    v = (a**2).sum(-1).numpy()

    def est(s: np.ndarray) -> float:
        return float(s[:, 0].mean() * s[:, 1].mean() / (s[:, 0] * s[:, 1]).mean())

    return jackknife_se(est, np.stack([u, v], 1))


def nearest_kronecker(F: torch.Tensor, m: int, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Best Frobenius-norm approximation F ≈ B ⊗ C with B (m×m), C (n×n) (Van Loan & Pitsianis 1993):
    the leading singular pair of the rearranged matrix R[(i,j),(k,l)] = F[i·n+k, j·n+l]."""
    if F.shape != (m * n, m * n):
        raise ParameterError(f"F has shape {tuple(F.shape)}; expected ({m * n}, {m * n}) for m={m}, n={n}")
    R = F.reshape(m, n, m, n).permute(0, 2, 1, 3).reshape(m * m, n * n)
    # leading singular pair from the eigen-decomposition of the smaller Gram matrix (exact, cheap)
    if m <= n:
        w, V = torch.linalg.eigh(R @ R.T)
        u, s = V[:, -1], w[-1].clamp_min(0).sqrt()
        v = R.T @ u / s if s > 0 else torch.zeros(n * n, dtype=F.dtype)
    else:
        w, V = torch.linalg.eigh(R.T @ R)
        v, s = V[:, -1], w[-1].clamp_min(0).sqrt()
        u = R @ v / s if s > 0 else torch.zeros(m * m, dtype=F.dtype)
    B = (u * s.sqrt()).reshape(m, m)
    C = (v * s.sqrt()).reshape(n, n)
    if B.trace() < 0:
        B, C = -B, -C
    return B, C


def relative_error(F: torch.Tensor, Fhat: torch.Tensor) -> float:
    """‖F − F̂‖_F / ‖F‖_F."""
    return float((F - Fhat).norm() / F.norm())


def kfac_analysis(params: Params, x: torch.Tensor, activation: str = "relu", *, n_eig: int = 0) -> dict[str, np.ndarray]:
    """Per layer: relative Frobenius error of G⊗A, of the best Kronecker product and of the diagonal
    approximation diag(F); tr(G⊗A)/tr(F) with its jackknife standard error over inputs; and the
    sorted spectra of F_i and of G⊗A (eigenvalues of a Kronecker product are the products of the
    factors'). For the whole Fisher F (cross-layer blocks included): ``cross_layer_error`` =
    ‖off-diagonal blocks‖_F / ‖F‖_F (what block-diagonal K-FAC drops) and ``within_block_error`` =
    (Σ_i ‖F_ii − G_i⊗A_{i−1}‖_F²)^{1/2} / ‖F‖_F (what the Kronecker factorisation gets wrong)."""
    stats = layer_statistics(params, x, activation)
    n = n_weight_layers(params)
    out: dict[str, Any] = {"kfac_error": [], "best_kron_error": [], "diag_error": [], "block_norm": [], "trace_ratio": [],
                           "trace_ratio_se": []}
    # the whole Fisher, cross-layer blocks included, split into what block-diagonal K-FAC drops
    # (the blocks between layers) and what it gets wrong inside the blocks (G⊗A ≠ F_ii); the
    # blocks are orthogonal in the Frobenius inner product, so err² = cross² + within²
    cross2 = within2 = 0.0
    for i in range(1, n + 1):
        for j in range(i + 1, n + 1):
            cross2 += 2 * float(exact_fisher_block(stats, i, j).norm() ** 2)
    for i in range(1, n + 1):
        F = exact_fisher_block(stats, i)
        G, A = kfac_factors(stats, i)
        out["kfac_error"].append(relative_error(F, torch.kron(G, A)))
        B, Cm = nearest_kronecker(F, G.shape[0], A.shape[0])
        out["best_kron_error"].append(relative_error(F, torch.kron(B, Cm)))
        out["diag_error"].append(relative_error(F, torch.diag(torch.diagonal(F))))
        out["block_norm"].append(float(F.norm()))
        out["trace_ratio"].append(float(torch.trace(G) * torch.trace(A) / torch.trace(F)))
        out["trace_ratio_se"].append(trace_ratio(stats, i)[1])
        within2 += float((F - torch.kron(G, A)).norm() ** 2)
        ev_F = torch.linalg.eigvalsh(F).flip(0).numpy()
        ev_K = np.sort(np.outer(torch.linalg.eigvalsh(G).numpy(), torch.linalg.eigvalsh(A).numpy()).ravel())[::-1]
        out[f"eig_exact_{i}"] = ev_F
        out[f"eig_kfac_{i}"] = ev_K.copy()
    total2 = cross2 + float(sum(b**2 for b in out["block_norm"]))
    out["cross_layer_error"] = math.sqrt(cross2 / total2)
    out["within_block_error"] = math.sqrt(within2 / total2)
    return {k: np.asarray(v) for k, v in out.items()}


def fisher_subset(
    params: Params, x: torch.Tensor, units: int, activation: str = "relu"
) -> dict[str, np.ndarray]:
    """Exact Fisher (all layers, cross-layer blocks included) and its block-diagonal K-FAC
    approximation restricted to the weights between the first ``units`` inputs and first ``units``
    outputs of every layer (what Martens & Grosse's Fig. 2 shows for a few middle layers)."""
    units = check_positive_int("units", units)
    stats = layer_statistics(params, x, activation)
    n = n_weight_layers(params)
    p = stats["p"]
    N, C = p.shape
    cols, kblocks = [], []
    for l in range(1, n + 1):
        a, g = stats["a"][l - 1][:, :units], stats["g"][l - 1][:, :, :units]
        u = g[:, :, :, None] * a[:, None, None, :]
        cols.append((u * p.sqrt()[:, :, None, None]).reshape(N * C, -1))
        G, A = kfac_factors(stats, l)
        kblocks.append(torch.kron(G[:units, :units], A[:units, :units]))
    U = torch.cat(cols, 1)
    F = U.T @ U / N
    K = torch.block_diag(*kblocks)
    sizes = np.array([b.shape[0] for b in kblocks])
    return {"exact": F.numpy(), "kfac": K.numpy(), "block_sizes": sizes}


# --------------------------------------------------------------------------------------------
# Chapter 8's studies: each is one call of the notebook (cached through Chapter.cached_call
# where it is expensive); the numbers the claims decide are computed here, with unit tests.
# --------------------------------------------------------------------------------------------
#: (activation, biases) of the Fisher–Rao table: the two homogeneous cases, then the two that break it.
FR_CASES = (("relu", False), ("leaky_relu", False), ("relu", True), ("tanh", False))
_EPS = float(np.finfo(np.float64).eps)


def fisher_rao_table(
    x: torch.Tensor,
    y: np.ndarray,
    depths: Sequence[int],
    widths: Sequence[int],
    seed_of: Callable[..., int],
    *,
    n_classes: int = 10,
    cases: Sequence[tuple[str, bool]] = FR_CASES,
) -> list[dict[str, Any]]:
    """Both sides of Liang et al.'s Eq. (3.1) and Euler's residuals for random networks, one row per
    (case, depth L, width, Fisher labels). The network of (activation, bias, L, width) is
    :func:`layerwise.networks.init_mlp` ``[d] + [width]·L + [n_classes]`` (biases of standard
    deviation 0.1) with seed ``seed_of(activation, bias, L, width)``."""
    rows = []
    for activation, bias in cases:
        for L in depths:
            for w in widths:
                p = init_mlp([x.shape[1]] + [w] * L + [n_classes], seed=seed_of(activation, bias, L, w),
                             bias=bias, bias_std=0.1)
                for labels in FISHER_LABELS:
                    r = fisher_rao(p, x, y, activation, labels=labels)
                    rows.append(dict(case=f"{activation}{' + bias' if bias else ''}", activation=activation,
                                     bias=bias, L=L, width=w, labels=labels, n_params=int(flatten(p).numel()),
                                     direct=r["direct"], identity=r["identity"], rel_diff=r["rel_diff"],
                                     euler=euler_residual(p, x, activation),
                                     euler_weighted=euler_residual(p, x, activation, weighted=True)))
    return rows


def fisher_rao_summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, float | int]:
    """What the chapter's prose reads off :func:`fisher_rao_table`: the largest relative difference
    of the two sides (and in units of the float64 ε) and Euler's residual over the homogeneous
    bias-free networks (``fr_homog_max``, ``fr_homog_eps``, ``euler_homog_max``); the range of the
    relative difference with tanh and with biases (``fr_tanh_min/max``, ``fr_bias_min/max``); the
    largest weighted-Euler residual with biases (``euler_weighted_max``); the number of networks
    (``fr_n_nets``, each appears once per kind of Fisher labels)."""
    col = {k: np.array([r[k] for r in rows]) for k in ("activation", "bias", "rel_diff", "euler", "euler_weighted")}
    homog = np.isin(col["activation"], HOMOGENEOUS) & ~col["bias"].astype(bool)
    tanh, bias = col["activation"] == "tanh", col["bias"].astype(bool)
    return {"fr_homog_max": float(col["rel_diff"][homog].max()),
            "fr_homog_eps": float(col["rel_diff"][homog].max() / _EPS),
            "euler_homog_max": float(col["euler"][homog].max()),
            "fr_tanh_min": float(col["rel_diff"][tanh].min()), "fr_tanh_max": float(col["rel_diff"][tanh].max()),
            "fr_bias_min": float(col["rel_diff"][bias].min()), "fr_bias_max": float(col["rel_diff"][bias].max()),
            "euler_weighted_max": float(col["euler_weighted"][bias].max()),
            "fr_n_nets": int(len(rows) // 2)}


def params_to_arrays(params: Params) -> dict[str, np.ndarray]:
    """A network as numpy arrays (what the results store keeps)."""
    return {k: v.numpy() for k, v in params.items()}


def arrays_to_params(arrays: Mapping[str, Any]) -> Params:
    """Inverse of :func:`params_to_arrays`; keys other than ``W…``/``b…`` (a loss history) are skipped."""
    return {k: torch.tensor(v) for k, v in arrays.items() if k[:1] in "Wb"}


def trained_mlp(
    x: torch.Tensor, y: np.ndarray, widths: Sequence[int], *, steps: int, lr: float, seed: int, target_loss: float
) -> dict[str, np.ndarray]:
    """:func:`train_mlp` (bias-free ReLU, float64) as arrays: the weights and ``loss`` (the history)."""
    p, hist = train_mlp(x, y, widths, steps=steps, lr=lr, seed=seed, target_loss=target_loss)
    return {**params_to_arrays(p), "loss": hist}


def reparam_sweep(
    params: Params,
    x: torch.Tensor,
    y: np.ndarray,
    *,
    alphas: Sequence[float],
    lanczos_iter: int,
    sharp_draws: int,
    sharp_sigma: float,
    seed_lanczos: int,
    seed_lanczos2: int,
    seed_noise: int,
    n_classes: int = 10,
) -> dict[str, np.ndarray]:
    """Dinh et al.'s T_α (row 0) and the unit-wise rescaling (row 1) of the first two layers, for
    every α: ``dfun`` (max |Δf| / max |f|), ``fr`` (⟨θ, Iθ⟩ relative to α = 1's network), the norms
    ``l2``, ``spec`` (spectral product), ``fro`` (Frobenius product), the Hessian's top eigenvalue
    by Lanczos with ``lanczos_iter`` (``lam``) and twice as many iterations (``lam2``), and the
    expected sharpness with isotropic (``iso``, its draws ``iso_draws``) and weight-proportional
    noise (``mult``), with their Monte-Carlo standard errors (the same noise draws at every α)."""
    al = np.asarray(alphas, dtype=float)
    yoh = one_hot(y, n_classes)
    f0 = forward(params, x)
    fr0 = fisher_rao(params, x, y)["direct"]
    out = {k: np.zeros((2, len(al))) for k in ("dfun", "fr", "l2", "spec", "fro", "lam", "lam2",
                                             "iso", "iso_se", "mult", "mult_se")}
    out["iso_draws"] = np.zeros((2, len(al), sharp_draws))
    for t, tf in enumerate((alpha_scale, unit_scale)):
        for i, a in enumerate(al):
            q = tf(params, float(a))
            out["dfun"][t, i] = float((forward(q, x) - f0).abs().max() / f0.abs().max())
            out["fr"][t, i] = fisher_rao(q, x, y)["direct"] / fr0
            w = weight_norms(q)
            out["l2"][t, i], out["spec"][t, i], out["fro"][t, i] = w["l2"], w["spectral_product"], w["frobenius_product"]
            out["lam"][t, i] = hessian_top_eigenvalue(q, x, yoh, n_iter=lanczos_iter, seed=seed_lanczos)
            out["lam2"][t, i] = hessian_top_eigenvalue(q, x, yoh, n_iter=2 * lanczos_iter, seed=seed_lanczos2)
            for mode, key in (("isotropic", "iso"), ("multiplicative", "mult")):
                d = sharpness_draws(q, x, yoh, sigma=sharp_sigma, n_draws=sharp_draws, mode=mode, seed=seed_noise)
                e = estimate(d)
                out[key][t, i], out[key + "_se"][t, i] = e.mean, e.se
                if key == "iso":
                    out["iso_draws"][t, i] = d
    return {"alphas": al, **out}


def reparam_summary(R: Mapping[str, np.ndarray]) -> dict[str, float]:
    """The numbers the reparametrisation claims decide, from :func:`reparam_sweep`'s arrays:
    ``lam_ratio`` = max_α λ_max / λ_max(α = 1) under T_α; the log-log slopes of λ_max between the
    two largest (``slope_hi``) and the two smallest α (``slope_lo``); ``lam_conv`` = the largest
    relative difference of Lanczos with n and 2n iterations; ``iso_ratio``/``iso_se`` = the smaller
    of the isotropic expected sharpnesses at the grid's ends over α = 1 (paired draws, jackknife);
    ``mult_dev``, ``spec_t_dev``, ``inv_dev`` = largest relative deviations of the multiplicative
    sharpness (both rescalings), the spectral product under T_α and the function/Fisher–Rao norm;
    ``l2_range``, ``spec_unit_range`` = max/min of ‖θ‖₂ under T_α and of the spectral product under
    the unit-wise rescaling; ``alpha_second`` = the second-largest α."""
    al = np.asarray(R["alphas"], dtype=float)
    i1 = int(np.argmin(np.abs(al - 1)))
    k_hi = len(al) - 1
    lam = R["lam"]
    iso_ratio = [sharpness_ratio(R["iso_draws"][0, e], R["iso_draws"][0, i1]) for e in (0, k_hi)]
    iso_r, iso_se = min(iso_ratio)
    return {
        "i1": i1,
        "lam_ratio": float(lam[0].max() / lam[0, i1]),
        "slope_hi": float(np.log(lam[0, k_hi] / lam[0, k_hi - 1]) / np.log(al[k_hi] / al[k_hi - 1])),
        "slope_lo": float(np.log(lam[0, 1] / lam[0, 0]) / np.log(al[1] / al[0])),
        "lam_conv": float(np.max(np.abs(R["lam"] - R["lam2"]) / R["lam2"])),
        "iso_ratio": iso_r,
        "iso_se": iso_se,
        "mult_dev": float(np.max(np.abs(R["mult"] - R["mult"][0, i1]) / abs(R["mult"][0, i1]))),
        "spec_t_dev": float(np.max(np.abs(R["spec"][0] / R["spec"][0, i1] - 1))),
        "inv_dev": float(max(R["dfun"].max(), np.abs(R["fr"] - 1).max())),
        "l2_range": float(R["l2"][0].max() / R["l2"][0].min()),
        "spec_unit_range": float(R["spec"][1].max() / R["spec"][1].min()),
        "alpha_second": float(al[k_hi - 1]),
    }


def kfac_study(
    trained: Params, init_seed: int, x: torch.Tensor, *, units: int | None = None
) -> dict[str, np.ndarray]:
    """:func:`kfac_analysis` of a trained network (``trained_…``) and of its He initialisation from
    ``init_seed`` (``init_…``); with ``units``, also :func:`fisher_subset` (``…_sub_…``)."""
    widths = [trained["W1"].shape[1]] + [trained[f"W{l}"].shape[0] for l in range(1, n_weight_layers(trained) + 1)]
    p_0 = init_mlp(widths, seed=init_seed)
    out = {}
    for tag, p in (("init", p_0), ("trained", trained)):
        r = kfac_analysis(p, x)
        out.update({f"{tag}_{k}": v for k, v in r.items()})
        if units is not None:
            sub = fisher_subset(p, x, units)
            out.update({f"{tag}_sub_{k}": v for k, v in sub.items()})
    return out


KFAC_STATES = ("init", "trained")


def kfac_summary(K: Sequence[Mapping[str, np.ndarray]]) -> dict[str, Any]:
    """Per-layer errors of :func:`kfac_study` over nets, by state: ``err`` (K-FAC), ``best`` (best
    Kronecker product), ``diag`` (diagonal), each ``{state: (nets, layers)}``; ``cross`` and
    ``within`` (``{state: (nets,)}``) and ``cross_share`` = cross²/(cross² + within²), the share of K-FAC's
    squared error ‖F − F̂‖_F² in the blocks between layers it drops; ``gap`` = layer-averaged K-FAC error trained − init per net;
    ``trace_worst``/``trace_worst_se`` = tr(G⊗A)/tr(F) at initialisation furthest from 1 over layers
    and nets, with its jackknife standard error; ``trace_worst_trained`` = the same after training (no
    error); ``trace_mean`` = (mean, se, dof) over nets of the ratio in the layer (``trace_layer``) whose mean is
    furthest from 1, and ``trace_mean_trained`` the same mean after training; ``diag_ratio`` = per net, the largest K-FAC error / diagonal error over layers and states."""
    S = KFAC_STATES
    out: dict[str, Any] = {
        "err": {t: np.array([k[f"{t}_kfac_error"] for k in K]) for t in S},
        "best": {t: np.array([k[f"{t}_best_kron_error"] for k in K]) for t in S},
        "diag": {t: np.array([k[f"{t}_diag_error"] for k in K]) for t in S},
        "cross": {t: np.array([float(k[f"{t}_cross_layer_error"]) for k in K]) for t in S},
        "within": {t: np.array([float(k[f"{t}_within_block_error"]) for k in K]) for t in S},
    }
    out["gap"] = out["err"]["trained"].mean(1) - out["err"]["init"].mean(1)
    # ‖F − K‖² = ‖dropped blocks‖² + Σ_i ‖F_ii − G_i⊗A_{i−1}‖²: the dropped blocks' share of the squared error
    out["cross_share"] = {t: out["cross"][t] ** 2 / (out["cross"][t] ** 2 + out["within"][t] ** 2) for t in S}
    tr_ratio = np.array([k["init_trace_ratio"] for k in K])
    tr_se = np.array([k["init_trace_ratio_se"] for k in K])
    w_net, w_layer = np.unravel_index(np.argmax(np.abs(tr_ratio - 1)), tr_ratio.shape)
    out["trace_worst"], out["trace_worst_se"] = float(tr_ratio[w_net, w_layer]), float(tr_se[w_net, w_layer])
    tr_trained = np.array([k["trained_trace_ratio"] for k in K])
    out["trace_worst_trained"] = float(tr_trained.flat[np.argmax(np.abs(tr_trained - 1))])
    # averaged over nets (the expectation over the initialisation), the layer furthest from 1, with the t error over
    # nets (one net: the jackknife error over inputs and no d.o.f.)
    layer = int(np.argmax(np.abs(tr_ratio.mean(0) - 1)))
    m, se, dof = _mean_se_dof(tr_ratio[:, layer])
    out["trace_mean"] = (m, se, dof) if se is not None else (m, float(tr_se[0, layer]), None)
    out["trace_layer"] = layer + 1
    out["trace_mean_trained"] = float(tr_trained.mean(0)[np.argmax(np.abs(tr_trained.mean(0) - 1))])
    # per net, K-FAC's error over the diagonal's in the layer and state where K-FAC does worst against it
    out["diag_ratio"] = np.array([max(float((k[f"{t}_kfac_error"] / k[f"{t}_diag_error"]).max()) for t in S) for k in K])
    return out


def _mean_se_dof(x: Any) -> tuple[float, float | None, float | None]:
    """Mean over nets with its standard error and n − 1 d.o.f.; a single net has none (a point)."""
    x = np.asarray(x, dtype=float)
    if len(x) < 2:
        return float(x.mean()), None, None
    e = estimate(x)
    return float(x.mean()), e.se, e.dof


def kfac_findings(KS: Mapping[str, Any]) -> dict[str, Any]:
    """What Chapter 8's K-FAC claims and prose read off :func:`kfac_summary`: ``diag_margin`` (the
    smallest diagonal − K-FAC error over layers, states and nets), ``gap``, ``cross_share[state]`` and
    ``diag_ratio`` (per net, the largest K-FAC / diagonal error) as (mean, se, dof) over nets (no error
    for one net), and the glued numbers and sentence
    (``glue``, two significant digits; ``glue_3``, three)."""
    S = KFAC_STATES
    err, best, diag, cross, within = (KS[k] for k in ("err", "best", "diag", "cross", "within"))
    gap = _mean_se_dof(KS["gap"])
    share = {t: _mean_se_dof(KS["cross_share"][t]) for t in S}
    glue: dict[str, Any] = {"kfac_err_max": float(max(err[t].mean(0).max() for t in S)),
                            "diag_err_min": float(min(diag[t].mean(0).min() for t in S))}
    for t in S:
        glue.update({f"kfac_err_{t}": float(err[t].mean()), f"best_err_{t}": float(best[t].mean()),
                     f"cross_{t}": float(cross[t].mean()), f"within_{t}": float(within[t].mean()),
                     f"cross_share_{t}": share[t][:2]})
    glue["kfac_gap"] = gap[:2]
    glue["kfac_nets"] = int(len(KS["gap"]))
    more = {t: cross[t].mean() > within[t].mean() for t in S}
    less = {t: cross[t].mean() < within[t].mean() for t in S}
    glue["cross_verdict"] = (
        "the blocks between layers that K-FAC drops carry more of its error than the Kronecker factorisation of "
        "the diagonal blocks, in both states" if all(more.values()) else
        "the blocks between layers that K-FAC drops carry less of its error than the Kronecker factorisation of "
        "the diagonal blocks, in both states" if all(less.values()) else
        "which of the two dominates depends on the state: the dropped blocks between layers carry more of the error "
        f"{'at initialisation' if more['init'] else 'after training'}, the Kronecker factorisation of the diagonal "
        f"blocks more {'after training' if more['init'] else 'at initialisation'}")
    return {"diag_margin": float(min((diag[t] - err[t]).min() for t in S)), "gap": gap, "cross_share": share,
            "diag_ratio": _mean_se_dof(KS["diag_ratio"]) if "diag_ratio" in KS else None,
            "glue": glue, "glue_3": {"kfac_trace_worst": (KS["trace_worst"], KS["trace_worst_se"])}}


def label_randomisation_run(
    x: torch.Tensor,
    y: np.ndarray,
    x_test: torch.Tensor,
    y_test: np.ndarray,
    widths: Sequence[int],
    *,
    fraction: float,
    budget: int,
    steps: int,
    lr: float,
    target_loss: float,
    label_seed: int,
    init_seed: int,
) -> dict[str, np.ndarray]:
    """One run of the label-randomisation experiment (Liang et al. 2019; Zhang et al. 2017): a
    ``fraction`` of the training labels randomised, one :func:`train_two_protocols` run (at most
    ``steps`` steps), and for each protocol ``q`` in :data:`PROTOCOLS` (``budget``: after ``budget``
    steps; ``loss``: at the first loss ≤ ``target_loss``): :func:`capacity_measures` and
    :func:`fisher_rao_factors` on the training set, the test accuracy and the training loss, as keys
    ``{q}_{name}``; also ``target_step`` (−1 if the target was not reached: then the ``loss_…``
    entries are NaN)."""
    yr = randomize_labels(y, fraction, widths[-1], seed=label_seed)
    run = train_two_protocols(x, yr, widths, budget=budget, max_steps=steps, lr=lr, seed=init_seed,
                              target_loss=target_loss)
    yoh = one_hot(yr, widths[-1])
    out: dict[str, np.ndarray] = {"target_step": np.array(-1 if run["target_step"] is None else run["target_step"])}
    for q in PROTOCOLS:
        p = run[q]
        if p is None:  # the target loss was not reached within ``steps``
            p_nan = run["budget"]
            keys = list(capacity_measures(p_nan, x, yr)) + list(fisher_rao_factors(p_nan, x, yr))
            out.update({f"{q}_{k}": np.array(np.nan) for k in keys + ["test_accuracy", "final_loss"]})
            continue
        m = {**capacity_measures(p, x, yr), **fisher_rao_factors(p, x, yr)}
        with torch.no_grad():
            m["final_loss"] = float(loss_fn(p, x, yoh))
        m["test_accuracy"] = float((forward(p, x_test).argmax(1).numpy() == y_test).mean())
        out.update({f"{q}_{k}": np.array(v) for k, v in m.items()})
    return out


def loss_share(R: Any, fr_over_margin: Any) -> tuple[float, float]:
    """Share of the change of log(‖θ‖_fr/γ) between two label conditions carried by the loss factor R
    of :func:`fisher_rao_factors`: mean Δlog R / mean Δlog(‖θ‖_fr/γ), where Δ is random − clean for
    each pair of networks with the same initialisation (arrays of shape (nets, 2), columns clean and
    random); since log(‖θ‖_fr/γ) = log(L+1) + log R + log(M/γ), 1 − share is carried by M/γ. Returns
    the share and its delete-one jackknife standard error over the pairs."""
    R, F = np.log(np.asarray(R, float)), np.log(np.asarray(fr_over_margin, float))
    if R.shape != F.shape or R.ndim != 2 or R.shape[1] != 2 or R.shape[0] < 2:
        raise ParameterError(f"loss_share needs two arrays of shape (nets >= 2, 2); got {R.shape} and {F.shape}")
    d = np.stack([R[:, 1] - R[:, 0], F[:, 1] - F[:, 0]], 1)
    return jackknife_se(lambda s: s[:, 0].mean() / s[:, 1].mean(), d)


def welch_log_ratio(lo: Any, hi: Any) -> tuple[float, float, float]:
    """mean log(hi) − mean log(lo) of two independent samples of positive values, its standard error
    and Welch–Satterthwaite degrees of freedom (the sum of the two n − 1 when both spreads are 0)."""
    a, b = estimate(np.log(np.asarray(lo, float))), estimate(np.log(np.asarray(hi, float)))
    se = float(np.hypot(b.se, a.se))
    dof = se**4 / (b.se**4 / b.dof + a.se**4 / a.dof) if se > 0 else float(b.dof + a.dof)
    return b.mean - a.mean, se, float(dof)


def change_verdict(diff: float, se: float, dof: float, confidence: float = 0.99) -> str:
    """'grows', 'shrinks' or 'does not change measurably': whether the two-sided t interval of a
    difference lies above 0, below 0, or contains it."""
    from .stats import t_quantile as quantile

    q = quantile(confidence, dof) if se > 0 else 0.0
    lo, hi = diff - q * se, diff + q * se
    return "grows" if lo > 0 else "shrinks" if hi < 0 else "does not change measurably"


RAND_MEASURES = ("l2", "frobenius_product", "spectral_product", "path_norm", "fisher_rao_model",
                 "fisher_rao_empirical")
RAND_LABELS = {"l2": "ℓ₂ norm", "frobenius_product": "Frobenius product", "spectral_product": "spectral product",
               "path_norm": "ℓ₂ path norm", "fisher_rao_model": "Fisher–Rao (model)",
               "fisher_rao_empirical": "Fisher–Rao (empirical)"}
PROTOCOL_NAMES = {"budget": "fixed budget", "loss": "fixed loss"}
_NOUN = {"grows": "a rise", "shrinks": "a fall", "does not change measurably": "no measurable change"}


def protocol_table(runs: Any, q: str) -> Any:
    """One protocol's columns of the label-randomisation runs (:func:`label_randomisation_run` rows
    with ``fraction`` and ``net``), the prefix ``{q}_`` dropped, and each measure (and effective
    margin M) divided by the margin γ as ``'<measure>/γ'``."""
    from .params import check_choice

    check_choice("q", q, PROTOCOLS)
    T = runs[["fraction", "net", "target_step"]].join(runs.filter(regex=f"^{q}_").rename(columns=lambda c: c[len(q) + 1:]))
    for m in [*RAND_MEASURES, "M_model", "M_empirical"]:
        T[m + "/γ"] = T[m] / T["margin"]
    return T


def label_randomisation_summary(runs: Any) -> dict[str, Any]:
    """Everything Chapter 8 reads off the label-randomisation runs (a DataFrame of
    :func:`label_randomisation_run` outputs with ``fraction`` and ``net``; fractions 0 and 1 present,
    the same nets at both): per protocol the :func:`protocol_table` (``tables``); the Spearman ρ of
    each margin-normalised measure with the fraction at a fixed loss (``rho``); the Welch mean
    log-ratio (random / clean) of each measure over γ, of the effective margins and of the loss
    factors R (``log_ratio[q, name]`` = (difference, se, dof); :func:`welch_log_ratio`) and its
    :func:`change_verdict` (``verdict``); the loss factor's share of the Fisher–Rao rise
    (``loss_share[q, k]``, :func:`loss_share`); the test accuracy at 100 % random labels
    (``chance``, an :class:`~layerwise.stats.Estimate`); the smallest training accuracy
    (``min_train_accuracy``); and the numbers and sentences the prose quotes (``glue``, two
    significant digits, values with standard errors as (value, se); ``glue_3``, three digits)."""
    from scipy.stats import spearmanr

    meas, norms, n_nets = list(RAND_MEASURES), list(RAND_MEASURES[:4]), int(runs["net"].nunique())
    RT = {q: protocol_table(runs, q) for q in PROTOCOLS}
    rho = {m: float(spearmanr(RT["loss"].fraction, RT["loss"][m + "/γ"]).statistic) for m in meas}
    clean = {q: RT[q][RT[q].fraction == 0].sort_values("net") for q in PROTOCOLS}
    rand = {q: RT[q][RT[q].fraction == 1].sort_values("net") for q in PROTOCOLS}
    LR = {(q, m): welch_log_ratio(clean[q][m + "/γ"].values, rand[q][m + "/γ"].values)
          for q in PROTOCOLS for m in meas + ["M_model", "M_empirical"]}
    LR.update({(q, f"R_{k}"): welch_log_ratio(clean[q][f"R_{k}"].values, rand[q][f"R_{k}"].values)
               for q in PROTOCOLS for k in ("model", "empirical")})
    SHARE = {(q, k): loss_share(np.stack([clean[q][f"R_{k}"], rand[q][f"R_{k}"]], 1),
                                np.stack([clean[q][f"fisher_rao_{k}/γ"], rand[q][f"fisher_rao_{k}/γ"]], 1))
             for q in PROTOCOLS for k in ("model", "empirical")}
    verdict = {key: change_verdict(*v) for key, v in LR.items()}
    chance = estimate(rand["loss"].test_accuracy.values)
    min_acc = float(min(RT[q].train_accuracy.min() for q in PROTOCOLS))

    glue: dict[str, Any] = {}
    for q in PROTOCOLS:
        by_verdict = {v: [RAND_LABELS[m] for m in norms if verdict[q, m] == v] for v in _NOUN}
        glue[f"rand_norm_factors_{q}"] = ", ".join(f"{RAND_LABELS[m]} ×{ratio_text(float(np.exp(LR[q, m][0])))}"
                                                   for m in norms)
        glue[f"rand_norms_verdict_{q}"] = "all four rise" if len(by_verdict["grows"]) == 4 else \
            "; ".join(f"{_NOUN[v]} for the {join_words(ms)}" for v, ms in by_verdict.items() if ms)
        glue[f"rand_loss_clean_{q}"] = float(clean[q].final_loss.mean())
        glue[f"rand_loss_random_{q}"] = float(rand[q].final_loss.mean())
        for k in ("model", "empirical"):
            for what, key in (("fr", f"fisher_rao_{k}"), ("r", f"R_{k}"), ("mg", f"M_{k}")):
                glue[f"{what}_{k}_{q}_logratio"] = (LR[q, key][0], LR[q, key][1])
            glue[f"fr_{k}_{q}_verdict"] = verdict[q, f"fisher_rao_{k}"]
    for k in ("model", "empirical"):
        glue[f"share_{k}_budget"] = SHARE["budget", k]
    share_v = [change_verdict(SHARE["budget", k][0] - 0.5, SHARE["budget", k][1], n_nets - 1)
               for k in ("model", "empirical")]
    glue["rand_budget_reading"] = (
        "So most of the rise under a fixed budget is the training loss: the Fisher–Rao norms mainly report that random "
        "labels are fitted more slowly." if share_v == ["grows", "grows"] else
        "The point estimates put most of the rise on the training loss, but with so few nets this is not resolved at "
        "the 99 % level for both norms." if min(SHARE["budget", k][0] for k in ("model", "empirical")) > 0.5 else
        "At this scale the training loss does not carry most of the rise for both norms.")
    fr_max = max(LR["loss", m][0] for m in meas[4:])
    norm_min = min(LR["loss", m][0] for m in norms)
    glue["rand_loss_reading"] = (
        f"they change far less than the norm-based measures (largest Fisher–Rao log-ratio {fr_max:.2g}, smallest "
        f"norm-based one {norm_min:.2g})" if fr_max < norm_min / 2 else
        f"they do not separate clearly from the norm-based measures (largest Fisher–Rao log-ratio {fr_max:.2g}, "
        f"smallest norm-based one {norm_min:.2g})")
    glue["rand_fit_reading"] = "every network fits its training labels" if min_acc == 1 else \
        "not every network fits its training labels"
    fr_up = {q: all(verdict[q, m] == "grows" for m in meas[4:]) for q in PROTOCOLS}
    glue["rand_direction_reading"] = (
        "At this scale the fixed-budget protocol reproduces the rise of both Fisher–Rao norms in their figure"
        + (", and so does the fixed-loss protocol" if fr_up["loss"] else ", the fixed-loss protocol does not")
        if fr_up["budget"] else
        "At this scale neither protocol resolves a rise of both Fisher–Rao norms" if not fr_up["loss"] else
        "At this scale only the fixed-loss protocol resolves a rise of both Fisher–Rao norms")
    glue["rand_unreached"] = int((runs.target_step < 0).sum())
    glue["rand_norms_reading"] = (
        "This is what Liang et al. and Neyshabur et al. ask of a capacity measure: memorising random labels needs "
        "larger weights at the same margin, and it does not depend on when training stopped."
        if all(verdict[q, m] == "grows" for q in PROTOCOLS for m in norms) else
        "Liang et al. and Neyshabur et al. ask a capacity measure to rise like this; with so few nets the rise is not "
        "resolved for every measure and protocol at this scale.")
    glue_3 = {"rand_acc1": float(chance.mean), "rand_steps_clean": float(clean["loss"].target_step.mean()),
              "rand_steps_random": float(rand["loss"].target_step.mean())}
    return {"tables": RT, "rho": rho, "log_ratio": LR, "verdict": verdict, "loss_share": SHARE, "chance": chance,
            "min_train_accuracy": min_acc, "glue": glue, "glue_3": glue_3}


def tangent_check(params: Params, x: torch.Tensor, n_pairs: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Daróczy's Lemma 3.1 seen on data: relative Frobenius change ‖S(x′) − S(x)‖/‖S(x)‖ of the
    tangent sample sensitivity (:func:`layerwise.networks.tangent_sensitivity`) between points of
    one activation region (``same``: c·x for a random c in [0.2, 5], and x plus the first of
    perturbations of size 10⁻³, 10⁻⁴, 10⁻⁵ that keeps the pattern) and between two inputs with
    different patterns (``different``), for ``n_pairs`` disjoint pairs of rows of ``x``.
    Bias-free networks only (c·x is in x's region)."""
    from .networks import tangent_sensitivity

    if has_bias(params):
        raise ParameterError("tangent_check needs a bias-free network (c·x lies in x's region only then)")
    n_pairs = check_positive_int("n_pairs", n_pairs)
    same, diff = [], []
    idx = rng.choice(len(x), size=2 * n_pairs, replace=False)
    for j in range(n_pairs):
        x0, x1 = x[idx[2 * j]], x[idx[2 * j + 1]]
        S0 = tangent_sensitivity(params, x0)
        pat0 = activation_pattern(params, x0)

        def rel(x_: torch.Tensor) -> float:
            return float((tangent_sensitivity(params, x_) - S0).norm() / S0.norm())

        x_c = float(rng.uniform(0.2, 5.0)) * x0
        if not torch.equal(activation_pattern(params, x_c), pat0):
            raise AssertionError("c·x left x's activation region: the network has biases?")
        same.append(rel(x_c))
        for scale in (1e-3, 1e-4, 1e-5):  # a small perturbation that keeps the pattern
            x_p = x0 + scale * torch.tensor(rng.standard_normal(x.shape[1]))
            if torch.equal(activation_pattern(params, x_p), pat0):
                same.append(rel(x_p))
                break
        if not torch.equal(activation_pattern(params, x1), pat0):
            diff.append(rel(x1))
    return {"same": np.array(same), "different": np.array(diff)}


def ratio_text(x: float, se: float | None = None) -> str:
    """A ratio for the prose: whole numbers (thin-space groups) from 100 up, else 2 significant digits."""
    def one(v: float, d: int = 2) -> str:
        return f"{v:,.0f}".replace(",", "\u2009") if abs(v) >= 100 else f"{v:.{d}g}"
    return one(x) + (f" ± {one(se)}" if se is not None else "")


def join_words(words: Sequence[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def split_digits(
    x: np.ndarray, y: np.ndarray, rng: np.random.Generator, n_train: int, n_test: int = 297
) -> tuple[torch.Tensor, np.ndarray, torch.Tensor, np.ndarray]:
    """The digits shuffled once by ``rng``, flattened to float64 rows: the first ``n_train`` for
    training, the last ``n_test`` for testing (disjoint while n_train + n_test ≤ n)."""
    n_train, n_test = check_positive_int("n_train", n_train), check_positive_int("n_test", n_test)
    if n_train + n_test > len(x):
        raise ParameterError(f"n_train={n_train} + n_test={n_test} exceed the {len(x)} examples")
    perm = rng.permutation(len(x))
    X = torch.tensor(x.reshape(len(x), -1)[perm], dtype=torch.float64)
    Y = y[perm]
    return X[:n_train], Y[:n_train], X[-n_test:], Y[-n_test:]
