"""Figures of the Landscapes lab: PL profiles and sweeps, 2-D landscapes with animated descent,
Hessian spectra, trained-model slices. Pure functions: data in, ``go.Figure`` out."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from georesolver_core.claims.registry import fit_loglog_slope
from georesolver_core.viz.style import KERNEL_COLORS, base_layout, unit_disk_shapes

KERNEL_LABELS = {"ida": "inverse distance (IDA)", "softmax": "softmax"}
PATH_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
CHART_TITLES = {
    "euclidean": ("x", "y"),
    "poincare": ("ball coordinate x_1", "ball coordinate x_2"),
    "sphere": ("normal coordinate u at the north pole (rad)", "normal coordinate v (rad)"),
}


def _kcolor(kernel: str) -> str:
    return KERNEL_COLORS.get(kernel, "#333333")


def pl_profile_figure(profiles: list, height: int = 640) -> go.Figure:
    """L, |grad L|^2 and the PL ratio along the two-key geodesic, one colour per kernel.

    ``profiles``: PLProfile objects of one geometry/eps/delta. The basin is shaded; the measured
    mu of each kernel is a dashed line in the bottom panel.
    """
    fig = make_subplots(
        rows=3,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.06,
        subplot_titles=(
            "loss L = (1 - W_1)^2",
            "squared Riemannian gradient |grad L|^2",
            "PL ratio |grad L|^2 / (2 (L - L*))",
        ),
    )
    for p in profiles:
        col = _kcolor(p.kernel)
        name = KERNEL_LABELS.get(p.kernel, p.kernel)
        hover = "s = %{x:.4g}<br>%{y:.4g}<extra>" + name + "</extra>"
        fig.add_trace(
            go.Scatter(
                x=p.s, y=p.loss, name=name, line=dict(color=col), legendgroup=p.kernel, hovertemplate=hover
            ),
            row=1,
            col=1,
        )
        fig.add_trace(
            go.Scatter(
                x=p.s,
                y=p.grad_sq,
                showlegend=False,
                line=dict(color=col),
                legendgroup=p.kernel,
                hovertemplate=hover,
            ),
            row=2,
            col=1,
        )
        fig.add_trace(
            go.Scatter(
                x=p.s, y=p.ratio, showlegend=False, line=dict(color=col), legendgroup=p.kernel, hovertemplate=hover
            ),
            row=3,
            col=1,
        )
        fig.add_trace(
            go.Scatter(
                x=[p.s_basin[0], p.s_basin[-1]],
                y=[p.mu, p.mu],
                mode="lines",
                name=f"mu ({'IDA' if p.kernel == 'ida' else p.kernel}) = {p.mu:.3g}",
                line=dict(color=col, dash="dash"),
                legendgroup=p.kernel,
                hovertemplate=f"measured mu = {p.mu:.4g} at s = {p.s_mu:.4g}<extra>{name}</extra>",
            ),
            row=3,
            col=1,
        )
    if profiles:
        p = profiles[0]
        for row in (1, 2, 3):
            fig.add_vrect(
                x0=p.s_basin[0], x1=p.s_basin[-1], fillcolor="#cccccc", opacity=0.25, line_width=0, row=row, col=1
            )
            for s_key in (0.0, p.delta):
                fig.add_vline(x=s_key, line=dict(color="#555555", dash="dot", width=1), row=row, col=1)
        for s_key, label in ((0.0, "key 1"), (p.delta, "key 2")):
            fig.add_annotation(
                x=s_key, y=0.02, yref="y domain", text=label, showarrow=False, xanchor="left", row=1, col=1
            )
    fig.update_yaxes(type="log", row=2, col=1, exponentformat="power")
    fig.update_yaxes(type="log", row=3, col=1, exponentformat="power")
    base_layout(fig, "", "", "", height)
    fig.update_xaxes(title_text="arc length s along the geodesic from key 1 (key 2 at s = Delta)", row=3, col=1)
    fig.update_yaxes(title_text="L (unitless)", row=1, col=1)
    fig.update_yaxes(title_text="|grad L|^2 (per unit length^2)", row=2, col=1)
    fig.update_yaxes(title_text="ratio (per unit length^2)", row=3, col=1)
    return fig


def fitted_shape(x, measured, shape) -> np.ndarray:
    """A Theta-shape scaled to the measurement: C * shape with log C = mean(log measured - log shape)."""
    m, s = np.asarray(measured, dtype=float), np.asarray(shape, dtype=float)
    keep = (m > 0) & (s > 0) & np.isfinite(m) & np.isfinite(s)
    if not keep.any():
        return np.full_like(s, np.nan)
    return s * math.exp(float(np.mean(np.log(m[keep]) - np.log(s[keep]))))


def sweep_figure(
    x,
    measured: dict,
    predicted: dict,
    *,
    x_label: str,
    y_label: str,
    title: str = "",
    height: int = 380,
) -> go.Figure:
    """Log-log: measured series (solid, markers; legend shows the fitted exponent) against the paper's
    Theta shapes (dashed, constant fitted to the measurement)."""
    x = np.asarray(x, dtype=float)
    fig = go.Figure()
    for name, y in measured.items():
        y = np.asarray(y, dtype=float)
        kernel = "softmax" if "softmax" in name else "ida"
        try:
            slope = f", slope {fit_loglog_slope(x, y):.2f}"
        except ValueError:
            slope = ""
        fig.add_trace(
            go.Scatter(
                x=x,
                y=y,
                mode="lines+markers",
                name=f"{name} (measured{slope})",
                line=dict(color=_kcolor(kernel)),
                hovertemplate="x = %{x:.4g}<br>mu = %{y:.4g}<extra>" + name + "</extra>",
            )
        )
    for name, (shape, against) in predicted.items():
        kernel = "softmax" if "softmax" in name else "ida"
        fig.add_trace(
            go.Scatter(
                x=x,
                y=fitted_shape(x, measured[against], shape),
                mode="lines",
                name=f"{name} (paper, constant fitted)",
                line=dict(color=_kcolor(kernel), dash="dash"),
                hovertemplate="x = %{x:.4g}<br>%{y:.4g}<extra>" + name + "</extra>",
            )
        )
    base_layout(fig, title, x_label, y_label, height)
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log", exponentformat="power")
    return fig


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


def landscape_figure(
    grid,
    paths=None,
    outcomes: list[str] | None = None,
    *,
    n_frames: int = 30,
    title: str = "",
    height: int = 640,
) -> go.Figure:
    """3-D surface (left) and contour map (right) of a LandscapeGrid; descent paths overlaid and
    animated with plotly frames (Play / slider). Keys are markers, the target key a star."""
    xt, yt = CHART_TITLES.get(grid.geometry, ("u", "v"))
    fig = make_subplots(
        rows=1,
        cols=2,
        specs=[[{"type": "scene"}, {"type": "xy"}]],
        column_widths=[0.5, 0.5],
        horizontal_spacing=0.06,
        subplot_titles=("surface", "contour map"),
    )
    z = grid.loss
    hover = xt + " %{x:.3f}<br>" + yt + " %{y:.3f}<br>L %{z:.4g}<extra></extra>"
    fig.add_trace(
        go.Surface(
            x=grid.u, y=grid.v, z=z, colorscale="Viridis", showscale=False, hovertemplate=hover, name="loss"
        ),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Contour(
            x=grid.u,
            y=grid.v,
            z=z,
            colorscale="Viridis",
            ncontours=30,
            colorbar=dict(title=dict(text="L"), x=1.02),
            hovertemplate=hover,
            name="loss",
        ),
        row=1,
        col=2,
    )
    # Keys: hover the loss at the nearest grid node so the two panels agree.
    kuv = grid.keys_uv
    is_t = np.arange(kuv.shape[0]) == grid.target
    for mask, label, symbol in ((is_t, "target key", "star"), (~is_t, "other keys", "x")):
        if not mask.any():
            continue
        fig.add_trace(
            go.Scatter(
                x=kuv[mask, 0],
                y=kuv[mask, 1],
                mode="markers",
                name=label,
                marker=dict(
                    symbol=symbol, size=13 if symbol == "star" else 9, color="white", line=dict(width=1.5)
                ),
                hovertemplate=label + " (%{x:.3f}, %{y:.3f})<extra></extra>",
            ),
            row=1,
            col=2,
        )
    if grid.minima_uv.shape[0]:
        fig.add_trace(
            go.Scatter(
                x=grid.minima_uv[:, 0],
                y=grid.minima_uv[:, 1],
                mode="markers",
                name="grid local minima",
                marker=dict(
                    symbol="circle-open",
                    size=14,
                    color=["#2ca02c" if g else "#d62728" for g in grid.minima_global],
                    line=dict(width=2),
                ),
                text=["global" if g else "spurious" for g in grid.minima_global],
                hovertemplate="%{text} minimum (%{x:.3f}, %{y:.3f})<extra></extra>",
            ),
            row=1,
            col=2,
        )
    if grid.geometry == "poincare":
        for shape in unit_disk_shapes(1.0 / math.sqrt(grid.c)):
            shape.update(xref="x", yref="y")
            fig.add_shape(shape)
    lim = float(grid.u[-1])
    fig.update_xaxes(range=[-lim, lim], title_text=xt, row=1, col=2)
    fig.update_yaxes(range=[-lim, lim], title_text=yt, scaleanchor="x", scaleratio=1, row=1, col=2)
    fig.update_scenes(
        xaxis_title=xt.split(" (")[0], yaxis_title=yt.split(" (")[0], zaxis_title="loss L", aspectmode="cube"
    )
    if paths is not None:
        _add_paths(fig, grid, paths, outcomes, n_frames)
    base_layout(fig, title, "", "", height)
    below = -0.2 if paths is not None else -0.05
    fig.update_layout(
        legend=dict(orientation="h", yanchor="top", y=below, xanchor="left", x=0),
        margin=dict(b=170 if paths is not None else 80),
    )
    return fig


def _add_paths(fig: go.Figure, grid, paths, outcomes, n_frames: int) -> None:
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
    last = int(steps[-1])

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

    now = moving(last)
    first = len(fig.data)
    fig.add_trace(
        go.Scatter(
            **now[0], mode="lines", line=dict(color="white", width=2.5), showlegend=False, hoverinfo="skip"
        ),
        row=1,
        col=2,
    )
    fig.add_trace(
        go.Scatter(
            **now[1],
            mode="markers",
            marker=dict(color=colors, size=9, line=dict(color="black", width=1)),
            name="current step",
            text=labels,
            hovertemplate="%{text}<extra></extra>",
        ),
        row=1,
        col=2,
    )
    fig.add_trace(
        go.Scatter3d(
            **now[2], mode="lines", line=dict(color="white", width=5), showlegend=False, hoverinfo="skip"
        ),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Scatter3d(
            **now[3],
            mode="markers",
            marker=dict(color=colors, size=5),
            showlegend=False,
            text=labels,
            hovertemplate="%{text}<extra></extra>",
        ),
        row=1,
        col=1,
    )
    idx = list(range(first, first + 4))
    fig.frames = [dict(data=moving(int(s)), traces=idx, name=str(int(s))) for s in steps]
    # Controls under the plots (Play / Pause left of the step slider), the legend under them.
    fig.update_layout(
        updatemenus=[
            dict(
                type="buttons",
                direction="left",
                showactive=False,
                x=0.0,
                y=-0.04,
                xanchor="left",
                yanchor="top",
                pad=dict(t=0, r=10),
                buttons=[
                    dict(
                        label="Play descent",
                        method="animate",
                        args=[
                            None,
                            dict(frame=dict(duration=80, redraw=True), fromcurrent=False, mode="immediate"),
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
                y=-0.02,
                yanchor="top",
                currentvalue=dict(prefix="descent step "),
                pad=dict(t=0),
                steps=[
                    dict(
                        label=str(int(s)),
                        method="animate",
                        args=[[str(int(s))], dict(frame=dict(duration=0, redraw=True), mode="immediate")],
                    )
                    for s in steps
                ],
            )
        ],
    )


def hessian_figure(spectra: dict, height: int = 500) -> go.Figure:
    """Left: every |eigenvalue| against n (open markers: negative curvature). Right: the largest
    |eigenvalue| (curvature) and the spread max|lambda| / min|lambda| against n.

    ``spectra``: kernel -> list of HessianSpectrum over n."""
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.12,
        subplot_titles=("|eigenvalues| of the Riemannian Hessian", "curvature and spread"),
    )
    for kernel, specs in spectra.items():
        col = _kcolor(kernel)
        name = KERNEL_LABELS.get(kernel, kernel)
        xs, ys, neg = [], [], []
        for s in specs:
            live = np.abs(s.eigenvalues) > 1e-9 * s.curvature  # flat directions have no place on a log axis
            xs += [s.n] * int(live.sum())
            ys += list(np.abs(s.eigenvalues[live]))
            neg += list(s.eigenvalues[live] < 0)
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="markers",
                name=f"{name}: eigenvalues (flat ones omitted)",
                marker=dict(color=col, symbol=["circle-open" if v else "circle" for v in neg], size=7),
                text=["negative" if v else "positive" for v in neg],
                hovertemplate="n = %{x}<br>|lambda| = %{y:.4g} (%{text})<extra>" + name + "</extra>",
            ),
            row=1,
            col=1,
        )
        ns = [s.n for s in specs]
        fig.add_trace(
            go.Scatter(
                x=ns,
                y=[s.curvature for s in specs],
                mode="lines+markers",
                name=f"{name}: curvature max|lambda|",
                line=dict(color=col),
                hovertemplate="n = %{x}<br>%{y:.4g}<extra>curvature</extra>",
            ),
            row=1,
            col=2,
        )
        fig.add_trace(
            go.Scatter(
                x=ns,
                y=[s.spread for s in specs],
                mode="lines+markers",
                name=f"{name}: spread",
                line=dict(color=col, dash="dash"),
                hovertemplate="n = %{x}<br>%{y:.4g}<extra>spread</extra>",
            ),
            row=1,
            col=2,
        )
    base_layout(fig, "", "", "", height)
    fig.update_layout(
        legend=dict(orientation="h", yanchor="top", y=-0.22, xanchor="left", x=0), margin=dict(b=130)
    )
    for c in (1, 2):
        fig.update_xaxes(type="log", title_text="number of keys n", row=1, col=c)
        fig.update_yaxes(type="log", exponentformat="power", row=1, col=c)
    fig.update_yaxes(title_text="|lambda| (per unit length^2)", row=1, col=1)
    fig.update_yaxes(title_text="curvature (per unit length^2) / spread (ratio)", row=1, col=2)
    return fig


def model_slice_figure(sl, title: str = "", height: int = 540) -> go.Figure:
    """Surface and contour of a trained model's loss over two filter-normalised directions."""
    fig = make_subplots(
        rows=1, cols=2, specs=[[{"type": "scene"}, {"type": "xy"}]], subplot_titles=("surface", "contour map")
    )
    hover = "a %{x:.3f}<br>b %{y:.3f}<br>loss %{z:.4g}<extra></extra>"
    fig.add_trace(
        go.Surface(x=sl.a, y=sl.b, z=sl.loss, colorscale="Viridis", showscale=False, hovertemplate=hover),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Contour(
            x=sl.a,
            y=sl.b,
            z=sl.loss,
            colorscale="Viridis",
            ncontours=25,
            colorbar=dict(title=dict(text="loss")),
            hovertemplate=hover,
        ),
        row=1,
        col=2,
    )
    fig.add_trace(
        go.Scatter(
            x=[0.0],
            y=[0.0],
            mode="markers",
            name="trained parameters",
            marker=dict(symbol="star", size=13, color="white", line=dict(width=1.5)),
            hovertemplate=f"trained model, loss {sl.centre_loss:.4g}<extra></extra>",
        ),
        row=1,
        col=2,
    )
    fig.update_scenes(xaxis_title="direction 1 (a)", yaxis_title="direction 2 (b)", zaxis_title="cross-entropy")
    base_layout(fig, title, "", "", height)
    fig.update_xaxes(title_text="step a along direction 1 (filter-normalised units)", row=1, col=2)
    fig.update_yaxes(title_text="step b along direction 2", row=1, col=2)
    return fig


def history_figure(history: list[float], height: int = 260) -> go.Figure:
    """Training loss per step."""
    fig = go.Figure(
        go.Scatter(
            y=history,
            mode="lines",
            name="training loss",
            hovertemplate="step %{x}<br>loss %{y:.4g}<extra></extra>",
        )
    )
    base_layout(fig, "", "training step", "cross-entropy (nats)", height)
    fig.update_yaxes(type="log")
    return fig
