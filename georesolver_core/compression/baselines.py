"""The KV-cache key quantisers HCC is compared with, through the same ``CompressedKeys`` object.

- ``kivi_quantize(..., axis="channel")``: KIVI's key quantiser (Liu et al. 2024, ref. [52]):
  asymmetric b-bit integers per channel, over groups of ``group`` consecutive tokens, with a
  float16 scale and zero point per (group, channel); the most recent ``residual`` tokens stay in
  float16. KIVI's own settings are b = 2, group = 32, residual = 128.
- ``kivi_quantize(..., axis="token")``: the same per token, over groups of ``group`` channels
  (how KIVI stores values; the usual per-token int quantiser for keys).
- ``uniform_quantize``: plain int-b over the whole tensor, one float32 scale and offset (int8, int4).

Asymmetric rounding of a group with minimum m and maximum M, L = 2^b - 1 levels above m:

    s = (M - m) / L,   code = clamp(round((x - m) / s), 0, L),   x_hat = m + s code

s and m are rounded to their storage type first, so the decoder sees exactly what is stored.
"""

from __future__ import annotations

import math

import torch

from georesolver_core.compression.compressed import CompressedKeys, check_fields, check_side, dtype_name
from georesolver_core.compression.hcc import check_keys
from georesolver_core.compression.packing import check_bits, pack_bits, packed_nbytes, unpack_bits
from georesolver_core.validate import check_positive_int, finite_extremes

AXES = ("channel", "token")


def _round_asym(x: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor, bits: int, store: torch.dtype):
    """Codes of x in [lo, hi] (broadcast) and the stored (scale, offset) in dtype ``store``."""
    levels = 2**bits - 1
    offset = lo.to(store)
    scale = ((hi - lo) / levels).to(store)
    s = scale.to(x.dtype)
    # A constant group has scale 0: every code is 0 and x_hat = offset.
    safe = torch.where(s > 0, s, torch.ones_like(s))
    codes = ((x - offset.to(x.dtype)) / safe).round_().clamp_(0, levels)
    return codes, scale, offset


def _as_3d(keys: torch.Tensor) -> torch.Tensor:
    """(..., n, d) -> (B, n, d): leading dims flattened into one batch of sequences."""
    if keys.dim() == 1:
        return keys.reshape(1, 1, -1)
    return keys.reshape(-1, keys.shape[-2], keys.shape[-1])


def _pad(x: torch.Tensor, dim: int, multiple: int) -> torch.Tensor:
    """Pad by repeating the last slice along ``dim``: groups' min and max are unchanged."""
    extra = (-x.shape[dim]) % multiple
    if not extra:
        return x
    last = x.narrow(dim, x.shape[dim] - 1, 1)
    return torch.cat([x, last.expand(*[extra if i == dim % x.dim() else -1 for i in range(x.dim())])], dim=dim)


def _kivi_split(shape: tuple[int, ...], residual: int) -> tuple[int, int, int, int]:
    """(B, n, d, n_q): batch, tokens, channels and the tokens that are quantised (the rest is residual)."""
    d = shape[-1]
    n = shape[-2] if len(shape) >= 2 else 1
    b = math.prod(shape[:-2]) if len(shape) >= 2 else 1
    return b, n, d, max(n - residual, 0)


def kivi_nbytes(n_keys: int, d: int, params: dict, shape: tuple[int, ...]) -> int:
    """Storage: packed codes + float16 scale and zero per group + float16 residual tokens."""
    b, n, d, nq = _kivi_split(shape, params["residual"])
    g = params["group"]
    groups = math.ceil(nq / g) * d if params["axis"] == "channel" else nq * math.ceil(d / g)
    return packed_nbytes(b * nq * d, params["bits"]) + b * groups * 2 * 2 + b * (n - nq) * d * 2


FLOAT16_MAX = float(torch.finfo(torch.float16).max)  # 65504


def _check_half_range(keys: torch.Tensor) -> None:
    """KIVI stores its scales, zero points and residual tokens in float16 (as the paper does): a key entry
    beyond float16's range would be stored as inf, and every dequantised key of its group with it."""
    if keys.numel() and finite_extremes(keys)[1] > FLOAT16_MAX / 2:  # the scale max - min may double it
        raise ValueError(
            f"keys must have entries of size <= {FLOAT16_MAX / 2:g} for KIVI (got {finite_extremes(keys)[1]:.3g}): "
            "its scales, zero points and residual tokens are float16; rescale the keys first"
        )


