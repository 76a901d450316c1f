"""Lemma 1 (section 2.4) as a supremum: the largest query Jacobian we can find.

The attention output o(q) = sum_j W_j(q) v_j is Lipschitz in the query with constant
L = sup_q ||d o / d q||_2. Sampled queries give only a lower estimate of the supremum, so
``max_jacobian_norm`` climbs the spectral norm of the Jacobian by gradient ascent from many starts
(the keys, points at IDA's peak distance sqrt(eps/3) from them, midpoints of close key pairs, random
points), for IDA and softmax. ``lipschitz_sweep`` runs that search as the number of keys grows, on
random and on clustered keys (Lemma 1's clustering assumption); ``lipschitz_across_spread`` moves
eps across the clusters' spread^2. The bounds they are judged against live in ``theory.attention``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from georesolver_core.attention.kernel import softmax_attention
from georesolver_core.attention.layer import KERNEL_CHOICES
from georesolver_core.attention.reference import ida_weights_from_sq
from georesolver_core.device import one_cpu_thread
from georesolver_core.geometry import pairwise_distance, pairwise_sq_distance
from georesolver_core.labs.samplers import clustered_points, random_points
from georesolver_core.validate import check_eps, check_finite, check_positive_int, check_range

F64 = torch.float64
KEY_LAYOUTS = ("random", "clustered")


# --- the query Jacobian by autograd, and where to look for its largest values ------------------


def query_jacobian_norms(
    queries: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    kernel: str,
    eps: float = 0.1,
    scale: float | None = None,
) -> torch.Tensor:
    """Spectral norm of d o(q) / d q at each query, by autograd (Lemma 1, section 2.4). (Q, d) -> (Q,).

    o(q) = sum_j W_j(q) v_j with Euclidean IDA or softmax(scale q.k) weights (scale 1/sqrt d by
    default). The Lipschitz constant is the supremum over q; the maximum over sampled queries
    is a lower estimate of it.
    """
    if kernel not in KERNEL_CHOICES:  # "ida" (in the lab's geometry) or "softmax"
        raise ValueError(f"kernel must be one of {sorted(KERNEL_CHOICES)} (got {kernel!r})")
    for name, t in (("queries", queries), ("k", k), ("v", v)):
        check_finite(name, t)
    if k.shape[0] != v.shape[0] or queries.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"shapes must be q (Q, d), k (n, d), v (n, dv) (got {queries.shape}, {k.shape}, {v.shape})"
        )
    q = queries.detach().clone().requires_grad_(True)  # (Q, d)
    if kernel == "ida":
        # Plain autograd through the defining formula, not through any hand-written backward.
        sq = pairwise_sq_distance(q, k, geometry="euclidean")  # (Q, n)
        out = ida_weights_from_sq(sq, eps=check_eps(eps)) @ v  # (Q, dv)
    else:
        out = softmax_attention(q, k, v, scale=1.0 / math.sqrt(k.shape[-1]) if scale is None else scale)
    # o(q_i) depends on q_i alone, so the gradient of sum_i o_i[a] holds row a of every Jacobian:
    # dv backward passes give all Q Jacobians at once.
    rows = [
        torch.autograd.grad(out[:, a].sum(), q, retain_graph=a < out.shape[-1] - 1)[0]
        for a in range(out.shape[-1])
    ]
    jac = torch.stack(rows, dim=-2)  # (Q, dv, d)
    return torch.linalg.matrix_norm(jac, ord=2)  # (Q,)


def lipschitz_probe_queries(
    k: torch.Tensor, *, eps: float, n_random: int = 32, n_near: int = 32, generator: torch.Generator | None = None
) -> torch.Tensor:
    """Queries where the Jacobian is largest: random ones, midpoints of key pairs, and points at the
    distance sqrt(eps/3) from a key where ||d(a^2+eps)^-1/dq|| peaks (section 2.4). (n_random + 2 n_near, d)."""
    n, d = k.shape
    kw = dict(generator=generator, dtype=k.dtype)
    scale = k.std().clamp_min(1e-12) if n > 1 else torch.ones((), dtype=k.dtype)
    rand = scale * torch.randn(n_random, d, **kw) + k.mean(0)  # (R, d)
    idx = torch.randint(0, n, (n_near,), generator=generator)
    idx2 = torch.randint(0, n, (n_near,), generator=generator)
    mids = 0.5 * (k[idx] + k[idx2])  # (N, d)
    u = torch.randn(n_near, d, **kw)
    u = u / u.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    near = k[idx] + math.sqrt(eps / 3.0) * u  # (N, d)
    return torch.cat([rand, mids, near])


def _jacobian(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, kernel: str, eps: float) -> torch.Tensor:
    """d o / d q in closed form, differentiable in q. (Q, d), (n, d), (n, dv) -> (Q, dv, d).

    With o = sum_j W_j v_j and W_j proportional to exp(s_j): d o / d q = sum_j W_j (v_j - vbar) g_j^T,
    g_j = d s_j / d q. IDA: s_j = -log(|q - k_j|^2 + eps), g_j = -2 (q - k_j) / (|q - k_j|^2 + eps);
    softmax: s_j = q.k_j / sqrt(d), g_j = k_j / sqrt(d).
    """
    diff = q[:, None, :] - k[None, :, :]  # (Q, n, d)
    if kernel == "ida":
        a = 1.0 / (diff.pow(2).sum(-1) + eps)  # (Q, n)
        w = a / a.sum(-1, keepdim=True)
        g = -2.0 * a[..., None] * diff  # (Q, n, d)
    else:
        logits = q @ k.T / math.sqrt(k.shape[-1])  # (Q, n)
        w = torch.softmax(logits, dim=-1)
        g = (k / math.sqrt(k.shape[-1])).expand(q.shape[0], -1, -1)  # (Q, n, d)
    centred = v[None] - (w @ v)[:, None, :]  # (Q, n, dv): v_j - vbar
    return torch.einsum("qn,qnv,qnd->qvd", w, centred, g)


def jacobian_norms(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, kernel: str, eps: float = 0.1):
    """Spectral norm of d o / d q at each query (closed form). (Q, d) -> (Q,)."""
    return torch.linalg.matrix_norm(_jacobian(q, k, v, kernel=kernel, eps=eps), ord=2)


def search_starts(
    k: torch.Tensor, *, kernel: str, eps: float, n_each: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Starting queries and the length scale each moves on. Returns (starts (S, d), scale (S,)).

    The keys themselves, points sqrt(eps/3) from a key (where |g_j| = 2a/(a^2 + eps) peaks: IDA only),
    midpoints of the closest key pairs and random points spread like the keys.
    """
    n, d = k.shape
    kw = dict(generator=generator, dtype=k.dtype)
    spread = float(k.std()) if n > 1 else 1.0
    pick = torch.randperm(n, generator=generator)[: min(n, n_each)]
    # IDA's Jacobian is largest where two close keys compete for the weight: midpoints of the closest pairs
    sq = torch.cdist(k, k).fill_diagonal_(math.inf)  # (n, n)
    flat = torch.topk(sq.flatten(), min(2 * n_each, n * (n - 1)), largest=False).indices[::2]  # each pair once
    i, j = flat // n, flat % n
    parts = [k[pick], 0.5 * (k[i] + k[j]), k.mean(0) + spread * torch.randn(n_each, d, **kw)]
    scales = [spread] * 3
    if kernel == "ida":
        u = torch.randn(pick.numel(), d, **kw)
        parts.append(k[pick] + math.sqrt(eps / 3.0) * u / u.norm(dim=-1, keepdim=True).clamp_min(1e-12))
        scales = [math.sqrt(eps), spread, spread, math.sqrt(eps)]
    starts = torch.cat(parts)  # (S, d)
    scale = torch.cat([torch.full((p.shape[0],), s, dtype=k.dtype) for p, s in zip(parts, scales, strict=True)])
    return starts, scale


