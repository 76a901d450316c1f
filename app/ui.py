"""Shared page furniture: the sidebar settings, headers, log sliders, claims and verdict boxes, downloads.

Pages import it as ``import ui`` (streamlit puts the entry script's folder on sys.path).
All math lives in georesolver_core; this module only draws.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import lecture
import numpy as np
import pandas as pd
import streamlit as st
import torch
from streamlit.errors import StreamlitAPIException

from georesolver_core.attention.layer import ATTENTION
from georesolver_core.claims import CLAIMS, FAILS, run_claim
from georesolver_core.device import DTYPES, device_label
from georesolver_core.geometry import GEOMETRIES
from georesolver_core.viz.style import presentation

VERDICT_BADGE = {
    "holds": ":green-badge[:material/check: holds]",
    "holds only under conditions": ":orange-badge[:material/rule: holds only under conditions]",
    "fails": ":red-badge[:material/close: fails]",
}


_PAGES: list = []  # (st.Page, description) in navigation order, set by the entry script


def register_pages(pages: list) -> None:
    """Remember the navigation's pages so Home can draw the map of the app."""
    _PAGES[:] = pages


def page_map() -> list:
    """(st.Page, one-line description) for every registered page."""
    return list(_PAGES)


@dataclass(frozen=True)
class Settings:
    seed: int
    dtype: torch.dtype
    device: torch.device


def _devices() -> list[str]:
    return ["cuda", "cpu"] if torch.cuda.is_available() else ["cpu"]


def sidebar_settings() -> Settings:
    """Draw the shared settings in the sidebar; every widget is bound to the URL so a view is a link."""
    with st.sidebar:
        st.subheader("Shared settings")
        st.number_input(
            "Random seed",
            min_value=0,
            max_value=2**31 - 1,
            value=0,
            step=1,
            key="seed",
            bind="query-params",
            help="Every random draw on every page starts from this seed.",
        )
        st.segmented_control(
            "Precision",
            list(DTYPES),
            default="float32",
            key="dtype",
            bind="query-params",
            help="float64 keeps Poincaré points accurate near the rim (float32 saturates at norm 0.996).",
        )
        st.selectbox(
            "Device",
            _devices(),
            key="device",
            bind="query-params",
            help="CUDA when a GPU is present, CPU otherwise.",
        )
        st.toggle(
            "Presentation mode",
            key="present",
            bind="query-params",
            help="Larger fonts, markers and lines in every figure, for a projector.",
        )
        s = settings()
        st.caption(f"Running on **{device_label(s.device)}**, torch {torch.__version__}")
        st.button("Reset all settings", key="reset_settings", icon=":material/restart_alt:", on_click=_reset_all)
    return s


def _reset_all() -> None:
    """Forget every setting and the URL's query string (the Reset button's callback).

    Streamlit refuses to clear query parameters bound to widgets ("modify the widget values
    instead"), and a deleted widget state is re-seeded from the browser's URL. So each bound
    widget is set back to its own default, which makes its binding drop the parameter from the
    URL; everything else is deleted, and the parameters no widget owns are removed.
    """
    defaults = _bound_widget_defaults()
    for key in list(st.session_state.keys()):
        if key not in defaults:
            del st.session_state[key]
    for key, value in defaults.items():
        st.session_state[key] = value
    for key in list(st.query_params.keys()):
        try:
            del st.query_params[key]
        except StreamlitAPIException:  # bound to a widget: its reset to the default drops it
            pass


def _bound_widget_defaults() -> dict:
    """user key -> default value of every widget bound to the URL that this session has drawn.

    Streamlit has no public API for a widget's default; its metadata holds the deserializer
    that yields the default for "no value". Empty if those internals move (Reset then only
    forgets the unbound state).
    """
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    try:
        state = get_script_run_ctx().session_state._state
        ids = state._key_id_mapper.id_key_mapping  # widget id -> user key
        out = {}
        for wid, meta in state._new_widget_state.widget_metadata.items():
            if getattr(meta, "bind", None) == "query-params" and wid in ids:
                out[ids[wid]] = meta.deserializer(None)
        return out
    except (AttributeError, TypeError, KeyError):
        return {}


def settings() -> Settings:
    """The shared settings as chosen in the sidebar (defaults when a test runs a page alone)."""
    state = st.session_state
    dtype_name = state.get("dtype") or "float32"
    device = state.get("device") or _devices()[0]
    return Settings(int(state.get("seed") or 0), DTYPES.get(dtype_name, torch.float32), torch.device(device))


def chart(fig, key: str, *, container=None) -> None:
    """Draw a plotly figure, enlarged in presentation mode (sidebar)."""
    if st.session_state.get("present"):
        fig = presentation(fig)
    (container or st).plotly_chart(fig, key=key)
    lecture.remember(key, fig)


