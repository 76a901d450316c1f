"""Claims of routing and memory: GSR (Theorems 10.1, 10.2), DMG (Lemma 9.1), Propositions 2 and 3, maps (8.2)."""

from __future__ import annotations

import numpy as np
import torch

from georesolver_core.device import one_cpu_thread
from georesolver_core.geometry import pairwise_distance
from georesolver_core.routing.dmg import DMGConfig
from georesolver_core.routing.dmg_sim import ball_quantisation_curve, quantisation_curve, spawn_curve
from georesolver_core.routing.gsr import gsr_route
from georesolver_core.routing.maps import MAPS, compare_maps
from georesolver_core.routing.quality import fibonacci_sphere, quality_sweep, random_sphere, tail_vs_eps
from georesolver_core.theory.attention import retrieval_leak_upper_bound
from georesolver_core.theory.routing import (
    dmg_null_spawn_rate,
    gsr_bytes_paper,
    gsr_messages_paper,
    quantisation_error_paper,
    routing_entropy_bound,
)
from georesolver_core.verdicts import (
    FAILS,
    HOLDS,
    Axes,
    Claim,
    Evidence,
    fit_loglog_slope,
    sweep_evidence,
    verdict_inequality,
    verdict_scaling,
    weakest,
)

PAGE = "routing"
LE = "measured <= bound"
NULL_DMG = DMGConfig(tau_base=2.0, kappa=1.0, gamma=1.0, window=64, rate_window=64)  # losses ~ N(0, 1)
POOL_DMG = DMGConfig(tau_base=0.05, kappa=1.0, gamma=1.0, window=64, rate_window=64, lr=0.0, capacity=4096)


def measure_quality(quick: bool = False) -> Evidence:
    """Theorem 10.1 vs K, queries off the prototypes, worst-case values (unit norm and small norm)."""
    with one_cpu_thread():
        s = quality_sweep(n_pool=32, n_queries=100 if quick else 1000, eps=0.05)
    measured, bound = s.worst_error + s.small_error, s.paper_bound + s.small_bound
    # The theorem puts no restriction on the values' scale: both halves are inside its hypotheses.
    judged = verdict_inequality(measured, bound)
    exact_gap = max(abs(a - b) for a, b in zip(s.worst_error, s.exact_bound, strict=True))
    note = (
        f". Unit-norm values: worst error {s.worst_error[0]:.3g} at K=1 vs printed bound {s.paper_bound[0]:.3g}. "
        f"Values of norm {s.small_scale:.3g} (allowed: the theorem does not restrict their scale): error "
        f"{s.small_error[0]:.3g} > bound {s.small_bound[0]:.3g}; the printed bound is quadratic in the values' "
        f"scale, the error linear, so the ratio error/bound grows without limit as the scale shrinks. Rescued by "
        f"the scale-correct bound 2 T max||v||, which the worst-case values attain (max gap {exact_gap:.1e})."
    )
    axes = Axes(
        "K (prototypes kept); second half: values of norm 0.1/sqrt(K_pool)",
        "||o - o*|| (worst-case values), max over queries",
        LE,
        log="y",
    )
    extra = {
        "2 T max||v|| (exact worst case)": s.exact_bound + [b * s.small_scale for b in s.exact_bound],
        "random unit values": s.random_error + [e * s.small_scale for e in s.random_error],
    }
    reading = "any values v_e (no restriction on their scale, as the theorem states); worst-case values per query"
    worst = len(s.ks) + int(np.argmax(np.asarray(s.small_error) / np.asarray(s.small_bound)))
    return sweep_evidence(
        s.ks + s.ks, measured, bound, judged, axes, note=note, at=worst, extra=extra, sense="le", reading=reading
    )


