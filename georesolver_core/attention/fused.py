"""Streaming inverse-distance attention in O(T) memory, forward and backward (sections 2.1, 5.1, 8.1, 11.2).

    o_i = sum_j s_ij v_j / S_i,   s_ij = 1 / (d(q_i, k_j)^2 + eps),   S_i = sum_j s_ij.

Every s_ij lies in (0, 1/eps], so the normaliser is a plain running sum over key blocks: unlike a
softmax, no running maximum and no rescaling of partial sums. The forward pass keeps o and S only;
the backward pass recomputes each tile (flash-attention style) and uses

    dL/dv_j    = sum_i (s_ij / S_i) g_i
    dL/ds_ij   = g_i . (v_j - o_i) / S_i
    dL/dphi_ij = -s_ij^2 dL/ds_ij        (phi the scaled squared distance of fused_geometry)

then the geometry's pullback to q and k (two matmuls per tile). Peak extra memory is O(T d + tile),
the tile being ``TILE_ELEMENTS`` numbers over a chunk of heads. Double backward (create_graph=True,
e.g. Hessians) recomputes through the reference kernel, whose memory is O(T^2).
"""

from __future__ import annotations

import torch

from georesolver_core.attention.fused_geometry import TAU, TILE_GEOMETRIES, blocks, transpose_into
from georesolver_core.attention.fused_schedule import BLOCK_K, BLOCK_Q, Schedule
from georesolver_core.validate import broadcast_batch

KEEP_ELEMENTS = 1 << 22  # forward operands up to this many numbers are kept for the backward pass
FUSED_MIN_PAIRS = 2048  # crossover measured on a 2-core CPU: 64 x 64 pairs and up run faster fused


def fused_preferred(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor | None, eps: float) -> bool:
    """What ``impl="auto"`` picks: the fused kernel where it applies and the problem is big enough
    (below ``FUSED_MIN_PAIRS`` query-key pairs the naive kernel's fewer, smaller calls are faster)."""
    return q.shape[-2] * k.shape[-2] >= FUSED_MIN_PAIRS and fused_supported(q, k, v, eps)


def fused_supported(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor | None, eps: float) -> bool:
    """Whether the fused kernel applies: one float dtype and device, non-empty, 1/eps far from overflow."""
    tensors = [q, k] if v is None else [q, k, v]
    if any(t.dtype not in TAU or t.dtype != q.dtype or t.device != q.device for t in tensors):
        return False
    if min(q.shape[-2], k.shape[-2], q.shape[-1]) == 0 or (v is not None and v.shape[-1] == 0):
        return False
    # Each score is at most 1/eps and a row sums m of them: keep m/eps well inside the float range.
    return eps * torch.finfo(q.dtype).max > 1e6 * k.shape[-2]


def _with_ones(v: torch.Tensor) -> torch.Tensor:
    return torch.cat([v, torch.ones_like(v[..., :1])], dim=-1)  # (h, m, dv + 1)


def _inverse(S: torch.Tensor) -> torch.Tensor:
    # A query that sees no key (causal, more queries than keys) has S = 0 and gets output 0.
    return torch.where(S > 0, 1.0 / torch.where(S > 0, S, torch.ones_like(S)), torch.zeros_like(S))


