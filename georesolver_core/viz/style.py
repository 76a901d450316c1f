"""Shared look of every figure: one colour per kernel and per geometry (their registry entries'), the layout and log-axis helpers."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from georesolver_core.attention.layer import ATTENTION

VERDICT_COLORS = {"holds": "#2ca02c", "holds only under conditions": "#ff7f0e", "fails": "#d62728"}


def white_template(fig: go.Figure) -> go.Figure:
    """Put plotly's ``plotly_white`` template on ``fig``; returns the same figure.

    ``update_layout(template="plotly_white")`` validates the whole template (trace defaults for two dozen
    trace types) on every figure: about four fifths of the time ``base_layout`` took, and pages draw dozens
    of figures on a first visit. The registered template is valid already, so it is assigned the way plotly
    assigns its default template to a new figure (``BaseFigure._initialize_layout_template``): with
    validation off for that one assignment. The figure gets its own copy, so it can still be changed.
    """
    layout = fig.layout
    layout._validate = False
    try:
        layout.template = pio.templates["plotly_white"]
    finally:
        layout._validate = fig._validate
    return fig


def kernel_colour(kernel: str, default: str | None = "#444444") -> str | None:
    """The figure colour of an ``ATTENTION`` entry (its ``colour``), or of a benchmark row: "<key>-naive"
    shares its entry's, "sdpa" the softmax entry's. ``default`` where there is no entry or it has no colour."""
    base = kernel.removesuffix("-naive")
    kind = ATTENTION.get("softmax" if base == "sdpa" else base)
    return default if kind is None or kind.colour is None else kind.colour


def base_layout(
    fig: go.Figure, title: str = "", x_title: str = "", y_title: str = "", height: int = 420
) -> go.Figure:
    """Title, axis titles, a white template and tight margins; returns the same figure."""
    # The legend sits under the plot: above it, it ran into the title.
    white_template(fig).update_layout(
        title=title,
        height=height,
        margin=dict(l=60, r=20, t=60 if title else 20, b=110),
        legend=dict(orientation="h", yanchor="top", y=-0.2, xanchor="left", x=0),
    )
    if x_title:
        fig.update_xaxes(title_text=x_title)
    if y_title:
        fig.update_yaxes(title_text=y_title)
    return fig


MAX_DECADE_LABELS = 6  # more labelled powers of ten than this collide on a third-of-a-page subplot


def _log_extent(fig: go.Figure, axis: str, ref: str, given_range) -> tuple[float, float] | None:
    """log10 of the smallest and largest positive value the traces on axis ``ref`` ("x", "y2", ...) draw."""
    if given_range is not None:  # a log axis range is given in log10 units
        return min(map(float, given_range)), max(map(float, given_range))
    values = []
    for trace in fig.data:
        if (getattr(trace, f"{axis}axis", None) or axis) != ref or getattr(trace, axis, None) is None:
            continue
        try:
            v = np.asarray(getattr(trace, axis), dtype=float).ravel()
        except (TypeError, ValueError):  # category labels: no span to measure
            continue
        values.append(v[np.isfinite(v) & (v > 0)])
    v = np.concatenate(values) if values else np.empty(0)
    return (float(np.log10(v.min())), float(np.log10(v.max()))) if v.size else None


def _number(v: float) -> str:
    """A tick label in full: 0.02, 500, or 2·10^-5 (as plotly writes powers) when digits would pile up."""
    if 1e-3 <= v < 1e4:
        return f"{v:g}"
    mantissa, exponent = f"{v:.0e}".split("e")
    power = f"10<sup>{int(exponent)}</sup>".replace("-", "\u2212")
    return power if mantissa == "1" else f"{mantissa}·{power}"


def _one_two_five(lo: float, hi: float) -> list[float]:
    """1, 2 and 5 times the powers of ten from 10^lo to 10^hi (log10 units), a little margin each side."""
    marks = [m * 10.0**k for k in range(math.floor(lo), math.ceil(hi) + 1) for m in (1, 2, 5)]
    return [v for v in marks if lo - 0.1 <= math.log10(v) <= hi + 0.1]


ANIMATION_SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0)  # playback speed choices: frame durations are divided by it


def frame_ms(base_ms: float, speed: float) -> int:
    """A frame duration of an animation played at ``speed`` times its normal rate (``base_ms`` at 1)."""
    if not (isinstance(speed, int | float) and math.isfinite(speed) and 0.05 <= speed <= 20):
        raise ValueError(f"speed must be a number in [0.05, 20] (got {speed!r})")
    return max(1, round(base_ms / speed))


def count_dtick(last: int, most: int = 8) -> int:
    """An integer 1-2-5 tick spacing giving at most about ``most`` ticks from 0 to ``last`` (a count or a
    position: no half-token ticks)."""
    tick = 1
    while last / tick > most:
        tick = tick * 5 // 2 if str(tick)[0] == "2" else tick * 2
    return tick


def log_axis(fig: go.Figure, axis: str = "x", **update_kwargs) -> None:
    """Make the ``axis`` ("x" or "y") axes of ``fig`` logarithmic with labels a room can read.

    Plotly labels the digits 2 and 5 between decades in small type; on a narrow figure over a few
    decades they run into each other. Here, per axis, from the decades its traces span (call it after
    adding them): 1, 2, 5 x 10^k are labelled in full where 3 to ``MAX_DECADE_LABELS`` of them fall in
    the range; over more decades only powers of ten are labelled (every k-th, so at most
    ``MAX_DECADE_LABELS``), with unlabelled minor ticks between; over a small fraction of a decade
    plotly's own ticks stay. ``update_kwargs`` go to every selected axis; ``row``, ``col`` and
    ``secondary_y`` select the axes as in ``fig.update_xaxes``.
    """
    if axis not in ("x", "y"):
        raise ValueError(f"axis must be 'x' or 'y' (got {axis!r})")
    where = {k: update_kwargs.pop(k) for k in ("row", "col", "secondary_y") if k in update_kwargs}
    for ax in getattr(fig, f"select_{axis}axes")(**where):
        ref = axis + ax.plotly_name[len("xaxis") :]  # layout name "yaxis2" -> trace reference "y2"
        extent = _log_extent(fig, axis, ref, update_kwargs.get("range", ax.range))
        span = extent[1] - extent[0] if extent is not None else 0.0
        marks = _one_two_five(*extent) if extent is not None and span < 3 else []
        ticks: dict = {}
        # a caller's tickformat formats plotly's own ticks: written labels would be blanked by it
        if 3 <= len(marks) <= MAX_DECADE_LABELS and "tickformat" not in update_kwargs:
            ticks = dict(tickmode="array", tickvals=marks, ticktext=[_number(v) for v in marks])
        elif span >= 1:
            ticks = dict(dtick=math.ceil(span / MAX_DECADE_LABELS))
        if ticks:  # inside the plot: outside, a minor tick at 1 or 10 runs into the label there
            ticks["minor"] = dict(ticks="inside", ticklen=4, dtick="D1" if ticks.get("dtick", 1) == 1 else 1)
        ax.update(type="log", exponentformat="power", **ticks, **update_kwargs)


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


def points_trace(points, **trace) -> go.Scatter | go.Scatter3d:
    """The rows of ``points`` (n, 2) or (n, 3) as one scatter trace, 2-D or 3-D by their width.

    ``trace`` holds the other settings (mode, marker, name, ...). NaN rows break a line into pieces.
    """
    p = np.asarray(points, dtype=float)
    if p.ndim != 2 or p.shape[1] not in (2, 3):
        raise ValueError(f"points must have shape (n, 2) or (n, 3) (got {p.shape})")
    if p.shape[1] == 3:
        return go.Scatter3d(x=p[:, 0], y=p[:, 1], z=p[:, 2], **trace)
    return go.Scatter(x=p[:, 0], y=p[:, 1], **trace)


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


def sphere_wireframe(parallels: int = 5, meridians: int = 8, points: int = 49) -> dict:
    """The unit sphere as a light grid of ``parallels`` circles of latitude and ``meridians`` half great circles.

    One 3-D line trace (circles separated by NaN rows), as a plain dict. A browser draws it in a fraction
    of the time of ``sphere_surface``'s shaded mesh, which matters for figures redrawn on every slider move.
    """
    t = np.linspace(0, 2 * np.pi, points)
    circles = []
    for lat in np.linspace(-np.pi / 2, np.pi / 2, parallels + 2)[1:-1]:  # the poles are points, not circles
        circles.append(
            np.stack([np.cos(lat) * np.cos(t), np.cos(lat) * np.sin(t), np.full_like(t, np.sin(lat))], 1)
        )
    half = np.linspace(-np.pi / 2, np.pi / 2, points // 2 + 1)
    for lon in np.linspace(0, 2 * np.pi, meridians, endpoint=False):
        circles.append(np.stack([np.cos(half) * np.cos(lon), np.cos(half) * np.sin(lon), np.sin(half)], 1))
    gap = np.full((1, 3), np.nan)
    xyz = np.concatenate([part for c in circles for part in (c, gap)])  # (rows, 3), NaN rows break the line
    return dict(
        type="scatter3d",
        x=xyz[:, 0],
        y=xyz[:, 1],
        z=xyz[:, 2],
        mode="lines",
        line=dict(color="#c8c8c8", width=1),
        hoverinfo="skip",
        showlegend=False,
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
