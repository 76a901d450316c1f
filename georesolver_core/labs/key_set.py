"""What the theorems measure on a set of keys: the kernel matrix K_ij = (d_ij^2 + eps)^-1 and its
effective rank (sections 2.1, 2.7), nearest-neighbour radii and the separation d_min (section 2.3),
and the mean squared distance the paper's eps advice reads."""

from __future__ import annotations

import math

import torch

from georesolver_core.attention.reference import inverse_sq
from georesolver_core.geometry import pairwise_distance, pairwise_sq_distance
from georesolver_core.validate import check_eps, check_finite


def kernel_matrix(x: torch.Tensor, y: torch.Tensor, *, eps: float, geometry: str = "euclidean", c: float = 1.0):
    """K_ij = (d(x_i, y_j)^2 + eps)^-1 (section 2.7, Lemma 5.1). (..., n, d), (..., m, d) -> (..., n, m)."""
    return inverse_sq(pairwise_sq_distance(x, y, geometry=geometry, c=c), check_eps(eps))


def effective_rank(K: torch.Tensor) -> torch.Tensor:
    """eff-rank(K) = (tr K)^2 / tr(K^2) (section 2.1). (..., n, n) -> (...); between 1 and n for PSD K."""
    check_finite("K", K)
    if K.dim() < 2 or K.shape[-1] != K.shape[-2]:
        raise ValueError(f"K must be square (..., n, n) (got shape {tuple(K.shape)})")
    tr = K.diagonal(dim1=-2, dim2=-1).sum(-1)  # (...)
    tr_sq = (K * K.transpose(-1, -2)).sum((-2, -1))  # tr(K K) without forming the product, (...)
    return tr**2 / tr_sq


def nn_distance(x: torch.Tensor, *, geometry: str = "euclidean", c: float = 1.0) -> torch.Tensor:
    """Distance from each point to its nearest other point, r_j = min_{m != j} d(x_j, x_m). (n, d) -> (n,).

    This is the radius the dense-key bound of section 2.3 uses. Needs n >= 2.
    """
    if x.shape[-2] < 2:
        raise ValueError(f"x must hold at least 2 points to have a nearest neighbour (got {x.shape[-2]})")
    dist = pairwise_distance(x, x, geometry=geometry, c=c)  # (n, n)
    return dist.fill_diagonal_(math.inf).amin(dim=-1)


def min_pairwise_distance(x: torch.Tensor, *, geometry: str = "euclidean", c: float = 1.0) -> float:
    """d_min = min_{i != j} d(x_i, x_j), the separation in Theorem 3 / Lemma 5.1."""
    return float(nn_distance(x, geometry=geometry, c=c).min())


def mean_sq_distance(x: torch.Tensor, y: torch.Tensor, *, geometry: str = "euclidean", c: float = 1.0) -> float:
    """E ||x_i - y_j||^2 over all pairs with i != j when x is y (self-attention), all pairs otherwise."""
    sq = pairwise_sq_distance(x, y, geometry=geometry, c=c)  # (n, m)
    if x is y:
        n = sq.shape[-1]
        return float(sq.sum() / max(n * (n - 1), 1))
    return float(sq.mean())
