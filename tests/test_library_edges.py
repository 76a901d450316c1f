"""The library's last raw exceptions and silent garbage: each now a ValueError that names the argument.

Every case here raised a torch RuntimeError / IndexError / TypeError / ZeroDivisionError, or returned NaN,
inf or a negative capacity, before.
"""

from __future__ import annotations

import pytest
import torch

from georesolver_core.attention import (
    CHIDA,
    AttentionConfig,
    GeoAttention,
    fp_hida,
    ida_weights,
    l_hida,
    softmax_attention,
)
from georesolver_core.compression.baselines import kivi_quantize
from georesolver_core.geometry import distance, pairwise_distance
from georesolver_core.routing.layer import capacity_of


def _small(*shape, dtype=torch.float32):
    return (0.1 * torch.randn(*shape, generator=torch.Generator().manual_seed(0))).to(dtype)


def _layer():
    return GeoAttention(AttentionConfig(d_model=8, n_heads=2, kernel="ida"))


f64, f16 = torch.float64, torch.float16
CASES = {
    "softmax, mixed dtypes": (lambda: softmax_attention(_small(1, 4, 8), _small(1, 4, 8, dtype=f64), _small(1, 4, 8)),
                              "share one dtype"),
    "fp_hida, mixed dtypes": (lambda: fp_hida(_small(1, 8, 4), _small(1, 8, 4, dtype=f64), _small(1, 8, 4), eps=0.1),
                              "share one dtype"),
    "l_hida, mixed dtypes": (lambda: l_hida(_small(1, 8, 4), _small(1, 8, 4), _small(1, 8, 4),
                                            _small(1, 2, 4, dtype=f64), eps=0.1), "anchors must share"),
    "CHIDA, mixed dtypes": (lambda: CHIDA(2, 4, eps=0.1)(_small(1, 8, 4, dtype=f64), _small(1, 8, 4), _small(1, 8, 4)),
                            "share one dtype"),
    "GeoAttention, T = 0": (lambda: _layer()(torch.zeros(1, 0, 8)), "T >= 1"),
    "GeoAttention, 2-D input": (lambda: _layer()(torch.zeros(4, 8)), "(B, T, d_model = 8)"),
    "GeoAttention, wrong width": (lambda: _layer()(torch.zeros(1, 4, 7)), "d_model = 8"),
    "GeoAttention, float64 input": (lambda: _layer()(torch.zeros(1, 4, 8, dtype=f64)), "module's dtype"),
    "GeoAttention, NaN input": (lambda: _layer()(torch.full((1, 4, 8), float("nan"))), "x must be finite"),
    "distance, shapes that do not broadcast": (lambda: distance(_small(4, 3), _small(5, 3), geometry="euclidean"),
                                               "broadcast"),
    "c as a string": (lambda: pairwise_distance(_small(4, 3), _small(5, 3), geometry="poincare", c="1"),
                      "not a string"),
    "capacity_of, no experts": (lambda: capacity_of(64, 0, 2, 1.25), "n_experts"),
    "capacity_of, negative factor": (lambda: capacity_of(64, 4, 2, -1), "capacity_factor"),
    "softmax, scores that overflow": (lambda: softmax_attention(torch.full((1, 4, 8), 1e20),
                                                                torch.full((1, 4, 8), 1e20), _small(1, 4, 8)),
                                      "too large"),
    "kivi, keys beyond float16": (lambda: kivi_quantize(torch.full((16, 8), 1e20), bits=4), "float16"),
    "softmax over zero keys": (lambda: softmax_attention(_small(1, 4, 8), _small(1, 0, 8), _small(1, 0, 8)),
                               "at least one key"),
    # found by the fuzz: eps = 1e6 is inf in float16, so every weight was 0 / 0 (NaN, no error)
    "fp_hida, half precision": (lambda: fp_hida(*[_small(1, 6, 4, dtype=f16)] * 3, eps=1e6), "float32 or float64"),
    "l_hida, half precision": (lambda: l_hida(*[_small(1, 6, 4, dtype=f16)] * 3, _small(1, 2, 4, dtype=f16), eps=1e6),
                               "float32 or float64"),
    "CHIDA, half precision": (lambda: CHIDA(2, 4, eps=1e6)(*[_small(1, 6, 4, dtype=f16)] * 3), "float32 or float64"),
    # found by the fuzz: R^0 has no unit vector, and the weights over such "points" were NaN
    "sphere points with no coordinates": (lambda: ida_weights(torch.zeros(4, 0), torch.zeros(3, 0), eps=0.1,
                                                              geometry="sphere"), "d >= 1"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_bad_input_is_a_value_error_naming_it(case):
    call, words = CASES[case]
    with pytest.raises(ValueError, match=None) as err:
        call()
    assert words in str(err.value), str(err.value)


def test_the_checks_leave_good_inputs_alone():
    assert capacity_of(64, 4, 2, 1.25) == 40  # ceil(1.25 * 64 * 2 / 4)
    assert capacity_of(0, 4, 1, 1.0) == 0
    x = _small(2, 5, 8)
    assert torch.isfinite(_layer()(x)).all()
    w = softmax_attention(
        torch.full((1, 2, 4), 1e8, dtype=f64), torch.full((1, 3, 4), 1e8, dtype=f64), _small(1, 3, 4, dtype=f64)
    )
    assert torch.isfinite(w).all()  # float64 holds scores of 4e16 / 2
    assert torch.isfinite(kivi_quantize(_small(16, 8) * 1e4, bits=4).dequantize()).all()


@pytest.mark.parametrize("geometry", ["euclidean", "poincare"])
def test_the_fused_kernel_serves_calls_in_and_out_of_inference_mode(geometry):
    """Each thread keeps its tile buffers between calls: one made under inference_mode is an inference
    tensor, and a later call outside it wrote into it in place (RuntimeError, on one thread every time)."""
    from concurrent.futures import ThreadPoolExecutor

    from georesolver_core.attention import ida
    from georesolver_core.device import one_cpu_thread
    from georesolver_core.geometry import embed

    g = torch.Generator().manual_seed(0)
    q, k = (embed(torch.randn(2, 64, 8, generator=g), geometry=geometry) for _ in range(2))  # 64 x 64: fused
    v = torch.randn(2, 64, 4, generator=g)

    def in_out_in():
        with one_cpu_thread():  # the kernel runs on this thread, with its buffers
            with torch.inference_mode():
                inside = ida(q, k, v, eps=0.1, geometry=geometry)
            outside = ida(q, k, v, eps=0.1, geometry=geometry)
            with torch.inference_mode():
                again = ida(q, k, v, eps=0.1, geometry=geometry)
        return inside, outside, again

    with ThreadPoolExecutor(1) as fresh:  # a new thread: no buffers yet, whatever ran before in this process
        inside, outside, again = fresh.submit(in_out_in).result()
    assert torch.equal(inside, outside) and torch.equal(outside, again)
