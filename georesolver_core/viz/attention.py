"""Figures of the Attention lab: the weight matrix, one query's weights, the query among its keys
in the plane / disk / sphere, and the eps sweep as a plotly animation (sections 2.1-2.3, 5.3, 8.1)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from georesolver_core.geometry import GEOMETRIES, geodesic
from georesolver_core.viz.style import (
    base_layout,
    frame_ms,
    kernel_colour,
    log_axis,
    points_trace,
    sphere_surface,
    unit_disk_shapes,
)


def key_labels(n: int) -> list[str]:
    return [f"k{j + 1}" for j in range(n)]


def weights_heatmap(weights: np.ndarray, row_labels: list[str], col_labels: list[str], title: str) -> go.Figure:
    """The attention matrix W (rows: queries, columns: keys) on a fixed [0, 1] colour scale."""
    w = np.asarray(weights, dtype=float)
    fig = go.Figure(
        go.Heatmap(
            z=w,
            x=col_labels,
            y=row_labels,
            zmin=0.0,
            zmax=1.0,
            colorscale="Viridis",
            colorbar=dict(title="weight"),
            hovertemplate="query %{y} -> key %{x}<br>weight %{z:.4f}<extra></extra>",
        )
    )
    base_layout(fig, title, "key j", "query i", height=max(320, min(640, 18 * len(row_labels) + 140)))
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(type="category")
    return fig


def small_eps_limit(sq_dist: np.ndarray) -> np.ndarray:
    """The IDA weights' limit as eps -> 0 (paper section 2.3): with d_j = d(q, k_j),

        lim W_j = d_j^-2 / sum_m d_m^-2   if no d_m = 0,   else 1/|Z| on Z = {j : d_j = 0}.

    So "the nearest key takes all" holds only when the query sits on a key; elsewhere the weights
    tend to the normalised inverse squares, not to one-hot.
    """
    sq = np.asarray(sq_dist, dtype=float)
    zero = sq <= 0
    if zero.any():
        return zero / zero.sum()
    inv = 1.0 / sq
    return inv / inv.sum()


TOP_KEYS = 10  # above this many keys a bar each is unreadable: the nearest get one, the rest share one
MAX_KEY_LABELS = 5  # names written beside more keys than this run together; every key is named in its hover
LABEL_GAP = 0.25  # two written names keep this fraction of the view's half-width apart, or they overlap


def key_groups(distance: np.ndarray, top: int = TOP_KEYS) -> tuple[list[np.ndarray], list[str]]:
    """The keys each bar stands for, and its label: one bar a key while there are at most ``top`` keys;
    beyond, the ``top`` keys nearest the query (nearest first), then one bar for all the others.

    ``distance`` (n,) ranks the keys, smallest nearest: d(q, k_j)^2, or minus a weight, since IDA and
    softmax weights both fall as d(q, k_j)^2 grows (nearest first is heaviest first).
    """
    dist = np.asarray(distance, dtype=float)
    labels = key_labels(dist.size)
    if dist.size <= top:
        return [np.array([j]) for j in range(dist.size)], labels
    order = np.argsort(dist, kind="stable")
    groups = [order[i : i + 1] for i in range(top)] + [order[top:]]
    return groups, [labels[j] for j in order[:top]] + ["rest"]


def _grouped(w: np.ndarray, groups: list[np.ndarray]) -> np.ndarray:
    """The weight of each group of keys: (n,) -> (len(groups),); a group's weights add up."""
    return np.array([np.asarray(w, dtype=float)[g].sum() for g in groups])


def _keys_axis_title(groups: list[np.ndarray]) -> str:
    n = sum(g.size for g in groups)
    if len(groups) == n:
        return "key j"
    return f"the {len(groups) - 1} keys nearest q, then the other {groups[-1].size} (rest) together"


