"""Tests of the moments engine (Labatie 2019, SPEC §2 Chapters 3–5).

Every check is against an independent construction — a forward-mode derivative (torch.func.jvp)
of a plain float64 re-implementation of the same network, explicit circulant / padded
convolutions, a hand-written BN, NumPy moments with an SVD for r_eff, closed forms for identity
networks — never against the engine's own output (except the determinism checks, whose point is
equality of two runs).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from layerwise.moments import (
    LOCATION_NAMES,
    LOCATIONS,
    MOMENTS,
    MomentsConfig,
    ParameterError,
    network_inputs,
    network_weights,
    simulate,
    tensor_moments,
)

torch.set_num_threads(max(1, min(2, torch.get_num_threads())))


# ------------------------------------------------------------------------------------------
# Independent references
# ------------------------------------------------------------------------------------------
def np_moments(x: np.ndarray, dx: np.ndarray | None = None) -> dict[str, float]:
    """Plain NumPy moments (Labatie §3.1) of (B, C, *spatial) arrays; r_eff through an SVD."""
    c = x.shape[1]
    f = np.moveaxis(np.asarray(x, np.float64), 1, -1).reshape(-1, c)
    fc = f - f.mean(axis=0)
    s = np.linalg.svd(fc, compute_uv=False) ** 2
    out = {
        "nu1_abs_signal": np.abs(f).mean(),
        "nu2_signal": (f**2).mean(),
        "mu2_signal": (fc**2).mean(),
        "mu4_signal": (fc**4).mean(),
        "reff_signal": s.sum() / s.max(),
    }
    if dx is not None:
        d = np.moveaxis(np.asarray(dx, np.float64), 1, -1).reshape(-1, c)
        sd = np.linalg.svd(d, compute_uv=False) ** 2
        out["mu2_noise"] = (d**2).mean()
        out["reff_noise"] = sd.sum() / sd.max()
    return out


def pad_ref(x: torch.Tensor, p: int, boundary: str) -> torch.Tensor:
    """Explicit padding by index maps: periodic i mod H, symmetric mirror with edge repeated."""
    if boundary == "zero_padding":
        return F.pad(x, (p, p, p, p))
    h, w = x.shape[-2:]

    def idx(n: int) -> torch.Tensor:
        i = np.arange(-p, n + p)
        if boundary == "periodic":
            j = i % n
        else:  # symmetric
            j = np.where(i < 0, -i - 1, np.where(i >= n, 2 * n - 1 - i, i))
        return torch.as_tensor(j)

    return x[..., idx(h), :][..., idx(w)]


def ref_forward(
    cfg: MomentsConfig, W: list[torch.Tensor], x0: torch.Tensor
) -> list[list[torch.Tensor]]:
    """Plain float64 network of one config (Labatie Eq. 1, SPEC §2): tensors at every location.

    Returns, for every layer (residual unit) d = 1..depth, the list of location tensors in the
    order of ``LOCATIONS[cfg.arch]``.
    """
    k = cfg.kernel_size
    B = x0.shape[0]

    def lin(h: torch.Tensor, w: torch.Tensor, stride: int = 1) -> torch.Tensor:
        if k == 1:
            return h.reshape(B, -1) @ w
        return F.conv2d(pad_ref(h, k // 2, cfg.boundary), w, stride=stride)

    def bn(z: torch.Tensor) -> torch.Tensor:
        # BN in test mode with the clean batch's statistics: constants for the noise (SPEC §2)
        axes = (0,) if z.ndim == 2 else (0, 2, 3)
        m = z.detach().mean(dim=axes, keepdim=True)
        v = ((z.detach() - m) ** 2).mean(dim=axes, keepdim=True)
        return (z - m) / torch.sqrt(v + cfg.epsilon)

    h = lin(x0, W[0], stride=2)
    li = 1
    out = []
    for _ in range(cfg.depth):
        if cfg.arch == "vanilla":
            z = lin(h, W[li])
            li += 1
            x = torch.relu(z)
            out.append([h, z, x])
            h = x
        elif cfg.arch == "bn_ff":
            z = lin(h, W[li])
            li += 1
            y = bn(z)
            x = torch.relu(y)
            out.append([h, z, y, x])
            h = x
        else:
            r = h
            locs = []
            for j in range(cfg.res_depth):
                a = bn(r)
                b = torch.relu(a)
                r = lin(b, W[li])
                li += 1
                if j == 0:
                    locs = [h, a, b, r]
            new = h + r
            out.append(locs + [new])
            h = new
    return out


def jvp_reference(cfg: MomentsConfig, net: int, device: str = "cpu") -> dict[str, np.ndarray]:
    """Moments of the float64 network and of its forward-mode derivative along dx⁰ (the inputs
    and weights drawn as the engine draws them on ``device``; the reference runs on the CPU)."""
    x0, dx0 = (t.double().cpu() for t in network_inputs(cfg, net, device))
    W = [w.double().cpu() for w in network_weights(cfg, net, device)]
    names = LOCATIONS[cfg.arch]

    def flat(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return tuple(t for layer in ref_forward(cfg, W, x) for t in layer)

    prim, tang = torch.func.jvp(flat, (x0,), (dx0,))
    if cfg.kernel_size == 1:  # a dense net sees the D = C·H·W inputs as its channels
        m0 = np_moments(x0.reshape(x0.shape[0], -1).numpy(), dx0.reshape(x0.shape[0], -1).numpy())
    else:
        m0 = np_moments(x0.numpy(), dx0.numpy())
    chi0 = math.sqrt(m0["mu2_noise"] / m0["mu2_signal"])
    out = {f"{m}_{loc}": np.zeros(cfg.depth) for m in MOMENTS for loc in names}
    for i, (p, t) in enumerate(zip(prim, tang)):
        d, loc = divmod(i, len(names))
        p4 = p if p.ndim == 4 else p[:, :, None, None]
        t4 = t if t.ndim == 4 else t[:, :, None, None]
        mm = np_moments(p4.numpy(), t4.numpy())
        mm["chi"] = math.sqrt(mm["mu2_noise"] / mm["mu2_signal"]) / chi0
        for m in MOMENTS:
            out[f"{m}_{names[loc]}"][d] = mm[m]
    return out


def small(arch: str, k: int, **kw) -> MomentsConfig:
    base = dict(
        arch=arch,
        kernel_size=k,
        width=12,
        batch=6,
        depth=4,
        dataset="digits",
        n_sims=2,
        device="cpu",
        seed=3,
        records=None,
        sampling="explicit",
    )
    base.update(kw)
    return MomentsConfig(**base)


# ------------------------------------------------------------------------------------------
# Noise = forward-mode derivative; all moments against the float64 reference
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("arch", ["vanilla", "bn_ff", "bn_res"])
@pytest.mark.parametrize("k", [1, 3])
def test_noise_is_jvp_and_moments_match_reference(arch: str, k: int) -> None:
    cfg = small(arch, k, depth=3 if arch == "bn_res" else 5)
    got = simulate(cfg)
    assert np.array_equal(got["depth"], np.arange(1, cfg.depth + 1))
    for net in range(cfg.n_sims):
        ref = jvp_reference(cfg, net)
        for name, r in ref.items():
            np.testing.assert_allclose(
                got[name][net], r, rtol=2e-4, atol=1e-9, err_msg=f"{arch} k={k} {name} net {net}"
            )


def test_records_subsample_the_layers() -> None:
    cfg = small("bn_ff", 1, depth=6, records=3)
    got = simulate(cfg, sims=[0])
    ref = jvp_reference(cfg, 0)
    assert np.array_equal(got["depth"], [2, 4, 6])
    for name, r in ref.items():
        np.testing.assert_allclose(got[name][0], r[[1, 3, 5]], rtol=2e-4, err_msg=name)


# ------------------------------------------------------------------------------------------
# Convolutions and boundaries, through the engine's own records
# ------------------------------------------------------------------------------------------
def _capture(
    cfg: MomentsConfig, **kw
) -> dict[tuple[int, str], tuple[np.ndarray, np.ndarray, float]]:
    seen = {}

    def obs(depth, loc, x, dx, ls):
        seen[(depth, loc)] = (
            x[0].double().numpy().copy(),
            dx[0].double().numpy().copy(),
            float(ls[0]),
        )

    simulate(cfg, sims=[0], observer=obs, **kw)
    return seen


def _features_to_map(
    f: np.ndarray, B: int, side: int, cfg: MomentsConfig | None = None
) -> np.ndarray:
    """(B·P, N) engine features → (B, N, side, side); rows ordered (b, h, w), or (h, w, b) when the
    convolutions run in the Fourier domain (``cfg.conv_used == "fft"``)."""
    if cfg is not None and cfg.conv_used == "fft":
        return f.reshape(side, side, B, -1).transpose(2, 3, 0, 1)
    return f.reshape(B, side, side, -1).transpose(0, 3, 1, 2)


def circulant_conv(x: np.ndarray, w: np.ndarray, stride: int = 1) -> np.ndarray:
    """Periodic k×k convolution as an explicit (N·H'·W') × (C·H·W) circulant matrix."""
    B, C, H, Wd = x.shape
    N, _, k, _ = w.shape
    p = k // 2
    Ho, Wo = H // stride, Wd // stride
    A = np.zeros((N, Ho, Wo, C, H, Wd))
    for i in range(Ho):
        for j in range(Wo):
            for a in range(k):
                for b in range(k):
                    A[:, i, j, :, (stride * i + a - p) % H, (stride * j + b - p) % Wd] += w[
                        :, :, a, b
                    ]
    A = A.reshape(N * Ho * Wo, C * H * Wd)
    return (x.reshape(B, -1) @ A.T).reshape(B, N, Ho, Wo)


def padded_conv(x: np.ndarray, w: np.ndarray, boundary: str, stride: int = 1) -> np.ndarray:
    """k×k convolution after explicit ``np.pad`` (zeros or NumPy's 'symmetric'), by loops."""
    N, C, k, _ = w.shape
    p = k // 2
    mode = "constant" if boundary == "zero_padding" else "symmetric"
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), mode=mode)
    B, _, H, Wd = x.shape
    Ho, Wo = (H - 1) // stride + 1, (Wd - 1) // stride + 1
    out = np.zeros((B, N, Ho, Wo))
    for a in range(k):
        for b in range(k):
            patch = xp[:, :, a : a + stride * Ho : stride, b : b + stride * Wo : stride]
            out += np.einsum("bchw,nc->bnhw", patch, w[:, :, a, b])
    return out


