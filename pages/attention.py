"""Attention lab: live IDA and softmax weights in three geometries, and the Euclidean theorems measured."""

import numpy as np
import pandas as pd
import streamlit as st
import ui
from knobs import Knob, draw, page_knobs

from georesolver_core.attention.layer import KERNEL_CHOICES
from georesolver_core.geometry import GEOMETRIES
from georesolver_core.labs.attention import QUERY_MODES, LabConfig, attention_lab
from georesolver_core.viz.attention import (
    eps_sweep_animation,
    geometry_scatter,
    key_labels,
    sweep_summary_figure,
    weights_bars,
    weights_heatmap,
)
from georesolver_core.viz.style import ANIMATION_SPEEDS, kernel_colour

N_MAX, D_MAX = 256, 64
EPS_LO, EPS_HI = 1e-8, 100.0  # at 1e-8 an exact match keeps all but ~n * 1e-8 of the weight: nothing new below
KNOBS = page_knobs(
    "attention",
    Knob("att_geometry", "selectbox", "Geometry", next(iter(GEOMETRIES)), options=tuple(GEOMETRIES),
         format_func=lambda g: GEOMETRIES[g].label),
    Knob("att_kernel", "segmented_control", "Kernel for the matrix and the picture", "ida",
         options=tuple(KERNEL_CHOICES), format_func=lambda k: "IDA" if k == "ida" else "softmax"),
    Knob("att_n", "slider", "Number of keys n", 8, lo=1, hi=N_MAX),
    Knob("att_d", "slider", "Dimension d", 2, lo=2, hi=D_MAX, help="Pictures need d = 2 (or 3 on the sphere)."),
    Knob("att_eps", "log_slider", "eps (IDA regulariser)", 0.05, lo=EPS_LO, hi=EPS_HI,
         help="Large: uniform. Small: a key at distance 0 takes all the weight; with no key that close, the "
         "weights tend to 1/d^2 (normalised), not to one-hot."),
    Knob("att_temp", "log_slider", "Softmax temperature T", 1.0, lo=0.01, hi=100.0),
    Knob("att_spread", "slider", "Spread of the keys", 1.0, lo=0.1, hi=3.0, step=0.1),
    Knob("att_c", "curvature", "Curvature parameter c (curvature k = -c)",
         help="The ball has radius 1/sqrt(c); keys sit at norm <= 0.9/sqrt(c)."),
    # on a key, exact retrieval is what eps -> 0 shows
    Knob("att_query", "radio", "Where the query sits", "key", options=tuple(QUERY_MODES), format_func=QUERY_MODES.get,
         extra=(("horizontal", True),)),
    Knob("att_j", "number_input", "key j", 1, lo=1, hi=N_MAX),
    Knob("att_j2", "number_input", "key j2", 2, lo=1, hi=N_MAX),
    Knob("att_t", "slider", "position t along the geodesic", 0.5, lo=0.0, hi=1.0, step=0.05),
    Knob("att_sweep", "toggle", "Show the eps sweep (animation)"),
    Knob("att_anim_speed", "select_slider", "Play speed", 1.0, options=tuple(ANIMATION_SPEEDS),
         format_func=lambda v: f"{v:g}x", help="How fast Play runs through eps (1x: 350 ms a frame)."),
    Knob("att_claims", "toggle", "Show the claims' panels", True),
)  # fmt: skip


@st.cache_data(show_spinner=False, max_entries=64)
def _lab(cfg: LabConfig, dtype_name: str, device: str):
    return attention_lab(cfg, dtype=dtype_name, device=device)


# --- Knobs -> config -----------------------------------------------------------------------------------------


def key_knobs() -> dict:
    """The keys' and kernels' knobs in four columns: their values by name (``c`` drawn for the geometry)."""
    c1, c2, c3, c4 = st.columns(4)
    geometry, kernel = draw(KNOBS["att_geometry"], c1), draw(KNOBS["att_kernel"], c1)
    n, d = draw(KNOBS["att_n"], c2), draw(KNOBS["att_d"], c2)
    eps, temp = draw(KNOBS["att_eps"], c3), draw(KNOBS["att_temp"], c3)
    spread, c = draw(KNOBS["att_spread"], c4), draw(KNOBS["att_c"], c4, geometry=geometry)
    return dict(geometry=geometry, kernel=kernel, n=n, d=d, eps=eps, temp=temp, spread=spread, c=c)


