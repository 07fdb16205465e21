"""Exact activation and linear regions of fully-connected ReLU networks on a 2-D slice.

A ReLU network computes a continuous piecewise-linear function.  Every activation pattern (which
neurons are on) defines a convex *activation region*, on which the network is one affine map;
adjacent activation regions with the same affine map form one *linear region*, which need not be
convex (Hanin & Rolnick 2019, "Deep ReLU networks have surprisingly few activation patterns",
§2; Daróczy, slides §3).

The counter works on a convex polygon in a 2-D affine slice ``x = origin + basis @ (u, v)`` of
input space.  Restricted to the slice the first layer is an affine map of ``(u, v)``; on any
region of the partition cut by the layers before it, every pre-activation of layer ``l`` is an
affine function of ``(u, v)``, so layer ``l`` cuts each such region along straight lines.  The
regions are split layer by layer, neuron by neuron, all polygons at once (padded vertex arrays,
numpy, float64).  A vertex within ``tol`` (a distance) of a cutting line belongs to both sides,
so a line through a vertex, along an edge or grazing a sliver never creates an empty or
duplicated polygon.  For the last hidden layer only the *number* of pieces is needed when one
only counts: ``n`` chords of a convex polygon cut it into ``1 + Σ_j (1 + #distinct interior points
where chord j meets earlier chords)`` pieces (Euler), which needs no polygon at all.

Also here: the plane through three inputs (square of half-width 1.25 × their circumradius,
Hanin & Rolnick 2019, §5), a brute-force grid count, a per-polygon per-neuron reference
implementation (for the benchmark), merging into linear regions, He-normal networks with tiny
biases (built by :mod:`layerwise.networks`), and the tangent sample sensitivity ∂²f/∂θ∂x
(:func:`layerwise.networks.tangent_sensitivity`) on each activation region, where it is constant
(Daróczy, slides §3, Lemma 3.1).

Hanin & Rolnick's laws at initialisation: the exact one-layer expectation of the count in a
square (Crofton + Euler, :func:`one_layer_expected_count`), boundary crossings along a segment
(:func:`line_breakpoints`) and the exact distance to the nearest boundary
(:func:`boundary_distance`) with their one-layer closed forms; the growth exponents of counts
(:func:`growth_exponent`, :func:`pair_exponent`, on a window of wide layers
:func:`wide_window`, checked on synthetic truth by :func:`exponent_control`) and Montúfar et
al.'s maximum (:func:`montufar_max`).  Through training (Hanin & Rolnick 2019, §5): the count at
checkpoints of one network (:func:`train_counts`) or of stacked networks trained at once
(:func:`train_step_counts`), both by :func:`layerwise.networks.train`.  Geometry: the search for
a visibly non-convex linear region (:func:`bottleneck_demo`) and the tangent sensitivity on a
slice (:func:`sensitivity_on_slice`, :func:`sensitivity_summary`).  Chapter 6's experiments on
the digits are its study, :mod:`layerwise.studies.ch06`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from math import comb
from typing import Any

import numpy as np
import torch
from scipy.integrate import quad
from scipy.spatial import ConvexHull
from scipy.special import betainc

from .networks import Params, check_widths, from_pairs, init_mlp, n_weight_layers, train
from .networks import forward as net_forward
from .networks import tangent_sensitivity as net_tangent_sensitivity
from .params import ParameterError, check_fraction, check_positive, check_positive_int
from .stats import Estimate, estimate, jackknife_se, linear_fit

Weights = list[tuple[np.ndarray, np.ndarray]]
METHODS = ("arrangement", "polygons")


# --------------------------------------------------------------------------------------------
# Networks
# --------------------------------------------------------------------------------------------
def as_weights(net: Any) -> Weights:
    """Weights ``[(W1, b1), …, (W_out, b_out)]`` as float64 numpy arrays.

    ``net`` is a :mod:`~layerwise.networks` parameter dict ``{W1, b1, …}``, a
    ``torch.nn.Module`` whose ``nn.Linear`` layers, in registration order, are the
    layers of a fully-connected ReLU network (ReLU after every layer but the last), or already a
    sequence of ``(W, b)`` pairs.  The last layer is the (linear) output layer.
    """
    pairs: list[tuple[np.ndarray, np.ndarray]] = []
    if isinstance(net, dict):
        n = n_weight_layers(net)
        net = [
            (net[f"W{l}"].detach().cpu().double().numpy(),
             net[f"b{l}"].detach().cpu().double().numpy() if f"b{l}" in net
             else np.zeros(net[f"W{l}"].shape[0]))
            for l in range(1, n + 1)
        ]
    if isinstance(net, torch.nn.Module):
        for m in net.modules():
            if isinstance(m, torch.nn.Linear):
                W = m.weight.detach().cpu().double().numpy()
                b = (m.bias.detach().cpu().double().numpy() if m.bias is not None
                     else np.zeros(W.shape[0]))
                pairs.append((W, b))
        if not pairs:
            raise ParameterError("net: the module has no nn.Linear layer")
        net = pairs
    if not isinstance(net, Sequence) or len(net) < 2:
        raise ParameterError(
            "net must be a torch module or a sequence of (W, b) pairs with at least one hidden "
            "layer and an output layer (>= 2 layers)"
        )
    out: Weights = []
    d = None
    for i, pair in enumerate(net):
        if len(pair) != 2:
            raise ParameterError(f"net layer {i} must be a (W, b) pair")
        W, b = (np.asarray(a, dtype=np.float64) for a in pair)
        if W.ndim != 2 or b.shape != (W.shape[0],):
            raise ParameterError(f"net layer {i}: W must be 2-D (out, in) and b of shape (out,)")
        if d is not None and W.shape[1] != d:
            raise ParameterError(f"net layer {i} takes {W.shape[1]} inputs but layer {i-1} "
                                 f"gives {d}")
        if not (np.all(np.isfinite(W)) and np.all(np.isfinite(b))):
            raise ParameterError(f"net layer {i} has non-finite weights")
        d = W.shape[0]
        out.append((W, b))
    return out


def he_mlp(d_in: int, widths: Sequence[int], d_out: int = 1, *, seed: int = 0,
           bias_var: float = 1e-6) -> Params:
    """A ReLU MLP (a :mod:`~layerwise.networks` parameter dict, float32) with He-normal weights,
    N(0, 2/fan_in), and biases N(0, ``bias_var``): the initialisation of Hanin & Rolnick 2019, §5
    (tiny, non-zero biases).  ``widths`` are the hidden widths."""
    d_in = check_positive_int("d_in", d_in)
    d_out = check_positive_int("d_out", d_out)
    widths = check_widths(widths, min_len=1)
    bias_var = float(bias_var)
    if not bias_var >= 0:
        raise ParameterError(f"bias_var={bias_var!r} must be >= 0")
    return init_mlp([d_in, *widths, d_out], seed=seed, sigma_w2=2.0, bias=True,
                    bias_std=float(np.sqrt(bias_var)), dtype=torch.float32)


# --------------------------------------------------------------------------------------------
# The slice
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Plane:
    """The affine plane ``origin + basis @ (u, v)`` (orthonormal ``basis``, shape (d, 2)) and the
    square ``|u|, |v| <= half_width`` in it."""

    origin: np.ndarray
    basis: np.ndarray
    half_width: float

    def square(self) -> np.ndarray:
        h = self.half_width
        return np.array([[-h, -h], [h, -h], [h, h], [-h, h]], dtype=np.float64)

    def to_input(self, uv: np.ndarray) -> np.ndarray:
        """Input-space points of slice coordinates ``uv`` (…, 2)."""
        return self.origin + np.asarray(uv, dtype=np.float64) @ self.basis.T

    def to_plane(self, x: np.ndarray) -> np.ndarray:
        """Slice coordinates of input-space points (orthogonal projection)."""
        return (np.asarray(x, dtype=np.float64) - self.origin) @ self.basis


def plane_through(points: np.ndarray, scale: float = 1.25) -> Plane:
    """The plane through three inputs, centred on their circumcentre, with the square of
    half-width ``scale`` × circumradius (Hanin & Rolnick 2019, §5: 1.25)."""
    scale = check_positive("scale", scale)
    P = np.asarray(points, dtype=np.float64).reshape(3, -1) if np.size(points) else None
    if P is None or np.asarray(points).shape[0] != 3:
        raise ParameterError("points must hold exactly three inputs (shape (3, …))")
    a, b = P[1] - P[0], P[2] - P[0]
    e1 = a / np.linalg.norm(a) if np.linalg.norm(a) > 0 else None
    if e1 is None:
        raise ParameterError("points: the three inputs must be distinct and not collinear")
    b_perp = b - (b @ e1) * e1
    nb = np.linalg.norm(b_perp)
    if nb <= 1e-12 * max(np.linalg.norm(a), np.linalg.norm(b)):
        raise ParameterError("points: the three inputs must be distinct and not collinear")
    e2 = b_perp / nb
    # circumcentre in plane coordinates (P0 at the origin)
    q1 = np.array([a @ e1, a @ e2])
    q2 = np.array([b @ e1, b @ e2])
    A = 2 * np.array([q1, q2])
    centre = np.linalg.solve(A, np.array([q1 @ q1, q2 @ q2]))
    R = float(np.linalg.norm(centre))
    origin = P[0] + centre[0] * e1 + centre[1] * e2
    return Plane(origin, np.stack([e1, e2], axis=1), scale * R)


def slice_view(points: np.ndarray) -> tuple[float, np.ndarray]:
    """The square of the plane through three ``points`` (:func:`plane_through`) as a figure
    draws it: its half-width and the points in slice coordinates (3, 2)."""
    plane = plane_through(points)
    return plane.half_width, plane.to_plane(np.asarray(points, dtype=np.float64))


def restrict(weights: Weights, plane: Plane | None) -> Weights:
    """The network as a function of slice coordinates ``(u, v)`` (first layer composed with the
    plane's affine map); ``plane=None`` means the network already has 2 inputs."""
    weights = as_weights(weights)
    if plane is None:
        if weights[0][0].shape[1] != 2:
            raise ParameterError("plane=None needs a network with 2 inputs; pass a Plane otherwise")
        return weights
    W1, b1 = weights[0]
    if W1.shape[1] != plane.origin.shape[0]:
        raise ParameterError(
            f"plane lives in dimension {plane.origin.shape[0]} but the network takes "
            f"{W1.shape[1]} inputs"
        )
    return [(W1 @ plane.basis, W1 @ plane.origin + b1), *weights[1:]]


def _check_polygon(polygon: np.ndarray) -> np.ndarray:
    P = np.asarray(polygon, dtype=np.float64)
    if P.ndim != 2 or P.shape[1] != 2 or len(P) < 3 or not np.all(np.isfinite(P)):
        raise ParameterError("polygon must be an array of >= 3 finite 2-D vertices")
    area = _shoelace(P[None], np.array([len(P)]))[0]
    if area == 0:
        raise ParameterError("polygon has zero area")
    if area < 0:
        P = P[::-1].copy()
    # convexity: every turn has the same (left) orientation
    e = np.roll(P, -1, axis=0) - P
    turn = e[:, 0] * np.roll(e, -1, axis=0)[:, 1] - e[:, 1] * np.roll(e, -1, axis=0)[:, 0]
    if np.any(turn < -1e-12 * np.abs(area)):
        raise ParameterError("polygon must be convex")
    return P


def _shoelace(V: np.ndarray, cnt: np.ndarray) -> np.ndarray:
    """Signed areas of padded polygons V (P, M, 2) with ``cnt`` vertices each."""
    M = V.shape[1]
    idx = np.arange(M)
    nxt = np.where(idx + 1 < cnt[:, None], idx + 1, 0)
    Vn = np.take_along_axis(V, nxt[..., None], axis=1)
    cr = V[..., 0] * Vn[..., 1] - V[..., 1] * Vn[..., 0]
    return 0.5 * np.where(idx < cnt[:, None], cr, 0.0).sum(axis=1)


# --------------------------------------------------------------------------------------------
# The exact counter
# --------------------------------------------------------------------------------------------
@dataclass
class Regions:
    """Activation regions on a convex polygon of a slice.

    ``vertices`` (P, M, 2) padded counter-clockwise polygons with ``n_vertices`` (P,) vertices
    each; ``patterns`` (P, #hidden neurons) the activation pattern (layer by layer);
    ``maps`` (P, d_out, 3) the network's affine map on each region in slice coordinates,
    ``f(u, v) = maps[..., 0] u + maps[..., 1] v + maps[..., 2]``.
    """

    vertices: np.ndarray
    n_vertices: np.ndarray
    patterns: np.ndarray
    maps: np.ndarray
    widths: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.n_vertices)

    @property
    def areas(self) -> np.ndarray:
        return _shoelace(self.vertices, self.n_vertices)

    def polygon(self, i: int) -> np.ndarray:
        return self.vertices[i, : self.n_vertices[i]]

    def centroids(self) -> np.ndarray:
        """Vertex means (interior points of the convex polygons)."""
        valid = np.arange(self.vertices.shape[1]) < self.n_vertices[:, None]
        return (self.vertices * valid[..., None]).sum(1) / self.n_vertices[:, None]

    def locate(self, uv: np.ndarray, tol: float = 0.0) -> np.ndarray:
        """Index of the region containing each point (−1 if none), by half-plane tests."""
        uv = np.asarray(uv, dtype=np.float64).reshape(-1, 2)
        V, cnt = self.vertices, self.n_vertices
        M = V.shape[1]
        idx = np.arange(M)
        nxt = np.where(idx + 1 < cnt[:, None], idx + 1, 0)
        Vn = np.take_along_axis(V, nxt[..., None], axis=1)
        e = Vn - V
        out = np.full(len(uv), -1)
        for k, p in enumerate(uv):
            cr = e[..., 0] * (p[1] - V[..., 1]) - e[..., 1] * (p[0] - V[..., 0])
            edge_ok = cr >= -tol * np.hypot(e[..., 0], e[..., 1])
            ok = np.where(idx < cnt[:, None], edge_ok, True).all(1)
            hit = np.flatnonzero(ok)
            if len(hit):
                out[k] = hit[0]
        return out


