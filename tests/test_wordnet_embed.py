"""The ``embed`` command: its JSON document round-trips, bad arguments give a clear error, the benchmark runs."""

import json

import numpy as np
import pytest
import torch

from georesolver_core.__main__ import main
from georesolver_core.embeddings.benchmark import LR_GRID, QUICK_ENTRIES, run_benchmark
from georesolver_core.embeddings.metrics import reconstruction
from georesolver_core.geometry import pairwise_distance
from georesolver_core.wordnet.closure import load_mammals


def test_embed_json_round_trip(tmp_path):
    out = tmp_path / "m.json"
    rc = main(
        ["embed", "--dataset", "wordnet-mammals", "--dim", "3", "--budget", "2", "--json", "--out", str(out)]
    )
    assert rc == 0
    doc = json.loads(out.read_text())
    m = load_mammals()
    assert doc["nodes"] == list(m.nodes) and doc["geometry"] == "poincare" and doc["c"] == 1.0
    x = torch.tensor(doc["points"], dtype=torch.float64)  # (N, 3) ball points
    assert x.shape == (m.n_nodes, 3) and float(x.norm(dim=-1).max()) < 1.0
    assert doc["settings"]["dim"] == 3 and doc["settings"]["optimizer"] == "rsgd"
    assert doc["wall_seconds"] >= doc["train_seconds"] > 0
    # the metrics are those of the points written: recomputed from the file, they agree
    d = pairwise_distance(x, x, geometry="poincare", validate=False)
    again = reconstruction(d, m.relation())
    assert again["map"] == pytest.approx(doc["metrics"]["map"], rel=1e-6)
    assert again["mean_rank"] == pytest.approx(doc["metrics"]["mean_rank"], rel=1e-6)


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--geometry", "hyperbolic"], "geometry must be one of"),
        (["--dim", "0"], "dim must be"),
        (["--dataset", "mammals"], "dataset must be one of"),
        (["--budget", "-1"], "time_budget_s"),
        (["--lr", "0"], "lr"),
        (["--dtype", "float16"], "dtype"),
    ],
)
def test_bad_arguments_give_a_clear_error(argv, says, capsys):
    assert main(["embed", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and says in err


def test_quick_benchmark_rows_use_the_same_protocol():
    doc = run_benchmark(load_mammals(), budget_s=0.5, entries=QUICK_ENTRIES[:2], with_gensim=False)
    assert [(r["geometry"], r["dim"]) for r in doc["rows"]] == list(QUICK_ENTRIES[:2])
    for r in doc["rows"]:
        assert 1.0 <= r["mean_rank"] and 0.0 < r["map"] <= 1.0 and r["epochs_run"] >= 0
    assert doc["rows"][0]["published"] == {"mean_rank": 1.26, "map": 0.927}
    assert np.isfinite([r["train_seconds"] for r in doc["rows"]]).all()
    euclid = doc["rows"][1]  # a tuned baseline: every rate of its grid tried, the best one kept
    assert set(euclid["lr_grid"]) == {f"{lr:g}" for lr in LR_GRID["euclidean"]}
    assert euclid["lr"] in LR_GRID["euclidean"] and doc["settings"]["budget_s_per_entry"] == 0.5


def _tiny_closure():
    """A 7-node closure: a binary tree of depth 2, each node related to all its ancestors."""
    from georesolver_core.wordnet.closure import Closure

    direct = np.array([[1, 0], [2, 0], [3, 1], [4, 1], [5, 2], [6, 2]])  # (child, parent)
    pairs = np.concatenate([direct, [[3, 0], [4, 0], [5, 0], [6, 0]]])
    return Closure("tiny", tuple(f"n{i}" for i in range(7)), pairs, direct)


def test_gensim_row_trains_within_the_budget_and_is_measured_by_our_protocol():
    pytest.importorskip("gensim")
    from georesolver_core.embeddings.benchmark import gensim_poincare

    row = gensim_poincare(
        _tiny_closure(), dim=2, budget_s=0.3, negative=2
    )  # the default 10 need 10 unrelated nodes
    assert (
        row["epochs_run"] >= 1 and row["train_seconds"] < 0.3 + 5.0
    )  # stopped at the budget, one epoch late at most
    assert 1.0 <= row["mean_rank"] <= 6.0 and 0.0 < row["map"] <= 1.0 and row["settings"]["negative"] == 2


def test_benchmark_without_gensim_skips_its_row_with_a_note(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "gensim.models.poincare", None)  # import fails as if not installed
    doc = run_benchmark(_tiny_closure(), budget_s=0.2, entries=(("poincare", 2),), with_gensim=True)
    assert [r["geometry"] for r in doc["rows"]] == ["poincare"] and doc["complete"]
    assert "gensim" in doc["notes"][0] and ".[peers]" in doc["notes"][0]


def test_a_closure_above_the_dense_limit_trains_sparse_and_reports_no_points(monkeypatch):
    from georesolver_core.embeddings import wordnet
    from georesolver_core.embeddings.sparse import SparseRelation
    from georesolver_core.labs import embeddings as lab

    monkeypatch.setattr(wordnet, "MAX_DENSE_NODES", 3)  # the tiny closure counts as "large"
    closure = _tiny_closure()
    assert isinstance(wordnet.closure_trainer(closure, wordnet.recipe("poincare", dim=2)).relation, SparseRelation)
    doc = wordnet.embed_closure(closure, wordnet.recipe("poincare", dim=2, epochs=3, burn_in=1))
    assert "points" not in doc and "nodes" not in doc and doc["n_pairs"] == closure.n_pairs
    assert doc["eval_seconds"] >= 0 and doc["cpu_seconds"] > 0 and len(doc["load_average_1_5_15min"]) == 3
    (row,) = lab.closure_report_rows(doc)
    assert row["closure"] == "tiny: 7 nodes, 10 pairs" and row["MAP"] == doc["metrics"]["map"]


def test_leaderboard_takes_a_reported_dimension_from_its_report_and_gensim_at_its_dims(monkeypatch, tmp_path):
    from types import SimpleNamespace

    from georesolver_core.embeddings import leaderboard as lb

    calls = []

    def row(method, dataset, dim, **extra):
        calls.append((method, dataset, dim, extra.get("out_points")))
        return {"dataset": dataset, "dim": dim, "method": method, "map": 0.5, "mean_rank": 2.0,
                "cpu_seconds": 1.0, "source": "stub", **extra}  # fmt: skip

    monkeypatch.setattr(lb, "trained_row", lambda d, c, dim, **kw: row("trained here", d, dim, **kw))
    monkeypatch.setattr(lb, "constructed_row", lambda d, c, tau: row("constructed here", d, 2))
    # one gensim epoch of 900 CPU seconds against a 100-second budget
    monkeypatch.setattr(
        lb, "gensim_row", lambda d, c, dim, **kw: row("gensim", d, dim, train_cpu_seconds=900.0, epochs=1)
    )
    from georesolver_core.embeddings import benchmark

    probe = {"pairs": 20000, "cpu_seconds": 1.0, "epoch_cpu_seconds": 50.0}  # one epoch fits the budget
    monkeypatch.setattr(benchmark, "gensim_epoch_cpu", lambda closure, **kw: probe)
    report = tmp_path / "nouns.json"
    report.write_text(json.dumps({"method": "fast", "settings": {"dim": 10, "time_budget_s": 3300, "budget_clock": "wall"},
                                  "metrics": {"map": 0.9, "mean_rank": 3.0}, "cpu_seconds": 6000.0,
                                  "wall_seconds": 3400.0, "epochs_run": 900}))  # fmt: skip
    nouns = SimpleNamespace(n_nodes=82115, n_pairs=743241)
    doc = lb.run_leaderboard(
        {"wordnet-nouns": nouns}, budget_s=100.0, reports={"wordnet-nouns": str(report)},
        train=("wordnet-nouns",), points_dir=tmp_path,
    )  # fmt: skip
    # trained and gensim at 2, 5 and 10 (beside the report's longer d = 10 run), no d = 2 file for a closure
    # the page does not draw
    assert [c for c in calls if c[0] == "trained here"] == [
        ("trained here", "wordnet-nouns", d, None) for d in (2, 5, 10)
    ]
    assert [c[2] for c in calls if c[0] == "gensim"] == [2, 5, 10]
    measured = {(r["dim"], r["method"]) for r in doc["rows"] if r["cpu_seconds"] is not None}
    assert measured == {(d, m) for d in (2, 5, 10) for m in ("trained here", "gensim")} | {(2, "constructed here")}
    (reported,) = [r for r in doc["rows"] if r["dim"] == 10 and "nouns.json" in r["source"]]
    assert reported["map"] == 0.9 and reported["method"] == "trained here"
    assert any(
        "one gensim epoch outlasts the 100 CPU-second budget (900 CPU s an epoch)" in n for n in doc["notes"]
    )
    assert any("d=10: gensim ran 1 epochs in the budget, all in its burn-in" in n for n in doc["notes"])
    # an epoch that would not fit: no gensim row, a note with the measured probe instead
    probe.update(cpu_seconds=400.0, epoch_cpu_seconds=14864.8)
    calls.clear()
    doc = lb.run_leaderboard({"wordnet-nouns": nouns}, budget_s=100.0, train=())
    assert [c[0] for c in calls] == ["constructed here"]
    assert any("d=10: no gensim row: one epoch of 20,000 sampled pairs took 400 CPU s" in n for n in doc["notes"])
    assert sum("no gensim row" in n for n in doc["notes"]) == 3  # one per dimension
