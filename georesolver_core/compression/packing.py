"""Bit packing: integer codes of w bits (1 <= w <= 16) stored in a uint8 tensor, w bits per code.

Vectorised layouts (no Python loop over codes), each within one byte per bit-plane of exactly
N w bits for N codes:

- w in {1, 2, 4, 8}: 8 / w codes share one byte (code i in bits (i mod 8/w) w .. of byte i w / 8),
  ceil(N w / 8) bytes;
- w in {3, 5, 6, 7}: bit-planes. Plane j holds bit j of every code, 8 codes per byte, bit 0 of a
  byte first (numpy's ``packbits(bitorder="little")``); w planes of ceil(N / 8) bytes. At most
  w - 1 bytes more than N w / 8 in all, and one pass per plane instead of a per-code shuffle;
- 9 <= w <= 16: the low byte of every code (N bytes) followed by the high w - 8 bits as a stream
  of width w - 8 by the rules above.

``packed_nbytes`` gives the size of each layout; the tests check it against every width.
"""

from __future__ import annotations

import numpy as np
import torch

MAX_BITS = 16


def check_bits(name: str, bits, lo: int = 1, hi: int = MAX_BITS) -> int:
    """A bit width: an integer in [lo, hi] (bools and floats are refused, even 4.0)."""
    if isinstance(bits, bool) or not isinstance(bits, int) or not lo <= bits <= hi:
        raise ValueError(f"{name} must be an integer number of bits in [{lo}, {hi}] (got {bits!r})")
    return bits


def packed_nbytes(count: int, bits: int) -> int:
    """Bytes of a stream of ``count`` codes of ``bits`` bits in the layout above."""
    if bits > 8:
        return count + packed_nbytes(count, bits - 8)
    if 8 % bits == 0:
        return (count * bits + 7) // 8
    return bits * ((count + 7) // 8)


def _pack_plane(plane: torch.Tensor) -> torch.Tensor:
    """0/1 uint8 (N,) -> uint8 (ceil(N / 8),), bit k of byte i = plane[8 i + k]."""
    if plane.device.type == "cpu":
        return torch.from_numpy(np.packbits(plane.numpy(), bitorder="little"))
    extra = (-plane.numel()) % 8
    grid = torch.cat([plane, plane.new_zeros(extra)]).view(-1, 8)  # (bytes, 8 bits)
    out = grid[:, 0].clone()
    for k in range(1, 8):
        out |= grid[:, k] << k
    return out


def _unpack_plane(packed: torch.Tensor, count: int) -> torch.Tensor:
    """The inverse of ``_pack_plane``: uint8 (ceil(N / 8),) -> 0/1 uint8 (N,)."""
    if packed.device.type == "cpu":
        return torch.from_numpy(np.unpackbits(packed.numpy(), bitorder="little", count=count))
    shifts = torch.arange(8, device=packed.device, dtype=torch.uint8)  # (8,)
    return ((packed.unsqueeze(-1) >> shifts) & 1).reshape(-1)[:count]


def pack_bits(codes: torch.Tensor, bits: int, *, check: bool = True) -> torch.Tensor:
    """Integer codes (any shape, values in [0, 2^bits)) -> uint8 (packed_nbytes(N, bits),), N = codes.numel().

    ``check=False`` skips the range check (two passes) for callers whose codes are in range by construction.
    """
    check_bits("bits", bits)
    flat = codes.reshape(-1)
    if check and flat.numel() and (int(flat.min()) < 0 or int(flat.max()) >= 1 << bits):
        raise ValueError(
            f"codes must be integers in [0, {(1 << bits) - 1}] for bits={bits} "
            f"(got range [{int(flat.min())}, {int(flat.max())}])"
        )
    if bits > 8:
        flat = flat.to(torch.int32)
        low = (flat & 0xFF).to(torch.uint8)
        return torch.cat([low, pack_bits(flat >> 8, bits - 8, check=False)])
    flat = flat.to(torch.uint8)
    if 8 % bits == 0:
        per = 8 // bits
        extra = (-flat.numel()) % per
        if extra:
            flat = torch.cat([flat, flat.new_zeros(extra)])
        grid = flat.view(-1, per)  # (bytes, codes per byte)
        if per == 1:
            return grid[:, 0].clone()
        out = grid[:, per - 1] << ((per - 1) * bits)
        for j in range(per - 1):
            out |= grid[:, j] << (j * bits) if j else grid[:, j]
        return out
    planes = [_pack_plane((flat >> j) & 1) for j in range(bits)]  # bits x (ceil(N / 8),)
    return torch.cat(planes)


def unpack_bits(packed: torch.Tensor, bits: int, count: int) -> torch.Tensor:
    """The inverse of ``pack_bits``: uint8 (packed_nbytes(count, bits),) -> codes (count,).

    The codes come back as uint8 for bits <= 8 and int32 above (the narrowest type that holds them).
    """
    check_bits("bits", bits)
    if packed.dtype != torch.uint8 or packed.dim() != 1:
        raise ValueError(f"packed must be a 1-D uint8 tensor (got {packed.dtype}, shape {tuple(packed.shape)})")
    need = packed_nbytes(count, bits)
    if packed.numel() != need:
        raise ValueError(f"packed must hold {need} bytes for {count} codes of {bits} bits (got {packed.numel()})")
    if bits > 8:
        low = packed[:count].to(torch.int32)
        high = unpack_bits(packed[count:], bits - 8, count).to(torch.int32)
        return low | (high << 8)
    if 8 % bits == 0:
        shifts = torch.arange(0, 8, bits, device=packed.device, dtype=torch.uint8)  # (codes per byte,)
        codes = (packed.unsqueeze(-1) >> shifts) & ((1 << bits) - 1)  # (bytes, codes per byte)
        return codes.reshape(-1)[:count]
    size = (count + 7) // 8
    out = torch.zeros(count, dtype=torch.uint8, device=packed.device)
    for j in range(bits):
        out |= _unpack_plane(packed[j * size : (j + 1) * size], count) << j
    return out


def pack_streams(streams: list[tuple[torch.Tensor, int]]) -> torch.Tensor:
    """Several code streams [(codes, bits), ...] packed one after the other into one uint8 tensor."""
    parts = [pack_bits(codes, bits) for codes, bits in streams]
    return torch.cat(parts) if parts else torch.zeros(0, dtype=torch.uint8)


def unpack_streams(payload: torch.Tensor, layout: list[tuple[int, int]]) -> list[torch.Tensor]:
    """The inverse of ``pack_streams`` given [(count, bits), ...]; each stream comes back as int64 (count,)."""
    total = sum(packed_nbytes(n, b) for n, b in layout)
    if payload.numel() != total:
        raise ValueError(f"payload must hold {total} bytes for layout {layout} (got {payload.numel()})")
    out, start = [], 0
    for count, bits in layout:
        size = packed_nbytes(count, bits)
        out.append(unpack_bits(payload[start : start + size], bits, count))
        start += size
    return out
