"""Tasks and datasets: hierarchies to embed (trees, digits clustering, CSV edge lists)."""

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

__all__ = [
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
