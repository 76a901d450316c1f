"""Section 9.2's convergence guarantee: "between spawns, standard C-HIDA regret applies; under the lemma
(Lemma 9.1, E[spawns] = O(log T)), total regret is O(log T)".

Reading: total regret is the sum, over the epochs between DMG's spawns, of C-HIDA's regret on that epoch's
keys (C-HIDA restarts its summaries at a spawn; the comparator is the best fixed summaries of the epoch),
with no constant given, so O(log T) is judged by growth: which of log T, sqrt T, T fits best, and the
log-log slope. Two streams, both satisfying the lemma's conclusion:

- no spawn at all (0 <= C log T), keys of the C-HIDA mixture in the worst order found by
  ``claims.order_search`` (total regret = C-HIDA's regret);
- spawns at the times a DMG pool spawns on its own stream (the reading where Lemma 9.1 holds), keys in
  random order.
"""

from __future__ import annotations

import numpy as np
import torch

from georesolver_core.attention.l_hida import hyperbolic_kmeans
from georesolver_core.claims.hida_claims import best_growth
from georesolver_core.claims.order_search import online_losses, worst_order
from georesolver_core.claims.routing_claims import POOL_DMG
from georesolver_core.claims.statements_ida import claim, seeded
from georesolver_core.device import one_cpu_thread
from georesolver_core.geometry import pairwise_sq_distance
from georesolver_core.labs import hida as hida_lab
from georesolver_core.routing.dmg_sim import cluster_stream as sphere_stream
from georesolver_core.routing.dmg_sim import pool_spawns
from georesolver_core.verdicts import FAILS, HOLDS, Axes, fit_loglog_slope, sweep_evidence, weakest

PAGE = "routing"
C = 4  # summaries


def best_fixed(keys: torch.Tensor, m: int, seed: int = 0) -> float:
    """min over fixed summaries of sum_t min_k d_H(k_t, s_k)^2: the best of two hyperbolic k-means++ restarts."""
    m = min(m, keys.shape[0])
    out = []
    for r in range(2):
        centres, _ = hyperbolic_kmeans(keys, m, iters=20, generator=seeded(seed + 7 + r))
        out.append(float(pairwise_sq_distance(keys, centres, geometry="poincare").amin(-1).sum()))
    return min(out)


def epoch_regret(keys: torch.Tensor, starts: list[int]) -> float:
    """Sum over the epochs [starts[i], starts[i + 1]) of C-HIDA's regret restarted at each epoch. keys (T, d)."""
    edges = sorted({0, *[s for s in starts if 0 < s < keys.shape[0]], keys.shape[0]})
    total = 0.0
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        seg = keys[a:b]
        if seg.shape[0] <= C:
            continue  # C-HIDA opens one summary per key: no loss, no regret
        total += float(online_losses(seg, torch.arange(seg.shape[0])[None], C)[0]) - best_fixed(seg, C)
    return total


def measure_total_regret(quick: bool = False):
    ts = [64, 128, 256, 512] if quick else [64, 128, 256, 512, 1024, 2048]
    with one_cpu_thread():
        keys, _, labels = hida_lab.cluster_stream(ts[-1], 2, C, seed=0)
        spawns = [int(s) for s in pool_spawns(sphere_stream(ts[-1] + 1, seed=0), POOL_DMG)]
        worst, spawned, n_spawns = [], [], []
        for t in ts:
            o = worst_order(keys[:t], labels[:t], C, restarts=2, iters=0 if quick else 3)
            worst.append(o.loss - best_fixed(keys[:t], C))
            inside = [s for s in spawns if s < t]
            spawned.append(epoch_regret(keys[:t], inside))
            n_spawns.append(len(inside))
    half = len(ts) // 2
    parts = []
    for name, r in (
        ("no spawn, the worst order found (C-HIDA's regret)", worst),
        ("spawns at a DMG pool's own spawn times, random order", spawned),
    ):
        g, _ = best_growth(ts, r)
        slope = fit_loglog_slope(ts[half:], np.maximum(r[half:], 1e-12))
        parts.append({"part": name, "verdict": HOLDS if g == "log T" else FAILS,
                      "summary": f"total regret {r[-1]:.4g} at T = {ts[-1]}; best fit among log T, sqrt T, T: {g}; "
                      f"log-log slope {slope:.2f} over the second half (log T -> 0, sqrt T -> 0.5, T -> 1)"})  # fmt: skip
    verdict = weakest([p["verdict"] for p in parts])
    summary = (
        f"{parts[0]['part']}: {parts[0]['summary']}. {parts[1]['part']} ({n_spawns[-1]} spawns by T = {ts[-1]}): "
        f"{parts[1]['summary']}. Both streams satisfy the lemma's conclusion (spawns O(log T)); an order whose regret "
        "grows faster than log T breaks the total as it breaks Theorem 5.6. The argument's own arithmetic gives "
        "(spawns + 1) x c log T = O(log^2 T), not O(log T)."
    )
    axes = Axes("stream length T (tokens)", "total regret (d_H^2)", "grows as log T (constant free)", log="x")
    fit = np.asarray(worst)[0] * np.log(ts) / np.log(ts[0])  # log T through the first point, for the eye
    return sweep_evidence(
        ts, worst, fit, (verdict, summary), axes, parts=parts,
        extra={"spawns at DMG's times, random order": spawned, "spawns": n_spawns},
        reading="total regret = sum over epochs between spawns of C-HIDA's regret; O(log T) judged by growth",
        headline="total regret at the largest T, no spawn, worst order; log T curve through the first point",
    )  # fmt: skip


CLAIMS = (
    claim(
        "sec9.2-total-regret",
        "Section 9.2 (convergence guarantee)",
        "Between spawns, standard C-HIDA regret applies; under Lemma 9.1, total regret is O(log T). Reading: the "
        "sum over epochs between spawns of C-HIDA's regret (restarted at each spawn), the constant free, judged by "
        "growth in T; measured with no spawn in the worst order found, and with a DMG pool's spawn times in random "
        "order.",
        "total regret = O(log T)",
        measure_total_regret,
        page=PAGE,
    ),
)
