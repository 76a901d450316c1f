"""The Training page's lab: a run built from the page's settings, and what the page reads off the model
it trains.

- ``TrainingLabConfig.build``: the RunSpec (task, its size, the model: kernel, width, blocks, eps,
  HyperGate, memory path) and the TrainConfig (steps, learning rate, seed, device) of one run;
- ``run_metrics`` / ``history_metrics``: the latest validation and training numbers of a trainer or of the
  history rows a worker sent (text: bits per character, nats / ln 2);
- ``sample_text`` / ``sentence_map``: generated text and one head's causal attention on a sentence;
- ``record_gates`` / ``gate_check``: the HyperGate values of a forward pass on test examples and Theorem
  7.1 (section 7) on each token, ||dL/du_i|| / ||dL/dh_i|| >= lambda_min(G_i) - ||W_g|| ||u_i|| / 4,
  the worst ratio being sigma_min(dh_i/du_i), judged by ``verdicts.verdict_inequality`` (relation "ge").

The page trains nothing itself: a worker runs ``jobs.train_job`` and ``labs.training_runs`` follows it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from georesolver_core.attention import AttentionConfig
from georesolver_core.device import one_cpu_thread
from georesolver_core.model import ModelConfig
from georesolver_core.model.gate import GateBound, GateValues, HyperGate, gate_bound
from georesolver_core.tasks import TASKS
from georesolver_core.tasks.base import one_hot
from georesolver_core.tasks.text import VOCAB, bits_per_char, encode, generate, sentence_attention
from georesolver_core.train import RunSpec, TrainConfig
from georesolver_core.train.trainer import Trainer
from georesolver_core.validate import check_positive_int
from georesolver_core.verdicts import HOLDS, verdict_inequality

MAX_TREE_DEPTH = 6  # a tree of depth 6 has 127 nodes: the hierarchy task's pairs stay a small table
BATCH_SIZE = 64
EVAL_EVERY = 25  # steps between test-set evaluations: the curves' markers
GATE_EXAMPLES = 16  # test examples the gates are recorded on
SAMPLE_PROMPT = "a "
SAMPLE_TEMPERATURE = 0.8


@dataclass(frozen=True)
class TrainingLabConfig:
    """One run as the page sets it (hashable). ``build`` validates the model and training configs."""

    task: str  # a tasks.TASKS key
    size: int  # the size widget: pairs, length, depth, training sequences / 8, or context characters
    kernel: str  # an attention.ATTENTION key ("softmax": the baseline)
    width: int  # d_model
    layers: int  # blocks
    eps: float  # IDA regulariser
    lr: float  # AdamW learning rate
    steps: int  # optimiser steps
    gating: bool = True  # HyperGate on the storage path
    memory: bool = False  # the memory path SIDA -> GSR -> DMG (section 11.1)
    sizes: tuple[tuple[str, int], ...] = ()  # HIDA sizes as (name, value): None values take the paper's default
    seed: int = 0  # model initialisation and batch order
    device: str = "auto"  # "auto", "cpu" or "cuda"

    def __post_init__(self):
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {sorted(TASKS)} (got {self.task!r})")
        check_positive_int("size", int(self.size), 1)
        object.__setattr__(self, "sizes", tuple((str(k), v) for k, v in self.sizes))

    @property
    def task_size(self) -> int | None:
        """The task's size argument: None for a fixed-size task, 8 x size training sequences for "noisy",
        the tree depth capped at MAX_TREE_DEPTH, else the widget's value."""
        arg = TASKS[self.task].size_arg
        if arg is None:
            return None
        if arg == "n_train":
            return int(self.size) * 8
        if arg == "depth":
            return min(int(self.size), MAX_TREE_DEPTH)
        return int(self.size)

    def build(self) -> tuple[RunSpec, TrainConfig]:
        """The run's RunSpec and TrainConfig; ValueError (naming the field) for an invalid combination."""
        sizes = {k: v for k, v in self.sizes if v is not None}
        attention = AttentionConfig(d_model=self.width, kernel=self.kernel, eps=self.eps, **sizes)
        memory = "gsr" if self.memory else "none"
        model = ModelConfig(n_layers=self.layers, gating=self.gating, memory=memory, attention=attention)
        spec = RunSpec(task=self.task, size=self.task_size, model=model)
        config = TrainConfig(
            steps=int(self.steps),
            lr=self.lr,
            batch_size=BATCH_SIZE,
            eval_every=EVAL_EVERY,
            seed=self.seed,
            device=self.device,
        )
        return spec, config


@dataclass(frozen=True)
class RunMetrics:
    """The latest numbers of a run; None where not measured yet."""

    text: bool  # the run is on the text task (bits per character) or not (accuracy and loss)
    val_bits: float | None  # validation bits per character (text)
    train_bits: float | None  # training bits per character (text)
    accuracy: float | None  # test accuracy (other tasks)
    train_loss: float | None  # training loss (other tasks), nats
    steps_per_s: float | None  # steps over training seconds


