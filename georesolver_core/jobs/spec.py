"""What a job is before it runs (``JobSpec``), the states it passes through, and how a wait is said."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from georesolver_core.jobs.kinds import resolve

QUEUED, RUNNING, PAUSED, DONE, FAILED, STOPPED = "queued", "running", "paused", "done", "failed", "stopped"
ENDED = (DONE, FAILED, STOPPED)


@dataclass(frozen=True)
class JobSpec:
    """What to run: a kind of ``kinds.JOB_KINDS`` (or "module:function") and its config of plain JSON values.

    The config is copied at construction (a JSON round trip): what the caller changes afterwards does not
    reach the job, and what reaches the job is what its run folder's spec.json records."""

    kind: str
    config: dict = field(default_factory=dict)

    def __post_init__(self):
        resolve(self.kind)  # a bad kind is refused at submit, not in the worker
        try:
            frozen = json.loads(json.dumps(self.config, allow_nan=False))
        except (TypeError, ValueError) as err:
            raise ValueError(
                f"config must hold plain JSON values (it is written to the run folder): {err}"
            ) from None
        if not isinstance(frozen, dict):
            raise ValueError(f"config must be a dict (got {type(self.config).__name__})")
        object.__setattr__(self, "config", frozen)


def ahead_text(ahead: int) -> str:
    """A queued job's place as the page says it (``JobHandle.queue_position``): 0 -> "next to start",
    2 -> "2 runs ahead of yours"."""
    if ahead <= 0:
        return "next to start"
    return f"{ahead} run{'s' if ahead > 1 else ''} ahead of yours"
