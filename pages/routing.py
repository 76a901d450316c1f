"""Routing & memory: GSR routing decisions on the sphere, three routers' loads, DMG births, distributed traffic."""

from pathlib import Path

import numpy as np
import streamlit as st
import trainer_controls as tc
import ui
from knobs import Knob, draw, page_knobs

from georesolver_core.labs.routing import (
    MAX_TRAFFIC_BYTES,
    CompareConfig,
    DMGLabConfig,
    QualityConfig,
    SphereConfig,
    TrafficConfig,
    dmg_lab,
    live_traffic,
    load_traffic_report,
    quality_lab,
    router_table,
    routers_steps,
    sphere_lab,
    traffic_lab,
)
from georesolver_core.viz.routing import (
    comm_figure,
    dmg_pool_figure,
    dmg_stream_figure,
    load_figure,
    loss_curves_figure,
    quality_figure,
    routing_sphere_figure,
)

ASSET = Path(__file__).resolve().parent.parent / "assets" / "routing_comm.json"

state = st.session_state
CMP_BUDGET_S = 180.0  # seconds of training per press of "Train the three routers"
KNOBS = page_knobs(
    "routing",
    Knob("rt_protos", "slider", "Prototypes K_pool", 12, lo=1, hi=64),
    Knob("rt_queries", "slider", "Queries", 120, lo=1, hi=400),
    Knob("rt_k", "slider", "Top-K", 3, lo=1, hi=16),
    Knob("rt_eps", "log_slider", "eps (SIDA regulariser)", 0.05, lo=1e-6, hi=10.0,
         help="Large: the Top-K share the weight evenly. Small: they share it in proportion to 1/d^2, so the nearest "
         "takes it all only for queries at a prototype (spread 0)."),
    Knob("rt_spread", "slider", "Query spread around prototypes (rad)", 0.35, lo=0.0, hi=2.0, step=0.05),
    Knob("rt_tab", "tabs", "Tab", options=("Error vs K", "Three routers", "DMG stream", "Distributed traffic", "Claims"),
         extra=(("on_change", "rerun"),)),
    Knob("rt_at_protos", "toggle", "Queries equal to prototypes (else uniform random queries)"),
    Knob("rt_cmp_steps", "slider", "Training steps", 200, lo=20, hi=600, step=20),
    Knob("rt_cmp_experts", "select_slider", "Experts", 8, options=(2, 4, 8, 16)),
    Knob("rt_cmp_k", "select_slider", "Experts per token k", 1, options=(1, 2)),
    Knob("rt_cmp_cf", "slider", "Capacity factor", 1.25, lo=0.5, hi=4.0, step=0.25),
    Knob("rt_cmp_aux", "select_slider", "Balancing-loss weight", 0.01, options=(0.0, 0.001, 0.01, 0.1, 1.0)),
    Knob("rt_dmg_n", "slider", "Stream length", 800, lo=200, hi=2000, step=100),
    Knob("rt_dmg_shift", "slider", "Shift at step", 500, lo=100, hi=2000, step=50),
    Knob("rt_dmg_angle", "slider", "Shift angle (rad)", 1.2, lo=0.0, hi=3.14, step=0.05),
    Knob("rt_dmg_tau", "select_slider", "tau_base (rad^2)", 0.1, options=(0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)),
    Knob("rt_dmg_kappa", "slider", "kappa", 1.0, lo=0.0, hi=5.0, step=0.5),
    Knob("rt_dmg_gamma", "slider", "gamma", 1.0, lo=0.0, hi=5.0, step=0.5),
    Knob("rt_dmg_cap", "select_slider", "Pool capacity", 32, options=(4, 8, 16, 32, 64, 128)),
)  # fmt: skip


@st.cache_data(show_spinner=False, max_entries=64)
def _sphere(config: SphereConfig):
    return sphere_lab(config)


@st.cache_data(show_spinner=False, max_entries=16)
def _quality(config: QualityConfig):
    return quality_lab(config)


@st.cache_data(show_spinner=False, max_entries=16)
def _stream(config: DMGLabConfig):
    return dmg_lab(config)


@st.cache_data(show_spinner=False, max_entries=4)
def _live_comm(batches: tuple, world: int):
    return live_traffic(batches, world)


# --- 1. Routing decisions on the sphere ---------------------------------------------------------------------


def sphere_config(seed: int) -> SphereConfig:
    """The knobs of the prototypes and the queries, as the lab's config."""
    c1, c2, c3, c4 = st.columns(4)
    n_protos, n_queries = draw(KNOBS["rt_protos"], c1), draw(KNOBS["rt_queries"], c1)
    k_in, eps, spread = draw(KNOBS["rt_k"], c2), draw(KNOBS["rt_eps"], c3), draw(KNOBS["rt_spread"], c4)
    return SphereConfig(n_protos, n_queries, k_in, eps, spread, seed)


