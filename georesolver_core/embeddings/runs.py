"""Headless runs behind ``embed --method fast`` and ``embed --method construct``: train or construct a closure's
embedding, export its points (``fast.write_points``) and measure the exported file, so the reported figures
are the file's, recomputable by anyone (``fast.read_points`` + any evaluator of the published protocol).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import numpy as np
import torch

from georesolver_core.embeddings.construct import construct_closure, spanning_parents
from georesolver_core.embeddings.fast import (
    FastConfig,
    FastPoincareTrainer,
    read_points,
    rim_fraction,
    write_points,
)
from georesolver_core.embeddings.sparse import sparse_reconstruction, sparse_relation
from georesolver_core.embeddings.wordnet import published
from georesolver_core.wordnet.closure import Closure

# construct: the edge length per dataset, the best edge MAP of a float64 sweep measured here. Mammals (depth
# 9, up to 35 children), all rows: tau 3, 4, 5, 6, 8 -> 0.65, 0.91, 0.98, 0.88, 0.58 (siblings need
# tau > 2 ln(36 / pi) ~ 4.9; past 5 the deep levels pass float64's radius ~37). Nouns (depth 18, up to 507
# children), 1,000 sampled rows: tau 2, 3, 4, 5, 6 -> 0.12, 0.37, 0.59, 0.67, 0.56 (closure MAP 0.02 ..
# 0.13, best at 5): no tau both clears 507 siblings (~10.2) and keeps 18 levels inside float64.
DEFAULT_TAU = {"wordnet-mammals": 5.0, "wordnet-mammals-db": 5.0, "wordnet-nouns": 5.0}


# Above this many nodes a construction's figures are estimated on SAMPLE_ROWS rows: a tree embedding ranks
# many unrelated nodes before a far ancestor, and sorting them for all 82,115 nouns would take about half an
# hour of CPU here (1,000 rows took 10-13 CPU seconds).
SAMPLE_ABOVE, SAMPLE_ROWS = 5000, 2000


def edge_relation(closure: Closure):
    """The hierarchy's direct edges, both ways, as a SparseRelation: the graph Sala et al. (2018) reconstruct
    (a node's neighbours are its parents and children), beside the closure's hyponym -> ancestor relation."""
    d = np.asarray(closure.direct, dtype=np.int64).reshape(-1, 2)
    return sparse_relation(np.concatenate([d, d[:, ::-1]]), closure.n_nodes)


def measure_points(
    closure: Closure, points, *, edges: bool = True, sample: int | None = None, seed: int = 0
) -> dict:
    """Mean rank and MAP of (N, D) Poincaré points on the closure (published protocol) and, with ``edges``,
    on the direct edges (Sala et al.'s graph reconstruction); exact, sparse (no (N, N) matrix). ``sample``:
    only that many rows, drawn with ``seed`` (each still ranked exactly against all N): an estimate."""
    x = torch.as_tensor(np.asarray(points, dtype=np.float64))
    nodes = None
    if sample is not None and sample < closure.n_nodes:
        pick = torch.randperm(closure.n_nodes, generator=torch.Generator().manual_seed(seed))
        nodes = pick[:sample].sort().values
    rel = sparse_relation(closure.pairs, closure.n_nodes)
    out = {"closure": sparse_reconstruction(x, rel, geometry="poincare", nodes=nodes)}
    if edges:
        out["edges"] = sparse_reconstruction(x, edge_relation(closure), geometry="poincare", nodes=nodes)
    return out


def embed_fast(
    closure: Closure,
    config: FastConfig,
    *,
    time_budget_s: float,
    out_points: str | None = None,
    log: Callable[[str], object] | None = None,
    cpu_budget: bool = False,
    sample: int | None = None,
) -> dict:
    """Train with ``FastPoincareTrainer`` for ``time_budget_s`` seconds; the best sampled MAP's points are written
    to ``out_points`` (atomically, each time they improve: a killed run leaves the last complete embedding),
    and at the end measured exactly from what was written (float32). ``cpu_budget``: the budget counts CPU
    seconds (``FastPoincareTrainer.run``). ``sample``: measure that many rows only (``measure_points``; the
    report's ``metrics_rows`` says so), for short runs whose unsettled points make every row slow to rank.
    Returns the JSON-ready report."""
    start, cpu0 = time.perf_counter(), time.process_time()
    relation = sparse_relation(closure.pairs, closure.n_nodes)
    trainer = FastPoincareTrainer(relation, config)

    def save(t: FastPoincareTrainer) -> None:
        if out_points:
            write_points(out_points, closure.nodes, t.best_points, epoch=t.best["epoch"])

    def report(record: dict) -> None:
        if log is not None:
            log(
                f"epoch {record['epoch']}: loss {record['loss']:.4f}, {record['train_seconds']:.0f} s "
                f"(cpu {record['train_cpu_seconds']:.0f} s), sampled MAP {record['sampled_map']:.3f}, "
                f"mean rank {record['sampled_mean_rank']:.2f}, at the rim {record['rim_fraction']:.1%}"
            )

    best = trainer.run(time_budget_s=time_budget_s, on_eval=report, on_best=save, cpu_budget=cpu_budget)
    train_wall, train_cpu = time.perf_counter() - start, time.process_time() - cpu0
    eval_start = time.perf_counter()
    if out_points:
        names, pts = read_points(out_points)
        if names != list(closure.nodes):
            raise ValueError(f"out_points {out_points!r} does not hold this closure's nodes in order")
    else:
        pts = trainer.best_points.float().double().numpy()  # what a float32 file would hold
    metrics = measure_points(closure, pts, edges=False, sample=sample)["closure"]
    rows = closure.n_nodes if sample is None else min(sample, closure.n_nodes)
    return {
        "dataset": closure.name,
        "n_nodes": closure.n_nodes,
        "n_pairs": closure.n_pairs,
        "method": "fast",
        "geometry": "poincare",
        "c": 1.0,
        "settings": {
            **trainer.settings(),
            "time_budget_s": time_budget_s,
            "budget_clock": "cpu" if cpu_budget else "wall",
        },
        "metrics": metrics,
        "metrics_of": "the exported float32 points, "
        + ("every node" if rows == closure.n_nodes else f"{rows:,} sampled nodes")
        + " ranked exactly (published protocol)",
        "metrics_rows": rows,
        "rim_fraction": rim_fraction(pts),
        "published": published("poincare", config.dim, nouns=closure.n_nodes > 5000),
        "best": best,
        "epochs_run": trainer.epoch,
        "history": trainer.history,
        "train_seconds": train_wall,
        "train_cpu_seconds": train_cpu,
        "eval_seconds": time.perf_counter() - eval_start,
        "wall_seconds": time.perf_counter() - start,
        "cpu_seconds": time.process_time() - cpu0,
        "threads": torch.get_num_threads(),
        "load_average_1_5_15min": list(os.getloadavg()),
        "points_file": os.path.basename(out_points) if out_points else None,
    }


def embed_construct(
    closure: Closure, *, tau: float, out_points: str | None = None, sample: int | None = None
) -> dict:
    """Sarkar's construction (d = 2) of the closure's spanning tree at scale ``tau``, measured on the closure
    and on the direct edges (on ``sample`` rows when given: ``metrics_rows`` says how many); points written to
    ``out_points`` when given. Returns the JSON-ready report."""
    start, cpu0 = time.perf_counter(), time.process_time()
    points = construct_closure(closure, tau=tau)
    build_cpu = time.process_time() - cpu0
    if out_points:  # float64: float32 cannot tell apart the deep levels of a construction (1 - |z| ~ 2 e^-(k tau))
        write_points(out_points, closure.nodes, points, dtype=np.float64, tau=tau)
        points = read_points(out_points)[1]
    m = measure_points(closure, points, sample=sample)
    parent = spanning_parents(closure.n_nodes, closure.direct)
    radius = 2.0 * np.arctanh(np.minimum(np.linalg.norm(points, axis=1), 1.0 - 1e-16))
    return {
        "dataset": closure.name,
        "n_nodes": closure.n_nodes,
        "n_pairs": closure.n_pairs,
        "method": "construct",
        "geometry": "poincare",
        "c": 1.0,
        "dim": 2,
        "tau": tau,
        "tree_depth": int(_depths(parent).max()),
        "max_children": int(np.bincount(parent[parent >= 0]).max()) if (parent >= 0).any() else 0,
        "max_radius": float(radius.max()),
        "metrics": m["closure"],
        "edge_metrics": m["edges"],
        "metrics_rows": closure.n_nodes if sample is None else min(sample, closure.n_nodes),
        "build_cpu_seconds": build_cpu,
        "wall_seconds": time.perf_counter() - start,
        "cpu_seconds": time.process_time() - cpu0,
        "points_file": os.path.basename(out_points) if out_points else None,
    }


def _depths(parent: np.ndarray) -> np.ndarray:
    """Depth of every node in a forest given by parent ids (-1 for roots)."""
    depth = np.zeros(parent.shape[0], dtype=np.int64)
    todo = parent >= 0
    anc = parent.copy()
    while todo.any():
        depth[todo] += 1
        anc[todo] = parent[anc[todo]]
        todo = anc >= 0
    return depth
