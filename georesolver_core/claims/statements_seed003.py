"""Seed 003's remaining statements: Sinkhorn mixing's accumulating error, the echo and gyroscope results
(trained here at small size and shown beside the seed's figures), DDL's negation, and near-pi rotation.

The echo claims are measured in the seed's own setting (``extras.echo_sequence``): a GPT-style causal
transformer against the same transformer with every residual shortcut replaced by the orthogonal mixing, at
matched parameter counts, on sequences of 127 predicted steps. A difference between kinds is claimed only
beyond the spread (min..max) of the seeds: a statement holds when the whole spread satisfies it.

The gyroscope, negation and near-pi claims use seed 003's residual mixer alone (``extras.orthogonal_tasks``),
with the additive residual x + F(x) standing in for GPT's. JPmHC is not built here: claims about it alone are
left out.
"""

from __future__ import annotations

import functools

import numpy as np
import torch
from scipy.optimize import minimize_scalar

from georesolver_core.claims.statements_ida import claim, seeded
from georesolver_core.extras.echo_sequence import (
    ECHO_KINDS,
    GPT,
    EchoConfig,
    compare_echo,
    param_tolerance,
    summarise_echo,
)
from georesolver_core.extras.orthogonal import cayley_apply, cayley_matrix, hybrid_apply
from georesolver_core.extras.orthogonal_tasks import TaskConfig, compare, rotation_matrix, summarise
from georesolver_core.verdicts import Axes, sweep_evidence, verdict_inequality

PAGE = "orthogonal"  # its topic page (url path); the Claims page lists every claim
F64 = torch.float64
SEED_ECHO_VS_GPT = 3.8  # seed 003, section 4: echo loss of GPT / E-Delta-MHC-Geo
SEED_NORM_DEVIATION = 0.001  # seed 003, section 4: mean norm deviation on the echo task
SEED_GYRO_VS_GPT = 3.7  # seed 003, section 4: gyroscope loss of GPT / E-Delta-MHC-Geo
SEED_COSINE = 0.96  # seed 003, section 4: the hybrid's negation cosine


def sinkhorn(logits: torch.Tensor, iters: int) -> torch.Tensor:
    """Sinkhorn-Knopp: alternately normalise rows and columns of exp(logits), ``iters`` rounds. (..., n, n)."""
    m = logits.exp()
    for _ in range(iters):
        m = m / m.sum(-1, keepdim=True)
        m = m / m.sum(-2, keepdim=True)
    return m


def measure_sinkhorn(quick: bool = False, *, n: int = 8, iters: int = 20):
    """Mean |log(||M_L ... M_1 x|| / ||x||)| over x for L Sinkhorn layers, against the Cayley stack."""
    depths = [1, 2, 4, 8, 16, 32, 64] if quick else [1, 2, 4, 8, 16, 32, 64, 128, 256]
    g = seeded(11)
    mats = sinkhorn(torch.randn(depths[-1], n, n, generator=g, dtype=F64), iters)  # (L, n, n)
    u, v = torch.randn(depths[-1], n, generator=g, dtype=F64), torch.randn(depths[-1], n, generator=g, dtype=F64)
    x0 = torch.randn(256, n, generator=g, dtype=F64)
    defect = float(torch.linalg.matrix_norm(mats.transpose(-1, -2) @ mats - torch.eye(n, dtype=F64)).mean())
    dev, cay = [], []
    x, y, layer = x0.clone(), x0.clone(), 0
    for depth in depths:
        while layer < depth:
            x = x @ mats[layer].T
            y = cayley_apply(y, u[layer], v[layer], 1.0)
            layer += 1
        dev.append(float((x.norm(dim=-1) / x0.norm(dim=-1)).log().abs().mean()))
        cay.append(float((y.norm(dim=-1) / x0.norm(dim=-1)).log().abs().mean()))
    judged = verdict_inequality(dev[1:], dev[:-1], relation="ge")
    note = (
        f". Doubly stochastic layers ({iters} Sinkhorn rounds, n = {n}) have ||M^T M - I||_F = {defect:.3g} on average: "
        f"they keep the all-ones direction and contract the rest, so the norm error grows with depth, "
        f"{dev[0]:.3g} (L = 1) -> {dev[-1]:.3g} (L = {depths[-1]}); the Cayley stack stays at {max(cay):.1g}"
    )
    axes = Axes(
        "depth L (layers)",
        "mean |log(||M_L..M_1 x|| / ||x||)|",
        "measured at L >= measured at the previous L",
        log="xy",
    )
    return sweep_evidence(depths[1:], dev[1:], dev[:-1], judged, axes, note=note, extra={"Cayley stack": cay[1:]})


