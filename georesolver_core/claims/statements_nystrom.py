"""Theorem 5.5's Frobenius step (section 5.5): the distance between the rank-m truncation K_nn^(m) and the
Nyström form K_nm K_mm^-1 K_mn of the hyperbolic kernel, bounded by ||K_mm^-1||_2 ||K_nm||_F ||E||_F, E not
defined in the paper.

Keys spread through the Poincaré ball, anchors from hyperbolic k-means (as L-HIDA places them), float64 on
the CPU from fixed seeds; the bound from ``georesolver_core.theory.statements``.
"""

from __future__ import annotations

import numpy as np
import torch

from georesolver_core.attention.l_hida import hyperbolic_kmeans, l_hida, l_hida_nystrom
from georesolver_core.claims.statements_ida import claim, seeded
from georesolver_core.geometry import pairwise_sq_distance
from georesolver_core.labs.hida import ball_points
from georesolver_core.theory import statements as th
from georesolver_core.verdicts import Axes, sweep_evidence, verdict_inequality, verdict_readings

PAGE = "hida"


def kernel(x: torch.Tensor, y: torch.Tensor, eps: float) -> torch.Tensor:
    """(d_H(x_i, y_j)^2 + eps)^-1. (n, d), (m, d) -> (n, m)."""
    return 1.0 / (pairwise_sq_distance(x, y, geometry="poincare") + eps)


def frobenius_step(n: int, m: int, *, d: int = 4, eps: float = 0.1, seed: int = 0) -> dict:
    """Both sides of the step for one (n, m): the left side and ||E||_F under two readings of E."""
    k = ball_points(n, d, seed=seed)
    anchors, _ = hyperbolic_kmeans(k, m, generator=seeded(seed + 3))
    K, Knm, Kmm = kernel(k, k, eps), kernel(k, anchors, eps), kernel(anchors, anchors, eps)
    lam, U = torch.linalg.eigh(K)  # ascending
    top = U[:, -m:] * lam[-m:]
    Km = top @ U[:, -m:].T  # rank-m truncation K_nn^(m)
    nys = Knm @ torch.linalg.solve(Kmm, Knm.T)  # K_nm K_mm^-1 K_mn
    return {
        "lhs": float((Km - nys).norm()),
        "kmm_inv": float(1.0 / torch.linalg.eigvalsh(Kmm).abs().min()),
        "knm": float(Knm.norm()),
        "tail": float((K - Km).norm()),  # E = K_nn - K_nn^(m)
        "residual": float((K - nys).norm()),  # E = K_nn - K_nm K_mm^-1 K_mn
    }


def measure_frobenius_step(quick: bool = False):
    n = 96 if quick else 384
    ms = [2, 4, 8, 16] if quick else [2, 4, 8, 16, 32, 64]
    rows = [frobenius_step(n, m) for m in ms]
    lhs = [r["lhs"] for r in rows]
    bounds = {
        "E = K_nn - K_nn^(m) (the spectral tail of the line before)": [
            th.nystrom_frobenius_step_bound(r["kmm_inv"], r["knm"], r["tail"]) for r in rows
        ],
        "E = K_nn - K_nm K_mm^-1 K_mn (the Nyström residual)": [
            th.nystrom_frobenius_step_bound(r["kmm_inv"], r["knm"], r["residual"]) for r in rows
        ],
    }
    readings = {name: verdict_inequality(lhs, b) for name, b in bounds.items()}
    verdict, summary = verdict_readings(readings)
    tightest = {name: float(np.max(np.asarray(lhs) / np.asarray(b))) for name, b in bounds.items()}
    note = (
        ". Largest left side / bound: "
        + "; ".join(f"{name.split(' (')[0]}: {v:.3g}" for name, v in tightest.items())
        + f". n = {n} keys in the ball (d = 4), eps = 0.1, k-means anchors; ||K_mm^-1||_2 from "
        f"{rows[0]['kmm_inv']:.3g} to {rows[-1]['kmm_inv']:.3g}. Inputs probed (one key set, k-means anchors, the m sweep), not optimised."
    )
    first = next(iter(bounds))
    axes = Axes("anchors m", "||K_nn^(m) - K_nm K_mm^-1 K_mn||_F", "measured <= ||K_mm^-1|| ||K_nm||_F ||E||_F",
                log="xy")  # fmt: skip
    extra = {name: b for name, b in bounds.items() if name != first}
    return sweep_evidence(
        ms, lhs, bounds[first], (verdict, summary), axes, note=note, extra=extra,
        reading="two readings of E, each measured; the drawn bound is the spectral-tail reading",
    )  # fmt: skip


