"""Landscape of a trained model: a 2-D slice along two random filter-normalised directions.

The anchor is Li et al.'s loss-landscape method (random directions d_1, d_2, each filter of d
rescaled to the norm of the same filter of theta; plot L(theta + a d_1 + b d_2)). Here some
parameters live on a manifold (prototype keys in the Poincaré ball or on the sphere, trained with
geoopt's RiemannianAdam), and theta + a d_1 would leave it. For those the directions are tangent
vectors u_1, u_2 at each key and the slice moves along the manifold:

    key_i(a, b) = exp_{key_i}(a u_1,i + b u_2,i),

so every point of the slice is a valid model. A tangent direction is filter-normalised like the
Euclidean ones: its Riemannian length equals the key's own size, its geodesic distance from the
manifold's origin (the centre of the ball, the north pole of the sphere, 0 in the plane).

The model (trained here, a few hundred full-batch steps on CPU): an MLP encoder maps 2-D inputs
into the geometry, attention over learnable prototype keys (IDA or softmax, ``LossSetup.weights``)
mixes learnable class-logit values, cross-entropy on a synthetic two-blobs-per-class task.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass

import geoopt
import numpy as np
import torch
from torch import nn
from torch.nn.utils import skip_init

from georesolver_core.geometry import GEOMETRIES, check_geometry
from georesolver_core.landscape.descent import manifold_of
from georesolver_core.landscape.loss import LossSetup, check_kernel, check_tau
from georesolver_core.validate import check_curvature, check_eps, check_positive_int, check_range


@dataclass(frozen=True)
class SliceModelConfig:
    geometry: str = "poincare"  # where the prototype keys live
    kernel: str = "ida"  # "ida" or "softmax" (see attention.layer.KERNEL_CHOICES)
    c: float = 1.0  # ball curvature parameter, k = -c
    eps: float = 0.05  # IDA regulariser
    tau: float = 1.0  # softmax temperature
    n_prototypes: int = 8  # learnable keys
    n_classes: int = 3
    hidden: int = 16  # encoder width
    dim: int = 2  # embedding size (ambient size on the sphere, >= 2)
    n_samples: int = 384  # training points
    steps: int = 200  # full-batch RiemannianAdam steps
    lr: float = 0.05
    seed: int = 0

    def __post_init__(self):
        check_geometry(self.geometry)
        check_kernel(self.kernel)
        check_curvature(self.c)
        check_eps(self.eps)
        check_tau(self.tau)
        check_positive_int("n_prototypes", self.n_prototypes, 2, 256)
        check_positive_int("n_classes", self.n_classes, 2, 16)
        check_positive_int("hidden", self.hidden, 1, 1024)
        check_positive_int("dim", self.dim, 2, 64)
        check_positive_int("n_samples", self.n_samples, 8, 100_000)
        check_positive_int("steps", self.steps, 1, 100_000)
        check_range("lr", self.lr, 1e-6, 10.0)


def blobs_task(n: int, n_classes: int, *, seed: int = 0, dtype=torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
    """Two Gaussian blobs per class in the plane, centres drawn on a circle of radius 2. x (n, 2), y (n,).

    Example: with 3 classes, x = [1.7, -0.4] might carry label 2 (its blob centre is at [1.8, -0.6]).
    """
    g = torch.Generator().manual_seed(int(seed))
    angles = 2 * math.pi * torch.randperm(2 * n_classes, generator=g).double() / (2 * n_classes)
    centres = 2.0 * torch.stack([torch.cos(angles), torch.sin(angles)], dim=-1)  # (2C, 2)
    blob = torch.randint(0, 2 * n_classes, (n,), generator=g)
    x = centres[blob] + 0.45 * torch.randn(n, 2, generator=g, dtype=torch.float64)
    return x.to(dtype), blob % n_classes


def _linear(n_in: int, n_out: int, g: torch.Generator) -> nn.Linear:
    """``nn.Linear(n_in, n_out)`` with its default initialisation drawn from ``g``, not from torch's global
    generator: that one is shared by every thread of the process, so two sessions training at once would
    draw from each other's seeds (and reseeding it would reset everyone else's stream)."""
    layer = skip_init(nn.Linear, n_in, n_out)
    bound = 1 / math.sqrt(n_in)  # kaiming_uniform_(a=sqrt(5)) on the weight, as nn.Linear.reset_parameters
    with torch.no_grad():
        nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=g)
        nn.init.uniform_(layer.bias, -bound, bound, generator=g)
    return layer


class ProtoNet(nn.Module):
    """Encoder -> point of the geometry -> attention over prototype keys -> class logits."""

    def __init__(self, config: SliceModelConfig):
        super().__init__()
        self.config = config
        g = torch.Generator().manual_seed(config.seed)
        enc = torch.Generator().manual_seed(config.seed)  # the stream torch.manual_seed(seed) would give nn.Linear
        self.encoder = nn.Sequential(
            _linear(2, config.hidden, enc), nn.Tanh(), _linear(config.hidden, config.dim, enc)
        )
        manifold = manifold_of(config.geometry, config.c)
        init = 0.5 * torch.randn(config.n_prototypes, config.dim, generator=g)
        self.keys = geoopt.ManifoldParameter(self._embed(init).detach(), manifold=manifold)
        self.values = nn.Parameter(0.1 * torch.randn(config.n_prototypes, config.n_classes, generator=g))
        self.attention = LossSetup(
            kernel=config.kernel, eps=config.eps, geometry=config.geometry, c=config.c, tau=config.tau
        )  # the weights of the landscape kernels, over the prototype keys

    def _embed(self, z: torch.Tensor) -> torch.Tensor:
        return GEOMETRIES[self.config.geometry].embed(z, self.config.c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q = self._embed(self.encoder(x))  # (n, dim)
        w = self.attention.weights(q, self.keys)  # (n, n_prototypes)
        return w @ self.values  # (n, n_classes)


@dataclass
class TrainedModel:
    model: ProtoNet
    x: torch.Tensor
    y: torch.Tensor
    history: list[float]  # training loss per step
    accuracy: float


def train_model(
    config: SliceModelConfig,
    callback: Callable[[int, float], None] | None = None,
    device: torch.device | str = "cpu",
) -> TrainedModel:
    """Full-batch RiemannianAdam on the blobs task; ``callback(step, loss)`` after every step."""
    model = ProtoNet(config).to(device)  # seeded by its own generators (``_linear``)
    x, y = blobs_task(config.n_samples, config.n_classes, seed=config.seed)
    x, y = x.to(device), y.to(device)
    opt = geoopt.optim.RiemannianAdam(model.parameters(), lr=config.lr)
    history = []
    for step in range(config.steps):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        history.append(loss.item())
        if callback is not None:
            callback(step, history[-1])
    with torch.no_grad():
        acc = float((model(x).argmax(-1) == y).float().mean())
    return TrainedModel(model, x, y, history, acc)


def _origin_distance(p: torch.Tensor, geometry: str, c: float) -> torch.Tensor:
    """Per-row geodesic distance from the manifold's origin (the north pole e_d on the sphere). (n, d) -> (n,)."""
    geo = GEOMETRIES[geometry]
    return geo.distance(geo.origin(p.shape[-1], dtype=p.dtype, device=p.device).expand_as(p), p, c)


