"""Mean-field signal propagation in random fully-connected networks (Chapter 7).

Random nets with W_ij ~ N(0, σ_w²/N), b_i ~ N(0, σ_b²) and pre-activations z^l = W^l φ(z^{l-1}) +
b^l (Poole et al. 2016, "Exponential expressivity in deep neural networks through transient chaos";
Schoenholz et al. 2017, "Deep information propagation"):

* length map      q^l = V(q^{l-1}) = σ_w² E_z[φ(√q^{l-1} z)²] + σ_b²                (Poole Eq. 3)
* correlation map q12^l = σ_w² E[φ(u1) φ(u2)] + σ_b²,  c^l = q12^l / q*               (Poole Eq. 5)
  with u1 = √q* z1, u2 = √q* (c z1 + √(1-c²) z2) at the length fixed point q*
* χ₁ = ∂c^l/∂c^{l-1}|_{c=1} = σ_w² E[φ'(√q* z)²]                                     (Poole Eq. 7)
* depth scales    ξ_q = -1/ln(χ₁ + σ_w² E[φ''(√q* z) φ(√q* z)]),  ξ_c = -1/ln χ_c with
  χ_c = σ_w² E[φ'(u1) φ'(u2)] at the stable fixed point c*                            (Schoenholz
  Eqs. 4, 7)

Gaussian expectations E[g(√q z)] are :func:`layerwise.gaussian.expectation` (composite
Gauss–Legendre with panels at most one unit of √q z wide; its accuracy over the book's range is
stated and tested there); plain Gauss–Hermite converges slowly for tanh at large q (3e-4 error at
q = 20 with 201 nodes, :func:`layerwise.gaussian.gauss_hermite_expectation`).

The depth scales are also measured on simulated networks across the transition
(:func:`depth_scale_sweep`, :func:`sweep_rates`, :func:`sweep_rate_ratios`; Schoenholz et al.
2017, Figs. 2–3). What Chapter 7 derives from the maps and simulations — the length map's
convergence, the agreement of networks with the maps, the circle's growth rate — is its study,
:mod:`layerwise.studies.ch07`; the trainability boundary is :mod:`layerwise.trainability`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from scipy.optimize import brentq
from scipy.special import erf

from . import gaussian
from .params import (
    ParameterError,
    check_choice,
    check_nonnegative,
    check_positive,
    check_positive_int,
)
from .stats import Estimate, mean_se

PHIS: tuple[str, ...] = ("tanh", "erf", "linear")


def _phi_funcs(phi: str) -> tuple[Callable, Callable, Callable]:
    """φ, φ', φ'' for a named activation."""
    check_choice("phi", phi, PHIS)
    if phi == "tanh":

        def f(x):
            return np.tanh(x)

        def d1(x):
            return 1.0 - np.tanh(x) ** 2

        def d2(x):
            t = np.tanh(x)
            return -2.0 * t * (1.0 - t**2)
    elif phi == "erf":
        k = 2.0 / np.sqrt(np.pi)

        def f(x):
            return erf(x)

        def d1(x):
            return k * np.exp(-x * x)

        def d2(x):
            return -2.0 * x * k * np.exp(-x * x)
    else:

        def f(x):
            return np.asarray(x, dtype=float)

        def d1(x):
            return np.ones_like(x, dtype=float)

        def d2(x):
            return np.zeros_like(x, dtype=float)

    return f, d1, d2


def _check(sigma_w2: float, sigma_b2: float) -> tuple[float, float]:
    return check_positive("sigma_w2", sigma_w2), check_nonnegative("sigma_b2", sigma_b2)


# ----------------------------------------------------------------------------------------------
# Length map
# ----------------------------------------------------------------------------------------------
def length_map(q: float, sigma_w2: float, sigma_b2: float, phi: str = "tanh") -> float:
    """V(q) = σ_w² E[φ(√q z)²] + σ_b²  (Poole et al. 2016, Eq. 3)."""
    sigma_w2, sigma_b2 = _check(sigma_w2, sigma_b2)
    q = check_nonnegative("q", q)
    f, _, _ = _phi_funcs(phi)
    if phi == "linear":  # E[(√q z)²] = q exactly; no quadrature (whose panels grow with √q)
        return sigma_w2 * q + sigma_b2
    return sigma_w2 * gaussian.expectation(lambda x: f(x) ** 2, q) + sigma_b2


def length_map_slope(q: float, sigma_w2: float, sigma_b2: float, phi: str = "tanh") -> float:
    """dV/dq = σ_w² E[φ'(√q z)² + φ(√q z) φ''(√q z)] (Gaussian integration by parts)."""
    sigma_w2, sigma_b2 = _check(sigma_w2, sigma_b2)
    f, d1, d2 = _phi_funcs(phi)
    q = check_nonnegative("q", q)
    return sigma_w2 * gaussian.expectation(lambda x: d1(x) ** 2 + f(x) * d2(x), q)


def iterate_length_map(
    q0: float, n_layers: int, sigma_w2: float, sigma_b2: float, phi: str = "tanh"
) -> np.ndarray:
    """[q^0, q^1, …, q^L] under the length map."""
    n_layers = check_positive_int("n_layers", n_layers)
    out = [check_nonnegative("q0", q0)]
    for _ in range(n_layers):
        out.append(length_map(out[-1], sigma_w2, sigma_b2, phi))
    return np.array(out)


