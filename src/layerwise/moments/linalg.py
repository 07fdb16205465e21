"""Linear algebra of the engine: Gram matrices, λ_max (plain and certified), the QR factor R.

r_eff = Tr C / λ_max(C) (Vershynin 2010; Labatie 2019 §3.1) needs λ_max of a channel covariance:
taken from the smaller of the two Gram matrices XᵀX and XXᵀ (same non-zero eigenvalues), by
LAPACK's symmetric eigen-solver on CPU and by a certified product-based method on CUDA, never by an
SVD.  Projected sampling of dense layers (``MomentsConfig.sampling``, Z = Rᵀ G) needs R of
Xᵀ = Q R (:func:`projection_factor`).
"""

from __future__ import annotations

import torch


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


def lambda_max_certified(
    g: torch.Tensor, rtol: float = LAMBDA_MAX_RTOL, squarings: int = 12
) -> torch.Tensor:
    """λ_max of each symmetric positive semi-definite matrix of a
    batch (S, n, n), certified, float64.

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
    try:
        return torch.linalg.eigvalsh(g)[:, -1].double()
    except torch.linalg.LinAlgError:
        # MKL's float32 solver can fail to converge on a finite Gram matrix with many zero rows
        # (dead units: a repeated zero eigenvalue) — met by Chapter 3's convolutional vanilla
        # nets at the default scale on an AVX-512 CPU; the float64 solver converges there
        return torch.linalg.eigvalsh(g.double())[:, -1]


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
