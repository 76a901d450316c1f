"""A random-rotation scalar key quantiser in the style of TurboQuant / PolarQuant (rotate, then round coordinates).

Each key k (d coordinates) is stored as its norm (float16) and the b-bit codes of its unit direction
after a fixed random rotation Q (Haar, regenerated from an 8-byte seed):

    u = Q k / |k|,   code_i = argmin_c |sqrt(d) u_i - z_c|,   k_hat = |k| Q^T z_code / sqrt(d)

After a Haar rotation every coordinate of u has the law of one coordinate of a uniform point on the
sphere S^{d-1} (whatever the key), so one scalar codebook z (the Lloyd-Max quantiser of that law,
2^b levels, fitted once per (d, b) on a seeded sample) serves every coordinate: no per-group scale
or offset is stored. Storage: ceil(n d b / 8) packed code bytes + 2 n norm bytes + 8 seed bytes.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import torch

from georesolver_core.compression.hcc import check_keys, random_rotation
from georesolver_core.compression.packing import check_bits, pack_bits, unpack_bits

CODEBOOK_SAMPLES = 100_000  # draws of the coordinate law the codebook is fitted on
LLOYD_ITERATIONS = 40
MAX_BITS = 8  # 256 levels: the codebook fit stays well under a second


@functools.lru_cache(maxsize=64)
def sphere_codebook(d: int, bits: int) -> torch.Tensor:
    """Lloyd-Max levels (2^bits,) float64, ascending, of sqrt(d) u_1 for u uniform on S^{d-1}.

    Lloyd's iteration: boundaries at midpoints of the levels, each level the mean of its cell.
    """
    g = torch.Generator().manual_seed(1234 + d)
    x = torch.randn(CODEBOOK_SAMPLES, d, generator=g, dtype=torch.float64)
    s = (x[:, 0] / x.norm(dim=1) * math.sqrt(d)).sort().values  # (S,) samples of the coordinate law
    levels = 2**bits
    z = torch.quantile(s, (torch.arange(levels, dtype=torch.float64) + 0.5) / levels)  # start at quantiles
    for _ in range(LLOYD_ITERATIONS):
        cell = torch.bucketize(s, (z[1:] + z[:-1]) / 2)  # (S,) level index of each sample
        sums = torch.zeros(levels, dtype=torch.float64).index_add_(0, cell, s)
        counts = torch.bincount(cell, minlength=levels).to(torch.float64)
        z = torch.where(counts > 0, sums / counts.clamp_min(1), z)
    return z


@dataclass(frozen=True, eq=False)
class RotatedKeys:
    shape: tuple[int, ...]  # (..., n, d) of the original keys
    dtype: torch.dtype
    bits: int
    seed: int
    payload: torch.Tensor  # uint8 packed codes
    norms: torch.Tensor  # float16 (..., n)

    @property
    def n_keys(self) -> int:
        return math.prod(self.shape[:-1])

    @property
    def nbytes(self) -> int:
        """Packed codes + float16 norms + the 8-byte rotation seed."""
        return int(self.payload.numel()) + 2 * int(self.norms.numel()) + 8

    def dequantize(self) -> torch.Tensor:
        d = self.shape[-1]
        z = sphere_codebook(d, self.bits)
        codes = unpack_bits(self.payload, self.bits, math.prod(self.shape)).long().view(self.shape)
        u = z[codes] / math.sqrt(d)  # (..., n, d) rotated unit directions
        rot = random_rotation(d, self.seed)  # (d, d) float64
        k = (u @ rot) * self.norms.to(torch.float64)[..., None]  # rows: Q^T applied to each direction
        return k.to(self.dtype)


def rotated_scalar_quantize(keys: torch.Tensor, *, bits: int, seed: int = 0) -> RotatedKeys:
    """Keys (..., n, d) -> ``RotatedKeys`` at ``bits`` bits per coordinate (1 to MAX_BITS)."""
    keys = check_keys("keys", keys)
    bits = check_bits("bits", bits, 1, MAX_BITS)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise ValueError(f"seed must be an integer in [0, 2^63) (got {seed!r})")
    d = keys.shape[-1]
    k = keys.to(torch.float64)
    norms = k.norm(dim=-1)  # (..., n)
    u = (k / norms.clamp_min(1e-300)[..., None]) @ random_rotation(d, seed).T  # (..., n, d): Q k / |k|
    z = sphere_codebook(d, bits)
    codes = torch.bucketize(u * math.sqrt(d), (z[1:] + z[:-1]) / 2)  # (..., n, d) nearest level
    return RotatedKeys(tuple(keys.shape), keys.dtype, bits, seed, pack_bits(codes, bits), norms.to(torch.float16))
