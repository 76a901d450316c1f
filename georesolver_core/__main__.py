"""Headless command line: ``python -m georesolver_core {claims,bench,routing,train,lm-study,embed} [--json]``."""

from __future__ import annotations

import argparse
import json
import os
import sys


def _num(value) -> str:
    return "n/a" if value is None else f"{value:.4g}"


def _claims(args: argparse.Namespace) -> int:
    from georesolver_core.claims import CLAIMS, run_all

    keys = args.only or None
    if keys:
        unknown = [k for k in keys if k not in CLAIMS]
        if unknown:
            print(f"error: unknown claim(s) {unknown}; known: {sorted(CLAIMS)}", file=sys.stderr)
            return 2
    if args.out:
        from georesolver_core.claims.report import build_report, write_report

        def progress(i: int, n: int, key: str) -> None:
            print(f"[{i + 1}/{n}] {key}", file=sys.stderr, flush=True)

        report = build_report(quick=args.quick, keys=keys, on_claim=progress)
        write_report(report, args.out)
        failed = report["settings"]["failed"]
        print(
            f"wrote {len(report['claims'])} claims to {args.out}; failed: {sorted(failed) or 'none'}",
            file=sys.stderr,
        )
        return 1 if failed else 0
    results = run_all(quick=args.quick, keys=keys)
    if args.json:
        json.dump(results, sys.stdout, indent=1)
        print()
        return 0
    width = max(len(r["key"]) for r in results)
    for r in results:
        print(
            f"{r['key']:<{width}}  {r['verdict']:<28} measured={_num(r['measured_value']):<11} "
            f"bound={_num(r['bound_value']):<11} ({r['seconds']:.2f}s)"
        )
        print(f"{'':<{width}}  {r['summary']}")
    return 0


def _bench(args: argparse.Namespace) -> int:
    if args.serve:
        from georesolver_core.bench import serve

        return serve.main(args)
    if args.compression:
        from georesolver_core.compression import bench as compression_bench

        return compression_bench.main(args)
    from georesolver_core import bench

    return bench.main(args)


def _train(args: argparse.Namespace) -> int:
    from georesolver_core.train import cli

    return cli.main(args)


def main(argv: list[str] | None = None) -> int:
    """The command line (also the ``georesolver`` script): an exit code, never a traceback for Ctrl-C or a
    closed pipe."""
    try:
        return _main(argv)
    except KeyboardInterrupt:  # Ctrl-C outside training (which stops at a step and says so itself)
        print("interrupted: stopped before the end; nothing more was written", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader closed the pipe (``| head``): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 141


def _main(argv: list[str] | None) -> int:
    from georesolver_core.budget import memory_budget

    try:
        memory_budget()  # a bad GEORESOLVER_MEMORY_BUDGET is named once, before any command reads it
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(prog="python -m georesolver_core", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("claims", help="measure every claim of the paper and judge it against its bound")
    p.add_argument("--json", action="store_true", help="one JSON document on stdout")
    p.add_argument("--quick", action="store_true", help="smaller sweeps (what the app and tests use)")
    p.add_argument("--only", nargs="*", metavar="KEY", help="run only these claim keys")
    p.add_argument(
        "--out",
        metavar="PATH",
        help="write the report document (version, settings, claims) to PATH, e.g. "
        "assets/claims_report.json, the copy the app opens on",
    )
    p.set_defaults(func=_claims)
    from georesolver_core import bench

    b = sub.add_parser("bench", help="time the attention kernels against torch SDPA")
    bench.add_arguments(b)
    b.set_defaults(func=_bench)
    from georesolver_core.compression import bench as compression_bench

    compression_bench.add_arguments(b)
    from georesolver_core.bench import serve

    serve.add_arguments(b)
    from georesolver_core.routing import cli as routing_cli

    r = sub.add_parser("routing", help="distributed GSR vs all-to-all MoE: bytes and messages counted on the wire")
    routing_cli.add_arguments(r)
    r.set_defaults(func=routing_cli.main)
    from georesolver_core.train import cli as train_cli

    t = sub.add_parser("train", help="train a GeoResolver or softmax model on a task (torchrun: data-parallel)")
    train_cli.add_arguments(t)
    t.set_defaults(func=_train)
    from georesolver_core.train import lm_study_cli as lm_study

    s = sub.add_parser(
        "lm-study",
        help="softmax vs inverse-distance attention on text: same rate grid, seeds, equal steps and time",
    )
    lm_study.add_arguments(s)
    s.set_defaults(func=lm_study.main)
    from georesolver_core.embeddings import cli as embed_cli

    e = sub.add_parser(
        "embed", help="embed a WordNet closure (Poincaré, sphere, plane) and measure mean rank / MAP"
    )
    embed_cli.add_arguments(e)
    e.set_defaults(func=embed_cli.main)
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # which flags were written (train --resume says)
    try:
        return args.func(args)
    except BrokenPipeError:  # the reader left: handled quietly below
        raise
    except (ValueError, OverflowError, OSError) as err:  # bad input the command's own checks did not name
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
