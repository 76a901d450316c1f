"""The published reconstruction protocol on a hand-checked directed graph, and training on a relation."""

import numpy as np
import pytest
import torch

from georesolver_core.embeddings import EmbeddingConfig, EmbeddingTrainer
from georesolver_core.embeddings.metrics import reconstruction
from georesolver_core.tasks.hierarchy import balanced_tree


def test_protocol_on_a_hand_checked_directed_graph():
    # relation: 0 -> {1, 2}, 1 -> {2}; nodes 3, 4 relate to nothing (not averaged)
    rel = np.zeros((5, 5), dtype=bool)
    rel[0, 1] = rel[0, 2] = rel[1, 2] = True
    d = np.full((5, 5), 5.0)
    np.fill_diagonal(d, 0.0)
    for (i, j), v in {(0, 1): 1, (0, 2): 3, (0, 3): 2, (0, 4): 4, (1, 2): 1.5, (1, 3): 2, (1, 4): 2}.items():
        d[i, j] = d[j, i] = v
    # u=0: unrelated {3, 4}; v=1 has none closer (rank 1), v=2 has 3 closer (rank 2); AP = (1/1 + 2/3) / 2
    # u=1: unrelated {0, 3, 4} (the relation is directed); v=2 has 0 closer (rank 2),
    #      AP = 1/2
    out = reconstruction(torch.tensor(d), rel)
    assert out["mean_rank"] == pytest.approx((1 + 2 + 2) / 3)
    assert out["map"] == pytest.approx(((1 + 2 / 3) / 2 + 1 / 2) / 2)


def test_trainer_embeds_a_directed_relation_and_measures_on_it():
    tree = balanced_tree(2, 2)
    rel = np.zeros((tree.n_nodes, tree.n_nodes), dtype=bool)
    rel[tree.edges[:, 1], tree.edges[:, 0]] = True  # child -> parent only
    tr = EmbeddingTrainer(tree, EmbeddingConfig(epochs=5, batch_size=4, negatives=3), relation=rel)
    assert tr.pairs.shape == (tree.n_edges, 2)
    tr.run()
    m = tr.evaluate()
    assert 1.0 <= m["mean_rank"] and 0.0 < m["map"] <= 1.0
    with pytest.raises(ValueError, match="relation"):
        EmbeddingTrainer(tree, EmbeddingConfig(), relation=rel[:3, :3])


def test_stop_ends_the_run_and_keeps_its_points():
    tr = EmbeddingTrainer(balanced_tree(2, 2), EmbeddingConfig(epochs=10, batch_size=4, negatives=3))
    tr.run(epochs=2)
    before = tr.points()
    tr.stop()
    assert tr.status == "stopped" and tr.done
    assert tr.run() == "stopped" and tr.epoch == 2 and torch.equal(tr.points(), before)
