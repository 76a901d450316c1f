"""One call per view of the Landscapes page: the measurement, the theory beside it, and the verdict inputs.

Each study bundles what a reader compares, so that a page only draws:

- ``two_key_study``: Theorem 2 / 5.3 / 8.1 on the two-key geodesic, IDA and softmax PL constants,
  their ratio (None when the softmax constant underflows to 0 in the chosen precision), and the
  paper's Theta/Omega shapes at the same point;
- ``descent_study``: the 2-D patch of each kernel with Riemannian descent paths, the patch extent
  and the step cap chosen here (the policy lives once, in ``patch_extent`` / ``max_descent_step``);
- ``pl_sweeps``: mu of both kernels against eps and against Delta, beside the paper's rates;
- ``hessian_study``: Lemma 2's spectra for both kernels over n = 2, 4, ... up to ``n_max``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from georesolver_core.attention.layer import KERNEL_CHOICES
from georesolver_core.geometry import GEOMETRIES
from georesolver_core.landscape.descent import (
    OUTCOMES,
    DescentPaths,
    classify_paths,
    confirmed_spurious,
    descent_paths,
    reached_global,
)
from georesolver_core.landscape.grid import LandscapeGrid, Patch, default_extent, landscape_grid
from georesolver_core.landscape.hessian import HessianSpectrum, hessian_sweep
from georesolver_core.landscape.two_key import PLProfile, TwoKeyLine, mu_over, pl_profile
from georesolver_core.theory import landscape as th
from georesolver_core.validate import check_curvature

MAX_STEP_FRACTION = 0.04  # a descent step moves at most 4% of the patch half-width: paths stay drawable
HESSIAN_NS = (2, 4, 8, 16, 32, 64, 128)
SWEEP_EPS = tuple(np.logspace(-5, -1, 7).tolist())  # eps of the mu-against-eps sweep
SWEEP_DELTA = (0.5, 4.0)  # range of the mu-against-Delta sweep; the sphere stops at theta = 3 < pi
SWEEP_POINTS = 7


@dataclass(frozen=True)
class TwoKeyStudy:
    """Both kernels on the two-key geodesic, with the paper's predictions at the same (eps, Delta, tau)."""

    ida: PLProfile
    softmax: PLProfile
    ratio: float | None  # mu_IDA / mu_soft; None when mu_soft == 0 (underflow: the ratio is unbounded here)
    ida_theta: float  # Theorem 2's shape eps^2 / Delta^4 (constant 1)
    softmax_theta: float  # the paper's softmax shape (sphere: Theorem 8.1's)
    ratio_omega: float  # Omega(exp(Delta^2 / tau) / Delta^2)
    curvature_at_minimiser: float  # exact L''(s*): an upper bound on mu_IDA
    curvature_small_eps: float  # its eps << Delta^2 limit 4 eps / Delta^4: linear in eps

    @property
    def profiles(self) -> list[PLProfile]:
        return [self.ida, self.softmax]

    @property
    def ida_better_conditioned(self) -> bool:
        """Theorem 2's direction: mu_IDA >= mu_soft (an underflowed mu_soft counts as 0)."""
        return self.ratio is None or self.ratio >= 1


def softmax_pl_theta(geometry: str, eps, delta, tau: float):
    """The paper's softmax PL shape: Theorem 8.1's on the closed geometry (the sphere), Theorem 2 / 5.3's
    elsewhere. Vectorised over eps and delta."""
    if GEOMETRIES[geometry].is_compact:
        return th.pl_softmax_sphere_theta(eps, delta)
    return th.pl_softmax_theta(eps, delta, tau)


def two_key_study(
    geometry: str, *, dtype: torch.dtype = torch.float64, device: torch.device | str = "cpu", **line
) -> TwoKeyStudy:
    """PL profiles of IDA and softmax (``pl_profile``) and the theory beside them (section 2.6, 5.3, 8.1).

    ``line``: the other fields of ``TwoKeyLine`` (eps, delta, tau, c, basin, ...).
    """
    line = TwoKeyLine(geometry, **line)
    ida, soft = (pl_profile(k, line, dtype=dtype, device=device) for k in KERNEL_CHOICES)
    eps, delta, tau = line.eps, line.delta, line.tau
    # A softmax constant of exactly 0 means exp(-Delta^2/tau) underflowed in this dtype: the ratio
    # is then unbounded at this precision, not a number to print.
    ratio = ida.mu / soft.mu if soft.mu > 0 and math.isfinite(soft.mu) else None
    return TwoKeyStudy(
        ida=ida,
        softmax=soft,
        ratio=ratio,
        ida_theta=float(th.pl_ida_theta(eps, delta)),
        softmax_theta=float(softmax_pl_theta(geometry, eps, delta, tau)),
        ratio_omega=float(th.pl_ratio_omega(delta, tau)),
        curvature_at_minimiser=float(th.ida_curvature_at_minimiser(eps, delta)),
        curvature_small_eps=4.0 * eps / delta**4,
    )


