"""Kernel benchmark, the runs behind ``python -m georesolver_core bench [--json]`` (its flags: ``bench.cli``).

The headline table (``bench.public``) times what users call (``attention.ida`` in three geometries,
``ida_weights``, ``GeoAttention``), each pair by pair against its softmax twin on the same tensors.
The second table times the streaming inverse-distance kernels themselves (IDA, Dense-HIDA, SIDA:
no validation, no API layer) against PyTorch's fused ``scaled_dot_product_attention`` on the same shapes, in one process and one run, so that the
ratios are comparable even on a noisy machine: every repeat times all kernels back to back and the
reported time is the median over repeats after a warm-up. Peak memory is measured in a separate,
untimed call (``peak_memory``); the report is judged and formatted by ``bench.report``.
"""

from __future__ import annotations

import copy
import os
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace

import torch
import torch.nn.functional as F

from georesolver_core.attention import compiled
from georesolver_core.attention.fused import fused_ida
from georesolver_core.attention.layer import ATTENTION
from georesolver_core.attention.reference import reference_ida
from georesolver_core.attention.spec import ALL_KEYS, CAUSAL, KernelSpec
from georesolver_core.bench.public import LEAVES, headline, headline_bytes
from georesolver_core.bench.report import MEMORY_LIMIT_MB, SCHEMA, judge
from georesolver_core.bench.report_view import merge_length
from georesolver_core.budget import check_memory, elements
from georesolver_core.device import default_device, device_label, thread_count
from georesolver_core.geometry import GEOMETRIES
from georesolver_core.labs.cost_scaling import hida_bench_kernels
from georesolver_core.peak_memory import MEMORY_METHOD, memory_method, peak_memory_mb
from georesolver_core.validate import check_eps, check_positive_int

DEFAULT_SEQ_LENS = (256, 1024)  # the default run: under 2 minutes on a loaded 2-core CPU
FULL_SEQ_LENS = (256, 1024, 4096, 16384)  # --long
QUICK_SEQ_LENS = (64, 128)
LONG_CALL_S, LONG_ROW_REPEATS = 5.0, 3  # rows whose warm-up call takes longer are timed fewer times


@dataclass(frozen=True)
class Kernel:
    """A benchmark row: the ATTENTION entry it times, labelled with how it runs, and how to run it."""

    label: str  # the entry's label and the implementation, e.g. "IDA (Euclidean) (fused)"
    geometry: str | None  # the entry's geometry; None: softmax (SDPA)
    run: Callable  # (q, k, v, eps, causal) -> o
    reference: bool = False  # the naive O(T^2)-memory kernel, only timed at short lengths
    # The peak of one forward + backward, inputs and gradients included, above the process's level before
    # the call: ``io_tensors`` (B, H, T, D) tensors, ``position_floats`` more values per (batch, head,
    # position) whatever D (windows, anchors, summaries), and for the naive kernels ``pair_tensors``
    # (B, H, T, T, D) tensors (their pairwise differences) and 8 (B, H, T, T) ones. See ``KERNEL_TENSORS``.
    io_tensors: float = 20
    position_floats: float = 64
    pair_tensors: float = 0

    def call_bytes(self, batch: int, heads: int, seq_len: int, head_dim: int, itemsize: int) -> int:
        """Bytes one forward + backward of this row holds at its peak (see the fields)."""
        per_position = self.io_tensors * head_dim + self.position_floats
        if self.reference:
            per_position += seq_len * (self.pair_tensors * head_dim + 8)
        return int(itemsize * elements(batch, heads, seq_len) * per_position)