def measure_eps_limit(quick: bool = False) -> Evidence:
    """Theorem 10.1, second part: the tail mass (K = 1) as eps -> 0, at prototypes and off them."""
    eps = np.logspace(-10, 0, 6 if quick else 11)
    with one_cpu_thread():
        t = tail_vs_eps(eps, n_pool=32, n_queries=100 if quick else 1000, k=1)
    protos = fibonacci_sphere(32)
    d = pairwise_distance(protos, protos, geometry="sphere") + 10 * torch.eye(32, dtype=torch.float64)
    r = float(d.min())
    bound = retrieval_leak_upper_bound(eps, 32, r).tolist()
    n = len(eps)
    measured = t["at_prototypes"] + t["off_prototypes"]
    # The statement does not restrict the queries: those off the prototypes are inside its hypotheses.
    judged = verdict_inequality(measured, bound + bound)
    note = (
        f". Off the prototypes the tail mass stays at {t['off_prototypes'][0]:.3g} for eps={eps[0]:.0e}: "
        "weights tend to d^-2 / sum d^-2, not to one prototype. Rescued by a hypothesis the statement does not "
        f"give, queries equal to a prototype (there the tail is {t['at_prototypes'][0]:.3g})."
    )
    axes = Axes(
        "eps (second half: queries off the prototypes)", "tail mass sum_{e>1} w_(e), max over queries", LE, "xy"
    )
    reading = "any query on the sphere (the statement does not restrict them), K = 1"
    return sweep_evidence(
        eps.tolist() * 2, measured, bound + bound, judged, axes, note=note, at=n, sense="le", reading=reading
    )


def _exponent(x, y) -> float:
    """Log-log slope of y against x over the last two points (the asymptotic growth, past padding)."""
    return float(np.log(y[-1] / y[-2]) / np.log(x[-1] / x[-2]))


