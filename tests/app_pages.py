"""The registered pages, read from app/streamlit_app.py without running Streamlit."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENTRY = ROOT / "app" / "streamlit_app.py"


def registered_pages() -> list[tuple[str, str, str, str, str]]:
    """The PAGES table of the entry script: (file, title, icon, url path, description)."""
    tree = ast.parse(ENTRY.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "PAGES" for t in node.targets):
            return [tuple(row) for row in ast.literal_eval(node.value)]
    raise AssertionError("app/streamlit_app.py has no PAGES table")
