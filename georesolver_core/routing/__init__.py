"""Routing and memory: Geodesic Sparse Routing (section 10) and Dynamic Memory Genesis (section 9)."""

from georesolver_core.routing.dmg import AdaptiveThreshold, DMGConfig, PrototypePool, reset_optimizer_rows
from georesolver_core.routing.experts import ExpertBank, Routing
from georesolver_core.routing.gsr import gsr_route, sida_routing_weights
from georesolver_core.routing.layer import GSR, GSRRouter, MoE, capacity_keep, capacity_of

__all__ = [
    "GSR",
    "AdaptiveThreshold",
    "DMGConfig",
    "ExpertBank",
    "GSRRouter",
    "MoE",
    "PrototypePool",
    "Routing",
    "capacity_keep",
    "capacity_of",
    "gsr_route",
    "reset_optimizer_rows",
    "sida_routing_weights",
]
