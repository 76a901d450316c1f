"""The Embeddings page's data picker and its tabs below the live run (pages/embeddings.py draws the rest).

Only that page uses this module. It is apart from the page because together they run past 900 lines, and
a helper cannot sit under pages/: every file there is read as a page (the navigation's list, the page tests).

- The data: which hierarchy is embedded (WordNet mammals first), linked by a stable key. The source
  picker's URL value is its key (``?emb_source=wordnet``), not its label: a bound selectbox would write the
  label, which changes when the wording does. Links written by earlier versions carry the label; it still
  selects its source. Any other value falls back to the default with the link notice.
- The tabs: three geometries side by side, radius against depth, the disk carried onto the sphere (paper
  section 8.2), the WordNet benchmark and leaderboard (Nickel & Kiela 2017, section 4), and the data and
  downloads. The tab "Trees in the disk" is app/wordnet_trees_tab.py.

The widgets are drawn from rows of the page's knob table (``KNOBS`` in pages/embeddings.py, passed in as
``table``).
"""

from __future__ import annotations

import json
from pathlib import Path

import links
import pandas as pd
import streamlit as st
import torch
import trainer_controls as tc
import ui
from knobs import Knob, draw
from wordnet_trees_tab import NOUNS_JSON

from georesolver_core.embeddings import (
    compare_hierarchy_capacity,
    history_table,
    node_table,
    sphere_maps,
)
from georesolver_core.embeddings.leaderboard import leaderboard_table
from georesolver_core.geometry import GEOMETRIES
from georesolver_core.labs import embeddings as lab
from georesolver_core.tasks import HIERARCHIES, MAX_CSV_BYTES, MAX_NAME_LEN, MAX_NODES, from_edge_list_csv
from georesolver_core.viz.embeddings import embedding_view, geometries_figure, norm_depth_figure
from georesolver_core.wordnet.closure import load_mammals

ASSETS = Path(__file__).resolve().parent.parent / "assets"
LEADERBOARD_JSON = ASSETS / "wordnet_leaderboard.json"
BENCHMARK_JSON = ASSETS / "wordnet_benchmark.json"
BENCH_JOB_S = 120.0  # the re-run's job stops here at the latest (its three models train 5 s each)
state = st.session_state

# ---- The data --------------------------------------------------------------------------------------------

WORDNET = "wordnet"  # the page's own source beside HIERARCHIES: the shipped WordNet mammal closure
# key -> label, WordNet first: the example everyone in the field knows (Nickel & Kiela 2017)
SOURCES = {WORDNET: "WordNet mammals (closure)", **{k: v.label for k, v in HIERARCHIES.items()}}
DEFAULT_SOURCE = WORDNET
SOURCE_HELP = (  # the source picker's help: what each source is
    "**WordNet mammals**: the 1,181 mammal synsets of WordNet 3.0 and their 6,541 hyponym-ancestor pairs, trained "
    "with the published recipe.\n" + "\n".join(f"**{v.label}**: {v.description}" for v in HIERARCHIES.values())
)
SAMPLE_CSV = ASSETS / "sample_hierarchy.csv"


@st.cache_resource(show_spinner="Building the hierarchy ...", max_entries=16)
def _hierarchy(source: str, *args):
    """HIERARCHIES[source] built from its widgets' values; "csv" without a file is the bundled taxonomy."""
    if source == "csv":
        return from_edge_list_csv(SAMPLE_CSV.read_bytes(), name="animal taxonomy (bundled sample)")
    return HIERARCHIES[source].build(*args)


@st.cache_resource(show_spinner="Loading the WordNet mammal closure ...", max_entries=1)
def mammals():
    """The shipped closure, its lab hierarchy (direct pointers) and its directed relation (N, N)."""
    closure = load_mammals()
    return closure, closure.to_hierarchy(), closure.relation()


def source_picker(table: dict[str, Knob]) -> str:
    """The source selectbox (row ``emb_source``: options SOURCES, no URL binding of its own), seeded from the
    link by key or by an old link's label, and written back into the link by key."""
    default = table["emb_source"].default
    linked = links.linked_choice("emb_source", SOURCES, default)
    if state.get("emb_source") not in SOURCES:
        state["emb_source"] = linked
    source = draw(table["emb_source"])
    links.link_choice("emb_source", source, default)
    return source


def hierarchy_controls(table: dict[str, Knob], seed: int):
    """Source widgets -> (source key, Hierarchy). A bad choice or upload shows the error and keeps the last
    good data."""
    source = source_picker(table)
    try:
        if source == "tree":
            hier = _hierarchy("tree", draw(table["emb_branch"]), draw(table["emb_depth"]))
        elif source == WORDNET:
            hier = mammals()[1]
        elif source == "digits":
            hier = _hierarchy("digits", draw(table["emb_digits_n"]), seed)
        else:
            hier = _upload_or_sample()
    except ValueError as err:
        st.error(f"{ui.escape_md(err)}. Showing the previous hierarchy instead.", icon=":material/error:")
        hier = state.get("emb_last_hierarchy") or _hierarchy("tree", 2, 4)
    state["emb_last_hierarchy"] = hier
    return source, hier


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


# ---- Tab "Three geometries" (its comparison feeds the next two) ----------------------------------------

COMPARE = "emb_compare"  # the comparison's job (trainer_controls: keys emb_compare_start, _stop, ...)


