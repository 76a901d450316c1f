"""Train a hierarchy embedding (``model.py``: config, loss, points) in the Poincaré ball, on the sphere or
in flat space, Nickel & Kiela style.

Training runs in chunks (``run(epochs=..., time_budget_s=...)``) on a trainer that keeps all
state (points, optimiser moments, sampler), so a page can pause and resume it; progress is
reported through callbacks (``on_epoch_end``, ``on_eval``, ``on_run_end``) in minGPT's manner.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from enum import Enum

import numpy as np
import torch

from georesolver_core.device import one_cpu_thread
from georesolver_core.embeddings.metrics import embedding_metrics, rim_saturation
from georesolver_core.embeddings.model import (  # noqa: F401 (re-exported: the trainer's public names)
    LEARNT_C_RANGE,
    NORM_MARGIN,
    OPTIMIZERS,
    EmbeddingConfig,
    HierarchyEmbedding,
    check_device,
    make_manifold,
    nickel_kiela_loss,
    norm_order_penalty,
)
from georesolver_core.embeddings.sparse import SparseRelation, from_dense, sparse_reconstruction
from georesolver_core.geometry import GEOMETRIES, pairwise_distance
from georesolver_core.tasks.hierarchy import Hierarchy
from georesolver_core.validate import check_positive_int

EVENTS = ("on_epoch_end", "on_eval", "on_run_end")
_RESAMPLE_ROUNDS = 10  # negatives that hit a neighbour are redrawn this often, then masked out


class EmbeddingStatus(str, Enum):
    """Where an ``EmbeddingTrainer`` stands; equal to its value as a string (the JSON and the page show it)."""

    READY = "ready"  # before the first epoch
    PAUSED = "paused"  # between chunks: ``run`` goes on
    DONE = "done"  # ``config.epochs`` trained
    STOPPED = "stopped"  # ``stop()``: finished early, points kept
    DIVERGED = "diverged"  # the loss, a point or a learnt c became non-finite (``message`` says why)

    def __str__(self) -> str:
        return self.value

    __format__ = str.__format__  # f-strings show the value on every Python version


ENDED = (EmbeddingStatus.DONE, EmbeddingStatus.DIVERGED, EmbeddingStatus.STOPPED)


class EmbeddingTrainer:
    """Trains a HierarchyEmbedding in resumable chunks; reports through callbacks.

    ``status``: an ``EmbeddingStatus`` (ready, paused, done, stopped, diverged; ``message`` says why a run
    diverged).
    """

    def __init__(self, hierarchy: Hierarchy, config: EmbeddingConfig, *, device=None, relation=None):
        """``relation`` (N, N) bool or a ``SparseRelation``, optional: a directed relation to embed instead of
        the hierarchy's symmetric adjacency (a WordNet closure's hyponym -> ancestor pairs; sparse for the
        noun closure, where no (N, N) matrix is built). Its pairs are the positives,
        negatives of u avoid u's related nodes, and mean rank / MAP are measured on it (the published
        protocol, ``metrics.reconstruction``)."""
        self.hierarchy, self.config = hierarchy, config
        self.device = check_device(device)
        self.generator = torch.Generator().manual_seed(config.seed)
        self.model = HierarchyEmbedding(hierarchy.n_nodes, config, device=self.device, generator=self.generator)
        self.optimizer = OPTIMIZERS[config.optimizer](self.model.parameters(), lr=config.lr)
        if isinstance(relation, SparseRelation):  # a closure too large for a dense matrix (the noun closure)
            if relation.n != hierarchy.n_nodes:
                raise ValueError(f"relation must be on N = {hierarchy.n_nodes} nodes (got {relation.n})")
            if config.optimizer != "rsgd" or config.learn_curvature or config.norm_order > 0:
                raise ValueError(
                    "a sparse relation trains with optimizer 'rsgd', a fixed curvature and norm_order 0 (got "
                    f"optimizer {config.optimizer!r}, learn_curvature {config.learn_curvature}, "
                    f"norm_order {config.norm_order:g}): only the rows of a batch are updated"
                )
            self.relation = relation
            self._related = relation.to(self.device)
        else:
            if relation is not None:
                relation = np.asarray(relation, dtype=bool)
                if relation.shape != (hierarchy.n_nodes,) * 2:
                    raise ValueError(
                        f"relation must be (N, N) with N = {hierarchy.n_nodes} (got {relation.shape})"
                    )
            self.relation = hierarchy.adjacency if relation is None else relation
            self._related = from_dense(self.relation).to(self.device)  # negatives avoid these pairs
        # (P, 2) positives: the relation's pairs sorted by u, or the hierarchy's edges both ways
        self.pairs = (
            self._related.pairs if relation is not None else torch.as_tensor(hierarchy.pairs, device=self.device)
        )
        self._tree_edges = torch.as_tensor(hierarchy.edges, device=self.device).reshape(
            -1, 2
        )  # (E, 2) parent, child
        self._roots = torch.as_tensor(hierarchy.roots, device=self.device)  # (R,)
        self.epoch, self.history, self.status, self.message = 0, [], EmbeddingStatus.READY, ""
        self.train_seconds = 0.0
        self.metrics: dict = {}
        self._stop = False
        self._order: torch.Tensor | None = None  # the running epoch's edge order (None between epochs)
        self._pos, self._loss_sum, self._loss_count = 0, 0.0, 0

    @property
    def done(self) -> bool:
        return self.status in ENDED

    @property
    def progress(self) -> float:
        """Fraction of the budget done, counting the batches of a half-finished epoch."""
        part = self._pos / self._order.numel() if self._order is not None else 0.0
        return min(1.0, (self.epoch + part) / self.config.epochs)

    def pause(self) -> None:
        """Ask a running ``run`` to stop after the current epoch (e.g. from a callback or another thread)."""
        self._stop = True

    def stop(self) -> None:
        """End the run where it stands: no further ``run`` trains; points, history and metrics stay."""
        self._stop = True
        if not self.done:
            self.status = EmbeddingStatus.STOPPED

    def points(self) -> torch.Tensor:
        """The current embedding, detached, on the CPU. (N, ambient_dim)."""
        return self.model.points.detach().cpu().clone()

    def evaluate(self) -> dict:
        """Mean rank, MAP and distortion of the current points; on a SparseRelation mean rank and MAP only
        (the distortion needs the dense tree distance), ranked in row chunks."""
        if isinstance(self.relation, SparseRelation):
            self.metrics = sparse_reconstruction(
                self.model.points.detach(), self._related, geometry=self.config.geometry, c=self.model.c
            )
            return self.metrics
        self.metrics = embedding_metrics(
            self.model.points.detach(),
            self.hierarchy,
            geometry=self.config.geometry,
            c=self.model.c,
            relation=self.relation,
        )
        return self.metrics

    def rim_report(self) -> dict | None:
        """Poincaré only: points at the rim cap of their dtype (see metrics.rim_saturation)."""
        c = self.model.c
        if not (math.isfinite(c) and c > 0):  # a learnt c that collapsed: the run stopped as "diverged"
            return None
        if GEOMETRIES[self.config.geometry].rim(c) is None:
            return None
        return rim_saturation(self.model.points.detach(), c=c)

    def run(
        self,
        epochs: int | None = None,
        *,
        time_budget_s: float | None = None,
        callbacks: Mapping[str, Callable] | None = None,
    ) -> str:
        """Train up to ``epochs`` more epochs (all remaining if None), or until ``time_budget_s`` runs out,
        a callback returns True, or ``pause()`` is called. Returns the new status."""
        callbacks = dict(callbacks or {})
        unknown = set(callbacks) - set(EVENTS)
        if unknown:
            raise ValueError(f"callbacks must be keyed by {EVENTS} (got {sorted(unknown)})")
        if self.done:
            return self.status
        cfg = self.config
        target = (
            cfg.epochs if epochs is None else min(cfg.epochs, self.epoch + check_positive_int("epochs", epochs))
        )
        start, self._stop = time.perf_counter(), False
        try:
            with one_cpu_thread(self.device):
                self._loop(target, start, time_budget_s, callbacks)
        finally:
            # also when a callback raises (a page interrupting the run): the state stays consistent
            if self.status not in (EmbeddingStatus.DIVERGED, EmbeddingStatus.STOPPED):
                self.status = EmbeddingStatus.DONE if self.epoch >= cfg.epochs else EmbeddingStatus.PAUSED
        _fire(callbacks, "on_run_end", self, {"status": self.status, "epoch": self.epoch})
        return self.status

    def _loop(self, target: int, start: float, time_budget_s: float | None, callbacks: Mapping) -> None:
        """Batches until ``target`` epochs; the budget is checked after every batch, so a chunk may end
        mid-epoch: the epoch's order and position are kept and the next ``run`` carries on from there."""
        cfg = self.config
        while self.epoch < target:
            if self._order is None:
                self._start_epoch()
            while self._pos < self._order.numel():
                self._step()
                if self._curvature_left_range():
                    return
                out_of_time = time_budget_s is not None and time.perf_counter() - start >= time_budget_s
                if out_of_time and self._pos < self._order.numel():
                    return
            loss = self._loss_sum / max(self._loss_count, 1)
            self._order = None
            self.epoch += 1
            record = {"epoch": self.epoch, "loss": loss, "c": self.model.c, "train_seconds": self.train_seconds}
            if not math.isfinite(loss) or not bool(torch.isfinite(self.model.points).all()):
                self.status = EmbeddingStatus.DIVERGED
                self.message = (
                    f"the loss or a point became NaN/inf at epoch {self.epoch}: lower the learning rate "
                    f"(now {cfg.lr:g}) or use float64"
                )
                self.history.append(record)
                return
            if self.epoch % cfg.eval_every == 0 or self.epoch == cfg.epochs:
                record.update(self.evaluate())
                _fire(callbacks, "on_eval", self, record)
            self.history.append(record)
            stop = _fire(callbacks, "on_epoch_end", self, record)
            if stop is True or self._stop:
                return
            if time_budget_s is not None and time.perf_counter() - start >= time_budget_s:
                return

    def _curvature_left_range(self) -> bool:
        """A learnt c outside LEARNT_C_RANGE (or non-finite) stops training as "diverged", with the fix."""
        if not hasattr(self.model, "ball"):
            return False
        c = self.model.c
        lo, hi = LEARNT_C_RANGE
        if math.isfinite(c) and lo <= c <= hi:
            return False
        self.status = EmbeddingStatus.DIVERGED
        self.message = (
            f"the learnt curvature collapsed to c = {c:.3g} (outside [{lo:g}, {hi:g}]) at epoch {self.epoch + 1}: "
            f"lower the learning rate (now {self.config.lr:g}) or keep the curvature fixed"
        )
        return True

    def _start_epoch(self) -> None:
        cfg = self.config
        lr = cfg.lr / 10 if self.epoch < cfg.burn_in else cfg.lr
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        self._order = torch.randperm(self.pairs.shape[0], generator=self.generator).to(self.device)  # (P,)
        self._pos, self._loss_sum, self._loss_count = 0, 0.0, 0

    def _step(self) -> None:
        """One batch of edges: sample negatives, loss, Riemannian step."""
        t0 = time.perf_counter()
        idx = self._order[self._pos : self._pos + self.config.batch_size]
        batch = self.pairs[idx]  # (B, 2)
        u, v = batch[:, 0], batch[:, 1]
        neg, valid = self._negatives(u)  # (B, K)
        cand = torch.cat([v[:, None], neg], dim=1)  # (B, 1 + K)
        valid = torch.cat([torch.ones_like(valid[:, :1]), valid], dim=1)
        if isinstance(self.relation, SparseRelation):
            loss = self._sparse_step(u, cand, valid)
        else:
            loss = self._dense_step(u, cand, valid)
        self._loss_sum += float(loss.detach()) * u.numel()
        self._loss_count += u.numel()
        self._pos += idx.numel()
        self.train_seconds += time.perf_counter() - t0

    def _sparse_step(self, u: torch.Tensor, cand: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        """Riemannian SGD on the batch's rows only: x <- retr(x, -lr (1 - c||x||^2)^2 / 4 grad) for the nodes
        the batch touches, the step RiemannianSGD takes (every other row has a zero gradient, and
        retr(x, 0) = x). O(B K d) per step instead of O(N d)."""
        rows, inverse = torch.unique(torch.cat([u[:, None], cand], dim=1), return_inverse=True)  # (R,), (B, 1 + K)
        points = self.model.points
        x = points.detach()[rows].requires_grad_(True)  # (R, D)
        dist = pairwise_distance(
            x[inverse[:, :1]], x[inverse[:, 1:]], geometry=self.config.geometry, c=self.model.c, validate=False
        )[:, 0]  # (B, 1 + K)
        loss = nickel_kiela_loss(dist, valid)
        (grad,) = torch.autograd.grad(loss, x)
        lr = self.optimizer.param_groups[0]["lr"]
        with torch.no_grad():
            manifold = points.manifold
            points[rows] = manifold.retr(x.detach(), -lr * manifold.egrad2rgrad(x.detach(), grad))
        return loss

    def _dense_step(self, u: torch.Tensor, cand: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        """The optimiser's step on all points (the norm-order term and a learnt curvature touch every row)."""
        loss = nickel_kiela_loss(self.model(u, cand), valid)
        if self.config.norm_order > 0 and not GEOMETRIES[self.config.geometry].is_compact:
            loss = loss + self.config.norm_order * norm_order_penalty(
                self.model.origin_distance(), self._tree_edges, self._roots
            )
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        if hasattr(self.model, "ball"):
            # a larger learnt c shrinks the ball: pull points back inside the new radius
            with torch.no_grad():
                self.model.points.copy_(self.model.ball.projx(self.model.points))
        return loss

    def _negatives(self, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """K uniform non-neighbours of each u: draws hitting u or a neighbour are redrawn, then masked."""
        n, k = self.hierarchy.n_nodes, self.config.negatives
        w = torch.randint(n, (u.numel(), k), generator=self.generator).to(self.device)  # (B, K)
        bad = self._related.contains(u[:, None], w) | (w == u[:, None])
        for _ in range(_RESAMPLE_ROUNDS):
            if not bool(bad.any()):
                break
            redraw = torch.randint(n, w.shape, generator=self.generator).to(self.device)
            w = torch.where(bad, redraw, w)
            bad = self._related.contains(u[:, None], w) | (w == u[:, None])
        return w, ~bad


def _fire(callbacks: Mapping[str, Callable], event: str, trainer: EmbeddingTrainer, info: dict):
    fn = callbacks.get(event)
    return fn(trainer, info) if fn is not None else None


def train_embedding(
    hierarchy: Hierarchy, config: EmbeddingConfig, *, device=None, callbacks=None
) -> EmbeddingTrainer:
    """Train to the end in one call; returns the finished trainer (points, history, metrics)."""
    trainer = EmbeddingTrainer(hierarchy, config, device=device)
    trainer.run(callbacks=callbacks)
    if not trainer.metrics:
        trainer.evaluate()
    return trainer


def history_table(trainer: EmbeddingTrainer) -> list[dict]:
    """The run history as plain rows (for download): epoch, loss, c, seconds and metrics where evaluated."""
    return [
        {k: (float(v) if isinstance(v, (float, np.floating)) else v) for k, v in r.items()}
        for r in trainer.history
    ]
