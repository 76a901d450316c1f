"""Laws of the inverse-distance kernel (paper sections 2.1-2.3, 5.1, 8.1) and the multi-head layer."""

from __future__ import annotations

import pytest
import torch

from georesolver_core.attention import (
    ATTENTION,
    AttentionConfig,
    GeoAttention,
    ida,
    ida_weights,
    inverse_distance_kind,
    softmax_attention,
    softmax_weights,
)
from georesolver_core.geometry import GEOMETRIES
from tests.conftest import random_points


def test_rows_sum_to_one(geometry, dtype):
    q = random_points(geometry, 2, 6, 4, dtype=dtype, seed=1)
    k = random_points(geometry, 2, 9, 4, dtype=dtype, seed=2)
    for eps in (1e-6, 1e-2, 10.0):
        w = ida_weights(q, k, eps=eps, geometry=geometry)
        assert w.shape == (2, 6, 9)
        assert (w >= 0).all()
        torch.testing.assert_close(w.sum(-1), torch.ones(2, 6, dtype=dtype))


def test_exact_retrieval_as_eps_goes_to_zero(geometry, dtype):
    """Lemma 5.1(a): q = k_j* gives W_j* -> 1; at eps = 1e-12 it is one-hot to the precision."""
    k = random_points(geometry, 8, 3, dtype=dtype, seed=3)
    v = torch.randn(8, 5, dtype=dtype)
    w = ida_weights(k, k, eps=1e-12, geometry=geometry)
    torch.testing.assert_close(w, torch.eye(8, dtype=dtype), rtol=0, atol=1e-6)
    torch.testing.assert_close(ida(k, k, v, eps=1e-12, geometry=geometry), v, rtol=1e-5, atol=1e-5)
    # and the match weight rises monotonically as eps shrinks
    diag = [float(ida_weights(k[:1], k, eps=e, geometry=geometry)[0, 0]) for e in (1.0, 1e-1, 1e-2, 1e-4)]
    assert diag == sorted(diag)


def test_softmax_never_retrieves_exactly():
    k = random_points("euclidean", 8, 3, seed=4)
    w = softmax_weights(k, k)
    assert (w.diagonal() < 0.999).all()


def test_translation_invariance_euclidean(dtype):
    """Section 2.2: ||q - k||^2 = ||(q + t) - (k + t)||^2, so W is unchanged by a common shift."""
    q = random_points("euclidean", 5, 4, dtype=dtype, seed=5)
    k = random_points("euclidean", 7, 4, dtype=dtype, seed=6)
    t = torch.randn(4, dtype=dtype)
    rtol = dict(rtol=1e-4, atol=1e-6) if dtype == torch.float32 else {}
    torch.testing.assert_close(ida_weights(q + t, k + t, eps=0.1), ida_weights(q, k, eps=0.1), **rtol)


@pytest.mark.parametrize("lam", [0.1, 3.0, 25.0])
def test_eps_over_lambda_squared_scaling(lam, dtype):
    """Section 2.2: (lam^2 ||q-k||^2 + eps)^-1 = lam^-2 (||q-k||^2 + eps/lam^2)^-1, so W(lam q, lam k; eps) = W(q, k; eps/lam^2)."""
    q = random_points("euclidean", 5, 4, dtype=dtype, seed=7)
    k = random_points("euclidean", 7, 4, dtype=dtype, seed=8)
    rtol = dict(rtol=1e-4, atol=1e-6) if dtype == torch.float32 else {}
    torch.testing.assert_close(
        ida_weights(lam * q, lam * k, eps=0.05), ida_weights(q, k, eps=0.05 / lam**2), **rtol
    )


def test_large_eps_gives_uniform_weights(geometry):
    q = random_points(geometry, 3, 4, seed=9)
    k = random_points(geometry, 6, 4, seed=10)
    torch.testing.assert_close(
        ida_weights(q, k, eps=1e12, geometry=geometry), torch.full((3, 6), 1 / 6, dtype=torch.float64)
    )


def test_eps_at_its_bounds_stays_finite(geometry, dtype):
    k = random_points(geometry, 5, 3, dtype=dtype, seed=11)
    for eps in (1e-30, 1e30):
        w = ida_weights(k, k, eps=eps, geometry=geometry)
        assert torch.isfinite(w).all()
        torch.testing.assert_close(w.sum(-1), torch.ones(5, dtype=dtype))


