"""The side-by-side WordNet benchmark: one closure, one protocol (``metrics.reconstruction`` on the
directed relation), one training budget per entry.

Entries: this project's Poincaré ball at d = 2, 5, 10; the Euclidean baseline at the same dimensions and
at 50 and 200; the sphere at d = 5; and gensim's ``PoincareModel`` (d = 5) when gensim is installed (the
optional extra ``peers``), trained on the same pairs and measured by the same function.

The baselines are tuned, not straw men: each entry with an ``LR_GRID`` spends a sixth of its budget on each
of three learning rates, and the one with the best MAP trains on for the remaining half (every entry gets
the same total budget; the row keeps each tried rate's MAP). gensim trains one epoch per call (its burn-in
of 10 epochs at its burn-in rate first), the clock checked between calls, so it keeps the same budget.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Generator
from dataclasses import asdict
from typing import TextIO

import numpy as np
import torch

from georesolver_core.embeddings.wordnet import closure_result, closure_trainer, embed_closure, published, recipe
from georesolver_core.wordnet.closure import Closure

ENTRIES = (
    ("poincare", 2),
    ("poincare", 5),
    ("poincare", 10),
    ("euclidean", 2),
    ("euclidean", 5),
    ("euclidean", 10),
    ("euclidean", 50),
    ("euclidean", 200),
    ("sphere", 5),
)
QUICK_ENTRIES = (("poincare", 5), ("euclidean", 5), ("sphere", 5))
# RiemannianAdam rates tried per baseline geometry (the ball's recipe rate is tuned offline, see wordnet.py)
LR_GRID: dict[str, tuple[float, ...]] = {"euclidean": (0.1, 0.5, 2.0), "sphere": (0.02, 0.1, 0.5)}
# gensim's defaults, its 10 negatives included. Not our 50: gensim draws a node's negatives by rejection
# (all distinct, none related), weighted by degree, and the closure's hubs (mammal.n.01 is related to every
# node) are drawn almost every time, so at 50 a leaf's draw is almost never accepted: one epoch did not end
# in 6 minutes, where at 10 it takes 0.7 s (20: 10 s).
GENSIM_SETTINGS = dict(negative=10, alpha=0.1, burn_in=10, burn_in_alpha=0.01, batch_size=10)
GENSIM_MISSING = 'gensim\'s PoincareModel row skipped: gensim is not installed (pip install -e ".[peers]" adds it)'


def gensim_poincare(
    closure: Closure,
    *,
    dim: int,
    budget_s: float,
    seed: int = 0,
    negative: int | None = None,
    cpu_budget: bool = False,
    sample: int | None = None,
) -> dict | None:
    """gensim's PoincareModel on the same pairs, one epoch per call until the budget; None without gensim.

    Its burn-in (``GENSIM_SETTINGS``: 10 epochs at rate 0.01, then 0.1) is run the same way, one epoch per
    call with the rate set between calls, so no call can overrun the budget by more than one epoch.
    ``negative``: negatives per pair instead of the settings' 10 (gensim needs that many unrelated nodes).
    ``cpu_budget``: the budget counts this process's CPU seconds, not wall seconds. ``sample``: rank that many
    rows only (``runs.measure_points``), an estimate."""
    from georesolver_core.embeddings.runs import measure_points

    try:
        from gensim.models.poincare import PoincareModel
    except ImportError:
        return None
    g = {**GENSIM_SETTINGS, **({} if negative is None else {"negative": negative})}
    relations = [(closure.nodes[u], closure.nodes[a]) for u, a in closure.pairs.tolist()]
    model = PoincareModel(
        relations, size=dim, negative=g["negative"], alpha=g["burn_in_alpha"], burn_in=0, seed=seed
    )
    clock = time.process_time if cpu_budget else time.perf_counter
    start, wall, cpu, epochs = clock(), time.perf_counter(), time.process_time(), 0
    while clock() - start < budget_s:
        # train() resets the rate to train_alpha on every call: the burn-in rate first, then the training rate
        model.train_alpha = g["burn_in_alpha"] if epochs < g["burn_in"] else g["alpha"]
        model.train(epochs=1, batch_size=g["batch_size"], print_every=10**9)
        epochs += 1
    seconds, cpu_seconds = time.perf_counter() - wall, time.process_time() - cpu
    x = torch.as_tensor(np.stack([model.kv[n] for n in closure.nodes]), dtype=torch.float64)  # (N, dim)
    x = x * (1 - 1e-7) / x.norm(dim=-1, keepdim=True).clamp_min(1.0)  # gensim keeps points at norm < 1
    return {
        "name": f"gensim PoincareModel d={dim}",
        "geometry": "poincare",
        "dim": dim,
        "epochs_run": epochs,
        "train_seconds": seconds,
        "train_cpu_seconds": cpu_seconds,
        "settings": dict(g),
        # the sparse ranking (exact per row; the dense one's figures, tested) also fits the 82,115 nouns
        **measure_points(closure, x.numpy(), edges=False, sample=sample)["closure"],
    }


def gensim_epoch_cpu(closure: Closure, *, dim: int, pairs: int, seed: int = 0) -> dict | None:
    """CPU seconds of one gensim epoch over ``pairs`` of the closure's pairs drawn at random, and that time
    scaled to all its pairs (gensim's cost per pair is flat: its rejection sampler draws each pair's negatives
    alone); None without gensim. Tells, before a run, whether one epoch fits a budget."""
    try:
        from gensim.models.poincare import PoincareModel
    except ImportError:
        return None
    rng = np.random.default_rng(seed)
    pick = rng.choice(closure.n_pairs, size=min(pairs, closure.n_pairs), replace=False)
    relations = [(closure.nodes[u], closure.nodes[a]) for u, a in closure.pairs[pick].tolist()]
    g = GENSIM_SETTINGS
    model = PoincareModel(relations, size=dim, negative=g["negative"], alpha=g["alpha"], burn_in=0, seed=seed)
    cpu = time.process_time()
    model.train(epochs=1, batch_size=g["batch_size"], print_every=10**9)
    spent = time.process_time() - cpu
    return {
        "pairs": len(relations),
        "cpu_seconds": spent,
        "epoch_cpu_seconds": spent * closure.n_pairs / len(relations),
    }


def tuned_run(
    closure: Closure, geometry: str, dim: int, *, budget_s: float, seed: int = 0, overrides: dict | None = None
) -> dict:
    """One entry within ``budget_s`` training seconds: the recipe as it is, or, for a geometry in LR_GRID,
    each rate for budget / 6, then the best (by MAP) on for budget / 2. The result row, with the grid.
    ``overrides``: recipe fields set for every entry (e.g. a shorter burn-in for a short budget)."""
    overrides = overrides or {}
    grid = LR_GRID.get(geometry)
    if grid is None:
        doc = embed_closure(closure, recipe(geometry, dim=dim, seed=seed, **overrides), time_budget_s=budget_s)
        return {**_row(doc, geometry, dim), "lr": doc["settings"]["lr"]}
    trials = []
    for lr in grid:
        trainer = closure_trainer(closure, recipe(geometry, dim=dim, seed=seed, **{**overrides, "lr": lr}))
        trainer.run(time_budget_s=budget_s / (2 * len(grid)))
        trials.append((trainer.evaluate()["map"], lr, trainer))
    best_map, lr, trainer = max(trials, key=lambda t: (t[0], -t[1]))
    trainer.run(time_budget_s=budget_s / 2)
    doc = closure_result(closure, trainer)
    return {
        **_row(doc, geometry, dim),
        "lr": lr,
        "lr_grid": {f"{t[1]:g}": t[0] for t in trials},  # each rate's MAP after budget / 6
        "train_seconds": sum(t[2].train_seconds for t in trials),  # the grid's seconds too
    }


def _row(doc: dict, geometry: str, dim: int) -> dict:
    return {
        "name": f"this project, {geometry} d={dim}",
        "geometry": geometry,
        "dim": dim,
        "epochs_run": doc["epochs_run"],
        "train_seconds": doc["train_seconds"],
        **doc["metrics"],
        "published": published(geometry, dim),
    }


def run_benchmark(
    closure: Closure,
    *,
    budget_s: float,
    seed: int = 0,
    entries=ENTRIES,
    with_gensim: bool = True,
    log: TextIO | None = None,
    on_row: Callable[[dict], None] | None = None,
    overrides: dict | None = None,
) -> dict:
    """Every entry trained for ``budget_s`` seconds (``tuned_run``); rows of name, geometry, dim, epochs,
    seconds, MAP, mean rank, lr, and the published Poincaré figure for that dimension where there is one.
    ``on_row(doc)`` gets the report so far (``complete`` False) after every row, e.g. to write it to disk.
    ``benchmark_steps`` is the same run, yielding after every row."""
    steps = benchmark_steps(
        closure, budget_s=budget_s, seed=seed, entries=entries, with_gensim=with_gensim, overrides=overrides
    )
    while True:
        try:
            _, _, doc = next(steps)
        except StopIteration as end:
            if log is not None and GENSIM_MISSING in end.value["notes"]:
                print(GENSIM_MISSING, file=log, flush=True)
            return end.value
        if log is not None:
            print(_line(doc["rows"][-1]), file=log, flush=True)
        if on_row is not None and len(doc["rows"]) <= len(entries):  # gensim's row is not an entry's
            on_row(doc)


def benchmark_steps(
    closure: Closure,
    *,
    budget_s: float,
    seed: int = 0,
    entries=ENTRIES,
    with_gensim: bool = True,
    overrides: dict | None = None,
) -> Generator[tuple[float, str, dict], None, dict]:
    """``run_benchmark`` as a generator: yields (fraction of the rows done, the row's line, the report so far,
    ``complete`` False) after every row, gensim's included, and returns the whole report."""
    rows, total = [], len(entries) + bool(with_gensim)
    for geometry, dim in entries:
        cpu = time.process_time()
        rows.append(tuned_run(closure, geometry, dim, budget_s=budget_s, seed=seed, overrides=overrides))
        rows[-1]["cpu_seconds"] = time.process_time() - cpu  # what a loaded machine actually gave this entry
        yield len(rows) / total, _line(rows[-1]), _report(closure, budget_s, seed, rows, overrides, complete=False)
    cpu, notes = time.process_time(), []
    if with_gensim and (g := gensim_poincare(closure, dim=5, budget_s=budget_s, seed=seed)) is not None:
        rows.append({**g, "published": {}, "cpu_seconds": time.process_time() - cpu})
        yield 1.0, _line(rows[-1]), _report(closure, budget_s, seed, rows, overrides, complete=False)
    elif with_gensim:
        notes.append(GENSIM_MISSING)
    return {**_report(closure, budget_s, seed, rows, overrides, complete=True), "notes": notes}


