"""Dynamic Memory Genesis (DMG, paper section 9): a prototype pool that grows when the stream surprises it.

Pool P = {(E_e, c_e, t_e^birth, a_e, t_e^last)}: prototypes c_e on the unit sphere with their birth
step, activity (times chosen) and last use. A point x is surprising when its loss

    l_t = min_e d_S(x_t, c_e)^2            (the quantisation loss of the nearest active prototype)

exceeds the adaptive threshold (section 9.1)

    tau_t = tau_base + kappa sigma_t + gamma r_t,

sigma_t the standard deviation of the last W losses and r_t the fraction of the last W_r steps that
spawned. (The paper writes sigma_t without the square root, i.e. the variance; we use the standard
deviation so that kappa is in units of the loss.) A surprise spawns a prototype at x_t.

Capacity is preallocated: ``prototypes`` is one (capacity, d) parameter and ``active`` a bool mask, so
spawning flips a slot on and never reallocates the tensor an optimiser holds state for.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import geoopt
import torch
from torch import nn

from georesolver_core.budget import FLOAT32, check_memory, elements
from georesolver_core.geometry.sphere import project as sphere_project
from georesolver_core.geometry.sphere import sphere
from georesolver_core.routing.gsr import sida_sq_distance
from georesolver_core.validate import check_on_sphere, check_positive_int, check_range


@dataclass(frozen=True)
class DMGConfig:
    capacity: int = 64  # preallocated prototype slots (the pool never grows beyond)
    dim: int = 3  # prototypes live on S^{dim-1}
    tau_base: float = 0.3  # base threshold on the loss d_S^2 (rad^2); must exceed the null-model mean
    kappa: float = 1.0  # weight of the sliding-window standard deviation sigma_t
    gamma: float = 1.0  # weight of the recent spawn rate r_t (damps bursts)
    window: int = 64  # W: losses in the sliding window
    rate_window: int = 64  # W_r: steps over which the spawn rate is measured
    lr: float = 0.05  # online k-means step of the nearest prototype towards x (0: positions left to an optimiser)
    retire_after: int | None = None  # retire a prototype unused for this many steps (None: never)

    def __post_init__(self):
        check_positive_int("capacity", self.capacity, 1, 1 << 20)
        check_positive_int("dim", self.dim, 2, 65536)
        # (capacity, dim) float32 prototypes, with their gradient and two optimiser moments when trained
        check_memory(
            "a DMG prototype pool",
            4 * FLOAT32 * elements(self.capacity, self.dim),
            capacity=self.capacity,
            dim=self.dim,
        )
        check_range("tau_base", self.tau_base, 0.0, 40.0)  # d_S^2 <= pi^2
        check_range("kappa", self.kappa, 0.0, 100.0)
        check_range("gamma", self.gamma, 0.0, 100.0)
        check_positive_int("window", self.window, 2, 1 << 20)
        check_positive_int("rate_window", self.rate_window, 1, 1 << 20)
        check_range("lr", self.lr, 0.0, 1.0)
        if self.retire_after is not None:
            check_positive_int("retire_after", self.retire_after, 1)


class AdaptiveThreshold:
    """tau_t = tau_base + kappa sigma_t + gamma r_t over sliding windows of losses and spawn flags."""

    def __init__(self, tau_base: float, kappa: float, gamma: float, window: int, rate_window: int):
        self.tau_base, self.kappa, self.gamma = tau_base, kappa, gamma
        self.losses: deque[float] = deque(maxlen=window)
        self.spawns: deque[bool] = deque(maxlen=rate_window)

    @property
    def sigma(self) -> float:
        """Standard deviation of the window (0 with fewer than two losses)."""
        n = len(self.losses)
        if n < 2:
            return 0.0
        mu = sum(self.losses) / n
        return (sum((v - mu) ** 2 for v in self.losses) / n) ** 0.5

    @property
    def rate(self) -> float:
        """Fraction of the last W_r steps that spawned."""
        return sum(self.spawns) / self.spawns.maxlen

    @property
    def tau(self) -> float:
        return self.tau_base + self.kappa * self.sigma + self.gamma * self.rate

    def step(self, loss: float) -> tuple[float, bool]:
        """Judge one loss against the current threshold, then slide both windows. Returns (tau_t, surprise)."""
        tau = self.tau
        surprise = loss > tau
        self.losses.append(loss)
        self.spawns.append(surprise)
        return tau, surprise


@dataclass
class DMGStep:
    """What ``observe`` saw at one stream step."""

    t: int
    loss: float  # l_t before any spawn
    tau: float  # tau_t
    surprise: bool
    spawned: int  # slot index, -1 when none (no surprise, or the pool was full)
    refused: bool  # a surprise with every slot taken
    n_active: int


class PrototypePool(nn.Module):
    """DMG pool: ``prototypes`` (capacity, dim) on the sphere, ``active`` bool mask, ``observe(x) -> spawned``."""

    def __init__(self, config: DMGConfig | None = None, init: torch.Tensor | None = None):
        super().__init__()
        # built here, not as a default argument: a default is built at import, before a command can report
        # a bad memory budget (its check reads the budget)
        config = DMGConfig() if config is None else config
        self.config = config
        cap, d = config.capacity, config.dim
        # Free slots hold the north pole: valid unit vectors, masked out of every routing decision.
        base = torch.zeros(cap, d)
        base[:, -1] = 1.0
        self.prototypes = geoopt.ManifoldParameter(base, manifold=sphere())
        self.register_buffer("active", torch.zeros(cap, dtype=torch.bool))
        self.register_buffer("birth", torch.full((cap,), -1, dtype=torch.long))
        self.register_buffer("activity", torch.zeros(cap, dtype=torch.long))
        self.register_buffer("last_use", torch.full((cap,), -1, dtype=torch.long))
        self.threshold = AdaptiveThreshold(
            config.tau_base, config.kappa, config.gamma, config.window, config.rate_window
        )
        self.t = 0
        self.history: list[DMGStep] = []
        self.retired = 0
        if init is not None:
            check_on_sphere("init", init)
            if init.dim() != 2 or init.shape[1] != d or not 1 <= init.shape[0] <= cap:
                raise ValueError(
                    f"init must have shape (n, {d}) with 1 <= n <= capacity = {cap} (got {tuple(init.shape)})"
                )
            for x in init:
                self._spawn(x)

    @property
    def n_active(self) -> int:
        return int(self.active.sum())

    def active_prototypes(self) -> torch.Tensor:
        """The live prototypes (n_active, dim), in slot order."""
        return self.prototypes.detach()[self.active]

    def _spawn(self, x: torch.Tensor) -> int:
        free = (~self.active).nonzero()
        if free.numel() == 0:
            return -1
        slot = int(free[0])
        with torch.no_grad():
            self.prototypes[slot] = sphere_project(x.to(self.prototypes.dtype))
        self.active[slot] = True
        self.birth[slot], self.activity[slot], self.last_use[slot] = self.t, 0, self.t
        return slot

    def _retire(self) -> None:
        after = self.config.retire_after
        if after is None:
            return
        stale = self.active & (self.t - self.last_use > after)
        if bool(stale.any()) and self.n_active > int(stale.sum()):  # never retire the whole pool
            self.active &= ~stale
            self.retired += int(stale.sum())

    @torch.no_grad()
    def observe(self, x: torch.Tensor) -> torch.Tensor:
        """Feed a stream of points (n, dim) in order; returns the slots spawned (long, possibly empty).

        Each point: loss to the nearest active prototype, threshold test, spawn at x on surprise
        (if a slot is free), else activity/last-use bookkeeping and an online k-means step.
        """
        check_on_sphere("x", x)
        if x.dim() != 2 or x.shape[1] != self.config.dim:
            raise ValueError(f"x must have shape (n, {self.config.dim}) (got {tuple(x.shape)})")
        spawned = []
        for xt in x:
            self.t += 1
            if self.n_active == 0:  # the first point founds the pool
                slot = self._spawn(xt)
                spawned.append(slot)
                self.history.append(DMGStep(self.t, 0.0, self.threshold.tau, False, slot, False, 1))
                continue
            sq = sida_sq_distance(xt[None].to(self.prototypes.dtype), self.prototypes.detach())[0]  # (cap,)
            sq = sq.masked_fill(~self.active, torch.inf)
            e = int(sq.argmin())
            loss = float(sq[e])
            tau, surprise = self.threshold.step(loss)
            slot = self._spawn(xt) if surprise else -1
            if slot >= 0:
                spawned.append(slot)
            else:
                self.activity[e] += 1
                self.last_use[e] = self.t
                if self.config.lr > 0:
                    c = self.prototypes[e]
                    self.prototypes[e] = sphere_project(c + self.config.lr * (xt.to(c.dtype) - c))
            self._retire()
            self.history.append(DMGStep(self.t, loss, tau, surprise, slot, surprise and slot < 0, self.n_active))
        return torch.tensor(spawned, dtype=torch.long)


def reset_optimizer_rows(optimizer: torch.optim.Optimizer, param: torch.Tensor, rows: torch.Tensor) -> None:
    """Zero the optimiser state (Adam moments, momentum) of the given rows of ``param`` only.

    A spawned slot starts fresh; every other prototype keeps its state, because the parameter tensor
    the optimiser holds was never replaced.
    """
    state = optimizer.state.get(param, {})
    for value in state.values():
        if isinstance(value, torch.Tensor) and value.shape[:1] == param.shape[:1] and value.dim() >= 1:
            value[rows] = 0
