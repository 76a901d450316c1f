"""Claims about the IDA kernel matrix K_ij = (d(k_i, k_j)^2 + eps)^-1 against the keys' separation d_min,
measured on the Attention page: its effective rank (Theorem 3, section 2.7; Lemma 5.1(b) / Theorem 5.2,
sections 5.1 and 5.3) and the practical eps advice that keeps eps (n-1) / d_min^2 below 1/2 (section 2.8).

Set-up as in ``attention_claims``: float64 on the CPU from fixed seeds; bounds from
``georesolver_core.theory.attention``; summaries worded from the measured outcome.
"""

from __future__ import annotations

import numpy as np
import torch

from georesolver_core.attention import ida_weights_from_sq
from georesolver_core.claims.attention_claims import F64, attention_claim, powers, seeded
from georesolver_core.geometry import pairwise_sq_distance
from georesolver_core.labs.key_set import effective_rank, kernel_matrix, mean_sq_distance, min_pairwise_distance
from georesolver_core.labs.samplers import random_points
from georesolver_core.theory import attention as th
from georesolver_core.verdicts import Axes, fit_loglog_slope, sweep_evidence, verdict_inequality

# --- Theorem 3 / Lemma 5.1(b): effective rank ------------------------------------------------------


def _eff_rank(points: torch.Tensor, eps: float, geometry: str) -> float:
    return float(effective_rank(kernel_matrix(points, points, eps=eps, geometry=geometry)))


def measure_effrank_eps(quick: bool = False, *, n: int = 64, d: int = 8):
    """eff-rank(K) of n keys across eps / d_min^2, Euclidean and Poincaré, against 1 + n eps^2 / d_min^4."""
    rho = np.logspace(-3, 3, 13 if quick else 37)  # eps / d_min^2
    pts = {
        "euclidean": random_points(n, d, generator=seeded(), dtype=F64),
        "poincare": random_points(n, d, geometry="poincare", spread=0.5, generator=seeded(1), dtype=F64),
    }
    d_min = {geo: min_pairwise_distance(x, geometry=geo) for geo, x in pts.items()}
    ranks = {geo: [_eff_rank(x, float(r) * d_min[geo] ** 2, geo) for r in rho] for geo, x in pts.items()}
    bound = th.effective_rank_bound(n, rho, 1.0)  # with eps in units of d_min^2
    inside = rho <= 0.1  # the stated regime eps << d_min^2
    both, regime = ranks["euclidean"] + ranks["poincare"], np.concatenate([inside, inside])
    judged = verdict_inequality(
        both, np.concatenate([bound, bound]), relation="le", condition=regime, condition_text="eps <= 0.1 d_min^2"
    )
    i = int(np.flatnonzero(inside)[-1])
    held = rho[np.array(ranks["euclidean"]) <= bound]
    note = (
        f". At eps = {rho[i]:g} d_min^2, n={n} Euclidean keys give eff-rank {ranks['euclidean'][i]:.3g} against the "
        f"bound {bound[i]:.3g} (Poincaré: {ranks['poincare'][i]:.3g}). As eps -> 0, K -> I/eps and eff-rank -> n; "
        + (f"the bound holds from eps >= {held.min():.3g} d_min^2 on." if held.size else "the bound never holds.")
    )
    msq = mean_sq_distance(pts["euclidean"], pts["euclidean"])
    axes = Axes(
        "eps / d_min^2",
        f"effective rank (tr K)^2 / tr(K^2), n = {n}",
        "measured <= bound where eps << d_min^2",
        log="xy",
    )
    large_eps = th.effective_rank_large_eps(msq, rho * d_min["euclidean"] ** 2, n)
    extra = {
        "Poincaré ball, measured": ranks["poincare"],
        "n (the eps -> 0 limit)": th.effective_rank_small_eps_limit(np.full(rho.size, n)).tolist(),
        "1 + 2 mean d^2 / eps (eps >> d^2)": large_eps.tolist(),
    }
    return sweep_evidence(rho, ranks["euclidean"], bound, judged, axes, note=note, at=i, extra=extra)


EFFECTIVE_RANK = attention_claim(
    "thm3-effective-rank",
    "Theorem 3 (section 2.7)",
    "The IDA kernel's effective rank is bounded independently of width: eff-rank(K) <= 1 + n eps^2 / d_min^4 "
    "for small eps.",
    "eff-rank(K) <= 1 + n eps^2 / d_min^4 (eps << d_min^2)",
    measure_effrank_eps,
)


