"""A relation kept as its pairs, for closures too large for a dense (N, N) matrix (the WordNet noun
closure: 82,115 nodes, 743,241 pairs, where a bool matrix is 6.7 GB).

``SparseRelation`` holds the pairs sorted by (u, v) and their keys k = u N + v: row u is the slice
``indptr[u]:indptr[u + 1]`` (CSR), and "is w related to u" is a binary search of u N + w among the keys,
which is how negatives are drawn from the nodes NOT related to u (Nickel & Kiela 2017, section 4).

``sparse_reconstruction`` is the published protocol of ``metrics.reconstruction`` (mean rank and MAP,
ties counted the same way) without a dense matrix: for a chunk of rows u, a key increasing with
d(u, w) against all N nodes (``row_keys``: one matmul), and for each related v

    #{w != u : d(u, w) < d(u, v)}  and  #{w != u : d(u, w) <= d(u, v)}

are two binary searches among the sorted keys not above u's farthest relative; the related nodes among
those are counted among u's few related nodes. Memory is (rows, N) per chunk.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from georesolver_core.validate import check_positive_int


@dataclass(frozen=True, eq=False)
class SparseRelation:
    """A directed relation on ``n`` nodes as sorted pairs. pairs (P, 2) int64, keys (P,), indptr (N + 1,)."""

    n: int
    pairs: torch.Tensor  # (P, 2) rows (u, v), sorted by u then v, no duplicates
    keys: torch.Tensor  # (P,) u * n + v, ascending
    indptr: torch.Tensor  # (N + 1,) row u is pairs[indptr[u]:indptr[u + 1]]

    @property
    def shape(self) -> tuple[int, int]:
        return (self.n, self.n)

    @property
    def n_pairs(self) -> int:
        return int(self.keys.numel())

    def to(self, device) -> SparseRelation:
        return SparseRelation(self.n, self.pairs.to(device), self.keys.to(device), self.indptr.to(device))

    def contains(self, u: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        """rel[u, w] for broadcastable index tensors u, w: a binary search of u n + w in the keys. (...) bool."""
        q = u * self.n + w
        if self.keys.numel() == 0:
            return torch.zeros(q.shape, dtype=torch.bool, device=q.device)
        at = torch.searchsorted(self.keys, q.reshape(-1)).clamp_max(self.keys.numel() - 1).reshape(q.shape)
        return self.keys[at] == q

    def degree(self) -> torch.Tensor:
        """(N,) int64: how many nodes each u is related to."""
        return self.indptr[1:] - self.indptr[:-1]

    def dense(self) -> np.ndarray:
        """(N, N) bool: the same relation as a matrix (small graphs and tests only)."""
        rel = np.zeros((self.n, self.n), dtype=bool)
        p = self.pairs.cpu().numpy()
        rel[p[:, 0], p[:, 1]] = True
        return rel


def sparse_relation(pairs, n: int) -> SparseRelation:
    """The SparseRelation of (P, 2) pairs (u, v) on ``n`` nodes; duplicates dropped, ids checked."""
    check_positive_int("n", n, 1, 3_000_000_000)  # keys u n + v stay inside int64
    p = torch.as_tensor(np.asarray(pairs, dtype=np.int64).reshape(-1, 2))  # (P, 2)
    if p.numel() and (int(p.min()) < 0 or int(p.max()) >= n):
        raise ValueError(f"pairs must hold node ids in [0, {n - 1}] (got {int(p.min())}..{int(p.max())})")
    keys = torch.unique(p[:, 0] * n + p[:, 1])  # (P,) sorted, unique
    pairs = torch.stack([keys // n, keys % n], dim=1)  # (P, 2)
    indptr = torch.zeros(n + 1, dtype=torch.int64)
    indptr[1:] = torch.cumsum(torch.bincount(pairs[:, 0], minlength=n), 0)
    return SparseRelation(n, pairs, keys, indptr)


def from_dense(relation) -> SparseRelation:
    """The SparseRelation of a (N, N) bool matrix."""
    rel = np.asarray(relation, dtype=bool)
    if rel.ndim != 2 or rel.shape[0] != rel.shape[1]:
        raise ValueError(f"relation must be a square (N, N) matrix (got shape {rel.shape})")
    return sparse_relation(np.argwhere(rel), rel.shape[0])


# For a fixed row u, d(u, w) is an increasing function of these keys, so they rank the same (ties included):
# the ball's d = arcosh(1 + 2c|u - w|^2 / ((1 - c|u|^2)(1 - c|w|^2))), the plane's |u - w|, the sphere's
# arccos <u, w>. |u - w|^2 comes from the Gram form |u|^2 + |w|^2 - 2 <u, w> (one matmul per chunk): in
# float64 it cancels to ~1e-16 of |u|^2, which reorders only distances equal to ~8 digits.
# Up to this dimension |u - w|^2 is summed from the coordinate differences ((r, N, D) temporaries): a disk
# construction puts deep nodes 1e-12 from each other near the rim, where the Gram form's cancellation
# (~1e-16 of |u|^2) would swamp them.
DIRECT_DIM = 3
_ROW_KEYS = {
    "poincare": lambda sq, yy, g, c: sq / (1.0 - c * yy),
    "euclidean": lambda sq, yy, g, c: sq,
    "sphere": lambda sq, yy, g, c: -g,
}


def row_keys(x: torch.Tensor, y: torch.Tensor, *, geometry: str, c: float = 1.0) -> torch.Tensor:
    """Per row i, a key increasing with d(x_i, y_j) (``_ROW_KEYS``): ranks, not distances. (r, D), (N, D) -> (r, N)."""
    if geometry not in _ROW_KEYS:
        raise ValueError(f"geometry must be one of {sorted(_ROW_KEYS)} (got {geometry!r})")
    xx, yy = (x * x).sum(-1)[:, None], (y * y).sum(-1)[None]  # (r, 1), (1, N)
    gram = x @ y.T  # (r, N)
    if x.shape[-1] <= DIRECT_DIM:  # few coordinates: |u - w|^2 from the differences, no cancellation
        sq = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
    else:
        sq = (xx + yy - 2.0 * gram).clamp_min(0.0)
    return _ROW_KEYS[geometry](sq, yy, gram, c)


def sparse_reconstruction(
    points: torch.Tensor,
    relation: SparseRelation,
    *,
    geometry: str,
    c: float = 1.0,
    rows: int = 16,
    nodes: torch.Tensor | None = None,
) -> dict:
    """Mean rank and MAP of edge reconstruction (``metrics.reconstruction``'s protocol and tie rule) of
    points (N, D) on a SparseRelation, ``rows`` nodes u at a time: never an (N, N) matrix (16 rows: the
    (rows, N) temporaries stay small; 256 rows ran 9x slower per row here on the noun closure).

    ``nodes``: rank only these rows u (each still against all N nodes, exactly): mean rank over their pairs,
    MAP over those with a relation; a sample of rows estimates the full figures (None: every row).

    Per row u only the candidates w with key(u, w) <= the largest key of a related v can count, so only
    those are sorted (all N early in training, a few once u's relatives are its nearest nodes)."""
    check_positive_int("rows", rows, 1, 1_000_000)
    n = relation.n
    if points.shape[0] != n:
        raise ValueError(f"points must have one row per node, {n} (got {points.shape[0]})")
    x = points.detach().double()
    rel = relation.to(x.device)
    if nodes is None:
        nodes = torch.arange(n, device=x.device)
    else:
        nodes = torch.as_tensor(nodes, dtype=torch.int64, device=x.device).flatten()
        if nodes.numel() and (int(nodes.min()) < 0 or int(nodes.max()) >= n):
            raise ValueError(
                f"nodes must be node ids in [0, {n - 1}] (got {int(nodes.min())}..{int(nodes.max())})"
            )
    degree = rel.degree()  # (N,)
    n_pairs = int(degree[nodes].sum())
    if n_pairs == 0:
        return {"mean_rank": math.nan, "map": math.nan}
    rank_sum, ap_sum = 0.0, 0.0
    with torch.no_grad():
        for s in range(0, nodes.numel(), rows):
            ids = nodes[s : s + rows]  # (r,)
            r = ids.numel()
            deg = degree[ids]  # (r,)
            if int(deg.sum()) == 0:
                continue
            u = torch.repeat_interleave(torch.arange(r, device=x.device), deg)  # (p,) local row of each pair
            v = rel.pairs[rel.indptr[ids][u] + _slots(u, r), 1]  # (p,) related node
            key = row_keys(x[ids], x, geometry=geometry, c=c)  # (r, N)
            key[torch.arange(r, device=x.device), ids] = math.inf  # u itself never counts
            k_uv = key[u, v]  # (p,)
            nbr = _padded(u, k_uv, r)  # (r, max deg) related keys, +inf padded
            slot = _slots(u, r)
            nb_lt = (nbr[u] < k_uv[:, None]).sum(1)  # (p,) related nodes strictly before v
            nb_le = (nbr[u] <= k_uv[:, None]).sum(1)
            top = torch.full((r,), -math.inf, dtype=key.dtype, device=x.device).scatter_reduce(
                0, u, k_uv, reduce="amax"
            )  # (r,) the farthest related node of each row
            cu, cw = torch.nonzero(key <= top[:, None], as_tuple=True)  # candidates, grouped by row
            ordered = torch.sort(_padded(cu, key[cu, cw], r), dim=1).values  # (r, max candidates)
            all_lt = torch.searchsorted(ordered, nbr, right=False)[u, slot]  # (p,) #{w : key(u, w) < key(u, v)}
            all_le = torch.searchsorted(ordered, nbr, right=True)[u, slot]
            rank_sum += float((1 + all_lt - nb_lt).double().sum())
            prec = nb_le.double() / all_le.double()  # (p,)
            ap = torch.zeros(r, dtype=torch.float64, device=x.device).index_add_(0, u, prec)
            has = deg > 0
            ap_sum += float((ap[has] / deg[has].double()).sum())
    n_related = int((degree[nodes] > 0).sum())
    return {"mean_rank": rank_sum / n_pairs, "map": ap_sum / n_related}


def _slots(row: torch.Tensor, n_rows: int) -> torch.Tensor:
    """Position of each entry within its row, for entries grouped by row. (p,) -> (p,)."""
    count = torch.bincount(row, minlength=n_rows)
    return torch.arange(row.numel(), device=row.device) - torch.repeat_interleave(
        torch.cumsum(count, 0) - count, count
    )


def _padded(row: torch.Tensor, value: torch.Tensor, n_rows: int) -> torch.Tensor:
    """Values grouped by row as a (n_rows, longest row) matrix, +inf padded."""
    width = int(torch.bincount(row, minlength=n_rows).max()) if row.numel() else 1
    out = torch.full((n_rows, width), math.inf, dtype=value.dtype, device=value.device)
    out[row, _slots(row, n_rows)] = value
    return out
