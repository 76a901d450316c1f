"""Section 5.2(A), hyperbolic capacity: the volume formulas, the packing measurement's laws, the claim."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from georesolver_core.claims import CLAIMS, HOLDS, VERDICTS, run_claim, verdict_inequality, verdict_scaling
from georesolver_core.claims.geometry_claims import (
    PAPER_RADIUS,
    greedy_packing,
    packing_counts,
    uniform_in_geodesic_ball,
)
from georesolver_core.geometry import GEOMETRIES, ball_volume, pairwise_distance
from georesolver_core.theory.geometry import (
    euclidean_ball_volume,
    hyperbolic_ball_volume,
    hyperbolic_volume_asymptote,
    packing_number_bound,
    unit_sphere_area,
)
from tests.app_pages import registered_pages

KEY = "sec5.2a-volume-capacity"


@pytest.fixture(scope="module")
def quick_result():
    return run_claim(KEY, quick=True)


# --- theory: the volume formulas --------------------------------------------------------------------------


def test_volumes_match_hand_computed_closed_forms():
    # d = 2: 2 pi (cosh R - 1); d = 3: pi (sinh 2R - 2R); at R = 1 these are 3.412276... and 5.109327...
    assert hyperbolic_ball_volume(1.0, 2) == pytest.approx(2 * math.pi * (math.cosh(1.0) - 1.0), rel=1e-12)
    assert hyperbolic_ball_volume(1.0, 2) == pytest.approx(3.4122762653, rel=1e-9)
    assert hyperbolic_ball_volume(1.0, 3) == pytest.approx(math.pi * (math.sinh(2.0) - 2.0), rel=1e-12)
    assert euclidean_ball_volume(2.0, 3) == pytest.approx(4 / 3 * math.pi * 8, rel=1e-12)
    assert unit_sphere_area(2) == pytest.approx(2 * math.pi) and unit_sphere_area(3) == pytest.approx(4 * math.pi)
    # curvature -c: V_c(R) = c^{-d/2} V_1(sqrt(c) R)
    assert hyperbolic_ball_volume(1.0, 2, c=4.0) == pytest.approx(hyperbolic_ball_volume(2.0, 2) / 4, rel=1e-12)


@pytest.mark.parametrize("d", [2, 3, 5])
def test_volume_limits_flat_when_small_exponential_when_large(d):
    # small R: curvature is invisible, V_H / V_E = 1 + O(R^2)
    assert hyperbolic_ball_volume(1e-3, d) / euclidean_ball_volume(1e-3, d) == pytest.approx(1.0, abs=1e-5)
    # large R: V_H ~ omega_{d-1} e^{(d-1)R} / ((d-1) 2^{d-1}), the paper's e^{(d-1)R}
    # (the first correction is relative -2 e^{-R} at d = 2)
    assert hyperbolic_ball_volume(12.0, d) / hyperbolic_volume_asymptote(12.0, d) == pytest.approx(1.0, rel=1e-4)
    r = np.array([14.0, 15.0, 16.0])
    rate = np.diff(np.log(hyperbolic_ball_volume(r, d)))
    assert np.allclose(rate, d - 1, atol=1e-5)


def test_packing_bound_by_hand():
    # flat: ((R + s/2)/(s/2))^d = (1.5/0.5)^2 = 9; ball: (cosh 1.5 - 1)/(cosh 0.5 - 1) = 10.5967
    assert packing_number_bound(1.0, 1.0, 2, volume=ball_volume("euclidean")) == pytest.approx(9.0)
    want = (math.cosh(1.5) - 1.0) / (math.cosh(0.5) - 1.0)
    assert packing_number_bound(1.0, 1.0, 2, volume=ball_volume("poincare")) == pytest.approx(want, rel=1e-12)
    assert want == pytest.approx(10.5967, abs=1e-4)
    with pytest.raises(ValueError, match="geometry must be"):
        packing_number_bound(1.0, 1.0, 2, volume=ball_volume("sphere"))
    with pytest.raises(ValueError, match="s must be > 0"):
        packing_number_bound(1.0, 0.0, 2, volume=ball_volume("euclidean"))


# --- the measurement's laws -------------------------------------------------------------------------------


@pytest.mark.parametrize("geometry", [g for g, entry in GEOMETRIES.items() if entry.ball_volume])
def test_sampler_is_uniform_by_volume(geometry):
    """The fraction of samples within radius r is V(r)/V(r_max), although the sampler never uses V."""
    n, d, r_max = 4000, 2, 3.0
    x = uniform_in_geodesic_ball(n, d, r_max, geometry=geometry, generator=torch.Generator().manual_seed(1))
    r = pairwise_distance(torch.zeros(1, d, dtype=x.dtype), x, geometry=geometry)[0].numpy()
    assert x.shape == (n, d) and r.max() <= r_max + 1e-9
    vol = GEOMETRIES[geometry].ball_volume
    for r_in in (1.5, 2.5):
        p = float(vol(r_in, d) / vol(r_max, d))
        assert abs((r <= r_in).mean() - p) < 4 * math.sqrt(p * (1 - p) / n)


@pytest.mark.parametrize("geometry", [g for g, entry in GEOMETRIES.items() if entry.ball_volume])
def test_greedy_packing_is_separated_and_maximal(geometry):
    s = 1.0
    x = uniform_in_geodesic_ball(600, 2, 2.5, geometry=geometry, generator=torch.Generator().manual_seed(2))
    kept, radius = greedy_packing(x, s, geometry=geometry, batch=64)
    dist = pairwise_distance(kept, kept, geometry=geometry)
    dist.fill_diagonal_(math.inf)
    assert float(dist.min()) >= s  # separated
    assert float(pairwise_distance(x, kept, geometry=geometry).min(1).values.max()) < s  # maximal
    assert np.all(np.diff(radius) >= 0)  # packed inside out
    assert len(kept) <= packing_number_bound(2.5, s, 2, volume=ball_volume(geometry))


def test_packing_counts_are_deterministic_and_grow_with_radius():
    radii = np.array([1.0, 2.0, 3.0])
    a = packing_counts(radii, 2, 1.0, geometry="poincare", density=10.0)
    b = packing_counts(radii, 2, 1.0, geometry="poincare", density=10.0)
    assert a.tolist() == b.tolist() and np.all(np.diff(a) >= 0) and a[-1] > a[0]


def test_measured_capacity_obeys_the_volume_laws(quick_result):
    r = quick_result
    x, hyp, bound = np.array(r["x"]), np.array(r["measured"]), np.array(r["bound"])
    flat = np.array(r["extra"]["flat R^d: measured"])
    # a packing never beats the volume bound, in either space
    assert np.all(hyp <= bound) and np.all(flat <= np.array(r["extra"]["flat R^d: volume bound"]))
    assert np.all(np.diff(hyp) >= 0) and np.all(np.diff(flat) >= 0)
    # the ball outgrows the plane: more keys at the largest radius, and a growing advantage
    assert hyp[-1] > 2 * flat[-1] and hyp[-1] / flat[-1] > hyp[2] / flat[2]
    # the verdict is the one the registry's rules give on these numbers
    fit = x >= 2.0
    v_exp, _, rate = verdict_scaling(np.exp(x[fit]), hyp[fit], exponent=1)
    v_pol, _, _ = verdict_scaling(x[fit], flat[fit], exponent=2)
    v_bound, _ = verdict_inequality(hyp, bound, relation="le", rtol=0.0)
    assert r["measured_value"] == pytest.approx(rate) and r["bound_value"] == 1.0
    worst = max((v_exp, v_pol, v_bound), key=VERDICTS.index)
    assert r["verdict"] == worst
    assert r["extra"]["keys within the paper's projection radius"] <= np.interp(PAPER_RADIUS, x, hyp) + 1


# --- the registry -----------------------------------------------------------------------------------------


def test_claim_is_registered_for_a_real_page():
    assert KEY in CLAIMS
    claim = CLAIMS[KEY]
    assert claim.section == "Section 5.2(A)" and "e^{(d-1)R}" in claim.statement and "R^d" in claim.statement
    assert claim.page in {row[3] for row in registered_pages()}


def test_run_claim_quick_returns_a_verdict(quick_result):
    r = quick_result
    assert r["key"] == KEY and r["verdict"] in VERDICTS
    assert len(r["x"]) == len(r["measured"]) == len(r["bound"]) == len(r["extra"]["flat R^d: measured"]) > 0
    assert r["summary"] and r["bound_text"]
    # measured on this machine: N_H grows like e^(1.1 R) at d = 2, where the paper says e^((d-1)R)
    assert r["verdict"] == HOLDS and abs(r["measured_value"] - 1.0) < 0.25
