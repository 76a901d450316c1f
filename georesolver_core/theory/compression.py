"""Closed forms of HCC (paper section 6, Theorems 6.1 and 6.2), one function each, vectorised over numpy.

The proof of Theorem 6.1 rounds every coordinate of u; the bit count of Theorem 6.2 stores d - 1.
Both readings are here under their own names so claims and pages can set each against a measurement.
"""

from __future__ import annotations

import numpy as np

PAPER_BITS_DIR, PAPER_BITS_RADIUS = 4, 6  # the worked example of Theorem 6.2
# Theorem 6.2's system-level figures: value precision in bits -> stated KV-cache compression
PAPER_SYSTEM_RATIO = {32: 1.8, 16: 2.4}


def _f(x):
    return np.asarray(x, dtype=float)


def hcc_error_bound(bits_dir, bits_radius):
    """Theorem 6.1: ||k - k_hat||^2 <= 4 (2^-b + 2^-b_r), for every key of the unit ball."""
    return 4.0 * (2.0 ** -_f(bits_dir) + 2.0 ** -_f(bits_radius))


def hcc_direction_step(bits_dir):
    """The proof's first step: ||u - u_hat||_2 <= 2 * 2^-b (no dependence on the dimension)."""
    return 2.0 * 2.0 ** -_f(bits_dir)


def hcc_radius_step(bits_radius):
    """The proof's second step: |r - r_hat| <= 2^-b_r (the rounding itself gives half of it)."""
    return 2.0 ** -_f(bits_radius)


def direction_error_range(d, bits_dir):
    """Worst ||u - u_hat||^2 of per-coordinate rounding, all d coordinates stored: in [(d-1)/L^2, d/L^2], L = 2^b - 1.

    Upper: each coordinate moves by at most half a step, 1/L. Lower: u = e_1 puts d - 1 coordinates
    at 0, the midpoint of two levels (L is odd, so 0 is never a level), each off by exactly 1/L.
    """
    d, levels = _f(d), 2.0 ** _f(bits_dir) - 1.0
    return (d - 1.0) / levels**2, d / levels**2


def hcc_paper_bits(d, bits_dir, bits_radius):
    """Theorem 6.2's storage per key: (d_h - 1) b + b_r bits."""
    return (_f(d) - 1.0) * _f(bits_dir) + _f(bits_radius)


def hcc_stored_bits(d, bits_dir, bits_radius, direction="implicit"):
    """Bits per key the quantiser must store: (d-1) b + b_r + 1 (sign of the implicit coordinate) or d b + b_r."""
    if direction == "implicit":
        return hcc_paper_bits(d, bits_dir, bits_radius) + 1.0
    if direction == "all":
        return _f(d) * _f(bits_dir) + _f(bits_radius)
    raise ValueError(f"direction must be 'implicit' or 'all' (got {direction!r})")


def hcc_compression_ratio(d, bits_dir, bits_radius, baseline_bits=32):
    """Theorem 6.2: key compression ratio 32 d_h / ((d_h - 1) b + b_r) against float32 keys."""
    return _f(baseline_bits) * _f(d) / hcc_paper_bits(d, bits_dir, bits_radius)


def kv_cache_ratio(d, key_bits, *, value_bits, base_key_bits=32, base_value_bits=32):
    """Whole-cache ratio: (base_key_bits + base_value_bits) d / (key_bits + value_bits d), per token and head.

    key_bits is the compressed storage of one key (e.g. (d - 1) b + b_r); values are kept at value_bits.
    """
    d = _f(d)
    return (_f(base_key_bits) + _f(base_value_bits)) * d / (_f(key_bits) + _f(value_bits) * d)


def kv_cache_bytes(n_layers, n_kv_heads, context, d, *, key_bits, value_bits, batch=1):
    """Bytes of a KV cache: layers x KV heads x tokens x (key_bits + value_bits d) / 8, times the batch."""
    tokens = _f(n_layers) * _f(n_kv_heads) * _f(context) * _f(batch)
    return tokens * (_f(key_bits) + _f(value_bits) * _f(d)) / 8.0
