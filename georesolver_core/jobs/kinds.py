"""JOB_KINDS: the work a runner can be asked for, by name. A kind's ``run(config, ctx) -> result`` runs in a
worker: ``config`` a dict of plain values (it crosses the process boundary and is written to the run
folder), ``ctx`` a ``control.JobContext``, the result a JSON-ready dict. ``gpu`` says whether the kind
gains from a GPU (on Ray it then asks for one when the cluster has any).

Kinds outside the registry are named "module:function" (the worker imports the module), so a study or a
test brings its own without touching this table.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass

from georesolver_core.jobs.control import JobContext


@dataclass(frozen=True)
class JobKind:
    """One kind of job: the function a worker runs, and whether it wants a GPU."""

    run: Callable[[dict, JobContext], dict]
    gpu: bool = False


def train_config(spec, train) -> dict:
    """The config of a "train" job from a ``train.RunSpec`` and a ``train.TrainConfig`` (frozen dataclasses),
    as plain JSON values: what crosses to the worker and is written to the run folder's spec.json."""
    return {"spec": json.loads(json.dumps(asdict(spec))), "train": json.loads(json.dumps(asdict(train)))}


def train_job(config: dict, ctx: JobContext) -> dict:
    """One training run: ``config = train_config(RunSpec, TrainConfig)``.

    Checkpoints and their history go to the job's run folder every ``checkpoint_every`` steps (default: each
    evaluation); every step passes ``ctx.tick()`` (pause, step, stop) and every evaluation reports progress
    with the history row as the partial result."""
    from georesolver_core.train import TrainConfig, build_trainer
    from georesolver_core.train.run import spec_from_checkpoint

    spec = spec_from_checkpoint({"meta": {"spec": config["spec"]}})  # the one reader of a spec dict
    train = TrainConfig(**config["train"])

    class Bridge:  # trainer callbacks -> the runner
        def on_step_end(self, trainer, row) -> None:
            ctx.tick()

        def on_eval(self, trainer, row) -> None:
            ctx.progress(trainer.step / train.steps, f"step {trainer.step}: loss {row['loss']:.4f}", dict(row))

        def should_stop(self, trainer) -> bool:
            return ctx.stop_requested

    trainer = build_trainer(
        spec, train, [Bridge()], checkpoint_path=ctx.run_dir / "checkpoint.pt",
        checkpoint_every=int(config.get("checkpoint_every", train.eval_every)),
        history_path=ctx.run_dir / "history.csv",
    )  # fmt: skip
    trainer.run()
    if not trainer.diverged:
        trainer.save(ctx.run_dir / "checkpoint.pt")
    return {"final": trainer.final().to_dict(), "history": trainer.history}


JOB_KINDS: dict[str, JobKind] = {
    "train": JobKind(train_job, gpu=True),
}


def resolve(kind: str) -> JobKind:
    """A registered kind, or a "module:function" path; ValueError naming the choices otherwise."""
    if kind in JOB_KINDS:
        return JOB_KINDS[kind]
    module, _, name = kind.partition(":")
    if module and name:
        try:
            return JobKind(getattr(importlib.import_module(module), name))
        except (ImportError, AttributeError) as err:
            raise ValueError(f"kind {kind!r} cannot be imported: {err}") from None
    raise ValueError(f"kind must be one of {sorted(JOB_KINDS)} or 'module:function' (got {kind!r})")
