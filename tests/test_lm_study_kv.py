"""The KV study's parts: the library quantiser (optimum-quanto) beside ours, and winners at equal bytes
judged on paired windows. (The whole KV study on a tiny study: tests/test_lm_study.py.)"""

from __future__ import annotations

import math

import pytest
import torch

from georesolver_core.compression import quantize
from georesolver_core.compression.library import quanto_quantize
from georesolver_core.train.lm_study import read_report
from georesolver_core.train.lm_study_kv import summary_words, winners

pytest.importorskip("optimum.quanto")


@pytest.mark.parametrize("d", [16, 32, 128])
@pytest.mark.parametrize("bits", [2, 4, 8])
def test_quanto_bytes_are_codes_and_float16_scales_and_its_error_matches_kivi_per_token(d, bits):
    keys = torch.randn(2, 3, 40, d, generator=torch.Generator().manual_seed(0))
    recon, nbytes = quanto_quantize(keys, bits)
    n = keys.numel() // d
    groups = (
        n if bits == 8 else n * (d // math.gcd(64, d))
    )  # qint8: a scale per key; else scale and shift per group
    assert nbytes == math.ceil(keys.numel() * bits / 8) + 2 * groups * (1 if bits == 8 else 2)
    assert recon.shape == keys.shape and recon.dtype == keys.dtype
    err = float((recon - keys).pow(2).mean())
    if bits < 8 and d <= 32:  # one asymmetric min-max group per key: the same quantiser as KIVI per token
        kivi = quantize(keys, "kivi-token", bits=bits, group=d, residual=0).dequantize()
        assert err == pytest.approx(float((kivi - keys).pow(2).mean()), rel=0.02)
    assert err < (keys.abs().max() / (2**bits - 1)) ** 2


@pytest.mark.parametrize(
    ("keys", "bits", "match"),
    [
        (torch.randn(4, 16), 3, "bits must be one of"),
        (torch.zeros(0, 16), 4, "non-empty"),
        (torch.full((4, 16), 1e6), 4, "float16"),
        (torch.tensor([[float("nan")] * 16]), 4, "finite"),
    ],
)
def test_quanto_refuses_what_it_cannot_store(keys, bits, match):
    with pytest.raises(ValueError, match=match):
        quanto_quantize(keys, bits)


def _row(method, bits, nbytes, losses):
    return {"method": method, "bits": bits, "bytes_per_key": nbytes, "loss_increase": sum(losses) / len(losses),
            "window_loss": losses}  # fmt: skip


def test_winners_compare_families_within_each_byte_budget_on_paired_windows():
    base = [0.0, 0.1, -0.1, 0.05, -0.05, 0.02]
    rows = [
        _row("hcc", 2, 8.5, [1.0 + x for x in base]),
        _row("hcc", 4, 16.5, [0.2 + x for x in base]),
        _row("kivi-channel", 2, 12.0, [0.5 + x for x in base]),  # clearly better than hcc 2 at 12 B
        _row("kivi-channel", 4, 20.0, [0.2 + x + 0.001 * (-1) ** i for i, x in enumerate(base)]),  # a tie
    ]
    got = winners(rows)
    assert [w["bytes_per_key"] for w in got] == [8.5, 12.0, 16.5, 20.0]
    assert got[0]["winner"] == "HCC" and got[0]["word"] == "only one fits" and got[0]["families"]["KIVI"] is None
    assert got[1]["winner"] == "KIVI" and got[1]["word"] == "smaller" and got[1]["ci95"][1] < 0
    assert got[1]["families"]["HCC"]["method"] == "hcc" and got[1]["families"]["HCC"]["bits"] == 2
    assert got[3]["word"] == "no measurable difference"  # HCC 4 bits vs KIVI 4 bits: within the windows' spread
    words = summary_words([{"winners": got}])
    assert "spread: HCC at 1, KIVI at 1;" in words and "budget: HCC at 1;" in words and "difference: 1" in words


def test_a_study_report_that_is_not_one_is_a_value_error(tmp_path):
    bad = tmp_path / "study.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not JSON"):
        read_report(bad)
    bad.write_text('{"schema": "other"}')
    with pytest.raises(ValueError, match="not an lm-study report"):
        read_report(bad)
    bad.write_text('{"schema": "georesolver-lm-study/1", "sizes": [{"name": "x"}]}')
    with pytest.raises(ValueError, match="lacks a field"):
        read_report(bad)
