"""Routing statistics for any router's ``Routing``: the numbers MoE users ask to see.

load_e (before / after capacity) = slots routed to expert e; CV = std(load) / mean(load);
dead experts = experts with no kept slot; load entropy H = -sum_e (load_e / L) log(load_e / L) <= log E
(Proposition 2's bound for the routing variable); dropped = requested slots not kept, and tokens
left with no expert at all.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch

from georesolver_core.routing.experts import Routing


@dataclass(frozen=True)
class RoutingStats:
    n_tokens: int
    n_experts: int
    load_requested: list[int]  # slots per expert before capacity
    load_kept: list[int]  # slots per expert after capacity
    cv_requested: float
    cv_kept: float
    dead_experts: int  # experts with no kept slot
    entropy: float  # nats, of the kept load distribution
    entropy_max: float  # log E
    dropped_slots: int  # requested but over capacity
    dropped_tokens: int  # tokens with no kept slot

    def to_dict(self) -> dict:
        return asdict(self)


def _cv(load: torch.Tensor) -> float:
    mean = float(load.mean())
    return float(load.std(unbiased=False)) / mean if mean > 0 else math.nan


def load_entropy(load: torch.Tensor) -> float:
    """H of load / sum(load) in nats (0 log 0 = 0)."""
    total = float(load.sum())
    if total == 0:
        return 0.0
    p = load[load > 0].double() / total
    return float(-(p * p.log()).sum())


def routing_stats(routing: Routing) -> RoutingStats:
    """Load, CV, dead experts, entropy and drops of one routing decision."""
    e = routing.n_experts
    req = routing.requested
    load_req = torch.bincount(routing.indices[req], minlength=e)  # (E,)
    load_kept = torch.bincount(routing.indices[routing.keep], minlength=e)  # (E,)
    return RoutingStats(
        n_tokens=int(routing.indices.shape[0]),
        n_experts=e,
        load_requested=load_req.tolist(),
        load_kept=load_kept.tolist(),
        cv_requested=_cv(load_req.double()),
        cv_kept=_cv(load_kept.double()),
        dead_experts=int((load_kept == 0).sum()),
        entropy=load_entropy(load_kept),
        entropy_max=math.log(e),
        dropped_slots=int(req.sum() - routing.keep.sum()),
        dropped_tokens=int((~routing.keep.any(-1)).sum()),
    )
