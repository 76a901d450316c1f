"""The compiled CPU kernel of inverse-distance attention: one native call forward, one backward (sections 2.1, 5.1, 8.1).

``csrc/ida_cpu.cpp`` streams key blocks through per-thread tiles the way torch's CPU flash-attention kernel
does, over (head x query block) forward and (head x key-block group) backward inside one
``at::parallel_for``; this module builds it on first use (``torch.utils.cpp_extension``, cached, a one-line
notice while it compiles), prepares each geometry's O(T d) operands and assembles the gradients:

    Euclidean  phi = D = |q|^2 + |k|^2 - 2 q.k            dL/dq_i = 2 (rq_i q_i - GQ_i)
    Poincaré   phi = arcosh(1 + w)^2, w = A_i B_j D        dL/dq_i = 2 A_i (rq_i q_i - GQ_i) + A_i [a_i] rw_i q_i
    sphere     phi = arccos(q^.k^)^2                       dL/dq^_i = GQ_i, then through q^ = q / |q|

with GQ_i = sum_j Hq_ij k_j, rq_i = sum_j Hq_ij, rw_i = sum_j H_ij w_ij (H = dL/dx, Hq = H B_j on the ball,
[a_i] = 0 where the rim clamp holds), and the symmetric sums for k. The pairs whose matmul form cancels
take their gradient from the exact formula, which the kernel adds into GQ and GK pre-scaled.

The Python tile kernel of ``attention.fused`` stays for what this one does not take: key multiplicities
(``spec.counts``), the weight matrix, and machines without a C++ compiler. ``GR_COMPILED=0`` turns this
path off (the benchmark's comparison of the two).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import threading
from pathlib import Path

import torch
from torch.profiler import record_function

from georesolver_core.attention.fused_geometry import TAU
from georesolver_core.attention.reference import reference_ida
from georesolver_core.attention.spec import Causal, KernelSpec, kernel_maths, served

SOURCE = Path(__file__).with_name("csrc") / "ida_cpu.cpp"
# Tile shape (queries x keys per tile), tuned with `python -m georesolver_core bench` on a 2-core CPU.
BLOCK_Q = 128
BLOCK_K = 256

_LOCK = threading.Lock()
_STATE: dict = {}  # "module" once built; "error" if the build failed


def _flags() -> list[str]:
    # ATen's Vectorized picks its SIMD width at compile time (CPU_CAPABILITY_*), so the build follows the
    # capability torch itself dispatches to on this CPU, with the flags torch builds those kernels with.
    # Elsewhere (ARM, old x86) the same code runs on the scalar Vectorized.
    # -fopenmp: at::parallel_for is a header template whose OpenMP pragma is compiled here (without the flag
    # it runs on one thread, and MKL then threads each small tile product on its own).
    capability = torch.backends.cpu.get_cpu_capability()
    if capability == "AVX512":
        isa = ["-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq", "-mfma"]
    elif capability == "AVX2":
        isa = ["-mavx2", "-mfma"]
    else:
        return ["-O3", "-fopenmp"]
    return ["-O3", "-fopenmp", *isa, f"-DCPU_CAPABILITY={capability}", f"-DCPU_CAPABILITY_{capability}"]


def _load():
    from torch.utils import cpp_extension

    flags = _flags()
    digest = hashlib.sha1(SOURCE.read_bytes() + " ".join(flags).encode()).hexdigest()[:12]
    name = f"georesolver_ida_cpu_{digest}"
    build_dir = Path(cpp_extension._get_build_directory(name, verbose=False))
    built = build_dir / f"{name}.so"
    if built.is_file():  # built from this very source and flags (the name's digest): import it, no build check
        spec = importlib.util.spec_from_file_location(name, built)
        loaded = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(loaded)
        return loaded
    print("georesolver: building the compiled attention kernel (once, about 30 s)...", file=sys.stderr)
    return cpp_extension.load(
        name=name, sources=[str(SOURCE)], extra_cflags=flags, extra_ldflags=["-fopenmp"], verbose=False
    )


def module():
    """The built extension, or None where it cannot be built (no compiler) or ``GR_COMPILED=0``."""
    if os.environ.get("GR_COMPILED", "1") == "0":
        return None
    with _LOCK:
        if "module" not in _STATE and "error" not in _STATE:
            try:
                _STATE["module"] = _load()
            except Exception as err:  # no compiler, no headers: the Python tile path runs instead
                _STATE["error"] = f"{type(err).__name__}: {str(err).strip().splitlines()[-1][:200]}"
                print(f"georesolver: compiled kernel unavailable ({_STATE['error']})", file=sys.stderr)
        return _STATE.get("module")


def path_name() -> str:
    """Which CPU path ``fused_ida`` takes: "compiled" or "python tiles (why)"."""
    if os.environ.get("GR_COMPILED", "1") == "0":
        return "python tiles (GR_COMPILED=0)"
    return "compiled" if module() is not None else f"python tiles ({_STATE.get('error', 'not built')})"


def applies(q: torch.Tensor, spec: KernelSpec) -> bool:
    """Whether the compiled kernel takes this call: CPU, float32 / float64, no key multiplicities."""
    return (
        q.device.type == "cpu" and spec.counts is None and spec.geometry in served(SIDES) and module() is not None
    )


class _Flat:
    """IDA: phi = D = |q|^2 + |k|^2 - 2 q.k;  dL/dq_i = 2 (rq_i q_i - GQ_i), dL/dk_j = 2 (ck_j k_j - GK_j)."""

    code = 0

    @staticmethod
    def operands(q, k, spec) -> dict:
        return {
            "q": q,
            "k": k,
            "nq": (q * q).sum(-1).contiguous(),
            "nk": (k * k).sum(-1).contiguous(),
            "eps_t": spec.eps,
        }

    @staticmethod
    def assemble(ops, spec, GQ, rq, rw, GK, ck, cw):
        dq = torch.addcmul(GQ.neg_(), rq[..., None], ops["q"]).mul_(2.0)
        dk = torch.addcmul(GK.neg_(), ck[..., None], ops["k"]).mul_(2.0)
        return dq, dk


class _Ball:
    """Dense-HIDA: phi = arcosh(1 + w)^2, w = A_i B_j D;  dL/dq_i = 2 A_i (rq_i q_i - GQ_i) + A_i [a_i] rw_i q_i,
    dL/dk_j = 2 B_j (ck_j k_j - GK_j) + 2c B_j [b_j] cw_j k_j."""

    code = 1

    @staticmethod
    def operands(q, k, spec) -> dict:
        c, tiny = float(spec.c), torch.finfo(q.dtype).eps
        nq, nk = (q * q).sum(-1).contiguous(), (k * k).sum(-1).contiguous()  # (BH, n), (BH, m)
        # The clamp of geometry/poincare.py: a point rounded onto the rim stays finite, its A' / B' term 0.
        alpha, beta = 1.0 - c * nq, 1.0 - c * nk
        return {
            "q": q, "k": k, "nq": nq, "nk": nk, "eps_t": c * spec.eps,  # phi = c d^2
            "A": 2.0 * c / alpha.clamp_min(tiny), "B": 1.0 / beta.clamp_min(tiny),
            "ma": (alpha > tiny).to(q.dtype), "mb": (beta > tiny).to(q.dtype),
        }  # fmt: skip

    @staticmethod
    def assemble(ops, spec, GQ, rq, rw, GK, ck, cw):
        q, k, c = ops["q"], ops["k"], float(spec.c)
        A, B = ops["A"][..., None], ops["B"][..., None]
        dq = torch.addcmul(GQ.neg_(), rq[..., None], q).mul_(2.0 * A)
        dq.addcmul_(A * ops["ma"][..., None] * rw[..., None], q)
        dk = torch.addcmul(GK.neg_(), ck[..., None], k).mul_(2.0 * B)
        dk.addcmul_(2.0 * c * B * ops["mb"][..., None] * cw[..., None], k)
        return dq, dk


class _Sphere:
    """SIDA on q^ = q / |q|: phi = arccos(q^.k^)^2;  dL/dq^_i = GQ_i, then through the normalisation:
    dL/dq = (I - q^ q^T) GQ / |q| (a gradient tangent to the sphere)."""

    code = 2

    @staticmethod
    def operands(q, k, spec) -> dict:
        rq, rk = q.norm(dim=-1, keepdim=True), k.norm(dim=-1, keepdim=True)  # (BH, n, 1), (BH, m, 1)
        return {"q": (q / rq).contiguous(), "k": (k / rk).contiguous(), "rq": rq, "rk": rk, "eps_t": spec.eps}

    @staticmethod
    def assemble(ops, spec, GQ, rq, rw, GK, ck, cw):
        pairs = ((ops["q"], ops["rq"], GQ), (ops["k"], ops["rk"], GK))
        return tuple(G.sub_((x * G).sum(-1, keepdim=True) * x).div_(r) for x, r, G in pairs)


# keyed by the geometry registry's tile class (``Geometry.tile``): the same three formulas as attention.fused_geometry
SIDES = {"Euclidean": _Flat, "Poincare": _Ball, "Sphere": _Sphere}


def _side(spec: KernelSpec):
    return kernel_maths("compiled", spec.geometry, SIDES)


class CompiledIDA(torch.autograd.Function):
    """o = IDA(q, k, v) for contiguous (BH, n, d), (BH, m, d), (BH, m, dv) CPU inputs of one float dtype."""

    @staticmethod
    def forward(ctx, q, k, v, spec, block_q, block_k):
        side = _side(spec)
        ops = side.operands(q, k, spec)
        none = q.new_empty(0)
        common = (
            side.code, ops["q"], ops["k"], v, ops.get("nq", none), ops.get("nk", none), ops.get("A", none),
            ops.get("B", none), ops.get("ma", none), ops.get("mb", none), float(ops["eps_t"]), TAU[q.dtype],
            float(spec.c), isinstance(spec.keys, Causal), block_q, block_k,
        )  # fmt: skip
        with record_function("georesolver::ida_forward"):  # one operator for the profiler (bench --profile)
            o, row_sum = module().forward(*common)
        ctx.common, ctx.ops, ctx.spec, ctx.side = common, ops, spec, side
        ctx.save_for_backward(q, k, v, o, row_sum)
        return o

    @staticmethod
    def backward(ctx, g):
        q, k, v, o, row_sum = ctx.saved_tensors
        if torch.is_grad_enabled():  # create_graph=True (e.g. Hessians): differentiate the reference kernel
            with torch.enable_grad():
                out = reference_ida(q, k, v, ctx.spec)
                wrt = [t for t in (q, k, v) if t.requires_grad]
                got = iter(torch.autograd.grad(out, wrt, g, create_graph=True, allow_unused=True))
            return (*[next(got) if t.requires_grad else None for t in (q, k, v)], None, None, None)
        g = g.contiguous()
        Dg = (g * o).sum(-1).contiguous()  # (BH, n): g_i . o_i
        BH, m = o.shape[0], ctx.common[2].shape[1]
        # backward tasks are (head x key-block group): enough groups to give every thread work
        groups = max(1, min(-(-m // ctx.common[-1]), -(-2 * torch.get_num_threads() // BH)))
        with record_function("georesolver::ida_backward"):
            GQ, rq, rw, GK, ck, cw, dv = module().backward(*ctx.common, g, Dg, row_sum, groups)
        dq, dk = ctx.side.assemble(ctx.ops, ctx.spec, GQ, rq, rw, GK, ck, cw)
        return dq, dk, dv, None, None, None
