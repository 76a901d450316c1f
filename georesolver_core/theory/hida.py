"""Closed-form bounds of the HIDA family (paper sections 5.4-5.6 and Proposition 1, section 11.3).

Every function is vectorised over numpy arrays. Where the paper (seed 000) and its summary (seed
001) print different bounds, both are here under their own names, so a claim can measure which,
if either, the data follow.
"""

from __future__ import annotations

import math

import numpy as np


def _f(x):
    return np.asarray(x, dtype=float)


def fp_index_size_bound(n: int, window: int, n_global: int) -> int:
    """Theorem 5.4: |S_i| <= (2w + 1) + g + 2(ceil(log2 n) + 1) + 1 (band, globals, dyadic offsets, i)."""
    L = math.ceil(math.log2(n)) if n > 1 else 0
    return (2 * window + 1) + n_global + 2 * (L + 1) + 1


def l_hida_error_bound_paper(n, m, eps):
    """Theorem 5.5 as printed in the paper (seed 000): ||o^L - o^H||_F <= O(n / (m eps^2)); constant 1 here."""
    return _f(n) / (_f(m) * _f(eps) ** 2)


def l_hida_error_bound_summary(n, m, eps):
    """Theorem 5.5 as printed in the summary (seed 001): ||o^L - o^H||_F <= O(n / (eps^2 sqrt m)); constant 1."""
    return _f(n) / (np.sqrt(_f(m)) * _f(eps) ** 2)


L_HIDA_EXPONENT_PAPER = -1.0  # error ~ m^-1 (seed 000)
L_HIDA_EXPONENT_SUMMARY = -0.5  # error ~ m^-1/2 (seed 001)


def c_hida_regret_bound(T, c, diameter, eps_opt=0.0):
    """Theorem 5.6: sum_t min_k d_H(k_t, s_k)^2 - (best fixed) <= O(Delta_H^2 c log T) + O(T eps_opt); constants 1."""
    return _f(diameter) ** 2 * _f(c) * np.log(_f(T)) + _f(T) * _f(eps_opt)


def n_log_n_local_exponent(n_lo, n_hi):
    """The log-log slope of n log n between two lengths: what a fitted O(n log n) cost should show."""
    return math.log((n_hi * math.log(n_hi)) / (n_lo * math.log(n_lo))) / math.log(n_hi / n_lo)


PROPOSITION1_TOLERANCE = 0.25  # |fitted - predicted exponent| allowed on timings (a shared CPU is noisy)


def proposition1_exponent(exponent: float, n_lo: int, n_hi: int, *, log_factor: bool = False) -> float:
    """Proposition 1's time exponent of a cost class over lengths n_lo..n_hi: ``exponent`` (Dense 2, L 1,
    C 0 per token), or for a cost n^exponent log n (FP: n log n) the local slope between n_lo and n_hi.
    Each attention entry's class is its registry entry's ``timing`` (``attention.timing``)."""
    if log_factor and n_hi > n_lo > 1:
        return n_log_n_local_exponent(n_lo, n_hi) + exponent - 1.0
    return float(exponent)
