"""The Poincaré ball B^d_c = {x : c||x||^2 < 1}, curvature k = -c (paper section 4).

Manifold operations (exp/log maps, Möbius geodesics, projection) come from ``geoopt.PoincareBall``.
The distance is written here because geoopt's goes through artanh of a Möbius difference, whose
clamp saturates near the rim with a zero gradient and which has no pairwise (cdist) form. We use

    d_c(x, y) = (1/sqrt c) arcosh(1 + 2c||x - y||^2 / ((1 - c||x||^2)(1 - c||y||^2)))
              = (2/sqrt c) asinh(sqrt(u/2)),   u = 2c||x - y||^2 / ((1 - c||x||^2)(1 - c||y||^2)),

the asinh form because arcosh(1 + u) loses u < 1e-7 to rounding in float32.
"""

from __future__ import annotations

import functools
import math

import geoopt
import torch

from georesolver_core.geometry._pairwise import pairwise_sq_norms, safe_sqrt, smooth_ratio, stable_norm

BALL_SCALE = 0.9  # the paper's projection x = 0.9 tanh(z) keeps points 10% inside the rim


@functools.lru_cache(maxsize=32)
def ball(c: float = 1.0) -> geoopt.PoincareBall:
    """The geoopt manifold for curvature parameter c > 0 (sectional curvature -c)."""
    return geoopt.PoincareBall(c=float(c))


def _conformal_denominator(sq_norm: torch.Tensor, c: float) -> torch.Tensor:
    # Clamped at the float's resolution so that a point rounded onto the rim gives a huge but
    # finite distance instead of inf/NaN; callers validate inputs, this only guards rounding.
    return (1.0 - c * sq_norm).clamp_min(torch.finfo(sq_norm.dtype).eps)


def _u(sq_diff: torch.Tensor, nx: torch.Tensor, ny: torch.Tensor, c: float) -> torch.Tensor:
    return 2.0 * c * sq_diff / (_conformal_denominator(nx, c) * _conformal_denominator(ny, c))


def _dist_from_u(u: torch.Tensor, c: float) -> torch.Tensor:
    return (2.0 / math.sqrt(c)) * torch.asinh(safe_sqrt(0.5 * u))


def _sq_dist_from_u(u: torch.Tensor, c: float) -> torch.Tensor:
    """d^2 = (4/c) asinh(sqrt(x))^2 with x = u/2, written as (4/c) x (asinh(s)/s)^2, s = sqrt(x): smooth at
    x = 0, so the Hessian at x = y is 2 lambda^2 I (squaring the distance would give 0 there, the
    distance's gradient being set to 0 at x = y)."""
    x = 0.5 * u
    s = safe_sqrt(x)
    ratio = smooth_ratio(s, torch.asinh, 1.0)  # asinh(s)/s, -> 1 as s -> 0
    return (4.0 / c) * x * ratio * ratio


def sq_distance_from_gram(xx: torch.Tensor, yy: torch.Tensor, xy: torch.Tensor, c: float = 1.0) -> torch.Tensor:
    """d_c(x, y)^2 from |x|^2, |y|^2 and <x, y> (broadcasting, elementwise): the form kernels use when a
    batched matmul has already given the inner products (gathered keys, FlexAttention's score hook).
    |x - y|^2 = |x|^2 + |y|^2 - 2<x, y> cancels to ~1e-7 in float32 for nearly equal points: clamped at 0."""
    return _sq_dist_from_u(_u((xx + yy - 2.0 * xy).clamp_min(0.0), xx, yy, c), c)


def pairwise_distance(x: torch.Tensor, y: torch.Tensor, c: float = 1.0) -> torch.Tensor:
    """d_c(x_i, y_j). (..., n, d), (..., m, d) -> (..., n, m)."""
    nx = (x * x).sum(-1, keepdim=True)  # (..., n, 1)
    ny = (y * y).sum(-1).unsqueeze(-2)  # (..., 1, m)
    return _dist_from_u(_u(pairwise_sq_norms(x, y), nx, ny, c), c)


