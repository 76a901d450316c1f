"""Where tensors live: CUDA when a GPU is present, CPU otherwise."""

from __future__ import annotations

import contextlib
import os
import queue
import threading
from collections.abc import Iterator

import torch

DTYPES: dict[str, torch.dtype] = {"float32": torch.float32, "float64": torch.float64}


def default_device() -> torch.device:
    """The device every page and benchmark uses unless told otherwise."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def device_label(device: torch.device | None = None) -> str:
    """A human-readable name for a device, e.g. ``"CPU (2 threads)"`` or ``"CUDA: NVIDIA H200"``."""
    device = device or default_device()
    if device.type == "cuda":
        return f"CUDA: {torch.cuda.get_device_name(device)}"
    return f"CPU ({current_threads()} threads)"


# Thread counts have one owner: this module. Nothing else in the package calls torch.set_num_threads.
#
# torch.set_num_threads(n) does two things: it sets the calling thread's own OpenMP/MKL count, and it
# stores n as the count every thread created later starts with (read on that thread's first operator).
# On a server each script rerun, fragment and worker pool is a new thread, so the second effect is what
# broke it: a thread born while another was inside a one-thread block started at 1, and when it later
# saved "the count before" (1) and put it back, or sized the kernels' pool from it, that 1 became the
# count of every later thread for the life of the server.
#
# So the count new threads start with is read once, when this module is first imported, and is never
# changed by a per-thread limit: ``thread_count`` sets the calling thread's count and at once puts the
# process-wide one back (from one long-lived helper thread, which only touches its own count). Correctness
# then depends on no block's bookkeeping: overlapping, nested or interrupted blocks in any number of
# threads each only change their own thread, and restore that thread's own previous count.
# Only ``set_process_threads`` (a command line ``--threads``, a worker process, a test) changes it.
#
# One gap stays: between the two calls (a request to the helper and its answer: 0.1 ms, up to ~10 ms on a loaded
# machine) the start count is the block's. A thread whose first torch operator runs then starts at that
# count, for its whole life; with two sessions training, the next script thread of one session did (its
# sidebar said "CPU (1 threads)"). No torch API sets one thread's count alone, so the gap cannot be
# closed; instead a thread outside any block is put back to the process count wherever its count is read
# (``current_threads``: the sidebar's label on every script run, and every block's entry). Setting the
# process count is harmless to every other thread: it is the start count they should get anyway.
_PROCESS = {"threads": torch.get_num_threads()}
_LOCK = threading.Lock()
_DEPTH = threading.local()  # .n: how many ``thread_count`` blocks the calling thread is inside


def process_threads() -> int:
    """The intra-op thread count every new thread starts with (read once at import)."""
    return _PROCESS["threads"]


def set_process_threads(n: int) -> None:
    """Make ``n`` the count of the calling thread and of every thread created later. For a process that
    owns its machine (``bench --threads``, a distributed worker, a test); pages use ``thread_count``."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 1024:
        raise ValueError(f"threads must be an integer in [1, 1024] (got {n!r})")
    with _LOCK:
        _PROCESS["threads"] = n
        torch.set_num_threads(n)


def current_threads() -> int:
    """The calling thread's intra-op thread count. Outside any ``thread_count`` block that is
    ``process_threads()``: a thread that started at another thread's block limit is put back first."""
    n = torch.get_num_threads()
    if getattr(_DEPTH, "n", 0) == 0 and n != _PROCESS["threads"]:
        with _LOCK:
            torch.set_num_threads(_PROCESS["threads"])  # this thread's count; the start count it already is
        n = torch.get_num_threads()
    return n


class _Restorer:
    """One long-lived thread that puts the process-wide start count back after a per-thread change.

    torch.set_num_threads also sets the count later threads start with; undoing that takes a call from
    another thread, one that only touches its own count. A thread started per block cost a thread creation
    on every block (a fragment's training chunk, a sample) and could fail under a server's thread limit
    ("can't start new thread" inside a page); this one is started once per process (again after a fork)."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self.requests: queue.Queue[threading.Event] = queue.Queue()

    def _serve(self) -> None:
        while True:
            done = self.requests.get()
            torch.set_num_threads(_PROCESS["threads"])
            done.set()

    def restore(self) -> None:
        """The start count back to ``process_threads()``; returns when it is (the caller holds _LOCK)."""
        if self.pid != os.getpid():  # first use, or a forked child (threads do not survive a fork)
            self.requests = queue.Queue()
            threading.Thread(target=self._serve, name="thread-count", daemon=True).start()
            self.pid = os.getpid()
        done = threading.Event()
        self.requests.put(done)
        done.wait()


_RESTORER = _Restorer()


def _set_this_thread(n: int) -> None:
    with _LOCK:
        torch.set_num_threads(n)  # this thread's count, and (unwanted) the one new threads start with
        if n != _PROCESS["threads"]:
            _RESTORER.restore()


@contextlib.contextmanager
def thread_count(n: int, device: torch.device | None = None) -> Iterator[None]:
    """torch on ``n`` intra-op threads in the calling thread for the block (CPU only). Other threads and
    threads created later keep ``process_threads()``; the calling thread gets its own count back after."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 1024:
        raise ValueError(f"threads must be an integer in [1, 1024] (got {n!r})")
    if device is not None and device.type != "cpu":
        yield
        return
    before = current_threads()  # this thread's own count (the process count outside any block)
    _set_this_thread(n)
    _DEPTH.n = getattr(_DEPTH, "n", 0) + 1
    try:
        yield
    finally:
        _DEPTH.n -= 1
        _set_this_thread(before)


def one_cpu_thread(device: torch.device | None = None):
    """torch on one intra-op thread for the block (CPU only; see ``thread_count``). Also a decorator.
    For loops of tiny tensors: extra threads only add synchronisation, measured 2-10x slower with 2 on
    a busy 2-core machine."""
    return thread_count(1, device)


def single_threaded_worker() -> None:
    """Initializer of a worker thread that runs single-threaded tiles: 1 for itself, nobody else."""
    torch.get_num_threads()  # torch sets a thread's count on its first operator, once: trigger that first
    _set_this_thread(1)
    _DEPTH.n = 1  # inside a one-thread block for its whole life: ``current_threads`` leaves it at 1
