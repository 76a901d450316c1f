"""The optimiser recipe: learning-rate schedule, AdamW parameter groups, and the named presets.

    lr(t) = lr (t + 1) / (W + 1)                                       t < W   (linear warmup)
    lr(t) = lr_min + (lr - lr_min) (1 + cos(pi (t - W) / (N - W))) / 2   t >= W  (cosine decay to the floor)

for optimiser step t = 0 .. N - 1 (N = ``steps``, W = ``warmup_steps``); with ``lr_min`` None the rate stays
at ``lr`` after the warmup. Weight decay is AdamW's decoupled one; with ``decay_matrices_only`` it applies to
the weight matrices and embeddings (parameters of two or more dimensions) and not to biases and norm gains,
as nanoGPT does. The schedule is a pure function of the step, so a resumed run needs no scheduler state.

``RECIPES``: "constant" is this project's earlier setting (AdamW at a constant 3e-3, no warmup, no decay,
no weight decay), kept so that earlier reports can be regenerated; "nanogpt" is nanoGPT's small-model
recipe (lr 1e-3, betas 0.9 / 0.99, weight decay 0.1 on matrices, 100 warmup steps, cosine to 1e-4, clipping
at 1.0).

Which default serves every attention kind: the language-model study (``train.lm_study``, shipped as
``assets/lm_study.json``, 400 steps) tunes the rate of the "nanogpt" recipe per kind on one grid. At the text
task's default size the best rate is 1e-2 for softmax, IDA, Dense-HIDA and SIDA alike; at nanoGPT's baby shape
it is 1e-3 for softmax and 3e-3 for the inverse-distance kinds, so no single rate is best for every kind
there. The trainer's default stays "constant" so that every earlier figure regenerates unchanged; the study's
tuned configurations are ``lm_study.train_config`` at each kind's ``best_lr``.
"""

from __future__ import annotations

import math

import torch

RECIPES: dict[str, dict] = {
    "constant": dict(
        lr=3e-3, beta2=0.999, weight_decay=0.0, warmup_steps=0, lr_min=None, decay_matrices_only=False
    ),
    "nanogpt": dict(
        lr=1e-3, beta2=0.99, weight_decay=0.1, warmup_steps=100, lr_min=1e-4, decay_matrices_only=True
    ),
}


def recipe(name: str) -> dict:
    """The TrainConfig fields of a named recipe; ValueError naming the choices otherwise."""
    if name not in RECIPES:
        raise ValueError(f"recipe must be one of {sorted(RECIPES)} (got {name!r})")
    return dict(RECIPES[name], grad_clip=1.0)


def lr_at(config, step: int) -> float:
    """The learning rate of optimiser step ``step`` (0-based) under ``config`` (a TrainConfig): module doc."""
    lr, warmup = config.lr, config.warmup_steps
    if step < warmup:
        return lr * (step + 1) / (warmup + 1)
    if config.lr_min is None:
        return lr
    progress = min(1.0, (step - warmup) / max(1, config.steps - warmup))
    return config.lr_min + (lr - config.lr_min) * 0.5 * (1.0 + math.cos(math.pi * progress))


def param_groups(model: torch.nn.Module, config) -> list[dict]:
    """AdamW's parameter groups: one decayed group, and with ``decay_matrices_only`` a second, undecayed one
    for the parameters of fewer than two dimensions. Every trainable parameter is in exactly one group."""
    params = [p for p in model.parameters() if p.requires_grad]
    if not config.decay_matrices_only:
        return [{"params": params, "weight_decay": config.weight_decay}]
    return [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": config.weight_decay},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]


def set_lr(optimizer: torch.optim.Optimizer, lr: float) -> None:
    for group in optimizer.param_groups:
        group["lr"] = lr
