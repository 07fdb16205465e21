"""Differential layers (Donier 2019, "Capacity allocation through neural network layers", §3.3
and Appendix B of the longer version, ``papers/000_…``; chapter 2 of the book).

A differential layer applies the non-linearity to the residual only,
x_l = x_{l−1} + f(P_lᵀx_{l−1}) (Eq. 34 of that version). With pseudo-random units
f(z) = η z (η = ±1, independent per unit and layer) and couplings of order √ε, ε = 1/L,

    x_l(i) = x_{l−1}(i) + √ε η_{l,i} Σ_k p_k x_{l−1}(i + k),   k ∈ {−1, 0, +1},

and as ε → 0 the network is the stochastic differential equation (Eq. 36)

    dx_i = (Σ_k p_k x_{i+k}) dW_i,

whose diffusion coefficient a_i(x) = (Σ_k p_k x_{i+k})² averages, over i.i.d. unit inputs (the
capacity's hypothesis), to Σ_k c_k with c_k = p_k². Appendix B's capacity of such a layer adds the
un-modified inputs to the augmented input space (Eqs. 42–45): D = (I + εC)/(1 + εΣ_k c_k) with
C the circulant of the c_k, i.e. D = I + εΔ + O(ε²), Δ sending c_{−1} to i − 1 and c_{+1} to
i + 1. Its continuum limit is the capacity PDE (Eq. 46) with

    v = c_{+1} − c_{−1},   𝒟 = (c_{−1} + c_{+1})/2,

and with v = 0 when the kernel fluctuates randomly from layer to layer (Eq. 47): the diffusion
coefficient of the capacity is half the part of the SDE's diffusion coefficient that couples a
unit to its neighbours; the self-coupling c_0 moves no capacity. The equations of §3.3 and
Appendix B are lost in the extraction we have; this is our reconstruction from its prose, stated
as such in the chapter. :func:`differential_summary` grades the simulated sensitivities against
the exact recursion and the continuum's v and 𝒟 (jackknife errors over groups of paths).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from .diffusion import circular_moments, local_delta
from .params import ParameterError, check_choice, check_positive_int
from .stats import Estimate, jackknife_se

INCREMENTS: tuple[str, ...] = ("gaussian", "sign")
#: Where the randomness sits: one increment per unit (``unit``: dx_i = (Σ_k p_k x_{i+k}) dW_i,
#: pseudo-random units) or one per weight (``weight``: dx_i = Σ_k p_k x_{i+k} dW_{i,k},
#: pseudo-random weights, as Appendix B words it). Both have the same mean capacity recursion.
NOISES: tuple[str, ...] = ("unit", "weight")


def check_taps2(taps2: Sequence[float]) -> tuple[float, float, float]:
    """(c_{−1}, c_0, c_{+1}): three finite squared couplings ≥ 0, not all zero."""
    c = tuple(float(x) for x in taps2)
    if len(c) != 3 or not all(math.isfinite(x) and x >= 0 for x in c) or sum(c) == 0:
        raise ParameterError(
            f"taps2={taps2!r} must be three finite squared couplings (c_-1, c_0, c_+1) >= 0, "
            "not all zero"
        )
    return c  # type: ignore[return-value]


def differential_coefficients(taps2: Sequence[float]) -> dict[str, float]:
    """The capacity PDE of differential layers with squared couplings c = (c_{−1}, c_0, c_{+1})
    [Donier, longer version, Eqs. 36, 46–47, as reconstructed in the module docstring]:
    ``drift`` v = c_{+1} − c_{−1}, ``diffusion`` 𝒟 = (c_{−1} + c_{+1})/2, and ``sde_total`` Σ_k c_k,
    the forward SDE's diffusion coefficient averaged over i.i.d. unit inputs."""
    a, b, c = check_taps2(taps2)
    return {"drift": c - a, "diffusion": (a + c) / 2, "sde_total": a + b + c}


def differential_capacity_layer(ring: int, taps2: Sequence[float], eps: float) -> np.ndarray:
    """Column-stochastic capacity matrix of one differential layer on a ring (Appendix B, Eqs.
    42–45): (I + εC)/(1 + εΣc_k), with C the circulant sending c_k from unit i to input i + k."""
    a, b, c = check_taps2(taps2)
    C = local_delta(ring, a, c) + np.eye(ring) * (a + c + b)
    return (np.eye(ring) + eps * C) / (1 + eps * (a + b + c))


