"""Embeddings lab: hierarchies in the Poincaré ball, on the sphere and in the plane, trained live with geoopt."""

import json
from pathlib import Path

import pandas as pd
import streamlit as st
import torch
import ui

from georesolver_core.embeddings import (
    OPTIMIZERS,
    EmbeddingConfig,
    EmbeddingTrainer,
    compare_hierarchy_capacity,
    history_table,
    lab,
    node_table,
    sphere_maps,
)
from georesolver_core.embeddings.benchmark import QUICK_ENTRIES, run_benchmark
from georesolver_core.embeddings.compare import compare_geometries
from georesolver_core.embeddings.wordnet import published, recipe
from georesolver_core.geometry import GEOMETRIES
from georesolver_core.tasks import HIERARCHIES, MAX_CSV_BYTES, MAX_NAME_LEN, MAX_NODES, from_edge_list_csv
from georesolver_core.viz.embeddings import (
    MAX_LABELS,
    embedding_figure,
    embedding_view,
    geometries_figure,
    lineage,
    norm_depth_figure,
    training_history_figure,
)
from georesolver_core.wordnet.closure import load_mammals

CHUNK_S = 0.8  # training time per live refresh: long enough that redrawing is not most of the cycle
WORDNET_CHUNK_S = 4.0  # 1,181 nodes take ~1 s to redraw and measure: train longer between refreshes
LIVE_EVERY_S = 0.3  # pause between live refreshes while training
COMPARE_BUDGET_S = 60.0  # "Train all three" stops here at the latest (split evenly over the geometries)
SAMPLE_CSV = Path(__file__).resolve().parent.parent / "assets" / "sample_hierarchy.csv"
BENCHMARK_JSON = SAMPLE_CSV.parent / "wordnet_benchmark.json"
WORDNET = "wordnet"  # the page's own source beside HIERARCHIES: the shipped WordNet mammal closure
SOURCES = [*HIERARCHIES, WORDNET]
state = st.session_state


@st.cache_resource(show_spinner="Building the hierarchy ...", max_entries=16)
def _hierarchy(source: str, *args):
    """HIERARCHIES[source] built from its widgets' values; "csv" without a file is the bundled taxonomy."""
    if source == "csv":
        return from_edge_list_csv(SAMPLE_CSV.read_bytes(), name="animal taxonomy (bundled sample)")
    return HIERARCHIES[source].build(*args)


@st.cache_resource(show_spinner="Loading the WordNet mammal closure ...")
def _mammals():
    """The shipped closure, its lab hierarchy (direct pointers) and its directed relation (N, N)."""
    closure = load_mammals()
    return closure, closure.to_hierarchy(), closure.relation()


def hierarchy_controls(seed: int):
    """Hierarchy widgets -> a Hierarchy. A bad choice or upload shows the error and keeps the last good data."""
    source = st.selectbox(
        "Hierarchy",
        SOURCES,
        format_func=lambda k: "WordNet mammals (closure)" if k == WORDNET else HIERARCHIES[k].label,
        key="emb_source",
        bind="query-params",
        help="\n".join(f"**{v.label}**: {v.description}" for v in HIERARCHIES.values()),
    )
    try:
        if source == "tree":
            b = st.slider("Branching factor", 1, 6, 2, key="emb_branch", bind="query-params")
            d = st.slider("Depth (levels below the root)", 1, 12, 4, key="emb_depth", bind="query-params")
            hier = _hierarchy("tree", b, d)
        elif source == WORDNET:
            hier = _mammals()[1]
        elif source == "digits":
            n = st.slider("Digit images (leaves)", 8, 300, 40, key="emb_digits_n", bind="query-params")
            hier = _hierarchy("digits", n, seed)
        else:
            hier = _upload_or_sample()
    except ValueError as err:
        st.error(f"{ui.escape_md(err)}. Showing the previous hierarchy instead.", icon=":material/error:")
        hier = state.get("emb_last_hierarchy") or _hierarchy("tree", 2, 4)
    state["emb_last_hierarchy"] = hier
    return hier