@pytest.mark.parametrize(
    "boundary, conv",
    [
        ("periodic", "fft"),
        ("periodic", "direct"),
        ("zero_padding", "direct"),
        ("symmetric", "direct"),
    ],
)
def test_convolution_boundaries_against_explicit_construction(boundary: str, conv: str) -> None:
    cfg = small(
        "vanilla", 3, width=5, batch=3, depth=1, boundary=boundary, dataset="digits", conv=conv
    )
    assert cfg.conv_used == conv
    seen = _capture(cfg)
    x0, dx0 = (t.double().numpy() for t in network_inputs(cfg, 0))
    W = [w.double().numpy() for w in network_weights(cfg, 0)]
    ref = (
        circulant_conv
        if boundary == "periodic"
        else (lambda x, w, stride=1: padded_conv(x, w, boundary, stride))
    )
    h1 = ref(x0, W[0], stride=2)  # first layer: stride 2, 8×8 → 4×4
    dh1 = ref(dx0, W[0], stride=2)
    x, dx, ls = seen[(1, "loc1")]
    np.testing.assert_allclose(_features_to_map(x, 3, 4, cfg), h1, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        _features_to_map(dx, 3, 4, cfg) * math.exp(ls), dh1, rtol=1e-5, atol=1e-5
    )
    z, dz, ls = seen[(1, "loc2")]
    np.testing.assert_allclose(_features_to_map(z, 3, 4, cfg), ref(h1, W[1]), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        _features_to_map(dz, 3, 4, cfg) * math.exp(ls), ref(dh1, W[1]), rtol=1e-5, atol=1e-5
    )


@pytest.mark.parametrize("arch, k", [("bn_ff", 3), ("vanilla", 5), ("bn_res", 3)])
def test_fft_and_direct_convolution_agree_network_by_network(arch: str, k: int) -> None:
    """Same weights, two algorithms: every moment at every record agrees to float32 rounding."""
    cfg = small(arch, k, width=16, batch=4, depth=4, boundary="periodic")
    assert cfg.conv_used == "fft"
    a = simulate(cfg)
    b = simulate(replace(cfg, conv="direct"))
    for name in a:
        np.testing.assert_allclose(a[name], b[name], rtol=2e-5, err_msg=name)


def test_fft_convolution_on_a_32x32_map_against_circulant() -> None:
    """The stride-2 first layer maps 32×32 to 16×16; the FFT layers then act on 16×16 maps."""
    cfg = small("vanilla", 3, width=3, batch=2, depth=1, dataset="gaussian")
    seen = _capture(cfg)
    x, _, _ = seen[(1, "loc1")]
    z, _, _ = seen[(1, "loc2")]
    W = [w.double().numpy() for w in network_weights(cfg, 0)]
    np.testing.assert_allclose(
        _features_to_map(z, 2, 16, cfg),
        circulant_conv(_features_to_map(x, 2, 16, cfg), W[1]),
        rtol=1e-5,
        atol=1e-5,
    )


def test_stride2_maps_32_to_16() -> None:
    cfg = small("vanilla", 3, width=4, batch=2, depth=1, dataset="gaussian")
    x, _, _ = _capture(cfg)[(1, "loc1")]
    assert x.shape == (2 * 16 * 16, 4)


