"""Figures of the text task: bits-per-char curves, the attention heatmap, the KV Pareto front."""

import math

import numpy as np

from georesolver_core.viz.text import attention_heatmap, bits_curves_figure, kv_pareto_figure


def test_bits_curves_convert_nats_and_keep_integer_ticks():
    history = [
        {"step": s, "loss": math.log(2) * 3, "test_loss": math.log(2) * 2 if s == 3 else None} for s in (1, 2, 3)
    ]
    fig = bits_curves_figure([("#1 ida", history)])
    train, val = fig.data
    assert list(train.y) == [3.0, 3.0, 3.0] and list(val.y) == [2.0] and list(val.x) == [3]
    assert fig.layout.xaxis.dtick == 1


def test_attention_heatmap_labels_are_the_characters():
    fig = attention_heatmap(np.tril(np.ones((3, 3))) / np.arange(1, 4)[:, None], "a b")
    assert list(fig.layout.xaxis.ticktext) == ["a", "\u2423", "b"]
    assert fig.layout.yaxis.autorange == "reversed"


def test_pareto_rings_front_points_and_clips_non_positive_increases():
    rows = [
        {"method": "uniform", "bits": 2, "bytes_per_key": 2.0, "loss_increase": 0.1, "pareto": True},
        {"method": "uniform", "bits": 8, "bytes_per_key": 8.0, "loss_increase": -1e-5, "pareto": True},
        {"method": "hcc", "bits": 2, "bytes_per_key": 3.0, "loss_increase": 0.2, "pareto": False},
    ]
    fig = kv_pareto_figure(rows, {"uniform": "Uniform"})
    assert [t.name for t in fig.data] == ["Uniform", "hcc"]
    assert min(fig.data[0].y) == 1e-6 and list(fig.data[1].marker.size) == [7]


def test_gap_at_common_step_takes_the_last_step_both_evaluated():
    import math

    from georesolver_core.viz.text import gap_at_common_step

    a = [{"step": 25, "test_loss": math.log(2) * 3}, {"step": 50, "test_loss": math.log(2) * 2}, {"step": 60}]
    b = [{"step": 25, "test_loss": math.log(2) * 4}, {"step": 40, "test_loss": None}]
    assert gap_at_common_step(a, b) == (25, 3.0, 4.0)
    assert gap_at_common_step(a, []) is None
