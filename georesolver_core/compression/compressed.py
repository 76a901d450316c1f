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

from georesolver_core.device import one_cpu_thread

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
METHODS: dict = {}


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
            return METHODS[self.method].decode(self)

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
        if state["method"] not in METHODS:
            raise ValueError(f"state method must be one of {sorted(METHODS)} (got {state['method']!r})")
        if state["dtype"] not in _DTYPES:
            raise ValueError(f"state dtype must be one of {sorted(_DTYPES)} (got {state['dtype']!r})")
        payload = state["payload"]
        if not isinstance(payload, torch.Tensor) or payload.dtype != torch.uint8 or payload.dim() != 1:
            raise ValueError("state payload must be a 1-D uint8 tensor")
        obj = cls(
            method=state["method"],
            shape=tuple(int(s) for s in state["shape"]),
            dtype=state["dtype"],
            params=dict(state["params"]),
            payload=payload,
            side=dict(state["side"]),
        )
        expected = METHODS[obj.method].nbytes(obj.n_keys, obj.dim, obj.params, obj.shape)
        if obj.nbytes != expected:
            raise ValueError(f"state holds {obj.nbytes} bytes but its layout needs {expected}: it is corrupt")
        return obj

    def save(self, path) -> None:
        """``torch.save`` of ``state_dict()``."""
        torch.save(self.state_dict(), path)

    @classmethod
    def load(cls, path) -> CompressedKeys:
        """Load a file written by ``save`` with ``weights_only=True`` (no code runs while loading)."""
        return cls.from_state(torch.load(path, weights_only=True))

    def torch_dtype(self) -> torch.dtype:
        return _DTYPES[self.dtype]
