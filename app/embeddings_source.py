"""The Embeddings page's data: which hierarchy is embedded (WordNet mammals first), linked by a stable key.

The source picker's URL value is its key (``?emb_source=wordnet``), not its label: a bound selectbox
would write the label, which changes when the wording does. Links written by earlier versions carry the
label; it still selects its source. Any other value falls back to the default with the link notice.
"""

from __future__ import annotations

from pathlib import Path

import links
import streamlit as st
import ui

from georesolver_core.tasks import HIERARCHIES, MAX_CSV_BYTES, MAX_NAME_LEN, MAX_NODES, from_edge_list_csv
from georesolver_core.wordnet.closure import load_mammals

WORDNET = "wordnet"  # the page's own source beside HIERARCHIES: the shipped WordNet mammal closure
# key -> label, WordNet first: the example everyone in the field knows (Nickel & Kiela 2017)
SOURCES = {WORDNET: "WordNet mammals (closure)", **{k: v.label for k, v in HIERARCHIES.items()}}
DEFAULT_SOURCE = WORDNET
SAMPLE_CSV = Path(__file__).resolve().parent.parent / "assets" / "sample_hierarchy.csv"
state = st.session_state


@st.cache_resource(show_spinner="Building the hierarchy ...", max_entries=16)
def _hierarchy(source: str, *args):
    """HIERARCHIES[source] built from its widgets' values; "csv" without a file is the bundled taxonomy."""
    if source == "csv":
        return from_edge_list_csv(SAMPLE_CSV.read_bytes(), name="animal taxonomy (bundled sample)")
    return HIERARCHIES[source].build(*args)


@st.cache_resource(show_spinner="Loading the WordNet mammal closure ...")
def mammals():
    """The shipped closure, its lab hierarchy (direct pointers) and its directed relation (N, N)."""
    closure = load_mammals()
    return closure, closure.to_hierarchy(), closure.relation()


def source_picker() -> str:
    """The source selectbox (key ``emb_source``), seeded from the link by key or by an old link's label."""
    linked = links.linked_choice("emb_source", SOURCES, DEFAULT_SOURCE)
    if state.get("emb_source") not in SOURCES:
        state["emb_source"] = linked
    source = st.selectbox(
        "Hierarchy",
        list(SOURCES),
        format_func=SOURCES.get,
        key="emb_source",
        help="**WordNet mammals**: the 1,181 mammal synsets of WordNet 3.0 and their 6,541 hyponym-ancestor "
        "pairs, trained with the published recipe.\n"
        + "\n".join(f"**{v.label}**: {v.description}" for v in HIERARCHIES.values()),
    )
    links.link_choice("emb_source", source, DEFAULT_SOURCE)
    return source


def hierarchy_controls(seed: int):
    """Source widgets -> (source key, Hierarchy). A bad choice or upload shows the error and keeps the last
    good data."""
    source = source_picker()
    try:
        if source == "tree":
            b = st.slider("Branching factor", 1, 6, 2, key="emb_branch", bind="query-params")
            d = st.slider("Depth (levels below the root)", 1, 12, 4, key="emb_depth", bind="query-params")
            hier = _hierarchy("tree", b, d)
        elif source == WORDNET:
            hier = mammals()[1]
        elif source == "digits":
            n = st.slider("Digit images (leaves)", 8, 300, 40, key="emb_digits_n", bind="query-params")
            hier = _hierarchy("digits", n, seed)
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
