"""The claim figure stays readable with any number of series: the legend sits in a band at the bottom of the
figure, under the x-axis title, the title stands on the plot, long texts are wrapped to fit a half-width
column, and the figure grows with the legend so the plot keeps its height. The last test draws the figure
with plotly.js in headless Chromium and measures that nothing overlaps."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from georesolver_core.geometry import GEOMETRIES
from georesolver_core.viz import claims as viz
from georesolver_core.viz.claims import claim_figure, legend_rows, wrap_text

LONG_NAME = "paper's softmax shape exp(-(1-cos theta)) eps^2/theta^2, constant fitted"


def _result(n_extra: int, *, section: str = "Theorem 2 (section 2.6)", verdict: str = "fails") -> dict:
    """A claim result shaped like ``run_claim``'s, with ``n_extra`` extra series (one with a long name)."""
    x = np.geomspace(1e-5, 1e-2, 7)
    extra = {f"extra series {i}" if i else LONG_NAME: (x ** (0.5 + 0.1 * i)).tolist() for i in range(n_extra)}
    return {
        "key": "test-claim", "section": section, "verdict": verdict,
        "x": x.tolist(), "measured": (x**0.6).tolist(), "bound": (10 * x).tolist(),
        "x_label": "regulariser eps (Delta = 1)", "y_label": "PL constant mu over the basin (per unit length^2)",
        "log_x": True, "log_y": True, "extra": extra,
    }  # fmt: skip


def _legend_px(fig) -> int:
    rows = legend_rows([t.name for t in fig.data])
    return sum(viz.LEGEND_LINE_PX * lines + viz.LEGEND_ROW_PAD_PX for lines in rows)


def test_five_extra_series_put_the_legend_below_the_plot_away_from_the_title():
    fig = claim_figure(_result(5), height=320)
    assert [t.name for t in fig.data][:2] == ["bound (paper)", "measured"] and len(fig.data) == 7
    legend, title = fig.layout.legend, fig.layout.title
    # Anchored to the bottom edge of the figure: plotly reserves its height below the bottom margin, which
    # keeps the x tick labels and the x-axis title clear of it.
    assert legend.orientation == "h"
    assert (legend.yref, legend.y, legend.yanchor) == ("container", 0, "bottom")
    assert fig.layout.margin.b >= 50
    # The title stands on the top of the plot area and pushes the top margin when it needs more room.
    assert (title.yref, title.y, title.yanchor, title.automargin) == ("paper", 1, "bottom", True)
    assert fig.layout.margin.t >= 50


def test_figure_grows_with_the_legend_so_the_plot_keeps_its_height():
    heights = []
    for n_extra in range(8):
        fig = claim_figure(_result(n_extra, section="Lemma 2 (section 2.5)"), height=320)
        assert fig.layout.height - _legend_px(fig) == 320  # one-line title: the rest is the legend
        heights.append(fig.layout.height)
    assert heights == sorted(heights) and heights[-1] > heights[0]
    # Seven series of which one wraps onto three lines need several rows in a half-width column.
    assert len(legend_rows([t.name for t in claim_figure(_result(5)).data])) >= 4


def test_long_texts_are_wrapped_to_fit_a_half_width_column():
    section = "Theorem 1 (section 2.3), softmax side"
    fig = claim_figure(_result(5, section=section, verdict="holds only under conditions"), height=320)
    title_lines = fig.layout.title.text.split("<br>")
    assert len(title_lines) == 3 and all(len(line) <= viz.TITLE_CHARS for line in title_lines)
    assert title_lines[0] == "test-claim"  # the key names the claim: several share a section
    assert " ".join(title_lines[1:]) == f"{section}: holds only under conditions"
    for trace in fig.data:
        assert all(len(line) <= viz.LEGEND_CHARS for line in trace.name.split("<br>"))
    assert " ".join(fig.data[2].name.split("<br>")) == LONG_NAME
    assert all(len(line) <= viz.LABEL_CHARS for line in fig.layout.yaxis.title.text.split("<br>"))
    assert fig.layout.hoverlabel.namelength == -1  # hover shows whole names
    # Two extra title lines make the figure taller by as much.
    one_line = claim_figure(_result(5), height=320)
    assert fig.layout.height - one_line.layout.height == viz.TITLE_LINE_PX


