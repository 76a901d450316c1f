"""Presentation mode: the same figure with larger fonts, markers and lines; data and proportions kept."""

from __future__ import annotations

import numpy as np
import pytest

from georesolver_core.viz.home import arc_example, arc_figure
from georesolver_core.viz.style import PRESENTATION_SCALE, presentation


def test_presentation_scales_fonts_markers_and_lines_but_not_data():
    fig = arc_figure(arc_example(4, 0.05, 0, 1.2, "random"))
    big = presentation(fig)
    assert big.layout.font.size >= 1.4 * (fig.layout.font.size or 12)
    for a, b in zip(fig.data, big.data, strict=True):
        np.testing.assert_array_equal(np.asarray(a.x, dtype=float), np.asarray(b.x, dtype=float))
        if getattr(a, "marker", None) is not None and a.marker.size is not None:
            ratio = np.asarray(b.marker.size, dtype=float) / np.asarray(a.marker.size, dtype=float)
            assert ratio == pytest.approx(PRESENTATION_SCALE)  # sizes that encode weights keep their proportions
    assert fig.layout.font.size is None or fig.layout.font.size < big.layout.font.size  # the input is untouched
