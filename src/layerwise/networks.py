"""Fully-connected networks shared by Chapters 6–8: build, initialisation, forward, tangent
sample sensitivity and one trainer.

Conventions.  A network is a dict of float tensors ``W1, b1, W2, …`` (biases optional, per layer);
``W_l`` has shape (…, d_l, d_{l−1}) and layer ``l`` maps ``h ↦ h W_lᵀ + b_l``; every layer but
the last is followed by the activation.  A leading dimension K (``n_nets``) stacks K independent
networks of the same shape, evaluated with one batched product per layer.  Row-major
vectorisation (``W.reshape(-1)``), parameters in the dict's order.

* Initialisation: W_l ~ N(0, σ_w²/d_{l−1}) (He et al. 2015 for σ_w² = 2; the random nets of the
  mean-field theory of Poole et al. 2016, Eq. 1, for general σ_w²), b_l ~ N(0, σ_b²).
* Tangent sample sensitivity (Daróczy, slides §3, Definition 3.1): Sens_tan(x; θ) = ∂²f/∂θ∂x, the
  input-derivative of the parameter gradient; constant on every activation region of a ReLU
  network (Lemma 3.1).
* Training: (mini-batch) SGD or Adam (Kingma & Ba 2015) on a loss the caller supplies.

Every random draw comes from an explicit ``torch.Generator``; the order of the draws is part of
each function's contract (the chapters' results are cached by it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import torch

from .params import (
    ParameterError,
    check_choice,
    check_nonnegative,
    check_positive,
    check_positive_int,
)

#: Activations: ``relu`` and ``leaky_relu`` are positively homogeneous (σ(z) = σ'(z) z).
ACTIVATIONS = ("relu", "leaky_relu", "tanh")
#: Orders of the initial draws (see :func:`init_mlp`).
DRAW_ORDERS = ("layer", "weights_first")
OPTIMIZERS = ("sgd", "adam")
SAMPLINGS = ("full", "epochs", "replacement", "permutations")

Params = dict[str, torch.Tensor]


# --------------------------------------------------------------------------------------------
# Build
# --------------------------------------------------------------------------------------------
def check_widths(widths: Any, *, min_len: int = 2) -> list[int]:
    """Validate a list of layer widths: at least ``min_len`` positive integers.

    The full architecture is ``[d_in, h_1, …, h_L, d_out]`` (``min_len=2``); a list of hidden
    widths alone is checked with ``min_len=1``."""
    if (
        isinstance(widths, (int, np.integer, str, bytes))
        or not isinstance(widths, Sequence)
        or len(widths) < min_len
    ):
        what = "[d_in, h_1, ..., h_L, d_out]" if min_len >= 2 else "of hidden widths"
        raise ParameterError(
            f"widths={widths!r} must be a list {what} of >= {min_len} positive integers"
        )
    return [check_positive_int("widths[i]", w) for w in widths]


def init_mlp(
    widths: Sequence[int],
    *,
    seed: int = 0,
    generator: torch.Generator | None = None,
    sigma_w2: float | Sequence[float] | np.ndarray = 2.0,
    bias: bool | str = False,
    bias_std: float = 0.1,
    n_nets: int | None = None,
    order: str = "layer",
    fan_in_first: bool = False,
    dtype: torch.dtype = torch.float64,
) -> Params:
    """Random fully-connected network(s) with layer widths ``[d_in, h_1, …, h_L, d_out]``:
    W_l ~ N(0, σ_w²/d_{l−1}) (He initialisation for σ_w² = 2), b_l ~ N(0, ``bias_std``²).

    ``bias``: False (none), True (every layer) or ``"hidden"`` (hidden layers only, linear
    read-out without bias).  ``n_nets=K`` draws K independent networks stacked along a leading
    dimension; then ``sigma_w2`` may hold one σ_w² per network.

    The draws come from ``generator`` (advanced in place) or a fresh one seeded with ``seed``:
    ``order="layer"`` draws W_1, b_1, W_2, b_2, …; ``"weights_first"`` draws the hidden weights
    W_1…W_L, then the hidden biases b_1…b_L, then the read-out W_{L+1} (and b_{L+1}).  With
    ``fan_in_first`` each weight matrix is drawn as (…, d_{l−1}, d_l) and stored as the transposed
    view, so that ``forward`` multiplies by the drawn array itself.  A scalar σ_w² scales a draw
    once, by √(σ_w²/d_{l−1}); per-network σ_w² scale it by √σ_w² (in ``dtype``), then divide it
    by √d_{l−1}.
    """
    widths = check_widths(widths)
    check_nonnegative("bias_std", bias_std)
    check_choice("order", order, DRAW_ORDERS)
    if bias not in (False, True, "hidden"):
        raise ParameterError(f"bias={bias!r} must be False, True or 'hidden'")
    batch: tuple[int, ...] = () if n_nets is None else (check_positive_int("n_nets", n_nets),)
    sw = np.asarray(sigma_w2, dtype=float)
    if sw.ndim == 0:
        check_positive("sigma_w2", float(sw))
        per_net = None
    else:
        if not batch or sw.shape != batch or np.any(sw <= 0):
            raise ParameterError(
                f"sigma_w2={sigma_w2!r}: one positive value per network "
                f"(n_nets={n_nets}) or a scalar"
            )
        per_net = torch.as_tensor(np.sqrt(sw), dtype=dtype)[:, None, None]
    gen = generator if generator is not None else torch.Generator().manual_seed(int(seed))
    n = len(widths) - 1

    def weight(l: int) -> torch.Tensor:
        a, b = widths[l - 1], widths[l]
        shape = (*batch, a, b) if fan_in_first else (*batch, b, a)
        W = torch.randn(*shape, generator=gen, dtype=dtype)
        W = W * math.sqrt(float(sw) / a) if per_net is None else W * per_net / math.sqrt(a)
        return W.transpose(-1, -2) if fan_in_first else W

    def bias_(l: int) -> torch.Tensor:
        return torch.randn(*batch, widths[l], generator=gen, dtype=dtype) * bias_std

    has_b = [bool(bias) and (bias is True or l < n) for l in range(1, n + 1)]
    drawn: dict[str, torch.Tensor] = {}
    if order == "layer":
        for l in range(1, n + 1):
            drawn[f"W{l}"] = weight(l)
            if has_b[l - 1]:
                drawn[f"b{l}"] = bias_(l)
    else:
        for l in range(1, n):
            drawn[f"W{l}"] = weight(l)
        for l in range(1, n):
            if has_b[l - 1]:
                drawn[f"b{l}"] = bias_(l)
        drawn[f"W{n}"] = weight(n)
        if has_b[n - 1]:
            drawn[f"b{n}"] = bias_(n)
    # the dict in layer order W1, b1, W2, … whatever the order of the draws
    return {k: drawn[k] for l in range(1, n + 1) for k in (f"W{l}", f"b{l}") if k in drawn}


def from_pairs(layers: Sequence[tuple[Any, Any]], dtype: torch.dtype = torch.float64) -> Params:
    """A network ``{W1, b1, …}`` from ``[(W1, b1), …]`` pairs (numpy or torch; ``b`` may
    be None)."""
    p: Params = {}
    for l, (W, b) in enumerate(layers, start=1):
        p[f"W{l}"] = torch.as_tensor(np.asarray(W) if not isinstance(W, torch.Tensor) else W).to(
            dtype
        )
        if b is not None:
            p[f"b{l}"] = torch.as_tensor(
                np.asarray(b) if not isinstance(b, torch.Tensor) else b
            ).to(dtype)
    return p


def n_weight_layers(params: Params) -> int:
    """Number of weight matrices, L+1."""
    n = sum(1 for k in params if k.startswith("W"))
    if n == 0 or any(f"W{l}" not in params for l in range(1, n + 1)):
        raise ParameterError(f"params must hold W1..Wn; got keys {sorted(params)}")
    return n


def has_bias(params: Params) -> bool:
    return any(k.startswith("b") for k in params)


def flatten(params: Params) -> torch.Tensor:
    """All parameters in one vector, in the dict's order (W1, b1, W2, …)."""
    return torch.cat([v.reshape(-1) for v in params.values()])


