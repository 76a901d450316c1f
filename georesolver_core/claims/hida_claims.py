"""Claims of the HIDA family (Theorems 5.4-5.6, Proposition 1, FP-HIDA retrieval), shown on the HIDA page.

Bounds come from ``georesolver_core.theory.hida``; measurements from ``labs.hida``
and ``labs.op_count``. Summaries are worded from the measured outcome.
"""

from __future__ import annotations

import numpy as np
import torch

from georesolver_core.attention.fp_hida import fp_stats
from georesolver_core.device import one_cpu_thread
from georesolver_core.labs import hida as hida_lab
from georesolver_core.theory import hida as th
from georesolver_core.verdicts import (
    CONDITIONAL,
    FAILS,
    HOLDS,
    Axes,
    Claim,
    Evidence,
    fit_loglog_slope,
    sweep_evidence,
    verdict_inequality,
    weakest,
)

PAGE = "hida"


# --- Theorem 5.4: |S_i| and the n log n work -------------------------------------------------------


def measure_fp_index(quick: bool = False) -> Evidence:
    """max_i |S_i| of the default pattern (w = g = ceil(log2 n)), bidirectional and causal, against the bound."""
    ns = [2**p for p in range(2, 11 if quick else 16)]
    stats = [fp_stats(n) for n in ns]
    causal = [fp_stats(n, causal=True) for n in ns]
    measured = [max(a.max_size, b.max_size) for a, b in zip(stats, causal, strict=True)]
    bound = [s.bound for s in stats]
    pairs = [s.pairs for s in stats]
    slope = fit_loglog_slope(ns[-5:], pairs[-5:])
    note = (
        f". Work sum_i |S_i| grows as n^{slope:.3f} over the last five n (n log n has local slope "
        f"{th.n_log_n_local_exponent(ns[-5], ns[-1]):.3f}); at n = {ns[-1]} FP-HIDA evaluates "
        f"{stats[-1].work_fraction:.2%} of the dense distances."
    )
    axes = Axes("sequence length n", "max_i |S_i| (keys per query)", "measured <= bound", log="x")
    extra = {"mean |S_i|": [s.mean_size for s in stats], "sum |S_i| / n^2": [s.work_fraction for s in stats]}
    return sweep_evidence(ns, measured, bound, verdict_inequality(measured, bound), axes, note=note, extra=extra)


# --- Theorem 5.5: L-HIDA error against the number of anchors -------------------------------------


