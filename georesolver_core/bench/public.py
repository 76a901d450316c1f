"""The benchmark's headline table: the public entry points, each timed pair by pair against softmax.

Every row is a pair (ours, twin) on the same tensors: ``attention.ida`` (three geometries, dense or
causal) and ``attention.ida_weights`` against torch's ``scaled_dot_product_attention`` / a softmax of
the same logits shape, and ``GeoAttention`` against the same module with the softmax kernel. One
repeat runs both members of every pair back to back, in alternating order, forward + backward with a
random upstream gradient; the ratio of each repeat is ours / twin, and a row reports the median ratio
and its spread (min, max) over repeats. Machine load drifting over the run hits both members of a
pair alike, so the ratios are comparable on a noisy machine where the absolute times are not.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from georesolver_core import attention
from georesolver_core.attention.layer import AttentionConfig, GeoAttention
from georesolver_core.budget import FLOAT32, check_memory, elements
from georesolver_core.geometry import GEOMETRIES

# q, k, v, the upstream gradient and the three input gradients: what every pair keeps between its calls
LEAVES = 7


@dataclass(frozen=True)
class Pair:
    """A headline row: what it times (a public entry point) and its softmax twin."""

    label: str
    entry: str  # the public call timed, e.g. "attention.ida(geometry='poincare')"
    twin: str  # the softmax call it is timed against
    build: Callable  # (shape, eps, causal, gen, like) -> (ours, twin): closures running forward + backward
    # the peak of one forward + backward of the pair's larger member, in (B, H, T, D) and (B, H, T, T) tensors,
    # inputs and gradients included (measured on CPU, float32, T = 1024..4096, above the process's own level)
    io_tensors: float = 24
    tt_tensors: float = 0

    def call_bytes(self, batch: int, heads: int, seq_len: int, head_dim: int, itemsize: int) -> int:
        """Bytes one forward + backward of the pair holds at its peak: ``io_tensors`` (B, H, T, D) and
        ``tt_tensors`` (B, H, T, T) tensors of ``itemsize`` bytes."""
        bht = elements(batch, heads, seq_len)
        return int(itemsize * bht * (self.io_tensors * head_dim + self.tt_tensors * seq_len))


def _leaves(shape, gen, geometry=None, like=None):
    like = torch.empty(0) if like is None else like
    q, k, v, g = (torch.randn(shape, generator=gen, dtype=like.dtype).to(like.device) for _ in range(4))
    if geometry is not None:
        q, k = (GEOMETRIES[geometry].embed(t, 1.0) for t in (q, k))
    return [t.requires_grad_() for t in (q, k, v)], g


def _step(fn, leaves, g):
    def run():
        for t in leaves:
            t.grad = None
        fn(*leaves).backward(g)

    return run


def _ida_pair(geometry: str) -> Callable:
    def build(shape, eps, causal, gen, like):
        leaves, g = _leaves(shape, gen, geometry, like)

        def ours(q, k, v):
            return attention.ida(q, k, v, eps=eps, geometry=geometry, causal=causal)

        def twin(q, k, v):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

        return _step(ours, leaves, g), _step(twin, leaves, g)

    return build


def _weights_pair(shape, eps, causal, gen, like):
    (q, k, _), _ = _leaves(shape, gen, None, like)
    leaves = [q, k]
    g = torch.randn(*shape[:-1], shape[-2], generator=gen, dtype=like.dtype).to(like.device)  # (B, H, T, T)
    scale = shape[-1] ** -0.5

    def ours(q, k):
        return attention.ida_weights(q, k, eps=eps, causal=causal)

    def twin(q, k):
        logits = (q @ k.transpose(-1, -2)).mul_(scale)  # (B, H, T, T)
        if causal:
            n = logits.shape[-1]
            logits = logits.masked_fill(torch.ones(n, n, dtype=torch.bool, device=q.device).triu_(1), -math.inf)
        return torch.softmax(logits, dim=-1)

    return _step(ours, leaves, g), _step(twin, leaves, g)


def _module_pair(kernel: str) -> Callable:
    def build(shape, eps, causal, gen, like):
        B, H, T, D = shape
        cfg = AttentionConfig(d_model=H * D, n_heads=H, kernel=kernel, eps=eps, causal=causal)
        ours = GeoAttention(cfg)
        twin = GeoAttention(AttentionConfig(d_model=H * D, n_heads=H, kernel="softmax", causal=causal))
        twin.load_state_dict(ours.state_dict())
        ours, twin = ours.to(like), twin.to(like)
        x = torch.randn(B, T, H * D, generator=gen, dtype=like.dtype).to(like.device).requires_grad_()
        g = torch.randn(B, T, H * D, generator=gen, dtype=like.dtype).to(like.device)

        def step(module):
            def run():
                module.zero_grad(set_to_none=True)
                x.grad = None
                module(x).backward(g)

            return run

        return step(ours), step(twin)

    return build


HEADLINE: dict[str, Pair] = {
    "ida": Pair("IDA (Euclidean)", "attention.ida", "SDPA", _ida_pair("euclidean")),
    "hida": Pair(
        "Dense-HIDA (Poincaré ball)", "attention.ida(geometry='poincare')", "SDPA", _ida_pair("poincare")
    ),
    "sida": Pair("SIDA (sphere)", "attention.ida(geometry='sphere')", "SDPA", _ida_pair("sphere")),
    # a (B, H, T, T) output, its upstream gradient and the twin's logits
    "ida_weights": Pair(
        "IDA weights",
        "attention.ida_weights",
        "softmax(q k^T / sqrt d)",
        _weights_pair,
        io_tensors=8,
        tt_tensors=4,
    ),
    "GeoAttention": Pair(
        "GeoAttention, kernel 'ida'",
        "attention.GeoAttention",
        "GeoAttention 'softmax'",
        _module_pair("ida"),
        io_tensors=32,
    ),  # fmt: skip
}


def _timed(fn, device: str) -> float:
    if device == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    fn()
    if device == "cuda":
        torch.cuda.synchronize()
    return (time.perf_counter() - start) * 1e3


def headline_rows(seq_len: int, rows=tuple(HEADLINE), weights_max_len: int = 4096) -> list[str]:
    """The rows timed at ``seq_len``: ``ida_weights`` (a T x T output) only up to ``weights_max_len``."""
    return [r for r in rows if r != "ida_weights" or seq_len <= weights_max_len]


def headline_bytes(
    seq_len: int, rows=tuple(HEADLINE), *, batch=1, heads=4, head_dim=64, itemsize=4, weights_max_len=4096
) -> int:
    """Peak bytes of the headline at one length: every row's tensors are built before the first is timed
    (``LEAVES`` (B, H, T, D) tensors each, and the (B, H, T, T) upstream gradient of ``ida_weights``), and
    the largest pair's forward + backward runs beside them (``Pair.call_bytes``); ``GeoAttention`` adds its
    two modules' weights."""
    names = headline_rows(seq_len, rows, weights_max_len)
    if not names:
        return 0
    held = len(names) * LEAVES * itemsize * elements(batch, heads, seq_len, head_dim)
    if "ida_weights" in names:
        held += itemsize * elements(batch, heads, seq_len, seq_len)
    if "GeoAttention" in names:  # its two modules of width H * D, as GeoAttention's own check counts each
        held += 2 * 4 * FLOAT32 * 4 * elements(heads * head_dim, heads * head_dim)
    return held + max(HEADLINE[r].call_bytes(batch, heads, seq_len, head_dim, itemsize) for r in names)


