"""The Embeddings page's "Trees in the disk" tab and leaderboard under AppTest: the construction redraws as tau
moves (both ends of the slider), the trained d = 2 mammals sit beside it, the shipped noun run loads from
assets/ (a sample of points, its figures), and the leaderboard marks published rows as quoted."""

import json

import pytest
from streamlit.testing.v1 import AppTest

from tests.app_pages import ROOT, open_page, run_until

PAGE = "embeddings.py"


def _tab(name: str) -> AppTest:
    # the toy tree: the live run above the tabs stays small
    at = open_page(PAGE, query={"emb_source": "tree", "emb_autoplay": "false"}, via_home=False, timeout=90)
    at.session_state["emb_tab"] = name
    at.run()
    assert not at.exception, at.exception
    return at


def test_constructed_and_trained_side_by_side_with_tau_live():
    at = _tab("Trees in the disk")
    labels = {m.label for m in at.metric}
    assert {"constructed: MAP (closure)", "constructed: MAP (edges)"} <= labels
    if (ROOT / "assets" / "wordnet_mammals_d2.npz").is_file():
        assert "trained: MAP (closure)" in labels
    edges = {}
    for tau in (0.5, 5.0, 12.0):  # both ends of the slider and the default
        at.slider(key="emb_tau").set_value(tau).run()
        assert not at.exception, (tau, at.exception)
        edges[tau] = float(next(m.value for m in at.metric if m.label == "constructed: MAP (edges)"))
    assert edges[5.0] > edges[0.5] and edges[5.0] > edges[12.0]  # the trade the tab is about
    assert at.get("plotly_chart")  # the pair is drawn
    caption = lambda: next(c.value for c in at.caption if "Mammal closure" in c.value)  # noqa: E731
    assert "Drawn to scale" in caption()  # by default: the log map, where the tree spreads out
    at.toggle(key="emb_to_scale").set_value(False).run()  # the disk itself
    assert not at.exception, at.exception
    assert "In the disk" in caption()


@pytest.mark.skipif(not (ROOT / "assets" / "wordnet_nouns_d10.npz").is_file(), reason="noun run not shipped")
def test_the_shipped_noun_run_loads_as_a_sample():
    at = _tab("Trees in the disk")
    table = next(d.value for d in at.dataframe if "synset" in d.value.columns)
    assert len(table) == 2000 and table["d(0, x)"].is_monotonic_increasing
    figures = {m.label: m for m in at.metric}
    assert {"MAP", "Mean rank"} <= set(figures)
    # each figure beside the published one (Nickel & Kiela 2017, quoted in the report)
    assert "vs published 0.851" in figures["MAP"].delta and "vs published 4.02" in figures["Mean rank"].delta
    assert len(at.get("download_button")) >= 1  # the points file itself


@pytest.mark.skipif(not (ROOT / "assets" / "wordnet_leaderboard.json").is_file(), reason="no leaderboard shipped")
def test_leaderboard_table_marks_quoted_rows():
    at = _tab("WordNet benchmark")
    board = next(d.value for d in at.dataframe if "source" in d.value.columns)
    quoted = board[board["method"] == "published (quoted)"]
    assert len(quoted) and quoted["source"].str.startswith("quoted:").all() and quoted["CPU s"].isna().all()
    measured = board[board["method"] != "published (quoted)"]
    assert measured["source"].str.startswith("measured here").all() and (measured["CPU s"] >= 0).all()
    doc = json.loads((ROOT / "assets" / "wordnet_leaderboard.json").read_text(encoding="utf-8"))
    shown = [m.value for m in at.markdown]
    for note in doc["notes"]:  # one bullet each, not run together in a caption
        assert any(f"- {note}" in text for text in shown), note


def test_the_quick_benchmark_runs_in_a_worker_and_a_stop_keeps_its_rows():
    at = _tab("WordNet benchmark")
    shipped = len([d for d in at.dataframe if "model" in d.value.columns])  # the shipped reports' tables
    at.button(key="emb_bench_start").click().run()  # trainer_controls, prefix emb_bench
    assert not at.exception, at.exception
    job = at.session_state["emb_bench_job"]

    def first_row() -> bool:
        return job.partial is not None and len(job.partial["rows"]) >= 1

    run_until(at, first_row, "the worker's first benchmark row")
    at.button(key="emb_bench_stop").click().run()
    run_until(at, lambda: job.status == "stopped" or job.status == "finished", "the stop")
    at.run()
    assert not at.exception, at.exception
    tables = [d.value for d in at.dataframe if "model" in d.value.columns]
    assert len(tables) == shipped + 1  # the re-run's table, drawn below the shipped ones
    quick = tables[-1]
    assert len(quick) >= 1 and quick["model"][0] == "this project, poincare d=5" and 0.0 < quick["MAP"][0] <= 1.0
    assert at.button(key="emb_bench_start").disabled is False  # another run can start
