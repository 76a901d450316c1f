"""Embedding metrics, loss, trainer (manifold constraints, pause/resume, callbacks) and the 31-node MAP claim."""

import math
from dataclasses import replace

import geoopt
import numpy as np
import pytest
import torch
from sklearn.metrics import average_precision_score

from georesolver_core.embeddings import (
    EmbeddingConfig,
    EmbeddingTrainer,
    center_on,
    compare_hierarchy_capacity,
    distance_to_origin,
    distortion,
    embedding_metrics,
    nickel_kiela_loss,
    node_table,
    norm_order_penalty,
    reconstruction,
    relative_radius,
    rim_saturation,
    train_embedding,
)
from georesolver_core.embeddings.compare import compare_geometries
from georesolver_core.embeddings.metrics import _best_scale
from georesolver_core.embeddings.sphere_maps import (
    SphereMapFit,
    map_ball_to_sphere,
    sphere_map_notes,
    sphere_map_table,
)
from georesolver_core.geometry import GEOMETRIES, ball, pairwise_distance, project
from georesolver_core.labs import embeddings as lab
from georesolver_core.tasks import balanced_tree, from_edges

DTYPES = [torch.float32, torch.float64]
GEOS = list(GEOMETRIES)


@pytest.fixture(scope="module")
def tree():
    return balanced_tree(2, 3)  # 15 nodes: fast


# ---------------------------------------------------------------- metrics


@pytest.mark.parametrize("seed", range(3))
def test_map_equals_sklearn_average_precision_with_ties(seed):
    rng = np.random.default_rng(seed)
    n = 12
    dist = rng.integers(0, 4, size=(n, n)).astype(float)  # many ties
    dist = dist + dist.T
    adj = rng.random((n, n)) < 0.3
    adj = adj | adj.T
    np.fill_diagonal(adj, False)
    expected = []
    for u in range(n):
        if adj[u].any():
            others = np.arange(n) != u
            expected.append(average_precision_score(adj[u, others], -dist[u, others]))
    got = reconstruction(torch.tensor(dist), adj)["map"]
    assert got == pytest.approx(np.mean(expected), abs=1e-12)


