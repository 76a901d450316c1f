"""The memory budget: a configuration is refused before anything is allocated when the tensors it asks
for would not fit in what one request on a shared server may take.

Every per-argument check can pass while the product of the arguments cannot run (a prototype pool of
``capacity x dim`` floats, a width whose projections are ``4 d_model^2`` floats, a data set of
``n x length x dim`` floats). Each such place estimates the bytes its largest tensors need from its
arguments alone, and calls ``check_memory`` first. The estimates count the dominant tensors (weights
with their gradients and optimiser moments, data, the n x m distance matrix), not the allocator's
overhead: they are lower bounds, so a refused configuration certainly does not fit.

The budget is ``DEFAULT_BUDGET_BYTES`` (4 GiB) unless the environment variable ``MEMORY_BUDGET_ENV``
gives another, in bytes or with a unit (``"512MiB"``, ``"16GiB"``, ``"1.5e9"``).
"""

from __future__ import annotations

import math
import os
import re

DEFAULT_BUDGET_BYTES = 4 * 2**30  # 4 GiB: one request of a class-sized server
MEMORY_BUDGET_ENV = "GEORESOLVER_MEMORY_BUDGET"
FLOAT32 = 4  # bytes per float32 element
_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}
_UNITS.update({"KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40})


def parse_bytes(text: str) -> int:
    """``"4GiB"`` -> 4294967296; a plain number is bytes. ValueError for anything else or <= 0."""
    match = re.fullmatch(r"\s*([0-9.eE+]+)\s*([A-Za-z]*)\s*", str(text))
    unit = match.group(2).upper() if match else None
    try:
        value = float(match.group(1)) * _UNITS[unit] if match else math.nan
    except (KeyError, ValueError):
        value = math.nan
    if not math.isfinite(value) or value < 1:
        raise ValueError(
            f"{MEMORY_BUDGET_ENV} must be a size such as 4GiB, 512MiB or a number of bytes >= 1 (got {text!r})"
        )
    return int(value)


def memory_budget() -> int:
    """The budget in bytes: ``MEMORY_BUDGET_ENV`` if set, else ``DEFAULT_BUDGET_BYTES``."""
    raw = os.environ.get(MEMORY_BUDGET_ENV)
    return DEFAULT_BUDGET_BYTES if raw is None or not raw.strip() else parse_bytes(raw)


def format_bytes(n: float) -> str:
    """A size for people: ``format_bytes(3 * 2**30) == "3.0 GiB"``."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


def elements(*dims: int) -> int:
    """The product of sizes as a Python int (no overflow, whatever the sizes)."""
    return math.prod(int(d) for d in dims)


def check_memory(what: str, nbytes: int, **arguments) -> int:
    """``nbytes`` if it is within the budget; else ValueError naming ``what``, the arguments, the
    estimate and the limit. Call it with the estimate before allocating."""
    limit = memory_budget()
    if nbytes > limit:
        args = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
        raise ValueError(
            f"{what} ({args}) needs about {format_bytes(nbytes)}, over the memory budget of "
            f"{format_bytes(limit)}: use smaller sizes (or set {MEMORY_BUDGET_ENV} on a machine with more memory)"
        )
    return nbytes


def attention_io_bytes(
    batch: int, heads: int, seq_len: int, head_dim: int, itemsize: int = FLOAT32, tensors: float = 8
) -> int:
    """Bytes of ``tensors`` (B, H, T, D) tensors. The default 8 is one attention call's forward + backward
    at its least: q, k, v, the output, the output's gradient and the gradients of q, k, v (a streaming kernel
    holds no T x T); a kernel's own temporaries raise the count (``bench.run.TIMED_KERNELS`` gives each its own)."""
    return int(tensors * itemsize * elements(batch, heads, seq_len, head_dim))


def check_attention_io(
    what: str, batch: int, heads: int, seq_len: int, head_dim: int, itemsize: int = FLOAT32, tensors: float = 8
) -> int:
    """``check_memory`` of ``attention_io_bytes``: the benchmarks call it at their longest length first."""
    return check_memory(
        what, attention_io_bytes(batch, heads, seq_len, head_dim, itemsize, tensors),
        batch=batch, heads=heads, seq_len=seq_len, head_dim=head_dim,
    )  # fmt: skip
