"""Figures of hierarchy embeddings: the Poincaré disk, the sphere, the plane, and projections.

Edges are drawn as true geodesics of their geometry (``geometry.geodesic``): circular arcs
orthogonal to the rim in the disk, great-circle arcs on the sphere, segments in the plane. An
embedding in more dimensions than the picture has is shown through the log map at the origin
followed by an uncentred PCA, and labelled as such: that view does not preserve distances.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from georesolver_core.embeddings.metrics import center_on, distance_to_origin
from georesolver_core.geometry import GEOMETRIES, logmap0
from georesolver_core.tasks.hierarchy import Hierarchy
from georesolver_core.viz.embedding_charts import norm_depth_figure, training_history_figure  # noqa: F401 (re-export)
from georesolver_core.viz.embedding_coords import (  # noqa: F401 (geodesic_arcs re-exported)
    ARC_POINTS,
    geodesic_arcs,
    join_arcs,
    pad2,
    polar_to_scale,
    principal_directions,
)
from georesolver_core.viz.embedding_groups import OTHER, group_by_ancestor, lineage  # noqa: F401 (re-export)
from georesolver_core.viz.style import base_layout, points_trace, sphere_surface, unit_disk_shapes

MANY_EDGES = 500  # above this many edges, half as many points per geodesic: a lighter figure to send and draw
NAME_CHARS = 16  # on-figure labels are cut to this; the hover shows the whole name
MAX_LABELS = 30  # names written on the picture, top levels first: more run together (all are in the hover)
MAX_EDGES = 1500  # beyond this, a figure draws a deterministic subset of the edges (and says so)
_DEPTH_SCALE = "Viridis"
# One per group of ``group_by_ancestor``: D3's ten without its grey (kept for "other"), and four more.
GROUP_COLORS = [*qualitative.D3[:7], *qualitative.D3[8:], "#393b79", "#637939", "#e7969c", "#7b4173"]
OTHER_COLOR = "#9e9e9e"
GL_NODES = 500  # above this many nodes, 2-D traces are WebGL (Scattergl): a 1,181-node redraw stays cheap


@dataclass
class EmbeddingView:
    """Everything a figure needs, in plot coordinates (numpy)."""

    kind: str  # "disk", "plane", "circle", "sphere", "tangent" (the log map, 2-D) or "projection" (its PCA)
    geometry: str
    coords: np.ndarray  # (N, 2) or (N, 3)
    edge_lines: np.ndarray  # (M, 2|3) polylines separated by NaN rows
    hover: list[str]
    names: list[str]  # node names, HTML-escaped and cut to NAME_CHARS for on-figure labels
    depth: np.ndarray  # (N,)
    radius: float  # rim radius 1/sqrt(c) for the disk, 1 for circle/sphere
    title: str
    axis_note: str  # what the axes are (coordinates, or the projection used)
    edges_drawn: int
    edges_total: int
    edge_children: np.ndarray | None = None  # (edges_drawn,) the child node of each drawn edge, in order


def embedding_view(
    points: torch.Tensor,
    hierarchy: Hierarchy,
    *,
    geometry: str,
    c: float = 1.0,
    title: str | None = None,
    root_at_centre: bool = False,
    centre: int | None = None,
    to_scale: bool = False,
) -> EmbeddingView:
    """Lay an embedding (N, D) out for drawing: coordinates, geodesic edges, hover text.

    ``root_at_centre`` first moves the first root to the centre by an isometry (``center_on``):
    the classic picture, with every distance unchanged.

    ``to_scale`` draws a 2-D curved embedding by its log map at the origin, log_0(x) = d(0, x) x / |x|: each
    node in its own direction at its true distance from the origin. The Poincaré disk squeezes distance r into
    Euclidean radius tanh(r / 2), so a tree placed k tau deep sits within e^(-k tau) of the rim and a disk
    picture of it is an empty circle; the log map keeps the directions and spreads the depths. Distances
    between nodes other than the origin are not to scale (the same map as the D > 2 projection, without PCA).
    """
    if geometry not in GEOMETRIES:
        raise ValueError(f"geometry must be one of {sorted(GEOMETRIES)} (got {geometry!r})")
    x = points.detach().cpu().double()  # (N, D)
    if x.dim() != 2 or x.shape[0] != hierarchy.n_nodes:
        raise ValueError(
            f"points must have shape (N, D) with N = {hierarchy.n_nodes} nodes (got {tuple(points.shape)})"
        )
    if root_at_centre or centre is not None:  # ``centre``: any node moved to the centre instead of the root
        x = center_on(x, int(hierarchy.roots[0]) if centre is None else centre, geometry=geometry, c=c)
    d = x.shape[1]
    edges = _edge_subset(hierarchy.edges)
    steps = ARC_POINTS if len(edges) <= MANY_EDGES else ARC_POINTS // 2
    arcs = geodesic_arcs(x, edges, geometry=geometry, c=c, steps=steps).transpose(0, 1)  # (E, T, D)
    dist0 = distance_to_origin(x, geometry=geometry, c=c).numpy()
    norms = x.norm(dim=-1).numpy()
    origin = GEOMETRIES[geometry].origin_name
    seen_from = "root (at the centre)" if root_at_centre else origin
    # Names may come from an uploaded file: escaped, so plotly renders no tag (link, image) of theirs.
    safe = [html.escape(str(n)) for n in hierarchy.nodes]
    hover = [
        f"<b>{name}</b><br>depth {int(dep)}<br>norm ||x|| = {nv:.4f}<br>distance to the {seen_from} = {dv:.3f}"
        for name, dep, nv, dv in zip(safe, hierarchy.depth, norms, dist0, strict=True)
    ]
    label = GEOMETRIES[geometry].label
    if GEOMETRIES[geometry].is_compact and d == 3:  # S^2 in R^3
        kind, coords, lines, note = "sphere", x.numpy(), join_arcs(arcs.numpy()), "coordinates in R^3"
    elif d <= 2 and not (to_scale and GEOMETRIES[geometry].rim(c) is not None):
        rim, closed = GEOMETRIES[geometry].rim(c) is not None, GEOMETRIES[geometry].is_compact
        kind = "disk" if rim else "circle" if closed else "plane"
        coords, lines = pad2(x.numpy()), join_arcs(pad2(arcs.numpy()))
        note = {
            "disk": f"curvature k = -{c:.3g}; the circle is the rim, infinitely far away",
            "plane": "flat coordinates",
            "circle": "the unit circle S^1",
        }[kind] + (" (1-D: drawn on the horizontal axis)" if d == 1 and kind != "circle" else "")
    else:
        if d == 2:
            kind, coords = "tangent", polar_to_scale(x, geometry=geometry, c=c)
            lines = join_arcs(polar_to_scale(arcs, geometry=geometry, c=c))
            note = f"log map at the {origin}: true directions, true distance d(0, x) from it (others not to scale)"
        else:
            kind = "projection"
            tangent = logmap0(x, geometry=geometry, c=c).numpy()  # (N, D)
            basis = principal_directions(tangent)  # (D, 2)
            coords = tangent @ basis
            lines = join_arcs(logmap0(arcs, geometry=geometry, c=c).numpy() @ basis)
            note = f"log map at the {origin}, then uncentred PCA: 2 of {tangent.shape[1]} tangent dims (not distance-preserving)"
    if root_at_centre:
        note += "; moved by an isometry to put the root at the centre"
    radius = 1.0 / math.sqrt(c) if kind == "disk" else 1.0
    return EmbeddingView(
        kind=kind,
        geometry=geometry,
        coords=coords,
        edge_lines=lines,
        hover=hover,
        names=[html.escape(_cut(str(n))) for n in hierarchy.nodes],
        depth=np.asarray(hierarchy.depth),
        radius=radius,
        title=title or f"{label}, {hierarchy.n_nodes} nodes",
        axis_note=note,
        edges_drawn=len(edges),
        edges_total=hierarchy.n_edges,
        edge_children=np.asarray(edges[:, 1]),
    )


def _cut(name: str) -> str:
    return name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + "…"


def _edge_subset(edges: np.ndarray) -> np.ndarray:
    if len(edges) <= MAX_EDGES:
        return edges
    keep = np.linspace(0, len(edges) - 1, MAX_EDGES).round().astype(int)  # evenly spread, reproducible
    return edges[keep]


EDGE_NAMES = {
    "disk": "edges (hyperbolic geodesics)",
    "circle": "edges (arcs of the circle)",
    "plane": "edges (segments)",
    "projection": "edges (projected geodesics)",
    "tangent": "edges (geodesics, log-mapped)",
    "sphere": "edges (great-circle arcs)",
}


def named_depth(depth: np.ndarray, limit: int = MAX_LABELS) -> int:
    """The deepest tree level written on the picture: it and the levels above hold at most ``limit``
    nodes together (the root's level is always written). Leaves crowd at the rim; the top levels spread out."""
    levels, counts = np.unique(np.asarray(depth), return_counts=True)  # levels sorted, root first
    fits = levels[np.cumsum(counts) <= limit]
    return int(fits[-1] if fits.size else levels[0])


def _scatter(points: np.ndarray, gl: bool, **trace):
    """``points_trace``, or with ``gl`` a WebGL scatter for 2-D points, as a plain dict: plotly validates it
    once, in the figure, instead of copying a trace object (a 1,181-node redraw stays cheap)."""
    p = np.asarray(points, dtype=float)
    if gl and p.ndim == 2 and p.shape[1] == 2:
        return dict(type="scattergl", x=p[:, 0], y=p[:, 1], **trace)
    return points_trace(p, **trace)


def _traces(
    view: EmbeddingView,
    *,
    showscale: bool = True,
    names: bool = False,
    marker_size: float = 8,
    groups: dict[str, np.ndarray] | None = None,
) -> list:
    """Edges and nodes of one embedding; with ``names``, the top levels' names beside their nodes.

    Nodes are coloured by depth, or with ``groups`` (label -> node indices, ``group_by_ancestor``) one trace
    per group in its own colour, with a legend. Above GL_NODES nodes the 2-D traces use WebGL."""
    sphere = view.kind == "sphere"
    gl = len(view.coords) > GL_NODES
    text = None
    if names:
        deepest = named_depth(view.depth)
        text = np.asarray([name if d <= deepest else "" for name, d in zip(view.names, view.depth, strict=True)])
    width, opacity = (2, 1.0) if sphere else (1.2, 0.7)
    edges = [
        _scatter(
            lines,
            gl,
            mode="lines",
            line=dict(color=color, width=width),
            opacity=opacity,
            name=EDGE_NAMES[view.kind],
            legendgroup="edges",
            showlegend=i == 0,
            hoverinfo="skip",
        )
        for i, (color, lines) in enumerate(_edge_lines(view, groups))
    ]
    common = dict(
        mode="markers+text" if names else "markers",
        textposition="top center",
        textfont=dict(size=11),
        hoverinfo="text",
    )
    size = 4 if sphere else marker_size  # 3-D markers read larger than 2-D ones of the same size
    if groups is None:
        marker = dict(
            color=view.depth,
            colorscale=_DEPTH_SCALE,
            cmin=0,
            cmax=max(1, int(view.depth.max())),
            line=dict(width=0.5, color="white"),
            colorbar=dict(title="depth", len=0.6) if showscale else None,
            showscale=showscale,
            size=size,
        )
        nodes = [
            _scatter(
                view.coords,
                gl,
                marker=marker,
                text=text,
                hovertext=view.hover,
                name="nodes (colour = depth)",
                **common,
            )
        ]
    else:
        hover = np.asarray(view.hover, dtype=object)
        nodes = [
            _scatter(
                view.coords[idx],
                gl,
                marker=dict(color=_group_color(i, label), size=size, line=dict(width=0.5, color="white")),
                text=None if text is None else text[idx],
                hovertext=list(hover[idx] + f"<br>{html.escape(label)}"),
                name=f"{html.escape(label)} ({len(idx)})",
                legendgroup="nodes",
                **common,
            )
            for i, (label, idx) in enumerate(groups.items())
            if len(idx)
        ]
    return [sphere_surface(), *edges, *nodes] if sphere else [*edges, *nodes]


def _edge_lines(view: EmbeddingView, groups: dict[str, np.ndarray] | None) -> list[tuple[str, np.ndarray]]:
    """(colour, NaN-separated polylines): all edges in the geometry's colour, or with ``groups`` one set per
    group, each edge coloured by its child's group, so that a group reads as a coloured fan of geodesics."""
    if groups is None or view.edge_children is None or view.edges_drawn == 0:
        return [(GEOMETRIES[view.geometry].colour, view.edge_lines)]
    arcs = view.edge_lines.reshape(view.edges_drawn, -1, view.edge_lines.shape[-1])  # (E, T + 1, k)
    owner = np.full(len(view.coords), -1)
    for k, idx in enumerate(groups.values()):
        owner[idx] = k
    child = owner[view.edge_children]  # (E,) group of each edge's child
    return [
        (_group_color(k, label), arcs[child == k].reshape(-1, arcs.shape[-1]))
        for k, label in enumerate(groups)
        if (child == k).any()
    ]


def _group_color(i: int, label: str) -> str:
    return OTHER_COLOR if label == OTHER else GROUP_COLORS[i % len(GROUP_COLORS)]


def _frame(fig: go.Figure, view: EmbeddingView, row: int | None = None, col: int | None = None) -> None:
    """Rim circle, equal aspect and axis titles for a 2-D panel; scene axes for a sphere."""
    where = {} if row is None else {"row": row, "col": col}
    if view.kind == "sphere":
        scene = dict(aspectmode="cube", xaxis_title="x1", yaxis_title="x2", zaxis_title="x3")
        fig.update_scenes(**scene, **where)
        return
    if view.kind in ("disk", "circle"):
        for shape in unit_disk_shapes(view.radius):
            fig.add_shape(**shape, **where)
        lim = 1.08 * view.radius
    else:
        finite = np.abs(view.coords[np.isfinite(view.coords)])
        lim = 1.1 * float(finite.max()) if finite.size and finite.max() > 0 else 1.0
    titles = {
        "projection": ("principal direction 1", "principal direction 2"),
        "tangent": ("log map x1 (distance units)", "log map x2 (distance units)"),
    }.get(view.kind, ("x1", "x2"))
    fig.update_xaxes(range=[-lim, lim], zeroline=False, constrain="domain", title_text=titles[0], **where)
    anchor = "x" if row is None else _xaxis_name(fig, row, col)
    fig.update_yaxes(
        range=[-lim, lim],
        zeroline=False,
        scaleanchor=anchor,
        scaleratio=1,
        constrain="domain",
        title_text=titles[1],
        **where,
    )


def _xaxis_name(fig: go.Figure, row: int, col: int) -> str:
    ref = fig.get_subplot(row, col)
    return ref.xaxis.plotly_name.replace("axis", "")


def embedding_figure(
    view: EmbeddingView,
    *,
    height: int = 640,
    names: bool = False,
    marker_size: float = 10,
    highlight: dict[str, np.ndarray] | None = None,
    groups: dict[str, np.ndarray] | None = None,
) -> go.Figure:
    """One embedding: the disk with geodesic arcs, the sphere, the plane, or a labelled projection.

    ``names`` writes the names of the top levels of the tree beside their nodes, at most MAX_LABELS
    of them (see ``named_depth``); the hover always has every name. ``highlight`` maps "ancestors",
    "descendants" and "node" to node indices drawn on top in their own colours (``lineage``). ``groups``
    colours the nodes by group instead of depth (``group_by_ancestor``), with a legend.
    """
    fig = go.Figure(_traces(view, names=names, marker_size=marker_size, groups=groups))
    for role, color, symbol in (
        ("ancestors", "#d62728", "circle"),
        ("descendants", "#ff7f0e", "circle"),
        ("node", "#000000", "diamond"),  # a symbol both 2-D and 3-D scatters have
    ):
        idx = np.asarray((highlight or {}).get(role, []), dtype=np.int64)
        if idx.size:
            fig.add_trace(
                points_trace(
                    view.coords[idx],
                    mode="markers",
                    name=f"{role} ({idx.size})" if role != "node" else "searched node",
                    marker=dict(
                        color=color,
                        size=marker_size + (6 if role == "node" else 2),
                        symbol=symbol,
                        line=dict(width=1, color="white"),
                    ),
                    hovertext=[view.hover[i] for i in idx],
                    hoverinfo="text",
                )
            )
    subtitle = view.axis_note
    if view.edges_drawn < view.edges_total:
        subtitle += f"; {view.edges_drawn} of {view.edges_total} edges drawn"
    base_layout(fig, f"{view.title}<br><sup>{subtitle}</sup>", height=height)
    fig.update_layout(
        margin=dict(l=40, r=20, t=70, b=40),
        # a legend of groups beside the disk (a dozen rows under it would squeeze the disk)
        legend=dict(orientation="v", yanchor="top", y=1, xanchor="left", x=1.02)
        if groups
        else dict(orientation="h", yanchor="top", y=-0.12, xanchor="left", x=0),
    )
    _frame(fig, view)
    return fig


def geometries_figure(views: list[EmbeddingView], *, height: int = 480) -> go.Figure:
    """Several embeddings of the same hierarchy side by side (one panel each, depth colour shared)."""
    if not views:
        raise ValueError("views must hold at least one EmbeddingView (got none)")
    specs = [[{"type": "scene" if v.kind == "sphere" else "xy"} for v in views]]
    fig = make_subplots(
        rows=1,
        cols=len(views),
        specs=specs,
        subplot_titles=[f"{v.title}<br><sup>{v.axis_note}</sup>" for v in views],
        horizontal_spacing=0.08,  # room for the next panel's y-axis title ("x2"), clear of this panel
    )
    for col, v in enumerate(views, start=1):
        for tr in _traces(v, showscale=col == len(views)):
            fig.add_trace(tr, row=1, col=col)
            fig.data[-1].showlegend = col == 1 and v.kind != "sphere"
        _frame(fig, v, row=1, col=col)
    base_layout(fig, height=height)
    fig.update_layout(
        margin=dict(l=30, r=20, t=90, b=30),
        legend=dict(orientation="h", yanchor="top", y=-0.1, xanchor="left", x=0),
    )
    return fig
