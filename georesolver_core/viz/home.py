"""The Home page's figure: the same keys and query in the plane, the Poincaré disk and on the sphere
(one panel per geometry whose registry entry has a ``panel``).

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
from georesolver_core.geometry import GEOMETRIES, geodesic
from georesolver_core.validate import check_eps, check_positive_int
from georesolver_core.viz.style import sphere_wireframe, unit_disk_shapes, white_template

EYE = np.array([1.7, 1.7, 1.1])  # the sphere seen from here when the points spread all round it


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
    pts = {geo: GEOMETRIES[geo].panel.from_plane(z) for geo in panel_geometries()}
    t = torch.linspace(0, 1, 24, dtype=torch.float64)  # 24 points draw an arc smoothly at this size
    weights, arcs = {}, {}
    for geo, p in pts.items():
        weights[geo] = ida_weights(p[:1], p[1:], eps=eps, geometry=geo)[0].numpy()
        arcs[geo] = [geodesic(p[0], p[j], t, geometry=geo).numpy() for j in range(1, n_keys + 1)]
    return ArcExample({k: v.numpy() for k, v in pts.items()}, weights, arcs, eps)


def panel_geometries() -> list[str]:
    """The geometries drawn on the Home figure, in registry order: those whose entry has a ``panel``."""
    return [name for name, entry in GEOMETRIES.items() if entry.panel is not None]


def _on_globe(geo: str) -> bool:
    """Points in R^3 on a closed surface (the sphere): drawn as a globe, in 3-D or as its picture."""
    return GEOMETRIES[geo].is_compact and GEOMETRIES[geo].ambient_dim(2) == 3


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


def view_direction(points: np.ndarray) -> np.ndarray:
    """Unit vector from the sphere's centre towards the viewer: towards the mean of ``points`` (m, 3), so that
    the query and its keys face the viewer; EYE's direction when they spread all round (mean near 0)."""
    mean = points.mean(0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm > 0.2 else EYE / np.linalg.norm(EYE)


def _screen_basis(toward: np.ndarray) -> np.ndarray:
    """Rows: the screen's right and up directions and ``toward`` (the unit vector towards the viewer), for a
    camera looking at the origin with z up, as plotly's 3-D camera does (y up when looking along z). (3, 3)."""
    up = np.array([0.0, 0.0, 1.0]) if abs(toward[2]) < 0.99 else np.array([0.0, 1.0, 0.0])
    right = np.cross(up, toward)
    right /= np.linalg.norm(right)
    return np.stack([right, np.cross(toward, right), toward])


def project_sphere(p: np.ndarray, toward: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Orthographic picture of points on S^2 seen from the unit direction ``toward``: screen coordinates
    (m, 2) and depth (m,). depth > 0 is the near hemisphere; the sphere's outline is the screen's unit circle.
    """
    screen = p @ _screen_basis(toward).T  # (m, 3): right, up, towards the viewer
    return screen[:, :2], screen[:, 2]


def _near_far(p: np.ndarray, toward: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A polyline on S^2 as two screen polylines (m, 2): its near part and its far part (NaN elsewhere)."""
    xy, depth = project_sphere(p, toward)
    near, far = xy.copy(), xy.copy()
    near[depth < 0] = np.nan
    far[depth >= 0] = np.nan
    return near, far


def _flat_sphere(ex: ArcExample, geo: str, w: np.ndarray, labels: list[str], text: dict) -> list[dict]:
    """The sphere panel as a 2-D picture of the globe: near side solid, far side faint.

    A browser draws it several times faster than a 3-D scene (which it rebuilds on every slider move);
    the 3-D view stays one toggle away.
    """
    color, toward = GEOMETRIES[geo].colour, view_direction(ex.points[geo])
    grid = np.stack([_sphere()[axis] for axis in "xyz"], 1)  # (rows, 3), NaN rows between circles
    grid_near, grid_far = _near_far(grid, toward)
    traces = [
        _through(grid_far, mode="lines", line=dict(color="#e4e4e4", width=1, dash="dot"), hoverinfo="skip"),
        _through(grid_near, mode="lines", line=dict(color="#c8c8c8", width=1), hoverinfo="skip"),
    ]
    for arc, wj in zip(ex.arcs[geo], w, strict=True):
        near, far = _near_far(arc, toward)
        width = 1 + 5 * float(wj)
        traces += [
            _through(
                far, mode="lines", line=dict(color=color, width=width, dash="dot"), opacity=0.45, hoverinfo="skip"
            ),
            _through(near, mode="lines", line=dict(color=color, width=width), hoverinfo="skip"),
        ]
    xy, depth = project_sphere(ex.points[geo], toward)
    side = ["near side" if d >= 0 else "far side" for d in depth[1:]]
    keys = _through(
        xy[1:],
        **text,
        textposition="top center",
        marker=dict(size=_size(w), color=color, opacity=np.where(depth[1:] >= 0, 0.85, 0.3)),
        hovertext=[f"key {lab} ({s})<br>IDA weight {wj:.3f}" for lab, s, wj in zip(labels, side, w, strict=True)],
        hoverinfo="text",
        name=f"keys ({geo})",
    )
    query = _through(
        xy[:1],
        mode="markers",
        marker=dict(size=12, color="black", symbol="x", opacity=1.0 if depth[0] >= 0 else 0.35),
        name="query",
        hoverinfo="name",
    )
    return [dict(t, showlegend=False) for t in traces] + [
        dict(keys, showlegend=False),
        dict(query, showlegend=False),
    ]


def _panel(ex: ArcExample, geo: str, sphere_3d: bool = False, legend: bool = False) -> list[dict]:
    """One geometry's traces: the query-key geodesics (width ~ weight), the keys (area ~ weight), the query
    (in the legend where ``legend``)."""
    p, w, color = ex.points[geo], ex.weights[geo], GEOMETRIES[geo].colour
    on_sphere = _on_globe(geo)
    labels = [f"k{j + 1}" for j in range(len(w))]
    text = dict(mode="markers+text", text=labels) if len(w) <= LABELS_UP_TO else dict(mode="markers")
    if on_sphere and not sphere_3d:
        return _flat_sphere(ex, geo, w, labels, text)
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
    query = _through(p[:1], mode="markers", marker=query_marker, name="query", showlegend=legend, hoverinfo="name")
    sphere = [_sphere()] if on_sphere else []
    return sphere + arcs + [keys, query]


def _panel_axes(geometries: tuple[str, ...], sphere_3d: bool) -> list[dict]:
    """Each panel's axis references as plotly's subplots number them: x, x2, ... over the 2-D panels,
    scene, scene2, ... over the 3-D ones (a globe when ``sphere_3d``)."""
    out, n_xy, n_scene = [], 0, 0
    for geo in geometries:
        if sphere_3d and _on_globe(geo):
            n_scene += 1
            out.append(dict(scene=f"scene{n_scene if n_scene > 1 else ''}"))
        else:
            n_xy += 1
            suffix = str(n_xy) if n_xy > 1 else ""
            out.append(dict(xaxis=f"x{suffix}", yaxis=f"y{suffix}"))
    return out


@functools.cache
def _panels_layout(geometries: tuple[str, ...], sphere_3d: bool) -> dict:
    """The panels' axes, scenes and subplot titles (plotly's ``make_subplots``) on the white template.

    The same on every move and slow to build (subplots and titles), so built once per sphere
    view; callers copy what they change.
    """
    fig = make_subplots(
        rows=1,
        cols=len(geometries),
        specs=[[{"type": "scene" if sphere_3d and _on_globe(geo) else "xy"} for geo in geometries]],
        subplot_titles=[GEOMETRIES[geo].panel.title for geo in geometries],
        horizontal_spacing=0.06,
    )
    white_template(fig)
    layout = fig.layout.to_plotly_json()
    # The template's trace defaults cover two dozen trace types; validating them took half the figure's
    # build time (here and again in st.plotly_chart). Only the types drawn here keep theirs.
    template = layout["template"]
    template["data"] = {kind: template["data"][kind] for kind in ("scatter", "scatter3d")}
    return layout


def _square(axes: dict, lim: float, **extra) -> dict:
    """Layout updates that give a 2-D panel square axes of one scale on [-lim, lim] (discs look like discs)."""
    x, y = axes["xaxis"], axes["yaxis"]
    return {
        f"xaxis{x[1:]}": dict(range=[-lim, lim], zeroline=False, constrain="domain", **extra),
        f"yaxis{y[1:]}": dict(range=[-lim, lim], zeroline=False, scaleanchor=x, scaleratio=1, **extra),
    }


def arc_figure(ex: ArcExample, sphere_3d: bool = False) -> go.Figure:
    """One panel per geometry; marker area ~ IDA weight, hover shows the exact weight.

    ``sphere_3d``: the sphere as a 3-D scene to turn with the mouse; by default a picture of the globe seen
    from the same eye (near side solid, far side faint), which a browser redraws several times faster.
    The figure is rebuilt on every slider move, so it is assembled as plain dicts and validated once by
    ``go.Figure``: a tenth of the time of ``make_subplots`` and one ``add_trace`` per trace.
    """
    geometries = tuple(ex.points)
    panels = _panels_layout(geometries, sphere_3d)
    n_keys = len(next(iter(ex.weights.values())))
    layout = dict(
        panels,
        height=420,
        margin=dict(l=10, r=10, t=70, b=30),
        shapes=[],
        title=f"One query (x/diamond), {n_keys} keys; marker size = IDA weight, eps = {ex.eps:g}",
    )
    traces = []
    for i, (geo, axes) in enumerate(zip(geometries, _panel_axes(geometries, sphere_3d), strict=True)):
        traces += [dict(trace, **axes) for trace in _panel(ex, geo, sphere_3d, legend=i == 0)]
        entry = GEOMETRIES[geo]
        if "scene" in axes:
            layout[axes["scene"]] = dict(
                panels[axes["scene"]],
                aspectmode="cube",
                xaxis_title="x",
                yaxis_title="y",
                zaxis_title="z",
                # facing the query and its keys, as the flat picture does; 2.1 from the centre: the axis titles fit
                camera=dict(eye=dict(zip("xyz", (2.1 * view_direction(ex.points[geo])).tolist(), strict=True))),
            )
            continue
        refs = dict(xref=axes["xaxis"], yref=axes["yaxis"])
        if _on_globe(geo):  # the globe's outline, with the same scale on both axes
            square = _square(axes, 1.05, visible=False)
            layout["shapes"] += [dict(s, **refs, line=dict(color="gray", width=1.5)) for s in unit_disk_shapes()]
        elif (rim := entry.rim(1.0)) is not None:  # the disk and a little room, its rim drawn as a shape
            square = _square(axes, 1.05 * rim)
            layout["shapes"] += [dict(s, **refs) for s in unit_disk_shapes(rim)]
        else:
            square = _square(axes, float(np.abs(ex.points[geo]).max()) * 1.15)
        for name, update in square.items():
            layout[name] = dict(panels.get(name, {}), **update)
    return go.Figure(data=traces, layout=layout)
