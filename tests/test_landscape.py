"""Laws of the landscape lab: the PL constant against an independent finite-difference estimate,
isometry invariance, Riemannian gradients and Hessians against finite differences along geodesics,
descent that stays on the manifold, grid minima, and model slices that never leave the manifold."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.optimize import minimize, minimize_scalar

from georesolver_core.attention import ida_weights
from georesolver_core.attention.layer import KERNEL_CHOICES
from georesolver_core.device import one_cpu_thread
from georesolver_core.geometry import GEOMETRIES, distance, expmap, sphere
from georesolver_core.landscape import (
    LossSetup,
    Patch,
    TwoKeyLine,
    blobs_task,
    chart_to_points,
    classify_paths,
    confirmed_spurious,
    descent_paths,
    equidistant_setup,
    filter_normalised_directions,
    grid_local_minima,
    hessian_spectrum,
    landscape_grid,
    model_slice,
    pl_profile,
    points_to_chart,
    random_keys,
    retrieval_loss,
    retrieval_weights,
    riemannian_grad_sq,
    riemannian_hessian,
    train_model,
    two_key_keys,
)
from georesolver_core.landscape.grid import charted, default_extent
from georesolver_core.landscape.model_slice import SliceModelConfig
from georesolver_core.landscape.two_key import geodesic_path, ida_line_minimiser, loss_star
from georesolver_core.theory.landscape import ida_curvature_at_minimiser
from georesolver_core.viz.landscape import hessian_figure, landscape_figure, model_slice_figure, pl_profile_figure

GEOS = charted()  # every geometry of the registry with a landscape chart
EXTENT = {geometry: default_extent(geometry) for geometry in GEOS}


pytestmark = pytest.mark.usefixtures("one_thread")  # tiny tensors: see conftest


# ---- an independent estimate of mu: closed-form arc-length losses, finite differences, numpy ----


def _loss_1d(s, *, kernel, geometry, eps, delta, tau):
    """L(s) from the distances along the geodesic alone (numpy, float64)."""
    s = np.asarray(s, dtype=float)
    d1 = np.abs(s)
    d2 = np.abs(delta - s)
    compact = GEOMETRIES[geometry].is_compact
    if compact:  # distances on a closed geodesic (a great circle) wrap at the diameter (pi)
        loop = 2 * GEOMETRIES[geometry].diameter
        d1 = np.minimum(d1 % loop, loop - d1 % loop)
        d2 = np.minimum(d2 % loop, loop - d2 % loop)
    if kernel == "ida":
        a, b = d1**2 + eps, d2**2 + eps
        u = a / (a + b)
    elif compact:  # softmax's rho(d) = 1 - cos d there (landscape.loss)
        u = 1.0 / (1.0 + np.exp((np.cos(d1) - np.cos(d2)) / tau))
    else:
        u = 1.0 / (1.0 + np.exp((d2**2 - d1**2) / (2 * tau)))
    return u * u


def _fd_mu(*, kernel, geometry, eps, delta, tau, basin, n_basin):
    f = lambda s: float(_loss_1d(s, kernel=kernel, geometry=geometry, eps=eps, delta=delta, tau=tau))  # noqa: E731
    diameter = GEOMETRIES[geometry].diameter
    if kernel == "softmax" and not GEOMETRIES[geometry].is_compact:
        l_star = 0.0  # the logit gap grows linearly as s -> -inf
    else:
        lo, hi = (-diameter, diameter) if GEOMETRIES[geometry].is_compact else (-delta, delta / 2)
        grid = np.linspace(lo, hi, 20001)
        i = int(np.argmin([f(x) for x in grid]))
        h = grid[1] - grid[0]
        l_star = min(
            minimize_scalar(f, bounds=(grid[i] - h, grid[i] + h), method="bounded", options={"xatol": 1e-13}).fun,
            f(grid[i]),
        )
    h = 1e-6 * delta

    def ratio(s):
        s = np.atleast_1d(np.asarray(s, dtype=float))
        lo = _loss_1d(s - h, kernel=kernel, geometry=geometry, eps=eps, delta=delta, tau=tau)
        up = _loss_1d(s + h, kernel=kernel, geometry=geometry, eps=eps, delta=delta, tau=tau)
        gap = _loss_1d(s, kernel=kernel, geometry=geometry, eps=eps, delta=delta, tau=tau) - l_star
        ok = gap > 1e-6 * max(l_star, 1e-300)  # finite differences need a gap well above their own error
        return np.where(ok, ((up - lo) / (2 * h)) ** 2 / (2 * np.where(ok, gap, 1.0)), 1e300)

    s = np.linspace(-basin * delta / 2, basin * delta / 2, n_basin)
    r = ratio(s)
    i = int(np.argmin(r))
    best = minimize_scalar(
        lambda x: float(ratio(x)[0]),
        bounds=(s[max(i - 1, 0)], s[min(i + 1, n_basin - 1)]),
        method="bounded",
        options={"xatol": 1e-12 * delta},
    )
    return float(min(r[i], best.fun))


@pytest.mark.parametrize("geometry", GEOS)
@pytest.mark.parametrize("kernel", list(KERNEL_CHOICES))
@pytest.mark.parametrize(
    ("eps", "delta", "dtype"),
    [(1e-3, 1.0, torch.float64), (1e-2, 2.5, torch.float64), (1e-3, 1.0, torch.float32)],
    ids=["float64-near", "float64-far", "float32"],
)
def test_mu_matches_independent_finite_difference_estimate(geometry, kernel, eps, delta, dtype):
    line = TwoKeyLine(geometry, eps=eps, delta=delta, tau=0.7, basin=0.5)
    prof = pl_profile(kernel, line, n_basin=1001, dtype=dtype)
    fd = _fd_mu(kernel=kernel, geometry=geometry, eps=eps, delta=delta, tau=0.7, basin=0.5, n_basin=1001)
    rtol = 2e-3 if dtype == torch.float64 else 3e-2
    assert prof.mu == pytest.approx(fd, rel=rtol)
    # The PL inequality itself, with the measured constant, at every resolved point of the basin.
    ok = np.isfinite(prof.ratio_basin)
    assert (prof.ratio_basin[ok] >= prof.mu * (1 - 1e-12)).all()


def test_mu_is_isometry_invariant_in_the_ball():
    """An off-centre geodesic (a circular arc) in ball coordinates gives the plane's mu: the Riemannian
    gradient, not the coordinate one, enters the PL ratio."""
    flat = pl_profile("ida", TwoKeyLine("euclidean", eps=1e-3, delta=1.5)).mu
    for offset in (0.0, 0.4, -0.7):
        ball = pl_profile("ida", TwoKeyLine("poincare", eps=1e-3, delta=1.5, offset=offset, c=1.0)).mu
        assert ball == pytest.approx(flat, rel=1e-8)
    curved = pl_profile("ida", TwoKeyLine("poincare", eps=1e-3, delta=1.5, offset=0.3, c=4.0)).mu
    assert curved == pytest.approx(flat, rel=1e-8)  # curvature rescales coordinates, not arc length


def test_ida_mu_is_bounded_by_the_curvature_at_the_minimiser():
    for eps, delta in [(1e-4, 1.0), (1e-3, 0.7), (1e-2, 3.0)]:
        prof = pl_profile("ida", TwoKeyLine("euclidean", eps=eps, delta=delta))
        curv = float(ida_curvature_at_minimiser(eps, delta))
        assert prof.mu <= curv * (1 + 1e-6)
        assert prof.mu >= 0.5 * curv
        assert prof.s_star == pytest.approx(ida_line_minimiser(delta, eps))


@pytest.mark.parametrize("geometry", GEOS)
def test_riemannian_gradient_matches_derivative_along_the_geodesic(geometry):
    """|grad L|^2 = (dL/ds)^2 on the geodesic through both keys (the gradient has no normal part there)."""
    keys = two_key_keys(1.2, geometry=geometry, offset=0.0 if GEOMETRIES[geometry].is_compact else 0.3, dim=3)
    s = torch.tensor([-0.2, 0.1, 0.35, 0.9], dtype=torch.float64)
    q = geodesic_path(keys, s, geometry=geometry).requires_grad_(True)
    kw = dict(kernel="ida", eps=1e-2, geometry=geometry)
    (g,) = torch.autograd.grad(retrieval_loss(q, keys, **kw).sum(), q)
    got = riemannian_grad_sq(q.detach(), g, geometry=geometry)
    h = 1e-6
    f = lambda t: retrieval_loss(geodesic_path(keys, t, geometry=geometry), keys, **kw)  # noqa: E731
    fd = ((f(s + h) - f(s - h)) / (2 * h)) ** 2
    torch.testing.assert_close(got, fd, rtol=1e-6, atol=1e-12)


def test_geodesic_path_is_parametrised_by_arc_length(geometry):
    keys = two_key_keys(1.0, geometry=geometry, dim=2)
    s = torch.tensor([-0.5, 0.0, 0.25, 1.0], dtype=torch.float64)
    q = geodesic_path(keys, s, geometry=geometry)
    d = distance(q, keys[0].expand_as(q), geometry=geometry)
    torch.testing.assert_close(d, s.abs(), rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(q[-1], keys[1], rtol=1e-9, atol=1e-9)


def test_loss_star_is_the_infimum(geometry):
    for kernel in KERNEL_CHOICES:
        keys = two_key_keys(1.3, geometry=geometry)
        l_star, s_star = loss_star(keys, LossSetup(kernel, eps=1e-3, geometry=geometry))
        span = min(GEOMETRIES[geometry].diameter, 5.0)  # the whole great circle on the sphere
        s = torch.linspace(-span, span, 4001, dtype=torch.float64)
        vals = retrieval_loss(
            geodesic_path(keys, s, geometry=geometry), keys, kernel=kernel, eps=1e-3, geometry=geometry
        )
        assert l_star <= float(vals.min()) + 1e-15
        if s_star is None:
            assert l_star == 0.0
        else:  # attained at s*, and a local minimum there
            near = torch.tensor([s_star - 1e-4, s_star, s_star + 1e-4], dtype=torch.float64)
            at = retrieval_loss(
                geodesic_path(keys, near, geometry=geometry), keys, kernel=kernel, eps=1e-3, geometry=geometry
            )
            assert float(at[1]) == pytest.approx(l_star, rel=1e-9)
            assert float(at[0]) >= l_star and float(at[2]) >= l_star


def test_retrieval_weights_agree_with_the_attention_kernel(geometry, dtype):
    from tests.conftest import random_points

    q = random_points(geometry, 7, 3, dtype=dtype, seed=1)
    k = random_points(geometry, 5, 3, dtype=dtype, seed=2)
    w = retrieval_weights(q, k, kernel="ida", eps=0.05, geometry=geometry)
    ref = ida_weights(q, k, eps=0.05, geometry=geometry)
    torch.testing.assert_close(w, ref, rtol=1e-4 if dtype == torch.float32 else 1e-9, atol=1e-6)
    for kernel in KERNEL_CHOICES:
        w = retrieval_weights(q, k, kernel=kernel, eps=0.05, geometry=geometry)
        torch.testing.assert_close(w.sum(-1), torch.ones(7, dtype=dtype))
        loss = retrieval_loss(q, k, kernel=kernel, eps=0.05, geometry=geometry, target=2)
        torch.testing.assert_close(loss, (1 - w[:, 2]) ** 2, rtol=1e-4, atol=1e-6)


def test_dot_product_softmax_equals_distance_softmax_for_equal_norm_keys():
    g = torch.Generator().manual_seed(0)
    k = torch.randn(6, 4, generator=g, dtype=torch.float64)
    k = 1.7 * k / k.norm(dim=-1, keepdim=True)
    q = torch.randn(3, 4, generator=g, dtype=torch.float64)
    w = retrieval_weights(q, k, kernel="softmax", eps=1.0, geometry="euclidean", tau=0.8)
    torch.testing.assert_close(w, torch.softmax(q @ k.T / 0.8, dim=-1))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(eps=-0.1), r"eps must be .*\(got -0.1\)"),
        (
            dict(delta=4.0, geometry="sphere"),
            r"delta \(the angle theta on the sphere\) must be a number in \(0, pi\) \(got 4.0\)",
        ),
        (dict(delta=math.pi, geometry="sphere"), r"must be a number in \(0, pi\)"),
        (dict(delta=0.0), r"delta must be a number in \(0, 50\] \(got 0.0\)"),
        (dict(kernel="relu"), "kernel must be one of"),
        (dict(geometry="torus"), "geometry must be one of"),
        (dict(tau=0.0), r"tau must be a number in \[0.001, 1000"),
        (dict(basin=1.0), r"basin must be a number in \[0.01, 0.99\]"),
    ],
)
def test_pl_profile_rejects_bad_arguments(kwargs, match):
    args = dict(kernel="ida", geometry="euclidean", eps=1e-3, delta=1.0) | kwargs
    kernel, geometry = args.pop("kernel"), args.pop("geometry")
    with pytest.raises(ValueError, match=match):
        pl_profile(kernel, TwoKeyLine(geometry, **args))


def test_retrieval_loss_rejects_a_bad_target():
    k = torch.zeros(3, 2)
    with pytest.raises(ValueError, match=r"target must be an integer in \[0, 2\] \(got 3\)"):
        retrieval_loss(torch.zeros(1, 2), k, kernel="ida", eps=0.1, target=3)


# ---- grids and descent -----------------------------------------------------------------------


def test_grid_local_minima_on_known_surfaces():
    x = np.linspace(-1, 1, 21)
    xx, yy = np.meshgrid(x, x)
    assert grid_local_minima(xx**2 + yy**2).sum() == 1
    two = np.minimum((xx - 0.5) ** 2 + yy**2, (xx + 0.5) ** 2 + yy**2 + 0.1)
    assert grid_local_minima(two).sum() == 2
    assert grid_local_minima(np.zeros((9, 9))).sum() == 0  # a plateau has no strict minimum
    holed = xx**2 + yy**2
    holed[9, 10] = np.nan  # a minimum next to a hole is not counted
    assert not grid_local_minima(holed)[10, 10]


def test_chart_round_trip(geometry):
    uv = torch.tensor([[0.1, -0.3], [0.5, 0.2], [-0.6, -0.6]], dtype=torch.float64)
    x = chart_to_points(uv, geometry=geometry)
    torch.testing.assert_close(points_to_chart(x, geometry=geometry), uv)
    geo = GEOMETRIES[geometry]
    assert float(geo.outside(x, 1.0).max()) < 1e-12  # points of the space
    if geo.is_embedded:
        # normal coordinates: the chart radius is the geodesic distance from the origin (the north pole)
        pole = geo.origin(x.shape[-1], dtype=torch.float64).expand_as(x)
        torch.testing.assert_close(distance(x, pole, geometry=geometry), uv.norm(dim=-1))


@pytest.mark.parametrize("geometry", GEOS)
def test_ida_grid_minimum_sits_at_the_target_key(geometry):
    keys = random_keys(4, geometry=geometry, extent=EXTENT[geometry], seed=5)
    grid = landscape_grid(keys, geometry=geometry, kernel="ida", eps=1e-3, extent=EXTENT[geometry], resolution=81)
    target = grid.keys_uv[0]
    assert np.linalg.norm(np.asarray(grid.global_min_uv) - target) <= 1.5 * grid.spacing
    fin = grid.loss[np.isfinite(grid.loss)]
    assert ((fin >= 0) & (fin <= 1)).all()
    if (rim := GEOMETRIES[geometry].rim(1.0)) is not None:  # the disk: no loss at or past the rim
        r = np.hypot(*np.meshgrid(grid.u, grid.v))
        assert np.isnan(grid.loss[r >= 0.99 * rim]).all() and np.isfinite(grid.loss[r < 0.97 * rim]).all()


@pytest.mark.parametrize("geometry", GEOS)
@pytest.mark.parametrize("kernel", list(KERNEL_CHOICES))
def test_descent_stays_on_the_manifold_and_caps_its_steps(geometry, kernel, dtype):
    ext = EXTENT[geometry]
    keys = random_keys(5, geometry=geometry, extent=ext, seed=1, dtype=dtype)
    starts = Patch(geometry, ext).ring_starts(6, dtype=dtype)
    paths = descent_paths(
        starts, keys, geometry=geometry, kernel=kernel, eps=1e-2, lr=2.0, steps=60, max_step=0.05
    )
    pts = torch.as_tensor(paths.points)
    geo = GEOMETRIES[geometry]
    assert float(geo.outside(pts, 1.0).max()) < 1e-5  # on the sphere (to rounding), inside the ball
    if (rim := geo.rim(1.0)) is not None:
        assert float(pts.norm(dim=-1).max()) < rim
    steps = distance(pts[1:], pts[:-1], geometry=geometry)  # (T, S)
    assert float(steps.max()) <= 0.05 * (1 + 1e-3) + 1e-6


@pytest.mark.parametrize("geometry", GEOS)
def test_small_step_descent_decreases_the_loss(geometry):
    ext = EXTENT[geometry]
    keys = random_keys(3, geometry=geometry, extent=ext, seed=2)
    starts = Patch(geometry, ext).ring_starts(4, radius=0.5)
    paths = descent_paths(
        starts, keys, geometry=geometry, kernel="ida", eps=0.05, lr=0.05, steps=80, max_step=0.01
    )
    assert (np.diff(paths.loss, axis=0) <= 1e-12).all()


@pytest.mark.parametrize("geometry", GEOS)
def test_descent_from_near_the_target_reaches_the_global_minimum(geometry):
    ext = EXTENT[geometry]
    keys = random_keys(5, geometry=geometry, extent=ext, seed=0)
    grid = landscape_grid(keys, geometry=geometry, kernel="ida", eps=1e-2, extent=ext, resolution=60)
    uv0 = torch.as_tensor(grid.keys_uv[:1] + 0.05, dtype=torch.float64)
    start = chart_to_points(uv0, geometry=geometry)
    paths = descent_paths(start, keys, geometry=geometry, kernel="ida", eps=1e-2, lr=1.0, steps=200, max_step=0.02)
    assert classify_paths(paths, grid) == ["global"]


def test_a_confirmed_spurious_minimum_is_a_real_local_minimum():
    """Eight keys in the plane (seed 3): the grid shows a minimum far above the global one; descent from it
    stays there, the gradient vanishes and the Hessian is positive definite."""
    keys = random_keys(8, geometry="euclidean", extent=1.5, seed=3)
    grid = landscape_grid(keys, geometry="euclidean", kernel="ida", eps=1e-3, extent=1.5, resolution=48)
    conf = confirmed_spurious(grid, keys)
    assert conf.sum() >= 1
    start = grid.minima_uv[~grid.minima_global][conf][0]
    f = lambda q: retrieval_loss(q[None], keys, kernel="ida", eps=1e-3)[0]  # noqa: E731

    def fun(z):
        q = torch.tensor(z, dtype=torch.float64, requires_grad=True)
        val = f(q)
        (g,) = torch.autograd.grad(val, q)
        return float(val.detach()), g.numpy()

    res = minimize(fun, start, jac=True, method="BFGS", options={"gtol": 1e-10})
    x = torch.as_tensor(res.x)
    assert np.linalg.norm(res.x - start) < 2 * grid.spacing  # the minimum the grid saw, not another one
    assert np.linalg.norm(fun(res.x)[1]) < 1e-6
    assert float(torch.linalg.eigvalsh(riemannian_hessian(f, x, geometry="euclidean")).min()) > 0
    assert float(f(x)) > grid.global_min_loss + 0.1


# ---- Hessians ---------------------------------------------------------------------------------


@pytest.mark.parametrize("geometry", GEOS)
@pytest.mark.parametrize("kernel", list(KERNEL_CHOICES))
def test_riemannian_hessian_matches_second_derivative_along_geodesics(geometry, kernel):
    """v^T Hess v = d^2/dt^2 L(exp_x(t v)) at t = 0, at a point where the connection terms matter."""
    from tests.conftest import random_points

    keys = random_points(geometry, 4, 3, seed=3)
    x = random_points(geometry, 3, seed=4)
    kw = dict(kernel=kernel, eps=0.05, geometry=geometry, tau=0.5)
    f = lambda q: retrieval_loss(q[None], keys, **kw)[0]  # noqa: E731
    hess = riemannian_hessian(f, x, geometry=geometry)
    torch.testing.assert_close(hess, hess.T)
    g = torch.Generator().manual_seed(0)
    geo = GEOMETRIES[geometry]
    if geo.is_embedded:  # the tangent space x^perp of the sphere, orthonormal columns
        from georesolver_core.landscape.hessian import tangent_basis

        basis = tangent_basis(x)
    else:  # the coordinate axes at unit Riemannian length
        basis = torch.eye(3, dtype=torch.float64) / geo.conformal_factor(x, 1.0)
    for _ in range(3):
        a = torch.randn(basis.shape[1], generator=g, dtype=torch.float64)
        v = basis @ a
        h = 1e-4
        second = (
            f(expmap(x, h * v, geometry=geometry)) - 2 * f(x) + f(expmap(x, -h * v, geometry=geometry))
        ) / h**2
        assert float(a @ hess @ a) == pytest.approx(float(second), rel=1e-4, abs=1e-7)


def test_equidistant_setup_is_equidistant(geometry):
    q0, keys = equidistant_setup(6, geometry=geometry, rho=0.8)
    d = distance(q0.expand_as(keys), keys, geometry=geometry)
    torch.testing.assert_close(d, torch.full((6,), 0.8, dtype=torch.float64))
    w = retrieval_weights(q0[None], keys, kernel="ida", eps=0.01, geometry=geometry)
    torch.testing.assert_close(w, torch.full((1, 6), 1 / 6, dtype=torch.float64))


def test_softmax_hessian_has_the_translation_null_direction():
    spec = hessian_spectrum(8, kernel="softmax", geometry="euclidean")
    assert spec.n_flat == 1 and len(spec.eigenvalues) == 8
    ida = hessian_spectrum(8, kernel="ida", geometry="euclidean")
    assert ida.n_flat == 0 and ida.n_negative >= 1  # the equidistant start is a saddle of L
    assert len(hessian_spectrum(8, kernel="ida", geometry="sphere").eigenvalues) == 8  # tangent space of S^8


# ---- trained-model slices ----------------------------------------------------------------------


@pytest.fixture(scope="module", params=GEOS)
def trained(request):
    geometry = request.param
    cfg = SliceModelConfig(geometry=geometry, steps=40, n_samples=128, dim=GEOMETRIES[geometry].ambient_dim(2))
    with one_cpu_thread():
        return train_model(cfg)


def test_training_lowers_the_loss(trained):
    assert trained.history[-1] < 0.7 * trained.history[0]


def test_filter_normalisation(trained):
    model = trained.model
    dirs = filter_normalised_directions(model, seed=3)
    geometry = model.config.geometry
    for name, p in model.named_parameters():
        d = dirs[name]
        if name == "keys":
            m = p.manifold
            torch.testing.assert_close(m.proju(p.detach(), d), d)  # tangent
            geo, c, x = GEOMETRIES[geometry], model.config.c, p.detach()
            size = distance(geo.origin(x.shape[-1], dtype=x.dtype).expand_as(x), x, geometry=geometry, c=c)
            length = geo.norm(x, d, c)  # the direction's Riemannian length: the key's distance from the origin
            torch.testing.assert_close(length, size, rtol=1e-4, atol=1e-6)
        elif p.dim() == 1:
            assert not d.any()  # biases stay put, as in Li et al.
        else:
            torch.testing.assert_close(d.norm(dim=-1), p.detach().norm(dim=-1), rtol=1e-4, atol=1e-6)


def test_model_slice_stays_on_the_manifold(trained):
    before = {k: v.detach().clone() for k, v in trained.model.named_parameters()}
    sl = model_slice(trained, span=2.0, resolution=7)
    geometry = trained.model.config.geometry
    assert sl.max_violation <= 1e-5
    if GEOMETRIES[geometry].is_embedded:
        assert sl.additive_off_manifold > 0.9  # theta + a d1 + b d2 leaves the sphere almost everywhere
    if not GEOMETRIES[geometry].has_bounded_coordinates:  # R^d: every coordinate is a point
        assert sl.additive_off_manifold == 0.0
    for k, v in trained.model.named_parameters():
        torch.testing.assert_close(v.detach(), before[k])  # parameters restored
    with torch.no_grad():
        loss = torch.nn.functional.cross_entropy(trained.model(trained.x), trained.y)
    assert sl.loss[3, 3] == pytest.approx(float(loss), rel=1e-5)  # the centre is the trained model
    assert sl.centre_loss == pytest.approx(float(loss), rel=1e-6)


def test_slice_points_are_exactly_the_exponential_map():
    cfg = SliceModelConfig(geometry="sphere", steps=5, n_samples=32, dim=3)
    tr = train_model(cfg)
    dirs = filter_normalised_directions(tr.model, seed=0)
    k = tr.model.keys.detach()
    moved = sphere().expmap(k, 1.5 * dirs["keys"])
    torch.testing.assert_close(moved.norm(dim=-1), torch.ones(k.shape[0]), rtol=0, atol=1e-5)
    length = (1.5 * dirs["keys"].norm(dim=-1)) % (2 * math.pi)
    folded = torch.minimum(length, 2 * math.pi - length)  # a great circle comes back after 2 pi
    torch.testing.assert_close(distance(moved, k, geometry="sphere"), folded, rtol=1e-4, atol=1e-4)


def test_blobs_task_is_seeded():
    x1, y1 = blobs_task(50, 3, seed=4)
    x2, y2 = blobs_task(50, 3, seed=4)
    assert torch.equal(x1, x2) and torch.equal(y1, y2) and set(y1.tolist()) <= {0, 1, 2}


# ---- figures ------------------------------------------------------------------------------------


def test_figures_build_with_frames_and_titles():
    profs = [
        pl_profile(k, TwoKeyLine("euclidean", eps=1e-3, delta=1.0), n_points=101, n_basin=101)
        for k in ("ida", "softmax")
    ]
    fig = pl_profile_figure(profs)
    assert fig.layout.xaxis3.title.text and len(fig.data) == 8
    keys = random_keys(4, geometry="poincare", extent=1.0, seed=0)
    grid = landscape_grid(keys, geometry="poincare", kernel="ida", eps=1e-2, extent=1.0, resolution=30)
    paths = descent_paths(
        Patch("poincare", 1.0).ring_starts(3),
        keys,
        geometry="poincare",
        kernel="ida",
        eps=1e-2,
        steps=40,
    )
    fig = landscape_figure(grid, paths, classify_paths(paths, grid), n_frames=10)
    assert 2 <= len(fig.frames) <= 10
    # Each frame updates, in order, the trail and heads on the contour map, then on the surface, and redraws
    # the contour itself (so its lines survive the animation).
    assert [fig.data[i].type for i in fig.frames[0].traces] == [
        "scatter", "scatter", "scatter3d", "scatter3d", "contour"
    ]  # fmt: skip
    for frame in fig.frames:
        assert [fig.data[i].type for i in frame.traces] == [d["type"] for d in frame.data]
    surface, contour = fig.data[0], fig.data[1]  # the same loss, drawn twice
    assert (surface.type, contour.type) == ("surface", "contour")
    np.testing.assert_array_equal(np.asarray(surface.z, dtype=float), np.asarray(contour.z, dtype=float))
    assert fig.layout.updatemenus[0].buttons[0].method == "animate"
    last = fig.frames[-1].data[0]
    assert np.isfinite(np.asarray(last.x, dtype=float)).sum() == 3 * len(
        fig.frames
    )  # every path, every frame step
    spec = {"ida": [hessian_spectrum(n, kernel="ida") for n in (2, 4)]}
    assert len(hessian_figure(spec).data) == 3
    tr = train_model(SliceModelConfig(geometry="euclidean", steps=3, n_samples=16))
    assert model_slice_figure(model_slice(tr, resolution=3)).layout.xaxis.title.text
