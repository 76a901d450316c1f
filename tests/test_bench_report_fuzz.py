"""Uploaded benchmark reports: malformed, huge and hostile files are refused with a ValueError naming the
field; whatever ``load_report`` accepts can be judged, tabled, drawn and downloaded without an exception."""

from __future__ import annotations

import copy
import json
import random

import plotly.graph_objects as go
import pytest

from georesolver_core import bench
from georesolver_core.bench.report import MAX_REPORT_BYTES, load_report
from georesolver_core.viz.kernels import memory_figure, ratio_figure, time_figure


def _row(kernel: str, T: int, ms: float, ratio: float) -> dict:
    return {
        "kernel": kernel,
        "label": f"{kernel} kernel",
        "seq_len": T,
        "fwd_ms": ms,
        "fwdbwd_ms": 3 * ms,
        "repeats": 2,
        "fwd_times_ms": [ms, ms * 1.1],
        "fwdbwd_times_ms": [3 * ms, 3.3 * ms],
        "peak_mb": T / 64,
        "fwd_ratio": ratio,
        "fwdbwd_ratio": ratio,
    }


def _good() -> dict:
    """A report of the shape ``run_benchmark`` writes (lengths where the scaling checks apply)."""
    rows = []
    for T in (1024, 2048, 4096):
        base = (T / 1024) ** 2
        rows += [_row("sdpa", T, base, 1.0), _row("ida", T, 1.4 * base, 1.4), _row("sida", T, 1.2 * base, 1.2)]
    doc = {
        "schema": bench.SCHEMA,
        "environment": {
            "torch": "2.13.0",
            "device": "cpu",
            "device_name": "CPU (2 threads)",
            "threads": 2,
            "dtype": "float32",
            "memory_method": "rss",
            "load_average_1min": 1.5,
            "load_average_1min_end": 1.7,
        },
        "config": {"seq_lens": [1024, 2048, 4096], "kernels": ["sdpa", "ida", "sida"], "batch": 1, "heads": 2},
        "timing": {"long_call_s": 5.0, "long_row_repeats": 3},
        "rows": rows,
        "memory_check": {
            "seq_len": 8192,
            "limit_mb": 256.0,
            "dense_matrix_mb_per_head": 256.0,
            "rows": [
                {
                    "kernel": "ida",
                    "seq_len": 8192,
                    "peak_mb": 12.0,
                    "outputs_mb": 4.0,
                    "seconds": 1.0,
                    "within_limit": True,
                }
            ],
        },
    }
    doc["targets"] = bench.judge(doc)
    return doc


def _use(doc: dict, all_figures: bool = True) -> None:
    """Everything the Kernel-speed page and the CLI do with an accepted report (the time and memory
    figures read every row and memory-check field; the others are skipped in the fuzz loop for speed)."""
    bench.judge(doc)
    bench.report_table(doc)
    bench.complexity_evidence(doc)
    bench.complexity_evidence(doc, min_len=1)
    figs = [time_figure(doc), memory_figure(doc)]
    if all_figures:
        figs += [time_figure(doc, "fwd"), ratio_figure(doc)]
    assert all(isinstance(fig, go.Figure) for fig in figs)
    json.dumps(doc)  # the page offers the report as a download


def test_a_good_report_round_trips_and_is_usable():
    doc = load_report(json.dumps(_good()).encode())
    assert doc == _good()
    _use(doc)
    assert [t["met"] for t in bench.judge(doc)] == [
        False,
        None,
        True,
        True,
    ]  # ida 1.4 > 1.0, hida not run, sida 1.2 <= 1.3


def _set(doc, path, value):
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


# Each malformed class named in the bug report, with the field the error message must name.
MALFORMED = [
    (("environment",), ["cpu"], "environment must be a JSON object"),
    (("environment",), "cpu", "environment must be a JSON object"),
    (("config",), [1, 2], "config must be a JSON object"),
    (("config", "batch"), "4", "config.batch"),
    (("config", "heads"), {"x": 1}, r"config\.heads"),
    (("environment", "threads"), "2", "environment.threads"),
    (("environment", "torch"), {"version": "2"}, r"environment\.torch"),
    (("targets",), {"ida": True}, "targets must be a list"),
    (("targets", 0), "met", r"targets\[0\] must be a JSON object"),
    (("targets", 0, "met"), "yes", r"targets\[0\]\.met"),
    (("targets", 0, "measured"), "1.4", r"targets\[0\]\.measured"),
    (("targets", 0, "target"), None, r"targets\[0\]\.target"),
    (("memory_check",), [], "memory_check must be a JSON object"),
    (("memory_check", "rows"), "none", "memory_check.rows must be a list"),
    (("memory_check", "rows", 0), 3, r"memory_check\.rows\[0\] must be a JSON object"),
    (("memory_check", "rows", 0, "peak_mb"), "12", r"memory_check\.rows\[0\]\.peak_mb"),
    (("memory_check", "rows", 0, "within_limit"), "true", r"memory_check\.rows\[0\]\.within_limit"),
    (("memory_check", "seq_len"), None, r"memory_check\.seq_len"),
    (("memory_check", "limit_mb"), 0, r"memory_check\.limit_mb"),
    (("rows", 0, "fwd_ratio"), "1.0", r"rows\[0\]\.fwd_ratio"),
    (("rows", 0, "peak_mb"), "3", r"rows\[0\]\.peak_mb"),
    (("rows", 0, "peak_mb"), -1.0, r"rows\[0\]\.peak_mb"),
    (("rows", 0, "seq_len"), 1024.0, r"rows\[0\]\.seq_len"),
    (("rows", 0, "seq_len"), True, r"rows\[0\]\.seq_len"),
    (("rows", 0, "fwd_ms"), True, r"rows\[0\]\.fwd_ms"),
    (("rows", 0, "fwd_times_ms"), ["1"], r"rows\[0\]\.fwd_times_ms\[0\]"),
    (("rows", 0, "kernel"), 7, r"rows\[0\]\.kernel"),
    (("rows", 1, "kernel"), "sdpa", r"rows\[1\] repeats kernel 'sdpa' at seq_len 1024"),
    (("rows", 0, "label"), "<a href='https://example.org'>click</a>", r"rows\[0\]\.label must not contain markup"),
    (("rows", 0, "label"), "x" * 10_000, r"rows\[0\]\.label must be 1 to"),
    (("rows", 0, "label"), "two\nlines", r"rows\[0\]\.label must not contain"),
    (("timing",), 5, "timing must be a JSON object"),
    (("timing", "long_row_repeats"), 0.5, "timing.long_row_repeats"),
    (("rows",), {"0": {}}, "rows must be a list"),
    (("rows",), [_row("ida", 64, 1.0, 1.0)] * 3000, "rows may hold at most"),
    (("extra",), [[[[[[[[[["deep"]]]]]]]]]], "nests at most"),
]


