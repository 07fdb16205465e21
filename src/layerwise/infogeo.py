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
  F_i = E[(g_i ⊗ a_{i−1})(g_i ⊗ a_{i−1})ᵀ] = E[g_i g_iᵀ ⊗ a_{i−1}a_{i−1}ᵀ]
  ≈ E[g_i g_iᵀ] ⊗ E[a_{i−1}a_{i−1}ᵀ]
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

Chapter 8's experiment drivers and summaries (the tables, sweeps and runs it grades) are in
:mod:`layerwise.studies.ch08`; this module holds the science.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import scipy.linalg
import torch
from torch.func import grad, jvp, vmap

from .networks import (
    ACTIVATIONS,
    Params,
    act,
    act_deriv,
    flatten,
    forward,
    has_bias,
    init_mlp,
    n_weight_layers,
    tangent_sensitivity,
    train,
)
from .params import (
    ParameterError,
    check_choice,
    check_fraction,
    check_nonnegative,
    check_positive,
    check_positive_int,
)
from .stats import Estimate, estimate, jackknife_se, mean_se

#: Of :data:`layerwise.networks.ACTIVATIONS`, ``relu`` and ``leaky_relu`` satisfy σ(z) = σ'(z)z,
#: ``tanh`` does not.
HOMOGENEOUS = ("relu", "leaky_relu")
FISHER_LABELS = ("empirical", "model")
NOISE_MODES = ("isotropic", "multiplicative")


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
        chunks = torch.split(v, sizes)
        return {k: c.reshape(s) for k, c, s in zip(keys, chunks, shapes, strict=True)}

    return unflat


def one_hot(
    y: torch.Tensor | np.ndarray, n_classes: int, dtype: torch.dtype = torch.float64
) -> torch.Tensor:
    y = torch.as_tensor(np.asarray(y), dtype=torch.long)
    return torch.nn.functional.one_hot(y, n_classes).to(dtype)


def loss_fn(
    params: Params, x: torch.Tensor, yoh: torch.Tensor, activation: str = "relu"
) -> torch.Tensor:
    """Mean softmax cross-entropy; ``yoh`` one-hot (or any target distribution) of shape (n, C)."""
    f = forward(params, x, activation)
    return -(torch.log_softmax(f, dim=-1) * yoh).sum(-1).mean()


def _check_activation(activation: str) -> str:
    return check_choice("activation", activation, ACTIVATIONS)


# --------------------------------------------------------------------------------------------
# Fisher–Rao norm (Liang et al., Theorem 3.1)
# --------------------------------------------------------------------------------------------
def per_example_grads(
    params: Params, x: torch.Tensor, yoh: torch.Tensor, activation: str = "relu"
) -> torch.Tensor:
    """Exact per-example loss gradients ∇_θ ℓ(f(x_i), y_i), shape (n, P), by ``vmap(grad)``."""
    _check_activation(activation)

    def single(p: Params, xi: torch.Tensor, yi: torch.Tensor) -> torch.Tensor:
        return -(torch.log_softmax(forward(p, xi, activation), dim=-1) * yi).sum()

    g = vmap(grad(single), in_dims=(None, 0, 0))(params, x, yoh)
    return torch.cat([g[k].reshape(x.shape[0], -1) for k in params], dim=1)


def euler_residual(
    params: Params, x: torch.Tensor, activation: str = "relu", *, weighted: bool = False
) -> float:
    """max |⟨θ, ∂f/∂θ⟩ − (L+1) f| / max |f| over a batch (Liang et al., Lemma 2.1).

    ``⟨θ, ∂f/∂θ⟩`` is the directional derivative of θ ↦ f_θ(x) along θ, computed exactly with a
    forward-mode ``jvp``. With ``weighted=True`` the bias of layer ``l`` is weighted by ``l``
    (its degree of homogeneity), the generalisation of Euler's identity that holds with biases:
    Σ_l ⟨W_l, ∂f/∂W_l⟩ + Σ_l l·⟨b_l, ∂f/∂b_l⟩ = (L+1) f.
    """
    _check_activation(activation)
    n = n_weight_layers(params)
    tangent = {
        k: (v * int(k[1:]) if (weighted and k.startswith("b")) else v) for k, v in params.items()
    }
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
    return {
        "direct": direct,
        "identity": identity,
        "rel_diff": abs(direct - identity) / abs(direct),
    }


def fisher_matrix(
    params: Params, x: torch.Tensor, y: torch.Tensor | np.ndarray, activation: str = "relu"
) -> torch.Tensor:
    """Explicit empirical Fisher I(θ) = (1/n) Σ_i ∇ℓ_i ∇ℓ_iᵀ (P × P; for small networks only)."""
    f = forward(params, x, activation)
    g = per_example_grads(params, x, one_hot(y, f.shape[-1], f.dtype), activation)
    return g.T @ g / x.shape[0]


# --------------------------------------------------------------------------------------------
# Reparametrisations (Dinh et al., Definition 5) and norms
# --------------------------------------------------------------------------------------------
def alpha_scale(params: Params, alpha: float, layer: int = 1) -> Params:
    """T_α: multiply layer ``layer`` (weights and bias) by α and divide layer ``layer+1``'s
    weights by α.

    With a bias in layer ``layer+1`` the function is unchanged too (the bias is not touched).
    """
    alpha = check_positive("alpha", alpha)
    n = n_weight_layers(params)
    if not (1 <= layer < n):
        raise ParameterError(
            f"layer={layer} must be in 1..{n - 1} (it and the next layer are rescaled)"
        )
    out = dict(params)
    out[f"W{layer}"] = params[f"W{layer}"] * alpha
    if f"b{layer}" in params:
        out[f"b{layer}"] = params[f"b{layer}"] * alpha
    out[f"W{layer + 1}"] = params[f"W{layer + 1}"] / alpha
    return out


