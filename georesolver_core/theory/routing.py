"""Closed-form bounds of routing and memory: GSR (section 10), DMG (section 9), Propositions 2 and 3.

Every function is vectorised over numpy arrays. Where the printed bound and a corrected form
differ, both are here, each with its own name, so the claims can draw both against a measurement.
"""

from __future__ import annotations

import numpy as np


def _f(x):
    return np.asarray(x, dtype=float)


def gsr_quality_bound(tail_mass, v_frobenius, v_max_head):
    """Theorem 10.1 as printed: ||o - o*|| <= 2 ||V||_F (sum_{e>K} w_(e) / sum_{e<=K} w_(e)) max_{e<=K} ||v_e||.

    ``tail_mass`` is T = sum_{e>K} w_(e) of the full SIDA weights (so the head is 1 - T). The bound is
    quadratic in the values' scale while the error is linear: it fails for small values (see
    ``gsr_quality_exact_worst``).
    """
    t = _f(tail_mass)
    return 2.0 * _f(v_frobenius) * t / np.maximum(1.0 - t, 1e-300) * _f(v_max_head)


def gsr_quality_exact_worst(tail_mass, v_max):
    """The exact worst case over values with ||v_e|| <= v_max: max ||o - o*|| = 2 T v_max.

    o - o* = (T / (1 - T)) sum_{e<=K} w_e v_e - sum_{e>K} w_e v_e; the two sums have absolute weight
    T each, and v_e = +u on the head, -u on the tail attains 2 T v_max.
    """
    return 2.0 * _f(tail_mass) * _f(v_max)


def gsr_messages_paper(n_pool, k, world):
    """Theorem 10.2's message count for GSR: K_pool + K + P (one per score, per selected output, per worker)."""
    return _f(n_pool) + _f(k) + _f(world)


def gsr_bytes_paper(n_pool, k, dim, precision_bytes):
    """Theorem 10.2's bytes for GSR: (K_pool + K) d_h x precision, per query and independent of B."""
    return (_f(n_pool) + _f(k)) * _f(dim) * _f(precision_bytes)


def dmg_null_spawn_rate(z, gamma_over_sigma=0.0, iters=200):
    """Spawn rate of the threshold on i.i.d. Gaussian losses with (tau_base - mu_0)/sigma_0 + kappa' = z.

    Solves p = Q(z + (gamma / sigma_0) p) by fixed-point iteration (Q the Gaussian tail): a positive
    rate, so spawns grow linearly in T under the lemma's literal null model.
    """
    from scipy.special import ndtr

    p = 1.0 - ndtr(_f(z))
    for _ in range(iters):
        p = 1.0 - ndtr(_f(z) + _f(gamma_over_sigma) * p)
    return p


def routing_entropy_bound(n_pool):
    """Proposition 2: I(q_S; c_e^S) <= H(c_e^S) <= log K_pool (nats)."""
    return np.log(_f(n_pool))


def quantisation_error_paper(k_max, c=1.0):
    """Proposition 3: quantisation error O(1 / K_max) under compactness (C fitted by the claim)."""
    return _f(c) / _f(k_max)