def weights_bars(
    weights: dict[str, np.ndarray], sq_dist: np.ndarray, title: str, colors: dict[str, str] | None = None
) -> go.Figure:
    """One query's weights per kernel as grouped bars; hover shows d(q, k_j)^2, the reason for each weight.

    The dotted line is the uniform weight 1/n, what a fully diluted attention gives. With more than
    ``TOP_KEYS`` keys the bars are the nearest keys and one bar "rest" holding the others' total.
    """
    sq = np.asarray(sq_dist, dtype=float)
    groups, labels = key_groups(sq)
    reason = [f"d(q, k)^2 = {sq[g[0]]:.4g}" if g.size == 1 else f"{g.size} keys together" for g in groups]
    fig = go.Figure()
    for name, w in weights.items():
        fig.add_trace(
            go.Bar(
                x=labels,
                y=_grouped(w, groups),
                name=name,
                marker_color=(colors or {}).get(name),
                customdata=reason,
                hovertemplate="%{x}: weight %{y:.4f}<br>%{customdata}<extra>" + name + "</extra>",
            )
        )
    fig.add_trace(
        go.Scatter(
            x=labels,
            y=_grouped(small_eps_limit(sq), groups),
            mode="markers",
            # an open symbol is stroked in marker.color: without it plotly's palette colours the "black marks"
            marker=dict(symbol="line-ew-open", size=28, color="black", line=dict(width=3, color="black")),
            name="IDA as eps -> 0: one-hot on a key at distance 0, else 1/d^2 normalised",
            hovertemplate="%{x}: limit weight %{y:.4f}<extra>eps -> 0</extra>",
        )
    )
    fig.add_hline(
        y=1.0 / max(sq.size, 1),
        line=dict(dash="dot", color="gray"),
        annotation=dict(text="uniform 1/n", bgcolor="rgba(255,255,255,0.8)"),  # readable over a bar
    )
    base_layout(fig, title, _keys_axis_title(groups), "attention weight of the query")
    fig.update_layout(barmode="group")
    fig.update_yaxes(range=[0, 1.02])
    return fig


def _size(w: np.ndarray) -> np.ndarray:
    return 6 + 34 * np.sqrt(np.clip(w, 0, 1))


def _spaced(points: np.ndarray, order: np.ndarray, gap: float, most: int = MAX_KEY_LABELS) -> set[int]:
    """The first ``most`` keys of ``order`` that lie at least ``gap`` from each key chosen before them:
    their written names do not cover each other. points (n, d)."""
    chosen: list[int] = []
    for j in order:
        if len(chosen) == most:
            break
        if all(np.linalg.norm(points[j] - points[i]) >= gap for i in chosen):
            chosen.append(int(j))
    return set(chosen)


def _extent(q: np.ndarray, keys: np.ndarray, geometry: str, c: float) -> tuple[float | None, float]:
    """The radius of the circle to draw (the disk's rim, the unit circle or sphere; None in the plane)
    and the half-width of the square view around the origin."""
    if (rim := GEOMETRIES[geometry].rim(c)) is not None:  # the Poincaré disk
        return rim, 1.05 * rim
    if GEOMETRIES[geometry].is_compact:
        return 1.0, 1.15
    return None, 1.15 * float(np.abs(np.vstack([keys, q[None]])).max() or 1.0)


