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
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from georesolver_core.jobs.codec import decode_value, encode_value
from georesolver_core.jobs.control import JobContext, Stopped


@dataclass(frozen=True)
class JobKind:
    """One kind of job: the function a worker runs, and whether it wants a GPU."""

    run: Callable[[dict, JobContext], dict]
    gpu: bool = False


def train_config(spec, train) -> dict:
    """The config of a "train" job from a ``train.RunSpec`` and a ``train.TrainConfig`` (frozen dataclasses),
    as plain JSON values: what crosses to the worker and is written to the run folder's spec.json."""
    return {"spec": json.loads(json.dumps(asdict(spec))), "train": json.loads(json.dumps(asdict(train)))}


REPORT_S = 0.25  # at most this long between progress reports of a training job (and after every step while paused)


def train_job(config: dict, ctx: JobContext) -> dict:
    """One training run: ``config = train_config(RunSpec, TrainConfig)``, or ``{"resume": path}`` to continue a
    checkpoint file with its own settings. Optional: ``checkpoint_every`` (default: each evaluation), and for
    the text task ``sample_chars`` / ``sample_every`` (a sample of the model's text every so many steps).

    Every step passes ``ctx.tick()`` (pause, step, stop). Progress goes out at each evaluation, every
    ``REPORT_S`` and after each step while paused; its partial result is a dict: ``step``, ``seconds``,
    ``rows`` (the history rows since the last report, an evaluation's again once it is measured), ``eval``
    (this report closes an evaluation) and ``sample`` / ``sample_step``. On Stop the run so far is
    checkpointed before the job ends as stopped."""
    from georesolver_core.labs.training import sample_text
    from georesolver_core.train import TrainConfig, build_trainer, load_checkpoint, resume
    from georesolver_core.train.run import spec_from_checkpoint

    run_dir = ctx.run_dir
    folder = {"checkpoint_path": run_dir / "checkpoint.pt", "history_path": run_dir / "history.csv"}
    if "resume" in config:
        data = load_checkpoint(config["resume"])
        train = TrainConfig(**data["train_config"])
        every = int(config.get("checkpoint_every", train.eval_every))
        trainer = resume(data, None, checkpoint_every=every, **folder)
    else:
        spec = spec_from_checkpoint({"meta": {"spec": config["spec"]}})  # the one reader of a spec dict
        train = TrainConfig(**config["train"])
        every = int(config.get("checkpoint_every", train.eval_every))
        trainer = build_trainer(spec, train, checkpoint_every=every, **folder)
    chars, sample_every = int(config.get("sample_chars", 0)), int(config.get("sample_every", 50))
    text = chars > 0 and trainer.meta.get("spec", {}).get("task") == "text"
    # "sent": history rows reported (0: a continued run's earlier rows go out with its first report)
    state = {"sent": 0, "at": time.monotonic(), "sample": None, "sample_step": None}

    def report(evaluated: bool, rows: list[dict]) -> None:
        # the first sample at step sample_every (generating costs a second: the first steps reach the page first)
        if text and trainer.step and (trainer.step - (state["sample_step"] or 0) >= sample_every
                                      or (evaluated and trainer.step >= train.steps)):  # fmt: skip
            state["sample"], state["sample_step"] = sample_text(trainer, chars), trainer.step
        partial = {
            "step": trainer.step, "seconds": trainer.seconds, "rows": [dict(r) for r in rows], "eval": evaluated,
            "sample": state["sample"], "sample_step": state["sample_step"],
        }  # fmt: skip
        line = f"step {trainer.step}" + (f": loss {rows[-1]['loss']:.4f}" if rows else "")
        ctx.progress(trainer.step / train.steps, line, partial)
        state["sent"], state["at"] = len(trainer.history), time.monotonic()

    class Bridge:  # trainer callbacks -> the runner
        def on_step_end(self, trainer, row) -> None:
            if ctx.paused or time.monotonic() - state["at"] >= REPORT_S:
                report(False, trainer.history[state["sent"] :])
            ctx.tick()

        def on_eval(self, trainer, row) -> None:
            report(True, [*trainer.history[state["sent"] : -1], row])

    trainer.callbacks.append(Bridge())
    try:
        trainer.run()
    except Stopped:
        trainer.save(folder["checkpoint_path"])  # the run so far, kept: a Stop loses nothing
        raise
    if not trainer.diverged:
        trainer.save(folder["checkpoint_path"])
    final = trainer.final().to_dict()
    return {
        "final": final,
        "history": trainer.history,
        "sample": state["sample"],
        "sample_step": state["sample_step"],
    }


def steps_config(function: Callable, *args, budget_s: float | None = None, **kwargs) -> dict:
    """The config of a "steps" job: ``function(*args, **kwargs)``, a generator at module level, its
    arguments encoded by ``codec.encode_value`` (dataclasses and tuples survive the JSON)."""
    path = f"{function.__module__}:{function.__qualname__}"
    if "<" in path:
        raise ValueError(f"function must be defined at module level (got {path}): a worker imports it by name")
    return {
        "function": path,
        "args": encode_value(list(args)),
        "kwargs": encode_value(kwargs),
        "budget_s": budget_s,
    }


def steps_job(config: dict, ctx: JobContext) -> dict:
    """A generator run to its end in a worker: ``config = steps_config(function, *args, **kwargs)``.

    The generator yields ``(fraction done, text, partial result)`` after each unit of work and returns its
    result (``routing.compare.compare_routers_steps``, ``labs.orthogonal.compare_lab``,
    ``labs.cost_scaling.cost_scaling_steps``). ``ctx.tick()`` runs before each unit (pause, step, stop).
    Progress goes out every ``REPORT_S``, after each unit while paused, and at the end, its partial a dict:
    ``partial`` (the newest), ``seconds`` (of work), and once it ended ``result`` (what the generator
    returned) or ``budget`` (True: it stopped at ``budget_s`` seconds of work, keeping what it computed).
    The job's own result (result.json) says only how it ended: the objects went to the page as progress."""
    module, _, name = config["function"].partition(":")
    function = importlib.import_module(module)
    for part in name.split("."):
        function = getattr(function, part)
    steps = function(*decode_value(config.get("args", [])), **decode_value(config.get("kwargs", {})))
    budget = config.get("budget_s")
    seconds, sent, last = 0.0, 0.0, (0.0, "starting", None)
    while True:
        try:
            ctx.tick()
        except Stopped:  # what it computed reaches the page before the job ends
            ctx.progress(last[0], last[1], {"partial": last[2], "seconds": seconds})
            raise
        t0 = time.perf_counter()
        try:
            last = next(steps)
        except StopIteration as done:
            seconds += time.perf_counter() - t0
            ctx.progress(1.0, "finished", {"partial": last[2], "seconds": seconds, "result": done.value})
            return {"ended": "finished", "seconds": seconds}
        seconds += time.perf_counter() - t0
        fraction, text, partial = last
        if budget is not None and seconds >= budget:
            ctx.progress(fraction, text, {"partial": partial, "seconds": seconds, "budget": True})
            return {"ended": "budget", "seconds": seconds}
        if ctx.paused or time.monotonic() - sent >= REPORT_S:
            ctx.progress(fraction, text, {"partial": partial, "seconds": seconds})
            sent = time.monotonic()


JOB_KINDS: dict[str, JobKind] = {
    "train": JobKind(train_job, gpu=True),
    "steps": JobKind(steps_job),
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
