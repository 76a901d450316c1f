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
from georesolver_core.embeddings.benchmark import run_benchmark
from georesolver_core.embeddings.compare import compare_geometries
from georesolver_core.embeddings.trainer import EmbeddingStatus
from georesolver_core.geometry import GEOMETRIES
from georesolver_core.jobs import JobContext, Stopped, steps_config, steps_job
from georesolver_core.jobs.codec import decode_value, encode_value
from georesolver_core.jobs.control import RUN, STOP
from georesolver_core.labs import embeddings as lab
from georesolver_core.tasks.hierarchy import balanced_tree, digits_hierarchy, from_edge_list_csv
from georesolver_core.wordnet.closure import load_mammals
from tests.steps import drain

ROOT = Path(__file__).resolve().parent.parent


def _run_to_end(steps):
    """(number of yields, the generator's return value)."""
    yielded, value = drain(steps)
    return len(yielded), value


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


# ---- the comparison and the benchmark's small re-run, in a worker ------------------------------------------


def test_the_comparison_in_a_worker_equals_the_direct_comparison():
    tree = balanced_tree(2, 3)
    config = EmbeddingConfig(epochs=6, lr=0.05, seed=2, burn_in=2)
    steps = lab.comparison_steps(_crossed(lab.run_data(tree)), _crossed(config), time_budget_s=None)
    yielded, final = drain(steps)
    steps_partials = [
        (fraction, partial) for fraction, _, partial in yielded
    ]  # (fraction, partial) of every yield
    direct = compare_geometries(tree, config)
    assert list(final.runs) == list(direct.runs) == list(GEOMETRIES) and final.complete
    for g, run in final.runs.items():
        np.testing.assert_allclose(run.points, direct.runs[g].points, rtol=1e-6, atol=1e-7)
        assert run.metrics == pytest.approx(direct.runs[g].metrics) and run.epochs == direct.runs[g].epochs
        assert run.c == pytest.approx(direct.runs[g].c)
    fractions = [f for f, _ in steps_partials]
    assert len(fractions) == len(GEOMETRIES) * config.epochs and fractions == sorted(fractions)
    assert steps_partials[0][1] is None  # nothing finished after the first epoch
    kept = pickle.loads(pickle.dumps(steps_partials[config.epochs][1]))  # the ball finished, pickled as sent
    assert list(kept.runs) == [next(iter(GEOMETRIES))] and "stopped" in lab.comparison_warning(kept).lower()


def test_a_stopped_comparison_keeps_the_geometries_that_finished(tmp_path):
    tree = balanced_tree(2, 3)
    config = EmbeddingConfig(epochs=4, lr=0.05, seed=1, burn_in=1)
    job = steps_config(lab.comparison_steps, lab.run_data(tree), config, budget_s=60.0, device="cpu")
    events = _Events()
    stop = _StopAfter(2 * (config.epochs + 1))  # asked twice a unit: the ball's epochs and one more
    with pytest.raises(Stopped):
        steps_job(json.loads(json.dumps(job)), JobContext("j", tmp_path, events, stop))
    kept = pickle.loads(pickle.dumps(events[-1].partial))["partial"]
    assert len(kept.runs) == 1 and lab.comparison_warning(kept) is not None


def test_the_quick_benchmark_in_a_worker_equals_the_direct_benchmark():
    overrides = {"epochs": 2, "burn_in": 1}  # short runs that the large budget never cuts
    entries = (("poincare", 2), ("euclidean", 2))
    args = _crossed([3])
    kwargs = _crossed({"time_budget_s": 600.0, "entries": entries, "overrides": overrides})
    yields, report = drain(lab.benchmark_steps(*args, **kwargs))
    direct = run_benchmark(load_mammals(), budget_s=600.0, seed=3, entries=entries, with_gensim=False,
                           overrides=overrides)  # fmt: skip
    assert [f for f, _, _ in yields] == [0.5, 1.0] and [len(d["rows"]) for _, _, d in yields] == [1, 2]
    assert report["complete"] and not yields[-1][2]["complete"] and report["notes"] == direct["notes"] == []
    assert lab.benchmark_rows(yields[0][2])[0]["model"] == "this project, poincare d=2"
    for mine, theirs in zip(report["rows"], direct["rows"], strict=True):
        assert (mine["name"], mine["epochs_run"], mine["lr"]) == (
            theirs["name"],
            theirs["epochs_run"],
            theirs["lr"],
        )
        assert mine["map"] == pytest.approx(theirs["map"], rel=1e-6)
        assert mine["mean_rank"] == pytest.approx(theirs["mean_rank"], rel=1e-6)
        assert mine.get("lr_grid", {}) == pytest.approx(theirs.get("lr_grid", {}), rel=1e-6)


