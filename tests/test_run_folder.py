"""A run folder is always one run, Ctrl-C ends a run cleanly, and --resume continues the checkpoint's own run.

Before: history.csv / history.json were written only at a run's end, so an interrupted run left its new
checkpoint beside an earlier run's history; Ctrl-C printed a KeyboardInterrupt traceback; --resume reported
the flags' defaults as the run (a text checkpoint as "recall") and ignored other flags without a word.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import stat
import subprocess
import sys
import time

import pytest
import torch

from georesolver_core.__main__ import main
from georesolver_core.train.checkpoint import FORMAT, load_checkpoint

TINY = ["--task", "recall", "--size", "4", "--d-model", "16", "--layers", "1", "--batch-size", "8"]


def _train(out, *extra) -> list[str]:
    return [sys.executable, "-m", "georesolver_core", "train", *TINY, "--out", str(out), *extra]


def _history_steps(folder, name: str = "") -> list[int]:
    with open(folder / f"{name}history.csv") as f:
        return [int(r["step"]) for r in csv.DictReader(f)]


def _consistent(folder) -> int:
    """The checkpoint's step, which must be the last step of the history beside it (CSV and JSON alike)."""
    ck = load_checkpoint(folder / "checkpoint.pt")
    steps = _history_steps(folder)
    doc = json.loads((folder / "history.json").read_text())
    assert steps and steps[-1] == ck["step"], (steps[-3:], ck["step"])
    assert doc["history"][-1]["step"] == ck["step"] and doc["meta"] == json.loads(json.dumps(ck["meta"]))
    return ck["step"]


def _interrupt_after_a_checkpoint(argv, folder, newer_than: float = 0.0) -> subprocess.CompletedProcess:
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ckpt, deadline = folder / "checkpoint.pt", time.time() + 120
    while not (ckpt.exists() and ckpt.stat().st_mtime > newer_than):
        assert proc.poll() is None, proc.communicate()
        assert time.time() < deadline, "no checkpoint within 120 s"
        time.sleep(0.05)
    time.sleep(0.3)  # into the next steps
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


@pytest.mark.slow
def test_ctrl_c_ends_with_one_line_and_a_consistent_folder(tmp_path):
    done = _interrupt_after_a_checkpoint(
        _train(tmp_path, "--steps", "100000", "--checkpoint-every", "5", "--eval-every", "5"), tmp_path
    )
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("interrupted at step")
    step = _consistent(tmp_path)
    assert f"interrupted at step {step}:" in done.stderr  # the run stopped at the step it saved


@pytest.mark.slow
def test_a_second_run_in_the_same_folder_never_sits_beside_the_first_ones_history(tmp_path):
    first = subprocess.run(
        _train(tmp_path, "--steps", "30", "--eval-every", "10", "--seed", "1"), capture_output=True
    )
    assert first.returncode == 0, first.stderr
    assert _consistent(tmp_path) == 30
    t0 = (tmp_path / "checkpoint.pt").stat().st_mtime
    done = _interrupt_after_a_checkpoint(
        _train(tmp_path, "--steps", "100000", "--checkpoint-every", "3", "--eval-every", "3", "--seed", "2"),
        tmp_path, newer_than=t0,
    )  # fmt: skip
    assert done.returncode == 130, done.stderr
    _consistent(tmp_path)
    assert load_checkpoint(tmp_path / "checkpoint.pt")["train_config"]["seed"] == 2


def test_history_is_written_with_every_checkpoint_at_the_same_step(tmp_path, capsys):
    from georesolver_core.attention import AttentionConfig
    from georesolver_core.model import ModelConfig
    from georesolver_core.train import RunSpec, TrainConfig, build_trainer

    model = ModelConfig(n_layers=1, attention=AttentionConfig(d_model=16, n_heads=2, kernel="ida"))
    trainer = build_trainer(
        RunSpec(task="recall", size=4, model=model), TrainConfig(steps=12, batch_size=8, eval_every=4),
        checkpoint_path=tmp_path / "checkpoint.pt", checkpoint_every=4, history_path=tmp_path / "history.csv",
    )  # fmt: skip
    trainer.run(steps=8)  # stopped after two checkpoints: no end-of-run write
    assert _consistent(tmp_path) == 8


def test_checkpoints_get_the_same_mode_as_the_histories(tmp_path):
    assert main(["train", *TINY, "--steps", "4", "--eval-every", "4", "--out", str(tmp_path)]) == 0
    mode = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()}
    assert mode["checkpoint.pt"] == mode["history.csv"] == mode["history.json"], mode


@pytest.fixture(scope="module")
def text_checkpoint(tmp_path_factory):
    folder = tmp_path_factory.mktemp("text")
    argv = ["train", "--task", "text", "--size", "16", "--d-model", "16", "--layers", "1", "--batch-size", "4",
            "--steps", "3", "--eval-every", "3", "--out", str(folder)]  # fmt: skip
    assert main(argv) == 0
    return folder / "checkpoint.pt"


