"""The Embeddings page's widgets beside the live run: model and training settings (outside WordNet, where the
published recipe decides), the time budget and drawing toggles, and the node search."""

from __future__ import annotations

import embeddings_wordnet as wn
import streamlit as st
import ui

from georesolver_core.embeddings import OPTIMIZERS, lab
from georesolver_core.geometry import GEOMETRIES
from georesolver_core.viz.embeddings import MAX_LABELS


def model_controls(wordnet: bool) -> dict:
    """Geometry, dimension and (outside WordNet, where the published recipe decides) curvature, optimiser,
    learning rate, negatives and batch: the widgets' values by name."""
    st.subheader("Model")
    geometry = ui.geometry_picker("emb_geo", default="poincare", segmented=True) or "poincare"
    dim = st.slider(
        "Dimension",
        1,
        10,
        2,
        key="emb_dim",
        bind="query-params",
        help="Intrinsic: the sphere S^d lives in R^(d+1).",
    )
    st.subheader("Training")
    if wordnet:
        epochs = st.slider("Epochs", 10, 1000, 300, step=10, key="emb_wn_epochs", bind="query-params")
        st.caption(wn.recipe_caption(geometry))
        return dict(geometry=geometry, dim=dim, epochs=epochs)
    c = ui.curvature_slider("emb_c", geometry, always=True)
    learn_c = st.toggle(
        "Learn the curvature",
        key="emb_learn_c",
        bind="query-params",
        disabled=not (geometry in GEOMETRIES and GEOMETRIES[geometry].uses_c),
    )
    optimizer = st.radio(
        "Optimiser",
        list(OPTIMIZERS),
        format_func={"radam": "RiemannianAdam", "rsgd": "RiemannianSGD"}.get,
        key="emb_opt",
        horizontal=True,
        bind="query-params",
    )
    lr = ui.log_slider(
        "Learning rate",
        "emb_lr",
        1e-3,
        10.0,
        lab.LR_DEFAULT,
        help=f"RiemannianSGD wants about 10x more. The first {lab.BURN_IN} epochs run at a tenth of it (burn-in), "
        "so nodes find their places before leaves are pushed out. Higher rates reach a higher MAP sooner and "
        "crowd leaves at the rim; a norm-order penalty keeps every parent nearer the centre than its children.",
    )
    epochs = st.slider("Epochs", 10, 1000, 100, step=10, key="emb_epochs", bind="query-params")
    negatives = st.slider("Negatives per edge", 1, 50, 10, key="emb_neg", bind="query-params")
    batch = st.select_slider("Edges per step", [4, 8, 16, 32, 64, 128], 16, key="emb_batch", bind="query-params")
    return dict(
        geometry=geometry,
        dim=dim,
        c=c,
        learn_curvature=bool(learn_c) and geometry in GEOMETRIES and GEOMETRIES[geometry].uses_c,
        optimizer=optimizer or "radam",
        lr=lr,
        epochs=epochs,
        negatives=negatives,
        batch_size=batch,
    )


def view_controls() -> tuple[float, bool]:
    """Time budget, restart-on-change and the two drawing toggles; returns (budget in s, autoplay)."""
    budget = st.slider(
        "Time budget (s)",
        10,
        900,
        180,
        step=10,
        key="emb_budget",
        bind="query-params",
        help="A run stops by itself after this much work (training and measuring); it applies from the next Start.",
    )
    autoplay = st.toggle("Restart training when a setting changes", True, key="emb_autoplay", bind="query-params")
    st.toggle(
        "Write the node names on the picture",
        False,
        key="emb_names",
        bind="query-params",
        help=f"The top levels of the tree, at most {MAX_LABELS} names (deeper levels crowd at the rim); "
        "hovering a point always shows its name.",
    )
    st.toggle(
        "Draw with the root at the centre",
        False,
        key="emb_centre",
        bind="query-params",
        help="The distance loss alone does not pin the root (a norm-order penalty keeps it near the centre, "
        "not at it in the plane or on the sphere). This moves it to the centre by an "
        "isometry (a Möbius translation in the ball) for the picture; no distance changes.",
    )
    return float(budget), bool(autoplay)


def search_controls(hier) -> None:
    search, recentre = st.columns([3, 1.3], vertical_alignment="bottom")
    search.selectbox(
        "Find a node (its ancestors and descendants light up)",
        list(hier.nodes),
        index=None,
        key="emb_search",
        placeholder="type a name, e.g. primate.n.02",
    )
    recentre.toggle(
        "Centre on it",
        key="emb_recentre",
        help="A Möbius translation (an isometry) moves the found node to the centre.",
    )
