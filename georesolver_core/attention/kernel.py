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

from georesolver_core.attention import compiled
from georesolver_core.attention.flex import flex_applies, flex_checked, flex_ida
from georesolver_core.attention.fused import fused_ida, fused_ida_weights, fused_preferred, fused_supported
from georesolver_core.attention.fused_geometry import tile_geometry
from georesolver_core.attention.fused_schedule import single_threaded
from georesolver_core.attention.gathered import gathered_ida
from georesolver_core.attention.reference import (
    causal_mask,
    reference_ida,
    reference_ida_weights,
)
from georesolver_core.attention.spec import ALL_KEYS, CAUSAL, Gathered, KernelSpec
from georesolver_core.geometry import GEOMETRIES, check_points
from georesolver_core.validate import broadcast_batch, check_finite, check_same_dim, finite_extremes


def _check_qkv(q, k, v, spec: KernelSpec) -> int:
    """Validate the inputs of ``attend``; returns the number of batch entries (broadcast).

    The value checks (one reduction or two per tensor) run on a single-threaded worker when the
    Python tile kernel may run next on the CPU (``fused_schedule.single_threaded``: its workers and the
    caller's OpenMP team would compete), then the shapes are checked. The compiled kernel runs in torch's
    own thread pool, so before it the checks run here."""
    tensors = [t for t in (q, k, v) if t is not None]
    cpu = all(isinstance(t, torch.Tensor) and t.device.type == "cpu" for t in tensors)
    if cpu and not (v is not None and spec.counts is None and compiled.module() is not None):
        single_threaded(lambda: _check_values(q, k, v, spec))
    else:
        _check_values(q, k, v, spec)
    check_same_dim("q", q, "k", k)
    if q.dim() < 2 or k.dim() < 2:
        raise ValueError(
            f"q and k must have shapes (..., n, d) and (..., m, d) (got {tuple(q.shape)}, {tuple(k.shape)})"
        )
    m = k.shape[-2]
    if m == 0:
        raise ValueError("k must hold at least one key (got m = 0): attention weights over no keys are undefined")
    named = [("q", q.shape[:-2]), ("k", k.shape[:-2])]
    if v is not None:
        if v.dim() < 2 or v.shape[-2] != m:
            raise ValueError(
                f"v must have shape (..., m, dv) with m = number of keys = {m} (got {tuple(v.shape)})"
            )
        named.append(("v", v.shape[:-2]))
    if spec.counts is not None:
        if spec.counts.dim() < 1 or spec.counts.shape[-1] != m:
            raise ValueError(
                f"counts must have shape (..., m) with m = number of keys = {m} (got {tuple(spec.counts.shape)})"
            )
        named.append(("counts", spec.counts.shape[:-1]))
    batch = broadcast_batch([name for name, _ in named], [shape for _, shape in named])
    return batch.numel()


def _check_values(q, k, v, spec: KernelSpec) -> None:
    """Finite points of the geometry, finite values, and (flat space) coordinates whose squares do not overflow."""
    for name, x in (("q", q), ("k", k)):
        check_points(name, x, geometry=spec.geometry, c=spec.c)
        if not GEOMETRIES[spec.geometry].has_bounded_coordinates:  # in the ball or on the sphere they are
            _check_magnitude(name, x)
    if v is not None:
        check_finite("v", v)


def _check_magnitude(name: str, x: torch.Tensor) -> None:
    """Coordinates small enough that |x|^2 + |y|^2 stays finite (the distances' matmul and differencing
    forms both square them): below sqrt(max float) / (4 sqrt(d)), about 4.6e18 / sqrt(d) in float32."""
    if x.numel() == 0 or not x.is_floating_point():
        return
    limit = math.sqrt(torch.finfo(x.dtype).max) / (4.0 * math.sqrt(x.shape[-1]))
    biggest = finite_extremes(x)[1]  # one min/max pass (x is finite: checked before)
    if biggest > limit:
        raise ValueError(
            f"{name} must have coordinates of size <= {limit:.3g} in {x.dtype} (got {biggest:.3g}): their squares "
            "overflow; rescale the inputs or use float64"
        )


def _check_same_dtype(q, k, v) -> str:
    """One dtype and device for q, k (and v); returns the description used in errors."""
    tensors = [("q", q), ("k", k)] + ([("v", v)] if v is not None else [])
    got = ", ".join(f"{name} {t.dtype} on {t.device}" for name, t in tensors)
    if len({(t.dtype, t.device) for _, t in tensors}) > 1:
        raise ValueError(f"q, k and v must share one dtype and device (got {got}); convert with .to(q)")
    return got


