"""AppTest of the HIDA family page: default view, widgets at their extremes, the sweeps, bad combinations."""

from __future__ import annotations

from georesolver_core.jobs import default_runner
from tests.app_pages import run_job_to_end, run_until, set_and_run

PAGE = "hida.py"  # the page of the module's shared AppTest, ``at`` (tests/conftest.py)


def test_default_view_shows_pattern_disk_and_regret(at):
    assert at.title[0].value == "HIDA family"
    assert len(at.get("plotly_chart")) == 4  # pattern, two disks, running loss
    assert any("<=" in m.value for m in at.metric)


def test_pattern_widgets_at_their_extremes(at):
    set_and_run(at, hida_n=16, hida_w=64, hida_g=1, hida_causal=True)
    assert any(m.value == "16 <= 141" for m in at.metric)  # w >= n: every causal key, far inside the bound
    set_and_run(at, hida_n=512, hida_w=1, hida_g=64, hida_causal=False)
    set_and_run(at, hida_n=16, hida_g=64)  # g > n: an error, the rest of the page still draws
    assert any("do not fit" in e.value for e in at.error)
    assert len(at.get("plotly_chart")) >= 4


def test_disk_widgets_at_their_extremes_and_the_animation(at):
    set_and_run(at, hida_m=1, hida_c=1, hida_T=50, hida_play=True)
    set_and_run(at, hida_m=32, hida_c=32, hida_T=50)
    assert len(at.get("plotly_chart")) >= 5


def test_error_sweep_and_scaling_run_on_buttons(at):
    set_and_run(at, hida_play=False, hida_err_n=32, hida_err_eps=1e-3)
    at.button(key="hida_err_run").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    set_and_run(at, hida_lens=[256], hida_kernels=["fp-hida"])
    assert at.button(key="hida_scale_start").disabled
    assert any("at least two lengths" in e.value for e in at.info)
    set_and_run(at, hida_lens=[256, 512], hida_kernels=["fp-hida", "l-hida"], hida_mem=True)
    at.button(key="hida_scale_start").click()
    at.run()
    run_until(at, lambda: at.session_state["hida_scale_job"].events >= 1, "the first timing from the worker")
    # the live fragment says the session is still here: a closed tab's job is cancelled a minute after
    assert at.session_state["_job_owner"] in default_runner().seen
    at.button(key="hida_scale_stop").click()  # Stop keeps the lengths already timed
    at.run()
    job = at.session_state["hida_scale_job"]
    assert job.status == "stopped" and job.events >= 1 and job.partial.seconds
    at.button(key="hida_scale_start").click()
    at.run()
    run_job_to_end(at, "hida_scale")
    assert not at.exception, [e.value for e in at.exception]
    assert any("fitted slope" in m.value for m in at.markdown)
