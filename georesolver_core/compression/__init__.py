"""Key compression: HCC polar quantisation (paper section 6) and the KV-cache quantisers it is compared with.

Every quantiser returns a ``CompressedKeys`` holding real bit-packed codes (uint8), with ``nbytes``
the true storage and ``dequantize()`` the reconstruction.
"""

from georesolver_core.compression.baselines import kivi_quantize, uniform_quantize
from georesolver_core.compression.compressed import CompressedKeys
from georesolver_core.compression.hcc import (
    DIRECTIONS,
    RADII,
    hcc_polar,
    hcc_quantize,
    hcc_rotated_quantize,
    random_rotation,
)
from georesolver_core.compression.methods import QUANTIZERS, quantize, storage_nbytes
from georesolver_core.compression.packing import pack_bits, packed_nbytes, unpack_bits

__all__ = [
    "DIRECTIONS",
    "QUANTIZERS",
    "RADII",
    "CompressedKeys",
    "hcc_polar",
    "hcc_quantize",
    "hcc_rotated_quantize",
    "kivi_quantize",
    "pack_bits",
    "packed_nbytes",
    "quantize",
    "random_rotation",
    "storage_nbytes",
    "uniform_quantize",
    "unpack_bits",
]
