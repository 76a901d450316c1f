"""The sparse relation (sorted pairs, CSR) and the chunked exact ranking agree with the dense path."""

import numpy as np
import pytest
import torch

from georesolver_core.embeddings import EmbeddingConfig, EmbeddingTrainer
from georesolver_core.embeddings.metrics import embedding_distances, reconstruction
from georesolver_core.embeddings.sparse import from_dense, sparse_reconstruction, sparse_relation
from georesolver_core.tasks.hierarchy import balanced_tree


def _closure(tree):
    """(N, N) bool: child -> every ancestor of a balanced tree (a directed transitive closure)."""
    parent = {int(c): int(p) for p, c in tree.edges}
    rel = np.zeros((tree.n_nodes, tree.n_nodes), dtype=bool)
    for u in range(tree.n_nodes):
        a = u
        while a in parent:
            a = parent[a]
            rel[u, a] = True
    return rel


def test_sparse_training_refuses_a_dense_only_optimiser():
    tree = balanced_tree(2, 2)
    with pytest.raises(ValueError, match="sparse relation trains with optimizer 'rsgd'"):
        EmbeddingTrainer(tree, EmbeddingConfig(optimizer="radam"), relation=from_dense(_closure(tree)))


def test_contains_and_rows_match_the_matrix():
    rel = _closure(balanced_tree(3, 3))
    sp = from_dense(rel)
    n = rel.shape[0]
    u, w = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
    assert torch.equal(sp.contains(u, w), torch.as_tensor(rel))
    assert torch.equal(sp.degree(), torch.as_tensor(rel.sum(1)))
    assert np.array_equal(sp.dense(), rel) and sp.n_pairs == int(rel.sum())
    with pytest.raises(ValueError, match="pairs must hold node ids"):
        sparse_relation([[0, n]], n)


@pytest.mark.parametrize("geometry, rows", [("poincare", 7), ("euclidean", 1000), ("sphere", 16)])
def test_chunked_ranking_gives_the_dense_metrics(geometry, rows):
    rel = _closure(balanced_tree(3, 3))  # 40 nodes
    g = torch.Generator().manual_seed(0)
    # coordinates on a grid of 1/16 (exact in float64): many tied distances, so the tie rule is checked too
    x = torch.randint(-4, 5, (rel.shape[0], 3), generator=g).double() / 16
    if geometry == "sphere":  # the sphere's key is -<u, w>: distinct directions, no ties (arccos near 1 rounds)
        x = torch.nn.functional.normalize(torch.randn(rel.shape[0], 3, generator=g, dtype=torch.float64), dim=-1)
    dense = reconstruction(embedding_distances(x, geometry=geometry), rel)
    sparse = sparse_reconstruction(x, from_dense(rel), geometry=geometry, rows=rows)
    assert sparse["mean_rank"] == pytest.approx(dense["mean_rank"], rel=1e-12)
    assert sparse["map"] == pytest.approx(dense["map"], rel=1e-12)
    assert dense["mean_rank"] > 1.5  # not a trivial embedding


def test_training_on_the_sparse_relation_is_the_dense_training():
    tree = balanced_tree(2, 3)
    rel = _closure(tree)
    cfg = EmbeddingConfig(
        epochs=4, batch_size=8, negatives=5, dtype="float64", optimizer="rsgd", lr=2.0, norm_order=0.0
    )
    dense, sparse = (
        EmbeddingTrainer(tree, cfg, relation=rel),
        EmbeddingTrainer(tree, cfg, relation=from_dense(rel)),
    )
    dense.run()
    sparse.run()  # the same pairs and negatives; its step updates only the batch's rows
    assert not torch.equal(dense.points(), EmbeddingTrainer(tree, cfg, relation=rel).points())  # it moved
    torch.testing.assert_close(dense.points(), sparse.points(), rtol=1e-9, atol=1e-12)
    m_dense, m_sparse = dense.evaluate(), sparse.evaluate()
    assert set(m_sparse) == {"mean_rank", "map"}  # no distortion: it needs the dense tree distance
    assert m_sparse["map"] == pytest.approx(m_dense["map"]) and m_sparse["mean_rank"] == pytest.approx(
        m_dense["mean_rank"]
    )
