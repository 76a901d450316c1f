"""Figures of a 2-D loss landscape: a 3-D surface beside its contour map, with the keys, the grid's
local minima and (optionally) animated descent paths. Pure functions: data in, ``go.Figure`` out."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from georesolver_core.geometry import GEOMETRIES
from georesolver_core.landscape.grid import chart
from georesolver_core.viz.landscape_descent import add_descent_paths
from georesolver_core.viz.style import base_layout, unit_disk_shapes


def surface_and_contour(
    x, y, z, *, hover: str, ncontours: int, colorbar: dict, name: str | None = None, **subplots
) -> go.Figure:
    """A loss z over the grid x, y twice: a 3-D surface in column 1, a contour map in column 2.

    ``subplots`` are passed on to ``make_subplots`` (column widths, spacing)."""
    fig = make_subplots(
        rows=1,
        cols=2,
        specs=[[{"type": "scene"}, {"type": "xy"}]],
        subplot_titles=("surface", "contour map"),
        **subplots,
    )
    fig.add_trace(
        go.Surface(x=x, y=y, z=z, colorscale="Viridis", showscale=False, hovertemplate=hover, name=name),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Contour(
            x=x,
            y=y,
            z=z,
            colorscale="Viridis",
            ncontours=ncontours,
            colorbar=colorbar,
            hovertemplate=hover,
            name=name,
        ),
        row=1,
        col=2,
    )
    return fig


def landscape_figure(
    grid,
    paths=None,
    outcomes: list[str] | None = None,
    *,
    n_frames: int = 30,
    speed: float = 1.0,
    title: str = "",
    height: int = 640,
) -> go.Figure:
    """3-D surface (left) and contour map (right) of a LandscapeGrid; descent paths overlaid and
    animated with plotly frames (Play / slider, played at ``speed``). Keys are markers, the target key a star."""
    xt, yt = chart(grid.geometry).axes
    fig = surface_and_contour(
        grid.u,
        grid.v,
        grid.loss,
        hover=xt + " %{x:.3f}<br>" + yt + " %{y:.3f}<br>L %{z:.4g}<extra></extra>",
        ncontours=30,
        colorbar=dict(title=dict(text="L"), x=1.02),
        name="loss",
        column_widths=[0.5, 0.5],
        horizontal_spacing=0.06,
    )
    # Keys: hover the loss at the nearest grid node so the two panels agree.
    kuv = grid.keys_uv
    is_t = np.arange(kuv.shape[0]) == grid.target
    for mask, label, symbol in ((is_t, "target key", "star"), (~is_t, "other keys", "x")):
        if not mask.any():
            continue
        fig.add_trace(
            go.Scatter(
                x=kuv[mask, 0],
                y=kuv[mask, 1],
                mode="markers",
                name=label,
                marker=dict(
                    symbol=symbol, size=13 if symbol == "star" else 9, color="white", line=dict(width=1.5)
                ),
                hovertemplate=label + " (%{x:.3f}, %{y:.3f})<extra></extra>",
            ),
            row=1,
            col=2,
        )
    if grid.minima_uv.shape[0]:
        fig.add_trace(
            go.Scatter(
                x=grid.minima_uv[:, 0],
                y=grid.minima_uv[:, 1],
                mode="markers",
                name="grid local minima",
                marker=dict(
                    symbol="circle-open",
                    size=14,
                    color=["#2ca02c" if g else "#d62728" for g in grid.minima_global],
                    line=dict(width=2),
                ),
                text=["global" if g else "spurious" for g in grid.minima_global],
                hovertemplate="%{text} minimum (%{x:.3f}, %{y:.3f})<extra></extra>",
            ),
            row=1,
            col=2,
        )
    if (rim := GEOMETRIES[grid.geometry].rim(grid.c)) is not None:  # the Poincaré disk
        for shape in unit_disk_shapes(rim):
            shape.update(xref="x", yref="y")
            fig.add_shape(shape)
    lim = float(grid.u[-1])
    fig.update_xaxes(range=[-lim, lim], title_text=xt, row=1, col=2)
    fig.update_yaxes(range=[-lim, lim], title_text=yt, scaleanchor="x", scaleratio=1, row=1, col=2)
    fig.update_scenes(
        xaxis_title=xt.split(" (")[0], yaxis_title=yt.split(" (")[0], zaxis_title="loss L", aspectmode="cube"
    )
    if paths is not None:
        add_descent_paths(fig, grid, paths, outcomes, n_frames, speed=speed)
    base_layout(fig, title, "", "", height)
    below = -0.34 if paths is not None else -0.05  # under the Play buttons and the step slider
    fig.update_layout(
        legend=dict(orientation="h", yanchor="top", y=below, xanchor="left", x=0),
        margin=dict(b=250 if paths is not None else 80),
    )
    return fig
