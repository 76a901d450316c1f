"""The default back-end: each job in a fresh worker process on this machine.

Workers start with multiprocessing's "spawn" (a new interpreter: safe beside the server's threads, which a
fork would copy mid-lock). Progress comes back through one ``multiprocessing.Queue`` shared by all
workers; each worker's commands go the other way through two shared integers (``LocalControl``), read by
the job between its steps, so a command costs the job no system call.
"""

from __future__ import annotations

import contextlib
import importlib
import multiprocessing as mp
import os
import queue
import signal
import sys
import threading
import time
import types

from georesolver_core.jobs.control import PARENT_CHECK_S, RUN, Event
from georesolver_core.jobs.worker import run_job

_MAIN_LOCK = threading.Lock()
# What a spare worker imports before it is given a job: the training stack (torch, the model, the tasks).
# (torch.optim imports torch._dynamo when the first optimizer is built: about 2 s of CPU)
SPARE_IMPORTS = ("georesolver_core.train", "georesolver_core.labs.training", "torch._dynamo")
# and what it computes: the text corpus the Training page's default run reads (4 s of CPU in the worker)
SPARE_WARM = ("georesolver_core.tasks.text:preload",)
SPARE_ENV = "GR_SPARE_WORKER"  # "0": no spare worker (a fresh process for every job)
SPARE_DELAY_S = (
    5.0  # a spare started beside a new job waits this long before its imports (both run at idle priority)
)
WORKER_NICE = (
    10  # added to a worker's niceness (Linux: a nice-10 process gets about a tenth of a nice-0 one's CPU)
)


class LocalControl:
    """The command and the granted single steps of one job, shared between the runner and its worker."""

    def __init__(self, context):
        self._command = context.Value("i", RUN)
        self._steps = context.Value("i", 0)

    def command(self) -> int:
        return self._command.value

    def set(self, command: int) -> None:
        self._command.value = command

    def grant_step(self) -> None:
        with self._steps.get_lock():
            self._steps.value += 1

    def take_step(self) -> bool:
        with self._steps.get_lock():
            if self._steps.value > 0:
                self._steps.value -= 1
                return True
        return False


def _lower_priority() -> None:
    """Below the web server in the scheduler's eyes: on a machine whose cores the server and its visitors'
    pages need too, a job takes what they leave instead of halving their share. SCHED_IDLE (Linux) runs the
    worker only on a core nothing else wants: beside one browser session on two cores the session's slider
    p95 was 1.8x its value without the run at nice 10, 1.2x at SCHED_IDLE, the worker using 0.8 of a core in
    both (bench --serve). Elsewhere: nice."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        os.nice(WORKER_NICE)


def _run_and_exit(job_id, kind, config, run_dir, threads, events, control) -> None:
    events.put(run_job(job_id, kind, config, run_dir, threads, events, control))
    events.close()
    events.join_thread()  # every event is in the pipe
    sys.stdout.flush()
    sys.stderr.flush()
    # The result is written and sent: skip the interpreter's teardown (torch's takes up to a second), so a
    # stopped worker's CPU is free at once.
    os._exit(0)


def _worker_main(job_id, kind, config, run_dir, threads, events, control) -> None:
    """A spawned worker's entry point (module level: spawn pickles it by name)."""
    # Ctrl-C in the server's terminal reaches the whole process group: the server stops its workers itself
    # (``JobRunner.shutdown``), so a worker ignores it instead of dying mid-write.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _lower_priority()
    _run_and_exit(job_id, kind, config, run_dir, threads, events, control)


