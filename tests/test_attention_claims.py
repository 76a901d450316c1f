"""The Attention page's claims: registered, measured at run time, judged from the measurement, on the CLI."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from georesolver_core.__main__ import main as cli_main
from georesolver_core.claims import (
    CLAIMS,
    CONDITIONAL,
    FAILS,
    HOLDS,
    VERDICTS,
    attention_claims,
    rank_claims,
    run_claim,
)
from georesolver_core.geometry import GEOMETRIES
from georesolver_core.theory import attention as th

KEYS = [k for k, c in CLAIMS.items() if c.page == "attention"]
# What the mathematics says the measurement must find (see theory/attention.py for the derivations).
EXPECTED = {
    "lemma2.3-exact-retrieval-euclidean": HOLDS,
    "lemma2.3-exact-retrieval-poincare": HOLDS,
    "lemma2.3-exact-retrieval-sphere": HOLDS,
    "thm1-orthogonal-keys": HOLDS,
    "thm1-softmax-width": CONDITIONAL,  # holds with bounded coordinates; width 2 suffices without
    "sec2.3-dense-key-degradation": HOLDS,
    "sec2.3-gaussian-nn-radius": HOLDS,
    "lemma1-lipschitz": HOLDS,
    "thm3-effective-rank": FAILS,  # eff-rank -> n as eps -> 0, the bound -> 1
    "lemma5.1-effective-rank-n": FAILS,
    "sec2.8-eps-advice": FAILS,  # a fixed fraction of E d^2 cannot keep eps (n-1)/d_min^2 below 1/2
}


@pytest.fixture(scope="module")
def quick_results():
    return {k: run_claim(k, quick=True) for k in KEYS}


def test_every_attention_claim_is_registered_for_the_attention_page():
    assert set(EXPECTED) <= set(KEYS)


@pytest.mark.parametrize("key", list(EXPECTED))
def test_quick_measurement_is_well_formed_and_gives_the_expected_verdict(key, quick_results):
    r = quick_results[key]
    assert r["verdict"] in VERDICTS
    assert r["verdict"] == EXPECTED[key], r["summary"]
    assert len(r["x"]) == len(r["measured"]) == len(r["bound"]) >= 3
    assert all(v is not None and math.isfinite(v) for v in r["measured"] + r["bound"])
    assert r["summary"] and r["x_label"] and r["y_label"]
    json.dumps(r)  # everything the CLI prints is plain JSON


@pytest.mark.parametrize("key", ["lemma2.3-exact-retrieval-sphere", "thm1-orthogonal-keys", "thm3-effective-rank"])
def test_full_sweep_agrees_with_the_quick_one(key, quick_results):
    full = run_claim(key, quick=False)
    assert full["verdict"] == quick_results[key]["verdict"]
    assert len(full["x"]) > len(quick_results[key]["x"])


def test_exact_retrieval_leak_falls_linearly_in_eps(quick_results):
    for geo in GEOMETRIES:
        r = quick_results[f"lemma2.3-exact-retrieval-{geo}"]
        small = np.array(r["x"]) < 1e-3
        slope = np.polyfit(np.log(np.array(r["x"])[small]), np.log(np.array(r["measured"])[small]), 1)[0]
        assert slope == pytest.approx(1.0, abs=0.02)  # 1 - W ~ eps: W -> 1 as eps -> 0
        assert r["extra"]["measured in float32"][0] < 1e-8  # float32 retrieves exactly too


def test_thm3_counter_example_is_full_rank_inside_the_stated_regime(quick_results):
    r = quick_results["thm3-effective-rank"]
    x, m, b = map(np.array, (r["x"], r["measured"], r["bound"]))
    inside = x <= 0.1
    assert (m[inside] > b[inside]).all()
    assert m[0] == pytest.approx(64, rel=1e-3)  # n = 64 keys: full rank at eps = 1e-3 d_min^2


def test_verdicts_follow_the_bound_not_a_constant(monkeypatch):
    """Make the bound impossible and the same measurement must flip its verdict."""
    assert run_claim("lemma2.3-exact-retrieval-euclidean", quick=True)["verdict"] == HOLDS
    monkeypatch.setattr(th, "retrieval_leak_upper_bound", lambda eps, n, r: np.full(np.shape(eps), 1e-30))
    assert attention_claims.measure_exact_retrieval(True).verdict == FAILS
    monkeypatch.setattr(th, "effective_rank_bound", lambda n, eps, d_min: np.full(np.shape(eps), 1e9))
    assert rank_claims.measure_effrank_eps(True).verdict == HOLDS


def test_softmax_width_reports_the_printed_formula_falling_with_n(quick_results):
    r = quick_results["thm1-softmax-width"]
    paper = r["extra"]["paper's printed formula at fixed R"]
    assert paper[-1] < paper[0]  # the printed "d >=" shrinks with n: it cannot be a growing lower bound
    assert r["extra"]["fitted exponent of log((n-1)(1-delta)/delta)"] == pytest.approx(2.0, abs=0.5)
    assert all(math.isfinite(v) for v in r["extra"]["width-2 counter-example"]["R^2 needed"])


def test_cli_prints_the_same_verdicts(quick_results, capsys):
    """The command line's JSON (run in-process; tests/test_cli.py runs the real subprocess) matches run_claim."""
    keys = ["lemma2.3-exact-retrieval-poincare", "thm3-effective-rank"]
    assert cli_main(["claims", "--json", "--quick", "--only", *keys]) == 0
    printed = {r["key"]: r for r in json.loads(capsys.readouterr().out)}
    for key in keys:
        assert printed[key]["verdict"] == quick_results[key]["verdict"]
        assert printed[key]["measured"] == pytest.approx(quick_results[key]["measured"], rel=1e-9)
