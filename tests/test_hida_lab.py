"""The HIDA page's lab configs: checked on construction, naming the bad argument."""

from __future__ import annotations

import pytest

from georesolver_core.labs import hida


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: hida.DiskConfig(n_anchors=5, n_summaries=2, T=4), "n_anchors"),
        (lambda: hida.DiskConfig(n_anchors=1, n_summaries=2, T=0), "T must be"),
        (lambda: hida.ErrorSweepConfig(n=1), "n must be"),
        (lambda: hida.ErrorSweepConfig(eps=0.0), "eps must be"),
        (lambda: hida.ErrorSweepConfig(steps=1), "steps must be"),
    ],
)
def test_hida_configs_name_the_bad_argument(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_the_pattern_lab_reads_its_config():
    pattern = hida.fp_pattern(hida.PatternConfig(n=8, window=1, n_global=1, causal=True))
    assert pattern.mask.shape == (8, 8) and not pattern.mask[0, 7]  # causal: no key after the query