def q_star(sigma_w2: float, sigma_b2: float, phi: str = "tanh") -> float:
    """The stable fixed point q* of the length map (Poole et al. 2016, §2).

    With σ_b² = 0 and σ_w² φ'(0)² ≤ 1 it is q* = 0; otherwise the unique positive root of
    V(q) = q, found by Brent's method to 1e-14 relative accuracy.
    """
    sigma_w2, sigma_b2 = _check(sigma_w2, sigma_b2)
    _, d1, _ = _phi_funcs(phi)
    if phi == "linear":
        if sigma_w2 >= 1.0:
            raise ParameterError(
                f"sigma_w2={sigma_w2} >= 1 has no finite length fixed point for phi='linear'; "
                "allowed: sigma_w2 < 1"
            )
        return sigma_b2 / (1.0 - sigma_w2)
    slope0 = sigma_w2 * float(d1(np.array(0.0))) ** 2
    if sigma_b2 == 0.0 and slope0 <= 1.0:
        return 0.0
    hi = sigma_w2 + sigma_b2  # bounded φ with |φ| ≤ 1: V(q) ≤ σ_w² + σ_b²
    lo = sigma_b2 if sigma_b2 > 0 else 1e-12
    g = lambda q: length_map(q, sigma_w2, sigma_b2, phi) - q  # noqa: E731
    if g(lo) <= 0:  # pragma: no cover - only for σ_b² > 0 with V(σ_b²) = σ_b², impossible for φ ≢ 0
        return lo
    return float(brentq(g, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=200))


def chi1(sigma_w2: float, sigma_b2: float, phi: str = "tanh", q: float | None = None) -> float:
    """χ₁ = σ_w² E[φ'(√q* z)²]: slope of the correlation map at c = 1 (Poole et al. 2016, Eq. 7)."""
    sigma_w2, sigma_b2 = _check(sigma_w2, sigma_b2)
    q = q_star(sigma_w2, sigma_b2, phi) if q is None else check_nonnegative("q", q)
    _, d1, _ = _phi_funcs(phi)
    return sigma_w2 * gaussian.expectation(lambda x: d1(x) ** 2, q)


def critical_sigma_w2(sigma_b2: float, phi: str = "tanh") -> float:
    """σ_w² on the order-to-chaos line χ₁(σ_w², σ_b²) = 1 (Poole et al. 2016, Fig. 2)."""
    sigma_b2 = check_nonnegative("sigma_b2", sigma_b2)
    check_choice("phi", phi, PHIS)
    if phi == "linear":
        return 1.0
    _, d1, _ = _phi_funcs(phi)
    lo = 1.0 / float(d1(np.array(0.0))) ** 2  # χ₁ ≤ σ_w² φ'(0)² ≤ 1 below this
    g = lambda s: chi1(s, sigma_b2, phi) - 1.0  # noqa: E731
    if sigma_b2 == 0.0:
        return lo
    hi = 2.0 * lo
    while g(hi) < 0:
        hi *= 2.0
        if hi > 1e6:  # pragma: no cover
            raise ParameterError(
                f"sigma_b2={sigma_b2}: no order-to-chaos transition below sigma_w2=1e6"
            )
    return float(brentq(g, lo, hi, xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=200))


# ----------------------------------------------------------------------------------------------
# Correlation map
# ----------------------------------------------------------------------------------------------
def _pair_expectation(g1: Callable, g2: Callable, q: float, c: float) -> float:
    """E[g1(u1) g2(u2)], (u1, u2) centred Gaussian with variances q and covariance c q.

    u1 = √q z1, u2 = √q (c z1 + √(1-c²) z2): the outer integral runs over z1, the inner over z2
    with nodes adapted to the inner scale √q·√(1-c²)."""
    s = np.sqrt(q)
    c = float(np.clip(c, -1.0, 1.0))
    r = np.sqrt(max(0.0, 1.0 - c * c))
    z1, w1 = gaussian.normal_nodes(s)
    z2, w2 = gaussian.normal_nodes(s * r)
    inner = g2(s * (c * z1[:, None] + r * z2[None, :])) @ w2  # E_{z2}[g2(u2) | z1]
    return float(w1 @ (g1(s * z1) * inner))


def correlation_map(
    c: float, sigma_w2: float, sigma_b2: float, phi: str = "tanh", q: float | None = None
) -> float:
    """c^l = (σ_w² E[φ(u1)φ(u2)] + σ_b²) / q* for inputs at the length fixed point (Poole Eq. 5)."""
    sigma_w2, sigma_b2 = _check(sigma_w2, sigma_b2)
    q = q_star(sigma_w2, sigma_b2, phi) if q is None else check_positive("q", q)
    if q == 0.0:
        raise ParameterError(
            "the correlation map is undefined at q* = 0 (sigma_b2 = 0, ordered phase)"
        )
    f, _, _ = _phi_funcs(phi)
    return (sigma_w2 * _pair_expectation(f, f, q, c) + sigma_b2) / q


def correlation_map_slope(
    c: float, sigma_w2: float, sigma_b2: float, phi: str = "tanh", q: float | None = None
) -> float:
    """dc^l/dc^{l-1} = σ_w² E[φ'(u1) φ'(u2)] (Schoenholz et al. 2017, Eq. 7's χ_c at c)."""
    sigma_w2, sigma_b2 = _check(sigma_w2, sigma_b2)
    q = q_star(sigma_w2, sigma_b2, phi) if q is None else check_positive("q", q)
    _, d1, _ = _phi_funcs(phi)
    return sigma_w2 * _pair_expectation(d1, d1, q, c)


