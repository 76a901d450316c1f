"""Training: a model-agnostic trainer with callbacks, checkpoints, DDP, and runs built from names."""

from georesolver_core.train.checkpoint import FORMAT, load_checkpoint, save_checkpoint
from georesolver_core.train.config import MAX_STEPS, TrainConfig
from georesolver_core.train.run import (
    RunSpec,
    build_task,
    build_trainer,
    model_config,
    resume,
    spec_from_checkpoint,
)
from georesolver_core.train.trainer import (
    COLUMNS,
    FinalResult,
    StopReason,
    Trainer,
    history_csv,
    loss_and_accuracy,
    resolve_device,
)

__all__ = [
    "COLUMNS",
    "FORMAT",
    "FinalResult",
    "MAX_STEPS",
    "RunSpec",
    "StopReason",
    "TrainConfig",
    "Trainer",
    "build_task",
    "build_trainer",
    "history_csv",
    "load_checkpoint",
    "loss_and_accuracy",
    "model_config",
    "resolve_device",
    "resume",
    "save_checkpoint",
    "spec_from_checkpoint",
]
