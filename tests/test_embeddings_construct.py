"""Sarkar's construction: every edge has length tau, the distances keep the tree's order on a random tree,
a DAG is reduced to its shallowest-parent spanning tree, and float64's limit is where the docstring says."""

import numpy as np
import pytest
import torch

from georesolver_core.embeddings.construct import construct_closure, sarkar_construction, spanning_parents
from georesolver_core.embeddings.metrics import embedding_distances
from georesolver_core.embeddings.runs import measure_points
from georesolver_core.wordnet.closure import load_mammals
from tests.test_embeddings_fast import random_closure


def tree_distance(parent: np.ndarray) -> np.ndarray:
    """(N, N) hops between nodes of a tree given by parent ids, through their lowest common ancestor."""
    n = parent.shape[0]
    chains = []
    for u in range(n):
        chain, a = [u], parent[u]
        while a >= 0:
            chain.append(int(a))
            a = parent[a]
        chains.append(chain)
    d = np.zeros((n, n))
    for u in range(n):
        depth_in_u = {a: i for i, a in enumerate(chains[u])}
        for v in range(n):
            j = next(j for j, a in enumerate(chains[v]) if a in depth_in_u)
            d[u, v] = depth_in_u[chains[v][j]] + j
    return d


def test_every_edge_has_length_tau():
    parent, _ = random_closure(80, seed=5)
    x = sarkar_construction(parent, tau=2.0)
    dist = embedding_distances(torch.as_tensor(x), geometry="poincare").numpy()
    child = np.flatnonzero(parent >= 0)
    np.testing.assert_allclose(dist[child, parent[child]], 2.0, rtol=1e-8)
    assert x[0].tolist() == [0.0, 0.0]  # the root at the centre


def test_distances_keep_the_tree_order_on_a_random_tree():
    parent, _ = random_closure(60, seed=4)  # depth 8, at most 4 children
    tree = tree_distance(parent)
    dist = embedding_distances(torch.as_tensor(sarkar_construction(parent, tau=4.0)), geometry="poincare").numpy()
    # for every u: a node fewer hops away is strictly nearer, whatever the branch
    nearer_in_tree = tree[:, :, None] < tree[:, None, :]  # (u, v, w): d_T(u, v) < d_T(u, w)
    assert nearer_in_tree.sum() > 90_000
    assert (dist[:, :, None] < dist[:, None, :])[nearer_in_tree].all()
    # a small tau bends paths enough to break it: the scale is what buys the order
    flat = embedding_distances(torch.as_tensor(sarkar_construction(parent, tau=2.0)), geometry="poincare").numpy()
    assert not (flat[:, :, None] < flat[:, None, :])[nearer_in_tree].all()


def test_spanning_tree_keeps_the_shallowest_parent():
    # 0 root; 1, 2 below it; 3 below 1; 4 below 3 and below 2: its shallowest parent is 2
    direct = np.array([[1, 0], [2, 0], [3, 1], [4, 3], [4, 2]])
    assert spanning_parents(5, direct).tolist() == [-1, 0, 0, 1, 2]
    with pytest.raises(ValueError, match="direct must be acyclic"):
        spanning_parents(3, np.array([[1, 2], [2, 1]]))  # 1 and 2 only below each other


def test_bad_tau_and_forest_input():
    with pytest.raises(ValueError, match=r"tau must be a number in \[0.05, 20.0\]"):
        sarkar_construction(np.array([-1, 0]), tau=0.0)
    with pytest.raises(ValueError, match="at least one root"):
        sarkar_construction(np.array([1, 0]), tau=1.0)
    several = sarkar_construction(np.array([-1, -1, 0, 1]), tau=1.0)  # two roots around the centre
    assert np.isfinite(several).all() and float(np.linalg.norm(several, axis=1).max()) < 1.0


def test_mammals_construction_tau_trades_distortion_for_precision():
    m = load_mammals()
    edges = {tau: measure_points(m, construct_closure(m, tau=tau))["edges"]["map"] for tau in (3.0, 5.0, 10.0)}
    # tau 5 clears the 35-child nodes (siblings farther than the parent); at 10 the 9 levels need radius 90,
    # far past float64's ~37, and deep nodes merge
    assert edges[5.0] > 0.95 and edges[3.0] < edges[5.0] and edges[10.0] < 0.6
