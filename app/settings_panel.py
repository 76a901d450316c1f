"""The shared settings (seed, precision, device, presentation mode) in the sidebar, Reset, page headers
and the map of the pages.

Reset forgets this session's state and reloads the page on a bare URL, through public APIs only: the
button's callback clears ``st.session_state`` and marks the reset, and the next run switches to the
same page with no query parameters, so no widget is seeded from the old link.
The four shared settings are one app-wide knob table (``SHARED``, ``knobs.shared_knobs``), drawn on every page.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st
import torch
from knobs import Knob, draw, shared_knobs

from georesolver_core.device import DTYPES, device_label

_PAGES: list = []  # (st.Page, description) in navigation order, set by the entry script
_RESET = "_reset_to"  # session key: the url path of the page to reload on a bare URL


def register_pages(pages: list) -> None:
    """Remember the navigation's pages so Home can draw the map of the app."""
    _PAGES[:] = pages


def page_map() -> list:
    """(st.Page, one-line description) for every registered page."""
    return list(_PAGES)


def page_header(title: str, what: str) -> None:
    """Title and the two-line 'what you are looking at'."""
    st.title(title)
    st.markdown(what)


@dataclass(frozen=True)
class Settings:
    seed: int
    dtype: torch.dtype
    device: torch.device


def _devices() -> list[str]:
    return ["cuda", "cpu"] if torch.cuda.is_available() else ["cpu"]


SHARED = shared_knobs(
    "shared settings",
    Knob("seed", "number_input", "Random seed", 0, lo=0, hi=2**31 - 1, step=1,
         help="Every random draw on every page starts from this seed."),
    Knob("dtype", "segmented_control", "Precision", "float32", options=tuple(DTYPES),
         help="float64 keeps Poincaré points accurate near the rim (float32 saturates at norm 0.996)."),
    Knob("device", "selectbox", "Device", options=tuple(_devices()),
         help="CUDA when a GPU is present, CPU otherwise."),
    Knob("present", "toggle", "Presentation mode",
         help="Larger fonts, markers and lines in every figure, for a projector."),
)  # fmt: skip


def sidebar_settings() -> Settings:
    """Draw the shared settings in the sidebar; every widget is bound to the URL so a view is a link."""
    with st.sidebar:
        st.subheader("Shared settings")
        for knob in SHARED.values():
            draw(knob)
        s = settings()
        st.caption(f"Running on **{device_label(s.device)}**, torch {torch.__version__}")
        st.button("Reset all settings", key="reset_settings", icon=":material/restart_alt:", on_click=_reset_all)
    return s


def _reset_all() -> None:
    """The Reset button's callback: stop this session's jobs, forget every setting and ask for a bare URL."""
    page = st.session_state.get("_page_url", "")
    if "_job_owner" in st.session_state:  # its runs are forgotten with the rest: their workers stop
        import jobs_ui

        jobs_ui.stop_jobs()
    st.session_state.clear()
    st.session_state[_RESET] = page


def finish_reset(pages: list) -> None:
    """After Reset: switch to the page it was pressed on with no query parameters (call once the
    navigation's ``pages`` exist, before the page runs). Widgets then start from their defaults."""
    if _RESET not in st.session_state:
        return
    url = st.session_state.pop(_RESET)
    target = next((p for p in pages if p.url_path == url), None) or next(p for p in pages if p.default)
    st.switch_page(target, query_params={})


def settings() -> Settings:
    """The shared settings as chosen in the sidebar (defaults when a test runs a page alone)."""
    state = st.session_state
    dtype_name = state.get("dtype") or "float32"
    device = state.get("device") or _devices()[0]
    return Settings(int(state.get("seed") or 0), DTYPES.get(dtype_name, torch.float32), torch.device(device))
