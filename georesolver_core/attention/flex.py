"""Inverse-distance attention on torch's FlexAttention: the GPU route (paper section 11.2).

Inverse-distance weights are exactly a softmax over the logits -log(d^2 + eps):

    softmax_j(-log(d_ij^2 + eps)) = (d_ij^2 + eps)^-1 / sum_m (d_im^2 + eps)^-1 = W_ij,

so any softmax engine with a score hook computes IDA. FlexAttention hands ``score_mod`` the dot
product x = q'_i . k'_j (scale 1) of whatever vectors it is given; we give it augmented coordinates
whose dot product is already the distance's argument, so the hook is a scalar function of x alone:

    Euclidean   q' = [q - mu, |q - mu|^2, 1],  k' = [-2 (k - mu), 1, |k - mu|^2]     x = |q - k|^2
    Poincaré    q' = A [q, |q|^2, 1],  k' = B [-2k, 1, |k|^2],  A = 2c / (1 - c|q|^2),  B = 1 / (1 - c|k|^2)
                x = w = 2c |q - k|^2 / ((1 - c|q|^2)(1 - c|k|^2)),   d^2 = arcosh(1 + w)^2 / c   (section 4)
    sphere      q' = q/|q|, k' = k/|k|               x = q'.k',  d^2 = (2 asin(|q - k| / 2))^2, |q - k|^2 = 2 - 2x

The ball's two norms travel inside the coordinates (as the factors A_i, B_j) rather than as
captured buffers: the hook then reads no tensor, and autograd reaches q and k through the ordinary
ops that build q', k' (a captured buffer that needs a gradient is FlexAttention's slow path, and
per-position buffers would be gathered for every score). The head dimension grows by two (padded
with zeros to a multiple of 16 on CUDA). Causal sets go in as a block mask: masked blocks are skipped.

Precision (float32). x is a difference of terms of size |q|^2 + |k|^2, so it carries an absolute
error of a few u (|q|^2 + |k|^2), u = 6e-8: near q = k, where the weights peak, d^2 below that noise
is lost. Mitigation: the Euclidean coordinates are centred on the keys' mean mu (distances do not
change; the noise shrinks from |q|^2 to |q - mu|^2), x is clamped at 0, and the hook's branches
are series near 0 so gradients stay finite at q = k. What is left (``precision_floor``) acts as an
eps floor; the fused CPU kernel recomputes such pairs exactly, this route does not.

CPU: torch 2.13 runs flex_attention forward only, unfused ("FlexAttention does not support backward
on CPU"); there it is a forward check against the reference, and ``flex_formula`` (the same hook on a
dense score matrix) checks the backward of this construction. CUDA float32 tensors take this route
under ``impl="auto"`` (``flex_applies``).
"""

from __future__ import annotations

import functools
import math
import warnings

import torch

from georesolver_core.attention.spec import AllKeys, Causal, KernelSpec, kernel_maths, served
from georesolver_core.geometry import GEOMETRIES, check_points

SERIES_BELOW = 1e-4  # below this x the hooks use their Taylor series (finite gradient at d = 0)
# Compiled variants of flex_attention one process may need: geometry x (dense, causal) x shapes seen.
# Dynamo's default limit (8 per code object) is below that, and past it every call falls back to the
# eager, unfused flex (a dense score matrix, ~10x slower): seen on an H200 with three geometries.
RECOMPILE_LIMIT = 64
_compiled = None


def _flex_attention():
    """flex_attention, compiled once on first GPU use (the eager version is the unfused reference)."""
    global _compiled
    from torch.nn.attention.flex_attention import flex_attention

    if _compiled is None:
        config = torch._dynamo.config
        name = "recompile_limit" if hasattr(config, "recompile_limit") else "cache_size_limit"
        setattr(config, name, max(getattr(config, name), RECOMPILE_LIMIT))
        _compiled = torch.compile(flex_attention, dynamic=False)
    return _compiled