def measure_communication(quick: bool = False) -> Evidence:
    """Theorem 10.2 on the real engine, P = 2, 4, 8 workers: bytes and point-to-point messages counted on the
    wire for GSR (candidate exchange) and a Switch all-to-all MoE, against B and against P.

    One verdict per sentence of the statement: GSR per query independent of B; its bytes
    O((K_pool + K) d_h x precision) and messages O(K_pool + K + P) (bounds with no P in the bytes, so the
    bytes per query must not grow with P); all-to-all's O(P^2) messages and bytes linear in B; and the
    contrast ("in contrast ... scales linearly with B"), which needs GSR's bytes not to scale with B in the
    same unit.
    """
    from georesolver_core.routing.distributed import DistConfig, run_headless

    worlds = (2, 4) if quick else (2, 4, 8)
    batches = (64, 256, 1024) if quick else (64, 256, 1024, 4096)
    prec, flat = 4, 0.15  # float32; |exponent| below flat reads as independent
    runs = {}
    for p in worlds:
        cfg = DistConfig(world_size=p, batch_sizes=batches, backend="gloo", timeout_s=60)
        res = run_headless(cfg)  # a clean process: safe inside a threaded app server, where forking is not
        runs[p] = {(r["protocol"], r["batch"]): r for r in res["rows"]}
    n_pool, k, dim = cfg.n_pool, cfg.k, cfg.dim
    top = batches[-1]
    g_q = [runs[p]["gsr-candidates", top]["bytes_per_query"] for p in worlds]  # (P,) at the largest B
    a_q = [runs[p]["a2a-switch", top]["bytes_per_query"] for p in worlds]
    g_m = [runs[p]["gsr-candidates", top]["messages"] for p in worlds]
    a_m = [runs[p]["a2a-switch", top]["messages"] for p in worlds]
    g_batch = {p: [runs[p]["gsr-candidates", b]["bytes"] for b in batches] for p in worlds}
    a_batch = {p: [runs[p]["a2a-switch", b]["bytes"] for b in batches] for p in worlds}
    g_perq_slope = max(abs(fit_loglog_slope(batches, np.divide(g_batch[p], batches))) for p in worlds)
    g_slope = [_exponent(batches, g_batch[p]) for p in worlds]
    a_slope = [_exponent(batches, a_batch[p]) for p in worlds]
    bound_b = float(gsr_bytes_paper(n_pool, k, dim, prec))
    bound_m = [float(gsr_messages_paper(n_pool, k, p)) for p in worlds]
    # An O(.) in P holds when measured / bound stops growing: judged by the exponent of that ratio in P between
    # the last two P, below 1 (the P(P-1) / P^2 of a collective fades; an extra factor P does not).
    p_bytes = _exponent(worlds, g_q)
    p_msgs = _exponent(worlds, np.divide(g_m, bound_m))
    a_msgs = _exponent(worlds, np.divide(a_m, np.square(worlds)))
    pl = ", ".join(f"P = {p}" for p in worlds)
    parts = [
        {
            "part": "GSR's per-query cost is independent of batch size B",
            "verdict": HOLDS if g_perq_slope < flat else FAILS,
            "summary": f"GSR bytes per query against B = {list(batches)}: largest |exponent| over {pl} is "
            f"{g_perq_slope:.3f}.",
        },
        {
            "part": "GSR bytes = O((K_pool + K) d_h x precision) (no P in the bound)",
            "verdict": HOLDS if p_bytes < 1 and max(g_q) <= bound_b else FAILS,
            "summary": f"bytes per query {', '.join(f'{v:.0f}' for v in g_q)} at {pl} (B = {top}), against "
            f"(K_pool + K) d_h x 4 = {bound_b:.0f}: within it at these P but growing as P^{p_bytes:.2f} between the "
            "last two P, so no constant covers every P. Each query "
            "is sent to every worker and every worker's candidates to every other worker, so the bytes carry a "
            "factor (P - 1) the bound does not have.",
        },
        {
            "part": "GSR #messages = O(K_pool + K + P)",
            "verdict": HOLDS
            if p_msgs <= 1 + flat and all(m <= b for m, b in zip(g_m, bound_m, strict=True))
            else FAILS,
            "summary": f"point-to-point messages per batch {g_m} at {pl} against K_pool + K + P = "
            f"{[int(b) for b in bound_m]}: their ratio to it grows as P^{p_msgs:.2f} (P (P - 1) per collective), "
            "the O(P^2) the statement gives all-to-all.",
        },
        {
            "part": "all-to-all #messages = O(P^2)",
            "verdict": HOLDS if a_msgs < 1 else FAILS,
            "summary": f"messages per batch {a_m} at {pl}: their ratio to P^2 grows as P^{a_msgs:.2f} (2 P (P - 1)).",
        },
        {
            "part": "all-to-all bytes = O(B K d_h x precision), linear in B",
            "verdict": HOLDS if all(abs(s - 1) <= flat for s in a_slope) else FAILS,
            "summary": f"per batch, exponent in B between the last two batches {', '.join(f'{s:.2f}' for s in a_slope)} "
            f"at {pl}.",
        },
        {
            "part": "the contrast: in contrast (to GSR), all-to-all's bytes scale linearly with B",
            "verdict": FAILS if all(abs(s - 1) <= flat for s in g_slope) else HOLDS,
            "summary": f"per batch GSR's bytes scale as B^{', B^'.join(f'{s:.2f}' for s in g_slope)} at {pl}: "
            f"linear in B, like all-to-all's. Per query both are flat in B, and GSR moves "
            f"{', '.join(f'{g:.0f}' for g in g_q)} bytes against all-to-all's {', '.join(f'{a:.0f}' for a in a_q)} "
            f"(B = {top}): {g_q[-1] / a_q[-1]:.1f}x more at P = {worlds[-1]}.",
        },
    ]
    verdict = weakest([p["verdict"] for p in parts])
    summary = (
        f"Counted on the wire with P = {', '.join(map(str, worlds))} gloo workers, K_pool = {n_pool}, K = {k}, "
        f"d_h = {dim}, float32. " + " ".join(f"[{p['part']}] {p['verdict']}: {p['summary']}" for p in parts)
    )
    axes = Axes("workers P", f"GSR bytes per query (B = {top}, counted on the wire)", LE, "xy")
    extra = {
        "all-to-all bytes per query": a_q,
        "GSR messages per batch": g_m,
        "all-to-all messages per batch": a_m,
        "K_pool + K + P (GSR messages, paper)": bound_m,
        **{f"GSR bytes per batch, P = {p}, B = {list(batches)}": g_batch[p] for p in worlds},
        **{f"all-to-all bytes per batch, P = {p}": a_batch[p] for p in worlds},
    }
    reading = "per query for the bytes bound, per batch for the B-scaling, as the statement puts them"
    return sweep_evidence(
        worlds,
        g_q,
        [bound_b] * len(worlds),
        (verdict, summary),
        axes,
        extra=extra,
        reading=reading,
        parts=parts,
        headline=f"GSR bytes per query at P = {worlds[-1]}, B = {top} (measured; (K_pool + K) d_h x 4)",
    )


def _decade_ratio(ts, counts) -> float:
    """Spawns added in the last decade of T over those added in the one before: ~1 for log T, ~10 for linear."""
    last, prev = counts[-1] - counts[-2], counts[-2] - counts[-3]
    return last / max(prev, 1)


