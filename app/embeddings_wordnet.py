"""The WordNet mammals example of the Embeddings page: the published recipe, the record beside the live
metrics, the mammal orders that colour the disk, and the benchmark tab (Nickel & Kiela 2017, section 4).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import streamlit as st

from georesolver_core.embeddings import EmbeddingTrainer
from georesolver_core.embeddings.benchmark import QUICK_ENTRIES, run_benchmark
from georesolver_core.embeddings.wordnet import PUBLISHED_MAMMALS, WORDNET_RECIPES, published, recipe
from georesolver_core.labs import embeddings as lab
from georesolver_core.tasks.hierarchy import Hierarchy
from georesolver_core.viz.embeddings import group_by_ancestor

BENCHMARK_JSON = Path(__file__).resolve().parent.parent / "assets" / "wordnet_benchmark.json"
NOUNS_JSON = BENCHMARK_JSON.with_name("wordnet_nouns.json")  # the noun-closure run (no coordinates)
QUICK_S = 5.0  # seconds per model of the benchmark's live re-run
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


def config(settings: dict, *, seed: int):
    """The published recipe of the chosen geometry at the chosen dimension and epochs; evaluation is left
    to the page's live schedule (``embeddings_live.train_steps``)."""
    return recipe(
        settings["geometry"], dim=settings["dim"], epochs=settings["epochs"], seed=seed, eval_every=10**5
    )


def recipe_caption(geometry: str) -> str:
    """What the published recipe sets, in place of the optimiser, rate, negatives and batch widgets."""
    r = WORDNET_RECIPES[geometry]
    opt = {"radam": "RiemannianAdam", "rsgd": "RiemannianSGD"}[r.optimizer]
    return (
        f"The published recipe is used, not the lab's optimiser, rate, negatives, batch or curvature: {opt} at "
        f"lr {r.lr:g}, {r.negatives} negatives, {r.batch_size} pairs per step, burn-in {r.burn_in} epochs at lr/10, "
        f"{r.dtype}, c = {r.c:g}."
    )


@st.cache_data(show_spinner=False, max_entries=4, hash_funcs={Hierarchy: lambda h: h.fingerprint})
def orders(hierarchy: Hierarchy) -> dict:
    """order label -> node indices of the mammal closure (``group_by_ancestor`` over MAMMAL_ORDERS)."""
    return group_by_ancestor(hierarchy, MAMMAL_ORDERS)


def _record_text(geometry: str, dim: int) -> tuple[str, str]:
    """(MAP, mean rank) of the published record at this geometry and dimension, or where it has one."""
    if record := published(geometry, dim):
        return f"{record['map']}", f"{record['mean_rank']}"
    return "none", "none"


def record_cards(trainer: EmbeddingTrainer, metrics: dict) -> None:
    """MAP and mean rank by the published protocol, each beside the published figure for this dimension."""
    geo, dim = trainer.config.geometry, trainer.config.dim
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
        + f" Measured at epoch {_measured_epoch(trainer)}."
    )


def _measured_epoch(trainer: EmbeddingTrainer) -> int:
    evaluated = [r["epoch"] for r in trainer.history if "map" in r]
    return evaluated[-1] if evaluated else trainer.epoch


def benchmark_tab(closure, *, seed: int) -> None:
    """The shipped side-by-side report, and a button that re-runs a small version live."""
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
    if NOUNS_JSON.is_file():
        nouns = json.loads(NOUNS_JSON.read_text(encoding="utf-8"))
        st.markdown("The full noun closure, trained once on its sparse relation and ranked exactly:")
        st.dataframe(pd.DataFrame(lab.closure_report_rows(nouns)), hide_index=True, key="emb_bench_nouns")
        load = ", ".join(f"{x:.1f}" for x in nouns["load_average_1_5_15min"])
        st.caption(
            f"{nouns['train_seconds']:.0f} s of training ({nouns['cpu_seconds']:.0f} cpu seconds in all, load "
            f"average {load} at the end) on the shared machine; the epochs column says how far it trained."
        )
    if st.button(
        f"Re-run a small version ({QUICK_S:.0f} s per model)", key="emb_bench_run", icon=":material/speed:"
    ):
        with st.spinner("Training the ball, the plane and the sphere at d = 5 ..."):
            st.session_state["emb_bench_quick"] = run_benchmark(
                closure,
                budget_s=QUICK_S,
                entries=QUICK_ENTRIES,
                with_gensim=False,
                seed=seed,
                overrides={"burn_in": 10},  # the recipe's 100-epoch burn-in would fill a few seconds
            )
    if quick := st.session_state.get("emb_bench_quick"):
        st.dataframe(pd.DataFrame(lab.benchmark_rows(quick)), hide_index=True, key="emb_bench_quick_table")
