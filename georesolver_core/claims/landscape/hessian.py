"""Claims about the Hessian at the equidistant initialisation (Lemma 2, section 2.5): IDA's spread is
Theta(1) in the number of keys n, softmax's curvature is Theta(n^-2)."""

from __future__ import annotations

import numpy as np

from georesolver_core.claims.landscape.evidence import landscape_claim, scaling_evidence
from georesolver_core.landscape.hessian import hessian_sweep
from georesolver_core.theory import landscape as th
from georesolver_core.verdicts import Evidence, fit_loglog_slope

HESSIAN_SETUP = (
    "Set-up: n keys rho = 1 from the query in orthogonal directions (d = n), query at the equidistant point, "
    "L = (1 - W_1)^2, autograd Hessian, eps = 1e-2, softmax scale 1/sqrt(n)."
)


def _hessians(quick: bool):
    # Large n only: both rates are asymptotic, and below n = 16 the softmax slope is still bending.
    ns = np.array([16, 32, 64] if quick else [16, 32, 64, 128])
    return ns, {
        k: hessian_sweep(ns, kernel=k, geometry="euclidean", eps=1e-2, rho=1.0) for k in ("ida", "softmax")
    }


def measure_hessian_spread(quick: bool = False) -> Evidence:
    ns, spec = _hessians(quick)
    spread = np.array([s.spread for s in spec["ida"]])
    soft = [s.spread for s in spec["softmax"]]
    return scaling_evidence(
        ns,
        spread,
        th.hessian_spread_ida_theta(ns),
        exponent=0.0,
        what="IDA Hessian spread",
        note=(
            f"; the softmax spread grows too (slope {fit_loglog_slope(ns, soft):.2f}, excluding its "
            f"{spec['softmax'][-1].n_flat} flat direction). The IDA spectrum has {spec['ida'][-1].n_negative} "
            f"negative eigenvalue(s): the equidistant point is a saddle of L. " + HESSIAN_SETUP
        ),
        x_label="number of keys n",
        y_label="Hessian spread max|lambda| / min|lambda|",
        relation="spread_IDA = Theta(1): fitted exponent in n vs 0",
        extra={"softmax spread (flat directions excluded)": soft},
    )


def measure_softmax_curvature(quick: bool = False) -> Evidence:
    ns, spec = _hessians(quick)
    curv = np.array([s.curvature for s in spec["softmax"]])
    ida = np.array([s.curvature for s in spec["ida"]])
    return scaling_evidence(
        ns,
        curv,
        th.softmax_curvature_theta(ns),
        exponent=-2.0,
        what="softmax curvature max|lambda|",
        note=(
            f"; IDA's curvature scales as n^{fit_loglog_slope(ns, ida):.2f} and exceeds softmax's by "
            f"{np.min(ida / curv):.3g}x to {np.max(ida / curv):.3g}x. " + HESSIAN_SETUP
        ),
        x_label="number of keys n",
        y_label="largest |eigenvalue| of the Hessian (per unit length^2)",
        relation="curvature_softmax = Theta(n^-2): fitted exponent in n vs -2",
        extra={"IDA curvature": ida.tolist()},
    )


HESSIAN_CLAIMS = (
    landscape_claim(
        "lemma2-hessian-spread",
        "Lemma 2 (section 2.5)",
        "At the equidistant initialisation the Hessian spread (largest / smallest eigenvalue) of IDA's "
        "loss is Theta(1) in the number of keys n.",
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
