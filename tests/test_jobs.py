"""The job runner: work in worker processes, progress back, pause / step / resume / stop across the process
boundary, a killed worker reported while the next job runs, owners kept apart, no child left behind."""

from __future__ import annotations

import json
import os
import signal
import time
from dataclasses import asdict

import pytest

from georesolver_core.jobs import DONE, FAILED, QUEUED, RUNNING, STOPPED, JobRunner, JobSpec

COUNT = "tests.test_jobs:counting_job"


def counting_job(config: dict, ctx) -> dict:
    """A job of ``config["n"]`` steps of ``config["sleep"]`` seconds, each reported as progress."""
    for i in range(1, config["n"] + 1):
        ctx.tick()
        time.sleep(config.get("sleep", 0.0))
        ctx.progress(i / config["n"], f"step {i}", i)
    return {"count": config["n"]}


def _wait(predicate, timeout: float = 60.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def _count(handle) -> int:
    return handle.progress().partial if handle.progress() else 0


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # a zombie still answers kill(0): it has exited
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] == "Z"


@pytest.fixture
def runner(tmp_path):
    r = JobRunner(max_workers=1, runs_dir=tmp_path / "runs")
    yield r
    r.shutdown()


def test_a_bad_spec_is_refused_at_submit():
    with pytest.raises(ValueError, match="kind must be one of"):
        JobSpec("no-such-kind")
    with pytest.raises(ValueError, match="cannot be imported"):
        JobSpec("tests.test_jobs:missing")
    with pytest.raises(ValueError, match="plain JSON"):
        JobSpec(COUNT, {"n": object()})


@pytest.mark.slow
def test_progress_arrives_in_order_and_the_run_folder_outlives_the_runner(runner, tmp_path):
    h = runner.submit(JobSpec(COUNT, {"n": 5}), owner="a")
    _wait(lambda: h.state == DONE, what="the job to finish")
    assert [e.partial for e in h.events] == [1, 2, 3, 4, 5]
    assert [e.fraction for e in h.events] == [0.2, 0.4, 0.6, 0.8, 1.0]
    assert h.result() == {"count": 5}
    runner.shutdown()
    fresh = JobRunner(max_workers=1, runs_dir=tmp_path / "runs")  # a restarted server
    try:
        runs = fresh.finished_runs()
        assert [(r["job_id"], r["state"], r["result"]) for r in runs] == [(h.job_id, "done", {"count": 5})]
        assert json.loads((h.run_dir / "spec.json").read_text())["config"] == {"n": 5}
    finally:
        fresh.shutdown()


@pytest.mark.slow
def test_pause_step_resume_and_stop_keep_their_meaning_across_the_process_boundary(runner):
    h = runner.submit(JobSpec(COUNT, {"n": 100_000, "sleep": 0.01}), owner="a")
    _wait(lambda: _count(h) >= 3, what="the first steps")
    h.pause()
    time.sleep(0.3)  # the step in flight ends
    paused_at = _count(h)
    time.sleep(0.5)
    assert _count(h) == paused_at  # no step while paused
    h.step()
    _wait(lambda: _count(h) == paused_at + 1, 10, "one step")
    time.sleep(0.3)
    assert _count(h) == paused_at + 1  # exactly one
    h.resume()
    _wait(lambda: _count(h) >= paused_at + 5, 10, "the run to go on")
    pid = h.process.pid
    t0 = time.monotonic()
    h.stop()
    _wait(lambda: h.state == STOPPED and _gone(pid), 10, "the worker to end")
    assert time.monotonic() - t0 < 1.5
    assert json.loads((h.run_dir / "result.json").read_text())["state"] == "stopped"


@pytest.mark.slow
def test_a_killed_worker_is_reported_and_the_next_job_runs(runner):
    h = runner.submit(JobSpec(COUNT, {"n": 100_000, "sleep": 0.01}), owner="a")
    nxt = runner.submit(JobSpec(COUNT, {"n": 3}), owner="b")
    assert nxt.state == QUEUED and nxt.queue_position() == 1  # one worker: b waits behind a
    _wait(lambda: _count(h) >= 1, what="the first job to start")
    os.kill(h.process.pid, signal.SIGKILL)  # the system's OOM killer, say
    _wait(lambda: h.state == FAILED, 10, "the failure to be noticed")
    assert "exit code -9" in h.error
    _wait(lambda: nxt.state == DONE, 60, "the next job")
    assert nxt.result() == {"count": 3}


@pytest.mark.slow
def test_owners_never_see_each_others_jobs_and_a_session_runs_one_at_a_time(runner):
    a = runner.submit(JobSpec(COUNT, {"n": 100_000, "sleep": 0.01}), owner="a")
    b = runner.submit(JobSpec(COUNT, {"n": 2}), owner="b")
    with pytest.raises(ValueError, match="at most 1 job"):
        runner.submit(JobSpec(COUNT, {"n": 2}), owner="a")
    assert runner.jobs_of("a") == [a] and runner.jobs_of("b") == [b]
    assert runner.cancel_owner("a") == 1  # the tab closed: its job stops, the queue moves on
    _wait(lambda: a.state == STOPPED and b.state == DONE, 60, "b to run after a stopped")
    assert runner.jobs_of("a") == [a]


@pytest.mark.slow
def test_no_child_process_outlives_the_runner(tmp_path):
    r = JobRunner(max_workers=2, runs_dir=tmp_path / "runs")
    handles = [r.submit(JobSpec(COUNT, {"n": 100_000, "sleep": 0.01}), owner=o) for o in ("a", "b")]
    _wait(lambda: all(h.state == RUNNING and _count(h) >= 1 for h in handles), what="both workers")
    pids = [h.process.pid for h in handles]
    r.shutdown()
    assert all(_gone(pid) for pid in pids)
    assert all(h.state == STOPPED for h in handles)


@pytest.mark.slow
def test_a_training_run_as_a_job_checkpoints_in_its_run_folder(runner):
    from georesolver_core.attention import AttentionConfig
    from georesolver_core.model import ModelConfig
    from georesolver_core.train import RunSpec, TrainConfig

    spec = RunSpec(task="recall", size=4, model=ModelConfig(n_layers=1, attention=AttentionConfig(d_model=16)))
    config = {"spec": json.loads(json.dumps(asdict(spec))),
              "train": asdict(TrainConfig(steps=6, batch_size=8, eval_every=3))}  # fmt: skip
    h = runner.submit(JobSpec("train", config), owner="a")
    _wait(lambda: h.state in (DONE, FAILED), 120, "the run")
    assert h.state == DONE, h.error
    assert h.result()["final"]["steps"] == 6
    assert [e.partial["step"] for e in h.events] == [3, 6]  # one progress event per evaluation
    assert (h.run_dir / "checkpoint.pt").is_file() and (h.run_dir / "history.csv").is_file()
