"""L-HIDA (M3): hyperbolic inverse-distance attention through m anchors (paper section 5.5).

Keys aggregate onto anchors a_1..a_m with the key-anchor weights of the paper,

    W^KA_ik = (d(k_i, a_k)^2 + eps)^-1 / sum_l (d(k_i, a_l)^2 + eps)^-1,
    U_k = sum_i W^KA_ik v_i,   n_k = sum_i W^KA_ik   (the mass anchor k absorbs),

and queries read the anchors as summaries standing for n_k keys (the multiplicities of section
11.2): o_i = sum_k n_k s_ik (U_k / n_k) / sum_k n_k s_ik = sum_k s_ik U_k / sum_k s_ik n_k with
s_ik = (d(q_i, a_k)^2 + eps)^-1. Time O(n m d), memory O(n m + (n + m) d) (causal: O(n m dv), prefix sums). With m = n anchors at
the keys and a sharp aggregation (``eps_anchor`` -> 0, W^KA -> I) it is Dense-HIDA exactly.

``l_hida_nystrom`` is the Nyström form the error analysis of 5.5 uses, for comparison:
K_nn ~ K_nm K_mm^+ K_mn, o = K~ V / K~ 1. Anchors come from ``hyperbolic_kmeans`` on the keys.
"""

from __future__ import annotations

import geoopt
import torch
from torch import nn

from georesolver_core.attention.reference import ida_weights_from_sq
from georesolver_core.geometry import ball, pairwise_sq_distance
from georesolver_core.validate import (
    check_curvature,
    check_eps,
    check_finite,
    check_in_ball,
    check_kernel_dtype,
    check_positive_int,
)


def gyro_midpoints(x: torch.Tensor, weights: torch.Tensor, *, c: float = 1.0) -> torch.Tensor:
    """Weighted Möbius gyromidpoints, one per row of weights. x (N, d), weights (m, N) >= 0 -> (m, d).

    The Einstein/Möbius midpoint of geoopt's ``weighted_midpoint``,
    m = 1/2 (x) sum_i w_i lambda_i x_i / sum_i w_i (lambda_i - 1), lambda = 2 / (1 - c|x|^2),
    written as two matmuls so that m midpoints of N points cost O(m N d) without an (m, N, d) tensor.
    """
    lam = 2.0 / (1.0 - c * (x * x).sum(-1, keepdim=True)).clamp_min(torch.finfo(x.dtype).eps)  # (N, 1)
    num = weights @ (lam * x)  # (m, d)
    # A row with no weight has no midpoint: the clamp keeps it at the origin instead of 0/0.
    den = (weights @ (lam - 1.0)).clamp_min(torch.finfo(x.dtype).tiny)  # (m, 1)
    return ball(c).mobius_scalar_mul(torch.tensor(0.5, dtype=x.dtype, device=x.device), num / den)


