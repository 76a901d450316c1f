"""HCC and the baseline quantisers: lossless packing, true storage, error laws, serialisation, bad input."""

from __future__ import annotations

import math

import pytest
import torch

from georesolver_core.compression import (
    QUANTIZERS,
    CompressedKeys,
    hcc_polar,
    hcc_quantize,
    kivi_quantize,
    pack_bits,
    packed_nbytes,
    quantize,
    storage_nbytes,
    unpack_bits,
)
from georesolver_core.geometry import to_ball
from georesolver_core.theory.compression import (
    hcc_compression_ratio,
    hcc_error_bound,
    hcc_stored_bits,
)

HCC_VARIANTS = [
    dict(radius="euclidean", direction="implicit"),
    dict(radius="euclidean", direction="all"),
    dict(radius="hyperbolic", direction="implicit"),
    dict(radius="hyperbolic", direction="all"),
]


def ball_keys(*shape, dtype=torch.float64, seed=0, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return to_ball(scale * torch.randn(*shape, generator=g, dtype=torch.float64)).to(dtype)


@pytest.mark.parametrize("bits", range(1, 17))
def test_packing_is_lossless_for_every_width_and_odd_sizes(bits):
    g = torch.Generator().manual_seed(bits)
    for count in (0, 1, 3, 7, 9, 13, 1001):
        codes = torch.randint(0, 2**bits, (count,), generator=g)
        codes[: min(count, 2)] = torch.tensor([0, 2**bits - 1])[: min(count, 2)]  # both extremes
        packed = pack_bits(codes, bits)
        assert packed.dtype == torch.uint8 and packed.numel() == packed_nbytes(count, bits)
        assert packed.numel() <= math.ceil(count * bits / 8) + bits  # w bits per code, up to padding
        assert torch.equal(unpack_bits(packed, bits, count).long(), codes)


def test_packing_refuses_codes_out_of_range_and_bad_widths():
    with pytest.raises(ValueError, match="codes"):
        pack_bits(torch.tensor([0, 8]), 3)
    for bad in (0, -1, 17, 2.0, True):
        with pytest.raises(ValueError, match="bits"):
            pack_bits(torch.tensor([0]), bad)


@pytest.mark.parametrize("method", list(QUANTIZERS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
def test_every_method_stores_packed_bytes_and_reports_them(method, dtype):
    keys = ball_keys(2, 37, 16, dtype=dtype)
    ck = quantize(keys, method, bits=3)
    assert ck.payload.dtype == torch.uint8
    assert ck.nbytes == ck.payload.numel() + sum(t.numel() * t.element_size() for t in ck.side.values())
    assert ck.nbytes == storage_nbytes(method, tuple(keys.shape), bits=3)
    out = ck.dequantize()
    assert out.shape == keys.shape and out.dtype == dtype and torch.isfinite(out).all()


def test_done_criterion_ratio_at_d64_b4_br6():
    keys = ball_keys(4096, 64, dtype=torch.float32)
    ck = hcc_quantize(keys, bits_dir=4, bits_radius=6)
    assert ck.ratio() >= 7.9
    assert hcc_stored_bits(64, 4, 6, "implicit") == 259  # the paper's 258 + the sign of the implicit coordinate
    assert ck.ratio() == pytest.approx(2048 / 259, rel=1e-3)
    assert hcc_compression_ratio(64, 4, 6) == pytest.approx(7.94, abs=0.005)
    full = hcc_quantize(keys, bits_dir=4, bits_radius=6, direction="all")
    assert full.ratio() == pytest.approx(2048 / 262, rel=1e-3)  # every coordinate: below 7.9


@pytest.mark.parametrize("variant", HCC_VARIANTS, ids=lambda v: f"{v['radius']}-{v['direction']}")
def test_hcc_reconstruction_matches_the_papers_rounding(variant):
    keys = ball_keys(500, 8)
    b, br = 5, 7
    ck = hcc_quantize(keys, bits_dir=b, bits_radius=br, **variant)
    r_hat, u_hat = hcc_polar(ck)
    r = keys.norm(dim=-1)
    u = keys / r.unsqueeze(-1)
    levels = 2**b - 1
    paper_u = torch.round((u + 1) / 2 * levels) / levels * 2 - 1
    stored = slice(0, 7) if variant["direction"] == "implicit" else slice(0, 8)
    if variant == dict(radius="euclidean", direction="all"):
        assert torch.allclose(u_hat, paper_u, atol=1e-12)
        assert torch.allclose(r_hat, torch.round(r * 2**br) / 2**br, atol=1e-12)
    else:  # unit directions: the stored coordinates are the paper's, rescaled
        assert torch.allclose(u_hat.norm(dim=-1), torch.ones(500, dtype=u_hat.dtype), atol=1e-9)
        a, p = u_hat[:, stored], paper_u[:, stored]
        cos = (a * p).sum(-1) / (a.norm(dim=-1) * p.norm(dim=-1))
        assert torch.allclose(cos, torch.ones_like(cos), atol=1e-12)  # the same stored vector, rescaled
    if variant["radius"] == "euclidean":
        assert ((r_hat - r).abs() <= 2.0**-br).all()  # the proof's step |r - r_hat| <= 2^-b_r
    else:  # uniform in the distance to the origin rho = 2 artanh r
        rho, rho_hat = 2 * torch.atanh(r), 2 * torch.atanh(r_hat)
        assert ((rho_hat - rho).abs() <= float(ck.side["radius_scale"][0]) / (2 * (2**br - 1)) + 1e-6).all()
    assert torch.allclose(ck.dequantize(), r_hat.unsqueeze(-1) * u_hat, atol=1e-12)


def test_theorem_6_1_holds_for_tanh_keys_at_small_d_and_fails_in_high_d_for_basis_keys():
    keys = ball_keys(2000, 8)
    err = ((hcc_quantize(keys, bits_dir=4, bits_radius=6, direction="all").dequantize() - keys) ** 2).sum(-1)
    assert float(err.max()) <= hcc_error_bound(4, 6)
    # r e_1: every coordinate but one is 0, a midpoint of the grid (2^b - 1 is odd), error 1/(2^b - 1) each.
    d, b = 256, 4
    key = torch.zeros(1, d, dtype=torch.float64)
    key[0, 0] = 0.9
    err = ((hcc_quantize(key, bits_dir=b, bits_radius=6, direction="all").dequantize() - key) ** 2).sum()
    assert float(err) == pytest.approx(0.9**2 * (d - 1) / (2**b - 1) ** 2, rel=0.05)
    assert float(err) > hcc_error_bound(b, 6)


def test_zero_vectors_are_reconstructed_exactly():
    keys = ball_keys(10, 6)
    keys[3] = 0.0
    for variant in HCC_VARIANTS:
        out = hcc_quantize(keys, bits_dir=3, bits_radius=4, **variant).dequantize()
        assert torch.equal(out[3], torch.zeros(6, dtype=keys.dtype))
    for bits in (2, 9, 16):  # every code path of the packer, float32 (where (L/2) / r could overflow)
        for variant in HCC_VARIANTS:
            ck = hcc_quantize(torch.zeros(4, 3), bits_dir=bits, bits_radius=bits, **variant)
            assert torch.equal(ck.dequantize(), torch.zeros(4, 3))
    tiny = torch.full((2, 3), 1e-35)
    assert torch.equal(
        hcc_quantize(tiny, bits_dir=4, bits_radius=4, radius="hyperbolic").dequantize(), torch.zeros(2, 3)
    )


def test_keys_at_the_rim_and_outside_the_unit_ball():
    rim = torch.nn.functional.normalize(ball_keys(50, 4), dim=-1) * (1 - 1e-12)
    ck = hcc_quantize(rim, bits_dir=4, bits_radius=6)
    r_hat, _ = hcc_polar(ck)
    assert (r_hat == 1 - 2.0**-6).all()  # the paper's code 2^b_r does not fit: clamped, error < 2^-b_r
    big = 5.0 * torch.randn(20, 4, dtype=torch.float64)
    out = hcc_quantize(big, bits_dir=10, bits_radius=10).dequantize()  # Euclidean mode takes any norm
    assert float((out - big).norm(dim=-1).max() / big.norm(dim=-1).max()) < 0.05


@pytest.mark.parametrize("method", list(QUANTIZERS))
def test_quantising_quantised_keys_again_is_stable(method):
    keys = ball_keys(300, 16)
    once = quantize(keys, method, bits=4).dequantize()
    twice = quantize(once, method, bits=4).dequantize()
    first = ((once - keys) ** 2).sum(-1)
    second = ((twice - once) ** 2).sum(-1)
    assert float(second.max()) <= float(first.max()) + 1e-9
    thrice = quantize(twice, method, bits=4).dequantize()
    assert float(((thrice - twice) ** 2).sum(-1).mean()) <= float(first.mean())


@pytest.mark.parametrize("method", list(QUANTIZERS))
def test_state_round_trips_through_torch_save_with_weights_only(method, tmp_path):
    keys = ball_keys(3, 41, 10, dtype=torch.float32)
    ck = quantize(keys, method, bits=5, **({"residual": 7} if method.startswith("kivi") else {}))
    path = tmp_path / "keys.pt"
    ck.save(path)
    back = CompressedKeys.load(path)
    assert back.nbytes == ck.nbytes and back.params == ck.params
    assert torch.equal(back.dequantize(), ck.dequantize())
    torch.save(ck.state_dict(), path)
    assert torch.equal(
        CompressedKeys.from_state(torch.load(path, weights_only=True)).dequantize(), ck.dequantize()
    )


def test_corrupt_state_is_refused():
    state = hcc_quantize(ball_keys(5, 4), bits_dir=3, bits_radius=3).state_dict()
    with pytest.raises(ValueError, match="corrupt"):
        CompressedKeys.from_state({**state, "payload": state["payload"][:-1]})
    with pytest.raises(ValueError, match="method"):
        CompressedKeys.from_state({**state, "method": "zip"})


def test_kivi_residual_tokens_are_exact_in_float16_and_counted():
    keys = ball_keys(2, 50, 8, dtype=torch.float32)
    ck = kivi_quantize(keys, bits=2, group=16, residual=10)
    out = ck.dequantize()
    assert torch.equal(out[:, 40:], keys[:, 40:].half().float())
    assert ck.side["residual"].numel() * 2 == 2 * 10 * 8 * 2
    all_res = kivi_quantize(keys, bits=2, residual=50).dequantize()
    assert torch.equal(all_res, keys.half().float())


@pytest.mark.parametrize("bits", [0, -1, 17, 4.0, True, "4"])
def test_bad_bit_widths_name_the_argument(bits):
    keys = ball_keys(4, 3)
    with pytest.raises(ValueError, match="bits_dir.*\\[1, 16\\]"):
        hcc_quantize(keys, bits_dir=bits, bits_radius=4)
    with pytest.raises(ValueError, match="bits_radius.*\\[1, 16\\]"):
        hcc_quantize(keys, bits_dir=4, bits_radius=bits)
    with pytest.raises(ValueError, match="bits"):
        quantize(keys, "kivi-channel", bits=bits)


def test_bad_keys_name_the_argument():
    with pytest.raises(ValueError, match="keys.*non-empty"):
        hcc_quantize(torch.zeros(0, 4), bits_dir=4, bits_radius=4)
    with pytest.raises(ValueError, match="keys.*finite"):
        hcc_quantize(torch.tensor([[0.1, float("nan")]]), bits_dir=4, bits_radius=4)
    with pytest.raises(ValueError, match="keys.*finite"):
        quantize(torch.tensor([[0.1, float("inf")]]), "uniform", bits=4)
    with pytest.raises(ValueError, match="keys.*Poincaré ball"):
        hcc_quantize(torch.tensor([[0.8, 0.8]]), bits_dir=4, bits_radius=4, radius="hyperbolic")
    with pytest.raises(ValueError, match="radius"):
        hcc_quantize(ball_keys(3, 2), bits_dir=4, bits_radius=4, radius="spherical")
    with pytest.raises(ValueError, match="keys.*floating"):
        hcc_quantize(torch.ones(3, 2, dtype=torch.int64), bits_dir=4, bits_radius=4)
    with pytest.raises(ValueError, match="method"):
        quantize(ball_keys(3, 2), "zip", bits=4)
