"""Moments engine: signal and first-order noise through random deep networks (Labatie 2019).

Reproduces the set-up of Labatie, *Characterizing Well-Behaved vs. Pathological Deep Neural
Networks* (ICML 2019, ``papers/002_…``), §2 Eq. (1)–(2) and appendix A, as restated in SPEC §2
"Chapters 3–5":

* input: a batch of ``B`` images standardised per channel (zero mean, unit variance over batch and
  positions) and an input noise ``dx⁰`` i.i.d. N(0, 1) of the same shape;
* a first random *linear* layer (weights N(0, 1/fan_in), no bias, no activation) to width ``N``: a
  dense layer on the flattened image when ``kernel_size == 1``, else a k×k convolution of stride 2
  (32×32 → 16×16);
* ``depth`` layers (ResNets: ``depth`` residual units of ``res_depth`` layers) with He weights
  N(0, 2/fan_in), zero biases, ReLU, BN in test mode with the batch's own statistics (ε);
* the noise is propagated to first order, Eq. (2): ``dz = W*dx``, ``dx' = 1{z>0} ⊙ dz``; BN only
  rescales it, ``dy = dz/√(v_c+ε)``.  It is renormalised after every layer (every residual unit)
  and its log-scale accumulated in float64, so χ of 10²⁰ and far beyond does not overflow.

Moments (Labatie §3.1; SPEC), over batch, positions and channels, ``c`` a channel, ``m_c`` its mean
over batch and positions:

* ``nu1_abs_signal`` ν₁(|x|) = E|x|,  ``nu2_signal`` ν₂(x) = E x²,
* ``mu2_signal`` μ₂(x) = E (x − m_c)²,  ``mu4_signal`` μ₄(x) = E (x − m_c)⁴,
* ``mu2_noise`` μ₂(dx) = E dx² (the noise is centred with respect to its own distribution, so its
  central and non-central moments coincide, Labatie §3.1),
* ``reff_signal`` / ``reff_noise`` r_eff = Tr C / λ_max(C) (Vershynin 2010; Labatie §3.1), C the
  channel covariance over batch and positions (centred for x, uncentred for dx),
* ``chi`` the normalised sensitivity χ = √(μ₂(dx)/μ₂(x)) / √(μ₂(dx⁰)/μ₂(x⁰)) (Labatie Eq. 3),
  with ``x⁰, dx⁰`` the standardised input images and input noise.

Performance (SPEC §3): the networks of a block are propagated together, each with independent
weights (``torch.bmm`` for dense layers), signal and noise in one product (concatenated along the
batch axis); on CPU, dense layers with fewer signal+noise rows than units are drawn *projected*
(``MomentsConfig.sampling``: Z = Rᵀ G from the QR of the rows, exact in distribution, 2B·N random
numbers instead of N²) and periodic k×k layers run in the Fourier domain (``MomentsConfig.conv``:
real DFT matrices, per-frequency channel products with 3 real products per complex one, ≈ 5×
fewer flops than the direct convolution at paper scale), other boundaries through oneDNN (on
CUDA, where small factorisations and many small products are slow: explicit weights, cuDNN); only
one layer is kept in memory, elementwise steps work in place and, on CPU, freed memory stays in
the heap while the engine runs (:func:`reuse_freed_memory`); r_eff uses the smaller of the two
Gram matrices (lower triangle only when it is channel-side and large; for BN outputs, D·G·D
from the pre-BN one) and one λ_max call per location (:func:`lambda_max`: LAPACK's symmetric
eigen-solver on CPU, a certified product-based method on CUDA; never an SVD), only at record
steps.  Every network draws its input noise and weights from its own generator seeded from
``(seed, network index)`` so that results do not depend on how networks are blocked.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import math
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from .data import load_images, standardize_per_channel
from .params import (
    ParameterError,
    check_choice,
    check_divisible,
    check_positive,
    check_positive_int,
    resolve_device,
)

CODE_VERSION = "moments-5"  # 2: projected sampling of dense layers; 3: FFT convolution (``MomentsConfig.conv``); 4: separable W_f, Grams blocked from N = 128 (rounding-level changes); 5: on CUDA, certified λ_max and "auto" = explicit sampling, direct conv (CPU numbers unchanged)
"""Bump whenever the numbers produced by :func:`simulate` change (the results store keys on it)."""

ARCHS: tuple[str, ...] = ("vanilla", "bn_ff", "bn_res")
BOUNDARIES: tuple[str, ...] = ("periodic", "zero_padding", "symmetric")
BUILTIN_DATASETS: tuple[str, ...] = ("patches", "digits", "gaussian")
SAMPLINGS: tuple[str, ...] = ("auto", "explicit", "projected")
CONV_ALGORITHMS: tuple[str, ...] = ("auto", "direct", "fft")
MOMENTS: tuple[str, ...] = (
    "nu1_abs_signal",
    "nu2_signal",
    "mu2_signal",
    "mu4_signal",
    "mu2_noise",
    "reff_signal",
    "reff_noise",
    "chi",
)
LOCATIONS: dict[str, tuple[str, ...]] = {
    "vanilla": ("loc1", "loc2", "loc3"),
    "bn_ff": ("loc1", "loc2", "loc3", "loc4"),
    "bn_res": ("loc1", "loc2", "loc3", "loc4", "loc5"),
}
LOCATION_NAMES: dict[str, dict[str, str]] = {
    "vanilla": {
        "loc1": "layer input x^{l-1} (before the layer's weights)",
        "loc2": "pre-activation z^l = W^l * x^{l-1} (after the weights)",
        "loc3": "post-activation x^l = relu(z^l) (after ReLU)",
    },
    "bn_ff": {
        "loc1": "layer input x^{l-1} (before the layer's weights)",
        "loc2": "z^l = W^l * x^{l-1} (after the weights)",
        "loc3": "y^l = BN(z^l) (after batch normalisation)",
        "loc4": "x^l = relu(y^l) (after ReLU)",
    },
    "bn_res": {
        "loc1": "unit input x^{u-1} (= the first layer's BN input)",
        "loc2": "BN(x^{u-1}) (first layer of the unit, after BN)",
        "loc3": "relu(BN(x^{u-1})) (first layer, after ReLU)",
        "loc4": "W * relu(BN(x^{u-1})) (first layer, after the weights)",
        "loc5": "x^u = x^{u-1} + residual branch (after the addition)",
    },
}
"""Each location of each architecture, in words (``LOCATIONS[arch]`` gives their order)."""


# --------------------------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------------------------
def _check_dataset(dataset: Any) -> str:
    if not isinstance(dataset, str):
        raise ParameterError(f"dataset={dataset!r} is not allowed; choose one of: patches, digits, gaussian, cifar10:DIR, mnist:DIR")
    kind, sep, arg = dataset.partition(":")
    if (kind in BUILTIN_DATASETS and not sep) or (kind in ("cifar10", "mnist") and arg):
        return dataset
    raise ParameterError(
        f"dataset={dataset!r} is not allowed; choose one of: patches, digits, gaussian, cifar10:DIR, mnist:DIR"
    )


@dataclass(frozen=True)
class MomentsConfig:
    """Everything a moments run depends on (SPEC §2, Labatie appendix A); validated at creation.

    ``records`` is the number R of evenly spaced records (at layers — residual units for
    ``bn_res`` — ``depth/R, 2·depth/R, …, depth``) and must divide ``depth``.  ``kernel_size=1``
    means a fully-connected network (flattened input, dense layers); otherwise an odd k ≥ 3.

    ``sampling`` says how a dense layer's product Z = X W is drawn, X the (M × K) matrix of the
    M = 2·B signal and noise rows of one network and W (K × N) i.i.d. N(0, σ²):

    * ``"explicit"``: draw W (K·N numbers) and multiply;
    * ``"projected"``: for every dense layer with M < min(K, N), factor Xᵀ = Q R (Householder QR, R with
      a non-negative diagonal) and set Z = Rᵀ G with G (M × N) i.i.d. N(0, σ²).  Qᵀ W is (M × N)
      i.i.d. N(0, σ²) for any orthonormal Q independent of W, so Z = X (Q G) has exactly the law
      of X W given X; the weights of every layer are fresh, so the joint law of all recorded
      moments is unchanged.  The realised map Q G is linear and shared by signal and noise rows,
      so the noise is still the exact first-order derivative of the sampled network.  M·N random
      numbers and ≈ 2·M²·(K + N) flops instead of K·N numbers and 2·M·K·N flops.  Layers with
      M ≥ min(K, N) are drawn explicitly.

    Default (``"auto"``): on CPU ``"projected"`` for fully-connected nets with 2·batch < width, else
    ``"explicit"``; on CUDA always ``"explicit"`` (the GPU's small QR factorisations cost more
    than the product they save: 1.5–2× slower on an H100, measured); convolutional nets are
    always ``"explicit"``.

    ``conv`` says how the k×k layers after the first (stride-2) one are computed; both give the
    same convolution, to float32 rounding:

    * ``"direct"``: pad the map (periodic, zeros or symmetric) and call oneDNN's convolution,
      2·M·k²·C·N flops for M signal+noise positions;
    * ``"fft"`` (periodic boundaries only): by the convolution theorem a circular k×k
      cross-correlation is, at every spatial frequency f of the H×W map, a channel product
      Z_f = X_f W_f with W_f[c, n] = Σ_{a,b} w[n, c, a, b]·exp(2πi(f₁(a−p)/H + f₂(b−p)/W)),
      p = k//2: a real DFT of the map (H·(W/2+1) frequencies, as matrix products), 3 real
      products per complex one, the inverse DFT (see ``_Block.fft_conv``) — 4.9× fewer flops
      than the direct convolution at paper scale, 3.3× at N = 128, B = 16, transforms and W_f
      included (2.5× and 2.1× for a whole network, r_eff Grams included).  The same
      weights w are drawn, so the two agree network by network.

    Default (``"auto"``): on CPU ``"fft"`` for periodic boundaries, else ``"direct"``; on CUDA
    always ``"direct"`` (cuDNN; the Fourier path's many small products are launch-bound there:
    3.2× slower at N = 128, B = 16 and 1.2× at paper scale on an H100, measured).
    """

    arch: str = "bn_ff"
    kernel_size: int = 3
    width: int = 512
    batch: int = 64
    depth: int = 200
    res_depth: int = 2
    boundary: str = "periodic"
    dataset: str = "patches"
    n_sims: int = 1
    records: int | None = None
    seed: int = 0
    device: str = "auto"
    epsilon: float = 1e-3
    reff_signal: bool = True
    reff_noise: bool = True
    sampling: str = "auto"
    conv: str = "auto"

    def __post_init__(self) -> None:
        check_choice("arch", self.arch, ARCHS)
        k = check_positive_int("kernel_size", self.kernel_size)
        if k != 1 and k % 2 == 0:
            raise ParameterError(
                f"kernel_size={k} is not allowed; choose 1 (fully-connected) or an odd size >= 3"
            )
        check_positive_int("width", self.width)
        check_positive_int("batch", self.batch)
        if self.batch < 2:
            raise ParameterError(f"batch={self.batch} must be >= 2 (moments are centred over the batch)")
        check_positive_int("depth", self.depth)
        check_positive_int("res_depth", self.res_depth)
        check_choice("boundary", self.boundary, BOUNDARIES)
        _check_dataset(self.dataset)
        check_positive_int("n_sims", self.n_sims)
        if self.records is None:
            object.__setattr__(self, "records", self.depth)
        check_positive_int("records", self.records)
        if self.records > self.depth:
            raise ParameterError(f"records={self.records} must be <= depth={self.depth}")
        check_divisible("depth", self.depth, "records", self.records)
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise ParameterError(f"seed={self.seed!r} must be a non-negative integer")
        check_choice("device", self.device, ("auto", "cpu", "cuda"))
        object.__setattr__(self, "epsilon", check_positive("epsilon", self.epsilon))
        for name in ("reff_signal", "reff_noise"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ParameterError(f"{name}={getattr(self, name)!r} must be True or False")
        check_choice("sampling", self.sampling, SAMPLINGS)
        check_choice("conv", self.conv, CONV_ALGORITHMS)
        if self.conv == "fft" and (k == 1 or self.boundary != "periodic"):
            raise ParameterError(
                f"conv='fft' is only for convolutional nets with boundary='periodic', not kernel_size={k}, "
                f"boundary={self.boundary!r}; use conv='direct' or 'auto'"
            )
        if self.sampling == "projected" and k != 1:
            raise ParameterError(
                f"sampling='projected' is only for fully-connected nets (kernel_size=1), not kernel_size={k}; "
                "use sampling='explicit'"
            )

    @property
    def interval(self) -> int:
        """Layers (residual units) between two records."""
        return self.depth // self.records

    @property
    def record_depths(self) -> np.ndarray:
        """Layer (residual-unit) index of each record, shape (R,)."""
        return np.arange(1, self.records + 1, dtype=np.int64) * self.interval

    @property
    def locations(self) -> tuple[str, ...]:
        return LOCATIONS[self.arch]

    @property
    def n_layers(self) -> int:
        """Number of weight layers after the first random layer."""
        return self.depth * (self.res_depth if self.arch == "bn_res" else 1)

    @property
    def on_cuda(self) -> bool:
        """Whether the run goes to a GPU (``device="cuda"``, or ``"auto"`` with one visible)."""
        return self.device == "cuda" or (self.device == "auto" and torch.cuda.is_available())

    @property
    def sampling_used(self) -> str:
        """The sampling actually used: ``"auto"`` resolves to ``"projected"`` for fully-connected nets
        with 2·batch < width on CPU and to ``"explicit"`` otherwise (always on CUDA). The field keeps
        what was asked for, so ``dataclasses.replace(cfg, kernel_size=3)`` re-resolves instead of
        inheriting a choice made for another architecture or device."""
        if self.sampling != "auto":
            return self.sampling
        dense_wide = self.kernel_size == 1 and 2 * self.batch < self.width
        return "projected" if (dense_wide and not self.on_cuda) else "explicit"

    @property
    def conv_used(self) -> str:
        """How the k×k layers after the first are computed: ``"fft"`` (``"auto"`` with periodic
        boundaries on CPU: a circular convolution is a per-frequency channel product, Z_f = X_f W_f)
        or ``"direct"`` (oneDNN on the padded map, cuDNN on CUDA); ``"none"`` for fully-connected
        nets."""
        if self.kernel_size == 1:
            return "none"
        if self.conv != "auto":
            return self.conv
        return "fft" if (self.boundary == "periodic" and not self.on_cuda) else "direct"

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (for the results store key); ``device`` is kept, the store may drop it."""
        return asdict(self)

    def array_names(self) -> list[str]:
        """Names of the arrays :func:`simulate` returns, ``<moment>_<loc>``."""
        return [f"{m}_{loc}" for m in MOMENTS for loc in self.locations]


