"""The kernel benchmark's report: targets judged, the flat table, scaling evidence, validation, text.

A report is the JSON document ``georesolver_core.bench.run_benchmark`` returns; everything here reads
only the report, so that an uploaded file is judged and drawn exactly as a fresh run.
"""

from __future__ import annotations

import math

SCHEMA = "georesolver-bench/1"
TARGET_SEQ_LEN = 1024  # the issue's targets are ratios to SDPA at this length (forward + backward)
TARGET_RATIO = {"ida": 1.3, "hida": 2.5, "sida": 2.0}  # the fused kernels and their targets
MEMORY_LIMIT_MB = 256.0  # peak extra memory allowed at the memory-check length


def judge(report: dict) -> list[dict]:
    """The issue's targets, judged from this report's measurements (verdict None when not measured)."""
    out = []
    rows = {(r["kernel"], r["seq_len"]): r for r in report["rows"]}
    for name, limit in TARGET_RATIO.items():
        r = rows.get((name, TARGET_SEQ_LEN))
        ratio = None if r is None else r["fwdbwd_ratio"]
        out.append(
            {
                "target": f"{name} forward+backward <= {limit}x SDPA at T = {TARGET_SEQ_LEN}",
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
    from georesolver_core.claims.registry import fit_loglog_slope, verdict_inequality, verdict_scaling

    out = []
    for name in TARGET_RATIO:
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


ROW_KEYS = {"kernel": str, "seq_len": int, "fwd_ms": (int, float), "fwdbwd_ms": (int, float)}


def validate_report(doc) -> dict:
    """Check that a loaded JSON document is a benchmark report; raises ValueError saying what is wrong."""
    if not isinstance(doc, dict):
        raise ValueError(f"a benchmark report must be a JSON object (got {type(doc).__name__})")
    if doc.get("schema") != SCHEMA:
        raise ValueError(f"schema must be {SCHEMA!r} (got {doc.get('schema')!r})")
    for key in ("environment", "rows"):
        if key not in doc:
            raise ValueError(f"a benchmark report needs the key {key!r}")
    rows = doc["rows"]
    if not isinstance(rows, list) or not rows:
        raise ValueError("rows must be a non-empty list")
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise ValueError(f"rows[{i}] must be an object (got {type(row).__name__})")
        for key, typ in ROW_KEYS.items():
            val = row.get(key)
            if not isinstance(val, typ) or isinstance(val, bool):
                raise ValueError(f"rows[{i}].{key} must be {getattr(typ, '__name__', 'a number')} (got {val!r})")
        for key in ("fwd_ms", "fwdbwd_ms"):
            if not math.isfinite(row[key]) or row[key] <= 0:
                raise ValueError(f"rows[{i}].{key} must be a finite time > 0 ms (got {row[key]!r})")
    return doc


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
        f"load average {env.get('load_average_1min')} -> {env.get('load_average_1min_end')}; "
        f"B={report['config']['batch']} H={report['config']['heads']} D={report['config']['head_dim']} "
        f"eps={report['config']['eps']} causal={report['config']['causal']}; median of "
        f"{report['config']['repeats']} repeats{_long_rows(report)} after {report['config']['warmup']} warm-up",
        f"{'kernel':<11} {'T':>6} {'fwd ms':>10} {'x SDPA':>7} {'fwd+bwd ms':>11} {'x SDPA':>7} {'peak MB':>8}",
    ]

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
