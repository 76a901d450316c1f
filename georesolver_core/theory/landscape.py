"""Closed-form predictions about loss landscapes: PL constants (Theorems 2, 5.3, 8.1), Hessian spread (Lemma 2).

The paper states these as Theta(.) / Omega(.) rates, so each function returns the *shape* with
constant 1; claims compare measured rates (fitted exponents) with them. Vectorised over numpy arrays.
"""

from __future__ import annotations

import numpy as np


def pl_ida_theta(eps, delta):
    """Theorem 2 (section 2.6): mu_IDA = Theta(eps^2 / Delta^4) for two keys Delta apart.

    The same shape is stated for HIDA with the hyperbolic gap Delta_H (Theorem 5.3) and for SIDA
    with the angle theta (Theorem 8.1).
    """
    eps, delta = np.asarray(eps, dtype=float), np.asarray(delta, dtype=float)
    return eps**2 / delta**4


def pl_softmax_theta(eps, delta, tau):
    """Theorem 2 (section 2.6) and Theorem 5.3: mu_soft = Theta(exp(-Delta^2 / tau) eps^2 / Delta^2).

    tau = sqrt(d): the abstract and the summary write e^{Delta^2/sqrt d}; the table of section 2
    prints e^{-Delta^2/d}. Softmax itself has no eps; the factor is the paper's.
    """
    eps, delta, tau = (np.asarray(a, dtype=float) for a in (eps, delta, tau))
    return np.exp(-(delta**2) / tau) * eps**2 / delta**2


def pl_softmax_sphere_theta(eps, theta):
    """Theorem 8.1 (section 8.1): on the sphere mu_soft = Theta(exp(-(1 - cos theta)) eps^2 / theta^2)."""
    eps, theta = np.asarray(eps, dtype=float), np.asarray(theta, dtype=float)
    return np.exp(-(1.0 - np.cos(theta))) * eps**2 / theta**2


def pl_ratio_omega(delta, tau):
    """Theorem 2 (abstract, section 2.6): mu_IDA / mu_soft = Omega(exp(Delta^2 / tau) / Delta^2), tau = sqrt(d)."""
    delta, tau = np.asarray(delta, dtype=float), np.asarray(tau, dtype=float)
    return np.exp(delta**2 / tau) / delta**2


def ida_curvature_at_minimiser(eps, delta):
    """Not in the paper; derived here from its set-up to read the measurement against.

    On the line, with a = s^2 + eps, b = (s - Delta)^2 + eps and L = (a / (a + b))^2, the minimiser
    s* = (Delta - sqrt(Delta^2 + 4 eps)) / 2 has L''(s*) = 4 a (b - a) / (a + b)^3, which is the
    limit of the PL ratio |L'|^2 / (2 (L - L*)) at s* and hence an upper bound on mu_IDA.
    For eps << Delta^2 it is 4 eps / Delta^4 (1 + O(eps / Delta^2)): linear in eps, not quadratic.
    """
    eps, delta = np.asarray(eps, dtype=float), np.asarray(delta, dtype=float)
    s = 0.5 * (delta - np.sqrt(delta**2 + 4.0 * eps))
    a, b = s**2 + eps, (s - delta) ** 2 + eps
    return 4.0 * a * (b - a) / (a + b) ** 3


def hessian_spread_ida_theta(n):
    """Lemma 2 (section 2.5): the IDA Hessian spread (largest / smallest eigenvalue) is Theta(1) in n."""
    return np.ones_like(np.asarray(n, dtype=float))


def softmax_curvature_theta(n):
    """Lemma 2 (section 2.5): the softmax loss curvature at the equidistant initialisation is Theta(n^-2)."""
    return np.asarray(n, dtype=float) ** -2.0
