"""How well an embedding keeps a hierarchy: the metrics of the Poincaré-embeddings literature.

Edge reconstruction (Nickel & Kiela 2017, section 4.1): for every node u, rank all other nodes by
embedding distance. *Mean rank*: the rank of each true neighbour v among u's non-neighbours,
1 + #{w not adjacent to u, w != u : d(u, w) < d(u, v)}, averaged over all directed edges (1 is
perfect). *Mean average precision* (MAP): the average over u of

    AP(u) = mean_{v in N(u)} #{v' in N(u) : d(u, v') <= d(u, v)} / #{w != u : d(u, w) <= d(u, v)},

ties counted as scikit-learn's ``average_precision_score`` counts them (1 is perfect).

This is exactly the protocol of the published Poincaré-embeddings code (its ``eval_reconstruction``): for
every u and every v related to u, rank d(u, v) among the distances from u to all nodes not related to u,
plus v itself; mean rank over all (u, v), MAP over the nodes u with at least one relation. The relation
may be directed: for a WordNet closure it is hyponym -> ancestor, so u's descendants count as unrelated
to u and nodes without ancestors (the root) are not averaged. Computed exactly, no sampling.

*Distortion* (Sala et al. 2018): with r_uv = d(u, v) / d_tree(u, v) over connected pairs, the
average distortion mean |s r_uv - 1| at the best global scale s (the loss fixes no scale), and
the worst-case distortion max r / min r (scale-free; 1 is an isometry up to scale).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from georesolver_core.geometry import GEOMETRIES, pairwise_distance
from georesolver_core.tasks.hierarchy import Hierarchy
from georesolver_core.verdicts import verdict_inequality

# geoopt's projx keeps sqrt(c)||x|| <= 1 - eps with eps = 4e-3 (float32) or 1e-5 (float64): there the
# distance saturates and its gradient vanishes (DESIGN section 4).
PROJX_EPS = {torch.float32: 4e-3, torch.float64: 1e-5}
MAX_DISTORTION_PAIRS = 1_000_000  # node pairs the distortion averages over before it subsamples


def embedding_distances(points: torch.Tensor, *, geometry: str, c: float = 1.0) -> torch.Tensor:
    """All pairwise geodesic distances of an embedding, (N, d) -> (N, N), without gradients."""
    with torch.no_grad():
        return pairwise_distance(points, points, geometry=geometry, c=c, validate=False)


def reconstruction(dist: torch.Tensor, adjacency: np.ndarray | torch.Tensor, *, chunk: int = 512) -> dict:
    """Mean rank and MAP of edge reconstruction from a (N, N) distance matrix and (N, N) bool adjacency.

    Per directed edge (u, v): how many nodes are closer to u than v (a row comparison), minus how many
    of those are u's neighbours (a comparison among u's few neighbours, padded to the largest degree).
    """
    n = dist.shape[0]
    adj = torch.as_tensor(np.asarray(adjacency), dtype=torch.bool).to(dist.device)  # (N, N)
    if adj.shape != (n, n) or dist.shape != (n, n):
        raise ValueError(
            f"dist and adjacency must both be (N, N) (got {tuple(dist.shape)} and {tuple(adj.shape)})"
        )
    us, vs = torch.nonzero(adj, as_tuple=True)  # (P,) directed edges, grouped by u
    if us.numel() == 0:
        return {"mean_rank": math.nan, "map": math.nan}
    d_uv = dist[us, vs]  # (P,)
    # neighbour distances of every node, +inf padded: (N, max degree)
    degree = adj.sum(1)
    slot = torch.arange(us.numel(), device=dist.device) - torch.repeat_interleave(
        torch.cumsum(degree, 0) - degree, degree
    )
    nbr = torch.full((n, int(degree.max())), math.inf, dtype=dist.dtype, device=dist.device)
    nbr[us, slot] = d_uv
    nb_lt = (nbr[us] < d_uv[:, None]).sum(1)  # (P,) neighbours strictly closer than v
    nb_le = (nbr[us] <= d_uv[:, None]).sum(1)
    all_lt = torch.empty_like(nb_lt)
    all_le = torch.empty_like(nb_le)
    for s in range(0, us.numel(), chunk):
        u, d = us[s : s + chunk], d_uv[s : s + chunk, None]
        row = dist[u].scatter(1, u[:, None], math.inf)  # (p, N), u itself never counts
        all_lt[s : s + chunk] = (row < d).sum(1)
        all_le[s : s + chunk] = (row <= d).sum(1)
    ranks = 1 + all_lt - nb_lt  # non-neighbours strictly closer, plus one
    prec = (nb_le.double() / all_le.double()).cpu()
    ap_sum = torch.zeros(n, dtype=torch.float64).index_add_(0, us.cpu(), prec)
    has = degree.cpu() > 0
    return {
        "mean_rank": float(ranks.double().mean()),
        "map": float((ap_sum[has] / degree.cpu()[has].double()).mean()),
    }


def distortion(
    dist: np.ndarray | torch.Tensor, tree_distance: np.ndarray, *, max_pairs: int = MAX_DISTORTION_PAIRS
) -> dict:
    """Average distortion at the best scale, worst-case distortion, and that scale (connected pairs only).

    Above ``max_pairs`` node pairs (about 1400 nodes) a fixed random subset of that size is used;
    ``pairs`` says how many were.
    """
    d = np.asarray(dist.detach().cpu() if isinstance(dist, torch.Tensor) else dist)
    t = np.asarray(tree_distance)
    iu, ju = np.triu_indices(d.shape[0], k=1)
    if iu.size > max_pairs:
        keep = np.random.default_rng(0).choice(iu.size, size=max_pairs, replace=False)
        iu, ju = iu[keep], ju[keep]
    d, t = d[iu, ju].astype(np.float64), t[iu, ju].astype(np.float64)
    keep = t > 0
    r = d[keep] / t[keep]
    if r.size == 0:
        return {"avg_distortion": math.nan, "worst_distortion": math.nan, "scale": math.nan, "pairs": 0}
    if (r <= 0).any():
        # Two distinct nodes on the same point: no scale makes them apart, the worst case is unbounded.
        worst = math.inf
    else:
        worst = float(r.max() / r.min())
    scale = _best_scale(r)
    return {
        "avg_distortion": float(np.mean(np.abs(scale * r - 1.0))),
        "worst_distortion": worst,
        "scale": scale,
        "pairs": int(r.size),
    }


def _best_scale(r: np.ndarray) -> float:
    """argmin_s sum |s r_i - 1| = sum r_i |s - 1/r_i|: the r-weighted median of 1/r (r > 0)."""
    pos = r > 0
    if not pos.any():
        return 1.0
    inv, w = 1.0 / r[pos], r[pos]
    order = np.argsort(inv)
    cum = np.cumsum(w[order])
    return float(inv[order][np.searchsorted(cum, 0.5 * cum[-1])])


def embedding_metrics(
    points: torch.Tensor, hierarchy: Hierarchy, *, geometry: str, c: float = 1.0, relation=None
) -> dict:
    """Mean rank, MAP, average and worst distortion of an embedding (N, d) of ``hierarchy``; mean rank and
    MAP on ``relation`` ((N, N) bool, e.g. a directed closure) when given, else on the adjacency."""
    dist = embedding_distances(points, geometry=geometry, c=c)
    rel = hierarchy.adjacency if relation is None else relation
    return {**reconstruction(dist, rel), **distortion(dist, hierarchy.tree_distance)}


def distance_to_origin(points: torch.Tensor, *, geometry: str, c: float = 1.0) -> torch.Tensor:
    """d(o, x) per point, o the origin (the north pole e_d on the sphere, where training starts). (N,)."""
    o = GEOMETRIES[geometry].origin(points.shape[-1], dtype=points.dtype, device=points.device)[None]  # (1, d)
    with torch.no_grad():
        return pairwise_distance(o, points, geometry=geometry, c=c, validate=False)[0]


def center_on(points: torch.Tensor, index: int, *, geometry: str, c: float = 1.0) -> torch.Tensor:
    """Move node ``index`` to the centre by an isometry, so no distance changes. (N, D) -> (N, D), float64.

    Ball: the Möbius translation x -> (-x_i) (+) x. Plane: x - x_i. Sphere: the Householder reflection
    that swaps x_i and the north pole e_D. The loss only sees distances, so a trained root can sit
    anywhere; this is the frame where "leaves go to the rim" is read off.
    """
    x = points.detach().double()  # (N, D)
    return GEOMETRIES[geometry].to_origin(x, x[index], c)


def relative_radius(
    points: torch.Tensor, *, geometry: str, c: float = 1.0, centre: int | None = None
) -> torch.Tensor:
    """How far out each node sits, on [0, 1]: sqrt(c)||x|| in the ball (1 = the rim), ||x|| / max ||x|| in
    the plane. Measured in the frame training started from (every node begins near the origin), or, with
    ``centre``, after ``center_on`` moved that node to the centre. The sphere has no centre: no radius. (N,).
    """
    if geometry not in GEOMETRIES or GEOMETRIES[geometry].is_compact:  # the sphere has no centre
        open_spaces = sorted(g for g, entry in GEOMETRIES.items() if not entry.is_compact)
        raise ValueError(f"geometry must be one of {open_spaces} for a radius (got {geometry!r})")
    x = points.detach().double()
    if centre is not None:
        x = center_on(x, centre, geometry=geometry, c=c)
    norms = x.norm(dim=-1)
    if (rim := GEOMETRIES[geometry].rim(c)) is not None:  # the ball: 1 = the rim
        return norms / rim
    return norms / norms.max().clamp_min(torch.finfo(torch.float64).tiny)


def node_table(points: torch.Tensor, hierarchy: Hierarchy, *, geometry: str, c: float = 1.0) -> dict[str, list]:
    """Per node: name, depth, coordinates x1..xD, norm and distance to the origin (for download)."""
    x = points.detach().cpu().double()  # (N, D)
    table: dict[str, list] = {"node": list(hierarchy.nodes), "depth": hierarchy.depth.tolist()}
    for i in range(x.shape[1]):
        table[f"x{i + 1}"] = x[:, i].tolist()
    table["norm"] = x.norm(dim=-1).tolist()
    table["distance_to_origin"] = distance_to_origin(x, geometry=geometry, c=c).tolist()
    return table


def rim_saturation(points: torch.Tensor, *, c: float = 1.0) -> dict:
    """How many Poincaré points sit at the rim cap of their dtype, where float32 stops resolving them.

    Returns the count at the cap (within 10% of projx's margin), the largest sqrt(c)||x||, the cap
    for this dtype and for float64. A point at the cap has lost its gradient (distance saturates).
    """
    eps = PROJX_EPS.get(points.dtype, PROJX_EPS[torch.float32])
    rel = (math.sqrt(c) * points.detach().double().norm(dim=-1)).cpu()  # (N,) 1 = the rim
    cap = 1.0 - eps
    return {
        "n_at_cap": int((rel >= 1.0 - 1.1 * eps).sum()),
        "max_rel_norm": float(rel.max()) if rel.numel() else 0.0,
        "cap": cap,
        "cap_float64": 1.0 - PROJX_EPS[torch.float64],
        "dtype": str(points.dtype).replace("torch.", ""),
    }


def compare_hierarchy_capacity(results: dict[str, dict], *, dim: int) -> dict:
    """Section 5.2(A) judged on a measured comparison: the Poincaré ball reconstructs the hierarchy at
    least as well as flat space of the same dimension and training budget (MAP_poincare >= MAP_euclidean).

    ``results`` maps geometry -> metrics (with "map"); returns a claim-result dict for a verdict box.
    """
    if "poincare" not in results or "euclidean" not in results:
        raise ValueError(f"results must hold 'poincare' and 'euclidean' metrics (got {sorted(results)})")
    hyp, flat = results["poincare"]["map"], results["euclidean"]["map"]
    verdict, _ = verdict_inequality([hyp], [flat], relation="ge", rtol=0.0)
    line = ", ".join(f"{g} {m['map']:.3f}" for g, m in results.items())
    if hyp == flat:
        tail = "The ball and the plane tie."
    else:
        tail = f"The ball is {abs(hyp - flat):.3f} {'above' if hyp > flat else 'below'} the plane."
    return {
        "key": "sec5.2a-hierarchy-capacity",
        "section": "Section 5.2(A)",
        "statement": "Hyperbolic volume grows like e^{(d-1)R}, Euclidean like R^d: hierarchies embed in "
        "the Poincaré ball with fewer dimensions than in flat space.",
        "bound_text": f"MAP(Poincaré, d={dim}) >= MAP(Euclidean, d={dim}) at the same training budget",
        "verdict": verdict,
        "summary": f"edge-reconstruction MAP at d={dim}: {line}. {tail}",
        "measured_value": hyp,
        "bound_value": flat,
    }
