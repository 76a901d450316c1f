"""How well the three ball-to-sphere maps of section 8.2 carry hyperbolic neighbours to the sphere.

Storage lives in the Poincaré ball, routing on the sphere. For prototypes c_e and queries x in the
ball we compare the Top-K by hyperbolic distance (the storage geometry's neighbours) with the Top-K
by SIDA weight after the map, gsr_route(phi(x), phi(C)): agreement = |both| / K. Distortion of a map:
the spread max/min over pairs of d_S(phi(x), phi(y)) / d_H(x, y) (1 for a scaled isometry).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from georesolver_core.geometry import LearnableSphereMap, norm_map, pairwise_distance, stereographic_map
from georesolver_core.routing.gsr import gsr_route

MAPS = {
    "norm": "phi_A norm c/||c||",
    "stereographic": "phi_B inverse stereographic",
    "learnable": "phi_C MLP + normalise",
}


def hierarchy_points(n: int, dim: int, *, seed: int, n_directions: int = 6) -> torch.Tensor:
    """Points of a shallow hierarchy in the ball: a few directions, several depths (norms 0.1..0.9)."""
    g = torch.Generator().manual_seed(seed)
    dirs = torch.randn(n_directions, dim, generator=g, dtype=torch.float64)
    dirs = dirs / dirs.norm(dim=-1, keepdim=True)
    pick = torch.randint(n_directions, (n,), generator=g)
    u = dirs[pick] + 0.15 * torch.randn(n, dim, generator=g, dtype=torch.float64)
    u = u / u.norm(dim=-1, keepdim=True)
    r = 0.1 + 0.8 * torch.rand(n, 1, generator=g, dtype=torch.float64)
    return r * u


def fit_learnable_map(points: torch.Tensor, *, steps: int = 200, seed: int = 0) -> LearnableSphereMap:
    """phi_C trained so that d_S(phi x, phi y) ~ a d_H(x, y) (stress with a learned scale a)."""
    torch.manual_seed(seed)
    phi = LearnableSphereMap(points.shape[1], points.shape[1] + 1, hidden=64).double()
    log_a = torch.zeros((), dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([*phi.parameters(), log_a], lr=1e-2)
    d_h = pairwise_distance(points, points, geometry="poincare")
    for _ in range(steps):
        z = phi(points)
        d_s = pairwise_distance(z, z, geometry="sphere")
        loss = ((d_s - log_a.exp() * d_h) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return phi


@dataclass
class MapReport:
    ks: list[int]
    agreement: dict  # map -> [mean Top-K agreement per K]
    distortion: dict  # map -> max/min ratio of d_S / d_H over pairs (inf when a map merges points)


def compare_maps(
    n_protos: int = 48,
    n_queries: int = 200,
    dim: int = 2,
    *,
    eps: float = 1e-3,
    seed: int = 0,
    fit_steps: int = 200,
) -> MapReport:
    """Top-K agreement with hyperbolic neighbours and pairwise distortion, for each map."""
    protos = hierarchy_points(n_protos, dim, seed=seed)
    queries = hierarchy_points(n_queries, dim, seed=seed + 1)
    d_h = pairwise_distance(queries, protos, geometry="poincare")  # (n_q, n_p)
    learn = fit_learnable_map(protos, steps=fit_steps, seed=seed)
    maps = {"norm": norm_map, "stereographic": stereographic_map, "learnable": lambda c: learn(c).detach()}
    ks = [k for k in (1, 2, 4, 8) if k <= n_protos]
    rep = MapReport(ks, {}, {})
    for name, phi in maps.items():
        zq, zp = phi(queries), phi(protos)
        rep.agreement[name] = []
        for k in ks:
            true = d_h.topk(k, dim=-1, largest=False).indices  # (n_q, k)
            got, _ = gsr_route(zq, zp, k=k, eps=eps)
            hit = (true[:, :, None] == got[:, None, :]).any(-1).double().mean()
            rep.agreement[name].append(float(hit))
        d_s = pairwise_distance(zp, zp, geometry="sphere")
        d_hp = pairwise_distance(protos, protos, geometry="poincare")
        off = ~torch.eye(n_protos, dtype=torch.bool)
        ratio = d_s[off] / d_hp[off]
        rep.distortion[name] = float(ratio.max() / ratio.min()) if float(ratio.min()) > 0 else float("inf")
    return rep
