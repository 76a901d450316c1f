"""Start / Pause / Resume / Step / Stop / Reset for a trainer that advances as a generator, drawn live.

A library trainer yields ``(fraction done, text, partial result)`` after each unit of work and returns
its result (``orthogonal_tasks.compare_steps``, ``routing.compare.compare_routers_steps``,
``cost_scaling.cost_scaling_steps``). ``in_worker(function, *args)`` runs it in a worker process of the
server's job runner (``jobs.steps_job``): a ``WorkerJob`` kept in session state follows it and the server
only draws. ``LiveJob`` steps a generator in this process instead, a chunk per rerun, for a trainer whose
partial result is the trainer itself (the Embeddings page's, drawn from its live state). Both answer the
same buttons: they act in callbacks, before the page reruns, so each is drawn with the state it changed;
only ``live``'s fragment reruns while the job trains. Pause keeps the run where it is, Resume and Step
continue the same run, Stop ends it and keeps what it computed, Reset forgets it. A job also stops at its
time budget (seconds of work).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import streamlit as st
import ui

from georesolver_core.device import one_cpu_thread

RUNNING, PAUSED, STOPPED, FINISHED, BUDGET = (
    "running",
    "paused",
    "stopped",
    "finished",
    "stopped at the time budget",
)
DIVERGED, QUEUED = "diverged", "queued"
ACTIVE = (RUNNING, PAUSED, QUEUED)


@dataclass
class LiveJob:
    """One run of a generator trainer: where it is, what it has shown so far, and its result when done."""

    steps: Iterator  # yields (fraction, text, partial); returns the result
    sig: Any  # the configuration it was started with (the page shows a job only for its own)
    budget_s: float  # seconds of work after which the job stops by itself
    status: str = RUNNING
    fraction: float = 0.0
    text: str = "starting"
    partial: Any = None
    result: Any = None
    seconds: float = 0.0
    events: int = 0
    error: str | None = field(default=None)
    # Held for each step of the generator and by the buttons' status changes: the live fragment may run
    # in its own thread beside the rerun a button starts, and a Pause must not land mid-step.
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def advance(self, seconds: float | None = None, events: int | None = None) -> None:
        """Run the generator for ``seconds`` of work or ``events`` yields, whichever ends first."""
        t0 = time.perf_counter()
        n = 0
        entry = self.status  # RUNNING for a chunk, PAUSED for Step: a button changing it ends the chunk
        with one_cpu_thread():  # tiny tensors: extra threads only add synchronisation
            while self.status == entry and entry in ACTIVE:
                with self.lock:  # the step and its time are counted together: a Pause sees both or neither
                    if self.status != entry:  # paused or stopped while this thread waited for the lock
                        break
                    s0 = time.perf_counter()
                    try:
                        self.fraction, self.text, self.partial = next(self.steps)
                    except StopIteration as done:
                        self.result, self.status, self.fraction = done.value, FINISHED, 1.0
                        break
                    except ValueError as err:
                        self.error, self.status = str(err), STOPPED
                        break
                    finally:
                        self.seconds += time.perf_counter() - s0
                    n += 1
                    self.events += 1
                    if self.seconds >= self.budget_s:
                        self.status = BUDGET
                if (events is not None and n >= events) or (
                    seconds is not None and time.perf_counter() - t0 >= seconds
                ):
                    break

    # --- the interface ``controls`` and ``live`` use, shared with WorkerJob -----------------------------
    def poll(self, chunk_s: float) -> None:
        self.advance(seconds=chunk_s)

    def set_status(self, status: str) -> None:
        with self.lock:  # after the step in flight, if any: what the rerun draws is where the run stays
            if self.status in ACTIVE:
                self.status = status

    def step(self) -> None:
        if self.status == PAUSED:
            self.advance(events=1)

    def forget(self) -> None:
        self.set_status(STOPPED)

    def waiting_text(self) -> str:
        return ""


@dataclass(eq=False)
class WorkerJob:
    """A generator run in a worker (``jobs.steps_job``), as the page sees it: the newest partial result and
    the result, read from the job's progress events (``poll``)."""

    handle: Any  # jobs.JobHandle
    sig: Any
    budget_s: float
    fraction: float = 0.0
    text: str = "waiting for a worker"
    partial: Any = None
    result: Any = None
    seconds: float = 0.0
    budget: bool = False  # it stopped at its time budget
    seen: int = 0

    def poll(self, chunk_s: float = 0.0) -> None:
        events, self.seen = self.handle.events_since(self.seen)
        for e in events:
            self.fraction, self.text = e.fraction, e.text
            self.partial, self.seconds = e.partial["partial"], e.partial["seconds"]
            self.result = e.partial.get("result", self.result)
            self.budget = self.budget or e.partial.get("budget", False)

    @property
    def status(self) -> str:
        state = self.handle.state_for(self.seen)
        if self.handle.stopping:
            return STOPPED  # the worker ends within a second; what it computed is kept
        if state == "done":
            return BUDGET if self.budget else FINISHED
        return {"running": RUNNING, "paused": PAUSED, "queued": QUEUED}.get(state, STOPPED)

    @property
    def error(self) -> str | None:
        return self.handle.error

    @property
    def events(self) -> int:
        return self.seen

    def waiting_text(self) -> str:
        from georesolver_core.jobs import ahead_text

        return ahead_text(self.handle.queue_position())

    def set_status(self, status: str) -> None:
        if status == PAUSED:
            self.handle.pause()
        elif status == RUNNING:
            self.handle.resume()
        elif status == STOPPED:
            self.handle.stop()

    def step(self) -> None:
        self.handle.step()

    def forget(self) -> None:
        self.handle.stop()


