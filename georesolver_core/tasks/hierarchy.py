"""Hierarchies to embed (paper section 5.2(A): hyperbolic space fits trees in few dimensions).

Three sources, one record. A ``Hierarchy`` is a directed acyclic graph of ``parent -> child``
edges over named nodes, with each node's depth (hops from the nearest root) and, computed on
first use, the tree distance (hops in the undirected graph) between every pair of nodes.

One example, ``balanced_tree(2, 2)``::

    nodes  ("root", "0", "1", "0.0", "0.1", "1.0", "1.1")
    edges  [[0, 1], [0, 2], [1, 3], [1, 4], [2, 5], [2, 6]]
    depth  [0, 1, 1, 2, 2, 2, 2]
    tree_distance[3, 5] = 4          # 0.0 -> 0 -> root -> 1 -> 1.0

Sources: a synthetic tree (branching factor, depth), a hierarchy of scikit-learn's bundled digits
by agglomerative (Ward) clustering, and an uploaded CSV edge list ``parent,child``, validated.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

from georesolver_core.validate import check_positive_int

MAX_NODES = 5000  # the uploaded-file limit: the dense (N, N) tree-distance matrix stays under 50 MB
MAX_NAME_LEN = 80  # characters per node name: labels stay drawable, and a name cannot carry a document
MAX_CSV_BYTES = 1_000_000  # an edge list of MAX_NODES nodes with long names fits; checked before parsing
_UNREACHABLE = -1  # tree_distance entry of two nodes in different components of a forest


@dataclass(frozen=True, eq=False)
class Hierarchy:
    """Named nodes and parent -> child edges of a DAG (usually a tree)."""

    name: str  # shown in the UI, e.g. "binary tree (b=2, depth 4)"
    nodes: tuple[str, ...]  # node names, index = node id
    edges: np.ndarray  # (E, 2) int64, rows (parent, child)
    depth: np.ndarray  # (N,) int64, hops from the nearest root
    notes: tuple[str, ...] = field(default=())  # what parsing changed (e.g. duplicate rows dropped)

    @property
    def n_nodes(self) -> int:
        return len(self.nodes)

    @property
    def n_edges(self) -> int:
        return int(self.edges.shape[0])

    @cached_property
    def adjacency(self) -> np.ndarray:
        """(N, N) bool: u and v are joined by an edge (either direction). The relation we reconstruct."""
        a = np.zeros((self.n_nodes, self.n_nodes), dtype=bool)
        a[self.edges[:, 0], self.edges[:, 1]] = True
        a[self.edges[:, 1], self.edges[:, 0]] = True
        return a

    @cached_property
    def pairs(self) -> np.ndarray:
        """(2E, 2) int64: every edge in both directions, the positives of the training loss."""
        return np.concatenate([self.edges, self.edges[:, ::-1]], axis=0).astype(np.int64)

    @cached_property
    def tree_distance(self) -> np.ndarray:
        """(N, N) int16: hops between u and v in the undirected graph; -1 when not connected.

        int16 suffices because a path has at most MAX_NODES - 1 < 32767 hops.
        """
        if self._is_rooted_tree():
            return _tree_distance_by_subtrees(self.edges, self.n_nodes)
        n = self.n_nodes
        graph = csr_matrix((np.ones(self.n_edges), (self.edges[:, 0], self.edges[:, 1])), shape=(n, n))
        out = np.empty((n, n), dtype=np.int16)
        step = max(1, 2_000_000 // max(n, 1))  # rows per chunk: the float64 block stays ~16 MB
        for start in range(0, n, step):
            rows = np.arange(start, min(n, start + step))
            # Dijkstra: scipy's default ("auto") picks a far slower method for these sizes.
            d = shortest_path(graph, method="D", directed=False, unweighted=True, indices=rows)  # (s, N)
            out[rows] = np.where(np.isfinite(d), d, _UNREACHABLE).astype(np.int16)
        return out

    def _is_rooted_tree(self) -> bool:
        return self.n_edges == self.n_nodes - 1 and len(self.roots) == 1

    @property
    def roots(self) -> np.ndarray:
        return np.flatnonzero(self.depth == 0)

    @property
    def leaves(self) -> np.ndarray:
        has_child = np.zeros(self.n_nodes, dtype=bool)
        has_child[self.edges[:, 0]] = True
        return np.flatnonzero(~has_child)

    @cached_property
    def fingerprint(self) -> str:
        """A short content hash: equal hierarchies share it (cache keys, reset detection)."""
        h = hashlib.sha1()
        h.update("\x1f".join(self.nodes).encode())
        h.update(np.ascontiguousarray(self.edges).tobytes())
        return h.hexdigest()[:16]

    def summary(self) -> str:
        return (
            f"{self.name}: {self.n_nodes} nodes, {self.n_edges} edges, {len(self.roots)} root(s), "
            f"{len(self.leaves)} leaves, max depth {int(self.depth.max()) if self.n_nodes else 0}"
        )

    def edge_table(self) -> list[tuple[str, str]]:
        """(parent name, child name) rows, e.g. to download the hierarchy as CSV."""
        return [(self.nodes[p], self.nodes[c]) for p, c in self.edges.tolist()]


def _tree_distance_by_subtrees(edges: np.ndarray, n: int) -> np.ndarray:
    """All-pairs hops in a rooted tree in O(N^2) vector work: d(v, .) = d(parent, .) + 1, minus 2
    inside v's subtree, which is one contiguous column range once columns follow a DFS preorder."""
    children: list[list[int]] = [[] for _ in range(n)]
    parent = np.full(n, -1, dtype=np.int64)
    for p, c in edges.tolist():
        children[p].append(c)
        parent[c] = p
    root = int(np.flatnonzero(parent < 0)[0])
    preorder, stack = [], [root]
    while stack:
        v = stack.pop()
        preorder.append(v)
        stack.extend(reversed(children[v]))
    pos = np.empty(n, dtype=np.int64)
    pos[preorder] = np.arange(n)
    size = np.ones(n, dtype=np.int64)
    for v in reversed(preorder):
        if parent[v] >= 0:
            size[parent[v]] += size[v]
    depth = np.zeros(n, dtype=np.int16)
    for v in preorder[1:]:
        depth[v] = depth[parent[v]] + 1
    out = np.empty((n, n), dtype=np.int16)  # rows: node id, columns: preorder position
    out[root] = depth[preorder]
    for v in preorder[1:]:
        row = out[parent[v]] + 1
        row[pos[v] : pos[v] + size[v]] -= 2
        out[v] = row
    return out[:, pos]  # columns back to node ids


