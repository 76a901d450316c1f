"""The loss of one query over a 2-D patch of a geometry: plane, Poincaré disk, sphere cap.

Every patch is drawn in 2-D chart coordinates (u, v):

- plane: (u, v) are the point itself, over [-extent, extent]^2;
- disk: (u, v) are Poincaré-ball coordinates; chart points with c(u^2 + v^2) >= r_max^2 lie
  outside the ball and are left out (NaN);
- sphere: normal coordinates at the north pole, q = exp_pole(u e_1 + v e_2), over
  [-extent, extent]^2 with extent < pi (the chart covers the cap of geodesic radius extent sqrt 2).

A local minimum of the grid is an interior point strictly below its 8 neighbours (all inside the
patch). It is global when its loss is within 1e-3 of the loss range of the patch minimum, spurious
otherwise. The global minimum can sit on the patch border (softmax keeps falling towards infinity).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from georesolver_core.geometry import GEOMETRIES, Chart, check_geometry, expmap0, logmap0
from georesolver_core.landscape.loss import LossSetup
from georesolver_core.validate import check_curvature, check_positive_int, check_range

DISK_RMAX = 0.98  # chart points of the disk beyond this fraction of the radius 1/sqrt(c) are left out
GLOBAL_TOL = 1e-3  # a grid minimum within this fraction of the loss range of the lowest one is global


def chart(geometry: str) -> Chart:
    """The geometry's landscape chart (its registry entry's ``chart``); ValueError where it has none."""
    entry = GEOMETRIES[check_geometry(geometry)].chart
    if entry is None:
        raise ValueError(f"geometry must be one of {charted()} for a landscape (got {geometry!r})")
    return entry


def charted() -> list[str]:
    """The geometries with a landscape chart, in registry order."""
    return [name for name, entry in GEOMETRIES.items() if entry.chart is not None]


def default_extent(geometry: str) -> float:
    """The chart half-width a landscape of ``geometry`` starts from (c = 1)."""
    return chart(geometry).extent


def check_extent(extent: float, geometry: str, c: float = 1.0) -> float:
    """Half-width of the chart, up to its ``max_extent``: (0, 100] plane, (0, 1/sqrt c] disk (the rim),
    (0, 2.2] sphere (inside the cut locus)."""
    hi = chart(geometry).max_extent
    if hi is None:
        hi = GEOMETRIES[geometry].rim(check_curvature(c))
    value = check_range("extent", extent, 0.0, hi)
    if value <= 0:
        raise ValueError(f"extent must be a number in (0, {hi:g}] (got {extent!r})")
    return value


def chart_to_points(uv: torch.Tensor, *, geometry: str, c: float = 1.0) -> torch.Tensor:
    """Chart coordinates to points of the geometry. (..., 2) -> (..., 2) plane/disk, (..., 3) sphere."""
    if GEOMETRIES[check_geometry(geometry)].is_embedded:  # the sphere: the chart is the tangent plane at e_3
        v = torch.cat([uv, torch.zeros_like(uv[..., :1])], dim=-1)  # tangent at the pole e_3
        return expmap0(v, geometry=geometry)
    return uv


def points_to_chart(x: torch.Tensor, *, geometry: str, c: float = 1.0) -> torch.Tensor:
    """Inverse of ``chart_to_points``. (..., 2 or 3) -> (..., 2)."""
    if GEOMETRIES[check_geometry(geometry)].is_embedded:  # the sphere
        return logmap0(x, geometry=geometry)[..., :2]
    return x


@dataclass(frozen=True)
class Patch:
    """The chart patch [-extent, extent]^2 of a geometry (module docstring), and points placed in it."""

    geometry: str  # plane, disk or sphere cap
    extent: float  # chart half-width
    c: float = 1.0  # ball curvature parameter, k = -c

    def __post_init__(self):
        object.__setattr__(self, "extent", check_extent(self.extent, self.geometry, self.c))

    def _circle(self, r: torch.Tensor, phi: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        """Chart polar coordinates (r, phi), each (n,), to points of the geometry. (n, 2 or 3)."""
        uv = torch.stack([r * torch.cos(phi), r * torch.sin(phi)], dim=-1)  # (n, 2)
        return chart_to_points(uv, geometry=self.geometry, c=self.c).to(dtype)

    def random_keys(self, n: int, *, seed: int = 0, dtype: torch.dtype = torch.float64) -> torch.Tensor:
        """n keys uniform in the chart disk of radius 0.7 * extent (the disk: 0.7 of the ball). (n, 2 or 3)."""
        n = check_positive_int("n", n, 1, 64)
        g = torch.Generator().manual_seed(int(seed))
        r = 0.7 * self.extent * torch.sqrt(torch.rand(n, generator=g, dtype=torch.float64))
        phi = 2 * math.pi * torch.rand(n, generator=g, dtype=torch.float64)
        return self._circle(r, phi, dtype)

    def ring_starts(
        self, n_starts: int, *, radius: float = 0.85, dtype: torch.dtype = torch.float64
    ) -> torch.Tensor:
        """n starts evenly on the chart circle of radius ``radius * extent`` (inside the disk). (S, 2 or 3)."""
        n_starts = check_positive_int("n_starts", n_starts, 1, 64)
        r = check_range("radius", radius, 0.0, 0.95) * self.extent
        if (rim := GEOMETRIES[self.geometry].rim(self.c)) is not None:
            r = min(r, 0.9 * rim)
        phi = 2 * math.pi * (torch.arange(n_starts, dtype=torch.float64) + 0.5) / n_starts
        return self._circle(torch.full_like(phi, r), phi, dtype)


def random_keys(
    n: int, *, geometry: str, extent: float, c: float = 1.0, seed: int = 0, dtype: torch.dtype = torch.float64
) -> torch.Tensor:
    """``Patch(geometry, extent, c).random_keys(n, seed=seed, dtype=dtype)``. (n, 2 or 3)."""
    return Patch(geometry, extent, c).random_keys(n, seed=seed, dtype=dtype)


@dataclass
class LandscapeGrid:
    """Loss over a chart grid, with the keys and the grid's local minima."""

    setup: LossSetup  # the loss drawn
    u: np.ndarray  # (R,) chart axis
    v: np.ndarray  # (R,)
    loss: np.ndarray  # (R, R) loss[i, j] at (u[j], v[i]); NaN outside the patch
    keys: np.ndarray  # (n, 2 or 3)
    keys_uv: np.ndarray  # (n, 2)
    global_min_uv: tuple[float, float]
    global_min_loss: float
    global_on_border: bool  # the lowest grid value sits on the patch border
    minima_uv: np.ndarray  # (k, 2) interior grid minima
    minima_loss: np.ndarray  # (k,)
    minima_global: np.ndarray  # (k,) bool
    extra: dict = field(default_factory=dict)

    @property
    def geometry(self) -> str:
        return self.setup.geometry

    @property
    def c(self) -> float:
        return self.setup.c

    @property
    def target(self) -> int:
        return self.setup.target

    @property
    def n_spurious(self) -> int:
        """Interior grid minima that are not global."""
        return int((~self.minima_global).sum())

    @property
    def spacing(self) -> float:
        return float(self.u[1] - self.u[0])


