"""First visit to every page after a server start, in headless Chromium (a measurement, not a test).

    python tests/measure_cold.py [--rounds 3] [--pages home attention ...] [--no-home-first]

Each round serves a fresh `streamlit run app` on 127.0.0.1 and, as a class would, opens Home first
(the app's warm-up starts with the first session), waits ``--warm-wait`` seconds, and then opens each
page in a new tab, timing from the
navigation to the moment the page stops running (no status widget, no skeleton, quiet for 2 s;
the 2 s are not counted). Prints per page the median and the samples. Timings depend on the load.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.app_pages import registered_pages  # noqa: E402
from tests.test_browser import CHROMIUM, serve_app  # noqa: E402


def settle(browser, url: str, timeout_s: float = 300.0) -> float:
    """Seconds from opening ``url`` in a new tab until the page has stopped running."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    t0 = time.perf_counter()
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector('[data-testid="stApp"]', timeout=60_000)
    quiet_since = None
    while time.perf_counter() - t0 < timeout_s:
        busy = page.locator('[data-testid="stStatusWidget"], [data-testid="stSkeleton"]').count() > 0
        drawn = page.locator('[data-testid="stMainBlockContainer"] [data-testid="stElementContainer"]').count() > 0
        now = time.perf_counter()
        if busy or not drawn:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = now
        elif now - quiet_since > 2.0:
            page.close()
            return quiet_since - t0
        time.sleep(0.1)
    page.close()
    raise RuntimeError(f"{url} still running after {timeout_s} s")


def main() -> None:
    from playwright.sync_api import sync_playwright

    urls = [row[3] for row in registered_pages()]
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pages", nargs="+", choices=urls, help="default: all")
    ap.add_argument("--no-home-first", action="store_true", help="open the pages without visiting Home first")
    ap.add_argument(
        "--warm-wait",
        type=float,
        default=0.0,
        help="seconds between the first visit to Home and the pages (the "
        "time a lecturer's server has between opening the app and the class arriving)",
    )
    args = ap.parse_args()
    pages = args.pages or urls
    samples: dict[str, list[float]] = {u: [] for u in ["home (first session)", *pages]}
    for _ in range(args.rounds):
        with serve_app(subprocess.DEVNULL, warmup=True) as base, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            if not args.no_home_first:
                samples["home (first session)"].append(settle(browser, f"{base}/"))
                time.sleep(args.warm_wait)
            for url in pages:
                samples[url].append(settle(browser, f"{base}/{url}"))
                print(f"{url}: {samples[url][-1]:.1f} s", file=sys.stderr, flush=True)
            browser.close()
    for url, vals in samples.items():
        if vals:
            print(f"{url}: median {statistics.median(vals):.1f} s (samples {', '.join(f'{v:.1f}' for v in vals)})")


if __name__ == "__main__":
    main()
