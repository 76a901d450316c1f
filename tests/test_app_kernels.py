"""AppTest of the Kernel speed page: widgets at their extremes, a live run, good and bad uploaded reports."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from georesolver_core import bench
from tests.app_pages import open_page, run_job_to_end, run_until, set_and_run

PAGE = "kernels.py"  # the page of the module's shared AppTest, ``at`` (tests/conftest.py)


_run = set_and_run


def _markdown(app: AppTest) -> str:
    return " ".join(m.value for m in app.markdown)


def test_page_opens_with_title_and_no_report(at):
    assert at.title[0].value == "Kernel speed"
    assert any("Run the benchmark or load a report" in i.value for i in at.info)


def test_live_run_at_the_small_extreme_shows_table_targets_and_curves(at):
    _run(
        at,
        kern_seq_lens=[32],
        kern_kernels=list(bench.TIMED_KERNELS),
        kern_repeats=1,
        kern_heads=1,
        kern_head_dim=8,
        kern_eps=1e-4,
        kern_causal=True,
        kern_memory=True,
    )
    at.button(key="kern_start").click()
    at.run()
    run_job_to_end(at, "kern")
    table = at.dataframe[0].value
    assert set(table["kernel"]) == set(bench.TIMED_KERNELS)
    assert (table["forward ms"] > 0).all()
    assert "Targets of the fused kernels" in _markdown(at)
    assert len(at.get("plotly_chart")) == 3
    for phase in ("fwd", "fwdbwd"):
        _run(at, kern_phase=phase)


def test_live_run_at_the_large_extreme(at):
    _run(
        at,
        kern_seq_lens=[64, 128],
        kern_kernels=["sdpa", "sida"],
        kern_repeats=1,
        kern_heads=8,
        kern_head_dim=128,
        kern_eps=10.0,
        kern_causal=False,
        kern_memory=False,
    )
    at.button(key="kern_start").click()
    at.run()
    run_job_to_end(at, "kern")
    assert list(at.dataframe[0].value["T"]) == [64, 64, 128, 128]
    assert any("No memory was measured" in i.value for i in at.info)


def test_empty_selection_shows_an_error_and_the_page_keeps_working(at):
    _run(at, kern_seq_lens=[], kern_kernels=["sdpa"])
    assert at.button(key="kern_start").disabled
    assert any("Cannot run this benchmark" in e.value for e in at.error)
    assert at.title[0].value == "Kernel speed"


def _report() -> dict:
    cfg = bench.BenchConfig(
        seq_lens=(32, 64),
        kernels=("sdpa", "ida"),
        heads=1,
        head_dim=8,
        repeats=1,
        warmup=0,
        memory=False,
        device="cpu",
    )
    return bench.run_benchmark(cfg)


def test_uploaded_report_is_shown_and_a_bad_file_is_rejected(at):
    at.file_uploader(key="kern_upload").set_value(
        ("bench.json", json.dumps(_report()).encode(), "application/json")
    )
    at.run()
    assert not at.exception
    _run(at, kern_source="uploaded file")
    assert list(at.dataframe[0].value["T"]) == [32, 32, 64, 64]
    for bad in (b"not json", json.dumps({"schema": "other"}).encode(), json.dumps([1, 2]).encode()):
        at.file_uploader(key="kern_upload").set_value(("bad.json", bad, "application/json"))
        at.run()
        assert not at.exception
        assert any("This file is not a benchmark report" in e.value for e in at.error)
        assert at.title[0].value == "Kernel speed"


@pytest.mark.parametrize(
    "mutate",
    [
        lambda r: r.__setitem__("environment", ["not", "an", "object"]),
        lambda r: r.__setitem__("config", "not an object"),
        lambda r: r.__setitem__("targets", [{"target": "x", "met": True, "measured": "fast"}]),
        lambda r: r["rows"][0].__setitem__("forward_ms", "slow"),
        lambda r: r.__setitem__("memory_check", [1, 2]),
    ],
    ids=["environment-list", "config-string", "bad-target", "string-number", "bad-memory-check"],
)
def test_malformed_report_is_refused_and_forgotten_when_the_file_is_removed(at, mutate):
    report = _report()
    mutate(report)
    at.file_uploader(key="kern_upload").set_value(("bad.json", json.dumps(report).encode(), "application/json"))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    if "uploaded file" in [o for s in at.get("segmented_control") for o in s.options]:
        _run(at, kern_source="uploaded file")
    at.run()  # a rerun with the file still there: no crash, nothing re-parsed into the state
    assert not at.exception, [e.value for e in at.exception]
    at.file_uploader(key="kern_upload").set_value(None)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "kern_upload_parsed" not in at.session_state


def test_oversized_and_deeply_nested_uploads_are_refused_before_use(at):
    huge = b"[" + b" " * 2_100_000 + b"]"
    deep = b"[" * 100_000 + b"]" * 100_000
    for name, data, words in (
        ("huge.json", huge, "bytes; at most"),
        ("deep.json", deep, "not a benchmark report"),
    ):
        at.file_uploader(key="kern_upload").set_value((name, data, "application/json"))
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert any(words in e.value for e in at.error), [e.value for e in at.error]
        saved = at.session_state["kern_upload_parsed"]
        assert saved["value"] is None and saved["error"]
    at.file_uploader(key="kern_upload").set_value(None)
    at.run()


def test_hostile_text_in_a_report_is_escaped(at):
    report = _report()
    report["environment"]["device_name"] = "![x](http://example.invalid/a.png) [click](http://example.invalid)"
    at.file_uploader(key="kern_upload").set_value(("r.json", json.dumps(report).encode(), "application/json"))
    at.run()
    _run(at, kern_source="uploaded file")
    captions = " ".join(c.value for c in at.caption)
    assert "![x](http" not in captions and "[click](http" not in captions
    assert "\\!\\[x\\]" in captions
    at.file_uploader(key="kern_upload").set_value(None)
    at.run()


def test_stop_during_a_run_keeps_the_lengths_already_timed():
    """The benchmark runs in a worker; Stop ends it and the lengths it timed before stay on the page."""
    app = open_page("kernels.py")
    lens = [32, 64, 128, 256, 512, 1024, 2048]
    _run(app, kern_seq_lens=lens, kern_kernels=["sdpa", "ida"], kern_repeats=9, kern_head_dim=8)
    app.button(key="kern_start").click()
    app.run()
    job = app.session_state["kern_job"]
    run_until(app, lambda: job.partial is not None, "the first length from the worker")
    app.button(key="kern_stop").click()
    app.run()
    assert job.status == "stopped"
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    kept = app.session_state["kern_report_live"]
    timed = list(kept["config"]["seq_lens"])
    assert timed == lens[: len(timed)] and len(timed) < len(lens)
    assert sorted(set(app.dataframe[0].value["T"])) == timed
    assert app.get("plotly_chart"), "the curves of the kept lengths are drawn"
