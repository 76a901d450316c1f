"""The Attention page's lab: one configuration (``LabConfig``) in, everything the page draws out (``Lab``).

n keys of a geometry drawn from a seed, one query placed on a key, between two keys or at typed
coordinates, both kernels' weights, the eps sweep the page animates, and the numbers that explain
them (``AttentionStats``: separation, effective rank, degradation index, the exact-retrieval bound of
sections 2.3, 2.7, 2.8). The samplers live in ``labs.samplers``, the key-set statistics in
``labs.key_set``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch

from georesolver_core.attention.kernel import ida_weights, softmax_weights
from georesolver_core.attention.reference import ida_weights_from_sq
from georesolver_core.device import DTYPES
from georesolver_core.geometry import (
    GEOMETRIES,
    check_geometry,
    check_points,
    geodesic,
    pairwise_sq_distance,
    project,
)
from georesolver_core.labs.key_set import effective_rank
from georesolver_core.labs.samplers import random_points
from georesolver_core.results import Labelled
from georesolver_core.theory import attention as th
from georesolver_core.validate import check_eps, check_finite, check_positive_int, check_range
from georesolver_core.verdicts import HOLDS, verdict_inequality

TEMPERATURE_RANGE = (1e-6, 1e6)  # softmax T
QUERY_MODES = {
    "random": "a random point",
    "key": "equal to key j",
    "between": "on the geodesic between keys j and j2",
    "custom": "typed coordinates",
}


@dataclass(frozen=True)
class LabConfig:
    """Keys, query and kernels of one lab view (hashable: a page caches ``attention_lab`` on it).

    Validated on construction, once: n in [1, 4096], d in [1 + the geometry's extra dimensions, 1024],
    eps > 0, temperature in [1e-6, 1e6], ``mode`` a QUERY_MODES key; the indices and coordinates are
    checked where the query is placed (``place_query``), against the keys drawn.
    """

    geometry: str  # a GEOMETRIES key
    n: int  # keys
    d: int  # dimension (ambient, on the sphere)
    eps: float  # IDA regulariser
    temperature: float = 1.0  # softmax T
    mode: str = "random"  # a QUERY_MODES key: where the query sits
    j: int = 0  # key the query sits on (mode "key"), or the geodesic's start (mode "between")
    j2: int = 1  # the geodesic's end
    t: float = 0.5  # position along the geodesic
    coords: tuple[float, ...] | None = None  # typed coordinates (mode "custom")
    spread: float = 1.0  # scale of the key sampler
    c: float = 1.0  # curvature (ball radius 1/sqrt(c))
    seed: int = 0  # the generator of the keys (and of a random query)

    def __post_init__(self):
        check_positive_int("n", self.n, 1, 4096)
        check_geometry(self.geometry)
        check_positive_int("d", self.d, GEOMETRIES[self.geometry].ambient_dim(1), 1024)
        check_eps(self.eps)
        check_range("temperature", self.temperature, *TEMPERATURE_RANGE)
        if self.mode not in QUERY_MODES:
            raise ValueError(f"mode must be one of {sorted(QUERY_MODES)} (got {self.mode!r})")
        if self.coords is not None:  # any sequence of numbers; stored as a tuple to stay hashable
            object.__setattr__(self, "coords", tuple(float(x) for x in self.coords))

    def random_query(self) -> LabConfig:
        """The same keys with a random query: what a page shows when the query asked for cannot be placed."""
        return dataclasses.replace(self, mode="random", j=0, j2=1, t=0.5, coords=None)


@dataclass(frozen=True)
class AttentionStats(Labelled):
    """Headline numbers of one query over n keys; the key-set fields are None when n = 1 (no pairs),
    the retrieval fields None unless the query sits on a key."""

    largest_weight: float  # max_j W_j (IDA) of the query
    eff_keys_ida: float  # 1 / sum_j W_j^2, IDA
    eff_keys_softmax: float  # 1 / sum_j W_j^2, softmax
    nearest_key_distance: float  # min_j d(q, k_j)
    d_min: float | None = None  # min over pairs of key distances (section 2.3)
    mean_sq_distance: float | None = None  # E d(k_i, k_j)^2 over pairs i != j
    eff_rank: float | None = None  # eff-rank of K_ij = (d_ij^2 + eps)^-1 (section 2.7)
    eff_rank_bound: float | None = None  # Theorem 3's 1 + n eps^2 / d_min^4
    degradation_index: float | None = None  # eps (n - 1) / d_min^2 (section 2.8)
    advised_eps: float | None = None  # the paper's eps = 0.01 E d^2
    max_safe_eps: float | None = None  # largest eps outside the degradation regime
    retrieval_weight: float | None = None  # W_j for q = k_j (section 2.3)
    retrieval_bound: float | None = None  # 1 / (1 + eps (n - 1) / (r_j^2 + eps))

    LABELS: ClassVar[dict[str, str]] = {
        "largest_weight": "largest IDA weight",
        "eff_keys_ida": "effective number of keys (IDA)",
        "eff_keys_softmax": "effective number of keys (softmax)",
        "nearest_key_distance": "distance to the nearest key",
        "d_min": "key separation d_min",
        "mean_sq_distance": "mean squared key distance",
        "eff_rank": "effective rank of K",
        "eff_rank_bound": "stated eff-rank bound",
        "degradation_index": "degradation index eps(n-1)/d_min^2",
        "advised_eps": "advised eps (0.01 E d^2)",
        "max_safe_eps": "largest eps outside the regime",
        "retrieval_weight": "W_j for q = k_j",
        "retrieval_bound": "bound 1/(1+eps(n-1)/(r^2+eps))",
    }


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
    if GEOMETRIES[geometry].is_embedded:  # the sphere: typed coordinates are normalised onto it
        if float(q.norm()) == 0.0:
            raise ValueError("coords must not be the zero vector on the sphere: it has no direction")
        return project(q, geometry=geometry)
    check_points("coords", q[None], geometry=geometry, c=c)
    return q


def _softmax(q: torch.Tensor, k: torch.Tensor, temperature: float) -> torch.Tensor:
    """softmax(q.k / (T sqrt d)) on the ambient coordinates, T checked by ``LabConfig``. (..., n, d), (..., m, d) -> (..., n, m)."""
    return softmax_weights(q, k, scale=1.0 / (temperature * math.sqrt(q.shape[-1])))


# --- The eps sweep the page animates ---------------------------------------------------------


@dataclass
class EpsSweep:
    """IDA weights of one query at each eps, beside the softmax weights (which do not depend on eps)."""

    eps: np.ndarray  # (E,)
    ida: np.ndarray  # (E, n)
    softmax: np.ndarray  # (n,)
    temperature: float


def check_eps_values(eps_values) -> np.ndarray:
    """A non-empty 1-D list of eps, each in ``check_eps``'s range, as a float array: checked once, by its
    smallest and largest value (NaN fails both), not value by value."""
    eps_values = np.asarray(eps_values, dtype=float)
    if eps_values.ndim != 1 or eps_values.size == 0:
        raise ValueError(f"eps_values must be a non-empty 1-D list (got shape {eps_values.shape})")
    for e in (eps_values.min(), eps_values.max()):
        check_eps(float(e), "eps_values")
    return eps_values


def _sweep(sq: torch.Tensor, eps_values: np.ndarray, soft: torch.Tensor, temperature: float) -> EpsSweep:
    """The sweep from the query's squared distances (1, n), eps_values checked (``check_eps_values``)."""
    check_finite("sq_dist", sq)  # once for the whole sweep: each eps below reuses it unchecked
    ida = torch.cat([ida_weights_from_sq(sq, eps=float(e), validate=False) for e in eps_values])  # (E, n)
    return EpsSweep(
        eps=eps_values,
        ida=ida.cpu().double().numpy(),
        softmax=soft.cpu().double().numpy(),
        temperature=float(temperature),
    )


# --- Everything the Attention lab shows for one configuration -------------------------------


@dataclass(frozen=True)
class Retrieval:
    """Exact retrieval (section 2.3) for a query placed on key j: its IDA weight beside the lemma's bound."""

    key: int  # j, 0-based
    weight: float  # W_j for q = k_j
    bound: float  # 1 / (1 + eps (n - 1) / (r_j^2 + eps)), r_j the distance from k_j to its nearest other key
    verdict: str  # HOLDS or FAILS: W_j >= bound, up to the lab's float32 rounding (RETRIEVAL_RTOL)

    @property
    def holds(self) -> bool:
        """Whether the bound holds (the verdict is HOLDS)."""
        return self.verdict == HOLDS


RETRIEVAL_RTOL = 1e-5  # the lab computes weights in float32 (7 digits): a relative 1e-5 is rounding


def retrieval_check(weight: float, bound: float, key: int) -> Retrieval:
    """Judge W_j >= 1/(1 + eps(n-1)/(r^2+eps)) for a query on key j (``verdict_inequality``, relation "ge")."""
    verdict, _ = verdict_inequality([weight], [bound], relation="ge", rtol=RETRIEVAL_RTOL)
    return Retrieval(key=key, weight=float(weight), bound=float(bound), verdict=verdict)


@dataclass
class Lab:
    """Keys, one query, both kernels' weights and the numbers that explain them (arrays on the CPU)."""

    keys: np.ndarray  # (n, d)
    query: np.ndarray  # (d,)
    ida: np.ndarray  # (1 + n, n): row 0 the query, then each key attending to all keys
    softmax: np.ndarray  # (1 + n, n)
    sq_dist: np.ndarray  # (n,) d(q, k_j)^2
    sweep: EpsSweep
    stats: AttentionStats  # separation, effective rank, degradation index, retrieval bound ...
    retrieval: Retrieval | None = None  # the exact-retrieval verdict when the query sits on a key (n >= 2)
    degraded: bool | None = None  # section 2.8: eps (n-1)/d_min^2 >= 1/2 for these keys (None: n = 1)


def attention_lab(
    config: LabConfig,
    *,
    dtype: torch.dtype | str = torch.float32,
    device: torch.device | str = "cpu",
    sweep_eps=None,
) -> Lab:
    """Draw the n keys of ``config`` from its seed, place the query, and measure everything the page draws.

    The keys are drawn and the query placed in float64 on the CPU; the weights are computed in ``dtype``
    (a torch dtype or its ``device.DTYPES`` name) on ``device``. ``sweep_eps``: the eps values of the
    sweep (default 41 from 1e-8 to 100).
    """
    geometry, n, d, eps, c = config.geometry, config.n, config.d, config.eps, config.c
    mode, j, temperature, spread = config.mode, config.j, config.temperature, config.spread
    dtype = DTYPES[dtype] if isinstance(dtype, str) else dtype
    g = torch.Generator().manual_seed(config.seed)
    keys = random_points(n, d, geometry=geometry, c=c, spread=spread, generator=g, dtype=torch.float64)
    q = place_query(keys, mode=mode, geometry=geometry, c=c, j=j, j2=config.j2, t=config.t, coords=config.coords,
                    spread=spread, generator=g)  # fmt: skip
    eps_values = check_eps_values(np.logspace(-8, 2, 41) if sweep_eps is None else sweep_eps)
    kd, qd = keys.to(device, dtype), q.to(device, dtype)
    rows = torch.cat([qd[None], kd])  # (1 + n, d)
    w_ida = ida_weights(rows, kd, eps=eps, geometry=geometry, c=c)  # (1 + n, n): the kernel, fused where it pays
    w_soft = _softmax(rows, kd, temperature)  # (1 + n, n)
    sq_q = pairwise_sq_distance(qd[None], kd, geometry=geometry, c=c)  # (1, n): once, for the bars and the sweep
    sq = sq_q[0]  # (n,)
    sweep = _sweep(sq_q, eps_values, _softmax(qd[None], kd, temperature)[0], temperature)
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
    stats = AttentionStats(**head, **pairs)
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
