"""The lecturer's link: a URL that also hides or locks chosen controls, the link written out to copy, and an export of
the figures on screen (standalone HTML, PNG and SVG when kaleido is installed, and the figure's data as JSON).

``?_hide=key1,key2`` hides the widgets with those keys and ``?_lock=key3`` draws them disabled, as
TensorFlow Playground's ``_hide`` state does. Pages create their URL-bound widgets through ``widget``,
which passes ``disabled=True`` for a locked key; the server also holds a locked widget at the value it
was first drawn with, so neither the keyboard nor a crafted request changes it. Keys are checked against
a strict pattern before they reach the page's CSS, so a link can only name widgets, never inject markup.
``ui.chart`` remembers every figure it draws in this run (``remember``) so the panel can export it.
"""

from __future__ import annotations

import importlib.util
import json
import re
from urllib.parse import urlencode

import streamlit as st

HIDE, LOCK = "_hide", "_lock"  # URL parameters: comma-separated widget keys
_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")  # the widget keys this app uses; anything else is dropped
_FIGURES = "_lecture_figures"  # session key: {chart key: figure} drawn in the current run
_HELD = "_lecture_held"  # session key: {locked widget key: the value it is held at}


def parse_keys(values) -> list[str]:
    """Widget keys from URL values (each may hold several, comma-separated); malformed names are dropped."""
    keys = []
    for value in values if isinstance(values, list | tuple) else [values]:
        for part in str(value).split(","):
            part = part.strip()
            if _KEY.match(part) and part not in keys:
                keys.append(part)
    return keys


def css(hide: list[str], lock: list[str]) -> str:
    """The style that hides and locks widgets by their container class ``st-key-<key>`` (keys already checked)."""
    rules = [f".st-key-{k} {{display: none !important;}}" for k in parse_keys(hide)]
    rules += [
        f".st-key-{k} {{pointer-events: none !important; opacity: 0.55; filter: grayscale(1);}}"
        for k in parse_keys(lock)
    ]
    return "<style>\n" + "\n".join(rules) + "\n</style>" if rules else ""


def _current(name: str) -> list[str]:
    return parse_keys(st.query_params.get_all(name))


def locked(key: str) -> bool:
    """Whether the link locks the widget with this key."""
    return key in _current(LOCK)


def widget(make, *args, key: str, **kwargs):
    """``make(*args, key=key, **kwargs)`` (``st.slider``, ``col.selectbox``, ...), disabled when the link locks
    ``key``; a locked widget's first value is held (``apply_url_state`` puts it back before each run)."""
    value = make(*args, key=key, disabled=bool(kwargs.pop("disabled", False)) or locked(key), **kwargs)
    if locked(key):
        st.session_state.setdefault(_HELD, {}).setdefault(key, value)
    return value


def _hold_locked(lock: list[str]) -> None:
    """Put every locked widget back at its held value, before the widgets are drawn (a disabled widget
    takes no clicks in the browser, but a request can still carry a new value)."""
    held = st.session_state.setdefault(_HELD, {})
    for key in [k for k in held if k not in lock]:
        del held[key]
    for key, value in held.items():
        if key in st.session_state and st.session_state[key] != value:
            st.session_state[key] = value


def apply_url_state() -> None:
    """Hide and lock the controls the URL names (call before the page draws); forget last run's figures."""
    st.session_state[_FIGURES] = {}
    _hold_locked(_current(LOCK))
    style = css(_current(HIDE), _current(LOCK))
    if style:
        st.html(style)


def remember(key: str, fig) -> None:
    """Keep a drawn figure for the export panel (called by ``ui.chart``)."""
    st.session_state.setdefault(_FIGURES, {})[key] = fig


def share_link(base: str, params: dict[str, list[str]], hide: list[str], lock: list[str]) -> str:
    """The page's address with its query string, and the hide/lock lists replaced by ``hide`` and ``lock``."""
    query = {k: v for k, v in params.items() if k not in (HIDE, LOCK)}
    if hide:
        query[HIDE] = [",".join(parse_keys(hide))]
    if lock:
        query[LOCK] = [",".join(parse_keys(lock))]
    base = base.split("?", 1)[0]
    return base + ("?" + urlencode(query, doseq=True) if query else "")


