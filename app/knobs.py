"""Each page's controls as one declarative table, in the style of TensorFlow Playground's state table.

A page lists its URL-bound controls once, as ``Knob`` rows (key, widget kind, label, default,
range or options, URL binding), and draws each with ``draw(knob, container)``; the widget, its URL
binding and the lecturer's hide / lock (``lecture.widget``) are all built from the row. ``page_knobs``
registers a page's rows under the page's name, so the app can ask which keys a page's links may carry
(``known_keys``); ``shared_knobs`` registers an app-wide table (the sidebar's shared settings). Keys,
labels, defaults and ranges are exactly what the pages drew before: links, tests and the lecturer's
hide / lock lists name them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import lecture
import streamlit as st
from url_widgets import curvature_slider, geometry_label, geometry_picker, kernel_picker, log_slider

URL = "query-params"  # the binding of a knob whose value is part of the page's link

# kind -> how the row's fields become the Streamlit call: st.<method>(label, *positional, **keywords)
WIDGET_KINDS = (
    "slider",  # lo..hi (step), default
    "number_input",  # a number in lo..hi (step), default
    "select_slider",  # one of options, default
    "log_slider",  # 1-2-5 stops in lo..hi (``url_widgets.log_slider``)
    "selectbox",  # one of options (format_func), default
    "radio",  # one of options (format_func), default
    "segmented_control",  # one of options (format_func); unselected reads as default
    "pills",  # several of options (selection_mode="multi"), default a list
    "multiselect",  # several of options (format_func), default a list
    "toggle",  # on / off, default
    "text_input",  # free text, default
    "tabs",  # the open tab of options (the tab labels); draws the tabs and returns them (no lock: tabs take none)
    # the registry pickers of ``url_widgets`` (their options are the registries' entries when drawn)
    "geometry",  # one GEOMETRIES entry, default (None: the first); extra segmented=True for buttons
    "kernel",  # one of options (a kernel table's keys, shown by format_func), "ida" first where offered
    "curvature",  # c of the geometry given to ``draw``, 0.1-10 on a log scale, the helper's label (or a caption)
)
_CHOICE_KINDS = ("select_slider", "selectbox", "radio", "segmented_control", "pills", "multiselect", "kernel", "tabs")  # fmt: skip

# kinds drawn by their own helper (``url_widgets``, st.tabs), not through ``lecture.widget``
_HELPER_KINDS = ("log_slider", "geometry", "kernel", "curvature", "tabs")

_TABLES: dict[str, dict[str, Knob]] = {}  # page name -> its knobs by key (``page_knobs``)
PAGE_KEYS = "_url_knobs"  # session key: the URL-bound knob keys of the page drawn in this run (``links``)


@dataclass(frozen=True)
class Knob:
    """One control of a page: what it is called, how it is drawn, what it starts at and may take."""

    key: str  # the widget key and its URL parameter
    kind: str  # one of WIDGET_KINDS
    label: str
    default: Any = None  # the value a bare link starts at (a tuple for several-of kinds)
    lo: float | None = None  # slider / log_slider range
    hi: float | None = None
    step: float | None = None  # slider step (None: Streamlit's)
    options: tuple = ()  # the choices of the one-of / several-of kinds
    format_func: Callable[[Any], str] | None = None  # how an option is shown (None: as is)
    help: str | None = None
    bind: str | None = URL  # None: a control that is not part of the link
    extra: tuple[tuple[str, Any], ...] = field(default=())  # further keywords of the Streamlit call

    def __post_init__(self):
        if self.kind not in WIDGET_KINDS:
            raise ValueError(f"kind must be one of {list(WIDGET_KINDS)} (got {self.kind!r}) for knob {self.key!r}")
        if self.kind in ("slider", "number_input", "log_slider") and (self.lo is None or self.hi is None):
            raise ValueError(f"a {self.kind} knob needs lo and hi (knob {self.key!r})")
        if self.kind in _CHOICE_KINDS and not self.options:
            raise ValueError(f"a {self.kind} knob needs options (knob {self.key!r})")


def page_knobs(page: str, *knobs: Knob) -> dict[str, Knob]:
    """A page's knobs by key, registered under ``page`` (``known_keys``); keys must be unique."""
    rows = shared_knobs(page, *knobs)
    st.session_state[PAGE_KEYS] = known_keys(page)  # read (and removed) by the link notice after the page ran
    return rows