def _busy(prefix: str) -> bool:
    """Another of this page's runs (live, comparison, benchmark) is under way: a session trains one at a time."""
    others = {"emb", COMPARE, "emb_bench"} - {prefix}
    if busy := any(j is not None and j.status in tc.ACTIVE for j in map(tc.job, others)):
        st.caption("Another run of this page is training: Stop it, or let it finish, to start this one.")
    return busy


def comparison(hier, config, device):
    """The comparison for these settings (finished, or what finished before a Stop), or None."""
    job = tc.job(COMPARE)
    if config is None or job is None or job.sig != (hier.fingerprint, config, str(device)):
        return None
    job.poll()
    return tc.kept_result(job)


def three_geometries(hier, config, device, *, wordnet: bool) -> None:
    if wordnet:
        st.info(
            "WordNet trains with each geometry's own published recipe: pick the plane or the sphere above to "
            "train it live, or see all of them side by side in the **WordNet benchmark** tab."
        )
        return
    st.markdown(
        "The same hierarchy, dimension, loss, optimiser, learning rate, epochs and negatives in each geometry: "
        f"only the distance changes. At most {lab.COMPARE_BUDGET_S:.0f} s in all, shared evenly, in a worker."
    )
    sig = (hier.fingerprint, config, str(device))
    start = tc.in_worker(lab.comparison_steps, lab.run_data(hier), config, device=str(device))  # disabled if None
    job = tc.controls(
        COMPARE,
        start,
        sig,
        budget_s=2 * lab.COMPARE_BUDGET_S,  # the comparison stops itself; this leaves time to measure
        disabled=config is None or _busy(COMPARE),
        what="Train all three",
    )
    if job is None:
        st.info("Press **Train all three** to measure the comparison with the settings on the left.")
        return
    tc.live(COMPARE, lambda j: _draw_comparison(hier, tc.kept_result(j), same=j.sig == sig))


def _draw_comparison(hier, result, *, same: bool) -> None:
    if not same:  # another hierarchy or other settings: its points do not belong to this hierarchy
        st.info("That comparison was trained with other settings: press **Train all three** to compare these.")
        return
    if (warning := lab.comparison_warning(result)) is not None:
        st.warning(warning)
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
    if len(result.runs) == len(GEOMETRIES):
        ui.theory_box([compare_hierarchy_capacity(result.metrics, dim=result.config.dim)])


# ---- Tab "Norm vs depth" ----------------------------------------------------------------------------------


def norm_vs_depth(hier, saved, run) -> None:
    """``run``: the live run's snapshot when it trains ``hier``, else None (as ``onto_the_sphere``'s)."""
    series = lab.radius_by_depth(hier, run, saved)
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


# ---- Tab "Onto the sphere" --------------------------------------------------------------------------------


def onto_the_sphere(hier, saved, run, seed: int) -> None:
    st.markdown(
        "Paper section 8.2: store in the ball, route on the sphere. Three maps carry the trained disk onto "
        "the sphere; MAP on the sphere says how much of the hierarchy survives the trip."
    )
    ball = lab.ball_points(run, saved)
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


# ---- Tab "WordNet benchmark" ------------------------------------------------------------------------------


def leaderboard() -> None:
    """The shipped leaderboard as a table (quoted rows say so)."""
    if not LEADERBOARD_JSON.is_file():
        st.info("No shipped leaderboard: run `python -m georesolver_core embed --leaderboard` (README).")
        return
    doc = json.loads(LEADERBOARD_JSON.read_text(encoding="utf-8"))
    st.markdown("**Leaderboard**: MAP and mean rank by the published protocol; CPU seconds on this machine.")
    st.dataframe(pd.DataFrame(leaderboard_table(doc)), hide_index=True, key="emb_leaderboard")
    st.caption(f"{doc['machine_note']}.")
    if doc.get("notes"):
        st.markdown("\n".join(f"- {note}" for note in doc["notes"]))


def benchmark_tab(*, seed: int) -> None:
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
    what = f"Re-run a small version ({lab.QUICK_S:.0f} s per model)"
    st.markdown(f"**{what}**: the ball, the plane and the sphere at d = 5, trained in a worker.")
    start = tc.in_worker(lab.benchmark_steps, seed)
    tc.controls("emb_bench", start, seed, budget_s=BENCH_JOB_S, disabled=_busy("emb_bench"), what=what)
    tc.live("emb_bench", _quick)


def _quick(job: tc.WorkerJob) -> None:  # the re-run's rows so far, or all three
    st.dataframe(
        pd.DataFrame(lab.benchmark_rows(tc.kept_result(job))), hide_index=True, key="emb_bench_quick_table"
    )


# ---- Tab "Data & downloads" -------------------------------------------------------------------------------


def data_and_downloads(hier, live) -> None:
    """``live``: (the live run's snapshot, the hierarchy it trains), or None."""
    st.markdown(f"**{ui.escape_md(hier.name)}**: {ui.escape_md(hier.summary())}")
    edges = pd.DataFrame(hier.edge_table(), columns=["parent", "child"])
    ui.download_csv("Download the hierarchy (CSV parent,child)", edges, "hierarchy.csv", "emb_dl_edges")
    if live is not None:
        run, trained = live
        points = torch.from_numpy(run.points)
        coords = pd.DataFrame(node_table(points, trained, geometry=run.config.geometry, c=run.c))
        st.dataframe(coords, hide_index=True, key="emb_coords_table")
        ui.download_csv("Download the embedding (CSV)", coords, "embedding.csv", "emb_dl_coords")
        doc = {"config": run.config.__dict__, "history": history_table(run)}
        ui.download_json("Download the run history (JSON)", doc, "embedding_history.json", "emb_dl_history")