def _ida_forward(q, k, v, eps, c, geometry, causal, bq, bk):
    """(h, n, d), (h, m, d), (h, m, dv) -> o (h, n, dv), S (h, n, 1), the tiles holding suspects, and
    the per-chunk operands (geometry, [v, 1]^T blocks) when they are small enough to keep for backward."""
    H, n, d = q.shape
    m, dv = k.shape[1], v.shape[-1]
    o, S = q.new_empty(H, n, dv), q.new_empty(H, n, 1)
    sched = Schedule(q, n, m, bq, bk, causal)
    tiling = sched.tiling
    dirty: set = set()  # (first head of chunk, ib, jb) of tiles with suspects; set.add is atomic
    # Building a chunk's operands costs about 1/8 of its tiles at T = 1024; beyond KEEP_ELEMENTS they are rebuilt.
    kept: dict | None = {} if H * ((n + m) * (d + 2) + m * (dv + 1)) <= KEEP_ELEMENTS else None

    def setup(hs):
        geo = TILE_GEOMETRIES[geometry](q[hs], k[hs], eps=eps, c=c)
        geo.tile(tiling.rows, tiling.cols)
        vaT = _columns(_with_ones(v[hs]).transpose(1, 2), tiling.cols)  # (h, dv + 1, bk): ones row sums s
        if kept is not None:
            kept[hs.start] = geo, vaT
        return geo, vaT

    def task(hs, state, ib, ws, _private):
        geo, vaT = state
        i0, i1 = tiling.rows[ib]
        accT = ws.get("acc", (geo.q.shape[0], dv + 1, i1 - i0))  # [sum_j s_ij v_j, S_i]^T
        if not tiling.row_tiles[ib]:
            accT.zero_()  # causal, more queries than keys: rows that see no key
        for t, (jb, diag) in enumerate(tiling.row_tiles[ib]):
            s, _, sus = geo.scores(ib, jb, ws, keep=False)
            if sus is not None:
                dirty.add((hs.start, ib, jb))
            if diag is not None:
                s.tril_(diag)
            # beta=0 on the first tile: the buffer's previous contents are ignored, no zero fill needed.
            accT.baddbmm_(vaT[jb], s.transpose(1, 2), beta=1 if t else 0)
        S_rows = S[hs, i0:i1]
        transpose_into(S_rows, accT[:, dv:])
        transpose_into(o[hs, i0:i1], accT[:, :dv]).mul_(_inverse(S_rows))

    sched.run(setup, task)
    return o, S, dirty, kept


