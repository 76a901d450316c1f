"""AppTest of the Training page: runs train in worker processes (the job runner) and their progress reaches
the page; start, pause, step, resume, stop and reset keep their meaning across the process boundary; bad
input is shown and the page still works."""

from __future__ import annotations

import time

import pytest
from streamlit.testing.v1 import local_script_runner

from tests.app_pages import open_page, set_and_run

pytestmark = pytest.mark.slow  # each run waits for a spawned worker (about 3 s to start)


PAGE = "training.py"  # the page of the module's shared AppTest, ``at`` (tests/conftest.py)


def _click(at, key):
    at.button(key=key).click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]


def _runs(at):
    return at.session_state["trn_runs"]


def _until(at, predicate, what: str, timeout_s: float = 120.0) -> None:
    """Rerun the page (as its live fragment's timer would) until ``predicate()`` holds."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, (
            f"timed out waiting for {what}: {[(r.status, r.step) for r in _runs(at)]}"
        )
        time.sleep(0.2)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
    at.run()  # the page drawn with what the predicate saw (the runner's thread may have moved since the last run)
    assert not at.exception, [e.value for e in at.exception]


def _ended(at) -> bool:
    return all(not r.active for r in _runs(at))


def _fragment_rerun(at, monkeypatch):
    """Rerun only the page's fragments, as the live fragment's timer does in a browser (``AppTest.run``
    reruns the whole script): the tree then holds only what the fragments draw."""
    ids = list(at._fragment_storage._fragments)
    rerun = local_script_runner.RerunData
    with monkeypatch.context() as m:
        m.setattr(
            local_script_runner, "RerunData", lambda **kw: rerun(**kw, fragment_id_queue=ids, is_auto_rerun=True)
        )
        at.run()
    assert not at.exception, [e.value for e in at.exception]


def test_page_shows_title_device_and_an_invitation(at):
    assert at.title[0].value == "Training lab"
    assert any("Device:" in c.value for c in at.caption)
    assert any("Press **Start**" in i.value for i in at.info)


def test_start_pause_step_stop_reset_a_short_run(at):
    set_and_run(at, trn_size=4, trn_width=16, trn_layers=1, trn_steps=5000)  # longer than the test waits
    _click(at, "trn_start")
    run = _runs(at)[-1]
    assert run.status in ("queued", "running")
    _until(at, lambda: run.step >= 30, "the worker's first steps to reach the page")
    assert run.handle.pid is not None  # a worker process trains it, not this one
    assert at.get("plotly_chart") and len(at.get("progress")) >= 1
    assert "step" in at.get("progress")[0].proto.text
    _click(at, "trn_pause")
    _until(at, lambda: run.status == "paused", "the worker to say it waits")
    before = run.step  # "paused" is shown with the last step's row: nothing moves after it
    time.sleep(0.5)
    at.run()
    assert run.step == before, "a paused run went on training"
    _click(at, "trn_step")
    _until(at, lambda: run.step == before + 1, "one step")
    time.sleep(0.3)
    at.run()
    assert run.step == before + 1 and run.status == "paused"
    _click(at, "trn_resume")
    _until(at, lambda: run.step > before + 1, "training to go on after Resume")
    _click(at, "trn_stop")
    _until(at, lambda: run.status == "stopped", "the worker to stop")
    # the worker says "stopped" just before its process exits: wait for the exit itself
    _until(at, lambda: run.handle.exitcode is not None, "the worker process to end")
    assert run.checkpoint_path.is_file()  # Stop checkpointed the run so far
    assert at.dataframe  # the runs table
    # the gates of the trained model (read from its checkpoint), with Theorem 7.1 checked on its tokens
    assert any("Theorem 7.1" in m.value for m in at.markdown)
    # a second run (the softmax baseline) is overlaid with the first
    set_and_run(at, trn_model="softmax", trn_steps=30)
    _click(at, "trn_start")
    _until(at, lambda: _ended(at), "the softmax run")
    assert len(_runs(at)) == 2 and _runs(at)[-1].status == "finished"
    set_and_run(at, trn_pick=2)
    assert any("no HyperGate" in c.value for c in at.caption)
    _click(at, "trn_reset")
    assert _runs(at) == []


@pytest.mark.parametrize("task", ["copy", "hierarchy", "noisy", "digits"])
def test_every_task_trains_in_a_worker(at, task):
    set_and_run(at, trn_task=task, trn_model="hida", trn_size=2, trn_width=16, trn_layers=1, trn_steps=5)
    _click(at, "trn_start")
    _until(at, lambda: _ended(at), f"the {task} run")
    run = _runs(at)[-1]
    assert run.status == "finished" and run.step == 5, (run.status, run.message)
    assert run.metrics().accuracy is not None
    _click(at, "trn_reset")


def test_widget_extremes_and_invalid_width_show_errors_not_exceptions(at):
    set_and_run(at, trn_task="recall")  # the size input is disabled while a fixed-size task is chosen
    set_and_run(at, trn_model="sida", trn_size=1, trn_width=128, trn_layers=4, trn_eps=1e-4, trn_lr=1.0)
    set_and_run(at, trn_size=64, trn_width=16, trn_layers=1, trn_eps=10.0, trn_lr=1e-4, trn_steps=1)
    _click(at, "trn_start")
    _until(at, lambda: _ended(at), "a one-step run")
    assert _runs(at)[-1].status in ("finished", "diverged")
    _click(at, "trn_reset")
    set_and_run(at, trn_task="noisy", trn_size=1)  # 8 training sequences: too few for a split? still valid
    _click(at, "trn_start")
    assert _runs(at) and not at.exception
    _click(at, "trn_reset")


def test_a_run_that_fails_in_its_worker_is_shown_and_the_next_run_starts(at, monkeypatch):
    import jobs_ui

    from georesolver_core.jobs import JobSpec

    set_and_run(at, trn_task="recall", trn_size=4, trn_width=16, trn_layers=1, trn_steps=5)
    runner = jobs_ui.runner()
    real = runner.submit
    # the worker is given a checkpoint that is not there: it fails after it started, as a crash would
    monkeypatch.setattr(
        runner, "submit", lambda spec, owner: real(JobSpec("train", {"resume": "/nonexistent.pt"}), owner=owner)
    )
    _click(at, "trn_start")
    _until(at, lambda: _ended(at), "the failing run")
    assert _runs(at)[-1].status == "failed"
    assert any("Change the settings" in e.value for e in at.error)
    monkeypatch.setattr(runner, "submit", real)
    _click(at, "trn_start")
    _until(at, lambda: _ended(at), "the next run")
    assert _runs(at)[-1].status == "finished"
    _click(at, "trn_reset")


def test_corrupt_upload_is_refused_with_an_error(at):
    at.get("file_uploader")  # present in the expander
    # AppTest cannot upload files; the refusal is tested through the library call the page makes
    from georesolver_core.train import load_checkpoint

    with pytest.raises(ValueError, match="not a readable checkpoint"):
        load_checkpoint(b"\x00garbage")


def test_memory_path_run_trains(at):
    set_and_run(at, trn_task="recall")
    set_and_run(at, trn_model="ida", trn_memory=True, trn_size=4, trn_width=16, trn_layers=1, trn_steps=10)
    _click(at, "trn_start")
    _until(at, lambda: _ended(at), "the memory-path run")
    assert _runs(at)[-1].spec.model.memory == "gsr" and _runs(at)[-1].step == 10
    _click(at, "trn_reset")
    set_and_run(at, trn_memory=False)


def test_text_task_shows_bits_a_sample_and_an_attention_map(at):
    set_and_run(at, trn_task="text", trn_model="ida", trn_size=8, trn_width=16, trn_layers=1, trn_steps=3)
    _click(at, "trn_start")
    _until(at, lambda: _ended(at), "the text run")
    assert any(m.label == "validation bits/char" for m in at.metric)
    assert at.code and len(at.code[0].value) > 2  # the sample, generated in the worker
    assert any("bits per character" in c.value for c in at.caption)
    assert at.get_by_key("trn_attn_fig") is not None and at.get_by_key("trn_dl_ckpt") is not None
    assert "trn_attn_fig" in at.get_by_key("lec_fig").options  # drawn by ui.chart: the lecturer can export it
    set_and_run(at, trn_sentence="the cat", trn_attn_head=2)
    _click(at, "trn_reset")


def test_the_page_states_the_gap_between_georesolver_and_softmax_on_text(at):
    set_and_run(at, trn_task="text", trn_model="ida", trn_size=8, trn_width=16, trn_layers=1, trn_steps=3)
    _click(at, "trn_start")
    _until(at, lambda: _ended(at), "the GeoResolver run")
    set_and_run(at, trn_model="softmax")
    _click(at, "trn_start")
    _until(at, lambda: _ended(at), "the softmax run")
    gap = [m.value for m in at.markdown if "is lower by" in m.value]
    assert gap and "GeoResolver run #" in gap[0] and "softmax run #" in gap[0], [m.value for m in at.markdown]
    _click(at, "trn_reset")


def test_the_text_task_shows_the_shipped_study_and_trains_a_tuned_configuration_live(at):
    from georesolver_core.train.lm_study import read_report

    set_and_run(at, trn_task="text", trn_study_size="baby", trn_study_kind="ida")
    assert any("the study" in h.value for h in at.subheader)
    assert at.get_by_key("trn_study_lr") is not None and at.get_by_key("trn_study_dl") is not None
    steps, time_ = [d.value for d in at.dataframe if "verdict" in d.value.columns]  # equal steps, equal time
    assert list(steps["kind"]) == ["softmax", "ida", "hida", "sida"] and steps["verdict"][0] == "(reference)"
    assert set(steps["verdict"][1:]) <= {"better", "worse", "no measurable difference"}
    assert time_["steps"][0] == 400 and time_["verdict"][0] == "(reference)"
    baby = next(s for s in read_report("assets/lm_study.json")["sizes"] if s["name"] == "baby")
    _click(at, "trn_study_start")
    run = _runs(at)[-1]  # the study's seed-0 run of ida at its best rate, at the study's size and steps
    assert (run.spec.kernel, run.config.lr, run.config.steps, run.config.seed) == (
        "ida",
        baby["kinds"]["ida"]["best_lr"],
        400,
        0,
    )
    assert (run.spec.model.n_layers, run.spec.model.d_model, run.config.batch_size) == (4, 128, 12)
    assert at.get_by_key("trn_study_landing") is not None  # the live run against the study's seeds
    _click(at, "trn_reset")


def test_the_runs_table_follows_the_worker_in_the_live_fragment(at, monkeypatch):
    set_and_run(at, trn_task="recall", trn_model="ida", trn_size=4, trn_width=16, trn_layers=1, trn_steps=5000)
    _click(at, "trn_start")
    run = _runs(at)[-1]
    _until(at, lambda: run.step >= 1, "the first steps")
    for _ in range(2):  # the timer's reruns: each reads the worker's progress and redraws only the fragment
        before = run.step
        time.sleep(0.5)
        _fragment_rerun(at, monkeypatch)
        assert run.step > before
        assert at.dataframe, "the runs table is not redrawn by the live fragment"
        assert at.dataframe[0].value["steps"].tolist()[-1] == run.step
    at.run()  # the whole page again: the buttons are drawn outside the fragment
    _click(at, "trn_stop")
    _click(at, "trn_reset")


def test_hida_sizes_reach_the_model(at):
    set_and_run(at, trn_task="recall", trn_model="l-hida", trn_size=4, trn_width=16, trn_layers=1, trn_steps=2)
    set_and_run(at, trn_n_anchors=3)
    _click(at, "trn_start")
    run = _runs(at)[-1]
    assert run.spec.model.attention.n_anchors == 3
    _until(at, lambda: _ended(at), "the L-HIDA run")
    assert run.inspected().model.blocks[0].attn.kernel.n_anchors == 3  # the model the worker trained
    _click(at, "trn_reset")
    set_and_run(at, trn_model="ida")
    with pytest.raises(KeyError):  # the size of another kernel is not offered
        at.get_by_key("trn_n_anchors")


def test_two_sessions_never_see_each_others_runs():
    first, second = open_page("training.py"), open_page("training.py")
    for page in (first, second):
        set_and_run(page, trn_task="recall", trn_size=4, trn_width=16, trn_layers=1, trn_steps=5)
    _click(first, "trn_start")
    _until(first, lambda: _ended(first), "the first session's run")
    second.run()
    assert len(_runs(first)) == 1 and _runs(second) == []
    assert any("Press **Start**" in i.value for i in second.info)
    runner = _runs(first)[0].handle.runner
    owner = _runs(first)[0].handle.owner
    assert all(h.owner == owner for h in runner.jobs_of(owner)) and not runner.jobs_of("someone-else")
    _click(first, "trn_reset")


def test_a_runner_that_cannot_start_is_an_error_on_the_page(monkeypatch):
    import sys

    from tests.app_pages import ROOT

    monkeypatch.syspath_prepend(str(ROOT / "app"))
    import jobs_ui

    def refuse(present=None):
        raise ValueError(
            'backend "ray" needs the cluster extra: pip install -e ".[cluster]" (ray is not installed)'
        )

    monkeypatch.setattr(jobs_ui, "default_runner", refuse)
    page = open_page("training.py")
    assert sys.modules["jobs_ui"] is jobs_ui  # the page's module is the one patched
    errors = [e.value for e in page.error]
    assert any("Training is not available" in e and "--jobs local" in e for e in errors), errors
    assert page.title[0].value == "Training lab"  # the header is drawn, no traceback
