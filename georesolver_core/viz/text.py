"""Figures of the text task: loss in bits per character, one head's attention on a sentence, the KV Pareto front."""

from __future__ import annotations

import math

import plotly.graph_objects as go

from georesolver_core.viz.style import base_layout, count_dtick, log_axis
from georesolver_core.viz.training import PALETTE


def _bits(x):
    return None if x is None else x / math.log(2)


def gap_at_common_step(a: list[dict], b: list[dict]) -> tuple[int, float, float] | None:
    """(step, validation bits/char of a, of b) at the last evaluation step both histories reached, or None."""
    va = {r["step"]: r["test_loss"] for r in a if r.get("test_loss") is not None}
    vb = {r["step"]: r["test_loss"] for r in b if r.get("test_loss") is not None}
    common = sorted(set(va) & set(vb))
    if not common:
        return None
    step = common[-1]
    return step, _bits(va[step]), _bits(vb[step])


def bits_curves_figure(runs: list[tuple[str, list[dict]]], height: int = 400) -> go.Figure:
    """Training loss (thin) and validation loss (markers) in bits per character against the step, one colour per run."""
    fig = go.Figure()
    for i, (name, history) in enumerate(runs):
        color = PALETTE[i % len(PALETTE)]
        fig.add_trace(
            go.Scatter(
                x=[r["step"] for r in history], y=[_bits(r["loss"]) for r in history], name=f"{name}: train",
                mode="lines", line=dict(color=color, width=1), opacity=0.45, legendgroup=name,
            )
        )  # fmt: skip
        evals = [r for r in history if r.get("test_loss") is not None]
        fig.add_trace(
            go.Scatter(
                x=[r["step"] for r in evals], y=[_bits(r["test_loss"]) for r in evals], name=f"{name}: validation",
                mode="lines+markers", line=dict(color=color, width=2.5), legendgroup=name,
            )
        )  # fmt: skip
    base_layout(fig, "", "optimiser step", "cross-entropy (bits per character)", height=height)
    last = max((h[-1]["step"] for _, h in runs if h), default=1)
    fig.update_xaxes(tick0=0, dtick=count_dtick(last))  # a count: integer ticks only
    return fig


def attention_heatmap(weights, text: str, title: str = "", height: int = 560) -> go.Figure:
    """(T, T) weights of one head: row = query character, column = key character, ticks are the characters."""
    chars = ["␣" if ch == " " else ch for ch in text]  # a visible space
    pos = list(range(len(text)))
    hover = [[f"query {i} {chars[i]!r}, key {j} {chars[j]!r}" for j in pos] for i in pos]
    fig = go.Figure(
        go.Heatmap(
            z=weights, x=pos, y=pos, text=hover, colorscale="Viridis", zmin=0, colorbar=dict(title="weight"),
            hovertemplate="%{text}<br>weight %{z:.3f}<extra></extra>",
        )
    )  # fmt: skip
    base_layout(fig, title, "key (character attended to)", "query (character predicting the next)", height=height)
    ticks = dict(tickmode="array", tickvals=pos, ticktext=chars, tickfont=dict(family="monospace", size=13))
    fig.update_yaxes(autorange="reversed", **ticks)
    fig.update_xaxes(tickangle=0, side="top", **ticks)
    return fig


def kv_pareto_figure(rows: list[dict], labels: dict[str, str], height: int = 440) -> go.Figure:
    """Bytes per key against validation-loss increase, one curve per method; Pareto points ringed."""
    fig = go.Figure()
    methods = list(dict.fromkeys(r["method"] for r in rows))
    for i, m in enumerate(methods):
        pts = sorted((r for r in rows if r["method"] == m), key=lambda r: r["bytes_per_key"])
        fig.add_trace(
            go.Scatter(
                x=[r["bytes_per_key"] for r in pts], y=[max(r["loss_increase"], 1e-6) for r in pts],
                text=[f"{r['bits']} bits" for r in pts], name=labels.get(m, m), mode="lines+markers",
                line=dict(color=PALETTE[i % len(PALETTE)]),
                marker=dict(size=[13 if r["pareto"] else 7 for r in pts], line=dict(width=[2 if r["pareto"] else 0 for r in pts], color="black")),
                hovertemplate="%{text}<br>%{x:.2f} bytes/key<br>loss +%{y:.2e} nats<extra></extra>",
            )
        )  # fmt: skip
    base_layout(
        fig,
        "",
        "stored bytes per key (codes + every scale and offset)",
        "validation loss increase (nats/char)",
        height=height,
    )
    log_axis(fig, "y")
    return fig
