"""WordNet closures embedded with the published recipe (Nickel & Kiela 2017, section 4), headless.

``WORDNET_RECIPES`` holds, per geometry, the settings that train the mammal closure: in the ball
Riemannian SGD (its step carries the metric's (1 - ||x||^2)^2 / 4, so points slow down near the rim
instead of racing to float's cap as Adam's normalised step makes them), a large batch with a matching
lr (the loss is a batch mean), 50 negatives, float64, and a long burn-in at lr / 10 (100 epochs: the
nodes settle their angles before the leaves are pushed to the rim, where a leaf placed in the wrong
branch stays there). Measured on the mammal closure at d = 5 (seed 0, 2-core machine under heavy load, so
counted in epochs): burn-in 10 plateaus at mean rank 1.85 (epochs 200 to 752, MAP 0.93-0.935); burn-in 40
reaches MAP 0.949, mean rank 1.53 at 350 epochs; burn-in 100 reaches MAP 0.949, mean rank 1.46 at 350
epochs (0.951 / 1.47 at 400), and lr 20 then plateaus at mean rank 1.45-1.47 (epochs 450 to 800). The
leftover rank is a few leaves ranked behind their siblings (pomeranian -> spitz 67th, masked shrew ->
shrew 62nd: the 50 worst pairs held 1,396 of the 2,984 excess ranks at epoch 450). Continuing from epoch
450 did not fix it: lr 2 for 100 epochs 1.455, 250 negatives 1.56-1.57, 10 of the 50 negatives drawn
from the 20 nearest unrelated nodes 1.51-1.53. Half the rate did: lr 10 (burn-in at 1) reaches mean rank
1.281 at 450 epochs, 1.260 at 550 and 1.250 at 600 (MAP 0.960), 102 cpu seconds in 272 s of wall time at
load average 7-9: the published figures (MAP 0.927, mean rank 1.26) are both met.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass, replace

from georesolver_core.embeddings.sparse import sparse_relation
from georesolver_core.embeddings.trainer import EmbeddingConfig, EmbeddingTrainer
from georesolver_core.validate import check_range
from georesolver_core.wordnet.closure import Closure, load_mammals, mammal_closure, noun_closure

_COMMON = dict(
    negatives=50, batch_size=256, burn_in=10, dtype="float64", epochs=1000, eval_every=10**5, norm_order=0.0
)
WORDNET_RECIPES: dict[str, EmbeddingConfig] = {
    # the ball's burn-in is 100 epochs: at equal epochs it cut the mean rank from 1.85 (burn-in 10) to 1.47;
    # lr 10 instead of 20 then takes the mean rank from a 1.45 plateau to 1.25 by epoch 600
    "poincare": EmbeddingConfig(
        geometry="poincare", dim=5, optimizer="rsgd", lr=10.0, **{**_COMMON, "burn_in": 100}
    ),
    "euclidean": EmbeddingConfig(geometry="euclidean", dim=5, optimizer="radam", lr=0.1, **_COMMON),
    "sphere": EmbeddingConfig(geometry="sphere", dim=5, optimizer="radam", lr=0.05, **_COMMON),
}
# The record this is measured against: Nickel & Kiela (2017), Table 1, WordNet mammals: geometry -> dim -> figures.
PUBLISHED_MAMMALS = {"poincare": {5: {"mean_rank": 1.26, "map": 0.927}, 10: {"mean_rank": 1.15, "map": 0.931}}}
# The noun-closure reconstruction, Poincaré row at d = 10 of Nickel & Kiela (2017), Table 1 (quoted).
PUBLISHED_NOUNS = {"poincare": {10: {"mean_rank": 4.02, "map": 0.851}}}


def published(geometry: str, dim: int, *, nouns: bool = False) -> dict:
    """The published mammal (or noun) figures for this geometry and dimension ({} where there are none)."""
    return (PUBLISHED_NOUNS if nouns else PUBLISHED_MAMMALS).get(geometry, {}).get(dim, {})


# Above this many nodes the relation is kept sparse (sorted pairs; a dense noun-closure matrix is 6.7 GB of
# bools), ranked in row chunks, and the result document carries no point coordinates (too big for JSON).
MAX_DENSE_NODES = 5000


@dataclass(frozen=True)
class Dataset:
    label: str
    load: callable  # () -> Closure


DATASETS: dict[str, Dataset] = {
    "wordnet-mammals": Dataset("WordNet 3.0 mammal closure (shipped)", load_mammals),
    "wordnet-mammals-db": Dataset("WordNet 3.0 mammal closure, rebuilt from the database", mammal_closure),
    "wordnet-nouns": Dataset("WordNet 3.0 noun closure, built from the database", noun_closure),
}


def load_dataset(name: str) -> Closure:
    """The closure of a DATASETS key; ValueError naming the choices (or how to get the database)."""
    if name not in DATASETS:
        raise ValueError(f"dataset must be one of {sorted(DATASETS)} (got {name!r})")
    return DATASETS[name].load()


def recipe(geometry: str, **overrides) -> EmbeddingConfig:
    """The geometry's recipe with ``overrides`` (any EmbeddingConfig field); bad values raise ValueError."""
    if geometry not in WORDNET_RECIPES:
        raise ValueError(f"geometry must be one of {sorted(WORDNET_RECIPES)} (got {geometry!r})")
    return replace(WORDNET_RECIPES[geometry], **overrides)