def sphere_metrics(sphere) -> None:
    """First-choice weight, tail mass, routing entropy and the prototypes never chosen first."""
    demo = sphere.demo
    m = st.columns(4)
    m[0].metric(
        "Mean weight of the first choice",
        f"{demo.weights[:, 0].mean():.3f}",
        f"eps -> 0 limit {demo.first_weight_limit:.3f}",
        delta_color="off",
        delta_arrow="off",
    )
    m[1].metric("Max tail mass left outside the Top-K", f"{demo.tail_mass.max():.3g}")
    m[2].metric(
        "Routing entropy H(c) (nats)",
        f"{demo.entropy:.3f}",
        f"bound log K_pool = {sphere.entropy_bound:.3f}",
        delta_color="off",
        delta_arrow="off",
        help="Of the first-choice load. The first choice is the nearest prototype whatever eps: this entropy "
        "moves with the queries and the pool, not with eps.",
    )
    m[3].metric("Prototypes never chosen first", sphere.never_chosen)


def routing_table(table) -> None:
    """Every query's Top-K and weights, in an expander."""
    # Drawn only while open: Streamlit renders a closed expander's content, and the table's data grid is about
    # 1.2 MB of JavaScript that every first visit would otherwise load.
    table_box = st.expander(
        "Routing table (every query's Top-K and weights)", key="rt_table_open", on_change="rerun"
    )
    if table_box.open:
        with table_box:
            st.dataframe(table, hide_index=True, key="rt_table", height=260)
            ui.download_csv("Download the routing table (CSV)", table, "gsr_routing.csv", "rt_table_dl")


def sphere_section(seed: int) -> SphereConfig:
    """GSR's decisions for one pool and one set of queries; returns the config (tab 1 reuses it)."""
    st.subheader("Routing decisions on the sphere")
    config = sphere_config(seed)
    sphere = _sphere(config)
    demo, k = sphere.demo, sphere.k
    if config.k > config.n_protos:
        st.caption(f"Only {config.n_protos} prototypes: routing to the Top-{k}.")
    ui.chart(
        routing_sphere_figure(
            demo.queries,
            demo.protos,
            demo.indices,
            demo.weights,
            title=f"Each query coloured by its Top-1 prototype; arcs to its Top-{k} (width = weight)",
        ),
        key="rt_sphere",
    )
    sphere_metrics(sphere)
    st.caption(
        f"As eps -> 0 the Top-{k} weights tend to 1/d^2 proportions, not to one-hot: with these queries (spread "
        f"{config.spread:g} rad) the first choice keeps {demo.first_weight_limit:.3f} on average. Set the spread to 0 "
        "(queries at prototypes) and the nearest prototype takes all the weight as eps shrinks."
    )
    routing_table(sphere.table)
    return config


# --- 2. Routing error vs K --------------------------------------------------------------------------------


def quality_theory(quality) -> None:
    """Theorem 10.1's bound against the measured errors."""
    q = quality.sweep
    with st.container(border=True):
        st.markdown("**Theorem 10.1: what the theory says vs what we measured**")
        ok = quality.unit_holds  # verdicts.verdict_inequality over every K, in the lab
        small_bound = q.small_bound[0]
        st.markdown(
            f"- Unit-norm values: measured worst error {'<=' if ok else '>'} printed bound at every K "
            f"({':green[holds]' if ok else ':red[violated]'}); at K=1: {q.worst_error[0]:.3g} vs {q.paper_bound[0]:.3g}.\n"
            f"- Values of norm {q.small_scale:.3g}: error {q.small_error[0]:.3g} vs printed bound "
            f"{small_bound:.3g}: the bound is quadratic in the values' scale, the error linear "
            f"({':green[holds]' if quality.small_holds else ':red[violated]'}).\n"
            f"- The exact worst case 2 T max||v|| is what the measurement attains (black dotted line)."
        )


def quality_tab(sphere: SphereConfig) -> None:
    """Tab 1: GSR's Top-K mix against full soft routing, on the pool and eps of section 1."""
    st.markdown(
        "Full soft routing o* = sum_e w_e v_e against GSR's Top-K mix, with the values that make the "
        "error largest (v = +u on the Top-K, -u elsewhere) and with random unit values."
    )
    at = draw(KNOBS["rt_at_protos"])
    quality = _quality(QualityConfig(max(sphere.n_protos, 2), sphere.eps, at, sphere.seed))
    q = quality.sweep
    ui.chart(quality_figure(q.ks, q.worst_error, q.random_error, q.paper_bound, q.exact_bound), key="rt_quality")
    quality_theory(quality)


# --- 3. Three routers trained on one task -----------------------------------------------------------------


