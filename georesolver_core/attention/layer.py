"""Multi-head attention whose kernel and geometry are chosen by name (paper sections 2, 5, 8, 11).

``GeoAttention(AttentionConfig(d_model=64, n_heads=4, kernel="hida"))`` swaps the softmax of a
transformer block for hyperbolic inverse-distance attention with one string.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import torch
import torch.nn.functional as F
from torch import nn

from georesolver_core.attention import hida_family
from georesolver_core.attention.kernel import attend_checked
from georesolver_core.attention.spec import ALL_KEYS, CAUSAL, KernelSpec
from georesolver_core.attention.timing import C_TIMING, FP_TIMING, L_TIMING, Timing, dense_timing
from georesolver_core.budget import FLOAT32, check_memory, elements
from georesolver_core.geometry import GEOMETRIES
from georesolver_core.validate import check_curvature, check_eps, check_finite, check_positive_int


@dataclass(frozen=True)
class AttentionConfig:
    d_model: int = 64  # model width
    n_heads: int = 4  # heads; d_model must divide evenly
    kernel: str = "ida"  # key of ATTENTION (defined below; checked on construction)
    eps: float = 0.1  # inverse-distance regulariser (ignored by softmax)
    c: float = 1.0  # Poincaré curvature parameter, k = -c (hida only)
    causal: bool = False  # mask future keys
    bias: bool = True  # Q/K/V/O projection biases
    # The sizes of the sub-quadratic HIDA kernels (HIDA_SIZES): each may be set only for a kernel that
    # reads it (``AttentionKind.sizes``), so a size never sits in a config that ignores it.
    window: int | None = None  # fp-hida band half-width w (None: ceil(log2 T))
    n_global: int | None = None  # fp-hida global tokens g (None: ceil(log2 T))
    n_anchors: int | None = None  # l-hida anchors m (None: 16)
    n_summaries: int | None = None  # c-hida summaries c (None: 16)

    def __post_init__(self):
        check_positive_int("d_model", self.d_model, 1, 65536)
        check_positive_int("n_heads", self.n_heads, 1, 1024)
        # Q/K/V/O projections: 4 d_model^2 float32 weights, with gradients and two optimiser moments
        check_memory(
            "an attention layer", 4 * FLOAT32 * 4 * elements(self.d_model, self.d_model), d_model=self.d_model
        )
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads})")
        if self.kernel not in ATTENTION:
            raise ValueError(f"kernel must be one of {sorted(ATTENTION)} (got {self.kernel!r})")
        check_eps(self.eps)
        check_curvature(self.c)
        for name in HIDA_SIZES:
            value = getattr(self, name)
            if value is None:
                continue
            check_positive_int(name, value, 1, MAX_HIDA_SIZE)
            if name not in ATTENTION[self.kernel].sizes:
                users = sorted(k for k, kind in ATTENTION.items() if name in kind.sizes)
                raise ValueError(
                    f"{name} applies to kernel {' or '.join(users)} only "
                    f"(kernel is {self.kernel!r}): leave it None"
                )

    def with_kernel(self, kernel: str) -> AttentionConfig:
        """The same layer with another kernel; the HIDA sizes that kernel does not read are dropped."""
        sizes = ATTENTION[kernel].sizes if kernel in ATTENTION else ()
        return replace(self, kernel=kernel, **{name: None for name in HIDA_SIZES if name not in sizes})


# The AttentionConfig fields of the HIDA family, with what each sets (pages and the command line label them so)
HIDA_SIZES = {
    "window": "FP-HIDA band half-width w",
    "n_global": "FP-HIDA global tokens g",
    "n_anchors": "L-HIDA anchors m",
    "n_summaries": "C-HIDA summaries c",
}
MAX_HIDA_SIZE = 4096  # the longest sequence a model takes (model.MAX_LEN)


def _identity(x: torch.Tensor, c: float) -> torch.Tensor:
    return x


class SoftmaxKernel(nn.Module):
    """softmax(q k^T / sqrt(hs)) v per head. (B, nh, T, hs) x 3 -> (B, nh, T, hs)."""

    def __init__(self, config: AttentionConfig):
        super().__init__()
        self.causal = config.causal

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        # torch's fused kernel (scale 1/sqrt(hs), as attention.softmax_attention); n = m here, so
        # every causal row sees a key and the two agree exactly in what they compute.
        return F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)


class InverseDistanceKernel(nn.Module):
    """The inverse-distance kernel of one spec (geometry, eps, c, causal) per head. (B, nh, T, hs) x 3 -> (B, nh, T, hs).

    q and k arrive as points of the geometry (``AttentionKind.embed`` put them there), so the kernel
    runs unchecked (``attend_checked``): no validation pass and no host synchronisation per call.
    """

    def __init__(self, config: AttentionConfig, geometry: str):
        super().__init__()
        self.spec = KernelSpec(config.eps, geometry, config.c, keys=CAUSAL if config.causal else ALL_KEYS)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return attend_checked(q, k, v, self.spec)


@dataclass(frozen=True)
class AttentionKind:
    """A registry entry: the label, the geometry, how projections land there, and the kernel module."""

    label: str  # shown in the UI
    geometry: str | None  # None: dot-product softmax
    embed: Callable[[torch.Tensor, float], torch.Tensor]  # (..., d) -> points of the geometry (c given)
    build: Callable[[AttentionConfig], nn.Module]  # module: q, k, v (B, nh, T, hs), embedded -> (B, nh, T, hs)
    # The kernel reads contiguous heads: split them with one copy (``split_heads``) instead of letting
    # it copy q, k and v one by one. SDPA reads strided views itself: the softmax entry keeps views.
    contiguous_heads: bool = False
    timing: Timing | None = None  # how the benchmarks run it and its predicted cost (None: not benchmarked)
    sizes: tuple[str, ...] = ()  # the HIDA_SIZES of AttentionConfig this kernel reads (the rest must be None)
    colour: str | None = None  # its colour in every figure (None: the figure's neutral colour)

    def labelled(self, how: str) -> str:
        """The label with how this entry is run, e.g. "IDA (Euclidean) (fused)" (benchmark rows, legends)."""
        return f"{self.label} ({how})"


def _inverse_distance(
    label: str, geometry: str, colour: str, *, sweep: bool = False, target_ratio: float | None = None
) -> AttentionKind:
    # Learned projections land in the geometry by its own embedding: as is, x = 0.9 tanh(|z|) z/|z|
    # into the ball (section 4), z/|z| onto the sphere (section 8.1).
    return AttentionKind(
        label,
        geometry,
        GEOMETRIES[geometry].embed,
        lambda config: InverseDistanceKernel(config, geometry),
        contiguous_heads=True,
        timing=dense_timing(geometry, sweep=sweep, target_ratio=target_ratio),
        colour=colour,
    )


ATTENTION: dict[str, AttentionKind] = {
    "softmax": AttentionKind("Softmax (dot product)", None, _identity, SoftmaxKernel, colour="#7f7f7f"),
    # The speed goals, forward + backward at T = 1024 on the CPU: ida <= 0.9x SDPA, Dense-HIDA and SIDA <= 1.2x.
    "ida": _inverse_distance("IDA (Euclidean)", "euclidean", "#1f77b4", target_ratio=0.9),
    "hida": _inverse_distance("Dense-HIDA (Poincaré ball)", "poincare", "#d62728", sweep=True, target_ratio=1.2),
    "sida": _inverse_distance("SIDA (sphere)", "sphere", "#2ca02c", target_ratio=1.2),
    # The sub-quadratic HIDA family (sections 5.4-5.6): sparse pattern, anchors, streaming summaries.
    "fp-hida": AttentionKind(
        "FP-HIDA (sparse pattern, ball)",
        "poincare",
        GEOMETRIES["poincare"].embed,
        hida_family.build_fp_hida,
        timing=FP_TIMING,
        sizes=("window", "n_global"),
        colour="#1f77b4",
    ),
    "l-hida": AttentionKind(
        "L-HIDA (anchors, ball)",
        "poincare",
        GEOMETRIES["poincare"].embed,
        hida_family.build_l_hida,
        timing=L_TIMING,
        sizes=("n_anchors",),
        colour="#2ca02c",
    ),
    "c-hida": AttentionKind(
        "C-HIDA (streaming summaries, ball)",
        "poincare",
        GEOMETRIES["poincare"].embed,
        hida_family.build_c_hida,
        timing=C_TIMING,
        sizes=("n_summaries",),
        colour="#9467bd",
    ),
}

# Pages that pick the geometry separately (Attention lab, landscapes) offer two kernels: "ida", the
# inverse-distance entry of ATTENTION in the picked geometry (``inverse_distance_kind``), and softmax.
KERNEL_CHOICES: dict[str, str] = {
    "ida": "inverse distance (IDA / HIDA / SIDA)",
    "softmax": ATTENTION["softmax"].label,
}


def inverse_distance_kind(geometry: str) -> str:
    """The key of ATTENTION whose inverse-distance kernel measures in ``geometry``."""
    by_geometry: dict[str, str] = {}
    for key, kind in ATTENTION.items():  # the first (dense) entry per geometry, not the sparse HIDA family
        if kind.geometry is not None:
            by_geometry.setdefault(kind.geometry, key)
    if geometry not in by_geometry:
        raise ValueError(f"geometry must be one of {sorted(by_geometry)} (got {geometry!r})")
    return by_geometry[geometry]


def split_heads(qkv: torch.Tensor, n_heads: int, *, contiguous: bool) -> tuple[torch.Tensor, ...]:
    """(B, T, 3C) projections -> q, k, v, each (B, nh, T, hs). ``contiguous``: one copy of all three
    (measured about 10% off an inverse-distance module's forward + backward at T = 1024 on CPU), else views."""
    B, T, C3 = qkv.shape
    heads = qkv.view(B, T, 3, n_heads, C3 // (3 * n_heads)).permute(2, 0, 3, 1, 4)  # (3, B, nh, T, hs)
    return (heads.contiguous() if contiguous else heads).unbind(0)


class GeoAttention(nn.Module):
    """Q/K/V projections -> per-head kernel (softmax / IDA / HIDA / SIDA) -> output projection."""

    def __init__(self, config: AttentionConfig):
        super().__init__()
        self.config = config
        self.kind = ATTENTION[config.kernel]
        self.kernel = self.kind.build(config)
        self.qkv = nn.Linear(config.d_model, 3 * config.d_model, bias=config.bias)
        self.out = nn.Linear(config.d_model, config.d_model, bias=config.bias)

    def heads(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Each head's output before the output projection, and the queries as projected (before the
        geometry's embedding): (B, T, C) -> (B, nh, T, hs), (B, nh, T, hs). The GeoResolver block gates
        the heads and routes its memory path on those queries."""
        cfg = self.config
        q, k, v = split_heads(
            self.qkv(x), cfg.n_heads, contiguous=self.kind.contiguous_heads
        )  # 3 x (B, nh, T, hs)
        return self.kernel(self.kind.embed(q, cfg.c), self.kind.embed(k, cfg.c), v), q  # (B, nh, T, hs) each

    def check_input(self, x: torch.Tensor) -> None:
        """x must be (B, T >= 1, d_model), of the module's dtype and finite (ValueError naming what is wrong).

        Finiteness is checked on the CPU only: there it is one reduction pass; on a GPU it would stop the
        host at every call, so a GPU user checks the loss instead (as the trainer does)."""
        d = self.config.d_model
        if not isinstance(x, torch.Tensor) or x.dim() != 3:
            shape = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
            raise ValueError(f"x must have shape (B, T, d_model = {d}) (got {shape})")
        if x.shape[1] == 0 or x.shape[2] != d:
            raise ValueError(f"x must have shape (B, T >= 1, d_model = {d}) (got {tuple(x.shape)})")
        weight = self.qkv.weight
        if x.dtype != weight.dtype or x.device != weight.device:
            raise ValueError(
                f"x must have the module's dtype and device {weight.dtype} on {weight.device} (got {x.dtype} on "
                f"{x.device}); convert with x.to(...) or the module with .to(x)"
            )
        if x.device.type == "cpu":
            check_finite("x", x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.check_input(x)
        B, T, C = x.shape
        y = self.heads(x)[0].transpose(1, 2).reshape(B, T, C)  # (B, T, C)
        return self.out(y)
