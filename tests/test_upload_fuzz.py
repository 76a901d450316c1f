"""Every upload of the app fuzzed with malformed, huge and hostile files (seeded).

The four uploads and the function each page hands the file's bytes to:

- Embeddings, the hierarchy edge list: ``tasks.from_edge_list_csv``;
- Kernel speed, the benchmark report: ``bench.load_report``;
- Routing & memory, the traffic report: ``routing.traffic.load_traffic_report``;
- Training, the checkpoint: ``train.load_checkpoint``.

For every case the parse function must either return a value or raise a ``ValueError`` with a readable
message (never another exception type), within a time bound, and whatever it accepts must go through the
page's next step (figure, table, download, resume) without an exception. Files over the size cap are
refused before any byte is parsed. ``ui.read_upload`` is driven with fake uploaded files.

Quick by default (QUICK_CASES per upload); ``GEORESOLVER_FUZZ=full`` runs FULL_CASES per upload and
``GEORESOLVER_FUZZ_SEED`` picks another seed. The real browser uploads are in test_browser_uploads.py.
"""

from __future__ import annotations

import copy
import io
import json
import os
import pickle
import random
import sys
import time
from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go
import pytest
import torch

from georesolver_core import bench
from georesolver_core.attention import AttentionConfig
from georesolver_core.model import ModelConfig
from georesolver_core.routing.traffic import MAX_TRAFFIC_BYTES, load_traffic_report
from georesolver_core.tasks import MAX_CSV_BYTES, MAX_NAME_LEN, from_edge_list_csv
from georesolver_core.train import RunSpec, TrainConfig, build_trainer, load_checkpoint, resume
from georesolver_core.train.checkpoint import MAX_CHECKPOINT_BYTES
from georesolver_core.train.run import spec_from_checkpoint
from georesolver_core.viz.routing import comm_figure
from tests.app_pages import ROOT

sys.path.insert(0, str(ROOT / "app"))
import ui  # noqa: E402

FULL = os.environ.get("GEORESOLVER_FUZZ", "").lower() == "full"
QUICK_CASES, FULL_CASES = 50, 400
CASES = FULL_CASES if FULL else QUICK_CASES
SEED = int(os.environ.get("GEORESOLVER_FUZZ_SEED", "0"))
CASE_SECONDS = 5.0  # a generous bound per case on a busy 2-core machine; most take milliseconds

# Text a user can put anywhere a name or a string goes: markdown and HTML injection, spreadsheet
# formulas, paths, control characters, encodings' corner cases and over-long strings.
HOSTILE_TEXT = [
    "![x](http://example.invalid/a.png)",
    "[link](http://example.invalid)",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '=HYPERLINK("http://example.invalid","click")',
    "+1+1",
    "@SUM(A1)",
    "../../etc/passwd",
    "C:\\Windows\\system32",
    "**bold** _it_ `code` $x^2$ :red[red] :smile:",
    "# heading",
    "name\nwith newline",
    "tab\there",
    "nul\x00byte",
    "\ufeffbom",
    "poincaré θ ε 你好 🙂",
    "\u202eevil",
    " ",
    "",
    "x" * (MAX_NAME_LEN + 1),
    "y" * 5000,
]


def _mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    """One byte-level corruption of a good file."""
    kind = rng.randrange(12)
    if kind == 0:
        return data[: rng.randrange(len(data) + 1)]  # truncated
    if kind == 1:
        return b"\xef\xbb\xbf" + data  # UTF-8 byte order mark
    if kind == 2:
        return data.decode("utf-8", "replace").encode("utf-16")  # another encoding
    if kind == 3:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 2000)))  # binary garbage
    if kind == 4:
        i = rng.randrange(len(data) + 1)
        return data[:i] + b"\x00" * rng.randint(1, 8) + data[i:]  # NUL bytes
    if kind == 5:
        i = rng.randrange(len(data) + 1)
        return data[:i] + b"\xff\xfe\x80" + data[i:]  # invalid UTF-8
    if kind == 6:
        return b""
    if kind == 7:
        b = bytearray(data)
        for _ in range(rng.randint(1, 10)):
            b[rng.randrange(len(b))] = rng.randrange(256)  # flipped bytes
        return bytes(b)
    if kind == 8:
        return data.replace(b"\n", b"\r\n") if rng.random() < 0.5 else data.replace(b"\n", b"\r")
    if kind == 9:
        return data * rng.randint(2, 4)  # concatenated copies
    if kind == 10:
        return data.decode("utf-8", "replace").encode("latin-1", "replace")
    return "\n".join(rng.choice(HOSTILE_TEXT) for _ in range(5)).encode("utf-8", "surrogatepass")


