"""AppTest of the Claims page: one row per registered claim with the shipped report's verdict (claims it lacks
measured live), filters at their extremes, a claim whose page is not in the app gets no link instead of an
error, a claim whose measurement raises shows an error while the others still show, a claim in the shipped
report is not measured on opening, one measured on another page is not measured again, and the live
re-measurement shows beside the shipped one, and the audit of the seeds shows per seed how many statements
claims measure and the reasons for the rest."""

from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np
import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from georesolver_core.claims import CLAIMS, HOLDS, VERDICTS, Claim, Evidence, run_claim
from georesolver_core.claims.report import load_report
from tests.app_pages import ROOT, open_page

REPORT_PATH = ROOT / "assets" / "claims_report.json"
SHIPPED = {r["key"]: r for r in load_report(REPORT_PATH)["claims"]} if REPORT_PATH.exists() else {}

ORPHAN = "test-orphan-claim"
BROKEN = "test-broken-claim"
RUNS: Counter = Counter()  # measurements per claim key, counted in the registry's own measure functions
RUNS_AFTER_ATTENTION: dict = {}  # ... after the Attention page was opened
RUNS_AFTER_CLAIMS: dict = {}  # ... after the Claims page was opened next, in the same session


def _orphan_measure(quick: bool) -> Evidence:
    x = np.arange(1.0, 4.0)
    return Evidence(
        x=x.tolist(), x_label="x", measured=x.tolist(), bound=(x + 1).tolist(), y_label="y",
        relation="measured <= bound", verdict=HOLDS, summary="a claim whose page does not exist",
        measured_value=3.0, bound_value=4.0,
    )  # fmt: skip


def _broken_measure(quick: bool) -> Evidence:
    raise RuntimeError("this measurement is broken on purpose")


def _counted(claim: Claim) -> Claim:
    def measure(quick: bool) -> Evidence:
        RUNS[claim.key] += 1
        return claim.measure(quick)

    return dataclasses.replace(claim, measure=measure)


@pytest.fixture(scope="module")
def at():
    # The Attention page's claims, an orphan whose page the app does not have (it must get no link) and a
    # claim whose measurement raises. The page logic is the same for any registry; tests/test_app.py renders
    # it with every claim. The Attention page is opened first, in the same session: the claims it measured
    # must come from the shared cache on the Claims page.
    saved = dict(CLAIMS)
    CLAIMS.clear()
    CLAIMS.update({k: _counted(c) for k, c in saved.items() if c.page == "attention"})
    for key, statement, measure in (
        (ORPHAN, "An orphan claim.", _orphan_measure),
        (BROKEN, "A broken claim.", _broken_measure),
    ):
        CLAIMS[key] = _counted(Claim(key, "Test section", statement, "y <= x + 1", "no-such-page", measure))
    RUNS.clear()
    app = open_page("attention.py", via_home=False, timeout=180)  # Home's claim is not in this registry
    RUNS_AFTER_ATTENTION.update(RUNS)
    app.switch_page("../pages/claims.py")
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    RUNS_AFTER_CLAIMS.update(RUNS)
    yield app
    CLAIMS.clear()
    CLAIMS.update(saved)
    st.cache_data.clear()


def _table(app: AppTest):
    return app.dataframe[0].value


def test_every_claim_is_a_row_with_the_library_verdict(at):
    table = _table(at)
    assert list(table["key"]) == [k for k in CLAIMS if k != BROKEN]
    for key in ("thm3-effective-rank", "lemma2.3-exact-retrieval-sphere"):
        row = table[table["key"] == key].iloc[0]
        expected = SHIPPED[key]["verdict"] if key in SHIPPED else run_claim(key, quick=True)["verdict"]
        assert row["verdict"] == expected
        assert row["link"] == "./attention" and row["shown on"] == "Attention"
    orphan = table[table["key"] == ORPHAN].iloc[0]
    assert pd.isna(orphan["link"]) and "not yet in the app" in orphan["shown on"]
    at.selectbox(key="claims_detail").set_value(ORPHAN)
    at.run()
    assert any("not in the app yet" in c.value for c in at.caption)


