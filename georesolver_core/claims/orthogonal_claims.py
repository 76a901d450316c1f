"""Claims of orthogonal residual mixing (seed 003): exact orthogonality, spectrum, defects, negation."""

from __future__ import annotations

import functools

import numpy as np
import torch

from georesolver_core.claims.registry import Claim, Evidence, verdict_inequality
from georesolver_core.device import one_cpu_thread
from georesolver_core.extras.orthogonal import cayley_matrix, cayley_plane, ddl_apply, hybrid_apply
from georesolver_core.extras.orthogonal_lab import norm_drift, orthogonality_defect, worst_cayley_defect
from georesolver_core.extras.orthogonal_tasks import TaskConfig, compare, summarise
from georesolver_core.theory.orthogonal import (
    cayley_gap_to_minus_one,
    ddl_orthogonality_defect,
    hybrid_orthogonality_defect_bound,
)

TOL32 = 1e-5  # the float32 tolerance for ||Q^T Q - I||_2 (about 100 unit roundoffs)
ATOL64 = 1e-12  # an equality in float64 (bound 0 at beta in {0, 2}, gamma in {0, 1}) holds up to this
BETAS = [0.0, 1e-3, 1e-1, 1.0, 10.0, 1e2, 1e3, 1e4]
SEED_GATE, SEED_COSINE = 0.05, 0.96  # seed 003's negation figures


