"""The pages' knob tables (app/knobs.py): a row draws the widget it describes, and every URL-bound
widget of a table-driven page is a row of its table (read from the page's source and its own modules
app/<page>_*.py, no page is run)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "app"))

import knobs  # noqa: E402
from knobs import Knob  # noqa: E402

PAGES = sorted((ROOT / "pages").glob("*.py"))
# Pages whose URL-bound widgets are still drawn one by one, not from a table.
NOT_TABLE_DRIVEN: set[str] = set()
# Helpers that draw a URL-bound widget from their first (label) argument and a key.
BOUND_HELPERS = {"log_slider", "eps_slider", "curvature_slider", "geometry_picker", "kernel_picker"}


def _name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _str(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def page_files(page: Path) -> list[Path]:
    """The page and its own modules (app/<page>_*.py: pages/embeddings.py draws through app/embeddings_*.py)."""
    return [page, *sorted((ROOT / "app").glob(f"{page.stem}_*.py"))]


def _source(page: Path) -> tuple[set[str], list[str], list[str]]:
    """(keys of the page's Knob rows, keys it draws from KNOBS, URL-bound widgets drawn outside the table)."""
    rows, drawn, outside = set(), [], []
    nodes = [node for path in page_files(page) for node in ast.walk(ast.parse(path.read_text()))]
    for node in nodes:
        if not isinstance(node, ast.Call):
            continue
        name, kw = _name(node.func), {k.arg: k.value for k in node.keywords}
        if name == "Knob":
            rows.add(_str(node.args[0]) if node.args else _str(kw.get("key")))
        elif name == "draw" and node.args and isinstance(node.args[0], ast.Subscript):
            drawn.append(_str(node.args[0].slice))
        elif "bind" in kw or name in BOUND_HELPERS:
            key = _str(kw.get("key"))
            if key is None and name in BOUND_HELPERS and node.args:  # log_slider(label, key, ...), pickers(key)
                key = _str(node.args[1] if name == "log_slider" and len(node.args) > 1 else node.args[0])
            outside.append(key or ast.unparse(node)[:60])
    return rows, drawn, outside


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_every_url_bound_widget_of_a_page_is_a_row_of_its_table(page):
    rows, drawn, outside = _source(page)
    if page.stem in NOT_TABLE_DRIVEN:
        assert outside, f"{page.stem} draws no URL-bound widget by hand any more: remove it from NOT_TABLE_DRIVEN"
        return
    assert not outside, f"{page.stem}: URL-bound widgets outside its knob table: {outside}"
    assert set(drawn) <= rows, f"{page.stem} draws keys its table lacks: {sorted(set(drawn) - rows)}"
    assert rows <= set(drawn), f"{page.stem}'s table has rows it never draws: {sorted(rows - set(drawn))}"
    assert len(drawn) == len(set(drawn)), f"{page.stem} draws a knob twice"


def test_a_table_registers_its_url_keys_and_refuses_a_repeated_key():
    rows = knobs.page_knobs(
        "test page",
        Knob("t_a", "slider", "A", 3, lo=1, hi=9),
        Knob("t_b", "toggle", "B", bind=None),
    )
    assert list(rows) == ["t_a", "t_b"]
    assert knobs.known_keys("test page") == {"t_a"}  # t_b is not part of the link
    assert "t_a" in knobs.known_keys()
    with pytest.raises(ValueError, match="unique"):
        knobs.page_knobs("test page 2", Knob("t_a", "toggle", "A"), Knob("t_a", "toggle", "B"))


def test_a_shared_table_registers_its_keys_without_becoming_the_pages():
    """The sidebar's table (``shared_knobs``) is known to the app but leaves the page's keys alone."""
    import streamlit as st

    st.session_state[knobs.PAGE_KEYS] = {"t_page"}
    rows = knobs.shared_knobs("test shared", Knob("t_s", "toggle", "S"), Knob("t_n", "toggle", "N", bind=None))
    assert list(rows) == ["t_s", "t_n"] and knobs.known_keys("test shared") == {"t_s"}
    assert "t_s" in knobs.known_keys() and st.session_state[knobs.PAGE_KEYS] == {"t_page"}
    with pytest.raises(ValueError, match="unique"):
        knobs.shared_knobs("test shared 2", Knob("t_s", "toggle", "A"), Knob("t_s", "toggle", "B"))


def test_only_the_kinds_drawn_through_the_lock_take_disabled():
    """``draw(..., disabled=True)`` is refused, naming the kinds that take it, for a kind drawn by its own
    helper (which would silently ignore it)."""
    with pytest.raises(ValueError, match="disabled must be False for a log_slider knob: only .*'toggle'"):
        knobs.draw(Knob("t_l", "log_slider", "L", 1.0, lo=0.1, hi=10.0), disabled=True)
    with pytest.raises(ValueError, match="disabled must be False for a tabs knob"):
        knobs.draw(Knob("t_t", "tabs", "T", options=("a", "b")), disabled=True)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(kind="dial"), "kind must be one of"),
        (dict(kind="slider"), "needs lo and hi"),
        (dict(kind="selectbox"), "needs options"),
    ],
)
def test_a_malformed_row_is_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Knob("t_x", label="X", **kwargs)


def test_a_row_becomes_the_streamlit_call_the_pages_made_by_hand():
    def call(knob):
        return knobs._call(knob)

    assert call(Knob("k", "slider", "L", 0.5, lo=0.0, hi=1.0, step=0.05)) == (
        "slider",
        ("L", 0.0, 1.0, 0.5, 0.05),
        {"bind": "query-params"},
    )
    method, args, kw = call(Knob("k", "selectbox", "L", "b", options=("a", "b"), format_func=str.upper))
    assert (method, args, kw["index"], kw["format_func"]) == ("selectbox", ("L", ["a", "b"]), 1, str.upper)
    assert call(Knob("k", "select_slider", "L", 4, options=(2, 4)))[2]["value"] == 4
    assert call(Knob("k", "multiselect", "L", (2,), options=(2, 4)))[2]["default"] == [2]
    method, args, kw = call(
        Knob("k", "pills", "L", ("a",), options=("a", "b"), extra=(("selection_mode", "multi"),), help="h")
    )
    assert kw == {"selection_mode": "multi", "help": "h", "bind": "query-params", "default": ["a"]}
    assert call(Knob("k", "toggle", "L"))[1:] == (("L",), {"bind": "query-params", "value": False})
    assert call(Knob("k", "text_input", "L", bind=None)) == ("text_input", ("L", ""), {})


def test_a_link_to_a_knob_of_a_closed_tab_waits_for_it_and_an_unknown_name_is_told():
    """A setting of the page that this view does not draw (a closed tab) is no unknown name: its value
    stays in the link for when the tab opens; a name in no table and drawn by nothing gets the notice."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from tests.app_pages import ENTRY

    st.cache_data.clear()
    app = AppTest.from_file(str(ENTRY), default_timeout=300)
    app.query_params["land_tab"] = "Hessian spread"
    app.query_params["land_pl_delta"] = "2.0"  # a control of the first tab
    app.query_params["no_such_setting"] = "1"
    app.switch_page("../pages/landscapes.py")
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    notice = " ".join(w.value for w in app.warning if "were not used" in w.value)
    assert "`no_such_setting=1`" in notice and "land_pl_delta" not in notice, notice
    assert app.query_params["land_pl_delta"] in ("2.0", ["2.0"])  # still in the link
