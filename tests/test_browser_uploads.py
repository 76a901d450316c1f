"""Uploads in a real browser: one hostile and one malformed file on each page that takes a file.

The app is served and opened in headless Chromium as in test_browser.py; the files go in through the
page's own file input (``set_input_files``). After each upload the page must show an error box, no
exception box, none of the file's markup rendered (no image or link to the file's address), and the rest
of the page (its title) still drawn. The parse functions behind these uploads are fuzzed in
test_upload_fuzz.py; this checks the path from the browser to the error box.
"""

from __future__ import annotations

import io
import json
import os
import time

import pytest
import torch

from tests.app_pages import ROOT
from tests.test_browser import ARTIFACTS, browser, server  # noqa: F401 - fixtures

pytestmark = pytest.mark.browser

ADDRESS = "example.invalid"  # where an injected image or link would point
IMAGE = f"![x](http://{ADDRESS}/a.png)"
TAG = f'<img src="http://{ADDRESS}/b.png">'


def _report_with_a_tagged_label() -> bytes:
    row = {"kernel": "ida", "label": TAG, "seq_len": 1024, "fwd_ms": 1.0, "fwdbwd_ms": 3.0}
    return json.dumps({"schema": "georesolver-bench/1", "environment": {"device": "cpu"}, "rows": [row]}).encode()


def _traffic_with_a_markdown_key() -> bytes:
    doc = json.loads((ROOT / "assets" / "routing_comm.json").read_text())
    doc["runs"][0]["max_abs_diff"][IMAGE] = 0.0  # printed in a caption before it was checked
    return json.dumps(doc).encode()


class _Exploit:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def _checkpoint_that_runs_code() -> bytes:
    buf = io.BytesIO()
    torch.save({"format": "georesolver-train/1", "x": _Exploit()}, buf)
    return buf.getvalue()


# page URL, the error box's words, the expander holding the upload (or None), then (file name, bytes)
# for a hostile and a malformed file
UPLOADS = {
    "embeddings": (
        "embeddings?emb_source=Edge+list+%28CSV%29&emb_epochs=10",  # a bound selectbox reads its label
        "was not used",
        None,
        (f"{IMAGE} {TAG}.csv", f'parent,child\n"{TAG}","{TAG}"\n'.encode()),  # a self-loop, named with a tag
        ("garbage.csv", bytes(range(256)) * 8),
    ),
    "kernels": (
        "kernels",
        "not a benchmark report",
        None,
        ("report.json", _report_with_a_tagged_label()),
        ("truncated.json", _report_with_a_tagged_label()[:40]),
    ),
    "routing": (
        "routing?rt_tab=Distributed+traffic",
        "Not a routing report",
        None,
        ("routing.json", _traffic_with_a_markdown_key()),
        ("rows.json", b'"rows"'),  # crashed the page before the traffic report was checked
    ),
    "training": (
        "training",
        "Upload a checkpoint",
        "Upload a checkpoint to inspect or continue it",
        ("run.pt", _checkpoint_that_runs_code()),
        ("run.pt", b"PK\x03\x04" + b"\x00" * 64),
    ),
}


def _settle(page, timeout_s: float = 20.0) -> None:
    """Wait until the script run has been over for 1 s, at most ``timeout_s`` (the Embeddings page keeps
    training in a fragment, so it may never be idle; the checks below do not need it to be)."""
    deadline, quiet_since = time.time() + timeout_s, None
    while time.time() < deadline:
        if page.locator('[data-testid="stStatusWidget"]').count():
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.time()
        elif time.time() - quiet_since > 1.0:
            return
        time.sleep(0.2)


def _upload(page, name: str, data: bytes) -> None:
    file_input = page.locator('[data-testid="stFileUploaderDropzoneInput"]').first
    file_input.set_input_files(files=[{"name": name, "mimeType": "application/octet-stream", "buffer": data}])
    time.sleep(1.0)  # the rerun starts after the upload request
    _settle(page)


def _new_alert(page, words: str, before: str | None, timeout_s: float = 60.0) -> str:
    """The text of the error box saying ``words`` once it differs from ``before`` (the previous file's)."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        boxes = page.locator('[data-testid="stAlert"]', has_text=words)
        texts = [boxes.nth(i).inner_text() for i in range(boxes.count())]
        fresh = [t for t in texts if t != before]
        if fresh:
            return fresh[0]
        time.sleep(0.3)
    raise AssertionError(f"no new error box saying {words!r} within {timeout_s} s")


@pytest.mark.parametrize("page_name", list(UPLOADS))
def test_hostile_and_malformed_uploads_show_an_error_box(server, browser, page_name):  # noqa: F811
    url_path, words, expander, *files = UPLOADS[page_name]
    page = browser.new_page(viewport={"width": 1400, "height": 2000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"{server}/{url_path}", wait_until="domcontentloaded")
        uploader = page.locator('[data-testid="stFileUploaderDropzoneInput"]').first
        uploader.wait_for(state="attached", timeout=120_000)  # a cold page on a busy machine takes a while
        _settle(page)
        if expander is not None:
            page.get_by_text(expander).click()  # so that the screenshots show the error box
        before = None
        for kind, (name, data) in zip(("hostile", "malformed"), files, strict=True):
            _upload(page, name, data)
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"upload_{page_name}_{kind}.png"), full_page=True)
            exceptions = page.locator('[data-testid="stException"]')
            assert exceptions.count() == 0, f"{page_name}, {kind}: {exceptions.first.inner_text()}"
            alert = _new_alert(page, words, before)
            before = alert
            injected = page.locator(f'img[src*="{ADDRESS}"], a[href*="{ADDRESS}"]')
            assert injected.count() == 0, f"{page_name}, {kind}: the file's markup was rendered"
            assert page.locator("h1").count() >= 1, f"{page_name}, {kind}: the page stopped drawing"
        assert not errors, f"{page_name}: page errors {errors}"
    finally:
        page.close()
