"""The worst inputs we can find for the attention claims that hold "for all inputs" (sections 2.3, 2.4).

- Lemma 1: a Lipschitz constant is a supremum over queries. ``max_jacobian_norm`` climbs the spectral
  norm of the query Jacobian d o / d q by gradient ascent from many starts (the keys, points at IDA's
  peak distance sqrt(eps/3) from them, midpoints of key pairs, random points), for IDA and softmax.
- Theorem 1, softmax width: a lower bound over all designs is tested against the best design, not
  random keys. With q = k_1 and coordinates +-1, the design that needs the least width puts the
  other n - 1 keys on the Hamming shells farthest from k_1 (``shell_code_min_width``); when every key
  must be retrieved by its own query, repeated rows of a Hadamard matrix (an equidistant code) are the
  construction (``hadamard_code_min_width``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from georesolver_core.device import one_cpu_thread
from georesolver_core.validate import check_eps, check_positive_int, check_range


def _jacobian(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, kernel: str, eps: float) -> torch.Tensor:
    """d o / d q in closed form, differentiable in q. (Q, d), (n, d), (n, dv) -> (Q, dv, d).

    With o = sum_j W_j v_j and W_j proportional to exp(s_j): d o / d q = sum_j W_j (v_j - vbar) g_j^T,
    g_j = d s_j / d q. IDA: s_j = -log(|q - k_j|^2 + eps), g_j = -2 (q - k_j) / (|q - k_j|^2 + eps);
    softmax: s_j = q.k_j / sqrt(d), g_j = k_j / sqrt(d).
    """
    diff = q[:, None, :] - k[None, :, :]  # (Q, n, d)
    if kernel == "ida":
        a = 1.0 / (diff.pow(2).sum(-1) + eps)  # (Q, n)
        w = a / a.sum(-1, keepdim=True)
        g = -2.0 * a[..., None] * diff  # (Q, n, d)
    else:
        logits = q @ k.T / math.sqrt(k.shape[-1])  # (Q, n)
        w = torch.softmax(logits, dim=-1)
        g = (k / math.sqrt(k.shape[-1])).expand(q.shape[0], -1, -1)  # (Q, n, d)
    centred = v[None] - (w @ v)[:, None, :]  # (Q, n, dv): v_j - vbar
    return torch.einsum("qn,qnv,qnd->qvd", w, centred, g)


def jacobian_norms(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, kernel: str, eps: float = 0.1):
    """Spectral norm of d o / d q at each query (closed form). (Q, d) -> (Q,)."""
    return torch.linalg.matrix_norm(_jacobian(q, k, v, kernel=kernel, eps=eps), ord=2)


def search_starts(
    k: torch.Tensor, *, kernel: str, eps: float, n_each: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Starting queries and the length scale each moves on. Returns (starts (S, d), scale (S,)).

    The keys themselves, points sqrt(eps/3) from a key (where |g_j| = 2a/(a^2 + eps) peaks: IDA only),
    midpoints of the closest key pairs and random points spread like the keys.
    """
    n, d = k.shape
    kw = dict(generator=generator, dtype=k.dtype)
    spread = float(k.std()) if n > 1 else 1.0
    pick = torch.randperm(n, generator=generator)[: min(n, n_each)]
    # IDA's Jacobian is largest where two close keys compete for the weight: midpoints of the closest pairs
    sq = torch.cdist(k, k).fill_diagonal_(math.inf)  # (n, n)
    flat = torch.topk(sq.flatten(), min(2 * n_each, n * (n - 1)), largest=False).indices[::2]  # each pair once
    i, j = flat // n, flat % n
    parts = [k[pick], 0.5 * (k[i] + k[j]), k.mean(0) + spread * torch.randn(n_each, d, **kw)]
    scales = [spread] * 3
    if kernel == "ida":
        u = torch.randn(pick.numel(), d, **kw)
        parts.append(k[pick] + math.sqrt(eps / 3.0) * u / u.norm(dim=-1, keepdim=True).clamp_min(1e-12))
        scales = [math.sqrt(eps), spread, spread, math.sqrt(eps)]
    starts = torch.cat(parts)  # (S, d)
    scale = torch.cat([torch.full((p.shape[0],), s, dtype=k.dtype) for p, s in zip(parts, scales, strict=True)])
    return starts, scale


