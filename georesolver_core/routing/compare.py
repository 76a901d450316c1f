"""Train GSR, the softmax top-k gate and expert choice on one small task; compare load and drops.

Task ("cluster maps"): tokens x in R^d come from C Gaussian clusters; the target is a cluster-specific
linear map y = A_c x. A router that sends each cluster to its own expert can fit it exactly; one that
collapses onto few experts cannot. Loss = MSE + alpha * L_aux (L_aux = 0 for GSR and expert choice).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field

import geoopt
import torch

from georesolver_core.device import one_cpu_thread
from georesolver_core.routing.baselines import ROUTERS, make_moe
from georesolver_core.routing.stats import RoutingStats, routing_stats
from georesolver_core.validate import check_positive_int, check_range


@dataclass(frozen=True)
class CompareConfig:
    dim: int = 8  # token width
    n_experts: int = 8
    n_clusters: int = 8  # C clusters in the task
    k: int = 1  # experts per token
    steps: int = 200
    batch: int = 256
    lr: float = 1e-2
    eps: float = 0.1  # GSR's SIDA regulariser
    capacity_factor: float = 1.25
    aux_weight: float = 0.01  # alpha, Switch's default
    seed: int = 0

    def __post_init__(self):
        check_positive_int("dim", self.dim, 2, 1024)
        check_positive_int("n_experts", self.n_experts, 1, 256)
        check_positive_int("n_clusters", self.n_clusters, 1, 256)
        check_positive_int("k", self.k, 1, self.n_experts)
        check_positive_int("steps", self.steps, 1, 100_000)
        check_positive_int("batch", self.batch, 1, 65536)
        check_range("lr", self.lr, 1e-6, 1.0)
        check_range("capacity_factor", self.capacity_factor, 0.05, 100.0)
        check_range("aux_weight", self.aux_weight, 0.0, 10.0)


@dataclass
class RouterRun:
    name: str
    label: str
    losses: list[float]  # training loss per step
    test_mse: float
    stats: RoutingStats  # on a held-out batch
    seconds: float


@dataclass
class RouterComparison:
    config: CompareConfig
    runs: list[RouterRun] = field(default_factory=list)


class ClusterMaps:
    """The task: sample(n) -> (x (n, d), y (n, d), cluster (n,))."""

    def __init__(self, dim: int, n_clusters: int, seed: int):
        g = torch.Generator().manual_seed(seed)
        self.centres = 2.0 * torch.randn(n_clusters, dim, generator=g)  # (C, d)
        self.maps = torch.randn(n_clusters, dim, dim, generator=g) / dim**0.5  # (C, d, d)
        self.gen = torch.Generator().manual_seed(seed + 1)

    def sample(self, n: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        c = torch.randint(len(self.centres), (n,), generator=self.gen)
        x = self.centres[c] + 0.3 * torch.randn(n, self.centres.shape[1], generator=self.gen)
        y = torch.einsum("nd,nde->ne", x, self.maps[c])  # (n, d)
        return x, y, c


def compare_routers(
    config: CompareConfig = CompareConfig(),
    routers: tuple[str, ...] = tuple(ROUTERS),
    on_step: Callable[[str, int, int], None] | None = None,
) -> RouterComparison:
    """Train one MoE per router for ``steps`` steps on the same stream; ``on_step(name, step, steps)``."""
    steps = compare_routers_steps(config, routers)
    with one_cpu_thread():  # tiny tensors: extra threads only add synchronisation
        while True:
            try:
                _, _, partial = next(steps)
            except StopIteration as done:
                return done.value
            if on_step is not None:
                name, losses = next(reversed(partial.items()))
                on_step(name, len(losses), config.steps)


def compare_routers_steps(
    config: CompareConfig = CompareConfig(), routers: tuple[str, ...] = tuple(ROUTERS)
) -> Generator[tuple[float, str, dict], None, RouterComparison]:
    """``compare_routers`` one optimiser step at a time: yields (fraction done, text, {router: training
    losses so far}) and returns the RouterComparison. A live page advances it a chunk per rerun."""
    out, partial = RouterComparison(config), {}
    for i, name in enumerate(routers):
        losses = partial.setdefault(name, [])
        run = _train_one(name, config, losses)
        while True:
            try:
                step = next(run)
            except StopIteration as done:
                out.runs.append(done.value)
                break
            frac = (i + step / config.steps) / len(routers)
            yield frac, f"{ROUTERS[name]}: step {step}/{config.steps}, loss {losses[-1]:.4f}", partial
    return out


def _train_one(name: str, config: CompareConfig, losses: list) -> Generator[int, None, RouterRun]:
    """Train one router's MoE on the task, appending each step's MSE to ``losses`` and yielding the step;
    returns its curve and held-out routing statistics."""
    torch.manual_seed(config.seed)
    task = ClusterMaps(config.dim, config.n_clusters, config.seed)
    moe = make_moe(
        name,
        config.dim,
        config.n_experts,
        k=config.k,
        hidden=2 * config.dim,
        eps=config.eps,
        capacity_factor=config.capacity_factor,
    )
    opt = geoopt.optim.RiemannianAdam(moe.parameters(), lr=config.lr)
    t0 = time.perf_counter()
    for step in range(config.steps):
        x, y, _ = task.sample(config.batch)
        mse = torch.nn.functional.mse_loss(moe(x), y)
        loss = mse + config.aux_weight * moe.aux_loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(mse.detach()))
        yield step + 1
    with torch.no_grad():
        x, y, _ = task.sample(4 * config.batch)
        test = float(torch.nn.functional.mse_loss(moe(x), y))
        stats = routing_stats(moe.last_routing)
    return RouterRun(name, ROUTERS[name], list(losses), test, stats, time.perf_counter() - t0)
