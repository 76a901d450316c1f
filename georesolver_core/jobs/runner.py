"""The job runner: heavy work in workers, the web server only submits, polls and draws.

    runner = JobRunner(max_workers=1, runs_dir="runs/jobs")
    handle = runner.submit(JobSpec("train", train_config(run_spec, train_config)), owner=session_id)
    handle.progress()            # the newest Event: fraction, text, partial result
    handle.pause(); handle.step(); handle.resume(); handle.stop()

Jobs wait in one server-wide queue (``queue_position``: how many runs start before this one) and start on
the back-end (``local.LocalBackend``: spawned processes on this machine; ``ray_backend.RayBackend``: Ray
tasks) while fewer than ``max_workers`` run. Fair sharing: an owner (a browser session) has at most
``per_owner`` jobs running or queued; a further submit is refused with a ValueError (not queued: a
session that wants another run stops its own first, and one session cannot fill the queue). An owner
not seen (``touch``) for ``owner_timeout_s`` has its jobs cancelled: a closed tab frees its worker.

A thread of the runner moves the workers' events onto the handles and notices a worker that died
without a word (killed by the system): its job is reported failed and the next one starts. A Stop is
obeyed at the job's next step; a worker that has not ended ``STOP_GRACE_S`` later is terminated.
``shutdown`` (also at interpreter exit, and on SIGTERM for ``default_runner``) stops every worker.
"""

from __future__ import annotations

import atexit
import os
import signal
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from pathlib import Path

from georesolver_core.jobs.control import PAUSE, RUN, STOP, Event
from georesolver_core.jobs.folder import finished_runs, write_json
from georesolver_core.jobs.kinds import resolve
from georesolver_core.jobs.spec import DONE, ENDED, FAILED, PAUSED, QUEUED, RUNNING, STOPPED, JobSpec
from georesolver_core.validate import check_positive_int

STOP_GRACE_S = 0.5  # a stopped worker that has not ended by then is terminated (Stop frees a core in < 1 s)
KILL_GRACE_S = 0.3  # and killed if SIGTERM did not end it either
MAX_EVENTS = 10_000  # progress events a handle keeps (the newest)
MAX_JOBS = 1_000  # ended jobs the runner keeps in memory (the newest); finished_runs reads all from disk
BACKEND_ENV = "GR_JOBS"  # "local" (default), "ray", or "ray://HOST:PORT"


def backend_name(name: str | None = None) -> str:
    """``name`` or else ``$GR_JOBS`` ("local" when neither is set), checked: "local", "ray" or "ray://HOST:PORT"."""
    name = (name if name is not None else os.environ.get(BACKEND_ENV, "")).strip() or "local"
    if name in ("local", "ray") or (name.startswith("ray://") and len(name) > len("ray://")):
        return name
    raise ValueError(f"backend must be 'local', 'ray' or 'ray://HOST:PORT' (got {name!r})")


def make_backend(name: str | None = None):
    """The back-end named by ``name`` or else by ``$GR_JOBS``: "local", "ray" or "ray://HOST:PORT"."""
    name = backend_name(name)
    if name == "local":
        from georesolver_core.jobs.local import LocalBackend

        return LocalBackend()
    from georesolver_core.jobs.ray_backend import RayBackend

    return RayBackend(address=None if name == "ray" else name)


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def core_budget() -> int:
    """Workers that fit beside the server: the cores this process may use, less one for the server."""
    return max(1, usable_cores() - 1)


