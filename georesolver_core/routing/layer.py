"""The GSR mixture-of-experts layer (section 10.1): route on the sphere, mix the Top-K experts.

    q = normalise(W_r x),  (i_1..i_K, w_1..w_K) = gsr_route(q, C, k=K, eps),  o(x) = sum_k w_k E_{i_k}(x)

Prototypes C (n_experts, d_route) live on the unit sphere (a geoopt ``ManifoldParameter``, so
``geoopt.optim.RiemannianAdam`` keeps them there; they are re-normalised in forward so a plain
optimiser works too). ``MoE`` is the shared shell: any router returning a ``Routing`` plugs in.
"""

from __future__ import annotations

import math

import geoopt
import torch
from torch import nn

from georesolver_core.geometry.sphere import project as sphere_project
from georesolver_core.geometry.sphere import sphere
from georesolver_core.routing.experts import ExpertBank, Routing
from georesolver_core.routing.gsr import gsr_route
from georesolver_core.validate import check_eps, check_positive_int, check_range


def capacity_keep(indices: torch.Tensor, n_experts: int, capacity: int) -> torch.Tensor:
    """Which slots fit under a per-expert capacity: first come, first served, slot rank first (GShard).

    All first choices are placed (in token order) before any second choice. (N, K) long -> (N, K) bool.
    """
    n, k = indices.shape
    order = indices.t().reshape(-1)  # (K*N,): slot rank major, token minor
    onehot = torch.nn.functional.one_hot(order, n_experts)  # (K*N, E)
    position = (onehot.cumsum(0) * onehot).sum(-1) - 1  # (K*N,): arrival position at its expert
    return (position < capacity).reshape(k, n).t()


def capacity_of(n_tokens: int, n_experts: int, k: int, capacity_factor: float) -> int:
    """Switch's expert capacity: ceil(capacity_factor * tokens * K / experts), at least 0 slots."""
    n_tokens = check_positive_int("n_tokens", n_tokens, 0)
    n_experts = check_positive_int("n_experts", n_experts, 1)
    k = check_positive_int("k", k, 1, n_experts)
    capacity_factor = check_range("capacity_factor", capacity_factor, 1e-3, 1e3)  # as the routers' own checks
    return math.ceil(capacity_factor * n_tokens * k / n_experts)


class GSRRouter(nn.Module):
    """Routes tokens to their Top-K prototypes by SIDA weight on the sphere (no auxiliary loss needed)."""

    def __init__(
        self,
        dim: int,
        n_experts: int,
        *,
        k: int,
        eps: float,
        route_dim: int | None = None,
        capacity_factor: float | None = None,
    ):
        super().__init__()
        check_positive_int("n_experts", n_experts, 1, 65536)
        self.k = check_positive_int("k", k, 1, n_experts)
        self.eps = check_eps(eps)
        route_dim = dim if route_dim is None else check_positive_int("route_dim", route_dim, 2, 65536)
        self.n_experts = n_experts
        self.capacity_factor = capacity_factor  # None: no capacity, nothing dropped
        self.proj = nn.Linear(dim, route_dim, bias=False)
        init = sphere_project(torch.randn(n_experts, route_dim))
        self.prototypes = geoopt.ManifoldParameter(init, manifold=sphere())

    def queries(self, x: torch.Tensor) -> torch.Tensor:
        """q = W_r x / ||W_r x|| (the clamp keeps a zero projection finite). (N, dim) -> (N, d_route)."""
        return sphere_project(self.proj(x))

    def forward(self, x: torch.Tensor) -> Routing:  # x (N, dim)
        idx, w = gsr_route(self.queries(x), sphere_project(self.prototypes), k=self.k, eps=self.eps)
        keep = torch.ones_like(idx, dtype=torch.bool)
        wanted = keep
        if self.capacity_factor is not None:
            keep = capacity_keep(
                idx, self.n_experts, capacity_of(x.shape[0], self.n_experts, self.k, self.capacity_factor)
            )
        return Routing(idx, w * keep, keep, self.n_experts, x.new_zeros(()), wanted)


class MoE(nn.Module):
    """router -> ExpertBank.mix. (..., dim) -> (..., dim); the last decision is kept in ``last_routing``."""

    def __init__(self, router: nn.Module, experts: ExpertBank):
        super().__init__()
        self.router, self.experts = router, experts
        self.last_routing: Routing | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.reshape(-1, x.shape[-1])  # (N, dim)
        routing = self.router(flat)
        self.last_routing = routing
        return self.experts.mix(flat, routing).reshape(x.shape)

    @property
    def aux_loss(self) -> torch.Tensor:
        """The router's auxiliary loss from the last forward (0 before any)."""
        if self.last_routing is None:
            return torch.zeros(())
        return self.last_routing.aux_loss


class GSR(MoE):
    """Geodesic Sparse Routing layer: GSR(dim, n_experts, k=2, eps=0.1, hidden=4*dim). (..., dim) -> (..., dim)."""

    def __init__(
        self,
        dim: int,
        n_experts: int,
        *,
        k: int = 2,
        eps: float = 0.1,
        hidden: int | None = None,
        route_dim: int | None = None,
        capacity_factor: float | None = None,
    ):
        check_positive_int("dim", dim, 1, 65536)
        hidden = 4 * dim if hidden is None else hidden
        super().__init__(
            GSRRouter(dim, n_experts, k=k, eps=eps, route_dim=route_dim, capacity_factor=capacity_factor),
            ExpertBank(n_experts, dim, hidden),
        )
