"""Quantised-key evaluation of a trained text model and the rotated scalar quantiser."""

import pytest
import torch

from georesolver_core.attention import AttentionConfig
from georesolver_core.compression.kv_eval import batch_loss, best_at, kv_eval, kv_sweep, quantise_keys
from georesolver_core.compression.rotated import rotated_scalar_quantize, sphere_codebook
from georesolver_core.model import ModelConfig
from georesolver_core.train import RunSpec, TrainConfig, build_trainer


@pytest.fixture(scope="module")
def trained():
    model = ModelConfig(n_layers=1, attention=AttentionConfig(d_model=16, n_heads=2, kernel="ida"))
    spec = RunSpec(task="text", size=16, task_args=(("source", "subset"),), model=model)
    trainer = build_trainer(spec, TrainConfig(steps=5, batch_size=8, lr=1e-2, eval_every=5, device="cpu"))
    trainer.run()
    return trainer.model, trainer.task.test_set().slice(0, 8)


def test_float_keys_at_32_bits_equal_the_float_evaluation(trained):
    model, batch = trained
    row = kv_eval(model, batch, "float", 32)
    assert row["loss"] == batch_loss(model, batch)
    assert row["kl"] == 0.0 and row["bytes_per_key"] == 4 * 8  # head size 8, float32


def test_quantised_keys_cost_loss_and_bytes_in_order(trained):
    model, batch = trained
    report = kv_sweep(model, batch, methods=("float", "uniform", "rotated-scalar"), bits=(2, 8))
    rows = {(r["method"], r["bits"]): r for r in report["rows"]}
    assert rows[("uniform", 2)]["kl"] > rows[("uniform", 8)]["kl"] > 0
    assert abs(rows[("rotated-scalar", 8)]["loss_increase"]) < 1e-2
    assert rows[("uniform", 2)]["bytes_per_key"] < rows[("uniform", 8)]["bytes_per_key"]
    cheapest = min(report["rows"], key=lambda r: r["bytes_per_key"])
    assert cheapest["pareto"]  # no row stores fewer bytes
    assert best_at(report, 2)["method"] in ("uniform", "rotated-scalar")


def test_rotated_scalar_storage_and_error():
    k = torch.randn(3, 40, 16, generator=torch.Generator().manual_seed(0))
    errs = []
    for b in (2, 4, 8):
        rk = rotated_scalar_quantize(k, bits=b)
        assert rk.nbytes == (3 * 40 * 16 * b + 7) // 8 + 2 * 3 * 40 + 8  # codes + float16 norms + seed
        errs.append(float((rk.dequantize() - k).norm() / k.norm()))
    assert errs[0] > errs[1] > errs[2] and errs[2] < 0.02
    z = sphere_codebook(16, 2)
    assert torch.allclose(z, -z.flip(0), atol=0.02)  # the coordinate law is symmetric
    with pytest.raises(ValueError, match="bits"):
        rotated_scalar_quantize(k, bits=9)
    with pytest.raises(ValueError, match="method"):
        quantise_keys(k, "nope", 4)


def test_live_report_trains_and_sweeps_a_small_model():
    from georesolver_core.compression.kv_eval import METHODS, live_report

    report = live_report(steps=2, windows=2, bits=(2,), source="subset")
    assert report["steps"] == 2 and report["windows"] == 2
    assert [r["method"] for r in report["rows"]] == list(METHODS)  # float once, every quantiser at 2 bits


def _tiny_checkpoint(tmp_path, task: str, **task_args) -> str:
    model = ModelConfig(n_layers=1, attention=AttentionConfig(d_model=16, n_heads=2, kernel="ida"))
    spec = RunSpec(task=task, size=16, task_args=tuple(task_args.items()), model=model)
    trainer = build_trainer(spec, TrainConfig(steps=3, batch_size=8, eval_every=3, device="cpu"))
    trainer.run()
    trainer.save(tmp_path / f"{task}.pt")
    return str(tmp_path / f"{task}.pt")


def test_the_readme_kv_command_reads_a_checkpoint_the_trainer_writes(tmp_path, capsys):
    """`bench --compression --kv-checkpoint` on today's nested checkpoint layout (it once read only the flat one)."""
    from georesolver_core.__main__ import main

    path = _tiny_checkpoint(tmp_path, "text", source="subset")
    out = tmp_path / "kv.json"
    code = main(["bench", "--compression", "--kv-checkpoint", path, "--kv-windows", "2", "--kv-out", str(out)])
    assert code == 0, capsys.readouterr().err
    import json

    report = json.loads(out.read_text())
    assert report["model"] == {"attention": "ida", "d_model": 16, "n_layers": 1, "n_heads": 2, "eps": 0.1}
    assert report["steps"] == 3 and report["windows"] == 2 and report["rows"]
    assert "ida model, 3 steps" in capsys.readouterr().out


def test_kv_command_names_a_checkpoint_of_another_task(tmp_path, capsys):
    from georesolver_core.__main__ import main

    path = _tiny_checkpoint(tmp_path, "recall")
    assert main(["bench", "--compression", "--kv-checkpoint", path]) == 2
    err = capsys.readouterr().err
    assert "error:" in err and "text task" in err and "'recall'" in err