def iterate_correlation_map(
    c0: float, n_layers: int, sigma_w2: float, sigma_b2: float, phi: str = "tanh"
) -> np.ndarray:
    """[c^0, …, c^L] under the correlation map at the length fixed point."""
    n_layers = check_positive_int("n_layers", n_layers)
    q = q_star(sigma_w2, sigma_b2, phi)
    out = [float(c0)]
    for _ in range(n_layers):
        out.append(correlation_map(out[-1], sigma_w2, sigma_b2, phi, q))
    return np.array(out)


def iterate_maps(
    q0: float, c0: float, n_layers: int, sigma_w2: float, sigma_b2: float, phi: str = "tanh"
) -> tuple[np.ndarray, np.ndarray]:
    """Joint length and correlation maps for two inputs of equal length q0 and correlation c0,
    valid away from the fixed point: q^l = V(q^{l-1}),
    c^l = (σ_w² E_{q^{l-1}}[φ(u1)φ(u2)] + σ_b²) / q^l (Poole et al. 2016, Eqs. 3 and 5)."""
    sigma_w2, sigma_b2 = _check(sigma_w2, sigma_b2)
    n_layers = check_positive_int("n_layers", n_layers)
    f, _, _ = _phi_funcs(phi)
    q, c = [check_positive("q0", q0)], [float(c0)]
    for _ in range(n_layers):
        q_new = length_map(q[-1], sigma_w2, sigma_b2, phi)
        # linear φ: E[u1 u2] = q c exactly (a linear network's lengths grow like σ_w^2l)
        pair = q[-1] * c[-1] if phi == "linear" else _pair_expectation(f, f, q[-1], c[-1])
        c.append((sigma_w2 * pair + sigma_b2) / q_new)
        q.append(q_new)
    return np.array(q), np.array(c)


def c_star(sigma_w2: float, sigma_b2: float, phi: str = "tanh") -> float:
    """The stable fixed point of the correlation map: 1 in the ordered phase (χ₁ ≤ 1), else the
    root of C(c) = c in [0, 1) (Poole et al. 2016, §3)."""
    q = q_star(sigma_w2, sigma_b2, phi)
    if chi1(sigma_w2, sigma_b2, phi, q) <= 1.0:
        return 1.0
    g = lambda c: correlation_map(c, sigma_w2, sigma_b2, phi, q) - c  # noqa: E731
    # C(0) = σ_b²/q* ≥ 0 (odd φ), and C(c) < c just below 1 when χ₁ > 1
    hi = 1.0 - 1e-9
    if g(hi) >= 0:  # pragma: no cover - χ₁ barely above 1: c* indistinguishable from 1
        return 1.0
    if sigma_b2 == 0.0 and phi in ("tanh", "erf", "linear"):
        return 0.0  # odd φ, no bias: C(0) = 0 exactly, the stable point of the chaotic phase
    return float(brentq(g, 0.0, hi, xtol=1e-13, maxiter=200))


def depth_scales(sigma_w2: float, sigma_b2: float, phi: str = "tanh") -> dict[str, float]:
    """ξ_q, ξ_c and the quantities behind them (Schoenholz et al. 2017, Eqs. 4–9).

    ξ_q = -1/ln V'(q*), ξ_c = -1/ln χ_c with χ_c the correlation map's slope at its stable fixed
    point (χ_c = χ₁ in the ordered phase); ξ_c diverges where χ₁ = 1.
    """
    q = q_star(sigma_w2, sigma_b2, phi)
    x1 = chi1(sigma_w2, sigma_b2, phi, q)
    cs = c_star(sigma_w2, sigma_b2, phi)
    xc = x1 if cs == 1.0 else correlation_map_slope(cs, sigma_w2, sigma_b2, phi, q)
    vq = length_map_slope(q, sigma_w2, sigma_b2, phi)
    xi_q = -1.0 / np.log(vq) if 0 < vq < 1 else np.inf
    xi_c = -1.0 / np.log(xc) if 0 < xc < 1 else np.inf
    return {
        "q_star": q,
        "chi1": x1,
        "c_star": cs,
        "chi_c": xc,
        "length_slope": vq,
        "xi_q": xi_q,
        "xi_c": xi_c,
    }


# ----------------------------------------------------------------------------------------------
# Simulations of real random networks (torch)
# ----------------------------------------------------------------------------------------------
def _torch_phi(phi: str):
    import torch

    check_choice("phi", phi, PHIS)
    return {"tanh": torch.tanh, "erf": torch.erf, "linear": lambda x: x}[phi]