# --------------------------------------------------------------------------------------------
# Seeds, inputs and weights of one network
# --------------------------------------------------------------------------------------------
def network_seed(seed: int, net: int, stream: int = 0) -> int:
    """63-bit seed of stream ``stream`` of network ``net`` (independent of blocking)."""
    state = np.random.SeedSequence([int(seed), int(net), int(stream), 0x4C57]).generate_state(2, np.uint64)
    return int((int(state[0]) << 1 ^ int(state[1])) & ((1 << 63) - 1))


def network_images(cfg: MomentsConfig, net: int) -> np.ndarray:
    """The standardised input images x⁰ of network ``net``, shape (B, C, H, W), float32."""
    x = load_images(cfg.dataset, cfg.batch, seed=network_seed(cfg.seed, net, 1) % (2**32))
    return standardize_per_channel(np.asarray(x, dtype=np.float32))


def _fan_in_first(cfg: MomentsConfig, img_shape: Sequence[int]) -> int:
    c, h, w = img_shape
    return c * h * w if cfg.kernel_size == 1 else c * cfg.kernel_size**2


def _projects(cfg: MomentsConfig, fan_in: int) -> bool:
    """Whether a dense layer is drawn projected: M = 2·batch rows < min(fan_in, width).

    (With M ≥ fan_out the QR, ≈ 2·fan_in·M² flops, costs more than the explicit product.)
    """
    return cfg.sampling_used == "projected" and 2 * cfg.batch < min(fan_in, cfg.width)