@dataclass(frozen=True)
class Ascent:
    """How hard ``max_jacobian_norm`` searches: starts of each kind, Adam steps, step size (units of u)."""

    n_each: int = 16
    steps: int = 60
    lr: float = 0.05

    def __post_init__(self):
        check_positive_int("n_each", self.n_each, 1, 10_000)
        check_positive_int("steps", self.steps, 0, 100_000)
        check_range("lr", self.lr, 1e-6, 10.0)


def max_jacobian_norm(k, v, *, kernel: str, eps: float = 0.1, ascent: Ascent = Ascent(), generator=None,
                      more_starts: torch.Tensor | None = None) -> tuple[float, torch.Tensor]:  # fmt: skip
    """Largest ||d o / d q||_2 found by gradient ascent (Adam) from ``search_starts``; a lower estimate
    of the Lipschitz constant sup_q ||d o / d q|| that is as large as we can make it. k (n, d), v (n, dv).

    Each start moves as q = start + scale * u (u learnt), so a start near a key takes steps of order
    sqrt(eps) and a random one steps of order the keys' spread; ``more_starts`` (M, d) join them (e.g.
    earlier probe queries, so the search never reports less than they found). Returns (best norm, the
    best query of each start (S, d)).
    """
    if kernel not in ("ida", "softmax"):
        raise ValueError(f"kernel must be 'ida' or 'softmax' (got {kernel!r})")
    eps = check_eps(eps)
    n_each, steps, lr = ascent.n_each, ascent.steps, ascent.lr
    gen = generator if generator is not None else torch.Generator().manual_seed(0)
    starts, scale = search_starts(k, kernel=kernel, eps=eps, n_each=n_each, generator=gen)
    if more_starts is not None:
        starts = torch.cat([starts, more_starts.to(starts.dtype)])
        scale = torch.cat([scale, scale[-1:].expand(more_starts.shape[0])])
    u = torch.zeros_like(starts)
    m, s2 = torch.zeros_like(u), torch.zeros_like(u)  # Adam's moments (torch.optim would import the compiler)
    best = jacobian_norms(starts, k, v, kernel=kernel, eps=eps).detach()  # (S,)
    best_q = starts.clone()
    with one_cpu_thread():  # a loop of tiny tensors: a second thread only adds synchronisation
        for t in range(1, steps + 1):
            u.requires_grad_(True)
            q = starts + scale[:, None] * u
            norms = jacobian_norms(q, k, v, kernel=kernel, eps=eps)  # (S,)
            (grad,) = torch.autograd.grad(norms.sum(), u)  # each start climbs its own norm
            better = norms.detach() > best
            best = torch.where(better, norms.detach(), best)
            best_q[better] = q.detach()[better]
            m = 0.9 * m + 0.1 * grad
            s2 = 0.999 * s2 + 0.001 * grad * grad
            step = (m / (1 - 0.9**t)) / ((s2 / (1 - 0.999**t)).sqrt() + 1e-12)
            u = u.detach() + lr * step  # ascent
    return float(best.max()), best_q


# --- Theorem 1: designs that need the least softmax width -----------------------------------------


def _log_binom(d: int, r: np.ndarray) -> np.ndarray:
    return np.array([math.lgamma(d + 1) - math.lgamma(x + 1) - math.lgamma(d - x + 1) for x in r])