def unit_scale(
    params: Params, alpha: float, layer: int = 1, signs: torch.Tensor | None = None
) -> Params:
    """Unit-wise rescaling: hidden unit j of ``layer`` gets incoming weights × α^{s_j} and
    outgoing × α^{−s_j}.

    ``signs`` (±1 per unit) defaults to alternating +1, −1. Also a symmetry of ReLU networks
    (positive homogeneity per unit), finer than T_α (which is the case s_j = 1 for all j).
    """
    alpha = check_positive("alpha", alpha)
    n = n_weight_layers(params)
    if not (1 <= layer < n):
        raise ParameterError(f"layer={layer} must be in 1..{n - 1}")
    W = params[f"W{layer}"]
    if signs is None:
        signs = torch.tensor(
            [1.0 if j % 2 == 0 else -1.0 for j in range(W.shape[0])], dtype=W.dtype
        )
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
    return {
        "l2": l2,
        "frobenius_product": fro,
        "spectral_product": spec,
        "path_norm": float(v.sum().sqrt()),
    }


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
    on exact Hessian-vector products (reverse-over-reverse: the gradient's graph is built once and
    each product is one backward pass through it, without forward-mode's per-call tracing)."""
    _check_activation(activation)
    n_iter = check_positive_int("n_iter", n_iter)
    theta = flatten(params).detach().requires_grad_(True)
    P = theta.numel()
    n_iter = min(n_iter, P)
    with torch.enable_grad():
        (g,) = torch.autograd.grad(
            loss_fn(unflattener(params)(theta), x, yoh, activation), theta, create_graph=True
        )

    def hvp(u: torch.Tensor) -> torch.Tensor:
        return torch.autograd.grad(g, theta, u, retain_graph=True)[0]

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
    T = (
        np.diag(alphas)
        + np.diag(betas[: len(alphas) - 1], 1)
        + np.diag(betas[: len(alphas) - 1], -1)
    )
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
    """The ``n_draws`` Monte-Carlo terms L(θ+ν) − L(θ) of the expected sharpness (Neyshabur et
    al. 2017).

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
    v = sharpness_draws(
        params, x, yoh, activation, sigma=sigma, n_draws=n_draws, mode=mode, seed=seed
    )
    m, se = mean_se(v)  # the standard error is NaN for a single draw
    return float(m), float(se)


def sharpness_ratio(draws_num: np.ndarray, draws_den: np.ndarray) -> tuple[float, float]:
    """Ratio of two expected sharpnesses computed with the same noise draws, mean(num)/mean(den),
    and its delete-one jackknife standard error over the (paired) draws."""
    num, den = np.asarray(draws_num, float).ravel(), np.asarray(draws_den, float).ravel()
    if len(num) != len(den) or len(num) < 2:
        raise ParameterError(
            "sharpness_ratio needs >= 2 paired draws of equal length, "
            f"got {len(num)} and {len(den)}"
        )
    d = np.stack([num, den], 1)
    return jackknife_se(lambda s: s[:, 0].mean() / s[:, 1].mean(), d)


# --------------------------------------------------------------------------------------------
# Training and label randomisation
# --------------------------------------------------------------------------------------------
def randomize_labels(y: np.ndarray, fraction: float, n_classes: int, seed: int = 0) -> np.ndarray:
    """Replace a ``fraction`` of the labels (chosen at random) by uniform random classes (Zhang et
    al. 2017)."""
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
    """Full-batch Adam on the cross-entropy from a He initialisation
    (:func:`layerwise.networks.init_mlp`, trained by :func:`layerwise.networks.train`); stops after
    ``steps`` steps or once the training loss is ≤ ``target_loss``. Returns the parameters and the
    loss history."""
    _check_activation(activation)
    steps = check_positive_int("steps", steps)
    check_positive("lr", lr)
    check_nonnegative("target_loss", target_loss)
    params = init_mlp(widths, seed=seed, bias=bias, dtype=dtype)
    yoh = one_hot(y, widths[-1], dtype)
    x = x.to(dtype)
    hist = train(
        params,
        lambda idx: loss_fn(params, x, yoh, activation),
        lr=lr,
        optimizer="adam",
        sampling="full",
        steps=steps,
        target_loss=target_loss,
    )
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
    """One full-batch Adam run of the bias-free ReLU MLP (as :func:`train_mlp`: He
    initialisation from ``seed``, each step: loss, record, backward, step) read off under two
    stopping rules, the :data:`PROTOCOLS`.

    ``budget``: the parameters after exactly ``budget`` steps (a fixed training budget, whatever
    the loss); ``loss``: the parameters at the first step whose recorded loss is ≤ ``target_loss``
    *and* whose every training label is fitted (:func:`margins` > 0) — a fixed training loss at
    zero training error, the premise of the label-randomisation protocol (a misfit example alone
    costs at least ln 2 / n of mean loss, so a small loss does not imply zero error). The run goes
    on until both are taken or ``max_steps`` steps are done (then ``loss`` is None). Returns both
    networks, the loss history and ``target_step`` (steps to reach the target; None if not
    reached)."""
    budget, max_steps = (
        check_positive_int("budget", budget),
        check_positive_int("max_steps", max_steps),
    )
    if budget > max_steps:
        raise ParameterError(f"budget={budget} must be <= max_steps={max_steps}")
    check_positive("lr", lr)
    check_nonnegative("target_loss", target_loss)
    params = init_mlp(widths, seed=seed, dtype=dtype)
    yoh, x = one_hot(y, widths[-1], dtype), x.to(dtype)
    out: dict[str, Any] = {"budget": None, "loss": None, "target_step": None}

    def fits_all() -> bool:
        with torch.no_grad():
            return bool(margins(forward(params, x), y).min() > 0)

    def read_off(k: int, value: float | None) -> bool:
        """At step k (the parameters after k updates): take what is due; True stops."""
        if k == budget:
            out["budget"] = {name: v.detach().clone() for name, v in params.items()}
        if out["loss"] is None and value is not None and value <= target_loss and fits_all():
            out["loss"] = {name: v.detach().clone() for name, v in params.items()}
            out["target_step"] = k
        return k == max_steps or (k >= budget and out["loss"] is not None)

    out["hist"] = train(
        params,
        lambda idx: loss_fn(params, x, yoh),
        lr=lr,
        optimizer="adam",
        sampling="full",
        steps=max_steps + 1,  # the read-off at step max_steps stops before its update
        callback=read_off,
    )
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
    params: Params,
    x: torch.Tensor,
    y: np.ndarray,
    activation: str = "relu",
    *,
    margin_quantile: float = 0.1,
) -> dict[str, float]:
    """Norm-based capacity measures divided by the margin γ (Liang et al. §4; Neyshabur et al.
    2017).

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
    params: Params,
    x: torch.Tensor,
    y: np.ndarray,
    activation: str = "relu",
    *,
    labels: str = "model",
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
    """Both Fisher–Rao norms of Liang et al.'s Eq. (3.1) split exactly into (L+1) × a loss factor
    R × an effective margin M, ‖θ‖_fr = (L+1)·R·M.

    Empirical Fisher: per example ⟨∂ℓ/∂f, f⟩ = Σ_j p_j f_j − f_y = −r_i·m̄_i with the residual
    probability r_i = 1 − p_y and the residual-weighted margin
    m̄_i = Σ_{j≠y} p_j (f_y − f_j) / r_i, so ``R_empirical`` = √E[r²] and
    ``M_empirical`` = √(E[r² m̄²] / E[r²]) (m̄ computed on its own, not as a ratio).
    Model Fisher: E_{y∼p}⟨∂ℓ/∂f, f⟩² = Var_{y∼p}(f_y) = r_i·M_i² with r_i = 1 − max_j p_j, where
    M_i² = Var_p(f)/r_i → Σ_{j≠c} (p_j/r_i)(f_c − f_j)² (c the top class) as r_i → 0;
    ``R_model`` = √E[r] and ``M_model`` = √(E[Var_p f] / E[r]). At a small loss, r ≈ the
    per-example loss, so R carries the loss at which training stopped and M a margin."""
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
    return {
        "R_empirical": R_e,
        "M_empirical": float(((r_e * mbar) ** 2).mean().sqrt()) / R_e,
        "R_model": R_m,
        "M_model": float(var.mean().sqrt()) / R_m,
    }


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
    """Exact Fisher block F_ij = E_x Σ_k p_k vec(g_i aᵀ_{i−1}) vec(g_j aᵀ_{j−1})ᵀ (layers
    1-indexed)."""
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
    """Best Frobenius-norm approximation F ≈ B ⊗ C with B (m×m), C (n×n) (Van Loan & Pitsianis
    1993): the leading singular pair of the rearranged matrix R[(i,j),(k,l)] = F[i·n+k, j·n+l]."""
    if F.shape != (m * n, m * n):
        raise ParameterError(
            f"F has shape {tuple(F.shape)}; expected ({m * n}, {m * n}) for m={m}, n={n}"
        )
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


def kfac_analysis(
    params: Params, x: torch.Tensor, activation: str = "relu", *, n_eig: int = 0
) -> dict[str, np.ndarray]:
    """Per layer: relative Frobenius error of G⊗A, of the best Kronecker product and of the diagonal
    approximation diag(F); tr(G⊗A)/tr(F) with its jackknife standard error over inputs; and the
    sorted spectra of F_i and of G⊗A (eigenvalues of a Kronecker product are the products of the
    factors'). For the whole Fisher F (cross-layer blocks included): ``cross_layer_error`` =
    ‖off-diagonal blocks‖_F / ‖F‖_F (what block-diagonal K-FAC drops) and ``within_block_error`` =
    (Σ_i ‖F_ii − G_i⊗A_{i−1}‖_F²)^{1/2} / ‖F‖_F (what the Kronecker factorisation gets wrong)."""
    stats = layer_statistics(params, x, activation)
    n = n_weight_layers(params)
    out: dict[str, Any] = {
        "kfac_error": [],
        "best_kron_error": [],
        "diag_error": [],
        "block_norm": [],
        "trace_ratio": [],
        "trace_ratio_se": [],
    }
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
        ev_K = np.sort(
            np.outer(torch.linalg.eigvalsh(G).numpy(), torch.linalg.eigvalsh(A).numpy()).ravel()
        )[::-1]
        out[f"eig_exact_{i}"] = ev_F
        out[f"eig_kfac_{i}"] = ev_K.copy()
    total2 = cross2 + float(sum(b**2 for b in out["block_norm"]))
    out["cross_layer_error"] = math.sqrt(cross2 / total2)
    out["within_block_error"] = math.sqrt(within2 / total2)
    return {k: np.asarray(v) for k, v in out.items()}


def fisher_scores(stats: dict[str, Any], units: int | None = None) -> torch.Tensor:
    """The Fisher's square root U (n·C × P) with F = UᵀU/n: row (x, k) holds √p_k(x) times the
    score vec(g_l aᵀ_{l−1}) of every layer l in turn (each (d_l, d_{l−1}) row-major, the layout of
    :func:`exact_fisher_block`); with ``units``, only the weights between the first ``units``
    inputs and outputs of each layer."""
    p = stats["p"]
    N, C = p.shape
    cols = []
    for a, g in zip(stats["a"], stats["g"]):
        if units is not None:
            a, g = a[:, :units], g[:, :, :units]
        u = g[:, :, :, None] * a[:, None, None, :]
        cols.append((u * p.sqrt()[:, :, None, None]).reshape(N * C, -1))
    return torch.cat(cols, 1)


def loss_gradient(stats: dict[str, Any], y: Any) -> torch.Tensor:
    """The gradient of the mean cross-entropy over the inputs with labels ``y``, in the layout of
    :func:`fisher_scores`: layer l's block is mean_x g_l(x, y(x)) a_{l−1}(x)ᵀ (g_l with target
    class k is ∂ℓ(f, k)/∂s_l, :func:`layer_statistics`)."""
    y = torch.as_tensor(np.asarray(y), dtype=torch.long)
    n = stats["p"].shape[0]
    if y.shape != (n,):
        raise ParameterError(f"y must hold one label per input ({n}), got shape {tuple(y.shape)}")
    rows = torch.arange(n)
    parts = [
        (g[rows, y][:, :, None] * a[:, None, :]).mean(0).reshape(-1)
        for a, g in zip(stats["a"], stats["g"])
    ]
    return torch.cat(parts)


def _cosine(u: torch.Tensor, v: torch.Tensor) -> float:
    return float(u @ v / (u.norm() * v.norm()))


def block_shares(M: torch.Tensor, sizes: Sequence[int]) -> dict[str, float]:
    """Shares of ‖M‖_F² in the blocks of a layer partition (``sizes``): ``off_diagonal`` (blocks
    between different layers, what a block-diagonal approximation drops) and ``off_tridiagonal``
    (blocks between layers two or more apart, what a block-tridiagonal one drops)."""
    edges = np.concatenate([[0], np.cumsum(sizes)])
    if edges[-1] != M.shape[0] or M.shape[0] != M.shape[1]:
        raise ParameterError(f"sizes={list(sizes)} do not partition a {tuple(M.shape)} matrix")
    sq = M**2
    total = float(sq.sum())
    off = far = 0.0
    for i in range(len(sizes)):
        for j in range(len(sizes)):
            if i != j:
                b = float(sq[edges[i] : edges[i + 1], edges[j] : edges[j + 1]].sum())
                off += b
                far += b if abs(i - j) >= 2 else 0.0
    return {"off_diagonal": off / total, "off_tridiagonal": far / total}


def haar_rotation(P: int, gen: torch.Generator) -> torch.Tensor:
    """A Haar-distributed (uniformly random) orthogonal P × P float64 matrix: the Q of the QR
    decomposition of a standard Gaussian matrix, its columns' signs fixed by diag(R) > 0."""
    Q, R = torch.linalg.qr(
        torch.randn(check_positive_int("P", P), P, generator=gen, dtype=torch.float64)
    )
    return Q * torch.sign(torch.diagonal(R))[None, :]


def rotated_block_shares(trace: float, frob2: float, sizes: Sequence[int]) -> dict[str, float]:
    """The :func:`block_shares` that a symmetric matrix M with eigenvalues d (tr M = Σd =
    ``trace``, ‖M‖_F² = Σd² = ``frob2``) has on average when its eigenvectors are rotated at random
    (M ↦ QMQᵀ, Q Haar-distributed on O(P)): the same spectrum with no layer structure. With the
    fourth moments of a Haar matrix, E[q_ik² q_jk²] = 1/(P(P+2)) and
    E[q_ik q_jk q_il q_jl] = −1/((P−1)P(P+2)) (i ≠ j, k ≠ l), every entry off the diagonal has
    E[M_ij²] = (PΣd² − (Σd)²)/((P−1)P(P+2)), so a set of N off-diagonal entries holds the share
    N·(PΣd² − (Σd)²)/((P−1)P(P+2)Σd²) of ‖M‖_F² — the part of the spectrum that is not a multiple
    of the identity, spread evenly. N = P² − Σs_l² for ``off_diagonal`` and Σ_{|l−m|≥2} s_l s_m for
    ``off_tridiagonal`` (``sizes`` = s)."""
    s = np.asarray([check_positive_int("sizes", v) for v in sizes], dtype=float)
    P = float(s.sum())
    if P < 2 or not frob2 > 0:
        raise ParameterError(
            f"rotated_block_shares needs P >= 2 and frob2 > 0, got P={P:g}, frob2={frob2!r}"
        )
    per_entry = (P * frob2 - trace**2) / ((P - 1) * P * (P + 2) * frob2)
    far = sum(s[i] * s[j] for i in range(len(s)) for j in range(len(s)) if abs(i - j) >= 2)
    return {"off_diagonal": (P**2 - float(s @ s)) * per_entry, "off_tridiagonal": far * per_entry}


def gram(a: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """``scale`` · a aᵀ (float64, symmetric to the last bit) by BLAS ``dsyrk``, which computes
    one triangle: half the work of a general product. For a = Uᵀ (a transposed C-contiguous
    matrix, Fortran-contiguous) BLAS reads it in place."""
    a = np.asarray(a, dtype=np.float64)
    if a.shape[1] == 0:
        return np.zeros((a.shape[0], a.shape[0]))
    n = a.shape[0]
    c = scipy.linalg.blas.dsyrk(scale, a, beta=0.0, c=np.zeros((n, n), order="F"), overwrite_c=1)
    full = c + c.T  # the upper triangle and its mirror; the lower triangle of c is 0
    full.flat[:: n + 1] = c.diagonal()
    return full


def damped_eigh(F: torch.Tensor, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """All eigenpairs (w ascending, columns of q) of a symmetric positive semi-definite F, by
    LAPACK's divide-and-conquer driver (``evd``: the whole spectrum costs less than MRRR's part
    of it above a threshold, and one decomposition gives (F + λI)⁻¹ and its solves for every λ).
    Checks that F + ``lam``·I is positive definite (F's round-off eigenvalues below 0 stay above
    −λ), as its Cholesky factor would."""
    w, q = scipy.linalg.eigh(F.numpy(), driver="evd")
    if not w[0] + lam > 0:
        raise ParameterError(
            f"F + lam*I is not positive definite: lam={lam!r}, F's smallest eigenvalue {w[0]!r}"
        )
    return w, q


def inverse_structure(
    F: torch.Tensor,
    lam: float,
    sizes: Sequence[int],
    eig: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, float]:
    """The layer structure of the damped inverse (F + λI)⁻¹ of a symmetric positive
    semi-definite F against F's own and against a structureless F of the same spectrum.

    With F = Σ w qqᵀ, the inverse is Σ qqᵀ/(w + λ): on the directions with w ≪ λ it is λ⁻¹
    times the identity, which has no off-diagonal part at all, so the inverse's block structure
    is read where F acts, on the eigen-directions with w > λ: J₊ = Σ_{w>λ} qqᵀ/(w + λ). Returns
    the :func:`block_shares` ``fisher_…`` of F, ``inverse_…`` of the inverse and
    ``inverse_top_…`` of J₊ (``off_diagonal`` and ``off_tridiagonal``); the off-diagonal shares
    a random rotation of each has (``rotated_fisher_off_diagonal``,
    ``rotated_inverse_off_diagonal``, ``rotated_inverse_top_off_diagonal``;
    :func:`rotated_block_shares`: same spectrum, no layer structure); ``below_damping_fraction``,
    the fraction of F's eigenvalues ≤ λ, and ``below_damping_inverse_share``, their share of
    ‖(F + λI)⁻¹‖_F². ``eig``: F's eigenpairs as :func:`damped_eigh` gives them, if already
    computed; the inverse is J₊ plus the same sum over w ≤ λ. NaN for J₊ when no eigenvalue
    exceeds λ."""
    lam = check_positive("lam", lam)
    P = F.shape[0]
    w, q = damped_eigh(F, lam) if eig is None else eig
    k = int(np.searchsorted(w, lam, side="right"))  # w ascending: w[k:] > λ ≥ w[:k]
    d_all = 1.0 / (w + lam)  # the inverse's eigenvalues
    d = d_all[k:]  # on the directions above the damping
    top = gram(q[:, k:] * np.sqrt(d))  # Σ_{w>λ} qqᵀ/(w + λ)
    inv = torch.as_tensor(top + gram(q[:, :k] * np.sqrt(d_all[:k])))
    inv2 = float((inv**2).sum())
    shares = {
        "fisher": block_shares(F, sizes),
        "inverse": block_shares(inv, sizes),
        "rotated_fisher": rotated_block_shares(float(torch.trace(F)), float((F**2).sum()), sizes),
        "rotated_inverse": rotated_block_shares(float(torch.trace(inv)), inv2, sizes),
    }
    if len(d):
        shares["inverse_top"] = block_shares(torch.as_tensor(top), sizes)
        shares["rotated_inverse_top"] = rotated_block_shares(d.sum(), (d**2).sum(), sizes)
    else:  # no direction above the damping: the inverse is λ⁻¹I to round-off
        shares["inverse_top"] = shares["rotated_inverse_top"] = dict.fromkeys(
            ("off_diagonal", "off_tridiagonal"), math.nan
        )
    return {
        **{
            f"{m}_{part}": float(v)
            for m, sh in shares.items()
            for part, v in sh.items()
            if not (m.startswith("rotated") and part == "off_tridiagonal")
        },
        "below_damping_fraction": 1.0 - len(d) / P,
        "below_damping_inverse_share": 1.0 - float((d**2).sum()) / inv2,
    }


def natural_gradient_comparison(
    params: Params,
    x: torch.Tensor,
    y: Any,
    *,
    dampings: Sequence[float],
    structure_damping: float,
    activation: str = "relu",
) -> dict[str, np.ndarray]:
    """How well K-FAC's damped inverse stands in for the exact one (Martens & Grosse 2015, §§4–6).

    With F the exact Fisher of all layers (cross-layer blocks included), λ = δ · tr(F)/P for each
    relative damping δ of ``dampings`` (Tikhonov damping in units of the mean eigenvalue) and ∇L
    the loss gradient on (``x``, ``y``), the exact damped natural gradient is d = (F + λI)⁻¹∇L.
    Against it, per damping, the cosine of: ``cos_kfac`` — K-FAC, ⊕_l (G_l ⊗ A_{l−1} + λI)⁻¹∇L_l;
    ``cos_blocks`` — the exact diagonal blocks inverted alone, ⊕_l (F_ll + λI)⁻¹∇L_l (what
    dropping the blocks between layers costs, without the Kronecker factorisation);
    ``cos_diagonal`` — (diag F + λ)⁻¹∇L; ``cos_gradient`` — ∇L itself (no preconditioner). The
    exact solves go through one eigen-decomposition of F (:func:`damped_eigh`: F + λI =
    Q(Λ + λ)Qᵀ for every λ, and the same pairs give the structure below), the block solves
    through Cholesky factors of the damped blocks (positive definite for λ > 0); K-FAC's through
    the eigen-decompositions of G_l and A_{l−1} (a Kronecker product's eigenvectors are the
    products of its factors'). Structure at δ =
    ``structure_damping``: the keys of :func:`inverse_structure` (the block shares of F, of
    (F + λI)⁻¹ and of its part above the damping, with their rotated controls); ``lambda`` the
    absolute dampings."""
    dampings = [check_positive("dampings", d) for d in dampings]
    check_positive("structure_damping", structure_damping)
    if not dampings:
        raise ParameterError("dampings must hold at least one relative damping")
    stats = layer_statistics(params, x, activation)
    U = fisher_scores(stats)
    F = torch.as_tensor(gram(U.numpy().T, 1.0 / stats["p"].shape[0]))  # UᵀU/n
    P = F.shape[0]
    scale = float(torch.trace(F)) / P
    g = loss_gradient(stats, y)
    eye = torch.eye(P, dtype=F.dtype)
    sizes = [int(a.shape[1] * gg.shape[2]) for a, gg in zip(stats["a"], stats["g"])]
    edges = np.concatenate([[0], np.cumsum(sizes)])
    layers = []
    for l in range(len(sizes)):
        sl = slice(int(edges[l]), int(edges[l + 1]))
        G, A = kfac_factors(stats, l + 1)
        (wg, qg), (wa, qa) = (torch.linalg.eigh(M) for M in (G, A))
        V = g[sl].reshape(G.shape[0], A.shape[0])
        layers.append((sl, wg, qg, wa, qa, qg.T @ V @ qa))
    out: dict[str, list[float]] = {
        k: [] for k in ("cos_kfac", "cos_blocks", "cos_diagonal", "cos_gradient", "lambda")
    }
    eig = damped_eigh(F, min(dampings + [structure_damping]) * scale)
    w, q = (torch.as_tensor(v) for v in eig)
    gq = q.T @ g  # ∇L in F's eigenbasis
    for d in dampings:
        lam = d * scale
        exact = q @ (gq / (w + lam))
        kfac, blocks = torch.empty_like(g), torch.empty_like(g)
        for sl, wg, qg, wa, qa, vt in layers:
            # (G ⊗ A + λI)⁻¹ vec(V) = vec(Q_G [(Q_Gᵀ V Q_A) ⊘ (λ_G λ_Aᵀ + λ)] Q_Aᵀ)
            kfac[sl] = (qg @ (vt / (wg[:, None] * wa[None, :] + lam)) @ qa.T).reshape(-1)
            block = torch.linalg.cholesky(F[sl, sl] + lam * eye[sl, sl])
            blocks[sl] = torch.cholesky_solve(g[sl, None], block)[:, 0]
        diagonal = g / (torch.diagonal(F) + lam)
        for key, v in (
            ("cos_kfac", kfac),
            ("cos_blocks", blocks),
            ("cos_diagonal", diagonal),
            ("cos_gradient", g),
        ):
            out[key].append(_cosine(v, exact))
        out["lambda"].append(lam)
    structure = inverse_structure(F, structure_damping * scale, sizes, eig)
    return {k: np.asarray(v) for k, v in (out | structure).items()}


def fisher_subset(
    params: Params, x: torch.Tensor, units: int, activation: str = "relu"
) -> dict[str, np.ndarray]:
    """Exact Fisher (all layers, cross-layer blocks included) and its block-diagonal K-FAC
    approximation restricted to the weights between the first ``units`` inputs and first ``units``
    outputs of every layer (what Martens & Grosse's Fig. 2 shows for a few middle layers)."""
    units = check_positive_int("units", units)
    stats = layer_statistics(params, x, activation)
    kblocks = []
    for l in range(1, n_weight_layers(params) + 1):
        G, A = kfac_factors(stats, l)
        kblocks.append(torch.kron(G[:units, :units], A[:units, :units]))
    U = fisher_scores(stats, units)
    F = U.T @ U / stats["p"].shape[0]
    K = torch.block_diag(*kblocks)
    sizes = np.array([b.shape[0] for b in kblocks])
    return {"exact": F.numpy(), "kfac": K.numpy(), "block_sizes": sizes}


# --------------------------------------------------------------------------------------------
# Studies of the rescalings, the inverse structure, tangents and label randomisation (Chapter 8)
# --------------------------------------------------------------------------------------------


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
    out = {
        k: np.zeros((2, len(al)))
        for k in (
            "dfun",
            "fr",
            "l2",
            "spec",
            "fro",
            "lam",
            "lam2",
            "iso",
            "iso_se",
            "mult",
            "mult_se",
        )
    }
    out["iso_draws"] = np.zeros((2, len(al), sharp_draws))
    for t, tf in enumerate((alpha_scale, unit_scale)):
        for i, a in enumerate(al):
            q = tf(params, float(a))
            out["dfun"][t, i] = float((forward(q, x) - f0).abs().max() / f0.abs().max())
            out["fr"][t, i] = fisher_rao(q, x, y)["direct"] / fr0
            w = weight_norms(q)
            out["l2"][t, i] = w["l2"]
            out["spec"][t, i] = w["spectral_product"]
            out["fro"][t, i] = w["frobenius_product"]
            out["lam"][t, i] = hessian_top_eigenvalue(
                q, x, yoh, n_iter=lanczos_iter, seed=seed_lanczos
            )
            out["lam2"][t, i] = hessian_top_eigenvalue(
                q, x, yoh, n_iter=2 * lanczos_iter, seed=seed_lanczos2
            )
            for mode, key in (("isotropic", "iso"), ("multiplicative", "mult")):
                d = sharpness_draws(
                    q, x, yoh, sigma=sharp_sigma, n_draws=sharp_draws, mode=mode, seed=seed_noise
                )
                e = estimate(d)
                out[key][t, i], out[key + "_se"][t, i] = e.mean, e.se
                if key == "iso":
                    out["iso_draws"][t, i] = d
    return {"alphas": al, **out}


def reparam_summary(R: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """The numbers the reparametrisation claims decide, from :func:`reparam_sweep`'s arrays:
    ``lam_ratio`` = max_α λ_max / λ_max(α = 1) under T_α; the log-log slopes of λ_max between the
    two largest (``slope_hi``) and the two smallest α (``slope_lo``); ``lam_conv`` = the largest
    relative difference of Lanczos with n and 2n iterations; ``iso_ratio`` = the smaller of the
    isotropic expected sharpnesses at the grid's ends over α = 1, an :class:`Estimate` (ratio of
    means over the same noise draws, jackknife standard error over the paired draws, n − 1 d.o.f.);
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
    n_draws = R["iso_draws"].shape[-1]
    mult = R["mult"]
    return {
        "i1": i1,
        "lam_ratio": float(lam[0].max() / lam[0, i1]),
        "slope_hi": float(
            np.log(lam[0, k_hi] / lam[0, k_hi - 1]) / np.log(al[k_hi] / al[k_hi - 1])
        ),
        "slope_lo": float(np.log(lam[0, 1] / lam[0, 0]) / np.log(al[1] / al[0])),
        "lam_conv": float(np.max(np.abs(R["lam"] - R["lam2"]) / R["lam2"])),
        "iso_ratio": Estimate(float(iso_r), float(iso_se), n_draws - 1, n_draws),
        "mult_dev": float(np.max(np.abs(mult - mult[0, i1]) / abs(mult[0, i1]))),
        "spec_t_dev": float(np.max(np.abs(R["spec"][0] / R["spec"][0, i1] - 1))),
        "inv_dev": float(max(R["dfun"].max(), np.abs(R["fr"] - 1).max())),
        "l2_range": float(R["l2"][0].max() / R["l2"][0].min()),
        "spec_unit_range": float(R["spec"][1].max() / R["spec"][1].min()),
        "alpha_second": float(al[k_hi - 1]),
    }


def inverse_structure_truth(
    sizes: Sequence[int],
    damping: float,
    seed: int,
    above: float = 0.3,
    mixed: int = 10,
    rotated_tol: float = 0.05,
) -> dict[str, float]:
    """Estimator control of the inverse-structure claims on synthetic truth with the chapter's
    layer ``sizes`` and relative damping: F = Σ w qqᵀ (tr F = P, so λ = ``damping``) whose
    eigenvectors are layer-local except ``mixed`` per layer, which are mixed across the layers
    by a random rotation and carry most of F's norm (eigenvalues log-spaced over one decade, the
    rest of the trace); a fraction ``above`` of the local ones lie above λ (log-spaced over
    [2λ, 100λ]) and the others are 0. The inverse's part above λ is then block-diagonal but for
    the weak mixed terms, and F is not. Returns ``structured_excess`` (the claim's quantity,
    :func:`~layerwise.infogeo.inverse_structure`'s ratio on the directions above λ minus its
    rotated control's), ``structured_exact`` (the same from the construction itself),
    ``rotated_excess`` (the claim's quantity for a Haar rotation of the same F: ≈ 0) and
    ``passed``: 1.0 when the first agrees with the construction to 10⁻⁶ and the last lies within
    ±``rotated_tol``, else 0.0."""
    sizes = [check_positive_int("sizes", v) for v in sizes]
    check_positive("damping", damping)
    check_fraction("above", above)
    mixed = check_positive_int("mixed", mixed)
    if mixed > min(sizes):
        raise ParameterError(f"mixed={mixed} must be <= the smallest layer size {min(sizes)}")
    gen = torch.Generator().manual_seed(int(seed))
    P = sum(sizes)
    basis = torch.block_diag(*[haar_rotation(n, gen) for n in sizes])
    starts = np.cumsum([0, *sizes[:-1]])
    cross = [int(a + k) for a in starts for k in range(mixed)]
    basis[:, cross] = basis[:, cross] @ haar_rotation(
        len(cross), gen
    )  # directions across the layers
    local = [i for i in range(P) if i not in set(cross)][: int(above * P)]
    lam = damping  # tr F = P below, so λ = damping · tr F / P = damping
    w = torch.zeros(P, dtype=torch.float64)
    w[local] = torch.logspace(
        float(np.log10(2 * lam)), float(np.log10(100 * lam)), len(local), dtype=torch.float64
    )
    spread = torch.logspace(0, 1, len(cross), dtype=torch.float64)
    w[cross] = spread * (P - float(w[local].sum())) / float(spread.sum())
    if not float(w[cross].min()) > 100 * lam:
        raise ParameterError(f"damping={damping!r} is too large for this construction (≤ 0.02)")
    F = (basis * w) @ basis.T

    def excess(r: Mapping[str, float]) -> float:
        return (
            r["inverse_top_off_diagonal"] / r["fisher_off_diagonal"]
            - r["rotated_inverse_top_off_diagonal"] / r["rotated_fisher_off_diagonal"]
        )

    structured = inverse_structure(F, lam, sizes)
    keep = [*cross, *local]
    top = (basis[:, keep] / (w[keep] + lam)) @ basis[:, keep].T
    exact = block_shares(top, sizes)["off_diagonal"] / block_shares(F, sizes)["off_diagonal"]
    R = haar_rotation(P, gen)
    rotated = inverse_structure(R @ F @ R.T, lam, sizes)
    control = (
        structured["rotated_inverse_top_off_diagonal"] / structured["rotated_fisher_off_diagonal"]
    )
    out = {
        "structured_excess": excess(structured),
        "structured_exact": exact - control,
        "rotated_excess": excess(rotated),
    }
    # the control passes when the construction is recovered to round-off and the rotation
    # scores its control's value within ``rotated_tol``
    out["passed"] = float(
        abs(out["structured_excess"] - out["structured_exact"]) < 1e-6
        and abs(out["rotated_excess"]) < rotated_tol
    )
    return out


def loss_share(R: Any, fr_over_margin: Any) -> Estimate:
    """Share of the change of log(‖θ‖_fr/γ) between two label conditions carried by the loss factor
    R of :func:`~layerwise.infogeo.fisher_rao_factors`: mean Δlog R / mean Δlog(‖θ‖_fr/γ), where Δ
    is random − clean for each pair of networks with the same initialisation (arrays of shape
    (nets, 2), columns clean and random); since log(‖θ‖_fr/γ) = log(L+1) + log R + log(M/γ),
    1 − share is carried by M/γ. Returns the share with its delete-one jackknife standard error
    over the pairs and n − 1 d.o.f."""
    R, F = np.log(np.asarray(R, float)), np.log(np.asarray(fr_over_margin, float))
    if R.shape != F.shape or R.ndim != 2 or R.shape[1] != 2 or R.shape[0] < 2:
        raise ParameterError(
            f"loss_share needs two arrays of shape (nets >= 2, 2); got {R.shape} and {F.shape}"
        )
    d = np.stack([R[:, 1] - R[:, 0], F[:, 1] - F[:, 0]], 1)
    share, se = jackknife_se(lambda s: s[:, 0].mean() / s[:, 1].mean(), d)
    return Estimate(float(share), float(se), len(d) - 1, len(d))


def tangent_check(
    params: Params, x: torch.Tensor, n_pairs: int, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """Daróczy's Lemma 3.1 seen on data: relative Frobenius change ‖S(x′) − S(x)‖/‖S(x)‖ of the
    tangent sample sensitivity (:func:`layerwise.networks.tangent_sensitivity`) between points of
    one activation region (``same``: c·x for a random c in [0.2, 5], and x plus the first of
    perturbations of size 10⁻³, 10⁻⁴, 10⁻⁵ that keeps the pattern) and between two inputs with
    different patterns (``different``), for ``n_pairs`` disjoint pairs of rows of ``x``.
    Bias-free networks only (c·x is in x's region)."""
    if has_bias(params):
        raise ParameterError(
            "tangent_check needs a bias-free network (c·x lies in x's region only then)"
        )
    n_pairs = check_positive_int("n_pairs", n_pairs)
    same, diff = [], []
    idx = rng.choice(len(x), size=2 * n_pairs, replace=False)
    for j in range(n_pairs):
        x0, x1 = x[idx[2 * j]], x[idx[2 * j + 1]]
        S0 = tangent_sensitivity(params, x0)
        pat0 = activation_pattern(params, x0)

        def rel(x_: torch.Tensor, S0: torch.Tensor = S0) -> float:
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


#: (activation, biases) of the Fisher–Rao table: the two homogeneous cases, then the two that
#: break it.
FR_CASES = (("relu", False), ("leaky_relu", False), ("relu", True), ("tanh", False))


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
                p = init_mlp(
                    [x.shape[1]] + [w] * L + [n_classes],
                    seed=seed_of(activation, bias, L, w),
                    bias=bias,
                    bias_std=0.1,
                )
                for labels in FISHER_LABELS:
                    r = fisher_rao(p, x, y, activation, labels=labels)
                    rows.append(
                        dict(
                            case=f"{activation}{' + bias' if bias else ''}",
                            activation=activation,
                            bias=bias,
                            L=L,
                            width=w,
                            labels=labels,
                            n_params=int(flatten(p).numel()),
                            direct=r["direct"],
                            identity=r["identity"],
                            rel_diff=r["rel_diff"],
                            euler=euler_residual(p, x, activation),
                            euler_weighted=euler_residual(p, x, activation, weighted=True),
                        )
                    )
    return rows


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
    ``fraction`` of the training labels randomised, one
    :func:`~layerwise.infogeo.train_two_protocols` run (at most ``steps`` steps), and for each
    protocol ``q`` in :data:`~layerwise.infogeo.PROTOCOLS` (``budget``: after ``budget`` steps;
    ``loss``: at the first loss ≤ ``target_loss`` with every training label fitted):
    :func:`~layerwise.infogeo.capacity_measures`
    and :func:`~layerwise.infogeo.fisher_rao_factors` on the training set, the test accuracy and
    the training loss, as keys ``{q}_{name}``; also ``target_step`` (−1 if the target was not
    reached: then the ``loss_…`` entries are NaN)."""
    yr = randomize_labels(y, fraction, widths[-1], seed=label_seed)
    run = train_two_protocols(
        x,
        yr,
        widths,
        budget=budget,
        max_steps=steps,
        lr=lr,
        seed=init_seed,
        target_loss=target_loss,
    )
    yoh = one_hot(yr, widths[-1])
    target = -1 if run["target_step"] is None else run["target_step"]
    out: dict[str, np.ndarray] = {"target_step": np.array(target)}
    for q in PROTOCOLS:
        p = run[q]
        if p is None:  # the target loss was not reached within ``steps``
            p_nan = run["budget"]
            keys = list(capacity_measures(p_nan, x, yr)) + list(fisher_rao_factors(p_nan, x, yr))
            out.update(
                {f"{q}_{k}": np.array(np.nan) for k in keys + ["test_accuracy", "final_loss"]}
            )
            continue
        m = {**capacity_measures(p, x, yr), **fisher_rao_factors(p, x, yr)}
        with torch.no_grad():
            m["final_loss"] = float(loss_fn(p, x, yoh))
        m["test_accuracy"] = float((forward(p, x_test).argmax(1).numpy() == y_test).mean())
        out.update({f"{q}_{k}": np.array(v) for k, v in m.items()})
    return out


KFAC_STATES = ("init", "trained")


def kfac_summary(K: Sequence[Mapping[str, np.ndarray]]) -> dict[str, Any]:
    """Per-layer errors of :func:`~layerwise.studies.ch08.kfac_study` (:func:`kfac_analysis` at
    initialisation and after training) over (≥ 2) nets, by state: ``err`` (K-FAC), ``best``
    (best Kronecker product), ``diag`` (diagonal), each ``{state: (nets, layers)}``; ``cross`` and
    ``within`` (``{state: (nets,)}``) and ``cross_share`` = cross²/(cross² + within²), the share of
    K-FAC's squared error ‖F − F̂‖_F² in the blocks between layers it drops; ``gap`` =
    layer-averaged K-FAC error trained − init per net; ``trace_worst``/``trace_worst_se`` =
    tr(G⊗A)/tr(F) at initialisation furthest from 1 over layers and nets, with its jackknife
    standard error; ``trace_worst_trained`` = the same after training (no error); ``trace_mean`` =
    the :class:`Estimate` over nets of the ratio in the layer (``trace_layer``) whose mean is
    furthest from 1, and ``trace_mean_trained`` the same mean after training; ``diag_ratio`` = per
    net, the largest K-FAC error / diagonal error over layers and states."""
    if len(K) < 2:
        raise ParameterError(f"kfac_summary needs >= 2 nets for its standard errors, got {len(K)}")
    S = KFAC_STATES
    out: dict[str, Any] = {
        "err": {t: np.array([k[f"{t}_kfac_error"] for k in K]) for t in S},
        "best": {t: np.array([k[f"{t}_best_kron_error"] for k in K]) for t in S},
        "diag": {t: np.array([k[f"{t}_diag_error"] for k in K]) for t in S},
        "cross": {t: np.array([float(k[f"{t}_cross_layer_error"]) for k in K]) for t in S},
        "within": {t: np.array([float(k[f"{t}_within_block_error"]) for k in K]) for t in S},
    }
    out["gap"] = out["err"]["trained"].mean(1) - out["err"]["init"].mean(1)
    # ‖F − K‖² = ‖dropped blocks‖² + Σ_i ‖F_ii − G_i⊗A_{i−1}‖²: the dropped blocks' share
    out["cross_share"] = {
        t: out["cross"][t] ** 2 / (out["cross"][t] ** 2 + out["within"][t] ** 2) for t in S
    }
    tr_ratio = np.array([k["init_trace_ratio"] for k in K])
    tr_se = np.array([k["init_trace_ratio_se"] for k in K])
    w_net, w_layer = np.unravel_index(np.argmax(np.abs(tr_ratio - 1)), tr_ratio.shape)
    out["trace_worst"] = float(tr_ratio[w_net, w_layer])
    out["trace_worst_se"] = float(tr_se[w_net, w_layer])
    tr_trained = np.array([k["trained_trace_ratio"] for k in K])
    out["trace_worst_trained"] = float(tr_trained.flat[np.argmax(np.abs(tr_trained - 1))])
    # averaged over nets (the expectation over the initialisation), the layer furthest from 1
    layer = int(np.argmax(np.abs(tr_ratio.mean(0) - 1)))
    out["trace_mean"] = estimate(tr_ratio[:, layer])
    out["trace_layer"] = layer + 1
    trained_mean = tr_trained.mean(0)
    out["trace_mean_trained"] = float(trained_mean[np.argmax(np.abs(trained_mean - 1))])
    out["trace_ratio"] = {"init": tr_ratio, "trained": tr_trained}
    # per net, K-FAC's error over the diagonal's in the layer and state where K-FAC does worst
    out["diag_ratio"] = np.array(
        [max(float((k[f"{t}_kfac_error"] / k[f"{t}_diag_error"]).max()) for t in S) for k in K]
    )
    return out
