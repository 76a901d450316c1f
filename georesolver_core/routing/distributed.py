"""Distributed GSR (protocol of section 10.3) beside a Switch-style all-to-all MoE, bytes counted.

Placement, the same for every protocol: K_pool prototypes and their experts are split into P
contiguous shards (rank r owns experts r*K_pool/P ...); the batch of B tokens is split into P
contiguous blocks (rank r owns tokens r*B/P ...), and each token's output must end on its owner.

GSR, exchange "candidates" (the protocol of 10.3 as written):
  queries    all-gather the token blocks, so every worker scores every query (the initial scatter)
  (local)    SIDA scores of the local prototypes, local Top-K
  candidates all-gather each worker's Top-K (score a = d^2 + eps, global index) per query
  (local)    global Top-K from the P*K candidates: the same set and weights as ``gsr_route``
  (local)    each worker evaluates its own selected experts: a partial output per token
  outputs    reduction of the K outputs: reduce-scatter of the partials to each token's owner
GSR, exchange "prototypes" (the reading where the exchange is O(K_pool d_h), independent of B):
  prototypes all-gather the prototype shards; then queries/outputs as above, routing fully local.
All-to-all ("switch": capacity-padded buffers, GShard/Switch; "dropless": counts first, exact sizes):
  (local)    route own tokens (the router is replicated, as a Switch gate is)
  counts     (dropless only) tokens per (source, expert)
  dispatch   all-to-all of token vectors to the experts' owners
  combine    all-to-all of expert outputs back to the owners, weighted sum there.
"""

from __future__ import annotations

import sys
import time
from dataclasses import asdict, dataclass, field

import torch
import torch.distributed as dist

from georesolver_core.budget import check_memory, elements
from georesolver_core.device import one_cpu_thread
from georesolver_core.routing.comm import Comm, init_group, launch, pick_backend
from georesolver_core.routing.experts import ExpertBank, Routing
from georesolver_core.routing.gsr import gsr_route, sida_sq_distance, topk_from_scores
from georesolver_core.routing.layer import GSRRouter, capacity_of
from georesolver_core.validate import check_eps, check_positive_int, check_range

PROTOCOLS = ("gsr-candidates", "gsr-prototypes", "a2a-switch", "a2a-dropless")


@dataclass(frozen=True)
class DistConfig:
    world_size: int = 2  # P worker processes
    n_pool: int = 64  # K_pool prototypes = experts, split over the workers
    dim: int = 32  # d_h, token and routing dimension
    k: int = 2  # Top-K
    eps: float = 0.1
    hidden: int = 32  # expert MLP width
    batch_sizes: tuple[int, ...] = (64, 256, 1024, 4096)
    capacity_factor: float = 1.25  # Switch capacity for "a2a-switch"
    dtype: str = "float32"
    seed: int = 0
    backend: str = "auto"  # gloo on CPU, nccl with one GPU per worker
    timeout_s: float = 60.0  # per collective and for the whole run
    fail_rank: int | None = None  # fault injection: this rank exits before exchanging anything

    def __post_init__(self):
        check_positive_int("world_size", self.world_size, 1, 64)
        check_positive_int("n_pool", self.n_pool, 1, 1 << 20)
        check_positive_int("dim", self.dim, 2, 65536)
        check_positive_int("k", self.k, 1, self.n_pool)
        check_eps(self.eps)
        check_positive_int("hidden", self.hidden, 1, 65536)
        if self.n_pool % self.world_size:
            raise ValueError(f"n_pool ({self.n_pool}) must be divisible by world_size ({self.world_size})")
        for b in self.batch_sizes:
            check_positive_int("batch size", b, self.world_size, 1 << 24)
            if b % self.world_size:
                raise ValueError(f"every batch size must be divisible by world_size ({self.world_size}) (got {b})")
        if self.dtype not in ("float32", "float64"):
            raise ValueError(f"dtype must be 'float32' or 'float64' (got {self.dtype!r})")
        if not self.capacity_factor > 0:
            raise ValueError(f"capacity_factor must be > 0 (got {self.capacity_factor!r})")
        check_range("capacity_factor", self.capacity_factor, 1e-3, 1e3)  # finite: slots = ceil(factor n k / E)
        check_range("timeout_s", self.timeout_s, 0.1, 86400.0)  # finite: datetime.timedelta and waits take it
        # per worker: the batch's scores (B x n_pool), the experts (n_pool x 2 dim x hidden), in float64
        check_memory(
            "this routing benchmark",
            8
            * (
                max(self.batch_sizes, default=1) * (self.n_pool + self.dim)
                + elements(self.n_pool, 2 * self.dim, self.hidden)
            ),
            batch_sizes=self.batch_sizes,
            n_pool=self.n_pool,
            dim=self.dim,
            hidden=self.hidden,
        )
        pick_backend(self.world_size, self.backend)


