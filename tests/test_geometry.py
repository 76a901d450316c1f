"""Laws of the three geometries: metric axioms, limits, accuracy near 0, exp/log, geodesics, cross maps."""

from __future__ import annotations

import math

import pytest
import torch

from georesolver_core.geometry import (
    LearnableSphereMap,
    _pairwise,
    ball,
    distance,
    expmap,
    expmap0,
    geodesic,
    logmap,
    logmap0,
    norm_map,
    pairwise_distance,
    pairwise_sq_distance,
    project,
    sphere,
    stereographic_map,
    to_ball,
)
from tests.conftest import random_points, tol


def test_self_distance_is_exactly_zero(geometry, dtype):
    x = random_points(geometry, 7, 5, dtype=dtype)
    d = pairwise_distance(x, x, geometry=geometry)
    assert torch.equal(torch.diagonal(d), torch.zeros(7, dtype=dtype))


def test_symmetry_and_positivity(geometry, dtype):
    x = random_points(geometry, 6, 4, dtype=dtype, seed=1)
    y = random_points(geometry, 9, 4, dtype=dtype, seed=2)
    dxy, dyx = pairwise_distance(x, y, geometry=geometry), pairwise_distance(y, x, geometry=geometry)
    torch.testing.assert_close(dxy, dyx.T, **tol(dtype))
    assert (dxy > 0).all()


def test_triangle_inequality_on_samples(geometry, dtype):
    x = random_points(geometry, 12, 3, dtype=dtype, seed=3)
    d = pairwise_distance(x, x, geometry=geometry)  # (12, 12)
    # d(i, k) <= d(i, j) + d(j, k) for every triple
    lhs = d[:, None, :]
    rhs = d[:, :, None] + d[None, :, :]
    slack = 1e-5 if dtype == torch.float32 else 1e-12
    assert (lhs <= rhs + slack).all()


def test_batched_leading_dims_broadcast(geometry):
    x = random_points(geometry, 2, 3, 5, 4, seed=4)
    y = random_points(geometry, 3, 6, 4, seed=5)  # broadcasts over the first dim
    d = pairwise_distance(x, y, geometry=geometry)
    assert d.shape == (2, 3, 5, 6)
    torch.testing.assert_close(d[1, 2], pairwise_distance(x[1, 2], y[2], geometry=geometry))


def test_chunked_equals_unchunked(geometry, monkeypatch):
    x = random_points(geometry, 33, 4, seed=6)
    y = random_points(geometry, 17, 4, seed=7)
    full = pairwise_distance(x, y, geometry=geometry)
    monkeypatch.setattr(_pairwise, "CHUNK_ELEMENTS", 50)  # forces one query row per chunk
    torch.testing.assert_close(pairwise_distance(x, y, geometry=geometry), full, rtol=0, atol=0)


def test_poincare_matches_geoopt_in_float64():
    x = random_points("poincare", 8, 3, seed=8, c=0.7)
    y = random_points("poincare", 5, 3, seed=9, c=0.7)
    ours = pairwise_distance(x, y, geometry="poincare", c=0.7)
    theirs = ball(0.7).dist(x[:, None, :], y[None, :, :])
    # geoopt clamps artanh at 1 - 1e-7 even in float64, hence its looser agreement
    torch.testing.assert_close(ours, theirs, rtol=1e-6, atol=1e-9)
    sq = ((x[:, None] - y[None]) ** 2).sum(-1)
    denom = (1 - 0.7 * (x**2).sum(-1))[:, None] * (1 - 0.7 * (y**2).sum(-1))[None]
    closed_form = torch.arccosh(1 + 2 * 0.7 * sq / denom) / math.sqrt(0.7)
    torch.testing.assert_close(ours, closed_form, rtol=1e-12, atol=1e-12)


def test_sphere_matches_arccos_for_separated_points():
    x = random_points("sphere", 8, 3, seed=10)
    y = random_points("sphere", 5, 3, seed=11)
    ours = pairwise_distance(x, y, geometry="sphere")
    torch.testing.assert_close(ours, torch.arccos((x @ y.T).clamp(-1, 1)), rtol=1e-9, atol=1e-9)


def test_sphere_self_distance_beats_geoopt_clamp():
    x = random_points("sphere", 4, 3, dtype=torch.float32, seed=12)
    assert float(sphere().dist(x, x).max()) > 1e-3  # geoopt's acos clamp: why we compute our own
    assert float(distance(x, x, geometry="sphere").abs().max()) == 0.0


@pytest.mark.parametrize("geometry_name,factor", [("euclidean", 1.0), ("poincare", None), ("sphere", 1.0)])
def test_small_distances_accurate_in_float32(geometry_name, factor):
    """Points 1e-4 apart: float32 distance within 1e-3 relative of the float64 value."""
    base = random_points(geometry_name, 1, 3, seed=13)
    step = torch.tensor([[1e-4, -0.5e-4, 0.2e-4]], dtype=torch.float64)
    other = base + step
    if geometry_name == "sphere":
        other = project(other, geometry="sphere")
    d64 = pairwise_distance(base, other, geometry=geometry_name)
    d32 = pairwise_distance(base.float(), other.float(), geometry=geometry_name)
    assert float(d64) > 0
    assert abs(float(d32) - float(d64)) / float(d64) < 1e-3