# --------------------------------------------------------------------------------------------
# Forward
# --------------------------------------------------------------------------------------------
def act(z: torch.Tensor, activation: str, slope: float = 0.1) -> torch.Tensor:
    """σ(z): ReLU, leaky ReLU (negative ``slope``) or tanh."""
    if activation == "relu":
        return torch.relu(z)
    if activation == "leaky_relu":
        return torch.where(z > 0, z, slope * z)
    return torch.tanh(z)


def act_deriv(z: torch.Tensor, activation: str, slope: float = 0.1) -> torch.Tensor:
    """σ'(z) of :func:`act` (0 at z = 0 for the ReLUs)."""
    if activation == "relu":
        return (z > 0).to(z.dtype)
    if activation == "leaky_relu":
        return torch.where(z > 0, torch.ones_like(z), torch.full_like(z, slope))
    return 1 - torch.tanh(z) ** 2


def forward(
    params: Params, x: torch.Tensor, activation: str = "relu", slope: float = 0.1
) -> torch.Tensor:
    """Network output: h_l = σ(h_{l−1} W_lᵀ + b_l), linear last layer.

    ``x`` is a batch (n, d_in) or one input (d_in,).  Stacked networks (W of shape (K, d_l,
    d_{l−1})) take a batch (n, d_in), shared by all K, or (K, n, d_in), and return (K, n, d_out)."""
    n = n_weight_layers(params)
    stacked = params["W1"].ndim == 3
    h = x
    if stacked and h.ndim == 2:
        h = h.expand(params["W1"].shape[0], *h.shape)
    for l in range(1, n + 1):
        W, b = params[f"W{l}"], params.get(f"b{l}")
        if stacked:
            Wt = W.transpose(1, 2)
            h = torch.bmm(h, Wt) if b is None else torch.baddbmm(b[:, None, :], h, Wt)
        else:
            h = h @ W.T
            if b is not None:
                h = h + b
        if l < n:
            h = act(h, activation, slope)
    return h


