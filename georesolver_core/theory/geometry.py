"""Bounds about the geometry itself (paper section 5.2)."""

from __future__ import annotations

import numpy as np


def hyperbolic_separation_bound(delta, rho):
    """Section 5.2(B): keys at norm rho that are delta apart in R^d satisfy d_H >= 2 delta / (1 - rho^2).

    Vectorised over numpy arrays. (As stated; see ``hyperbolic_separation_exact``.)
    """
    delta, rho = np.asarray(delta, dtype=float), np.asarray(rho, dtype=float)
    return 2.0 * delta / (1.0 - rho**2)


def hyperbolic_separation_exact(delta, rho):
    """The exact distance of two points of norm rho, delta apart: arcosh(1 + 2 delta^2 / (1 - rho^2)^2).

    Since arcosh(1 + u) <= sqrt(2u), this is at most 2 delta / (1 - rho^2): the stated bound is
    an upper bound, tight only as delta / (1 - rho^2) -> 0; both grow without bound as rho -> 1.
    """
    delta, rho = np.asarray(delta, dtype=float), np.asarray(rho, dtype=float)
    return np.arccosh(1.0 + 2.0 * delta**2 / (1.0 - rho**2) ** 2)
