"""TASKS: every training task by name, with a label for the UI and its size arguments."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

from georesolver_core.tasks.base import Task
from georesolver_core.tasks.copy import Copy
from georesolver_core.tasks.digits import DigitRows
from georesolver_core.tasks.noisy import NoisyLabels
from georesolver_core.tasks.recall import AssociativeRecall
from georesolver_core.tasks.text import TextTask
from georesolver_core.tasks.tree_relations import TreeDistance


@dataclass(frozen=True)
class TaskEntry:
    label: str  # shown in the UI
    build: Callable[..., Task]  # keyword size arguments (see the class) -> Task
    size_arg: str | None  # the argument the UI's and CLI's "size" sets (None: fixed size)


TASKS: dict[str, TaskEntry] = {
    "recall": TaskEntry("Associative recall", AssociativeRecall, "n_pairs"),
    "copy": TaskEntry("Copy / echo", Copy, "length"),
    "hierarchy": TaskEntry("Tree distance (hierarchy)", TreeDistance, "depth"),
    "noisy": TaskEntry("Noisy-label memorisation", NoisyLabels, "n_train"),
    "digits": TaskEntry("Digits as row sequences", DigitRows, None),
    "text": TaskEntry("English text (WordNet glosses, next character)", TextTask, "context"),
}


def make_task(name: str, *, size: int | None = None, seed: int = 0, **kwargs) -> Task:
    """``TASKS[name]`` built with its size argument set to ``size`` (if given) and any other keyword."""
    if name not in TASKS:
        raise ValueError(f"task must be one of {sorted(TASKS)} (got {name!r})")
    entry = TASKS[name]
    if size is not None:
        if entry.size_arg is None:
            raise ValueError(f"task {name!r} has a fixed size; size must be None (got {size!r})")
        kwargs[entry.size_arg] = size
    takes = [p for p in inspect.signature(entry.build).parameters if p != "seed"]
    unknown = sorted(set(kwargs) - set(takes))
    if unknown:
        raise ValueError(f"task {name!r} takes no option {unknown}; its options are {takes}")
    return entry.build(seed=seed, **kwargs)
