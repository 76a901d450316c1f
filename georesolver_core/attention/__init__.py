"""Attention kernels: inverse-distance attention in three geometries, softmax baseline, multi-head layer."""

from georesolver_core.attention.kernel import (
    attend,
    attend_weights,
    ida,
    ida_weights,
    softmax_attention,
    softmax_weights,
)
from georesolver_core.attention.layer import (
    ATTENTION,
    KERNEL_CHOICES,
    AttentionConfig,
    AttentionKind,
    GeoAttention,
    inverse_distance_kind,
)
from georesolver_core.attention.reference import causal_mask, ida_weights_from_sq
from georesolver_core.attention.spec import ALL_KEYS, CAUSAL, Gathered, KernelSpec

__all__ = [
    "ALL_KEYS",
    "ATTENTION",
    "CAUSAL",
    "KERNEL_CHOICES",
    "AttentionConfig",
    "AttentionKind",
    "Gathered",
    "GeoAttention",
    "KernelSpec",
    "attend",
    "attend_weights",
    "causal_mask",
    "ida",
    "ida_weights",
    "ida_weights_from_sq",
    "inverse_distance_kind",
    "softmax_attention",
    "softmax_weights",
]
