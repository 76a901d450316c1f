"""Small synthetic tasks of seed 003, trained for each residual kind at matched parameter counts.

    negation   y = -x                      one example (d = 3): x = ( 0.3, -1.2,  0.5) -> y = (-0.3,  1.2, -0.5)
    rotation   y = R_theta x, R_theta rotates the (e1, e2) plane by theta (up to and near pi)
               x = ( 1.0,  0.0,  0.7), theta = 90 deg -> y = ( 0.0,  1.0,  0.7)
    echo       s_0 = x, s_{t+1} = M(s_t; control s_t + z_t) with fresh distractors z_t, target s_T = x:
               the state must come back unchanged after T weight-tied steps (seed section 4, echo stability)

Every kind gets the same trunk-plus-heads network (``ResidualMixer``) with its width chosen so that the
parameter counts match (``matched_hidden``). The orthogonal kinds act through their operator only (no
additive branch), so what they learn is what their geometry allows. The hybrid adds the midpoint-collapse
regulariser ``gate_weight * 4 gamma (1 - gamma)`` to its loss.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
from torch import Tensor

from georesolver_core.device import one_cpu_thread
from georesolver_core.extras.orthogonal import (
    RESIDUAL_KINDS,
    MixerConfig,
    MixerStack,
    ResidualMixer,
    gate_regulariser,
    matched_hidden,
    mixer_params,
)
from georesolver_core.steps import run_to_end
from georesolver_core.validate import check_positive_int, check_range

RESIDUAL_TASKS = {
    "negation": "negation y = -x",
    "rotation": "rotation by theta in the (e1, e2) plane",
    "echo": "echo: return the state after T steps with distractors",
}


@dataclass(frozen=True)
class TaskConfig:
    task: str = "negation"  # one of RESIDUAL_TASKS
    dim: int = 8  # d: size of the vectors
    params: int = 600  # parameter budget every kind is matched to
    n_layers: int = 1  # mixing steps in the model (negation, rotation)
    angle_deg: float = 179.9  # rotation task: theta in degrees
    echo_steps: int = 16  # echo task: weight-tied steps T (the seed used 127)
    distractor: float = 0.5  # echo task: std of the distractor z_t the heads read
    steps: int = 300  # Adam steps
    batch: int = 128
    lr: float = 1e-2
    gate_weight: float = 0.1  # weight of 4 gamma (1 - gamma) in the hybrid's loss

    def check(self) -> TaskConfig:
        if self.task not in RESIDUAL_TASKS:
            raise ValueError(f"task must be one of {sorted(RESIDUAL_TASKS)} (got {self.task!r})")
        check_positive_int("dim", self.dim, 2, 512)
        check_positive_int("params", self.params, 10, 10**7)
        check_positive_int("n_layers", self.n_layers, 1, 64)
        check_range("angle_deg", self.angle_deg, 0.0, 180.0)
        check_positive_int("echo_steps", self.echo_steps, 1, 1024)
        check_range("distractor", self.distractor, 0.0, 100.0)
        check_positive_int("steps", self.steps, 1, 10**6)
        check_positive_int("batch", self.batch, 1, 10**6)
        check_range("lr", self.lr, 1e-6, 1.0)
        check_range("gate_weight", self.gate_weight, 0.0, 100.0)
        return self


@dataclass
class RunResult:
    kind: str
    seed: int
    params: int  # measured parameter count of the trained model
    history: dict[str, list[float]] = field(default_factory=dict)  # step, loss, cosine, gate
    final: dict[str, float] = field(default_factory=dict)  # held-out loss, cosine, gate, norm deviation
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


def rotation_matrix(dim: int, angle_deg: float, dtype=torch.float32) -> Tensor:
    """R_theta (d, d): rotation by theta in the (e1, e2) plane, identity on the rest."""
    r = torch.eye(dim, dtype=dtype)
    t = math.radians(angle_deg)
    r[0, 0], r[0, 1], r[1, 0], r[1, 1] = math.cos(t), -math.sin(t), math.sin(t), math.cos(t)
    return r


def _target(config: TaskConfig, x: Tensor) -> Tensor:
    if config.task == "negation":
        return -x
    if config.task == "rotation":
        return x @ rotation_matrix(config.dim, config.angle_deg, x.dtype).T  # (B, d)
    return x  # echo


def build_model(kind: str, config: TaskConfig) -> torch.nn.Module:
    """The kind's network at the matched width; the echo task ties one mixer's weights across its T steps."""
    hidden = matched_hidden(kind, config.dim, config.params)
    mixer = MixerConfig(kind=kind, dim=config.dim, hidden=hidden)
    return ResidualMixer(mixer) if config.task == "echo" else MixerStack(mixer, config.n_layers)


def _forward(model, config: TaskConfig, x: Tensor, g: torch.Generator) -> tuple[Tensor, Tensor | None]:
    """Model output (B, d) and the gates it used ((layers or steps, B) for the hybrid, else None)."""
    if config.task != "echo":
        return model(x)
    s, gates = x, []
    for _ in range(config.echo_steps):
        z = config.distractor * torch.randn(x.shape, generator=g, dtype=x.dtype)  # (B, d)
        s, gamma = model(s, control=s + z)
        if gamma is not None:
            gates.append(gamma)
    return s, (torch.stack(gates) if gates else None)


def _metrics(out: Tensor, x: Tensor, y: Tensor, gates: Tensor | None) -> dict[str, float]:
    cos = torch.nn.functional.cosine_similarity(out, y, dim=-1)  # (B,)
    return {
        "loss": float(((out - y) ** 2).sum(-1).mean()),
        "cosine": float(cos.mean()),
        "gate": float(gates.mean()) if gates is not None else float("nan"),
        "norm_deviation": float((out.norm(dim=-1) / x.norm(dim=-1) - 1).abs().mean()),
    }


def train_run(
    kind: str,
    config: TaskConfig,
    seed: int,
    callback: Callable[[int, dict], None] | None = None,
    eval_every: int = 10,
) -> RunResult:
    """Train one kind on one task from one seed with Adam; ``callback(step, metrics)`` after each evaluation.

    Metrics are measured on a held-out batch of 512 drawn from a generator seeded apart from training.
    Runs on one CPU thread: for tensors this small, a second thread only adds synchronisation.
    """
    with one_cpu_thread():
        return _train_run(kind, config, seed, callback, eval_every)


def _train_run(kind, config, seed, callback, eval_every) -> RunResult:
    return run_to_end(
        train_steps(kind, config, seed, eval_every), None if callback is None else lambda s: callback(*s)
    )


def train_steps(
    kind: str, config: TaskConfig, seed: int, eval_every: int = 10
) -> Generator[tuple[int, dict], None, RunResult]:
    """``train_run`` one evaluation at a time: yields (step, metrics) at step 0 and every ``eval_every``
    Adam steps, and returns the RunResult. A live page advances it a chunk per rerun and may stop early."""
    config.check()
    if kind not in RESIDUAL_KINDS:
        raise ValueError(f"kind must be one of {sorted(RESIDUAL_KINDS)} (got {kind!r})")
    torch.manual_seed(seed)
    model = build_model(kind, config)
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    g_train = torch.Generator().manual_seed(seed)
    g_eval = torch.Generator().manual_seed(10_000 + seed)
    x_eval = torch.randn(512, config.dim, generator=g_eval)
    y_eval = _target(config, x_eval)
    history: dict[str, list[float]] = {"step": [], "loss": [], "cosine": [], "gate": []}
    t0 = time.perf_counter()

    def evaluate(step: int) -> dict:
        with torch.no_grad():
            out, gates = _forward(model, config, x_eval, torch.Generator().manual_seed(20_000 + seed))
        m = _metrics(out, x_eval, y_eval, gates)
        history["step"].append(step)
        for name in ("loss", "cosine", "gate"):
            history[name].append(m[name])
        return m

    final = evaluate(0)
    yield 0, final
    for step in range(1, config.steps + 1):
        x = torch.randn(config.batch, config.dim, generator=g_train)  # (B, d)
        out, gates = _forward(model, config, x, g_train)
        loss = ((out - _target(config, x)) ** 2).sum(-1).mean()
        if gates is not None:
            loss = loss + config.gate_weight * gate_regulariser(gates).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % eval_every == 0 or step == config.steps:
            final = evaluate(step)
            yield step, final
    params = sum(p.numel() for p in model.parameters())
    return RunResult(kind, seed, params, history, final, time.perf_counter() - t0)


def compare(
    kinds: Sequence[str],
    config: TaskConfig,
    seeds: Sequence[int] = (0, 1, 2),
    callback: Callable[[str, int, int, dict], None] | None = None,
) -> list[RunResult]:
    """train_run for every kind and seed, in that order; ``callback(kind, seed, step, metrics)``."""
    out = []
    for kind in kinds:
        for seed in seeds:
            cb = None if callback is None else (lambda step, m, k=kind, s=seed: callback(k, s, step, m))
            out.append(train_run(kind, config, seed, cb))
    return out


def compare_steps(
    kinds: Sequence[str], config: TaskConfig, seeds: Sequence[int] = (0, 1, 2), eval_every: int = 10
) -> Generator[tuple[float, str, list[dict]], None, list[RunResult]]:
    """``compare`` one evaluation at a time: yields (fraction done, text, runs so far as dicts with kind,
    seed and history, the shape ``viz.orthogonal.training_figure`` draws) and returns the RunResults."""
    total = len(kinds) * len(seeds) * (config.steps // eval_every + 1)
    done, results, partial = 0, [], []
    for kind in kinds:
        for seed in seeds:
            live = {"kind": kind, "seed": seed, "history": {"step": [], "loss": [], "cosine": [], "gate": []}}
            partial.append(live)
            run = train_steps(kind, config, seed, eval_every)
            while True:
                try:
                    step, m = next(run)
                except StopIteration as finished:
                    results.append(finished.value)
                    live["history"] = finished.value.history
                    break
                done += 1
                for name in ("loss", "cosine", "gate"):
                    live["history"][name].append(m[name])
                live["history"]["step"].append(step)
                yield (
                    min(done / total, 1.0),
                    f"{kind}, seed {seed}, step {step}: cosine {m['cosine']:.3f}",
                    partial,
                )
    return results


def summarise(results: Sequence[RunResult]) -> dict[str, dict[str, float]]:
    """Per kind: mean and sample std over seeds of each final metric, the seeds' count and the parameters."""
    table: dict[str, dict[str, float]] = {}
    for kind in dict.fromkeys(r.kind for r in results):
        runs = [r for r in results if r.kind == kind]
        row: dict[str, float] = {"seeds": len(runs), "params": runs[0].params}
        for name in runs[0].final:
            vals = np.array([r.final[name] for r in runs], dtype=float)
            row[f"{name} mean"] = float(vals.mean())
            row[f"{name} std"] = float(vals.std(ddof=1)) if len(vals) > 1 else 0.0
        table[kind] = row
    return table


def expected_params(kind: str, config: TaskConfig) -> int:
    """The parameter count train_run will build for this kind (for tables before training)."""
    return mixer_params(kind, config.dim, matched_hidden(kind, config.dim, config.params)) * (
        1 if config.task == "echo" else config.n_layers
    )
