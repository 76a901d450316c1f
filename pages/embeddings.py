"""Embeddings lab: hierarchies in the Poincaré ball, on the sphere and in the plane, trained live with geoopt."""

import embeddings_controls as widgets
import embeddings_live as live
import embeddings_source as source
import embeddings_tabs as panels
import embeddings_trees as trees
import embeddings_wordnet as wn
import streamlit as st
import torch
import ui
from knobs import Knob, draw, page_knobs

from georesolver_core.embeddings import OPTIMIZERS, EmbeddingConfig
from georesolver_core.labs import embeddings as lab
from georesolver_core.viz.embeddings import MAX_LABELS

TABS = (
    "Three geometries", "Norm vs depth", "Onto the sphere", "WordNet benchmark", "Trees in the disk", "Data & downloads",
)  # fmt: skip
KNOBS = page_knobs(
    "embeddings",
    # the data (app/embeddings_source.py); the source is linked by its key (links.linked_choice), not its label
    Knob("emb_source", "selectbox", "Hierarchy", source.DEFAULT_SOURCE, options=tuple(source.SOURCES),
         format_func=source.SOURCES.get, help=source.SOURCE_HELP, bind=None),
    Knob("emb_branch", "slider", "Branching factor", 2, lo=1, hi=6),
    Knob("emb_depth", "slider", "Depth (levels below the root)", 4, lo=1, hi=12),
    Knob("emb_digits_n", "slider", "Digit images (leaves)", 40, lo=8, hi=300),
    # the model and its training (app/embeddings_controls.py); WordNet's recipe sets the rest
    Knob("emb_geo", "geometry", "Geometry", "poincare", extra=(("segmented", True),)),
    Knob("emb_dim", "slider", "Dimension", 2, lo=1, hi=10, help="Intrinsic: the sphere S^d lives in R^(d+1)."),
    Knob("emb_wn_epochs", "slider", "Epochs", 300, lo=10, hi=1000, step=10),
    Knob("emb_c", "curvature", "Curvature parameter c (curvature k = -c)", extra=(("always", True),)),
    Knob("emb_learn_c", "toggle", "Learn the curvature"),
    Knob("emb_opt", "radio", "Optimiser", "radam", options=tuple(OPTIMIZERS),
         format_func=widgets.OPTIMIZER_LABELS.get, extra=(("horizontal", True),)),
    Knob("emb_lr", "log_slider", "Learning rate", lab.LR_DEFAULT, lo=1e-3, hi=10.0,
         help=f"RiemannianSGD wants about 10x more. The first {lab.BURN_IN} epochs run at a tenth of it "
         "(burn-in), so nodes find their places before leaves are pushed out. Higher rates reach a higher MAP "
         "sooner and crowd leaves at the rim; a norm-order penalty keeps every parent nearer the centre than its "
         "children."),
    Knob("emb_epochs", "slider", "Epochs", 100, lo=10, hi=1000, step=10),
    Knob("emb_neg", "slider", "Negatives per edge", 10, lo=1, hi=50),
    Knob("emb_batch", "select_slider", "Edges per step", 16, options=(4, 8, 16, 32, 64, 128)),
    # the run and the picture
    Knob("emb_budget", "slider", "Time budget (s)", 180, lo=10, hi=900, step=10,
         help="A run stops by itself after this much work (training and measuring); it applies from the next "
         "Start."),
    Knob("emb_autoplay", "toggle", "Restart training when a setting changes", True),
    Knob("emb_names", "toggle", "Write the node names on the picture", False,
         help=f"The top levels of the tree, at most {MAX_LABELS} names (deeper levels crowd at the rim); "
         "hovering a point always shows its name."),
    Knob("emb_centre", "toggle", "Draw with the root at the centre", False,
         help="The distance loss alone does not pin the root (a norm-order penalty keeps it near the centre, "
         "not at it in the plane or on the sphere). This moves it to the centre by an "
         "isometry (a Möbius translation in the ball) for the picture; no distance changes."),
    Knob("emb_recentre", "toggle", "Centre on it", bind=None,
         help="A Möbius translation (an isometry) moves the found node to the centre."),
    # below the live run
    Knob("emb_tau", "slider", "Construction scale tau (edge length)", 5.0, lo=0.5, hi=12.0, step=0.5,
         help="Sarkar's construction puts every edge at hyperbolic length tau. Larger: siblings further apart "
         "(less distortion) but deep nodes nearer the rim, where float64 runs out of digits."),
    Knob("emb_tab", "tabs", "Tab", options=TABS, extra=(("on_change", "rerun"),)),
    Knob("emb_claims", "toggle", "Show the claims' panels"),
)  # fmt: skip

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
    key, hier = source.hierarchy_controls(KNOBS, s.seed)
    wordnet = key == source.WORDNET
    st.caption(ui.escape_md(hier.summary() + "".join(f"; {n}" for n in hier.notes)))  # the name may be a file's
    settings = widgets.model_controls(KNOBS, wordnet)
    budget_s, autoplay = widgets.view_controls(KNOBS)

try:
    if wordnet:
        config = wn.config(settings, seed=s.seed)
    else:
        dtype = "float64" if s.dtype == torch.float64 else "float32"
        config = lab.page_schedule(EmbeddingConfig(**settings, seed=s.seed, dtype=dtype))
except ValueError as err:
    right.error(f"These settings cannot train: {err}. Change the setting named above.", icon=":material/error:")
    config = None

with right:
    relation = source.mammals()[2] if wordnet else None
    live.controls(hier, config, relation=relation, device=s.device, budget_s=budget_s, autoplay=autoplay)
    widgets.search_controls(KNOBS, hier)
    live.live()

tabs = draw(KNOBS["emb_tab"])
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
        trees.leaderboard()
        wn.benchmark_tab(source.mammals()[0], seed=s.seed)
with tabs[4]:
    if tabs[4].open:
        trees.trees_tab(draw(KNOBS["emb_tau"]), seed=s.seed)
with tabs[5]:
    if tabs[5].open:
        panels.data_and_downloads(hier)

st.header("The paper's claims for this page, measured")
if draw(KNOBS["emb_claims"]):
    ui.page_claims("embeddings", "emb")
