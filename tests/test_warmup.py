"""The start-up warm-up: the pages' own imports and the claims the report lacks, failures swallowed,
never started without a browser."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "app"))

import warmup  # noqa: E402

from tests.app_pages import ROOT, registered_pages  # noqa: E402


def test_claims_are_warmed_in_page_order_and_a_failure_does_not_stop_the_rest():
    claims = {
        "a": SimpleNamespace(page="claims"),
        "b": SimpleNamespace(page="home"),
        "c": SimpleNamespace(page="x"),
    }
    assert warmup.claim_order(claims, ["home", "claims"]) == ["b", "a", "c"]
    assert warmup.claim_order(claims, ["home", "claims"], first=("c",)) == ["c", "b", "a"]
    seen = []

    def step(label):
        def run():
            seen.append(label)
            if label == "b":
                raise RuntimeError("boom")

        return label, run

    assert warmup.run_steps([step("b"), step("a")]) == ["b"]
    assert seen == ["b", "a"]


def test_the_import_steps_are_the_pages_own_import_lines(tmp_path):
    page = tmp_path / "p.py"
    page.write_text(
        "from __future__ import annotations\nimport json, os.path\nfrom a.b import c\nfrom . import x\n"
    )
    assert warmup.page_imports(page) == ["json", "os.path", "a.b"]
    files = [ROOT / "pages" / row[0] for row in registered_pages()]
    labels = [label for label, _ in warmup.import_steps(files)]
    assert labels[0] == f"import {warmup.FIRST_OPTIMIZER}" and len(labels) == len(set(labels))
    for path in files:  # every module a page imports at its top is warmed
        assert {f"import {n}" for n in warmup.page_imports(path)} <= set(labels), path


def test_every_claim_the_shipped_report_has_is_read_not_measured(monkeypatch):
    import claims_panels

    from georesolver_core.claims import CLAIMS

    monkeypatch.setattr(
        claims_panels, "shipped_report", lambda: {"claims": [{"key": k} for k in list(CLAIMS)[1:]]}
    )
    labels = [label for label, _ in warmup.claim_steps([row[3] for row in registered_pages()])]
    assert labels[:2] == ["claims report", f"claim {list(CLAIMS)[0]}"]  # only the one the report lacks
    assert sorted(labels[2:]) == sorted(f"figure {k}" for k in CLAIMS)  # then every claim's figure


def test_no_warm_up_thread_under_apptest():
    import threading

    from streamlit.testing.v1 import AppTest

    from tests.app_pages import ENTRY

    def warming() -> set[int]:
        return {t.ident for t in threading.enumerate() if t.name == warmup.THREAD_NAME}

    before = warming()  # a test earlier in this process may have started one on purpose
    app = AppTest.from_file(str(ENTRY), default_timeout=60)
    app.run()
    assert not app.exception
    assert warming() <= before


def test_the_warm_up_freezes_the_heap_after_the_imports_and_after_the_claims(monkeypatch):
    """After the warm-up, Streamlit's full collection after each run walks only new objects."""
    import gc

    order = []
    monkeypatch.setattr(warmup, "import_steps", lambda files: [("import x", lambda: order.append("import"))])
    monkeypatch.setattr(warmup, "claim_steps", lambda urls: [("claim a", lambda: order.append("claim"))])
    monkeypatch.setattr(warmup, "freeze_heap", lambda: order.append("freeze"))
    assert warmup.warm([], []) == []
    assert order == ["import", "freeze", "claim", "freeze"]
    monkeypatch.undo()
    try:
        junk = [[i] for i in range(10_000)]  # noqa: F841 - alive objects to be frozen
        warmup.freeze_heap()
        assert gc.get_freeze_count() >= 10_000
        before = len(gc.get_objects())  # the objects a full pass walks: the frozen ones are not among them
        assert before < gc.get_freeze_count()
    finally:
        gc.unfreeze()


def test_the_server_imports_every_page_import_before_it_answers(monkeypatch):
    """``app/streamlit_app.py``'s lifespan: the pages' imports and the heap freeze, skipped with
    GEORESOLVER_WARMUP=0."""
    import asyncio
    import gc

    import streamlit_app

    labels = []
    monkeypatch.setattr(warmup, "run_steps", lambda steps: labels.extend(label for label, _ in steps) or [])

    async def start():
        async with streamlit_app.lifespan(None):
            pass

    monkeypatch.setenv("GEORESOLVER_WARMUP", "0")
    asyncio.run(start())
    assert labels == []
    monkeypatch.setenv("GEORESOLVER_WARMUP", "1")
    asyncio.run(start())
    pages = [ROOT / "pages" / row[0] for row in registered_pages()]
    assert set(labels) >= {label for label, _ in warmup.import_steps(pages)}
    assert labels[-1] == "freeze the heap"
    gc.unfreeze()


def test_the_server_takes_where_jobs_run_from_its_command_line(monkeypatch, capsys):
    """``streamlit run app -- --jobs ray://HOST:PORT`` sets the job runner's back-end; a bad value stops the
    server with one line naming the flag and what is allowed."""
    import streamlit_app

    from georesolver_core.jobs import BACKEND_ENV

    monkeypatch.setenv(BACKEND_ENV, "local")  # put back as it was after the test (a server started later reads it)
    streamlit_app.apply_arguments([])
    assert os.environ[BACKEND_ENV] == "local"  # nothing asked: left as it was
    streamlit_app.apply_arguments(["--jobs", "ray://head:10001"])
    assert os.environ[BACKEND_ENV] == "ray://head:10001"
    with pytest.raises(SystemExit) as stop:
        streamlit_app.apply_arguments(["--jobs", "slurm"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert (
        "--jobs: backend must be 'local', 'ray' or 'ray://HOST:PORT' (got 'slurm')" in err
        and "Traceback" not in err
    )
