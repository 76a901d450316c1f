"""Warm the server while the first visitor reads Home: measure every page's claims in the background.

The claims are the slow part of a first visit (Attention measures its panels on arrival, Claims all of
them) and they are the same for every student: ``ui.claim_result`` caches each one process-wide. One
daemon thread per server, started by the first real browser session, measures them in the order of
the pages (Home's first, Claims' remaining ones last), so a class that arrives a minute after the
lecturer opened the app finds them computed. The thread only fills caches; a claim that fails there is
measured again, with its error shown, when a page asks for it. ``GEORESOLVER_WARMUP=0`` switches it
off; test runs (no browser, so no URL in ``st.context``) never start it.
"""

from __future__ import annotations

import logging
import os
import threading

import streamlit as st

log = logging.getLogger(__name__)


def claim_order(claims: dict, page_order: list[str], first: tuple[str, ...] = ()) -> list[str]:
    """Claim keys ordered by their page's place in ``page_order`` (unknown pages last), ``first`` ahead."""
    rank = {url: i for i, url in enumerate(page_order)}
    rest = sorted((k for k in claims if k not in first), key=lambda k: rank.get(claims[k].page, len(rank)))
    return [k for k in first if k in claims] + rest


def _warm(keys: list[str], measure) -> None:
    for key in keys:
        try:
            measure(key)
        except Exception as err:  # any error: the page that shows this claim measures it again and says why
            log.warning("warm-up: claim %s failed: %s", key, err)


@st.cache_resource(show_spinner=False)
def _start(keys: tuple[str, ...], _measure) -> threading.Thread:
    thread = threading.Thread(target=_warm, args=(list(keys), _measure), name="claims-warm-up", daemon=True)
    thread.start()
    return thread


def start(keys: list[str], measure) -> None:
    """Start the warm-up thread once per server, from a real browser session only."""
    if os.environ.get("GEORESOLVER_WARMUP", "1") == "0" or st.context.url is None:
        return
    _start(tuple(keys), measure)
