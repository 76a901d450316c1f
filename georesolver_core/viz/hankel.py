"""Figures of the Hankel attention page: the cross block with its dyadic blocks, decay, ranks, speed-up."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from georesolver_core.extras.hankel_measure import Decay, KernelView, Ranks, Speed
from georesolver_core.theory.hankel import singular_value_bound
from georesolver_core.viz.style import base_layout, count_dtick, log_axis


def _legend_below(fig: go.Figure) -> go.Figure:
    """The legend under the plot: above it (base_layout's place) it covers titles when entries wrap."""
    fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.2, xanchor="left", x=0))
    return fig


SCALE_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"]


def kernel_figure(view: KernelView, height: int = 480) -> go.Figure:
    """log10 H[i, j] = -log10(s_i + r_j) with each dyadic column block outlined (dashed: the dense layer)."""
    fig = go.Figure(
        go.Heatmap(
            z=np.log10(view.kernel),
            x=np.arange(view.split, view.length),
            y=np.arange(view.split),
            colorscale="Viridis",
            colorbar=dict(title="log10 H"),
            hovertemplate="query i=%{y}<br>key j=%{x}<br>log10 H=%{z:.3f}<extra></extra>",
        )
    )
    for idx, (start, stop, h) in enumerate(view.blocks):
        fig.add_shape(
            type="rect",
            x0=view.split + start - 0.5,
            x1=view.split + stop - 0.5,
            y0=-0.5,
            y1=view.split - 0.5,
            line=dict(color="white" if h else "red", width=2, dash="solid" if h else "dash"),
        )
        fig.add_annotation(
            x=view.split + (start + stop - 1) / 2,
            y=1.0,
            yref="paper",
            yanchor="bottom",
            showarrow=False,
            text="dense" if h == 0 else f"h={h:g}",
            font=dict(size=10, color=SCALE_COLORS[idx % len(SCALE_COLORS)]),
        )
    fig.update_yaxes(autorange="reversed", tick0=0, dtick=count_dtick(view.split - 1))  # whole tokens only
    fig.update_xaxes(tick0=0, dtick=count_dtick(view.length - view.split))
    return base_layout(
        fig,
        f"Cross block H[i, j] = 1/(s_i + r_j), split b = {view.split}",
        "key token j (after b)",
        "query token i (before b)",
        height=height,
    )


def decay_figure(decay: Decay, normalised: bool = True, height: int = 440) -> go.Figure:
    """Singular values per block scale h on a log axis, with the seed's 4^-N line."""
    fig = go.Figure()
    series = (
        decay.normalised() if normalised else [list(np.asarray(sv) / (2 * np.pi)) for sv in decay.singular_values]
    )
    top = len(series[0])
    n = np.arange(1, top + 1)
    for i, (h, sv) in enumerate(zip(decay.hs, series, strict=True)):
        sv = np.asarray(sv)
        keep = sv > 0  # a block narrower than n has exact zeros: nothing to draw on a log axis
        fig.add_trace(
            go.Scatter(
                x=n[keep],
                y=sv[keep],
                mode="lines+markers",
                name=f"h = {h:g}",
                line=dict(color=SCALE_COLORS[i % len(SCALE_COLORS)]),
            )
        )
    fig.add_trace(
        go.Scatter(
            x=n,
            y=singular_value_bound(n),
            mode="lines",
            line=dict(color="black", dash="dash"),
            name="seed bound 4^-(n-1)",
        )
    )
    log_axis(fig, "y")
    y = "s_n / s_1 (normalised)" if normalised else "s_n / (2 pi) (unnormalised, the seed's K)"
    return _legend_below(
        base_layout(fig, "Singular values of each dyadic block", "index n = N + 1", y, height=height)
    )


def rank_figure(ranks: Ranks, height: int = 420) -> go.Figure:
    """Observed rank per eps for each h (markers) beside the rule ceil(log4(1/eps)) (dashed)."""
    fig = go.Figure()
    for i, h in enumerate(ranks.hs):
        fig.add_trace(
            go.Scatter(
                x=ranks.eps,
                y=[row[i] for row in ranks.observed],
                mode="lines+markers",
                name=f"observed, h = {h:g}",
                line=dict(color=SCALE_COLORS[i % len(SCALE_COLORS)], width=1),
            )
        )
    fig.add_trace(
        go.Scatter(
            x=ranks.eps,
            y=ranks.rule,
            mode="lines+markers",
            line=dict(color="black", dash="dash", width=3),
            name="rule ceil(log4(1/eps))",
        )
    )
    log_axis(fig, "x", autorange="reversed")
    return _legend_below(
        base_layout(
            fig, "Rank needed for relative error eps", "eps (smaller to the right)", "rank N", height=height
        )
    )


def speed_figure(speed: Speed, height: int = 420) -> go.Figure:
    """Measured speed-up dense / factorised and the multiply-add ratio, against the block size (log-log)."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=speed.sizes, y=speed.speedup, mode="lines+markers", name="measured speed-up"))
    fig.add_trace(
        go.Scatter(
            x=speed.sizes,
            y=speed.flop_ratio,
            mode="lines",
            line=dict(dash="dash", color="black"),
            name="multiply-add ratio m / (2N)",
        )
    )
    fig.add_hline(y=1.0, line=dict(color="#bbbbbb"))
    log_axis(fig, "x")
    log_axis(fig, "y")
    return base_layout(
        fig,
        f"Dense H X vs U (V^T X), rank {speed.rank}, {speed.threads} thread(s)",
        "block size m",
        "time ratio",
        height=height,
    )


def error_figure(sizes: list[float], errors: list[float], eps: float, title: str, height: int = 380) -> go.Figure:
    """Relative output error of the factorised block against the block size, with eps as the target line."""
    fig = go.Figure(go.Scatter(x=sizes, y=errors, mode="lines+markers", name="measured relative error"))
    fig.add_hline(y=eps, line=dict(color="black", dash="dash"), annotation_text=f"eps = {eps:g}")
    log_axis(fig, "x")
    log_axis(fig, "y")
    return base_layout(fig, title, "block scale h", "||HX - U(V^T X)|| / ||HX||", height=height)
