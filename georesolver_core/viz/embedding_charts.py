"""Summary figures of hierarchy embeddings: radius against depth per geometry, and a run's training history."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from georesolver_core.geometry import GEOMETRIES
from georesolver_core.viz.style import base_layout


def norm_depth_figure(series: dict[str, tuple[np.ndarray, np.ndarray]], *, y_title: str) -> go.Figure:
    """Box plot of a per-node radius (y) against tree depth (x), one colour per geometry key of ``series``."""
    fig = go.Figure()
    for geo, (depth, value) in series.items():
        label = GEOMETRIES[geo].label if geo in GEOMETRIES else geo
        fig.add_trace(
            go.Box(
                x=np.asarray(depth),
                y=np.asarray(value),
                name=label,
                marker_color=GEOMETRIES[geo].colour if geo in GEOMETRIES else "#7f7f7f",
                boxpoints="all",
                jitter=0.3,
                pointpos=0,
                hovertemplate="depth %{x}<br>" + y_title + " %{y:.4f}<extra>" + label + "</extra>",
            )
        )
    base_layout(
        fig, "Radius against depth: leaves go to the rim in the ball", "tree depth (hops from the root)", y_title
    )
    fig.update_layout(boxmode="group")
    return fig


def training_history_figure(history: list[dict]) -> go.Figure:
    """Loss per epoch (left axis) and edge-reconstruction MAP where evaluated (right axis)."""
    epochs = [r["epoch"] for r in history]
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(
        go.Scatter(x=epochs, y=[r["loss"] for r in history], mode="lines", name="loss (nats per edge)"),
        secondary_y=False,
    )
    evals = [r for r in history if "map" in r]
    fig.add_trace(
        go.Scatter(
            x=[r["epoch"] for r in evals],
            y=[r["map"] for r in evals],
            mode="lines+markers",
            name="MAP (edge reconstruction)",
            hovertemplate="epoch %{x}<br>MAP %{y:.4f}<extra></extra>",
        ),
        secondary_y=True,
    )
    base_layout(fig, "Training", "epoch (one pass over all edges)", "")
    fig.update_yaxes(title_text="loss (nats per edge)", secondary_y=False)
    fig.update_yaxes(title_text="MAP (1 = perfect)", range=[0, 1.02], dtick=0.2, secondary_y=True)
    fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.2, xanchor="left", x=0))
    return fig
