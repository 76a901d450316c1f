"""CompressedKeys.from_state checks every field: a corrupt state is a ValueError, never NaN keys or a crash."""

from __future__ import annotations

import copy

import pytest
import torch

from georesolver_core.compression import CompressedKeys
from georesolver_core.compression.methods import QUANTIZERS, quantize

KEYS = torch.randn(2, 40, 8, generator=torch.Generator().manual_seed(0))


def _state(method: str) -> dict:
    return quantize(KEYS, method, bits=4).state_dict()


# (method, how the state is damaged) -> each was NaN keys, a wrong decoding or a Python error before
CORRUPTIONS = [
    ("hcc", lambda s: s["params"].update(bits_dir=0)),
    ("hcc", lambda s: s["params"].update(bits_radius=99)),
    ("hcc", lambda s: s["params"].update(radius="spherical")),
    ("hcc", lambda s: s["params"].update(c=float("nan"))),
    ("hcc", lambda s: s["params"].pop("direction")),
    ("hcc", lambda s: s["params"].update(extra=1)),
    ("hcc", lambda s: s["side"].update(radius_scale=torch.tensor([float("nan")]))),
    ("hcc", lambda s: s["side"].update(radius_scale=torch.tensor([-1.0]))),
    ("hcc", lambda s: s["side"].update(radius_scale=torch.tensor([1.0, 2.0]))),
    ("hcc", lambda s: s["side"].pop("radius_scale")),
    ("hcc", lambda s: s.update(side=[1, 2])),
    ("hcc", lambda s: s.update(shape=[2, 0, 8])),
    ("hcc", lambda s: s.update(shape=[2, -40, 8])),
    ("hcc", lambda s: s.update(shape=[1 << 40, 8])),
    ("hcc-rotated", lambda s: s["side"].update(seed=torch.tensor([5]))),
    ("hcc-rotated", lambda s: s["params"].update(seed=-1)),
    ("kivi-channel", lambda s: s["params"].update(group=0)),
    ("kivi-channel", lambda s: s["params"].update(axis="token")),
    ("kivi-channel", lambda s: s["params"].update(residual=4)),
    ("kivi-channel", lambda s: s["side"].update(scale=s["side"]["scale"][:3])),
    ("kivi-token", lambda s: s["side"].update(zero=s["side"]["zero"].float())),
    ("kivi-token", lambda s: s["side"]["scale"].fill_(float("inf"))),
    ("uniform", lambda s: s["params"].update(bits="4")),
    ("uniform", lambda s: s["side"].update(scale=torch.tensor([float("nan")]))),
    ("uniform", lambda s: s["side"].pop("zero")),
]


@pytest.mark.parametrize("method, damage", CORRUPTIONS)
def test_corrupt_params_and_side_are_refused(method, damage):
    state = copy.deepcopy(_state(method))
    damage(state)
    with pytest.raises(ValueError, match="state"):
        CompressedKeys.from_state(state)


@pytest.mark.parametrize("method", sorted(QUANTIZERS))
def test_every_method_round_trips_through_a_file(method, tmp_path):
    ck = quantize(KEYS, method, bits=4)
    ck.save(tmp_path / "k.pt")
    assert torch.equal(CompressedKeys.load(tmp_path / "k.pt").dequantize(), ck.dequantize())


def test_empty_truncated_and_missing_files_give_a_clear_error(tmp_path):
    quantize(KEYS, "hcc", bits=4).save(tmp_path / "k.pt")
    raw = (tmp_path / "k.pt").read_bytes()
    (tmp_path / "empty.pt").write_bytes(b"")
    (tmp_path / "cut.pt").write_bytes(raw[: len(raw) // 2])
    for name, match in [("empty.pt", "empty"), ("cut.pt", "not a readable"), ("missing.pt", "not found")]:
        with pytest.raises(ValueError, match=match):
            CompressedKeys.load(tmp_path / name)
