"""The Ray back-end: the same job code as a Ray task on a local Ray (slow tier; skipped where ray is not
installed: ``pip install -e ".[cluster]"``)."""

from __future__ import annotations

import json
import time

import pytest

from georesolver_core.jobs import DONE, FAILED, STOPPED, JobRunner, JobSpec, train_config
from tests.test_jobs import COUNT, _count, _wait

ray = pytest.importorskip("ray", reason='the cluster back-end needs ray: pip install -e ".[cluster]"')


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    from georesolver_core.jobs.ray_backend import RayBackend

    r = JobRunner(
        # One GPU declared on a CPU machine: Ray places by resources, so a training task must take it (and
        # finds no CUDA device, so it trains on the CPU).
        backend=RayBackend(num_cpus=1, num_gpus=1, include_dashboard=False), max_workers=1,
        runs_dir=tmp_path_factory.mktemp("runs"),
    )  # fmt: skip
    yield r
    r.shutdown()
    assert not ray.is_initialized()  # the back-end started this Ray, so it stops it


@pytest.mark.slow
def test_a_short_training_run_on_ray_reports_progress_and_writes_its_run_folder(runner):
    from georesolver_core.attention import AttentionConfig
    from georesolver_core.model import ModelConfig
    from georesolver_core.train import RunSpec, TrainConfig

    assert runner.backend.name == "ray" and runner.backend.gpus() == 1
    spec = RunSpec(task="recall", size=4, model=ModelConfig(n_layers=1, attention=AttentionConfig(d_model=16)))
    h = runner.submit(
        JobSpec("train", train_config(spec, TrainConfig(steps=30, batch_size=8, eval_every=3))), owner="a"
    )
    _wait(lambda: h.progress() is not None or h.state == FAILED, 120, "the first evaluation")
    h.pause()
    assert ray.available_resources().get("GPU", 0) == 0  # the training task holds the cluster's GPU
    h.resume()
    _wait(lambda: h.state in (DONE, FAILED), 120, "the run")
    assert h.state == DONE, h.error
    assert [e.partial["step"] for e in h.events if e.partial["eval"]] == list(range(3, 31, 3)) and h.result()[
        "final"
    ]["steps"] == 30
    assert json.loads((h.run_dir / "result.json").read_text())["state"] == "done"
    assert (h.run_dir / "checkpoint.pt").is_file()  # one machine: the task's file system is the server's


@pytest.mark.slow
def test_pause_step_and_stop_reach_a_ray_task(runner):
    h = runner.submit(JobSpec(COUNT, {"n": 100_000, "sleep": 0.01}), owner="b")
    _wait(lambda: _count(h) >= 3, 60, "the first steps")
    h.pause()
    time.sleep(0.3)
    paused_at = _count(h)
    time.sleep(0.5)
    assert _count(h) == paused_at
    h.step()
    _wait(lambda: _count(h) == paused_at + 1, 10, "one step")
    time.sleep(0.3)
    assert _count(h) == paused_at + 1
    t0 = time.monotonic()
    h.stop()
    _wait(lambda: h.state == STOPPED, 5, "the stop")
    assert time.monotonic() - t0 < 1.0
