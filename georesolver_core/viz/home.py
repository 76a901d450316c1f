"""The Home page's figure: the same keys and query in the plane, the Poincaré disk and on the sphere.

Each key's marker size is its inverse-distance attention weight for the query, and each query-key
pair is joined by the geodesic of its geometry (a segment, a circular arc orthogonal to the rim,
a great-circle arc): the arc Euclidean -> hyperbolic -> spherical of the paper in one picture.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from georesolver_core.attention import ida_weights
from georesolver_core.geometry import geodesic, stereographic_map, to_ball
from georesolver_core.validate import check_eps, check_positive_int
from georesolver_core.viz.style import GEOMETRY_COLORS, equal_aspect, sphere_surface, unit_disk_shapes

PANELS = (("euclidean", "Plane R^2"), ("poincare", "Poincaré disk (curvature -1)"), ("sphere", "Sphere S^2"))


@dataclass
class ArcExample:
    """Points of each geometry (rows: query first, then keys), weights per geometry, geodesic polylines."""

    points: dict[str, np.ndarray]  # geometry -> (1 + n, 2 or 3)
    weights: dict[str, np.ndarray]  # geometry -> (n,)
    arcs: dict[str, list[np.ndarray]]  # geometry -> n polylines (T, 2 or 3)
    eps: float


QUERY_PLACES = {"key": "on key k1", "random": "at a random point"}


def arc_example(
    n_keys: int = 5, eps: float = 0.05, seed: int = 0, spread: float = 1.2, query: str = "key"
) -> ArcExample:
    """Draw n keys and a query in R^2, map them into the disk (0.9 tanh) and onto the sphere
    (inverse stereographic), and compute the IDA weights of the query in each geometry (float64).

    ``query="key"`` puts the query on key k1 (in every geometry, the maps being pointwise): as eps -> 0
    k1 takes all the weight. ``"random"`` draws it: the weights then tend to 1/d^2, not to one-hot.
    """
    check_positive_int("n_keys", n_keys, 1, 50)
    eps = check_eps(eps)
    if query not in QUERY_PLACES:
        raise ValueError(f"query must be one of {sorted(QUERY_PLACES)} (got {query!r})")
    g = torch.Generator().manual_seed(seed)
    z = spread * torch.randn(n_keys + 1, 2, generator=g, dtype=torch.float64)  # (1 + n, 2)
    if query == "key":
        z[0] = z[1]
    pts = {"euclidean": z, "poincare": to_ball(z), "sphere": stereographic_map(z)}
    t = torch.linspace(0, 1, 24, dtype=torch.float64)  # 24 points draw an arc smoothly at this size
    weights, arcs = {}, {}
    for geo, p in pts.items():
        weights[geo] = ida_weights(p[:1], p[1:], eps=eps, geometry=geo)[0].numpy()
        arcs[geo] = [geodesic(p[0], p[j], t, geometry=geo).numpy() for j in range(1, n_keys + 1)]
    return ArcExample({k: v.numpy() for k, v in pts.items()}, weights, arcs, eps)


def _size(w: np.ndarray) -> np.ndarray:
    """Marker diameter: area proportional to the weight, from 6 px (weight 0) to 40 px (weight 1)."""
    return 6 + 34 * np.sqrt(np.clip(w, 0, 1))


def arc_figure(ex: ArcExample) -> go.Figure:
    """Three panels; marker area ~ IDA weight, hover shows the exact weight."""
    fig = make_subplots(
        rows=1,
        cols=3,
        specs=[[{"type": "xy"}, {"type": "xy"}, {"type": "scene"}]],
        subplot_titles=[title for _, title in PANELS],
        horizontal_spacing=0.06,
    )
    for col, (geo, _) in enumerate(PANELS, start=1):
        p, w, color = ex.points[geo], ex.weights[geo], GEOMETRY_COLORS[geo]
        labels = [f"k{j + 1}" for j in range(len(w))]
        hover = [f"key {lab}<br>IDA weight {wj:.3f}" for lab, wj in zip(labels, w, strict=True)]
        for j, arc in enumerate(ex.arcs[geo]):
            line = dict(color=color, width=1 + 5 * float(w[j]))
            if geo == "sphere":
                fig.add_trace(
                    go.Scatter3d(
                        x=arc[:, 0],
                        y=arc[:, 1],
                        z=arc[:, 2],
                        mode="lines",
                        line=line,
                        showlegend=False,
                        hoverinfo="skip",
                    ),
                    row=1,
                    col=col,
                )
            else:
                fig.add_trace(
                    go.Scatter(
                        x=arc[:, 0], y=arc[:, 1], mode="lines", line=line, showlegend=False, hoverinfo="skip"
                    ),
                    row=1,
                    col=col,
                )
        if geo == "sphere":
            fig.add_trace(sphere_surface(n=24), row=1, col=col)  # a coarse mesh redraws quickly
            fig.add_trace(
                go.Scatter3d(
                    x=p[1:, 0],
                    y=p[1:, 1],
                    z=p[1:, 2],
                    mode="markers+text",
                    text=labels,
                    # 3-D marker sizes render smaller than 2-D ones at the same number: 0.8 keeps them comparable
                    marker=dict(size=0.8 * _size(w), color=color, line=dict(width=0)),
                    hovertext=hover,
                    hoverinfo="text",
                    name="keys (sphere)",
                    showlegend=False,
                ),
                row=1,
                col=col,
            )
            fig.add_trace(
                go.Scatter3d(
                    x=p[:1, 0],
                    y=p[:1, 1],
                    z=p[:1, 2],
                    mode="markers",
                    marker=dict(size=7, color="black", symbol="diamond"),
                    name="query",
                    showlegend=False,
                    hoverinfo="name",
                ),
                row=1,
                col=col,
            )
        else:
            fig.add_trace(
                go.Scatter(
                    x=p[1:, 0],
                    y=p[1:, 1],
                    mode="markers+text",
                    text=labels,
                    textposition="top center",
                    marker=dict(size=_size(w), color=color, opacity=0.8),
                    hovertext=hover,
                    hoverinfo="text",
                    name=f"keys ({geo})",
                    showlegend=False,
                ),
                row=1,
                col=col,
            )
            fig.add_trace(
                go.Scatter(
                    x=p[:1, 0],
                    y=p[:1, 1],
                    mode="markers",
                    marker=dict(size=12, color="black", symbol="x"),
                    name="query",
                    showlegend=col == 1,
                    hoverinfo="name",
                ),
                row=1,
                col=col,
            )
    lim = float(np.abs(ex.points["euclidean"]).max()) * 1.15
    equal_aspect(fig, lim)
    fig.update_xaxes(range=[-1.05, 1.05], row=1, col=2)
    fig.update_yaxes(range=[-1.05, 1.05], scaleanchor="x2", row=1, col=2)
    fig.update_yaxes(scaleanchor="x", row=1, col=1)
    for shape in unit_disk_shapes():
        fig.add_shape(**shape, row=1, col=2)
    fig.update_layout(
        template="plotly_white",
        height=420,
        margin=dict(l=10, r=10, t=70, b=30),
        scene=dict(
            aspectmode="cube",
            xaxis_title="x",
            yaxis_title="y",
            zaxis_title="z",
            camera=dict(eye=dict(x=1.7, y=1.7, z=1.1)),  # far enough that the axis titles fit
        ),
        title=f"One query (x/diamond), {len(ex.weights['euclidean'])} keys; marker size = IDA weight, eps = {ex.eps:g}",
    )
    return fig
