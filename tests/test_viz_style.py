"""Shared figure helpers: the white template, log axes whose labels do not collide, one trace from an array of
points."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest
from plotly.subplots import make_subplots

from georesolver_core.viz.style import MAX_DECADE_LABELS, base_layout, log_axis, points_trace, white_template


def _three_panels(*spans: tuple[float, float]) -> go.Figure:
    fig = make_subplots(rows=1, cols=len(spans))
    for col, (lo, hi) in enumerate(spans, start=1):
        fig.add_trace(go.Scatter(x=[1, 2, 3], y=[lo, np.sqrt(lo * hi), hi]), row=1, col=col)
    return fig


def test_log_axis_labels_each_axis_by_the_decades_its_own_data_span():
    fig = _three_panels((1.0, 5.0), (1.0, 50.0), (1e-20, 1.0))
    log_axis(fig, "y", title_text="error")
    narrow, medium, wide = fig.layout.yaxis, fig.layout.yaxis2, fig.layout.yaxis3
    assert all(ax.type == "log" and ax.exponentformat == "power" for ax in (narrow, medium, wide))
    assert all(ax.title.text == "error" for ax in (narrow, medium, wide))  # update_kwargs are forwarded
    assert list(narrow.tickvals) == [1, 2, 5]  # under a decade: still 1, 2, 5 while three fall inside
    # 1.7 decades: 1, 2, 5 x 10^k written in full, a handful of labels
    assert list(medium.tickvals) == [1, 2, 5, 10, 20, 50] and list(medium.ticktext) == [
        "1",
        "2",
        "5",
        "10",
        "20",
        "50",
    ]
    # 20 decades: only every k-th power of ten is labelled, unlabelled minor ticks in between
    assert wide.dtick == int(np.ceil(20 / MAX_DECADE_LABELS)) and wide.minor.ticks == "inside"
    assert 20 / wide.dtick <= MAX_DECADE_LABELS


def test_log_axis_row_col_select_one_axis_and_a_given_range_counts():
    fig = _three_panels((1.0, 1e4), (1.0, 1e4), (1.0, 1e4))
    log_axis(fig, "y", row=1, col=2)
    assert fig.layout.yaxis.type is None and fig.layout.yaxis3.type is None
    chosen = fig.layout.yaxis2
    assert chosen.type == "log" and chosen.dtick == 1 and chosen.minor.dtick == "D1"
    log_axis(fig, "y", row=1, col=1, range=[0, 0.2])  # log10 units: 1 to 1.6, where plotly's own ticks serve
    assert fig.layout.yaxis.dtick is None and fig.layout.yaxis.tickvals is None
    assert list(fig.layout.yaxis.range) == [0, 0.2]


def test_log_axis_labels_powers_of_ten_where_one_two_five_would_crowd():
    fig = go.Figure(go.Scatter(x=[1, 2], y=[1.0, 80.0]))  # 1.9 decades: seven 1-2-5 marks
    log_axis(fig, "y")
    assert fig.layout.yaxis.tickvals is None and fig.layout.yaxis.dtick == 1


def test_log_axis_leaves_labels_to_plotly_under_a_given_tickformat():
    fig = go.Figure(go.Scatter(x=[1, 2], y=[0.3, 2.0]))
    log_axis(fig, "y", tickformat=".2g")
    assert fig.layout.yaxis.tickvals is None and fig.layout.yaxis.tickformat == ".2g"


def test_log_axis_writes_tiny_and_huge_ticks_as_powers_of_ten():
    fig = go.Figure(go.Scatter(x=[1, 2], y=[2e-5, 1e-3]))
    log_axis(fig, "y")
    assert list(fig.layout.yaxis.ticktext)[:3] == [
        "2·10<sup>\u22125</sup>",
        "5·10<sup>\u22125</sup>",
        "10<sup>\u22124</sup>",
    ]


def test_log_axis_ignores_non_positive_values_and_refuses_other_axes():
    fig = go.Figure(go.Scatter(x=[0.0, -1.0, 1e-3, 1e3], y=[1, 2, 3, 4]))
    log_axis(fig, "x")
    assert fig.layout.xaxis.dtick == 1  # 6 decades from the positive values only
    with pytest.raises(ValueError, match="axis must be 'x' or 'y'"):
        log_axis(fig, "z")


def test_points_trace_is_2d_or_3d_by_the_width_of_the_points():
    flat = points_trace(np.array([[0.0, 1.0], [2.0, 3.0]]), mode="lines", name="arc")
    assert isinstance(flat, go.Scatter) and list(flat.y) == [1.0, 3.0] and flat.name == "arc"
    space = points_trace([[0, 0, 1], [1, 0, 0]], mode="markers")
    assert isinstance(space, go.Scatter3d) and list(space.z) == [1.0, 0.0]
    with pytest.raises(ValueError, match=r"points must have shape \(n, 2\) or \(n, 3\)"):
        points_trace(np.zeros((4, 5)))


def test_white_template_is_the_validated_template_and_the_figure_owns_its_copy():
    fast = base_layout(go.Figure(go.Scatter(x=[1, 2], y=[3, 4])), "t", "x", "y")
    slow = go.Figure(go.Scatter(x=[1, 2], y=[3, 4])).update_layout(template="plotly_white")
    assert fast.to_plotly_json()["layout"]["template"] == slow.to_plotly_json()["layout"]["template"]
    white_template(fast).layout.template.layout.font.size = 30  # a figure's change stays in that figure
    assert pio.templates["plotly_white"].layout.font.size is None
    assert white_template(go.Figure()).layout.template.layout.font.size is None
    with pytest.raises(ValueError):  # validation is back on for everything after the template
        fast.update_layout(height=-1)