def hyperbolic_kmeans(
    x: torch.Tensor,
    m: int,
    *,
    c: float = 1.0,
    iters: int = 10,
    generator: torch.Generator | None = None,
    init: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Lloyd's k-means in the Poincaré ball: assign to the nearest centre (hyperbolic distance), move each
    centre to the gyromidpoint of its points. k-means++ seeding unless ``init`` (m, d) gives the start.
    x (N, d) -> centres (m, d), labels (N,).
    """
    check_in_ball("x", x, c)
    if x.dim() != 2:
        raise ValueError(f"x must have shape (N, d) (got {tuple(x.shape)})")
    check_positive_int("m", m, 1, max(1, x.shape[0]))
    check_positive_int("iters", iters, 0)
    x = x.detach()
    if init is not None:
        check_in_ball("init", init, c)
        if init.shape != (m, x.shape[1]):
            raise ValueError(f"init must have shape (m, d) = ({m}, {x.shape[1]}) (got {tuple(init.shape)})")
    first = int(torch.randint(x.shape[0], (1,), generator=generator))
    centres = [x[first]]
    d2 = pairwise_sq_distance(x, x[first : first + 1], geometry="poincare", c=c, validate=False)[:, 0]  # (N,)
    for _ in range(
        1, m if init is None else 1
    ):  # k-means++: the next centre with probability ~ d^2 to the nearest one
        p = d2.clamp_min(0)
        j = int(torch.multinomial(p / p.sum(), 1, generator=generator)) if float(p.sum()) > 0 else int(d2.argmax())
        centres.append(x[j])
        d2 = torch.minimum(
            d2, pairwise_sq_distance(x, x[j : j + 1], geometry="poincare", c=c, validate=False)[:, 0]
        )
    centres = torch.stack(centres) if init is None else init.detach().to(x.dtype)  # (m, d)
    labels = torch.zeros(x.shape[0], dtype=torch.long, device=x.device)
    for _ in range(iters):
        labels = pairwise_sq_distance(x, centres, geometry="poincare", c=c, validate=False).argmin(-1)  # (N,)
        onehot = nn.functional.one_hot(labels, m).to(x.dtype).T  # (m, N)
        moved = gyro_midpoints(x, onehot, c=c)
        empty = onehot.sum(-1, keepdim=True) == 0  # an empty cluster keeps its centre
        centres = torch.where(empty, centres, ball(c).projx(moved))
    labels = pairwise_sq_distance(x, centres, geometry="poincare", c=c, validate=False).argmin(-1)
    return centres, labels


def _check(q, k, v, anchors, eps, c, eps_anchor):
    eps = check_eps(eps)
    eps_anchor = eps if eps_anchor is None else check_eps(eps_anchor, "eps_anchor")
    c = check_curvature(c)
    check_in_ball("q", q, c)
    check_in_ball("k", k, c)
    check_in_ball("anchors", anchors, c)
    check_finite("v", v)
    check_kernel_dtype(q=q, k=k, v=v, anchors=anchors)
    if min(q.dim(), k.dim(), v.dim(), anchors.dim()) < 2:
        raise ValueError(
            "q, k, v and anchors must have shapes (..., n, d), (..., n_k, d), (..., n_k, dv), (..., m, d)"
        )
    if not (q.shape[-1] == k.shape[-1] == anchors.shape[-1]):
        raise ValueError(
            f"q, k and anchors must share the last dimension (got {q.shape[-1]}, {k.shape[-1]}, {anchors.shape[-1]})"
        )
    if k.shape[-2] == 0 or v.shape[-2] != k.shape[-2]:
        raise ValueError(f"k and v must hold the same number >= 1 of keys (got {k.shape[-2]} and {v.shape[-2]})")
    check_positive_int("m (anchors.shape[-2])", anchors.shape[-2], 1)
    return eps, c, eps_anchor


def l_hida(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    anchors: torch.Tensor,
    *,
    eps: float,
    c: float = 1.0,
    eps_anchor: float | None = None,
    causal: bool = False,
) -> torch.Tensor:
    """L-HIDA output. q (..., n, d), k (..., n_k, d), v (..., n_k, dv), anchors (..., m, d) -> (..., n, dv).

    ``eps_anchor`` regularises the key-anchor weights (None: eps, as in the paper). ``causal``:
    query i reads anchors that have absorbed keys j <= i only (prefix sums of U and n; needs
    n = n_k and holds an (n, m, dv) tensor).
    """
    eps, c, eps_anchor = _check(q, k, v, anchors, eps, c, eps_anchor)
    if causal and q.shape[-2] != k.shape[-2]:
        raise ValueError(f"causal L-HIDA needs as many queries as keys (got {q.shape[-2]} and {k.shape[-2]})")
    w_ka = ida_weights_from_sq(
        pairwise_sq_distance(k, anchors, geometry="poincare", c=c, validate=False), eps=eps_anchor
    )  # (..., n_k, m)
    a = pairwise_sq_distance(q, anchors, geometry="poincare", c=c, validate=False) + eps  # (..., n, m)
    r = a.amin(-1, keepdim=True).detach() / a  # (..., n, m), in (0, 1]; the scale cancels below
    tiny = torch.finfo(r.dtype).tiny
    if causal:
        u = (w_ka.unsqueeze(-1) * v.unsqueeze(-2)).cumsum(-3)  # (..., n, m, dv): U_k after keys 0..i
        mass = w_ka.cumsum(-2)  # (..., n, m)
        return (r.unsqueeze(-2) @ u).squeeze(-2) / (r * mass).sum(-1, keepdim=True).clamp_min(tiny)
    u = w_ka.transpose(-1, -2) @ v  # (..., m, dv): values aggregated onto anchors
    mass = w_ka.sum(-2).unsqueeze(-1)  # (..., m, 1): n_k, the keys each anchor stands for
    return (r @ u) / (r @ mass).clamp_min(tiny)


def l_hida_nystrom(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, anchors: torch.Tensor, *, eps: float, c: float = 1.0
) -> torch.Tensor:
    """The Nyström form of section 5.5: K~ = K_qa K_aa^+ K_ak, o = K~ V / K~ 1. Shapes as ``l_hida``.

    K = (d^2 + eps)^-1 unnormalised; K_aa^+ is the pseudo-inverse (anchors may coincide). The
    normaliser K~ 1 is not guaranteed positive: where it is tiny the output is unstable, which is
    part of what the comparison shows.
    """
    eps, c, _ = _check(q, k, v, anchors, eps, c, None)
    k_qa = 1.0 / (pairwise_sq_distance(q, anchors, geometry="poincare", c=c, validate=False) + eps)  # (..., n, m)
    k_aa = 1.0 / (
        pairwise_sq_distance(anchors, anchors, geometry="poincare", c=c, validate=False) + eps
    )  # (.., m, m)
    k_ak = 1.0 / (
        pairwise_sq_distance(anchors, k, geometry="poincare", c=c, validate=False) + eps
    )  # (..., m, n_k)
    ones = torch.ones(*v.shape[:-1], 1, dtype=v.dtype, device=v.device)  # (..., n_k, 1)
    inner = torch.linalg.pinv(k_aa) @ (k_ak @ torch.cat([v, ones], dim=-1))  # (..., m, dv + 1)
    out = k_qa @ inner  # (..., n, dv + 1)
    return out[..., :-1] / out[..., -1:]


class LHIDA(nn.Module):
    """L-HIDA with learnable anchors (a geoopt ManifoldParameter on the ball, one set per head).

    The anchors are initialised by ``hyperbolic_kmeans`` on the keys of the first forward pass.
    forward: q, k, v (B, nh, T, hs) -> (B, nh, T, hs).
    """

    def __init__(
        self,
        n_anchors: int,
        dim: int,
        *,
        eps: float,
        c: float = 1.0,
        n_heads: int = 1,
        causal=False,
        kmeans_iters=10,
    ):
        super().__init__()
        self.n_anchors = check_positive_int("n_anchors", n_anchors, 1)
        check_positive_int("dim", dim, 1)
        self.n_heads = check_positive_int("n_heads", n_heads, 1)
        self.eps, self.c = check_eps(eps), check_curvature(c)
        self.kmeans_iters, self.causal = kmeans_iters, bool(causal)
        self.anchors = geoopt.ManifoldParameter(torch.zeros(n_heads, n_anchors, dim), manifold=ball(self.c))
        self.register_buffer("initialised", torch.tensor(False))

    @torch.no_grad()
    def init_anchors(self, k: torch.Tensor, generator: torch.Generator | None = None) -> None:
        """Hyperbolic k-means on the keys of each head. k (..., nh, T, hs)."""
        keys = k.detach().transpose(0, -3).reshape(self.n_heads, -1, k.shape[-1])  # (nh, N, hs)
        m = min(self.n_anchors, keys.shape[1])
        for h in range(self.n_heads):
            centres, _ = hyperbolic_kmeans(keys[h], m, c=self.c, iters=self.kmeans_iters, generator=generator)
            self.anchors.data[h, :m] = centres.to(self.anchors.dtype)
            self.anchors.data[h, m:] = centres[:1].to(self.anchors.dtype)  # fewer keys than anchors: repeat one
        self.initialised.fill_(True)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        if not bool(self.initialised):
            self.init_anchors(k)
        return l_hida(q, k, v, self.anchors.to(q.dtype), eps=self.eps, c=self.c, causal=self.causal)
