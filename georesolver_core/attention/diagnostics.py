"""Measurements on attention weights: the instruments the Attention lab and its claims use.

Point samplers and query placement for the three geometries, the kernel matrix and its effective
rank (section 2.7), nearest-neighbour radii (section 2.3), the orthogonal-keys instance and softmax
width/norm searches (Theorem 1), and the eps sweep the page animates. The query Jacobian of Lemma 1
and its supremum search live in ``attention.lipschitz``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from georesolver_core.attention.kernel import ida_weights, softmax_weights
from georesolver_core.attention.lab_stats import LabStats
from georesolver_core.attention.layer import KERNEL_CHOICES
from georesolver_core.attention.reference import ida_weights_from_sq, inverse_sq
from georesolver_core.geometry import (
    GEOMETRIES,
    check_geometry,
    check_points,
    embed,
    geodesic,
    pairwise_distance,
    pairwise_sq_distance,
    project,
)
from georesolver_core.theory import attention as th
from georesolver_core.validate import check_eps, check_finite, check_positive_int, check_range
from georesolver_core.verdicts import verdict_inequality

QUERY_MODES = {
    "random": "a random point",
    "key": "equal to key j",
    "between": "on the geodesic between keys j and j2",
    "custom": "typed coordinates",
}


def random_points(
    n: int,
    d: int,
    *,
    geometry: str = "euclidean",
    c: float = 1.0,
    spread: float = 1.0,
    generator: torch.Generator | None = None,
    dtype: torch.dtype = torch.float64,
) -> torch.Tensor:
    """n points of the geometry from spread * N(0, I_d): as is, into the ball by x = 0.9 tanh(|z|) z/|z|, or z/|z|. (n, d)."""
    check_geometry(geometry)
    check_positive_int("n", n, 1)
    check_positive_int("d", d, 1)
    spread = check_range("spread", spread, 1e-6, 1e6)
    z = spread * torch.randn(n, d, generator=generator, dtype=dtype)  # (n, d)
    return _embed(z, geometry, c)


def clustered_points(
    n: int,
    d: int,
    *,
    n_clusters: int = 4,
    cluster_spread: float = 0.05,
    geometry: str = "euclidean",
    c: float = 1.0,
    generator: torch.Generator | None = None,
    dtype: torch.dtype = torch.float64,
) -> torch.Tensor:
    """n points in n_clusters tight groups (Lemma 1's low-rank/clustering assumption): centres N(0, I), members +- spread."""
    check_positive_int("n", n, 1)
    check_positive_int("n_clusters", n_clusters, 1, n)
    cluster_spread = check_range("cluster_spread", cluster_spread, 0.0, 1e6)
    centres = torch.randn(n_clusters, d, generator=generator, dtype=dtype)  # (C, d)
    labels = torch.arange(n) % n_clusters  # (n,)
    z = centres[labels] + cluster_spread * torch.randn(n, d, generator=generator, dtype=dtype)  # (n, d)
    return _embed(z, geometry, c)


def _embed(z: torch.Tensor, geometry: str, c: float) -> torch.Tensor:
    # A zero draw has no direction on the sphere; nudging it keeps the sampler total (probability
    # zero anyway) and changes nothing elsewhere.
    z = torch.where(z.norm(dim=-1, keepdim=True) > 0, z, torch.ones_like(z))
    return embed(z, geometry=geometry, c=c)


def place_query(
    keys: torch.Tensor,
    *,
    mode: str,
    geometry: str = "euclidean",
    c: float = 1.0,
    j: int = 0,
    j2: int = 1,
    t: float = 0.5,
    coords=None,
    spread: float = 1.0,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """One query point (d,) placed as the Attention lab asks: see QUERY_MODES.

    "between" walks the geodesic of the geometry (segment, Möbius arc, great circle) from k_j (t=0)
    to k_j2 (t=1). "custom" coordinates are used as typed in R^d and inside the ball; on the sphere
    they are normalised onto it.
    """
    if mode not in QUERY_MODES:
        raise ValueError(f"mode must be one of {sorted(QUERY_MODES)} (got {mode!r})")
    n, d = keys.shape
    if mode == "random":
        return random_points(1, d, geometry=geometry, c=c, spread=spread, generator=generator, dtype=keys.dtype)[0]
    if mode == "key":
        check_positive_int("j", j, 0, n - 1)
        return keys[j].clone()
    if mode == "between":
        if n < 2:
            raise ValueError(f"mode 'between' needs at least 2 keys (got n = {n})")
        check_positive_int("j", j, 0, n - 1)
        check_positive_int("j2", j2, 0, n - 1)
        t = check_range("t", t, 0.0, 1.0)
        return geodesic(keys[j], keys[j2], torch.tensor([t], dtype=keys.dtype), geometry=geometry, c=c)[0]
    q = torch.as_tensor(np.asarray(coords, dtype=float), dtype=keys.dtype).reshape(-1)  # (d,)
    if q.numel() != d:
        raise ValueError(f"coords must have d = {d} numbers (got {q.numel()})")
    check_finite("coords", q)
    if GEOMETRIES[geometry].extra_dims:  # the sphere: typed coordinates are normalised onto it
        if float(q.norm()) == 0.0:
            raise ValueError("coords must not be the zero vector on the sphere: it has no direction")
        return project(q, geometry=geometry)
    check_points("coords", q[None], geometry=geometry, c=c)
    return q


def attention_weights(
    q: torch.Tensor,
    k: torch.Tensor,
    *,
    kernel: str,
    eps: float = 0.1,
    temperature: float = 1.0,
    geometry: str = "euclidean",
    c: float = 1.0,
) -> torch.Tensor:
    """Rows of attention weights for the lab. (..., n, d), (..., m, d) -> (..., n, m).

    "ida": W_ij proportional to (d(q_i, k_j)^2 + eps)^-1 in the chosen geometry;
    "softmax": softmax(q.k / (T sqrt d)) on the ambient coordinates (the geometry is not used).
    """
    if kernel not in KERNEL_CHOICES:  # "ida" (in the lab's geometry) or "softmax"
        raise ValueError(f"kernel must be one of {sorted(KERNEL_CHOICES)} (got {kernel!r})")
    if kernel == "ida":
        return ida_weights(q, k, eps=eps, geometry=geometry, c=c)
    temperature = check_range("temperature", temperature, 1e-6, 1e6)
    return softmax_weights(q, k, scale=1.0 / (temperature * math.sqrt(q.shape[-1])))


def kernel_matrix(x: torch.Tensor, y: torch.Tensor, *, eps: float, geometry: str = "euclidean", c: float = 1.0):
    """K_ij = (d(x_i, y_j)^2 + eps)^-1 (section 2.7, Lemma 5.1). (..., n, d), (..., m, d) -> (..., n, m)."""
    return inverse_sq(pairwise_sq_distance(x, y, geometry=geometry, c=c), check_eps(eps))


def effective_rank(K: torch.Tensor) -> torch.Tensor:
    """eff-rank(K) = (tr K)^2 / tr(K^2) (section 2.1). (..., n, n) -> (...); between 1 and n for PSD K."""
    check_finite("K", K)
    if K.dim() < 2 or K.shape[-1] != K.shape[-2]:
        raise ValueError(f"K must be square (..., n, n) (got shape {tuple(K.shape)})")
    tr = K.diagonal(dim1=-2, dim2=-1).sum(-1)  # (...)
    tr_sq = (K * K.transpose(-1, -2)).sum((-2, -1))  # tr(K K) without forming the product, (...)
    return tr**2 / tr_sq


def nn_distance(x: torch.Tensor, *, geometry: str = "euclidean", c: float = 1.0) -> torch.Tensor:
    """Distance from each point to its nearest other point, r_j = min_{m != j} d(x_j, x_m). (n, d) -> (n,).

    This is the radius the dense-key bound of section 2.3 uses. Needs n >= 2.
    """
    if x.shape[-2] < 2:
        raise ValueError(f"x must hold at least 2 points to have a nearest neighbour (got {x.shape[-2]})")
    dist = pairwise_distance(x, x, geometry=geometry, c=c)  # (n, n)
    return dist.fill_diagonal_(math.inf).amin(dim=-1)


def min_pairwise_distance(x: torch.Tensor, *, geometry: str = "euclidean", c: float = 1.0) -> float:
    """d_min = min_{i != j} d(x_i, x_j), the separation in Theorem 3 / Lemma 5.1."""
    return float(nn_distance(x, geometry=geometry, c=c).min())


def mean_sq_distance(x: torch.Tensor, y: torch.Tensor, *, geometry: str = "euclidean", c: float = 1.0) -> float:
    """E ||x_i - y_j||^2 over all pairs with i != j when x is y (self-attention), all pairs otherwise."""
    sq = pairwise_sq_distance(x, y, geometry=geometry, c=c)  # (n, m)
    if x is y:
        n = sq.shape[-1]
        return float(sq.sum() / max(n * (n - 1), 1))
    return float(sq.mean())


# --- Theorem 1: the orthogonal-keys instance and the softmax resource searches --------------


def orthogonal_keys(n: int, *, R: float = 1.0, d: int | None = None, dtype=torch.float64):
    """Theorem 1's instance: k_j = R e_j in R^d (d >= n), query q = k_1. Returns (q (1, d), k (n, d))."""
    check_positive_int("n", n, 1)
    d = n if d is None else check_positive_int("d", d, n)
    R = check_range("R", R, 1e-6, 1e6)
    k = R * torch.eye(n, d, dtype=dtype)  # (n, d)
    return k[:1].clone(), k


def sign_keys(n: int, d: int, *, generator: torch.Generator | None = None, dtype=torch.float64) -> torch.Tensor:
    """n random keys with coordinates +-1 (bounded coordinates, ||k||^2 = d). (n, d)."""
    return torch.randint(0, 2, (n, d), generator=generator).to(dtype) * 2 - 1


def softmax_min_width(n: int, *, delta: float, d_max: int, generator: torch.Generator | None = None) -> int | None:
    """Smallest width d at which softmax (scale 1/sqrt d) gives the matched key W_11 >= 1 - delta, for
    keys with coordinates +-1 and q = k_1, staying there for every larger d up to d_max.

    One draw of n x d_max signs; width d uses its first d coordinates, so widths are nested and
    all d are evaluated at once from prefix sums. Returns None when d_max is not enough.
    """
    check_positive_int("n", n, 2)
    check_positive_int("d_max", d_max, 1)
    delta = check_range("delta", delta, 1e-12, 0.5)
    k = sign_keys(n, d_max, generator=generator)  # (n, D)
    dots = torch.cumsum(k * k[:1], dim=-1)  # (n, D): q.k_j using the first d coordinates
    widths = torch.arange(1, d_max + 1, dtype=k.dtype)  # (D,)
    w11 = torch.softmax(dots / widths.sqrt(), dim=0)[0]  # (D,)
    ok = (w11 >= 1 - delta).flip(0).cumprod(0).flip(0).bool()  # ok from here to d_max
    if not bool(ok[-1]):
        return None
    return int(torch.nonzero(ok)[0, 0]) + 1


def softmax_min_norm_sq_circle(n: int, *, delta: float, d: int = 2) -> float:
    """Smallest R^2 with softmax W_11 >= 1 - delta for n keys evenly spaced on a circle of radius R in R^d, q = k_1.

    The counter-example to a width requirement without a norm bound: d = 2 serves every n.
    Found by bisection on log R^2 with the actual softmax weights (float64).
    """
    check_positive_int("n", n, 2)
    check_positive_int("d", d, 2)
    delta = check_range("delta", delta, 1e-12, 0.5)
    angle = 2 * math.pi * torch.arange(n, dtype=torch.float64) / n
    unit = torch.zeros(n, d, dtype=torch.float64)
    unit[:, 0], unit[:, 1] = torch.cos(angle), torch.sin(angle)  # (n, d)

    def w11(r2: float) -> float:
        k = math.sqrt(r2) * unit
        return float(softmax_weights(k[:1], k)[0, 0])

    lo, hi = 0.0, 1.0
    while w11(math.exp(hi)) < 1 - delta:
        lo, hi = hi, 2 * hi + 1
    for _ in range(40):  # 2^-40 of the bracket: far below any difference the claims read
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if w11(math.exp(mid)) >= 1 - delta else (mid, hi)
    return math.exp(hi)


# --- The eps sweep the page animates ---------------------------------------------------------


@dataclass
class EpsSweep:
    """IDA weights of one query at each eps, beside the softmax weights (which do not depend on eps)."""

    eps: np.ndarray  # (E,)
    ida: np.ndarray  # (E, n)
    softmax: np.ndarray  # (n,)
    temperature: float


def eps_sweep(
    q: torch.Tensor,
    k: torch.Tensor,
    *,
    eps_values,
    temperature: float = 1.0,
    geometry: str = "euclidean",
    c: float = 1.0,
) -> EpsSweep:
    """IDA weights of q (d,) over keys k (n, d) for every eps in eps_values, one batched call."""
    eps_values = np.asarray(eps_values, dtype=float)
    if eps_values.ndim != 1 or eps_values.size == 0:
        raise ValueError(f"eps_values must be a non-empty 1-D list (got shape {eps_values.shape})")
    for e in eps_values:
        check_eps(e, "eps_values")
    sq = pairwise_sq_distance(q[None], k, geometry=geometry, c=c)  # (1, n)
    ida = torch.cat([ida_weights_from_sq(sq, eps=float(e)) for e in eps_values])  # (E, n)
    soft = attention_weights(q[None], k, kernel="softmax", temperature=temperature)[0]
    return EpsSweep(eps_values, ida.cpu().double().numpy(), soft.cpu().double().numpy(), float(temperature))


# --- Everything the Attention lab shows for one configuration -------------------------------


@dataclass(frozen=True)
class Retrieval:
    """Exact retrieval (section 2.3) for a query placed on key j: its IDA weight beside the lemma's bound."""

    key: int  # j, 0-based
    weight: float  # W_j for q = k_j
    bound: float  # 1 / (1 + eps (n - 1) / (r_j^2 + eps)), r_j the distance from k_j to its nearest other key
    verdict: str  # HOLDS or FAILS: W_j >= bound, up to the lab's float32 rounding (RETRIEVAL_RTOL)


RETRIEVAL_RTOL = 1e-5  # the lab computes weights in float32 (7 digits): a relative 1e-5 is rounding


def retrieval_check(weight: float, bound: float, key: int) -> Retrieval:
    """Judge W_j >= 1/(1 + eps(n-1)/(r^2+eps)) for a query on key j (``verdict_inequality``, relation "ge")."""
    verdict, _ = verdict_inequality([weight], [bound], relation="ge", rtol=RETRIEVAL_RTOL)
    return Retrieval(key, float(weight), float(bound), verdict)


@dataclass
class Lab:
    """Keys, one query, both kernels' weights and the numbers that explain them (arrays on the CPU)."""

    keys: np.ndarray  # (n, d)
    query: np.ndarray  # (d,)
    ida: np.ndarray  # (1 + n, n): row 0 the query, then each key attending to all keys
    softmax: np.ndarray  # (1 + n, n)
    sq_dist: np.ndarray  # (n,) d(q, k_j)^2
    sweep: EpsSweep
    stats: LabStats  # separation, effective rank, degradation index, retrieval bound ...
    retrieval: Retrieval | None = None  # the exact-retrieval verdict when the query sits on a key (n >= 2)
    degraded: bool | None = None  # section 2.8: eps (n-1)/d_min^2 >= 1/2 for these keys (None: n = 1)


def attention_lab(
    *,
    geometry: str,
    n: int,
    d: int,
    eps: float,
    temperature: float = 1.0,
    mode: str = "random",
    j: int = 0,
    j2: int = 1,
    t: float = 0.5,
    coords=None,
    spread: float = 1.0,
    c: float = 1.0,
    seed: int = 0,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str = "cpu",
    sweep_eps=None,
) -> Lab:
    """Draw n keys of the geometry from ``seed``, place the query, and measure everything the page draws."""
    check_positive_int("n", n, 1, 4096)
    check_geometry(geometry)
    check_positive_int("d", d, 1 + GEOMETRIES[geometry].extra_dims, 1024)
    eps = check_eps(eps)
    g = torch.Generator().manual_seed(seed)
    keys = random_points(n, d, geometry=geometry, c=c, spread=spread, generator=g, dtype=torch.float64)
    q = place_query(
        keys, mode=mode, geometry=geometry, c=c, j=j, j2=j2, t=t, coords=coords, spread=spread, generator=g
    )
    kd, qd = keys.to(device, dtype), q.to(device, dtype)
    rows = torch.cat([qd[None], kd])  # (1 + n, d)
    w_ida = ida_weights(rows, kd, eps=eps, geometry=geometry, c=c)  # (1 + n, n)
    w_soft = attention_weights(rows, kd, kernel="softmax", temperature=temperature)  # (1 + n, n)
    sq = pairwise_sq_distance(qd[None], kd, geometry=geometry, c=c)[0]  # (n,)
    sweep = eps_sweep(qd, kd, eps_values=np.logspace(-8, 2, 41) if sweep_eps is None else sweep_eps,
                      temperature=temperature, geometry=geometry, c=c)  # fmt: skip
    w0 = w_ida[0]
    retrieval = degraded = None
    head = dict(
        largest_weight=float(w0.max()),
        eff_keys_ida=float(1.0 / (w0**2).sum()),
        eff_keys_softmax=float(1.0 / (w_soft[0] ** 2).sum()),
        nearest_key_distance=float(sq.min().sqrt()),
    )
    pairs = {}
    if n >= 2:
        sq_kk = pairwise_sq_distance(keys, keys, geometry=geometry, c=c)  # (n, n), float64, computed once
        msd = float(sq_kk.sum() / (n * (n - 1)))
        eff = float(effective_rank(1.0 / (sq_kk + eps)))
        r = sq_kk.fill_diagonal_(math.inf).amin(dim=-1).sqrt()  # (n,) nearest other key
        d_min = float(r.min())
        degraded = bool(th.in_degradation_regime(eps, n, d_min))
        pairs = dict(
            d_min=d_min,
            mean_sq_distance=msd,
            eff_rank=eff,
            eff_rank_bound=float(th.effective_rank_bound(n, eps, d_min)),
            degradation_index=float(th.degradation_index(eps, n, d_min)),
            advised_eps=float(th.recommended_eps(msd)),
            max_safe_eps=float(th.max_safe_eps(n, d_min)),
        )
        if mode == "key":
            retrieval = retrieval_check(float(w0[j]), th.retrieval_weight_lower_bound(eps, n, float(r[j])), j)
            pairs |= dict(retrieval_weight=retrieval.weight, retrieval_bound=retrieval.bound)
    stats = LabStats(**head, **pairs)
    return Lab(
        keys=keys.numpy(),
        query=q.numpy(),
        ida=w_ida.detach().cpu().double().numpy(),
        softmax=w_soft.detach().cpu().double().numpy(),
        sq_dist=sq.detach().cpu().double().numpy(),
        sweep=sweep,
        stats=stats,
        retrieval=retrieval,
        degraded=degraded,
    )