# (io_tensors, position_floats, pair_tensors) per row, measured on CPU in float32 (B = 1, H = 4) at
# T = 512..4096 with D = 64 and T = 4096..16384 with D = 1, each rounded up: SDPA 9 and 10, the fused dense
# kernels 15-17 and 20-57, FP-HIDA 9-20 and up to 1,250 (its blocks of scores around the band), L-HIDA 47-54 and 750 (16
# anchors), C-HIDA 142 and 4,830 (a state per position and each of 16 summaries); the naive kernels 1.5
# (Euclidean, Poincare) and 3.1 (sphere) pair tensors.
KERNEL_TENSORS = {
    "sdpa": (10, 16, 0), "ida": (20, 48, 0), "hida": (20, 64, 0), "sida": (20, 32, 0),
    "fp-hida": (20, 1500, 0), "l-hida": (60, 800, 0), "c-hida": (150, 5000, 0),
    "ida-naive": (10, 64, 1.6), "hida-naive": (10, 64, 1.7), "sida-naive": (10, 64, 3.2),
}  # fmt: skip


def _timed_entry(key: str, implementation: str, run: Callable, reference: bool = False) -> Kernel:
    """The row that times ATTENTION[key] with ``implementation`` (its label and geometry come from there)."""
    kind = ATTENTION[key]
    name = f"{key}-naive" if reference else ("sdpa" if key == "softmax" else key)
    return Kernel(
        kind.labelled(implementation), kind.geometry, run, reference, *KERNEL_TENSORS.get(name, (20, 64, 0))
    )


def _sdpa(q, k, v, eps, causal):
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def _spec(eps, geometry, causal):
    return KernelSpec(eps, geometry, keys=CAUSAL if causal else ALL_KEYS)


def _fused(geometry):
    return lambda q, k, v, eps, causal: fused_ida(q, k, v, _spec(eps, geometry, causal))


def _naive(geometry):
    return lambda q, k, v, eps, causal: reference_ida(q, k, v, _spec(eps, geometry, causal))


# the dense inverse-distance entries of ATTENTION (ida, hida, sida): those timed with a naive reference
FUSED = tuple(key for key, kind in ATTENTION.items() if kind.timing is not None and kind.timing.naive is not None)
# Row keys: "sdpa" times the softmax entry, "<key>" the fused and "<key>-naive" the reference kernel of
# each dense entry, then the sub-quadratic HIDA family (labs.cost_scaling has their cost-scaling
# mode, --scaling).
TIMED_KERNELS: dict[str, Kernel] = {
    "sdpa": _timed_entry("softmax", "torch SDPA", _sdpa),
    **{key: _timed_entry(key, "fused", _fused(ATTENTION[key].geometry)) for key in FUSED},
    **{f"{key}-naive": _timed_entry(key, "naive", _naive(ATTENTION[key].geometry), True) for key in FUSED},
    **{key: _timed_entry(key, setting, run) for key, (setting, run) in hida_bench_kernels().items()},
}


