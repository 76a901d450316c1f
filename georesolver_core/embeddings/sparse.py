"""A relation kept as its pairs, for closures too large for a dense (N, N) matrix (the WordNet noun
closure: 82,115 nodes, 743,241 pairs, where a bool matrix is 6.7 GB).

``SparseRelation`` holds the pairs sorted by (u, v) and their keys k = u N + v: row u is the slice
``indptr[u]:indptr[u + 1]`` (CSR), and "is w related to u" is a binary search of u N + w among the keys,
which is how negatives are drawn from the nodes NOT related to u (Nickel & Kiela 2017, section 4).

``sparse_reconstruction`` is the published protocol of ``metrics.reconstruction`` (mean rank and MAP,
ties counted the same way) without a dense matrix: the distances from a chunk of rows u to all N nodes
are computed, sorted per row, and for each related v

    #{w != u : d(u, w) < d(u, v)}  and  #{w != u : d(u, w) <= d(u, v)}

are two binary searches in the sorted row; the related nodes among those are counted among u's few
related nodes. Memory is (rows, N) per chunk; time is N^2 distances plus N sorts of N values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from georesolver_core.geometry import pairwise_distance
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


def sparse_reconstruction(
    points: torch.Tensor, relation: SparseRelation, *, geometry: str, c: float = 1.0, rows: int = 256
) -> dict:
    """Mean rank and MAP of edge reconstruction (``metrics.reconstruction``'s protocol and tie rule) of
    points (N, D) on a SparseRelation, ``rows`` nodes u at a time: never an (N, N) matrix."""
    check_positive_int("rows", rows, 1, 1_000_000)
    n = relation.n
    if points.shape[0] != n:
        raise ValueError(f"points must have one row per node, {n} (got {points.shape[0]})")
    if relation.n_pairs == 0:
        return {"mean_rank": math.nan, "map": math.nan}
    x = points.detach()
    rel = relation.to(x.device)
    degree = rel.degree()  # (N,)
    rank_sum, ap_sum = 0.0, 0.0
    with torch.no_grad():
        for s in range(0, n, rows):
            e = min(n, s + rows)
            lo, hi = int(rel.indptr[s]), int(rel.indptr[e])
            if hi == lo:
                continue
            dist = pairwise_distance(x[s:e], x, geometry=geometry, c=c, validate=False)  # (r, N)
            local = torch.arange(e - s, device=x.device)
            dist[local, local + s] = math.inf  # u itself never counts
            u, v = rel.pairs[lo:hi, 0] - s, rel.pairs[lo:hi, 1]  # (p,) local row, related node
            d_uv = dist[u, v]  # (p,)
            deg = degree[s:e]
            slot = torch.arange(hi - lo, device=x.device) - torch.repeat_interleave(
                torch.cumsum(deg, 0) - deg, deg
            )
            nbr = torch.full((e - s, int(deg.max())), math.inf, dtype=dist.dtype, device=x.device)  # (r, max deg)
            nbr[u, slot] = d_uv
            nb_lt = (nbr[u] < d_uv[:, None]).sum(1)  # (p,) related nodes strictly closer than v
            nb_le = (nbr[u] <= d_uv[:, None]).sum(1)
            ordered = torch.sort(dist, dim=1).values  # (r, N)
            all_lt = torch.searchsorted(ordered, nbr, right=False)[u, slot]  # (p,) #{w : d(u, w) < d(u, v)}
            all_le = torch.searchsorted(ordered, nbr, right=True)[u, slot]
            rank_sum += float((1 + all_lt - nb_lt).double().sum())
            prec = nb_le.double() / all_le.double()  # (p,)
            ap = torch.zeros(e - s, dtype=torch.float64, device=x.device).index_add_(0, u, prec)
            has = deg > 0
            ap_sum += float((ap[has] / deg[has].double()).sum())
    n_related = int((degree > 0).sum())
    return {"mean_rank": rank_sum / relation.n_pairs, "map": ap_sum / n_related}
