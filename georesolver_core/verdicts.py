"""A claim of the paper as a record (reference, statement, closed-form bound, measurement) and the
rules that turn a measurement beside its bound into a verdict.

The paper reports no experiments. Each ``Claim.measure`` runs one at call time and returns
``Evidence``: the sweep it measured, the bound evaluated on the same sweep (from ``theory/``),
and a verdict computed from the two by ``verdict_inequality``, ``verdict_scaling`` or
``verdict_readings``; ``sweep_evidence`` puts the three together on the sweep's ``Axes``. Nothing is
hard-coded: ``python -m georesolver_core claims --json`` reruns every measurement.

The verdict rule is ``RULE`` below, appended to this docstring and printed on the Claims page.

The machinery enforces the first rule: ``Evidence`` given its comparison (``sense``) and the points
inside the hypotheses (``inside``) turns any verdict but fails into fails when an inside point
breaks the bound, and a claim with parts cannot report better than its weakest part.

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

RULE = """The verdict rule (the same for every claim):

- **fails**: an input that satisfies every hypothesis the statement itself gives breaks it. The
  input is a worst case found by optimisation over the inputs the statement allows, not a random
  probe. Where a stronger hypothesis rescues the statement, the summary names it (and the rescued
  form is measured as its own claim where it matters).
- **holds only under conditions**: only where the statement is ambiguous (its hypotheses or
  constants are unstated). Every fair reading is measured and shown, and the summary says which
  reading the verdict is for (``verdict_readings``).
- **holds**: the worst case found inside the hypotheses respects the bound; the margin is shown.
  Points outside the hypotheses (``condition`` false) are drawn but never count against it.
- A statement with several parts (an inequality and a conclusion drawn from it, a rate in n and a
  rate in eps) gets one verdict per part (``Evidence.parts``); the claim's headline verdict is the
  weakest part's. The readings of an ambiguous statement are not parts (``verdict_readings``).
- A verdict about how cost grows (complexity classes) is decided by counting operations or bytes
  (``verdict_scaling`` refuses time units); times may be shown beside it.
- A rate claim with additive terms (C eta^2 + O(1/n)) is tested where the extra terms are small
  against the main one (``where_extras_small``), or on the excess over them, not on the raw total.