def grid_local_minima(loss: np.ndarray) -> np.ndarray:
    """Boolean (R, R): interior points strictly below all 8 neighbours, every neighbour finite."""
    z = np.where(np.isfinite(loss), loss, np.nan)
    core = z[1:-1, 1:-1]
    ok = np.isfinite(core)
    for di in (-1, 0, 1):
        for dj in (-1, 0, 1):
            if di == 0 and dj == 0:
                continue
            nb = z[1 + di : z.shape[0] - 1 + di, 1 + dj : z.shape[1] - 1 + dj]
            with np.errstate(invalid="ignore"):
                ok &= np.isfinite(nb) & (core < nb)
    out = np.zeros_like(loss, dtype=bool)
    out[1:-1, 1:-1] = ok
    return out


def _border(loss: np.ndarray) -> np.ndarray:
    """Finite points with at least one non-finite or off-grid neighbour."""
    fin = np.isfinite(loss)
    pad = np.pad(fin, 1, constant_values=False)
    inner = np.ones_like(fin)
    for di in (-1, 0, 1):
        for dj in (-1, 0, 1):
            inner &= pad[1 + di : pad.shape[0] - 1 + di, 1 + dj : pad.shape[1] - 1 + dj]
    return fin & ~inner


def landscape_grid(keys: torch.Tensor, *, extent: float, resolution: int = 60, **setup) -> LandscapeGrid:
    """L(q) = (1 - W_target(q))^2 over a resolution x resolution chart grid, and its local minima.

    ``setup``: the fields of ``LossSetup`` (kernel, eps, geometry, c, tau, target).
    """
    setup = LossSetup(**setup)
    geometry, c = setup.geometry, setup.c
    extent = Patch(geometry, extent, c).extent
    resolution = check_positive_int("resolution", resolution, 8, 400)
    axis = torch.linspace(-extent, extent, resolution, dtype=keys.dtype, device=keys.device)
    vv, uu = torch.meshgrid(axis, axis, indexing="ij")
    uv = torch.stack([uu, vv], dim=-1).reshape(-1, 2)  # (R*R, 2)
    inside = torch.ones(uv.shape[0], dtype=torch.bool, device=keys.device)
    if (rim := GEOMETRIES[geometry].rim(c)) is not None:  # the ball: the open disk only
        inside = (uv * uv).sum(-1) < (DISK_RMAX * rim) ** 2
    q = chart_to_points(uv[inside], geometry=geometry, c=c)  # (P, 2 or 3)
    with torch.no_grad():
        vals = setup.loss(q, keys)
    flat = torch.full((uv.shape[0],), math.nan, dtype=torch.float64)
    flat[inside.cpu()] = vals.double().cpu()
    loss = flat.reshape(resolution, resolution).numpy()

    a = axis.double().cpu().numpy()
    gi = np.unravel_index(np.nanargmin(loss), loss.shape)
    lo, hi = float(np.nanmin(loss)), float(np.nanmax(loss))
    mins = grid_local_minima(loss)
    mi, mj = np.nonzero(mins)
    mloss = loss[mi, mj]
    is_global = mloss <= lo + GLOBAL_TOL * max(hi - lo, 1e-300)
    return LandscapeGrid(
        setup=setup,
        u=a,
        v=a.copy(),
        loss=loss,
        keys=keys.double().cpu().numpy(),
        keys_uv=points_to_chart(keys, geometry=geometry, c=c).double().cpu().numpy(),
        global_min_uv=(float(a[gi[1]]), float(a[gi[0]])),
        global_min_loss=lo,
        global_on_border=bool(_border(loss)[gi]),
        minima_uv=np.stack([a[mj], a[mi]], axis=-1) if mi.size else np.zeros((0, 2)),
        minima_loss=mloss,
        minima_global=is_global,
    )