def _classify(d: np.ndarray, valid: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
    pos = (d > tol) & valid
    neg = (d < -tol) & valid
    return pos, neg


def _clip(V: np.ndarray, cnt: np.ndarray, d: np.ndarray, tol: float):
    """Split convex polygons (P, M, 2) by the zero line of the signed distances ``d`` (P, M).

    Vertices within ``tol`` of the line go to both halves; a new vertex is created only on
    edges whose end points lie strictly (beyond ``tol``) on opposite sides.  Returns the
    positive and negative halves as (vertices, counts)."""
    P, M, _ = V.shape
    idx = np.arange(M)
    valid = idx < cnt[:, None]
    nxt = np.where(idx + 1 < cnt[:, None], idx + 1, 0)
    Vn = np.take_along_axis(V, nxt[..., None], axis=1)
    dn = np.take_along_axis(d, nxt, axis=1)
    cls = np.where(d > tol, 1, np.where(d < -tol, -1, 0))
    clsn = np.where(dn > tol, 1, np.where(dn < -tol, -1, 0))
    cross = valid & (cls * clsn == -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(cross, d / (d - dn), 0.0)
    X = V + t[..., None] * (Vn - V)
    out = np.empty((P, 2 * M, 2))
    out[:, 0::2] = V
    out[:, 1::2] = X
    halves = []
    for keep_v in (valid & (cls >= 0), valid & (cls <= 0)):
        keep = np.empty((P, 2 * M), dtype=bool)
        keep[:, 0::2] = keep_v
        keep[:, 1::2] = cross
        n = keep.sum(1)
        order = np.argsort(~keep, axis=1, kind="stable")[:, : n.max()]
        halves.append((np.take_along_axis(out, order[..., None], axis=1), n))
    return halves


def _pad(V: np.ndarray, M: int) -> np.ndarray:
    if V.shape[1] >= M:
        return V
    return np.concatenate([V, np.zeros((V.shape[0], M - V.shape[1], 2))], axis=1)


def _signed_distance(V: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Signed distance of vertices V (P, M, 2) to the lines g (P, 3): a·p + c = 0, as a distance
    (±inf for constant non-zero functions, 0 where identically zero)."""
    s = V[..., 0] * g[:, 0, None] + V[..., 1] * g[:, 1, None] + g[:, 2, None]
    norm = np.hypot(g[:, 0], g[:, 1])
    with np.errstate(divide="ignore", invalid="ignore"):
        d = s / norm[:, None]
    const = norm == 0
    if const.any():
        d[const] = np.sign(g[const, 2])[:, None] * np.inf
        d[const & (g[:, 2] == 0)] = 0.0
    return d


def _split_layer(V, cnt, G, tol):
    """Split every polygon by the n zero lines of its pre-activations G (P, n, 3)."""
    P0, n, _ = G.shape
    parent = np.arange(P0)
    bits = np.zeros((P0, n), dtype=bool)
    for j in range(n):
        g = G[parent, j]
        d = _signed_distance(V, g)
        valid = np.arange(V.shape[1]) < cnt[:, None]
        pos, neg = _classify(d, valid, tol)
        hp, hn = pos.any(1), neg.any(1)
        split = hp & hn
        # polygons on one side (or, within tol, on the line: decided by the mean distance)
        on_line = ~hp & ~hn
        mean_d = np.where(valid & np.isfinite(d), d, 0.0).sum(1) / cnt
        bits[:, j] = hp | (on_line & (mean_d > 0))
        if split.any():
            s = np.flatnonzero(split)
            (Vp, np_), (Vq, nq) = _clip(V[s], cnt[s], d[s], tol)
            M = max(V.shape[1], Vp.shape[1], Vq.shape[1])
            V = _pad(V, M)
            V[s] = _pad(Vp, M)
            cnt = cnt.copy()
            cnt[s] = np_
            bits[s, j] = True
            newbits = bits[s].copy()
            newbits[:, j] = False
            V = np.concatenate([V, _pad(Vq, M)])
            cnt = np.concatenate([cnt, nq])
            bits = np.concatenate([bits, newbits])
            parent = np.concatenate([parent, parent[s]])
    return V, cnt, parent, bits


def _next_maps(G: np.ndarray, bits: np.ndarray, W: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Affine maps (P, k, 3) of the next layer's pre-activations given this layer's maps G
    (P, n, 3) and patterns (P, n)."""
    H = G * bits[..., None]
    P, n, _ = H.shape
    out = (H.transpose(0, 2, 1).reshape(P * 3, n) @ W.T).reshape(P, 3, -1).transpose(0, 2, 1)
    out = np.ascontiguousarray(out)
    out[..., 2] += b
    return out


def _arrangement_counts(V, cnt, G, tol) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        return _arrangement_counts_(V, cnt, G, tol)


def _arrangement_counts_(V, cnt, G, tol) -> np.ndarray:
    """Number of pieces each convex polygon is cut into by its lines G (P, n, 3), without
    building them: ``1 + Σ_j [chord j crosses and is new] (1 + #distinct interior points where
    chord j meets earlier chords)`` (Euler's formula for chords of a convex polygon; concurrent
    chords are counted once per distinct point, coincident chords once)."""
    P, n, _ = G.shape
    M = V.shape[1]
    valid = np.arange(M) < cnt[:, None]
    norm = np.hypot(G[..., 0], G[..., 1])
    safe = np.where(norm > 0, norm, 1.0)
    Gn = G / safe[..., None]  # unit normals (zero rows stay constant lines)
    s = (V[..., 0, None] * Gn[:, None, :, 0] + V[..., 1, None] * Gn[:, None, :, 1]
         + Gn[:, None, :, 2])
    s = np.where((norm > 0)[:, None, :], s, np.sign(G[:, None, :, 2]) * np.inf)
    vm = valid[..., None]
    crossing = ((s > tol) & vm).any(1) & ((s < -tol) & vm).any(1)  # (P, n)
    counts = np.ones(P, dtype=np.int64)
    if n == 0:
        return counts
    # pairs (j < k) of crossing chords in the same polygon
    p_idx, k_idx = np.nonzero(crossing)
    # for each crossing chord k, all earlier crossing chords j of the same polygon
    order = np.lexsort((k_idx, p_idx))
    p_idx, k_idx = p_idx[order], k_idx[order]
    start = np.searchsorted(p_idx, np.arange(P))
    rank = np.arange(len(p_idx)) - start[p_idx]  # position of k among the polygon's crossing chords
    rep = np.repeat(np.arange(len(p_idx)), rank)
    if len(rep):
        offs = np.arange(len(rep)) - np.repeat(np.cumsum(rank) - rank, rank)
        j_pos = start[p_idx[rep]] + offs
        pp, kk, jj = p_idx[rep], k_idx[rep], k_idx[j_pos]
        a, b = Gn[pp, kk], Gn[pp, jj]
        det = a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]
        parallel = np.abs(det) < 1e-12
        with np.errstate(divide="ignore", invalid="ignore"):
            x = (-a[:, 2] * b[:, 1] + b[:, 2] * a[:, 1]) / det
            y = (-a[:, 0] * b[:, 2] + b[:, 0] * a[:, 2]) / det
        # coincident chords: k adds nothing
        foot = -a[:, 2, None] * a[:, :2]
        coincide = parallel & (np.abs(np.einsum("ti,ti->t", foot, b[:, :2]) + b[:, 2]) <= tol)
        dup = np.zeros((P, n), dtype=bool)
        dup[pp[coincide], kk[coincide]] = True
        # strict interior test against the polygon's edges
        Vp, cp = V[pp], cnt[pp]
        idx = np.arange(M)
        nxt = np.where(idx + 1 < cp[:, None], idx + 1, 0)
        e = np.take_along_axis(Vp, nxt[..., None], axis=1) - Vp
        el = np.hypot(e[..., 0], e[..., 1])
        cr = e[..., 0] * (y[:, None] - Vp[..., 1]) - e[..., 1] * (x[:, None] - Vp[..., 0])
        inside = np.where((idx < cp[:, None]) & (el > 0), cr > tol * el, True).all(1) & ~parallel
        # distinct points along chord k: position t = p · (unit direction of k)
        t = x * -a[:, 1] + y * a[:, 0]
        sel = np.flatnonzero(inside & ~dup[pp, kk])
        key_p, key_k, tt = pp[sel], kk[sel], t[sel]
        o = np.lexsort((tt, key_k, key_p))
        key_p, key_k, tt = key_p[o], key_k[o], tt[o]
        new = np.ones(len(tt), dtype=bool)
        if len(tt) > 1:
            same = (key_p[1:] == key_p[:-1]) & (key_k[1:] == key_k[:-1])
            new[1:] = ~(same & (np.abs(tt[1:] - tt[:-1]) <= tol))
        np.add.at(counts, key_p[new], 1)
        chords = crossing & ~dup
    else:
        chords = crossing
    counts += chords.sum(1)
    return counts


def _prepare(net, plane, polygon, tol):
    w2 = restrict(net, plane)
    if polygon is None:
        if plane is None:
            raise ParameterError("give a plane (with its square) or a polygon")
        polygon = plane.square()
    poly = _check_polygon(polygon)
    tol = check_positive("tol", tol)
    diam = float(np.max(np.linalg.norm(poly[:, None] - poly[None], axis=-1)))
    return w2, poly, tol * diam


def activation_regions(net: Any, plane: Plane | None = None, polygon: np.ndarray | None = None,
                       *, tol: float = 1e-9) -> Regions:
    """All activation regions of ``net`` inside ``polygon`` (default: the plane's square).

    ``tol`` is relative to the polygon's diameter: a vertex closer than that to a cutting line
    lies on it.  Float64 throughout."""
    w2, poly, eps = _prepare(net, plane, polygon, tol)
    V = poly[None].copy()
    cnt = np.array([len(poly)])
    W1, b1 = w2[0]
    G = np.concatenate([W1, b1[:, None]], axis=1)[None]
    patterns = np.zeros((1, 0), dtype=bool)
    widths = []
    for W, b in w2[1:]:
        V, cnt, parent, bits = _split_layer(V, cnt, G, eps)
        patterns = np.concatenate([patterns[parent], bits], axis=1)
        widths.append(bits.shape[1])
        G = _next_maps(G[parent], bits, W, b)
    return Regions(V, cnt, patterns, G, tuple(widths))


def count_regions(net: Any, plane: Plane | None = None, polygon: np.ndarray | None = None,
                  *, method: str = "arrangement", tol: float = 1e-9) -> int:
    """Number of activation regions inside the polygon.

    ``method="polygons"`` builds every region; ``"arrangement"`` (default, faster) builds the
    regions of all hidden layers but the last and counts the last layer's pieces with the
    chord formula of :func:`_arrangement_counts`."""
    if method not in METHODS:
        raise ParameterError(f"method={method!r} is not allowed; choose one of: "
                             f"{', '.join(map(repr, METHODS))}")
    w2, poly, eps = _prepare(net, plane, polygon, tol)
    if method == "polygons":
        return len(activation_regions(w2, None, poly, tol=tol))
    V = poly[None].copy()
    cnt = np.array([len(poly)])
    W1, b1 = w2[0]
    G = np.concatenate([W1, b1[:, None]], axis=1)[None]
    for W, b in w2[1:-1]:
        V, cnt, parent, bits = _split_layer(V, cnt, G, eps)
        G = _next_maps(G[parent], bits, W, b)
    return int(_arrangement_counts(V, cnt, G, eps).sum())


# --------------------------------------------------------------------------------------------
# References: brute-force grid, naive per-polygon loop
# --------------------------------------------------------------------------------------------
def patterns_at(net: Any, X: np.ndarray) -> np.ndarray:
    """Activation patterns (n, #hidden) of inputs X (n, d_in), float64; ReLU(0) counts as off."""
    w = as_weights(net)
    h = np.asarray(X, dtype=np.float64)
    out = []
    for W, b in w[:-1]:
        z = h @ W.T + b
        out.append(z > 0)
        h = np.maximum(z, 0.0)
    return np.concatenate(out, axis=1)


def forward(net: Any, X: np.ndarray) -> np.ndarray:
    """Network outputs (n, d_out) in float64."""
    w = as_weights(net)
    h = np.asarray(X, dtype=np.float64)
    for W, b in w[:-1]:
        h = np.maximum(h @ W.T + b, 0.0)
    W, b = w[-1]
    return h @ W.T + b


def grid_count(net: Any, plane: Plane | None = None, polygon: np.ndarray | None = None,
               n: int = 100) -> int:
    """Distinct activation patterns at the centres of an n×n grid over the polygon's bounding
    box (points inside the polygon only): a lower bound of the exact count."""
    n = check_positive_int("n", n)
    w2, poly, _ = _prepare(net, plane, polygon, 1e-9)
    lo, hi = poly.min(0), poly.max(0)
    g = (np.arange(n) + 0.5) / n
    U = np.stack(np.meshgrid(lo[0] + g * (hi[0] - lo[0]), lo[1] + g * (hi[1] - lo[1])), -1)
    U = U.reshape(-1, 2)
    e = np.roll(poly, -1, axis=0) - poly
    cr = (e[None, :, 0] * (U[:, None, 1] - poly[None, :, 1])
          - e[None, :, 1] * (U[:, None, 0] - poly[None, :, 0]))
    U = U[(cr >= 0).all(1)]
    pats = patterns_at(w2, U)
    return int(len(np.unique(np.packbits(pats, axis=1), axis=0)))


def grid_vs_exact(counts: np.ndarray, grid_counts: np.ndarray) -> dict[str, Any]:
    """Brute-force grids (:func:`grid_count`) against the exact counts (A,) for nested grids
    (A, G), coarse to fine: ``found`` (A, G), the fraction of the exact count each grid finds;
    ``below``, no grid above the exact count; ``refines``, every refinement finds strictly more
    patterns until a grid finds them all."""
    exact = np.asarray(counts)
    grids = np.asarray(grid_counts)
    if grids.ndim != 2 or grids.shape[0] != exact.shape[0]:
        raise ParameterError(f"grid_counts must have shape (len(counts), n_grids), "
                             f"got {grids.shape}")
    refines = (np.diff(grids, axis=1) > 0) | (grids[:, :-1] == exact[:, None])
    return {"found": grids / exact[:, None], "below": bool(np.all(grids <= exact[:, None])),
            "refines": bool(np.all(refines))}


def slice_demo(points: np.ndarray, archs: Sequence[Sequence[int]], seeds: Sequence[int],
               grid_sizes: Sequence[int], bias_var: float = 1e-6) -> dict[str, np.ndarray]:
    """One He-initialised network per architecture (:func:`he_mlp`, ``seeds[k]``, one output) on
    the plane through the three ``points``: its activation regions (``V{k}``, ``n{k}``, total
    area ``area{k}``), the distinct grid patterns for each of ``grid_sizes`` (``grid{k}``,
    :func:`grid_count`), and the exact counts and grid counts of all architectures stacked
    (``counts`` (A,), ``grid_counts`` (A, len(grid_sizes)))."""
    points = np.asarray(points, dtype=np.float64)
    if len(seeds) != len(archs):
        raise ParameterError(f"one seed per architecture: {len(seeds)} seeds for {len(archs)} "
                             "architectures")
    plane = plane_through(points)
    out: dict[str, np.ndarray] = {}
    for k, (w, s) in enumerate(zip(archs, seeds, strict=True)):
        net = he_mlp(points.shape[1], w, 1, seed=int(s), bias_var=bias_var)
        regs = activation_regions(net, plane)
        out[f"V{k}"], out[f"n{k}"] = regs.vertices, regs.n_vertices
        out[f"grid{k}"] = np.array([grid_count(net, plane, n=g) for g in grid_sizes])
        out[f"area{k}"] = regs.areas.sum()
    out["counts"] = np.array([len(out[f"n{k}"]) for k in range(len(archs))])
    out["grid_counts"] = np.array([out[f"grid{k}"] for k in range(len(archs))])
    return out


def activation_regions_naive(net: Any, plane: Plane | None = None,
                             polygon: np.ndarray | None = None, *, tol: float = 1e-9,
                             count_only: bool = True):
    """Reference implementation: a Python loop over polygons and neurons (one numpy clip per
    polygon per neuron).  Returns the number of regions (``count_only``) or the list of
    (polygon, pattern) pairs.  Used by the benchmark and the tests."""
    w2, poly, eps = _prepare(net, plane, polygon, tol)
    regs = [(poly, np.zeros(0, dtype=bool), np.concatenate([w2[0][0], w2[0][1][:, None]], 1))]
    for W, b in w2[1:]:
        new = []
        for P, pat, G in regs:
            pieces = [(P, [])]
            for j in range(G.shape[0]):
                a, c = G[j, :2], G[j, 2]
                na = float(np.hypot(*a))
                nxt = []
                for Q, bits in pieces:
                    d = ((Q @ a + c) / na if na > 0
                         else np.full(len(Q), np.sign(c) * np.inf if c else 0.0))
                    if (d > eps).any() and (d < -eps).any():
                        (Vp, np_), (Vq, nq) = _clip(Q[None], np.array([len(Q)]), d[None], eps)
                        nxt.append((Vp[0, : np_[0]], bits + [True]))
                        nxt.append((Vq[0, : nq[0]], bits + [False]))
                    else:
                        on = (d > eps).any() or (not (d < -eps).any() and d.mean() > 0)
                        nxt.append((Q, bits + [bool(on)]))
                pieces = nxt
            for Q, bits in pieces:
                m = np.array(bits)
                Gn = W @ (G * m[:, None])
                Gn[:, 2] += b
                new.append((Q, np.concatenate([pat, m]), Gn))
        regs = new
    if count_only:
        return len(regs)
    return [(P, pat) for P, pat, _ in regs]


# --------------------------------------------------------------------------------------------
# Linear regions
# --------------------------------------------------------------------------------------------
def _shared_edge_length(P: np.ndarray, Q: np.ndarray, tol: float) -> float:
    """Length of the longest segment common to the boundaries of convex polygons P and Q."""
    best = 0.0
    Pn, Qn = np.roll(P, -1, axis=0), np.roll(Q, -1, axis=0)
    for a, b in zip(P, Pn, strict=True):
        e = b - a
        length = float(np.hypot(*e))
        if length <= tol:
            continue
        u = e / length
        nrm = np.array([-u[1], u[0]])
        for c, d in zip(Q, Qn, strict=True):
            if abs((c - a) @ nrm) > tol or abs((d - a) @ nrm) > tol:
                continue
            t0, t1 = sorted(((c - a) @ u, (d - a) @ u))
            best = max(best, min(length, t1) - max(0.0, t0))
    return best


def linear_regions(regions: Regions, *, rtol: float = 1e-9, tol: float = 1e-9) -> np.ndarray:
    """Labels (P,) grouping activation regions into linear regions: connected unions of
    activation regions sharing an edge of positive length and the same affine map (relative
    tolerance ``rtol`` on the map's coefficients).

    Neighbours are looked for among regions whose patterns differ in one neuron (the generic
    case: crossing the zero line of one neuron flips that neuron only), then checked
    geometrically."""
    P = len(regions)
    pats = regions.patterns
    N = pats.shape[1]
    key = {row.tobytes(): i for i, row in enumerate(np.packbits(pats, axis=1))}
    parent = np.arange(P)

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    maps = regions.maps.reshape(P, -1)
    scale = np.abs(maps).max() if P else 1.0
    span = float(np.ptp(regions.vertices[0, : regions.n_vertices[0]], axis=0).max()) if P else 1.0
    diam = max(span, float(np.abs(regions.vertices).max()) * 2) if P else 1.0
    for j in range(N):
        flipped = pats.copy()
        flipped[:, j] = ~flipped[:, j]
        packed = np.packbits(flipped, axis=1)
        for i in np.flatnonzero(pats[:, j]):  # each unordered pair once
            k = key.get(packed[i].tobytes())
            if k is None:
                continue
            if np.max(np.abs(maps[i] - maps[k])) > rtol * max(scale, 1e-300):
                continue
            if _shared_edge_length(regions.polygon(i), regions.polygon(k), tol * diam) > tol * diam:
                ri, rk = find(i), find(k)
                if ri != rk:
                    parent[max(ri, rk)] = min(ri, rk)
    roots = np.array([find(i) for i in range(P)])
    _, labels = np.unique(roots, return_inverse=True)
    return labels


def convex_deficit(regions: Regions, members: np.ndarray) -> float:
    """1 − area(union of the member polygons) / area(convex hull of their vertices): zero for a
    convex union, positive for a non-convex one."""
    pts = np.concatenate([regions.polygon(i) for i in members])
    hull = ConvexHull(pts).volume
    return float(1.0 - regions.areas[members].sum() / hull)


# --------------------------------------------------------------------------------------------
# Hanin & Rolnick's laws and Montúfar et al.'s maximum: counts, exponents, densities
# --------------------------------------------------------------------------------------------
def montufar_max(widths: Sequence[int], n_in: int = 2) -> float:
    """Montúfar et al. (2014), Thm. 4: a ReLU network with hidden ``widths`` (each >= n_in)
    and ``n_in`` inputs can have at least (Π_{l<L} ⌊n_l/n_in⌋^{n_in}) Σ_{j<=n_in} C(n_L, j)
    linear regions — exponential in depth.  Returned as a float."""
    widths = check_widths(widths, min_len=1)
    prod = 1.0
    for w in widths[:-1]:
        prod *= float(w // n_in) ** n_in
    return prod * sum(comb(widths[-1], j) for j in range(n_in + 1))


def montufar_exponent(neurons: Sequence[int], depth: int, n_in: int = 2) -> float:
    """Log–log slope, least squares over ``neurons`` (total hidden neurons N, split evenly over
    ``depth`` layers), of :func:`montufar_max` — the growth exponent a count would show if it
    followed the maximum that depth allows (Montúfar et al. 2014), the alternative to Hanin &
    Rolnick's N^n_in."""
    N = np.asarray(neurons, dtype=float)
    if len(np.unique(N)) < 2:
        raise ParameterError("neurons must hold at least two distinct numbers of neurons")
    m = [montufar_max([int(n) // int(depth)] * int(depth), n_in=n_in) for n in N]
    return float(np.polyfit(np.log(N), np.log(m), 1)[0])


def growth_exponent(neurons: Sequence[int], counts: np.ndarray) -> Estimate:
    """Exponent b of the growth ``count ∝ N^b`` of region counts with the number of neurons N.

    ``counts`` has shape (len(neurons), n_nets): one count per random network (and slice).  The
    fit is least squares of ``log count`` on ``log N`` over *every* network, so b is the slope of
    the typical (geometric-mean) count; its standard error comes from the scatter of the networks
    about the line, with ``dof = points − 2`` degrees of freedom (Student's t).  Returns the
    slope as an :class:`~layerwise.stats.Estimate` (``n``: the number of points fitted)."""
    N = np.asarray([check_positive_int("neurons", n) for n in neurons], dtype=float)
    c = np.asarray(counts, dtype=float)
    if c.ndim != 2 or c.shape[0] != len(N):
        raise ParameterError(f"counts must have shape (len(neurons)={len(N)}, n_nets), "
                             f"got {c.shape}")
    if len(np.unique(N)) < 2 or c.size < 3:
        raise ParameterError("a growth exponent with an error needs >= 2 distinct N and "
                             ">= 3 counts")
    if np.any(c < 1):
        raise ParameterError("region counts must be >= 1 (a slice has at least one region)")
    x = np.repeat(np.log(N), c.shape[1])
    fit = linear_fit(x, np.log(c).ravel())
    return Estimate(float(fit["slope"]), float(fit["slope_se"]), int(c.size - 2), int(c.size))


def unflatten(flat: np.ndarray, dims: Sequence[int]) -> Weights:
    """Inverse of the flattening used by :func:`train_counts` for layer
    sizes ``dims``."""
    out, k = [], 0
    for a, b in zip(dims[:-1], dims[1:], strict=True):
        W = flat[k : k + a * b].reshape(b, a)
        k += a * b
        out.append((W, flat[k : k + b].copy()))
        k += b
    return out


def sensitivity_by_region(net: Any, plane: Plane, regions: Regions, *, output: int = 0,
                          per_region: int = 3, check: int = 50, seed: int = 0,
                          chunk: int = 256) -> dict[str, np.ndarray]:
    """Tangent sample sensitivity restricted to the slice (∂²f/∂θ∂(u, v), #params × 2, by
    :func:`layerwise.networks.tangent_sensitivity` in float64) on every activation region
    (Daróczy, Lemma 3.1).

    Returns its Frobenius norm at each region's centroid, and for the ``check`` largest regions
    the largest relative difference between ``per_region`` random interior points of the same
    region (zero up to rounding if the lemma holds) and between the centroids of those regions
    and their nearest other checked region."""
    rng = np.random.default_rng(seed)
    params = from_pairs(as_weights(net))  # float64

    def tangent_sensitivity(x: np.ndarray) -> np.ndarray:
        return net_tangent_sensitivity(params, x, directions=plane.basis, output=output).numpy()

    C = regions.centroids()
    norms = np.empty(len(regions))
    for s in range(0, len(C), chunk):
        S = tangent_sensitivity(plane.to_input(C[s : s + chunk]))
        norms[s : s + chunk] = np.sqrt((S**2).sum((1, 2)))
    big = np.argsort(regions.areas)[::-1][: min(check, len(regions))]
    within = np.empty(len(big))
    ref = []
    for k, i in enumerate(big):
        P = regions.polygon(i)
        w = rng.dirichlet(np.ones(len(P)), size=per_region)
        S = tangent_sensitivity(plane.to_input(np.vstack([C[i], w @ P])))
        within[k] = np.abs(S[1:] - S[0]).max() / np.abs(S[0]).max()
        ref.append(S[0])
    ref = np.array(ref)
    between = np.empty(len(big))
    for k in range(len(big)):
        d = np.abs(ref - ref[k]).reshape(len(big), -1).max(1) / np.abs(ref[k]).max()
        d[k] = np.inf
        between[k] = d.min() if len(big) > 1 else np.nan
    return {"norm": norms, "checked": big, "within": within, "between": between}


def largest_linear_region(regions: Regions, labels: np.ndarray) -> tuple[np.ndarray, float]:
    """Members (indices of activation regions) of the largest-area linear region made of more
    than one activation region (``labels`` of :func:`linear_regions`), and its
    :func:`convex_deficit`."""
    labels = np.asarray(labels)
    sizes = np.bincount(labels)
    if not np.any(sizes > 1):
        raise ParameterError("no linear region is made of more than one activation region")
    big = int(np.argmax(np.bincount(labels, weights=regions.areas) * (sizes > 1)))
    members = np.flatnonzero(labels == big)
    return members, convex_deficit(regions, members)


# --------------------------------------------------------------------------------------------
# Hanin & Rolnick at initialisation: closed forms in the zero-bias limit, lines and distances
# --------------------------------------------------------------------------------------------
def _solid_angle_triangle(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
    """Solid angle of the triangle abc seen from the origin (Van Oosterom & Strackee 1983)."""
    na, nb, nc = (float(np.linalg.norm(v)) for v in (a, b, c))
    num = abs(float(a @ np.cross(b, c)))
    den = na * nb * nc + (a @ b) * nc + (a @ c) * nb + (b @ c) * na
    return float(2 * np.arctan2(num, den))


def slice_angles(plane: Plane) -> tuple[float, float]:
    """The plane's square seen from the input origin: its solid angle Ω (steradians) and the
    angle Φ subtended by its perimeter (the sum of its four edges' angles), computed in the 3-D
    span of the origin and the plane.  The plane must not pass through the origin."""
    o, B = plane.origin, plane.basis
    c = B.T @ o
    height = float(np.linalg.norm(o - B @ c))  # distance of the plane from the origin
    if height <= 1e-12 * max(1.0, float(np.linalg.norm(o))):
        raise ParameterError("plane passes through the input origin: its solid angle is not "
                             "defined")
    pts = np.array([[height, *(c + s)] for s in plane.square()])
    omega = (_solid_angle_triangle(pts[0], pts[1], pts[2])
             + _solid_angle_triangle(pts[0], pts[2], pts[3]))
    u = pts / np.linalg.norm(pts, axis=1, keepdims=True)
    phi = float(sum(np.arccos(np.clip(u[i] @ u[(i + 1) % 4], -1, 1)) for i in range(4)))
    return omega, phi


def one_layer_expected_count(n: Any, omega: Any, perimeter: Any) -> np.ndarray:
    """Expected number of activation regions in a convex window of a 2-D slice for one hidden layer
    of ``n`` ReLUs with isotropic Gaussian weights and zero biases:
    ``1 + n Φ/(2π) + n(n − 1)/2 · Ω/(2π)``.

    Each neuron's boundary is a hyperplane through the origin with a uniformly random normal; in
    the 3-D span of the origin and the slice it is a uniform great circle, which meets a convex
    spherical window of perimeter Φ with probability Φ/(2π) (Crofton), and two of them meet inside
    a window of solid angle Ω with probability Ω/(2π).  Each chord adds one piece and each interior
    crossing one more (Euler).  It is the sharp, one-layer form of Hanin & Rolnick's (2019, NeurIPS)
    Thm. 5 bound (T·N)²/2 per unit area: the density per unit area is N²/2 · Ω/(2π·area) + O(N)."""
    n = np.asarray(n, dtype=float)
    return (1 + n * np.asarray(perimeter) / (2 * np.pi)
            + n * (n - 1) / 2 * np.asarray(omega) / (2 * np.pi))


def density_by_depth(counts: np.ndarray, omega: np.ndarray, perimeter: np.ndarray,
                     neurons: Sequence[int]) -> dict[str, Any]:
    """Region counts (len(neurons), len(depths), n_nets) over the one-layer closed form
    (:func:`one_layer_expected_count`) of the same N and slice: ``ratio`` (N, depths, nets) per
    network, and at each (N, depth) the ratio of means over the slices (paired) with its jackknife
    standard error over slices, ``mean`` and ``se`` (N, depths); ``dof`` = n_nets − 1 (None for one
    slice)."""
    c = np.asarray(counts, dtype=float)
    N = np.asarray(neurons, dtype=float)
    if c.ndim != 3 or c.shape[0] != len(N) or c.shape[2] != len(omega):
        raise ParameterError(f"counts must have shape (len(neurons), n_depths, len(omega)), "
                             f"got {c.shape}")
    E = one_layer_expected_count(N[:, None], np.asarray(omega)[None],
                                 np.asarray(perimeter)[None])  # (N, nets)
    ratio = c / E[:, None, :]
    mean = c.mean(2) / E.mean(1)[:, None]
    se = np.zeros_like(mean)
    for i in range(c.shape[0]):
        for j in range(c.shape[1]):
            if c.shape[2] > 1:
                _, se[i, j] = jackknife_se(lambda s: s[:, 0].mean() / s[:, 1].mean(),
                                           np.stack([c[i, j], E[i]], axis=1))
    return {"ratio": ratio, "mean": mean, "se": se,
            "dof": c.shape[2] - 1 if c.shape[2] > 1 else None}


def line_breakpoints(net: Any, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Exact positions t ∈ (0, 1), sorted, where the segment x(t) = a + t (b − a) crosses the
    boundary of an activation region (a neuron's pre-activation changes sign).

    Layer by layer, every pre-activation is affine in t on each interval cut by the earlier
    layers, so each neuron's zero in an interval is one root; the roots split the intervals.  Their
    number is the number of region boundaries along the segment (Hanin & Rolnick 2019, ICML)."""
    w = as_weights(net)
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    if a.shape != b.shape or a.shape[0] != w[0][0].shape[1]:
        raise ParameterError(f"a and b must be inputs of dimension {w[0][0].shape[1]}")
    W1, b1 = w[0]
    alpha, beta = (W1 @ (b - a))[None], (W1 @ a + b1)[None]  # pre-activation = alpha t + beta
    edges = np.array([0.0, 1.0])
    for W, bb in w[1:]:
        with np.errstate(divide="ignore", invalid="ignore"):
            r = -beta / alpha
        inside = (r > edges[:-1, None]) & (r < edges[1:, None])
        new = np.unique(np.concatenate([edges, r[inside]]))
        mid = 0.5 * (new[:-1] + new[1:])
        parent = np.searchsorted(edges, mid) - 1
        on = (alpha[parent] * mid[:, None] + beta[parent]) > 0
        alpha, beta = (alpha[parent] * on) @ W.T, (beta[parent] * on) @ W.T + bb
        edges = new
    return edges[1:-1]


def boundary_distance(net: Any, X: np.ndarray) -> np.ndarray:
    """Euclidean distance in input space from each row of X to the boundary of its activation
    region: ``min_z |z(x)| / ‖∇z(x)‖`` over the hidden neurons z.

    Exact, not a linearisation: an activation region is the polytope on which every neuron's
    local affine pre-activation has the region's sign (Hanin & Rolnick 2019, NeurIPS, §2), and the
    distance from an interior point to a polytope's boundary is its distance to the nearest facet
    hyperplane.  Neurons constant on the region (zero gradient) have no facet."""
    w = as_weights(net)
    h = np.asarray(X, dtype=np.float64)
    if h.ndim != 2 or h.shape[1] != w[0][0].shape[1]:
        raise ParameterError(f"X must have shape (n, {w[0][0].shape[1]})")
    J = np.broadcast_to(np.eye(h.shape[1]), (len(h), h.shape[1], h.shape[1]))
    best = np.full(len(h), np.inf)
    for W, b in w[:-1]:
        z = h @ W.T + b
        G = np.einsum("kj,njd->nkd", W, J)
        g = np.linalg.norm(G, axis=2)
        with np.errstate(divide="ignore"):
            to_facet = np.where(g > 0, np.abs(z) / np.where(g > 0, g, 1.0), np.inf)
            best = np.minimum(best, to_facet.min(1))
        on = z > 0
        h, J = z * on, G * on[..., None]
    return best


def one_layer_line_crossings(n: Any, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Expected boundary crossings of the segment a→b for one layer of ``n`` ReLUs with isotropic
    Gaussian weights and zero biases: ``n θ/π``, θ the angle between a and b seen from the origin
    (a random hyperplane through the origin separates a and b with probability θ/π)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    cos = (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    return np.asarray(n, dtype=float) * np.arccos(np.clip(cos, -1, 1)) / np.pi


def one_layer_distance(n: int, norm_x: Any, n_in: int) -> np.ndarray:
    """Expected distance from a point x to the nearest boundary for one layer of ``n`` ReLUs with
    isotropic Gaussian weights (``n_in`` inputs) and zero biases:
    ``|x| ∫₀¹ (1 − I_{c²}(1/2, (n_in − 1)/2))ⁿ dc``, since neuron j's hyperplane lies at distance
    |x| |cos θ_j| with cos² θ_j ~ Beta(1/2, (n_in − 1)/2) independently; ≈ |x| √(π/(2 n_in)) / n
    for large n — the 1/#neurons law of Hanin & Rolnick (2019, ICML)."""
    n, n_in = check_positive_int("n", n), check_positive_int("n_in", n_in)
    if n_in < 2:
        raise ParameterError("n_in must be >= 2")
    val = quad(lambda c: (1 - betainc(0.5, (n_in - 1) / 2, c * c)) ** n, 0, 1, limit=200,
               points=[min(1.0, 5 / (n * np.sqrt(n_in)))])[0]
    return np.asarray(norm_x, dtype=float) * val


def pair_exponent(neurons: Sequence[int], values: np.ndarray) -> Estimate:
    """Exponent b of ``value ∝ N^b`` between the smallest and the largest N:
    ``log(mean v(N_max) / mean v(N_min)) / log(N_max / N_min)``, from ``values`` (len(neurons),
    n) paired along the last axis (the same segment or slice at every N); jackknife standard error
    over the n pairs, ``dof`` = n − 1, as an :class:`~layerwise.stats.Estimate`."""
    N = np.asarray([check_positive_int("neurons", n) for n in neurons], dtype=float)
    v = np.asarray(values, dtype=float)
    if v.ndim != 2 or v.shape[0] != len(N) or v.shape[1] < 2 or N[-1] == N[0]:
        raise ParameterError(f"values must have shape (len(neurons), n >= 2) with distinct end "
                             f"N, got {v.shape}")
    pairs = np.stack([v[-1], v[0]], axis=1)
    if np.any(pairs.mean(0) <= 0):
        raise ParameterError("values must have positive means at the smallest and largest N")
    def exponent(sample: np.ndarray) -> float:
        return np.log(sample[:, 0].mean() / sample[:, 1].mean()) / np.log(N[-1] / N[0])

    _, se = jackknife_se(exponent, pairs)
    return Estimate(float(exponent(pairs)), float(se), int(len(pairs) - 1), int(len(pairs)))




def wide_window(neurons: Sequence[int], depth: int, min_width: int) -> list[int]:
    """Indices of the ``neurons`` (total N, split evenly over ``depth`` layers) whose every layer
    has at least ``min_width`` units, N/depth ≥ min_width: the window on which a law stated for
    wide layers is graded."""
    depth = check_positive_int("depth", depth)
    min_width = check_positive_int("min_width", min_width)
    return [k for k, n in enumerate(neurons) if int(n) // depth >= min_width]


def local_exponents(neurons: Sequence[int], values: np.ndarray) -> list[Estimate]:
    """The exponent b of ``value ∝ N^b`` between each pair of consecutive ``neurons``
    (:func:`pair_exponent` on ``values[k:k+2]``, (len(neurons), n) paired along the last axis):
    how the exponent drifts as the layers widen."""
    v = np.asarray(values, dtype=float)
    return [pair_exponent(neurons[k:k + 2], v[k:k + 2]) for k in range(len(neurons) - 1)]


def exponent_control(neurons: Sequence[int], values: np.ndarray, exponent: float, *, tol: float,
                     n_draws: int, seed: int, confidence: float = 0.99) -> dict[str, Any]:
    """Estimator control of :func:`pair_exponent` under a claim's own design (the same two end
    N, the same number of paired segments): ``n_draws`` synthetic data sets
    log v[k, i] = log v[0, i] + b·log(N_k/N_0) + e_{k,i} with the known ``exponent`` b, each
    segment's level taken from ``values`` (len(neurons), n) at the smallest N and e ~ N(0, s²),
    s² = var(log v[−1] − log v[0]) / 2 from the measured values.  Returns the ``coverage`` of the
    ``confidence`` t intervals, the ``bias`` of the mean estimate, and ``recovers``: coverage at
    least ``confidence`` − 0.04 and |bias| ≤ ``tol``/5 (a fifth of the claim's margin)."""
    from .stats import t_interval

    N = np.asarray(neurons, dtype=float)[[0, -1]]
    v = np.asarray(values, dtype=float)[[0, -1]]
    n_draws = check_positive_int("n_draws", n_draws)
    sd = float(np.sqrt(np.var(np.log(v[1] / v[0]), ddof=1) / 2))
    rng = np.random.default_rng(seed)
    level = np.log(v[0])
    hits, got = 0, []
    for _ in range(n_draws):
        logv = level + np.array([[0.0], [exponent * np.log(N[1] / N[0])]])
        e = pair_exponent([int(N[0]), int(N[1])], np.exp(logv + rng.normal(0, sd, logv.shape)))
        lo, hi = t_interval(e.mean, e.se, e.dof, confidence)
        hits += int(lo <= exponent <= hi)
        got.append(e.mean)
    coverage, bias = hits / n_draws, float(np.mean(got) - exponent)
    return {"coverage": coverage, "bias": bias, "sd": sd,
            "recovers": bool(coverage >= confidence - 0.04 and abs(bias) <= tol / 5)}


# --------------------------------------------------------------------------------------------
# Through training: the count at checkpoints (Hanin & Rolnick 2019, §5)
# --------------------------------------------------------------------------------------------
def train_counts(X: np.ndarray, y: np.ndarray, widths: Sequence[int], *, epochs: int,
                 n_checkpoints: int, label_noise: float, seed: int, lr: float = 1e-3,
                 batch: int = 64, bias_var: float = 1e-6,
                 n_lines: int = 0) -> dict[str, np.ndarray]:
    """Train a He-initialised ReLU MLP (:func:`he_mlp`) on (X, y) with Adam and cross-entropy
    (:func:`layerwise.networks.train`, mini-batches of a fresh permutation each epoch), a fraction
    ``label_noise`` of the labels replaced by uniformly random ones, and count its activation
    regions on the plane through three training inputs at ``n_checkpoints`` + 1 epochs
    (Hanin & Rolnick 2019, §5).  Returns epochs, counts, train accuracy (on the noisy labels),
    loss, and the final weights flattened with their plane points.  With ``n_lines`` > 0 it also
    records, at every checkpoint, the boundary crossings of ``n_lines`` segments between pairs of
    training inputs (``crossings`` (T, n_lines), :func:`line_breakpoints`) and the distance of
    their 2·``n_lines`` end points to the nearest region boundary (``dist`` (T, 2 n_lines),
    :func:`boundary_distance`); the pairs come from their own stream, so the other draws are
    those of a run without them."""
    label_noise = check_fraction("label_noise", label_noise)
    epochs = check_positive_int("epochs", epochs)
    n_checkpoints = check_positive_int("n_checkpoints", n_checkpoints)
    n_lines = int(n_lines)
    if n_lines < 0:
        raise ParameterError(f"n_lines={n_lines!r} must be >= 0")
    # slice, initial network and batch order depend on ``seed`` only, so runs with different
    # label noise and the same seed are paired; the noisy labels use their own stream
    rng = np.random.default_rng(seed)
    n_cls = int(y.max()) + 1
    triple = rng.choice(len(X), 3, replace=False)
    plane = plane_through(X[triple])
    net = he_mlp(X.shape[1], widths, n_cls, seed=int(rng.integers(2**31)), bias_var=bias_var)
    g = torch.Generator().manual_seed(int(rng.integers(2**31)))
    lrng = np.random.default_rng([seed, 1])
    y = y.copy()
    noisy = lrng.random(len(y)) < label_noise
    y[noisy] = lrng.integers(0, n_cls, noisy.sum())
    Xt = torch.tensor(X, dtype=torch.float32)
    yt = torch.tensor(y)
    ck = np.unique(np.round(np.linspace(0, epochs, n_checkpoints + 1)).astype(int))
    rec: dict[str, list] = {"epoch": [], "count": [], "acc": [], "loss": []}
    if n_lines:
        pairs = np.random.default_rng([seed, 2]).choice(len(X), (n_lines, 2), replace=True)
        pairs = pairs[pairs[:, 0] != pairs[:, 1]]
        rec["crossings"], rec["dist"] = [], []
    per_epoch = -(-len(Xt) // batch)  # steps per pass

    def record(t: int, _loss: Any) -> None:  # after t steps: at the checkpoints' epochs
        if t % per_epoch or t // per_epoch not in ck:
            return
        with torch.no_grad():
            out = net_forward(net, Xt)
            rec["loss"].append(float(torch.nn.functional.cross_entropy(out, yt)))
            rec["acc"].append(float((out.argmax(1) == yt).float().mean()))
        rec["epoch"].append(t // per_epoch)
        rec["count"].append(count_regions(net, plane))
        if n_lines:
            w = as_weights(net)
            rec["crossings"].append([len(line_breakpoints(w, X[i], X[j])) for i, j in pairs])
            rec["dist"].append(boundary_distance(w, X[pairs.ravel()]))

    train(net, lambda idx: torch.nn.functional.cross_entropy(net_forward(net, Xt[idx]), yt[idx]),
          lr=lr, optimizer="adam", sampling="epochs", epochs=epochs, n=len(Xt), batch=batch,
          generator=g, callback=record)
    flat = np.concatenate([a.ravel() for W, b in as_weights(net) for a in (W, b)])
    return {**{k: np.asarray(v) for k, v in rec.items()}, "weights": flat, "triple": triple}


def train_step_counts(X: np.ndarray, y: np.ndarray, widths: Sequence[int], *,
                      slice_points: np.ndarray, steps: Sequence[int], seed: int,
                      lr: float = 1e-3, batch: int = 64,
                      bias_var: float = 1e-6) -> dict[str, np.ndarray]:
    """K = len(slice_points) He-initialised ReLU MLPs (:func:`he_mlp`, ``widths`` hidden, one
    output per class) trained at once and independently with Adam (Kingma & Ba 2015, per
    coordinate, so the networks do not interact) on the mean cross-entropy of mini-batches of
    ``batch`` rows of (X, y), each network on its own fresh random permutation per pass
    (:func:`layerwise.networks.train`, ``sampling="permutations"``); the activation regions of
    network k on the planes through each triple ``slice_points[k, s]`` (shape (K, S, 3, d)) are
    counted after every step in ``steps`` (step 0, the initialisation, is always counted).
    Returns ``steps`` (T,), ``count`` (K, S, T) and the final training accuracy ``acc`` (K,)."""
    pts = np.asarray(slice_points, dtype=np.float64)
    if pts.ndim != 4 or pts.shape[2:] != (3, X.shape[1]):
        raise ParameterError(f"slice_points must have shape (nets, slices, 3, {X.shape[1]}), "
                             f"got {pts.shape}")
    ck = np.unique(np.concatenate([[0], [check_positive_int("steps", s) for s in steps]]))
    batch, lr = check_positive_int("batch", batch), check_positive("lr", lr)
    K, n_cls = len(pts), int(y.max()) + 1
    rng = np.random.default_rng(seed)  # the batch order's seed, then one per network
    gen = torch.Generator().manual_seed(int(rng.integers(2**31)))
    nets = [he_mlp(X.shape[1], widths, n_cls, seed=int(s), bias_var=bias_var)
            for s in rng.integers(2**31, size=K)]
    net = {k: torch.stack([n[k] for n in nets]) for k in nets[0]}
    planes = [[plane_through(p) for p in row] for row in pts]
    Xt, yt = torch.tensor(X, dtype=torch.float32), torch.tensor(y)
    counts = np.zeros((K, pts.shape[1], len(ck)), dtype=np.int64)

    def record(t: int, _loss: Any) -> None:  # after t steps: at the checkpoints
        if t not in ck:
            return
        layers = [(net[f"W{l}"].detach().double().numpy(), net[f"b{l}"].detach().double().numpy())
                  for l in range(1, len(widths) + 2)]
        for k in range(K):
            w = [(W[k], b[k]) for W, b in layers]
            counts[k, :, int(np.searchsorted(ck, t))] = [count_regions(w, p) for p in planes[k]]

    def loss(idx: torch.Tensor) -> torch.Tensor:  # idx (K, batch): each network its own rows
        out = net_forward(net, Xt[idx])  # (K, batch, classes)
        return torch.nn.functional.cross_entropy(out.reshape(-1, n_cls), yt[idx].reshape(-1),
                                                 reduction="sum") / batch

    train(net, loss, lr=lr, optimizer="adam", sampling="permutations", steps=int(ck[-1]),
          n=len(X), batch=batch, n_nets=K, generator=gen, callback=record)
    with torch.no_grad():
        acc = (net_forward(net, Xt).argmax(-1) == yt).double().mean(1).numpy()
    return {"steps": ck, "count": counts, "acc": acc}


# --------------------------------------------------------------------------------------------
# Linear regions that are not convex; the tangent sensitivity on a slice
# --------------------------------------------------------------------------------------------
def bottleneck_demo(points: np.ndarray, widths: Sequence[int], seeds: Sequence[int],
                    min_deficit: float = 0.01) -> dict[str, Any]:
    """A He-initialised network with hidden ``widths`` (one output) on the plane through the three
    ``points`` whose largest merged linear region (:func:`largest_linear_region`) is visibly not
    convex (convex ``deficit`` ≥ ``min_deficit``): the networks from ``seeds`` are tried in order,
    a deterministic search for an event that a single draw can miss (no linear region made of
    several activation regions, or a convex one).  Returns the activation regions (``V``, ``n``,
    ``areas``, ``patterns``, ``maps``), their linear-region ``labels`` (:func:`linear_regions`),
    ``members`` and ``deficit`` of the largest merged linear region, ``found`` (bool), ``tries``
    (networks tried) and ``seed`` (the one shown).  With none found among ``seeds``, the last
    network is returned with ``found`` False, ``members`` empty and ``deficit`` NaN when none of its
    linear regions merges."""
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ParameterError("seeds must hold at least one seed")
    points = np.asarray(points, dtype=np.float64)
    plane = plane_through(points)
    for tries, seed in enumerate(seeds, start=1):  # noqa: B007 - tries is returned
        regs = activation_regions(he_mlp(points.shape[1], widths, 1, seed=seed), plane)
        lab = linear_regions(regs)
        members, deficit = (largest_linear_region(regs, lab) if np.any(np.bincount(lab) > 1)
                            else (np.zeros(0, dtype=np.int64), float("nan")))
        found = bool(deficit >= min_deficit)
        if found:
            break
    return {"V": regs.vertices, "n": regs.n_vertices, "areas": regs.areas, "labels": lab,
            "patterns": regs.patterns, "maps": regs.maps, "members": members, "deficit": deficit,
            "found": np.array(found), "tries": np.array(tries), "seed": np.array(seed)}


def sensitivity_on_slice(weights: np.ndarray, dims: Sequence[int], points: np.ndarray, *,
                         output: int,
                         check: int, seed: int, mc_unit: np.ndarray) -> dict[str, np.ndarray]:
    """Tangent sample sensitivity of the network ``unflatten(weights, dims)`` on the plane through
    the three ``points``: :func:`sensitivity_by_region` on its activation regions (``norm``,
    ``checked``, ``within``, ``between``), the regions (``V``, ``n``, ``areas``), and
    ``mc_sq``, ‖Sens‖²_F at uniform points of the square, ``mc_unit`` (n, 2) being uniform draws
    on [0, 1) mapped to [−h, h) exactly as ``Generator.uniform(−h, h)`` maps them."""
    w = unflatten(np.asarray(weights, dtype=np.float64), dims)
    plane = plane_through(points)
    regs = activation_regions(w, plane)
    out = sensitivity_by_region(w, plane, regs, output=output, check=check, seed=seed)
    h = plane.half_width
    u = -h + (h - -h) * np.asarray(mc_unit, dtype=np.float64)
    S = net_tangent_sensitivity(from_pairs(w), plane.to_input(u), directions=plane.basis,
                                output=output).numpy()
    return {**out, "areas": regs.areas, "mc_sq": (S**2).sum((1, 2)), "V": regs.vertices,
            "n": regs.n_vertices}


def sensitivity_summary(sens: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """The numbers Chapter 6 reads off :func:`sensitivity_on_slice`: the largest relative
    difference of Sens within a checked region (``within``), the median over checked regions of the
    smallest relative difference to another region (``between``), and the two sides of the slides'
    identity E_x‖Sens(x)‖² = E_A‖Sens(A)‖² (Daróczy, slides §3): the area-weighted mean of ‖Sens‖²
    over regions (``by_region``, from ``norm`` and ``areas``) and the
    :func:`layerwise.stats.estimate` of ``mc_sq`` at uniform points of the square (``mc``)."""
    areas, norm = np.asarray(sens["areas"], dtype=float), np.asarray(sens["norm"], dtype=float)
    if areas.shape != norm.shape or np.any(areas < 0) or areas.sum() <= 0:
        raise ParameterError("areas must be non-negative, not all zero, one per region of norm")
    return {"within": float(np.max(sens["within"])), "between": float(np.median(sens["between"])),
            "by_region": float((areas / areas.sum() * norm ** 2).sum()),
            "mc": estimate(sens["mc_sq"])}