def run_metrics(trainer: Trainer, task: str) -> RunMetrics:
    """``history_metrics`` of a trainer in this process."""
    return history_metrics(trainer.history, task, trainer.step, trainer.seconds)


def history_metrics(history: list[dict], task: str, steps: int, seconds: float) -> RunMetrics:
    """The latest numbers of a history (``Trainer.history`` rows, oldest first), as ``Trainer.final`` reads
    them: the last evaluation's test loss and accuracy, the last step's training loss; bits per character
    = nats / ln 2 on text; steps/s over the training seconds."""
    last_eval = next((r for r in reversed(history) if r.get("test_accuracy") is not None), None)
    text = task == "text"
    bits = lambda nats: None if nats is None or not text else float(bits_per_char(nats))  # noqa: E731
    train_loss = history[-1]["loss"] if history else None
    return RunMetrics(
        text=text,
        val_bits=bits(None if last_eval is None else last_eval["test_loss"]),
        train_bits=bits(train_loss),
        accuracy=None if last_eval is None else last_eval["test_accuracy"],
        train_loss=train_loss,
        steps_per_s=steps / seconds if seconds else None,
    )


# --- reading the trained model ---------------------------------------------------------------------------


def sample_text(trainer: Trainer, n_chars: int) -> str:
    """The prompt and ``n_chars`` characters sampled after it (temperature 0.8), from the run's seed."""
    g = torch.Generator().manual_seed(trainer.config.seed)
    with one_cpu_thread(trainer.device):
        return SAMPLE_PROMPT + generate(
            trainer.model, SAMPLE_PROMPT, n_chars, temperature=SAMPLE_TEMPERATURE, generator=g
        )


@dataclass(frozen=True)
class SentenceMap:
    """One head's causal attention on a sentence: row i, the query at character i, over characters 0..i."""

    weights: np.ndarray  # (T, T), the upper triangle zero
    text: str  # the T characters shown (the sentence's last max_len)


def sentence_map(model, sentence: str, layer: int, head: int) -> SentenceMap:
    """``tasks.text.sentence_attention`` of block ``layer`` and ``head`` (0-based) on ``sentence``."""
    w = sentence_attention(model, sentence, int(layer), int(head))
    return SentenceMap(weights=w.numpy(), text=sentence[-model.config.max_len :])


def sentence_inputs(model, sentence: str) -> torch.Tensor:
    """(1, T, V): the sentence's last ``max_len`` characters, one-hot, as the text model reads them."""
    ids = encode(sentence[-model.config.max_len :] or "\n")
    return one_hot(ids, len(VOCAB))[None]


def model_gates(model) -> list[HyperGate]:
    """The model's HyperGates, one per block ([] for the softmax baseline or with the gate off)."""
    return model.gates() if hasattr(model, "gates") else []


def record_gates(model, x: torch.Tensor) -> list[GateValues]:
    """Every gate's values on one forward pass over the examples x (n, T, d_in) (eval mode)."""
    if x.ndim != 3 or not len(x):
        raise ValueError(f"x must be a non-empty (n, T, d_in) batch (got shape {tuple(x.shape)})")
    gates = model_gates(model)
    for g in gates:
        g.record = True
    try:
        with torch.no_grad():
            model.eval()
            model(x.to(next(model.parameters()).device))
    finally:
        for g in gates:
            g.record = False
    return [g.last for g in gates]


@dataclass(frozen=True)
class GateCheck:
    """Theorem 7.1 on every token of one gate: the measured worst ratio against the bound, judged."""

    bound: GateBound  # per token: ||u_i||, sigma_min(dh_i/du_i), lambda_min(G_i), the bound; ||W_g||
    verdict: str  # HOLDS when sigma_min >= bound at every token (``verdict_inequality``), else FAILS
    summary: str  # the verdict's margin, or its worst token
    vacuous: float  # fraction of tokens where the bound is <= 0 (says nothing)
    min_ratio: float  # the smallest sigma_min over the tokens

    @property
    def holds(self) -> bool:
        return self.verdict == HOLDS

    @property
    def n_tokens(self) -> int:
        return int(self.bound.u_norm.numel())


def judge_gate_bound(gb: GateBound) -> GateCheck:
    """Theorem 7.1 judged token by token: sigma_min(dh_i/du_i) >= lambda_min(G_i) - ||W_g|| ||u_i|| / 4
    at every token holds (``verdict_inequality``, relation "ge"), a token below it fails."""
    verdict, summary = verdict_inequality(gb.sigma_min.numpy(), gb.bound.numpy(), relation="ge")
    return GateCheck(
        bound=gb,
        verdict=verdict,
        summary=summary,
        vacuous=float(gb.vacuous.double().mean()),
        min_ratio=float(gb.sigma_min.min()),
    )


def gate_check(gate: HyperGate, u: torch.Tensor) -> GateCheck:
    """Theorem 7.1 on the rows of u (..., C) (``model.gate.gate_bound``, float64), judged by ``judge_gate_bound``."""
    return judge_gate_bound(gate_bound(gate, u))
