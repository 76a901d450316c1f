"""Attention kernels: inverse-distance attention in three geometries, softmax baseline, multi-head layer."""

from georesolver_core.attention.c_hida import CHIDA
from georesolver_core.attention.fp_hida import fp_hida
from georesolver_core.attention.kernel import (
    attend,
    attend_weights,
    ida,
    ida_weights,
    softmax_attention,
    softmax_weights,
)
from georesolver_core.attention.l_hida import l_hida
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
    "CHIDA",
    "Gathered",
    "GeoAttention",
    "KernelSpec",
    "attend",
    "attend_weights",
    "causal_mask",
    "fp_hida",
    "ida",
    "ida_weights",
    "ida_weights_from_sq",
    "inverse_distance_kind",
    "l_hida",
    "softmax_attention",
    "softmax_weights",
]
