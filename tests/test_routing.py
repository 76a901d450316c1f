"""GSR routing laws: brute-force top-K of SIDA weights, renormalisation, exact retrieval, the layer, DMG pool."""

from __future__ import annotations

import pytest
import torch

from georesolver_core.attention import ida_weights
from georesolver_core.routing import (
    GSR,
    DMGConfig,
    PrototypePool,
    capacity_keep,
    gsr_route,
    reset_optimizer_rows,
    sida_routing_weights,
)
from tests.conftest import random_points, tol


@pytest.mark.parametrize("k", [1, 3, 7])
def test_gsr_route_matches_brute_force_topk_of_sida_weights(dtype, k):
    q = random_points("sphere", 2, 5, 4, dtype=dtype, seed=1)
    protos = random_points("sphere", 7, 4, dtype=dtype, seed=2)
    idx, w = gsr_route(q, protos, k=k, eps=0.05)
    assert idx.shape == (2, 5, k) and w.shape == (2, 5, k) and idx.dtype == torch.long
    full = ida_weights(q.reshape(-1, 4), protos, eps=0.05, geometry="sphere", impl="reference")  # (10, 7)
    top_w, top_i = full.topk(k, dim=-1)
    assert torch.equal(idx.reshape(-1, k), top_i)
    torch.testing.assert_close(w.reshape(-1, k), top_w / top_w.sum(-1, keepdim=True), **tol(dtype))
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 5, dtype=dtype), **tol(dtype))
    assert (w[..., :-1] >= w[..., 1:]).all()  # ordered by decreasing weight


def test_full_weights_equal_sida_attention_and_k_equal_pool_is_soft_routing(dtype):
    q = random_points("sphere", 6, 3, dtype=dtype, seed=3)
    protos = random_points("sphere", 5, 3, dtype=dtype, seed=4)
    full = sida_routing_weights(q, protos, eps=0.1)
    torch.testing.assert_close(full, ida_weights(q, protos, eps=0.1, geometry="sphere"), **tol(dtype))
    idx, w = gsr_route(q, protos, k=5, eps=0.1)
    torch.testing.assert_close(full.gather(-1, idx), w, **tol(dtype))


def test_exact_retrieval_as_eps_goes_to_zero():
    protos = random_points("sphere", 9, 5, seed=5)
    idx, w = gsr_route(protos, protos, k=3, eps=1e-12)
    assert torch.equal(idx[:, 0], torch.arange(9))
    assert (w[:, 0] > 1 - 1e-9).all()


def test_ties_go_to_the_lower_index():
    protos = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]], dtype=torch.float64)
    q = torch.tensor([[2**-0.5, 2**-0.5]], dtype=torch.float64)  # equidistant from 0 and 1
    idx, w = gsr_route(q, protos, k=2, eps=0.1)
    assert idx.tolist() == [[0, 1]]
    torch.testing.assert_close(w, torch.full((1, 2), 0.5, dtype=torch.float64))


def test_active_mask_restricts_routing():
    protos = random_points("sphere", 6, 3, seed=6)
    active = torch.tensor([True, False, True, False, True, False])
    idx, _ = gsr_route(random_points("sphere", 20, 3, seed=7), protos, k=3, eps=0.1, active=active)
    assert set(idx.unique().tolist()) <= {0, 2, 4}


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(k=0, eps=0.1), "k must be"),
        (dict(k=5, eps=0.1), "k must be"),
        (dict(k=1, eps=0.0), "eps must be"),
        (dict(k=1, eps=-1.0), "eps must be"),
    ],
)
def test_bad_k_and_eps_raise(kwargs, match):
    protos = random_points("sphere", 4, 3)
    with pytest.raises(ValueError, match=match):
        gsr_route(random_points("sphere", 2, 3), protos, **kwargs)


def test_empty_pool_and_points_off_the_sphere_raise():
    q = random_points("sphere", 2, 3)
    with pytest.raises(ValueError, match="prototypes must hold at least one"):
        gsr_route(q, torch.empty(0, 3, dtype=torch.float64), k=1, eps=0.1)
    with pytest.raises(ValueError, match="prototypes must be unit vectors"):
        gsr_route(q, 2 * random_points("sphere", 4, 3), k=1, eps=0.1)
    with pytest.raises(ValueError, match="q must be unit vectors"):
        gsr_route(torch.zeros(2, 3, dtype=torch.float64), random_points("sphere", 4, 3), k=1, eps=0.1)
    with pytest.raises(ValueError, match="prototypes must hold at least one"):
        gsr_route(q, random_points("sphere", 4, 3), k=1, eps=0.1, active=torch.zeros(4, dtype=torch.bool))


def test_gsr_layer_mixes_the_top_k_experts_with_their_weights():
    torch.manual_seed(0)
    layer = GSR(8, 6, k=2, eps=0.1, hidden=16).double()
    x = torch.randn(3, 5, 8, dtype=torch.float64)
    y = layer(x)
    assert y.shape == x.shape
    r = layer.last_routing
    flat = x.reshape(-1, 8)
    manual = torch.stack(
        [
            sum(r.weights[n, j] * layer.experts.expert(int(r.indices[n, j]), flat[n : n + 1])[0] for j in range(2))
            for n in range(flat.shape[0])
        ]
    )
    torch.testing.assert_close(y.reshape(-1, 8), manual)
    y.sum().backward()  # gradients reach the router (through the SIDA weights) and the experts
    assert layer.router.prototypes.grad.abs().sum() > 0 and layer.experts.w1.grad.abs().sum() > 0


