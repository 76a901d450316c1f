"""The Python tile kernel's scheduler: worker threads, head chunks, task order, tile buffers.

``fused_ida`` runs the compiled kernel where a C++ compiler is present; these laws are about the tile
scheduler that serves it otherwise (and key multiplicities, and the weight matrix), so every test here
runs with ``GR_COMPILED=0``.
"""

import threading

import pytest
import torch

from georesolver_core.attention.fused import fused_ida
from georesolver_core.attention.fused_schedule import (
    BLOCK_K,
    BLOCK_Q,
    BLOCK_Q_CAUSAL,
    OPERAND_ELEMENTS,
    Schedule,
    _pool,
)
from georesolver_core.attention.spec import ALL_KEYS, CAUSAL, KernelSpec
from georesolver_core.device import set_process_threads, thread_count
from tests.test_fused import grads, qkv, rel, spec


@pytest.fixture(autouse=True)
def python_tiles(monkeypatch):
    monkeypatch.setenv("GR_COMPILED", "0")


@pytest.mark.parametrize(
    "heads,n,block_q",
    [(1, 100, 16), (40, 64, 256)],  # one long head in many query blocks; many short heads in one block each
)
def test_worker_threads_agree_with_one_thread(heads, n, block_q):
    q, k, v = qkv("poincare", n=n, m=n, d=4, heads=heads)
    gout = torch.randn(heads, n, 3, dtype=torch.float64)
    f = lambda a, b, c: fused_ida(a, b, c, spec(eps=1e-3, geometry="poincare", causal=True), block_q=block_q)  # noqa: E731
    threads = torch.get_num_threads()
    try:
        set_process_threads(1)
        one = grads(f, (q, k, v), gout)
        set_process_threads(3)
        many = grads(f, (q, k, v), gout)
    finally:
        set_process_threads(threads)
    for a, b in zip(many, one, strict=True):
        assert rel(a, b) < 1e-12


def _traced_schedule(heads, n, workers, in_flight):
    sched = Schedule(torch.zeros(heads, n, 4), n, n, 16, 16, ALL_KEYS)
    sched.workers, sched.in_flight = workers, in_flight
    sched.chunks = [slice(h, min(heads, h + 5)) for h in range(0, heads, 5)]  # several chunks of 5 heads
    log, lock = [], threading.Lock()

    def setup(hs):
        with lock:
            log.append(("setup", hs.start, None))
        return hs.start

    def task(hs, state, ib, ws, private):
        assert state == hs.start
        private[ib] = True
        with lock:
            log.append(("task", hs.start, ib))

    def finish(hs, state, privates):
        blocks = sorted(ib for p in privates for ib in p)
        with lock:
            log.append(("finish", hs.start, tuple(blocks)))

    return sched, setup, task, finish, log


@pytest.mark.parametrize("workers,in_flight", [(1, 1), (3, 1), (3, 100)])
def test_schedule_runs_every_task_once_and_finishes_each_chunk_after_its_tasks(workers, in_flight):
    sched, setup, task, finish, log = _traced_schedule(heads=40, n=64, workers=workers, in_flight=in_flight)
    sched.run(setup, task, finish)
    chunks = [hs.start for hs in sched.chunks]
    rows = list(range(len(sched.tiling.rows)))
    assert sorted(e[1:] for e in log if e[0] == "task") == sorted((c, ib) for c in chunks for ib in rows)
    for c in chunks:
        events = [i for i, e in enumerate(log) if e[1] == c]
        kinds = [log[i][0] for i in events]
        assert kinds[0] == "setup" and kinds[-1] == "finish" and kinds.count("finish") == 1
        assert log[events[-1]][2] == tuple(rows)  # finish saw every worker's private sums
    if in_flight == 1:  # a chunk is set up only once the one before it is finished
        order = [(e[0], e[1]) for e in log if e[0] in ("setup", "finish")]
        assert order == [(kind, c) for c in chunks for kind in ("setup", "finish")]


