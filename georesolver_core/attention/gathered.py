"""Inverse-distance attention over gathered keys: the kernel of every sparse index set (section 11.2).

    o_i = sum_{j in R_i} n_j s_ij v_j / sum_{l in R_i} n_l s_il,    s_ij = (d(q_i, k_j)^2 + eps)^-1

R_i is listed per query by ``spec.keys = Gathered(index)``: ``index`` (n, s) long, -1 padding. The
kernel gathers the s listed keys of a block of queries, (..., b, s, d), and never forms an n x m
matrix: time O(n s d), memory O(b s d) per block plus the O((n + m) d) inputs and gradients.

The backward pass recomputes each block from q, k, v (a custom ``torch.autograd.Function``), so
nothing of size n s d is kept between the passes; key and value gradients are scattered back with
``index_add_``. The block loop has no host synchronisation, so on CUDA it queues without stalls.
"""

from __future__ import annotations

import math

import torch

from georesolver_core.attention.spec import Gathered, KernelSpec
from georesolver_core.geometry import GEOMETRIES
from georesolver_core.validate import broadcast_batch

# At most this many numbers per gathered (b, s, d) block (4 MB in float32): the backward keeps a
# handful of such tensors alive at once, so the peak stays near 30 MB whatever n is.
BLOCK_ELEMENTS = 1 << 20


def block_size(s: int, d: int, dv: int, batch: int) -> int:
    """Queries per block so that one gathered block holds about BLOCK_ELEMENTS numbers."""
    return max(1, BLOCK_ELEMENTS // max(1, s * max(d, dv) * batch))


def _block_output(qb, kg, vg, cg, valid, eps: float, geometry: str, c: float):
    """One block. qb (..., b, d), kg (..., b, s, d), vg (..., b, s, dv), cg (..., b, s) | None,
    valid (b, s) bool -> (..., b, dv)."""
    xy = (qb.unsqueeze(-2) @ kg.transpose(-1, -2)).squeeze(-2)  # (..., b, s)
    xx = (qb * qb).sum(-1, keepdim=True)  # (..., b, 1)
    yy = (kg * kg).sum(-1)  # (..., b, s)
    sq = GEOMETRIES[geometry].sq_distance_from_gram(xx, yy, xy, c)  # (..., b, s)
    a = torch.where(valid, sq + eps, math.inf)  # padding: infinitely far, weight 0
    # Ratios a_min / a lie in (0, 1], so nothing overflows even where 1/eps would; a_min cancels
    # in the normalisation, hence detached.
    a_min = a.amin(dim=-1, keepdim=True).detach()  # (..., b, 1); finite: every row lists i itself
    r = a_min / a  # (..., b, s)
    if cg is not None:
        r = r * cg  # a summary standing for n_j keys counts n_j times
    num = (r.unsqueeze(-2) @ vg).squeeze(-2)  # (..., b, dv)
    return num / r.sum(-1, keepdim=True).clamp_min(torch.finfo(r.dtype).tiny)


def _gather(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """x (..., m, f), idx (b, s) long >= 0 -> (..., b, s, f)."""
    return x.index_select(-2, idx.reshape(-1)).unflatten(-2, idx.shape)


class _GatheredIDA(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, counts, index, eps, geometry, c):
        n, s = index.shape
        batch = max(1, q.shape[:-2].numel())
        step = block_size(s, q.shape[-1], v.shape[-1], batch)
        out = q.new_empty(*q.shape[:-1], v.shape[-1])  # (..., n, dv)
        for i0 in range(0, n, step):
            idx = index[i0 : i0 + step]  # (b, s)
            valid, idx0 = idx >= 0, idx.clamp_min(0)
            cg = None if counts is None else _gather(counts.unsqueeze(-1), idx0).squeeze(-1)
            out[..., i0 : i0 + step, :] = _block_output(
                q[..., i0 : i0 + step, :], _gather(k, idx0), _gather(v, idx0), cg, valid, eps, geometry, c
            )
        ctx.save_for_backward(q, k, v, counts, index)
        ctx.args = (eps, geometry, c, step)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        q, k, v, counts, index = ctx.saved_tensors
        eps, geometry, c, step = ctx.args
        need_q, need_k, need_v, need_c = ctx.needs_input_grad[:4]
        gq = torch.zeros_like(q) if need_q else None
        gk = torch.zeros_like(k) if need_k else None
        gv = torch.zeros_like(v) if need_v else None
        gc = torch.zeros_like(counts) if need_c else None
        for i0 in range(0, index.shape[0], step):
            idx = index[i0 : i0 + step]  # (b, s)
            valid, idx0 = idx >= 0, idx.clamp_min(0)
            flat = idx0.reshape(-1)  # (b s,)
            with torch.enable_grad():
                qb = q[..., i0 : i0 + step, :].detach().requires_grad_(need_q)
                kg = _gather(k, idx0).detach().requires_grad_(need_k)
                vg = _gather(v, idx0).detach().requires_grad_(need_v)
                cg = None
                if counts is not None:
                    cg = _gather(counts.unsqueeze(-1), idx0).squeeze(-1).detach().requires_grad_(need_c)
                out = _block_output(qb, kg, vg, cg, valid, eps, geometry, c)
                wrt = [t for t, need in ((qb, need_q), (kg, need_k), (vg, need_v), (cg, need_c)) if need]
                grads = list(torch.autograd.grad(out, wrt, grad_out[..., i0 : i0 + step, :]))
            if need_q:
                gq[..., i0 : i0 + step, :] = grads.pop(0)
            if need_k:
                gk.index_add_(-2, flat, grads.pop(0).flatten(-3, -2))
            if need_v:
                gv.index_add_(-2, flat, grads.pop(0).flatten(-3, -2))
            if need_c:
                gc.index_add_(-1, flat, grads.pop(0).flatten(-2, -1))
        return gq, gk, gv, gc, None, None, None, None


def gathered_ida(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, spec: KernelSpec) -> torch.Tensor:
    """Inverse-distance attention over the keys ``spec.keys.index`` lists per query.

    q (..., n, d), k (..., m, d), v (..., m, dv), spec.counts (..., m) or None -> (..., n, dv).
    Inputs are taken as validated (the public functions check them); every row of the index must
    list at least one key.
    """
    if not isinstance(spec.keys, Gathered):
        raise ValueError(f"spec.keys must be a Gathered index set (got {type(spec.keys).__name__})")
    index = spec.keys.index.to(q.device)
    if index.dim() != 2 or index.shape[0] != q.shape[-2]:
        raise ValueError(f"index must have shape (n, s) with n = {q.shape[-2]} queries (got {tuple(index.shape)})")
    lead = broadcast_batch(["q", "k", "v"], [q.shape[:-2], k.shape[:-2], v.shape[:-2]])
    q = q.expand(*lead, *q.shape[-2:])
    k = k.expand(*lead, *k.shape[-2:])
    v = v.expand(*lead, *v.shape[-2:])
    counts = spec.counts
    if counts is not None:
        counts = counts.to(q.dtype).expand(*lead, k.shape[-2])
    return _GatheredIDA.apply(q, k, v, counts, index, spec.eps, spec.geometry, spec.c)
