"""One training run from names: task, attention kind, sizes. What the page and the command line share.

A run nests its configs: ``RunSpec(task, model=ModelConfig(attention=AttentionConfig(kernel=...)))``.
Kernel "softmax" is the baseline: a plain softmax transformer of the same width and depth with the
parameter count of the GeoResolver model it is compared with (``model.softmax_baseline``). Every other
key of ``attention.ATTENTION`` is a GeoResolver model with that storage kernel.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

import torch

from georesolver_core.attention import AttentionConfig
from georesolver_core.budget import FLOAT32, check_memory, elements
from georesolver_core.model import ModelConfig, build_model, softmax_baseline
from georesolver_core.tasks import TASKS, make_task
from georesolver_core.tasks.base import Task
from georesolver_core.train.checkpoint import (
    MAX_CHECKPOINT_BYTES,
    MAX_UPLOAD_EXPANDED_BYTES,
    REQUIRED,
    load_checkpoint,
    optimizer_state_for,
)
from georesolver_core.train.config import TrainConfig
from georesolver_core.train.trainer import Trainer


@dataclass(frozen=True)
class RunSpec:
    """A run: the task and the model config (whose attention config names the kernel).

    The task sets the model's input, output, length and causality (``model_config``): ``model`` holds
    what the run chooses. Kernel "softmax" is the parameter-matched baseline of the IDA model.
    """

    task: str = "recall"  # key of tasks.TASKS
    size: int | None = None  # the task's size argument (pairs, length, depth, n_train); None = default
    task_args: tuple = ()  # extra task keyword arguments as (name, value) pairs, e.g. (("eta", 0.3),)
    model: ModelConfig = field(default_factory=ModelConfig)  # the model; its attention holds the kernel

    def __post_init__(self):
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {sorted(TASKS)} (got {self.task!r})")
        if self.size is not None and (not isinstance(self.size, int) or self.size < 1):
            raise ValueError(f"size must be a positive integer or None (got {self.size!r})")
        if not isinstance(self.model, ModelConfig):
            raise ValueError(f"model must be a ModelConfig (got {self.model!r})")

    @property
    def kernel(self) -> str:
        """The storage path's kernel, a key of attention.ATTENTION ("softmax": the baseline)."""
        return self.model.attention.kernel

    @property
    def label(self) -> str:
        return "softmax baseline" if self.kernel == "softmax" else f"GeoResolver ({self.kernel})"

    def with_kernel(self, kernel: str) -> RunSpec:
        """The same run with another kernel (``AttentionConfig.with_kernel``), e.g. its softmax baseline."""
        return replace(self, model=replace(self.model, attention=self.model.attention.with_kernel(kernel)))


def build_task(spec: RunSpec, seed: int = 0) -> Task:
    return make_task(spec.task, size=spec.size, seed=seed, **dict(spec.task_args))


def model_config(spec: RunSpec, task: Task) -> ModelConfig:
    """``spec.model`` with the task's input, output, length and causality (the baseline is sized from IDA)."""
    attention = replace(spec.model.attention, causal=task.causal)
    if spec.kernel == "softmax":
        attention = attention.with_kernel("ida")
    geo = replace(spec.model, d_in=task.d_in, n_classes=task.n_classes, max_len=task.seq_len, attention=attention)
    return softmax_baseline(geo) if spec.kernel == "softmax" else geo


def check_run_memory(mc: ModelConfig, batch_size: int) -> int:
    """Bytes of one training step's activations, checked against the budget (``budget.check_memory``):
    per block and position about 8 width-d tensors and 2 of the MLP's width are kept for the backward
    pass, B x T x (8 d + 2 h) x L float32, plus the input batch B x T x d_in. A lower bound."""
    per_position = mc.n_layers * (8 * mc.d_model + 2 * mc.hidden) + mc.d_in
    return check_memory(
        "one training step's activations",
        FLOAT32 * elements(batch_size, mc.max_len, per_position),
        batch_size=batch_size,
        seq_len=mc.max_len,
        d_model=mc.d_model,
        n_layers=mc.n_layers,
    )


def build_trainer(spec: RunSpec, config: TrainConfig, callbacks=(), **kwargs) -> Trainer:
    """Task, model (initialised from ``config.seed``) and trainer for one run. The task's data, the
    model's weights and a step's activations are each checked against the memory budget before they
    are allocated (``ValueError`` naming the sizes)."""
    task = build_task(spec, seed=config.seed)
    mc = model_config(spec, task)
    check_run_memory(mc, config.batch_size)
    task.check_batch(config.batch_size, "training examples a step")
    torch.manual_seed(config.seed)
    model = build_model(mc)
    meta = {"spec": asdict(spec), "task": {"name": spec.task, "size": spec.size, "args": dict(spec.task_args)}}
    return Trainer(model, task, config, callbacks, meta=meta, **kwargs)


