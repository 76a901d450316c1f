"""The training claims: bounds of theory/training.py, and every claim measured quickly with a verdict."""

from __future__ import annotations

import numpy as np
import pytest

from georesolver_core.claims import CLAIMS, training_claims
from georesolver_core.theory import training as th
from georesolver_core.verdicts import VERDICTS


def test_claims_are_collected_and_not_self_registered():
    keys = [c.key for c in training_claims.CLAIMS]
    assert keys == [
        "thm7-1-hypergate-gradient",
        "thm3-noise-memorisation",
        "thm3-ida-noise-robust",
        "sec2-8-small-eps",
    ]
    assert all(k in CLAIMS for k in keys)


def test_gate_bound_and_vacuous_radius_agree():
    lam, w = 0.6, 2.0
    r = th.hypergate_vacuous_radius(lam, w)
    assert th.hypergate_gradient_lower_bound(lam, w, r) == pytest.approx(0.0)
    assert (
        th.hypergate_gradient_lower_bound(lam, w, 0.5 * r) > 0 > th.hypergate_gradient_lower_bound(lam, w, 2 * r)
    )
    assert np.isinf(th.hypergate_vacuous_radius(lam, 0.0))


def test_memorisation_bounds():
    assert th.softmax_memorisation_train_error([4, 16, 64], 16).tolist() == [1.0, 0.0, 0.0]
    assert th.softmax_memorisation_test_error(0.2) == pytest.approx(0.2)
    assert th.softmax_memorisation_test_error(0.2, n_classes=10) == pytest.approx(0.4)
    assert th.ida_noise_test_error_bound(0.1, 100, C=2.0) == pytest.approx(0.02 + 0.01)


def test_the_exact_vanishing_gate_has_zero_gradient_at_a_bounded_input():
    ex = training_claims.exact_vanishing_gate()
    assert ex["w_norm"] == pytest.approx(1.0) and ex["u_norm"] == pytest.approx(1.2785, abs=1e-4)
    assert ex["sigma_min"] <= 1e-12 and ex["bound"] < 0 < ex["lambda_min"]


def test_gate_gradient_claim_fails_at_the_exact_counterexample_and_finds_the_vacuous_regime():
    ev = training_claims.measure_gate_gradient(quick=True)
    inequality, conclusion = ev.parts
    assert inequality["verdict"] == "holds"  # Weyl's inequality: it cannot fail, the measurement must agree
    assert np.all(np.asarray(ev.measured) >= np.asarray(ev.bound) - 1e-9)
    # the conclusion (no vanishing gradient at bounded inputs) is judged on its own; the claim is the weaker
    # the conclusion (no vanishing gradient at bounded inputs) fails in every run: the exact counterexample
    # ||u|| = 1.28, ||W_g|| = 1 has a zero gradient through the gate, whatever the training length
    assert conclusion["verdict"] == "fails" and "exact counterexample" in conclusion["summary"]
    assert ev.verdict == "fails"
    # beyond the rescue radius the bound is vacuous (non-positive): the balls past it reach that regime
    rescue = ev.extra["rescue radius"]
    assert 0 < rescue < max(ev.x) and ev.extra["least inequality slack"] >= -1e-9
    assert all(b <= 1e-9 for x, b in zip(ev.x, ev.bound, strict=True) if x > rescue)


@pytest.mark.parametrize("name", ["measure_softmax_memorises", "measure_small_eps"])
def test_noise_claims_measure_with_a_verdict(name):
    ev = getattr(training_claims, name)(quick=True)
    assert ev.verdict in VERDICTS and len(ev.measured) == len(ev.bound) == len(ev.x)
    assert all(0 <= v <= 1 for v in ev.measured)
