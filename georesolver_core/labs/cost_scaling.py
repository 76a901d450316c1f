"""Cost scaling of the HIDA family: time (and peak memory) of forward+backward against n, with fitted
log-log slopes (Proposition 1: Dense 2, FP ~1 (n log n), L 1, C 0 per token).

``cost_scaling`` times every kernel at every length in one process, back to back per length, so the
slopes compare kernels under the same machine load. Dense-HIDA is the streaming fused kernel (O(n)
memory); FP-HIDA, L-HIDA and C-HIDA are this package's. For C-HIDA the reported quantity is the
time per token (time / n), whose slope Proposition 1 puts at 0.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np
import torch

from georesolver_core.attention.layer import ATTENTION
from georesolver_core.attention.timing import Timing
from georesolver_core.budget import check_attention_io
from georesolver_core.device import DTYPES
from georesolver_core.geometry import GEOMETRIES
from georesolver_core.peak_memory import peak_memory_mb
from georesolver_core.steps import run_to_end
from georesolver_core.theory.hida import PROPOSITION1_TOLERANCE, proposition1_exponent
from georesolver_core.validate import check_positive_int
from georesolver_core.verdicts import fit_loglog_slope

SCALING_LENS = (1024, 2048, 4096, 8192, 16384, 32768)  # n in [1024, 32768]
NAIVE = "-naive"  # "<key>-naive": the n x n reference of a dense entry, beside its fused kernel


def timed() -> list[str]:
    """The entries of ATTENTION with a timing, in registry order."""
    return [key for key, kind in ATTENTION.items() if kind.timing is not None]


def scaling_kernels() -> tuple[str, ...]:
    """The rows the sweep can time: every timed entry, and the naive reference of each dense one."""
    keys = timed()
    return (*keys, *(key + NAIVE for key in keys if ATTENTION[key].timing.naive is not None))


def default_kernels() -> tuple[str, ...]:
    """The rows the sweep times by default: the timed entries marked ``sweep`` (the HIDA family)."""
    return tuple(key for key in timed() if ATTENTION[key].timing.sweep)


def _timing(kernel: str) -> Timing:
    """The timing of a sweep row: its ATTENTION entry's (the entry's own for "<key>-naive")."""
    if kernel not in (allowed := scaling_kernels()):
        raise ValueError(f"kernel must be one of {list(allowed)} (got {kernel!r})")
    return ATTENTION[kernel.removesuffix(NAIVE)].timing


def label(kernel: str) -> str:
    """A sweep row's label: its entry's label and how it is run, e.g. "FP-HIDA (...) (w = g = log2 n)"."""
    how = "naive, n x n" if kernel.endswith(NAIVE) else _timing(kernel).setting
    return ATTENTION[kernel.removesuffix(NAIVE)].labelled(how)


def predicted_exponent(kernel: str, n_lo: int, n_hi: int) -> float:
    """Proposition 1's time exponent of a sweep row over n_lo..n_hi (``theory.hida.proposition1_exponent``)."""
    timing = _timing(kernel)
    return proposition1_exponent(timing.exponent, n_lo, n_hi, log_factor=timing.log_factor)


def per_token(kernel: str) -> bool:
    """Whether the row is judged per token (a streaming entry: time / n)."""
    return _timing(kernel).per_token


def _inputs(B, H, n, d, dtype, device, seed=0, geometry="poincare"):
    g = torch.Generator().manual_seed(seed)
    embed = GEOMETRIES[geometry].embed
    q = embed(torch.randn(B, H, n, d, generator=g, dtype=dtype), 1.0).to(device).requires_grad_()
    k = embed(torch.randn(B, H, n, d, generator=g, dtype=dtype), 1.0).to(device).requires_grad_()
    v = torch.randn(B, H, n, d, generator=g, dtype=dtype).to(device).requires_grad_()
    return q, k, v


