"""Routing figures: a measured zero on a log axis is a gap, not a line plunging off the plot."""

from __future__ import annotations

from georesolver_core.viz.routing import quality_figure


def test_quality_figure_leaves_a_gap_at_a_measured_zero():
    ks, worst, random = [1, 2, 8, 12], [1.0, 0.5, 0.1, 0.0], [0.9, 0.4, 0.05, 1e-16]
    fig = quality_figure(ks, worst, random, [3.0, 2.0, 1.0, 1e-14], [1.0, 0.5, 0.1, 1e-15])
    measured = next(t for t in fig.data if t.name == "measured, worst-case values")
    assert list(measured.x) == [1.0, 2.0, 8.0, 12.0] and list(measured.y) == [1.0, 0.5, 0.1, None]
    assert fig.layout.yaxis.type == "log"


def test_sphere_prototypes_get_distinct_colours_and_arcs_take_their_prototypes_colour():
    from georesolver_core.routing.demo import routing_demo
    from georesolver_core.viz.routing import prototype_colors, routing_sphere_figure

    for m in (1, 12, 64):
        assert len(set(prototype_colors(m))) == m
    d = routing_demo(12, 30, k=2, eps=0.05, spread=0.3, seed=0)
    fig = routing_sphere_figure(d.queries, d.protos, d.indices, d.weights)
    colours = prototype_colors(12)
    first = fig.data[1]  # the first-choice arcs, after the sphere surface
    assert set(first.line.color) == {colours[int(e)] for e in d.indices[:, 0]}
    protos = [t for t in fig.data if t.legend == "legend2"]  # one legend entry per prototype, in its colour
    assert [t.marker.color for t in protos] == colours
    assert [t.name.split()[0] for t in protos] == [f"c{e}" for e in range(12)]
    assert sum(int(t.name.split()[-1].rstrip(")")) for t in protos) == 30  # Top-1 counts cover every query
    assert not [
        t for t in fig.data if "text" in (getattr(t, "mode", None) or "")
    ]  # no name written over a marker or an arc


def test_sphere_with_many_prototypes_keeps_them_in_one_trace_named_in_the_hover():
    from georesolver_core.routing.demo import routing_demo
    from georesolver_core.viz.routing import MAX_PROTOTYPE_LABELS, prototype_colors, routing_sphere_figure

    m = MAX_PROTOTYPE_LABELS + 4
    d = routing_demo(m, 30, k=2, eps=0.05, spread=0.3, seed=0)
    fig = routing_sphere_figure(d.queries, d.protos, d.indices, d.weights)
    assert list(fig.data[-1].marker.color) == prototype_colors(m) and fig.data[-1].name == "prototypes"
    assert fig.data[-1].text[3].startswith("prototype c3: Top-1 of")
    assert not [t for t in fig.data if t.legend == "legend2"]


def test_attention_sphere_keeps_the_heaviest_key_in_front_of_the_query_and_writes_its_weight():
    import numpy as np

    from georesolver_core.viz.attention import geometry_scatter

    q = np.array([0.0, 0.0, 1.0])
    keys = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    fig = geometry_scatter(q, keys, np.array([0.93, 0.05, 0.02]), geometry="sphere")
    key_trace = next(t for t in fig.data if t.name and t.name.startswith("keys"))
    query = next(t for t in fig.data if t.name == "query")
    assert key_trace.z[0] > query.z[0]  # the key sits outside the surface, in front of the query marker
    assert "0.93" in key_trace.text[0]
