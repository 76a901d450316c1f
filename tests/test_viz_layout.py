"""Figures that read at a glance: colour bars beside the plots, axes that end at the data, whole-number
ticks on positions and counts, log axes labelled by ``log_axis``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from georesolver_core.extras.hankel_measure import kernel_view
from georesolver_core.model.gate import GateValues
from georesolver_core.viz.hankel import kernel_figure
from georesolver_core.viz.hida import fp_pattern_figure
from georesolver_core.viz.style import count_dtick
from georesolver_core.viz.text import kv_pareto_figure
from georesolver_core.viz.training import gate_figure


@pytest.mark.parametrize("last", [1, 3, 7, 8, 9, 31, 63, 100, 1000, 4999])
def test_count_dtick_is_a_whole_1_2_5_step_with_at_most_8_ticks(last):
    tick = count_dtick(last)
    assert isinstance(tick, int) and tick >= 1 and last / tick <= 8
    assert int(str(tick)[0]) in (1, 2, 5) and set(str(tick)[1:]) <= {"0"}


def _gates(t: int, c: int) -> GateValues:
    g = torch.Generator().manual_seed(0)
    return GateValues(torch.rand(4, generator=g), torch.rand(1, t, generator=g), torch.rand(1, t, c, generator=g),
                      torch.rand(1, t, c, generator=g))  # fmt: skip


def test_the_hypergate_colorbar_sits_right_of_every_panel():
    fig = gate_figure(_gates(32, 64))
    right = max(ax.domain[1] for ax in fig.select_xaxes())
    assert fig.data[0].colorbar.x > right  # before: x = 0.66, over the token-gate column and its title


@pytest.mark.parametrize("t", [2, 3, 5])
def test_gate_positions_get_whole_ticks_on_short_contexts(t):
    fig = gate_figure(_gates(t, 16))
    assert fig.layout.yaxis.dtick == 1 and fig.layout.yaxis.tick0 == 0
    assert float(fig.layout.xaxis.dtick).is_integer()


@pytest.mark.parametrize("n", [8, 100, 128])
def test_the_fp_pattern_axes_end_at_n(n):
    fig = fp_pattern_figure(np.eye(n, dtype=bool))
    assert tuple(fig.layout.xaxis.range) == (-0.5, n - 0.5)  # before: autoscaled to -32..160 at n = 128
    assert tuple(fig.layout.yaxis.range) == (n - 0.5, -0.5)
    assert fig.layout.xaxis.constrain == "domain" and fig.layout.yaxis.constrain == "domain"


def test_hankel_heatmap_ticks_are_whole_tokens_at_small_lengths():
    fig = kernel_figure(kernel_view(16, 4))
    assert float(fig.layout.xaxis.dtick).is_integer() and float(fig.layout.yaxis.dtick).is_integer()


def test_kv_pareto_log_axis_is_labelled_by_log_axis():
    rows = [
        {"method": "hcc", "bytes_per_key": b, "loss_increase": 10.0**-e, "bits": e, "pareto": False}
        for b, e in ((4, 0), (8, 2), (16, 6))
    ]
    y = kv_pareto_figure(rows, {}).layout.yaxis
    assert y.type == "log" and y.dtick is not None  # plotly's default labelled 2 and 5 between decades


def test_the_dmg_stream_axis_ends_with_the_stream():
    from georesolver_core.viz.routing import dmg_stream_figure

    t = np.arange(800)
    fig = dmg_stream_figure(t, np.zeros(800), np.ones(800), [0, 500], np.ones(800, dtype=int), shift_at=500)
    assert tuple(fig.layout.xaxis.range) == (0.0, 799.0)


def test_play_speed_sets_the_frame_duration_and_bad_speeds_are_refused():
    from georesolver_core.viz.attention import eps_sweep_animation
    from georesolver_core.viz.style import ANIMATION_SPEEDS, frame_ms

    assert [frame_ms(80, s) for s in ANIMATION_SPEEDS] == [320, 160, 80, 40, 20]
    eps = np.array([1.0, 0.1, 0.01])
    ida, soft = np.full((3, 4), 0.25), np.full(4, 0.25)
    slow, fast = (eps_sweep_animation(eps, ida, soft, speed=s) for s in (0.5, 2.0))
    duration = lambda fig: fig.layout.updatemenus[0].buttons[0].args[1]["frame"]["duration"]  # noqa: E731
    assert duration(slow) == 700 and duration(fast) == 175
    for bad in (0, -1.0, float("nan"), 100.0, "2"):
        with pytest.raises(ValueError, match="speed"):
            frame_ms(80, bad)


def test_the_three_routers_share_one_y_title_and_a_neutral_legend():
    from georesolver_core.viz.routing import load_figure

    loads = {name: (name.upper(), [1, 2], [1, 1]) for name in ("gsr", "softmax", "expert-choice")}
    fig = load_figure(loads)
    titles = [ax.title.text for ax in fig.select_yaxes()]
    assert titles[0] and not any(titles[1:])  # before: the same title in every gap between panels
    legend = [t for t in fig.data if t.showlegend is not False]
    assert [t.name for t in legend] == ["requested (outline)", "kept after capacity (filled)"]
