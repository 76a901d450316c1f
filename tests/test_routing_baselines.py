"""Baseline routers, routing statistics, the router comparison and the DMG simulations."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from georesolver_core.routing import DMGConfig, PrototypePool, Routing
from georesolver_core.routing.baselines import ExpertChoiceRouter, SoftmaxTopKRouter, make_moe
from georesolver_core.routing.compare import CompareConfig, compare_routers
from georesolver_core.routing.dmg_sim import (
    cluster_stream,
    null_spawns,
    pool_spawns,
    quantisation_curve,
    window_sigma,
)
from georesolver_core.routing.stats import routing_stats
from georesolver_core.theory.routing import dmg_null_spawn_rate


def test_switch_gate_drops_over_capacity_and_balancing_loss_is_one_when_uniform():
    router = SoftmaxTopKRouter(4, 4, k=1, capacity_factor=1.0)
    with torch.no_grad():
        router.gate.weight.zero_()  # uniform p: E sum f_e P_e = E sum f_e / E = 1, whichever expert ties pick
    assert math.isclose(float(router(torch.randn(32, 4)).aux_loss.detach()), 1.0, rel_tol=1e-6)
    with torch.no_grad():
        router.gate.weight[0] = 1.0  # positive tokens all prefer expert 0
    r = router(torch.rand(32, 4) + 0.1)
    s = routing_stats(r)  # capacity ceil(1.0 * 32 / 4) = 8 keeps 8 of 32
    assert s.load_requested == [32, 0, 0, 0] and s.load_kept == [8, 0, 0, 0]
    assert s.dropped_slots == 24 and s.dropped_tokens == 24 and s.dead_experts == 3
    assert (r.weights[~r.keep] == 0).all()


def test_balancing_loss_grows_with_imbalance_and_has_gradient():
    torch.manual_seed(0)
    router = SoftmaxTopKRouter(4, 4, k=2, capacity_factor=None)
    x = torch.randn(64, 4)
    r = router(x)
    r.aux_loss.backward()
    assert router.gate.weight.grad.abs().sum() > 0  # through P_e; f_e counts and has no gradient
    with torch.no_grad():
        router.gate.weight.zero_()
        router.gate.weight[1] = 5.0  # every token prefers expert 1: f_1 = 1/2 (top-2), P_1 near 1
        collapsed = float(router(torch.rand(64, 4) + 0.1).aux_loss)
    assert collapsed > 1.5  # uniform routing gives exactly 1


def test_expert_choice_fills_every_expert_exactly():
    router = ExpertChoiceRouter(6, 4, k=1, capacity_factor=1.0)
    r = router(torch.randn(40, 6))
    s = routing_stats(r)
    assert s.load_kept == [10, 10, 10, 10] and s.cv_kept == 0.0 and s.dead_experts == 0
    assert s.dropped_slots == 0  # expert choice drops tokens, not slots: some get no expert
    assert s.dropped_tokens == int((~r.keep.any(-1)).sum())


def test_stats_entropy_is_bounded_by_log_e():
    idx = torch.tensor([[0], [1], [2], [3]])
    r = Routing(idx, torch.ones(4, 1), torch.ones(4, 1, dtype=torch.bool), 4, torch.zeros(()))
    s = routing_stats(r)
    assert math.isclose(s.entropy, math.log(4)) and s.cv_kept == 0.0


@pytest.mark.parametrize("name", ["gsr", "softmax", "expert-choice"])
def test_every_router_plugs_into_the_same_moe(name):
    moe = make_moe(name, 6, 4, k=2, hidden=8, capacity_factor=2.0)
    y = moe(torch.randn(3, 5, 6))
    assert y.shape == (3, 5, 6) and torch.isfinite(y).all()
    with pytest.raises(ValueError, match="router must be"):
        make_moe("hash", 6, 4, k=1, hidden=8)


def test_router_comparison_runs_and_reports_statistics(one_thread):
    res = compare_routers(CompareConfig(steps=5, batch=32, n_experts=4, n_clusters=4))
    assert [r.name for r in res.runs] == ["gsr", "softmax", "expert-choice"]
    for r in res.runs:
        assert len(r.losses) == 5 and np.isfinite(r.test_mse)
        assert sum(r.stats.load_kept) <= 4 * 32 * 4


def test_window_sigma_matches_a_direct_computation():
    x = np.random.default_rng(0).normal(size=50)
    s = window_sigma(x, 8)
    for t in (0, 1, 2, 7, 8, 30, 49):
        w = x[max(0, t - 8) : t]
        assert math.isclose(s[t], w.std() if len(w) >= 2 else 0.0, abs_tol=1e-10)


def test_vectorised_pool_simulation_equals_the_real_pool(one_thread):
    cfg = DMGConfig(tau_base=0.05, kappa=1.0, gamma=1.0, window=32, rate_window=32, lr=0.0, capacity=512)
    pts = cluster_stream(250, seed=5)
    sim = pool_spawns(pts, cfg)
    pool = PrototypePool(cfg).double()
    spawned = pool.observe(torch.from_numpy(pts))
    births = [int(pool.birth[i]) - 2 for i in spawned.tolist()[1:]]  # step s sees point s + 1 at t = s + 2
    assert sim == births and len(sim) > 3


def test_null_model_spawns_linearly_at_the_fixed_point_rate():
    cfg = DMGConfig(tau_base=2.0, kappa=1.0, gamma=1.0, window=64, rate_window=64)
    n = null_spawns(200_000, cfg, seed=1)
    rate = len(n) / 200_000
    p = float(dmg_null_spawn_rate(3.0, 1.0))
    assert abs(rate - p) < 0.35 * p  # linear in T, not O(log T)


def test_quantisation_error_on_s2_falls_like_one_over_k():
    e = quantisation_curve([4, 16], 3, n=1200)
    assert 2.5 < e[0] / e[1] < 6.0  # 4x more centres: ~4x less error on a 2-dimensional sphere
