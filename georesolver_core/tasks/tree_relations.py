"""Hierarchy classification: the tree distance between two nodes of a tree (paper section 5.2(A)).

An example is a pair of nodes of ``tasks.hierarchy.balanced_tree`` (the Embeddings lab's trees),
each at one position as a one-hot node id; the label (at the second position) is their tree
distance in hops, a class in 0..2*depth. One example on the binary tree of depth 2::

    nodes ("root", "0", "1", "0.0", "0.1", "1.0", "1.1");  pair ("0.0", "1.0")
    x = [onehot(3), onehot(5)]      y = [-100, 4]          # 0.0 -> 0 -> root -> 1 -> 1.0

Pairs are split into train and test: a model that answers unseen pairs has learned the tree,
not the table.
"""

from __future__ import annotations

import numpy as np
import torch

from georesolver_core.budget import FLOAT32, elements
from georesolver_core.tasks.base import IGNORE, FiniteTask, one_hot, split
from georesolver_core.tasks.hierarchy import balanced_tree
from georesolver_core.validate import check_positive_int, check_range


class TreeDistance(FiniteTask):
    name = "hierarchy"

    def __init__(self, branching: int = 2, depth: int = 4, test_fraction: float = 0.2, seed: int = 0):
        check_range("test_fraction", test_fraction, 0.05, 0.9)
        check_positive_int("branching", branching, 1, 20)
        check_positive_int("depth", depth, 1, 20)
        self.check_data("this tree-distance data set", branching=branching, depth=depth)
        self.tree = balanced_tree(branching, depth)
        n = self.tree.n_nodes
        u, v = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        u, v = torch.as_tensor(u.ravel()), torch.as_tensor(v.ravel())
        dist = torch.as_tensor(self.tree.tree_distance[u.numpy(), v.numpy()], dtype=torch.long)  # (n^2,)
        x = torch.stack([one_hot(u, n), one_hot(v, n)], dim=1)  # (n^2, 2, n)
        y = torch.full((n * n, 2), IGNORE, dtype=torch.long)
        y[:, 1] = dist
        self.d_in, self.n_classes, self.seq_len = n, 2 * depth + 1, 2
        self.train, self.test = split(x, y, test_fraction, seed)

    @classmethod
    def estimate_bytes(cls, branching: int, depth: int) -> int:
        """Every ordered pair of the n nodes as two one-hot rows, x (n^2, 2, n) float32, is built from two
        (n^2, n) float32 one-hot blocks and then split into two copies: 16 n^3 bytes at the peak, and the
        tree's n x n distance table (int64) beside it."""
        n = sum(branching**k for k in range(depth + 1))
        return 2 * FLOAT32 * elements(n, n, 2, n) + 8 * elements(n, n)

    def describe(self) -> str:
        return f"tree distance of node pairs in the {self.tree.name}"
