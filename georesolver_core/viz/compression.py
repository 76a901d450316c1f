"""Figures of the Compression page: pure functions from measured data to plotly figures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from georesolver_core.geometry import GEOMETRIES
from georesolver_core.viz.style import base_layout, equal_aspect, log_axis, unit_disk_shapes

METHOD_COLORS = {
    "hcc": "#d62728",
    "hcc-rotated": "#ff7f0e",
    "kivi-channel": "#1f77b4",
    "kivi-token": "#17becf",
    "uniform": "#7f7f7f",
}


def _legend_below(fig: go.Figure) -> go.Figure:
    """Long legends go under the plot, where they cannot cover the title."""
    # far enough down to clear the tick labels and axis title (powers of ten stand taller)
    fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.28, xanchor="left", x=0))
    fig.update_layout(margin=dict(b=150))
    return fig


def _segments(a: np.ndarray, b: np.ndarray) -> tuple[list, list]:
    """x and y of line segments a_i -> b_i separated by None (one trace for all)."""
    xs, ys = [], []
    for p, q in zip(a, b, strict=True):
        xs += [p[0], q[0], None]
        ys += [p[1], q[1], None]
    return xs, ys


def disk_figure(keys: np.ndarray, recon: dict[str, np.ndarray], title: str = "", height: int = 460) -> go.Figure:
    """Keys (n, 2) in the Poincaré disk, each method's reconstruction (n, 2) and the error vectors k -> k_hat."""
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(x=keys[:, 0], y=keys[:, 1], mode="markers", name="original key k",
                   marker=dict(size=6, color="black"))
    )  # fmt: skip
    for label, (method, pts) in recon.items():
        color = METHOD_COLORS.get(method, "#9467bd")
        xs, ys = _segments(keys, pts)
        fig.add_trace(
            go.Scatter(x=xs, y=ys, mode="lines", name=f"error k -> k_hat ({label})",
                       line=dict(color=color, width=1), hoverinfo="skip")
        )  # fmt: skip
        fig.add_trace(
            go.Scatter(x=pts[:, 0], y=pts[:, 1], mode="markers", name=f"reconstruction ({label})",
                       marker=dict(size=7, color=color, symbol="x"))
        )  # fmt: skip
    fig.update_layout(shapes=unit_disk_shapes())
    base_layout(fig, title, "x1", "x2", height=height)
    return _legend_below(equal_aspect(fig))


def error_histogram(
    errors: dict[str, np.ndarray], bound: float, *, colors: dict[str, str] | None = None, title: str = ""
) -> go.Figure:
    """Histograms of per-key ||k - k_hat||^2, one per method, with Theorem 6.1's bound as a vertical line."""
    fig = go.Figure()
    for label, e in errors.items():
        fig.add_trace(
            go.Histogram(x=e, name=label, opacity=0.6, nbinsx=60,
                         marker_color=(colors or {}).get(label))
        )  # fmt: skip
    fig.add_vline(
        x=bound, line=dict(color="black", dash="dash", width=2),
        annotation_text=f"bound 4(2^-b + 2^-b_r) = {bound:.3g}", annotation_position="top right",
    )  # fmt: skip
    fig.update_layout(barmode="overlay")
    base_layout(fig, title, "squared reconstruction error ||k - k_hat||^2", "number of keys")
    return _legend_below(fig)


def pareto_figure(
    sweep: pd.DataFrame, *, highlight: tuple[str, float] | None = None, title: str = ""
) -> go.Figure:
    """Bytes per key vs mean (solid) and max (dotted) squared error, one line per method.

    The bits are written beside the points of the first method only: the curves run close together and
    their numbers would pile up; every point's bits are in its hover."""
    fig = go.Figure()
    for i, (method, rows) in enumerate(sweep.groupby("method", sort=False)):
        color = METHOD_COLORS.get(method)
        fig.add_trace(
            go.Scatter(
                x=rows["bytes_per_key"], y=rows["mean_sq_error"], mode="lines+markers+text" if i == 0 else "lines+markers",
                text=[f"{b}" for b in rows["bits"]], textposition="top center", name=f"{method} (mean)",
                line=dict(color=color), legendgroup=method,
                hovertemplate="%{x:.2f} bytes/key<br>mean error %{y:.3g}<br>bits %{text}<extra>" + method + "</extra>",
            )
        )  # fmt: skip
        fig.add_trace(
            go.Scatter(x=rows["bytes_per_key"], y=rows["max_sq_error"], mode="lines", name=f"{method} (max)",
                       line=dict(color=color, dash="dot"), legendgroup=method, showlegend=False)
        )  # fmt: skip
    if highlight is not None:  # a trace, not add_vline: vline annotations misplace log-axis ranges
        lo, hi = float(sweep["mean_sq_error"].min()), float(sweep["max_sq_error"].max())
        fig.add_trace(
            go.Scatter(x=[highlight[1], highlight[1]], y=[lo, hi], mode="lines", name=highlight[0],
                       line=dict(color="black", dash="dash"))
        )  # fmt: skip
    log_axis(fig, "y")
    base_layout(fig, title, "storage per key (bytes, side data included)", "squared error ||k - k_hat||^2")
    return _legend_below(fig)


