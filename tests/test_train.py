"""The trainer: determinism, checkpoints (round trip, corrupt, foreign), divergence, bad input, the CLI."""

from __future__ import annotations

import argparse
import json
import math
import pickle

import pytest
import torch

from georesolver_core.__main__ import main as cli_main
from georesolver_core.attention import AttentionConfig
from georesolver_core.model import ModelConfig
from georesolver_core.tasks import TASKS, make_task
from georesolver_core.train import (
    MAX_STEPS,
    RunSpec,
    StopReason,
    TrainConfig,
    build_trainer,
    cli,
    load_checkpoint,
    resume,
    save_checkpoint,
)

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny tensors: see conftest

SMALL = RunSpec(
    task="recall", size=4, model=ModelConfig(n_layers=1, attention=AttentionConfig(d_model=16, n_heads=2))
)


def _trainer(steps=6, spec=SMALL, **kw):
    return build_trainer(spec, TrainConfig(steps=steps, batch_size=8, eval_every=3, **kw))


def test_same_seed_same_history_and_weights():
    a, b = _trainer(), _trainer()
    a.run(), b.run()
    assert [r["loss"] for r in a.history] == [r["loss"] for r in b.history]
    for p, q in zip(a.model.parameters(), b.model.parameters(), strict=True):
        assert torch.equal(p, q)
    c = _trainer(seed=1)
    c.run()
    assert [r["loss"] for r in c.history] != [r["loss"] for r in a.history]


def test_callbacks_are_called_and_can_stop():
    seen = {"step": 0, "eval": 0}

    class Listener:
        def on_step_end(self, trainer, row):
            seen["step"] += 1

        def on_eval(self, trainer, row):
            seen["eval"] += 1
            assert 0 <= row["test_accuracy"] <= 1

        def should_stop(self, trainer):
            return trainer.step >= 4

    t = build_trainer(SMALL, TrainConfig(steps=100, batch_size=8, eval_every=2), [Listener()])
    t.run()
    assert t.step == 4 and seen == {"step": 4, "eval": 2} and "stopped at step 4" in t.message
    assert t.stop_reason is StopReason.CALLBACK and t.final().to_dict()["stop_reason"] == "callback"


@pytest.mark.parametrize(
    "settings, reason",
    [({"target_accuracy": 1e-9}, StopReason.TARGET), ({"max_seconds": 1e-9}, StopReason.TIME_LIMIT), ({}, None)],
)
def test_the_stop_reason_says_why_a_run_stopped(settings, reason):
    t = build_trainer(SMALL, TrainConfig(steps=6, batch_size=8, eval_every=2, **settings))
    t.run()
    assert t.stop_reason is reason and t.final().stop_reason is reason
    assert (t.step < 6) == (reason is not None) and (t.message is None) == (reason is None)
    if reason is not None:  # a later run starts afresh: it stops again for its own reason
        t.run(steps=1)
        assert t.stop_reason is reason


def test_run_in_slices_equals_one_run():
    """What the page's pause/step does: several run(steps=k) calls give the run of one call."""
    a, b = _trainer(steps=6), _trainer(steps=6)
    a.run()
    b.run(steps=1), b.run(steps=2), b.run()
    assert [r["loss"] for r in a.history] == [r["loss"] for r in b.history]


def test_checkpoint_round_trip_continues_the_same_run(tmp_path):
    full = _trainer(steps=6)
    full.run()
    half = _trainer(steps=6)
    half.run(steps=3)
    half.save(tmp_path / "ck.pt")
    data = load_checkpoint(tmp_path / "ck.pt")
    assert data["step"] == 3 and data["meta"]["spec"]["task"] == "recall"
    cont = resume(data)
    for p, q in zip(cont.model.parameters(), half.model.parameters(), strict=True):
        assert torch.equal(p, q)
    cont.run()
    assert [r["loss"] for r in cont.history] == pytest.approx([r["loss"] for r in full.history], rel=1e-6)
    assert not list(tmp_path.glob(".*.tmp"))  # the temporary file was renamed away


def test_checkpoint_loads_from_bytes(tmp_path):
    t = _trainer(steps=2)
    t.run()
    t.save(tmp_path / "ck.pt")
    assert load_checkpoint((tmp_path / "ck.pt").read_bytes())["step"] == 2