def measure_effrank_n(quick: bool = False, *, d: int = 8, rho: float = 0.01):
    """eff-rank(K^H) of n Poincaré keys at eps = 0.01 d_min^2 (inside the stated regime) as n grows."""
    ns = powers(8, 256, 2) if quick else powers(8, 1024, 2)
    hyp, euc = [], []
    for n in ns:
        xh = random_points(n, d, geometry="poincare", spread=0.5, generator=seeded(), dtype=F64)
        xe = random_points(n, d, generator=seeded(), dtype=F64)
        hyp.append(_eff_rank(xh, rho * min_pairwise_distance(xh, geometry="poincare") ** 2, "poincare"))
        euc.append(_eff_rank(xe, rho * min_pairwise_distance(xe) ** 2, "euclidean"))
    n_a = np.array(ns, dtype=float)
    bound = th.effective_rank_bound(n_a, rho, 1.0)
    judged = verdict_inequality(hyp, bound, relation="le")
    note = (
        f". The rank grows like n^{fit_loglog_slope(ns, hyp):.2f} (hyperbolic), n^{fit_loglog_slope(ns, euc):.2f} "
        f"(Euclidean): eff-rank = {hyp[-1]:.4g} of n={ns[-1]}, where the bound allows {bound[-1]:.4g}"
    )
    axes = Axes(
        f"number of keys n (eps = {rho:g} d_min^2)",
        "effective rank of K^H (Poincaré ball)",
        "measured <= bound",
        log="xy",
    )
    extra = {"Euclidean, measured": euc, "n": n_a.tolist()}
    return sweep_evidence(ns, hyp, bound, judged, axes, note=note, extra=extra)


EFFECTIVE_RANK_N = attention_claim(
    "lemma5.1-effective-rank-n",
    "Lemma 5.1(b) / Theorem 5.2 (sections 5.1, 5.3)",
    "For any metric, including the Poincaré ball, eff-rank(K) <= 1 + n eps^2/d_min^4 + O(n eps^3/d_min^6) when "
    "eps << d_min^2.",
    "eff-rank(K^H) <= 1 + n eps^2 / d_min^4",
    measure_effrank_n,
)


# --- Section 2.8: the practical eps advice ---------------------------------------------------------


def measure_eps_advice(quick: bool = False):
    """With eps = 0.01 E||q - k||^2, is eps (n-1)/d_min^2 below 1/2? Gaussian keys, d = 64 (and 16), as n grows."""
    ns = powers(8, 512, 4) if quick else powers(8, 1024, 2)
    index, w_min = {64: [], 16: []}, []
    for d, series in index.items():
        for n in ns:
            k = random_points(n, d, generator=seeded(), dtype=F64)
            sq = pairwise_sq_distance(k, k, geometry="euclidean")  # (n, n), computed once
            eps = float(th.recommended_eps(sq.sum() / (n * (n - 1))))
            d_min = float(sq.fill_diagonal_(torch.inf).min().sqrt())
            series.append(float(th.degradation_index(eps, n, d_min)))
            if d == 64:
                w_min.append(float(ida_weights_from_sq(sq.fill_diagonal_(0.0), eps=eps).diagonal().min()))
    bound = [th.DEGRADATION_THRESHOLD] * len(ns)
    judged = verdict_inequality(index[64], bound, relation="le", rtol=0.0)
    ok = [n for n, v in zip(ns, index[64], strict=True) if v < th.DEGRADATION_THRESHOLD]
    note = (
        f". Outside the regime for n <= {max(ok) if ok else 'none'} of those tried (d=64); the index grows like "
        f"n^{fit_loglog_slope(ns, index[64]):.2f} and the smallest own-key weight is {w_min[-1]:.3f} at n={ns[-1]}. "
        f"Staying out needs eps < d_min^2 / (2(n-1)), = {th.max_safe_eps(ns[-1], 1.0):.2g} d_min^2 at n={ns[-1]}"
    )
    axes = Axes(
        "number of Gaussian keys n (d = 64)",
        "eps (n-1) / d_min^2 at eps = 0.01 E||q-k||^2",
        "measured <= bound (outside the regime)",
        log="xy",
    )
    extra = {"d = 16": index[16], "smallest W_jj (d = 64)": w_min}
    return sweep_evidence(ns, index[64], bound, judged, axes, note=note, extra=extra)


EPS_ADVICE = attention_claim(
    "sec2.8-eps-advice",
    "Section 2.8, implications for practice",
    "Initialising eps ~ 0.01 E||q_i - k_j||^2 avoids the degradation regime eps (n-1) / d_min^2 >= 1/2.",
    "eps (n-1) / d_min^2 < 1/2 at eps = 0.01 E||q - k||^2",
    measure_eps_advice,
)

CLAIMS = (EFFECTIVE_RANK, EFFECTIVE_RANK_N, EPS_ADVICE)