def filter_normalised_directions(model: ProtoNet, *, seed: int = 0) -> dict[str, torch.Tensor]:
    """One random direction per parameter, filter-normalised (Li et al.; tangent for manifold ones).

    Matrices: each row (a filter / neuron) rescaled to the norm of the same row of the parameter.
    Vectors (biases): zero, as Li et al. do. Manifold parameters: a random tangent vector per row,
    rescaled to Riemannian length = the row's distance from the origin (module docstring).
    """
    g = torch.Generator().manual_seed(int(seed))
    out = {}
    for name, p in model.named_parameters():
        d = torch.randn(p.shape, generator=g, dtype=p.dtype).to(p.device)
        if isinstance(p, geoopt.ManifoldParameter):
            m = p.manifold
            u = m.proju(p.detach(), d)  # (n, d) tangent at each row
            rlen = m.norm(p.detach(), u) if isinstance(m, geoopt.PoincareBall) else u.norm(dim=-1)
            size = _origin_distance(p.detach(), model.config.geometry, model.config.c)
            out[name] = u * (size / rlen.clamp_min(torch.finfo(u.dtype).tiny))[:, None]
        elif p.dim() <= 1:
            out[name] = torch.zeros_like(p)
        else:
            rows = d.reshape(d.shape[0], -1)
            scale = p.detach().reshape(p.shape[0], -1).norm(dim=-1) / rows.norm(dim=-1).clamp_min(1e-12)
            out[name] = (rows * scale[:, None]).reshape(p.shape)
    return out