def test_verdict_filter_and_search_at_their_extremes(at):
    for chosen in ([], [VERDICTS[0]], [VERDICTS[-1]], list(VERDICTS)):
        at.button_group(key="claims_verdicts").set_value(chosen)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert set(_table(at)["verdict"]) <= set(chosen)
    measured = len(CLAIMS) - 1  # all but the broken claim
    assert len(_table(at)) == measured
    for text, rows in (("no claim says this", 0), ("effective rank", None), ("", measured)):
        at.text_input(key="claims_search").set_value(text)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        if rows is not None:
            assert len(_table(at)) == rows
        else:
            assert 0 < len(_table(at)) < measured


def test_downloads_are_offered(at):
    labels = [b.proto.label for b in at.get("download_button")]
    assert any("CSV" in label for label in labels) and any("JSON" in label for label in labels)


def test_a_broken_measurement_shows_an_error_and_the_other_claims_still_show(at):
    errors = [e.value for e in at.error if BROKEN in e.value]
    assert len(errors) == 1, [e.value for e in at.error]
    assert "this measurement is broken on purpose" in errors[0]
    assert f"python -m georesolver_core claims --only {BROKEN}" in errors[0]
    assert len(_table(at)) == len(CLAIMS) - 1
    assert len(at.get("plotly_chart")) == 1  # the figure of the claim chosen in the detail


def test_claims_measured_on_another_page_are_not_measured_again(at):
    attention = [k for k, c in CLAIMS.items() if c.page == "attention"]
    # claims in the shipped report are not measured on opening; the others once, on the first page showing them
    lacking = {k: 1 for k in attention if k not in SHIPPED}
    assert attention and {k: v for k, v in RUNS_AFTER_ATTENTION.items() if v} == lacking, RUNS_AFTER_ATTENTION
    # The Claims page measured only what Attention had not: the orphan once, the broken one once (it raised).
    assert {k: v for k, v in RUNS_AFTER_CLAIMS.items() if v} == {**lacking, ORPHAN: 1, BROKEN: 1}


def test_the_table_shows_the_reader_columns_and_each_statement_is_printed_once(at):
    # on screen: no statement column (too wide at 1400 px); the data, and so the CSV, keep every column
    shown = list(at.dataframe[0].proto.column_order)
    assert "statement" not in shown and {"key", "section", "verdict", "link"} <= set(shown)
    assert "statement" in _table(at).columns
    for key in ("thm3-effective-rank", ORPHAN):
        at.text_input(key="claims_search").set_value("")
        at.selectbox(key="claims_detail").set_value(key)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        statement = CLAIMS[key].statement
        assert sum(statement in m.value for m in at.markdown) == 1, key


def test_a_live_re_measurement_shows_beside_the_shipped_one(at):
    key = "thm3-effective-rank"
    at.selectbox(key="claims_detail").set_value(key)
    at.selectbox(key="claims_live_target").set_value(key)
    at.button(key="claims_live_run").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "live verdict" in list(at.dataframe[0].proto.column_order)
    row = _table(at)[_table(at)["key"] == key].iloc[0]
    assert row["live verdict"] == run_claim(key, quick=True)["verdict"]
    assert len(at.get("plotly_chart")) == 2  # shipped and live, side by side
    at.button(key="claims_live_stop").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]


def test_the_seeds_coverage_shows_per_seed_counts_and_the_reasons(at):
    from georesolver_core.claims.inventory import coverage, not_measured, statements

    metrics = {m.label: m.value for m in at.metric}
    for row in coverage():
        label = f"Seed {row.seed}: {row.document}, statements measured"
        assert metrics[label] == f"{row.measured} / {row.statements}", label
    tables = [df.value for df in at.dataframe]
    per_seed = next(t for t in tables if "not_measured" in t.columns and "seed" in t.columns)
    assert list(per_seed["seed"]) == [r.seed for r in coverage()]
    reasons = next(t for t in tables if list(t.columns) == ["source", "statement", "reason"])
    assert len(reasons) == len(not_measured()) and reasons["reason"].str.strip().astype(bool).all()
    audit = next(t for t in tables if "claims" in t.columns and "reason" in t.columns)
    assert len(audit) == len(statements())
