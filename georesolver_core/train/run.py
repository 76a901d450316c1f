"""One training run from names: task, attention kind, sizes. What the page and the command line share.

``attention="softmax"`` is the baseline: a plain softmax transformer of the same width and depth
with the parameter count of the GeoResolver model it is compared with (``model.softmax_baseline``).
Every other key of ``attention.ATTENTION`` is a GeoResolver model with that storage kernel.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import torch

from georesolver_core.attention import ATTENTION
from georesolver_core.model import ModelConfig, build_model, softmax_baseline
from georesolver_core.tasks import TASKS, make_task
from georesolver_core.tasks.base import Task
from georesolver_core.train.config import TrainConfig
from georesolver_core.train.trainer import Trainer

# RunSpec fields the ModelConfig takes as they are (attention differs: the baseline is sized from IDA)
_MODEL_FIELDS = ("d_model", "n_heads", "n_layers", "eps", "c", "gating", "memory")


@dataclass(frozen=True)
class RunSpec:
    task: str = "recall"  # key of tasks.TASKS
    attention: str = "ida"  # key of attention.ATTENTION; "softmax" = the parameter-matched baseline
    size: int | None = None  # the task's size argument (pairs, length, depth, n_train); None = default
    d_model: int = 64  # width
    n_layers: int = 2  # blocks
    n_heads: int = 4  # heads
    eps: float = 0.1  # inverse-distance regulariser
    c: float = 1.0  # Poincaré curvature parameter
    gating: bool = True  # HyperGate on (GeoResolver models)
    memory: str = "none"  # memory path (model.MEMORY_PATHS)
    task_args: tuple = ()  # extra task keyword arguments as (name, value) pairs, e.g. (("eta", 0.3),)

    def __post_init__(self):
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {sorted(TASKS)} (got {self.task!r})")
        if self.attention not in ATTENTION:
            raise ValueError(f"attention must be one of {sorted(ATTENTION)} (got {self.attention!r})")
        if self.size is not None and (not isinstance(self.size, int) or self.size < 1):
            raise ValueError(f"size must be a positive integer or None (got {self.size!r})")

    @property
    def label(self) -> str:
        return "softmax baseline" if self.attention == "softmax" else f"GeoResolver ({self.attention})"


def build_task(spec: RunSpec, seed: int = 0) -> Task:
    return make_task(spec.task, size=spec.size, seed=seed, **dict(spec.task_args))


def model_config(spec: RunSpec, task: Task) -> ModelConfig:
    """The task sets the input, output and length; the spec the rest (the baseline is sized from an IDA model)."""
    shared = {name: getattr(spec, name) for name in _MODEL_FIELDS}
    attention = "ida" if spec.attention == "softmax" else spec.attention
    geo = ModelConfig(
        d_in=task.d_in, n_classes=task.n_classes, max_len=task.seq_len, attention=attention,
        causal=task.causal, **shared,
    )  # fmt: skip
    return softmax_baseline(geo) if spec.attention == "softmax" else geo


def build_trainer(spec: RunSpec, config: TrainConfig, callbacks=(), **kwargs) -> Trainer:
    """Task, model (initialised from ``config.seed``) and trainer for one run."""
    task = build_task(spec, seed=config.seed)
    mc = model_config(spec, task)
    torch.manual_seed(config.seed)
    model = build_model(mc)
    meta = {"spec": asdict(spec), "task": {"name": spec.task, "size": spec.size, "args": dict(spec.task_args)}}
    return Trainer(model, task, config, callbacks, meta=meta, **kwargs)


def spec_from_checkpoint(data: dict) -> RunSpec:
    """The RunSpec stored in a checkpoint's meta (to rebuild its model and task)."""
    raw = dict(data.get("meta", {}).get("spec", {}))
    if not raw:
        raise ValueError("checkpoint holds no run description (meta.spec); it cannot be continued here")
    pairs = raw.get("task_args", ())
    if not isinstance(pairs, (list, tuple)) or not all(
        isinstance(p, (list, tuple)) and len(p) == 2 for p in pairs
    ):
        raise ValueError(f"checkpoint's task_args must be (name, value) pairs (got {str(pairs)[:40]!r})")
    raw["task_args"] = tuple(tuple(p) for p in pairs)
    try:
        return RunSpec(**raw)
    except TypeError as err:
        raise ValueError(f"checkpoint's run description does not match this version: {err}") from None


def resume(data: dict, config: TrainConfig | None = None, callbacks=(), **kwargs) -> Trainer:
    """A trainer continuing a checkpoint (its own TrainConfig unless ``config`` is given)."""
    spec = spec_from_checkpoint(data)
    if config is None:
        config = TrainConfig(**data["train_config"])
    trainer = build_trainer(spec, config, callbacks, **kwargs)
    trainer.load_state(data)
    return trainer


def with_steps(config: TrainConfig, steps: int) -> TrainConfig:
    return replace(config, steps=steps)