@functools.lru_cache(maxsize=2)
def echo_runs(quick: bool) -> tuple[dict, EchoConfig, tuple[int, ...]]:
    """The echo benchmark in the seed's setting for every kind, shared by the three echo claims.

    Full: ``EchoConfig()`` (128 positions, 127 predicted steps, 500 Adam steps), seeds 0, 1, 2. Quick (for the
    tests): 32 positions, delay 8, 60 steps, one seed."""
    cfg = EchoConfig(seq_len=32, delay=8, steps=60, eval_batch=16) if quick else EchoConfig()
    seeds = (0,) if quick else (0, 1, 2)
    with torch.random.fork_rng():
        return summarise_echo(compare_echo(ECHO_KINDS, cfg, seeds)), cfg, seeds


def _setting(table: dict, cfg: EchoConfig, seeds: tuple[int, ...]) -> str:
    counts = ", ".join(f"{_label(k)} {table[k]['params']:,}" for k in ECHO_KINDS)
    return (
        f" Setting: causal transformers ({cfg.n_layers} pre-norm blocks, d_model = {cfg.d_model}, {cfg.n_heads} heads) "
        f"on echo sequences of {cfg.seq_len} positions, loss over {cfg.seq_len - 1} predicted steps: at step t the "
        f"model says the symbol it heard {cfg.delay} steps before (|V| = {cfg.vocab}, silence before the first echo); "
        f"GPT is the additive residual, the others replace every shortcut s by M(s) s. Parameters (matched within "
        f"{param_tolerance(cfg)}): {counts}; the seed's 1.79M is shrunk to train on a CPU. {cfg.steps} Adam steps of "
        f"{cfg.batch} sequences, {len(seeds)} seed(s); the spread is the seeds' min..max. JPmHC is not built here"
    )


def _span(row: dict, name: str = "loss") -> str:
    v = row[name]
    return f"{v['mean']:.3g} [{v['min']:.3g}, {v['max']:.3g}]"


def _label(kind: str) -> str:
    return "GPT" if kind == GPT else kind


def _versus(hyb: dict, other: dict) -> str:
    """Where the hybrid's seeds lie against another kind's: a difference is named only beyond the spread."""
    if min(len(hyb["values"]), len(other["values"])) < 2:
        return "one seed, no spread: no difference judged"
    if hyb["max"] < other["min"]:
        return "hybrid lower beyond the spread"
    if hyb["min"] > other["max"]:
        return "hybrid higher beyond the spread"
    return "the seeds' spread covers both sides (no difference resolved)"


def measure_echo_lowest(quick: bool = False):
    """The hybrid's worst seed against every other kind's best seed: lowest loss claimed only beyond the spread."""
    table, cfg, seeds = echo_runs(quick)
    others = [k for k in ECHO_KINDS if k != "hybrid"]
    hyb = table["hybrid"]["loss"]
    meas, bound = [hyb["max"]] * len(others), [table[k]["loss"]["min"] for k in others]
    judged = verdict_inequality(meas, bound, relation="le")
    note = (
        ". Held-out loss, mean [min, max] over seeds (nats per step): "
        + ", ".join(f"{_label(k)} {_span(table[k])}" for k in ECHO_KINDS)
        + ". Hybrid against "
        + "; ".join(f"{_label(k)}: {_versus(hyb, table[k]['loss'])}" for k in others)
        + ". Echoed steps answered right (mean): "
        + ", ".join(f"{_label(k)} {table[k]['echo_accuracy']['mean']:.3f}" for k in ECHO_KINDS)
        + "."
        + _setting(table, cfg, seeds)
    )
    order = ", ".join(f"{i} {_label(k)}" for i, k in enumerate(others))
    axes = Axes(
        f"other kind ({order})", "held-out echo loss (nats per step)", "hybrid's worst seed <= the kind's best"
    )
    return sweep_evidence(
        range(len(others)),
        meas,
        bound,
        judged,
        axes,
        note=note,
        sense="le",
        extra={
            "hybrid, mean over seeds": [hyb["mean"]] * len(others),
            "the kind, mean over seeds": [table[k]["loss"]["mean"] for k in others],
        },  # fmt: skip
    )


