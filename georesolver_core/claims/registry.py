"""The claims table: every claim by key, in the order of ``georesolver_core.claims.MODULES``.

Topic modules export ``CLAIMS = (Claim(...), ...)`` and never register themselves; ``collect``
adds a tuple of such modules in order. ``register`` adds one claim (keys are unique).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from types import ModuleType

from georesolver_core.verdicts import (  # noqa: F401  (re-exported: the names this module had before)
    CONDITIONAL,
    FAILS,
    HOLDS,
    VERDICTS,
    Claim,
    Evidence,
    fit_loglog_slope,
    verdict_inequality,
    verdict_scaling,
)

CLAIMS: dict[str, Claim] = {}


def register(claim: Claim) -> Claim:
    """Add a claim to the registry (keys are unique)."""
    if not isinstance(claim, Claim):
        raise ValueError(f"claim must be a Claim (got {type(claim).__name__})")
    if claim.key in CLAIMS:
        raise ValueError(f"claim key {claim.key!r} is already registered")
    CLAIMS[claim.key] = claim
    return claim


def collect(modules: Iterable[ModuleType]) -> None:
    """Register every module's ``CLAIMS`` tuple, module by module, in order."""
    for module in modules:
        claims = getattr(module, "CLAIMS", None)
        if not isinstance(claims, tuple):
            raise ValueError(
                f"{module.__name__} must export CLAIMS as a tuple of Claim (got {type(claims).__name__})"
            )
        for claim in claims:
            register(claim)


def run_claim(key: str, quick: bool = False) -> dict:
    """Run one claim's measurement; returns the claim's fields, the evidence and the run time."""
    if key not in CLAIMS:
        raise ValueError(f"claim must be one of {sorted(CLAIMS)} (got {key!r})")
    claim = CLAIMS[key]
    t0 = time.perf_counter()
    evidence = claim.measure(quick)
    return {
        "key": claim.key,
        "section": claim.section,
        "statement": claim.statement,
        "bound_text": claim.bound_text,
        "page": claim.page,
        "seconds": round(time.perf_counter() - t0, 3),
        **evidence.to_dict(),
    }


def run_all(quick: bool = False, keys: Sequence[str] | None = None) -> list[dict]:
    """Run every registered claim (or the named ones) in registration order."""
    return [run_claim(k, quick) for k in (keys or list(CLAIMS))]
