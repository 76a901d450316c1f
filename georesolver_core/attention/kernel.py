"""The inverse-distance kernel and the softmax baseline (paper sections 2.1, 5.1, 8.1, 11.2).

The unified language of the paper (section 11.2):

    o_i = sum_{j in R_i} W_ij v_j,
    W_ij = (d(q_i, k_j)^2 + eps)^{-1} / sum_{m in R_i} (d(q_i, k_m)^2 + eps)^{-1},

with d Euclidean (IDA), hyperbolic (HIDA) or spherical (SIDA) and R_i all keys, or all keys up to
i when ``causal``. Sparse index sets (FP/L/C-HIDA) reuse ``ida_weights_from_sq`` on their own
distances.
"""

from __future__ import annotations

import math

import torch

from georesolver_core.attention.fused import fused_ida, fused_ida_weights, fused_preferred, fused_supported
from georesolver_core.geometry import check_geometry, check_points, pairwise_sq_distance
from georesolver_core.validate import check_eps, check_finite, check_same_dim


def causal_mask(n: int, m: int, *, device=None) -> torch.Tensor:
    """Boolean (n, m) mask, True where key j may be seen by query i (j <= i + m - n)."""
    return torch.ones(n, m, dtype=torch.bool, device=device).tril(diagonal=m - n)


