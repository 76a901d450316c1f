"""The memory path of the unified block (paper section 11.1): SIDA -> GSR -> DMG -> o_memory.

    q_hat_i = normalise(W_m q_i)                                      SIDA: queries on the sphere
    DMG:  pool.observe(q_hat) spawns a prototype where a query is surprising (section 9.1)
    GSR:  (e_1..e_K, w_1..w_K) = gsr_route(q_hat_i, C, k=K, eps, active)  top-K by SIDA weight (section 10.1)
    o_memory_i = sum_k w_k M[e_k]                                    M: one learned value per prototype slot

The pool is preallocated (``routing.PrototypePool``): a birth activates a slot, so the value table
M keeps its shape and the optimiser keeps its state. During training a few queries of each batch
are observed (the pool's surprise test is a sequential loop); in evaluation the pool is fixed.
"""

from __future__ import annotations

import torch
from torch import nn

from georesolver_core.geometry.sphere import project as sphere_project
from georesolver_core.routing import DMGConfig, PrototypePool, gsr_route
from georesolver_core.validate import check_eps, check_positive_int

OBSERVED_PER_BATCH = 4  # queries offered to the DMG pool per training forward


class MemoryPath(nn.Module):
    """(B, T, C) queries -> (B, T, C) o_memory read from a DMG prototype pool routed by GSR."""

    def __init__(self, dim: int, *, eps: float, capacity: int = 32, k: int = 2):
        super().__init__()
        check_positive_int("dim", dim, 2, 65536)
        self.k = check_positive_int("k", k, 1, capacity)
        self.eps = check_eps(eps)
        self.proj = nn.Linear(dim, dim, bias=False)
        self.pool = PrototypePool(DMGConfig(capacity=capacity, dim=dim, lr=0.0))
        self.values = nn.Parameter(torch.zeros(capacity, dim))  # M; zero: the path starts silent

    def forward(self, q: torch.Tensor) -> torch.Tensor:
        B, T, C = q.shape
        q_hat = sphere_project(self.proj(q)).reshape(B * T, C)  # (B*T, C) on the sphere
        if self.training or self.pool.n_active == 0:
            self.pool.observe(
                q_hat[:: max(1, (B * T) // OBSERVED_PER_BATCH)][:OBSERVED_PER_BATCH].detach().float()
            )
        k = min(self.k, self.pool.n_active)
        protos = sphere_project(self.pool.prototypes.detach()).to(q_hat.dtype)  # (capacity, C)
        idx, w = gsr_route(q_hat, protos, k=k, eps=self.eps, active=self.pool.active)  # (B*T, k) x 2
        return (w.unsqueeze(-1) * self.values[idx]).sum(-2).reshape(B, T, C)  # (B, T, C)
