"""Memory-bounded pairwise reductions shared by the three geometries.

geoopt 0.5.1 has no cdist for the ball or the sphere: broadcasting (n,1,d) against (1,m,d)
materialises n*m*d numbers (4 GB for n = m = 4096, d = 64, float32). We difference in query
chunks so that at most ``CHUNK_ELEMENTS`` numbers exist at once. Differencing (rather than the
matmul identity |x|^2 + |y|^2 - 2 x.y) keeps small distances exact in float32: the identity
cancels to 0 for points 1e-4 apart.
"""

from __future__ import annotations

import torch

from georesolver_core.validate import broadcast_batch

CHUNK_ELEMENTS = 1 << 22  # 4M numbers (16 MB in float32) per chunk of differences


def safe_sqrt(s: torch.Tensor) -> torch.Tensor:
    """sqrt with gradient 0 (not NaN) at s = 0; self-attention always evaluates d(x, x)."""
    pos = s > 0
    return torch.where(pos, torch.sqrt(torch.where(pos, s, torch.ones_like(s))), torch.zeros_like(s))


def stable_norm(x: torch.Tensor) -> torch.Tensor:
    """||x|| over the last dim, keepdim, without overflow: x is scaled by its largest entry first, so
    coordinates up to the float's maximum give a finite norm (plain sqrt(sum x^2) is inf from 1.8e19 in
    float32). Gradient 0 at x = 0, like ``safe_sqrt``. (..., d) -> (..., 1)."""
    scale = x.detach().abs().amax(dim=-1, keepdim=True)  # (..., 1); the norm is homogeneous in it
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))
    y = x / scale
    return scale * safe_sqrt((y * y).sum(-1, keepdim=True))


def smooth_ratio(x: torch.Tensor, fn, limit: float) -> torch.Tensor:
    """fn(x) / x with its limit at x = 0, twice differentiable there (the double ``where`` keeps the
    unused branch's gradient finite). Used for d^2 as x * (f(sqrt x) / sqrt x)^2."""
    pos = x > 0
    safe = torch.where(pos, x, torch.ones_like(x))
    return torch.where(pos, fn(safe) / safe, torch.full_like(x, limit))


def pairwise_sq_norms(x: torch.Tensor, y: torch.Tensor, *, plus: bool = False) -> torch.Tensor:
    """|x_i - y_j|^2 (or |x_i + y_j|^2 with ``plus``) for x (..., n, d), y (..., m, d) -> (..., n, m)."""
    batch = broadcast_batch(["x", "y"], [x.shape[:-2], y.shape[:-2]])
    x = x.expand(*batch, *x.shape[-2:])
    y = y.expand(*batch, *y.shape[-2:])
    n, m, d = x.shape[-2], y.shape[-2], x.shape[-1]
    per_row = max(1, m * d * max(1, batch.numel()))
    step = max(1, CHUNK_ELEMENTS // per_row)
    yb = y.unsqueeze(-3)  # (..., 1, m, d)
    out = []
    for start in range(0, max(n, 1), step):
        xb = x[..., start : start + step, :].unsqueeze(-2)  # (..., s, 1, d)
        diff = xb + yb if plus else xb - yb  # (..., s, m, d)
        out.append((diff * diff).sum(-1))  # (..., s, m)
    return torch.cat(out, dim=-2) if len(out) > 1 else out[0]