def measure_echo_ratio(quick: bool = False):
    """loss(GPT) / loss(hybrid) over the seeds' spread, beside the seed's 3.8x: held only if the whole spread is."""
    table, cfg, seeds = echo_runs(quick)
    gpt, hyb = table[GPT]["loss"], table["hybrid"]["loss"]
    ratio = gpt["mean"] / hyb["mean"]
    low, high = gpt["min"] / hyb["max"], gpt["max"] / hyb["min"]
    judged = verdict_inequality([low], [SEED_ECHO_VS_GPT], relation="ge")
    if len(seeds) < 2:
        where = "one seed, no spread"
    elif low >= SEED_ECHO_VS_GPT:
        where = f"the whole spread lies at or above {SEED_ECHO_VS_GPT}x"
    elif high < SEED_ECHO_VS_GPT:
        where = f"the whole spread lies below {SEED_ECHO_VS_GPT}x"
    else:
        where = f"the seeds' spread covers both sides of {SEED_ECHO_VS_GPT}x: not resolved"
    note = (
        f". Ratio of mean losses {ratio:.3g}x, spread [{low:.3g}, {high:.3g}]x (min GPT / max hybrid .. max / min): "
        f"{where}; hybrid against GPT: {_versus(hyb, gpt)}. Losses: GPT {_span(table[GPT])}, hybrid "
        f"{_span(table['hybrid'])}. The seed reports {SEED_ECHO_VS_GPT}x over GPT (and 1.9x over JPmHC, not "
        "measured)." + _setting(table, cfg, seeds)
    )
    axes = Axes(
        "run", "loss(GPT) / loss(hybrid), low end of the seeds' spread", "measured >= seed's 3.8x", log="y"
    )
    return sweep_evidence(
        [0],
        [low],
        [SEED_ECHO_VS_GPT],
        judged,
        axes,
        note=note,
        sense="ge",
        measured_value=ratio,
        headline="loss(GPT) / loss(hybrid), ratio of the seeds' mean losses",
        extra={"ratio of means": [ratio], "high end of the spread": [high]},
    )


def measure_echo_norm(quick: bool = False):
    """The hybrid's mean | ||M(s) s|| / ||s|| - 1 | per residual mixing step, seed by seed, beside the seed's 0.001."""
    table, cfg, seeds = echo_runs(quick)
    dev = table["hybrid"]["norm_deviation"]["values"]
    judged = verdict_inequality(dev, [SEED_NORM_DEVIATION] * len(dev), relation="le")
    mixing = [k for k in ECHO_KINDS if k != GPT]
    note = (
        f". Measured on held-out sequences at every shortcut of every block and every position, the mixing step alone "
        f"(before the branch F(LN s) is added): hybrid {_span(table['hybrid'], 'norm_deviation')} with mean gate "
        f"gamma {table['hybrid']['gate']['mean']:.3g} (per seed "
        + ", ".join(f"{g:.3g}" for g in table["hybrid"]["gate"]["values"])
        + f"; mean 4 gamma (1 - gamma) {table['hybrid']['midpoint']['mean']:.3g}, 0 when every gate sits at 0 or 1; "
        f"gate weight {cfg.gate_weight} on it in the loss); "
        + ", ".join(f"{k} {table[k]['norm_deviation']['mean']:.2g}" for k in mixing[1:])
        + " (cayley and householder are orthogonal: float32 rounding). gamma Q + (1 - gamma) H is orthogonal only at "
        "gamma in {0, 1}; how far the step turns s, mean ||M(s) s - s|| / ||s||: "
        + ", ".join(f"{k} {table[k]['move']['mean']:.3g}" for k in mixing)
        + "."
        + _setting(table, cfg, seeds)
    )
    axes = Axes("seed", "mean | ||M(s) s|| / ||s|| - 1 | (hybrid)", "measured <= seed's 0.001", log="y")
    return sweep_evidence(
        seeds,
        dev,
        [SEED_NORM_DEVIATION] * len(dev),
        judged,
        axes,
        note=note,
        sense="le",
        measured_value=float(np.mean(dev)),
        headline="the hybrid's mean norm deviation per mixing step, mean over seeds",
        extra={k: table[k]["norm_deviation"]["values"] for k in mixing[1:]},
    )