def simulate_pairs(
    q0: float,
    c0: float,
    *,
    sigma_w2: float,
    sigma_b2: float,
    width: int,
    n_layers: int,
    n_nets: int,
    seed: int,
    phi: str = "tanh",
    device: str = "cpu",
) -> dict[str, np.ndarray]:
    """Propagate two inputs with per-unit length q0 and correlation c0 through ``n_nets`` random
    nets of width N; return the empirical q^l (both inputs) and c^l, shape (n_nets, L+1).

    The inputs are built at layer 0 as pre-activations: z^0 with |z^0|²/N = q0 exactly and
    ⟨z^0_1, z^0_2⟩/(N q0) = c0 exactly; then z^l = W^l φ(z^{l-1}) + b^l, as in the maps.
    """
    import torch

    sigma_w2, sigma_b2 = _check(sigma_w2, sigma_b2)
    width, n_layers, n_nets = (
        check_positive_int(k, v)
        for k, v in (("width", width), ("n_layers", n_layers), ("n_nets", n_nets))
    )
    f = _torch_phi(phi)
    g = torch.Generator(device="cpu").manual_seed(int(seed))
    dt = torch.float32  # weights and propagation; every reduction below is done in float64
    # two orthonormal directions per net -> exact q0 and c0
    a = torch.randn(n_nets, width, 2, generator=g, dtype=torch.float64)
    qmat, _ = torch.linalg.qr(a)
    u, v = qmat[..., 0], qmat[..., 1]
    s = np.sqrt(width * q0)
    z = torch.stack(
        [s * u, s * (c0 * u + np.sqrt(max(0.0, 1 - c0 * c0)) * v)], dim=1
    )  # (nets, 2, N)
    qs = np.empty((n_nets, n_layers + 1, 2))
    cs = np.empty((n_nets, n_layers + 1))

    def record(l: int, z: Any) -> None:
        zz = z.double()
        q = (zz**2).mean(-1)
        qs[:, l] = q.cpu().numpy()
        cs[:, l] = ((zz[:, 0] * zz[:, 1]).mean(-1) / torch.sqrt(q[:, 0] * q[:, 1])).cpu().numpy()

    record(0, z)
    z = z.to(device=device, dtype=dt)
    for l in range(1, n_layers + 1):
        W = torch.randn(n_nets, width, width, generator=g, dtype=dt).to(device) * np.sqrt(
            sigma_w2 / width
        )
        b = torch.randn(n_nets, 1, width, generator=g, dtype=dt).to(device) * np.sqrt(sigma_b2)
        z = torch.baddbmm(b, f(z), W.transpose(1, 2))
        record(l, z)
    return {"q": qs, "c": cs}


def circle_experiment(
    *,
    sigma_w2: float,
    sigma_b2: float,
    width: int,
    n_layers: int,
    n_points: int,
    seed: int,
    phi: str = "tanh",
    record_layers: tuple[int, ...] = (),
    n_components: int = 3,
    device: str = "cpu",
    pca: bool = True,
) -> dict[str, np.ndarray]:
    """Propagate a great circle of input length √(N q*) through one random net (Poole et al. 2016,
    Figs. 3–4) together with its exact tangent vectors (forward-mode, dh^{l} = W
    diag φ'(h^{l-1}) dh^{l-1}).

    Returns per layer l = 0..L: ``length_chord`` (the closed polygon through the points),
    ``length_tangent`` (∮ |∂h/∂θ| dθ by the Riemann sum of exact speeds), ``q`` (mean |h|²/N),
    ``pca_var`` (explained-variance fractions, top ``n_components``; only with ``pca=True``, which
    costs an eigen-decomposition per layer); and for each layer in ``record_layers`` its
    projection on the top principal components, ``proj_<l>`` (n_points, k).
    """
    import torch

    sigma_w2, sigma_b2 = _check(sigma_w2, sigma_b2)
    width, n_layers, n_points = (
        check_positive_int(k, v)
        for k, v in (("width", width), ("n_layers", n_layers), ("n_points", n_points))
    )
    if record_layers and not pca:
        raise ParameterError("record_layers needs pca=True (projections are principal components)")
    for l in record_layers:
        if not 0 <= l <= n_layers:
            raise ParameterError(f"record_layers contains {l}; allowed: 0..n_layers={n_layers}")
    f = _torch_phi(phi)
    qs = q_star(sigma_w2, sigma_b2, phi)
    g = torch.Generator().manual_seed(int(seed))
    dt = torch.float32  # weights and propagation; lengths and principal components in float64
    basis, _ = torch.linalg.qr(torch.randn(width, 2, generator=g, dtype=torch.float64))
    theta = torch.arange(n_points, dtype=torch.float64) * (2 * np.pi / n_points)
    r = np.sqrt(width * qs)
    h = r * (torch.cos(theta)[:, None] * basis[:, 0] + torch.sin(theta)[:, None] * basis[:, 1])
    dh = r * (-torch.sin(theta)[:, None] * basis[:, 0] + torch.cos(theta)[:, None] * basis[:, 1])
    out: dict[str, list] = {"length_chord": [], "length_tangent": [], "q": []} | (
        {"pca_var": []} if pca else {}
    )
    dtheta = 2 * np.pi / n_points

    def record(l: int, h: Any, dh: Any) -> None:
        h, dh = h.double().cpu(), dh.double().cpu()
        out["length_chord"].append(float(torch.linalg.norm(h - torch.roll(h, 1, 0), dim=1).sum()))
        out["length_tangent"].append(float(torch.linalg.norm(dh, dim=1).sum() * dtheta))
        out["q"].append(float((h**2).mean()))
        if not pca:
            return
        hc = h - h.mean(0)
        # principal components from the points' Gram matrix: hc = U S Vᵀ, hc hcᵀ = U S² Uᵀ
        lam, U = torch.linalg.eigh(hc @ hc.T)
        lam, U = lam.flip(0).clamp_min(0), U.flip(1)
        out["pca_var"].append((lam[:n_components] / lam.sum()).numpy())
        if l in record_layers:
            out[f"proj_{l}"] = [(U[:, :n_components] * lam[:n_components].sqrt()).numpy()]

    record(0, h, dh)
    h, dh = h.to(device=device, dtype=dt), dh.to(device=device, dtype=dt)
    for l in range(1, n_layers + 1):
        # drawn on the CPU generator, then moved: the same numbers on every device
        W = torch.randn(width, width, generator=g, dtype=dt).to(device) * np.sqrt(sigma_w2 / width)
        b = torch.randn(width, generator=g, dtype=dt).to(device) * np.sqrt(sigma_b2)
        if phi == "tanh":
            dphi = 1 - torch.tanh(h) ** 2
        elif phi == "erf":
            dphi = 2 / np.sqrt(np.pi) * torch.exp(-h * h)
        else:
            dphi = torch.ones_like(h)
        dh = (dphi * dh) @ W.T
        h = torch.addmm(b, f(h), W.T)
        record(l, h, dh)
    res = {k: np.asarray(v) for k, v in out.items() if not k.startswith("proj_")}
    res.update({k: np.asarray(v[0]) for k, v in out.items() if k.startswith("proj_")})
    res["theta"] = theta.numpy()
    return res


