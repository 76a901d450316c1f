"""Where tensors live: CUDA when a GPU is present, CPU otherwise."""

from __future__ import annotations

import contextlib
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
    return f"CPU ({torch.get_num_threads()} threads)"


def resolve_dtype(name: str) -> torch.dtype:
    """``"float32"`` / ``"float64"`` -> torch dtype, with a clear error for anything else."""
    if name not in DTYPES:
        raise ValueError(f"dtype must be one of {sorted(DTYPES)} (got {name!r})")
    return DTYPES[name]


class _ThreadCount:
    """The intra-op thread count from before the first of overlapping ``one_cpu_thread`` blocks.

    torch.set_num_threads sets the calling thread's count and the one that threads created later
    start with. Blocks overlapping in several threads (two users of one server) would each restore
    what they saw on entry, and a thread created inside another's block sees 1: the last to leave
    would leave every later thread at 1. So the count is saved by the first block in and every
    block restores that one.
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.users = 0  # blocks open in any thread
        self.saved = 1
        self.depth = threading.local()  # blocks open in this thread (nested blocks keep 1 until the outer ends)

    def enter(self) -> None:
        with self.lock:
            if self.users == 0:
                self.saved = torch.get_num_threads()
            self.users += 1
            self.depth.n = getattr(self.depth, "n", 0) + 1
            torch.set_num_threads(1)

    def leave(self) -> None:
        with self.lock:
            self.users -= 1
            self.depth.n -= 1
            torch.set_num_threads(self.saved if self.depth.n == 0 else 1)


_THREAD_COUNT = _ThreadCount()


@contextlib.contextmanager
def one_cpu_thread(device: torch.device | None = None) -> Iterator[None]:
    """torch on one intra-op thread for the block (CPU only; restored after, also when blocks overlap in
    several threads). For loops of tiny tensors: extra threads only add synchronisation, measured 2-10x
    slower with 2 on a busy 2-core machine."""
    if device is not None and device.type != "cpu":
        yield
        return
    _THREAD_COUNT.enter()
    try:
        yield
    finally:
        _THREAD_COUNT.leave()
