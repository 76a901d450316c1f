"""A training run followed across the process boundary (``labs.training_runs.TrainingJob`` over
``jobs.train_job``): every step's row reaches the page, evaluations replace their rows, Stop keeps the
run so far in its checkpoint, a checkpoint continues in a new job, and the model is read back from it."""

from __future__ import annotations

import time

import pytest

from georesolver_core.jobs import JobRunner, JobSpec, train_config
from georesolver_core.labs.training import TrainingLabConfig
from georesolver_core.labs.training_runs import FINISHED, STOPPED, TrainingJob
from georesolver_core.train import load_checkpoint

pytestmark = pytest.mark.slow  # spawned workers: about 3 s each to start

SMALL = dict(task="recall", size=4, kernel="ida", width=16, layers=1, eps=0.1, lr=2e-3, device="cpu")


@pytest.fixture
def runner(tmp_path):
    r = JobRunner(max_workers=1, runs_dir=tmp_path)
    yield r
    r.shutdown()


def _follow(job: TrainingJob, until, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        job.sync()
        if until(job):
            return
        assert time.monotonic() < deadline, (job.status, job.step, job.message)
        time.sleep(0.05)


def test_every_row_arrives_and_the_model_is_read_back(runner):
    spec, config = TrainingLabConfig(steps=60, **SMALL).build()
    job = TrainingJob(1, spec, config, runner.submit(JobSpec("train", train_config(spec, config)), owner="a"))
    _follow(job, lambda j: j.status == FINISHED)
    assert [r["step"] for r in job.history] == list(range(1, 61))
    evaluated = [r["step"] for r in job.history if r["test_loss"] is not None]
    assert evaluated == [25, 50, 60]  # EVAL_EVERY and the last step, measured in the worker
    assert job.metrics().accuracy == job.history[-1]["test_accuracy"] and job.metrics().steps_per_s > 0
    trainer = job.inspected()
    assert trainer.step == 60 and job.inspected() is trainer  # rebuilt once per checkpoint
    assert job.checkpoint_bytes()[:2] == b"PK"  # torch's zip format


def test_stop_keeps_the_run_so_far_and_a_new_job_continues_it(runner):
    spec, config = TrainingLabConfig(steps=5000, **SMALL).build()
    job = TrainingJob(1, spec, config, runner.submit(JobSpec("train", train_config(spec, config)), owner="a"))
    _follow(job, lambda j: j.step >= 30)
    job.handle.stop()
    _follow(job, lambda j: j.status == STOPPED)
    saved = load_checkpoint(job.checkpoint_path)
    assert saved["step"] >= job.step >= 30  # the checkpoint holds every step reported, none lost at Stop
    path = job.checkpoint_path.with_name("continue.pt")
    path.write_bytes(job.checkpoint_path.read_bytes())
    # the checkpoint continues with its own settings, where it stopped
    follow = TrainingJob(2, spec, config, runner.submit(JobSpec("train", {"resume": str(path)}), owner="a"))
    _follow(follow, lambda j: j.step >= saved["step"] + 5)
    follow.handle.stop()
    _follow(follow, lambda j: not j.active)
    assert follow.status == STOPPED
    steps = [r["step"] for r in follow.history]
    assert steps == list(range(1, len(steps) + 1))  # the earlier history came with the checkpoint, then new steps


def test_a_live_figure_draws_a_few_hundred_rows_of_a_long_run():
    job = TrainingJob(1, None, None, None)
    job.rows = {s: {"step": s, "loss": 1.0, "test_loss": 0.5 if s % 25 == 0 else None} for s in range(1, 5001)}
    shown = job.figure_history(400)
    steps = [r["step"] for r in shown]
    assert len(shown) <= 400 + 5000 // 25 and steps == sorted(steps) and steps[-1] == 5000
    assert all(s in steps for s in range(25, 5001, 25))  # every evaluation is kept
    job.rows = {1: {"step": 1, "loss": 1.0}}
    assert job.figure_history(400) == [{"step": 1, "loss": 1.0}]