def _pullback(q, k, eps, c, geometry, causal, bq, bk, chunk_fns, dirty, dv=None, kept=None):
    """Shared backward pass. ``chunk_fns(hs)`` gives, for a chunk of heads, ``dl_ds(ib, jb, out)``
    writing dL/ds~ of tile (ib, jb) into out and, when ``dv`` is given, the row blocks of g/S whose
    products with the score tiles accumulate dL/dv. Only tiles in ``dirty`` (where the forward pass
    found suspects) are searched for suspects again. ``kept`` holds the forward pass's chunk operands, if kept.

    Per tile: G = s~^2 dL/ds~ = -dL/dphi; suspects take their share from the exact formula; the
    geometry turns G into H and two matmuls accumulate H @ ka (per query block) and H^T @ qa (per
    key block). Each worker keeps its own key-side sums for a chunk, added up when the chunk is done.

    The sums are kept transposed, (h, D, n): BLAS accumulates a wide D x block output faster than a
    tall block x D one (measured 15-30% per matmul on CPU).
    """
    H, n, _ = q.shape
    m = k.shape[1]
    dq, dk = torch.empty_like(q), torch.empty_like(k)
    sched = Schedule(q, n, m, bq, bk, causal)
    tiling = sched.tiling

    def setup(hs):
        if kept is not None:
            geo = kept[hs.start][0]
        else:
            geo = TILE_GEOMETRIES[geometry](q[hs], k[hs], eps=eps, c=c)
            geo.tile(tiling.rows, tiling.cols)
        kaT, qaT = _columns(geo.ka.transpose(1, 2), tiling.cols), _columns(geo.qa.transpose(1, 2), tiling.rows)
        MqT = q.new_empty(geo.q.shape[0], kaT[0].shape[1], n)  # (h, Dk, n); each task writes its columns
        return geo, kaT, qaT, MqT, *chunk_fns(hs)

    def task(hs, state, ib, ws, private):
        geo, kaT, qaT, MqT, dl_ds, gsT = state
        if not private:  # this worker's key-side sums for the chunk: (h, Dq, m) and (h, dv, m)
            private["NkT"] = k.new_zeros(geo.k.shape[0], qaT[0].shape[1], m)
            private["dvT"] = None if dv is None else k.new_zeros(geo.k.shape[0], dv.shape[-1], m)
            sums = (private["NkT"], private["dvT"])
            private["blocks"] = [None if t is None else _columns(t, tiling.cols) for t in sums]
            private["sparse"] = {}
        (NkT_b, dvT_b), sparse = private["blocks"], private["sparse"]
        MqT_i = MqT[..., slice(*tiling.rows[ib])]
        if not tiling.row_tiles[ib]:
            MqT_i.zero_()
        for t, (jb, diag) in enumerate(tiling.row_tiles[ib]):
            s, aux, sus = geo.scores(ib, jb, ws, keep=True, check=(hs.start, ib, jb) in dirty)
            if diag is not None:
                s.tril_(diag)
            if dvT_b is not None:
                dvT_b[jb].baddbmm_(gsT[ib], s)
            G = dl_ds(ib, jb, ws.get("T", s.shape)).mul_(s).mul_(s)  # -dL/dphi
            if sus is not None:
                if not sparse:
                    sparse["dq"], sparse["dk"] = torch.zeros_like(geo.q), torch.zeros_like(geo.k)
                geo.add_exact_grads(sus, -G[sus.b, sus.li, sus.lj], sparse["dq"], sparse["dk"])
            Hm = geo.pullback_(G, aux)
            if sus is not None:
                Hm[sus.b, sus.li, sus.lj] = 0.0
            MqT_i.baddbmm_(kaT[jb], Hm.transpose(1, 2), beta=1 if t else 0)
            NkT_b[jb].baddbmm_(qaT[ib], Hm)

    def finish(hs, state, privates):
        geo, MqT = state[0], state[3]
        NkT, dvT, sparse = privates[0]["NkT"], privates[0]["dvT"], privates[0]["sparse"]
        for p in privates[1:]:  # the other workers' key-side sums
            NkT.add_(p["NkT"])
            if dvT is not None:
                dvT.add_(p["dvT"])
            for key, val in p["sparse"].items():
                sparse[key] = sparse[key].add_(val) if key in sparse else val
        if dvT is not None:
            transpose_into(dv[hs], dvT)
        if kept is None:
            geo.release()  # the chunk's matmul operands go before finalize allocates
        geo.finalize(MqT, NkT, sparse.get("dq"), sparse.get("dk"), dq[hs], dk[hs])

    sched.run(setup, task, finish)
    return dq, dk


def _ida_backward(q, k, v, o, S, g, eps, c, geometry, causal, bq, bk, dirty, kept):
    dv = torch.empty_like(v)  # every head chunk writes its rows (a zero fill here would run in the caller)
    rows, cols = _ranges(q.shape[1], bq), _ranges(k.shape[1], bk)

    def chunk_fns(hs):
        ga = torch.cat([g[hs], -(g[hs] * o[hs]).sum(-1, keepdim=True)], dim=-1).mul_(_inverse(S[hs]))
        # ga = [g/S, -g.o/S] (h, n, dv + 1): one matmul with [v, 1] gives dL/ds~; its first dv columns are g/S.
        ga_b, gsT = blocks(ga, rows), _columns(ga[..., :-1].transpose(1, 2), rows)
        vaT = kept[hs.start][1] if kept is not None else _columns(_with_ones(v[hs]).transpose(1, 2), cols)

        def dl_ds(ib, jb, out):
            return torch.bmm(ga_b[ib], vaT[jb], out=out)

        return dl_ds, gsT

    dq, dk = _pullback(q, k, eps, c, geometry, causal, bq, bk, chunk_fns, dirty, dv=dv, kept=kept)
    return dq, dk, dv


def _columns(t: torch.Tensor, ranges: list[tuple[int, int]]) -> list[torch.Tensor]:
    """Views of t along its last dim, one per (start, stop) range."""
    return [t[..., a:b] for a, b in ranges]


