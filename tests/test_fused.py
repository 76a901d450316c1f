"""Fused streaming IDA / Dense-HIDA / SIDA kernels against the naive float64 reference.

Every law runs on both CPU paths of ``fused_ida``: the compiled kernel (``attention.compiled``) and the
Python tile kernel (``GR_COMPILED=0``; it also serves key multiplicities and the weight matrix).

Laws checked: agreement with the reference (outputs and gradients) across geometries, eps in
[1e-6, 10], causal and not, q = k rows and points near the Poincaré rim; rows of the weights sum to 1;
exact retrieval as eps -> 0 in float32; eps -> infinity averages the values; permuting keys with their
values changes nothing; gradcheck / gradgradcheck in float64; memory stays far below a T x T matrix.
"""

import pytest
import torch

from georesolver_core.attention import ida, ida_weights
from georesolver_core.attention.fused import fused_ida, fused_ida_weights, fused_supported
from georesolver_core.attention.fused_geometry import fused_serves
from georesolver_core.attention.reference import reference_ida, reference_ida_weights
from georesolver_core.attention.spec import ALL_KEYS, CAUSAL, KernelSpec
from georesolver_core.bench import peak_memory_mb
from georesolver_core.geometry import GEOMETRIES as REGISTRY
from georesolver_core.geometry import embed

GEOMETRIES = [g for g in REGISTRY if fused_serves(g)]  # every geometry with a tile class
REFUSED = [g for g in REGISTRY if not fused_serves(g)]  # the others: refused by name


@pytest.fixture(autouse=True, params=["compiled", "python tiles"])
def cpu_path(request, monkeypatch):
    if request.param == "python tiles":
        monkeypatch.setenv("GR_COMPILED", "0")
    return request.param


def spec(eps, geometry="euclidean", causal=False, c=1.0, counts=None):
    """The kernels' spec from the keywords of the public functions."""
    return KernelSpec(eps, geometry, c, keys=CAUSAL if causal else ALL_KEYS, counts=counts)


SMALL = dict(block_q=16, block_k=16)  # several tiles even on small inputs, with ragged edges


def to_geometry(geometry, z):
    return embed(z, geometry=geometry)


