"""What the Kernel speed page reads of a benchmark report, as typed values.

The report itself stays the JSON document of ``run_benchmark`` (it is uploaded, downloaded and validated
field by field in ``bench.report``); a page reads these views of it, never its keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from georesolver_core.bench.report import judge


@dataclass(frozen=True)
class Target:
    """One speed or memory target (``bench.report.target_ratios()``, ``MEMORY_LIMIT_MB``), judged."""

    target: str  # the target in words
    measured: float | None  # the measured ratio or peak MB (None: not measured)
    met: bool | None  # None: not measured


def report_targets(report: dict) -> list[Target]:
    """The targets the report carries, or ``judge(report)`` when it carries none."""
    return [Target(t["target"], t.get("measured"), t.get("met")) for t in report.get("targets") or judge(report)]


@dataclass(frozen=True)
class ReportHeader:
    """Where and how a report was measured; a field the report does not record is None."""

    torch: str | None
    device_name: str | None
    threads: int | None
    dtype: str | None
    load_average_1min: float | None  # at the start
    memory_method: str  # how peak memory was measured ("not recorded" when absent)
    cpu_path: str  # the CPU kernel the inverse-distance rows ran ("not recorded" when absent)
    batch: int | None  # B
    heads: int | None  # H
    head_dim: int | None  # D
    eps: float | None
    causal: bool | None
    repeats: int | None  # timed calls, median reported
    warmup: int | None
    seq_lens: list[int] | None  # T


def report_header(report: dict) -> ReportHeader:
    """The environment and configuration of a (validated) report."""
    env, cfg = report["environment"], report.get("config", {})
    return ReportHeader(
        torch=env.get("torch"),
        device_name=env.get("device_name"),
        threads=env.get("threads"),
        dtype=env.get("dtype"),
        load_average_1min=env.get("load_average_1min"),
        memory_method=env.get("memory_method", "not recorded"),
        cpu_path=env.get("cpu_path", "not recorded"),
        batch=cfg.get("batch"),
        heads=cfg.get("heads"),
        head_dim=cfg.get("head_dim"),
        eps=cfg.get("eps"),
        causal=cfg.get("causal"),
        repeats=cfg.get("repeats"),
        warmup=cfg.get("warmup"),
        seq_lens=cfg.get("seq_lens"),
    )


def has_memory(report: dict) -> bool:
    """Whether any peak memory was measured (a row's peak_mb, or the memory check)."""
    return any(r.get("peak_mb") is not None for r in report["rows"]) or bool(report.get("memory_check"))


def merge_length(report: dict | None, part: dict, seq_lens: Sequence[int]) -> dict:
    """A live run times one length at a time: the report so far (None before the first) with ``part``'s
    rows, end-of-run load and memory check added, its lengths set to ``seq_lens`` and its targets judged."""
    if report is None:
        report = part
    else:
        report["rows"] += part["rows"]
        report["environment"]["load_average_1min_end"] = part["environment"].get("load_average_1min_end")
        if "memory_check" in part:
            report["memory_check"] = part["memory_check"]
    report["config"]["seq_lens"] = list(seq_lens)
    report["targets"] = judge(report)
    return report