def _spare_main(inbox, events, control, delay_s: float = 0.0) -> None:
    """A spare worker: imports what jobs need (torch, the model stack: 2-3 s) before any job is asked for,
    then waits for one job (``inbox``) and runs it. It ends by itself once the server is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _lower_priority()
    parent = os.getppid()
    time.sleep(delay_s)  # started beside a job that is starting: its imports wait, the job gets the CPU
    for name in SPARE_IMPORTS:
        importlib.import_module(name)
    for step in SPARE_WARM:  # the default run's data; a failure here is the job's to report, not the spare's
        module, _, function = step.partition(":")
        with contextlib.suppress(Exception):
            getattr(importlib.import_module(module), function)()
    while True:
        try:
            job = inbox.get(timeout=PARENT_CHECK_S)
        except queue.Empty:
            if os.getppid() != parent:
                os._exit(0)
            continue
        if job is None:  # the back-end is closing
            os._exit(0)
        _run_and_exit(*job, events, control)


class LocalWorker:
    """One worker process, as the runner sees it."""

    def __init__(self, process, control: LocalControl, inbox=None):
        # ``inbox``: a spare worker's queue, held while the process lives: a queue collected in this process
        # unlinks its semaphore, and a child still starting could not open it
        self.process, self.control, self.inbox = process, control, inbox

    @property
    def pid(self) -> int | None:
        return self.process.pid

    @property
    def exitcode(self) -> int | None:
        return self.process.exitcode

    def alive(self) -> bool:
        return self.process.is_alive()

    def final_event(self) -> Event | None:
        return None  # a local worker sends its final event through the queue

    def failure(self) -> str:
        return f"the worker process ended without a result (exit code {self.process.exitcode})"

    def terminate(self) -> None:
        self.process.terminate()

    def kill(self) -> None:
        self.process.kill()

    def join(self, timeout: float | None = None) -> None:
        self.process.join(timeout)


class LocalBackend:
    """Worker processes on this machine (see the module docstring). From the first job on (or ``warm``) a
    spare worker is kept started, its imports done, so a Start runs at once instead of after a new
    interpreter's 2-3 s (``spare=False``, or ``GR_SPARE_WORKER=0``: a fresh process for every job)."""

    name = "local"

    def __init__(self, spare: bool | None = None):
        self.context = mp.get_context("spawn")
        self.queue = self.context.Queue()
        self.keep_spare = os.environ.get(SPARE_ENV, "1") != "0" if spare is None else spare
        self.spare: tuple | None = None  # (process, control, inbox) of the waiting worker
        self.closed = False

    def _spawn(self, target, args, name: str):
        process = self.context.Process(target=target, name=name, daemon=True, args=args)
        # A spawned child re-imports the parent's __main__ first. Under Streamlit that is the page script
        # being run (its script runner puts it there), which the worker would execute as it imports; the
        # worker needs nothing of it (jobs are found by name), so the child is given a blank main.
        with _MAIN_LOCK:
            main = sys.modules.get("__main__")
            sys.modules["__main__"] = types.ModuleType("__main__")
            try:
                process.start()
            finally:
                if main is not None:
                    sys.modules["__main__"] = main
        return process

    def warm(self) -> None:
        """Start a spare worker now, before the first job (a server's runner: the first Start is quick too)."""
        if self.keep_spare and self.spare is None and not self.closed:
            self._start_spare()

    def _start_spare(self, delay_s: float = 0.0) -> None:
        control, inbox = LocalControl(self.context), self.context.Queue()
        process = self._spawn(_spare_main, (inbox, self.queue, control, delay_s), "job-spare")
        self.spare = (process, control, inbox)

    def start(self, job_id: str, kind: str, config: dict, run_dir: str, threads: int, gpu: bool) -> LocalWorker:
        spare, self.spare, inbox = self.spare, None, None
        if spare is not None and spare[0].is_alive():
            process, control, inbox = spare
            inbox.put((job_id, kind, config, run_dir, threads))
        else:
            control = LocalControl(self.context)
            args = (job_id, kind, config, run_dir, threads, self.queue, control)
            process = self._spawn(_worker_main, args, f"job-{job_id}")
        if self.keep_spare and not self.closed:
            self._start_spare(SPARE_DELAY_S)  # warms while this job runs, once it has started
        return LocalWorker(process, control, inbox)

    def events(self, timeout: float) -> list[Event]:
        """What the workers sent: waits up to ``timeout`` for the first event, then takes what is there."""
        out = []
        try:
            out.append(self.queue.get(timeout=timeout))
            while True:
                out.append(self.queue.get_nowait())
        except (queue.Empty, OSError, EOFError, ValueError):
            pass
        return out

    def close(self) -> None:
        self.closed = True
        spare, self.spare = self.spare, None
        if spare is not None:
            process, _, inbox = spare
            inbox.put(None)
            process.join(1.0)
            if process.is_alive():
                process.kill()
                process.join()
        self.queue.close()
