"""The class-load benchmark: one ``streamlit run app`` server, N headless Chromium sessions driven at once.

    python -m georesolver_core bench --serve [--sessions 1 4 8] [--moves 5] [--json]

A scripted class, per N (a fresh server each):

1. **Arrival**: all N sessions open Home at the same moment, then Attention at the same moment; each
   first visit is timed from navigation until the page has stopped running (no status widget or skeleton,
   quiet for ``QUIET_S``; the quiet time is not counted).
2. **Sliders**: every session moves Attention's eps slider ``moves`` times, all sessions at once; a move is
   timed from the key press until the figure's title shows the new eps (rerun + transfer + redraw).
3. **Beside a run**: one more session opens Training, sets Steps to its largest value and presses Start;
   step 2 is repeated while it trains, then Stop is pressed and the time until the processes are idle is taken.

Beside the browser-side figures it reads the server from ``/proc``: its resident memory, and the CPU seconds
of the server process against those of its child processes (workers) in each phase, with the server's CPU
seconds per rerun (the server's own share of a slider move, which the browser-side time also contains).

Needs Playwright's Python package and a Chromium (``pip install -e ".[test]"``; Debian's ``chromium``), and
the app folder beside the package (a source checkout). Timings depend on the machine and its load: compare
only rows of one run.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

from georesolver_core.bench.serve_report import ClassRow, Phase, SliderPhase, row_dict, table

ROOT = Path(__file__).resolve().parents[2]
QUIET_S = 2.0  # a page counts as drawn once nothing has run for this long
IDLE_CORES = 0.05  # below this CPU rate (cores) a process counts as idle
MAX_SESSIONS = 16
# Headless, as root, with no GPU; the background-networking switches keep Chromium from calling its update,
# sync and field-trial services while a page is timed.
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
EPS_SLIDER = "eps (IDA regulariser)"  # Attention's eps knob, by its label
TITLE = '[data-testid="stPlotlyChart"] .gtitle'  # the figures whose titles carry eps
TRAINING_RUNNING = r"/\(running\): step [1-9]/"  # the Training page's status line once a step has run


@dataclass(frozen=True)
class ServeConfig:
    """What the scripted class does; every count is validated once here."""

    sessions: tuple[int, ...] = (1, 4, 8)  # class sizes, one fresh server each
    moves: int = 5  # eps slider moves per session and phase
    training: bool = True  # also run the phase beside a training run
    timeout_s: float = 300.0  # longest wait for one page or one move
    chromium: str | None = None  # the browser binary (default: chromium on PATH)
    root: Path = ROOT  # the source tree whose app (and library) is served: another checkout for a before/after

    def __post_init__(self) -> None:
        if not self.sessions or any(not 1 <= int(n) <= MAX_SESSIONS for n in self.sessions):
            raise ValueError(f"sessions must each be in [1, {MAX_SESSIONS}] (got {list(self.sessions)})")
        if not 1 <= self.moves <= 50:
            raise ValueError(f"moves must be in [1, 50] (got {self.moves})")
        if not 10 <= self.timeout_s <= 3600:
            raise ValueError(f"timeout_s must be in [10, 3600] (got {self.timeout_s})")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _children(pid: int) -> list[int]:
    """Every descendant of ``pid``, from /proc (Linux)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = (entry / "stat").read_text()
                parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    out, frontier = [], [pid]
    while frontier:
        p = frontier.pop()
        kids = [c for c, pp in parents.items() if pp == p]
        out += kids
        frontier += kids
    return out


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of one process (0 once it has gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mb(pid: int) -> float:
    match = re.search(r"VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
    return int(match.group(1)) / 1024 if match else float("nan")


class _CpuMeter:
    """CPU seconds of a server and of every child it has had, sampled so that exited workers still count."""

    def __init__(self, pid: int):
        self.pid = pid
        self.seen: dict[int, float] = {}

    def sample(self) -> tuple[float, float]:
        for child in _children(self.pid):
            self.seen[child] = max(self.seen.get(child, 0.0), _cpu_s(child))
        return _cpu_s(self.pid), sum(self.seen.values())


@contextlib.contextmanager
def _server(root: Path, timeout_s: float = 120.0):
    """A fresh ``streamlit run app`` of ``root`` on a free local port; yields (base url, pid) once healthy."""
    app = root / "app" / "streamlit_app.py"
    if not app.is_file():
        raise ValueError(
            f"bench --serve needs the app folder beside the package (no {app.name} in {root / 'app'})"
        )
    # another checkout serves its own library, not the installed one
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    port = _free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", "app", "--server.port", str(port)]
    cmd += ["--server.address", "127.0.0.1", "--server.headless", "true"]
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + timeout_s
        while True:
            with contextlib.suppress(OSError):
                if urllib.request.urlopen(f"{base}/_stcore/health", timeout=2).read() == b"ok":
                    break
            if proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"streamlit did not answer on {base} within {timeout_s:.0f} s")
            time.sleep(0.25)
        yield base, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# -- what one session does ------------------------------------------------------------------------------------


async def _settle(page, t0: float, timeout_s: float) -> float:
    """Seconds from ``t0`` until the page has been quiet for QUIET_S (the quiet time not counted)."""
    quiet_since = None
    while time.perf_counter() - t0 < timeout_s:
        busy = await page.locator(
            '[data-testid="stStatusWidget"], [data-testid="stSkeleton"], [data-testid="stAppSkeleton"]'
        ).count()
        drawn = await page.locator(
            '[data-testid="stMainBlockContainer"] [data-testid="stElementContainer"]'
        ).count()
        now = time.perf_counter()
        if busy or not drawn:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = now
        elif now - quiet_since >= QUIET_S:
            return quiet_since - t0
        await asyncio.sleep(0.1)
    raise RuntimeError(f"{page.url} still running after {timeout_s:.0f} s")


async def _visit(page, url: str, timeout_s: float) -> float:
    t0 = time.perf_counter()
    await page.goto(url, wait_until="domcontentloaded")
    return await _settle(page, t0, timeout_s)


async def _titles(page) -> str:
    return await page.evaluate(
        "sel => Array.from(document.querySelectorAll(sel)).map(e => e.textContent || '').join(' | ')", TITLE
    )


async def _move_slider(page, moves: int, timeout_s: float) -> list[float]:
    """Move the eps slider ``moves`` stops (right, left, ...); seconds until each move's figure shows."""
    slider = page.get_by_role("slider", name=EPS_SLIDER).first
    samples = []
    for i in range(moves):
        before = await _titles(page)
        await slider.focus()
        t0 = time.perf_counter()
        await page.keyboard.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
        while await _titles(page) == before:
            if time.perf_counter() - t0 > timeout_s:
                raise RuntimeError(f"the eps figure did not change within {timeout_s:.0f} s")
            await asyncio.sleep(0.02)
        samples.append(time.perf_counter() - t0)
        await _settle(page, time.perf_counter(), timeout_s)
    return samples


async def _start_training(browser, base: str, timeout_s: float):
    """Another session: Training at its defaults, Steps at the largest value, Start pressed, one step run."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    await page.goto(f"{base}/training", wait_until="domcontentloaded")
    steps = page.locator(".st-key-trn_steps input")
    await steps.wait_for(timeout=timeout_s * 1000)
    largest = await steps.get_attribute("max") or "5000"
    await steps.fill(largest)
    await steps.press("Enter")
    await page.wait_for_function("n => document.querySelector('.st-key-trn_steps input').value === n", arg=largest)
    await page.locator(".st-key-trn_start button").click()
    await page.wait_for_function(f"{TRAINING_RUNNING}.test(document.body.innerText)", timeout=timeout_s * 1000)
    return context, page


async def _until_idle(meter: _CpuMeter, timeout_s: float) -> float:
    """Seconds until the server and its children together use under IDLE_CORES over a 0.5 s window."""
    t0 = time.perf_counter()
    last_t, last = t0, sum(meter.sample())
    while time.perf_counter() - t0 < timeout_s:
        await asyncio.sleep(0.5)
        now, cpu = time.perf_counter(), sum(meter.sample())
        if (cpu - last) / (now - last_t) < IDLE_CORES:
            return last_t - t0
        last_t, last = now, cpu
    raise RuntimeError(f"the server was still busy {timeout_s:.0f} s after Stop")


async def _slider_phase(pages, meter: _CpuMeter, moves: int, timeout_s: float) -> SliderPhase:
    s0, w0 = meter.sample()
    t0 = time.perf_counter()
    per_session = await asyncio.gather(*(_move_slider(p, moves, timeout_s) for p in pages))
    wall = time.perf_counter() - t0
    s1, w1 = meter.sample()
    samples = [s for session in per_session for s in session]
    return SliderPhase(samples, Phase(wall, s1 - s0, w1 - w0), reruns=len(samples))


async def _one_class(n: int, cfg: ServeConfig, chromium: str) -> ClassRow:
    from playwright.async_api import async_playwright

    with _server(Path(cfg.root)) as (base, pid):
        meter = _CpuMeter(pid)
        await asyncio.sleep(1.0)
        rss_idle = _rss_mb(pid)
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=chromium, args=list(CHROMIUM_ARGS))
            contexts = [await browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(n)]
            pages = [await c.new_page() for c in contexts]
            first: dict[str, list[float]] = {}
            server_cpu: dict[str, float] = {}
            for name, path in (("home", ""), ("attention", "attention")):
                before = meter.sample()[0]
                first[name] = list(
                    await asyncio.gather(*(_visit(p, f"{base}/{path}", cfg.timeout_s) for p in pages))
                )
                server_cpu[name] = (meter.sample()[0] - before) / n
            sliders = await _slider_phase(pages, meter, cfg.moves, cfg.timeout_s)
            row = ClassRow(n, first, sliders, rss_mb=_rss_mb(pid), rss_idle_mb=rss_idle,
                           first_visit_server_cpu_s=server_cpu)  # fmt: skip
            if cfg.training:
                trainer, tpage = await _start_training(browser, base, cfg.timeout_s)
                row.beside_training = await _slider_phase(pages, meter, cfg.moves, cfg.timeout_s)
                if not re.search(r"\(running\)", await tpage.inner_text("body")):
                    row.notes.append("the training run ended before the slider phase did")
                await tpage.locator(".st-key-trn_stop button").click()
                row.stop_to_idle_s = await _until_idle(meter, cfg.timeout_s)
                await trainer.close()
            await browser.close()
    return row


def run_serve(cfg: ServeConfig, progress=print) -> list[ClassRow]:
    """Run the scripted class at each size of ``cfg.sessions``; one row per size."""
    chromium = cfg.chromium or os.environ.get("CHROMIUM_PATH") or shutil.which("chromium")
    if not chromium:
        raise ValueError("bench --serve needs a Chromium: install Debian's chromium or set CHROMIUM_PATH")
    try:
        import playwright  # noqa: F401
    except ImportError as err:
        raise ValueError('bench --serve needs Playwright: pip install -e ".[test]"') from err
    rows = []
    for n in cfg.sessions:
        progress(f"class of {n}: serving, arriving, moving sliders" + (", beside a run" if cfg.training else ""))
        rows.append(asyncio.run(_one_class(int(n), cfg, chromium)))
    return rows


# -- the report -----------------------------------------------------------------------------------------------


def add_arguments(parser) -> None:
    """The ``--serve`` options of ``bench`` (``--json`` is the kernel benchmark's)."""
    g = parser.add_argument_group("class load (--serve)")
    g.add_argument("--serve", action="store_true", help="serve the app and drive N headless Chromium sessions")
    g.add_argument(
        "--sessions", type=int, nargs="+", default=[1, 4, 8], metavar="N",
        help=f"class sizes, a fresh server each (default 1 4 8; at most {MAX_SESSIONS})",
    )  # fmt: skip
    g.add_argument("--moves", type=int, default=5, help="eps slider moves per session and phase (default 5)")
    g.add_argument("--no-training", action="store_true", help="skip the phase beside a training run")


def main(args) -> int:
    """``bench --serve``: the table (or ``--json``: one document with every sample) on stdout."""
    import json
    import sys

    try:
        cfg = ServeConfig(sessions=tuple(args.sessions), moves=args.moves, training=not args.no_training)
        rows = run_serve(cfg, progress=lambda text: print(text, file=sys.stderr, flush=True))
    except (ValueError, RuntimeError) as err:  # RuntimeError: the server or a page did not answer in time
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.json:
        json.dump({"config": asdict(cfg), "rows": [row_dict(r) for r in rows]}, sys.stdout, indent=1, default=str)
        print()
    else:
        print(table(rows))
    return 0
