"""Data-parallel training over processes started by ``torchrun`` (DDP: gloo on CPU, nccl on GPU).

``torchrun --nproc_per_node N -m georesolver_core train ...`` sets RANK, LOCAL_RANK and WORLD_SIZE;
``setup`` joins the process group. Every process draws the same global batch from the shared seed
and trains on its slice; DDP averages the gradients, so N processes reproduce one process on the
same global batch (up to float summation order).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class World:
    rank: int = 0
    size: int = 1
    local_rank: int = 0

    @property
    def distributed(self) -> bool:
        return self.size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def setup(device: str = "auto") -> World:
    """Join the process group described by torchrun's environment (a no-op for one process)."""
    size = int(os.environ.get("WORLD_SIZE", "1"))
    if size <= 1:
        return World()
    rank, local = int(os.environ["RANK"]), int(os.environ.get("LOCAL_RANK", "0"))
    cuda = device == "cuda" or (device == "auto" and torch.cuda.is_available())
    if not dist.is_initialized():
        if cuda:
            torch.cuda.set_device(local)
        dist.init_process_group("nccl" if cuda else "gloo")
    return World(rank, size, local)


def current() -> World:
    """The world of an already joined group (one process if none)."""
    if not (dist.is_available() and dist.is_initialized()):
        return World()
    return World(dist.get_rank(), dist.get_world_size(), int(os.environ.get("LOCAL_RANK", "0")))


def teardown() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def shard(n: int, world: World) -> tuple[int, int]:
    """[start, stop) of this process's slice of a global batch of n (n must divide evenly)."""
    if n % world.size:
        raise ValueError(f"batch_size ({n}) must be divisible by the number of processes ({world.size})")
    per = n // world.size
    return world.rank * per, (world.rank + 1) * per


def mean_across(value: float, world: World, device) -> float:
    """The mean of a scalar over processes (the global-batch loss when shards are equal)."""
    if not world.distributed:
        return value
    t = torch.tensor([value], dtype=torch.float64, device=device)
    dist.all_reduce(t)
    return float(t.item()) / world.size
