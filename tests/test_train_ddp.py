"""Data-parallel training: 2 gloo processes under torchrun give the loss curve of one process on the same global batch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARGS = ["train", "--task", "recall", "--size", "4", "--d-model", "16", "--layers", "1", "--heads", "2",
        "--steps", "5", "--batch-size", "8", "--eval-every", "5", "--device", "cpu", "--json"]  # fmt: skip


def _run(prefix: list[str], out: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [*prefix, "-m", "georesolver_core", *ARGS, "--out", str(out)],
        capture_output=True, text=True, timeout=240, env=env, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 1, proc.stdout  # only rank 0 prints the document
    return json.loads(lines[0])


def test_two_gloo_processes_reproduce_one_process(tmp_path):
    one = _run([sys.executable], tmp_path / "one")
    two = _run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"], tmp_path / "two"
    )
    assert one["processes"] == 1 and two["processes"] == 2
    losses_one = [r["loss"] for r in one["history"]]
    losses_two = [r["loss"] for r in two["history"]]
    assert len(losses_one) == len(losses_two) == 5
    assert losses_two == pytest.approx(losses_one, rel=1e-5, abs=1e-6)
    assert two["final"]["accuracy"] == pytest.approx(one["final"]["accuracy"], abs=1e-6)
    assert (tmp_path / "two" / "checkpoint.pt").exists()  # written once, by rank 0