def routers_config(seed: int) -> CompareConfig:
    """The knobs of the mixture-of-experts task, as the lab's config."""
    a, b, c = st.columns(3)
    steps, n_exp = draw(KNOBS["rt_cmp_steps"], a), draw(KNOBS["rt_cmp_experts"], a)
    kk, cf = draw(KNOBS["rt_cmp_k"], b), draw(KNOBS["rt_cmp_cf"], b)
    aux = draw(KNOBS["rt_cmp_aux"], c)
    return CompareConfig(
        n_experts=n_exp,
        n_clusters=8,
        k=kk,
        steps=steps,
        batch=128,
        capacity_factor=cf,
        aux_weight=aux,
        seed=seed,
    )


def routers_figures(job: tc.WorkerJob) -> None:
    """While training: the loss curves so far; then the loads, the statistics and the loss curves."""
    if job.result is None:  # training: the loss curves so far
        ui.chart(loss_curves_figure(job.partial), key="rt_losses_live")
        return
    res = job.result
    ui.chart(
        load_figure(
            {r.name: (r.label, r.stats.load_requested, r.stats.load_kept) for r in res.runs},
            title="Load per expert on a held-out batch",
        ),
        key="rt_load",
    )
    rows = router_table(res)
    # one row per statistic, one column per router: ten statistics side by side ran off the page
    shown = rows.set_index("router").T
    shown.columns = [label.split(" (")[0] for label in shown.columns]
    st.dataframe(shown, key="rt_load_table", width="stretch")
    ui.download_csv("Download the router statistics (CSV)", rows, "router_stats.csv", "rt_load_dl")
    ui.chart(loss_curves_figure({r.name: r.losses for r in res.runs}), key="rt_losses")


def routers_tab(seed: int) -> None:
    """Tab 2: GSR, a Switch-style gate and expert choice, trained live in a worker."""
    st.markdown(
        "GSR, a Switch-style softmax top-k gate (balancing loss, capacity factor) and expert choice, "
        "each in a mixture-of-experts layer trained on the same stream of a cluster-maps task."
    )
    cfg = routers_config(seed)
    tc.controls("rt_cmp", tc.in_worker(routers_steps, cfg), cfg, budget_s=CMP_BUDGET_S, what="Train")
    if tc.job("rt_cmp") is None:
        st.info(
            "Press **Train** to train the three routers (a few seconds to a minute on a CPU); Pause, Step and Resume "
            "continue the same run."
        )
    tc.live("rt_cmp", routers_figures)


# --- 4. DMG stream ------------------------------------------------------------------------------------------


def dmg_config(seed: int) -> DMGLabConfig:
    """The knobs of the stream and the spawn threshold, as the lab's config."""
    a, b, c = st.columns(3)
    n, shift_at = draw(KNOBS["rt_dmg_n"], a), draw(KNOBS["rt_dmg_shift"], a)
    angle, tau = draw(KNOBS["rt_dmg_angle"], b), draw(KNOBS["rt_dmg_tau"], b)
    kappa, gamma = draw(KNOBS["rt_dmg_kappa"], c), draw(KNOBS["rt_dmg_gamma"], c)
    capacity = draw(KNOBS["rt_dmg_cap"], a)
    return DMGLabConfig(n, shift_at, angle, tau, kappa, gamma, capacity, seed=seed)


def dmg_tab(seed: int) -> None:
    """Tab 3: DMG growing its pool on a stream that shifts (Lemma 9.1)."""
    st.markdown(
        "A stream from three clusters on the sphere; at the shift every cluster rotates by the chosen "
        "angle. A point spawns a prototype when its loss exceeds tau_t = tau_base + kappa sigma_t + "
        "gamma (spawn rate)."
    )
    config = dmg_config(seed)
    with st.spinner("Streaming through the pool ..."):
        lab = _stream(config)
    res, shift_at = lab.stream, lab.shift_at
    ui.chart(dmg_stream_figure(res.t, res.loss, res.tau, res.spawn_t, res.n_active, shift_at), key="rt_dmg_stream")
    ui.chart(dmg_pool_figure(res.points, np.arange(len(res.points)), res.protos, res.births), key="rt_dmg_pool")
    with st.container(border=True):
        st.markdown("**Lemma 9.1: what the theory says vs what we measured (this stream)**")
        delay = "no spawn after the shift" if res.delay is None else f"first spawn {res.delay} steps after it"
        st.markdown(
            f"- Before the shift (after 200 warm-up steps): {res.spawns_before} spawns; the lemma expects "
            f"O(log T) on a stationary stream.\n- Shift by {config.angle:.2f} rad at step {shift_at}: {delay}.\n"
            f"- Pool: {lab.used} of {lab.capacity} slots used; {res.refused} surprises refused (pool full)."
        )


