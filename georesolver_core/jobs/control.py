"""What a running job sees of its runner: progress to report, and pause / resume / step / stop to obey.

The runner and the job share a command (run, pause, stop) and a count of single steps granted while
paused, through a back-end's control channel (``local.LocalControl``: two shared integers;
``ray_backend.RayControl``: a small actor). A job calls ``JobContext.tick()`` between its steps; that is
where a pause waits, a Step lets exactly one step through and a Stop ends the job, so a job always stops
at a step boundary with its last checkpoint whole.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

RUN, PAUSE, STOP = 0, 1, 2
POLL_S = 0.02  # how often a paused job looks at its commands
PARENT_CHECK_S = 0.5  # how often a job checks that the server that started it is still there


class Stopped(Exception):
    """Raised by ``tick`` when the runner asked the job to stop; the worker reports the job as stopped."""


@dataclass(frozen=True)
class Event:
    """One message from a worker: ``kind`` is "progress", "paused" (it waits, everything it computed before
    already sent), "done", "stopped" or "failed"."""

    job_id: str
    kind: str
    fraction: float = 0.0  # of the job's work, in [0, 1]
    text: str = ""
    partial: object = None  # a small picklable value for a live figure (e.g. the newest history row)


class Control(Protocol):
    """The worker's end of a control channel."""

    def command(self) -> int: ...  # RUN, PAUSE or STOP

    def take_step(self) -> bool: ...  # consume one granted step; False when none is left


class JobContext:
    """Handed to a job's function in its worker: ``progress`` to report, ``tick`` between steps."""

    def __init__(self, job_id: str, run_dir: Path, events, control: Control, threads: int = 1):
        self.job_id, self.run_dir, self.threads = job_id, Path(run_dir), threads
        self._events, self._control = events, control
        self._parent, self._parent_seen = os.getppid(), time.monotonic()

    def progress(self, fraction: float, text: str = "", partial: object = None) -> None:
        """Report how far the job is (0..1), a line of text and, optionally, a partial result."""
        self._events.put(Event(self.job_id, "progress", min(max(float(fraction), 0.0), 1.0), text, partial))

    @property
    def paused(self) -> bool:
        """The runner asked the job to wait (it waits at its next ``tick``)."""
        return self._control.command() == PAUSE

    def tick(self) -> None:
        """Call between steps: returns at once while running; waits while paused until Resume, a Step
        (which lets one step through) or Stop; raises ``Stopped`` on Stop."""
        said = False
        while True:
            command = self._control.command()
            if command == STOP or self._orphaned():
                raise Stopped
            if command == RUN or self._control.take_step():
                return
            if not said:  # after the progress sent before it: the page shows "paused" once this arrives
                self._events.put(Event(self.job_id, "paused"))
                said = True
            time.sleep(POLL_S)

    def _orphaned(self) -> bool:
        """True once the process that started this worker is gone (a server killed outright cannot stop its
        workers: they stop themselves). A Ray task's parent is Ray's own worker, which outlives it."""
        now = time.monotonic()
        if now - self._parent_seen < PARENT_CHECK_S:
            return False
        self._parent_seen = now
        return os.getppid() != self._parent
