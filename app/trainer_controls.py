"""Start / Pause / Resume / Step / Stop / Reset for a trainer that advances as a generator, drawn live.

A library trainer that yields ``(fraction done, text, partial result)`` after each unit of work and
returns its result (``orthogonal_tasks.compare_steps``, ``routing.compare.compare_routers_steps``) is
wrapped in a ``LiveJob`` kept in session state. The buttons act in callbacks, before the page reruns,
so each is drawn with the state it changed; only ``live``'s fragment reruns while the job trains, a
chunk of work per rerun. Pause keeps the generator where it is, Resume and Step continue the same run,
Stop ends it and keeps what it computed, Reset forgets it. A job also stops at its time budget.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from georesolver_core.device import one_cpu_thread

RUNNING, PAUSED, STOPPED, FINISHED, BUDGET = "running", "paused", "stopped", "finished", "stopped at the time budget"
ACTIVE = (RUNNING, PAUSED)


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

    def advance(self, seconds: float | None = None, events: int | None = None) -> None:
        """Run the generator for ``seconds`` of work or ``events`` yields, whichever ends first."""
        t0 = time.perf_counter()
        n = 0
        with one_cpu_thread():  # tiny tensors: extra threads only add synchronisation
            while self.status in ACTIVE:
                try:
                    self.fraction, self.text, self.partial = next(self.steps)
                except StopIteration as done:
                    self.result, self.status, self.fraction = done.value, FINISHED, 1.0
                    break
                except ValueError as err:
                    self.error, self.status = str(err), STOPPED
                    break
                n += 1
                self.events += 1
                spent = time.perf_counter() - t0
                if self.seconds + spent >= self.budget_s:
                    self.status = BUDGET
                if (events is not None and n >= events) or (seconds is not None and spent >= seconds):
                    break
        self.seconds += time.perf_counter() - t0


def job(prefix: str) -> LiveJob | None:
    return st.session_state.get(f"{prefix}_job")


def _start(prefix: str, make: Callable[[], Iterator], sig, budget_s: float) -> None:
    st.session_state[f"{prefix}_job"] = LiveJob(make(), sig, budget_s)


def _set(prefix: str, status: str) -> None:
    j = job(prefix)
    if j is not None and j.status in ACTIVE:
        j.status = status


def _step(prefix: str) -> None:
    j = job(prefix)
    if j is not None and j.status == PAUSED:
        j.advance(events=1)


def _reset(prefix: str) -> None:
    st.session_state.pop(f"{prefix}_job", None)


def controls(
    prefix: str, make: Callable[[], Iterator], sig, *, budget_s: float, disabled: bool = False, what: str = "Train"
) -> LiveJob | None:
    """The six buttons (keys ``{prefix}_start``, ``_pause``, ``_resume``, ``_step``, ``_stop``, ``_reset``).

    ``make()`` builds a fresh generator for the configuration ``sig``; Start replaces any earlier job."""
    j = job(prefix)
    status = j.status if j is not None else None
    cols = st.columns(6)
    buttons = [  # label, key suffix, callback, arguments, disabled, icon
        (what, "start", _start, (prefix, make, sig, budget_s), disabled or status in ACTIVE, ":material/play_arrow:"),
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
    return j


def live(
    prefix: str, draw: Callable[[LiveJob], None], *, chunk_s: float | Callable[[], float] = 0.4, every_s: float = 0.5
) -> None:
    """Draw the job's progress and ``draw(job)``; while it runs, a fragment advances it ``chunk_s`` of work
    every ``every_s`` seconds and redraws only itself. ``chunk_s`` may be a function, asked before each chunk
    (a page whose redraw is slow trains longer between redraws)."""
    j = job(prefix)
    running = j is not None and j.status == RUNNING

    @st.fragment(run_every=every_s if running else None)
    def _live() -> None:
        j = job(prefix)
        if j is None:
            return
        if j.status == RUNNING:
            j.advance(seconds=chunk_s() if callable(chunk_s) else chunk_s)
            if j.status != RUNNING:
                st.rerun()  # the whole page: stops the timer and redraws the buttons
        budget = f", time budget {j.budget_s:g} s" if j.status in ACTIVE or j.status == BUDGET else ""
        st.progress(min(j.fraction, 1.0), text=f"{j.status}: {j.text} ({j.seconds:.1f} s{budget})")
        if j.error:
            st.error(f"The run stopped: {j.error}. Change the settings and press Start again.")
        if j.partial is not None:
            draw(j)

    _live()
