"""Figure for the claims registry: a claim's measurement drawn against its bound."""

from __future__ import annotations

import textwrap

import plotly.graph_objects as go

from georesolver_core.viz.style import VERDICT_COLORS, base_layout, log_axis

# Claim figures are drawn down to half-width columns (Attention and Landscapes pages): about 360 px wide,
# of which base_layout's margins (60 px left, 20 px right) leave 280 px to the plot and to a legend below it.
# Titles, axis titles and legend entries are wrapped so that they fit there; plotly never wraps text.
NARROW_PLOT_PX = 280
TITLE_CHARS = 40  # a 17 px title line of 40 characters is about 330 px wide
TITLE_LINE_PX = 22  # height of one line of the title
TITLE_LINES = 2  # the lines a title usually takes, allowed for in ``height``: the key; the section and verdict
LABEL_CHARS = 36  # axis titles (14 px)
LEGEND_CHARS = 36  # legend entries (12 px)
LEGEND_CHAR_PX = 6.5  # mean width of a character of 12 px legend text
LEGEND_LINE_PX = 17  # height of one line of legend text
LEGEND_ROW_PAD_PX = 4  # plotly's gap between legend rows
LEGEND_SYMBOL_PX = 46  # line sample, its gap and the gap to the next entry


def wrap_text(text: str, width: int) -> str:
    """Break ``text`` into lines of at most ``width`` characters (at spaces) joined by plotly's ``<br>``."""
    return "<br>".join(textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)) or text


def legend_rows(names: list[str], width_px: int = NARROW_PLOT_PX) -> list[int]:
    """Lines of text in each row of a horizontal legend ``width_px`` wide, laid out the way plotly does it.

    ``names`` are the entries' (already wrapped) names. Plotly puts the entries in one row when they fit, and
    otherwise on a grid whose columns are as wide as the widest entry. An estimate from character counts,
    used to grow the figure so that the plot area keeps its height; plotly itself reserves the legend's
    real height.
    """
    if not names:
        return []
    lines = [name.count("<br>") + 1 for name in names]
    widths = [LEGEND_SYMBOL_PX + LEGEND_CHAR_PX * max(map(len, name.split("<br>"))) for name in names]
    per_row = len(names) if sum(widths) <= width_px else max(1, int(width_px // max(widths)))
    return [max(lines[i : i + per_row]) for i in range(0, len(names), per_row)]


def claim_figure(result: dict, height: int = 360) -> go.Figure:
    """Measured (markers + line) vs bound (dashed) across the claim's sweep; extra series dotted.

    ``result`` is one entry of ``claims.run_all()`` (or ``run_claim``). The title names the claim by its key,
    then its paper section and verdict. ``height`` is the figure's height without its legend and with a
    two-line title (a key and a section that fit one line each). The legend sits in a horizontal band at the
    bottom of the figure, below the x-axis title, and the figure grows by the legend's rows and the title's
    extra lines: neither the title nor the plot is covered, and the plot keeps its height whatever the
    number of series.
    """
    color = VERDICT_COLORS.get(result["verdict"], "#333333")
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=result["x"],
            y=result["bound"],
            mode="lines",
            name="bound (paper)",
            line=dict(color="black", dash="dash"),
        )
    )
    fig.add_trace(
        go.Scatter(
            x=result["x"], y=result["measured"], mode="lines+markers", name="measured", line=dict(color=color)
        )
    )
    for name, series in (result.get("extra") or {}).items():
        if isinstance(series, list) and len(series) == len(result["x"]):
            fig.add_trace(
                go.Scatter(
                    x=result["x"],
                    y=series,
                    mode="lines",
                    name=wrap_text(name, LEGEND_CHARS),
                    line=dict(dash="dot"),
                )
            )
    # Several claims share a section (the exact-retrieval lemma in three geometries, Theorem 2 for IDA and
    # softmax): the key names the claim, its geometry or kernel, and is what the claims table lists.
    title = "<br>".join(
        wrap_text(text, TITLE_CHARS) for text in (result["key"], f"{result['section']}: {result['verdict']}")
    )
    extra_title_px = TITLE_LINE_PX * (title.count("<br>") + 1 - TITLE_LINES)
    legend_px = sum(
        LEGEND_LINE_PX * lines + LEGEND_ROW_PAD_PX for lines in legend_rows([t.name for t in fig.data])
    )
    base_layout(
        fig,
        title,
        wrap_text(result["x_label"], LABEL_CHARS),
        wrap_text(result["y_label"], LABEL_CHARS),
        height + extra_title_px + legend_px,
    )
    fig.update_layout(
        # base_layout puts the legend above the plot, where the title is. At the bottom of the container, a
        # legend makes plotly reserve its real height below the margins (x ticks and title stay clear of it)
        # and wrap it into as many rows as the plot's width needs.
        legend=dict(
            orientation="h",
            xref="paper",
            yref="container",
            x=0.5,
            xanchor="center",
            y=0,
            yanchor="bottom",
            traceorder="normal",
        ),
        # The title stands on the plot and pushes the top margin up by as many lines as it has.
        title=dict(yref="paper", y=1, yanchor="bottom", pad=dict(b=10), automargin=True),
        hoverlabel=dict(namelength=-1),  # plotly cuts names to 15 characters in hover labels by default
        # base_layout's bottom margin makes room for a legend under the plot; here the legend sits in the
        # container's bottom band instead, and that extra margin would squeeze the plot up into the title.
        margin=dict(t=50, b=50),
    )
    for axis in ("x", "y"):
        if result.get(f"log_{axis}"):
            log_axis(fig, axis)
    return fig
