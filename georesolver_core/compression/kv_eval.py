"""The KV cache of a trained text model, its keys quantised: validation loss and attention KL at equal bytes.

Every block's keys (B, nh, T, hs), as the kernel receives them (already in the kernel's geometry),
are replaced by their reconstruction under one method at b bits per coordinate; queries and values
stay in float. Per method and b we measure, on the task's validation windows,

    bytes per key = stored bytes (codes + every scale, offset, norm, seed) / number of (head) keys
    loss increase = L(quantised keys) - L(float keys)                     (nats per character)
    KL            = mean over layers, heads, queries of KL(W(q, k) || W(q, k_hat))

with W the kernel's own attention weights (inverse distance, causal). On the sphere and in the ball a
reconstruction is put back on the manifold (``geometry.project``) before the kernel reads it. ``pareto`` marks the rows no
other row beats on both bytes and loss increase. Methods: every ``compression.QUANTIZERS`` entry
(HCC, HCC after a rotation, KIVI per channel and per token, uniform int), the rotated scalar
quantiser of ``compression.rotated``, and ``"float"`` (keys kept as float32: 4 hs bytes, the reference).
Where optimum-quanto is installed, ``available_methods()`` adds ``"quanto"`` (``compression.library``: the
library quantiser transformers' quantised cache uses; 2, 4 and 8 bits).
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from georesolver_core.compression.library import QUANTO_BITS, quanto_available, quanto_quantize
from georesolver_core.compression.methods import QUANTIZERS, quantize
from georesolver_core.compression.rotated import rotated_scalar_quantize
from georesolver_core.geometry import project
from georesolver_core.model.attention_map import kernel_weights
from georesolver_core.tasks.base import IGNORE, Batch
from georesolver_core.train.trainer import EVAL_CHUNK
from georesolver_core.validate import check_positive_int

BITS = (2, 3, 4, 6, 8)  # bits per coordinate of the sweep
METHODS = ("float", *QUANTIZERS, "rotated-scalar")
LABELS = {
    "float": "float32 keys",
    "rotated-scalar": "Rotated scalar (TurboQuant-style)",
    "quanto": "optimum-quanto (transformers' quantised cache)",
} | {k: q.label for k, q in QUANTIZERS.items()}
SPLITS = ("validation", "heldout")  # TextTask.test_set (what training evaluates on), TextTask.heldout_set


def available_methods() -> tuple[str, ...]:
    """``METHODS`` and, where optimum-quanto imports, the library quantiser ``"quanto"``."""
    return (*METHODS, "quanto") if quanto_available() else METHODS


def widths(method: str, bits) -> tuple[int, ...]:
    """The widths of ``bits`` a method has: float is one row (32), quanto has 2, 4 and 8."""
    if method == "float":
        return (32,)
    return tuple(b for b in bits if method != "quanto" or b in QUANTO_BITS)


def quantise_keys(k: torch.Tensor, method: str, bits: int) -> tuple[torch.Tensor, int]:
    """Keys (..., n, d) -> (reconstruction (..., n, d), stored bytes). ``"float"`` keeps float32 (bits ignored)."""
    if method == "float":
        return k.float().to(k.dtype), k.numel() * 4
    if method == "rotated-scalar":
        rk = rotated_scalar_quantize(k, bits=bits)
        return rk.dequantize().to(k.dtype), rk.nbytes
    if method == "quanto":
        return quanto_quantize(k, bits)
    if method not in QUANTIZERS:
        raise ValueError(f"method must be one of {list(available_methods())} (got {method!r})")
    options = {"residual": 0} if method.startswith("kivi") else {}  # every key quantised: KIVI keeps none in float
    ck = quantize(k, method, bits=bits, **options)
    return ck.dequantize().to(k.dtype), ck.nbytes


class _QuantisedKeys(nn.Module):
    """A block's kernel with its keys replaced by their reconstruction; tallies bytes, keys and KL."""

    def __init__(self, inner: nn.Module, method: str, bits: int, causal: bool):
        super().__init__()
        self.inner, self.method, self.bits, self.causal = inner, method, bits, causal
        self.nbytes = self.n_keys = 0
        self.kl_sum = 0.0
        self.n_rows = 0

    def forward(self, q, k, v):
        k_hat, nbytes = quantise_keys(k, self.method, self.bits)
        spec = getattr(self.inner, "spec", None)  # inverse-distance kernels: their geometry; softmax: none
        if spec is not None:
            # A reconstruction may leave the manifold (off the unit sphere, or past the ball's rim): a cache
            # puts it back on the nearest valid point before use (flat space: the identity).
            k_hat = project(k_hat, geometry=spec.geometry, c=spec.c)
        self.nbytes += nbytes
        self.n_keys += k.numel() // k.shape[-1]
        w = kernel_weights(self.inner, q, k, self.causal).double()  # (B, nh, T, T)
        w_hat = kernel_weights(self.inner, q, k_hat, self.causal).double()
        ratio = torch.where(w > 0, w * (w.clamp_min(1e-300).log() - w_hat.clamp_min(1e-300).log()), 0.0)
        self.kl_sum += float(ratio.sum())
        self.n_rows += w.numel() // w.shape[-1]
        return self.inner(q, k_hat, v)


