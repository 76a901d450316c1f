"""A small sequence model stacking GeoResolver blocks, and its same-size softmax baseline.

In the order of data flow (nanoGPT style): input features (B, T, d_in) -> linear embedding +
learned positions -> n_layers x GeoResolverBlock -> LayerNorm -> per-position logits (B, T, n_classes).
Tasks mark which positions carry a target, so one model serves classification (the last position)
and sequence-to-sequence tasks (copy).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import torch
from torch import nn

from georesolver_core.attention import ATTENTION, AttentionConfig
from georesolver_core.budget import FLOAT32, check_memory
from georesolver_core.model.block import GeoResolverBlock
from georesolver_core.model.gate import HyperGate
from georesolver_core.validate import check_positive_int

MAX_WIDTH = 1024  # d_model cap: the app and CLI train on one CPU or GPU in seconds to minutes
MAX_LAYERS = 16
MAX_LEN = 4096
MEMORY_PATHS = ("none", "gsr")  # "gsr": SIDA -> GSR -> DMG memory path of section 11.1


@dataclass(frozen=True)
class ModelConfig:
    """The model: its size and paths, and the one attention layer config every block uses.

    ``d_in``, ``n_classes``, ``max_len`` and the attention's ``causal`` are the task's (a run sets them
    from its task: ``train.run.model_config``); width, heads, kernel, eps and c live in ``attention``.
    """

    d_in: int = 1  # input features per position (set by the task)
    n_classes: int = 2  # output classes per position (set by the task)
    max_len: int = 64  # longest sequence (size of the learned position table)
    n_layers: int = 2  # blocks
    attention: AttentionConfig = field(default_factory=AttentionConfig)  # every block's storage path
    gating: bool = True  # HyperGate between the paths and the output projection
    memory: str = "none"  # one of MEMORY_PATHS
    mlp_hidden: int | None = None  # MLP width; None = 4 d_model

    def __post_init__(self):
        check_positive_int("d_in", self.d_in, 1, 1 << 16)
        check_positive_int("n_classes", self.n_classes, 1, 1 << 16)
        check_positive_int("max_len", self.max_len, 1, MAX_LEN)
        if not isinstance(self.attention, AttentionConfig):
            raise ValueError(f"attention must be an AttentionConfig (got {self.attention!r})")
        check_positive_int("d_model", self.d_model, 1, MAX_WIDTH)
        check_positive_int("n_layers", self.n_layers, 1, MAX_LAYERS)
        if self.memory not in MEMORY_PATHS:
            raise ValueError(f"memory must be one of {list(MEMORY_PATHS)} (got {self.memory!r})")
        if self.mlp_hidden is not None:
            check_positive_int("mlp_hidden", self.mlp_hidden, 1, 16 * MAX_WIDTH)
        if self.attention.n_global is not None and self.attention.n_global > self.max_len:
            raise ValueError(
                f"n_global must be at most the sequence length max_len = {self.max_len} "
                f"(got {self.attention.n_global})"
            )
        check_memory(
            "this model's weights, gradients and optimiser moments",
            4 * FLOAT32 * self.parameter_estimate(),
            d_model=self.d_model,
            n_layers=self.n_layers,
            d_in=self.d_in,
            n_classes=self.n_classes,
            max_len=self.max_len,
            mlp_hidden=self.hidden,
        )

    def parameter_estimate(self) -> int:
        """Parameters of the dominant matrices: input and position tables, per block 4 d^2 (Q, K, V, O)
        and 2 d h (MLP), and the output head. A lower bound of the model's count (gates, norms omitted)."""
        d = self.d_model
        per_block = 4 * d * d + 2 * d * self.hidden
        return (self.d_in + self.max_len + self.n_classes) * d + self.n_layers * per_block

    @property
    def d_model(self) -> int:
        """The width, the attention layer's (the residual stream and every block share it)."""
        return self.attention.d_model

    @property
    def geometry(self) -> str | None:
        """The storage path's geometry, as the attention registry records it (None: dot-product softmax)."""
        return ATTENTION[self.attention.kernel].geometry

    @property
    def hidden(self) -> int:
        return 4 * self.d_model if self.mlp_hidden is None else self.mlp_hidden


def _memory_module(config: ModelConfig) -> nn.Module | None:
    if config.memory == "none":
        return None
    from georesolver_core.model.memory import MemoryPath

    return MemoryPath(config.d_model, eps=config.attention.eps)


class GeoResolverModel(nn.Module):
    """(B, T, d_in) float features -> (B, T, n_classes) logits."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config
        C = config.d_model
        self.embed = nn.Linear(config.d_in, C)
        self.pos = nn.Parameter(torch.randn(config.max_len, C) * 0.02)
        self.blocks = nn.ModuleList(
            GeoResolverBlock(
                config.attention, mlp_hidden=config.hidden, gating=config.gating, memory=_memory_module(config)
            )
            for _ in range(config.n_layers)
        )
        self.ln_f = nn.LayerNorm(C)
        self.head = nn.Linear(C, config.n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, F = x.shape
        if F != self.config.d_in or T > self.config.max_len:
            raise ValueError(
                f"x must have shape (B, T <= {self.config.max_len}, {self.config.d_in}) (got {tuple(x.shape)})"
            )
        h = self.embed(x) + self.pos[:T]  # (B, T, C)
        for block in self.blocks:
            h = block(h)
        return self.head(self.ln_f(h))  # (B, T, n_classes)

    def gates(self) -> list[HyperGate]:
        return [b.gate for b in self.blocks if b.gate is not None]


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def _count(config: ModelConfig) -> int:
    with torch.device("meta"):
        return count_parameters(GeoResolverModel(config))


def softmax_baseline(config: ModelConfig) -> ModelConfig:
    """A plain softmax transformer of the same width, depth and heads, and (to within one MLP unit
    per layer) the same parameter count: the gate's and memory's parameters go to a wider MLP."""
    base = replace(
        config,
        attention=config.attention.with_kernel("softmax"),
        gating=False,
        memory="none",
        mlp_hidden=config.hidden,
    )
    extra = _count(config) - _count(base)  # gate (+ memory) parameters of the GeoResolver model
    per_unit = config.n_layers * (2 * config.d_model + 1)  # one more MLP unit in every layer
    return replace(base, mlp_hidden=max(1, config.hidden + math.floor(extra / per_unit + 0.5)))


def build_model(config: ModelConfig) -> GeoResolverModel:
    return GeoResolverModel(config)
