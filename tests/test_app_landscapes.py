"""AppTest of the Landscapes page: every widget of every tab at its extremes, no exception; bad input
shows an error with the fix and the rest of the page still draws."""

from __future__ import annotations

import json

import pytest
import torch
from streamlit.testing.v1 import AppTest

from georesolver_core.device import set_process_threads

TABS = ["Two keys: PL inequality", "2-D landscape and descent", "Hessian spread", "Trained model slice"]


PAGE = "landscapes.py"  # the page of the module's shared AppTest, ``at`` (tests/conftest.py)


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    """Tiny tensors: intra-op threads only cost synchronisation on a small CPU (set before the page is built:
    autouse fixtures of a scope come first)."""
    threads = torch.get_num_threads()
    set_process_threads(1)
    yield
    set_process_threads(threads)


def _run(app: AppTest, **widgets) -> None:
    """Set widgets by key, rerun once, and fail on any exception."""
    for key, value in widgets.items():
        app.get_by_key(key).set_value(value)
    app.run()
    assert not app.exception, (widgets, [e.value for e in app.exception])


def _tab(app: AppTest, label: str) -> None:
    app.session_state["land_tab"] = label
    app.run()
    assert not app.exception, [e.value for e in app.exception]


def test_title_figure_metrics_and_verdict_box(at):
    assert at.title[0].value == "Landscapes"
    assert at.get("plotly_chart")
    assert any("What the theory says vs what we measured" in m.value for m in at.markdown)
    assert any("Theorem 5.3" in m.value for m in at.markdown)  # the PL claims' verdict box
    assert {m.label for m in at.metric} >= {"mu (IDA)", "mu (softmax)", "mu_IDA / mu_soft"}
    # The claims have their own tests; the rest of this module exercises the labs alone.
    _run(at, land_claims=False)
    assert not any("Theorem 5.3" in m.value for m in at.markdown)


def test_two_key_tab_extremes(at):
    """Each widget at both ends once; each geometry once (the Poincaré run also moves c)."""
    _tab(at, TABS[0])
    _run(
        at, land_pl_geometry="euclidean", land_pl_eps=1e-6, land_pl_delta=0.1, land_pl_tau=0.1, land_pl_basin=0.05
    )
    _run(at, land_pl_geometry="poincare")
    _run(at, land_pl_c=10.0, land_pl_eps=1.0, land_pl_delta=6.0, land_pl_tau=10.0, land_pl_basin=0.95)
    _run(at, land_pl_c=0.1)
    _run(at, land_pl_geometry="sphere")  # theta = 6 > pi: an error with the fix, and the figure still draws
    assert any("must be at most pi" in e.value for e in at.error)
    assert at.get("plotly_chart")
    _run(at, land_pl_eps=1e-3, land_pl_delta=1.0, land_pl_tau=1.0, land_pl_basin=0.5)


def test_two_key_sweeps_and_float64(at):
    _tab(at, TABS[0])
    at.session_state["dtype"] = "float64"
    _run(at, land_pl_geometry="poincare", land_pl_sweep=True, land_claims=True)
    _run(at, land_pl_claims_show=True)
    assert len(at.get("plotly_chart")) >= 3 + 6  # profile, two sweeps, one panel per claim
    at.session_state["dtype"] = "float32"
    _run(at, land_pl_sweep=False, land_pl_claims_show=False, land_claims=False)


def test_landscape_tab_extremes(at):
    _tab(at, TABS[1])
    _run(
        at,
        land_geo="euclidean",
        land_n=2,
        land_eps=1e-5,
        land_tau=0.1,
        land_res=20,
        land_starts=1,
        land_steps=10,
        land_lr=0.01,
        land_kernel="softmax",
    )
    _run(at, land_geo="poincare")
    _run(
        at,
        land_c=10.0,
        land_n=12,
        land_eps=1.0,
        land_tau=10.0,
        land_res=80,
        land_starts=12,
        land_steps=300,
        land_lr=20.0,
        land_kernel="ida",
    )
    assert any(m.label == "Starts reaching the global minimum" for m in at.metric)
    _run(at, land_c=0.1)
    _run(at, land_geo="sphere", land_res=40, land_starts=8, land_steps=100, land_lr=2.0, land_speed=4.0)
    spec = next(json.loads(c.proto.spec) for c in at.get("plotly_chart") if "Play descent" in c.proto.spec)
    assert spec["layout"]["updatemenus"][0]["buttons"][0]["args"][1]["frame"]["duration"] == 20  # 80 ms / 4


def test_hessian_tab_extremes(at):
    _tab(at, TABS[2])
    _run(at, land_h_geometry="euclidean", land_h_eps=1e-4, land_h_rho=0.1, land_h_nmax=8)
    _run(at, land_h_geometry="poincare")
    _run(at, land_h_c=10.0, land_h_eps=1.0, land_h_rho=1.5, land_h_nmax=128)
    _run(at, land_h_c=0.1)
    _run(at, land_h_geometry="sphere", land_h_nmax=16, land_claims=True)
    _run(at, land_h_claims_show=True)
    assert any("Lemma 2" in m.value for m in at.markdown)
    assert len(at.get("plotly_chart")) >= 3
    _run(at, land_claims=False)


def test_model_tab_extremes(at):
    _tab(at, TABS[3])
    _run(
        at,
        land_m_geometry="poincare",
        land_m_kernel="softmax",
        land_m_eps=1e-3,
        land_m_steps=20,
        land_m_span=0.1,
        land_m_res=5,
    )
    off = [m for m in at.metric if m.label == "Largest distance off the manifold"]
    assert off and float(off[0].value) == 0.0
    _run(at, land_m_geometry="sphere")
    _run(
        at,
        land_m_geometry="euclidean",
        land_m_kernel="ida",
        land_m_eps=1.0,
        land_m_steps=300,
        land_m_span=3.0,
        land_m_res=25,
    )


def test_two_key_ratio_underflow_in_float32_is_explained_not_a_crash(at):
    """Poincaré, Delta = 6, float32: softmax's PL constant underflows to 0 (once a ZeroDivisionError)."""
    _tab(at, TABS[0])
    at.session_state["dtype"] = "float32"
    _run(at, land_pl_geometry="poincare", land_pl_c=1.0, land_pl_delta=6.0, land_pl_eps=1e-3, land_pl_tau=1.0)
    ratio = next(m for m in at.metric if m.label == "mu_IDA / mu_soft")
    if ratio.value == "unbounded":
        assert any("underflows" in w.value for w in at.warning)
    _run(at, land_pl_delta=1.0)
