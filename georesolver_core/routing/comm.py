"""Counted collectives over torch.distributed, and a launcher whose dead workers fail fast.

Every collective here is written as direct point-to-point transfers (``batch_isend_irecv``): each
rank sends one message to each peer that needs its data. ``Comm`` counts every send as it is posted:
its payload bytes (numel x element size; the transport's own headers are not included) and one
message. Nothing is computed from a formula: the numbers are what the protocol handed to the wire.

Timeouts: the process group is created with ``timeout``, every wait is bounded by it, and the
launcher polls its workers so that one that exits (or raises) stops the run with a clear message.
"""

from __future__ import annotations

import datetime
import os
import socket
from collections import defaultdict
from collections.abc import Callable

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from georesolver_core.device import set_process_threads


class Comm:
    """Direct all-gather / reduce-scatter / all-to-all with per-phase byte and message counters."""

    def __init__(self, rank: int, world: int, timeout_s: float):
        self.rank, self.world = rank, world
        self.timeout = datetime.timedelta(seconds=timeout_s)
        self.bytes: dict[str, int] = defaultdict(int)
        self.messages: dict[str, int] = defaultdict(int)

    def reset(self) -> None:
        self.bytes.clear()
        self.messages.clear()

    def _exchange(self, sends: dict[int, torch.Tensor], recvs: dict[int, torch.Tensor], phase: str) -> None:
        ops = []
        for peer, t in sends.items():
            t = t.contiguous()
            ops.append(dist.P2POp(dist.isend, t, peer))
            self.bytes[phase] += t.numel() * t.element_size()
            self.messages[phase] += 1
        ops += [dist.P2POp(dist.irecv, t, peer) for peer, t in recvs.items()]
        if not ops:
            return
        for work in dist.batch_isend_irecv(ops):
            if not work.wait(self.timeout):
                raise TimeoutError(f"rank {self.rank}: a peer did not answer within {self.timeout} ({phase})")

    def all_gather(self, t: torch.Tensor, phase: str) -> list[torch.Tensor]:
        """Every rank's ``t`` (same shape on all ranks), in rank order."""
        t = t.contiguous()
        out = [t if r == self.rank else torch.empty_like(t) for r in range(self.world)]
        peers = [r for r in range(self.world) if r != self.rank]
        self._exchange({r: t for r in peers}, {r: out[r] for r in peers}, phase)
        return out

    def reduce_scatter(self, chunks: list[torch.Tensor], phase: str) -> torch.Tensor:
        """sum over ranks r of chunks_r[self.rank], added in rank order (so every run sums the same way)."""
        got = [
            chunks[r].contiguous() if r == self.rank else torch.empty_like(chunks[r]) for r in range(self.world)
        ]
        peers = [r for r in range(self.world) if r != self.rank]
        self._exchange({r: chunks[r] for r in peers}, {r: got[r] for r in peers}, phase)
        total = got[0]
        for part in got[1:]:
            total = total + part
        return total

    def all_to_all(
        self, chunks: list[torch.Tensor], shapes: list[tuple[int, ...]], phase: str
    ) -> list[torch.Tensor]:
        """Send chunks[r] to rank r; receive from each rank r a tensor of shape shapes[r]."""
        ref = chunks[self.rank]
        got = [ref if r == self.rank else ref.new_empty(shapes[r]) for r in range(self.world)]
        peers = [r for r in range(self.world) if r != self.rank]
        self._exchange({r: chunks[r] for r in peers}, {r: got[r] for r in peers}, phase)
        return got


def free_port() -> int:
    """A free TCP port on the loopback interface (the rendezvous stays on 127.0.0.1)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pick_backend(world: int, backend: str = "auto") -> str:
    """gloo on CPU; nccl when there is one GPU per worker (nccl refuses two ranks on one GPU)."""
    if backend not in ("auto", "gloo", "nccl"):
        raise ValueError(f"backend must be one of ['auto', 'gloo', 'nccl'] (got {backend!r})")
    if backend == "auto":
        return "nccl" if torch.cuda.is_available() and torch.cuda.device_count() >= world else "gloo"
    if backend == "nccl" and not (torch.cuda.is_available() and torch.cuda.device_count() >= world):
        raise ValueError(
            f"backend 'nccl' needs one CUDA GPU per worker ({world}); this machine has "
            f"{torch.cuda.device_count() if torch.cuda.is_available() else 0}: use 'gloo' or 'auto'"
        )
    return backend


def init_group(rank: int, world: int, backend: str, timeout_s: float, init_method: str) -> torch.device:
    """Join the process group; returns this worker's device."""
    device = (
        torch.device("cuda", rank % max(1, torch.cuda.device_count()))
        if backend == "nccl"
        else torch.device("cpu")
    )
    if device.type == "cuda":
        torch.cuda.set_device(device)
    dist.init_process_group(
        backend,
        init_method=init_method,
        rank=rank,
        world_size=world,
        timeout=datetime.timedelta(seconds=timeout_s),
    )
    return device


def _entry(rank: int, fn: Callable, world: int, port: int, args: tuple, queue) -> None:
    set_process_threads(1)  # P workers share the machine's cores
    result = fn(rank, world, f"tcp://127.0.0.1:{port}", *args)
    if result is not None:
        queue.put((rank, result))


def launch(
    fn: Callable, world: int, args: tuple, *, timeout_s: float, start_method: str = "spawn"
) -> dict[int, object]:
    """Run fn(rank, world, init_method, *args) in ``world`` new processes; returns {rank: result}.

    ``start_method="fork"`` (CPU only) starts workers in milliseconds instead of re-importing torch
    in each; CUDA needs "spawn".

    A worker that raises or exits makes this raise RuntimeError naming the rank (the others are
    terminated); a run past ``timeout_s`` raises TimeoutError. Nothing waits forever.
    """
    ctx = mp.get_context(start_method)
    queue = ctx.SimpleQueue()
    port = free_port()
    procs = mp.start_processes(
        _entry, args=(fn, world, port, args, queue), nprocs=world, join=False, start_method=start_method
    )
    deadline = datetime.datetime.now() + datetime.timedelta(seconds=timeout_s)
    results: dict[int, object] = {}
    try:
        while True:
            while not queue.empty():
                rank, value = queue.get()
                results[rank] = value
            try:
                done = procs.join(timeout=0.2)
            except mp.ProcessExitedException as err:
                raise RuntimeError(
                    f"distributed run failed: worker rank {err.error_index} exited with code {err.exit_code} "
                    "before finishing; the other workers were stopped"
                ) from None
            except mp.ProcessRaisedException as err:
                raise RuntimeError(f"distributed run failed: a worker raised an exception:\n{err}") from None
            if done:
                break
            if datetime.datetime.now() > deadline:
                raise TimeoutError(f"distributed run did not finish within {timeout_s:g} s; workers were stopped")
    finally:
        for p in procs.processes:
            if p.is_alive():
                p.terminate()
    while not queue.empty():
        rank, value = queue.get()
        results[rank] = value
    return results


def torchrun_env() -> tuple[int, int] | None:
    """(rank, world) when started by torchrun (RANK / WORLD_SIZE set), else None."""
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        return int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    return None