def weight_shapes(cfg: MomentsConfig, img_shape: Sequence[int]) -> list[tuple[tuple[int, ...], float]]:
    """(shape, std) of each random tensor a network draws, in drawing order.

    Dense weights are ``(fan_in, fan_out)`` and act as ``x @ W``; convolution weights are
    ``(out, in, k, k)`` (PyTorch layout).  First layer std 1/√fan_in, then He std √(2/fan_in).
    A projected dense layer (``cfg.sampling_used == "projected"`` and 2·batch < min(fan_in, width)) draws
    G of shape ``(2·batch, fan_out)`` instead, with the same std.
    """
    n, k = cfg.width, cfg.kernel_size
    c = img_shape[0]
    if k == 1:
        f0, m = _fan_in_first(cfg, img_shape), 2 * cfg.batch
        first = ((m if _projects(cfg, f0) else f0, n), 1.0 / math.sqrt(f0))
        rest = ((m if _projects(cfg, n) else n, n), math.sqrt(2.0 / n))
    else:
        first = ((n, c, k, k), 1.0 / math.sqrt(c * k * k))
        rest = ((n, n, k, k), math.sqrt(2.0 / (n * k * k)))
    return [first] + [rest] * cfg.n_layers


def _generator(cfg_device: str, seed: int) -> torch.Generator:
    g = torch.Generator(device=cfg_device)
    g.manual_seed(seed)
    return g


