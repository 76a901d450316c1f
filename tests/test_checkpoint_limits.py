"""Checkpoints are validated once, completely, before anything they describe is read or built."""

from __future__ import annotations

import copy
import io
import zipfile

import pytest
import torch

import georesolver_core.train.run as run
from georesolver_core.attention import AttentionConfig
from georesolver_core.model import ModelConfig
from georesolver_core.train import TrainConfig, build_trainer, load_checkpoint, resume
from georesolver_core.train.checkpoint import MAX_UPLOAD_EXPANDED_BYTES
from georesolver_core.train.run import RunSpec, check_checkpoint, read_checkpoint_upload

TINY_MODEL = ModelConfig(n_layers=1, attention=AttentionConfig(d_model=16, n_heads=2))

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny tensors: see conftest


@pytest.fixture(scope="module")
def good():
    t = build_trainer(RunSpec(task="recall", size=4, model=TINY_MODEL), TrainConfig(steps=2))
    t.run()
    buf = io.BytesIO()
    torch.save({"format": "georesolver-train/1", **t.state()}, buf)
    return buf.getvalue()


def _saved(data: dict) -> bytes:
    buf = io.BytesIO()
    torch.save(data, buf)
    return buf.getvalue()


def _bomb(expanded: int) -> bytes:
    """A small zip whose one entry expands to ``expanded`` zero bytes (deflate)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        with z.open("archive/data/0", "w", force_zip64=True) as f:
            block = bytes(1 << 20)
            for _ in range(expanded >> 20):
                f.write(block)
    return buf.getvalue()


def test_a_good_upload_is_read_and_continues(good):
    upload = read_checkpoint_upload(good)
    assert upload.step == 2 and upload.spec == RunSpec(task="recall", size=4, model=TINY_MODEL)
    assert resume(copy.deepcopy(upload.data)).step == 2


def test_a_compressed_checkpoint_that_expands_past_the_limit_is_refused_before_it_is_expanded(monkeypatch):
    bomb = _bomb(MAX_UPLOAD_EXPANDED_BYTES + (1 << 20))
    assert len(bomb) < 2 * 2**20  # a small upload
    monkeypatch.setattr(torch, "load", lambda *a, **k: pytest.fail("torch.load must not run"))
    with pytest.raises(ValueError, match=r"would expand to 257.0 MB in 1 entries.*at most 256 MB"):
        read_checkpoint_upload(bomb)


@pytest.mark.parametrize(
    "raw, match",
    [(b"", "empty"), (b"\x00" * 10, "not a readable checkpoint"), (b"PK\x03\x04 truncated", "not a readable")],
)
def test_empty_and_truncated_uploads_get_a_clear_message(raw, match):
    with pytest.raises(ValueError, match=match):
        read_checkpoint_upload(raw)


def _edited(good: bytes, edit) -> bytes:
    data = load_checkpoint(good)
    edit(data)
    return _saved(data)


@pytest.mark.parametrize(
    "edit, match",
    [
        # a run description whose task asks for about 2 TB of data: refused from its sizes
        (
            lambda d: d["meta"]["spec"].update(
                task="noisy", size=100_000, task_args=[("length", 1024), ("dim", 4096)]
            ),
            "noisy-label data set .* over the memory budget",
        ),
        (
            lambda d: d["meta"]["spec"]["model"].update(n_layers=16, attention={"d_model": 1024, "n_heads": 4}),
            "weights do not fit the model",
        ),
        (
            lambda d: (
                d["train_config"].update(batch_size=65536) or d["meta"]["spec"].update(task="copy", size=1024)
            ),
            "training step's activations .* over the memory budget",
        ),
        (lambda d: next(iter(d["model"].values())).fill_(float("nan")), "NaN or infinite"),
        (lambda d: d["history"].append({"step": "two", "loss": 1.0}), "history row .*: step must be a number"),
        (lambda d: d["history"].append({"step": 3, "loss": [1.0]}), "loss must be a number"),
    ],
)
def test_crafted_checkpoints_are_refused_before_anything_is_built(good, edit, match, monkeypatch):
    raw = _edited(good, edit)
    monkeypatch.setattr(run, "Trainer", lambda *a, **k: pytest.fail("no trainer may be built"))
    with pytest.raises(ValueError, match=match):
        read_checkpoint_upload(raw)


def test_optimizer_state_that_does_not_fit_is_refused(good):
    data = load_checkpoint(good)
    state = data["optimizer"]["state"]
    first = next(iter(state))
    state[first]["exp_avg"] = torch.zeros(3)
    with pytest.raises(ValueError, match="optimizer state exp_avg"):
        check_checkpoint(data)
