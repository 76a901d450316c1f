"""HyperGate: curvature-adaptive gating at three levels (paper section 7, module M6).

For head outputs o^h_i of the storage (HIDA) path and the memory path's o^mem_i:

    head level       kappa_h  = sigmoid(a_h)                     one learnable scalar per head
    token level      beta_i   = sigmoid(w_beta . x_i + b_beta)   the boundary between the two paths
    mix              u_i      = beta_i * concat_h(kappa_h o^h_i) + (1 - beta_i) * o^mem_i
    dimension level  G_i      = diag(sigmoid(W_g u_i + b_g)),    h_i = G_i u_i

The dimension gate reads the vector it gates, exactly as Theorem 7.1 states it (h_i = G_i x_i with
G_i = diag(sigma(W_g x_i))), so the theorem applies to this module without change:

    dh_i/du_i = G_i + diag(sigma'(W_g u_i + b_g) * u_i) W_g,
    ||dL/du_i|| >= (lambda_min(G_i) - ||W_g|| ||u_i|| / 4) ||dL/dh_i||,

the 1/4 being max sigma'. ``gate_jacobian`` returns dh_i/du_i for the claim that measures this.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class GateValues:
    """The three gates of one forward pass, for heatmaps. Detached, on the CPU."""

    kappa: torch.Tensor  # (nh,) head gates in (0, 1)
    beta: torch.Tensor  # (B, T) token gates: weight of the storage path
    dim_gate: torch.Tensor  # (B, T, C) diagonal of G_i
    u: torch.Tensor  # (B, T, C) the gated vector u_i (input of the dimension gate)


class HyperGate(nn.Module):
    """Head, token and dimension gates merging the storage and memory paths: (B, nh, T, hs), (B, T, C) -> (B, T, C)."""

    def __init__(self, d_model: int, n_heads: int, *, memory: bool):
        super().__init__()
        self.n_heads = n_heads
        self.memory = memory
        # kappa starts at sigmoid(2) ~ 0.88 and G at ~0.88: the gate opens wide at initialisation so
        # the residual stream sees the attention output (a closed gate would start training at zero gradient).
        self.head_logit = nn.Parameter(torch.full((n_heads,), 2.0))
        self.token = nn.Linear(d_model, 1) if memory else None
        self.dim = nn.Linear(d_model, d_model)
        nn.init.zeros_(self.dim.weight)
        nn.init.constant_(self.dim.bias, 2.0)
        self.last: GateValues | None = None
        self.record = False  # keep the gate values of the next forward passes (for heatmaps)

    def kappa(self) -> torch.Tensor:
        return torch.sigmoid(self.head_logit)  # (nh,)

    def mix(
        self, x: torch.Tensor, heads: torch.Tensor, memory: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """u_i = beta_i kappa-weighted heads + (1 - beta_i) memory. Returns u (B, T, C) and beta (B, T)."""
        B, nh, T, hs = heads.shape
        main = (heads * self.kappa().view(1, nh, 1, 1)).transpose(1, 2).reshape(B, T, nh * hs)  # (B, T, C)
        if memory is None or self.token is None:
            return main, torch.ones(B, T, dtype=x.dtype, device=x.device)
        beta = torch.sigmoid(self.token(x)).squeeze(-1)  # (B, T)
        return beta.unsqueeze(-1) * main + (1 - beta.unsqueeze(-1)) * memory, beta

    def dimension(self, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """h = G u with G = diag(sigmoid(W_g u + b_g)). Returns h and the diagonal of G, both (..., C)."""
        g = torch.sigmoid(self.dim(u))
        return g * u, g

    def forward(self, x: torch.Tensor, heads: torch.Tensor, memory: torch.Tensor | None = None) -> torch.Tensor:
        u, beta = self.mix(x, heads, memory)
        h, g = self.dimension(u)
        if self.record:
            self.last = GateValues(*(t.detach().cpu() for t in (self.kappa(), beta, g, u)))
        return h


def gate_jacobian(gate: HyperGate, u: torch.Tensor) -> torch.Tensor:
    """dh_i/du_i = G_i + diag(sigma'(z_i) u_i) W_g for each row u_i. (N, C) -> (N, C, C)."""
    z = gate.dim(u)  # (N, C)
    s = torch.sigmoid(z)
    ds = s * (1 - s)  # sigma'(z) <= 1/4
    W = gate.dim.weight  # (C_out, C_in)
    return torch.diag_embed(s) + (ds * u).unsqueeze(-1) * W.unsqueeze(0)  # (N, C, C)


@dataclass
class GateBound:
    """Theorem 7.1 per token of one gate: the worst gradient ratio against the lower bound."""

    u_norm: torch.Tensor  # (N,) ||u_i||
    sigma_min: torch.Tensor  # (N,) smallest singular value of dh_i/du_i = min ||dL/du|| / ||dL/dh|| over dL/dh
    lambda_min: torch.Tensor  # (N,) smallest gate value min_c G_i[c, c]
    bound: torch.Tensor  # (N,) lambda_min(G_i) - ||W_g||_2 ||u_i|| / 4
    w_norm: float  # ||W_g||_2, spectral norm

    @property
    def vacuous(self) -> torch.Tensor:
        """(N,) bool: the bound is <= 0 and says nothing."""
        return self.bound <= 0


@torch.no_grad()
def gate_bound(gate: HyperGate, u: torch.Tensor) -> GateBound:
    """Theorem 7.1 evaluated on the rows of u (N, C), in float64."""
    u = u.reshape(-1, u.shape[-1]).double()
    g64 = HyperGate(u.shape[-1], gate.n_heads, memory=False).double()
    g64.dim.load_state_dict({k: v.double() for k, v in gate.dim.state_dict().items()})
    J = gate_jacobian(g64, u)  # (N, C, C)
    w_norm = float(torch.linalg.matrix_norm(g64.dim.weight, ord=2))
    lam = torch.sigmoid(g64.dim(u)).min(dim=-1).values
    return GateBound(
        u.norm(dim=-1), torch.linalg.svdvals(J)[:, -1], lam, lam - w_norm * u.norm(dim=-1) / 4, w_norm
    )
