"""Embeddings lab: hierarchies in the Poincaré ball, on the sphere and in the plane, trained live with geoopt.

Top to bottom: the data, the model and its training (left), the live run (right), the tabs below it. The
live run is the shared trainer controls (``trainer_controls``) around ``labs.embeddings.embedding_steps``
in a worker of the server's job runner: it trains an epoch per step, so Pause keeps the run and Resume or
Step continue it, and sends a snapshot (points, history, metrics) after each, which this page draws. MAP and
mean rank are measured in the worker once the training since the last measurement took EVAL_RATIO times as
long as it. The data picker and the tabs' sections are in app/embeddings_page.py.
"""

import math
import time

import embeddings_page as sections
import streamlit as st
import torch
import trainer_controls as tc
import ui
import wordnet_trees_tab
from knobs import Knob, draw, page_knobs

from georesolver_core.embeddings import OPTIMIZERS, EmbeddingConfig
from georesolver_core.embeddings.trainer import EmbeddingStatus
from georesolver_core.embeddings.wordnet import PUBLISHED_MAMMALS, WORDNET_RECIPES, published, recipe
from georesolver_core.geometry import GEOMETRIES
from georesolver_core.labs import embeddings as lab
from georesolver_core.tasks.hierarchy import Hierarchy
from georesolver_core.viz.embeddings import (
    MAX_LABELS,
    embedding_figure,
    embedding_view,
    group_by_ancestor,
    lineage,
)
from georesolver_core.viz.embeddings import training_history_figure as history_figure

OPTIMIZER_LABELS = {"radam": "RiemannianAdam", "rsgd": "RiemannianSGD"}  # OPTIMIZERS key -> the radio's label
TABS = (
    "Three geometries", "Norm vs depth", "Onto the sphere", "WordNet benchmark", "Trees in the disk", "Data & downloads",
)  # fmt: skip
KNOBS = page_knobs(
    "embeddings",
    # the data (app/embeddings_page.py); the source is linked by its key (links.linked_choice), not its label
    Knob("emb_source", "selectbox", "Hierarchy", sections.DEFAULT_SOURCE, options=tuple(sections.SOURCES),
         format_func=sections.SOURCES.get, help=sections.SOURCE_HELP, bind=None),
    Knob("emb_branch", "slider", "Branching factor", 2, lo=1, hi=6),
    Knob("emb_depth", "slider", "Depth (levels below the root)", 4, lo=1, hi=12),
    Knob("emb_digits_n", "slider", "Digit images (leaves)", 40, lo=8, hi=300),
    # the model and its training; WordNet's recipe sets the rest
    Knob("emb_geo", "geometry", "Geometry", "poincare", extra=(("segmented", True),)),
    Knob("emb_dim", "slider", "Dimension", 2, lo=1, hi=10, help="Intrinsic: the sphere S^d lives in R^(d+1)."),
    Knob("emb_wn_epochs", "slider", "Epochs", 300, lo=10, hi=1000, step=10),
    Knob("emb_c", "curvature", "Curvature parameter c (curvature k = -c)", extra=(("always", True),)),
    Knob("emb_learn_c", "toggle", "Learn the curvature"),
    Knob("emb_opt", "radio", "Optimiser", "radam", options=tuple(OPTIMIZERS),
         format_func=OPTIMIZER_LABELS.get, extra=(("horizontal", True),)),
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
    Knob("emb_to_scale", "toggle", "Draw distances to scale (log map at the centre)", True,
         help="On: each node in its own direction at its true hyperbolic distance from the centre, so a tree tau "
         "deep per level spreads out. Off: the Poincaré disk itself, where distance r sits at radius tanh(r / 2) "
         "and a construction beyond the first levels is a thin ring on the rim."),
    Knob("emb_tab", "tabs", "Tab", options=TABS, extra=(("on_change", "rerun"),)),
    Knob("emb_claims", "toggle", "Show the claims' panels"),
)  # fmt: skip

PREFIX = "emb"  # trainer_controls keys: emb_start, emb_pause, emb_resume, emb_step, emb_stop, emb_reset; emb_job
BIG = 500  # nodes above which the picture uses smaller markers
REDRAW_S = 0.5  # the live run's picture is redrawn this often while it trains (the worker does not wait for it)
# The mammal orders the disk is coloured by: synset -> label, in priority order (WordNet is a DAG; a node
# under two of them takes the first). Most are children of placental.n.01; marsupials sit beside them.
MAMMAL_ORDERS = {
    "carnivore.n.01": "carnivores",
    "even-toed_ungulate.n.01": "even-toed ungulates",
    "odd-toed_ungulate.n.01": "odd-toed ungulates",
    "rodent.n.01": "rodents",
    "primate.n.02": "primates",
    "aquatic_mammal.n.01": "aquatic mammals (whales, seals, ...)",
    "bat.n.01": "bats",
    "lagomorph.n.01": "rabbits and hares",
    "metatherian.n.01": "marsupials",
    "insectivore.n.01": "insectivores",
    "edentate.n.01": "edentates",
}
state = st.session_state

