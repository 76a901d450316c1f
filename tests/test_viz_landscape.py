"""Landscape figures without a browser: the descent animation keeps the landscape visible while it plays."""

from __future__ import annotations

import base64
import zlib

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


def test_play_keeps_the_filled_landscape_under_the_paths(study):
    """plotly.js drops the filled contour while frames play; an image of the same grid stays under it."""
    r = study.results["ida"]
    fig = landscape_figure(r.grid, r.paths, r.outcomes, title="t")
    assert fig.frames
    contour = next(t for t in fig.data if t.type == "contour")
    images = [im for im in fig.layout.images if im.xref == (contour.xaxis or "x")]
    assert len(images) == 1
    im = images[0]
    assert im.layer == "below" and im.sizing == "stretch"
    png = base64.b64decode(im.source.split(",", 1)[1])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    # IHDR: width and height are the grid's
    w, h = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (h, w) == np.asarray(contour.z).shape
    raw = zlib.decompress(png[png.index(b"IDAT") + 4 : png.index(b"IEND") - 8])
    assert len(raw) == h * (1 + 4 * w)
    x = np.asarray(contour.x)
    assert im.x < x[0] and im.x + im.sizex > x[-1]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_two_key_ratio_is_none_exactly_when_softmax_underflows(dtype):
    import torch

    s = two_key_study("poincare", eps=1e-3, delta=6.0, dtype=getattr(torch, dtype))
    if s.softmax.mu == 0:
        assert s.ratio is None
    else:
        assert s.ratio == pytest.approx(s.ida.mu / s.softmax.mu)
    assert s.curvature_small_eps == pytest.approx(4e-3 / 6.0**4)
