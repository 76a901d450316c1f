"""A job's run folder, ``runs_dir/<job_id>/``: spec.json when submitted, result.json when ended, and
whatever the job writes (a training job: checkpoint.pt and its history). Files are written atomically
so a server restarted at any moment reads each one whole or not at all.

This module imports no torch (``train.checkpoint.write_atomic`` does the same for checkpoints but pulls
in the model stack, which would add seconds to every worker's start and to its Stop).
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path


def write_json(path: str | os.PathLike, doc: dict) -> Path:
    """``doc`` as JSON in a temp file beside ``path`` (opened as an ordinary file, so with the usual mode),
    flushed to disk, then renamed over ``path``: a reader sees the old file or the new one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(tmp, "xb") as f:
            f.write(json.dumps(doc, indent=1, default=str).encode())
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def finished_runs(runs_dir: str | os.PathLike) -> list[dict]:
    """Every run folder under ``runs_dir`` with a result.json, newest first (job ids start with their time),
    each as ``{"job_id": ..., **result}`` and its ``spec`` (kind, config, owner) when spec.json is there."""
    out = []
    for result in sorted(Path(runs_dir).glob("*/result.json"), reverse=True):
        try:
            doc = json.loads(result.read_text())
        except (OSError, ValueError):
            continue  # damaged by hand: not a finished run (a rename never leaves half a file)
        try:
            doc["spec"] = json.loads((result.parent / "spec.json").read_text())
        except (OSError, ValueError):
            pass
        out.append({"job_id": result.parent.name, **doc})
    return out