def _upload_or_sample():
    up = st.file_uploader(
        "Your edge list: CSV with header `parent,child`",
        type=["csv", "txt"],
        key="emb_upload",
        help=f"One edge per line; no self-loops, no cycles, at most {MAX_NODES} nodes, names of at most "
        f"{MAX_NAME_LEN} characters, {MAX_CSV_BYTES // 1000:,} kB. Without a file: the bundled taxonomy.",
    )
    hier, error = ui.read_upload(
        up,
        key="emb_upload",
        max_bytes=MAX_CSV_BYTES,
        parse=lambda data: from_edge_list_csv(data, name=up.name[:MAX_NAME_LEN]),
    )
    if up is None:
        state.pop("emb_last_upload", None)
        return _hierarchy("csv")
    if error is not None:
        previous = state.get("emb_last_upload") or _hierarchy("csv")
        st.error(
            f"**{ui.escape_md(up.name[:MAX_NAME_LEN])}** was not used: {ui.escape_md(error)}. Fix the file and "
            f"upload it again; still showing *{ui.escape_md(previous.name)}*.",
            icon=":material/error:",
        )
        return previous
    state["emb_last_upload"] = hier
    return hier


ui.page_header(
    "Embeddings",
    "A hierarchy's nodes become points; training pulls parent and child together and pushes other nodes away "
    "(Nickel & Kiela's loss, geoopt's Riemannian optimisers). Watch leaves run to the rim of the Poincaré disk, "
    "where there is exponentially more room (paper section 5.2), and compare with the sphere and the plane.",
)
s = ui.settings()
dtype_name = "float64" if s.dtype == torch.float64 else "float32"


left, right = st.columns([1.2, 2.4], gap="large")
with left:
    st.subheader("Data")
    hier = hierarchy_controls(s.seed)
    st.caption(ui.escape_md(hier.summary() + "".join(f"; {n}" for n in hier.notes)))  # the name may be a file's
    st.subheader("Model")
    geometry = ui.geometry_picker("emb_geo", default="poincare", segmented=True)
    dim = st.slider(
        "Dimension",
        1,
        10,
        2,
        key="emb_dim",
        bind="query-params",
        help="Intrinsic: the sphere S^d lives in R^(d+1).",
    )
    c = ui.curvature_slider("emb_c", geometry, always=True)
    learn_c = st.toggle(
        "Learn the curvature", key="emb_learn_c", bind="query-params", disabled=not (geometry in GEOMETRIES and GEOMETRIES[geometry].uses_c)
    )
    st.subheader("Training")
    optimizer = st.radio(
        "Optimiser",
        list(OPTIMIZERS),
        format_func={"radam": "RiemannianAdam", "rsgd": "RiemannianSGD"}.get,
        key="emb_opt",
        horizontal=True,
        bind="query-params",
    )
    lr = ui.log_slider(
        "Learning rate",
        "emb_lr",
        1e-3,
        10.0,
        lab.LR_DEFAULT,
        help=f"RiemannianSGD wants about 10x more. The first {lab.BURN_IN} epochs run at a tenth of it (burn-in), "
        "so nodes find their places before leaves are pushed out. Higher rates reach a higher MAP sooner but "
        "let the root drift off the centre and crowd leaves at the rim.",
    )
    epochs = st.slider("Epochs", 10, 1000, 100, step=10, key="emb_epochs", bind="query-params")
    negatives = st.slider("Negatives per edge", 1, 50, 10, key="emb_neg", bind="query-params")
    batch = st.select_slider("Edges per step", [4, 8, 16, 32, 64, 128], 16, key="emb_batch", bind="query-params")
    autoplay = st.toggle("Restart training when a setting changes", True, key="emb_autoplay", bind="query-params")
    st.toggle(
        "Write the node names on the picture",
        False,
        key="emb_names",
        bind="query-params",
        help=f"The top levels of the tree, at most {MAX_LABELS} names (deeper levels crowd at the rim); "
        "hovering a point always shows its name.",
    )
    st.toggle(
        "Draw with the root at the centre",
        False,
        key="emb_centre",
        bind="query-params",
        help="The loss only sees distances, so the root may drift anywhere. This moves it to the centre by an "
        "isometry (a Möbius translation in the ball) for the picture; no distance changes.",
    )

