"""A claim of the paper as a record (reference, statement, closed-form bound, measurement) and the
rules that turn a measurement beside its bound into a verdict.

The paper reports no experiments. Each ``Claim.measure`` runs one at call time and returns
``Evidence``: the sweep it measured, the bound evaluated on the same sweep (from ``theory/``),
and a verdict computed from the two by ``verdict_inequality`` or ``verdict_scaling``;
``sweep_evidence`` puts the three together on the sweep's ``Axes``. Nothing is hard-coded:
``python -m georesolver_core claims --json`` reruns every measurement.

A leaf module: it imports nothing of the package, so that maths modules (embeddings, the benchmark
report) can judge a measurement without importing the claims registry (``georesolver_core.claims``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

HOLDS = "holds"
FAILS = "fails"
CONDITIONAL = "holds only under conditions"
VERDICTS = (HOLDS, CONDITIONAL, FAILS)

__all__ = [
    "CONDITIONAL",
    "FAILS",
    "HOLDS",
    "VERDICTS",
    "Axes",
    "Claim",
    "Evidence",
    "fit_loglog_slope",
    "sweep_evidence",
    "verdict_inequality",
    "verdict_scaling",
]


@dataclass
class Evidence:
    """What one measurement found, ready to plot (x vs measured and bound) and to judge."""

    x: list[float]  # the sweep variable
    x_label: str  # axis title with units, e.g. "number of keys n"
    measured: list[float]  # the measured quantity at each x
    bound: list[float]  # the paper's bound (or prediction) at each x
    y_label: str  # axis title of measured/bound
    relation: str  # how measured is compared with bound, in words: "measured <= bound"
    verdict: str  # one of VERDICTS
    summary: str  # one or two sentences: the margin, or the counter-example
    measured_value: float  # headline number for tables
    bound_value: float  # the bound at the headline point
    log_x: bool = False
    log_y: bool = False
    extra: dict = field(default_factory=dict)  # more named series: {"softmax": [...], ...}

    def to_dict(self) -> dict:
        return _jsonable(asdict(self))


@dataclass(frozen=True)
class Axes:
    """How a measured sweep is drawn and read beside its bound (the plot fields of ``Evidence``)."""

    x_label: str  # axis title with units, e.g. "number of keys n"
    y_label: str  # axis title of measured/bound
    relation: str  # how measured is compared with bound, in words: "measured <= bound"
    log: str = ""  # which axes are logarithmic: "", "x", "y" or "xy"

    def __post_init__(self):
        if self.log not in ("", "x", "y", "xy"):
            raise ValueError(f"log must be one of '', 'x', 'y', 'xy' (got {self.log!r})")


def sweep_evidence(
    x,
    measured,
    bound,
    judged: tuple[str, str],
    axes: Axes,
    *,
    note: str = "",
    at: int = -1,
    measured_value: float | None = None,
    bound_value: float | None = None,
    extra: dict | None = None,
) -> Evidence:
    """Evidence of one sweep: x, measured and bound as lists of floats, drawn on ``axes``.

    ``judged`` is (verdict, summary), e.g. what ``verdict_inequality(measured, bound)`` returns;
    ``note`` follows the summary. The headline numbers are measured[at] and bound[at] unless given.
    """
    measured, bound = [float(v) for v in measured], [float(v) for v in bound]
    verdict, summary = judged
    return Evidence(
        x=[float(v) for v in x],
        x_label=axes.x_label,
        measured=measured,
        bound=bound,
        y_label=axes.y_label,
        relation=axes.relation,
        verdict=verdict,
        summary=summary + note,
        measured_value=measured[at] if measured_value is None else measured_value,
        bound_value=bound[at] if bound_value is None else bound_value,
        log_x="x" in axes.log,
        log_y="y" in axes.log,
        extra={} if extra is None else extra,
    )


@dataclass(frozen=True)
class Claim:
    """One claim of the seeds. ``measure(quick)`` runs the experiment; quick=True is for the app and tests."""

    key: str  # stable id, e.g. "thm1-circuit-separation"
    section: str  # e.g. "Theorem 1 (section 2.3)"
    statement: str  # the paper's statement, readable
    bound_text: str  # the bound as a formula, e.g. "W_11 >= 1/(1 + eps (n-1)/(2R^2 + eps))"
    page: str  # url path of the page that shows it, e.g. "attention"
    measure: Callable[[bool], Evidence]


def verdict_inequality(
    measured: Sequence[float],
    bound: Sequence[float],
    *,
    relation: str = "le",
    rtol: float = 1e-6,
    condition: Sequence[bool] | None = None,
    condition_text: str = "",
) -> tuple[str, str]:
    """Judge ``measured <= bound`` (relation "le") or ``>=`` ("ge") point by point.

    ``condition`` marks the points inside the regime the paper states (e.g. eps << d_min^2).
    Holds everywhere -> HOLDS; fails somewhere but only outside the stated regime -> CONDITIONAL;
    fails inside it -> FAILS. The summary names the tightest margin or the worst counter-example.
    """
    m = np.asarray(measured, dtype=float)
    b = np.asarray(bound, dtype=float)
    if m.shape != b.shape or m.size == 0:
        raise ValueError(f"measured and bound must be non-empty and equally long (got {m.size} and {b.size})")
    if relation not in ("le", "ge"):
        raise ValueError(f"relation must be 'le' or 'ge' (got {relation!r})")
    slack = rtol * np.maximum(np.abs(b), 1e-300)
    ok = m <= b + slack if relation == "le" else m >= b - slack
    cond = np.ones_like(ok) if condition is None else np.asarray(condition, dtype=bool)
    sign = "<=" if relation == "le" else ">="
    # relative margin: how far inside (positive) or outside (negative) the bound each point is
    margin = (
        (b - m) / np.maximum(np.abs(b), 1e-300) if relation == "le" else (m - b) / np.maximum(np.abs(b), 1e-300)
    )
    if ok.all():
        i = int(np.argmin(margin))
        return (
            HOLDS,
            f"measured {sign} bound at all {m.size} points; tightest margin {margin[i]:.3g} (relative) at point {i}",
        )
    bad = np.flatnonzero(~ok)
    worst = int(bad[np.argmin(margin[bad])])
    where = f"measured {m[worst]:.4g} vs bound {b[worst]:.4g} at point {worst}"
    if (~ok & cond).any():
        return FAILS, f"bound violated at {bad.size}/{m.size} points; worst: {where}"
    return CONDITIONAL, (
        f"holds inside the stated regime ({condition_text or 'condition'}); violated outside it at "
        f"{bad.size}/{m.size} points, worst: {where}"
    )


def fit_loglog_slope(x: Sequence[float], y: Sequence[float]) -> float:
    """Least-squares slope of log y against log x (the measured scaling exponent)."""
    lx, ly = np.log(np.asarray(x, dtype=float)), np.log(np.abs(np.asarray(y, dtype=float)))
    keep = np.isfinite(lx) & np.isfinite(ly)
    if keep.sum() < 2:
        raise ValueError("need at least two positive, finite points to fit a slope")
    return float(np.polyfit(lx[keep], ly[keep], 1)[0])


def verdict_scaling(
    x: Sequence[float], y: Sequence[float], *, exponent: float, tol: float = 0.25, what: str = "y"
) -> tuple[str, str, float]:
    """Judge a Theta(x^exponent) claim by the fitted log-log slope: |slope - exponent| <= tol holds."""
    slope = fit_loglog_slope(x, y)
    if math.isclose(slope, exponent, abs_tol=tol):
        return (
            HOLDS,
            f"{what} scales as x^{slope:.3f}; predicted exponent {exponent:g} (tolerance {tol:g})",
            slope,
        )
    return (
        FAILS,
        f"{what} scales as x^{slope:.3f}, not the predicted x^{exponent:g} (tolerance {tol:g})",
        slope,
    )


def _jsonable(obj):
    """Numbers and arrays to plain JSON types; non-finite floats become None."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, (np.floating, float)):
        f = float(obj)
        return f if math.isfinite(f) else None
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    return obj
