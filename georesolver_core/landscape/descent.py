"""Riemannian gradient descent on the retrieval loss, from several starts at once (geoopt).

Each start is a row of one ``geoopt.ManifoldParameter`` on the geometry's manifold (Euclidean,
PoincareBallExact(c), SphereExact) and ``geoopt.optim.RiemannianSGD`` moves it: the Euclidean
gradient is turned into the Riemannian one (egrad2rgrad) and the step follows the exponential map,
so the path never leaves the manifold. The rows do not interact: the loss is a sum over starts.

The step length is capped (``max_step``, in the geometry's own distance): the IDA well around a
key is only about sqrt(eps) wide and an uncapped step near a steep wall jumps over it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import geoopt
import numpy as np
import torch

from georesolver_core.geometry import GEOMETRIES, check_geometry
from georesolver_core.landscape.grid import DISK_RMAX, LandscapeGrid, chart_to_points, points_to_chart
from georesolver_core.landscape.loss import LossSetup
from georesolver_core.validate import check_curvature, check_positive_int, check_range


def manifold_of(geometry: str, c: float = 1.0) -> geoopt.manifolds.Manifold:
    """The geoopt manifold a point of the geometry lives on (rows of a (S, d) parameter).

    The "Exact" variants retract with the exponential map, so an optimiser step of Riemannian length
    r moves the point exactly a geodesic distance r (geoopt's default ball retraction x + u is only
    first-order accurate).
    """
    return GEOMETRIES[check_geometry(geometry)].manifold(check_curvature(c), exact=True)


@dataclass
class DescentPaths:
    """Positions and losses of every start at every step."""

    geometry: str
    points: np.ndarray  # (T + 1, S, d) in the geometry's coordinates
    uv: np.ndarray  # (T + 1, S, 2) in the chart of the landscape grid
    loss: np.ndarray  # (T + 1, S)
    lr: float
    steps: int

    @property
    def final_loss(self) -> np.ndarray:
        return self.loss[-1]


def descent_paths(
    starts: torch.Tensor, keys: torch.Tensor, *, lr: float = 0.5, steps: int = 150, max_step: float = 0.05, **setup
) -> DescentPaths:
    """Riemannian gradient descent (geoopt RiemannianSGD) on L(q) = (1 - W_target(q))^2 from each start.

    starts (S, d) are points of the geometry; returns every iterate. ``max_step`` caps the
    Riemannian length of each step (the gradient is rescaled, its direction kept). ``setup``: the
    fields of ``LossSetup`` (kernel, eps, geometry, c, tau, target).
    """
    setup = LossSetup(**setup)
    lr = check_range("lr", lr, 1e-6, 1e3)
    steps = check_positive_int("steps", steps, 1, 10_000)
    max_step = check_range("max_step", max_step, 1e-6, 10.0)
    manifold = manifold_of(setup.geometry, setup.c)
    x = geoopt.ManifoldParameter(manifold.projx(starts.detach().clone()), manifold=manifold)
    opt = geoopt.optim.RiemannianSGD([x], lr=lr)
    points, losses = [], []
    for _ in range(steps):
        opt.zero_grad()
        loss = setup.loss(x, keys)  # (S,)
        loss.sum().backward()
        points.append(x.detach().clone())
        losses.append(loss.detach().clone())
        with torch.no_grad():
            rnorm = manifold.norm(x, manifold.egrad2rgrad(x, x.grad))  # (S,): Riemannian gradient norm
            scale = (max_step / (lr * rnorm)).clamp(max=1.0)  # (S,)
            x.grad.mul_(scale[:, None])
        opt.step()
    with torch.no_grad():
        points.append(x.detach().clone())
        losses.append(setup.loss(x, keys))
    pts = torch.stack(points)  # (T + 1, S, d)
    return DescentPaths(
        geometry=setup.geometry,
        points=pts.double().cpu().numpy(),
        uv=points_to_chart(pts, geometry=setup.geometry, c=setup.c).double().cpu().numpy(),
        loss=torch.stack(losses).double().cpu().numpy(),
        lr=lr,
        steps=steps,
    )


OUTCOMES: dict[str, str] = {
    "global": "ends at the grid's global minimum",
    "below": "leaves the patch with a loss below the patch's minimum (the infimum lies beyond it)",
    "escaped": "leaves the patch (towards infinity / the rim) with a loss above the patch's minimum",
    "stuck": "ends inside the patch away from the global minimum (a local minimum, saddle or plateau)",
}


def classify_paths(paths: DescentPaths, grid: LandscapeGrid, *, cells: float = 2.0) -> list[str]:
    """One key of OUTCOMES per start.

    "global": the end lies within ``cells`` grid spacings (chart distance) of the grid's global
    minimum, or no more than 1e-3 of the loss range above its value while inside the patch.
    """
    end = paths.uv[-1]  # (S, 2)
    near = np.linalg.norm(end - np.asarray(grid.global_min_uv)[None], axis=-1) <= cells * grid.spacing
    span = float(np.nanmax(grid.loss) - grid.global_min_loss)
    final = paths.final_loss
    if (rim := GEOMETRIES[grid.geometry].rim(grid.c)) is not None:
        outside = np.linalg.norm(end, axis=-1) / rim >= DISK_RMAX
    else:
        outside = np.abs(end).max(axis=-1) > grid.u[-1]
    out = []
    for i in range(end.shape[0]):
        if outside[i]:
            out.append("below" if final[i] < grid.global_min_loss else "escaped")
        elif near[i] or final[i] <= grid.global_min_loss + 1e-3 * span:
            out.append("global")
        else:
            out.append("stuck")
    return out


def reached_global(paths: DescentPaths, grid: LandscapeGrid, *, cells: float = 2.0) -> np.ndarray:
    """(S,) bool: the start reaches the global minimum of the patch, or lower beyond its border."""
    return np.array([o in ("global", "below") for o in classify_paths(paths, grid, cells=cells)])


def confirmed_spurious(
    grid: LandscapeGrid,
    keys: torch.Tensor,
    *,
    steps: int = 150,
    lr: float = 0.5,
) -> np.ndarray:
    """(k,) bool over the grid's spurious minima: True where Riemannian descent started there stays
    within two grid spacings and keeps a loss above the global grid value (a real local minimum,
    not a saddle or a wall that the grid happened to sample from one side)."""
    spur = grid.minima_uv[~grid.minima_global]  # (k, 2)
    if spur.shape[0] == 0:
        return np.zeros(0, dtype=bool)
    uv = torch.as_tensor(spur, dtype=keys.dtype, device=keys.device)
    starts = chart_to_points(uv, geometry=grid.geometry, c=grid.c)
    paths = descent_paths(starts, keys, lr=lr, steps=steps, max_step=0.25 * grid.spacing, **asdict(grid.setup))
    moved = np.linalg.norm(paths.uv[-1] - spur, axis=-1)
    span = float(np.nanmax(grid.loss) - grid.global_min_loss)
    return (moved <= 2.0 * grid.spacing) & (paths.final_loss > grid.global_min_loss + 1e-3 * span)