wordnet = state.get("emb_source") == WORDNET
try:
    config = (
        recipe(
            geometry or "poincare",
            dim=dim,
            epochs=epochs,
            seed=s.seed,
            eval_every=5,  # the published MAP and mean rank, updating as it trains
        )
        if wordnet
        else lab.embedding_config(
            geometry=geometry or "poincare",
            dim=dim,
            c=c,
            learn_curvature=bool(learn_c) and geometry in GEOMETRIES and GEOMETRIES[geometry].uses_c,
            optimizer=optimizer or "radam",
            lr=lr,
            epochs=epochs,
            negatives=negatives,
            batch_size=batch,
            seed=s.seed,
            dtype=dtype_name,
        )
    )
except ValueError as err:
    right.error(f"These settings cannot train: {err}. Change the setting named above.", icon=":material/error:")
    config = None

sig = None if config is None else (hier.fingerprint, config, str(s.device))
if config is not None and (state.get("emb_trainer") is None or state.get("emb_sig") != sig):
    first, changed = state.get("emb_sig") is None, state.get("emb_sig") not in (None, sig)
    relation = _mammals()[2] if wordnet else None
    state["emb_trainer"] = EmbeddingTrainer(hier, config, device=s.device, relation=relation)
    state["emb_sig"] = sig
    state["emb_running"] = bool(autoplay) and (first or changed)


def _set_running(on: bool) -> None:
    state["emb_running"] = on


def _step() -> None:
    """One more epoch of the same run, then paused."""
    state["emb_running"] = False
    if (tr := state.get("emb_trainer")) is not None and not tr.done:
        tr.run(epochs=1)


def _stop() -> None:
    """End the run where it stands; its points and metrics stay on screen (Reset starts a new one)."""
    state["emb_running"] = False
    if (tr := state.get("emb_trainer")) is not None:
        tr.stop()


def _reset() -> None:
    state["emb_trainer"] = None
    state["emb_running"] = False


def _use_float64() -> None:
    # The precision widget sits in the sidebar, outside this fragment: a fragment rerun would not
    # redraw it, and the browser's old value would win on the next full run. Ask for a full run.
    state["dtype"] = "float64"
    state["emb_full_rerun"] = True


