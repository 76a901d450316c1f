"""No dead code: vulture finds nothing unused in the package, the app, the pages and the scripts.

Its paths and confidence are in pyproject.toml ([tool.vulture]). A name used only in a way vulture cannot
see (by a string, by a framework, only by tests) goes into tests/whitelist_vulture.py, in the group that
says why; anything else it reports is dead and should go.
"""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytest.importorskip("vulture")


def test_vulture_finds_no_dead_code():
    found = subprocess.run(
        [sys.executable, "-m", "vulture"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    report = (found.stdout + found.stderr).strip()
    assert found.returncode == 0 and not report, (
        "vulture found unused code (remove it, or whitelist a dynamic use in tests/whitelist_vulture.py "
        f"with a comment saying why):\n{report}"
    )
