"""The sub-quadratic HIDA kernels as attention modules for ``GeoAttention`` (paper sections 5.4-5.6).

Each ``build_*`` takes an ``AttentionConfig`` and returns a module mapping q, k, v (B, nh, T, hs),
already in the ball, to (B, nh, T, hs); ``attention.layer.ATTENTION`` lists them as "fp-hida",
"l-hida" and "c-hida". None in the config means the paper's default size.
"""

from __future__ import annotations

import torch
from torch import nn

from georesolver_core.attention.c_hida import CHIDA
from georesolver_core.attention.fp_hida import fp_hida
from georesolver_core.attention.l_hida import LHIDA

DEFAULT_ANCHORS = 16  # m = Theta(1) (Proposition 1)
DEFAULT_SUMMARIES = 16  # c = Theta(1)


class FPHIDAttention(nn.Module):
    """FP-HIDA over the positions of the sequence (window and globals from the config)."""

    def __init__(self, config):
        super().__init__()
        self.config = config

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        cfg = self.config
        return fp_hida(q, k, v, eps=cfg.eps, c=cfg.c, window=cfg.window, n_global=cfg.n_global, causal=cfg.causal)


class CHIDAHeads(nn.Module):
    """C-HIDA run per (batch, head) stream; always causal (a stream has no future)."""

    def __init__(self, config):
        super().__init__()
        hs = config.d_model // config.n_heads
        self.chida = CHIDA(config.n_summaries or DEFAULT_SUMMARIES, hs, eps=config.eps, c=config.c)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        B, nh, T, hs = q.shape
        flat = [t.reshape(B * nh, T, t.shape[-1]) for t in (q, k, v)]  # (B nh, T, .)
        return self.chida(*flat).view(B, nh, T, v.shape[-1])  # (B, nh, T, dv)


def build_fp_hida(config) -> nn.Module:
    return FPHIDAttention(config)


def build_l_hida(config) -> nn.Module:
    hs = config.d_model // config.n_heads
    return LHIDA(
        config.n_anchors or DEFAULT_ANCHORS,
        hs,
        eps=config.eps,
        c=config.c,
        n_heads=config.n_heads,
        causal=config.causal,
    )


def build_c_hida(config) -> nn.Module:
    return CHIDAHeads(config)
