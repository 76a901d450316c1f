"""One job in a worker, whatever the back-end: its own torch thread count, the job's function, and one
final event however the job ends (written to the run folder as result.json first)."""

from __future__ import annotations

import importlib
import os
import traceback
from pathlib import Path

from georesolver_core.jobs.control import Control, Event, JobContext, Stopped
from georesolver_core.jobs.folder import write_json
from georesolver_core.jobs.kinds import resolve

# "module:function" calls (comma-separated) a worker makes before its job: what the server process set up at
# run time (a geometry it registered, say) and a fresh worker interpreter would not have by importing the package
SETUP_ENV = "GR_WORKER_SETUP"
_set_up = False


def run_setup() -> None:
    """Call each ``module:function`` named in ``GR_WORKER_SETUP``, once per worker process. A name that does not
    import is a ValueError naming it (the job then fails with that message)."""
    global _set_up
    if _set_up:
        return
    for name in filter(None, (n.strip() for n in os.environ.get(SETUP_ENV, "").split(","))):
        module, _, function = name.partition(":")
        try:
            call = getattr(importlib.import_module(module), function)
        except (ImportError, AttributeError, ValueError) as err:
            raise ValueError(f"{SETUP_ENV} must name module:function calls (got {name!r}: {err})") from None
        call()
    _set_up = True


def run_job(job_id: str, kind: str, config: dict, run_dir: str, threads: int, events, control: Control) -> Event:
    """Run one job to its end; progress goes to ``events``, the final event is returned (not sent)."""
    from georesolver_core.device import set_process_threads

    set_process_threads(threads)  # this worker's share of the cores, set before any work (the one owner of it)
    ctx = JobContext(job_id, Path(run_dir), events, control, threads)
    try:
        run_setup()
        result = resolve(kind).run(config, ctx)
        write_json(ctx.run_dir / "result.json", {"state": "done", "kind": kind, "result": result})
        return Event(job_id, "done", 1.0, "finished", result)
    except Stopped:
        write_json(ctx.run_dir / "result.json", {"state": "stopped", "kind": kind})
        return Event(job_id, "stopped", text="stopped")
    except BaseException as err:  # the server carries on; the job is reported with what went wrong
        text = f"{type(err).__name__}: {err}"
        write_json(ctx.run_dir / "result.json", {"state": "failed", "kind": kind, "error": text,
                                                  "traceback": traceback.format_exc()})  # fmt: skip
        return Event(job_id, "failed", text=text)
