"""Lemma 2's retrieval loss L(q) = (1 - W_target(q))^2 and the one set-up every landscape shares.

``LossSetup`` names the loss once: the kernel (IDA or softmax), its eps and temperature tau, the
geometry with its curvature c, and the key the query should retrieve. The grid, the descent paths,
the two-key line and the Hessian all take it (or its fields as keywords) instead of re-listing them.

Kernels (registry ``attention.layer.KERNEL_CHOICES``), both functions of the geodesic distance d(q, k):

- ``ida``: W_j ~ (d(q, k_j)^2 + eps)^-1, as ``attention.ida_weights`` (IDA / HIDA / SIDA);
- ``softmax``: W_j ~ exp(-rho(d(q, k_j)) / tau), rho(d) = d^2 / 2 in the plane and the ball and
  rho(d) = 1 - cos d on the sphere. For keys of equal norm in R^d this is the dot-product softmax
  q.k_j / tau (the |q|^2 and |k|^2 terms cancel in the normalisation); on the sphere it is exactly
  q.k_j / tau. tau = sqrt(d_head) is the usual temperature.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from georesolver_core.attention.layer import KERNEL_CHOICES
from georesolver_core.attention.reference import ida_weights_from_sq
from georesolver_core.geometry import GEOMETRIES, check_geometry, check_points, pairwise_sq_distance
from georesolver_core.validate import check_curvature, check_eps, check_positive_int, check_range


def check_kernel(kernel: str) -> str:
    """The kernel name must be a key of KERNEL_CHOICES ("ida": (d^2 + eps)^-1; "softmax": exp(-rho(d) / tau))."""
    if kernel not in KERNEL_CHOICES:
        raise ValueError(f"kernel must be one of {sorted(KERNEL_CHOICES)} (got {kernel!r})")
    return kernel


def check_tau(tau: float) -> float:
    """Softmax temperature tau = sqrt(d_head) > 0."""
    return check_range("tau", tau, 1e-3, 1e3)


@dataclass(frozen=True)
class LossSetup:
    """Which loss a landscape draws: L(q) = (1 - W_target(q))^2 with the weights of ``kernel``."""

    kernel: str  # a key of KERNEL_CHOICES
    eps: float  # IDA regulariser
    geometry: str = "euclidean"  # where queries and keys live
    c: float = 1.0  # ball curvature parameter, k = -c
    tau: float = 1.0  # softmax temperature
    target: int = 0  # the key the query should retrieve

    def __post_init__(self):
        check_kernel(self.kernel)
        check_geometry(self.geometry)
        object.__setattr__(self, "eps", check_eps(self.eps))
        object.__setattr__(self, "tau", check_tau(self.tau))
        object.__setattr__(self, "c", check_curvature(self.c))
        check_positive_int("target", self.target, 0)

    def weights(self, q: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        """Attention weights of queries over keys. (..., n, d), (m, d) -> (..., n, m).

        ``ida``: (d^2 + eps)^-1 normalised (sections 2.1, 5.3, 8.1), the same weights as ``ida_weights``.
        ``softmax``: exp(-rho(d)/tau) normalised, rho(d) = d^2/2 (plane, ball) or 1 - cos d (sphere,
        i.e. the dot product q.k/tau).
        """
        if self.kernel == "ida":
            # The plain formula over the public distance, not the tiled attention kernel: Lemma 2's
            # Hessian differentiates it twice, which a hand-written backward need not support.
            sq = pairwise_sq_distance(q, keys, geometry=self.geometry, c=self.c)  # (..., n, m)
            return ida_weights_from_sq(sq, eps=self.eps)
        if GEOMETRIES[self.geometry].is_compact:  # the sphere: rho(d) = 1 - cos d, the dot product
            check_points("q", q, geometry=self.geometry)
            check_points("keys", keys, geometry=self.geometry)
            logits = (q @ keys.transpose(-1, -2)) / self.tau  # (..., n, m): the dot product, = cos d / tau
        else:
            sq = pairwise_sq_distance(q, keys, geometry=self.geometry, c=self.c)  # (..., n, m)
            logits = -sq / (2.0 * self.tau)
        # Written out rather than torch.softmax: that kernel hands even a few rows to worker threads,
        # and on a small busy CPU the hand-off (measured ~5 ms a call) dwarfs the arithmetic.
        e = torch.exp(logits - logits.amax(dim=-1, keepdim=True).detach())
        return e / e.sum(dim=-1, keepdim=True)

    def loss(self, q: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        """Lemma 2's loss L(q) = (1 - W_target(q))^2 for each query. (..., n, d), (m, d) -> (..., n).

        1 - W_target is summed from the other weights rather than subtracted: near exact retrieval
        W_target rounds to 1 and the subtraction would lose every digit of the loss.
        """
        if not self.target < keys.shape[-2]:
            raise ValueError(f"target must be an integer in [0, {keys.shape[-2] - 1}] (got {self.target!r})")
        w = self.weights(q, keys)  # (..., n, m)
        others = torch.ones(w.shape[-1], dtype=torch.bool, device=w.device)
        others[self.target] = False
        miss = w[..., others].sum(-1)  # (..., n)
        return miss * miss

    def loss_and_grad_sq(self, q: torch.Tensor, keys: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """L and its Riemannian |grad L|^2 at each query point (autograd). q (T, d) -> (T,), (T,)."""
        q = q.detach().clone().requires_grad_(True)
        loss = self.loss(q, keys)  # (T,)
        (egrad,) = torch.autograd.grad(loss.sum(), q)  # rows are independent queries
        return loss.detach(), riemannian_grad_sq(q.detach(), egrad, geometry=self.geometry, c=self.c)


def retrieval_weights(q: torch.Tensor, keys: torch.Tensor, **setup) -> torch.Tensor:
    """``LossSetup(**setup).weights(q, keys)``: setup holds kernel, eps and optionally geometry, c, tau."""
    return LossSetup(**setup).weights(q, keys)


def retrieval_loss(q: torch.Tensor, keys: torch.Tensor, **setup) -> torch.Tensor:
    """``LossSetup(**setup).loss(q, keys)``: setup holds kernel, eps and optionally geometry, c, tau, target."""
    return LossSetup(**setup).loss(q, keys)


def riemannian_grad_sq(x: torch.Tensor, egrad: torch.Tensor, *, geometry: str, c: float = 1.0) -> torch.Tensor:
    """|grad L|^2 in the metric of the geometry from the Euclidean gradient. (..., d), (..., d) -> (...).

    Ball: rgrad = egrad / lambda_x^2 (geoopt's egrad2rgrad) and |rgrad|_x = lambda_x |rgrad|, so
    |grad|^2 = |egrad|^2 / lambda_x^2. Sphere: the tangential part of egrad.
    """
    manifold = GEOMETRIES[check_geometry(geometry)].manifold(check_curvature(c))
    # norm(), not inner(): geoopt 0.5.1's ball inner() with keepdim=False broadcasts (T,) against
    # (T, 1) into a (T, T) matrix.
    return manifold.norm(x, manifold.egrad2rgrad(x, egrad)) ** 2