def network_inputs(cfg: MomentsConfig, net: int, device: str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """Input x⁰ (standardised images) and noise dx⁰ ~ N(0, 1) of network ``net`` (float32)."""
    x0 = torch.from_numpy(network_images(cfg, net)).to(device)
    g = _generator(device, network_seed(cfg.seed, net, 0))
    dx0 = torch.empty(x0.shape, device=device).normal_(0.0, 1.0, generator=g)
    return x0, dx0


def network_weights(cfg: MomentsConfig, net: int, device: str = "cpu") -> list[torch.Tensor]:
    """All weights of network ``net`` exactly as :func:`simulate` draws them (for tests/brute force).

    The generator of stream 0 first draws dx⁰ (see :func:`network_inputs`), then the weights
    in order, each with ``Tensor.normal_(0, std)``.  For projected dense layers these are the
    (2·batch × N) matrices G of :class:`MomentsConfig` ``sampling``, not N × N weights.
    """
    x0 = network_images(cfg, net)
    g = _generator(device, network_seed(cfg.seed, net, 0))
    torch.empty(x0.shape, device=device).normal_(0.0, 1.0, generator=g)
    return [torch.empty(s, device=device).normal_(0.0, std, generator=g) for s, std in weight_shapes(cfg, x0.shape[1:])]


# --------------------------------------------------------------------------------------------
# Moments of a tensor
# --------------------------------------------------------------------------------------------
def _gram(x: torch.Tensor) -> torch.Tensor:
    """The smaller Gram matrix of a batch X (S, M, N): XXᵀ (M×M) if M < N else XᵀX (N×N).

    XᵀX and XXᵀ share their non-zero eigenvalues, so λ_max of the channel covariance comes from
    :func:`lambda_max` (no SVD) of the smaller one.  Channel-side Grams with N ≥ 128 hold only
    their lower triangle (the upper one is zero); :func:`lambda_max` reads only the lower one.
    """
    s, m, n = x.shape
    if m < n:
        return torch.bmm(x, x.transpose(1, 2))
    if n < 128:
        return torch.bmm(x.transpose(1, 2), x)
    # large channel-side Gram: only the lower triangle, by 2×2 blocks (3 products of 4, measured
    # 0.8× the time of one full product at N = 512, 0.87× at N = 128); lambda_max reads only the
    # lower triangle
    h = n // 2
    a, b = x[:, :, :h], x[:, :, h:]
    g = torch.empty((s, n, n), dtype=x.dtype, device=x.device)
    g[:, :h, :h] = torch.bmm(a.mT, a)
    g[:, h:, :h] = torch.bmm(b.mT, a)
    g[:, h:, h:] = torch.bmm(b.mT, b)
    g[:, :h, h:] = 0.0
    return g


LAMBDA_MAX_RTOL = 1e-6
"""Relative accuracy certified by :func:`lambda_max_certified` (far below the float32 Gram's own
rounding, ≈ √M·2⁻²⁴ relative per entry for M summed products)."""


def lambda_max_certified(g: torch.Tensor, rtol: float = LAMBDA_MAX_RTOL, squarings: int = 12) -> torch.Tensor:
    """λ_max of each symmetric positive semi-definite matrix of a batch (S, n, n), certified, float64.

    Only the lower triangle of ``g`` is read (as ``eigvalsh(UPLO="L")`` does).  Three steps, all
    matrix products and one Cholesky factorisation — what a GPU does well, unlike the small
    symmetric eigen-solvers (on an H100, ``eigvalsh`` took 90 % of a fully-connected run):

    1. repeated squaring P ← P²/Tr P² from P = A/Tr A, ``squarings`` times (P → the projector onto
       the top eigenspace; components of an eigenvalue λ_j are damped by (λ_j/λ_max)^(2^squarings));
    2. θ = vᵀAv / vᵀv, the Rayleigh quotient of the column v of P with the largest diagonal entry:
       θ ≤ λ_max for every v (Courant–Fischer);
    3. the certificate: μ = θ·(1 + ``rtol``); μI − A is positive definite iff λ_max < μ, checked by
       a float64 Cholesky factorisation (``torch.linalg.cholesky_ex``; its backward error,
       ≈ n·2⁻⁵³·‖A‖, is 10⁷ times smaller than the margin).

    So every returned θ satisfies λ_max/(1 + rtol) < θ ≤ λ_max.  Matrices whose certificate fails
    (λ_max nearly degenerate with a lower eigenvalue, closer than the squarings resolve) get
    λ_max from ``torch.linalg.eigvalsh`` instead; all-zero matrices get 0.
    """
    a = g.double()
    a = a.tril() + a.tril(-1).mT  # the symmetric matrix of the lower triangle
    n, tiny = a.shape[-1], torch.finfo(a.dtype).tiny
    tr = a.diagonal(dim1=-2, dim2=-1).sum(-1)
    pos = tr > 0
    p = a / torch.where(pos, tr, 1.0).view(-1, 1, 1)
    for _ in range(squarings):
        p = torch.bmm(p, p)
        p = p / p.diagonal(dim1=-2, dim2=-1).sum(-1).clamp_min(tiny).view(-1, 1, 1)
    i = p.diagonal(dim1=-2, dim2=-1).argmax(-1)
    v = torch.gather(p, 2, i.view(-1, 1, 1).expand(-1, n, 1))  # (S, n, 1): column i of P
    theta = (v * torch.bmm(a, v)).sum((1, 2)) / (v * v).sum((1, 2)).clamp_min(tiny)
    theta = torch.where(pos, theta, 0.0)
    mu = theta * (1.0 + rtol)
    eye = torch.eye(n, dtype=a.dtype, device=a.device)
    info = torch.linalg.cholesky_ex(mu.view(-1, 1, 1) * eye - a)[1]
    bad = pos & (info != 0)
    if bool(bad.any()):  # theta is torch.where's fresh tensor: filled in place
        theta[bad] = torch.linalg.eigvalsh(a[bad])[:, -1]
    return theta


def lambda_max(g: torch.Tensor) -> torch.Tensor:
    """λ_max (float64, shape (S,)) of a batch of symmetric PSD Gram matrices, lower triangle read.

    CPU: LAPACK's symmetric eigen-solver (``torch.linalg.eigvalsh``; exact to float32 rounding and
    faster there than any product-based method, measured).  CUDA: :func:`lambda_max_certified`
    (relative error < :data:`LAMBDA_MAX_RTOL`, certified), since the GPU's batched Jacobi solver
    costs tens of ms per call (measured on an H100: 90 % of a fully-connected run).
    """
    if g.device.type == "cuda":
        return lambda_max_certified(g)
    return torch.linalg.eigvalsh(g)[:, -1].double()


def _given(grams: dict[str, torch.Tensor] | None, key: str, x: torch.Tensor) -> torch.Tensor:
    """``grams[key]`` if present, else :func:`_gram` of ``x`` (stored in ``grams`` when a dict)."""
    if grams is not None and key in grams:
        return grams[key]
    g = _gram(x)
    if grams is not None:
        grams[key] = g
    return g


def feature_moments(
    x: torch.Tensor | None,
    dx: torch.Tensor | None = None,
    *,
    reff_signal: bool = True,
    reff_noise: bool = True,
    grams: dict[str, torch.Tensor] | None = None,
) -> dict[str, torch.Tensor]:
    """Moments of signal features ``x`` and noise features ``dx``, each of shape (S, M, N).

    S independent networks, M samples (batch × positions), N channels.  Returns float64 tensors
    of shape (S,): ``nu1_abs_signal`` E|x|, ``nu2_signal`` E x², ``mu2_signal`` E (x−m_c)²,
    ``mu4_signal`` E (x−m_c)⁴, ``reff_signal`` Tr C/λ_max(C) with C = X_cᵀX_c/M (Labatie §3.1),
    and for the noise ``mu2_noise`` E dx² and ``reff_noise`` (uncentred C = dXᵀdX/M).  The noise
    is taken as given (the caller rescales by its log-scale).  r_eff entries are NaN when off.

    ``grams``: if given, a dict that may hold the Gram matrices to use (keys ``reff_signal``,
    ``reff_noise``, as :func:`_gram` of X_c and dX) instead of computing them; the ones computed
    are stored in it (the engine reuses them: a BN output's channel Gram is D·G·D).
    """
    out: dict[str, torch.Tensor] = {}
    norm = torch.linalg.vector_norm
    gl: list[torch.Tensor] = []  # Gram matrices of r_eff, one lambda_max call for all
    names: list[tuple[str, torch.Tensor]] = []
    if x is not None:
        s, m, n = x.shape
        cnt = float(m * n)
        # centre per channel first (no ν₂ − m² cancellation: vanilla nets' signal is nearly constant)
        xc = x - x.mean(dim=1, keepdim=True)
        dims = (1, 2)
        # (measured: ‖·‖₁ and ‖·‖₄ reductions are 2–25× slower than abs().sum() and ‖x_c²‖₂)
        sq = xc * xc
        st = torch.stack([x.abs().sum(dim=dims), norm(x, 2, dim=dims), norm(xc, 2, dim=dims), norm(sq, 2, dim=dims)], 1)
        st = st.double()
        out["nu1_abs_signal"] = st[:, 0] / cnt
        out["nu2_signal"] = st[:, 1] ** 2 / cnt
        mu2 = st[:, 2] ** 2 / cnt
        out["mu2_signal"] = mu2
        out["mu4_signal"] = st[:, 3] ** 2 / cnt  # Σ x_c⁴ = ‖x_c²‖₂²
        if reff_signal:
            gl.append(_given(grams, "reff_signal", xc))
            names.append(("reff_signal", n * mu2 * m))  # Tr(X_cᵀX_c) = Σ x_c², free
        else:
            out["reff_signal"] = torch.full((x.shape[0],), float("nan"), dtype=torch.float64, device=x.device)
    if dx is not None:
        s, m, n = dx.shape
        mu2n = norm(dx, 2, dim=(1, 2)).double() ** 2 / float(m * n)
        out["mu2_noise"] = mu2n
        if reff_noise:
            gl.append(_given(grams, "reff_noise", dx))
            names.append(("reff_noise", n * mu2n * m))
        else:
            out["reff_noise"] = torch.full((dx.shape[0],), float("nan"), dtype=torch.float64, device=dx.device)
    if gl:
        lam = lambda_max(gl[0] if len(gl) == 1 else torch.cat(gl))
        for i, (name, trace) in enumerate(names):
            out[name] = trace / lam[i * trace.shape[0] : (i + 1) * trace.shape[0]]
    return out


def _to_features(x: np.ndarray | torch.Tensor) -> torch.Tensor:
    """(B, C, *spatial) or (B, C) → (1, B·positions, C) float64 tensor."""
    t = torch.as_tensor(np.asarray(x) if not isinstance(x, torch.Tensor) else x).double()
    if t.ndim < 2:
        raise ParameterError(f"tensor of shape {tuple(t.shape)} must be (batch, channels, *spatial)")
    c = t.shape[1]
    return t.reshape(t.shape[0], c, -1).permute(0, 2, 1).reshape(1, -1, c)


def tensor_moments(
    x: np.ndarray | torch.Tensor,
    dx: np.ndarray | torch.Tensor | None = None,
    *,
    x0: np.ndarray | torch.Tensor | None = None,
    dx0: np.ndarray | torch.Tensor | None = None,
    reff: bool = True,
) -> dict[str, float]:
    """All moments (Labatie §3.1) of a signal ``x`` and noise ``dx`` of shape (B, C, *spatial).

    Channels are axis 1; moments average over batch, positions and channels.  With the input
    ``x0, dx0`` also given, ``chi`` = √(μ₂(dx)/μ₂(x)) / √(μ₂(dx⁰)/μ₂(x⁰)) (Labatie Eq. 3).
    Computed in float64 (this is the slow, plain reference used by tests and chapters).
    """
    f = feature_moments(_to_features(x), None if dx is None else _to_features(dx), reff_signal=reff, reff_noise=reff)
    out = {k: float(v[0]) for k, v in f.items()}
    if dx is not None and x0 is not None and dx0 is not None:
        m0 = feature_moments(_to_features(x0), _to_features(dx0), reff_signal=False, reff_noise=False)
        chi0 = math.sqrt(float(m0["mu2_noise"][0]) / float(m0["mu2_signal"][0]))
        out["chi"] = math.sqrt(out["mu2_noise"] / out["mu2_signal"]) / chi0
    return out


# --------------------------------------------------------------------------------------------
# Propagation of a block of networks
# --------------------------------------------------------------------------------------------
def pad_boundary(x: torch.Tensor, p: int, boundary: str) -> torch.Tensor:
    """Pad the two last (spatial) axes by ``p`` with periodic, zero or symmetric boundaries.

    ``symmetric`` mirrors including the edge sample (NumPy's ``mode="symmetric"``: ``cb|abcd|dc``),
    the "reflective" condition of Labatie appendix A.
    """
    if p == 0:
        return x
    if boundary == "periodic":
        return F.pad(x, (p, p, p, p), mode="circular")
    if boundary == "zero_padding":
        return F.pad(x, (p, p, p, p))
    if boundary == "symmetric":
        if p > x.shape[-1] or p > x.shape[-2]:
            raise ParameterError(f"kernel_size is too large for symmetric padding of a {tuple(x.shape[-2:])} map")
        x = torch.cat([x[..., :p].flip(-1), x, x[..., -p:].flip(-1)], dim=-1)
        return torch.cat([x[..., :p, :].flip(-2), x, x[..., -p:, :].flip(-2)], dim=-2)
    raise ParameterError(f"boundary={boundary!r} is not allowed; choose one of: {', '.join(BOUNDARIES)}")


WeightFn = Callable[[int, int, tuple[int, ...], float], torch.Tensor]
Observer = Callable[[int, str, torch.Tensor, torch.Tensor, torch.Tensor], None]


def _pad_axis(x: torch.Tensor, p: int, boundary: str, axis: int) -> torch.Tensor:
    """Pad one axis by ``p`` on both sides (periodic wrap, zeros, or symmetric mirror)."""
    n = x.shape[axis]
    if boundary == "periodic":
        lo, hi = x.narrow(axis, n - p, p), x.narrow(axis, 0, p)
    elif boundary == "symmetric":
        lo, hi = x.narrow(axis, 0, p).flip(axis), x.narrow(axis, n - p, p).flip(axis)
    else:
        shape = list(x.shape)
        shape[axis] = p
        lo = hi = x.new_zeros(shape)
    return torch.cat([lo, x, hi], dim=axis)


def projection_factor(x: torch.Tensor) -> torch.Tensor:
    """R of Xᵀ = Q R for a batch X (S, M, K), M ≤ K: (S, M, M) upper triangular, diagonal ≥ 0.

    Householder QR (LAPACK ``geqrf``, backward stable in float32: no Gram matrix, no squared
    condition number); the rows of R are flipped to a non-negative diagonal so that R is the
    unique factor of a full-rank X (then Xᵀ R⁻¹ = Q) whatever LAPACK's sign choices.
    """
    m = x.shape[1]
    r = torch.geqrf(x.mT)[0][:, :m, :].triu()
    d = torch.diagonal(r, dim1=1, dim2=2)
    sign = torch.where(d < 0, -1.0, 1.0).to(r.dtype)
    return r * sign.unsqueeze(2)


class _Block:
    """S networks propagated together, in one channels-last layout for dense and conv nets.

    The state is one tensor ``(S, 2·B·P, N)`` (P positions, P = 1 for dense nets): rows
    ``[:B·P]`` are the signal, rows ``[B·P:]`` the noise, so that each network's own weights
    apply to both in one product (``torch.bmm`` for dense layers; for conv layers the rows are
    ordered (signal|noise, b, h, w), a (2B, H, W, N) NHWC batch, and one ``F.conv2d`` per
    network applies the k×k kernel to the padded map — except with ``cfg.conv_used == "fft"``,
    where after the first layer they are ordered (signal|noise, h, w, b) for :meth:`fft_conv`).
    The stored noise times ``exp(logscale)`` is the true first-order noise.
    """

    def __init__(self, cfg: MomentsConfig, nets: Sequence[int], device: str, weight_fn: WeightFn | None,
                 inputs: Callable[[int], tuple[torch.Tensor, torch.Tensor]] | None):
        self.cfg, self.nets, self.device = cfg, list(nets), device
        self.S, self.B, self.N = len(nets), cfg.batch, cfg.width
        self.dense = cfg.kernel_size == 1
        self.weight_fn = weight_fn
        xs, dxs, self.gens = [], [], []
        for net in self.nets:
            g = _generator(device, network_seed(cfg.seed, net, 0))
            if inputs is not None:  # the network's own weights still follow (same stream as without hook)
                x0, dx0 = inputs(net)
                x0, dx0 = x0.to(device, torch.float32), dx0.to(device, torch.float32)
                torch.empty(x0.shape, device=device).normal_(0.0, 1.0, generator=g)
            else:
                x0 = torch.from_numpy(network_images(cfg, net)).to(device)
                dx0 = torch.empty(x0.shape, device=device).normal_(0.0, 1.0, generator=g)
            self.gens.append(g)
            xs.append(x0)
            dxs.append(dx0)
        self.img_shape = tuple(xs[0].shape[1:])
        self.shapes = weight_shapes(cfg, self.img_shape)
        self.layer = 0  # index into self.shapes of the next weight to draw
        # χ normalisation √(μ₂(dx⁰)/μ₂(x⁰)) per network, float64, with the input in the network's
        # own feature layout: channels × positions for conv nets, the D = C·H·W inputs for dense nets
        chi0 = []
        for x0, dx0 in zip(xs, dxs):
            if self.dense:
                x0, dx0 = x0.reshape(self.B, -1), dx0.reshape(self.B, -1)
            # only μ₂(x⁰) and μ₂(dx⁰), centred per channel (per input for dense nets: their channels),
            # in float32 with pairwise sums (a float64 copy of the input cost a third of a small net)
            axes = (0,) if self.dense else (0, 2, 3)
            mu2 = float(torch.linalg.vector_norm(x0 - x0.mean(dim=axes, keepdim=True))) ** 2 / x0.numel()
            mu2n = float(torch.linalg.vector_norm(dx0)) ** 2 / dx0.numel()
            chi0.append(math.sqrt(mu2n / mu2))
        self.chi0 = torch.tensor(chi0, dtype=torch.float64, device=device)
        self.logscale = torch.zeros(self.S, dtype=torch.float64, device=device)
        # one copy of the inputs into the state (no cat-then-stack double copy of a large input)
        if self.dense:
            self.t = torch.empty((self.S, 2 * self.B, xs[0][0].numel()), device=device)
            for s, (x, d) in enumerate(zip(xs, dxs)):
                self.t[s, : self.B] = x.reshape(self.B, -1)
                self.t[s, self.B :] = d.reshape(self.B, -1)
            self.hw = (1, 1)
        else:  # (S, 2, B, H, W, C): rows (signal|noise, b, h, w), channels last
            c, h, w = self.img_shape
            self.t = torch.empty((self.S, 2, self.B, h, w, c), device=device)
            for s, (x, d) in enumerate(zip(xs, dxs)):
                self.t[s, 0] = x.permute(0, 2, 3, 1)
                self.t[s, 1] = d.permute(0, 2, 3, 1)
            self.hw = (h, w)
        self.BP = self.B  # rows of signal; updated to B·P by the first layer

    # ---------------- weights
    def next_weights(self) -> torch.Tensor:
        """Draw the next layer's weights of every network (each from its own generator).

        Returns ``(S, fan_in, N)`` dense matrices (``(S, 2B, N)`` draws G when projected) or
        ``(S, N, C_in, k, k)`` conv kernels (PyTorch layout).
        """
        shape, std = self.shapes[self.layer]
        w = torch.empty((self.S, *shape), device=self.device)
        for s in range(self.S):
            if self.weight_fn is not None:
                w[s] = self.weight_fn(self.nets[s], self.layer, shape, std)
            else:
                w[s].normal_(0.0, std, generator=self.gens[s])
        self.layer += 1
        return w

    # ---------------- linear map
    def linear(self, t: torch.Tensor, first: bool = False) -> torch.Tensor:
        """One layer's weights on signal and noise together (Labatie Eq. 1–2, linear part).

        Conv maps are stored with rows ordered (signal|noise, b, h, w), channels last, i.e. each
        network's state is a (2B, H, W, C) batch of images in NHWC memory: the map is padded along
        h and w (periodic, zeros, or symmetric) and one ``F.conv2d`` per network on the
        channels-last view (oneDNN direct convolution; no im2col, no shifted copies) computes the
        k×k convolution of signal and noise — or, with ``cfg.conv_used == "fft"``, the layers
        after the first go through :meth:`fft_conv`.
        """
        w = self.next_weights()
        if self.dense:
            if w.shape[1] == t.shape[2]:  # explicit: Z = X W
                return torch.bmm(t, w)
            return torch.bmm(projection_factor(t).mT, w)  # projected: Z = Rᵀ G
        if not first and self.cfg.conv_used == "fft":
            return self.fft_conv(t, w)
        k, S, B = self.cfg.kernel_size, self.S, self.B
        p = k // 2
        stride = 2 if first else 1
        h, wd = self.hw
        c = w.shape[2]
        x = t.view(S, 2 * B, h, wd, c)
        if p:
            x = _pad_axis(_pad_axis(x, p, self.cfg.boundary, 2), p, self.cfg.boundary, 3)
        ho, wo = (h - 1) // stride + 1, (wd - 1) // stride + 1
        rows = B * ho * wo
        zs = []
        for s in range(S):
            ws = w[s].contiguous(memory_format=torch.channels_last)
            zs.append(F.conv2d(x[s].permute(0, 3, 1, 2), ws, stride=stride).permute(0, 2, 3, 1))
        z = zs[0].unsqueeze(0) if S == 1 else torch.stack(zs)
        self.hw = (ho, wo)
        self.BP = rows
        if self.cfg.conv_used == "fft":  # rows (signal|noise, h, w, b) for the layers in the Fourier domain
            return z.view(S, 2, B, ho, wo, -1).permute(0, 1, 3, 4, 2, 5).reshape(S, 2 * rows, -1)
        return z.reshape(S, 2 * rows, -1)

    def _fft_setup(self, c: int, n_out: int) -> None:
        """Real DFT matrices and buffers of :meth:`fft_conv` (once per block: maps keep their size)."""
        h, wd, k, B = *self.hw, self.cfg.kernel_size, self.B
        wh = wd // 2 + 1
        dev, f64 = self.device, torch.float64
        tw = 2 * math.pi * torch.outer(torch.arange(wh, dtype=f64), torch.arange(wd, dtype=f64)) / wd  # (f₂, w)
        th = 2 * math.pi * torch.outer(torch.arange(h, dtype=f64), torch.arange(h, dtype=f64)) / h  # (f₁, h)
        ch, sh = torch.cos(th), torch.sin(th)
        # A: real DFT along w, rows (ri, f₂): Re = Σ x cos, Im = −Σ x sin
        fa = torch.cat([torch.cos(tw), -torch.sin(tw)])
        # B: complex DFT along h, input rows (h, ri), output rows (ro, f₁) — applied to signal and
        # noise u separately, written to rows (ro, f₁, u):
        # Re X = Σ_h (c·Re Y + s·Im Y), Im X = Σ_h (c·Im Y − s·Re Y), c, s = cos, sin 2πf₁h/H
        fb = torch.stack([torch.stack([ch, sh], -1), torch.stack([-sh, ch], -1)])  # (ro, f₁, h, ri)
        # B⁻¹: inverse complex DFT along f₁, input rows (ro, f₁), output rows (ri, h):
        # Re V = Σ (c·Re Z − s·Im Z), Im V = Σ (s·Re Z + c·Im Z)
        ib = torch.stack([torch.stack([ch.T, -sh.T], 1), torch.stack([sh.T, ch.T], 1)])  # (ri, h, ro, f₁)
        # A⁻¹: inverse real DFT along f₂ (Hermitian weights α = 1 at f₂ = 0, W/2, else 2; 1/(HW)),
        # input rows (f₂, ri): z = Σ α(Re V cos − Im V sin)/(HW)
        alpha = torch.full((wh,), 2.0, dtype=f64)
        alpha[0] = 1.0
        if wd % 2 == 0:
            alpha[-1] = 1.0
        ia = torch.stack([torch.cos(tw).T, -torch.sin(tw).T], -1) * (alpha / (h * wd)).view(1, wh, 1)  # (w, f₂, ri)
        # taps: W_f = Σ_(a,b) w[:, :, a, b]·exp(iφ₁(f₁, a))·exp(iφ₂(f₂, b)), φ₁ = 2πf₁(a−p)/H,
        # φ₂ = 2πf₂(b−p)/W — separable: per column f₂, U_a = Σ_b exp(iφ₂)·w[:, :, a, b] (rows
        # (ri, a), 2k of them), then for each f₁ the rows (Re, Im, Re + Im) of W_f = Σ_a exp(iφ₁)·U_a:
        # Re = Σ_a (cos φ₁ Re U_a − sin φ₁ Im U_a), Im = Σ_a (sin φ₁ Re U_a + cos φ₁ Im U_a)
        off = torch.arange(k, dtype=f64) - k // 2
        p1 = 2 * math.pi * torch.outer(torch.arange(h, dtype=f64), off) / h  # (f₁, a)
        p2 = 2 * math.pi * torch.outer(torch.arange(wh, dtype=f64), off) / wd  # (f₂, b)
        c1, s1 = torch.cos(p1), torch.sin(p1)
        taps1 = torch.stack([torch.cat([c1, -s1], 1), torch.cat([s1, c1], 1), torch.cat([c1 + s1, c1 - s1], 1)])
        taps2 = torch.zeros(wh, 2, k, k, k, dtype=f64)  # (f₂, ri, a, a', b): δ(a, a')·(cos | sin) φ₂(f₂, b)
        for a in range(k):
            taps2[:, 0, a, a] = torch.cos(p2)
            taps2[:, 1, a, a] = torch.sin(p2)
        f32 = dict(dtype=torch.float32, device=dev)
        self._fft = dict(
            a=fa.to(**f32), b=fb.reshape(2 * h, 2 * h).to(**f32), ib=ib.reshape(2 * h, 2 * h).to(**f32),
            ia=ia.reshape(wd, 2 * wh).to(**f32), taps1=taps1.to(**f32),  # (3, f₁, 2k)
            taps2=taps2.reshape(wh, 2 * k, k * k).to(**f32), u=torch.empty((2 * k, c * n_out), **f32),
            self_conj=[0] + ([wd // 2] if wd % 2 == 0 and wd > 1 else []),
            y=torch.empty((2, h, 2, wh, B * c), **f32), x=torch.empty((wh, 2, h, 2 * B, c), **f32),
            zf=torch.empty((wh, 2, h, 2 * B, n_out), **f32), v=torch.empty((wh, 2, h, 2 * B * n_out), **f32),
            wf=torch.empty((3 * 8 * c * n_out,), **f32), t1=torch.empty((8, 2 * B, n_out), **f32),
            xs=torch.empty((8, 2 * B, c), **f32),
        )

    def fft_conv(self, t: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        """Periodic k×k convolution (stride 1) by the convolution theorem (``MomentsConfig.conv``).

        Rows are ordered (signal|noise u, h, w, b) in this mode, so that each half is an
        (H·W) × (B·C) matrix and every transform is a matrix product (no FFT library, no
        transposes): A (real DFT along w), B (complex DFT along h, applied to signal and noise
        separately, written to rows (Re|Im, f₁, u) so that each frequency's signal and noise rows
        form one (2B × C) matrix X_f); the channel product Z_f = X_f W_f in real arithmetic with 3
        products instead of 4 (Re Z = X_r W_r − X_i W_i, Im Z = (X_r+X_i)(W_r+W_i) − X_r W_r −
        X_i W_i), W_f from the taps in two separable steps (along w for each column f₂, then
        along h); then B⁻¹ and A⁻¹.  Frequencies (f₂, f₁) with f₂ = 0 or W/2 and f₁ > H/2 are the
        conjugates of (f₂, H − f₁) (real maps) and are filled in, not multiplied.
        """
        S, B, k = self.S, self.B, self.cfg.kernel_size
        h, wd = self.hw
        wh = wd // 2 + 1
        n_out, c = w.shape[1], w.shape[2]
        if getattr(self, "_fft", None) is None:
            self._fft_setup(c, n_out)
        q = self._fft
        y, x, zf, v, wf, t1, xs = q["y"], q["x"], q["zf"], q["v"], q["wf"], q["t1"], q["xs"]
        hh = h // 2 + 1
        out = torch.empty((S, 2, h, wd, B * n_out), device=self.device)
        for s in range(S):
            xin = t[s].view(2 * h, wd, B * c)
            torch.matmul(q["a"], xin, out=y.view(2 * h, 2 * wh, B * c))  # A: (u, h, ri, f₂, B·C)
            yv = y.view(2, 2 * h, wh, B * c)  # rows (h, ri) of each u at one stride for each f₂
            for f2 in range(wh):
                xo = x[f2].view(2 * h, 2, B * c)  # B: rows (ro, f₁) of each u, one stride apart
                for u in range(2):
                    torch.mm(q["b"], yv[u, :, f2], out=xo[:, u])  # (a row stride BLAS takes as is)
            wt = w[s].permute(2, 3, 1, 0).reshape(k * k, c * n_out)  # (k², C·N)
            for f2 in range(wh):
                m = hh if f2 in q["self_conj"] else h  # frequencies to multiply in this column
                torch.mm(q["taps2"][f2], wt, out=q["u"])  # U_a of this column, rows (ri, a)
                for a in range(0, m, 8):  # 8 frequencies at a time: their W_f stays in cache
                    b = min(a + 8, m)
                    wc = wf[: 3 * (b - a) * c * n_out].view(3, b - a, c, n_out)  # contiguous
                    torch.matmul(q["taps1"][:, a:b], q["u"], out=wc.view(3, b - a, c * n_out))
                    xr, xi, zr, zi = x[f2, 0, a:b], x[f2, 1, a:b], zf[f2, 0, a:b], zf[f2, 1, a:b]
                    tmp, xsum = t1[: b - a], xs[: b - a]
                    torch.add(xr, xi, out=xsum)
                    torch.bmm(xr, wc[0], out=zr)  # X_r W_r
                    torch.bmm(xi, wc[1], out=tmp)  # X_i W_i
                    torch.bmm(xsum, wc[2], out=zi)  # (X_r + X_i)(W_r + W_i)
                    zi.sub_(zr).sub_(tmp)
                    zr.sub_(tmp)
                if m < h:  # Z(H − f₁) = conj Z(f₁)
                    zf[f2, 0, hh:] = zf[f2, 0, 1 : h - hh + 1].flip(0)
                    torch.neg(zf[f2, 1, 1 : h - hh + 1].flip(0), out=zf[f2, 1, hh:])
            zv = zf.view(wh, 2 * h, 2 * B * n_out)
            vv = v.view(wh, 2 * h, 2 * B * n_out)
            for f2 in range(wh):
                torch.mm(q["ib"], zv[f2], out=vv[f2])  # B⁻¹: rows (ri, h)
            vq = v.view(wh * 2, h, 2, B * n_out)  # rows (f₂, ri) at one stride for each (h, u)
            for u in range(2):
                for hi in range(h):
                    torch.mm(q["ia"], vq[:, hi, u], out=out[s, u, hi])  # A⁻¹: (w, B·N)
        return out.view(S, 2 * h * wd * B, n_out)

    # ---------------- per-channel steps
    def batchnorm(self, t: torch.Tensor, inplace: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
        """BN with the batch's statistics on the signal; the noise is only rescaled (SPEC §2).

        y = (z − m_c)·(v_c + ε)^(−1/2), dy = dz·(v_c + ε)^(−1/2).  Returns the new tensor (``t``
        itself when ``inplace``: no fresh allocation, whose page faults cost more than the
        arithmetic) and the per-channel factor 1/√(v_c+ε), shape (S, N).
        """
        bp = self.BP
        z = t[:, :bp]
        m = z.mean(dim=1, keepdim=True)  # (S,1,N); two passes beat var_mean's Welford ~10× on CPU
        zc = z - m
        v = torch.linalg.vector_norm(zc, 2, dim=1, keepdim=True) ** 2 / bp
        inv = torch.rsqrt(v + self.cfg.epsilon)
        out = t if inplace else torch.empty_like(t)
        torch.mul(zc, inv, out=out[:, :bp])
        torch.mul(t[:, bp:], inv, out=out[:, bp:])
        return out, inv[:, 0]

    def relu(self, t: torch.Tensor) -> torch.Tensor:
        """x' = relu(z), dx' = 1{z>0} ⊙ dz (Labatie Eq. 1–2), in place."""
        z = t[:, : self.BP]
        mask = torch.gt(z, 0, out=torch.empty_like(z))  # a float 0/1 mask: no bool→float conversion
        t[:, self.BP :].mul_(mask)
        z.relu_()  # measured 3× faster than multiplying both halves by a bool mask, 7× than masked_fill_
        return t

    def renormalise(self, t: torch.Tensor) -> torch.Tensor:
        """Divide each network's noise by its RMS, accumulating the log-scale in float64."""
        dx = t[:, self.BP :]
        ms = torch.linalg.vector_norm(dx, 2, dim=(1, 2)) ** 2 / (self.BP * self.N)
        dx *= torch.rsqrt(ms).view(self.S, 1, 1)
        self.logscale += 0.5 * torch.log(ms.double())
        return t

    def features(self, t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Signal and (stored) noise as (S, M, N) feature matrices, M = B·positions (views)."""
        return t[:, : self.BP], t[:, self.BP :]

    def moments(self, t: torch.Tensor, grams: dict[str, torch.Tensor] | None = None) -> dict[str, torch.Tensor]:
        """Moments of the block's state; ``grams`` as in :func:`feature_moments`."""
        x, dx = self.features(t)
        out = feature_moments(x, dx, reff_signal=self.cfg.reff_signal, reff_noise=self.cfg.reff_noise, grams=grams)
        out["mu2_noise"] = out["mu2_noise"] * torch.exp(2.0 * self.logscale)
        out["chi"] = torch.sqrt(out["mu2_noise"] / out["mu2_signal"]) / self.chi0
        return out


def resident_bytes() -> int | None:
    """Resident memory of this process in bytes (``/proc/self/statm``), or None where unreadable."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


class HeapGuard:
    """Bounds the resident memory of a run whose freed memory stays in the heap.

    Kept-but-free heap memory fragments (two worker threads allocate tensors of many sizes in turn),
    so it can grow layer after layer: ≈ 0.15 GB per layer at paper scale, 16 GB after 200 layers
    (measured).  :meth:`after_layer` is called by every worker after each layer: the first call sets
    the limit to 2 × the resident memory then + 512 MiB; a call that finds more than the limit
    returns the free heap pages to the system (``malloc_trim``) and raises the limit to 2 × what is
    left + 512 MiB if that is higher.  Trimming every layer instead would cost a quarter of a
    dense network's time (its pages are page-faulted in again; measured), so it is done only when
    needed.  ``trim`` None (no glibc, or CUDA) makes this a no-op; ``rss`` is the memory probe.
    """

    SLACK = 512 << 20

    def __init__(self, trim: Callable[[int], Any] | None, rss: Callable[[], int | None] = resident_bytes):
        self._trim, self._rss = trim, rss
        self.limit: int | None = None
        self.trims = 0
        self._lock = threading.Lock()

    def after_layer(self) -> None:
        if self._trim is None:
            return
        now = self._rss()
        if now is None:
            return
        with self._lock:
            if self.limit is None:
                self.limit = 2 * now + self.SLACK
            elif now > self.limit:
                self._trim(0)
                self.trims += 1
                left = self._rss()
                self.limit = max(self.limit, 2 * (now if left is None else left) + self.SLACK)


@contextlib.contextmanager
def reuse_freed_memory() -> Iterator[HeapGuard]:
    """Keep freed memory in the process heap while the engine runs (glibc only; else a no-op).

    PyTorch's CPU allocator takes every tensor from ``malloc``; glibc serves large blocks by
    ``mmap`` and unmaps them on free, so each layer's fresh tensors (tens to hundreds of MB at
    paper scale) are page-faulted in again, which costs more than the arithmetic on them
    (measured: ``x*x`` on a 64 MB tensor 44 ms → 6.5 ms).  Inside this context ``mallopt`` serves
    all blocks from the heap (M_MMAP_MAX = 0) and does not trim it (M_TRIM_THRESHOLD), so the next
    layer reuses the pages; the :class:`HeapGuard` it yields keeps the heap from growing without
    bound (the engine calls it after every layer).  On exit glibc's defaults are restored and the
    heap is trimmed (``malloc_trim``).  The number of arenas is left alone (one arena shared by
    the workers, M_ARENA_MAX = 1, fragmented fastest: measured).
    """
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt, trim = libc.mallopt, libc.malloc_trim
    except (OSError, AttributeError):
        yield HeapGuard(None)
        return
    m_trim, m_mmap_threshold, m_mmap_max = -1, -3, -4
    ok = mallopt(m_mmap_max, 0) and mallopt(m_trim, 2**31 - 1)
    try:
        yield HeapGuard(trim if ok else None)
    finally:
        if ok:
            # glibc defaults: 128 KiB trim / mmap thresholds, 65536 mmaps
            mallopt(m_mmap_max, 65536)
            mallopt(m_mmap_threshold, 128 * 1024)
            mallopt(m_trim, 128 * 1024)
            trim(0)


def _auto_block(cfg: MomentsConfig, n: int, device: str = "cpu") -> int:
    """Networks per block: at most 16, and bounded by the memory of their activations and weights —
    ~1 GB per block on CPU (one block per worker), a quarter of the GPU's memory on CUDA (one block
    at a time; larger blocks spread the per-layer kernel launches over more networks: at paper
    scale 8 networks per block instead of 1 cut an H100's time per network by ≈ 30 %, measured)."""
    if cfg.kernel_size == 1:
        per = 4 * (cfg.width * cfg.width * 2 + 2 * cfg.batch * cfg.width * 8)
    else:
        side = 16
        per = 4 * (cfg.width**2 * cfg.kernel_size**2 + 2 * cfg.batch * cfg.width * side * side * 8)
    budget = torch.cuda.get_device_properties(device).total_memory / 4 if device == "cuda" else 1e9
    return max(1, min(n, 16, int(budget // per)))


def simulate(
    cfg: MomentsConfig,
    sims: Iterable[int] | None = None,
    progress: bool = False,
    *,
    block: int | None = None,
    workers: int | None = None,
    observer: Observer | None = None,
    weight_fn: WeightFn | None = None,
    inputs: Callable[[int], tuple[torch.Tensor, torch.Tensor]] | None = None,
) -> dict[str, np.ndarray]:
    """Propagate signal and noise through networks ``sims`` (default ``range(cfg.n_sims)``).

    Returns ``depth`` (R,) and one float64 array ``<moment>_<loc>`` of shape (len(sims), R) per
    moment of :data:`MOMENTS` and location of ``LOCATIONS[cfg.arch]``.  Row i only depends on
    ``(cfg, sims[i])``, so blocks of networks can be computed separately and concatenated.

    On CPU, blocks of ``block`` networks run on ``workers`` threads (default: one per core), each
    with single-threaded torch operations: no OpenMP barriers (robust on a loaded machine) and
    numbers that do not depend on the number of cores or on the blocking.  On CUDA one block
    runs at a time (cuDNN deterministic, no TF32): the same call gives the same numbers, but a
    different blocking changes them at the rounding level (cuBLAS chooses kernels by batch size).

    Test hooks: ``observer(depth, loc, signal, noise, logscale)`` is called at every record
    with (S, M, N) feature tensors (true noise = noise·exp(logscale); conv rows ordered (b, h, w),
    or (h, w, b) when ``cfg.conv_used == "fft"``), views of the engine's
    state that later layers overwrite in place (copy what you keep); ``weight_fn(net, layer,
    shape, std)`` and ``inputs(net) -> (x0, dx0)`` replace the random draws.
    """
    from concurrent.futures import ThreadPoolExecutor

    sims = list(range(cfg.n_sims) if sims is None else sims)
    for s in sims:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0:
            raise ParameterError(f"sims must hold non-negative network indices, got {s!r}")
    if block is not None:
        check_positive_int("block", block)
    if workers is not None:
        check_positive_int("workers", workers)
    device = resolve_device(cfg.device)
    locs = cfg.locations
    R = cfg.records
    out = {f"{m}_{loc}": np.full((len(sims), R), np.nan) for m in MOMENTS for loc in locs}
    out_depth = cfg.record_depths
    if not sims:
        return {"depth": out_depth, **out}
    if device == "cuda":
        nw = 1
    else:
        nw = workers or (os.cpu_count() or 1)
        if observer is not None:
            nw = 1
    bs = block or _auto_block(cfg, -(-len(sims) // nw), device)
    starts = list(range(0, len(sims), bs))
    nw = max(1, min(nw, len(starts)))
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(sims) * cfg.depth, desc=f"moments {cfg.arch}", unit="layer")

    def job(b0: int) -> tuple[int, dict[str, np.ndarray]]:
        if device == "cpu":
            torch.set_num_threads(1)
        with torch.inference_mode():
            return b0, _run_block(cfg, sims[b0 : b0 + bs], device, weight_fn, inputs, observer, bar, guard)

    prev = torch.get_num_threads()
    try:
        with contextlib.ExitStack() as stack:
            if device == "cpu":  # keep freed pages in the heap, bounded by its guard
                guard = stack.enter_context(reuse_freed_memory())
            else:  # deterministic cuDNN without TF32 (float32 means float32 here: TF32's 10-bit
                # mantissa would be a 1e-3 error per convolution); no heap to guard
                stack.enter_context(torch.backends.cudnn.flags(
                    enabled=True, benchmark=False, deterministic=True, allow_tf32=False))
                guard = HeapGuard(None)
            if nw == 1:
                results = [job(b0) for b0 in starts]
            else:
                with ThreadPoolExecutor(max_workers=nw) as pool:
                    results = list(pool.map(job, starts))
    finally:
        torch.set_num_threads(prev)
    for b0, rows in results:
        for name, arr in rows.items():
            out[name][b0 : b0 + arr.shape[0]] = arr
    if bar is not None:
        bar.close()
    return {"depth": out_depth, **out}


def _run_block(cfg: MomentsConfig, nets: Sequence[int], device: str, weight_fn: WeightFn | None,
               inputs: Any, observer: Observer | None, bar: Any, guard: HeapGuard) -> dict[str, np.ndarray]:
    blk = _Block(cfg, nets, device, weight_fn, inputs)
    locs = cfg.locations
    rec: dict[str, list[torch.Tensor]] = {f"{m}_{loc}": [] for m in MOMENTS for loc in locs}
    interval = cfg.interval

    def record(depth: int, loc: str, t: torch.Tensor, cached: dict[str, torch.Tensor] | None = None,
               grams: dict[str, torch.Tensor] | None = None) -> dict[str, torch.Tensor]:
        mom = cached if cached is not None else blk.moments(t, grams)
        for m in MOMENTS:
            rec[f"{m}_{loc}"].append(mom[m])
        if observer is not None:
            x, dx = blk.features(t)
            observer(depth, loc, x, dx, blk.logscale.clone())
        return mom

    t = blk.linear(blk.t, first=True)
    del blk.t
    last: tuple[int, dict[str, torch.Tensor]] | None = None  # moments of the previous unit output
    for d in range(1, cfg.depth + 1):
        on = d % interval == 0
        cached = last[1] if (last is not None and last[0] == d - 1) else None
        if cfg.arch in ("vanilla", "bn_ff"):
            if on:
                record(d, "loc1", t, cached)
            t = blk.linear(t)
            # channel-side Gram matrices (M > N) of z give those of y = BN(z) as D·G·D, D = 1/√(v+ε):
            # y_c = z_c·D and dy = dz·D exactly (sample-side ones, M < N, have no such relation)
            grams = {} if (on and cfg.arch == "bn_ff" and blk.BP > blk.N) else None
            if on:
                record(d, "loc2", t, grams=grams)
            if cfg.arch == "bn_ff":
                t, inv = blk.batchnorm(t, inplace=True)
                if on:
                    if grams:
                        dd = inv.unsqueeze(2) * inv.unsqueeze(1)  # (S, N, N) = D·1·D
                        grams = {k: g * dd for k, g in grams.items()}
                    record(d, "loc3", t, grams=grams)
            t = blk.relu(t)
            t = blk.renormalise(t)
            if on:
                last = (d, record(d, locs[-1], t))
        else:  # bn_res, pre-activation units
            if on:
                record(d, "loc1", t, cached)
            h = t
            for j in range(cfg.res_depth):
                h, _ = blk.batchnorm(h, inplace=j > 0)  # j = 0: h is the residual stream x
                if on and j == 0:
                    record(d, "loc2", h)
                h = blk.relu(h)
                if on and j == 0:
                    record(d, "loc3", h)
                h = blk.linear(h)
                if on and j == 0:
                    record(d, "loc4", h)
            t = blk.renormalise(h.add_(t))  # h is the branch's fresh output: x_u = x + h in its buffer
            if on:
                last = (d, record(d, "loc5", t))
        guard.after_layer()
        if bar is not None:
            bar.update(len(nets))
    return {k: torch.stack(v, dim=1).cpu().numpy().astype(np.float64) for k, v in rec.items()}


def save_npz(path: str, arrays: dict[str, np.ndarray]) -> None:
    """Write the arrays of :func:`simulate` to ``path`` (``.npz``)."""
    np.savez(path, **arrays)
