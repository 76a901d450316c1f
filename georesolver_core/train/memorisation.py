"""Noise memorisation by one attention layer (paper section 2.7, Theorem 3, second half).

The theorem's setting: n training points x_i in R^{d_h} with labels y_i in {-1, +1}, flipped with
rate eta; one attention layer over the training set itself,

    q_i = W_q x_i,  k_j = W_k x_j,  v_j = W_v x_j,   o_i = sum_j W_ij v_j,   y_hat_i = w . o_i,

with W the softmax of q.k / sqrt(d_h) or the inverse-distance weights (d(q_i, k_j)^2 + eps)^-1
normalised. A test point attends over the same training keys and values. Theorem 3 says softmax
reaches zero training error on the noisy labels once d_h >= n (its test error -> eta, the noise
it memorised), while IDA's test error stays at C eta^2 + O(1/n) whatever d_h.

The data: a two-class Gaussian mixture, x = y * m * e_1 + xi with xi ~ N(0, I / d_h) (so the noise
part has norm ~1 in every width), clean class y; training labels flipped with rate eta, test
labels clean. Trained full batch with Adam on the squared loss (y - y_hat)^2, from W_q = W_k = W_v = I.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from georesolver_core.attention import KERNEL_CHOICES, ida_weights_from_sq
from georesolver_core.tasks.noisy import flip_labels
from georesolver_core.validate import check_eps, check_positive_int, check_range


@dataclass(frozen=True)
class MemorisationResult:
    kernel: str
    n: int
    d_h: int
    eta: float
    train_error: float  # against the noisy labels it was trained on (0 = memorised every flip)
    test_error: float  # against clean labels of fresh points
    flipped_fit: float  # fraction of flipped training labels the model reproduces (memorised noise)


def _weights(kernel: str, q: torch.Tensor, k: torch.Tensor, eps: float) -> torch.Tensor:
    """(n_q, d), (n_k, d) -> (n_q, n_k) attention weights."""
    if kernel == "softmax":
        return torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=-1)
    sq = (q.square().sum(-1, keepdim=True) + k.square().sum(-1) - 2 * q @ k.T).clamp_min(0)  # (n_q, n_k)
    return ida_weights_from_sq(sq, eps=eps)


def mixture(n: int, d_h: int, margin: float, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """n points of the two-class mixture and their clean labels in {-1, +1}."""
    y = torch.randint(2, (n,), generator=generator, dtype=torch.float64) * 2 - 1
    x = torch.randn(n, d_h, generator=generator, dtype=torch.float64) / math.sqrt(d_h)
    x[:, 0] += margin * y
    return x, y


def fit_noisy(
    kernel: str,
    *,
    n: int,
    d_h: int,
    eta: float,
    eps: float = 1e-4,
    margin: float = 0.5,
    steps: int = 300,
    lr: float = 0.05,
    n_test: int = 400,
    seed: int = 0,
) -> MemorisationResult:
    """Train one attention layer on noisy labels; training error (noisy) and test error (clean)."""
    if kernel not in KERNEL_CHOICES:
        raise ValueError(f"kernel must be one of {sorted(KERNEL_CHOICES)} (got {kernel!r})")
    check_positive_int("n", n, 2, 10_000)
    check_positive_int("d_h", d_h, 1, 10_000)
    check_range("eta", eta, 0.0, 0.5)
    eps = check_eps(eps)
    g = torch.Generator().manual_seed(seed)
    x, clean = mixture(n, d_h, margin, g)
    y = flip_labels((clean > 0).long(), eta, 2, g).double() * 2 - 1  # (n,) noisy labels
    xt, yt = mixture(n_test, d_h, margin, g)
    eye = torch.eye(d_h, dtype=torch.float64)
    Wq, Wk, Wv = (eye.clone().requires_grad_(True) for _ in range(3))
    w = torch.zeros(d_h, dtype=torch.float64)
    w[0] = 1.0
    w.requires_grad_(True)
    opt = torch.optim.Adam([Wq, Wk, Wv, w], lr=lr)

    def predict(points: torch.Tensor) -> torch.Tensor:
        W = _weights(kernel, points @ Wq.T, x @ Wk.T, eps)  # (m, n)
        return (W @ (x @ Wv.T)) @ w  # (m,)

    for _ in range(steps):
        opt.zero_grad()
        loss = (predict(x) - y).square().mean()
        loss.backward()
        opt.step()
    with torch.no_grad():
        fit = torch.sign(predict(x))
        flipped = y != clean
        return MemorisationResult(
            kernel,
            n,
            d_h,
            eta,
            train_error=float((fit != y).double().mean()),
            test_error=float((torch.sign(predict(xt)) != yt).double().mean()),
            flipped_fit=float((fit[flipped] == y[flipped]).double().mean()) if bool(flipped.any()) else math.nan,
        )
