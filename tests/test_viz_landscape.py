"""Landscape figures without a browser: the descent animation keeps the landscape visible while it plays."""

from __future__ import annotations

import numpy as np
import pytest

from georesolver_core.landscape.study import descent_study, max_descent_step, patch_extent, two_key_study
from georesolver_core.viz.landscape import landscape_figure


@pytest.fixture(scope="module")
def study():
    return descent_study("euclidean", n=4, eps=1e-2, resolution=20, n_starts=3, steps=20)


def test_descent_study_compares_both_kernels_on_the_same_keys(study):
    assert set(study.results) == {"ida", "softmax"}
    ida, soft = study.results["ida"], study.results["softmax"]
    np.testing.assert_array_equal(ida.grid.keys_uv, soft.grid.keys_uv)
    assert 0 <= ida.reached <= len(ida.outcomes) == 3
    assert study.max_step == pytest.approx(0.04 * study.extent)
    assert patch_extent("poincare", 4.0) == pytest.approx(patch_extent("poincare", 1.0) / 2)
    assert max_descent_step(2.0) == pytest.approx(0.08)


def test_play_redraws_the_contour_with_every_frame(study):
    """plotly.js drops a filled contour that a frame does not name, lines and all: every frame names it."""
    r = study.results["ida"]
    fig = landscape_figure(r.grid, r.paths, r.outcomes, title="t")
    assert fig.frames and not fig.layout.images
    contour = next(i for i, t in enumerate(fig.data) if t.type == "contour")
    for frame in fig.frames:
        assert contour in frame.traces
        drawn = frame.data[list(frame.traces).index(contour)]
        assert np.array_equal(np.asarray(drawn.z, float), np.asarray(fig.data[contour].z, float), equal_nan=True)
    controls = fig.layout.sliders[0].y, fig.layout.updatemenus[0].y, fig.layout.legend.y
    assert controls[0] <= -0.1 and controls[2] < controls[1]  # slider under the axis titles, legend under both


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_two_key_ratio_is_none_exactly_when_softmax_underflows(dtype):
    import torch

    s = two_key_study("poincare", eps=1e-3, delta=6.0, dtype=getattr(torch, dtype))
    if s.softmax.mu == 0:
        assert s.ratio is None
    else:
        assert s.ratio == pytest.approx(s.ida.mu / s.softmax.mu)
    assert s.curvature_small_eps == pytest.approx(4e-3 / 6.0**4)