def _runner(kernel: str, eps: float, n_anchors: int, n_summaries: int) -> Callable:
    """q, k, v -> the row's output: the entry's timed run (its naive reference for "<key>-naive")."""
    timing = _timing(kernel)
    run = timing.naive if kernel.endswith(NAIVE) else timing.run
    return lambda q, k, v: run(q, k, v, eps=eps, n_anchors=n_anchors, n_summaries=n_summaries)


def _geometry(kernel: str) -> str:
    return ATTENTION[kernel.removesuffix(NAIVE)].geometry


@dataclass
class ScalingReport:
    """Times (median seconds of forward+backward) and peak memory per kernel and length, with slopes."""

    lens: list[int]
    kernels: list[str]
    seconds: dict = field(default_factory=dict)  # kernel -> [s per length] (None where skipped)
    per_token: dict = field(default_factory=dict)  # kernel -> [s / n]
    peak_mb: dict = field(default_factory=dict)  # kernel -> [MB] or None
    slopes: dict = field(default_factory=dict)  # kernel -> fitted log-log slope (of ``series``)
    predicted: dict = field(default_factory=dict)  # kernel -> Proposition 1 exponent
    config: dict = field(default_factory=dict)

    def series(self, kernel: str) -> list:
        """What a row is judged on, one value per length (None where not timed, yet or at all): time per
        token for a streaming entry, else time."""
        return self._padded((self.per_token if per_token(kernel) else self.seconds)[kernel])

    def peak_series(self, kernel: str) -> list:
        """Peak memory (MB) of a row, one value per length (None where not measured)."""
        return self._padded(self.peak_mb[kernel])

    def _padded(self, values: list) -> list:
        # a partial sweep (``cost_scaling_steps``) has timed only the first lengths of a row
        return values + [None] * (len(self.lens) - len(values))


def fitted_slope(x, y) -> float | None:
    """``verdicts.fit_loglog_slope`` over the finite, positive points; None if fewer than 2 (a partial sweep)."""
    x, y = np.asarray(x, float), np.asarray([np.nan if v is None else v for v in y], float)
    keep = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    return fit_loglog_slope(x[keep], y[keep]) if keep.sum() >= 2 else None


@dataclass(frozen=True)
class ScalingConfig:
    """One cost-scaling sweep: which kernels, at which lengths, on which inputs.

    Checked once, when the sweep starts (``cost_scaling_steps``: in the worker, for a page): lengths of at
    least 2 tokens, kernels a non-empty subset of ``scaling_kernels()``, repeats >= 1, dtype a DTYPES name,
    the largest inputs within the attention I/O budget. Plain values only: a job carries it as JSON.
    """

    lens: tuple[int, ...] = SCALING_LENS  # sequence lengths n (timed in increasing order)
    kernels: tuple[str, ...] | None = None  # ``scaling_kernels()`` entries (None: ``default_kernels()``)
    batch: int = 1
    heads: int = 1
    head_dim: int = 64
    eps: float = 0.1
    repeats: int = 1  # timings per point (the median is kept)
    backward: bool = True  # time forward + backward (False: forward only)
    memory: bool = False  # measure the peak memory of each point too (``peak_memory_mb``)
    # kernel -> largest length timed (e.g. {"hida": 8192}: the dense kernel's n^2 cost would take hours at
    # 32768 on a CPU); skipped points are None and left out of the fit
    max_len: dict[str, int] | None = None
    n_anchors: int = 16  # L-HIDA's anchors
    n_summaries: int = 16  # C-HIDA's summaries
    dtype: str = "float32"  # a DTYPES name
    device: str = "cpu"


def cost_scaling(config: ScalingConfig, *, progress: Callable[[float, str], None] | None = None) -> ScalingReport:
    """Time each kernel of ``config`` at each length (forward, + backward unless ``backward=False``):
    ``cost_scaling_steps`` run to the end, reporting ``progress(fraction, text)`` after each timing."""
    return run_to_end(cost_scaling_steps(config), None if progress is None else lambda step: progress(*step[:2]))