# --------------------------------------------------------------------------------------------
# Tangent sample sensitivity (Daróczy, slides §3, Definition 3.1 and Lemma 3.1)
# --------------------------------------------------------------------------------------------
def tangent_sensitivity(
    params: Params,
    x: torch.Tensor | np.ndarray,
    *,
    directions: torch.Tensor | np.ndarray | None = None,
    output: int = 0,
    activation: str = "relu",
) -> torch.Tensor:
    """Sens_tan(x; θ) = ∂²f_output/∂θ∂x: the derivative of the parameter gradient ∇_θ f_output
    along the input ``directions`` (d_in, k) (default: every input axis, k = d_in).

    One input (d_in,) gives (#params, k); a batch (n, d_in) gives (n, #params, k).  Parameters
    are flattened in the dict's order.  Computed exactly by forward-mode differentiation
    (``jacfwd``) of the reverse-mode parameter gradient, one input at a time (``vmap``; each layer
    as the matrix-vector product h ↦ σ(W h + b), equal to :func:`forward` up to rounding)."""
    from torch.func import grad, jacfwd, vmap

    check_choice("activation", activation, ACTIVATIONS)
    n = n_weight_layers(params)
    W1 = params["W1"]
    d_in, d_out = W1.shape[1], params[f"W{n}"].shape[0]
    if not 0 <= int(output) < d_out:
        raise ParameterError(f"output={output!r} must be in 0..{d_out - 1}")
    D = (
        torch.eye(d_in, dtype=W1.dtype)
        if directions is None
        else torch.as_tensor(directions, dtype=W1.dtype)
    )
    if D.ndim != 2 or D.shape[0] != d_in:
        raise ParameterError(f"directions must have shape ({d_in}, k)")
    X = torch.as_tensor(x, dtype=W1.dtype)
    single = X.ndim == 1
    keys = list(params)

    def f(p: Params, x0: torch.Tensor) -> torch.Tensor:  # one input: h ↦ σ(W h + b)
        h = x0
        for l in range(1, n + 1):
            h = p[f"W{l}"] @ h
            if f"b{l}" in p:
                h = h + p[f"b{l}"]
            if l < n:
                h = act(h, activation)
        return h[output]

    def gflat(u: torch.Tensor, x0: torch.Tensor) -> torch.Tensor:
        g = grad(f)(params, x0 + D @ u)
        return torch.cat([g[k].reshape(-1) for k in keys])

    u0 = torch.zeros(D.shape[1], dtype=W1.dtype)
    J = vmap(lambda x0: jacfwd(gflat)(u0, x0))(X.reshape(-1, d_in))
    return J[0] if single else J