def _run_case(parse, data, use, what: str) -> str:
    """'accepted' or 'refused'; fails on any other exception, an empty message or a slow case."""
    start = time.perf_counter()
    try:
        value = parse(data)
    except ValueError as err:
        message = str(err)
        assert message.strip(), f"{what}: a refusal must say what is wrong"
        assert "Traceback" not in message and len(message) < 2000, f"{what}: unreadable message {message[:200]!r}"
        outcome = "refused"
    except Exception as err:  # noqa: BLE001 - the point of the test
        pytest.fail(f"{what}: {type(err).__name__} escaped the parser: {err!r:.300} (input {data[:120]!r})")
    else:
        try:
            use(value)
        except Exception as err:  # noqa: BLE001
            pytest.fail(f"{what}: accepted, then the page's next step raised {type(err).__name__}: {err!r:.300}")
        outcome = "accepted"
    elapsed = time.perf_counter() - start
    assert elapsed < CASE_SECONDS, f"{what}: took {elapsed:.1f} s (bound {CASE_SECONDS} s)"
    return outcome


def _fuzz(parse, use, cases, what: str) -> dict:
    counts = {"accepted": 0, "refused": 0}
    for i, data in enumerate(cases):
        counts[_run_case(parse, data, use, f"{what} case {i}")] += 1
    return counts


# --- Embeddings: the hierarchy edge list ------------------------------------------------------------------

SAMPLE_CSV = (ROOT / "assets" / "sample_hierarchy.csv").read_bytes()


def _use_hierarchy(hier) -> None:
    """What the Embeddings page does before training: summary, notes, distances, the download table."""
    from georesolver_core.viz.embeddings import embedding_figure, embedding_view

    assert 2 <= hier.n_nodes and hier.n_edges >= 1
    assert all(0 < len(n) <= MAX_NAME_LEN for n in hier.nodes)
    hier.summary()
    hier.tree_distance  # noqa: B018 - computed on first use, as the training does
    points = torch.zeros(hier.n_nodes, 2, dtype=torch.float64)
    points[:, 0] = torch.linspace(-0.5, 0.5, hier.n_nodes, dtype=torch.float64)
    assert isinstance(embedding_figure(embedding_view(points, hier, geometry="poincare")), go.Figure)
    table = ui.csv_safe(pd.DataFrame(hier.edge_table(), columns=["parent", "child"]))
    assert not table.map(lambda v: str(v)[:1] in "=+-@\t\r").to_numpy().any()
    table.to_csv(index=False).encode()