def cost_scaling_steps(config: ScalingConfig):
    """``cost_scaling`` one timing at a time: yields (fraction done, text, the report so far, with its
    slopes fitted over the lengths timed) and returns the report. A page can stop it and keep what it timed."""
    batch, heads, head_dim, eps, repeats = config.batch, config.heads, config.head_dim, config.eps, config.repeats
    backward, memory, device = config.backward, config.memory, config.device
    n_anchors, n_summaries = config.n_anchors, config.n_summaries
    lens = sorted(check_positive_int("n", int(n), 2) for n in config.lens)
    kernels = default_kernels() if config.kernels is None else config.kernels
    unknown = [k for k in kernels if k not in scaling_kernels()]
    if unknown or not kernels:
        raise ValueError(f"kernels must be a non-empty subset of {list(scaling_kernels())} (got {list(kernels)})")
    check_positive_int("repeats", repeats, 1)
    if config.dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {list(DTYPES)} (got {config.dtype!r})")
    dtype = DTYPES[config.dtype]
    itemsize = torch.empty(0, dtype=dtype).element_size()
    check_attention_io("this scaling benchmark", batch, heads, lens[-1], head_dim, itemsize)
    max_len = dict(config.max_len or {})
    rep = ScalingReport(lens=lens, kernels=list(kernels), config=dict(
        batch=batch, heads=heads, head_dim=head_dim, eps=eps, repeats=repeats, backward=backward,
        n_anchors=n_anchors, n_summaries=n_summaries, dtype=str(dtype), device=str(device), max_len=max_len,
    ))  # fmt: skip
    for kern in kernels:
        rep.seconds[kern], rep.peak_mb[kern] = [], []
    total, done = len(lens) * len(kernels), 0
    for kern in kernels:  # warm-up at the smallest length: thread pools, allocator, first-call paths
        q, k, v = _inputs(batch, heads, lens[0], head_dim, dtype, device, geometry=_geometry(kern))
        out = _runner(kern, eps, n_anchors, n_summaries)(q, k, v)
        if backward:
            out.backward(torch.ones_like(out))
    for n in lens:
        for kern in kernels:
            if n > max_len.get(kern, n):
                rep.seconds[kern].append(None)
                rep.peak_mb[kern].append(None)
                done += 1
                continue
            q, k, v = _inputs(batch, heads, n, head_dim, dtype, device, geometry=_geometry(kern))
            fn = _runner(kern, eps, n_anchors, n_summaries)

            def call(fn=fn, q=q, k=k, v=v):
                out = fn(q, k, v)
                if backward:
                    out.backward(torch.ones_like(out))
                    q.grad = k.grad = v.grad = None
                if str(device).startswith("cuda"):
                    torch.cuda.synchronize()

            times = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                call()
                times.append(time.perf_counter() - t0)
            rep.seconds[kern].append(statistics.median(times))
            rep.peak_mb[kern].append(peak_memory_mb(call, str(device).split(":")[0]) if memory else None)
            done += 1
            yield done / total, f"{label(kern)} at n = {n}: {rep.seconds[kern][-1]:.3g} s", _fit(rep)
    return _fit(rep)


def _fit(rep: ScalingReport) -> ScalingReport:
    """Per-token times and slopes over the lengths timed so far (a partial sweep pads with None)."""
    for kern in rep.kernels:
        secs = rep.seconds[kern] + [None] * (len(rep.lens) - len(rep.seconds[kern]))
        rep.per_token[kern] = [None if s is None else s / n for s, n in zip(secs, rep.lens, strict=True)]
        rep.slopes[kern] = fitted_slope(rep.lens, rep.per_token[kern] if per_token(kern) else secs)
        rep.predicted[kern] = _timing(kern).exponent
    return rep


@dataclass(frozen=True)
class SlopeJudgement:
    """One kernel's fitted log-log slope against Proposition 1's exponent."""

    kernel: str  # ATTENTION key
    label: str  # its display name
    slope: float | None  # fitted exponent (None: fewer than two lengths timed)
    predicted: float  # Proposition 1's exponent over the lengths timed
    target: str  # "p +- tol", as printed
    met: bool | None  # |slope - predicted| <= tol (None: not measured)


