"""Tile math of the streaming inverse-distance kernels, one class per geometry (sections 2.1, 5.1, 8.1).

A fused kernel never holds a T x T matrix. It walks (query block, key block) tiles and needs, per tile,

    scores    s~_ij = 1 / (phi(x_ij) + eps~)       with x = qa @ ka^T, one matmul,
    pullback  H_ij = -dL/dx_ij  from  G_ij = -dL/dphi_ij,  then  dq, dk from two matmuls H @ ka, H^T @ qa
              (the score operands double as the gradient bases: no further O(T d) copies),

where phi is the squared distance up to a constant factor (which cancels in the normalised weights):

    Euclidean   x = |q|^2 + |k|^2 - 2 q.k + eps = D + eps     phi = x - eps,  eps~ = eps
    Poincaré    x = w = 2c |q - k|^2 / ((1 - c|q|^2)(1 - c|k|^2))
                phi = arcosh(1 + w)^2 = c D,  eps~ = c eps                           (section 4)
    sphere      x = S = q.k (unit vectors)   phi = arccos(S)^2 = D,  eps~ = eps     (section 8.1)

Exactness near zero distance (DESIGN.md section 4). The matmul forms cancel: for q = k the computed
|q|^2 + |k|^2 - 2 q.k is rounding noise of size ~ u (|q|^2 + |k|^2), far above eps = 1e-6 in float32,
and arccos loses small angles the same way. Entries whose x is within a factor ``tau`` of that noise
("suspects": near-duplicate pairs, and near-antipodal pairs on the sphere) are found by tile and row
minima (one cheap reduction per tile when there are none) and recomputed exactly from the differences q_i - k_j, as the reference kernel does; their
gradient is added from the exact formula and removed from the matmul pullback. Every other entry
has relative error <~ u / tau.
"""

from __future__ import annotations

import functools
import math
import threading
from dataclasses import dataclass

import torch

from georesolver_core.attention.spec import kernel_maths, served
from georesolver_core.geometry import euclidean, poincare
from georesolver_core.geometry.sphere import sq_distance as sphere_sq_distance

# Suspect threshold relative to |q|^2 + |k|^2: entries below it are recomputed exactly.
TAU = {torch.float32: 2.0**-7, torch.float64: 2.0**-20}
GATHER_ELEMENTS = 1 << 20  # numbers gathered at once when recomputing suspects exactly


@dataclass
class Suspects:
    """Tile entries recomputed exactly: head b, global query row i, global key column j, local offsets."""

    b: torch.Tensor  # (N,)
    i: torch.Tensor  # (N,) global query index
    j: torch.Tensor  # (N,) global key index
    li: torch.Tensor  # (N,) row inside the tile
    lj: torch.Tensor  # (N,) column inside the tile


class Workspace:
    """Reused tile buffers. A fresh multi-megabyte tensor per tile costs page faults that take as
    long as the tile's arithmetic on CPU, so every tile-sized temporary lives here."""

    def __init__(self, like: torch.Tensor):
        self.like = like.new_empty(0)  # its dtype and device only: the caller's tensor is not kept alive
        self.bufs: dict[str, torch.Tensor] = {}
        self.views: dict[tuple, torch.Tensor] = {}

    def get(self, name: str, shape: tuple[int, ...]) -> torch.Tensor:
        view = self.views.get((name, shape))
        if view is None:
            numel = math.prod(shape)
            buf = self.bufs.get(name)
            if buf is None or buf.numel() < numel:
                buf = self.bufs[name] = self.like.new_empty(numel)
                self.views = {key: v for key, v in self.views.items() if key[0] != name}
            view = self.views[(name, shape)] = buf[:numel].view(shape)
        return view


_THREAD = threading.local()


def thread_workspace(like: torch.Tensor) -> Workspace:
    """This thread's ``Workspace`` for tensors of like's dtype and device, kept from call to call.

    A workspace made per call starts with fresh tile buffers, and on CPU a fresh buffer of more than
    128 KiB is a new memory mapping whose pages fault in on first touch, in every call. The pool's
    workers live as long as the process, so each keeps one set (a few MiB at the default tiles).

    One set per inference mode too: a buffer made under ``torch.inference_mode`` is an inference tensor,
    which a later call outside it may not write in place (a RuntimeError, on whichever worker thread had
    served an inference-mode call before)."""
    spaces = _THREAD.__dict__.setdefault("spaces", {})
    key = (like.dtype, like.device, torch.is_inference_mode_enabled())
    if key not in spaces:
        spaces[key] = Workspace(like)
    return spaces[key]