def test_mean_rank_counts_closer_non_neighbours():
    # path a - b - c: from a, neighbour b; non-neighbour c placed closer than b
    dist = torch.tensor([[0.0, 2.0, 1.0], [2.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    h = from_edges(["a", "b", "c"], [(0, 1), (1, 2)], name="path")
    m = reconstruction(dist, h.adjacency)
    # directed edges: a->b rank 2 (c closer), b->a rank 1, b->c rank 1, c->b rank 1
    assert m["mean_rank"] == pytest.approx((2 + 1 + 1 + 1) / 4)


def test_tree_metric_itself_is_a_perfect_embedding(tree):
    d = torch.tensor(tree.tree_distance, dtype=torch.float64)
    m = reconstruction(d, tree.adjacency)
    assert m["map"] == 1.0 and m["mean_rank"] == 1.0
    dist = distortion(d, tree.tree_distance)
    assert dist["avg_distortion"] == pytest.approx(0.0) and dist["worst_distortion"] == pytest.approx(1.0)


@pytest.mark.parametrize("k", [0.1, 3.0])
def test_distortion_is_scale_free(tree, k):
    rng = np.random.default_rng(0)
    d = tree.tree_distance * rng.uniform(0.5, 1.5, size=tree.tree_distance.shape)
    d = (d + d.T) / 2
    a, b = distortion(d, tree.tree_distance), distortion(k * d, tree.tree_distance)
    assert b["avg_distortion"] == pytest.approx(a["avg_distortion"], rel=1e-9)
    assert b["worst_distortion"] == pytest.approx(a["worst_distortion"], rel=1e-9)
    assert b["scale"] == pytest.approx(a["scale"] / k, rel=1e-9)


def test_best_scale_minimises_the_average_distortion():
    r = np.random.default_rng(1).uniform(0.2, 3.0, size=50)
    s = _best_scale(r)
    grid = np.linspace(0.01, 5, 5001)
    costs = np.abs(grid[:, None] * r[None] - 1).mean(1)
    assert np.abs(s * r - 1).mean() <= costs.min() + 1e-12


@pytest.mark.parametrize("dtype", DTYPES)
def test_distance_to_origin(dtype):
    x = torch.tensor([[0.3, 0.4], [0.0, -0.9]], dtype=dtype)
    ball = distance_to_origin(x, geometry="poincare", c=1.0)
    torch.testing.assert_close(ball, 2 * torch.atanh(x.norm(dim=-1)), rtol=1e-5, atol=1e-5)
    s = torch.tensor([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]], dtype=dtype)
    torch.testing.assert_close(
        distance_to_origin(s, geometry="sphere"), torch.tensor([0.0, math.pi / 2, math.pi], dtype=dtype)
    )


def test_rim_saturation_flags_float32_cap_only():
    x32 = torch.tensor([[0.996, 0.0], [0.5, 0.0]], dtype=torch.float32)
    assert rim_saturation(x32)["n_at_cap"] == 1
    x64 = torch.tensor([[0.996, 0.0], [0.5, 0.0]], dtype=torch.float64)
    assert rim_saturation(x64)["n_at_cap"] == 0  # float64's cap is 0.99999
    # the cap scales with the curvature: radius 1/sqrt(c)
    assert rim_saturation(x32 / 2, c=4.0)["n_at_cap"] == 1


def test_compare_hierarchy_capacity_verdict_follows_the_measurement():
    good = compare_hierarchy_capacity({"poincare": {"map": 0.9}, "euclidean": {"map": 0.8}}, dim=2)
    bad = compare_hierarchy_capacity({"poincare": {"map": 0.7}, "euclidean": {"map": 0.8}}, dim=2)
    assert good["verdict"] == "holds" and bad["verdict"] == "fails"
    with pytest.raises(ValueError, match="euclidean"):
        compare_hierarchy_capacity({"poincare": {"map": 0.7}}, dim=2)


# ---------------------------------------------------------------- loss and config


def test_loss_is_the_softmax_cross_entropy_and_ignores_masked_negatives():
    d = torch.tensor([[0.5, 2.0, 3.0], [1.0, 0.1, 4.0]])
    valid = torch.ones_like(d, dtype=torch.bool)
    manual = -torch.log(torch.exp(-d[:, 0]) / torch.exp(-d).sum(1)).mean()
    torch.testing.assert_close(nickel_kiela_loss(d, valid), manual)
    valid[1, 2] = False
    reduced = torch.stack(
        [
            -torch.log_softmax(-d[0], 0)[0],
            -torch.log_softmax(-d[1, :2], 0)[0],
        ]
    ).mean()
    torch.testing.assert_close(nickel_kiela_loss(d, valid), reduced)


@pytest.mark.parametrize(
    "kwargs,name",
    [
        ({"geometry": "hyperbolic"}, "geometry"),
        ({"dim": 0}, "dim"),
        ({"c": 0.0}, "c"),
        ({"c": -1.0}, "c"),
        ({"lr": 0.0}, "lr"),
        ({"epochs": 0}, "epochs"),
        ({"negatives": 0}, "negatives"),
        ({"optimizer": "adam"}, "optimizer"),
        ({"dtype": "float16"}, "dtype"),
        ({"geometry": "sphere", "learn_curvature": True}, "learn_curvature"),
    ],
)
def test_config_rejects_bad_values_naming_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        EmbeddingConfig(**kwargs)


# ---------------------------------------------------------------- trainer


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("geometry", GEOS)
def test_training_keeps_points_on_the_manifold_and_lowers_the_loss(tree, geometry, dtype):
    cfg = EmbeddingConfig(geometry=geometry, dim=2, epochs=30, dtype=dtype, c=2.0, eval_every=10)
    tr = train_embedding(tree, cfg)
    x = tr.model.points
    assert isinstance(x, geoopt.ManifoldParameter)
    assert x.dtype == cfg.torch_dtype and x.shape == (tree.n_nodes, cfg.ambient_dim)
    assert torch.isfinite(x).all()
    assert float(GEOMETRIES[geometry].outside(x.detach(), 2.0).max()) < 1e-5  # on the sphere, inside the rim
    if (rim := GEOMETRIES[geometry].rim(2.0)) is not None:
        assert (x.norm(dim=-1) < rim).all()
    losses = [r["loss"] for r in tr.history]
    assert len(losses) == 30 and np.mean(losses[-5:]) < np.mean(losses[:5])
    assert tr.status == "done" and tr.done
    assert 0 < tr.metrics["map"] <= 1


def test_pause_and_resume_equal_one_run(tree):
    cfg = EmbeddingConfig(epochs=20, burn_in=4, seed=3)
    whole = EmbeddingTrainer(tree, cfg)
    whole.run()
    chunked = EmbeddingTrainer(tree, cfg)
    for _ in range(4):
        assert chunked.run(epochs=5) in ("paused", "done")
    assert chunked.epoch == 20 and chunked.status == "done"
    torch.testing.assert_close(chunked.points(), whole.points(), rtol=0, atol=0)
    assert [r["loss"] for r in chunked.history] == [r["loss"] for r in whole.history]


def test_chunks_that_end_mid_epoch_resume_exactly(tree):
    cfg = EmbeddingConfig(epochs=4, batch_size=4, burn_in=1, eval_every=2)
    whole = EmbeddingTrainer(tree, cfg)
    whole.run()
    steps = EmbeddingTrainer(tree, cfg)
    progress = []
    while not steps.done:
        steps.run(time_budget_s=0.0)  # the budget is spent after every single batch
        progress.append(steps.progress)
    batches_per_epoch = -(-len(tree.pairs) // cfg.batch_size)
    assert len(progress) == cfg.epochs * batches_per_epoch
    assert progress == sorted(progress) and progress[-1] == 1.0
    torch.testing.assert_close(steps.points(), whole.points(), rtol=0, atol=0)
    assert [r["loss"] for r in steps.history] == [r["loss"] for r in whole.history]


def test_callbacks_fire_and_can_pause(tree):
    seen, evals = [], []
    tr = EmbeddingTrainer(tree, EmbeddingConfig(epochs=50, eval_every=5))
    status = tr.run(
        callbacks={
            "on_epoch_end": lambda t, info: seen.append(info["epoch"]) or info["epoch"] == 12,
            "on_eval": lambda t, info: evals.append(info["map"]),
        }
    )
    assert status == "paused" and seen == list(range(1, 13)) and len(evals) == 2
    tr.run(epochs=3, callbacks={"on_epoch_end": lambda t, info: t.pause()})
    assert tr.epoch == 13  # pause() stops after the current epoch
    with pytest.raises(ValueError, match="callbacks"):
        tr.run(callbacks={"on_batch": print})


def test_a_raising_callback_leaves_a_consistent_paused_trainer(tree):
    tr = EmbeddingTrainer(tree, EmbeddingConfig(epochs=10))

    def boom(t, info):
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        tr.run(callbacks={"on_epoch_end": boom})
    assert tr.epoch == 1 and tr.status == "paused"
    assert tr.run() == "done" and tr.epoch == 10


def test_time_budget_stops_a_chunk(tree):
    tr = EmbeddingTrainer(tree, EmbeddingConfig(epochs=10_000))
    tr.run(time_budget_s=0.05)
    # the clock is read after every batch: a loaded machine may stop inside the first epoch
    assert 0 < tr.progress < 1 and tr.epoch < 10_000 and tr.status == "paused"


def test_non_finite_points_stop_training_with_a_message(tree):
    tr = EmbeddingTrainer(tree, EmbeddingConfig(geometry="euclidean", epochs=10))
    with torch.no_grad():
        tr.model.points[0] = float("nan")
    assert tr.run() == "diverged"
    assert "learning rate" in tr.message and tr.done


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_learnt_curvature_moves_and_points_stay_inside_its_ball(tree, dtype):
    cfg = EmbeddingConfig(epochs=20, learn_curvature=True, c=1.0, lr=0.1, dtype=dtype)
    tr = train_embedding(tree, cfg)
    c = tr.model.c
    assert c > 0 and c != 1.0
    assert any(p is tr.model.ball.isp_c for p in tr.model.parameters())
    assert (tr.points().double().norm(dim=-1) < 1 / math.sqrt(c)).all()


def test_embedding_metrics_use_the_learnt_curvature(tree):
    tr = train_embedding(tree, EmbeddingConfig(epochs=10, learn_curvature=True))
    direct = embedding_metrics(tr.model.points.detach(), tree, geometry="poincare", c=tr.model.c)
    assert direct["map"] == pytest.approx(tr.metrics["map"])


def test_binary_tree_31_nodes_poincare_2d_beats_euclidean_at_the_same_budget():
    """The target: MAP >= 0.95 for the depth-4 binary tree in the 2-D disk (default budget),
    and the plane with the same budget below it."""
    tree31 = balanced_tree(2, 4)
    hyp = train_embedding(tree31, EmbeddingConfig(geometry="poincare", dim=2))
    flat = train_embedding(tree31, EmbeddingConfig(geometry="euclidean", dim=2))
    assert hyp.metrics["map"] >= 0.95
    assert flat.metrics["map"] < hyp.metrics["map"]


# ---------------------------------------------------------------- cross-geometric maps


def test_maps_onto_the_sphere(tree):
    tr = train_embedding(tree, EmbeddingConfig(epochs=20, c=2.0))
    maps = map_ball_to_sphere(tr.points(), tree, c=2.0, fit=SphereMapFit(steps=40))
    assert set(maps) == {"norm", "stereographic", "learnable"}
    for m in maps.values():
        p = m["points"]
        assert p.shape == (tree.n_nodes, 3)
        torch.testing.assert_close(p.norm(dim=-1), torch.ones(tree.n_nodes, dtype=p.dtype))
        assert 0 < m["metrics"]["map"] <= 1
    assert torch.all(maps["norm"]["points"][:, -1] == 0)  # S^1 drawn as the equator of S^2
    # phi_B keeps the level as latitude: nearer the rim -> nearer the equator
    rel = math.sqrt(2.0) * tr.points().double().norm(dim=-1)
    z = maps["stereographic"]["points"][:, -1]
    torch.testing.assert_close(z, (1 - rel**2) / (1 + rel**2))
    losses = maps["learnable"]["losses"]
    assert len(losses) == 40 and np.mean(losses[-5:]) < np.mean(losses[:5])


def test_sphere_map_notes_and_table_skip_a_failed_map(tree):
    x = 0.3 * torch.rand(tree.n_nodes, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    x[0] = 0.0  # the root at the origin: phi_A has no direction for it
    maps = map_ball_to_sphere(x, tree, fit=SphereMapFit(steps=2))
    assert maps["norm"]["points"] is None and "error" in maps["norm"]
    assert [r["mapping"] for r in sphere_map_table(maps)] == ["stereographic", "learnable"]
    notes = sphere_map_notes(maps)
    assert len(notes) == 3 and "failed" in notes[0] and "failed" not in notes[1]
    with pytest.raises(ValueError, match="steps must be"):
        SphereMapFit(steps=0)


def test_lab_schedule_sources_and_rim_warning(tree):
    cfg = lab.page_schedule(EmbeddingConfig(epochs=40, lr=1.0))
    assert (cfg.burn_in, cfg.eval_every) == (20, 2)  # burn-in at most half the run, 20 evaluations
    assert lab.page_schedule(EmbeddingConfig(epochs=100)).burn_in == lab.BURN_IN
    assert lab.ball_points(None, None) is None and lab.radius_by_depth(tree, None, None) == {}
    sphere = EmbeddingTrainer(tree, replace(cfg, geometry="sphere", epochs=2))
    sphere.run()
    sphere = lab.snapshot(sphere)  # the live run as the page has it
    assert lab.ball_points(sphere, None) is None  # a live run off the ball is not carried onto the sphere
    assert set(lab.radius_by_depth(tree, sphere, None)) == set()  # the sphere has no centre
    comparison = compare_geometries(tree, replace(cfg, epochs=2))
    from_comparison = lab.ball_points(sphere, comparison)
    assert from_comparison.geometry == "poincare" and from_comparison.origin == "the comparison"
    radii = lab.radius_by_depth(tree, sphere, comparison)
    assert set(radii) == {g for g, entry in GEOMETRIES.items() if not entry.is_compact}  # those with a centre
    depth, r = radii["poincare"]
    np.testing.assert_array_equal(depth, tree.depth)
    assert r.shape == (tree.n_nodes,) and ((r >= 0) & (r < 1)).all()
    ball = EmbeddingTrainer(tree, cfg)  # lr 1 in float32: points reach the rim cap
    ball.run()
    ball = lab.snapshot(ball)
    live = lab.ball_points(ball, comparison)
    assert live.origin == "the live run" and live.points.shape == (tree.n_nodes, 2)
    assert ball.rim["n_at_cap"] > 0 and "float32's rim cap" in lab.rim_warning(ball)
    assert lab.rim_warning(sphere) is None  # no rim off the ball
    assert "epoch 40 / 40 (done)" in lab.progress_text(ball, running=True)


def test_relative_radius_and_centring(tree):
    g = torch.Generator().manual_seed(0)
    x = 0.4 * torch.rand(tree.n_nodes, 2, generator=g, dtype=torch.float64)
    torch.testing.assert_close(relative_radius(x, geometry="poincare", c=4.0), 2 * x.norm(dim=-1))
    # seen from the root: radius = tanh(d(root, x) / 2), the distance from the root squashed onto [0, 1)
    r = relative_radius(x, geometry="poincare", centre=0)
    assert float(r[0]) == 0.0
    d_root = pairwise_distance(x[:1], x, geometry="poincare")[0]
    torch.testing.assert_close(r, torch.tanh(d_root / 2))
    # centring is an isometry: a Möbius translation of the whole embedding first changes nothing
    moved = ball(1.0).mobius_add(torch.tensor([0.3, -0.2], dtype=torch.float64).expand_as(x), x)
    torch.testing.assert_close(relative_radius(moved, geometry="poincare", centre=0), r)
    flat = relative_radius(x + 5.0, geometry="euclidean", centre=0)
    assert float(flat.max()) == pytest.approx(1.0) and float(flat[0]) == 0.0
    with pytest.raises(ValueError, match="sphere"):
        relative_radius(x, geometry="sphere")


@pytest.mark.parametrize("geometry,dim", [("poincare", 2), ("euclidean", 3), ("sphere", 3)])
def test_center_on_is_an_isometry_that_moves_the_node_to_the_centre(geometry, dim):
    g = torch.Generator().manual_seed(1)
    x = 0.5 * torch.rand(9, dim, generator=g, dtype=torch.float64)
    x = project(x, geometry=geometry)  # onto the sphere; as is in the plane and the ball
    y = center_on(x, 4, geometry=geometry)
    centre = GEOMETRIES[geometry].origin(dim, dtype=torch.float64)  # the north pole on the sphere
    torch.testing.assert_close(y[4], centre, atol=1e-12, rtol=0)
    torch.testing.assert_close(
        pairwise_distance(y, y, geometry=geometry),
        pairwise_distance(x, x, geometry=geometry),
        atol=1e-9,
        rtol=1e-9,
    )


def test_node_table(tree):
    x = torch.zeros(tree.n_nodes, 2, dtype=torch.float64)
    x[:, 0] = torch.linspace(0, 0.6, tree.n_nodes)
    table = node_table(x, tree, geometry="poincare")
    assert list(table) == ["node", "depth", "x1", "x2", "norm", "distance_to_origin"]
    assert table["node"] == list(tree.nodes) and len(table["norm"]) == tree.n_nodes
    assert table["distance_to_origin"][-1] == pytest.approx(2 * math.atanh(0.6))


def test_norm_order_penalty_by_hand():
    radius = torch.tensor([0.5, 0.2, 1.0])  # node 0 the root
    edges = torch.tensor([[0, 1], [0, 2]])  # (parent, child)
    # roots: 0.5^2; edges: max(0, 0.5 - 0.2 + 0.1) = 0.4 and max(0, 0.5 - 1.0 + 0.1) = 0
    got = norm_order_penalty(radius, edges, torch.tensor([0]), margin=0.1)
    assert float(got) == pytest.approx(0.25 + 0.2)


def test_a_long_adam_run_keeps_every_parent_inside_its_children():
    """1000 epochs at the page's RiemannianAdam rate: without ``norm_order`` the root of this tree ends at
    norm 0.94, outside its children (0.86); the regulariser keeps it at the centre, not the epoch count."""
    tree = balanced_tree(2, 4)  # 31 nodes, 60 directed edges: one step per epoch
    cfg = replace(
        lab.page_schedule(EmbeddingConfig(epochs=1000, lr=lab.LR_DEFAULT, batch_size=64)), eval_every=1000
    )
    tr = EmbeddingTrainer(tree, cfg)
    tr.run()
    r = tr.points().double().norm(dim=-1)  # (N,)
    parent, child = torch.as_tensor(tree.edges).T
    assert (r[parent] < r[child]).all()
    root = int(tree.roots[0])
    assert r[root] < r[child[parent == root]].min() and r[root] < 0.5
    assert tr.metrics["map"] > 0.85
