"""The seeds' smaller statements: every claim runs in quick mode and gives the shipped full run's verdict (or
says the quick settings cannot decide), and the closed forms in theory.statements obey their own laws."""

import math
from pathlib import Path

import numpy as np
import pytest

from georesolver_core.claims import CLAIMS, NOT_DECIDED, QUICK_UNDECIDED, VERDICTS, run_claim
from georesolver_core.claims.report import load_report
from georesolver_core.claims.statements import STATEMENT_MODULES
from georesolver_core.theory import statements as th

KEYS = [c.key for m in STATEMENT_MODULES for c in m.CLAIMS]
SHIPPED = {
    r["key"]: r["verdict"]
    for r in load_report(Path(__file__).resolve().parent.parent / "assets" / "claims_report.json")["claims"]
}


def test_statement_claims_are_registered():
    assert KEYS and all(k in CLAIMS for k in KEYS)
    assert len(set(KEYS)) == len(KEYS)


@pytest.mark.parametrize("key", KEYS)
def test_statement_claim_quick(key):
    out = run_claim(key, quick=True)
    # the quick run gives the shipped full run's verdict, or says it cannot decide
    if key in SHIPPED:
        assert out["verdict"] == (NOT_DECIDED if key in QUICK_UNDECIDED else SHIPPED[key])
    else:  # a claim of a newly registered geometry: measured, with no shipped verdict to agree with yet
        assert out["verdict"] in (*VERDICTS, NOT_DECIDED)
    assert out["summary"].strip()
    assert len(out["x"]) == len(out["measured"]) == len(out["bound"]) > 0
    assert out["measured_value"] is not None and out["bound_value"] is not None


def test_gradient_peak_is_the_maximum():
    for eps in (1e-4, 1e-2, 1.0):
        a = np.sqrt(np.linspace(1e-6, 10, 200001) * eps)
        f = a / (a * a + eps) ** 2
        assert math.isclose(f.max(), th.inverse_square_gradient_peak(eps), rel_tol=1e-6)
        assert math.isclose(a[f.argmax()] ** 2, th.inverse_square_gradient_argmax_sq(eps), rel_tol=1e-3)


def test_taylor_remainder_bound_covers_remainder():
    eps = 0.1
    q = np.linspace(0.05, 0.3, 50)
    rem = np.abs(1 / (q**2 + eps) - th.kernel_taylor_third_order(q, eps))
    assert np.all(rem <= th.kernel_taylor_remainder_bound(q, eps) * (1 + 1e-9))


def test_effective_rank_formula_limits():
    # no off-diagonal mass: rank n; equal to the tail formula's definition
    assert th.effective_rank_from_offdiagonal(10, 0.1, 0.0) == pytest.approx(10.0)
    assert th.effective_rank_from_offdiagonal(10, 0.1, 1e12) < 1e-6


def test_concentration_log_tail_matches_tail():
    t = np.array([0.1, 1.0, 3.0])
    assert np.allclose(np.log(th.concentration_tail_paper(t, 4, 0.2)), th.concentration_log_tail_paper(t, 4, 0.2))


def test_far_key_and_frobenius_bounds():
    assert th.far_key_relative_bound(1e-2, 1.0) == pytest.approx(1e-2)
    # n = 2, one pair at d_min: ||E||_F^2 = 2 / (d_min^2 + eps)^2
    assert th.kernel_frobenius_bound(2, 1.0, 0.5) == pytest.approx(2 / 1.5**2)
    assert th.gershgorin_offdiagonal_bound(5, 2.0) == pytest.approx(1.0)


def test_sphere_and_hyperbolic_forms():
    assert th.sphere_logit_gap(np.pi, 1.0) == pytest.approx(2.0)
    assert th.sphere_w1_second_derivative_paper(1e-2, 1.0) == pytest.approx(-4e-2)
    assert th.hyperbolic_lower_bound_paper(0.5, 0.0) == pytest.approx(0.5)
    assert th.poincare_volume_element(0.0, 3) == pytest.approx(8.0)


def test_plunge_bound_grows_logarithmically():
    b = [th.plunge_bound(1e-3, ca) for ca in (1e1, 1e3, 1e5)]
    assert b[0] <= b[1] <= b[2]
    # beyond c a = L~ the bound is L~ (1 + ln(c a / L~)): equal steps per decade of c a
    assert b[2] - b[1] == pytest.approx(b[1] - b[0])


def test_power_law_tail_bound_covers_power_law():
    k = np.arange(1, 100001, dtype=float)
    for alpha in (0.6, 1.0, 2.0):
        lam = 3.0 * k**-alpha
        for m in (1, 10, 100):
            assert np.sum(lam[m:] ** 2) <= th.power_law_tail_bound(m, 3.0, alpha)


def test_noise_nystrom_and_sphere_ratio_forms():
    assert th.memoriser_test_error_paper(0.1) == pytest.approx(0.2)
    # binary: two flips differ with probability 2 eta (1 - eta)
    assert th.noisy_pair_disagreement(0.1, 2) == pytest.approx(2 * 0.1 * 0.9)
    assert th.nystrom_frobenius_step_bound(2.0, 3.0, 0.5) == pytest.approx(3.0)
    assert th.pl_ratio_sphere_omega(np.pi / 2) == pytest.approx(np.e / (np.pi / 2) ** 2)


def test_per_sample_error_is_the_exact_expectation():
    import torch

    from georesolver_core.claims.statements_noise import per_sample_error

    g = torch.Generator().manual_seed(0)
    x = torch.randn(6, 3, generator=g, dtype=torch.float64)
    y = torch.tensor([1.0, -1, 1, 1, -1, -1], dtype=torch.float64)
    exact, _ = per_sample_error(x, y, 0.2, 0.1)
    flips = torch.where(torch.rand(200000, 6, generator=g) < 0.2, -1.0, 1.0).to(torch.float64)
    from georesolver_core.attention import ida_weights

    mc = ((y - (flips * y) @ ida_weights(x, x, eps=0.1).T) ** 2).mean(0).numpy()
    assert np.allclose(exact, mc, rtol=0.02, atol=1e-3)
