"""Configuration of the moments engine: what a run depends on, validated at creation (SPEC §2).

The set-up of Labatie (ICML 2019) §2 Eq. (1)–(2) and appendix A — architectures (vanilla, BN
feed-forward, BN ResNet), boundaries, data sets, the moments of §3.1 and where in a layer they are
recorded — and :class:`MomentsConfig`, whose fields are everything the numbers of
:func:`layerwise.moments.simulate` depend on (the results store keys on it and on the engine's
source, :func:`layerwise.provenance.code_fingerprint`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch

from ..params import (
    ParameterError,
    check_choice,
    check_dataset,
    check_divisible,
    check_positive,
    check_positive_int,
)

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


@dataclass(frozen=True)
class MomentsConfig:
    """Everything a moments run depends on (SPEC §2, Labatie appendix A); validated at creation.

    ``records`` is the number R of evenly spaced records (at layers — residual units for
    ``bn_res`` — ``depth/R, 2·depth/R, …, depth``) and must divide ``depth``.  ``kernel_size=1``
    means a fully-connected network (flattened input, dense layers); otherwise an odd k ≥ 3.

    ``sampling`` says how a dense layer's product Z = X W is drawn, X the (M × K) matrix of the
    M = 2·B signal and noise rows of one network and W (K × N) i.i.d. N(0, σ²):

    * ``"explicit"``: draw W (K·N numbers) and multiply;
    * ``"projected"``: for every dense layer with M < min(K, N), factor Xᵀ = Q
      R (Householder QR, R with a non-negative diagonal) and set Z = Rᵀ G with G (M × N)
      i.i.d. N(0, σ²).  Qᵀ W is (M × N) i.i.d. N(0, σ²) for any orthonormal Q independent of W, so
      Z = X (Q G) has exactly the law of X W given X; the weights of every layer are fresh, so the
      joint law of all recorded moments is unchanged.  The realised map Q G is linear and shared by
      signal and noise rows, so the noise is still the exact first-order derivative of the sampled
      network.  M·N random numbers and ≈ 2·M²·(K + N) flops instead of K·N numbers
      and 2·M·K·N flops.  Layers with M ≥ min(K, N) are drawn explicitly.

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
    reff_locations: tuple[str, ...] | None = None
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
            raise ParameterError(
                f"batch={self.batch} must be >= 2 (moments are centred over the batch)"
            )
        check_positive_int("depth", self.depth)
        check_positive_int("res_depth", self.res_depth)
        check_choice("boundary", self.boundary, BOUNDARIES)
        check_dataset("dataset", self.dataset)
        check_positive_int("n_sims", self.n_sims)
        if self.records is None:
            object.__setattr__(self, "records", self.depth)
        check_positive_int("records", self.records)
        if self.records > self.depth:
            raise ParameterError(f"records={self.records} must be <= depth={self.depth}")
        check_divisible("depth", self.depth, "records", self.records)
        if (
            isinstance(self.seed, bool)
            or not isinstance(self.seed, (int, np.integer))
            or self.seed < 0
        ):
            raise ParameterError(f"seed={self.seed!r} must be a non-negative integer")
        check_choice("device", self.device, ("auto", "cpu", "cuda"))
        object.__setattr__(self, "epsilon", check_positive("epsilon", self.epsilon))
        for name in ("reff_signal", "reff_noise"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ParameterError(f"{name}={getattr(self, name)!r} must be True or False")
        if self.reff_locations is not None:
            locs = self.reff_locations
            if isinstance(locs, str) or not all(isinstance(loc, str) for loc in locs):
                raise ParameterError(
                    f"reff_locations={locs!r} must be None or a tuple of locations of "
                    f"arch={self.arch!r}: "
                    f"{', '.join(LOCATIONS[self.arch])}"
                )
            for loc in locs:
                check_choice("reff_locations", loc, LOCATIONS[self.arch])
            # canonical form (order of the architecture, no repeats): equal configs, equal
            # cache keys
            object.__setattr__(
                self, "reff_locations", tuple(l for l in LOCATIONS[self.arch] if l in locs)
            )
        check_choice("sampling", self.sampling, SAMPLINGS)
        check_choice("conv", self.conv, CONV_ALGORITHMS)
        if self.conv == "fft" and (k == 1 or self.boundary != "periodic"):
            raise ParameterError(
                "conv='fft' is only for convolutional nets with boundary='periodic', not "
                f"kernel_size={k}, "
                f"boundary={self.boundary!r}; use conv='direct' or 'auto'"
            )
        if self.sampling == "projected" and k != 1:
            raise ParameterError(
                "sampling='projected' is only for fully-connected nets (kernel_size=1), not "
                f"kernel_size={k}; "
                "use sampling='explicit'"
            )

    def reff_at(self, loc: str) -> bool:
        """Whether effective ranks (of the signal and/or noise, as ``reff_signal``/``reff_noise``
        say) are computed at location ``loc``: everywhere when ``reff_locations`` is None, else only
        at the locations it names (elsewhere they are NaN).  A record's two Gram matrices and their
        λ_max are its costliest moments, so a chapter that reads r_eff at one location names it."""
        return self.reff_locations is None or loc in self.reff_locations

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
        """The sampling actually used: ``"auto"`` resolves
        to ``"projected"`` for fully-connected nets with 2·batch < width on CPU and
        to ``"explicit"`` otherwise (always on CUDA). The field keeps what was asked for,
        so ``dataclasses.replace(cfg, kernel_size=3)`` re-resolves instead of inheriting a choice
        made for another architecture or device."""
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
        """Plain dict (for the results store key); ``device`` is kept, the store may drop it.
        ``reff_locations`` is left out when None (its default, every location), so the keys of
        runs made before the option existed still match."""
        d = asdict(self)
        if d["reff_locations"] is None:
            del d["reff_locations"]
        else:
            d["reff_locations"] = list(d["reff_locations"])
        return d