class JobHandle:
    """One submitted job, as the page sees it. Its state and progress are updated by the runner's thread."""

    def __init__(self, runner: JobRunner, job_id: str, spec: JobSpec, owner: str, run_dir: Path):
        self.runner, self.job_id, self.spec, self.owner, self.run_dir = runner, job_id, spec, owner, run_dir
        self.state = QUEUED
        self.latest: Event | None = None
        self.events: deque[Event] = deque(maxlen=MAX_EVENTS)  # progress events, in the order sent
        self.n_events = 0  # progress events received in all (``events`` keeps the newest MAX_EVENTS)
        self.error: str | None = None
        self.exitcode: int | None = None
        self.worker = None
        self._result: dict | None = None
        self._stop_at: float | None = None
        self._waiting = False  # the worker said it waits (a "paused" event since the last pause or step)

    @property
    def pid(self) -> int | None:
        """The worker's process id (local back-end, once started), else None."""
        return None if self.worker is None else self.worker.pid

    def progress(self) -> Event | None:
        """The newest progress event (None before the first)."""
        return self.latest

    def events_since(self, seen: int) -> tuple[list[Event], int]:
        """The progress events after the first ``seen`` (those still kept), and the count received so far:
        a page passes back that count next time and reads each event once."""
        with self.runner.lock:  # the runner's thread appends under it
            new = min(self.n_events - seen, len(self.events))
            return (list(self.events)[len(self.events) - new :] if new > 0 else []), self.n_events

    def state_for(self, seen: int) -> str:
        """``state`` as a page that has read the first ``seen`` progress events shows it: a paused job reads
        "running" until its worker said it waits and the page has read every event sent before that word.
        A pause takes effect at the job's next step boundary, and progress sent before it is still on its
        way: "paused" then comes with the last step's result, and nothing moves after it."""
        state = self.state
        return RUNNING if state == PAUSED and (not self._waiting or seen < self.n_events) else state

    @property
    def stopping(self) -> bool:
        """Stop was asked and the worker has not ended yet."""
        return self._stop_at is not None and self.state not in ENDED

    def result(self) -> dict | None:
        """The job's result once it is done (None before, and for a failed or stopped job)."""
        return self._result

    def queue_position(self) -> int:
        """How many queued jobs start before this one (0: next to start, or already started)."""
        return self.runner.position(self)

    def pause(self) -> None:
        """A running job waits at its next step boundary (its worker keeps its state)."""
        self.runner.control(self, "pause")

    def resume(self) -> None:
        self.runner.control(self, "resume")

    def step(self) -> None:
        """While paused: let exactly one more step through."""
        self.runner.control(self, "step")

    def stop(self) -> None:
        """A queued job never starts; a running one ends at its next step (terminated after
        ``STOP_GRACE_S`` if it does not)."""
        self.runner.stop(self)


