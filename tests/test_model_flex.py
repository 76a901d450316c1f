"""impl="flex" (torch FlexAttention with the -log(d^2 + eps) score hook) equals the reference kernel."""

from __future__ import annotations

import pytest
import torch

from georesolver_core.attention import ida
from tests.conftest import random_points

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny tensors: see conftest


@pytest.mark.parametrize(
    "dtype,causal",
    [(torch.float32, False), (torch.float64, False), (torch.float64, True)],
    ids=["f32", "f64", "causal"],
)
def test_flex_forward_equals_reference(geometry, dtype, causal):
    c = 0.7 if geometry == "poincare" else 1.0
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

    row = kernel_check("poincare", "reference", torch.float32, device="cpu", B=1, H=1, T=8, D=4)
    assert row["ok"] and 0 < row["out"] < 1e-4
