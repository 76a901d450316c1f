"""What the Orthogonal residuals page and claims measure: defects, worst inputs, norm drift, a 3-D view."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from georesolver_core.device import one_cpu_thread
from georesolver_core.extras.orthogonal import (
    MixerConfig,
    ResidualMixer,
    cayley_apply,
    cayley_eigenvalues,
    cayley_matrix,
    ddl_apply,
    householder_apply,
    hybrid_apply,
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
    return norm_and_gain(kinds, depths, dim, seed, branch, batch)[0]


def norm_and_gain(kinds, depths, dim=16, seed=0, branch=0.0, batch=64) -> tuple[dict, dict]:
    """(``norm_drift``, the shortcut gain) from one pass through the same layers.

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
    return norms, gains


@dataclass(frozen=True)
class OperatorDefects:
    """||M^T M - I||_2 of each operator of the 3-D view (seed 003: 0 for Cayley and Householder)."""

    cayley: float  # Q
    householder: float  # H(k)
    hybrid: float  # G = (1 - gamma) Q + gamma H, at most 4 gamma (1 - gamma)
    ddl: float  # I - beta k k^T, |beta (beta - 2)|


@dataclass(frozen=True)
class OperatorView:
    x: np.ndarray  # (3,) the input vector
    images: dict[str, np.ndarray]  # operator name -> (3,) image of x
    u: np.ndarray  # (3,) generator vectors and reflection normal, for drawing
    v: np.ndarray
    k: np.ndarray
    eigenvalues: np.ndarray  # complex (3,) of Q, closed form
    eigenvalues_numeric: np.ndarray  # complex (3,) of Q by torch.linalg.eigvals
    defects: OperatorDefects
    theta: float  # rotation angle of Q in radians


def _unit_from_angles(azimuth_deg: float, elevation_deg: float) -> Tensor:
    a, e = np.radians(azimuth_deg), np.radians(elevation_deg)
    return torch.tensor([np.cos(e) * np.cos(a), np.cos(e) * np.sin(a), np.sin(e)], dtype=torch.float64)


@one_cpu_thread()
def operator_view(
    beta: float, gamma: float, ddl_beta: float, plane_tilt_deg: float, k_azimuth_deg: float, x_azimuth_deg: float
) -> OperatorView:
    """A vector x in R^3 under Q (generator u = e1, v in the plane tilted by plane_tilt), H(k), the hybrid and DDL."""
    check_range("beta", beta, -1e6, 1e6)
    check_range("gamma", gamma, 0.0, 1.0)
    u = torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64)
    v = _unit_from_angles(90.0, plane_tilt_deg)  # tilt 0: v = e2, the rotation plane is the xy plane
    k = _unit_from_angles(k_azimuth_deg, 0.0)
    x = _unit_from_angles(x_azimuth_deg, 20.0)
    eye = torch.eye(3, dtype=torch.float64)
    mats = {
        "Cayley Q": cayley_matrix(u, v, beta),
        "Householder H": householder_apply(eye, k).T,
        "hybrid G": hybrid_apply(eye, u, v, beta, k, gamma).T,
        "DDL": ddl_apply(eye, k, ddl_beta).T,
    }
    images = {
        "Cayley Q": cayley_apply(x, u, v, beta),
        "Householder H": householder_apply(x, k),
        "hybrid G": hybrid_apply(x, u, v, beta, k, gamma),
        "DDL": ddl_apply(x, k, ddl_beta),
    }
    ev = cayley_eigenvalues(u, v, beta).numpy()
    return OperatorView(
        x=x.numpy(),
        images={name: img.numpy() for name, img in images.items()},
        u=u.numpy(),
        v=v.numpy(),
        k=k.numpy(),
        eigenvalues=ev,
        eigenvalues_numeric=torch.linalg.eigvals(mats["Cayley Q"]).numpy(),
        defects=OperatorDefects(
            cayley=orthogonality_defect(mats["Cayley Q"]),
            householder=orthogonality_defect(mats["Householder H"]),
            hybrid=orthogonality_defect(mats["hybrid G"]),
            ddl=orthogonality_defect(mats["DDL"]),
        ),
        theta=float(np.angle(ev[0])),
    )