def _check_dtypes(q, k, v) -> None:
    """One dtype and device for q, k, v, and a precision the kernel is exact in."""
    got = _check_same_dtype(q, k, v)
    if q.dtype not in (torch.float32, torch.float64):
        # float16 / bfloat16: eps below their smallest normal (6e-5 / 1e-38 with 3 digits) rounds
        # d^2 + eps to 0 at q = k, and 1/eps overflows for eps < 2e-5 in float16.
        raise ValueError(
            f"q, k and v must be float32 or float64 (got {got}): half precision cannot hold (d^2 + eps)^-1 "
            "over the allowed eps range; compute attention with q.float(), k.float(), v.float()"
        )


IMPLS = ("auto", "fused", "reference")  # auto: the fused tile kernel where it applies, else the reference


# impl="auto" runs the O(n m)-memory reference kernel where the fused one does not apply; beyond this
# many query-key pairs (over the batch; 2^26 = 64 M: 256 MB in float32 per n x m temporary, and the
# reference holds several) it refuses instead of silently allocating gigabytes.
REFERENCE_MAX_PAIRS = 1 << 26


def _use_fused(impl: str, q, k, v, spec: KernelSpec, batch: int = 1) -> bool:
    if impl not in IMPLS:
        raise ValueError(f"impl must be one of {list(IMPLS)} (got {impl!r})")
    if impl == "fused":
        tile_geometry(spec.geometry)  # ValueError naming the fused kernel and the geometry it has no tile for
    if impl == "fused" and not fused_supported(q, k, v, spec):
        raise ValueError(
            "impl='fused' needs q, k (and v) of one dtype (float32 or float64) on one device, keys=ALL_KEYS "
            "or CAUSAL, and eps large enough that m / eps stays finite (got dtypes "
            f"{[t.dtype for t in (q, k, v) if t is not None]}, eps={spec.eps!r}); use impl='auto'"
        )
    if impl == "fused" or (impl == "auto" and fused_preferred(q, k, v, spec)):
        return True
    pairs = batch * q.shape[-2] * k.shape[-2]
    if impl == "auto" and pairs > REFERENCE_MAX_PAIRS:
        raise ValueError(
            f"impl='auto' would fall back to the O(n m)-memory reference kernel for {pairs:,} query-key pairs "
            f"(more than {REFERENCE_MAX_PAIRS:,}) because the fused kernel does not apply here (dtype "
            f"{q.dtype}, eps={spec.eps!r}, keys={type(spec.keys).__name__}); use float32/float64, a larger "
            "eps, or pass impl='reference' to accept the memory"
        )
    return False


def attend_weights(q: torch.Tensor, k: torch.Tensor, spec: KernelSpec, *, impl: str = "auto") -> torch.Tensor:
    """The weights W_ij = n_j s_ij / sum_{m in R_i} n_m s_im of ``spec`` (zero outside R_i). (..., n, m).

    Validates q and k, then runs the fused tile kernel where it applies and pays off, else the reference.
    """
    batch = _check_qkv(q, k, None, spec)
    if _use_fused(impl, q, k, None, spec, batch):
        return fused_ida_weights(q, k, spec)
    _check_dtypes(q, k, None)
    return reference_ida_weights(q, k, spec)


def attend(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, spec: KernelSpec, *, impl: str = "auto"
) -> torch.Tensor:
    """The output o_i = sum_{j in R_i} W_ij v_j of ``spec``. (..., n, d), (..., m, d), (..., m, dv) -> (..., n, dv).

    The entry point for every member of the family (IDA, HIDA, SIDA; a causal, gathered or counted
    index set): validates, then picks the streaming kernel (O(T d) memory) or the reference (O(n m)).
    """
    batch = _check_qkv(q, k, v, spec)
    if impl == "auto":
        _check_dtypes(q, k, v)
        if not (isinstance(spec.keys, Gathered) or flex_applies(q, spec) or fused_preferred(q, k, v, spec)):
            _use_fused(impl, q, k, v, spec, batch)  # refuses an oversized reference fallback
        return attend_checked(q, k, v, spec)
    if _use_fused(impl, q, k, v, spec, batch):
        return fused_ida(q, k, v, spec)
    _check_dtypes(q, k, v)
    return reference_ida(q, k, v, spec)


