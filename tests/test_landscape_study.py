"""The Landscapes page's studies: one call per view returns what the page draws, measured and predicted."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from georesolver_core.attention.layer import KERNEL_CHOICES
from georesolver_core.landscape import OUTCOMES, LossSetup, TwoKeyLine, hessian_spectrum, mu_sweep
from georesolver_core.landscape.study import (
    SWEEP_EPS,
    descent_study,
    hessian_study,
    hessian_table,
    pl_sweeps,
    softmax_pl_theta,
)
from georesolver_core.theory import landscape as th


def test_pl_sweeps_match_mu_sweep_and_the_paper_shapes():
    sw = pl_sweeps("euclidean", eps=1e-3, delta=1.0, tau=0.7, n_basin=101)
    np.testing.assert_allclose(sw.eps, SWEEP_EPS)
    for k in KERNEL_CHOICES:
        by_eps = mu_sweep(k, "euclidean", vary="eps", values=sw.eps, delta=1.0, tau=0.7, n_basin=101)
        np.testing.assert_allclose(sw.mu_by_eps[k], by_eps, rtol=1e-12)
    by_delta = mu_sweep("ida", "euclidean", vary="delta", values=sw.delta, eps=1e-3, tau=0.7, n_basin=101)
    np.testing.assert_allclose(sw.mu_by_delta["ida"], by_delta, rtol=1e-12)
    np.testing.assert_allclose(sw.ida_by_eps, th.pl_ida_theta(sw.eps, 1.0))
    np.testing.assert_allclose(sw.ida_by_delta, th.pl_ida_theta(1e-3, sw.delta))
    np.testing.assert_allclose(sw.softmax_by_delta, th.pl_softmax_theta(1e-3, sw.delta, 0.7))
    assert set(sw.to_dict()) == {"eps", "mu_by_eps", "delta", "mu_by_delta"}


def test_the_sphere_sweep_stays_below_pi_and_uses_theorem_8_1():
    assert softmax_pl_theta("sphere", 1e-3, 1.0, 0.7) == pytest.approx(
        float(th.pl_softmax_sphere_theta(1e-3, 1.0))
    )
    assert softmax_pl_theta("poincare", 1e-3, 1.0, 0.7) == pytest.approx(
        float(th.pl_softmax_theta(1e-3, 1.0, 0.7))
    )
    sw = pl_sweeps("sphere", eps=1e-3, delta=1.0, n_basin=51)
    assert sw.delta.max() < math.pi and np.isfinite(sw.mu_by_delta["ida"]).all()


def test_descent_study_tables_agree_with_its_results():
    study = descent_study("euclidean", n=3, eps=1e-2, resolution=20, n_starts=3, steps=20)
    rows = study.summary()
    assert [r["kernel"] for r in rows] == list(study.results)
    for row in rows:
        res = study.results[row["kernel"]]
        assert row["starts reaching the global minimum"] == res.reached
        assert row["confirmed by descent"] == res.confirmed
        outcomes = res.outcome_rows()
        assert [o["start"] for o in outcomes] == [1, 2, 3]
        assert all(o["meaning"] == OUTCOMES[o["outcome"]] for o in outcomes)
        np.testing.assert_array_equal([o["final loss"] for o in outcomes], res.paths.final_loss)
    data = study.to_dict("ida")
    assert data["kernel"] == "ida" and np.isfinite(data["loss"]).all()  # NaN outside the patch becomes -1


def test_hessian_table_has_one_row_per_kernel_and_n():
    spec = hessian_study("euclidean", eps=1e-2, rho=1.0, n_max=4)
    rows = hessian_table(spec)
    assert [(r["kernel"], r["n"]) for r in rows] == [(k, n) for k in spec for n in (2, 4)]
    assert all(r["spread"] >= 1.0 for r in rows)


def test_hessian_spectrum_summaries_follow_its_eigenvalues():
    spec = hessian_spectrum(4, kernel="softmax")
    mag = np.abs(spec.eigenvalues)
    assert spec.curvature == mag.max()
    assert spec.n_flat == int((mag <= 1e-9 * mag.max()).sum()) >= 1  # softmax: the translation direction
    assert spec.n_negative == int((spec.eigenvalues < -1e-9 * mag.max()).sum())
    live = mag[mag > 1e-9 * mag.max()]
    assert spec.spread == pytest.approx(live.max() / live.min())


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        (dict(kernel="relu"), "kernel must be one of"),
        (dict(eps=0.0), "eps must be"),
        (dict(tau=0.0), "tau must be"),
        (dict(geometry="torus"), "geometry must be one of"),
        (dict(target=-1), r"target must be an integer >= 0 \(got -1\)"),
    ],
)
def test_loss_setup_rejects_bad_fields(fields, match):
    with pytest.raises(ValueError, match=match):
        LossSetup(**(dict(kernel="ida", eps=1e-3) | fields))


def test_two_key_line_variants_keep_the_rest():
    line = TwoKeyLine("poincare", eps=1e-3, delta=1.0, c=2.0)
    wider = replace(line, delta=2.0)
    assert (wider.delta, wider.c, wider.eps) == (2.0, 2.0, 1e-3)
    assert line.loss("softmax") == LossSetup("softmax", 1e-3, "poincare", c=2.0)
    with pytest.raises(ValueError, match="delta"):
        replace(line, delta=-1.0)
