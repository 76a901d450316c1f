"""Paper section 5.2(A) as one experiment: the same hierarchy, dimension, loss, optimiser and budget in
each geometry; only the distance changes.

``compare_geometries`` trains one ``EmbeddingTrainer`` per geometry under a shared wall-clock budget
(split evenly, so a run that is cut short is cut at the same time for every geometry) and returns a
``GeometryComparison``: the points, curvature, metrics and seconds of each run, and whether any run
stopped before its epochs. ``compare_steps`` is the same run as a generator that yields between epochs (a
worker runs it for the Embeddings page and the server only draws).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, replace

import numpy as np

from georesolver_core.embeddings.trainer import EmbeddingConfig, EmbeddingStatus, EmbeddingTrainer
from georesolver_core.geometry import GEOMETRIES
from georesolver_core.steps import run_to_end
from georesolver_core.tasks.hierarchy import Hierarchy
from georesolver_core.validate import check_range


@dataclass(frozen=True)
class GeometryRun:
    """One geometry's finished (or budget-stopped) run."""

    geometry: str
    points: np.ndarray  # (N, ambient_dim)
    c: float  # the ball's curvature parameter at the end (1.0 elsewhere)
    metrics: dict  # map, mean_rank, avg_distortion, worst_distortion
    seconds: float  # training time
    epochs: int  # epochs run
    status: EmbeddingStatus  # done, paused (the budget ran out) or diverged
    message: str


@dataclass(frozen=True)
class GeometryComparison:
    """Every geometry of GEOMETRIES trained with ``config`` (geometry replaced), in registry order."""

    config: EmbeddingConfig
    runs: dict[str, GeometryRun]
    budget_s: float | None

    @property
    def complete(self) -> bool:
        """Every run reached its epochs (a budget-stopped comparison is still a fair one: same time each)."""
        return all(r.status == EmbeddingStatus.DONE for r in self.runs.values())

    @property
    def metrics(self) -> dict[str, dict]:
        """geometry -> its run's metrics (what ``compare_hierarchy_capacity`` judges)."""
        return {g: r.metrics for g, r in self.runs.items()}

    def table(self) -> list[dict]:
        """One row per geometry with readable column names (for a table and its CSV)."""
        return [
            {
                "geometry": GEOMETRIES[g].label,
                "MAP (edges)": r.metrics["map"],
                "mean rank": r.metrics["mean_rank"],
                "average distortion": r.metrics["avg_distortion"],
                "worst distortion": r.metrics["worst_distortion"],
                "curvature c": r.c if GEOMETRIES[g].has_curvature_parameter else None,
                "epochs run": r.epochs,
                "training seconds": r.seconds,
            }
            for g, r in self.runs.items()
        ]


def compare_geometries(
    hierarchy: Hierarchy,
    config: EmbeddingConfig,
    *,
    device=None,
    budget_s: float | None = None,
    progress: Callable[[float, str], None] | None = None,
) -> GeometryComparison:
    """Train ``config`` in every geometry (learnt curvature only in the ball) within ``budget_s`` seconds.

    The budget is split evenly; a run that uses it up stops after its current batch and is evaluated
    where it stands (status "paused", ``epochs`` < config.epochs). ``progress(fraction, text)`` is
    called after every epoch. ``compare_steps`` is the same run, yielding between epochs.
    """
    steps = compare_steps(hierarchy, config, device=device, budget_s=budget_s)
    result = run_to_end(steps, None if progress is None else lambda step: progress(*step[:2]))
    if progress is not None:
        progress(1.0, "done")
    return result


def compare_steps(
    hierarchy: Hierarchy, config: EmbeddingConfig, *, device=None, budget_s: float | None = None
) -> Generator[tuple[float, str, GeometryComparison | None], None, GeometryComparison]:
    """``compare_geometries`` as a generator: yields (fraction done, text, the comparison of the geometries
    finished so far, None before the first) after every epoch and returns the whole comparison."""
    if budget_s is not None:
        budget_s = check_range("budget_s", budget_s, 0.1, 86_400.0)
    geos = list(GEOMETRIES)
    share = None if budget_s is None else budget_s / len(geos)
    runs: dict[str, GeometryRun] = {}
    for i, geo in enumerate(geos):
        cfg = replace(
            config,
            geometry=geo,
            learn_curvature=config.learn_curvature and GEOMETRIES[geo].has_curvature_parameter,
        )
        tr = EmbeddingTrainer(hierarchy, cfg, device=device)
        start = time.perf_counter()
        while True:  # one epoch a call (the trainer carries on where it stopped): a yield between epochs
            left = None if share is None else share - (time.perf_counter() - start)
            tr.run(epochs=1, time_budget_s=left)
            out_of_time = share is not None and time.perf_counter() - start >= share
            if tr.status != EmbeddingStatus.PAUSED or out_of_time:
                break
            text = f"{GEOMETRIES[geo].label}: epoch {tr.epoch} / {cfg.epochs}"
            yield (i + tr.progress) / len(geos), text, _so_far(config, runs, budget_s)
        metrics = tr.evaluate()
        runs[geo] = GeometryRun(
            geometry=geo,
            points=tr.points().numpy(),
            c=tr.model.c,
            metrics=metrics,
            seconds=time.perf_counter() - start,
            epochs=tr.epoch,
            status=tr.status,
            message=tr.message,
        )
        text = f"{GEOMETRIES[geo].label}: epoch {tr.epoch} / {cfg.epochs}, measured"
        yield (i + 1) / len(geos), text, _so_far(config, runs, budget_s)
    return GeometryComparison(config=config, runs=runs, budget_s=budget_s)


def _so_far(config: EmbeddingConfig, runs: dict, budget_s: float | None) -> GeometryComparison | None:
    return GeometryComparison(config=config, runs=dict(runs), budget_s=budget_s) if runs else None
