"""``python -m georesolver_core train``: one run headless (or under torchrun, data-parallel).

Prints progress, writes history (CSV, JSON) and a checkpoint to --out; with --json prints one
JSON document whose ``final`` object holds accuracy, loss, steps and seconds. --baseline also trains
the parameter-matched softmax transformer in the same process, interleaved chunk by chunk, with the
same seed and so the same initialisation stream and batch order; --bench times training steps of both.
On the text task the evaluations also report bits per character (``val_nats`` / ln 2) and
``--sample N`` prints N characters generated after ``--prompt``.

--out holds one run: each checkpoint is written with the history of its step (``Trainer.save``), and an
earlier run's baseline files leave as a new run starts. Ctrl-C stops after the step in flight, saves,
says so in one line and exits 130 (a second Ctrl-C stops at once). --resume continues the checkpoint's
own run: it takes how long the run goes on from the flags (``RESUME_OVERRIDES``) and names the others.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from dataclasses import asdict, replace
from pathlib import Path

import torch

from georesolver_core.attention import ATTENTION, AttentionConfig
from georesolver_core.cli_args import from_args
from georesolver_core.device import one_cpu_thread
from georesolver_core.model import MEMORY_PATHS, ModelConfig
from georesolver_core.tasks import TASKS
from georesolver_core.tasks.text import bits_per_char, generate
from georesolver_core.train import distributed
from georesolver_core.train.checkpoint import can_create_in, load_checkpoint
from georesolver_core.train.config import MAX_STEPS, TrainConfig
from georesolver_core.train.recipe import RECIPES, recipe
from georesolver_core.train.run import RunSpec, build_trainer, resume, spec_from_checkpoint


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--task", default="recall", help=f"one of {sorted(TASKS)}")
    p.add_argument(
        "--attention", "--kernel", dest="kernel", default="ida",
        help=f"the kernel, one of {sorted(ATTENTION)} ('softmax' = the baseline)",
    )  # fmt: skip
    p.add_argument(
        "--size", type=int, default=None, help="the task's size (recall: key-value pairs; copy: length; ...)"
    )
    p.add_argument("--d-model", type=int, default=64)
    p.add_argument("--layers", dest="n_layers", metavar="LAYERS", type=int, default=2)
    p.add_argument("--heads", dest="n_heads", metavar="HEADS", type=int, default=4)
    p.add_argument("--eps", type=float, default=0.1)
    p.add_argument("--window", type=int, default=None, help="fp-hida: band half-width w (default ceil(log2 T))")
    p.add_argument(
        "--globals", dest="n_global", type=int, default=None,
        help="fp-hida: global tokens g (default ceil(log2 T))",
    )  # fmt: skip
    p.add_argument("--anchors", dest="n_anchors", type=int, default=None, help="l-hida: anchors m (default 16)")
    p.add_argument(
        "--summaries", dest="n_summaries", type=int, default=None, help="c-hida: summaries c (default 16)"
    )
    p.add_argument("--no-gate", dest="gating", action="store_false", help="GeoResolver model without HyperGate")
    p.add_argument("--memory", default="none", help=f"memory path, one of {list(MEMORY_PATHS)}")
    p.add_argument("--eta", type=float, default=None, help="label flip rate of the noisy task")
    p.add_argument(
        "--recipe", default="constant", choices=sorted(RECIPES),
        help="optimiser recipe (train/recipe.py): constant = AdamW at 3e-3 as before; nanogpt = warmup, cosine "
        "decay to 1e-4, weight decay 0.1 on matrices, betas 0.9 / 0.99",
    )  # fmt: skip
    p.add_argument("--lr", type=float, default=None, help="peak learning rate (default: the recipe's)")
    p.add_argument("--steps", type=int, default=1000, help=f"at most {MAX_STEPS}")
    p.add_argument("--batch-size", type=int, default=64, help="global batch (split across processes)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval-every", type=int, default=25)
    p.add_argument("--target-accuracy", type=float, default=None, help="stop once test accuracy reaches this")
    p.add_argument("--max-seconds", type=float, default=None, help="stop after this much training time")
    p.add_argument("--device", default="auto", help="auto (CUDA when available), cpu or cuda")
    p.add_argument("--out", default="runs", help="folder for history.csv, history.json, checkpoint.pt")
    p.add_argument("--checkpoint-every", type=int, default=100)
    p.add_argument("--resume", default=None, help="continue from this checkpoint")
    p.add_argument("--baseline", action="store_true", help="also train the same-size softmax transformer")
    p.add_argument("--bench", action="store_true", help="time training steps against the softmax baseline")
    p.add_argument(
        "--bench-kernels", nargs="+", default=[], help="with --bench: also time these kernels (one run, in turns)"
    )
    p.add_argument("--json", action="store_true", help="one JSON document on stdout")
    p.add_argument("--sample", type=int, default=0, help="text task: print this many generated characters")
    p.add_argument("--prompt", default="a ", help="text task: the text --sample continues")


def _spec(args) -> RunSpec:
    """The run of the flags: each config nested in the next, each built from the flags named like its fields."""
    model = from_args(ModelConfig, args, attention=from_args(AttentionConfig, args))
    # --eta is the noisy task's own argument: it travels in task_args only when given
    return from_args(RunSpec, args, model=model, task_args=(("eta", args.eta),) if args.eta is not None else ())


class _Progress:
    def __init__(self, label: str, stream, text: bool):
        self.label, self.stream, self.text = label, stream, text

    def on_eval(self, trainer, row):
        score = (
            f"val {row['test_loss']:.4f} nats = {bits_per_char(row['test_loss']):.3f} bits/char"
            if self.text
            else f"test acc {row['test_accuracy']:.4f}"
        )
        print(
            f"[{self.label}] step {row['step']:>6}  loss {row['loss']:.4f}  {score}  {row['seconds']:.1f}s",
            file=self.stream,
            flush=True,
        )


class _Interrupt:
    """Ctrl-C during training: the first press stops every run after the step in flight (a ``should_stop``
    callback), so the last checkpoint and its history are written at one step; a second press stops at once.
    (The default KeyboardInterrupt lands anywhere, inside a kernel's thread pool or half-way through a save.)"""

    def __init__(self):
        self.requested = False

    def __call__(self, signum, frame) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def should_stop(self, trainer) -> bool:
        return self.requested


def _build(spec: RunSpec, config: TrainConfig, args, out: Path, world, name: str, callbacks=(), data=None):
    stream = sys.stderr if args.json else sys.stdout
    progress = [_Progress(spec.label, stream, spec.task == "text")] if world.is_main else []
    kwargs = {
        "checkpoint_path": out / f"{name}checkpoint.pt",
        "checkpoint_every": args.checkpoint_every,
        "history_path": out / f"{name}history.csv" if world.is_main else None,
    }
    if data is not None and not name:
        return resume(data, config, [*progress, *callbacks], **kwargs)
    return build_trainer(spec, config, [*progress, *callbacks], **kwargs)


# What ``--resume`` takes from the flags: how long and how the continued run goes on. Everything else
# (the task, the model, the optimiser's settings, the seed) is the checkpoint's.
def train_config(args: argparse.Namespace) -> TrainConfig:
    """The TrainConfig of the flags: the recipe's fields, a given ``--lr`` over its rate; the warmup at most a
    tenth of the steps (nanoGPT's 100 at 1000 steps and more; none for a run of under 10 steps)."""
    fields = recipe(args.recipe)
    fields["warmup_steps"] = min(fields["warmup_steps"], args.steps // 10)
    if args.lr is not None:
        fields["lr"] = args.lr
        fields["lr_min"] = None if fields["lr_min"] is None else min(fields["lr_min"], args.lr)
    return from_args(TrainConfig, args, **fields)


RESUME_OVERRIDES = ("steps", "max_seconds", "target_accuracy", "eval_every", "device")
# flags about the command rather than the run: where and how it writes, what else it does (--baseline trains
# a fresh baseline beside the continued run; --bench times the checkpoint's run)
CLI_ONLY = {"resume", "out", "json", "checkpoint_every", "baseline", "sample", "prompt", "bench", "bench_kernels"}


def _given(args: argparse.Namespace) -> dict[str, str]:
    """``{dest: flag}`` of the flags written on the command line (``args.argv``, kept by ``__main__``; read by
    argparse itself, so ``--step 5`` counts as ``--steps`` and a flag given with its default value counts too),
    else of those whose value differs from the default."""
    parser = argparse.ArgumentParser(add_help=False)
    add_arguments(parser)
    flags = {a.dest: a.option_strings[0] for a in parser._actions if a.option_strings}
    argv = getattr(args, "argv", None)
    if argv is None:
        base = vars(parser.parse_args([]))
        return {k: flags[k] for k, v in vars(args).items() if k in base and v != base[k]}
    for action in parser._actions:
        action.default = argparse.SUPPRESS  # the namespace then holds exactly the flags that were written
    tokens = argv[1:] if argv[:1] == ["train"] else argv
    written = vars(parser.parse_known_args(tokens)[0])
    return {k: flags[k] for k in flags if k in written}


def _resumed(args: argparse.Namespace) -> tuple[dict, RunSpec, TrainConfig, dict]:
    """The checkpoint, its run, its train config with the allowed overrides, and what was taken from where
    (``resume``: checkpoint, step, overrides, ignored flags), which ``_resume_line`` says in one line."""
    data = load_checkpoint(args.resume)
    spec = spec_from_checkpoint(data)
    given = _given(args)
    overrides = {k: getattr(args, k) for k in given if k in RESUME_OVERRIDES}
    config = replace(TrainConfig(**data["train_config"]), **overrides)
    if config.steps <= data["step"]:
        raise ValueError(
            f"steps must be above the checkpoint's step {data['step']} to continue it (got {config.steps}); "
            f"pass --steps N with N in ({data['step']}, {MAX_STEPS}]"
        )
    ignored = sorted(flag for k, flag in given.items() if k not in RESUME_OVERRIDES and k not in CLI_ONLY)
    info = {
        "checkpoint": str(args.resume),
        "step": data["step"],
        "overrides": {given[k]: v for k, v in overrides.items()},
        "ignored": ignored,
    }
    return data, spec, config, info


def _resume_line(info: dict, spec: RunSpec) -> str:
    m = spec.model
    line = (
        f"resuming {info['checkpoint']} at step {info['step']}: {spec.label} on the {spec.task} task "
        f"(size {spec.size if spec.size is not None else 'default'}, d_model {m.attention.d_model}, "
        f"{m.n_layers} layers, {m.attention.n_heads} heads)"
    )
    if info["overrides"]:
        line += "; from the flags: " + ", ".join(f"{k} {v}" for k, v in info["overrides"].items())
    if info["ignored"]:
        line += "; ignored (the checkpoint's run decides): " + ", ".join(info["ignored"])
    return line


def _run_interleaved(trainers: list, chunk: int) -> None:
    """Train every trainer to its end, ``chunk`` steps at a time in turn (machine load hits all alike)."""
    while any(t.step < t.config.steps and t.stop_reason is None for t in trainers):
        for t in trainers:
            if t.step < t.config.steps and t.stop_reason is None:
                t.run(steps=chunk)


def _report(trainer, spec: RunSpec, args, out: Path, world, name: str) -> dict:
    stream = sys.stderr if args.json else sys.stdout
    ckpt = out / f"{name}checkpoint.pt"
    if not trainer.diverged:
        trainer.save(ckpt)  # with its history; a diverged run keeps its last good checkpoint and that history
    if trainer.message and world.is_main:
        print(f"[{spec.label}] {trainer.message}", file=stream, flush=True)
    final = trainer.final().to_dict()
    result = {
        "spec": asdict(spec),
        "device": str(trainer.device),
        "processes": world.size,
        "final": final,
        "history": trainer.history,
        # None: the run diverged before its first checkpoint, so what the folder holds is not this run's
        "files": None
        if trainer.last_good_step is None
        else {"checkpoint": str(ckpt), "history": str(out / f"{name}history.csv")},
    }
    if spec.task == "text":
        final["val_nats"] = final["loss"]
        final["val_bits_per_char"] = None if final["loss"] is None else bits_per_char(final["loss"])
        if args.sample:
            g = torch.Generator().manual_seed(trainer.config.seed)
            result["sample"] = {
                "prompt": args.prompt,
                "text": generate(trainer.model, args.prompt, args.sample, generator=g),
            }
            if world.is_main:
                print(f"[{spec.label}] sample: {args.prompt}{result['sample']['text']}", file=stream, flush=True)
    return result


def main(args: argparse.Namespace) -> int:
    data = resumed = None
    try:
        if args.checkpoint_every < 1:
            raise ValueError(f"checkpoint_every must be an integer >= 1 (got {args.checkpoint_every})")
        if args.resume:
            data, spec, config, resumed = _resumed(args)
            print(_resume_line(resumed, spec), file=sys.stderr, flush=True)
        else:
            spec, config = _spec(args), train_config(args)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    world = distributed.setup(config.device)
    if args.bench:  # writes nothing: Ctrl-C stops it at once (``__main__``), before the handler below
        try:
            with one_cpu_thread():
                return _bench(spec, config, args)
        except ValueError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        finally:
            distributed.teardown()
    interrupt = _Interrupt()
    # under torchrun every process gets the signal: a stop decided per process could leave one waiting in a
    # collective, so there the default (stop at once) stays
    handler = None if world.distributed else signal.signal(signal.SIGINT, interrupt)
    out = Path(args.out)
    trainers: list = []
    try:
        with one_cpu_thread():  # small models: one intra-op thread per process is fastest on a CPU
            if world.is_main:
                out.mkdir(parents=True, exist_ok=True)
                _check_writable(out)
            runs = [(spec, "")]
            if args.baseline and spec.kernel != "softmax":
                runs.append((spec.with_kernel("softmax"), "baseline_"))
            for s, name in runs:
                trainers.append(_build(s, config, args, out, world, name, [interrupt], data))
            if interrupt.requested:  # before the first step: the folder keeps what it held
                print(f"interrupted before the first step: nothing written to {out}", file=sys.stderr)
                return 130
            note = getattr(getattr(trainers[0].task, "corpus", None), "note", "")
            if note and world.is_main:  # the text task fell back to the shipped glosses: say why
                print(f"note: {note}", file=sys.stderr, flush=True)
            if world.is_main:
                _remove_stale_baseline(out, args, len(runs) > 1)
            _run_interleaved(trainers, config.eval_every)
            reports = [_report(t, s, args, out, world, name) for t, (s, name) in zip(trainers, runs, strict=True)]
            result = reports[0]
            if resumed is not None:
                result["resume"] = resumed
            if len(reports) > 1:
                result["baseline"] = reports[1]
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # a second Ctrl-C (or any under torchrun): nothing more is written
        saved = ", ".join(f"step {t.last_good_step}" for t in trainers if t.last_good_step is not None)
        print(f"interrupted{' again' if interrupt.requested else ''}: stopped at once; checkpoints with their "
              f"histories in {out}: {saved or 'none written by this run'}", file=sys.stderr)  # fmt: skip
        return 130
    finally:
        if handler is not None:
            signal.signal(signal.SIGINT, handler)
        distributed.teardown()
    if world.is_main and args.json:
        json.dump(result, sys.stdout)
        print()
    if interrupt.requested:
        steps = ", ".join(str(t.step) for t in trainers)
        print(
            f"interrupted at step {steps}: the checkpoint and history of that step are in {out}", file=sys.stderr
        )
        return 130
    return 1 if result["final"]["diverged"] else 0


BASELINE_FILES = ("baseline_checkpoint.pt", "baseline_history.csv", "baseline_history.json")


def _remove_stale_baseline(out: Path, args, with_baseline: bool) -> None:
    """An earlier run's baseline files leave the folder as this run starts, so that they never sit beside
    its checkpoint: unless this run continues the checkpoint of this folder without a baseline of its own
    (the baseline files are then the same run's, at an earlier step)."""
    resumed = Path(args.resume).resolve() if args.resume else None
    if with_baseline or resumed != (out / "checkpoint.pt").resolve():
        for name in BASELINE_FILES:
            if (out / name).resolve() != resumed:  # never the file being continued
                (out / name).unlink(missing_ok=True)


def _check_writable(out: Path) -> None:
    """The run folder takes files (found now, not after the run: the run would be lost)."""
    if not can_create_in(out):
        raise ValueError(f"out must be a folder this process can write (got {str(out)!r})")


def _bench(spec: RunSpec, config: TrainConfig, args) -> int:
    from georesolver_core.train.bench import step_rates

    rates = step_rates(spec, config, kernels=tuple(args.bench_kernels))
    base = rates[-1].steps_per_second
    rows = [{**asdict(r), "ratio_to_softmax": r.steps_per_second / base} for r in rates]
    if args.json:
        json.dump({"spec": asdict(spec), "batch_size": config.batch_size, "rates": rows}, sys.stdout)
        print()
    else:
        for r in rows:
            print(
                f"{r['label']:<28} params {r['parameters']:>8}  {r['steps_per_second']:7.2f} steps/s  "
                f"x{r['ratio_to_softmax']:.2f} of softmax"
            )
    return 0