# ------------------------------------------------------------------------------------------
# BN step against a hand computation
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("k", [1, 3])
def test_bn_step_by_hand(k: int) -> None:
    cfg = small("bn_ff", k, width=7, batch=5, depth=2, epsilon=0.3)
    seen = _capture(cfg)
    for d in (1, 2):
        z, dz, lz = seen[(d, "loc2")]
        y, dy, ly = seen[(d, "loc3")]
        m = z.mean(axis=0)
        v = ((z - m) ** 2).mean(axis=0)
        np.testing.assert_allclose(y, (z - m) / np.sqrt(v + 0.3), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(
            dy * math.exp(ly), dz * math.exp(lz) / np.sqrt(v + 0.3), rtol=1e-4, atol=1e-6
        )
        x, dx, lx = seen[(d, "loc4")]
        np.testing.assert_allclose(x, np.maximum(y, 0), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(
            dx * math.exp(lx), dy * math.exp(ly) * (y > 0), rtol=1e-4, atol=1e-7
        )


# ------------------------------------------------------------------------------------------
# Moments of a tensor against NumPy
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(40, 6), (5, 30), (4, 3, 5, 5), (2, 16, 3, 3)])
def test_tensor_moments_against_numpy(shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(1)
    # anisotropic, non-centred, fat-tailed channels so that every moment matters
    x = (
        rng.standard_t(5, size=shape)
        * np.linspace(0.5, 3, shape[1]).reshape((1, -1) + (1,) * (len(shape) - 2))
        + 0.7
    )
    dx = (
        rng.standard_normal(shape) @ np.eye(shape[-1])
        if len(shape) == 2
        else rng.standard_normal(shape)
    )
    got = tensor_moments(x, dx, x0=x, dx0=2 * dx)
    ref = np_moments(x, dx)
    for key, val in ref.items():
        assert got[key] == pytest.approx(val, rel=1e-10), key
    assert got["chi"] == pytest.approx(0.5, rel=1e-12)  # x0 = x, dx0 = 2·dx ⇒ χ = 1/2
    # r_eff of a rank-one signal is 1; of an isotropic matrix with orthogonal columns it is C
    u = rng.standard_normal((50, 1)) @ rng.standard_normal((1, 8))
    assert tensor_moments(u - u.mean(0) + 5)["reff_signal"] == pytest.approx(1.0, rel=1e-9)
    q = np.linalg.qr(rng.standard_normal((64, 8)))[0]
    q -= q.mean(0)
    q = np.linalg.qr(q)[0]
    assert tensor_moments(np.vstack([q, -q]))["reff_signal"] == pytest.approx(8.0, rel=1e-9)


@pytest.mark.parametrize(
    "m, n", [(500, 300), (300, 256), (200, 260), (400, 128), (300, 129), (300, 127)]
)
def test_gram_and_reff_of_wide_features_against_svd(m: int, n: int) -> None:
    """Channel-side Grams of ≥ 128 channels are built blockwise, lower triangle only: r_eff and the
    Gram's lower triangle against float64 NumPy (r_eff by an SVD)."""
    from layerwise.moments import feature_moments
    from layerwise.moments.linalg import _gram

    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, m, n)) * np.geomspace(0.2, 3.0, n) + 0.3
    dx = rng.standard_normal((2, m, n)) @ np.diag(np.linspace(1, 2, n))
    g = _gram(torch.from_numpy(x)).numpy()
    small_side = x @ x.transpose(0, 2, 1) if m < n else x.transpose(0, 2, 1) @ x
    np.testing.assert_allclose(np.tril(g), np.tril(small_side), rtol=1e-12, atol=1e-9)
    got = feature_moments(torch.from_numpy(x), torch.from_numpy(dx))
    for s in range(2):
        xc = x[s] - x[s].mean(0)
        for key, mat in (("reff_signal", xc), ("reff_noise", dx[s])):
            sv = np.linalg.svd(mat, compute_uv=False)
            assert float(got[key][s]) == pytest.approx(np.sum(sv**2) / sv[0] ** 2, rel=1e-10), key


def test_chi_of_tensor_moments_closed_form() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((10, 4))
    dx = rng.standard_normal((10, 4))
    got = tensor_moments(3 * x, 5 * dx, x0=x, dx0=dx)
    assert got["chi"] == pytest.approx(5 / 3, rel=1e-12)


# ------------------------------------------------------------------------------------------
# χ through identity layers
# ------------------------------------------------------------------------------------------
def test_chi_is_one_through_identity_layers() -> None:
    """Identity weights: the linear steps keep χ = 1 exactly; after the first ReLU nothing
    changes."""
    cfg = small("vanilla", 1, width=64, batch=9, depth=6, dataset="digits")  # fan_in 1·8·8 = 64

    def eye(net, layer, shape, std):
        return torch.eye(shape[0], shape[1])

    got = simulate(cfg, weight_fn=eye)
    x0, dx0 = (t.double().numpy().reshape(9, -1) for t in network_inputs(cfg, 0))
    np.testing.assert_allclose(got["chi_loc1"][:, 0], 1.0, rtol=1e-6)
    np.testing.assert_allclose(got["chi_loc2"][:, 0], 1.0, rtol=1e-6)
    # by hand: after ReLU x = relu(x0), dx = 1{x0>0} dx0
    chi0 = math.sqrt((dx0**2).mean() / x0.var(axis=0).mean())
    x1, dx1 = np.maximum(x0, 0), dx0 * (x0 > 0)
    chi1 = math.sqrt((dx1**2).mean() / x1.var(axis=0).mean()) / chi0
    assert got["chi_loc3"][0, 0] == pytest.approx(chi1, rel=1e-5)
    for loc in LOCATIONS["vanilla"]:
        np.testing.assert_allclose(got[f"chi_{loc}"][0, 1:], chi1, rtol=1e-5)
        np.testing.assert_allclose(got[f"mu2_noise_{loc}"][0, 1:], (dx1**2).mean(), rtol=1e-5)


def test_identity_layers_scaled_noise_logscale() -> None:
    """W = c·I with c = 1e4 in a vanilla net: signal and noise both grow ×c per layer (χ fixed),
    so μ₂(dx) grows ×c² per layer; the log-scale must carry it without overflow."""
    cfg = small("vanilla", 1, width=64, batch=5, depth=3, dataset="digits")
    c = 1e4
    got = simulate(
        cfg, sims=[0], weight_fn=lambda net, layer, shape, std: c * torch.eye(shape[0], shape[1])
    )
    mu = got["mu2_noise_loc3"][0]
    np.testing.assert_allclose(mu[1:] / mu[:-1], c**2, rtol=1e-5)
    np.testing.assert_allclose(got["chi_loc3"][0], got["chi_loc3"][0, 0], rtol=1e-5)


# ------------------------------------------------------------------------------------------
# Brute force: a fully-connected net, every quantity recomputed with explicit loops in NumPy
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("arch", ["vanilla", "bn_ff", "bn_res"])
def test_fully_connected_brute_force(arch: str) -> None:
    N, B = 10, 7
    cfg = small(
        arch, 1, width=N, batch=B, depth=12, records=4, dataset="gaussian", n_sims=1, epsilon=1e-3
    )
    got = simulate(cfg)
    x0, dx0 = (t.double().numpy().reshape(B, -1) for t in network_inputs(cfg, 0))
    W = [w.double().numpy() for w in network_weights(cfg, 0)]
    assert W[0].shape == (3 * 32 * 32, N) and all(w.shape == (N, N) for w in W[1:])
    # every weight ~ N(0, std²): check the draws themselves (first layer 1/fan_in, then He 2/N)
    assert W[0].std() == pytest.approx(1 / math.sqrt(3072), rel=0.05)

    def mom(x, dx):
        out = {
            "nu1_abs_signal": 0.0,
            "nu2_signal": 0.0,
            "mu2_signal": 0.0,
            "mu4_signal": 0.0,
            "mu2_noise": 0.0,
        }
        for c in range(N):
            col = [x[b][c] for b in range(B)]
            m = sum(col) / B
            for b in range(B):
                out["nu1_abs_signal"] += abs(x[b][c]) / (B * N)
                out["nu2_signal"] += x[b][c] ** 2 / (B * N)
                out["mu2_signal"] += (x[b][c] - m) ** 2 / (B * N)
                out["mu4_signal"] += (x[b][c] - m) ** 4 / (B * N)
                out["mu2_noise"] += dx[b][c] ** 2 / (B * N)
        xc = x - x.mean(axis=0)
        for name, a in (("reff_signal", xc), ("reff_noise", dx)):
            cov = a.T @ a / B
            out[name] = (
                np.trace(cov) / np.linalg.eigvalsh(cov)[-1]
            )  # N×N covariance, not the Gram trick
        return out

    def bn(z):
        return np.array(
            [
                [(z[b][c] - z[:, c].mean()) / math.sqrt(z[:, c].var() + 1e-3) for c in range(N)]
                for b in range(B)
            ]
        ), np.array([1 / math.sqrt(z[:, c].var() + 1e-3) for c in range(N)])

    chi0 = math.sqrt((dx0**2).mean() / x0.var(axis=0).mean())
    h, dh = x0 @ W[0], dx0 @ W[0]
    li = 1
    rows = []
    for d in range(1, cfg.depth + 1):
        if arch == "vanilla":
            z, dz = h @ W[li], dh @ W[li]
            li += 1
            x, dxx = np.maximum(z, 0), dz * (z > 0)
            locs = [(h, dh), (z, dz), (x, dxx)]
        elif arch == "bn_ff":
            z, dz = h @ W[li], dh @ W[li]
            li += 1
            y, s = bn(z)
            dy = dz * s
            x, dxx = np.maximum(y, 0), dy * (y > 0)
            locs = [(h, dh), (z, dz), (y, dy), (x, dxx)]
        else:
            r, dr = h, dh
            for j in range(cfg.res_depth):
                a, s = bn(r)
                da = dr * s
                b_, db = np.maximum(a, 0), da * (a > 0)
                r, dr = b_ @ W[li], db @ W[li]
                li += 1
                if j == 0:
                    locs = [(h, dh), (a, da), (b_, db), (r, dr)]
            x, dxx = h + r, dh + dr
            locs.append((x, dxx))
        if d % cfg.interval == 0:
            rows.append(locs)
        h, dh = x, dxx
    for i, locs in enumerate(rows):
        for name, (s, n) in zip(LOCATIONS[arch], locs):
            ref = mom(s, n)
            ref["chi"] = math.sqrt(ref["mu2_noise"] / ref["mu2_signal"]) / chi0
            for m in MOMENTS:
                assert got[f"{m}_{name}"][0, i] == pytest.approx(ref[m], rel=5e-4), (
                    arch,
                    m,
                    name,
                    i,
                )