@pytest.mark.parametrize("T,keys", [(1024, ALL_KEYS), (4096, CAUSAL), (4096, ALL_KEYS), (16384, CAUSAL)])
def test_every_worker_can_have_a_head_chunk_in_flight(T, keys):
    """Chunks are sized so that one per worker fits under the operand cap where one head allows it
    (with one chunk in flight the other workers wait at every chunk boundary)."""
    with thread_count(2):
        sched = Schedule(torch.zeros(4, T, 64), T, T, BLOCK_Q_CAUSAL if keys is CAUSAL else BLOCK_Q, BLOCK_K, keys)
    heads = sched.chunks[0].stop - sched.chunks[0].start
    assert sched.workers == 2 and sum(c.stop - c.start for c in sched.chunks) == 4
    assert sched.in_flight >= 2 or heads == 1
    assert sched.in_flight * 8 * heads * 2 * T * 66 <= OPERAND_ELEMENTS or sched.in_flight == 1


def test_schedule_error_in_a_worker_reaches_the_caller_and_the_pool_survives():
    sched, setup, task, finish, _ = _traced_schedule(heads=8, n=64, workers=2, in_flight=1)

    def failing(hs, state, ib, ws, private):
        if hs.start == 5 and ib == 2:
            raise ValueError("tile failed")
        task(hs, state, ib, ws, private)

    with pytest.raises(ValueError, match="tile failed"):
        sched.run(setup, failing, finish)
    sched.run(setup, task, finish)  # the worker threads are free again


def test_worker_pool_leaves_the_thread_count_of_new_threads_alone():
    """A count of 1 in the kernels' workers must not make later threads single-threaded."""
    threads = torch.get_num_threads()
    try:
        set_process_threads(5)  # a pool size no other test uses: this call creates it
        q, k, v = qkv("euclidean", n=64, m=64, d=4, heads=8)
        fused_ida(q, k, v, spec(eps=0.1), block_q=16)
        seen = []
        worker = threading.Thread(target=lambda: seen.append(torch.get_num_threads()))
        worker.start()
        worker.join()
        assert seen == [5]
        # ... while the kernels' own workers stay single-threaded, also after the count was put back
        assert set(_pool(5).map(lambda _: (torch.ones(1) + 1, torch.get_num_threads())[1], range(20))) == {1}
    finally:
        set_process_threads(threads)


def test_tile_buffers_are_kept_from_call_to_call_without_keeping_inputs():
    """Each thread keeps one workspace per dtype and device: a second call finds its tile buffers warm
    (no fresh pages to fault in), and the workspace does not keep the first call's tensors alive."""
    import gc
    import weakref

    from georesolver_core.attention.fused_geometry import thread_workspace
    from georesolver_core.device import one_cpu_thread

    with one_cpu_thread():  # one thread: the tiles run in this thread, with this thread's workspace
        q, k, v = (torch.randn(2, 128, 8) for _ in range(3))
        fused_ida(q, k, v, KernelSpec(0.1, "euclidean"), block_q=64, block_k=64)
        ws = thread_workspace(q)
        ptrs = {name: buf.data_ptr() for name, buf in ws.bufs.items()}
        assert ptrs, "the call used this thread's workspace"
        q2 = torch.randn(2, 128, 8)
        fused_ida(q2, k, v, KernelSpec(0.1, "euclidean"), block_q=64, block_k=64)
        assert thread_workspace(q2) is ws and {n: b.data_ptr() for n, b in ws.bufs.items()} == ptrs
        assert thread_workspace(q.double()) is not ws  # one per dtype
        ref = weakref.ref(q)
        del q
        gc.collect()
        assert ref() is None


@pytest.mark.parametrize(
    ("n_chunks", "rows", "workers", "in_flight"),
    [(4, [0, 1], 2, 8), (5, [2, 0, 1], 2, 8), (3, [0, 1], 4, 2), (4, [1, 0], 1, 8)],
)
def test_task_order_takes_every_task_once_each_chunk_first_by_its_first_block(n_chunks, rows, workers, in_flight):
    from georesolver_core.attention.fused_schedule import _task_order

    order = _task_order(n_chunks, rows, workers, in_flight)
    assert sorted(order) == sorted((c, ib) for c in range(n_chunks) for ib in rows)
    for c in range(n_chunks):  # a chunk is set up by the task of its first block, which comes first
        mine = [ib for cc, ib in order if cc == c]
        assert mine == list(rows)
    if 1 < workers <= in_flight:  # the first tasks set up ``workers`` different chunks at once
        assert len({c for c, _ in order[:workers]}) == min(workers, n_chunks)
    else:
        assert [c for c, _ in order] == sorted(c for c, _ in order)  # chunk by chunk
