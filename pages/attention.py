"""Attention lab: live IDA and softmax weights in three geometries, and the Euclidean theorems measured."""

import dataclasses

import lecture
import numpy as np
import pandas as pd
import streamlit as st
import ui

from georesolver_core.attention.diagnostics import QUERY_MODES, attention_lab
from georesolver_core.attention.lab_stats import LabConfig
from georesolver_core.attention.layer import KERNEL_CHOICES
from georesolver_core.claims import HOLDS
from georesolver_core.device import DTYPES
from georesolver_core.geometry import GEOMETRIES
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

ui.page_header(
    "Attention lab",
    "One query attends to n keys. **IDA** weighs key j by (d(q, k_j)^2 + eps)^-1 in the plane, the Poincaré ball "
    "or on the sphere; **softmax** by exp(q.k_j / (T sqrt d)). The query starts on key 1: move eps and watch IDA "
    "go from uniform to one-hot. Put the query elsewhere and the weights tend to 1/d^2 instead (black marks).",
)
s = ui.settings()
dtype_name = str(s.dtype).replace("torch.", "")


@st.cache_data(show_spinner=False, max_entries=64)
def _lab(cfg: LabConfig, dtype_name: str, device: str):
    return attention_lab(**dataclasses.asdict(cfg), dtype=DTYPES[dtype_name], device=device)