@dataclass(frozen=True)
class Ascent:
    """How hard ``max_jacobian_norm`` searches: starts of each kind, Adam steps, step size (units of u)."""

    n_each: int = 16
    steps: int = 60
    lr: float = 0.05

    def __post_init__(self):
        check_positive_int("n_each", self.n_each, 1, 10_000)
        check_positive_int("steps", self.steps, 0, 100_000)
        check_range("lr", self.lr, 1e-6, 10.0)


def max_jacobian_norm(k, v, *, kernel: str, eps: float = 0.1, ascent: Ascent = Ascent(), generator=None,
                      more_starts: torch.Tensor | None = None) -> tuple[float, torch.Tensor]:  # fmt: skip
    """Largest ||d o / d q||_2 found by gradient ascent (Adam) from ``search_starts``; a lower estimate
    of the Lipschitz constant sup_q ||d o / d q|| that is as large as we can make it. k (n, d), v (n, dv).

    Each start moves as q = start + scale * u (u learnt), so a start near a key takes steps of order
    sqrt(eps) and a random one steps of order the keys' spread; ``more_starts`` (M, d) join them (e.g.
    earlier probe queries, so the search never reports less than they found). Returns (best norm, the
    best query of each start (S, d)).
    """
    if kernel not in ("ida", "softmax"):
        raise ValueError(f"kernel must be 'ida' or 'softmax' (got {kernel!r})")
    eps = check_eps(eps)
    n_each, steps, lr = ascent.n_each, ascent.steps, ascent.lr
    gen = generator if generator is not None else torch.Generator().manual_seed(0)
    starts, scale = search_starts(k, kernel=kernel, eps=eps, n_each=n_each, generator=gen)
    if more_starts is not None:
        starts = torch.cat([starts, more_starts.to(starts.dtype)])
        scale = torch.cat([scale, scale[-1:].expand(more_starts.shape[0])])
    u = torch.zeros_like(starts)
    m, s2 = torch.zeros_like(u), torch.zeros_like(u)  # Adam's moments (torch.optim would import the compiler)
    best = jacobian_norms(starts, k, v, kernel=kernel, eps=eps).detach()  # (S,)
    best_q = starts.clone()
    with one_cpu_thread():  # a loop of tiny tensors: a second thread only adds synchronisation
        for t in range(1, steps + 1):
            u.requires_grad_(True)
            q = starts + scale[:, None] * u
            norms = jacobian_norms(q, k, v, kernel=kernel, eps=eps)  # (S,)
            (grad,) = torch.autograd.grad(norms.sum(), u)  # each start climbs its own norm
            better = norms.detach() > best
            best = torch.where(better, norms.detach(), best)
            best_q[better] = q.detach()[better]
            m = 0.9 * m + 0.1 * grad
            s2 = 0.999 * s2 + 0.001 * grad * grad
            step = (m / (1 - 0.9**t)) / ((s2 / (1 - 0.999**t)).sqrt() + 1e-12)
            u = u.detach() + lr * step  # ascent
    return float(best.max()), best_q


