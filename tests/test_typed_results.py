"""The typed results pages read: named fields, labelled exports that keep their old column names, and the
views of JSON documents (claims, benchmark, traffic and KV reports) the pages read instead of keys."""

import json
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest

from georesolver_core import bench
from georesolver_core.claims.report import ClaimRecord, load_report, report_settings
from georesolver_core.compression.kv_eval import kv_summary
from georesolver_core.labs.attention import AttentionStats
from georesolver_core.results import labelled
from georesolver_core.routing.traffic import TABLE_COLUMNS, load_traffic_report, traffic_runs, traffic_table

ASSETS = Path(__file__).resolve().parent.parent / "assets"


def test_labelled_keeps_labels_in_order_drops_unmeasured_and_names_unknown_fields():
    stats = AttentionStats(largest_weight=0.5, eff_keys_ida=2.0, eff_keys_softmax=3.0, nearest_key_distance=0.1)
    out = stats.to_dict()
    assert list(out) == list(AttentionStats.LABELS.values())[:4]  # n = 1: no pair statistics
    assert out["largest IDA weight"] == 0.5
    with pytest.raises(ValueError, match="labels must name fields of AttentionStats"):
        labelled(stats, {"no_such_field": "x"})
    with pytest.raises(FrozenInstanceError):
        stats.largest_weight = 1.0


def test_claim_records_of_the_shipped_report_carry_every_field_the_page_reads():
    report = load_report(ASSETS / "claims_report.json")
    records = [ClaimRecord.from_result(r) for r in report["claims"]]
    assert [r.key for r in records] == [r["key"] for r in report["claims"]]
    first, doc = records[0], report["claims"][0]
    assert (first.verdict, first.what) == (doc["verdict"], doc.get("headline") or doc["y_label"])
    assert first.result is doc  # figures and the JSON download use the document itself
    parted = next(r for r in records if r.parts)
    assert (
        parted.parts[0].verdict
        == next(p for p in report["claims"] if p["key"] == parted.key)["parts"][0]["verdict"]
    )
    s = report_settings(report)
    assert (s.version, s.seconds) == (report["version"], report["settings"]["seconds"])
    with pytest.raises(ValueError, match="'verdict'"):
        ClaimRecord.from_result({k: v for k, v in doc.items() if k != "verdict"})


def test_benchmark_report_view_merges_lengths_and_reads_header_and_targets():
    def part(seq_len, ratio):
        return {
            "environment": {"torch": "2.x", "load_average_1min_end": float(seq_len)},
            "config": {"batch": 1, "seq_lens": [seq_len]},
            "rows": [{"kernel": "ida", "seq_len": seq_len, "fwdbwd_ratio": ratio}],
        }

    report = bench.merge_length(None, part(512, 0.9), (512,))
    report = bench.merge_length(report, part(1024, 0.8), (512, 1024))
    assert [r["seq_len"] for r in report["rows"]] == [512, 1024]
    h = bench.report_header(report)
    assert (h.seq_lens, h.batch, h.torch, h.memory_method, h.heads) == (
        [512, 1024],
        1,
        "2.x",
        "not recorded",
        None,
    )
    assert report["environment"]["load_average_1min_end"] == 1024.0
    ida = next(t for t in bench.report_targets(report) if t.target.startswith("ida "))
    assert (ida.measured, ida.met) == (0.8, True)
    assert not bench.has_memory(report)
    report["rows"][0]["peak_mb"] = 3.0
    assert bench.has_memory(report)


def test_traffic_runs_read_the_shipped_asset_and_name_a_single_number_all():
    runs = traffic_runs(load_traffic_report((ASSETS / "routing_comm.json").read_text()))
    assert runs[0].world_size == 2 and set(runs[0].max_abs_diff) <= set(runs[0].same_indices)
    table = traffic_table(runs)
    assert len(table) == sum(len(r.rows) for r in runs) and tuple(table[0]) == TABLE_COLUMNS
    one = {"config": {"world_size": 3}, "rows": [], "max_abs_diff": 0.5, "same_indices": True}
    (run,) = traffic_runs([one])
    assert (run.world_size, run.max_abs_diff, run.same_indices) == (3, {"all": 0.5}, {"all": True})


def test_kv_summary_of_the_shipped_report():
    report = json.loads((ASSETS / "kv_pareto.json").read_text())
    kv = kv_summary(report)
    assert (kv.n_layers, kv.steps, kv.rows) == (report["model"]["n_layers"], report["steps"], report["rows"])
    for bits, best in kv.best.items():
        quantisers = [r for r in report["rows"] if r["bits"] == bits and r["method"] != "float"]
        assert best.loss_increase == min(r["loss_increase"] for r in quantisers)
    assert kv.hcc_on_front == any(r["pareto"] for r in report["rows"] if r["method"].startswith("hcc"))