def blocks(t: torch.Tensor, ranges: list[tuple[int, int]]) -> list[torch.Tensor]:
    """Views of t along dim 1, one per (start, stop) range: sliced once per call, not once per tile."""
    return [t[:, a:b] for a, b in ranges]


def transpose_into(dst: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    """dst (h, n, D) = src (h, D, n) transposed, head by head: torch's 2-D transposing copy is about
    four times faster than the batched one."""
    for i in range(src.shape[0]):
        dst[i].copy_(src[i].t())
    return dst


def transposed(src: torch.Tensor) -> torch.Tensor:
    """(h, D, n) -> a new (h, n, D) tensor, by ``transpose_into``."""
    return transpose_into(src.new_empty(src.shape[0], src.shape[2], src.shape[1]), src)


def _chunks(n: int, d: int):
    step = max(1, GATHER_ELEMENTS // max(d, 1))
    for start in range(0, n, step):
        yield slice(start, min(n, start + step))


def _plus(x: torch.Tensor, extra: torch.Tensor | None) -> torch.Tensor:
    return x if extra is None else x.add_(extra)


def _sq_norm(x: torch.Tensor) -> torch.Tensor:
    return (x * x).sum(-1, keepdim=True)  # (h, n, 1)


class TileGeometry:
    """Shared driver logic; subclasses define the matmul operands and the scalar function phi."""

    eps_t: float  # eps~ of the module doc
    grad_scale: float = 1.0  # constant factor left out of the dense pullback, applied in finalize

    @staticmethod
    def scaled_eps(eps: float, c: float) -> float:
        """eps~ of the module doc: the largest tile score is 1/eps~."""
        return eps

    def __init__(self, q: torch.Tensor, k: torch.Tensor, *, eps: float, c: float = 1.0):
        self.q, self.k = q, k  # (h, n, d), (h, m, d)
        self.eps, self.c = eps, c
        self.tau = TAU[q.dtype]

    # --- scores -----------------------------------------------------------------------------
    def tile(self, rows: list[tuple[int, int]], cols: list[tuple[int, int]]) -> None:
        """Fix the block ranges; the matmul operands are sliced once here."""
        self.rows, self.cols = rows, cols
        self.qa_b = blocks(self.qa, rows)
        self.kaT_b = [kb.transpose(1, 2) for kb in blocks(self.ka, cols)]

    def release(self) -> None:
        """Drop the matmul operands once the last tile is done (finalize needs only q, k and norms)."""
        for name in ("qa", "ka", "qa_b", "kaT_b"):
            self.__dict__.pop(name, None)

    def scores(self, ib: int, jb: int, ws: Workspace, *, keep: bool, check: bool = True):
        """s~ for tile (ib, jb) with suspects exact; with ``keep`` also what the pullback needs.
        ``check=False`` skips the search for suspects (the backward pass, on tiles where the forward
        pass found none). The result and aux live in ``ws`` and are overwritten by the next call.
        """
        (i0, i1), (j0, j1) = self.rows[ib], self.cols[jb]
        x = torch.bmm(self.qa_b[ib], self.kaT_b[jb], out=ws.get("x", (self.q.shape[0], i1 - i0, j1 - j0)))
        sus = self.suspects(x, i0, i1, j0, j1) if check else None
        s, aux = self.transform_(x, keep, ws)
        if sus is not None:
            s[sus.b, sus.li, sus.lj] = self.exact_scores(sus)
        return s, aux, sus

    def suspects(self, x, i0, i1, j0, j1) -> Suspects | None:
        """Three stages, each only if the previous one flags something: the tile minimum against one
        bound for the whole head chunk, row minima against row bounds, entries of flagged rows."""
        if float(x.amin()) >= self.chunk_bound:
            return None
        flagged = x.amin(dim=-1) < self.row_bound(i0, i1, j0, j1)  # (h, bq)
        if not bool(flagged.any()):
            return None
        rows = flagged.nonzero()  # (r, 2)
        b, li = rows[:, 0], rows[:, 1]
        hit = (x[b, li] < self.entry_bound(b, li + i0, j0, j1)).nonzero()  # (N, 2)
        if hit.shape[0] == 0:
            return None
        b, li, lj = b[hit[:, 0]], li[hit[:, 0]], hit[:, 1]
        return Suspects(b, li + i0, lj + j0, li, lj)

    def _key_max(self, j0, j1, compute):
        # Per key block maxima for the row bounds, computed once per head chunk.
        cache = self.__dict__.setdefault("_key_cache", {})
        if (j0, j1) not in cache:
            cache[(j0, j1)] = compute()
        return cache[(j0, j1)]

    # --- gradients --------------------------------------------------------------------------
    def pullback_(self, G: torch.Tensor, aux) -> torch.Tensor:
        """H = G * phi'(x) / grad_scale in place. Euclidean: phi' = 1."""
        return G

    def add_exact_grads(self, sus: Suspects, dphi: torch.Tensor, dq: torch.Tensor, dk: torch.Tensor) -> None:
        """Accumulate dL/dq_i and dL/dk_j of the suspect entries (dphi = dL/dphi_ij) into dq, dk."""
        for sl in _chunks(sus.b.shape[0], self.q.shape[-1]):
            b, i, j = sus.b[sl], sus.i[sl], sus.j[sl]
            gq, gk = self.exact_grads(b, i, j, dphi[sl])  # (N, d) each
            dq.index_put_((b, i), gq, accumulate=True)
            dk.index_put_((b, j), gk, accumulate=True)

    def exact_scores(self, sus: Suspects) -> torch.Tensor:
        out = [self.exact_phi(sus.b[sl], sus.i[sl], sus.j[sl]) for sl in _chunks(sus.b.shape[0], self.q.shape[-1])]
        return (torch.cat(out) + self.eps_t).reciprocal()


class Euclidean(TileGeometry):
    """IDA: x = [q, |q|^2 + eps, 1] . [-2k, 1, |k|^2] = |q - k|^2 + eps, phi' = 1."""

    def __init__(self, q, k, *, eps, c=1.0):
        super().__init__(q, k, eps=eps, c=c)
        self.eps_t = eps
        self.nq, self.nk = _sq_norm(q), _sq_norm(k)  # (h, n, 1), (h, m, 1)
        one_q, one_k = torch.ones_like(self.nq), torch.ones_like(self.nk)
        self.qa = torch.cat([q, self.nq + eps, one_q], dim=-1)  # (h, n, d + 2)
        self.ka = torch.cat([-2.0 * k, one_k, self.nk], dim=-1)  # (h, m, d + 2)

    @functools.cached_property
    def chunk_bound(self) -> float:
        return self.tau * float(self.nq.amax() + self.nk.amax())

    def row_bound(self, i0, i1, j0, j1):
        # x >= eps always; only entries with x below tau (|q|^2 + |k|^2) carry cancellation noise.
        key = self._key_max(j0, j1, lambda: self.nk[:, j0:j1, 0].amax(-1, keepdim=True))
        return self.tau * (self.nq[:, i0:i1, 0] + key)  # (h, bq)

    def entry_bound(self, b, i, j0, j1):
        return self.tau * (self.nq[b, i] + self.nk[b, j0:j1, 0])  # (r, bk)

    def transform_(self, x, keep, ws):
        return x.reciprocal_(), None

    def exact_phi(self, b, i, j):
        return euclidean.sq_distance(self.q[b, i], self.k[b, j])  # (N,)

    def exact_grads(self, b, i, j, dphi):
        diff = 2.0 * (self.q[b, i] - self.k[b, j])  # (N, d): d|q - k|^2 / dq
        g = dphi[:, None] * diff
        return g, -g

    def finalize(self, query_sums_T, key_sums_T, sparse_q, sparse_k, out_q, out_k):
        """dL/dq_i = 2 (sum_j H_ij k_j - (sum_j H_ij) q_i), and symmetrically for k; plus the suspects.

        M = H @ ka = [-2 sum_j H_ij k_j, sum_j H_ij, .] and N = H^T @ qa = [sum_i H_ij q_i, ., sum_i H_ij],
        given transposed, (h, D, n) and (h, D, m); the results go into out_q (h, n, d) and out_k (h, m, d).
        """
        d = self.q.shape[-1]
        # Elementwise ops on the transposed views themselves run several times slower than a copy first.
        M, N = query_sums_T, key_sums_T  # the module doc's names
        transpose_into(out_q, M[:, :d]).addcmul_(M[:, d : d + 1].transpose(1, 2), self.q, value=2.0).neg_()
        transpose_into(out_k, N[:, :d]).addcmul_(N[:, d + 1 :].transpose(1, 2), self.k, value=-1.0).mul_(2.0)
        _plus(out_q, sparse_q)
        _plus(out_k, sparse_k)


class Poincare(TileGeometry):
    """Dense-HIDA: x = w = A_i B_j |q_i - k_j|^2 with A = 2c / (1 - c|q|^2), B = 1 / (1 - c|k|^2).

    phi(w) = arcosh(1 + w)^2 computed as log1p(w + sqrt(w^2 + 2w))^2 (no loss for small w, and
    torch's asinh/acosh are slow on CPU); phi'(w) = 2 arcosh(1 + w) / sqrt(w^2 + 2w) -> 2 as w -> 0.
    """

    grad_scale = math.sqrt(2.0)

    @staticmethod
    def scaled_eps(eps: float, c: float) -> float:
        return c * eps  # phi = c D

    def __init__(self, q, k, *, eps, c=1.0):
        super().__init__(q, k, eps=eps, c=c)
        self.eps_t = self.scaled_eps(eps, c)
        self.eps_tensor = torch.tensor(self.eps_t, dtype=q.dtype, device=q.device)
        tiny = torch.finfo(q.dtype).eps
        self.nq, self.nk = _sq_norm(q), _sq_norm(k)
        # Same clamp as the reference distance: a point rounded onto the rim stays finite, gradient 0.
        alpha, beta = 1.0 - c * self.nq, 1.0 - c * self.nk  # (h, n, 1), (h, m, 1)
        self.mask_a, self.mask_b = (alpha > tiny).to(q.dtype), (beta > tiny).to(q.dtype)
        self.A = 2.0 * c / alpha.clamp_min(tiny)  # (h, n, 1)
        self.B = 1.0 / beta.clamp_min(tiny)  # (h, m, 1)
        one_q, one_k = torch.ones_like(self.nq), torch.ones_like(self.nk)
        self.qa = self.A * torch.cat([q, self.nq, one_q], dim=-1)  # (h, n, d + 2)
        self.ka = self.B * torch.cat([-2.0 * k, one_k, self.nk], dim=-1)  # (h, m, d + 2)

    @functools.cached_property
    def chunk_bound(self) -> float:
        return self.tau * float(self.A.amax() * (self.nq.amax() * self.B.amax() + (self.B * self.nk).amax()))

    def row_bound(self, i0, i1, j0, j1):
        def maxima():
            B = self.B[:, j0:j1, 0]  # (h, bk)
            return B.amax(-1, keepdim=True), (B * self.nk[:, j0:j1, 0]).amax(-1, keepdim=True)

        Bmax, BNmax = self._key_max(j0, j1, maxima)
        return self.tau * self.A[:, i0:i1, 0] * (self.nq[:, i0:i1, 0] * Bmax + BNmax)  # (h, bq)

    def entry_bound(self, b, i, j0, j1):
        return self.tau * self.A[b, i] * self.B[b, j0:j1, 0] * (self.nq[b, i] + self.nk[b, j0:j1, 0])  # (r, bk)

    def transform_(self, w, keep, ws):
        y = torch.addcmul(w, w, w, value=0.5, out=ws.get("y", w.shape)).sqrt_()  # sqrt((w^2 + 2w) / 2)
        t = w.add_(y, alpha=math.sqrt(2.0)).log1p_()  # arcosh(1 + w), in w's storage
        if keep:
            s = torch.addcmul(self.eps_tensor, t, t, out=ws.get("s", w.shape)).reciprocal_()
            return s, (t, y)
        return torch.addcmul(self.eps_tensor, t, t, out=y).reciprocal_(), None

    def pullback_(self, G, aux):
        t, y = aux
        return G.mul_(t).div_(y)  # phi' / sqrt(2)

    def _w_exact(self, b, i, j):
        diff = self.q[b, i] - self.k[b, j]  # (N, d)
        return self.A[b, i, 0] * self.B[b, j, 0] * (diff * diff).sum(-1), diff

    def exact_phi(self, b, i, j):
        return self.c * poincare.sq_distance(self.q[b, i], self.k[b, j], self.c)  # (N,): phi = c d^2

    def exact_grads(self, b, i, j, dphi):
        w, diff = self._w_exact(b, i, j)
        z = torch.sqrt(w * w + 2.0 * w)
        t = torch.log1p(w + z)
        dphi_dw = torch.where(z > 0, 2.0 * t / torch.where(z > 0, z, torch.ones_like(z)), 2.0)
        gw = (dphi * dphi_dw)[:, None]  # (N, 1) dL/dw
        A, B = self.A[b, i], self.B[b, j]  # (N, 1)
        q, k = self.q[b, i], self.k[b, j]
        # dw/dq = 2AB (q - k) + w A q [alpha not clamped];  dw/dk = -2AB (q - k) + 2 c w B k [beta not clamped]
        gq = gw * (2.0 * A * B * diff + (w[:, None] * A * self.mask_a[b, i]) * q)
        gk = gw * (-2.0 * A * B * diff + (2.0 * self.c * w[:, None] * B * self.mask_b[b, j]) * k)
        return gq, gk

    def finalize(self, query_sums_T, key_sums_T, sparse_q, sparse_k, out_q, out_k):
        """From M = H @ ka = [-2 M_k, M_B, M_B|k|^2] and N = H^T @ qa = [N_q, N_A|q|^2, N_A] (given
        transposed), where M_k = sum_j H_ij B_j k_j etc. (module doc, H = -dL/dw / sqrt 2):

        dL/dq_i = -2A_i (M_B q_i - M_k) - A_i^2 q_i (|q_i|^2 M_B + M_B|k|^2 - 2 q_i.M_k)
        dL/dk_j = -2B_j (N_A k_j - N_q) - 2c B_j^2 k_j (|k_j|^2 N_A + N_A|q|^2 - 2 k_j.N_q)
        """
        d, s = self.q.shape[-1], self.grad_scale
        q, k, A, B = self.q, self.k, self.A, self.B
        Mq, Nk = transposed(query_sums_T), transposed(key_sums_T)
        Mk, MB, MBn = Mq[..., :d].mul_(-0.5), Mq[..., d : d + 1], Mq[..., d + 1 :]
        Nq, NAn, NA = Nk[..., :d], Nk[..., d : d + 1], Nk[..., d + 1 :]
        sum_w_q = A * (self.nq * MB + MBn - 2.0 * (q * Mk).sum(-1, keepdim=True))  # sum_j H_ij w_ij, (h, n, 1)
        sum_w_k = B * (self.nk * NA + NAn - 2.0 * (k * Nq).sum(-1, keepdim=True))  # sum_i H_ij w_ij, (h, m, 1)
        # Written as (row coefficient) * q + (row coefficient) * M: no full-size temporary.
        torch.mul(q, -s * (2.0 * A * MB + A * self.mask_a * sum_w_q), out=out_q).addcmul_(Mk, 2.0 * s * A)
        coef_k = -s * (2.0 * B * NA + 2.0 * self.c * B * self.mask_b * sum_w_k)
        torch.mul(k, coef_k, out=out_k).addcmul_(Nq, 2.0 * s * B)
        _plus(out_q, sparse_q)
        _plus(out_k, sparse_k)


class Sphere(TileGeometry):
    """SIDA on unit vectors: x = S = q.k, phi = arccos(S)^2, phi'(S) = -2 arccos(S) / sqrt(1 - S^2).

    Inputs are normalised here (per head chunk, so no full-size copies), and ``finalize`` applies the
    normalisation's Jacobian (I - q q^T) / |q|: gradients are tangent to the sphere. Suspects (|S| > 1 - tau: near-equal or near-antipodal)
    use d = 2 atan2(|q - k|, |q + k|) and the tangent gradient -2 d P_q(k) / |P_q(k)|.
    """

    grad_scale = -2.0

    def __init__(self, q, k, *, eps, c=1.0):
        self.rq, self.rk = q.norm(dim=-1, keepdim=True), k.norm(dim=-1, keepdim=True)  # (h, n, 1), (h, m, 1)
        q, k = q / self.rq, k / self.rk
        super().__init__(q, k, eps=eps, c=c)
        self.eps_t = eps
        self.eps_tensor = torch.tensor(eps, dtype=q.dtype, device=q.device)
        self.one = torch.ones((), dtype=q.dtype, device=q.device)
        self.qa, self.ka = q, k

    def suspects(self, x, i0, i1, j0, j1):
        lo, hi = torch.aminmax(x)
        if float(hi) <= 1.0 - self.tau and float(lo) >= self.tau - 1.0:
            return None
        lo, hi = torch.aminmax(x, dim=-1)  # (h, bq) each
        flagged = (hi > 1.0 - self.tau) | (lo < self.tau - 1.0)
        if not bool(flagged.any()):
            return None
        rows = flagged.nonzero()  # (r, 2)
        b, li = rows[:, 0], rows[:, 1]
        hit = (x[b, li].abs() > 1.0 - self.tau).nonzero()
        if hit.shape[0] == 0:
            return None
        b, li, lj = b[hit[:, 0]], li[hit[:, 0]], hit[:, 1]
        return Suspects(b, li + i0, lj + j0, li, lj)

    def transform_(self, S, keep, ws):
        if keep:
            theta = torch.acos(S, out=ws.get("theta", S.shape))
            r = torch.addcmul(self.one, S, S, value=-1.0, out=ws.get("r", S.shape)).rsqrt_()  # 1 / sin(theta)
            return torch.addcmul(self.eps_tensor, theta, theta, out=S).reciprocal_(), (theta, r)
        theta = S.acos_()
        return torch.addcmul(self.eps_tensor, theta, theta, out=ws.get("s", S.shape)).reciprocal_(), None

    def pullback_(self, G, aux):
        theta, r = aux
        return G.mul_(theta).mul_(r)  # phi' / (-2)

    def exact_phi(self, b, i, j):
        return sphere_sq_distance(self.q[b, i], self.k[b, j])  # (N,)

    @staticmethod
    def _tangent_unit(x, y):
        # P_x(y) / |P_x(y)| from y -/+ x, whichever is short: P_x(y - x) = P_x(y + x) = P_x(y) exactly,
        # and the short difference keeps the direction accurate when y is close to +-x.
        near = ((y - x) * (y - x)).sum(-1, keepdim=True) <= ((y + x) * (y + x)).sum(-1, keepdim=True)
        u = torch.where(near, y - x, y + x)  # (N, d)
        p = u - (x * u).sum(-1, keepdim=True) * x
        norm = p.norm(dim=-1, keepdim=True)
        return torch.where(norm > 0, p / torch.where(norm > 0, norm, torch.ones_like(norm)), 0.0)

    def exact_grads(self, b, i, j, dphi):
        q, k = self.q[b, i], self.k[b, j]
        theta = 2.0 * torch.atan2((q - k).norm(dim=-1), (q + k).norm(dim=-1))
        g = (-2.0 * dphi * theta)[:, None]  # grad_q theta^2 = -2 theta P_q(k) / |P_q(k)|
        return g * self._tangent_unit(q, k), g * self._tangent_unit(k, q)

    def finalize(self, query_sums_T, key_sums_T, sparse_q, sparse_k, out_q, out_k):
        """dL/dq^_i = sum_j dL/dS_ij k_j with dL/dS = -(grad_scale) H, then through q^ = q / |q|."""
        sides = ((query_sums_T, sparse_q, self.q, self.rq, out_q), (key_sums_T, sparse_k, self.k, self.rk, out_k))
        for sums_T, sparse, x, r, out in sides:
            g = _plus(transpose_into(out, sums_T).mul_(-self.grad_scale), sparse)  # dL/dx^, (h, n, d)
            g.sub_((x * g).sum(-1, keepdim=True) * x).div_(r)


def tile_classes() -> dict[str, type[TileGeometry]]:
    """The fused kernel's tile classes by name, the names a registry entry's ``Geometry.tile`` gives."""
    return {cls.__name__: cls for cls in TileGeometry.__subclasses__()}


def fused_serves(geometry: str) -> bool:
    """Whether the fused kernel has a tile class for the geometry (else it refuses it: ``tile_geometry``)."""
    return geometry in served(tile_classes())


def tile_geometry(geometry: str) -> type[TileGeometry]:
    """The tile class the geometry's registry entry names (``Geometry.tile``); ValueError naming the
    geometry and the fused kernel where it names none."""
    return kernel_maths("fused", geometry, tile_classes())
