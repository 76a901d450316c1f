"""The inverse-distance kernel and the softmax baseline (paper sections 2.1, 5.1, 8.1, 11.2).

The unified language of the paper (section 11.2):

    o_i = sum_{j in R_i} W_ij v_j,
    W_ij = (d(q_i, k_j)^2 + eps)^{-1} / sum_{m in R_i} (d(q_i, k_m)^2 + eps)^{-1},

with d Euclidean (IDA), hyperbolic (HIDA) or spherical (SIDA) and R_i all keys, or all keys up to
i when ``causal``. ``attend(q, k, v, spec)`` takes the whole ``KernelSpec`` (index sets, per-key
multiplicities); ``ida`` and ``ida_weights`` build one from keywords. The naive kernel lives in
``attention.reference``, the streaming one in ``attention.fused``.
"""

from __future__ import annotations

import math

import torch

from georesolver_core.attention.fused import fused_ida, fused_ida_weights, fused_preferred, fused_supported
from georesolver_core.attention.reference import (
    causal_mask,
    ida_weights_from_sq,  # noqa: F401 - re-exported: callers import it from here
    reference_ida,
    reference_ida_weights,
)
from georesolver_core.attention.spec import ALL_KEYS, CAUSAL, KernelSpec
from georesolver_core.geometry import check_points
from georesolver_core.validate import check_finite, check_same_dim


def _check_qkv(q, k, v, spec: KernelSpec):
    check_points("q", q, geometry=spec.geometry, c=spec.c)
    check_points("k", k, geometry=spec.geometry, c=spec.c)
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


def _use_fused(impl: str, q, k, v, spec: KernelSpec) -> bool:
    if impl not in IMPLS:
        raise ValueError(f"impl must be one of {list(IMPLS)} (got {impl!r})")
    if impl == "fused" and not fused_supported(q, k, v, spec):
        raise ValueError(
            "impl='fused' needs q, k (and v) of one dtype (float32 or float64) on one device, keys=ALL_KEYS "
            "or CAUSAL, and eps large enough that m / eps stays finite (got dtypes "
            f"{[t.dtype for t in (q, k, v) if t is not None]}, eps={spec.eps!r}); use impl='auto'"
        )
    return impl == "fused" or (impl == "auto" and fused_preferred(q, k, v, spec))


def attend_weights(q: torch.Tensor, k: torch.Tensor, spec: KernelSpec, *, impl: str = "auto") -> torch.Tensor:
    """The weights W_ij = n_j s_ij / sum_{m in R_i} n_m s_im of ``spec`` (zero outside R_i). (..., n, m).

    Validates q and k, then runs the fused tile kernel where it applies and pays off, else the reference.
    """
    _check_qkv(q, k, None, spec)
    if _use_fused(impl, q, k, None, spec):
        return fused_ida_weights(q, k, spec)
    return reference_ida_weights(q, k, spec)


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, spec: KernelSpec, *, impl: str = "auto") -> torch.Tensor:
    """The output o_i = sum_{j in R_i} W_ij v_j of ``spec``. (..., n, d), (..., m, d), (..., m, dv) -> (..., n, dv).

    The entry point for every member of the family (IDA, HIDA, SIDA; a causal, gathered or counted
    index set): validates, then picks the streaming kernel (O(T d) memory) or the reference (O(n m)).
    """
    _check_qkv(q, k, v, spec)
    if _use_fused(impl, q, k, v, spec):
        return fused_ida(q, k, v, spec)
    return reference_ida(q, k, v, spec)


def _spec(eps, geometry, c, causal) -> KernelSpec:
    return KernelSpec(eps, geometry, c, keys=CAUSAL if causal else ALL_KEYS)


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
    return attend_weights(q, k, _spec(eps, geometry, c, causal), impl=impl)


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
    return attend(q, k, v, _spec(eps, geometry, c, causal), impl=impl)


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
