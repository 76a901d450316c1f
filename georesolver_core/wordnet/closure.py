"""Transitive closures of the WordNet noun hierarchy, as Nickel & Kiela (2017, section 4) embed them.

Which edges: a synset's hypernym pointers ``@`` and instance-hypernym pointers ``@i`` (an instance such as
``einstein.n.01`` has ``@i`` to ``physicist.n.01``), followed transitively. The closure holds one pair
``(u, a)`` for every synset ``u`` and every ``a`` reachable from ``u`` by those pointers (``a != u``): the
published ``id1,id2`` pairs, ``id1`` the hyponym. This is what the published ``transitive_closure.py``
builds with NLTK (hypernym closure of every synset, plus each instance's instance hypernyms and their
hypernym closures). Measured on WordNet 3.0: 82,115 nouns and 743,241 pairs, the
paper's counts. (NLTK's per-synset closure, which does not follow an ``@i`` met after an ``@``, gives 742,618.)

The mammal closure follows the published recipe (its Makefile): every noun-closure pair whose hyponym is
below ``mammal.n.01``, minus the pairs whose ancestor is one of ``MAMMAL_FILTER`` (the synsets above
``mammal.n.01`` and non-taxonomic groupings such as ``work_animal.n.01``) and the pairs whose hyponym is
``tusker.n.01`` or ``female_mammal.n.01``. On WordNet 3.0: 1,181 nodes and 6,541 pairs (one node,
``pack_animal.n.01``, is an ancestor of a mammal without being one). The plain subtree (nodes below
``mammal.n.01`` and the pairs among them, ``subtree_closure``) has 1,182 nodes and 6,542 pairs.

One example, a three-synset chain ``dog -@-> canine -@-> carnivore``::

    pairs  (dog, canine), (dog, carnivore), (canine, carnivore)
"""

from __future__ import annotations

import csv
import io
import os
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from georesolver_core.tasks.hierarchy import Hierarchy
from georesolver_core.wordnet.database import line_of, read_synsets, sense_names

FOLLOWED = ("@", "@i")  # hypernym, instance hypernym
MAMMAL_ROOT = "mammal.n.01"
# The published mammal recipe drops pairs whose ancestor is one of these, and every pair of MAMMAL_DROP.
MAMMAL_FILTER = frozenset(
    "living_thing.n.01 object.n.01 organism.n.01 animal.n.01 entity.n.01 physical_entity.n.01 whole.n.02 "
    "vertebrate.n.01 chordate.n.01 beast_of_burden.n.01 work_animal.n.01 female.n.01 fissipedia.n.01 pup.n.01 "
    "abstraction.n.06 group.n.01 cub.n.03 young.n.01 young_mammal.n.01 domestic_animal.n.01 racer.n.03 "
    "male.n.01".split()
)
MAMMAL_DROP = frozenset({"tusker.n.01", "female_mammal.n.01"})
ASSETS = Path(__file__).resolve().parents[2] / "assets"
MAMMALS_CSV = ASSETS / "wordnet_mammals.csv"


@dataclass(frozen=True, eq=False)
class Closure:
    """A transitive closure over named synsets.

    ``pairs`` (P, 2) int64 rows (hyponym, ancestor): the relation that is embedded and reconstructed.
    ``direct`` (H, 2) int64 rows (hyponym, direct hypernym) among the nodes: the pointers themselves,
    which give each node's depth (hops from the root) for drawing.
    """

    name: str
    nodes: tuple[str, ...]  # synset names, index = node id
    pairs: np.ndarray  # (P, 2)
    direct: np.ndarray  # (H, 2)

    @property
    def n_nodes(self) -> int:
        return len(self.nodes)

    @property
    def n_pairs(self) -> int:
        return int(self.pairs.shape[0])

    def summary(self) -> str:
        return f"{self.name}: {self.n_nodes:,} nodes, {self.n_pairs:,} closure pairs"

    def relation(self) -> np.ndarray:
        """(N, N) bool: ``rel[u, a]`` when ``a`` is an ancestor of ``u`` (the published, directed relation)."""
        rel = np.zeros((self.n_nodes, self.n_nodes), dtype=bool)
        rel[self.pairs[:, 0], self.pairs[:, 1]] = True
        return rel

    def depth(self) -> np.ndarray:
        """(N,) int64: fewest direct-hypernym hops from a node without hypernyms (the root)."""
        n = self.n_nodes
        children: list[list[int]] = [[] for _ in range(n)]
        has_parent = np.zeros(n, dtype=bool)
        for u, p in self.direct.tolist():
            children[p].append(u)
            has_parent[u] = True
        depth = np.full(n, -1, dtype=np.int64)
        queue = deque(int(r) for r in np.flatnonzero(~has_parent))
        for r in queue:
            depth[r] = 0
        while queue:
            p = queue.popleft()
            for u in children[p]:
                if depth[u] < 0:
                    depth[u] = depth[p] + 1
                    queue.append(u)
        return depth

    def canonical(self) -> Closure:
        """The same closure with nodes ordered by depth, then most children first, then name: the top
        node (``mammal.n.01``) is node 0, so "the first root" of the lab is the hierarchy's top."""
        depth = self.depth()
        children = np.bincount(self.direct[:, 1], minlength=self.n_nodes) if self.direct.size else 0 * depth
        order = sorted(range(self.n_nodes), key=lambda i: (depth[i], -children[i], self.nodes[i]))
        new = np.empty(self.n_nodes, dtype=np.int64)
        new[order] = np.arange(self.n_nodes)
        return Closure(self.name, tuple(self.nodes[i] for i in order), new[self.pairs], new[self.direct])

    def to_hierarchy(self) -> Hierarchy:
        """The embedding lab's record: the direct pointers as (parent, child) edges (what a figure draws and
        the distortion measures against), depth from them. Train with ``relation=self.relation()``: the
        closure pairs are then the positives and the relation mean rank and MAP are measured on."""
        return Hierarchy(name=self.name, nodes=self.nodes, edges=self.direct[:, ::-1].copy(), depth=self.depth())