def test_resume_reports_the_checkpoints_run_and_names_the_flags_it_ignores(text_checkpoint, tmp_path, capsys):
    capsys.readouterr()
    argv = ["train", "--resume", str(text_checkpoint), "--steps", "5", "--d-model", "64", "--task", "recall",
            "--out", str(tmp_path), "--json"]  # fmt: skip
    assert main(argv) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["spec"]["task"] == "text" and doc["spec"]["model"]["attention"]["d_model"] == 16
    assert doc["final"]["steps"] == 5 and "val_bits_per_char" in doc["final"]  # the text task's metrics
    assert "resuming" in captured.err and "--steps 5" in captured.err
    assert "ignored (the checkpoint's run decides): --d-model, --task" in captured.err


def test_resume_keeps_the_checkpoints_optimiser_settings(text_checkpoint, tmp_path, capsys):
    saved = load_checkpoint(text_checkpoint)["train_config"]
    assert main(["train", "--resume", str(text_checkpoint), "--steps", "4", "--out", str(tmp_path)]) == 0
    resumed = load_checkpoint(tmp_path / "checkpoint.pt")["train_config"]
    assert {k: resumed[k] for k in ("lr", "batch_size", "seed")} == {
        k: saved[k] for k in ("lr", "batch_size", "seed")
    }
    assert resumed["steps"] == 4


def test_resume_refuses_a_step_past_the_limit_and_a_run_already_done(text_checkpoint, tmp_path, capsys):
    data = torch.load(text_checkpoint, weights_only=True)
    assert data["format"] == FORMAT
    data["step"] = 10**18
    bad = tmp_path / "far.pt"
    torch.save(data, bad)
    assert main(["train", "--resume", str(bad), "--out", str(tmp_path)]) == 2
    assert "checkpoint step must be an integer in [0, 1000000]" in capsys.readouterr().err
    assert main(["train", "--resume", str(text_checkpoint), "--steps", "3", "--out", str(tmp_path)]) == 2
    assert "above the checkpoint's step 3" in capsys.readouterr().err