@dataclass(frozen=True)
class JacobianSup:
    """Lemma 1's constant as the ascent found it, and how far from the keys the best queries lie."""

    norm: float  # sup_q ||d o/d q||_2 found by ``max_jacobian_norm``, re-measured by autograd
    radius: float  # max_j ||q - k_j|| over the best queries: the R of the bound


def sup_jacobian_norm(
    k, v, *, kernel: str, eps: float, ascent: Ascent, generator, more_starts=None
) -> JacobianSup:
    """sup_q ||d o/d q||_2 found by ``max_jacobian_norm``, and max_j ||q - k_j|| over the best queries.

    The norm is re-measured at the best queries by autograd through the kernel
    (``query_jacobian_norms``), so the reported value never rests on the closed form alone.
    """
    _, qs = max_jacobian_norm(
        k, v, kernel=kernel, eps=eps, ascent=ascent, generator=generator, more_starts=more_starts
    )
    with one_cpu_thread():  # small tensors: a second thread only adds synchronisation
        norms = query_jacobian_norms(qs, k, v, kernel=kernel, eps=eps)  # (S,): the library's own autograd path
    return JacobianSup(norm=float(norms.max()), radius=float(pairwise_distance(qs, k, geometry="euclidean").max()))


@dataclass(frozen=True)
class LipschitzSweep:
    """Lemma 1's constants found by ascent at each number of keys n, random and clustered keys."""

    ns: tuple[int, ...]
    sup: dict[str, list[float]]  # "ida_random", "ida_clustered", "soft_random", "soft_clustered" -> (N,)
    radius: dict[str, list[float]]  # layout -> max ||q - k_j|| over IDA's best queries (N,): the R of the bound
    probed: list[float]  # IDA, random keys: the largest norm over the random probes alone (N,)
    v_max: list[float]  # max_j ||v_j|| (N,)
    k_max: list[float]  # max_j ||k_j|| of the random keys (N,)