@dataclass(frozen=True)
class PLSweeps:
    """mu of both kernels against eps (at the line's Delta) and against Delta (at its eps), and the
    paper's rates at the same points (shapes with constant 1)."""

    eps: np.ndarray  # (E,) swept eps
    delta: np.ndarray  # (D,) swept Delta
    mu_by_eps: dict[str, np.ndarray]  # kernel -> (E,)
    mu_by_delta: dict[str, np.ndarray]  # kernel -> (D,)
    ida_by_eps: np.ndarray  # (E,) Theorem 2's eps^2 / Delta^4
    ida_by_delta: np.ndarray  # (D,)
    softmax_by_delta: np.ndarray  # (D,) ``softmax_pl_theta``

    def to_dict(self) -> dict:
        """The measured sweeps, JSON-ready."""
        return {"eps": self.eps, "mu_by_eps": self.mu_by_eps, "delta": self.delta, "mu_by_delta": self.mu_by_delta}


def pl_sweeps(geometry: str, *, n_basin: int = 401, **line) -> PLSweeps:
    """mu over SWEEP_EPS and over SWEEP_POINTS values of Delta for both kernels (``mu_over``), float64.

    ``line``: the other fields of ``TwoKeyLine`` (eps, delta, tau, c, basin).
    """
    line = TwoKeyLine(geometry, **line)
    hi = 3.0 if GEOMETRIES[geometry].is_compact else SWEEP_DELTA[1]
    eps, delta = np.asarray(SWEEP_EPS), np.geomspace(SWEEP_DELTA[0], hi, SWEEP_POINTS)
    by_eps = {k: mu_over(k, line, "eps", eps, n_basin=n_basin) for k in KERNEL_CHOICES}
    by_delta = {k: mu_over(k, line, "delta", delta, n_basin=n_basin) for k in KERNEL_CHOICES}
    return PLSweeps(
        eps=eps,
        delta=delta,
        mu_by_eps=by_eps,
        mu_by_delta=by_delta,
        ida_by_eps=th.pl_ida_theta(eps, line.delta),
        ida_by_delta=th.pl_ida_theta(line.eps, delta),
        softmax_by_delta=softmax_pl_theta(geometry, line.eps, delta, line.tau),
    )


def patch_extent(geometry: str, c: float = 1.0) -> float:
    """Half-width of the chart patch: the geometry's default, scaled with the ball's radius 1/sqrt(c)."""
    base = default_extent(geometry)
    rim = GEOMETRIES[geometry].rim(check_curvature(c))  # the ball's radius 1/sqrt(c); None elsewhere
    return base * rim if rim is not None else base


def max_descent_step(extent: float) -> float:
    """The largest chart step of a drawn descent (``MAX_STEP_FRACTION`` of the patch half-width)."""
    return MAX_STEP_FRACTION * extent


@dataclass(frozen=True)
class DescentResult:
    """One kernel's landscape over the patch, its descent paths and where they ended."""

    kernel: str
    grid: LandscapeGrid
    paths: DescentPaths
    outcomes: list[str]  # one key of descent.OUTCOMES per start
    reached: int  # starts that reach the global minimum (or lower, beyond the patch)
    confirmed: int  # spurious grid minima that descent confirms

    def outcome_rows(self) -> list[dict]:
        """One row per start: where its descent ended (a key of OUTCOMES and its meaning) and the final loss."""
        return [
            {"start": i + 1, "outcome": o, "meaning": OUTCOMES[o], "final loss": float(loss)}
            for i, (o, loss) in enumerate(zip(self.outcomes, self.paths.final_loss, strict=True))
        ]


