"""Heavy work off the web server: jobs run in workers (local processes, or Ray tasks when configured),
report progress and obey pause / resume / step / stop; each leaves a run folder written atomically
(spec.json, result.json, checkpoints)."""

from georesolver_core.jobs.control import Event, JobContext, Stopped
from georesolver_core.jobs.kinds import (
    JOB_KINDS,
    JobKind,
    resolve,
    steps_config,
    steps_job,
    train_config,
    train_job,
)
from georesolver_core.jobs.runner import (
    BACKEND_ENV,
    JobHandle,
    JobRunner,
    backend_name,
    core_budget,
    default_runner,
    make_backend,
)
from georesolver_core.jobs.spec import DONE, ENDED, FAILED, PAUSED, QUEUED, RUNNING, STOPPED, JobSpec, ahead_text

__all__ = [
    "BACKEND_ENV", "DONE", "ENDED", "FAILED", "JOB_KINDS", "PAUSED", "QUEUED", "RUNNING", "STOPPED", "Event",
    "JobContext", "JobHandle", "JobKind", "JobRunner", "JobSpec", "Stopped", "ahead_text", "backend_name", "core_budget",
    "default_runner", "make_backend", "resolve", "steps_config", "steps_job", "train_config", "train_job",
]  # fmt: skip
