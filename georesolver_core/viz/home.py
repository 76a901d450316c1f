"""The Home page's figure: the same keys and query in the plane, the Poincaré disk and on the sphere.

Each key's marker size is its inverse-distance attention weight for the query, and each query-key
pair is joined by the geodesic of its geometry (a segment, a circular arc orthogonal to the rim,
a great-circle arc): the arc Euclidean -> hyperbolic -> spherical of the paper in one picture.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from georesolver_core.attention import ida_weights
from georesolver_core.geometry import geodesic, stereographic_map, to_ball
from georesolver_core.validate import check_eps, check_positive_int
from georesolver_core.viz.style import GEOMETRY_COLORS, equal_aspect, sphere_wireframe, unit_disk_shapes

# geometry, panel title, the panel's axes (the references plotly's subplots use)
PANELS = (
    ("euclidean", "Plane R^2", dict(xaxis="x", yaxis="y")),
    ("poincare", "Poincaré disk (curvature -1)", dict(xaxis="x2", yaxis="y2")),
    ("sphere", "Sphere S^2", dict(scene="scene")),
)


@dataclass(frozen=True)
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


LABELS_UP_TO = 7  # key labels k1, k2, ... are drawn up to this many keys; from 8 on they run into each other


def _size(w: np.ndarray) -> np.ndarray:
    """Marker diameter: area proportional to the weight, from 6 px (weight 0) to 40 px (weight 1)."""
    return 6 + 34 * np.sqrt(np.clip(w, 0, 1))


@functools.cache
def _sphere() -> dict:
    """The unit sphere under the sphere panel, as a wireframe: the same on every move, so built once.

    A shaded surface doubled the browser's redraw of this figure (about 0.4 s more per slider move in
    headless Chromium), and the chart is redrawn from scratch on every move.
    """
    return sphere_wireframe()


def _through(p: np.ndarray, **style) -> dict:
    """A scatter trace through the rows of ``p`` (m, 2) or (m, 3): 2-D in the plane and the disk, 3-D on the sphere.

    A plain dict: the figure validates all its traces at once, which is several times faster than one
    ``go.Scatter`` per trace (the figure is rebuilt on every slider move).
    """
    if p.shape[1] == 3:
        return dict(type="scatter3d", x=p[:, 0], y=p[:, 1], z=p[:, 2], **style)
    return dict(type="scatter", x=p[:, 0], y=p[:, 1], **style)


def _panel(ex: ArcExample, geo: str) -> list[dict]:
    """One geometry's traces: the query-key geodesics (width ~ weight), the keys (area ~ weight), the query."""
    p, w, color = ex.points[geo], ex.weights[geo], GEOMETRY_COLORS[geo]
    on_sphere = geo == "sphere"
    labels = [f"k{j + 1}" for j in range(len(w))]
    text = dict(mode="markers+text", text=labels) if len(w) <= LABELS_UP_TO else dict(mode="markers")
    if on_sphere:
        # 3-D marker sizes render smaller than 2-D ones at the same number: 0.8 keeps them comparable
        key_marker = dict(size=0.8 * _size(w), color=color, line=dict(width=0))
        query_marker = dict(size=7, color="black", symbol="diamond")
    else:
        key_marker = dict(size=_size(w), color=color, opacity=0.8)
        query_marker = dict(size=12, color="black", symbol="x")
        text["textposition"] = "top center"
    arcs = [
        _through(
            arc, mode="lines", line=dict(color=color, width=1 + 5 * float(wj)), showlegend=False, hoverinfo="skip"
        )
        for arc, wj in zip(ex.arcs[geo], w, strict=True)
    ]
    keys = _through(
        p[1:],
        **text,
        marker=key_marker,
        hovertext=[f"key {lab}<br>IDA weight {wj:.3f}" for lab, wj in zip(labels, w, strict=True)],
        hoverinfo="text",
        name=f"keys ({geo})",
        showlegend=False,
    )
    query = _through(
        p[:1], mode="markers", marker=query_marker, name="query", showlegend=geo == "euclidean", hoverinfo="name"
    )
    sphere = [_sphere()] if on_sphere else []
    return sphere + arcs + [keys, query]


@functools.cache
def _panels_layout() -> dict:
    """The three panels' axes, scene and subplot titles (plotly's ``make_subplots``) on the white template.

    The same on every move and slow to build (the template alone is a deep copy), so built once; callers
    copy what they change.
    """
    fig = make_subplots(
        rows=1,
        cols=3,
        specs=[[{"type": "xy"}, {"type": "xy"}, {"type": "scene"}]],
        subplot_titles=[title for _, title, _ in PANELS],
        horizontal_spacing=0.06,
    )
    fig.update_layout(template="plotly_white")
    layout = fig.layout.to_plotly_json()
    # The template's trace defaults cover two dozen trace types; validating them took half the figure's
    # build time (here and again in st.plotly_chart). Only the three types drawn here keep theirs.
    template = layout["template"]
    template["data"] = {kind: template["data"][kind] for kind in ("scatter", "scatter3d")}
    return layout


def arc_figure(ex: ArcExample) -> go.Figure:
    """Three panels; marker area ~ IDA weight, hover shows the exact weight.

    The figure is rebuilt on every slider move, so it is assembled as plain dicts and validated once by
    ``go.Figure``: a tenth of the time of ``make_subplots`` and one ``add_trace`` per trace.
    """
    panels = _panels_layout()
    layout = dict(
        panels,
        height=420,
        margin=dict(l=10, r=10, t=70, b=30),
        shapes=[dict(shape, xref="x2", yref="y2") for shape in unit_disk_shapes()],
        scene=dict(
            panels["scene"],
            aspectmode="cube",
            xaxis_title="x",
            yaxis_title="y",
            zaxis_title="z",
            camera=dict(eye=dict(x=1.7, y=1.7, z=1.1)),  # far enough that the axis titles fit
        ),
        title=f"One query (x/diamond), {len(ex.weights['euclidean'])} keys; marker size = IDA weight, eps = {ex.eps:g}",
    )
    traces = [dict(trace, **axes) for geo, _, axes in PANELS for trace in _panel(ex, geo)]
    fig = go.Figure(data=traces, layout=layout)
    equal_aspect(fig, float(np.abs(ex.points["euclidean"]).max()) * 1.15)
    fig.layout.xaxis2.range = fig.layout.yaxis2.range = [-1.05, 1.05]  # the disk and a little room
    fig.layout.yaxis2.scaleanchor = "x2"
    return fig