def ratio_figure(ratio: pd.DataFrame, title: str = "") -> go.Figure:
    """Compression ratio vs d_h: Theorem 6.2's formula against the measured bytes of both layouts."""
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(x=ratio["d_h"], y=ratio["formula"], mode="lines", name="formula 32 d_h / ((d_h - 1) b + b_r)",
                   line=dict(color="black", dash="dash"))
    )  # fmt: skip
    fig.add_trace(
        go.Scatter(x=ratio["d_h"], y=ratio["measured"], mode="lines+markers",
                   name="measured: d_h - 1 coordinates + sign bit", line=dict(color=METHOD_COLORS["hcc"]))
    )  # fmt: skip
    fig.add_trace(
        go.Scatter(x=ratio["d_h"], y=ratio["measured_all_coordinates"], mode="lines+markers",
                   name="measured: every coordinate (the proof's quantiser)", line=dict(color="#9467bd"))
    )  # fmt: skip
    log_axis(fig, "x")
    base_layout(fig, title, "key dimension d_h", "compression ratio vs float32 keys")
    return _legend_below(fig)


def memory_figure(table: pd.DataFrame, title: str = "") -> go.Figure:
    """KV-cache size per storage choice (GiB), with the ratio against the float16 cache as text."""
    colors = ["#7f7f7f", "#bcbd22", METHOD_COLORS["hcc"], "#e377c2"]
    fig = go.Figure(
        go.Bar(
            x=table["cache"], y=table["GiB"], marker_color=colors[: len(table)],
            text=[f"{g:.3g} GiB, {r:.2f}x vs fp16" for g, r in zip(table["GiB"], table["ratio vs float16 cache"],
                                                                    strict=True)],
            textposition="outside",
        )
    )  # fmt: skip
    fig.update_yaxes(range=[0, float(table["GiB"].max()) * 1.25])
    return base_layout(fig, title, "", "KV-cache memory (GiB)")


def attention_effect_figure(effect, title: str = "") -> go.Figure:
    """Left: relative output error vs bits per geometry and eps. Right: top-1 agreement vs bits."""
    from georesolver_core.compression.attention_effect import ATTENTION_GEOMETRIES

    fig = make_subplots(
        rows=1, cols=2, subplot_titles=("relative output error ||o(k_hat) - o(k)|| / ||o(k)||",
                                        "top-1 key agrees with full keys"),
    )  # fmt: skip
    dashes = ["solid", "dash", "dot", "dashdot"]
    for a, gm in enumerate(effect.geometries):
        label = ATTENTION_GEOMETRIES.get(gm, gm)
        for i, eps in enumerate(effect.eps):
            fig.add_trace(
                go.Scatter(x=effect.bits, y=effect.rel_error[a, i], mode="lines+markers",
                           name=f"{label}, eps = {eps:g}", line=dict(color=GEOMETRIES[gm].colour, dash=dashes[i % 4])),
                row=1, col=1,
            )  # fmt: skip
        fig.add_trace(
            go.Scatter(x=effect.bits, y=effect.top1_agreement[a], mode="lines+markers",
                       name=f"{label}: top-1 agreement (any eps)", line=dict(color=GEOMETRIES[gm].colour, width=3)),
            row=1, col=2,
        )  # fmt: skip
    log_axis(fig, "y", row=1, col=1)
    fig.update_yaxes(range=[0, 1.05], row=1, col=2)
    fig.update_xaxes(title_text="bits per code b", row=1, col=1)
    fig.update_xaxes(title_text="bits per code b", row=1, col=2)
    base_layout(fig, title, height=440)
    fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.2, xanchor="left", x=0))
    return fig
