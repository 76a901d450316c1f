"""AppTest of the Training page: start, pause, step, stop and reset a short run; bad input shown, page still works."""

from __future__ import annotations

import pytest
import streamlit as st
import torch
from streamlit.testing.v1 import local_script_runner

from georesolver_core.device import process_threads, set_process_threads
from tests.app_pages import open_page, set_and_run


@pytest.fixture(scope="module")
def at():
    # Tiny models: see device.one_cpu_thread. The page's script threads start at the process count, so set
    # that one, through its owner, and put it back (a bare torch.set_num_threads here left the test
    # process's main thread at 1 for every later test file).
    before = process_threads()
    set_process_threads(1)
    try:
        yield open_page("training.py")
    finally:
        set_process_threads(before)
        st.cache_data.clear()


def _click(at, key):
    at.button(key=key).click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]


def _runs(at):
    return at.session_state["trn_runs"]


def _fragment_rerun(at, monkeypatch):
    """Rerun only the page's fragments, as the live fragment's timer does in a browser (``AppTest.run``
    reruns the whole script): the tree then holds only what the fragments draw."""
    ids = list(at._fragment_storage._fragments)
    rerun = local_script_runner.RerunData
    with monkeypatch.context() as m:
        m.setattr(local_script_runner, "RerunData", lambda **kw: rerun(**kw, fragment_id_queue=ids, is_auto_rerun=True))
        at.run()
    assert not at.exception, [e.value for e in at.exception]


def test_page_shows_title_device_and_an_invitation(at):
    assert at.title[0].value == "Training lab"
    assert any("Device:" in c.value for c in at.caption)
    assert any("Press **Start**" in i.value for i in at.info)


def test_start_pause_step_stop_reset_a_short_run(at):
    set_and_run(at, trn_size=4, trn_width=16, trn_layers=1, trn_steps=3000)  # more than one chunk of work
    _click(at, "trn_start")
    run = _runs(at)[-1]
    assert run.status == "running" and run.trainer.step >= 1  # the fragment trained a chunk
    assert at.get("plotly_chart") and len(at.get("progress")) >= 1
    _click(at, "trn_pause")
    assert run.status == "paused"
    before = run.trainer.step
    _click(at, "trn_step")
    assert run.trainer.step == before + 1 and run.status == "paused"
    _click(at, "trn_stop")
    assert run.status == "stopped"
    assert at.dataframe  # the runs table
    # the gates of the trained model, with Theorem 7.1 checked on its tokens
    assert any("Theorem 7.1" in m.value for m in at.markdown)
    # a second run (the softmax baseline) is overlaid with the first
    set_and_run(at, trn_model="softmax")
    _click(at, "trn_start")
    _click(at, "trn_stop")
    assert len(_runs(at)) == 2
    set_and_run(at, trn_pick=2)
    assert any("no HyperGate" in c.value for c in at.caption)
    _click(at, "trn_reset")
    assert _runs(at) == []


@pytest.mark.parametrize("task", ["copy", "hierarchy", "noisy", "digits"])
def test_every_task_starts(at, task):
    set_and_run(at, trn_task=task, trn_model="hida", trn_size=2, trn_width=16, trn_layers=1, trn_steps=5)
    _click(at, "trn_start")
    if _runs(at)[-1].status == "running":  # five steps may already be done in the first chunk
        _click(at, "trn_stop")
    assert _runs(at)[-1].trainer.step >= 1 and _runs(at)[-1].status in ("stopped", "finished")
    _click(at, "trn_reset")


def test_widget_extremes_and_invalid_width_show_errors_not_exceptions(at):
    set_and_run(at, trn_task="recall")  # the size input is disabled while a fixed-size task is chosen
    set_and_run(at, trn_model="sida", trn_size=1, trn_width=128, trn_layers=4, trn_eps=1e-4, trn_lr=1.0)
    set_and_run(at, trn_size=64, trn_width=16, trn_layers=1, trn_eps=10.0, trn_lr=1e-4, trn_steps=1)
    _click(at, "trn_start")
    assert _runs(at)[-1].status in ("finished", "running", "paused")
    _click(at, "trn_reset")
    set_and_run(at, trn_task="noisy", trn_size=1)  # 8 training sequences: too few for a split? still valid
    _click(at, "trn_start")
    assert _runs(at) and not at.exception
    _click(at, "trn_reset")


def test_corrupt_upload_is_refused_with_an_error(at):
    at.get("file_uploader")  # present in the expander
    # AppTest cannot upload files; the refusal is tested through the library call the page makes
    from georesolver_core.train import load_checkpoint

    with pytest.raises(ValueError, match="not a readable checkpoint"):
        load_checkpoint(b"\x00garbage")


