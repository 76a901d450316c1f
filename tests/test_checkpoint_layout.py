"""A checkpoint written before the GeoResolver block held a GeoAttention still loads and resumes.

``data/checkpoint_block_before_attn.pt`` was written by that version (recall, Dense-HIDA, the GSR memory
path and HyperGate: one block, d_model 8); the JSON beside it lists, per parameter name of that version,
the weight sum and the AdamW first moment the resumed optimiser held for it. Its keys
``blocks.0.qkv.*``, ``blocks.0.out.*`` are now ``blocks.0.attn.qkv.*``, ``blocks.0.attn.out.*``, and the
block lists its parameters in another order, so the optimiser's numbers must be mapped by name.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import torch

from georesolver_core.train import load_checkpoint, resume
from georesolver_core.train.checkpoint import upgrade_model_keys
from georesolver_core.train.run import check_checkpoint, read_checkpoint_upload

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny tensors: see conftest

DATA = Path(__file__).parent / "data"
OLD = DATA / "checkpoint_block_before_attn.pt"
MOVED = {"blocks.0.qkv.": "blocks.0.attn.qkv.", "blocks.0.out.": "blocks.0.attn.out."}


def _new_name(old: str) -> str:
    for before, after in MOVED.items():
        if old.startswith(before):
            return after + old[len(before) :]
    return old


def _expected() -> dict:
    params = json.loads((DATA / "checkpoint_block_before_attn.json").read_text())["parameters"]
    return {_new_name(name): entry for name, entry in params.items()}


def test_old_keys_are_renamed_in_their_order():
    raw = torch.load(OLD, weights_only=True)["model"]
    assert "blocks.0.qkv.weight" in raw and "blocks.0.attn.qkv.weight" not in raw  # the file is of the old layout
    data = load_checkpoint(OLD)
    assert list(data["model"]) == [_new_name(k) for k in raw]
    assert upgrade_model_keys(data["model"]) == data["model"]  # new keys stay as they are


def test_an_old_checkpoint_resumes_with_each_weight_and_moment_on_its_parameter():
    expected = _expected()
    trainer = resume(load_checkpoint(OLD))
    names = dict(trainer.model.named_parameters())
    assert set(names) == set(expected)
    for name, p in names.items():
        want = expected[name]
        assert list(p.shape) == want["shape"], name
        assert float(p.detach().double().sum()) == pytest.approx(want["weight_sum"], rel=1e-6, abs=1e-9), name
        state = trainer.optimizer.state.get(p, {})
        if want["exp_avg_sum"] is None:
            assert "exp_avg" not in state, name
        else:
            assert float(state["exp_avg"].double().sum()) == pytest.approx(want["exp_avg_sum"], rel=1e-6, abs=1e-12)
    step = trainer.step
    trainer.config = dataclasses.replace(trainer.config, steps=step + 1)
    trainer.run()
    assert trainer.step == step + 1 and all(torch.isfinite(p).all() for p in trainer.model.parameters())


def test_an_old_checkpoint_passes_the_upload_checks():
    spec = check_checkpoint(load_checkpoint(OLD))
    assert (spec.attention, spec.memory) == ("hida", "gsr")
    assert "blocks.0.attn.out.weight" in read_checkpoint_upload(OLD.read_bytes())["model"]
