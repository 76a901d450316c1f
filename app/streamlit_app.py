"""GeoResolver Explorer's server: ``streamlit run app`` runs this file, which serves ``main.py``.

``st.App`` lets the server do work before it answers its first request (its lifespan hook). Here that
is the import of every module the pages import (torch, geoopt with scipy, plotly, the library's topic
packages: about 3.5 s of CPU on two cores), which the first browser session would otherwise wait for,
followed by ``warmup.freeze_heap``. The server answers (``/_stcore/health`` too) once that is done.
The claims' part of the warm-up still starts from the first browser session (``warmup.start``).
``GEORESOLVER_WARMUP=0`` skips it, as it skips the rest of the warm-up.

Where heavy work runs: ``streamlit run app -- --jobs ray`` (or ``--jobs ray://HOST:PORT``, or
``GR_JOBS=...`` in the environment) sends training runs to a Ray cluster instead of worker processes on
this machine (``georesolver_core.jobs``; ``pip install -e ".[cluster]"`` adds Ray).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import streamlit as st

HERE = Path(__file__).parent


def apply_arguments(argv: list[str]) -> None:
    """The app's own arguments (after ``--`` on the streamlit command line): ``--jobs local|ray|ray://HOST:PORT``
    sets ``GR_JOBS`` for this server's job runner. A bad value stops the server with one line naming it."""
    from georesolver_core.jobs import BACKEND_ENV, backend_name

    parser = argparse.ArgumentParser(prog="streamlit run app --", description="GeoResolver Explorer's server")
    parser.add_argument(
        "--jobs", help="where training runs: local (worker processes, default), ray, ray://HOST:PORT"
    )
    args = parser.parse_args(argv)
    if args.jobs is not None:
        try:
            os.environ[BACKEND_ENV] = backend_name(args.jobs)
        except ValueError as err:
            parser.error(f"--jobs: {err}")


def warm_imports() -> list[str]:
    """Import what every page imports, then freeze the heap; returns the labels of steps that failed."""
    import warmup

    pages = sorted((HERE.parent / "pages").glob("*.py"))
    return warmup.run_steps(warmup.import_steps(pages) + [("freeze the heap", warmup.freeze_heap)])


@asynccontextmanager
async def lifespan(_app):
    if os.environ.get("GEORESOLVER_WARMUP", "1") != "0":
        await asyncio.to_thread(warm_imports)  # off the event loop; requests wait for the startup anyway
    yield


if sys.argv and Path(sys.argv[0]).resolve() in (Path(__file__).resolve(), HERE.resolve()):  # run by streamlit
    apply_arguments(sys.argv[1:])
app = st.App("main.py", lifespan=lifespan)
