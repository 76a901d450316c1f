"""The Compression page's lab: errors, storage, the sweep and the ratio curve of one configuration
(``compression_lab(CompressionConfig) -> CompressionLab``), the memory table (``memory_table(MemoryConfig) -> pd.DataFrame``), and
attention with quantised keys against exact attention (``quantised_attention``).

All storage figures are real: keys are quantised, packed and counted (``CompressedKeys.nbytes``);
the memory table scales the bytes of one head's keys, sized by ``storage_nbytes`` (the layout,
tested equal to the real ``nbytes``), to every layer and head of a model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
import torch

from georesolver_core.compression.attention_effect import AttentionEffect, attention_effect
from georesolver_core.compression.hcc import hcc_params
from georesolver_core.compression.methods import QUANTIZERS, quantize, storage_nbytes
from georesolver_core.compression.worst_case import KEY_KINDS, random_keys
from georesolver_core.device import DTYPES, one_cpu_thread
from georesolver_core.results import Labelled
from georesolver_core.theory.compression import hcc_compression_ratio, hcc_error_bound, kv_cache_bytes
from georesolver_core.validate import check_positive_int

BASELINES = ("uniform", "kivi-channel", "kivi-token", "hcc-rotated")  # what HCC is compared with
SWEEP_BITS = (1, 2, 3, 4, 5, 6, 8, 10)
SWEEP_ELEMENTS = 1 << 16  # n d per point of the sweep and of the ratio curve (at most 1024 keys)
RATIO_DIMS = (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
DISK_KEYS = 150
EFFECT_KEYS = 512  # keys attended to by ``quantised_attention``
EFFECT_BITS = tuple(range(1, 11))  # the bit widths ``quantised_attention`` sweeps
MAX_ELEMENTS = 1 << 22  # n d above this is subsampled: the page must answer in about a second

# (layers, KV heads, head dim d_h): public configurations, for the memory estimate
MODELS = {
    "GPT-2 small (12 layers, 12 heads, d_h 64)": (12, 12, 64),
    "Llama-2-7B (32 layers, 32 heads, d_h 128)": (32, 32, 128),
    "Llama-3-8B (32 layers, 8 KV heads, d_h 128)": (32, 8, 128),
    "Llama-2-70B (80 layers, 8 KV heads, d_h 128)": (80, 8, 128),
}


@dataclass(frozen=True)
class CompressionStats(Labelled):
    """The page's headline numbers: HCC (Theorem 6.1, section 6) beside the baseline at the same budget."""

    bytes_hcc: int  # CompressedKeys.nbytes, every key packed
    bits_per_key_hcc: float  # measured: 8 nbytes / n
    bits_per_key_stated: int  # (d - 1) b + b_r
    ratio_measured: float  # 32 d / bits per key
    ratio_formula: float  # hcc_compression_ratio(d, b, b_r)
    max_err_hcc: float  # max_i ||k_i - k_hat_i||^2
    mean_err_hcc: float
    keys_over_bound: int  # keys whose HCC error exceeds Theorem 6.1's bound
    bits_per_key_baseline: float
    max_err_baseline: float
    mean_err_baseline: float

    LABELS: ClassVar[dict[str, str]] = {
        "bytes_hcc": "bytes stored (HCC)",
        "bits_per_key_hcc": "bits per key (HCC)",
        "bits_per_key_stated": "bits per key (stated, (d-1) b + b_r)",
        "ratio_measured": "ratio vs float32 (measured)",
        "ratio_formula": "ratio vs float32 (formula)",
        "max_err_hcc": "max ||k - k_hat||^2 (HCC)",
        "mean_err_hcc": "mean ||k - k_hat||^2 (HCC)",
        "keys_over_bound": "keys over the bound (HCC)",
        "bits_per_key_baseline": "bits per key (baseline)",
        "max_err_baseline": "max ||k - k_hat||^2 (baseline)",
        "mean_err_baseline": "mean ||k - k_hat||^2 (baseline)",
    }


