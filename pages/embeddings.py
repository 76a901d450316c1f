"""Embeddings lab: hierarchies in the Poincaré ball, on the sphere and in the plane, trained live with geoopt."""

import embeddings_controls as widgets
import embeddings_live as live
import embeddings_source as source
import embeddings_tabs as panels
import embeddings_wordnet as wn
import streamlit as st
import torch
import ui

from georesolver_core.embeddings import lab

ui.page_header(
    "Embeddings",
    "A hierarchy's nodes become points; training pulls related nodes together and pushes other nodes away "
    "(Nickel & Kiela's loss, geoopt's Riemannian optimisers). Watch WordNet's mammals spread into wedges, one "
    "per order, towards the rim of the Poincaré disk, where there is exponentially more room (paper section "
    "5.2), and compare with the sphere and the plane.",
)
s = ui.settings()

left, right = st.columns([1.2, 2.4], gap="large")
with left:
    st.subheader("Data")
    key, hier = source.hierarchy_controls(s.seed)
    wordnet = key == source.WORDNET
    st.caption(ui.escape_md(hier.summary() + "".join(f"; {n}" for n in hier.notes)))  # the name may be a file's
    settings = widgets.model_controls(wordnet)
    budget_s, autoplay = widgets.view_controls()

try:
    if wordnet:
        config = wn.config(settings, seed=s.seed)
    else:
        dtype = "float64" if s.dtype == torch.float64 else "float32"
        config = lab.embedding_config(**settings, seed=s.seed, dtype=dtype)
except ValueError as err:
    right.error(f"These settings cannot train: {err}. Change the setting named above.", icon=":material/error:")
    config = None

with right:
    relation = source.mammals()[2] if wordnet else None
    live.controls(hier, config, relation=relation, device=s.device, budget_s=budget_s, autoplay=autoplay)
    widgets.search_controls(hier)
    live.live()

TABS = ["Three geometries", "Norm vs depth", "Onto the sphere", "WordNet benchmark", "Data & downloads"]
tabs = st.tabs(TABS, key="emb_tab", on_change="rerun", bind="query-params")
saved = panels.comparison(hier, config, s.device)
with tabs[0]:
    if tabs[0].open:
        panels.three_geometries(hier, config, s.device, wordnet=wordnet)
with tabs[1]:
    if tabs[1].open:
        panels.norm_vs_depth(hier, saved)
with tabs[2]:
    if tabs[2].open:
        panels.onto_the_sphere(hier, saved, s.seed)
with tabs[3]:
    if tabs[3].open:
        wn.benchmark_tab(source.mammals()[0], seed=s.seed)
with tabs[4]:
    if tabs[4].open:
        panels.data_and_downloads(hier)

st.header("The paper's claims for this page, measured")
if st.toggle("Show the claims' panels", key="emb_claims", bind="query-params"):
    ui.page_claims("embeddings", "emb")