# ---- no training in the server process --------------------------------------------------------------------

TRAINERS = {"EmbeddingTrainer", "train_embedding"}  # what builds and trains an embedding in the caller
# what trains embeddings in the caller too, named only as the embeddings package's (the kernel benchmark of
# georesolver_core.bench has its own run_benchmark)
EMBEDDING_RUNS = {"compare_geometries", "run_benchmark"}


def _dotted(node: ast.AST) -> str:
    """``a.b.c`` of a name or attribute chain ("" for anything else)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def trainer_uses(source: str) -> list[tuple[int, str]]:
    """(line, name) of every import, name or attribute in ``source`` that reaches a trainer of TRAINERS, or
    an embeddings function of EMBEDDING_RUNS."""
    tree = ast.parse(source)
    embeddings = set()  # local names bound to a module of georesolver_core.embeddings
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and "embeddings" in (node.module or ""):
            embeddings |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            embeddings |= {a.asname or a.name for a in node.names if "embeddings" in a.name}
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom | ast.Import):
            from_embeddings = "embeddings" in (getattr(node, "module", None) or "")
            for a in node.names:
                last = a.name.split(".")[-1]
                if last in TRAINERS or (last in EMBEDDING_RUNS and (from_embeddings or "embeddings" in a.name)):
                    hits.append((node.lineno, a.name))
        elif isinstance(node, ast.Name) and node.id in TRAINERS:
            hits.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute) and node.attr in TRAINERS:
            hits.append((node.lineno, node.attr))
        elif isinstance(node, ast.Attribute) and node.attr in EMBEDDING_RUNS:
            base = _dotted(node.value)
            if "embeddings" in base or base.split(".")[0] in embeddings:
                hits.append((node.lineno, node.attr))
    return hits


def test_the_finder_catches_the_forms_it_forbids():
    planted = (
        "from georesolver_core.embeddings import EmbeddingTrainer as T\n"
        "import georesolver_core.embeddings as e\n"
        "e.EmbeddingTrainer(h, c)\n"
        "e.trainer.train_embedding(h, c)\n"
        "from georesolver_core.embeddings.compare import compare_geometries\n"
        "from georesolver_core.embeddings import benchmark as b\n"
        "b.run_benchmark(closure, budget_s=5)\n"
        "e.compare.compare_geometries(h, c)\n"
        "georesolver_core.embeddings.benchmark.run_benchmark(closure, budget_s=5)\n"
    )
    assert sorted(line for line, _ in trainer_uses(planted)) == [1, 3, 4, 5, 7, 8, 9]
    assert trainer_uses("from georesolver_core.labs import embeddings as lab\nlab.embedding_steps\n") == []
    # the kernel benchmark's run_benchmark is another function
    assert trainer_uses("from georesolver_core import bench\nbench.run_benchmark(cfg)\n") == []
    assert trainer_uses("from georesolver_core.bench import run_benchmark\n") == []


@pytest.mark.parametrize("path", sorted((ROOT / "pages").glob("*.py")) + sorted((ROOT / "app").glob("*.py")),
                         ids=lambda p: f"{p.parent.name}/{p.name}")  # fmt: skip
def test_no_page_builds_an_embedding_trainer(path):
    """A page hands training to a worker (``trainer_controls.in_worker``): a trainer built in the server
    process would train there, beside every other visitor's page."""
    assert trainer_uses(path.read_text(encoding="utf-8")) == []
