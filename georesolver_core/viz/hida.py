"""Figures of the HIDA family page: pure functions, data in, ``go.Figure`` out."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from georesolver_core.viz.style import base_layout, equal_aspect, kernel_colour, log_axis, unit_disk_shapes

PALETTE = [
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
]


def fp_pattern_figure(mask: np.ndarray, title: str = "") -> go.Figure:
    """The index sets S_i as an image: row i = query, column j = key, dark where j is in S_i. mask (n, n)."""
    n = mask.shape[0]
    fig = go.Figure(
        go.Heatmap(
            z=mask.astype(float), colorscale=[[0, "#ffffff"], [1, "#08306b"]], showscale=False,
            hovertemplate="query i=%{y}<br>key j=%{x}<br>in S_i: %{z}<extra></extra>",
        )
    )  # fmt: skip
    # cells are centred on whole positions: both axes end at the matrix (constrain shrinks the plot, not the range)
    fig.update_xaxes(range=[-0.5, n - 0.5], constrain="domain")
    fig.update_yaxes(range=[n - 0.5, -0.5], scaleanchor="x", constrain="domain")
    step = max(1, 2 ** math.floor(math.log2(max(n, 1) / 8)))  # whole positions only: no half-token ticks
    fig.update_xaxes(tick0=0, dtick=step)
    fig.update_yaxes(tick0=0, dtick=step)
    return base_layout(fig, title, "key position j", "query position i", height=460)


def disk_figure(points: np.ndarray, centres: np.ndarray, assignment: np.ndarray, title: str = "", sizes=None):
    """Keys in the Poincaré disk coloured by the anchor / summary that absorbs them; centres as stars.

    points (N, 2), centres (m, 2), assignment (N,) index into centres, sizes (m,) optional counts.
    """
    fig = go.Figure()
    colors = [PALETTE[a % len(PALETTE)] for a in assignment]
    fig.add_trace(go.Scatter(x=points[:, 0], y=points[:, 1], mode="markers", name="keys",
                             marker=dict(size=5, color=colors, opacity=0.55)))  # fmt: skip
    ok = np.isfinite(centres).all(1)
    label = "anchors / summaries" if sizes is None else "summaries (size ~ count)"
    msize = 16 if sizes is None else 8 + 20 * np.sqrt(np.asarray(sizes, float) / max(1.0, float(np.max(sizes))))
    fig.add_trace(go.Scatter(
        x=centres[ok, 0], y=centres[ok, 1], mode="markers", name=label,
        marker=dict(symbol="star", size=msize if sizes is None else np.asarray(msize)[ok],
                    color=[PALETTE[i % len(PALETTE)] for i in np.flatnonzero(ok)], line=dict(color="black", width=1.5)),
    ))  # fmt: skip
    fig.update_layout(shapes=unit_disk_shapes())
    return equal_aspect(base_layout(fig, title, "x1 (Poincaré disk)", "x2", height=420))


def stream_animation_figure(keys: np.ndarray, history: np.ndarray, *, frames: int = 40) -> go.Figure:
    """C-HIDA summaries moving as tokens arrive. keys (T, 2), history (T, c, 2) -> animated figure."""
    T, c = history.shape[:2]
    steps = sorted({int(t) for t in np.linspace(0, T - 1, min(frames, T))})

    def data(t):
        s = history[t]
        ok = np.isfinite(s).all(1)
        return [
            go.Scatter(x=keys[: t + 1, 0], y=keys[: t + 1, 1], mode="markers", name="keys so far",
                       marker=dict(size=4, color="#999999", opacity=0.5)),
            go.Scatter(x=keys[t : t + 1, 0], y=keys[t : t + 1, 1], mode="markers", name="token t",
                       marker=dict(size=10, color="black", symbol="x")),
            go.Scatter(x=s[ok, 0], y=s[ok, 1], mode="markers", name="summaries",
                       marker=dict(size=16, symbol="star", color=[PALETTE[i % len(PALETTE)] for i in np.flatnonzero(ok)],
                                   line=dict(color="black", width=1.5))),
        ]  # fmt: skip

    fig = go.Figure(data=data(steps[0]), frames=[go.Frame(data=data(t), name=str(t + 1)) for t in steps])
    fig.update_layout(
        shapes=unit_disk_shapes(),
        updatemenus=[dict(type="buttons", showactive=False, x=0.0, y=-0.08, xanchor="left", buttons=[
            dict(label="Play", method="animate", args=[None, dict(frame=dict(duration=120, redraw=True), fromcurrent=True)]),
            dict(label="Pause", method="animate", args=[[None], dict(mode="immediate", frame=dict(duration=0))]),
        ])],
        sliders=[dict(active=0, y=-0.12, currentvalue=dict(prefix="tokens seen: "), steps=[
            dict(label=str(t + 1), method="animate", args=[[str(t + 1)], dict(mode="immediate", frame=dict(duration=0))])
            for t in steps
        ])],
    )  # fmt: skip
    return equal_aspect(base_layout(fig, "C-HIDA summaries as the stream arrives", "x1", "x2", height=520))


def regret_figure(T: np.ndarray, cumulative: np.ndarray, bound: np.ndarray, checkpoints=None, regret=None):
    """Running loss sum_t min_k d_H(k_t, s_k)^2 against T, the bound Delta^2 c log T, and the regret if known."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=T, y=cumulative, mode="lines", name="running loss (online)"))
    fig.add_trace(go.Scatter(x=T, y=bound, mode="lines", name="Δ² c log T (Theorem 5.6, constant 1)",
                             line=dict(dash="dash")))  # fmt: skip
    if regret is not None:
        fig.add_trace(go.Scatter(x=checkpoints, y=regret, mode="lines+markers", name="regret vs best fixed"))
    log_axis(fig, "x")
    return base_layout(fig, "", "tokens T (log)", "sum of squared hyperbolic distances", height=380)


def scaling_figure(lens, series: dict, slopes: dict, labels: dict, y_title: str) -> go.Figure:
    """log-log curves per kernel with the fitted slope in the legend. series: kernel -> values (None skipped)."""
    fig = go.Figure()
    for kern, ys in series.items():
        pts = [(n, y) for n, y in zip(lens, ys, strict=True) if y is not None and y > 0]
        if not pts:
            continue
        s = slopes.get(kern)
        name = f"{labels.get(kern, kern)}: slope {s:.2f}" if s is not None else labels.get(kern, kern)
        fig.add_trace(go.Scatter(x=[p[0] for p in pts], y=[p[1] for p in pts], mode="lines+markers", name=name,
                                 line=dict(color=kernel_colour(kern, None))))  # fmt: skip
    log_axis(fig, "x")
    log_axis(fig, "y")
    return base_layout(fig, "", "sequence length n (log)", y_title, height=420)


def error_figure(sweeps) -> go.Figure:
    """Relative error against Dense-HIDA as each size knob (w, g, m, c) grows; sweeps: list of ErrorVsDense."""
    fig = go.Figure()
    for i, s in enumerate(sweeps):
        fig.add_trace(go.Scatter(x=s.values, y=s.error, mode="lines+markers", name=s.variant,
                                 line=dict(color=PALETTE[i % len(PALETTE)])))  # fmt: skip
    log_axis(fig, "x")
    return base_layout(fig, "", "size knob: w, g, m or c (log)", "||o - o_Dense||_F / ||o_Dense||_F", height=400)
