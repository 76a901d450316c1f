"""Geodesic Sparse Routing (GSR, paper section 10): each query goes to its Top-K prototypes by SIDA weight.

SIDA weight of prototype e for a query q on the sphere (section 10.1):

    w_e = (d_S(q, c_e)^2 + eps)^-1 / sum_l (d_S(q, c_l)^2 + eps)^-1,

GSR keeps the K largest and renormalises them: w_e / sum_{top K} w_l. Since w_e is decreasing in
d_S(q, c_e), the Top-K by weight are the K nearest prototypes; ties go to the lower index (a stable
sort), so the single-process and the sharded protocol (``routing.distributed``) choose the same set.
"""

from __future__ import annotations

import torch

from georesolver_core.geometry.sphere import pairwise_sq_distance as sphere_sq_distance
from georesolver_core.validate import check_eps, check_on_sphere, check_positive_int, check_same_dtype


def check_route_inputs(q: torch.Tensor, prototypes: torch.Tensor, active: torch.Tensor | None = None) -> int:
    """Validate queries (..., d) and prototypes (n_pool, d) on the sphere; returns the usable pool size."""
    check_on_sphere("q", q)
    check_on_sphere("prototypes", prototypes)
    if prototypes.dim() != 2 or prototypes.shape[-1] == 0:
        raise ValueError(f"prototypes must have shape (n_pool, d >= 1) (got {tuple(prototypes.shape)})")
    check_same_dtype(q=q, prototypes=prototypes)
    if q.dim() < 1 or q.shape[-1] != prototypes.shape[-1]:
        raise ValueError(
            f"q must have shape (..., d) with d = prototypes.shape[-1] = {prototypes.shape[-1]} (got {tuple(q.shape)})"
        )
    n_pool = prototypes.shape[0]
    if active is not None:
        if active.dtype != torch.bool or active.shape != (n_pool,):
            raise ValueError(
                f"active must be a bool mask of shape ({n_pool},) (got {active.dtype}, {tuple(active.shape)})"
            )
        n_pool = int(active.sum())
    if n_pool == 0:
        raise ValueError("prototypes must hold at least one (active) prototype (got an empty pool)")
    return n_pool


def sida_sq_distance(q: torch.Tensor, prototypes: torch.Tensor) -> torch.Tensor:
    """d_S(q, c_e)^2 for every query and prototype. (..., d), (n_pool, d) -> (..., n_pool)."""
    flat = q.reshape(-1, q.shape[-1])  # (N, d)
    sq = sphere_sq_distance(flat, prototypes)  # (N, n_pool)
    return sq.reshape(*q.shape[:-1], prototypes.shape[0])


def sida_routing_weights(
    q: torch.Tensor, prototypes: torch.Tensor, *, eps: float, active: torch.Tensor | None = None
) -> torch.Tensor:
    """The full SIDA distribution over the pool (soft routing, section 8.3). (..., d) -> (..., n_pool).

    Inactive prototypes get weight 0. Computed as ratios a_min / a_e, a = d^2 + eps, so 1/eps never overflows.
    """
    eps = check_eps(eps)
    check_route_inputs(q, prototypes, active)
    a = sida_sq_distance(q, prototypes) + eps  # (..., n_pool)
    if active is not None:
        a = a.masked_fill(~active, torch.inf)
    r = a.amin(dim=-1, keepdim=True) / a  # (..., n_pool), in [0, 1]
    return r / r.sum(dim=-1, keepdim=True)


def topk_from_scores(a: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The K smallest a = d^2 + eps per row (ties: lower position first) and their renormalised weights.

    (..., m) -> indices (..., K) long into the last dim, weights (..., K) summing to 1.
    """
    a_sorted, order = torch.sort(a, dim=-1, stable=True)  # ascending: largest SIDA weight first
    a_top = a_sorted[..., :k]  # (..., K)
    r = a_top[..., :1] / a_top  # (..., K), r_1 = 1: the renormalisation cancels the global normaliser
    return order[..., :k], r / r.sum(dim=-1, keepdim=True)


def gsr_route(
    q: torch.Tensor,
    prototypes: torch.Tensor,
    *,
    k: int,
    eps: float,
    active: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Top-K prototypes by SIDA weight, renormalised (section 10.1). (..., d), (n_pool, d) -> ((..., K), (..., K)).

    ``indices`` are long positions into ``prototypes`` ordered by decreasing weight; ``weights`` are
    w_(e) / sum_{e <= K} w_(e). ``active`` (bool, (n_pool,)) restricts routing to a DMG pool's live slots.
    Queries and prototypes must be unit vectors; 1 <= K <= number of active prototypes.
    """
    eps = check_eps(eps)
    n_pool = check_route_inputs(q, prototypes, active)
    check_positive_int("k", k, 1, n_pool)
    a = sida_sq_distance(q, prototypes) + eps  # (..., n_pool)
    if active is not None:
        a = a.masked_fill(~active, torch.inf)
    return topk_from_scores(a, k)