def judge_slopes(rep: ScalingReport, tol: float = PROPOSITION1_TOLERANCE) -> list[SlopeJudgement]:
    """Each fitted slope against Proposition 1 (``predicted_exponent``): met when
    |slope - predicted| <= tol, the rule of the claim ``prop1-cost-classes``. A slope far below its
    prediction (fixed costs dominating short lengths) is not met either: it says nothing for the claim."""
    out = []
    timed = [
        n for i, n in enumerate(rep.lens) if any(i < len(v) and v[i] is not None for v in rep.seconds.values())
    ]
    n_lo, n_hi = (timed[0], timed[-1]) if timed else (rep.lens[0], rep.lens[-1])
    for kern in rep.kernels:
        s = rep.slopes.get(kern)
        p = predicted_exponent(kern, n_lo, n_hi)
        met = None if s is None else bool(abs(s - p) <= tol)
        target = f"{p:.2f} +- {tol:g}"
        out.append(SlopeJudgement(kernel=kern, label=label(kern), slope=s, predicted=p, target=target, met=met))
    return out


def format_scaling(rep: ScalingReport) -> str:
    """A plain-text table: seconds per kernel and length, then the slopes against their targets."""
    head = f"{'n':>7} " + " ".join(f"{k:>12}" for k in rep.kernels)
    streamed = [k for k in rep.kernels if per_token(k)]
    lines = [
        f"time of {'forward+backward' if rep.config.get('backward') else 'forward'} (s)"
        + (f"; per token: {', '.join(streamed)}" if streamed else ""),
        head,
    ]
    for i, n in enumerate(rep.lens):
        cells = []
        for kern in rep.kernels:
            val = rep.series(kern)[i]
            cells.append(f"{'-':>12}" if val is None else f"{val:12.4g}")
        lines.append(f"{n:>7} " + " ".join(cells))
    judged = judge_slopes(rep)
    width = max((len(j.label) for j in judged), default=0)
    for j in judged:
        s = "n/a" if j.slope is None else f"{j.slope:.3f}"
        verdict = {True: "met", False: "NOT met", None: "not measured"}[j.met]
        lines.append(f"{j.label:<{width}} slope {s:>6}  target {j.target:<20} {verdict}")
    return "\n".join(lines)


def hida_bench_kernels() -> dict:
    """The sub-quadratic rows of the kernel benchmark: ATTENTION key -> (setting, run(q, k, v, eps, causal)).

    Every timed entry without a naive reference (the dense entries have their own fused and naive rows
    there): L-HIDA keeps 16 anchors taken from the keys (every (n/16)-th); C-HIDA is causal whatever ``causal``.
    """
    return {
        key: (
            ATTENTION[key].timing.setting,
            lambda q, k, v, eps, causal, run=ATTENTION[key].timing.run: run(q, k, v, eps=eps, causal=causal),
        )
        for key in timed()
        if ATTENTION[key].timing.naive is None
    }


def scaling_main(args: argparse.Namespace) -> int:
    """``python -m georesolver_core bench --scaling``: the cost-scaling sweep, slopes judged against the targets."""
    lens = tuple(args.seq_lens) if getattr(args, "seq_lens", None) else SCALING_LENS
    if getattr(args, "quick", False) and not getattr(args, "seq_lens", None):
        lens = (256, 512, 1024)
    kernels = tuple(k for k in (args.kernels or ()) if k in scaling_kernels()) or default_kernels()
    try:
        config = ScalingConfig(
            lens=lens,
            kernels=kernels,
            eps=args.eps,
            repeats=args.repeats or 1,
            device=args.device or "cpu",
            max_len={"hida": 8192},
        )
        rep = cost_scaling(
            config, progress=lambda f, m: print(f"[{100 * f:5.1f}%] {m}", file=sys.stderr, flush=True)
        )
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.json:
        json.dump({**asdict(rep), "targets": [asdict(j) for j in judge_slopes(rep)]}, sys.stdout, indent=1)
        print()
    else:
        print(format_scaling(rep))
    return 0