def measure_gyroscope(quick: bool = False, *, angle: float = 30.0):
    """Rotation prediction (R_theta, theta = 30 deg): loss of the additive residual over the hybrid's, beside 3.7x."""
    cfg = TaskConfig(task="rotation", angle_deg=angle, steps=100 if quick else 300, batch=64 if quick else 128)
    with torch.random.fork_rng():
        table = summarise(compare(("hybrid", "additive", "cayley"), cfg, seeds=(0,) if quick else (0, 1, 2)))
    ratio = table["additive"]["loss mean"] / table["hybrid"]["loss mean"]
    judged = verdict_inequality([ratio], [SEED_GYRO_VS_GPT], relation="ge")
    note = (
        f". Measured {ratio:.3g}x (additive {table['additive']['loss mean']:.3g}, hybrid {table['hybrid']['loss mean']:.3g}, "
        f"Cayley {table['cayley']['loss mean']:.3g}); the seed reports {SEED_GYRO_VS_GPT}x over GPT. Reading: the "
        f"gyroscope task as one rotation by {angle:g} deg to predict, {cfg.steps} Adam steps, ~{cfg.params} parameters"
    )
    axes = Axes("run", "loss(additive) / loss(hybrid), rotation task", "measured >= seed's 3.7x")
    return sweep_evidence([0], [ratio], [SEED_GYRO_VS_GPT], judged, axes, note=note)


def measure_ddl_negation(quick: bool = False):
    """Held-out cosine(output, -x) of DDL against the seed's hybrid figure 0.96 (a failure means below it)."""
    cfg = TaskConfig(task="negation", steps=100 if quick else 300, batch=64 if quick else 128)
    seeds = (0,) if quick else (0, 1, 2)
    with torch.random.fork_rng():
        runs = compare(("ddl", "hybrid"), cfg, seeds=seeds)
    ddl = [r.final["cosine"] for r in runs if r.kind == "ddl"]
    hyb = [r.final["cosine"] for r in runs if r.kind == "hybrid"]
    judged = verdict_inequality(ddl, [SEED_COSINE] * len(ddl), relation="le")
    note = (
        f". DDL cosine {np.mean(ddl):.4g}, hybrid {np.mean(hyb):.4g} ({cfg.steps} Adam steps, d = {cfg.dim}). Reading: "
        f"'fails exact negation' as a held-out cosine below the {SEED_COSINE} the seed reports for the hybrid; JPmHC is "
        "not measured (no JPmHC here)"
    )
    axes = Axes("seed", "cosine(DDL output, -x)", "measured <= 0.96 (the statement: DDL falls short)")
    return sweep_evidence(seeds, ddl, [SEED_COSINE] * len(ddl), judged, axes, note=note, extra={"hybrid": hyb})


def measure_near_pi(quick: bool = False, *, angle: float = 179.9):
    """Trained Cayley loss at theta = 179.9 deg against a tenth of the identity map's loss E||R x - x||^2."""
    cfg = TaskConfig(task="rotation", angle_deg=angle, steps=150 if quick else 300, batch=64 if quick else 128)
    seeds = (0,) if quick else (0, 1, 2)
    with torch.random.fork_rng():
        loss = [r.final["loss"] for r in compare(("cayley",), cfg, seeds=seeds)]
        exact = [
            r.final["loss"]
            for r in compare(("cayley",), TaskConfig(**{**cfg.__dict__, "angle_deg": 180.0}), seeds=seeds)
        ]
    ident = float(
        2 * (2 - 2 * np.cos(np.radians(angle)))
    )  # E||R x - x||^2 for x ~ N(0, I): two rotated coordinates
    bound = [0.1 * ident] * len(loss)
    judged = verdict_inequality(loss, bound, relation="le")
    note = (
        f". Reading 'converges to low loss' as below 10% of the untrained identity map's {ident:.3g}. Cayley at "
        f"{angle:g} deg: {np.mean(loss):.3g}; at exactly 180 deg, same training: {np.mean(exact):.3g}"
    )
    axes = Axes("seed", f"held-out loss, Cayley, theta = {angle:g} deg", "measured <= 0.1 E||R x - x||^2")
    return sweep_evidence(seeds, loss, bound, judged, axes, note=note, extra={"theta = 180 deg": exact})


