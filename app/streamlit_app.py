"""GeoResolver Explorer's server: ``streamlit run app`` runs this file, which serves ``main.py``.

``st.App`` lets the server do work before it answers its first request (its lifespan hook). Here that
is the import of every module the pages import (torch, geoopt with scipy, plotly, the library's topic
packages: about 3.5 s of CPU on two cores), which the first browser session would otherwise wait for,
followed by ``warmup.freeze_heap``. The server answers (``/_stcore/health`` too) once that is done.
The claims' part of the warm-up still starts from the first browser session (``warmup.start``).
``GEORESOLVER_WARMUP=0`` skips it, as it skips the rest of the warm-up.
"""

from __future__ import annotations

import asyncio
import os
from contextlib import asynccontextmanager
from pathlib import Path

import streamlit as st

HERE = Path(__file__).parent


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


app = st.App("main.py", lifespan=lifespan)
