"""Capacity diffusion through depth (Donier 2019, "Capacity allocation through neural network
layers", §3–4; chapter 2 of the book).

What is implemented, with the paper's equation numbers:

* the capacity network κ⁰ = D_1⋯D_L κ^L [Eqs. 27–28]; its residual limit D = I + εΔ with a local
  generator Δ, the drift v and diffusion 𝒟 of the continuum limit and the Gaussian heat kernel
  [Eqs. 29–34], the deep limit of a drifting Δ against exp(Δ) and Eq. 32, and the profiles of
  random residual layers (rates drawn per layer and position); the straight-path weight
  w_max = Π_l (D_l)_ii [Eqs. 35–36]; the input capacities of a real multi-layer network from its
  empirical augmented covariance (Eq. 23 through all layers), to set against D_1⋯D_L κ^L
  [Eq. 28];
* random deep 1-D convolutional networks (torch) whose mean squared input-gradient is compared
  with the capacity network (Luo et al. 2016), and gradient correlations at nearby inputs for
  plain vs residual networks (Balduzzi et al. 2017).

Chapter 1's layer-level results (ν, Σ̃, capacities of one layer) are in :mod:`layerwise.capacity`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from scipy import integrate
from scipy.linalg import expm

from .capacity import (
    check_activation,
    eta,
    input_capacities,
    pseudo_random_sign,
    random_unit_columns,
    stochastic_matrix,
)
from .params import ParameterError, check_choice, check_positive, check_positive_int


def capacity_network(Ds: Sequence[np.ndarray], kappa_L: np.ndarray) -> np.ndarray:
    """κ^{l−1} = D_l κ^l down to κ⁰ = D_1⋯D_L κ^L [Eqs. 27–28].

    ``Ds`` = [D_1, …, D_L] (D_l ∈ ℝ^{n_{l−1}×n_l}); returns the list [κ^L, κ^{L−1}, …, κ^0] as an
    array (L+1, n) when all widths agree, else a list.
    """
    out = [np.asarray(kappa_L, dtype=np.float64)]
    for D in reversed(list(Ds)):
        out.append(np.asarray(D) @ out[-1])
    try:
        return np.stack(out)
    except ValueError:
        return out  # type: ignore[return-value]


def local_delta(n: int, left: np.ndarray | float, right: np.ndarray | float) -> np.ndarray:
    """Circular local generator Δ (n×n): column i sends ``left[i]`` to i−1 and ``right[i]`` to i+1,
    Δ_ii = −(left+right), so columns sum to 0 and I + εΔ is column-stochastic [Eqs. 29, 31]."""
    n = check_positive_int("n", n)
    if n < 3:
        raise ParameterError(f"n={n} must be >= 3 for a nearest-neighbour operator")
    left = np.broadcast_to(np.asarray(left, dtype=np.float64), (n,))
    right = np.broadcast_to(np.asarray(right, dtype=np.float64), (n,))
    if (
        np.any(left < 0)
        or np.any(right < 0)
        or not (np.all(np.isfinite(left)) and np.all(np.isfinite(right)))
    ):
        raise ParameterError(
            "left and right rates of a diffusion step must be finite and >= 0 (they are the "
            "capacity sent to i−1 and i+1); a negative rate makes Δ_ii > −(left+right) and "
            "I + εΔ no capacity matrix"
        )
    idx = np.arange(n)
    Dl = np.zeros((n, n))
    Dl[(idx - 1) % n, idx] += left
    Dl[(idx + 1) % n, idx] += right
    Dl[idx, idx] -= left + right
    return Dl


def residual_layer(
    n: int, eps: float, left: np.ndarray | float, right: np.ndarray | float
) -> np.ndarray:
    """D = I + εΔ with Δ = :func:`local_delta` (n, left, right) [Eq. 29], checked to be a capacity
    matrix: its diagonal 1 − ε(left + right) must be ≥ 0 (else D has negative entries, is not a
    diffusion step, and the straight-path weight Π D_ii can turn negative — e.g. ε = 1, L = 1)."""
    eps = check_positive("eps", eps)
    Dl = local_delta(n, left, right)
    worst = float(np.max(-np.diag(Dl))) * eps
    if worst > 1.0:
        raise ParameterError(
            f"eps·(left+right) reaches {worst:.3g} > 1: I + εΔ has a negative diagonal; "
            "use more layers (smaller ε = 1/L) or smaller rates"
        )
    return np.eye(n) + eps * Dl


def heat_kernel(
    x: np.ndarray, x0: float, diffusion: float, t: float, drift: float = 0.0
) -> np.ndarray:
    """Eq. 34 (with drift, Eq. 32): exp(−(x−x0−vt)²/(4𝒟t)) / √(4π𝒟t)."""
    diffusion, t = check_positive("diffusion", diffusion), check_positive("t", t)
    x = np.asarray(x, dtype=np.float64)
    return np.exp(-((x - x0 - drift * t) ** 2) / (4 * diffusion * t)) / math.sqrt(
        4 * math.pi * diffusion * t
    )


def circular_moments(kappa: np.ndarray, center: int) -> tuple[float, float, float]:
    """(total, mean offset, variance) of a profile on a ring, offsets taken in (−n/2, n/2] from
    ``center``; works on the last axis (returns arrays for stacked profiles)."""
    kappa = np.asarray(kappa, dtype=np.float64)
    n = kappa.shape[-1]
    off = (np.arange(n) - center + n // 2) % n - n // 2
    tot = kappa.sum(-1)
    mu = (kappa * off).sum(-1) / tot
    var = (kappa * off**2).sum(-1) / tot - mu**2
    return tot, mu, var


def drift_limit(*, ring: int, left: float, right: float, layers: Sequence[int]) -> dict[str, Any]:
    """The deep limit of Eq. 29 with a layer-independent, translation-invariant Δ that drifts
    (column i sends ``left`` to i−1 and ``right`` to i+1): a Dirac at the ring's centre through L
    layers I + Δ/L, for every L of ``layers``, against the two limits of the paper.

    * Eq. 30: π(1) = exp(Δ)π(0) (scipy's expm); ``l1_expm`` (len(layers),) the L1 distance of
      (I + Δ/L)^L δ to it — the Euler step of Eq. 30, first order in ε = 1/L;
    * Eq. 32: the Gaussian of drift v = right − left and 𝒟 = (left + right)/2 at t = 1 (the
      continuum limit of Eq. 30, Eq. 31); ``l1_eq32`` the L1 distance of exp(Δ)δ to it, and
      ``edge`` the leading Edgeworth term of exp(Δ)δ, a continuous-time walk whose cumulants are
      κ_n = right + (−1)^n left: skewness v/(2𝒟)^{3/2}, excess kurtosis 1/(2𝒟).

    Returns also ``profile_expm``, ``profiles`` (len(layers), ring) and ``gauss`` (ring,)."""
    ring = check_positive_int("ring", ring)
    Ls = [check_positive_int("layers", L) for L in layers]
    c0 = ring // 2
    Dl = local_delta(ring, left, right)
    delta = np.eye(ring)[c0]
    pi1 = expm(Dl) @ delta
    profs = []
    for L in Ls:
        D = residual_layer(ring, 1.0 / L, left, right)
        k = delta.copy()
        for _ in range(L):
            k = D @ k
        profs.append(k)
    profs = np.array(profs)
    v, diff = right - left, (left + right) / 2
    gauss = heat_kernel(np.arange(ring), c0, diff, 1.0, drift=v)
    return {
        "layers": np.array(Ls),
        "profiles": profs,
        "profile_expm": pi1,
        "gauss": gauss,
        "l1_expm": np.abs(profs - pi1).sum(1),
        "l1_eq32": float(np.abs(pi1 - gauss).sum()),
        "edge": edgeworth_l1(1.0 / (2 * diff), v / (2 * diff) ** 1.5),
        "drift": v,
        "diffusion": diff,
    }


def harmonic_mean_rate(a_lo: float, a_hi: float) -> float:
    """Harmonic mean (a_hi − a_lo)/ln(a_hi/a_lo) of a rate uniform on [a_lo, a_hi]: the diffusion
    constant of a *static* one-dimensional random environment (rates frozen across layers), the
    alternative to Eq. 33's arithmetic mean 𝒟 = E[a] for layers redrawn at every depth."""
    a_lo, a_hi = check_positive("a_lo", a_lo), check_positive("a_hi", a_hi)
    if a_hi <= a_lo:
        return a_lo
    return (a_hi - a_lo) / math.log(a_hi / a_lo)


def random_residual_profiles(rates: np.ndarray, frozen: bool = False) -> np.ndarray:
    """Capacity profiles of a Dirac at the centre of a ring through random residual layers
    D_l = I + Δ_l/L [Eq. 29] (:func:`residual_layer`), many networks at once: ``rates``
    (networks, L, 2, ring) holds every layer's a (to i − 1) and b (to i + 1) per position; with
    ``frozen`` every layer takes the top layer's rates (a static random medium: random per
    position, the same at every depth). Returns (networks, L + 1, ring): row i is the profile
    after the top i layers, κ^{l−1} = (I + εΔ_l)κ^l."""
    ab = np.asarray(rates, float)
    envs, layers, _, ring = ab.shape
    eps = 1.0 / layers
    prof = np.zeros((envs, layers + 1, ring))
    k = np.zeros((envs, ring))
    k[:, ring // 2] = 1.0
    prof[:, 0] = k
    for i, l in enumerate(range(layers - 1, -1, -1)):  # top layer first
        a, b = ab[:, layers - 1 if frozen else l, 0], ab[:, layers - 1 if frozen else l, 1]
        k = k + eps * (np.roll(a * k, -1, 1) + np.roll(b * k, 1, 1) - (a + b) * k)
        prof[:, i + 1] = k
    return prof


def straight_path_curves(rates: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
    """w_max after L layers [Eqs. 35–36] for every (L, 2) array of ``rates``: residual layers
    I + Δ/L on 5 units with those (a, b) per layer (``w_res``) against the exp(Σ εΔ_ii) of Eq. 36
    (``w_res_pred``), and uniform plain layers of receptive field 3 and 5 at the same depths
    (``w_plain3``, ``w_plain5``)."""
    w_res, w_res_pred, w_plain3, w_plain5 = [], [], [], []
    for ab in rates:
        L = len(ab)
        Dl = [residual_layer(5, 1.0 / L, a, b) for a, b in ab]
        w_res.append(straight_path_weight(Dl, 2)[-1])
        w_res_pred.append(math.exp(-(ab.sum(1) / L).sum()))
        w_plain3.append(straight_path_weight([stochastic_matrix(np.ones((3, 3)))] * L, 1)[-1])
        w_plain5.append(straight_path_weight([stochastic_matrix(np.ones((5, 5)))] * L, 2)[-1])
    curves = {"w_res": w_res, "w_res_pred": w_res_pred, "w_plain3": w_plain3}
    return {k: np.array(v) for k, v in (curves | {"w_plain5": w_plain5}).items()}


def straight_path_weight(Ds: Sequence[np.ndarray], i: int) -> np.ndarray:
    """w_max after k layers, Π_{l>L−k} (D_l)_ii for k = 0..L [Eqs. 35–36] (cumulative from the
    top)."""
    d = np.array([np.asarray(D)[i, i] for D in reversed(list(Ds))])
    return np.concatenate([[1.0], np.cumprod(d)])


NET_ACTIVATIONS: tuple[str, ...] = ("relu", "pseudo_random", "linear")


ARCHS: tuple[str, ...] = ("plain", "residual")


def _act_torch(name: str, z: Any, unit_seed: Any) -> Any:
    if name == "relu":
        return math.sqrt(2.0) * torch.relu(z)  # η ∈ {0, √2}: α² + β² = 2 (Eq. 12)
    if name == "linear":
        return z
    with torch.no_grad():
        e = pseudo_random_sign(z, unit_seed)
    return e * z  # f(z) = η(z)·z, gradient η(z) (η piecewise constant)


def _circ_conv(x: Any, W: Any) -> Any:
    k = W.shape[-1]
    return F.conv1d(F.pad(x, (k // 2, k // 2), mode="circular"), W)


def conv_net_gradients(
    *,
    arch: str,
    activation: str,
    depth: int,
    channels: int,
    length: int,
    n_inputs: int,
    n_nets: int,
    seed: int,
    res_scale: float = 1.0,
    kernel: int = 3,
    batch: int = 256,
    device: str = "cpu",
) -> dict[str, np.ndarray]:
    """Mean squared input-gradient of one output unit of random 1-D conv nets, and its prediction.

    Networks (circular padding, no bias, weights N(0, 1/(kernel·channels))):
    plain  x_l = f(W_l * x_{l−1}) for l < L and x_L = W_L * x_{L−1} (linear read-out);
    residual  x_l = x_{l−1} + s·W_l * f(x_{l−1}) (s = ``res_scale``).
    f is √2·ReLU, the pseudo-random f(z) = η(z)z (±1 hash per unit) or linear. Inputs x_0 ~ N(0, I).
    The output is channel 0 at the central position; its gradient g = ∂y/∂x_0 is taken by autograd.

    Returns per network (axis 0): ``g2`` mean over inputs of Σ_c g², per position; ``g2_se`` its
    standard error; ``pred`` the capacity network D_1⋯D_L(a∘a) summed over channels, with
    D_l = W_l∘W_l (plain) or I + s²·W_l∘W_l (residual), acting backwards like the gradient
    [Eq. 28; "capacities and gradients, two sides of the same coin"]; ``g2_batches`` the per-batch
    means; ``g2_total`` (n_nets, inputs) the total squared gradient Σ_{c,x} g² of every input
    (i.i.d. over inputs for a fixed network: the standard error of its mean has inputs − 1 d.o.f.).
    """
    check_choice("arch", arch, ARCHS)
    check_choice("activation", activation, NET_ACTIVATIONS)
    depth, channels, length, n_inputs, n_nets, kernel, batch = (
        check_positive_int(k, v)
        for k, v in (
            ("depth", depth),
            ("channels", channels),
            ("length", length),
            ("n_inputs", n_inputs),
            ("n_nets", n_nets),
            ("kernel", kernel),
            ("batch", batch),
        )
    )
    s = check_positive("res_scale", res_scale) if arch == "residual" else 0.0
    dev = torch.device(device)
    gen = torch.Generator().manual_seed(int(seed))
    center = length // 2
    nb = max(1, n_inputs // batch)
    G2, SE, PRED, GB, TOT = [], [], [], [], []
    pos = torch.arange(length, device=dev)
    for _ in range(n_nets):
        Ws = [
            torch.randn(channels, channels, kernel, generator=gen, dtype=torch.float64).to(dev)
            / math.sqrt(kernel * channels)
            for _ in range(depth)
        ]
        seeds = [
            (
                (l + 1) * 7919
                + torch.arange(channels, device=dev)[:, None] * length
                + pos[None, :]
                + int(torch.randint(1 << 30, (1,), generator=gen))
            )
            for l in range(depth)
        ]
        sums = torch.zeros(length, dtype=torch.float64, device=dev)
        sq = torch.zeros(length, dtype=torch.float64, device=dev)
        per_batch, per_input = [], []
        for _b in range(nb):
            x0 = torch.randn(batch, channels, length, generator=gen, dtype=torch.float64).to(dev)
            x0.requires_grad_(True)
            x = x0
            for l, W in enumerate(Ws):
                if arch == "plain":
                    x = _circ_conv(x, W)
                    if (
                        l < depth - 1
                    ):  # linear read-out layer: a deep ReLU unit can be dead on all inputs
                        x = _act_torch(activation, x, seeds[l])
                else:
                    x = x + s * _circ_conv(_act_torch(activation, x, seeds[l]), W)
            (g,) = torch.autograd.grad(x[:, 0, center].sum(), x0)
            v = (g * g).sum(1)  # (batch, length)
            sums += v.sum(0)
            sq += (v * v).sum(0)
            per_batch.append((v.mean(0)).cpu().numpy())
            per_input.append(v.sum(1).detach().cpu().numpy())
        N = nb * batch
        mean = sums / N
        var = (sq / N - mean * mean) * N / (N - 1)
        G2.append(mean.cpu().numpy())
        SE.append((var.clamp(min=0) / N).sqrt().cpu().numpy())
        GB.append(np.stack(per_batch))
        TOT.append(np.concatenate(per_input))
        # capacity network, backwards with squared weights
        v = torch.zeros(1, channels, length, dtype=torch.float64, device=dev)
        v[0, 0, center] = 1.0
        for W in reversed(Ws):
            back = _circ_conv_transpose(v, W * W)
            v = back if arch == "plain" else v + s * s * back
        PRED.append(v[0].sum(0).cpu().numpy())
    return {
        "g2": np.stack(G2),
        "g2_se": np.stack(SE),
        "pred": np.stack(PRED),
        "g2_batches": np.stack(GB),
        "g2_total": np.stack(TOT),
    }


def _circ_conv_transpose(v: Any, W: Any) -> Any:
    """Adjoint of :func:`_circ_conv` (the backward map of a circular convolution)."""
    k = W.shape[-1]
    p = k // 2
    # adjoint of circular conv = circular correlation with flipped, transposed kernel
    return F.conv1d(F.pad(v, (p, p), mode="circular"), W.flip(-1).transpose(0, 1))


def expected_conv_variance_per_layer(arch: str, res_scale: float = 1.0, kernel: int = 3) -> float:
    """Variance added per layer to the normalised expected capacity/gradient profile.

    Expected D = E[W∘W] spreads uniformly over the kernel's taps (variance (k²−1)/12 per layer for
    odd k); residual D = I + s²·E[W∘W] stays with probability 1/(1+s²)."""
    base = (kernel * kernel - 1) / 12.0
    if arch == "plain":
        return base
    s2 = res_scale**2
    return base * s2 / (1 + s2)


def shattering_gradients(
    *,
    arch: str,
    depth: int,
    width: int,
    n_points: int,
    n_nets: int,
    seed: int,
    res_scale: float = 1.0,
    bias_std: float = 0.1,
    x_range: float = 2.0,
) -> dict[str, np.ndarray]:
    """Gradients df/dx of random fully-connected √2·ReLU nets of a scalar input on a grid of
    ``n_points`` in [−x_range, x_range] (Balduzzi et al. 2017), and their lag-1 correlation.

    Layer 1: h = √2·relu(w x + b), w, b ~ N(0, 1).  Then ``depth`` layers, W ~ N(0, 1/width),
    b ~ N(0, bias_std²): plain h ← √2·relu(W h + b); residual h ← h + s·(W √2·relu(h) + b).
    Output f = aᵀh/√width.  Returns ``grads`` (n_nets, n_points) and ``corr`` (n_nets,) the
    correlation between g(x_k) and g(x_{k+1}) over k.
    """
    check_choice("arch", arch, ARCHS)
    depth, width, n_points, n_nets = (
        check_positive_int(k, v)
        for k, v in (("depth", depth), ("width", width), ("n_points", n_points), ("n_nets", n_nets))
    )
    s = check_positive("res_scale", res_scale)
    gen = torch.Generator().manual_seed(int(seed))
    xs = torch.linspace(-x_range, x_range, n_points, dtype=torch.float64)
    G, C = [], []
    r2 = math.sqrt(2.0)
    for _ in range(n_nets):
        x = xs.clone().requires_grad_(True)
        w1 = torch.randn(width, generator=gen, dtype=torch.float64)
        b1 = torch.randn(width, generator=gen, dtype=torch.float64)
        h = r2 * torch.relu(x[:, None] * w1 + b1)
        for _l in range(depth):
            W = torch.randn(width, width, generator=gen, dtype=torch.float64) / math.sqrt(width)
            b = bias_std * torch.randn(width, generator=gen, dtype=torch.float64)
            if arch == "plain":
                h = r2 * torch.relu(h @ W.T + b)
            else:
                h = h + s * (r2 * torch.relu(h) @ W.T + b)
        a = torch.randn(width, generator=gen, dtype=torch.float64)
        (g,) = torch.autograd.grad((h @ a).sum() / math.sqrt(width), x)
        g = g.numpy()
        G.append(g)
        C.append(np.corrcoef(g[:-1], g[1:])[0, 1] if g.std() > 0 else 1.0)
    return {"grads": np.stack(G), "corr": np.array(C)}


def walk_excess_kurtosis(p_step: float, steps: int) -> float:
    """Excess kurtosis γ₂ of a lazy lattice walk of ``steps`` steps ±1 with probability ``p_step``
    each: (1/(2p) − 3)/steps."""
    return (2 * p_step - 12 * p_step**2) / (2 * p_step * steps) / (2 * p_step)


def edgeworth_l1(gamma2: float, gamma1: float = 0.0) -> float:
    """L1 size E|γ₁He₃(u)/6 + γ₂He₄(u)/24|, u ~ N(0, 1), of the leading Edgeworth correction to a
    Gaussian (skewness γ₁, excess kurtosis γ₂); |γ₂|·E|He₄|/24 for a symmetric walk."""

    def f(u: float) -> float:
        return abs(gamma1 * (u**3 - 3 * u) / 6 + gamma2 * (u**4 - 6 * u**2 + 3) / 24) * math.exp(
            -u * u / 2
        )

    val, _ = integrate.quad(
        f, -12, 12, limit=200, points=[-3.0, -math.sqrt(3), -1.0, 0.0, 1.0, math.sqrt(3), 3.0]
    )
    return val / math.sqrt(2 * math.pi)


def residual_step(tau: float, depth: int) -> float:
    """Residual branch scale s = √(τ/(L − τ)) of x_l = x_{l−1} + s·W_l * f(x_{l−1}), chosen so that
    the expected normalised capacity matrix of a layer, (I + s²E[W∘W])/(1 + s²), is exactly
    I + εΔ with ε = 1/L and Δ = τ(E[W∘W]/E[ΣW∘W] − I) of order one [Eq. 29]: s²/(1 + s²) = τ/L."""
    tau = check_positive("tau", tau)
    depth = check_positive_int("depth", depth)
    if depth <= tau:
        raise ParameterError(f"depth={depth} must exceed tau={tau} (s² = τ/(L − τ) > 0)")
    return math.sqrt(tau / (depth - tau))


def residual_layer_profiles(
    *,
    depth: int,
    res_scale: float,
    channels: int,
    length: int,
    n_inputs: int,
    n_nets: int,
    seed: int,
    kernel: int = 3,
    batch: int = 128,
    device: str = "cpu",
) -> np.ndarray:
    """Mean squared gradient of one output unit (channel 0, centre) with respect to *every* layer
    x_l, l = 0..L, of random residual √2·ReLU conv nets x_l = x_{l−1} + s·W_l * f(x_{l−1}) (as
    :func:`conv_net_gradients`, float32): the effective receptive field at t = (L − l)/L.

    Returns (n_nets, depth + 1, length): Σ_c E_x[(∂y/∂x_l)²] per position."""
    depth, channels, length, n_inputs, n_nets, kernel, batch = (
        check_positive_int(k, v)
        for k, v in (
            ("depth", depth),
            ("channels", channels),
            ("length", length),
            ("n_inputs", n_inputs),
            ("n_nets", n_nets),
            ("kernel", kernel),
            ("batch", batch),
        )
    )
    s = check_positive("res_scale", res_scale)
    dev = torch.device(device)
    gen = torch.Generator().manual_seed(int(seed))
    nb = max(1, n_inputs // batch)
    out = np.zeros((n_nets, depth + 1, length))
    for i in range(n_nets):
        Ws = [
            (
                torch.randn(channels, channels, kernel, generator=gen)
                / math.sqrt(kernel * channels)
            ).to(dev)
            for _ in range(depth)
        ]
        acc = torch.zeros(depth + 1, length, device=dev)
        for _b in range(nb):
            xs = [torch.randn(batch, channels, length, generator=gen).to(dev).requires_grad_(True)]
            for W in Ws:
                xs.append(xs[-1] + s * _circ_conv(_act_torch("relu", xs[-1], None), W))
            gs = torch.autograd.grad(xs[-1][:, 0, length // 2].sum(), xs)
            acc += torch.stack([(g * g).sum(1).mean(0) for g in gs]).detach()
        out[i] = (acc / nb).cpu().numpy()
    return out


def chain_capacities(
    Y: np.ndarray, etas: Sequence[np.ndarray], Ps: Sequence[np.ndarray], J: np.ndarray
) -> np.ndarray:
    """Input capacities κ_i of an L-layer network φ(Y) = η_L ⊙ P_Lᵀ(⋯ η_1 ⊙ P_1ᵀY) from the
    *empirical* augmented covariance: Eq. 23 taken through every layer at once.

    The augmented input has one block per path of units, Ỹ = η_L ⊗ ⋯ ⊗ η_1 ⊗ Y, and
    Ỹᵀ P̃ = φ(Y)ᵀ, so K̃ = Σ̃ P̃ J = mean_s Ỹ_s (φ(Y_s)ᵀJ) [Eq. 9]; K̃ is orthonormalised and κ_i sums
    its squared rows of coordinate i over the blocks. For pseudo-random units, i.i.d. inputs and
    unit columns this is D₁⋯D_L κ^φ [Eq. 28]. ``Y`` (N, n); ``etas[l]`` (N, m_l) evaluated on the
    layer's pre-activations; ``Ps[l]`` (m_{l−1}, m_l); ``J`` = ∂A/∂W (m_L, p)."""
    Y = np.asarray(Y, dtype=np.float64)
    if len(etas) != len(Ps) or not Ps:
        raise ParameterError(f"etas ({len(etas)}) and Ps ({len(Ps)}) must be one per layer, >= 1")
    N, n = Y.shape
    phi, T = Y, Y
    for E, P in zip(etas, Ps, strict=True):
        E = np.asarray(E, dtype=np.float64)
        phi = E * (phi @ np.asarray(P, dtype=np.float64))
        T = (E[:, :, None] * T[:, None, :]).reshape(N, -1)
    Kt = T.T @ (phi @ np.asarray(J, dtype=np.float64)) / N
    return input_capacities(Kt, n)


def chain_network(
    *, n: int, widths: Sequence[int], activation: str, samples: int, rng: np.random.Generator
) -> dict[str, Any]:
    """One random network for :func:`chain_capacities`: columns uniform on the unit sphere,
    inputs Y ~ N(0, I_n), η of ``activation`` (normalised, Eq. 12; one pseudo-random function per
    unit), all drawn from ``rng``. Returns ``Y``, ``etas``, ``Ps``."""
    check_activation(activation)
    dims = [check_positive_int("n", n)] + [check_positive_int("widths", w) for w in widths]
    Ps = [random_unit_columns(a, b, rng) for a, b in zip(dims[:-1], dims[1:], strict=True)]
    Y = rng.standard_normal((check_positive_int("samples", samples), n))
    x, etas = Y, []
    for l, P in enumerate(Ps):
        z = x @ P
        seeds = rng.integers(1 << 30) + 1000 * l + np.arange(P.shape[1])
        etas.append(eta(activation, z, unit_seed=seeds))
        x = etas[-1] * z
    return {"Y": Y, "etas": etas, "Ps": Ps}
