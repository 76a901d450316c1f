"""The package's shape: imports run one way (no cycle, lazy imports inside functions included, and no
arrow from the kernels up into the labs, the benchmark or the claims, nor from the labs into the claims or
the benchmark), the library never imports Streamlit, and what depends on a geometry or an attention entry
is read from its registry entry: no comparison against a registry key outside the registries, in the
library or in the pages."""

import ast
import re
from pathlib import Path

import georesolver_core

PACKAGE = Path(georesolver_core.__file__).parent
NAME = "georesolver_core"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _ancestors(mod: str) -> set[str]:
    """The packages above a module: a.b.c -> {a, a.b}."""
    parts = mod.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def import_graph() -> dict[str, set[str]]:
    """module -> the package modules it imports, at module level or inside functions (both run).

    Importing a.b.c first runs a.b's ``__init__``: the packages above an imported module count as imported
    too (except those above the importer itself, already running), so a lazy import of a submodule whose
    package imports the importer is the cycle it is."""
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
        running = _ancestors(mod)
        deps |= {a for t in deps for a in _ancestors(t) if a in files and a not in running and a != mod}
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


def test_the_import_graph_sees_lazy_imports_and_the_packages_they_run():
    graph = import_graph()
    # a function-level import: ``inspect_checkpoint`` imports the model builder when it is called
    assert "georesolver_core.model" in graph["georesolver_core.labs.training_runs"]
    # ``from georesolver_core.bench.run import ...`` would run ``georesolver_core.bench``'s __init__ first
    assert "georesolver_core.labs.cost_scaling" in graph["georesolver_core.bench.run"]
    assert "georesolver_core.bench" not in graph["georesolver_core.bench.run"]  # its own package: already running


def test_cycle_finder_finds_a_planted_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_inside_the_package():
    cycle = find_cycle(import_graph())
    assert cycle is None, " -> ".join(cycle)


# The layers: the kernels (attention) know no measurement of themselves; the labs, the benchmark and the
# claims measure the kernels; the claims judge what the labs measure, never the other way round; the
# benchmark's command line runs the cost-scaling lab, so the labs import nothing of the benchmark.
FORBIDDEN_IMPORTS = {
    "attention": ("labs", "bench", "claims"),
    "labs": ("claims", "bench"),
}


def _in_package(mod: str, pkg: str) -> bool:
    return mod == f"{NAME}.{pkg}" or mod.startswith(f"{NAME}.{pkg}.")


def layer_violations(graph: dict[str, set[str]], forbidden: dict[str, tuple[str, ...]]) -> list[str]:
    """``importer -> imported`` for every import from a package into one it must not import."""
    return sorted(
        f"{mod} -> {dep}"
        for mod, deps in graph.items()
        for pkg, banned in forbidden.items()
        if _in_package(mod, pkg)
        for dep in deps
        if any(_in_package(dep, b) for b in banned)
    )


def test_the_layer_check_finds_a_planted_import():
    graph = {
        f"{NAME}.attention.kernel": {f"{NAME}.labs.hida", f"{NAME}.geometry"},
        f"{NAME}.attention": {f"{NAME}.bench"},
        f"{NAME}.labs.hida": {f"{NAME}.attention.kernel"},
        f"{NAME}.labsx": {f"{NAME}.claims"},  # another package whose name starts alike
    }
    assert layer_violations(graph, FORBIDDEN_IMPORTS) == [
        f"{NAME}.attention -> {NAME}.bench",
        f"{NAME}.attention.kernel -> {NAME}.labs.hida",
    ]


def test_the_kernels_import_no_lab_benchmark_or_claim_and_the_labs_no_claim_or_benchmark():
    graph = import_graph()
    assert any(_in_package(m, "labs") for m in graph), "the import graph has no labs package"
    hits = layer_violations(graph, FORBIDDEN_IMPORTS)
    assert not hits, "imports against the layers:\n" + "\n".join(hits)


