"""Point samplers for the three geometries: the keys and queries the attention measurements draw.

``random_points`` maps spread * N(0, I) into the geometry; ``clustered_points`` draws tight groups,
Lemma 1's low-rank/clustering assumption (section 2.4).
"""

from __future__ import annotations

import torch

from georesolver_core.geometry import check_geometry, embed
from georesolver_core.validate import check_positive_int, check_range


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
