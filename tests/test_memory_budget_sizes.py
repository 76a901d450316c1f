"""Every size a user can set passes the memory budget before anything is allocated.

The cases that skipped it (each allocated gigabytes, or died with MemoryError, before) now stop at once with a
ValueError or a one-line ``error:``; a property test draws sizes across every task's allowed range and builds
the task in a process whose address space is capped a little above the budget: a size the estimate missed
would fail there with MemoryError / RuntimeError instead of the budget's ValueError.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from georesolver_core.__main__ import main
from georesolver_core.tasks import make_task

TOO_BIG = [  # (argv, the words the error names)
    (["train", "--task", "recall", "--size", "512", "--steps", "1"], "test examples"),
    (["bench", "--memory-check-len", "1048576", "--seq-lens", "64"], "this benchmark"),
    (["bench", "--profile", "--seq-lens", "100000000"], "this profile"),
    (["bench", "--scaling", "--seq-lens", "10000000", "--kernels", "c-hida"], "this scaling benchmark"),
    # within the old estimate, each allocated 4.5-5.4 GB before failing or was still growing after 60 s:
    # the headline's lengths were left out, the naive kernels' (T, T, D) differences counted as (T, T),
    # every row's tensors at one length as one row's, the profile's fused-kernel temporaries not at all
    (["bench", "--headline-lens", "1048576", "--seq-lens", "64", "--quick"], "headline_lens=(1048576,)"),
    (["bench", "--naive-max-len", "4096", "--seq-lens", "4096", "--kernels", "ida-naive"], "this benchmark"),
    (["bench", "--seq-lens", "262144", "--quick"], "this benchmark"),
    (["bench", "--profile", "--seq-lens", "500000"], "this profile"),
]


@pytest.mark.parametrize("argv,words", TOO_BIG, ids=[" ".join(a[:3]) for a, _ in TOO_BIG])
def test_a_size_past_the_budget_is_refused_at_once(argv, words, capsys):
    t0 = time.perf_counter()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and words in err and "Traceback" not in err, err
    assert time.perf_counter() - t0 < 10


def test_make_task_checks_before_it_allocates():
    with pytest.raises(ValueError, match="memory budget"):
        make_task("copy", size=1024, vocab=4096)  # 1,000 test examples of 2,048 x 4,097: 125 GiB


def test_the_tree_task_counts_its_one_hot_blocks_and_the_split():
    # n = 781 nodes: x alone is 8 n^3 = 3.8 GB (the old estimate, under 4 GiB), the peak twice that
    with pytest.raises(ValueError, match="memory budget"):
        make_task("hierarchy", branching=5, depth=4)


def test_every_task_estimates_its_bytes_from_its_arguments_and_checks_them(monkeypatch):
    from georesolver_core.tasks import TASKS

    monkeypatch.setenv("GEORESOLVER_MEMORY_BUDGET", "1")  # a budget nothing fits: every check refuses
    for name in sorted(set(TASKS) - {"text"}):
        with pytest.raises(ValueError, match="over the memory budget of 1 B"):
            make_task(name)


def test_the_benchmark_estimate_grows_with_every_size_it_is_given():
    from georesolver_core.bench import BenchConfig

    small = BenchConfig(seq_lens=(64,), kernels=("sdpa", "ida"), device="cpu")
    bigger = [
        BenchConfig(seq_lens=(128,), kernels=("sdpa", "ida"), device="cpu"),
        BenchConfig(seq_lens=(64,), kernels=("sdpa", "ida", "hida"), device="cpu"),
        BenchConfig(seq_lens=(64,), kernels=("sdpa", "ida"), batch=2, device="cpu"),
        BenchConfig(seq_lens=(64,), kernels=("sdpa", "ida"), dtype="float64", device="cpu"),
        BenchConfig(seq_lens=(64,), kernels=("sdpa", "ida"), memory_check_len=4096, device="cpu"),
        BenchConfig(seq_lens=(64,), kernels=("sdpa", "ida"), headline_lens=(1024,), device="cpu"),
        BenchConfig(seq_lens=(64,), kernels=("sdpa", "ida-naive"), naive_max_len=64, device="cpu"),
    ]
    for cfg in bigger:
        assert cfg.estimate_bytes() > small.estimate_bytes(), cfg


def test_the_text_task_checks_its_validation_windows(monkeypatch):
    monkeypatch.setenv("GEORESOLVER_MEMORY_BUDGET", "64MiB")  # the windows at context 1024: about 300 MB
    with pytest.raises(ValueError, match="memory budget"):
        make_task("text", context=1024)


def test_a_bad_budget_in_the_environment_is_one_error_line():
    env = {**os.environ, "GEORESOLVER_MEMORY_BUDGET": "lots"}
    proc = subprocess.run(
        [sys.executable, "-m", "georesolver_core", "train", "--steps", "1"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: GEORESOLVER_MEMORY_BUDGET") and "Traceback" not in proc.stderr


def test_a_crafted_checkpoint_upload_is_refused_before_its_task_is_built():
    import io

    import torch

    from georesolver_core.attention import AttentionConfig
    from georesolver_core.model import ModelConfig
    from georesolver_core.train import RunSpec, TrainConfig, build_trainer
    from georesolver_core.train.checkpoint import FORMAT
    from georesolver_core.train.run import read_checkpoint_upload

    model = ModelConfig(n_layers=1, attention=AttentionConfig(d_model=16, n_heads=2, kernel="ida"))
    trainer = build_trainer(RunSpec(task="copy", size=4, model=model), TrainConfig(steps=1, batch_size=4))
    state = {"format": FORMAT, **trainer.state()}
    state["meta"]["spec"].update(size=1024, task_args=[["vocab", 4096]])  # a small file asking for 125 GiB
    buf = io.BytesIO()
    torch.save(state, buf)
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="memory budget"):
        read_checkpoint_upload(buf.getvalue())
    assert time.perf_counter() - t0 < 5


# Each task's size arguments and their allowed ranges (the tasks' own checks).
RANGES = {
    "recall": {"n_pairs": (1, 512), "n_values": (2, 4096)},
    "copy": {"length": (1, 1024), "vocab": (2, 4096)},
    "noisy": {"n_train": (2, 100_000), "dim": (1, 4096), "length": (1, 1024)},
    "hierarchy": {"branching": (1, 20), "depth": (1, 20)},
    "digits": {},
}  # the text task is below: its validation windows are not checked yet
BUDGET = 256 * 2**20
# glibc reserves 64 MB of address space for each thread's malloc arena: one arena keeps the cap about bytes
ONE_ARENA = {"MALLOC_ARENA_MAX": "1"}
# Run in a child: the address-space cap is its own. Draws are log-uniform over each range, so both the
# small sizes (which must build) and the large ones (which must be refused) are drawn.
CHILD = r"""
import json, math, random, resource, sys
import torch
from georesolver_core.tasks import make_task

