"""Shared page furniture, one module per concern; pages import it as ``import ui``.

- ``settings_panel``: the sidebar's shared settings, Reset, page headers, the map of the pages;
- ``url_widgets``: URL-bound logarithmic sliders and the registry pickers;
- ``claims_panels``: verdict badges, the theory box, the shipped report and the cached claim runner;
- ``charts``: the one chart helper and the CSV / JSON downloads;
- ``user_input``: user text made inert for markdown, uploads parsed once.

Streamlit puts the entry script's folder on sys.path, so these import as top-level modules.
All math lives in georesolver_core; these modules only draw.
"""

from __future__ import annotations

import streamlit as st  # noqa: F401  (tests stand in for ui.st.session_state)
from charts import chart, csv_safe, download_csv, download_json
from claims_panels import (
    CLAIMS_REPORT,
    VERDICT_BADGE,
    claim_chart,
    claim_result,
    claims_box,
    claims_grid,
    measure_claims,
    page_claims,
    shipped_claims,
    shipped_report,
    theory_box,
)
from settings_panel import (
    Settings,
    finish_reset,
    page_header,
    page_map,
    register_pages,
    settings,
    sidebar_settings,
)
from url_widgets import (
    curvature_slider,
    drawn_controls,
    eps_slider,
    geometry_picker,
    kernel_picker,
    log_slider,
)
from user_input import escape_md, read_upload

__all__ = [
    "CLAIMS_REPORT",
    "VERDICT_BADGE",
    "Settings",
    "chart",
    "claim_chart",
    "claim_result",
    "claims_box",
    "claims_grid",
    "csv_safe",
    "curvature_slider",
    "download_csv",
    "download_json",
    "drawn_controls",
    "eps_slider",
    "escape_md",
    "finish_reset",
    "geometry_picker",
    "kernel_picker",
    "log_slider",
    "measure_claims",
    "page_claims",
    "page_header",
    "page_map",
    "read_upload",
    "register_pages",
    "settings",
    "shipped_claims",
    "shipped_report",
    "sidebar_settings",
    "theory_box",
]
