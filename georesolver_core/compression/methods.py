"""The registry of key quantisers: one entry per method, each knowing how to encode, decode and size itself.

``quantize(keys, method, bits=...)`` gives every method one knob, the bits per stored integer
code (HCC: b per direction coordinate, with b_r for the radius), so pages and sweeps compare them
at equal storage by reading the measured ``nbytes``, never a formula.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import torch

from georesolver_core.compression.baselines import (
    _decode_kivi,
    _decode_uniform,
    check_kivi_state,
    check_uniform_state,
    kivi_nbytes,
    kivi_quantize,
    uniform_nbytes,
    uniform_quantize,
)
from georesolver_core.compression.compressed import DECODERS, CompressedKeys
from georesolver_core.compression.hcc import (
    _decode,
    _decode_rotated,
    check_hcc_state,
    hcc_nbytes,
    hcc_quantize,
    hcc_rotated_nbytes,
    hcc_rotated_quantize,
)


@dataclass(frozen=True)
class Quantizer:
    """A registry entry."""

    label: str  # shown in the UI
    description: str
    encode: Callable[..., CompressedKeys]  # (keys, bits, options) -> CompressedKeys
    decode: Callable[[CompressedKeys], torch.Tensor]
    nbytes: Callable[[int, int, dict, tuple], int]  # (n_keys, d, params, shape) -> storage in bytes
    check_state: Callable[[dict, dict, tuple], None]  # (params, side, shape): ValueError for a corrupt state


def _hcc_options(o: dict) -> dict:
    """The HCC keywords of a page's options, with HCC's defaults (b_r = 6, Euclidean radius, implicit layout)."""
    return {
        "bits_radius": o.get("bits_radius", 6),
        "radius": o.get("radius", "euclidean"),
        "direction": o.get("direction", "implicit"),
        "c": o.get("c", 1.0),
    }


def _hcc(keys, bits, o):
    return hcc_quantize(keys, bits_dir=bits, **_hcc_options(o))


def _hcc_rot(keys, bits, o):
    return hcc_rotated_quantize(keys, bits_dir=bits, seed=o.get("seed", 0), **_hcc_options(o))


def _kivi(axis):
    def encode(keys, bits, o):
        return kivi_quantize(keys, bits=bits, group=o.get("group", 32), axis=axis, residual=o.get("residual", 0))

    return encode


QUANTIZERS: dict[str, Quantizer] = {
    "hcc": Quantizer(
        "HCC (polar: radius + direction)",
        "k = r u; u rounded per coordinate to b bits, r to b_r bits (paper section 6)",
        _hcc,
        _decode,
        hcc_nbytes,
        check_hcc_state,
    ),
    "hcc-rotated": Quantizer(
        "HCC after a random rotation",
        "fixed random orthogonal rotation (seeded), then HCC: the PolarQuant / TurboQuant preconditioning",
        _hcc_rot,
        _decode_rotated,
        hcc_rotated_nbytes,
        partial(check_hcc_state, rotated=True),
    ),
    "kivi-channel": Quantizer(
        "KIVI keys: per-channel int",
        "asymmetric int-b per channel over groups of tokens, float16 scale and zero per group",
        _kivi("channel"),
        _decode_kivi,
        kivi_nbytes,
        partial(check_kivi_state, axis="channel"),
    ),
    "kivi-token": Quantizer(
        "Per-token int (KIVI values)",
        "asymmetric int-b per token over groups of channels, float16 scale and zero per group",
        _kivi("token"),
        _decode_kivi,
        kivi_nbytes,
        partial(check_kivi_state, axis="token"),
    ),
    "uniform": Quantizer(
        "Uniform int (per tensor)",
        "plain asymmetric int-b over the whole tensor, one float32 scale and offset (int8 / int4)",
        lambda keys, bits, o: uniform_quantize(keys, bits=bits),
        _decode_uniform,
        uniform_nbytes,
        check_uniform_state,
    ),
}

DECODERS.update(QUANTIZERS)  # what CompressedKeys decodes and checks its layout with

OPTIONS = ("bits_radius", "radius", "direction", "c", "seed", "group", "residual")


def quantize(keys: torch.Tensor, method: str = "hcc", *, bits: int, **options) -> CompressedKeys:
    """Quantise keys (..., n, d) with a registered method at ``bits`` bits per integer code.

    Options (each method reads its own): bits_radius, radius, direction, c (HCC); seed (rotated HCC);
    group, residual (KIVI).
    """
    if method not in QUANTIZERS:
        raise ValueError(f"method must be one of {sorted(QUANTIZERS)} (got {method!r})")
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ValueError(f"options must be among {list(OPTIONS)} (got {unknown})")
    return QUANTIZERS[method].encode(keys, bits, options)


def storage_nbytes(method: str, shape: tuple[int, ...], *, bits: int, **options) -> int:
    """The bytes ``quantize`` stores for keys of this shape, without quantising (tested equal to ``.nbytes``)."""
    probe = quantize(torch.zeros(*[1] * (len(shape) - 1), shape[-1]), method, bits=bits, **options)
    n_keys = 1
    for s in shape[:-1]:
        n_keys *= int(s)
    return QUANTIZERS[method].nbytes(n_keys, int(shape[-1]), probe.params, tuple(shape))
