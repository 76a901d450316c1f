"""The attention weights a trained model's blocks use, read back through the kernels' public weight functions.

A block's kernel module receives q, k (B, nh, T, hs) already in its geometry; ``kernel_weights``
computes the weights that module applies (``attention.attend_weights`` with its spec, or the softmax
weights), and ``head_weights`` records one block's q, k on an input to give one head's (T, T) map.
"""

from __future__ import annotations

import torch
from torch import nn

from georesolver_core.attention import attend_weights, softmax_weights


def kernel_weights(kernel: nn.Module, q: torch.Tensor, k: torch.Tensor, causal: bool) -> torch.Tensor:
    """The weights of a block's kernel module: (B, nh, T, hs) x 2 -> (B, nh, T, T), rows summing to 1."""
    spec = getattr(kernel, "spec", None)
    return attend_weights(q, k, spec) if spec is not None else softmax_weights(q, k, causal=causal)


class _Recorder(nn.Module):
    def __init__(self, inner: nn.Module):
        super().__init__()
        self.inner, self.q, self.k = inner, None, None

    def forward(self, q, k, v):
        self.q, self.k = q, k
        return self.inner(q, k, v)


@torch.no_grad()
def head_weights(model: nn.Module, x: torch.Tensor, layer: int, head: int) -> torch.Tensor:
    """One head's weights on one input x (1, T, d_in): (T, T), row i = query position i."""
    if not 0 <= layer < len(model.blocks):
        raise ValueError(f"layer must be in [0, {len(model.blocks) - 1}] (got {layer})")
    block = model.blocks[layer]
    if not 0 <= head < block.attention.n_heads:
        raise ValueError(f"head must be in [0, {block.attention.n_heads - 1}] (got {head})")
    rec = _Recorder(block.attn.kernel)
    block.attn.kernel = rec
    try:
        model.eval()
        model(x)
    finally:
        block.attn.kernel = rec.inner
    return kernel_weights(rec.inner, rec.q, rec.k, block.attention.causal)[0, head].float().cpu()
