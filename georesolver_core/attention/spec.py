"""One kernel spec for every member of the inverse-distance family (paper section 11.2).

    o_i = sum_{j in R_i} n_j s_ij v_j / sum_{m in R_i} n_m s_im,    s_ij = (d(q_i, k_j)^2 + eps)^-1

The spec says everything a kernel needs besides the tensors: the regulariser eps, the geometry
and its curvature parameter c, which keys each query sees (``keys``: the index set R_i), and
optional per-key multiplicities n_j (``counts``: a summary standing for n_j keys, as in C-HIDA).
Dense attention is ``KernelSpec(eps=...)``; causal is ``keys=CAUSAL``; FP-HIDA gives a
``Gathered`` index set; C-HIDA gives counts. Kernels take one spec instead of the same keyword
arguments repeated through every signature.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar

import torch

from georesolver_core.geometry import GEOMETRIES, check_geometry
from georesolver_core.validate import check_curvature, check_eps

T = TypeVar("T")


def served(maths: Mapping[str, object]) -> list[str]:
    """The geometries a streaming kernel serves: those whose entry's ``Geometry.tile`` names its maths in
    ``maths`` (the kernel's formulas by tile name: tile classes, score hooks, native sides)."""
    return sorted(g for g, entry in GEOMETRIES.items() if entry.tile is not None and entry.tile in maths)


def kernel_maths(kernel: str, geometry: str, maths: Mapping[str, T]) -> T:
    """The kernel's formulas for the geometry; ValueError naming both, and the geometries it serves, where
    it has none (the reference kernel, ``impl="reference"``, takes every geometry of the registry)."""
    tile = GEOMETRIES[check_geometry(geometry)].tile
    if tile is None or tile not in maths:
        raise ValueError(
            f"geometry must be one of {served(maths)} for the {kernel} kernel (got {geometry!r}: the {kernel} "
            "kernel has no tile for it); use impl='reference'"
        )
    return maths[tile]


@dataclass(frozen=True)
class AllKeys:
    """R_i = every key (dense attention)."""

    def visible(self, n: int, m: int, *, device=None) -> torch.Tensor | None:
        """Boolean (n, m) mask of the index set, or None when every key is visible."""
        return None


@dataclass(frozen=True)
class Causal:
    """R_i = keys j <= i + m - n: query i sees the keys up to its own position (aligned at the end)."""

    def visible(self, n: int, m: int, *, device=None) -> torch.Tensor | None:
        return torch.ones(n, m, dtype=torch.bool, device=device).tril(diagonal=m - n)


@dataclass(frozen=True, eq=False)
class Gathered:
    """R_i listed per query: ``index`` (n, s) long key indices, padded with -1 where |R_i| < s.

    The sparse kernels gather these keys instead of masking a dense n x m matrix; ``visible`` is
    the dense mask, for reference kernels and tests on small n only.
    """

    index: torch.Tensor  # (n, s) long, -1 = padding

    def visible(self, n: int, m: int, *, device=None) -> torch.Tensor | None:
        if self.index.shape[0] != n:
            raise ValueError(f"index must have one row per query: n = {n} (got {self.index.shape[0]} rows)")
        mask = torch.zeros(n, m + 1, dtype=torch.bool, device=device)
        idx = torch.where(self.index < 0, m, self.index).to(device)  # padding -> a spare last column
        mask.scatter_(1, idx, True)
        return mask[:, :m]


ALL_KEYS = AllKeys()
CAUSAL = Causal()


@dataclass(frozen=True, eq=False)
class KernelSpec:
    """What an inverse-distance kernel computes, besides q, k, v. Validated on construction."""

    eps: float  # regulariser of (d^2 + eps)^-1, in [EPS_MIN, EPS_MAX]
    geometry: str = "euclidean"  # key of geometry.GEOMETRIES
    c: float = 1.0  # Poincaré curvature parameter, k = -c (ignored elsewhere)
    keys: AllKeys | Causal | Gathered = ALL_KEYS  # the index set R_i
    counts: torch.Tensor | None = None  # (..., m) multiplicities n_j >= 0; None = all ones

    def __post_init__(self):
        object.__setattr__(self, "eps", check_eps(self.eps))
        check_geometry(self.geometry)
        object.__setattr__(self, "c", check_curvature(self.c))
        if self.counts is not None:
            if not isinstance(self.counts, torch.Tensor) or not bool(torch.isfinite(self.counts).all()):
                raise ValueError("counts must be a finite tensor of shape (..., m)")
            if bool((self.counts < 0).any()):
                raise ValueError("counts must be >= 0 (a multiplicity n_j counts the keys a summary stands for)")

    @property
    def causal(self) -> bool:
        return isinstance(self.keys, Causal)
