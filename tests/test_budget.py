"""The memory budget: configurations whose tensors cannot fit are refused before anything is allocated."""

from __future__ import annotations

import time

import pytest
import torch

from georesolver_core.attention import AttentionConfig
from georesolver_core.budget import (
    DEFAULT_BUDGET_BYTES,
    MEMORY_BUDGET_ENV,
    check_memory,
    memory_budget,
    parse_bytes,
)
from georesolver_core.geometry import pairwise_distance
from georesolver_core.model import ModelConfig
from georesolver_core.routing.dmg import DMGConfig
from georesolver_core.tasks import make_task
from georesolver_core.train.config import TrainConfig
from georesolver_core.train.run import RunSpec, build_trainer


def test_default_budget_and_environment_override(monkeypatch):
    monkeypatch.delenv(MEMORY_BUDGET_ENV, raising=False)
    assert memory_budget() == DEFAULT_BUDGET_BYTES == 4 * 2**30
    monkeypatch.setenv(MEMORY_BUDGET_ENV, "512MiB")
    assert memory_budget() == 512 * 2**20
    with pytest.raises(ValueError, match=r"n=3.*needs about 1.0 GiB, over the memory budget of 512.0 MiB"):
        check_memory("a test tensor", 2**30, n=3)
    for bad in ("lots", "inf", "0", "-1", "4 XB", "nan"):
        monkeypatch.setenv(MEMORY_BUDGET_ENV, bad)
        with pytest.raises(ValueError, match=MEMORY_BUDGET_ENV):
            memory_budget()
    assert parse_bytes("1.5e9") == 1_500_000_000


@pytest.mark.parametrize(
    "build, names",
    [
        (lambda: DMGConfig(capacity=1 << 20, dim=65536), ["capacity=1048576", "dim=65536"]),
        (lambda: AttentionConfig(d_model=65536, n_heads=4), ["d_model=65536"]),
        (
            lambda: ModelConfig(
                d_in=65536, n_classes=65536, max_len=4096, n_layers=16, attention=AttentionConfig(d_model=1024)
            ),
            ["d_in=65536"],
        ),
        (lambda: make_task("noisy", size=100_000, length=1024, dim=4096), ["n_train=100000", "dim=4096"]),
        (lambda: make_task("hierarchy", size=11), ["depth=11"]),  # 4095 nodes: (n^2, 2, n) one-hot pairs
    ],
)
def test_oversized_configurations_are_refused_before_allocating(build, names):
    start = time.perf_counter()
    with pytest.raises(ValueError, match="over the memory budget") as err:
        build()
    assert time.perf_counter() - start < 1.0  # refused from the arguments, not after an allocation
    for name in names:
        assert name in str(err.value)


def test_a_run_whose_step_cannot_fit_is_refused_before_the_model_is_built():
    spec = RunSpec(task="copy", size=1024, model=ModelConfig(n_layers=16, attention=AttentionConfig(d_model=1024)))
    with pytest.raises(ValueError, match="training step's activations.*batch_size=65536"):
        build_trainer(spec, TrainConfig(batch_size=65536))


def test_pairwise_distance_on_huge_inputs_is_refused_before_computing():
    x = torch.zeros(100_000, 2)
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"pairwise distance matrix \(n=100000, m=100000"):
        pairwise_distance(x, x, geometry="euclidean")
    assert time.perf_counter() - start < 1.0


def test_configurations_within_the_budget_still_build():
    DMGConfig(capacity=1024, dim=64)
    AttentionConfig(d_model=1024, n_heads=8)
    make_task("noisy", size=256)
    assert pairwise_distance(torch.zeros(3, 2), torch.zeros(4, 2), geometry="euclidean").shape == (3, 4)
