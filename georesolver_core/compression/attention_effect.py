"""What key quantisation does to attention: IDA and Dense-HIDA outputs with quantised vs full keys.

Queries are noisy copies of keys, q = k_j + noise * s * g with g ~ N(0, I_d / d) and s the median
distance from a key to its nearest neighbour, so each query has a key it should retrieve. For each
bit width the keys are quantised (real packed storage) and dequantised, and the public kernel
``attention.ida(q, k, v, eps=..., geometry=...)`` runs on both key sets:

    relative output error  ||o(k_hat) - o(k)||_F / ||o(k)||_F        (per eps)
    top-1 agreement        fraction of queries whose largest weight falls on the same key

The top-1 key is the nearest key for every eps (1/(d^2 + eps) is decreasing in d), so agreement
does not depend on eps; the output error does: a small eps makes the weights nearly one-hot, and
a quantised key that loses its rank moves the whole output.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from georesolver_core.attention import ida, ida_weights
from georesolver_core.compression.methods import quantize
from georesolver_core.device import one_cpu_thread
from georesolver_core.geometry import GEOMETRIES
from georesolver_core.validate import check_eps, check_in_ball, check_positive_int

ATTENTION_GEOMETRIES = {"euclidean": "IDA (Euclidean)", "poincare": "Dense-HIDA (Poincaré ball)"}
RIM_MARGIN = 1e-6  # a dequantised key pushed past the rim goes back to norm 1 - RIM_MARGIN (float64)


@dataclass(frozen=True)
class AttentionEffect:
    """Output error and retrieval agreement of attention on quantised keys."""

    bits: list[int]
    eps: list[float]
    geometries: list[str]
    rel_error: np.ndarray  # (geometries, eps, bits) relative output error
    top1_agreement: np.ndarray  # (geometries, bits) same top-1 key as with full keys
    retrieval_full: np.ndarray  # (geometries,) top-1 = the key the query was drawn from, full keys
    retrieval: np.ndarray  # (geometries, bits) the same with quantised keys
    bytes_per_key: np.ndarray  # (bits,) measured storage
    n_moved_inside: np.ndarray  # (bits,) dequantised keys outside the ball, moved back in for Dense-HIDA


def _inside(keys: torch.Tensor, rim: float | None = 1.0) -> tuple[torch.Tensor, int]:
    """Keys at or past the rim (None: the space has none) moved radially to rim (1 - RIM_MARGIN); and how many."""
    if rim is None:
        return keys, 0
    norm = keys.norm(dim=-1, keepdim=True)
    out = norm >= rim * (1.0 - RIM_MARGIN)
    return torch.where(out, keys * (rim * (1.0 - RIM_MARGIN) / norm), keys), int(out.sum())


def attention_effect(keys: torch.Tensor, **kwargs) -> AttentionEffect:
    """Keys (m, d) inside the unit ball (the paper's 0.9 tanh form); see the module docstring and ``_effect``.

    Runs on one CPU thread: many small kernels, where a second thread only adds synchronisation.
    """
    with one_cpu_thread():
        return _effect(keys, **kwargs)


def _effect(
    keys: torch.Tensor,
    *,
    method: str = "hcc",
    bits: tuple[int, ...] = tuple(range(1, 11)),
    eps: tuple[float, ...] = (1e-3, 1e-2, 1e-1),
    geometries: tuple[str, ...] = tuple(ATTENTION_GEOMETRIES),
    n_queries: int = 64,
    noise: float = 0.5,
    seed: int = 0,
    **options,
) -> AttentionEffect:
    check_in_ball("keys", keys)
    if keys.dim() != 2 or keys.shape[0] == 0:
        raise ValueError(f"keys must have shape (m, d) with m >= 1 (got {tuple(keys.shape)})")
    check_positive_int("n_queries", n_queries, 1, 1 << 16)
    eps = tuple(check_eps(e) for e in eps)
    bad = [g for g in geometries if g not in ATTENTION_GEOMETRIES]
    if bad:
        raise ValueError(f"geometries must be among {list(ATTENTION_GEOMETRIES)} (got {bad})")
    k = keys.to(torch.float64)
    m, d = k.shape
    g = torch.Generator().manual_seed(seed)
    target = torch.randint(0, m, (n_queries,), generator=g)  # (nq,) the key each query was drawn from
    nn = torch.cdist(k, k).fill_diagonal_(float("inf")).amin(-1) if m > 1 else torch.ones(1, dtype=k.dtype)
    spread = noise * float(nn.median()) / d**0.5
    q, _ = _inside(k[target] + spread * torch.randn(n_queries, d, generator=g, dtype=torch.float64))
    v = torch.randn(m, d, generator=g, dtype=torch.float64)  # (m, dv)
    e_min = min(eps)
    full_out = {(gm, e): ida(q, k, v, eps=e, geometry=gm) for gm in geometries for e in eps}
    full_top = {gm: ida_weights(q, k, eps=e_min, geometry=gm).argmax(-1) for gm in geometries}
    rel = np.zeros((len(geometries), len(eps), len(bits)))
    agree = np.zeros((len(geometries), len(bits)))
    retr = np.zeros((len(geometries), len(bits)))
    nbytes, moved = np.zeros(len(bits)), np.zeros(len(bits), dtype=int)
    for j, b in enumerate(bits):
        ck = quantize(k, method, bits=b, **options)
        nbytes[j] = ck.nbytes / m
        k_raw = ck.dequantize()
        for a, gm in enumerate(geometries):
            kh, n_out = _inside(k_raw, GEOMETRIES[gm].rim(1.0))
            moved[j] = max(moved[j], n_out)
            for i, e in enumerate(eps):
                o, o_hat = full_out[(gm, e)], ida(q, kh, v, eps=e, geometry=gm)
                rel[a, i, j] = float((o_hat - o).norm() / o.norm())
            top = ida_weights(q, kh, eps=e_min, geometry=gm).argmax(-1)
            agree[a, j] = float((top == full_top[gm]).double().mean())
            retr[a, j] = float((top == target).double().mean())
    full_retr = np.array([float((full_top[gm] == target).double().mean()) for gm in geometries])
    return AttentionEffect(list(bits), list(eps), list(geometries), rel, agree, full_retr, retr, nbytes, moved)
