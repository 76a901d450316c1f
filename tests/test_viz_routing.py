"""Routing figures: a measured zero on a log axis is a gap, not a line plunging off the plot."""

from __future__ import annotations

from georesolver_core.viz.routing import quality_figure


def test_quality_figure_leaves_a_gap_at_a_measured_zero():
    ks, worst, random = [1, 2, 8, 12], [1.0, 0.5, 0.1, 0.0], [0.9, 0.4, 0.05, 1e-16]
    fig = quality_figure(ks, worst, random, [3.0, 2.0, 1.0, 1e-14], [1.0, 0.5, 0.1, 1e-15])
    measured = next(t for t in fig.data if t.name == "measured, worst-case values")
    assert list(measured.x) == [1.0, 2.0, 8.0, 12.0] and list(measured.y) == [1.0, 0.5, 0.1, None]
    assert fig.layout.yaxis.type == "log"
