"""Kernel benchmark: ``python -m georesolver_core bench [--json]``.

- ``run``: the timed kernels, the configuration, the run and the command line;
- ``report``: the JSON report's targets, table, scaling evidence, validation and text;
- ``report_view``: the typed values a page reads of a report (header, targets, the live merge);
- the peak-memory probe reported beside each time is ``georesolver_core.peak_memory`` (the cost-scaling lab,
  below this package, uses it too).
"""

from georesolver_core.bench.cli import add_arguments, main
from georesolver_core.bench.report import (
    COMPLEXITY_MIN_LEN,
    MAX_REPORT_BYTES,
    MEMORY_LIMIT_MB,
    SCHEMA,
    TARGET_SEQ_LEN,
    complexity_evidence,
    format_table,
    judge,
    load_report,
    report_table,
    target_ratios,
    validate_report,
)
from georesolver_core.bench.report_view import (
    ReportHeader,
    Target,
    has_memory,
    merge_length,
    report_header,
    report_targets,
)
from georesolver_core.bench.run import (
    FUSED,
    TIMED_KERNELS,
    BenchConfig,
    benchmark_steps,
    memory_check,
    run_benchmark,
)
from georesolver_core.peak_memory import MEMORY_METHOD, memory_method, peak_memory_mb

__all__ = [
    "COMPLEXITY_MIN_LEN",
    "FUSED",
    "TIMED_KERNELS",
    "MAX_REPORT_BYTES",
    "MEMORY_LIMIT_MB",
    "MEMORY_METHOD",
    "SCHEMA",
    "TARGET_SEQ_LEN",
    "BenchConfig",
    "ReportHeader",
    "Target",
    "add_arguments",
    "benchmark_steps",
    "complexity_evidence",
    "format_table",
    "has_memory",
    "judge",
    "load_report",
    "main",
    "memory_check",
    "memory_method",
    "merge_length",
    "peak_memory_mb",
    "report_header",
    "report_table",
    "report_targets",
    "run_benchmark",
    "target_ratios",
    "validate_report",
]
