"""Where the time of a public call goes: ``python -m georesolver_core bench --profile``.

Each headline pair (``bench.public``) runs a few forward + backward steps under torch's profiler, in
one intra-op thread so that every operator runs, and is counted, in the calling thread (the fused
kernels then run their tiles inline). The self CPU time of every operator is put in one class:

    matrix products   bmm, baddbmm, addmm, mm, matmul   (the two per tile that softmax also pays)
    transcendentals   log, log1p, acos, sqrt, exp, ...   (the geometry's phi and its derivative)
    elementwise       mul, add, reciprocal, where, copies, concatenation, fills
    reductions        amin, aminmax, sum, amax           (suspect search, validation, row sums)
    fused attention   torch's own SDPA kernels, and the compiled IDA kernel (attention.compiled): matmuls
                      and the scalar function in one operator, timed as a whole
    other             autograd nodes' own time (the Python tile loops), views, dispatch

Beside the times, two counts that do not depend on machine load: operator calls per step (the cost
of the Python tile loop is proportional to it) and minor page faults per step (fresh buffers).
"""

from __future__ import annotations

import re
import resource
from dataclasses import dataclass

import torch
from torch.profiler import ProfilerActivity, profile

from georesolver_core.bench.public import HEADLINE
from georesolver_core.budget import FLOAT32, check_memory
from georesolver_core.device import one_cpu_thread
from georesolver_core.results import Labelled
from georesolver_core.validate import check_positive_int

# operator name -> class, first match wins; names are torch's ("aten::bmm", "FusedIDABackward", ...)
CLASSES = (
    (
        "fused attention",
        re.compile(r"^(aten::_?(scaled_dot_product|_?flash_attention|_scaled_dot_product)|georesolver::ida_)"),
    ),
    ("matrix products", re.compile(r"^aten::(bmm|baddbmm_?|addmm_?|mm|matmul|addbmm_?)$")),
    (
        "transcendentals",
        re.compile(r"^aten::(log|log1p|log2|exp|expm1|sqrt|rsqrt|acos|asin|atan2?|acosh|asinh|atanh|tanh|pow)_?$"),
    ),
    ("reductions", re.compile(r"^aten::(amin|amax|aminmax|sum|max|min|mean|norm|linalg_vector_norm|any|all)$")),
    (
        "elementwise",
        re.compile(
            r"^aten::(mul|add|sub|div|neg|reciprocal|addcmul|addcdiv|where|clamp|clamp_min|clamp_max|copy|cat|fill"
            r"|zero|ones_like|zeros_like|gt|lt|ge|le|eq|ne|abs|sign|tril|triu|masked_fill|index_put|_to_copy|"
            r"contiguous|clone|_softmax|softmax|_softmax_backward_data)_?$"
        ),
    ),
)
OTHER = "other"
CLASS_NAMES = tuple(name for name, _ in CLASSES) + (OTHER,)


def op_class(name: str) -> str:
    """The class of an operator name (``CLASSES``; everything else is ``OTHER``)."""
    for label, pattern in CLASSES:
        if pattern.match(name):
            return label
    return OTHER


@dataclass(frozen=True)
class CallProfile(Labelled):
    """One public call's forward + backward step, its self CPU time split by operator class."""

    row: str  # the headline row, e.g. "hida"
    call: str  # what was profiled, e.g. "attention.ida(geometry='poincare')" or "SDPA"
    seq_len: int
    step_ms: float  # profiled self CPU time per step (the profiler adds its own overhead)
    class_ms: tuple[tuple[str, float], ...]  # (class, ms per step) in CLASS_NAMES order
    ops_per_step: float  # operator calls per step (a count)
    faults_per_step: float  # minor page faults per step (a count)
    top: tuple[tuple[str, float], ...]  # the five operators with the most self time: (name, ms per step)

    LABELS = {
        "call": "call",
        "seq_len": "T",
        "step_ms": "step ms",
        "ops_per_step": "operator calls per step",
        "faults_per_step": "page faults per step",
    }

    def share(self, name: str) -> float:
        """The fraction of the step's time in class ``name``."""
        return dict(self.class_ms).get(name, 0.0) / self.step_ms if self.step_ms > 0 else 0.0