def _report(
    closure: Closure, budget_s: float, seed: int, rows: list[dict], overrides: dict | None, *, complete: bool
) -> dict:
    return {
        "dataset": closure.name,
        "n_nodes": closure.n_nodes,
        "n_pairs": closure.n_pairs,
        "budget_s_per_entry": budget_s,
        "seed": seed,
        "protocol": "published reconstruction (directed)",
        "settings": {
            "budget_s_per_entry": budget_s,
            "recipes": {g: asdict(recipe(g, **(overrides or {}))) for g in ("poincare", "euclidean", "sphere")},
            "overrides": dict(overrides or {}),
            "lr_grid": {g: list(v) for g, v in LR_GRID.items()},
            "lr_grid_protocol": "each rate budget/6, the best MAP on for budget/2",
            "gensim": dict(GENSIM_SETTINGS),
        },
        "machine_note": "2 shared CPU cores under load; seconds are wall clock, cpu_seconds and epochs_run say "
        "how much compute each entry got",
        "load_average_1_5_15min": list(os.getloadavg()),
        "complete": complete,  # False while rows are still being added (gensim last)
        "rows": list(rows),
    }


def _line(r: dict) -> str:
    return f"{r['name']:<32} {r['epochs_run']:>5} ep {r['train_seconds']:7.1f} s  MAP {r['map']:.3f}  rank {r['mean_rank']:.2f}"
