"""The benchmark's command line: ``python -m georesolver_core bench [--json] [--quick | --long] ...``.

``config_from_args`` turns the flags into a ``run.BenchConfig`` (``--quick``: short lengths, 2 repeats;
``--long``: lengths up to 16,384, the naive kernels and the memory check); ``--scaling`` and ``--profile``
hand over to the HIDA cost-scaling run and the profiler. Errors in the flags end with one line and exit
status 2; the report goes to stdout (text, or one JSON document), progress to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from georesolver_core.bench.profile import format_profile, profile_calls
from georesolver_core.bench.report import format_table
from georesolver_core.bench.run import (
    DEFAULT_SEQ_LENS,
    FULL_SEQ_LENS,
    FUSED,
    QUICK_SEQ_LENS,
    TIMED_KERNELS,
    BenchConfig,
    run_benchmark,
)
from georesolver_core.labs.cost_scaling import scaling_main
from georesolver_core.validate import check_eps, check_positive_int


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    parser.add_argument(
        "--quick", action="store_true", help=f"short lengths {QUICK_SEQ_LENS}, 2 repeats, no memory check"
    )
    parser.add_argument(
        "--long",
        action="store_true",
        help=f"lengths {FULL_SEQ_LENS}, headline also at 4096, naive kernels up to 1024, memory check at 32768",
    )
    parser.add_argument(
        "--headline-lens", type=int, nargs="*", metavar="T", help="headline lengths (default 1024)"
    )
    parser.add_argument(
        "--seq-lens", type=int, nargs="+", metavar="T", help=f"sequence lengths (default {DEFAULT_SEQ_LENS})"
    )
    parser.add_argument(
        "--repeats", type=int, help="timed repeats per kernel and length (default 5; 2 with --quick)"
    )
    parser.add_argument("--device", choices=["cpu", "cuda"], help="default: CUDA when available, else CPU")
    parser.add_argument("--kernels", nargs="+", choices=list(TIMED_KERNELS), help="default: sdpa ida hida sida")
    parser.add_argument("--causal", action="store_true", help="causal masking for every kernel")
    parser.add_argument("--eps", type=float, default=0.1, help="inverse-distance eps (default 0.1)")
    parser.add_argument("--threads", type=int, help="intra-op threads of the timing run")
    parser.add_argument(
        "--naive-max-len", type=int, help="also time the naive kernels up to this T (default 0, off; --long 1024)"
    )
    parser.add_argument(
        "--memory-check-len", type=int, help="peak-memory check length (default 0, off; --long 32768)"
    )
    parser.add_argument(
        "--scaling",
        action="store_true",
        help="HIDA family cost scaling instead: forward+backward time vs n in [1024, 32768], fitted slopes",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="where the time goes instead: each public call and SDPA under torch's profiler, time by operator class",
    )


def config_from_args(args: argparse.Namespace) -> BenchConfig:
    quick, long = (
        bool(getattr(args, "quick", False)),
        bool(getattr(args, "long", False)) and not getattr(args, "quick", False),
    )
    default_lens = QUICK_SEQ_LENS if quick else (FULL_SEQ_LENS if long else DEFAULT_SEQ_LENS)
    headline_lens = getattr(args, "headline_lens", None)
    if headline_lens is None:
        headline_lens = () if quick else ((1024, 4096) if long else (1024,))
    kw = {
        "seq_lens": tuple(args.seq_lens) if args.seq_lens else default_lens,
        "repeats": args.repeats if args.repeats is not None else (2 if quick else 5),
        "causal": bool(args.causal),
        "eps": args.eps,
        "threads": args.threads,
        "naive_max_len": args.naive_max_len if args.naive_max_len is not None else (1024 if long else 0),
        "memory_check_len": args.memory_check_len if args.memory_check_len is not None else (32768 if long else 0),
        "headline_lens": tuple(headline_lens),
    }
    if args.kernels:
        kw["kernels"] = tuple(args.kernels)
    elif kw["naive_max_len"]:
        kw["kernels"] = ("sdpa", *FUSED, *(f"{k}-naive" for k in FUSED))
    if args.device:
        kw["device"] = args.device
    return BenchConfig(**kw)


def profile_main(args: argparse.Namespace) -> int:
    """``bench --profile``: ``bench.profile`` at each ``--seq-lens`` length (default 1024), text or JSON."""
    try:
        lens = [check_positive_int("seq_lens", t) for t in (args.seq_lens or [1024])]
        eps = check_eps(args.eps)
        profiles = [p for t in lens for p in profile_calls(t, eps=eps, causal=bool(args.causal))]
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.json:
        json.dump([asdict(p) for p in profiles], sys.stdout, indent=1)
        print()
    else:
        print(format_profile(profiles))
    return 0


def main(args: argparse.Namespace) -> int:
    if getattr(args, "scaling", False):
        return scaling_main(args)
    if getattr(args, "profile", False):
        return profile_main(args)
    try:
        cfg = config_from_args(args)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2

    def progress(frac, msg):
        print(f"[{100 * frac:5.1f}%] {msg}", file=sys.stderr, flush=True)

    report = run_benchmark(cfg, progress=progress)  # progress on stderr: stdout stays one document
    if args.json:
        json.dump(report, sys.stdout, indent=1)
        print()
    else:
        print(format_table(report))
    return 0
