"""What a job is before it runs (``JobSpec``), the states it passes through, and how a wait is said."""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass, field, fields, is_dataclass

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


def encode_value(value):
    """A function argument as plain JSON values (a job's config must be JSON: it is written to spec.json):
    a dataclass instance as its class path and fields, a tuple marked as one (JSON has only lists), lists
    and dicts item by item; anything else as it is. ``decode_value`` undoes it in the worker."""
    if is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        return {"__dataclass__": f"{cls.__module__}:{cls.__qualname__}",
                "fields": {f.name: encode_value(getattr(value, f.name)) for f in fields(value)}}  # fmt: skip
    if isinstance(value, tuple):
        return {"__tuple__": [encode_value(v) for v in value]}
    if isinstance(value, list):
        return [encode_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): encode_value(v) for k, v in value.items()}
    return value


def decode_value(value):
    """``encode_value`` undone: dataclasses rebuilt from their fields (their own checks run again), tuples."""
    if isinstance(value, list):
        return [decode_value(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__tuple__" in value:
        return tuple(decode_value(v) for v in value["__tuple__"])
    if "__dataclass__" in value:
        module, _, name = value["__dataclass__"].partition(":")
        cls = importlib.import_module(module)
        for part in name.split("."):
            cls = getattr(cls, part)
        if not is_dataclass(cls):
            raise ValueError(f"{value['__dataclass__']} is not a dataclass")
        return cls(**{k: decode_value(v) for k, v in value["fields"].items()})
    return {k: decode_value(v) for k, v in value.items()}
