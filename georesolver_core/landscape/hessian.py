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
from georesolver_core.landscape.two_key import check_kernel, retrieval_loss
from georesolver_core.validate import check_curvature, check_eps, check_positive_int, check_range


def equidistant_setup(
    n: int, *, geometry: str, rho: float = 1.0, c: float = 1.0, dtype: torch.dtype = torch.float64
) -> tuple[torch.Tensor, torch.Tensor]:
    """(q_0 (d,), keys (n, d)): n keys at distance rho from q_0 in orthogonal directions (see module doc)."""
    check_geometry(geometry)
    n = check_positive_int("n", n, 2, 512)
    geo = GEOMETRIES[geometry]
    rho = check_range("rho", rho, 1e-3, min(geo.diameter / 2, 10.0))
    if geo.extra_dims:  # the sphere: q_0 the north pole of S^n in R^(n+1)
        q0 = torch.zeros(n + 1, dtype=dtype)
        q0[-1] = 1.0
        keys = torch.zeros(n, n + 1, dtype=dtype)
        keys[:, :n] = math.sin(rho) * torch.eye(n, dtype=dtype)
        keys[:, -1] = math.cos(rho)
        return q0, keys
    radius = rho
    if geo.uses_c:  # the ball: Euclidean radius of the hyperbolic sphere of radius rho about 0
        c = check_curvature(c)
        radius = math.tanh(math.sqrt(c) * rho / 2.0) / math.sqrt(c)
    return torch.zeros(n, dtype=dtype), radius * torch.eye(n, dtype=dtype)


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


@dataclass
class HessianSpectrum:
    """Eigenvalues of the Riemannian Hessian at the equidistant initialisation, and their spread."""

    n: int
    kernel: str
    geometry: str
    eigenvalues: np.ndarray  # (m,) ascending
    curvature: float  # largest |eigenvalue|
    spread: float  # largest |eigenvalue| / smallest non-zero |eigenvalue|
    n_flat: int  # eigenvalues with |lambda| <= 1e-9 * curvature (directions the loss cannot see)
    n_negative: int  # directions of negative curvature (the initialisation is not a minimum)


def hessian_spectrum(
    n: int,
    *,
    kernel: str,
    geometry: str = "euclidean",
    eps: float = 1e-2,
    rho: float = 1.0,
    c: float = 1.0,
    tau: float | None = None,
    dtype: torch.dtype = torch.float64,
) -> HessianSpectrum:
    """Lemma 2: autograd Hessian of L(q) = (1 - W_1(q))^2 at the equidistant q_0; eigenvalues and spread.

    tau defaults to sqrt(n). Flat directions (|lambda| <= 1e-9 max |lambda|) are excluded from the
    spread and counted in ``n_flat``: softmax has one (moving q_0 towards all keys equally).
    """
    check_kernel(kernel)
    eps = check_eps(eps)
    q0, keys = equidistant_setup(n, geometry=geometry, rho=rho, c=c, dtype=dtype)
    tau = math.sqrt(n) if tau is None else float(tau)

    def f(q: torch.Tensor) -> torch.Tensor:
        return retrieval_loss(q[None], keys, kernel=kernel, eps=eps, geometry=geometry, c=c, tau=tau)[0]

    hess = riemannian_hessian(f, q0, geometry=geometry, c=c)
    ev = torch.linalg.eigvalsh(0.5 * (hess + hess.T)).cpu().double().numpy()
    mag = np.abs(ev)
    curvature = float(mag.max())
    live = mag > 1e-9 * curvature
    spread = float(mag[live].max() / mag[live].min()) if live.any() else math.nan
    return HessianSpectrum(
        n=n,
        kernel=kernel,
        geometry=geometry,
        eigenvalues=ev,
        curvature=curvature,
        spread=spread,
        n_flat=int((~live).sum()),
        n_negative=int((ev < -1e-9 * curvature).sum()),
    )


def hessian_sweep(ns, **kwargs) -> list[HessianSpectrum]:
    """``hessian_spectrum`` for each n in ``ns`` (same keyword options)."""
    return [hessian_spectrum(int(n), **kwargs) for n in ns]
