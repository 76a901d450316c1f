"""What the Orthogonal residuals claims and page measure: defects, worst inputs, norm drift and gain.

The page's lab (configs in, the 3-D view and the drift out) is ``labs.orthogonal``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from georesolver_core.device import one_cpu_thread
from georesolver_core.extras.orthogonal import (
    MixerConfig,
    ResidualMixer,
    cayley_matrix,
)
from georesolver_core.validate import check_positive_int, check_range


def orthogonality_defect(m: Tensor) -> float:
    """||M^T M - I||_2, with the product taken in float64 so that it measures M, not the product's rounding."""
    m = m.to(torch.float64)
    eye = torch.eye(m.shape[-1], dtype=torch.float64)
    return float(torch.linalg.matrix_norm(m.transpose(-1, -2) @ m - eye, ord=2).max())


def _draw(g: torch.Generator, dtype) -> tuple[Tensor, Tensor]:
    """A random (u, v): d in {2, 3, 16, 64}, norms 1e-4..1e4, and one time in three v nearly parallel to u."""
    d = (2, 3, 16, 64)[int(torch.randint(4, (1,), generator=g))]
    su, sv = (10 ** (8 * torch.rand(2, generator=g, dtype=torch.float64) - 4)).tolist()
    u = su * torch.randn(d, generator=g, dtype=torch.float64)
    if float(torch.rand(1, generator=g)) < 1 / 3:  # nearly parallel: the plane is ill-conditioned
        v = 3.0 * u + 1e-6 * su * torch.randn(d, generator=g, dtype=torch.float64)
    else:
        v = sv * torch.randn(d, generator=g, dtype=torch.float64)
    return u.to(dtype), v.to(dtype)


@one_cpu_thread()  # tiny tensors: a second thread only adds synchronisation (8x slower measured)
def worst_cayley_defect(
    beta: float, dtype=torch.float32, trials: int = 24, climb: int = 20, seed: int = 0
) -> float:
    """The largest ||Q^T Q - I||_2 found for this beta: ``trials`` random draws, then ``climb`` steps of a
    hill-climb from the worst one (relative perturbations of u and v kept when the defect grows)."""
    g = torch.Generator().manual_seed(seed)
    best, best_uv = -1.0, None
    for _ in range(trials):
        u, v = _draw(g, dtype)
        dft = orthogonality_defect(cayley_matrix(u, v, beta))
        if dft > best:
            best, best_uv = dft, (u, v)
    u, v = best_uv
    for i in range(climb):
        step = 10.0 ** -(1 + i % 6)  # cycle through perturbation sizes 1e-1 .. 1e-6
        u2 = u * (1 + step * torch.randn(u.shape, generator=g, dtype=torch.float64).to(dtype))
        v2 = v * (1 + step * torch.randn(v.shape, generator=g, dtype=torch.float64).to(dtype))
        dft = orthogonality_defect(cayley_matrix(u2, v2, beta))
        if dft > best:
            best, u, v = dft, u2, v2
    return best


@one_cpu_thread()
def norm_drift(
    kinds: Sequence[str], depths: Sequence[int], dim: int = 16, seed: int = 0, branch: float = 0.0, batch: int = 64
) -> dict[str, list[float]]:
    """Mean |x_L| / |x_0| through max(depths) freshly initialised ResidualMixer layers of each kind (float32).

    ``branch`` > 0 adds a random residual branch branch * F(x) (a fresh tanh MLP per layer) to every kind, as
    in a transformer block whose shortcut is the mixer; 0 measures the shortcut alone.
    """
    return norm_and_gain(kinds, depths, dim, seed, branch, batch).norm


@dataclass(frozen=True)
class NormGain:
    """Mean norm ratio and shortcut gain of each residual kind at each depth, from one pass (``norm_and_gain``)."""

    depths: list[int]  # the depths measured, sorted
    norm: dict[str, list[float]]  # kind -> mean |x_L| / |x_0| at each depth (``norm_drift``)
    gain: dict[str, list[float]]  # kind -> mean product of the shortcuts' gains |S_l(x)| / |x| up to each depth


def norm_and_gain(kinds, depths, dim=16, seed=0, branch=0.0, batch=64) -> NormGain:
    """``norm_drift`` and the shortcut gain from one pass through the same layers.

    The shortcut gain is what an orthogonal shortcut preserves whatever the branch: the mean of
    prod_{l <= L} |S_l(x_{l-1})| / |x_{l-1}| along the same trajectory, leaving out the branch's
    contribution. Cayley Q and Householder H keep it at 1 (|Q x| = |x|) for every branch scale; with
    branch > 0 the norm still grows, by at most branch sqrt(d) per layer (|tanh| <= 1).
    """
    check_positive_int("dim", dim, 2, 4096)
    check_range("branch", branch, 0.0, 10.0)
    depths = sorted(int(d) for d in depths)
    norms: dict[str, list[float]] = {}
    gains: dict[str, list[float]] = {}
    for kind in kinds:
        torch.manual_seed(seed)
        x0 = torch.randn(batch, dim)  # (B, d)
        layers = [ResidualMixer(MixerConfig(kind=kind, dim=dim, hidden=dim)) for _ in range(depths[-1])]
        branches = [torch.nn.Linear(dim, dim) for _ in range(depths[-1])] if branch > 0 else []
        x, gain, ratios, products = x0, torch.ones(batch), [], []
        with torch.no_grad():
            for i, layer in enumerate(layers, start=1):
                before = x.norm(dim=-1)  # (B,)
                x, _ = layer(x)
                gain = gain * x.norm(dim=-1) / before
                if branches:
                    x = x + branch * torch.tanh(branches[i - 1](x))
                if i in depths:
                    ratios.append(float((x.norm(dim=-1) / x0.norm(dim=-1)).mean()))
                    products.append(float(gain.mean()))
        norms[kind], gains[kind] = ratios, products
    return NormGain(depths=depths, norm=norms, gain=gains)
