"""A quantiser from the ecosystem beside ours: optimum-quanto, as transformers' ``QuantoQuantizedCache`` uses it.

For a KV cache, transformers quantises each key with quanto's group-wise integer types: ``qint2`` and
``qint4`` asymmetric (a scale and a shift per group of ``q_group_size`` channels of one token, found by
``MaxOptimizer``: the group's min and max), ``qint8`` symmetric (a scale per token). Here the same calls,
on keys in float16 as a half-precision model caches them (so the scales and shifts are float16, as KIVI's):

    bytes = ceil(N d b / 8)            packed b-bit codes of N keys of d channels
          + 2 (scales + shifts)        float16, one each per group (qint8: scales only)

quanto is an optional extra (``pip install -e ".[quanto]"``); without it ``quanto_available()`` is False
and the method is left out of the sweeps. Widths quanto has: 2, 4 and 8 bits.
"""

from __future__ import annotations

import math

import torch

QUANTO_BITS = (2, 4, 8)
GROUP = 64  # transformers' q_group_size default, capped at the head size (a group must divide it)
FLOAT16_MAX = float(torch.finfo(torch.float16).max)


def quanto_available() -> bool:
    """Whether optimum-quanto imports here."""
    try:
        import optimum.quanto  # noqa: F401
    except ImportError:
        return False
    return True


def quanto_quantize(keys: torch.Tensor, bits: int) -> tuple[torch.Tensor, int]:
    """Keys (..., n, d) -> (reconstruction (..., n, d) in keys' dtype, stored bytes) through optimum-quanto."""
    if bits not in QUANTO_BITS:
        raise ValueError(f"bits must be one of {list(QUANTO_BITS)} for quanto (got {bits!r})")
    if keys.ndim < 1 or keys.shape[-1] < 1 or keys.numel() == 0:
        raise ValueError(f"keys must be a non-empty tensor (..., n, d) (got shape {tuple(keys.shape)})")
    if not torch.isfinite(keys).all() or float(keys.abs().max()) > FLOAT16_MAX / 2:
        raise ValueError(f"keys must be finite with entries of size <= {FLOAT16_MAX / 2:g} (float16 scales)")
    from optimum.quanto import MaxOptimizer, qint2, qint4, qint8, quantize_weight

    d = keys.shape[-1]
    flat = keys.detach().reshape(-1, d).to(torch.float16)  # (N, d): one row per key
    if bits == 8:  # symmetric: quanto takes no shift for 8-bit types
        scale = flat.abs().amax(dim=1, keepdim=True).clamp_min(1e-8) / 127.0  # (N, 1)
        qt = quantize_weight(flat, qint8, axis=0, scale=scale)
        side = scale.numel()
    else:
        group = math.gcd(GROUP, d)
        qtype = {2: qint2, 4: qint4}[bits]
        scale, shift = MaxOptimizer()(flat, qtype, 0, group)  # (N d / group, 1) each
        qt = quantize_weight(flat, qtype, axis=0, scale=scale, shift=shift, group_size=group)
        side = scale.numel() + shift.numel()
    recon = qt.dequantize().reshape(keys.shape).to(keys.dtype)
    return recon, math.ceil(flat.numel() * bits / 8) + 2 * side
