"""The worker process: its own torch thread count, one job, and one final event however the job ends."""

from __future__ import annotations

import json
import traceback
from pathlib import Path

from georesolver_core.jobs.control import Event, JobContext, Stopped
from georesolver_core.jobs.kinds import resolve
from georesolver_core.train.checkpoint import write_atomic


def write_json(path: Path, doc: dict) -> None:
    """A JSON file written atomically (a restarted server reads a whole file or none)."""
    write_atomic(path, lambda f: f.write(json.dumps(doc, indent=1, default=str).encode()))


def run_job(job_id: str, kind: str, config: dict, run_dir: str, threads: int, events, command, credits) -> None:
    """Entry point of a spawned worker (module level: spawn pickles it by name)."""
    import torch

    torch.set_num_threads(threads)  # this process's share of the server's cores, set before any work
    ctx = JobContext(job_id, Path(run_dir), events, command, credits)
    try:
        result = resolve(kind)(config, ctx)
        write_json(ctx.run_dir / "result.json", {"state": "done", "kind": kind, "result": result})
        events.put(Event(job_id, "done", 1.0, "finished", result))
    except Stopped:
        write_json(ctx.run_dir / "result.json", {"state": "stopped", "kind": kind})
        events.put(Event(job_id, "stopped", text="stopped"))
    except BaseException as err:  # the server carries on; the job is reported with what went wrong
        text = f"{type(err).__name__}: {err}"
        write_json(ctx.run_dir / "result.json", {"state": "failed", "kind": kind, "error": text,
                                                  "traceback": traceback.format_exc()})  # fmt: skip
        events.put(Event(job_id, "failed", text=text))
