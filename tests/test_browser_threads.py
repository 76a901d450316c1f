"""Training from the browser, on a fresh server in headless Chromium: runs train in worker processes, the
page shows their progress, a second session's run waits in the server-wide queue with its place shown and
starts when the first stops, and the server's own thread count is untouched: after a session (then two)
trains and stops, a new tab's sidebar still says "CPU (N threads)" with the N the server started with.
Everything waits on what the page shows, never on a fixed sleep.
"""

from __future__ import annotations

import os
import re
import time

import pytest

from tests.test_browser import ARTIFACTS, _wait_until_idle, browser, serve_app  # noqa: F401 (fixture)

pytestmark = pytest.mark.browser

# A small task (the recall table at width 16): a step costs milliseconds, so the run is well into training
# within a second or two even on a loaded machine; the thread limit is the same for every task.
LINK = "training?trn_task=Associative+recall&trn_width=16"  # a bound selectbox reads its label
STEPS = 5000  # far more than the test waits for: the run is still training when Stop is pressed
TRAINED = 5  # steps a run must have trained before Stop (over at least RERUNS fragment reruns)
RERUNS = 4
LABEL = re.compile(r"CPU \((\d+) threads\)")


@pytest.fixture(scope="module")
def server():
    """A server of its own, started for this module; at least two threads, or the check would be vacuous."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with pytest.MonkeyPatch.context() as mp:
        if (os.cpu_count() or 1) < 2 and not os.environ.get("OMP_NUM_THREADS"):
            mp.setenv("OMP_NUM_THREADS", "2")
        with open(ARTIFACTS / "server_threads.log", "w") as log:
            try:
                with serve_app(log) as url:
                    yield url
            except RuntimeError as err:
                pytest.fail(str(err))


def _sidebar_threads(browser, server) -> int:  # noqa: F811 (fixture)
    """Open ``/`` in a new browser context (a new session) and read its sidebar's device label."""
    context = browser.new_context(viewport={"width": 1400, "height": 1100})
    try:
        page = context.new_page()
        page.goto(server, wait_until="domcontentloaded")
        _wait_until_idle(page)
        text = page.locator('[data-testid="stSidebar"]').inner_text()
        found = LABEL.search(text)
        assert found, f"no CPU device label in the sidebar: {text!r}"
        return int(found.group(1))
    finally:
        context.close()


def _progress(page) -> str:
    bars = page.locator('[data-testid="stProgress"]')
    return bars.last.inner_text() if bars.count() else ""


def _wait_for(page, pattern: str, timeout_s: float = 120.0) -> re.Match:
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        found = re.search(pattern, _progress(page))
        if found:
            return found
        page.wait_for_timeout(200)
    raise AssertionError(f"progress never matched {pattern!r} (last: {_progress(page)!r})")


def _training_page(context, server):  # noqa: F811 (fixture)
    """The Training page with Steps set to STEPS (Steps is not in the URL: typed in, as a person would)."""
    page = context.new_page()
    page.goto(f"{server}/{LINK}", wait_until="domcontentloaded")
    _wait_until_idle(page, timeout_s=180)
    steps = page.locator(".st-key-trn_steps input")
    steps.fill(str(STEPS))
    steps.press("Enter")
    page.wait_for_function("n => document.querySelector('.st-key-trn_steps input').value === String(n)", arg=STEPS)
    _wait_until_idle(page)
    assert "trn_task=Associative" in page.url, f"the link's task was not used: {page.url}"
    return page


def _train_until_some_steps(pages) -> None:
    """Start each page's run; wait until each has trained TRAINED steps over several fragment reruns."""
    for page in pages:
        page.locator(".st-key-trn_start button").click()
    for page in pages:
        seen: set[int] = set()  # step counts shown while running: one per fragment rerun
        deadline = time.time() + 180
        while time.time() < deadline and not (len(seen) >= RERUNS and max(seen) >= TRAINED):
            now = re.search(rf"\(running\): step (\d+) of {STEPS}", _progress(page))
            if now:
                seen.add(int(now.group(1)))
            page.wait_for_timeout(100)
        assert len(seen) >= RERUNS and max(seen) >= TRAINED, (seen, _progress(page))


def _stop(pages) -> None:
    for page in pages:
        page.locator(".st-key-trn_stop button").click()
    for page in pages:
        _wait_for(page, rf"\(stopped\): step \d+ of {STEPS}")
        _wait_until_idle(page)
        errors = page.locator('[data-testid="stException"]')
        assert errors.count() == 0, [errors.nth(i).inner_text() for i in range(errors.count())]


@pytest.fixture(scope="module")
def start(server, browser):  # noqa: F811 (fixtures)
    """The count a new session sees on the fresh server, before anything trained."""
    n = _sidebar_threads(browser, server)
    assert n >= 2, f"the server runs torch on {n} thread(s): nothing to lose"
    return n


def _check_after(browser, server, start: int, pages) -> None:  # noqa: F811 (fixture)
    for page in pages:  # the page's own caption, drawn by the Stop rerun's script thread
        found = LABEL.search(page.inner_text("body"))
        assert found and int(found.group(1)) == start, (start, found and found.group(0))
    assert _sidebar_threads(browser, server) == start


def test_a_training_session_leaves_the_server_its_thread_count(server, browser, start):  # noqa: F811
    context = browser.new_context(viewport={"width": 1400, "height": 1100})
    try:
        page = _training_page(context, server)
        _train_until_some_steps([page])
        _stop([page])
        page.screenshot(path=str(ARTIFACTS / "threads_after_training.png"))
        _check_after(browser, server, start, [page])
    finally:
        context.close()


def test_a_second_session_waits_in_the_queue_then_trains(server, browser, start):  # noqa: F811
    from georesolver_core.jobs import core_budget

    contexts = [browser.new_context(viewport={"width": 1400, "height": 1100}) for _ in range(2)]
    try:
        first, second = (_training_page(c, server) for c in contexts)
        _train_until_some_steps([first])
        second.locator(".st-key-trn_start button").click()
        if core_budget() == 1:  # one worker beside the server: the second run waits for the first
            _wait_for(second, r"\(queued\): step 0 of \d+; next to start")
            second.screenshot(path=str(ARTIFACTS / "training_queued.png"))
            _stop([first])
        _wait_for(second, rf"\(running\): step [1-9]\d* of {STEPS}")
        _stop([second] if core_budget() == 1 else [first, second])
        _check_after(browser, server, start, [first, second])
    finally:
        for c in contexts:
            c.close()