def lipschitz_sweep(
    ns, *, d: int, eps: float, spread: float, ascent: Ascent, n_probes: int = 8, seed: int = 0
) -> LipschitzSweep:
    """sup ||d o/d q|| of IDA and softmax over n random keys and n clustered keys (cluster spread
    ``spread``), values v ~ N(0, I_d), for each n in ``ns``. The random probes
    (``lipschitz_probe_queries``) start the ascent too, so it never reports less than they found.
    One generator per n, seeded with ``seed``: every n draws the same way."""
    sup = {f"{kernel}_{layout}": [] for kernel in ("ida", "soft") for layout in KEY_LAYOUTS}
    radius = {layout: [] for layout in KEY_LAYOUTS}
    probed, v_max, k_max = [], [], []
    for n in ns:
        g = torch.Generator().manual_seed(seed)
        keys = {
            "random": random_points(n, d, generator=g),
            "clustered": clustered_points(n, d, cluster_spread=spread, generator=g),
        }
        v = torch.randn(n, d, generator=g, dtype=F64)  # (n, dv)
        v_max.append(float(v.norm(dim=-1).max()))
        for layout, k in keys.items():
            probes = lipschitz_probe_queries(k, eps=eps, n_random=n_probes, n_near=n_probes, generator=g)  # (Q, d)
            search = dict(eps=eps, ascent=ascent, generator=g, more_starts=probes)
            ida = sup_jacobian_norm(k, v, kernel="ida", **search)
            sup[f"ida_{layout}"].append(ida.norm)
            radius[layout].append(ida.radius)
            sup[f"soft_{layout}"].append(sup_jacobian_norm(k, v, kernel="softmax", **search).norm)
            if layout == "random":
                with one_cpu_thread():
                    norms = query_jacobian_norms(probes, k, v, kernel="ida", eps=eps)  # (Q,)
                probed.append(float(norms.max()))
        k_max.append(float(keys["random"].norm(dim=-1).max()))
    return LipschitzSweep(
        ns=tuple(int(n) for n in ns), sup=sup, radius=radius, probed=probed, v_max=v_max, k_max=k_max
    )


@dataclass(frozen=True)
class SpreadSweep:
    """IDA's constant on clustered keys as eps moves across the clusters' spread^2."""

    rho: np.ndarray  # eps / spread^2 (R,)
    sup: list[float]  # L_IDA found by ascent (R,)
    fraction: list[float]  # L_IDA sqrt(eps) / max||v||: the share of the n-independent bound (R,)


def lipschitz_across_spread(
    rho, *, d: int, spread: float, ascent: Ascent, n: int = 64, seed: int = 1
) -> SpreadSweep:
    """L_IDA (by ascent) of n clustered keys at eps = rho spread^2 for each rho, in units of the
    n-independent bound max||v|| / sqrt(eps) as well. One generator, seeded with ``seed``."""
    g = torch.Generator().manual_seed(seed)
    k = clustered_points(n, d, cluster_spread=spread, generator=g)
    v = torch.randn(n, d, generator=g, dtype=F64)  # (n, dv)
    v_max = float(v.norm(dim=-1).max())
    sup, fraction = [], []
    for r in rho:
        eps = float(r) * spread**2
        L = sup_jacobian_norm(k, v, kernel="ida", eps=eps, ascent=ascent, generator=g).norm
        sup.append(L)
        fraction.append(L * np.sqrt(eps) / v_max)
    return SpreadSweep(rho=np.asarray(rho), sup=sup, fraction=fraction)