# ---- The data (its widgets: app/embeddings_page.py) -------------------------------------------------------


def data_section(seed: int):
    """The hierarchy to embed and a line on what it is: (Hierarchy, whether it is WordNet's mammals)."""
    st.subheader("Data")
    key, hier = sections.hierarchy_controls(KNOBS, seed)
    st.caption(ui.escape_md(hier.summary() + "".join(f"; {n}" for n in hier.notes)))  # the name may be a file's
    return hier, key == sections.WORDNET


# ---- The model and its training ---------------------------------------------------------------------------


def recipe_caption(geometry: str) -> str:
    """What the published recipe sets, in place of the optimiser, rate, negatives and batch widgets."""
    r = WORDNET_RECIPES[geometry]
    opt = OPTIMIZER_LABELS[r.optimizer]
    return (
        f"The published recipe is used, not the lab's optimiser, rate, negatives, batch or curvature: {opt} at "
        f"lr {r.lr:g}, {r.negatives} negatives, {r.batch_size} pairs per step, burn-in {r.burn_in} epochs at lr/10, "
        f"{r.dtype}, c = {r.c:g}."
    )


def model_controls(wordnet: bool) -> dict:
    """Geometry, dimension and (outside WordNet, where the published recipe decides) curvature, optimiser,
    learning rate, negatives and batch: the widgets' values by name."""
    st.subheader("Model")
    geometry = draw(KNOBS["emb_geo"]) or KNOBS["emb_geo"].default
    dim = draw(KNOBS["emb_dim"])
    st.subheader("Training")
    if wordnet:
        epochs = draw(KNOBS["emb_wn_epochs"])
        st.caption(recipe_caption(geometry))
        return dict(geometry=geometry, dim=dim, epochs=epochs)
    curved = geometry in GEOMETRIES and GEOMETRIES[geometry].has_curvature_parameter
    c = draw(KNOBS["emb_c"], geometry=geometry)
    learn_c = draw(KNOBS["emb_learn_c"], disabled=not curved)
    optimizer = draw(KNOBS["emb_opt"])
    lr = draw(KNOBS["emb_lr"])
    epochs = draw(KNOBS["emb_epochs"])
    negatives = draw(KNOBS["emb_neg"])
    batch = draw(KNOBS["emb_batch"])
    return dict(
        geometry=geometry,
        dim=dim,
        c=c,
        learn_curvature=bool(learn_c) and curved,
        optimizer=optimizer or KNOBS["emb_opt"].default,
        lr=lr,
        epochs=epochs,
        negatives=negatives,
        batch_size=batch,
    )


def view_controls() -> tuple[float, bool]:
    """Time budget, restart-on-change and the two drawing toggles; returns (budget in s, autoplay)."""
    budget = draw(KNOBS["emb_budget"])
    autoplay = draw(KNOBS["emb_autoplay"])
    draw(KNOBS["emb_names"])
    draw(KNOBS["emb_centre"])
    return float(budget), bool(autoplay)


def wordnet_config(settings: dict, *, seed: int):
    """The published recipe of the chosen geometry at the chosen dimension and epochs; evaluation is left
    to the live schedule (``labs.embeddings.embedding_steps``)."""
    return recipe(
        settings["geometry"], dim=settings["dim"], epochs=settings["epochs"], seed=seed, eval_every=10**5
    )


def embedding_config(settings: dict, s, wordnet: bool, right):
    """The run's config from the widgets (WordNet: its published recipe), or None with the error on the right."""
    try:
        if wordnet:
            return wordnet_config(settings, seed=s.seed)
        dtype = "float64" if s.dtype == torch.float64 else "float32"
        return lab.page_schedule(EmbeddingConfig(**settings, seed=s.seed, dtype=dtype))
    except ValueError as err:
        right.error(
            f"These settings cannot train: {err}. Change the setting named above.", icon=":material/error:"
        )
        return None


# ---- The live run -----------------------------------------------------------------------------------------


def launcher(hier, config, *, wordnet: bool, device):
    """What Start runs: ``embedding_steps`` in a worker, on the hierarchy sent as plain values (WordNet's
    closure by name); the hierarchy is kept beside the job for drawing its snapshots."""

    def start(sig, budget_s: float):
        data = lab.run_data(hier, closure=wordnet)
        job = tc.in_worker(lab.embedding_steps, data, config, device=str(device))(sig, budget_s)
        state["emb_run_hierarchy"] = hier
        return job

    return start


