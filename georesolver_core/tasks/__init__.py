"""Tasks and datasets: hierarchies to embed (trees, digits clustering, CSV edge lists) and training tasks (TASKS)."""

from georesolver_core.tasks.base import IGNORE, Batch, Task
from georesolver_core.tasks.hierarchy import (
    HIERARCHIES,
    MAX_CSV_BYTES,
    MAX_NAME_LEN,
    MAX_NODES,
    Hierarchy,
    HierarchySource,
    balanced_tree,
    digits_hierarchy,
    from_edge_list_csv,
    from_edges,
)
from georesolver_core.tasks.registry import TASKS, TaskEntry, make_task

__all__ = [
    "IGNORE",
    "TASKS",
    "Batch",
    "Task",
    "TaskEntry",
    "make_task",
    "HIERARCHIES",
    "MAX_CSV_BYTES",
    "MAX_NAME_LEN",
    "MAX_NODES",
    "Hierarchy",
    "HierarchySource",
    "balanced_tree",
    "digits_hierarchy",
    "from_edge_list_csv",
    "from_edges",
]