def pairwise_sq_distance(x: torch.Tensor, y: torch.Tensor, c: float = 1.0) -> torch.Tensor:
    """d_c(x_i, y_j)^2, smooth at x_i = y_j. (..., n, d), (..., m, d) -> (..., n, m)."""
    nx = (x * x).sum(-1, keepdim=True)  # (..., n, 1)
    ny = (y * y).sum(-1).unsqueeze(-2)  # (..., 1, m)
    return _sq_dist_from_u(_u(pairwise_sq_norms(x, y), nx, ny, c), c)


def distance(x: torch.Tensor, y: torch.Tensor, c: float = 1.0) -> torch.Tensor:
    """d_c(x, y) elementwise over the last dim. (..., d), (..., d) -> (...)."""
    diff = x - y
    return _dist_from_u(_u((diff * diff).sum(-1), (x * x).sum(-1), (y * y).sum(-1), c), c)


def sq_distance(x: torch.Tensor, y: torch.Tensor, c: float = 1.0) -> torch.Tensor:
    """d_c(x, y)^2 elementwise over the last dim, smooth at x = y. (..., d), (..., d) -> (...)."""
    diff = x - y
    return _sq_dist_from_u(_u((diff * diff).sum(-1), (x * x).sum(-1), (y * y).sum(-1), c), c)


def conformal_factor(x: torch.Tensor, c: float = 1.0) -> torch.Tensor:
    """lambda_x = 2 / (1 - c|x|^2), the metric being lambda_x^2 times the Euclidean one. (..., d) -> (...).

    Not clamped: callers pass validated points, strictly inside the rim."""
    return 2.0 / (1.0 - c * (x * x).sum(-1))


def riemannian_hessian(x: torch.Tensor, g: torch.Tensor, h: torch.Tensor, c: float = 1.0) -> torch.Tensor:
    """Riemannian Hessian of f at x (d,) from its Euclidean gradient g (d,) and Hessian h (d, d), in the
    orthonormal frame e_i / lambda_x. (d, d).

    The metric is lambda_x^2 I, lambda_x = 2 / (1 - c|x|^2); the Levi-Civita connection of a conformal
    metric with a = grad log lambda = c lambda_x x gives Hess = (h - g a^T - a g^T + (a . g) I) / lambda_x^2.
    """
    lam = 2.0 / (1.0 - c * float(x @ x))
    a = c * lam * x  # grad of log lambda
    eye = torch.eye(x.shape[0], dtype=x.dtype)
    return (h - torch.outer(g, a) - torch.outer(a, g) + (a @ g) * eye) / lam**2


def to_origin(x: torch.Tensor, p: torch.Tensor, c: float = 1.0) -> torch.Tensor:
    """The Möbius translation x -> (-p) (+) x, an isometry taking p to the origin. (N, d), (d,) -> (N, d)."""
    # projx only guards rounding: a point at the float's rim cap may land a hair outside the ball
    return ball(c).projx(ball(c).mobius_add(-p.expand_as(x), x))


def to_ball(z: torch.Tensor, *, c: float = 1.0, scale: float = BALL_SCALE) -> torch.Tensor:
    """The paper's map into the ball, applied radially: x = scale * tanh(||z||) * z / (sqrt(c) ||z||).

    Radial (not coordinate-wise) so that ||x|| <= scale / sqrt(c) < 1 / sqrt(c) in any dimension.
    """
    norm = stable_norm(z)  # (..., 1); finite for every finite z, so huge z lands on the 0.9 sphere
    # tanh(r)/r -> 1 as r -> 0; the where keeps the zero vector at the origin with a finite gradient.
    ratio = torch.where(norm > 0, torch.tanh(norm) / torch.where(norm > 0, norm, torch.ones_like(norm)), 1.0)
    return (scale / math.sqrt(c)) * ratio * z
