"""Statements of the seeds that a statement-by-statement audit found without a claim (see ``claims.inventory``).

- Theorems 5.3 and 8.1, softmax halves: mu_soft in the ball and on the sphere (the IDA halves are
  ``thm5.3-pl-hyperbolic`` and ``thm8.1-pl-sphere``, which only report softmax);
- Theorem 6.1, the proof's radius step |r - r_hat| <= 2^-b_r and its key step ||r u - r_hat u_hat|| <=
  2 * 2^-b + 2^-b_r, worst over the compression claims' grid of dimensions, bit widths and worst-case keys;
- Theorem 10.1, the proof's identity ||o* - o|| = ||sum_{e>K} w_e v_e|| for the worst query and values;
- section 1.4, the kernel's heavy tail 1/r^2 against the Gaussian RBF's e^(-r^2);
- section 2.4, softmax's weight Jacobian dW_ij/dq_i = (1/d_h) W_ij (k_j - sum_m W_im k_m);
- section 2.8, softmax's inner products concentrating around zero in high dimensions, under each logit scale;
- seed 004's reported observed ranks 2, 3, 3 for eps = 1e-2, 1e-3, 1e-4, independent of h.
"""

from __future__ import annotations

import numpy as np
import torch

from georesolver_core.attention.kernel import softmax_weights
from georesolver_core.attention.reference import inverse_sq
from georesolver_core.claims.compression_claims import HEADLINE_BITS, error_grid, radius_bits
from georesolver_core.claims.hankel_claims import EPS_LIST, SEED_RANKS
from georesolver_core.claims.landscape.evidence import BASIN, TAU, fitted, shape_verdict
from georesolver_core.claims.statements_ida import claim
from georesolver_core.extras.hankel_measure import decay_sweep, rank_sweep
from georesolver_core.landscape.two_key import mu_sweep
from georesolver_core.routing.gsr import gsr_route, sida_routing_weights
from georesolver_core.routing.quality import fibonacci_sphere, random_sphere, worst_values
from georesolver_core.theory import landscape as th_land
from georesolver_core.theory.compression import hcc_direction_step, hcc_radius_step
from georesolver_core.verdicts import (
    FAILS,
    HOLDS,
    Axes,
    Evidence,
    sweep_evidence,
    verdict_inequality,
    verdict_readings,
    verdict_scaling,
    weakest,
)

F64 = torch.float64
ROUNDING = 1e-9  # an identity is judged to float64 rounding: relative gaps above 1e-9 are not rounding
LE = "measured <= bound"


# --- Theorems 5.3 and 8.1, softmax halves ------------------------------------------------------------


def _softmax_pl(geometry: str, seps: np.ndarray, shape: np.ndarray, quick: bool, sep: str) -> Evidence:
    """mu_soft against the separation (the paper's shape, Theta judged by the fitted power against it) and
    against eps (the stated eps^2 factor); one part each, the claim the weaker. Set-up of claims.landscape.pl."""
    n_basin = 501 if quick else 1001
    eps = 1e-3
    soft = mu_sweep("softmax", geometry, tau=TAU, basin=BASIN, n_basin=n_basin, vary="delta", values=seps, eps=eps)
    s_verdict, s_summary, _ = shape_verdict(soft, shape, kind="theta", what=f"mu_soft against {sep}")
    eps_values = np.logspace(-5, -2, 4)
    soft_eps = mu_sweep(
        "softmax", geometry, tau=TAU, basin=BASIN, n_basin=n_basin, vary="eps", values=eps_values, delta=1.0
    )
    e_verdict, e_summary, e_slope = verdict_scaling(eps_values, soft_eps, exponent=2.0, what="mu_soft against eps")
    parts = [
        {"part": f"dependence on {sep} (the printed shape, Theta)", "verdict": s_verdict, "summary": s_summary},
        {"part": "dependence on eps (exponent 2)", "verdict": e_verdict, "summary": f"{e_summary} ({sep} = 1)"},
    ]
    summary = (
        f"{e_summary} ({sep} = 1): softmax's logits carry no eps, so its PL constant cannot scale as eps^2. "
        f"{s_summary}. Set-up: two keys {sep} apart on a geodesic, query on it, L = (1 - W_1)^2, mu = min of "
        f"|grad L|^2 / (2 (L - L*)) over |s| <= {sep}/4, logits -d^2/(2 tau), tau = sqrt(d_h) = {TAU:g}, float64."
    )
    axes = Axes(
        f"key separation {sep} (eps = {eps:g}, tau = {TAU:g})",
        "softmax PL constant mu_soft",
        "mu_soft = Theta(paper's shape): fitted power against the shape vs 1 (plotted), exponent in eps vs 2",
        log="y",
    )
    return sweep_evidence(
        seps,
        soft,
        fitted(soft, shape),
        (weakest([s_verdict, e_verdict]), summary),
        axes,
        measured_value=round(e_slope, 6) + 0.0,  # a slope of 1e-16 is 0; + 0.0 turns -0.0 into 0.0
        bound_value=2.0,
        headline="log-log exponent of mu_soft in eps (fitted; predicted)",
        parts=parts,  # the fitted power against the shape is in the first part's summary
    )


