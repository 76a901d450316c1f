"""How the streaming kernels split their work: tiles, head chunks, and CPU worker threads.

On CPU the tiles run single-threaded in a small pool of worker threads (torch releases the GIL inside
its operators), one worker per intra-op thread, the way torch's own fused attention parallelises
over heads and query blocks. The alternative, every small tile operator spreading over all cores,
pays one thread barrier per operator: measured 3-10x slower than SDPA on a loaded 2-core machine,
where each barrier can wait a scheduler time slice. On CUDA everything runs in the calling thread.

The work of one call is a list of tasks, one per (head chunk, query block), that the workers pull
one at a time: a worker slowed down (another process, or the caller's OpenMP thread spinning for
some milliseconds after the caller's last parallel operator) simply takes fewer tasks. A chunk's
operands are built by the first worker to reach it and its key-side sums are added up by the worker
that finishes its last task. The calling thread runs no tensor operator while the workers run: each
one it ran would start its OpenMP team and leave a thread spinning against the workers (measured:
a 2-thread parallel fill costs about 10 ms of a core afterwards).

Chunks in flight at once are bounded so that their O(T d) operands stay under ``OPERAND_ELEMENTS``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import torch

from georesolver_core.attention.fused_geometry import thread_workspace
from georesolver_core.attention.spec import AllKeys, Causal
from georesolver_core.device import single_threaded_worker

# Tile shape, tuned with `python -m georesolver_core bench` on a 2-core CPU at T = 1024: 512 x 256
# measured 1.23-1.26x SDPA forward+backward, 256 x 512 1.35-1.37x, 256 x 256 1.30-1.31x, 512 x 512 1.22-1.29x.
BLOCK_Q = 512  # query rows per tile
BLOCK_K = 256  # key columns per tile
# Causal: smaller query blocks leave fewer masked pairs inside the computed tiles (at T = 1024, 256 x 256
# tiles compute 62.5% of the pairs, 512 x 256 ones 75%); measured 0.60x vs 0.76x causal SDPA, interleaved.
BLOCK_Q_CAUSAL = 256
TILE_ELEMENTS = 1 << 17  # numbers per tile over the heads of a chunk: bounds the tile buffers
OPERAND_ELEMENTS = 1 << 24  # numbers in the per-chunk O(T d) operands (matmul-ready copies of q, k)

_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


class Tiling:
    """Query blocks x key blocks, and the tiles a causal index set leaves (with their tril offsets)."""

    def __init__(self, n: int, m: int, bq: int, bk: int, keys: AllKeys | Causal):
        causal = isinstance(keys, Causal)
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


def head_chunks(H: int, n: int, m: int, d: int, bq: int, bk: int, workers: int = 1) -> list[slice]:
    """Slices of heads processed together: a tile over them has <= TILE_ELEMENTS numbers, and the
    O(T d) operands (about 8 copies of (n + m) x (d + 2) per head) of ``workers`` chunks stay under
    OPERAND_ELEMENTS together, so that every worker can have a chunk in flight.

    With one chunk in flight, a chunk's last tasks, its finish and the next chunk's setup run on one
    worker while the others wait. Of T <= 4096 at B H = 4, D = 64, only causal T = 4096 (two heads
    per chunk) hit that; there one head per chunk cut the two workers' waiting from 1.8% to 0.7% of
    their time (median of 5 calls, load ~16 on 2 cores)."""
    by_tile = TILE_ELEMENTS // (min(n, bq) * min(m, bk))
    by_operands = OPERAND_ELEMENTS // (8 * (n + m) * (d + 2) * max(1, workers))
    hc = max(1, min(by_tile, by_operands))
    return [slice(h0, min(H, h0 + hc)) for h0 in range(0, H, hc)]


def _pool(workers: int) -> ThreadPoolExecutor:
    with _POOLS_LOCK:
        if workers not in _POOLS:
            pool = ThreadPoolExecutor(workers, "fused-ida", initializer=single_threaded_worker)
            # Start every worker now and wait for their initialisers: a worker that set its count lazily,
            # later, would briefly change the count that threads born meanwhile start with.
            started = threading.Barrier(workers)
            for f in [pool.submit(started.wait) for _ in range(workers)]:
                f.result()
            _POOLS[workers] = pool
        return _POOLS[workers]


def single_threaded(fn: Callable):
    """``fn()`` on one of the pool's single-threaded workers (CPU, more than one intra-op thread).

    For the small reductions of input validation: in the calling thread each would start its OpenMP
    team, whose spinning threads then compete with the kernel's workers (module doc), and on an
    oversubscribed machine a team's barrier can wait a scheduler time slice. Exceptions propagate.
    """
    workers = torch.get_num_threads()
    if workers <= 1 or threading.current_thread().name.startswith("fused-ida"):
        return fn()
    return _pool(workers).submit(fn).result()


class Schedule:
    """The tiling of one call and how its (head chunk, query block) tasks are spread over worker threads."""

    def __init__(self, q: torch.Tensor, n: int, m: int, bq: int, bk: int, keys: AllKeys | Causal):
        self.like = q
        self.tiling = Tiling(n, m, bq, bk, keys)
        self.workers = max(1, torch.get_num_threads()) if q.device.type == "cpu" else 1
        self.chunks = head_chunks(q.shape[0], n, m, q.shape[-1], bq, bk, self.workers)
        per_chunk = 8 * min(q.shape[0], self.chunks[0].stop) * (n + m) * (q.shape[-1] + 2)
        self.in_flight = max(1, OPERAND_ELEMENTS // per_chunk)  # head chunks set up at once
        # Longest rows first (they differ under a causal mask), so that the last tasks are short ones.
        rows = range(len(self.tiling.rows))
        self.row_order = sorted(rows, key=lambda ib: -len(self.tiling.row_tiles[ib]))

    def run(self, setup: Callable, task: Callable, finish: Callable | None = None) -> None:
        """For every head chunk ``hs``: ``state = setup(hs)``; ``task(hs, state, ib, ws, private)`` for
        every query block ib; then ``finish(hs, state, privates)``. ``ws`` is the calling worker's
        ``Workspace`` and ``private`` its own dict for this chunk (key-side partial sums); ``finish``
        gets the non-empty ones of every worker."""
        if self.workers == 1 or threading.current_thread().name.startswith("fused-ida"):
            ws = thread_workspace(self.like)
            for hs in self.chunks:
                state, private = setup(hs), {}
                for ib in self.row_order:
                    task(hs, state, ib, ws, private)
                if finish is not None:
                    finish(hs, state, [private] if private else [])
            return
        queue = _TaskQueue(self, setup, task, finish)
        for future in [_pool(self.workers).submit(queue.work, w) for w in range(self.workers)]:
            future.result()
        if queue.error is not None:
            raise queue.error


def _task_order(n_chunks: int, row_order, workers: int, in_flight: int) -> list[tuple[int, int]]:
    """(chunk, query block) in the order the workers take them. Chunk by chunk, a chunk's first task sets
    it up while the worker that took its second waits; so chunks go in groups of ``workers``, their
    tasks interleaved (c0 b0, c1 b0, c0 b1, c1 b1, ...), and the workers set up a group's chunks at once.
    Every chunk's first task (its block ``row_order[0]``) still comes before its others. Forward + backward
    at T = 1024, B H = 4, two workers, new / old order, median of 20 interleaved pairs: 0.97 (IDA),
    0.95 (causal IDA), 0.93 (Dense-HIDA)."""
    group = workers if 1 < workers <= in_flight else 1
    order = []
    for g0 in range(0, n_chunks, group):
        chunks = range(g0, min(n_chunks, g0 + group))
        order += [(c, ib) for ib in row_order for c in chunks]
    return order


class _TaskQueue:
    """The shared state of one multi-worker ``Schedule.run``: the next task, chunk setup and completion."""

    def __init__(self, sched: Schedule, setup: Callable, task: Callable, finish: Callable | None):
        self.sched, self.setup, self.task, self.finish = sched, setup, task, finish
        n_chunks = len(sched.chunks)
        self.tasks = _task_order(n_chunks, sched.row_order, sched.workers, sched.in_flight)
        self.next = 0
        self.states: list = [None] * n_chunks
        self.ready = [False] * n_chunks
        self.left = [len(sched.row_order)] * n_chunks
        self.privates: list[dict[int, dict]] = [{} for _ in range(n_chunks)]  # per chunk: worker -> its sums
        self.done = [False] * n_chunks
        self.low = 0  # the first chunk not done: chunks low .. low + in_flight - 1 may be in flight
        self.error: BaseException | None = None
        self.inference = torch.is_inference_mode_enabled()  # the caller's mode, for the workers
        self.cond = threading.Condition()

    def _take(self) -> tuple[int, int] | None:
        """The next (chunk, query block), waiting while its chunk would exceed the cap; None at the end."""
        with self.cond:
            while self.error is None and self.next < len(self.tasks):
                c, ib = self.tasks[self.next]
                if c < self.low + self.sched.in_flight:
                    self.next += 1
                    return c, ib
                self.cond.wait()
            return None

    def _state(self, c: int, ib: int, worker: int):
        """The chunk's state (set up here by its first task, awaited by the others) and this worker's sums."""
        if ib == self.sched.row_order[0]:  # tasks are taken in order: this is the chunk's first
            state = self.setup(self.sched.chunks[c])
            with self.cond:
                self.states[c], self.ready[c] = state, True
                self.cond.notify_all()
        with self.cond:
            while not self.ready[c] and self.error is None:
                self.cond.wait()
            if self.error is not None:
                return None
            return self.states[c], self.privates[c].setdefault(worker, {})

    def _complete(self, c: int) -> None:
        """One task of chunk c is done; the chunk's last one adds up the workers' sums and frees the chunk."""
        with self.cond:
            self.left[c] -= 1
            if self.left[c]:
                return
        if self.finish is not None:
            self.finish(self.sched.chunks[c], self.states[c], [p for p in self.privates[c].values() if p])
        with self.cond:
            self.states[c], self.privates[c], self.done[c] = None, {}, True  # the chunk's buffers go now
            while self.low < len(self.done) and self.done[self.low]:
                self.low += 1
            self.cond.notify_all()

    def work(self, worker: int) -> None:
        # Grad and inference mode are per thread: the workers build no graph, and under the caller's
        # inference mode they must run in it too (tensors it created may only be updated there).
        with torch.inference_mode(self.inference), torch.no_grad():
            self._work(worker)

    def _work(self, worker: int) -> None:
        ws = thread_workspace(self.sched.like)
        try:
            while (item := self._take()) is not None:
                c, ib = item
                got = self._state(c, ib, worker)
                if got is None:
                    return
                self.task(self.sched.chunks[c], got[0], ib, ws, got[1])
                self._complete(c)
        except BaseException as err:  # noqa: BLE001 - re-raised in the calling thread
            with self.cond:
                self.error = self.error or err
                self.cond.notify_all()
