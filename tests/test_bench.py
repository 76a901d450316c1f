"""The kernel benchmark: report structure, ratios, validation, CLI, figures (small sizes only)."""

from __future__ import annotations

import json
import math

import plotly.graph_objects as go
import pytest
import torch

from georesolver_core import bench
from georesolver_core.__main__ import main
from georesolver_core.bench.public import HEADLINE
from georesolver_core.viz.kernels import memory_figure, ratio_figure, time_figure
from tests.steps import drain


@pytest.fixture(scope="module")
def report():
    cfg = bench.BenchConfig(
        seq_lens=(32, 64),
        kernels=("sdpa", "ida", "hida", "sida", "ida-naive"),
        heads=2,
        head_dim=8,
        repeats=2,
        warmup=1,
        device="cpu",
        naive_max_len=32,
        memory=True,
        memory_check_len=128,
        headline_lens=(32,),
    )
    return bench.run_benchmark(cfg)


def test_report_has_environment_rows_ratios_and_memory(report):
    env = report["environment"]
    assert env["torch"] == torch.__version__ and env["device"] == "cpu" and env["threads"] >= 1
    assert env["memory_method"] == bench.MEMORY_METHOD[bench.memory_method("cpu")]
    rows = {(r["kernel"], r["seq_len"]): r for r in report["rows"]}
    assert ("ida-naive", 32) in rows and ("ida-naive", 64) not in rows  # naive only up to naive_max_len
    for T in (32, 64):
        sdpa = rows[("sdpa", T)]
        assert sdpa["fwd_ratio"] == 1.0 and sdpa["fwdbwd_ratio"] == 1.0
        for k in bench.FUSED:
            r = rows[(k, T)]
            assert len(r["fwd_times_ms"]) == 2 and r["fwd_ms"] > 0
            assert math.isclose(r["fwdbwd_ratio"], r["fwdbwd_ms"] / sdpa["fwdbwd_ms"])
            assert r["peak_mb"] is not None and r["peak_mb"] >= 0  # tiny shapes may reuse resident pages
    check = report["memory_check"]
    assert check["seq_len"] == 128 and {r["kernel"] for r in check["rows"]} == {"sdpa", "ida", "hida", "sida"}
    assert all(r["within_limit"] for r in check["rows"])
    assert bench.validate_report(json.loads(json.dumps(report))) is not None


def test_rows_are_entries_of_the_attention_registry():
    from georesolver_core.attention.layer import ATTENTION

    keys = list(bench.TIMED_KERNELS)
    assert keys[:7] == ["sdpa", "ida", "hida", "sida", "ida-naive", "hida-naive", "sida-naive"]
    for name, row in bench.TIMED_KERNELS.items():
        kind = ATTENTION["softmax" if name == "sdpa" else name.removesuffix("-naive")]
        assert row.label.startswith(kind.label + " (") and row.geometry == kind.geometry, name
        assert row.reference == name.endswith("-naive")
    assert bench.TIMED_KERNELS["ida"].label == ATTENTION["ida"].labelled("fused")
    assert {"fp-hida", "l-hida", "c-hida"} <= set(keys)


def test_targets_are_judged_only_where_measured(report):
    targets = report["targets"]
    ratio_targets = [t for t in targets if "SDPA" in t["target"]]
    assert len(ratio_targets) == 3 and all(t["met"] is None for t in ratio_targets)  # T = 1024 not run here
    fake = json.loads(json.dumps(report))
    for r in fake["rows"]:
        r["seq_len"] = bench.TARGET_SEQ_LEN if r["seq_len"] == 64 else r["seq_len"]
    judged = {t["target"].split()[0]: t for t in bench.judge(fake) if "SDPA" in t["target"]}
    for name, limit in bench.target_ratios().items():
        assert judged[name]["met"] == (judged[name]["measured"] <= limit)


def test_peak_memory_counts_allocations():
    # 64 MiB of fresh pages: large enough that pages the allocator already held barely move the figure
    peak = bench.peak_memory_mb(lambda: torch.empty(2**24, dtype=torch.float32).fill_(1.0), "cpu")
    assert peak is not None and 56.0 < peak < 80.0


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(seq_lens=()), "seq_lens"),
        (dict(seq_lens=(0,)), "seq_lens entries"),
        (dict(kernels=("flash",)), "kernels must be"),
        (dict(eps=-1.0), "eps"),
        (dict(repeats=0), "repeats"),
        (dict(dtype="float16"), "dtype"),
        (dict(device="tpu"), "device"),
    ],
)
def test_config_rejects_bad_values(kwargs, match):
    with pytest.raises(ValueError, match=match):
        bench.BenchConfig(**kwargs)


