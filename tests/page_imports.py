"""The library modules the app's pages and helpers import (a measurement, not a test).

    python tests/page_imports.py [--rev REV] [--list]

Reads ``pages/*.py`` and ``app/*.py`` (of the working tree, or of the commit ``REV`` through git) and
counts the distinct ``georesolver_core.*`` modules they import, at module level or inside functions.
``from georesolver_core.pkg import name`` counts the submodule ``pkg.name`` when there is one, else
``pkg`` itself. ``--list`` prints each module with the files that import it.
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = "georesolver_core"
FOLDERS = ("pages", "app")


def _git(rev: str, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def sources(rev: str | None = None) -> tuple[dict[str, str], set[str]]:
    """({file: text} of pages/*.py and app/*.py, the library's module names) at ``rev`` (None: working tree)."""
    if rev is None:
        files = [p.relative_to(ROOT).as_posix() for p in sorted(ROOT.rglob("*.py"))]
        read = lambda f: (ROOT / f).read_text()  # noqa: E731
    else:
        files = _git(rev, "ls-tree", "-r", "--name-only", rev).split()
        read = lambda f: _git(rev, "show", f"{rev}:{f}")  # noqa: E731
    modules = set()
    for f in files:
        if f.startswith(f"{NAME}/") and f.endswith(".py"):
            parts = f.removesuffix(".py").split("/")
            modules.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    pages = {f: read(f) for f in files if f.count("/") == 1 and f.split("/")[0] in FOLDERS and f.endswith(".py")}
    return pages, modules


def imported_modules(source: str, modules: set[str]) -> set[str]:
    """The library modules one file imports (``modules``: every module name of the library)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == NAME}
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == NAME:
            found |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                      for a in node.names}  # fmt: skip
    return found


def page_imports(rev: str | None = None) -> dict[str, set[str]]:
    """Library module -> the files of pages/ and app/ that import it."""
    pages, modules = sources(rev)
    out: dict[str, set[str]] = {}
    for file, text in pages.items():
        for mod in imported_modules(text, modules):
            out.setdefault(mod, set()).add(file)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", help="count at this commit instead of the working tree")
    parser.add_argument("--list", action="store_true", help="print each module and the files importing it")
    args = parser.parse_args(argv)
    found = page_imports(args.rev)
    if args.list:
        for mod in sorted(found):
            print(f"{mod:<48} {' '.join(sorted(found[mod]))}")
    print(f"{len(found)} distinct {NAME} modules imported by {', '.join(f + '/*.py' for f in FOLDERS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