def flex_applies(q: torch.Tensor, spec: KernelSpec) -> bool:
    """What ``impl="auto"`` sends here: CUDA float32 inputs, a dense or causal index set, no counts
    (the hook sees one key at a time, so a multiplicity has nowhere to go)."""
    return (
        q.device.type == "cuda"
        and q.dtype == torch.float32
        and isinstance(spec.keys, AllKeys | Causal)
        and spec.counts is None
        and flex_serves(spec.geometry)
    )


def flex_serves(geometry: str) -> bool:
    """Whether the geometry's kernel maths (``Geometry.tile``) has a score hook here; else impl="flex"
    refuses it with a ValueError naming both."""
    return geometry in served(AUGMENTED)


def _sq_norm(x: torch.Tensor) -> torch.Tensor:
    return (x * x).sum(-1, keepdim=True)  # (..., T, 1)


def _lifted(q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    nq, nk = _sq_norm(q), _sq_norm(k)
    qa = torch.cat([q, nq, torch.ones_like(nq)], dim=-1)  # (..., n, d + 2)
    ka = torch.cat([-2.0 * k, torch.ones_like(nk), nk], dim=-1)  # (..., m, d + 2)
    return qa, ka


def _flat_augmented(q: torch.Tensor, k: torch.Tensor, c: float) -> tuple[torch.Tensor, torch.Tensor]:
    mu = k.detach().mean(-2, keepdim=True)  # (..., 1, d): distances do not depend on it
    return _lifted(q - mu, k - mu)


def _ball_augmented(q: torch.Tensor, k: torch.Tensor, c: float) -> tuple[torch.Tensor, torch.Tensor]:
    qa, ka = _lifted(q, k)
    tiny = torch.finfo(q.dtype).eps  # the reference's rim clamp: a point rounded onto the rim stays finite
    qa = qa * (2.0 * c / (1.0 - c * _sq_norm(q)).clamp_min(tiny))
    ka = ka / (1.0 - c * _sq_norm(k)).clamp_min(tiny)
    return qa, ka


def _sphere_augmented(q: torch.Tensor, k: torch.Tensor, c: float) -> tuple[torch.Tensor, torch.Tensor]:
    # normalised again, as the other kernels: gradients stay tangent
    return q / q.norm(dim=-1, keepdim=True), k / k.norm(dim=-1, keepdim=True)


# by the name of a geometry's kernel maths (its registry entry's ``tile``), as the fused kernel's tile classes
AUGMENTED = {"Euclidean": _flat_augmented, "Poincare": _ball_augmented, "Sphere": _sphere_augmented}


def augmented(q: torch.Tensor, k: torch.Tensor, spec: KernelSpec) -> tuple[torch.Tensor, torch.Tensor]:
    """q', k' of the module doc, whose dot product is the hook's argument x. (..., n, d), (..., m, d)
    -> (..., n, D), (..., m, D), D = d + 2 (Euclidean, ball) or d (sphere). Differentiable."""
    return kernel_maths("flex", spec.geometry, AUGMENTED)(q, k, spec.c)


def _series_or(x: torch.Tensor, series, exact) -> torch.Tensor:
    # Two wheres: the exact branch never sees x near 0, so its infinite derivative there cannot
    # leak a NaN into the gradient (0 * inf) of the branch that is not taken.
    small = x < SERIES_BELOW
    safe = torch.where(small, torch.ones_like(x), x)
    return torch.where(small, series(x), exact(safe))


def _euclidean_sq(x: torch.Tensor, c: float) -> torch.Tensor:
    return x.clamp_min(0.0)


def _poincare_sq(x: torch.Tensor, c: float) -> torch.Tensor:
    # arcosh(1 + w)^2 = 2w - w^2/3 + 4w^3/45 - ... ; arcosh(1 + w) = log1p(w + sqrt(w^2 + 2w))
    w = x.clamp_min(0.0)
    return (
        _series_or(
            w,
            lambda w: w * (2.0 - w * (1.0 / 3.0 - w * (4.0 / 45.0))),
            lambda w: torch.log1p(w + torch.sqrt(w * w + 2.0 * w)) ** 2,
        )
        / c
    )


def _sphere_sq(x: torch.Tensor, c: float) -> torch.Tensor:
    # theta = 2 asin(r / 2), r^2 = |q - k|^2 = 2 - 2 q.k; theta^2 = r^2 + r^4/12 + r^6/90 + ...
    # (asin(r / 2) is stabler near 0 than acos(q.k)). Its argument stops just short of 1: at the
    # antipode asin has an infinite derivative; there the gradient is cut to 0 instead.
    r2 = (2.0 - 2.0 * x).clamp(0.0, 4.0)
    top = 1.0 - torch.finfo(x.dtype).eps
    return _series_or(
        r2,
        lambda r2: r2 * (1.0 + r2 * (1.0 / 12.0 + r2 / 90.0)),
        lambda r2: (2.0 * torch.asin((0.5 * torch.sqrt(r2)).clamp_max(top))) ** 2,
    )


SQ_DISTANCE = {
    "Euclidean": _euclidean_sq,
    "Poincare": _poincare_sq,
    "Sphere": _sphere_sq,
}  # x -> d^2, as AUGMENTED


def ida_score_mod(spec: KernelSpec):
    """The score hook x -> -log(d^2 + eps) of the spec's geometry (x = q'.k', module doc)."""
    kernel_maths("flex", spec.geometry, SQ_DISTANCE)  # ValueError where the geometry has no hook
    return _score_mod(GEOMETRIES[spec.geometry].tile, float(spec.eps), float(spec.c))


@functools.lru_cache(maxsize=256)
def _score_mod(tile: str, eps: float, c: float):
    # One function object per (geometry, eps, c): the compiled flex guards on the hook's identity, so
    # a new closure per call recompiles every call (and past the limit runs the eager, unfused flex).
    sq = SQ_DISTANCE[tile]

    def score_mod(score, b, h, qi, kv):
        return -torch.log(sq(score, c) + eps)

    return score_mod


def precision_floor(q: torch.Tensor, k: torch.Tensor, spec: KernelSpec) -> float:
    """The d^2 below which this route's float arithmetic cannot resolve distances (module doc):
    about 4 u max(|q'|^2 + |k'|^2 terms), u the unit roundoff; compare it with eps."""
    qa, ka = augmented(q.detach(), k.detach(), spec)
    u = torch.finfo(q.dtype).eps / 2
    if qa.shape[-1] == q.shape[-1]:  # the sphere's q' = q: |q - k|^2 = 2 - 2 q.k with |q| = |k| = 1
        return 4.0 * u * 2.0
    big = float(qa[..., :-2].pow(2).sum(-1).amax().sqrt() * ka[..., :-2].pow(2).sum(-1).amax().sqrt())
    return 4.0 * u * max(big, 1.0)


def flex_formula(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, spec: KernelSpec) -> torch.Tensor:
    """What the route computes, as dense eager ops: softmax(score_mod(q' k'^T)) v. (..., n, dv).
    O(n m) memory; it checks the backward of this construction where flex has none (CPU)."""
    qa, ka = augmented(q, k, spec)
    logits = ida_score_mod(spec)(qa @ ka.transpose(-1, -2), None, None, None, None)  # (..., n, m)
    if spec.causal:
        n, m = logits.shape[-2:]
        visible = torch.ones(n, m, dtype=torch.bool, device=q.device).tril(diagonal=m - n)
        logits = logits.masked_fill(~visible, -math.inf)
        seen = visible.any(-1, keepdim=True)  # (n, 1): a row that sees no key gets output 0
        return torch.softmax(logits.masked_fill(~seen, 0.0), dim=-1).mul(seen) @ v
    return torch.softmax(logits, dim=-1) @ v


def _pad_to(x: torch.Tensor, multiple: int) -> torch.Tensor:
    extra = -x.shape[-1] % multiple
    return x if not extra else torch.nn.functional.pad(x, (0, extra))  # zeros add nothing to q'.k'


def flex_ida(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, spec: KernelSpec) -> torch.Tensor:
    """IDA output through FlexAttention. (..., n, d), (..., m, d), (..., m, dv) -> (..., n, dv).

    q and k must be points of the spec's geometry (in the ball of radius 1/sqrt(c), or unit vectors);
    the spec's keys are ALL_KEYS or CAUSAL, without counts.
    """
    if not isinstance(spec.keys, AllKeys | Causal) or spec.counts is not None:
        raise ValueError(
            f"impl='flex' takes keys=ALL_KEYS or CAUSAL and no counts (got {type(spec.keys).__name__}, "
            f"counts {'given' if spec.counts is not None else 'None'})"
        )
    check_points("q", q, geometry=spec.geometry, c=spec.c)
    check_points("k", k, geometry=spec.geometry, c=spec.c)
    return flex_checked(q, k, v, spec)


@functools.lru_cache(maxsize=32)
def _causal_mask(n: int, m: int, device: str):
    """The causal block mask for n queries over m keys (query i sees keys j <= i + m - n), built once
    per shape: building it costs about as much as a small forward."""
    from torch.nn.attention.flex_attention import create_block_mask

    offset = m - n

    def visible(b, h, qi, kv):
        return kv <= qi + offset

    return create_block_mask(visible, None, None, n, m, device=device)


def flex_checked(q, k, v, spec: KernelSpec) -> torch.Tensor:
    """``flex_ida`` on inputs already validated (``attention.attend`` routes CUDA tensors here)."""
    from torch.nn.attention.flex_attention import flex_attention

    needs_grad = torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v))
    if q.device.type == "cpu" and needs_grad:
        raise ValueError(
            "impl='flex' has no CPU backward in torch 2.13 (FlexAttention runs backward on GPUs only): "
            "use impl='auto' or 'reference' to train on a CPU, or call under torch.no_grad()"
        )
    if not needs_grad:  # flex refuses CPU inputs that require grad even under no_grad
        q, k, v = q.detach(), k.detach(), v.detach()
    batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    n, m, dv = q.shape[-2], k.shape[-2], v.shape[-1]
    qa, ka = augmented(q, k, spec)  # (..., n, D), (..., m, D)
    if q.device.type == "cuda":
        qa, ka = _pad_to(qa, 16), _pad_to(ka, 16)
    D = qa.shape[-1]
    q4 = qa.expand(*batch, n, D).reshape(-1, 1, n, D)  # (B, 1, n, D): flex wants (B, H, T, D); heads folded into B
    k4 = ka.expand(*batch, m, D).reshape(-1, 1, m, D)  # (B, 1, m, D)
    v4 = v.expand(*batch, m, dv).reshape(-1, 1, m, dv)  # (B, 1, m, dv)
    if q.device.type == "cuda" and q.dtype != torch.float32:
        raise ValueError(
            f"impl='flex' on a GPU takes float32 tensors (got {q.dtype}): FlexAttention's Triton kernels "
            "have no float64 matrix product; use impl='reference' for float64"
        )
    block_mask = _causal_mask(n, m, str(q.device)) if spec.causal else None
    score_mod = ida_score_mod(spec)
    if q.device.type == "cuda":
        out = _flex_attention()(q4, k4, v4, score_mod=score_mod, block_mask=block_mask, scale=1.0)
    else:
        with warnings.catch_warnings():  # eager flex warns that it is unfused: on a CPU that is the point
            warnings.simplefilter("ignore")
            out = flex_attention(q4, k4, v4, score_mod=score_mod, block_mask=block_mask, scale=1.0)
    return out.reshape(*batch, n, dv)  # (..., n, dv)
