"""Sets of nodes a hierarchy figure picks out: a node's lineage (its ancestors and descendants, for
highlighting) and groups by ancestor (WordNet's mammal orders, for colouring), along the hierarchy's edges."""

from __future__ import annotations

import numpy as np

from georesolver_core.tasks.hierarchy import Hierarchy

OTHER = "other"  # the group of nodes under none of the given roots


def lineage(hierarchy: Hierarchy, index: int) -> dict[str, np.ndarray]:
    """A node's ancestors and descendants along the hierarchy's edges: the ``highlight`` of ``embedding_figure``."""
    if not 0 <= index < hierarchy.n_nodes:
        raise ValueError(f"index must be in [0, {hierarchy.n_nodes - 1}] (got {index})")
    parents: dict[int, list[int]] = {}
    children: dict[int, list[int]] = {}
    for p, q in hierarchy.edges.tolist():
        parents.setdefault(q, []).append(p)
        children.setdefault(p, []).append(q)

    def reach(graph: dict[int, list[int]]) -> np.ndarray:
        seen, todo = set(), [index]
        while todo:
            for n in graph.get(todo.pop(), []):
                if n not in seen:
                    seen.add(n)
                    todo.append(n)
        return np.asarray(sorted(seen), dtype=np.int64)

    return {"ancestors": reach(parents), "descendants": reach(children), "node": np.asarray([index])}


def group_by_ancestor(hierarchy: Hierarchy, roots: dict[str, str]) -> dict[str, np.ndarray]:
    """label -> node indices (sorted): each node goes to the first of ``roots`` (node name -> label, in
    priority order) that is the node itself or one of its ancestors along the hierarchy's edges; nodes
    under none of them go to OTHER, listed last. The mammal orders of WordNet are such groups (the
    children of ``placental.n.01`` and their kin): in the disk they should fill wedges towards the rim.
    Names of ``roots`` missing from the hierarchy are skipped."""
    index = {name: i for i, name in enumerate(hierarchy.nodes)}
    owner = np.full(hierarchy.n_nodes, -1)
    labels = list(dict.fromkeys(roots.values()))
    for name, label in roots.items():
        if name not in index:
            continue
        family = lineage(hierarchy, index[name])
        members = np.concatenate([family["node"], family["descendants"]])
        free = members[owner[members] < 0]
        owner[free] = labels.index(label)
    out = {label: np.flatnonzero(owner == k) for k, label in enumerate(labels)}
    out = {label: idx for label, idx in out.items() if idx.size}
    out[OTHER] = np.flatnonzero(owner < 0)
    return out
