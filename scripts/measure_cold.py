"""First visit to every page after a server start, in headless Chromium (a measurement, not a test).

    python scripts/measure_cold.py [--rounds 3] [--pages home attention ...] [--no-home-first] [--json FILE]
    python scripts/measure_cold.py --beside-training   # the same while another session trains
    python scripts/measure_cold.py --apptest [--warm] [--pages ...]


Each round serves a fresh `streamlit run app` on 127.0.0.1 and, as a class would, opens Home first
(the app's warm-up starts with the first session), waits ``--warm-wait`` seconds, and then opens each
page in a new tab, timing from the
navigation to the moment the page stops running (no status widget, no skeleton, quiet for 2 s;
the 2 s are not counted). Prints per page the median and the samples. Timings depend on the load.

``--beside-training`` measures a class at work: after Home, another session opens Training at its defaults
(the text model), sets Steps to 5000 (far beyond the measurement) and presses Start; the pages are timed while
it trains. Its tab draws in the same Chromium, on the same cores as the server: on a real server only the
training itself would compete.

``--apptest`` runs the same sequence without a browser, in one process through Streamlit's AppTest
(Home first, then each page), and prints each page's script time as CPU seconds of the process and
wall seconds: the server's share of a first visit, less sensitive to other load than the browser's.
``--warm`` runs the app's warm-up (``app/warmup.py``) to its end after Home, as a server does while
the class arrives.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.app_pages import registered_pages  # noqa: E402
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, serve_app  # noqa: E402


def settle(browser, url: str, timeout_s: float = 300.0) -> float:
    """Seconds from opening ``url`` in a new tab until the page has stopped running."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    t0 = time.perf_counter()
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector('[data-testid="stApp"]', timeout=60_000)
    quiet_since = None
    while time.perf_counter() - t0 < timeout_s:
        busy = (
            page.locator(
                '[data-testid="stStatusWidget"], [data-testid="stSkeleton"], [data-testid="stAppSkeleton"]'
            ).count()
            > 0
        )
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


TRAINING_STEPS = 5000  # the Steps control's largest value: the text model trains for minutes at its defaults


def start_training(browser, base: str):
    """Another session: Training at its defaults with Steps = TRAINING_STEPS, Start pressed, waited until it
    has trained a step. Returns its browser context (close it to leave)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.goto(f"{base}/training", wait_until="domcontentloaded")
    steps = page.locator(".st-key-trn_steps input")
    steps.wait_for(timeout=120_000)
    steps.fill(str(TRAINING_STEPS))
    steps.press("Enter")
    page.wait_for_function(
        "n => document.querySelector('.st-key-trn_steps input').value === String(n)", arg=TRAINING_STEPS
    )
    page.locator(".st-key-trn_start button").click()
    page.wait_for_function(r"/\(running\): step [1-9]/.test(document.body.innerText)", timeout=180_000)
    return context


def apptest_times(pages: list[str], warm: bool) -> dict[str, dict[str, float]]:
    """{page: {"cpu_s", "wall_s"}} of each page's first run after Home's, in one AppTest process."""
    from streamlit.testing.v1 import AppTest

    from tests.app_pages import ENTRY

    files = {row[3]: row[0] for row in registered_pages()}
    out = {}
    app = AppTest.from_file(str(ENTRY), default_timeout=600)
    for url in ["home (first session)", *pages]:
        if url != "home (first session)":
            app.switch_page(f"../pages/{files[url]}")
        c0, t0 = time.process_time(), time.perf_counter()
        app.run()
        out[url] = {"cpu_s": time.process_time() - c0, "wall_s": time.perf_counter() - t0}
        if app.exception:
            raise RuntimeError(f"{url}: {[e.value for e in app.exception]}")
        print(
            f"{url}: cpu {out[url]['cpu_s']:.2f} s, wall {out[url]['wall_s']:.2f} s", file=sys.stderr, flush=True
        )
        if warm and url == "home (first session)":
            sys.path.insert(0, str(ENTRY.parent))
            import warmup

            c0 = time.process_time()
            failed = warmup.warm([ENTRY.parent.parent / "pages" / f for f in files.values()], list(files))
            print(f"warm-up: cpu {time.process_time() - c0:.2f} s, failed {failed}", file=sys.stderr, flush=True)
    return out


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
    ap.add_argument(
        "--beside-training", action="store_true", help="time the pages while another session trains (Training)"
    )
    ap.add_argument("--apptest", action="store_true", help="time the page scripts through AppTest (no browser)")
    ap.add_argument("--warm", action="store_true", help="with --apptest: run the warm-up after Home")
    ap.add_argument("--json", help="also write the samples (or AppTest times) to this JSON file")
    args = ap.parse_args()
    pages = args.pages or urls
    if args.apptest:
        times = apptest_times(pages, args.warm)
        if args.json:
            Path(args.json).write_text(json.dumps(times, indent=1))
        return
    samples: dict[str, list[float]] = {u: [] for u in ["home (first session)", *pages]}
    for _ in range(args.rounds):
        with serve_app(subprocess.DEVNULL, warmup=True) as base, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            if not args.no_home_first:
                samples["home (first session)"].append(settle(browser, f"{base}/"))
                time.sleep(args.warm_wait)
            trainer = start_training(browser, base) if args.beside_training else None
            for url in pages:
                samples[url].append(settle(browser, f"{base}/{url}"))
                print(f"{url}: {samples[url][-1]:.1f} s", file=sys.stderr, flush=True)
            if trainer is not None:
                progress = trainer.pages[0].locator('[data-testid="stProgress"]').last.inner_text()
                print(f"the other session, at the end of the round: {progress}", file=sys.stderr, flush=True)
                trainer.close()
            browser.close()
    for url, vals in samples.items():
        if vals:
            print(f"{url}: median {statistics.median(vals):.1f} s (samples {', '.join(f'{v:.1f}' for v in vals)})")
    if args.json:
        Path(args.json).write_text(json.dumps({u: v for u, v in samples.items() if v}, indent=1))


if __name__ == "__main__":
    main()