def _csv_case(rng: random.Random) -> bytes:
    kind = rng.randrange(10)
    if kind < 2:
        return _mutate_bytes(rng, SAMPLE_CSV)
    names = [f"n{i}" for i in range(rng.randint(2, 12))] + rng.sample(HOSTILE_TEXT, 3)
    header = rng.choice(
        [
            "parent,child",
            "Parent , Child",
            "child,parent",
            "parent",
            "parent,child,weight",
            "a,b",
            "",
            "parent;child",
        ]
    )
    rows = []
    for _ in range(rng.randint(0, 20)):
        p, c = rng.choice(names), rng.choice(names)
        shape = rng.randrange(8)
        if shape == 0:
            c = p  # self-loop
        elif shape == 1 and rows:
            rows.append(rows[-1])  # duplicate row
            continue
        elif shape == 2:
            rows.append(f'"{p}"')  # a row with one cell
            continue
        elif shape == 3:
            rows.append(f"{p},{c},extra")
            continue
        rows.append(f'"{p.replace(chr(34), chr(34) * 2)}","{c.replace(chr(34), chr(34) * 2)}"')
    if rng.random() < 0.2 and len(names) > 2:
        rows += [f"{names[0]},{names[1]}", f"{names[1]},{names[2]}", f"{names[2]},{names[0]}"]  # a cycle
    text = "\n".join([header, *rows])
    return text.encode("utf-8", "surrogatepass") if rng.random() < 0.9 else text.encode("utf-16")


def _csv_parse(data: bytes):
    return from_edge_list_csv(data, name="upload.csv")


def test_fuzz_embeddings_csv():
    rng = random.Random(SEED)
    counts = _fuzz(_csv_parse, _use_hierarchy, (_csv_case(rng) for _ in range(CASES)), "edge list")
    assert counts["refused"] > CASES // 4 and counts["accepted"] > 0, counts


@pytest.mark.parametrize(
    "text,match",
    [
        ("parent,child\na,b\nb,c\nc,a\n", "cycle"),
        ("parent,child\na,a\n", "self-loop"),
        ("parent,child,weight\na,b,1\n", "columns"),
        ("parent,child\n" + "a,b\n" * 3, None),  # duplicates dropped and noted
        ("parent,child\n\x00,\x00\n", "control|empty"),
        ("\ufeffparent,child\na,b\n", None),  # a BOM is read past
        ("parent,child\na,\n", "empty cell"),
        ("parent,child\n" + "a," + "x" * 200 + "\n", "at most 80 characters"),
    ],
    ids=["cycle", "self-loop", "columns", "duplicates", "nul", "bom", "empty-cell", "long-name"],
)
def test_each_class_of_bad_edge_list_is_refused_by_name(text, match):
    if match is None:
        _use_hierarchy(_csv_parse(text.encode()))
    else:
        with pytest.raises(ValueError, match=match):
            _csv_parse(text.encode())


@pytest.mark.parametrize("name", HOSTILE_TEXT[:6], ids=["image", "link", "script", "img", "formula", "plus"])
def test_hostile_node_names_are_kept_as_text_and_made_safe_downstream(name):
    """Names are data: kept verbatim (they round-trip through the download) but inert in every output."""
    quoted = '"' + name.replace('"', '""') + '"'
    hier = _csv_parse(f"parent,child\nroot,{quoted}\n".encode())
    assert name in hier.nodes
    _use_hierarchy(hier)
    assert "<script" not in ui.escape_md(name).replace("\\<", "")


def test_huge_edge_list_is_refused_before_parsing():
    with pytest.raises(ValueError, match="at most"):
        _csv_parse(b"\xff" * (MAX_CSV_BYTES + 1))  # not UTF-8: a size message shows it was never decoded


# --- Kernel speed: the benchmark report (its field-by-field fuzz is test_bench_report_fuzz.py) ---------------

GOOD_REPORT = json.dumps(
    {
        "schema": bench.SCHEMA,
        "environment": {"torch": "2", "device": "cpu", "threads": 2},
        "rows": [
            {"kernel": k, "seq_len": T, "fwd_ms": T / 100, "fwdbwd_ms": T / 30, "fwd_ratio": 1.0, "peak_mb": 1.0}
            for k in ("sdpa", "ida")
            for T in (1024, 2048)
        ],
    }
).encode()


def _use_report(doc) -> None:
    from georesolver_core.viz.kernels import memory_figure, time_figure

    bench.judge(doc)
    pd.DataFrame(bench.report_table(doc))
    bench.complexity_evidence(doc)
    assert isinstance(time_figure(doc), go.Figure) and isinstance(memory_figure(doc), go.Figure)
    json.dumps(doc)


