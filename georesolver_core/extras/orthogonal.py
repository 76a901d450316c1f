"""Orthogonal residual mixing (seed 003): data-dependent Cayley rotation, Householder reflection, the hybrid.

The residual shortcut x -> x is replaced by an operator M(x) applied to x:

    Cayley      Q(x) = (I + beta/2 A)^-1 (I - beta/2 A),   A = u v^T - v u^T   (seed section 2.1)
    Householder H(k) = I - 2 k k^T / |k|^2                                      (beta = 2 of DDL)
    hybrid      G_gamma(x) = gamma Q(x) x + (1 - gamma) H(k(x)) x               (seed section 2.2)
    DDL         (I - beta k k^T / |k|^2) x, beta continuous: orthogonal only at beta in {0, 2}
    additive    x + F(x): the plain residual baseline

Every operator here is applied to vectors in O(d) without forming a d x d matrix; ``cayley_matrix`` and
``cayley_dense`` build the matrix for tests and pictures only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from georesolver_core.validate import check_finite

RESIDUAL_KINDS = {
    "additive": "additive residual x + F(x)",
    "cayley": "data-dependent Cayley rotation Q(x) x",
    "householder": "Householder reflection H(k(x)) x",
    "hybrid": "hybrid gamma Q x + (1 - gamma) H x",
    "ddl": "Deep Delta Learning (I - beta k k^T) x",
}


def _beta(beta, like: Tensor) -> Tensor:
    """beta as a float64 tensor broadcastable over like's batch dims (...,); non-finite -> ValueError."""
    if not isinstance(beta, Tensor):
        try:
            value = float(beta)
        except (TypeError, ValueError):
            raise ValueError(f"beta must be a finite real number (got {beta!r})") from None
        if not math.isfinite(value):
            raise ValueError(f"beta must be a finite real number (got {beta!r})")
        return torch.tensor(value, dtype=torch.float64, device=like.device)
    check_finite("beta", beta)
    return beta.to(torch.float64)


def _unit(x: Tensor) -> tuple[Tensor, Tensor]:
    """x / |x| and |x|; a zero vector stays zero (no direction) instead of 0/0."""
    n = x.norm(dim=-1, keepdim=True)
    return torch.where(n > 0, x / n.clamp_min(torch.finfo(x.dtype).tiny), torch.zeros_like(x)), n


