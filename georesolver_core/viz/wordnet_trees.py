"""Figures of the WordNet trees tab: how far out a trained embedding puts its nodes (pure: data -> figure)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from georesolver_core.viz.style import base_layout


def radius_histogram(radius: np.ndarray, *, title: str, height: int = 360) -> go.Figure:
    """A histogram of hyperbolic distances to the origin (one per node), with the median marked."""
    r = np.asarray(radius, dtype=np.float64)
    if r.ndim != 1 or r.size == 0 or not np.isfinite(r).all():
        raise ValueError(f"radius must be a non-empty 1-D array of finite distances (got shape {r.shape})")
    fig = go.Figure(go.Histogram(x=r, nbinsx=60, name="nodes", marker_color="#1f77b4"))
    fig.add_vline(x=float(np.median(r)), line_dash="dash", annotation_text=f"median {np.median(r):.2f}")
    return base_layout(fig, title, "hyperbolic distance to the origin d(0, x)", "nodes", height=height)
