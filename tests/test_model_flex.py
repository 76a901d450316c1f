"""impl="flex" (torch FlexAttention with the -log(d^2 + eps) score hook) equals the reference kernel."""

from __future__ import annotations

import pytest
import torch

from georesolver_core.attention import ida
from georesolver_core.attention.flex import flex_serves
from georesolver_core.geometry import GEOMETRIES
from tests.conftest import random_points

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny tensors: see conftest


@pytest.fixture
def geometry(geometry):
    """Every geometry of the registry the flex kernel has a score hook for; the others it refuses by name."""
    if not flex_serves(geometry):
        q = random_points(geometry, 3, 4)
        with pytest.raises(ValueError, match=f"flex kernel.*{geometry!r}"):
            ida(q, q, q, eps=0.1, geometry=geometry, impl="flex")
        pytest.skip(f"the flex kernel has no score hook for {geometry!r}: refused, as checked")
    return geometry


@pytest.mark.parametrize(
    "dtype,causal",
    [(torch.float32, False), (torch.float64, False), (torch.float64, True)],
    ids=["f32", "f64", "causal"],
)
def test_flex_forward_equals_reference(geometry, dtype, causal):
    c = 0.7 if GEOMETRIES[geometry].has_curvature_parameter else 1.0
    q = random_points(geometry, 2, 3, 9, 8, seed=1, c=c).to(dtype)
    k = random_points(geometry, 2, 3, 9, 8, seed=2, c=c).to(dtype)
    v = torch.randn(2, 3, 9, 8, dtype=dtype)
    for eps in (1e-3, 10.0):
        ref = ida(q, k, v, eps=eps, geometry=geometry, c=c, causal=causal, impl="reference")
        out = ida(q, k, v, eps=eps, geometry=geometry, c=c, causal=causal, impl="flex")
        tol = dict(rtol=2e-4, atol=2e-5) if dtype == torch.float32 else dict(rtol=1e-9, atol=1e-10)
        torch.testing.assert_close(out, ref, **tol)


def test_flex_exact_retrieval_when_a_key_equals_the_query(geometry):
    """q = k_j: d = 0, so W_ij -> 1 as eps -> 0 (Lemma 5.1(a)), through the dot-product form too."""
    k = random_points(geometry, 6, 4, seed=3)
    v = torch.eye(6, dtype=k.dtype)
    out = ida(k[2:3], k, v, eps=1e-9, geometry=geometry, impl="flex")
    assert out[0, 2] > 1 - 1e-5


def test_flex_refuses_cpu_backward_with_a_clear_error():
    q = torch.randn(4, 3, requires_grad=True)
    with pytest.raises(ValueError, match="no CPU backward"):
        ida(q, q.detach(), q.detach(), eps=0.1, impl="flex")
    with torch.no_grad():
        assert ida(q, q, q, eps=0.1, impl="flex").shape == (4, 3)


def test_gpu_check_kernel_comparison_runs_on_cpu():
    """The GPU script's comparison itself (on the CPU, reference vs reference in float32): small errors, ok."""
    from georesolver_core.train.gpu_check import kernel_check

    row = kernel_check("poincare", "reference", torch.float32, device="cpu", B=1, H=1, T=8, D=4, causal=True)
    assert row["ok"] and 0 < row["out"] < 1e-4


@pytest.mark.parametrize("causal", [False, True], ids=["dense", "causal"])
def test_flex_formula_backward_equals_reference_in_float64(geometry, causal):
    """The route's construction (augmented coordinates + score hook), differentiated on a dense score
    matrix where flex has no CPU backward: output and gradients match the reference kernel."""
    from georesolver_core.attention.flex import flex_formula
    from georesolver_core.attention.spec import ALL_KEYS, CAUSAL, KernelSpec

    c = 0.7 if GEOMETRIES[geometry].has_curvature_parameter else 1.0
    spec = KernelSpec(1e-3, geometry, c, keys=CAUSAL if causal else ALL_KEYS)
    q = random_points(geometry, 2, 7, 6, seed=4, c=c).double()
    k = random_points(geometry, 2, 9, 6, seed=5, c=c).double()
    v = torch.randn(2, 9, 5, dtype=torch.float64)
    up = torch.randn(2, 7, 5, dtype=torch.float64)
    grads = []
    for fn in (flex_formula, None):
        leaves = [t.clone().requires_grad_() for t in (q, k, v)]
        out = fn(*leaves, spec) if fn else ida(*leaves, eps=1e-3, geometry=geometry, c=c, causal=causal,
                                               impl="reference")  # fmt: skip
        (out * up).sum().backward()
        grads.append([out.detach()] + [t.grad for t in leaves])
    for got, ref in zip(*grads, strict=True):
        torch.testing.assert_close(got, ref, rtol=1e-8, atol=1e-10)