def vm():
    return int(next(l for l in open("/proc/self/status") if l.startswith("VmSize")).split()[1]) * 1024

make_task("recall")  # import and first-use mappings before the cap
ranges, budget, draws = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
cap = vm() + 2 * budget  # the budget and as much again for the allocator's slack
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
rng = random.Random(0)
out = {"built": 0, "refused": 0, "raw": []}
for i in range(draws):
    task = list(ranges)[i % len(ranges)]
    args = {k: int(round(math.exp(rng.uniform(math.log(lo), math.log(hi))))) for k, (lo, hi) in ranges[task].items()}
    try:
        make_task(task, **args)
        out["built"] += 1
    except ValueError as err:
        out["refused"] += 1
        if "memory budget" not in str(err) and "must" not in str(err):
            out["raw"].append([task, args, "ValueError: " + str(err)[:200]])
    except BaseException as err:
        out["raw"].append([task, args, type(err).__name__ + ": " + str(err)[:200]])
print(json.dumps(out))
"""


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc and caps RLIMIT_AS")
def test_no_drawn_task_size_allocates_past_the_budget():
    env = {**os.environ, **ONE_ARENA, "GEORESOLVER_MEMORY_BUDGET": str(BUDGET)}
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(RANGES), str(BUDGET), "60"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert not out["raw"], out["raw"]
    assert out["built"] >= 10 and out["refused"] >= 10, out  # both sides of the budget were drawn


BENCH_BUDGET = 64 * 2**20
# Half the draws span every allowed range of BenchConfig (lengths to 2^20, batch 4096, heads 1024, head_dim 4096,
# any three rows, both dtypes, naive / memory-check / headline lengths), half its small end, which the budget
# lets through. A configuration that passes runs: the whole benchmark (one repeat) where its work is small,
# else every row's tensors at every length (what a run builds first). Every kernel runs once before the cap.
BENCH_CHILD = r"""
import json, math, random, resource, sys
from georesolver_core.bench.run import TIMED_KERNELS, BenchConfig, _Case, run_benchmark

