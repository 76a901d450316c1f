"""Every command answers bad input with ``error: ...`` on stderr and exit code 2, never a traceback."""

from __future__ import annotations

import pytest
import torch

from georesolver_core.__main__ import main

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny tensors: see conftest

CASES = [
    (["routing", "--timeout", "inf"], "timeout_s"),
    (["routing", "--timeout", "0"], "timeout_s"),
    (["routing", "--capacity-factor", "inf"], "capacity_factor"),
    (["routing", "--capacity-factor", "0"], "capacity_factor"),
    (["routing", "--n-pool", "1048576", "--dim", "65536"], "over the memory budget"),
    (["train", "--task", "copy", "--eta", "0.3", "--steps", "1"], "takes no option"),
    (["train", "--task", "digits", "--size", "5", "--steps", "1"], "fixed size"),
    (
        [
            "train",
            "--task",
            "copy",
            "--size",
            "1024",
            "--d-model",
            "1024",
            "--layers",
            "16",
            "--batch-size",
            "65536",
        ],
        "over the memory budget",
    ),  # fmt: skip
    (["bench", "--seq-lens", "1048576", "--kernels", "ida-naive", "--naive-max-len", "1048576"], "memory budget"),
    (["bench", "--compression", "--keys", "100000000000"], "memory budget"),
    (["bench", "--threads", "0"], "threads"),
]
if not torch.cuda.is_available():
    CASES.append((["routing", "--backend", "nccl"], "needs one CUDA GPU per worker"))


@pytest.mark.parametrize("argv, match", CASES, ids=lambda c: " ".join(c) if isinstance(c, list) else None)
def test_bad_input_is_an_error_line_and_exit_code_2(argv, match, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err and err[-1].startswith("error: ") and match in err[-1], err


def test_an_unwritable_output_path_is_an_error_line(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    argv = ["train", "--task", "copy", "--size", "2", "--steps", "1", "--d-model", "8", "--heads", "2"]
    assert main([*argv, "--out", str(blocker / "run")]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("error: ")
