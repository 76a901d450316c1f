"""Figures and data out of a page: the one chart helper (presentation mode, lecture export) and the downloads.

Every figure goes through ``chart``; tables and JSON-able data leave through ``download_csv`` and
``download_json``, text cells made formula-safe first.
"""

from __future__ import annotations

import json

import lecture
import streamlit as st


def chart(fig, key: str, *, container=None) -> None:
    """Draw a plotly figure, enlarged in presentation mode (sidebar)."""
    if st.session_state.get("present"):
        from georesolver_core.viz.style import presentation

        fig = presentation(fig)
    (container or st).plotly_chart(fig, key=key)
    lecture.remember(key, fig)


def download_json(label: str, data, file_name: str, key: str) -> None:
    """A download button for any JSON-able data (figure data, run histories)."""
    st.download_button(
        label,
        json.dumps(data, indent=1, default=_jsonable).encode(),
        file_name=file_name,
        mime="application/json",
        key=key,
        icon=":material/download:",
    )


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(table):
    """A copy whose text cells cannot run as spreadsheet formulas: a cell starting with = + - @ (or a
    tab / carriage return) gets a leading apostrophe. Numbers are left alone (-0.5 stays a number)."""
    import pandas as pd

    out = table.copy()
    for col in out.columns:
        if not pd.api.types.is_numeric_dtype(out[col]):
            out[col] = out[col].map(
                lambda v: "'" + v if isinstance(v, str) and v.startswith(_FORMULA_START) else v
            )
    out.columns = [("'" + c if isinstance(c, str) and c.startswith(_FORMULA_START) else c) for c in out.columns]
    return out


def download_csv(label: str, table, file_name: str, key: str) -> None:
    """A download button for a table (a pandas DataFrame), as CSV without the index; text cells are
    made formula-safe (``csv_safe``), since node names and report fields may come from users."""
    st.download_button(
        label,
        csv_safe(table).to_csv(index=False).encode(),
        file_name=file_name,
        mime="text/csv",
        key=key,
        icon=":material/download:",
    )


def _jsonable(obj):
    import numpy as np
    import torch

    if isinstance(obj, (np.ndarray, torch.Tensor)):
        return np.asarray(obj.detach().cpu() if isinstance(obj, torch.Tensor) else obj).tolist()
    if isinstance(obj, (np.floating, np.integer)):
        return obj.item()
    return str(obj)
