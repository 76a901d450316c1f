"""Figures of the Routing & memory page: routing decisions on the sphere, loads, errors, DMG streams, traffic."""

from __future__ import annotations

import textwrap

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from georesolver_core.viz.style import base_layout, log_axis, points_trace, sphere_surface, white_template

PALETTE = qualitative.Dark24 + qualitative.Light24
ROUTER_COLORS = {"gsr": "#2ca02c", "softmax": "#7f7f7f", "expert-choice": "#9467bd"}
PROTOCOL_COLORS = {
    "gsr-candidates": "#2ca02c",
    "gsr-prototypes": "#98df8a",
    "a2a-switch": "#d62728",
    "a2a-dropless": "#ff9896",
}


def prototype_colors(m: int) -> list[str]:
    """m distinct colours, one per prototype: hues evenly spaced around the wheel (lightness alternating
    when m > 12, so neighbours in hue still differ), never a repeat for m <= 64."""
    if m <= 0:
        return []
    light = [45] if m <= 12 else [40, 62]
    return [f"hsl({round(360 * i / m)}, 80%, {light[i % len(light)]}%)" for i in range(m)]


def _arc(a: np.ndarray, b: np.ndarray, n: int = 12) -> np.ndarray:
    """Points of the great-circle arc from a to b (unit vectors), slightly outside the sphere. (n, 3)."""
    omega = np.arccos(np.clip(a @ b, -1.0, 1.0))
    t = np.linspace(0.0, 1.0, n)[:, None]
    if omega < 1e-6:
        pts = (1 - t) * a + t * b
    else:
        pts = (np.sin((1 - t) * omega) * a + np.sin(t * omega) * b) / np.sin(omega)
    return 1.01 * pts


def _sphere_layout(fig: go.Figure, height: int) -> go.Figure:
    axis = dict(range=[-1.1, 1.1], showbackground=False, title="")
    white_template(fig).update_layout(
        height=height,
        margin=dict(l=0, r=0, t=40, b=0),
        scene=dict(xaxis=axis, yaxis=axis, zaxis=axis, aspectmode="cube"),
        legend=dict(orientation="h", yanchor="bottom", y=0.0, xanchor="left", x=0.0),
    )
    return fig


MAX_PROTOTYPE_LABELS = 16  # more names than this overrun the figure's height; each is in its hover


def routing_sphere_figure(queries, protos, indices, weights, *, title: str = "", height: int = 560) -> go.Figure:
    """Queries coloured by their chosen (Top-1) prototype, great-circle arcs to their Top-K (width ~ weight).

    queries (n, 3), protos (m, 3), indices / weights (n, K): numpy arrays. Up to ``MAX_PROTOTYPE_LABELS``
    prototypes are named in a second legend at the right (name, colour, Top-1 count); every marker's
    hover names its prototype.
    """
    q, p, idx, w = (np.asarray(a) for a in (queries, protos, indices, weights))
    fig = go.Figure([sphere_surface()])
    colours = prototype_colors(p.shape[0])
    gap = np.full((1, 3), np.nan)  # a NaN row lifts the pen between two arcs of one trace
    for rank in range(idx.shape[1]):  # one trace per rank: first choices bold, later ones thinner and fainter
        arcs = [np.vstack([_arc(q[i], p[idx[i, rank]]), gap]) for i in range(q.shape[0])]
        per_vertex = [colours[int(idx[i, rank])] for i in range(q.shape[0]) for _ in range(len(arcs[i]))]
        mean_w = float(w[:, rank].mean()) if w.size else 0.0
        fig.add_trace(
            points_trace(
                np.vstack(arcs) if arcs else np.empty((0, 3)),
                mode="lines",
                name=f"choice {rank + 1} (mean weight {mean_w:.2f}; colour = its prototype)",
                line=dict(color=per_vertex or "grey", width=max(1.5, 7 * mean_w)),
                opacity=max(0.35, min(1.0, 0.3 + mean_w)),
                hoverinfo="skip",
            )
        )
    fig.add_trace(
        points_trace(
            1.01 * q,
            mode="markers",
            name="queries (colour = Top-1)",
            marker=dict(size=4, color=[colours[int(e)] for e in idx[:, 0]] if idx.size else []),
            text=[
                f"query {i}: prototypes {list(map(int, idx[i]))}, weights {np.round(w[i], 3).tolist()}"
                for i in range(q.shape[0])
            ],
            hoverinfo="text",
        )
    )
    names = [f"c{e}" for e in range(p.shape[0])]
    top1 = np.bincount(idx[:, 0].astype(int), minlength=p.shape[0]) if idx.size else np.zeros(p.shape[0], int)
    hover = [f"prototype {n}: Top-1 of {int(c)} queries" for n, c in zip(names, top1, strict=True)]
    diamond = dict(size=8, symbol="diamond", line=dict(color="black", width=1))
    if len(names) <= MAX_PROTOTYPE_LABELS:
        # Names in a legend of their own at the right, each in its prototype's colour: written on the
        # sphere they covered the markers and the weighted arcs meeting there. Clicking a name hides it.
        for e, name in enumerate(names):
            fig.add_trace(
                points_trace(
                    1.03 * p[e : e + 1],
                    mode="markers",
                    name=f"{name} (Top-1 of {int(top1[e])})",
                    marker=dict(color=colours[e], **diamond),
                    text=hover[e : e + 1],
                    hoverinfo="text",
                    legend="legend2",
                )
            )
        fig.update_layout(
            legend2=dict(
                title=dict(text="prototypes"),
                font=dict(color="#333"),
                x=1.0,
                xanchor="right",
                y=0.95,
                yanchor="top",
            ),
            scene_domain=dict(x=[0.0, 0.86]),
        )
    else:
        fig.add_trace(
            points_trace(
                1.03 * p,
                mode="markers",
                name="prototypes",
                marker=dict(color=colours, **diamond),
                text=hover,
                hoverinfo="text",
            )
        )
    fig.update_layout(title=title)
    return _sphere_layout(fig, height)


