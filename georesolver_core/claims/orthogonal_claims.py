"""Claims of orthogonal residual mixing (seed 003): exact orthogonality, spectrum, defects, negation."""

from __future__ import annotations

import functools

import numpy as np
import torch

from georesolver_core.device import one_cpu_thread
from georesolver_core.extras.orthogonal import cayley_matrix, cayley_plane, ddl_apply, hybrid_apply
from georesolver_core.extras.orthogonal_lab import norm_drift, orthogonality_defect, worst_cayley_defect
from georesolver_core.extras.orthogonal_tasks import TaskConfig, compare, summarise
from georesolver_core.theory.orthogonal import (
    cayley_gap_to_minus_one,
    ddl_orthogonality_defect,
    hybrid_orthogonality_defect_bound,
)
from georesolver_core.verdicts import Axes, Claim, Evidence, sweep_evidence, verdict_inequality

PAGE = "orthogonal"
TOL32 = 1e-5  # the float32 tolerance for ||Q^T Q - I||_2 (about 100 unit roundoffs)
ATOL64 = 1e-12  # an equality in float64 (bound 0 at beta in {0, 2}, gamma in {0, 1}) holds up to this
BETAS = [0.0, 1e-3, 1e-1, 1.0, 10.0, 1e2, 1e3, 1e4]
SEED_GATE, SEED_COSINE = 0.05, 0.96  # seed 003's negation figures
TOLERANCE = "measured <= bound (float32 tolerance)"
EXACT = " (equal in exact arithmetic)"