def _ranges(n: int, b: int) -> list[tuple[int, int]]:
    return [(a, min(n, a + b)) for a in range(0, n, b)]  # the same blocks as Tiling.rows / .cols


def _reference(q, k, v, eps, c, geometry, causal):
    from georesolver_core.attention.kernel import reference_ida, reference_ida_weights

    if v is None:
        return reference_ida_weights(q, k, eps=eps, geometry=geometry, c=c, causal=causal)
    return reference_ida(q, k, v, eps=eps, geometry=geometry, c=c, causal=causal)


def _double_backward(ctx, inputs, grads_out, v_present):
    """create_graph=True: differentiate the reference kernel so that the result is differentiable again."""
    q, k, v = inputs
    out = _reference(q, k, v, ctx.eps, ctx.c, ctx.geometry, ctx.causal)
    wrt = [t for t in (q, k, v) if t is not None and t.requires_grad]
    got = iter(torch.autograd.grad(out, wrt, grads_out, create_graph=True, allow_unused=True)) if wrt else iter(())
    res = [next(got) if t is not None and t.requires_grad else None for t in (q, k, v)]
    return tuple(res[:3] if v_present else res[:2])


class FusedIDA(torch.autograd.Function):
    """o = IDA(q, k, v) for (h, n, d), (h, m, d), (h, m, dv) inputs of one dtype and device."""

    @staticmethod
    def forward(ctx, q, k, v, eps, c, geometry, causal, bq, bk):
        o, S, ctx.dirty, ctx.kept = _ida_forward(q, k, v, eps, c, geometry, causal, bq, bk)
        ctx.save_for_backward(q, k, v, o, S)
        ctx.eps, ctx.c, ctx.geometry, ctx.causal, ctx.bq, ctx.bk = eps, c, geometry, causal, bq, bk
        return o

    @staticmethod
    def backward(ctx, g):
        q, k, v, o, S = ctx.saved_tensors
        if torch.is_grad_enabled():
            return (*_double_backward(ctx, (q, k, v), g, True), None, None, None, None, None, None)
        grads = _ida_backward(
            q,
            k,
            v,
            o,
            S,
            g.contiguous(),
            ctx.eps,
            ctx.c,
            ctx.geometry,
            ctx.causal,
            ctx.bq,
            ctx.bk,
            ctx.dirty,
            ctx.kept,
        )
        return (*grads, None, None, None, None, None, None)


class FusedIDAWeights(torch.autograd.Function):
    """W = IDA weights (h, n, m): tiles of s~ written into the output, then divided by the row sums."""

    @staticmethod
    def forward(ctx, q, k, eps, c, geometry, causal, bq, bk):
        H, n, _ = q.shape
        m = k.shape[1]
        W = q.new_zeros(H, n, m)
        sched = Schedule(q, n, m, bq, bk, causal)
        tiling = sched.tiling
        dirty: set = set()

        def setup(hs):
            geo = TILE_GEOMETRIES[geometry](q[hs], k[hs], eps=eps, c=c)
            geo.tile(tiling.rows, tiling.cols)
            return geo

        def task(hs, geo, ib, ws, _private):
            for jb, diag in tiling.row_tiles[ib]:
                s, _, sus = geo.scores(ib, jb, ws, keep=False)
                if sus is not None:
                    dirty.add((hs.start, ib, jb))
                (i0, i1), (j0, j1) = tiling.rows[ib], tiling.cols[jb]
                W[hs, i0:i1, j0:j1] = s.tril_(diag) if diag is not None else s

        sched.run(setup, task)
        S = W.sum(-1, keepdim=True)  # (H, n, 1)
        W = W.mul_(_inverse(S))
        ctx.save_for_backward(q, k, W, S)
        ctx.dirty = dirty
        ctx.eps, ctx.c, ctx.geometry, ctx.causal, ctx.bq, ctx.bk = eps, c, geometry, causal, bq, bk
        return W

    @staticmethod
    def backward(ctx, gW):
        q, k, W, S = ctx.saved_tensors
        if torch.is_grad_enabled():
            return (*_double_backward(ctx, (q, k, None), gW, False), None, None, None, None, None, None)
        r = (W * gW).sum(-1, keepdim=True)  # (H, n, 1): sum_m W_im dL/dW_im
        inv_S = _inverse(S)

        rows, cols = _ranges(q.shape[1], ctx.bq), _ranges(k.shape[1], ctx.bk)

        def chunk_fns(hs):
            def dl_ds(ib, jb, out):  # dL/ds~ = (dL/dW - r) / S
                (i0, i1), (j0, j1) = rows[ib], cols[jb]
                return torch.sub(gW[hs, i0:i1, j0:j1], r[hs, i0:i1], out=out).mul_(inv_S[hs, i0:i1])

            return dl_ds, None

        dq, dk = _pullback(q, k, ctx.eps, ctx.c, ctx.geometry, ctx.causal, ctx.bq, ctx.bk, chunk_fns, ctx.dirty)
        return dq, dk, None, None, None, None, None, None