def load_figure(loads: dict, *, title: str = "Load per expert", height: int = 460) -> go.Figure:
    """Grouped bars per router: slots requested (outline) and kept after capacity (filled).

    loads: name -> (label, requested list, kept list).
    """
    titles = ["<br>".join(textwrap.wrap(v[0], 30)) for v in loads.values()]  # long labels on two or three lines
    fig = make_subplots(rows=1, cols=len(loads), subplot_titles=titles, shared_yaxes=True, horizontal_spacing=0.06)
    for col, (name, (_, req, kept)) in enumerate(loads.items(), start=1):
        e = list(range(len(req)))
        color = ROUTER_COLORS.get(name, "#1f77b4")
        outline = dict(color="rgba(0,0,0,0)", line=dict(color=color, width=2))
        for y, marker in ((req, outline), (kept, dict(color=color))):
            fig.add_trace(go.Bar(x=e, y=y, showlegend=False, marker=marker, name=name), 1, col)
        fig.update_xaxes(title_text="expert", row=1, col=col)
    # the legend explains outline vs fill in neutral grey: every router has its own colour
    for label, marker in (
        ("requested (outline)", dict(color="rgba(0,0,0,0)", line=dict(color="#555", width=2))),
        ("kept after capacity (filled)", dict(color="#999")),
    ):
        fig.add_trace(go.Bar(x=[None], y=[None], name=label, marker=marker), 1, 1)
    fig.update_layout(barmode="overlay")
    base_layout(fig, title, "", "", height)  # the shared y axis is titled once, on the left
    fig.update_yaxes(title_text="tokens (slots) per expert", row=1, col=1)
    fig.update_annotations(font_size=12)
    fig.update_layout(margin=dict(t=120))
    fig.update_xaxes(dtick=1 if max((len(v[1]) for v in loads.values()), default=0) <= 16 else None)
    return fig


def loss_curves_figure(curves: dict, *, height: int = 320) -> go.Figure:
    """Training MSE per step for each router. curves: name -> list of losses."""
    fig = go.Figure()
    for name, losses in curves.items():
        fig.add_trace(go.Scatter(y=losses, mode="lines", name=name, line=dict(color=ROUTER_COLORS.get(name))))
    base_layout(fig, "Training loss", "step", "MSE on the cluster-maps task", height)
    log_axis(fig, "y")
    return fig


def quality_figure(ks, worst, random, paper_bound, exact_bound, *, height: int = 420) -> go.Figure:
    """Theorem 10.1: routing error vs K beside the printed bound and the exact worst case 2 T max||v||.

    K = K_pool keeps every prototype and has error exactly 0: a log axis cannot show it, so it is left out.
    A single measured 0 elsewhere (rounding at large K) is a gap in its line, not a plunge off the axis.
    """
    keep = [i for i in range(len(ks)) if max(worst[i], exact_bound[i]) > 0]
    pick = lambda v: [float(v[i]) if v[i] > 0 else None for i in keep]  # noqa: E731
    x = [float(ks[i]) for i in keep]
    curves = (  # (values, name, line): the two bounds dashed, the two measurements solid
        (paper_bound, "printed bound 2||V||_F T/(1-T) max||v||", dict(color="#d62728", dash="dash")),
        (exact_bound, "exact worst case 2 T max||v||", dict(color="black", dash="dot")),
        (worst, "measured, worst-case values", dict(color="#2ca02c")),
        (random, "measured, random unit values", dict(color="#1f77b4")),
    )
    fig = go.Figure(
        [go.Scatter(x=x, y=pick(v), name=name, mode="lines+markers", line=line) for v, name, line in curves]
    )
    base_layout(
        fig,
        "Routing error vs K (max over queries; K = K_pool has error 0)",
        "K (prototypes kept)",
        "||o - o*|| (unit-norm values)",
        height,
    )
    fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.2, xanchor="left", x=0))
    log_axis(fig, "y")
    return fig


