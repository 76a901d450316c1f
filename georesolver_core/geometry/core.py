"""One vocabulary over the three geometries: the same verbs whatever the space (STYLE.md point 3).

A page swaps geometry with one string: ``pairwise_distance(q, k, geometry="poincare", c=0.5)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from georesolver_core.geometry import euclidean, poincare, sphere
from georesolver_core.validate import (
    broadcast_batch,
    check_curvature,
    check_finite,
    check_in_ball,
    check_on_sphere,
    check_same_dim,
)


@dataclass(frozen=True)
class Geometry:
    """A registry entry: what the page shows and how points are checked."""

    name: str
    label: str  # shown in the UI
    curvature: str  # sign of the sectional curvature, for labels
    description: str


GEOMETRIES: dict[str, Geometry] = {
    "euclidean": Geometry("euclidean", "Euclidean", "0", "flat space R^d, d(x,y) = ||x - y||"),
    "poincare": Geometry(
        "poincare", "Poincaré ball", "-c", "hyperbolic space, d = arcosh(1 + 2||x-y||^2/((1-|x|^2)(1-|y|^2)))"
    ),
    "sphere": Geometry("sphere", "Sphere", "+1", "unit sphere S^{d-1}, d(x,y) = arccos<x,y>"),
}


def check_geometry(geometry: str) -> str:
    """The geometry name must be a key of GEOMETRIES."""
    if geometry not in GEOMETRIES:
        raise ValueError(f"geometry must be one of {sorted(GEOMETRIES)} (got {geometry!r})")
    return geometry


def check_points(name: str, x: torch.Tensor, *, geometry: str, c: float = 1.0) -> torch.Tensor:
    """Validate that x holds finite points of the geometry (inside the ball, on the sphere)."""
    check_geometry(geometry)
    if geometry == "poincare":
        return check_in_ball(name, x, check_curvature(c))
    if geometry == "sphere":
        return check_on_sphere(name, x)
    return check_finite(name, x)


def _check_pair(x, y, geometry, c, names=("x", "y")):
    check_points(names[0], x, geometry=geometry, c=c)
    check_points(names[1], y, geometry=geometry, c=c)
    check_same_dim(names[0], x, names[1], y)
    if x.dim() < 2 or y.dim() < 2:
        raise ValueError(
            f"{names[0]} and {names[1]} must be point sets of shape (..., n, d) and (..., m, d) "
            f"(got shapes {tuple(x.shape)} and {tuple(y.shape)})"
        )
    broadcast_batch(list(names), [x.shape[:-2], y.shape[:-2]])


def pairwise_distance(
    x: torch.Tensor, y: torch.Tensor, *, geometry: str, c: float = 1.0, validate: bool = True
) -> torch.Tensor:
    """Geodesic distance between every x_i and y_j. (..., n, d), (..., m, d) -> (..., n, m).

    Memory stays bounded (chunked), small distances are exact in float32, and the gradient is
    finite (0) at x_i = y_j in every geometry.
    """
    if validate:
        _check_pair(x, y, geometry, c)
    if geometry == "poincare":
        return poincare.pairwise_distance(x, y, c=c)
    if geometry == "sphere":
        return sphere.pairwise_distance(x, y)
    return euclidean.pairwise_distance(x, y)


def pairwise_sq_distance(
    x: torch.Tensor, y: torch.Tensor, *, geometry: str, c: float = 1.0, validate: bool = True
) -> torch.Tensor:
    """Squared geodesic distance d(x_i, y_j)^2, the quantity the IDA kernel uses. (..., n, m)."""
    if validate:
        _check_pair(x, y, geometry, c)
    if geometry == "poincare":
        return poincare.pairwise_sq_distance(x, y, c=c)
    if geometry == "sphere":
        return sphere.pairwise_sq_distance(x, y)
    return euclidean.pairwise_sq_distance(x, y)


def distance(x: torch.Tensor, y: torch.Tensor, *, geometry: str, c: float = 1.0) -> torch.Tensor:
    """d(x, y) elementwise over the last dim (broadcasting). (..., d), (..., d) -> (...)."""
    check_points("x", x, geometry=geometry, c=c)
    check_points("y", y, geometry=geometry, c=c)
    check_same_dim("x", x, "y", y)
    if geometry == "poincare":
        return poincare.distance(x, y, c=c)
    if geometry == "sphere":
        return sphere.distance(x, y)
    return euclidean.distance(x, y)


def project(x: torch.Tensor, *, geometry: str, c: float = 1.0) -> torch.Tensor:
    """Nearest valid point: identity (Euclidean), geoopt's projx into the ball, or x/||x|| (sphere)."""
    check_geometry(geometry)
    check_finite("x", x)
    if geometry == "poincare":
        return poincare.ball(check_curvature(c)).projx(x)
    if geometry == "sphere":
        if x.numel() and bool((x.norm(dim=-1) == 0).any()):
            raise ValueError("x must have no zero vectors: a zero vector has no direction on the sphere")
        return sphere.project(x)
    return x


