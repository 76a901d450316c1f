"""A model-agnostic trainer that reports through callbacks (minGPT's pattern).

The trainer knows a model ((B, T, d_in) -> (B, T, n_classes) logits), a task (batches and a test
split, ``tasks.base.Task``) and a ``TrainConfig``; a page or the command line listens through
callbacks and draws. Callbacks are any objects with some of

    on_step_end(trainer, record)   after every optimiser step; record = one history row
    on_eval(trainer, record)       after every test-set evaluation
    should_stop(trainer) -> bool   asked after every step; True ends ``run`` cleanly

Deterministic for a seed: batches come from a generator seeded by ``config.seed`` whose state is
saved in checkpoints, so a resumed run continues the same batch sequence. Under DDP (see
``train.distributed``) every process draws the same global batch and trains on its slice.
"""

from __future__ import annotations

import csv
import io
import json
import math
import time
from dataclasses import asdict, dataclass
from enum import Enum
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from georesolver_core.tasks.base import IGNORE, Batch, Task
from georesolver_core.train import distributed, recipe
from georesolver_core.train.checkpoint import checkpoint_writer, optimizer_state_for, write_atomic_group
from georesolver_core.train.config import TrainConfig

COLUMNS = ("step", "loss", "accuracy", "test_loss", "test_accuracy", "seconds")
EVAL_CHUNK = 1024  # test examples per forward pass


def resolve_device(name: str, world: distributed.World | None = None) -> torch.device:
    """ "auto" -> CUDA (this process's GPU under torchrun) when available, else CPU."""
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("device='cuda' was asked for but no CUDA GPU is available; use 'auto' or 'cpu'")
    if name == "cpu" or (name == "auto" and not torch.cuda.is_available()):
        return torch.device("cpu")
    return torch.device("cuda", (world or distributed.World()).local_rank)