def run_controls(hier, config, *, wordnet: bool, device, budget_s: float, autoplay: bool) -> None:
    """The six buttons; with ``autoplay`` a changed setting, or a first visit to a small hierarchy, starts a
    fresh run at once."""
    sig = None if config is None else (hier.fingerprint, config, str(device))
    start = launcher(hier, config, wordnet=wordnet, device=device)
    # A first visit starts small hierarchies at once; a big one (WordNet) waits for Train, so the page is
    # quick to open and idle until asked. A changed setting restarts either.
    first = "emb_last_sig" not in state
    if config is not None and autoplay and state.get("emb_last_sig") != sig and not (first and hier.n_nodes > BIG):
        tc.launch(PREFIX, start, sig, budget_s)
    state["emb_last_sig"] = sig
    tc.controls(PREFIX, start, sig, budget_s=budget_s, disabled=config is None)


def search_controls(hier) -> None:
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
    draw(KNOBS["emb_recentre"], recentre)


def _use_float64() -> None:
    # The precision widget sits in the sidebar, outside this fragment: a fragment rerun would not
    # redraw it, and the browser's old value would win on the next full run. Ask for a full run.
    state["dtype"] = "float64"
    state["emb_full_rerun"] = True


def _drawing_seconds(job: tc.WorkerJob, seconds: float) -> float:
    """Seconds this run's pictures have taken to draw, ``seconds`` (the newest) included."""
    timing = state.get("emb_timing")
    if timing is None or timing["job"] != id(job):
        timing = state["emb_timing"] = {"job": id(job), "draw": 0.0}
    timing["draw"] += seconds
    return timing["draw"]


def _time_caption(job: tc.WorkerJob, run: lab.EmbeddingSnapshot, drawing: float) -> None:
    measuring = max(0.0, job.seconds - run.train_seconds)
    st.caption(
        f"Time of this run: {run.train_seconds:.1f} s training, {measuring:.1f} s measuring (in a worker), "
        f"{drawing:.1f} s drawing."
    )


@st.cache_data(show_spinner=False, max_entries=4, hash_funcs={Hierarchy: lambda h: h.fingerprint})
def mammal_orders(hierarchy: Hierarchy) -> dict:
    """order label -> node indices of the mammal closure (``group_by_ancestor`` over MAMMAL_ORDERS)."""
    return group_by_ancestor(hierarchy, MAMMAL_ORDERS)


def _record_text(geometry: str, dim: int) -> tuple[str, str]:
    """(MAP, mean rank) of the published record at this geometry and dimension, or where it has one."""
    if record := published(geometry, dim):
        return f"{record['map']}", f"{record['mean_rank']}"
    return "none", "none"


def record_cards(run: lab.EmbeddingSnapshot, metrics: dict) -> None:
    """MAP and mean rank by the published protocol, each beside the published figure for this dimension."""
    geo, dim = run.config.geometry, run.config.dim
    pub_map, pub_rank = _record_text(geo, dim)
    cols = st.columns(4)
    cols[0].metric("MAP", f"{metrics['map']:.3f}", help="Mean average precision of the closure, 1 is perfect.")
    cols[1].metric(f"published MAP, d = {dim}", pub_map)
    cols[2].metric("Mean rank", f"{metrics['mean_rank']:.2f}", help="Rank of an ancestor among unrelated nodes.")
    cols[3].metric(f"published mean rank, d = {dim}", pub_rank)
    dims = ", ".join(
        f"d = {d}: MAP {r['map']}, mean rank {r['mean_rank']}" for d, r in PUBLISHED_MAMMALS["poincare"].items()
    )
    st.caption(
        "WordNet mammals (1,181 synsets, 6,541 hyponym-ancestor pairs): mean rank and MAP by the published "
        "protocol (each node's ancestors ranked among the nodes unrelated to it), measured while it trains. "
        f"Nickel & Kiela (2017) report, in the Poincaré ball, {dims}; "
        + ("they give no figure for this geometry and dimension." if pub_map == "none" else "the row above.")
        + f" Measured at epoch {run.measured_epoch}."
    )


def live_snapshot() -> tuple[lab.EmbeddingSnapshot, Hierarchy] | None:
    """The live run's newest snapshot and the hierarchy it trains, or None before the first Start (or after
    Reset, or before the first snapshot has come from its worker)."""
    job = tc.job(PREFIX)
    run = None if job is None else job.result if job.result is not None else job.partial
    return None if run is None else (run, state["emb_run_hierarchy"])


