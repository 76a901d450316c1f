"""Settle time of Home and Attention after a slider move, in headless Chromium (a measurement, not a test).

    python scripts/measure_settle.py [--moves 7] [--pages home attention]

Serves `streamlit run app` on 127.0.0.1, opens each page, moves its eps slider one stop with the
keyboard and times until the figure shows the new eps in its title (server rerun + transfer + plotly
redraw). Prints the median and all samples per page. Timings depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, _wait_until_idle, serve_app  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# page url, slider label, a selector of the figure whose title carries eps
PAGES = [
    ("", "eps (regulariser)", '[data-testid="stPlotlyChart"] .gtitle'),
    ("attention", "eps (IDA regulariser)", '[data-testid="stPlotlyChart"] .gtitle'),
]


def _titles(page, selector: str) -> str:
    return page.evaluate(
        "sel => Array.from(document.querySelectorAll(sel)).map(e => e.textContent || '').join(' | ')", selector
    )


def measure(base: str, browser, url: str, label: str, selector: str, moves: int) -> list[float]:
    page = browser.new_page(viewport={"width": 1400, "height": 1400})
    page.goto(f"{base}/{url}", wait_until="domcontentloaded")
    _wait_until_idle(page, timeout_s=600)  # the first visit measures the page's claims
    slider = page.get_by_role("slider", name=label).first
    samples = []
    for i in range(moves):
        before = _titles(page, selector)
        slider.focus()
        t0 = time.perf_counter()
        page.keyboard.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
        while _titles(page, selector) == before:
            if time.perf_counter() - t0 > 30:
                raise RuntimeError(f"{url or 'home'}: the figure did not change within 30 s")
            time.sleep(0.02)
        samples.append(time.perf_counter() - t0)
        _wait_until_idle(page)
    page.close()
    return samples


def main() -> None:
    import subprocess

    from playwright.sync_api import sync_playwright

    ap = argparse.ArgumentParser()
    ap.add_argument("--moves", type=int, default=7)
    ap.add_argument("--pages", nargs="+", choices=[url or "home" for url, _, _ in PAGES], help="default: all")
    args = ap.parse_args()
    with serve_app(subprocess.DEVNULL) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for url, label, selector in PAGES:
            if args.pages and (url or "home") not in args.pages:
                continue
            samples = measure(base, browser, url, label, selector, args.moves)
            print(
                f"{url or 'home'}: median {statistics.median(samples):.2f} s over {len(samples)} moves "
                f"(samples {', '.join(f'{s:.2f}' for s in samples)})",
                flush=True,
            )
        browser.close()


if __name__ == "__main__":
    main()
