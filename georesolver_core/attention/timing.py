"""How the benchmarks run an entry of ``attention.layer.ATTENTION``, and the cost Proposition 1 predicts.

An entry with a ``timing`` is a row of the kernel benchmark (``bench``) and of the cost-scaling sweep
(``labs.cost_scaling``): a new index set is benchmarked by giving its registry entry one.
Every runner takes q, k, v of shape (B, H, n, d), q and k points of the entry's geometry, and returns
(B, H, n, dv).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from georesolver_core.attention.c_hida import CHIDA
from georesolver_core.attention.fp_hida import fp_hida
from georesolver_core.attention.kernel import ida
from georesolver_core.attention.l_hida import l_hida
from georesolver_core.attention.reference import reference_ida
from georesolver_core.attention.spec import ALL_KEYS, CAUSAL, KernelSpec

# run(q, k, v, *, eps, causal, n_anchors, n_summaries) -> (B, H, n, dv); an entry ignores the sizes it has not
Runner = Callable[..., torch.Tensor]


@dataclass(frozen=True)
class Timing:
    """What the benchmarks need of an entry: how it is run, and Proposition 1's cost class (section 11.3)."""

    setting: str  # how it is run, shown after the entry's label ("w = g = log2 n")
    run: Runner
    exponent: float  # Proposition 1: time ~ n^exponent (per token where ``per_token``)
    log_factor: bool = False  # the cost is n log n: its predicted slope is n log n's local one
    per_token: bool = False  # judged per token (a streaming kernel: the cost of one step stays flat)
    naive: Runner | None = None  # the n x n reference of a dense entry, timed as the row "<key>-naive"
    sweep: bool = True  # in the cost-scaling sweep by default (the HIDA family of Proposition 1)
    # The speed target, forward + backward at ``bench.report.TARGET_SEQ_LEN``: time <= target_ratio x SDPA
    # (the public call's headline row; the kernel row where a report has none). None: no target.
    target_ratio: float | None = None


def dense_timing(geometry: str, *, sweep: bool = False, target_ratio: float | None = None) -> Timing:
    """A dense inverse-distance entry: the fused streaming kernel, and the naive n x n reference beside it."""

    def run(q, k, v, *, eps, causal=False, **sizes):
        return ida(q, k, v, eps=eps, geometry=geometry, causal=causal, impl="fused")

    def naive(q, k, v, *, eps, causal=False, **sizes):  # Theta(n^2) without the fused kernel's fixed costs
        return reference_ida(q, k, v, KernelSpec(eps, geometry, keys=CAUSAL if causal else ALL_KEYS))

    return Timing("fused", run, 2.0, naive=naive, sweep=sweep, target_ratio=target_ratio)


def _fp_run(q, k, v, *, eps, causal=False, **sizes):
    return fp_hida(q, k, v, eps=eps, causal=causal)


def _l_run(q, k, v, *, eps, causal=False, n_anchors=16, **sizes):
    # fixed anchors, every (n/m)-th key (k-means initialisation is not what is timed)
    anchors = k.detach()[..., :: max(1, k.shape[-2] // n_anchors), :][..., :n_anchors, :]
    return l_hida(q, k, v, anchors, eps=eps, causal=causal)


def _c_run(q, k, v, *, eps, causal=True, n_summaries=16, **sizes):
    shape = q.shape
    flat = [t.reshape(-1, shape[-2], t.shape[-1]) for t in (q, k, v)]  # (B H, n, .)
    return CHIDA(n_summaries, shape[-1], eps=eps)(*flat).view(*shape[:-1], v.shape[-1])


FP_TIMING = Timing("w = g = log2 n", _fp_run, 1.0, log_factor=True)
L_TIMING = Timing("16 anchors", _l_run, 1.0)
C_TIMING = Timing("16 summaries, causal", _c_run, 0.0, per_token=True)  # causal whatever ``causal`` says
