"""The unified GeoResolver block (paper section 11.1, module M10).

    x -> QKV -> ( storage path: kernel of ATTENTION[kind] -> o_main ;
                  memory path:  SIDA -> GSR -> DMG -> o_memory )
      -> HyperGate -> o_final -> output projection -> residual, then an MLP

The storage kernel is read from the attention registry (``attention.ATTENTION``), so every kernel
registered there (softmax, IDA, the HIDA family, SIDA) is a block choice without a line here.
With ``gating=False`` and no memory path the block is a plain pre-norm transformer block: that is
the softmax baseline when the kernel is "softmax".
"""

from __future__ import annotations

import torch
from torch import nn

from georesolver_core.attention import AttentionConfig, GeoAttention
from georesolver_core.model.gate import HyperGate


class MLP(nn.Module):
    def __init__(self, d_model: int, hidden: int):
        super().__init__()
        self.fc = nn.Linear(d_model, hidden)
        self.proj = nn.Linear(hidden, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(torch.nn.functional.gelu(self.fc(x)))


class GeoResolverBlock(nn.Module):
    """One block: (B, T, C) -> (B, T, C). ``memory`` is an optional module (B, T, C) queries -> (B, T, C).

    The storage path is a ``GeoAttention`` (its projections and kernel: ``self.attn``); the block gates
    its heads with the memory path's output before the attention's output projection.
    """

    def __init__(
        self, attention: AttentionConfig, *, mlp_hidden: int, gating: bool, memory: nn.Module | None = None
    ):
        super().__init__()
        C = attention.d_model
        self.attention = attention
        self.ln1 = nn.LayerNorm(C)
        self.attn = GeoAttention(attention)
        self.memory = memory
        self.gate = HyperGate(C, attention.n_heads, memory=memory is not None) if gating else None
        self.ln2 = nn.LayerNorm(C)
        self.mlp = MLP(C, mlp_hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        a = self.ln1(x)
        heads, q = self.attn.heads(a)  # (B, nh, T, hs) each: o_main per head, and the queries
        # The memory path reads the same queries, before any geometry's embedding: it routes on the sphere.
        o_memory = self.memory(q.transpose(1, 2).reshape(B, T, C)) if self.memory is not None else None
        if self.gate is not None:
            o = self.gate(a, heads, o_memory)  # (B, T, C): o_final
        else:
            o = heads.transpose(1, 2).reshape(B, T, C)  # (B, T, C)
            if o_memory is not None:
                o = o + o_memory
        x = x + self.attn.out(o)
        return x + self.mlp(self.ln2(x))
