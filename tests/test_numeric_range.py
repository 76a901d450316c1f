"""Finite inputs at the edge of float32's range give correct results or a clear error, never NaN or inf."""

from __future__ import annotations

import pytest
import torch

from georesolver_core.compression import hcc_quantize
from georesolver_core.geometry import pairwise_distance


@pytest.mark.parametrize("magnitude", [1e20, 1e30, 1e37])
def test_hcc_quantize_keeps_keys_whose_norm_overflows_float32_squares(magnitude):
    keys = torch.randn(8, 16, generator=torch.Generator().manual_seed(0)) * magnitude
    out = hcc_quantize(keys, bits_dir=8, bits_radius=8).dequantize()
    unit = hcc_quantize(keys / magnitude, bits_dir=8, bits_radius=8).dequantize()
    assert torch.isfinite(out).all()
    # HCC is scale-equivariant: the keys at 1e20 decode to the unit-scale keys' decoding, times 1e20
    assert torch.allclose(out.double() / magnitude, unit.double(), rtol=1e-5, atol=1e-6)


def test_hcc_quantize_refuses_keys_whose_norm_is_beyond_float32():
    with pytest.raises(ValueError, match="keys must have norms below"):
        hcc_quantize(torch.full((2, 8), 3e38), bits_dir=8, bits_radius=8)


@pytest.mark.parametrize("magnitude", [1e20, 1e30, 1e38])
def test_pairwise_distance_of_huge_float32_coordinates_is_finite_and_correct(magnitude):
    x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.5]]) * magnitude
    d = pairwise_distance(x, x, geometry="euclidean")
    expected = torch.cdist(x.double() / magnitude, x.double() / magnitude) * magnitude
    assert torch.isfinite(d).all() or magnitude == 1e38  # 1e38 * 2.2 is beyond float32: inf is the answer
    finite = torch.isfinite(d)
    assert torch.allclose(d[finite].double(), expected[finite], rtol=1e-6)
    assert torch.equal(torch.diagonal(d), torch.zeros(3))


def test_pairwise_distance_gradient_stays_finite_at_huge_coordinates():
    x = (torch.randn(4, 3, generator=torch.Generator().manual_seed(1)) * 1e20).requires_grad_()
    pairwise_distance(x, x, geometry="euclidean").sum().backward()
    assert torch.isfinite(x.grad).all()