class JobRunner:
    """A queue of jobs and the workers that run them (see the module docstring).

    ``backend``: a back-end object, or its name ("local", "ray", "ray://HOST:PORT"; default ``$GR_JOBS``,
    else "local"). ``max_workers``: jobs running at once (default: the cores less one for the server).
    ``threads``: torch threads of each worker. ``present(owner)``: whether an owner is still connected (the
    web server's own record of its sessions), asked before an owner not touched for ``owner_timeout_s`` is
    cancelled: an open tab left idle keeps its run, a closed one loses it a minute later."""

    def __init__(self, *, backend=None, max_workers: int | None = None, threads: int = 1, per_owner: int = 1,
                 runs_dir: str | os.PathLike = "runs/jobs", owner_timeout_s: float = 60.0,
                 present: Callable[[str], bool] | None = None):  # fmt: skip
        self.max_workers = check_positive_int(
            "max_workers", core_budget() if max_workers is None else max_workers, 1, 256
        )
        self.threads = check_positive_int("threads", threads, 1, 256)
        self.per_owner = check_positive_int("per_owner", per_owner, 1, 1000)
        if not owner_timeout_s > 0:
            raise ValueError(f"owner_timeout_s must be > 0 (got {owner_timeout_s})")
        self.owner_timeout_s = float(owner_timeout_s)
        self.present = present
        self.runs_dir = Path(runs_dir)
        self.backend = backend if backend is not None and not isinstance(backend, str) else make_backend(backend)
        self.jobs: dict[str, JobHandle] = {}
        self.waiting: deque[JobHandle] = deque()
        self.seen: dict[str, float] = {}  # owner -> when it last touched
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
                raise ValueError("the job runner is shut down: start a new one")
            # a job told to stop is ending (within STOP_GRACE_S): Start after Stop does not wait for it
            mine = [
                h for h in self.jobs.values() if h.owner == owner and h.state not in ENDED and h._stop_at is None
            ]
            if len(mine) >= self.per_owner:
                raise ValueError(
                    f"a session runs at most {self.per_owner} job(s) at once (per_owner): stop or wait for the one "
                    "you have"
                )
            job_id = f"{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:8]}"
            run_dir = self.runs_dir / job_id
            write_json(run_dir / "spec.json", {"kind": spec.kind, "config": spec.config, "owner": owner})
            handle = JobHandle(self, job_id, spec, owner, run_dir)
            self.jobs[job_id] = handle
            self.waiting.append(handle)
            self._start_waiting()
            return handle

    def touch(self, owner: str) -> None:
        """``owner`` is still there (a page calls this on each rerun): from its first touch on, an owner not
        seen for ``owner_timeout_s`` has its jobs cancelled."""
        with self.lock:
            self.seen[owner] = time.monotonic()

    def jobs_of(self, owner: str) -> list[JobHandle]:
        """This owner's jobs, oldest first: never another owner's."""
        with self.lock:
            return [h for h in self.jobs.values() if h.owner == owner]

    def position(self, handle: JobHandle) -> int:
        with self.lock:
            return list(self.waiting).index(handle) if handle in self.waiting else 0

    def control(self, handle: JobHandle, action: str) -> None:
        """ "pause" a running job, "resume" a paused one, or grant a paused one a "step"; otherwise nothing
        (a button pressed twice, or after the job ended)."""
        with self.lock:
            if action == "pause" and handle.state == RUNNING:
                handle.worker.control.set(PAUSE)
                handle.state, handle._waiting = PAUSED, False
            elif action == "resume" and handle.state == PAUSED:
                handle.worker.control.set(RUN)
                handle.state, handle._waiting = RUNNING, False
            elif action == "step" and handle.state == PAUSED:
                handle._waiting = False
                handle.worker.control.grant_step()

    def stop(self, handle: JobHandle) -> None:
        with self.lock:
            if handle in self.waiting:
                self.waiting.remove(handle)
                handle.state = STOPPED
                write_json(handle.run_dir / "result.json", {"state": STOPPED, "kind": handle.spec.kind})
            elif handle.state in (RUNNING, PAUSED) and handle._stop_at is None:
                handle.worker.control.set(STOP)
                handle._stop_at = time.monotonic()

    def cancel_owner(self, owner: str) -> int:
        """Stop every job of ``owner`` (a session gone for good); returns how many were unfinished."""
        with self.lock:
            unfinished = [h for h in self.jobs.values() if h.owner == owner and h.state not in ENDED]
            for h in unfinished:
                self.stop(h)
            self.seen.pop(owner, None)
        return len(unfinished)

    def finished_runs(self) -> list[dict]:
        """Every run folder with a result, newest first, read from disk (a restarted server sees them)."""
        return finished_runs(self.runs_dir)

    def shutdown(self) -> None:
        """Stop every job and end every worker (idempotent); the back-end is closed."""
        with self.lock:
            if self.closed:
                return
            self.closed = True
            for h in list(self.waiting):
                self.stop(h)
            running = [h for h in self.jobs.values() if h.worker is not None and h.worker.alive()]
            for h in running:
                h.worker.control.set(STOP)
        deadline = time.monotonic() + STOP_GRACE_S
        for h in running:
            h.worker.join(max(0.0, deadline - time.monotonic()))
            if h.worker.alive():
                h.worker.terminate()
                h.worker.join(KILL_GRACE_S)
            if h.worker.alive():
                h.worker.kill()
                h.worker.join()
        self.thread.join(timeout=2.0)
        with self.lock:
            for h in running:
                if h.state not in ENDED:
                    h.state, h.exitcode = STOPPED, h.worker.exitcode
        self.backend.close()

    # --- the runner's thread ------------------------------------------------------------------------------
    def _start_waiting(self) -> None:
        running = sum(1 for h in self.jobs.values() if h.state in (RUNNING, PAUSED))
        while self.waiting and running < self.max_workers:
            h = self.waiting.popleft()
            gpu = resolve(h.spec.kind).gpu
            h.worker = self.backend.start(h.job_id, h.spec.kind, h.spec.config, str(h.run_dir), self.threads, gpu)
            h.state = RUNNING
            running += 1

    def _apply(self, event: Event) -> None:
        h = self.jobs.get(event.job_id)
        if h is None or h.state in ENDED:
            return
        if event.kind == "paused":
            h._waiting = h.state == PAUSED  # a late word from before a Resume changes nothing
            return
        if event.kind == "progress":
            h.latest = event
            h.events.append(event)
            h.n_events += 1
            return
        state = {"done": DONE, "stopped": STOPPED, "failed": FAILED}[event.kind]
        result = event.partial if event.kind == "done" else None
        error = event.text if event.kind == "failed" else None
        if not (h.run_dir / "result.json").is_file():  # a worker on another machine wrote its own copy
            write_json(
                h.run_dir / "result.json", {"state": state, "kind": h.spec.kind, "result": result, "error": error}
            )
        h._result, h.error, h.state = result, error, state

    def _serve(self) -> None:
        while True:
            with self.lock:
                if self.closed and not any(h.state in (RUNNING, PAUSED) for h in self.jobs.values()):
                    return
            events = self.backend.events(0.05)  # outside the lock: a page's call never waits on it
            with self.lock:
                for event in events:
                    self._apply(event)
                self._reap()
                if not self.closed:
                    self._cancel_absent()
                    self._start_waiting()

    def _reap(self) -> None:
        """Workers that ended: their final event was applied, or they died without one (killed: FAILED);
        a stop not obeyed within the grace time is enforced. Then the oldest ended jobs beyond ``MAX_JOBS``
        are forgotten (their run folders stay)."""
        for h in self.jobs.values():
            if h.worker is None or h.exitcode is not None:
                continue
            late = h._stop_at is not None and h.state in (RUNNING, PAUSED) and time.monotonic() - h._stop_at
            if late and late > STOP_GRACE_S + KILL_GRACE_S and h.worker.alive():
                h.worker.kill()
            elif late and late > STOP_GRACE_S and h.worker.alive():
                h.worker.terminate()
            if h.worker.alive():
                continue
            h.worker.join(0.1)
            for event in self.backend.events(0.0):  # its last words may still be on the way
                self._apply(event)
            final = h.worker.final_event()
            if final is not None:
                self._apply(final)
            h.exitcode = h.worker.exitcode
            if h.state in (RUNNING, PAUSED):
                state = STOPPED if h._stop_at is not None else FAILED
                error = h.worker.failure() if state == FAILED else None
                write_json(h.run_dir / "result.json", {"state": state, "kind": h.spec.kind, "error": error})
                h.error, h.state = error, state  # after the file: whoever sees the state finds its record
            release = getattr(self.backend, "release", None)
            if release is not None:
                release(h.job_id)
        ended = [
            k for k, h in self.jobs.items() if h.state in ENDED and (h.worker is None or h.exitcode is not None)
        ]
        for job_id in ended[: max(0, len(ended) - MAX_JOBS)]:
            del self.jobs[job_id]

    def _cancel_absent(self) -> None:
        now = time.monotonic()
        for owner, seen in list(self.seen.items()):
            if now - seen <= self.owner_timeout_s:
                continue
            if self.present is not None and self._present(owner):
                self.seen[owner] = now
            else:
                self.cancel_owner(owner)

    def _present(self, owner: str) -> bool:
        try:
            return bool(self.present(owner))
        except Exception:  # a failing check counts as absent: the owner's last touch decides
            return False