@dataclass(frozen=True)
class BenchConfig:
    seq_lens: tuple[int, ...] = FULL_SEQ_LENS
    kernels: tuple[str, ...] = ("sdpa", *FUSED)
    batch: int = 1
    heads: int = 4
    head_dim: int = 64
    eps: float = 0.1
    causal: bool = False
    repeats: int = 5
    warmup: int = 1
    dtype: str = "float32"
    device: str = field(default_factory=lambda: default_device().type)
    threads: int | None = None  # None: torch's default
    naive_max_len: int = 0  # also time the naive kernels up to this length (0: never)
    memory: bool = True  # measure peak memory at every length
    memory_check_len: int = 0  # one extra forward+backward per kernel at this length (0: skip)
    headline_lens: tuple[int, ...] = ()  # the public calls vs their softmax twins (bench.public); the CLI: 1024

    def __post_init__(self):
        if not self.seq_lens:
            raise ValueError("seq_lens must name at least one sequence length (got none)")
        for t in self.seq_lens:
            check_positive_int("seq_lens entries", t, 1, 1 << 20)
        for t in self.headline_lens:
            check_positive_int("headline_lens entries", t, 1, 1 << 20)
        unknown = [k for k in self.kernels if k not in TIMED_KERNELS]
        if unknown or not self.kernels:
            raise ValueError(
                f"kernels must be a non-empty subset of {list(TIMED_KERNELS)} (got {list(self.kernels)})"
            )
        check_positive_int("batch", self.batch, 1, 4096)
        check_positive_int("heads", self.heads, 1, 1024)
        check_positive_int("head_dim", self.head_dim, 1, 4096)
        check_eps(self.eps)
        check_positive_int("repeats", self.repeats, 1, 1000)
        check_positive_int("warmup", self.warmup, 0, 100)
        check_positive_int("naive_max_len", self.naive_max_len, 0, 1 << 20)
        check_positive_int("memory_check_len", self.memory_check_len, 0, 1 << 20)
        if self.dtype not in ("float32", "float64"):
            raise ValueError(f"dtype must be 'float32' or 'float64' (got {self.dtype!r})")
        if self.device not in ("cpu", "cuda"):
            raise ValueError(f"device must be 'cpu' or 'cuda' (got {self.device!r})")
        if self.device == "cuda" and not torch.cuda.is_available():
            raise ValueError("device must be 'cpu' here: torch.cuda.is_available() is False")
        if self.threads is not None:
            check_positive_int("threads", self.threads, 1, 1024)
        check_memory(
            "this benchmark", self.estimate_bytes(),
            seq_lens=self.seq_lens, batch=self.batch, heads=self.heads, head_dim=self.head_dim,
            naive_max_len=self.naive_max_len, memory_check_len=self.memory_check_len, headline_lens=self.headline_lens,
        )  # fmt: skip

    def estimate_bytes(self) -> int:
        """Peak bytes of ``run_benchmark``, the largest of its phases. At each timed length every row's
        inputs and gradients (``public.LEAVES`` (B, H, T, D) tensors) are alive together while the largest
        row's call runs (``Kernel.call_bytes``); the memory check runs beside the last length's rows; the
        headline is ``public.headline_bytes``. The naive rows count only up to ``naive_max_len``."""
        size = 8 if self.dtype == "float64" else 4

        def held(t: int) -> int:
            return len(_kernels_at(self, t)) * LEAVES * size * elements(self.batch, self.heads, t, self.head_dim)

        def call(names, t: int) -> int:
            return max(
                (TIMED_KERNELS[k].call_bytes(self.batch, self.heads, t, self.head_dim, size) for k in names),
                default=0,
            )

        phases = [held(t) + call(_kernels_at(self, t), t) for t in self.seq_lens]
        if self.memory_check_len:
            streaming = [k for k in self.kernels if not TIMED_KERNELS[k].reference]
            phases.append(held(self.seq_lens[-1]) + call(streaming, self.memory_check_len))
        phases += [
            headline_bytes(t, batch=self.batch, heads=self.heads, head_dim=self.head_dim, itemsize=size)
            for t in self.headline_lens
        ]
        return max(phases)


def make_inputs(cfg: BenchConfig, seq_len: int, geometry: str | None, seed: int = 0):
    """q, k, v, dout of shape (B, H, T, D), q and k mapped into the kernel's geometry."""
    gen = torch.Generator().manual_seed(seed + seq_len)
    shape = (cfg.batch, cfg.heads, seq_len, cfg.head_dim)
    dtype = getattr(torch, cfg.dtype)
    q, k, v, g = (torch.randn(shape, generator=gen, dtype=dtype) for _ in range(4))
    if geometry is not None:
        q, k = (GEOMETRIES[geometry].embed(t, 1.0) for t in (q, k))
    dev = torch.device(cfg.device)
    return [t.to(dev) for t in (q, k, v)], g.to(dev)


def _sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