def measure_spawns(quick: bool = False) -> Evidence:
    """Lemma 9.1: spawns up to T on stationary streams; the null model (literal) and DMG's own loss.

    Judged per decade of T: O(log T) adds a bounded number of spawns per decade, a linear count ten
    times more each decade. The curve's C log T is the smallest such curve above every checkpoint.
    """
    c = spawn_curve(10**5 if quick else 10**6, NULL_DMG, reading="null")
    cp = spawn_curve(10**4 if quick else 10**6, POOL_DMG, reading="pool")
    r_pool, r_null = _decade_ratio(cp.t, cp.pool), _decade_ratio(c.t, c.null)
    # C log T: the smallest such curve above the first two checkpoints of the i.i.d. stream
    env = max(p / np.log(t) for p, t in zip(c.null[:2], c.t[:2], strict=True))
    bound = (env * np.log(c.t)).tolist()
    p_star = float(dmg_null_spawn_rate(NULL_DMG.tau_base + NULL_DMG.kappa, NULL_DMG.gamma))
    parts = [
        {
            "part": "i.i.d. losses (the lemma's hypothesis)",
            "verdict": HOLDS if r_null <= 3.0 else FAILS,
            "summary": f"i.i.d. N(0,1) losses unaffected by spawns, tau_base=2 > mu_0=0: {c.null[-1]} spawns by "
            f"T={c.t[-1]:.0e}, the last decade added {r_null:.2f}x the spawns of the one before (log T: ~1, "
            f"linear: 10): linear, at the fixed-point rate p = Q(3 + gamma p) = {p_star:.2e} per step (predicted "
            f"{p_star * c.t[-1]:.0f}). Any i.i.d. loss with unbounded support spawns at a constant rate.",
        },
        {
            "part": "DMG's own loss stream (a stronger hypothesis: a spawn lowers later losses)",
            "verdict": HOLDS if r_pool <= 3.0 else FAILS,
            "summary": f"{cp.pool[-1]} spawns by T={cp.t[-1]:.0e}; decade ratio {r_pool:.2f}.",
        },
    ]
    verdict = weakest([p["verdict"] for p in parts])
    summary = (
        f"Under the lemma's own hypothesis (i.i.d. losses) the spawn count grows linearly in T (decade ratio "
        f"{r_null:.2f}), not as C log T. It is rescued by a hypothesis the lemma does not state, DMG's own loss "
        f"stream, where a spawn lowers later losses (decade ratio {r_pool:.2f})."
    )
    axes = Axes(
        "stream length T (steps)",
        "spawns up to T (i.i.d. losses)",
        "spawns per decade of T bounded (C log T)",
        "x",
    )
    extra = {"DMG's own loss, T = " + ", ".join(f"{t:.0e}" for t in cp.t): list(map(float, cp.pool))}
    reading = "the lemma's hypothesis: stationary i.i.d. sub-Gaussian losses with tau_base > mu_0"
    return sweep_evidence(c.t, c.null, bound, (verdict, summary), axes, extra=extra, parts=parts, reading=reading)


def measure_entropy(quick: bool = False) -> Evidence:
    """Proposition 2: H(c^S) <= log K_pool for GSR's hard routing (the worst case: uniform queries, spread pool)."""
    pools = [4, 8, 16, 32] if quick else [4, 8, 16, 32, 64, 128]
    q = random_sphere(4000 if quick else 40000, 3, seed=0)
    measured = []
    with one_cpu_thread():
        for m in pools:
            idx, _ = gsr_route(q, fibonacci_sphere(m), k=1, eps=0.01)
            p = torch.bincount(idx[:, 0], minlength=m).double() / q.shape[0]
            p = p[p > 0]
            measured.append(float(-(p * p.log()).sum()))
    bound = routing_entropy_bound(pools).tolist()
    note = ". Hard routing makes c a function of q, so I(q; c) = H(c): the measured value is the information."
    axes = Axes("pool size K_pool", "routing entropy H(c) = I(q; c) (nats)", LE, log="x")
    return sweep_evidence(pools, measured, bound, verdict_inequality(measured, bound), axes, note=note)


