"""The Routing & memory page's lab: its configs, the sphere view and its table, Theorem 10.1's verdicts
(a planted violation fails, the measured sweep holds), the DMG stream and the traffic report."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from georesolver_core.labs.routing import (
    CompareConfig,
    DMGLabConfig,
    QualityConfig,
    SphereConfig,
    TrafficConfig,
    dmg_lab,
    judge_quality,
    quality_lab,
    router_table,
    routers_steps,
    sphere_lab,
    traffic_lab,
)
from georesolver_core.routing.quality import quality_sweep
from georesolver_core.routing.traffic import load_traffic_report
from georesolver_core.verdicts import FAILS, HOLDS
from tests.steps import drain


def test_sphere_lab_routes_to_at_most_the_pool_and_tables_every_query():
    lab = sphere_lab(SphereConfig(n_protos=3, n_queries=20, k=5, eps=0.05, spread=0.3, seed=1))
    assert lab.k == 3 and lab.demo.indices.shape == (20, 3)
    assert list(lab.table.columns) == ["query", *(f"choice {j}" for j in (1, 2, 3)),
                                       *(f"weight {j}" for j in (1, 2, 3)), "tail mass"]  # fmt: skip
    assert np.allclose(lab.table["weight 1"], np.round(lab.demo.weights[:, 0], 4))
    assert lab.entropy_bound == pytest.approx(np.log(3))
    assert lab.never_chosen == int((np.bincount(lab.demo.indices[:, 0], minlength=3) == 0).sum())
    assert 0.0 <= lab.demo.entropy <= lab.entropy_bound + 1e-12


@pytest.mark.parametrize(
    "bad, match",
    [
        (dict(n_protos=0), "n_protos"),
        (dict(k=0), "k"),
        (dict(eps=0.0), "eps"),
        (dict(spread=-1.0), "spread"),
        (dict(n_queries=10**6), "n_queries"),
    ],
)
def test_sphere_config_names_the_bad_argument(bad, match):
    good = dict(n_protos=4, n_queries=10, k=2, eps=0.1, spread=0.1)
    with pytest.raises(ValueError, match=match):
        SphereConfig(**(good | bad))


def test_quality_verdicts_planted_violation_fails_and_the_measured_sweep_holds():
    sweep = quality_sweep(n_pool=12, n_queries=40, eps=0.05, seed=0)
    judged = judge_quality(sweep)
    # unit-norm values: the printed bound holds at every K; values of norm 0.1/sqrt(K_pool): it does not
    assert judged.unit_verdict == HOLDS
    assert judged.small_verdict == FAILS and "violated" in judged.small_summary
    planted = judge_quality(dataclasses.replace(sweep, worst_error=[b * 1.01 + 1e-3 for b in sweep.paper_bound]))
    assert planted.unit_verdict == FAILS and "violated" in planted.unit_summary
    rescued = dataclasses.replace(sweep, small_bound=[e * 2 for e in sweep.small_error])
    assert judge_quality(rescued).small_verdict == HOLDS


def test_quality_lab_carries_the_verdicts_the_page_shows():
    lab = quality_lab(QualityConfig(n_pool=12, eps=0.05, seed=0, n_queries=40))
    assert lab.unit_holds and lab.unit_verdict == HOLDS
    assert not lab.small_holds and lab.small_verdict == FAILS
    assert lab.sweep.ks[0] == 1 and lab.sweep.ks[-1] == 12
    with pytest.raises(ValueError, match="n_pool"):
        QualityConfig(n_pool=1, eps=0.05)


def test_dmg_lab_clips_the_shift_to_the_stream_and_counts_the_pool():
    lab = dmg_lab(DMGLabConfig(n=300, shift_at=2000, angle=1.0, tau_base=0.1, kappa=1.0, gamma=1.0, capacity=8))
    assert lab.shift_at == 300 and lab.capacity == 8
    assert lab.used == len(lab.stream.protos) <= 8
    assert lab.stream.points.shape == (300, 3)
    with pytest.raises(ValueError, match="capacity"):
        DMGLabConfig(n=300, shift_at=100, angle=1.0, tau_base=0.1, kappa=1.0, gamma=1.0, capacity=0)
    with pytest.raises(ValueError, match="shift_angle"):
        DMGLabConfig(n=300, shift_at=100, angle=4.0, tau_base=0.1, kappa=1.0, gamma=1.0, capacity=8)


def test_router_table_has_one_row_per_router():
    _, result = drain(routers_steps(CompareConfig(n_experts=2, n_clusters=2, k=1, steps=2, batch=16)))
    table = router_table(result)
    assert len(table) == len(result.runs) == 3
    assert {"router", "test MSE", "dropped slots", "log E"} <= set(table.columns)
    assert np.allclose(table["log E"], np.log(2))


def test_traffic_lab_types_and_tables_a_report():
    row = dict(protocol="gsr-candidates", world_size=3, batch=96, bytes=10, messages=6, bytes_per_query=0.1,
               messages_per_query=0.06, dropped_slots=0)  # fmt: skip
    doc = json.dumps({"config": {"world_size": 3}, "max_abs_diff": {"gsr-candidates": 0.0},
                      "same_indices": {"gsr-candidates": True}, "rows": [row]})  # fmt: skip
    lab = traffic_lab(TrafficConfig(load_traffic_report(doc)))
    assert [r.world_size for r in lab.runs] == [3] and lab.rows == [row]
    assert lab.table.to_dict("records") == [row]
    assert lab.runs[0].same_indices == {"gsr-candidates": True}


def test_traffic_config_refuses_what_is_not_a_report_and_takes_none():
    assert traffic_lab(TrafficConfig(())).rows == []  # nothing loaded yet: an empty lab, nothing drawn
    with pytest.raises(ValueError, match=r"runs\[0\] must be a report document"):
        TrafficConfig(({"rows": []},))
    with pytest.raises(ValueError, match=r"runs\[0\].*config.world_size"):
        TrafficConfig(({"config": {}, "rows": [], "max_abs_diff": 0.0, "same_indices": True},))
    with pytest.raises(ValueError, match="runs must hold 0 to 64"):
        TrafficConfig(tuple({} for _ in range(65)))
    config = TrafficConfig([])  # a list is kept as a tuple: the config is frozen all the way down
    assert config.runs == ()
