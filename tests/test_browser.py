"""A real browser: serve `streamlit run app` on 127.0.0.1 and open every page in headless Chromium.

Uses Debian's `chromium` driven by Playwright (`playwright install` would download a browser and
fails offline). Screenshots land in tests/artifacts/ for a person to look at.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from georesolver_core.bench.serve import CHROMIUM_ARGS as BENCH_CHROMIUM_ARGS
from tests.app_pages import ROOT, registered_pages

pytestmark = pytest.mark.browser

ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or shutil.which("chromium-browser")
# Opened by deep link, the front end first probes <page>/_stcore/health and <page>/_stcore/host-config
# and logs their 404s; harmless (DESIGN.md section 5).
HARMLESS = ("/_stcore/health", "/_stcore/host-config", "favicon")
# Headless, as root, with no GPU, no background networking: the switches the class-load benchmark uses too.
CHROMIUM_ARGS = list(BENCH_CHROMIUM_ARGS)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve_app(log, timeout_s: float = 90.0, warmup: bool = False):
    """``streamlit run app`` on a free local port, its output to ``log``; yields the base url once healthy.

    The claims warm-up thread is off unless ``warmup``: in a test run it would only compete for the
    CPU with the pages under test (the cold-start measurement turns it on)."""
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--server.headless",
            "true",
        ],
        cwd=ROOT,
        env={**os.environ, "GEORESOLVER_WARMUP": "1" if warmup else "0"},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + timeout_s
        while time.time() < deadline:
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.5)
        else:
            raise RuntimeError(f"streamlit did not answer /_stcore/health within {timeout_s:g} s")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="module")
def server():
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with open(ARTIFACTS / "server.log", "w") as log:
        try:
            with serve_app(log) as url:
                yield url
        except RuntimeError as err:
            pytest.fail(str(err))


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed: apt-get install chromium (.ci/run does this)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def _wait_until_idle(page, timeout_s: float = 120.0) -> None:
    """Streamlit shows a status widget while the script runs; wait until it has been gone for 2 s."""
    page.wait_for_selector('[data-testid="stApp"]', timeout=60_000)
    deadline, quiet_since = time.time() + timeout_s, None
    while time.time() < deadline:
        running = page.locator('[data-testid="stStatusWidget"]').count() > 0
        # stAppSkeleton: the placeholder the app shows before a page's first element arrives (on a loaded
        # machine the status widget may not have appeared yet while it is up)
        skeleton = page.locator('[data-testid="stSkeleton"], [data-testid="stAppSkeleton"]').count() > 0
        drawn = page.locator('[data-testid="stMainBlockContainer"] [data-testid="stElementContainer"]').count() > 0
        if running or skeleton or not drawn:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.time()
        elif time.time() - quiet_since > 2.0:
            return
        time.sleep(0.25)
    raise AssertionError(f"page still running after {timeout_s} s")


@pytest.mark.parametrize("row", registered_pages(), ids=lambda r: r[3])
def test_page_opens_in_chromium(server, browser, row):
    file, title, _, url_path, _ = row
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1400, "height": 2400})
    errors: list[str] = []
    # A resource 404 logs only "Failed to load resource"; the URL is in the message's location.
    page.on(
        "console",
        lambda m: errors.append(f"{m.text} [{m.location.get('url', '')}]") if m.type == "error" else None,
    )
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url} ({r.failure})"))
    try:
        page.goto(f"{server}/{'' if url_path == 'home' else url_path}", wait_until="domcontentloaded")
        _wait_until_idle(page)
        page.screenshot(path=str(ARTIFACTS / f"{url_path}.png"), full_page=True)
        exceptions = page.locator('[data-testid="stException"]')
        assert exceptions.count() == 0, exceptions.first.inner_text()
        assert page.locator("h1").count() >= 1, f"{title}: no page title rendered"
        real = [e for e in errors if not any(h in e for h in HARMLESS)]
        assert not real, f"console errors on {title}: {real}"
    finally:
        page.close()


def _open(browser, url: str):
    page = browser.new_page(viewport={"width": 1400, "height": 2000})
    page.goto(url, wait_until="domcontentloaded")
    _wait_until_idle(page)
    return page


def _no_exception(page) -> None:
    exceptions = page.locator('[data-testid="stException"]')
    assert exceptions.count() == 0, exceptions.first.inner_text()


def test_reset_after_a_deep_link_with_settings_in_the_url(server, browser):
    """A shared link carries bound settings; Reset must not crash and must restore the defaults and a bare URL."""
    page = _open(browser, f"{server}/?dtype=float64&seed=7&home_n_keys=9")
    try:
        _no_exception(page)
        assert "precision **float64**".replace("**", "") in page.inner_text("body")
        page.get_by_role("button", name="Reset all settings").click()
        time.sleep(1.0)
        _wait_until_idle(page)
        page.screenshot(path=str(ARTIFACTS / "reset_after_deep_link.png"), full_page=True)
        _no_exception(page)
        assert "precision float32" in page.inner_text("body")
        assert "dtype=" not in page.url and "home_n_keys=" not in page.url and "seed=" not in page.url, page.url
    finally:
        page.close()


def test_embeddings_switch_to_float64_changes_the_precision(server, browser):
    """The button sits in a fragment and the precision in the sidebar: the switch must reach both."""
    page = _open(browser, f"{server}/embeddings?emb_source=tree&emb_lr=1&emb_epochs=40")
    try:
        for _ in range(240):  # the run trains live; the warning comes once it is done
            if page.get_by_role("button", name="Switch to float64").count():
                break
            time.sleep(0.5)
        button = page.get_by_role("button", name="Switch to float64")
        assert button.count(), "a run at learning rate 1 should reach float32's rim cap and offer float64"
        button.first.click()
        time.sleep(1.0)
        _wait_until_idle(page, timeout_s=240)
        _no_exception(page)
        assert "dtype=float64" in page.url, page.url
        # the run restarts in float64: the float32 rim warning and its button are gone
        assert page.get_by_role("button", name="Switch to float64").count() == 0
    finally:
        page.close()