@pytest.mark.parametrize("path,value,match", MALFORMED, ids=[".".join(map(str, m[0])) for m in MALFORMED])
def test_malformed_reports_are_refused_naming_the_field(path, value, match):
    doc = _set(_good(), path, value)
    with pytest.raises(ValueError, match=match):
        bench.validate_report(doc)
    with pytest.raises(ValueError, match=match):
        load_report(json.dumps(doc).encode())


@pytest.mark.parametrize(
    "data,match",
    [
        (b"[" * 200_000 + b"]" * 200_000, "nests at most"),  # RecursionError in the JSON parser
        (b'{"a": ' * 50_000 + b"1" + b"}" * 50_000, "nests at most"),
        (b"\xff\xfe not utf-8", "UTF-8"),
        (b"not json", "must be JSON"),
        (b"", "must be JSON"),
        (json.dumps(_good()).replace("1.5", "NaN").encode(), "NaN"),
        (json.dumps(_good()).replace("1.5", "Infinity").encode(), "Infinity"),
        (json.dumps(_good()).replace("1.5", "1e999").encode(), "load_average_1min"),  # parses to inf
        (json.dumps(_good()).replace('"threads": 2', '"threads": ' + "9" * 5000).encode(), "digits"),
    ],
    ids=["deep-list", "deep-object", "not-utf8", "not-json", "empty", "nan", "infinity", "overflow", "huge-int"],
)
def test_hostile_bytes_are_refused_before_or_while_parsing(data, match):
    with pytest.raises(ValueError, match=match):
        load_report(data)


def test_size_is_checked_before_parsing():
    # Not JSON at all: a size message (not a parse error) shows the bytes were never parsed.
    with pytest.raises(ValueError, match="at most 2 MB"):
        load_report(b"x" * (MAX_REPORT_BYTES + 1))
    with pytest.raises(ValueError, match="at most"):
        load_report("[" + "1," * (30 * 2**20) + "1]")  # a 60 MB string is refused the same way
    padded = _good()
    padded["environment"]["note"] = "n" * 100
    assert load_report(json.dumps(padded).encode(), max_bytes=len(json.dumps(padded))) == padded


HOSTILE_VALUES = [
    None, True, False, 0, -1, 0.0, -1e-300, 1e308, 2**70, "", " ", "12", "nan", "<img src=x>",
    "[link](https://example.org)", "x" * 500, [], [None], [[[]]], {}, {"a": {"b": {"c": 1}}},
]  # fmt: skip


def _paths(doc, prefix=()):
    """Every (path) to a value in the document, containers included."""
    out = []
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for key, val in items:
        out.append((*prefix, key))
        out.extend(_paths(val, (*prefix, key)))
    return out


@pytest.mark.parametrize("seed", range(2))
def test_fuzz_random_mutations_are_refused_or_harmless(seed):
    """Seeded: 1-3 random edits (replace any value by a hostile one, or delete a key) per report."""
    rng = random.Random(seed)
    accepted = refused = 0
    for _ in range(100):
        doc = _good()
        for _ in range(rng.randint(1, 3)):
            path = rng.choice(_paths(doc))
            parent = doc
            for key in path[:-1]:
                parent = parent[key]
            if isinstance(parent, dict) and rng.random() < 0.25:
                del parent[path[-1]]
            else:
                parent[path[-1]] = copy.deepcopy(rng.choice(HOSTILE_VALUES))
        try:
            ok = load_report(json.dumps(doc).encode())
        except ValueError as err:
            assert str(err), "an error must say what is wrong"
            refused += 1
            continue
        _use(ok, all_figures=False)
        accepted += 1
    assert refused > 50 and accepted > 0  # most edits break the schema; some (label, an extra key) do not
