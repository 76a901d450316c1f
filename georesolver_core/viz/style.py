"""Shared look of every figure: one colour per geometry and kernel, one layout helper."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

GEOMETRY_COLORS = {"euclidean": "#1f77b4", "poincare": "#d62728", "sphere": "#2ca02c"}
KERNEL_COLORS = {"ida": "#1f77b4", "hida": "#d62728", "sida": "#2ca02c", "softmax": "#7f7f7f"}
VERDICT_COLORS = {"holds": "#2ca02c", "holds only under conditions": "#ff7f0e", "fails": "#d62728"}


def base_layout(
    fig: go.Figure, title: str = "", x_title: str = "", y_title: str = "", height: int = 420
) -> go.Figure:
    """Title, axis titles, a white template and tight margins; returns the same figure."""
    # The legend sits under the plot: above it, it ran into the title.
    fig.update_layout(
        title=title,
        template="plotly_white",
        height=height,
        margin=dict(l=60, r=20, t=60 if title else 20, b=110),
        legend=dict(orientation="h", yanchor="top", y=-0.2, xanchor="left", x=0),
    )
    if x_title:
        fig.update_xaxes(title_text=x_title)
    if y_title:
        fig.update_yaxes(title_text=y_title)
    return fig


def unit_disk_shapes(radius: float = 1.0) -> list[dict]:
    """The boundary circle of the Poincaré disk (the points at infinity) as a plotly shape."""
    return [
        dict(
            type="circle",
            xref="x",
            yref="y",
            x0=-radius,
            y0=-radius,
            x1=radius,
            y1=radius,
            line=dict(color="black", width=1.5),
        )
    ]


def equal_aspect(fig: go.Figure, lim: float = 1.05) -> go.Figure:
    """Square axes of the same scale on [-lim, lim]: discs look like discs."""
    fig.update_xaxes(range=[-lim, lim], zeroline=False, constrain="domain")
    fig.update_yaxes(range=[-lim, lim], zeroline=False, scaleanchor="x", scaleratio=1)
    return fig


def sphere_surface(opacity: float = 0.15, n: int = 40) -> go.Surface:
    """A translucent unit sphere to draw points and great circles on."""
    u, v = np.meshgrid(np.linspace(0, 2 * np.pi, n), np.linspace(0, np.pi, n // 2))
    return go.Surface(
        x=np.cos(u) * np.sin(v),
        y=np.sin(u) * np.sin(v),
        z=np.cos(v),
        opacity=opacity,
        showscale=False,
        colorscale=[[0, "#bbbbbb"], [1, "#bbbbbb"]],
        hoverinfo="skip",
        name="unit sphere",
    )


PRESENTATION_SCALE = 1.5  # fonts, markers and lines grow by this on a projector


def presentation(fig: go.Figure, scale: float = PRESENTATION_SCALE) -> go.Figure:
    """The same figure for a projector: fonts, marker sizes and line widths times ``scale``, taller.

    Works on a copy; every trace keeps its data. Marker sizes given per point (arrays) are scaled too,
    so sizes that encode a weight keep their proportions.
    """
    out = go.Figure(fig)
    font = out.layout.font.size or 12
    out.update_layout(font=dict(size=round(font * scale)), height=round((out.layout.height or 450) * 1.15))
    out.update_annotations(font_size=round(14 * scale))  # subplot titles are annotations
    for trace in out.data:
        marker = getattr(trace, "marker", None)
        if marker is not None and getattr(marker, "size", None) is not None:
            size = marker.size
            marker.size = (np.asarray(size, dtype=float) * scale).tolist() if np.ndim(size) else size * scale
        line = getattr(trace, "line", None)
        if line is not None and getattr(line, "width", None) is not None and np.ndim(line.width) == 0:
            line.width = line.width * scale
        textfont = getattr(trace, "textfont", None)
        if textfont is not None:
            textfont.size = round((textfont.size or 12) * scale)
    return out
