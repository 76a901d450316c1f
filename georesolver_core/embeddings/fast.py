"""A Poincaré-ball trainer for large closures (the WordNet nouns: 82,115 nodes, 743,241 pairs) on a few CPU
cores, where the published trainer ran Hogwild threads for hours.

What makes it fast (the general ``EmbeddingTrainer`` builds autograd graphs over small batches):

* **Large batches, negatives shared in blocks.** A step takes ``batch_size`` pairs (u, v); every ``block``
  consecutive pairs share one draw of ``negatives`` nodes, so the distances from the block's u to its
  negatives are one batched matmul (|u - w|^2 = |u|^2 + |w|^2 - 2 <u, w>), not a (B, K, D) gather.
* **The gradient in closed form.** With alpha = 1 - |u|^2, beta = 1 - |w|^2 and
  gamma = 1 + 2 |u - w|^2 / (alpha beta), d = arcosh(gamma) (Nickel & Kiela 2017, eq. 1) and

      dd/du = 4 / (alpha beta sqrt(gamma^2 - 1)) * ((u - w) + |u - w|^2 / alpha * u)

  (symmetric in u, w). The loss of a pair, d(u, v) + log sum_{c in {v} + negatives} exp(-d(u, c))
  (their eq. 6), has dL/dd_c = [c = v] - softmax(-d)_c: every gradient is a (B, K) coefficient matrix
  times the points, two more batched matmuls.
* **Sparse Riemannian SGD.** The per-pair gradients are summed into the rows the batch touches
  (``index_add_``) and only those rows move: x <- proj(x - lr (1 - |x|^2)^2 / 4 grad) (their eq. 5), the
  step clipped to ``max_step`` (a hub such as ``entity.n.01`` sits in thousands of pairs of one batch).
* **A rate per pair.** The loss is the batch's sum, so ``lr`` is the step one pair gives a row, whatever
  the batch: a larger batch takes proportionally larger steps (the linear scaling rule), which is what
  lets 4,096-pair batches train as fast per epoch as the published 10-pair ones.
* **Burn-in** (their section 4): the first ``burn_in`` epochs at lr / 10, so the angles settle before the
  leaves are pushed out.
* **A start down the tree** (``init="tree"``, ``tree_start``): each node starts at its parent's point plus a
  small random step, so a subtree starts in its root's direction. From a uniform start the negatives push every
  node outward before it has turned towards its ancestors, and near the rim it no longer turns: two points at
  radius r an angle theta apart are 2 r + 2 ln sin(theta / 2) apart, so turning means first moving back in
  against the negatives. Measured on the nouns at d = 10 (one thread each, 240 s, two runs side by side):
  sampled MAP 0.841 and mean rank 5.9 after 77 epochs from the tree at scale 0.03 (0.839 / 6.7 at 0.01,
  0.827 / 9.9 at 0.001, 0.774 / 8.9 at 0.5), 0.596 and 78.6 after 70 from uniform, where a leaf's deep
  ancestors end at about a right angle from it (d(u, a) ~ r_u + r_a: ``bread_dough.n.01`` 19.7 from its
  parent ``dough.n.01``).
* **Rare ancestors boosted** (``rare_boost``, default 0, ``boosted_pairs``): a pair whose ancestor has n
  descendants is visited 1 + floor(rare_boost / n) times an epoch. Measured on the nouns at d = 10 (one thread
  each, 1,500 s, cooldown 0.9, lr_floor 0.01, two runs side by side, 1,000 sampled rows): rare_boost 4 (5.7% more
  pairs) sampled MAP 0.880 and mean rank 5.1 after 357 epochs, 0.879 and 6.3 after 456 without; at ~560 s
  rare_boost 16 gave 0.810 / 5.5 and 48 gave 0.707 / 7.9 (4: 0.859 / 5.6, none: 0.860 / 6.8). Tried on the same
  240 s protocol and dropped, each worse: half or a fifth of the negatives drawn from interior nodes (mean rank 36
  and 10.6), half from leaves, each direct edge visited three times, N & K's loss from v's side as well, offenders
  mined from an exact ranking as extra negatives (from the shipped run: mean rank 6.3 -> 22 in 120 s), 100 or
  200 negatives, steps shrinking with depth in the tree start, longer burn-in.

Negatives are uniform over the nodes; a draw related to its u (an ancestor: about 1e-4 of draws on the
nouns) is masked out of that u's softmax (one binary search among the relation's sorted keys).
Progress: ``on_eval(record)`` with epoch, loss, seconds and a sampled MAP / mean rank (``sample`` nodes'
rows ranked exactly, ``sparse.sparse_reconstruction`` on those rows); the best sampled MAP's points are
kept (``best_points``) and, with ``checkpoint``, written atomically so a killed run leaves the last
complete one readable.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
import torch

from georesolver_core.embeddings.sparse import SparseRelation, sparse_reconstruction
from georesolver_core.validate import check_positive_int, check_range

# float64 reaches sqrt(c)|x| = 1 - 1e-5 (geoopt's projx margin, DESIGN section 4): d0 up to ~12.2.
BALL_MARGIN = 1e-5


INIT_SCALE = {"tree": 0.03, "uniform": 1e-3}  # each start's default scale (the uniform one: the earlier trainer's)


@dataclass(frozen=True)
class FastConfig:
    dim: int = 10  # the ball's dimension
    lr: float = 0.2  # step per pair (the loss is a sum over the batch)
    batch_size: int = 4096  # pairs per step
    negatives: int = 50  # negatives per pair (Nickel & Kiela: 50)
    block: int = 32  # consecutive pairs sharing one draw of negatives
    burn_in: int = 5  # epochs at lr / 10 first
    cooldown: float = 0.5  # last fraction of the time budget, lr decaying linearly to lr * lr_floor
    lr_floor: float = 0.1  # the cooldown's last rate, as a fraction of lr
    max_step: float = 0.05  # largest move of one row in one step (ambient norm): hubs must not jump
    epochs: int = 100_000  # the time budget usually stops first
    init: str = "tree"  # "tree": a random walk down the hierarchy (tree_start); "uniform": uniform(-s, s)
    init_scale: float | None = None  # tree: the deepest node's norm; uniform: s. None: INIT_SCALE[init]
    rare_boost: int = 0  # (u, a) visited 1 + floor(rare_boost / n_a) times an epoch, n_a: a's descendants
    seed: int = 0
    sample: int = 2000  # nodes whose rows the progress MAP ranks exactly
    eval_every_s: float = 60.0  # seconds of training between progress evaluations

    def __post_init__(self):
        check_positive_int("dim", self.dim, 1, 1024)
        check_range("lr", self.lr, 1e-6, 1e3)
        check_positive_int("batch_size", self.batch_size, 1, 10_000_000)
        check_positive_int("negatives", self.negatives, 1, 10_000)
        check_positive_int("block", self.block, 1, self.batch_size)
        check_positive_int("burn_in", self.burn_in, 0, 1_000_000)
        check_range("cooldown", self.cooldown, 0.0, 1.0)
        check_range("lr_floor", self.lr_floor, 0.0, 1.0)
        check_range("max_step", self.max_step, 1e-6, 10.0)
        check_positive_int("epochs", self.epochs, 1, 10_000_000)
        if self.init not in INIT_SCALE:
            raise ValueError(f"init must be one of {list(INIT_SCALE)} (got {self.init!r})")
        if self.init_scale is None:  # frozen: the default is resolved once, so settings() records it
            object.__setattr__(self, "init_scale", INIT_SCALE[self.init])
        check_range("init_scale", self.init_scale, 1e-9, 0.1)
        check_positive_int("rare_boost", self.rare_boost, 0, 1_000)
        check_positive_int("sample", self.sample, 1, 10_000_000)
        check_range("eval_every_s", self.eval_every_s, 0.0, 1e6)


def rim_fraction(points) -> float:
    """Share of the points (N, D), a tensor or an array, held at the rim by this trainer's projection
    (|x| > 1 - 2 BALL_MARGIN): there every distance saturates and a point's depth in the hierarchy can no longer
    show in its radius. (``metrics.rim_saturation`` counts only the last 1.1 margins, geoopt's cap.)"""
    norms = np.linalg.norm(np.asarray(points, dtype=np.float64), axis=-1)
    return float((norms > 1.0 - 2.0 * BALL_MARGIN).mean())


def closure_parents(relation: SparseRelation) -> torch.Tensor:
    """One direct parent per node from the closure alone: of u's ancestors, the one with the most ancestors
    of its own (every other ancestor is also an ancestor of one of u's direct parents, so it has fewer; ties:
    the smaller id). (N,) int64, -1 for a node without ancestors."""
    n, deg = relation.n, relation.degree()
    u, a = relation.pairs[:, 0], relation.pairs[:, 1]  # (P,), (P,)
    score = deg[a] * n + (n - 1 - a)  # the most ancestors first, then the smaller id
    best = torch.full((n,), -1, dtype=torch.int64).scatter_reduce(0, u, score, reduce="amax")
    return torch.where(best >= 0, n - 1 - best % n, best)


def tree_start(relation: SparseRelation, dim: int, scale: float, generator: torch.Generator) -> torch.Tensor:
    """Start points (N, D) float64: z(root) = 0, z(u) = z(parent(u)) + e_u with e_u ~ N(0, I / D) and the
    parents of ``closure_parents``, then scaled so the farthest point has norm ``scale``. A node's direction is
    the sum of its path's steps, so it starts turned towards its ancestors (cos ~ sqrt(j / k) with an ancestor
    j of its k levels) and a subtree's points start together."""
    parent = closure_parents(relation)
    steps = torch.randn(relation.n, dim, generator=generator, dtype=torch.float64) / math.sqrt(dim)  # (N, D)
    z = torch.zeros(relation.n, dim, dtype=torch.float64)
    deg = relation.degree()  # a parent has fewer ancestors than its child: placed first
    for k in torch.unique(deg[parent >= 0]).tolist():
        at = torch.nonzero((deg == k) & (parent >= 0)).flatten()
        z[at] = z[parent[at]] + steps[at]
    top = float(z.norm(dim=-1).max())
    return z * (scale / top) if top > 0 else z


def boosted_pairs(relation: SparseRelation, boost: int) -> torch.Tensor:
    """The pairs an epoch visits: every (u, a) once, and floor(boost / n_a) more times where a has n_a
    descendants (boost 0: each once). (P', 2) int64.

    Why: mean rank is a tail. On the noun run at d = 10 (MAP 0.883, mean rank 5.78) 1% of the pairs held 40%
    of the rank sum, and 67% of the excess came from ancestors with 20 or fewer descendants, drawn into the
    interior (d(0, a) ~ 9) by only those few pairs while shallower unrelated nodes (~6.6) came nearer their
    leaves. Uniform over pairs, such an ancestor is pulled towards its leaves once per leaf per epoch."""
    pairs = relation.pairs  # (P, 2)
    if boost == 0 or pairs.shape[0] == 0:
        return pairs
    below = torch.bincount(pairs[:, 1], minlength=relation.n)  # (N,) descendants of each node
    extra = torch.div(boost, below[pairs[:, 1]], rounding_mode="floor")  # (P,)
    return torch.cat([pairs, torch.repeat_interleave(pairs, extra, dim=0)])


def pair_coefficients(sq, uu, ww, g):
    """The scalar part of dL/du and dL/dw for distances from squared gaps: (...) tensors -> (s, a_u, a_w).

    sq = |u - w|^2, uu = |u|^2, ww = |w|^2, g = dL/dd. Then dL/du = s ((1 + sq / alpha) u - w) and
    dL/dw = s ((1 + sq / beta) w - u), s = 4 g / (alpha beta sqrt(gamma^2 - 1)); returns s, s (1 + sq / alpha)
    and s (1 + sq / beta)."""
    alpha, beta = 1.0 - uu, 1.0 - ww
    gamma = 1.0 + 2.0 * sq / (alpha * beta)
    # gamma -> 1 (u = w) makes 1 / sqrt(gamma^2 - 1) blow up while (u - w) -> 0: the clamp keeps 0 * inf out
    root = (gamma * gamma - 1.0).clamp_min(1e-15).sqrt()
    s = 4.0 * g / (alpha * beta * root)
    return s, s * (1.0 + sq / alpha), s * (1.0 + sq / beta)


def _arcosh_of(sq, uu, ww):
    """Poincaré distance from |u - w|^2 and the squared norms (c = 1)."""
    gamma = 1.0 + 2.0 * sq / ((1.0 - uu) * (1.0 - ww))
    return torch.acosh(gamma.clamp_min(1.0))  # rounding can put gamma a hair below 1


class FastPoincareTrainer:
    """Trains ``n`` points in the Poincaré ball (c = 1, float64) on a SparseRelation's pairs."""

    def __init__(self, relation: SparseRelation, config: FastConfig, *, names=None):
        self.relation, self.config = relation, config
        self.names = list(names) if names is not None else None
        n = relation.n
        self.generator = torch.Generator().manual_seed(config.seed)
        if config.init == "tree":
            self.points = tree_start(relation, config.dim, config.init_scale, self.generator)  # (N, D)
        else:
            self.points = (torch.rand(n, config.dim, generator=self.generator, dtype=torch.float64) * 2 - 1) * (
                config.init_scale
            )  # (N, D)
        self.pairs = boosted_pairs(relation, config.rare_boost)  # (P', 2), P' >= P
        # only a node that is someone's ancestor can be a related negative: the rest skip the binary search
        self._ancestor = torch.zeros(n, dtype=torch.bool)
        self._ancestor[relation.pairs[:, 1]] = True
        related = relation.degree() > 0
        pool = torch.nonzero(related).flatten()
        pick = torch.randperm(pool.numel(), generator=self.generator)[: config.sample]
        self.sample_rows = pool[pick].sort().values  # the fixed progress sample
        self.epoch, self.train_seconds, self.train_cpu_seconds = 0, 0.0, 0.0
        self.history: list[dict] = []
        self.best: dict | None = None
        self.best_points: torch.Tensor | None = None

    # --- one step -------------------------------------------------------------------------------------
    def step(self, batch: torch.Tensor, lr: float) -> float:
        """One Riemannian SGD step on a (B, 2) batch of pairs; returns the batch's summed loss."""
        cfg, x = self.config, self.points
        k, blk = cfg.negatives, cfg.block
        b = batch.shape[0] - batch.shape[0] % blk or batch.shape[0]
        blk = blk if b % blk == 0 else b
        u_id, v_id = batch[:b, 0], batch[:b, 1]
        nb = b // blk
        w_id = torch.randint(self.relation.n, (nb, k), generator=self.generator)  # (nb, K) shared per block
        u, v, w = x[u_id], x[v_id], x[w_id]  # (B, D), (B, D), (nb, K, D)
        uu, vv, ww = (u * u).sum(-1), (v * v).sum(-1), (w * w).sum(-1)  # (B,), (B,), (nb, K)
        ub = u.view(nb, blk, -1)  # (nb, blk, D)
        gram = torch.bmm(ub, w.transpose(1, 2))  # (nb, blk, K)
        sq_w = (uu.view(nb, blk, 1) + ww[:, None, :] - 2.0 * gram).clamp_min(0.0)  # (nb, blk, K)
        sq_v = ((u - v) ** 2).sum(-1)  # (B,)
        d_w = _arcosh_of(sq_w, uu.view(nb, blk, 1), ww[:, None, :])  # (nb, blk, K)
        d_v = _arcosh_of(sq_v, uu, vv).view(nb, blk, 1)  # (nb, blk, 1)
        # negatives related to their u (ancestors of u) or u itself leave that u's softmax
        uid = u_id.view(nb, blk, 1)
        bad = w_id[:, None, :] == uid  # (nb, blk, K)
        hit = torch.nonzero(self._ancestor[w_id][:, None, :].expand_as(bad), as_tuple=True)
        bad[hit] |= self.relation.contains(uid.expand_as(bad)[hit], w_id[:, None, :].expand_as(bad)[hit])
        logits = torch.cat([-d_v, (-d_w).masked_fill(bad, -math.inf)], dim=2)  # (nb, blk, 1 + K)
        logp = torch.log_softmax(logits, dim=2)
        loss = float(-logp[..., 0].sum())
        p = logp.exp()  # dL/dd_c = [c = v] - p_c
        g_v, g_w = (1.0 - p[..., 0]).reshape(b), -p[..., 1:]  # (B,), (nb, blk, K)
        s_v, a_uv, a_vu = pair_coefficients(sq_v, uu, vv, g_v)  # (B,)
        s_w, a_uw, a_wu = pair_coefficients(sq_w, uu.view(nb, blk, 1), ww[:, None, :], g_w)  # (nb, blk, K)
        grad_u = (a_uv + a_uw.sum(-1).reshape(b))[:, None] * u - s_v[:, None] * v
        grad_u -= torch.bmm(s_w, w).reshape(b, -1)  # (B, D)
        grad_v = a_vu[:, None] * v - s_v[:, None] * u  # (B, D)
        grad_w = a_wu.sum(1)[..., None] * w - torch.bmm(s_w.transpose(1, 2), ub)  # (nb, K, D)
        ids = torch.cat([u_id, v_id, w_id.reshape(-1)])
        rows, inverse = torch.unique(ids, return_inverse=True)  # (R,), touched rows only
        grad = torch.zeros(rows.numel(), x.shape[1], dtype=x.dtype).index_add_(
            0, inverse, torch.cat([grad_u, grad_v, grad_w.reshape(-1, x.shape[1])])
        )  # (R, D)
        xr = x[rows]
        scale = (1.0 - (xr * xr).sum(-1, keepdim=True)) ** 2 / 4.0  # the inverse metric, (R, 1)
        move = lr * scale * grad
        norm = move.norm(dim=-1, keepdim=True)
        move = move * (cfg.max_step / norm.clamp_min(cfg.max_step))  # at most max_step per row
        new = xr - move
        # the ball's rim: float64 resolves sqrt(c)|x| up to 1 - BALL_MARGIN (beyond it d saturates)
        nn = new.norm(dim=-1, keepdim=True)
        x[rows] = new * ((1.0 - BALL_MARGIN) / nn.clamp_min(1.0 - BALL_MARGIN))
        return loss

    # --- epochs ---------------------------------------------------------------------------------------
    def sampled_metrics(self, points: torch.Tensor | None = None) -> dict:
        """MAP and mean rank of the sample's rows (exact per row, the published protocol)."""
        pts = self.points if points is None else points
        return sparse_reconstruction(pts, self.relation, geometry="poincare", nodes=self.sample_rows)

    def run(
        self,
        *,
        time_budget_s: float,
        on_eval: Callable[[dict], object] | None = None,
        on_best: Callable[[FastPoincareTrainer], object] | None = None,
        cpu_budget: bool = False,
    ) -> dict:
        """Epochs until ``config.epochs`` or ``time_budget_s`` seconds of training; a progress evaluation
        every ``eval_every_s`` seconds and at the end, the best sampled MAP's points kept (``on_best`` then
        gets the trainer, e.g. to write them). ``cpu_budget``: count the budget in this process's CPU seconds
        instead of wall seconds (the same compute whatever else loads the machine). Returns the best record."""
        check_range("time_budget_s", time_budget_s, 0.1, 86_400.0)
        cfg = self.config
        clock = time.process_time if cpu_budget else time.perf_counter
        start, cpu0, wall0 = clock(), time.process_time(), time.perf_counter()
        last_eval = 0.0
        n_pairs = self.pairs.shape[0]
        while self.epoch < cfg.epochs:
            order = torch.randperm(n_pairs, generator=self.generator)
            loss_sum, out_of_time = 0.0, False
            for s in range(0, n_pairs, cfg.batch_size):
                lr = self._rate((clock() - start) / time_budget_s)
                loss_sum += self.step(self.pairs[order[s : s + cfg.batch_size]], lr)
                if clock() - start >= time_budget_s:
                    out_of_time = True
                    break
            if not out_of_time:
                self.epoch += 1
            elapsed = clock() - start
            self.train_seconds, self.train_cpu_seconds = time.perf_counter() - wall0, time.process_time() - cpu0
            if not bool(torch.isfinite(self.points).all()):
                raise FloatingPointError(
                    f"a point became NaN/inf at epoch {self.epoch}: lower lr (now {cfg.lr:g})"
                )
            last = out_of_time or self.epoch >= cfg.epochs
            if elapsed - last_eval >= cfg.eval_every_s or last:
                last_eval = elapsed
                record = {
                    "epoch": self.epoch,
                    "loss": loss_sum / n_pairs,
                    "train_seconds": self.train_seconds,
                    "train_cpu_seconds": self.train_cpu_seconds,
                    **{f"sampled_{k}": v for k, v in self.sampled_metrics().items()},
                    "rim_fraction": rim_fraction(self.points),
                }
                self.history.append(record)
                if self.best is None or record["sampled_map"] > self.best["sampled_map"]:
                    self.best, self.best_points = record, self.points.clone()
                    if on_best is not None:
                        on_best(self)
                if on_eval is not None:
                    on_eval(record)
            if last:
                break
        return self.best

    def _rate(self, spent: float) -> float:
        """lr / 10 during burn-in, lr, then down to lr * lr_floor linearly over the budget's last ``cooldown``."""
        cfg = self.config
        if self.epoch < cfg.burn_in:
            return cfg.lr / 10.0
        left = 1.0 - spent
        if cfg.cooldown > 0 and left < cfg.cooldown:
            return cfg.lr * (cfg.lr_floor + (1.0 - cfg.lr_floor) * max(left, 0.0) / cfg.cooldown)
        return cfg.lr

    def settings(self) -> dict:
        return asdict(self.config)


def points_archive(names, points: torch.Tensor | np.ndarray, *, dtype=np.float32, **meta) -> dict[str, np.ndarray]:
    """The arrays of an embedding file: ``names`` (N,) unicode, ``points`` (N, D) float32 (Poincaré ball,
    c = 1; ``dtype`` float64 for points float32 cannot resolve, a construction deep in the tree), and scalar
    metadata; every array loads with ``np.load(..., allow_pickle=False)``."""
    pts = np.asarray(points.detach().cpu() if isinstance(points, torch.Tensor) else points, dtype=np.float64)
    names = np.asarray(list(names), dtype=str)
    if pts.ndim != 2 or pts.shape[0] != names.shape[0]:
        raise ValueError(f"points must be (N, D) with N = {names.shape[0]} names (got shape {pts.shape})")
    norms = np.linalg.norm(pts, axis=1)
    if not np.isfinite(pts).all() or (norms >= 1.0).any():
        raise ValueError("points must be finite and inside the unit ball (|x| < 1)")
    if np.dtype(dtype) not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64 (got {dtype})")
    # rounding can put a point at |x| = 1: pull those back by the dtype's resolution near 1
    small = pts.astype(dtype)
    rounded = np.linalg.norm(small.astype(np.float64), axis=1)
    cap = 1.0 - 2.0 * float(np.finfo(dtype).eps)
    over = rounded > cap
    small[over] = (pts[over] * (cap / norms[over])[:, None]).astype(dtype)
    out = {"names": names, "points": small}
    out.update({k: np.asarray(v) for k, v in meta.items()})
    return out


def write_points(path, names, points, *, dtype=np.float32, **meta) -> None:
    """Write ``points_archive`` as a compressed .npz, atomically: a reader (or a killed run) sees the old
    file or the new one, never half of one."""
    from georesolver_core.train.checkpoint import write_atomic

    arrays = points_archive(names, points, dtype=dtype, **meta)
    write_atomic(path, lambda f: np.savez_compressed(f, **arrays))


def read_points(path) -> tuple[list[str], np.ndarray]:
    """``names`` and ``points`` (float64) of an embedding file, loaded without pickle."""
    with np.load(path, allow_pickle=False) as z:
        return [str(s) for s in z["names"]], z["points"].astype(np.float64)
