"""Theorem 1 measured: the orthogonal-keys instance, and the width and norm softmax needs before the
matched key takes all but delta of the weight (what inverse-distance attention gets at any width)."""

from __future__ import annotations

import math

import torch

from georesolver_core.attention.kernel import softmax_weights
from georesolver_core.validate import check_positive_int, check_range


def orthogonal_keys(n: int, *, R: float = 1.0, d: int | None = None, dtype=torch.float64):
    """Theorem 1's instance: k_j = R e_j in R^d (d >= n), query q = k_1. Returns (q (1, d), k (n, d))."""
    check_positive_int("n", n, 1)
    d = n if d is None else check_positive_int("d", d, n)
    R = check_range("R", R, 1e-6, 1e6)
    k = R * torch.eye(n, d, dtype=dtype)  # (n, d)
    return k[:1].clone(), k


def sign_keys(n: int, d: int, *, generator: torch.Generator | None = None, dtype=torch.float64) -> torch.Tensor:
    """n random keys with coordinates +-1 (bounded coordinates, ||k||^2 = d). (n, d)."""
    return torch.randint(0, 2, (n, d), generator=generator).to(dtype) * 2 - 1


def softmax_min_width(n: int, *, delta: float, d_max: int, generator: torch.Generator | None = None) -> int | None:
    """Smallest width d at which softmax (scale 1/sqrt d) gives the matched key W_11 >= 1 - delta, for
    keys with coordinates +-1 and q = k_1, staying there for every larger d up to d_max.

    One draw of n x d_max signs; width d uses its first d coordinates, so widths are nested and
    all d are evaluated at once from prefix sums. Returns None when d_max is not enough.
    """
    check_positive_int("n", n, 2)
    check_positive_int("d_max", d_max, 1)
    delta = check_range("delta", delta, 1e-12, 0.5)
    k = sign_keys(n, d_max, generator=generator)  # (n, D)
    dots = torch.cumsum(k * k[:1], dim=-1)  # (n, D): q.k_j using the first d coordinates
    widths = torch.arange(1, d_max + 1, dtype=k.dtype)  # (D,)
    w11 = torch.softmax(dots / widths.sqrt(), dim=0)[0]  # (D,)
    ok = (w11 >= 1 - delta).flip(0).cumprod(0).flip(0).bool()  # ok from here to d_max
    if not bool(ok[-1]):
        return None
    return int(torch.nonzero(ok)[0, 0]) + 1


def softmax_min_norm_sq_circle(n: int, *, delta: float, d: int = 2) -> float:
    """Smallest R^2 with softmax W_11 >= 1 - delta for n keys evenly spaced on a circle of radius R in R^d, q = k_1.

    The counter-example to a width requirement without a norm bound: d = 2 serves every n.
    Found by bisection on log R^2 with the actual softmax weights (float64).
    """
    check_positive_int("n", n, 2)
    check_positive_int("d", d, 2)
    delta = check_range("delta", delta, 1e-12, 0.5)
    angle = 2 * math.pi * torch.arange(n, dtype=torch.float64) / n
    unit = torch.zeros(n, d, dtype=torch.float64)
    unit[:, 0], unit[:, 1] = torch.cos(angle), torch.sin(angle)  # (n, d)

    def w11(r2: float) -> float:
        k = math.sqrt(r2) * unit
        return float(softmax_weights(k[:1], k)[0, 0])

    lo, hi = 0.0, 1.0
    while w11(math.exp(hi)) < 1 - delta:
        lo, hi = hi, 2 * hi + 1
    for _ in range(40):  # 2^-40 of the bracket: far below any difference the claims read
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if w11(math.exp(mid)) >= 1 - delta else (mid, hi)
    return math.exp(hi)