def query_knobs(n: int, d: int) -> dict:
    """Where the query sits: the mode, and the key indices, geodesic position or typed coordinates it needs
    (0-based indices, clamped to the n keys and said so)."""
    q1, q2 = st.columns([2, 3])
    mode = draw(KNOBS["att_query"], q1)
    j, j2, t, coords = 0, 1, 0.5, None
    with q2:
        if mode == "between" and n < 2:
            st.warning("A query between two keys needs n >= 2 keys; showing a random query instead.")
            mode = "random"
        if mode in ("key", "between"):
            # The index widgets keep their full range so a smaller n never invalidates a stored value;
            # an index beyond n is clamped to the last key and said so.
            a, b, cc = st.columns(3)
            j_in = draw(KNOBS["att_j"], a)
            j = min(j_in, n) - 1
            if mode == "between":
                j2_in = draw(KNOBS["att_j2"], b)
                j2 = min(j2_in, n) - 1
                t = draw(KNOBS["att_t"], cc)
            if j_in > n or (mode == "between" and j2_in > n):
                st.caption(f"Only {n} keys: indices above {n} use key {n}.")
        elif mode == "custom":
            default = pd.DataFrame([[0.05] * d], columns=[f"x{i + 1}" for i in range(d)])
            edited = st.data_editor(default, key=f"att_coords_{d}", num_rows="fixed", hide_index=True)
            coords = tuple(float(v) for v in np.nan_to_num(edited.to_numpy(dtype=float)[0], nan=0.0))
            st.caption("Typed coordinates; on the sphere they are normalised onto it.")
    return dict(mode=mode, j=j, j2=j2, t=t, coords=coords)


def lab_config(k: dict, q: dict, seed: int) -> LabConfig:
    """The lab's config from the key and query knobs."""
    return LabConfig(
        geometry=k["geometry"], n=k["n"], d=k["d"], eps=k["eps"], temperature=k["temp"], mode=q["mode"],
        j=q["j"], j2=q["j2"], t=q["t"], coords=q["coords"], spread=k["spread"], c=k["c"], seed=seed,
    )  # fmt: skip


# --- Lab ----------------------------------------------------------------------------------------------------


def run_lab(cfg: LabConfig, s):
    """The lab at ``cfg``; a query that cannot be placed is said with its fix, and a random one shown."""
    dtype_name = str(s.dtype).replace("torch.", "")
    try:
        return _lab(cfg, dtype_name, str(s.device))
    except ValueError as err:
        fix = (
            "keep the norm below 1/sqrt(c)"
            if GEOMETRIES[cfg.geometry].has_curvature_parameter
            else "change the coordinates"
        )
        st.error(f"The query could not be placed: {err}. Fix: {fix}; showing a random query instead.")
        return _lab(cfg.random_query(), dtype_name, str(s.device))


# --- Figures --------------------------------------------------------------------------------------------------


def kernel_name(k: dict) -> str:
    return f"IDA, eps = {k['eps']:g}" if k["kernel"] == "ida" else f"softmax, T = {k['temp']:g}"


def weight_figures(res, k: dict) -> None:
    """The attention matrix of the chosen kernel and the query's weights under both kernels."""
    n, eps, temp = k["n"], k["eps"], k["temp"]
    labels = ["q"] + key_labels(n)
    w_main = res.ida if k["kernel"] == "ida" else res.softmax
    left, right = st.columns(2)
    ui.chart(
        container=left,
        fig=weights_heatmap(
            w_main, labels, key_labels(n), f"Attention matrix ({kernel_name(k)}): row q, then each key as a query"
        ),
        key="att_heatmap",
    )
    bars = {f"IDA, eps = {eps:g}": res.ida[0], f"softmax, T = {temp:g}": res.softmax[0]}
    colors = dict(zip(bars, (kernel_colour("ida"), kernel_colour("softmax")), strict=True))
    ui.chart(
        container=right,
        fig=weights_bars(bars, res.sq_dist, "Weights of the query q over the keys", colors),
        key="att_bars",
    )


def theory_box(res, n: int) -> None:
    """Section 2.8's degradation index, Theorem 3's effective rank and exact retrieval, for these keys."""
    st_ = res.stats
    idx = st_.degradation_index
    degraded = res.degraded
    with st.container(border=True):
        st.markdown("**What the theory says vs what we measured, for these keys**")
        lines = [
            f"Section 2.8: eps (n-1)/d_min^2 = {idx:.3g} "
            + ("**>= 1/2: the degradation regime.**" if degraded else "< 1/2: outside it.")
            + f" eps below {st_.max_safe_eps:.3g} leaves it; the paper's advice eps = 0.01 "
            f"E d^2 = {st_.advised_eps:.3g} here.",
            f"Theorem 3: eff-rank(K) = {st_.eff_rank:.3g} for n = {n}, d_min = "
            f"{st_.d_min:.3g}; the stated bound 1 + n eps^2/d_min^4 = "
            f"{st_.eff_rank_bound:.4g}.",
        ]
        if (ret := res.retrieval) is not None:
            lines.insert(
                0,
                f"Exact retrieval (section 2.3): q = k{ret.key + 1} gets W = {ret.weight:.6f} >= bound "
                f"{ret.bound:.6f} "
                + (":green[holds]" if ret.holds else ":red[violated]")
                + "; lower eps to push both to 1.",
            )
        st.markdown("\n".join(f"- {line}" for line in lines))