_DEFAULT: JobRunner | None = None
_DEFAULT_LOCK = threading.Lock()


def default_runner(present: Callable[[str], bool] | None = None) -> JobRunner:
    """The process-wide runner (one per server; back-end from ``$GR_JOBS``, run folders under
    ``$GR_RUNS_DIR`` or runs/jobs, a spare local worker started at once), stopped with its workers at exit
    and on SIGTERM. ``present``: see ``JobRunner`` (taken when the runner is made)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None or _DEFAULT.closed:
            _DEFAULT = JobRunner(runs_dir=os.environ.get("GR_RUNS_DIR", "runs/jobs"), present=present)
            _on_sigterm(_DEFAULT)
            warm = getattr(_DEFAULT.backend, "warm", None)
            if warm is not None:  # a spare worker imports torch while the page that made the runner is read
                warm()
        return _DEFAULT


def _on_sigterm(runner: JobRunner) -> None:
    """SIGTERM stops the runner's workers, then does what it did before (Python's default: exit 143)."""
    if threading.current_thread() is not threading.main_thread():
        return  # only the main thread may set a handler; atexit still stops the workers on a clean exit
    previous = signal.getsignal(signal.SIGTERM)

    def on_term(signum, frame):
        runner.shutdown()
        if callable(previous):
            previous(signum, frame)
        else:
            raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
