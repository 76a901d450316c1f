"""Checkpoints of older layouts still load and resume: one written before the GeoResolver block held a
GeoAttention, and one written before a run nested its configs (a flat run description).

``data/checkpoint_block_before_attn.pt`` was written by that version (recall, Dense-HIDA, the GSR memory
path and HyperGate: one block, d_model 8); the JSON beside it lists, per parameter name of that version,
the weight sum and the AdamW first moment the resumed optimiser held for it. Its keys
``blocks.0.qkv.*``, ``blocks.0.out.*`` are now ``blocks.0.attn.qkv.*``, ``blocks.0.attn.out.*``, and the
block lists its parameters in another order, so the optimiser's numbers must be mapped by name.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import asdict
from pathlib import Path

import pytest
import torch

from georesolver_core.attention import AttentionConfig
from georesolver_core.model import ModelConfig
from georesolver_core.train import RunSpec, load_checkpoint, resume
from georesolver_core.train.checkpoint import upgrade_model_keys, upgrade_spec
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
            assert float(state["exp_avg"].double().sum()) == pytest.approx(
                want["exp_avg_sum"], rel=1e-6, abs=1e-12
            )
    step = trainer.step
    trainer.config = dataclasses.replace(trainer.config, steps=step + 1)
    trainer.run()
    assert trainer.step == step + 1 and all(torch.isfinite(p).all() for p in trainer.model.parameters())


def test_an_old_checkpoint_passes_the_upload_checks():
    spec = check_checkpoint(load_checkpoint(OLD))
    assert (spec.kernel, spec.model.memory) == ("hida", "gsr")
    assert "blocks.0.attn.out.weight" in read_checkpoint_upload(OLD.read_bytes()).data["model"]


# ``data/checkpoint_flat_spec.pt`` was written before a run nested its configs: its meta.spec is flat
# (recall, size 4, SIDA, one block, d_model 8, 2 heads, eps 0.05, no gate; step 3).
FLAT = DATA / "checkpoint_flat_spec.pt"


def test_a_flat_run_description_is_read_as_the_nested_configs():
    raw = torch.load(FLAT, weights_only=True)["meta"]["spec"]
    assert "model" not in raw and raw["attention"] == "sida"  # the file is of the flat layout
    spec = check_checkpoint(load_checkpoint(FLAT))
    attention = AttentionConfig(d_model=8, n_heads=2, kernel="sida", eps=0.05)
    assert spec == RunSpec(task="recall", size=4, model=ModelConfig(n_layers=1, gating=False, attention=attention))
    assert upgrade_spec(asdict(spec)) == asdict(spec)  # a nested description stays as it is


def test_a_flat_checkpoint_resumes_with_its_weights_and_saves_the_nested_layout(tmp_path):
    data = load_checkpoint(FLAT)
    trainer = resume(data)
    assert trainer.step == 3 and not trainer.model.blocks[0].gate
    for name, value in trainer.model.state_dict().items():
        assert torch.equal(value, data["model"][name]), name
    trainer.save(tmp_path / "again.pt")
    saved = torch.load(tmp_path / "again.pt", weights_only=True)["meta"]["spec"]
    assert saved["model"]["attention"]["kernel"] == "sida" and "attention" not in saved  # written nested
    assert check_checkpoint(load_checkpoint(tmp_path / "again.pt")) == check_checkpoint(data)


def test_an_unknown_field_of_a_flat_description_is_refused_by_name():
    data = load_checkpoint(FLAT)
    data["meta"]["spec"] = upgrade_spec({**torch.load(FLAT, weights_only=True)["meta"]["spec"], "heads": 3})
    with pytest.raises(ValueError, match="does not match this version.*heads"):
        check_checkpoint(data)