def test_chi_beyond_1e20_does_not_overflow() -> None:
    """A deep BN feedforward net is a noise amplifier (Labatie §6): χ grows exponentially."""
    cfg = small("bn_ff", 1, width=16, batch=8, depth=900, records=9, dataset="gaussian", n_sims=1)
    got = simulate(cfg)
    chi = got["chi_loc4"][0]
    assert np.all(np.isfinite(chi)) and np.all(np.isfinite(got["mu2_noise_loc4"][0]))
    assert chi[-1] > 1e20
    # χ² ∝ μ₂(dx)/μ₂(x) with one constant (the input's) for every record
    ratio = got["mu2_noise_loc4"][0] / got["mu2_signal_loc4"][0] / chi**2
    np.testing.assert_allclose(ratio, ratio[0], rtol=1e-9)
    assert np.all(np.diff(np.log(chi)) > 0)


# ------------------------------------------------------------------------------------------
# Determinism and independence of blocking
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("k", [1, 3])
def test_determinism_and_blocking(k: int) -> None:
    cfg = small("bn_res", k, depth=3, n_sims=4, dataset="patches")
    a = simulate(cfg)
    b = simulate(cfg)
    for name in a:
        assert np.array_equal(a[name], b[name], equal_nan=True), name
    c = simulate(cfg, sims=range(1, 3))
    d = simulate(cfg, block=1)
    for name in a:
        if name == "depth":
            continue
        assert c[name].shape == (2, cfg.records)
        assert np.array_equal(a[name][1:3], c[name], equal_nan=True), name
        assert np.array_equal(a[name], d[name], equal_nan=True), name
    e = simulate(MomentsConfig(**{**cfg.to_dict(), "seed": cfg.seed + 1}))
    assert not np.allclose(a["chi_loc5"], e["chi_loc5"])
    # independent networks differ
    assert not np.allclose(a["chi_loc5"][0], a["chi_loc5"][1])


# ------------------------------------------------------------------------------------------
# Projected sampling of dense layers (MomentsConfig.sampling)
# ------------------------------------------------------------------------------------------
def test_sampling_default_and_validation() -> None:
    assert (
        MomentsConfig(
            arch="vanilla", kernel_size=1, width=512, batch=64, device="cpu"
        ).sampling_used
        == "projected"
    )
    assert (
        MomentsConfig(
            arch="vanilla", kernel_size=1, width=128, batch=64, device="cpu"
        ).sampling_used
        == "explicit"
    )  # 2B = N
    assert (
        MomentsConfig(arch="bn_ff", kernel_size=3, width=512, batch=64, device="cpu").sampling_used
        == "explicit"
    )
    # a config derived from a dense one re-resolves its sampling (regression: it used to
    # inherit 'projected')
    dense = MomentsConfig(arch="vanilla", kernel_size=1, width=512, batch=64, device="cpu")
    conv = replace(dense, kernel_size=3)
    assert conv.sampling == "auto" and conv.sampling_used == "explicit"
    assert MomentsConfig(kernel_size=1, sampling="explicit").to_dict()["sampling"] == "explicit"
    with pytest.raises(ParameterError, match="sampling"):
        MomentsConfig(kernel_size=3, sampling="projected")
    with pytest.raises(ParameterError, match="sampling"):
        MomentsConfig(kernel_size=1, sampling="qr")


@pytest.mark.parametrize("sampling", ["explicit", "projected"])
def test_first_layer_law_is_gaussian_with_kron_covariance(sampling: str) -> None:
    """For a fixed input X (signal and noise rows, M × K), vec(X W) ~ N(0, σ²·XXᵀ ⊗ I_N).

    Thousands of networks with the same fixed X (``inputs`` hook) and the engine's own random
    draws; the first layer's output, whitened by L⁻¹ (L = chol(XXᵀ), computed here in float64),
    must be i.i.d. N(0, 1): mean, row and column covariances and the fourth moment are checked
    against their standard errors.
    """
    B, N, n = 2, 3, 3000
    rng = np.random.default_rng(5)
    x0 = torch.as_tensor(
        rng.standard_normal((B, 1, 8, 8)) * np.linspace(0.2, 2.0, 64).reshape(1, 1, 8, 8),
        dtype=torch.float32,
    )
    dx0 = torch.as_tensor(
        0.5 * rng.standard_normal((B, 1, 8, 8)) + 0.3 * x0.numpy(), dtype=torch.float32
    )
    cfg = MomentsConfig(
        arch="vanilla",
        kernel_size=1,
        width=N,
        batch=B,
        depth=1,
        dataset="digits",
        device="cpu",
        seed=11,
        sampling=sampling,
        reff_signal=False,
        reff_noise=False,
    )
    zs = []

    def obs(depth, loc, x, dx, ls):
        if loc == "loc1":
            zs.append(
                torch.cat([x, dx * torch.exp(ls).view(-1, 1, 1).float()], dim=1).double().numpy()
            )

    simulate(cfg, sims=range(n), observer=obs, inputs=lambda net: (x0, dx0), block=64)
    Z = np.concatenate(zs)  # (n, M, N)
    assert Z.shape == (n, 2 * B, N)
    X = np.vstack([x0.double().numpy().reshape(B, -1), dx0.double().numpy().reshape(B, -1)])
    sigma2 = 1.0 / X.shape[1]
    L = np.linalg.cholesky(X @ X.T * sigma2)
    Y = np.linalg.solve(L, Z)  # (n, M, N): should be i.i.d. N(0, 1)
    cnt = Y.size
    assert abs(Y.mean()) < 5 / math.sqrt(cnt)
    rows = np.einsum("sin,sjn->ij", Y, Y) / (n * N)
    cols = np.einsum("sim,sin->mn", Y, Y) / (n * 2 * B)
    se_rows, se_cols = 1 / math.sqrt(n * N), 1 / math.sqrt(n * 2 * B)
    assert np.max(np.abs(rows - np.eye(2 * B))) < 5 * math.sqrt(2) * se_rows, rows
    assert np.max(np.abs(cols - np.eye(N))) < 5 * math.sqrt(2) * se_cols, cols
    assert abs((Y**4).mean() - 3.0) < 5 * math.sqrt(96.0 / cnt)
    # the un-whitened covariance is wrong by a lot if the law were, e.g., σ²·(diag XXᵀ ⊗ I)
    assert (
        np.max(np.abs(np.einsum("sin,sjn->ij", Z, Z) / (n * N) / sigma2 - X @ X.T))
        < 0.1 * np.abs(X @ X.T).max()
    )


