"""Distributed GSR over 2 gloo processes equals single-process GSR; a dead worker fails fast, clearly."""

from __future__ import annotations

import time

import pytest

from georesolver_core.routing import capacity_of
from georesolver_core.routing.distributed import PROTOCOLS, DistConfig, run_distributed


def test_two_gloo_workers_equal_single_process_gsr_and_traffic_is_counted():
    cfg = DistConfig(
        world_size=2,
        n_pool=8,
        dim=8,
        k=2,
        hidden=8,
        batch_sizes=(16, 64),
        dtype="float64",
        backend="gloo",
        timeout_s=60,
    )
    res = run_distributed(cfg)
    for proto in ("gsr-candidates", "gsr-prototypes", "a2a-dropless"):
        assert res.same_indices[proto], proto
    # GSR sums the K outputs in the same order as the single process: bit-identical outputs
    assert res.max_abs_diff["gsr-candidates"] == 0.0 and res.max_abs_diff["gsr-prototypes"] == 0.0
    assert res.max_abs_diff["a2a-dropless"] < 1e-12
    rows = {(r.protocol, r.batch): r for r in res.rows}
    assert set(p for p, _ in rows) == set(PROTOCOLS)
    for b in (16, 64):
        # counted, not modelled: queries and outputs are B/P x dim float64 blocks to the one peer, each way
        cand = rows["gsr-candidates", b]
        assert cand.phases["queries"] == {"bytes": 2 * (b // 2) * 8 * 8, "messages": 2}
        assert cand.phases["candidates"]["bytes"] == 2 * b * 2 * 2 * 8  # B x K (score, index) pairs per rank
        assert rows["gsr-prototypes", b].phases["prototypes"]["bytes"] == 8 * 8 * 8  # K_pool x d, independent of B
        assert rows["a2a-switch", b].messages == 4  # dispatch + combine, P(P-1) each
        # capacity-padded buffers: E/P x C x dim per peer, dispatch and combine, on both ranks
        cap = capacity_of(b // 2, 8, 2, cfg.capacity_factor)
        assert rows["a2a-switch", b].bytes == 2 * 2 * 4 * cap * 8 * 8


def test_a_dead_worker_fails_with_a_clear_message_instead_of_hanging():
    cfg = DistConfig(
        world_size=2, n_pool=4, dim=4, k=1, hidden=4, batch_sizes=(4,), backend="gloo", timeout_s=30, fail_rank=1
    )
    t0 = time.perf_counter()
    with pytest.raises(RuntimeError, match="worker rank 1 exited with code 3"):
        run_distributed(cfg)
    assert time.perf_counter() - t0 < 120


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(world_size=0), "world_size must be"),
        (dict(world_size=3, n_pool=64), "n_pool .* divisible"),
        (dict(k=0), "k must be"),
        (dict(eps=0.0), "eps must be"),
        (dict(batch_sizes=(63,)), "divisible by world_size"),
        (dict(backend="mpi"), "backend must be"),
    ],
)
def test_bad_distributed_config_raises(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DistConfig(**kwargs)