@dataclass(frozen=True)
class CompressionLab:
    """One configuration of the page, measured."""

    hcc_options: dict  # bits_radius, radius, direction
    baseline: str
    baseline_bits: int  # the baseline's width at HCC's budget (largest whose bytes fit)
    n_used: int  # keys actually quantised (n, or fewer when n d is too large)
    errors: np.ndarray  # (n_used,) ||k - k_hat||^2 with HCC
    baseline_errors: np.ndarray  # (n_used,) with the baseline
    bound: float  # Theorem 6.1 at (b, b_r)
    stats: CompressionStats  # headline numbers
    disk_keys: np.ndarray  # (DISK_KEYS, 2) d = 2 keys of the same kind
    disk_hcc: np.ndarray  # (DISK_KEYS, 2) their HCC reconstruction
    disk_baseline: np.ndarray  # (DISK_KEYS, 2) and the baseline's
    sweep: pd.DataFrame  # method, bits, bytes_per_key, mean/max error, ratio
    ratio_by_dim: pd.DataFrame  # d_h, formula, measured (implicit), measured (all coordinates)


def sweep_keys(d: int) -> int:
    return max(16, min(1024, SWEEP_ELEMENTS // d))


def _sq_err(a: torch.Tensor, b: torch.Tensor) -> np.ndarray:
    return ((a - b) ** 2).sum(-1).reshape(-1).double().numpy()


def _options(method: str, hcc_options: dict) -> dict:
    return dict(hcc_options) if method.startswith("hcc") else {}


def budget_bits(method: str, shape: tuple[int, ...], budget_nbytes: int, hcc_options: dict) -> int:
    """The largest bits (1..16) whose storage of keys of this shape fits in budget_nbytes (1 if none fits)."""
    best = 1
    for b in range(1, 17):
        if storage_nbytes(method, shape, bits=b, **_options(method, hcc_options)) <= budget_nbytes:
            best = b
    return best


@dataclass(frozen=True)
class CompressionConfig:
    """One configuration of the Compression page (hashable: a page caches ``compression_lab`` on it).

    Validated on construction: n in [1, 2^24], d in [1, 2^14], the HCC bits and modes as ``hcc_params``
    checks them, ``baseline`` one of BASELINES, ``kind`` one of ``KEY_KINDS``, ``dtype`` one of ``DTYPES``.
    """

    n: int  # keys asked for (fewer are quantised when n d passes MAX_ELEMENTS)
    d: int  # key dimension d_h
    bits_dir: int  # HCC's bits per direction coordinate, b
    bits_radius: int  # HCC's radius bits, b_r
    radius: str = "euclidean"  # HCC's radius mode (hcc.RADII)
    direction: str = "implicit"  # HCC's direction layout (hcc.DIRECTIONS)
    baseline: str = "uniform"  # a BASELINES method, at HCC's storage
    kind: str = "tanh"  # a KEY_KINDS key: how the keys are drawn
    seed: int = 0  # the generator of the keys
    dtype: torch.dtype = torch.float32  # a DTYPES value: the keys' precision

    def __post_init__(self):
        check_positive_int("n", self.n, 1, 1 << 24)
        check_positive_int("d", self.d, 1, 1 << 14)
        hcc_params(self.bits_dir, self.bits_radius, self.radius, self.direction)
        if self.baseline not in BASELINES:
            raise ValueError(f"baseline must be one of {list(BASELINES)} (got {self.baseline!r})")
        if self.kind not in KEY_KINDS:
            raise ValueError(f"kind must be one of {sorted(KEY_KINDS)} (got {self.kind!r})")
        if self.dtype not in DTYPES.values():
            raise ValueError(f"dtype must be one of {[str(t) for t in DTYPES.values()]} (got {self.dtype!r})")

    @property
    def hcc_options(self) -> dict:
        """HCC's keyword options besides its direction bits: bits_radius, radius, direction."""
        return {"bits_radius": self.bits_radius, "radius": self.radius, "direction": self.direction}


def compression_lab(config: CompressionConfig) -> CompressionLab:
    """Quantise the n keys of dimension d of ``config`` with HCC and with its baseline at the same budget;
    the d = 2 keys of the disk, the bit sweep of every method and the ratio against d_h beside them.

    Runs on one CPU thread: many small tensors, where a second thread only adds synchronisation.
    """
    with one_cpu_thread():
        return _lab(config)


def _lab(config: CompressionConfig) -> CompressionLab:
    n, d, bits_dir, bits_radius = config.n, config.d, config.bits_dir, config.bits_radius
    baseline, kind, dtype = config.baseline, config.kind, config.dtype
    hopt = config.hcc_options
    g = torch.Generator().manual_seed(config.seed)
    n_used = max(1, min(n, MAX_ELEMENTS // d))
    keys = random_keys(n_used, d, kind, g).to(dtype)  # (n_used, d)
    ck = quantize(keys, "hcc", bits=bits_dir, **hopt)
    k_hat = ck.dequantize()
    errors = _sq_err(k_hat, keys)
    bb = budget_bits(baseline, tuple(keys.shape), ck.nbytes, hopt)
    cb = quantize(keys, baseline, bits=bb, **_options(baseline, hopt))
    base_errors = _sq_err(cb.dequantize(), keys)
    bound = float(hcc_error_bound(bits_dir, bits_radius))

    disk = random_keys(DISK_KEYS, 2, kind, g).to(dtype)  # (DISK_KEYS, 2)
    disk_hcc = quantize(disk, "hcc", bits=bits_dir, **hopt).dequantize()
    disk_base = quantize(disk, baseline, bits=bb, **_options(baseline, hopt)).dequantize()

    sub = keys[: sweep_keys(d)]
    rows = []
    for method in QUANTIZERS:
        for b in SWEEP_BITS:
            c = quantize(sub, method, bits=b, **_options(method, hopt))
            e = _sq_err(c.dequantize(), sub)
            rows.append(
                {
                    "method": method,
                    "bits": b,
                    "bytes_per_key": c.nbytes / sub.shape[0],
                    "mean_sq_error": float(e.mean()),
                    "max_sq_error": float(e.max()),
                    "ratio_vs_float32": c.ratio(32),
                    "hcc_bound": float(hcc_error_bound(b, bits_radius)) if method.startswith("hcc") else np.nan,
                }
            )
    sweep = pd.DataFrame(rows)

    ratio_rows = []
    gr = torch.Generator().manual_seed(config.seed + 1)
    for dd in RATIO_DIMS:
        kk = random_keys(min(sweep_keys(dd), n_used), dd, kind, gr).to(dtype)
        ratio_rows.append(
            {
                "d_h": dd,
                "formula": float(hcc_compression_ratio(dd, bits_dir, bits_radius)),
                "measured": quantize(kk, "hcc", bits=bits_dir, **{**hopt, "direction": "implicit"}).ratio(32),
                "measured_all_coordinates": quantize(
                    kk, "hcc", bits=bits_dir, **{**hopt, "direction": "all"}
                ).ratio(32),
            }
        )
    stats = CompressionStats(
        bytes_hcc=ck.nbytes,
        bits_per_key_hcc=ck.bits_per_key,
        bits_per_key_stated=(d - 1) * bits_dir + bits_radius,
        ratio_measured=ck.ratio(32),
        ratio_formula=float(hcc_compression_ratio(d, bits_dir, bits_radius)),
        max_err_hcc=float(errors.max()),
        mean_err_hcc=float(errors.mean()),
        keys_over_bound=int((errors > bound).sum()),
        bits_per_key_baseline=cb.bits_per_key,
        max_err_baseline=float(base_errors.max()),
        mean_err_baseline=float(base_errors.mean()),
    )
    return CompressionLab(
        hcc_options=hopt,
        baseline=baseline,
        baseline_bits=bb,
        n_used=n_used,
        errors=errors,
        baseline_errors=base_errors,
        bound=bound,
        stats=stats,
        disk_keys=disk.double().numpy(),
        disk_hcc=disk_hcc.double().numpy(),
        disk_baseline=disk_base.double().numpy(),
        sweep=sweep,
        ratio_by_dim=pd.DataFrame(ratio_rows),
    )


@dataclass(frozen=True)
class EffectConfig:
    """Attention with keys quantised by one method (hashable: a page caches ``quantised_attention`` on it).

    Validated on construction: ``method`` a QUANTIZERS key, d in [1, 2^14], the HCC options as ``hcc_params``
    checks them (at any direction width), ``kind`` one of ``KEY_KINDS``. An HCC method uses the radius bits
    and modes; the others ignore them.
    """

    method: str  # a QUANTIZERS key
    d: int  # key dimension d_h
    bits_radius: int  # HCC's radius bits, b_r
    radius: str = "euclidean"  # HCC's radius mode
    direction: str = "implicit"  # HCC's direction layout
    kind: str = "tanh"  # a KEY_KINDS key: how the keys are drawn
    seed: int = 0  # the generator of the keys

    def __post_init__(self):
        if self.method not in QUANTIZERS:
            raise ValueError(f"method must be one of {sorted(QUANTIZERS)} (got {self.method!r})")
        check_positive_int("d", self.d, 1, 1 << 14)
        hcc_params(EFFECT_BITS[0], self.bits_radius, self.radius, self.direction)
        if self.kind not in KEY_KINDS:
            raise ValueError(f"kind must be one of {sorted(KEY_KINDS)} (got {self.kind!r})")


def quantised_attention(config: EffectConfig) -> AttentionEffect:
    """Attention over ``EFFECT_KEYS`` keys of dimension d (``kind``, drawn from ``seed``) with the keys quantised
    by ``method`` at each of ``EFFECT_BITS`` bits, against exact keys (``compression.attention_effect``)."""
    keys = random_keys(EFFECT_KEYS, config.d, config.kind, torch.Generator().manual_seed(config.seed))  # (m, d)
    opts = _options(
        config.method, {"bits_radius": config.bits_radius, "radius": config.radius, "direction": config.direction}
    )
    return attention_effect(keys, method=config.method, bits=EFFECT_BITS, **opts)


@dataclass(frozen=True)
class MemoryConfig:
    """One model's KV cache at one context length, keys stored with HCC (hashable: a page caches on it).

    Validated on construction: ``model`` a MODELS key, context in [1, 2^24] tokens, batch in [1, 2^16],
    the HCC bits and direction layout as ``hcc_params`` checks them.
    """

    model: str  # a MODELS key: (layers, KV heads, d_h)
    context: int  # tokens cached per sequence
    bits_dir: int  # HCC's bits per direction coordinate, b
    bits_radius: int  # HCC's radius bits, b_r
    direction: str = "implicit"  # HCC's direction layout (hcc.DIRECTIONS)
    batch: int = 1  # sequences cached

    def __post_init__(self):
        if self.model not in MODELS:
            raise ValueError(f"model must be one of {list(MODELS)} (got {self.model!r})")
        check_positive_int("context", self.context, 1, 1 << 24)
        check_positive_int("batch", self.batch, 1, 1 << 16)
        hcc_params(self.bits_dir, self.bits_radius, "euclidean", self.direction)


def memory_table(config: MemoryConfig) -> pd.DataFrame:
    """KV-cache bytes of a model at a context length: float32 / float16 caches vs HCC keys with fp32 / fp16 values.

    Columns: cache, GiB, bytes, ratio vs float32 cache, ratio vs float16 cache; one row per cache layout.
    """
    context = config.context
    layers, heads, d = MODELS[config.model]
    per_head = storage_nbytes(
        "hcc", (context, d), bits=config.bits_dir, bits_radius=config.bits_radius, direction=config.direction
    )
    key_bits = 8.0 * per_head / context  # measured layout: packed codes + scale, per key
    rows = []
    for label, kb, vb in (
        ("float32 keys + float32 values", 32.0 * d, 32),
        ("float16 keys + float16 values", 16.0 * d, 16),
        ("HCC keys + float32 values", key_bits, 32),
        ("HCC keys + float16 values", key_bits, 16),
    ):
        total = float(kv_cache_bytes(layers, heads, context, d, key_bits=kb, value_bits=vb, batch=config.batch))
        rows.append({"cache": label, "GiB": total / 2**30, "bytes": total})
    table = pd.DataFrame(rows)
    table["ratio vs float32 cache"] = table["bytes"].iloc[0] / table["bytes"]
    table["ratio vs float16 cache"] = table["bytes"].iloc[1] / table["bytes"]
    return table
