"""The kernel benchmark's report: targets judged, the flat table, scaling evidence, validation, text.

A report is the JSON document ``georesolver_core.bench.run_benchmark`` returns; everything here reads
only the report, so that an uploaded file is judged and drawn exactly as a fresh run.
"""

from __future__ import annotations

import math
import re

from georesolver_core.attention.layer import ATTENTION
from georesolver_core.uploads import json_depth, read_json

SCHEMA = "georesolver-bench/1"
TARGET_SEQ_LEN = 1024  # the speed targets are ratios to SDPA at this length (forward + backward)
MEMORY_LIMIT_MB = 256.0  # peak extra memory allowed at the memory-check length


def target_ratios() -> dict[str, float]:
    """The speed goals, forward + backward at T = TARGET_SEQ_LEN, of the public calls (headline rows; the
    internal kernel rows where a report has no headline): entry -> its ``timing.target_ratio`` x SDPA."""
    return {
        key: kind.timing.target_ratio
        for key, kind in ATTENTION.items()
        if kind.timing is not None and kind.timing.target_ratio is not None
    }


def judge(report: dict) -> list[dict]:
    """The speed and memory targets (``target_ratios()``, ``MEMORY_LIMIT_MB``), judged from this report's
    measurements (verdict None when not measured)."""
    out = []
    rows = {(r["kernel"], r["seq_len"]): r for r in report["rows"]}
    public = {(r["row"], r["seq_len"]): r for r in report.get("headline", [])}
    for name, limit in target_ratios().items():
        if (name, TARGET_SEQ_LEN) in public:  # the public entry point, pair by pair
            ratio, what = public[(name, TARGET_SEQ_LEN)]["ratio"], "public call"
        else:
            r = rows.get((name, TARGET_SEQ_LEN))
            ratio = None if r is None else r.get("fwdbwd_ratio")  # optional in a report (validate_report)
            what = "kernel"
        out.append(
            {
                "target": f"{name} forward+backward <= {limit}x SDPA at T = {TARGET_SEQ_LEN} ({what})",
                "measured": ratio,
                "met": None if ratio is None else ratio <= limit,
            }
        )
    for r in report.get("memory_check", {}).get("rows", []):
        out.append(
            {
                "target": f"{r['kernel']} peak memory < {MEMORY_LIMIT_MB:g} MB at T = {r['seq_len']}",
                "measured": r["peak_mb"],
                "met": r["within_limit"],
            }
        )
    return out


def report_table(report: dict) -> list[dict]:
    """One flat record per kernel and length: what the page's table and CSV download show."""
    return [
        {
            "kernel": r["kernel"],
            "label": r.get("label", r["kernel"]),
            "T": r["seq_len"],
            "forward ms": r["fwd_ms"],
            "forward x SDPA": r.get("fwd_ratio"),
            "forward+backward ms": r["fwdbwd_ms"],
            "forward+backward x SDPA": r.get("fwdbwd_ratio"),
            "peak MB": r.get("peak_mb"),
        }
        for r in report["rows"]
    ]


COMPLEXITY_MIN_LEN = 1024  # below this, per-call overheads hide the T^2 growth


def complexity_evidence(report: dict, min_len: int = COMPLEXITY_MIN_LEN) -> list[dict]:
    """Proposition 1 (dense HIDA costs Theta(n^2 d_h) time) and the O(T d) memory of the fused
    kernels, judged from log-log slopes fitted to this report's lengths >= min_len (at least two)."""
    from georesolver_core.verdicts import fit_loglog_slope, verdict_inequality, verdict_scaling

    out = []
    for name in target_ratios():
        fit = sorted(
            (r for r in report["rows"] if r["kernel"] == name and r["seq_len"] >= min_len),
            key=lambda r: r["seq_len"],
        )
        if len(fit) < 2:
            continue
        span = f"T = {fit[0]['seq_len']}..{fit[-1]['seq_len']}"
        verdict, summary, _ = verdict_scaling(
            [r["seq_len"] for r in fit], [r["fwdbwd_ms"] for r in fit], exponent=2.0, tol=0.3, what="time"
        )
        out.append(
            {
                "verdict": verdict,
                "section": f"Proposition 1, {fit[0].get('label', name)}",
                "statement": "dense inverse-distance attention costs Theta(n^2 d_h) time",
                "bound_text": "time ~ T^2 (fitted exponent within 2 +- 0.3)",
                "summary": f"{summary} ({span}, forward + backward)",
            }
        )
        mem = [r for r in fit if r.get("peak_mb")]
        if len(mem) >= 2:
            slope = fit_loglog_slope([r["seq_len"] for r in mem], [r["peak_mb"] for r in mem])
            verdict, summary = verdict_inequality([slope], [MEMORY_EXPONENT_MAX])
            out.append(
                {
                    "verdict": verdict,
                    "section": f"Streaming kernel, {fit[0].get('label', name)}",
                    "statement": "the fused kernel keeps O(T d) memory: no T x T matrix is stored",
                    "bound_text": f"peak memory ~ T^a with a <= {MEMORY_EXPONENT_MAX} (a dense matrix gives 2)",
                    "summary": f"fitted exponent a = {slope:.2f} ({span}); {summary}",
                }
            )
    return out


