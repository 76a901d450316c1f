"""The Training page's lab: a run built from the page's settings, read back (metrics, samples, attention),
and Theorem 7.1's verdict on its gates: the measured gates hold, a
planted violation fails."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from georesolver_core.jobs import DONE
from georesolver_core.labs.training import (
    MAX_TREE_DEPTH,
    TrainingLabConfig,
    gate_check,
    history_metrics,
    judge_gate_bound,
    model_gates,
    record_gates,
    run_metrics,
    sample_text,
    sentence_inputs,
    sentence_map,
)
from georesolver_core.labs.training_runs import DIVERGED, FINISHED, TrainingJob
from georesolver_core.model.gate import gate_bound
from georesolver_core.train import StopReason, build_trainer
from georesolver_core.verdicts import FAILS, HOLDS

SMALL = dict(kernel="ida", width=16, layers=1, eps=0.1, lr=2e-3, steps=4, device="cpu")


@pytest.fixture(scope="module")
def trainer():
    spec, config = TrainingLabConfig(task="recall", size=4, **SMALL).build()
    tr = build_trainer(spec, config)
    tr.run()
    return tr


@pytest.fixture(scope="module")
def text_trainer():
    spec, config = TrainingLabConfig(task="text", size=8, **SMALL).build()
    return build_trainer(spec, config)


def test_task_size_follows_the_task():
    assert TrainingLabConfig(task="digits", size=5, **SMALL).task_size is None  # a fixed-size task
    assert TrainingLabConfig(task="noisy", size=3, **SMALL).task_size == 24  # training sequences / 8
    assert TrainingLabConfig(task="hierarchy", size=40, **SMALL).task_size == MAX_TREE_DEPTH
    assert TrainingLabConfig(task="copy", size=7, **SMALL).task_size == 7


def test_build_carries_every_setting_and_refuses_a_bad_one():
    cfg = TrainingLabConfig(task="copy", size=3, memory=True, gating=False, seed=5, **(SMALL | {"kernel": "l-hida"}),
                            sizes=(("n_anchors", 3),))  # fmt: skip
    spec, config = cfg.build()
    assert (spec.task, spec.size, spec.kernel, spec.model.memory, spec.model.gating) == (
        "copy",
        3,
        "l-hida",
        "gsr",
        False,
    )
    assert spec.model.attention.n_anchors == 3 and (config.seed, config.steps, config.batch_size) == (5, 4, 64)
    lhida = SMALL | {"kernel": "l-hida"}
    unset = TrainingLabConfig(task="copy", size=3, sizes=(("n_anchors", None),), **lhida).build()[0]
    assert unset.model.attention == TrainingLabConfig(task="copy", size=3, **lhida).build()[0].model.attention
    with pytest.raises(ValueError, match="task"):
        TrainingLabConfig(task="chess", size=3, **SMALL)
    with pytest.raises(ValueError, match="size"):
        TrainingLabConfig(task="copy", size=0, **SMALL)
    with pytest.raises(ValueError):
        TrainingLabConfig(task="copy", size=3, **(SMALL | {"width": 17})).build()  # heads must divide d_model


def test_run_metrics_read_the_final_numbers(trainer, text_trainer):
    m = run_metrics(trainer, "recall")
    final = trainer.final()
    assert not m.text and m.accuracy == final.accuracy and m.train_loss == final.train_loss
    assert m.val_bits is None and m.steps_per_s == pytest.approx(trainer.step / trainer.seconds)
    text_trainer.run(steps=1)
    t = run_metrics(text_trainer, "text")
    assert t.text and t.train_bits == pytest.approx(
        text_trainer.final().train_loss / torch.log(torch.tensor(2.0)).item()
    )
    # a worker's rows, read the same way: the last evaluation, the last step's training loss
    rows = [{"step": 1, "loss": 2.0, "test_loss": 1.5, "test_accuracy": 0.25}, {"step": 2, "loss": 1.0, "test_loss": None,
            "test_accuracy": None}]  # fmt: skip
    h = history_metrics(rows, "recall", 2, 0.5)
    assert (h.accuracy, h.train_loss, h.steps_per_s) == (0.25, 1.0, 4.0)
    assert history_metrics([], "text", 0, 0.0).val_bits is None


def test_sample_and_sentence_map_on_text(text_trainer):
    s = sample_text(text_trainer, 12)
    assert s.startswith("a ") and len(s) == 14
    assert sample_text(text_trainer, 12) == s  # seeded by the run
    att = sentence_map(text_trainer.model, "the cat sat on the mat", 0, 0)
    assert att.text == "the cat sat on the mat"[-text_trainer.model.config.max_len :]
    assert att.weights.shape == (len(att.text), len(att.text))
    x = sentence_inputs(text_trainer.model, "the cat sat on the mat")  # the text model's gates read on it
    assert x.shape == (1, len(att.text), text_trainer.model.config.d_in) and torch.equal(
        x.sum(-1), torch.ones(1, len(att.text))
    )
    assert [v.u.shape[:2] for v in record_gates(text_trainer.model, x)] == [(1, len(att.text))]


def test_the_gates_of_a_trained_model_hold_theorem_7_1(trainer):
    gates = model_gates(trainer.model)
    values = record_gates(trainer.model, trainer.task.test_set().x[:4])
    assert len(gates) == len(values) == 1 and not gates[0].record  # recording switched off again
    check = gate_check(gates[0], values[0].u)
    assert check.verdict == HOLDS and check.holds
    assert check.n_tokens == values[0].u[..., 0].numel() and 0.0 <= check.vacuous <= 1.0
    assert check.min_ratio == pytest.approx(float(check.bound.sigma_min.min()))


def test_a_planted_violation_of_theorem_7_1_fails(trainer):
    gate = model_gates(trainer.model)[0]
    gb = gate_bound(gate, record_gates(trainer.model, trainer.task.test_set().x[:2])[0].u)
    planted = dataclasses.replace(gb, sigma_min=gb.sigma_min.clone())
    planted.sigma_min[0] = gb.bound[0] - 0.5  # one token whose worst ratio is below the bound
    check = judge_gate_bound(planted)
    assert check.verdict == FAILS and not check.holds and "violated at 1/" in check.summary
    assert judge_gate_bound(gb).verdict == HOLDS


def test_the_softmax_baseline_has_no_gates():
    spec, config = TrainingLabConfig(task="recall", size=4, **(SMALL | {"kernel": "softmax"})).build()
    tr = build_trainer(spec, config)
    assert model_gates(tr.model) == [] and record_gates(tr.model, tr.task.test_set().x[:2]) == []
    with pytest.raises(ValueError, match="non-empty"):
        record_gates(tr.model, tr.task.test_set().x[:0])


class _Ended:
    """A job handle whose job returned ``final``: what ``TrainingJob`` reads of a finished worker."""

    stopping = False
    state = DONE

    def __init__(self, final: dict):
        self.final = final

    def state_for(self, seen: int) -> str:
        return DONE

    def result(self) -> dict:
        return {"final": self.final}


@pytest.mark.parametrize(
    "reason, status",
    [(None, FINISHED), ("target", FINISHED), ("time limit", FINISHED), ("diverged", DIVERGED)],
)
def test_a_run_says_why_it_stopped_by_its_stop_reason_not_its_message(reason, status):
    job = TrainingJob(1, None, None, _Ended({"stop_reason": reason, "message": "loss reached nan, stopped"}))
    assert job.stop_reason is (None if reason is None else StopReason(reason)) and job.status == status
    assert job.diverged == (status == DIVERGED)
