"""The benchmark's headline against the public calls timed as a user writes them (a measurement, not a test).

    python scripts/measure_public_calls.py [--seq-len 1024] [--repeats 15] [--causal]

In one process: first the calls as a user writes them (``attention.ida(q, k, v, eps=..., geometry=...)``
then ``.backward(g)``, and ``F.scaled_dot_product_attention`` on the same tensors), interleaved pair by
pair, alternating which member runs first; then ``bench.public.headline`` on the same shape. Prints
both ratios per geometry and their relative difference: the headline reports what users pay when the
two agree.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from georesolver_core import attention  # noqa: E402
from georesolver_core.bench.public import headline  # noqa: E402
from georesolver_core.geometry import GEOMETRIES  # noqa: E402

ROWS = {"ida": "euclidean", "hida": "poincare", "sida": "sphere"}


def user_ratios(seq_len: int, repeats: int, causal: bool, eps: float = 0.1) -> dict[str, float]:
    """Median over interleaved pairs of (public call time) / (SDPA time), forward + backward."""
    gen = torch.Generator().manual_seed(1)
    shape = (1, 4, seq_len, 64)
    v, g = torch.randn(shape, generator=gen), torch.randn(shape, generator=gen)
    out = {}
    for row, geometry in ROWS.items():
        q, k = (GEOMETRIES[geometry].embed(torch.randn(shape, generator=gen), 1.0) for _ in range(2))
        leaves = [t.clone().requires_grad_() for t in (q, k, v)]

        def ours(leaves=leaves, geometry=geometry):
            attention.ida(*leaves, eps=eps, geometry=geometry, causal=causal).backward(g)

        def sdpa(leaves=leaves):
            F.scaled_dot_product_attention(*leaves, is_causal=causal).backward(g)

        ratios = []
        for rep in range(repeats + 1):
            times = {}
            for name, fn in (("ours", ours), ("sdpa", sdpa)) if rep % 2 else (("sdpa", sdpa), ("ours", ours)):
                for t in leaves:
                    t.grad = None
                start = time.perf_counter()
                fn()
                times[name] = time.perf_counter() - start
            if rep:  # the first pair warms up
                ratios.append(times["ours"] / times["sdpa"])
        out[row] = statistics.median(ratios)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seq-len", type=int, default=1024)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--causal", action="store_true")
    args = ap.parse_args()
    user = user_ratios(args.seq_len, args.repeats, args.causal)
    bench = {
        r["row"]: r["ratio"]
        for r in headline((args.seq_len,), rows=tuple(ROWS), causal=args.causal, repeats=args.repeats)
    }
    print(
        f"T = {args.seq_len}, causal = {args.causal}, {args.repeats} interleaved pairs each, {torch.get_num_threads()} threads"
    )
    print(f"{'row':6} {'as a user calls it':>19} {'bench headline':>15} {'difference':>11}")
    for row in ROWS:
        print(f"{row:6} {user[row]:19.2f} {bench[row]:15.2f} {100 * (bench[row] / user[row] - 1):+10.1f}%")


if __name__ == "__main__":
    main()
