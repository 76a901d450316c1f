"""Widgets bound to the URL, shared by the pages: logarithmic sliders and the registry pickers.

Every widget here is keyed and ``bind="query-params"``, so a view is a link. The pickers read their
options from the registries (``GEOMETRIES``, ``ATTENTION``), imported when a picker is first drawn.
"""

from __future__ import annotations

import math
import re

import lecture
import streamlit as st


def nice_values(lo: float, hi: float) -> list[float]:
    """1-2-5 steps per decade from lo to hi inclusive: the stops of a logarithmic slider."""
    out = []
    for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for m in (1, 2, 5):
            v = float(f"{m}e{e}")
            if lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9):
                out.append(v)
    return out


def log_slider(
    label: str, key: str, lo: float, hi: float, default: float, help: str | None = None, *, container=None
) -> float:
    """A logarithmic slider over 1-2-5 stops in [lo, hi], bound to the URL (drawn in ``container``, default the page)."""
    options = nice_values(lo, hi)
    default = min(options, key=lambda v: abs(math.log(v) - math.log(default)))
    return float(
        (container or st).select_slider(
            label,
            options=options,
            value=default,
            key=key,
            format_func=lambda v: f"{v:g}",
            help=help,
            bind="query-params",
            disabled=lecture.locked(key),
        )
    )


def geometry_label(name: str) -> str:
    """How a geometry is shown, and so written into links by a bound picker: its registry entry's label."""
    from georesolver_core.geometry import GEOMETRIES

    return GEOMETRIES[name].label


def geometry_picker(
    key: str, label: str = "Geometry", *, default: str | None = None, segmented: bool = False, container=None
) -> str:
    """One geometry of the GEOMETRIES registry, bound to the URL (a selectbox, or segmented buttons)."""
    from georesolver_core.geometry import GEOMETRIES

    where = container or st
    options = list(GEOMETRIES)
    default = default if default in options else options[0]
    if segmented:
        choice = where.segmented_control(
            label, options, default=default, format_func=geometry_label, key=key, bind="query-params", required=True,
            disabled=lecture.locked(key),
        )  # fmt: skip
        return choice or default
    return where.selectbox(
        label, options, index=options.index(default), format_func=geometry_label, key=key, bind="query-params",
        disabled=lecture.locked(key),
    )  # fmt: skip


def curvature_slider(
    key: str, geometry: str, *, container=None, always: bool = False, help: str | None = None
) -> float:
    """The curvature parameter c of a geometry that has one (the ball: k = -c), 0.1-10 on a log scale.

    A geometry whose registry entry does not use c gets a caption instead of the slider and 1.0 back
    (unless ``always``).
    """
    from georesolver_core.geometry import GEOMETRIES

    if not GEOMETRIES[geometry].has_curvature_parameter and not always:
        (container or st).caption(
            f"Curvature: fixed for {GEOMETRIES[geometry].label} (0 in the plane, +1 on the unit sphere); "
            "only the Poincaré ball has a c to set."
        )
        return 1.0
    with container or st.container():
        return log_slider(
            "Curvature parameter c (curvature k = -c)",
            key,
            0.1,
            10.0,
            1.0,
            help=help or "The ball has radius 1/sqrt(c); only the Poincaré ball uses it.",
        )


def eps_slider(key: str, lo: float, hi: float, default: float, *, help: str | None = None) -> float:
    """IDA's regulariser eps on a bounded log scale (1/eps overflows float32 below ~1e-38)."""
    return log_slider("eps (IDA regulariser)", key, lo, hi, default, help=help)


def kernel_picker(
    key: str, kernels: dict[str, str] | None = None, label: str = "Kernel", *, container=None
) -> str:
    """One key of a kernel table (name -> label), IDA first where it is offered; bound to the URL.

    ``kernels`` defaults to the ATTENTION registry, each entry shown by its ``AttentionKind.label``.
    """
    if kernels is None:
        from georesolver_core.attention.layer import ATTENTION

        kernels = {name: kind.label for name, kind in ATTENTION.items()}
    where = container or st
    options = list(kernels)
    default = "ida" if "ida" in kernels else options[0]
    choice = where.segmented_control(
        label, options, default=default, format_func=kernels.get, key=key, bind="query-params",
        disabled=lecture.locked(key),
    )  # fmt: skip
    return choice or default


_CONTROL_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")  # the keys the app gives its widgets
_CONTROL_VALUES = (bool, int, float, str, list, tuple, type(None))  # what a widget's state can hold


def drawn_controls() -> dict:
    """key -> current value of the controls this run drew (read from ``st.session_state`` after the page ran).

    Streamlit keeps a widget's state only while the widget is drawn, so after a run the session state
    holds this view's widgets beside the values pages keep themselves; those are told apart by their
    key (a page's own values start with "_" or hold objects, not widget values).
    """
    return {
        k: v
        for k, v in st.session_state.to_dict().items()
        if _CONTROL_KEY.match(k) and isinstance(v, _CONTROL_VALUES)
    }
