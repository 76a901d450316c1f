"""The worst-input searches behind Lemma 1 and Theorem 1: closed-form Jacobians agree with autograd, the
ascent beats probes and stays under the proven bounds, the Hamming-shell code is the optimal +-1 design,
the Hadamard code retrieves every key; Lemma 2's Hessian at both points, with the gradient there."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

from georesolver_core.attention import softmax_weights
from georesolver_core.attention.layer import KERNEL_CHOICES
from georesolver_core.claims import attention_search as search
from georesolver_core.claims import run_claim
from georesolver_core.labs.lipschitz import lipschitz_probe_queries, query_jacobian_norms
from georesolver_core.labs.samplers import clustered_points, random_points
from georesolver_core.landscape.hessian import hessian_spectrum
from georesolver_core.theory import attention as th

F64 = torch.float64
DELTA = 0.01


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


@pytest.mark.parametrize("kernel", list(KERNEL_CHOICES))
@pytest.mark.parametrize("eps", [1e-3, 1e-1])
def test_closed_form_jacobian_matches_autograd(kernel, eps):
    g = _gen()
    k = random_points(12, 5, generator=g)
    v = torch.randn(12, 3, generator=g, dtype=F64)
    q = torch.cat([k[:3], k[:3] + 0.01, torch.randn(4, 5, generator=g, dtype=F64)])  # on, near and off the keys
    ours = search.jacobian_norms(q, k, v, kernel=kernel, eps=eps)
    ref = query_jacobian_norms(q, k, v, kernel=kernel, eps=eps)
    torch.testing.assert_close(ours, ref, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("kernel", list(KERNEL_CHOICES))
def test_ascent_beats_its_starts_and_stays_under_the_proven_bounds(kernel):
    eps, g = 1e-2, _gen()
    k = random_points(32, 6, generator=g)
    v = torch.randn(32, 6, generator=g, dtype=F64)
    probes = lipschitz_probe_queries(k, eps=eps, n_random=8, n_near=8, generator=g)
    probed = float(search.jacobian_norms(probes, k, v, kernel=kernel, eps=eps).max())
    best, qs = search.max_jacobian_norm(
        k, v, kernel=kernel, eps=eps, ascent=search.Ascent(steps=40, lr=0.3), more_starts=probes
    )
    assert best >= probed  # the probes are starts: the search never reports less
    assert best == pytest.approx(float(search.jacobian_norms(qs, k, v, kernel=kernel, eps=eps).max()))
    v_max, k_max = float(v.norm(dim=-1).max()), float(k.norm(dim=-1).max())
    sharp = (
        th.lipschitz_ida_sharp_bound(eps, v_max)
        if kernel == "ida"
        else th.lipschitz_softmax_sharp_bound(6, v_max, k_max)
    )
    assert best <= sharp * (1 + 1e-9)  # our derivations hold at the worst query found


def test_ascent_finds_more_than_random_probes_on_clustered_keys():
    eps, g = 1e-3, _gen(2)
    k = clustered_points(64, 8, cluster_spread=0.05, generator=g)
    v = torch.randn(64, 8, generator=g, dtype=F64)
    probes = lipschitz_probe_queries(k, eps=eps, n_random=16, n_near=16, generator=g)
    probed = float(search.jacobian_norms(probes, k, v, kernel="ida", eps=eps).max())
    best, _ = search.max_jacobian_norm(k, v, kernel="ida", eps=eps, ascent=search.Ascent(steps=40, lr=0.3))
    assert best > 1.2 * probed


def test_search_refuses_bad_arguments():
    k, v = torch.zeros(3, 2, dtype=F64), torch.zeros(3, 2, dtype=F64)
    with pytest.raises(ValueError, match="kernel"):
        search.max_jacobian_norm(k, v, kernel="flash")
    with pytest.raises(ValueError, match="eps"):
        search.max_jacobian_norm(k, v, kernel="ida", eps=0.0)
    with pytest.raises(ValueError, match="steps"):
        search.Ascent(steps=-1)
    with pytest.raises(ValueError, match="delta"):
        search.shell_code_min_width(8, delta=0.9)


@pytest.mark.parametrize("n", [4, 16, 64])
def test_shell_code_reaches_the_target_exactly_at_its_width(n):
    d = search.shell_code_min_width(n, delta=DELTA)
    keys = search.shell_code_keys(n, d)
    assert len({tuple(r.tolist()) for r in keys}) == n  # distinct +-1 keys
    assert float(softmax_weights(keys[:1], keys)[0, 0]) >= 1 - DELTA
    narrower = search.shell_code_keys(n, d - 1)
    assert float(softmax_weights(narrower[:1], narrower)[0, 0]) < 1 - DELTA
    assert d >= th.softmax_width_lower_bound_bounded(n, DELTA)  # no design beats the bound


@pytest.mark.parametrize("n,d", [(3, 3), (4, 3), (5, 4), (6, 4)])
def test_shell_code_is_the_best_design_of_distinct_sign_keys(n, d):
    """Brute force over every set of n - 1 distinct +-1 words besides k_1 = (1, ..., 1)."""
    words = [torch.tensor(w, dtype=F64) for w in itertools.product([-1.0, 1.0], repeat=d)]
    ones = torch.ones(d, dtype=F64)
    others = [w for w in words if not torch.equal(w, ones)]
    best = math.inf
    for chosen in itertools.combinations(others, n - 1):
        gaps = torch.stack([(ones @ (ones - w)) / math.sqrt(d) for w in chosen])
        best = min(best, float(torch.logsumexp(-gaps, 0)))
    assert search.shell_code_log_leak(n, d) == pytest.approx(best, rel=1e-12)


@pytest.mark.parametrize("n", [4, 8, 16])
def test_hadamard_code_retrieves_every_key_and_respects_the_all_keys_bound(n):
    d = search.hadamard_code_min_width(n, delta=DELTA)
    keys = search.hadamard_code_keys(n, d)
    assert len({tuple(r.tolist()) for r in keys}) == n
    assert float(softmax_weights(keys, keys).diagonal().min()) >= 1 - DELTA
    assert d >= th.softmax_width_lower_bound_all_keys(n, DELTA)


def test_all_keys_bound_is_not_beaten_by_random_codes():
    n = 16
    d = int(math.floor(th.softmax_width_lower_bound_all_keys(n, DELTA)))  # just below the bound
    for seed in range(5):
        keys = torch.randint(0, 2, (n, d), generator=_gen(seed)).to(F64) * 2 - 1
        assert float(softmax_weights(keys, keys).diagonal().min()) < 1 - DELTA


@pytest.mark.parametrize("kernel", list(KERNEL_CHOICES))
def test_hessian_at_both_points_reports_the_gradient(kernel):
    eq = hessian_spectrum(8, kernel=kernel, point="equidistant")
    tgt = hessian_spectrum(8, kernel=kernel, point="target")
    assert eq.point == "equidistant" and tgt.point == "target"
    assert eq.grad_norm > 1e-4  # q_0 is not a critical point: moving towards k_1 lowers the loss
    assert math.isfinite(tgt.grad_norm) and tgt.curvature > 0
    with pytest.raises(ValueError, match="point"):
        hessian_spectrum(8, kernel=kernel, point="middle")


def test_ida_target_point_is_nearly_critical_as_eps_falls():
    grads = [hessian_spectrum(8, kernel="ida", point="target", eps=e).grad_norm for e in (1e-2, 1e-4)]
    assert grads[1] < grads[0] / 50  # the leak, and with it the gradient, scales like eps


def test_lemma2_summary_calls_nothing_a_saddle_where_the_gradient_is_not_zero():
    r = run_claim("lemma2-hessian-spread", quick=True)
    assert "saddle" not in r["summary"] or "critical point and a saddle" in r["summary"]
    assert "not a critical point" in r["summary"]
    assert {"IDA at the target key q = k_1", "softmax at q_0 (flat directions excluded)"} <= set(r["extra"])
    spread = np.array(r["extra"]["IDA at the target key q = k_1"])
    assert (spread < 2).all()  # at the paper's point the spread is Theta(1)