def attend_checked(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, spec: KernelSpec) -> torch.Tensor:
    """``attend(..., impl="auto")`` on inputs known to be valid: no checks, no host synchronisation.

    For callers that built q, k, v themselves (``GeoAttention`` embeds its projections into the
    geometry, so they are points by construction): validation happens once, at the public boundary.
    CPU: the streaming kernel (O(T d) memory) where it applies; CUDA float32: FlexAttention
    (``attention.flex``); a ``Gathered`` set: the gathered kernel; else the reference.
    """
    if isinstance(spec.keys, Gathered):
        return gathered_ida(q, k, v, spec)  # the listed keys only: O(n |S| d), never an n x m matrix
    if flex_applies(q, spec):
        return flex_checked(q, k, v, spec)
    if fused_preferred(q, k, v, spec):
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
    spec = _spec(eps, geometry, c, causal)
    if impl == "flex":  # torch's FlexAttention with the score hook -log(d^2 + eps) (attention.flex)
        return flex_ida(q, k, v, spec)
    return attend(q, k, v, spec, impl=impl)


def softmax_weights(
    q: torch.Tensor, k: torch.Tensor, *, scale: float | None = None, causal: bool = False
) -> torch.Tensor:
    """Softmax attention weights softmax(scale q k^T), scale = 1/sqrt(d) by default. (..., n, m).

    ``causal``: query i sees keys j <= i + m - n; a query that sees none gets an all-zero row."""
    check_finite("q", q)
    check_finite("k", k)
    check_same_dim("q", q, "k", k)
    _check_same_dtype(q, k, None)
    if q.dim() < 2 or k.dim() < 2:
        raise ValueError(
            f"q and k must have shapes (..., n, d) and (..., m, d) (got {tuple(q.shape)}, {tuple(k.shape)})"
        )
    if k.shape[-2] == 0:  # as ida: a distribution over no keys does not exist (softmax would return zeros)
        raise ValueError("k must hold at least one key (got m = 0): attention weights over no keys are undefined")
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    else:
        scale = _check_scale(scale)
    _check_scores(q, k, scale)
    logits = scale * (q @ k.transpose(-1, -2))  # (..., n, m)
    if not causal:
        return torch.softmax(logits, dim=-1)
    mask = causal_mask(q.shape[-2], k.shape[-2], device=q.device)  # (n, m)
    # A query that sees no key (more queries than keys) gets weight 0, as in IDA: its row of -inf
    # logits is replaced by zeros before the softmax (no NaN, also in the gradient) and zeroed after.
    seen = mask.any(dim=-1, keepdim=True)  # (n, 1)
    logits = logits.masked_fill(~mask, -math.inf).masked_fill(~seen, 0.0)
    return torch.softmax(logits, dim=-1) * seen


def _check_scale(scale) -> float:
    try:
        scale = float(scale)
    except (TypeError, ValueError):
        scale = math.nan
    if not math.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be a finite number > 0 (got {scale!r})")
    return scale


def _check_scores(q: torch.Tensor, k: torch.Tensor, scale: float) -> None:
    """Scores scale q.k^T that cannot overflow: |scale q.k| <= scale d max|q| max|k| must stay below the
    dtype's largest value, else the softmax of an infinite score is NaN (silently, at 1e20 in float32).

    Refused rather than computed in float64: that would return a dtype the caller did not ask for and only
    move the overflow (to entries near 1e154), and rescaling q or k is no fix the library may apply for the
    caller, since softmax is not scale-invariant (it changes the weights). The bound is Hölder's, so it may
    refuse inputs whose true scores would just fit; it needs no n x m pass to decide."""
    if q.numel() == 0 or k.numel() == 0:
        return
    bound = scale * q.shape[-1] * finite_extremes(q)[1] * finite_extremes(k)[1]
    if bound > torch.finfo(q.dtype).max / 2:
        raise ValueError(
            f"q and k are too large for softmax scores in {q.dtype}: scale d max|q| max|k| = {bound:.3g} "
            f"overflows (limit {torch.finfo(q.dtype).max / 2:.3g}); rescale the inputs or use float64"
        )


def softmax_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, scale: float | None = None, causal: bool = False
) -> torch.Tensor:
    """Softmax attention output softmax(scale q k^T) v. (..., n, d), (..., m, d), (..., m, dv) -> (..., n, dv)."""
    check_finite("v", v)
    if v.dim() < 2 or k.dim() < 2 or v.shape[-2] != k.shape[-2]:
        raise ValueError(f"v must have shape (..., m, dv) with m = {k.shape[-2]} (got {tuple(v.shape)})")
    _check_same_dtype(q, k, v)
    return softmax_weights(q, k, scale=scale, causal=causal) @ v
