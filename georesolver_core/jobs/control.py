"""What a running job sees of its runner: progress to report, and pause / resume / step / stop to obey.

The runner and the worker process share two integers (``multiprocessing.Value``): the command (run, pause,
stop) and the number of single steps granted while paused. A job calls ``JobContext.tick()`` between its
steps; that is where a pause waits, a Step lets exactly one step through and a Stop ends the job, so a job
always stops at a step boundary with its last checkpoint whole.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

RUN, PAUSE, STOP = 0, 1, 2
POLL_S = 0.02  # how often a paused job looks at its commands


class Stopped(Exception):
    """Raised by ``tick`` when the runner asked the job to stop; the worker reports the job as stopped."""


@dataclass(frozen=True)
class Event:
    """One message from a worker: ``kind`` is "progress", "done", "stopped" or "failed"."""

    job_id: str
    kind: str
    fraction: float = 0.0  # of the job's work, in [0, 1]
    text: str = ""
    partial: object = None  # a small picklable value for a live figure (e.g. the newest history row)


class JobContext:
    """Handed to a job's function in its worker process."""

    def __init__(self, job_id: str, run_dir: Path, events, command, credits):
        self.job_id, self.run_dir = job_id, Path(run_dir)
        self._events, self._command, self._credits = events, command, credits

    def progress(self, fraction: float, text: str = "", partial: object = None) -> None:
        """Report how far the job is (0..1), a line of text and, optionally, a partial result."""
        self._events.put(Event(self.job_id, "progress", min(max(float(fraction), 0.0), 1.0), text, partial))

    @property
    def stop_requested(self) -> bool:
        return self._command.value == STOP

    def tick(self) -> None:
        """Call between steps: returns at once while running; waits while paused until Resume, a Step
        (which lets one step through) or Stop; raises ``Stopped`` on Stop."""
        while True:
            command = self._command.value
            if command == STOP:
                raise Stopped
            if command == RUN:
                return
            with self._credits.get_lock():
                if self._credits.value > 0:
                    self._credits.value -= 1
                    return
            time.sleep(POLL_S)
