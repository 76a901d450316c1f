"""Geometry: Euclidean space, the Poincaré ball (geoopt.PoincareBall) and the unit sphere (geoopt.Sphere)."""

from georesolver_core.geometry.core import (
    GEOMETRIES,
    Chart,
    Geometry,
    Panel,
    ball_volume,
    check_geometry,
    check_points,
    distance,
    embed,
    expmap,
    expmap0,
    geodesic,
    logmap,
    logmap0,
    pairwise_distance,
    pairwise_sq_distance,
    project,
    to_ball,
)
from georesolver_core.geometry.cross_maps import LearnableSphereMap, norm_map, stereographic_map
from georesolver_core.geometry.poincare import BALL_SCALE, ball
from georesolver_core.geometry.sphere import sphere

__all__ = [
    "BALL_SCALE",
    "GEOMETRIES",
    "Chart",
    "Geometry",
    "LearnableSphereMap",
    "Panel",
    "ball",
    "ball_volume",
    "check_geometry",
    "check_points",
    "distance",
    "embed",
    "expmap",
    "expmap0",
    "geodesic",
    "logmap",
    "logmap0",
    "norm_map",
    "pairwise_distance",
    "pairwise_sq_distance",
    "project",
    "sphere",
    "stereographic_map",
    "to_ball",
]
