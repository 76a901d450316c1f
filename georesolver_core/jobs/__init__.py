"""Heavy work off the web server: jobs run in worker processes, report progress and obey pause / resume /
step / stop; each leaves a run folder written atomically (spec.json, result.json, checkpoints)."""

from georesolver_core.jobs.control import Event, JobContext, Stopped
from georesolver_core.jobs.kinds import JOB_KINDS, resolve, train_job
from georesolver_core.jobs.runner import (
    DONE,
    ENDED,
    FAILED,
    PAUSED,
    QUEUED,
    RUNNING,
    STOPPED,
    JobHandle,
    JobRunner,
    JobSpec,
    default_runner,
)

__all__ = [
    "DONE", "ENDED", "FAILED", "JOB_KINDS", "PAUSED", "QUEUED", "RUNNING", "STOPPED", "Event", "JobContext",
    "JobHandle", "JobRunner", "JobSpec", "Stopped", "default_runner", "resolve", "train_job",
]  # fmt: skip
