"""The best designs for Theorem 1's softmax-width claim (section 2.3), and Lemma 1's supremum search.

A lower bound over all designs is tested against the best design, not random keys. With q = k_1 and
coordinates +-1, the design that needs the least width puts the other n - 1 keys on the Hamming shells
farthest from k_1 (``shell_code_min_width``); when every key must be retrieved by its own query,
repeated rows of a Hadamard matrix (an equidistant code) are the construction (``hadamard_code_min_width``).

Lemma 1's search for the largest query Jacobian (``max_jacobian_norm``) lives in the library module
``georesolver_core.labs.lipschitz``; its names are re-exported here, where they were first defined.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from georesolver_core.labs.lipschitz import Ascent, jacobian_norms, max_jacobian_norm, search_starts
from georesolver_core.validate import check_positive_int, check_range

__all__ = [
    "Ascent",
    "hadamard_code_keys",
    "hadamard_code_min_width",
    "jacobian_norms",
    "max_jacobian_norm",
    "search_starts",
    "shell_code_keys",
    "shell_code_log_leak",
    "shell_code_min_width",
]


# --- Theorem 1: designs that need the least softmax width -----------------------------------------


def shell_code_log_leak(n: int, d: int) -> float:
    """log of sum_{j >= 2} exp(-(q.k_1 - q.k_j) / sqrt d) for the Hamming-shell code, q = k_1 = (1, ..., 1).

    The other n - 1 keys are distinct words of {-1, 1}^d taken from the shells farthest from k_1: -k_1
    (distance d), then the C(d, 1) words at distance d - 1, ... A word at Hamming distance h has logit gap
    2h / sqrt d, so no set of n - 1 distinct +-1 keys leaks less: W_11 = 1 / (1 + leak) is the largest
    any +-1 design of width d achieves. Needs n <= 2^d.
    """
    if n - 1 > 2.0**d - 1:
        return math.inf
    left, terms, r = n - 1, [], 0  # r = coordinates agreeing with k_1; distance d - r
    while left > 0:
        take = min(left, math.comb(d, r))
        terms.append(math.log(take) - 2.0 * (d - r) / math.sqrt(d))
        left -= take
        r += 1
    return float(np.logaddexp.reduce(terms))


def shell_code_min_width(n: int, *, delta: float, d_max: int = 4096) -> int | None:
    """Smallest width d at which the Hamming-shell code gives W_11 >= 1 - delta (q = k_1, scale 1/sqrt d):
    the least width any design with distinct +-1 keys needs. None if d_max is not enough."""
    check_positive_int("n", n, 2)
    delta = check_range("delta", delta, 1e-12, 0.5)
    target = math.log(delta / (1.0 - delta))
    return next((d for d in range(1, d_max + 1) if shell_code_log_leak(n, d) <= target), None)


def shell_code_keys(n: int, d: int, dtype=torch.float64) -> torch.Tensor:
    """The Hamming-shell code itself: k_1 = (1, ..., 1), then the n - 1 words farthest from it. (n, d)."""
    rows, r = [torch.ones(d, dtype=dtype)], 0
    while len(rows) < n:
        for agree in _combinations(d, r):
            if len(rows) == n:
                break
            word = -torch.ones(d, dtype=dtype)
            word[list(agree)] = 1.0
            rows.append(word)
        r += 1
    return torch.stack(rows)


def _combinations(d: int, r: int):
    from itertools import combinations

    return combinations(range(d), r)


def hadamard_code_min_width(n: int, *, delta: float, d_max: int = 1 << 16) -> int | None:
    """Smallest width at which every key is retrieved by its own query (W_ii >= 1 - delta for all i) with
    the rows of a Sylvester-Hadamard matrix H_D and their negatives (n <= 2D), each repeated r times.

    Rows of H_D are at Hamming distance D/2, a row and its negative at D. At width d = r D the worst key
    sees n - 1 keys at logit gap sqrt d (n < 2D: some key's negative is unused), or n - 2 at sqrt d and
    its negative at 2 sqrt d (n = 2D).
    """
    check_positive_int("n", n, 2)
    delta = check_range("delta", delta, 1e-12, 0.5)
    D = 1 << max(0, math.ceil(math.log2(n / 2)))  # the smallest Sylvester order with 2D >= n
    anti = 1 if n == 2 * D else 0  # the worst key's negative is in the code
    target = delta / (1.0 - delta)
    for d in range(D, d_max + 1, D):
        if (n - 1 - anti) * math.exp(-math.sqrt(d)) + anti * math.exp(-2.0 * math.sqrt(d)) <= target:
            return d
    return None


def hadamard_code_keys(n: int, d: int, dtype=torch.float64) -> torch.Tensor:
    """The code of ``hadamard_code_min_width`` at width d (a multiple of its order D). (n, d)."""
    D = 1 << max(0, math.ceil(math.log2(n / 2)))
    if d % D:
        raise ValueError(f"d must be a multiple of the Hadamard order {D} (got {d})")
    h = torch.ones(1, 1, dtype=dtype)
    while h.shape[0] < D:
        h = torch.cat([torch.cat([h, h], 1), torch.cat([h, -h], 1)])  # Sylvester doubling
    words = torch.cat([h, -h])[:n]  # (n, D)
    return words.repeat(1, d // D)  # (n, d)
