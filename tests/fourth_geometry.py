"""A fourth geometry made of its maths only, and a pytest plugin that registers it for a whole run.

``flat_geometry`` is flat space R^d written out from its formulas here (not copied from the Euclidean
entry): distances, exp/log maps, geodesics, the metric. It names no tile for the streaming kernels, no
landscape chart and no Home panel, so every reader of the registry must either serve it or refuse it
clearly. Being flat space, its results can be checked against the Euclidean entry's.

Run any test files with it registered (``-p`` loads this module before the test modules and their
parametrisations read the registry):

    python -m pytest -p tests.fourth_geometry tests/test_geometry.py tests/test_fused.py
"""

from __future__ import annotations

import os

import geoopt
import pytest
import torch
from torch import Tensor

from georesolver_core.geometry import GEOMETRIES, Geometry
from georesolver_core.jobs.worker import SETUP_ENV
from georesolver_core.validate import check_finite

NAME = "flat"


def _root(sq: Tensor) -> Tensor:
    """sqrt with gradient 0 at 0 (the distance's gradient at x = y): the where keeps sqrt' away from 0."""
    positive = sq > 0
    return torch.where(positive, torch.where(positive, sq, torch.ones_like(sq)).sqrt(), torch.zeros_like(sq))


def _pairwise_sq(x: Tensor, y: Tensor, c: float) -> Tensor:
    """|x_i - y_j|^2 from the differences (exact 0 at x_i = y_j). (..., n, d), (..., m, d) -> (..., n, m)."""
    diff = x[..., :, None, :] - y[..., None, :, :]  # (..., n, m, d)
    return (diff * diff).sum(-1)


def _sq(x: Tensor, y: Tensor, c: float) -> Tensor:
    diff = x - y
    return (diff * diff).sum(-1)


def flat_geometry(name: str = NAME) -> Geometry:
    """R^d with d(x, y) = |x - y|, from its formulas alone."""
    return Geometry(
        name,
        "Flat space (maths only)",
        "0",
        "R^d written out from its formulas, d(x,y) = ||x - y||",
        pairwise_sq_distance=_pairwise_sq,
        pairwise_distance=lambda x, y, c: _root(_pairwise_sq(x, y, c)),
        distance=lambda x, y, c: _root(_sq(x, y, c)),
        sq_distance=_sq,
        sq_distance_from_gram=lambda xx, yy, xy, c: (xx + yy - 2.0 * xy).clamp_min(0.0),
        project=lambda x, c: x,
        embed=lambda z, c: z,
        manifold=lambda c, exact=False: geoopt.Euclidean(ndim=1),
        check=lambda label, x, c: check_finite(label, x),
        origin=lambda d, dtype=None, device=None: torch.zeros(d, dtype=dtype, device=device),
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
        conformal_factor=lambda x, c: x.new_ones(x.shape[:-1]),
    )


def register() -> None:
    """Add the maths-only geometry to the registry (once)."""
    GEOMETRIES.setdefault(NAME, flat_geometry())


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """As a plugin (``-p tests.fourth_geometry``): registered before conftest and the test modules read
    the registry, so every test parametrised over it runs the fourth geometry too. The job runner's workers
    (new interpreters) register it too, before each job (``jobs.worker.SETUP_ENV``)."""
    register()
    os.environ[SETUP_ENV] = ",".join(filter(None, [os.environ.get(SETUP_ENV), f"{__name__}:register"]))
