"""FP-HIDA (M2): hyperbolic inverse-distance attention over a fixed sparse pattern (paper section 5.4).

    S_i = {j : |i - j| <= w}  u  {0, floor(n/g), floor(2n/g), ...}  u  {i +- 2^k}_{k=0..ceil(log2 n)}  u  {i}

with w, g = Theta(log n) by default, so |S_i| <= (2w + 1) + g + 2(ceil(log2 n) + 1) + 1 = O(log n)
(Theorem 5.4) and the whole layer costs O(n log n d). The pattern is built once per (n, w, g,
causal) as a ``Gathered`` index set (duplicates removed, so every key of S_i counts once) and run
through ``attention.gathered``: keys are gathered per query block, never masked out of an n x n
matrix. Causal: only j <= i is kept.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import torch

from georesolver_core.attention.gathered import gathered_ida
from georesolver_core.attention.spec import Gathered, KernelSpec
from georesolver_core.theory.hida import fp_index_size_bound
from georesolver_core.validate import check_finite, check_in_ball, check_kernel_dtype, check_positive_int

MAX_PATTERN_ENTRIES = 1 << 28  # candidate (row, column) pairs before de-duplication (2 GB of int64)


def default_window(n: int) -> int:
    """w = ceil(log2 n), at least 1: the paper's w = Theta(log n)."""
    return max(1, math.ceil(math.log2(max(n, 2))))


def default_n_global(n: int) -> int:
    """g = ceil(log2 n), at least 1 and at most n: the paper's g = Theta(log n)."""
    return min(n, max(1, math.ceil(math.log2(max(n, 2)))))


def _resolve(n: int, window: int | None, n_global: int | None) -> tuple[int, int]:
    check_positive_int("n", n, 1)
    w = default_window(n) if window is None else check_positive_int("window", window, 1)
    g = default_n_global(n) if n_global is None else check_positive_int("n_global", n_global, 1, n)
    return w, g


@functools.lru_cache(maxsize=16)
def _pattern(n: int, w: int, g: int, causal: bool, device: str) -> torch.Tensor:
    w = min(w, n - 1) if n > 1 else 0  # a window wider than the sequence is the whole sequence
    L = math.ceil(math.log2(n)) if n > 1 else 0
    cols = (2 * w + 1) + g + 2 * (L + 1) + 1
    if n * cols > MAX_PATTERN_ENTRIES:
        raise ValueError(
            f"window must keep the pattern below {MAX_PATTERN_ENTRIES} entries: n (2 w + 1) = {n * (2 * w + 1)} "
            f"(n = {n}, window = {w}); use a smaller window"
        )
    dev = torch.device(device)
    i = torch.arange(n, device=dev).unsqueeze(1)  # (n, 1)
    offsets = torch.arange(-w, w + 1, device=dev)  # the band
    dyadic = 2 ** torch.arange(L + 1, device=dev)
    offsets = torch.cat([offsets, dyadic, -dyadic, offsets.new_zeros(1)])  # ... and i itself
    globals_ = (torch.arange(g, device=dev) * n) // g  # floor(t n / g), t = 0..g-1
    cand = torch.cat([i + offsets, globals_.expand(n, g)], dim=1)  # (n, cols)
    bad = (cand < 0) | (cand >= n)
    if causal:
        bad |= cand > i
    cand = cand.masked_fill(bad, n).sort(dim=1).values  # n sorts after every real key
    dup = torch.zeros_like(bad)
    dup[:, 1:] = cand[:, 1:] == cand[:, :-1]
    cand = cand.masked_fill(dup, n).sort(dim=1).values  # (n, cols), each key once, then padding
    s = int((cand < n).sum(1).max())
    return cand[:, :s].masked_fill(cand[:, :s] == n, -1).contiguous()  # (n, s), -1 = padding


def fp_index(
    n: int, *, window: int | None = None, n_global: int | None = None, causal: bool = False, device=None
) -> Gathered:
    """The FP-HIDA index set S_i for i = 0..n-1 as ``Gathered(index)``, index (n, max |S_i|), -1 padded."""
    w, g = _resolve(n, window, n_global)
    return Gathered(_pattern(n, w, g, bool(causal), str(torch.device(device or "cpu"))))


@dataclass(frozen=True)
class FPStats:
    """What the pattern costs: |S_i| and the fraction of the dense work FP-HIDA actually does."""

    n: int
    window: int
    n_global: int
    causal: bool
    mean_size: float  # mean |S_i|
    max_size: int  # max |S_i|
    bound: int  # (2w + 1) + g + 2(ceil(log2 n) + 1) + 1 (Theorem 5.4)
    pairs: int  # sum_i |S_i|: distances evaluated
    dense_pairs: int  # n^2, or n(n+1)/2 when causal
    work_fraction: float  # pairs / dense_pairs


def fp_stats(n: int, *, window: int | None = None, n_global: int | None = None, causal: bool = False) -> FPStats:
    """Measure the pattern: sizes of S_i and the work done against dense attention."""
    w, g = _resolve(n, window, n_global)
    sizes = (fp_index(n, window=w, n_global=g, causal=causal).index >= 0).sum(1)  # (n,)
    pairs = int(sizes.sum())
    dense = n * (n + 1) // 2 if causal else n * n
    return FPStats(
        n, w, g, bool(causal), float(sizes.float().mean()), int(sizes.max()),
        fp_index_size_bound(n, w, g), pairs, dense, pairs / dense,
    )  # fmt: skip


def fp_hida(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    eps: float,
    c: float = 1.0,
    window: int | None = None,
    n_global: int | None = None,
    causal: bool = False,
) -> torch.Tensor:
    """FP-HIDA output. q, k (..., n, d) in the Poincaré ball of curvature -c, v (..., n, dv) -> (..., n, dv).

    Queries and keys are positions of one sequence (self-attention), so q and k have the same n.
    ``window`` w >= 1 and ``n_global`` g in [1, n] default to ceil(log2 n); w >= n - 1 with causal
    or bidirectional attention covers every key, and FP-HIDA is then Dense-HIDA.
    """
    spec_eps = KernelSpec(eps=eps, geometry="poincare", c=c).eps  # validates eps and c
    check_in_ball("q", q, c)
    check_in_ball("k", k, c)
    check_finite("v", v)
    check_kernel_dtype(q=q, k=k, v=v)
    if q.dim() < 2 or k.dim() < 2 or v.dim() < 2:
        raise ValueError(
            f"q, k, v must have shapes (..., n, d), (..., n, d), (..., n, dv) "
            f"(got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)})"
        )
    n = q.shape[-2]
    if n == 0:
        raise ValueError("q must hold at least one query (got n = 0)")
    if k.shape[-2] != n or v.shape[-2] != n:
        raise ValueError(
            f"k and v must have n = {n} positions, as many as q: FP-HIDA's pattern is over positions of one "
            f"sequence (got {k.shape[-2]} and {v.shape[-2]})"
        )
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must have the same last dimension (got {q.shape[-1]} and {k.shape[-1]})")
    keys = fp_index(n, window=window, n_global=n_global, causal=causal, device=q.device)
    return gathered_ida(q, k, v, KernelSpec(eps=spec_eps, geometry="poincare", c=c, keys=keys))
