"""The unit sphere S^{d-1} (paper section 8), with geoopt.Sphere for projections and tangent spaces.

The great-circle distance is computed as d_S(x, y) = 2 atan2(||x - y||, ||x + y||), equal to
arccos<x, y> on the sphere but exact near 0: geoopt's ``Sphere.dist`` clamps the cosine to
1 - eps before arccos, so its d(x, x) is 0.014 in float32 and exact retrieval on the sphere breaks.
"""

from __future__ import annotations

import functools

import geoopt
import torch

from georesolver_core.geometry._pairwise import pairwise_sq_norms, safe_sqrt, smooth_ratio


@functools.lru_cache(maxsize=1)
def sphere() -> geoopt.Sphere:
    """The geoopt unit-sphere manifold."""
    return geoopt.Sphere()


def pairwise_distance(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """d_S(x_i, y_j) in [0, pi]. (..., n, d), (..., m, d) -> (..., n, m)."""
    minus = safe_sqrt(pairwise_sq_norms(x, y))
    plus = safe_sqrt(pairwise_sq_norms(x, y, plus=True))
    return 2.0 * torch.atan2(minus, plus)


def _theta_sq(minus_sq: torch.Tensor, plus_sq: torch.Tensor) -> torch.Tensor:
    """theta^2 = (2 atan2(a, b))^2 from a^2 = |x - y|^2 and b^2 = |x + y|^2, smooth at x = y.

    Up to a right angle (a <= b) it is 4 t (atan(sqrt t) / sqrt t)^2 with t = a^2 / b^2, analytic in t,
    so the Hessian at x = y is 2 I (squaring the distance would give 0 there); beyond, where a > 0,
    the plain angle squared (still exact up to antipodal pairs, b = 0).
    """
    near = minus_sq <= plus_sq
    t = minus_sq / torch.where(near, plus_sq, torch.ones_like(plus_sq))  # (...), in [0, 1] where near
    ratio = smooth_ratio(safe_sqrt(t), torch.atan, 1.0)  # atan(s)/s, -> 1 as s -> 0
    far = 2.0 * torch.atan2(safe_sqrt(torch.where(near, torch.ones_like(minus_sq), minus_sq)), safe_sqrt(plus_sq))
    return torch.where(near, 4.0 * t * ratio * ratio, far * far)


def sq_distance_from_gram(xx: torch.Tensor, yy: torch.Tensor, xy: torch.Tensor) -> torch.Tensor:
    """theta(x, y)^2 from |x|^2, |y|^2 and <x, y> (elementwise), via |x -+ y|^2 = |x|^2 + |y|^2 -+ 2<x, y>
    (clamped at 0: the matmul form cancels to ~1e-7 in float32 for nearly equal or opposite points)."""
    return _theta_sq((xx + yy - 2.0 * xy).clamp_min(0.0), (xx + yy + 2.0 * xy).clamp_min(0.0))


def pairwise_sq_distance(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """d_S(x_i, y_j)^2, smooth at x_i = y_j. (..., n, d), (..., m, d) -> (..., n, m)."""
    return _theta_sq(pairwise_sq_norms(x, y), pairwise_sq_norms(x, y, plus=True))


def distance(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """d_S(x, y) elementwise over the last dim. (..., d), (..., d) -> (...)."""
    minus, plus = x - y, x + y
    return 2.0 * torch.atan2(safe_sqrt((minus * minus).sum(-1)), safe_sqrt((plus * plus).sum(-1)))


def sq_distance(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """d_S(x, y)^2 elementwise over the last dim, smooth at x = y. (..., d), (..., d) -> (...)."""
    minus, plus = x - y, x + y
    return _theta_sq((minus * minus).sum(-1), (plus * plus).sum(-1))


def normalise(x: torch.Tensor) -> torch.Tensor:
    """x / ||x|| for learned projections (section 8.1); the clamp keeps a zero vector at 0, finite."""
    return x / x.norm(dim=-1, keepdim=True).clamp_min(torch.finfo(x.dtype).eps)


def project(x: torch.Tensor) -> torch.Tensor:
    """x / ||x||; the zero vector has no direction and is rejected by the caller's validation."""
    return x / x.norm(dim=-1, keepdim=True).clamp_min(torch.finfo(x.dtype).tiny)


def north_pole(dim: int, *, dtype=None, device=None) -> torch.Tensor:
    """The base point e_d = (0, ..., 0, 1) used by expmap0/logmap0 and the stereographic map."""
    o = torch.zeros(dim, dtype=dtype, device=device)
    o[-1] = 1.0
    return o


def expmap(x: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """exp_x(u) = cos(||u||) x + sin(||u||) u/||u||, with u projected onto the tangent space at x."""
    return sphere().expmap(x, sphere().proju(x, u))


def logmap(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """log_x(y) = d_S(x, y) * P_x(y - x) / ||P_x(y - x)||, with the stable angle (see module doc)."""
    u = sphere().proju(x, y - x)  # (..., d)
    unorm = u.norm(dim=-1, keepdim=True)
    theta = distance(x, y).unsqueeze(-1)
    scale = torch.where(unorm > 0, theta / torch.where(unorm > 0, unorm, torch.ones_like(unorm)), 1.0)
    return u * scale


def slerp(x: torch.Tensor, y: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """Great-circle points exp_x(t log_x(y)). x, y (d,), t (T,) -> (T, d)."""
    v = logmap(x, y)  # (d,)
    return expmap(x.expand(t.shape[0], -1), t[:, None] * v)


def to_origin(x: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """The Householder reflection swapping p and the north pole e_d, an isometry. (N, d), (d,) -> (N, d)."""
    v = p - north_pole(p.shape[-1], dtype=p.dtype, device=p.device)  # (d,)
    if float(v.norm()) == 0.0:
        return x
    return x - 2.0 * (x @ v)[:, None] * v[None, :] / (v @ v)


def tangent_basis(x: torch.Tensor) -> torch.Tensor:
    """Orthonormal basis of the tangent space at x, as columns. (d,) -> (d, d-1)."""
    d = x.shape[0]
    # Complete x to an orthonormal basis with QR; the first column spans x, the rest x^perp.
    m = torch.cat([x[:, None], torch.eye(d, dtype=x.dtype)[:, : d - 1]], dim=1)  # (d, d)
    if abs(float(x[: d - 1].norm())) > 0.9:
        m = torch.cat([x[:, None], torch.eye(d, dtype=x.dtype)[:, 1:]], dim=1)
    qmat, _ = torch.linalg.qr(m)
    return qmat[:, 1:]


def riemannian_hessian(x: torch.Tensor, g: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """Riemannian Hessian of f at x (d,) from its Euclidean gradient g and Hessian h, in an orthonormal
    basis E of x^perp: Hess = E^T h E - (x . g) I_{d-1}. (d-1, d-1)."""
    e = tangent_basis(x)  # (d, d-1)
    return e.T @ h @ e - (x @ g) * torch.eye(e.shape[1], dtype=x.dtype)
