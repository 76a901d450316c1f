"""``python -m georesolver_core embed``: embed a WordNet closure headless and measure it (published protocol).

python -m georesolver_core embed --dataset wordnet-mammals --geometry poincare --dim 5 --json --out FILE
python -m georesolver_core embed --dataset wordnet-nouns --counts
python -m georesolver_core embed --dataset wordnet-nouns --dim 10 --lr 20 --burn-in 5 --budget 1800 --out assets/wordnet_nouns.json
python -m georesolver_core embed --benchmark --budget 60 --out assets/wordnet_benchmark.json
python -m georesolver_core embed --dataset wordnet-nouns --method fast --dim 10 --cooldown 0.9 --lr-floor 0.01 --eval-every 180 --budget 3300 --out-points assets/wordnet_nouns_d10.npz --out assets/wordnet_nouns.json
python -m georesolver_core embed --dataset wordnet-mammals --method construct --tau 5 --out-points mammals_d2.npz
python -m georesolver_core embed --leaderboard --dataset wordnet-mammals --budget 60 --out assets/wordnet_leaderboard.json
python -m georesolver_core embed --leaderboard --dataset wordnet-nouns --nouns-report assets/wordnet_nouns.json --out assets/wordnet_leaderboard.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from georesolver_core.embeddings.wordnet import DATASETS, WORDNET_RECIPES, embed_closure, load_dataset, recipe
from georesolver_core.train.checkpoint import can_create_in, write_atomic


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dataset", default="wordnet-mammals", help=f"one of {sorted(DATASETS)}")
    p.add_argument("--geometry", default="poincare", help=f"one of {sorted(WORDNET_RECIPES)}")
    p.add_argument("--dim", type=int, default=5)
    p.add_argument("--epochs", type=int, default=None, help="default: the recipe's 1000 (the budget stops first)")
    p.add_argument("--lr", type=float, default=None, help="default: the geometry's recipe")
    p.add_argument("--budget", type=float, default=280.0, help="training seconds (default 280)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dtype", default=None, help="float64 (recipe) or float32")
    p.add_argument("--burn-in", type=int, default=None, help="burn-in epochs at lr/10 (default: the recipe's)")
    p.add_argument("--counts", action="store_true", help="build the closure and print its node and pair counts")
    p.add_argument(
        "--benchmark", action="store_true", help="the side-by-side benchmark (see embeddings.benchmark)"
    )
    p.add_argument(
        "--leaderboard",
        action="store_true",
        help="mammals and nouns at d = 2, 5, 10: trained, constructed, gensim, quoted (embeddings.leaderboard)",
    )
    p.add_argument(
        "--nouns-report",
        default=None,
        help="leaderboard: the report of a noun run (embed --method fast --out) to list as its trained row",
    )
    p.add_argument(
        "--method",
        default="train",
        choices=("train", "fast", "construct"),
        help="train: the recipe trainer (default); fast: the large-batch Poincaré trainer for big closures; "
        "construct: Sarkar's construction at d = 2, no training",
    )
    p.add_argument("--tau", type=float, default=None, help="construct: edge length (default: per dataset)")
    p.add_argument("--batch-size", type=int, default=None, help="fast: pairs per step (default 4096)")
    p.add_argument(
        "--cooldown", type=float, default=None, help="fast: last fraction of the budget with a decaying rate"
    )
    p.add_argument(
        "--lr-floor", type=float, default=None, help="fast: the cooldown's last rate as a fraction of lr"
    )
    p.add_argument("--cpu-budget", action="store_true", help="fast: --budget counts CPU seconds, not wall seconds")
    p.add_argument(
        "--init",
        default=None,
        choices=("tree", "uniform"),
        help="fast: start down the hierarchy (default) or uniform",
    )
    p.add_argument(
        "--rare-boost",
        type=int,
        default=None,
        help="fast: a pair whose ancestor has n descendants is visited 1 + floor(N / n) times an epoch (default 0)",
    )
    p.add_argument(
        "--eval-every",
        type=float,
        default=None,
        help="fast: seconds of training between progress lines (default 60)",
    )
    p.add_argument("--out-points", default=None, help="write names and points (float32) to this .npz")
    p.add_argument("--json", action="store_true", help="one JSON document (on stdout unless --out)")
    p.add_argument("--out", default=None, help="write the JSON document here")


def _overrides(args) -> dict:
    picked = {
        "dim": args.dim,
        "seed": args.seed,
        "epochs": args.epochs,
        "lr": args.lr,
        "dtype": args.dtype,
        "burn_in": args.burn_in,
    }
    return {k: v for k, v in picked.items() if v is not None}


def _emit(doc: dict, args) -> None:
    text = json.dumps(doc, indent=None if "points" in doc else 1)
    if args.out:  # whole or not at all: a Ctrl-C mid-write leaves the previous document
        write_atomic(args.out, lambda f: f.write((text + "\n").encode("utf-8")))
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        print(text)


def _progress(every_s: float = 30.0):
    """An on_epoch_end callback printing the epoch and loss to stderr at most every ``every_s`` seconds."""
    last = [time.perf_counter()]

    def report(trainer, record):
        if time.perf_counter() - last[0] >= every_s:
            last[0] = time.perf_counter()
            print(
                f"epoch {record['epoch']}: loss {record['loss']:.4f}, {record['train_seconds']:.0f} s",
                file=sys.stderr,
            )

    return report


def check_out(out: str | None) -> None:
    """--out can be written: checked before training, which would otherwise be lost at its end (the folder by
    creating a file in it, ``checkpoint.can_create_in``; the document is written beside it and renamed)."""
    if not out:
        return
    path = Path(out)
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise ValueError(f"out must be a file path, not a folder (got {out!r})")
    if not folder.is_dir():
        raise ValueError(f"out's folder {str(folder)!r} does not exist: create it first (got {out!r})")
    if not can_create_in(folder) or (path.exists() and not os.access(path, os.W_OK)):
        raise ValueError(f"out must be a file this process can write (got {out!r})")


def _leaderboard(args) -> int:
    """embed --leaderboard: the rows of --dataset (mammals or nouns; the nouns' trained row from
    --nouns-report), merged into --out: rows of the other dataset already there are kept."""
    from georesolver_core.embeddings.leaderboard import merge_leaderboard, run_leaderboard

    if args.dataset not in ("wordnet-mammals", "wordnet-nouns"):
        raise ValueError(
            f"dataset must be wordnet-mammals or wordnet-nouns for --leaderboard (got {args.dataset!r})"
        )
    if args.nouns_report and args.dataset != "wordnet-nouns":
        raise ValueError("nouns_report needs --dataset wordnet-nouns (the closure its rows are measured on)")
    old = None
    if args.out and Path(args.out).is_file():
        old = json.loads(Path(args.out).read_text(encoding="utf-8"))
    doc = run_leaderboard(
        {args.dataset: load_dataset(args.dataset)},
        budget_s=args.budget,
        reports={args.dataset: args.nouns_report} if args.nouns_report else None,
        train=("wordnet-mammals", "wordnet-nouns"),
        seed=args.seed,
        log=lambda line: print(line, file=sys.stderr, flush=True),
        on_row=(lambda partial: _emit(merge_leaderboard(old, partial), args)) if args.out else None,
        points_dir=Path(args.out).parent if args.out else None,
    )
    _emit(merge_leaderboard(old, doc), args)
    return 0


def _new_methods(closure, args) -> int:
    """embed --method fast / construct: the report on stdout or --out, the points to --out-points."""
    from georesolver_core.embeddings.fast import FastConfig
    from georesolver_core.embeddings.runs import (
        DEFAULT_TAU,
        SAMPLE_ABOVE,
        SAMPLE_ROWS,
        embed_construct,
        embed_fast,
    )

    if args.method == "construct":
        tau = args.tau if args.tau is not None else DEFAULT_TAU.get(args.dataset, 3.0)
        sample = SAMPLE_ROWS if closure.n_nodes > SAMPLE_ABOVE else None  # an estimate: metrics_rows says so
        doc = embed_construct(closure, tau=tau, out_points=args.out_points, sample=sample)
    else:
        picked = {"dim": args.dim, "seed": args.seed, "lr": args.lr, "burn_in": args.burn_in}
        picked["batch_size"], picked["epochs"] = args.batch_size, args.epochs
        picked["cooldown"], picked["lr_floor"] = args.cooldown, args.lr_floor
        picked["eval_every_s"], picked["init"] = args.eval_every, args.init
        picked["rare_boost"] = args.rare_boost
        config = FastConfig(**{k: v for k, v in picked.items() if v is not None})
        doc = embed_fast(
            closure,
            config,
            time_budget_s=args.budget,
            out_points=args.out_points,
            log=lambda line: print(line, file=sys.stderr, flush=True),
            cpu_budget=args.cpu_budget,
        )
    m = doc["metrics"]
    print(f"{doc['dataset']}: {args.method}: MAP {m['map']:.4f}, mean rank {m['mean_rank']:.3f}", file=sys.stderr)
    if args.json or args.out:
        _emit(doc, args)
    return 0


def main(args: argparse.Namespace) -> int:
    try:
        check_out(args.out)
        if args.benchmark:
            from georesolver_core.embeddings.benchmark import run_benchmark

            doc = run_benchmark(
                load_dataset(args.dataset),
                budget_s=args.budget,
                seed=args.seed,
                log=sys.stderr,
                on_row=(lambda partial: _emit(partial, args)) if args.out else None,  # a report even if cut short
                overrides={"burn_in": args.burn_in} if args.burn_in is not None else None,
            )
            _emit(doc, args)
            return 0
        check_out(args.out_points)
        if args.leaderboard:
            return _leaderboard(args)
        closure = load_dataset(args.dataset)
        if args.counts:
            print(closure.summary())
            return 0
        if args.method in ("fast", "construct"):
            return _new_methods(closure, args)
        config = recipe(args.geometry, **_overrides(args))
        doc = embed_closure(closure, config, time_budget_s=args.budget, callbacks={"on_epoch_end": _progress()})
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    m = doc["metrics"]
    print(
        f"{doc['dataset']}: {args.geometry} d={config.dim}, {doc['epochs_run']} epochs in {doc['train_seconds']:.1f} s: "
        f"MAP {m['map']:.3f}, mean rank {m['mean_rank']:.2f}",
        file=sys.stderr,
    )
    if args.json or args.out:
        _emit(doc, args)
    return 0