def dmg_stream_figure(t, loss, tau, spawn_t, n_active, shift_at: int | None = None, *, height: int = 420):
    """Surprise l_t, threshold tau_t and spawn events over the stream; pool size on a second axis."""
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(
        go.Scatter(
            x=t, y=loss, mode="markers", marker=dict(size=3, color="#1f77b4"), name="surprise l_t = min d_S^2"
        )
    )
    fig.add_trace(go.Scatter(x=t, y=tau, mode="lines", line=dict(color="#d62728"), name="threshold tau_t"))
    sp = set(int(s) for s in spawn_t)
    ys = [loss[i] for i, ti in enumerate(t) if int(ti) in sp]
    xs = [ti for ti in t if int(ti) in sp]
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=ys,
            mode="markers",
            name="spawn",
            marker=dict(symbol="star", size=11, color="#ff7f0e", line=dict(color="black", width=1)),
        )
    )
    fig.add_trace(
        go.Scatter(
            x=t, y=n_active, mode="lines", line=dict(color="#2ca02c", shape="hv"), name="active prototypes"
        ),
        secondary_y=True,
    )
    if shift_at is not None:
        fig.add_vline(x=shift_at, line=dict(color="black", dash="dash"), annotation_text="shift")
    base_layout(fig, "DMG stream: surprise, threshold, spawns", "stream step t", "loss (rad^2)", height)
    fig.update_yaxes(
        title_text="active prototypes",
        secondary_y=True,
        tickformat="d",
        rangemode="tozero",
        dtick=max(1, int(np.ceil(max(n_active, default=1) / 6))),
    )
    if len(t):  # the axis ends with the stream (plotly pads it past the last step)
        fig.update_xaxes(range=[float(np.min(t)), float(np.max(t))])
    return fig


def dmg_pool_figure(points, point_t, protos, births, *, height: int = 520) -> go.Figure:
    """The stream on the sphere (colour = time) and the pool (colour = birth step)."""
    x, pr = np.asarray(points), np.asarray(protos)
    fig = go.Figure([sphere_surface()])
    fig.add_trace(
        points_trace(
            x,
            mode="markers",
            name="stream points",
            marker=dict(size=2, color=point_t, colorscale="Blues", opacity=0.6),
            hoverinfo="skip",
        )
    )
    fig.add_trace(
        points_trace(
            1.03 * pr,
            mode="markers",
            name="prototypes (colour = birth)",
            marker=dict(
                size=7,
                symbol="diamond",
                color=births,
                colorscale="Oranges",
                showscale=True,
                colorbar=dict(title="birth step", len=0.6),
                line=dict(color="black", width=1),
            ),
            text=[f"born at t={int(b)}" for b in births],
            hoverinfo="text",
        )
    )
    fig.update_layout(title="The pool grows on the sphere")
    return _sphere_layout(fig, height)


def comm_figure(rows: list[dict], *, per: str = "batch", height: int = 420) -> go.Figure:
    """Measured bytes vs batch size per protocol (log-log), one line per protocol and world size.

    rows: dicts with protocol, world_size, batch, bytes, bytes_per_query.
    """
    fig = go.Figure()
    key = "bytes" if per == "batch" else "bytes_per_query"
    for proto in PROTOCOL_COLORS:
        for p in sorted({r["world_size"] for r in rows}):
            sel = sorted(
                (r for r in rows if r["protocol"] == proto and r["world_size"] == p), key=lambda r: r["batch"]
            )
            if not sel:
                continue
            fig.add_trace(
                go.Scatter(
                    x=[r["batch"] for r in sel],
                    y=[r[key] for r in sel],
                    mode="lines+markers",
                    name=f"{proto}, P={p}",
                    line=dict(color=PROTOCOL_COLORS[proto], dash="solid" if p == 2 else "dash"),
                )
            )
    y = "bytes per batch (all workers)" if per == "batch" else "bytes per query"
    base_layout(fig, f"Measured traffic ({y})", "batch size B (queries)", y, height)
    fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.22, xanchor="left", x=0))
    log_axis(fig, "x")
    log_axis(fig, "y")
    return fig
