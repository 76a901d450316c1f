"""Steps generators: a long computation written as a generator that yields after each unit of work (its
progress) and returns its result, so a worker job can pause, stop and report between units
(``jobs.kinds.steps_job``) while a script or a test runs the same computation whole (``run_to_end``)."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any, TypeVar

R = TypeVar("R")


def run_to_end(steps: Generator[Any, None, R], on_step: Callable[[Any], object] | None = None) -> R:
    """Advance ``steps`` to its end, calling ``on_step(item)`` with every item it yields; its return value."""
    while True:
        try:
            item = next(steps)
        except StopIteration as done:
            return done.value
        if on_step is not None:
            on_step(item)
