"""Claims without import side effects: maths modules never import the claims package, topic modules
export ``CLAIMS`` and never register themselves, and the registry collects them in ``MODULES`` order."""

from __future__ import annotations

import ast
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import georesolver_core
from georesolver_core import claims, verdicts
from georesolver_core.claims import registry

PACKAGE = pathlib.Path(georesolver_core.__file__).parent
# The labs measure for the pages and the claims alike: they read the verdict rules (``verdicts``, a leaf
# outside the claims package), never the claims. Each lab module is imported, not only the package.
LABS = ("labs",) + tuple(f"labs.{p.stem}" for p in sorted((PACKAGE / "labs").glob("*.py")) if p.stem != "__init__")
MATHS = ("embeddings", "landscape", "attention", "geometry", "bench", "theory", "viz", "verdicts", *LABS)


def test_importing_a_maths_module_never_imports_claims():
    # A fresh interpreter: this test process has imported the claims package already.
    code = (
        "import importlib, json, sys\n"
        f"out = {{}}\nfor m in {MATHS!r}:\n"
        "    importlib.import_module('georesolver_core.' + m)\n"
        "    out[m] = sorted(k for k in sys.modules if 'claims' in k)\n"
        "print(json.dumps(out))"
    )
    root = PACKAGE.parent
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=root, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded == {m: [] for m in MATHS}


def test_verdicts_is_a_leaf_module():
    tree = ast.parse((PACKAGE / "verdicts.py").read_text())
    imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in imported if m and m.startswith("georesolver_core")]


def _claims_sources():
    skip = {"__init__.py", "registry.py"}
    return sorted(p for p in (PACKAGE / "claims").rglob("*.py") if p.name not in skip or p.parent.name != "claims")


@pytest.mark.parametrize("path", _claims_sources(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_topic_modules_never_register_themselves(path):
    tree = ast.parse(path.read_text())
    calls = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and getattr(n.func, "id", getattr(n.func, "attr", None)) == "register"
    ]
    assert calls == [], f"{path.name} calls register: export CLAIMS instead"


def test_the_table_is_the_modules_claims_in_order():
    assert all(isinstance(m.CLAIMS, tuple) and m.CLAIMS for m in claims.MODULES)
    expected = [c.key for m in claims.MODULES for c in m.CLAIMS]
    assert list(claims.CLAIMS)[: len(expected)] == expected
    assert all(isinstance(c, verdicts.Claim) for c in claims.CLAIMS.values())
    assert claims.Evidence is verdicts.Evidence and registry.verdict_inequality is verdicts.verdict_inequality


def test_register_still_adds_one_claim_and_refuses_duplicates(monkeypatch):
    monkeypatch.setattr(registry, "CLAIMS", dict(registry.CLAIMS))
    first = next(iter(claims.CLAIMS.values()))
    with pytest.raises(ValueError, match="already registered"):
        registry.register(first)
    extra = verdicts.Claim("test-extra", "nowhere", "a statement", "a bound", "claims", first.measure)
    assert registry.register(extra) is extra and "test-extra" in registry.CLAIMS
    with pytest.raises(ValueError, match="must be a Claim"):
        registry.register("not a claim")


def test_collect_refuses_a_module_without_a_claims_tuple():
    with pytest.raises(ValueError, match="must export CLAIMS as a tuple"):
        registry.collect([verdicts])


def test_sweep_evidence_keeps_the_sweep_and_reads_the_headline_at_one_point():
    measured, bound = np.array([1, 2, 3]), [4.0, 5.0, 6.0]
    judged = verdicts.verdict_inequality(measured, bound)
    axes = verdicts.Axes("n", "error", "measured <= bound", log="y")
    ev = verdicts.sweep_evidence([8, 16, 32], measured, bound, judged, axes, note=". more", at=1)
    assert (ev.x, ev.measured, ev.bound) == ([8.0, 16.0, 32.0], [1.0, 2.0, 3.0], bound)
    assert all(isinstance(v, float) for v in ev.x + ev.measured)
    assert (ev.verdict, ev.summary) == (judged[0], judged[1] + ". more")
    assert (ev.measured_value, ev.bound_value, ev.log_x, ev.log_y) == (2.0, 5.0, False, True)
    assert (ev.x_label, ev.y_label, ev.relation, ev.extra) == ("n", "error", "measured <= bound", {})
    told = verdicts.sweep_evidence(
        [1], [1], [2], judged, axes, measured_value=7.0, bound_value=0.0, extra={"a": 1}
    )
    assert (told.measured_value, told.bound_value, told.extra) == (7.0, 0.0, {"a": 1})
    with pytest.raises(ValueError, match="log must be one of"):
        verdicts.Axes("n", "error", "measured <= bound", log="z")


def test_importing_the_claims_package_leaves_scipy_stats_to_the_claim_that_needs_it():
    # Every page imports the claims package for its claim grid; scipy.stats alone took about a second.
    code = "import sys, georesolver_core.claims\nprint('scipy.stats' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": str(PACKAGE.parent)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=PACKAGE.parent, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "False"