def _json_case(rng: random.Random, good: bytes) -> bytes:
    """Byte corruptions, or a parsed good document with one structural or hostile edit."""
    if rng.random() < 0.4:
        return _mutate_bytes(rng, good)
    kind = rng.randrange(8)
    if kind == 0:
        return b"[" * 100_000 + b"]" * 100_000  # deeper than the JSON parser recurses
    if kind == 1:
        return good.replace(b"1.0", rng.choice([b"NaN", b"Infinity", b"-Infinity", b"1e999", b"9" * 5000]))
    if kind == 2:
        return json.dumps(rng.choice([None, 1, "x", [], {}, [[{}]], {"runs": "rows"}, "rows"])).encode()
    doc = json.loads(good)
    parent, key, node = None, None, doc
    for _ in range(rng.randint(1, 4)):  # walk down to a random value: parent[key]
        if isinstance(node, dict) and node:
            k = rng.choice(list(node))
        elif isinstance(node, list) and node:
            k = rng.randrange(len(node))
        else:
            break
        parent, key, node = node, k, node[k]
    if parent is not None:
        parent[key] = copy.deepcopy(
            rng.choice([*HOSTILE_TEXT, None, True, -1, 0, -1e308, 2**70, 1.5, [], {}, [None], {"a": [[[]]]}])
        )
    return json.dumps(doc).encode()


def test_fuzz_benchmark_report_upload():
    rng = random.Random(SEED)
    counts = _fuzz(bench.load_report, _use_report, (_json_case(rng, GOOD_REPORT) for _ in range(CASES)), "report")
    assert counts["refused"] > CASES // 2 and counts["accepted"] > 0, counts


# --- Routing & memory: the traffic report of `python -m georesolver_core routing --json` ------------------

GOOD_TRAFFIC = (ROOT / "assets" / "routing_comm.json").read_bytes()


def _use_traffic(runs) -> None:
    """The Routing page's Distributed tab: the figure both ways, the table and its CSV, one caption per run."""
    rows = [r for run in runs for r in run["rows"]]
    assert rows
    for per in ("batch", "query"):
        assert isinstance(comm_figure(rows, per=per), go.Figure)
    keys = ("protocol", "world_size", "batch", "bytes", "messages", "bytes_per_query", "messages_per_query")
    table = pd.DataFrame([{k: r[k] for k in (*keys, "dropped_slots")} for r in rows])
    ui.csv_safe(table).to_csv(index=False)
    for run in runs:
        caption = f"P = {run['config']['world_size']}: {run['max_abs_diff']}; {run['same_indices']}"
        assert "<" not in caption and "](" not in caption


def test_the_shipped_traffic_report_loads():
    runs = load_traffic_report(GOOD_TRAFFIC)
    assert runs == json.loads(GOOD_TRAFFIC)["runs"]
    _use_traffic(runs)
    one = load_traffic_report(json.dumps(runs[0]).encode())  # one run, as `routing --json` writes it
    assert one == [runs[0]]


@pytest.mark.parametrize(
    "doc,match",
    [
        ("rows", "JSON object"),  # crashed the page: "rows" in "rows" is True
        ({"runs": "rows"}, "runs must be a list"),
        ({"rows": [1, 2]}, r"rows\[0\] must be a JSON object"),
        ([{"rows": []}], "JSON object"),
        (5, "JSON object"),
    ],
    ids=["string-rows", "runs-string", "rows-ints", "top-list", "number"],
)
def test_traffic_report_shapes_that_crashed_the_page(doc, match):
    with pytest.raises(ValueError, match=match):
        load_traffic_report(json.dumps(doc).encode())


def test_traffic_report_refuses_markup_in_captions_and_huge_files():
    doc = json.loads(GOOD_TRAFFIC)
    doc["runs"][0]["max_abs_diff"]["![x](http://example.invalid/a.png)"] = 0.0
    with pytest.raises(ValueError, match="max_abs_diff"):
        load_traffic_report(json.dumps(doc).encode())
    with pytest.raises(ValueError, match="at most"):
        load_traffic_report(b"\xff" * (MAX_TRAFFIC_BYTES + 1))