@st.fragment
def lab() -> None:
    c1, c2, c3, c4 = st.columns(4)
    geometry = lecture.widget(
        c1.selectbox,
        "Geometry",
        list(GEOMETRIES),
        format_func=lambda g: GEOMETRIES[g].label,
        key="att_geometry",
        bind="query-params",
    )
    kernel = (
        lecture.widget(
            c1.segmented_control,
            "Kernel for the matrix and the picture",
            list(KERNEL_CHOICES),
            default="ida",
            format_func=lambda k: "IDA" if k == "ida" else "softmax",
            key="att_kernel",
            bind="query-params",
        )
        or "ida"
    )
    n = lecture.widget(c2.slider, "Number of keys n", 1, N_MAX, 8, key="att_n", bind="query-params")
    d = lecture.widget(
        c2.slider,
        "Dimension d",
        2,
        D_MAX,
        2,
        key="att_d",
        bind="query-params",
        help="Pictures need d = 2 (or 3 on the sphere).",
    )
    with c3:
        eps = ui.log_slider(
            "eps (IDA regulariser)",
            "att_eps",
            EPS_LO,
            EPS_HI,
            0.05,
            help="Large: uniform. Small: a key at distance 0 takes all the weight; with no key that close, the "
            "weights tend to 1/d^2 (normalised), not to one-hot.",
        )
        temp = ui.log_slider("Softmax temperature T", "att_temp", 0.01, 100.0, 1.0)
    spread = lecture.widget(
        c4.slider, "Spread of the keys", 0.1, 3.0, 1.0, 0.1, key="att_spread", bind="query-params"
    )
    c = ui.curvature_slider(
        "att_c",
        geometry,
        container=c4,
        help="The ball has radius 1/sqrt(c); keys sit at norm <= 0.9/sqrt(c).",
    )
    q1, q2 = st.columns([2, 3])
    modes = list(QUERY_MODES)
    mode = lecture.widget(
        q1.radio,
        "Where the query sits",
        modes,
        index=modes.index("key"),  # on a key, exact retrieval is what eps -> 0 shows
        format_func=QUERY_MODES.get,
        key="att_query",
        horizontal=True,
        bind="query-params",
    )
    j, j2, t, coords = 0, 1, 0.5, None
    with q2:
        if mode == "between" and n < 2:
            st.warning("A query between two keys needs n >= 2 keys; showing a random query instead.")
            mode = "random"
        if mode in ("key", "between"):
            # The index widgets keep their full range so a smaller n never invalidates a stored value;
            # an index beyond n is clamped to the last key and said so.
            a, b, cc = st.columns(3)
            j_in = lecture.widget(a.number_input, "key j", 1, N_MAX, 1, key="att_j", bind="query-params")
            j = min(j_in, n) - 1
            if mode == "between":
                j2_in = lecture.widget(b.number_input, "key j2", 1, N_MAX, 2, key="att_j2", bind="query-params")
                j2 = min(j2_in, n) - 1
                t = lecture.widget(
                    cc.slider,
                    "position t along the geodesic",
                    0.0,
                    1.0,
                    0.5,
                    0.05,
                    key="att_t",
                    bind="query-params",
                )
            if j_in > n or (mode == "between" and j2_in > n):
                st.caption(f"Only {n} keys: indices above {n} use key {n}.")
        elif mode == "custom":
            default = pd.DataFrame([[0.05] * d], columns=[f"x{i + 1}" for i in range(d)])
            edited = st.data_editor(default, key=f"att_coords_{d}", num_rows="fixed", hide_index=True)
            coords = tuple(float(v) for v in np.nan_to_num(edited.to_numpy(dtype=float)[0], nan=0.0))
            st.caption("Typed coordinates; on the sphere they are normalised onto it.")

    cfg = LabConfig(
        geometry=geometry, n=n, d=d, eps=eps, temperature=temp, mode=mode, j=j, j2=j2, t=t, coords=coords,
        spread=spread, c=c, seed=s.seed,
    )  # fmt: skip
    try:
        res = _lab(cfg, dtype_name, str(s.device))
    except ValueError as err:
        fix = "keep the norm below 1/sqrt(c)" if GEOMETRIES[geometry].uses_c else "change the coordinates"
        st.error(f"The query could not be placed: {err}. Fix: {fix}; showing a random query instead.")
        random_query = dataclasses.replace(cfg, mode="random", j=0, j2=1, t=0.5, coords=None)
        res = _lab(random_query, dtype_name, str(s.device))

    labels = ["q"] + key_labels(n)
    w_main = res.ida if kernel == "ida" else res.softmax
    kname = f"IDA, eps = {eps:g}" if kernel == "ida" else f"softmax, T = {temp:g}"
    left, right = st.columns(2)
    ui.chart(
        container=left,
        fig=weights_heatmap(
            w_main, labels, key_labels(n), f"Attention matrix ({kname}): row q, then each key as a query"
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
    if n >= 2:
        idx = st_.degradation_index
        degraded = res.degraded
        m[2].metric(
            "eps (n-1) / d_min^2",
            f"{idx:.3g}",
            "degradation regime (>= 1/2)" if degraded else "outside the regime (< 1/2)",
            delta_color="red" if degraded else "green",
            delta_arrow="off",
        )
        m[3].metric("Effective rank of K (of n)", f"{st_.eff_rank:.2f}")
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
                    + (":green[holds]" if ret.verdict == HOLDS else ":red[violated]")
                    + "; lower eps to push both to 1.",
                )
            st.markdown("\n".join(f"- {line}" for line in lines))

    if d in (2, 2 + GEOMETRIES[geometry].extra_dims):  # the plane, the disc, or the 2-sphere in 3-D
        ui.chart(
            geometry_scatter(
                res.query,
                res.keys,
                w_main[0],
                geometry=geometry,
                c=c,
                title=f"{GEOMETRIES[geometry].label}: marker area and line width = weight ({kname})",
            ),
            key="att_scatter",
        )
    else:
        st.info("The picture of the keys needs d = 2 (or d = 3 on the sphere); the weights above work in any d.")

    if lecture.widget(st.toggle, "Show the eps sweep (animation)", key="att_sweep", bind="query-params"):
        sw = res.sweep
        speed = lecture.widget(
            st.select_slider, "Play speed", ANIMATION_SPEEDS, value=1.0, format_func=lambda v: f"{v:g}x",
            key="att_anim_speed", bind="query-params", help="How fast Play runs through eps (1x: 350 ms a frame).",
        )  # fmt: skip
        ui.chart(
            eps_sweep_animation(sw.eps, sw.ida, sw.softmax, title="IDA vs softmax as eps shrinks:", speed=speed),
            key="att_anim",
        )
        ui.chart(sweep_summary_figure(sw.eps, sw.ida, sw.softmax, eps_now=eps), key="att_sweep_curves")
        st.caption(
            "Press Play: as eps -> 0 IDA's bars tend to the black marks of the bar chart above: one-hot when the "
            "query sits on a key, 1/d^2 normalised otherwise. Softmax has no eps and does not change."
        )
    ui.download_json(
        "Download keys, query, weights and statistics (JSON)",
        {
            "geometry": geometry,
            "c": c,
            "eps": eps,
            "temperature": temp,
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


lab()


st.header("The paper's claims, measured")
st.markdown(
    "Each panel reruns its experiment (small sweeps; `python -m georesolver_core claims` runs the full ones) "
    "and draws the paper's bound (dashed) against the measurement. Verdicts are computed, not typed."
)
show_claims = lecture.widget(
    st.toggle, "Show the claims' panels", value=True, key="att_claims", bind="query-params"
)


if show_claims:
    ui.page_claims("attention", "att")
