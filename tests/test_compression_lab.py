"""Compression: figures, claims, attention on quantised keys, the page's lab, the memory table, the benchmark."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

from georesolver_core.claims import CLAIMS, CONDITIONAL, FAILS
from georesolver_core.claims.compression_claims import system_ratios
from georesolver_core.compression import QUANTIZERS, hcc_quantize, quantize, storage_nbytes
from georesolver_core.compression.attention_effect import attention_effect
from georesolver_core.compression.bench import throughput
from georesolver_core.compression.worst_case import analytic_candidates, random_keys, worst_case
from georesolver_core.geometry import to_ball
from georesolver_core.labs.compression import (
    MODELS,
    CompressionConfig,
    EffectConfig,
    MemoryConfig,
    compression_lab,
    memory_table,
)
from georesolver_core.theory.compression import direction_error_range, hcc_error_bound
from georesolver_core.viz.compression import (
    attention_effect_figure,
    disk_figure,
    error_histogram,
    memory_figure,
    pareto_figure,
    ratio_figure,
)


@pytest.fixture(scope="module")
def lab():
    return compression_lab(CompressionConfig(n=300, d=16, bits_dir=4, bits_radius=6, baseline="kivi-channel"))


def test_lab_errors_are_the_dequantised_errors(lab):
    keys = random_keys(300, 16, "tanh", torch.Generator().manual_seed(0)).float()
    err = ((hcc_quantize(keys, bits_dir=4, bits_radius=6).dequantize() - keys) ** 2).sum(-1)
    assert np.allclose(lab.errors, err.double().numpy())
    assert lab.stats.keys_over_bound == int((err > hcc_error_bound(4, 6)).sum())
    assert set(lab.sweep["method"]) == set(QUANTIZERS)
    # the baseline gets the largest width whose real bytes fit in HCC's
    assert lab.stats.bits_per_key_baseline <= lab.stats.bits_per_key_hcc


@pytest.mark.parametrize(
    "field, value, match",
    [
        ("n", 0, "n must be"),
        ("d", 1 << 15, "d must be"),
        ("bits_dir", 0, "bits_dir"),
        ("bits_radius", 4.0, "bits_radius"),
        ("radius", "spherical", "radius must be one of"),
        ("direction", "some", "direction must be one of"),
        ("baseline", "hcc", "baseline must be one of"),
        ("kind", "gauss", "kind must be one of"),
        ("dtype", torch.float16, "dtype must be one of"),
    ],
)
def test_compression_config_is_checked_on_construction(field, value, match):
    with pytest.raises(ValueError, match=match):
        CompressionConfig(**{"n": 10, "d": 4, "bits_dir": 4, "bits_radius": 6, field: value})


@pytest.mark.parametrize(
    "field, value, match",
    [("method", "zip", "method must be one of"), ("d", 0, "d must be"), ("bits_radius", 0, "bits_radius"),
     ("radius", "x", "radius must be"), ("kind", "x", "kind must be")],
)  # fmt: skip
def test_effect_config_is_checked_on_construction(field, value, match):
    with pytest.raises(ValueError, match=match):
        EffectConfig(**{"method": "hcc", "d": 8, "bits_radius": 6, field: value})


def test_storage_layout_equals_real_bytes_for_cache_shapes():
    for method in QUANTIZERS:
        for shape in [(3, 5), (2, 33, 8), (1, 1, 1)]:
            keys = to_ball(torch.randn(*shape))
            for bits in (1, 5, 12):
                real = quantize(keys, method, bits=bits)
                assert real.nbytes == storage_nbytes(method, shape, bits=bits)


def test_memory_table_matches_the_papers_arithmetic():
    t = memory_table(MemoryConfig(list(MODELS)[0], 4096, bits_dir=4, bits_radius=6))
    fp32 = t.set_index("cache")["bytes"]
    layers, heads, d = MODELS[list(MODELS)[0]]
    assert fp32["float32 keys + float32 values"] == layers * heads * 4096 * d * 8
    ratio = t.set_index("cache")["ratio vs float32 cache"]["HCC keys + float32 values"]
    assert ratio == pytest.approx(2 * 32 * d / (259 + 32 * d), rel=1e-3)  # ~1.78x, the paper's ~1.8x
    with pytest.raises(ValueError, match="model"):
        MemoryConfig("GPT-5", 10, bits_dir=4, bits_radius=6)
    with pytest.raises(ValueError, match="context"):
        MemoryConfig(list(MODELS)[0], 0, bits_dir=4, bits_radius=6)
    with pytest.raises(ValueError, match="direction"):
        MemoryConfig(list(MODELS)[0], 10, bits_dir=4, bits_radius=6, direction="diagonal")
    with pytest.raises(ValueError, match="batch"):
        MemoryConfig(list(MODELS)[0], 10, bits_dir=4, bits_radius=6, batch=0)
    double = memory_table(MemoryConfig(list(MODELS)[0], 4096, bits_dir=4, bits_radius=6, batch=2))
    assert double["bytes"].tolist() == pytest.approx([2 * b for b in t["bytes"]])


def test_system_readings():
    r = system_ratios(n=256)
    assert list(r.values())[0] == pytest.approx(1.775, abs=0.01)
    assert list(r.values())[1] == pytest.approx(1.596, abs=0.01)
    assert list(r.values())[2] == pytest.approx(2.394, abs=0.01)


def test_worst_case_finds_at_least_the_analytic_lower_bound():
    d, b = 128, 4
    w = worst_case(d, b, 6, kind="rim", n_random=32, steps=2, direction="all")
    lo, hi = direction_error_range(d, b)
    assert w.search_max >= 0.98 * lo  # r e_1 at r ~ 1
    assert w.direction_max <= np.sqrt(hi) + 1e-9  # no coordinate moves by more than half a step
    assert w.search_max > hcc_error_bound(b, 6)  # Theorem 6.1 fails at d = 128, b = 4
    assert analytic_candidates(8, 3, 4, "tanh").norm(dim=-1).max() <= 0.9 + 1e-12


def test_claims_are_registered_and_measured_quickly():
    keys = ["thm6.1-hcc-error", "thm6.1-direction-step", "thm6.2-key-bits", "thm6.2-system-memory"]
    assert all(k in CLAIMS and CLAIMS[k].page == "compression" for k in keys)
    ev = {k: CLAIMS[k].measure(True) for k in keys}
    assert ev["thm6.1-hcc-error"].verdict == FAILS  # worst keys break it in high d / low b
    assert ev["thm6.1-direction-step"].verdict == FAILS
    assert ev["thm6.2-key-bits"].verdict == FAILS  # one bit per key more than stated
    assert ev["thm6.2-key-bits"].measured_value == pytest.approx(259, abs=0.1)
    assert ev["thm6.2-system-memory"].verdict == CONDITIONAL
    for e in ev.values():
        assert len(e.x) == len(e.measured) == len(e.bound)


def test_attention_on_quantised_keys_converges_to_full_keys():
    keys = to_ball(torch.randn(64, 8, generator=torch.Generator().manual_seed(1)))
    eff = attention_effect(keys, bits=(2, 12), eps=(1e-2, 1.0), n_queries=16, bits_radius=12)
    assert eff.rel_error.shape == (2, 2, 2)
    assert (eff.rel_error[:, :, 1] < eff.rel_error[:, :, 0]).all()  # more bits, less error
    assert (eff.rel_error[:, :, 1] < 1e-2).all()
    assert (eff.top1_agreement[:, 1] == 1.0).all()
    with pytest.raises(ValueError, match="keys"):
        attention_effect(torch.full((3, 2), 0.9))


def test_figures_are_built_from_the_data(lab):
    assert isinstance(disk_figure(lab.disk_keys, {"HCC": ("hcc", lab.disk_hcc)}), go.Figure)
    h = error_histogram({"HCC": lab.errors}, lab.bound)
    assert any(s.x0 == lab.bound for s in h.layout.shapes)
    p = pareto_figure(lab.sweep, highlight=("now", 10.0))
    assert len(p.data) == 2 * len(QUANTIZERS) + 1  # mean and max per method, and the highlight
    r = ratio_figure(lab.ratio_by_dim)
    assert list(r.data[0].y) == list(lab.ratio_by_dim["formula"])
    m = memory_figure(memory_table(MemoryConfig(list(MODELS)[1], 1024, bits_dir=4, bits_radius=6)))
    assert len(m.data[0].x) == 4
    eff = attention_effect(to_ball(torch.randn(32, 4)), bits=(2, 4), eps=(0.1,), n_queries=8)
    assert len(attention_effect_figure(eff).data) == 2 * 2


def test_benchmark_reports_throughput_and_ratio():
    rep = throughput(2000, 64, methods=("hcc", "uniform"), repeats=1)
    hcc = rep["rows"][0]
    assert hcc["ratio_vs_float32"] >= 7.9 and hcc["quantize_s"] > 0 and rep["fp16_cast_s"] > 0
    with pytest.raises(ValueError, match="methods"):
        throughput(10, 4, methods=("zip",))


def test_cli_bench_compression_prints_one_json_document(capsys):
    import json

    from georesolver_core.__main__ import main

    assert main(["bench", "--compression", "--keys", "1000", "--dim", "16", "--repeats", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["n"] == 1000 and report["rows"][0]["method"] == "hcc"
    assert report["rows"][0]["under_target"] is None  # the 2 s target is only judged at 1,000,000 x 64
