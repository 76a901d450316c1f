"""Baseline routers with GSR's interface (each returns a ``Routing``): the learned softmax top-k gate
of Switch / GShard and expert-choice routing.

Softmax top-k gate (Switch Transformer, Fedus et al. 2022; GShard, Lepikhin et al. 2021):
    p = softmax(W_g x), experts = top-k of p, weights = p (k = 1) or p renormalised over the top-k,
    capacity C = ceil(cf * N * k / E) slots per expert, tokens over capacity dropped,
    load-balancing loss L_aux = E * sum_e f_e P_e, f_e = share of slots routed to e, P_e = mean p_e.
Expert choice (Zhou et al. 2022): each expert takes its C = ceil(cf * N * k / E) highest-scoring
tokens; a token may get several experts or none (then it is dropped: only the residual carries it).
"""

from __future__ import annotations

import torch
from torch import nn

from georesolver_core.routing.experts import ExpertBank, Routing
from georesolver_core.routing.layer import GSR, MoE, capacity_keep, capacity_of
from georesolver_core.validate import check_positive_int, check_range


class SoftmaxTopKRouter(nn.Module):
    """Switch (k = 1) / GShard (k = 2) gate with capacity factor and the load-balancing loss."""

    def __init__(self, dim: int, n_experts: int, *, k: int = 1, capacity_factor: float | None = 1.25):
        super().__init__()
        self.n_experts = check_positive_int("n_experts", n_experts, 1, 65536)
        self.k = check_positive_int("k", k, 1, n_experts)
        if capacity_factor is not None:
            check_range("capacity_factor", capacity_factor, 1e-3, 1e3)
        self.capacity_factor = capacity_factor
        self.gate = nn.Linear(dim, n_experts, bias=False)

    def forward(self, x: torch.Tensor) -> Routing:  # x (N, dim)
        p = torch.softmax(self.gate(x), dim=-1)  # (N, E)
        top_p, idx = p.topk(self.k, dim=-1)  # (N, k)
        w = top_p if self.k == 1 else top_p / top_p.sum(-1, keepdim=True)
        wanted = torch.ones_like(idx, dtype=torch.bool)
        keep = wanted
        if self.capacity_factor is not None:
            cap = capacity_of(x.shape[0], self.n_experts, self.k, self.capacity_factor)
            keep = capacity_keep(idx, self.n_experts, cap)
        # f_e from the requested slots (before dropping), as in Switch; P_e keeps the loss differentiable
        f = torch.bincount(idx.reshape(-1), minlength=self.n_experts).to(p.dtype) / idx.numel()  # (E,)
        aux = self.n_experts * (f * p.mean(0)).sum()
        return Routing(idx, w * keep, keep, self.n_experts, aux, wanted)


class ExpertChoiceRouter(nn.Module):
    """Each expert picks its top-C tokens by softmax score; ``Routing`` has one slot per expert."""

    def __init__(self, dim: int, n_experts: int, *, k: int = 1, capacity_factor: float = 1.0):
        super().__init__()
        self.n_experts = check_positive_int("n_experts", n_experts, 1, 65536)
        self.k = check_positive_int("k", k, 1, n_experts)  # average experts per token
        self.capacity_factor = check_range("capacity_factor", capacity_factor, 1e-3, 1e3)
        self.gate = nn.Linear(dim, n_experts, bias=False)

    def forward(self, x: torch.Tensor) -> Routing:  # x (N, dim)
        n = x.shape[0]
        p = torch.softmax(self.gate(x), dim=-1)  # (N, E)
        cap = min(n, capacity_of(n, self.n_experts, self.k, self.capacity_factor))
        chosen = torch.zeros_like(p, dtype=torch.bool)
        if n:
            top = p.topk(cap, dim=0).indices  # (C, E): the tokens each expert takes
            chosen.scatter_(0, top, True)
        idx = torch.arange(self.n_experts, device=x.device).expand(n, -1)  # (N, E)
        return Routing(idx, p * chosen, chosen, self.n_experts, x.new_zeros(()), chosen)


ROUTERS = {
    "gsr": "GSR (SIDA top-K on the sphere)",
    "softmax": "Softmax top-k gate (Switch/GShard, capacity + balancing loss)",
    "expert-choice": "Expert choice (each expert takes its top-C tokens)",
}


def make_moe(
    name: str, dim: int, n_experts: int, *, k: int, hidden: int, eps: float = 0.1, capacity_factor: float = 1.25
) -> MoE:
    """One mixture-of-experts layer by router name (keys of ROUTERS)."""
    if name not in ROUTERS:
        raise ValueError(f"router must be one of {sorted(ROUTERS)} (got {name!r})")
    if name == "gsr":
        return GSR(dim, n_experts, k=k, eps=eps, hidden=hidden, capacity_factor=capacity_factor)
    if name == "softmax":
        router = SoftmaxTopKRouter(dim, n_experts, k=k, capacity_factor=capacity_factor)
    else:
        router = ExpertChoiceRouter(dim, n_experts, k=k, capacity_factor=capacity_factor)
    return MoE(router, ExpertBank(n_experts, dim, hidden))
