"""The lecturer's link: hide and lock controls from the URL, a shareable link, a figure's export."""

from __future__ import annotations

import sys
from pathlib import Path

import plotly.graph_objects as go

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "app"))

import lecture  # noqa: E402


def test_keys_are_checked_before_they_reach_the_style():
    assert lecture.parse_keys(["rt_eps,rt_k", "seed", "x}</style><script>", "1bad", "rt_k"]) == [
        "rt_eps",
        "rt_k",
        "seed",
    ]
    style = lecture.css(["rt_eps"], ["seed", "a;b{"])
    assert ".st-key-rt_eps {display: none" in style and ".st-key-seed {pointer-events: none" in style
    assert "a;b" not in style and lecture.css([], []) == ""


def test_share_link_replaces_hide_and_lock_and_keeps_the_view():
    link = lecture.share_link(
        "http://host:8501/routing?old=1", {"rt_eps": ["0.1"], "_hide": ["x"]}, ["rt_eps", "rt_k"], ["seed"]
    )
    assert link == "http://host:8501/routing?rt_eps=0.1&_hide=rt_eps%2Crt_k&_lock=seed"
    assert lecture.share_link("http://h/p", {}, [], []) == "http://h/p"


def test_figure_data_holds_every_trace():
    fig = go.Figure([go.Scatter(x=[1, 2], y=[3, 4], name="a"), go.Heatmap(z=[[1, 2]], name="b")])
    data = lecture.figure_data(fig)
    assert data["traces"][0] == {"name": "a", "type": "scatter", "x": [1, 2], "y": [3, 4]}
    assert data["traces"][1]["z"] == [[1, 2]]


def _orthogonal(**query):
    """A fresh session on the Orthogonal residuals page, opened by a link with ``query``, run once."""
    from tests.app_pages import open_page

    return open_page("orthogonal.py", query=query, via_home=False)


def test_a_link_with_hide_draws_the_style_and_the_panel_offers_exports():
    app = _orthogonal(_hide="orth_beta,seed", _lock="orth_gamma")
    html = " ".join(h.proto.body for h in app.get("html"))
    assert ".st-key-orth_beta {display: none" in html and ".st-key-orth_gamma {pointer-events" in html
    assert "orth_beta" in app.multiselect(key="lec_hide").options
    assert app.multiselect(key="lec_hide").value == ["orth_beta", "seed"]
    # the link's hide and lock lists are used, so no "not used" notice names them
    assert not [w.value for w in app.warning if "were not used" in w.value]
    bad = _orthogonal(_hide="orth_beta,<b>")  # a malformed name is dropped, and the notice says so
    assert [w.value for w in bad.warning if "were not used" in w.value and "_hide" in w.value]
    assert "orth_drift_fig" in app.selectbox(key="lec_fig").options
    links = [m.value for m in app.markdown if "_hide=" in m.value]
    assert links and "_hide=orth_beta%2Cseed" in links[-1] and links[-1].startswith("`")
    assert not app.code  # a code block would load the syntax highlighter's 1.5 MB into the page
    app.toggle(key="lec_copy").set_value(True).run()  # the copy button, on request
    assert not app.exception and [c.value for c in app.code] == [links[-1].strip("`")]


def test_a_locked_widget_is_disabled_and_keeps_its_value():
    """``?_lock=`` passes ``disabled=True`` (AppTest, like a browser, cannot change it), and a value sent
    for a locked widget anyway (here through session state) is put back before the page draws."""
    import pytest
    from streamlit.testing.v1.errors import AppTestError

    app = _orthogonal(_lock="orth_gamma,orth_beta", orth_gamma="0.3")
    gamma, beta = app.slider(key="orth_gamma"), app.select_slider(key="orth_beta")
    assert gamma.disabled and beta.disabled and gamma.value == 0.3  # beta: a shared log slider
    assert not app.slider(key="orth_ddl_beta").disabled
    with pytest.raises(AppTestError, match="disabled"):
        gamma.set_value(0.9)
    with pytest.raises(AppTestError, match="disabled"):
        beta.set_value(100.0)
    app.session_state["orth_gamma"] = 0.9
    app.session_state["orth_beta"] = 100.0
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    assert app.slider(key="orth_gamma").value == 0.3 and app.select_slider(key="orth_beta").value == 1.0


def test_figure_image_writes_png_and_svg_with_kaleido():
    import pytest

    bad = go.Figure()
    with pytest.raises(ValueError, match="fmt"):
        lecture.figure_image(bad, "jpeg")
    pytest.importorskip("kaleido", reason="PNG / SVG export needs the export extra (kaleido)")
    fig = go.Figure(go.Scatter(x=[1, 2, 3], y=[1, 4, 9], name="a"))
    assert lecture.png_available()
    try:
        png = lecture.figure_image(fig, "png")
    except Exception as err:  # kaleido installed but no Chrome / Chromium to drive
        pytest.skip(f"kaleido cannot start a browser here: {err}")
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert lecture.figure_image(fig, "svg").lstrip().startswith(b"<svg")


def test_the_panel_offers_the_controls_of_a_closed_tab():
    """Hide / lock choices come from the page's knob table too: a lecturer can lock a control on a tab
    this view has not opened (Landscapes opens on its first tab; the Hessian tab's rho is in the table)."""
    from tests.app_pages import open_page

    app = open_page("landscapes.py", via_home=False, timeout=180)
    options = app.multiselect(key="lec_hide").options
    assert "land_h_rho" in options and "land_m_span" in options and "land_pl_delta" in options
