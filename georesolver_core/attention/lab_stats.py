"""The Attention lab's typed input and output: one configuration (``LabConfig``, the keywords of
``diagnostics.attention_lab``) and the numbers it prints beside the weights (sections 2.3, 2.7, 2.8)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from georesolver_core.results import Labelled


@dataclass(frozen=True)
class LabConfig:
    """Keys, query and kernels of one lab view; ``attention_lab(**asdict(config), dtype=..., device=...)``."""

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
    seed: int = 0


@dataclass(frozen=True)
class LabStats(Labelled):
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

