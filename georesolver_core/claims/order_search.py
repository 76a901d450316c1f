"""The worst order of a stream for C-HIDA's regret (Theorem 5.6, section 5.6), found by search.

Theorem 5.6 bounds the regret of C-HIDA's online hyperbolic k-means for any stream. For a fixed set
of T keys the comparator (the best fixed summaries of the set) does not depend on the order, so the
worst stream of that set is the order that maximises C-HIDA's online loss

    L(pi) = sum_t min_k d_H(k_pi(t), s_k^(t))^2        (summaries before k_pi(t) is absorbed).

``worst_order`` searches the T! orders in three stages, every candidate scored by ``CHIDA`` itself:

1. openings: the first c keys open the summaries; each start opens them on the c nearest neighbours
   of one key (all summaries in one corner of the data) or on c random keys;
2. greedy: after the opening, the next key is always the remaining key farthest from the current
   summaries (the largest instantaneous loss), with C-HIDA's own update in between;
3. local search: batched stochastic hill climbing on the best starts, the random orders and the
   cluster-sorted order, each step proposing one swap of two positions or one reversed segment per
   candidate and keeping it when L does not decrease.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from georesolver_core.attention.c_hida import CHIDA, _sq_dist, two_point_midpoint
from georesolver_core.geometry import pairwise_sq_distance
from georesolver_core.validate import check_positive_int


def online_losses(keys: torch.Tensor, orders: torch.Tensor, n_summaries: int, eps: float = 0.1) -> torch.Tensor:
    """Total online loss L(pi) of C-HIDA for each order. keys (T, d), orders (B, T) long -> (B,)."""
    k = keys[orders]  # (B, T, d)
    model = CHIDA(n_summaries, keys.shape[-1], eps=eps)
    with torch.no_grad():
        model(k, k, k)
    return model.online_loss.sum(1)


def _openings(keys: torch.Tensor, c: int, n_starts: int, g: torch.Generator) -> torch.Tensor:
    """(n_starts, c) opening keys: the c nearest neighbours (hyperbolic) of spread-out seeds, then random sets."""
    T = keys.shape[0]
    d2 = pairwise_sq_distance(keys, keys, geometry="poincare")  # (T, T)
    seeds = torch.randperm(T, generator=g)[: max(1, n_starts // 2)]
    near = d2[seeds].argsort(-1)[:, :c]  # (S, c): a key and its c - 1 nearest neighbours
    rand = torch.stack([torch.randperm(T, generator=g)[:c] for _ in range(n_starts - near.shape[0])])
    return torch.cat([near, rand]) if rand.numel() else near


def greedy_orders(keys: torch.Tensor, openings: torch.Tensor, eps: float = 0.1) -> torch.Tensor:
    """Complete each opening greedily: the next key is the remaining one farthest from the summaries.

    keys (T, d), openings (B, c) -> orders (B, T). C-HIDA's update (nearest summary moves to the weighted
    gyromidpoint, count + 1) runs between choices, as in ``CHIDA.forward``.
    """
    del eps  # the query read-out does not change the summaries
    B, c = openings.shape
    T, d = keys.shape
    den_k = 1.0 - (keys * keys).sum(-1)  # (T,)
    s, den_s = keys[openings], den_k[openings]  # (B, c, d), (B, c)
    counts = torch.ones(B, c, dtype=keys.dtype)
    used = torch.zeros(B, T, dtype=torch.bool)
    used.scatter_(1, openings, True)
    order = [openings]
    rows = torch.arange(B)
    for _ in range(T - c):
        x = keys.unsqueeze(0).expand(B, -1, -1).reshape(B * T, d)
        d2 = _sq_dist(
            x, s.repeat_interleave(T, 0), den_k.repeat(B).unsqueeze(-1), den_s.repeat_interleave(T, 0), 1.0
        )
        loss, near = d2.view(B, T, c).min(-1)  # (B, T)
        loss = loss.masked_fill(used, -1.0)
        t = loss.argmax(-1)  # (B,) the farthest remaining key
        j = near[rows, t]  # (B,) its nearest summary
        moved = two_point_midpoint(
            s[rows, j], counts[rows, j, None], keys[t], den_s[rows, j, None], den_k[t, None], 1.0
        )
        s = s.clone()
        s[rows, j] = moved
        den_s = den_s.clone()
        den_s[rows, j] = 1.0 - (moved * moved).sum(-1)
        counts[rows, j] += 1
        used[rows, t] = True
        order.append(t.unsqueeze(1))
    return torch.cat(order, 1)


def _mutate(orders: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    """One swap of two positions or one reversed segment per row. (B, T) -> (B, T)."""
    B, T = orders.shape
    out = orders.clone()
    i = torch.randint(T, (B,), generator=g)
    j = torch.randint(T, (B,), generator=g)
    flip = torch.rand(B, generator=g) < 0.5
    for b in range(B):
        a, z = sorted((int(i[b]), int(j[b])))
        if flip[b]:
            out[b, a : z + 1] = out[b, a : z + 1].flip(0)
        else:
            out[b, [a, z]] = out[b, [z, a]]
    return out


@dataclass(frozen=True)
class OrderSearch:
    """The worst order found for one set of keys, and what each stage reached (total online loss)."""

    order: np.ndarray  # (T,) the worst order found
    loss: float  # its total online loss L(pi)
    random_loss: float  # the worst of the random orders tried before the local search
    sorted_loss: float  # the clusters-one-after-another order
    greedy_loss: float  # the best greedy order
    evaluations: int  # orders scored by CHIDA
    restarts: int
    iters: int


def worst_order(
    keys, labels, n_summaries: int, *, restarts: int = 8, iters: int = 40, seed: int = 0, eps: float = 0.1
) -> OrderSearch:
    """Search the orders of ``keys`` (T, d) for the largest C-HIDA online loss (module docstring).

    ``labels`` (T,) give the cluster-sorted start; ``restarts`` the number of openings (half nearest-
    neighbour, half random) and of random orders; ``iters`` the local-search steps on the population.
    """
    check_positive_int("restarts", restarts, 2)
    check_positive_int("iters", iters, 0)
    keys = torch.as_tensor(keys, dtype=torch.float64)
    labels = torch.as_tensor(labels)
    T = keys.shape[0]
    c = check_positive_int("n_summaries", n_summaries, 1)
    if T <= c:
        raise ValueError(f"keys must hold more than n_summaries = {c} rows (got {T})")
    g = torch.Generator().manual_seed(seed)
    greedy = greedy_orders(keys, _openings(keys, c, restarts, g), eps)
    randoms = torch.stack([torch.randperm(T, generator=g) for _ in range(restarts)])
    sorted_order = torch.sort(labels, stable=True).indices.unsqueeze(0)
    pop = torch.cat([greedy, randoms, sorted_order])  # (2 restarts + 1, T)
    score = online_losses(keys, pop, c, eps)
    evaluations = pop.shape[0]
    greedy_loss = float(score[: greedy.shape[0]].max())
    random_loss = float(score[greedy.shape[0] : -1].max())
    sorted_loss = float(score[-1])
    for _ in range(iters):
        cand = _mutate(pop, g)
        cs = online_losses(keys, cand, c, eps)
        evaluations += cand.shape[0]
        better = cs >= score
        pop[better], score[better] = cand[better], cs[better]
    b = int(score.argmax())
    return OrderSearch(
        pop[b].numpy(), float(score[b]), random_loss, sorted_loss, greedy_loss, evaluations, restarts, iters
    )
