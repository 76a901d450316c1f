"""Laws of the HIDA family: FP-HIDA, L-HIDA and C-HIDA are Dense-HIDA when their index set is every key;
gradients stay finite at q = k and at the rim; the FP pattern is the set of section 5.4; bad input is named."""

from __future__ import annotations

import math

import pytest
import torch

from georesolver_core.attention import CHIDA, fp_hida, l_hida
from georesolver_core.attention.c_hida import two_point_midpoint
from georesolver_core.attention.fp_hida import fp_index, fp_index_size_bound, fp_stats
from georesolver_core.attention.gathered import gathered_ida
from georesolver_core.attention.l_hida import gyro_midpoints, hyperbolic_kmeans, l_hida_nystrom
from georesolver_core.attention.reference import reference_ida
from georesolver_core.attention.spec import ALL_KEYS, CAUSAL, Gathered, KernelSpec
from georesolver_core.geometry import ball
from tests.conftest import random_points, tol

F64 = torch.float64


def _qkv(n=12, d=4, dv=3, batch=(2, 2), dtype=F64, seed=0, grad=True):
    q = random_points("poincare", *batch, n, d, dtype=dtype, seed=seed)
    k = random_points("poincare", *batch, n, d, dtype=dtype, seed=seed + 1)
    v = torch.randn(*batch, n, dv, generator=torch.Generator().manual_seed(seed + 2), dtype=dtype)
    return [t.requires_grad_(grad) for t in (q, k, v)]


def _dense(q, k, v, causal=False):
    return reference_ida(q, k, v, KernelSpec(0.1, "poincare", keys=CAUSAL if causal else ALL_KEYS))


def _assert_same_values_and_grads(fn, q, k, v, causal, dtype=F64):
    o, r = fn(q, k, v), _dense(q, k, v, causal)
    torch.testing.assert_close(o, r, **tol(dtype))
    w = torch.randn_like(o)
    g1 = torch.autograd.grad((o * w).sum() + o.square().sum(), (q, k, v))
    g2 = torch.autograd.grad((r * w).sum() + r.square().sum(), (q, k, v))
    for a, b in zip(g1, g2, strict=True):
        torch.testing.assert_close(a, b, **tol(dtype))


# --- all keys: each variant is Dense-HIDA -------------------------------------------------------


@pytest.mark.parametrize("causal", [False, True])
def test_fp_hida_with_a_window_over_everything_is_dense_hida(causal, dtype):
    q, k, v = _qkv(dtype=dtype)
    _assert_same_values_and_grads(
        lambda q, k, v: fp_hida(q, k, v, eps=0.1, window=12, causal=causal), q, k, v, causal, dtype
    )


@pytest.mark.parametrize("causal", [False, True])
def test_l_hida_with_n_anchors_at_the_keys_is_dense_hida(causal):
    q, k, v = _qkv()
    # anchors = the keys themselves (so key gradients also flow through the anchors, as in Dense-HIDA);
    # eps_anchor -> 0 makes the aggregation W^KA the identity.
    fn = lambda q, k, v: l_hida(q, k, v, k, eps=0.1, eps_anchor=1e-30, causal=causal)  # noqa: E731
    _assert_same_values_and_grads(fn, q, k, v, causal)


def test_l_hida_aggregation_error_vanishes_as_eps_anchor_goes_to_zero():
    q, k, v = _qkv(grad=False)
    errs = [
        float((l_hida(q, k, v, k, eps=0.1, eps_anchor=e) - _dense(q, k, v)).abs().max())
        for e in (1e-1, 1e-3, 1e-6)
    ]
    assert errs[0] > errs[1] > errs[2] and errs[2] < 1e-4


def test_c_hida_with_one_summary_per_token_is_causal_dense_hida():
    q, k, v = _qkv(batch=(3,))
    _assert_same_values_and_grads(lambda q, k, v: CHIDA(12, 4, eps=0.1)(q, k, v), q, k, v, True)


