"""The job runner: heavy work in worker processes, the web server only submits, polls and draws.

    runner = JobRunner(max_workers=1, runs_dir="runs/jobs")
    handle = runner.submit(JobSpec("train", {"spec": ..., "train": ...}), owner=session_id)
    handle.progress()            # the newest Event: fraction, text, partial result
    handle.pause(); handle.step(); handle.resume(); handle.stop()

Jobs wait in one server-wide queue (``queue_position``: how many runs are ahead) and start in worker
processes (multiprocessing's "spawn": a fresh interpreter, safe beside the server's threads) while fewer
than ``max_workers`` run; an owner (a browser session) has at most ``per_owner`` running or queued jobs.
A thread of the runner moves the workers' events onto the handles and notices a worker that died without
a word (killed by the system): its job is reported failed and the next one starts. ``shutdown`` (also at
interpreter exit and on SIGTERM) stops every worker: no child outlives the server.
"""

from __future__ import annotations

import atexit
import json
import multiprocessing as mp
import os
import queue
import signal
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from georesolver_core.jobs.control import PAUSE, RUN, STOP, Event
from georesolver_core.jobs.kinds import resolve
from georesolver_core.jobs.worker import run_job, write_json
from georesolver_core.validate import check_positive_int

QUEUED, RUNNING, PAUSED, DONE, FAILED, STOPPED = "queued", "running", "paused", "done", "failed", "stopped"
ENDED = (DONE, FAILED, STOPPED)
STOP_GRACE_S = 1.0  # a stopped worker that has not ended by then is terminated


@dataclass(frozen=True)
class JobSpec:
    """What to run: a kind of ``kinds.JOB_KINDS`` (or "module:function") and its plain-value config."""

    kind: str
    config: dict = field(default_factory=dict)

    def __post_init__(self):
        resolve(self.kind)  # a bad kind is refused at submit, not in the worker
        try:
            json.dumps(self.config)
        except (TypeError, ValueError) as err:
            raise ValueError(f"config must hold plain JSON values (it is written to the run folder): {err}") from None


class JobHandle:
    """One submitted job, as the page sees it. Its state and progress are updated by the runner's thread."""

    def __init__(self, runner: JobRunner, job_id: str, spec: JobSpec, owner: str, run_dir: Path):
        self.runner, self.job_id, self.spec, self.owner, self.run_dir = runner, job_id, spec, owner, run_dir
        self.state = QUEUED
        self.latest: Event | None = None
        self.events: list[Event] = []  # every progress event, in order
        self.error: str | None = None
        self.exitcode: int | None = None
        self._result: dict | None = None
        self.process = None
        self._command = runner.context.Value("i", RUN)
        self._credits = runner.context.Value("i", 0)
        self._stop_at: float | None = None

    def progress(self) -> Event | None:
        """The newest progress event (None before the first)."""
        return self.latest

    def result(self) -> dict | None:
        """The job's result once it is done (None before, and for a failed or stopped job)."""
        return self._result

    def queue_position(self) -> int:
        """How many jobs start before this one (0 once it runs)."""
        return self.runner.position(self)

    def pause(self) -> None:
        if self.state == RUNNING:
            self._command.value = PAUSE
            self.state = PAUSED

    def resume(self) -> None:
        if self.state == PAUSED:
            self._command.value = RUN
            self.state = RUNNING

    def step(self) -> None:
        """While paused: let exactly one more step through."""
        if self.state == PAUSED:
            with self._credits.get_lock():
                self._credits.value += 1

    def stop(self) -> None:
        """Stop: a queued job never starts; a running one ends at its next step (terminated after
        ``STOP_GRACE_S`` if it does not)."""
        self.runner.stop(self)