# ----------------------------------------------------------------------------------------------
# Depth scales measured on networks across the transition (Schoenholz et al. 2017, Figs. 2–3)
# ----------------------------------------------------------------------------------------------
def sweep_starts(c_star: float, delta: float, ordered_gap: float) -> tuple[float, float]:
    """Starting correlations of the two pairs used to measure ξ_c at one setting: in the chaotic
    phase c* ± d with d = min(δ, (1 − c*)/2), on both sides of the fixed point (the map's curvature
    and a finite-width shift of c* then cancel to first order in the averaged log slope); in the
    ordered phase (c* = 1) both pairs start at 1 − ``ordered_gap`` (two replicates of the
    one side)."""
    if c_star >= 1.0:
        return 1.0 - ordered_gap, 1.0 - ordered_gap
    d = min(delta, (1.0 - c_star) / 2)
    return c_star + d, c_star - d


def depth_scale_sweep(
    *,
    sigma_w2s: Any,
    sigma_b2s: Any,
    width: int,
    n_layers: int,
    n_nets: int,
    seed: int,
    delta: float = 0.2,
    ordered_gap: float = 0.02,
    device: str = "cpu",
) -> dict[str, np.ndarray]:
    """Correlations and back-propagated gradients of random tanh nets over a (σ_b², σ_w²) grid
    (Schoenholz et al. 2017, Figs. 2–3: depth scales measured on networks).

    Every network is one draw of standard-normal weights G^l (N×N) and biases β^l, shared by all
    settings (common random numbers): z^l = σ_w G^l φ(z^{l-1})/√N + σ_b β^l. Per setting
    (σ_b²_i, σ_w²_j) three inputs of per-unit length q* are built as pre-activations: x₁, and two
    partners with correlations :func:`sweep_starts` to x₁ (exactly, by orthonormal directions).
    Forward: the correlations c^l of the two pairs, ``c`` (B, W, nets, 2, L+1). Backward, for x₁:
    δ^L = r ~ N(0, I) and δ^{l-1} = φ'(z^{l-1}) ⊙ σ_w G^lᵀ δ^l/√N (the error signal
    of ∂(r·z^L)/∂z^l); ``grad`` (B, W, nets, L+1) = |δ^l|²/N, whose mean contracts by χ₁ per layer
    toward the input (Schoenholz et al. 2017, Eq. 14: ξ_∇⁻¹ = −ln χ₁). Also returned: ``sigma_w2``,
    ``sigma_b2``, ``starts`` (B, W, 2) and the mean-field ``q_star``, ``c_star``, ``chi1``,
    ``chi_c``, ``xi_c`` (B, W). Float32 propagation, float64 reductions."""
    import torch

    sw2 = np.asarray(sigma_w2s, dtype=float).ravel()
    sb2 = np.asarray(sigma_b2s, dtype=float).ravel()
    if sw2.size == 0 or np.any(sw2 <= 0):
        raise ParameterError(
            f"sigma_w2s={sigma_w2s!r} must be a non-empty list of positive numbers"
        )
    if sb2.size == 0 or np.any(sb2 <= 0):
        raise ParameterError(
            f"sigma_b2s={sigma_b2s!r} must be a non-empty list of positive "
            "numbers (σ_b² = 0 has q* = 0 in the ordered phase)"
        )
    width, n_layers, n_nets = (
        check_positive_int(k, v)
        for k, v in (("width", width), ("n_layers", n_layers), ("n_nets", n_nets))
    )
    if not 0 < delta < 1 or not 0 < ordered_gap < 1:
        raise ParameterError(f"delta={delta} and ordered_gap={ordered_gap} must lie in (0, 1)")
    B, W, N = len(sb2), len(sw2), width
    th = {k: np.empty((B, W)) for k in ("q_star", "c_star", "chi1", "chi_c", "xi_c")}
    starts = np.empty((B, W, 2))
    for i, b in enumerate(sb2):
        for j, a in enumerate(sw2):
            d = depth_scales(a, b)
            for k in th:
                th[k][i, j] = d[k]
            starts[i, j] = sweep_starts(d["c_star"], delta, ordered_gap)
    K = B * W
    qs = torch.tensor(th["q_star"].ravel())
    c_pair = torch.tensor(starts.reshape(K, 2))
    s_w = torch.tensor(np.sqrt(np.tile(sw2, B) / N), dtype=torch.float32).to(device)  # (K,)
    s_b = torch.tensor(np.sqrt(np.repeat(sb2, W)), dtype=torch.float32).to(device)
    s_w3, s_b3 = s_w.repeat(3), s_b.repeat(3)  # columns: x₁ (K), partner 1 (K), partner 2 (K)
    g = torch.Generator().manual_seed(int(seed))
    c_out = np.empty((n_nets, 2, K, n_layers + 1))
    grad_out = np.empty((n_nets, K, n_layers + 1))

    def corr(z: Any) -> np.ndarray:
        zz = z.double()
        x1, p = zz[:, :K], zz[:, K:].reshape(N, 2, K)
        num = (x1[:, None, :] * p).sum(0)
        return (num / torch.sqrt((x1**2).sum(0)[None] * (p**2).sum(0))).cpu().numpy()  # (2, K)

    for net in range(n_nets):
        basis, _ = torch.linalg.qr(torch.randn(N, 3, generator=g, dtype=torch.float64))
        u, v = basis[:, :1], basis[:, 1:]  # (N, 1), (N, 2)
        r = torch.sqrt(N * qs)  # (K,)
        x1 = r * u
        # chaotic phase (two starts c* ± d): one direction v for both partners, so that their
        # sampling noise is shared while they stay close; ordered phase (one start): two replicates
        vk = [v[:, :1], torch.where(c_pair[:, 0] == c_pair[:, 1], v[:, 1:], v[:, :1])]
        parts = [r * (c_pair[:, k] * u + torch.sqrt(1 - c_pair[:, k] ** 2) * vk[k]) for k in (0, 1)]
        z = torch.cat([x1, *parts], dim=1)  # (N, 3K)
        c_out[net, :, :, 0] = corr(z)
        z = z.to(device=device, dtype=torch.float32)
        Gs, dphis = [], []
        for l in range(1, n_layers + 1):
            G = torch.randn(N, N, generator=g, dtype=torch.float32).to(device)
            beta = torch.randn(N, 1, generator=g, dtype=torch.float32).to(device)
            h = torch.tanh(z)
            dphis.append(1 - h[:, :K] ** 2)
            z = s_w3 * (G @ h) + s_b3 * beta
            Gs.append(G)
            c_out[net, :, :, l] = corr(z)
        delta_l = torch.randn(N, 1, generator=g, dtype=torch.float32).to(device).expand(N, K)
        grad_out[net, :, n_layers] = (delta_l.double() ** 2).mean(0).cpu().numpy()
        for l in range(n_layers, 0, -1):
            delta_l = dphis[l - 1] * (s_w * (Gs[l - 1].T @ delta_l))
            grad_out[net, :, l - 1] = (delta_l.double() ** 2).mean(0).cpu().numpy()
        del Gs, dphis
    c = c_out.transpose(2, 0, 1, 3).reshape(B, W, n_nets, 2, n_layers + 1)
    grad = grad_out.transpose(1, 0, 2).reshape(B, W, n_nets, n_layers + 1)
    return {"sigma_w2": sw2, "sigma_b2": sb2, "c": c, "grad": grad, "starts": starts} | th


