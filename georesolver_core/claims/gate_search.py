"""Worst inputs of a HyperGate for Theorem 7.1 (section 7), found by gradient descent on the input.

The gate h = G(u) u, G(u) = diag(sigmoid(W_g u + b_g)), has Jacobian J(u) = G + diag(sigma'(z) u) W_g
(``model.gate.gate_jacobian``); its smallest singular value sigma_min(J) is the worst ratio
||dL/du|| / ||dL/dh|| over upstream gradients. Two searches over u, restarted from many points
(the model's own tokens, scaled copies, random directions), with Adam:

- ``min_margin``: minimise sigma_min(J(u)) - (lambda_min(G(u)) - ||W_g|| ||u|| / 4), the slack of the
  theorem's inequality, over all u (the inequality part);
- ``min_ratio_in_ball``: minimise log sigma_min(J(u)) over ||u|| <= R, projecting back onto the ball
  after every step (the conclusion part: do gradients vanish for bounded inputs?).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from georesolver_core.model.gate import HyperGate, gate_bound, gate_jacobian
from georesolver_core.validate import check_positive_int


def gate64(gate: HyperGate) -> HyperGate:
    """A float64 copy of the gate's dimension level (the only part Theorem 7.1 reads)."""
    g = HyperGate(gate.dim.in_features, gate.n_heads, memory=False).double()
    g.dim.load_state_dict({k: v.detach().double() for k, v in gate.dim.state_dict().items()})
    for p in g.parameters():
        p.requires_grad_(False)
    return g


def _sigma_min(g: HyperGate, u: torch.Tensor) -> torch.Tensor:
    return torch.linalg.svdvals(gate_jacobian(g, u))[:, -1]  # (N,)


@dataclass(frozen=True)
class GateWorst:
    """The worst input found: its norm, sigma_min(J) there, and the theorem's bound there."""

    u_norm: float
    sigma_min: float
    bound: float
    restarts: int
    steps: int

    @property
    def margin(self) -> float:
        return self.sigma_min - self.bound


def _descend(g: HyperGate, starts: torch.Tensor, objective, project, steps: int, lr: float) -> torch.Tensor:
    """Adam on the rows of u from ``starts`` (N, C); returns the best row per restart seen, (N, C)."""
    u = project(starts.clone()).requires_grad_(True)
    opt = torch.optim.Adam([u], lr=lr)
    best_u, best = u.detach().clone(), objective(g, u).detach()
    for _ in range(steps):
        opt.zero_grad()
        val = objective(g, u)
        val.sum().backward()
        opt.step()
        with torch.no_grad():
            u.copy_(project(u))
            val = objective(g, u)
            better = val < best
            best_u[better], best[better] = u[better], val[better]
    return best_u


def _worst(g: HyperGate, u: torch.Tensor, key, restarts: int, steps: int) -> GateWorst:
    gb = gate_bound(g, u)
    i = int(torch.argmin(key(gb)))
    return GateWorst(float(gb.u_norm[i]), float(gb.sigma_min[i]), float(gb.bound[i]), restarts, steps)


def min_margin(gate: HyperGate, starts: torch.Tensor, *, steps: int = 100, lr: float = 0.05) -> GateWorst:
    """The input with the least slack sigma_min(J) - bound found from ``starts`` (N, C)."""
    check_positive_int("steps", steps, 1)
    g = gate64(gate)
    w = float(torch.linalg.matrix_norm(g.dim.weight, ord=2))

    def slack(g, u):
        lam = torch.sigmoid(g.dim(u)).min(-1).values
        return _sigma_min(g, u) - (lam - w * u.norm(dim=-1) / 4)

    u = _descend(g, starts.double(), slack, lambda u: u, steps, lr)
    return _worst(g, u, lambda gb: gb.sigma_min - gb.bound, starts.shape[0], steps)


def min_ratio_in_ball(
    gate: HyperGate, starts: torch.Tensor, radius: float, *, steps: int = 100, lr: float = 0.05
) -> GateWorst:
    """The input with the smallest sigma_min(J) found in the ball ||u|| <= radius, from ``starts`` (N, C)."""
    check_positive_int("steps", steps, 1)
    if not radius > 0:
        raise ValueError(f"radius must be > 0 (got {radius})")
    g = gate64(gate)

    def project(u):
        n = u.norm(dim=-1, keepdim=True).clamp_min(1e-300)
        return u * torch.clamp(radius / n, max=1.0)

    def log_sigma(g, u):
        return torch.log(_sigma_min(g, u).clamp_min(1e-300))

    u = _descend(g, starts.double(), log_sigma, project, steps, lr * radius)
    return _worst(g, u, lambda gb: gb.sigma_min, starts.shape[0], steps)


def search_starts(tokens: torch.Tensor, n_random: int, *, seed: int = 0) -> torch.Tensor:
    """Restarts: the model's own tokens (N, C), their x2..x16 copies, and random Gaussian directions scaled
    to the tokens' norms. (N * 5 + n_random, C)."""
    g = torch.Generator().manual_seed(seed)
    t = tokens.double()
    scale = float(t.norm(dim=-1).median())
    rand = torch.randn(n_random, t.shape[-1], generator=g, dtype=torch.float64)
    rand = rand / rand.norm(dim=-1, keepdim=True) * scale * 2.0 ** torch.randint(-3, 5, (n_random, 1), generator=g)
    return torch.cat([t * s for s in (1.0, 2.0, 4.0, 8.0, 16.0)] + [rand])
