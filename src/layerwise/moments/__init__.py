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

The package separates the numerics from the runtime:

* :mod:`.config` — architectures, locations, :class:`MomentsConfig`;
* :mod:`.draws` — seeds, input images and noise, weights of one network;
* :mod:`.layers` — the layers of a block of networks (dense / projected, direct / Fourier
  convolution, BN, ReLU, renormalisation) and :func:`~.layers.propagate` through a whole network;
* :mod:`.stats` — the moments (:func:`feature_moments`, :func:`tensor_moments`);
* :mod:`.linalg` — Gram matrices, :func:`lambda_max`, :func:`lambda_max_certified`, the QR factor;
* :mod:`.runtime` — :func:`simulate`: blocks, worker threads, heap memory, progress.

Everything public is re-exported here: ``from layerwise.moments import simulate, MomentsConfig``.
"""

from __future__ import annotations

from ..params import ParameterError
from .config import (
    ARCHS,
    BOUNDARIES,
    BUILTIN_DATASETS,
    CONV_ALGORITHMS,
    LOCATION_NAMES,
    LOCATIONS,
    MOMENTS,
    SAMPLINGS,
    MomentsConfig,
)
from .draws import network_images, network_inputs, network_seed, network_weights, weight_shapes
from .layers import Observer, WeightFn, pad_boundary, propagate
from .linalg import LAMBDA_MAX_RTOL, lambda_max, lambda_max_certified, projection_factor
from .runtime import HeapGuard, resident_bytes, reuse_freed_memory, save_npz, simulate
from .stats import feature_moments, tensor_moments

__all__ = [
    "ARCHS",
    "BOUNDARIES",
    "BUILTIN_DATASETS",
    "CONV_ALGORITHMS",
    "HeapGuard",
    "LAMBDA_MAX_RTOL",
    "LOCATIONS",
    "LOCATION_NAMES",
    "MOMENTS",
    "MomentsConfig",
    "Observer",
    "ParameterError",
    "SAMPLINGS",
    "WeightFn",
    "feature_moments",
    "lambda_max",
    "lambda_max_certified",
    "network_images",
    "network_inputs",
    "network_seed",
    "network_weights",
    "pad_boundary",
    "projection_factor",
    "propagate",
    "resident_bytes",
    "reuse_freed_memory",
    "save_npz",
    "simulate",
    "tensor_moments",
    "weight_shapes",
]
