"""The package's shape: imports run one way (no cycle), and geometry dispatch lives in geometry/ only."""

import ast
import re
from pathlib import Path

import georesolver_core

PACKAGE = Path(georesolver_core.__file__).parent
NAME = "georesolver_core"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """module -> the package modules it imports, at module level or inside functions (both run)."""
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for mod, path in files.items():
        is_pkg = path.name == "__init__.py"
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative import
                    anchor = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    anchor = anchor[: len(anchor) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                # "from pkg import name": the submodule pkg.name if there is one, else pkg itself
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names]
            deps |= {t for t in targets if t in files and t != mod}
        graph[mod] = deps
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(u):
        state[u] = 1
        stack.append(u)
        for w in sorted(graph[u]):
            if state.get(w) == 1:
                return stack[stack.index(w) :] + [w]
            if w not in state and (cycle := visit(w)):
                return cycle
        stack.pop()
        state[u] = 2
        return None

    for u in sorted(graph):
        if u not in state and (cycle := visit(u)):
            return cycle
    return None


def test_the_import_graph_sees_the_kernel_modules():
    graph = import_graph()
    assert "georesolver_core.attention.reference" in graph["georesolver_core.attention.fused"]
    assert "georesolver_core.attention.fused" in graph["georesolver_core.attention.kernel"]


def test_cycle_finder_finds_a_planted_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_inside_the_package():
    cycle = find_cycle(import_graph())
    assert cycle is None, " -> ".join(cycle)


# geometry == "poincare", config.geometry != "sphere", "sphere" == geometry ...
GEOMETRY_COMPARISON = re.compile(r"geometry\s*[!=]=|[!=]=\s*[\w.]*geometry\b")


def test_no_geometry_name_comparison_outside_the_geometry_package():
    hits = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).parts[0] == "geometry":
            continue
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            if GEOMETRY_COMPARISON.search(line):
                hits.append(f"{path.relative_to(PACKAGE)}:{lineno}: {line.strip()}")
    assert not hits, "dispatch through geometry.GEOMETRIES instead:\n" + "\n".join(hits)


def test_the_comparison_pattern_catches_the_forms_it_forbids():
    for line in ('if geometry == "sphere":', "x if cfg.geometry != 'poincare' else y", 'if "ball" == geometry:'):
        assert GEOMETRY_COMPARISON.search(line), line
    assert not GEOMETRY_COMPARISON.search("geometry = check_geometry(geometry)")
