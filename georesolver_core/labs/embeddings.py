"""The Embeddings page's lab, besides training itself (``embeddings.EmbeddingTrainer``): its schedule
(``page_schedule``), which trained points each view draws from, and the radius-by-depth series (paper
section 5.2: leaves run to the rim of the ball).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch

from georesolver_core.embeddings.compare import GeometryComparison
from georesolver_core.embeddings.metrics import relative_radius
from georesolver_core.embeddings.trainer import EmbeddingConfig, EmbeddingTrainer
from georesolver_core.geometry import GEOMETRIES
from georesolver_core.tasks.hierarchy import Hierarchy

# Defaults that make a Poincaré tree look like one in float32 (measured on the depth-4 binary tree, seed 0,
# lr 0.05 / burn-in 30 / 100 epochs, with the trainer's norm-order regulariser: root at norm 0.00, levels at
# 0.49, 0.81, 0.95, 0.97, MAP 0.99, no point at the rim cap; after 1000 epochs the root is still at 0.01 and
# every parent inside its children, where without the regulariser the root had drifted to 0.91).
LR_DEFAULT = 0.05
BURN_IN = 30
EVALUATIONS = 20  # metrics this many times per run: enough points for the history curve
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


@dataclass(frozen=True)
class TrainedPoints:
    """One trained embedding a view draws: its points, geometry, curvature and where it came from."""

    geometry: str
    points: torch.Tensor  # (N, ambient_dim)
    c: float  # the ball's curvature parameter (1.0 elsewhere)
    origin: str  # "the live run" or "the comparison"


def _live(trainer: EmbeddingTrainer) -> TrainedPoints:
    return TrainedPoints(
        geometry=trainer.config.geometry, points=trainer.points(), c=trainer.model.c, origin="the live run"
    )


def _compared(comparison: GeometryComparison) -> dict[str, TrainedPoints]:
    return {
        g: TrainedPoints(geometry=g, points=torch.from_numpy(r.points), c=r.c, origin="the comparison")
        for g, r in comparison.runs.items()
    }


def ball_points(trainer: EmbeddingTrainer | None, comparison: GeometryComparison | None) -> TrainedPoints | None:
    """The Poincaré embedding to carry onto the sphere: the live run once it has trained in the ball,
    else the comparison's ball run; None when neither exists."""
    if (
        trainer is not None and GEOMETRIES[trainer.config.geometry].has_curvature_parameter and trainer.epoch > 0
    ):  # the ball
        return _live(trainer)
    return _compared(comparison)["poincare"] if comparison is not None else None


def radius_by_depth(
    hierarchy: Hierarchy, trainer: EmbeddingTrainer | None, comparison: GeometryComparison | None
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """geometry -> (depth (N,), relative radius (N,)) for the ball and the plane (the sphere has no centre):
    from the comparison when there is one (both geometries), else from the live run."""
    if comparison is not None:
        runs = _compared(comparison)
    else:
        runs = {trainer.config.geometry: _live(trainer)} if trainer is not None else {}
    return {
        g: (hierarchy.depth, relative_radius(r.points, geometry=g, c=r.c).numpy())
        for g, r in runs.items()
        if not GEOMETRIES[g].is_compact
    }


def progress_text(trainer: EmbeddingTrainer, running: bool) -> str:
    """The progress bar's line: epoch, status ("training" while a live run is under way) and seconds."""
    status = "training" if running and not trainer.done else trainer.status
    return f"epoch {trainer.epoch} / {trainer.config.epochs} ({status}), {trainer.train_seconds:.1f} s of training"


def rim_warning(trainer: EmbeddingTrainer) -> str | None:
    """What to say when float32 ball points sit at the rim cap (distances saturate, gradients vanish
    without an error); None when none do, in float64, or off the ball (metrics.rim_saturation)."""
    rim = trainer.rim_report()
    if not rim or rim["n_at_cap"] == 0 or rim["dtype"] != "float32":
        return None
    return (
        f"{rim['n_at_cap']} of {trainer.hierarchy.n_nodes} points sit at float32's rim cap (sqrt(c)||x|| = "
        f"{rim['cap']:.3f}): their distances saturate and their gradients vanish, silently. float64 resolves "
        f"up to {rim['cap_float64']:.5f}."
    )


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
