"""Every claim of the seeds as a measurement beside its bound, with a verdict.

Each topic module exports ``CLAIMS = (Claim(...), ...)`` and registers nothing itself; the claims
table collects them from ``MODULES``, in this order. To add a topic, import its module and add one
line to ``MODULES``. The verdict helpers live in the leaf module ``georesolver_core.verdicts``.
"""

from georesolver_core.claims import (
    attention_claims,
    compression_claims,
    geometry_claims,
    hankel_claims,
    hida_claims,
    landscape,
    orthogonal_claims,
    rank_claims,
    routing_claims,
    training_claims,
)
from georesolver_core.claims.inventory import words_of
from georesolver_core.claims.registry import (
    CLAIMS,
    NOT_DECIDED,
    QUICK_UNDECIDED,
    collect,
    register,
    run_all,
    run_claim,
)
from georesolver_core.claims.statements import STATEMENT_MODULES
from georesolver_core.verdicts import (
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

# The claims table, in order: one line per topic module.
MODULES = (
    attention_claims,
    rank_claims,
    geometry_claims,
    landscape,
    hida_claims,
    compression_claims,
    routing_claims,
    training_claims,
    orthogonal_claims,
    hankel_claims,
    *STATEMENT_MODULES,  # the seeds' smaller statements, measured one by one
)
collect(MODULES)

__all__ = [
    "words_of",
    "CLAIMS",
    "CONDITIONAL",
    "FAILS",
    "HOLDS",
    "MODULES",
    "NOT_DECIDED",
    "QUICK_UNDECIDED",
    "VERDICTS",
    "Claim",
    "Evidence",
    "fit_loglog_slope",
    "register",
    "run_all",
    "run_claim",
    "verdict_inequality",
    "verdict_scaling",
]
