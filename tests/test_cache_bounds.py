"""Every process-wide cache of the app has a bound, so a class following many links keeps the server's memory flat.

A page's ``st.cache_data`` functions are keyed on what a link sets (the seed, the sizes); unbounded, every
distinct link added an entry for the life of the server (the HIDA page: about 0.25 MB a link).
"""

from __future__ import annotations

import ast
import time

import pytest

from tests.app_pages import ROOT, open_page, set_and_run

CACHES = ("cache_data", "cache_resource")


def _cache_decorators(path):
    """(line, keywords) of every ``st.cache_data`` / ``st.cache_resource`` decorator in one file."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                target = dec.func if isinstance(dec, ast.Call) else dec
                if isinstance(target, ast.Attribute) and target.attr in CACHES:
                    yield node.lineno, {k.arg for k in dec.keywords} if isinstance(dec, ast.Call) else set()


def test_every_cache_of_the_app_has_a_bound():
    files = sorted((ROOT / "pages").glob("*.py")) + sorted((ROOT / "app").glob("*.py"))
    found, unbounded = 0, []
    for path in files:
        for line, keywords in _cache_decorators(path):
            found += 1
            if "max_entries" not in keywords:
                unbounded.append(f"{path.relative_to(ROOT)}:{line}")
    assert found >= 20  # the scan sees the app's caches
    assert not unbounded, f"caches with no max_entries: {unbounded}"


def _cached_bytes() -> tuple[int, int]:
    """(entries, bytes) held by every st.cache_data function of this process (Streamlit's own cache stats)."""
    from streamlit.runtime.caching.cache_data_api import _data_caches

    stats = [s for family in _data_caches.get_stats().values() for s in family]
    return len(stats), sum(s.byte_length for s in stats)


@pytest.mark.slow
def test_many_distinct_links_keep_the_cache_memory_flat():
    """Sixty seeds on the HIDA page (each seed a distinct link): past the bounds, the caches stop growing.

    1,000 links through AppTest would take many minutes; the bound makes the count irrelevant once it is
    reached, so the test checks the plateau: bytes after 60 links within 10% of the bytes after 30."""
    app = open_page("hida.py")
    held = {}
    t0 = time.perf_counter()
    for i in range(1, 61):
        set_and_run(app, seed=i)  # looked up afresh: an element of an earlier run no longer sets its widget
        assert not app.exception, [e.value for e in app.exception]
        if i in (30, 60):
            held[i] = _cached_bytes()
    entries, nbytes = held[60]
    assert entries == held[30][0], held  # no new entries past the bounds
    assert nbytes <= 1.10 * held[30][1], held
    assert time.perf_counter() - t0 < 120
