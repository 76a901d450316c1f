"""The Embeddings page's data: which hierarchy is embedded (WordNet mammals first), linked by a stable key.

The source picker's URL value is its key (``?emb_source=wordnet``), not its label: a bound selectbox
would write the label, which changes when the wording does. Links written by earlier versions carry the
label; it still selects its source. Any other value falls back to the default with the link notice.
The widgets are drawn from rows of the page's knob table (``KNOBS`` in pages/embeddings.py, passed in as
``table``).
"""

from __future__ import annotations

from pathlib import Path

import links
import streamlit as st
import ui
from knobs import Knob, draw

from georesolver_core.tasks import HIERARCHIES, MAX_CSV_BYTES, MAX_NAME_LEN, MAX_NODES, from_edge_list_csv
from georesolver_core.wordnet.closure import load_mammals

WORDNET = "wordnet"  # the page's own source beside HIERARCHIES: the shipped WordNet mammal closure
# key -> label, WordNet first: the example everyone in the field knows (Nickel & Kiela 2017)
SOURCES = {WORDNET: "WordNet mammals (closure)", **{k: v.label for k, v in HIERARCHIES.items()}}
DEFAULT_SOURCE = WORDNET
SOURCE_HELP = (  # the source picker's help: what each source is
    "**WordNet mammals**: the 1,181 mammal synsets of WordNet 3.0 and their 6,541 hyponym-ancestor pairs, trained "
    "with the published recipe.\n" + "\n".join(f"**{v.label}**: {v.description}" for v in HIERARCHIES.values())
)
SAMPLE_CSV = Path(__file__).resolve().parent.parent / "assets" / "sample_hierarchy.csv"
state = st.session_state


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
