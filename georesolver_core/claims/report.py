"""The claims report: every claim measured, as one JSON document with the version and settings that made it.

    python -m georesolver_core claims --json --out assets/claims_report.json   # full settings (slow)
    python -m georesolver_core claims --json --quick --out report.json          # small sweeps

Document layout::

    {"version": "0.1.0",                       # georesolver_core.__version__
     "settings": {"quick": false, "keys": null, "torch": "2.13.0", "numpy": "...", "python": "3.11.2",
                  "generated_utc": "2026-12-01T23:50:00Z", "seconds": 812.4, "failed": {},
                  "geometries": ["euclidean", "poincare", "sphere"]},   # those a per-geometry claim was made for
     "claims": [run_claim(...) result + {"seed_words": [{"source", "words"}, ...]}, ...],  # registration order
     "not_measured": [{"source", "statement", "reason"}, ...]}   # the seeds' statements that are not claims

The app opens on the copy shipped in ``assets/`` and re-measures claims live on request; a claim
registered after the copy was made is missing from it (``missing_keys``) and is measured live.
"""

from __future__ import annotations

import json
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from georesolver_core.claims.registry import CLAIMS, run_claim
from georesolver_core.geometry import GEOMETRIES

__all__ = [
    "ClaimPart",
    "ClaimRecord",
    "ReportSettings",
    "build_report",
    "load_report",
    "missing_keys",
    "report_settings",
    "write_report",
]

REQUIRED = ("version", "settings", "claims")


def build_report(
    quick: bool = False,
    keys: Sequence[str] | None = None,
    *,
    on_claim: Callable[[int, int, str], None] | None = None,
) -> dict:
    """Measure the named claims (default: all) and return the report document.

    A claim whose measurement raises is left out and named in ``settings["failed"]`` with its error,
    so one broken claim does not lose the others. ``on_claim(i, n, key)`` is called before each claim.
    """
    import numpy as np
    import torch

    from georesolver_core import __version__

    chosen = list(keys) if keys else list(CLAIMS)
    t0 = time.perf_counter()
    results, failed = [], {}
    for i, key in enumerate(chosen):
        if on_claim is not None:
            on_claim(i, len(chosen), key)
        try:
            results.append(run_claim(key, quick))
        except Exception as err:  # reported in the document, the other claims still measured
            failed[key] = f"{type(err).__name__}: {err}"
    settings = {
        "quick": bool(quick),
        "keys": list(keys) if keys else None,
        "torch": torch.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "generated_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "seconds": round(time.perf_counter() - t0, 1),
        "failed": failed,
        # the geometries registered when it was measured: a claim made for each geometry exists for these only
        "geometries": sorted(GEOMETRIES),
    }
    from georesolver_core.claims.inventory import not_measured, words_of

    for result in results:  # the seed's words each claim measures, whole (the claim's text is its reading)
        result["seed_words"] = [{"source": s.source, "words": s.words} for s in words_of(result["key"])]
    return {"version": __version__, "settings": settings, "claims": results, "not_measured": not_measured()}


def write_report(report: dict, path: str | Path) -> Path:
    """Write the report document as indented JSON; returns the path."""
    _check(report, str(path))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1) + "\n")
    return path


def load_report(path: str | Path) -> dict:
    """Read a report document; ``ValueError`` naming the path if it is not one."""
    try:
        report = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(f"claims report {str(path)!r} could not be read: {err}") from err
    _check(report, str(path))
    return report


def missing_keys(report: dict, keys: Sequence[str] | None = None) -> list[str]:
    """The registered claims (or the named ones) that the report has no measurement of."""
    have = {r["key"] for r in report["claims"]}
    return [k for k in (keys if keys is not None else list(CLAIMS)) if k not in have]


def _check(report, where: str) -> None:
    if not isinstance(report, dict) or any(k not in report for k in REQUIRED):
        raise ValueError(f"claims report {where!r} must be a JSON object with keys {REQUIRED}")
    if not isinstance(report["claims"], list) or not all(
        isinstance(r, dict) and "key" in r for r in report["claims"]
    ):
        raise ValueError(f"claims report {where!r}: 'claims' must be a list of measured claims with a 'key'")


# --- Typed views a page reads (the document stays plain JSON: figures and downloads use it) ------------


@dataclass(frozen=True)
class ClaimPart:
    """One part of a claim with parts: its name, verdict and margin."""

    part: str
    verdict: str
    summary: str


@dataclass(frozen=True)
class ClaimRecord:
    """One measured claim (a ``run_claim`` result, shipped or measured now), with named fields."""

    key: str
    section: str  # where the paper states it
    statement: str
    bound_text: str  # the bound as a formula
    relation: str  # how measured is compared with the bound, in words
    page: str  # url path of the page that shows it
    verdict: str  # one of VERDICTS
    summary: str  # the margin, or the counter-example
    measured_value: float  # headline number
    bound_value: float  # the bound at the headline point
    what: str  # what the two headline numbers are, with their unit
    seconds: float  # measurement time
    reading: str = ""  # the reading of the statement judged
    parts: tuple[ClaimPart, ...] = ()
    settings: str = ""  # how it was measured when not shipped ("small sweeps", "full settings")
    result: dict = field(default_factory=dict, repr=False, compare=False)  # the JSON document, for figures

    @classmethod
    def from_result(cls, result: dict, settings: str = "") -> ClaimRecord:
        """The record of a ``run_claim`` result; ``ValueError`` naming the first missing field."""
        need = ("key", "section", "statement", "bound_text", "relation", "page", "verdict", "summary",
                "measured_value", "bound_value", "y_label", "seconds")  # fmt: skip
        missing = [k for k in need if k not in result]
        if missing:
            raise ValueError(f"claim result {result.get('key')!r} must have the field {missing[0]!r}")
        return cls(
            key=result["key"],
            section=result["section"],
            statement=result["statement"],
            bound_text=result["bound_text"],
            relation=result["relation"],
            page=result["page"],
            verdict=result["verdict"],
            summary=result["summary"],
            measured_value=result["measured_value"],
            bound_value=result["bound_value"],
            what=result.get("headline") or result["y_label"],
            seconds=result["seconds"],
            reading=result.get("reading") or "",
            parts=tuple(ClaimPart(p["part"], p["verdict"], p["summary"]) for p in result.get("parts") or ()),
            settings=settings,
            result=result,
        )


@dataclass(frozen=True)
class ReportSettings:
    """How a report document was measured."""

    version: str  # georesolver_core.__version__
    quick: bool  # small sweeps
    torch: str
    generated_utc: str
    seconds: float  # the whole run


def report_settings(report: dict) -> ReportSettings:
    """The settings of a report document (``load_report``)."""
    s = report["settings"]
    return ReportSettings(report["version"], bool(s["quick"]), s["torch"], s["generated_utc"], s["seconds"])
