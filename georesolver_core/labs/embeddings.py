"""The Embeddings page's lab: its live run (``embedding_steps``, a generator a worker runs: the data
rebuilt from plain values, an ``EmbeddingTrainer`` advanced an epoch at a time, an ``EmbeddingSnapshot``
yielded after each), the three-geometry comparison and the WordNet benchmark's small re-run for workers
(``comparison_steps``, ``benchmark_steps``), its schedule (``page_schedule``), which trained points each
view draws from, and the radius-by-depth series (paper section 5.2: leaves run to the rim of the ball).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from georesolver_core.embeddings.benchmark import QUICK_ENTRIES
from georesolver_core.embeddings.benchmark import benchmark_steps as run_benchmark_steps
from georesolver_core.embeddings.compare import GeometryComparison, compare_steps
from georesolver_core.embeddings.metrics import relative_radius
from georesolver_core.embeddings.trainer import ENDED, EmbeddingConfig, EmbeddingStatus, EmbeddingTrainer
from georesolver_core.geometry import GEOMETRIES
from georesolver_core.tasks.hierarchy import Hierarchy, from_edges
from georesolver_core.wordnet.closure import load_mammals

# Defaults that make a Poincaré tree look like one in float32 (measured on the depth-4 binary tree, seed 0,
# lr 0.05 / burn-in 30 / 100 epochs, with the trainer's norm-order regulariser: root at norm 0.00, levels at
# 0.49, 0.81, 0.95, 0.97, MAP 0.99, no point at the rim cap; after 1000 epochs the root is still at 0.01 and
# every parent inside its children, where without the regulariser the root had drifted to 0.91).
LR_DEFAULT = 0.05
BURN_IN = 30
EVALUATIONS = 20  # metrics this many times per run: enough points for the history curve
SLICE_S = 0.5  # at most this much of one epoch between two snapshots (a large upload's epoch may be long)
EVAL_RATIO = 9.0  # train at least this many times as long as the last measurement took before the next (<= 10%)
# (key of embedding_metrics, label, number format, help); labels short enough for a narrow column
METRIC_LABELS = (
    ("map", "MAP (edges)", ".3f", "Mean average precision of edge reconstruction; 1 is perfect."),
    ("mean_rank", "Mean rank", ".2f", "Rank of a true neighbour among non-neighbours; 1 is perfect."),
    ("avg_distortion", "Avg distortion", ".3f", "Mean |s d / d_tree - 1| at the best scale s."),
    ("worst_distortion", "Worst distortion", ".3g", "Worst-case distortion: max(d/d_tree) / min(d/d_tree)."),
)


def page_schedule(config: EmbeddingConfig) -> EmbeddingConfig:
    """``config`` on the page's schedule: a burn-in of BURN_IN epochs (at most half the run) and EVALUATIONS
    evaluations; every other field as it is."""
    epochs = config.epochs
    return replace(config, burn_in=min(BURN_IN, epochs // 2), eval_every=max(1, epochs // EVALUATIONS))


# ---- The live run, in a worker ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RunData:
    """The live run's data as plain values (a job's arguments cross to its worker as JSON): a hierarchy by
    its names and edges, which ``from_edges`` rebuilds exactly (any source, an upload included), or the
    shipped WordNet mammal closure by name (its (N, N) relation would not fit a job's config)."""

    name: str
    nodes: tuple[str, ...] = ()  # node names, index = node id
    edges: tuple[tuple[int, int], ...] = ()  # (parent, child) node indices
    notes: tuple[str, ...] = ()
    closure: bool = False  # the mammal closure (``load_mammals``), trained on its hyponym -> ancestor pairs


def run_data(hierarchy: Hierarchy, *, closure: bool = False) -> RunData:
    """``hierarchy`` as ``RunData``; ``closure``: it is the shipped mammal closure's (sent by name)."""
    if closure:
        return RunData(name=hierarchy.name, closure=True)
    edges = tuple((int(p), int(c)) for p, c in hierarchy.edges.tolist())
    return RunData(name=hierarchy.name, nodes=tuple(hierarchy.nodes), edges=edges, notes=tuple(hierarchy.notes))


def build_run(data: RunData) -> tuple[Hierarchy, np.ndarray | None]:
    """(hierarchy, relation (N, N) bool or None) from ``RunData``: what the trainer is built on."""
    if data.closure:
        closure = load_mammals()
        return closure.to_hierarchy(), closure.relation()
    return from_edges(list(data.nodes), list(data.edges), name=data.name, notes=data.notes), None


@dataclass(frozen=True, eq=False)
class EmbeddingSnapshot:
    """One moment of a live run, everything the page draws: plain values and arrays, small enough to cross
    from the worker as a progress event after every epoch (the trainer itself stays in the worker)."""

    config: EmbeddingConfig
    points: np.ndarray  # (N, ambient_dim) on the CPU
    c: float  # the ball's curvature parameter (learnt or fixed; 1.0 off the ball)
    epoch: int  # epochs trained
    progress: float  # fraction of config.epochs, a half-finished epoch's batches counted
    train_seconds: float
    status: EmbeddingStatus
    message: str  # why a run diverged ("" otherwise)
    history: tuple[dict, ...]  # one record per epoch: epoch, loss, c, train_seconds; MAP etc. when measured
    metrics: dict = field(default_factory=dict)  # the newest measurement (``EmbeddingTrainer.evaluate``)
    rim: dict | None = None  # ``EmbeddingTrainer.rim_report``: ball points at their dtype's rim cap
    n_pairs: int = 0  # positives trained on
    closure: bool = False  # trained and measured on a directed closure (WordNet's published protocol)

    @property
    def n_nodes(self) -> int:
        return int(self.points.shape[0])

    @property
    def done(self) -> bool:
        return self.status in ENDED

    @property
    def measured_epoch(self) -> int:
        """The epoch of the newest history record with a measurement (the current epoch if none has one)."""
        evaluated = [r["epoch"] for r in self.history if "map" in r]
        return evaluated[-1] if evaluated else self.epoch


def snapshot(trainer: EmbeddingTrainer) -> EmbeddingSnapshot:
    """Where ``trainer`` stands, copied out of it."""
    return EmbeddingSnapshot(
        config=trainer.config,
        points=trainer.points().numpy(),
        c=float(trainer.model.c),
        epoch=trainer.epoch,
        progress=float(trainer.progress),
        train_seconds=float(trainer.train_seconds),
        status=trainer.status,
        message=trainer.message,
        history=tuple(dict(r) for r in trainer.history),
        metrics=dict(trainer.metrics),
        rim=trainer.rim_report(),
        n_pairs=int(trainer.pairs.shape[0]),
        closure=trainer.relation is not trainer.hierarchy.adjacency,
    )


def _measurable(trainer: EmbeddingTrainer) -> bool:
    """Finite points and, on the ball, a curvature left in range: a diverged run has nothing to rank."""
    c = trainer.model.c
    return math.isfinite(c) and c > 0 and bool(torch.isfinite(trainer.model.points).all())


def embedding_steps(data: RunData, config: EmbeddingConfig, *, device: str = "cpu"):
    """The page's live run, for a worker (``jobs.steps_job``): yields (fraction, text, EmbeddingSnapshot)
    after each epoch (at most SLICE_S of one between yields) and returns the last snapshot.

    Mean rank and MAP (``EmbeddingTrainer.evaluate``) join the epoch's history record when due: once the
    training since the last measurement took EVAL_RATIO times as long as it did (so measuring takes at most
    1 / (1 + EVAL_RATIO) of the run), besides the trainer's own ``config.eval_every`` and the end. Until the
    first measurement the snapshot's metrics are those of the points where they stand."""
    hierarchy, relation = build_run(data)
    trainer = EmbeddingTrainer(hierarchy, config, device=device, relation=relation)
    cost, trained_at = 0.0, -math.inf
    while True:
        trainer.run(epochs=1, time_budget_s=SLICE_S)
        epoch_end = math.isclose(trainer.progress * config.epochs, trainer.epoch)
        due = trainer.train_seconds - trained_at >= EVAL_RATIO * cost
        if trainer.history and epoch_end and due and "map" not in trainer.history[-1] and _measurable(trainer):
            t0 = time.perf_counter()
            trainer.history[-1].update(trainer.evaluate())
            cost, trained_at = time.perf_counter() - t0, trainer.train_seconds
        if not trainer.metrics and _measurable(trainer):
            trainer.evaluate()  # the cards' first figures, mid-epoch (not a history record)
        snap = snapshot(trainer)
        yield snap.progress, f"epoch {snap.epoch} / {config.epochs}, {snap.train_seconds:.1f} s of training", snap
        if trainer.done:
            return snap


# ---- The comparison and the benchmark's small re-run, in a worker -------------------------------------------

COMPARE_BUDGET_S = 60.0  # "Train all three" stops here at the latest (split evenly over the geometries)
QUICK_S = 5.0  # seconds per model of the benchmark's small re-run
QUICK_OVERRIDES = {"burn_in": 10}  # the recipe's 100-epoch burn-in would fill a few seconds


def comparison_steps(
    data: RunData, config: EmbeddingConfig, *, device: str = "cpu", time_budget_s: float | None = COMPARE_BUDGET_S
):
    """The three-geometry comparison (``compare.compare_steps``) for a worker: the hierarchy rebuilt from
    ``data``; yields after every epoch (the partial: the geometries finished so far) and returns the
    ``GeometryComparison``. ``time_budget_s``: the comparison's own budget, shared evenly."""
    hierarchy, _ = build_run(data)
    return (yield from compare_steps(hierarchy, config, device=device, budget_s=time_budget_s))


def benchmark_steps(
    seed: int, *, time_budget_s: float = QUICK_S, entries=QUICK_ENTRIES, overrides: dict | None = None
):
    """The WordNet benchmark's small re-run for a worker: the mammal closure loaded there, each entry of
    ``entries`` trained for ``time_budget_s`` seconds (``benchmark.benchmark_steps``, no gensim); yields the
    report so far after every row and returns the report."""
    overrides = QUICK_OVERRIDES if overrides is None else overrides
    steps = run_benchmark_steps(
        load_mammals(), budget_s=time_budget_s, seed=seed, entries=entries, with_gensim=False, overrides=overrides
    )
    return (yield from steps)


def comparison_warning(result: GeometryComparison) -> str | None:
    """What to say when the comparison is not final: a geometry is missing (stopped) or ran out of time."""
    missing = [GEOMETRIES[g].label for g in GEOMETRIES if g not in result.runs]
    if missing:
        return (
            f"Stopped before {', '.join(missing)} trained: the geometries below finished; press Train all three "
            "for the whole comparison."
        )
    if not result.complete:
        budget = "time" if result.budget_s is None else f"{result.budget_s:.0f} s"
        return (
            f"The {budget} budget ended some runs before {result.config.epochs} epochs (see "
            "'epochs run'): each geometry had the same time, so the comparison is fair, but not final."
        )
    return None


# ---- The views --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainedPoints:
    """One trained embedding a view draws: its points, geometry, curvature and where it came from."""

    geometry: str
    points: torch.Tensor  # (N, ambient_dim)
    c: float  # the ball's curvature parameter (1.0 elsewhere)
    origin: str  # "the live run" or "the comparison"


def _live(run: EmbeddingSnapshot) -> TrainedPoints:
    return TrainedPoints(
        geometry=run.config.geometry, points=torch.from_numpy(run.points), c=run.c, origin="the live run"
    )


def _compared(comparison: GeometryComparison) -> dict[str, TrainedPoints]:
    return {
        g: TrainedPoints(geometry=g, points=torch.from_numpy(r.points), c=r.c, origin="the comparison")
        for g, r in comparison.runs.items()
    }


def ball_points(run: EmbeddingSnapshot | None, comparison: GeometryComparison | None) -> TrainedPoints | None:
    """The Poincaré embedding to carry onto the sphere: the live run once it has trained in the ball,
    else the comparison's ball run; None when neither exists."""
    if run is not None and GEOMETRIES[run.config.geometry].has_curvature_parameter and run.epoch > 0:  # the ball
        return _live(run)
    return _compared(comparison).get("poincare") if comparison is not None else None


def radius_by_depth(
    hierarchy: Hierarchy, run: EmbeddingSnapshot | None, comparison: GeometryComparison | None
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """geometry -> (depth (N,), relative radius (N,)) for the ball and the plane (the sphere has no centre):
    from the comparison when there is one (both geometries), else from the live run."""
    if comparison is not None:
        runs = _compared(comparison)
    else:
        runs = {run.config.geometry: _live(run)} if run is not None else {}
    return {
        g: (hierarchy.depth, relative_radius(r.points, geometry=g, c=r.c).numpy())
        for g, r in runs.items()
        if not GEOMETRIES[g].is_compact
    }


def progress_text(run: EmbeddingSnapshot, running: bool) -> str:
    """The progress bar's line: epoch, status ("training" while a live run is under way) and seconds."""
    status = "training" if running and not run.done else run.status
    return f"epoch {run.epoch} / {run.config.epochs} ({status}), {run.train_seconds:.1f} s of training"


def rim_warning(run: EmbeddingSnapshot) -> str | None:
    """What to say when float32 ball points sit at the rim cap (distances saturate, gradients vanish
    without an error); None when none do, in float64, or off the ball (metrics.rim_saturation)."""
    rim = run.rim
    if not rim or rim["n_at_cap"] == 0 or rim["dtype"] != "float32":
        return None
    return (
        f"{rim['n_at_cap']} of {run.n_nodes} points sit at float32's rim cap (sqrt(c)||x|| = "
        f"{rim['cap']:.3f}): their distances saturate and their gradients vanish, silently. float64 resolves "
        f"up to {rim['cap_float64']:.5f}."
    )


def origin_distance_sample(points: np.ndarray, *, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` of the Poincaré-ball points (N, d), c = 1, drawn without replacement: (their indices (n,),
    sorted; their distance to the origin d(0, x) = 2 artanh(||x||) (n,))."""
    pick = np.sort(np.random.default_rng(seed).choice(len(points), size=min(n, len(points)), replace=False))
    norm = np.linalg.norm(points[pick], axis=1)  # (n,)
    return pick, 2.0 * np.arctanh(np.minimum(norm, 1.0 - 1e-16))  # capped below 1: a rim point stays finite


def benchmark_rows(doc: dict) -> list[dict]:
    """The WordNet benchmark report (``embeddings.benchmark.run_benchmark``) as table rows with readable names."""
    return [
        {
            "model": r["name"],
            "MAP": r["map"],
            "mean rank": r["mean_rank"],
            "epochs": r["epochs_run"],
            "seconds": r["train_seconds"],
            "published MAP": r.get("published", {}).get("map"),
            "published mean rank": r.get("published", {}).get("mean_rank"),
        }
        for r in doc["rows"]
    ]


def closure_report_rows(doc: dict) -> list[dict]:
    """A closure run's small report (``embed_closure`` without points, e.g. the noun closure) as one table row."""
    return [
        {
            "model": f"this project, {doc['geometry']} d={doc['settings']['dim']}",
            "closure": f"{doc['dataset']}: {doc['n_nodes']:,} nodes, {doc['n_pairs']:,} pairs",
            "MAP": doc["metrics"]["map"],
            "mean rank": doc["metrics"]["mean_rank"],
            "epochs": doc["epochs_run"],
            "seconds": doc["train_seconds"],
            "evaluation seconds": doc["eval_seconds"],
            "published MAP": doc.get("published", {}).get("map"),
            "published mean rank": doc.get("published", {}).get("mean_rank"),
        }
    ]