@st.fragment(run_every=LIVE_EVERY_S if state.get("emb_running") else None)
def live_training() -> None:
    """Only this part reruns while training: a chunk of epochs, then the progress bar and figures."""
    if state.pop("emb_full_rerun", False):
        st.rerun(scope="app")
    tr = state.get("emb_trainer")
    if tr is None:
        return
    running = bool(state.get("emb_running"))
    bar = st.progress(tr.progress, text=lab.progress_text(tr, running))
    if running and not tr.done:
        tr.run(
            time_budget_s=WORDNET_CHUNK_S if tr.hierarchy.n_nodes > 1000 else CHUNK_S,
            callbacks={"on_epoch_end": lambda t, _: bar.progress(t.progress, text=lab.progress_text(t, running))},
        )
        bar.progress(tr.progress, text=lab.progress_text(tr, running))
    if running and tr.done:
        state["emb_running"] = False
        st.rerun()  # the whole page: stops the timer and updates the buttons
    if tr.status == "diverged":
        st.error(
            f"Training stopped: {tr.message}. Press Reset after changing the setting.", icon=":material/error:"
        )
    metrics = tr.metrics or tr.evaluate()
    if tr.relation is not tr.hierarchy.adjacency:  # the WordNet closure: the published protocol and record
        record = published(tr.config.geometry, tr.config.dim)
        st.caption(
            "WordNet mammals: mean rank and MAP by the published protocol (each hyponym's ancestors ranked among "
            "the nodes unrelated to it), trained with the published recipe (Riemannian SGD, 50 negatives, "
            "burn-in, float64). "
            + (
                f"Nickel & Kiela (2017) report MAP {record['map']}, mean rank {record['mean_rank']} at d = "
                f"{tr.config.dim}."
                if record
                else "Nickel & Kiela (2017) report MAP 0.927, mean rank 1.26 at d = 5 in the ball."
            )
        )
    # three to a row: at 1400 px a row of five cut "Worst distortion" short
    cols = [col for _ in range(2) for col in st.columns(3)]
    for col, (key, label, fmt, explain) in zip(cols, lab.METRIC_LABELS, strict=False):
        col.metric(label, format(metrics[key], fmt), help=explain)
    cols[4].metric(
        "c (k = -c)",
        f"{tr.model.c:.3g}" if GEOMETRIES[tr.config.geometry].uses_c else "n/a",
        help="The ball's curvature parameter (learnt when 'Learn the curvature' is on).",
    )
    if warning := lab.rim_warning(tr):
        st.warning(warning, icon=":material/warning:")
        st.button("Switch to float64", key="emb_to_f64", on_click=_use_float64, icon=":material/swap_horiz:")
    centre = bool(state.get("emb_centre", False))
    found = state.get("emb_search")
    index = tr.hierarchy.nodes.index(found) if found in tr.hierarchy.nodes else None
    view = embedding_view(
        tr.points(),
        tr.hierarchy,
        geometry=tr.config.geometry,
        c=tr.model.c,
        root_at_centre=centre,
        centre=index if index is not None and state.get("emb_recentre") else None,
    )
    highlight = lineage(tr.hierarchy, index) if index is not None else None
    fig = embedding_figure(view, names=bool(state.get("emb_names")), height=680, highlight=highlight)
    ui.chart(fig, key="emb_live_fig")
    if tr.history:
        ui.chart(training_history_figure(tr.history), key="emb_hist_fig")


with right:
    tr = state.get("emb_trainer")
    running = bool(state.get("emb_running"))
    start = "Resume" if tr is not None and tr.progress > 0 else "Train"
    buttons = [  # label, key, callback, its arguments, disabled, icon
        (start, "emb_start", _set_running, (True,), tr is None or tr.done or running, ":material/play_arrow:"),
        ("Pause", "emb_pause", _set_running, (False,), not running, ":material/pause:"),
        ("Step", "emb_step", _step, (), tr is None or tr.done or running, ":material/skip_next:"),
        ("Stop", "emb_stop", _stop, (), tr is None or tr.done, ":material/stop:"),
        ("Reset", "emb_reset", _reset, (), False, ":material/restart_alt:"),
    ]
    for col, (label, key, callback, args, disabled, icon) in zip(st.columns(5), buttons, strict=True):
        col.button(label, key=key, on_click=callback, args=args, disabled=disabled, icon=icon, width="stretch")
    search, recentre = st.columns([3, 1.3], vertical_alignment="bottom")
    search.selectbox(
        "Find a node (its ancestors and descendants light up)",
        list(hier.nodes),
        index=None,
        key="emb_search",
        placeholder="type a name, e.g. primate.n.02",
    )
    recentre.toggle(
        "Centre on it",
        key="emb_recentre",
        help="A Möbius translation (an isometry) moves the found node to the centre.",
    )
    live_training()


