"""Laws of orthogonal residual mixing (seed 003): exact orthogonality at any beta, spectrum, defects, edges."""

from __future__ import annotations

import math

import pytest
import torch

from georesolver_core.extras.orthogonal import (
    RESIDUAL_KINDS,
    MixerConfig,
    ResidualMixer,
    cayley_apply,
    cayley_dense,
    cayley_eigenvalues,
    cayley_matrix,
    ddl_apply,
    gate_regulariser,
    householder_apply,
    hybrid_apply,
    matched_hidden,
    mixer_params,
)
from georesolver_core.extras.orthogonal_lab import norm_drift, orthogonality_defect, worst_cayley_defect
from georesolver_core.labs.orthogonal import DriftConfig, OperatorConfig, drift_lab, operator_lab
from georesolver_core.theory.orthogonal import (
    cayley_gap_to_minus_one,
    ddl_orthogonality_defect,
    hybrid_orthogonality_defect_bound,
)
from georesolver_core.viz.orthogonal import eigenvalue_figure, norm_drift_figure, operator_figure, training_figure

BETAS = [0.0, 1e-3, 0.5, 1.0, 10.0, 1e2, 1e3, 1e4, -1e4, 1e30]
TOL = {torch.float32: 1e-5, torch.float64: 1e-12}


