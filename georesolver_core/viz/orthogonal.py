"""Figures of the Orthogonal residuals page: a vector under each operator, Q's spectrum, norm drift, training."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from georesolver_core.labs.orthogonal import OperatorView
from georesolver_core.viz.style import base_layout, equal_aspect, log_axis, points_trace


def _legend_below(fig: go.Figure) -> go.Figure:
    """The legend under the plot: above it (base_layout's place) it covers titles when entries wrap."""
    fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.2, xanchor="left", x=0))
    return fig


KIND_COLORS = {
    "additive": "#7f7f7f",
    "cayley": "#1f77b4",
    "householder": "#d62728",
    "hybrid": "#9467bd",
    "ddl": "#ff7f0e",
}
OPERATOR_COLORS = {"Cayley Q": "#1f77b4", "Householder H": "#d62728", "hybrid G": "#9467bd", "DDL": "#ff7f0e"}


def _arrow(vec: np.ndarray, name: str, color: str, dash: str | None = None) -> go.Scatter3d:
    return points_trace(
        np.stack([np.zeros(3), vec]),  # (2, 3): from the origin to vec
        mode="lines+markers",
        marker=dict(size=[0, 6], color=color),
        line=dict(color=color, width=6, dash=dash),
        name=f"{name} (|.| = {np.linalg.norm(vec):.3f})",
    )


def operator_figure(view: OperatorView, height: int = 520) -> go.Figure:
    """x and its images under Q, H, the hybrid and DDL in R^3, with the unit circle of Q's rotation plane."""
    fig = go.Figure()
    t = np.linspace(0, 2 * np.pi, 100)
    e1 = view.u / np.linalg.norm(view.u)
    w = view.v - (view.v @ e1) * e1
    e2 = w / np.linalg.norm(w)
    ring = np.outer(np.cos(t), e1) + np.outer(np.sin(t), e2)  # (100, 3) the unit circle of the plane
    fig.add_trace(
        points_trace(
            ring,
            mode="lines",
            line=dict(color="#1f77b4", width=2, dash="dot"),
            name="unit circle of Q's rotation plane span{u, v}",
        )
    )
    fig.add_trace(_arrow(view.k, "reflection normal k", "#d62728", dash="dot"))
    fig.add_trace(_arrow(view.x, "x", "black"))
    for name, img in view.images.items():
        fig.add_trace(_arrow(img, name + " x", OPERATOR_COLORS[name]))
    fig.update_layout(
        scene=dict(
            xaxis=dict(range=[-1.2, 1.2], title="e1"),
            yaxis=dict(range=[-1.2, 1.2], title="e2"),
            zaxis=dict(range=[-1.2, 1.2], title="e3"),
            aspectmode="cube",
        ),
    )
    fig = base_layout(fig, "A unit vector x under each operator (lengths in the legend)", height=height)
    fig.update_layout(legend=dict(orientation="v", yanchor="top", y=-0.02, xanchor="left", x=0))
    return fig


def eigenvalue_figure(view: OperatorView, height: int = 420) -> go.Figure:
    """Q's eigenvalues on the unit circle (closed form and numerical), with -1 marked: Cayley never reaches it."""
    t = np.linspace(0, 2 * np.pi, 200)
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(x=np.cos(t), y=np.sin(t), mode="lines", line=dict(color="#bbbbbb"), name="|lambda| = 1")
    )
    fig.add_trace(
        go.Scatter(
            x=[-1],
            y=[0],
            mode="markers",
            marker=dict(symbol="x", size=14, color="#d62728"),
            name="-1 (unreachable for finite beta)",
        )
    )
    ev, num = view.eigenvalues, view.eigenvalues_numeric
    fig.add_trace(
        go.Scatter(
            x=ev.real,
            y=ev.imag,
            mode="markers",
            marker=dict(size=14, color="#1f77b4", opacity=0.5),
            name=f"closed form e^(+-i theta), theta = {np.degrees(view.theta):.2f} deg",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=num.real,
            y=num.imag,
            mode="markers",
            marker=dict(size=6, color="black"),
            name="numerical (torch.linalg.eigvals)",
        )
    )
    equal_aspect(fig, 1.3)
    return _legend_below(
        base_layout(fig, "Spectrum of Q on the unit circle", "Re lambda", "Im lambda", height=height)
    )


def norm_drift_figure(
    depths: list[int],
    drift: dict[str, list[float]],
    height: int = 420,
    preserved: dict[str, list[float]] | None = None,
) -> go.Figure:
    """Mean |x_L| / |x_0| against depth for each residual kind (log-log); ``preserved`` (dashed, same colour):
    the product of the shortcuts' own gains, what an orthogonal shortcut keeps at 1 whatever the branch."""
    fig = go.Figure()
    for kind, ratios in drift.items():
        fig.add_trace(
            go.Scatter(x=depths, y=ratios, mode="lines+markers", name=kind, line=dict(color=KIND_COLORS.get(kind)))
        )
    for kind, gains in (preserved or {}).items():
        fig.add_trace(
            go.Scatter(
                x=depths,
                y=gains,
                mode="lines",
                name=f"{kind}: shortcut gain",
                line=dict(color=KIND_COLORS.get(kind), dash="dash", width=1.5),
                legendgroup="gain",
            )
        )
    log_axis(fig, "x")
    log_axis(fig, "y")
    return base_layout(
        fig, "Norm through a stack of untrained layers", "depth L (layers)", "mean |x_L| / |x_0|", height=height
    )


def training_figure(histories: list[dict], metric: str = "cosine", height: int = 420) -> go.Figure:
    """One thin line per (kind, seed) run and a thick line for the mean over seeds, against the Adam step.

    ``histories``: dicts with keys kind, seed and history (step, loss, cosine, gate lists)."""
    fig = go.Figure()
    kinds = list(dict.fromkeys(h["kind"] for h in histories))
    for kind in kinds:
        runs = [h for h in histories if h["kind"] == kind]
        color = KIND_COLORS.get(kind)
        for h in runs:
            fig.add_trace(
                go.Scatter(
                    x=h["history"]["step"],
                    y=h["history"][metric],
                    mode="lines",
                    line=dict(color=color, width=1),
                    opacity=0.35,
                    showlegend=False,
                    name=f"{kind} seed {h['seed']}",
                )
            )
        n = min(len(h["history"]["step"]) for h in runs)
        if n and all(np.isfinite(h["history"][metric][:n]).all() for h in runs):
            mean = np.mean([h["history"][metric][:n] for h in runs], axis=0)
            fig.add_trace(
                go.Scatter(
                    x=runs[0]["history"]["step"][:n],
                    y=mean,
                    mode="lines",
                    line=dict(color=color, width=3),
                    name=f"{kind} (mean of {len(runs)} seeds)",
                )
            )
    labels = {"cosine": "cosine(output, target)", "loss": "squared error", "gate": "gate gamma"}
    if metric == "loss":
        log_axis(fig, "y")
    return _legend_below(
        base_layout(fig, f"Training: {labels[metric]}", "Adam step", labels[metric], height=height)
    )
