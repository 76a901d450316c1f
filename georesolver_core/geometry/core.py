"""One vocabulary over the three geometries: the same verbs whatever the space (``pairwise_distance``,
``project``, ``expmap0``, ``logmap0``), each taking the geometry as a keyword.

A page swaps geometry with one string: ``pairwise_distance(q, k, geometry="poincare", c=0.5)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import geoopt
import torch
from torch import Tensor

from georesolver_core.budget import check_memory, elements
from georesolver_core.geometry import euclidean, poincare, sphere
from georesolver_core.geometry.cross_maps import stereographic_map
from georesolver_core.theory.geometry import euclidean_ball_volume, hyperbolic_ball_volume
from georesolver_core.validate import (
    broadcast_batch,
    check_curvature,
    check_finite,
    check_in_ball,
    check_on_sphere,
    check_same_dim,
)


@dataclass(frozen=True)
class Chart:
    """The 2-D chart of a geometry that the loss-landscape figures draw over (``landscape.grid``).

    Chart coordinates (u, v) are the point itself where the points have two coordinates (the plane,
    the disk), else normal coordinates at the origin: q = exp_o(u e_1 + v e_2) (the sphere's cap).
    """

    patch: str  # what the chart covers, for captions
    axes: tuple[str, str]  # the axis titles of (u, v)
    extent: float  # default half-width of the patch [-extent, extent]^2 (at c = 1)
    max_extent: float | None = None  # the largest half-width allowed; None: the rim 1/sqrt(c)


@dataclass(frozen=True)
class Panel:
    """A geometry's panel on the Home figure: the same query and keys drawn in every geometry."""

    title: str
    from_plane: Callable[[Tensor], Tensor]  # R^2 -> points, pointwise (..., 2) -> (..., 2 + extra_dims)


@dataclass(frozen=True)
class Geometry:
    """A registry entry: what the pages show, and the geometry's own formulas and maps.

    Every callable takes the curvature parameter ``c`` (used by the ball only) and no validation:
    the public verbs below validate, then call the entry. Code outside this package reads the
    behaviour from here instead of comparing the geometry's name.
    """

    name: str
    label: str  # shown in the UI
    curvature: str  # sign of the sectional curvature, for labels
    description: str
    pairwise_sq_distance: Callable[[Tensor, Tensor, float], Tensor]  # (..., n, d), (..., m, d) -> (..., n, m)
    pairwise_distance: Callable[[Tensor, Tensor, float], Tensor]  # (..., n, d), (..., m, d) -> (..., n, m)
    distance: Callable[[Tensor, Tensor, float], Tensor]  # (..., d), (..., d) -> (...)
    sq_distance: Callable[[Tensor, Tensor, float], Tensor]  # (..., d), (..., d) -> (...), smooth at x = y
    sq_distance_from_gram: Callable[[Tensor, Tensor, Tensor, float], Tensor]  # (|x|^2, |y|^2, <x,y>, c) -> d^2
    project: Callable[[Tensor, float], Tensor]  # nearest valid point (..., d) -> (..., d)
    embed: Callable[[Tensor, float], Tensor]  # R^d -> points: identity / to_ball / normalise (zero stays 0)
    manifold: Callable[..., geoopt.Manifold]  # manifold(c, exact=False): the geoopt manifold
    check: Callable[[str, Tensor, float], Tensor]  # check(name, x, c): ValueError unless x holds points
    origin: Callable[..., Tensor]  # origin(d, dtype=, device=): the base point (north pole e_d on the sphere)
    expmap0: Callable[[Tensor, float], Tensor]  # exp_o(v) at the origin
    logmap0: Callable[[Tensor, float], Tensor]  # log_o(x) at the origin
    expmap: Callable[[Tensor, Tensor, float], Tensor]  # exp_x(v)
    logmap: Callable[[Tensor, Tensor, float], Tensor]  # log_x(y)
    geodesic: Callable[[Tensor, Tensor, Tensor, float], Tensor]  # x (d,), y (d,), t (T,) -> (T, d)
    riemannian_hessian: Callable[[Tensor, Tensor, Tensor, float], Tensor]  # (x, egrad, ehess, c) -> Hess f(x)
    rim: Callable[[float], float | None]  # points fill the open ball |x| < rim (None: no rim, R^d or the sphere)
    outside: Callable[[Tensor, float], Tensor]  # (..., d) -> (...): how far each point lies off the space
    to_origin: Callable[
        [Tensor, Tensor, float], Tensor
    ]  # (x (N, d), p (d,), c): an isometry taking p to the origin
    sectional_curvature: Callable[[float], float]  # k(c): 0 (the plane), -c (the ball), +1 (the sphere)
    # lambda_x of the metric g_x(u, v) = lambda_x^2 <u, v> on tangent vectors at x: (..., d) -> (...)
    # (1 in the plane and on the sphere, whose metric is the one of its ambient R^(d+1))
    conformal_factor: Callable[[Tensor, float], Tensor]
    diameter: float = math.inf  # the largest distance between two points
    extra_dims: int = 0  # ambient coordinates beyond the intrinsic dimension (1 for the sphere)
    origin_name: str = "origin"  # what the base point is called in the UI
    colour: str = "#444444"  # the geometry's colour in every figure
    chart: Chart | None = None  # the loss-landscape chart (None: no landscape of this geometry)
    panel: Panel | None = None  # its Home panel (None: not on the Home figure)
    # V(R, d, c) of a geodesic ball of radius R (section 5.2(A)); None where no claim needs it (the sphere)
    ball_volume: Callable[..., object] | None = None
    # the name of its streaming-kernel maths: the tile class in ``attention.fused_geometry`` and the score
    # hook in ``attention.flex`` (None: the reference kernel only)
    tile: str | None = None

    # The maths callers ask for. Outside this package code asks these, never the entry's name or data
    # fields such as ``extra_dims`` (``tests/test_architecture.py`` greps for them).

    def metric(self, x: Tensor, u: Tensor, v: Tensor, c: float = 1.0) -> Tensor:
        """g_x(u, v) = lambda_x^2 <u, v>: the Riemannian inner product of tangent vectors at x. (..., d) x3 -> (...)."""
        lam = self.conformal_factor(x, c)
        return lam * lam * (u * v).sum(-1)

    def norm(self, x: Tensor, v: Tensor, c: float = 1.0) -> Tensor:
        """|v|_x = lambda_x |v|: the Riemannian length of a tangent vector v at x. (..., d), (..., d) -> (...)."""
        return self.conformal_factor(x, c) * v.norm(dim=-1)

    def ambient_dim(self, d: int) -> int:
        """How many coordinates a point of the d-dimensional space has: d, or d + 1 on the sphere S^d in R^(d+1)."""
        return d + self.extra_dims

    @property
    def is_embedded(self) -> bool:
        """Whether points lie on a hypersurface of their coordinate space (the sphere in R^(d+1)): typed or
        learned coordinates are projected onto it, charts are normal coordinates at the origin, and the
        tangent space at the origin is spanned by the first d coordinate axes."""
        return self.extra_dims > 0

    @property
    def is_compact(self) -> bool:
        """Compact without boundary (the sphere): geodesics close up, distances stop at the diameter, and
        no point is a centre (geodesic balls of every radius, radii measured from the origin)."""
        return math.isfinite(self.diameter)

    @property
    def is_flat(self) -> bool:
        """Zero curvature for every c (the plane): coordinates and volume element are the Euclidean ones."""
        return self.sectional_curvature(1.0) == 0.0 and self.sectional_curvature(2.0) == 0.0

    @property
    def has_curvature_parameter(self) -> bool:
        """Whether the curvature parameter c changes the space (the ball: k = -c); elsewhere c is ignored."""
        return self.sectional_curvature(1.0) != self.sectional_curvature(2.0)

    @property
    def has_bounded_coordinates(self) -> bool:
        """Whether valid points have bounded coordinates (inside a rim, or on a compact space): else, as in
        R^d, coordinates may be large enough for their squares to overflow."""
        return self.rim(1.0) is not None or self.is_compact


def _flat(fn):
    """A formula of a geometry without a curvature parameter, given the registry's (..., c) signature."""
    return lambda *args: fn(*args[:-1])


# The distance formulas every geometry module defines under these names (the registry's fields too).
_DISTANCES = ("pairwise_sq_distance", "pairwise_distance", "distance", "sq_distance", "sq_distance_from_gram")


def _distances(module, *, takes_c: bool = False) -> dict[str, Callable]:
    """A geometry module's distance formulas as registry fields; ``_flat`` where the space has no c."""
    return {name: getattr(module, name) if takes_c else _flat(getattr(module, name)) for name in _DISTANCES}


def _unit_factor(x: Tensor, c: float) -> Tensor:
    """lambda_x = 1: the metric is the Euclidean one of the coordinates (the plane, the sphere's ambient)."""
    return x.new_ones(x.shape[:-1])


def _zeros(d: int, *, dtype=None, device=None) -> Tensor:
    return torch.zeros(d, dtype=dtype, device=device)


def _pole_like(x: Tensor) -> Tensor:
    return sphere.north_pole(x.shape[-1], dtype=x.dtype, device=x.device).expand_as(x)


def _euclidean_manifold(c: float, exact: bool = False) -> geoopt.Manifold:
    return geoopt.Euclidean(ndim=1)


def _ball_manifold(c: float, exact: bool = False) -> geoopt.Manifold:
    # Exact: geoopt's retraction is the exponential map (descent paths follow geodesics).
    return geoopt.PoincareBallExact(c=c) if exact else poincare.ball(c)


def _sphere_manifold(c: float, exact: bool = False) -> geoopt.Manifold:
    return geoopt.SphereExact() if exact else sphere.sphere()


def _check_sphere(name: str, x: Tensor, c: float) -> Tensor:
    return check_on_sphere(name, x)


def _check_euclidean(name: str, x: Tensor, c: float) -> Tensor:
    return check_finite(name, x)


def _project_sphere(x: Tensor, c: float) -> Tensor:
    if x.numel() and bool((x.norm(dim=-1) == 0).any()):
        raise ValueError("x must have no zero vectors: a zero vector has no direction on the sphere")
    return sphere.project(x)


GEOMETRIES: dict[str, Geometry] = {
    "euclidean": Geometry(
        "euclidean",
        "Euclidean",
        "0",
        "flat space R^d, d(x,y) = ||x - y||",
        **_distances(euclidean),
        project=lambda x, c: x,
        embed=lambda x, c: x,
        manifold=_euclidean_manifold,
        check=_check_euclidean,
        origin=_zeros,
        expmap0=lambda v, c: v,
        logmap0=lambda x, c: x,
        expmap=lambda x, v, c: x + v,
        logmap=lambda x, y, c: y - x,
        geodesic=lambda x, y, t, c: x[None] + t[:, None] * (y - x)[None],
        riemannian_hessian=lambda x, g, h, c: h,
        rim=lambda c: None,
        outside=lambda x, c: x.new_zeros(x.shape[:-1]),
        to_origin=lambda x, p, c: x - p,
        sectional_curvature=lambda c: 0.0,
        conformal_factor=_unit_factor,
        colour="#1f77b4",
        chart=Chart("square of the plane", ("x", "y"), 1.5, max_extent=100.0),
        panel=Panel("Plane R^2", lambda z: z),
        ball_volume=lambda R, d, c=1.0: euclidean_ball_volume(R, d),
        tile="Euclidean",
    ),
    "poincare": Geometry(
        "poincare",
        "Poincaré ball",
        "-c",
        "hyperbolic space, d = arcosh(1 + 2||x-y||^2/((1-|x|^2)(1-|y|^2)))",
        **_distances(poincare, takes_c=True),
        project=lambda x, c: poincare.ball(c).projx(x),
        embed=lambda z, c: poincare.to_ball(z, c=c),
        manifold=_ball_manifold,
        check=lambda name, x, c: check_in_ball(name, x, c),
        origin=_zeros,
        expmap0=lambda v, c: poincare.ball(c).expmap0(v),
        logmap0=lambda x, c: poincare.ball(c).logmap0(x),
        expmap=lambda x, v, c: poincare.ball(c).expmap(x, v),
        logmap=lambda x, y, c: poincare.ball(c).logmap(x, y),
        geodesic=lambda x, y, t, c: poincare.ball(c).geodesic(t[:, None], x[None], y[None]),
        riemannian_hessian=poincare.riemannian_hessian,
        rim=lambda c: 1.0 / math.sqrt(c),
        outside=lambda x, c: (math.sqrt(c) * x.norm(dim=-1) - 1.0).clamp_min(0.0),  # past the rim
        to_origin=poincare.to_origin,
        sectional_curvature=lambda c: -c,
        conformal_factor=poincare.conformal_factor,
        colour="#d62728",
        chart=Chart("the Poincaré disk", ("ball coordinate x_1", "ball coordinate x_2"), 1.0),
        panel=Panel("Poincaré disk (curvature -1)", lambda z: poincare.to_ball(z, c=1.0)),
        ball_volume=hyperbolic_ball_volume,
        tile="Poincare",
    ),
    "sphere": Geometry(
        "sphere",
        "Sphere",
        "+1",
        "unit sphere S^{d-1}, d(x,y) = arccos<x,y>",
        **_distances(sphere),
        project=_project_sphere,
        embed=_flat(sphere.normalise),
        manifold=_sphere_manifold,
        check=_check_sphere,
        origin=sphere.north_pole,
        expmap0=lambda v, c: sphere.expmap(_pole_like(v), v),
        logmap0=lambda x, c: sphere.logmap(_pole_like(x), x),
        expmap=_flat(sphere.expmap),
        logmap=_flat(sphere.logmap),
        geodesic=_flat(sphere.slerp),
        riemannian_hessian=_flat(sphere.riemannian_hessian),
        rim=lambda c: None,
        outside=lambda x, c: (x.norm(dim=-1) - 1.0).abs(),  # off the unit sphere, either way
        to_origin=_flat(sphere.to_origin),
        sectional_curvature=lambda c: 1.0,
        conformal_factor=_unit_factor,
        diameter=math.pi,
        origin_name="north pole",
        extra_dims=1,
        colour="#2ca02c",
        chart=Chart(
            "cap of the sphere S^2 in normal coordinates at the north pole",
            ("normal coordinate u at the north pole (rad)", "normal coordinate v (rad)"),
            2.0,
            max_extent=2.2,  # inside the cut locus: the chart stays one-to-one
        ),
        panel=Panel("Sphere S^2", stereographic_map),
        tile="Sphere",
    ),
}


def check_geometry(geometry: str) -> str:
    """The geometry name must be a key of GEOMETRIES."""
    if geometry not in GEOMETRIES:
        raise ValueError(f"geometry must be one of {sorted(GEOMETRIES)} (got {geometry!r})")
    return geometry


def ball_volume(geometry: str) -> Callable:
    """V(R, d, c) of a geodesic ball of the geometry (its registry entry's ``ball_volume``)."""
    volume = GEOMETRIES[check_geometry(geometry)].ball_volume
    if volume is None:
        have = sorted(g for g, entry in GEOMETRIES.items() if entry.ball_volume is not None)
        raise ValueError(f"geometry must be one of {have} for a ball volume (got {geometry!r})")
    return volume


def check_points(name: str, x: torch.Tensor, *, geometry: str, c: float = 1.0) -> torch.Tensor:
    """Validate that x holds finite points of the geometry (inside the ball, on the sphere)."""
    return GEOMETRIES[check_geometry(geometry)].check(name, x, check_curvature(c))


def _check_pair(x, y, geometry, c, names=("x", "y")):
    check_points(names[0], x, geometry=geometry, c=c)
    check_points(names[1], y, geometry=geometry, c=c)
    check_same_dim(names[0], x, names[1], y)
    if x.dim() < 2 or y.dim() < 2:
        raise ValueError(
            f"{names[0]} and {names[1]} must be point sets of shape (..., n, d) and (..., m, d) "
            f"(got shapes {tuple(x.shape)} and {tuple(y.shape)})"
        )
    batch = broadcast_batch(list(names), [x.shape[:-2], y.shape[:-2]])
    # the (..., n, m) result, and as many bytes again for the chunks it is assembled from
    n, m = x.shape[-2], y.shape[-2]
    check_memory(
        "a pairwise distance matrix",
        2 * x.element_size() * elements(batch.numel(), n, m),
        n=n,
        m=m,
        batch=tuple(batch),
    )


def pairwise_distance(
    x: torch.Tensor, y: torch.Tensor, *, geometry: str, c: float = 1.0, validate: bool = True
) -> torch.Tensor:
    """Geodesic distance between every x_i and y_j. (..., n, d), (..., m, d) -> (..., n, m).

    Memory stays bounded (chunked), small distances are exact in float32, and the gradient is
    finite (0) at x_i = y_j in every geometry.
    """
    if validate:
        _check_pair(x, y, geometry, c)
    return GEOMETRIES[geometry].pairwise_distance(x, y, c)


def pairwise_sq_distance(
    x: torch.Tensor, y: torch.Tensor, *, geometry: str, c: float = 1.0, validate: bool = True
) -> torch.Tensor:
    """Squared geodesic distance d(x_i, y_j)^2, the quantity the IDA kernel uses. (..., n, m)."""
    if validate:
        _check_pair(x, y, geometry, c)
    return GEOMETRIES[geometry].pairwise_sq_distance(x, y, c)


def distance(x: torch.Tensor, y: torch.Tensor, *, geometry: str, c: float = 1.0) -> torch.Tensor:
    """d(x, y) elementwise over the last dim (broadcasting). (..., d), (..., d) -> (...)."""
    check_points("x", x, geometry=geometry, c=c)
    check_points("y", y, geometry=geometry, c=c)
    check_same_dim("x", x, "y", y)
    broadcast_batch(["x", "y"], [x.shape[:-1], y.shape[:-1]])
    return GEOMETRIES[geometry].distance(x, y, c)


def project(x: torch.Tensor, *, geometry: str, c: float = 1.0) -> torch.Tensor:
    """Nearest valid point: identity (Euclidean), geoopt's projx into the ball, or x/||x|| (sphere)."""
    check_geometry(geometry)
    check_finite("x", x)
    return GEOMETRIES[geometry].project(x, check_curvature(c))


def embed(z: torch.Tensor, *, geometry: str, c: float = 1.0) -> torch.Tensor:
    """R^d -> points of the geometry: z as is, x = 0.9 tanh(|z|) z/|z| into the ball, z/|z| on the sphere."""
    check_geometry(geometry)
    check_finite("z", z)
    return GEOMETRIES[geometry].embed(z, check_curvature(c))


def to_ball(z: torch.Tensor, *, c: float = 1.0) -> torch.Tensor:
    """The paper's projection x = 0.9 tanh(z) into the Poincaré ball (radial form, section 4)."""
    check_finite("z", z)
    return poincare.to_ball(z, c=check_curvature(c))


def expmap0(v: torch.Tensor, *, geometry: str, c: float = 1.0) -> torch.Tensor:
    """Exponential map at the origin (the north pole e_d on the sphere). (..., d) -> (..., d)."""
    check_geometry(geometry)
    check_finite("v", v)
    return GEOMETRIES[geometry].expmap0(v, check_curvature(c))


def logmap0(x: torch.Tensor, *, geometry: str, c: float = 1.0) -> torch.Tensor:
    """Logarithmic map at the origin (the north pole on the sphere). (..., d) -> (..., d)."""
    check_points("x", x, geometry=geometry, c=c)
    return GEOMETRIES[geometry].logmap0(x, c)


def expmap(x: torch.Tensor, v: torch.Tensor, *, geometry: str, c: float = 1.0) -> torch.Tensor:
    """exp_x(v): follow the geodesic from x with initial velocity v for unit time."""
    check_points("x", x, geometry=geometry, c=c)
    check_finite("v", v)
    return GEOMETRIES[geometry].expmap(x, v, c)


def logmap(x: torch.Tensor, y: torch.Tensor, *, geometry: str, c: float = 1.0) -> torch.Tensor:
    """log_x(y): the tangent vector at x pointing to y with length d(x, y)."""
    check_points("x", x, geometry=geometry, c=c)
    check_points("y", y, geometry=geometry, c=c)
    return GEOMETRIES[geometry].logmap(x, y, c)


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
    return GEOMETRIES[geometry].geodesic(x, y, t.to(x), c)