def headline(
    seq_lens=(1024,),
    *,
    rows=tuple(HEADLINE),
    batch=1,
    heads=4,
    head_dim=64,
    eps=0.1,
    causal=False,
    repeats=5,
    weights_max_len=4096,
    dtype=torch.float32,
    device="cpu",
    progress=None,
) -> list[dict]:
    """Pair-by-pair ratios of the public calls to their softmax twins, forward + backward.

    Returns one record per (row, length): median times of both members, the median ratio and its
    min/max over ``repeats`` interleaved pairs. ``ida_weights`` (a T x T output) is skipped above
    ``weights_max_len``.
    """
    itemsize = torch.empty(0, dtype=dtype).element_size()
    for T in seq_lens:  # every length against the budget before the first tensor
        check_memory(
            "this headline benchmark",
            headline_bytes(T, rows, batch=batch, heads=heads, head_dim=head_dim, itemsize=itemsize,
                           weights_max_len=weights_max_len),
            seq_len=T, batch=batch, heads=heads, head_dim=head_dim,
        )  # fmt: skip
    out = []
    for T in seq_lens:
        names = headline_rows(T, rows, weights_max_len)
        gen = torch.Generator().manual_seed(T)
        like = torch.empty(0, dtype=dtype, device=device)
        steps = {r: HEADLINE[r].build((batch, heads, T, head_dim), eps, causal, gen, like) for r in names}
        for r in names:  # warm-up: one call of each member
            for fn in steps[r]:
                fn()
        times = {r: ([], []) for r in names}
        for rep in range(repeats):
            if progress:
                progress(rep / repeats, f"headline T = {T}: repeat {rep + 1} of {repeats}")
            for r in names:
                ours, twin = steps[r]
                if rep % 2:  # alternate which member runs first
                    t_twin, t_ours = _timed(twin, device), _timed(ours, device)
                else:
                    t_ours, t_twin = _timed(ours, device), _timed(twin, device)
                times[r][0].append(t_ours)
                times[r][1].append(t_twin)
        for r in names:
            ours_ms, twin_ms = times[r]
            ratios = [a / b for a, b in zip(ours_ms, twin_ms, strict=True)]
            pair = HEADLINE[r]
            out.append(
                {
                    "row": r,
                    "label": pair.label,
                    "entry": pair.entry,
                    "twin": pair.twin,
                    "seq_len": T,
                    "causal": causal,
                    "ours_ms": statistics.median(ours_ms),
                    "twin_ms": statistics.median(twin_ms),
                    "ratio": statistics.median(ratios),
                    "ratio_min": min(ratios),
                    "ratio_max": max(ratios),
                    "repeats": repeats,
                }
            )
    return out


def format_headline(records: list[dict]) -> str:
    """The headline table as text: one line per public call and length."""
    lines = [f"{'public call':<38} {'vs':<24} {'T':>6} {'ours ms':>9} {'twin ms':>9} {'ratio':>6} {'spread':>13}"]
    for r in records:
        mode = " causal" if r["causal"] else ""
        lines.append(
            f"{r['entry'] + mode:<38} {r['twin']:<24} {r['seq_len']:>6} {r['ours_ms']:>9.2f} {r['twin_ms']:>9.2f} "
            f"{r['ratio']:>6.2f} {r['ratio_min']:>6.2f}-{r['ratio_max']:<6.2f}"
        )
    return "\n".join(lines)
