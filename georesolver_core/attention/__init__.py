"""Attention kernels: inverse-distance attention in three geometries, softmax baseline, multi-head layer."""

from georesolver_core.attention.kernel import (
    causal_mask,
    ida,
    ida_weights,
    ida_weights_from_sq,
    softmax_attention,
    softmax_weights,
)
from georesolver_core.attention.layer import ATTENTION, AttentionConfig, GeoAttention, KernelSpec

__all__ = [
    "ATTENTION",
    "AttentionConfig",
    "GeoAttention",
    "KernelSpec",
    "causal_mask",
    "ida",
    "ida_weights",
    "ida_weights_from_sq",
    "softmax_attention",
    "softmax_weights",
]