def from_edges(names: list[str], edges: list[tuple[int, int]], *, name: str, notes=()) -> Hierarchy:
    """Build a Hierarchy from node names and (parent, child) index pairs; rejects self-loops and cycles."""
    n = len(names)
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)  # (E, 2)
    if e.size == 0:
        raise ValueError("a hierarchy needs at least one parent -> child edge (got none)")
    loops = np.flatnonzero(e[:, 0] == e[:, 1])
    if loops.size:
        raise ValueError(f"self-loops are not allowed: {names[e[loops[0], 0]]!r} is its own parent")
    if n < 2:
        raise ValueError(f"a hierarchy needs at least 2 nodes (got {n})")
    if n > MAX_NODES:
        raise ValueError(f"a hierarchy may have at most {MAX_NODES} nodes (got {n})")
    if e.min() < 0 or e.max() >= n:
        raise ValueError(
            f"edge endpoints must be node indices in [0, {n - 1}] (got {int(e.min())}..{int(e.max())})"
        )
    depth = _depths_or_cycle(n, e, names)
    return Hierarchy(name=name, nodes=tuple(names), edges=e, depth=depth, notes=tuple(notes))


def _depths_or_cycle(n: int, edges: np.ndarray, names: list[str]) -> np.ndarray:
    """Kahn's topological order; depth = min over parents of depth + 1. A leftover node means a cycle."""
    children: list[list[int]] = [[] for _ in range(n)]
    parents: list[list[int]] = [[] for _ in range(n)]
    indeg = np.zeros(n, dtype=np.int64)
    for p, c in edges.tolist():
        children[p].append(c)
        parents[c].append(p)
        indeg[c] += 1
    depth = np.full(n, -1, dtype=np.int64)
    queue = [int(v) for v in np.flatnonzero(indeg == 0)]
    for v in queue:
        depth[v] = 0
    head = 0
    remaining = indeg.copy()
    while head < len(queue):
        u = queue[head]
        head += 1
        for c in children[u]:
            depth[c] = depth[u] + 1 if depth[c] < 0 else min(depth[c], depth[u] + 1)
            remaining[c] -= 1
            if remaining[c] == 0:
                queue.append(c)
    if len(queue) < n:
        raise ValueError(f"the edges must not form a cycle (found {_one_cycle(remaining, parents, names)})")
    return depth


