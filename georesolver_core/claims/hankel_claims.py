"""Claims of dyadic Hankel boundary attention (seed 004), measured on the discretised cross block."""

from __future__ import annotations

import numpy as np

from georesolver_core.extras.hankel_measure import decay_sweep, output_error, rank_sweep, speedup_sweep
from georesolver_core.theory.hankel import EPS_LIST, rank_rule, singular_value_bound
from georesolver_core.verdicts import (
    FAILS,
    HOLDS,
    Axes,
    Claim,
    Evidence,
    fit_loglog_slope,
    sweep_evidence,
    verdict_inequality,
)

PAGE = "hankel"
SEED_RANKS = (2, 3, 3)  # what seed 004 reports observing for EPS_LIST
LE = "measured <= bound"
TOP = 10  # singular values compared: beyond the 10th they sit at float64 rounding (1e-16 relative)


def _hs(quick: bool) -> list[int]:
    return [4, 8, 16, 32, 64] if quick else [4, 8, 16, 32, 64, 128, 256, 512, 1024]


def measure_decay(quick: bool = False) -> Evidence:
    """Worst normalised s_n / s_1 over the block scales h, index by index, against 4^-(n-1)."""
    decay = decay_sweep(_hs(quick), top=TOP)
    norm = np.array(decay.normalised())  # (len(hs), TOP)
    raw = np.array(decay.singular_values) / (2 * np.pi)  # the seed's K carries 1/(2 pi)
    n = np.arange(1, TOP + 1)
    bound = singular_value_bound(n)
    measured = norm.max(axis=0)
    judged = verdict_inequality(measured, bound, relation="le")
    raw_ok = bool((raw.max(axis=0) <= bound).all())
    spread = float((norm.max(axis=0)[1:4] / norm.min(axis=0)[1:4]).max())
    note = (
        f". Verdict for singular values normalised by s_1 (the seed's reading), worst over h = "
        f"{decay.hs[0]:g}..{decay.hs[-1]:g}. Unnormalised, divided by the 2 pi of K: "
        f"{'also within' if raw_ok else 'NOT within'} 4^-N (s_1/(2 pi) = {raw.max(axis=0)[0]:.3g}). "
        f"The decay is far faster than 4^-N: s_2/s_1 = {measured[1]:.3g} vs 1/4; s_2..s_4 vary by at most "
        f"{spread:.3g}x across h."
    )
    axes = Axes("singular value index n = N + 1", "s_n / s_1 (worst over h)", LE, log="y")
    extra = {"unnormalised s_n / (2 pi), worst over h": raw.max(axis=0).tolist()}
    return sweep_evidence(n, measured, bound, judged, axes, note=note, at=1, extra=extra)


def measure_rank(quick: bool = False) -> Evidence:
    """Observed rank per eps (the largest over h) against ceil(log4(1/eps)); its spread over h."""
    decay = decay_sweep(_hs(quick), top=TOP)
    ranks = rank_sweep(EPS_LIST, decay)
    worst = [max(row) for row in ranks.observed]
    least = [min(row) for row in ranks.observed]
    judged = verdict_inequality(worst, ranks.rule, relation="le")
    per_h = "; ".join(
        f"eps={e:g}: " + ", ".join(f"h={h:g}->{k}" for h, k in zip(ranks.hs, row, strict=True))
        for e, row in zip(EPS_LIST, ranks.observed, strict=True)
    )
    varying = [f"{e:g}" for e, row in zip(EPS_LIST, ranks.observed, strict=True) if len(set(row)) > 1]
    note = f". Observed (worst over h) {worst} vs rule {ranks.rule}; the seed reports {list(SEED_RANKS)}. " + (
        f"Rank changes with h at eps = {', '.join(varying)} (per h: {per_h})."
        if varying
        else "Same rank at every h."
    )
    axes = Axes("relative error eps per block", "rank N", LE, log="x")
    extra = {"smallest observed rank over h": [float(v) for v in least], "seed's observed": list(SEED_RANKS)}
    return sweep_evidence(EPS_LIST, worst, ranks.rule, judged, axes, note=note, at=1, extra=extra)


def measure_output_error(quick: bool = False, eps: float = 1e-2) -> Evidence:
    """Relative output error of U (V^T X) at the rule's rank, per block scale h, against eps."""
    hs = _hs(quick)
    n = rank_rule(eps)
    measured = [output_error(h, n) for h in hs]
    bound = [eps] * len(hs)
    judged = verdict_inequality(measured, bound, relation="le")
    note = f" (rank {n} = ceil(log4(1/{eps:g})), float64, Frobenius norm, Gaussian values)."
    axes = Axes("block scale h (r in [h, 2h), s in (1, 4h + 1])", "||HX - U(V^T X)|| / ||HX||", LE, log="xy")
    return sweep_evidence(hs, measured, bound, judged, axes, note=note, measured_value=max(measured))