def shared_knobs(name: str, *knobs: Knob) -> dict[str, Knob]:
    """Knobs by key registered under ``name`` (``known_keys``) but not as this run's page: an app-wide table,
    such as the sidebar's shared settings, drawn on every page; keys must be unique."""
    rows = {k.key: k for k in knobs}
    if len(rows) != len(knobs):
        raise ValueError(f"knob keys must be unique in table {name!r} (got {[k.key for k in knobs]})")
    _TABLES[name] = rows
    return rows


def known_keys(page: str | None = None) -> set[str]:
    """The URL-bound keys of one registered page's table, or of every table registered in this process."""
    tables = [_TABLES.get(page, {})] if page is not None else list(_TABLES.values())
    return {key for rows in tables for key, knob in rows.items() if knob.bind == URL}


def link_label(key: str, value) -> str | None:
    """The label the widget of knob ``key`` (in any registered table) shows for ``value``: what a bound choice
    widget writes into the URL (``?emb_geo=Sphere`` for ``sphere``). None for a key no table has, a knob
    without labels, or a value its labels do not cover."""
    knob = next((rows[key] for rows in _TABLES.values() if key in rows), None)
    if knob is None or value is None or isinstance(value, list | tuple):
        return None
    fmt = geometry_label if knob.kind == "geometry" else knob.format_func
    if fmt is None:
        return None
    try:
        return str(fmt(value))
    except (KeyError, TypeError, ValueError):  # a label table without this value
        return None


def _call(knob: Knob) -> tuple[str, tuple, dict]:
    """The Streamlit method, positional and keyword arguments that draw ``knob`` (before hide / lock)."""
    kw: dict[str, Any] = dict(knob.extra)
    if knob.format_func is not None:
        kw["format_func"] = knob.format_func
    if knob.help is not None:
        kw["help"] = knob.help
    if knob.bind is not None:
        kw["bind"] = knob.bind
    options = list(knob.options)
    kind = knob.kind
    if kind in ("slider", "number_input"):
        return kind, (knob.label, knob.lo, knob.hi, knob.default, knob.step), kw
    if kind == "select_slider":
        return kind, (knob.label, options), dict(kw, value=knob.default)
    if kind in ("selectbox", "radio"):
        index = options.index(knob.default) if knob.default is not None else 0
        return kind, (knob.label, options), dict(kw, index=index)
    if kind in ("segmented_control", "pills"):
        default = list(knob.default) if isinstance(knob.default, tuple) else knob.default
        return kind, (knob.label, options), dict(kw, default=default)
    if kind == "multiselect":
        return kind, (knob.label, options), dict(kw, default=list(knob.default or ()))
    if kind == "toggle":
        return kind, (knob.label,), dict(kw, value=bool(knob.default))
    return kind, (knob.label, "" if knob.default is None else knob.default), kw  # text_input


def draw(knob: Knob, container=None, *, geometry: str | None = None, disabled: bool = False):
    """Draw ``knob`` in ``container`` (a column, the sidebar; default the page) and return its value.

    The widget is keyed by ``knob.key``, bound to the URL as the row says, and disabled and held
    when the lecturer's link locks it (``lecture.widget``). A segmented control left unselected
    reads as its default. ``geometry``: the geometry a "curvature" knob belongs to. ``disabled``: drawn
    disabled in this view (a setting that does not apply to the current choice of another); only the
    kinds drawn through ``lecture.widget`` take it."""
    where = container or st
    if disabled and knob.kind in _HELPER_KINDS:
        takes = [k for k in WIDGET_KINDS if k not in _HELPER_KINDS]
        raise ValueError(
            f"disabled must be False for a {knob.kind} knob: only {takes} take it (knob {knob.key!r})"
        )
    if knob.kind == "log_slider":
        return log_slider(knob.label, knob.key, knob.lo, knob.hi, knob.default, help=knob.help, container=where)
    if knob.kind == "geometry":
        return geometry_picker(knob.key, knob.label, default=knob.default, container=where, **dict(knob.extra))
    if knob.kind == "kernel":
        kernels = {k: knob.format_func(k) if knob.format_func else k for k in knob.options}
        return kernel_picker(knob.key, kernels, knob.label, container=where)
    if knob.kind == "curvature":
        if geometry is None:
            raise ValueError(f"a curvature knob needs the geometry it belongs to (knob {knob.key!r})")
        return curvature_slider(knob.key, geometry, container=container, help=knob.help, **dict(knob.extra))
    if knob.kind == "tabs":
        return where.tabs(list(knob.options), key=knob.key, bind=knob.bind, **dict(knob.extra))
    method, args, kw = _call(knob)
    if disabled:
        kw["disabled"] = True
    value = lecture.widget(getattr(where, method), *args, key=knob.key, **kw)
    if knob.kind == "segmented_control" and value is None:
        return knob.default
    return value
