"""Laws of dyadic Hankel attention (seed 004): rank rule, decay, factorised = dense within eps, edges."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from georesolver_core.claims import CLAIMS
from georesolver_core.claims.hankel_claims import measure_decay, measure_rank
from georesolver_core.extras.hankel import (
    DyadicHankelAttention,
    HankelConfig,
    block_factors,
    block_singular_values,
    boundary_distances,
    cross_apply,
    dense_cross_apply,
    dyadic_blocks,
    factors_cache_info,
    observed_rank,
)
from georesolver_core.extras.hankel_measure import decay_sweep, kernel_view, rank_sweep, speedup_sweep
from georesolver_core.theory.hankel import rank_rule, singular_value_bound
from georesolver_core.viz.hankel import decay_figure, error_figure, kernel_figure, rank_figure, speed_figure


def test_rank_rule_matches_the_seed():
    assert [rank_rule(e) for e in (1e-2, 1e-3, 1e-4)] == [4, 5, 7]
    assert rank_rule(0.25) == 1 and rank_rule(4.0**-3) == 3


@pytest.mark.parametrize("eps", [0.0, 1.0, -0.1, 2.0, float("nan"), float("inf")])
def test_eps_outside_the_unit_interval_is_rejected(eps):
    with pytest.raises(ValueError, match="eps"):
        rank_rule(eps)
    with pytest.raises(ValueError, match="eps"):
        cross_apply(torch.ones(3), torch.ones(4), torch.ones(4, 2), eps=eps)


def test_bad_split_and_scale_are_rejected_by_name():
    for split in (0, 10, -1, 2.5):
        with pytest.raises(ValueError, match="split"):
            boundary_distances(10, split)
    for h in (0.5, 0.0, -4.0, float("nan")):
        with pytest.raises(ValueError, match="h"):
            block_singular_values(h, 8)
    with pytest.raises(ValueError, match="h0"):
        dyadic_blocks(torch.arange(10.0) + 1, 0.5)


def test_dyadic_blocks_tile_the_keys():
    _, r = boundary_distances(200, 50)
    blocks = dyadic_blocks(r, 4.0)
    assert blocks[0] == (0, 3, 0.0)  # r = 1, 2, 3 < h0: the dense boundary layer
    assert [b[2] for b in blocks[1:]] == [4.0, 8.0, 16.0, 32.0, 64.0, 128.0]
    assert all(a[1] == b[0] for a, b in zip(blocks, blocks[1:], strict=False)) and blocks[-1][1] == r.numel()
    for start, stop, h in blocks[1:]:
        assert h <= float(r[start]) and float(r[stop - 1]) < 2 * h


def test_normalised_singular_values_within_four_to_the_minus_n():
    decay = decay_sweep([4, 8, 16, 64, 256], top=10)
    for sv in decay.normalised():
        assert all(np.asarray(sv) <= singular_value_bound(np.arange(1, 11)) * (1 + 1e-9))
    for sv in decay.singular_values:  # unnormalised, with K's 1/(2 pi)
        assert all(np.asarray(sv) / (2 * np.pi) <= singular_value_bound(np.arange(1, 11)))
    ranks = rank_sweep([1e-2, 1e-3, 1e-4], decay)
    assert [max(r) for r in ranks.observed] == [2, 3, 3]  # the seed's observed ranks
    assert [r[1:] for r in ranks.observed] == [[2] * 4, [3] * 4, [3] * 4]  # the same for every h >= 8
    assert all(max(o) <= rule for o, rule in zip(ranks.observed, ranks.rule, strict=True))


def test_randomized_svd_agrees_with_the_full_one():
    s = 2.0 + torch.arange(600, dtype=torch.float64)
    r = 150.0 + torch.arange(150, dtype=torch.float64)
    full = torch.linalg.svdvals(1 / (s[:, None] + r[None, :])).numpy()[:6]
    fast = block_singular_values(150, 600, top=6)
    np.testing.assert_allclose(fast, full, rtol=1e-8)
    assert observed_rank(fast, 0.5) == 1


@pytest.mark.parametrize("eps", [1e-2, 1e-4])
def test_factorised_cross_block_equals_dense_within_eps(eps, dtype):
    s, r = boundary_distances(400, 150)
    x = torch.randn(2, r.numel(), 5, generator=torch.Generator().manual_seed(0), dtype=torch.float64).to(dtype)
    dense = dense_cross_apply(s.to(dtype), r.to(dtype), x)
    fac = cross_apply(s, r, x, eps=eps, h0=4.0)
    assert fac.shape == dense.shape == (2, 150, 5)
    assert float((fac - dense).norm() / dense.norm()) <= eps
    before = factors_cache_info().hits
    cross_apply(s, r, x, eps=eps, h0=4.0)
    assert factors_cache_info().hits > before  # the second call reuses every block's factors


def test_layer_matches_its_dense_reference_and_trains():
    layer = DyadicHankelAttention(HankelConfig(d_model=8, split=40, eps=1e-4)).double()
    x = torch.randn(2, 100, 8, dtype=torch.float64, requires_grad=True)
    y, y_dense = layer(x), layer(x, dense=True)
    assert y.shape == (2, 100, 8)
    assert float((y - y_dense).detach().norm() / y_dense.detach().norm()) < 1e-4
    y.square().sum().backward()
    assert torch.isfinite(x.grad).all() and layer.gate.grad is not None


def test_block_factors_reconstruct_the_block():
    s = 2.0 + torch.arange(64, dtype=torch.float64)
    r = 16.0 + torch.arange(16, dtype=torch.float64)
    u, v = block_factors(s, r, 5, torch.float64)
    h = 1 / (s[:, None] + r[None, :])
    assert u.shape == (64, 5) and v.shape == (16, 5)
    sv = torch.linalg.svdvals(h)
    assert float(torch.linalg.matrix_norm(h - u @ v.T, ord=2)) == pytest.approx(float(sv[5]), rel=1e-6)


def test_speedup_sweep_and_figures(one_thread):
    sp = speedup_sweep([32, 256], rank=4, repeats=1)
    assert sp.threads == 1 and len(sp.speedup) == 2 and max(sp.error) < 1e-3
    assert len(speed_figure(sp).data) == 2
    view = kernel_view(64, 16, 4.0)
    assert view.kernel.shape == (16, 48)
    assert len(kernel_figure(view).layout.shapes) == len(view.blocks)
    decay = decay_sweep([4, 8], top=6)
    assert len(decay_figure(decay).data) == 3 and len(decay_figure(decay, normalised=False).data) == 3
    assert len(rank_figure(rank_sweep([1e-2, 1e-3], decay)).data) == 3
    assert error_figure([4, 8], [1e-6, 1e-6], 1e-3, "t").layout.yaxis.type == "log"


def test_hankel_claims_are_registered_and_hold():
    assert {k for k, c in CLAIMS.items() if c.page == "hankel"} == {
        "hankel-sv-decay",
        "hankel-rank-rule",
        "hankel-output-error",
        "hankel-rank4-error",
        "hankel-speedup",
        "hankel-observed-ranks",
        # seed 004's statements, registered with the other statement claims, shown on their topic page
        "hankel-kyfan-piece",
        "hankel-plunge",
        "hankel-active-scales",
        "hankel-null-benchmark",
    }
    for measure in (measure_decay, measure_rank):
        ev = measure(True)
        assert ev.verdict == "holds", ev.summary