class _Case:
    """One kernel at one length: closures for forward and forward+backward on fixed inputs."""

    def __init__(self, cfg: BenchConfig, name: str, seq_len: int):
        self.cfg, self.name, self.kernel = cfg, name, TIMED_KERNELS[name]
        (q, k, v), self.g = make_inputs(cfg, seq_len, self.kernel.geometry)
        self.inputs = [t.requires_grad_() for t in (q, k, v)]

    def forward(self):
        with torch.no_grad():
            self.kernel.run(*self.inputs, self.cfg.eps, self.cfg.causal)

    def forward_backward(self):
        self.kernel.run(*self.inputs, self.cfg.eps, self.cfg.causal).backward(self.g)

    def reset_grads(self):
        for t in self.inputs:
            t.grad = None

    def peak_mb(self) -> float | None:
        self.reset_grads()  # outside the measured call: only what the call itself allocates counts
        return peak_memory_mb(self.forward_backward, self.cfg.device)

    def timed(self, fn) -> float:
        _sync(self.cfg.device)
        start = time.perf_counter()
        fn()
        _sync(self.cfg.device)
        return (time.perf_counter() - start) * 1e3


def environment(cfg: BenchConfig) -> dict:
    dev = torch.device(cfg.device)
    return {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "device": cfg.device,
        "device_name": device_label(dev),
        "threads": torch.get_num_threads(),
        "dtype": cfg.dtype,
        "memory_method": MEMORY_METHOD[memory_method(cfg.device)],
        "load_average_1min": _load_average(),  # other processes on the machine distort timings
        # the CPU kernel the inverse-distance rows ran: "compiled" or "python tiles (why)"
        "cpu_path": compiled.path_name() if dev.type == "cpu" else "not used (CUDA)",
    }


def _load_average() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):  # not available on every platform
        return None


def _kernels_at(cfg: BenchConfig, seq_len: int) -> list[str]:
    return [k for k in cfg.kernels if not TIMED_KERNELS[k].reference or seq_len <= cfg.naive_max_len]


def run_benchmark(cfg: BenchConfig, progress: Callable[[float, str], None] | None = None) -> dict:
    """Time every kernel at every length; returns the JSON-able report (see ``validate_report``).
    ``cfg.threads`` applies to the calling thread for this run only (a page's run leaves others alone)."""
    if cfg.threads is None:
        return _run_benchmark(cfg, progress)
    with thread_count(cfg.threads):
        return _run_benchmark(cfg, progress)


def benchmark_steps(cfg: BenchConfig):
    """``run_benchmark`` one length at a time, for a worker (``jobs.steps_job``): yields (fraction done, text,
    the report so far) after each length, merged by ``merge_length`` (the memory check runs with the last
    length), and returns the full report. A page can stop it and keep the lengths already timed."""
    lens, report = cfg.seq_lens, None
    for i, seq_len in enumerate(lens):
        last = i == len(lens) - 1
        sub = replace(cfg, seq_lens=(seq_len,), memory_check_len=cfg.memory_check_len if last else 0)
        report = merge_length(report, run_benchmark(sub), lens[: i + 1])
        yield (i + 1) / len(lens), f"T = {seq_len} timed", copy.deepcopy(report)  # a snapshot: merging extends it
    return report