def measure_softmax_pl_ball(quick: bool = False) -> Evidence:
    deltas = np.linspace(1.0, 4.0, 5 if quick else 8)
    return _softmax_pl("poincare", deltas, th_land.pl_softmax_theta(1e-3, deltas, TAU), quick, "Delta_H")


def measure_softmax_pl_sphere(quick: bool = False) -> Evidence:
    thetas = np.geomspace(0.2, 3.0, 5 if quick else 8)
    return _softmax_pl("sphere", thetas, th_land.pl_softmax_sphere_theta(1e-3, thetas), quick, "theta")


# --- Theorem 6.1, the proof's radius and key steps -------------------------------------------------------


def measure_radius_step(quick: bool = False) -> Evidence:
    """Worst |r - r_hat| over dimensions and key kinds, per radius width b_r, against 2^-b_r."""
    g = error_grid(quick, direction="all")
    b_r = np.array([radius_bits(b) for b in g["bits"]])
    worst = g["radius"].max(axis=(0, 1))  # (bits,): worst over key kinds and dimensions
    bound = hcc_radius_step(b_r)
    judged = verdict_inequality(worst, bound, relation="le")
    note = (
        f". Worst over d = {g['dims'][0]}..{g['dims'][-1]} and the compression claims' key kinds (random, "
        f"analytic and, at full settings, hill-climbed keys). Rounding to the nearest of 2^b_r levels gives "
        f"2^-(b_r+1); the largest ratio to the bound is {float(np.max(worst / bound)):.3g}."
    )
    axes = Axes("radius bits b_r", "worst |r - r_hat|", LE, log="y")
    return sweep_evidence(b_r, worst, bound, judged, axes, note=note, sense="le")


def measure_key_step(quick: bool = False) -> Evidence:
    """Worst ||k - k_hat|| = ||r u - r_hat u_hat|| over the grid against 2 * 2^-b + 2^-b_r."""
    g = error_grid(quick, direction="all")
    dims, bits = g["dims"], g["bits"]
    step = np.sqrt(g["worst"].max(axis=0))  # (dims, bits): worst over key kinds
    bound = hcc_direction_step(np.array(bits)) + hcc_radius_step(np.array([radius_bits(b) for b in bits]))
    full_bound = np.broadcast_to(bound, step.shape)
    verdict, _ = verdict_inequality(step.ravel(), full_bound.ravel(), relation="le")
    bad = step > full_bound * (1 + 1e-9)
    first = [next((d for d, x in zip(dims, bad[:, j], strict=True) if x), None) for j in range(len(bits))]
    summary = (
        f"||r u - r_hat u_hat|| exceeds 2 * 2^-b + 2^-b_r at {int(bad.sum())}/{bad.size} (d, b) points; first "
        "failing d per b: " + ", ".join(f"b={b}: {f}" for b, f in zip(bits, first, strict=True)) + ". The "
        "direction step it adds up grows as sqrt(d - 1)/(2^b - 1) (per-coordinate rounding), so the sum does too."
    )
    jh = bits.index(HEADLINE_BITS)
    axes = Axes("key dimension d_h", f"worst ||k - k_hat|| at b = {HEADLINE_BITS}", LE, log="xy")
    worst, at_b = step[:, jh], [bound[jh]] * len(dims)  # (dims,) each, at the headline bits
    return sweep_evidence(dims, worst, at_b, (verdict, summary), axes, measured_value=float(worst.max()))


# --- Theorem 10.1, the proof's tail identity ---------------------------------------------------------------


