"""Inverse-distance attention on torch's FlexAttention (opt-in ``ida(..., impl="flex")``; paper section 11.2).

Inverse-distance weights are exactly a softmax over the logits -log(d^2 + eps):

    softmax_j(-log(d_ij^2 + eps)) = (d_ij^2 + eps)^-1 / sum_m (d_im^2 + eps)^-1 = W_ij,

so any softmax-attention engine with a score hook computes IDA. FlexAttention hands ``score_mod``
the dot product s = q_i . k_j (scale 1); with |q_i|^2 and |k_j|^2 precomputed per position,

    Euclidean   d^2 = |q|^2 + |k|^2 - 2 s
    Poincaré    d   = (2/sqrt c) asinh( sqrt( c |q - k|^2 / ((1 - c|q|^2)(1 - c|k|^2)) ) ),  |q - k|^2 as above
    sphere      d   = 2 asin(|q - k| / 2),  |q - k|^2 = 2 - 2 s  (unit vectors; stabler near 0 than acos s)

On a GPU the kernel is compiled (``torch.compile(flex_attention)``) into one fused Triton kernel
with forward and backward. On a CPU torch 2.13 runs flex_attention forward only, unfused: "FlexAttention
does not support backward on CPU" is raised for inputs that require grad (checked: torch 2.13.0), so
on a CPU this module is a forward check against the reference; training there uses the other impls.
The dot-product form of |q - k|^2 cancels for nearby points: in float32 distances below ~1e-3 of
the norms round to 0 (the reference kernel differences coordinates instead).
"""

from __future__ import annotations

import math

import torch

from georesolver_core.attention.spec import AllKeys, Causal, KernelSpec
from georesolver_core.geometry import GEOMETRIES, check_points

_compiled = None


def _flex_attention():
    """flex_attention, compiled once on first GPU use (the eager version is the unfused reference)."""
    global _compiled
    from torch.nn.attention.flex_attention import flex_attention

    if _compiled is None:
        _compiled = torch.compile(flex_attention, dynamic=False)
    return _compiled


def ida_score_mod(q_sq: torch.Tensor, k_sq: torch.Tensor, spec: KernelSpec, offset: int = 0):
    """The score hook: s = q . k -> -log(d^2 + eps). ``q_sq`` (B, H, n) and ``k_sq`` (B, H, m) hold |q|^2, |k|^2."""

    from_gram = GEOMETRIES[spec.geometry].sq_distance_from_gram  # d^2 from |q|^2, |k|^2 and q.k
    eps, c, causal = spec.eps, spec.c, spec.causal

    def dist_sq(score, b, h, qi, kv):
        return from_gram(q_sq[b, h, qi], k_sq[b, h, kv], score, c)

    def score_mod(score, b, h, qi, kv):
        logit = -torch.log(dist_sq(score, b, h, qi, kv) + eps)
        if causal:
            logit = torch.where(kv <= qi + offset, logit, -math.inf)
        return logit

    return score_mod


def flex_ida(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, spec: KernelSpec) -> torch.Tensor:
    """IDA output through FlexAttention. (..., n, d), (..., m, d), (..., m, dv) -> (..., n, dv).

    q and k must be points of the spec's geometry (in the ball of radius 1/sqrt(c), or unit vectors);
    the spec's keys are ALL_KEYS or CAUSAL, without counts (the score hook sees one key at a time).
    """
    if not isinstance(spec.keys, AllKeys | Causal) or spec.counts is not None:
        raise ValueError(
            f"impl='flex' takes keys=ALL_KEYS or CAUSAL and no counts (got {type(spec.keys).__name__}, "
            f"counts {'given' if spec.counts is not None else 'None'})"
        )
    check_points("q", q, geometry=spec.geometry, c=spec.c)
    check_points("k", k, geometry=spec.geometry, c=spec.c)
    needs_grad = torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v))
    if q.device.type == "cpu" and needs_grad:
        raise ValueError(
            "impl='flex' has no CPU backward in torch 2.13 (FlexAttention runs backward on GPUs only): "
            "use impl='auto' or 'reference' to train on a CPU, or call under torch.no_grad()"
        )
    if not needs_grad:  # flex refuses CPU inputs that require grad even under no_grad
        q, k, v = q.detach(), k.detach(), v.detach()
    batch = q.shape[:-2]
    n, m, d, dv = q.shape[-2], k.shape[-2], q.shape[-1], v.shape[-1]
    q4 = q.reshape(-1, 1, n, d)  # (B, 1, n, d): flex wants (B, H, T, D); heads folded into B
    k4 = k.expand(*batch, m, d).reshape(-1, 1, m, d)  # (B, 1, m, d)
    v4 = v.expand(*batch, m, dv).reshape(-1, 1, m, dv)  # (B, 1, m, dv)
    q_sq = (q4 * q4).sum(-1)  # (B, 1, n)
    k_sq = (k4 * k4).sum(-1)  # (B, 1, m)
    score_mod = ida_score_mod(q_sq, k_sq, spec, offset=m - n)
    if q.device.type == "cuda":
        out = _flex_attention()(q4, k4, v4, score_mod=score_mod, scale=1.0)
    else:
        import warnings

        from torch.nn.attention.flex_attention import flex_attention

        with warnings.catch_warnings():  # eager flex warns that it is unfused: on a CPU that is the point
            warnings.simplefilter("ignore")
            out = flex_attention(q4, k4, v4, score_mod=score_mod, scale=1.0)
    return out.reshape(*batch, n, dv)  # (..., n, dv)
