"""Counted cost of the HIDA family (Proposition 1, section 11.3): arithmetic operations, not wall-clock time.

``count_ops(fn, *args)`` runs ``fn`` under a torch dispatch mode and counts, for every aten operation
it executes: the floating-point operations of matrix products (torch's own FLOP formulas: 2 m n k
for an (m, k) x (k, n) product) and one operation per output element for everything else
(elementwise arithmetic, reductions, gathers); views and metadata cost nothing. The count is a
property of the algorithm and the shapes, identical on a loaded and an idle machine, so a cost
class is judged on it (the verdict rule in ``georesolver_core.verdicts``).

``counted_scaling`` counts the forward pass of each kernel of ``labs.cost_scaling`` at each length
(per token for C-HIDA) and fits log-log slopes.
"""

from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import flop_registry

from georesolver_core.labs.cost_scaling import (
    _geometry,
    _inputs,
    _runner,
    _timing,
    fitted_slope,
    per_token,
    scaling_kernels,
)

__all__ = ["count_ops", "counted_scaling"]

_FREE = {"view", "_unsafe_view", "expand", "permute", "transpose", "t", "unsqueeze", "squeeze", "reshape",
         "as_strided", "alias", "detach", "slice", "select", "split", "unbind", "empty", "empty_like",
         "empty_strided", "lift_fresh", "_to_copy", "clone", "copy_", "zeros", "ones", "zeros_like",
         "ones_like", "full", "full_like", "arange", "new_empty", "new_zeros", "new_full", "fill_"}  # fmt: skip


class _Counter(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        packet = func.overloadpacket
        if packet in flop_registry:
            self.ops += int(flop_registry[packet](*args, **kwargs, out_val=out))
        elif packet.__name__.rstrip("_") not in _FREE and packet.__name__ not in _FREE:
            outs = out if isinstance(out, (tuple, list)) else (out,)
            self.ops += sum(t.numel() for t in outs if isinstance(t, torch.Tensor))
        return out


def count_ops(fn, *args, **kwargs) -> int:
    """Operations counted in ``fn(*args, **kwargs)``: matmul FLOPs plus one per output element."""
    with torch.no_grad(), _Counter() as counter:
        fn(*args, **kwargs)
    return counter.ops


def counted_scaling(
    lens=(256, 512, 1024, 2048),
    kernels=("hida-naive", "fp-hida", "l-hida", "c-hida"),
    *,
    head_dim: int = 16,
    eps: float = 0.1,
    n_anchors: int = 16,
    n_summaries: int = 16,
    max_len: dict | None = None,
) -> dict:
    """Operations of each kernel's forward pass at each length n, and their fitted exponents in n.

    C-HIDA's series is operations per token (Proposition 1 puts its exponent at 0). ``max_len`` caps a
    kernel's lengths (C-HIDA streams token by token, so counting it is slow); skipped points are None.
    Returns {"lens", "ops": {kernel: [..]}, "series": {kernel: [..]}, "slopes", "predicted"}.
    """
    unknown = [k for k in kernels if k not in scaling_kernels()]
    if unknown or not kernels:
        raise ValueError(f"kernels must be a non-empty subset of {list(scaling_kernels())} (got {list(kernels)})")
    lens = sorted(int(n) for n in lens)
    ops, series, slopes, predicted = {}, {}, {}, {}
    for kern in kernels:
        ops[kern] = []
        for n in lens:
            if n > (max_len or {}).get(kern, n):
                ops[kern].append(None)
                continue
            q, k, v = (
                t.detach() for t in _inputs(1, 1, n, head_dim, torch.float32, "cpu", geometry=_geometry(kern))
            )
            ops[kern].append(count_ops(_runner(kern, eps, n_anchors, n_summaries), q, k, v))
        per_token_ops = [None if o is None else o / n for o, n in zip(ops[kern], lens, strict=True)]
        series[kern] = per_token_ops if per_token(kern) else ops[kern]
        slopes[kern] = fitted_slope(lens, series[kern])
        predicted[kern] = _timing(kern).exponent
    return {"lens": lens, "ops": ops, "series": series, "slopes": slopes, "predicted": predicted}