def measure_tail_identity(quick: bool = False, *, n_pool: int = 32, eps: float = 0.05) -> Evidence:
    """||o* - o|| beside ||sum_{e>K} w_e v_e|| at the query with the largest tail and its worst values, with o
    GSR's output (renormalised over the Top-K, ``gsr_route``) and with o the unrenormalised Top-K terms."""
    protos = fibonacci_sphere(n_pool)  # (m, 3)
    q = random_sphere(50 if quick else 400, 3, seed=0)  # (n, 3)
    ks = [1, 2, 4, 8, 16] if quick else [1, 2, 3, 4, 6, 8, 12, 16, 24]
    w_all = sida_routing_weights(q, protos, eps=eps)  # (n, m)
    lhs, rhs, trunc = [], [], []
    for k in ks:
        idx, wk = gsr_route(q, protos, k=k, eps=eps)  # (n, K) each
        j = int((1.0 - w_all.gather(-1, idx).sum(-1)).argmax())  # the query with the largest tail mass
        v = worst_values(q[j], protos, k=k, eps=eps)  # (m, 1)
        w = w_all[j]  # (m,)
        top = torch.zeros_like(w, dtype=torch.bool)
        top[idx[j]] = True
        o_star = w @ v  # (1,)
        o_gsr = (wk[j, :, None] * v[idx[j]]).sum(0)  # (1,)
        lhs.append(float((o_star - o_gsr).norm()))
        rhs.append(float((w.masked_fill(top, 0.0) @ v).norm()))
        trunc.append(float((o_star - w.masked_fill(~top, 0.0) @ v).norm()))
    lhs_a, rhs_a, trunc_a = np.array(lhs), np.array(rhs), np.array(trunc)
    gap_gsr = float(np.max(np.abs(lhs_a - rhs_a) / rhs_a))
    gap_trunc = float(np.max(np.abs(trunc_a - rhs_a) / rhs_a))
    readings = {
        "o = GSR's output, renormalised over the Top-K (section 10.1)": (
            HOLDS if gap_gsr <= ROUNDING else FAILS,
            f"||o* - o|| / ||sum_(e>K) w_e v_e|| reaches {float(np.max(lhs_a / rhs_a)):.4g} "
            f"(relative gap {gap_gsr:.3g})",
        ),
        "o = the Top-K terms of o*, not renormalised": (
            HOLDS if gap_trunc <= ROUNDING else FAILS,
            f"equal to rounding (relative gap {gap_trunc:.1e})",
        ),
    }
    verdict, summary = verdict_readings(readings)
    note = (
        f". Worst query (largest tail mass) of {q.shape[0]} on S^2, K_pool = {n_pool} Fibonacci prototypes, "
        f"eps = {eps:g}, values +1 on the Top-K and -1 elsewhere (the quality claims' worst values). "
        "Renormalising moves the Top-K part too: o* - o = sum_(e>K) w_e v_e - (T/(1-T)) sum_(e<=K) w_e v_e, "
        "T the tail mass."
    )
    axes = Axes("Top-K size K", "||o* - o|| (GSR's renormalised output)", "measured = bound", log="y")
    return sweep_evidence(
        ks, lhs_a, rhs_a, (verdict, summary), axes, note=note, at=0, extra={"unrenormalised o": trunc}
    )


# --- Section 1.4: the heavy tail ---------------------------------------------------------------------------


def measure_heavy_tail(quick: bool = False, *, eps: float = 1e-3) -> Evidence:
    """The kernel (r^2 + eps)^-1 against r: fitted log-log exponent vs -2; the RBF's local exponent -2 r^2."""
    r = np.geomspace(1.0, 1e3 if quick else 1e5, 7 if quick else 21)
    kern = inverse_sq(torch.tensor(r, dtype=F64) ** 2, eps).numpy()
    verdict, summary, slope = verdict_scaling(r, kern, exponent=-2.0, what="(r^2 + eps)^-1")
    r_rbf = np.linspace(1.0, 5.0, 5 if quick else 9)
    rbf = np.exp(-(r_rbf**2))
    local = np.diff(np.log(rbf)) / np.diff(np.log(r_rbf))  # local log-log slope between neighbours
    steeper = bool(np.all(np.diff(local) < 0) and local[-1] < -2.0)
    parts = [
        {"part": "IDA kernel decays as 1/r^2", "verdict": verdict, "summary": summary},
        {
            "part": "the Gaussian RBF decays as e^(-r^2), faster than any power",
            "verdict": HOLDS if steeper else FAILS,
            "summary": f"its local log-log slope falls from {local[0]:.3g} to {local[-1]:.3g} over r = 1..5",
        },
    ]
    note = f" (eps = {eps:g}, r = {r[0]:g}..{r[-1]:g}). RBF local slopes: {np.round(local, 2).tolist()}."
    axes = Axes("distance r", "kernel value", "(r^2 + eps)^-1 = Theta(r^-2): fitted exponent vs -2", log="xy")
    return sweep_evidence(
        r,
        kern,
        1.0 / r**2,
        (verdict, summary),
        axes,
        note=note,
        measured_value=slope,
        bound_value=-2.0,
        headline="log-log exponent of the kernel in r (fitted; predicted)",
        parts=parts,
    )


