"""Start / Pause / Resume / Step / Stop / Reset for a trainer that advances as a generator, drawn live.

A library trainer yields ``(fraction done, text, partial result)`` after each unit of work and returns
its result (``labs.orthogonal.compare_lab``, ``routing.compare.compare_routers_steps``,
``cost_scaling.cost_scaling_steps``, ``labs.embeddings.embedding_steps``). ``in_worker(function, *args)``
runs it in a worker process of the server's job runner (``jobs.steps_job``): a ``WorkerJob`` kept in
session state follows it and the server only draws; nothing trains in the server process. The buttons act
in callbacks, before the page reruns, so each is drawn with the state it changed; only ``live``'s fragment
reruns while the job trains. Pause keeps the run where it is, Resume and Step continue the same run, Stop
ends it and keeps what it computed, Reset forgets it. A job also stops at its time budget (seconds of work).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st
import ui

RUNNING, PAUSED, STOPPED, FINISHED, BUDGET = (
    "running",
    "paused",
    "stopped",
    "finished",
    "stopped at the time budget",
)
DIVERGED, QUEUED = "diverged", "queued"
ACTIVE = (RUNNING, PAUSED, QUEUED)


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

    def poll(self) -> None:
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


def kept_result(j: WorkerJob | None):
    """A job's result (e.g. a comparison, a benchmark report), else its newest partial: what finished before
    it stopped; None without a job."""
    if j is None:
        return None
    return j.result if j.result is not None else j.partial


def job(prefix: str) -> WorkerJob | None:
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
) -> WorkerJob | None:
    """The six buttons (keys ``{prefix}_start``, ``_pause``, ``_resume``, ``_step``, ``_stop``, ``_reset``).

    ``start`` (``in_worker(...)``) starts a fresh run for the configuration ``sig``; Start replaces any
    earlier job."""
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


def _touch() -> None:
    import jobs_ui

    try:
        jobs_ui.touch()
    except ValueError:  # no runner: this session has no job for it to keep
        pass


def live(prefix: str, draw: Callable[[WorkerJob], None], *, every_s: float = 0.5) -> None:
    """Draw the job's progress and ``draw(job)``; while it is active a fragment reads its progress every
    ``every_s`` seconds (every second while paused: a Step's result arrives after the click's rerun) and
    redraws only itself."""
    j = job(prefix)
    if j is not None:
        j.poll()  # what arrived since the last run, the end included (it may have ended meanwhile)
    every = None if j is None or j.status not in ACTIVE else (every_s if j.status != PAUSED else 1.0)

    @st.fragment(run_every=every)
    def _live() -> None:
        j = job(prefix)
        if j is None:
            return
        if j.status in ACTIVE:  # this session is still here: the runner cancels a closed tab's job a minute on
            _touch()
        j.poll()
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
