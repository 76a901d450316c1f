"""Closed forms of orthogonal residual mixing (seed 003): rotation angle, spectrum, orthogonality defects."""

from __future__ import annotations

import numpy as np


def _f(x):
    return np.asarray(x, dtype=float)


def cayley_gap_to_minus_one(beta, area):
    """min |lambda + 1| over the spectrum of Q: |e^{i theta} + 1| = 2 cos(theta / 2) = 2 / sqrt(1 + t^2),
    t = beta |u ^ v| / 2. Positive for every finite beta: no eigenvalue -1 (Theorem 4.6)."""
    t = _f(beta) * _f(area) / 2.0
    return 2.0 / np.sqrt(1.0 + t * t)


def ddl_orthogonality_defect(beta):
    """||H_beta^T H_beta - I||_2 for H_beta = I - beta k k^T, |k| = 1: the eigenvalue along k is (1 - beta)^2 - 1,
    so the defect is |beta (beta - 2)|, zero only at beta in {0, 2} (seed 003 section 1, DDL)."""
    beta = _f(beta)
    return np.abs(beta * (beta - 2.0))


def hybrid_orthogonality_defect_bound(gamma):
    """||G^T G - I||_2 <= 4 gamma (1 - gamma) for G = gamma Q + (1 - gamma) H, Q and H orthogonal.

    G^T G - I = gamma (1 - gamma)(Q^T H + H^T Q - 2 I) and ||Q^T H + H^T Q - 2 I|| <= 4; the bound is the
    midpoint-collapse regulariser itself, zero only at gamma in {0, 1} (seed 003 section 2.2)."""
    gamma = _f(gamma)
    return 4.0 * gamma * (1.0 - gamma)
