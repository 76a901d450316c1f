"""No page reads a library result by a string key: what a page gets from the library is a typed result
(a frozen dataclass) read by attribute, so renaming a label in the library cannot become a KeyError there.

The check is on the pages' syntax trees. A name is *bound to a library result* when it is assigned (or
iterated, unpacked, or bound by ``with``/``:=``) from a call of a name imported from ``georesolver_core``,
of a page function that returns one, of a ``ui`` helper that hands a library result on, or of
``json.load(s)`` (a document the library writes), or from an attribute, item or method call of such a
name. Such a name may not be subscripted with a string constant nor read with ``.get("...")``.

Allowed: ALL_CAPS imports (registries and constants: dicts keyed by their entries' names, by the house
rules), and keys that are a registry key (a kernel, a geometry, a residual kind, a quantiser, a protocol):
a mapping over a registry's entries is read by the entry's name, which the registry owns. Not followed:
values that pass through ``st.session_state`` (the page's own state) and pandas tables (plain data).
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = (
    "attention",
    "claims",
    "compression",
    "hida",
    "kernels",
    "landscapes",
    "orthogonal",
    "routing",
    "hankel",
    "home",
)
UI_SOURCES = {"shipped_claims", "shipped_report", "read_upload"}  # ui helpers whose value is a library result
JSON_SOURCES = {"load", "loads"}


def registry_keys() -> set[str]:
    from georesolver_core.attention.layer import ATTENTION, KERNEL_CHOICES
    from georesolver_core.compression.methods import QUANTIZERS
    from georesolver_core.extras.orthogonal import RESIDUAL_KINDS
    from georesolver_core.geometry import GEOMETRIES
    from georesolver_core.routing.distributed import PROTOCOLS

    return (
        set(ATTENTION)
        | set(KERNEL_CHOICES)
        | set(GEOMETRIES)
        | set(RESIDUAL_KINDS)
        | set(QUANTIZERS)
        | set(PROTOCOLS)
    )


def _library_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("georesolver_core"):
            names |= {a.asname or a.name for a in node.names if not a.name.isupper()}
        elif isinstance(node, ast.Import):
            names |= {a.asname or a.name for a in node.names if a.name.startswith("georesolver_core")}
    return names


def _root(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


class _Taint:
    def __init__(self, tree: ast.Module):
        self.tree = tree
        self.calls = _library_names(tree)  # names whose call returns a library result
        self.names: set[str] = set()  # names bound to a library result

    def derived(self, node) -> bool:
        if isinstance(node, ast.Name):
            return node.id in self.names
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name):
                return f.id in self.calls
            if isinstance(f, ast.Attribute):
                base = _root(f)
                return (
                    base in self.calls
                    or (base == "ui" and f.attr in UI_SOURCES)
                    or (base == "json" and f.attr in JSON_SOURCES)
                    or self.derived(f.value)
                )
            return False
        if isinstance(node, ast.Attribute | ast.Subscript | ast.Starred):
            return self.derived(node.value)
        if isinstance(node, ast.IfExp):
            return self.derived(node.body) or self.derived(node.orelse)
        if isinstance(node, ast.BoolOp):
            return any(self.derived(v) for v in node.values)
        if isinstance(node, ast.Tuple | ast.List):
            return any(self.derived(e) for e in node.elts)
        if isinstance(node, ast.ListComp | ast.GeneratorExp | ast.DictComp | ast.SetComp):
            return any(self.derived(g.iter) for g in node.generators)
        return False

    @staticmethod
    def _targets(target) -> set[str]:
        """The names an assignment target binds (``a``, ``a, *b``), not those it stores into (``st.x["k"]``)."""
        if isinstance(target, ast.Name):
            return {target.id}
        if isinstance(target, ast.Starred):
            return _Taint._targets(target.value)
        if isinstance(target, ast.Tuple | ast.List):
            return set().union(*(_Taint._targets(e) for e in target.elts))
        return set()

    def _bind(self, target) -> bool:
        new = self._targets(target) - self.names
        self.names |= new
        return bool(new)

    def run(self) -> "_Taint":
        changed = True
        while changed:
            changed = False
            for node in ast.walk(self.tree):
                if isinstance(node, ast.Assign) and self.derived(node.value):
                    changed |= any([self._bind(t) for t in node.targets])
                elif isinstance(node, ast.AnnAssign | ast.NamedExpr) and node.value and self.derived(node.value):
                    changed |= self._bind(node.target)
                elif isinstance(node, ast.For | ast.comprehension) and self.derived(node.iter):
                    changed |= self._bind(node.target)
                elif isinstance(node, ast.withitem) and node.optional_vars and self.derived(node.context_expr):
                    changed |= self._bind(node.optional_vars)
                elif isinstance(node, ast.FunctionDef) and node.name not in self.calls:
                    returns = [n.value for n in ast.walk(node) if isinstance(n, ast.Return) and n.value]
                    if any(self.derived(v) for v in returns):
                        self.calls.add(node.name)
                        changed = True
        return self


def string_key_reads(source: str, allowed: set[str] = frozenset()) -> list[tuple[int, str]]:
    """(line, expression) of every ``x["label"]`` and ``x.get("label")`` on a name bound to a library result."""
    tree = ast.parse(source)
    taint = _Taint(tree).run()
    hits = []
    for node in ast.walk(tree):
        key = value = None
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Load)
            and isinstance(node.slice, ast.Constant)
        ):
            key, value = node.slice.value, node.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            key, value = node.args[0].value, node.func.value
        if isinstance(key, str) and key not in allowed and taint.derived(value):
            hits.append((node.lineno, ast.unparse(node)))
    return hits


@pytest.mark.parametrize("page", PAGES)
def test_no_page_reads_a_library_result_by_a_string_key(page):
    path = ROOT / "pages" / f"{page}.py"
    hits = string_key_reads(path.read_text(), registry_keys())
    assert not hits, f"read a typed result's field instead (pages/{page}.py):\n" + "\n".join(
        f"  line {n}: {expr}" for n, expr in hits
    )


def test_the_finder_catches_the_forms_it_forbids():
    src = """
import json
import streamlit as st
import ui
from georesolver_core.labs.attention import attention_lab
from georesolver_core import bench
from georesolver_core.viz.style import VERDICT_COLORS

def _lab(n):
    return attention_lab(n=n)

res = _lab(3)
st_ = res.stats
a = st_["largest IDA weight"]
b = bench.judge(report)[0]
for t in bench.judge(report):
    c = t["met"]
d = [r["key"] for r in ui.shipped_claims(["x"])]
e = json.loads(text)["runs"]
f = (res.stats if n else None).get("eps")
ok1 = st.session_state["att_lab"]
ok2 = VERDICT_COLORS["fails"]
ok3 = res.sweep.by_kernel["softmax"]
ok4 = st_.d_min
other = {"x": 1}
ok5 = other["x"]
st.session_state["lab"] = _lab(4)
ok6 = st.session_state["lab"]
"""
    lines = [n for n, _ in string_key_reads(src, {"ida", "softmax"})]
    assert sorted(lines) == [14, 17, 18, 19, 20], string_key_reads(src, {"ida", "softmax"})
