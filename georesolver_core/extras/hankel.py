"""Dyadic Hankel boundary attention (seed 004): a cross block 1/(s + r) as a few thin low-rank pieces.

For a split point b of a sequence of length L, token i < b sits at distance s_i = b - i + delta before the
boundary and token j >= b at r_j = j - b + delta after it; the cross block is the Hankel kernel

    H[i, j] = 1 / (s_i + r_j)                                   (seed: K(s, r) = 1 / (2 pi (s + r)))

Split the r axis into dyadic blocks r in [h, 2h), h = h0, 2 h0, 4 h0, ...; tokens with r < h0 (the boundary
layer) stay dense. On each block the seed's Bernstein-ellipse argument gives s_{N+1}(K) <= 4^-N, so a
rank N = ceil(log4(1/eps)) truncated SVD H_k ~ U_k V_k^T is within eps, and the block acts on values X as
U_k (V_k^T X): O((|I| + |J_k|) N d_v) instead of O(|I| |J_k| d_v). Factors depend only on the block's shape,
so they are computed once per shape and cached. The reverse direction uses the same kernel with s and r
swapped (it is symmetric in them).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

from georesolver_core.theory.hankel import rank_rule
from georesolver_core.validate import check_finite, check_positive_int, check_range


def check_eps_unit(eps: float, name: str = "eps") -> float:
    """A relative error strictly between 0 and 1."""
    try:
        value = float(eps)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in (0, 1) (got {eps!r})") from None
    if not math.isfinite(value) or not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be a number in (0, 1) (got {eps!r})")
    return value


def check_h(h: float, name: str = "h") -> float:
    """A dyadic scale h >= 1 (one token spacing or more)."""
    return check_range(name, h, 1.0, 1e12)


def check_split(length: int, split: int) -> int:
    """A split point with at least one token on each side: 1 <= split <= length - 1."""
    check_positive_int("length", length, 2)
    if isinstance(split, bool) or not isinstance(split, int) or not 1 <= split <= length - 1:
        raise ValueError(
            f"split must be an integer in [1, {length - 1}] for a sequence of length {length} (got {split!r})"
        )
    return split


def hankel_kernel(s: Tensor, r: Tensor) -> Tensor:
    """H[i, j] = 1 / (s_i + r_j) for s (m,), r (n,) > 0 -> (m, n)."""
    return 1.0 / (s[:, None] + r[None, :])


def boundary_distances(length: int, split: int, delta: float = 1.0, dtype=torch.float64) -> tuple[Tensor, Tensor]:
    """s_i = split - i + delta for i < split (s[0] farthest), r_j = j - split + delta for j >= split."""
    check_split(length, split)
    check_range("delta", delta, 1.0, 1e6)  # delta >= 1 keeps s + r >= 2 away from the singularity
    s = split - torch.arange(split, dtype=dtype) + delta  # (split,)
    r = torch.arange(length - split, dtype=dtype) + delta  # (L - split,)
    return s, r


def dyadic_blocks(r: Tensor, h0: float) -> list[tuple[int, int, float]]:
    """Index ranges [start, stop) of the r values (ascending) in [h, 2h) for h = h0, 2 h0, ...; with
    h = 0 first for the dense boundary layer r < h0. Empty blocks are left out."""
    check_h(h0, "h0")
    rv = r.detach().cpu().numpy()
    out, start = [], int(np.searchsorted(rv, h0, side="left"))
    if start > 0:
        out.append((0, start, 0.0))
    h = float(h0)
    while start < len(rv):
        stop = int(np.searchsorted(rv, 2 * h, side="left"))
        if stop > start:
            out.append((start, stop, h))
        start, h = stop, 2 * h
    return out


def block_singular_values(
    h: float, n_s: int, delta: float = 1.0, width: int | None = None, top: int = 24
) -> np.ndarray:
    """The leading singular values (descending, float64) of the block s = delta + 1 .. delta + n_s,
    r = h .. h + width - 1 (width defaults to h: the dyadic block [h, 2h)).

    Unnormalised: divide by 2 pi to compare with the seed's K = 1 / (2 pi (s + r)), or by the first one for
    the normalised decay. Large blocks go through ``_svd``'s randomized range finder (a 4096 x 1024 block:
    seconds instead of a full SVD's half minute here).
    """
    check_h(h)
    check_positive_int("n_s", n_s)
    s = delta + 1 + torch.arange(n_s, dtype=torch.float64)  # (n_s,)
    r = h + torch.arange(width or max(1, int(h)), dtype=torch.float64)  # (width,)
    sv = _svd(hankel_kernel(s, r), top)[1][:top].numpy()
    return np.pad(sv, (0, top - sv.size))  # a block narrower than top has exactly zero singular values beyond


def _svd(k: Tensor, rank: int) -> tuple[Tensor, Tensor, Tensor]:
    """Leading singular triplets (U (m, n), s (n,), V^T (n, w)) of k, n <= rank + 8.

    Small blocks: a full SVD. Larger ones: a randomized range finder with rank + 8 columns and two power
    iterations (Halko, Martinsson, Tropp 2011). The singular values of these blocks fall like 4^-n or faster,
    so the captured subspace holds the leading ``rank`` triplets to float64 rounding, in O(m w rank) time.
    """
    if min(k.shape) <= 128:
        return torch.linalg.svd(k, full_matrices=False)
    g = torch.Generator().manual_seed(0)
    y = k @ torch.randn(k.shape[1], rank + 8, generator=g, dtype=k.dtype)  # (m, rank + 8)
    for _ in range(2):  # power iterations sharpen the captured subspace
        y = k @ (k.T @ torch.linalg.qr(y).Q)
    q = torch.linalg.qr(y).Q  # (m, rank + 8) orthonormal basis of the range
    ub, sv, vh = torch.linalg.svd(q.T @ k, full_matrices=False)  # (rank + 8, w) small SVD
    return q @ ub, sv, vh


def observed_rank(sv: np.ndarray, eps: float) -> int:
    """Smallest N with s_{N+1} / s_1 <= eps: the rank a truncated SVD needs for relative spectral error eps
    (Eckart-Young: the best rank-N error in operator norm is exactly s_{N+1})."""
    check_eps_unit(eps)
    rel = sv / sv[0]
    return int(np.argmax(rel <= eps)) if (rel <= eps).any() else len(sv)


@functools.lru_cache(maxsize=256)
def _factors64(s_key: tuple[float, ...], r_key: tuple[float, ...], rank: int) -> tuple[np.ndarray, np.ndarray]:
    s, r = torch.tensor(s_key, dtype=torch.float64), torch.tensor(r_key, dtype=torch.float64)
    u, sv, vh = _svd(hankel_kernel(s, r), rank)
    n = min(rank, sv.numel())
    return (u[:, :n] * sv[:n]).numpy(), vh[:n].T.numpy()  # (m, n) with singular values folded in, (w, n)


def block_factors(s: Tensor, r: Tensor, rank: int, dtype=torch.float32) -> tuple[Tensor, Tensor]:
    """U (m, N), V (w, N) with U V^T the best rank-N approximation of 1/(s + r), cached per (s, r, rank).

    The SVD runs in float64 once per block shape and distance offset; later calls are a dictionary look-up.
    """
    check_positive_int("rank", rank)
    u, v = _factors64(tuple(s.tolist()), tuple(r.tolist()), rank)
    return torch.from_numpy(u).to(dtype), torch.from_numpy(v).to(dtype)


def factors_cache_info():
    """Hits and misses of the factor cache (functools' CacheInfo)."""
    return _factors64.cache_info()


def apply_factored(u: Tensor, v: Tensor, x: Tensor) -> Tensor:
    """U (V^T X): (m, N), (w, N), (..., w, d) -> (..., m, d), never forming the m x w block."""
    return u @ (v.transpose(0, 1) @ x)  # (N, w) @ (..., w, d) -> (..., N, d); (m, N) @ -> (..., m, d)


def cross_apply(
    s: Tensor, r: Tensor, x: Tensor, *, eps: float, h0: float = 4.0, rank: int | None = None
) -> Tensor:
    """sum_j X_j / (s_i + r_j) for every target i: dense on the boundary layer r < h0, rank-N on each dyadic
    block of r (N = ceil(log4(1/eps)) unless ``rank`` is given). s (m,), r (n,) ascending, x (..., n, d)."""
    eps = check_eps_unit(eps)
    check_finite("x", x)
    n = rank_rule(eps) if rank is None else check_positive_int("rank", rank)
    out = x.new_zeros(*x.shape[:-2], s.numel(), x.shape[-1])  # (..., m, d)
    for start, stop, h in dyadic_blocks(r, h0):
        xs = x[..., start:stop, :]  # (..., w, d)
        if h == 0.0:
            out = out + hankel_kernel(s, r[start:stop]).to(x.dtype) @ xs  # dense boundary layer
        else:
            u, v = block_factors(s, r[start:stop], n, x.dtype)
            out = out + apply_factored(u.to(x.device), v.to(x.device), xs)
    return out


def dense_cross_apply(s: Tensor, r: Tensor, x: Tensor) -> Tensor:
    """The reference: H X with the dense (m, n) kernel."""
    return hankel_kernel(s, r).to(x.dtype).to(x.device) @ x


@dataclass(frozen=True)
class HankelConfig:
    d_model: int = 32  # width of the token features
    split: int = 64  # boundary b: tokens < b on the left
    eps: float = 1e-3  # relative error per dyadic block -> rank N = ceil(log4(1/eps))
    delta: float = 1.0  # offset of the distances (>= 1: no singularity)
    h0: float = 4.0  # first dyadic scale; r < h0 is the dense boundary layer


class DyadicHankelAttention(nn.Module):
    """Both directions of the boundary interaction as one layer: (B, L, d) -> (B, L, d).

    Left tokens receive sum_j H[i, j] W_v x_j from the right, right tokens sum_i H[i, j] W_v x_i from the
    left, each scaled by a learned gate (init 1 / log2 L, so the sum over dyadic scales starts O(1)), then
    W_o. ``dense=True`` forms the full kernel instead (the reference the factorised path is tested against).
    """

    def __init__(self, config: HankelConfig):
        super().__init__()
        check_positive_int("d_model", config.d_model)
        check_eps_unit(config.eps)
        check_h(config.h0, "h0")
        self.config = config
        self.w_v = nn.Linear(config.d_model, config.d_model, bias=False)
        self.w_o = nn.Linear(config.d_model, config.d_model, bias=False)
        self.gate = nn.Parameter(torch.ones(2))

    def forward(self, x: Tensor, dense: bool = False) -> Tensor:
        cfg = self.config
        B, L, d = x.shape
        s, r = boundary_distances(L, cfg.split, cfg.delta, dtype=x.dtype)
        v = self.w_v(x)  # (B, L, d)
        left, right = v[:, : cfg.split], v[:, cfg.split :]  # (B, b, d), (B, L - b, d)
        if dense:
            to_left, to_right = dense_cross_apply(s, r, right), dense_cross_apply(r, s.flip(0), left.flip(1))
        else:
            to_left = cross_apply(s, r, right, eps=cfg.eps, h0=cfg.h0)  # (B, b, d)
            # the reverse block is the transpose; s is flipped so that it ascends for the dyadic split
            to_right = cross_apply(r, s.flip(0), left.flip(1), eps=cfg.eps, h0=cfg.h0)  # (B, L - b, d)
        scale = self.gate / math.log2(max(L, 2))
        return self.w_o(torch.cat([scale[0] * to_left, scale[1] * to_right], dim=1))  # (B, L, d)