def _best_cayley_error(theta_deg: float, beta_max: float, d: int = 3) -> float:
    """min over 0 < beta <= beta_max of ||Q(beta) - R_theta||_F, Q the Cayley map on the (e1, e2) plane."""
    u, v = torch.eye(d, dtype=F64)[0], torch.eye(d, dtype=F64)[1]
    target = rotation_matrix(d, theta_deg, F64)

    def err(log_beta):
        return float(torch.linalg.matrix_norm(cayley_matrix(u, v, float(np.exp(log_beta))) - target))

    best = min((err(lb), lb) for lb in np.linspace(-3, np.log(beta_max), 200))
    r = minimize_scalar(
        err,
        bounds=(best[1] - 0.1, min(best[1] + 0.1, np.log(beta_max))),
        method="bounded",
        options={"xatol": 1e-12},
    )
    return min(best[0], float(r.fun))


def measure_exact_pi(quick: bool = False):
    """Best Cayley error at 180 deg as beta may grow, against the 179.9 deg case where a finite beta is exact."""
    beta_max = np.logspace(1, 8, 5 if quick else 15)
    at_pi = [_best_cayley_error(180.0, b) for b in beta_max]
    near = [_best_cayley_error(179.9, b) for b in beta_max]
    floor = [1e-9] * len(beta_max)
    judged = verdict_inequality(at_pi, floor, relation="ge")
    note = (
        f". R_pi has eigenvalue -1 (twice), which no Cayley map has: the best error falls like 1/beta, "
        f"{at_pi[0]:.3g} (beta <= {beta_max[0]:g}) -> {at_pi[-1]:.3g} (beta <= {beta_max[-1]:g}), never 0. At 179.9 deg it "
        f"is {near[-1]:.1g} once beta reaches 2 cot(0.05 deg) = {2 / np.tan(np.radians(0.05)):.4g}. The reflection branch "
        "gives -1 eigenvalues exactly"
    )
    axes = Axes(
        "largest beta allowed",
        "min ||Q(beta) - R_pi||_F",
        "measured > 0 (no exact pi without reflection)",
        log="xy",
    )
    return sweep_evidence(beta_max, at_pi, floor, judged, axes, note=note, extra={"theta = 179.9 deg": near})


def measure_cayley_det(quick: bool = False):
    """det Q(x) over random generators u, v and magnitudes beta from 1e-3 to 1e3, d in {2, 3, 16, 64}: +1."""
    dims = [2, 3, 16] if quick else [2, 3, 16, 64]
    betas = np.logspace(-3, 3, 7 if quick else 13)
    g, worst = seeded(5), []
    for d in dims:
        dev = 0.0
        for beta in betas:
            for _ in range(4 if quick else 16):
                u, v = torch.randn(d, generator=g, dtype=F64), torch.randn(d, generator=g, dtype=F64)
                dev = max(dev, abs(float(torch.linalg.det(cayley_matrix(u, v, float(beta)))) - 1.0))
        worst.append(dev)
    judged = verdict_inequality(worst, [1e-9] * len(dims), relation="le")
    note = (
        f". |det Q - 1| at most {max(worst):.1e} over beta = {betas[0]:g}..{betas[-1]:g} and random u, v (float64): "
        "Q(x) lies in SO(n), so it never reaches a reflection (det -1)"
    )
    axes = Axes("dimension d", "max |det Q(x) - 1|", "measured <= 1e-9 (float64 determinant)", log="y")
    return sweep_evidence(dims, [max(w, 1e-18) for w in worst], [1e-9] * len(dims), judged, axes, note=note)


