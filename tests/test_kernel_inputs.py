"""Inputs at the edges of what the kernels and geometry accept: each one either works correctly or is
refused with a ValueError that names the argument (never NaN, a raw torch error, or a silent
O(T^2) allocation). Also: worker threads under inference mode, and overlapping single-thread blocks.
"""

import threading

import pytest
import torch

from georesolver_core.attention import (
    AttentionConfig,
    GeoAttention,
    ida,
    ida_weights,
    ida_weights_from_sq,
    softmax_attention,
    softmax_weights,
)
from georesolver_core.attention.kernel import REFERENCE_MAX_PAIRS
from georesolver_core.device import one_cpu_thread, set_process_threads
from georesolver_core.geometry import GEOMETRIES, embed, pairwise_sq_distance, stereographic_map, to_ball
from georesolver_core.validate import C_MAX, C_MIN


@pytest.fixture
def two_threads():
    before = torch.get_num_threads()
    set_process_threads(2)
    yield
    set_process_threads(before)


@pytest.mark.parametrize("geometry", list(GEOMETRIES))
def test_ida_under_inference_mode_with_worker_threads(two_threads, geometry):
    g = torch.Generator().manual_seed(0)
    q, k = (embed(torch.randn(2, 64, 8, generator=g), geometry=geometry) for _ in range(2))  # 64 x 64 pairs: fused
    v = torch.randn(2, 64, 4, generator=g)
    expected = ida(q, k, v, eps=0.1, geometry=geometry)
    with torch.inference_mode():
        out = ida(q, k, v, eps=0.1, geometry=geometry)
        W = ida_weights(q, k, eps=0.1, geometry=geometry)
    assert torch.allclose(out, expected, atol=1e-6)
    assert torch.allclose(W.sum(-1), torch.ones(2, 64), atol=1e-5)


