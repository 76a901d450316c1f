"""The Embeddings page's data source: a synthetic tree, the digits hierarchy, or an uploaded edge list."""

from pathlib import Path

import streamlit as st

from georesolver_core.tasks import HIERARCHIES, MAX_NODES, balanced_tree, digits_hierarchy, from_edge_list_csv

SAMPLE_CSV = Path(__file__).resolve().parent.parent / "assets" / "sample_hierarchy.csv"
state = st.session_state


@st.cache_resource(show_spinner=False, max_entries=16)
def _tree(branching: int, depth: int):
    return balanced_tree(branching, depth)


@st.cache_resource(show_spinner="Clustering the digits ...", max_entries=8)
def _digits(n: int, seed: int):
    return digits_hierarchy(n, seed)


@st.cache_resource(show_spinner=False, max_entries=16)
def _csv(data: bytes, name: str):
    return from_edge_list_csv(data, name=name)


def _sample():
    return _csv(SAMPLE_CSV.read_bytes(), "animal taxonomy (bundled sample)")


def hierarchy_controls(seed: int):
    """Hierarchy widgets -> a Hierarchy. A bad choice or upload shows the error and keeps the last good data."""
    source = st.selectbox(
        "Hierarchy",
        list(HIERARCHIES),
        format_func=lambda k: HIERARCHIES[k].label,
        key="emb_source",
        bind="query-params",
        help="\n".join(f"**{v.label}**: {v.description}" for v in HIERARCHIES.values()),
    )
    try:
        if source == "tree":
            b = st.slider("Branching factor", 1, 6, 2, key="emb_branch", bind="query-params")
            d = st.slider("Depth (levels below the root)", 1, 12, 4, key="emb_depth", bind="query-params")
            hier = _tree(b, d)
        elif source == "digits":
            n = st.slider("Digit images (leaves)", 8, 300, 40, key="emb_digits_n", bind="query-params")
            hier = _digits(n, seed)
        else:
            hier = _upload_or_sample()
    except ValueError as err:
        st.error(f"{err}. Showing the previous hierarchy instead.", icon=":material/error:")
        hier = state.get("emb_last_hierarchy") or _tree(2, 4)
    state["emb_last_hierarchy"] = hier
    return hier


def _upload_or_sample():
    up = st.file_uploader(
        "Your edge list: CSV with header `parent,child`",
        type=["csv", "txt"],
        key="emb_upload",
        help=f"One edge per line; no self-loops, no cycles, at most {MAX_NODES} nodes. Without a file: the bundled taxonomy.",
    )
    if up is None:
        state.pop("emb_last_upload", None)
        return _sample()
    try:
        hier = _csv(up.getvalue(), up.name)
    except ValueError as err:
        previous = state.get("emb_last_upload") or _sample()
        st.error(
            f"**{up.name}** was not used: {err}. Fix the file and upload it again; still showing "
            f"*{previous.name}*.",
            icon=":material/error:",
        )
        return previous
    state["emb_last_upload"] = hier
    return hier
