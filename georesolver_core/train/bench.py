"""Training-step throughput: the GeoResolver model against the same-size softmax transformer.

Both models are built from one RunSpec (the baseline is its kernel "softmax", parameter-matched)
and timed in alternating rounds in one process, so machine load hits both alike; the ratio is the
number to read on a shared machine, not the absolute steps/s.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from georesolver_core.model import count_parameters
from georesolver_core.train.config import TrainConfig
from georesolver_core.train.run import RunSpec, build_trainer


@dataclass
class StepRate:
    label: str
    attention: str
    parameters: int
    steps_per_second: float  # median over rounds
    rounds: list[float]  # steps/s of each round


def step_rates(
    spec: RunSpec,
    config: TrainConfig,
    *,
    steps: int = 10,
    rounds: int = 5,
    warmup: int = 2,
    kernels: tuple[str, ...] = (),
) -> list[StepRate]:
    """Median steps/s of the GeoResolver model ``spec`` (and of the same spec with each of ``kernels``)
    and of the softmax baseline, last, all timed in turns in one process."""
    names = list(dict.fromkeys([spec.kernel, *kernels, "softmax"]))
    specs = [spec.with_kernel(k) for k in names]
    trainers = [
        build_trainer(s, replace(config, steps=warmup + steps * rounds + 1, eval_every=10**6)) for s in specs
    ]
    for t in trainers:
        for _ in range(warmup):
            t.train_step()
    rates: list[list[float]] = [[] for _ in trainers]
    for _ in range(rounds):
        for t, r in zip(trainers, rates, strict=True):
            t0 = time.perf_counter()
            for _ in range(steps):
                t.train_step()
            r.append(steps / (time.perf_counter() - t0))
    return [
        StepRate(s.label, s.kernel, count_parameters(t.model), sorted(r)[len(r) // 2], r)
        for s, t, r in zip(specs, trainers, rates, strict=True)
    ]
