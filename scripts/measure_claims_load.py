"""First load of the Claims page, cold, in headless Chromium (a measurement, not a test).

    python scripts/measure_claims_load.py [--runs 3]

Each run starts a fresh `streamlit run app` (nothing imported or cached yet), opens /claims in a new
browser and times, from the navigation, (a) until the claims table is drawn and (b) until the script
run has finished (no running status widget). Prints the median and all samples. Timings depend on the
machine and its load.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, serve_app  # noqa: E402


def first_load(base: str, browser, timeout_s: float = 300.0) -> tuple[float, float]:
    """Seconds until the claims table shows, and until the page's script run has finished."""
    page = browser.new_page(viewport={"width": 1400, "height": 1400})
    t0 = time.perf_counter()
    page.goto(f"{base}/claims", wait_until="domcontentloaded")
    page.wait_for_selector('[data-testid="stDataFrame"]', timeout=timeout_s * 1000)
    table = time.perf_counter() - t0
    while page.locator('[data-testid="stStatusWidget"]').count() > 0:
        if time.perf_counter() - t0 > timeout_s:
            raise RuntimeError(f"the Claims page still runs after {timeout_s} s")
        time.sleep(0.05)
    done = time.perf_counter() - t0
    if page.locator('[data-testid="stException"]').count():
        raise RuntimeError("the Claims page shows an exception")
    page.close()
    return table, done


def main() -> None:
    from playwright.sync_api import sync_playwright

    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    tables, dones = [], []
    for _ in range(args.runs):
        with serve_app(subprocess.DEVNULL) as base, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            table, done = first_load(base, browser)
            browser.close()
        tables.append(table)
        dones.append(done)
        print(f"cold first load: table {table:.2f} s, script finished {done:.2f} s", flush=True)
    print(
        f"median over {args.runs} cold starts: table {statistics.median(tables):.2f} s, "
        f"finished {statistics.median(dones):.2f} s"
    )


if __name__ == "__main__":
    main()