@pytest.mark.parametrize(
    "doc,match",
    [
        ([], "JSON object"),
        ({"schema": "x"}, "schema"),
        ({"schema": bench.SCHEMA, "environment": {}, "rows": []}, "non-empty"),
        (
            {
                "schema": bench.SCHEMA,
                "environment": {},
                "rows": [{"kernel": "ida", "seq_len": 8, "fwd_ms": -1.0, "fwdbwd_ms": 1.0}],
            },
            "finite time",
        ),
        ({"schema": bench.SCHEMA, "environment": {}, "rows": [{"kernel": "ida", "seq_len": "8"}]}, "seq_len"),
    ],
)
def test_validate_report_names_the_problem(doc, match):
    with pytest.raises(ValueError, match=match):
        bench.validate_report(doc)


def test_table_figures_and_complexity(report):
    table = bench.report_table(report)
    assert len(table) == len(report["rows"]) and {"forward x SDPA", "peak MB"} <= set(table[0])
    for fig in (time_figure(report, "fwd"), time_figure(report), ratio_figure(report), memory_figure(report)):
        assert isinstance(fig, go.Figure) and fig.layout.xaxis.title.text.startswith("sequence length")
    names = {t.name for t in time_figure(report).data}
    assert bench.TIMED_KERNELS["ida-naive"].label in names
    assert {t.name for t in ratio_figure(report).data} >= {bench.TIMED_KERNELS["hida"].label}
    with pytest.raises(ValueError, match="phase"):
        time_figure(report, "backward")
    assert bench.complexity_evidence(report) == []  # T = 32, 64: too short to judge scaling
    evidence = bench.complexity_evidence(report, min_len=32)
    assert len(evidence) >= 3 and all(e["verdict"] in ("holds", "fails") for e in evidence)


def test_cli_quick_json(capsys):
    code = main(
        ["bench", "--quick", "--json", "--seq-lens", "16", "32", "--repeats", "1", "--kernels", "sdpa", "ida"]
    )
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == bench.SCHEMA and [r["seq_len"] for r in doc["rows"]] == [16, 16, 32, 32]


def test_cli_table_and_bad_arguments(capsys):
    assert main(["bench", "--quick", "--seq-lens", "16", "--repeats", "1", "--kernels", "sdpa", "sida"]) == 0
    out = capsys.readouterr().out
    assert "x SDPA" in out and "sida" in out
    assert main(["bench", "--quick", "--seq-lens", "0"]) == 2
    assert "seq_lens entries" in capsys.readouterr().err


def test_peak_memory_sees_other_threads():
    if bench.memory_method("cpu") != "rss":
        pytest.skip("the resident-set method is Linux/glibc only; the profiler fallback sees one thread")
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        # 256 MiB: above glibc's largest dynamic mmap threshold (32 MiB), so fresh pages; large beside the
        # few tens of MB of freed heap that earlier tests can leave resident for the worker to reuse
        # (a 64 MiB probe read 47.7 MB after the whole suite).
        peak = bench.peak_memory_mb(lambda: pool.submit(lambda: torch.ones(2**26)).result(), "cpu")
    assert 200.0 < peak < 290.0


