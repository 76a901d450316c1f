"""Figures of a small trained model: its loss over a slice through parameter space, and its
training curve. Pure functions: data in, ``go.Figure`` out."""

from __future__ import annotations

import plotly.graph_objects as go

from georesolver_core.viz.landscape_surface import surface_and_contour
from georesolver_core.viz.style import base_layout, log_axis


def model_slice_figure(sl, title: str = "", height: int = 540) -> go.Figure:
    """Surface and contour of a trained model's loss over two filter-normalised directions."""
    fig = surface_and_contour(
        sl.a,
        sl.b,
        sl.loss,
        hover="a %{x:.3f}<br>b %{y:.3f}<br>loss %{z:.4g}<extra></extra>",
        ncontours=25,
        colorbar=dict(title=dict(text="loss")),
    )
    fig.add_trace(
        go.Scatter(
            x=[0.0],
            y=[0.0],
            mode="markers",
            name="trained parameters",
            marker=dict(symbol="star", size=13, color="white", line=dict(width=1.5)),
            hovertemplate=f"trained model, loss {sl.centre_loss:.4g}<extra></extra>",
        ),
        row=1,
        col=2,
    )
    fig.update_scenes(xaxis_title="direction 1 (a)", yaxis_title="direction 2 (b)", zaxis_title="cross-entropy")
    base_layout(fig, title, "", "", height)
    fig.update_xaxes(title_text="step a along direction 1 (filter-normalised units)", row=1, col=2)
    fig.update_yaxes(title_text="step b along direction 2", row=1, col=2)
    return fig


def history_figure(history: list[float], height: int = 260) -> go.Figure:
    """Training loss per step."""
    fig = go.Figure(
        go.Scatter(
            y=history,
            mode="lines",
            name="training loss",
            hovertemplate="step %{x}<br>loss %{y:.4g}<extra></extra>",
        )
    )
    base_layout(fig, "", "training step", "cross-entropy (nats)", height)
    log_axis(fig, "y")
    return fig