@contextmanager
def quantised_keys(model: nn.Module, method: str, bits: int):
    """Within the block, every block of ``model`` attends with quantised keys; yields the wrappers."""
    wrappers = []
    for block in model.blocks:
        wrappers.append(_QuantisedKeys(block.attn.kernel, method, bits, block.attention.causal))
        block.attn.kernel = wrappers[-1]
    try:
        yield wrappers
    finally:
        for block, w in zip(model.blocks, wrappers, strict=True):
            block.attn.kernel = w.inner


@torch.no_grad()
def window_losses(model: nn.Module, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
    """Summed cross-entropy (nats) and labelled positions of each window of ``batch``: (n,), (n,)."""
    model.eval()
    device = next(model.parameters()).device
    sums, counts = [], []
    for i in range(0, len(batch), EVAL_CHUNK):
        part = batch.slice(i, i + EVAL_CHUNK).to(device)
        logits = model(part.x)  # (b, T, vocab)
        ce = F.cross_entropy(logits.flatten(0, 1).float(), part.y.flatten(), ignore_index=IGNORE, reduction="none")
        labelled = part.y != IGNORE  # (b, T)
        sums.append((ce.view(part.y.shape) * labelled).sum(1).double().cpu())
        counts.append(labelled.sum(1).cpu())
    return torch.cat(sums), torch.cat(counts)


def batch_loss(model: nn.Module, batch: Batch) -> float:
    """Mean cross-entropy (nats) over the labelled positions of ``batch``."""
    sums, counts = window_losses(model, batch)
    return float(sums.sum() / counts.sum().clamp_min(1))


@torch.no_grad()
def kv_eval(model: nn.Module, batch: Batch, method: str, bits: int, *, keep_windows: bool = False) -> dict:
    """One (method, bits) point: bytes per key, validation loss and attention KL with quantised keys; with
    ``keep_windows`` also each window's mean loss (``window_loss``), for paired comparisons of methods."""
    with quantised_keys(model, method, bits) as wrappers:
        sums, counts = window_losses(model, batch)
    n_keys = sum(w.n_keys for w in wrappers)
    row = {
        "method": method,
        "bits": bits,
        "bytes_per_key": sum(w.nbytes for w in wrappers) / n_keys,
        "loss": float(sums.sum() / counts.sum().clamp_min(1)),
        "kl": sum(w.kl_sum for w in wrappers) / max(sum(w.n_rows for w in wrappers), 1),
    }
    if keep_windows:
        row["window_loss"] = (sums / counts.clamp_min(1)).tolist()
    return row


def kv_sweep(
    model: nn.Module, batch: Batch, *, methods=METHODS, bits=BITS, progress=None, keep_windows: bool = False
) -> dict:
    """Every method at every bit width, with the float-key loss, loss increases and the Pareto front."""
    float_loss = batch_loss(model, batch)
    rows = []
    for m in methods:
        for b in widths(m, bits):
            row = kv_eval(model, batch, m, b, keep_windows=keep_windows)
            row["loss_increase"] = row["loss"] - float_loss
            rows.append(row)
            if progress is not None:
                progress(row)
    for r in rows:
        r["pareto"] = not any(
            o is not r
            and o["bytes_per_key"] <= r["bytes_per_key"]
            and o["loss_increase"] <= r["loss_increase"]
            and (o["bytes_per_key"] < r["bytes_per_key"] or o["loss_increase"] < r["loss_increase"])
            for o in rows
        )
    return {"float_loss": float_loss, "float_bits_per_char": float_loss / math.log(2), "rows": rows}


def best_at(report: dict, bits: int) -> dict | None:
    """The quantiser (not float) with the smallest loss increase at ``bits`` bits per coordinate."""
    rows = [r for r in report["rows"] if r["bits"] == bits and r["method"] != "float"]
    return min(rows, key=lambda r: r["loss_increase"]) if rows else None


@dataclass(frozen=True)
class KVBest:
    """The best quantiser at one bit width: its method and loss increase (nats per character)."""

    method: str
    loss_increase: float


@dataclass(frozen=True)
class KVSummary:
    """What a page prints of a KV report (``checkpoint_report`` or ``live_report``)."""

    attention: str  # the model's attention kind
    n_layers: int
    d_model: int
    n_heads: int
    steps: int  # training steps
    windows: int  # validation windows
    context: int  # characters per window
    corpus: str
    split: str  # the windows measured on: "validation" or "heldout" (SPLITS)
    float_loss: float  # nats per character with float keys
    rows: list[dict]  # the sweep (method, bits, bytes_per_key, loss, kl, loss_increase, pareto), for figures
    best: dict[int, KVBest | None]  # bits -> ``best_at`` (None: no quantiser at that width)
    hcc_on_front: bool  # some HCC row is on the Pareto front


def kv_summary(report: dict, bits=(3, 4)) -> KVSummary:
    """The named fields of a KV report, its best quantiser at each of ``bits`` and whether HCC is on the front."""
    m = report["model"]
    best = {b: best_at(report, b) for b in bits}
    return KVSummary(
        attention=m["attention"],
        n_layers=m["n_layers"],
        d_model=m["d_model"],
        n_heads=m["n_heads"],
        steps=report["steps"],
        windows=report["windows"],
        context=report["context"],
        corpus=report["corpus"],
        split=report.get("split", "validation"),
        float_loss=report["float_loss"],
        rows=report["rows"],
        best={b: None if r is None else KVBest(r["method"], r["loss_increase"]) for b, r in best.items()},
        hcc_on_front=any(r["pareto"] for r in report["rows"] if r["method"].startswith("hcc")),
    )


def checkpoint_report(
    path, *, windows: int | None = None, methods=METHODS, bits=BITS, progress=None, split: str = "validation",
    keep_windows: bool = False,
) -> dict:  # fmt: skip
    """``kv_sweep`` of a text-task checkpoint on (the first ``windows`` of) its validation windows, or with
    ``split="heldout"`` on the held-out windows nothing else reads (``TextTask.heldout_set``).

    Reads the trainer's nested run description and the flat one of older checkpoints (``load_checkpoint``
    maps it); anything else, or a checkpoint of another task, is a ValueError saying which."""
    from georesolver_core.train import load_checkpoint, resume
    from georesolver_core.train.run import spec_from_checkpoint

    if windows is not None:
        check_positive_int("windows (--kv-windows)", windows, 1)
    if split not in SPLITS:
        raise ValueError(f"split must be one of {list(SPLITS)} (got {split!r})")
    data = load_checkpoint(path)
    spec = spec_from_checkpoint(data)  # any layout a checkpoint was written in, as this version's RunSpec
    if spec.task != "text":
        raise ValueError(f"--kv-checkpoint must be a checkpoint of the text task (got the {spec.task!r} task)")
    trainer = resume(data)
    batch = trainer.task.test_set() if split == "validation" else trainer.task.heldout_set()
    batch = batch.slice(0, windows) if windows else batch
    report = kv_sweep(
        trainer.model, batch, methods=methods, bits=bits, progress=progress, keep_windows=keep_windows
    )
    att = spec.model.attention
    return {
        "model": {
            "attention": att.kernel,
            "d_model": att.d_model,
            "n_layers": spec.model.n_layers,
            "n_heads": att.n_heads,
            "eps": att.eps,
        },  # fmt: skip
        "steps": trainer.step,
        "windows": len(batch),
        "split": split,
        "context": trainer.task.context,
        "corpus": trainer.task.corpus.source,
        **report,
    }


def print_table(report: dict, stream) -> None:
    print(
        f"{report['model']['attention']} model, {report['steps']} steps, {report['windows']} {report.get('split', 'validation')} windows of "
        f"{report['context']} characters ({report['corpus']}): float keys {report['float_loss']:.4f} nats/char",
        file=stream,
    )
    print(f"{'method':<16}{'bits':>5}{'bytes/key':>11}{'loss +nats':>12}{'KL':>11}  pareto", file=stream)
    for r in report["rows"]:
        print(
            f"{r['method']:<16}{r['bits']:>5}{r['bytes_per_key']:>11.3f}{r['loss_increase']:>12.2e}{r['kl']:>11.2e}  "
            f"{'*' if r['pareto'] else ''}",
            file=stream,
        )
    for b in (3, 4):
        best = best_at(report, b)
        if best:
            print(
                f"best at {b} bits/coordinate: {best['method']} ({best['loss_increase']:+.2e} nats)", file=stream
            )


def live_report(
    *, steps: int = 150, windows: int = 16, bits=(2, 3, 4, 8), seed: int = 0, source: str = "auto"
) -> dict:
    """A small live re-run: a 1-block IDA text model (width 32) trained ``steps`` steps, then ``kv_sweep``."""
    from georesolver_core.attention import AttentionConfig
    from georesolver_core.model import ModelConfig
    from georesolver_core.train import RunSpec, TrainConfig, build_trainer

    model = ModelConfig(n_layers=1, attention=AttentionConfig(d_model=32, kernel="ida"))
    spec = RunSpec(task="text", size=32, task_args=(("source", source),), model=model)
    trainer = build_trainer(
        spec, TrainConfig(steps=steps, batch_size=32, eval_every=steps, seed=seed, device="cpu")
    )
    trainer.run()
    report = kv_sweep(trainer.model, trainer.task.test_set().slice(0, windows), bits=bits)
    return {"model": {"attention": "ida", "d_model": 32, "n_layers": 1, "n_heads": 4, "eps": model.attention.eps},
            "steps": steps, "windows": windows, "context": 32, "corpus": trainer.task.corpus.source, **report}  # fmt: skip
