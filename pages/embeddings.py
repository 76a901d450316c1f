"""Embeddings lab: hierarchies in the Poincaré ball, on the sphere and in the plane, trained live with geoopt."""

from dataclasses import asdict, replace

import numpy as np
import pandas as pd
import streamlit as st
import torch
import ui
from embeddings_ui import hierarchy_controls

from georesolver_core.embeddings import (
    OPTIMIZERS,
    EmbeddingConfig,
    EmbeddingTrainer,
    compare_hierarchy_capacity,
    history_table,
    node_table,
    relative_radius,
    train_embedding,
)
from georesolver_core.embeddings.trainer import SPHERE_MAPS, map_ball_to_sphere
from georesolver_core.geometry import GEOMETRIES
from georesolver_core.viz.embeddings import (
    embedding_figure,
    embedding_view,
    geometries_figure,
    norm_depth_figure,
    training_history_figure,
)

CHUNK_S = 0.8  # training time per live refresh: long enough that redrawing is not most of the cycle
LIVE_EVERY_S = 0.3  # pause between live refreshes while training
state = st.session_state

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
    st.caption(hier.summary() + "".join(f"; {n}" for n in hier.notes))
    st.subheader("Model")
    geometry = st.segmented_control(
        "Geometry",
        list(GEOMETRIES),
        default="poincare",
        format_func=lambda g: GEOMETRIES[g].label,
        key="emb_geo",
        bind="query-params",
        required=True,
    )
    dim = st.slider(
        "Dimension",
        1,
        10,
        2,
        key="emb_dim",
        bind="query-params",
        help="Intrinsic: the sphere S^d lives in R^(d+1).",
    )
    c = ui.log_slider(
        "Ball curvature parameter c (curvature k = -c)",
        "emb_c",
        0.1,
        10.0,
        1.0,
        help="The Poincaré ball has radius 1/sqrt(c). Only the ball uses it.",
    )
    learn_c = st.toggle(
        "Learn the curvature", key="emb_learn_c", bind="query-params", disabled=geometry != "poincare"
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
    lr = ui.log_slider("Learning rate", "emb_lr", 1e-3, 10.0, 0.1, help="RiemannianSGD wants about 10x more.")
    epochs = st.slider("Epochs", 10, 1000, 100, step=10, key="emb_epochs", bind="query-params")
    negatives = st.slider("Negatives per edge", 1, 50, 10, key="emb_neg", bind="query-params")
    batch = st.select_slider("Edges per step", [4, 8, 16, 32, 64, 128], 16, key="emb_batch", bind="query-params")
    autoplay = st.toggle("Restart training when a setting changes", True, key="emb_autoplay", bind="query-params")
    st.toggle(
        "Draw with the root at the centre",
        False,
        key="emb_centre",
        bind="query-params",
        help="The loss only sees distances, so the root may drift anywhere. This moves it to the centre by an "
        "isometry (a Möbius translation in the ball) for the picture; no distance changes.",
    )

try:
    config = EmbeddingConfig(
        geometry=geometry or "poincare",
        dim=dim,
        c=c,
        learn_curvature=bool(learn_c) and geometry == "poincare",
        optimizer=optimizer or "radam",
        lr=lr,
        epochs=epochs,
        negatives=negatives,
        batch_size=batch,
        seed=s.seed,
        dtype=dtype_name,
        eval_every=max(1, epochs // 20),
    )
except ValueError as err:
    right.error(f"These settings cannot train: {err}. Change the setting named above.", icon=":material/error:")
    config = None

sig = None if config is None else (hier.fingerprint, config, str(s.device))
if config is not None and (state.get("emb_trainer") is None or state.get("emb_sig") != sig):
    first, changed = state.get("emb_sig") is None, state.get("emb_sig") not in (None, sig)
    state["emb_trainer"] = EmbeddingTrainer(hier, config, device=s.device)
    state["emb_sig"] = sig
    state["emb_running"] = bool(autoplay) and (first or changed)


def _set_running(on: bool) -> None:
    state["emb_running"] = on


def _reset() -> None:
    state["emb_trainer"] = None
    state["emb_running"] = False


def _use_float64() -> None:
    state["dtype"] = "float64"


def _progress_text(tr) -> str:
    status = "training" if state.get("emb_running") and not tr.done else tr.status
    return f"epoch {tr.epoch} / {tr.config.epochs} ({status}), {tr.train_seconds:.1f} s of training"


@st.fragment(run_every=LIVE_EVERY_S if state.get("emb_running") else None)
def live_training() -> None:
    """Only this part reruns while training: a chunk of epochs, then the progress bar and figures."""
    tr = state.get("emb_trainer")
    if tr is None:
        return
    running = bool(state.get("emb_running"))
    bar = st.progress(tr.progress, text=_progress_text(tr))
    if running and not tr.done:
        tr.run(
            time_budget_s=CHUNK_S,
            callbacks={"on_epoch_end": lambda t, _: bar.progress(t.progress, text=_progress_text(t))},
        )
        bar.progress(tr.progress, text=_progress_text(tr))
    if running and tr.done:
        state["emb_running"] = False
        st.rerun()  # the whole page: stops the timer and updates the buttons
    if tr.status == "diverged":
        st.error(
            f"Training stopped: {tr.message}. Press Reset after changing the setting.", icon=":material/error:"
        )
    metrics = tr.metrics or tr.evaluate()
    cols = st.columns(5)
    cols[0].metric(
        "MAP (edges)", f"{metrics['map']:.3f}", help="Mean average precision of edge reconstruction; 1 is perfect."
    )
    cols[1].metric(
        "Mean rank",
        f"{metrics['mean_rank']:.2f}",
        help="Rank of a true neighbour among non-neighbours; 1 is perfect.",
    )
    cols[2].metric(
        "Avg distortion", f"{metrics['avg_distortion']:.3f}", help="Mean |s d / d_tree - 1| at the best scale s."
    )
    cols[3].metric("Worst distortion", f"{metrics['worst_distortion']:.3g}", help="max(d/d_tree) / min(d/d_tree).")
    cols[4].metric("c (k = -c)", f"{tr.model.c:.3g}" if tr.config.geometry == "poincare" else "n/a")
    rim = tr.rim_report()
    if rim and rim["n_at_cap"] > 0 and rim["dtype"] == "float32":
        st.warning(
            f"{rim['n_at_cap']} of {tr.hierarchy.n_nodes} points sit at float32's rim cap (sqrt(c)||x|| = "
            f"{rim['cap']:.3f}): their distances saturate and their gradients vanish, silently. float64 resolves "
            f"up to {rim['cap_float64']:.5f}.",
            icon=":material/warning:",
        )
        st.button("Switch to float64", key="emb_to_f64", on_click=_use_float64, icon=":material/swap_horiz:")
    view = embedding_view(
        tr.points(),
        tr.hierarchy,
        geometry=tr.config.geometry,
        c=tr.model.c,
        root_at_centre=bool(state.get("emb_centre", False)),
    )
    fig_col, hist_col = st.columns([1.5, 1])
    fig_col.plotly_chart(embedding_figure(view), key="emb_live_fig")
    if tr.history:
        hist_col.plotly_chart(training_history_figure(tr.history), key="emb_hist_fig")


with right:
    tr = state.get("emb_trainer")
    running = bool(state.get("emb_running"))
    b1, b2, b3 = st.columns(3)
    b1.button(
        "Resume" if tr is not None and tr.progress > 0 else "Train",
        key="emb_start",
        on_click=_set_running,
        args=(True,),
        disabled=tr is None or tr.done or running,
        icon=":material/play_arrow:",
        width="stretch",
    )
    b2.button(
        "Pause",
        key="emb_pause",
        on_click=_set_running,
        args=(False,),
        disabled=not running,
        icon=":material/pause:",
        width="stretch",
    )
    b3.button("Reset", key="emb_reset", on_click=_reset, icon=":material/restart_alt:", width="stretch")
    live_training()


def _cfg_key(cfg: EmbeddingConfig) -> tuple:
    return tuple(sorted(asdict(cfg).items()))


def _compare_key(cfg: EmbeddingConfig) -> tuple:
    # the comparison trains every geometry: the live run's choice of geometry is not part of it
    return (hier.fingerprint, _cfg_key(replace(cfg, geometry="poincare")))


@st.cache_data(show_spinner=False, max_entries=32)
def _train_one(_hier, fingerprint: str, cfg_key: tuple, device: str) -> dict:
    tr = train_embedding(_hier, EmbeddingConfig(**dict(cfg_key)), device=device)
    return {"points": tr.points().numpy(), "c": tr.model.c, "metrics": tr.metrics, "seconds": tr.train_seconds}


def _compare(cfg: EmbeddingConfig) -> dict:
    out = {}
    with st.status("Training the three geometries with the same budget ...", expanded=True) as status:
        bar = st.progress(0.0)
        for i, geo in enumerate(GEOMETRIES):
            g_cfg = replace(cfg, geometry=geo, learn_curvature=cfg.learn_curvature and geo == "poincare")
            bar.progress(i / len(GEOMETRIES), text=f"{GEOMETRIES[geo].label} ...")
            out[geo] = _train_one(hier, hier.fingerprint, _cfg_key(g_cfg), str(s.device))
        bar.progress(1.0, text="done")
        status.update(label="Trained all three geometries", state="complete", expanded=False)
    state["emb_compare"] = {"sig": _compare_key(cfg), "results": out}
    return out


def _comparison() -> dict | None:
    saved = state.get("emb_compare")
    if config is not None and saved and saved["sig"] == _compare_key(config):
        return saved["results"]
    return None


tabs = st.tabs(
    ["Three geometries", "Norm vs depth", "Onto the sphere", "Data & downloads"],
    key="emb_tab",
    on_change="rerun",
    bind="query-params",
)
with tabs[0]:
    if tabs[0].open:
        st.markdown(
            "The same hierarchy, dimension, loss, optimiser, learning rate, epochs and negatives in each geometry: "
            "only the distance changes."
        )
        results = _comparison()
        if st.button("Train all three", key="emb_compare_run", icon=":material/compare:", disabled=config is None):
            results = _compare(config)
        if results is None:
            st.info("Press **Train all three** to measure the comparison with the settings on the left.")
        else:
            views = [
                embedding_view(
                    torch.from_numpy(r["points"]),
                    hier,
                    geometry=geo,
                    c=r["c"],
                    title=f"{GEOMETRIES[geo].label}: MAP {r['metrics']['map']:.3f}",
                )
                for geo, r in results.items()
            ]
            st.plotly_chart(geometries_figure(views), key="emb_compare_fig")
            table = pd.DataFrame(
                [
                    {
                        "geometry": GEOMETRIES[g].label,
                        **r["metrics"],
                        "c": r["c"] if g == "poincare" else None,
                        "train seconds": r["seconds"],
                    }
                    for g, r in results.items()
                ]
            )
            st.dataframe(table, hide_index=True, key="emb_compare_table")
            ui.download_csv("Download the table (CSV)", table, "embedding_comparison.csv", "emb_compare_dl")
            ui.theory_box(
                [compare_hierarchy_capacity({g: r["metrics"] for g, r in results.items()}, dim=config.dim)]
            )

with tabs[1]:
    if tabs[1].open:
        results = _comparison()
        tr = state.get("emb_trainer")
        source = results or (
            {tr.config.geometry: {"points": tr.points().numpy(), "c": tr.model.c}} if tr is not None else {}
        )
        series = {
            geo: (
                hier.depth,
                relative_radius(torch.from_numpy(np.asarray(r["points"])), geometry=geo, c=r["c"]).numpy(),
            )
            for geo, r in source.items()
            if geo in ("poincare", "euclidean")
        }
        if series:
            st.plotly_chart(
                norm_depth_figure(series, y_title="radius (ball: sqrt(c)||x||, 1 = rim; plane: ||x|| / max)"),
                key="emb_norm_fig",
            )
            st.caption(
                "Radii in the frame training starts from (every node begins within 0.001 of the origin). The loss "
                "only sees distances, so nothing pins the root to the centre: where it drifts shows at depth 0. "
                "The sphere has no centre and is left out. "
                + (
                    "Data: the three-geometry comparison."
                    if results
                    else "Data: the live run (train all three for both)."
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
        results = _comparison()
        tr = state.get("emb_trainer")
        if tr is not None and tr.config.geometry == "poincare" and tr.epoch > 0:
            ball_pts, ball_c, origin = tr.points(), tr.model.c, "the live run"
        elif results:
            ball_pts, ball_c, origin = (
                torch.from_numpy(results["poincare"]["points"]),
                results["poincare"]["c"],
                "the comparison",
            )
        else:
            ball_pts = None
        if ball_pts is None:
            st.info("Train a Poincaré embedding first (live, or all three).")
        elif st.button("Map the disk onto the sphere", key="emb_maps_run", icon=":material/public:"):
            with st.spinner("Fitting the learnable map ..."):
                maps = map_ball_to_sphere(ball_pts, hier, c=ball_c, seed=s.seed)
            state["emb_maps"] = {"fingerprint": hier.fingerprint, "maps": maps, "origin": origin}
        saved = state.get("emb_maps")
        if saved and saved["fingerprint"] == hier.fingerprint:
            maps = saved["maps"]
            good = {k: m for k, m in maps.items() if m["points"] is not None}
            views = [
                embedding_view(m["points"], hier, geometry="sphere", title=f"{k}: MAP {m['metrics']['map']:.3f}")
                for k, m in good.items()
            ]
            st.plotly_chart(geometries_figure(views), key="emb_maps_fig")
            st.caption(f"Mapped from the Poincaré embedding of {saved['origin']}.")
            for k, m in maps.items():
                st.markdown(f"**{k}**: {SPHERE_MAPS[k]}" + (f" (failed: {m['error']})" if "error" in m else ""))
            st.dataframe(
                pd.DataFrame([{"mapping": k, **m["metrics"]} for k, m in good.items()]),
                hide_index=True,
                key="emb_maps_table",
            )

with tabs[3]:
    if tabs[3].open:
        tr = state.get("emb_trainer")
        st.markdown(f"**{hier.name}**: {hier.summary()}")
        edges = pd.DataFrame(hier.edge_table(), columns=["parent", "child"])
        ui.download_csv("Download the hierarchy (CSV parent,child)", edges, "hierarchy.csv", "emb_dl_edges")
        if tr is not None:
            coords = pd.DataFrame(node_table(tr.points(), hier, geometry=tr.config.geometry, c=tr.model.c))
            st.dataframe(coords, hide_index=True, key="emb_coords_table")
            ui.download_csv("Download the embedding (CSV)", coords, "embedding.csv", "emb_dl_coords")
            ui.download_json(
                "Download the run history (JSON)",
                {"config": tr.config.__dict__, "history": history_table(tr)},
                "embedding_history.json",
                "emb_dl_history",
            )