def ida_weights_from_sq(sq_dist: torch.Tensor, *, eps: float, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Normalise inverse distances: W_ij = (D_ij + eps)^-1 / sum_m (D_im + eps)^-1. (..., n, m) -> (..., n, m).

    Written as ratios a_min / a_ij with a = D + eps (the analogue of softmax's max-subtraction):
    every term lies in (0, 1], so nothing overflows even when 1/eps would (eps < 1e-38 in float32).
    A row whose keys are all masked out gets zero weight.
    """
    a = sq_dist + eps  # (..., n, m)
    if mask is not None:
        a = a.masked_fill(~mask, math.inf)
    a_min = a.amin(dim=-1, keepdim=True)  # (..., n, 1)
    a_min = torch.where(torch.isfinite(a_min), a_min, torch.ones_like(a_min)).detach()
    r = a_min / a  # (..., n, m), in (0, 1]; 0 where masked
    return r / r.sum(dim=-1, keepdim=True).clamp_min(torch.finfo(r.dtype).tiny)


def _check_qkv(q, k, v, geometry, c):
    check_geometry(geometry)
    check_points("q", q, geometry=geometry, c=c)
    check_points("k", k, geometry=geometry, c=c)
    check_same_dim("q", q, "k", k)
    if q.dim() < 2 or k.dim() < 2:
        raise ValueError(f"q and k must have shapes (..., n, d) and (..., m, d) (got {tuple(q.shape)}, {tuple(k.shape)})")
    if k.shape[-2] == 0:
        raise ValueError("k must hold at least one key (got m = 0): attention weights over no keys are undefined")
    if v is not None:
        check_finite("v", v)
        if v.dim() < 2 or v.shape[-2] != k.shape[-2]:
            raise ValueError(
                f"v must have shape (..., m, dv) with m = number of keys = {k.shape[-2]} (got {tuple(v.shape)})"
            )


IMPLS = ("auto", "fused", "reference")  # auto: the fused tile kernel where it applies, else the reference


def _use_fused(impl: str, q, k, v, eps: float) -> bool:
    if impl not in IMPLS:
        raise ValueError(f"impl must be one of {list(IMPLS)} (got {impl!r})")
    if impl == "fused" and not fused_supported(q, k, v, eps):
        raise ValueError(
            "impl='fused' needs q, k (and v) of one dtype (float32 or float64) on one device, and eps large "
            f"enough that m / eps stays finite (got dtypes {[t.dtype for t in (q, k, v) if t is not None]}, "
            f"eps={eps!r}); use impl='auto'"
        )
    return impl == "fused" or (impl == "auto" and fused_preferred(q, k, v, eps))


def reference_ida_weights(
    q: torch.Tensor,
    k: torch.Tensor,
    *,
    eps: float,
    geometry: str = "euclidean",
    c: float = 1.0,
    causal: bool = False,
) -> torch.Tensor:
    """The naive kernel: exact pairwise distances by differencing, then normalisation. (..., n, m).

    O(n m) memory; the float64 reference the fused kernels are tested against.
    """
    sq = pairwise_sq_distance(q, k, geometry=geometry, c=c, validate=False)  # (..., n, m)
    mask = causal_mask(q.shape[-2], k.shape[-2], device=q.device) if causal else None
    return ida_weights_from_sq(sq, eps=eps, mask=mask)


def reference_ida(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    eps: float,
    geometry: str = "euclidean",
    c: float = 1.0,
    causal: bool = False,
) -> torch.Tensor:
    """The naive kernel's output W v. (..., n, dv)."""
    return reference_ida_weights(q, k, eps=eps, geometry=geometry, c=c, causal=causal) @ v


def ida_weights(
    q: torch.Tensor,
    k: torch.Tensor,
    *,
    eps: float,
    geometry: str = "euclidean",
    c: float = 1.0,
    causal: bool = False,
    impl: str = "auto",
) -> torch.Tensor:
    """Inverse-distance attention weights; each row sums to 1. (..., n, d), (..., m, d) -> (..., n, m).

    As eps -> 0 and q_i = k_j*, W_ij* -> 1 (exact retrieval, Lemma 5.1(a)). ``impl="auto"`` uses the
    tile kernel of ``attention.fused`` where it applies and pays off (``fused_preferred``);
    ``"reference"`` forces the naive kernel, ``"fused"`` the tile kernel.
    """
    eps = check_eps(eps)
    _check_qkv(q, k, None, geometry, c)
    if _use_fused(impl, q, k, None, eps):
        return fused_ida_weights(q, k, eps=eps, geometry=geometry, c=c, causal=causal)
    return reference_ida_weights(q, k, eps=eps, geometry=geometry, c=c, causal=causal)


def ida(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    eps: float,
    geometry: str = "euclidean",
    c: float = 1.0,
    causal: bool = False,
    impl: str = "auto",
) -> torch.Tensor:
    """Inverse-distance attention output o = W v. (..., n, d), (..., m, d), (..., m, dv) -> (..., n, dv).

    ``impl="auto"`` runs the streaming kernel of ``attention.fused`` (O(T d) memory, custom backward)
    where it applies and pays off; ``"reference"`` forces the naive kernel (O(n m) memory), ``"fused"``
    the streaming one.
    """
    eps = check_eps(eps)
    _check_qkv(q, k, v, geometry, c)
    if impl == "flex":  # opt-in: torch's FlexAttention with the score hook -log(d^2 + eps) (attention.flex)
        from georesolver_core.attention.flex import flex_ida

        return flex_ida(q, k, v, eps=eps, geometry=geometry, c=c, causal=causal)
    if _use_fused(impl, q, k, v, eps):
        return fused_ida(q, k, v, eps=eps, geometry=geometry, c=c, causal=causal)
    return reference_ida(q, k, v, eps=eps, geometry=geometry, c=c, causal=causal)


def softmax_weights(
    q: torch.Tensor, k: torch.Tensor, *, scale: float | None = None, causal: bool = False
) -> torch.Tensor:
    """Softmax attention weights softmax(scale q k^T), scale = 1/sqrt(d) by default. (..., n, m)."""
    check_finite("q", q)
    check_finite("k", k)
    check_same_dim("q", q, "k", k)
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    else:
        scale = float(scale)
        if not math.isfinite(scale) or scale <= 0:
            raise ValueError(f"scale must be a finite number > 0 (got {scale!r})")
    logits = scale * (q @ k.transpose(-1, -2))  # (..., n, m)
    if causal:
        logits = logits.masked_fill(~causal_mask(q.shape[-2], k.shape[-2], device=q.device), -math.inf)
    return torch.softmax(logits, dim=-1)


def softmax_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, scale: float | None = None, causal: bool = False
) -> torch.Tensor:
    """Softmax attention output softmax(scale q k^T) v. (..., n, d), (..., m, d), (..., m, dv) -> (..., n, dv)."""
    check_finite("v", v)
    if v.dim() < 2 or v.shape[-2] != k.shape[-2]:
        raise ValueError(f"v must have shape (..., m, dv) with m = {k.shape[-2]} (got {tuple(v.shape)})")
    return softmax_weights(q, k, scale=scale, causal=causal) @ v