def in_worker(function: Callable, *args, **kwargs) -> Callable[[Any, float], WorkerJob]:
    """What ``controls`` starts: ``function(*args, **kwargs)`` (a generator at module level) submitted to
    this server's job runner for this session. A session runs one job at a time (the runner's
    ``per_owner``): a second is refused with a ValueError, shown on the page."""

    def start(sig, budget_s: float) -> WorkerJob:
        import jobs_ui

        from georesolver_core.jobs import JobSpec, steps_config

        config = steps_config(function, *args, budget_s=budget_s, **kwargs)
        return WorkerJob(jobs_ui.runner().submit(JobSpec("steps", config), owner=jobs_ui.owner()), sig, budget_s)

    return start


def in_process(make: Callable[[], Iterator]) -> Callable[[Any, float], LiveJob]:
    """What ``controls`` starts: the generator ``make()`` stepped in this process (see the module docstring)."""
    return lambda sig, budget_s: LiveJob(make(), sig, budget_s)


def job(prefix: str) -> LiveJob | WorkerJob | None:
    return st.session_state.get(f"{prefix}_job")


def launch(prefix: str, start: Callable, sig, budget_s: float) -> None:
    """What Start does (a page may call it too, e.g. to restart when a setting changed): any earlier job of
    ``prefix`` is stopped, then ``start(sig, budget_s)`` is kept; a refusal is shown by ``controls``."""
    earlier = job(prefix)
    if earlier is not None:
        earlier.forget()  # Start replaces it: its worker, if any, is stopped
    try:
        st.session_state[f"{prefix}_job"] = start(sig, budget_s)
    except ValueError as err:  # the runner refused it (this session's other job still runs)
        st.session_state.pop(f"{prefix}_job", None)
        st.session_state[f"{prefix}_error"] = str(err)


def _set(prefix: str, status: str) -> None:
    j = job(prefix)
    if j is not None and j.status in ACTIVE:
        j.set_status(status)


def _step(prefix: str) -> None:
    j = job(prefix)
    if j is not None and j.status == PAUSED:
        j.step()


def _reset(prefix: str) -> None:
    j = st.session_state.pop(f"{prefix}_job", None)
    if j is not None:
        j.forget()