def _flatten(q, k, v):
    """Broadcast batch dims and flatten them: (..., n, d) -> (B, n, d). Returns the batch shape too."""
    shapes = [q.shape[:-2], k.shape[:-2]] + ([v.shape[:-2]] if v is not None else [])
    batch = broadcast_batch(["q", "k", "v"][: len(shapes)], shapes)
    flat = [t.expand(*batch, *t.shape[-2:]).reshape(-1, *t.shape[-2:]) for t in (q, k, v) if t is not None]
    return batch, flat


def _check_blocks(block_q: int | None, block_k: int | None) -> tuple[int, int]:
    bq, bk = block_q or BLOCK_Q, block_k or BLOCK_K
    for name, val in (("block_q", bq), ("block_k", bk)):
        if not isinstance(val, int) or isinstance(val, bool) or not 16 <= val <= 65536:
            raise ValueError(f"{name} must be an integer in [16, 65536] (got {val!r})")
    return bq, bk


def fused_ida(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    eps: float,
    geometry: str = "euclidean",
    c: float = 1.0,
    causal: bool = False,
    block_q: int | None = None,
    block_k: int | None = None,
) -> torch.Tensor:
    """IDA / Dense-HIDA / SIDA output without a T x T matrix. (..., n, d), (..., m, d), (..., m, dv) -> (..., n, dv).

    Inputs are assumed validated (``georesolver_core.attention.ida`` does it); see ``fused_supported``.
    """
    bq, bk = _check_blocks(block_q, block_k)
    batch, (q3, k3, v3) = _flatten(q, k, v)
    o = FusedIDA.apply(q3.contiguous(), k3.contiguous(), v3.contiguous(), eps, c, geometry, causal, bq, bk)
    return o.reshape(*batch, *o.shape[-2:])


def fused_ida_weights(
    q: torch.Tensor,
    k: torch.Tensor,
    *,
    eps: float,
    geometry: str = "euclidean",
    c: float = 1.0,
    causal: bool = False,
    block_q: int | None = None,
    block_k: int | None = None,
) -> torch.Tensor:
    """IDA weights from the tile kernel (matmul distances, exact near 0). (..., n, d), (..., m, d) -> (..., n, m)."""
    bq, bk = _check_blocks(block_q, block_k)
    batch, (q3, k3) = _flatten(q, k, None)
    W = FusedIDAWeights.apply(q3.contiguous(), k3.contiguous(), eps, c, geometry, causal, bq, bk)
    return W.reshape(*batch, *W.shape[-2:])


__all__ = ["FusedIDA", "FusedIDAWeights", "fused_ida", "fused_ida_weights", "fused_preferred", "fused_supported"]