def shell_code_log_leak(n: int, d: int) -> float:
    """log of sum_{j >= 2} exp(-(q.k_1 - q.k_j) / sqrt d) for the Hamming-shell code, q = k_1 = (1, ..., 1).

    The other n - 1 keys are distinct words of {-1, 1}^d taken from the shells farthest from k_1: -k_1
    (distance d), then the C(d, 1) words at distance d - 1, ... A word at Hamming distance h has logit gap
    2h / sqrt d, so no set of n - 1 distinct +-1 keys leaks less: W_11 = 1 / (1 + leak) is the largest
    any +-1 design of width d achieves. Needs n <= 2^d.
    """
    if n - 1 > 2.0**d - 1:
        return math.inf
    left, terms, r = n - 1, [], 0  # r = coordinates agreeing with k_1; distance d - r
    while left > 0:
        take = min(left, math.comb(d, r))
        terms.append(math.log(take) - 2.0 * (d - r) / math.sqrt(d))
        left -= take
        r += 1
    return float(np.logaddexp.reduce(terms))


def shell_code_min_width(n: int, *, delta: float, d_max: int = 4096) -> int | None:
    """Smallest width d at which the Hamming-shell code gives W_11 >= 1 - delta (q = k_1, scale 1/sqrt d):
    the least width any design with distinct +-1 keys needs. None if d_max is not enough."""
    check_positive_int("n", n, 2)
    delta = check_range("delta", delta, 1e-12, 0.5)
    target = math.log(delta / (1.0 - delta))
    return next((d for d in range(1, d_max + 1) if shell_code_log_leak(n, d) <= target), None)


def shell_code_keys(n: int, d: int, dtype=torch.float64) -> torch.Tensor:
    """The Hamming-shell code itself: k_1 = (1, ..., 1), then the n - 1 words farthest from it. (n, d)."""
    rows, r = [torch.ones(d, dtype=dtype)], 0
    while len(rows) < n:
        for agree in _combinations(d, r):
            if len(rows) == n:
                break
            word = -torch.ones(d, dtype=dtype)
            word[list(agree)] = 1.0
            rows.append(word)
        r += 1
    return torch.stack(rows)


def _combinations(d: int, r: int):
    from itertools import combinations

    return combinations(range(d), r)


def hadamard_code_min_width(n: int, *, delta: float, d_max: int = 1 << 16) -> int | None:
    """Smallest width at which every key is retrieved by its own query (W_ii >= 1 - delta for all i) with
    the rows of a Sylvester-Hadamard matrix H_D and their negatives (n <= 2D), each repeated r times.

    Rows of H_D are at Hamming distance D/2, a row and its negative at D. At width d = r D the worst key
    sees n - 1 keys at logit gap sqrt d (n < 2D: some key's negative is unused), or n - 2 at sqrt d and
    its negative at 2 sqrt d (n = 2D).
    """
    check_positive_int("n", n, 2)
    delta = check_range("delta", delta, 1e-12, 0.5)
    D = 1 << max(0, math.ceil(math.log2(n / 2)))  # the smallest Sylvester order with 2D >= n
    anti = 1 if n == 2 * D else 0  # the worst key's negative is in the code
    target = delta / (1.0 - delta)
    for d in range(D, d_max + 1, D):
        if (n - 1 - anti) * math.exp(-math.sqrt(d)) + anti * math.exp(-2.0 * math.sqrt(d)) <= target:
            return d
    return None


def hadamard_code_keys(n: int, d: int, dtype=torch.float64) -> torch.Tensor:
    """The code of ``hadamard_code_min_width`` at width d (a multiple of its order D). (n, d)."""
    D = 1 << max(0, math.ceil(math.log2(n / 2)))
    if d % D:
        raise ValueError(f"d must be a multiple of the Hadamard order {D} (got {d})")
    h = torch.ones(1, 1, dtype=dtype)
    while h.shape[0] < D:
        h = torch.cat([torch.cat([h, h], 1), torch.cat([h, -h], 1)])  # Sylvester doubling
    words = torch.cat([h, -h])[:n]  # (n, D)
    return words.repeat(1, d // D)  # (n, d)
