"""The GPU path end to end, for whoever has a CUDA GPU: ``python -m georesolver_core.train.gpu_check [--json]``.

1. Kernels: in each geometry, dense and causal, IDA forward and backward on the GPU through
   ``impl="reference"`` and ``impl="flex"`` (compiled FlexAttention, where ``impl="auto"`` sends CUDA
   float32 tensors) against the float64 reference on the CPU; flex must refuse float64 on the GPU
   with a ValueError (FlexAttention's Triton kernels have no float64 matrix product).
2. Speed: forward + backward calls/s of ``attention.ida`` (auto: FlexAttention) in each geometry
   against SDPA in float32 and SDPA's FlashAttention backend in bfloat16, T = 1024 .. 16,384.
3. Training: a few steps of the GeoResolver model and of its softmax baseline on the GPU, with
   steps/s of each (timed in turns, as ``train.bench``).
Exits 2 without a GPU, 1 when a kernel disagrees with the reference beyond tolerance.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict

import torch
import torch.nn.functional as F

from georesolver_core.attention import ida
from georesolver_core.geometry import GEOMETRIES

TOL = {torch.float32: 2e-3, torch.float64: 1e-8}  # max abs error vs the float64 CPU reference


def _points(geometry: str, shape, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return GEOMETRIES[geometry].embed(torch.randn(*shape, generator=g, dtype=torch.float64), 1.0)


def kernel_check(
    geometry: str, impl: str, dtype, *, device="cuda", B=2, H=4, T=128, D=32, eps=0.05, causal=False
) -> dict:
    """Max abs differences of output and gradients (q, k, v) on ``device`` vs the float64 CPU reference."""
    q, k = _points(geometry, (B, H, T, D), 1), _points(geometry, (B, H, T, D), 2)
    v = torch.randn(B, H, T, D, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    up = torch.randn(B, H, T, D, generator=torch.Generator().manual_seed(4), dtype=torch.float64)

    def run(device, dt, which):
        leaves = [t.detach().to(device, dt).clone().requires_grad_(True) for t in (q, k, v)]
        out = ida(*leaves, eps=eps, geometry=geometry, causal=causal, impl=which)
        (out * up.to(device, dt)).sum().backward()
        return [out.detach().double().cpu()] + [t.grad.double().cpu() for t in leaves]

    ref = run("cpu", torch.float64, "reference")
    got = run(device, dtype, impl)
    errs = [float((a - b).abs().max()) for a, b in zip(got, ref, strict=True)]
    return {"geometry": geometry, "impl": impl, "causal": causal, "dtype": str(dtype).replace("torch.", ""), "out": errs[0],
            "grad_q": errs[1], "grad_k": errs[2], "grad_v": errs[3], "ok": max(errs) <= TOL[dtype]}  # fmt: skip


def _calls_per_s(fn, leaves, up, repeats: int) -> float:
    def step():
        for t in leaves:
            t.grad = None
        fn(*leaves).backward(up)

    step()  # warm-up (compiles on the first call)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeats):
        step()
    torch.cuda.synchronize()
    return repeats / (time.perf_counter() - start)


def speed(seq_lens=(1024, 4096, 16384), *, B=1, H=4, D=64, eps=0.1, repeats=10) -> list[dict]:
    """Forward + backward calls/s of ida (impl="auto": FlexAttention on CUDA float32) per geometry,
    against SDPA (float32) and SDPA's FlashAttention backend (bfloat16) on the same shapes."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    rows = []
    for T in seq_lens:
        shape = (B, H, T, D)
        up = torch.randn(shape, device="cuda")
        v = torch.randn(shape, device="cuda").requires_grad_()
        row = {"T": T}
        for geometry in GEOMETRIES:
            q, k = (_points(geometry, shape, s).float().cuda().requires_grad_() for s in (5, 6))
            row[f"ida_{geometry}"] = _calls_per_s(
                lambda q, k, v, g=geometry: ida(q, k, v, eps=eps, geometry=g), [q, k, v], up, repeats
            )
        q, k = (torch.randn(shape, device="cuda").requires_grad_() for _ in range(2))
        row["sdpa_float32"] = _calls_per_s(F.scaled_dot_product_attention, [q, k, v], up, repeats)
        half = [t.detach().bfloat16().requires_grad_() for t in (q, k, v)]
        try:
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                row["sdpa_flash_bfloat16"] = _calls_per_s(
                    F.scaled_dot_product_attention, half, up.bfloat16(), repeats
                )
        except RuntimeError as err:  # no flash kernel for this GPU / build
            row["sdpa_flash_bfloat16"] = f"unavailable: {err}"[:200]
        rows.append(row)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m georesolver_core.train.gpu_check", description=__doc__)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--steps", type=int, default=20, help="timed training steps per round")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("no CUDA GPU is available: nothing to check", file=sys.stderr)
        return 2
    from georesolver_core.model import ModelConfig
    from georesolver_core.train.bench import step_rates
    from georesolver_core.train.config import TrainConfig
    from georesolver_core.train.run import RunSpec, build_trainer

    report = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "kernels": [], "training": {}}
    for geometry in GEOMETRIES:
        for impl in ("reference", "flex"):
            for dtype, causal in ((torch.float32, False), (torch.float32, True), (torch.float64, False)):
                try:
                    report["kernels"].append(kernel_check(geometry, impl, dtype, causal=causal))
                except ValueError as err:  # flex refuses float64 on a GPU: a clear refusal is the law
                    report["kernels"].append({"geometry": geometry, "impl": impl, "dtype": str(dtype), "causal": causal,
                                              "ok": impl == "flex" and dtype == torch.float64, "refused": str(err)})  # fmt: skip
                except Exception as err:  # report every failing combination, not only the first
                    report["kernels"].append({"geometry": geometry, "impl": impl, "dtype": str(dtype), "ok": False,
                                              "causal": causal, "error": f"{type(err).__name__}: {err}"})  # fmt: skip
    report["speed"] = speed()
    config = TrainConfig(steps=200, batch_size=64, device="cuda", eval_every=100)
    trainer = build_trainer(RunSpec(task="recall", model=ModelConfig(n_layers=1)), config)
    trainer.run(steps=100)
    report["training"]["recall_after_100_steps"] = trainer.final().to_dict()
    report["training"]["step_rates"] = [
        asdict(r) for r in step_rates(RunSpec(task="recall"), config, steps=args.steps)
    ]
    # The causal character model on English text: the causal forms of the kernels, on the GPU.
    text = build_trainer(RunSpec(task="text"), config)
    text.run(steps=100)
    report["training"]["text_after_100_steps"] = text.final().to_dict()
    report["training"]["text_step_rates"] = [
        asdict(r) for r in step_rates(RunSpec(task="text"), config, steps=args.steps, kernels=("hida", "sida"))
    ]
    ok = all(k["ok"] for k in report["kernels"])
    if args.json:
        json.dump(report, sys.stdout, indent=1)
        print()
    else:
        print(f"device {report['device']}, torch {report['torch']}")
        for k in report["kernels"]:
            detail = (
                k.get("error")
                or k.get("refused")
                or " ".join(f"{n}={k[n]:.2e}" for n in ("out", "grad_q", "grad_k", "grad_v"))
            )
            mode = "causal" if k.get("causal") else "dense"
            print(
                f"{k['geometry']:<10} {k['impl']:<10} {mode:<7} {k['dtype']:<8} {'ok ' if k['ok'] else 'BAD'} {detail}"
            )
        for r in report["speed"]:
            print(f"T = {r['T']:>6} fwd+bwd calls/s: " + ", ".join(
                f"{n} {x:.1f}" if isinstance(x, float) else f"{n} {x}" for n, x in r.items() if n != "T"))  # fmt: skip
        for r in report["training"]["step_rates"] + report["training"]["text_step_rates"]:
            print(f"{r['label']:<28} {r['steps_per_second']:8.1f} steps/s  ({r['parameters']} parameters)")
        print("recall after 100 steps:", report["training"]["recall_after_100_steps"])
        print("text after 100 steps:", report["training"]["text_after_100_steps"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
