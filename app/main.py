"""GeoResolver Explorer: the main script, run for every browser session (``streamlit_app.py`` serves it).

Page config, the shared sidebar (seed, dtype, device, bound to the URL) and navigation over
../pages in the order of the paper's arc.
"""

from pathlib import Path

import knobs
import lecture
import links
import streamlit as st
import ui
import warmup

HERE = Path(__file__).parent

# (file under ../pages, title, icon, url path, one-line description for the map on Home).
# Order follows the paper's arc: Euclidean -> hyperbolic -> spherical, then the neighbours.
PAGES = [
    ("home.py", "Home", ":material/home:", "home", "the arc in one picture, and this map"),
    (
        "attention.py",
        "Attention",
        ":material/grid_on:",
        "attention",
        "IDA vs softmax weights live in three geometries; the Euclidean theorems measured",
    ),
    (
        "embeddings.py",
        "Embeddings",
        ":material/account_tree:",
        "embeddings",
        "hierarchies trained live in the Poincaré disk, on the sphere and in the plane",
    ),
    (
        "landscapes.py",
        "Landscapes",
        ":material/landscape:",
        "landscapes",
        "loss landscapes: PL constants, Hessian spread, descent paths, IDA vs softmax per geometry",
    ),
    (
        "hida.py",
        "HIDA family",
        ":material/hub:",
        "hida",
        "Dense, FP, L and C-HIDA: sparse patterns, anchors and streaming summaries, their cost and error",
    ),
    (
        "compression.py",
        "Compression",
        ":material/compress:",
        "compression",
        "HCC polar key quantisation: errors against Theorem 6.1, real bytes against 6.2, KIVI and int baselines",
    ),
    (
        "routing.py",
        "Routing & memory",
        ":material/alt_route:",
        "routing",
        "GSR routing decisions on the sphere, three routers' loads, DMG prototype births, distributed bytes",
    ),
    (
        "kernels.py",
        "Kernel speed",
        ":material/speed:",
        "kernels",
        "fused IDA / Dense-HIDA / SIDA kernels timed against torch SDPA, memory in O(T)",
    ),
    (
        "training.py",
        "Training",
        ":material/model_training:",
        "training",
        "GeoResolver and softmax models trained live, runs overlaid, HyperGate values, GPU when present",
    ),
    (
        "claims.py",
        "Claims",
        ":material/fact_check:",
        "claims",
        "every claim of the paper: bound, measurement, verdict",
    ),
    (
        "orthogonal.py",
        "Orthogonal residuals",
        ":material/360:",
        "orthogonal",
        "Cayley rotations vs Householder reflections as residual shortcuts: norm, spectrum, negation",
    ),
    (
        "hankel.py",
        "Hankel attention",
        ":material/stacked_line_chart:",
        "hankel",
        "dyadic low-rank blocks of a boundary kernel: singular-value decay vs 4^-N, ranks, speed-ups",
    ),
]

st.set_page_config(page_title="GeoResolver Explorer", page_icon="🌀", layout="wide")
pages = [
    st.Page(str(HERE.parent / "pages" / file), title=title, icon=icon, url_path=url, default=(i == 0))
    for i, (file, title, icon, url, _) in enumerate(PAGES)
]
ui.finish_reset(pages)  # after Reset: the same page again on a bare URL, before any widget is drawn
links.guard_query_params()  # before any widget reads the link
lecture.apply_url_state()
link_notices = st.container()
ui.sidebar_settings()
ui.register_pages(list(zip(pages, [row[4] for row in PAGES], strict=True)))
nav = st.navigation(pages)
st.session_state["_page_url"] = nav.url_path  # where Reset comes back to
nav.run()
# The controls this view drew, and every URL-bound knob of the page's table (a control on a closed tab too).
controls = set(ui.drawn_controls()) | st.session_state.get(knobs.PAGE_KEYS, set())
lecture.panel([k for k in controls if not k.startswith("lec_")])
links.url_notices(link_notices)
# Once the first visitor's page is drawn, one background thread warms what the other pages need first.
warmup.start([HERE.parent / "pages" / row[0] for row in PAGES], [row[3] for row in PAGES])