MEMORY_EXPONENT_MAX = 1.25


# An uploaded report is checked before it is parsed and field by field after: every field that the
# page, the table, the figures and the targets read has a type and a range, so that a malformed or
# hostile file is refused with a ValueError naming the field, never an exception further down.
MAX_REPORT_BYTES = 2 * 2**20  # the full benchmark's report is ~20 KB; 2 MB leaves room for long sweeps
MAX_ROWS = 2000  # kernels x lengths; the full benchmark writes 16
MAX_DEPTH = 8  # the report nests 4 deep (memory_check.rows[i].field)
MAX_TEXT = 1000  # characters of any string shown on the page (the memory method is described in ~460)
MAX_SEQ_LEN = 1 << 24
_TAG = re.compile(r"<\s*[A-Za-z/!?]")  # the start of an HTML tag; '<=' in a target's text is fine


def _show(value) -> str:
    """repr of a value, cut short: an error message must not echo a megabyte of the file."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _number(where: str, value, lo: float = 0.0, *, strict: bool = False, optional: bool = False):
    """A finite int or float (not bool, not a string) >= lo (> lo when strict); None allowed if optional."""
    if value is None and optional:
        return None
    bound = f"> {lo:g}" if strict else f">= {lo:g}"
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < lo or (strict and value == lo):
        kind = "null or a finite number" if optional else "a finite number"
        raise ValueError(f"{where} must be {kind} {bound} (got {_show(value)})")
    return value


def _integer(where: str, value, lo: int = 1, hi: int = MAX_SEQ_LEN) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise ValueError(f"{where} must be an integer in [{lo}, {hi}] (got {_show(value)})")
    return value


def _flag(where: str, value, *, optional: bool = True):
    if not isinstance(value, bool) and not (optional and value is None):
        raise ValueError(f"{where} must be true, false{' or null' if optional else ''} (got {_show(value)})")
    return value


def _text(where: str, value, *, optional: bool = False):
    """A short single-line string without tags: plotly renders <a href=...>, <img ...> in names as HTML."""
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{where} must be a string (got {_show(value)})")
    if not value.strip() or len(value) > MAX_TEXT:
        raise ValueError(f"{where} must be 1 to {MAX_TEXT} characters (got {len(value)})")
    if _TAG.search(value) or any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise ValueError(f"{where} must not contain markup tags or control characters (got {_show(value)})")
    return value


def _object(where: str, value) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"{where} must be a JSON object (got {type(value).__name__})")
    return value


def _list(where: str, value, *, non_empty: bool = False, most: int = MAX_ROWS) -> list:
    if not isinstance(value, list):
        raise ValueError(f"{where} must be a list (got {type(value).__name__})")
    if non_empty and not value:
        raise ValueError(f"{where} must be a non-empty list")
    if len(value) > most:
        raise ValueError(f"{where} may hold at most {most} entries (got {len(value)})")
    return value


def _scalars(where: str, doc: dict) -> None:
    """environment / config: every value a short string, a finite number, a bool, null or a list of those."""
    for key, val in doc.items():
        _text(f"{where} key", key)
        items = _list(f"{where}.{key}", val, most=64) if isinstance(val, list) else [val]
        for v in items:
            if isinstance(v, str):
                _text(f"{where}.{key}", v)
            elif not (v is None or isinstance(v, bool)):
                _number(f"{where}.{key}", v, lo=-math.inf)


# Typed fields of environment and config that the page prints as numbers or flags.
ENV_NUMBERS = {"threads": (1, False), "load_average_1min": (0.0, True), "load_average_1min_end": (0.0, True)}
CONFIG_INTS = {"batch": 1, "heads": 1, "head_dim": 1, "repeats": 1, "warmup": 0}


def _check_row(where: str, row) -> None:
    _object(where, row)
    _text(f"{where}.kernel", row.get("kernel"))
    _text(f"{where}.label", row.get("label"), optional=True)
    _integer(f"{where}.seq_len", row.get("seq_len"))
    for key in ("fwd_ms", "fwdbwd_ms"):
        val = row.get(key)
        if not isinstance(val, (int, float)) or isinstance(val, bool) or not math.isfinite(val) or val <= 0:
            raise ValueError(f"{where}.{key} must be a finite time > 0 ms (got {_show(val)})")
    for key in ("fwd_ratio", "fwdbwd_ratio"):
        _number(f"{where}.{key}", row.get(key), strict=True, optional=True)
    _number(f"{where}.peak_mb", row.get("peak_mb"), optional=True)
    if "repeats" in row:
        _integer(f"{where}.repeats", row["repeats"], 1, 1000)
    for key in ("fwd_times_ms", "fwdbwd_times_ms"):
        for j, t in enumerate(_list(f"{where}.{key}", row[key], most=1000) if key in row else []):
            _number(f"{where}.{key}[{j}]", t, strict=True)


def _check_memory(check) -> None:
    _object("memory_check", check)
    _integer("memory_check.seq_len", check.get("seq_len"))
    _number("memory_check.limit_mb", check.get("limit_mb"), strict=True)
    _number("memory_check.dense_matrix_mb_per_head", check.get("dense_matrix_mb_per_head"))
    for i, r in enumerate(_list("memory_check.rows", check.get("rows"))):
        where = f"memory_check.rows[{i}]"
        _object(where, r)
        _text(f"{where}.kernel", r.get("kernel"))
        _integer(f"{where}.seq_len", r.get("seq_len"))
        _number(f"{where}.peak_mb", r.get("peak_mb"), optional=True)
        _number(f"{where}.outputs_mb", r.get("outputs_mb"))
        _number(f"{where}.seconds", r.get("seconds"))
        _flag(f"{where}.within_limit", r.get("within_limit"))


def _check_targets(targets) -> None:
    for i, t in enumerate(_list("targets", targets, most=64)):
        where = f"targets[{i}]"
        _object(where, t)
        _text(f"{where}.target", t.get("target"))
        _number(f"{where}.measured", t.get("measured"), lo=-math.inf, optional=True)
        _flag(f"{where}.met", t.get("met"))


def validate_report(doc) -> dict:
    """Check that a loaded JSON document is a benchmark report; raises ValueError naming the field.

    Checks every field that ``judge``, ``report_table``, ``complexity_evidence``, ``format_table``, the
    figures and the page read: types (no strings where numbers belong, no bool for a number), finite
    positive times and lengths, short markup-free strings, and the nesting depth.
    """
    _object("a benchmark report", doc)
    if doc.get("schema") != SCHEMA:
        raise ValueError(f"schema must be {SCHEMA!r} (got {_show(doc.get('schema'))})")
    for key in ("environment", "rows"):
        if key not in doc:
            raise ValueError(f"a benchmark report needs the key {key!r}")
    if json_depth(doc, MAX_DEPTH) > MAX_DEPTH:
        raise ValueError(f"a benchmark report nests at most {MAX_DEPTH} levels deep (this one nests deeper)")
    env = _object("environment", doc["environment"])
    _scalars("environment", env)
    for key, (lo, optional) in ENV_NUMBERS.items():
        if key in env:
            _number(f"environment.{key}", env[key], lo, optional=optional)
    if "config" in doc:
        cfg = _object("config", doc["config"])
        _scalars("config", cfg)
        for key, lo in CONFIG_INTS.items():
            if key in cfg:
                _integer(f"config.{key}", cfg[key], lo, 1 << 20)
        if "eps" in cfg:
            _number("config.eps", cfg["eps"], strict=True)
        if "causal" in cfg:
            _flag("config.causal", cfg["causal"], optional=False)
    if "timing" in doc:
        timing = _object("timing", doc["timing"])
        _number("timing.long_call_s", timing.get("long_call_s"), strict=True, optional=True)
        if timing.get("long_row_repeats") is not None:
            _integer("timing.long_row_repeats", timing["long_row_repeats"], 1, 1000)
    seen: dict[tuple, int] = {}
    for i, row in enumerate(_list("rows", doc["rows"], non_empty=True)):
        _check_row(f"rows[{i}]", row)
        j = seen.setdefault((row["kernel"], row["seq_len"]), i)  # a repeated row would make a slope fit singular
        if j != i:
            raise ValueError(f"rows[{i}] repeats kernel {row['kernel']!r} at seq_len {row['seq_len']} (rows[{j}])")
    if "headline" in doc:
        _check_headline(doc["headline"])
    if "memory_check" in doc:
        _check_memory(doc["memory_check"])
    if "targets" in doc:
        _check_targets(doc["targets"])
    return doc


def _check_headline(records) -> None:
    for i, r in enumerate(_list("headline", records)):
        where = f"headline[{i}]"
        _object(where, r)
        for key in ("row", "label", "entry", "twin"):
            _text(f"{where}.{key}", r.get(key))
        _integer(f"{where}.seq_len", r.get("seq_len"))
        _integer(f"{where}.repeats", r.get("repeats"), 1, 1000)
        _flag(f"{where}.causal", r.get("causal"), optional=False)
        for key in ("ours_ms", "twin_ms", "ratio", "ratio_min", "ratio_max"):
            _number(f"{where}.{key}", r.get(key), strict=True)


def load_report(data: bytes | str, max_bytes: int = MAX_REPORT_BYTES) -> dict:
    """Parse and validate an uploaded report; the size is checked BEFORE parsing.

    Raises ValueError (naming the problem) for a file over ``max_bytes``, text that is not UTF-8 or not
    JSON, NaN / Infinity literals, nesting deeper than MAX_DEPTH, or any field ``validate_report`` refuses.
    """
    return validate_report(read_json(data, what="a benchmark report", max_bytes=max_bytes, max_depth=MAX_DEPTH))


def _long_rows(report: dict) -> str:
    long = report.get("timing", {})
    if "long_call_s" not in long:
        return ""
    return f" ({long['long_row_repeats']} when a call takes over {long['long_call_s']:g} s)"


def format_table(report: dict) -> str:
    """The human-readable table: one row per kernel and length, ratios to SDPA."""
    env = report["environment"]
    lines = [
        f"torch {env['torch']} on {env['device_name']}, {env['threads']} threads, {env['dtype']}, "
        f"{'CPU kernel: ' + env['cpu_path'] + ', ' if env.get('cpu_path') else ''}"
        f"load average {env.get('load_average_1min')} -> {env.get('load_average_1min_end')}; "
        f"B={report['config']['batch']} H={report['config']['heads']} D={report['config']['head_dim']} "
        f"eps={report['config']['eps']} causal={report['config']['causal']}; median of "
        f"{report['config']['repeats']} repeats{_long_rows(report)} after {report['config']['warmup']} warm-up",
    ]
    if report.get("headline"):
        from georesolver_core.bench.public import format_headline

        lines += ["public calls, forward + backward, each ratio pair by pair against its twin:"]
        lines += [format_headline(report["headline"]), "internal kernels (no validation, no API layer):"]
    lines.append(
        f"{'kernel':<11} {'T':>6} {'fwd ms':>10} {'x SDPA':>7} {'fwd+bwd ms':>11} {'x SDPA':>7} {'peak MB':>8}"
    )

    def fmt(x, spec):
        return "-" if x is None else format(x, spec)

    for r in report["rows"]:
        lines.append(
            f"{r['kernel']:<11} {r['seq_len']:>6} {r['fwd_ms']:>10.2f} {fmt(r['fwd_ratio'], '>7.2f')} "
            f"{r['fwdbwd_ms']:>11.2f} {fmt(r['fwdbwd_ratio'], '>7.2f')} {fmt(r['peak_mb'], '>8.1f')}"
        )
    check = report.get("memory_check")
    if check:
        lines.append(
            f"memory check at T = {check['seq_len']} (limit {check['limit_mb']:g} MB, "
            f"one dense T x T float32 matrix = {check['dense_matrix_mb_per_head']:.0f} MB):"
        )
        for r in check["rows"]:
            lines.append(
                f"  {r['kernel']:<9} peak {fmt(r['peak_mb'], '.1f')} MB (outputs and gradients "
                f"{r['outputs_mb']:.1f} MB), {r['seconds']:.1f} s"
            )
    for t in report.get("targets", []):
        verdict = {True: "met", False: "NOT met", None: "not measured"}[t["met"]]
        lines.append(f"target: {t['target']}: measured {fmt(t['measured'], '.2f')} -> {verdict}")
    return "\n".join(lines)