# --- Section 2.4: softmax's weight Jacobian ---------------------------------------------------------------


def _term_size(w: torch.Tensor, k: torch.Tensor, d: int) -> float:
    """The size of the formula's terms, ||(W_ij / d_h) (|k_j| + |sum_m W_im k_m|)||: the scale rounding is
    relative to. Near one-hot weights k_j - sum_m W_im k_m cancels, so the Jacobian itself is no yardstick."""
    return float((w * (k.norm(dim=-1) + (w @ k).norm()) / d).norm())


def measure_softmax_jacobian(quick: bool = False, *, n: int = 16) -> Evidence:
    """Max gap between autograd's dW_i/dq_i and (1/d_h) W_ij (k_j - sum_m W_im k_m), logits q.k/d_h (sections
    2.3, 2.6), relative to the size of the formula's terms, over random inputs of growing scale (logits up to
    ~30 in size: near one-hot weights)."""
    dims = [2, 8, 32, 128] if quick else [2, 4, 8, 16, 32, 64, 128, 256]
    scales = np.geomspace(0.1, 6.0, 4 if quick else 12)
    g = torch.Generator().manual_seed(0)
    worst, off = [], []
    for d in dims:
        gaps, gaps_sqrt = [], []
        for s in scales:
            q = s * torch.randn(d, generator=g, dtype=F64)  # (d,)
            k = s * torch.randn(n, d, generator=g, dtype=F64)  # (n, d)
            jac = torch.autograd.functional.jacobian(
                lambda x, k=k, d=d: softmax_weights(x[None], k, scale=1.0 / d)[0], q
            )  # (n, d)
            w = softmax_weights(q[None], k, scale=1.0 / d)[0]  # (n,)
            formula = w[:, None] * (k - w @ k) / d  # (n, d)
            gaps.append(float((jac - formula).norm() / _term_size(w, k, d)))
            w_sqrt = softmax_weights(q[None], k)[0]  # the library's default scale 1/sqrt(d)
            jac_sqrt = torch.autograd.functional.jacobian(lambda x, k=k: softmax_weights(x[None], k)[0], q)
            f_sqrt = w_sqrt[:, None] * (k - w_sqrt @ k) / d
            gaps_sqrt.append(float((jac_sqrt - f_sqrt).norm() / _term_size(w_sqrt, k, d)))
        worst.append(max(gaps))
        off.append(max(gaps_sqrt))
    judged = verdict_inequality(worst, [ROUNDING] * len(dims), relation="le")
    note = (
        f". Identity judged to float64 rounding ({ROUNDING:g} relative to the terms' size), n = {n} keys, input scales "
        f"{scales[0]:g}..{scales[-1]:g}. With logits q.k/sqrt(d_h) (the library's default; seed 001's scale) "
        f"the printed 1/d_h factor is off by sqrt(d_h): relative gap up to {max(off):.3g}; the formula then "
        "holds with 1/sqrt(d_h), as seed 001 prints it."
    )
    axes = Axes("head width d_h", "max relative gap, autograd vs formula", LE, log="xy")
    extra = {"with logits q.k/sqrt(d_h)": off}
    return sweep_evidence(dims, worst, [ROUNDING] * len(dims), judged, axes, note=note, extra=extra, sense="le")


# --- Section 2.8: softmax's inner products in high dimensions -------------------------------------------


