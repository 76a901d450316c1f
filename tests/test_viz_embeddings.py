"""Embedding figures: geodesic edges are true geodesics, views pick the right picture, hover carries the facts."""

import math

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

from georesolver_core.geometry import GEOMETRIES, expmap0, project
from georesolver_core.tasks import balanced_tree, from_edge_list_csv
from georesolver_core.viz import embeddings as viz
from georesolver_core.viz.embeddings import (
    embedding_figure,
    embedding_view,
    geometries_figure,
    norm_depth_figure,
    training_history_figure,
)

TREE = balanced_tree(2, 2)  # 7 nodes


def _points(geometry, dim, c=1.0, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    v = 0.8 * torch.randn(TREE.n_nodes, dim, generator=g, dtype=dtype)
    if GEOMETRIES[geometry].is_embedded:  # random directions, over the whole sphere
        ambient = GEOMETRIES[geometry].ambient_dim(dim)
        return project(torch.randn(TREE.n_nodes, ambient, generator=g, dtype=dtype), geometry=geometry)
    return expmap0(v, geometry=geometry, c=c)


def _arcs(view):
    """Split the NaN-separated polyline back into one array per edge."""
    lines, out, cur = view.edge_lines, [], []
    for row in lines:
        if np.isnan(row).any():
            out.append(np.array(cur))
            cur = []
        else:
            cur.append(row)
    return out


@pytest.mark.parametrize(
    "geometry,dim,kind",
    [
        ("poincare", 2, "disk"),
        ("euclidean", 2, "plane"),
        ("sphere", 2, "sphere"),
        ("sphere", 1, "circle"),
        ("poincare", 1, "disk"),
        ("poincare", 5, "projection"),
        ("euclidean", 3, "projection"),
        ("sphere", 4, "projection"),
    ],
)
def test_view_kind_and_shapes(geometry, dim, kind):
    view = embedding_view(_points(geometry, dim), TREE, geometry=geometry)
    assert view.kind == kind
    assert view.coords.shape == (TREE.n_nodes, 3 if kind == "sphere" else 2)
    assert len(_arcs(view)) == TREE.n_edges
    if kind == "projection":
        assert "log map" in view.axis_note and "PCA" in view.axis_note


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("c", [0.5, 1.0, 2.0])
def test_disk_edges_are_arcs_orthogonal_to_the_rim(c, dtype):
    """A hyperbolic geodesic not through the centre is a circle meeting the rim at right angles:
    its centre o and radius r satisfy |o|^2 = r^2 + R^2 with R = 1/sqrt(c)."""
    view = embedding_view(_points("poincare", 2, c=c, dtype=dtype), TREE, geometry="poincare", c=c)
    assert view.radius == pytest.approx(1 / math.sqrt(c))
    tol = 1e-3 if dtype == torch.float32 else 1e-6
    for arc in _arcs(view):
        a, m, b = arc[0], arc[len(arc) // 2], arc[-1]
        chord_gap = abs(_cross2(b - a, m - a)) / np.linalg.norm(b - a)
        if chord_gap < 1e-3:  # (nearly) a diameter: a straight geodesic
            continue
        o, r = _circle_through(a, m, b)
        assert np.abs(np.linalg.norm(arc - o, axis=1) - r).max() < tol * max(1.0, r)
        assert np.dot(o, o) == pytest.approx(r**2 + 1 / c, rel=tol)


def _cross2(a, b):
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


def _circle_through(a, b, c):
    ax, ay = a
    bx, by = b
    cx, cy = c
    d = 2 * (ax * (by - cy) + bx * (cy - ay) + cx * (ay - by))
    ux = ((ax**2 + ay**2) * (by - cy) + (bx**2 + by**2) * (cy - ay) + (cx**2 + cy**2) * (ay - by)) / d
    uy = ((ax**2 + ay**2) * (cx - bx) + (bx**2 + by**2) * (ax - cx) + (cx**2 + cy**2) * (bx - ax)) / d
    o = np.array([ux, uy])
    return o, float(np.linalg.norm(a - o))


def test_sphere_edges_are_great_circle_arcs():
    view = embedding_view(_points("sphere", 2), TREE, geometry="sphere")
    for arc in _arcs(view):
        np.testing.assert_allclose(np.linalg.norm(arc, axis=1), 1.0, atol=1e-9)
        normal = np.cross(arc[0], arc[-1])
        np.testing.assert_allclose(arc @ normal, 0.0, atol=1e-9)  # in the plane through the centre


def test_plane_edges_are_segments():
    view = embedding_view(_points("euclidean", 2), TREE, geometry="euclidean")
    for arc in _arcs(view):
        d = arc[-1] - arc[0]
        np.testing.assert_allclose(_cross2(d, arc - arc[0]), 0.0, atol=1e-9)


def test_projection_keeps_the_origin_at_the_origin():
    x = _points("poincare", 4)
    x[0] = 0.0
    view = embedding_view(x, TREE, geometry="poincare")
    np.testing.assert_allclose(view.coords[0], 0.0, atol=1e-12)


def test_to_scale_puts_each_node_in_its_direction_at_its_distance_from_the_centre():
    x = _points("poincare", 2)
    x[0] = 0.0  # the origin stays put
    x[1] = x[1] / x[1].norm() * (1.0 - 1e-15)  # ~36 from the centre: past geoopt's artanh clamp (~16)
    view = embedding_view(x, TREE, geometry="poincare", to_scale=True)
    assert view.kind == "tangent" and "log map" in view.axis_note
    r = np.linalg.norm(view.coords, axis=1)
    np.testing.assert_allclose(r, 2.0 * np.arctanh(x.norm(dim=1).numpy()), rtol=1e-9)  # d(0, x), c = 1
    assert r[1] > 30.0
    cos = (view.coords[2:] * x[2:].numpy()).sum(1) / (r[2:] * x[2:].norm(dim=1).numpy())
    np.testing.assert_allclose(cos, 1.0, atol=1e-12)  # directions kept
    assert np.isfinite(view.edge_lines[~np.isnan(view.edge_lines).any(1)]).all()
    fig = geometries_figure([view])
    assert "log map" in fig.layout.xaxis.title.text and not fig.layout.shapes  # no rim: it is not the disk
    plane = embedding_view(_points("euclidean", 2), TREE, geometry="euclidean", to_scale=True)
    assert plane.kind == "plane"  # a flat plane is already to scale


def test_hover_has_name_depth_norm_and_distance():
    x = _points("poincare", 2)
    view = embedding_view(x, TREE, geometry="poincare")
    h = view.hover[3]
    assert TREE.nodes[3] in h and f"depth {TREE.depth[3]}" in h
    assert f"{float(x[3].norm()):.4f}" in h
    assert f"{2 * math.atanh(float(x[3].norm())):.3f}" in h


def test_bad_points_shape_is_rejected():
    with pytest.raises(ValueError, match="points"):
        embedding_view(torch.zeros(3, 2), TREE, geometry="euclidean")
    with pytest.raises(ValueError, match="geometry"):
        embedding_view(torch.zeros(TREE.n_nodes, 2), TREE, geometry="torus")


def test_disk_figure_draws_the_rim_and_labels_the_axes():
    fig = embedding_figure(embedding_view(_points("poincare", 2, c=4.0), TREE, geometry="poincare", c=4.0))
    assert isinstance(fig, go.Figure)
    rim = [s for s in fig.layout.shapes if s.type == "circle"]
    assert len(rim) == 1 and rim[0].x1 == pytest.approx(0.5)
    assert fig.layout.xaxis.title.text and fig.layout.yaxis.title.text
    names = [t.name for t in fig.data]
    assert "edges (hyperbolic geodesics)" in names and "nodes (colour = depth)" in names


def test_big_hierarchies_draw_a_subset_of_edges_and_say_so(monkeypatch):
    monkeypatch.setattr(viz, "MAX_EDGES", 10)
    h = from_edge_list_csv("parent,child\n" + "\n".join(f"n{i // 2},n{i + 1}" for i in range(30)))
    x = 0.1 * torch.randn(h.n_nodes, 2, dtype=torch.float64)
    view = embedding_view(x, h, geometry="euclidean")
    assert view.edges_drawn == 10 and view.edges_total == 30
    assert "10 of 30 edges" in embedding_figure(view).layout.title.text


def test_names_are_written_for_the_top_levels_only_and_all_are_in_the_hover():
    small = embedding_view(_points("poincare", 2), TREE, geometry="poincare")
    nodes = next(t for t in embedding_figure(small, names=True).data if t.name == "nodes (colour = depth)")
    assert list(nodes.text) == small.names  # 7 nodes: every name fits
    big_tree = balanced_tree(3, 4)  # 1 + 3 + 9 + 27 + 81 nodes
    g = torch.Generator().manual_seed(0)
    x = expmap0(0.8 * torch.randn(big_tree.n_nodes, 2, generator=g, dtype=torch.float64), geometry="poincare")
    view = embedding_view(x, big_tree, geometry="poincare")
    nodes = next(t for t in embedding_figure(view, names=True).data if t.name == "nodes (colour = depth)")
    written = [name for name in nodes.text if name]
    assert len(written) == 1 + 3 + 9 <= viz.MAX_LABELS  # depth 3 would pass MAX_LABELS
    assert len(nodes.hovertext) == big_tree.n_nodes
    assert viz.named_depth(np.array([0, 1, 1]), limit=1) == 0  # the root's level is always written


def test_side_by_side_uses_a_3d_scene_for_the_sphere():
    views = [embedding_view(_points(g, 2), TREE, geometry=g) for g in GEOMETRIES]
    fig = geometries_figure(views)
    assert any(isinstance(t, go.Scatter3d) for t in fig.data)
    assert fig.layout.scene is not None
    # the next panel's y-axis title ("x2") needs a gap wider than its text, or it sits on this panel
    assert fig.layout.xaxis2.domain[0] - fig.layout.xaxis.domain[1] >= 0.07
    with pytest.raises(ValueError, match="views"):
        geometries_figure([])


def test_norm_depth_and_history_figures():
    fig = norm_depth_figure({"poincare": (TREE.depth, np.linspace(0, 1, 7))}, y_title="radius")
    assert len(fig.data) == 1 and fig.data[0].type == "box"
    assert fig.layout.xaxis.title.text and fig.layout.yaxis.title.text == "radius"
    hist = [{"epoch": 1, "loss": 2.0}, {"epoch": 2, "loss": 1.5, "map": 0.7}]
    fig = training_history_figure(hist)
    assert list(fig.data[0].y) == [2.0, 1.5] and list(fig.data[1].y) == [0.7]


@pytest.mark.parametrize("geometry,dim", [("poincare", 2), ("euclidean", 2), ("sphere", 2)])
def test_root_at_centre_is_an_isometry(geometry, dim):
    from georesolver_core.geometry import pairwise_distance

    x = _points(geometry, dim)
    moved = embedding_view(x, TREE, geometry=geometry, root_at_centre=True)
    centre = np.zeros(moved.coords.shape[1])
    centre[:] = GEOMETRIES[geometry].origin(centre.shape[0], dtype=torch.float64).numpy()  # the north pole
    np.testing.assert_allclose(moved.coords[0], centre, atol=1e-9)
    d_before = pairwise_distance(x, x, geometry=geometry)
    d_after = pairwise_distance(torch.from_numpy(moved.coords), torch.from_numpy(moved.coords), geometry=geometry)
    torch.testing.assert_close(d_after, d_before, rtol=1e-7, atol=1e-7)
    assert "root at the centre" in moved.axis_note


def test_lineage_highlights_ancestors_and_descendants_on_top():
    from georesolver_core.tasks.hierarchy import balanced_tree
    from georesolver_core.viz.embeddings import embedding_figure, embedding_view, lineage

    tree = balanced_tree(2, 2)  # root, 0, 1, 0.0, 0.1, 1.0, 1.1
    hl = lineage(tree, 1)
    assert hl["ancestors"].tolist() == [0] and hl["descendants"].tolist() == [3, 4]
    x = torch.rand(tree.n_nodes, 2, dtype=torch.float64) * 0.5
    view = embedding_view(x, tree, geometry="poincare", centre=1)
    assert np.allclose(view.coords[1], 0.0, atol=1e-9)  # the searched node moved to the centre
    fig = embedding_figure(view, highlight=hl)
    names = [t.name for t in fig.data]
    assert "ancestors (1)" in names and "descendants (2)" in names and "searched node" in names


@pytest.mark.parametrize("geometry", list(GEOMETRIES))
def test_lineage_highlight_draws_in_every_geometry(geometry):
    from georesolver_core.tasks.hierarchy import balanced_tree
    from georesolver_core.viz.embeddings import embedding_figure, embedding_view, lineage

    tree = balanced_tree(2, 2)
    x = GEOMETRIES[geometry].embed(torch.rand(tree.n_nodes, 3, dtype=torch.float64) * 0.5, 1.0)
    fig = embedding_figure(embedding_view(x, tree, geometry=geometry), highlight=lineage(tree, 1))
    assert "searched node" in [t.name for t in fig.data]  # the 3-D sphere takes the same marker symbols


@pytest.mark.parametrize(("geometry", "dim"), [("poincare", 2), ("poincare", 5), ("euclidean", 3), ("sphere", 2)])
def test_batched_arcs_are_the_edge_by_edge_geodesics(geometry, dim):
    from georesolver_core.geometry import geodesic

    x = _points(geometry, dim)
    arcs = viz.geodesic_arcs(x, TREE.edges, geometry=geometry)  # (T, E, D)
    t = torch.linspace(0.0, 1.0, viz.ARC_POINTS, dtype=torch.float64)
    for e, (p, q) in enumerate(TREE.edges.tolist()):
        torch.testing.assert_close(arcs[:, e], geodesic(x[p], x[q], t, geometry=geometry), atol=1e-9, rtol=0)


def test_group_by_ancestor_takes_the_first_root_and_leaves_the_rest_as_other():
    h = from_edge_list_csv(b"parent,child\nr,a\nr,b\na,a1\na,a2\nb,b1\nb,a2\nr,z\n", name="dag")
    groups = viz.group_by_ancestor(h, {"a": "As", "b": "Bs", "missing": "gone"})
    named = {label: sorted(h.nodes[i] for i in idx) for label, idx in groups.items()}
    # a2 has both a and b as parents: the first root listed wins; r and z are under neither
    assert named == {"As": ["a", "a1", "a2"], "Bs": ["b", "b1"], viz.OTHER: ["r", "z"]}
    assert list(groups)[-1] == viz.OTHER


def test_groups_colour_nodes_one_trace_each_with_a_legend_and_webgl_when_big(monkeypatch):
    view = embedding_view(_points("poincare", 2), TREE, geometry="poincare")
    groups = {"left": np.array([1, 3, 4]), "right": np.array([2, 5, 6]), viz.OTHER: np.array([0])}
    fig = embedding_figure(view, groups=groups)
    nodes = [t for t in fig.data if t.mode == "markers"]
    assert [t.name for t in nodes] == ["left (3)", "right (3)", "other (1)"]
    assert len({t.marker.color for t in nodes}) == 3 and nodes[-1].marker.color == viz.OTHER_COLOR
    assert "left" in nodes[0].hovertext[0]
    assert all(isinstance(t, go.Scatter) for t in fig.data)  # 7 nodes: SVG
    monkeypatch.setattr(viz, "GL_NODES", 3)
    fig = embedding_figure(view, groups=groups)
    assert all(isinstance(t, go.Scattergl) for t in fig.data)


def test_groups_colour_the_edges_by_their_child_so_a_group_reads_as_a_fan():
    view = embedding_view(_points("poincare", 2), TREE, geometry="poincare")
    groups = {"left": np.array([1, 3, 4]), "right": np.array([2, 5, 6]), viz.OTHER: np.array([0])}
    fig = embedding_figure(view, groups=groups)
    lines = [t for t in fig.data if t.mode == "lines"]
    nodes = {t.name.split(" (")[0]: t.marker.color for t in fig.data if t.mode == "markers"}
    assert [t.line.color for t in lines] == [nodes["left"], nodes["right"]]  # the root is no edge's child
    assert sum(np.isnan(t.x).sum() for t in lines) == TREE.n_edges  # every edge drawn once
    assert [t.showlegend for t in lines] == [True, False]
