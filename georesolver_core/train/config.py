"""The trainer's frozen configuration, validated on construction."""

from __future__ import annotations

import math
from dataclasses import dataclass

from georesolver_core.validate import check_positive_int

MAX_STEPS = 1_000_000  # documented cap: a run longer than this belongs in a scheduler, not a lab
MAX_BATCH = 65_536
DEVICES = ("auto", "cpu", "cuda")


@dataclass(frozen=True)
class TrainConfig:
    steps: int = 1000  # optimiser steps, at most MAX_STEPS
    batch_size: int = 64  # global batch (split across processes under DDP)
    lr: float = 3e-3  # AdamW learning rate, finite and > 0
    weight_decay: float = 0.0  # AdamW decoupled weight decay, >= 0
    grad_clip: float | None = 1.0  # max gradient norm; None = no clipping
    # The schedule and AdamW's groups (train/recipe.py): linear warmup over warmup_steps, then cosine decay to
    # lr_min (None: constant lr); beta2 is AdamW's second-moment rate; decay_matrices_only keeps weight decay
    # off biases and norm gains. The defaults are the "constant" recipe.
    warmup_steps: int = 0  # in [0, steps)
    lr_min: float | None = None  # the cosine's floor, in (0, lr]
    beta2: float = 0.999  # in (0, 1)
    decay_matrices_only: bool = False
    seed: int = 0  # model initialisation and batch order
    eval_every: int = 50  # steps between test-set evaluations
    device: str = "auto"  # "auto": CUDA when available, else CPU
    target_accuracy: float | None = None  # stop once test accuracy reaches this (None: run all steps)
    max_seconds: float | None = None  # stop after this much training time (None: no limit)

    def __post_init__(self):
        check_positive_int("steps", self.steps, 1, MAX_STEPS)
        check_positive_int("batch_size", self.batch_size, 1, MAX_BATCH)
        check_positive_int("eval_every", self.eval_every, 1, MAX_STEPS)
        check_positive_int("seed", self.seed, 0, 2**63 - 1)
        _finite_positive("lr", self.lr)
        if not (
            isinstance(self.weight_decay, (int, float))
            and math.isfinite(self.weight_decay)
            and self.weight_decay >= 0
        ):
            raise ValueError(f"weight_decay must be a finite number >= 0 (got {self.weight_decay!r})")
        if self.grad_clip is not None:
            _finite_positive("grad_clip", self.grad_clip)
        check_positive_int("warmup_steps", self.warmup_steps, 0, self.steps - 1)
        if self.lr_min is not None:
            _finite_positive("lr_min", self.lr_min)
            if self.lr_min > self.lr:
                raise ValueError(f"lr_min must be in (0, lr = {self.lr}] (got {self.lr_min!r})")
        if not (isinstance(self.beta2, (int, float)) and not isinstance(self.beta2, bool) and 0 < self.beta2 < 1):
            raise ValueError(f"beta2 must be a number in (0, 1) (got {self.beta2!r})")
        if not isinstance(self.decay_matrices_only, bool):
            raise ValueError(f"decay_matrices_only must be True or False (got {self.decay_matrices_only!r})")
        if self.device not in DEVICES:
            raise ValueError(f"device must be one of {list(DEVICES)} (got {self.device!r})")
        if self.target_accuracy is not None and not (
            isinstance(self.target_accuracy, (int, float)) and 0 < self.target_accuracy <= 1
        ):
            raise ValueError(f"target_accuracy must be in (0, 1] or None (got {self.target_accuracy!r})")
        if self.max_seconds is not None:
            _finite_positive("max_seconds", self.max_seconds)


def _finite_positive(name: str, value) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0
    if not ok:
        raise ValueError(f"{name} must be a finite number > 0 (got {value!r})")