def measure_softmax_concentration(quick: bool = False, *, n: int = 64) -> Evidence:
    """Spread (standard deviation) of q.k over pairs of N(0, I_d) vectors against d, under each scale the seeds
    use for softmax's logits; "concentrate around zero" read as: the spread shrinks as d grows (fitted power in d
    below 0 by more than the project's exponent tolerance, 0.25); the mean, zero by symmetry, is reported."""
    dims = np.array([4, 16, 64, 256, 1024] if quick else [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096])
    g = torch.Generator().manual_seed(0)
    scales = {
        "raw q.k": lambda d: 1.0,
        "q.k / sqrt(d_h) (seed 001; the library's softmax default)": lambda d: d**-0.5,
        "q.k / d_h (seed 000, sections 2.3 and 2.6)": lambda d: 1.0 / d,
    }
    spread = {name: [] for name in (*scales, "cosine")}
    mean_ratio = []
    for d in dims:
        q = torch.randn(n, int(d), generator=g, dtype=F64)  # (n, d)
        k = torch.randn(n, int(d), generator=g, dtype=F64)  # (n, d)
        dots = (q @ k.T).flatten()  # (n * n,)
        for name, scale in scales.items():
            spread[name].append(float(dots.std()) * scale(int(d)))
        cos = dots / (q.norm(dim=-1)[:, None] * k.norm(dim=-1)[None, :]).flatten()
        spread["cosine"].append(float(cos.std()))
        mean_ratio.append(float(dots.mean().abs() / dots.std()))
    readings, powers = {}, {}
    for name, values in spread.items():
        p = float(np.polyfit(np.log(dims), np.log(values), 1)[0])
        powers[name] = p
        readings[name] = (
            HOLDS if p < -0.25 else FAILS,
            f"spread grows as d^{p:.2f}" + (" (shrinks)" if p < -0.25 else " (does not shrink)"),
        )
    verdict, summary = verdict_readings(readings)
    note = (
        f". {n} x {n} pairs of N(0, I_d) vectors per d = {dims[0]}..{dims[-1]}; |mean| / spread of q.k is at most "
        f"{max(mean_ratio):.3g} (the mean is zero)."
    )
    axes = Axes(
        "head width d_h",
        "spread of q.k / d_h over pairs",
        "spread falls below its value at the smallest d_h",
        log="xy",
    )
    name_1d = "q.k / d_h (seed 000, sections 2.3 and 2.6)"
    extra = {k: v for k, v in spread.items() if k != name_1d}
    return sweep_evidence(
        dims,
        spread[name_1d],
        [spread[name_1d][0]] * len(dims),  # no concentration: the spread of the smallest d, held
        (verdict, summary),
        axes,
        note=note,
        measured_value=powers[name_1d],
        bound_value=-0.25,
        headline="fitted power of the spread of q.k / d_h in d_h (concentrates: below -0.25)",
        extra=extra,
    )


# --- Seed 004, the reported observed ranks ---------------------------------------------------------------


def measure_observed_ranks(quick: bool = False) -> Evidence:
    """Rank needed per eps at each block scale h = 4..64 (the seed's range) against the reported 2, 3, 3."""
    hs = [4, 8, 16, 32, 64]
    ranks = rank_sweep(EPS_LIST, decay_sweep(hs, top=10))
    worst = [max(row) for row in ranks.observed]
    least = [min(row) for row in ranks.observed]
    same = all(lo == hi == s for lo, hi, s in zip(least, worst, SEED_RANKS, strict=True))
    per_h = "; ".join(f"eps={e:g}: {row}" for e, row in zip(EPS_LIST, ranks.observed, strict=True))
    summary = (
        f"observed ranks (every h = {hs[0]}..{hs[-1]}) {worst if worst == least else (least, worst)} vs the "
        f"seed's {list(SEED_RANKS)}; the rule ceil(log4(1/eps)) gives {ranks.rule} (the seed's 'conservative "
        f"bounds 4, 5, 7'). Per h: {per_h}."
    )
    below = [
        f"eps={e:g} at h={h:g}: {r} vs {s}"
        for e, row, s in zip(EPS_LIST, ranks.observed, SEED_RANKS, strict=True)
        for h, r in zip(hs, row, strict=True)
        if r != s
    ]
    if below:
        summary += (
            f" Different from the reported rank (the rank then changes with h): {'; '.join(below)}. Every rank "
            "stays within the rule (hankel-rank-rule)."
        )
    rule_ok = ranks.rule == [4, 5, 7]
    extra = {"rule ceil(log4(1/eps))": [float(v) for v in ranks.rule], "least over h": [float(v) for v in least]}
    if not quick:  # beyond the seed's range: does the rank stay put for larger blocks?
        far = rank_sweep(EPS_LIST, decay_sweep([128, 256, 512, 1024], top=10))
        extra["worst over h = 128..1024"] = [float(max(row)) for row in far.observed]
        summary += f" Beyond the seed's range (h = 128..1024): {[max(row) for row in far.observed]}."
    axes = Axes("relative error eps per block", "observed rank N", "measured = seed's reported rank", log="x")
    verdict = HOLDS if same and rule_ok else FAILS
    return sweep_evidence(EPS_LIST, worst, list(SEED_RANKS), (verdict, summary), axes, at=1, extra=extra)


