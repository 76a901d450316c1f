"""The command line of the language-model study: ``python -m georesolver_core lm-study`` (``train.lm_study``)
and, with ``--kv-out``, the KV cache of its tuned models (``train.lm_study_kv``)."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from georesolver_core.train.lm_study import (
    LR_GRID,
    QUICK,
    SIZES,
    STUDY_KINDS,
    StudyConfig,
    format_report,
    run_study,
)
from georesolver_core.validate import check_positive_int


def add_arguments(p) -> None:
    p.add_argument("--quick", action="store_true", help="one size (default, 150 steps), three rates, two seeds")
    p.add_argument("--out", metavar="FILE", help="write the JSON report here (e.g. assets/lm_study.json)")
    p.add_argument("--folder", metavar="DIR", help="the study folder: one file per finished run, what a "
                   "restarted study skips (default runs/lm_study, runs/lm_study_quick with --quick)")  # fmt: skip
    p.add_argument("--sizes", nargs="+", choices=sorted(SIZES), help="model sizes (default: default baby)")
    p.add_argument(
        "--kinds", nargs="+", help=f"attention kinds, softmax among them (default: {' '.join(STUDY_KINDS)})"
    )
    p.add_argument("--steps", type=int, help="steps of every run (default: each size's own: 1000, 2000)")
    p.add_argument(
        "--lr-grid", type=float, nargs="+", help=f"learning rates (default {' '.join(map(str, LR_GRID))})"
    )
    p.add_argument("--seeds", type=int, help="seeds at each kind's best rate (default 3; 2 with --quick)")
    p.add_argument("--workers", type=int, help="runs side by side (default: one per core)")
    p.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    p.add_argument("--kv-out", metavar="FILE", help="then the KV cache of each tuned model: every key quantiser "
                   "at every width on held-out text (train.lm_study_kv), e.g. assets/kv_pareto.json")  # fmt: skip
    p.add_argument("--kv-windows", type=int, help="held-out windows of the KV sweep (default all 256)")


def config_from_args(args) -> StudyConfig:
    base = QUICK if args.quick else StudyConfig()
    sizes = base.sizes if not args.sizes else tuple(SIZES[n] for n in args.sizes)
    if args.quick and args.sizes:
        sizes = tuple(replace(s, steps=QUICK.sizes[0].steps) for s in sizes)
    if args.steps is not None:
        check_positive_int("steps", args.steps, 10, 1_000_000)
        sizes = tuple(replace(s, steps=args.steps) for s in sizes)
    return StudyConfig(
        sizes=sizes,
        kinds=tuple(args.kinds) if args.kinds else base.kinds,
        lr_grid=tuple(args.lr_grid) if args.lr_grid else base.lr_grid,
        seeds=args.seeds if args.seeds is not None else base.seeds,
        workers=args.workers,
    )


def main(args) -> int:
    import json

    from georesolver_core.jobs.folder import write_json

    config = config_from_args(args)
    folder = Path(args.folder or ("runs/lm_study_quick" if args.quick else "runs/lm_study"))
    report = run_study(config, folder)
    if args.out:
        write_json(args.out, report)
        print(f"wrote {args.out}", file=sys.stderr)
    if args.kv_out:
        from georesolver_core.train.lm_study_kv import format_kv, kv_study

        if args.kv_windows is not None:
            check_positive_int("kv-windows", args.kv_windows, 1, 1 << 20)
        kv = kv_study(report, folder, windows=args.kv_windows, workers=config.workers,
                      progress=lambda line: print(line, file=sys.stderr, flush=True))  # fmt: skip
        write_json(args.kv_out, kv)
        print(format_kv(kv), file=sys.stderr)
        print(f"wrote {args.kv_out}", file=sys.stderr)
    if args.json:
        json.dump(report, sys.stdout, indent=1)
        print()
    else:
        print(format_report(report))
    return 0