@dataclass(frozen=True)
class DescentStudy:
    """Both kernels on the same keys and starts; ``results[kernel]``."""

    geometry: str
    extent: float
    max_step: float
    results: dict[str, DescentResult]

    def summary(self) -> list[dict]:
        """One row per kernel: how the descents ended and what the grid holds."""
        return [
            {
                "kernel": r.kernel,
                "starts reaching the global minimum": r.reached,
                "spurious grid minima": r.grid.n_spurious,
                "confirmed by descent": r.confirmed,
                "global minimum on the patch border": r.grid.global_on_border,
            }
            for r in self.results.values()
        ]

    def to_dict(self, kernel: str) -> dict:
        """One kernel's grid and paths, JSON-ready (points outside the patch carry loss -1)."""
        r = self.results[kernel]
        return {
            "geometry": self.geometry,
            "kernel": kernel,
            "u": r.grid.u,
            "v": r.grid.v,
            "loss": np.nan_to_num(r.grid.loss, nan=-1.0),
            "keys_uv": r.grid.keys_uv,
            "paths_uv": r.paths.uv,
            "paths_loss": r.paths.loss,
            "outcomes": r.outcomes,
        }


@dataclass(frozen=True)
class DescentSetup:
    """The 2-D view: n random keys in a patch, the loss of retrieving key 0, descent from a ring of starts."""

    geometry: str  # where keys and queries live
    n: int  # keys
    eps: float  # IDA regulariser
    tau: float = 1.0  # softmax temperature
    c: float = 1.0  # ball curvature parameter, k = -c
    resolution: int = 60  # grid points per chart axis
    n_starts: int = 8  # descent starts, evenly on a ring
    steps: int = 200  # descent steps
    lr: float = 2.0  # RiemannianSGD learning rate
    seed: int = 0  # of the random keys


def descent_study(
    geometry: str, *, dtype: torch.dtype = torch.float64, device: torch.device | str = "cpu", **setup
) -> DescentStudy:
    """Random keys in a patch, the loss of retrieving key 0 on a grid, and descent from a ring of starts.

    ``setup``: the other fields of ``DescentSetup`` (n, eps, tau, c, resolution, n_starts, steps, lr, seed).
    """
    return run_descent(DescentSetup(geometry, **setup), dtype=dtype, device=device)


def run_descent(
    setup: DescentSetup, *, dtype: torch.dtype = torch.float64, device: torch.device | str = "cpu"
) -> DescentStudy:
    """``descent_study`` of a ``DescentSetup``."""
    geometry = setup.geometry
    patch = Patch(geometry, patch_extent(geometry, setup.c), setup.c)
    step = max_descent_step(patch.extent)
    keys = patch.random_keys(setup.n, seed=setup.seed, dtype=dtype).to(device)
    starts = patch.ring_starts(setup.n_starts, dtype=dtype).to(device)
    results = {}
    for kernel in KERNEL_CHOICES:
        loss = dict(kernel=kernel, eps=setup.eps, geometry=geometry, c=setup.c, tau=setup.tau)
        grid = landscape_grid(keys, extent=patch.extent, resolution=setup.resolution, **loss)
        paths = descent_paths(starts, keys, lr=setup.lr, steps=setup.steps, max_step=step, **loss)
        results[kernel] = DescentResult(
            kernel=kernel,
            grid=grid,
            paths=paths,
            outcomes=classify_paths(paths, grid),
            reached=int(reached_global(paths, grid).sum()),
            confirmed=int(confirmed_spurious(grid, keys).sum()),
        )
    return DescentStudy(geometry=geometry, extent=patch.extent, max_step=step, results=results)


def hessian_study(
    geometry: str, *, eps: float, rho: float, c: float = 1.0, n_max: int = 64
) -> dict[str, list[HessianSpectrum]]:
    """Lemma 2's Hessian spectra at the equidistant start for each kernel and n in HESSIAN_NS up to n_max."""
    ns = [n for n in HESSIAN_NS if n <= n_max]
    if not ns:
        raise ValueError(f"n_max must be >= {HESSIAN_NS[0]} (got {n_max})")
    return {k: hessian_sweep(ns, kernel=k, geometry=geometry, eps=eps, rho=rho, c=c) for k in KERNEL_CHOICES}


def hessian_table(spectra: dict[str, list[HessianSpectrum]]) -> list[dict]:
    """One row per kernel and n of ``hessian_study``'s spectra."""
    return [
        {
            "kernel": k,
            "n": h.n,
            "curvature max|lambda|": h.curvature,
            "spread": h.spread,
            "negative eigenvalues": h.n_negative,
            "flat directions": h.n_flat,
        }
        for k, hs in spectra.items()
        for h in hs
    ]
