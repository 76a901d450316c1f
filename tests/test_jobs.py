"""The job runner: work in worker processes, progress back, pause / step / resume / stop across the process
boundary, a killed worker reported while the next job runs, owners kept apart, no child left behind."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from georesolver_core.jobs import (
    DONE,
    FAILED,
    QUEUED,
    RUNNING,
    STOPPED,
    JobRunner,
    JobSpec,
    ahead_text,
    backend_name,
    make_backend,
    steps_config,
    train_config,
)
from georesolver_core.jobs.codec import decode_value, encode_value

COUNT = "tests.test_jobs:counting_job"
ROOT = Path(__file__).resolve().parent.parent
LONG = {"n": 100_000, "sleep": 0.01}


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
        time.sleep(0.01)


def _count(handle) -> int:
    return handle.progress().partial if handle.progress() else 0


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:  # a zombie still answers kill(0): it has exited
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.fixture
def runner(tmp_path):
    r = JobRunner(backend="local", max_workers=1, runs_dir=tmp_path / "runs")
    yield r
    r.shutdown()


def test_a_bad_spec_or_backend_is_refused_and_a_spec_is_a_frozen_copy(tmp_path):
    with pytest.raises(ValueError, match="kind must be one of"):
        JobSpec("no-such-kind")
    with pytest.raises(ValueError, match="cannot be imported"):
        JobSpec("tests.test_jobs:missing")
    with pytest.raises(ValueError, match="plain JSON"):
        JobSpec(COUNT, {"n": object()})
    with pytest.raises(ValueError, match="backend must be 'local', 'ray'"):
        make_backend("slurm")
    with pytest.raises(ValueError, match="max_workers must be"):
        JobRunner(backend=object(), max_workers=0, runs_dir=tmp_path)
    config = {"n": [1, 2]}
    spec = JobSpec(COUNT, config)
    config["n"].append(3)  # the caller's dict changes after submit: the job's does not
    assert spec.config == {"n": [1, 2]}
    with pytest.raises(AttributeError):
        spec.kind = "train"
    assert [ahead_text(n) for n in (0, 1, 2)] == ["next to start", "1 run ahead of yours", "2 runs ahead of yours"]


@pytest.mark.slow
def test_progress_arrives_in_order_and_the_run_folder_outlives_the_runner(runner, tmp_path):
    h = runner.submit(JobSpec(COUNT, {"n": 5}), owner="a")
    _wait(lambda: h.state == DONE, what="the job to finish")
    assert [e.partial for e in h.events] == [1, 2, 3, 4, 5]
    assert [e.fraction for e in h.events] == [0.2, 0.4, 0.6, 0.8, 1.0]
    assert h.result() == {"count": 5}
    _wait(lambda: h.exitcode is not None, 5, "the worker to exit")
    assert h.exitcode == 0
    runner.shutdown()
    fresh = JobRunner(backend="local", max_workers=1, runs_dir=tmp_path / "runs")  # a restarted server
    try:
        runs = fresh.finished_runs()
        assert [(r["job_id"], r["state"], r["result"]) for r in runs] == [(h.job_id, "done", {"count": 5})]
        assert json.loads((h.run_dir / "spec.json").read_text()) == {
            "kind": COUNT,
            "config": {"n": 5},
            "owner": "a",
        }
        assert not list(h.run_dir.glob(".*.tmp"))  # atomic writes leave no temp file behind
    finally:
        fresh.shutdown()


@pytest.mark.slow
def test_pause_step_resume_and_stop_keep_their_meaning_across_the_process_boundary(runner):
    h = runner.submit(JobSpec(COUNT, LONG), owner="a")
    _wait(lambda: _count(h) >= 3, what="the first steps")
    h.pause()
    assert h.state == "paused" and h.state_for(h.n_events) == "running"  # asked; the worker has not said it waits
    _wait(lambda: h.state_for(h.n_events) == "paused", 10, "the worker to say it waits")
    assert h.state_for(h.n_events - 1) == "running"  # a page that has not read every event yet
    paused_at = _count(h)  # every step's event arrived before that word
    time.sleep(0.5)
    assert _count(h) == paused_at and h.state == "paused"  # no step while paused
    h.step()
    _wait(lambda: _count(h) == paused_at + 1, 10, "one step")
    time.sleep(0.3)
    assert _count(h) == paused_at + 1  # exactly one
    h.resume()
    _wait(lambda: _count(h) >= paused_at + 5, 10, "the run to go on")
    pid = h.pid
    t0 = time.monotonic()
    h.stop()
    _wait(lambda: _gone(pid), 5, "the worker to end")
    assert time.monotonic() - t0 < 1.0  # the worker's core is free within a second
    _wait(lambda: h.state == STOPPED, 2, "the stop to be reported")
    assert json.loads((h.run_dir / "result.json").read_text())["state"] == "stopped"


@pytest.mark.slow
def test_a_killed_worker_is_reported_failed_and_the_next_job_runs(runner):
    h = runner.submit(JobSpec(COUNT, LONG), owner="a")
    nxt = runner.submit(JobSpec(COUNT, {"n": 3}), owner="b")
    assert nxt.state == QUEUED
    _wait(lambda: _count(h) >= 1, what="the first job to start")
    os.kill(h.pid, signal.SIGKILL)  # the system's OOM killer, say
    _wait(lambda: h.state == FAILED, 10, "the failure to be noticed")
    assert h.exitcode == -signal.SIGKILL and "exit code -9" in h.error
    assert json.loads((h.run_dir / "result.json").read_text())["state"] == "failed"
    _wait(lambda: nxt.state == DONE, 60, "the next job")
    assert nxt.result() == {"count": 3}


@pytest.mark.slow
def test_owners_never_see_each_others_jobs_queue_places_and_an_absent_owner_is_cancelled(tmp_path):
    r = JobRunner(backend="local", max_workers=1, runs_dir=tmp_path / "runs", owner_timeout_s=0.5)
    try:
        a = r.submit(JobSpec(COUNT, LONG), owner="a")
        r.touch("b")  # b's tab is open ... and then closed: it never touches again
        b = r.submit(JobSpec(COUNT, {"n": 2}), owner="b")
        c = r.submit(JobSpec(COUNT, {"n": 2}), owner="c")
        assert (a.state, b.state, c.state) == (RUNNING, QUEUED, QUEUED)
        assert (b.queue_position(), c.queue_position()) == (0, 1)
        with pytest.raises(ValueError, match="at most 1 job"):
            r.submit(JobSpec(COUNT, {"n": 2}), owner="a")
        assert r.jobs_of("a") == [a] and r.jobs_of("b") == [b] and r.jobs_of("c") == [c]
        _wait(lambda: b.state == STOPPED, 5, "the absent owner's job to be cancelled")
        assert c.queue_position() == 0 and a.state == RUNNING  # a never touched: not timed out
        assert r.cancel_owner("a") == 1  # the page's call for a closed tab: its job stops, the queue moves on
        _wait(lambda: a.state == STOPPED and c.state == DONE, 60, "c to run after a stopped")
        assert r.jobs_of("a") == [a] and [run["job_id"] for run in r.finished_runs()] == sorted(
            (h.job_id for h in (a, b, c)), reverse=True
        )
    finally:
        r.shutdown()


@pytest.mark.slow
def test_no_child_process_outlives_the_runner(tmp_path):
    r = JobRunner(backend="local", max_workers=2, runs_dir=tmp_path / "runs")
    handles = [r.submit(JobSpec(COUNT, LONG), owner=o) for o in ("a", "b")]
    _wait(lambda: all(h.state == RUNNING and _count(h) >= 1 for h in handles), what="both workers")
    pids = [h.pid for h in handles]
    r.shutdown()
    assert all(_gone(pid) for pid in pids)
    assert all(h.state == STOPPED for h in handles)
    assert not [p for p in mp.active_children() if p.pid in pids]


SERVER = """
import sys, time
from georesolver_core.jobs import JobSpec, default_runner
h = default_runner().submit(JobSpec("tests.test_jobs:counting_job", {"n": 100000, "sleep": 0.01}), owner="s")
while h.progress() is None:
    time.sleep(0.02)
