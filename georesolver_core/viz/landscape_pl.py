"""Figures of the two-key PL inequality and of Lemma 2's Hessian: PL profiles along the geodesic,
mu sweeps against the paper's rates, Hessian spectra against n. Pure functions: data in, ``go.Figure`` out."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from georesolver_core.attention.layer import KERNEL_CHOICES
from georesolver_core.verdicts import fit_loglog_slope
from georesolver_core.viz.style import base_layout, kernel_colour, log_axis


def kernel_color(kernel: str) -> str:
    return kernel_colour(kernel, "#333333")


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
        col = kernel_color(p.kernel)
        name = KERNEL_CHOICES.get(p.kernel, p.kernel)
        hover = "s = %{x:.4g}<br>%{y:.4g}<extra>" + name + "</extra>"
        for row, y in enumerate((p.loss, p.grad_sq, p.ratio), start=1):
            legend = dict(name=name) if row == 1 else dict(showlegend=False)  # one legend entry per kernel
            fig.add_trace(
                go.Scatter(x=p.s, y=y, line=dict(color=col), legendgroup=p.kernel, hovertemplate=hover, **legend),
                row=row,
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
    log_axis(fig, "y", row=2, col=1)
    log_axis(fig, "y", row=3, col=1)
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


def _sweep_trace(x, y, name: str, legend: str, hover_y: str, *, mode: str, dash: str | None = None) -> go.Scatter:
    """One series of a sweep, coloured by the kernel its name mentions."""
    kernel = "softmax" if "softmax" in name else "ida"
    return go.Scatter(
        x=x,
        y=y,
        mode=mode,
        name=legend,
        line=dict(color=kernel_color(kernel), dash=dash),
        hovertemplate="x = %{x:.4g}<br>" + hover_y + "<extra>" + name + "</extra>",
    )


def sweep_figure(
    x,
    measured: dict,
    predicted: dict,
    *,
    x_label: str,
    y_label: str,
    title: str = "",
    height: int = 430,
) -> go.Figure:
    """Log-log: measured series (solid, markers; legend shows the fitted exponent) against the paper's
    Theta shapes (dashed, constant fitted to the measurement)."""
    x = np.asarray(x, dtype=float)
    fig = go.Figure()
    for name, y in measured.items():
        y = np.asarray(y, dtype=float)
        try:
            slope = f", slope {fit_loglog_slope(x, y):.2f}"
        except ValueError:
            slope = ""
        fig.add_trace(_sweep_trace(x, y, name, f"{name} (measured{slope})", "mu = %{y:.4g}", mode="lines+markers"))
    for name, (shape, against) in predicted.items():
        y = fitted_shape(x, measured[against], shape)
        legend = f"{name} (paper, constant fitted)"
        fig.add_trace(_sweep_trace(x, y, name, legend, "%{y:.4g}", mode="lines", dash="dash"))
    base_layout(fig, title, x_label, y_label, height)
    # four long legend entries wrap to two rows: further down, clear of the x-axis title
    fig.update_layout(legend=dict(y=-0.3), margin=dict(b=150))
    log_axis(fig, "x")
    log_axis(fig, "y")
    return fig


def pl_sweep_figures(sweeps, delta: float, eps: float) -> tuple[go.Figure, go.Figure]:
    """mu of both kernels against eps (at ``delta``) and against Delta (at ``eps``), each beside the
    paper's rates (``sweep_figure``). ``sweeps``: a ``landscape.study.PLSweeps``."""
    by_eps = sweep_figure(
        sweeps.eps,
        {"IDA": sweeps.mu_by_eps["ida"], "softmax": sweeps.mu_by_eps["softmax"]},
        {"IDA: eps^2/Delta^4": (sweeps.ida_by_eps, "IDA")},
        x_label=f"eps (Delta = {delta:g})",
        y_label="PL constant mu",
        title="mu against eps",
    )
    by_delta = sweep_figure(
        sweeps.delta,
        {"IDA": sweeps.mu_by_delta["ida"], "softmax": sweeps.mu_by_delta["softmax"]},
        {
            "IDA: eps^2/Delta^4": (sweeps.ida_by_delta, "IDA"),
            "softmax: paper's rate": (sweeps.softmax_by_delta, "softmax"),
        },
        x_label=f"Delta (eps = {eps:g})",
        y_label="PL constant mu",
        title="mu against Delta",
    )
    return by_eps, by_delta


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
        col = kernel_color(kernel)
        name = KERNEL_CHOICES.get(kernel, kernel)
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
        for attr, label, line in (
            ("curvature", "curvature max|lambda|", dict(color=col)),
            ("spread", "spread", dict(color=col, dash="dash")),
        ):
            fig.add_trace(
                go.Scatter(
                    x=[s.n for s in specs],
                    y=[getattr(s, attr) for s in specs],
                    mode="lines+markers",
                    name=f"{name}: {label}",
                    line=line,
                    hovertemplate="n = %{x}<br>%{y:.4g}<extra>" + attr + "</extra>",
                ),
                row=1,
                col=2,
            )
    base_layout(fig, "", "", "", height)
    fig.update_layout(
        legend=dict(orientation="h", yanchor="top", y=-0.22, xanchor="left", x=0), margin=dict(b=130)
    )
    for c in (1, 2):
        log_axis(fig, "x", title_text="number of keys n", row=1, col=c)
        log_axis(fig, "y", row=1, col=c)
    fig.update_yaxes(title_text="|lambda| (per unit length^2)", row=1, col=1)
    fig.update_yaxes(title_text="curvature (per unit length^2) / spread (ratio)", row=1, col=2)
    return fig