def measure_hybrid_components(quick: bool = False):
    """det G_gamma at the two ends of the gate: gamma = 1 (Cayley, det +1) and gamma = 0 (Householder, det -1),
    and G^T G = I at both: the hybrid reaches both connected components of O(n)."""
    dims = [2, 3, 16] if quick else [2, 3, 16, 64]
    g, rows = seeded(6), []
    for d in dims:
        u, v, k = (torch.randn(d, generator=g, dtype=F64) for _ in range(3))
        for gamma in (1.0, 0.0):
            m = hybrid_apply(torch.eye(d, dtype=F64), u, v, 0.7, k, gamma).T  # (d, d): column i is G e_i
            rows.append(
                (d, gamma, float(torch.linalg.det(m)), float((m.T @ m - torch.eye(d, dtype=F64)).abs().max()))
            )
    det_rot = [r[2] for r in rows if r[1] == 1.0]
    det_ref = [r[2] for r in rows if r[1] == 0.0]
    err = [abs(a - 1.0) for a in det_rot] + [abs(b + 1.0) for b in det_ref]
    ortho = max(r[3] for r in rows)
    judged = verdict_inequality([max(e, ortho) for e in err], [1e-9] * len(err), relation="le")
    note = (
        f". det G = {', '.join(f'{x:+.6f}' for x in det_rot)} at gamma = 1 and {', '.join(f'{x:+.6f}' for x in det_ref)} "
        f"at gamma = 0 over d = {dims}; max |G^T G - I| = {ortho:.1e}: both ends orthogonal, one in SO(n), one in "
        "O(n) minus SO(n)"
    )
    axes = Axes(
        "(d, end) pairs: gamma = 1 then gamma = 0", "|det G -+ 1| (and |G^T G - I|)", "measured <= 1e-9", log="y"
    )
    x = list(range(len(err)))
    return sweep_evidence(x, [max(e, ortho, 1e-18) for e in err], [1e-9] * len(err), judged, axes, note=note)


def _c(key, section, statement, bound, fn, page=PAGE):
    return claim(key, section, statement, bound, fn, page=page)


CLAIMS = (
    _c("orth-sinkhorn-accumulation", "Seed 003, section 1 (mHC)",
       "Sinkhorn-projected (doubly stochastic) mixing is only approximately orthogonal, and its errors accumulate over length.",
       "norm error of L stacked Sinkhorn layers increasing in L", measure_sinkhorn),
    _c("orth-echo-lowest-loss", "Seed 003, section 4 (echo stability)",
       "Long-Horizon Stability: On a stability benchmark (predicting echo sequences over 127 steps), E-Delta-MHC-Geo "
       "achieved the lowest loss.", "max over seeds of loss(hybrid) <= min over seeds of loss(kind), every other kind",
       measure_echo_lowest),
    _c("orth-echo-vs-gpt", "Seed 003, section 4 (echo stability)",
       "On a stability benchmark (predicting echo sequences over 127 steps), E-Delta-MHC-Geo achieved the lowest loss, "
       "outperforming JPmHC by 1.9x and GPT by 3.8x.", "min loss(GPT) / max loss(hybrid) over seeds >= 3.8",
       measure_echo_ratio),
    _c("orth-echo-norm-deviation", "Seed 003, section 4 (echo stability)",
       "It maintained norm preservation with a mean deviation of only 0.001, validating the theoretical isometry.",
       "mean | ||M(s) s|| / ||s|| - 1 | per residual mixing step <= 0.001, every seed", measure_echo_norm),
    _c("orth-gyroscope", "Seed 003, section 4 (gyroscope)",
       "On continuous rotation prediction E-Delta-MHC-Geo outperforms non-geometric baselines (3.7x over GPT).",
       "loss(additive) / loss(hybrid) >= 3.7", measure_gyroscope),
    _c("orth-ddl-negation", "Seed 003, section 4 (negation)",
       "DDL (which struggles to converge beta to exactly 2) fails to achieve exact negation alignment.",
       "cosine(DDL output, -x) < 0.96", measure_ddl_negation),
    _c("orth-near-pi", "Seed 003, section 4 (near-pi rotation)",
       "The model converges to low loss for angles close to pi (e.g. 179.9 degrees).",
       "trained loss <= 0.1 E||R x - x||^2", measure_near_pi),
    _c("orth-cayley-det", "Seed 003, section 2.2",
       "A known limitation of the Cayley transform is that it cannot produce an eigenvalue of lambda = -1 (Theorem 4.6), "
       "as it maps to the special orthogonal group SO(n) (determinant +1).", "|det Q(x) - 1| <= 1e-9",
       measure_cayley_det),
    _c("orth-hybrid-components", "Seed 003, section 3 (key contributions)",
       "Hybrid Access to O(n): A novel gating mechanism that allows the model to access both connected components of "
       "the orthogonal group (SO(n) for rotation and O(n) \\ SO(n) for reflection), solving the \"negation problem\" "
       "inherent to pure Cayley methods.", "det G = +1 at gamma = 1, -1 at gamma = 0, G^T G = I at both",
       measure_hybrid_components),
    _c("orth-exact-pi", "Seed 003, section 4 (near-pi rotation)",
       "Exact pi requires the reflection branch.", "min_beta ||Q(beta) - R_pi|| > 0", measure_exact_pi),
)  # fmt: skip
