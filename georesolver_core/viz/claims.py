"""Figures for the claims registry: a claim's measurement drawn against its bound, and the verdict table."""

from __future__ import annotations

import plotly.graph_objects as go

from georesolver_core.viz.style import VERDICT_COLORS, base_layout


def claim_figure(result: dict, height: int = 360) -> go.Figure:
    """Measured (markers + line) vs bound (dashed) across the claim's sweep; extra series dotted.

    ``result`` is one entry of ``claims.run_all()`` (or ``run_claim``).
    """
    color = VERDICT_COLORS.get(result["verdict"], "#333333")
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=result["x"],
            y=result["bound"],
            mode="lines",
            name="bound (paper)",
            line=dict(color="black", dash="dash"),
        )
    )
    fig.add_trace(
        go.Scatter(
            x=result["x"], y=result["measured"], mode="lines+markers", name="measured", line=dict(color=color)
        )
    )
    for name, series in (result.get("extra") or {}).items():
        if isinstance(series, list) and len(series) == len(result["x"]):
            fig.add_trace(go.Scatter(x=result["x"], y=series, mode="lines", name=name, line=dict(dash="dot")))
    base_layout(fig, f"{result['section']}: {result['verdict']}", result["x_label"], result["y_label"], height)
    if result.get("log_x"):
        fig.update_xaxes(type="log")
    if result.get("log_y"):
        fig.update_yaxes(type="log")
    return fig
