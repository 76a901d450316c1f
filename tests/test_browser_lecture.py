"""A lecture, end to end, on a fresh server in headless Chromium: open a lecturer's link that hides and
locks controls, train live, pause, resume, export a figure, and share the link again."""

from __future__ import annotations

import re
import time

import pytest

from tests.test_browser import ARTIFACTS, _wait_until_idle, browser, server  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser

LINK = "orthogonal?_hide=orth_beta,orth_tilt&_lock=orth_gamma&orth_steps=600&orth_seeds=6"


def _progress_text(page) -> str:
    bars = page.locator('[data-testid="stProgress"]')
    return bars.last.inner_text() if bars.count() else ""


def _wait_for(page, pattern: str, timeout_s: float = 120.0) -> str:
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        text = _progress_text(page)
        if re.search(pattern, text):
            return text
        time.sleep(0.25)
    raise AssertionError(f"progress never matched {pattern!r} (last: {_progress_text(page)!r})")


def _position(progress: str) -> tuple[int, int, int]:
    """Where a comparison run is, from its progress text ("running: cayley, seed 2, step 90: ..."): (the
    kind's place in the run's order, seed, step). The run trains kind after kind, each over every seed."""
    from georesolver_core.extras.orthogonal import RESIDUAL_KINDS

    found = re.search(r": (\w+), seed (\d+), step (\d+)", progress)
    assert found, progress
    return list(RESIDUAL_KINDS).index(found.group(1)), int(found.group(2)), int(found.group(3))


def test_a_lecture_script(server, browser, tmp_path):  # noqa: F811 (pytest fixtures)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": 1400, "height": 1100}, accept_downloads=True)
    page = context.new_page()
    page.goto(f"{server}/{LINK}", wait_until="domcontentloaded")
    _wait_until_idle(page, timeout_s=300)
    # 1. the lecturer's link: hidden controls are gone, the locked one is shown but takes no clicks or keys
    assert page.locator(".st-key-orth_beta").count() == 1 and not page.locator(".st-key-orth_beta").is_visible()
    assert not page.locator(".st-key-orth_tilt").is_visible()
    locked = page.locator(".st-key-orth_gamma")
    assert locked.is_visible() and locked.evaluate("e => getComputedStyle(e).pointerEvents") == "none"
    thumb = locked.locator('input[type="range"]')
    before = thumb.input_value()
    assert thumb.is_disabled()  # a style-only lock left it to the keyboard
    thumb.focus()
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    time.sleep(1.0)
    _wait_until_idle(page)
    assert thumb.input_value() == before and "orth_gamma=" not in page.url
    assert page.get_by_text("Direction of x (deg)").is_visible()  # the rest is untouched
    # 2. train, pause, resume: the same run carries on
    page.locator(".st-key-orth_start button").click()
    _wait_for(page, r"^running: .*step [1-9]")
    page.locator(".st-key-orth_pause button").click()
    paused = _wait_for(page, r"^paused")
    time.sleep(1.5)
    assert _progress_text(page) == paused  # nothing moves while paused
    page.locator(".st-key-orth_resume button").click()
    resumed = _wait_for(page, r"^running: .*step \d+")
    # the same run carries on from where it paused (a cheap kind may finish its seeds before the first poll,
    # so the run can be at a later kind by then; a new run would start again at the first kind's seed 0)
    assert _position(resumed) >= _position(paused), (paused, resumed)
    page.locator(".st-key-orth_stop button").click()
    _wait_for(page, r"^stopped")
    page.screenshot(path=str(ARTIFACTS / "lecture_trained.png"))
    # 3. export the figure on screen, and its data
    page.get_by_text("Lecturer's link and export").click()
    page.get_by_text("Figure to export").wait_for()
    page.get_by_role("button", name="Figure (standalone HTML)").wait_for()
    page.wait_for_timeout(1000)  # the expander's first run settles before the click (a rerun drops it)
    with page.expect_download(timeout=90_000) as download:
        page.get_by_role("button", name="Figure (standalone HTML)").click()
    html = download.value.path().read_text()
    assert "plotly" in html.lower() and len(html) > 100_000  # plotly.js inlined: opens offline
    with page.expect_download(timeout=90_000) as download:
        page.get_by_role("button", name="Its data (JSON)").click()
    assert '"traces"' in download.value.path().read_text()
    # 4. share the link: it carries the view and the hidden controls to a fresh browser
    link = page.locator(".st-key-lec_link code").last.inner_text().strip()
    assert "_hide=orth_beta%2Corth_tilt" in link and "_lock=orth_gamma" in link and "orth_steps=600" in link
    student = browser.new_context(viewport={"width": 1400, "height": 1100}).new_page()
    student.goto(link, wait_until="domcontentloaded")
    _wait_until_idle(student, timeout_s=300)
    assert not student.locator(".st-key-orth_beta").is_visible()
    assert student.locator('[data-testid="stException"]').count() == 0
    student.screenshot(path=str(ARTIFACTS / "lecture_student.png"))
    context.close()
