"""Every claim of the seeds as a measurement beside its bound, with a verdict.

Topic modules register their claims on import; add one import line per module below.
"""

# Topic modules (each registers its claims on import):
from georesolver_core.claims import (
    attention_claims,  # noqa: E402,F401
    geometry_claims,  # noqa: E402,F401
    hida_claims,
    landscape_claims,  # noqa: E402,F401
)
from georesolver_core.claims.registry import (
    CLAIMS,
    CONDITIONAL,
    FAILS,
    HOLDS,
    VERDICTS,
    Claim,
    Evidence,
    fit_loglog_slope,
    register,
    run_all,
    run_claim,
    verdict_inequality,
    verdict_scaling,
)

for _c in hida_claims.CLAIMS:
    register(_c)

__all__ = [
    "CLAIMS",
    "CONDITIONAL",
    "FAILS",
    "HOLDS",
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
