"""Multi-head attention whose kernel and geometry are chosen by name (paper sections 2, 5, 8, 11).

``GeoAttention(AttentionConfig(d_model=64, n_heads=4, kernel="hida"))`` swaps the softmax of a
transformer block for hyperbolic inverse-distance attention with one string.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from georesolver_core.attention import hida_family
from georesolver_core.attention.kernel import ida, softmax_attention
from georesolver_core.geometry import to_ball
from georesolver_core.validate import check_curvature, check_eps, check_positive_int


@dataclass(frozen=True)
class KernelSpec:
    """A registry entry: which geometry the kernel measures in and how projections land there."""

    label: str
    geometry: str | None  # None: dot-product softmax
    embed: Callable[[torch.Tensor, float], torch.Tensor]  # (..., d) -> points of the geometry
    build: Callable | None = None  # config -> module (q, k, v (B, nh, T, hs) -> same); None: ida()


def _identity(x: torch.Tensor, c: float) -> torch.Tensor:
    return x


def _onto_sphere(x: torch.Tensor, c: float) -> torch.Tensor:
    # Learned projections are normalised onto the sphere as in section 8.1; the clamp keeps a
    # zero projection finite.
    return x / x.norm(dim=-1, keepdim=True).clamp_min(torch.finfo(x.dtype).eps)


def _into_ball(x: torch.Tensor, c: float) -> torch.Tensor:
    return to_ball(x, c=c)


ATTENTION: dict[str, KernelSpec] = {
    "softmax": KernelSpec("Softmax (dot product)", None, _identity),
    "ida": KernelSpec("IDA (Euclidean)", "euclidean", _identity),
    "hida": KernelSpec("Dense-HIDA (Poincaré ball)", "poincare", _into_ball),
    "sida": KernelSpec("SIDA (sphere)", "sphere", _onto_sphere),
    "fp-hida": KernelSpec("FP-HIDA (sparse pattern, ball)", "poincare", _into_ball, hida_family.build_fp_hida),
    "l-hida": KernelSpec("L-HIDA (anchors, ball)", "poincare", _into_ball, hida_family.build_l_hida),
    "c-hida": KernelSpec("C-HIDA (streaming summaries, ball)", "poincare", _into_ball, hida_family.build_c_hida),
}


@dataclass(frozen=True)
class AttentionConfig:
    d_model: int = 64  # model width
    n_heads: int = 4  # heads; d_model must divide evenly
    kernel: str = "ida"  # key of ATTENTION
    eps: float = 0.1  # inverse-distance regulariser (ignored by softmax)
    c: float = 1.0  # Poincaré curvature parameter, k = -c (hida only)
    causal: bool = False  # mask future keys
    bias: bool = True  # Q/K/V/O projection biases
    window: int | None = None  # fp-hida band half-width w (None: ceil(log2 T))
    n_global: int | None = None  # fp-hida global tokens g (None: ceil(log2 T))
    n_anchors: int | None = None  # l-hida anchors m (None: 16)
    n_summaries: int | None = None  # c-hida summaries c (None: 16)

    def __post_init__(self):
        check_positive_int("d_model", self.d_model, 1, 65536)
        check_positive_int("n_heads", self.n_heads, 1, 1024)
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads})")
        if self.kernel not in ATTENTION:
            raise ValueError(f"kernel must be one of {sorted(ATTENTION)} (got {self.kernel!r})")
        check_eps(self.eps)
        check_curvature(self.c)
        for name in ("window", "n_global", "n_anchors", "n_summaries"):
            if getattr(self, name) is not None:
                check_positive_int(name, getattr(self, name), 1)


class GeoAttention(nn.Module):
    """Q/K/V projections -> per-head kernel (softmax / IDA / HIDA / SIDA) -> output projection."""

    def __init__(self, config: AttentionConfig):
        super().__init__()
        self.config = config
        self.spec = ATTENTION[config.kernel]
        self.kernel = self.spec.build(config) if self.spec.build else None
        self.qkv = nn.Linear(config.d_model, 3 * config.d_model, bias=config.bias)
        self.out = nn.Linear(config.d_model, config.d_model, bias=config.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        cfg = self.config
        B, T, C = x.shape
        hs = C // cfg.n_heads
        q, k, v = self.qkv(x).split(C, dim=-1)  # 3 x (B, T, C)
        q = q.view(B, T, cfg.n_heads, hs).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(B, T, cfg.n_heads, hs).transpose(1, 2)  # (B, nh, T, hs)
        v = v.view(B, T, cfg.n_heads, hs).transpose(1, 2)  # (B, nh, T, hs)
        if self.spec.geometry is None:
            y = softmax_attention(q, k, v, causal=cfg.causal)
        else:
            q, k = self.spec.embed(q, cfg.c), self.spec.embed(k, cfg.c)
        if self.kernel is not None:
            y = self.kernel(q, k, v)
        elif self.spec.geometry is not None:
            y = ida(q, k, v, eps=cfg.eps, geometry=self.spec.geometry, c=cfg.c, causal=cfg.causal)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C)
        return self.out(y)