def test_corrupt_truncated_and_foreign_checkpoints_are_refused(tmp_path):
    t = _trainer(steps=1)
    t.run()
    t.save(tmp_path / "ck.pt")
    raw = (tmp_path / "ck.pt").read_bytes()
    with pytest.raises(ValueError, match="not a readable checkpoint"):
        load_checkpoint(raw[: len(raw) // 2])
    with pytest.raises(ValueError, match="not a readable checkpoint"):
        load_checkpoint(b"hello, not a checkpoint")
    torch.save({"weights": torch.zeros(3)}, tmp_path / "foreign.pt")
    with pytest.raises(ValueError, match="not a training checkpoint of this library"):
        load_checkpoint(tmp_path / "foreign.pt")
    torch.save(torch.zeros(3), tmp_path / "tensor.pt")
    with pytest.raises(ValueError, match="not a training checkpoint"):
        load_checkpoint(tmp_path / "tensor.pt")
    with pytest.raises(ValueError, match="not found"):
        load_checkpoint(tmp_path / "missing.pt")


def test_pickled_code_is_not_loaded(tmp_path):
    class Evil:
        def __reduce__(self):
            return (print, ("ran",))

    torch.save({"format": "georesolver-train/1", "x": Evil()}, tmp_path / "evil.pt")
    with pytest.raises(ValueError, match="not a readable checkpoint"):
        load_checkpoint(tmp_path / "evil.pt")


def test_checkpoint_of_another_model_shape_is_refused(tmp_path):
    t = _trainer(steps=1)
    t.run()
    t.save(tmp_path / "ck.pt")
    data = load_checkpoint(tmp_path / "ck.pt")
    wider = ModelConfig(n_layers=1, attention=AttentionConfig(d_model=32, n_heads=2))
    other = build_trainer(RunSpec(task="recall", size=4, model=wider), TrainConfig(steps=2))
    with pytest.raises(ValueError, match="does not fit this model"):
        other.load_state(data)


def test_atomic_write_keeps_the_previous_file_when_saving_fails(tmp_path):
    save_checkpoint(tmp_path / "ck.pt", {"step": 1})
    with pytest.raises((pickle.PicklingError, AttributeError)):
        save_checkpoint(tmp_path / "ck.pt", {"step": 2, "bad": lambda: 0})  # lambdas do not pickle
    assert torch.load(tmp_path / "ck.pt", weights_only=True)["step"] == 1
    assert not list(tmp_path.glob(".*.tmp"))


def test_nan_loss_stops_and_keeps_the_last_good_checkpoint(tmp_path):
    t = build_trainer(
        SMALL,
        TrainConfig(steps=20, batch_size=8, eval_every=100),
        checkpoint_path=tmp_path / "ck.pt",
        checkpoint_every=2,
    )

    class Poison:
        def on_step_end(self, trainer, row):
            if trainer.step == 5:
                with torch.no_grad():
                    trainer.model.head.weight.fill_(math.nan)

    t.callbacks.append(Poison())
    t.run()
    assert t.diverged and t.step == 5 and "loss became nan at step 6" in t.message
    assert t.stop_reason is StopReason.DIVERGED
    t.run()  # a diverged run stays stopped
    assert t.step == 5 and t.stop_reason is StopReason.DIVERGED and t.final().diverged
    assert "last good checkpoint (step 4)" in t.message
    data = load_checkpoint(tmp_path / "ck.pt")
    assert data["step"] == 4 and all(bool(torch.isfinite(v).all()) for v in data["model"].values())


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"lr": 0.0}, "lr must be a finite number > 0"),
        ({"lr": -1e-3}, "lr must be"),
        ({"lr": math.nan}, "lr must be"),
        ({"lr": math.inf}, "lr must be"),
        ({"steps": 0}, "steps must be"),
        ({"steps": MAX_STEPS + 1}, f"steps must be an integer in \\[1, {MAX_STEPS}\\]"),
        ({"batch_size": 0}, "batch_size must be"),
        ({"device": "tpu"}, "device must be one of"),
        ({"target_accuracy": 1.5}, "target_accuracy"),
    ],
)
def test_bad_train_config_is_a_clear_error(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TrainConfig(**kwargs)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"task": "sudoku"}, "task must be one of"),
        ({"model": "magic"}, "model must be a ModelConfig"),
        ({"size": 0}, "size"),
    ],
)
def test_bad_run_spec_is_a_clear_error(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RunSpec(**kwargs)


@pytest.mark.parametrize(
    "name,size,match", [("recall", 0, "n_pairs"), ("copy", -2, "length"), ("digits", 3, "fixed size")]
)
def test_bad_task_sizes_are_clear_errors(name, size, match):
    with pytest.raises(ValueError, match=match):
        make_task(name, size=size)


def test_cli_json_document_and_files(tmp_path, capsys):
    rc = cli_main(
        ["train", "--task", "recall", "--attention", "ida", "--size", "4", "--d-model", "16", "--layers", "1",
         "--heads", "2", "--steps", "4", "--batch-size", "8", "--eval-every", "2", "--out", str(tmp_path), "--json"]
    )  # fmt: skip
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    final = doc["final"]
    assert final["steps"] == 4 and 0 <= final["accuracy"] <= 1 and final["loss"] > 0 and final["seconds"] > 0
    assert {p.name for p in tmp_path.iterdir()} >= {"checkpoint.pt", "history.csv", "history.json"}
    assert (tmp_path / "history.csv").read_text().splitlines()[
        0
    ] == "step,loss,accuracy,test_loss,test_accuracy,seconds"
    assert load_checkpoint(tmp_path / "checkpoint.pt")["step"] == 4


@pytest.mark.parametrize(
    "args,match",
    [(["--task", "nope"], "task must be one of"), (["--attention", "nope"], "kernel must be one of"),
     (["--lr", "-1"], "lr must be"), (["--steps", str(MAX_STEPS + 1)], "steps must be"), (["--d-model", "0"], "d_model")],
)  # fmt: skip
def test_cli_bad_input_exits_2_with_the_reason(args, match, capsys, tmp_path):
    assert cli_main(["train", "--out", str(tmp_path), *args]) == 2
    assert match.split()[0] in capsys.readouterr().err


def test_cli_flags_land_in_the_spec_and_config_fields_they_name():
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    args = parser.parse_args("--task noisy --layers 3 --heads 2 --no-gate --eta 0.3 --steps 7 --lr 0.01".split())
    spec, config = cli._spec(args), cli.train_config(args)
    assert (spec.task, spec.model.n_layers, spec.model.attention.n_heads, spec.model.gating) == (
        "noisy",
        3,
        2,
        False,
    )
    assert spec.task_args == (("eta", 0.3),)
    assert (config.steps, config.lr, config.weight_decay) == (7, 0.01, 0.0)
    assert config.eval_every == 25  # the CLI's own default, not TrainConfig's
    plain = cli._spec(parser.parse_args([]))
    assert plain.model.gating and plain.task_args == () and plain == RunSpec()  # the CLI's defaults are RunSpec's


@pytest.mark.parametrize("name", sorted(TASKS))
def test_every_task_trains_a_few_steps(name):
    spec = RunSpec(task=name, size=None, model=SMALL.model)
    t = build_trainer(spec, TrainConfig(steps=2, batch_size=8, eval_every=2))
    t.run()
    assert t.step == 2 and math.isfinite(t.history[-1]["loss"]) and t.history[-1]["test_accuracy"] is not None


def test_hida_size_flags_reach_the_nested_attention_config_and_the_baseline_drops_them(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    spec = cli._spec(parser.parse_args("--attention fp-hida --window 2 --globals 1 --d-model 16".split()))
    assert (spec.kernel, spec.model.attention.window, spec.model.attention.n_global) == ("fp-hida", 2, 1)
    base = spec.with_kernel("softmax").model.attention
    assert (base.kernel, base.window, base.n_global, base.d_model) == ("softmax", None, None, 16)
    assert cli._spec(parser.parse_args("--kernel l-hida --anchors 3".split())).model.attention.n_anchors == 3
    assert cli_main(["train", "--out", str(tmp_path), "--window", "2"]) == 2  # ida reads no window
    assert "window applies to kernel fp-hida only" in capsys.readouterr().err


def test_final_is_a_frozen_result_whose_dict_is_the_json_final():
    t = build_trainer(SMALL, TrainConfig(steps=2, batch_size=8, eval_every=2))
    t.run()
    final = t.final()
    with pytest.raises(AttributeError):
        final.steps = 3  # frozen
    assert list(final.to_dict()) == [
        "accuracy", "loss", "train_loss", "steps", "seconds", "cpu_seconds", "diverged", "stop_reason", "message"
    ]  # fmt: skip
    assert final.to_dict()["steps"] == final.steps == 2 and final.accuracy == t.history[-1]["test_accuracy"]
