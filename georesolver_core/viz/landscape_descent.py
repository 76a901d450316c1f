"""Descent paths drawn over a landscape figure and animated with plotly frames (Play / Pause and a
step slider). Builds on the two-panel figure of ``landscape_surface``: surface in column 1, contour
map in column 2."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from georesolver_core.viz.style import frame_ms

PATH_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"]


def _frame_steps(n_steps: int, n_frames: int) -> np.ndarray:
    return np.unique(np.linspace(0, n_steps, max(2, n_frames)).round().astype(int))


def _trails(uv: np.ndarray, z: np.ndarray, steps: np.ndarray, upto: int):
    """Every path through the frame steps up to ``upto``, as one polyline with NaN gaps (one trace
    animates them all; numpy arrays with NaN keep the figure small and quick to build)."""
    k = int(np.searchsorted(steps, upto, side="right"))
    sel = steps[:k]
    n_s = uv.shape[1]
    xs = np.full((n_s, k + 1), np.nan)
    ys = np.full((n_s, k + 1), np.nan)
    zs = np.full((n_s, k + 1), np.nan)
    xs[:, :k] = uv[sel, :, 0].T
    ys[:, :k] = uv[sel, :, 1].T
    zs[:, :k] = z[sel].T
    return xs.ravel(), ys.ravel(), zs.ravel()


def _animation_controls(steps: np.ndarray, speed: float = 1.0) -> dict:
    """Play / Pause left of the step slider, both under the plots; Play shows a frame every 80 ms / speed."""
    return dict(
        updatemenus=[
            dict(
                type="buttons",
                direction="left",
                showactive=False,
                x=0.0,
                y=-0.14,  # under the x-axis titles, not on them
                xanchor="left",
                yanchor="top",
                pad=dict(t=0, r=10),
                buttons=[
                    dict(
                        label="Play descent",
                        method="animate",
                        args=[
                            None,
                            # transition 0: with plotly's default 500 ms transition, only the animated
                            # scatter traces are redrawn and the filled contour of their subplot is dropped
                            dict(
                                frame=dict(duration=frame_ms(80, speed), redraw=True),
                                transition=dict(duration=0),
                                fromcurrent=False,
                                mode="immediate",
                            ),
                        ],
                    ),
                    dict(
                        label="Pause",
                        method="animate",
                        args=[[None], dict(frame=dict(duration=0, redraw=False), mode="immediate")],
                    ),
                ],
            )
        ],
        sliders=[
            dict(
                active=len(steps) - 1,
                x=0.2,
                len=0.8,
                y=-0.12,
                yanchor="top",
                currentvalue=dict(prefix="descent step "),
                pad=dict(t=0),
                steps=[
                    dict(
                        label=str(int(s)),
                        method="animate",
                        args=[
                            [str(int(s))],
                            dict(
                                frame=dict(duration=0, redraw=True), transition=dict(duration=0), mode="immediate"
                            ),
                        ],
                    )
                    for s in steps
                ],
            )
        ],
    )


def add_descent_paths(fig: go.Figure, grid, paths, outcomes, n_frames: int, *, speed: float = 1.0) -> None:
    """Overlay the DescentPaths on a landscape figure of ``grid``: faint full paths with one legend
    entry per start, and animated trails and heads on both panels (played at ``speed``, 1 = normal)."""
    uv, loss = paths.uv, paths.loss  # (T + 1, S, 2), (T + 1, S)
    lim = float(grid.u[-1])
    # Clip what is drawn to the patch; the loss is lifted a little so the path shows above the surface.
    uvc = np.clip(uv, -lim, lim)
    zc = loss + 0.01 * float(np.nanmax(grid.loss) - np.nanmin(grid.loss))
    n_s = uv.shape[1]
    colors = [PATH_COLORS[i % len(PATH_COLORS)] for i in range(n_s)]
    labels = [f"start {i + 1}: {outcomes[i]}" if outcomes else f"start {i + 1}" for i in range(n_s)]
    for i in range(n_s):  # faint full paths, one legend entry each
        fig.add_trace(
            go.Scatter(
                x=uvc[:, i, 0],
                y=uvc[:, i, 1],
                mode="lines",
                name=labels[i],
                line=dict(color=colors[i], width=1, dash="dot"),
                hovertemplate=labels[i] + "<br>step %{text}<extra></extra>",
                text=np.arange(uv.shape[0]),
            ),
            row=1,
            col=2,
        )
    steps = _frame_steps(uv.shape[0] - 1, n_frames)

    def moving(upto: int) -> list[dict]:
        """What changes from frame to frame: the coordinates of the four animated traces. Frames
        carry only these (plotly merges them into the traces), which keeps building them cheap."""
        xs, ys, zs = _trails(uvc, zc, steps, upto)
        heads = uvc[upto]  # (S, 2)
        return [
            dict(type="scatter", x=xs, y=ys),
            dict(type="scatter", x=heads[:, 0], y=heads[:, 1]),
            dict(type="scatter3d", x=xs, y=ys, z=zs),
            dict(type="scatter3d", x=heads[:, 0], y=heads[:, 1], z=zc[upto]),
        ]

    now = moving(int(steps[-1]))
    first = len(fig.data)
    # Trail and head on the contour map (column 2), then on the surface (column 1).
    heads = (
        dict(marker=dict(color=colors, size=9, line=dict(color="black", width=1)), name="current step"),
        dict(marker=dict(color=colors, size=5), showlegend=False),
    )
    for trace, col, width, trail, head, head_style in (
        (go.Scatter, 2, 2.5, now[0], now[1], heads[0]),
        (go.Scatter3d, 1, 5, now[2], now[3], heads[1]),
    ):
        fig.add_trace(
            trace(
                # dark and thin: a white trail hid the coloured paths and the target star under it
                **trail,
                mode="lines",
                line=dict(color="rgba(20, 20, 20, 0.6)", width=width * 0.6),
                showlegend=False,
                hoverinfo="skip",
            ),
            row=1,
            col=col,
        )
        fig.add_trace(
            trace(**head, mode="markers", text=labels, hovertemplate="%{text}<extra></extra>", **head_style),
            row=1,
            col=col,
        )
    idx = list(range(first, first + 4))
    # While a frame plays, plotly.js redraws only the traces a frame names and drops a filled contour it
    # does not name, lines and all, until the next full redraw (an image backdrop kept the colours but not
    # the lines, and showed white seams between its cells). Every frame names the contour too, so it is
    # redrawn whole with the paths.
    contours = [i for i, trace in enumerate(fig.data) if trace.type == "contour"]
    still = [dict(type="contour", z=fig.data[i].z, x=fig.data[i].x, y=fig.data[i].y) for i in contours]
    fig.frames = [dict(data=moving(int(s)) + still, traces=idx + contours, name=str(int(s))) for s in steps]
    fig.update_layout(**_animation_controls(steps, speed))
