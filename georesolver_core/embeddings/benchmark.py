"""The side-by-side WordNet benchmark: one closure, one protocol (``metrics.reconstruction`` on the
directed relation), one training budget per entry.

Entries: this project's Poincaré ball at d = 2, 5, 10; the Euclidean baseline at the same dimensions and
at 50 and 200; the sphere at d = 5; and gensim's ``PoincareModel`` (d = 5) when gensim is installed (the
optional extra ``peers``), trained on the same pairs and measured by the same function.
"""

from __future__ import annotations

import time
from typing import TextIO

import numpy as np
import torch

from georesolver_core.embeddings.metrics import reconstruction
from georesolver_core.embeddings.wordnet import embed_closure, published, recipe
from georesolver_core.geometry import pairwise_distance
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


def gensim_poincare(closure: Closure, *, dim: int, budget_s: float, seed: int = 0) -> dict | None:
    """gensim's PoincareModel on the same pairs, one epoch at a time until the budget; None without gensim."""
    try:
        from gensim.models.poincare import PoincareModel
    except ImportError:
        return None
    relations = [(closure.nodes[u], closure.nodes[a]) for u, a in closure.pairs.tolist()]
    model = PoincareModel(relations, size=dim, negative=50, burn_in=10, seed=seed)
    start, epochs = time.perf_counter(), 0
    while time.perf_counter() - start < budget_s:
        model.train(epochs=1, batch_size=10, print_every=10**9)
        epochs += 1
    seconds = time.perf_counter() - start
    x = torch.as_tensor(np.stack([model.kv[n] for n in closure.nodes]), dtype=torch.float64)  # (N, dim)
    x = x * (1 - 1e-7) / x.norm(dim=-1, keepdim=True).clamp_min(1.0)  # gensim keeps points at norm < 1
    with torch.no_grad():
        dist = pairwise_distance(x, x, geometry="poincare", validate=False)
    return {
        "name": f"gensim PoincareModel d={dim}",
        "geometry": "poincare",
        "dim": dim,
        "epochs_run": epochs,
        "train_seconds": seconds,
        **reconstruction(dist, closure.relation()),
    }


def run_benchmark(
    closure: Closure,
    *,
    budget_s: float,
    seed: int = 0,
    entries=ENTRIES,
    with_gensim: bool = True,
    log: TextIO | None = None,
) -> dict:
    """Every entry trained for ``budget_s`` seconds; rows of name, geometry, dim, epochs, seconds, MAP,
    mean rank, and the published Poincaré figure for that dimension where there is one."""
    rows = []
    for geometry, dim in entries:
        doc = embed_closure(closure, recipe(geometry, dim=dim, seed=seed), time_budget_s=budget_s)
        rows.append(
            {
                "name": f"this project, {geometry} d={dim}",
                "geometry": geometry,
                "dim": dim,
                "epochs_run": doc["epochs_run"],
                "train_seconds": doc["train_seconds"],
                **doc["metrics"],
                "published": published(geometry, dim),
            }
        )
        if log is not None:
            print(_line(rows[-1]), file=log, flush=True)
    if with_gensim and (g := gensim_poincare(closure, dim=5, budget_s=budget_s, seed=seed)) is not None:
        rows.append({**g, "published": {}})
        if log is not None:
            print(_line(rows[-1]), file=log, flush=True)
    return {
        "dataset": closure.name,
        "n_nodes": closure.n_nodes,
        "n_pairs": closure.n_pairs,
        "budget_s_per_entry": budget_s,
        "seed": seed,
        "protocol": "published reconstruction (directed)",
        "machine_note": "2 shared CPU cores under load; seconds are indicative",
        "rows": rows,
    }


def _line(r: dict) -> str:
    return f"{r['name']:<32} {r['epochs_run']:>5} ep {r['train_seconds']:7.1f} s  MAP {r['map']:.3f}  rank {r['mean_rank']:.2f}"
