"""Claims about the Poincaré ball itself (paper section 5.2)."""

from __future__ import annotations

import numpy as np
import torch

from georesolver_core.claims.registry import Claim, Evidence, register, verdict_inequality
from georesolver_core.geometry import pairwise_distance
from georesolver_core.theory.geometry import hyperbolic_separation_bound, hyperbolic_separation_exact


def measure_separation(quick: bool = False, delta: float = 0.05) -> Evidence:
    """Place two keys at norm rho, delta apart (chord), and measure d_H as rho -> 1 (float64)."""
    rhos = np.linspace(0.1, 0.99, 12 if quick else 40)
    measured = []
    for rho in rhos:
        half = np.arcsin(delta / (2 * rho))  # half the angle subtending a chord of length delta
        pts = rho * torch.tensor(
            [[np.cos(half), np.sin(half)], [np.cos(half), -np.sin(half)]], dtype=torch.float64
        )  # (2, 2)
        measured.append(float(pairwise_distance(pts[:1], pts[1:], geometry="poincare")[0, 0]))
    bound = hyperbolic_separation_bound(delta, rhos)
    verdict, summary = verdict_inequality(measured, bound, relation="ge", rtol=1e-9)
    exact = hyperbolic_separation_exact(delta, rhos)
    summary += (
        f". The exact value arcosh(1 + 2 delta^2/(1-rho^2)^2) is <= 2 delta/(1-rho^2) for every rho, so the stated "
        f"lower bound is really an upper bound; what survives is the growth: d_H rises from {measured[0]:.3g} "
        f"at rho={rhos[0]:.2f} to {measured[-1]:.3g} at rho={rhos[-1]:.2f} for the same chord delta={delta}."
    )
    return Evidence(
        x=rhos.tolist(),
        x_label="key norm rho (distance from the centre of the ball)",
        measured=measured,
        bound=bound.tolist(),
        y_label=f"hyperbolic distance d_H of two keys a chord delta={delta} apart",
        relation="measured >= bound",
        verdict=verdict,
        summary=summary,
        measured_value=measured[-1],
        bound_value=float(bound[-1]),
        log_y=True,
        extra={"exact formula": exact.tolist()},
    )


register(
    Claim(
        key="sec5.2b-rim-separation",
        section="Section 5.2(B)",
        statement="Keys near the rim of the Poincaré ball are far apart: d_min >= 2 delta / (1 - rho^2), "
        "growing without bound as rho -> 1.",
        bound_text="d_H(x, y) >= 2 delta / (1 - rho^2) for ||x|| = ||y|| = rho, ||x - y|| = delta",
        page="home",
        measure=measure_separation,
    )
)
