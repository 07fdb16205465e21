"""The moments of Labatie 2019 §3.1 of signal and noise features (batch × positions × channels).

ν₁(|x|) = E|x|, ν₂(x) = E x², μ₂(x) = E (x − m_c)², μ₄(x) = E (x − m_c)⁴, μ₂(dx) = E dx²,
r_eff = Tr C / λ_max(C) (C the channel covariance, centred for x, uncentred for dx) and
χ = √(μ₂(dx)/μ₂(x)) / √(μ₂(dx⁰)/μ₂(x⁰)) (Labatie Eq. 3): :func:`feature_moments` for the engine's
batched (S, M, N) features, :func:`tensor_moments` the plain float64 reference on (B, C, *spatial)
arrays.  (Not to be confused with :mod:`layerwise.stats`, the book's estimates and intervals.)
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ..params import ParameterError
from . import linalg
from .linalg import _gram


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
        # centre per channel first (no ν₂ − m² cancellation: vanilla nets' signal is
        # nearly constant)
        xc = x - x.mean(dim=1, keepdim=True)
        dims = (1, 2)
        # (measured: ‖·‖₁ and ‖·‖₄ reductions are 2–25× slower than abs().sum() and ‖x_c²‖₂)
        sq = xc * xc
        st = torch.stack(
            [
                x.abs().sum(dim=dims),
                norm(x, 2, dim=dims),
                norm(xc, 2, dim=dims),
                norm(sq, 2, dim=dims),
            ],
            1,
        )
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
            out["reff_signal"] = torch.full(
                (x.shape[0],), float("nan"), dtype=torch.float64, device=x.device
            )
    if dx is not None:
        s, m, n = dx.shape
        mu2n = norm(dx, 2, dim=(1, 2)).double() ** 2 / float(m * n)
        out["mu2_noise"] = mu2n
        if reff_noise:
            gl.append(_given(grams, "reff_noise", dx))
            names.append(("reff_noise", n * mu2n * m))
        else:
            out["reff_noise"] = torch.full(
                (dx.shape[0],), float("nan"), dtype=torch.float64, device=dx.device
            )
    if gl:
        lam = linalg.lambda_max(gl[0] if len(gl) == 1 else torch.cat(gl))
        for i, (name, trace) in enumerate(names):
            out[name] = trace / lam[i * trace.shape[0] : (i + 1) * trace.shape[0]]
    return out


def _to_features(x: np.ndarray | torch.Tensor) -> torch.Tensor:
    """(B, C, *spatial) or (B, C) → (1, B·positions, C) float64 tensor."""
    t = torch.as_tensor(np.asarray(x) if not isinstance(x, torch.Tensor) else x).double()
    if t.ndim < 2:
        raise ParameterError(
            f"tensor of shape {tuple(t.shape)} must be (batch, channels, *spatial)"
        )
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
    f = feature_moments(
        _to_features(x), None if dx is None else _to_features(dx), reff_signal=reff, reff_noise=reff
    )
    out = {k: float(v[0]) for k, v in f.items()}
    if dx is not None and x0 is not None and dx0 is not None:
        m0 = feature_moments(
            _to_features(x0), _to_features(dx0), reff_signal=False, reff_noise=False
        )
        chi0 = math.sqrt(float(m0["mu2_noise"][0]) / float(m0["mu2_signal"][0]))
        out["chi"] = math.sqrt(out["mu2_noise"] / out["mu2_signal"]) / chi0
    return out
