"""The optimiser recipe (train/recipe.py): the schedule's warmup and floor, which parameters decay, the presets,
and a resumed run under a schedule equal to one uninterrupted run."""

from __future__ import annotations

import argparse
import math

import pytest
import torch

from georesolver_core.train import TrainConfig, build_trainer, cli, load_checkpoint, resume
from georesolver_core.train.recipe import RECIPES, lr_at, param_groups, recipe
from tests.test_train import SMALL

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny tensors: see conftest

NANO = TrainConfig(steps=1000, **recipe("nanogpt"))


def test_warmup_rises_linearly_to_the_peak_then_the_cosine_falls_to_the_floor():
    lrs = [lr_at(NANO, t) for t in range(NANO.steps + 1)]
    warm = lrs[: NANO.warmup_steps]
    assert warm == pytest.approx([NANO.lr * (t + 1) / (NANO.warmup_steps + 1) for t in range(NANO.warmup_steps)])
    assert all(a < b for a, b in zip(warm, warm[1:], strict=False))  # strictly rising
    assert lrs[NANO.warmup_steps] == pytest.approx(NANO.lr) and max(lrs) == pytest.approx(NANO.lr)
    after = lrs[NANO.warmup_steps :]
    assert all(a >= b for a, b in zip(after, after[1:], strict=False))  # never rises again
    assert lrs[NANO.steps] == pytest.approx(NANO.lr_min) and min(after) >= NANO.lr_min
    middle = NANO.warmup_steps + (NANO.steps - NANO.warmup_steps) // 2
    assert lrs[middle] == pytest.approx((NANO.lr + NANO.lr_min) / 2)  # the cosine's half-way point


def test_the_constant_recipe_is_the_earlier_setting():
    config = TrainConfig(steps=50)
    assert {k: getattr(config, k) for k in RECIPES["constant"]} == RECIPES["constant"]
    assert {lr_at(config, t) for t in range(50)} == {3e-3}


def test_weight_decay_reaches_matrices_and_embeddings_only():
    trainer = build_trainer(SMALL, TrainConfig(steps=200, batch_size=8, **recipe("nanogpt")))
    groups = trainer.optimizer.param_groups
    decayed = {id(p) for g in groups if g["weight_decay"] > 0 for p in g["params"]}
    named = dict(trainer.model.named_parameters())
    assert decayed == {id(p) for p in named.values() if p.dim() >= 2}
    assert any(p.dim() < 2 for p in named.values())  # biases / gains exist, and are not decayed
    assert sorted(id(p) for g in groups for p in g["params"]) == sorted(id(p) for p in named.values())  # each once
    assert groups[0]["betas"] == (0.9, 0.99)
    plain = param_groups(trainer.model, TrainConfig(steps=2, weight_decay=0.1))
    assert len(plain) == 1 and plain[0]["weight_decay"] == 0.1  # decay_matrices_only=False: every parameter


def test_the_optimiser_takes_each_step_at_the_scheduled_rate():
    config = TrainConfig(steps=8, batch_size=8, eval_every=4, lr=1e-2, warmup_steps=3, lr_min=1e-3)
    trainer = build_trainer(SMALL, config)
    for t in range(config.steps):
        trainer.run(steps=1)
        assert trainer.optimizer.param_groups[0]["lr"] == pytest.approx(lr_at(config, t))


def test_a_resumed_run_under_the_schedule_equals_the_uninterrupted_one(tmp_path):
    config = TrainConfig(steps=8, batch_size=8, eval_every=4, **recipe("nanogpt") | {"warmup_steps": 3})
    full = build_trainer(SMALL, config)
    full.run()
    half = build_trainer(SMALL, config)
    half.run(steps=4)
    half.save(tmp_path / "ck.pt")
    cont = resume(load_checkpoint(tmp_path / "ck.pt"))
    assert cont.config == config  # the recipe's fields travel in the checkpoint
    cont.run()
    for p, q in zip(cont.model.parameters(), full.model.parameters(), strict=True):
        assert torch.allclose(p, q, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(warmup_steps=10), r"warmup_steps must be .*\[0, 9\]"),
        (dict(lr_min=0.1), r"lr_min must be in \(0, lr"),
        (dict(lr_min=-1.0), "lr_min must be a finite number > 0"),
        (dict(beta2=1.0), r"beta2 must be a number in \(0, 1\)"),
        (dict(decay_matrices_only="yes"), "decay_matrices_only must be True or False"),
    ],
)
def test_bad_recipe_fields_are_clear_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TrainConfig(steps=10, lr=1e-3, **kwargs)
    with pytest.raises(ValueError, match="recipe must be one of"):
        recipe("adam-ish")


def test_the_cli_recipe_flag_and_an_lr_over_it():
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    nano = cli.train_config(parser.parse_args(["--recipe", "nanogpt", "--steps", "2000"]))
    assert (nano.lr, nano.warmup_steps, nano.lr_min, nano.weight_decay, nano.beta2) == (1e-3, 100, 1e-4, 0.1, 0.99)
    assert cli.train_config(parser.parse_args(["--recipe", "nanogpt", "--steps", "500"])).warmup_steps == 50
    assert cli.train_config(parser.parse_args(["--recipe", "nanogpt", "--steps", "5"])).warmup_steps == 0
    low = cli.train_config(parser.parse_args(["--recipe", "nanogpt", "--steps", "500", "--lr", "5e-5"]))
    assert low.lr == 5e-5 and low.lr_min == 5e-5  # the floor never above the peak
    assert math.isclose(cli.train_config(parser.parse_args([])).lr, 3e-3)  # no flag: the earlier setting