def measure_l_error(quick: bool = False) -> Evidence:
    """||o^L - o^Dense||_F with k-means anchors as m grows, keys spread through the ball (no clusters to find).

    Two printed rates: m^-1 (paper, seed 000) and m^-1/2 (summary, seed 001). The literal bounds with
    constant 1 hold trivially here (n / eps^2 = 100 n dwarfs ||V||_F); the verdict is on the exponent,
    fitted over m <= n/4 (m = n anchors at the keys is exact up to the soft aggregation).
    """
    n, eps = (48, 0.1) if quick else (256, 0.1)
    ms = [m for m in (1, 2, 4, 8, 16, 32, 64, 128) if m <= n // 4]
    sweep = hida_lab.l_error_sweep(n, 8, eps, ms)
    slope = fit_loglog_slope(ms, sweep.l_hida)
    bound_paper = th.l_hida_error_bound_paper(n, np.array(ms), eps)
    lit_verdict, _ = verdict_inequality(sweep.l_hida, bound_paper)
    if slope <= th.L_HIDA_EXPONENT_PAPER + 0.15:
        verdict, which = HOLDS, "the paper's m^-1 (seed 000)"
    elif slope <= th.L_HIDA_EXPONENT_SUMMARY + 0.15:
        verdict, which = CONDITIONAL, "the summary's m^-1/2 (seed 001) but not the paper's m^-1"
    else:
        verdict, which = FAILS, "neither m^-1 (seed 000) nor m^-1/2 (seed 001)"
    nys = fit_loglog_slope(ms, sweep.nystrom)
    summary = (
        f"error ~ m^{slope:.2f} (fitted over m = {ms[0]}..{ms[-1]}, n = {n}, eps = {eps}): decays like {which}. "
        f"Nyström form: m^{nys:.2f}. Literal bounds with constant 1 ({lit_verdict}) are vacuous: n/(m eps^2) >= "
        f"{bound_paper[-1]:.3g} while ||V||_F = {sweep.v_fro:.3g}."
    )
    through_first = sweep.l_hida[0] * (np.array(ms) / ms[0]) ** th.L_HIDA_EXPONENT_PAPER  # (M,)
    axes = Axes(
        "anchors m", "||o^L - o^Dense||_F", "fitted exponent <= -1 (bound drawn through the first point)", log="xy"
    )
    extra = {
        "m^-1/2 through the first point": list(sweep.l_hida[0] * (np.array(ms) / ms[0]) ** -0.5),
        "Nyström form": sweep.nystrom,
        "fitted exponent": slope,
    }
    return sweep_evidence(ms, sweep.l_hida, through_first, (verdict, summary), axes, extra=extra)


# --- Theorem 5.6: C-HIDA regret ------------------------------------------------------------------


GROWTH = {"log T": np.log, "sqrt T": np.sqrt, "T": lambda t: np.asarray(t, float)}


def best_growth(T, regret) -> tuple[str, dict]:
    """Which of log T, sqrt T, T fits regret(T) = a f(T) + b best (least-squares residual)."""
    T, r = np.asarray(T, float), np.asarray(regret, float)
    res = {}
    for name, f in GROWTH.items():
        A = np.stack([f(T), np.ones_like(T)], 1)
        coef, *_ = np.linalg.lstsq(A, r, rcond=None)
        res[name] = float(np.sqrt(np.mean((A @ coef - r) ** 2)))
    return min(res, key=res.get), res


def measure_c_regret(quick: bool = False) -> Evidence:
    """Regret of online hyperbolic k-means (C-HIDA's update) against the best fixed summaries, vs T, in
    random order and in the worst order found by search (``claims.order_search``).

    Stream: a fixed mixture of c = 4 clusters in the Poincaré disk; at each T the first T keys. The
    comparator (best of hyperbolic k-means restarts on those keys) does not depend on their order, so
    the worst stream of the set maximises C-HIDA's online loss: openings on nearest neighbours, greedy
    farthest-key completion, then batched local search (swaps, reversed segments) over the orders.
    Bound: Delta_H^2 c log T, i.e. the reading eps_opt = 0; with eps_opt > 0 the O(T eps_opt) term
    admits any linear regret and the bound says nothing.
    """
    from georesolver_core.claims.order_search import worst_order
    from georesolver_core.geometry import pairwise_sq_distance

    checkpoints = [64, 128, 256, 512] if quick else [32, 64, 128, 256, 512, 1024, 2048]
    restarts, iters = (2, 3) if quick else (8, 20)
    with one_cpu_thread():  # small tensors in a long loop: extra threads only contend
        s = hida_lab.c_hida_stream(checkpoints[-1], 4, d=2, checkpoints=checkpoints)
        keys = torch.as_tensor(s.keys)
        searches, diam = [], []
        for t in checkpoints:
            diam.append(float(pairwise_sq_distance(keys[:t], keys[:t], geometry="poincare").max().sqrt()))
            its = iters if t <= 512 else 2
            searches.append(worst_order(keys[:t], s.labels[:t], 4, restarts=restarts, iters=its))
    worst = [o.loss - b for o, b in zip(searches, s.best_fixed, strict=True)]
    by_sort = [o.sorted_loss - b for o, b in zip(searches, s.best_fixed, strict=True)]
    bound = th.c_hida_regret_bound(np.array(checkpoints), 4, np.array(diam))
    verdict_r, summary_r = verdict_inequality(s.regret, bound)
    verdict_w, summary_w = verdict_inequality(worst, bound)
    growth, _ = best_growth(checkpoints, s.regret)
    growth_w, _ = best_growth(checkpoints, worst)
    half = len(checkpoints) // 2
    slope = fit_loglog_slope(checkpoints[half:], np.maximum(s.regret[half:], 1e-12))
    slope_w = fit_loglog_slope(checkpoints[half:], np.maximum(worst[half:], 1e-12))
    ratio = np.asarray(worst) / bound
    i = int(np.argmax(ratio))
    # The theorem allows any order of the stream: one verdict per order, the claim's the worst order's.
    parts = [
        {
            "part": name,
            "verdict": HOLDS if v == HOLDS and g == "log T" else FAILS,
            "summary": f"{why}; best fit of regret(T) among log T, sqrt T, T: {g}; log-log slope {sl:.2f}",
        }
        for name, v, why, g, sl in (
            ("random order", verdict_r, summary_r, growth, slope),
            ("the worst order found by search", verdict_w, summary_w, growth_w, slope_w),
        )
    ]
    verdict = weakest([p["verdict"] for p in parts])
    o = searches[i]
    summary = (
        f"Worst order found (search over orders: {o.restarts} nearest-neighbour/random openings, greedy "
        f"farthest-key completion, {o.iters} batched local-search steps; {o.evaluations} orders scored at T = "
        f"{checkpoints[i]}): regret {worst[i]:.4g} vs bound {bound[i]:.4g}, ratio {ratio[i]:.3g} (worst over T); "
        f"at T = {checkpoints[i]} the greedy order reached {o.greedy_loss - s.best_fixed[i]:.4g}, clusters one after "
        f"another {by_sort[i]:.4g}, the worst random order {o.random_loss - s.best_fixed[i]:.4g}. Worst order: best "
        f"fit {growth_w}, log-log slope {slope_w:.2f} over the second half (log T -> 0, sqrt T -> 0.5, T -> 1). "
        f"Random order: {summary_r}; best fit {growth}, slope {slope:.2f}. The theorem does not restrict the "
        "order, so an order whose regret exceeds the bound is a counterexample; a random (exchangeable) order is "
        "a hypothesis that rescues it."
    )
    axes = Axes(
        "stream length T (tokens)", "regret, worst order found (d_H^2)", "measured <= Delta^2 c log T", "x"
    )
    extra = {"regret, random order": s.regret, "regret, clusters one after another": by_sort,
             "worst regret / bound": ratio.tolist()}  # fmt: skip
    reading = "any order of the stream (searched); the bound Delta_H^2 c log T (eps_opt = 0)"
    return sweep_evidence(
        checkpoints, worst, bound, (verdict, summary), axes, extra=extra, parts=parts, reading=reading,
        sense="le", at=i,
    )  # fmt: skip


# --- Proposition 1: four cost classes ------------------------------------------------------------


def measure_cost_classes(quick: bool = False) -> Evidence:
    """Fitted exponents of counted operations (forward pass) of Dense (naive n x n), FP and L (operations
    vs n) and C (operations per token vs n) against 2, n log n, 1, 0: a cost class is counted, not timed."""
    from georesolver_core.labs.op_count import counted_scaling

    cap = 128 if quick else 1024  # C-HIDA streams token by token: its count is the slow one
    if quick:
        rep = counted_scaling((64, 128, 256, 512), head_dim=8, max_len={"c-hida": cap})
    else:
        rep = counted_scaling((256, 512, 1024, 2048, 4096), head_dim=16, max_len={"c-hida": cap})
    kernels = list(rep["slopes"])
    lens = rep["lens"]
    measured = [rep["slopes"][k] for k in kernels]
    predicted = [rep["predicted"][k] for k in kernels]
    fp = kernels.index("fp-hida")
    predicted[fp] = th.n_log_n_local_exponent(lens[0], lens[-1])  # n log n over this range
    tol = 0.15  # counts are exact: the tolerance covers lower-order terms (anchors, summaries, log n windows)
    bad = [k for k, m, p in zip(kernels, measured, predicted, strict=True) if m is None or abs(m - p) > tol]
    verdict = HOLDS if not bad else FAILS
    summary = ", ".join(
        f"{k} {m:.3f} (predicted {p:.3f})" for k, m, p in zip(kernels, measured, predicted, strict=True)
    )
    summary = (
        f"fitted exponents of counted operations over n = {lens[0]}..{lens[-1]} (C-HIDA's per-token count over "
        f"n = {lens[0]}..{max(n for n in lens if n <= cap)} only: it streams token by token): {summary}; tolerance {tol}"
        + (f"; off: {', '.join(bad)}" if bad else "")
        + ". Operations: matmul FLOPs (2 m n k) plus one per output element of every other aten op, counted "
        "under a torch dispatch mode (identical on any machine load)."
    )
    names = ", ".join(f"{i} {k}" for i, k in enumerate(kernels))
    axes = Axes(f"kernel: {names}", "fitted exponent of counted operations in n", "|measured - predicted| <= tol")
    extra = {"lens": lens, "operations": rep["ops"], "per_token (c-hida)": rep["series"].get("c-hida")}
    reading = "cost = counted arithmetic operations of the forward pass; C-HIDA per token"
    return sweep_evidence(
        range(len(kernels)), measured, predicted, (verdict, summary), axes, extra=extra, reading=reading
    )


# --- FP-HIDA retrieval outside S_i ---------------------------------------------------------------


def measure_fp_retrieval(quick: bool = False) -> Evidence:
    """Copy task q_i = k_j* at random positions: FP-HIDA retrieves v_j* only when j* is in S_i."""
    ns = [64, 128, 256, 512] if quick else [64, 128, 256, 512, 1024, 2048, 4096]
    res = [hida_lab.fp_retrieval(n, probes=64 if quick else 256) for n in ns]
    measured = [r.fp_rate for r in res]
    bound = [r.coverage for r in res]
    judged = verdict_inequality(measured, bound, rtol=1e-9)
    note = (
        f". Dense-HIDA retrieves {min(r.dense_rate for r in res):.0%} or more at every n; FP-HIDA falls to "
        f"{measured[-1]:.1%} at n = {ns[-1]}, and a target outside S_i is lost (mean relative error "
        f"{np.nanmean([r.fp_error_outside for r in res]):.2f})."
    )
    axes = Axes("sequence length n", "fraction of targets retrieved", "FP-HIDA rate <= |S_i|/n coverage", log="x")
    extra = {"Dense-HIDA": [r.dense_rate for r in res]}
    return sweep_evidence(ns, measured, bound, judged, axes, note=note, extra=extra)


CLAIMS = (
    Claim(
        "thm5.4-fp-index-size",
        "Theorem 5.4 (section 5.4)",
        "FP-HIDA's index set has O(log n) keys per query, so the layer costs O(n log n d).",
        "|S_i| <= (2w + 1) + g + 2(ceil(log2 n) + 1) + 1",
        PAGE,
        measure_fp_index,
    ),
    Claim(
        "thm5.5-l-hida-error",
        "Theorem 5.5 (section 5.5)",
        "L-HIDA with m anchors approximates Dense-HIDA with error O(n/(m eps^2)) (paper) or O(n/(eps^2 sqrt m)) "
        "(summary).",
        "||o^L - o^H||_F <= O(n / (m eps^2))  [seed 001: O(n / (eps^2 sqrt m))]",
        PAGE,
        measure_l_error,
    ),
    Claim(
        "thm5.6-c-hida-regret",
        "Theorem 5.6 (section 5.6)",
        "C-HIDA's online hyperbolic k-means has O(c log T) regret against the best fixed summaries.",
        "sum_t min_k d_H(k_t, s_k)^2 - best fixed <= O(Delta_H^2 c log T) + O(T eps_opt)",
        PAGE,
        measure_c_regret,
    ),
    Claim(
        "prop1-cost-classes",
        "Proposition 1 (section 11.3)",
        "Dense-HIDA costs Theta(n^2 d), FP-HIDA O(n log n d), L-HIDA O(n d), C-HIDA Theta(1) per token.",
        "time exponents in n: 2, ~1 (n log n), 1, 0 (per token)",
        PAGE,
        measure_cost_classes,
    ),
    Claim(
        "fp-retrieval-outside",
        "Lemma 5.1(a) under FP-HIDA (sections 5.1, 5.4)",
        "Exact retrieval survives FP-HIDA only for targets inside S_i: a target outside gets weight 0.",
        "retrieval rate <= mean |S_i| / n -> 0",
        PAGE,
        measure_fp_retrieval,
    ),
)