def test_small_curvature_limit_is_twice_euclidean():
    """d_c(x, y) -> 2 ||x - y|| as c -> 0 (the ball's metric at the origin is 4x the flat one)."""
    x = torch.tensor([[0.3, -0.2]], dtype=torch.float64)
    y = torch.tensor([[-0.1, 0.4]], dtype=torch.float64)
    euclid = float(pairwise_distance(x, y, geometry="euclidean"))
    errors = [
        abs(float(pairwise_distance(x, y, geometry="poincare", c=c)) / (2 * euclid) - 1)
        for c in (1e-2, 1e-4, 1e-6)
    ]
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 1e-6


def test_finite_gradient_at_x_equals_y(geometry, dtype):
    x = random_points(geometry, 5, 3, dtype=dtype, seed=14).requires_grad_(True)
    y = x.detach().clone().requires_grad_(True)
    for fn in (pairwise_distance, pairwise_sq_distance):
        (gx, gy) = torch.autograd.grad(fn(x, y, geometry=geometry).sum(), (x, y))
        assert torch.isfinite(gx).all() and torch.isfinite(gy).all()


def test_squared_distance_gradient_matches_finite_differences(geometry):
    x = random_points(geometry, 3, 3, seed=15).requires_grad_(True)
    y = random_points(geometry, 4, 3, seed=16)

    def f(x):
        return pairwise_sq_distance(x, y, geometry=geometry, validate=False).sum()

    assert torch.autograd.gradcheck(f, (x,), eps=1e-6, atol=1e-6)


def test_expmap0_logmap0_round_trip(geometry, dtype):
    v = 0.3 * random_points("euclidean", 6, 4, dtype=dtype, seed=17)
    if geometry == "sphere":
        v[..., -1] = 0  # tangent at the north pole
    x = expmap0(v, geometry=geometry)
    torch.testing.assert_close(logmap0(x, geometry=geometry), v, **(tol(dtype) | {"atol": 1e-5}))
    # the Riemannian length of the tangent vector is the distance from the origin; at the ball's
    # origin the metric is lambda_0^2 = 4 times the Euclidean one
    origin = torch.zeros_like(x)
    if geometry == "sphere":
        origin[..., -1] = 1
    conformal = 2.0 if geometry == "poincare" else 1.0
    torch.testing.assert_close(
        distance(origin, x, geometry=geometry), conformal * v.norm(dim=-1), **(tol(dtype) | {"atol": 1e-5})
    )


def test_expmap_logmap_round_trip(geometry):
    x = random_points(geometry, 5, 3, seed=18)
    y = random_points(geometry, 5, 3, seed=19)
    u = logmap(x, y, geometry=geometry)
    torch.testing.assert_close(expmap(x, u, geometry=geometry), y, rtol=1e-7, atol=1e-9)
    torch.testing.assert_close(
        u.norm(dim=-1) if geometry != "poincare" else ball().norm(x, u),
        distance(x, y, geometry=geometry),
        rtol=1e-7,
        atol=1e-9,
    )


def test_geodesic_is_a_geodesic(geometry):
    x, y = random_points(geometry, 2, 3, seed=20)
    t = torch.linspace(0, 1, 11, dtype=torch.float64)
    path = geodesic(x, y, t, geometry=geometry)
    torch.testing.assert_close(path[0], x)
    torch.testing.assert_close(path[-1], y)
    total = distance(x, y, geometry=geometry)
    # constant speed: d(x, gamma(t)) = t d(x, y)
    torch.testing.assert_close(
        distance(x.expand_as(path), path, geometry=geometry), t * total, rtol=1e-7, atol=1e-9
    )


def test_to_ball_stays_inside_and_is_smooth_at_zero():
    z = torch.cat([torch.zeros(1, 3), 1e3 * torch.randn(20, 3), torch.randn(5, 3)]).double().requires_grad_(True)
    for c in (0.25, 1.0, 4.0):
        x = to_ball(z, c=c)
        assert (x.norm(dim=-1) <= 0.9 / math.sqrt(c) + 1e-12).all()
        (g,) = torch.autograd.grad(x.sum(), z)
        assert torch.isfinite(g).all()
    assert torch.equal(to_ball(torch.zeros(2, 3)), torch.zeros(2, 3))


def test_cross_maps_land_on_the_sphere():
    c = random_points("poincare", 10, 3, seed=21)
    for mapped in (norm_map(c), stereographic_map(c), LearnableSphereMap(3, hidden=8).double()(c)):
        torch.testing.assert_close(mapped.norm(dim=-1), torch.ones(10, dtype=torch.float64))
    assert stereographic_map(c).shape == (10, 4)
    pole = stereographic_map(torch.zeros(1, 3))
    torch.testing.assert_close(pole, torch.tensor([[0.0, 0.0, 0.0, 1.0]]))
    # stereographic keeps the norm (the hierarchy level) as latitude: it is injective on the ball
    z_last = stereographic_map(c)[:, -1]
    torch.testing.assert_close(z_last, (1 - c.norm(dim=-1) ** 2) / (1 + c.norm(dim=-1) ** 2))


def test_norm_map_rejects_zero_vector():
    with pytest.raises(ValueError, match="zero vector"):
        norm_map(torch.zeros(2, 3))
