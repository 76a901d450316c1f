"""Closed forms of dyadic Hankel boundary attention (seed 004): singular-value decay and the rank rule."""

from __future__ import annotations

import math

import numpy as np


def singular_value_bound(n):
    """Seed 004, Bernstein-ellipse estimate: s_{N+1}(K) <= 4^-N for K(s, r) = 1/(2 pi (s + r)), s > 0,
    r in [h, 2h]. Takes the 1-based index n = N + 1 and returns 4^-(n - 1); independent of the scale h."""
    n = np.asarray(n, dtype=float)
    return 4.0 ** (-(n - 1.0))


def piece_singular_value_bound(n):
    """Seed 004, Ky Fan assembly over one one-sided, one-scale piece: s_n <= 2^(3 - n)."""
    n = np.asarray(n, dtype=float)
    return 2.0 ** (3.0 - n)


EPS_LIST = (1e-2, 1e-3, 1e-4)  # the relative errors at which seed 004 reports the ranks it observed


def rank_rule(eps: float) -> int:
    """Seed 004: rank N = ceil(log4(1/eps)) per dyadic block gives operator-norm error <= eps (0 < eps < 1).

    From s_{N+1} <= 4^-N <= eps. A small tolerance keeps exact powers of 4 (eps = 4^-k) at k, not k + 1.
    """
    eps = float(eps)
    if not math.isfinite(eps) or not 0.0 < eps < 1.0:
        raise ValueError(f"eps must be a number in (0, 1) (got {eps!r})")
    return max(1, math.ceil(math.log(1.0 / eps, 4) - 1e-12))


def dyadic_scale_count(n_right: int, h0: float) -> int:
    """Number of dyadic blocks [h0 2^k, h0 2^(k+1)) needed to cover r up to n_right: ceil(log2(n_right / h0)),
    the logarithmic growth of active scales with context length (seed 004)."""
    if n_right < h0:
        return 0
    return math.ceil(math.log2((n_right + 1) / h0))
