"""A bank of small expert MLPs and the dispatch that mixes the selected ones (sections 10.1, 10.3).

Every router (GSR, the softmax top-k gate, expert choice) produces the same ``Routing``: for each
token K expert slots with weights and a keep mask (False where capacity dropped the token). The bank
evaluates each expert only on the tokens sent to it and sums o(x) = sum_k keep_k w_k E_{i_k}(x).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from georesolver_core.validate import check_positive_int


@dataclass
class Routing:
    """One router's decision for N tokens over E experts, K slots per token."""

    indices: torch.Tensor  # (N, K) long: expert of each slot
    weights: torch.Tensor  # (N, K): mixing weight of each slot (0 where not kept)
    keep: torch.Tensor  # (N, K) bool: False where the slot was dropped (capacity) or unused
    n_experts: int
    aux_loss: torch.Tensor  # scalar: the router's auxiliary loss (load balancing), 0 when none
    wanted: torch.Tensor | None = None  # (N, K) bool: slots requested before capacity (None: = keep)

    @property
    def requested(self) -> torch.Tensor:
        """(N, K) bool: the slots the router asked for before any capacity drop."""
        return self.keep if self.wanted is None else self.wanted


class ExpertBank(nn.Module):
    """E two-layer MLPs dim -> hidden -> dim stored as batched tensors (one parameter per layer)."""

    def __init__(self, n_experts: int, dim: int, hidden: int):
        super().__init__()
        check_positive_int("n_experts", n_experts, 1, 65536)
        check_positive_int("dim", dim, 1, 65536)
        check_positive_int("hidden", hidden, 1, 65536)
        self.n_experts, self.dim, self.hidden = n_experts, dim, hidden
        self.offset = 0  # global id of this bank's first expert
        # nn.Linear's default init, per expert
        b1, b2 = 1.0 / math.sqrt(dim), 1.0 / math.sqrt(hidden)
        self.w1 = nn.Parameter(torch.empty(n_experts, dim, hidden).uniform_(-b1, b1))
        self.b1 = nn.Parameter(torch.empty(n_experts, hidden).uniform_(-b1, b1))
        self.w2 = nn.Parameter(torch.empty(n_experts, hidden, dim).uniform_(-b2, b2))
        self.b2 = nn.Parameter(torch.empty(n_experts, dim).uniform_(-b2, b2))

    def expert(self, e: int, x: torch.Tensor) -> torch.Tensor:
        """E_e(x) = W2 gelu(W1 x + b1) + b2. (n, dim) -> (n, dim)."""
        return F.gelu(x @ self.w1[e] + self.b1[e]) @ self.w2[e] + self.b2[e]

    def shard(self, start: int, stop: int) -> ExpertBank:
        """A bank holding global experts start..stop-1 (a worker's shard), parameters copied."""
        part = ExpertBank(stop - start, self.dim, self.hidden)
        with torch.no_grad():
            for name in ("w1", "b1", "w2", "b2"):
                getattr(part, name).copy_(getattr(self, name)[start:stop])
        part.offset = self.offset + start
        return part

    def mix(self, x: torch.Tensor, routing: Routing) -> torch.Tensor:
        """sum_k keep_k w_k E_{i_k}(x) per token over this bank's experts. x (N, dim) -> (N, dim).

        A shard (``offset`` > 0 or fewer experts) sums only its own experts; the full output is the
        sum over shards, which is what the All-Reduce of section 10.3 computes.
        """
        n, k = routing.indices.shape
        flat_e = routing.indices.reshape(-1)  # (N*K,)
        flat_w = routing.weights.reshape(-1)  # (N*K,)
        sel = routing.keep.reshape(-1)  # (N*K,)
        tok = torch.arange(n, device=x.device).repeat_interleave(k)  # (N*K,) token of each slot
        out = torch.zeros_like(x)
        for e in range(self.n_experts):
            m = sel & (flat_e == self.offset + e)
            if not bool(m.any()):
                continue
            t = tok[m]
            out = out.index_add(0, t, self.expert(e, x[t]) * flat_w[m, None])
        return out
