"""What every landscape claim shares: its page, the two-key set-up constants, the paper's shapes
fitted to a measurement, the verdict rules for Theta / Omega shapes, and the claim record."""

from __future__ import annotations

import numpy as np

from georesolver_core.verdicts import (
    FAILS,
    HOLDS,
    Axes,
    Claim,
    Evidence,
    fit_loglog_slope,
    sweep_evidence,
    verdict_scaling,
)

PAGE = "landscapes"
BASIN = 0.5
TAU = 1.0


def fitted(measured, shape) -> list[float]:
    """The paper's Theta-shape with its free constant fitted to the measurement (least squares in logs)."""
    m, s = np.asarray(measured, dtype=float), np.asarray(shape, dtype=float)
    return (s * np.exp(np.mean(np.log(m) - np.log(s)))).tolist()


def shape_verdict(measured, shape, *, kind: str, tol: float = 0.25, what: str) -> tuple[str, str, float]:
    """Judge measured = Theta(shape) (kind "theta": exponent of measured against shape within tol of 1)
    or Omega(shape) (kind "omega": exponent >= 1 - tol)."""
    p = fit_loglog_slope(shape, measured)
    ok = abs(p - 1.0) <= tol if kind == "theta" else p >= 1.0 - tol
    rel = "Theta" if kind == "theta" else "Omega"
    word = "consistent with" if ok else "not"
    return (
        HOLDS if ok else FAILS,
        f"{what} grows as (paper's shape)^{p:.3f}: {word} {rel}(shape) (exponent 1, tolerance {tol:g})",
        p,
    )


def scaling_evidence(
    x, measured, shape, axes: Axes, *, exponent: float, what: str, note: str, extra: dict
) -> Evidence:
    """Evidence for measured = Theta(x^exponent), judged by the fitted log-log slope and plotted on
    ``axes`` (log-log) beside the paper's shape (constant fitted). ``note`` follows the verdict's sentence;
    the headline is the fitted exponent against the predicted one."""
    verdict, summary, slope = verdict_scaling(x, measured, exponent=exponent, what=what)
    judged, headline = (
        (verdict, summary),
        dict(
            measured_value=slope, bound_value=exponent, headline=f"log-log exponent of {what} (fitted; predicted)"
        ),
    )
    return sweep_evidence(x, measured, fitted(measured, shape), judged, axes, note=note, extra=extra, **headline)


def landscape_claim(key, section, statement, bound_text, measure) -> Claim:
    """A claim shown on the Landscapes page (listed in ``claims.landscape.CLAIMS``, in its order)."""
    return Claim(key=key, section=section, statement=statement, bound_text=bound_text, page=PAGE, measure=measure)