def measure_quantisation(quick: bool = False) -> Evidence:
    """Proposition 3 where its parenthesis puts it, data in the Poincaré ball bounded away from the boundary
    (||x|| <= 1/2), in d = 3 and d = 8: error vs K_max, one verdict per set, the claim's the weakest. Spheres
    S^2, S^4, S^7 (compact, but not hyperbolic data) are measured beside them."""
    ks = [4, 8, 16, 32] if quick else [4, 8, 16, 32, 64, 128]
    n = 1500 if quick else 8000
    judged = {
        "ball ||x|| <= 1/2, d = 3 (m = 3)": ball_quantisation_curve(ks, 3, n),
        "ball ||x|| <= 1/2, d = 8 (m = 8)": ball_quantisation_curve(ks, 8, n),
    }
    beside = {
        "S^2 (m = 2)": quantisation_curve(ks, 3, n),
        "S^4 (m = 4)": quantisation_curve(ks, 5, n),
        "S^7 (m = 7)": quantisation_curve(ks, 8, n),
    }
    parts, rates = [], []
    for name, e in judged.items():
        verdict, summary, _ = verdict_scaling(
            ks, e, exponent=-1.0, what=f"error in the {name}", unit="squared distance"
        )
        parts.append({"part": name, "verdict": verdict, "summary": summary})
    for name, e in beside.items():
        rates.append(f"{name} K^{fit_loglog_slope(ks, e):.2f}")
    e8 = judged["ball ||x|| <= 1/2, d = 8 (m = 8)"]
    bound = quantisation_error_paper(ks, e8[0] * ks[0]).tolist()  # C fitted at the smallest K
    verdict = weakest([p["verdict"] for p in parts])
    summary = (
        "Judged where the statement puts it: data in the Poincaré ball bounded away from the boundary "
        "(||x|| <= 1/2, compact). "
        + "; ".join(f"{p['part']}: {p['verdict']} ({p['summary']})" for p in parts)
        + ". Zador's theorem gives K^(-2/m) for intrinsic dimension m: O(1/K) needs m <= 2, which a ball of dimension "
        "d >= 3 does not have. Beside it, compact spheres (not hyperbolic data): "
        + ", ".join(rates)
        + " (S^2, m = 2, is the one set where O(1/K) holds)."
    )
    axes = Axes(
        "memory slots K_max",
        "mean squared Poincaré quantisation error (ball d = 8)",
        "measured ~ C / K_max",
        "xy",
    )
    extra = {**{k: v for k, v in judged.items() if "d = 8" not in k}, **beside}
    reading = "compact data in the ball away from the rim (||x|| <= 1/2), d = 3 and 8, Lloyd's k-means centres"
    return sweep_evidence(ks, e8, bound, (verdict, summary), axes, extra=extra, parts=parts, reading=reading)


def measure_maps(quick: bool = False) -> Evidence:
    """Section 8.2 as stated: each of the three maps sends prototype centroids in the ball onto the unit sphere.
    Judged by max | ||phi(c)|| - 1 | over ball points from the centre to the rim; the Top-K agreement with the
    hyperbolic neighbours after each map is measured and shown, not judged (the seed states no figure for it)."""
    from georesolver_core.geometry import norm_map, stereographic_map
    from georesolver_core.routing.maps import fit_learnable_map, hierarchy_points

    with one_cpu_thread():
        rep = compare_maps(
            n_protos=32 if quick else 64, n_queries=100 if quick else 500, fit_steps=40 if quick else 300
        )
        g = torch.Generator().manual_seed(3)
        radii = torch.tensor([1e-6, 1e-3, 0.1, 0.5, 0.9, 0.999], dtype=torch.float64)
        u = torch.randn(len(radii), 64 if quick else 512, 2, generator=g, dtype=torch.float64)
        pts = (radii[:, None, None] * u / u.norm(dim=-1, keepdim=True)).reshape(-1, 2)  # (R * N, 2)
        learn = fit_learnable_map(hierarchy_points(32 if quick else 64, 2, seed=0), steps=40 if quick else 300)
        maps = {"norm": norm_map, "stereographic": stereographic_map, "learnable": lambda c: learn(c).detach()}
        dev = {m: (f(pts).norm(dim=-1) - 1).abs().reshape(len(radii), -1).amax(-1) for m, f in maps.items()}
    measured = [max(float(dev[m][i]) for m in MAPS) for i in range(len(radii))]
    budget = [1e-12] * len(radii)  # float64 rounding of a normalised vector
    verdict, summary = verdict_inequality(measured, budget, relation="le")
    best = max(MAPS, key=lambda m: np.mean(rep.agreement[m]))
    summary = (
        "Every map lands on the unit sphere: worst | ||phi(c)|| - 1 | over ||c|| from 1e-6 to 0.999 is "
        + ", ".join(f"{m} {float(dev[m].max()):.1e}" for m in MAPS)
        + f". {summary}. Measured beside it, not judged (the seed gives no figure): Top-K agreement with the "
        f"hyperbolic neighbours at K = {rep.ks}: "
        + "; ".join(f"{m} {', '.join(f'{a:.2f}' for a in rep.agreement[m])}" for m in MAPS)
        + f" (best: {best}); distortion max/min of d_S / d_H: "
        + ", ".join(f"{m} {rep.distortion[m]:.3g}" for m in MAPS)
        + ". The norm map sends a parent and its child (same direction) to one point."
    )
    axes = Axes("||c|| (ball radius of the centroid)", "max | ||phi(c)|| - 1 | over the three maps", LE, "xy")
    extra = {f"Top-K agreement, {m} ({MAPS[m]}), K = {rep.ks}": rep.agreement[m] for m in MAPS}
    return sweep_evidence(
        radii.tolist(),
        [max(v, 1e-18) for v in measured],
        budget,
        (verdict, summary),
        axes,
        extra=extra,
        sense="le",
    )


