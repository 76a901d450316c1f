"""AppTest of the Claims page: one row per registered claim, the same verdicts as the library, filters at
their extremes, and a claim whose page is not in the app gets no link instead of an error."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from georesolver_core.claims import CLAIMS, HOLDS, VERDICTS, Claim, Evidence, run_claim
from tests.app_pages import ENTRY

ORPHAN = "test-orphan-claim"


def _orphan_measure(quick: bool) -> Evidence:
    x = np.arange(1.0, 4.0)
    return Evidence(
        x=x.tolist(), x_label="x", measured=x.tolist(), bound=(x + 1).tolist(), y_label="y",
        relation="measured <= bound", verdict=HOLDS, summary="a claim whose page does not exist",
        measured_value=3.0, bound_value=4.0,
    )  # fmt: skip


@pytest.fixture(scope="module")
def at():
    # Only this page's claims plus an orphan whose page the app does not have (it must get no link).
    # The page logic is the same for any registry; tests/test_app.py renders it with every claim.
    saved = dict(CLAIMS)
    for key in [k for k, c in saved.items() if c.page != "attention"]:
        del CLAIMS[key]
    CLAIMS[ORPHAN] = Claim(
        ORPHAN, "Test section", "An orphan claim.", "y <= x + 1", "no-such-page", _orphan_measure
    )
    st.cache_data.clear()
    app = AppTest.from_file(str(ENTRY), default_timeout=180)
    app.run()
    app.switch_page("../pages/claims.py")
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    yield app
    CLAIMS.clear()
    CLAIMS.update(saved)
    st.cache_data.clear()


def _table(app: AppTest):
    return app.dataframe[0].value


def test_every_claim_is_a_row_with_the_library_verdict(at):
    table = _table(at)
    assert list(table["key"]) == list(CLAIMS)
    for key in ("thm3-effective-rank", "lemma2.3-exact-retrieval-sphere"):
        row = table[table["key"] == key].iloc[0]
        assert row["verdict"] == run_claim(key, quick=True)["verdict"]
        assert row["link"] == "./attention" and row["shown on"] == "Attention"
    orphan = table[table["key"] == ORPHAN].iloc[0]
    assert pd.isna(orphan["link"]) and "not yet in the app" in orphan["shown on"]
    assert any("not in the app yet" in c.value for c in at.caption)


def test_verdict_filter_and_search_at_their_extremes(at):
    for chosen in ([], [VERDICTS[0]], [VERDICTS[-1]], list(VERDICTS)):
        at.button_group(key="claims_verdicts").set_value(chosen)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert set(_table(at)["verdict"]) <= set(chosen)
    assert len(_table(at)) == len(CLAIMS)
    for text, rows in (("no claim says this", 0), ("effective rank", None), ("", len(CLAIMS))):
        at.text_input(key="claims_search").set_value(text)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        if rows is not None:
            assert len(_table(at)) == rows
        else:
            assert 0 < len(_table(at)) < len(CLAIMS)


def test_downloads_are_offered(at):
    labels = [b.proto.label for b in at.get("download_button")]
    assert any("CSV" in label for label in labels) and any("JSON" in label for label in labels)
