"""Every command the README shows runs to its end, as a user pastes it, in its quick form.

Each README command line is run in a fresh folder with the flags of ``QUICK`` appended (argparse keeps the
last value of a repeated flag, so these shrink the sweep without changing the command's path through the
code); outputs the README points into ``assets/`` are redirected into that folder, so the shipped files are
never overwritten. A README command with no entry in ``QUICK`` fails the coverage test: a new command comes
with its quick form.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
import torch

from tests.app_pages import ROOT

CLI = "python -m georesolver_core"

# README command (comment stripped) -> flags appended for the quick form
QUICK: dict[str, list[str]] = {
    f"{CLI} embed --dataset wordnet-nouns --counts": [],
    f"{CLI} embed --dataset wordnet-mammals --geometry poincare --dim 5 --json --out mammals.json": [
        "--budget",
        "2",
    ],
    f"{CLI} embed --benchmark --budget 90 --out assets/wordnet_benchmark.json": ["--budget", "2"],
    # the noun command's path on the mammals (the nouns' final exact ranking alone takes minutes)
    f"{CLI} embed --dataset wordnet-nouns --method fast --dim 10 --cooldown 0.9 --lr-floor 0.01 --eval-every 180 --budget 3300 --out-points assets/wordnet_nouns_d10.npz --out assets/wordnet_nouns.json": [
        "--dataset",
        "wordnet-mammals",
        "--budget",
        "2",
    ],
    f"{CLI} embed --dataset wordnet-mammals --method construct --tau 5 --out-points mammals_d2.npz": [],
    f"{CLI} embed --leaderboard --dataset wordnet-mammals --budget 60 --out assets/wordnet_leaderboard.json": [
        "--budget",
        "1",
    ],
    f"{CLI} claims": ["--quick", "--only", "lemma2.3-exact-retrieval-euclidean"],
    f"{CLI} claims --json": ["--quick", "--only", "lemma2.3-exact-retrieval-euclidean"],
    f"{CLI} claims --json --out assets/claims_report.json": [
        "--quick",
        "--only",
        "lemma2.3-exact-retrieval-euclidean",
    ],
    f"{CLI} bench --json": ["--quick", "--seq-lens", "64", "--repeats", "1"],
    f"{CLI} bench --scaling": ["--seq-lens", "64", "128", "--repeats", "1"],
    f"{CLI} bench --profile": ["--seq-lens", "64", "--repeats", "1"],
    f"{CLI} bench --serve": ["--sessions", "1", "--moves", "1", "--no-training"],
    f"{CLI} routing --world-size 2 --json": ["--batch-sizes", "64"],
    "torchrun --nproc_per_node 2 -m georesolver_core routing --world-size 2 --json": ["--batch-sizes", "64"],
    f"{CLI} bench --compression": ["--keys", "20000"],
    f"{CLI} train --task recall --attention ida --layers 1 --target-accuracy 0.99 --baseline --json": [
        "--steps",
        "5",
        "--out",
        "runs-recall",
    ],
    f"{CLI} train --task recall --attention ida --bench": ["--steps", "5"],
    "torchrun --nproc_per_node 2 -m georesolver_core train --task digits": ["--steps", "3", "--out", "runs-ddp"],
    # writes runs/checkpoint.pt, the checkpoint the KV command below reads
    f"{CLI} train --task text --attention ida --baseline --sample 200 --json": [
        "--steps",
        "5",
        "--eval-every",
        "5",
    ],
    f"{CLI} train --task text --bench --bench-kernels hida sida fp-hida": ["--steps", "3"],
    f"{CLI} train --task text --recipe nanogpt --baseline --json": [
        "--steps",
        "5",
        "--eval-every",
        "5",
        "--out",
        "runs-nano",
    ],
    f"{CLI} lm-study --quick": ["--steps", "10", "--kinds", "softmax", "ida", "--lr-grid", "0.001", "0.01"],
    f"{CLI} lm-study --steps 400 --out assets/lm_study.json --kv-out assets/kv_pareto.json": [
        "--kv-windows",
        "2",
        "--sizes",
        "default",
        "--steps",
        "10",
        "--kinds",
        "softmax",
        "ida",
        "--lr-grid",
        "0.001",
        "0.01",
        "--seeds",
        "2",
    ],  # fmt: skip
    f"{CLI} bench --compression --kv-checkpoint runs/checkpoint.pt": ["--keys", "2000", "--kv-windows", "2"],
    "python -m georesolver_core.train.gpu_check": [],
}
# Commands not run here, and why (each still has to be in the README to be listed).
# A command's exit status where it is not 0: the GPU check refuses, with one line, on a machine with no CUDA GPU.
EXIT = {"python -m georesolver_core.train.gpu_check": 0 if torch.cuda.is_available() else 2}
NOT_RUN = {
    f"{CLI} embed --leaderboard --dataset wordnet-nouns --nouns-report assets/wordnet_nouns.json --out assets/wordnet_leaderboard.json": "trains the 82,115-noun closure and gensim on it at d = 2, 5 and 10 (280 CPU s each, 2,000 rows ranked); reads the shipped noun report",
}


def readme_commands() -> list[str]:
    """The command lines of the README's code blocks, in order, without their trailing comments."""
    lines, fenced = [], False
    for line in (ROOT / "README.md").read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        line = line.split(" #", 1)[0].strip()
        if fenced and line.startswith(("python -m georesolver_core", "torchrun ")):
            lines.append(line)
    return lines


