"""A trained model the app shares between sessions is read-only to every computation on it.

The Landscapes page caches trained models for all sessions; a slice of the loss surface around one must
not move it, even for a moment, or a second session slicing at the same time reads the first one's moves.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

from georesolver_core.landscape.model_slice import SliceModelConfig, model_slice, train_model


@pytest.fixture(scope="module")
def trained():
    return train_model(SliceModelConfig(geometry="poincare", steps=60, n_samples=96))


def _params(model) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.named_parameters()}


def test_a_slice_never_writes_the_model(trained):
    before = _params(trained.model)
    versions = {k: p._version for k, p in trained.model.named_parameters()}
    model_slice(trained, span=1.0, resolution=5)
    for k, p in trained.model.named_parameters():
        assert torch.equal(p.detach(), before[k])
        assert p._version == versions[k], f"{k} was written in place"


def test_two_concurrent_slices_equal_one_alone(trained):
    before = _params(trained.model)
    alone = [model_slice(trained, span=1.5, resolution=7, seed=s) for s in (0, 1)]
    barrier = threading.Barrier(2)
    results: dict[int, object] = {}
    errors: list[BaseException] = []

    def slice_at(seed: int) -> None:
        try:
            barrier.wait(timeout=30)
            results[seed] = model_slice(trained, span=1.5, resolution=7, seed=seed)
        except BaseException as err:  # reported below, not lost in the thread
            errors.append(err)

    threads = [threading.Thread(target=slice_at, args=(s,)) for s in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    for seed, ref in zip((0, 1), alone, strict=True):
        np.testing.assert_allclose(results[seed].loss, ref.loss, rtol=1e-6, atol=1e-7)
        assert results[seed].centre_loss == pytest.approx(ref.centre_loss, rel=1e-6)
    with torch.no_grad():
        centre = float(torch.nn.functional.cross_entropy(trained.model(trained.x), trained.y))
    assert alone[0].centre_loss == pytest.approx(centre, rel=1e-6)  # the model is still the trained one
    for k, p in trained.model.named_parameters():
        assert torch.equal(p.detach(), before[k]), k  # bit for bit, after two slices at once


def test_training_neither_reads_nor_resets_the_global_generator():
    """torch's global generator is one per process: a session seeding it to train would reset every other
    session's stream, and a session drawing from it meanwhile would change the model this one trains."""
    cfg = SliceModelConfig(geometry="sphere", dim=3, steps=2, n_samples=16)
    torch.manual_seed(1)
    state = torch.get_rng_state()
    first = train_model(cfg)
    assert torch.equal(torch.get_rng_state(), state)  # not reseeded, nothing drawn
    torch.rand(1000)  # another session's draws
    second = train_model(cfg)
    for (k, p), q in zip(_params(first.model).items(), _params(second.model).values(), strict=True):
        assert torch.equal(p, q), k
