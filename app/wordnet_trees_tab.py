"""The Embeddings page's tab "Trees in the disk": Sarkar's construction of the mammal closure at d = 2 (its tau
live) beside the shipped trained d = 2 mammals, then the shipped noun run (82,115 nodes, d = 10): its figures
beside the published ones, a sample of its points and the file itself. Nothing trains here.

Only pages/embeddings.py uses this module (a helper cannot sit under pages/: every file there is a page).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st
import torch
import ui

from georesolver_core.embeddings.construct import construct_closure
from georesolver_core.embeddings.fast import read_points
from georesolver_core.embeddings.runs import measure_points
from georesolver_core.labs import embeddings as lab
from georesolver_core.viz.embeddings import embedding_view, geometries_figure
from georesolver_core.viz.wordnet_trees import radius_histogram
from georesolver_core.wordnet.closure import load_mammals

ASSETS = Path(__file__).resolve().parent.parent / "assets"
MAMMALS_D2 = ASSETS / "wordnet_mammals_d2.npz"
NOUNS_NPZ = ASSETS / "wordnet_nouns_d10.npz"
NOUNS_JSON = ASSETS / "wordnet_nouns.json"
NOUNS_SHOWN = 2000  # nouns drawn in the histogram and listed (of 82,115)


@st.cache_data(show_spinner=False, max_entries=32)
def constructed(tau: float) -> tuple[np.ndarray, dict]:
    """Sarkar's construction of the mammal closure at ``tau`` and its figures (closure and edges)."""
    closure = load_mammals()
    points = construct_closure(closure, tau=tau)
    return points, measure_points(closure, points)


@st.cache_data(show_spinner=False, max_entries=2)
def trained() -> tuple[np.ndarray, dict] | None:
    """The shipped trained d = 2 mammal embedding and its figures, or None when it is not shipped."""
    if not MAMMALS_D2.is_file():
        return None
    names, points = read_points(MAMMALS_D2)
    closure = load_mammals()
    if names != list(closure.nodes):
        return None
    return points, measure_points(closure, points)


@st.cache_data(show_spinner=False, max_entries=2)
def nouns_sample(seed: int) -> dict | None:
    """A sample of the shipped noun points: names, distance to the origin, and the report; None if absent."""
    if not (NOUNS_NPZ.is_file() and NOUNS_JSON.is_file()):
        return None
    names, points = read_points(NOUNS_NPZ)
    pick, radius = lab.origin_distance_sample(points, n=NOUNS_SHOWN, seed=seed)
    return {
        "names": [names[i] for i in pick],
        "radius": radius,
        "n": len(names),
        "report": json.loads(NOUNS_JSON.read_text(encoding="utf-8")),
    }


@st.cache_data(show_spinner=False, max_entries=1)
def nouns_file() -> bytes:
    """The shipped noun points file as it is on disk (names and points; loads without pickle)."""
    return NOUNS_NPZ.read_bytes()


def _cards(label: str, m: dict) -> None:
    cols = st.columns(2)
    cols[0].metric(f"{label}: MAP (closure)", f"{m['closure']['map']:.3f}")
    cols[1].metric(f"{label}: MAP (edges)", f"{m['edges']['map']:.3f}")