def measure_rank4_error(quick: bool = False) -> Evidence:
    """Relative output error of the rank-4 factorisation over the seed's block scales h = 4..64 (and beyond),
    against the seed's 'about 1e-6', read as at most 1e-6 up to one order of magnitude (<= 1e-5)."""
    hs = [4, 8, 16, 32, 64] if quick else [4, 8, 16, 32, 64, 128, 256]
    seeds = (0,) if quick else (0, 1, 2)
    errs = [max(output_error(h, 4, seed=sd) for sd in seeds) for h in hs]  # worst over the values
    bound = [1e-5] * len(hs)
    judged = verdict_inequality(errs, bound, relation="le")
    inside = [e for h, e in zip(hs, errs, strict=True) if h <= 64]
    note = (
        f". Worst over {len(seeds)} Gaussian value matrices: {', '.join(f'{e:.2g}' for e in errs)} at h = {hs} "
        f"(float64, d_v = 16); over the seed's h = 4..64 the error spans {min(inside):.2g}..{max(inside):.2g}. "
        "Reading of 'about 1e-6': not above 1e-5"
    )
    axes = Axes("block scale h", "||H X - U (V^T X)||_F / ||H X||_F at rank 4", "measured <= 1e-5", log="xy")
    return sweep_evidence(hs, [max(e, 1e-18) for e in errs], bound, judged, axes, note=note, sense="le")


def measure_speedup(quick: bool = False, eps: float = 1e-3) -> Evidence:
    """Dense H X vs U (V^T X) timed in one run on one thread, over block sizes from the seed's smallest dyadic
    blocks (h = 8) up: the speed-up judged >= 1 at every size (no size excluded), and its growth with m."""
    sizes = [8, 16, 32, 64, 256, 1024] if quick else [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
    sp = speedup_sweep(sizes, rank=rank_rule(eps), repeats=5 if quick else 9, threads=1)
    bound = [1.0] * len(sizes)
    faster = verdict_inequality(sp.speedup, bound, relation="ge")
    rises = sum(b > a for a, b in zip(sp.speedup, sp.speedup[1:], strict=False))
    slope = fit_loglog_slope(sizes, sp.speedup)
    slow = [m for m, v in zip(sizes, sp.speedup, strict=True) if v < 1.0]
    parts = [
        {"part": "the factorised block is faster than the dense one", "verdict": faster[0],
         "summary": (f"slower at m = {slow} ({min(sp.speedup):.2f}x at m = {sizes[int(np.argmin(sp.speedup))]}): "
                     "two small products cost more calls than one; " if slow else "") + faster[1]},
        {"part": "the speed-up grows with the block size", "verdict": HOLDS if slope > 0.25 else FAILS,
         "summary": f"log-log slope {slope:.2f} in m; it rises at {rises} of {len(sizes) - 1} steps."},
    ]  # fmt: skip
    verdict = faster[0] if faster[0] == FAILS else parts[1]["verdict"]
    summary = (
        f"Measured {min(sp.speedup):.3g}x..{max(sp.speedup):.3g}x over m = {sizes[0]}..{sizes[-1]} (rank {sp.rank}, "
        f"d_v = 64, float32, 1 thread, shared machine); the seed reports 2.1x-11.5x over its blocks (h = 4..64 in its "
        f"rank check). "
        + " ".join(f"[{p['part']}] {p['verdict']}: {p['summary']}" for p in parts)
        + f" Multiply-add ratio m/(2N) = {sp.flop_ratio[0]:.3g}..{sp.flop_ratio[-1]:.3g}: counted, the factorised "
        f"form does fewer multiply-adds once m > 2N = {2 * sp.rank}; timed, the blocks {slow} lose to call overhead."
    )
    axes = Axes(
        "block size m (m targets x m sources)", "speed-up dense / factorised", "measured >= bound", log="xy"
    )
    extra = {"multiply-add ratio m / (2N)": sp.flop_ratio}
    return sweep_evidence(sizes, sp.speedup, bound, (verdict, summary), axes, extra=extra, parts=parts, sense="ge")


CLAIMS = (
    Claim(
        "hankel-sv-decay",
        "Seed 004, Bernstein-ellipse estimate",
        "On each dyadic block r in [h, 2h) of the Hankel kernel 1/(s + r), the singular values "
        "fall at least as fast as 4^-N, whatever the scale h.",
        "s_{N+1}(K) <= 4^-N  (normalised by s_1)",
        PAGE,
        measure_decay,
    ),
    Claim(
        "hankel-rank-rule",
        "Seed 004, rank rule",
        "Rank N = ceil(log4(1/eps)) per block suffices for relative error eps, independently of h.",
        "observed rank(eps) <= ceil(log4(1/eps))",
        PAGE,
        measure_rank,
    ),
    Claim(
        "hankel-output-error",
        "Seed 004, factorised cross block",
        "Applying the block as U (V^T X) at the rule's rank changes the output by at most eps.",
        "||HX - U(V^T X)||_F / ||HX||_F <= eps",
        PAGE,
        measure_output_error,
    ),
    Claim(
        "hankel-rank4-error",
        "Seed 004, verification (mechanism check)",
        "Rank-4 factorization produced about 1e-6 relative output error and measured speedups of 2.1x-11.5x as "
        "block size grew. (The error half is judged here; the speed-up half is hankel-speedup.)",
        "||H X - U (V^T X)||_F / ||H X||_F <= 1e-5 at rank 4",
        PAGE,
        measure_rank4_error,
    ),
    Claim(
        "hankel-speedup",
        "Seed 004, cost O((|I| + |J|) N d)",
        "Rank-4 factorization produced about 1e-6 relative output error and measured speedups of 2.1x-11.5x as "
        "block size grew. (The speed-up half is judged here; the error half is hankel-output-error.)",
        "time(H X) / time(U (V^T X)) >= 1",
        PAGE,
        measure_speedup,
    ),
)
