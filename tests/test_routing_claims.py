"""Routing claims (quick), the theory functions, the figures, and the routing CLI."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from georesolver_core.__main__ import main
from georesolver_core.claims import CLAIMS, VERDICTS
from georesolver_core.claims import routing_claims as rc
from georesolver_core.routing.demo import ShiftingStream, dmg_stream, routing_demo
from georesolver_core.routing.dmg import DMGConfig
from georesolver_core.routing.quality import quality_sweep
from georesolver_core.theory.routing import gsr_quality_bound, gsr_quality_exact_worst, routing_entropy_bound
from georesolver_core.viz.routing import (
    comm_figure,
    dmg_pool_figure,
    dmg_stream_figure,
    load_figure,
    quality_figure,
    routing_sphere_figure,
)


def test_routing_claims_are_registered():
    assert {c.key for c in rc.CLAIMS} <= set(CLAIMS)


@pytest.mark.parametrize(
    "claim", [c for c in rc.CLAIMS if c.key != "thm10.2-gsr-communication"], ids=lambda c: c.key
)
def test_quick_claims_measure_with_a_verdict(claim, one_thread):
    ev = claim.measure(True)
    assert ev.verdict in VERDICTS and len(ev.x) == len(ev.measured) == len(ev.bound)
    assert np.all(np.isfinite(ev.measured))


def test_quality_bound_readings():
    # exact worst case is attained; the printed bound holds for unit values and fails for small ones
    s = quality_sweep(n_pool=16, n_queries=40, eps=0.05)
    np.testing.assert_allclose(s.worst_error, s.exact_bound, atol=1e-12)
    assert all(w <= b + 1e-12 for w, b in zip(s.worst_error, s.paper_bound, strict=True))
    assert s.small_error[0] > s.small_bound[0]
    assert gsr_quality_bound(0.0, 3.0, 1.0) == 0.0 and gsr_quality_exact_worst(0.25, 2.0) == 1.0
    assert np.isclose(routing_entropy_bound(8), np.log(8))


def test_figures_are_built_from_data():
    d = routing_demo(6, 20, k=2, eps=0.1, spread=0.3, seed=0)
    fig = routing_sphere_figure(d.queries, d.protos, d.indices, d.weights)
    # sphere, 2 arc ranks, queries, then one trace per prototype (its legend entry, up to 16 prototypes)
    assert isinstance(fig, go.Figure) and len(fig.data) == 1 + 2 + 1 + 6
    assert [t.name.split()[0] for t in fig.data[4:]] == [f"c{j}" for j in range(6)]
    assert isinstance(load_figure({"gsr": ("GSR", [1, 2], [1, 1])}), go.Figure)
    s = quality_sweep(n_pool=8, n_queries=10)
    assert len(quality_figure(s.ks, s.worst_error, s.random_error, s.paper_bound, s.exact_bound).data) == 4
    st = dmg_stream(ShiftingStream(300, shift_at=150, shift_angle=1.5), DMGConfig(capacity=16, tau_base=0.1))
    assert st.delay is not None and st.delay <= 5  # a 1.5 rad shift spawns within a few steps
    assert len(dmg_stream_figure(st.t, st.loss, st.tau, st.spawn_t, st.n_active, 150).data) == 4
    assert isinstance(dmg_pool_figure(st.points, np.arange(300), st.protos, st.births), go.Figure)
    rows = [
        dict(protocol="gsr-candidates", world_size=2, batch=b, bytes=10 * b, bytes_per_query=10.0)
        for b in (64, 128)
    ]
    assert list(comm_figure(rows).data[0].y) == [640, 1280]


def test_demo_bad_input_raises():
    with pytest.raises(ValueError, match="k must be"):
        routing_demo(3, 5, k=4, eps=0.1, spread=0.1, seed=0)
    with pytest.raises(ValueError, match="eps must be"):
        routing_demo(3, 5, k=1, eps=0.0, spread=0.1, seed=0)


def test_cli_routing_json_and_bad_world_size(capsys):
    rc_ = main(
        [
            "routing",
            "--world-size",
            "2",
            "--batch-sizes",
            "8",
            "16",
            "--n-pool",
            "4",
            "--dim",
            "4",
            "--k",
            "1",
            "--backend",
            "gloo",
            "--json",
        ]
    )
    assert rc_ == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["same_indices"]["gsr-candidates"] and doc["max_abs_diff"]["gsr-candidates"] == 0.0
    assert {r["batch"] for r in doc["rows"]} == {8, 16}
    assert main(["routing", "--world-size", "0", "--json"]) == 2
    assert "world_size must be" in capsys.readouterr().err
