"""AppTest of the Orthogonal residuals and Hankel attention pages: widgets at their extremes, buttons, errors."""

from __future__ import annotations

import time

import pytest
import streamlit as st

from georesolver_core.claims import CLAIMS
from tests.app_pages import open_page, run_job_to_end, run_until, set_and_run


@pytest.fixture(scope="module")
def orth():
    app = open_page("orthogonal.py")
    yield app
    st.cache_data.clear()


@pytest.fixture(scope="module")
def hankel():
    app = open_page("hankel.py")
    yield app
    st.cache_data.clear()


def test_orthogonal_default_view(orth):
    assert orth.title[0].value == "Orthogonal residuals"
    assert len(orth.get("plotly_chart")) == 3  # operator, spectrum, norm drift; training waits for its button
    assert any("What the theory says vs what we measured" in m.value for m in orth.markdown)


def test_orthogonal_sliders_at_their_extremes(orth):
    low = dict(orth_beta=0.01, orth_tilt=0, orth_gamma=0.0, orth_ddl_beta=0.0, orth_k_az=0, orth_x_az=0)
    high = dict(orth_beta=10000.0, orth_tilt=90, orth_gamma=1.0, orth_ddl_beta=3.0, orth_k_az=360, orth_x_az=360)
    set_and_run(orth, **low, orth_depth=1, orth_dim=2, orth_branch=0.0)
    set_and_run(orth, **high, orth_depth=256, orth_dim=64, orth_branch=1.0)
    text = " ".join(m.value for m in orth.markdown)
    assert "rotation angle 179.9" in text  # beta = 1e4 approaches pi but stays below it
    set_and_run(orth, orth_depth=32, orth_dim=16, orth_branch=0.0)


def test_orthogonal_training_button_curves_and_table(orth):
    set_and_run(
        orth, orth_task="rotation", orth_kinds=["hybrid", "cayley"], orth_steps=200, orth_seeds=3
    )  # more than one chunk of work
    set_and_run(orth, orth_angle=180.0)
    orth.button(key="orth_start").click()
    orth.run()
    assert not orth.exception, [e.value for e in orth.exception]
    run_until(orth, lambda: orth.session_state["orth_job"].events >= 1, "the worker's first evaluation")
    orth.button(key="orth_pause").click()
    orth.run()
    paused = orth.session_state["orth_job"]
    run_until(orth, lambda: paused.status == "paused", "the worker to say it waits")
    orth.run()
    assert not orth.button(key="orth_resume").disabled
    before = paused.text  # "paused" is shown with the last unit's result: nothing moves after it
    time.sleep(0.5)
    orth.run()
    assert paused.text == before
    orth.button(key="orth_step").click()
    orth.run()
    run_until(
        orth, lambda: paused.text != before and paused.status == "paused", "one more evaluation, then a wait"
    )
    orth.run()
    assert orth.session_state["orth_job"] is paused and paused.status == "paused"  # the same run, one step on
    orth.button(key="orth_resume").click()
    orth.run()
    run_job_to_end(orth, "orth")
    assert paused.status == "finished" and orth.button(key="orth_stop").disabled  # no stale Stop
    assert orth.dataframe, "no summary table after training"
    set_and_run(orth, orth_metric="gate")
    set_and_run(orth, orth_kinds=[])  # nothing to train: the button is disabled, the rest still draws
    assert orth.button(key="orth_start").disabled


def test_hankel_default_view(hankel):
    assert hankel.title[0].value == "Hankel attention"
    assert len(hankel.get("plotly_chart")) == 4  # kernel, decay, rank, error; speed waits for its button


def test_hankel_widgets_at_their_extremes(hankel):
    set_and_run(hankel, hk_length=16, hk_split=1, hk_h0=1, hk_delta=1.0, hk_hmax=4, hk_top=4, hk_eps=1e-6)
    set_and_run(hankel, hk_norm=False, hk_eps=0.5)
    set_and_run(hankel, hk_length=1024, hk_split=1023, hk_h0=32, hk_delta=8.0, hk_hmax=1024, hk_top=16)
    set_and_run(hankel, hk_split=4096)  # outside the sequence: an error with the fix, the page still draws
    assert any("split" in e.value for e in hankel.error)
    assert len(hankel.get("plotly_chart")) == 4


def test_hankel_speed_button_and_claims(hankel):
    set_and_run(hankel, hk_length=128, hk_split=32, hk_hmax=64, hk_max_size=128, hk_repeats=1)
    hankel.button(key="hk_start").click()
    hankel.run()  # the timing runs in a worker, not in the server
    assert not hankel.exception, [e.value for e in hankel.exception]
    run_job_to_end(hankel, "hk")
    sp = hankel.session_state["hk_job"].result
    assert sp.sizes == [64, 128] and len(sp.speedup) == 2  # every size up to the largest chosen, timed
    assert len(hankel.get("plotly_chart")) == 5
    assert "Download the timings (CSV)" in [b.proto.label for b in hankel.get("download_button")]
    set_and_run(hankel, hk_claims=True)
    assert len(hankel.get("plotly_chart")) == 5 + sum(c.page == "hankel" for c in CLAIMS.values())  # one per claim
    assert any("Seed 004" in m.value for m in hankel.markdown)