def _profiled(fn, steps: int, seq_len: int, row: str, call: str) -> CallProfile:
    fn()  # warm: buffers and the worker pool exist before counting
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt  # counted outside the profiler, whose
    for _ in range(steps):  # own event buffers fault pages in too
        fn()
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            fn()
    per_class = dict.fromkeys(CLASS_NAMES, 0.0)
    ops, by_op = 0, []
    for evt in prof.key_averages():
        ms = evt.self_cpu_time_total / 1e3 / steps
        if evt.key.startswith("ProfilerStep") or evt.key.startswith("[memory]"):
            continue
        per_class[op_class(evt.key)] += ms
        ops += evt.count
        by_op.append((evt.key, ms))
    by_op.sort(key=lambda item: -item[1])
    return CallProfile(
        row=row,
        call=call,
        seq_len=seq_len,
        step_ms=sum(per_class.values()),
        class_ms=tuple(per_class.items()),
        ops_per_step=ops / steps,
        faults_per_step=faults / steps,
        top=tuple(by_op[:5]),
    )


def profile_calls(
    seq_len: int = 1024,
    *,
    rows: tuple[str, ...] = ("ida", "hida", "sida"),
    batch: int = 1,
    heads: int = 4,
    head_dim: int = 64,
    eps: float = 0.1,
    causal: bool = False,
    steps: int = 3,
) -> list[CallProfile]:
    """Each headline row's public call and its softmax twin profiled on the same tensors (CPU, one thread)."""
    unknown = [r for r in rows if r not in HEADLINE]
    if unknown:
        raise ValueError(f"rows must be headline rows {sorted(HEADLINE)} (got {unknown})")
    if not isinstance(steps, int) or not 1 <= steps <= 100:
        raise ValueError(f"steps must be an integer in [1, 100] (got {steps!r})")
    for name, value in (("seq_len", seq_len), ("batch", batch), ("heads", heads), ("head_dim", head_dim)):
        check_positive_int(name, value)
    # one pair at a time: the largest pair's forward + backward is the peak
    peak = max((HEADLINE[r].call_bytes(batch, heads, seq_len, head_dim, FLOAT32) for r in rows), default=0)
    check_memory(
        "this profile", peak,
        seq_len=seq_len, batch=batch, heads=heads, head_dim=head_dim, rows=tuple(rows),
    )  # fmt: skip
    out, twins = [], set()
    gen = torch.Generator().manual_seed(seq_len)
    like = torch.empty(0)
    with one_cpu_thread():
        for r in rows:
            pair = HEADLINE[r]
            ours, twin = pair.build((batch, heads, seq_len, head_dim), eps, causal, gen, like)
            out.append(_profiled(ours, steps, seq_len, r, pair.entry))
            if pair.twin not in twins:  # SDPA once, not once per geometry
                twins.add(pair.twin)
                out.append(_profiled(twin, steps, seq_len, r, pair.twin))
    return out


def format_profile(profiles: list[CallProfile]) -> str:
    """A text table: per call, ms per step in each class (and its share), the two counts, the top operators."""
    head = f"{'call':38} {'T':>5} {'step ms':>8} " + " ".join(f"{n:>16}" for n in CLASS_NAMES)
    head += f" {'ops/step':>9} {'faults/step':>11}"
    lines = ["where the time goes (self CPU time per forward + backward step, one thread, profiled):", head]
    for p in profiles:
        cells = " ".join(f"{ms:7.1f} ({100 * p.share(n):3.0f}%)" for n, ms in p.class_ms)
        lines.append(
            f"{p.call:38} {p.seq_len:>5} {p.step_ms:8.1f} {cells} {p.ops_per_step:9.0f} {p.faults_per_step:11.0f}"
        )
    lines.append("top operators per call (ms per step):")
    for p in profiles:
        lines.append(f"  {p.call}: " + ", ".join(f"{name} {ms:.1f}" for name, ms in p.top))
    return "\n".join(lines)


__all__ = ["CLASS_NAMES", "CallProfile", "format_profile", "op_class", "profile_calls"]
