"""Claims about loss landscapes (sections 2.5, 2.6, 5.3, 8.1), one module per concept; ``CLAIMS``
lists them all, in this order:

- ``pl``: the PL constants of Theorems 2, 5.3 and 8.1 on the two-key line;
- ``hessian``: Lemma 2's Hessian spread and softmax curvature;
- ``spurious``: Theorem 2's "no spurious local minima" over 2-D patches.

``evidence`` holds what they share (page, set-up constants, verdict rules).
"""

from __future__ import annotations

from georesolver_core.claims.landscape.evidence import BASIN, PAGE, TAU
from georesolver_core.claims.landscape.hessian import (
    HESSIAN_CLAIMS,
    HESSIAN_SETUP,
    measure_hessian_spread,
    measure_softmax_curvature,
)
from georesolver_core.claims.landscape.pl import (
    PL_CLAIMS,
    SETUP,
    measure_pl_delta,
    measure_pl_eps,
    measure_pl_hyperbolic,
    measure_pl_ratio,
    measure_pl_softmax,
    measure_pl_sphere,
)
from georesolver_core.claims.landscape.spurious import SPURIOUS_CLAIMS, measure_spurious, spurious_minima_counts
from georesolver_core.verdicts import FAILS, HOLDS

CLAIMS = (*PL_CLAIMS, *HESSIAN_CLAIMS, *SPURIOUS_CLAIMS)  # the order of the claims table

__all__ = [
    "BASIN",
    "CLAIMS",
    "FAILS",
    "HESSIAN_SETUP",
    "HOLDS",
    "PAGE",
    "SETUP",
    "TAU",
    "measure_hessian_spread",
    "measure_pl_delta",
    "measure_pl_eps",
    "measure_pl_hyperbolic",
    "measure_pl_ratio",
    "measure_pl_softmax",
    "measure_pl_sphere",
    "measure_softmax_curvature",
    "measure_spurious",
    "spurious_minima_counts",
]