@dataclass
class CommRow:
    """Measured traffic of one protocol on one batch, summed over all workers."""

    protocol: str
    world_size: int
    batch: int
    bytes: int
    messages: int
    phases: dict = field(default_factory=dict)  # phase -> {"bytes": .., "messages": ..}
    dropped_slots: int = 0  # (token, expert) slots over capacity
    seconds: float = 0.0  # wall time of the slowest worker

    @property
    def bytes_per_query(self) -> float:
        return self.bytes / self.batch

    @property
    def messages_per_query(self) -> float:
        return self.messages / self.batch


def build_model(cfg: DistConfig) -> tuple[GSRRouter, ExpertBank]:
    """The full model, identical in every process (seeded)."""
    torch.manual_seed(cfg.seed)
    dtype = getattr(torch, cfg.dtype)
    router = GSRRouter(cfg.dim, cfg.n_pool, k=cfg.k, eps=cfg.eps).to(dtype)
    bank = ExpertBank(cfg.n_pool, cfg.dim, cfg.hidden).to(dtype)
    return router, bank


def batch_tokens(cfg: DistConfig, b: int) -> torch.Tensor:
    """The batch of B tokens (B, dim), identical in every process."""
    g = torch.Generator().manual_seed(cfg.seed + b)
    return torch.randn(b, cfg.dim, generator=g, dtype=torch.float64).to(getattr(torch, cfg.dtype))


