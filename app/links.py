"""Links: every URL value parsed defensively, before any widget reads it, and a notice naming what was not used.

Pages never call this; the entry script runs ``guard_query_params`` first and ``url_notices`` last.
"""

from __future__ import annotations

import math

import streamlit as st
from streamlit.errors import StreamlitAPIException
from ui import _bound_widget_defaults

# No widget of the app takes a number beyond this magnitude (seeds stop at 2^31): a larger one in a link,
# or a non-finite one (inf, nan, 1e400), is dropped before any widget reads it. Streamlit's own URL
# parsing raises on some of them (int(inf) in a number input) before the navigation is drawn.
URL_NUMBER_LIMIT = 1e15
URL_VALUE_CHARS = 200  # longer values are dropped too (no option or number of the app is this long)


def _unusable_url_value(value: str) -> bool:
    if len(value) > URL_VALUE_CHARS:
        return True
    try:
        number = float(value)
    except (TypeError, ValueError):
        return False  # not a number: the widget's own parser accepts it or falls back to its default
    return not math.isfinite(number) or abs(number) > URL_NUMBER_LIMIT


def _remove_url_param(key: str) -> None:
    try:
        del st.query_params[key]
    except StreamlitAPIException:  # bound to a widget on an earlier run: that widget's state wins anyway
        pass


def _forget_initial_values() -> None:
    """Streamlit seeds a bound widget from the query string the session started with, not from
    ``st.query_params``; there is no public API to change it, so its internal copy is resynced here."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    try:
        get_script_run_ctx().session_state._state.query_params.set_initial_query_params_from_current()
    except AttributeError:  # internals moved: the test of non-finite links says so
        pass


def guard_query_params() -> None:
    """Run before any widget: drop link values no widget can take and remember the link as given, so that
    ``url_notices`` can say which values were not used."""
    given = {key: st.query_params.get_all(key) for key in st.query_params.keys()}
    dropped = []
    for key, values in given.items():
        if any(_unusable_url_value(v) for v in values):
            _remove_url_param(key)
            dropped.append(key)
    if dropped:  # widgets seed from the link as first received: make that the link without those values
        _forget_initial_values()
    st.session_state["_url_given"] = {k: v[-1] if v else "" for k, v in given.items()}
    st.session_state["_url_dropped"] = dropped


def _code(text: str) -> str:
    """``text`` as inline code: shown as typed (markdown escapes would show their backslashes there), with
    the characters that could end the span or the line replaced."""
    return "`" + "".join("'" if c == "`" else " " if c in "\r\n" else c for c in text) + "`"


def _means_default(raw: str, default) -> bool:
    if isinstance(default, bool):
        return raw.lower() == str(default).lower()
    try:
        return float(raw) == float(default)
    except (TypeError, ValueError):
        return raw == str(default)


def url_notices(container) -> None:
    """After the page ran: a notice in ``container`` for every link value that was not used (non-finite,
    out of range, malformed, an unknown option, or a name no setting of this page has); the defaults
    are shown instead. On every run whose link carries such values, until the link is clean: a reload of
    the same link in the same session is told again."""
    given, dropped = st.session_state.pop("_url_given", {}), st.session_state.pop("_url_dropped", [])
    if not given:
        return
    defaults = _bound_widget_defaults()
    ignored = list(dropped)
    for key, raw in given.items():
        if key in dropped:
            continue
        now = st.query_params.get(key)
        if key not in defaults and now == raw:
            ignored.append(key)  # no setting of this page reads it
        elif now != raw and not (now is None and _means_default(raw, defaults.get(key))):
            ignored.append(key)  # refused (malformed, unknown option) or clamped by its widget
    if ignored:
        shown = ", ".join(_code(f"{k[:40]}={given[k][:40]}") for k in ignored[:8])
        container.warning(
            f"Some values of this link were not used: {shown}. They are not valid for this page "
            "(not a finite number in range, or not one of the choices); the defaults are shown instead.",
            icon=":material/link_off:",
        )