def figure_data(fig) -> dict:
    """The data of every trace (name, type and its x / y / z / text arrays) as plain JSON-ready lists."""
    out = []
    for trace in fig.data:
        row = {"name": trace.name, "type": trace.type}
        for field in ("x", "y", "z", "text", "lat", "lon"):
            value = getattr(trace, field, None) if field in trace else None
            if value is not None:
                row[field] = [v.tolist() if hasattr(v, "tolist") else v for v in value]
        out.append(row)
    return {"title": fig.layout.title.text, "traces": out}


IMAGE_FORMATS = {"png": "image/png", "svg": "image/svg+xml"}  # what to_image writes here, and its MIME type


def png_available() -> bool:
    """Whether plotly can write images: kaleido (the ``export`` extra) is installed."""
    return importlib.util.find_spec("kaleido") is not None


def figure_image(fig, fmt: str) -> bytes:
    """The figure as a PNG (twice the screen resolution, for slides) or an SVG, through kaleido."""
    if fmt not in IMAGE_FORMATS:
        raise ValueError(f"fmt must be one of {sorted(IMAGE_FORMATS)} (got {fmt!r})")
    return fig.to_image(format=fmt, scale=2 if fmt == "png" else 1)


def panel(controls: list[str]) -> None:
    """The sidebar panel: choose controls to hide or lock, copy the link, export a figure of this view."""
    held = st.session_state.setdefault(_HELD, {})
    for key in _current(LOCK):  # widgets drawn without ``widget`` (shared pickers): held from their first run
        if key in st.session_state and key not in held:
            held[key] = st.session_state[key]
    figures = st.session_state.get(_FIGURES, {})
    with st.sidebar.expander("Lecturer's link and export", icon=":material/share:"):
        options = sorted(set(controls) | set(_current(HIDE)) | set(_current(LOCK)))
        hide = st.multiselect("Hide these controls", options, default=_current(HIDE), key="lec_hide")
        lock = st.multiselect("Lock these controls", options, default=_current(LOCK), key="lec_lock")
        params = {k: st.query_params.get_all(k) for k in st.query_params}
        link = share_link(st.context.url or "", params, hide, lock)
        st.caption(
            "The link below opens this view with those controls hidden or locked: copy it with the copy button "
            "(switch it on) or select it (a triple click selects it all)."
        )
        # Markdown by default, not st.code: a code block loads a 1.5 MB syntax highlighter into the page, and
        # this panel is on every page's first visit. The copy button (st.code's) comes on request only.
        # The link is URL-encoded (no backticks), so it cannot leave its code span.
        st.container(key="lec_link").markdown(f"`{link.replace('`', '%60')}`")
        if st.toggle("Copy button", key="lec_copy", help="Shows the link in a box with a one-click copy button"):
            st.code(link, language=None, wrap_lines=True)
        st.link_button("Open the link", link, icon=":material/open_in_new:")
        if not figures:
            st.caption("No figure on this view yet.")
            return
        pick = st.selectbox("Figure to export", list(figures), key="lec_fig")
        fig = figures[pick]
        st.download_button(
            "Figure (standalone HTML)",
            lambda fig=fig: fig.to_html(include_plotlyjs=True, full_html=True),  # built on click only
            f"{pick}.html",
            "text/html",
            key="lec_html",
            on_click="ignore",
            icon=":material/download:",
        )
        st.download_button(
            "Its data (JSON)",
            lambda fig=fig: json.dumps(figure_data(fig), default=str),
            f"{pick}.json",
            "application/json",
            key="lec_json",
            on_click="ignore",
            icon=":material/download:",
        )
        if png_available():
            for fmt, mime in IMAGE_FORMATS.items():
                st.download_button(
                    f"Figure ({fmt.upper()})",
                    lambda fig=fig, fmt=fmt: figure_image(fig, fmt),  # a few seconds: a headless browser draws it
                    f"{pick}.{fmt}",
                    mime,
                    key=f"lec_{fmt}",
                    on_click="ignore",
                    icon=":material/image:",
                )
        else:
            st.caption(
                "PNG / SVG: install the `export` extra (kaleido, which uses an installed Chrome or Chromium), or "
                "use the camera icon on the figure for a PNG."
            )
