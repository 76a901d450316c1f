"""Peak memory of one call: what the kernel benchmark and the cost-scaling lab report beside each time
(see ``MEMORY_METHOD``). A leaf module: the benchmark imports the labs, and the labs import this."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import os
import sys
from collections.abc import Callable

import torch

MEMORY_METHOD = {
    "rss": "process resident-set high-water mark (Linux /proc: VmHWM reset through clear_refs) above the "
    "resident size at the start of one forward+backward call, with glibc's mmap threshold lowered to "
    "64 KB during the call so that freed tensors go back to the OS. Counts every thread (the fused "
    "kernels' workers too) and everything resident: outputs, gradients, temporaries, BLAS scratch; "
    "precise to a few hundred KB (the kernel batches per-thread resident-size counters).",
    "profiler": "torch.profiler (profile_memory=True): running sum of the CPU allocator's allocation and "
    "free events of the calling thread during one forward+backward call (worker threads not seen).",
    "cuda": "torch.cuda.max_memory_allocated() minus memory_allocated() before one forward+backward call.",
}


@contextlib.contextmanager
def _quiet_stderr():
    """Silence file descriptor 2 (C-level writes included) for the duration of the block."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def memory_method(device: str) -> str:
    """Which of MEMORY_METHOD ``peak_memory_mb`` uses here."""
    if device == "cuda":
        return "cuda"
    return "rss" if _libc() is not None and os.path.exists("/proc/self/clear_refs") else "profiler"


def peak_memory_mb(fn: Callable[[], None], device: str) -> float | None:
    """Peak memory (MB) while fn runs, above the level at its start; see ``MEMORY_METHOD``."""
    method = memory_method(device)
    if method == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        fn()
        torch.cuda.synchronize()
        return (torch.cuda.max_memory_allocated() - base) / 2**20
    if method == "rss":
        return _peak_rss_mb(fn)
    return _peak_profiler_mb(fn)


@functools.lru_cache(maxsize=1)
def _libc():
    try:
        libc = ctypes.CDLL("libc.so.6")
        return libc if hasattr(libc, "mallopt") else None
    except OSError:  # not glibc
        return None


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def _proc_status_bytes(key: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    raise OSError(f"/proc/self/status has no {key}")


def _peak_rss_mb(fn: Callable[[], None]) -> float:
    libc = _libc()
    gc.collect()
    libc.mallopt(_M_MMAP_THRESHOLD, 1 << 16)  # every tensor >= 64 KB is its own mapping: free returns it
    libc.mallopt(_M_TRIM_THRESHOLD, 1 << 16)
    libc.malloc_trim(0)
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets the high-water mark VmHWM to the current resident size
        base = _proc_status_bytes("VmRSS:")
        fn()
        # Linux batches per-thread RSS counters (tens of pages), so tiny peaks can read slightly below 0.
        return max(0.0, (_proc_status_bytes("VmHWM:") - base) / 2**20)
    finally:
        # glibc's own thresholds once its dynamic mmap threshold has grown to the maximum (64-bit)
        libc.mallopt(_M_MMAP_THRESHOLD, 32 << 20)
        libc.mallopt(_M_TRIM_THRESHOLD, 64 << 20)


def _peak_profiler_mb(fn: Callable[[], None]) -> float | None:
    from torch.profiler import ProfilerActivity, profile

    prof = profile(activities=[ProfilerActivity.CPU], profile_memory=True)
    with _quiet_stderr():  # the profiler backend logs a line to stderr on every start and stop
        prof.__enter__()
    try:
        fn()
    finally:
        with _quiet_stderr():
            prof.__exit__(None, None, None)
    try:
        events = prof.profiler.kineto_results.events()
    except AttributeError:  # the profiler's result layout changed: report no number rather than a wrong one
        return None
    mem = sorted((e.start_ns(), e.nbytes()) for e in events if e.name() == "[memory]")
    level = peak = 0
    for _, nbytes in mem:
        level += nbytes
        peak = max(peak, level)
    return peak / 2**20