def test_fuzz_routing_traffic_upload():
    rng = random.Random(SEED)
    counts = _fuzz(
        load_traffic_report, _use_traffic, (_json_case(rng, GOOD_TRAFFIC) for _ in range(CASES)), "traffic"
    )
    assert counts["refused"] > CASES // 2 and counts["accepted"] > 0, counts


# --- Training: the checkpoint ------------------------------------------------------------------------------

TINY = RunSpec(
    task="recall", size=4, model=ModelConfig(n_layers=1, attention=AttentionConfig(d_model=8, n_heads=2))
)


@pytest.fixture(scope="module")
def checkpoint() -> dict:
    return {"format": "georesolver-train/1", **build_trainer(TINY, TrainConfig(steps=2, batch_size=4)).state()}


def _saved(payload) -> bytes:
    buf = io.BytesIO()
    torch.save(payload, buf)
    return buf.getvalue()


def _continue(data) -> None:
    """The Training page's next steps: the description line, then "Continue this run"."""
    spec = spec_from_checkpoint(data)
    f"{spec.label} on {spec.task}, step {data['step']}"  # noqa: B018
    resume(data)


def _use_checkpoint(data) -> None:
    """Either step may still refuse a checkpoint of the right format (a run description or shapes this
    version cannot rebuild) with a ValueError, which the page shows; no other exception may come out."""
    try:
        _continue(data)
    except ValueError as err:
        assert str(err).strip()


def _checkpoint_case(rng: random.Random, good: dict, good_bytes: bytes) -> bytes:
    if rng.random() < 0.4:
        return _mutate_bytes(rng, good_bytes)
    data = copy.deepcopy(good)
    path = rng.choice(
        [("step",), ("meta",), ("meta", "spec"), ("meta", "spec", "attention"), ("meta", "spec", "task"),
         ("meta", "spec", "d_model"), ("meta", "spec", "task_args"), ("train_config",), ("train_config", "lr"),
         ("history",), ("model",), ("optimizer",), ("generator",), ("format",), ("model_config",), ("seconds",)]
    )  # fmt: skip
    node = data
    for key in path[:-1]:
        node = node[key]
    value = rng.choice(
        [*HOSTILE_TEXT[:8], None, True, -1, 2**70, float("nan"), float("inf"), [], {}, [1, "x"], torch.zeros(3)]
    )
    if rng.random() < 0.2:
        node.pop(path[-1], None)
    else:
        node[path[-1]] = copy.deepcopy(value)
    return _saved(data)


class _Exploit:
    """A pickle that would run a command when loaded by an unsafe loader."""

    def __reduce__(self):
        return (os.system, ("echo pwned > /dev/null",))


def test_checkpoint_loader_refuses_code_and_non_checkpoints(checkpoint):
    for payload, match in [
        (_Exploit(), "not a readable checkpoint"),
        ({"format": "georesolver-train/1", "x": _Exploit()}, "not a readable checkpoint"),
        ([1, 2, 3], "not a training checkpoint"),
        ({"format": "georesolver-train/1"}, "missing"),
    ]:
        with pytest.raises(ValueError, match=match):
            load_checkpoint(_saved(payload))
    with pytest.raises(ValueError, match="not a readable checkpoint"):
        load_checkpoint(pickle.dumps({"format": "georesolver-train/1"}, protocol=2))
    data = load_checkpoint(_saved(checkpoint))
    _continue(data)
    assert resume(data).step == 0


def test_huge_checkpoint_is_refused_before_reading():
    with pytest.raises(ValueError, match="at most"):
        load_checkpoint(b"\x00" * (MAX_CHECKPOINT_BYTES + 1))