# --------------------------------------------------------------------------------------------
# The trainer
# --------------------------------------------------------------------------------------------
def train(
    params: Params,
    loss: Callable[[torch.Tensor | None], torch.Tensor],
    *,
    lr: float,
    optimizer: str = "adam",
    sampling: str = "full",
    steps: int | None = None,
    epochs: int | None = None,
    n: int | None = None,
    batch: int | None = None,
    n_nets: int = 1,
    generator: torch.Generator | None = None,
    target_loss: float | None = None,
    callback: Callable[[int, Any], bool | None] | None = None,
    device: str | torch.device = "cpu",
) -> np.ndarray:
    """Train ``params`` in place by gradient descent (``"sgd"``) or Adam on ``loss(idx)``.

    ``loss`` maps the indices of a mini-batch (a long tensor on ``device``; None for the full
    batch) to the loss, a scalar or one loss per stacked network (their sum is differentiated,
    so each network gets its own gradient).  ``sampling``:

    * ``"full"``: ``steps`` full-batch steps;
    * ``"epochs"``: ``epochs`` passes over a fresh permutation of
      the ``n`` examples (``torch.randperm`` on ``generator``) in mini-batches of ``batch``, the
      last one of a pass possibly smaller;
    * ``"replacement"``: ``steps`` mini-batches of ``batch`` indices drawn with replacement
      (``torch.randint`` on ``generator``);
    * ``"permutations"``: ``steps`` mini-batches of indices (``n_nets``, ``batch``), each of
      ``n_nets`` stacked networks walking through its own random permutation of the ``n``
      examples (``argsort`` of ``torch.rand(n_nets, n)`` on ``generator``), a fresh one per pass;
      a pass's last incomplete batch is dropped.

    Each step: zero the gradients, evaluate the loss, record it, call ``callback``, stop if every
    loss is ≤ ``target_loss`` or the callback returns True (before the update), back-propagate,
    update.  ``callback(t, loss)`` sees the parameters after t updates, t = 0, 1, …: with the
    loss just recorded at them, and once more, with ``loss`` None, after the last update of a
    run that was not stopped.  Returns the recorded losses (float64, one row per step); the
    parameters come back without ``requires_grad``."""
    check_positive("lr", lr)
    check_choice("optimizer", optimizer, OPTIMIZERS)
    check_choice("sampling", sampling, SAMPLINGS)
    if target_loss is not None:
        check_nonnegative("target_loss", target_loss)
    if sampling == "epochs":
        epochs = check_positive_int("epochs", epochs)
    else:
        steps = check_positive_int("steps", steps)
    if sampling != "full":
        n, batch = check_positive_int("n", n), check_positive_int("batch", batch)
        if generator is None:
            raise ParameterError(f"sampling={sampling!r} needs a torch.Generator")
    n_nets = check_positive_int("n_nets", n_nets)
    if sampling == "permutations" and batch > n:
        raise ParameterError(f"batch={batch} must be <= n={n} for sampling='permutations'")
    tensors = list(params.values())
    for p in tensors:
        p.requires_grad_(True)
    opt = (torch.optim.Adam if optimizer == "adam" else torch.optim.SGD)(tensors, lr=lr)
    hist: list[Any] = []

    def step(idx: torch.Tensor | None) -> bool:
        opt.zero_grad()
        value = loss(idx)
        rec = (
            float(value.detach())
            if value.ndim == 0
            else value.detach().cpu().numpy().astype(np.float64)
        )
        hist.append(rec)
        stop = callback is not None and bool(callback(len(hist) - 1, rec))
        if stop or (target_loss is not None and np.all(np.asarray(rec) <= target_loss)):
            return False
        (value if value.ndim == 0 else value.sum()).backward()
        opt.step()
        return True

    for idx in _batches(sampling, steps, epochs, n, batch, n_nets, generator):
        if not step(None if idx is None else idx.to(device)):
            break
    else:
        if callback is not None:
            callback(len(hist), None)
    for p in tensors:
        p.requires_grad_(False)
    return np.asarray(hist, dtype=np.float64)


def _batches(
    sampling: str,
    steps: int | None,
    epochs: int | None,
    n: int | None,
    batch: int | None,
    n_nets: int,
    generator: torch.Generator | None,
) -> Iterator[torch.Tensor | None]:
    """The mini-batches of :func:`train`'s ``sampling``, drawn lazily from ``generator``."""
    if sampling == "full":
        yield from (None for _ in range(steps))
    elif sampling == "replacement":
        for _ in range(steps):
            yield torch.randint(n, (batch,), generator=generator)
    elif sampling == "epochs":
        for _ in range(epochs):
            perm = torch.randperm(n, generator=generator)
            for i in range(0, n, batch):
                yield perm[i : i + batch]
    else:
        perm, pos = None, n
        for _ in range(steps):
            if pos + batch > n:  # a fresh permutation per network and pass
                perm, pos = torch.argsort(torch.rand(n_nets, n, generator=generator), dim=1), 0
            yield perm[:, pos : pos + batch]
            pos += batch