@dataclass
class ModelSlice:
    """Loss over the (a, b) plane of two directions, and how far the slice strayed from the manifold."""

    a: np.ndarray  # (R,)
    b: np.ndarray  # (R,)
    loss: np.ndarray  # (R, R) loss[i, j] at (a[j], b[i])
    accuracy: np.ndarray  # (R, R)
    geometry: str
    max_violation: float  # max over the slice of the manifold constraint error (0 in the plane)
    additive_off_manifold: float  # fraction of slice points where theta + a d1 + b d2 would leave it
    centre_loss: float


def _violation(p: torch.Tensor, geometry: str, c: float) -> float:
    """How far rows are from the manifold: ball -> max(0, sqrt(c)|x| - 1); sphere -> max ||x| - 1|; plane 0."""
    return float(GEOMETRIES[geometry].outside(p, c).max())


OFF_TOL = 1e-4  # off the manifold beyond rounding (the exponential map keeps rows within ~1e-15)


def _off_manifold(p: torch.Tensor, geometry: str, c: float) -> bool:
    return bool((GEOMETRIES[geometry].outside(p, c) > OFF_TOL).any())


def model_slice(trained: TrainedModel, *, span: float = 1.0, resolution: int = 21, seed: int = 0) -> ModelSlice:
    """L(theta(a, b)) for a, b in [-span, span]: Euclidean parameters move by a d_1 + b d_2, manifold
    parameters by exp_theta(a u_1 + b u_2).

    The model is never written: each point is evaluated on a private copy, because a trained model may be
    shared (the app caches one for every session) and moving it in place would let concurrent slices read
    each other's moves. (``torch.func.functional_call`` is no way out: it swaps the module's own attributes
    for the duration of the call, which another thread sees.)
    """
    span = check_range("span", span, 1e-3, 10.0)
    resolution = check_positive_int("resolution", resolution, 3, 201)
    model = copy.deepcopy(trained.model)  # ours to move; trained.model is only read
    cfg = model.config
    d1 = filter_normalised_directions(model, seed=seed)
    d2 = filter_normalised_directions(model, seed=seed + 1)
    params = dict(model.named_parameters())
    theta = {k: p.detach().clone() for k, p in params.items()}
    axis = np.linspace(-span, span, resolution)
    loss = np.zeros((resolution, resolution))
    acc = np.zeros((resolution, resolution))
    worst, off = 0.0, 0
    with torch.no_grad():
        for i, b in enumerate(axis):
            for j, a in enumerate(axis):
                for k, p in params.items():
                    step = a * d1[k] + b * d2[k]
                    if isinstance(p, geoopt.ManifoldParameter):
                        p.copy_(p.manifold.expmap(theta[k], step))
                        worst = max(worst, _violation(p, cfg.geometry, cfg.c))
                        off += _off_manifold(theta[k] + step, cfg.geometry, cfg.c)
                    else:
                        p.copy_(theta[k] + step)
                logits = model(trained.x)
                loss[i, j] = float(nn.functional.cross_entropy(logits, trained.y))
                acc[i, j] = float((logits.argmax(-1) == trained.y).float().mean())
        centre = float(nn.functional.cross_entropy(trained.model(trained.x), trained.y))
    has_manifold = any(isinstance(p, geoopt.ManifoldParameter) for p in params.values())
    return ModelSlice(
        a=axis,
        b=axis.copy(),
        loss=loss,
        accuracy=acc,
        geometry=cfg.geometry,
        max_violation=worst,
        additive_off_manifold=off / resolution**2 if has_manifold else 0.0,  # 0 in the plane: nothing is off
        centre_loss=centre,
    )
