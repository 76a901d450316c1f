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


def test_a_bad_budget_in_the_environment_is_one_error_line():
    env = {**os.environ, "GEORESOLVER_MEMORY_BUDGET": "lots"}
    proc = subprocess.run(
        [sys.executable, "-m", "georesolver_core", "train", "--steps", "1"], env=env, capture_output=True, text=True
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
    "text": {"context": (2, 1024)},
}
BUDGET = 256 * 2**20
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
cap = vm() + 3 * budget  # the budget, the allocator's slack and the one-hot temporaries' rounding
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
    env = {**os.environ, "GEORESOLVER_MEMORY_BUDGET": str(BUDGET)}
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(RANGES), str(BUDGET), "60"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert not out["raw"], out["raw"]
    assert out["built"] >= 10 and out["refused"] >= 10, out  # both sides of the budget were drawn
