"""``python -m georesolver_core routing --world-size P [--json]``: distributed GSR vs all-to-all, measured.

Started by hand it forks/spawns P workers itself; started by ``torchrun --nproc_per_node P -m
georesolver_core routing ...`` each process is one worker and rank 0 prints the result.
"""

from __future__ import annotations

import argparse
import json
import sys

from georesolver_core.cli_args import from_args
from georesolver_core.routing.distributed import DistConfig, DistResult, run_distributed, run_torchrun


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--world-size", type=int, default=2, help="P worker processes (default 2)")
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[64, 256, 1024, 4096], metavar="B")
    p.add_argument("--n-pool", type=int, default=64, help="K_pool prototypes = experts (default 64)")
    p.add_argument("--dim", type=int, default=32, help="d_h (default 32)")
    p.add_argument("--k", type=int, default=2, help="Top-K (default 2)")
    p.add_argument("--eps", type=float, default=0.1)
    p.add_argument("--capacity-factor", type=float, default=1.25, help="Switch capacity factor (default 1.25)")
    p.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    p.add_argument("--backend", choices=["auto", "gloo", "nccl"], default="auto")
    p.add_argument(
        "--timeout", dest="timeout_s", type=float, default=60.0, help="seconds per collective (default 60)"
    )
    p.add_argument("--json", action="store_true", help="one JSON document on stdout")


def config_from(args: argparse.Namespace) -> DistConfig:
    return from_args(DistConfig, args, batch_sizes=tuple(args.batch_sizes))


def format_table(res: DistResult) -> str:
    """A plain-text table: bytes and messages per batch and per query, per protocol and batch size."""
    head = (
        f"{'protocol':<16}{'P':>3}{'B':>6}{'bytes/batch':>13}{'msgs/batch':>11}{'bytes/query':>13}"
        f"{'msgs/query':>12}{'dropped':>9}"
    )
    lines = [head, "-" * len(head)]
    for r in res.rows:
        lines.append(
            f"{r.protocol:<16}{r.world_size:>3}{r.batch:>6}{r.bytes:>13}{r.messages:>11}"
            f"{r.bytes_per_query:>13.1f}{r.messages_per_query:>12.4f}{r.dropped_slots:>9}"
        )
    lines.append(f"max |distributed - single-process GSR|: {res.max_abs_diff}")
    lines.append(f"same Top-K indices as single-process GSR: {res.same_indices}")
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    from georesolver_core.routing.comm import torchrun_env

    try:
        cfg = config_from(args)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    env = torchrun_env()
    try:
        res = run_torchrun(cfg, *env) if env else run_distributed(cfg)
    except (RuntimeError, TimeoutError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    if res is None:  # a torchrun worker other than rank 0
        return 0
    if args.json:
        json.dump(res.to_dict(), sys.stdout, indent=1)
        print()
    else:
        print(format_table(res))
    return 0
