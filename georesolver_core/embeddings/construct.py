"""A tree placed in the Poincaré disk with no training: Sarkar's construction, as Sala et al. (2018,
"Representation tradeoffs for hyperbolic embeddings", section 3 and Algorithm 1) use it.

Points are complex numbers z in the unit disk (c = 1). The root sits at 0 and its m children on the circle
of hyperbolic radius ``tau`` at angles 2 pi k / m. Every other node x is handled in its own frame: the
Möbius isometry

    f_a(z) = (z - a) / (1 - conj(a) z)           (f_a(a) = 0, inverse f_{-a})

moves x to the centre; its parent lands at some angle theta, and x's m children go at hyperbolic distance
``tau`` and angles theta + 2 pi k / (m + 1), k = 1..m: evenly spread on a cone around x, away from the
parent. Mapping back with f_{-z_x} keeps every distance, so each edge has length exactly tau and siblings
stay apart, however deep. Hyperbolic radius tau is Euclidean radius tanh(tau / 2).

``tau`` is the scale knob: the larger it is, the closer the embedding is to the tree metric (Sala et al.:
distortion 1 + eps needs tau ~ log(degree) / eps), and the closer the deep nodes are to the rim, where
float64 stops resolving them. A node at depth k sits near hyperbolic radius k tau, i.e. Euclidean
1 - |z| ~ 2 e^{-k tau}: with float64's 1.1e-16 the deepest level must keep k tau below ~36 (the noun
tree is 19 levels deep, so tau ~ 1.5 at most), and distance comparisons fail well before that, since
1 - |z|^2 is the difference of two numbers near 1.

A directed acyclic hierarchy (WordNet: a synset can have several hypernyms) is first reduced to a spanning
tree: each node keeps one parent, the one nearest the root (``spanning_parents``); several roots hang
below a virtual centre at the origin.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from georesolver_core.validate import check_range

TAU_RANGE = (0.05, 20.0)


def spanning_parents(n: int, direct: np.ndarray) -> np.ndarray:
    """One parent per node from (H, 2) (child, parent) edges: the parent with the smallest depth (ties: the
    smaller id), found breadth first from the nodes without parents. (N,) int64, -1 for a root."""
    direct = np.asarray(direct, dtype=np.int64).reshape(-1, 2)
    children: list[list[int]] = [[] for _ in range(n)]
    has_parent = np.zeros(n, dtype=bool)
    for u, p in sorted(direct.tolist(), key=lambda e: (e[1], e[0])):
        children[p].append(u)
        has_parent[u] = True
    parent = np.full(n, -1, dtype=np.int64)
    seen = ~has_parent
    queue = deque(int(r) for r in np.flatnonzero(~has_parent))
    while queue:  # breadth first: a node is claimed by its first parent reached, one of the shallowest
        p = queue.popleft()
        for u in children[p]:
            if not seen[u]:
                seen[u], parent[u] = True, p
                queue.append(u)
    if not seen.all():
        raise ValueError(f"direct must be acyclic: {int((~seen).sum())} nodes are not below any root")
    return parent


def _mobius(z: np.ndarray, a: np.ndarray) -> np.ndarray:
    """f_a(z) = (z - a) / (1 - conj(a) z): the disk isometry taking a to 0."""
    return (z - a) / (1.0 - np.conj(a) * z)


def sarkar_construction(parent: np.ndarray, *, tau: float) -> np.ndarray:
    """Sarkar's construction of the tree given by ``parent`` ((N,) int, -1 for roots) in the Poincaré disk
    with every edge of hyperbolic length ``tau``. Returns (N, 2) float64 points (c = 1).

    Level by level: all children of one level are placed with a few vectorised complex operations."""
    check_range("tau", tau, *TAU_RANGE)
    parent = np.asarray(parent, dtype=np.int64)
    n = parent.shape[0]
    roots = np.flatnonzero(parent < 0)
    if roots.size == 0:
        raise ValueError("parent must mark at least one root with -1")
    r = np.tanh(tau / 2.0)  # Euclidean radius of hyperbolic radius tau
    z = np.zeros(n, dtype=np.complex128)
    placed = np.zeros(n, dtype=bool)
    if roots.size == 1:
        z[roots] = 0.0
        level = roots
    else:  # several roots: around a virtual centre at the origin, like a root's children
        z[roots] = r * np.exp(2j * np.pi * np.arange(roots.size) / roots.size)
        level = roots
    placed[roots] = True
    order = np.argsort(parent, kind="stable")  # children grouped by parent, ascending id within
    sorted_parent = parent[order]
    start = np.searchsorted(sorted_parent, np.arange(n), side="left")
    count = np.searchsorted(sorted_parent, np.arange(n), side="right") - start  # (N,) children per node
    single_root = roots.size == 1
    while level.size:
        m = count[level]
        has = m > 0
        xs, m = level[has], m[has]
        if xs.size == 0:
            break
        kids = order[np.concatenate([np.arange(start[x], start[x] + k) for x, k in zip(xs, m, strict=True)])]
        owner = np.repeat(np.arange(xs.size), m)  # which x each kid belongs to
        k = np.arange(kids.size) - np.repeat(np.cumsum(m) - m, m)  # (kids,) slot among siblings, 0..m-1
        zx = z[xs]
        par = parent[xs]
        top = par < 0
        # the parent's direction in x's frame; a root has none (theta 0) and no slot reserved for it
        theta = np.where(top, 0.0, np.angle(_mobius(z[np.where(top, xs, par)], zx)))
        if not single_root:  # the virtual centre is every root's parent
            theta = np.where(top, np.angle(_mobius(np.zeros_like(zx), zx)), theta)
            top = np.zeros_like(top)
        slots = np.where(top, m, m + 1)
        first = np.where(top, 0, 1)
        phi = theta[owner] + 2.0 * np.pi * (k + first[owner]) / slots[owner]
        z[kids] = _mobius(r * np.exp(1j * phi), -zx[owner])  # back from x's frame: f_{-z_x}
        placed[kids] = True
        level = kids
    if not placed.all():
        raise ValueError("parent must describe a forest: some nodes are not below any root")
    # past hyperbolic radius ~37 float64 rounds |z| to 1 (the rim, infinitely far): keep such points a
    # float64 step inside it, where they are finite but no longer told apart (the precision wall)
    norm = np.abs(z)
    cap = 1.0 - 2.0 * float(np.finfo(np.float64).eps)
    z = np.where(norm > cap, z * (cap / np.maximum(norm, cap)), z)
    return np.stack([z.real, z.imag], axis=1)


def construct_closure(closure, *, tau: float) -> np.ndarray:
    """Sarkar's construction of a WordNet closure's spanning tree (its direct hypernym edges). (N, 2)."""
    return sarkar_construction(spanning_parents(closure.n_nodes, closure.direct), tau=tau)
