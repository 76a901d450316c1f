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

from georesolver_core.attention.c_hida import CHIDA
from georesolver_core.attention.fp_hida import fp_hida
from georesolver_core.attention.kernel import ida
from georesolver_core.attention.l_hida import l_hida
from georesolver_core.attention.layer import ATTENTION
from georesolver_core.attention.reference import reference_ida
from georesolver_core.attention.spec import KernelSpec
from georesolver_core.geometry import to_ball
from georesolver_core.theory.hida import PROPOSITION1_EXPONENTS, PROPOSITION1_TOLERANCE, proposition1_exponent
from georesolver_core.validate import check_positive_int

SCALING_LENS = (1024, 2048, 4096, 8192, 16384, 32768)  # the range n in [1024, 32768]
SCALING_KERNELS = ("hida", "fp-hida", "l-hida", "c-hida", "hida-naive")
# How each kernel is timed (here and in the kernel benchmark), shown after its ATTENTION entry's label.
SETTINGS = {
    "hida": "fused",
    "fp-hida": "w = g = log2 n",
    "l-hida": "16 anchors",
    "c-hida": "16 summaries, causal",
    "hida-naive": "naive, n x n",
}
LABELS = {name: ATTENTION[name.removesuffix("-naive")].labelled(how) for name, how in SETTINGS.items()}


