"""Euclidean space R^d: the Resolver's geometry (paper section 2)."""

from __future__ import annotations

import math

import torch

from georesolver_core.geometry._pairwise import pairwise_sq_norms, safe_sqrt


def pairwise_sq_distance(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """||x_i - y_j||^2. (..., n, d), (..., m, d) -> (..., n, m)."""
    return pairwise_sq_norms(x, y)


def pairwise_distance(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """||x_i - y_j||, with gradient 0 at x_i = y_j. (..., n, d), (..., m, d) -> (..., n, m).

    The distance is homogeneous, ||x - y|| = s ||x/s - y/s||: coordinates whose squared differences
    would overflow (float32 from about 1e19) are measured in units of a power of two s first (exact).
    """
    top = max((float(t.detach().abs().amax()) for t in (x, y) if t.numel()), default=0.0)
    limit = torch.finfo(torch.promote_types(x.dtype, y.dtype)).max
    if not math.isfinite(top) or 4.0 * top * top * max(1, x.shape[-1]) < limit:  # NaN/inf: checked elsewhere
        return safe_sqrt(pairwise_sq_norms(x, y))
    s = 2.0 ** math.floor(math.log2(top))  # <= top: representable, and x/s, y/s lie in [-2, 2]
    return s * safe_sqrt(pairwise_sq_norms(x / s, y / s))


def distance(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """||x - y|| elementwise over the last dim. (..., d), (..., d) -> (...)."""
    diff = x - y
    return safe_sqrt((diff * diff).sum(-1))


def sq_distance(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """||x - y||^2 elementwise over the last dim. (..., d), (..., d) -> (...)."""
    diff = x - y
    return (diff * diff).sum(-1)


def sq_distance_from_gram(xx: torch.Tensor, yy: torch.Tensor, xy: torch.Tensor) -> torch.Tensor:
    """|x - y|^2 = |x|^2 + |y|^2 - 2<x, y> (elementwise), clamped at 0: the matmul form cancels to
    ~1e-7 in float32 for nearly equal points."""
    return (xx + yy - 2.0 * xy).clamp_min(0.0)