def _run_benchmark(cfg: BenchConfig, progress: Callable[[float, str], None] | None) -> dict:
    report = {
        "schema": SCHEMA,
        "environment": environment(cfg),
        "config": asdict(cfg),
        "timing": {"long_call_s": LONG_CALL_S, "long_row_repeats": LONG_ROW_REPEATS},
        "rows": [],
    }
    if cfg.headline_lens:  # what users call, timed pair by pair against softmax on the same tensors
        report["headline"] = headline(
            cfg.headline_lens, batch=cfg.batch, heads=cfg.heads, head_dim=cfg.head_dim, eps=cfg.eps,
            causal=cfg.causal, repeats=cfg.repeats, dtype=getattr(torch, cfg.dtype), device=cfg.device,
            progress=progress,
        )  # fmt: skip
    steps = [(t, k) for t in cfg.seq_lens for k in _kernels_at(cfg, t)]
    done = 0
    for seq_len in cfg.seq_lens:
        names = _kernels_at(cfg, seq_len)
        cases = {name: _Case(cfg, name, seq_len) for name in names}
        times: dict[str, dict[str, list[float]]] = {n: {"fwd": [], "fwdbwd": []} for n in names}
        slowest = 0.0
        for name, case in cases.items():
            if progress:
                progress(done / max(len(steps), 1), f"T = {seq_len}: warming up {name}")
            for _ in range(cfg.warmup):
                case.reset_grads()
                slowest = max(slowest, case.timed(case.forward_backward) / 1e3)
        # Long rows (a call of many seconds) are timed LONG_ROW_REPEATS times: the median of three such
        # calls is stable, and five would make the full benchmark take an hour on two cores.
        repeats = cfg.repeats if slowest < LONG_CALL_S else min(cfg.repeats, LONG_ROW_REPEATS)
        for r in range(repeats):
            if progress:
                progress(done / max(len(steps), 1), f"T = {seq_len}: repeat {r + 1} of {repeats}")
            for name, case in cases.items():  # interleaved: drift in machine load hits every kernel alike
                times[name]["fwd"].append(case.timed(case.forward))
                case.reset_grads()
                times[name]["fwdbwd"].append(case.timed(case.forward_backward))
        for name, case in cases.items():
            peak = case.peak_mb() if cfg.memory else None
            report["rows"].append(_row(cfg, name, seq_len, times[name], peak))
            done += 1
        _add_ratios(report["rows"], seq_len)
        if progress:
            progress(done / max(len(steps), 1), f"T = {seq_len}: done")
    report["environment"]["load_average_1min_end"] = _load_average()
    if cfg.memory_check_len:
        report["memory_check"] = memory_check(cfg, cfg.memory_check_len, progress)
    report["targets"] = judge(report)
    return report


def _row(cfg, name, seq_len, times, peak):
    return {
        "kernel": name,
        "label": TIMED_KERNELS[name].label,
        "seq_len": seq_len,
        "fwd_ms": statistics.median(times["fwd"]),
        "fwdbwd_ms": statistics.median(times["fwdbwd"]),
        "repeats": len(times["fwd"]),
        "fwd_times_ms": times["fwd"],
        "fwdbwd_times_ms": times["fwdbwd"],
        "peak_mb": peak,
        "fwd_ratio": None,
        "fwdbwd_ratio": None,
    }


def _add_ratios(rows: list[dict], seq_len: int) -> None:
    base = next((r for r in rows if r["kernel"] == "sdpa" and r["seq_len"] == seq_len), None)
    if base is None:
        return
    for r in rows:
        if r["seq_len"] == seq_len:
            r["fwd_ratio"] = r["fwd_ms"] / base["fwd_ms"]
            r["fwdbwd_ratio"] = r["fwdbwd_ms"] / base["fwdbwd_ms"]


def memory_check(cfg: BenchConfig, seq_len: int, progress=None) -> dict:
    """One forward+backward per kernel at a long length, peak memory against ``MEMORY_LIMIT_MB``."""
    rows = []
    dense_mb = 4 * seq_len * seq_len / 2**20  # one float32 T x T matrix, for scale
    for name in [k for k in cfg.kernels if not TIMED_KERNELS[k].reference]:
        if progress:
            progress(1.0, f"memory check at T = {seq_len}: {name}")
        case = _Case(cfg, name, seq_len)
        start = time.perf_counter()
        peak = case.peak_mb()
        seconds = time.perf_counter() - start
        io_mb = 4 * case.inputs[0].numel() * case.inputs[0].element_size() / 2**20  # o, dq, dk, dv
        rows.append(
            {
                "kernel": name,
                "seq_len": seq_len,
                "peak_mb": peak,
                "outputs_mb": io_mb,
                "seconds": seconds,
                "within_limit": None if peak is None else peak < MEMORY_LIMIT_MB,
            }
        )
        del case
    return {"seq_len": seq_len, "limit_mb": MEMORY_LIMIT_MB, "dense_matrix_mb_per_head": dense_mb, "rows": rows}
