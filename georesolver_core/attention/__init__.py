"""Attention kernels: inverse-distance attention in three geometries, softmax baseline, multi-head layer."""

from georesolver_core.attention.c_hida import CHIDA
from georesolver_core.attention.fp_hida import fp_hida
from georesolver_core.attention.kernel import (
    causal_mask,
    ida,
    ida_weights,
    ida_weights_from_sq,
    softmax_attention,
    softmax_weights,
)
from georesolver_core.attention.l_hida import l_hida
from georesolver_core.attention.layer import ATTENTION, AttentionConfig, GeoAttention, KernelSpec

__all__ = [
    "ATTENTION",
    "AttentionConfig",
    "CHIDA",
    "GeoAttention",
    "KernelSpec",
    "causal_mask",
    "fp_hida",
    "ida",
    "ida_weights",
    "ida_weights_from_sq",
    "l_hida",
    "softmax_attention",
    "softmax_weights",
]
