"""Links: every URL value parsed defensively, before any widget reads it, and a notice naming what was not used.

The entry script runs ``guard_query_params`` first and ``url_notices`` last. A page whose choice is linked by
a stable key rather than its label (a bound selectbox writes the label) reads and writes it with
``linked_choice`` and ``link_choice``.
"""

from __future__ import annotations

import math

import lecture
import streamlit as st
from knobs import PAGE_KEYS, link_label
from streamlit.errors import StreamlitAPIException
from url_widgets import drawn_controls

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


def _remove_url_param(key: str) -> bool:
    try:
        del st.query_params[key]
    except StreamlitAPIException:  # bound to a widget on an earlier run: that widget's state wins anyway
        return False
    return True


def guard_query_params() -> None:
    """Run before any widget: drop link values no widget can take and remember the link as given, so that
    ``url_notices`` can say which values were not used.

    Streamlit seeds a bound widget from the query string of the run, so after dropping values the run
    starts again (``st.rerun``) on the link without them; the link as given is kept for the notice."""
    given = {key: st.query_params.get_all(key) for key in st.query_params.keys()}
    dropped, removed = [], False
    for key, values in given.items():
        if any(_unusable_url_value(v) for v in values):
            removed = _remove_url_param(key) or removed
            dropped.append(key)
    if removed:
        st.session_state["_url_guarded"] = (given, dropped)
        st.rerun()
    given, dropped = st.session_state.pop("_url_guarded", (given, dropped))
    st.session_state["_url_given"] = {k: v[-1] if v else "" for k, v in given.items()}
    st.session_state["_url_dropped"] = dropped


def linked_choice(key: str, options: dict[str, str], default: str) -> str:
    """The option (stable key) that the link's ``key`` parameter names, by its key or by its label (as links
    from a bound selectbox wrote it); ``default`` when absent or unknown, and ``url_notices`` then names it."""
    raw = st.query_params.get(key)
    value = raw if raw in options else {label: k for k, label in options.items()}.get(raw)
    st.session_state.setdefault("_url_owned", {})[key] = raw is None or value is not None
    return value if value is not None else default


def link_choice(key: str, value: str, default: str) -> None:
    """Write the choice into the link by its stable key; the default leaves the link without it."""
    if value == default:
        if key in st.query_params:
            _remove_url_param(key)
    elif st.query_params.get(key) != value:
        st.query_params[key] = value


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


def _shows(raw: str, key: str, value) -> bool:
    """Whether the link's ``raw`` value is what the widget ``key`` shows now: the value itself, or the label a
    bound choice widget writes into links (``?emb_geo=Poincaré ball`` for the default ``poincare``)."""
    return _means_default(raw, value) or raw == link_label(key, value)


def url_notices(container) -> None:
    """After the page ran: a notice in ``container`` for every link value that was not used (non-finite,
    out of range, malformed, an unknown option, or a name no setting of this page has: neither drawn nor
    in its knob table); the defaults are shown instead. On every run whose link carries such values,
    until the link is clean: a reload of the same link in the same session is told again."""
    given, dropped = st.session_state.pop("_url_given", {}), st.session_state.pop("_url_dropped", [])
    owned = st.session_state.pop("_url_owned", {})  # parameters a page read itself: True if it used the value
    # the page's knob table (app/knobs.py): a knob not drawn in this view (a closed tab, an option that is
    # off) is still a setting of the page; its value waits in the link and is judged when its control is drawn
    waiting = st.session_state.pop(PAGE_KEYS, set())
    if not given:
        return
    controls = drawn_controls()
    ignored = list(dropped)
    for key, raw in given.items():
        if key in dropped:
            continue
        if key in (lecture.HIDE, lecture.LOCK):
            # the lecturer's lists, applied by ``lecture.apply_url_state``: not used only if a name is malformed
            parts = dict.fromkeys(p.strip() for p in raw.split(",") if p.strip())
            if len(lecture.parse_keys(raw)) != len(parts):
                ignored.append(key)
            continue
        if key in owned:
            if not owned[key]:
                ignored.append(key)
            continue
        now = st.query_params.get(key)
        if key not in controls and now == raw:
            if key not in waiting:
                ignored.append(key)  # no setting of this page reads it
        elif now != raw and not (now is None and _shows(raw, key, controls.get(key))):
            # gone from the link although the widget does not show it: refused (malformed, unknown
            # option) or clamped; a value that equals the widget's default leaves the link too
            ignored.append(key)
    if ignored:
        shown = ", ".join(_code(f"{k[:40]}={given[k][:40]}") for k in ignored[:8])
        container.warning(
            f"Some values of this link were not used: {shown}. They are not valid for this page "
            "(not a finite number in range, or not one of the choices); the defaults are shown instead.",
            icon=":material/link_off:",
        )