# --- 5. Distributed traffic -------------------------------------------------------------------------------


def traffic_runs() -> tuple[list, str]:
    """The runs to show and where they come from: an upload, else a live run, else the shipped report."""
    up = st.file_uploader("Load a JSON written by the routing command", type=["json"], key="rt_comm_upload")
    uploaded, error = ui.read_upload(
        up, key="rt_comm_upload", max_bytes=MAX_TRAFFIC_BYTES, parse=load_traffic_report
    )
    runs, source = (uploaded, "uploaded file") if uploaded else ([], "")
    if error is not None:
        st.error(
            f"Not a routing report: {ui.escape_md(error)}. Produce one with "
            "`python -m georesolver_core routing --world-size 2 --json > routing.json`."
        )
    if st.button("Run live at P = 2 (B = 64..1024)", key="rt_comm_run", icon=":material/lan:"):
        with st.status("Starting 2 worker processes ...", expanded=False) as status:
            try:
                state["rt_comm_live"] = _live_comm((64, 256, 1024), 2)
                status.update(label="Distributed run finished", state="complete")
            except (RuntimeError, TimeoutError, OSError) as err:
                status.update(label="Distributed run failed", state="error")
                st.error(f"{err}. Try the command line above.")
    if not runs and "rt_comm_live" in state:
        runs, source = [state["rt_comm_live"]], "live run"
    if not runs and ASSET.exists():
        runs, source = (
            load_traffic_report(ASSET.read_text()),
            "the repository's headless run (assets/routing_comm.json)",
        )
    return runs, source


def traffic_figures(traffic, source: str) -> None:
    """Bytes and messages per batch or per query, the table, and how far each protocol's output differs."""
    st.caption(f"Source: {source}.")
    per = st.segmented_control("Per", ["batch", "query"], default="batch", key="rt_comm_per") or "batch"
    ui.chart(comm_figure(traffic.rows, per=per), key="rt_comm_fig")
    table = traffic.table
    st.dataframe(table, hide_index=True, key="rt_comm_table")
    ui.download_csv("Download the traffic table (CSV)", table, "routing_traffic.csv", "rt_comm_dl")
    for run in traffic.runs:
        differ = ", ".join(f"{ui.escape_md(k)} {float(v):.2g}" for k, v in run.max_abs_diff.items())
        other = [ui.escape_md(k) for k, v in run.same_indices.items() if not v]
        st.caption(
            f"P = {run.world_size}: largest |distributed - single-process| output per protocol: "
            f"{differ}. Top-K choices: "
            + (f"differ for {', '.join(other)}." if other else "the same as single-process for every protocol.")
        )


def traffic_tab() -> None:
    """Tab 4: the bytes on the wire of GSR's distributed protocol against an all-to-all."""
    st.markdown(
        "Bytes and messages counted on the wire by the real engine (torch.distributed, gloo): GSR's protocol of "
        "section 10.3 (exchanging Top-K candidates, or prototype shards) and a Switch-style all-to-all. "
        "Reproduce with `python -m georesolver_core routing --world-size 2 --json > routing.json`."
    )
    runs, source = traffic_runs()
    traffic = traffic_lab(TrafficConfig(tuple(runs)))
    if traffic.rows:
        traffic_figures(traffic, source)


# --- 6. Claims ------------------------------------------------------------------------------------------------


def claims_tab() -> None:
    """Tab 5: every claim of this page, on request."""
    st.markdown(
        "Every claim of this page (its `page` field), as the shipped report measured them; a claim the "
        "report lacks is measured here with small sweeps."
    )
    if st.button("Measure the routing claims", key="rt_claims_run", icon=":material/fact_check:"):
        state["rt_claims"] = True
    if state.get("rt_claims"):
        ui.page_claims("routing", "rt")
    else:
        st.info("Press **Measure the routing claims** to show them.")


# --- The page -------------------------------------------------------------------------------------------------


def main() -> None:
    ui.page_header(
        "Routing & memory",
        "**GSR** sends each query to its Top-K prototypes by SIDA weight on the sphere; **DMG** grows the prototype "
        "pool when the stream surprises it. Watch the decisions, compare routers, and count the bytes on the wire.",
    )
    s = ui.settings()
    sphere = sphere_section(s.seed)
    tabs = draw(KNOBS["rt_tab"])
    with tabs[0]:
        if tabs[0].open:
            quality_tab(sphere)
    with tabs[1]:
        if tabs[1].open:
            routers_tab(s.seed)
    with tabs[2]:
        if tabs[2].open:
            dmg_tab(s.seed)
    with tabs[3]:
        if tabs[3].open:
            traffic_tab()
    with tabs[4]:
        if tabs[4].open:
            claims_tab()


main()