def kivi_quantize(
    keys: torch.Tensor, *, bits: int, group: int = 32, axis: str = "channel", residual: int = 0
) -> CompressedKeys:
    """KIVI-style asymmetric group quantisation of keys (..., n, d); see the module docstring."""
    bits = check_bits("bits", bits)
    group = check_positive_int("group", group, 1, 1 << 20)
    residual = check_positive_int("residual", residual, 0, 1 << 30)
    if axis not in AXES:
        raise ValueError(f"axis must be one of {list(AXES)} (got {axis!r})")
    check_keys("keys", keys)
    _check_half_range(keys)
    x = _as_3d(keys)  # (B, n, d)
    bsz, n, d, nq = _kivi_split(tuple(keys.shape), residual)
    q, res = x[:, :nq], x[:, nq:]  # (B, nq, d), (B, n - nq, d)
    work = torch.float64 if keys.dtype == torch.float64 else torch.float32
    q = q.to(work)
    if nq == 0:
        codes = q.new_zeros(0)
        scale = offset = torch.zeros(0, dtype=torch.float16)
    elif axis == "channel":
        ng = math.ceil(nq / group)
        grid = _pad(q, 1, group).view(bsz, ng, group, d)  # (B, groups, group tokens, d)
        codes, scale, offset = _round_asym(
            grid, grid.amin(2, keepdim=True), grid.amax(2, keepdim=True), bits, torch.float16
        )
        codes = codes.reshape(bsz, ng * group, d)[:, :nq]  # (B, nq, d) padding dropped
    else:
        ng = math.ceil(d / group)
        grid = _pad(q, 2, group).view(bsz, nq, ng, group)  # (B, nq, groups, group channels)
        codes, scale, offset = _round_asym(
            grid, grid.amin(3, keepdim=True), grid.amax(3, keepdim=True), bits, torch.float16
        )
        codes = codes.reshape(bsz, nq, ng * group)[..., :d]  # (B, nq, d)
    payload = pack_bits(codes.to(torch.int32), bits, check=False)
    side = {"scale": scale.reshape(-1), "zero": offset.reshape(-1), "residual": res.to(torch.float16).reshape(-1)}
    params = {"bits": bits, "group": group, "axis": axis, "residual": residual}
    return CompressedKeys("kivi-" + axis, tuple(keys.shape), dtype_name(keys.dtype), params, payload, side)


def check_kivi_state(params: dict, side: dict, shape: tuple[int, ...], axis: str) -> None:
    """A stored KIVI state: bits, group and residual in range, the method's axis, and side tensors of the
    lengths the layout needs (float16 scale and zero per group, float16 residual tokens)."""
    check_fields("params", params, {"bits", "group", "axis", "residual"})
    check_bits("bits", params["bits"])
    check_positive_int("group", params["group"], 1, 1 << 20)
    check_positive_int("residual", params["residual"], 0, 1 << 30)
    if params["axis"] != axis:
        raise ValueError(f"state params axis must be {axis!r} for this method (got {params['axis']!r})")
    b, n, d, nq = _kivi_split(shape, params["residual"])
    g = params["group"]
    groups = math.ceil(nq / g) * d if axis == "channel" else nq * math.ceil(d / g)
    f16 = torch.float16
    check_side(side, {"scale": (f16, b * groups), "zero": (f16, b * groups), "residual": (f16, b * (n - nq) * d)})


def check_uniform_state(params: dict, side: dict, shape: tuple[int, ...]) -> None:
    """A stored uniform state: bits in range, one finite float32 scale and offset."""
    check_fields("params", params, {"bits"})
    check_bits("bits", params["bits"])
    check_side(side, {"scale": (torch.float32, 1), "zero": (torch.float32, 1)})


def _decode_kivi(ck: CompressedKeys) -> torch.Tensor:
    p = ck.params
    bsz, n, d, nq = _kivi_split(ck.shape, p["residual"])
    work = torch.float64 if ck.dtype == "float64" else torch.float32
    codes = unpack_bits(ck.payload, p["bits"], bsz * nq * d).to(work).view(bsz, nq, d)
    scale, zero = ck.side["scale"].to(work), ck.side["zero"].to(work)
    g = p["group"]
    if nq == 0:
        q = codes
    elif p["axis"] == "channel":
        ng = math.ceil(nq / g)
        grid = _pad(codes, 1, g).view(bsz, ng, g, d)  # (B, groups, group, d)
        q = grid * scale.view(bsz, ng, 1, d) + zero.view(bsz, ng, 1, d)
        q = q.reshape(bsz, ng * g, d)[:, :nq]
    else:
        ng = math.ceil(d / g)
        grid = _pad(codes, 2, g).view(bsz, nq, ng, g)  # (B, nq, groups, group)
        q = grid * scale.view(bsz, nq, ng, 1) + zero.view(bsz, nq, ng, 1)
        q = q.reshape(bsz, nq, ng * g)[..., :d]
    res = ck.side["residual"].to(work).view(bsz, n - nq, d)
    return torch.cat([q, res], dim=1).reshape(ck.shape).to(ck.torch_dtype())


def uniform_nbytes(n_keys: int, d: int, params: dict, shape=None) -> int:
    return packed_nbytes(n_keys * d, params["bits"]) + 8


def uniform_quantize(keys: torch.Tensor, *, bits: int) -> CompressedKeys:
    """Plain asymmetric int-b over the whole tensor: one float32 offset and scale (int8 / int4 / any b)."""
    bits = check_bits("bits", bits)
    check_keys("keys", keys)
    work = torch.float64 if keys.dtype == torch.float64 else torch.float32
    x = keys.to(work)
    codes, scale, offset = _round_asym(x, x.amin(), x.amax(), bits, torch.float32)
    payload = pack_bits(codes.to(torch.int32), bits, check=False)
    side = {"scale": scale.reshape(1), "zero": offset.reshape(1)}
    return CompressedKeys("uniform", tuple(keys.shape), dtype_name(keys.dtype), {"bits": bits}, payload, side)


def _decode_uniform(ck: CompressedKeys) -> torch.Tensor:
    work = torch.float64 if ck.dtype == "float64" else torch.float32
    codes = unpack_bits(ck.payload, ck.params["bits"], ck.n_keys * ck.dim).to(work)
    x = codes * ck.side["scale"].to(work) + ck.side["zero"].to(work)
    return x.reshape(ck.shape).to(ck.torch_dtype())
