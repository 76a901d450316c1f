"""Where tensors live: CUDA when a GPU is present, CPU otherwise."""

from __future__ import annotations

import contextlib
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


@contextlib.contextmanager
def one_cpu_thread(device: torch.device | None = None) -> Iterator[None]:
    """torch on one intra-op thread for the block (CPU only; restored after). For loops of tiny
    tensors: extra threads only add synchronisation, measured 2-10x slower with 2 on a busy 2-core machine."""
    if device is not None and device.type != "cpu":
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