def output_error(n: int, m: int, *, d: int = 4, dv: int = 8, eps: float = 0.1, seed: int = 0) -> dict:
    """Both sides of the last line for one (n, m), queries = keys: ||o^L-HIDA - o^HIDA||_F for the library's
    L-HIDA (section 5.5's anchor weights) and for the Nyström form, and (2 ||V||_F / eps) ||K~_nn - K_nn||_F."""
    k = ball_points(n, d, seed=seed)
    v = torch.randn(n, dv, generator=seeded(seed + 7), dtype=torch.float64)
    anchors, _ = hyperbolic_kmeans(k, m, generator=seeded(seed + 3))
    K, Knm, Kmm = kernel(k, k, eps), kernel(k, anchors, eps), kernel(anchors, anchors, eps)
    dense = (K @ v) / K.sum(-1, keepdim=True)  # o^HIDA (n, dv)
    nys = Knm @ torch.linalg.pinv(Kmm) @ Knm.T  # K~_nn
    return {
        "anchor": float((l_hida(k, k, v, anchors, eps=eps) - dense).norm()),
        "nystrom": float((l_hida_nystrom(k, k, v, anchors, eps=eps) - dense).norm()),
        "bound": float(th.lhida_output_error_bound(float(v.norm()), eps, float((nys - K).norm()))),
    }


def measure_output_error(quick: bool = False):
    n = 96 if quick else 384
    ms = [2, 4, 8, 16] if quick else [2, 4, 8, 16, 32, 64]
    rows = [output_error(n, m) for m in ms]
    bound = [r["bound"] for r in rows]
    names = {
        "anchor": "o^L-HIDA = the anchor weights W^KA of section 5.5",
        "nystrom": "o^L-HIDA = the Nyström form",
    }
    readings = {names[key]: verdict_inequality([r[key] for r in rows], bound) for key in names}
    verdict, summary = verdict_readings(readings)
    tight = {key: max(r[key] / r["bound"] for r in rows) for key in names}
    note = (
        f". Largest left side / bound: anchor weights {tight['anchor']:.3g}, Nyström form {tight['nystrom']:.3g}. "
        f"n = {n} keys in the ball (d = 4), queries = keys, eps = 0.1, k-means anchors, Gaussian V (d_v = 8), "
        "K~_nn = K_nm K_mm^+ K_mn. Inputs probed (one key set, the m sweep), not optimised"
    )
    axes = Axes(
        "anchors m", "||o^L-HIDA - o^HIDA||_F", "measured <= (2 ||V||_F / eps) ||K~_nn - K_nn||_F", log="xy"
    )
    return sweep_evidence(
        ms, [r["anchor"] for r in rows], bound, (verdict, summary), axes, note=note,
        extra={names["nystrom"]: [r["nystrom"] for r in rows]},
        reading="two readings of o^L-HIDA, each measured; the drawn one is the anchor weights",
    )  # fmt: skip


CLAIMS = (
    claim(
        "thm5.5-output-error",
        "Theorem 5.5, proof (section 5.5), the last inequality",
        "||o^L-HIDA - o^HIDA||_F <= (2 ||V||_F / eps) ||K~_nn - K_nn||_F. Reading: K~_nn the Nyström form "
        "K_nm K_mm^-1 K_mn (pseudo-inverse), queries = keys; o^L-HIDA read as the anchor weights of section 5.5 and "
        "as the Nyström form's output, each measured.",
        "||o^L-HIDA - o^HIDA||_F <= (2 ||V||_F / eps) ||K~_nn - K_nn||_F",
        measure_output_error,
        page=PAGE,
    ),
    claim(
        "thm5.5-frobenius-step",
        "Theorem 5.5, proof (section 5.5), the Frobenius step",
        "||K_nn^(m) - K_nm K_mm^-1 K_mn||_F <= ||K_mm^-1||_2 ||K_nm||_F ||E||_F, E not defined. Reading: K_nn^(m) "
        "the rank-m eigen-truncation of the hyperbolic kernel, anchors from hyperbolic k-means; E read as the "
        "spectral tail K_nn - K_nn^(m) and as the Nyström residual K_nn - K_nm K_mm^-1 K_mn, each measured.",
        "||K^(m) - K_nm K_mm^-1 K_mn||_F <= ||K_mm^-1||_2 ||K_nm||_F ||E||_F",
        measure_frobenius_step,
        page=PAGE,
    ),
)