"""
__doc__ += "\n" + RULE

__all__ = [
    "CONDITIONAL",
    "FAILS",
    "HOLDS",
    "RULE",
    "VERDICTS",
    "Axes",
    "Claim",
    "Evidence",
    "fit_loglog_slope",
    "sweep_evidence",
    "verdict_inequality",
    "verdict_readings",
    "verdict_scaling",
    "weakest",
    "where_extras_small",
]

TIME_UNITS = ("s", "sec", "second", "seconds", "ms", "us", "ns", "wall-clock")


def weakest(verdicts: Sequence[str]) -> str:
    """The weakest of these verdicts (fails < holds only under conditions < holds)."""
    for v in verdicts:
        if v not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS} (got {v!r})")
    if not verdicts:
        raise ValueError("need at least one verdict")
    return max(verdicts, key=VERDICTS.index)


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
    sense: str = ""  # "le" or "ge" when measured is compared with bound point by point; "" otherwise
    inside: list[bool] | None = None  # which points satisfy every hypothesis of the statement (None: all)
    reading: str = ""  # the reading of the statement the verdict is for, in words
    parts: list[dict] = field(default_factory=list)  # one {"part", "verdict", "summary"} per part
    headline: str = ""  # what measured_value and bound_value are, with their unit (default: y_label)

    def __post_init__(self):
        _apply_rule(self)
        if not self.headline:
            self.headline = self.y_label

    def to_dict(self) -> dict:
        return _jsonable(asdict(self))


def _apply_rule(ev: Evidence) -> None:
    """Enforce the verdict rule on one Evidence (see the module docstring): a counterexample inside
    the hypotheses is a failure, and a claim with parts is no better than its weakest part."""
    if ev.verdict not in VERDICTS:
        raise ValueError(f"verdict must be one of {VERDICTS} (got {ev.verdict!r})")
    if ev.sense not in ("", "le", "ge"):
        raise ValueError(f"sense must be '', 'le' or 'ge' (got {ev.sense!r})")
    if ev.sense:
        m, b = np.asarray(ev.measured, dtype=float), np.asarray(ev.bound, dtype=float)
        if m.shape != b.shape:
            raise ValueError(f"measured and bound must be equally long (got {m.size} and {b.size})")
        inside = np.ones(m.shape, bool) if ev.inside is None else np.asarray(ev.inside, dtype=bool)
        if inside.shape != m.shape:
            raise ValueError(f"inside must have one flag per point (got {inside.size} for {m.size} points)")
        slack = 1e-6 * np.maximum(np.abs(b), 1e-300)
        broken = (m > b + slack) if ev.sense == "le" else (m < b - slack)
        bad = np.flatnonzero(broken & inside & np.isfinite(m) & np.isfinite(b))
        if bad.size and ev.verdict != FAILS:
            i = int(bad[0])
            ev.summary = (
                f"Counterexample inside the hypotheses: measured {m[i]:.4g} vs bound {b[i]:.4g} at x = "
                f"{ev.x[i]:.4g} (reported '{ev.verdict}', which the verdict rule does not allow). " + ev.summary
            )
            ev.verdict = FAILS
    if ev.parts:
        for part in ev.parts:
            if not {"part", "verdict", "summary"} <= set(part):
                raise ValueError(f"each part needs 'part', 'verdict' and 'summary' (got {sorted(part)})")
        worst = weakest([p["verdict"] for p in ev.parts])
        if VERDICTS.index(worst) > VERDICTS.index(ev.verdict):
            ev.verdict = worst


def verdict_readings(readings: dict[str, tuple[str, str]]) -> tuple[str, str]:
    """One verdict over the fair readings of an ambiguous statement: {reading: (verdict, summary)}.

    Every reading holds -> HOLDS; every reading fails -> FAILS; otherwise HOLDS ONLY UNDER CONDITIONS,
    with the summary naming, reading by reading, what was found.
    """
    if not readings:
        raise ValueError("readings must name at least one reading")
    verdicts = [v for v, _ in readings.values()]
    weakest(verdicts)  # validates
    lines = "; ".join(f"[{name}] {v}: {why}" for name, (v, why) in readings.items())
    if all(v == HOLDS for v in verdicts):
        return HOLDS, f"holds under every reading measured. {lines}"
    if all(v == FAILS for v in verdicts):
        return FAILS, f"fails under every reading measured. {lines}"
    held = [name for name, (v, _) in readings.items() if v == HOLDS]
    return CONDITIONAL, f"holds under the reading(s) {held} only. {lines}"


def where_extras_small(main: Sequence[float], extras: Sequence[float], *, ratio: float = 0.1) -> np.ndarray:
    """Points where a rate's additive extra terms are at most ``ratio`` times its main term, the only
    points where a claim like E <= C eta^2 + O(1/n) is tested on its main term."""
    if not 0 < ratio <= 1:
        raise ValueError(f"ratio must be in (0, 1] (got {ratio})")
    main, extras = np.asarray(main, dtype=float), np.asarray(extras, dtype=float)
    if main.shape != extras.shape:
        raise ValueError(f"main and extras must be equally long (got {main.size} and {extras.size})")
    return np.abs(extras) <= ratio * np.abs(main)


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
    sense: str = "",
    inside=None,
    reading: str = "",
    parts: list[dict] | None = None,
    headline: str = "",
) -> Evidence:
    """Evidence of one sweep: x, measured and bound as lists of floats, drawn on ``axes``.

    ``judged`` is (verdict, summary), e.g. what ``verdict_inequality(measured, bound)`` returns;
    ``note`` follows the summary. The headline numbers are measured[at] and bound[at] unless given.
    ``sense`` ("le"/"ge") and ``inside`` (a flag per point: every hypothesis holds there) let the
    verdict rule check the verdict; ``reading`` names the reading judged; ``parts`` one verdict per part;
    ``headline`` says what the headline numbers are when they are not points of the sweep (an exponent).
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
        sense=sense,
        inside=None if inside is None else [bool(v) for v in np.asarray(inside, dtype=bool)],
        reading=reading,
        parts=[] if parts is None else list(parts),
        headline=headline,
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
    geometry: str = ""  # a claim made once per registered geometry names its geometry ("" for the others)


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

    ``condition`` marks the points that satisfy every hypothesis the statement gives (e.g. two keys).
    Fails at a point inside -> FAILS. Otherwise HOLDS, with the tightest margin inside; breaks outside
    the hypotheses are named in the summary but are no counterexample (the statement says nothing
    there). An ambiguous hypothesis is judged per reading with ``verdict_readings``.
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
    if cond.shape != ok.shape:
        raise ValueError(f"condition must have one flag per point (got {cond.size} for {m.size} points)")
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
        bad_in = np.flatnonzero(~ok & cond)
        w = int(bad_in[np.argmin(margin[bad_in])])
        return FAILS, (
            f"bound violated at {bad_in.size}/{int(cond.sum())} points inside the hypotheses; worst: measured "
            f"{m[w]:.4g} vs bound {b[w]:.4g} at point {w}"
        )
    inside = np.flatnonzero(cond)
    tight = f"; tightest margin inside {margin[inside].min():.3g} (relative)" if inside.size else ""
    return HOLDS, (
        f"holds at all {inside.size} points inside the hypotheses ({condition_text or 'condition'}){tight}; "
        f"outside them (no counterexample) it breaks at {bad.size} points, worst: {where}"
    )


def fit_loglog_slope(x: Sequence[float], y: Sequence[float]) -> float:
    """Least-squares slope of log y against log x (the measured scaling exponent)."""
    lx, ly = np.log(np.asarray(x, dtype=float)), np.log(np.abs(np.asarray(y, dtype=float)))
    keep = np.isfinite(lx) & np.isfinite(ly)
    if keep.sum() < 2:
        raise ValueError("need at least two positive, finite points to fit a slope")
    return float(np.polyfit(lx[keep], ly[keep], 1)[0])


def verdict_scaling(
    x: Sequence[float],
    y: Sequence[float],
    *,
    exponent: float,
    tol: float = 0.25,
    what: str = "y",
    unit: str = "count",
) -> tuple[str, str, float]:
    """Judge a Theta(x^exponent) claim by the fitted log-log slope: |slope - exponent| <= tol holds.

    ``unit`` is what y counts (operations, bytes, keys); a cost class is never judged on times.
    """
    if unit.strip().lower() in TIME_UNITS:
        raise ValueError(f"unit must count operations or bytes, not time (got {unit!r}): cost classes are counted")
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