def trees_tab(tau: float, seed: int, *, to_scale: bool = True) -> None:
    """Constructed vs trained mammals at d = 2 (tau from the page's knob; ``to_scale``: both drawn by their log
    map at the centre instead of in the disk), then the nouns and the leaderboard."""
    st.markdown(
        "**Why trees fit hyperbolic space.** Sarkar's construction places a tree in the Poincaré disk with no "
        "training: each node's children sit at distance tau on a cone pointing away from its parent. The disk has "
        "room for any number of children at any depth, because its circumference grows like e^r. The price is "
        "precision: a node k levels down sits about k tau from the centre, and float64 stops telling nodes apart "
        "past about 37. Move tau and watch the two MAPs: the tree's edges (Sala et al.'s measure) and the "
        "closure's ancestors (Nickel & Kiela's)."
    )
    try:
        points, m_con = constructed(tau)
    except ValueError as err:
        st.error(f"The construction refused tau = {tau:g}: {err}. Pick a tau inside the slider's range.")
        return
    shipped = trained()
    hier = load_mammals().to_hierarchy()
    views = [
        embedding_view(
            torch.as_tensor(points),
            hier,
            geometry="poincare",
            title=f"constructed, tau = {tau:g}",
            to_scale=to_scale,
        )
    ]
    left, right = st.columns(2)
    with left:
        _cards("constructed", m_con)
    if shipped is None:
        right.info("No trained d = 2 embedding is shipped: run the leaderboard command in the README to write it.")
    else:
        views.append(
            embedding_view(
                torch.as_tensor(shipped[0]), hier, geometry="poincare", title="trained, d = 2", to_scale=to_scale
            )
        )
        with right:
            _cards("trained", shipped[1])
    ui.chart(geometries_figure(views, height=520), key="emb_trees_fig")
    st.caption(
        "Mammal closure, 1,181 nodes, spanning tree of depth 9 with up to 35 children. MAP (edges): each node's "
        "parent and children ranked among all nodes. MAP (closure): each node's ancestors ranked among the nodes "
        "unrelated to it, the published protocol. A tree embedding puts a node's siblings nearer than its "
        "grandparent, so the construction scores its edges, not its ancestors; training optimises the ancestors."
        + (
            " Drawn to scale: a node k levels down sits about k tau from the centre, and its subtree, seen from "
            "the centre, fills an angle that shrinks like e^(-k tau): at tau = 5 the tree is a needle; lower tau "
            "opens it (and costs MAP)."
            if to_scale
            else " In the disk, distance r sits at radius tanh(r / 2): past the first levels every node is on the rim."
        )
    )
    sample = nouns_sample(seed)
    st.subheader("The noun closure, trained (82,115 nodes, d = 10)")
    if sample is None:
        st.info("The noun embedding is not shipped (assets/wordnet_nouns_d10.npz).")
    else:
        rep = sample["report"]
        pub, m = rep.get("published") or {}, rep["metrics"]
        cols = st.columns(4)
        cols[0].metric(
            "MAP",
            f"{m['map']:.3f}",
            delta=f"{m['map'] - pub['map']:+.3f} vs published {pub['map']}" if pub else None,
            help="every node ranked exactly, published protocol; published: Nickel & Kiela (2017), quoted",
        )
        cols[1].metric(
            "Mean rank",
            f"{m['mean_rank']:.2f}",
            delta=f"{m['mean_rank'] - pub['mean_rank']:+.2f} vs published {pub['mean_rank']}" if pub else None,
            delta_color="inverse",  # a lower rank is better
        )
        cols[2].metric("Training wall s", f"{rep['train_seconds']:.0f}")
        cols[3].metric("CPU s (all)", f"{rep['cpu_seconds']:.0f}")
        ui.chart(
            radius_histogram(
                sample["radius"], title=f"{len(sample['radius']):,} of {sample['n']:,} nouns: how far out"
            ),
            key="emb_nouns_radius",
        )
        order = np.argsort(sample["radius"])
        table = pd.DataFrame(
            {"synset": [sample["names"][i] for i in order], "d(0, x)": np.round(sample["radius"][order], 3)}
        )
        st.dataframe(table, hide_index=True, height=240, key="emb_nouns_table")
        st.caption("General synsets sit near the centre, specific ones near the rim (sorted by distance).")
        st.download_button(
            f"Download all {sample['n']:,} points (.npz: names, points)",
            nouns_file(),
            file_name=NOUNS_NPZ.name,
            mime="application/octet-stream",
            key="emb_nouns_dl",
            icon=":material/download:",
            help="np.load(file, allow_pickle=False): names (N,) and points (N, 10) in the Poincaré ball, c = 1",
        )
