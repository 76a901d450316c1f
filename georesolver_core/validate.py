"""Argument checks shared by the library: every message names the argument, the value and what is allowed."""

from __future__ import annotations

import math

import torch

# eps stays well inside float32's normal range: below ~1e-38 it rounds to 0 (0/0 at q = k), above
# ~1e38 d^2 + eps overflows. Weights are already exactly one-hot in float32 for eps < 1e-12.
EPS_MIN, EPS_MAX = 1e-30, 1e30
# The ball's curvature parameter c (k = -c): c eps stays a normal float32 for every allowed eps
# (the fused Poincaré kernel's regulariser), and the rim 1/sqrt(c) stays in [1e-3, 1e3].
C_MIN, C_MAX = 1e-6, 1e6


def _check_real(name: str, value, lo: float, hi: float, allowed: str) -> float:
    """``value`` as a finite float in [lo, hi], else ValueError "name must be <allowed> (got value)".

    A string is refused even when it reads as a number: the caller would pass the string on, not the float."""
    if isinstance(value, (str, bytes)):
        raise ValueError(f"{name} must be {allowed}, a number, not a string (got {value!r})")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be {allowed} (got {value!r})") from None
    if not math.isfinite(v) or not lo <= v <= hi:
        raise ValueError(f"{name} must be {allowed} (got {value!r})")
    return v


def check_eps(eps: float, name: str = "eps") -> float:
    """eps must be a real number in [EPS_MIN, EPS_MAX] (the regulariser of the inverse-distance kernel)."""
    return _check_real(name, eps, EPS_MIN, EPS_MAX, f"a number > 0 in [{EPS_MIN:g}, {EPS_MAX:g}]")


def check_curvature(c: float, name: str = "c") -> float:
    """Poincaré-ball curvature parameter c in [C_MIN, C_MAX] (sectional curvature k = -c). c = 0 never reaches geoopt."""
    allowed = f"a finite number > 0 in [{C_MIN:g}, {C_MAX:g}], curvature k = -{name}"
    return _check_real(name, c, C_MIN, C_MAX, allowed)


def check_range(name: str, value: float, lo: float, hi: float) -> float:
    """A finite real in the closed interval [lo, hi]."""
    return _check_real(name, value, lo, hi, f"a number in [{lo}, {hi}]")


def check_positive_int(name: str, value: int, lo: int = 1, hi: int | None = None) -> int:
    """An integer in [lo, hi] (hi = None: no upper limit)."""
    ok = isinstance(value, int) and not isinstance(value, bool)
    if ok and value >= lo and (hi is None or value <= hi):
        return value
    allowed = f"an integer >= {lo}" if hi is None else f"an integer in [{lo}, {hi}]"
    raise ValueError(f"{name} must be {allowed} (got {value!r})")


def finite_extremes(t: torch.Tensor) -> tuple[bool, float]:
    """(every entry finite, largest |entry|) of a non-empty float tensor, from one reduction pass.

    min and max propagate NaN and infinities, so both extremes are finite exactly when every entry
    is; ``torch.isfinite(t).all()`` writes a boolean tensor first and runs two passes (measured 10-100x
    slower at 256 k entries on a loaded 2-core CPU)."""
    lo, hi = torch.aminmax(t.detach())
    lo, hi = float(lo), float(hi)
    ok = math.isfinite(lo) and math.isfinite(hi)
    return ok, max(-lo, hi) if ok else math.inf


