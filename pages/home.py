"""Home: the arc Euclidean -> hyperbolic -> spherical, one live figure, a map of the pages."""

import streamlit as st
import ui
from knobs import Knob, draw, page_knobs

from georesolver_core.device import device_label
from georesolver_core.viz.home import LABELS_UP_TO, QUERY_PLACES, arc_example, arc_figure

KNOBS = page_knobs(
    "home",
    Knob("home_n_keys", "slider", "Number of keys", 5, lo=1, hi=12),
    Knob("home_eps", "log_slider", "eps (regulariser)", 0.05, lo=1e-4, hi=10.0,
         help="Large eps: uniform weights. Small eps: a key at distance 0 from the query takes all the weight; "
         "with no key that close, the weights tend to 1/d^2 (normalised), not to one-hot."),
    Knob("home_spread", "slider", "Spread of the keys in the plane", 1.2, lo=0.2, hi=3.0, step=0.1),
    Knob("home_query", "radio", "The query sits", list(QUERY_PLACES)[0], options=tuple(QUERY_PLACES),
         format_func=QUERY_PLACES.get,
         help="On k1, lowering eps gives k1 all the weight (exact retrieval). At a random point the weights "
         "tend to 1/d^2: the nearest key gets the most, not all."),
    Knob("home_sphere_3d", "toggle", "Turn the sphere in 3-D", False,
         help="Drag to rotate the sphere. A 3-D view takes the browser about twice as long to redraw after each "
         "slider move; the flat picture shows the same globe from the same eye."),
)  # fmt: skip


def intro() -> None:
    """The title, IDA's rule, and the arc of the paper in a paragraph."""
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


# ---- The three geometries, live ------------------------------------------------------------------------------


@st.cache_data(show_spinner=False, max_entries=64)
def _example(n_keys: int, eps: float, seed: int, spread: float, query: str):
    return arc_example(n_keys, eps, seed, spread, query)


@st.fragment
def arc_lab(seed: int) -> None:
    """Only this part reruns when a slider moves: the claim box and the page map stay as they are."""
    c1, c2, c3, c4 = st.columns(4)
    n_keys, eps = draw(KNOBS["home_n_keys"], c1), draw(KNOBS["home_eps"], c2)
    spread, query = draw(KNOBS["home_spread"], c3), draw(KNOBS["home_query"], c4)
    sphere_3d = draw(KNOBS["home_sphere_3d"])
    ex = _example(n_keys, eps, seed, spread, query or list(QUERY_PLACES)[0])
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


# ---- The pages, the machine and one claim ---------------------------------------------------------------------


def page_map() -> None:
    """A link to every page with its one-line description."""
    st.subheader("Map of the pages")
    for page, blurb in ui.page_map():
        left, right = st.columns([1, 3])
        with left:
            st.page_link(page)
        right.markdown(blurb)


def where_this_runs(s) -> None:
    """The sidebar's device, precision and seed."""
    st.subheader("Where this runs")
    st.markdown(
        f"Device: **{device_label(s.device)}**, precision **{str(s.dtype).replace('torch.', '')}**, seed **{s.seed}**. "
        "Change them in the sidebar; the URL keeps them, so a view can be shared as a link."
    )


def rim_claim() -> None:
    """The shipped report's verdict on the rim's separation, its figure on request."""
    results = ui.shipped_claims(["sec5.2b-rim-separation"])  # the shipped report's measurement
    ui.theory_box(results)
    # Drawn only while open: a closed expander's figure would still be drawn on every first visit.
    measurement = st.expander("Show the measurement behind the verdict", key="home_claim_open", on_change="rerun")
    if measurement.open:
        with measurement:
            for result in results:
                ui.chart(ui.claim_chart(result), key="home_claim_fig")


def main() -> None:
    intro()
    s = ui.settings()
    arc_lab(s.seed)
    page_map()
    where_this_runs(s)
    rim_claim()


main()
