"""The WordNet gloss corpus, the character-level text task and its model."""

import json

import pytest
import torch

from georesolver_core.__main__ import main as cli_main
from georesolver_core.attention import AttentionConfig
from georesolver_core.model import ModelConfig
from georesolver_core.tasks import make_task
from georesolver_core.tasks.text import bits_per_char, decode, encode, generate
from georesolver_core.train import RunSpec, TrainConfig, build_trainer
from georesolver_core.wordnet.glosses import (
    VOCAB,
    clean,
    database_glosses,
    is_validation,
    load_corpus,
    split_glosses,
    subset_glosses,
    write_subset,
)

HEADER = "  1 This software and database is being provided to you, the LICENSEE, by  \n"


def _synthetic_database(folder, n=40):
    """A WordNet-format folder: a licence header and n synsets per part of speech."""
    for pos, letter in (("noun", "n"), ("verb", "v"), ("adj", "a"), ("adv", "r")):
        lines = [HEADER]
        for i in range(n):
            off = 1000 + 100 * i
            lines.append(f'{off:08d} 03 {letter} 01 word{i} 0 000 | gloss {pos} {i}; "an example\u00e9"  \n')
        (folder / f"data.{pos}").write_text("".join(lines), encoding="utf-8")
    return folder


def test_corpus_builder_reads_a_synthetic_database(tmp_path):
    records = database_glosses(_synthetic_database(tmp_path))
    assert len(records) == 160
    assert records[0] == ("n:00001000", 'gloss noun 0; "an example?"')  # non-ASCII -> "?"
    assert {sid[0] for sid, _ in records} == {"n", "v", "a", "r"}
    corpus = split_glosses(records, fraction=0.3)
    assert corpus.train_ids | corpus.validation_ids == {sid for sid, _ in records}
    assert corpus.validation_ids and corpus.train_ids
    assert set(corpus.train + corpus.validation) <= set(VOCAB)


def test_split_is_disjoint_and_deterministic():
    corpus = load_corpus("subset")
    assert not corpus.train_ids & corpus.validation_ids
    assert all(is_validation(s) for s in corpus.validation_ids)
    assert not any(is_validation(s) for s in corpus.train_ids)
    val_lines = set(corpus.validation.splitlines()) - set(corpus.train.splitlines())
    assert len(val_lines) > 0.9 * len(corpus.validation_ids)  # repeated short glosses aside, none is shared
    assert 0.02 < len(corpus.validation_ids) / (len(corpus.train_ids) + len(corpus.validation_ids)) < 0.08


def test_subset_round_trip(tmp_path):
    records = [("n:00000001", "first gloss"), ("v:00000002", "second\tgloss")]
    assert write_subset(tmp_path / "g.txt.gz", records, every=1) == 2
    assert subset_glosses(tmp_path / "g.txt.gz") == [("n:00000001", "first gloss"), ("v:00000002", "second gloss")]
    assert (tmp_path / "WORDNET_LICENSE.txt").read_text().startswith("WordNet 3.0 Copyright 2006")


def test_clean_and_encode():
    assert clean("caf\u00e9\tau lait") == "caf? au lait"
    assert decode(encode("a dog.\n")) == "a dog.\n"
    assert bits_per_char(torch.log(torch.tensor(2.0)).item()) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="fraction"):
        is_validation("n:1", 1.5)


def test_text_task_windows_are_shifted_by_one():
    task = make_task("text", size=16, source="subset")
    assert task.causal and task.d_in == task.n_classes == len(VOCAB)
    batch = task.sample(4, torch.Generator().manual_seed(0))
    assert batch.x.shape == (4, 16, len(VOCAB)) and batch.y.shape == (4, 16)
    assert torch.equal(batch.x.argmax(-1)[:, 1:], batch.y[:, :-1])  # the target is the next character
    with pytest.raises(ValueError, match="context"):
        make_task("text", size=1, source="subset")


def test_twenty_steps_lower_the_loss_and_the_model_is_causal():
    model = ModelConfig(n_layers=1, attention=AttentionConfig(d_model=32, kernel="ida"))
    spec = RunSpec(task="text", size=16, task_args=(("source", "subset"),), model=model)
    trainer = build_trainer(spec, TrainConfig(steps=20, batch_size=16, lr=1e-2, eval_every=20, device="cpu"))
    before = trainer.evaluate()["test_loss"]
    trainer.run()
    assert trainer.final().loss < before - 0.3
    x = trainer.task.test_set().x[:2]
    y = x.clone()
    y[:, 10:] = torch.roll(y[:, 10:], 1, dims=-1)  # change the future only
    with torch.no_grad():
        assert torch.allclose(trainer.model(x)[:, :10], trainer.model(y)[:, :10], atol=1e-5)
    text = generate(trainer.model, "a ", 12, generator=torch.Generator().manual_seed(0))
    assert len(text) == 12 and set(text) <= set(VOCAB)


def test_cli_text_run_reports_bits_and_a_baseline(tmp_path, capsys):
    args = ["train", "--task", "text", "--size", "16", "--d-model", "16", "--layers", "1", "--heads", "2",
            "--steps", "4", "--eval-every", "2", "--batch-size", "8", "--device", "cpu", "--baseline",
            "--sample", "10", "--json", "--out", str(tmp_path)]  # fmt: skip
    assert cli_main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    final = doc["final"]
    assert final["val_bits_per_char"] == pytest.approx(final["val_nats"] / 0.6931471805599453)
    assert (
        doc["baseline"]["spec"]["model"]["attention"]["kernel"] == "softmax"
        and doc["baseline"]["final"]["steps"] == 4
    )
    assert len(doc["sample"]["text"]) == 10
