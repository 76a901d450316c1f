"""The Home figure: one query and its keys in the plane, the Poincaré disk and on the sphere, marker area ~
IDA weight; key labels only while they stay readable; the query on k1 gives k1 all the weight as eps -> 0."""

from __future__ import annotations

import numpy as np
import pytest

from georesolver_core.geometry import GEOMETRIES
from georesolver_core.viz.home import (
    EYE,
    LABELS_UP_TO,
    arc_example,
    arc_figure,
    panel_geometries,
    project_sphere,
    view_direction,
)


def _keys(fig) -> list:
    return [t for t in fig.data if (t.name or "").startswith("keys")]


@pytest.mark.parametrize("sphere_3d", [False, True])
@pytest.mark.parametrize("n_keys", [1, LABELS_UP_TO, LABELS_UP_TO + 1, 12])
def test_each_panel_has_its_arcs_keys_and_query_on_its_own_axes(n_keys, sphere_3d):
    fig = arc_figure(arc_example(n_keys, 0.05, 0, 1.2, "random"), sphere_3d=sphere_3d)
    # per panel: one geodesic per key, the keys, the query; the sphere panel also draws the unit sphere.
    # The flat globe draws each geodesic and the sphere's grid twice: near side solid, far side faint.
    if sphere_3d:
        assert len(fig.data) == len(panel_geometries()) * (n_keys + 2) + 1
    else:
        assert len(fig.data) == 2 * (n_keys + 2) + 2 * n_keys + 4
    keys = _keys(fig)
    assert [(t.type, t.xaxis, t.yaxis) for t in keys[:2]] == [("scatter", "x", "y"), ("scatter", "x2", "y2")]
    if sphere_3d:
        assert (keys[2].type, keys[2].scene) == ("scatter3d", "scene")
    else:
        assert (keys[2].type, keys[2].xaxis, keys[2].yaxis) == ("scatter", "x3", "y3")
        assert fig.layout.yaxis3.scaleanchor == "x3"  # the globe's outline is a circle
    for t in keys:
        assert len(t.hovertext) == n_keys  # the name and exact weight of every key, labelled or not
        if n_keys <= LABELS_UP_TO:
            assert t.mode == "markers+text" and list(t.text) == [f"k{j + 1}" for j in range(n_keys)]
        else:
            assert t.mode == "markers" and t.text is None  # from 8 keys on the labels ran into each other
    assert [a.text for a in fig.layout.annotations] == [GEOMETRIES[g].panel.title for g in panel_geometries()]
    assert fig.layout.yaxis.scaleanchor == "x" and fig.layout.yaxis2.scaleanchor == "x2"
    assert tuple(fig.layout.xaxis2.range) == (-1.05, 1.05)  # the whole disk, its rim drawn as a shape
    assert (fig.layout.shapes[0].xref, fig.layout.shapes[0].yref) == ("x2", "y2")


def test_query_on_k1_takes_the_weight_as_eps_shrinks_and_marker_area_follows():
    ex = arc_example(5, 1e-4, 3, 1.2, "key")
    fig = arc_figure(ex)
    for geo, w in ex.weights.items():
        assert w[0] > 0.99, geo
    plane = _keys(fig)[0]
    assert np.argmax(plane.marker.size) == 0 and plane.marker.size[0] == pytest.approx(
        6 + 34 * np.sqrt(ex.weights["euclidean"][0])
    )
    assert f"eps = {ex.eps:g}" in fig.layout.title.text


def test_globe_picture_is_the_orthographic_view_from_the_3d_camera():
    """Screen coordinates are an isometry of the sphere onto the unit disk; depth says which side faces EYE."""
    rng = np.random.default_rng(0)
    p = rng.normal(size=(200, 3))
    p /= np.linalg.norm(p, axis=1, keepdims=True)
    for toward in (EYE / np.linalg.norm(EYE), np.array([0.0, 0.0, 1.0]), np.array([0.6, 0.0, -0.8])):
        xy, depth = project_sphere(p, toward)
        np.testing.assert_allclose((xy**2).sum(1) + depth**2, 1.0, atol=1e-12)  # a rotation of the sphere
        np.testing.assert_allclose(depth, p @ toward, atol=1e-12)
        centre, d = project_sphere(toward[None], toward)
        np.testing.assert_allclose(centre, 0.0, atol=1e-12)  # the point facing the viewer is drawn mid-disk
        assert d[0] == pytest.approx(1.0)
    top, _ = project_sphere(np.array([[0.0, 0.0, 1.0]]), EYE / np.linalg.norm(EYE))
    assert top[0, 1] > 0 and abs(top[0, 0]) < 1e-12  # z up on the screen, as in the 3-D camera


def test_the_picture_faces_the_query_and_its_keys():
    for seed in range(5):
        ex = arc_example(5, 0.05, seed, 1.2, "key")
        _, depth = project_sphere(ex.points["sphere"], view_direction(ex.points["sphere"]))
        assert depth.mean() > 0, seed  # on average the points face the viewer


def test_far_side_keys_are_faint_and_said_so_in_the_hover():
    ex = arc_example(12, 0.05, 1, 3.0, "random")
    keys = _keys(arc_figure(ex))[2]
    _, depth = project_sphere(ex.points["sphere"][1:], view_direction(ex.points["sphere"]))
    assert (depth < 0).any() and (depth >= 0).any()  # this draw has keys on both sides
    opacity = np.asarray(keys.marker.opacity)
    assert (opacity[depth < 0] < opacity[depth >= 0].min()).all()
    assert all(("far side" in h) == (d < 0) for h, d in zip(keys.hovertext, depth, strict=True))