def test_memory_path_run_starts(at):
    set_and_run(at, trn_task="recall")
    set_and_run(at, trn_model="ida", trn_memory=True, trn_size=4, trn_width=16, trn_layers=1, trn_steps=10)
    _click(at, "trn_start")
    assert _runs(at)[-1].spec.model.memory == "gsr" and _runs(at)[-1].trainer.step >= 1
    _click(at, "trn_reset")
    set_and_run(at, trn_memory=False)


def test_resume_continues_the_same_run(at):
    set_and_run(at, trn_task="recall", trn_size=4, trn_width=16, trn_layers=1, trn_steps=400)
    _click(at, "trn_start")
    _click(at, "trn_pause")
    run = _runs(at)[-1]
    n_runs, paused_at, batches = len(_runs(at)), run.trainer.step, run.trainer.generator.get_state()
    assert run.status == "paused" and at.button(key="trn_resume").disabled is False
    _click(at, "trn_resume")
    assert len(_runs(at)) == n_runs and _runs(at)[-1] is run  # no new run: the paused one goes on
    assert run.status in ("running", "finished") and run.trainer.step > paused_at
    assert not torch.equal(run.trainer.generator.get_state(), batches)  # the same batch stream, advanced
    assert at.button(key="trn_resume").disabled
    _click(at, "trn_stop")
    _click(at, "trn_reset")


def test_text_task_shows_bits_a_sample_and_an_attention_map(at):
    set_and_run(at, trn_task="text", trn_model="ida", trn_size=8, trn_width=16, trn_layers=1, trn_steps=3)
    _click(at, "trn_start")
    if _runs(at)[-1].status == "running":
        _click(at, "trn_stop")
    assert any(m.label == "validation bits/char" for m in at.metric)
    assert at.code and len(at.code[0].value) > 2  # the generated sample
    assert any("bits per character" in c.value for c in at.caption)
    assert at.get_by_key("trn_attn_fig") is not None and at.get_by_key("trn_dl_ckpt") is not None
    assert "trn_attn_fig" in at.get_by_key("lec_fig").options  # drawn by ui.chart: the lecturer can export it
    set_and_run(at, trn_sentence="the cat", trn_attn_head=2)
    _click(at, "trn_reset")


def test_the_page_states_the_gap_between_georesolver_and_softmax_on_text(at):
    set_and_run(at, trn_task="text", trn_model="ida", trn_size=8, trn_width=16, trn_layers=1, trn_steps=3)
    _click(at, "trn_start")
    set_and_run(at, trn_model="softmax")
    _click(at, "trn_start")
    for _ in range(20):
        if all(r.status != "running" for r in _runs(at)):
            break
        at.run()
    gap = [m.value for m in at.markdown if "is lower by" in m.value]
    assert gap and "GeoResolver run #" in gap[0] and "softmax run #" in gap[0], [m.value for m in at.markdown]
    _click(at, "trn_reset")


def test_the_runs_table_shows_the_current_step_while_a_run_trains(at, monkeypatch):
    set_and_run(at, trn_task="recall", trn_model="ida", trn_size=4, trn_width=16, trn_layers=1, trn_steps=3000)
    _click(at, "trn_start")
    run = _runs(at)[-1]
    assert run.status == "running"
    for _ in range(2):  # the timer's reruns: each trains a chunk and redraws only the fragment
        before = run.trainer.step
        _fragment_rerun(at, monkeypatch)
        assert run.trainer.step > before
        assert at.dataframe, "the runs table is not redrawn by the live fragment"
        assert at.dataframe[0].value["steps"].tolist()[-1] == run.trainer.step
    at.run()  # the whole page again: the buttons are drawn outside the fragment
    _click(at, "trn_stop")
    _click(at, "trn_reset")


def test_hida_sizes_reach_the_model(at):
    set_and_run(at, trn_task="recall", trn_model="l-hida", trn_size=4, trn_width=16, trn_layers=1, trn_steps=2)
    set_and_run(at, trn_n_anchors=3)
    _click(at, "trn_start")
    run = _runs(at)[-1]
    assert run.spec.model.attention.n_anchors == 3
    assert run.trainer.model.blocks[0].attn.kernel.n_anchors == 3
    if run.status == "running":
        _click(at, "trn_stop")
    _click(at, "trn_reset")
    set_and_run(at, trn_model="ida")
    with pytest.raises(KeyError):  # the size of another kernel is not offered
        at.get_by_key("trn_n_anchors")
