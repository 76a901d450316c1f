"""The labs of the two neighbour pages (seed 003's orthogonal residuals, seed 004's Hankel attention): configs
checked on construction, results the same measurements the claims make in ``extras``, read by field name."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from georesolver_core.extras.hankel_measure import decay_check, decay_sweep, output_error, rank_sweep
from georesolver_core.extras.orthogonal_lab import norm_drift
from georesolver_core.extras.orthogonal_tasks import compare, summarise
from georesolver_core.jobs.codec import decode_value, encode_value
from georesolver_core.labs.hankel import (
    EPS_LIST,
    DecayConfig,
    ErrorConfig,
    KernelConfig,
    SpeedConfig,
    decay_lab,
    error_lab,
    kernel_lab,
    speed_steps,
)
from georesolver_core.labs.orthogonal import (
    DriftConfig,
    OperatorConfig,
    ResidualCompareConfig,
    TaskConfig,
    compare_lab,
    compare_summary,
    drift_lab,
    operator_lab,
)
from georesolver_core.theory.hankel import rank_rule
from tests.steps import drain


def test_the_hankel_labs_measure_what_the_claims_measure():
    lab = decay_lab(DecayConfig(h_max=16, top=6))
    direct = decay_sweep([4, 8, 16], top=6)
    assert lab.decay == direct and lab.ranks == rank_sweep(EPS_LIST, direct) and lab.check == decay_check(direct)
    errors = error_lab(ErrorConfig(h_max=8, eps=1e-3))
    assert errors.hs == [4, 8] and errors.rank == rank_rule(1e-3)
    assert errors.errors == [output_error(h, rank_rule(1e-3)) for h in (4, 8)]
    view = kernel_lab(KernelConfig(length=32, split=8))
    assert view.kernel.shape == (8, 24) and view.length == 32
    steps, speed = drain(speed_steps(SpeedConfig((8, 16), 2, repeats=1)))
    assert speed.sizes == [8, 16] and speed.rank == 2 and len(speed.error) == 2
    assert [f for f, _, _ in steps] == [0.5, 1.0] and [p.sizes for _, _, p in steps] == [[8], [8, 16]]
    assert steps[-1][2].speedup == speed.speedup  # the last step's partial is the result (a Stop keeps them)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: DecayConfig(h_max=2), "h_max"),
        (lambda: DecayConfig(h_max=16, top=1), "top"),
        (lambda: ErrorConfig(h_max=16, eps=1.0), "eps"),
        (lambda: DriftConfig(("rotation",), (1, 2)), "kinds"),
        (lambda: DriftConfig(("cayley",), ()), "depths"),
        (lambda: DriftConfig(("cayley",), (1, 2), dim=1), "dim"),
        (lambda: DriftConfig(("cayley",), (1, 2), branch=-0.1), "branch"),
        (lambda: OperatorConfig(1.0, 1.5, 1.0, 0, 30, 60), "gamma"),
        (lambda: ResidualCompareConfig((), TaskConfig()), "kinds"),
        (lambda: ResidualCompareConfig(("cayley", "flip"), TaskConfig()), "kinds"),
        (lambda: ResidualCompareConfig(("cayley",), TaskConfig(task="sorting")), "task"),
        (lambda: ResidualCompareConfig(("cayley",), TaskConfig(steps=0)), "steps"),
        (lambda: ResidualCompareConfig(("cayley",), {"task": "negation"}), "task must be a TaskConfig"),
        (lambda: ResidualCompareConfig(("cayley",), TaskConfig(), seeds=()), "seeds"),
        (lambda: ResidualCompareConfig(("cayley",), TaskConfig(), seeds=(-1,)), "seeds"),
        (lambda: ResidualCompareConfig(("cayley",), TaskConfig(), eval_every=0), "eval_every"),
        (lambda: SpeedConfig((), 2), "sizes"),
        (lambda: SpeedConfig((8,), 0), "rank"),
        (lambda: SpeedConfig((8,), 2, threads=0), "threads"),
    ],
)
def test_neighbour_configs_name_the_bad_argument(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_the_orthogonal_labs_give_the_claims_numbers_by_name():
    drift = drift_lab(DriftConfig(("cayley", "additive"), (4, 1), dim=8, batch=8))
    assert drift.depths == [1, 4]
    assert drift.norm == norm_drift(["cayley", "additive"], [1, 4], dim=8, batch=8)
    assert drift.gain["cayley"] == pytest.approx([1.0, 1.0], abs=1e-4)
    view = operator_lab(OperatorConfig(1.0, 0.5, 2.0, 0, 30, 60))
    assert view.defects.cayley < 1e-12 and set(view.images) == {"Cayley Q", "Householder H", "hybrid G", "DDL"}


def test_the_comparison_lab_trains_what_compare_trains_and_survives_the_worker_codec():
    task = TaskConfig(task="negation", steps=20, batch=16)
    config = ResidualCompareConfig(["cayley", "hybrid"], task, seeds=[3], eval_every=10)
    assert config.kinds == ("cayley", "hybrid") and config.seeds == (3,)  # lists frozen to tuples
    assert decode_value(encode_value(config)) == config  # what a worker rebuilds is the same config
    reports, results = drain(compare_lab(config))
    assert len(reports) == 2 * (20 // 10 + 1) and reports[-1][0] == 1.0
    assert [(r["kind"], r["seed"]) for r in reports[-1][2]] == [("cayley", 3), ("hybrid", 3)]
    direct = compare(["cayley", "hybrid"], task, seeds=(3,))  # its eval_every is 10 too
    for ours, theirs in zip(results, direct, strict=True):  # same seeds, same runs (the gate is NaN off hybrid)
        assert ours.kind == theirs.kind and ours.history["step"] == theirs.history["step"]
        np.testing.assert_array_equal(ours.history["loss"], theirs.history["loss"])
        np.testing.assert_array_equal(ours.history["gate"], theirs.history["gate"])
    summary = compare_summary(results)
    assert list(summary.table["kind"]) == ["cayley", "hybrid"]
    expected = pd.DataFrame.from_dict(summarise(results), orient="index")
    pd.testing.assert_frame_equal(summary.table.set_index("kind"), expected.rename_axis("kind"))
    hybrid = results[1].final
    assert summary.hybrid.seeds == 1 and summary.hybrid.gate_std == 0.0  # one seed: no spread
    assert (summary.hybrid.gate_mean, summary.hybrid.cosine_mean) == (hybrid["gate"], hybrid["cosine"])
    assert compare_summary(results[:1]).hybrid is None  # no hybrid trained, none to compare with the seed
