"""AppTest of the Attention page: every widget at its extremes, no exception; errors shown, page still works."""

from __future__ import annotations

import json
import time

import pytest

from georesolver_core.geometry import GEOMETRIES
from tests.app_pages import set_and_run

PAGE = "attention.py"  # the page of the module's shared AppTest, ``at`` (tests/conftest.py)


_run = set_and_run


def test_page_shows_title_matrix_bars_picture_and_claims(at):
    assert at.title[0].value == "Attention lab"
    assert len(at.get("plotly_chart")) == 3  # heatmap, bars, 2-D picture; the claims' figures on request
    _run(at, att_claims_figs=True)
    assert len(at.get("plotly_chart")) >= 3 + 11  # and one panel per claim
    assert any("What the theory says vs what we measured" in m.value for m in at.markdown)
    # the query starts on key 1: the library's exact-retrieval verdict is shown, not recomputed
    assert any(
        "Exact retrieval (section 2.3): q = k1" in m.value and ":green[holds]" in m.value for m in at.markdown
    )
    _run(at, att_claims=False)  # the rest of this module exercises the lab alone
    assert len(at.get("plotly_chart")) == 3


@pytest.mark.parametrize("geometry", list(GEOMETRIES))
def test_extremes_in_each_geometry(at, geometry):
    _run(at, att_geometry=geometry)
    low = dict(att_n=1, att_d=2, att_eps=1e-8, att_temp=0.01, att_spread=0.1)
    high = dict(att_n=256, att_d=64, att_eps=100.0, att_temp=100.0, att_spread=3.0)
    if GEOMETRIES[geometry].has_curvature_parameter:
        low["att_c"], high["att_c"] = 0.1, 10.0
    _run(at, **low)
    _run(at, **high)
    _run(at, att_d=2, att_eps=1e-8)  # the largest n drawn in the picture
    _run(at, att_n=8, att_eps=0.05, att_spread=1.0, att_temp=1.0)


def test_query_modes_kernel_and_sweep(at):
    _run(at, att_geometry="sphere", att_n=256, att_d=3)
    _run(at, att_query="key")
    _run(at, att_j=256)
    _run(at, att_query="between")
    _run(at, att_j=1, att_j2=256, att_t=0.0)
    _run(at, att_t=1.0, att_kernel="softmax")
    _run(at, att_n=1)  # 'between' needs two keys: the page falls back to a random query
    assert any("needs n >= 2 keys" in w.value for w in at.warning)
    _run(at, att_query="key")
    _run(at, att_j=256)  # an index beyond n is clamped to the last key, not an error
    _run(at, att_query="custom", att_sweep=True)
    _run(at, att_anim_speed=0.5)
    spec = next(json.loads(c.proto.spec) for c in at.get("plotly_chart") if '"Play"' in c.proto.spec)
    assert spec["layout"]["updatemenus"][0]["buttons"][0]["args"][1]["frame"]["duration"] == 700  # 350 ms / 0.5


def test_custom_query_outside_the_ball_shows_an_error_and_the_page_still_works(at):
    _run(at, att_geometry="poincare", att_n=5, att_d=64, att_query="custom")
    _run(at, att_c=10.0)  # 64 coordinates of 0.05 have norm 0.4 > 1/sqrt(10)
    assert any("could not be placed" in e.value for e in at.error)
    assert at.get("plotly_chart")  # the rest of the page still draws


def test_slider_rerun_time_at_default_settings(at):
    _run(at, att_geometry="euclidean", att_query="random", att_n=8, att_d=2, att_c=1.0, att_sweep=False)
    start = time.perf_counter()
    for eps in (0.01, 0.02, 0.05):
        _run(at, att_eps=eps)
    # A whole-script rerun under AppTest; a loose ceiling that still catches a page that recomputes claims.
    assert (time.perf_counter() - start) / 3 < 5.0