def points(geometry, *shape, dtype=torch.float64, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return to_geometry(geometry, torch.randn(*shape, generator=gen, dtype=torch.float64)).to(dtype)


def qkv(geometry, n=37, m=41, d=5, dv=3, heads=2, dtype=torch.float64, dup=True, near=0.0, seed=0):
    """Queries, keys, values; with ``dup`` every third key equals a query, with ``near`` every fifth
    key is a query moved by ``near`` (before mapping into the geometry)."""
    gen = torch.Generator().manual_seed(seed)
    zq = torch.randn(heads, n, d, generator=gen, dtype=torch.float64)
    zk = torch.randn(heads, m, d, generator=gen, dtype=torch.float64)
    r = min(n, m)
    if near:
        zk[:, 1:r:5] = zq[:, 1:r:5] + near * torch.randn(
            heads, len(range(1, r, 5)), d, generator=gen, dtype=torch.float64
        )
    if dup:
        zk[:, :r:3] = zq[:, :r:3]
    v = torch.randn(heads, m, dv, generator=gen, dtype=torch.float64)
    return to_geometry(geometry, zq).to(dtype), to_geometry(geometry, zk).to(dtype), v.to(dtype)


def rel(a, b):
    a, b = a.detach().double(), b.detach().double()
    return float((a - b).norm() / b.norm().clamp_min(1e-300))


def grads(fn, inputs, gout):
    xs = [t.detach().clone().requires_grad_() for t in inputs]
    out = fn(*xs)
    return (out, *torch.autograd.grad(out, xs, gout.to(out.dtype)))


@pytest.mark.parametrize("geometry", REFUSED)
def test_a_geometry_without_a_tile_class_is_refused_by_name(geometry):
    q, k, v = qkv(geometry, n=8, m=8)
    for call in (
        lambda: fused_ida(q, k, v, spec(eps=0.1, geometry=geometry)),
        lambda: fused_ida_weights(q, k, spec(eps=0.1, geometry=geometry)),
        lambda: ida(q, k, v, eps=0.1, geometry=geometry, impl="fused"),
    ):
        with pytest.raises(ValueError, match=f"fused kernel.*{geometry!r}"):
            call()
    assert not fused_supported(q, k, v, spec(eps=0.1, geometry=geometry))


@pytest.mark.parametrize("geometry", GEOMETRIES)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("eps", [1e-6, 1e-2, 10.0])
def test_matches_reference_float64(geometry, causal, eps):
    q, k, v = qkv(geometry)
    gout = torch.randn(q.shape[0], q.shape[1], v.shape[-1], dtype=torch.float64)
    fast = grads(
        lambda a, b, c: fused_ida(a, b, c, spec(eps=eps, geometry=geometry, causal=causal), **SMALL),
        (q, k, v),
        gout,
    )
    ref = grads(
        lambda a, b, c: reference_ida(a, b, c, spec(eps=eps, geometry=geometry, causal=causal)), (q, k, v), gout
    )
    for name, a, b in zip(["o", "dq", "dk", "dv"], fast, ref, strict=True):
        assert rel(a, b) < 1e-9, f"{name}: relative error {rel(a, b):.2e}"


@pytest.mark.parametrize("geometry", GEOMETRIES)
@pytest.mark.parametrize("eps", [1e-6, 1e-2, 10.0])
def test_float32_matches_float64_reference(geometry, eps):
    # d = 64, exact duplicates and pairs 1e-3 apart: the plain matmul form would lose both in float32.
    q, k, v = qkv(geometry, n=150, m=170, d=64, dv=32, heads=2, near=1e-3)
    gout = torch.randn(2, 150, 32, dtype=torch.float64)
    ref = grads(lambda a, b, c: reference_ida(a, b, c, spec(eps=eps, geometry=geometry)), (q, k, v), gout)
    low = [t.float() for t in (q, k, v)]
    f32 = grads(lambda a, b, c: fused_ida(a, b, c, spec(eps=eps, geometry=geometry)), low, gout)
    r32 = grads(lambda a, b, c: reference_ida(a, b, c, spec(eps=eps, geometry=geometry)), low, gout)
    for name, a, b, c in zip(["o", "dq", "dk", "dv"], f32, r32, ref, strict=True):
        assert a.dtype == torch.float32
        # As accurate as float32 allows: within a small factor of the float32 reference's own error
        # (gradients at eps = 1e-6 with pairs 1e-3 apart are ill-conditioned for any float32 kernel).
        assert rel(a, c) < 10 * rel(b, c) + 1e-5, f"{name}: {rel(a, c):.2e} vs reference float32 {rel(b, c):.2e}"


@pytest.mark.parametrize("geometry", GEOMETRIES)
@pytest.mark.parametrize("causal", [False, True])
def test_weights_match_reference_and_rows_sum_to_one(geometry, causal):
    q, k, _ = qkv(geometry, n=29, m=23)
    gW = torch.randn(2, 29, 23, dtype=torch.float64)
    fast = grads(
        lambda a, b: fused_ida_weights(a, b, spec(eps=1e-3, geometry=geometry, causal=causal), **SMALL), (q, k), gW
    )
    ref = grads(
        lambda a, b: reference_ida_weights(a, b, spec(eps=1e-3, geometry=geometry, causal=causal)), (q, k), gW
    )
    for a, b in zip(fast, ref, strict=True):
        assert rel(a, b) < 1e-9
    sums = fast[0].sum(-1)
    seen = sums > 0  # causal with more queries than keys: the first rows see no key
    assert torch.allclose(sums[seen], torch.ones_like(sums[seen]))
    if causal:  # query i sees keys j <= i + m - n only
        assert fast[0][:, 10, 5:].abs().max() == 0


@pytest.mark.parametrize("geometry", GEOMETRIES)
@pytest.mark.parametrize("causal", [False, True])
def test_gradcheck_float64(geometry, causal):
    q, k, v = qkv(geometry, n=5, m=6, d=3, dv=2, heads=1)
    inputs = [t.clone().requires_grad_() for t in (q, k, v)]

    def f(a, b, c):
        return fused_ida(a, b, c, spec(eps=0.05, geometry=geometry, causal=causal))

    assert torch.autograd.gradcheck(f, inputs, atol=1e-6, fast_mode=True)
    assert torch.autograd.gradcheck(
        lambda a, b: fused_ida_weights(a, b, spec(eps=0.05, geometry=geometry, causal=causal)),
        inputs[:2],
        atol=1e-6,
        fast_mode=True,
    )


@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_double_backward_through_reference(geometry):
    q, k, v = qkv(geometry, n=3, m=4, d=2, dv=2, heads=1, dup=False)
    inputs = [t.clone().requires_grad_() for t in (q, k, v)]
    f = lambda a, b, c: fused_ida(a, b, c, spec(eps=0.1, geometry=geometry))  # noqa: E731
    assert torch.autograd.gradgradcheck(f, inputs, fast_mode=True)


@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_exact_retrieval_float32(geometry):
    """q = k rows at eps = 1e-6 in float32: the matched key takes the weight the float64 reference gives it."""
    q = points(geometry, 1, 256, 64, dtype=torch.float64)
    ref = reference_ida_weights(q, q, spec(eps=1e-6, geometry=geometry)).diagonal(dim1=-2, dim2=-1)
    fast = fused_ida_weights(q.float(), q.float(), spec(eps=1e-6, geometry=geometry)).diagonal(dim1=-2, dim2=-1)
    assert ref.min() > 0.999
    assert (fast.double() - ref).abs().max() < 1e-6
    v = torch.randn(1, 256, 8)
    out = fused_ida(q.float(), q.float(), v, spec(eps=1e-6, geometry=geometry))
    assert rel(out, v) < 2e-3


@pytest.mark.parametrize("geometry", GEOMETRIES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_finite_gradients_at_q_equal_k(geometry, dtype):
    q = points(geometry, 2, 40, 16, dtype=dtype).requires_grad_()
    v = torch.randn(2, 40, 4, dtype=dtype, requires_grad=True)
    fused_ida(q, q, v, spec(eps=1e-6, geometry=geometry)).square().sum().backward()
    assert torch.isfinite(q.grad).all() and torch.isfinite(v.grad).all()


@pytest.mark.parametrize("dtype,radius", [(torch.float64, 0.999), (torch.float32, 0.99)])
def test_poincare_near_rim(dtype, radius):
    q, k, v = qkv("poincare", n=30, m=30, d=4, heads=1)
    q = radius * q / q.norm(dim=-1, keepdim=True)
    k = radius * k / k.norm(dim=-1, keepdim=True)
    k[:, ::4] = q[:, ::4]
    gout = torch.randn(1, 30, 3, dtype=torch.float64)
    ref = grads(lambda a, b, c: reference_ida(a, b, c, spec(eps=1e-3, geometry="poincare")), (q, k, v), gout)
    fast = grads(
        lambda a, b, c: fused_ida(a, b, c, spec(eps=1e-3, geometry="poincare"), **SMALL),
        [t.to(dtype) for t in (q, k, v)],
        gout,
    )
    tol = 1e-9 if dtype == torch.float64 else 2e-3
    for a, b in zip(fast, ref, strict=True):
        assert rel(a, b) < tol


def test_sphere_antipodal_pairs():
    q, k, v = qkv("sphere", n=20, m=20, d=4, heads=1, dup=False)
    k[:, ::2] = -q[:, ::2]
    gout = torch.randn(1, 20, 3, dtype=torch.float64)
    ref = grads(lambda a, b, c: reference_ida(a, b, c, spec(eps=1e-2, geometry="sphere")), (q, k, v), gout)
    fast = grads(lambda a, b, c: fused_ida(a, b, c, spec(eps=1e-2, geometry="sphere"), **SMALL), (q, k, v), gout)
    for a, b in zip(fast, ref, strict=True):
        assert rel(a, b) < 1e-9


@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_large_eps_averages_values_and_key_permutation_is_invisible(geometry):
    q, k, v = qkv(geometry, n=12, m=15, dup=False)
    out = fused_ida(q, k, v, spec(eps=1e8, geometry=geometry), **SMALL)
    assert torch.allclose(out, v.mean(-2, keepdim=True).expand_as(out), atol=1e-6)
    perm = torch.randperm(15, generator=torch.Generator().manual_seed(3))
    a = fused_ida(q, k, v, spec(eps=0.1, geometry=geometry), **SMALL)
    b = fused_ida(q, k[:, perm], v[:, perm], spec(eps=0.1, geometry=geometry), **SMALL)
    assert torch.allclose(a, b, atol=1e-12)


def test_batch_dims_broadcast_like_the_reference():
    q = torch.randn(3, 2, 9, 4, dtype=torch.float64)
    k = torch.randn(1, 2, 11, 4, dtype=torch.float64)
    v = torch.randn(2, 11, 5, dtype=torch.float64)
    assert rel(fused_ida(q, k, v, spec(eps=0.1)), reference_ida(q, k, v, spec(eps=0.1))) < 1e-12


def test_causal_more_queries_than_keys_gives_zero_rows():
    q, k, v = qkv("euclidean", n=10, m=6)
    out = fused_ida(q, k, v, spec(eps=0.1, causal=True), **SMALL)
    assert out[:, :4].abs().max() == 0  # query i sees keys j <= i - 4
    assert rel(out, reference_ida(q, k, v, spec(eps=0.1, causal=True))) < 1e-12


def test_public_functions_dispatch_and_reference_stays_reachable():
    q, k, v = qkv("poincare", n=64, m=40)  # 2560 pairs: auto picks the fused kernel
    assert torch.equal(
        ida(q, k, v, eps=0.1, geometry="poincare"), fused_ida(q, k, v, spec(eps=0.1, geometry="poincare"))
    )
    assert torch.equal(
        ida(q, k, v, eps=0.1, geometry="poincare", impl="reference"),
        reference_ida(q, k, v, spec(eps=0.1, geometry="poincare")),
    )
    W = ida_weights(q, k, eps=0.1, geometry="poincare")
    assert torch.equal(W, fused_ida_weights(q, k, spec(eps=0.1, geometry="poincare")))
    assert rel(W, reference_ida_weights(q, k, spec(eps=0.1, geometry="poincare"))) < 1e-12
    small = [t[:, :8] for t in (q, k, v)]  # 64 pairs: auto picks the naive kernel, impl="fused" forces
    assert torch.equal(
        ida(*small, eps=0.1, geometry="poincare"), reference_ida(*small, spec(eps=0.1, geometry="poincare"))
    )
    assert torch.equal(
        ida(*small, eps=0.1, geometry="poincare", impl="fused"),
        fused_ida(*small, spec(eps=0.1, geometry="poincare")),
    )
    with pytest.raises(ValueError, match="impl must be one of"):
        ida(q, k, v, eps=0.1, impl="fast")
    with pytest.raises(ValueError, match="impl='fused' needs"):
        ida(q.half(), k.half(), v.half(), eps=0.1, impl="fused")


def test_fallback_where_fused_does_not_apply():
    q = torch.randn(400, 3)
    assert not fused_supported(q, q, q, spec(1e-30))  # m / eps would come near the float32 range
    assert fused_supported(q.double(), q.double(), q.double(), spec(1e-30))
    assert not fused_supported(q.half(), q.half(), q.half(), spec(0.1))
    assert not fused_supported(q, q.double(), q, spec(0.1))
    out = ida(q, q, q, eps=1e-30)  # the reference's ratio form handles it
    assert torch.isfinite(out).all() and torch.allclose(out, q)


def test_tiny_eps_stays_finite_in_float32():
    q = points("euclidean", 1, 50, 4, dtype=torch.float32).requires_grad_()
    v = torch.randn(1, 50, 2, requires_grad=True)
    assert fused_supported(q, q, v, spec(1e-30))
    out = fused_ida(q, q, v, spec(eps=1e-30))
    out.sum().backward()
    assert torch.allclose(out, v, atol=1e-6)
    assert torch.isfinite(q.grad).all() and torch.isfinite(v.grad).all()


def test_block_sizes_are_validated():
    q = torch.randn(4, 3)
    with pytest.raises(ValueError, match="block_q must be an integer in"):
        fused_ida(q, q, q, spec(eps=0.1), block_q=8)


def test_peak_memory_far_below_a_dense_matrix():
    """T = 2048, one head: a dense float32 T x T matrix is 16 MB; the fused forward+backward stays near O(T d)."""
    T, d = 2048, 8
    q, k, v = (torch.randn(1, T, d, requires_grad=True) for _ in range(3))
    g = torch.randn(1, T, d)
    peak = peak_memory_mb(lambda: fused_ida(q, k, v, spec(eps=0.1)).backward(g), "cpu")
    assert peak is not None and peak < 16 / 4