def hypernym_graph(path: str | os.PathLike | None = None) -> tuple[list[str], list[list[int]]]:
    """Noun synset names (``lemma.n.NN``) and, per synset, the indices its ``@`` / ``@i`` pointers reach."""
    synsets = read_synsets("noun", path)
    names = sense_names("noun", path)
    offsets = sorted(synsets)
    index = {off: i for i, off in enumerate(offsets)}
    parents = []
    for off in offsets:
        targets = {p.offset for p in synsets[off].pointers if p.symbol in FOLLOWED and p.pos == "n"}
        if off in targets:
            raise ValueError(
                f"malformed WordNet database: {line_of(synsets[off], path)}: a synset is its own hypernym"
            )
        missing = sorted(t for t in targets if t not in index)
        if missing:
            raise ValueError(
                f"malformed WordNet database: {line_of(synsets[off], path)}: a hypernym pointer names offset "
                f"{missing[0]:08d}, which no synset has"
            )
        parents.append(sorted(index[t] for t in targets))
    try:
        ancestors(parents)  # refuses a cycle before any closure is built from the graph
    except HypernymCycle as cycle:
        where = ", ".join(f"{names[offsets[u]]} ({line_of(synsets[offsets[u]], path)})" for u in cycle.nodes[:4])
        raise ValueError(f"malformed WordNet database: hypernym pointers form a cycle through {where}") from None
    return [names[off] for off in offsets], parents


class HypernymCycle(ValueError):
    """Parent pointers that come back to where they started: the closure of a cycle never ends."""

    def __init__(self, nodes: list[int]):
        super().__init__(f"parents form a cycle through nodes {nodes[:8]}: the graph must be acyclic")
        self.nodes = nodes


def ancestors(parents: list[list[int]]) -> list[frozenset[int]]:
    """Per node, every node reachable by following ``parents`` (itself excluded); the graph must be a DAG."""
    out: list[frozenset[int] | None] = [None] * len(parents)
    open_: set[int] = set()  # nodes whose set is being built: meeting one again is a cycle
    for start in range(len(parents)):
        stack = [start]
        while stack:  # iterative post-order: a node's set is built once its parents' sets are
            u = stack[-1]
            todo = [p for p in parents[u] if out[p] is None]
            if todo and u not in open_:
                open_.add(u)
                back = [p for p in todo if p in open_]
                if back:
                    raise HypernymCycle([back[0], *[v for v in stack if v in open_][::-1]])
                stack.extend(todo)
                continue
            if todo:  # u's parents were pushed and came back unfinished: one of them leads to u
                raise HypernymCycle([u, *todo])
            stack.pop()
            open_.discard(u)
            if out[u] is None:
                acc: set[int] = set(parents[u])
                for p in parents[u]:
                    acc |= out[p]
                out[u] = frozenset(acc)
    return out  # type: ignore[return-value]


def closure_from_graph(names: list[str], parents: list[list[int]], *, name: str) -> Closure:
    """The transitive closure of a hypernym graph; nodes without any relation are dropped (none in WordNet)."""
    anc = ancestors(parents)
    keep = sorted({u for u, a in enumerate(anc) if a} | {p for a in anc for p in a})
    return _restrict(names, parents, anc, keep, name=name)