def embed_closure(
    closure: Closure, config: EmbeddingConfig, *, time_budget_s: float | None = None, device=None, callbacks=None
) -> dict:
    """Train ``config`` on the closure's directed relation; returns the JSON-ready result document:
    nodes, points (the model's own coordinates; not above MAX_DENSE_NODES), geometry, c, settings, metrics
    (published protocol), the published figures, epochs, status, seconds (wall, cpu, evaluation) and load."""
    if time_budget_s is not None:
        check_range("time_budget_s", time_budget_s, 0.1, 86_400.0)
    start, cpu = time.perf_counter(), time.process_time()
    trainer = closure_trainer(closure, config, device=device)
    trainer.run(time_budget_s=time_budget_s, callbacks=callbacks)
    doc = closure_result(closure, trainer)
    doc["settings"]["time_budget_s"] = time_budget_s
    # cpu_seconds and the load say how much of the wall time this run actually got on a shared machine
    load = list(os.getloadavg())
    return {
        **doc,
        "wall_seconds": time.perf_counter() - start,
        "cpu_seconds": time.process_time() - cpu,
        "load_average_1_5_15min": load,
    }


def closure_trainer(closure: Closure, config: EmbeddingConfig, *, device=None) -> EmbeddingTrainer:
    """A trainer for the closure's directed relation (positives hyponym -> ancestor); above MAX_DENSE_NODES
    the relation is a SparseRelation (no (N, N) matrix anywhere, training or evaluation)."""
    if closure.n_nodes > MAX_DENSE_NODES:
        relation = sparse_relation(closure.pairs, closure.n_nodes)
    else:
        relation = closure.relation()
    return EmbeddingTrainer(closure.to_hierarchy(), config, device=device, relation=relation)


def closure_result(closure: Closure, trainer: EmbeddingTrainer) -> dict:
    """The JSON-ready document of a trained closure (see ``embed_closure``), without the wall time; no
    nodes or points above MAX_DENSE_NODES. ``eval_seconds``: the exact evaluation's wall time."""
    config = trainer.config
    start = time.perf_counter()
    metrics = trainer.evaluate()
    eval_seconds = time.perf_counter() - start
    small = closure.n_nodes <= MAX_DENSE_NODES
    return {
        "dataset": closure.name,
        "n_nodes": closure.n_nodes,
        "n_pairs": closure.n_pairs,
        **({"nodes": list(closure.nodes), "points": trainer.points().double().tolist()} if small else {}),
        "geometry": config.geometry,
        "c": trainer.model.c,
        "settings": asdict(config),
        "metrics": {"mean_rank": metrics["mean_rank"], "map": metrics["map"]},
        "published": published(config.geometry, config.dim, nouns=not small),
        "epochs_run": trainer.epoch,
        "status": trainer.status,
        "train_seconds": trainer.train_seconds,
        "eval_seconds": eval_seconds,
    }
