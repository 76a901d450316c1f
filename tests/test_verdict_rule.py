"""The verdict rule (georesolver_core.verdicts), one test per rule, each on a synthetic claim."""

import numpy as np
import pytest

from georesolver_core.claims import registry
from georesolver_core.verdicts import (
    CONDITIONAL,
    FAILS,
    HOLDS,
    Axes,
    Claim,
    Evidence,
    sweep_evidence,
    verdict_inequality,
    verdict_readings,
    verdict_scaling,
    where_extras_small,
)

AXES = Axes("x", "y", "measured <= bound")


def _synthetic(key, measure):
    """Register a throw-away claim, run it through the registry as the app and CLI do, then drop it."""
    registry.register(Claim(key, "synthetic", "y <= 1 for x in the hypotheses", "y <= 1", "claims", measure))
    try:
        return registry.run_claim(key, quick=True)
    finally:
        registry.CLAIMS.pop(key)


@pytest.mark.parametrize("claimed", [HOLDS, CONDITIONAL])
def test_counterexample_inside_hypotheses_is_always_fails(claimed):
    # rule "fails": the sweep breaks y <= 1 at x = 2, inside the hypotheses; whatever the claim's code
    # says, the registry can only report fails.
    def measure(quick):
        return sweep_evidence(
            [0, 1, 2], [0.5, 0.9, 1.5], [1, 1, 1], (claimed, "says fine"), AXES, sense="le", inside=[1, 1, 1]
        )

    result = _synthetic("synthetic-inside-counterexample", measure)
    assert result["verdict"] == FAILS
    assert "Counterexample inside the hypotheses" in result["summary"]


def test_break_outside_hypotheses_is_no_counterexample():
    # rule "holds": a break at a point the statement does not cover (inside False) does not count.
    measured, bound, inside = [0.5, 0.9, 1.5], [1.0, 1.0, 1.0], [True, True, False]
    judged = verdict_inequality(measured, bound, condition=inside, condition_text="x <= 1")
    assert judged[0] == HOLDS and "outside them" in judged[0 + 1]

    def measure(quick):
        return sweep_evidence([0, 1, 2], measured, bound, judged, AXES, sense="le", inside=inside)

    assert _synthetic("synthetic-outside-break", measure)["verdict"] == HOLDS
    # the same break inside the hypotheses fails
    assert verdict_inequality(measured, bound, condition=[True] * 3)[0] == FAILS


def test_holds_shows_its_margin():
    verdict, summary = verdict_inequality([0.5, 0.8], [1.0, 1.0])
    assert verdict == HOLDS and "tightest margin 0.2" in summary


def test_conditional_only_for_ambiguous_readings():
    # rule "holds only under conditions": one fair reading holds, another fails; the summary names both.
    verdict, summary = verdict_readings({"constant 1": (HOLDS, "margin 0.1"), "constant 10": (FAILS, "x=3")})
    assert verdict == CONDITIONAL and "constant 1" in summary and "constant 10" in summary
    assert verdict_readings({"a": (HOLDS, ""), "b": (HOLDS, "")})[0] == HOLDS
    assert verdict_readings({"a": (FAILS, ""), "b": (FAILS, "")})[0] == FAILS
    with pytest.raises(ValueError, match="readings"):
        verdict_readings({})


def test_one_verdict_per_part_and_the_headline_is_the_weakest():
    # rule "parts": the inequality holds, the conclusion drawn from it fails -> the claim fails.
    parts = [
        {"part": "inequality", "verdict": HOLDS, "summary": "margin 0.3"},
        {"part": "conclusion", "verdict": FAILS, "summary": "gradient 1e-9 at bounded inputs"},
    ]

    def measure(quick):
        return sweep_evidence([0, 1], [0.1, 0.2], [1, 1], (HOLDS, "inequality holds"), AXES, parts=parts)

    result = _synthetic("synthetic-two-parts", measure)
    assert result["verdict"] == FAILS
    assert [p["verdict"] for p in result["parts"]] == [HOLDS, FAILS]
    with pytest.raises(ValueError, match="part"):
        Evidence([0], "x", [0], [1], "y", "r", HOLDS, "", 0.0, 1.0, parts=[{"verdict": HOLDS}])


def test_cost_classes_are_counted_not_timed():
    # rule "cost classes": a slope fitted on seconds is refused; on counted operations it is judged.
    n = np.array([64, 128, 256, 512])
    with pytest.raises(ValueError, match="not time"):
        verdict_scaling(n, 1e-6 * n**2, exponent=2.0, unit="seconds")
    assert verdict_scaling(n, n**2, exponent=2.0, unit="multiply-adds")[0] == HOLDS


def test_additive_terms_are_judged_where_they_are_small():
    # rule "additive terms": E = C eta^2 + 1/n is read at the points where 1/n <= 0.1 C eta^2 only.
    eta, n = np.array([0.05, 0.1, 0.2, 0.3]), 1000
    main, extra = 2.0 * eta**2, np.full(4, 1.0 / n)
    keep = where_extras_small(main, extra)
    assert keep.tolist() == [False, True, True, True]
    with pytest.raises(ValueError, match="ratio"):
        where_extras_small(main, extra, ratio=0.0)


def test_bad_verdict_and_sense_are_refused():
    with pytest.raises(ValueError, match="verdict"):
        Evidence([0], "x", [0], [1], "y", "r", "maybe", "", 0.0, 1.0)
    with pytest.raises(ValueError, match="sense"):
        Evidence([0], "x", [0], [1], "y", "r", HOLDS, "", 0.0, 1.0, sense="lt")
