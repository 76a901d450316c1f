"""Lemma 2 (section 2.5): the Hessian of the retrieval loss at the equidistant initialisation.

Set-up. n keys, each a distance rho from the query q_0 and along mutually orthogonal directions:

- plane (d = n): q_0 = 0, k_j = rho e_j;
- Poincaré ball (d = n): q_0 = 0, k_j = tanh(sqrt(c) rho / 2) / sqrt(c) e_j (hyperbolic distance rho);
- sphere (d = n + 1): q_0 = e_{n+1} (north pole), k_j = cos(rho) e_{n+1} + sin(rho) e_j.

Every key then has weight 1/n for both kernels. The loss is L(q) = (1 - W_1(q))^2 (retrieve key 1)
and its Riemannian Hessian at q_0, written in an orthonormal basis of the tangent space, has the
eigenvalues we report. The softmax temperature is tau = sqrt(n) (d_head = n, so the keys fit).

Riemannian Hessian, from the Euclidean gradient g and Hessian H of L in coordinates:

- plane: H;
- ball (metric lambda_x^2 I, lambda_x = 2 / (1 - c|x|^2)): the Levi-Civita connection of a
  conformal metric with a = grad log lambda = c lambda_x x gives
  Hess = (H - g a^T - a g^T + (a . g) I) / lambda_x^2 in the orthonormal frame e_i / lambda_x;
- sphere: Hess = E^T H E - (x . g) I_{d-1}, E an orthonormal basis of the tangent space x^perp.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from georesolver_core.geometry import GEOMETRIES, check_geometry
from georesolver_core.geometry.sphere import tangent_basis  # noqa: F401 - re-exported for callers
from georesolver_core.landscape.loss import LossSetup, riemannian_grad_sq
from georesolver_core.validate import check_curvature, check_positive_int, check_range


def equidistant_setup(
    n: int, *, geometry: str, rho: float = 1.0, c: float = 1.0, dtype: torch.dtype = torch.float64
) -> tuple[torch.Tensor, torch.Tensor]:
    """(q_0 (d,), keys (n, d)): n keys at distance rho from q_0 in orthogonal directions (see module doc)."""
    check_geometry(geometry)
    n = check_positive_int("n", n, 2, 512)
    geo = GEOMETRIES[geometry]
    rho = check_range("rho", rho, 1e-3, min(geo.diameter / 2, 10.0))
    c = check_curvature(c) if geo.has_curvature_parameter else 1.0
    # q_0 the origin (the north pole of S^n in R^(n+1)); keys exp_0(rho u_i), u_i the unit tangent vectors
    # along the first n coordinate axes (sin(rho) e_i + cos(rho) e_(n+1) on the sphere)
    q0 = geo.origin(geo.ambient_dim(n), dtype=dtype)  # (n or n + 1,)
    axes = torch.eye(n, geo.ambient_dim(n), dtype=dtype)  # (n, n or n + 1)
    return q0, geo.expmap0(rho * axes / geo.norm(q0, axes, c)[:, None], c)


def riemannian_hessian(f, x: torch.Tensor, *, geometry: str, c: float = 1.0) -> torch.Tensor:
    """The Riemannian Hessian of a scalar f at x in an orthonormal tangent basis. (d,) -> (m, m).

    m = d for the plane and the ball, d - 1 on the sphere. Formulas in the module docstring.
    """
    check_geometry(geometry)
    x = x.detach()
    h = torch.autograd.functional.hessian(f, x)  # (d, d)
    xg = x.clone().requires_grad_(True)
    (g,) = torch.autograd.grad(f(xg), xg)  # (d,)
    return GEOMETRIES[geometry].riemannian_hessian(x, g, h, check_curvature(c))


POINTS = ("equidistant", "target")  # q_0, where every key has weight 1/n; q = k_1, the paper's IDA point


FLAT = 1e-9  # eigenvalues with |lambda| <= FLAT * max |lambda| are flat (directions the loss cannot see)


@dataclass
class HessianSpectrum:
    """Eigenvalues of the Riemannian Hessian at one point (the equidistant initialisation or the target
    key), their spread, and the gradient norm there (a saddle or minimum needs it to vanish)."""

    n: int
    kernel: str
    geometry: str
    eigenvalues: np.ndarray  # (m,) ascending
    point: str = "equidistant"  # where: "equidistant" (q_0) or "target" (q = k_1)
    grad_norm: float = math.nan  # Riemannian |grad L| at the point

    @property
    def curvature(self) -> float:
        """Largest |eigenvalue|."""
        return float(np.abs(self.eigenvalues).max())

    @property
    def _live(self) -> np.ndarray:
        """(m,) bool: the eigenvalues that are not flat."""
        return np.abs(self.eigenvalues) > FLAT * self.curvature

    @property
    def spread(self) -> float:
        """Largest |eigenvalue| / smallest non-flat |eigenvalue| (NaN when every direction is flat)."""
        mag = np.abs(self.eigenvalues[self._live])
        return float(mag.max() / mag.min()) if mag.size else math.nan

    @property
    def n_flat(self) -> int:
        """Flat directions: softmax has one at q_0 (moving q_0 towards all keys equally)."""
        return int((~self._live).sum())

    @property
    def n_negative(self) -> int:
        """Directions of negative curvature (the point is not a minimum)."""
        return int((self.eigenvalues < -FLAT * self.curvature).sum())


def hessian_spectrum(
    n: int, *, rho: float = 1.0, point: str = "equidistant", dtype: torch.dtype = torch.float64, **setup
) -> HessianSpectrum:
    """Lemma 2: autograd Hessian of L(q) = (1 - W_1(q))^2 at q_0 (point "equidistant") or at the target
    key q = k_1 (point "target"); eigenvalues, spread and the gradient norm there.

    ``setup``: the fields of ``LossSetup`` (kernel, geometry, c, ...); here eps defaults to 1e-2 and
    tau (None or absent) to sqrt(n). Flat directions (|lambda| <= 1e-9 max |lambda|) are excluded from
    the spread and counted in ``n_flat``.
    """
    n = check_positive_int("n", n, 2, 512)
    if setup.get("tau") is None:
        setup["tau"] = math.sqrt(n)
    setup = LossSetup(**({"eps": 1e-2} | setup))
    if point not in POINTS:
        raise ValueError(f"point must be one of {POINTS} (got {point!r})")
    geo = dict(geometry=setup.geometry, c=setup.c)
    q0, keys = equidistant_setup(n, rho=rho, dtype=dtype, **geo)
    q0 = q0 if point == "equidistant" else keys[0].clone()

    def f(q: torch.Tensor) -> torch.Tensor:
        return setup.loss(q[None], keys)[0]

    hess = riemannian_hessian(f, q0, **geo)
    qg = q0.clone().requires_grad_(True)
    (egrad,) = torch.autograd.grad(f(qg), qg)  # (d,)
    grad_norm = float(riemannian_grad_sq(q0, egrad, **geo).sqrt())
    ev = torch.linalg.eigvalsh(0.5 * (hess + hess.T)).cpu().double().numpy()
    return HessianSpectrum(n, setup.kernel, setup.geometry, ev, point=point, grad_norm=grad_norm)


def hessian_sweep(ns, **kwargs) -> list[HessianSpectrum]:
    """``hessian_spectrum`` for each n in ``ns`` (same keyword options)."""
    return [hessian_spectrum(int(n), **kwargs) for n in ns]
