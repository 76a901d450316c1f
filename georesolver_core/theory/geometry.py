"""Bounds about the geometry itself (paper section 5.2)."""

from __future__ import annotations

import math

import numpy as np
from scipy.integrate import quad


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


# --- Section 5.2(A): volume growth of geodesic balls, and what it allows a packing of keys ----------------


def unit_sphere_area(d: int) -> float:
    """omega_{d-1} = 2 pi^{d/2} / Gamma(d/2): the area of the unit sphere S^{d-1} in R^d (2 pi for d = 2)."""
    if d < 1:
        raise ValueError(f"d must be >= 1 (got {d})")
    return 2.0 * math.pi ** (d / 2) / math.gamma(d / 2)


def _sinh_power_integral(n: int, t):
    """J_n(t) = int_0^t sinh^n(u) du, elementwise over t >= 0, by adaptive quadrature.

    Quadrature rather than the recurrence J_n = sinh^{n-1}(t) cosh(t) / n - (n-1)/n J_{n-2}: the
    recurrence subtracts terms of size ~t^{n-1} to leave ~t^{n+1}, and loses 4 digits at n = 4, t = 1e-3.
    """
    t = np.asarray(t, dtype=float)
    flat = [quad(lambda u: np.sinh(u) ** n, 0.0, float(v), epsabs=0.0, epsrel=1e-13)[0] for v in t.ravel()]
    return np.asarray(flat, dtype=float).reshape(t.shape)


def hyperbolic_ball_volume(R, d: int, c: float = 1.0):
    """Section 5.2(A): the volume of a geodesic ball of radius R in hyperbolic d-space of curvature -c,

    .. math:: V_H(R) = \\omega_{d-1} \\int_0^R (\\sinh(\\sqrt{c} r) / \\sqrt{c})^{d-1} dr
              \\sim \\frac{\\omega_{d-1}}{(d-1) 2^{d-1} c^{d/2}} e^{(d-1)\\sqrt{c} R},

    the paper's ``V_H(R) ∝ e^{(d-1)R}`` (c = 1) with its constant. d = 2: 2 pi (cosh R - 1);
    d = 3: pi (sinh 2R - 2R). Vectorised over R.
    """
    if d < 1 or c <= 0:
        raise ValueError(f"d must be >= 1 and c > 0 (got d={d}, c={c})")
    t = math.sqrt(c) * np.asarray(R, dtype=float)
    return unit_sphere_area(d) * c ** (-d / 2) * _sinh_power_integral(d - 1, t)


def hyperbolic_volume_asymptote(R, d: int, c: float = 1.0):
    """The large-R form of ``hyperbolic_ball_volume``: omega_{d-1} e^{(d-1) sqrt(c) R} / ((d-1) 2^{d-1} c^{d/2})."""
    if d < 2 or c <= 0:
        raise ValueError(f"d must be >= 2 and c > 0 for exponential growth (got d={d}, c={c})")
    t = math.sqrt(c) * np.asarray(R, dtype=float)
    return unit_sphere_area(d) * c ** (-d / 2) * np.exp((d - 1) * t) / ((d - 1) * 2 ** (d - 1))


def euclidean_ball_volume(R, d: int):
    """Section 5.2(A): V_E(R) = pi^{d/2} R^d / Gamma(d/2 + 1), polynomial in R. Vectorised over R."""
    if d < 1:
        raise ValueError(f"d must be >= 1 (got {d})")
    return math.pi ** (d / 2) / math.gamma(d / 2 + 1) * np.asarray(R, dtype=float) ** d


def packing_number_bound(R, s: float, d: int, *, volume, c: float = 1.0):
    """The volume law as a capacity bound: at most V(R + s/2) / V(s/2) points s apart fit in a ball of radius R.

    The balls of radius s/2 around such points are disjoint, all lie in the ball of radius R + s/2,
    and each has volume V(s/2) because the space is homogeneous. ``volume``: V(R, d, c) of the space
    (a geometry's ``ball_volume``: ``hyperbolic_ball_volume``, or ``euclidean_ball_volume`` with c unused).
    """
    if s <= 0:
        raise ValueError(f"s must be > 0 (got {s})")
    R = np.asarray(R, dtype=float)
    return volume(R + s / 2, d, c) / volume(s / 2, d, c)
