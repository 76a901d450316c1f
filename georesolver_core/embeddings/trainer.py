"""Embed a hierarchy in the Poincaré ball, on the sphere or in flat space, Nickel & Kiela style.

The loss of Nickel & Kiela (2017) pulls each edge (u, v) together and pushes u away from
K sampled non-neighbours w_1..w_K:

    L(u, v) = -log( e^{-d(u, v)} / (e^{-d(u, v)} + sum_k e^{-d(u, w_k)}) ),

the same loss in every geometry, only d changes (paper section 4: d_H in the ball, d_S on the
sphere). Points are ``geoopt.ManifoldParameter``s trained by ``RiemannianAdam`` or
``RiemannianSGD``; the first ``burn_in`` epochs run at lr/10, as Nickel & Kiela do, so that the
nodes find their places before being pushed out. Paper section 5.2(A) is what the comparison
measures: the ball's volume grows like e^{(d-1)R}, so trees fit in 2 dimensions.

The loss sees only distances and only edges, so nothing in it says the root is the centre: a long run
(RiemannianAdam's steps keep the same hyperbolic length however small the gradient) carries the root to
the rim outside its own children, the whole tree piled beside it (a Möbius translation costs the loss
nothing). ``norm_order`` adds the hierarchy's direction, in the distance to the origin r_x = d(o, x):

    L_o = mu * ( mean_{roots r} r_r^2  +  mean_{edges (p, q)} max(0, r_p - r_q + delta) ),   delta = NORM_MARGIN,

the first term anchoring the roots at the centre (it fixes the translation the loss leaves free), the
second zero once every parent sits at least delta nearer the origin than each of its children (the
generality-by-norm reading of Nickel & Kiela section 4, as in entailment cones, Ganea et al. 2018). So the
root stays inside its children however long it trains. Not applied on the sphere (no centre).

Training runs in chunks (``run(epochs=..., time_budget_s=...)``) on a trainer that keeps all
state (points, optimiser moments, sampler), so a page can pause and resume it; progress is
reported through callbacks (``on_epoch_end``, ``on_eval``, ``on_run_end``) in minGPT's manner.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import geoopt
import numpy as np
import torch
from torch import nn

from georesolver_core.device import one_cpu_thread
from georesolver_core.embeddings.metrics import embedding_metrics, rim_saturation
from georesolver_core.embeddings.sparse import SparseRelation, from_dense, sparse_reconstruction
from georesolver_core.geometry import GEOMETRIES, expmap0, pairwise_distance
from georesolver_core.tasks.hierarchy import Hierarchy
from georesolver_core.validate import check_curvature, check_positive_int, check_range

OPTIMIZERS: dict[str, type[torch.optim.Optimizer]] = {
    "radam": geoopt.optim.RiemannianAdam,
    "rsgd": geoopt.optim.RiemannianSGD,
}
EVENTS = ("on_epoch_end", "on_eval", "on_run_end")
_RESAMPLE_ROUNDS = 10  # negatives that hit a neighbour are redrawn this often, then masked out
NORM_MARGIN = 0.1  # hyperbolic units a parent must sit nearer the origin than its child (L_o's delta)
# A learnt curvature outside this range has collapsed (the ball's radius 1/sqrt(c) above ~30 or
# below ~0.03): distances then lose their digits, so training stops with a message instead.
LEARNT_C_RANGE = (1e-3, 1e3)


def check_device(device) -> torch.device:
    """A torch device this machine has: 'cuda' without a CUDA GPU is refused with the valid choice."""
    try:
        dev = torch.device(device) if device is not None else torch.device("cpu")
    except (RuntimeError, TypeError) as err:
        raise ValueError(f"device must be 'cpu' or 'cuda' (got {device!r}: {err})") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device must be 'cpu' on this machine (got {str(device)!r}: no CUDA GPU is available)")
    if dev.type not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda' (got {str(device)!r})")
    return dev


@dataclass(frozen=True)
class EmbeddingConfig:
    geometry: str = "poincare"  # "poincare", "sphere" or "euclidean"
    dim: int = 2  # intrinsic dimension: the sphere S^dim lives in R^(dim + 1)
    c: float = 1.0  # Poincaré ball curvature parameter (curvature k = -c); the start value if learnt
    learn_curvature: bool = False  # train c too (Poincaré only)
    optimizer: str = "radam"  # key of OPTIMIZERS
    lr: float = 0.1  # RiemannianAdam's step; RiemannianSGD wants ~10x more
    epochs: int = 150  # passes over all edges (both directions)
    negatives: int = 10  # K non-neighbours per edge
    batch_size: int = 16  # edges per step
    burn_in: int = 10  # first epochs at lr / 10
    init_scale: float = 1e-3  # initial tangent vectors ~ U(-init_scale, init_scale) at the origin
    seed: int = 0
    dtype: str = "float32"  # "float32" or "float64": float64 resolves points nearer the rim
    eval_every: int = 10  # metrics every this many epochs (and at the end)
    norm_order: float = 1.0  # weight mu of the parent-inside-child hinge L_o (ball and plane); 0 turns it off

    def __post_init__(self):
        if self.geometry not in GEOMETRIES:
            raise ValueError(f"geometry must be one of {sorted(GEOMETRIES)} (got {self.geometry!r})")
        check_positive_int("dim", self.dim, 1, 256)
        check_curvature(self.c)
        check_range("c", self.c, 1e-4, 1e4)
        if self.learn_curvature and not GEOMETRIES[self.geometry].uses_c:
            raise ValueError(f"learn_curvature needs geometry 'poincare' (got {self.geometry!r})")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {sorted(OPTIMIZERS)} (got {self.optimizer!r})")
        check_range("lr", self.lr, 1e-6, 100.0)
        check_positive_int("epochs", self.epochs, 1, 100_000)
        check_positive_int("negatives", self.negatives, 1, 1000)
        check_positive_int("batch_size", self.batch_size, 1, 100_000)
        check_positive_int("burn_in", self.burn_in, 0, 100_000)
        check_range("init_scale", self.init_scale, 1e-8, 0.5)
        check_positive_int("seed", self.seed, 0)
        if self.dtype not in ("float32", "float64"):
            raise ValueError(f"dtype must be 'float32' or 'float64' (got {self.dtype!r})")
        check_positive_int("eval_every", self.eval_every, 1)
        check_range("norm_order", self.norm_order, 0.0, 100.0)

    @property
    def ambient_dim(self) -> int:
        return self.dim + GEOMETRIES[self.geometry].extra_dims

    @property
    def torch_dtype(self) -> torch.dtype:
        return torch.float64 if self.dtype == "float64" else torch.float32


def nickel_kiela_loss(dist: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """Mean over rows of -log softmax(-dist)[0]. dist (B, 1 + K): column 0 the edge, then the negatives;
    valid (B, 1 + K) bool masks negatives that could not be drawn (a node adjacent to almost everyone)."""
    logits = (-dist).masked_fill(~valid, -math.inf)  # (B, 1 + K)
    return -torch.log_softmax(logits, dim=-1)[:, 0].mean()


def norm_order_penalty(
    radius: torch.Tensor, edges: torch.Tensor, roots: torch.Tensor, *, margin: float = NORM_MARGIN
) -> torch.Tensor:
    """L_o / mu = mean_roots r^2 + mean over edges (p, q) of max(0, r_p - r_q + margin).
    radius (N,) distances to the origin, edges (E, 2) rows (parent, child), roots (R,) node ids."""
    anchor = radius[roots].square().mean() if roots.numel() else radius.sum() * 0.0
    if edges.numel() == 0:
        return anchor
    return anchor + torch.relu(radius[edges[:, 0]] - radius[edges[:, 1]] + margin).mean()


def make_manifold(config: EmbeddingConfig) -> geoopt.Manifold:
    """The geoopt manifold of the config: a shared fixed ball, a fresh learnable ball, the sphere, R^d."""
    if config.learn_curvature:  # the ball (validated by the config)
        return geoopt.PoincareBall(c=config.c, learnable=True)
    return GEOMETRIES[config.geometry].manifold(config.c)


class HierarchyEmbedding(nn.Module):
    """One point per node on the config's manifold; ``forward`` gives distances of node pairs."""

    def __init__(self, n_nodes: int, config: EmbeddingConfig, *, device=None, generator=None):
        super().__init__()
        self.geometry = config.geometry
        manifold = make_manifold(config)
        dtype = config.torch_dtype
        if config.learn_curvature:
            manifold = manifold.to(device=device, dtype=dtype)
            self.ball = manifold  # registered: its curvature is then a trained parameter
        tangent = torch.rand(n_nodes, config.dim, generator=generator, dtype=dtype) * 2 - 1
        tangent = (config.init_scale * tangent).to(device)  # (N, dim)
        with torch.no_grad():
            if config.learn_curvature:
                init = manifold.expmap0(tangent)
            else:
                # tangent vectors at the origin; on the sphere at the north pole e_(dim+1): a zero last coordinate
                tangent = torch.nn.functional.pad(tangent, (0, GEOMETRIES[config.geometry].extra_dims))
                init = expmap0(tangent, geometry=config.geometry, c=config.c)
        self.points = geoopt.ManifoldParameter(init, manifold=manifold)  # (N, ambient_dim)
        self._c = config.c

    @property
    def c(self) -> float:
        """The curvature parameter now (it moves when learnt)."""
        return float(self.ball.c.detach()) if hasattr(self, "ball") else self._c

    def origin_distance(self) -> torch.Tensor:
        """d(o, x_i) of every node, with gradients: (N,), o the centre of the ball or the plane."""
        x = self.points  # (N, d)
        if hasattr(self, "ball"):
            return self.ball.dist0(x)
        o = GEOMETRIES[self.geometry].origin(x.shape[-1], dtype=x.dtype, device=x.device)[None]  # (1, d)
        return pairwise_distance(o, x, geometry=self.geometry, c=self._c, validate=False)[0]

    def forward(self, u: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        """d(x_u, x_w) for u (B,) against w (B, M) -> (B, M)."""
        x, y = self.points[u], self.points[w]  # (B, d), (B, M, d)
        if hasattr(self, "ball"):
            # geoopt's dist takes the curvature as a tensor, so the gradient reaches c; the house
            # distance takes c as a number. Near the rim it saturates (see metrics.rim_saturation).
            return self.ball.dist(x[:, None, :], y)
        return pairwise_distance(x[:, None, :], y, geometry=self.geometry, c=self._c, validate=False)[:, 0]


class EmbeddingTrainer:
    """Trains a HierarchyEmbedding in resumable chunks; reports through callbacks.

    ``status``: "ready" before the first epoch, "paused" between chunks, "done" after
    ``config.epochs``, "stopped" after ``stop()`` (finished early, points kept), "diverged" when the loss or a point became non-finite (``message`` says why).
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
        self.epoch, self.history, self.status, self.message = 0, [], "ready", ""
        self.train_seconds = 0.0
        self.metrics: dict = {}
        self._stop = False
        self._order: torch.Tensor | None = None  # the running epoch's edge order (None between epochs)
        self._pos, self._loss_sum, self._loss_count = 0, 0.0, 0

    @property
    def done(self) -> bool:
        return self.status in ("done", "diverged", "stopped")

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
            self.status = "stopped"

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
            if self.status not in ("diverged", "stopped"):
                self.status = "done" if self.epoch >= cfg.epochs else "paused"
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
                self.status = "diverged"
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
        self.status = "diverged"
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
        if self.config.norm_order > 0 and not GEOMETRIES[self.config.geometry].closed:
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