def geometry_scatter(
    q: np.ndarray,
    keys: np.ndarray,
    weights: np.ndarray,
    *,
    geometry: str,
    c: float = 1.0,
    title: str = "",
    max_arcs: int = 24,
) -> go.Figure:
    """The query (black) and keys in their space, marker area ~ weight, geodesics q -> k_j with width ~ weight.

    2-D points: the plane, the Poincaré disk of radius 1/sqrt(c), or the unit circle (S^1).
    3-D points on the sphere: S^2. Other dimensions have no faithful picture and are refused.
    Geodesics are drawn to the ``max_arcs`` heaviest keys only: more are clutter, not information;
    Likewise only the heaviest keys are named beside their marker, at most ``MAX_KEY_LABELS`` and only
    those that stand apart (the nearest keys crowd round the query); every key is named in its hover.
    """
    q, keys, w = np.asarray(q, float), np.asarray(keys, float), np.asarray(weights, float)
    d = keys.shape[1]
    if not (d == 2 or (d == 3 and GEOMETRIES[geometry].is_compact)):  # the plane/disk/circle, or S^2
        raise ValueError(f"keys must be 2-D (or 3-D on the sphere) to draw (got d = {d}, geometry {geometry!r})")
    color = GEOMETRIES[geometry].colour
    labels = key_labels(len(keys))
    hover = [f"{lab}<br>weight {wj:.4f}" for lab, wj in zip(labels, w, strict=True)]
    heavy = np.argsort(-w, kind="stable")
    circle, lim = _extent(q, keys, geometry, c)
    named = _spaced(keys, heavy, LABEL_GAP * lim)
    t = torch.linspace(0, 1, 32, dtype=torch.float64)
    qt = torch.as_tensor(q, dtype=torch.float64)
    fig = go.Figure([sphere_surface()] if d == 3 else [])
    for j in heavy[:max_arcs]:
        arc = geodesic(qt, torch.as_tensor(keys[j], dtype=torch.float64), t, geometry=geometry, c=c).numpy()
        line = dict(color=color, width=(1 if d == 3 else 0.5) + 6 * float(w[j]))
        fig.add_trace(points_trace(arc, mode="lines", showlegend=False, hoverinfo="skip", line=line))
    # On the sphere a key under the query would vanish behind its marker: keys sit just outside the
    # surface, in front of the query seen from outside, and the heaviest ones carry their weight in writing.
    lift = 1.04 if d == 3 else 1.0
    written = [f"{lab} {w[j]:.2f}" if d == 3 else lab for j, lab in enumerate(labels)]
    fig.add_trace(
        points_trace(
            lift * keys,
            mode="markers+text",
            text=[written[j] if j in named else "" for j in range(len(labels))],
            textposition="top center",
            name="keys (size = weight)",
            marker=dict(size=_size(w) / (2 if d == 3 else 1), color=color, opacity=0.8),
            hovertext=hover,
            hoverinfo="text",
        )
    )
    # plotly's 3-D markers have no "x" symbol: the sphere's query is a diamond
    query_marker = dict(size=6, symbol="diamond") if d == 3 else dict(size=13, symbol="x")
    fig.add_trace(points_trace(q[None], mode="markers", name="query", marker=dict(color="black", **query_marker)))
    if d == 3:
        base_layout(fig, title, height=460)
        fig.update_layout(scene=dict(aspectmode="cube", xaxis_title="x1", yaxis_title="x2", zaxis_title="x3"))
        return fig
    base_layout(fig, title, "x1", "x2", height=460)
    for shape in unit_disk_shapes(circle) if circle is not None else []:
        fig.add_shape(**shape)
    fig.update_xaxes(range=[-lim, lim], constrain="domain", zeroline=False)
    fig.update_yaxes(range=[-lim, lim], scaleanchor="x", scaleratio=1, zeroline=False)
    return fig


def _sweep_bars(ida_row: np.ndarray, soft: np.ndarray, labels: list[str]) -> list[go.Bar]:
    return [
        go.Bar(x=labels, y=ida_row, name="IDA", marker_color=kernel_colour("ida")),
        go.Bar(x=labels, y=soft, name="softmax", marker_color=kernel_colour("softmax")),
    ]