def _log_slope(layers: np.ndarray, values: np.ndarray) -> float:
    """Least-squares slope of ln|values| against ``layers`` (NaN with fewer than 3 layers)."""
    if len(layers) < 3:
        return float("nan")
    return float(np.polyfit(layers, np.log(np.abs(values)), 1)[0])


def _map_until(
    c0: float, c_star: float, floor: float, n_layers: int, sigma_w2: float, sigma_b2: float
) -> np.ndarray:
    """[c^0, …] under the correlation map, stopped (padded with c*) once |c^l − c*| < ``floor``."""
    q = q_star(sigma_w2, sigma_b2)
    out = [float(c0)]
    while len(out) <= n_layers and abs(out[-1] - c_star) >= floor:
        out.append(correlation_map(out[-1], sigma_w2, sigma_b2, "tanh", q))
    return np.array(out + [c_star] * (n_layers + 1 - len(out)))


def sweep_rates(
    sweep: dict[str, np.ndarray],
    n_se: float = 4.0,
    n_boot: int = 200,
    seed: int = 0,
    efolds: float = 1.0,
) -> dict[str, Any]:
    """Decay rates 1/ξ measured on the networks of :func:`depth_scale_sweep`, per setting (B, W),
    against the mean-field rates (Schoenholz et al. 2017, Eqs. 9 and 14), and where they peak.

    * Correlation, chaotic phase (pairs started at c* ± d, :func:`sweep_starts`): the mean over
      networks of the two pairs' difference, D^l = c̄₁^l − c̄₂^l ≈ 2d χ_c^l, is fitted by a line in
      ln D^l against l, over a window fixed in advance by the map alone — the layers where the
      maps' difference is still above e^(−``efolds``) of its start, about the first efolds·ξ_c
      layers — so that the window does not lengthen as networks are added (a window set by the
      sample's standard errors couples the estimate to the sample size). The fixed point c* (and
      its O(1/N) finite-width shift) and the map's
      even-order curvature cancel in D; the shared input direction makes the two pairs' sampling
      noise cancel too while they stay close. Ordered phase (c* = 1): ln(1 − c̄^l) of each
      replicate pair over the layers where the map's 1 − c^l exceeds ``n_se`` standard errors,
      the two slopes averaged. ``rate_c`` = −slope; ``window`` (B, W, 2): the layers fitted;
      ``rate_c_map``: the same estimator on the map's iterates (what the finite window does to
      1/ξ_c at N = ∞). Theory: ``rate_c_theory`` = 1/ξ_c = −ln χ_c.
    * Gradient: slope of ln of the mean |δ^l|²/N over networks against l, over all layers:
      ``rate_grad`` = 1/ξ_∇ (positive: gradients vanish toward the input; negative: they explode).
      Theory: ``rate_grad_theory`` = −ln χ₁.
    * ``rate_q_theory`` = 1/ξ_q, the length map's rate at each setting (Schoenholz et al. Eq. 4).
    Uncertainty: leave-one-network-out values ``rate_c_loo``, ``rate_grad_loo`` (B, W, n) and the
    jackknife standard errors ``rate_c_se``, ``rate_grad_se`` (``dof`` = n − 1). Peaks: per σ_b²,
    the σ_w² where |rate| is smallest (the depth scale largest), ``peak_c`` and ``peak_grad`` (B,),
    with bootstrap percentile intervals over networks (``n_boot`` resamples, 99 %),
    ``peak_c_interval``, ``peak_grad_interval`` (B, 2)."""

    check_positive("efolds", efolds)
    c, grad = sweep["c"], sweep["grad"]
    B, W, n, _, L1 = c.shape
    layers = np.arange(L1)
    window = np.zeros((B, W, 2), dtype=int)
    wins: dict[tuple[int, int], list[np.ndarray]] = {}
    chaotic = sweep["starts"][..., 0] != sweep["starts"][..., 1]
    rate_c_map = np.full((B, W), np.nan)

    def corr_rate(i: int, j: int, cm: np.ndarray) -> float:
        """1/ξ from mean correlations ``cm`` (2, L+1) of one setting."""
        w = wins[i, j]
        if chaotic[i, j]:  # the two pairs' difference: c* and the map's even-order curvature cancel
            return -_log_slope(w[0], cm[0, w[0]] - cm[1, w[0]])
        return -0.5 * sum(_log_slope(w[k], cm[k, w[k]] - 1.0) for k in range(2))

    for i in range(B):
        for j in range(W):
            cs = float(sweep["c_star"][i, j])
            a, b = float(sweep["sigma_w2"][j]), float(sweep["sigma_b2"][i])
            s0, s1 = sweep["starts"][i, j]
            if chaotic[i, j]:
                # fixed in advance by the map alone: the layers where the maps' difference is
                # still above e^(−efolds) of its start (the first ≈ efolds·ξ_c layers)
                maps = [_map_until(s, cs, 0.0, L1 - 1, a, b) for s in (s0, s1)]
                diff = maps[0] - maps[1]
                w = layers[1:][diff[1:] >= np.exp(-efolds) * diff[0]]
                wins[i, j] = [w, w]
            else:
                ses = [mean_se(c[i, j, :, k])[1] for k in range(2)]
                m0 = _map_until(s0, cs, n_se * min(float(np.min(v[1:])) for v in ses), L1 - 1, a, b)
                maps = [m0, m0]
                wins[i, j] = [layers[1:][np.abs(m0[1:] - cs) > n_se * ses[k][1:]] for k in range(2)]
            window[i, j] = [len(w) for w in wins[i, j]]
            rate_c_map[i, j] = corr_rate(i, j, np.stack(maps))

    def rates(idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Both rates on the networks ``idx`` (with repetition for the bootstrap)."""
        cm, gm = c[:, :, idx].mean(2), grad[:, :, idx].mean(2)  # (B, W, 2, L+1), (B, W, L+1)
        rc = np.array([[corr_rate(i, j, cm[i, j]) for j in range(W)] for i in range(B)])
        rg = np.polyfit(layers, np.log(gm.reshape(B * W, L1)).T, 1)[0].reshape(B, W)
        return rc, rg

    rate_c, rate_grad = rates(np.arange(n))
    loo = [rates(np.delete(np.arange(n), m)) for m in range(n)]
    rate_c_loo, rate_grad_loo = (np.moveaxis(np.array([r[k] for r in loo]), 0, -1) for k in (0, 1))
    jk = lambda v: np.sqrt((n - 1) / n * np.sum((v - v.mean(-1, keepdims=True)) ** 2, axis=-1))  # noqa: E731
    rng = np.random.default_rng(seed)
    boots = [rates(rng.integers(0, n, n)) for _ in range(check_positive_int("n_boot", n_boot))]
    sw2 = sweep["sigma_w2"]

    def peak(r: np.ndarray) -> np.ndarray:  # (B, W) -> σ_w² of the smallest |rate| per σ_b²
        return sw2[np.argmin(np.abs(np.nan_to_num(r, nan=np.inf)), axis=1)]

    pc, pg = (np.array([peak(b[k]) for b in boots]) for k in (0, 1))
    ci = lambda p: np.quantile(p, [0.005, 0.995], axis=0, method="inverted_cdf").T  # noqa: E731
    return dict(
        rate_c=rate_c,
        rate_c_se=jk(rate_c_loo),
        rate_c_loo=rate_c_loo,
        rate_c_map=rate_c_map,
        rate_c_theory=-np.log(sweep["chi_c"]),
        rate_grad=rate_grad,
        rate_grad_se=jk(rate_grad_loo),
        rate_grad_loo=rate_grad_loo,
        rate_grad_theory=-np.log(sweep["chi1"]),
        window=window,
        dof=n - 1,
        rate_q_theory=np.array(
            [
                [1.0 / depth_scales(float(a), float(b))["xi_q"] for a in sw2]
                for b in sweep["sigma_b2"]
            ]
        ),
        peak_c=peak(rate_c),
        peak_c_interval=ci(pc),
        peak_grad=peak(rate_grad),
        peak_grad_interval=ci(pg),
    )


def mean_rate_ratio(
    measured: np.ndarray,
    theory: np.ndarray,
    loo: np.ndarray,
    se: np.ndarray,
    keep: np.ndarray,
    alternative: np.ndarray | None = None,
) -> dict[str, Any]:
    """Precision-weighted mean of measured/theory rates over the settings ``keep``, i.e. of
    ξ_theory/ξ_measured, with weights (theory/se)² fixed by the full sample, and its jackknife
    standard error from the leave-one-network-out rates ``loo`` (…, n): ``est``, an
    :class:`~layerwise.stats.Estimate` (n − 1 d.o.f. over networks; ``n`` the settings kept), and
    ``alternative``, the same weighted mean of ``alternative``/theory — what the ratio would be if
    the rates were ``alternative`` instead (NaN without one). NaN when no setting is kept."""
    keep = np.asarray(keep, bool) & np.isfinite(measured) & (np.asarray(se) > 0)
    n_nets = np.asarray(loo).shape[-1]
    if not keep.any():
        return {
            "est": Estimate(float("nan"), float("nan"), n_nets - 1, 0),
            "alternative": float("nan"),
        }
    w = (theory[keep] / se[keep]) ** 2
    w = w / w.sum()
    full = float(w @ (measured[keep] / theory[keep]))
    v = w @ (loo[keep] / theory[keep][:, None])
    se_jack = float(np.sqrt((n_nets - 1) / n_nets * np.sum((v - v.mean()) ** 2)))
    alt = float("nan") if alternative is None else float(w @ (alternative[keep] / theory[keep]))
    return {"est": Estimate(full, se_jack, n_nets - 1, int(keep.sum())), "alternative": alt}


def sweep_rate_ratios(
    R: Mapping[str, np.ndarray],
    phase: np.ndarray,
    n_layers: int,
    map_bias: float = 0.05,
    margin: float = 0.10,
) -> tuple[dict[str, dict[str, Any]], float]:
    """Measured/mean-field decay rates over a σ_w² sweep (Schoenholz et al. 2017, Eqs. 9 and 14),
    for the settings the sweep resolves: a depth scale at most a third of the ``n_layers``
    recorded, and for correlations a fitting window whose bias on the map's own iterates is at most
    ``map_bias``. ``R`` holds ``rate_c``/``rate_grad`` (networks), ``*_theory`` (−1/ξ),
    ``rate_c_map`` (the same fit on the map), ``*_loo`` and ``*_se`` per setting; ``phase`` is
    "ordered"/"chaotic" per setting.

    Returns ({"ordered", "chaotic", "grad"} → :func:`mean_rate_ratio`, the largest relative window
    bias |rate_c_map/rate_c_theory − 1| among the resolved correlation settings). The alternatives:
    ordered correlations decaying at the length map's rate 1/ξ_q (``rate_q_theory``), chaotic ones
    at |ln χ₁|, the gradient's rate (the depth scale read off χ₁ alone), gradients not decaying
    at all (rate 0). Each entry also holds ``map_bias``, the largest |rate_map/theory − 1| of the
    estimator on the map's own iterates (N = ∞, the same windows) over its resolved settings (0
    for the gradient, whose decay the map makes exactly geometric), and ``recovers``: that bias
    is at most half the ``margin`` (the estimator control)."""
    n_layers = check_positive_int("n_layers", n_layers)
    phase = np.asarray(phase)
    bias = np.abs(np.asarray(R["rate_c_map"]) / R["rate_c_theory"] - 1)
    resolved_c = (1 / R["rate_c_theory"] <= n_layers / 3) & (bias <= map_bias)
    resolved_g = np.abs(1 / R["rate_grad_theory"]) <= n_layers / 3
    if not resolved_c.any():
        raise ParameterError(
            f"no correlation setting is resolved with n_layers={n_layers}: record more layers"
        )
    c = (R["rate_c"], R["rate_c_theory"], R["rate_c_loo"], R["rate_c_se"])
    grad = (R["rate_grad"], R["rate_grad_theory"], R["rate_grad_loo"], R["rate_grad_se"])
    ratios = {
        "ordered": mean_rate_ratio(*c, resolved_c & (phase == "ordered"), R["rate_q_theory"]),
        "chaotic": mean_rate_ratio(
            *c, resolved_c & (phase == "chaotic"), np.abs(R["rate_grad_theory"])
        ),
        "grad": mean_rate_ratio(*grad, resolved_g, np.zeros_like(R["rate_grad_theory"])),
    }
    for key, keep in (
        ("ordered", resolved_c & (phase == "ordered")),
        ("chaotic", resolved_c & (phase == "chaotic")),
    ):
        ratios[key]["map_bias"] = float(np.max(bias[keep])) if keep.any() else float("nan")
    ratios["grad"]["map_bias"] = 0.0
    for r in ratios.values():
        r["recovers"] = bool(r["map_bias"] <= margin / 2)
    return ratios, float(np.max(bias[resolved_c]))
