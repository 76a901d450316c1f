"""What the Landscapes page's tabs share: the geometry, curvature and kernel widgets, the cached
calls into ``georesolver_core.landscape``, and the claims box under each tab.

The page imports it as ``import landscape_ui`` (the entry script's folder is on sys.path), like ``ui``.
All math lives in georesolver_core; this module only draws and caches.
"""

from __future__ import annotations

import math

import streamlit as st
import ui

from georesolver_core.claims import FAILS
from georesolver_core.device import DTYPES
from georesolver_core.geometry import GEOMETRIES
from georesolver_core.landscape import (
    DEFAULT_EXTENT,
    KERNELS,
    SliceModelConfig,
    classify_paths,
    confirmed_spurious,
    descent_paths,
    hessian_sweep,
    landscape_grid,
    model_slice,
    mu_sweep,
    pl_profile,
    random_keys,
    ring_starts,
    train_model,
)
from georesolver_core.viz.claims import claim_figure
from georesolver_core.viz.landscape import KERNEL_LABELS

GEO_LABEL = {g: GEOMETRIES[g].label for g in GEOMETRIES}

# ---- widgets ---------------------------------------------------------------------------------


def geometry_select(label: str, key: str) -> str:
    return st.selectbox(label, list(GEOMETRIES), format_func=GEO_LABEL.get, key=key, bind="query-params")


def curvature_slider(key: str, geometry: str) -> float:
    """The ball's curvature parameter c; 1.0 (unused) in the other geometries."""
    if geometry != "poincare":
        return 1.0
    return ui.log_slider("Curvature parameter c (curvature k = -c)", key, 0.1, 10.0, 1.0)


def kernel_select(key: str) -> str:
    return (
        st.segmented_control(
            "Kernel", list(KERNELS), default="ida", format_func=KERNEL_LABELS.get, key=key, bind="query-params"
        )
        or "ida"
    )


# ---- the paper's claims under each tab ---------------------------------------------------------


def claims_box(keys: list[str], prefix: str, *, enabled: bool) -> None:
    """The verdict box for these claims, and each claim's measurement behind a toggle."""
    if not enabled:
        st.caption("The paper's claims for this tab are switched off at the top of the page.")
        return
    results = ui.measure_claims(keys)
    ui.theory_box(results)
    if st.toggle("Show the measurements behind the verdicts", key=f"{prefix}_claims_show"):
        cols = st.columns(2)
        for i, r in enumerate(results):
            with cols[i % 2].container(border=True):
                st.plotly_chart(claim_figure(r, height=320), key=f"{prefix}_claim_{r['key']}")
                (st.error if r["verdict"] == FAILS else st.caption)(r["summary"])
    ui.download_json("Download the claims' data (JSON)", results, f"{prefix}_claims.json", f"{prefix}_claims_dl")


# ---- cached calls into the library -------------------------------------------------------------


@st.cache_data(show_spinner=False, max_entries=64)
def pl_profiles(geometry, eps, delta, tau, c, basin, dtype_name, device):
    return [
        pl_profile(
            k, geometry, eps=eps, delta=delta, tau=tau, c=c, basin=basin, dtype=DTYPES[dtype_name], device=device
        )
        for k in KERNELS
    ]


@st.cache_data(show_spinner=False, max_entries=32)
def mu_sweeps(geometry, vary, values, eps, delta, tau, c, basin):
    return {
        k: mu_sweep(
            k, geometry, vary=vary, values=values, eps=eps, delta=delta, tau=tau, c=c, basin=basin, n_basin=401
        )
        for k in KERNELS
    }


@st.cache_data(show_spinner=False, max_entries=32)
def landscape(geometry, kernel, n, eps, tau, c, resolution, n_starts, steps, lr, seed, dtype_name, device):
    """The grid, the descent paths from a ring of starts, their outcomes and the confirmed spurious minima."""
    extent = DEFAULT_EXTENT[geometry] / (math.sqrt(c) if geometry == "poincare" else 1.0)
    dtype = DTYPES[dtype_name]
    keys = random_keys(n, geometry=geometry, extent=extent, c=c, seed=seed, dtype=dtype).to(device)
    grid = landscape_grid(
        keys, geometry=geometry, kernel=kernel, eps=eps, extent=extent, resolution=resolution, c=c, tau=tau
    )
    starts = ring_starts(n_starts, geometry=geometry, extent=extent, c=c, dtype=dtype).to(device)
    paths = descent_paths(
        starts,
        keys,
        geometry=geometry,
        kernel=kernel,
        eps=eps,
        c=c,
        tau=tau,
        lr=lr,
        steps=steps,
        max_step=0.04 * extent,
    )
    confirmed = confirmed_spurious(grid, keys)
    return grid, paths, classify_paths(paths, grid), int(confirmed.sum())


@st.cache_data(show_spinner=False, max_entries=16)
def hessians(geometry, eps, rho, c, n_max):
    ns = [n for n in (2, 4, 8, 16, 32, 64, 128) if n <= n_max]
    return {k: hessian_sweep(ns, kernel=k, geometry=geometry, eps=eps, rho=rho, c=c) for k in KERNELS}


@st.cache_resource
def _models() -> dict:
    """Trained models shared by every session, keyed by (config, device); trained outside any cached
    function so that the progress bar can follow the steps."""
    return {}


def trained_model(config: SliceModelConfig, device: str, bar):
    store = _models()
    key = (config, device)
    if key not in store:
        steps = config.steps
        store[key] = train_model(
            config,
            callback=lambda i, loss: bar.progress((i + 1) / steps, text=f"step {i + 1}: loss {loss:.3f}"),
            device=device,
        )
        while len(store) > 8:  # keep the newest few
            store.pop(next(iter(store)))
    return store[key]


@st.cache_data(show_spinner=False, max_entries=16)
def model_loss_slice(config: SliceModelConfig, device: str, span: float, resolution: int, seed: int, _trained):
    return model_slice(_trained, span=span, resolution=resolution, seed=seed)