def eps_sweep_animation(
    eps: np.ndarray, ida: np.ndarray, softmax: np.ndarray, *, title: str = "", speed: float = 1.0
) -> go.Figure:
    """One frame per eps (largest first): IDA weights sharpen towards one-hot; softmax does not depend on eps.

    ``ida`` (E, n) holds the IDA weights at each eps, ``softmax`` (n,) the softmax weights. A play
    button runs the frames (350 ms each at ``speed`` 1); the slider under the plot scrubs through eps. Many keys are grouped as in
    ``weights_bars``: IDA's weight order is the distance order at every eps, so it ranks the keys.
    """
    eps, ida, soft = np.asarray(eps, float), np.asarray(ida, float), np.asarray(softmax, float)
    order = np.argsort(-eps)  # large eps (diluted) -> small eps (one-hot)
    groups, labels = key_groups(-ida.mean(axis=0))  # minus the weight: heaviest first
    ida = np.stack([_grouped(row, groups) for row in ida])  # (E, n) -> (E, bars)
    soft = _grouped(soft, groups)
    names = [f"{e:.2g}" for e in eps[order]]
    frames = [
        go.Frame(
            data=_sweep_bars(ida[i], soft, labels), name=name, layout=dict(title_text=f"{title} eps = {name}")
        )
        for i, name in zip(order, names, strict=True)
    ]
    fig = go.Figure(data=_sweep_bars(ida[order[0]], soft, labels), frames=frames)
    play = dict(
        frame=dict(duration=frame_ms(350, speed), redraw=True),
        fromcurrent=True,
        transition=dict(duration=frame_ms(150, speed)),
    )
    fig.update_layout(
        updatemenus=[
            dict(
                type="buttons",
                showactive=False,
                x=0.0,
                y=-0.28,
                xanchor="left",
                buttons=[
                    dict(label="Play", method="animate", args=[None, play]),
                    dict(
                        label="Pause",
                        method="animate",
                        args=[[None], dict(mode="immediate", frame=dict(duration=0))],
                    ),
                ],
            )
        ],
        sliders=[
            dict(
                active=0,
                x=0.15,
                y=-0.2,
                len=0.85,
                currentvalue=dict(prefix="eps (IDA regulariser, log steps) = "),
                steps=[
                    dict(
                        label=name, method="animate", args=[[name], dict(mode="immediate", frame=dict(duration=0))]
                    )
                    for name in names
                ],
            )
        ],
        barmode="group",
    )
    base_layout(
        fig, f"{title} eps = {names[0]}", _keys_axis_title(groups), "attention weight of the query", height=460
    )
    # the slider and the buttons take the space under the plot: the legend goes to the right
    # the legend sits above the plot on the right, clear of the axes and the title on the left
    fig.update_layout(
        margin=dict(b=130, t=80), legend=dict(orientation="h", x=1.0, y=1.02, xanchor="right", yanchor="bottom")
    )
    fig.update_yaxes(range=[0, 1.02])
    return fig


def sweep_summary_figure(eps: np.ndarray, ida: np.ndarray, softmax: np.ndarray, *, eps_now: float) -> go.Figure:
    """Why the weights look as they do: the largest weight and the effective number of keys 1/sum w^2,
    against eps for IDA (lines) and for softmax (flat, it has no eps), the current eps marked."""
    eps, ida, soft = np.asarray(eps, float), np.asarray(ida, float), np.asarray(softmax, float)
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=("largest weight max_j W_j", "effective number of keys 1 / sum_j W_j^2")
    )
    for col, (f_ida, f_soft) in enumerate(
        ((ida.max(axis=1), soft.max()), (1.0 / (ida**2).sum(axis=1), 1.0 / (soft**2).sum())), start=1
    ):
        for name, y, line in (
            ("IDA", f_ida, dict(color=kernel_colour("ida"))),
            ("softmax (no eps)", np.full_like(eps, f_soft), dict(color=kernel_colour("softmax"), dash="dash")),
        ):
            trace = go.Scatter(x=eps, y=y, mode="lines", name=name, line=line, showlegend=col == 1)
            fig.add_trace(trace, row=1, col=col)
        fig.add_vline(x=eps_now, line=dict(color="black", dash="dot"), row=1, col=col)
    base_layout(fig, "", height=340)
    # large eps on the left, as the animation above plays (diluted -> one-hot)
    log_axis(fig, "x", title_text="eps (regulariser), large to small as the animation plays", autorange="reversed")
    fig.update_yaxes(title_text="weight", row=1, col=1)
    fig.update_yaxes(title_text="number of keys", row=1, col=2)
    return fig