def _pairs(dtype, seed=0):
    """Random (u, v) of sizes 2..32, norms 1e-4..1e4, with near-parallel, parallel and zero cases."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for i in range(12):
        d = (2, 3, 8, 32)[i % 4]
        su, sv = (10 ** (8 * torch.rand(2, generator=g, dtype=torch.float64) - 4)).tolist()
        u = su * torch.randn(d, generator=g, dtype=torch.float64)
        v = sv * torch.randn(d, generator=g, dtype=torch.float64)
        if i % 3 == 0:
            v = 3 * u + 1e-6 * su * torch.randn(d, generator=g, dtype=torch.float64)  # nearly parallel
        out.append((u.to(dtype), v.to(dtype)))
    u = torch.randn(5, generator=g, dtype=torch.float64).to(dtype)
    out += [(u, 2 * u), (torch.zeros_like(u), u), (torch.zeros_like(u), torch.zeros_like(u))]
    return out


@pytest.mark.parametrize("beta", BETAS)
def test_cayley_is_orthogonal_for_every_input_and_beta(beta, dtype):
    for u, v in _pairs(dtype):
        q = cayley_matrix(u, v, beta)
        assert q.dtype == dtype
        assert orthogonality_defect(q) < TOL[dtype], (beta, u.shape)


def test_cayley_survives_a_hill_climbing_adversary():
    for beta in (1.0, 1e4):
        assert worst_cayley_defect(beta, torch.float32, trials=6, climb=10, seed=3) < 1e-5


def test_closed_form_equals_the_dense_inverse(one_thread):
    g = torch.Generator().manual_seed(1)
    for beta in (0.0, 0.3, 2.0, 50.0):
        u, v = torch.randn(2, 7, generator=g, dtype=torch.float64)
        torch.testing.assert_close(cayley_matrix(u, v, beta), cayley_dense(u, v, beta), rtol=1e-10, atol=1e-10)


def test_batched_beta_and_vectors_match_one_at_a_time():
    g = torch.Generator().manual_seed(2)
    x, u, v = torch.randn(3, 4, 6, generator=g, dtype=torch.float64)
    beta = torch.tensor([0.1, 1.0, 10.0, 1e4], dtype=torch.float64)
    batched = cayley_apply(x, u, v, beta)
    for i in range(4):
        torch.testing.assert_close(batched[i], cayley_apply(x[i], u[i], v[i], float(beta[i])))
        torch.testing.assert_close(batched[i].norm(), x[i].norm())


def test_spectrum_on_the_unit_circle_det_one_never_minus_one():
    g = torch.Generator().manual_seed(3)
    u, v = torch.randn(2, 5, generator=g, dtype=torch.float64)
    area = float(torch.sqrt(u.dot(u) * v.dot(v) - u.dot(v) ** 2))
    for beta in (0.1, 3.0, 1e4):
        q = cayley_matrix(u, v, beta)
        ev = torch.linalg.eigvals(q)
        torch.testing.assert_close(ev.abs(), torch.ones(5, dtype=torch.float64))
        assert abs(float(torch.linalg.det(q)) - 1) < 1e-12
        closed = cayley_eigenvalues(u, v, beta)
        assert sorted(closed.angle().tolist()) == pytest.approx(sorted(ev.angle().tolist()), abs=1e-8)
        gap = float((ev + 1).abs().min())
        assert gap > 0
        assert gap == pytest.approx(float(cayley_gap_to_minus_one(beta, area)), rel=1e-6)


def test_householder_reflects_k_and_is_an_involution(dtype):
    g = torch.Generator().manual_seed(4)
    k = torch.randn(6, generator=g, dtype=torch.float64).to(dtype)
    h = householder_apply(torch.eye(6, dtype=dtype), k).T
    assert orthogonality_defect(h) < TOL[dtype]
    assert float(torch.linalg.det(h.double())) == pytest.approx(-1.0, abs=1e-5)
    torch.testing.assert_close(householder_apply(k, k), -k)
    torch.testing.assert_close(h @ h, torch.eye(6, dtype=dtype), rtol=1e-5, atol=1e-5)


def test_ddl_defect_is_beta_times_beta_minus_two():
    k = torch.randn(8, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    eye = torch.eye(8, dtype=torch.float64)
    for beta in (0.0, 0.5, 1.0, 2.0, 2.7):
        d = orthogonality_defect(ddl_apply(eye, k, beta).T)
        assert d == pytest.approx(float(ddl_orthogonality_defect(beta)), abs=1e-12)
    assert orthogonality_defect(ddl_apply(eye, k, 2.0).T) < 1e-12


def test_hybrid_defect_within_the_gate_regulariser():
    g = torch.Generator().manual_seed(6)
    eye = torch.eye(5, dtype=torch.float64)
    for _ in range(10):
        u, v, k = torch.randn(3, 5, generator=g, dtype=torch.float64)
        for gamma in (0.0, 0.2, 0.5, 0.9, 1.0):
            d = orthogonality_defect(hybrid_apply(eye, u, v, 7.0, k, gamma).T)
            assert d <= float(hybrid_orthogonality_defect_bound(gamma)) + 1e-12
    u, v, k = torch.randn(3, 5, generator=g, dtype=torch.float64)
    assert orthogonality_defect(hybrid_apply(eye, u, v, 7.0, k, 0.5).T) > 1e-3  # the midpoint is not orthogonal


def test_gate_regulariser_has_zero_gradient_at_the_midpoint():
    gamma = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    gate_regulariser(gamma).backward()
    assert float(gamma.grad) == 0.0
    assert float(gate_regulariser(torch.tensor(0.0))) == 0.0 == float(gate_regulariser(torch.tensor(1.0)))


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_beta_is_rejected_by_name(bad):
    x = torch.randn(4)
    with pytest.raises(ValueError, match="beta"):
        cayley_apply(x, x, torch.randn(4), bad)
    with pytest.raises(ValueError, match="beta"):
        cayley_apply(x, x, torch.randn(4), torch.tensor([1.0, bad]))
    with pytest.raises(ValueError, match="beta"):
        ddl_apply(x, x, bad)


def test_bad_gamma_and_non_finite_vectors_are_rejected():
    x = torch.randn(4)
    with pytest.raises(ValueError, match="gamma"):
        hybrid_apply(x, x, x, 1.0, x, 1.5)
    with pytest.raises(ValueError, match="u"):
        cayley_apply(x, torch.tensor([1.0, float("nan"), 0.0, 0.0]), x, 1.0)


def test_degenerate_generators_give_identity_with_finite_gradients():
    x = torch.randn(3, 4, dtype=torch.float64)
    for case in ("parallel", "zero"):
        u = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
        a, b = (u, 2 * u) if case == "parallel" else (torch.zeros_like(u), u)
        out = cayley_apply(x, a, b, 5.0)
        torch.testing.assert_close(out, x)
        out.sum().backward()
        assert torch.isfinite(u.grad).all(), case


def test_mixers_match_parameter_counts_and_orthogonal_kinds_keep_the_norm(one_thread):
    target = 600
    for kind in RESIDUAL_KINDS:
        h = matched_hidden(kind, 8, target)
        m = ResidualMixer(MixerConfig(kind=kind, dim=8, hidden=h))
        assert sum(p.numel() for p in m.parameters()) == mixer_params(kind, 8, h)
        assert abs(mixer_params(kind, 8, h) - target) <= 0.05 * target
    drift = norm_drift(list(RESIDUAL_KINDS), [1, 8], dim=8, batch=8)
    for kind in ("cayley", "householder"):
        assert drift[kind] == pytest.approx([1.0, 1.0], abs=1e-5)
    assert drift["hybrid"][-1] < 1.0 and drift["ddl"][-1] < 1.0
    with pytest.raises(ValueError, match="kind"):
        ResidualMixer(MixerConfig(kind="rotation"))


def test_figures_build_from_an_operator_view():
    view = operator_lab(OperatorConfig(1e4, 0.5, 2.0, 45, 30, 60))
    assert abs(abs(view.theta) - math.pi) < 1e-3  # beta = 1e4: close to, but not at, pi
    assert view.defects.cayley < 1e-12 and view.defects.ddl < 1e-12
    fig = operator_figure(view)
    assert len(fig.data) == 3 + len(view.images)
    assert len(eigenvalue_figure(view).data) == 4
    drift = {"cayley": [1.0, 1.0], "additive": [1.5, 3.0]}
    assert norm_drift_figure([1, 2], drift).layout.yaxis.type == "log"
    hist = [{"kind": "hybrid", "seed": s, "history": {"step": [0, 10], "cosine": [0.1, 0.9]}} for s in (0, 1, 2)]
    assert len(training_figure(hist).data) == 4  # three seeds and their mean


def test_orthogonal_shortcuts_keep_their_gain_at_one_while_a_branch_grows_the_norm():
    drift = drift_lab(DriftConfig(("cayley", "householder", "hybrid"), (1, 16), dim=8, branch=1.0, batch=8))
    norms, gains = drift.norm, drift.gain
    for kind in ("cayley", "householder"):
        assert norms[kind][-1] > 1.5  # the branch grows the norm
        assert gains[kind] == pytest.approx([1.0, 1.0], abs=1e-4)  # the shortcut itself preserves it
    assert gains["hybrid"][-1] < 0.99
