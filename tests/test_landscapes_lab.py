"""The Landscapes page's lab: the two-key line (the sphere's angle clamped, a failed precision falling
back to float64), the sweeps, descent, Lemma 2's Hessian table and the trained model's slice."""

from __future__ import annotations

import math

import pytest

from georesolver_core.labs.landscapes import (
    SPHERE_FALLBACK_DELTA,
    DescentConfig,
    DescentSetup,
    HessianConfig,
    SliceConfig,
    TwoKeyConfig,
    descent_lab,
    hessian_lab,
    pl_sweep_lab,
    slice_lab,
    slice_model_config,
    train_slice_model,
    two_key_lab,
)
from georesolver_core.landscape.study import two_key_study


def test_two_key_lab_is_the_study_at_the_line():
    cfg = TwoKeyConfig("euclidean", eps=1e-3, delta=1.0)
    lab = two_key_lab(cfg)
    ref = two_key_study("euclidean", eps=1e-3, delta=1.0)
    assert lab.study.ida.mu == ref.ida.mu and lab.study.softmax.mu == ref.softmax.mu
    assert (lab.delta, lab.delta_clamped, lab.dtype, lab.error) == (1.0, False, "float64", None)


def test_an_angle_above_pi_on_the_sphere_is_measured_at_the_fallback():
    cfg = TwoKeyConfig("sphere", eps=1e-3, delta=6.0)
    assert cfg.delta_clamped and cfg.delta_used == SPHERE_FALLBACK_DELTA < math.pi
    lab = two_key_lab(cfg)
    assert lab.delta_clamped and lab.delta == SPHERE_FALLBACK_DELTA and lab.error is None
    assert not TwoKeyConfig("poincare", eps=1e-3, delta=6.0).delta_clamped  # only the sphere's Delta is an angle


def test_a_line_the_precision_refuses_falls_back_to_float64_with_the_reason():
    # Delta = 6 with eps = 1e-6: softmax's loss is flat to float32 across the basin
    lab = two_key_lab(TwoKeyConfig("euclidean", eps=1e-6, delta=6.0, tau=0.1, dtype="float32"))
    assert lab.dtype == "float64" and "unresolved" in lab.error and "float32" in lab.error
    assert lab.delta == SPHERE_FALLBACK_DELTA and lab.study.ida.mu > 0  # and Delta at most the fallback
    assert two_key_lab(TwoKeyConfig("euclidean", eps=1e-6, delta=6.0, tau=0.1)).error is None


def test_bad_settings_are_refused_with_their_name():
    with pytest.raises(ValueError, match="basin"):  # refused in any precision: no fallback
        two_key_lab(TwoKeyConfig("euclidean", eps=1e-3, delta=1.0, basin=2.0))
    with pytest.raises(ValueError, match="dtype"):
        TwoKeyConfig("euclidean", eps=1e-3, delta=1.0, dtype="float16")
    with pytest.raises(ValueError, match="geometry"):
        TwoKeyConfig("torus", eps=1e-3, delta=1.0)


def test_pl_sweeps_use_the_clamped_line():
    sw = pl_sweep_lab(TwoKeyConfig("sphere", eps=1e-2, delta=6.0, dtype="float32"))
    assert len(sw.eps) == len(sw.mu_by_eps["ida"]) and max(sw.delta) <= 3.0


def test_descent_lab_runs_both_kernels_on_the_same_keys():
    study = descent_lab(
        DescentConfig(DescentSetup("euclidean", n=3, eps=1e-2, resolution=20, n_starts=2, steps=10))
    )
    assert set(study.results) == {"ida", "softmax"}
    assert all(len(r.outcomes) == 2 for r in study.results.values())
    with pytest.raises(ValueError, match="dtype"):
        DescentConfig(DescentSetup("euclidean", n=3, eps=1e-2), dtype="half")


def test_hessian_lab_tables_every_kernel_and_n():
    lab = hessian_lab(HessianConfig("euclidean", eps=1e-2, rho=1.0, n_max=8))
    assert len(lab.table) == 2 * 3  # two kernels, n = 2, 4, 8
    doc = lab.to_dict()
    assert [h["n"] for h in doc["ida"]] == [2, 4, 8] and len(doc["ida"][0]["eigenvalues"]) > 0
    with pytest.raises(ValueError, match="n_max"):
        hessian_lab(HessianConfig("euclidean", eps=1e-2, rho=1.0, n_max=1))


def test_slice_model_config_embeds_in_two_dimensions_and_the_slice_stays_on_the_manifold():
    assert slice_model_config("sphere", "ida", 0.05, 20).dim == 3  # S^2 in R^3
    cfg = slice_model_config("poincare", "ida", 0.05, 5)
    assert cfg.dim == 2 and cfg.steps == 5
    seen = []
    trained = train_slice_model(cfg, callback=lambda i, loss: seen.append(i))
    assert seen == list(range(5))
    lab = slice_lab(trained, SliceConfig(span=0.5, resolution=3))
    assert lab.slice.loss.shape == (3, 3) and lab.slice.max_violation == 0.0
    assert lab.history == trained.history and lab.accuracy == trained.accuracy
    assert set(lab.to_dict()) == {"a", "b", "loss", "accuracy", "history"}
    with pytest.raises(ValueError, match="span"):
        SliceConfig(span=0.0)
    with pytest.raises(ValueError, match="resolution"):
        SliceConfig(resolution=2)
