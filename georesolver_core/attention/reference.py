"""The naive inverse-distance kernel: every pairwise distance, then normalisation (paper section 11.2).

    o_i = sum_{j in R_i} n_j s_ij v_j / sum_{m in R_i} n_m s_im,    s_ij = (d(q_i, k_j)^2 + eps)^-1

O(n m) memory, exact distances by differencing (``geometry.pairwise_sq_distance``), any index set R_i
(``spec.keys``: all keys, causal, or a ``Gathered`` list turned into a dense mask) and optional
multiplicities n_j (``spec.counts``). It is the float64 reference the fused kernels are tested
against and their double backward, so it imports nothing from them.
"""

from __future__ import annotations

import math

import torch

from georesolver_core.attention.spec import CAUSAL, KernelSpec
from georesolver_core.geometry import GEOMETRIES
from georesolver_core.validate import check_eps, check_finite


def causal_mask(n: int, m: int, *, device=None) -> torch.Tensor:
    """Boolean (n, m) mask, True where key j may be seen by query i (j <= i + m - n)."""
    return CAUSAL.visible(n, m, device=device)


def inverse_sq(sq_dist: torch.Tensor, eps: float) -> torch.Tensor:
    """The kernel's score s = (d^2 + eps)^-1 (section 2.1, Lemma 5.1): the one place it is written
    for whole matrices (the fused tiles compute it in place from their own operands)."""
    return 1.0 / (sq_dist + eps)


def _weights_from_sq(sq, eps, mask=None, counts=None):
    """``ida_weights_from_sq`` without validation: the kernels' inner step."""
    a = sq + eps  # (..., n, m)
    if counts is not None:
        # A key of multiplicity 0 is absent: masked, so that it cannot set the row minimum below.
        a = a.masked_fill(counts.unsqueeze(-2) == 0, math.inf)
    if mask is not None:
        a = a.masked_fill(~mask, math.inf)
    a_min = a.amin(dim=-1, keepdim=True)  # (..., n, 1)
    a_min = torch.where(torch.isfinite(a_min), a_min, torch.ones_like(a_min)).detach()
    r = a_min / a  # (..., n, m), in (0, 1]; 0 where masked
    if counts is not None:
        r = r * counts.unsqueeze(-2).to(r.dtype)  # (..., n, m): n_j copies of key j
    return r / r.sum(dim=-1, keepdim=True).clamp_min(torch.finfo(r.dtype).tiny)


def ida_weights_from_sq(
    sq_dist: torch.Tensor,
    *,
    eps: float,
    mask: torch.Tensor | None = None,
    counts: torch.Tensor | None = None,
    validate: bool = True,
) -> torch.Tensor:
    """Normalise inverse distances: W_ij = n_j (D_ij + eps)^-1 / sum_m n_m (D_im + eps)^-1. (..., n, m) -> (..., n, m).

    ``mask`` (n, m) bool: False hides key j from query i; ``counts`` (..., m): multiplicities n_j >= 0
    (None: all ones). Written as ratios a_min / a_ij with a = D + eps (the analogue of softmax's
    max-subtraction): every term lies in (0, 1], so nothing overflows even when 1/eps would
    (eps < 1e-38 in float32). A row whose keys are all masked out gets zero weight.
    ``validate=False`` skips the checks, for a caller that made them once (one matrix under many eps).
    """
    if not validate:
        return _weights_from_sq(sq_dist, eps, mask, counts)
    eps = check_eps(eps)
    check_finite("sq_dist", sq_dist)
    if sq_dist.numel() and float(sq_dist.detach().amin()) < 0:
        raise ValueError(
            f"sq_dist must hold squared distances >= 0 (got minimum {float(sq_dist.detach().amin()):.3g})"
        )
    if counts is not None:
        _check_counts(counts, sq_dist.shape[-1])
    return _weights_from_sq(sq_dist, eps, mask, counts)


def _check_counts(counts: torch.Tensor, m: int) -> None:
    if counts.dim() < 1 or counts.shape[-1] != m:
        raise ValueError(
            f"counts must have shape (..., m) with m = number of keys = {m} (got {tuple(counts.shape)})"
        )


def _mask(spec: KernelSpec, n: int, m: int, device) -> torch.Tensor | None:
    return spec.keys.visible(n, m, device=device)


def reference_ida_weights(q: torch.Tensor, k: torch.Tensor, spec: KernelSpec) -> torch.Tensor:
    """The naive kernel's weights: exact pairwise distances by differencing, then normalisation.
    (..., n, d), (..., m, d) -> (..., n, m). Inputs are assumed validated (``attention.ida`` does it)."""
    sq = GEOMETRIES[spec.geometry].pairwise_sq_distance(q, k, spec.c)  # (..., n, m)
    mask = _mask(spec, q.shape[-2], k.shape[-2], q.device)
    counts = None if spec.counts is None else spec.counts.to(device=q.device)
    if counts is not None:
        _check_counts(counts, k.shape[-2])
    return _weights_from_sq(sq, spec.eps, mask, counts)


def reference_ida(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, spec: KernelSpec) -> torch.Tensor:
    """The naive kernel's output W v. (..., n, d), (..., m, d), (..., m, dv) -> (..., n, dv)."""
    return reference_ida_weights(q, k, spec) @ v


__all__ = ["causal_mask", "ida_weights_from_sq", "inverse_sq", "reference_ida", "reference_ida_weights"]