def differential_sensitivities(
    *,
    ring: int,
    taps2: Sequence[float],
    steps: int,
    paths: int,
    groups: int,
    record_every: int,
    mirror: bool = False,
    increments: str = "gaussian",
    noise: str = "unit",
    seed: int,
) -> np.ndarray:
    """Mean squared sensitivity of the central unit at t = 1 to the state at earlier times, for the
    forward SDE dx_i = (Σ_k p_k x_{i+k}) dW_i (p_k = √c_k) simulated by Euler–Maruyama with
    ``steps`` steps of ε = 1/steps (``increments`` "gaussian"), or for the differential network
    with pseudo-random units (±√ε, "sign"); with ``noise`` "weight" every weight gets its own
    increment, dx_i = Σ_k p_k x_{i+k} dW_{i,k} (pseudo-random weights ±√(εc_k) with "sign").

    The sensitivity r_j = ∂x_c(1)/∂x_j(t) is propagated from the top, r ← r + p ⋆ᵀ(r ⊙ ΔW) (the
    exact pathwise derivative of the scheme; the SDE is linear in x). With ``mirror`` the kernel
    is reversed (p_{−1} ↔ p_{+1}) in each step with probability ½, independently per group (Eq.
    47). Returns (groups,
    steps // record_every + 1, ring): per group of ``paths`` paths, the mean of r∘r at t = 1 −
    k·record_every/steps (first row: the Dirac at t = 0, the top)."""
    ring, steps, paths, groups, record_every = (
        check_positive_int(k, v)
        for k, v in (
            ("ring", ring),
            ("steps", steps),
            ("paths", paths),
            ("groups", groups),
            ("record_every", record_every),
        )
    )
    check_choice("increments", increments, INCREMENTS)
    check_choice("noise", noise, NOISES)
    if ring < 3:
        raise ParameterError(f"ring={ring} must be >= 3 for a nearest-neighbour kernel")
    p = torch.tensor(check_taps2(taps2), dtype=torch.float64).sqrt()
    gen = torch.Generator().manual_seed(int(seed))
    n, sq = groups * paths, math.sqrt(1.0 / steps)
    r = torch.zeros(n, ring, dtype=torch.float64)
    r[:, ring // 2] = 1.0
    out = [(r * r).reshape(groups, paths, ring).mean(1)]
    # one mirror sequence per group: the groups are independent networks (Eq. 47)
    flips = (torch.rand(steps, groups, generator=gen) < 0.5) & mirror
    taps = 1 if noise == "unit" else 3
    for s in range(steps):
        if increments == "gaussian":
            dW = torch.randn(taps, n, ring, generator=gen, dtype=torch.float64)
        else:
            dW = torch.randint(0, 2, (taps, n, ring), generator=gen).to(torch.float64) * 2 - 1
        u = r * dW * sq  # (taps, n, ring): per unit, or per unit and weight
        um, u0, up = u[0], u[-1 if taps == 1 else 1], u[-1]
        f = flips[s].repeat_interleave(paths)[:, None]
        pm, pp = torch.where(f, p[2], p[0]), torch.where(f, p[0], p[2])
        # unit i reads input i + k with p_k: its sensitivity sends r_i p_k ΔW_{i(,k)} to input i + k
        r = r + p[1] * u0 + pm * torch.roll(um, -1, 1) + pp * torch.roll(up, 1, 1)
        if (s + 1) % record_every == 0:
            out.append((r * r).reshape(groups, paths, ring).mean(1))
    return torch.stack(out, 1).numpy()


def expected_profiles(
    ring: int, taps2: Sequence[float], steps: int, record_every: int, mirror: bool = False
) -> np.ndarray:
    """The exact expectation of :func:`differential_sensitivities`' mean r∘r over the increments
    (either noise): E[r_{s+1}(j)²] = r_s(j)² + ε Σ_k c_k r_s(j − k)², i.e. (I + εC)ˢ δ unnormalised
    (C the circulant of :func:`differential_capacity_layer`); with ``mirror`` the kernel's two
    mirror images averaged, c_{±1} → (c_{−1} + c_{+1})/2. Returns (steps // record_every + 1,
    ring), recorded like :func:`differential_sensitivities`."""
    ring, steps, record_every = (
        check_positive_int(k, v)
        for k, v in (("ring", ring), ("steps", steps), ("record_every", record_every))
    )
    a, b, c = check_taps2(taps2)
    if mirror:
        a = c = (a + c) / 2
    eps = 1.0 / steps
    M = (1 + eps * (a + b + c)) * differential_capacity_layer(ring, (a, b, c), eps)
    k = np.zeros(ring)
    k[ring // 2] = 1.0
    out = [k]
    for s in range(steps):
        k = M @ k
        if (s + 1) % record_every == 0:
            out.append(k)
    return np.array(out)


def profile_moments(profiles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean position, variance) of capacity profiles on a ring about its centre (last axis)."""
    _, mu, var = circular_moments(profiles, np.shape(profiles)[-1] // 2)
    return mu, var


def pooled_moment_ratio(groups: np.ndarray, which: int, reference: float) -> Estimate:
    """Moment ``which`` (0: mean position, 1: variance) of the profile pooled over all groups (the
    mean of the groups' mean r∘r: a ratio of means over every path, the capacity's definition)
    over ``reference``, with the jackknife standard error over groups (len(groups) − 1 d.o.f.).

    Pooling matters: the paths' squared sensitivities are heavy-tailed (their total is a product of
    per-step factors), so the moments of each group's own profile — a ratio of means over a few
    hundred paths — are biased towards the typical path and their scatter understates the error."""
    groups = np.asarray(groups, float)
    if reference == 0:
        raise ParameterError("reference must not be 0")

    def moment(g: np.ndarray) -> float:
        return float(profile_moments(g.mean(0))[which]) / reference

    mean, se = jackknife_se(moment, groups)
    return Estimate(mean, se, len(groups) - 1, len(groups))


def differential_summary(
    runs: Mapping[str, np.ndarray], taps2: Sequence[float], steps: int | None = None
) -> dict[str, Any]:
    """What a chapter grades from ``runs``: :func:`differential_sensitivities` recorded at t = 0,
    0.1, …, 1 with a fixed kernel (``fixed``) and with a kernel mirrored at random in each step
    (``mirrored``, Eq. 47), profiles (groups, times, ring):

    * ``var_ratio``/``drift_ratio``: Estimates (:func:`pooled_moment_ratio`) of the fixed kernel's
      variance and mean position at t = 1 over those of the exact expectation of the same scheme
      (:func:`expected_profiles` with ``steps``, same ring) — 1, a check
      of the Monte-Carlo against the recursion; without ``steps``, over the continuum's 2𝒟 and v
      (Eqs. 46–47 with 𝒟, v of :func:`differential_coefficients`);
    * ``mirror_drift``: the mirrored kernels' pooled mean position over v (Eq. 47: 0);
    * ``recursion_var``/``recursion_drift``: the exact scheme's variance over 2𝒟 and mean over v
      (the O(ε) of the step and the ring's wrap-around; 1 without ``steps``);
    * ``var_alt``: Σ_k c_k/(c_{−1} + c_{+1}), the ratio if the SDE's whole coefficient spread
      capacity; ``t`` and per run ``{name}_var``/``{name}_mu`` (groups, times) for the figure."""
    coef = differential_coefficients(taps2)
    v, diff = coef["drift"], coef["diffusion"]
    if v == 0:
        raise ParameterError(f"taps2={taps2!r} must be asymmetric (c_-1 != c_+1) to grade a drift")
    out: dict[str, Any] = dict(coef)
    for name, prof in runs.items():
        mu, var = profile_moments(prof)
        out[f"{name}_mu"], out[f"{name}_var"] = mu, var
    out["t"] = np.linspace(0.0, 1.0, out["fixed_var"].shape[1])
    ring = np.shape(runs["fixed"])[-1]
    if steps is None:
        exact_mu, exact_var = v, 2 * diff
    else:
        exact = expected_profiles(ring, taps2, steps, steps)[-1]
        exact_mu, exact_var = (float(x) for x in profile_moments(exact))
    out["recursion_var"], out["recursion_drift"] = exact_var / (2 * diff), exact_mu / v
    out["var_ratio"] = pooled_moment_ratio(runs["fixed"][:, -1], 1, exact_var)
    out["var_alt"] = coef["sde_total"] / exact_var
    out["drift_ratio"] = pooled_moment_ratio(runs["fixed"][:, -1], 0, exact_mu)
    out["mirror_drift"] = pooled_moment_ratio(runs["mirrored"][:, -1], 0, v)
    out["mirror_var_ratio"] = pooled_moment_ratio(runs["mirrored"][:, -1], 1, exact_var)
    return out