def test_geo_attention_under_inference_mode(two_threads):
    layer = GeoAttention(AttentionConfig(d_model=16, n_heads=2, kernel="hida"))
    x = torch.randn(2, 64, 16, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        expected = layer(x)
    with torch.inference_mode():
        assert torch.allclose(layer(x), expected, atol=1e-6)


def test_overlapping_single_thread_blocks_restore_the_thread_count(two_threads):
    """User A enters, user B (a thread started inside A's block) enters, A leaves, B leaves: later
    threads must start with the count from before, not 1."""
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()

    def user_a():
        with one_cpu_thread():
            a_in.set()
            b_in.wait(10)
        a_out.set()

    def user_b():
        with one_cpu_thread():
            b_in.set()
            a_out.wait(10)

    ta = threading.Thread(target=user_a)
    ta.start()
    a_in.wait(10)
    tb = threading.Thread(target=user_b)
    tb.start()
    ta.join(10)
    tb.join(10)
    seen = []
    later = threading.Thread(target=lambda: seen.append(torch.get_num_threads()))
    later.start()
    later.join()
    assert seen == [2] and torch.get_num_threads() == 2


def test_nested_single_thread_blocks_stay_single_threaded(two_threads):
    with one_cpu_thread():
        with one_cpu_thread():
            pass
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == 2


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("impl", ["auto", "reference"])
def test_half_precision_is_refused(dtype, impl):
    q = torch.randn(1, 8, 4).to(dtype)
    with pytest.raises(ValueError, match="must be float32 or float64"):
        ida(q, q, q, eps=1e-10, impl=impl)
    with pytest.raises(ValueError, match="must be float32 or float64"):
        ida_weights(q, q, eps=1e5, impl=impl)


def test_mixed_dtypes_and_batch_shapes_are_refused_by_name():
    q = torch.randn(2, 5, 3)
    with pytest.raises(ValueError, match="share one dtype"):
        ida(q, q.double(), q, eps=0.1)
    with pytest.raises(ValueError, match="share one dtype"):
        ida(q, q, q.double(), eps=0.1)
    with pytest.raises(ValueError, match=r"batch\) dims must broadcast"):
        ida(q, q, torch.randn(3, 5, 4), eps=0.1)
    with pytest.raises(ValueError, match=r"batch\) dims must broadcast"):
        ida(q, torch.randn(3, 5, 3), torch.randn(3, 5, 4), eps=0.1)


@pytest.mark.parametrize("impl", ["auto", "fused", "reference"])
def test_huge_coordinates_are_refused_in_float32_and_exact_in_float64(impl):
    q = torch.randn(1, 64, 4, generator=torch.Generator().manual_seed(2)) * 1e19
    v = torch.randn(1, 64, 3)
    with pytest.raises(ValueError, match="q must have coordinates of size"):
        ida(q, q.flip(1), v, eps=0.1, impl=impl)
    q64, v64 = q.double(), v.double()
    out = ida(q64, q64.flip(1), v64, eps=0.1, impl=impl)
    ref = ida(q64, q64.flip(1), v64, eps=0.1, impl="reference")
    assert torch.isfinite(out).all() and torch.allclose(out, ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_huge_coordinates_map_into_the_ball_and_onto_the_sphere(dtype):
    big = torch.finfo(dtype).max / 4
    z = torch.tensor([[1e19, -2e19, 0.0], [big, big, 0.0], [0.0, 0.0, 0.0]], dtype=dtype)
    x = to_ball(z)
    assert torch.allclose(x[:2].norm(dim=-1), torch.full((2,), 0.9, dtype=dtype))  # not the origin
    assert torch.allclose(x[0], 0.9 * z[0] / z[0].double().norm().to(dtype), atol=1e-6)
    s = stereographic_map(z)
    assert torch.isfinite(s).all()
    assert torch.allclose(s.norm(dim=-1), torch.ones(3, dtype=dtype))
    assert torch.allclose(s[:2, -1], -torch.ones(2, dtype=dtype))  # far away: the south pole
    assert torch.equal(s[2], torch.tensor([0.0, 0.0, 0.0, 1.0], dtype=dtype))  # the origin: the north pole


def test_stereographic_map_is_smooth_across_the_unit_sphere():
    c = torch.tensor([[0.6, 0.8], [0.3, -0.2], [3.0, 4.0]], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(stereographic_map, (c,))


def test_softmax_causal_with_more_queries_than_keys_gives_zero_rows():
    q = torch.randn(7, 4, requires_grad=True)
    k = torch.randn(3, 4, requires_grad=True)
    v = torch.randn(3, 2)
    W = softmax_weights(q, k, causal=True)
    assert torch.isfinite(W).all()
    assert W[:4].abs().max() == 0  # queries 0..3 see no key (j <= i + m - n = i - 4)
    assert torch.allclose(W[4:].sum(-1), torch.ones(3))
    out = softmax_attention(q, k, v, causal=True)
    out.square().sum().backward()
    assert torch.isfinite(q.grad).all() and torch.isfinite(k.grad).all()
    assert out[:4].abs().max() == 0
    assert torch.equal(ida(q.detach(), k.detach(), v, eps=0.1, causal=True)[:4], out[:4].detach())


@pytest.mark.parametrize("geometry", list(GEOMETRIES))
def test_second_derivative_of_the_squared_distance_at_q_equal_k(geometry):
    """Hess_q d(q, k)^2 at q = k: 2 lambda^2 I in the ball (lambda = 2 / (1 - c|k|^2)), 2 I on the sphere and in
    the plane (in ambient coordinates). Squaring a distance whose gradient is set to 0 at q = k gives 0."""
    g = torch.Generator().manual_seed(3)
    k = embed(torch.randn(1, 3, generator=g, dtype=torch.float64), geometry=geometry, c=0.7)
    hess = torch.autograd.functional.hessian(
        lambda q: pairwise_sq_distance(q, k, geometry=geometry, c=0.7, validate=False).sum(), k.clone()
    ).reshape(3, 3)
    lam_sq = float(GEOMETRIES[geometry].conformal_factor(k[0], 0.7)) ** 2  # the metric's factor at k
    assert torch.allclose(hess, 2.0 * lam_sq * torch.eye(3, dtype=torch.float64), rtol=1e-9, atol=1e-9)
    keys = torch.cat([k, embed(torch.randn(4, 3, generator=g, dtype=torch.float64), geometry=geometry, c=0.7)])
    q = keys[:2].clone().requires_grad_()  # row 0 sits on key 0
    f = lambda x: pairwise_sq_distance(x, keys, geometry=geometry, c=0.7, validate=False)  # noqa: E731
    assert torch.autograd.gradgradcheck(f, (q,))
    dup = keys[:3].clone().requires_grad_()
    v = torch.randn(5, 2, generator=g, dtype=torch.float64)
    assert torch.autograd.gradgradcheck(lambda x: ida(x, keys, v, eps=0.1, geometry=geometry, c=0.7), (dup,))


def test_curvature_range_is_checked_and_its_ends_work():
    q = to_ball(torch.randn(1, 64, 4, generator=torch.Generator().manual_seed(4)), c=C_MIN)
    v = torch.randn(1, 64, 2)
    for bad in (1e-9, 1e7, 0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match=r"c must be a finite number > 0 in \[1e-06, 1e\+06\]"):
            ida(q, q, v, eps=0.1, geometry="poincare", c=bad)
    out = ida(q, q, v, eps=1e-30, geometry="poincare", c=C_MIN)  # c eps = 1e-36: still a normal float32
    assert torch.isfinite(out).all() and torch.allclose(out, v, atol=1e-5)
    q_max = to_ball(torch.randn(1, 64, 4, generator=torch.Generator().manual_seed(5)), c=C_MAX)
    assert torch.isfinite(ida(q_max, q_max, v, eps=1e30, geometry="poincare", c=C_MAX)).all()


def test_auto_refuses_to_fall_back_to_the_quadratic_kernel_for_large_inputs():
    n = int(REFERENCE_MAX_PAIRS**0.5) + 1  # just over the limit; nothing of size n x n is allocated
    q = torch.zeros(n, 2)
    with pytest.raises(ValueError, match="impl='auto' would fall back"):
        ida(q, q, q, eps=1e-30)  # float32 with eps = 1e-30: the fused kernel does not apply
    with pytest.raises(ValueError, match="impl='auto' would fall back"):
        ida_weights(q.half(), q.half(), eps=0.1)


def test_weights_from_sq_refuses_zero_eps_and_negative_distances():
    sq = torch.tensor([[0.0, 1.0, 4.0]])
    with pytest.raises(ValueError, match="eps must be"):
        ida_weights_from_sq(sq, eps=0.0)
    with pytest.raises(ValueError, match="sq_dist must hold squared distances >= 0"):
        ida_weights_from_sq(torch.tensor([[0.5, -1.0]]), eps=0.1)
    with pytest.raises(ValueError, match="sq_dist must be finite"):
        ida_weights_from_sq(torch.tensor([[0.5, float("nan")]]), eps=0.1)
    assert torch.allclose(ida_weights_from_sq(sq, eps=1.0), torch.tensor([[10 / 17, 5 / 17, 2 / 17]]))
