"""The compressed-keys object every quantiser returns: packed codes in uint8, side data, true byte count.

``nbytes`` is the storage a cache would hold: the packed code bytes plus every scale, offset,
seed or full-precision residual the decoder needs. The shape, the method name and the integer
parameters are not counted (a float tensor's ``nbytes`` does not count its shape either).

Serialisation: ``state_dict()`` is a dict of tensors, ints, floats and strings, so it loads with
``torch.load(path, weights_only=True)``; ``CompressedKeys.from_state`` rebuilds the object.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from georesolver_core.budget import check_memory, elements, memory_budget
from georesolver_core.device import one_cpu_thread
from georesolver_core.uploads import read_torch

STATE_VERSION = 1
_DTYPES = {
    "float32": torch.float32,
    "float64": torch.float64,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
}


# method name -> its Quantizer (decode, nbytes). Filled by ``compression.methods`` when the package is
# imported: the decoders live beside their encoders, which import this module, so importing them here
# would be a cycle.
DECODERS: dict = {}


def check_fields(what: str, got: dict, allowed: set[str]) -> None:
    """``got`` has exactly the keys ``allowed`` (a state's params or side), else ValueError naming both."""
    if set(got) != allowed:
        raise ValueError(f"state {what} must hold exactly {sorted(allowed)} (got {sorted(map(str, got))[:8]})")


def check_side(side: dict, spec: dict[str, tuple[torch.dtype, int]]) -> None:
    """Each side tensor named in ``spec`` is 1-D of its dtype and length, and finite; no other is present."""
    check_fields("side", side, set(spec))
    for name, (dtype, numel) in spec.items():
        t = side[name]
        if not isinstance(t, torch.Tensor) or t.dtype != dtype or t.dim() != 1 or t.numel() != numel:
            raise ValueError(f"state side {name!r} must be a 1-D {dtype_name(dtype)} tensor of {numel} values")
        if t.is_floating_point() and not bool(torch.isfinite(t).all()):
            raise ValueError(f"state side {name!r} holds NaN or infinite values: the file is corrupt")


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


@dataclass(frozen=True, eq=False)
class CompressedKeys:
    """Keys (..., n, d) stored as packed integer codes. Build one with ``hcc_quantize`` or ``quantize``."""

    method: str  # a key of compression.methods.QUANTIZERS
    shape: tuple[int, ...]  # shape of the original keys, (..., n, d)
    dtype: str  # dtype of the original keys, restored by dequantize()
    params: dict  # the method's settings: ints, floats and strings only
    payload: torch.Tensor  # uint8 (bytes,): every code, packed back to back
    side: dict[str, torch.Tensor] = field(default_factory=dict)  # scales, offsets, seeds, residual keys

    @property
    def n_keys(self) -> int:
        """Number of key vectors (the product of all leading dims)."""
        return math.prod(self.shape[:-1])

    @property
    def dim(self) -> int:
        return self.shape[-1]

    @property
    def code_nbytes(self) -> int:
        return int(self.payload.numel())

    @property
    def side_nbytes(self) -> int:
        return sum(int(t.numel()) * t.element_size() for t in self.side.values())

    @property
    def nbytes(self) -> int:
        """True storage in bytes: packed codes + every scale, offset, seed and residual key."""
        return self.code_nbytes + self.side_nbytes

    @property
    def bits_per_key(self) -> float:
        """Storage per key vector in bits, side data included."""
        return 8.0 * self.nbytes / max(self.n_keys, 1)

    def ratio(self, baseline_bits: int = 32) -> float:
        """Compression ratio against the same keys stored at ``baseline_bits`` per coordinate (32: float32)."""
        return self.n_keys * self.dim * baseline_bits / 8.0 / self.nbytes

    def dequantize(self) -> torch.Tensor:
        """The reconstructed keys k_hat, shape and dtype of the original."""
        # Memory-bound passes: a second thread only adds synchronisation on a busy CPU.
        with one_cpu_thread(self.payload.device):
            return DECODERS[self.method].decode(self)

    def state_dict(self) -> dict:
        """Plain data for ``torch.save``; loads back with ``weights_only=True``."""
        return {
            "version": STATE_VERSION,
            "method": self.method,
            "shape": list(self.shape),
            "dtype": self.dtype,
            "params": dict(self.params),
            "payload": self.payload,
            "side": dict(self.side),
        }

    @classmethod
    def from_state(cls, state: dict) -> CompressedKeys:
        """Rebuild from ``state_dict()`` (e.g. after ``torch.load(..., weights_only=True)``), checking it."""
        need = {"version", "method", "shape", "dtype", "params", "payload", "side"}
        if not isinstance(state, dict) or not need <= set(state):
            got = sorted(state) if isinstance(state, dict) else type(state).__name__
            raise ValueError(f"state must be a dict with keys {sorted(need)} (got {got})")
        if state["version"] != STATE_VERSION:
            raise ValueError(f"state version must be {STATE_VERSION} (got {state['version']!r})")
        if state["method"] not in DECODERS:
            raise ValueError(f"state method must be one of {sorted(DECODERS)} (got {state['method']!r})")
        if state["dtype"] not in _DTYPES:
            raise ValueError(f"state dtype must be one of {sorted(_DTYPES)} (got {state['dtype']!r})")
        payload = state["payload"]
        if not isinstance(payload, torch.Tensor) or payload.dtype != torch.uint8 or payload.dim() != 1:
            raise ValueError("state payload must be a 1-D uint8 tensor")
        shape = state["shape"]
        if (
            not isinstance(shape, (list, tuple))
            or not 1 <= len(shape) <= 16
            or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 1 for s in shape)
        ):
            raise ValueError(f"state shape must be a list of 1 to 16 integers >= 1 (got {str(shape)[:60]!r})")
        check_memory("the decoded keys of this state", 8 * elements(*shape), shape=tuple(shape))
        params, side = state["params"], state["side"]
        if not isinstance(params, dict) or not isinstance(side, dict):
            raise ValueError("state params and side must be dicts")
        try:
            DECODERS[state["method"]].check_state(params, side, tuple(shape))  # every field, named
        except ValueError as err:
            raise ValueError(f"corrupt {state['method']} state: {err}") from None
        obj = cls(
            method=state["method"],
            shape=tuple(shape),
            dtype=state["dtype"],
            params=dict(params),
            payload=payload,
            side=dict(side),
        )
        expected = DECODERS[obj.method].nbytes(obj.n_keys, obj.dim, obj.params, obj.shape)
        if obj.nbytes != expected:
            raise ValueError(f"state holds {obj.nbytes} bytes but its layout needs {expected}: it is corrupt")
        return obj

    def save(self, path) -> None:
        """``torch.save`` of ``state_dict()``."""
        torch.save(self.state_dict(), path)

    @classmethod
    def load(cls, path) -> CompressedKeys:
        """Load a file written by ``save`` with ``weights_only=True`` (no code runs while loading); a file
        that is empty, truncated, or would expand past the memory budget is a ValueError."""
        limit = memory_budget()
        return cls.from_state(read_torch(path, what="compressed-keys file", max_bytes=limit, max_expanded=limit))

    def torch_dtype(self) -> torch.dtype:
        return _DTYPES[self.dtype]