def check_finite(name: str, t: torch.Tensor) -> torch.Tensor:
    """A tensor with no NaN or infinity."""
    if not isinstance(t, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor (got {type(t).__name__})")
    if not torch.is_floating_point(t):
        raise ValueError(f"{name} must be a floating-point tensor (got dtype {t.dtype})")
    if t.numel() and not finite_extremes(t)[0]:
        bad = int((~torch.isfinite(t)).sum())
        raise ValueError(f"{name} must be finite: it has {bad} NaN/inf entries")
    return t


def check_same_dtype(**tensors: torch.Tensor) -> None:
    """Tensors that meet in one matmul share one dtype and device (torch's own error names neither argument)."""
    if len({(t.dtype, t.device) for t in tensors.values()}) > 1:
        got = ", ".join(f"{name} {t.dtype} on {t.device}" for name, t in tensors.items())
        raise ValueError(f"{', '.join(tensors)} must share one dtype and device (got {got}); convert with .to(q)")


def check_kernel_dtype(**tensors: torch.Tensor) -> None:
    """Inputs of an inverse-distance kernel: one dtype and device, float32 or float64.

    Half precision cannot hold (d^2 + eps)^-1 over [EPS_MIN, EPS_MAX]: in float16 eps = 1e6 is inf (1/inf = 0,
    then 0/0) and eps below 6e-8 rounds to 0 (1/0 at q = k), so the weights would be NaN with no error;
    bfloat16 keeps 3 digits, too few to tell the nearest keys apart (as ``attention.kernel`` refuses both)."""
    check_same_dtype(**tensors)
    if next(iter(tensors.values())).dtype not in (torch.float32, torch.float64):
        got = ", ".join(f"{name} {t.dtype}" for name, t in tensors.items())
        raise ValueError(
            f"{', '.join(tensors)} must be float32 or float64 (got {got}): half precision cannot hold "
            "(d^2 + eps)^-1 over the allowed eps range; convert with .float()"
        )


def check_in_ball(name: str, x: torch.Tensor, c: float = 1.0) -> torch.Tensor:
    """Points strictly inside the Poincaré ball of radius 1/sqrt(c)."""
    check_finite(name, x)
    if x.numel() == 0:
        return x
    radius = 1.0 / math.sqrt(c)
    norm = float(x.detach().norm(dim=-1).max())
    if norm >= radius:
        raise ValueError(
            f"{name} must lie inside the Poincaré ball: norm < 1/sqrt(c) = {radius:.6g} "
            f"(got max norm {norm:.6g}); map points in with to_ball() or project()"
        )
    return x


def check_on_sphere(name: str, x: torch.Tensor, atol: float = 1e-4) -> torch.Tensor:
    """Unit vectors: | ||x|| - 1 | <= atol."""
    check_finite(name, x)
    if x.dim() >= 1 and x.shape[-1] == 0 and x.shape[:-1].numel():  # R^0 has no unit vector (a norm of 0)
        raise ValueError(
            f"{name} must be unit vectors on the sphere, with d >= 1 coordinates (got shape {tuple(x.shape)})"
        )
    if x.numel() == 0:
        return x
    dev = float((x.detach().norm(dim=-1) - 1.0).abs().max())
    if dev > atol:
        raise ValueError(
            f"{name} must be unit vectors on the sphere: | ||x|| - 1 | <= {atol:g} "
            f"(got deviation {dev:.3g}); normalise with project(x, geometry='sphere')"
        )
    return x


def check_same_dim(name_a: str, a: torch.Tensor, name_b: str, b: torch.Tensor) -> None:
    """Two point sets (..., n, d) and (..., m, d) must share the feature size d and have >= 1 dim."""
    if a.dim() < 1 or b.dim() < 1:
        raise ValueError(f"{name_a} and {name_b} must have at least one dimension (got {a.dim()} and {b.dim()})")
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(
            f"{name_a} and {name_b} must have the same last dimension (got {a.shape[-1]} and {b.shape[-1]})"
        )


def broadcast_batch(names: list[str], shapes: list[tuple[int, ...]]) -> torch.Size:
    """The broadcast of batch shapes, or ValueError naming the arguments.

    torch.broadcast_shapes imports sympy on its first call (over a second); the rule itself is short.
    """
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for dims in zip(*[(1,) * (ndim - len(s)) + tuple(s) for s in shapes], strict=True):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            got = ", ".join(f"{n} {tuple(s)}" for n, s in zip(names, shapes, strict=True))
            raise ValueError(f"leading (batch) dims must broadcast (got {got})")
        out.append(sizes.pop() if sizes else 1)
    return torch.Size(out)
