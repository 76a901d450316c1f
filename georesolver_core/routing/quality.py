"""Routing quality of GSR (Theorem 10.1): the error of keeping only the Top-K prototypes.

For one query, full soft routing gives o* = sum_e w_e v_e and GSR gives o = sum_{e<=K} (w_e / S_K) v_e.
With T = sum_{e>K} w_(e) the tail mass, the worst error over values with ||v_e|| <= s is exactly 2 T s
(``theory.routing.gsr_quality_exact_worst``), attained by v = +u on the head and -u on the tail. We
evaluate the error with those worst-case values and with random ones, beside the printed bound.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from georesolver_core.device import one_cpu_thread
from georesolver_core.routing.gsr import gsr_route, sida_routing_weights
from georesolver_core.theory.routing import gsr_quality_bound, gsr_quality_exact_worst


def fibonacci_sphere(n: int, *, dtype=torch.float64) -> torch.Tensor:
    """n nearly evenly spread points on S^2 (the golden-angle spiral). (n, 3)."""
    i = torch.arange(n, dtype=dtype) + 0.5
    z = 1.0 - 2.0 * i / n
    r = torch.sqrt(1.0 - z * z)
    phi = i * np.pi * (3.0 - 5.0**0.5)
    return torch.stack([r * torch.cos(phi), r * torch.sin(phi), z], dim=-1)


def random_sphere(n: int, dim: int, *, seed: int, dtype=torch.float64) -> torch.Tensor:
    """n uniform points on S^{dim-1}. (n, dim)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, dim, generator=g, dtype=dtype)
    return x / x.norm(dim=-1, keepdim=True)


def route_errors(q: torch.Tensor, protos: torch.Tensor, values: torch.Tensor, *, k: int, eps: float):
    """Per query: (||o - o*||, tail mass T). q (n, d), protos (m, d), values (m, dv)."""
    w = sida_routing_weights(q, protos, eps=eps)  # (n, m)
    idx, wk = gsr_route(q, protos, k=k, eps=eps)  # (n, K)
    o_star = w @ values  # (n, dv)
    o = (wk[..., None] * values[idx]).sum(-2)  # (n, dv)
    tail = 1.0 - w.gather(-1, idx).sum(-1)  # (n,)
    return (o - o_star).norm(dim=-1), tail.clamp_min(0.0)


def worst_values(q: torch.Tensor, protos: torch.Tensor, *, k: int, eps: float, scale: float = 1.0) -> torch.Tensor:
    """The maximising values for one query: v_e = +s u on its Top-K, -s u elsewhere. q (d,) -> (m, 1)."""
    idx, _ = gsr_route(q[None], protos, k=k, eps=eps)
    v = -torch.ones(protos.shape[0], 1, dtype=protos.dtype)
    v[idx[0]] = 1.0
    return scale * v


@dataclass
class QualitySweep:
    """Error vs K (and eps) for queries at prototypes and off them; bounds on the same grid."""

    ks: list[int]
    eps: float
    worst_error: list[float]  # max over queries of the error with worst-case unit values
    random_error: list[float]  # max over queries of the error with random unit values
    tail_mass: list[float]  # max over queries of T
    paper_bound: list[float]  # printed bound, unit values (||V||_F = sqrt(m)), at the worst query
    exact_bound: list[float]  # 2 T max ||v||
    small_scale: float  # value norm of the counter-example to the printed bound
    small_error: list[float]  # worst error with values of norm small_scale
    small_bound: list[float]  # printed bound with those values


def quality_sweep(
    n_pool: int = 32, n_queries: int = 200, *, eps: float = 0.05, at_prototypes: bool = False, seed: int = 0
) -> QualitySweep:
    """Sweep K = 1..n_pool on S^2 for queries off the prototypes (or equal to them)."""
    protos = fibonacci_sphere(n_pool)
    q = protos.clone() if at_prototypes else random_sphere(n_queries, 3, seed=seed)
    rand_v = random_sphere(n_pool, 4, seed=seed + 1)  # unit values in R^4
    ks = sorted({1, 2, 3, 4, 6, 8, 12, 16, 24, n_pool} & set(range(1, n_pool + 1)))
    out = QualitySweep(ks, eps, [], [], [], [], [], 0.0, [], [])
    frob = float(np.sqrt(n_pool))  # ||V||_F of n_pool unit values
    small = 0.1 / np.sqrt(n_pool)
    out.small_scale = float(small)
    with one_cpu_thread():  # tiny tensors: extra threads only add synchronisation
        for k in ks:
            err_r, tail = route_errors(q, protos, rand_v, k=k, eps=eps)
            j = int(tail.argmax())
            worst = worst_values(q[j], protos, k=k, eps=eps)  # (m, 1)
            err_w, _ = route_errors(q[j : j + 1], protos, worst, k=k, eps=eps)
            t = float(tail[j])
            out.worst_error.append(float(err_w[0]))
            out.random_error.append(float(err_r.max()))
            out.tail_mass.append(t)
            out.paper_bound.append(float(gsr_quality_bound(t, frob, 1.0)))
            out.exact_bound.append(float(gsr_quality_exact_worst(t, 1.0)))
            out.small_error.append(float(err_w[0]) * small)  # the error is linear in the values' scale
            out.small_bound.append(float(gsr_quality_bound(t, frob * small, small)))
    return out


def tail_vs_eps(eps_grid, n_pool: int = 32, n_queries: int = 200, *, k: int = 1, seed: int = 0) -> dict:
    """Max tail mass over queries as eps -> 0: at prototypes it vanishes, off them it does not."""
    protos = fibonacci_sphere(n_pool)
    off = random_sphere(n_queries, 3, seed=seed)
    res = {"eps": list(map(float, eps_grid)), "at_prototypes": [], "off_prototypes": []}
    for eps in eps_grid:
        for name, q in (("at_prototypes", protos), ("off_prototypes", off)):
            _, tail = route_errors(q, protos, torch.zeros(n_pool, 1, dtype=torch.float64), k=k, eps=float(eps))
            res[name].append(float(tail.max()))
    return res
