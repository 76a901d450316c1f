"""Hierarchy sources: tree sizes and depths, tree-distance laws, digits clustering, CSV validation."""

from pathlib import Path

import numpy as np
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

from georesolver_core.tasks import (
    HIERARCHIES,
    MAX_NODES,
    balanced_tree,
    digits_hierarchy,
    from_edge_list_csv,
    from_edges,
)

SAMPLE = Path(__file__).resolve().parent.parent / "assets" / "sample_hierarchy.csv"


def _scipy_distance(h):
    n = h.n_nodes
    g = csr_matrix((np.ones(h.n_edges), (h.edges[:, 0], h.edges[:, 1])), shape=(n, n))
    d = shortest_path(g, directed=False, unweighted=True)
    return np.where(np.isfinite(d), d, -1)


@pytest.mark.parametrize("b,depth", [(1, 3), (2, 4), (3, 3), (5, 2)])
def test_balanced_tree_counts_and_levels(b, depth):
    h = balanced_tree(b, depth)
    assert h.n_nodes == sum(b**k for k in range(depth + 1))
    assert h.n_edges == h.n_nodes - 1
    for k in range(depth + 1):
        assert int((h.depth == k).sum()) == b**k
    assert list(h.roots) == [0] and h.nodes[0] == "root"
    assert len(h.leaves) == b**depth


def test_binary_tree_of_depth_four_has_31_nodes_and_names_are_paths():
    h = balanced_tree(2, 4)
    assert h.n_nodes == 31
    assert h.nodes[:7] == ("root", "0", "1", "0.0", "0.1", "1.0", "1.1")


def test_tree_distance_laws():
    h = balanced_tree(2, 4)
    d = h.tree_distance.astype(int)
    assert (d == d.T).all() and (np.diag(d) == 0).all()
    assert (d[h.edges[:, 0], h.edges[:, 1]] == 1).all()
    # triangle inequality over all triples: d(u, w) <= d(u, v) + d(v, w)
    assert (d[:, None, :] <= d[:, :, None] + d[None, :, :]).all()
    # two leaves in opposite halves are 2 * depth apart; siblings are 2 apart
    assert d[h.nodes.index("0.0.0.0"), h.nodes.index("1.1.1.1")] == 8
    assert d[h.nodes.index("0.0.0.0"), h.nodes.index("0.0.0.1")] == 2
    # depth is the distance to the root
    assert (d[0] == h.depth).all()


@pytest.mark.parametrize("seed", range(4))
def test_fast_tree_distance_matches_breadth_first_search(seed):
    rng = np.random.default_rng(seed)
    n = 60
    parents = [int(rng.integers(0, i)) for i in range(1, n)]  # random recursive tree
    h = from_edges([f"v{i}" for i in range(n)], [(p, i + 1) for i, p in enumerate(parents)], name="random tree")
    assert (h.tree_distance == _scipy_distance(h)).all()


def test_dag_and_forest_distances_and_depths():
    # "d" has two parents (depth = shortest), "x -> y" is a second component
    h = from_edges(["a", "b", "c", "d", "x", "y"], [(0, 1), (1, 2), (2, 3), (0, 3), (4, 5)], name="dag")
    assert list(h.depth) == [0, 1, 2, 1, 0, 1]
    assert (h.tree_distance == _scipy_distance(h)).all()
    assert h.tree_distance[0, 4] == -1  # unreachable across components


def test_fingerprint_is_content_based():
    assert balanced_tree(2, 3).fingerprint == balanced_tree(2, 3).fingerprint
    assert balanced_tree(2, 3).fingerprint != balanced_tree(3, 2).fingerprint


def test_balanced_tree_too_big_names_the_limit():
    with pytest.raises(ValueError, match=str(MAX_NODES)):
        balanced_tree(6, 12)
    with pytest.raises(ValueError, match="branching"):
        balanced_tree(0, 3)


def test_digits_hierarchy_is_a_full_binary_tree():
    n = 16
    h = digits_hierarchy(n, seed=1)
    assert h.n_nodes == 2 * n - 1 and h.n_edges == 2 * n - 2
    assert list(h.roots) == [0] and h.depth[0] == 0
    out_degree = np.bincount(h.edges[:, 0], minlength=h.n_nodes)
    assert set(out_degree[out_degree > 0]) == {2}
    assert len(h.leaves) == n
    assert all(h.nodes[i].split(" #")[0].isdigit() for i in h.leaves)
    # each merge node counts its images: the root holds all of them
    assert h.nodes[0].split(": ")[1].startswith(f"{n} images")


def test_sample_csv_parses():
    h = from_edge_list_csv(SAMPLE.read_bytes(), name="animals")
    assert 30 <= h.n_nodes <= 60
    assert h.nodes[0] == "animal" and h.depth[0] == 0
    assert h.depth[h.nodes.index("dog")] == 4


def test_csv_header_case_spaces_and_duplicates():
    h = from_edge_list_csv("Parent , Child\n a , b\na,b\na,c\n")
    assert h.n_nodes == 3 and h.n_edges == 2
    assert any("duplicate" in note for note in h.notes)


BAD_FILES = {
    "empty": (b"", "empty"),
    "only header": (b"parent,child\n", "no edges"),
    "wrong columns": (b"from,to\na,b\n", "columns 'parent,child'"),
    "three columns": (b"parent,child,weight\na,b,1\n", "columns 'parent,child'"),
    "self loop": (b"parent,child\na,b\nb,b\n", "self-loops"),
    "cycle": (b"parent,child\na,b\nb,c\nc,a\n", "cycle"),
    "blank cell": (b"parent,child\na,\n", "empty cell"),
    "not utf8": (b"\xff\xfeparent", "UTF-8"),
}


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_bad_csv_raises_a_clear_message(case):
    data, fragment = BAD_FILES[case]
    with pytest.raises(ValueError, match=fragment):
        from_edge_list_csv(data)


def test_cycle_message_shows_the_cycle():
    with pytest.raises(ValueError, match=r"(b -> c -> b|c -> b -> c)"):
        from_edge_list_csv("parent,child\na,b\nb,c\nc,b\n")


def test_csv_with_too_many_nodes():
    rows = "\n".join(f"n{i // 2},n{i + 1}" for i in range(MAX_NODES))
    with pytest.raises(ValueError, match=f"at most {MAX_NODES}"):
        from_edge_list_csv("parent,child\n" + rows)


def test_registry_builds_each_source():
    assert set(HIERARCHIES) == {"tree", "digits", "csv"}
    assert HIERARCHIES["tree"].build(2, 2).n_nodes == 7
    assert HIERARCHIES["csv"].build(b"parent,child\na,b\n").n_nodes == 2