def test_a_checkpoint_that_does_not_fit_names_its_keys(text_checkpoint, tmp_path, capsys):
    data = torch.load(text_checkpoint, weights_only=True)
    data["model"]["extra.weight"] = torch.zeros(2)
    first = next(iter(data["model"]))
    data["model"][first] = torch.zeros(3, 3)
    bad = tmp_path / "bad.pt"
    torch.save(data, bad)
    assert main(["train", "--resume", str(bad), "--steps", "5", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "unexpected keys extra.weight" in err and f"{first} (3, 3) where the model has" in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere: the folder check is tested below instead")
def test_embed_out_unwritable_fails_before_training(tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    t0 = time.perf_counter()
    assert main(["embed", "--budget", "60", "--out", str(locked / "m.json")]) == 2
    assert "out must be a file this process can write" in capsys.readouterr().err
    assert time.perf_counter() - t0 < 10


@pytest.mark.skipif(not os.path.isdir("/sys/kernel"), reason="needs a Linux sysfs (a folder that takes no files)")
def test_embed_out_where_no_file_can_be_created_fails_before_training(capsys):
    # sysfs refuses new files to every user, root included, whose mode bits let everything through: only
    # creating a file tells
    t0 = time.perf_counter()
    assert main(["embed", "--budget", "30", "--out", "/sys/kernel/embedding.json"]) == 2
    assert "out must be a file this process can write" in capsys.readouterr().err
    assert time.perf_counter() - t0 < 10


def test_embed_out_in_a_missing_folder_fails_before_training(tmp_path, capsys):
    t0 = time.perf_counter()
    assert main(["embed", "--budget", "60", "--out", str(tmp_path / "no" / "m.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["embed", "--budget", "60", "--out", str(tmp_path)]) == 2
    assert "not a folder" in capsys.readouterr().err
    assert time.perf_counter() - t0 < 10


def test_embed_ctrl_c_is_one_line_and_exit_130(monkeypatch, capsys):
    def interrupted(*args, **kwargs):
        signal.raise_signal(signal.SIGINT)  # a real Ctrl-C, mid-training
        time.sleep(5)

    monkeypatch.setattr("georesolver_core.embeddings.cli.embed_closure", interrupted)
    assert main(["embed", "--budget", "30"]) == 130
    err = capsys.readouterr().err
    assert err.startswith("interrupted") and len(err.strip().splitlines()) == 1, err


def _tiny_trainer(folder, steps: int = 12):
    from georesolver_core.attention import AttentionConfig
    from georesolver_core.model import ModelConfig
    from georesolver_core.train import RunSpec, TrainConfig, build_trainer

    model = ModelConfig(n_layers=1, attention=AttentionConfig(d_model=16, n_heads=2, kernel="ida"))
    return build_trainer(
        RunSpec(task="recall", size=4, model=model), TrainConfig(steps=steps, batch_size=8, eval_every=4),
        checkpoint_path=folder / "checkpoint.pt", checkpoint_every=4, history_path=folder / "history.csv",
    )  # fmt: skip


def test_a_ctrl_c_during_a_save_waits_for_the_checkpoint_and_its_history(tmp_path, monkeypatch):
    trainer = _tiny_trainer(tmp_path)
    trainer.run(steps=4)  # a first checkpoint and history, at step 4
    real = os.replace

    def replace_then_ctrl_c(src, dst):  # the second Ctrl-C of a user, between two files of one save
        real(src, dst)
        signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(os, "replace", replace_then_ctrl_c)
    trainer.checkpoint_path = None  # saved by hand below
    trainer.run(steps=3)
    with pytest.raises(KeyboardInterrupt):
        trainer.save(tmp_path / "checkpoint.pt")
    monkeypatch.setattr(os, "replace", real)
    assert _consistent(tmp_path) == 7
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_ctrl_c_in_process_stops_at_a_step_with_its_checkpoint_and_history(tmp_path, monkeypatch, capsys):
    from georesolver_core.train.trainer import Trainer

    real = Trainer.train_step

    def step(self):
        row = real(self)
        if self.step == 7:
            signal.raise_signal(signal.SIGINT)
        return row

    monkeypatch.setattr(Trainer, "train_step", step)
    argv = [
        "train",
        *TINY,
        "--steps",
        "1000",
        "--eval-every",
        "5",
        "--checkpoint-every",
        "5",
        "--out",
        str(tmp_path),
    ]
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        f"interrupted at step 7: the checkpoint and history of that step are in {tmp_path}"
    ]
    assert _consistent(tmp_path) == 7


def test_ctrl_c_before_the_first_step_leaves_the_folder_as_it_was(tmp_path, monkeypatch, capsys):
    assert main(["train", *TINY, "--steps", "6", "--eval-every", "3", "--out", str(tmp_path)]) == 0
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    from georesolver_core.train import cli

    real = cli.build_trainer

    def build_then_ctrl_c(*args, **kwargs):  # Ctrl-C while the task and the model are being built
        trainer = real(*args, **kwargs)
        signal.raise_signal(signal.SIGINT)
        return trainer

    monkeypatch.setattr(cli, "build_trainer", build_then_ctrl_c)
    capsys.readouterr()
    assert main(["train", *TINY, "--steps", "50", "--seed", "3", "--out", str(tmp_path)]) == 130
    assert "interrupted before the first step: nothing written" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_train_bench_stops_at_once_on_ctrl_c(monkeypatch, capsys):
    from georesolver_core.train import bench

    real, went_on = bench.step_rates, []

    def timed_then_ctrl_c(*args, **kwargs):
        signal.raise_signal(signal.SIGINT)
        time.sleep(2)  # the benchmark would go on for minutes: Ctrl-C must end it here
        went_on.append(True)
        return real(*args, **kwargs)

    monkeypatch.setattr(bench, "step_rates", timed_then_ctrl_c)
    assert main(["train", *TINY, "--bench"]) == 130
    assert not went_on
    err = capsys.readouterr().err
    assert err.startswith("interrupted") and len(err.strip().splitlines()) == 1, err


def test_a_fresh_run_leaves_no_earlier_baseline_beside_its_checkpoint(tmp_path):
    run = ["train", *TINY, "--eval-every", "3", "--out", str(tmp_path)]
    assert main([*run, "--steps", "3", "--baseline"]) == 0
    assert (tmp_path / "baseline_checkpoint.pt").exists()
    # continuing this folder's own run in place keeps its baseline (the same run, at an earlier step)
    assert main([*run, "--resume", str(tmp_path / "checkpoint.pt"), "--steps", "6"]) == 0
    assert {"baseline_checkpoint.pt", "baseline_history.csv", "baseline_history.json"} <= {
        p.name for p in tmp_path.iterdir()
    }
    assert main([*run, "--steps", "3", "--seed", "4"]) == 0  # a new run: the old baseline goes
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint.pt", "history.csv", "history.json"]
    assert _consistent(tmp_path) == 3


@pytest.mark.skipif(not os.path.isdir("/sys/kernel"), reason="needs a Linux sysfs (a folder that takes no files)")
def test_train_out_where_no_file_can_be_created_fails_before_training(capsys):
    assert main(["train", *TINY, "--steps", "1000", "--out", "/sys/kernel"]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == ["error: out must be a folder this process can write (got '/sys/kernel')"]
