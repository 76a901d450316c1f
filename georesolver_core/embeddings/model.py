"""What a hierarchy embedding is, Nickel & Kiela style: its config, its loss and its points.

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

The trainer (``trainer.py``) runs it; this module holds what it trains: the config, the losses and
the points.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import geoopt
import torch
from torch import nn

from georesolver_core.geometry import GEOMETRIES, expmap0, pairwise_distance
from georesolver_core.validate import check_curvature, check_positive_int, check_range

OPTIMIZERS: dict[str, type[torch.optim.Optimizer]] = {
    "radam": geoopt.optim.RiemannianAdam,
    "rsgd": geoopt.optim.RiemannianSGD,
}
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
        if self.learn_curvature and not GEOMETRIES[self.geometry].has_curvature_parameter:
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
        return GEOMETRIES[self.geometry].ambient_dim(self.dim)

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
                extra = GEOMETRIES[config.geometry].ambient_dim(config.dim) - config.dim
                tangent = torch.nn.functional.pad(tangent, (0, extra))
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