def loss_and_accuracy(logits: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Cross-entropy and accuracy over the labelled positions. (B, T, n_classes), (B, T) -> two scalars."""
    flat, target = logits.reshape(-1, logits.shape[-1]), y.reshape(-1)  # (B*T, n_classes), (B*T,)
    loss = F.cross_entropy(flat, target, ignore_index=IGNORE)
    labelled = target != IGNORE
    correct = (flat.argmax(dim=-1) == target) & labelled
    return loss, correct.sum() / labelled.sum().clamp_min(1)


class StopReason(str, Enum):
    """Why ``Trainer.run`` stopped before the steps it was asked for (None on the trainer: it ran them all).

    Its value is what the command line's JSON ``final.stop_reason`` holds."""

    DIVERGED = "diverged"  # the loss became NaN or infinite: the run cannot continue
    TARGET = "target"  # the test accuracy reached ``config.target_accuracy``
    TIME_LIMIT = "time limit"  # ``config.max_seconds`` of training were spent
    CALLBACK = "callback"  # a callback's ``should_stop`` answered True


@dataclass(frozen=True)
class FinalResult:
    """A run's headline numbers (``Trainer.final``); ``to_dict`` is the command line's JSON ``final``."""

    accuracy: float | None  # test accuracy at the last evaluation (None: not evaluated yet)
    loss: float | None  # test loss at the last evaluation (the text task: validation nats per character)
    train_loss: float | None  # loss of the last training step
    steps: int  # optimiser steps taken
    seconds: float  # wall-clock training time
    cpu_seconds: float  # this process's CPU time over the same spans
    diverged: bool  # the loss became NaN or infinite
    stop_reason: StopReason | None  # why the run stopped early (None: it ran its steps)
    message: str | None  # why the run stopped early, in words, if it did

    def to_dict(self) -> dict:
        """Plain types: the stop reason as its value."""
        return {**asdict(self), "stop_reason": None if self.stop_reason is None else self.stop_reason.value}


class Trainer:
    def __init__(
        self,
        model: nn.Module,
        task: Task,
        config: TrainConfig,
        callbacks=(),
        *,
        checkpoint_path=None,
        checkpoint_every: int | None = None,
        history_path=None,
        meta: dict | None = None,
    ):
        self.config = config
        self.task = task
        self.callbacks = list(callbacks)
        self.world = distributed.current()
        self.device = resolve_device(config.device, self.world)
        self.model = model.to(self.device)
        self.module = self.model
        if self.world.distributed:
            ids = [self.device.index] if self.device.type == "cuda" else None
            self.module = nn.parallel.DistributedDataParallel(self.model, device_ids=ids)
        self.optimizer = torch.optim.AdamW(
            recipe.param_groups(self.model, config), lr=config.lr, betas=(0.9, config.beta2)
        )
        self.generator = torch.Generator().manual_seed(config.seed)
        self.step = 0
        self.seconds = 0.0  # wall-clock training time (steps and evaluations)
        self.cpu_seconds = 0.0  # this process's CPU time over the same spans: less sensitive to a busy machine
        self.history: list[dict] = []
        self.stop_reason: StopReason | None = None  # why the last run stopped early (None: it ran its steps)
        self.message: str | None = None  # the same, in words for a person (NaN loss, target reached, ...)
        self.checkpoint_path = checkpoint_path
        self.checkpoint_every = checkpoint_every
        self.history_path = history_path  # history.csv (and .json beside it), written with every checkpoint
        self.last_good_step: int | None = None  # step of the newest checkpoint written
        self.meta = meta or {}  # what rebuilds the run: model/task names and arguments

    @property
    def diverged(self) -> bool:
        """The loss became NaN or infinite (``StopReason.DIVERGED``): the run cannot continue."""
        return self.stop_reason is StopReason.DIVERGED

    # --- one step and one evaluation -----------------------------------------------------------
    def train_step(self) -> dict:
        """One optimiser step on one global batch. Returns the history row (loss NaN: nothing updated)."""
        t0, c0 = time.perf_counter(), time.process_time()
        batch = self.task.sample(self.config.batch_size, self.generator)
        start, stop = distributed.shard(self.config.batch_size, self.world)
        batch = batch.slice(start, stop).to(self.device)
        self.module.train()
        logits = self.module(batch.x)
        loss, acc = loss_and_accuracy(logits, batch.y)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        loss_value = distributed.mean_across(float(loss.detach()), self.world, self.device)
        acc_value = distributed.mean_across(float(acc), self.world, self.device)
        if not math.isfinite(loss_value):
            self.stop_reason = StopReason.DIVERGED
            kept = (
                f"the last good checkpoint (step {self.last_good_step}) is kept at {self.checkpoint_path}"
                if self.last_good_step is not None
                else "no checkpoint had been written"
            )
            self.message = f"loss became {loss_value} at step {self.step + 1}: training stopped; {kept}. Lower the learning rate."
            return {"step": self.step + 1, "loss": loss_value, "accuracy": acc_value}
        if self.config.grad_clip is not None:
            nn.utils.clip_grad_norm_(self.model.parameters(), self.config.grad_clip)
        recipe.set_lr(self.optimizer, recipe.lr_at(self.config, self.step))  # the schedule of train/recipe.py
        self.optimizer.step()
        self.step += 1
        self.seconds += time.perf_counter() - t0
        self.cpu_seconds += time.process_time() - c0
        row = {
            "step": self.step,
            "loss": loss_value,
            "accuracy": acc_value,
            "test_loss": None,
            "test_accuracy": None,
        }
        row["seconds"] = self.seconds
        self.history.append(row)
        return row

    @torch.no_grad()
    def evaluate(self, batch: Batch | None = None) -> dict:
        """Loss and accuracy on the task's test split (or ``batch``), over labelled positions."""
        batch = batch or self.task.test_set()
        self.model.eval()
        total_loss = total_correct = total = 0.0
        for i in range(0, len(batch), EVAL_CHUNK):
            part = batch.slice(i, i + EVAL_CHUNK).to(self.device)
            logits = self.model(part.x)
            n = int((part.y != IGNORE).sum())
            loss, acc = loss_and_accuracy(logits, part.y)
            total_loss += float(loss) * n
            total_correct += float(acc) * n
            total += n
        return {"test_loss": total_loss / max(total, 1), "test_accuracy": total_correct / max(total, 1)}

    # --- the loop ---------------------------------------------------------------------------------
    def run(self, steps: int | None = None) -> list[dict]:
        """Train until ``config.steps`` (or ``steps`` more), a callback stops, the target is reached,
        time runs out or the loss diverges. Returns the history."""
        end = self.config.steps if steps is None else min(self.config.steps, self.step + steps)
        if not self.diverged:  # a diverged run stays stopped: its parameters are not finite
            self.stop_reason, self.message = None, None
        while self.step < end and not self.diverged:
            row = self.train_step()
            if self.diverged:
                break
            self._notify("on_step_end", row)
            if self.step % self.config.eval_every == 0 or self.step == end:
                self.eval_now(row)
                if self.config.target_accuracy is not None and row["test_accuracy"] >= self.config.target_accuracy:
                    self.stop_reason = StopReason.TARGET
                    self.message = (
                        f"test accuracy {row['test_accuracy']:.4f} reached the target at step {self.step}"
                    )
                    break
            if self.checkpoint_every and self.checkpoint_path and self.step % self.checkpoint_every == 0:
                self.save(self.checkpoint_path)
            if self.config.max_seconds is not None and self.seconds >= self.config.max_seconds:
                self.stop_reason = StopReason.TIME_LIMIT
                self.message = f"time limit of {self.config.max_seconds:g} s reached at step {self.step}"
                break
            if any(getattr(cb, "should_stop", lambda t: False)(self) for cb in self.callbacks):
                self.stop_reason = StopReason.CALLBACK
                self.message = f"stopped at step {self.step}"
                break
        if self.history and self.history[-1]["test_accuracy"] is None and not self.diverged:
            self.eval_now(self.history[-1])
        return self.history

    def eval_now(self, row: dict) -> dict:
        t0, c0 = time.perf_counter(), time.process_time()
        row.update(self.evaluate())
        self.seconds += time.perf_counter() - t0
        self.cpu_seconds += time.process_time() - c0
        row["seconds"] = self.seconds
        self._notify("on_eval", row)
        return row

    def _notify(self, hook: str, row: dict) -> None:
        for cb in self.callbacks:
            fn = getattr(cb, hook, None)
            if fn is not None:
                fn(self, row)

    def final(self) -> FinalResult:
        """The headline numbers: test accuracy and loss at the last evaluation, steps, seconds."""
        last_eval = next((r for r in reversed(self.history) if r["test_accuracy"] is not None), None)
        return FinalResult(
            accuracy=None if last_eval is None else last_eval["test_accuracy"],
            loss=None if last_eval is None else last_eval["test_loss"],
            train_loss=self.history[-1]["loss"] if self.history else None,
            steps=self.step,
            seconds=self.seconds,
            cpu_seconds=self.cpu_seconds,
            diverged=self.diverged,
            stop_reason=self.stop_reason,
            message=self.message,
        )

    # --- export and checkpoints ---------------------------------------------------------------------
    def history_csv(self) -> str:
        return history_csv(self.history)

    def history_json(self) -> str:
        return json.dumps({"meta": self.meta, "history": self.history}, indent=1)

    def state(self) -> dict:
        """Everything a checkpoint holds (plain types and tensors only: the safe loader reads it)."""
        model_config = getattr(self.model, "config", None)
        return {
            "model_config": asdict(model_config) if model_config is not None else {},
            "model": {k: v.detach().cpu() for k, v in self.model.state_dict().items()},
            "optimizer": self.optimizer.state_dict(),
            "step": self.step,
            "seconds": self.seconds,
            "generator": self.generator.get_state(),
            "train_config": asdict(self.config),
            "task": self.meta.get("task", {}),
            "meta": self.meta,
            "history": self.history,
        }

    def save(self, path) -> None:
        """Write a checkpoint and the history of the same step beside it (``history_path``) as one group
        (``checkpoint.write_atomic_group``: all old or all new, Ctrl-C held over the renames; only the main
        process writes under DDP): a run folder never holds one run's checkpoint beside another run's history,
        however the run ends. The checkpoint is renamed last, so a reader who sees it finds its history."""
        if self.world.is_main:
            files = []
            if self.history_path is not None:
                csv_path = Path(self.history_path)
                csv_text, json_text = self.history_csv().encode(), self.history_json().encode()
                files += [
                    (csv_path, lambda f: f.write(csv_text)),
                    (csv_path.with_suffix(".json"), lambda f: f.write(json_text)),
                ]
            write_atomic_group([*files, (path, checkpoint_writer(self.state()))])
        self.last_good_step = self.step

    def load_state(self, data: dict) -> None:
        """Continue from a checkpoint read by ``checkpoint.load_checkpoint``; shapes must match."""
        mismatch = state_mismatch(self.model.state_dict(), data["model"])
        if mismatch:
            raise ValueError(f"checkpoint does not fit this model: {mismatch}")
        self.model.load_state_dict(data["model"])
        self.optimizer.load_state_dict(optimizer_state_for(self.model, data))
        self.step = int(data["step"])
        self.seconds = float(data.get("seconds", 0.0))
        if "generator" in data:
            self.generator.set_state(data["generator"])
        self.history = [dict(r) for r in data["history"]]


def state_mismatch(own: dict, saved: dict, most: int = 3) -> str:
    """Which keys of a saved state dict do not fit a model's (missing, unexpected, other shape), named;
    "" when it fits. torch's own error begins with a line that names none of them."""
    missing = [k for k in own if k not in saved]
    unexpected = [k for k in saved if k not in own]
    shapes = [
        f"{k} {tuple(v.shape)} where the model has {tuple(own[k].shape)}"
        for k, v in saved.items()
        if k in own and tuple(v.shape) != tuple(own[k].shape)
    ]
    parts = [
        f"{what} {', '.join(keys[:most])}" + (f" and {len(keys) - most} more" if len(keys) > most else "")
        for what, keys in (("missing keys", missing), ("unexpected keys", unexpected), ("shapes differ:", shapes))
        if keys
    ]
    return "; ".join(parts)


def history_csv(history: list[dict]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, extrasaction="ignore")
    writer.writeheader()
    for row in history:
        writer.writerow({k: ("" if row.get(k) is None else row[k]) for k in COLUMNS})
    return buf.getvalue()