def _restrict(names, parents, anc, keep: list[int], *, name: str) -> Closure:
    new = {u: i for i, u in enumerate(keep)}
    pairs = [(new[u], new[a]) for u in keep for a in sorted(anc[u]) if a in new]
    direct = [(new[u], new[p]) for u in keep for p in parents[u] if p in new]
    return Closure(
        name=name,
        nodes=tuple(names[u] for u in keep),
        pairs=np.asarray(pairs, dtype=np.int64).reshape(-1, 2),
        direct=np.asarray(direct, dtype=np.int64).reshape(-1, 2),
    )


def subtree_closure(names: list[str], parents: list[list[int]], root: str, *, name: str) -> Closure:
    """The closure restricted to ``root`` and every synset below it (pairs with both ends inside)."""
    try:
        r = names.index(root)
    except ValueError:
        raise ValueError(f"root must be a synset name such as {MAMMAL_ROOT!r} (got {root!r})") from None
    anc = ancestors(parents)
    keep = sorted([u for u, a in enumerate(anc) if r in a] + [r])
    return _restrict(names, parents, anc, keep, name=name)


def noun_closure(path: str | os.PathLike | None = None) -> Closure:
    """The WordNet 3.0 noun closure (82,115 nodes), read from the database files (no download)."""
    names, parents = hypernym_graph(path)
    return closure_from_graph(names, parents, name="WordNet nouns (closure)")


def mammal_closure(path: str | os.PathLike | None = None) -> Closure:
    """The published mammal closure (module docstring), read from the database files (no download)."""
    names, parents = hypernym_graph(path)
    return filtered_closure(
        names, parents, MAMMAL_ROOT, MAMMAL_FILTER, MAMMAL_DROP, name="WordNet mammals (closure)"
    )


def filtered_closure(
    names: list[str], parents: list[list[int]], root: str, ancestors_out, hyponyms_out, *, name: str
) -> Closure:
    """Closure pairs whose hyponym is below ``root``, less those to ``ancestors_out`` or from ``hyponyms_out``."""
    try:
        r = names.index(root)
    except ValueError:
        raise ValueError(f"root must be a synset name such as {MAMMAL_ROOT!r} (got {root!r})") from None
    anc = ancestors(parents)
    drop_a = {i for i, n in enumerate(names) if n in ancestors_out}
    pairs = {
        (u, a)
        for u, au in enumerate(anc)
        if r in au and names[u] not in hyponyms_out
        for a in au
        if a not in drop_a
    }
    keep = sorted({x for p in pairs for x in p})
    out = _restrict(names, parents, anc, keep, name=name)
    new = {u: i for i, u in enumerate(keep)}
    wanted = {(new[u], new[a]) for u, a in pairs}
    mask = np.asarray([tuple(p) in wanted for p in out.pairs.tolist()], dtype=bool)
    direct = np.asarray([tuple(p) in wanted for p in out.direct.tolist()], dtype=bool)
    return Closure(name=name, nodes=out.nodes, pairs=out.pairs[mask], direct=out.direct[direct]).canonical()


def write_closure_csv(closure: Closure) -> str:
    """CSV text: ``id1,id2,direct`` per closure pair (hyponym, ancestor, 1 when a direct pointer)."""
    direct = {tuple(e) for e in closure.direct.tolist()}
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["id1", "id2", "direct"])
    for u, a in closure.pairs.tolist():
        w.writerow([closure.nodes[u], closure.nodes[a], int((u, a) in direct)])
    return buf.getvalue()


def read_closure_csv(text: str, *, name: str) -> Closure:
    """The inverse of ``write_closure_csv``: nodes in order of first appearance."""
    rows = list(csv.DictReader(io.StringIO(text)))
    if not rows or {"id1", "id2", "direct"} - set(rows[0]):
        raise ValueError("a closure CSV needs the columns id1,id2,direct and at least one row")
    index: dict[str, int] = {}
    for r in rows:
        index.setdefault(r["id1"], len(index))
        index.setdefault(r["id2"], len(index))
    pairs = np.asarray([(index[r["id1"]], index[r["id2"]]) for r in rows], dtype=np.int64)
    direct = pairs[np.asarray([r["direct"] == "1" for r in rows], dtype=bool)]
    return Closure(name=name, nodes=tuple(index), pairs=pairs, direct=direct).canonical()


def load_mammals() -> Closure:
    """The shipped mammal closure (``assets/wordnet_mammals.csv``, built by ``mammal_closure``)."""
    return read_closure_csv(MAMMALS_CSV.read_text(encoding="utf-8"), name="WordNet mammals (closure)")