def test_projected_and_explicit_moments_agree_in_distribution() -> None:
    """Same law of every recorded moment: means of the log-moments over many small networks
    (independent seeds for the two samplings) agree within a few standard errors."""
    n = 160
    for arch in ("vanilla", "bn_ff", "bn_res"):
        base = dict(
            arch=arch,
            kernel_size=1,
            width=24,
            batch=4,
            depth=6,
            records=2,
            dataset="gaussian",
            n_sims=n,
            device="cpu",
        )
        a = simulate(MomentsConfig(**base, seed=1, sampling="explicit"))
        b = simulate(MomentsConfig(**base, seed=2, sampling="projected"))
        for name in a:
            if name == "depth":
                continue
            for r in range(2):
                u, v = np.log(a[name][:, r]), np.log(b[name][:, r])
                se = math.sqrt(u.var(ddof=1) / n + v.var(ddof=1) / n)
                assert abs(u.mean() - v.mean()) < 4.5 * se + 1e-9, (
                    arch,
                    name,
                    r,
                    u.mean(),
                    v.mean(),
                    se,
                )


def _proj_reference(
    cfg: MomentsConfig, G: list[np.ndarray], x0: np.ndarray, dx0: np.ndarray, eps: float
):
    """Float64 projected network with fixed draws G: at every layer the realised map is
    W = Q G, Q from the QR (non-negative diagonal R) of the stacked clean signal and noise rows.
    Propagates the signal x, its linearised noise dx, and x ± ε·dx⁰ through the same maps and
    BN constants; returns, per layer, [(x, dx, (x₊ − x₋)/2ε) per location]."""
    B = x0.shape[0]
    st = [
        x0.reshape(B, -1),
        dx0.reshape(B, -1),
        x0.reshape(B, -1) + eps * dx0.reshape(B, -1),
        x0.reshape(B, -1) - eps * dx0.reshape(B, -1),
    ]
    li = [0]

    def lin(s):
        g = G[li[0]]
        li[0] += 1
        K = s[0].shape[1]
        if g.shape[0] == K:  # explicit layer
            W = g
        else:
            q, r = np.linalg.qr(np.vstack([s[0], s[1]]).T)
            sign = np.where(np.diag(r) < 0, -1.0, 1.0)
            W = (q * sign) @ g
        return [a @ W for a in s]

    def bn(s):
        m = s[0].mean(axis=0)
        inv = 1 / np.sqrt(((s[0] - m) ** 2).mean(axis=0) + cfg.epsilon)
        return [(s[0] - m) * inv, s[1] * inv, (s[2] - m) * inv, (s[3] - m) * inv]

    def relu(s):
        return [np.maximum(s[0], 0), s[1] * (s[0] > 0), np.maximum(s[2], 0), np.maximum(s[3], 0)]

    def view(s):
        return (s[0], s[1], (s[2] - s[3]) / (2 * eps))

    h = lin(st)
    out = []
    for _ in range(cfg.depth):
        if cfg.arch == "vanilla":
            z = lin(h)
            x = relu(z)
            out.append([view(h), view(z), view(x)])
            h = x
        elif cfg.arch == "bn_ff":
            z = lin(h)
            y = bn(z)
            x = relu(y)
            out.append([view(h), view(z), view(y), view(x)])
            h = x
        else:
            r = h
            for j in range(cfg.res_depth):
                a = bn(r)
                b = relu(a)
                r = lin(b)
                if j == 0:
                    locs = [view(h), view(a), view(b), view(r)]
            h = [u + v for u, v in zip(h, r)]
            out.append(locs + [view(h)])
    return out


@pytest.mark.parametrize("arch", ["vanilla", "bn_ff", "bn_res"])
def test_projected_noise_is_derivative_of_the_sampled_map(arch: str) -> None:
    """With a fixed draw of every G (``weight_fn`` hook), the engine's signal equals the float64
    projected network (maps Q G built here by an independent QR) and its noise equals the
    central finite difference of that network's output along dx⁰ (same maps, same BN constants):
    the projected layer is one linear map applied to signal and noise alike."""
    cfg = MomentsConfig(
        arch=arch,
        kernel_size=1,
        width=16,
        batch=4,
        depth=3,
        dataset="digits",
        n_sims=1,
        device="cpu",
        seed=4,
        sampling="projected",
    )
    draws: dict[int, np.ndarray] = {}

    def wfn(net, layer, shape, std):
        g = np.random.default_rng(100 + layer).standard_normal(shape).astype(
            np.float32
        ) * np.float32(std)
        draws[layer] = g.astype(np.float64)
        return torch.from_numpy(g)

    seen = _capture(cfg, weight_fn=wfn)
    assert draws[0].shape == (8, 16) and draws[1].shape == (
        8,
        16,
    )  # 2B × N draws, not K × N weights
    x0, dx0 = (t.double().numpy() for t in network_inputs(cfg, 0))
    ref = _proj_reference(cfg, [draws[i] for i in sorted(draws)], x0, dx0, 1e-6)
    for d, locs in enumerate(ref, start=1):
        for loc, (x, dx, fd) in zip(LOCATIONS[arch], locs):
            ex, edx, ls = seen[(d, loc)]
            edx = edx * math.exp(ls)
            scale = np.abs(x).max()
            np.testing.assert_allclose(
                ex, x, rtol=1e-4, atol=1e-5 * scale, err_msg=f"{arch} {d} {loc} signal"
            )
            np.testing.assert_allclose(
                fd, dx, rtol=1e-5, atol=1e-6 * np.abs(dx).max(), err_msg="reference FD"
            )
            np.testing.assert_allclose(
                edx, fd, rtol=1e-4, atol=1e-5 * np.abs(fd).max(), err_msg=f"{arch} {d} {loc} noise"
            )


def test_projected_determinism_and_blocking() -> None:
    cfg = MomentsConfig(
        arch="bn_res",
        kernel_size=1,
        width=20,
        batch=4,
        depth=3,
        n_sims=4,
        dataset="patches",
        device="cpu",
        seed=3,
    )
    assert cfg.sampling_used == "projected"
    a = simulate(cfg, workers=1)
    b = simulate(cfg, workers=2)
    c = simulate(cfg, sims=range(1, 3), block=1)
    for name in a:
        assert np.array_equal(a[name], b[name], equal_nan=True), name
        if name != "depth":
            assert np.array_equal(a[name][1:3], c[name], equal_nan=True), name
    e = simulate(MomentsConfig(**{**cfg.to_dict(), "sampling": "explicit"}))
    assert not np.allclose(a["chi_loc5"], e["chi_loc5"])


def test_reff_flags_and_keys() -> None:
    cfg = small("vanilla", 1, reff_signal=False, reff_noise=True)
    got = simulate(cfg)
    assert set(got) == {"depth"} | {f"{m}_{l}" for m in MOMENTS for l in LOCATIONS["vanilla"]}
    assert np.all(np.isnan(got["reff_signal_loc1"])) and np.all(np.isfinite(got["reff_noise_loc1"]))
    assert all(
        v.dtype == np.float64 and v.shape == (2, cfg.records)
        for k, v in got.items()
        if k != "depth"
    )
    assert (
        set(LOCATION_NAMES["bn_res"])
        == set(LOCATIONS["bn_res"])
        == {f"loc{i}" for i in range(1, 6)}
    )


