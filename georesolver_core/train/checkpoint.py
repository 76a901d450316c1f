"""Checkpoints: written atomically, read with ``torch.load(weights_only=True)``, checked for format.

A checkpoint is a plain dict of tensors, numbers and strings (no pickled classes), so the safe
loader reads it and a file from elsewhere cannot run code. The file is written to a temporary name
in the same folder and renamed over the target: a crash mid-write leaves the previous checkpoint.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import torch

FORMAT = "georesolver-train/1"  # changes when the layout below changes
REQUIRED = ("format", "model_config", "model", "optimizer", "step", "train_config", "task", "history")


def save_checkpoint(path: str | os.PathLike, payload: dict) -> Path:
    """Write ``payload`` (see ``REQUIRED``) to ``path`` atomically (temp file + rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save({"format": FORMAT, **payload}, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load_checkpoint(source) -> dict:
    """Read a checkpoint from a path, bytes or a binary file object; ``ValueError`` if it is not one of ours."""
    if isinstance(source, (bytes, bytearray)):
        import io

        source = io.BytesIO(source)
    try:
        data = torch.load(source, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise ValueError(f"checkpoint file not found: {source}") from None
    except Exception as err:  # torch raises several types for a truncated or foreign file
        raise ValueError(
            f"not a readable checkpoint (corrupt, truncated, or not written by torch.save): {type(err).__name__}: "
            f"{str(err).splitlines()[0] if str(err) else ''}"
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise ValueError(f"not a training checkpoint of this library: expected format {FORMAT!r} (got {found!r})")
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise ValueError(f"checkpoint is missing {missing}; it was not written by this trainer")
    return data