print(h.pid, flush=True)
time.sleep(60)
"""


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_no_worker_outlives_a_server_stopped_by_a_signal(tmp_path, sig):
    """SIGTERM: the server stops its workers; SIGKILL (nothing runs in the server): each worker notices
    its parent is gone at its next step and stops itself."""
    env = {**os.environ, "GR_RUNS_DIR": str(tmp_path / "runs"), "GR_JOBS": "local"}
    server = subprocess.Popen([sys.executable, "-c", SERVER], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    try:
        pid = int(server.stdout.readline())
        server.send_signal(sig)
        # SIGTERM runs the runner's handler (shutdown, then exit 143), not only the default death by signal
        assert server.wait(10) == (143 if sig == signal.SIGTERM else -signal.SIGKILL)
        _wait(lambda: _gone(pid), 3, "the worker to end")
    finally:
        server.kill()
        server.wait()


@pytest.mark.slow
def test_a_training_run_as_a_job_reports_each_evaluation_and_checkpoints_in_its_run_folder(runner):
    from georesolver_core.attention import AttentionConfig
    from georesolver_core.model import ModelConfig
    from georesolver_core.train import RunSpec, TrainConfig

    spec = RunSpec(task="recall", size=4, model=ModelConfig(n_layers=1, attention=AttentionConfig(d_model=16)))
    h = runner.submit(
        JobSpec("train", train_config(spec, TrainConfig(steps=6, batch_size=8, eval_every=3))), owner="a"
    )
    _wait(lambda: h.state in (DONE, FAILED), 120, "the run")
    assert h.state == DONE, h.error
    assert h.result()["final"]["steps"] == 6
    evals = [e for e in h.events if e.partial["eval"]]  # and more every REPORT_S on a slow machine
    assert [e.partial["step"] for e in evals] == [3, 6]  # one progress event per evaluation
    assert [e.fraction for e in evals] == [0.5, 1.0]
    assert [r["step"] for e in h.events for r in e.partial["rows"]][-1] == 6  # every step's row reached the page
    assert (h.run_dir / "checkpoint.pt").is_file() and (h.run_dir / "history.csv").is_file()


@dataclass(frozen=True)
class _Shape:
    sizes: tuple = (1, 2)
    name: str = "x"


def counting_steps(n: int, shape: _Shape, sleep: float = 0.0):
    """A module-level generator for a "steps" job: yields (fraction, text, partial) n times; returns a dict."""
    assert isinstance(shape, _Shape) and isinstance(shape.sizes, tuple)  # rebuilt in the worker as it was
    for i in range(1, n + 1):
        time.sleep(sleep)
        yield i / n, f"unit {i}", {"done": i}
    return {"total": n, "shape": shape}


def test_arguments_cross_the_json_boundary_as_they_were():
    shape = _Shape((3, 4), "y")
    encoded = encode_value([shape, (1, [2, (3,)]), {"k": shape}])
    assert json.loads(json.dumps(encoded)) == encoded  # plain JSON
    assert decode_value(json.loads(json.dumps(encoded))) == [shape, (1, [2, (3,)]), {"k": shape}]
    config = steps_config(counting_steps, 3, _Shape(), budget_s=5.0, sleep=0.0)
    assert config["function"].endswith("test_jobs:counting_steps") and config["budget_s"] == 5.0
    with pytest.raises(ValueError, match="module level"):
        steps_config(lambda: iter(()))
    with pytest.raises(ValueError, match="backend must be"):
        backend_name("ray://")


@pytest.mark.slow
def test_a_generator_runs_in_a_worker_and_its_result_and_budget_reach_the_page(runner):
    h = runner.submit(JobSpec("steps", steps_config(counting_steps, 5, _Shape())), owner="a")
    _wait(lambda: h.state == DONE, 60, "the generator")
    last = h.events[-1].partial
    assert last["result"] == {"total": 5, "shape": _Shape()} and last["partial"] == {"done": 5}
    assert h.result()["ended"] == "finished"  # result.json: how it ended (the objects went as progress)
    slow = runner.submit(
        JobSpec("steps", steps_config(counting_steps, 1000, _Shape(), budget_s=0.3, sleep=0.05)), owner="a"
    )
    _wait(lambda: slow.state == DONE, 60, "the budget")
    assert slow.events[-1].partial["budget"] and 3 <= slow.events[-1].partial["partial"]["done"] < 1000
    stopped = runner.submit(JobSpec("steps", steps_config(counting_steps, 1000, _Shape(), sleep=0.05)), owner="a")
    _wait(lambda: stopped.progress() is not None, 60, "the first report")
    stopped.stop()
    # Start after Stop: the stopping job does not count against the owner's one job
    after = runner.submit(JobSpec("steps", steps_config(counting_steps, 2, _Shape())), owner="a")
    _wait(lambda: stopped.state == STOPPED and after.state == DONE, 60, "the stop, then the next job")
    kept = stopped.events[-1].partial
    assert "result" not in kept and kept["partial"]["done"] >= 1  # what it computed reached the page at Stop


@pytest.mark.slow
def test_a_connected_owner_keeps_its_job_without_touching(tmp_path):
    connected = {"a"}
    r = JobRunner(backend="local", max_workers=2, runs_dir=tmp_path / "runs", owner_timeout_s=0.3,
                  present=lambda owner: owner in connected)  # fmt: skip
    try:
        a = r.submit(JobSpec(COUNT, LONG), owner="a")
        b = r.submit(JobSpec(COUNT, LONG), owner="b")
        r.touch("a")
        r.touch("b")
        _wait(lambda: b.state == STOPPED, 10, "the disconnected owner's job to be cancelled")
        time.sleep(1.0)
        assert a.state == RUNNING  # an idle open tab keeps its run
        connected.clear()  # the tab is closed
        _wait(lambda: a.state == STOPPED, 10, "the closed tab's job to be cancelled")
    finally:
        r.shutdown()


@pytest.mark.slow
def test_a_spare_worker_takes_the_next_job_and_ends_with_the_runner(tmp_path):
    from georesolver_core.jobs.local import LocalBackend

    backend = LocalBackend(spare=True)
    r = JobRunner(backend=backend, max_workers=1, runs_dir=tmp_path / "runs")
    try:
        backend.warm()
        spare = backend.spare[0]
        h = r.submit(JobSpec(COUNT, {"n": 3}), owner="a")
        assert h.pid == spare.pid  # the warmed process runs the job
        _wait(lambda: h.state == DONE, 60, "the job in the spare")
        assert h.result() == {"count": 3} and backend.spare is not None and backend.spare[0].pid != spare.pid
        following = backend.spare[0]
    finally:
        r.shutdown()
    following.join(5)
    assert not following.is_alive()  # the waiting spare ends with the runner


SETUP_MARK = "GR_TEST_SET_UP"


def mark_setup() -> None:
    """A worker set-up call: leaves a mark the job below reads (in the worker's own environment)."""
    os.environ[SETUP_MARK] = "yes"


def setup_seen_job(config: dict, ctx) -> dict:
    """Reports whether this worker ran ``mark_setup`` before its job."""
    return {"set_up": os.environ.get(SETUP_MARK)}


def test_a_worker_runs_the_named_setup_before_its_job_and_a_bad_name_fails_the_job(tmp_path, monkeypatch):
    from georesolver_core.jobs.worker import SETUP_ENV

    monkeypatch.delenv(SETUP_MARK, raising=False)
    for setup, state, result in (
        ("tests.test_jobs:mark_setup", DONE, {"set_up": "yes"}),  # e.g. a geometry the server registered
        ("tests.test_jobs:no_such_function", FAILED, None),
    ):
        monkeypatch.setenv(SETUP_ENV, setup)
        r = JobRunner(backend="local", max_workers=1, runs_dir=tmp_path / state)  # its workers get this env
        try:
            h = r.submit(JobSpec("tests.test_jobs:setup_seen_job", {}), owner="a")
            _wait(lambda h=h: h.state in (DONE, FAILED), what="the job to end")
            assert h.state == state
            if state == DONE:
                assert h.result() == result
            else:
                assert SETUP_ENV in h.error and "no_such_function" in h.error
        finally:
            r.shutdown()
    assert SETUP_MARK not in os.environ  # the set-up ran in the worker, not here
