"""``train --resume`` continues the checkpoint's own run: it reports that run (on stderr and in the JSON),
takes the flags that say how long and where the continued run goes, and names every other flag it ignores,
however the flag was written (``--step 8`` is argparse's abbreviation of ``--steps 8``)."""

from __future__ import annotations

import json

import pytest

from georesolver_core.__main__ import main
from georesolver_core.train.checkpoint import load_checkpoint


@pytest.fixture(scope="module")
def text_checkpoint(tmp_path_factory):
    folder = tmp_path_factory.mktemp("text")
    argv = ["train", "--task", "text", "--size", "16", "--d-model", "16", "--layers", "1", "--heads", "2",
            "--batch-size", "4", "--steps", "3", "--eval-every", "3", "--out", str(folder)]  # fmt: skip
    assert main(argv) == 0
    return folder / "checkpoint.pt"


def _resume(checkpoint, out, *flags) -> list[str]:
    return ["train", "--resume", str(checkpoint), "--out", str(out), *flags]


def test_the_json_and_the_line_report_the_checkpoints_run(text_checkpoint, tmp_path, capsys):
    capsys.readouterr()
    assert main(_resume(text_checkpoint, tmp_path, "--steps", "4", "--json", "--sample", "5")) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["spec"] == json.loads(json.dumps(load_checkpoint(text_checkpoint)["meta"]["spec"]))
    assert doc["spec"]["task"] == "text" and doc["spec"]["model"]["attention"]["d_model"] == 16
    assert "val_bits_per_char" in doc["final"] and len(doc["sample"]["text"]) == 5
    assert doc["resume"] == {
        "checkpoint": str(text_checkpoint),
        "step": 3,
        "overrides": {"--steps": 4},
        "ignored": [],
    }
    line = captured.err.splitlines()[0]
    assert line.startswith(f"resuming {text_checkpoint} at step 3: GeoResolver (ida) on the text task")
    assert "d_model 16, 1 layers, 2 heads" in line and "--steps 4" in line and "ignored" not in line


def test_an_abbreviated_flag_is_taken_or_named_like_the_flag_it_stands_for(text_checkpoint, tmp_path, capsys):
    capsys.readouterr()
    assert (
        main(_resume(text_checkpoint, tmp_path, "--step", "5", "--d-mod=32", "--no-gate", "--lr=0.1", "--json"))
        == 0
    )
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["final"]["steps"] == 5 and doc["spec"]["model"]["attention"]["d_model"] == 16
    assert doc["spec"]["model"]["gating"] is True
    assert doc["resume"]["overrides"] == {"--steps": 5}
    assert doc["resume"]["ignored"] == ["--d-model", "--lr", "--no-gate"]
    assert captured.err.splitlines()[0].endswith(
        "ignored (the checkpoint's run decides): --d-model, --lr, --no-gate"
    )


def test_flags_that_the_resumed_command_uses_are_not_called_ignored(text_checkpoint, tmp_path, capsys):
    capsys.readouterr()
    assert main(_resume(text_checkpoint, tmp_path, "--bench", "--steps", "4", "--batch-size", "2", "--json")) == 0
    captured = capsys.readouterr()
    assert "--bench" not in captured.err.splitlines()[0] and "--batch-size" in captured.err.splitlines()[0]
    doc = json.loads(captured.out)
    assert doc["spec"]["task"] == "text" and doc["batch_size"] == 4  # the benchmark times the checkpoint's run