def streamlit_imports(source: str) -> list[int]:
    """Line numbers of ``import streamlit...`` and ``from streamlit... import`` anywhere in ``source``."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        if any(n == "streamlit" or n.startswith("streamlit.") for n in names):
            lines.append(node.lineno)
    return lines


def test_the_streamlit_finder_catches_the_forms_it_forbids():
    src = "import streamlit as st\ndef f():\n    from streamlit.testing.v1 import AppTest\nimport streamlitx\n"
    assert streamlit_imports(src) == [1, 3]


def test_the_library_never_imports_streamlit():
    hits = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).as_posix()
        hits += [f"{rel}:{n}" for n in streamlit_imports(path.read_text())]
    assert not hits, "the library must run without Streamlit:\n" + "\n".join(hits)


# geometry == "poincare", config.geometry != "sphere", "sphere" == geometry ...
GEOMETRY_COMPARISON = re.compile(r"geometry\s*[!=]=|[!=]=\s*[\w.]*geometry\b")


ROOT = PACKAGE.parent
SOURCES = ("georesolver_core", "pages", "app")  # the library and the pages it serves
REGISTRY_MODULES = {"georesolver_core/geometry/core.py", "georesolver_core/attention/layer.py"}


def source_files():
    """Every module of the library and the app, with its path from the repository root."""
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield path, path.relative_to(ROOT).as_posix()


def test_no_geometry_name_comparison_outside_the_geometry_package():
    hits = []
    for path, rel in source_files():
        if rel.startswith("georesolver_core/geometry/"):
            continue
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            if GEOMETRY_COMPARISON.search(line):
                hits.append(f"{rel}:{lineno}: {line.strip()}")
    assert not hits, "dispatch through geometry.GEOMETRIES instead:\n" + "\n".join(hits)


# The registry entry's data fields and the flags they replaced: outside the geometry package code asks the
# entry's questions instead (``is_compact``, ``has_curvature_parameter``, ``ambient_dim(d)``, ``norm`` ...).
GEOMETRY_FLAG = re.compile(r"\buses_c\b|\bextra_dims\b|\.bounded\b|\.closed\b")
# ``.closed`` is also a word of the job runners' own (``runner.closed``): a vocabulary that is not a geometry's
NOT_A_GEOMETRY = ("georesolver_core/jobs/",)


def test_no_geometry_flag_outside_the_geometry_package():
    hits = []
    for path, rel in source_files():
        if rel.startswith(("georesolver_core/geometry/", *NOT_A_GEOMETRY)):
            continue
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            if GEOMETRY_FLAG.search(line):
                hits.append(f"{rel}:{lineno}: {line.strip()}")
    assert not hits, "ask the geometry (GEOMETRIES[g].is_compact, .ambient_dim(d), ...) instead:\n" + "\n".join(
        hits
    )


def test_the_flag_pattern_catches_the_forms_it_forbids():
    for line in ("if geo.uses_c:", "d + GEOMETRIES[g].extra_dims", "not entry.bounded", "if geo.closed and x"):
        assert GEOMETRY_FLAG.search(line), line
    for line in ("geo.is_compact", "geo.has_bounded_coordinates", "enclosed = 1", "unbounded_set"):
        assert not GEOMETRY_FLAG.search(line), line


def test_the_comparison_pattern_catches_the_forms_it_forbids():
    for line in ('if geometry == "sphere":', "x if cfg.geometry != 'poincare' else y", 'if "ball" == geometry:'):
        assert GEOMETRY_COMPARISON.search(line), line
    assert not GEOMETRY_COMPARISON.search("geometry = check_geometry(geometry)")


def registry_keys() -> set[str]:
    """The keys no comparison may name: every geometry, and every attention entry except the two kernel
    kinds "ida" and "softmax" (``KERNEL_CHOICES``, the landscape and lab pages' own choice of kernel)."""
    from georesolver_core.attention.layer import ATTENTION, KERNEL_CHOICES
    from georesolver_core.geometry import GEOMETRIES

    return set(GEOMETRIES) | (set(ATTENTION) - set(KERNEL_CHOICES))


# Vocabularies of their own that share a word with a registry key: a figure's drawing kind
# (``view.kind == "sphere"``, derived from the entry) and HCC's radius mode (``params["radius"] == "euclidean"``).
OWN_VOCABULARY = {"kind", "radius"}


def _own_vocabulary(node: ast.expr) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr in OWN_VOCABULARY
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Constant)
        and node.slice.value in OWN_VOCABULARY
    )