def _one_cycle(remaining: np.ndarray, parents: list[list[int]], names: list[str]) -> str:
    """Walk parents inside the unsorted remainder until a node repeats: that walk closes a cycle."""
    start = int(np.flatnonzero(remaining > 0)[0])
    seen: dict[int, int] = {}
    path = []
    v = start
    while v not in seen:
        seen[v] = len(path)
        path.append(v)
        v = next(p for p in parents[v] if remaining[p] > 0)
    cycle = path[seen[v] :][::-1]  # parent -> child order
    shown = [names[i] for i in cycle[:8]] + (["..."] if len(cycle) > 8 else [])
    return " -> ".join(shown + [names[cycle[0]]])


def balanced_tree(branching: int = 2, depth: int = 4) -> Hierarchy:
    """The complete tree with ``branching`` children per node and ``depth`` levels below the root.

    (b^(depth+1) - 1)/(b - 1) nodes: branching 2, depth 4 is the 31-node binary tree. Names are
    paths: "root", "0", "1", "0.0", ...
    """
    check_positive_int("branching", branching, 1, 20)
    check_positive_int("depth", depth, 1, 20)
    n = sum(branching**k for k in range(depth + 1))
    if n > MAX_NODES:
        raise ValueError(
            f"branching={branching}, depth={depth} gives {n} nodes; at most {MAX_NODES} are allowed "
            "(lower the branching factor or the depth)"
        )
    names, edges, level = ["root"], [], [0]
    for _ in range(depth):
        nxt = []
        for p in level:
            for j in range(branching):
                names.append(f"{j}" if p == 0 else f"{names[p]}.{j}")
                edges.append((p, len(names) - 1))
                nxt.append(len(names) - 1)
        level = nxt
    return from_edges(names, edges, name=f"tree (branching {branching}, depth {depth})")


def digits_hierarchy(n_samples: int = 60, seed: int = 0) -> Hierarchy:
    """Ward agglomerative clustering of ``n_samples`` images of scikit-learn's bundled 8x8 digits.

    Leaves are images ("7 #123": label and index in the dataset), internal nodes are merges
    ("c12: 9 images, 78% 7"); the root is the last merge. A full binary tree of 2n - 1 nodes.
    """
    from sklearn.cluster import AgglomerativeClustering
    from sklearn.datasets import load_digits

    check_positive_int("n_samples", n_samples, 4, 1000)
    data = load_digits()
    rng = np.random.default_rng(seed)
    idx = np.sort(rng.choice(len(data.target), size=n_samples, replace=False))
    x, y = data.data[idx], data.target[idx]
    merges = AgglomerativeClustering(linkage="ward", compute_full_tree=True).fit(x).children_  # (n-1, 2)
    names = [f"{int(y[i])} #{int(idx[i])}" for i in range(n_samples)]
    members: list[list[int]] = [[i] for i in range(n_samples)]
    edges = []
    for k, (a, b) in enumerate(merges.tolist()):
        node = n_samples + k
        members.append(members[a] + members[b])
        labels = y[members[node]]
        top = int(np.bincount(labels, minlength=10).argmax())
        share = float(np.mean(labels == top))
        names.append(f"c{k}: {len(labels)} images, {share:.0%} {top}")
        edges += [(node, a), (node, b)]
    # Leaves were indexed first; put the root first so that node 0 is the root, as in the other sources.
    order = np.r_[len(names) - 1 : n_samples - 1 : -1, 0:n_samples]  # internal nodes root-first, then leaves
    new_id = np.empty(len(names), dtype=np.int64)
    new_id[order] = np.arange(len(names))
    return from_edges(
        [names[i] for i in order],
        [(int(new_id[p]), int(new_id[c])) for p, c in edges],
        name=f"digits ({n_samples} images, Ward clustering)",
    )


