"""Measurements of dyadic Hankel attention (seed 004): decay per block, rank vs eps, output error, speed-up.

The claims make them here; the page's lab (configs in, typed results out) is ``labs.hankel``."""

from __future__ import annotations

import statistics
import time
from collections.abc import Generator, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from georesolver_core.device import one_cpu_thread, thread_count
from georesolver_core.extras.hankel import (
    apply_factored,
    block_factors,
    block_singular_values,
    boundary_distances,
    check_eps_unit,
    check_h,
    dyadic_blocks,
    hankel_kernel,
    observed_rank,
)
from georesolver_core.steps import run_to_end
from georesolver_core.theory.hankel import rank_rule, singular_value_bound
from georesolver_core.validate import check_positive_int
from georesolver_core.verdicts import HOLDS, verdict_inequality

LEFT_FACTOR = 4  # a block [h, 2h) meets s in (delta, delta + 4h]: the finite stand-in for s in (0, inf)


@dataclass(frozen=True)
class Decay:
    hs: list[float]  # block scales h
    singular_values: list[list[float]]  # per h: leading singular values, unnormalised (descending)

    def normalised(self) -> list[list[float]]:
        return [(np.asarray(sv) / sv[0]).tolist() for sv in self.singular_values]


@one_cpu_thread()  # tiny tensors: a second thread only adds synchronisation (8x slower measured)
def decay_sweep(hs: Sequence[float], top: int = 12, delta: float = 1.0) -> Decay:
    """Leading singular values of the block s = delta+1 .. delta+4h, r = h .. 2h-1 for each h."""
    for h in hs:
        check_h(h)
    return Decay(
        hs=list(map(float, hs)),
        singular_values=[block_singular_values(h, LEFT_FACTOR * int(h), delta, top=top).tolist() for h in hs],
    )


@dataclass(frozen=True)
class DecayCheck:
    """The seed's decay s_(N+1)/s_1 <= 4^-N index by index, at the worst block scale h of a ``Decay``."""

    worst: list[float]  # (top,) max over h of s_n / s_1, n = 1..top
    bound: list[float]  # (top,) 4^-(n - 1) (``theory.hankel.singular_value_bound``)
    verdict: str  # HOLDS or FAILS (``verdicts.verdict_inequality``, relation "le")
    summary: str  # the tightest margin, or the worst index

    @property
    def holds(self) -> bool:
        return self.verdict == HOLDS


def decay_check(decay: Decay) -> DecayCheck:
    """Judge the normalised singular values of every block against 4^-N (the claim's verdict rule)."""
    worst = np.asarray(decay.normalised(), dtype=float).max(axis=0)  # (top,)
    bound = singular_value_bound(np.arange(1, worst.size + 1))
    verdict, summary = verdict_inequality(worst, bound, relation="le")
    return DecayCheck(worst=worst.tolist(), bound=bound.tolist(), verdict=verdict, summary=summary)


@dataclass(frozen=True)
class Ranks:
    eps: list[float]
    hs: list[float]
    observed: list[list[int]]  # observed[i][j]: rank needed at eps[i] on the block of scale hs[j]
    rule: list[int]  # ceil(log4(1/eps))


def rank_sweep(eps_list: Sequence[float], decay: Decay) -> Ranks:
    """Observed rank (smallest N with s_{N+1}/s_1 <= eps) per eps and h, beside the seed's rule."""
    eps_list = [check_eps_unit(e) for e in eps_list]
    obs = [[observed_rank(np.asarray(sv), e) for sv in decay.singular_values] for e in eps_list]
    return Ranks(eps=eps_list, hs=decay.hs, observed=obs, rule=[rank_rule(e) for e in eps_list])