@pytest.mark.parametrize("arch", ["vanilla", "bn_ff", "bn_res"])
@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize(
    "records", [2, 4]
)  # 4 = every layer: a layer input reuses the previous output's moments
def test_reff_locations_only_where_named(arch: str, k: int, records: int) -> None:
    """r_eff at the named locations equals the all-locations run's (to float32 Gram rounding: a BN
    output's channel Gram is D·G·D only when the pre-BN one was computed); NaN elsewhere; every
    other moment bit for bit the same (r_eff never feeds back into the propagation)."""
    full = simulate(small(arch, k, records=records))
    for want in [(LOCATIONS[arch][0],), LOCATIONS[arch][-2:], ()]:
        got = simulate(small(arch, k, records=records, reff_locations=want))
        for name, v in full.items():
            loc = name.rsplit("_", 1)[-1]
            if name.startswith("reff_"):
                if loc in want:
                    assert np.all(np.isfinite(got[name])), name
                    np.testing.assert_allclose(got[name], v, rtol=1e-4, err_msg=name)
                else:
                    assert np.all(np.isnan(got[name])), name
            else:
                assert np.array_equal(got[name], v), name


def test_reff_locations_canonical_and_key() -> None:
    a = small("bn_ff", 3, reff_locations=["loc4", "loc1", "loc4"])
    assert a.reff_locations == ("loc1", "loc4") and a == small(
        "bn_ff", 3, reff_locations=("loc1", "loc4")
    )
    assert a.reff_at("loc1") and not a.reff_at("loc2")
    assert (
        "reff_locations" not in small("bn_ff", 3).to_dict()
    )  # keys of runs made before the option still match
    assert a.to_dict()["reff_locations"] == ["loc1", "loc4"]
    assert MomentsConfig(**small("bn_ff", 3).to_dict()) == small("bn_ff", 3)
    for bad in [("loc5",), "loc1", (1,)]:
        with pytest.raises(ParameterError, match="reff_locations"):
            small("bn_ff", 3, reff_locations=bad)


# ------------------------------------------------------------------------------------------
# Bad input: clear errors, before any computation
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kw, word",
    [
        (dict(arch="resnet"), "arch"),
        (dict(boundary="reflect"), "boundary"),
        (dict(dataset="imagenet"), "dataset"),
        (dict(dataset="cifar10:"), "dataset"),
        (dict(width=0), "width"),
        (dict(batch=-3), "batch"),
        (dict(depth=0), "depth"),
        (dict(depth=10, records=3), "records"),
        (dict(depth=10, records=20), "records"),
        (dict(kernel_size=4), "kernel_size"),
        (dict(res_depth=0), "res_depth"),
        (dict(n_sims=0), "n_sims"),
        (dict(epsilon=0.0), "epsilon"),
        (dict(epsilon=-1.0), "epsilon"),
        (dict(device="tpu"), "device"),
        (dict(seed=-1), "seed"),
        (dict(width=2.5), "width"),
        (dict(reff_signal="yes"), "reff_signal"),
        (dict(conv="winograd"), "conv"),
        (dict(conv="fft", boundary="zero_padding"), "conv"),
        (dict(conv="fft", kernel_size=1), "conv"),
    ],
)
def test_bad_arguments(kw: dict, word: str) -> None:
    with pytest.raises(ParameterError, match=word):
        MomentsConfig(**kw)


def test_bad_sims() -> None:
    with pytest.raises(ParameterError, match="sims"):
        simulate(small("vanilla", 1), sims=[-1])


def test_cli_rejects_bad_arguments_fast(tmp_path) -> None:
    from layerwise.moments_cli import main

    out = tmp_path / "m.npz"
    assert (
        main(
            [
                "--arch",
                "bn_ff",
                "--kernel-size",
                "1",
                "--width",
                "8",
                "--batch",
                "4",
                "--depth",
                "10",
                "--records",
                "3",
                "--out",
                str(out),
            ]
        )
        == 2
    )
    assert not out.exists()
    assert (
        main(
            [
                "--arch",
                "nope",
                "--kernel-size",
                "1",
                "--width",
                "8",
                "--batch",
                "4",
                "--depth",
                "4",
                "--out",
                str(out),
            ]
        )
        == 2
    )
    assert (
        main(
            [
                "--arch",
                "bn_ff",
                "--kernel-size",
                "3",
                "--width",
                "8",
                "--batch",
                "4",
                "--depth",
                "4",
                "--sampling",
                "projected",
                "--out",
                str(out),
            ]
        )
        == 2
    )
    assert (
        main(
            [
                "--arch",
                "bn_ff",
                "--kernel-size",
                "3",
                "--width",
                "8",
                "--batch",
                "4",
                "--depth",
                "4",
                "--boundary",
                "symmetric",
                "--conv",
                "fft",
                "--out",
                str(out),
            ]
        )
        == 2
    )
    assert not out.exists()


