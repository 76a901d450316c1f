"""Cross-geometric maps from the Poincaré ball (storage) to the sphere (routing), paper section 8.2.

phi_A(c) = c / ||c||                                            (norm normalisation)
phi_B(c) = (2c / (1 + ||c||^2), (1 - ||c||^2) / (1 + ||c||^2))  (inverse stereographic, S^d in R^{d+1})
phi_C(c) = MLP_theta(c) / ||MLP_theta(c)||                      (learnable)
"""

from __future__ import annotations

import torch
from torch import nn

from georesolver_core.geometry._pairwise import stable_norm
from georesolver_core.validate import check_finite, check_positive_int


def norm_map(c: torch.Tensor) -> torch.Tensor:
    """phi_A: radial projection onto S^{d-1}; forgets the norm (the hierarchy level). (..., d) -> (..., d)."""
    check_finite("c", c)
    norms = c.norm(dim=-1, keepdim=True)
    if c.numel() and bool((norms == 0).any()):
        raise ValueError(
            "c must have no zero vectors: norm_map is undefined at the origin (use stereographic_map)"
        )
    return c / norms


def stereographic_map(c: torch.Tensor) -> torch.Tensor:
    """phi_B: inverse stereographic projection R^d -> S^d; keeps the norm as latitude. (..., d) -> (..., d+1).

    The origin goes to the north pole e_{d+1}, the unit sphere to the equator; a conformal bijection.
    """
    check_finite("c", c)
    r = stable_norm(c)  # (..., 1)
    far = r > 1.0
    # Inside the unit ball the formula as written; outside, in s = 1/r and the direction u = c/r, so that
    # huge c (|c|^2 overflows from 1.8e19 in float32) still lands near the south pole: 2c/(1 + r^2) =
    # 2 u s / (1 + s^2), (1 - r^2)/(1 + r^2) = (s^2 - 1)/(s^2 + 1). The double where keeps gradients finite.
    near_c = torch.where(far, torch.zeros_like(c), c)
    sq = (near_c * near_c).sum(-1, keepdim=True)  # (..., 1), <= 1
    inner = torch.cat([2.0 * near_c, 1.0 - sq], dim=-1) / (1.0 + sq)
    r_far = torch.where(far, r, torch.ones_like(r))
    s = 1.0 / r_far
    outer = torch.cat([2.0 * (c / r_far) * s, s * s - 1.0], dim=-1) / (1.0 + s * s)
    return torch.where(far, outer, inner)


class LearnableSphereMap(nn.Module):
    """phi_C: a two-layer MLP followed by normalisation onto S^{d_out - 1}."""

    def __init__(self, dim_in: int, dim_out: int | None = None, hidden: int = 32):
        super().__init__()
        check_positive_int("dim_in", dim_in, 1, 4096)
        dim_out = dim_in + 1 if dim_out is None else check_positive_int("dim_out", dim_out, 2, 4096)
        check_positive_int("hidden", hidden, 1, 4096)
        self.net = nn.Sequential(nn.Linear(dim_in, hidden), nn.Tanh(), nn.Linear(hidden, dim_out))

    def forward(self, c: torch.Tensor) -> torch.Tensor:  # (..., dim_in) -> (..., dim_out)
        h = self.net(c)
        # The clamp keeps a (measure-zero) zero output finite instead of NaN.
        return h / h.norm(dim=-1, keepdim=True).clamp_min(torch.finfo(h.dtype).tiny)
