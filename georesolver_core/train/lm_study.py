"""Inverse-distance attention against softmax on real text, tuned alike: ``python -m georesolver_core lm-study``.

For each model size and each attention kind (softmax and the causal inverse-distance kinds), on the text
task (next character of WordNet glosses), with the "nanogpt" recipe of ``train.recipe`` (warmup, cosine
decay to lr / 10, weight decay on matrices, clipping):

1. **The same learning-rate grid, the same steps** for every kind, seed 0; each kind's best rate is the one
   with the lowest loss on the validation windows (the windows every training run evaluates on).
2. **Seeds** 0 .. S-1 at each kind's best rate, reported on the held-out windows (``TextTask.heldout_set``:
   read by nothing else): mean test nats and bits per character with a 95% interval (Student t), steps/s
   and wall seconds.
3. **Equal time**: every kind gets the seconds softmax needed for its steps; a kind that runs k steps/s
   trains round(seconds x k) steps (its schedule sized to them), same seeds.

A difference from softmax is called "better" or "worse" only when its 95% interval (Welch) excludes zero,
otherwise "no measurable difference". Runs go through the job runner (``georesolver_core.jobs``: local
worker processes side by side, one thread each, or a Ray cluster with ``GR_JOBS``); each finished run is a
JSON file in the study folder, so a study that was killed continues where it stopped. The losses are
reproducible run to run (seeded, one thread); steps/s, seconds and so the equal-time step counts are
measured, and move with the machine's load.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from georesolver_core.validate import check_positive_int

SCHEMA = "georesolver-lm-study/1"
STUDY_KINDS = ("softmax", "ida", "hida", "sida")
LR_GRID = (3e-4, 1e-3, 3e-3, 1e-2, 3e-2)  # five rates, a factor of about 3 apart
NATS_PER_BIT = math.log(2.0)


@dataclass(frozen=True)
class StudySize:
    """One model size of the study and its training length."""

    name: str
    n_layers: int
    n_heads: int
    d_model: int
    context: int
    batch_size: int
    steps: int

    def __post_init__(self):
        for key in ("n_layers", "n_heads", "d_model", "context", "batch_size", "steps"):
            check_positive_int(key, getattr(self, key), 1, 1 << 20)

    def config(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k != "name"}


SIZES = {
    # train --task text's default model (2 blocks of width 64, batch 64) at its default 1000 steps
    "default": StudySize("default", n_layers=2, n_heads=4, d_model=64, context=64, batch_size=64, steps=1000),
    # nanoGPT's CPU "baby" shape (4 layers, 4 heads, width 128, context 64, batch 12)
    "baby": StudySize("baby", n_layers=4, n_heads=4, d_model=128, context=64, batch_size=12, steps=2000),
}


@dataclass(frozen=True)
class StudyConfig:
    sizes: tuple[StudySize, ...] = (SIZES["default"], SIZES["baby"])
    kinds: tuple[str, ...] = STUDY_KINDS
    lr_grid: tuple[float, ...] = LR_GRID
    seeds: int = 3  # at each kind's best rate; at least 2 for an interval
    workers: int | None = None  # runs side by side (None: one per core)

    def __post_init__(self):
        from georesolver_core.attention import ATTENTION

        if not self.sizes or not all(isinstance(s, StudySize) for s in self.sizes):
            raise ValueError(f"sizes must be a non-empty tuple of StudySize (got {self.sizes!r})")
        if "softmax" not in self.kinds or len(set(self.kinds)) != len(self.kinds):
            raise ValueError(
                f"kinds must hold 'softmax' (the reference) once, and no kind twice (got {self.kinds})"
            )
        unknown = [k for k in self.kinds if k not in ATTENTION]
        if unknown:
            raise ValueError(f"kinds must be attention kinds, from {sorted(ATTENTION)} (got {unknown})")
        if len(self.lr_grid) < 1 or not all(isinstance(x, float) and 0 < x < 1 for x in self.lr_grid):
            raise ValueError(f"lr_grid must hold learning rates in (0, 1) (got {self.lr_grid})")
        check_positive_int("seeds", self.seeds, 2, 100)
        if self.workers is not None:
            check_positive_int("workers", self.workers, 1, 256)


QUICK = StudyConfig(
    sizes=(replace(SIZES["default"], steps=150),), lr_grid=(1e-3, 3e-3, 1e-2), seeds=2
)  # about 3 minutes on 2 cores


# --- one run, in a worker ------------------------------------------------------------------------------------
def run_spec(size: StudySize, kind: str):
    from georesolver_core.attention import AttentionConfig
    from georesolver_core.model import ModelConfig
    from georesolver_core.train.run import RunSpec

    attention = AttentionConfig(d_model=size.d_model, n_heads=size.n_heads, kernel="ida")
    spec = RunSpec(task="text", size=size.context, model=ModelConfig(n_layers=size.n_layers, attention=attention))
    return spec.with_kernel(kind)


def train_config(size: StudySize, lr: float, seed: int, steps: int):
    """The "nanogpt" recipe at peak rate ``lr`` (floor lr / 10, warmup a tenth of the steps, at most 100)."""
    from georesolver_core.train import TrainConfig
    from georesolver_core.train.recipe import recipe

    fields = recipe("nanogpt") | {"lr": lr, "lr_min": lr / 10, "warmup_steps": min(100, steps // 10)}
    return TrainConfig(
        steps=steps, batch_size=size.batch_size, seed=seed, eval_every=steps, device="cpu", **fields
    )


def run_job(config: dict, ctx) -> dict:
    """A job kind (``georesolver_core.train.lm_study:run_job``): one run of the study, trained to its end;
    its validation and held-out losses, steps/s and seconds. ``config``: size, kind, lr, seed, steps (and
    ``checkpoint``: a path where the trained model is saved)."""
    from georesolver_core.train import build_trainer

    size = StudySize(**config["size"])
    trainer = build_trainer(
        run_spec(size, config["kind"]), train_config(size, config["lr"], config["seed"], config["steps"])
    )

    class Tick:
        def on_step_end(self, trainer, row) -> None:
            if trainer.step % 25 == 0:
                ctx.progress(trainer.step / trainer.config.steps, f"step {trainer.step}: loss {row['loss']:.3f}")
            ctx.tick()

    trainer.callbacks.append(Tick())
    trainer.run()
    if config.get("checkpoint"):  # the KV study (train.lm_study_kv) keeps the tuned model
        trainer.save(config["checkpoint"])
    if trainer.diverged:
        return {"diverged": True, "val_nats": None, "test_nats": None, "steps": trainer.step,
                "seconds": trainer.seconds, "steps_per_s": trainer.step / max(trainer.seconds, 1e-9)}  # fmt: skip
    val = trainer.evaluate()["test_loss"]  # the windows every run evaluates on
    test = trainer.evaluate(trainer.task.heldout_set())["test_loss"]
    return {"diverged": False, "val_nats": val, "test_nats": test, "steps": trainer.step,
            "seconds": trainer.seconds, "steps_per_s": trainer.step / max(trainer.seconds, 1e-9)}  # fmt: skip


# --- the study --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Run:
    size: StudySize
    kind: str
    lr: float
    seed: int
    steps: int

    @property
    def key(self) -> str:
        return f"{self.size.name}-{self.kind}-lr{self.lr:g}-seed{self.seed}-steps{self.steps}"

    def config(self) -> dict:
        return {
            "size": asdict(self.size),
            "kind": self.kind,
            "lr": self.lr,
            "seed": self.seed,
            "steps": self.steps,
        }


@dataclass
class Study:
    """The study folder: ``runs/<key>.json`` per finished run (what a restarted study skips)."""

    config: StudyConfig
    folder: Path
    progress: Callable[[str], None] = field(default=lambda line: print(line, file=sys.stderr, flush=True))
    results: dict[str, dict] = field(default_factory=dict)

    def __post_init__(self):
        import json

        self.folder = Path(self.folder)
        for path in sorted((self.folder / "runs").glob("*.json")):
            self.results[path.stem] = json.loads(path.read_text())

    def run_all(self, runs: list[Run]) -> None:
        """Run what has no result yet, side by side through the job runner; each result saved as it lands."""
        from georesolver_core.jobs.folder import write_json

        todo = {r.key: r for r in runs if r.key not in self.results}

        def save(key: str, result: dict, done: int, total: int) -> None:
            result = dict(result, **todo[key].config())
            write_json(self.folder / "runs" / f"{key}.json", result)
            self.results[key] = result
            self.progress(f"[{done}/{total}] {key}: {_line(result)}")

        run_jobs(f"{__name__}:run_job", {k: r.config() for k, r in todo.items()}, self.folder / "jobs",
                 workers=self.config.workers, on_result=save)  # fmt: skip

    def result(self, run: Run) -> dict:
        return self.results[run.key]


def run_jobs(job: str, configs: dict[str, dict], runs_dir: Path, *, workers: int | None, on_result) -> None:
    """Every config as a ``job`` of the job runner, side by side (``workers``, default one per core, one
    thread each); ``on_result(key, result, done, total)`` as each lands. A run that fails is a RuntimeError."""
    from georesolver_core.jobs import DONE, ENDED, JobRunner, JobSpec
    from georesolver_core.jobs.runner import usable_cores  # a study has no server beside it: every core

    if not configs:
        return
    runner = JobRunner(max_workers=workers or usable_cores(), threads=1, per_owner=len(configs), runs_dir=runs_dir)
    try:
        pending = {key: runner.submit(JobSpec(job, config), owner="lm-study") for key, config in configs.items()}
        while pending:
            time.sleep(0.2)
            for key, h in list(pending.items()):
                if h.state in ENDED:
                    del pending[key]
                    if h.state != DONE:
                        raise RuntimeError(f"run {key} {h.state}: {h.error}")
                    on_result(key, h.result(), len(configs) - len(pending), len(configs))
    finally:
        runner.shutdown()


def _line(r: dict) -> str:
    if r["diverged"]:
        return "diverged"
    return f"val {r['val_nats']:.4f}, test {r['test_nats']:.4f} nats, {r['steps_per_s']:.1f} steps/s"


def mean_ci95(values: list[float]) -> tuple[float, list[float]]:
    """The mean and its 95% interval (Student t with n - 1 degrees of freedom)."""
    from scipy import stats

    n, mean = len(values), statistics.fmean(values)
    half = stats.t.ppf(0.975, n - 1) * statistics.stdev(values) / math.sqrt(n)
    return mean, [mean - half, mean + half]


def difference_ci95(a: list[float], b: list[float]) -> tuple[float, list[float]]:
    """mean(a) - mean(b) and its 95% interval (Welch: unequal variances, Welch-Satterthwaite degrees)."""
    from scipy import stats

    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    diff = statistics.fmean(a) - statistics.fmean(b)
    if va + vb == 0:
        return diff, [diff, diff]
    dof = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    half = stats.t.ppf(0.975, dof) * math.sqrt(va + vb)
    return diff, [diff - half, diff + half]


def verdict_word(ci: list[float]) -> str:
    """Lower nats are better: "better" when the whole interval is below zero, "worse" above, else neither."""
    if ci[1] < 0:
        return "better"
    if ci[0] > 0:
        return "worse"
    return "no measurable difference"


def run_study(config: StudyConfig, folder: str | Path, progress: Callable[[str], None] | None = None) -> dict:
    """The whole study (module doc); returns the report. Finished runs in ``folder`` are not run again."""
    study = Study(config, Path(folder), **({"progress": progress} if progress else {}))
    seeds = range(config.seeds)
    # 1. the grid, seed 0, every size and kind at once (the runner keeps the cores busy)
    grid = [Run(s, k, lr, 0, s.steps) for s in config.sizes for k in config.kinds for lr in config.lr_grid]
    study.run_all(grid)
    best = {(s.name, k): _best_lr(study, s, k, config.lr_grid) for s in config.sizes for k in config.kinds}
    # 2. seeds at each kind's best rate
    seeded = {(s.name, k): [Run(s, k, best[s.name, k], seed, s.steps) for seed in seeds]
              for s in config.sizes for k in config.kinds}  # fmt: skip
    study.run_all([r for runs in seeded.values() for r in runs])
    # 3. equal time: softmax's seconds, at each kind's own speed
    timed = {}
    for s in config.sizes:
        seconds = statistics.fmean(study.result(r)["seconds"] for r in seeded[s.name, "softmax"])
        for k in config.kinds:
            speed = statistics.fmean(study.result(r)["steps_per_s"] for r in seeded[s.name, k])
            steps = s.steps if k == "softmax" else max(10, round(seconds * speed))
            timed[s.name, k] = (seconds, [Run(s, k, best[s.name, k], seed, steps) for seed in seeds])
    study.run_all([r for _, runs in timed.values() for r in runs])
    return _report(study, config, best, seeded, timed)


def _best_lr(study: Study, size: StudySize, kind: str, grid) -> float:
    scores = {lr: study.result(Run(size, kind, lr, 0, size.steps))["val_nats"] for lr in grid}
    finite = {lr: v for lr, v in scores.items() if v is not None and math.isfinite(v)}
    if not finite:
        raise RuntimeError(f"{size.name} / {kind}: every learning rate of the grid diverged ({sorted(grid)})")
    return min(finite, key=lambda lr: (finite[lr], lr))


def _report(study: Study, config: StudyConfig, best, seeded, timed) -> dict:
    sizes = []
    for s in config.sizes:
        tests = {}
        kinds = {}
        for k in config.kinds:
            runs = [study.result(r) for r in seeded[s.name, k]]
            if any(r["diverged"] for r in runs):
                raise RuntimeError(f"{s.name} / {k}: a seed diverged at the best rate {best[s.name, k]:g}")
            tests[k] = [r["test_nats"] for r in runs]
            mean, ci = mean_ci95(tests[k])
            seconds, eq_runs = timed[s.name, k]
            eq = [study.result(r) for r in eq_runs]
            eq_tests = [None if r["diverged"] else r["test_nats"] for r in eq]
            eq_mean, eq_ci = mean_ci95(eq_tests) if None not in eq_tests else (None, None)  # None: a seed diverged
            kinds[k] = {
                "lr_curve": [
                    {"lr": lr, "val_nats": study.result(Run(s, k, lr, 0, s.steps))["val_nats"]}
                    for lr in config.lr_grid
                ],  # fmt: skip
                "best_lr": best[s.name, k],
                # the best rate at an end of the grid: the optimum may lie outside it (widen --lr-grid)
                "best_at_grid_edge": best[s.name, k] in (min(config.lr_grid), max(config.lr_grid)),
                "seeds": [
                    {key: r[key] for key in ("seed", "val_nats", "test_nats", "steps_per_s", "seconds")}
                    for r in runs
                ],  # fmt: skip
                "test_nats_mean": mean,
                "test_nats_ci95": ci,
                "test_bits_per_char": mean / NATS_PER_BIT,
                "steps_per_s_mean": statistics.fmean(r["steps_per_s"] for r in runs),
                "seconds_mean": statistics.fmean(r["seconds"] for r in runs),
                "equal_time": {
                    "seconds": seconds,
                    "steps": eq_runs[0].steps,
                    "test_nats": eq_tests,
                    "test_nats_mean": eq_mean,
                    "test_nats_ci95": eq_ci,
                },  # fmt: skip
            }
        for k in config.kinds:
            if k == "softmax":
                continue
            diff, ci = difference_ci95(tests[k], tests["softmax"])
            kinds[k]["verdict"] = {"diff": diff, "ci95": ci, "word": verdict_word(ci)}
            eq, eq_soft = kinds[k]["equal_time"]["test_nats"], kinds["softmax"]["equal_time"]["test_nats"]
            if None not in eq:
                ediff, eci = difference_ci95(eq, eq_soft)
                kinds[k]["equal_time"]["verdict"] = {"diff": ediff, "ci95": eci, "word": verdict_word(eci)}
        sizes.append({"name": s.name, "config": s.config(), "lr_grid": list(config.lr_grid), "kinds": kinds})
    return {
        "schema": SCHEMA,
        "recipe": "nanogpt (train.recipe): AdamW betas 0.9 / 0.99, weight decay 0.1 on matrices, warmup "
        "min(100, steps / 10), cosine decay to lr / 10, clipping at 1.0",
        "seeds": config.seeds,
        "test_split": "held-out validation windows (TextTask.heldout_set)",
        "sizes": sizes,
        "training_seconds_total": round(sum(r["seconds"] for r in study.results.values()), 1),
    }


def read_report(path: str | Path) -> dict:
    """A report written by ``--out``, checked: its schema and the fields pages read (every size's config,
    kinds with their rate curve, best rate, seeds, interval and equal-time entry). ValueError otherwise."""
    import json

    try:
        report = json.loads(Path(path).read_text())
    except json.JSONDecodeError as err:
        raise ValueError(f"{path} is not JSON ({err})") from None
    if not isinstance(report, dict) or report.get("schema") != SCHEMA:
        raise ValueError(f"{path} is not an lm-study report (schema {SCHEMA!r} expected)")
    try:
        for size in report["sizes"]:
            StudySize(name=size["name"], **size["config"])
            for k in size["kinds"].values():
                for key in ("lr_curve", "best_lr", "seeds", "test_nats_mean", "test_nats_ci95", "equal_time"):
                    k[key]  # noqa: B018 - presence is the check
    except (KeyError, TypeError) as err:
        raise ValueError(f"{path} lacks a field of the lm-study report ({err})") from None
    return report


def format_report(report: dict) -> str:
    """The two tables of each size as text: equal steps (test nats, 95% interval, verdict) and equal time."""
    lines = []
    for size in report["sizes"]:
        c = size["config"]
        lines.append(
            f"{size['name']}: {c['n_layers']} layers x {c['d_model']}, {c['n_heads']} heads, context {c['context']}, "
            f"batch {c['batch_size']}, {c['steps']} steps; rates {size['lr_grid']}; {report['seeds']} seeds"
        )
        lines.append(
            f"  {'kind':<8} {'best lr':>8} {'test nats [95%]':>24} {'bits/char':>9} {'steps/s':>8}  vs softmax"
        )
        for kind, k in size["kinds"].items():
            lo, hi = k["test_nats_ci95"]
            word = k.get("verdict", {}).get("word", "(reference)")
            diff = f"{k['verdict']['diff']:+.4f} " if "verdict" in k else ""
            edge = "*" if k.get("best_at_grid_edge") else " "
            lines.append(
                f"  {kind:<8} {k['best_lr']:>7.0e}{edge} {k['test_nats_mean']:>8.4f} [{lo:.4f}, {hi:.4f}] "
                f"{k['test_bits_per_char']:>9.4f} {k['steps_per_s_mean']:>8.1f}  {diff}{word}"
            )
        if any(k.get("best_at_grid_edge") for k in size["kinds"].values()):
            lines.append("  * best rate at an end of the grid: the optimum may lie outside it")
        lines.append("  equal time (softmax's seconds):")
        for kind, k in size["kinds"].items():
            eq = k["equal_time"]
            if eq["test_nats_mean"] is None:
                lines.append(f"  {kind:<8} {eq['steps']:>6} steps: a seed diverged")
                continue
            word = eq.get("verdict", {}).get("word", "(reference)")
            lo, hi = eq["test_nats_ci95"]
            lines.append(f"  {kind:<8} {eq['steps']:>6} steps in {eq['seconds']:.1f} s: {eq['test_nats_mean']:.4f} "
                         f"[{lo:.4f}, {hi:.4f}]  {word}")  # fmt: skip
    return "\n".join(lines)
