"""The live-trainer controls follow a worker's job through its progress events: the newest partial result,
the result once it ended, Stop's kept partial, the time budget; the buttons become the runner's commands."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "app"))

import trainer_controls as tc  # noqa: E402

from georesolver_core.jobs import Event  # noqa: E402


class FakeHandle:
    """A ``jobs.JobHandle`` as ``WorkerJob`` reads it: progress events, a state, the commands it was given."""

    def __init__(self):
        self.sent: list[Event] = []
        self.state, self.stopping, self.error = "running", False, None
        self.commands: list[str] = []

    def report(self, fraction: float, partial: dict) -> None:
        self.sent.append(Event("j", "progress", fraction, f"{fraction:.0%}", partial))

    def events_since(self, seen: int) -> tuple[list[Event], int]:
        return self.sent[seen:], len(self.sent)

    def state_for(self, seen: int) -> str:
        return self.state

    def queue_position(self) -> int:
        return 2

    def pause(self) -> None:
        self.commands.append("pause")

    def resume(self) -> None:
        self.commands.append("resume")

    def step(self) -> None:
        self.commands.append("step")

    def stop(self) -> None:
        self.commands.append("stop")


def test_poll_keeps_the_newest_partial_and_the_result_and_each_event_is_read_once():
    handle = FakeHandle()
    job = tc.WorkerJob(handle, sig="s", budget_s=60.0)
    assert job.partial is None and job.status == tc.RUNNING
    handle.report(0.25, {"partial": 1, "seconds": 0.5})
    handle.report(0.5, {"partial": 2, "seconds": 1.0})
    job.poll()
    assert (job.partial, job.seconds, job.fraction, job.text, job.events) == (2, 1.0, 0.5, "50%", 2)
    job.poll()  # nothing new: nothing changes
    assert job.events == 2 and job.result is None
    handle.report(1.0, {"partial": 3, "seconds": 1.5, "result": "done"})
    handle.state = "done"
    job.poll()
    assert (job.partial, job.result, job.status) == (3, "done", tc.FINISHED)


def test_stop_keeps_the_partial_and_the_budget_is_its_own_ending():
    handle = FakeHandle()
    job = tc.WorkerJob(handle, sig="s", budget_s=60.0)
    handle.report(0.1, {"partial": "first epochs", "seconds": 0.2})
    job.poll()
    handle.stopping = True  # asked to stop; the worker sends what it computed as it ends
    assert job.status == tc.STOPPED
    handle.report(0.1, {"partial": "kept", "seconds": 0.3})
    handle.state = "stopped"
    job.poll()
    assert job.partial == "kept" and job.result is None and job.status == tc.STOPPED
    budget = FakeHandle()
    ended = tc.WorkerJob(budget, sig="s", budget_s=0.3)
    budget.report(0.4, {"partial": "so far", "seconds": 0.31, "budget": True})
    budget.state = "done"
    ended.poll()
    assert ended.status == tc.BUDGET and ended.partial == "so far"


def test_the_buttons_become_the_runners_commands_and_the_queue_is_shown():
    handle = FakeHandle()
    job = tc.WorkerJob(handle, sig="s", budget_s=60.0)
    job.set_status(tc.PAUSED)
    job.step()
    job.set_status(tc.RUNNING)
    job.set_status(tc.STOPPED)
    job.forget()
    assert handle.commands == ["pause", "step", "resume", "stop", "stop"]
    for state, shown in [("queued", tc.QUEUED), ("paused", tc.PAUSED), ("failed", tc.STOPPED)]:
        handle.state = state
        assert job.status == shown, state
    assert "2" in job.waiting_text()
