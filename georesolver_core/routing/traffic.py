"""The traffic report of ``python -m georesolver_core routing --json``, as an upload: checked field by field.

The Routing & memory page draws the bytes each protocol of section 10.3 put on the wire from this
document (``DistResult.to_dict``: one run; the repository's asset holds ``{"runs": [...]}``). Every field
the page reads (the figure, the table and its CSV, one caption per run) has a type and a range here,
so that a malformed or hostile file is refused with a ValueError naming the field, never an exception
further down, and no text of the file reaches a caption (the captions print numbers and flags only).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from georesolver_core.routing.distributed import PROTOCOLS
from georesolver_core.uploads import read_json

MAX_TRAFFIC_BYTES = 2 * 2**20  # a run with 4 batch sizes is ~6 kB
MAX_RUNS = 64  # world sizes compared in one file
MAX_ROWS = 1000  # protocols x batch sizes per run
MAX_DEPTH = 8  # the document nests 7 deep: {runs: [{rows: [{phases: {<phase>: {bytes}}}]}]}
MAX_COUNT = 2**53  # bytes, messages, batch sizes: exact in a float, far above any measured run
WHAT = "a routing traffic report"

# row field -> (integer?, smallest allowed value)
ROW_FIELDS = {
    "world_size": (True, 1),
    "batch": (True, 1),
    "bytes": (True, 0),
    "messages": (True, 0),
    "dropped_slots": (True, 0),
    "bytes_per_query": (False, 0),
    "messages_per_query": (False, 0),
}


def _show(value) -> str:
    text = repr(value)  # an error message must not echo a megabyte of the file
    return text if len(text) <= 60 else text[:57] + "..."


def _object(where: str, value) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"{where} must be a JSON object (got {type(value).__name__})")
    return value


def _list(where: str, value, most: int) -> list:
    if not isinstance(value, list) or not 1 <= len(value) <= most:
        got = f"{len(value)} entries" if isinstance(value, list) else type(value).__name__
        raise ValueError(f"{where} must be a list of 1 to {most} entries (got {got})")
    return value


def _count(where: str, value, lo: int, integer: bool):
    """A finite number (an integer if ``integer``; never a bool or a string) in [lo, MAX_COUNT]."""
    ok = isinstance(value, int) if integer else isinstance(value, (int, float)) and math.isfinite(value)
    if isinstance(value, bool) or not ok or not lo <= value <= MAX_COUNT:
        kind = "an integer" if integer else "a finite number"
        raise ValueError(f"{where} must be {kind} in [{lo}, 2^53] (got {_show(value)})")
    return value


def _per_protocol(where: str, value, check) -> None:
    """max_abs_diff / same_indices: protocol name -> value (the names are printed in a caption)."""
    for key, val in _object(where, value).items():
        if key not in PROTOCOLS:
            raise ValueError(f"{where} keys must be protocols {list(PROTOCOLS)} (got {_show(key)})")
        check(f"{where}.{key}", val)


def _flag(where: str, value) -> None:
    if not isinstance(value, bool):
        raise ValueError(f"{where} must be true or false (got {_show(value)})")


def _check_run(where: str, run) -> dict:
    _object(where, run)
    for i, row in enumerate(_list(f"{where}.rows", run.get("rows"), MAX_ROWS)):
        _object(f"{where}.rows[{i}]", row)
        if row.get("protocol") not in PROTOCOLS:
            got = _show(row.get("protocol"))
            raise ValueError(f"{where}.rows[{i}].protocol must be one of {list(PROTOCOLS)} (got {got})")
        for key, (integer, lo) in ROW_FIELDS.items():
            _count(f"{where}.rows[{i}].{key}", row.get(key), lo, integer)
    _count(f"{where}.config.world_size", _object(f"{where}.config", run.get("config")).get("world_size"), 1, True)
    _per_protocol(f"{where}.max_abs_diff", run.get("max_abs_diff"), lambda w, v: _count(w, v, 0, False))
    _per_protocol(f"{where}.same_indices", run.get("same_indices"), _flag)
    return run


def load_traffic_report(data: bytes | str, max_bytes: int = MAX_TRAFFIC_BYTES) -> list[dict]:
    """The runs of an uploaded traffic report (one run, or ``{"runs": [...]}``), each checked.

    Raises ValueError naming the problem: over ``max_bytes`` (before parsing), not UTF-8 JSON, NaN or
    Infinity, nesting deeper than MAX_DEPTH, or a field of a run the page reads of the wrong type or range.
    """
    doc = _object(WHAT, read_json(data, what=WHAT, max_bytes=max_bytes, max_depth=MAX_DEPTH))
    if "runs" in doc:
        return [_check_run(f"runs[{i}]", run) for i, run in enumerate(_list("runs", doc["runs"], MAX_RUNS))]
    return [_check_run("run", doc)]


# the traffic table's columns, in order (the page's table and its CSV)
TABLE_COLUMNS = ("protocol", "world_size", "batch", "bytes", "messages", "bytes_per_query", "messages_per_query",
                 "dropped_slots")  # fmt: skip


@dataclass(frozen=True)
class TrafficRun:
    """One run of a traffic report, as the page reads it."""

    world_size: int  # P, the processes
    rows: list[dict]  # one per protocol and batch size: the ROW_FIELDS and the protocol
    max_abs_diff: dict[str, float]  # protocol -> max |distributed - single-process| output
    same_indices: dict[str, bool]  # protocol -> Top-K choices identical to single-process GSR


def traffic_runs(runs: list[dict]) -> list[TrafficRun]:
    """Typed runs of a report document (``load_traffic_report`` or ``DistResult.to_dict``); a run that
    records one number (or flag) for every protocol together gets it under the name "all"."""
    out = []
    for run in runs:
        diff, same = run["max_abs_diff"], run["same_indices"]
        out.append(
            TrafficRun(
                world_size=run["config"]["world_size"],
                rows=list(run["rows"]),
                max_abs_diff=diff if isinstance(diff, dict) else {"all": diff},
                same_indices=same if isinstance(same, dict) else {"all": same},
            )
        )
    return out


def traffic_table(runs: list[TrafficRun]) -> list[dict]:
    """Every row of every run, with the TABLE_COLUMNS only (one dict per row, for a DataFrame)."""
    return [{k: r[k] for k in TABLE_COLUMNS} for run in runs for r in run.rows]
