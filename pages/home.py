"""Home: the arc Euclidean -> hyperbolic -> spherical, one live figure, a map of the pages."""

import lecture
import streamlit as st
import ui

from georesolver_core.device import device_label
from georesolver_core.viz.home import LABELS_UP_TO, QUERY_PLACES, arc_example, arc_figure

ui.page_header(
    "GeoResolver Explorer",
    "Attention that weighs keys by **inverse distance** instead of a softmax of dot products. "
    "Change the distance *d* and the same rule works in flat, hyperbolic and spherical space:",
)
st.latex(
    r"W_{ij} = \frac{(d(q_i, k_j)^2 + \varepsilon)^{-1}}{\sum_m (d(q_i, k_m)^2 + \varepsilon)^{-1}}, \qquad o_i = \sum_j W_{ij} v_j"
)

st.markdown(
    """
**The arc of the paper.** *Euclidean* IDA (the Resolver) retrieves an exact match as eps -> 0, where a
softmax always dilutes. The *Poincaré ball* gives the keys room: volume grows exponentially towards
the rim, so hierarchies (memories) fit in few dimensions. The *sphere* is compact, every direction is
equally far from the centre, which suits routing queries to prototypes. Below: the same keys in all three.
"""
)

s = ui.settings()


@st.cache_data(show_spinner=False, max_entries=64)
def _example(n_keys: int, eps: float, seed: int, spread: float, query: str):
    return arc_example(n_keys, eps, seed, spread, query)


@st.fragment
def arc_lab() -> None:
    """Only this part reruns when a slider moves: the claim box and the page map stay as they are."""
    c1, c2, c3, c4 = st.columns(4)
    n_keys = lecture.widget(c1.slider, "Number of keys", 1, 12, 5, key="home_n_keys", bind="query-params")
    with c2:
        eps = ui.log_slider(
            "eps (regulariser)",
            "home_eps",
            1e-4,
            10.0,
            0.05,
            help="Large eps: uniform weights. Small eps: a key at distance 0 from the query takes all the weight; "
            "with no key that close, the weights tend to 1/d^2 (normalised), not to one-hot.",
        )
    spread = lecture.widget(
        c3.slider, "Spread of the keys in the plane", 0.2, 3.0, 1.2, 0.1, key="home_spread", bind="query-params"
    )
    places = list(QUERY_PLACES)
    query = lecture.widget(
        c4.radio,
        "The query sits",
        places,
        format_func=QUERY_PLACES.get,
        key="home_query",
        bind="query-params",
        help="On k1, lowering eps gives k1 all the weight (exact retrieval). At a random point the weights "
        "tend to 1/d^2: the nearest key gets the most, not all.",
    )
    sphere_3d = lecture.widget(
        st.toggle,
        "Turn the sphere in 3-D",
        False,
        key="home_sphere_3d",
        bind="query-params",
        help="Drag to rotate the sphere. A 3-D view takes the browser about twice as long to redraw after each "
        "slider move; the flat picture shows the same globe from the same eye.",
    )
    ex = _example(n_keys, eps, s.seed, spread, query or places[0])
    ui.chart(arc_figure(ex, sphere_3d), key="home_arc_fig")
    sphere_view = (
        "drag it to turn it"
        if sphere_3d
        else "seen from one side: the near hemisphere solid, the far one faint and dotted"
    )
    st.caption(
        "Left: keys drawn in R^2. Middle: the same keys mapped into the disk by x = 0.9 tanh(|z|) z/|z|; arcs are "
        f"hyperbolic geodesics. Right: inverse stereographic projection onto S^2 ({sphere_view}); arcs are "
        "great circles. "
        "Marker area and line width show each key's weight for the query. Keys are labelled k1, k2, ... up to "
        f"{LABELS_UP_TO} keys; with more, the labels would overlap: hover a marker for its name and weight."
    )
    ui.download_json(
        "Download the points and weights (JSON)",
        {"eps": ex.eps, "points": ex.points, "weights": ex.weights},
        "three_geometries.json",
        "home_dl",
    )


arc_lab()

st.subheader("Map of the pages")
for page, blurb in ui.page_map():
    left, right = st.columns([1, 3])
    with left:
        st.page_link(page)
    right.markdown(blurb)

st.subheader("Where this runs")
st.markdown(
    f"Device: **{device_label(s.device)}**, precision **{str(s.dtype).replace('torch.', '')}**, seed **{s.seed}**. "
    "Change them in the sidebar; the URL keeps them, so a view can be shared as a link."
)


results = ui.shipped_claims(["sec5.2b-rim-separation"])  # the shipped report's measurement
ui.theory_box(results)
with st.expander("Show the measurement behind the verdict"):
    for result in results:
        ui.chart(ui.claim_chart(result), key="home_claim_fig")