def test_counts_are_multiplicities_a_key_counted_twice_equals_the_key_duplicated():
    q, k, v = _qkv(n=6, batch=(), grad=False)
    counts = torch.tensor([2.0, 1, 1, 3, 1, 1], dtype=F64)
    index = torch.arange(6).expand(6, 6)
    out = gathered_ida(q, k, v, KernelSpec(eps=0.1, geometry="poincare", keys=Gathered(index), counts=counts))
    rep = torch.repeat_interleave(torch.arange(6), counts.long())
    torch.testing.assert_close(out, _dense(q, k[rep], v[rep]), **tol(F64))


# --- gradients at q = k, near the rim, gradcheck ------------------------------------------------

_VARIANTS = {
    "fp": lambda q, k, v: fp_hida(q, k, v, eps=1e-3, window=1, n_global=2),
    "fp-causal": lambda q, k, v: fp_hida(q, k, v, eps=1e-3, window=1, n_global=2, causal=True),
    "l": lambda q, k, v: l_hida(q, k, v, k[..., ::3, :], eps=1e-3),
    "l-causal": lambda q, k, v: l_hida(q, k, v, k[..., ::3, :], eps=1e-3, causal=True),
    "l-nystrom": lambda q, k, v: l_hida_nystrom(q, k, v, k[..., ::3, :], eps=1e-3),
    "c": lambda q, k, v: CHIDA(3, q.shape[-1], eps=1e-3)(q, k, v),
}


@pytest.mark.parametrize("variant", sorted(_VARIANTS))
@pytest.mark.parametrize("radius", [0.5, 0.999])
def test_gradients_are_finite_at_q_equal_k_and_near_the_rim(variant, radius, dtype):
    _, k, v = _qkv(n=9, batch=(2,), dtype=dtype, grad=False)
    k = k / k.norm(dim=-1, keepdim=True) * radius  # every key at the radius
    q = k.clone().requires_grad_()  # q_i = k_i: d = 0 exactly
    k.requires_grad_()
    v.requires_grad_()
    out = _VARIANTS[variant](q, k, v)
    grads = torch.autograd.grad(out.square().sum(), (q, k, v))
    assert torch.isfinite(out).all()
    assert all(torch.isfinite(g).all() for g in grads)


@pytest.mark.parametrize("variant", sorted(_VARIANTS))
def test_gradcheck_on_small_inputs(variant):
    q, k, v = _qkv(n=5 if variant == "c" else 7, d=3, dv=2, batch=(1,))
    fn = _VARIANTS[variant]
    if variant == "l-nystrom":  # the pseudo-inverse's gradient needs a well-conditioned K_aa
        fn = lambda q, k, v: l_hida_nystrom(q, k, v, k[..., ::3, :], eps=0.5)  # noqa: E731
    assert torch.autograd.gradcheck(fn, (q, k, v))


# --- the pattern of Theorem 5.4 -----------------------------------------------------------------


