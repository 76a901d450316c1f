"""Warm the server while the first visitor reads Home: what every page's first visit would otherwise wait on.

A page's first visit after a server start pays for the modules it imports (the library's topic
packages, the claims registry with scipy, torch's compiler package that ``torch.optim`` loads on the
first optimizer), for the compiled attention kernel (built once per machine, then loaded) and for the
claims it measures live. Those are the same for every student and last
for the life of the process, so one daemon thread per server does them in the background, in the
order of the pages: ``import_steps`` reads each page's own import lines, ``claim_steps`` measures
through ``claims_panels.claim_result`` (the very cache the pages read) the claims the shipped report
lacks. The thread starts at the end of the first real browser session's run, so Home is drawn first.
A step that fails is logged and skipped (the page that needs it does it again and shows the error).
``GEORESOLVER_WARMUP=0`` switches it off; test runs (no browser, so no URL in ``st.context``) never
start it.
"""

from __future__ import annotations

import ast
import gc
import importlib
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

import streamlit as st

log = logging.getLogger(__name__)

THREAD_NAME = "page-warm-up"
# torch.optim imports torch._dynamo when the first optimizer is built (about 2 s of CPU): Embeddings,
# Training, Orthogonal residuals and Routing build one on their first visit.
FIRST_OPTIMIZER = "torch._dynamo"


def page_imports(path: Path) -> list[str]:
    """The modules a page script imports at its top level (``import a.b`` -> a.b, ``from a.b import c`` -> a.b)."""
    names = []
    for node in ast.parse(Path(path).read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
    return [n for n in dict.fromkeys(names) if n != "__future__"]


def import_steps(page_files: list[Path]) -> list[tuple[str, Callable[[], object]]]:
    """(label, step) importing every module the pages import, page by page, torch's compiler first."""
    names = [FIRST_OPTIMIZER] + [n for path in page_files for n in page_imports(path)]
    return [(f"import {n}", lambda n=n: importlib.import_module(n)) for n in dict.fromkeys(names)]


def claim_order(claims: dict, page_order: list[str], first: tuple[str, ...] = ()) -> list[str]:
    """Claim keys ordered by their page's place in ``page_order`` (unknown pages last), ``first`` ahead."""
    rank = {url: i for i, url in enumerate(page_order)}
    rest = sorted((k for k in claims if k not in first), key=lambda k: rank.get(claims[k].page, len(rank)))
    return [k for k in first if k in claims] + rest


def claim_steps(page_order: list[str]) -> list[tuple[str, Callable[[], object]]]:
    """(label, step): the shipped report read into its cache, each claim it lacks measured, then every
    claim's figure as the pages' claim grids draw it (``claims_panels.claim_chart``), by page."""
    from claims_panels import GRID_HEIGHT, claim_chart, claim_result, shipped_report

    from georesolver_core.claims import CLAIMS

    report = shipped_report()
    shipped = {r["key"]: r for r in (report or {"claims": []})["claims"]}
    order = claim_order(CLAIMS, page_order)
    steps = [("claims report", shipped_report)]
    steps += [(f"claim {k}", lambda k=k: claim_result(k)) for k in order if k not in shipped]

    def figure(key):
        return claim_chart(shipped.get(key) or claim_result(key), GRID_HEIGHT)

    return steps + [(f"figure {k}", lambda k=k: figure(k)) for k in order]


def run_steps(steps) -> list[str]:
    """Run each (label, step) in order; returns the labels that failed (logged, never raised)."""
    failed = []
    for label, step in steps:
        try:
            step()
        except Exception as err:  # any error: the page that needs this step does it again and says why
            log.warning("warm-up: %s failed: %s", label, err)
            failed.append(label)
    return failed


def freeze_heap() -> None:
    """Move every object alive now out of reach of the garbage collector's full passes (``gc.freeze``).

    Streamlit runs ``gc.collect(2)`` after every script run (``runner.postScriptGC``), holding the
    interpreter lock while it walks every object: with torch, plotly and the pages' modules loaded that
    is about 300,000 objects and 0.3 s of CPU per run, during which no session is served. The warm-up
    has just imported what every page needs, so nearly all of them are modules and their constants,
    alive for the life of the server; after the freeze a full pass walks only what the runs allocate
    (measured 0.33 s -> 0.007 s per run). An object frozen here is never collected, even if it later
    becomes unreachable: that is at most the warm-up's own temporaries, once per server."""
    gc.collect()
    gc.freeze()


def compiled_kernel() -> object:
    """Build (first server on a machine, about 30 s of a compiler in the background) or load the compiled
    attention kernel, which every page that runs attention on the CPU calls."""
    from georesolver_core.attention import compiled

    return compiled.module()


def warm(page_files: list[Path], page_urls: list[str]) -> list[str]:
    """Everything the thread does, in order; returns the labels of the steps that failed.
    ``page_files`` and ``page_urls`` are the navigation's pages in order (a claim names its page by url).
    The heap is frozen after the imports and again after the claims (``freeze_heap``)."""
    failed = run_steps(import_steps(page_files) + [("compiled attention kernel", compiled_kernel)])
    failed += run_steps([("freeze the heap", freeze_heap)])
    return failed + run_steps(claim_steps(page_urls) + [("freeze the heap", freeze_heap)])


@st.cache_resource(show_spinner=False, max_entries=1)
def _start(page_files: tuple[Path, ...], page_urls: tuple[str, ...]) -> threading.Thread:
    thread = threading.Thread(target=warm, args=(list(page_files), list(page_urls)), name=THREAD_NAME, daemon=True)
    thread.start()
    return thread


def start(page_files: list[Path], page_urls: list[str]) -> None:
    """Start the warm-up thread once per server, from a real browser session only."""
    if os.environ.get("GEORESOLVER_WARMUP", "1") == "0" or st.context.url is None:
        return
    _start(tuple(page_files), tuple(page_urls))
