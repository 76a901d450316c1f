"""The embeddings trainer refuses a device it cannot use and stops when a learnt curvature collapses."""

from __future__ import annotations

import math

import pytest
import torch

from georesolver_core.embeddings import EmbeddingConfig, EmbeddingTrainer
from georesolver_core.embeddings.trainer import LEARNT_C_RANGE, check_device
from georesolver_core.tasks import balanced_tree


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_on_a_cpu_machine_is_a_value_error_naming_the_choice():
    with pytest.raises(ValueError, match="device must be 'cpu' on this machine"):
        EmbeddingTrainer(balanced_tree(2, 2), EmbeddingConfig(), device="cuda")


@pytest.mark.parametrize("bad", ["tpu", "not a device", 3.5])
def test_unknown_devices_are_value_errors(bad):
    with pytest.raises(ValueError, match="device must be"):
        check_device(bad)


def test_collapsing_learnt_curvature_stops_as_diverged_with_the_fix():
    """At the app's largest learning rate the learnt c runs away; the run must not end as "done"."""
    tr = EmbeddingTrainer(
        balanced_tree(2, 3), EmbeddingConfig(learn_curvature=True, lr=10.0, epochs=60, eval_every=60)
    )
    status = tr.run()
    lo, hi = LEARNT_C_RANGE
    if status == "diverged":
        assert "curvature" in tr.message or "NaN" in tr.message
        assert "lower the learning rate" in tr.message
    else:  # it may stay in range on another platform; then it must really be in range
        assert math.isfinite(tr.model.c) and lo <= tr.model.c <= hi
    assert tr.done
