"""The Embeddings page's live run in a worker (``labs.embeddings.embedding_steps``): its data crosses as
plain JSON values and is rebuilt exactly, its run is a plain trainer's run, a Stop keeps the last snapshot,
and no page or app module can build a trainer in the server process."""

from __future__ import annotations

import ast
import json
import pickle
from pathlib import Path

import numpy as np
import pytest

from georesolver_core.embeddings import EmbeddingConfig, EmbeddingTrainer
from georesolver_core.embeddings.trainer import EmbeddingStatus
from georesolver_core.jobs import JobContext, Stopped, steps_config, steps_job
from georesolver_core.jobs.codec import decode_value, encode_value
from georesolver_core.jobs.control import RUN, STOP
from georesolver_core.labs import embeddings as lab
from georesolver_core.tasks.hierarchy import balanced_tree, digits_hierarchy, from_edge_list_csv
from georesolver_core.wordnet.closure import load_mammals

ROOT = Path(__file__).resolve().parent.parent


def _run_to_end(steps):
    """(number of yields, the generator's return value)."""
    n = 0
    while True:
        try:
            next(steps)
        except StopIteration as end:
            return n, end.value
        n += 1


def _crossed(value):
    """``value`` as a worker receives it: encoded, through JSON (a job's config), decoded."""
    return decode_value(json.loads(json.dumps(encode_value(value))))


@pytest.mark.parametrize(
    "hierarchy",
    [
        balanced_tree(3, 2),
        digits_hierarchy(12, seed=1),
        from_edge_list_csv(b"parent,child\nanimal,dog\nanimal,cat\ndog,puppy\ndog,puppy\n", name="upload.csv"),
    ],
    ids=["tree", "digits", "upload"],
)
def test_the_data_crosses_as_json_and_rebuilds_the_hierarchy_exactly(hierarchy):
    data = _crossed(lab.run_data(hierarchy))
    rebuilt, relation = lab.build_run(data)
    assert relation is None and rebuilt.fingerprint == hierarchy.fingerprint
    assert (rebuilt.name, rebuilt.nodes, rebuilt.notes) == (hierarchy.name, hierarchy.nodes, hierarchy.notes)
    assert np.array_equal(rebuilt.edges, hierarchy.edges) and np.array_equal(rebuilt.depth, hierarchy.depth)


def test_the_mammal_closure_crosses_by_name_with_its_relation():
    closure = load_mammals()
    data = _crossed(lab.run_data(closure.to_hierarchy(), closure=True))
    assert data.nodes == () and data.edges == ()  # its (N, N) relation is not in the job's config
    rebuilt, relation = lab.build_run(data)
    assert rebuilt.fingerprint == closure.to_hierarchy().fingerprint
    assert np.array_equal(relation, closure.relation())


@pytest.mark.parametrize("geometry", ["poincare", "euclidean", "sphere"])
def test_the_snapshot_run_equals_a_direct_trainer_run(geometry):
    tree = balanced_tree(2, 3)
    config = lab.page_schedule(EmbeddingConfig(geometry=geometry, epochs=24, lr=0.05, seed=3))
    yields, final = _run_to_end(lab.embedding_steps(_crossed(lab.run_data(tree)), _crossed(config)))
    direct = EmbeddingTrainer(tree, config)
    direct.run()
    assert yields == config.epochs and final.epoch == direct.epoch == config.epochs
    assert final.status == EmbeddingStatus.DONE and final.done and final.progress == 1.0
    np.testing.assert_allclose(final.points, direct.points().numpy(), rtol=1e-6, atol=1e-7)
    assert [r["loss"] for r in final.history] == pytest.approx([r["loss"] for r in direct.history])
    # the live schedule measures more often than the trainer's own, and always the last epoch
    measured = [r["epoch"] for r in final.history if "map" in r]
    assert set(measured) >= {r["epoch"] for r in direct.history if "map" in r} and measured[-1] == config.epochs
    assert final.metrics["map"] == pytest.approx(direct.metrics["map"]) and final.measured_epoch == config.epochs
    assert final.c == pytest.approx(direct.model.c) and final.n_nodes == tree.n_nodes
    assert final.n_pairs == 2 * tree.n_edges and not final.closure


class _Events(list):
    put = list.append


class _StopAfter:
    """A control channel that says Run to its first ``n`` questions, then Stop (a job asks between units)."""

    def __init__(self, n: int):
        self.left = n

    def command(self) -> int:
        self.left -= 1
        return RUN if self.left >= 0 else STOP

    def take_step(self) -> bool:
        return False


def test_a_stop_keeps_the_last_snapshot(tmp_path):
    tree = balanced_tree(2, 3)
    config = lab.page_schedule(EmbeddingConfig(epochs=500, lr=0.05))
    events = _Events()
    job = steps_config(lab.embedding_steps, lab.run_data(tree), config, budget_s=60.0, device="cpu")
    with pytest.raises(Stopped):
        steps_job(json.loads(json.dumps(job)), JobContext("j", tmp_path, events, _StopAfter(8)))
    kept = pickle.loads(pickle.dumps(events[-1].partial))  # what the page receives: pickled through a queue
    snap = kept["partial"]
    assert "result" not in kept and isinstance(snap, lab.EmbeddingSnapshot)
    assert 1 <= snap.epoch < config.epochs and len(snap.history) == snap.epoch
    assert snap.status == EmbeddingStatus.PAUSED and not snap.done and snap.metrics
    assert snap.points.shape == (tree.n_nodes, 2) and np.isfinite(snap.points).all()
    direct = EmbeddingTrainer(tree, config)  # the kept snapshot is where a plain run stands after as many epochs
    direct.run(epochs=snap.epoch)
    np.testing.assert_allclose(snap.points, direct.points().numpy(), rtol=1e-6, atol=1e-7)


# ---- no training in the server process --------------------------------------------------------------------

TRAINERS = {"EmbeddingTrainer", "train_embedding"}  # what builds and trains an embedding in the caller


def trainer_uses(source: str) -> list[tuple[int, str]]:
    """(line, name) of every import, name or attribute in ``source`` that reaches a trainer of TRAINERS."""
    hits = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom | ast.Import):
            hits += [(node.lineno, a.name) for a in node.names if a.name.split(".")[-1] in TRAINERS]
        elif isinstance(node, ast.Name) and node.id in TRAINERS:
            hits.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute) and node.attr in TRAINERS:
            hits.append((node.lineno, node.attr))
    return hits


def test_the_finder_catches_the_forms_it_forbids():
    planted = (
        "from georesolver_core.embeddings import EmbeddingTrainer as T\n"
        "import georesolver_core.embeddings as e\n"
        "e.EmbeddingTrainer(h, c)\n"
        "e.trainer.train_embedding(h, c)\n"
    )
    assert [line for line, _ in trainer_uses(planted)] == [1, 3, 4]
    assert trainer_uses("from georesolver_core.labs import embeddings as lab\nlab.embedding_steps\n") == []


@pytest.mark.parametrize("path", sorted((ROOT / "pages").glob("*.py")) + sorted((ROOT / "app").glob("*.py")),
                         ids=lambda p: f"{p.parent.name}/{p.name}")  # fmt: skip
def test_no_page_builds_an_embedding_trainer(path):
    """A page hands training to a worker (``trainer_controls.in_worker``): a trainer built in the server
    process would train there, beside every other visitor's page."""
    assert trainer_uses(path.read_text(encoding="utf-8")) == []
