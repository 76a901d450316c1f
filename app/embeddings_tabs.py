"""The Embeddings page's tabs below the live run: three geometries side by side, radius against depth,
the disk carried onto the sphere (paper section 8.2), and the data and downloads."""

from __future__ import annotations

import pandas as pd
import streamlit as st
import torch
import trainer_controls as tc
import ui

from georesolver_core.embeddings import (
    EmbeddingConfig,
    compare_hierarchy_capacity,
    history_table,
    node_table,
    sphere_maps,
)
from georesolver_core.embeddings.compare import compare_geometries
from georesolver_core.geometry import GEOMETRIES
from georesolver_core.labs import embeddings as lab
from georesolver_core.viz.embeddings import embedding_view, geometries_figure, norm_depth_figure

COMPARE_BUDGET_S = 60.0  # "Train all three" stops here at the latest (split evenly over the geometries)
state = st.session_state


def live_trainer():
    """The live run's trainer, or None before the first Start (or after Reset)."""
    job = tc.job("emb")
    if job is None:
        return None
    return job.result if job.result is not None else job.partial


def _compare(hier, cfg: EmbeddingConfig, device):
    """Train all three under the time budget; pressing Stop reruns the page, which ends the work."""
    stop_col, _ = st.columns([1, 3])
    stop_col.button("Stop", key="emb_compare_stop", icon=":material/stop:", help="Ends the comparison now.")
    with st.status("Training the three geometries with the same budget ...", expanded=True) as status:
        bar = st.progress(0.0)
        comparison = compare_geometries(
            hier,
            cfg,
            device=device,
            budget_s=COMPARE_BUDGET_S,
            progress=lambda frac, text: bar.progress(min(frac, 1.0), text=text),
        )
        status.update(label="Trained all three geometries", state="complete", expanded=False)
    state["emb_compare"] = {"sig": (hier.fingerprint, cfg, str(device)), "result": comparison}
    return comparison


def comparison(hier, config, device):
    """The saved comparison for these settings, or None."""
    saved = state.get("emb_compare")
    if config is not None and saved and saved["sig"] == (hier.fingerprint, config, str(device)):
        return saved["result"]
    return None


def three_geometries(hier, config, device, *, wordnet: bool) -> None:
    if wordnet:
        st.info(
            "WordNet trains with each geometry's own published recipe: pick the plane or the sphere above to "
            "train it live, or see all of them side by side in the **WordNet benchmark** tab."
        )
        return
    st.markdown(
        "The same hierarchy, dimension, loss, optimiser, learning rate, epochs and negatives in each geometry: "
        f"only the distance changes. At most {COMPARE_BUDGET_S:.0f} s in all, shared evenly."
    )
    result = comparison(hier, config, device)
    if st.button("Train all three", key="emb_compare_run", icon=":material/compare:", disabled=config is None):
        result = _compare(hier, config, device)
    if result is None:
        st.info("Press **Train all three** to measure the comparison with the settings on the left.")
        return
    if not result.complete:
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
        for geo, r in result.runs.items()
    ]
    ui.chart(geometries_figure(views, height=560), key="emb_compare_fig")
    table = pd.DataFrame(result.table())
    st.dataframe(table, hide_index=True, key="emb_compare_table")
    ui.download_csv("Download the table (CSV)", table, "embedding_comparison.csv", "emb_compare_dl")
    ui.theory_box([compare_hierarchy_capacity(result.metrics, dim=result.config.dim)])


def norm_vs_depth(hier, saved) -> None:
    tr = live_trainer()
    series = lab.radius_by_depth(hier, tr if tr is not None and tr.hierarchy is hier else None, saved)
    if not series:
        st.info("Train a Poincaré or Euclidean embedding (live, or all three) to see radius against depth.")
        return
    ui.chart(
        norm_depth_figure(series, y_title="radius (ball: sqrt(c)||x||, 1 = rim; plane: ||x|| / max)"),
        key="emb_norm_fig",
    )
    st.caption(
        "Radii in the frame training starts from (every node begins within 0.001 of the origin). Besides the "
        "distances, the ball and the plane train with a norm-order penalty (roots at the centre, each parent "
        "nearer the origin than its children): depth 0 shows how well it holds. "
        "The sphere has no centre and is left out. Data: "
        + ("the three-geometry comparison." if saved else "the live run (train all three for both).")
    )


def onto_the_sphere(hier, saved, seed: int) -> None:
    st.markdown(
        "Paper section 8.2: store in the ball, route on the sphere. Three maps carry the trained disk onto "
        "the sphere; MAP on the sphere says how much of the hierarchy survives the trip."
    )
    tr = live_trainer()
    ball = lab.ball_points(tr if tr is not None and tr.hierarchy is hier else None, saved)
    if ball is None:
        st.info("Train a Poincaré embedding first (live, or all three).")
    elif st.button("Map the disk onto the sphere", key="emb_maps_run", icon=":material/public:"):
        with st.spinner("Fitting the learnable map ..."):
            maps = sphere_maps.map_ball_to_sphere(
                ball.points, hier, c=ball.c, fit=sphere_maps.SphereMapFit(seed=seed)
            )
        state["emb_maps"] = {"fingerprint": hier.fingerprint, "maps": maps, "origin": ball.origin}
    kept = state.get("emb_maps")
    if kept and kept["fingerprint"] == hier.fingerprint:
        maps = kept["maps"]
        good = {k: m for k, m in maps.items() if m["points"] is not None}
        views = [
            embedding_view(m["points"], hier, geometry="sphere", title=f"{k}: MAP {m['metrics']['map']:.3f}")
            for k, m in good.items()
        ]
        ui.chart(geometries_figure(views), key="emb_maps_fig")
        st.caption(f"Mapped from the Poincaré embedding of {kept['origin']}.")
        st.markdown("\n".join(f"- {note}" for note in sphere_maps.sphere_map_notes(maps)))
        st.dataframe(pd.DataFrame(sphere_maps.sphere_map_table(maps)), hide_index=True, key="emb_maps_table")


def data_and_downloads(hier) -> None:
    tr = live_trainer()
    st.markdown(f"**{ui.escape_md(hier.name)}**: {ui.escape_md(hier.summary())}")
    edges = pd.DataFrame(hier.edge_table(), columns=["parent", "child"])
    ui.download_csv("Download the hierarchy (CSV parent,child)", edges, "hierarchy.csv", "emb_dl_edges")
    if tr is not None:
        coords = pd.DataFrame(node_table(tr.points(), tr.hierarchy, geometry=tr.config.geometry, c=tr.model.c))
        st.dataframe(coords, hide_index=True, key="emb_coords_table")
        ui.download_csv("Download the embedding (CSV)", coords, "embedding.csv", "emb_dl_coords")
        run = {"config": tr.config.__dict__, "history": history_table(tr)}
        ui.download_json("Download the run history (JSON)", run, "embedding_history.json", "emb_dl_history")
