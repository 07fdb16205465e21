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

What Chapter 7 derives from these maps and simulations — the length map's convergence, the
agreement of networks with the maps, the circle's growth rate, the depth scales measured on
networks, the trainability boundary — is its study, :mod:`layerwise.studies.ch07`.
"""

from __future__ import annotations

from collections.abc import Callable
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


def phi_function(phi: str) -> Callable[[Any], Any]:
    """The activation φ itself (numpy), for simulations."""
    return _phi_funcs(phi)[0]


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
