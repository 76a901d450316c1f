"""The unified GeoResolver model (paper sections 7 and 11.1): HyperGate, the block, small sequence models."""

from georesolver_core.model.block import GeoResolverBlock
from georesolver_core.model.gate import GateValues, HyperGate, gate_jacobian
from georesolver_core.model.model import (
    MEMORY_PATHS,
    GeoResolverModel,
    ModelConfig,
    build_model,
    count_parameters,
    softmax_baseline,
)

__all__ = [
    "MEMORY_PATHS",
    "GateValues",
    "GeoResolverBlock",
    "GeoResolverModel",
    "HyperGate",
    "ModelConfig",
    "build_model",
    "count_parameters",
    "gate_jacobian",
    "softmax_baseline",
]
