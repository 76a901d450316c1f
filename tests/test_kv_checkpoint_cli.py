"""The README's KV command, `bench --compression --kv-checkpoint runs/checkpoint.pt`, on a tiny checkpoint.

It once swept nothing and died with ``KeyError: 'attention'`` on every checkpoint the trainer wrote (it read
the flat run description the trainer had replaced by nested configs). Here it runs as the README prints it,
from the folder the README's text-training command writes ``runs/checkpoint.pt`` into, on today's layout and
on the older flat one; a file that is no text-model checkpoint is one ``error:`` line and exit status 2.
"""

from __future__ import annotations

import json
import shlex

import pytest
import torch

from georesolver_core.__main__ import main
from georesolver_core.attention import AttentionConfig
from georesolver_core.compression.kv_eval import BITS, METHODS, checkpoint_report
from georesolver_core.model import ModelConfig
from georesolver_core.train import RunSpec, TrainConfig, build_trainer
from tests.test_readme_commands import readme_commands

QUICK = ["--keys", "2000", "--kv-windows", "2"]  # argparse keeps the last value: the README's path, a short sweep


def _readme_kv_argv() -> list[str]:
    (command,) = [c for c in readme_commands() if "--kv-checkpoint" in c]
    words = shlex.split(command)
    assert words[:3] == ["python", "-m", "georesolver_core"], command
    return [*words[3:], *QUICK]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A folder holding ``runs/checkpoint.pt``: a 1-block IDA text model, 3 steps on the shipped gloss subset."""
    folder = tmp_path_factory.mktemp("kv")
    model = ModelConfig(n_layers=1, attention=AttentionConfig(d_model=16, n_heads=2, kernel="ida"))
    spec = RunSpec(task="text", size=16, task_args=(("source", "subset"),), model=model)
    trainer = build_trainer(spec, TrainConfig(steps=3, batch_size=8, eval_every=3, device="cpu"))
    trainer.run()
    trainer.save(folder / "runs" / "checkpoint.pt")
    return folder


def _check_report(report: dict, *, windows: int = 2) -> None:
    assert report["model"] == {"attention": "ida", "d_model": 16, "n_layers": 1, "n_heads": 2, "eps": 0.1}
    assert report["steps"] == 3 and report["windows"] == windows and report["context"] == 16
    assert report["corpus"] == "subset"
    pairs = [(r["method"], r["bits"]) for r in report["rows"]]
    assert pairs == [("float", 32)] + [(m, b) for m in METHODS[1:] for b in BITS]  # every method at every width
    for r in report["rows"]:
        assert r["bytes_per_key"] > 0 and r["kl"] >= 0
        assert r["loss_increase"] == pytest.approx(r["loss"] - report["float_loss"])
    float_row = report["rows"][0]
    assert float_row["kl"] == 0 and float_row["bytes_per_key"] == 4 * 8  # float32 keys, head size 8
    assert any(r["pareto"] for r in report["rows"])


@pytest.mark.slow
def test_the_readme_kv_command_runs_on_a_checkpoint_the_trainer_writes(runs, monkeypatch, capsys):
    monkeypatch.chdir(runs)
    argv = _readme_kv_argv()
    assert "runs/checkpoint.pt" in argv
    assert main([*argv, "--kv-out", "kv.json"]) == 0, capsys.readouterr().err
    report = json.loads((runs / "kv.json").read_text())
    _check_report(report)
    out = capsys.readouterr().out
    assert out.startswith("ida model, 3 steps, 2 validation windows of 16 characters (subset)")
    for b in (3, 4):
        assert f"best at {b} bits/coordinate:" in out
    assert "+-" not in out  # a negative loss increase is printed with its own sign


def test_an_older_flat_run_description_gives_the_same_report(runs, tmp_path):
    """The flat meta.spec trainers wrote before configs were nested (attention, d_model, ... at the top)."""
    data = torch.load(runs / "runs" / "checkpoint.pt", weights_only=True)
    nested = data["meta"]["spec"]
    att, model = nested["model"]["attention"], nested["model"]
    data["meta"]["spec"] = {
        "task": "text", "attention": att["kernel"], "size": nested["size"], "d_model": att["d_model"],
        "n_layers": model["n_layers"], "n_heads": att["n_heads"], "eps": att["eps"], "c": att["c"],
        "gating": model["gating"], "memory": model["memory"], "task_args": nested["task_args"],
    }  # fmt: skip
    torch.save(data, tmp_path / "flat.pt")
    flat = checkpoint_report(tmp_path / "flat.pt", windows=1, methods=("float", "uniform"), bits=(4,))
    now = checkpoint_report(runs / "runs" / "checkpoint.pt", windows=1, methods=("float", "uniform"), bits=(4,))
    assert flat == now
    assert flat["model"]["attention"] == "ida" and [r["method"] for r in flat["rows"]] == ["float", "uniform"]


def _kv_error(path, capsys, *extra) -> str:
    assert main(["bench", "--compression", "--kv-checkpoint", str(path), *extra]) == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and not captured.out
    (line,) = captured.err.strip().splitlines()
    assert line.startswith("error: ")
    return line


def test_what_is_no_text_model_checkpoint_is_named(tmp_path, capsys):
    (tmp_path / "notes.pt").write_text("not a checkpoint\n")
    torch.save({"weights": torch.zeros(3)}, tmp_path / "state.pt")
    no_spec = torch.load(_tiny(tmp_path, "recall"), weights_only=True)
    no_spec["meta"] = {}
    torch.save(no_spec, tmp_path / "nospec.pt")
    assert "not a readable checkpoint" in _kv_error(tmp_path / "notes.pt", capsys)
    assert "not a training checkpoint" in _kv_error(tmp_path / "state.pt", capsys)
    assert "run description" in _kv_error(tmp_path / "nospec.pt", capsys)
    assert "not found" in _kv_error(tmp_path / "missing.pt", capsys)
    line = _kv_error(tmp_path / "recall.pt", capsys)
    assert "text task" in line and "'recall'" in line


@pytest.mark.parametrize("windows", ["0", "-1"])
def test_a_window_count_below_one_is_refused(runs, capsys, windows):
    """--kv-windows 0 once meant every window and -1 every window but the last, silently."""
    line = _kv_error(runs / "runs" / "checkpoint.pt", capsys, "--kv-windows", windows)
    assert "windows" in line and ">= 1" in line and f"(got {windows})" in line
    with pytest.raises(ValueError, match="windows"):
        checkpoint_report(runs / "runs" / "checkpoint.pt", windows=2.5)


def _tiny(folder, task: str) -> str:
    model = ModelConfig(n_layers=1, attention=AttentionConfig(d_model=16, n_heads=2, kernel="ida"))
    trainer = build_trainer(
        RunSpec(task=task, size=4, model=model), TrainConfig(steps=1, batch_size=4, eval_every=1, device="cpu")
    )
    trainer.run()
    trainer.save(folder / f"{task}.pt")
    return str(folder / f"{task}.pt")
