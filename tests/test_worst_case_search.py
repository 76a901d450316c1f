"""The worst-case searches behind Theorems 5.6 and 7.1: orders of a C-HIDA stream, inputs of a HyperGate."""

import numpy as np
import pytest
import torch

from georesolver_core.claims import gate_search as gs
from georesolver_core.claims.order_search import greedy_orders, online_losses, worst_order
from georesolver_core.labs import hida as hida_lab
from georesolver_core.model.gate import HyperGate, gate_bound


def test_order_search_beats_its_starts_and_returns_a_permutation():
    keys, _, labels = hida_lab.cluster_stream(40, 2, 4, seed=1)
    found = worst_order(keys, labels, 4, restarts=2, iters=3, seed=0)
    assert sorted(found.order.tolist()) == list(range(40))
    assert found.loss >= max(found.sorted_loss, found.random_loss, found.greedy_loss) - 1e-9
    again = online_losses(keys, torch.as_tensor(found.order)[None], 4)
    assert float(again[0]) == pytest.approx(found.loss)


def test_greedy_orders_start_with_their_openings_and_cover_every_key():
    keys, _, _ = hida_lab.cluster_stream(20, 2, 2, seed=2)
    openings = torch.tensor([[0, 1], [5, 7]])
    orders = greedy_orders(keys, openings)
    assert orders[:, :2].tolist() == openings.tolist()
    assert all(sorted(o.tolist()) == list(range(20)) for o in orders)


def test_order_search_refuses_short_streams():
    keys, _, labels = hida_lab.cluster_stream(4, 2, 2, seed=0)
    with pytest.raises(ValueError, match="n_summaries"):
        worst_order(keys, labels, 4)


def _gate(seed=0, width=6):
    torch.manual_seed(seed)
    g = HyperGate(width, 2, memory=False)
    torch.nn.init.normal_(g.dim.weight, std=0.5)
    return g


def test_least_slack_found_is_never_negative_weyl():
    g = _gate()
    starts = gs.search_starts(torch.randn(8, 6), 8, seed=0)
    worst = gs.min_margin(g, starts, steps=15)
    assert worst.margin >= -1e-9 and worst.margin < 0.5


def test_ratio_search_stays_in_its_ball_and_improves_on_its_starts():
    g = _gate(1)
    starts = gs.search_starts(torch.randn(8, 6), 8, seed=1)
    worst = gs.min_ratio_in_ball(g, starts, 2.0, steps=20)
    assert worst.u_norm <= 2.0 + 1e-9
    inside = starts * torch.clamp(2.0 / starts.norm(dim=-1, keepdim=True), max=1.0)
    assert worst.sigma_min <= float(gate_bound(g, inside).sigma_min.min()) + 1e-12
    with pytest.raises(ValueError, match="radius"):
        gs.min_ratio_in_ball(g, starts, 0.0)
    assert np.isfinite(worst.bound)
