"""Compression figures stay readable: bits written on one curve only, every point's bits in its hover."""

from __future__ import annotations

import pandas as pd

from georesolver_core.viz.compression import pareto_figure


def test_pareto_writes_the_bits_on_the_first_method_only():
    sweep = pd.DataFrame(
        [
            dict(method=m, bits=b, bytes_per_key=b * 8.0 + k, mean_sq_error=2.0**-b, max_sq_error=2.0 ** (1 - b))
            for k, m in enumerate(("hcc", "kivi-channel", "uniform"))
            for b in range(1, 5)
        ]
    )
    fig = pareto_figure(sweep)
    means = [t for t in fig.data if t.name.endswith("(mean)")]
    assert [("text" in t.mode) for t in means] == [True, False, False]
    assert all(list(t.text) == ["1", "2", "3", "4"] and "%{text}" in t.hovertemplate for t in means)
