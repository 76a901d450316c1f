"""How the streaming kernels split their work: tiles, head chunks, and CPU worker threads.

On CPU the tiles run single-threaded in a small pool of worker threads (torch releases the GIL inside
its operators), one worker per intra-op thread, the way torch's own fused attention parallelises
over heads and query blocks. The alternative, every small tile operator spreading over all cores,
pays one thread barrier per operator: measured 3-10x slower than SDPA on a loaded 2-core machine,
where each barrier can wait a scheduler time slice. On CUDA everything runs in the calling thread.

Two layouts, chosen per call:
  * at least as many head chunks as workers: whole head chunks in parallel, one per task;
  * fewer (one long head, say), or chunks too long to hold one per worker: head chunks one after
    another, the query blocks of a chunk split round-robin over the workers, which share the chunk's
    operands and add up their key-side sums.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import torch

BLOCK_Q = 256  # query rows per tile (tuned on a 2-core CPU, see bench.py)
BLOCK_K = 512  # key columns per tile
TILE_ELEMENTS = 1 << 17  # numbers per tile over the heads of a chunk: bounds the tile buffers
OPERAND_ELEMENTS = 1 << 24  # numbers in the per-chunk O(T d) operands (matmul-ready copies of q, k)

_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


class Tiling:
    """Query blocks x key blocks, and the tiles a causal mask leaves (with their tril offsets)."""

    def __init__(self, n: int, m: int, bq: int, bk: int, causal: bool):
        self.rows = [(a, min(n, a + bq)) for a in range(0, n, bq)]
        self.cols = [(a, min(m, a + bk)) for a in range(0, m, bk)]
        off = m - n  # query i sees keys j <= i + off
        self.row_tiles: list[list[tuple[int, int | None]]] = []  # per query block: (key block, diag)
        for i0, i1 in self.rows:
            row = []
            for jb, (j0, j1) in enumerate(self.cols):
                if causal and j0 > i1 - 1 + off:
                    break
                row.append((jb, i0 + off - j0 if causal and j1 - 1 > i0 + off else None))
            self.row_tiles.append(row)


def head_chunks(H: int, n: int, m: int, d: int, bq: int, bk: int) -> list[slice]:
    """Slices of heads processed together: a tile over them has <= TILE_ELEMENTS numbers, and their
    O(T d) operands (about 8 copies of (n + m) x (d + 2)) stay under OPERAND_ELEMENTS."""
    by_tile = TILE_ELEMENTS // (min(n, bq) * min(m, bk))
    by_operands = OPERAND_ELEMENTS // (8 * (n + m) * (d + 2))
    hc = max(1, min(by_tile, by_operands))
    return [slice(h0, min(H, h0 + hc)) for h0 in range(0, H, hc)]


def _single_threaded() -> None:
    # Thread-local in torch: the OpenMP and MKL thread counts of the caller are untouched.
    torch.set_num_threads(1)


def _pool(workers: int) -> ThreadPoolExecutor:
    with _POOLS_LOCK:
        if workers not in _POOLS:
            _POOLS[workers] = ThreadPoolExecutor(workers, "fused-ida", initializer=_single_threaded)
        return _POOLS[workers]


def _no_grad(fn: Callable) -> Callable:
    def run(item):
        with torch.no_grad():  # grad mode is per thread; the kernels build no graph
            return fn(item)

    return run


class Schedule:
    """The tiling of one call and how its tiles are spread over worker threads."""

    def __init__(self, q: torch.Tensor, n: int, m: int, bq: int, bk: int, causal: bool):
        self.tiling = Tiling(n, m, bq, bk, causal)
        self.chunks = head_chunks(q.shape[0], n, m, q.shape[-1], bq, bk)
        self.workers = max(1, torch.get_num_threads()) if q.device.type == "cpu" else 1
        # Heads across workers first (independent tasks, nothing to reduce); query blocks when there
        # are fewer head chunks than workers, or when one chunk's operands per worker would not fit.
        per_chunk = 8 * min(q.shape[0], self.chunks[0].stop) * (n + m) * (q.shape[-1] + 2)
        crowded = len(self.chunks) < self.workers or self.workers * per_chunk > OPERAND_ELEMENTS
        self.row_parallel = self.workers > 1 and crowded and len(self.tiling.rows) >= self.workers

    def map(self, fn: Callable, items: Sequence) -> list:
        """fn over items, in the worker threads when there is more than one item and one worker."""
        if self.workers == 1 or len(items) <= 1 or threading.current_thread().name.startswith("fused-ida"):
            return [fn(item) for item in items]
        return list(_pool(self.workers).map(_no_grad(fn), items))

    def run(self, chunk_fn: Callable[[slice, list[list[int]]], None]) -> None:
        """chunk_fn(heads, row_groups) for every head chunk; row_groups split the query blocks."""
        n_rows = len(self.tiling.rows)
        if self.row_parallel:
            # Round-robin, so that under a causal mask every worker gets short and long rows alike.
            groups = [list(range(g, n_rows, self.workers)) for g in range(self.workers)]
            for hs in self.chunks:
                chunk_fn(hs, groups)
        else:
            self.map(lambda hs: chunk_fn(hs, [list(range(n_rows))]), self.chunks)
