"""The language-model study (train/lm_study.py): its statistics, the rule that words follow intervals, the
held-out split, and a tiny study run through the job runner twice: once whole, once stopped after its grid
and started again, with the same losses."""

from __future__ import annotations

import json
import math

import pytest
import torch

from georesolver_core.__main__ import main as cli_main
from georesolver_core.tasks.text import TextTask
from georesolver_core.train.lm_study import (
    Run,
    Study,
    StudyConfig,
    StudySize,
    difference_ci95,
    format_report,
    mean_ci95,
    run_study,
    verdict_word,
)
from tests.app_pages import ROOT

TINY = StudySize("tiny", n_layers=1, n_heads=2, d_model=16, context=16, batch_size=8, steps=12)
CONFIG = StudyConfig(sizes=(TINY,), kinds=("softmax", "ida"), lr_grid=(1e-3, 1e-2), seeds=2, workers=2)


def test_mean_and_difference_intervals_are_student_and_welch():
    mean, (lo, hi) = mean_ci95([1.0, 2.0, 3.0])
    assert mean == 2.0 and hi - mean == pytest.approx(4.302653 / math.sqrt(3), rel=1e-6)  # t(0.975, 2) sd / sqrt n
    diff, (lo, hi) = difference_ci95([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    assert diff == 0.0 and lo < 0 < hi
    diff, ci = difference_ci95([1.0, 1.1, 0.9], [2.0, 2.1, 1.9])
    assert diff == pytest.approx(-1.0) and ci[1] < 0


@pytest.mark.parametrize(
    ("ci", "word"), [([-0.2, -0.1], "better"), ([0.1, 0.3], "worse"), ([-0.1, 0.2], "no measurable difference")]
)
def test_words_follow_the_interval(ci, word):
    assert verdict_word(ci) == word


def test_the_heldout_windows_are_not_the_ones_runs_evaluate_on():
    task = TextTask(context=32, source="subset")
    seen, held = task.test_set().y, task.heldout_set(8).y
    starts = set(range(0, seen.shape[0] * 32, 32))
    first_held = seen.shape[0] * 32
    assert first_held not in starts and held.shape == (8, 32)
    assert torch.equal(held[0], task.validation_ids[first_held + 1 : first_held + 33])  # right after test_set's


def _check_schema(report: dict) -> None:
    assert report["schema"] == "georesolver-lm-study/1" and report["seeds"] >= 2
    for size in report["sizes"]:
        assert set(size) >= {"name", "config", "lr_grid", "kinds"}
        assert set(size["config"]) == {"n_layers", "n_heads", "d_model", "context", "batch_size", "steps"}
        assert "softmax" in size["kinds"] and "verdict" not in size["kinds"]["softmax"]
        for kind, k in size["kinds"].items():
            assert [c["lr"] for c in k["lr_curve"]] == size["lr_grid"] and k["best_lr"] in size["lr_grid"]
            assert k["best_lr"] == min(k["lr_curve"], key=lambda c: c["val_nats"])["lr"]  # chosen on validation
            assert len(k["seeds"]) == report["seeds"]
            lo, hi = k["test_nats_ci95"]
            assert lo <= k["test_nats_mean"] <= hi
            assert set(k["equal_time"]) >= {"seconds", "steps", "test_nats_mean", "test_nats_ci95"}
            if kind != "softmax":  # words follow intervals (equal time: unless a seed diverged there)
                for verdict in (k["verdict"], k["equal_time"].get("verdict", k["verdict"])):
                    assert verdict["word"] == verdict_word(verdict["ci95"])


def test_the_shipped_report_has_the_schema_and_its_words_follow_its_intervals():
    report = json.loads((ROOT / "assets" / "lm_study.json").read_text())
    _check_schema(report)
    assert [s["name"] for s in report["sizes"]] == ["default", "baby"]
    assert set(report["sizes"][0]["kinds"]) == {"softmax", "ida", "hida", "sida"}


@pytest.mark.slow
def test_a_restarted_study_equals_an_uninterrupted_one(tmp_path):
    whole = run_study(CONFIG, tmp_path / "whole", progress=lambda line: None)
    lines: list[str] = []
    partial = Study(CONFIG, tmp_path / "again", progress=lines.append)
    partial.run_all(
        [Run(TINY, k, lr, 0, TINY.steps) for k in CONFIG.kinds for lr in CONFIG.lr_grid]
    )  # then "killed"
    assert len(lines) == 4
    lines.clear()
    again = run_study(CONFIG, tmp_path / "again", progress=lines.append)
    assert not any("seed0-steps12:" in line and "lr0.001" in line for line in lines)  # the grid was not run again

    def losses(report):
        kinds = report["sizes"][0]["kinds"]
        return {
            k: ([p["val_nats"] for p in v["lr_curve"]], [s["test_nats"] for s in v["seeds"]])
            for k, v in kinds.items()
        }

    assert losses(whole) == losses(again)  # seeded, one thread per run: the same numbers
    _check_schema(whole)
    size = whole["sizes"][0]
    assert size["config"]["steps"] == 12 and size["lr_grid"] == [1e-3, 1e-2]
    for kind, k in size["kinds"].items():
        assert k["best_lr"] in size["lr_grid"] and len(k["seeds"]) == 2
        lo, hi = k["test_nats_ci95"]
        assert lo <= k["test_nats_mean"] <= hi and k["test_bits_per_char"] == pytest.approx(
            k["test_nats_mean"] / math.log(2)
        )
        if kind != "softmax":
            assert k["verdict"]["word"] == verdict_word(k["verdict"]["ci95"])
            assert k["equal_time"]["seconds"] == pytest.approx(size["kinds"]["softmax"]["seconds_mean"])
    assert "equal time" in format_report(whole) and "ida" in format_report(whole)

    # The KV study on the same folder: the tuned models trained again reproduce the study's held-out nats
    from georesolver_core.train.lm_study_kv import FAMILIES, format_kv, kv_study

    kv = kv_study(whole, tmp_path / "whole", workers=2)
    assert [(m["size"], m["kind"]) for m in kv["models"]] == [("tiny", "softmax"), ("tiny", "ida")]
    for m in kv["models"]:
        assert m["reproduced_test_nats"] == pytest.approx(m["study_test_nats"], abs=1e-6)
        assert m["split"] == "heldout" and {"hcc", "kivi-channel", "quanto"} <= {r["method"] for r in m["rows"]}
        assert all("window_loss" not in r for r in m["rows"]) and m["winners"]
        for w in m["winners"]:
            assert w["winner"] in FAMILIES and (w["word"] == "only one fits") == ("ci95" not in w)
    assert kv["model"]["attention"] == "ida" and kv["rows"] == kv["models"][1]["rows"]  # the page's layout
    assert "B/key" in format_kv(kv)


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["--kinds", "ida", "hida"], "kinds must hold 'softmax'"),
        (["--kinds", "softmax", "nope"], "kinds must be attention kinds"),
        (["--seeds", "1"], "seeds must be"),
        (["--steps", "3"], "steps must be"),
        (["--lr-grid", "2.0"], "lr_grid must hold"),
    ],
)
def test_bad_arguments_are_one_line_errors(argv, match, capsys, tmp_path):
    assert cli_main(["lm-study", "--quick", "--folder", str(tmp_path), *argv]) == 2
    assert match in capsys.readouterr().err
