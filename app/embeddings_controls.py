"""The Embeddings page's widgets beside the live run: model and training settings (outside WordNet, where the
published recipe decides), the time budget and drawing toggles, and the node search.

Each is drawn from a row of the page's knob table (``KNOBS`` in pages/embeddings.py, passed in as ``table``).
"""

from __future__ import annotations

import embeddings_wordnet as wn
import streamlit as st
from knobs import Knob, draw

from georesolver_core.geometry import GEOMETRIES

OPTIMIZER_LABELS = {"radam": "RiemannianAdam", "rsgd": "RiemannianSGD"}  # OPTIMIZERS key -> the radio's label


def model_controls(table: dict[str, Knob], wordnet: bool) -> dict:
    """Geometry, dimension and (outside WordNet, where the published recipe decides) curvature, optimiser,
    learning rate, negatives and batch: the widgets' values by name."""
    st.subheader("Model")
    geometry = draw(table["emb_geo"]) or table["emb_geo"].default
    dim = draw(table["emb_dim"])
    st.subheader("Training")
    if wordnet:
        epochs = draw(table["emb_wn_epochs"])
        st.caption(wn.recipe_caption(geometry))
        return dict(geometry=geometry, dim=dim, epochs=epochs)
    curved = geometry in GEOMETRIES and GEOMETRIES[geometry].has_curvature_parameter
    c = draw(table["emb_c"], geometry=geometry)
    learn_c = draw(table["emb_learn_c"], disabled=not curved)
    optimizer = draw(table["emb_opt"])
    lr = draw(table["emb_lr"])
    epochs = draw(table["emb_epochs"])
    negatives = draw(table["emb_neg"])
    batch = draw(table["emb_batch"])
    return dict(
        geometry=geometry,
        dim=dim,
        c=c,
        learn_curvature=bool(learn_c) and curved,
        optimizer=optimizer or table["emb_opt"].default,
        lr=lr,
        epochs=epochs,
        negatives=negatives,
        batch_size=batch,
    )


def view_controls(table: dict[str, Knob]) -> tuple[float, bool]:
    """Time budget, restart-on-change and the two drawing toggles; returns (budget in s, autoplay)."""
    budget = draw(table["emb_budget"])
    autoplay = draw(table["emb_autoplay"])
    draw(table["emb_names"])
    draw(table["emb_centre"])
    return float(budget), bool(autoplay)


def search_controls(table: dict[str, Knob], hier) -> None:
    """The node search (its options are the hierarchy's nodes, so it is no row of the table) and the
    toggle that centres the picture on the found node."""
    search, recentre = st.columns([3, 1.3], vertical_alignment="bottom")
    search.selectbox(
        "Find a node (its ancestors and descendants light up)",
        list(hier.nodes),
        index=None,
        key="emb_search",
        placeholder="type a name, e.g. primate.n.02",
    )
    draw(table["emb_recentre"], recentre)
