"""C-HIDA (M4): streaming hyperbolic inverse-distance attention over c summaries (paper section 5.6).

Tokens arrive one at a time. The first c keys open one summary each (count 1, value v_t); after
that key k_t joins its nearest summary k*(t) = argmin_k d_H(k_t, s_k), which moves to the weighted
gyromidpoint of (s_k*, weight n_k*) and (k_t, weight 1) (geoopt's ``weighted_midpoint``: the
online hyperbolic k-means update, a one-step weighted Fréchet mean), its value to the running mean
and its count to n_k* + 1. Query q_t then reads the summaries with their counts as multiplicities,

    o_t = sum_k n_k s_tk vbar_k / sum_k n_k s_tk,    s_tk = (d_H(q_t, s_k)^2 + eps)^-1,

so each token costs O(c d) whatever t is (Proposition 1: Theta(1) per token for c = Theta(1)).
With c >= T every token keeps its own summary and C-HIDA is causal Dense-HIDA exactly.

The module records the online loss min_k d_H(k_t, s_k^(t))^2 (summaries before k_t is absorbed)
and its running sum, the left-hand side of Theorem 5.6.
"""

from __future__ import annotations

import torch
from torch import nn

from georesolver_core.attention.reference import reference_ida
from georesolver_core.attention.spec import CAUSAL, KernelSpec
from georesolver_core.geometry._pairwise import safe_sqrt
from georesolver_core.validate import (
    check_curvature,
    check_eps,
    check_finite,
    check_in_ball,
    check_kernel_dtype,
    check_positive_int,
)


def _sq_dist(x, s, den_x, den_s, c: float) -> torch.Tensor:
    """d_H(x, s_k)^2 for one point per batch row. x (B, d), s (B, C, d), den = 1 - c|.|^2 -> (B, C).

    The formula of geometry.poincare, with the conformal denominators carried along the stream.
    """
    diff = x.unsqueeze(1) - s  # (B, C, d)
    u = 2.0 * c * (diff * diff).sum(-1) / (den_x * den_s)
    return (4.0 / c) * torch.asinh(safe_sqrt(0.5 * u)) ** 2


def two_point_midpoint(x, wx, y, den_x, den_y, c: float) -> torch.Tensor:
    """geoopt's weighted Möbius gyromidpoint of x (weight wx) and y (weight 1), in closed form.

    m = 1/2 (x) z,  z = (wx lam_x x + lam_y y) / (wx (lam_x - 1) + lam_y - 1),  lam = 2 / den,
    and 1/2 (x) z = z / (1 + sqrt(1 - c|z|^2)) (tanh(artanh(r)/2) = r / (1 + sqrt(1 - r^2))).
    geoopt's general function costs ~40 tensor operations per call; this is the hot loop.
    x, y (B, d), wx, den_x, den_y (B, 1) -> (B, d).
    """
    lx, ly = 2.0 / den_x, 2.0 / den_y
    z = (wx * lx * x + ly * y) / (wx * (lx - 1.0) + ly - 1.0)  # inside the ball: an Einstein (Klein) mean
    # The clamp only guards rounding: c|z|^2 < 1 for a convex combination of Klein points.
    root = torch.sqrt((1.0 - c * (z * z).sum(-1, keepdim=True)).clamp_min(torch.finfo(z.dtype).eps))
    return z / (1.0 + root)


