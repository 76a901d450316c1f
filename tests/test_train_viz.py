"""Figure builders of the Training lab: pure functions of data, checked without a browser."""

from __future__ import annotations

import torch

from georesolver_core.model.gate import GateBound, GateValues
from georesolver_core.viz.training import curve_from_history, curves_figure, gate_bound_figure, gate_figure


def test_curves_overlay_every_run_with_loss_and_accuracy():
    hist = [{"step": s, "loss": 1.0 / s, "test_accuracy": (0.5 if s % 2 == 0 else None)} for s in range(1, 5)]
    curves = [curve_from_history("#1 a", hist), curve_from_history("#2 b", hist[:2])]
    assert curves[0].eval_steps == [2, 4] and curves[0].test_accuracy == [0.5, 0.5]
    fig = curves_figure(curves)
    assert len(fig.data) == 4  # loss + accuracy per run
    assert fig.layout.yaxis.type == "log" and fig.layout.xaxis.title.text == "optimiser step"
    assert list(fig.data[0].y) == [1.0, 0.5, 1 / 3, 0.25]


def test_gate_figure_draws_the_three_levels():
    values = GateValues(torch.tensor([0.2, 0.9]), torch.rand(3, 5), torch.rand(3, 5, 8), torch.randn(3, 5, 8))
    fig = gate_figure(values, example=1)
    heat, beta, kappa = fig.data
    assert torch.allclose(torch.tensor(heat.z).float(), values.dim_gate[1], atol=1e-6)
    assert len(beta.z) == 5 and list(kappa.y) == [0.2, 0.9]


def test_gate_bound_figure_sorts_by_norm():
    gb = GateBound(
        torch.tensor([3.0, 1.0]),
        torch.tensor([0.1, 0.5]),
        torch.tensor([0.6, 0.7]),
        torch.tensor([-0.1, 0.4]),
        1.0,
    )
    fig = gate_bound_figure(gb)
    assert list(fig.data[0].x) == [1.0, 3.0] and list(fig.data[0].y) == [0.5, 0.1]
    assert bool(gb.vacuous[0]) and not bool(gb.vacuous[1])