def draw_run(job: tc.WorkerJob) -> None:
    """The live run: its metrics (WordNet: beside the published record), the picture and the history."""
    if state.pop("emb_full_rerun", False):
        st.rerun(scope="app")
    t0 = time.perf_counter()
    run, hier = live_snapshot()
    if run.status == EmbeddingStatus.DIVERGED:
        st.error(
            f"Training stopped: {run.message}. Press Reset after changing the setting.", icon=":material/error:"
        )
        if not (math.isfinite(run.c) and run.c > 0):
            return  # the learnt curvature collapsed: there is no ball left to measure or draw the points in
    if not run.metrics:
        return  # diverged before the first measurement: no finite points to rank or draw
    if run.closure:
        record_cards(run, run.metrics)
    else:
        cols = [col for _ in range(2) for col in st.columns(3)]  # three to a row: five cut labels short
        for col, (key, label, fmt, explain) in zip(cols, lab.METRIC_LABELS, strict=False):
            col.metric(label, format(run.metrics[key], fmt), help=explain)
        cols[4].metric(
            "c (k = -c)",
            f"{run.c:.3g}" if GEOMETRIES[run.config.geometry].has_curvature_parameter else "n/a",
            help="The ball's curvature parameter (learnt when 'Learn the curvature' is on).",
        )
    if warning := lab.rim_warning(run):
        st.warning(warning, icon=":material/warning:")
        st.button("Switch to float64", key="emb_to_f64", on_click=_use_float64, icon=":material/swap_horiz:")
    found = state.get("emb_search")
    index = hier.nodes.index(found) if found in hier.nodes else None
    view = embedding_view(
        torch.from_numpy(run.points),
        hier,
        geometry=run.config.geometry,
        c=run.c,
        root_at_centre=bool(state.get("emb_centre", False)),
        centre=index if index is not None and state.get("emb_recentre") else None,
    )
    fig = embedding_figure(
        view,
        names=bool(state.get("emb_names")),
        height=720 if run.closure else 680,
        marker_size=6 if run.n_nodes > BIG else 10,
        highlight=lineage(hier, index) if index is not None else None,
        groups=mammal_orders(hier) if run.closure else None,
    )
    ui.chart(fig, key="emb_live_fig")
    if run.history:
        ui.chart(history_figure(list(run.history)), key="emb_hist_fig")
    _time_caption(job, run, _drawing_seconds(job, time.perf_counter() - t0))


def live_run() -> None:
    """The progress bar and ``draw_run``, redrawn in a fragment while the run goes on."""
    if tc.job(PREFIX) is None:
        st.info(
            "Press **Train** to train live; Pause, Step and Resume continue the same run, Stop keeps what was "
            "trained, Reset forgets it."
        )
    tc.live(PREFIX, draw_run, every_s=REDRAW_S)


def live_section(hier, config, s, *, wordnet: bool, budget_s: float, autoplay: bool) -> None:
    """The trainer's buttons, the node search, and the run drawn live."""
    run_controls(hier, config, wordnet=wordnet, device=s.device, budget_s=budget_s, autoplay=autoplay)
    search_controls(hier)
    live_run()


# ---- The tabs below the live run (app/embeddings_page.py) ------------------------------------------------


def tab_sections(hier, config, s, *, wordnet: bool) -> None:
    """The six tabs; only the open one is drawn. The comparison (tab 1) also feeds tabs 2 and 3, and so
    does the live run when it trains this hierarchy."""
    tabs = draw(KNOBS["emb_tab"])
    saved = sections.comparison(hier, config, s.device)
    live = live_snapshot()
    run = live[0] if live is not None and live[1].fingerprint == hier.fingerprint else None
    with tabs[0]:
        if tabs[0].open:
            sections.three_geometries(hier, config, s.device, wordnet=wordnet)
    with tabs[1]:
        if tabs[1].open:
            sections.norm_vs_depth(hier, saved, run)
    with tabs[2]:
        if tabs[2].open:
            sections.onto_the_sphere(hier, saved, run, s.seed)
    with tabs[3]:
        if tabs[3].open:
            sections.leaderboard()
            sections.benchmark_tab(seed=s.seed)
    with tabs[4]:
        if tabs[4].open:
            tau, to_scale = draw(KNOBS["emb_tau"]), draw(KNOBS["emb_to_scale"])
            wordnet_trees_tab.trees_tab(tau, seed=s.seed, to_scale=to_scale)
    with tabs[5]:
        if tabs[5].open:
            sections.data_and_downloads(hier, live)


# ---- The page ---------------------------------------------------------------------------------------------


def main() -> None:
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
        hier, wordnet = data_section(s.seed)
        settings = model_controls(wordnet)
        budget_s, autoplay = view_controls()
    config = embedding_config(settings, s, wordnet, right)
    with right:
        live_section(hier, config, s, wordnet=wordnet, budget_s=budget_s, autoplay=autoplay)
    tab_sections(hier, config, s, wordnet=wordnet)
    st.header("The paper's claims for this page, measured")
    if draw(KNOBS["emb_claims"]):
        ui.page_claims("embeddings", "emb")


main()