class JobRunner:
    """A queue of jobs and the worker processes that run them (see the module docstring)."""

    def __init__(self, *, max_workers: int | None = None, threads: int = 1, per_owner: int = 1,
                 runs_dir: str | os.PathLike = "runs/jobs"):  # fmt: skip
        cores = os.cpu_count() or 1
        self.max_workers = check_positive_int("max_workers", max_workers or max(1, cores - 1), 1, 256)
        self.threads = check_positive_int("threads", threads, 1, 256)
        self.per_owner = check_positive_int("per_owner", per_owner, 1, 1000)
        self.runs_dir = Path(runs_dir)
        self.context = mp.get_context("spawn")
        self.events = self.context.Queue()
        self.jobs: dict[str, JobHandle] = {}
        self.waiting: deque[JobHandle] = deque()
        self.lock = threading.RLock()
        self.closed = False
        self.thread = threading.Thread(target=self._serve, name="job-runner", daemon=True)
        self.thread.start()
        atexit.register(self.shutdown)

    # --- what a page calls --------------------------------------------------------------------------------
    def submit(self, spec: JobSpec, *, owner: str) -> JobHandle:
        """Queue ``spec`` for ``owner``; ValueError when the owner already has ``per_owner`` jobs unfinished."""
        with self.lock:
            if self.closed:
                raise ValueError("the job runner is shut down")
            mine = [h for h in self.jobs.values() if h.owner == owner and h.state not in ENDED]
            if len(mine) >= self.per_owner:
                raise ValueError(
                    f"a session runs at most {self.per_owner} job(s) at once: stop or wait for the one you have"
                )
            job_id = f"{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:8]}"
            run_dir = self.runs_dir / job_id
            write_json(run_dir / "spec.json", {"kind": spec.kind, "config": spec.config, "owner": owner})
            handle = JobHandle(self, job_id, spec, owner, run_dir)
            self.jobs[job_id] = handle
            self.waiting.append(handle)
            self._start_waiting()
            return handle

    def jobs_of(self, owner: str) -> list[JobHandle]:
        """This owner's jobs, oldest first: never another owner's."""
        with self.lock:
            return [h for h in self.jobs.values() if h.owner == owner]

    def position(self, handle: JobHandle) -> int:
        with self.lock:
            return list(self.waiting).index(handle) + 1 if handle in self.waiting else 0

    def stop(self, handle: JobHandle) -> None:
        with self.lock:
            if handle in self.waiting:
                self.waiting.remove(handle)
                handle.state = STOPPED
            elif handle.state in (RUNNING, PAUSED):
                handle._command.value = STOP
                handle._stop_at = time.monotonic()

    def cancel_owner(self, owner: str) -> int:
        """Stop every job of ``owner`` (a session gone for good); returns how many were unfinished."""
        unfinished = [h for h in self.jobs_of(owner) if h.state not in ENDED]
        for h in unfinished:
            self.stop(h)
        return len(unfinished)

    def finished_runs(self) -> list[dict]:
        """Every run folder with a result, newest first, read from disk (a restarted server sees them)."""
        out = []
        for result in sorted(self.runs_dir.glob("*/result.json"), reverse=True):
            try:
                doc = json.loads(result.read_text())
            except (OSError, ValueError):
                continue  # a folder being written or damaged by hand: not a finished run
            out.append({"job_id": result.parent.name, **doc})
        return out

    def shutdown(self) -> None:
        """Stop every job and end every worker (idempotent)."""
        with self.lock:
            if self.closed:
                return
            self.closed = True
            for h in list(self.waiting):
                h.state = STOPPED
            self.waiting.clear()
            running = [h for h in self.jobs.values() if h.process is not None and h.process.is_alive()]
            for h in running:
                h._command.value = STOP
        deadline = time.monotonic() + STOP_GRACE_S
        for h in running:
            h.process.join(max(0.0, deadline - time.monotonic()))
            if h.process.is_alive():
                h.process.terminate()
                h.process.join(1.0)
            if h.process.is_alive():
                h.process.kill()
                h.process.join()
            if h.state not in ENDED:
                h.state = STOPPED
        self.thread.join(timeout=2.0)

    # --- the runner's thread ------------------------------------------------------------------------------
    def _start_waiting(self) -> None:
        running = sum(1 for h in self.jobs.values() if h.state in (RUNNING, PAUSED))
        while self.waiting and running < self.max_workers:
            h = self.waiting.popleft()
            h.process = self.context.Process(
                target=run_job, name=f"job-{h.job_id}", daemon=True,
                args=(h.job_id, h.spec.kind, h.spec.config, str(h.run_dir), self.threads, self.events,
                      h._command, h._credits),
            )  # fmt: skip
            h.process.start()
            h.state = RUNNING
            running += 1

    def _apply(self, event: Event) -> None:
        h = self.jobs.get(event.job_id)
        if h is None:
            return
        if event.kind == "progress":
            h.latest = event
            h.events.append(event)
            return
        h.state = {"done": DONE, "stopped": STOPPED, "failed": FAILED}[event.kind]
        if event.kind == "done":
            h.latest, h._result = event, event.partial
        elif event.kind == "failed":
            h.error = event.text

    def _serve(self) -> None:
        while not (self.closed and not any(h.state in (RUNNING, PAUSED) for h in self.jobs.values())):
            try:
                event = self.events.get(timeout=0.05)
            except (queue.Empty, OSError, EOFError):
                event = None
            with self.lock:
                if event is not None:
                    self._apply(event)
                self._reap()
                if not self.closed:
                    self._start_waiting()

    def _reap(self) -> None:
        """Workers that ended: their final event was applied, or they died without one (killed: FAILED);
        a stop not obeyed within the grace time is enforced."""
        for h in self.jobs.values():
            if h.process is None or h.state not in (RUNNING, PAUSED):
                if h.process is not None and h.exitcode is None and not h.process.is_alive():
                    h.exitcode = h.process.exitcode
                continue
            if h._stop_at is not None and time.monotonic() - h._stop_at > STOP_GRACE_S and h.process.is_alive():
                h.process.terminate()
            if not h.process.is_alive():
                h.process.join(0.1)
                try:  # its last words may still be in the queue
                    while True:
                        self._apply(self.events.get_nowait())
                except (queue.Empty, OSError, EOFError):
                    pass
                h.exitcode = h.process.exitcode
                if h.state in (RUNNING, PAUSED):
                    h.state = STOPPED if h._stop_at is not None else FAILED
                    if h.state == FAILED:
                        h.error = f"the worker process ended without a result (exit code {h.exitcode})"


_DEFAULT: JobRunner | None = None
_DEFAULT_LOCK = threading.Lock()


def default_runner() -> JobRunner:
    """The process-wide runner (one per server), stopped with its workers on SIGTERM and at exit."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None or _DEFAULT.closed:
            _DEFAULT = JobRunner(runs_dir=os.environ.get("GR_RUNS_DIR", "runs/jobs"))
            if threading.current_thread() is threading.main_thread():
                previous = signal.getsignal(signal.SIGTERM)

                def on_term(signum, frame, runner=_DEFAULT):
                    runner.shutdown()
                    if callable(previous):
                        previous(signum, frame)
                    else:
                        raise SystemExit(143)

                signal.signal(signal.SIGTERM, on_term)
        return _DEFAULT