def _compare(cfg: EmbeddingConfig):
    """Train all three under the time budget; pressing Stop reruns the page, which ends the work."""
    stop_col, _ = st.columns([1, 3])
    stop_col.button("Stop", key="emb_compare_stop", icon=":material/stop:", help="Ends the comparison now.")
    with st.status("Training the three geometries with the same budget ...", expanded=True) as status:
        bar = st.progress(0.0)
        comparison = compare_geometries(
            hier,
            cfg,
            device=s.device,
            budget_s=COMPARE_BUDGET_S,
            progress=lambda frac, text: bar.progress(min(frac, 1.0), text=text),
        )
        status.update(label="Trained all three geometries", state="complete", expanded=False)
    state["emb_compare"] = {"sig": (hier.fingerprint, cfg, str(s.device)), "result": comparison}
    return comparison


def _comparison():
    saved = state.get("emb_compare")
    if config is not None and saved and saved["sig"] == (hier.fingerprint, config, str(s.device)):
        return saved["result"]
    return None


TABS = ["Three geometries", "Norm vs depth", "Onto the sphere", "WordNet benchmark", "Data & downloads"]
tabs = st.tabs(TABS, key="emb_tab", on_change="rerun", bind="query-params")
with tabs[0]:
    if tabs[0].open:
        st.markdown(
            "The same hierarchy, dimension, loss, optimiser, learning rate, epochs and negatives in each geometry: "
            f"only the distance changes. At most {COMPARE_BUDGET_S:.0f} s in all, shared evenly."
        )
        comparison = _comparison()
        if st.button("Train all three", key="emb_compare_run", icon=":material/compare:", disabled=config is None):
            comparison = _compare(config)
        if comparison is None:
            st.info("Press **Train all three** to measure the comparison with the settings on the left.")
        else:
            if not comparison.complete:
                st.warning(
                    f"The {COMPARE_BUDGET_S:.0f} s budget ended some runs before {config.epochs} epochs (see "
                    "'epochs run'): each geometry had the same time, so the comparison is fair, but not final."
                )
            views = [
                embedding_view(
                    torch.from_numpy(r.points),
                    hier,
                    geometry=geo,
                    c=r.c,
                    title=f"{GEOMETRIES[geo].label}: MAP {r.metrics['map']:.3f}",
                    root_at_centre=bool(state.get("emb_centre", False)),
                )
                for geo, r in comparison.runs.items()
            ]
            ui.chart(geometries_figure(views, height=560), key="emb_compare_fig")
            table = pd.DataFrame(comparison.table())
            st.dataframe(table, hide_index=True, key="emb_compare_table")
            ui.download_csv("Download the table (CSV)", table, "embedding_comparison.csv", "emb_compare_dl")
            ui.theory_box([compare_hierarchy_capacity(comparison.metrics, dim=comparison.config.dim)])

with tabs[1]:
    if tabs[1].open:
        series = lab.radius_by_depth(hier, state.get("emb_trainer"), _comparison())
        if series:
            ui.chart(
                norm_depth_figure(series, y_title="radius (ball: sqrt(c)||x||, 1 = rim; plane: ||x|| / max)"),
                key="emb_norm_fig",
            )
            st.caption(
                "Radii in the frame training starts from (every node begins within 0.001 of the origin). The loss "
                "only sees distances, so nothing pins the root to the centre: where it drifts shows at depth 0. "
                "The sphere has no centre and is left out. Data: "
                + (
                    "the three-geometry comparison."
                    if _comparison()
                    else "the live run (train all three for both)."
                )
            )
        else:
            st.info("Train a Poincaré or Euclidean embedding (live, or all three) to see radius against depth.")