def test_claims_that_share_a_section_get_titles_that_name_their_geometry():
    section = "Exact-retrieval lemma (section 2.3) / Lemma 5.1(a)"
    titles = {
        geo: claim_figure(
            _result(1, section=section, verdict="holds") | {"key": f"lemma2.3-exact-retrieval-{geo}"}
        ).layout.title.text.replace("<br>", " ")
        for geo in GEOMETRIES
    }
    assert len(set(titles.values())) == len(GEOMETRIES)
    for geo, title in titles.items():
        assert geo in title and title.endswith(f"{section}: holds"), title


def test_extra_series_of_another_length_are_left_out_and_axes_follow_the_result():
    result = _result(2)
    result["extra"]["a scalar"] = 3.0
    result["extra"]["too short"] = [1.0, 2.0]
    fig = claim_figure(result)
    assert len(fig.data) == 4
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    result.update(log_x=False, log_y=False)
    fig = claim_figure(result)
    assert fig.layout.xaxis.type is None and fig.layout.yaxis.type is None


def test_legend_rows_follow_plotly_layout():
    assert legend_rows([]) == []
    assert legend_rows(["bound (paper)", "measured"]) == [1]  # both fit in one row
    # Too wide for one row: a grid of columns as wide as the widest entry, as tall as its tallest entry.
    rows = legend_rows(["a", "b", "c<br>d", "e"], width_px=int(2 * (viz.LEGEND_SYMBOL_PX + viz.LEGEND_CHAR_PX)))
    assert rows == [1, 2]
    assert legend_rows(["x" * 36] * 3, width_px=100) == [1, 1, 1]  # wider than the legend: one per row


def test_wrap_text_breaks_at_spaces_only():
    assert wrap_text("short", 40) == "short"
    wrapped = wrap_text("a b c d e f", 3)
    assert wrapped == "a b<br>c d<br>e f"
    assert wrap_text("unbreakable-word-longer-than-width", 5) == "unbreakable-word-longer-than-width"
    assert wrap_text("", 5) == ""


CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or shutil.which("chromium-browser")

MEASURE = """
(id) => {
  const root = document.getElementById(id);
  const box = (sel) => {
    const r = root.querySelector(sel).getBoundingClientRect();
    return [r.left, r.top, r.right, r.bottom];
  };
  return {figure: box('.main-svg'), title: box('.gtitle'), legend: box('.legend'), plot: box('.nsewdrag'),
          xtitle: box('.xtitle'), xticks: box('.xaxislayer-above')};
}
"""


def _overlap(a, b) -> bool:
    return a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5


@pytest.mark.browser
@pytest.mark.parametrize("width", [360, 720])
def test_drawn_by_plotly_nothing_overlaps(width, tmp_path):
    if not CHROMIUM:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    import plotly
    from playwright.sync_api import sync_playwright

    from tests.test_browser import CHROMIUM_ARGS

    figures = {
        "five": claim_figure(_result(5), height=320),
        "long_title": claim_figure(_result(3, section="Theorem 1 (section 2.3), softmax side"), height=320),
    }
    js = (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_text()
    divs = "".join(f"<div id='{k}' style='width:{width}px'></div>" for k in figures)
    calls = "".join(
        f"Plotly.newPlot('{k}', {f.to_json()}.data, Object.assign({f.to_json()}.layout, {{width: {width}}}));"
        for k, f in figures.items()
    )
    page_file = tmp_path / "figures.html"
    page_file.write_text(f"<html><head><meta charset='utf-8'><script>{js}</script></head><body>{divs}"
                         f"<script>{calls}</script></body></html>")  # fmt: skip
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1000, "height": 1500})
            page.goto(page_file.as_uri(), timeout=120_000)
            page.wait_for_selector(".legend", timeout=60_000)
            for key in figures:
                box = page.evaluate(MEASURE, key)
                for other in ("title", "plot", "xtitle", "xticks"):
                    assert not _overlap(box["legend"], box[other]), (key, other, box)
                assert not _overlap(box["title"], box["plot"]), (key, box)
                fig = box["figure"]
                for part in ("title", "legend"):  # inside the figure, not cut at an edge
                    b = box[part]
                    assert fig[0] - 0.5 <= b[0] and b[2] <= fig[2] + 0.5, (key, part, box)
                    assert fig[1] - 0.5 <= b[1] and b[3] <= fig[3] + 0.5, (key, part, box)
                assert box["plot"][3] - box["plot"][1] >= 150, (key, box)  # the plot keeps a useful height
        finally:
            browser.close()