def stat_metrics(res, n: int) -> None:
    """The weights' statistics; with two keys or more, the degradation index, the effective rank and the
    theory box."""
    st_ = res.stats
    m = st.columns(4)
    m[0].metric("Largest IDA weight", f"{st_.largest_weight:.3f}")
    m[1].metric(
        "Effective number of keys, 1/sum w^2",
        f"{st_.eff_keys_ida:.2f}",
        f"softmax: {st_.eff_keys_softmax:.2f}",
        delta_color="off",
        delta_arrow="off",
    )
    if n < 2:
        return
    degraded = res.degraded
    m[2].metric(
        "eps (n-1) / d_min^2",
        f"{st_.degradation_index:.3g}",
        "degradation regime (>= 1/2)" if degraded else "outside the regime (< 1/2)",
        delta_color="red" if degraded else "green",
        delta_arrow="off",
    )
    m[3].metric("Effective rank of K (of n)", f"{st_.eff_rank:.2f}")
    theory_box(res, n)


def geometry_picture(res, k: dict) -> None:
    """The keys and the query in their space, sized by the chosen kernel's weights (d = 2, or 3 on the sphere)."""
    geometry = k["geometry"]
    if k["d"] in (2, GEOMETRIES[geometry].ambient_dim(2)):  # the plane, the disc, or the 2-sphere in 3-D
        w_main = res.ida if k["kernel"] == "ida" else res.softmax
        ui.chart(
            geometry_scatter(
                res.query,
                res.keys,
                w_main[0],
                geometry=geometry,
                c=k["c"],
                title=f"{GEOMETRIES[geometry].label}: marker area and line width = weight ({kernel_name(k)})",
            ),
            key="att_scatter",
        )
    else:
        st.info("The picture of the keys needs d = 2 (or d = 3 on the sphere); the weights above work in any d.")


def sweep_section(res, eps: float) -> None:
    """On request: IDA and softmax as eps shrinks, animated and as curves."""
    if not draw(KNOBS["att_sweep"]):
        return
    sw = res.sweep
    speed = draw(KNOBS["att_anim_speed"])
    ui.chart(
        eps_sweep_animation(sw.eps, sw.ida, sw.softmax, title="IDA vs softmax as eps shrinks:", speed=speed),
        key="att_anim",
    )
    ui.chart(sweep_summary_figure(sw.eps, sw.ida, sw.softmax, eps_now=eps), key="att_sweep_curves")
    st.caption(
        "Press Play: as eps -> 0 IDA's bars tend to the black marks of the bar chart above: one-hot when the "
        "query sits on a key, 1/d^2 normalised otherwise. Softmax has no eps and does not change."
    )


def download(res, k: dict) -> None:
    """Keys, query, weights and statistics as one JSON document."""
    ui.download_json(
        "Download keys, query, weights and statistics (JSON)",
        {
            "geometry": k["geometry"],
            "c": k["c"],
            "eps": k["eps"],
            "temperature": k["temp"],
            "keys": res.keys,
            "query": res.query,
            "ida_weights": res.ida,
            "softmax_weights": res.softmax,
            "stats": res.stats.to_dict(),
            "sweep": {"eps": res.sweep.eps, "ida": res.sweep.ida, "softmax": res.sweep.softmax},
        },
        "attention_lab.json",
        "att_dl",
    )


@st.fragment
def lab(s) -> None:
    """The live lab (a fragment: moving a knob reruns only this): knobs -> config -> lab -> figures."""
    k = key_knobs()
    q = query_knobs(k["n"], k["d"])
    res = run_lab(lab_config(k, q, s.seed), s)
    weight_figures(res, k)
    stat_metrics(res, k["n"])
    geometry_picture(res, k)
    sweep_section(res, k["eps"])
    download(res, k)


def claims_section() -> None:
    """The paper's claims of this page, each rerun with small sweeps, on request."""
    st.header("The paper's claims, measured")
    st.markdown(
        "Each panel reruns its experiment (small sweeps; `python -m georesolver_core claims` runs the full ones) "
        "and draws the paper's bound (dashed) against the measurement. Verdicts are computed, not typed."
    )
    if draw(KNOBS["att_claims"]):
        ui.page_claims("attention", "att", figures_on_request=True)


# --- The page -------------------------------------------------------------------------------------------------


def main() -> None:
    ui.page_header(
        "Attention lab",
        "One query attends to n keys. **IDA** weighs key j by (d(q, k_j)^2 + eps)^-1 in the plane, the Poincaré "
        "ball or on the sphere; **softmax** by exp(q.k_j / (T sqrt d)). The query starts on key 1: move eps and "
        "watch IDA go from uniform to one-hot. Put the query elsewhere and the weights tend to 1/d^2 instead "
        "(black marks).",
    )
    lab(ui.settings())
    claims_section()


main()
