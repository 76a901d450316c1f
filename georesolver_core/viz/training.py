"""Figures of the Training lab: live curves of several runs, HyperGate heatmaps, Theorem 7.1 per token."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from georesolver_core.model.gate import GateBound, GateValues
from georesolver_core.viz.style import base_layout, count_dtick, log_axis

PALETTE = qualitative.Plotly


@dataclass(frozen=True)
class Curve:
    """One run's history, ready to draw."""

    name: str  # legend entry, e.g. "#2 GeoResolver (ida)"
    steps: list[int]
    loss: list[float]  # training loss per step
    eval_steps: list[int]
    test_accuracy: list[float]


def curve_from_history(name: str, history: list[dict]) -> Curve:
    evals = [r for r in history if r.get("test_accuracy") is not None]
    return Curve(
        name,
        [r["step"] for r in history],
        [r["loss"] for r in history],
        [r["step"] for r in evals],
        [r["test_accuracy"] for r in evals],
    )


def curves_figure(curves: list[Curve], height: int = 380) -> go.Figure:
    """Training loss (log scale) and test accuracy against the step, one colour per run."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("training loss", "test accuracy"), horizontal_spacing=0.1)
    for i, c in enumerate(curves):
        color = PALETTE[i % len(PALETTE)]
        fig.add_trace(
            go.Scatter(x=c.steps, y=c.loss, name=c.name, mode="lines", line=dict(color=color), legendgroup=c.name),
            row=1,
            col=1,
        )
        fig.add_trace(
            go.Scatter(
                x=c.eval_steps, y=c.test_accuracy, name=c.name, mode="lines+markers", line=dict(color=color),
                legendgroup=c.name, showlegend=False,
            ),
            row=1,
            col=2,
        )  # fmt: skip
    base_layout(fig, height=height)
    fig.update_xaxes(title_text="optimiser step")
    log_axis(fig, "y", title_text="cross-entropy (nats)", row=1, col=1)
    fig.update_yaxes(title_text="accuracy (fraction)", range=[0, 1.02], row=1, col=2)
    return fig


def gate_figure(values: GateValues, example: int = 0, layer: int = 0) -> go.Figure:
    """One example's gates: dimension gate G_i (positions x channels), token gate beta_i, head gates kappa_h."""
    dim = values.dim_gate[example].numpy()  # (T, C)
    beta = values.beta[example].numpy()  # (T,)
    kappa = values.kappa.numpy()  # (nh,)
    fig = make_subplots(
        rows=1, cols=3, column_widths=[0.7, 0.12, 0.18], horizontal_spacing=0.06,
        subplot_titles=(f"dimension gate diag G_i (block {layer + 1})", "token gate beta_i", "head gate kappa_h"),
    )  # fmt: skip
    fig.add_trace(
        go.Heatmap(
            z=dim, zmin=0, zmax=1, colorscale="Viridis",
            colorbar=dict(title=dict(text="gate value<br>(both heatmaps)", side="right"), x=1.01, len=0.9),
        ), 1, 1,
    )  # fmt: skip
    fig.add_trace(go.Heatmap(z=beta[:, None], zmin=0, zmax=1, colorscale="Viridis", showscale=False), 1, 2)
    fig.add_trace(go.Bar(x=[f"h{h + 1}" for h in range(len(kappa))], y=kappa, marker_color="#636efa"), 1, 3)
    base_layout(fig, height=360)
    fig.update_xaxes(title_text="channel c", tick0=0, dtick=count_dtick(dim.shape[1] - 1), row=1, col=1)
    fig.update_yaxes(
        title_text="position i", autorange="reversed", tick0=0, dtick=count_dtick(dim.shape[0] - 1), row=1, col=1
    )
    fig.update_yaxes(autorange="reversed", showticklabels=False, row=1, col=2)
    fig.update_xaxes(showticklabels=False, row=1, col=2)
    fig.update_yaxes(title_text="kappa_h", range=[0, 1], row=1, col=3)
    fig.update_layout(showlegend=False)
    return fig


def gate_bound_figure(bound: GateBound) -> go.Figure:
    """Theorem 7.1 per token: the worst gradient ratio sigma_min(dh/du) and its lower bound, against ||u_i||."""
    order = np.argsort(bound.u_norm.numpy())
    x = bound.u_norm.numpy()[order]
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(x=x, y=bound.sigma_min.numpy()[order], mode="markers", name="measured sigma_min(dh/du)")
    )
    fig.add_trace(
        go.Scatter(x=x, y=bound.bound.numpy()[order], mode="lines", name="bound lambda_min(G) - ||W_g|| ||u|| / 4")
    )
    fig.add_hline(y=0, line=dict(color="#888", dash="dot"), annotation_text="below: bound vacuous")
    return base_layout(fig, "", "||u_i|| (norm of the gated vector)", "||dL/du|| / ||dL/dh|| (worst direction)")