def measure_cayley_orthogonality(quick: bool = False) -> Evidence:
    """Worst ||Q^T Q - I||_2 per beta over random, near-parallel and hill-climbed (adversarial) u, v."""
    trials, climb = (6, 6) if quick else (200, 200)
    m32 = [worst_cayley_defect(b, torch.float32, trials=trials, climb=climb, seed=i) for i, b in enumerate(BETAS)]
    m64 = [
        worst_cayley_defect(b, torch.float64, trials=max(2, trials // 2), climb=0, seed=i)
        for i, b in enumerate(BETAS)
    ]
    tol = [TOL32] * len(BETAS)
    judged = verdict_inequality(m32, tol, relation="le")
    note = (
        f". float32 worst {max(m32):.2g}, float64 worst {max(m64):.2g}, over d in {{2, 3, 16, 64}}, |u|, |v| "
        f"from 1e-4 to 1e4, near-parallel u, v, and {climb} hill-climbing steps per beta that maximise the defect."
    )
    axes = Axes("beta (0 drawn at 1e-4)", "||Q^T Q - I||_2 (worst input)", TOLERANCE, log="xy")
    x = [max(b, 1e-4) for b in BETAS]
    return sweep_evidence(x, m32, tol, judged, axes, note=note, measured_value=max(m32), extra={"float64": m64})


@one_cpu_thread()  # tiny tensors: a second thread only adds synchronisation (8x slower measured)
def measure_spectrum(quick: bool = False) -> Evidence:
    """min |lambda + 1| of Q (numerical eigenvalues, float64) vs the closed form 2/sqrt(1 + t^2); det Q."""
    g = torch.Generator().manual_seed(0)
    u, v = torch.randn(2, 6, generator=g, dtype=torch.float64)
    area = float(cayley_plane(u, v)[2])
    betas = np.logspace(-2, 4, 8 if quick else 30)
    gaps, dets = [], []
    for b in betas:
        q = cayley_matrix(u, v, float(b))  # (6, 6)
        gaps.append(float((torch.linalg.eigvals(q) + 1).abs().min()))
        dets.append(float(torch.linalg.det(q)))
    bound = cayley_gap_to_minus_one(betas, area)
    judged = verdict_inequality(gaps, bound, relation="ge", rtol=1e-6)
    note = (
        f". The gap equals the closed form and shrinks like 2/(beta |u^v|) but stays > 0 for every finite beta "
        f"(Theorem 4.6: no eigenvalue -1); max |det Q - 1| = {max(abs(d - 1) for d in dets):.2g}."
    )
    axes = Axes("beta", "min |lambda + 1| over the spectrum of Q", "measured >= bound" + EXACT, log="xy")
    return sweep_evidence(betas, gaps, bound, judged, axes, note=note, extra={"det Q": dets})


def measure_norm_drift(quick: bool = False) -> Evidence:
    """| |x_L| / |x_0| - 1 | through a random deep stack: Cayley and Householder vs hybrid, DDL, additive."""
    depths = [1, 2, 4, 8, 16, 32] if quick else [1, 2, 4, 8, 16, 32, 64, 128, 256]
    kinds = ["cayley", "householder", "hybrid", "ddl", "additive"]
    drift = norm_drift(kinds, depths, dim=16, seed=0, batch=16 if quick else 256)
    dev = {k: np.abs(np.asarray(v) - 1.0) for k, v in drift.items()}
    measured = np.maximum(dev["cayley"], dev["householder"])
    bound = [TOL32 * 1.0] * len(depths)
    judged = verdict_inequality(measured.tolist(), bound, relation="le")
    note = (
        f" (Cayley and Householder, float32). At depth {depths[-1]}: hybrid ratio {drift['hybrid'][-1]:.3g}, "
        f"DDL {drift['ddl'][-1]:.3g}, additive {drift['additive'][-1]:.3g} (random untrained layers, d = 16)."
    )
    axes = Axes("depth L (layers)", "| |x_L| / |x_0| - 1 |", TOLERANCE, log="xy")
    others = {k: dev[k].tolist() for k in ("hybrid", "ddl", "additive")}
    peak = float(measured.max())
    return sweep_evidence(depths, measured, bound, judged, axes, note=note, measured_value=peak, extra=others)


@one_cpu_thread()
def measure_ddl_defect(quick: bool = False) -> Evidence:
    """||H_beta^T H_beta - I||_2 of the DDL shortcut, measured on a matrix, vs |beta (beta - 2)|."""
    betas = np.linspace(0.0, 3.0, 13 if quick else 61)
    k = torch.randn(8, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    eye = torch.eye(8, dtype=torch.float64)
    measured = [orthogonality_defect(ddl_apply(eye, k, float(b)).T) for b in betas]
    bound = ddl_orthogonality_defect(betas)
    judged = verdict_inequality(measured, bound + ATOL64, relation="le", rtol=1e-9)
    zero = [f"{b:g}" for b, m in zip(betas, measured, strict=True) if m < 1e-12]
    note = f". Orthogonal (defect < 1e-12) only at beta = {', '.join(zero)}."
    axes = Axes("DDL magnitude beta", "||H^T H - I||_2", "measured <= bound" + EXACT)
    return sweep_evidence(betas, measured, bound, judged, axes, note=note, at=len(betas) // 2)


@one_cpu_thread()
def measure_hybrid_defect(quick: bool = False) -> Evidence:
    """Worst ||G^T G - I||_2 of the hybrid over random (u, v, beta, k) per gamma vs 4 gamma (1 - gamma)."""
    gammas = np.linspace(0.0, 1.0, 11 if quick else 41)
    g = torch.Generator().manual_seed(2)
    draws = 16 if quick else 200
    eye = torch.eye(6, dtype=torch.float64)
    params = [
        (*torch.randn(3, 6, generator=g, dtype=torch.float64), float(10 ** (4 * torch.rand(1, generator=g) - 2)))
        for _ in range(draws)
    ]
    measured = [
        max(orthogonality_defect(hybrid_apply(eye, u, v, b, k, float(gm)).T) for u, v, k, b in params)
        for gm in gammas
    ]
    bound = hybrid_orthogonality_defect_bound(gammas)
    judged = verdict_inequality(measured, bound + ATOL64, relation="le", rtol=1e-9)
    mid = len(gammas) // 2
    note = (
        f". The bound is the regulariser 4 gamma (1 - gamma) itself; measured worst at gamma = 1/2: "
        f"{measured[mid]:.3g} over {draws} random draws; zero only at gamma in {{0, 1}}."
    )
    axes = Axes("gate gamma", "||G^T G - I||_2 (worst draw)", "measured <= bound")
    return sweep_evidence(gammas, measured, bound, judged, axes, note=note, at=mid)


@one_cpu_thread()
def measure_midpoint_gradient(quick: bool = False) -> Evidence:
    """|dR/dgamma| at gamma = 1/2 (autograd) for symmetric regularisers R(gamma) = R(1 - gamma)."""
    regs = {
        "4 g (1 - g)": lambda g: 4 * g * (1 - g),
        "binary entropy": lambda g: -(g * g.log() + (1 - g) * (1 - g).log()),
        "sqrt(g (1 - g))": lambda g: (g * (1 - g)).sqrt(),
        "(g (1 - g))^2": lambda g: (g * (1 - g)) ** 2,
        "sin(pi g)": lambda g: torch.sin(torch.pi * g),
    }
    at_mid, nearby = [], []
    for fn in regs.values():
        for point, out in ((0.5, at_mid), (0.45, nearby)):
            g = torch.tensor(point, dtype=torch.float64, requires_grad=True)
            fn(g).backward()
            out.append(abs(float(g.grad)))
    tol = [1e-12] * len(regs)
    judged = verdict_inequality(at_mid, tol, relation="le")
    note = (
        f" over {len(regs)} symmetric regularisers ({', '.join(regs)}); at gamma = 0.45 the gradients are "
        f"{min(nearby):.3g}..{max(nearby):.3g}: a gate starting at 1/2 is moved only by the task loss."
    )
    names = "; ".join(f"{i + 1}: {n}" for i, n in enumerate(regs))
    axes = Axes(f"regulariser ({names})", "|dR/dgamma| at gamma = 1/2", "measured <= bound (zero up to rounding)")
    headline = dict(measured_value=max(at_mid), bound_value=0.0)  # the bound is 0; tol only absorbs rounding
    extra = {"|dR/dgamma| at gamma = 0.45": nearby}
    x = range(1, len(regs) + 1)
    return sweep_evidence(x, at_mid, tol, judged, axes, note=note, extra=extra, **headline)


@functools.lru_cache(maxsize=2)
def negation_runs(quick: bool) -> tuple:
    """The negation task for every kind, 3 seeds (quick: the hybrid only, at the same 300 steps: with fewer the
    gate has not yet collapsed and the quick run would judge a different, unfinished training)."""
    kinds = ("hybrid",) if quick else ("hybrid", "cayley", "householder", "ddl", "additive")
    cfg = TaskConfig(task="negation", steps=300, batch=128)
    with torch.random.fork_rng():
        return tuple(compare(kinds, cfg, seeds=(0, 1, 2))), cfg


def _negation_evidence(quick: bool, metric: str) -> Evidence:
    runs, cfg = negation_runs(quick)
    table = summarise(runs)
    hyb = [r for r in runs if r.kind == "hybrid"]
    seeds = [float(r.seed) for r in hyb]
    vals = [r.final[metric] for r in hyb]
    target = SEED_COSINE if metric == "cosine" else SEED_GATE
    line = (
        f"hybrid over 3 seeds: gate gamma {table['hybrid']['gate mean']:.3g} +- {table['hybrid']['gate std']:.2g}, "
        f"cosine {table['hybrid']['cosine mean']:.4g} +- {table['hybrid']['cosine std']:.2g}; the seed reports "
        f"gamma ~ {SEED_GATE} and cosine {SEED_COSINE}. "
        + ", ".join(f"{k} cosine {row['cosine mean']:.4g}" for k, row in table.items() if k != "hybrid")
        + f" ({cfg.steps} Adam steps, d = {cfg.dim}, ~{cfg.params} parameters each)."
    )
    if metric == "cosine":
        bound, sense = [target] * 3, "ge"
        axes = Axes("seed", "cosine(output, -x) on held-out data", "measured >= seed's figure")
        extra = {f"{k} cosine": [r.final["cosine"] for r in runs if r.kind == k] for k in table if k != "hybrid"}
    else:
        # "collapsed to the reflection" read as gamma <= 2 x the seed's 0.05
        bound, sense, extra = [2 * target] * 3, "le", {}
        axes = Axes("seed", "mean gate gamma (1: Cayley, 0: Householder)", "measured <= 2 x seed's 0.05")
    return sweep_evidence(
        seeds,
        vals,
        bound,
        verdict_inequality(vals, bound, relation=sense),
        axes,
        note=". " + line,
        measured_value=float(np.mean(vals)),
        bound_value=target,
        headline=f"{axes.y_label}, mean over the seeds; the seed's reported figure",
        extra=extra,
    )


CLAIMS = (
    Claim(
        "orth-cayley-orthogonal",
        "Seed 003, Theorem 4.1",
        "The data-dependent Cayley transform is orthogonal for every input and every beta.",
        "||Q^T Q - I||_2 = 0  (float32 tolerance 1e-5)",
        PAGE,
        measure_cayley_orthogonality,
    ),
    Claim(
        "orth-cayley-spectrum",
        "Seed 003, Theorem 4.6",
        "Q lies in SO(n): det Q = +1 and no eigenvalue equals -1 for any finite beta.",
        "min |lambda + 1| = 2 / sqrt(1 + (beta |u ^ v| / 2)^2) > 0",
        PAGE,
        measure_spectrum,
    ),
    Claim(
        "orth-norm-drift",
        "Seed 003, norm preservation",
        "Orthogonal shortcuts keep the norm through any depth; additive and DDL shortcuts drift.",
        "| |x_L| / |x_0| - 1 | = 0 for Cayley and Householder (float32 tolerance 1e-5)",
        PAGE,
        measure_norm_drift,
    ),
    Claim(
        "orth-ddl-defect",
        "Seed 003, section 1 (DDL)",
        "The Deep-Delta-Learning shortcut I - beta k k^T is orthogonal only at beta in {0, 2}.",
        "||H^T H - I||_2 = |beta (beta - 2)|",
        PAGE,
        measure_ddl_defect,
    ),
    Claim(
        "orth-hybrid-defect",
        "Seed 003, section 2.2",
        "The hybrid gamma Q + (1 - gamma) H is orthogonal only at gamma in {0, 1}; the midpoint-collapse "
        "regulariser bounds its defect.",
        "||G^T G - I||_2 <= 4 gamma (1 - gamma)",
        PAGE,
        measure_hybrid_defect,
    ),
    Claim(
        "orth-midpoint-gradient",
        "Seed 003, Theorem 7.3",
        "A regulariser symmetric about gamma = 1/2 has zero gradient at the midpoint.",
        "dR/dgamma (1/2) = 0",
        PAGE,
        measure_midpoint_gradient,
    ),
    Claim(
        "orth-negation-cosine",
        "Seed 003, section 4 (negation)",
        "On y = -x the hybrid reaches cosine 0.96 with the target.",
        "cosine(G x, -x) >= 0.96",
        PAGE,
        lambda quick=False: _negation_evidence(quick, "cosine"),
    ),
    Claim(
        "orth-negation-gate",
        "Seed 003, section 4 (negation)",
        "On y = -x the hybrid's gate collapses to the reflection branch (gamma ~ 0.05).",
        "gamma <= 0.1 (twice the seed's 0.05)",
        PAGE,
        lambda quick=False: _negation_evidence(quick, "gate"),
    ),
)