def vm():
    return int(next(l for l in open("/proc/self/status") if l.startswith("VmSize")).split()[1]) * 1024

quiet = dict(repeats=1, warmup=0, memory=False, device="cpu")
run_benchmark(BenchConfig(seq_lens=(16,), kernels=tuple(TIMED_KERNELS), naive_max_len=16, memory_check_len=16,
                          headline_lens=(16,), **quiet))
budget, draws = int(sys.argv[1]), int(sys.argv[2])
cap = vm() + 2 * budget
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
rng = random.Random(1)

def draw(hi):
    return int(round(math.exp(rng.uniform(0, math.log(hi)))))

out = {"ran": 0, "built": 0, "refused": 0, "raw": []}
for i in range(draws):
    T, B, H, D = (4096, 4, 8, 128) if i % 2 else (1 << 20, 4096, 1024, 4096)
    kw = dict(seq_lens=tuple(draw(T) for _ in range(rng.randint(1, 3))),
              kernels=tuple(rng.sample(list(TIMED_KERNELS), rng.randint(1, 3))),
              batch=draw(B), heads=draw(H), head_dim=draw(D), dtype=rng.choice(["float32", "float64"]),
              naive_max_len=rng.choice([0, draw(T)]), memory_check_len=rng.choice([0, draw(T)]),
              headline_lens=rng.choice([(), (draw(T),)]), **quiet)
    try:
        cfg = BenchConfig(**kw)
        lens = [*cfg.seq_lens, cfg.memory_check_len, *cfg.headline_lens]
        work = sum(cfg.batch * cfg.heads * cfg.head_dim * t * t * (t if TIMED_KERNELS[k].reference else 1)
                   for t in lens for k in cfg.kernels)
        if work <= 1e9:
            run_benchmark(cfg)
            out["ran"] += 1
        else:
            for t in cfg.seq_lens:
                cases = [_Case(cfg, k, t) for k in cfg.kernels if not TIMED_KERNELS[k].reference or t <= cfg.naive_max_len]
                del cases
            out["built"] += 1
    except ValueError as err:
        out["refused"] += 1
        if "memory budget" not in str(err):
            out["raw"].append([kw, "ValueError: " + str(err)[:200]])
    except BaseException as err:
        out["raw"].append([kw, type(err).__name__ + ": " + str(err)[:200]])
print(json.dumps(out))
"""


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc and caps RLIMIT_AS")
def test_no_drawn_benchmark_size_allocates_past_the_budget():
    env = {**os.environ, **ONE_ARENA, "GEORESOLVER_MEMORY_BUDGET": str(BENCH_BUDGET)}
    proc = subprocess.run(
        [sys.executable, "-c", BENCH_CHILD, str(BENCH_BUDGET), "200"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert not out["raw"], out["raw"]
    assert out["ran"] >= 20 and out["built"] >= 10 and out["refused"] >= 50, out