def test_finite_gradients_at_q_equals_k(geometry, dtype):
    k = random_points(geometry, 6, 3, dtype=dtype, seed=12)
    q = k.clone().requires_grad_(True)
    kk = k.clone().requires_grad_(True)
    v = torch.randn(6, 2, dtype=dtype, requires_grad=True)
    for eps in (1e-6, 1e-2, 1.0):
        out = ida(q, kk, v, eps=eps, geometry=geometry)
        grads = torch.autograd.grad(out.square().sum(), (q, kk, v))
        assert all(torch.isfinite(g).all() for g in grads)


def test_ida_gradcheck_float64(geometry):
    q = random_points(geometry, 3, 3, seed=13).requires_grad_(True)
    k = random_points(geometry, 4, 3, seed=14).requires_grad_(True)
    v = torch.randn(4, 2, dtype=torch.float64, requires_grad=True)

    def f(q, k, v):
        return ida(q, k, v, eps=0.3, geometry=geometry)

    # sphere/ball points move off their manifold under gradcheck's perturbations: only where every
    # coordinate vector is a point (R^d) are q and k perturbed; every geometry perturbs v.
    if not GEOMETRIES[geometry].has_bounded_coordinates:
        assert torch.autograd.gradcheck(f, (q, k, v))
    assert torch.autograd.gradcheck(lambda v: f(q.detach(), k.detach(), v), (v,))


def test_causal_rows_see_only_the_past(geometry):
    x = random_points(geometry, 6, 3, seed=15)
    w = ida_weights(x, x, eps=0.1, geometry=geometry, causal=True)
    assert torch.equal(w.triu(1), torch.zeros_like(w))
    torch.testing.assert_close(w.sum(-1), torch.ones(6, dtype=torch.float64))
    assert float(w[0, 0]) == 1.0


def test_empty_queries_give_empty_output(geometry):
    k = random_points(geometry, 4, 3, seed=16)
    q = k[:0]
    assert ida(q, k, torch.randn(4, 2, dtype=torch.float64), eps=0.1, geometry=geometry).shape == (0, 2)


def test_softmax_attention_matches_torch_sdpa():
    q, k, v = (torch.randn(2, 3, 7, 8, dtype=torch.float64) for _ in range(3))
    for causal in (False, True):
        expected = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        torch.testing.assert_close(softmax_attention(q, k, v, causal=causal), expected)


@pytest.mark.parametrize("kernel", sorted(ATTENTION))
def test_layer_every_kernel_trains_and_respects_causality(kernel):
    torch.manual_seed(0)
    layer = GeoAttention(AttentionConfig(d_model=12, n_heads=3, kernel=kernel, causal=True)).double()
    x = torch.randn(2, 7, 12, dtype=torch.float64, requires_grad=True)
    y = layer(x)
    assert y.shape == (2, 7, 12)
    y.square().sum().backward()
    assert all(torch.isfinite(p.grad).all() for p in layer.parameters())
    # changing the last token must not change earlier outputs
    x2 = x.detach().clone()
    x2[:, -1] += 1.0
    torch.testing.assert_close(layer(x2)[:, :-1], y.detach()[:, :-1])


def test_layer_config_is_validated():
    with pytest.raises(ValueError, match="divisible"):
        AttentionConfig(d_model=10, n_heads=3)
    with pytest.raises(ValueError, match="kernel must be one of"):
        AttentionConfig(kernel="cosine")
    with pytest.raises(ValueError, match="eps"):
        AttentionConfig(eps=0.0)


def test_modules_run_the_kernel_unchecked_and_equal_the_checked_call(monkeypatch, geometry):
    """Validation happens once, at the public boundary: GeoAttention embeds its projections itself and
    calls attend_checked, which gives what attend gives, without re-checking the values."""
    from georesolver_core.attention import kernel
    from georesolver_core.attention.spec import KernelSpec

    if geometry not in {entry.geometry for entry in ATTENTION.values()}:
        pytest.skip(f"no attention entry measures in {geometry!r}: no module to run")
    kind = inverse_distance_kind(geometry)
    g = torch.Generator().manual_seed(3)
    q, k = (ATTENTION[kind].embed(torch.randn(2, 3, 70, 8, generator=g), 1.0) for _ in range(2))
    v = torch.randn(2, 3, 70, 8, generator=g)
    spec = KernelSpec(0.1, geometry)
    torch.testing.assert_close(kernel.attend_checked(q, k, v, spec), kernel.attend(q, k, v, spec))

    def refuse(*args):
        raise AssertionError("a module call re-validated its own embedded points")

    monkeypatch.setattr(kernel, "_check_values", refuse)
    layer = GeoAttention(AttentionConfig(d_model=24, n_heads=3, kernel=kind, causal=True))
    assert layer(torch.randn(2, 70, 24, generator=g)).shape == (2, 70, 24)