def test_cli_writes_npz(tmp_path) -> None:
    out = tmp_path / "m.npz"
    from layerwise.__main__ import (
        main,  # the dispatcher of `python -m layerwise`, in-process (fast)
    )

    rc = main(
        [
            "moments",
            "--arch",
            "bn_res",
            "--kernel-size",
            "1",
            "--width",
            "8",
            "--batch",
            "4",
            "--depth",
            "4",
            "--records",
            "2",
            "--dataset",
            "digits",
            "--sims",
            "2",
            "--no-reff-signal",
            "--device",
            "cpu",
            "--quiet",
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    out2 = tmp_path / "p.npz"
    assert (
        main(
            [
                "moments",
                "--arch",
                "vanilla",
                "--kernel-size",
                "1",
                "--width",
                "16",
                "--batch",
                "4",
                "--depth",
                "2",
                "--dataset",
                "digits",
                "--sampling",
                "explicit",
                "--device",
                "cpu",
                "--quiet",
                "--out",
                str(out2),
            ]
        )
        == 0
    )
    np.testing.assert_array_equal(
        np.load(out2)["chi_loc3"],
        simulate(
            small("vanilla", 1, width=16, batch=4, depth=2, seed=0, n_sims=1, sampling="explicit")
        )["chi_loc3"],
    )
    z = np.load(out)
    assert list(z["depth"]) == [2, 4]
    assert z["chi_loc5"].shape == (2, 2) and z["chi_loc5"].dtype == np.float64
    assert np.all(np.isnan(z["reff_signal_loc1"])) and np.all(np.isfinite(z["reff_noise_loc1"]))
    cfg = small(
        "bn_res",
        1,
        width=8,
        batch=4,
        depth=4,
        records=2,
        dataset="digits",
        seed=0,
        reff_signal=False,
        sampling="auto",
    )
    ref = simulate(cfg)
    np.testing.assert_array_equal(z["chi_loc5"], ref["chi_loc5"])


def test_reuse_freed_memory_changes_no_number() -> None:
    """The allocator setting (glibc ``mallopt``) only changes where memory comes from."""
    from layerwise.moments import reuse_freed_memory

    cfg = small("bn_ff", 3, width=8, batch=3, depth=3)
    inside = simulate(cfg)  # simulate() turns it on for CPU runs
    with reuse_freed_memory(), reuse_freed_memory():  # nested use is harmless
        again = simulate(cfg, workers=1)
    for name in inside:
        np.testing.assert_array_equal(inside[name], again[name], err_msg=name)


def test_heap_guard_trims_only_above_its_limit() -> None:
    """HeapGuard: the first layer sets the limit (2 × resident + slack); only a layer that
    ends above it trims, and the limit then follows what is left after the trim."""
    from layerwise.moments import HeapGuard

    gib = 1 << 30
    readings, trims = [], []
    guard = HeapGuard(trims.append, rss=lambda: readings.pop(0))
    readings[:] = [1 * gib]
    guard.after_layer()
    assert guard.limit == 2 * gib + HeapGuard.SLACK and trims == []
    readings[:] = [2 * gib + HeapGuard.SLACK]  # at the limit: nothing to do
    guard.after_layer()
    assert trims == [] and guard.trims == 0
    readings[:] = [
        3 * gib,
        gib // 2,
    ]  # above it: trim; what is left (0.5 GiB) does not lower the limit
    guard.after_layer()
    assert trims == [0] and guard.trims == 1 and guard.limit == 2 * gib + HeapGuard.SLACK
    readings[:] = [4 * gib, 2 * gib]  # a bigger live set after the trim raises the limit
    guard.after_layer()
    assert trims == [0, 0] and guard.limit == 4 * gib + HeapGuard.SLACK
    # no trim function (no glibc, or CUDA) or no memory reading: nothing is read or trimmed
    HeapGuard(None, rss=lambda: pytest.fail("read without a trim function")).after_layer()
    off = HeapGuard(trims.append, rss=lambda: None)
    off.after_layer()
    off.after_layer()
    assert off.limit is None and trims == [0, 0]


def test_simulate_checks_the_heap_after_every_layer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every worker calls the guard once per layer (residual unit) of each of its blocks."""
    from layerwise import moments

    calls: list[int] = []
    monkeypatch.setattr(moments.HeapGuard, "after_layer", lambda self: calls.append(1))
    simulate(small("bn_ff", 3, width=8, batch=3, depth=5, n_sims=3), block=1, workers=2)
    assert len(calls) == 5 * 3
    resident = moments.resident_bytes()
    assert resident is None or resident > 0


def test_propagate_is_simulate_without_the_runtime() -> None:
    """The numerics (``layers.propagate`` on one block, no threads, no heap guard) give exactly the
    rows of the runtime's ``simulate`` (blocks on worker threads), and call ``after_layer`` once per
    layer (residual unit)."""
    from layerwise.moments import propagate

    for arch, k in (("bn_ff", 1), ("bn_res", 3)):
        cfg = small(arch, k, width=8, batch=3, depth=4, n_sims=3)
        ref = simulate(cfg, block=1, workers=2)
        layers: list[int] = []
        with torch.inference_mode():
            got = propagate(cfg, [2, 0], "cpu", None, None, None, lambda: layers.append(1))  # noqa: B023 (used within this iteration)
        assert len(layers) == cfg.depth
        assert set(got) == set(ref) - {"depth"}
        for name, arr in got.items():
            np.testing.assert_array_equal(arr, ref[name][[2, 0]], err_msg=f"{arch} {name}")


def test_package_reexports_its_public_api() -> None:
    """``from layerwise.moments import X`` keeps working for every public name of the subpackage."""
    import layerwise.moments as mm

    for name in mm.__all__:
        assert getattr(mm, name) is not None, name
    assert mm.simulate.__module__ == "layerwise.moments.runtime"
    assert mm.MomentsConfig.__module__ == "layerwise.moments.config"
    assert mm.lambda_max.__module__ == "layerwise.moments.linalg"
    assert mm.feature_moments.__module__ == "layerwise.moments.stats"


def test_auto_algorithms_resolve_by_device() -> None:
    """``"auto"`` sampling / convolution: projected and Fourier on CPU, explicit and direct on CUDA
    (resolvable without a GPU: the choice follows the configured device)."""
    fc = dict(arch="vanilla", kernel_size=1, width=512, batch=64)
    assert MomentsConfig(**fc, device="cpu").sampling_used == "projected"
    assert MomentsConfig(**fc, device="cuda").sampling_used == "explicit"
    assert MomentsConfig(**fc, device="cuda", sampling="projected").sampling_used == "projected"
    assert MomentsConfig(**fc, device="cpu").conv_used == "none"
    cv = dict(arch="bn_ff", kernel_size=3, boundary="periodic")
    assert MomentsConfig(**cv, device="cpu").conv_used == "fft"
    assert MomentsConfig(**cv, device="cuda").conv_used == "direct"
    assert MomentsConfig(**cv, device="cuda", conv="fft").conv_used == "fft"
    assert MomentsConfig(**cv, device="cpu").sampling_used == "explicit"
    assert MomentsConfig(**fc, device="auto").on_cuda == torch.cuda.is_available()
    assert (
        not MomentsConfig(**fc, device="cpu").on_cuda and MomentsConfig(**fc, device="cuda").on_cuda
    )


def test_auto_block_follows_the_device_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks hold ≤ 16 networks within ~1 GB on CPU and within a quarter of the GPU's memory
    on CUDA (a paper-scale conv network needs ≈ 0.55 GB by the estimate)."""
    import types

    import layerwise.moments.runtime as mm

    paper = MomentsConfig(arch="bn_ff", kernel_size=3, width=512, batch=64)
    fc = MomentsConfig(arch="bn_ff", kernel_size=1, width=512, batch=64)
    assert mm._auto_block(paper, 50, "cpu") == 1
    assert mm._auto_block(fc, 50, "cpu") == 16 and mm._auto_block(fc, 3, "cpu") == 3
    for gib, expect in ((80, 16), (16, 7), (1, 1)):
        props = types.SimpleNamespace(total_memory=gib << 30)
        monkeypatch.setattr(torch.cuda, "get_device_properties", lambda i, p=props: p)
        assert mm._auto_block(paper, 50, "cuda") == expect, gib


# ------------------------------------------------------------------------------------------
# λ_max without an eigen-solver: lambda_max_certified (the CUDA path, exercised here on CPU)
# ------------------------------------------------------------------------------------------
def _psd_with_spectrum(eigs: list[float], seed: int) -> np.ndarray:
    """Q·diag(eigs)·Qᵀ for a random orthogonal Q: a symmetric PSD matrix whose eigenvalues are
    known."""
    n = len(eigs)
    q = np.linalg.qr(np.random.default_rng(seed).standard_normal((n, n)))[0]
    return (q * np.asarray(eigs)) @ q.T


# eigenvalues 0 or in the normal float range (float32 Grams have no others; a subnormal spectrum is
# not represented to relative precision by the construction, so its λ_max is not known exactly)
EIGENVALUE = st.one_of(st.just(0.0), st.floats(1e-30, 1e3))


@settings(max_examples=80, deadline=None)
@given(st.lists(EIGENVALUE, min_size=1, max_size=48), st.integers(0, 2**32 - 1))
def test_lambda_max_certified_is_within_its_bound(eigs: list[float], seed: int) -> None:
    """λ_max/(1 + rtol) ≤ θ ≤ λ_max for any spectrum (ties and near-ties included), the exact λ_max
    known by construction; slack only for the float64 rounding of the constructed matrix."""
    from layerwise.moments import LAMBDA_MAX_RTOL, lambda_max_certified

    a = _psd_with_spectrum(eigs, seed)
    lam = max(eigs)
    got = float(lambda_max_certified(torch.from_numpy(a)[None])[0])
    slack = 8 * len(eigs) * np.finfo(np.float64).eps * lam
    assert lam / (1 + LAMBDA_MAX_RTOL) - slack <= got <= lam + slack


def test_lambda_max_certified_special_cases(monkeypatch: pytest.MonkeyPatch) -> None:
    from layerwise.moments import lambda_max_certified

    calls = []
    eigvalsh = torch.linalg.eigvalsh
    monkeypatch.setattr(
        torch.linalg,
        "eigvalsh",
        lambda a, *args, **kw: calls.append(a.shape[0]) or eigvalsh(a, *args, **kw),
    )
    rank_one = _psd_with_spectrum([5.0] + [0.0] * 15, 1)
    tied = _psd_with_spectrum([3.0, 3.0, 3.0] + list(np.linspace(2.0, 0.0, 13)), 2)
    identity = np.eye(16)
    close = _psd_with_spectrum(
        [1.0, 0.99] + list(np.linspace(0.5, 0.0, 14)), 3
    )  # (0.99)^4096 ≈ 1e-18
    batch = torch.from_numpy(np.stack([np.zeros((16, 16)), rank_one, tied, identity, close]))
    got = lambda_max_certified(batch).numpy()
    np.testing.assert_allclose(got, [0.0, 5.0, 3.0, 1.0, 1.0], rtol=1e-6, atol=0)
    assert calls == []  # every certificate held: no eigen-solver call
    # only the lower triangle is read (channel-side Grams hold nothing above the diagonal)
    np.testing.assert_array_equal(lambda_max_certified(torch.tril(batch)).numpy(), got)
    # without squarings, the Rayleigh quotient of a column of A misses λ_max by more than the
    # tolerance wherever lower eigenvalues remain (the tie with 2…0 and the close pair, not
    # the rank-one or identity matrices): those alone go to the eigen-solver, in one call
    crude = lambda_max_certified(batch, squarings=0).numpy()
    assert calls == [2]
    np.testing.assert_allclose(crude, [0.0, 5.0, 3.0, 1.0, 1.0], rtol=1e-12, atol=0)
    # a gap of 1e-4 is not resolved by 12 squarings (0.9999^4096 ≈ 0.66): the eigen-solver answers
    near_tie = _psd_with_spectrum([1.0, 1.0 - 1e-4] + list(np.linspace(0.5, 0.0, 14)), 4)
    lam = float(lambda_max_certified(torch.from_numpy(near_tie)[None])[0])
    assert calls == [2, 1] and lam == pytest.approx(1.0, rel=1e-12)


@pytest.mark.parametrize(
    "arch, width, batch, k", [("bn_ff", 128, 160, 1), ("bn_res", 48, 8, 1), ("bn_ff", 16, 4, 3)]
)
def test_engine_reff_with_certified_lambda_max(
    monkeypatch: pytest.MonkeyPatch, arch: str, width: int, batch: int, k: int
) -> None:
    """The engine with the CUDA λ_max (forced here on CPU) gives the r_eff of LAPACK's eigen-solver:
    channel-side Grams stored as a lower triangle (M = 160 > N = 128), sample-side ones, BN Grams
    D·G·D, conv features; rtol 1e-5 is the float32 eigen-solver's own accuracy."""
    from layerwise.moments import linalg  # where the engine's moments look lambda_max up

    cfg = small(arch, k, width=width, batch=batch, depth=3, dataset="patches", sampling="auto")
    a = simulate(cfg, workers=1)
    calls: list[int] = []
    certified = linalg.lambda_max_certified
    monkeypatch.setattr(linalg, "lambda_max", lambda g: calls.append(g.shape[0]) or certified(g))
    b = simulate(cfg, workers=1)
    assert calls  # the patch reached the engine
    for name in a:
        if name.startswith("reff"):
            np.testing.assert_allclose(b[name], a[name], rtol=1e-5, err_msg=name)
        else:
            np.testing.assert_array_equal(b[name], a[name], err_msg=name)


# ------------------------------------------------------------------------------------------
# On a GPU (skipped without one; run on the lent device machine — see README "GPU")
# ------------------------------------------------------------------------------------------
cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


@cuda
@pytest.mark.parametrize("arch", ["vanilla", "bn_ff", "bn_res"])
@pytest.mark.parametrize("k, conv", [(1, "auto"), (3, "fft"), (3, "direct")])
def test_cuda_noise_is_jvp_and_moments_match_reference(arch: str, k: int, conv: str) -> None:
    cfg = small(arch, k, depth=3 if arch == "bn_res" else 5, device="cuda", conv=conv)
    got = simulate(cfg)
    for net in range(cfg.n_sims):
        ref = jvp_reference(cfg, net, "cuda")
        for name, r in ref.items():
            np.testing.assert_allclose(
                got[name][net], r, rtol=2e-4, atol=1e-9, err_msg=f"cuda {arch} k={k} {name}"
            )


@cuda
@pytest.mark.parametrize("k", [1, 3])
def test_cuda_determinism_and_blocking(k: int) -> None:
    cfg = small(
        "bn_ff",
        k,
        width=64 if k == 1 else 16,
        batch=8,
        depth=6,
        device="cuda",
        sampling="auto",
        n_sims=3,
    )
    a, b = simulate(cfg), simulate(cfg)
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    # cuBLAS picks kernels by batch size, so on a GPU the blocking changes the rounding (not more)
    np.testing.assert_allclose(simulate(cfg, sims=[2])["chi_loc4"][0], a["chi_loc4"][2], rtol=1e-5)


@cuda
def test_cuda_projected_sampling_is_deterministic() -> None:
    """Projected sampling asked for explicitly on CUDA (``"auto"`` no longer picks it there) still
    runs and gives the same numbers twice."""
    cfg = MomentsConfig(
        arch="bn_ff",
        kernel_size=1,
        width=48,
        batch=6,
        depth=4,
        n_sims=2,
        dataset="patches",
        device="cuda",
        sampling="projected",
        seed=5,
    )
    a, b = simulate(cfg), simulate(cfg)
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


@cuda
def test_cuda_lambda_max_is_certified_against_float64_eigvalsh() -> None:
    from layerwise.moments import LAMBDA_MAX_RTOL, lambda_max

    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 300, 96)) * np.geomspace(0.1, 3.0, 96) + rng.standard_normal(
        (6, 1, 96)
    )
    g = torch.from_numpy(x.transpose(0, 2, 1) @ x)
    ref = np.linalg.eigvalsh(g.numpy())[:, -1]
    got = lambda_max(g.float().cuda()).cpu().numpy()  # from the float32 Gram, as in the engine
    np.testing.assert_allclose(got, ref, rtol=LAMBDA_MAX_RTOL + 1e-6)


def test_lambda_max_falls_back_to_float64_when_the_float32_solver_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # MKL's float32 eigen-solver can fail to converge on a finite Gram matrix with many zero rows
    # (met at Chapter 3's default scale on an AVX-512 CPU); lambda_max then solves in float64
    from layerwise.moments import linalg

    x = torch.randn(2, 40, 6, dtype=torch.float32, generator=torch.Generator().manual_seed(0))
    x[:, :, :3] = 0.0  # dead units: zero rows and columns of the Gram matrix
    g = linalg._gram(x)
    exact = torch.linalg.eigvalsh(g.double())[:, -1]
    solver = torch.linalg.eigvalsh

    def float32_fails(a: torch.Tensor) -> torch.Tensor:
        if a.dtype == torch.float32:
            raise torch.linalg.LinAlgError("linalg.eigh: The algorithm failed to converge")
        return solver(a)

    monkeypatch.setattr(torch.linalg, "eigvalsh", float32_fails)
    got = linalg.lambda_max(g)
    assert got.dtype == torch.float64 and torch.equal(got, exact)
