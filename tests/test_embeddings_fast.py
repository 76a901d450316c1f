"""The large-closure trainer, its exported points and the ranking behind the noun figures: the closed-form
gradient is autograd's, a sampled sparse ranking is the dense one, the exported file is read back without
pickle and re-measured by an independent 20-line evaluator, and a killed writer leaves a complete file."""

import json
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
import torch

from georesolver_core.__main__ import main
from georesolver_core.embeddings.fast import (
    FastConfig,
    FastPoincareTrainer,
    _arcosh_of,
    boosted_pairs,
    closure_parents,
    pair_coefficients,
    points_archive,
    read_points,
    tree_start,
    write_points,
)
from georesolver_core.embeddings.metrics import embedding_distances, reconstruction
from georesolver_core.embeddings.sparse import sparse_reconstruction, sparse_relation
from georesolver_core.wordnet.closure import load_mammals

ROOT = Path(__file__).resolve().parents[1]
NOUNS_NPZ = ROOT / "assets" / "wordnet_nouns_d10.npz"
NOUNS_JSON = ROOT / "assets" / "wordnet_nouns.json"


def random_closure(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A random tree on n nodes (node i's parent drawn among 0..i-1) and its closure pairs (hyponym, ancestor)."""
    rng = np.random.default_rng(seed)
    parent = np.array([-1] + [int(rng.integers(0, i)) for i in range(1, n)])
    pairs = []
    for u in range(n):
        a = parent[u]
        while a >= 0:
            pairs.append((u, a))
            a = parent[a]
    return parent, np.asarray(pairs, dtype=np.int64)


def independent_reconstruction(points: np.ndarray, pairs: np.ndarray, nodes) -> tuple[float, float]:
    """Mean rank and MAP of the published protocol for the rows ``nodes``, written from the definition alone
    (plain numpy, distances from the arcosh formula): shares no code with the package."""
    x = np.asarray(points, dtype=np.float64)
    related = defaultdict(set)
    for u, a in pairs.tolist():
        related[u].add(a)
    sq = (x * x).sum(1)
    ranks, aps = [], []
    for u in nodes:
        if not related[u]:
            continue
        d = np.arccosh(1 + 2 * ((x - x[u]) ** 2).sum(1) / ((1 - sq) * (1 - sq[u])))
        d[u] = np.inf  # u never ranks itself
        rel = np.zeros(len(x), dtype=bool)
        rel[list(related[u])] = True
        prec = []
        for v in related[u]:
            ranks.append(1 + np.sum(d[~rel] < d[v]))  # unrelated nodes strictly nearer, plus one
            prec.append(np.sum(d[rel] <= d[v]) / np.sum(d <= d[v]))
        aps.append(np.mean(prec))
    return float(np.mean(ranks)), float(np.mean(aps))


def test_closed_form_gradient_is_autograds():
    g = torch.Generator().manual_seed(0)
    u = ((torch.rand(64, 5, generator=g, dtype=torch.float64) - 0.5) * 0.9).requires_grad_(True)
    w = ((torch.rand(64, 5, generator=g, dtype=torch.float64) - 0.5) * 0.9).requires_grad_(True)
    coef = torch.randn(64, generator=g, dtype=torch.float64)
    uu, ww, sq = (u * u).sum(-1), (w * w).sum(-1), ((u - w) ** 2).sum(-1)
    (_arcosh_of(sq, uu, ww) * coef).sum().backward()
    with torch.no_grad():
        s, a_u, a_w = pair_coefficients(sq, uu, ww, coef)
        torch.testing.assert_close(a_u[:, None] * u - s[:, None] * w, u.grad, rtol=1e-10, atol=1e-12)
        torch.testing.assert_close(a_w[:, None] * w - s[:, None] * u, w.grad, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dim", [2, 5])  # keys from coordinate differences (d <= 3) and from the Gram form
def test_sparse_ranking_equals_dense_ranking_on_a_small_closure(dim):
    _, pairs = random_closure(120, seed=1)
    rel = sparse_relation(pairs, 120)
    g = torch.Generator().manual_seed(0)
    # on a grid of 1/16: exact in float64, many tied distances, so the tie rule is compared too
    x = torch.randint(-3, 4, (120, dim), generator=g).double() / 16
    dense = reconstruction(embedding_distances(x, geometry="poincare"), rel.dense())
    full = sparse_reconstruction(x, rel, geometry="poincare", rows=7)
    assert full["mean_rank"] == pytest.approx(dense["mean_rank"], rel=1e-12)
    assert full["map"] == pytest.approx(dense["map"], rel=1e-12)
    assert dense["mean_rank"] > 2.0  # not a trivial embedding
    nodes = np.arange(1, 120, 3)  # a sample of rows: the same figures as the definition gives for them
    sampled = sparse_reconstruction(x, rel, geometry="poincare", nodes=torch.as_tensor(nodes))
    mean_rank, ap = independent_reconstruction(x.numpy(), pairs, nodes)
    assert sampled["mean_rank"] == pytest.approx(mean_rank, rel=1e-12)
    assert sampled["map"] == pytest.approx(ap, rel=1e-12)
    with pytest.raises(ValueError, match=r"nodes must be node ids in \[0, 119\]"):
        sparse_reconstruction(x, rel, geometry="poincare", nodes=torch.tensor([120]))


def test_fast_trainer_learns_and_its_file_reproduces_its_figures(tmp_path):
    parent, pairs = random_closure(300, seed=2)
    rel = sparse_relation(pairs, 300)
    cfg = FastConfig(dim=5, lr=0.05, batch_size=256, block=32, burn_in=5, sample=300, eval_every_s=0.0, epochs=60)
    trainer = FastPoincareTrainer(rel, cfg)
    path = tmp_path / "pts.npz"
    names = [f"n{i}" for i in range(300)]
    # the epoch limit stops it: the budget only guards a stuck run (a loaded machine took over 60 s)
    best = trainer.run(time_budget_s=900.0, on_best=lambda t: write_points(path, names, t.best_points))
    assert trainer.epoch == 60 and [r["epoch"] for r in trainer.history][-1] == 60
    assert trainer.history[0]["sampled_map"] < best["sampled_map"] and best["sampled_map"] > 0.8
    with np.load(path, allow_pickle=False) as z:  # no pickle needed: plain arrays only
        assert z["points"].dtype == np.float32 and z["points"].shape == (300, 5) and list(z["names"]) == names
    got_names, pts = read_points(path)
    assert got_names == names and float(np.linalg.norm(pts, axis=1).max()) < 1.0
    nodes = np.arange(0, 300, 4)
    ours = sparse_reconstruction(torch.as_tensor(pts), rel, geometry="poincare", nodes=torch.as_tensor(nodes))
    mean_rank, ap = independent_reconstruction(pts, pairs, nodes)
    assert ours["mean_rank"] == pytest.approx(mean_rank, rel=1e-9) and ours["map"] == pytest.approx(ap, rel=1e-9)


def test_closure_parents_are_the_direct_parents_of_a_tree_and_of_a_dag():
    parent, pairs = random_closure(200, seed=4)
    assert closure_parents(sparse_relation(pairs, 200)).tolist() == parent.tolist()
    # 3 has two direct parents, 1 (depth 1) and 2 (depth 2, below 1's sibling 4): the deeper one is kept,
    # never the shared ancestor 0 nor 4 (an ancestor of 2)
    dag = [(1, 0), (4, 0), (2, 4), (2, 0), (3, 1), (3, 2), (3, 4), (3, 0)]
    assert closure_parents(sparse_relation(dag, 5)).tolist() == [-1, 0, 4, 2, 0]


def test_tree_start_turns_each_subtree_towards_its_root():
    parent, pairs = random_closure(400, seed=5)
    rel = sparse_relation(pairs, 400)
    z = tree_start(rel, 10, 0.01, torch.Generator().manual_seed(0))
    assert z.shape == (400, 10) and float(z.norm(dim=1).max()) == pytest.approx(0.01)
    assert float(z[0].norm()) == 0.0  # the root at the origin
    unit = torch.nn.functional.normalize(z[1:], dim=1)
    with_parent = (unit * torch.nn.functional.normalize(z[parent[1:]], dim=1)).sum(1)[parent[1:] > 0]
    with_random = (unit * unit[torch.randperm(399, generator=torch.Generator().manual_seed(1))]).sum(1)
    # a child points nearly its parent's way, two random nodes of a random tree much less so
    assert float(with_parent.mean()) > 0.6 and float(with_parent.mean()) > float(with_random.mean()) + 0.3
    with pytest.raises(ValueError, match="init must be one of"):
        FastConfig(init="random")


def test_rare_boost_repeats_a_pair_by_its_ancestors_descendants():
    # 0 <- 1 <- 2, 0 <- 3: node 0 has 3 descendants, 1 has one
    rel = sparse_relation([(1, 0), (2, 1), (2, 0), (3, 0)], 4)
    assert boosted_pairs(rel, 0) is rel.pairs

    def count(pairs):
        seen, n = np.unique(pairs.numpy(), axis=0, return_counts=True)
        return {tuple(p): int(k) for p, k in zip(seen.tolist(), n, strict=True)}

    # boost 3: (2, 1) once more for each of 3 // 1 = 3, every pair into 0 once more (3 // 3 = 1)
    assert count(boosted_pairs(rel, 3)) == {(1, 0): 2, (2, 0): 2, (2, 1): 4, (3, 0): 2}
    assert count(boosted_pairs(rel, 2)) == {(1, 0): 1, (2, 0): 1, (2, 1): 3, (3, 0): 1}  # 2 // 3 = 0
    trainer = FastPoincareTrainer(rel, FastConfig(dim=2, rare_boost=3, sample=2))
    assert trainer.pairs.shape == (10, 2) and trainer.settings()["rare_boost"] == 3
    with pytest.raises(ValueError, match="rare_boost must be an integer in"):
        FastConfig(rare_boost=-1)


def test_points_archive_refuses_points_outside_the_ball():
    with pytest.raises(ValueError, match="inside the unit ball"):
        points_archive(["a", "b"], np.array([[0.5, 0.0], [1.0, 0.0]]))
    with pytest.raises(ValueError, match=r"points must be \(N, D\) with N = 2"):
        points_archive(["a", "b"], np.zeros((3, 2)))
    near = points_archive(["a"], np.array([[1.0 - 1e-12, 0.0]]))["points"]  # rounds to 1 in float32
    assert float(np.linalg.norm(near.astype(np.float64))) < 1.0


_WRITER = """
import sys, numpy as np
from georesolver_core.embeddings.fast import write_points
names = [f"node{i}" for i in range(5000)]
k = 0
while True:
    k += 1
    write_points(sys.argv[1], names, np.full((5000, 10), 0.01 * (k % 50), dtype=np.float64), epoch=k)
    print(k, flush=True)
"""


def test_a_killed_writer_leaves_a_whole_file_not_a_mix(tmp_path):
    path = tmp_path / "points.npz"
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        for _ in range(3):  # three complete files written, then killed while writing the next ones
            assert proc.stdout.readline().strip()
        time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    names, pts = read_points(path)
    with np.load(path, allow_pickle=False) as z:
        epoch = int(z["epoch"])
    assert len(names) == 5000 and pts.shape == (5000, 10)
    assert np.allclose(pts, 0.01 * (epoch % 50), atol=1e-6)  # one whole version, not a mix
    assert not [p for p in os.listdir(tmp_path) if p != "points.npz" and not p.endswith(".tmp")]


_TRAINING = """
import sys, numpy as np, torch
sys.path.insert(0, "tests")
from test_embeddings_fast import random_closure
from georesolver_core.embeddings.fast import FastConfig, FastPoincareTrainer, write_points
from georesolver_core.embeddings.sparse import sparse_relation
_, pairs = random_closure(1000, seed=6)
cfg = FastConfig(dim=5, lr=0.05, batch_size=512, sample=100, eval_every_s=0.0, burn_in=0)
t = FastPoincareTrainer(sparse_relation(pairs, 1000), cfg)
def save(t):
    write_points(sys.argv[1], [f"n{i}" for i in range(1000)], t.best_points, epoch=t.best["epoch"])
    print(t.best["epoch"], flush=True)
t.run(time_budget_s=600.0, on_best=save)
"""


def test_a_killed_training_run_leaves_its_last_complete_embedding(tmp_path):
    path = tmp_path / "run.npz"
    proc = subprocess.Popen(
        [sys.executable, "-c", _TRAINING, str(path)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"},
    )
    try:
        epochs = [int(proc.stdout.readline()) for _ in range(2)]  # two improvements written
        proc.send_signal(signal.SIGKILL)  # mid-training, maybe mid-write
    finally:
        proc.wait(timeout=30)
    names, pts = read_points(path)
    with np.load(path, allow_pickle=False) as z:
        epoch = int(z["epoch"])
    assert names == [f"n{i}" for i in range(1000)] and pts.shape == (1000, 5)
    assert np.isfinite(pts).all() and float(np.linalg.norm(pts, axis=1).max()) < 1.0
    assert epoch >= epochs[-1]  # the last one written whole (or a later one)


def test_embed_fast_and_construct_write_points_that_match_their_report(tmp_path):
    m = load_mammals()
    for method, extra in (("fast", ["--budget", "3", "--dim", "5"]), ("construct", ["--tau", "5"])):
        out, pts = tmp_path / f"{method}.json", tmp_path / f"{method}.npz"
        argv = ["embed", "--dataset", "wordnet-mammals", "--method", method, *extra]
        assert main([*argv, "--out", str(out), "--out-points", str(pts)]) == 0
        doc = json.loads(out.read_text())
        names, x = read_points(pts)
        assert names == list(m.nodes) and doc["method"] == method
        mean_rank, ap = independent_reconstruction(x, m.pairs, range(m.n_nodes))
        # a construction puts nodes 1e-13 apart near the rim: evaluators that round differently may swap
        # a near-tie there, so the construction is compared to a few parts in 1e5
        tol = 1e-9 if method == "fast" else 1e-4
        assert ap == pytest.approx(doc["metrics"]["map"], rel=tol)
        assert mean_rank == pytest.approx(doc["metrics"]["mean_rank"], rel=tol)
    assert doc["tau"] == 5.0 and doc["edge_metrics"]["map"] > 0.95 and doc["dim"] == 2


def test_bad_fast_arguments_name_the_range(capsys):
    assert main(["embed", "--method", "fast", "--batch-size", "0"]) == 2
    assert "batch_size must be an integer in [1, 10000000]" in capsys.readouterr().err
    assert main(["embed", "--method", "construct", "--tau", "100"]) == 2
    assert "tau must be a number in [0.05, 20.0]" in capsys.readouterr().err


@pytest.mark.skipif(not NOUNS_NPZ.exists(), reason="the shipped noun embedding is not in assets/")
def test_shipped_noun_points_reproduce_their_report_on_a_sample():
    try:
        from georesolver_core.wordnet.closure import noun_closure

        closure = noun_closure()
    except (ValueError, OSError) as err:  # no WordNet database on this machine
        pytest.skip(f"WordNet database missing: {err}")
    names, x = read_points(NOUNS_NPZ)
    assert names == list(closure.nodes) and x.shape == (82115, 10)
    report = json.loads(NOUNS_JSON.read_text())
    assert report["points_file"] == NOUNS_NPZ.name
    nodes = np.random.default_rng(0).choice(closure.n_nodes, size=150, replace=False)
    nodes.sort()
    rel = sparse_relation(closure.pairs, closure.n_nodes)
    ours = sparse_reconstruction(torch.as_tensor(x), rel, geometry="poincare", nodes=torch.as_tensor(nodes))
    mean_rank, ap = independent_reconstruction(x, closure.pairs, nodes)
    # float32 points: a distance the arcosh rounds differently from the rank key may swap a near-tie
    assert ours["map"] == pytest.approx(ap, abs=2e-3) and ours["mean_rank"] == pytest.approx(mean_rank, rel=1e-2)
    # a 150-row sample estimates the full figure the report gives for all 82,115 rows
    assert abs(ap - report["metrics"]["map"]) < 0.1