def _brute_force_pattern(n, w, g, causal):
    L = math.ceil(math.log2(n)) if n > 1 else 0
    rows = []
    for i in range(n):
        s = {j for j in range(n) if abs(i - j) <= w} | {(t * n) // g for t in range(g)} | {i}
        s |= {i + 2**kk for kk in range(L + 1)} | {i - 2**kk for kk in range(L + 1)}
        rows.append({j for j in s if 0 <= j < n and (not causal or j <= i)})
    return rows


@pytest.mark.parametrize("n", [1, 2, 37, 64])
@pytest.mark.parametrize("causal", [False, True])
def test_fp_index_is_the_set_of_section_5_4_and_within_its_size_bound(n, causal):
    w, g = 3, min(n, 5)
    index = fp_index(n, window=w, n_global=g, causal=causal).index
    for i, expected in enumerate(_brute_force_pattern(n, w, g, causal)):
        row = [int(j) for j in index[i] if j >= 0]
        assert len(row) == len(set(row)) and set(row) == expected
    stats = fp_stats(n, window=w, n_global=g, causal=causal)
    assert stats.max_size <= fp_index_size_bound(n, w, g) == stats.bound
    assert 0 < stats.work_fraction <= 1


def test_fp_stats_default_pattern_grows_like_log_n():
    small, large = fp_stats(1024), fp_stats(32768)
    assert small.window == 10 and large.window == 15
    assert large.mean_size / small.mean_size < 2.0  # n grew 32x
    assert large.work_fraction < 0.003


# --- geoopt midpoints ---------------------------------------------------------------------------


def test_midpoints_are_geoopt_weighted_midpoints():
    x = random_points("poincare", 20, 3, seed=3)
    w = torch.rand(4, 20, generator=torch.Generator().manual_seed(0), dtype=F64)
    expected = torch.stack([ball(1.0).weighted_midpoint(x, w[i], reducedim=[0]) for i in range(4)])
    torch.testing.assert_close(gyro_midpoints(x, w), expected, rtol=1e-8, atol=1e-9)
    a, b, n = x[:5], x[5:10], torch.arange(1.0, 6.0, dtype=F64).unsqueeze(1)
    den = lambda z: 1 - z.square().sum(-1, keepdim=True)  # noqa: E731
    expected = ball(1.0).weighted_midpoint(
        torch.stack([a, b], 1), torch.cat([n, torch.ones_like(n)], 1), reducedim=[1]
    )
    torch.testing.assert_close(two_point_midpoint(a, n, b, den(a), den(b), 1.0), expected, rtol=1e-8, atol=1e-9)


def test_hyperbolic_kmeans_finds_separated_clusters():
    centres = torch.tensor([[0.6, 0.0], [-0.6, 0.0], [0.0, 0.6]], dtype=F64)
    g = torch.Generator().manual_seed(0)
    x = (centres.repeat(30, 1) + 0.02 * torch.randn(90, 2, generator=g, dtype=F64)).clamp(-0.9, 0.9)
    found, labels = hyperbolic_kmeans(x, 3, generator=torch.Generator().manual_seed(1))
    assert torch.cdist(found, centres).min(0).values.max() < 0.05
    assert labels.bincount().tolist() == [30, 30, 30]


def test_c_hida_regret_is_the_running_sum_of_the_online_loss():
    q, k, v = _qkv(n=30, batch=(2,), grad=False)
    m = CHIDA(4, 4, eps=0.1)
    m(q, k, v, record=True)
    assert (m.online_loss[:, :4] == 0).all() and (m.online_loss[:, 4:] > 0).all()
    torch.testing.assert_close(m.running_regret, m.online_loss.cumsum(1))
    assert m.counts.sum(-1).tolist() == [30.0, 30.0]
    assert m.history.shape == (30, 2, 4, 4) and torch.isnan(m.history[0, :, 1:]).all()


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda q, k, v: fp_hida(q, k, v, eps=0.1, window=0), "window"),
        (lambda q, k, v: fp_hida(q, k, v, eps=0.1, n_global=0), "n_global"),
        (lambda q, k, v: fp_hida(q, k, v, eps=0.1, n_global=13), "n_global"),
        (lambda q, k, v: fp_hida(q, k, v, eps=0.0), "eps"),
        (lambda q, k, v: fp_hida(q, k[..., :5, :], v, eps=0.1), "k and v must have n"),
        (lambda q, k, v: fp_hida(q * torch.nan, k, v, eps=0.1), "q must be finite"),
        (lambda q, k, v: l_hida(q, k, v, k * 10, eps=0.1), "anchors must lie inside"),
        (lambda q, k, v: l_hida(q, k, v, k[..., :0, :], eps=0.1), "anchors"),
        (lambda q, k, v: l_hida(q, k, v * math.inf, k, eps=0.1), "v must be finite"),
        (lambda q, k, v: l_hida(q, k, v, k, eps=0.1, c=-1.0), "c must be"),
        (lambda q, k, v: hyperbolic_kmeans(k[0, 0], 13), "m must be"),
        (lambda q, k, v: hyperbolic_kmeans(k[0, 0], 0), "m must be"),
        (lambda q, k, v: CHIDA(0, 4, eps=0.1), "n_summaries"),
        (lambda q, k, v: CHIDA(2, 4, eps=0.1)(q[0], k[0] * 10, v[0]), "k must lie inside"),
        (lambda q, k, v: CHIDA(2, 5, eps=0.1)(q[0], k[0], v[0]), "dim"),
        (lambda q, k, v: CHIDA(2, 4, eps=0.1)(q[0, :, :0], k[0, :, :0], v[0, :, :0]), "T = 0"),
    ],
)
def test_bad_input_is_named(call, match):
    q, k, v = _qkv(grad=False)
    with pytest.raises(ValueError, match=match):
        call(q, k, v)