def to_ball(z: torch.Tensor, *, c: float = 1.0) -> torch.Tensor:
    """The paper's projection x = 0.9 tanh(z) into the Poincaré ball (radial form, section 4)."""
    check_finite("z", z)
    return poincare.to_ball(z, c=check_curvature(c))


def expmap0(v: torch.Tensor, *, geometry: str, c: float = 1.0) -> torch.Tensor:
    """Exponential map at the origin (the north pole e_d on the sphere). (..., d) -> (..., d)."""
    check_geometry(geometry)
    check_finite("v", v)
    if geometry == "poincare":
        return poincare.ball(check_curvature(c)).expmap0(v)
    if geometry == "sphere":
        pole = sphere.north_pole(v.shape[-1], dtype=v.dtype, device=v.device).expand_as(v)
        return sphere.expmap(pole, v)
    return v


def logmap0(x: torch.Tensor, *, geometry: str, c: float = 1.0) -> torch.Tensor:
    """Logarithmic map at the origin (the north pole on the sphere). (..., d) -> (..., d)."""
    check_points("x", x, geometry=geometry, c=c)
    if geometry == "poincare":
        return poincare.ball(c).logmap0(x)
    if geometry == "sphere":
        pole = sphere.north_pole(x.shape[-1], dtype=x.dtype, device=x.device).expand_as(x)
        return sphere.logmap(pole, x)
    return x


def expmap(x: torch.Tensor, v: torch.Tensor, *, geometry: str, c: float = 1.0) -> torch.Tensor:
    """exp_x(v): follow the geodesic from x with initial velocity v for unit time."""
    check_points("x", x, geometry=geometry, c=c)
    check_finite("v", v)
    if geometry == "poincare":
        return poincare.ball(c).expmap(x, v)
    if geometry == "sphere":
        return sphere.expmap(x, v)
    return x + v


def logmap(x: torch.Tensor, y: torch.Tensor, *, geometry: str, c: float = 1.0) -> torch.Tensor:
    """log_x(y): the tangent vector at x pointing to y with length d(x, y)."""
    check_points("x", x, geometry=geometry, c=c)
    check_points("y", y, geometry=geometry, c=c)
    if geometry == "poincare":
        return poincare.ball(c).logmap(x, y)
    if geometry == "sphere":
        return sphere.logmap(x, y)
    return y - x


def geodesic(x: torch.Tensor, y: torch.Tensor, t: torch.Tensor, *, geometry: str, c: float = 1.0) -> torch.Tensor:
    """Points gamma(t) on the geodesic from x (t=0) to y (t=1). x, y (d,), t (T,) -> (T, d).

    Ball: geoopt's Möbius geodesic x (+) t (-x (+) y), a circular arc orthogonal to the rim.
    Sphere: a great-circle arc. Euclidean: the segment.
    """
    check_points("x", x, geometry=geometry, c=c)
    check_points("y", y, geometry=geometry, c=c)
    if x.dim() != 1 or y.dim() != 1 or t.dim() != 1:
        raise ValueError(
            f"geodesic takes x (d,), y (d,), t (T,) (got {tuple(x.shape)}, {tuple(y.shape)}, {tuple(t.shape)})"
        )
    t = t.to(x)
    if geometry == "poincare":
        return poincare.ball(c).geodesic(t[:, None], x[None], y[None])
    if geometry == "sphere":
        return sphere.slerp(x, y, t)
    return x[None] + t[:, None] * (y - x)[None]
