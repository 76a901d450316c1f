"""The live-trainer controls: Pause, Step and Resume continue the same run; Stop keeps the partial result."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "app"))

import trainer_controls as tc  # noqa: E402

from georesolver_core.extras.orthogonal_tasks import TaskConfig, compare, compare_steps  # noqa: E402
from georesolver_core.routing.compare import CompareConfig, compare_routers, compare_routers_steps  # noqa: E402


def test_pause_step_resume_gives_the_uninterrupted_result():
    cfg = CompareConfig(n_experts=2, steps=12, batch=16)
    job = tc.LiveJob(compare_routers_steps(cfg), cfg, budget_s=60)
    job.advance(events=5)
    job.status = tc.PAUSED
    job.advance(events=1)  # Step: one unit of work, and the job stays paused
    assert job.events == 6 and job.status == tc.PAUSED
    job.status = tc.RUNNING
    job.advance(events=1)
    job.advance(seconds=60)
    assert job.status == tc.FINISHED and job.fraction == 1.0
    whole = compare_routers(cfg)
    for a, b in zip(job.result.runs, whole.runs, strict=True):
        assert a.losses == pytest.approx(b.losses) and a.test_mse == pytest.approx(b.test_mse)


def test_stop_keeps_what_was_trained_and_the_budget_stops_a_run():
    cfg = TaskConfig(task="negation", steps=40, batch=16)
    job = tc.LiveJob(compare_steps(["cayley"], cfg, (0,)), "sig", budget_s=60)
    job.advance(events=3)
    job.status = tc.STOPPED
    assert job.partial[0]["history"]["step"] == [0, 10, 20] and job.result is None
    budget = tc.LiveJob(compare_steps(["cayley", "additive"], cfg, (0, 1)), "sig", budget_s=0.0)
    budget.advance(seconds=10)
    assert budget.status == tc.BUDGET and budget.events == 1
    done = tc.LiveJob(compare_steps(["cayley"], cfg, (0,)), "sig", budget_s=60)
    done.advance(seconds=60)
    ref = compare(["cayley"], cfg, (0,))[0]
    assert done.result[0].history["cosine"] == pytest.approx(ref.history["cosine"])


def test_a_pause_from_another_thread_ends_the_chunk_at_the_next_step_and_nothing_moves_after():
    """The live fragment may advance in its own thread while a button's rerun pauses the job: the chunk
    stops at the next step, and the step count and seconds the rerun shows are final."""
    import threading
    import time

    def slow_steps():
        for i in range(10_000):
            time.sleep(0.002)
            yield i / 10_000, f"step {i}", None

    job = tc.LiveJob(slow_steps(), sig="s", budget_s=60.0)
    worker = threading.Thread(target=job.advance, kwargs={"seconds": 5.0})
    worker.start()
    time.sleep(0.1)
    with job.lock:  # what Pause's callback does
        job.status = tc.PAUSED
    shown = (job.text, job.seconds, job.events)  # what the rerun after the callback draws
    worker.join(2.0)
    assert not worker.is_alive(), "the chunk ended at the pause, not after its 5 s"
    assert (job.text, job.seconds, job.events) == shown
    job.advance(events=1)  # Step, while paused: exactly one step
    assert job.events == shown[2] + 1 and job.status == tc.PAUSED