class CHIDA(nn.Module):
    """Streaming C-HIDA. forward: q, k (B, T, d) in the ball, v (B, T, dv) -> (B, T, dv).

    After a forward pass: ``online_loss`` (B, T), ``running_regret`` (B, T) its cumulative sum,
    ``summaries`` (B, c, d), ``counts`` (B, c), ``summary_values`` (B, c, dv) (detached), and with
    ``record=True`` ``history`` (T, B, c, d): the summaries after each token.
    """

    def __init__(self, n_summaries: int, dim: int, *, eps: float, c: float = 1.0):
        super().__init__()
        self.n_summaries = check_positive_int("n_summaries", n_summaries, 1)
        self.dim = check_positive_int("dim", dim, 1)
        self.eps = check_eps(eps)
        self.c = check_curvature(c)

    def extra_repr(self) -> str:
        return f"n_summaries={self.n_summaries}, dim={self.dim}, eps={self.eps:g}, c={self.c:g}"

    def _check(self, q, k, v):
        check_in_ball("q", q, self.c)
        check_in_ball("k", k, self.c)
        check_finite("v", v)
        check_kernel_dtype(q=q, k=k, v=v)
        if q.dim() != 3 or k.shape != q.shape or v.dim() != 3 or v.shape[:2] != q.shape[:2]:
            raise ValueError(
                f"q, k must have shape (B, T, d) and v (B, T, dv) with the same B, T "
                f"(got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)})"
            )
        if q.shape[-1] != self.dim:
            raise ValueError(f"q and k must have last dimension dim = {self.dim} (got {q.shape[-1]})")
        if q.shape[1] == 0:
            raise ValueError("the stream must hold at least one token (got T = 0)")

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, record: bool = False) -> torch.Tensor:
        self._check(q, k, v)
        B, T, _ = q.shape
        C, eps, c = self.n_summaries, self.eps, self.c
        P = min(C, T)
        # The first P tokens open one summary each: causal Dense-HIDA over a P x P block.
        out = [reference_ida(q[:, :P], k[:, :P], v[:, :P], KernelSpec(eps, "poincare", c, keys=CAUSAL))]
        s, vbar = k[:, :P], v[:, :P]  # (B, P, d), (B, P, dv)
        counts = torch.ones(B, P, dtype=q.dtype, device=q.device)  # (B, P)
        losses = [q.new_zeros(B, P)]  # opening a slot costs nothing
        history = []
        if record:  # after prefix token t only slots 0..t are open; the others are drawn as missing
            full = torch.cat([s.detach(), torch.full((B, C - P, q.shape[-1]), torch.nan, dtype=q.dtype)], 1)
            opened = torch.arange(C).unsqueeze(0) <= torch.arange(P).unsqueeze(1)  # (P, C)
            history.append(torch.where(opened[:, None, :, None], full.unsqueeze(0), torch.nan))  # (P, B, C, d)
        tiny = torch.finfo(q.dtype).eps
        den_k = (1.0 - c * (k * k).sum(-1)).clamp_min(tiny)  # (B, T): 1 - c|k|^2, 2 / lambda_k
        den_q = (1.0 - c * (q * q).sum(-1)).clamp_min(tiny)  # (B, T)
        den_s = den_k[:, :P]  # (B, P), kept per summary
        slots = torch.arange(C, device=q.device)
        # unbind once: indexing k[:, t] inside the loop would make every step's backward allocate a
        # full (B, T, d) gradient, O(T) per token; unbind's backward stacks the T pieces once.
        ks, qs, vs = k.unbind(1), q.unbind(1), v.unbind(1)  # T x (B, d)
        dks, dqs = den_k.unsqueeze(-1).unbind(1), den_q.unsqueeze(-1).unbind(1)  # T x (B, 1)
        for t in range(P, T):
            kt, qt, vt = ks[t], qs[t], vs[t]  # (B, d), (B, d), (B, dv)
            d2 = _sq_dist(kt, s, dks[t], den_s, c)  # (B, C)
            loss, j = d2.min(-1)  # (B,), (B,)
            losses.append(loss.detach().unsqueeze(1))
            j = j.unsqueeze(1)  # (B, 1)
            n_j = counts.gather(1, j)  # (B, 1)
            s_j = s.gather(1, j.unsqueeze(-1).expand(-1, -1, s.shape[-1])).squeeze(1)  # (B, d)
            moved = two_point_midpoint(s_j, n_j, kt, den_s.gather(1, j), dks[t], c)  # (B, d)
            hot = slots == j  # (B, C)
            s = torch.where(hot.unsqueeze(-1), moved.unsqueeze(1), s)
            den_s = torch.where(hot, (1.0 - c * (moved * moved).sum(-1, keepdim=True)).clamp_min(tiny), den_s)
            v_j = vbar.gather(1, j.unsqueeze(-1).expand(-1, -1, vbar.shape[-1])).squeeze(1)  # (B, dv)
            vbar = torch.where(hot.unsqueeze(-1), ((n_j * v_j + vt) / (n_j + 1)).unsqueeze(1), vbar)
            counts = counts + hot.to(counts.dtype)
            a = _sq_dist(qt, s, dqs[t], den_s, c) + eps  # (B, C)
            r = counts * (a.amin(-1, keepdim=True).detach() / a)  # (B, C); ratios avoid 1/eps overflow
            out.append((r.unsqueeze(1) @ vbar) / r.sum(-1, keepdim=True).unsqueeze(1))  # (B, 1, dv)
            if record:
                history.append(s.detach().unsqueeze(0))
        self.online_loss = torch.cat(losses, 1)  # (B, T)
        self.running_regret = self.online_loss.cumsum(1)  # (B, T)
        self.summaries, self.counts, self.summary_values = s.detach(), counts.detach(), vbar.detach()
        self.history = torch.cat(history, 0) if record else None  # (T, B, C, d)
        return torch.cat(out, 1)  # (B, T, dv)
