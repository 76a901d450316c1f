"""The Home figure: one query and its keys in the plane, the Poincaré disk and on the sphere, marker area ~
IDA weight; key labels only while they stay readable; the query on k1 gives k1 all the weight as eps -> 0."""

from __future__ import annotations

import numpy as np
import pytest

from georesolver_core.viz.home import LABELS_UP_TO, PANELS, arc_example, arc_figure


def _keys(fig) -> list:
    return [t for t in fig.data if (t.name or "").startswith("keys")]


@pytest.mark.parametrize("n_keys", [1, LABELS_UP_TO, LABELS_UP_TO + 1, 12])
def test_each_panel_has_its_arcs_keys_and_query_on_its_own_axes(n_keys):
    fig = arc_figure(arc_example(n_keys, 0.05, 0, 1.2, "random"))
    # per panel: one geodesic per key, the keys, the query; the sphere panel also draws the unit sphere
    assert len(fig.data) == len(PANELS) * (n_keys + 2) + 1
    keys = _keys(fig)
    assert [(t.type, t.xaxis, t.yaxis) for t in keys[:2]] == [("scatter", "x", "y"), ("scatter", "x2", "y2")]
    assert (keys[2].type, keys[2].scene) == ("scatter3d", "scene")
    for t in keys:
        assert len(t.hovertext) == n_keys  # the name and exact weight of every key, labelled or not
        if n_keys <= LABELS_UP_TO:
            assert t.mode == "markers+text" and list(t.text) == [f"k{j + 1}" for j in range(n_keys)]
        else:
            assert t.mode == "markers" and t.text is None  # from 8 keys on the labels ran into each other
    assert [a.text for a in fig.layout.annotations] == [title for _, title, _ in PANELS]
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
