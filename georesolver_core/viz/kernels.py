"""Figures for the kernel benchmark (``georesolver_core.bench``): time, ratio to SDPA and memory vs length.

Each builder takes a benchmark report (the JSON document of ``python -m georesolver_core bench --json``)
and returns a plotly figure; nothing here runs a kernel.
"""

from __future__ import annotations

import plotly.graph_objects as go

from georesolver_core.bench import MEMORY_LIMIT_MB, TARGET_SEQ_LEN, target_ratios
from georesolver_core.viz.style import base_layout, kernel_colour, log_axis

PHASES = {"fwd": "forward", "fwdbwd": "forward + backward"}


def _series(report: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for row in report["rows"]:
        out.setdefault(row["kernel"], []).append(row)
    return {k: sorted(v, key=lambda r: r["seq_len"]) for k, v in out.items()}


def _line(kernel: str, rows: list[dict]) -> dict:
    return dict(
        name=rows[0].get("label", kernel),
        mode="lines+markers",
        line=dict(color=kernel_colour(kernel), dash="dash" if kernel.endswith("-naive") else "solid"),
    )


def _fmt(x, spec=".2f"):
    return "n/a" if x is None else format(x, spec)


def time_figure(report: dict, phase: str = "fwdbwd") -> go.Figure:
    """Median wall time (ms) against sequence length T, log-log, one line per kernel."""
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {list(PHASES)} (got {phase!r})")
    fig = go.Figure()
    for kernel, rows in _series(report).items():
        fig.add_trace(
            go.Scatter(
                x=[r["seq_len"] for r in rows],
                y=[r[f"{phase}_ms"] for r in rows],
                customdata=[[_fmt(r.get(f"{phase}_ratio")), _fmt(r.get("peak_mb"), ".1f")] for r in rows],
                hovertemplate=f"{kernel}<br>T = %{{x}}<br>%{{y:.2f}} ms<br>%{{customdata[0]}} x SDPA"
                "<br>peak %{customdata[1]} MB<extra></extra>",
                **_line(kernel, rows),
            )
        )
    base_layout(fig, f"Time per call, {PHASES[phase]}", "sequence length T (tokens)", "median time (ms)")
    log_axis(fig, "x")
    log_axis(fig, "y")
    return fig


def ratio_figure(report: dict, phase: str = "fwdbwd") -> go.Figure:
    """Time relative to SDPA on the same shapes; dotted markers show the targets at T = TARGET_SEQ_LEN."""
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {list(PHASES)} (got {phase!r})")
    fig = go.Figure()
    for kernel, rows in _series(report).items():
        pts = [r for r in rows if r.get(f"{phase}_ratio") is not None]
        if kernel == "sdpa" or not pts:
            continue
        fig.add_trace(
            go.Scatter(
                x=[r["seq_len"] for r in pts],
                y=[r[f"{phase}_ratio"] for r in pts],
                hovertemplate=f"{kernel}<br>T = %{{x}}<br>%{{y:.2f}} x SDPA<extra></extra>",
                **_line(kernel, pts),
            )
        )
    fig.add_hline(y=1.0, line=dict(color=kernel_colour("sdpa"), dash="dot"), annotation_text="SDPA")
    if phase == "fwdbwd":
        for kernel, limit in target_ratios().items():
            fig.add_trace(
                go.Scatter(
                    x=[TARGET_SEQ_LEN],
                    y=[limit],
                    mode="markers",
                    marker=dict(symbol="line-ew-open", size=28, color=kernel_colour(kernel), line=dict(width=3)),
                    name=f"target {kernel} <= {limit}x",
                    hovertemplate=f"target for {kernel}: <= {limit}x SDPA at T = {TARGET_SEQ_LEN}<extra></extra>",
                )
            )
    base_layout(fig, f"Ratio to SDPA, {PHASES[phase]}", "sequence length T (tokens)", "time / SDPA time (x)")
    log_axis(fig, "x")
    return fig


def memory_figure(report: dict) -> go.Figure:
    """Peak extra memory (MB) of one forward+backward call against T, with one dense T x T matrix for scale."""
    fig = go.Figure()
    lens: set[int] = set()
    for kernel, rows in _series(report).items():
        pts = [r for r in rows if r.get("peak_mb") is not None]
        if not pts:
            continue
        lens.update(r["seq_len"] for r in pts)
        fig.add_trace(
            go.Scatter(
                x=[r["seq_len"] for r in pts],
                y=[max(r["peak_mb"], 1e-3) for r in pts],
                hovertemplate=f"{kernel}<br>T = %{{x}}<br>peak %{{y:.2f}} MB<extra></extra>",
                **_line(kernel, pts),
            )
        )
    check = report.get("memory_check")
    if check:
        rows = [r for r in check["rows"] if r.get("peak_mb") is not None]
        lens.add(check["seq_len"])
        fig.add_trace(
            go.Scatter(
                x=[r["seq_len"] for r in rows],
                y=[r["peak_mb"] for r in rows],
                mode="markers",
                marker=dict(size=12, symbol="diamond", color=[kernel_colour(r["kernel"]) for r in rows]),
                name=f"memory check, T = {check['seq_len']}",
                text=[r["kernel"] for r in rows],
                hovertemplate="%{text}<br>T = %{x}<br>peak %{y:.1f} MB<extra></extra>",
            )
        )
        fig.add_hline(y=MEMORY_LIMIT_MB, line=dict(color="#d62728", dash="dot"), annotation_text="limit")
    if lens:
        xs = sorted(lens)
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=[4.0 * t * t / 2**20 for t in xs],
                mode="lines",
                line=dict(color="#999999", dash="dot"),
                name="one dense T x T float32 matrix",
                hovertemplate="T = %{x}<br>%{y:.1f} MB<extra></extra>",
            )
        )
    base_layout(fig, "Peak extra memory, forward + backward", "sequence length T (tokens)", "peak memory (MB)")
    log_axis(fig, "x")
    log_axis(fig, "y")
    return fig