def page_header(title: str, what: str) -> None:
    """Title and the two-line 'what you are looking at'."""
    st.title(title)
    st.markdown(what)


def nice_values(lo: float, hi: float) -> list[float]:
    """1-2-5 steps per decade from lo to hi inclusive: the stops of a logarithmic slider."""
    out = []
    for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for m in (1, 2, 5):
            v = float(f"{m}e{e}")
            if lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9):
                out.append(v)
    return out


def log_slider(label: str, key: str, lo: float, hi: float, default: float, help: str | None = None) -> float:
    """A logarithmic slider over 1-2-5 stops in [lo, hi], bound to the URL."""
    options = nice_values(lo, hi)
    default = min(options, key=lambda v: abs(math.log(v) - math.log(default)))
    return float(
        st.select_slider(
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


# ---- shared pickers, built from the registries ----------------------------------------------------


def geometry_picker(
    key: str, label: str = "Geometry", *, default: str | None = None, segmented: bool = False, container=None
) -> str:
    """One geometry of the GEOMETRIES registry, bound to the URL (a selectbox, or segmented buttons)."""
    where = container or st
    options = list(GEOMETRIES)
    default = default if default in options else options[0]
    fmt = lambda g: GEOMETRIES[g].label  # noqa: E731
    if segmented:
        choice = where.segmented_control(
            label, options, default=default, format_func=fmt, key=key, bind="query-params", required=True,
            disabled=lecture.locked(key),
        )  # fmt: skip
        return choice or default
    return where.selectbox(
        label, options, index=options.index(default), format_func=fmt, key=key, bind="query-params",
        disabled=lecture.locked(key),
    )  # fmt: skip


def curvature_slider(
    key: str, geometry: str, *, container=None, always: bool = False, help: str | None = None
) -> float:
    """The curvature parameter c of a geometry that has one (the ball: k = -c), 0.1-10 on a log scale.

    A geometry whose registry entry does not use c gets a caption instead of the slider and 1.0 back
    (unless ``always``).
    """
    if not GEOMETRIES[geometry].uses_c and not always:
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
        kernels = {name: kind.label for name, kind in ATTENTION.items()}
    where = container or st
    options = list(kernels)
    default = "ida" if "ida" in kernels else options[0]
    choice = where.segmented_control(
        label, options, default=default, format_func=kernels.get, key=key, bind="query-params",
        disabled=lecture.locked(key),
    )  # fmt: skip
    return choice or default


def claims_box(keys: list[str], prefix: str, *, enabled: bool = True) -> None:
    """The verdict box for these claims, and each claim's measurement behind a toggle."""
    if not enabled:
        st.caption("The paper's claims for this view are switched off at the top of the page.")
        return
    results = measure_claims(keys)
    theory_box(results)
    if st.toggle("Show the measurements behind the verdicts", key=f"{prefix}_claims_show"):
        claims_grid(results, prefix)
    download_json("Download the claims' data (JSON)", results, f"{prefix}_claims.json", f"{prefix}_claims_dl")


CLAIMS_REPORT = Path(__file__).resolve().parent.parent / "assets" / "claims_report.json"


@st.cache_data(show_spinner=False)
def shipped_report() -> dict | None:
    """The claims report shipped in assets/ (measured at full settings), or None when it is absent or unreadable."""
    from georesolver_core.claims.report import load_report

    try:
        return load_report(CLAIMS_REPORT)
    except ValueError:
        return None


def shipped_claims(keys: list[str]) -> list[dict]:
    """These claims as the shipped report measured them, in order; a claim it lacks is measured live
    (small sweeps, ``measure_claims``), so a page opens at once and a new claim still shows."""
    report = shipped_report()
    have = {} if report is None else {r["key"]: r for r in report["claims"]}
    live = (
        {r["key"]: r for r in measure_claims([k for k in keys if k not in have])} if set(keys) - set(have) else {}
    )
    return [have.get(k) or live[k] for k in keys if k in have or k in live]


def page_claims(page: str, prefix: str) -> list[dict]:
    """Every claim shown on ``page`` (its url path): the shipped report's measurement (claims it lacks are
    measured live), the verdict box, their figures, a JSON download."""
    results = shipped_claims([key for key, claim in CLAIMS.items() if claim.page == page])
    theory_box(results)
    claims_grid(results, prefix)
    download_json("Download the claims' data (JSON)", results, f"{page}_claims.json", f"{prefix}_claims_dl")
    return results


def claims_grid(results: list[dict], prefix: str) -> None:
    """Each claim's measurement against its bound, two to a row. The statements and summaries are in the
    verdict box above; a failed claim repeats its counter-example in red under its figure."""
    from georesolver_core.viz.claims import claim_figure

    cols = st.columns(2)
    for i, r in enumerate(results):
        with cols[i % 2].container(border=True):
            chart(claim_figure(r, height=320), key=f"{prefix}_claim_{r['key']}")
            if r["verdict"] == FAILS:
                st.error(f"Contradicted by the measurement. {r['summary']}")


@st.cache_data(show_spinner=False)
def claim_result(key: str) -> dict:
    """One claim measured with its small sweeps (``run_claim(key, quick=True)``).

    The one cached runner of the app: a claim measured on one page is not measured again on another.
    A measurement that raises is not cached, so it is retried on the next run.
    """
    return run_claim(key, quick=True)


def measure_claims(keys: list[str]) -> list[dict]:
    """Measure these claims under a status box with a progress bar; returns the results that succeeded.

    One broken measurement must not hide the other claims: it shows an error with the command that reruns it.
    """
    results, failures = [], []
    with st.status(f"Measuring {len(keys)} claims (small sweeps) ...", expanded=False) as status:
        bar = st.progress(0.0)
        for i, key in enumerate(keys):
            try:
                results.append(claim_result(key))
            except Exception as err:  # any error of one measurement, reported below; the others still show
                failures.append((key, err))
            bar.progress((i + 1) / len(keys), text=key)
        status.update(
            label=f"{len(results)} of {len(keys)} claims measured (small sweeps)",
            state="error" if failures else "complete",
        )
    for key, err in failures:
        st.error(
            f"Claim {key!r} could not be measured: {err}. Run `python -m georesolver_core claims --only {key}`."
        )
    return results


def theory_box(results: list[dict], title: str = "What the theory says vs what we measured") -> None:
    """One bordered box: for each claim its statement, bound, headline measurement and verdict."""
    with st.container(border=True):
        st.markdown(f"**{title}**")
        for r in results:
            # the verdict is for the sweep measured, not for whatever setting the page shows beside it
            where = f"  \n*Verdict for the sweep over* {r['x_label']}" if r.get("x_label") else ""
            st.markdown(
                f"{VERDICT_BADGE.get(r['verdict'], r['verdict'])} **{r['section']}**: {escape_md(r['statement'])}{where}"
            )
            st.markdown(f"Bound: `{r['bound_text']}`  \nMeasured: {r['summary']}")


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


_MD_INLINE = re.compile(r"([\\`*_{}\[\]<>~$:&|!])")  # links, images, HTML, emphasis, code, directives, maths
_MD_LEADING = re.compile(r"^([#+\-.=>])")  # headings, list markers, quotes: only at the start of a line
# Bare addresses become links after escapes are resolved (GFM autolink literals: http://, www., a@b.c);
# a zero-width space after the ":" of "://", after "www" and after "@" keeps them plain text.
_MD_AUTOLINK = re.compile(r"(?i)(\\:(?=//)|\bwww(?=\.)|@)")


def escape_md(text) -> str:
    """User text (file names, node names, report fields) made inert for st.markdown / st.error:
    markdown punctuation that forms links, images, HTML, emphasis, colour or emoji directives is
    backslash-escaped, so none of it renders, and line breaks become spaces (one message stays one
    line, so block syntax can only appear at its start, which is escaped too); bare web and e-mail
    addresses get a zero-width space so that they are not turned into links either."""
    escaped = _MD_LEADING.sub(r"\\\1", _MD_INLINE.sub(r"\\\1", " ".join(str(text).split())))
    return _MD_AUTOLINK.sub("\\g<0>\u200b", escaped)


def read_upload(uploaded, *, key: str, max_bytes: int, parse):
    """(value, error) of an uploaded file, parsed once per upload.

    The size is checked before any byte is read; ``parse(bytes)`` runs once per file (its outcome is
    kept under ``<key>_parsed`` by the file's id), so a rejected file is not parsed again on every
    rerun; only the error text is kept for it, never its data. Removing the file forgets both.
    """
    state, slot = st.session_state, f"{key}_parsed"
    if uploaded is None:
        state.pop(slot, None)
        return None, None
    file_id = getattr(uploaded, "file_id", None) or (uploaded.name, uploaded.size)
    saved = state.get(slot)
    if saved is not None and saved["id"] == file_id:
        return saved["value"], saved["error"]
    value, error = None, None
    if uploaded.size > max_bytes:
        error = f"the file has {uploaded.size:,} bytes; at most {max_bytes:,} are allowed"
    else:
        try:
            value = parse(uploaded.getvalue())
        except (ValueError, TypeError, KeyError, UnicodeDecodeError, RecursionError) as err:
            error = str(err) or type(err).__name__
    state[slot] = {"id": file_id, "value": value, "error": error}
    return value, error


def _jsonable(obj):
    if isinstance(obj, (np.ndarray, torch.Tensor)):
        return np.asarray(obj.detach().cpu() if isinstance(obj, torch.Tensor) else obj).tolist()
    if isinstance(obj, (np.floating, np.integer)):
        return obj.item()
    return str(obj)