def cayley_plane(u: Tensor, v: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """An orthonormal basis (e1, e2) of span{u, v} and the area |u ^ v| = |u| |v| sin(angle), so A = area J.

    With e1 = u/|u| and v = |v|(cos phi e1 + sin phi e2): u v^T - v u^T = |u||v| sin phi (e1 e2^T - e2 e1^T).
    Q^T Q = I holds to rounding only if e1, e2 are orthonormal to rounding, so the basis is built in float64
    and Gram-Schmidt is repeated three times: when v is nearly parallel to u, what is left of v after one
    pass is mostly rounding noise that still leans on e1, and each further pass removes that lean by a factor
    of about the unit roundoff over sin phi (measured: two float32 passes left e1.e2 = 5e-3). A float32 input
    is exact in float64, so its plane is then resolved to float64 rounding before the cast back.
    Returns e1, e2 (..., d) in u's dtype and area (..., 1) in float64. Parallel or zero u, v: e2 = 0, area = 0.
    """
    u64, v64 = u.to(torch.float64), v.to(torch.float64)
    e1, nu = _unit(u64)
    w, nv = _unit(v64)
    for _ in range(3):
        w = w - (w * e1).sum(-1, keepdim=True) * e1
    e2, sin_phi = _unit(w)
    area = torch.where(sin_phi > 0, nu * nv * sin_phi, torch.zeros_like(sin_phi))  # (..., 1)
    return e1.to(u.dtype), e2.to(u.dtype), area


def _half_angle(area: Tensor, beta) -> Tensor:
    b = _beta(beta, area)
    if b.dim():
        b = b.unsqueeze(-1)  # (...,) -> (..., 1) beside area
    t = torch.where(area > 0, b * area / 2, torch.zeros_like(area))  # beta = 0 with area = inf stays 0
    return torch.atan(t)


def cayley_half_angle(u: Tensor, v: Tensor, beta) -> Tensor:
    """atan(t), t = beta |u ^ v| / 2: Q rotates span{u, v} by theta = 2 atan(t) in (-pi, pi). Shape (..., 1)."""
    return _half_angle(cayley_plane(u, v)[2], beta)


def cayley_apply(x: Tensor, u: Tensor, v: Tensor, beta) -> Tensor:
    """Q x with Q = (I + beta/2 A)^-1 (I - beta/2 A), A = u v^T - v u^T, in O(d) per vector. Seed section 2.1.

    Why this is exact, not an approximation: A = area * J with J = e1 e2^T - e2 e1^T acting only on the
    plane P = span{u, v} (cayley_plane). On P's orthogonal complement A = 0, so Q = I there. On P, in the
    basis (e1, e2), I + tJ = [[1, t], [-t, 1]] with t = beta area / 2, and the 2 x 2 Cayley transform is
        (I + tJ)^-1 (I - tJ) = 1/(1 + t^2) [[1 - t^2, -2t], [2t, 1 - t^2]] = rotation by theta = 2 atan(t).
    So Q = I + (cos theta - 1)(e1 e1^T + e2 e2^T) + sin theta (e2 e1^T - e1 e2^T), the same matrix as the
    inverse, in closed form. cos theta - 1 = -2 sin^2(theta/2) and sin theta = 2 sin(theta/2) cos(theta/2) are
    taken from theta/2 = atan(t), which stays accurate for any finite beta: t^2 (which overflows float32 at
    t ~ 2e19) is never formed, and at beta = 1e4 or more theta approaches pi without cancelling.
    Shapes: x, u, v (..., d) broadcastable; beta a finite float or a tensor (...,). Returns (..., d).
    """
    check_finite("x", x)
    check_finite("u", u)
    check_finite("v", v)
    e1, e2, area = cayley_plane(u, v)
    half = _half_angle(area, beta)  # (..., 1) float64
    sh, ch = torch.sin(half), torch.cos(half)
    cm1 = (-2.0 * sh * sh).to(x.dtype)  # cos theta - 1
    sn = (2.0 * sh * ch).to(x.dtype)  # sin theta
    a = (e1 * x).sum(-1, keepdim=True)  # (..., 1) coordinates of x in the plane
    b = (e2 * x).sum(-1, keepdim=True)
    return x + cm1 * (a * e1 + b * e2) + sn * (a * e2 - b * e1)


def cayley_matrix(u: Tensor, v: Tensor, beta) -> Tensor:
    """The matrix Q (..., d, d) assembled from the closed form (columns Q e_i). For tests and pictures.

    u, v (..., d); beta a float or (...,)."""
    b = _beta(beta, u)
    if b.dim():
        b = b.unsqueeze(-1)  # (..., 1): one beta for the d rows of the identity
    eye = torch.eye(u.shape[-1], dtype=u.dtype, device=u.device)  # (d, d): row i is e_i
    rows = cayley_apply(eye, u.unsqueeze(-2), v.unsqueeze(-2), b)  # (..., d, d): row i is Q e_i
    return rows.transpose(-1, -2)


def cayley_dense(u: Tensor, v: Tensor, beta: float) -> Tensor:
    """Reference: Q = solve(I + beta/2 A, I - beta/2 A) with a dense d x d solve (O(d^3)); u, v (d,)."""
    b = _beta(beta, u).item()
    a = torch.outer(u, v) - torch.outer(v, u)  # (d, d) skew-symmetric
    eye = torch.eye(u.shape[-1], dtype=u.dtype, device=u.device)
    return torch.linalg.solve(eye + b / 2 * a, eye - b / 2 * a)


def cayley_eigenvalues(u: Tensor, v: Tensor, beta) -> Tensor:
    """Closed-form spectrum of Q for u, v (d,): e^{+-i theta} on the plane and 1 (d - 2 times). Complex (d,)."""
    theta = 2 * cayley_half_angle(u, v, beta).reshape(())
    d = u.shape[-1]
    rot = torch.polar(torch.ones(2, dtype=torch.float64), torch.stack([theta, -theta]))
    return torch.cat([rot, torch.ones(d - 2, dtype=torch.complex128)])


def householder_apply(x: Tensor, k: Tensor) -> Tensor:
    """H(k) x = x - 2 k (k.x) / |k|^2 in O(d): the reflection across the hyperplane k^perp (det -1).

    A zero k has no hyperplane: it returns x unchanged (H = I), which a learned k(x) can reach only on a
    measure-zero set. Shapes: x, k (..., d) broadcastable.
    """
    return ddl_apply(x, k, 2.0)


def ddl_apply(x: Tensor, k: Tensor, beta) -> Tensor:
    """Deep Delta Learning shortcut (I - beta k k^T / |k|^2) x. Eigenvalue 1 - beta along k, 1 elsewhere:
    orthogonal only at beta in {0, 2} (|1 - beta| = 1). beta: finite float or tensor (...,)."""
    check_finite("x", x)
    check_finite("k", k)
    kh, _ = _unit(k)
    b = _beta(beta, x).to(x.dtype)
    if b.dim():
        b = b.unsqueeze(-1)
    return x - b * kh * (kh * x).sum(-1, keepdim=True)


def hybrid_apply(x: Tensor, u: Tensor, v: Tensor, beta, k: Tensor, gamma) -> Tensor:
    """G_gamma x = gamma Q(u, v, beta) x + (1 - gamma) H(k) x. Seed section 2.2. gamma in [0, 1], (...,) or float.

    Orthogonal only at gamma in {0, 1}: G^T G - I = gamma (1 - gamma) (Q^T H + H^T Q - 2 I), and
    Q^T H + H^T Q = 2 I would need Q = H, impossible since det Q = +1 and det H = -1.
    """
    g = torch.as_tensor(gamma, dtype=x.dtype, device=x.device)
    if g.dim():
        g = g.unsqueeze(-1)
    if bool(((g < 0) | (g > 1) | ~torch.isfinite(g)).any()):
        raise ValueError(f"gamma must lie in [0, 1] (got values in [{float(g.min()):g}, {float(g.max()):g}])")
    return g * cayley_apply(x, u, v, beta) + (1 - g) * householder_apply(x, k)


def gate_regulariser(gamma: Tensor) -> Tensor:
    """Midpoint-collapse regulariser L_gate = 4 gamma (1 - gamma): 1 at gamma = 1/2, 0 at gamma in {0, 1}.

    Symmetric about 1/2, so its gradient there is 0 (the seed's zero-gradient theorem, Theorem 7.3): a gate
    that starts at the midpoint is pushed away only by the task loss.
    """
    return 4 * gamma * (1 - gamma)


# --- Learned mixers -----------------------------------------------------------------------------------------

# Heads each kind reads from the shared trunk: vectors (d each) and scalars (1 each).
_HEADS = {
    "additive": (("f",), ()),
    "cayley": (("u", "v"), ("beta",)),
    "householder": (("k",), ()),
    "hybrid": (("u", "v", "k"), ("beta", "gamma")),
    "ddl": (("k",), ("beta",)),
}


@dataclass(frozen=True)
class MixerConfig:
    kind: str = "hybrid"  # one of RESIDUAL_KINDS
    dim: int = 8  # d: size of the residual stream
    hidden: int = 32  # width of the trunk that computes u, v, k, beta, gamma (or F) from x


def mixer_params(kind: str, dim: int, hidden: int) -> int:
    """Parameter count of ResidualMixer(MixerConfig(kind, dim, hidden)) without building it."""
    vecs, scalars = _HEADS[kind]
    return dim * hidden + hidden + len(vecs) * (hidden * dim + dim) + len(scalars) * (hidden + 1)


def matched_hidden(kind: str, dim: int, target: int) -> int:
    """The trunk width whose parameter count is closest to target: baselines compared at equal size."""
    return min(range(1, 4 * target), key=lambda h: abs(mixer_params(kind, dim, h) - target))


class ResidualMixer(nn.Module):
    """One residual-mixing step x -> M(x) x (or x + F(x) for "additive"), all heads on one tanh trunk.

    beta of Cayley = softplus (any positive magnitude; the sign of the rotation is in u, v);
    beta of DDL = 2 sigmoid in (0, 2), its usual range; gamma = sigmoid, starting at the midpoint 1/2.
    ``control`` (optional, same shape as x) is what the heads read instead of x: the echo task feeds a
    distractor there while the operator still acts on x.
    """

    def __init__(self, config: MixerConfig):
        super().__init__()
        if config.kind not in RESIDUAL_KINDS:
            raise ValueError(f"kind must be one of {sorted(RESIDUAL_KINDS)} (got {config.kind!r})")
        self.config = config
        d, h = config.dim, config.hidden
        vecs, scalars = _HEADS[config.kind]
        self.trunk = nn.Linear(d, h)
        self.vec = nn.ModuleDict({name: nn.Linear(h, d) for name in vecs})
        self.scalar = nn.ModuleDict({name: nn.Linear(h, 1) for name in scalars})
        if "gamma" in self.scalar:
            nn.init.zeros_(self.scalar["gamma"].weight)  # gamma(x) = 1/2 at init: the midpoint
            nn.init.zeros_(self.scalar["gamma"].bias)

    def heads(self, x: Tensor, control: Tensor | None = None) -> dict[str, Tensor]:
        z = torch.tanh(self.trunk(x if control is None else control))  # (..., h)
        out = {name: lin(z) for name, lin in self.vec.items()}  # (..., d) each
        for name, lin in self.scalar.items():
            s = lin(z).squeeze(-1)  # (...,)
            if name == "gamma":
                out[name] = torch.sigmoid(s)
            elif self.config.kind == "ddl":
                out[name] = 2 * torch.sigmoid(s)
            else:
                out[name] = nn.functional.softplus(s)
        return out

    def forward(self, x: Tensor, control: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        """(..., d) -> ((..., d), gamma (...,) for the hybrid, else None)."""
        p = self.heads(x, control)
        kind = self.config.kind
        if kind == "additive":
            return x + p["f"], None
        if kind == "cayley":
            return cayley_apply(x, p["u"], p["v"], p["beta"]), None
        if kind == "householder":
            return householder_apply(x, p["k"]), None
        if kind == "ddl":
            return ddl_apply(x, p["k"], p["beta"]), None
        return hybrid_apply(x, p["u"], p["v"], p["beta"], p["k"], p["gamma"]), p["gamma"]


class MixerStack(nn.Module):
    """n_layers ResidualMixer steps of one kind; returns the output and the gates of each layer (or None)."""

    def __init__(self, config: MixerConfig, n_layers: int = 1):
        super().__init__()
        self.layers = nn.ModuleList(ResidualMixer(config) for _ in range(n_layers))

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor | None]:
        gates = []
        for layer in self.layers:
            x, g = layer(x)
            if g is not None:
                gates.append(g)
        return x, (torch.stack(gates) if gates else None)
