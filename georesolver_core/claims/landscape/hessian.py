"""Claims about the Hessian of the retrieval loss (Lemma 2, section 2.5): IDA's spread is Theta(1) in
the number of keys n, softmax's curvature is Theta(n^-2).

The paper computes IDA's Hessian with the query on its target key and softmax's at the equidistant
initialisation. Both kernels are measured at both points; each verdict says which point it is for,
and a point is called a saddle only where the gradient vanishes."""

from __future__ import annotations

import numpy as np

from georesolver_core.claims.landscape.evidence import landscape_claim, scaling_evidence
from georesolver_core.landscape.hessian import POINTS, hessian_sweep
from georesolver_core.theory import landscape as th
from georesolver_core.verdicts import Axes, Evidence, fit_loglog_slope

HESSIAN_SETUP = (
    "Set-up: n keys rho = 1 from the query in orthogonal directions (d = n), L = (1 - W_1)^2, autograd "
    "Hessian, eps = 1e-2, softmax scale 1/sqrt(n); both kernels measured at both points: the equidistant "
    "initialisation q_0 (every weight 1/n) and the target key q = k_1."
)
N_LABEL = "number of keys n"
CRITICAL_TOL = 1e-6  # |grad L| below this (relative to the loss's scale, 1) counts as a critical point


def _hessians(quick: bool):
    # Large n only: both rates are asymptotic, and below n = 16 the softmax slope is still bending.
    ns = np.array([16, 32, 64] if quick else [16, 32, 64, 128])
    return ns, {
        (k, point): hessian_sweep(ns, kernel=k, geometry="euclidean", eps=1e-2, rho=1.0, point=point)
        for k in ("ida", "softmax")
        for point in POINTS
    }


def _critical(spec, kernel: str, point: str) -> str:
    """Say what the point is, from the gradient and the Hessian: a saddle only where the gradient vanishes."""
    g = max(s.grad_norm for s in spec[(kernel, point)])
    neg = spec[(kernel, point)][-1].n_negative
    where = "q_0" if point == "equidistant" else "q = k_1"
    if g > CRITICAL_TOL:
        return f"{kernel} at {where}: |grad L| up to {g:.2g}, not a critical point ({neg} negative eigenvalue(s))"
    kind = "a saddle" if neg else "a minimum"
    return f"{kernel} at {where}: |grad L| <= {g:.1g}, a critical point and {kind}"


def _slope(ns, spec, kernel: str, point: str, field: str) -> float:
    return fit_loglog_slope(ns, [getattr(s, field) for s in spec[(kernel, point)]])


def measure_hessian_spread(quick: bool = False) -> Evidence:
    """IDA's Hessian spread at the seed's point for IDA, the target key q = k_1 (Lemma 2 writes W_11(delta) with
    the query delta from k_1, delta = 0); the equidistant initialisation q_0 beside it."""
    ns, spec = _hessians(quick)
    spread = np.array([s.spread for s in spec[("ida", "target")]])
    at_q0 = _slope(ns, spec, "ida", "equidistant", "spread")
    note = (
        f". The verdict is for the seed's point, the query on its target key q = k_1 (W_11(delta) at delta = 0): "
        f"spread {spread[0]:.4g} (n = {ns[0]}) -> {spread[-1]:.4g} (n = {ns[-1]}). At the equidistant initialisation "
        f"q_0 (a point the lemma does not use for IDA) it grows as n^{at_q0:.2f}; softmax's spread (flat directions "
        f"excluded) grows as n^{_slope(ns, spec, 'softmax', 'equidistant', 'spread'):.2f} at q_0 and "
        f"n^{_slope(ns, spec, 'softmax', 'target', 'spread'):.2f} at q = k_1. "
        + "; ".join(_critical(spec, k, p) for k in ("ida", "softmax") for p in POINTS)
        + ". "
        + HESSIAN_SETUP
    )
    axes = Axes(
        N_LABEL,
        "Hessian spread max|lambda| / min|lambda|",
        "spread_IDA at q = k_1 = Theta(1): fitted exponent in n vs 0",
        log="xy",
    )
    extra = {
        "IDA at the target key q = k_1": spread.tolist(),  # the judged series, under the name other views read
        "IDA at the equidistant initialisation q_0": [s.spread for s in spec[("ida", "equidistant")]],
        "softmax at q_0 (flat directions excluded)": [s.spread for s in spec[("softmax", "equidistant")]],
        "softmax at q = k_1 (flat directions excluded)": [s.spread for s in spec[("softmax", "target")]],
    }
    what, shape = "IDA Hessian spread at q = k_1", th.hessian_spread_ida_theta(ns)
    return scaling_evidence(ns, spread, shape, axes, exponent=0.0, what=what, note=note, extra=extra)


def measure_softmax_curvature(quick: bool = False) -> Evidence:
    """Softmax's curvature at q_0 (the paper's point for softmax); both kernels at both points beside it."""
    ns, spec = _hessians(quick)
    curv = np.array([s.curvature for s in spec[("softmax", "equidistant")]])
    ida = np.array([s.curvature for s in spec[("ida", "equidistant")]])
    ida_t = np.array([s.curvature for s in spec[("ida", "target")]])
    note = (
        f". The verdict is for the equidistant initialisation q_0 (the paper's point for softmax); at q = k_1 "
        f"softmax's curvature scales as n^{_slope(ns, spec, 'softmax', 'target', 'curvature'):.2f}. The "
        f"paper's comparison puts IDA at q = k_1: there its curvature scales as n^"
        f"{fit_loglog_slope(ns, ida_t):.2f} and exceeds softmax's at q_0 by {np.min(ida_t / curv):.3g}x to "
        f"{np.max(ida_t / curv):.3g}x; at the same point q_0, IDA's scales as n^{fit_loglog_slope(ns, ida):.2f} "
        f"and exceeds softmax's by {np.min(ida / curv):.3g}x to {np.max(ida / curv):.3g}x. " + HESSIAN_SETUP
    )
    axes = Axes(
        N_LABEL,
        "largest |eigenvalue| of the Hessian (per unit length^2)",
        "curvature_softmax at q_0 = Theta(n^-2): fitted exponent in n vs -2",
        log="xy",
    )
    extra = {
        "softmax at q = k_1": [s.curvature for s in spec[("softmax", "target")]],
        "IDA at q_0": ida.tolist(),
        "IDA at the target key q = k_1": ida_t.tolist(),
    }
    what, shape = "softmax curvature max|lambda| at q_0", th.softmax_curvature_theta(ns)
    return scaling_evidence(ns, curv, shape, axes, exponent=-2.0, what=what, note=note, extra=extra)


HESSIAN_CLAIMS = (
    landscape_claim(
        "lemma2-hessian-spread",
        "Lemma 2 (section 2.5)",
        "However, the Hessian spread (ratio of largest to smallest eigenvalue) is Theta(1) for IDA because the "
        "Theta(n) scaling affects all directions similarly.",
        "spread_IDA = Theta(1)",
        measure_hessian_spread,
    ),
    landscape_claim(
        "lemma2-softmax-curvature",
        "Lemma 2 (section 2.5)",
        "At the equidistant initialisation softmax's loss curvature is Theta(n^-2).",
        "curvature_softmax = Theta(n^-2)",
        measure_softmax_curvature,
    ),
)
