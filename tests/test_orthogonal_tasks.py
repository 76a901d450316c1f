"""The seed-003 training tasks: matched models learn, configs are checked, the claims are registered."""

from __future__ import annotations

import pytest
import torch

from georesolver_core.claims import CLAIMS
from georesolver_core.claims.orthogonal_claims import (
    measure_ddl_defect,
    measure_midpoint_gradient,
    measure_spectrum,
)
from georesolver_core.extras.orthogonal_tasks import (
    TaskConfig,
    compare,
    expected_params,
    rotation_matrix,
    summarise,
)


def test_rotation_matrix_rotates_the_first_plane_only():
    r = rotation_matrix(4, 90.0, torch.float64)
    torch.testing.assert_close(
        r @ torch.tensor([1.0, 0, 0, 0], dtype=torch.float64),
        torch.tensor([0.0, 1.0, 0, 0], dtype=torch.float64),
        atol=1e-12,
        rtol=0,
    )
    assert float(torch.linalg.det(r)) == pytest.approx(1.0)


@pytest.mark.parametrize("task", ["negation", "rotation", "echo"])
def test_short_runs_learn_and_report_per_seed(task):
    cfg = TaskConfig(task=task, steps=12, batch=32, echo_steps=3, params=200)
    seen = []
    runs = compare(["hybrid", "additive"], cfg, seeds=(0, 1, 2), callback=lambda *a: seen.append(a))
    assert len(runs) == 6 and len(seen) == 6 * 3  # evaluations at steps 0, 10, 12
    for r in runs:
        assert r.params == expected_params(r.kind, cfg)
        assert r.history["step"][0] == 0 and r.history["step"][-1] == 12
        assert r.final["loss"] < r.history["loss"][0]  # the loss fell
    table = summarise(runs)
    assert table["hybrid"]["seeds"] == 3 and 0.0 < table["hybrid"]["gate mean"] < 1.0
    assert table["hybrid"]["gate std"] >= 0.0


@pytest.mark.parametrize(
    "field,value", [("task", "mirror"), ("dim", 1), ("angle_deg", 200.0), ("steps", 0), ("lr", 0.0)]
)
def test_bad_task_config_is_rejected_by_name(field, value):
    with pytest.raises(ValueError, match=field):
        TaskConfig(**{field: value}).check()


def test_orthogonal_claims_are_registered_and_the_cheap_ones_hold():
    keys = [k for k, c in CLAIMS.items() if c.page == "orthogonal"]
    assert {"orth-cayley-orthogonal", "orth-negation-gate", "orth-negation-cosine"} <= set(keys)
    for measure in (measure_spectrum, measure_ddl_defect, measure_midpoint_gradient):
        ev = measure(True)
        assert ev.verdict == "holds", ev.summary
        assert len(ev.x) == len(ev.measured) == len(ev.bound)