with tabs[2]:
    if tabs[2].open:
        st.markdown(
            "Paper section 8.2: store in the ball, route on the sphere. Three maps carry the trained disk onto "
            "the sphere; MAP on the sphere says how much of the hierarchy survives the trip."
        )
        ball = lab.ball_points(state.get("emb_trainer"), _comparison())
        if ball is None:
            st.info("Train a Poincaré embedding first (live, or all three).")
        elif st.button("Map the disk onto the sphere", key="emb_maps_run", icon=":material/public:"):
            with st.spinner("Fitting the learnable map ..."):
                maps = sphere_maps.map_ball_to_sphere(
                    ball.points, hier, c=ball.c, fit=sphere_maps.SphereMapFit(seed=s.seed)
                )
            state["emb_maps"] = {"fingerprint": hier.fingerprint, "maps": maps, "origin": ball.origin}
        saved = state.get("emb_maps")
        if saved and saved["fingerprint"] == hier.fingerprint:
            maps = saved["maps"]
            good = {k: m for k, m in maps.items() if m["points"] is not None}
            views = [
                embedding_view(m["points"], hier, geometry="sphere", title=f"{k}: MAP {m['metrics']['map']:.3f}")
                for k, m in good.items()
            ]
            ui.chart(geometries_figure(views), key="emb_maps_fig")
            st.caption(f"Mapped from the Poincaré embedding of {saved['origin']}.")
            st.markdown("\n".join(f"- {note}" for note in sphere_maps.sphere_map_notes(maps)))
            st.dataframe(pd.DataFrame(sphere_maps.sphere_map_table(maps)), hide_index=True, key="emb_maps_table")


with tabs[3]:
    if tabs[3].open:
        st.markdown(
            "WordNet mammals (1,181 nodes, 6,541 closure pairs), every model with the same training budget and "
            "measured by the same published protocol; written by `python -m georesolver_core embed --benchmark`."
        )
        if BENCHMARK_JSON.is_file():
            shipped = json.loads(BENCHMARK_JSON.read_text(encoding="utf-8"))
            st.dataframe(pd.DataFrame(lab.benchmark_rows(shipped)), hide_index=True, key="emb_bench_table")
            st.caption(f"{shipped['budget_s_per_entry']:.0f} s of training per model, {shipped['machine_note']}.")
        else:
            st.info(
                "No shipped benchmark report: run `python -m georesolver_core embed --benchmark --out "
                "assets/wordnet_benchmark.json`."
            )
        quick_s = 5.0
        if st.button(
            f"Re-run a small version ({quick_s:.0f} s per model)", key="emb_bench_run", icon=":material/speed:"
        ):
            with st.spinner("Training the ball, the plane and the sphere at d = 5 ..."):
                state["emb_bench_quick"] = run_benchmark(
                    _mammals()[0], budget_s=quick_s, entries=QUICK_ENTRIES, with_gensim=False, seed=s.seed
                )
        if quick := state.get("emb_bench_quick"):
            st.dataframe(pd.DataFrame(lab.benchmark_rows(quick)), hide_index=True, key="emb_bench_quick_table")

with tabs[4]:
    if tabs[4].open:
        tr = state.get("emb_trainer")
        st.markdown(f"**{ui.escape_md(hier.name)}**: {ui.escape_md(hier.summary())}")
        edges = pd.DataFrame(hier.edge_table(), columns=["parent", "child"])
        ui.download_csv("Download the hierarchy (CSV parent,child)", edges, "hierarchy.csv", "emb_dl_edges")
        if tr is not None:
            coords = pd.DataFrame(node_table(tr.points(), hier, geometry=tr.config.geometry, c=tr.model.c))
            st.dataframe(coords, hide_index=True, key="emb_coords_table")
            ui.download_csv("Download the embedding (CSV)", coords, "embedding.csv", "emb_dl_coords")
            run = {"config": tr.config.__dict__, "history": history_table(tr)}
            ui.download_json("Download the run history (JSON)", run, "embedding_history.json", "emb_dl_history")

st.header("The paper's claims for this page, measured")
if st.toggle("Show the claims' panels", key="emb_claims", bind="query-params"):
    ui.page_claims("embeddings", "emb")