CLAIMS = (
    Claim(
        "thm10.1-gsr-quality",
        "Theorem 10.1 (section 10.2)",
        "Routing only to the Top-K prototypes changes the output by at most "
        "2||V||_F (sum_{e>K} w_(e) / sum_{e<=K} w_(e)) max_{e<=K} ||v_e||, for any query.",
        "||o - o*|| <= 2 ||V||_F (T / (1 - T)) max ||v_e||, T = tail mass",
        PAGE,
        measure_quality,
    ),
    Claim(
        "thm10.1-eps-limit",
        "Theorem 10.1 (section 10.2), second part",
        "As eps -> 0 the SIDA weights concentrate on the nearest prototype, so the Top-K error vanishes.",
        "tail mass <= x/(1+x), x = eps (K_pool - 1)/(r^2 + eps) for q = c_e",
        PAGE,
        measure_eps_limit,
    ),
    Claim(
        "thm10.2-gsr-communication",
        "Theorem 10.2 (section 10.3)",
        "GSR has per-query communication cost: O(K_pool d_h + K d_h), independent of batch size B. In the "
        "alpha-beta model: #messages = O(K_pool + K + P), bytes = O((K_pool + K) d_h precision). In contrast, "
        "All-to-All MoE has: #messages = O(P^2), bytes = O(B K d_h precision), which scales linearly with batch size B.",
        "bytes per query <= (K_pool + K) d_h x precision",
        PAGE,
        measure_communication,
    ),
    Claim(
        "lemma9.1-dmg-spawns",
        "Lemma 9.1 (section 9.1)",
        "With tau_t = tau_base + kappa sigma_t + gamma (spawn rate) and tau_base > mu_0, a stationary "
        "stream triggers E[T_s(T)] = O(log T) spawns.",
        "spawns(T) <= C log T",
        PAGE,
        measure_spawns,
    ),
    Claim(
        "prop2-routing-entropy",
        "Proposition 2 (section 11.4)",
        "Spherical routing carries at most log K_pool nats: I(q_S; c_e^S) <= H(c_e^S) <= log K_pool.",
        "H(c) <= log K_pool",
        PAGE,
        measure_entropy,
    ),
    Claim(
        "prop3-quantisation",
        "Proposition 3 (section 11.5)",
        "With K_max memory slots, the quantization error decays as O(1/K_max) under compactness assumptions (data "
        "bounded away from the hyperbolic boundary).",
        "error ~ C / K_max",
        PAGE,
        measure_quantisation,
    ),
    Claim(
        "sec8.2-map-routing",
        "Section 8.2 (cross-geometric maps)",
        "Three methods map prototype centroids to the sphere: - Norm Normalization: phi_A(c) = c / ||c|| - "
        "Stereographic Projection: phi_B(c) = (2c / (1 + ||c||^2), (1 - ||c||^2) / (1 + ||c||^2)) - Learnable "
        "Mapping: phi_C(c) = MLP_theta(c) / ||MLP_theta(c)||",
        "| ||phi(c)|| - 1 | <= 1e-12 (float64) for each map",
        PAGE,
        measure_maps,
    ),
)