def _inputs(B, H, n, d, dtype, device, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = to_ball(torch.randn(B, H, n, d, generator=g, dtype=dtype)).to(device).requires_grad_()
    k = to_ball(torch.randn(B, H, n, d, generator=g, dtype=dtype)).to(device).requires_grad_()
    v = torch.randn(B, H, n, d, generator=g, dtype=dtype).to(device).requires_grad_()
    return q, k, v


def _runner(kernel: str, eps: float, n_anchors: int, n_summaries: int) -> Callable:
    if kernel == "hida":
        return lambda q, k, v: ida(q, k, v, eps=eps, geometry="poincare", impl="fused")
    if kernel == "hida-naive":  # the n x n reference: Theta(n^2) without the fused kernel's fixed costs
        return lambda q, k, v: reference_ida(q, k, v, KernelSpec(eps, "poincare"))
    if kernel == "fp-hida":
        return lambda q, k, v: fp_hida(q, k, v, eps=eps)
    if kernel == "l-hida":
        anchors = None

        def run(q, k, v):
            nonlocal anchors
            if anchors is None:  # fixed anchors (k-means initialisation is not what is timed)
                anchors = k.detach()[..., :: max(1, k.shape[-2] // n_anchors), :][..., :n_anchors, :].clone()
            return l_hida(q, k, v, anchors, eps=eps)

        return run
    if kernel == "c-hida":

        def run(q, k, v):
            B, H, n, d = q.shape
            flat = [t.reshape(B * H, n, d) for t in (q, k, v)]
            return CHIDA(n_summaries, d, eps=eps)(*flat)

        return run
    raise ValueError(f"kernel must be one of {list(SCALING_KERNELS)} (got {kernel!r})")


@dataclass
class ScalingReport:
    """Times (median seconds of forward+backward) and peak memory per kernel and length, with slopes."""

    lens: list[int]
    kernels: list[str]
    seconds: dict = field(default_factory=dict)  # kernel -> [s per length] (None where skipped)
    per_token: dict = field(default_factory=dict)  # kernel -> [s / n]
    peak_mb: dict = field(default_factory=dict)  # kernel -> [MB] or None
    slopes: dict = field(default_factory=dict)  # kernel -> fitted log-log slope (per token for c-hida)
    predicted: dict = field(default_factory=dict)  # kernel -> Proposition 1 exponent
    config: dict = field(default_factory=dict)


def fitted_slope(x, y) -> float | None:
    """Least-squares slope of log y on log x over the finite, positive points (None if fewer than 2)."""
    x, y = np.asarray(x, float), np.asarray([np.nan if v is None else v for v in y], float)
    keep = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    return float(np.polyfit(np.log(x[keep]), np.log(y[keep]), 1)[0]) if keep.sum() >= 2 else None


def cost_scaling(
    lens=SCALING_LENS,
    kernels=SCALING_KERNELS[:4],
    *,
    progress: Callable[[float, str], None] | None = None,
    **options,
) -> ScalingReport:
    """Time each kernel at each length (forward, + backward unless ``backward=False``): ``cost_scaling_steps``
    run to the end, reporting ``progress(fraction, text)`` after each timing. ``options`` are its keywords
    (batch, heads, head_dim, eps, repeats, backward, memory, max_len, n_anchors, n_summaries, dtype, device).

    ``max_len`` caps a kernel's lengths (e.g. {"hida": 8192}: the dense kernel's n^2 cost would
    take hours at 32768 on a CPU); skipped points are None and left out of the fit.
    """
    run = cost_scaling_steps(lens, kernels, **options)
    while True:
        try:
            frac, text, _ = next(run)
        except StopIteration as done:
            return done.value
        if progress:
            progress(frac, text)


def cost_scaling_steps(
    lens=SCALING_LENS,
    kernels=SCALING_KERNELS[:4],
    *,
    batch: int = 1,
    heads: int = 1,
    head_dim: int = 64,
    eps: float = 0.1,
    repeats: int = 1,
    backward: bool = True,
    memory: bool = False,
    max_len: dict | None = None,
    n_anchors: int = 16,
    n_summaries: int = 16,
    dtype=torch.float32,
    device="cpu",
):
    """``cost_scaling`` one timing at a time: yields (fraction done, text, the report so far, with its
    slopes fitted over the lengths timed) and returns the report. A page can stop it and keep what it timed."""
    lens = sorted(check_positive_int("n", int(n), 2) for n in lens)
    unknown = [k for k in kernels if k not in SCALING_KERNELS]
    if unknown or not kernels:
        raise ValueError(f"kernels must be a non-empty subset of {list(SCALING_KERNELS)} (got {list(kernels)})")
    check_positive_int("repeats", repeats, 1)
    max_len = max_len or {}
    rep = ScalingReport(lens, list(kernels), config=dict(
        batch=batch, heads=heads, head_dim=head_dim, eps=eps, repeats=repeats, backward=backward,
        n_anchors=n_anchors, n_summaries=n_summaries, dtype=str(dtype), device=str(device), max_len=max_len,
    ))  # fmt: skip
    for kern in kernels:
        rep.seconds[kern], rep.peak_mb[kern] = [], []
    total, done = len(lens) * len(kernels), 0
    for kern in kernels:  # warm-up at the smallest length: thread pools, allocator, first-call paths
        q, k, v = _inputs(batch, heads, lens[0], head_dim, dtype, device)
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
            q, k, v = _inputs(batch, heads, n, head_dim, dtype, device)
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
            rep.peak_mb[kern].append(_peak_mb(call, str(device).split(":")[0]) if memory else None)
            done += 1
            yield done / total, f"{LABELS[kern]} at n = {n}: {rep.seconds[kern][-1]:.3g} s", _fit(rep)
    return _fit(rep)


def _fit(rep: ScalingReport) -> ScalingReport:
    """Per-token times and slopes over the lengths timed so far (a partial sweep pads with None)."""
    for kern in rep.kernels:
        secs = rep.seconds[kern] + [None] * (len(rep.lens) - len(rep.seconds[kern]))
        rep.per_token[kern] = [None if s is None else s / n for s, n in zip(secs, rep.lens, strict=True)]
        series = rep.per_token[kern] if kern == "c-hida" else secs
        rep.slopes[kern] = fitted_slope(rep.lens, series)
        rep.predicted[kern] = PROPOSITION1_EXPONENTS[kern.removesuffix("-naive")]
    return rep


def judge_slopes(rep: ScalingReport, tol: float = PROPOSITION1_TOLERANCE) -> list[dict]:
    """Each fitted slope against Proposition 1 (``theory.hida.proposition1_exponent``): met when
    |slope - predicted| <= tol, the rule of the claim ``prop1-cost-classes``. A slope far below its
    prediction (fixed costs dominating short lengths) is not met either: it says nothing for the claim."""
    out = []
    timed = [n for i, n in enumerate(rep.lens) if any(i < len(v) and v[i] is not None for v in rep.seconds.values())]
    n_lo, n_hi = (timed[0], timed[-1]) if timed else (rep.lens[0], rep.lens[-1])
    for kern in rep.kernels:
        s = rep.slopes.get(kern)
        p = proposition1_exponent(kern, n_lo, n_hi)
        met = None if s is None else bool(abs(s - p) <= tol)
        target = f"{p:.2f} +- {tol:g}"
        out.append({"kernel": kern, "label": LABELS[kern], "slope": s, "predicted": p, "target": target, "met": met})
    return out


def format_scaling(rep: ScalingReport) -> str:
    """A plain-text table: seconds per kernel and length, then the slopes against their targets."""
    head = f"{'n':>7} " + " ".join(f"{k:>12}" for k in rep.kernels)
    lines = [
        f"time of {'forward+backward' if rep.config.get('backward') else 'forward'} (s); c-hida: per token",
        head,
    ]
    for i, n in enumerate(rep.lens):
        cells = []
        for kern in rep.kernels:
            val = (rep.per_token if kern == "c-hida" else rep.seconds)[kern][i]
            cells.append(f"{'-':>12}" if val is None else f"{val:12.4g}")
        lines.append(f"{n:>7} " + " ".join(cells))
    judged = judge_slopes(rep)
    width = max((len(j["label"]) for j in judged), default=0)
    for j in judged:
        s = "n/a" if j["slope"] is None else f"{j['slope']:.3f}"
        verdict = {True: "met", False: "NOT met", None: "not measured"}[j["met"]]
        lines.append(f"{j['label']:<{width}} slope {s:>6}  target {j['target']:<20} {verdict}")
    return "\n".join(lines)


def _peak_mb(fn, device: str):
    from georesolver_core.bench.memory import peak_memory_mb  # the bench package imports this module

    return peak_memory_mb(fn, device)


def hida_bench_kernels() -> dict:
    """The family as rows of the kernel benchmark: ATTENTION key -> run(q, k, v, eps, causal) (setting: SETTINGS).

    L-HIDA keeps 16 anchors taken from the keys (every (n/16)-th); C-HIDA is causal whatever ``causal``.
    """

    def l_run(q, k, v, eps, causal):
        anchors = k.detach()[..., :: max(1, k.shape[-2] // 16), :][..., :16, :]
        return l_hida(q, k, v, anchors, eps=eps, causal=causal)

    def c_run(q, k, v, eps, causal):
        shape = q.shape
        flat = [t.reshape(-1, shape[-2], t.shape[-1]) for t in (q, k, v)]  # (B H, T, .)
        return CHIDA(16, shape[-1], eps=eps)(*flat).view(*shape[:-1], v.shape[-1])

    return {
        "fp-hida": lambda q, k, v, eps, causal: fp_hida(q, k, v, eps=eps, causal=causal),
        "l-hida": l_run,
        "c-hida": c_run,
    }


def scaling_main(args: argparse.Namespace) -> int:
    """``python -m georesolver_core bench --scaling``: the cost-scaling sweep, slopes judged against the targets."""
    lens = tuple(args.seq_lens) if getattr(args, "seq_lens", None) else SCALING_LENS
    if getattr(args, "quick", False) and not getattr(args, "seq_lens", None):
        lens = (256, 512, 1024)
    kernels = (
        tuple(k for k in (args.kernels or SCALING_KERNELS[:4]) if k in SCALING_KERNELS) or SCALING_KERNELS[:4]
    )
    try:
        rep = cost_scaling(
            lens, kernels, eps=args.eps, repeats=args.repeats or 1, device=args.device or "cpu",
            max_len={"hida": 8192}, progress=lambda f, m: print(f"[{100 * f:5.1f}%] {m}", file=sys.stderr, flush=True),
        )  # fmt: skip
    except ValueError as err:
        print(f"bench: {err}", file=sys.stderr)
        return 2
    if args.json:
        json.dump({**asdict(rep), "targets": judge_slopes(rep)}, sys.stdout, indent=1)
        print()
    else:
        print(format_scaling(rep))
    return 0