def test_headline_rows_call_the_public_entry_points(monkeypatch):
    """Every headline row times what users call: attention.ida (three geometries), ida_weights and
    GeoAttention; each is paired with its softmax twin, ratio by ratio."""
    from georesolver_core import attention
    from georesolver_core.bench import public

    calls = []

    def counting(name, fn):
        def wrapper(*args, **kwargs):
            calls.append((name, kwargs.get("geometry", "euclidean")))
            return fn(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(attention, "ida", counting("ida", attention.ida))
    monkeypatch.setattr(attention, "ida_weights", counting("ida_weights", attention.ida_weights))
    forward = attention.GeoAttention.forward
    monkeypatch.setattr(
        attention.GeoAttention, "forward", lambda self, x: counting("GeoAttention", forward)(self, x)
    )
    records = public.headline((16,), heads=2, head_dim=8, repeats=2)
    assert [r["row"] for r in records] == list(public.HEADLINE)
    assert {("ida", g) for g in ("euclidean", "poincare", "sphere")} <= set(calls)  # HEADLINE's three rows
    assert ("ida_weights", "euclidean") in calls and ("GeoAttention", "euclidean") in calls
    for r in records:
        assert r["ratio_min"] <= r["ratio"] <= r["ratio_max"] and r["repeats"] == 2
    text = public.format_headline(records)
    assert "attention.ida(geometry='poincare')" in text and "GeoAttention" in text


def test_causal_headline_rows_pass_causal_through_to_the_kernels(monkeypatch):
    """--causal times the causal public calls: ida / ida_weights get causal=True, and GeoAttention's
    kernel runs the causal spec through the unchecked entry that modules use (attend_checked)."""
    from georesolver_core import attention
    from georesolver_core.attention import layer
    from georesolver_core.bench import public

    seen = []

    def spy(name, fn, flag):
        def wrapper(*args, **kwargs):
            seen.append((name, flag(args, kwargs)))
            return fn(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(attention, "ida", spy("ida", attention.ida, lambda a, kw: kw.get("causal")))
    monkeypatch.setattr(
        attention, "ida_weights", spy("ida_weights", attention.ida_weights, lambda a, kw: kw.get("causal"))
    )
    monkeypatch.setattr(layer, "attend_checked", spy("module", layer.attend_checked, lambda a, kw: a[3].causal))
    public.headline((16,), heads=2, head_dim=8, repeats=1, causal=True)
    assert {name for name, _ in seen} == {"ida", "ida_weights", "module"}
    assert all(flag is True for _, flag in seen)


def test_report_carries_the_headline_and_judges_targets_from_it(report):
    head = {r["row"]: r for r in report["headline"]}
    assert set(head) == set(HEADLINE) and all(r["seq_len"] == 32 for r in head.values())
    assert "public calls" in bench.format_table(report)
    fake = json.loads(json.dumps(report))
    for r in fake["headline"]:
        r["seq_len"] = bench.TARGET_SEQ_LEN
    judged = {t["target"].split()[0]: t for t in bench.judge(fake) if "SDPA" in t["target"]}
    assert judged["ida"]["measured"] == head["ida"]["ratio"] and "public call" in judged["ida"]["target"]
    bad = json.loads(json.dumps(report))
    bad["headline"][0]["ratio"] = "fast"
    with pytest.raises(ValueError, match="headline"):
        bench.validate_report(bad)


def test_benchmark_steps_yields_each_length_and_ends_with_run_benchmarks_report():
    cfg = bench.BenchConfig(
        seq_lens=(32, 64),
        kernels=("sdpa", "ida", "ida-naive"),
        heads=1,
        head_dim=8,
        repeats=1,
        warmup=0,
        device="cpu",
        naive_max_len=32,
        memory=False,
        memory_check_len=64,
    )
    yielded, final = drain(bench.benchmark_steps(cfg))
    assert [(f, text) for f, text, _ in yielded] == [(0.5, "T = 32 timed"), (1.0, "T = 64 timed")]
    first = yielded[0][2]
    assert first["config"]["seq_lens"] == [32] and {r["seq_len"] for r in first["rows"]} == {32}
    assert "memory_check" not in first  # the memory check runs with the last length only
    whole = bench.run_benchmark(cfg)
    assert list(final["config"]["seq_lens"]) == list(whole["config"]["seq_lens"]) == [32, 64]
    assert [(r["kernel"], r["seq_len"]) for r in final["rows"]] == [
        (r["kernel"], r["seq_len"]) for r in whole["rows"]
    ]
    assert [sorted(r) for r in final["rows"]] == [sorted(r) for r in whole["rows"]]
    assert sorted(final) == sorted(whole)
    assert final["memory_check"]["seq_len"] == 64
    assert [r["kernel"] for r in final["memory_check"]["rows"]] == [
        r["kernel"] for r in whole["memory_check"]["rows"]
    ]
    assert [t["target"] for t in final["targets"]] == [t["target"] for t in whole["targets"]]
    assert yielded[-1][2] == final and bench.validate_report(json.loads(json.dumps(final))) is not None
