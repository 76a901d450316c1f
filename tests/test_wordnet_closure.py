"""The closure builder on a small synthetic WordNet-format database, counts checked by hand."""

import numpy as np
import pytest

from georesolver_core.wordnet.closure import (
    closure_from_graph,
    filtered_closure,
    hypernym_graph,
    load_mammals,
    read_closure_csv,
    subtree_closure,
    write_closure_csv,
)

# offset: (lemma, [(pointer, target offset)]). Offsets are arbitrary ids here, not byte positions.
#   entity <-@- animal <-@- mammal <-@- dog <-@- puppy
#                                 <-@- cat
#               animal <-@- pet   <-@- cat            (cat has two hypernyms)
#   lassie -@i-> dog                                  (an instance)
SYNSETS = {
    100: ("entity", []),
    200: ("animal", [("@", 100)]),
    300: ("mammal", [("@", 200)]),
    400: ("dog", [("@", 300), ("~", 500)]),
    500: ("puppy", [("@", 400)]),
    600: ("cat", [("@", 300), ("@", 700)]),
    700: ("pet", [("@", 200)]),
    800: ("lassie", [("@i", 400)]),
}


def _write_db(folder):
    lines = ["  1 This is a licence header line.\n"]
    for off, (lemma, ptrs) in SYNSETS.items():
        p = " ".join(f"{s} {t:08d} n 0000" for s, t in ptrs)
        lines.append(f"{off:08d} 05 n 01 {lemma} 0 {len(ptrs):03d} {p} | a gloss of {lemma}\n")
    (folder / "data.noun").write_text("".join(lines))
    index = [f"{lemma} n 1 0 1 0 {off:08d}\n" for off, (lemma, _) in SYNSETS.items()]
    (folder / "index.noun").write_text("".join(sorted(index)))


@pytest.fixture
def graph(tmp_path):
    _write_db(tmp_path)
    return hypernym_graph(tmp_path)


def _named(closure):
    return {(closure.nodes[u], closure.nodes[a]) for u, a in closure.pairs.tolist()}


def test_names_and_pointers_followed(graph):
    names, parents = graph
    assert names == [f"{lemma}.n.01" for lemma, _ in SYNSETS.values()]
    # the hyponym pointer "~" of dog is not followed; the instance hypernym "@i" of lassie is
    assert parents[names.index("dog.n.01")] == [names.index("mammal.n.01")]
    assert parents[names.index("lassie.n.01")] == [names.index("dog.n.01")]


def test_noun_closure_counts_by_hand(graph):
    c = closure_from_graph(*graph, name="toy")
    # ancestors: animal 1, mammal 2, dog 3, puppy 4, cat 4 (mammal, pet, animal, entity), pet 2, lassie 4
    assert c.n_nodes == 8 and c.n_pairs == 1 + 2 + 3 + 4 + 4 + 2 + 4
    assert ("lassie.n.01", "entity.n.01") in _named(c)
    assert ("cat.n.01", "pet.n.01") in _named(c)
    assert c.depth().tolist() == [0, 1, 2, 3, 4, 3, 2, 4]


def test_subtree_and_filtered_closure(graph):
    sub = subtree_closure(*graph, "mammal.n.01", name="toy")
    # mammal, dog, puppy, cat, lassie; pairs inside: dog 1, puppy 2, cat 1, lassie 2
    assert set(sub.nodes) == {"mammal.n.01", "dog.n.01", "puppy.n.01", "cat.n.01", "lassie.n.01"}
    assert sub.n_pairs == 6
    # the published recipe keeps ancestors outside the subtree unless filtered: cat -> pet survives
    f = filtered_closure(*graph, "mammal.n.01", {"animal.n.01", "entity.n.01"}, {"lassie.n.01"}, name="toy")
    assert _named(f) == {
        ("dog.n.01", "mammal.n.01"),
        ("puppy.n.01", "dog.n.01"),
        ("puppy.n.01", "mammal.n.01"),
        ("cat.n.01", "mammal.n.01"),
        ("cat.n.01", "pet.n.01"),
    }
    with pytest.raises(ValueError, match="root"):
        subtree_closure(*graph, "unicorn.n.01", name="toy")


def test_csv_round_trip_and_relation(graph):
    c = closure_from_graph(*graph, name="toy")
    back = read_closure_csv(write_closure_csv(c), name="toy")
    assert _named(back) == _named(c)
    rel = back.relation()
    assert rel.sum() == c.n_pairs and not (rel & rel.T).any()  # directed: hyponym -> ancestor only
    assert np.array_equal(np.sort(back.depth()), np.sort(c.depth()))


def test_shipped_mammals_match_the_published_counts():
    m = load_mammals()
    assert (m.n_nodes, m.n_pairs) == (1181, 6541)
    assert m.nodes[0] == "mammal.n.01" and m.depth().max() >= 5
    h = m.to_hierarchy()
    assert h.n_nodes == 1181 and h.n_edges == len(m.direct) and h.nodes[int(h.roots[0])] == "mammal.n.01"
