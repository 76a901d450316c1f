"""The registered pages, read from app/main.py without running Streamlit."""

from __future__ import annotations

import ast
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENTRY = ROOT / "app" / "main.py"


def registered_pages() -> list[tuple[str, str, str, str, str]]:
    """The PAGES table of the entry script: (file, title, icon, url path, description)."""
    tree = ast.parse(ENTRY.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "PAGES" for t in node.targets):
            return [tuple(row) for row in ast.literal_eval(node.value)]
    raise AssertionError("app/main.py has no PAGES table")


def open_page(
    file: str | None = None,
    *,
    query: dict | None = None,
    via_home: bool = True,
    fresh_caches: bool = True,
    timeout: float = 120,
):
    """A fresh AppTest of the whole app: the one place the tests build one (the fixtures ``at`` and ``page`` of
    tests/conftest.py build theirs here).

    Opened by a link with ``query``, run, and switched to ../pages/<file> (None: it stays on Home). With
    ``via_home`` Home runs first, as a visitor who clicks through; without, the link opens the page itself
    (Home's work is not part of the test). ``fresh_caches``: Streamlit's caches are cleared first.
    """
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    if fresh_caches:
        st.cache_data.clear()
        st.cache_resource.clear()
    app = AppTest.from_file(str(ENTRY), default_timeout=timeout)
    for key, value in (query or {}).items():
        app.query_params[key] = value
    if via_home or file is None:
        app.run()
        assert not app.exception, [e.value for e in app.exception]
    if file is not None:
        app.switch_page(f"../pages/{file}")
        app.run()
        assert not app.exception, [e.value for e in app.exception]
    return app


def set_and_run(app, **widgets) -> None:
    """Set widgets by key (looked up by type), rerun once, and fail on any exception."""
    for key, value in widgets.items():
        app.get_by_key(key).set_value(value)
    app.run()
    assert not app.exception, (widgets, [e.value for e in app.exception])


def run_job_to_end(app, prefix: str, timeout_s: float = 180.0) -> None:
    """Rerun a page whose live trainer (app/trainer_controls.py: a worker's job) until it is done, then once
    more: the page drawn with its end."""
    deadline = time.monotonic() + timeout_s
    while True:
        job = app.session_state[f"{prefix}_job"] if f"{prefix}_job" in app.session_state else None
        if job is None or job.status not in ("running", "paused", "queued"):
            break
        assert time.monotonic() < deadline, f"{prefix}: the job did not finish in {timeout_s:g} s ({job.status})"
        time.sleep(0.1)
        app.run()
        assert not app.exception, [e.value for e in app.exception]
    app.run()
    assert not app.exception, [e.value for e in app.exception]


def run_until(app, predicate, what: str, timeout_s: float = 180.0) -> None:
    """Rerun the page (as a live fragment's timer would) until ``predicate()`` holds: a worker's progress
    arrives between runs."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)
        app.run()
        assert not app.exception, [e.value for e in app.exception]