def controls(
    prefix: str, start: Callable, sig, *, budget_s: float, disabled: bool = False, what: str = "Train"
) -> LiveJob | WorkerJob | None:
    """The six buttons (keys ``{prefix}_start``, ``_pause``, ``_resume``, ``_step``, ``_stop``, ``_reset``).

    ``start`` (``in_worker(...)`` or ``in_process(...)``) starts a fresh run for the configuration ``sig``;
    Start replaces any earlier job."""
    j = job(prefix)
    status = j.status if j is not None else None
    st.session_state[f"{prefix}_drawn"] = status  # ``live`` reruns the page when the status moves on from it
    cols = st.columns(6)
    buttons = [  # label, key suffix, callback, arguments, disabled, icon
        (
            what,
            "start",
            launch,
            (prefix, start, sig, budget_s),
            disabled or status in ACTIVE,
            ":material/play_arrow:",
        ),
        ("Pause", "pause", _set, (prefix, PAUSED), status != RUNNING, ":material/pause:"),
        ("Resume", "resume", _set, (prefix, RUNNING), status != PAUSED, ":material/resume:"),
        ("Step", "step", _step, (prefix,), status != PAUSED, ":material/skip_next:"),
        ("Stop", "stop", _set, (prefix, STOPPED), status not in ACTIVE, ":material/stop:"),
        ("Reset", "reset", _reset, (prefix,), j is None, ":material/restart_alt:"),
    ]
    for col, (label, suffix, callback, args, off, icon) in zip(cols, buttons, strict=True):
        col.button(
            label,
            key=f"{prefix}_{suffix}",
            on_click=callback,
            args=args,
            disabled=off,
            icon=icon,
            width="stretch",
            type="primary" if suffix == "start" else "secondary",
        )
    if j is not None and j.status in ACTIVE and j.sig != sig:
        st.caption("The run below was started with other settings; Stop or Reset it to train these.")
    refused = st.session_state.pop(f"{prefix}_error", None)
    if refused:
        st.error(
            f"{refused}. Stop your run on the other page (or wait for it to finish), then press {what} again."
        )
    return j


def live(
    prefix: str,
    draw: Callable[[LiveJob], None],
    *,
    chunk_s: float | Callable[[], float] = 0.4,
    every_s: float = 0.5,
) -> None:
    """Draw the job's progress and ``draw(job)``; while it runs, a fragment advances it ``chunk_s`` of work
    every ``every_s`` seconds and redraws only itself. ``chunk_s`` may be a function, asked before each chunk
    (a page whose redraw is slow trains longer between redraws)."""
    j = job(prefix)
    worker = isinstance(j, WorkerJob)
    if worker:
        j.poll()  # what arrived since the last run, the end included (it may have ended meanwhile)
    # in-process: a chunk of work per rerun while running; a worker's job: its progress read while it is
    # queued or running, and while paused (a Step's result arrives after the click's rerun)
    polled = (RUNNING, QUEUED) if not worker else ACTIVE
    every = None if j is None or j.status not in polled else (every_s if j.status != PAUSED else 1.0)

    @st.fragment(run_every=every)
    def _live() -> None:
        j = job(prefix)
        if j is None:
            return
        if j.status in polled or isinstance(j, WorkerJob):
            j.poll(chunk_s() if callable(chunk_s) else chunk_s)
        # the buttons were drawn for another status (it changed in this poll, or between polls: a worker's
        # word that it waits): the whole page, which changes the timer and redraws the buttons
        if j.status != st.session_state.get(f"{prefix}_drawn", j.status):
            st.rerun()
        budget = f", time budget {j.budget_s:g} s" if j.status in ACTIVE or j.status == BUDGET else ""
        waiting = f"; {j.waiting_text()}" if j.status == QUEUED else ""
        st.progress(min(j.fraction, 1.0), text=f"{j.status}: {j.text} ({j.seconds:.1f} s{budget}){waiting}")
        if j.error:
            st.error(f"The run stopped: {ui.escape_md(j.error)}. Change the settings and press Start again.")
        if j.partial is not None:
            draw(j)

    _live()
