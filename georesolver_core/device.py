"""Where tensors live: CUDA when a GPU is present, CPU otherwise."""

from __future__ import annotations

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