@pytest.mark.parametrize(
    "path,value,match",
    [
        (("meta", "spec", "model", "attention", "kernel"), "<script>alert(1)</script>", "kernel must be one of"),
        (("meta", "spec"), "x", "meta.spec"),
        (("meta",), [1], "meta"),
        (("step",), "3", "step"),
        (("step",), -1, "step"),
        (("history",), [1, 2], "history"),
        (("train_config", "lr"), float("nan"), "lr"),
        (("model",), {"w": "x"}, "model"),
        (("optimizer",), [], "optimizer"),
    ],
    ids=["attention-markup", "spec-string", "meta-list", "step-string", "step-negative", "history-ints",
         "lr-nan", "model-strings", "optimizer-list"],
)  # fmt: skip
def test_malformed_checkpoints_are_refused_naming_the_field(checkpoint, path, value, match):
    data = copy.deepcopy(checkpoint)
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(ValueError, match=match):
        _continue(load_checkpoint(_saved(data)))


def test_fuzz_training_checkpoint_upload(checkpoint):
    rng = random.Random(SEED)
    good_bytes = _saved(checkpoint)
    cases = (_checkpoint_case(rng, checkpoint, good_bytes) for _ in range(CASES))
    counts = _fuzz(load_checkpoint, _use_checkpoint, cases, "checkpoint")
    assert counts["refused"] > CASES // 4 and counts["accepted"] > 0, counts


# --- ui.read_upload with fake uploaded files ------------------------------------------------------------


@dataclass
class FakeUpload:
    """What st.file_uploader returns, as far as read_upload reads it."""

    name: str
    data: bytes
    file_id: str

    @property
    def size(self) -> int:
        return len(self.data)

    def getvalue(self) -> bytes:
        self.reads = getattr(self, "reads", 0) + 1
        return self.data


@pytest.fixture
def session(monkeypatch):
    state: dict = {}
    monkeypatch.setattr(ui.st, "session_state", state)
    return state


def test_read_upload_refuses_by_size_without_reading(session):
    up = FakeUpload("big.json", b"x" * 101, "id-1")
    value, error = ui.read_upload(up, key="k", max_bytes=100, parse=bench.load_report)
    assert value is None and "101 bytes; at most 100" in error
    assert getattr(up, "reads", 0) == 0


@pytest.mark.parametrize(
    "parse,good",
    [
        (_csv_parse, SAMPLE_CSV),
        (bench.load_report, GOOD_REPORT),
        (load_traffic_report, GOOD_TRAFFIC),
    ],
    ids=["edge-list", "report", "traffic"],
)
def test_read_upload_parses_each_file_once_and_keeps_only_the_error(session, parse, good):
    calls = []

    def counting(data):
        calls.append(len(data))
        return parse(data)

    bad = FakeUpload("![x](http://example.invalid/a.png).json", b"\xff\x00garbage", "bad")
    for _ in range(3):  # reruns with the same file: parsed once
        value, error = ui.read_upload(bad, key="k", max_bytes=10**7, parse=counting)
        assert value is None and error
    assert len(calls) == 1 and session["k_parsed"]["value"] is None
    ok = FakeUpload("good", good, "good")
    for _ in range(2):
        value, error = ui.read_upload(ok, key="k", max_bytes=10**7, parse=counting)
        assert error is None and value is not None
    assert len(calls) == 2
    assert ui.read_upload(None, key="k", max_bytes=1, parse=counting) == (None, None)
    assert "k_parsed" not in session  # removing the file forgets it


def test_read_upload_of_a_checkpoint(session, checkpoint):
    good = FakeUpload("run.pt", _saved(checkpoint), "ckpt")
    value, error = ui.read_upload(good, key="t", max_bytes=MAX_CHECKPOINT_BYTES, parse=load_checkpoint)
    assert error is None and value["step"] == 0
    bad = FakeUpload("run.pt", good.data[:100], "ckpt-truncated")
    value, error = ui.read_upload(bad, key="t", max_bytes=MAX_CHECKPOINT_BYTES, parse=load_checkpoint)
    assert value is None and "not a readable checkpoint" in error