@one_cpu_thread()
def output_error(h: float, rank: int, d_v: int = 16, seed: int = 0, delta: float = 1.0) -> float:
    """||H X - U (V^T X)||_F / ||H X||_F for the block of scale h, random Gaussian values X (w, d_v), float64."""
    check_h(h)
    s = delta + 1 + torch.arange(LEFT_FACTOR * int(h), dtype=torch.float64)  # (4h,)
    r = h + torch.arange(max(1, int(h)), dtype=torch.float64)  # (h,)
    x = torch.randn(r.numel(), d_v, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    u, v = block_factors(s, r, rank, torch.float64)
    dense = hankel_kernel(s, r) @ x
    return float((dense - apply_factored(u, v, x)).norm() / dense.norm())


@dataclass(frozen=True)
class Speed:
    sizes: list[int]  # block size m (m targets, r in [m, 2m): m sources)
    rank: int
    dense_ms: list[float]  # median time of H X
    factored_ms: list[float]  # median time of U (V^T X)
    speedup: list[float]  # dense / factored, measured in the same run
    flop_ratio: list[float]  # m^2 d / (2 m N d) = m / (2N)
    error: list[float]  # relative Frobenius error of the factorised output (float32)
    threads: int


def speedup_steps(
    sizes: Sequence[int], rank: int, d_v: int = 64, repeats: int = 7, threads: int = 1
) -> Generator[tuple[float, str, Speed], None, Speed]:
    """``speedup_sweep`` one block size at a time: yields (fraction of the sizes done, a line, the ``Speed`` of
    the sizes timed so far) after each size and returns the whole ``Speed`` (a worker job's steps: a Stop
    keeps the sizes already timed)."""
    check_positive_int("rank", rank)
    check_positive_int("repeats", repeats)
    check_positive_int("threads", threads, 1, 256)
    for m in sizes:
        check_positive_int("size", int(m), 1)
    sizes = [int(m) for m in sizes]
    out: dict[str, list[float]] = {"d": [], "f": [], "e": []}
    with thread_count(threads):  # this thread only: other users of the process keep their count
        for i, m in enumerate(sizes):
            s = 2.0 + torch.arange(m, dtype=torch.float64)  # (m,)
            r = float(m) + torch.arange(m, dtype=torch.float64)  # (m,): the dyadic block [m, 2m)
            h = hankel_kernel(s, r).to(torch.float32)  # (m, m)
            u, v = block_factors(s, r, rank, torch.float32)  # (m, N), (m, N)
            x = torch.randn(m, d_v, generator=torch.Generator().manual_seed(m))  # (m, d_v)
            td, tf = [], []
            for _ in range(repeats):
                t0 = time.perf_counter()
                ref = h @ x
                t1 = time.perf_counter()
                fac = apply_factored(u, v, x)
                t2 = time.perf_counter()
                td.append(t1 - t0)
                tf.append(t2 - t1)
            out["d"].append(1e3 * statistics.median(td))
            out["f"].append(1e3 * statistics.median(tf))
            out["e"].append(float((ref - fac).norm() / ref.norm()))
            speed = _speed(sizes[: i + 1], rank, out, threads)
            yield (i + 1) / len(sizes), f"block size {m}: {speed.speedup[-1]:.3g}x", speed
    return _speed(sizes, rank, out, threads)


def _speed(sizes: list[int], rank: int, out: dict[str, list[float]], threads: int) -> Speed:
    return Speed(
        sizes=list(sizes),
        rank=rank,
        dense_ms=list(out["d"]),
        factored_ms=list(out["f"]),
        speedup=[d / f for d, f in zip(out["d"], out["f"], strict=True)],
        flop_ratio=[m / (2 * rank) for m in sizes],
        error=list(out["e"]),
        threads=threads,
    )


def speedup_sweep(sizes: Sequence[int], rank: int, d_v: int = 64, repeats: int = 7, threads: int = 1) -> Speed:
    """Time the dense cross block H X against U (V^T X) (both operands precomputed, float32) on one run
    with torch fixed to ``threads`` intra-op threads (restored after). Each repeat times both back to back;
    the median is kept. ``speedup_steps`` run to its end."""
    return run_to_end(speedup_steps(sizes, rank, d_v=d_v, repeats=repeats, threads=threads))


@dataclass(frozen=True)
class KernelView:
    kernel: np.ndarray  # (split, L - split) the cross block H[i, j] = 1/(s_i + r_j)
    blocks: list[tuple[int, int, float]]  # column ranges [start, stop) and their scale h (0: dense layer)
    length: int
    split: int


def kernel_view(length: int, split: int, h0: float = 4.0, delta: float = 1.0) -> KernelView:
    """The cross block of a sequence with its dyadic column blocks, for the picture."""
    s, r = boundary_distances(length, split, delta)
    return KernelView(kernel=hankel_kernel(s, r).numpy(), blocks=dyadic_blocks(r, h0), length=length, split=split)