def measure_cayley_orthogonality(quick: bool = False) -> Evidence:
    """Worst ||Q^T Q - I||_2 per beta over random, near-parallel and hill-climbed (adversarial) u, v."""
    trials, climb = (6, 6) if quick else (200, 200)
    m32 = [worst_cayley_defect(b, torch.float32, trials=trials, climb=climb, seed=i) for i, b in enumerate(BETAS)]
    m64 = [
        worst_cayley_defect(b, torch.float64, trials=max(2, trials // 2), climb=0, seed=i)
        for i, b in enumerate(BETAS)
    ]
    verdict, summary = verdict_inequality(m32, [TOL32] * len(BETAS), relation="le")
    summary += (
        f". float32 worst {max(m32):.2g}, float64 worst {max(m64):.2g}, over d in {{2, 3, 16, 64}}, |u|, |v| "
        f"from 1e-4 to 1e4, near-parallel u, v, and {climb} hill-climbing steps per beta that maximise the defect."
    )
    return Evidence(
        x=[max(b, 1e-4) for b in BETAS],
        x_label="beta (0 drawn at 1e-4)",
        measured=m32,
        bound=[TOL32] * len(BETAS),
        y_label="||Q^T Q - I||_2 (worst input)",
        relation="measured <= bound (float32 tolerance)",
        verdict=verdict,
        summary=summary,
        measured_value=max(m32),
        bound_value=TOL32,
        log_x=True,
        log_y=True,
        extra={"float64": m64},
    )


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
    verdict, summary = verdict_inequality(gaps, bound, relation="ge", rtol=1e-6)
    summary += (
        f". The gap equals the closed form and shrinks like 2/(beta |u^v|) but stays > 0 for every finite beta "
        f"(Theorem 4.6: no eigenvalue -1); max |det Q - 1| = {max(abs(d - 1) for d in dets):.2g}."
    )
    return Evidence(
        x=betas.tolist(),
        x_label="beta",
        measured=gaps,
        bound=bound.tolist(),
        y_label="min |lambda + 1| over the spectrum of Q",
        relation="measured >= bound (equal in exact arithmetic)",
        verdict=verdict,
        summary=summary,
        measured_value=gaps[-1],
        bound_value=float(bound[-1]),
        log_x=True,
        log_y=True,
        extra={"det Q": dets},
    )


def measure_norm_drift(quick: bool = False) -> Evidence:
    """| |x_L| / |x_0| - 1 | through a random deep stack: Cayley and Householder vs hybrid, DDL, additive."""
    depths = [1, 2, 4, 8, 16, 32] if quick else [1, 2, 4, 8, 16, 32, 64, 128, 256]
    kinds = ["cayley", "householder", "hybrid", "ddl", "additive"]
    drift = norm_drift(kinds, depths, dim=16, seed=0, batch=16 if quick else 256)
    dev = {k: np.abs(np.asarray(v) - 1.0) for k, v in drift.items()}
    measured = np.maximum(dev["cayley"], dev["householder"])
    bound = [TOL32 * 1.0] * len(depths)
    verdict, summary = verdict_inequality(measured.tolist(), bound, relation="le")
    summary += (
        f" (Cayley and Householder, float32). At depth {depths[-1]}: hybrid ratio {drift['hybrid'][-1]:.3g}, "
        f"DDL {drift['ddl'][-1]:.3g}, additive {drift['additive'][-1]:.3g} (random untrained layers, d = 16)."
    )
    return Evidence(
        x=[float(d) for d in depths],
        x_label="depth L (layers)",
        measured=measured.tolist(),
        bound=bound,
        y_label="| |x_L| / |x_0| - 1 |",
        relation="measured <= bound (float32 tolerance)",
        verdict=verdict,
        summary=summary,
        measured_value=float(measured.max()),
        bound_value=TOL32,
        log_x=True,
        log_y=True,
        extra={k: dev[k].tolist() for k in ("hybrid", "ddl", "additive")},
    )


@one_cpu_thread()
def measure_ddl_defect(quick: bool = False) -> Evidence:
    """||H_beta^T H_beta - I||_2 of the DDL shortcut, measured on a matrix, vs |beta (beta - 2)|."""
    betas = np.linspace(0.0, 3.0, 13 if quick else 61)
    k = torch.randn(8, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    eye = torch.eye(8, dtype=torch.float64)
    measured = [orthogonality_defect(ddl_apply(eye, k, float(b)).T) for b in betas]
    bound = ddl_orthogonality_defect(betas)
    verdict, summary = verdict_inequality(measured, bound + ATOL64, relation="le", rtol=1e-9)
    zero = [f"{b:g}" for b, m in zip(betas, measured, strict=True) if m < 1e-12]
    summary += f". Orthogonal (defect < 1e-12) only at beta = {', '.join(zero)}."
    return Evidence(
        x=betas.tolist(),
        x_label="DDL magnitude beta",
        measured=measured,
        bound=bound.tolist(),
        y_label="||H^T H - I||_2",
        relation="measured <= bound (equal in exact arithmetic)",
        verdict=verdict,
        summary=summary,
        measured_value=float(measured[len(betas) // 2]),
        bound_value=float(bound[len(betas) // 2]),
    )


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
    verdict, summary = verdict_inequality(measured, bound + ATOL64, relation="le", rtol=1e-9)
    summary += (
        f". The bound is the regulariser 4 gamma (1 - gamma) itself; measured worst at gamma = 1/2: "
        f"{measured[len(gammas) // 2]:.3g} over {draws} random draws; zero only at gamma in {{0, 1}}."
    )
    return Evidence(
        x=gammas.tolist(),
        x_label="gate gamma",
        measured=measured,
        bound=bound.tolist(),
        y_label="||G^T G - I||_2 (worst draw)",
        relation="measured <= bound",
        verdict=verdict,
        summary=summary,
        measured_value=float(measured[len(gammas) // 2]),
        bound_value=float(bound[len(gammas) // 2]),
    )


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
    verdict, summary = verdict_inequality(at_mid, tol, relation="le")
    summary += (
        f" over {len(regs)} symmetric regularisers ({', '.join(regs)}); at gamma = 0.45 the gradients are "
        f"{min(nearby):.3g}..{max(nearby):.3g}: a gate starting at 1/2 is moved only by the task loss."
    )
    return Evidence(
        x=list(range(1, len(regs) + 1)),
        x_label="regulariser (" + "; ".join(f"{i + 1}: {n}" for i, n in enumerate(regs)) + ")",
        measured=at_mid,
        bound=tol,
        y_label="|dR/dgamma| at gamma = 1/2",
        relation="measured <= bound (zero up to rounding)",
        verdict=verdict,
        summary=summary,
        measured_value=max(at_mid),
        bound_value=0.0,
        extra={"|dR/dgamma| at gamma = 0.45": nearby},
    )


@functools.lru_cache(maxsize=2)
def negation_runs(quick: bool) -> tuple:
    """The negation task for every kind, 3 seeds (quick: the hybrid only, 100 steps instead of 300)."""
    kinds = ("hybrid",) if quick else ("hybrid", "cayley", "householder", "ddl", "additive")
    cfg = TaskConfig(task="negation", steps=100 if quick else 300, batch=64 if quick else 128)
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
        verdict, summary = verdict_inequality(vals, [target] * 3, relation="ge")
        y_label, relation = "cosine(output, -x) on held-out data", "measured >= seed's figure"
    else:
        # "collapsed to the reflection" read as gamma <= 2 x the seed's 0.05
        verdict, summary = verdict_inequality(vals, [2 * target] * 3, relation="le")
        y_label, relation = "mean gate gamma (1: Cayley, 0: Householder)", "measured <= 2 x seed's 0.05"
    extra = {f"{k} cosine": [r.final["cosine"] for r in runs if r.kind == k] for k in table if k != "hybrid"}
    return Evidence(
        x=seeds,
        x_label="seed",
        measured=vals,
        bound=[target if metric == "cosine" else 2 * target] * 3,
        y_label=y_label,
        relation=relation,
        verdict=verdict,
        summary=summary + ". " + line,
        measured_value=float(np.mean(vals)),
        bound_value=target,
        extra=extra if metric == "cosine" else {},
    )


CLAIMS = (
    Claim(
        key="orth-cayley-orthogonal",
        section="Seed 003, Theorem 4.1",
        statement="The data-dependent Cayley transform is orthogonal for every input and every beta.",
        bound_text="||Q^T Q - I||_2 = 0  (float32 tolerance 1e-5)",
        page="orthogonal",
        measure=measure_cayley_orthogonality,
    ),
    Claim(
        key="orth-cayley-spectrum",
        section="Seed 003, Theorem 4.6",
        statement="Q lies in SO(n): det Q = +1 and no eigenvalue equals -1 for any finite beta.",
        bound_text="min |lambda + 1| = 2 / sqrt(1 + (beta |u ^ v| / 2)^2) > 0",
        page="orthogonal",
        measure=measure_spectrum,
    ),
    Claim(
        key="orth-norm-drift",
        section="Seed 003, norm preservation",
        statement="Orthogonal shortcuts keep the norm through any depth; additive and DDL shortcuts drift.",
        bound_text="| |x_L| / |x_0| - 1 | = 0 for Cayley and Householder (float32 tolerance 1e-5)",
        page="orthogonal",
        measure=measure_norm_drift,
    ),
    Claim(
        key="orth-ddl-defect",
        section="Seed 003, section 1 (DDL)",
        statement="The Deep-Delta-Learning shortcut I - beta k k^T is orthogonal only at beta in {0, 2}.",
        bound_text="||H^T H - I||_2 = |beta (beta - 2)|",
        page="orthogonal",
        measure=measure_ddl_defect,
    ),
    Claim(
        key="orth-hybrid-defect",
        section="Seed 003, section 2.2",
        statement="The hybrid gamma Q + (1 - gamma) H is orthogonal only at gamma in {0, 1}; the midpoint-collapse "
        "regulariser bounds its defect.",
        bound_text="||G^T G - I||_2 <= 4 gamma (1 - gamma)",
        page="orthogonal",
        measure=measure_hybrid_defect,
    ),
    Claim(
        key="orth-midpoint-gradient",
        section="Seed 003, Theorem 7.3",
        statement="A regulariser symmetric about gamma = 1/2 has zero gradient at the midpoint.",
        bound_text="dR/dgamma (1/2) = 0",
        page="orthogonal",
        measure=measure_midpoint_gradient,
    ),
    Claim(
        key="orth-negation-cosine",
        section="Seed 003, section 4 (negation)",
        statement="On y = -x the hybrid reaches cosine 0.96 with the target.",
        bound_text="cosine(G x, -x) >= 0.96",
        page="orthogonal",
        measure=lambda quick=False: _negation_evidence(quick, "cosine"),
    ),
    Claim(
        key="orth-negation-gate",
        section="Seed 003, section 4 (negation)",
        statement="On y = -x the hybrid's gate collapses to the reflection branch (gamma ~ 0.05).",
        bound_text="gamma <= 0.1 (twice the seed's 0.05)",
        page="orthogonal",
        measure=lambda quick=False: _negation_evidence(quick, "gate"),
    ),
)