def key_comparisons(source: str, keys: set[str]) -> list[int]:
    """Line numbers of ``x == "key"``, ``"key" != x`` and ``x in ("key", ...)`` naming one of ``keys``."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        if any(_own_vocabulary(side) for side in sides):
            continue
        named = set()
        for side, op in zip(sides[1:], node.ops, strict=True):
            if isinstance(op, ast.In | ast.NotIn) and isinstance(side, ast.Tuple | ast.List | ast.Set):
                named |= {e.value for e in side.elts if isinstance(e, ast.Constant)}
        if any(isinstance(op, ast.Eq | ast.NotEq) for op in node.ops):
            named |= {side.value for side in sides if isinstance(side, ast.Constant)}
        if any(isinstance(v, str) and v in keys for v in named):
            lines.append(node.lineno)
    return lines


def test_no_comparison_against_a_registry_key_outside_the_registries():
    keys, hits = registry_keys(), []
    for path, rel in source_files():
        if rel in REGISTRY_MODULES:
            continue
        text = path.read_text()
        hits += [f"{rel}:{n}: {text.splitlines()[n - 1].strip()}" for n in key_comparisons(text, keys)]
    assert not hits, "read the behaviour from the registry entry instead:\n" + "\n".join(hits)


def test_the_key_comparison_finder_catches_the_forms_it_forbids():
    keys = {"poincare", "c-hida"}
    src = (
        'a = g == "poincare"\nb = "c-hida" != k\nc = g in ("x", "poincare")\n'
        'd = view.kind == "poincare"\ne = p["radius"] == "poincare"\nf = g == "x"\n'
    )
    assert key_comparisons(src, keys) == [1, 2, 3]


# --- What the pages import from the library -------------------------------------------------------------------

# A page draws widgets, builds a lab's config, calls the lab and hands its result to a figure builder
# (pages -> library, one way). These packages are that path; anything else a page imports is listed below.
PAGE_PACKAGES = {
    "labs": "run(config) -> Result: the measurements a page shows",
    "viz": "figure builders, data -> go.Figure",
    "theory": "the closed-form bounds and rules a page prints beside a measurement",
    "validate": "the argument checks a page may run before it builds a config",
    "device": "the devices and precisions a page names and offers",
}
# Registries a page builds its choices from, instead of re-deciding them (one name each: module:name).
PAGE_REGISTRIES = {
    "georesolver_core.geometry:GEOMETRIES": "the geometries, their labels and dimensions",
    "georesolver_core.attention:ATTENTION": "the attention kernels a model can use",
    "georesolver_core.attention.layer:KERNEL_CHOICES": "IDA or softmax, the kernel a view draws",
    "georesolver_core.attention.layer:HIDA_SIZES": "the HIDA variants' size knobs",
    "georesolver_core.tasks:TASKS": "the training tasks",
    "georesolver_core.compression:QUANTIZERS": "the key quantisers",
}
# Everything else a page imports today: (page, module) -> why it is not (yet) behind a lab.
PAGE_IMPORT_ALLOW_LIST = {
    (
        "pages/claims.py",
        "georesolver_core.claims",
    ): "the Claims page is the claim registry's view: it lists and runs them",
    ("pages/claims.py", "georesolver_core.claims.report"): "it reads the shipped claims report",
    ("pages/claims.py", "georesolver_core.verdicts"): "it prints the rule every verdict is judged by",
    (
        "pages/compression.py",
        "georesolver_core.compression.kv_eval",
    ): "the KV-cache evaluation, not behind a lab yet",
    ("pages/compression.py", "georesolver_core.train.lm_study_kv"): "the KV study's view, not behind a lab yet",
    ("pages/embeddings.py", "georesolver_core.embeddings"): "the live embedding trainer, stepped by the page",
    ("pages/embeddings.py", "georesolver_core.embeddings.trainer"): "the trainer's status, read by the page",
    ("pages/embeddings.py", "georesolver_core.embeddings.wordnet"): "the WordNet recipes and published numbers",
    ("pages/embeddings.py", "georesolver_core.tasks.hierarchy"): "the hierarchy an upload becomes",
    (
        "pages/kernels.py",
        "georesolver_core.bench",
    ): "the page is the kernel benchmark's live view and report reader",
    ("pages/training.py", "georesolver_core.train"): "the run's config and spec, and the language-model study",
    ("pages/training.py", "georesolver_core.train.trainer"): "it resolves the device a run trains on",
}


def library_imports(source: str) -> set[tuple[str, str]]:
    """(module, name) of every library import in ``source``, lazy ones too; ``import m`` gives (m, "")."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == NAME:
            found |= {(node.module, a.name) for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {(a.name, "") for a in node.names if a.name.split(".")[0] == NAME}
    return found


def page_import_violations(page: str, source: str) -> list[str]:
    """The library imports of ``page`` outside PAGE_PACKAGES, PAGE_REGISTRIES and PAGE_IMPORT_ALLOW_LIST.

    ``from georesolver_core import labs`` and ``from georesolver_core.labs import hida`` both import a lab:
    the package a name belongs to is read from the module and, from the top package, from the name."""
    hits = []
    for module, name in sorted(library_imports(source)):
        parts = module.split(".")[1:] or [name]
        if parts[0] in PAGE_PACKAGES or f"{module}:{name}" in PAGE_REGISTRIES:
            continue
        target = module if len(module.split(".")) > 1 else f"{module}.{name}"
        if (page, target) not in PAGE_IMPORT_ALLOW_LIST:
            hits.append(f"{page}: from {module} import {name}")
    return hits


def test_the_page_import_rule_catches_what_it_forbids():
    src = (
        "from georesolver_core.labs.hankel import decay_lab\nfrom georesolver_core import labs, bench\n"
        "from georesolver_core.geometry import GEOMETRIES, pairwise_distance\n"
        "def f():\n    import georesolver_core.extras.orthogonal\n"
    )
    assert page_import_violations("pages/x.py", src) == [
        "pages/x.py: from georesolver_core import bench",
        "pages/x.py: from georesolver_core.extras.orthogonal import ",
        "pages/x.py: from georesolver_core.geometry import pairwise_distance",
    ]
    assert page_import_violations("pages/kernels.py", "from georesolver_core import bench\n") == []


def test_pages_import_only_labs_figures_theory_and_registries():
    pages = sorted((ROOT / "pages").glob("*.py"))
    assert len(pages) > 5, "no pages found"
    hits = [h for p in pages for h in page_import_violations(f"pages/{p.name}", p.read_text())]
    assert not hits, (
        "pages reach past the labs (move the call behind a lab, or list it with its reason):\n" + "\n".join(hits)
    )
    stale = [key for key in PAGE_IMPORT_ALLOW_LIST if (ROOT / key[0]).exists() and not any(
        mod == key[1] or f"{mod}.{name}" == key[1] for mod, name in library_imports((ROOT / key[0]).read_text())
    )]  # fmt: skip
    assert not stale, f"allow-list entries no page needs any more (remove them): {stale}"