def from_edge_list_csv(data: bytes | str, *, name: str = "uploaded edge list") -> Hierarchy:
    """Parse and validate a CSV with header ``parent,child`` (one edge per row).

    Rejected, with a message saying what to fix: files over MAX_CSV_BYTES (before any parsing),
    undecodable or empty files, other columns, empty names, names over MAX_NAME_LEN characters or with control
    characters, self-loops, cycles, more than MAX_NODES distinct nodes. Duplicate rows are dropped
    (and noted). A child with several parents is allowed (a DAG); depth is then the shortest path.
    """
    import pandas as pd

    size = len(data.encode() if isinstance(data, str) else data)
    if size > MAX_CSV_BYTES:
        raise ValueError(f"the file has {size:,} bytes; at most {MAX_CSV_BYTES:,} are allowed")
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as err:
            raise ValueError(f"the file must be UTF-8 text (undecodable byte at position {err.start})") from None
    if not data.strip():
        raise ValueError("the file is empty: expected a header line 'parent,child' and one edge per line")
    try:
        df = pd.read_csv(io.StringIO(data), dtype=str, keep_default_na=False, skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise ValueError(f"the file is not a readable CSV ({str(err).strip()})") from None
    cols = [str(c).strip().lower() for c in df.columns]
    if cols != ["parent", "child"]:
        raise ValueError(f"the CSV must have exactly the columns 'parent,child' (got columns {list(df.columns)})")
    df.columns = cols
    if df.empty:
        raise ValueError("the file has a header but no edges: add one 'parent,child' line per edge")
    df = df.apply(lambda s: s.str.strip())
    blank = np.flatnonzero(((df["parent"] == "") | (df["child"] == "")).to_numpy())
    if blank.size:
        raise ValueError(f"every row needs a parent and a child name (row {int(blank[0]) + 2} has an empty cell)")
    too_long = np.flatnonzero((df["parent"].str.len().clip(lower=df["child"].str.len()) > MAX_NAME_LEN).to_numpy())
    if too_long.size:
        raise ValueError(
            f"node names may have at most {MAX_NAME_LEN} characters (row {int(too_long[0]) + 2} has a longer one)"
        )
    control = np.flatnonzero((df["parent"] + df["child"]).str.contains(r"[\x00-\x1f\x7f]").to_numpy())
    if control.size:  # a NUL, a line break in a quoted cell, ...: invisible or breaking in every label
        raise ValueError(f"node names must not contain control characters (row {int(control[0]) + 2} has one)")
    notes = []
    n_dup = int(df.duplicated().sum())
    if n_dup:
        df = df.drop_duplicates()
        notes.append(f"dropped {n_dup} duplicate row(s)")
    names = list(dict.fromkeys(df["parent"].tolist() + df["child"].tolist()))  # first-seen order, parents first
    if len(names) > MAX_NODES:
        raise ValueError(f"the file has {len(names)} distinct nodes; at most {MAX_NODES} are allowed")
    index = {v: i for i, v in enumerate(names)}
    edges = [(index[p], index[c]) for p, c in zip(df["parent"], df["child"], strict=True)]
    return from_edges(names, edges, name=name, notes=notes)


@dataclass(frozen=True)
class HierarchySource:
    """A registry entry: a label for the UI and the builder."""

    label: str
    description: str
    build: Callable[..., Hierarchy]


HIERARCHIES: dict[str, HierarchySource] = {
    "tree": HierarchySource(
        "Synthetic tree", "complete tree with a given branching factor and depth", balanced_tree
    ),
    "digits": HierarchySource(
        "Digits (Ward clustering)",
        "scikit-learn's bundled 8x8 digit images merged bottom-up by agglomerative clustering",
        digits_hierarchy,
    ),
    "csv": HierarchySource(
        "Edge list (CSV)", "a 'parent,child' CSV: the bundled taxonomy or your own upload", from_edge_list_csv
    ),
}