CLAIMS = (
    claim(
        "thm5.3-pl-softmax-hyperbolic",
        "Theorem 5.3 (section 5.3), softmax half",
        "mu_HIDA = Theta(eps^2 / Delta_H^4), mu_soft = Theta(e^(-Delta_H^2 / d_h) eps^2 / Delta_H^2).",
        "mu_soft = Theta(exp(-Delta_H^2 / d_h) eps^2 / Delta_H^2), d_h = tau^2 = 1",
        measure_softmax_pl_ball,
        page="landscapes",
    ),
    claim(
        "thm8.1-pl-softmax-sphere",
        "Theorem 8.1 (section 8.1), softmax half",
        "mu_SIDA = Theta(eps^2 / theta^4), mu_soft = Theta(e^(-(1 - cos theta)) eps^2 / theta^2).",
        "mu_soft = Theta(exp(-(1 - cos theta)) eps^2 / theta^2)",
        measure_softmax_pl_sphere,
        page="landscapes",
    ),
    claim(
        "thm6.1-radius-step",
        "Theorem 6.1, proof step (section 6)",
        "|r - r_hat| <= 2^-b_r,",
        "|r - r_hat| <= 2^-b_r",
        measure_radius_step,
        page="compression",
    ),
    claim(
        "thm6.1-key-step",
        "Theorem 6.1, proof step (section 6)",
        "||r u - r_hat u_hat||_2 <= r ||u - u_hat||_2 + |r - r_hat| ||u||_2 <= 2 * 2^-b + 2^-b_r.",
        "||r u - r_hat u_hat|| <= 2 * 2^-b + 2^-b_r",
        measure_key_step,
        page="compression",
    ),
    claim(
        "thm10.1-tail-identity",
        "Theorem 10.1, proof (section 10.2)",
        "||o* - o||_2 = ||sum_(e>K) w_e v_e||_2.",
        "||o* - o|| = ||sum_{e>K} w_e v_e||",
        measure_tail_identity,
        page="routing",
    ),
    claim(
        "sec1.4-heavy-tail",
        "Section 1.4 (related work, RBF and kernel attention)",
        "The inverse-distance kernel we consider differs from the Gaussian RBF in that it has a heavy tail "
        "(decaying as 1/r^2 rather than e^(-r^2)), which affects the Lipschitz and generalization properties.",
        "(r^2 + eps)^-1 = Theta(r^-2); e^(-r^2) faster than any power",
        measure_heavy_tail,
        page="attention",
    ),
    claim(
        "lemma1-softmax-jacobian",
        "Lemma 1, proof (section 2.4), softmax side",
        "dW_ij/dq_i = (1/d_h) W_ij (k_j - sum_m W_im k_m).",
        "autograd Jacobian = (1/d_h) W_ij (k_j - sum_m W_im k_m), logits q.k/d_h, to rounding",
        measure_softmax_jacobian,
        page="attention",
    ),
    claim(
        "sec2.8-softmax-concentration",
        "Section 2.8 (distance concentration), softmax",
        "This is the same phenomenon that affects softmax in high dimensions (inner products concentrate around "
        "zero).",
        "spread of softmax's logits over random pairs -> 0 as d_h grows",
        measure_softmax_concentration,
    ),
    claim(
        "hankel-observed-ranks",
        "Seed 004, verification (mechanism check)",
        "Across h=4..64, every tested normalized singular value satisfied the predicted s_(N+1) <= 4^-N bound; "
        "observed ranks were 2,3,3 for eps=1e-2,1e-3,1e-4 versus conservative bounds 4,5,7 and remained "
        "independent of h. (The decay half is hankel-sv-decay; the ranks are judged here.)",
        "observed rank(eps) = 2, 3, 3 at every h = 4..64; rule 4, 5, 7",
        measure_observed_ranks,
        page="hankel",
    ),
)
