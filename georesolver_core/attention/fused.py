"""Streaming inverse-distance attention in O(T) memory, forward and backward (sections 2.1, 5.1, 8.1, 11.2).

    o_i = sum_j n_j s_ij v_j / S_i,   s_ij = 1 / (d(q_i, k_j)^2 + eps),   S_i = sum_j n_j s_ij,

with n_j the key multiplicities of ``spec.counts`` (1 when None). Every s_ij lies in (0, 1/eps], so
the normaliser is a plain running sum over key blocks: unlike a softmax, no running maximum and no
rescaling of partial sums. The multiplicities ride in the value block: one matmul of the score tile
with v_aug = [n_j v_j, n_j] gives both sums. The forward pass keeps o and S only; the backward pass
recomputes each tile (flash-attention style) and uses

    dL/dv_j    = n_j sum_i (s_ij / S_i) g_i
    dL/ds_ij   = n_j g_i . (v_j - o_i) / S_i  = g_aug_i . v_aug_j,   g_aug = [g / S, -g.o / S]
    dL/dphi_ij = -s_ij^2 dL/ds_ij        (phi the scaled squared distance of fused_geometry)

then the geometry's pullback to q and k (two matmuls per tile). Peak extra memory is O(T d + tile),
the tile being ``TILE_ELEMENTS`` numbers over a chunk of heads. Double backward (create_graph=True,
e.g. Hessians) recomputes through the reference kernel, whose memory is O(T^2). The index sets are
``ALL_KEYS`` and ``CAUSAL``; a ``Gathered`` set runs in the reference kernel.

Where a C++ compiler is present, ``fused_ida`` without key multiplicities runs the compiled kernel of
``attention.compiled`` instead (the same formulas in one native call each way); this module's tile
scheduler serves the rest (``counts``, the weight matrix, no compiler).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

from georesolver_core.attention import compiled
from georesolver_core.attention.fused_geometry import (
    TAU,
    TileGeometry,
    blocks,
    fused_serves,
    tile_geometry,
    transpose_into,
)
from georesolver_core.attention.fused_schedule import BLOCK_K, BLOCK_Q, BLOCK_Q_CAUSAL, Schedule
from georesolver_core.attention.reference import reference_ida, reference_ida_weights
from georesolver_core.attention.spec import AllKeys, Causal, KernelSpec
from georesolver_core.validate import broadcast_batch

KEEP_ELEMENTS = 1 << 22  # forward operands up to this many numbers are kept for the backward pass
FUSED_MIN_PAIRS = 2048  # crossover measured on a 2-core CPU: 64 x 64 pairs and up run faster fused


def fused_preferred(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor | None, spec: KernelSpec) -> bool:
    """What ``impl="auto"`` picks: the fused kernel where it applies and the problem is big enough
    (below ``FUSED_MIN_PAIRS`` query-key pairs the naive kernel's fewer, smaller calls are faster).
    CPU only: the tile scheduler is a CPU thread pool, and on CUDA its per-tile launches would stall
    the stream, so GPU inputs take FlexAttention (float32, ``attention.flex``) or the reference kernel."""
    if q.device.type != "cpu":
        return False
    return q.shape[-2] * k.shape[-2] >= FUSED_MIN_PAIRS and fused_supported(q, k, v, spec)


def fused_supported(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor | None, spec: KernelSpec) -> bool:
    """Whether the fused kernel applies: one float dtype and device, non-empty, a dense or causal
    index set, a geometry with a tile class, and 1/eps far from overflow."""
    tensors = [q, k] if v is None else [q, k, v]
    if any(t.dtype not in TAU or t.dtype != q.dtype or t.device != q.device for t in tensors):
        return False
    if not isinstance(spec.keys, AllKeys | Causal):
        return False
    if min(q.shape[-2], k.shape[-2], q.shape[-1]) == 0 or (v is not None and v.shape[-1] == 0):
        return False
    if not fused_serves(spec.geometry):  # the geometry has no tile class
        return False
    tile = tile_geometry(spec.geometry)
    # Each tile score is at most 1/eps~ and a row sums sum_j n_j of them: keep that inside the float range.
    total = k.shape[-2] if spec.counts is None else max(1.0, float(spec.counts.sum(-1).max()))
    eps_t = tile.scaled_eps(spec.eps, spec.c)
    return eps_t * torch.finfo(q.dtype).max > 1e6 * total


@dataclass(frozen=True)
class _Problem:
    """One flattened call: q (H, n, d), k (H, m, d), counts (H, m) or None, the spec and the tile shape."""

    q: torch.Tensor
    k: torch.Tensor
    counts: torch.Tensor | None
    spec: KernelSpec
    block_q: int
    block_k: int

    def schedule(self) -> Schedule:
        return Schedule(self.q, self.q.shape[1], self.k.shape[1], self.block_q, self.block_k, self.spec.keys)

    def tile_geometry(self, hs: slice, sched: Schedule) -> TileGeometry:
        geo = tile_geometry(self.spec.geometry)(self.q[hs], self.k[hs], eps=self.spec.eps, c=self.spec.c)
        geo.tile(sched.tiling.rows, sched.tiling.cols)
        return geo

    def v_aug_T(self, v: torch.Tensor, hs: slice, cols) -> list[torch.Tensor]:
        """[n_j v_j, n_j]^T in key blocks, (h, dv + 1, bk) each: one matmul with a score tile gives
        sum_j n_j s_ij v_j and the row sum S_i together."""
        ones = torch.ones_like(v[hs, :, :1])  # (h, m, 1)
        v_aug = torch.cat([v[hs], ones], dim=-1)  # (h, m, dv + 1)
        if self.counts is not None:
            v_aug = v_aug.mul_(self.counts[hs, :, None])
        return _columns(v_aug.transpose(1, 2), cols)

    def reference_spec(self) -> KernelSpec:
        """The spec for the reference kernel on the flattened tensors."""
        return dataclasses.replace(self.spec, counts=self.counts)


def _inverse(row_sum: torch.Tensor) -> torch.Tensor:
    # A query that sees no key (causal, more queries than keys) has S = 0 and gets output 0.
    pos = row_sum > 0
    return torch.where(pos, 1.0 / torch.where(pos, row_sum, torch.ones_like(row_sum)), torch.zeros_like(row_sum))


def _ida_forward(p: _Problem, v: torch.Tensor):
    """v (H, m, dv) -> o (H, n, dv), S (H, n, 1), the tiles holding suspects, and the per-chunk
    operands (tile geometry, v_aug^T blocks) when they are small enough to keep for backward."""
    H, n, d = p.q.shape
    m, dv = p.k.shape[1], v.shape[-1]
    o, row_sum = p.q.new_empty(H, n, dv), p.q.new_empty(H, n, 1)
    sched = p.schedule()
    tiling = sched.tiling
    dirty: set = set()  # (first head of chunk, ib, jb) of tiles with suspects; set.add is atomic
    # Building a chunk's operands costs about 1/8 of its tiles at T = 1024; beyond KEEP_ELEMENTS they are rebuilt.
    kept: dict | None = {} if H * ((n + m) * (d + 2) + m * (dv + 1)) <= KEEP_ELEMENTS else None

    def setup(hs):
        state = p.tile_geometry(hs, sched), p.v_aug_T(v, hs, tiling.cols)
        if kept is not None:
            kept[hs.start] = state
        return state

    def task(hs, state, ib, ws, _private):
        geo, v_aug_T = state
        i0, i1 = tiling.rows[ib]
        acc_T = ws.get("acc", (geo.q.shape[0], dv + 1, i1 - i0))  # [sum_j n_j s_ij v_j, S_i]^T
        if not tiling.row_tiles[ib]:
            acc_T.zero_()  # causal, more queries than keys: rows that see no key
        for t, (jb, diag) in enumerate(tiling.row_tiles[ib]):
            s, _, sus = geo.scores(ib, jb, ws, keep=False)  # (h, bq, bk)
            if sus is not None:
                dirty.add((hs.start, ib, jb))
            if diag is not None:
                s.tril_(diag)
            # beta=0 on the first tile: the buffer's previous contents are ignored, no zero fill needed.
            acc_T.baddbmm_(v_aug_T[jb], s.transpose(1, 2), beta=1 if t else 0)
        rows_S = row_sum[hs, i0:i1]  # (h, bq, 1)
        transpose_into(rows_S, acc_T[:, dv:])
        transpose_into(o[hs, i0:i1], acc_T[:, :dv]).mul_(_inverse(rows_S))

    sched.run(setup, task)
    return o, row_sum, dirty, kept


def _pullback(p: _Problem, chunk_fns, dirty, dv=None, kept=None):
    """Shared backward pass. ``chunk_fns(hs)`` gives, for a chunk of heads, ``dl_ds(ib, jb, out)``
    writing dL/ds~ of tile (ib, jb) into out and, when ``dv`` is given, the row blocks of (g/S)^T whose
    products with the score tiles accumulate dL/dv (before the factor n_j). Only tiles in ``dirty``
    (where the forward pass found suspects) are searched for suspects again. ``kept`` holds the
    forward pass's chunk operands, if kept.

    Per tile: neg_dphi = s~^2 dL/ds~ = -dL/dphi; suspects take their share from the exact formula;
    the geometry turns it into neg_dx = -dL/dx and two matmuls accumulate neg_dx @ ka (per query
    block) and neg_dx^T @ qa (per key block). Each worker keeps its own key-side sums for a chunk,
    added up when the chunk is done.

    The sums are kept transposed, (h, D, n): BLAS accumulates a wide D x block output faster than a
    tall block x D one (measured 15-30% per matmul on CPU).
    """
    q, k = p.q, p.k
    n, m = q.shape[1], k.shape[1]
    dq, dk = torch.empty_like(q), torch.empty_like(k)
    sched = p.schedule()
    tiling = sched.tiling

    def setup(hs):
        geo = kept[hs.start][0] if kept is not None else p.tile_geometry(hs, sched)
        ka_T = _columns(geo.ka.transpose(1, 2), tiling.cols)  # (h, Dk, bk) per key block
        qa_T = _columns(geo.qa.transpose(1, 2), tiling.rows)  # (h, Dq, bq) per query block
        query_sums_T = q.new_empty(geo.q.shape[0], ka_T[0].shape[1], n)  # (h, Dk, n); each task writes its columns
        dl_ds, g_scaled_T = chunk_fns(hs)
        return geo, ka_T, qa_T, query_sums_T, dl_ds, g_scaled_T

    def task(hs, state, ib, ws, private):
        geo, ka_T, qa_T, query_sums_T, dl_ds, g_scaled_T = state
        if not private:  # this worker's key-side sums for the chunk: (h, Dq, m) and (h, dv, m)
            h = geo.k.shape[0]
            private["key_sums_T"] = k.new_zeros(h, qa_T[0].shape[1], m)
            private["dv_T"] = None if dv is None else k.new_zeros(h, dv.shape[-1], m)
            sums = (private["key_sums_T"], private["dv_T"])
            private["blocks"] = [None if t is None else _columns(t, tiling.cols) for t in sums]
            private["sparse"] = {}
        (key_sums_T, dv_T), sparse = private["blocks"], private["sparse"]
        query_sums_T_i = query_sums_T[..., slice(*tiling.rows[ib])]  # (h, Dk, bq)
        if not tiling.row_tiles[ib]:
            query_sums_T_i.zero_()
        for t, (jb, diag) in enumerate(tiling.row_tiles[ib]):
            s, aux, sus = geo.scores(ib, jb, ws, keep=True, check=(hs.start, ib, jb) in dirty)  # (h, bq, bk)
            if diag is not None:
                s.tril_(diag)
            if dv_T is not None:
                dv_T[jb].baddbmm_(g_scaled_T[ib], s)  # (h, dv, bk) += (g/S)^T s
            neg_dphi = dl_ds(ib, jb, ws.get("T", s.shape)).mul_(s).mul_(s)  # (h, bq, bk)
            if sus is not None:
                if not sparse:
                    sparse["dq"], sparse["dk"] = torch.zeros_like(geo.q), torch.zeros_like(geo.k)
                geo.add_exact_grads(sus, -neg_dphi[sus.b, sus.li, sus.lj], sparse["dq"], sparse["dk"])
            neg_dx = geo.pullback_(neg_dphi, aux)  # (h, bq, bk), in neg_dphi's storage
            if sus is not None:
                neg_dx[sus.b, sus.li, sus.lj] = 0.0
            query_sums_T_i.baddbmm_(ka_T[jb], neg_dx.transpose(1, 2), beta=1 if t else 0)
            key_sums_T[jb].baddbmm_(qa_T[ib], neg_dx)

    def finish(hs, state, privates):
        geo, query_sums_T = state[0], state[3]
        mine = privates[0]
        key_sums_T, dv_T, sparse = mine["key_sums_T"], mine["dv_T"], mine["sparse"]
        for other in privates[1:]:  # the other workers' key-side sums
            key_sums_T.add_(other["key_sums_T"])
            if dv_T is not None:
                dv_T.add_(other["dv_T"])
            for name, val in other["sparse"].items():
                sparse[name] = sparse[name].add_(val) if name in sparse else val
        if dv_T is not None:
            out = transpose_into(dv[hs], dv_T)  # (h, m, dv)
            if p.counts is not None:
                out.mul_(p.counts[hs, :, None])
        if kept is None:
            geo.release()  # the chunk's matmul operands go before finalize allocates
        geo.finalize(query_sums_T, key_sums_T, sparse.get("dq"), sparse.get("dk"), dq[hs], dk[hs])

    sched.run(setup, task, finish)
    return dq, dk


def _ida_backward(p: _Problem, v, o, row_sum, g, dirty, kept):
    dv = torch.empty_like(v)  # every head chunk writes its rows (a zero fill here would run in the caller)
    rows, cols = _ranges(p.q.shape[1], p.block_q), _ranges(p.k.shape[1], p.block_k)

    def chunk_fns(hs):
        # g_aug = [g/S, -g.o/S] (h, n, dv + 1): one matmul with v_aug^T gives dL/ds~; its first dv columns are g/S.
        g_aug = torch.cat([g[hs], -(g[hs] * o[hs]).sum(-1, keepdim=True)], dim=-1).mul_(_inverse(row_sum[hs]))
        g_aug_blocks = blocks(g_aug, rows)  # (h, bq, dv + 1) each
        g_scaled_T = _columns(g_aug[..., :-1].transpose(1, 2), rows)  # (h, dv, bq) each
        v_aug_T = kept[hs.start][1] if kept is not None else p.v_aug_T(v, hs, cols)

        def dl_ds(ib, jb, out):
            return torch.bmm(g_aug_blocks[ib], v_aug_T[jb], out=out)  # (h, bq, bk)

        return dl_ds, g_scaled_T

    dq, dk = _pullback(p, chunk_fns, dirty, dv=dv, kept=kept)
    return dq, dk, dv


def _columns(t: torch.Tensor, ranges: list[tuple[int, int]]) -> list[torch.Tensor]:
    """Views of t along its last dim, one per (start, stop) range."""
    return [t[..., a:b] for a, b in ranges]


def _ranges(n: int, b: int) -> list[tuple[int, int]]:
    return [(a, min(n, a + b)) for a in range(0, n, b)]  # the same blocks as Tiling.rows / .cols


def _double_backward(p: _Problem, inputs, grads_out):
    """create_graph=True: differentiate the reference kernel so that the result is differentiable again."""
    q, k, v = inputs
    spec = p.reference_spec()
    out = reference_ida_weights(q, k, spec) if v is None else reference_ida(q, k, v, spec)
    wrt = [t for t in (q, k, v) if t is not None and t.requires_grad]
    got = iter(torch.autograd.grad(out, wrt, grads_out, create_graph=True, allow_unused=True)) if wrt else iter(())
    res = [next(got) if t is not None and t.requires_grad else None for t in (q, k, v)]
    return tuple(res if v is not None else res[:2])


class FusedIDA(torch.autograd.Function):
    """o = IDA(q, k, v) for (H, n, d), (H, m, d), (H, m, dv) inputs of one dtype and device."""

    @staticmethod
    def forward(ctx, q, k, v, counts, spec, block_q, block_k):
        ctx.problem = _Problem(q, k, counts, spec, block_q, block_k)
        o, row_sum, ctx.dirty, ctx.kept = _ida_forward(ctx.problem, v)
        ctx.save_for_backward(q, k, v, o, row_sum)
        return o

    @staticmethod
    def backward(ctx, g):
        q, k, v, o, row_sum = ctx.saved_tensors
        p = dataclasses.replace(ctx.problem, q=q, k=k)
        if torch.is_grad_enabled():
            return (*_double_backward(p, (q, k, v), g), None, None, None, None)
        grads = _ida_backward(p, v, o, row_sum, g.contiguous(), ctx.dirty, ctx.kept)
        return (*grads, None, None, None, None)


class FusedIDAWeights(torch.autograd.Function):
    """W = IDA weights (H, n, m): tiles of n_j s~ written into the output, then divided by the row sums."""

    @staticmethod
    def forward(ctx, q, k, counts, spec, block_q, block_k):
        p = ctx.problem = _Problem(q, k, counts, spec, block_q, block_k)
        H, n, _ = q.shape
        m = k.shape[1]
        W = q.new_zeros(H, n, m)
        sched = p.schedule()
        tiling = sched.tiling
        dirty: set = set()

        def setup(hs):
            return p.tile_geometry(hs, sched)

        def task(hs, geo, ib, ws, _private):
            for jb, diag in tiling.row_tiles[ib]:
                s, _, sus = geo.scores(ib, jb, ws, keep=False)  # (h, bq, bk)
                if sus is not None:
                    dirty.add((hs.start, ib, jb))
                (i0, i1), (j0, j1) = tiling.rows[ib], tiling.cols[jb]
                if diag is not None:
                    s.tril_(diag)
                if counts is not None:
                    s.mul_(counts[hs, None, j0:j1])
                W[hs, i0:i1, j0:j1] = s

        sched.run(setup, task)
        row_sum = W.sum(-1, keepdim=True)  # (H, n, 1)
        W = W.mul_(_inverse(row_sum))
        ctx.save_for_backward(q, k, W, row_sum)
        ctx.dirty = dirty
        return W

    @staticmethod
    def backward(ctx, gW):
        q, k, W, row_sum = ctx.saved_tensors
        p = dataclasses.replace(ctx.problem, q=q, k=k)
        if torch.is_grad_enabled():
            return (*_double_backward(p, (q, k, None), gW), None, None, None, None)
        r = (W * gW).sum(-1, keepdim=True)  # (H, n, 1): sum_m W_im dL/dW_im
        inv_S = _inverse(row_sum)  # (H, n, 1)
        rows, cols = _ranges(q.shape[1], p.block_q), _ranges(k.shape[1], p.block_k)

        def chunk_fns(hs):
            def dl_ds(ib, jb, out):  # dL/ds~_ij = n_j (dL/dW_ij - r_i) / S_i, (h, bq, bk)
                (i0, i1), (j0, j1) = rows[ib], cols[jb]
                out = torch.sub(gW[hs, i0:i1, j0:j1], r[hs, i0:i1], out=out).mul_(inv_S[hs, i0:i1])
                return out if p.counts is None else out.mul_(p.counts[hs, None, j0:j1])

            return dl_ds, None

        dq, dk = _pullback(p, chunk_fns, ctx.dirty)
        return dq, dk, None, None, None, None


def _flatten(q, k, v, counts):
    """Broadcast batch dims and flatten them: (..., n, d) -> (B, n, d), counts (..., m) -> (B, m).
    Returns the batch shape too."""
    named = [("q", q.shape[:-2]), ("k", k.shape[:-2])]
    if v is not None:
        named.append(("v", v.shape[:-2]))
    if counts is not None:
        named.append(("counts", counts.shape[:-1]))
    batch = broadcast_batch([name for name, _ in named], [shape for _, shape in named])
    flat = [t.expand(*batch, *t.shape[-2:]).reshape(-1, *t.shape[-2:]) for t in (q, k, v) if t is not None]
    if counts is not None:
        counts = counts.to(q).expand(*batch, counts.shape[-1]).reshape(-1, counts.shape[-1]).contiguous()
    return batch, flat, counts


def _check_blocks(block_q: int | None, block_k: int | None, spec: KernelSpec) -> tuple[int, int]:
    bq, bk = block_q or (BLOCK_Q_CAUSAL if spec.causal else BLOCK_Q), block_k or BLOCK_K
    for name, val in (("block_q", bq), ("block_k", bk)):
        if not isinstance(val, int) or isinstance(val, bool) or not 16 <= val <= 65536:
            raise ValueError(f"{name} must be an integer in [16, 65536] (got {val!r})")
    return bq, bk


def _check_spec(spec: KernelSpec) -> None:
    if not isinstance(spec.keys, AllKeys | Causal):
        raise ValueError(f"the fused kernel takes keys=ALL_KEYS or CAUSAL (got {type(spec.keys).__name__})")
    tile_geometry(spec.geometry)  # ValueError where the geometry has no tile class


def fused_ida(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    spec: KernelSpec,
    *,
    block_q: int | None = None,
    block_k: int | None = None,
) -> torch.Tensor:
    """IDA / Dense-HIDA / SIDA output without a T x T matrix. (..., n, d), (..., m, d), (..., m, dv) -> (..., n, dv).

    Inputs are assumed validated (``georesolver_core.attention.ida`` does it); see ``fused_supported``.
    """
    bq, bk = _check_blocks(block_q, block_k, spec)
    _check_spec(spec)
    batch, (q3, k3, v3), counts = _flatten(q, k, v, spec.counts)
    if compiled.applies(q3, spec):  # one native call each way (attention.compiled)
        bq, bk = block_q or compiled.BLOCK_Q, block_k or compiled.BLOCK_K
        o = compiled.CompiledIDA.apply(q3.contiguous(), k3.contiguous(), v3.contiguous(), spec, bq, bk)
    else:
        o = FusedIDA.apply(q3.contiguous(), k3.contiguous(), v3.contiguous(), counts, spec, bq, bk)
    return o.reshape(*batch, *o.shape[-2:])


def fused_ida_weights(
    q: torch.Tensor,
    k: torch.Tensor,
    spec: KernelSpec,
    *,
    block_q: int | None = None,
    block_k: int | None = None,
) -> torch.Tensor:
    """IDA weights from the tile kernel (matmul distances, exact near 0). (..., n, d), (..., m, d) -> (..., n, m)."""
    bq, bk = _check_blocks(block_q, block_k, spec)
    _check_spec(spec)
    batch, (q3, k3), counts = _flatten(q, k, None, spec.counts)
    W = FusedIDAWeights.apply(q3.contiguous(), k3.contiguous(), counts, spec, bq, bk)
    return W.reshape(*batch, *W.shape[-2:])


__all__ = ["FusedIDA", "FusedIDAWeights", "fused_ida", "fused_ida_weights", "fused_preferred", "fused_supported"]