def _quick_argv(command: str, folder) -> list[str]:
    """The command as argv, its quick flags appended and every path into assets/ moved into ``folder``."""
    words = [(str(folder / w.split("/")[-1]) if w.startswith("assets/") else w) for w in command.split()]
    words += QUICK[command]
    if words[0] == "python":
        return [sys.executable, *words[1:]]
    return [sys.executable, "-m", "torch.distributed.run", *words[1:]]


def test_every_readme_command_has_a_quick_form():
    commands = readme_commands()
    assert len(commands) >= 15, commands
    missing = [c for c in commands if c not in QUICK and c not in NOT_RUN]
    assert not missing, f"README commands with no quick form in QUICK: {missing}"
    stale = [c for c in [*QUICK, *NOT_RUN] if c not in commands]
    assert not stale, f"QUICK / NOT_RUN name commands the README no longer shows: {stale}"


# A command that reads what an earlier one wrote runs after it, in its folder: (command, the one it follows).
FOLLOWS = {
    f"{CLI} bench --compression --kv-checkpoint runs/checkpoint.pt": (
        f"{CLI} train --task text --attention ida --baseline --sample 200 --json"
    ),
}
# What a command promised to write, relative to its folder, and a check of it.
WRITES = {
    f"{CLI} embed --dataset wordnet-mammals --geometry poincare --dim 5 --json --out mammals.json": (
        "mammals.json",
        lambda path: "map" in json.loads(path.read_text())["metrics"],
    ),
    f"{CLI} embed --benchmark --budget 90 --out assets/wordnet_benchmark.json": (
        "wordnet_benchmark.json",
        lambda path: path.is_file(),
    ),
    f"{CLI} claims --json --out assets/claims_report.json": ("claims_report.json", lambda path: path.is_file()),
    f"{CLI} train --task text --attention ida --baseline --sample 200 --json": (
        "runs/checkpoint.pt",
        lambda path: path.is_file(),
    ),
}
# The two torchrun commands rendezvous on torchrun's default port: never at the same time (pytest-xdist)
TORCHRUN = pytest.mark.xdist_group("torchrun-default-port")


def _cases() -> list:
    """One case per README command that is run, as the commands it runs in order in one fresh folder: a
    command follows the one whose output it reads (FOLLOWS), in that command's case."""
    run = [c for c in readme_commands() if c in QUICK]
    cases = []
    for command in run:
        if command in FOLLOWS:
            continue
        chain = [command, *[c for c in run if FOLLOWS.get(c) == command]]
        marks = [TORCHRUN] if any(c.startswith("torchrun ") for c in chain) else []
        name = command.replace(f"{CLI} ", "").replace("--nproc_per_node 2 -m georesolver_core ", "")
        cases.append(pytest.param(chain, id=name[:60], marks=marks))
    return cases


def test_every_run_command_is_in_one_case():
    ran = [c for case in _cases() for c in case.values[0]]
    assert sorted(ran) == sorted(c for c in readme_commands() if c in QUICK)
    assert all(FOLLOWS[c] in QUICK and c in QUICK for c in FOLLOWS) and set(WRITES) <= set(QUICK)


@pytest.mark.slow
@pytest.mark.parametrize("chain", _cases())
def test_every_readme_command_runs_to_its_end(chain, tmp_path):
    for command in chain:
        argv = _quick_argv(command, tmp_path)
        t0 = time.perf_counter()
        proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        print(f"{time.perf_counter() - t0:6.1f} s  {command}")
        assert proc.returncode == EXIT.get(command, 0) and "Traceback" not in proc.stderr, (
            f"{command}\n  exit {proc.returncode}\n  {proc.stderr[-1500:]}"
        )
        if command in WRITES:  # what the command promised to write is there and readable
            name, check = WRITES[command]
            assert check(tmp_path / name), (command, name)
    assert not (ROOT / "mammals.json").exists()  # nothing written beside the sources