@torch.no_grad()
def single_process_gsr(cfg: DistConfig, b: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Reference: the whole GSR layer in one process. Returns (outputs (B, dim), indices (B, K))."""
    router, bank = build_model(cfg)
    x = batch_tokens(cfg, b)
    routing = router(x)
    return bank.mix(x, routing), routing.indices


def _routing(idx: torch.Tensor, w: torch.Tensor, n: int) -> Routing:
    return Routing(idx, w, torch.ones_like(idx, dtype=torch.bool), n, w.new_zeros(()))


def _gsr(comm: Comm, cfg, router, bank, protos_local, x_local, exchange: str):
    lo = comm.rank * protos_local.shape[0]
    if exchange == "prototypes":
        protos = torch.cat(comm.all_gather(protos_local, "prototypes"))  # (K_pool, d)
    x = torch.cat(comm.all_gather(x_local, "queries"))  # (B, dim)
    q = router.queries(x)  # (B, d)
    if exchange == "prototypes":
        idx, w = gsr_route(q, protos, k=cfg.k, eps=cfg.eps)
    else:
        k_loc = min(cfg.k, protos_local.shape[0])
        a_loc = sida_sq_distance(q, protos_local) + cfg.eps  # (B, K_pool/P)
        pos, _ = topk_from_scores(a_loc, k_loc)  # (B, k_loc) local positions
        cand_a = a_loc.gather(-1, pos)  # (B, k_loc)
        # A candidate is (score, global index) in one message: the index's bits ride in a float slot
        # of the same width (int32 beside float32), so a candidate costs 2 x precision bytes.
        as_int = torch.int32 if q.dtype == torch.float32 else torch.int64
        cand_i = (pos + lo).to(as_int).view(q.dtype)  # (B, k_loc)
        both = torch.stack([cand_a, cand_i], dim=-1)  # (B, k_loc, 2)
        gathered = torch.cat(comm.all_gather(both, "candidates"), dim=1)  # (B, P*k_loc, 2), rank order
        # Rank order + the stable sort break ties towards the lower global index, as gsr_route does.
        sel, w = topk_from_scores(gathered[..., 0], cfg.k)  # (B, K)
        idx = gathered[..., 1].contiguous().view(as_int).gather(-1, sel).long()
    partial = bank.mix(x, _routing(idx, w.to(x.dtype), cfg.n_pool))  # (B, dim): own experts only
    own = comm.reduce_scatter(list(partial.chunk(comm.world)), "outputs")  # (B/P, dim)
    return own, idx.chunk(comm.world)[comm.rank], 0


def _a2a(comm: Comm, cfg, router, bank, x_local, dropless: bool):
    world, per = comm.world, cfg.n_pool // comm.world
    routing = router(x_local)  # replicated router, own tokens: indices (n, K)
    n, k = routing.indices.shape
    dim = x_local.shape[1]
    flat_e = routing.indices.reshape(-1)  # (n*K,)
    tok = torch.arange(n, device=x_local.device).repeat_interleave(k)  # (n*K,)
    order = torch.argsort(flat_e, stable=True)  # slots grouped by expert, token order inside
    e_sorted, t_sorted = flat_e[order], tok[order]
    counts = torch.bincount(flat_e, minlength=cfg.n_pool)  # (E,)
    start = torch.cumsum(counts, 0) - counts
    rank_in_expert = torch.arange(n * k, device=x_local.device) - start[e_sorted]  # arrival position at the expert
    if dropless:
        cap = None
        kept = torch.ones_like(e_sorted, dtype=torch.bool)
        got_counts = comm.all_to_all(list(counts.view(world, per)), [(per,)] * world, "counts")  # (per,) each
    else:
        cap = capacity_of(n, cfg.n_pool, k, cfg.capacity_factor)
        kept = rank_in_expert < cap
    dropped = int((~kept).sum())
    # Dispatch buffers: per destination rank, its experts' tokens (padded to cap in switch mode).
    sends, shapes, slots = [], [], []
    for r in range(world):
        in_r = (e_sorted // per == r) & kept
        if dropless:
            sends.append(x_local[t_sorted[in_r]])  # (sum counts, dim), grouped by expert
            shapes.append((int(got_counts[r].sum()), dim))
        else:
            buf = x_local.new_zeros(per, cap, dim)  # (E/P, C, dim)
            buf[e_sorted[in_r] - r * per, rank_in_expert[in_r]] = x_local[t_sorted[in_r]]
            sends.append(buf)
            shapes.append((per, cap, dim))
        slots.append(in_r)
    received = comm.all_to_all(sends, shapes, "dispatch")
    outs = []
    for r in range(world):  # evaluate own experts on what rank r sent
        if dropless:
            sizes = got_counts[r].tolist()
            pieces = received[r].split(sizes)
            outs.append(torch.cat([bank.expert(e, p) for e, p in enumerate(pieces)]))
        else:
            outs.append(torch.stack([bank.expert(e, received[r][e]) for e in range(per)]))  # (E/P, C, dim)
    back = comm.all_to_all(outs, [tuple(s.shape) for s in sends], "combine")
    y = torch.zeros_like(x_local)
    w_flat = routing.weights.reshape(-1)[order]
    for r in range(world):
        in_r = slots[r]
        vals = back[r] if dropless else back[r][e_sorted[in_r] - r * per, rank_in_expert[in_r]]
        y = y.index_add(0, t_sorted[in_r], vals * w_flat[in_r, None])
    return y, routing.indices, dropped


def _worker(rank: int, world: int, init_method: str, cfg: DistConfig, gather: bool = False):
    """One worker: every protocol on every batch size. With ``gather`` (torchrun) rank 0 returns all ranks' rows."""
    backend = pick_backend(world, cfg.backend)
    device = init_group(rank, world, backend, cfg.timeout_s, init_method)
    try:
        if cfg.fail_rank == rank:
            import os

            os._exit(3)  # fault injection: die without a word, as a crashed worker would
        comm = Comm(rank, world, cfg.timeout_s)
        router, bank = build_model(cfg)
        router, bank = router.to(device), bank.to(device)
        per = cfg.n_pool // world
        shard = bank.shard(rank * per, (rank + 1) * per).to(device)
        protos = router.prototypes.detach()
        protos = protos / protos.norm(dim=-1, keepdim=True)
        protos_local = protos[rank * per : (rank + 1) * per]
        rows = []
        for b in cfg.batch_sizes:
            x_local = batch_tokens(cfg, b).to(device).chunk(world)[rank]
            for proto in PROTOCOLS:
                comm.reset()
                dist.barrier()
                t0 = time.perf_counter()
                with torch.no_grad():
                    if proto.startswith("gsr"):
                        y, idx, dropped = _gsr(comm, cfg, router, shard, protos_local, x_local, proto[4:])
                    else:
                        y, idx, dropped = _a2a(comm, cfg, router, shard, x_local, proto == "a2a-dropless")
                rows.append(
                    dict(
                        protocol=proto,
                        batch=b,
                        bytes=dict(comm.bytes),
                        messages=dict(comm.messages),
                        dropped=dropped,
                        seconds=time.perf_counter() - t0,
                        y=y.cpu().double().numpy(),
                        idx=idx.cpu().numpy(),
                    )
                )
        if gather:
            every = [None] * world if rank == 0 else None
            dist.gather_object(rows, every, dst=0)
            return every
        return rows
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


@dataclass
class DistResult:
    config: DistConfig
    backend: str
    rows: list[CommRow]
    max_abs_diff: dict  # protocol -> max |distributed - single-process| over batches and tokens
    same_indices: dict  # protocol -> routing indices identical to single-process GSR

    def to_dict(self) -> dict:
        return {
            "config": asdict(self.config),
            "backend": self.backend,
            "rows": [
                dict(asdict(r), bytes_per_query=r.bytes_per_query, messages_per_query=r.messages_per_query)
                for r in self.rows
            ],
            "max_abs_diff": self.max_abs_diff,
            "same_indices": self.same_indices,
        }


def run_distributed(cfg: DistConfig) -> DistResult:
    """Launch P workers, run every protocol on every batch size, check against single-process GSR."""
    # gloo workers are forked (torch is already imported here); CUDA needs fresh spawned processes.
    method = "spawn" if pick_backend(cfg.world_size, cfg.backend) == "nccl" or sys.platform != "linux" else "fork"
    per_rank = launch(_worker, cfg.world_size, (cfg,), timeout_s=cfg.timeout_s * 4, start_method=method)
    if sorted(per_rank) != list(range(cfg.world_size)):
        raise RuntimeError(f"distributed run failed: results came back from ranks {sorted(per_rank)} only")
    return assemble(cfg, per_rank)


def run_torchrun(cfg: DistConfig, rank: int, world: int) -> DistResult | None:
    """The same run inside a torchrun-started process (env:// rendezvous); rank 0 returns the result."""
    if world != cfg.world_size:
        raise ValueError(f"world_size ({cfg.world_size}) must equal torchrun's WORLD_SIZE ({world})")
    every = _worker(rank, world, "env://", cfg, gather=True)
    return assemble(cfg, dict(enumerate(every))) if rank == 0 else None


def assemble(cfg: DistConfig, per_rank: dict) -> DistResult:
    """Sum each row's counters over ranks and compare the outputs with single-process GSR."""
    import numpy as np

    rows, diff, same = [], {p: 0.0 for p in PROTOCOLS}, {p: True for p in PROTOCOLS}
    n_rows = len(per_rank[0])
    refs: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
    for i in range(n_rows):
        parts = [per_rank[r][i] for r in range(cfg.world_size)]
        proto, b = parts[0]["protocol"], parts[0]["batch"]
        phases = {}
        for part in parts:
            for ph, v in part["bytes"].items():
                phases.setdefault(ph, {"bytes": 0, "messages": 0})["bytes"] += v
                phases[ph]["messages"] += part["messages"][ph]
        rows.append(
            CommRow(
                proto,
                cfg.world_size,
                b,
                sum(v["bytes"] for v in phases.values()),
                sum(v["messages"] for v in phases.values()),
                phases,
                sum(p["dropped"] for p in parts),
                max(p["seconds"] for p in parts),
            )
        )
        if b not in refs:
            with one_cpu_thread():
                refs[b] = single_process_gsr(cfg, b)
        ref_y, ref_idx = refs[b]
        y = np.concatenate([p["y"] for p in parts])
        idx = np.concatenate([p["idx"] for p in parts])
        diff[proto] = max(diff[proto], float(np.abs(y - ref_y.double().numpy()).max()))
        same[proto] = same[proto] and bool((idx == ref_idx.numpy()).all())
    return DistResult(cfg, pick_backend(cfg.world_size, cfg.backend), rows, diff, same)


def run_headless(cfg: DistConfig) -> dict:
    """``run_distributed`` in a fresh ``python -m georesolver_core routing --json`` process; its JSON document.

    For hosts that must not fork themselves (a threaded app server): the workers start from a clean process.
    """
    import json
    import subprocess

    cmd = [
        sys.executable,
        "-m",
        "georesolver_core",
        "routing",
        "--json",
        "--world-size",
        str(cfg.world_size),
        "--n-pool",
        str(cfg.n_pool),
        "--dim",
        str(cfg.dim),
        "--k",
        str(cfg.k),
        "--eps",
        repr(cfg.eps),
        "--capacity-factor",
        repr(cfg.capacity_factor),
        "--dtype",
        cfg.dtype,
        "--backend",
        cfg.backend,
        "--timeout",
        repr(cfg.timeout_s),
        "--batch-sizes",
        *map(str, cfg.batch_sizes),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=cfg.timeout_s * 6)
    if proc.returncode != 0:
        raise RuntimeError(f"distributed run failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout)