def test_capacity_keep_places_first_choices_first():
    idx = torch.tensor([[0, 1], [0, 1], [0, 2], [1, 0]])
    keep = capacity_keep(idx, 3, capacity=2)
    # expert 0: first choices of tokens 0, 1 fill it, so token 2's first choice and token 3's second drop;
    # expert 1: token 3's first choice arrives before the second choices of tokens 0, 1; token 1's drops
    assert keep.tolist() == [[True, True], [True, False], [False, True], [True, False]]


def _stream(n, centres, spread, seed):
    g = torch.Generator().manual_seed(seed)
    which = torch.randint(len(centres), (n,), generator=g)
    x = centres[which] + spread * torch.randn(n, centres.shape[1], generator=g, dtype=centres.dtype)
    return x / x.norm(dim=-1, keepdim=True)


def test_dmg_stationary_stream_stops_spawning_and_spawns_soon_after_a_shift():
    cfg = DMGConfig(capacity=32, dim=3, tau_base=0.05, kappa=1.0, gamma=1.0, window=32)
    pool = PrototypePool(cfg)
    a = torch.tensor([[1.0, 0, 0], [0, 1.0, 0]], dtype=torch.float32)
    pool.observe(_stream(400, a, 0.05, seed=0))
    n_warm = pool.n_active
    late = pool.observe(_stream(600, a, 0.05, seed=1))
    assert late.numel() == 0, "a stationary stream spawns nothing after warm-up"
    b = torch.tensor([[0, 0, 1.0]])
    t_shift = pool.t
    after = pool.observe(_stream(50, b, 0.05, seed=2))
    assert after.numel() >= 1
    first = pool.birth[after[0]].item() - t_shift
    assert first <= 3, f"first spawn {first} steps after the shift"
    assert pool.n_active > n_warm
    new = pool.prototypes[after[0]].detach()
    assert float(new @ b[0]) > 0.9


def test_dmg_spawning_keeps_optimizer_state_of_existing_prototypes():
    pool = PrototypePool(DMGConfig(capacity=8, dim=3, tau_base=0.05, lr=0.0))
    pool.observe(torch.tensor([[1.0, 0, 0], [0, 1.0, 0]]))
    assert pool.n_active == 2
    param = pool.prototypes
    opt = torch.optim.Adam([param], lr=0.01)
    loss = (param[pool.active] ** 3).sum()
    loss.backward()
    opt.step()
    before = {k: v.clone() for k, v in opt.state[param].items()}
    spawned = pool.observe(torch.tensor([[0, 0, 1.0]]))
    assert spawned.tolist() == [2] and pool.prototypes is param  # same tensor: state still attached
    reset_optimizer_rows(opt, param, spawned)
    for name in ("exp_avg", "exp_avg_sq"):
        torch.testing.assert_close(opt.state[param][name][:2], before[name][:2])
        assert (opt.state[param][name][2] == 0).all()


def test_dmg_capacity_is_bounded_and_refusals_are_counted():
    pool = PrototypePool(DMGConfig(capacity=3, dim=3, tau_base=0.01, kappa=0.0, gamma=0.0))
    pts = torch.eye(3)
    pool.observe(torch.cat([pts, -pts]))
    assert pool.n_active == 3
    assert sum(s.refused for s in pool.history) == 3


def test_dmg_retires_unused_prototypes_and_reuses_their_slots():
    pool = PrototypePool(DMGConfig(capacity=4, dim=3, tau_base=0.05, lr=0.0, retire_after=20))
    pool.observe(torch.tensor([[1.0, 0, 0], [0, 1.0, 0]]))
    pool.observe(_stream(60, torch.tensor([[1.0, 0, 0]]), 0.01, seed=3))
    assert pool.retired == 1 and not bool(pool.active[1])
    spawned = pool.observe(torch.tensor([[0, 0, 1.0]]))
    assert spawned.tolist() == [1]


def test_dmg_bad_input_raises():
    with pytest.raises(ValueError, match="capacity must be"):
        DMGConfig(capacity=0)
    with pytest.raises(ValueError, match="x must be unit vectors"):
        PrototypePool(DMGConfig(dim=3)).observe(torch.ones(2, 3))
    with pytest.raises(ValueError, match="x must have shape"):
        PrototypePool(DMGConfig(dim=3)).observe(torch.tensor([[1.0, 0.0]]))


def test_routing_demo_eps_limit_is_one_hot_only_at_prototypes():
    from georesolver_core.routing.demo import routing_demo

    at = routing_demo(12, 60, k=3, eps=1e-6, spread=0.0, seed=0)
    near = routing_demo(12, 60, k=3, eps=1e-6, spread=0.35, seed=0)
    assert at.first_weight_limit > 0.999 and at.weights[:, 0].mean() > 0.999
    assert near.first_weight_limit < 0.9  # 1/d^2 proportions remain away from the prototypes
    assert abs(near.weights[:, 0].mean() - near.first_weight_limit) < 1e-3