def spec_from_checkpoint(data: dict) -> RunSpec:
    """The RunSpec stored in a checkpoint's meta (to rebuild its model and task). An older checkpoint's
    flat description is mapped to the nested one by ``load_checkpoint`` (``checkpoint.upgrade_spec``)."""
    raw = dict(data.get("meta", {}).get("spec", {}))
    if not raw:
        raise ValueError("checkpoint holds no run description (meta.spec); it cannot be continued here")
    pairs = raw.get("task_args", ())
    if not isinstance(pairs, (list, tuple)) or not all(
        isinstance(p, (list, tuple)) and len(p) == 2 for p in pairs
    ):
        raise ValueError(f"checkpoint's task_args must be (name, value) pairs (got {str(pairs)[:40]!r})")
    raw["task_args"] = tuple(tuple(p) for p in pairs)
    model = raw.get("model", {})
    if not isinstance(model, dict) or not isinstance(model.get("attention", {}), dict):
        raise ValueError("checkpoint's meta.spec.model and its attention must be dicts (the model description)")
    try:
        attention = AttentionConfig(**model.get("attention", {}))
        return RunSpec(**{**raw, "model": ModelConfig(**{**model, "attention": attention})})
    except TypeError as err:
        raise ValueError(f"checkpoint's run description does not match this version: {err}") from None


def check_checkpoint(data: dict) -> RunSpec:
    """Everything ``resume`` would do with a checkpoint read by ``load_checkpoint``, checked before any
    of it is built: the run description against the registries, the task's data, the model and a
    training step against the memory budget (each refused from its sizes, before allocating), and the
    weights and optimiser moments against the shapes of the model it describes (built on torch's meta
    device: shapes only, no memory). Returns the RunSpec; ValueError naming what does not fit."""
    spec = spec_from_checkpoint(data)
    config = TrainConfig(**data["train_config"])
    task = build_task(spec, seed=config.seed)
    mc = model_config(spec, task)
    check_run_memory(mc, config.batch_size)
    task.check_batch(config.batch_size, "training examples a step")
    with torch.device("meta"):
        model = build_model(mc)
    expected = {k: v.shape for k, v in model.state_dict().items()}
    got = {k: v.shape for k, v in data["model"].items()}
    if expected != got:
        wrong = sorted(set(expected) ^ set(got)) or [k for k in expected if expected[k] != got[k]]
        raise ValueError(
            f"checkpoint weights do not fit the model it describes (first mismatch: {wrong[0][:60]!r})"
        )
    params = list(model.parameters())
    optimizer = optimizer_state_for(model, data)
    ids = [i for g in optimizer["param_groups"] for i in g.get("params", [])]
    if len(ids) != len(params):
        raise ValueError(f"checkpoint optimizer holds {len(ids)} parameters; the model has {len(params)}")
    for i, p in zip(ids, params, strict=True):
        for name, t in optimizer["state"].get(i, {}).items():
            if name != "step" and t.shape != p.shape:
                raise ValueError(f"checkpoint optimizer state {name} of parameter {i} does not fit its shape")
    return spec


@dataclass(frozen=True, eq=False)
class CheckpointUpload:
    """An uploaded checkpoint as read and checked by ``read_checkpoint_upload``."""

    spec: RunSpec  # the run it continues
    step: int  # optimiser steps it holds
    data: dict  # the fields ``resume`` reads (deep-copy it before resuming: training updates in place)


def read_checkpoint_upload(data: bytes) -> CheckpointUpload:
    """An uploaded checkpoint, validated once and completely: at most ``MAX_CHECKPOINT_BYTES`` stored and
    ``MAX_UPLOAD_EXPANDED_BYTES`` expanded (refused before torch reads it), every field checked
    (``load_checkpoint``), and what it would build checked (``check_checkpoint``). Only the fields that
    ``resume`` reads are kept (the page holds the result while the file sits in the uploader)."""
    ck = load_checkpoint(data, MAX_CHECKPOINT_BYTES, MAX_UPLOAD_EXPANDED_BYTES)
    spec = check_checkpoint(ck)
    kept = {k: ck[k] for k in (*REQUIRED, "seconds", "generator", "meta") if k in ck}
    return CheckpointUpload(spec, ck["step"], kept)


def resume(data: dict, config: TrainConfig | None = None, callbacks=(), **kwargs) -> Trainer:
    """A trainer continuing a checkpoint (its own TrainConfig unless ``config`` is given)."""
    spec = spec_from_checkpoint(data)
    if config is None:
        config = TrainConfig(**data["train_config"])
    trainer = build_trainer(spec, config, callbacks, **kwargs)
    trainer.load_state(data)
    return trainer