def test_flex_formula_gradient_is_finite_at_q_equal_k(geometry):
    """Self-attention meets q = k: the series branches keep the hook's gradient finite there."""
    from georesolver_core.attention.flex import flex_formula
    from georesolver_core.attention.spec import KernelSpec

    x = random_points(geometry, 6, 4, seed=6).requires_grad_()
    flex_formula(x, x, torch.randn(6, 3, dtype=x.dtype), KernelSpec(1e-4, geometry)).sum().backward()
    assert torch.isfinite(x.grad).all()


def test_float32_precision_near_q_equal_k_and_the_centring_that_bounds_it():
    """float32: q'.k' = |q - k|^2 cancels, an absolute error of a few u (|q|^2 + |k|^2). Centring on
    the keys' mean removes a common offset from that error; what is left stays under precision_floor."""
    from georesolver_core.attention.flex import augmented, precision_floor
    from georesolver_core.attention.spec import KernelSpec

    g = torch.Generator().manual_seed(7)
    k = torch.randn(64, 16, generator=g, dtype=torch.float64) + 50.0  # far from the origin
    q = k + 1e-3 * torch.randn(64, 16, generator=g, dtype=torch.float64)  # each query near its key
    exact = ((q - k) ** 2).sum(-1)  # (64,) the d^2 the weights peak at
    spec = KernelSpec(1e-6, "euclidean")
    qa, ka = augmented(q.float(), k.float(), spec)
    centred = (qa * ka).sum(-1).double()
    raw = (q.float() ** 2).sum(-1) + (k.float() ** 2).sum(-1) - 2 * (q.float() * k.float()).sum(-1)
    err_centred, err_raw = (centred - exact).abs().max(), (raw.double() - exact).abs().max()
    assert err_centred < err_raw / 100  # the offset's 50^2 * 16 no longer enters the rounding
    assert err_centred <= precision_floor(q.float(), k.float(), spec)


def test_cuda_float32_tensors_are_routed_to_flex():
    from georesolver_core.attention.flex import flex_applies
    from georesolver_core.attention.spec import CAUSAL, KernelSpec

    meta = torch.empty(2, 8, 4, device="meta")
    assert flex_applies(meta, KernelSpec(0.1)) is False  # not CUDA
    spec = KernelSpec(0.1, keys=CAUSAL)
    assert not flex_applies(torch.empty(2, 8, 4), spec)
    assert not flex_applies(torch.empty(2, 8, 4, dtype=torch.float64), spec)


@pytest.mark.parametrize("n,m", [(5, 9), (9, 5)], ids=["fewer-queries", "more-queries"])
def test_flex_causal_block_mask_with_unequal_lengths(n, m):
    """Causal sets are a block mask aligned at the end (query i sees keys j <= i + m - n)."""
    q, k = torch.randn(2, n, 8, dtype=torch.float64), torch.randn(2, m, 8, dtype=torch.float64)
    v = torch.randn(2, m, 3, dtype=torch.float64)
    ref = ida(q, k, v, eps=0.05, causal=True, impl="reference")
    out = ida(q, k, v, eps=0.05, causal=True, impl="flex")
    torch.testing.assert_close(out, ref, rtol=1e-9, atol=1e-10)


def test_the_score_hook_and_causal_mask_are_built_once_per_setting():
    # The compiled flex guards on the hook's identity: a new closure per call recompiled every call
    # and, past dynamo's limit, fell back to the eager flex (seen on a GPU: 18.8 vs 417 calls/s).
    from georesolver_core.attention.flex import _causal_mask, ida_score_mod
    from georesolver_core.attention.spec import KernelSpec

    assert ida_score_mod(KernelSpec(0.1, "sphere")) is ida_score_mod(KernelSpec(0.1, "sphere"))
    assert ida_score_mod(KernelSpec(0.1, "sphere")) is not ida_score_mod(KernelSpec(0.2, "sphere"))
    assert ida_score_mod(KernelSpec(0.1, "sphere")) is not ida_score_mod(KernelSpec(0.1, "poincare"))
    assert _causal_mask(8, 8, "cpu") is _causal_mask(8, 8, "cpu")
