"""Paper section 8.2, store in the ball and route on the sphere: three maps from a trained Poincaré
embedding onto the sphere, and how much of the hierarchy (MAP, distortion) survives each.

    phi_A(x) = x / ||x||                      keeps the direction, forgets the level
    phi_B(x) = inverse stereographic map      the level becomes the latitude
    phi_C(x) = MLP(x) / ||MLP(x)||            trained with Nickel & Kiela's loss on the sphere
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from georesolver_core.device import one_cpu_thread
from georesolver_core.embeddings.metrics import embedding_metrics
from georesolver_core.embeddings.model import nickel_kiela_loss
from georesolver_core.geometry import LearnableSphereMap, norm_map, pairwise_distance, stereographic_map
from georesolver_core.tasks.hierarchy import Hierarchy
from georesolver_core.validate import check_curvature, check_positive_int, check_range


@dataclass(frozen=True)
class SphereMapFit:
    """How phi_C's MLP is trained: full-batch Adam on the Nickel-Kiela loss of its outputs."""

    steps: int = 200  # Adam steps
    lr: float = 0.01  # Adam learning rate
    negatives: int = 10  # K non-neighbours per edge, redrawn every step
    hidden: int = 64  # MLP width
    seed: int = 0  # MLP initialisation and negative draws

    def __post_init__(self):
        check_positive_int("steps", self.steps, 1, 100_000)
        check_positive_int("negatives", self.negatives, 1, 1000)
        check_range("lr", self.lr, 1e-6, 100.0)
        check_positive_int("hidden", self.hidden, 1, 65_536)


def map_ball_to_sphere(
    points: torch.Tensor, hierarchy: Hierarchy, *, c: float = 1.0, fit: SphereMapFit = SphereMapFit()
) -> dict[str, dict]:
    """Carry a trained Poincaré embedding (N, d) onto the sphere S^d by phi_A, phi_B and phi_C.

    Points are first scaled by sqrt(c) so that the rim of any ball is the unit sphere (phi_B sends it
    to the equator). phi_A lands on S^(d-1), returned as the equator of S^d (a great sphere, so
    distances are unchanged). phi_C is trained as ``fit`` says. Returns name -> {"points": (N, d + 1),
    "metrics", "losses"} ("points" None and an "error" where a map is undefined).
    """
    x = points.detach().double() * math.sqrt(check_curvature(c))  # (N, d), inside the unit ball
    out: dict[str, dict] = {}
    try:
        on_equator = torch.nn.functional.pad(norm_map(x), (0, 1))  # (N, d + 1)
        out["norm"] = {"points": on_equator, "losses": []}
    except ValueError as err:  # a node exactly at the origin has no direction
        out["norm"] = {"points": None, "losses": [], "error": str(err)}
    out["stereographic"] = {"points": stereographic_map(x), "losses": []}
    out["learnable"] = _fit_learnable_map(x, hierarchy, fit)
    for entry in out.values():
        if entry["points"] is not None:
            entry["metrics"] = embedding_metrics(entry["points"], hierarchy, geometry="sphere")
    return out


def _fit_learnable_map(x: torch.Tensor, hierarchy: Hierarchy, fit: SphereMapFit) -> dict:
    g = torch.Generator().manual_seed(fit.seed)
    torch_state = torch.random.get_rng_state()
    torch.manual_seed(fit.seed)  # nn.Linear draws its initial weights from the global generator
    phi = LearnableSphereMap(x.shape[-1], hidden=fit.hidden).double()
    torch.random.set_rng_state(torch_state)
    opt = torch.optim.Adam(phi.parameters(), lr=fit.lr)
    pairs = torch.as_tensor(hierarchy.pairs)  # (P, 2)
    adj = torch.as_tensor(hierarchy.adjacency)
    u, v = pairs[:, 0], pairs[:, 1]
    losses = []
    with one_cpu_thread(torch.device("cpu")):
        for _ in range(fit.steps):
            w = torch.randint(hierarchy.n_nodes, (u.numel(), fit.negatives), generator=g)  # (P, K)
            valid = ~(adj[u[:, None], w] | (w == u[:, None]))
            y = phi(x)  # (N, d + 1) on the sphere
            cand = torch.cat([v[:, None], w], dim=1)  # (P, 1 + K)
            dist = pairwise_distance(y[u][:, None, :], y[cand], geometry="sphere", validate=False)[:, 0]
            loss = nickel_kiela_loss(dist, torch.cat([torch.ones_like(valid[:, :1]), valid], dim=1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
    with torch.no_grad():
        return {"points": phi(x), "losses": losses}


SPHERE_MAPS = {
    "norm": "phi_A(x) = x/||x||: keeps the direction, forgets the level (S^(d-1), drawn on the equator)",
    "stereographic": "phi_B: inverse stereographic projection; the level becomes the latitude",
    "learnable": "phi_C(x) = MLP(x)/||MLP(x)||, trained with the embedding loss on the sphere",
}


def sphere_map_notes(maps: dict[str, dict]) -> list[str]:
    """One markdown line per map of ``map_ball_to_sphere``: its formula, and why it failed where it did."""
    return [
        f"**{k}**: {SPHERE_MAPS[k]}" + (f" (failed: {m['error']})" if "error" in m else "")
        for k, m in maps.items()
    ]


def sphere_map_table(maps: dict[str, dict]) -> list[dict]:
    """One row per map that succeeded: its name and the hierarchy metrics on the sphere."""
    return [{"mapping": k, **m["metrics"]} for k, m in maps.items() if m["points"] is not None]
