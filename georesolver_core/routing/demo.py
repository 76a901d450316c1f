"""What the Routing & memory page draws, computed in one call each (pages hold no maths).

``routing_demo``: prototypes and queries on S^2 and GSR's decision for each query.
``dmg_stream``: a DMG pool fed a ``ShiftingStream``, whose clusters rotate by ``shift_angle`` at ``shift_at``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from georesolver_core.device import one_cpu_thread
from georesolver_core.routing.dmg import DMGConfig, PrototypePool
from georesolver_core.routing.gsr import gsr_route, sida_routing_weights
from georesolver_core.routing.quality import fibonacci_sphere, random_sphere
from georesolver_core.routing.stats import load_entropy
from georesolver_core.validate import check_positive_int, check_range

EPS_LIMIT = 1e-12  # stands for eps -> 0 in float64 (d^2 of distinct points on S^2 is far above it)


@dataclass
class RoutingDemo:
    queries: np.ndarray  # (n, 3)
    protos: np.ndarray  # (m, 3)
    indices: np.ndarray  # (n, K)
    weights: np.ndarray  # (n, K)
    tail_mass: np.ndarray  # (n,) full SIDA weight left outside the Top-K
    load: np.ndarray  # (m,) first choices per prototype
    entropy: float  # of the first-choice load (nats)
    first_weight_limit: float = float("nan")  # mean first-choice weight as eps -> 0 (1/d^2 proportions)


def routing_demo(n_protos: int, n_queries: int, *, k: int, eps: float, spread: float, seed: int) -> RoutingDemo:
    """Prototypes spread evenly on S^2, queries around random prototypes (``spread`` in radians, roughly)."""
    check_positive_int("n_protos", n_protos, 1, 512)
    check_positive_int("n_queries", n_queries, 1, 5000)
    check_range("spread", spread, 0.0, 10.0)
    protos = fibonacci_sphere(n_protos)
    g = torch.Generator().manual_seed(seed)
    base = protos[torch.randint(n_protos, (n_queries,), generator=g)]
    q = base + spread * torch.randn(n_queries, 3, generator=g, dtype=torch.float64)
    bad = q.norm(dim=-1) < 1e-9  # a zero vector has no direction: replace it by a uniform point
    q[bad] = random_sphere(int(bad.sum()), 3, seed=seed)
    q = q / q.norm(dim=-1, keepdim=True)
    with one_cpu_thread():  # tiny tensors: extra threads only add synchronisation
        idx, w = gsr_route(q, protos, k=k, eps=eps)
        full = sida_routing_weights(q, protos, eps=eps)
        # eps -> 0: the Top-K share in proportion to 1/d^2; one-hot only for a query at its prototype
        limit = gsr_route(q, protos, k=k, eps=EPS_LIMIT)[1][:, 0].mean()
    tail = (1.0 - full.gather(-1, idx).sum(-1)).clamp_min(0.0)
    load = torch.bincount(idx[:, 0], minlength=n_protos)
    return RoutingDemo(
        q.numpy(),
        protos.numpy(),
        idx.numpy(),
        w.numpy(),
        tail.numpy(),
        load.numpy(),
        load_entropy(load),
        float(limit),
    )


@dataclass
class DMGStream:
    points: np.ndarray  # (n, 3) the stream
    t: np.ndarray  # (n-1,) steps judged (the first point founds the pool)
    loss: np.ndarray
    tau: np.ndarray
    n_active: np.ndarray
    spawn_t: np.ndarray  # steps that spawned
    refused: int
    protos: np.ndarray  # (n_active, 3)
    births: np.ndarray  # (n_active,)
    spawns_before: int  # after warm-up and before the shift
    delay: int | None  # steps from the shift to the first spawn after it (None: none)


def _rotation(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


@dataclass(frozen=True)
class ShiftingStream:
    """A stream on S^2 whose clusters move once: ``n`` points around ``n_clusters`` random centres
    (``spread`` roughly in radians), all rotated by ``shift_angle`` (rad) from step ``shift_at`` on."""

    n: int  # points in the stream
    shift_at: int  # the first rotated step
    shift_angle: float  # rotation about the y axis, radians in [0, pi]
    n_clusters: int = 3
    spread: float = 0.08
    seed: int = 0

    def __post_init__(self):
        check_positive_int("n", self.n, 2, 20000)
        check_positive_int("shift_at", self.shift_at, 1, self.n)
        check_range("shift_angle", self.shift_angle, 0.0, np.pi)

    def points(self) -> np.ndarray:
        """(n, 3) unit vectors, in stream order."""
        rng = np.random.default_rng(self.seed)
        centres = rng.normal(size=(self.n_clusters, 3))
        centres /= np.linalg.norm(centres, axis=1, keepdims=True)
        which = rng.integers(self.n_clusters, size=self.n)
        x = centres[which] + self.spread * rng.normal(size=(self.n, 3))
        x[self.shift_at :] = x[self.shift_at :] @ _rotation(self.shift_angle).T
        return x / np.linalg.norm(x, axis=1, keepdims=True)


def dmg_stream(stream: ShiftingStream, config: DMGConfig, *, warmup: int = 200) -> DMGStream:
    """Feed a PrototypePool the stream's points one at a time; how it spawns before and after the shift
    (``spawns_before`` counts spawns after the first ``warmup`` steps)."""
    x = stream.points()
    pool = PrototypePool(config).double()
    with one_cpu_thread():  # one point at a time: tiny tensors
        pool.observe(torch.from_numpy(x))
    h = pool.history[1:]
    spawn_t = np.array([s.t for s in h if s.spawned >= 0], dtype=int)
    after = spawn_t[spawn_t > stream.shift_at]
    return DMGStream(
        points=x,
        t=np.array([s.t for s in h]),
        loss=np.array([s.loss for s in h]),
        tau=np.array([s.tau for s in h]),
        n_active=np.array([s.n_active for s in h]),
        spawn_t=spawn_t,
        refused=sum(s.refused for s in h),
        protos=pool.active_prototypes().numpy(),
        births=pool.birth[pool.active].numpy(),
        spawns_before=int(((spawn_t > warmup) & (spawn_t <= stream.shift_at)).sum()),
        delay=int(after[0] - stream.shift_at) if after.size else None,
    )
