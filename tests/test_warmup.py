"""The start-up warm-up: claims ordered by page, failures swallowed, never started without a browser."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "app"))

import warmup  # noqa: E402


def test_claims_are_warmed_in_page_order_and_a_failure_does_not_stop_the_rest():
    claims = {"a": SimpleNamespace(page="claims"), "b": SimpleNamespace(page="home"), "c": SimpleNamespace(page="x")}
    assert warmup.claim_order(claims, ["home", "claims"]) == ["b", "a", "c"]
    assert warmup.claim_order(claims, ["home", "claims"], first=("c",)) == ["c", "b", "a"]
    seen = []

    def measure(key):
        seen.append(key)
        if key == "b":
            raise RuntimeError("boom")

    warmup._warm(["b", "a"], measure)
    assert seen == ["b", "a"]


def test_no_warm_up_thread_under_apptest():
    from streamlit.testing.v1 import AppTest

    from tests.app_pages import ENTRY

    app = AppTest.from_file(str(ENTRY), default_timeout=60)
    app.run()
    assert not app.exception
    import threading

    assert not any(t.name == "claims-warm-up" for t in threading.enumerate())
