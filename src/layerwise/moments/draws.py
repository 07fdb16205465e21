"""Seeds, inputs and weights of one network, independent of how networks are blocked.

Every network draws its input noise dx⁰ ~ N(0, 1) and then its weights (first layer
N(0, 1/fan_in), then He N(0, 2/fan_in); Labatie 2019 §2 and appendix A) from its own generator,
seeded from ``(seed, network index)``; its input images x⁰ are standardised per channel
(zero mean, unit variance over batch and positions).  Projected dense layers draw the
(2·batch × N) matrices G of :class:`~layerwise.moments.config.MomentsConfig` ``sampling``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from ..data import load_images, standardize_per_channel
from .config import MomentsConfig


def network_seed(seed: int, net: int, stream: int = 0) -> int:
    """63-bit seed of stream ``stream`` of network ``net`` (independent of blocking)."""
    state = np.random.SeedSequence([int(seed), int(net), int(stream), 0x4C57]).generate_state(
        2, np.uint64
    )
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


def weight_shapes(
    cfg: MomentsConfig, img_shape: Sequence[int]
) -> list[tuple[tuple[int, ...], float]]:
    """(shape, std) of each random tensor a network draws, in drawing order.

    Dense weights are ``(fan_in, fan_out)`` and act as ``x @ W``; convolution weights are
    ``(out, in, k, k)`` (PyTorch layout).  First layer std 1/√fan_in, then He std √(2/fan_in).
    A projected dense layer (``cfg.sampling_used == "projected"`` and 2·batch < min(fan_in, width))
    draws G of shape ``(2·batch, fan_out)`` instead, with the same std.
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


def network_inputs(
    cfg: MomentsConfig, net: int, device: str = "cpu"
) -> tuple[torch.Tensor, torch.Tensor]:
    """Input x⁰ (standardised images) and noise dx⁰ ~ N(0, 1) of network ``net`` (float32)."""
    x0 = torch.from_numpy(network_images(cfg, net)).to(device)
    g = _generator(device, network_seed(cfg.seed, net, 0))
    dx0 = torch.empty(x0.shape, device=device).normal_(0.0, 1.0, generator=g)
    return x0, dx0


def network_weights(cfg: MomentsConfig, net: int, device: str = "cpu") -> list[torch.Tensor]:
    """All weights of network ``net`` exactly as :func:`simulate` draws them
    (for tests/brute force).

    The generator of stream 0 first draws dx⁰ (see :func:`network_inputs`), then the weights
    in order, each with ``Tensor.normal_(0, std)``.  For projected dense layers these are the
    (2·batch × N) matrices G of :class:`MomentsConfig` ``sampling``, not N × N weights.
    """
    x0 = network_images(cfg, net)
    g = _generator(device, network_seed(cfg.seed, net, 0))
    torch.empty(x0.shape, device=device).normal_(0.0, 1.0, generator=g)
    return [
        torch.empty(s, device=device).normal_(0.0, std, generator=g)
        for s, std in weight_shapes(cfg, x0.shape[1:])
    ]
